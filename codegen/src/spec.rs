//! The typed spec, after validation.

pub use tessera_meta::{
    Accuracy, Class, FloatInfo, NanStyle, NanTo, Negative, OperandRule, Overflow, ResultRule,
    ScaleRule,
};

/// The float parameters of a dtype with the limits derived from them: the
/// runtime's [`FloatInfo`] (one definition, in `tessera-meta`), which the
/// generator prints into the catalogue, and the largest finite magnitude
/// code, which it prints into the codecs. Reads as a `FloatInfo` (`Deref`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatParams {
    /// The parameters and limits as the runtime holds them.
    pub info: FloatInfo,
    /// largest finite magnitude code
    pub max_code: u64,
}

impl std::ops::Deref for FloatParams {
    type Target = FloatInfo;
    fn deref(&self) -> &FloatInfo {
        &self.info
    }
}

/// A validated dtype.
#[derive(Clone, Debug, PartialEq)]
pub struct DType {
    /// name
    pub name: String,
    /// aliases
    pub aliases: Vec<String>,
    /// class
    pub class: Class,
    /// value bits
    pub bits: u32,
    /// carrier dtype name
    pub carrier: String,
    /// accumulator dtype name
    pub accumulator: String,
    /// numpy descriptor
    pub numpy: Option<String>,
    /// values per byte (1 unless packed)
    pub values_per_byte: u32,
    /// the float dtype of each part (class complex only)
    pub component: Option<String>,
    /// doc line
    pub doc: String,
    /// float parameters
    pub float: Option<FloatParams>,
}

impl DType {
    /// The Rust identifier of the enum variant (`e4m3fn` → `E4m3fn`).
    pub fn ident(&self) -> String {
        camel(&self.name)
    }
    /// Whether this dtype is a float computed through a parameterised codec.
    pub fn is_mini(&self) -> bool {
        self.class == Class::Float && self.carrier != self.name
    }
    /// Whether this dtype is a complex number of narrow floats (f16c, bf16c),
    /// computed in the complex dtype of their carrier.
    pub fn is_mini_complex(&self) -> bool {
        self.class == Class::Complex && self.carrier != self.name
    }
    /// The codec of one part of a narrow complex dtype (its component's).
    fn component_codec(&self) -> String {
        camel(
            self.component
                .as_deref()
                .expect("a complex dtype has a component"),
        )
    }
    /// The Rust storage type of one element (one code per byte for sub-byte types).
    pub fn store_type(&self) -> String {
        match self.class {
            Class::Bool => "u8".into(),
            Class::Int | Class::Uint if self.bits < 8 => "u8".into(),
            Class::Int => format!("i{}", self.bits),
            Class::Uint => format!("u{}", self.bits),
            Class::Float if self.is_mini() => if self.bits <= 8 { "u8" } else { "u16" }.into(),
            Class::Float => format!("f{}", self.bits),
            Class::Complex if self.is_mini_complex() => format!("Complex<u{}>", self.bits / 2),
            Class::Complex => format!("Complex<f{}>", self.bits / 2),
            Class::Pair => format!("Pair<f{}>", self.bits / 2),
        }
    }
    /// Bytes of one stored element (one unpacked code for sub-byte types).
    pub fn item_bytes(&self) -> usize {
        match self.class {
            Class::Bool => 1,
            _ if self.bits < 8 => 1,
            _ => (self.bits as usize).div_ceil(8),
        }
    }
    /// The codec type expression.
    pub fn codec(&self) -> String {
        match self.class {
            Class::Bool => "Bool".into(),
            Class::Int if self.bits < 8 => format!("NarrowInt<{}>", self.bits),
            Class::Uint if self.bits < 8 => format!("NarrowUint<{}>", self.bits),
            Class::Float if self.is_mini() => self.ident(),
            Class::Complex if self.is_mini_complex() => {
                format!("MiniComplex<{}>", self.component_codec())
            }
            _ => format!("Native<{}>", self.store_type()),
        }
    }
}

/// `snake_name` → `SnakeName`.
pub fn camel(name: &str) -> String {
    name.split('_')
        .map(|p| {
            let mut c = p.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// A validated kind.
#[derive(Clone, Debug, PartialEq)]
pub struct Kind {
    /// name
    pub name: String,
    /// inputs
    pub arity: usize,
    /// accepted classes
    pub accepts: Vec<Class>,
    /// input typing
    pub operands: OperandRule,
    /// result typing
    pub result: ResultRule,
    /// accuracy class
    pub accuracy: Accuracy,
    /// the runtime's operation: the op struct of `runtime/src/ops.rs` and its
    /// `Operation` variant (the `algorithm` in CamelCase)
    pub op: String,
    /// whether the op passes float storage through untouched (`raw_floats`)
    pub raw_floats: bool,
    /// specials (strings validated as numbers)
    pub specials: Vec<Vec<String>>,
    /// doc
    pub doc: String,
    /// the index of the kind whose kernels this one runs (`alias` in the
    /// spec), or None for a kind with kernels of its own
    pub alias: Option<usize>,
}

/// A validated loop shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// all unit stride
    Contiguous,
    /// one input broadcast
    OneBroadcast,
    /// any strides
    Strided,
}

/// A validated loop variant family.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopVariant {
    /// name
    pub name: String,
    /// shape
    pub shape: Shape,
    /// doc
    pub doc: String,
}

/// A hand-vectorised cast a tier uses for one pair's contiguous variant.
#[derive(Clone, Debug, PartialEq)]
pub struct FastCast {
    /// source dtype
    pub src: String,
    /// destination dtype
    pub dst: String,
    /// the runtime function (in `runtime::fast_x86`)
    pub function: String,
    /// the parameters type it is instantiated with
    pub params: String,
}

/// A validated tier.
#[derive(Clone, Debug, PartialEq)]
pub struct Tier {
    /// hand-vectorised casts
    pub fast_casts: Vec<FastCast>,
    /// name
    pub name: String,
    /// `any` or a target_arch
    pub arch: String,
    /// CPU features
    pub features: Vec<String>,
    /// doc
    pub doc: String,
}

/// A validated block-scaled format.
#[derive(Clone, Debug, PartialEq)]
pub struct Format {
    /// name
    pub name: String,
    /// aliases
    pub aliases: Vec<String>,
    /// element dtype
    pub element: String,
    /// scale dtype
    pub scale: String,
    /// block size
    pub block: usize,
    /// tensor scale dtype
    pub tensor_scale: Option<String>,
    /// fraction bits of an integer element
    pub fraction_bits: u32,
    /// scale derivation
    pub scale_rule: ScaleRule,
    /// doc
    pub doc: String,
}

/// The whole validated spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// dtypes in file order
    pub dtypes: Vec<DType>,
    /// kinds in file order
    pub kinds: Vec<Kind>,
    /// loop variants
    pub loops: Vec<LoopVariant>,
    /// tiers (the first is `scalar`)
    pub tiers: Vec<Tier>,
    /// formats
    pub formats: Vec<Format>,
}

/// A concrete loop variant of one kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// contiguous
    Contig,
    /// input k broadcast
    Bcast(usize),
    /// strided
    Strided,
}

impl Variant {
    /// The runtime enum variant and name.
    pub fn ident(self) -> &'static str {
        match self {
            Variant::Contig => "Contig",
            Variant::Bcast(0) => "Bcast0",
            Variant::Bcast(1) => "Bcast1",
            Variant::Bcast(_) => "Bcast2",
            Variant::Strided => "Strided",
        }
    }
    /// The runtime's const code.
    pub fn code(self) -> &'static str {
        match self {
            Variant::Contig => "CONTIG",
            Variant::Bcast(0) => "BCAST0",
            Variant::Bcast(1) => "BCAST1",
            Variant::Bcast(_) => "BCAST2",
            Variant::Strided => "STRIDED",
        }
    }
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Contig => "contig",
            Variant::Bcast(0) => "bcast0",
            Variant::Bcast(1) => "bcast1",
            Variant::Bcast(_) => "bcast2",
            Variant::Strided => "strided",
        }
    }
}

/// One kernel to emit.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelPlan {
    /// kind index
    pub kind: usize,
    /// dtype index
    pub dtype: usize,
    /// variant
    pub variant: Variant,
    /// function name
    pub fn_name: String,
    /// the function the kernel calls with its arguments (a loop shell of the
    /// runtime, instantiated)
    pub call: String,
    /// a second argument of that call, if any: the carrier's contiguous
    /// kernel of the kind, which the `via` shells run over decoded blocks
    pub extra: Option<String>,
    /// the kernel computes through its carrier's kernels (a narrow float:
    /// casts into the carrier, the carrier's kernel of the kind, a cast
    /// back); the emitter names the kernels it calls, and `call` is unused
    pub through: bool,
    /// the entry of an alias: `fn_name` is the aliased kind's kernel, which
    /// the tables point at and nothing instantiates again
    pub shared: bool,
    /// the codecs of the inputs, then of the result: their storage sizes
    /// are what the strided variant tiles by (`runtime::loops::tiled`)
    pub codecs: Vec<String>,
}

/// One cast kernel to emit.
#[derive(Clone, Debug, PartialEq)]
pub struct CastPlan {
    /// source dtype index
    pub src: usize,
    /// destination dtype index
    pub dst: usize,
    /// saturating mode
    pub saturating: bool,
    /// variant
    pub variant: Variant,
    /// function name
    pub fn_name: String,
    /// the generic instantiation it calls
    pub call: String,
    /// the carrier the cast goes through, f32 or c64 (see
    /// [`Spec::cast_through`]): the emitter names the two casts it calls, and
    /// `call` is unused
    pub through: Option<&'static str>,
}

impl Spec {
    /// Every cast kernel, in table order: source, destination, mode (default
    /// first), variant.
    pub fn casts(&self) -> Vec<CastPlan> {
        let mut out = Vec::new();
        for (si, s) in self.dtypes.iter().enumerate() {
            for (di, d) in self.dtypes.iter().enumerate() {
                for saturating in [false, true] {
                    for v in self.variants_for(1) {
                        let mode = if saturating { "sat" } else { "dflt" };
                        out.push(CastPlan {
                            src: si,
                            dst: di,
                            saturating,
                            variant: v,
                            fn_name: format!("cast_{}_{}_{mode}_{}", s.name, d.name, v.name()),
                            call: format!(
                                "run1::<{}, CastOut<{}>, Cast<{}, {saturating}>, {}>",
                                s.codec(),
                                d.codec(),
                                d.codec(),
                                v.code()
                            ),
                            through: Self::cast_through(s, d),
                        });
                    }
                }
            }
        }
        out
    }

    /// The carrier (f32 or c64) through which the cast `src` → `dst` is
    /// emitted as two casts, `src` → carrier then carrier → `dst` (in the
    /// cast's mode), instead of one instance of its own, or None. Through
    /// f32: where one side is a narrow float carried in f32,
    /// the other is not f32 itself, and every value of `src` is exactly an
    /// f32 (a narrow float, an integer of at most 16 bits, bool), so that the
    /// first cast is exact and the second rounds the same value the direct
    /// cast rounds, by the same rule. Not between two integers (or bools),
    /// which wrap rather than convert through a float. Through c64: the
    /// same for a complex dtype of narrow floats.
    pub fn cast_through(src: &DType, dst: &DType) -> Option<&'static str> {
        let f32_exact = |d: &DType| match d.class {
            Class::Float => d.is_mini() && d.carrier == "f32",
            Class::Bool => true,
            Class::Int | Class::Uint => d.bits <= 16,
            Class::Complex | Class::Pair => false,
        };
        let narrow = |d: &DType| d.class == Class::Float && d.is_mini() && d.carrier == "f32";
        let integral = |d: &DType| matches!(d.class, Class::Bool | Class::Int | Class::Uint);
        // A complex number of narrow floats (carried in c64) goes through
        // c64 the same way: out of it always (every value is exactly a c64),
        // into it from a source whose every value is exactly a c64 (f32 and
        // the f32-exact ones above).
        let c64_exact = |d: &DType| f32_exact(d) || d.name == "f32" || d.name == "c64";
        if src.is_mini_complex() && dst.name != "c64" {
            return Some("c64");
        }
        if dst.is_mini_complex() && src.name != "c64" && c64_exact(src) {
            return Some("c64");
        }
        (f32_exact(src)
            && dst.name != "f32"
            && (narrow(src) || narrow(dst))
            && !(integral(src) && integral(dst)))
        .then_some("f32")
    }

    /// The float dtype of a complex dtype's parts.
    pub fn component_of(&self, d: &DType) -> Option<&DType> {
        d.component.as_deref().and_then(|c| self.dtype(c))
    }

    /// The complex dtype whose parts have dtype `d`, if any.
    pub fn complex_of(&self, d: &DType) -> Option<&DType> {
        self.dtypes
            .iter()
            .find(|c| c.class == Class::Complex && c.component.as_deref() == Some(d.name.as_str()))
    }

    /// Look up a dtype by name.
    pub fn dtype(&self, name: &str) -> Option<&DType> {
        self.dtypes.iter().find(|d| d.name == name)
    }

    /// The variants emitted for a kind of `arity` inputs, in table order.
    pub fn variants_for(&self, arity: usize) -> Vec<Variant> {
        let mut out = Vec::new();
        for l in &self.loops {
            match l.shape {
                Shape::Contiguous => out.push(Variant::Contig),
                Shape::OneBroadcast if arity >= 2 => {
                    out.extend((0..arity).map(Variant::Bcast));
                }
                Shape::OneBroadcast => {}
                Shape::Strided => out.push(Variant::Strided),
            }
        }
        out
    }

    /// Every kernel, in table order: kinds in file order, then dtypes, then variants.
    /// An alias's entries are its target's kernels under its own kind.
    pub fn kernels(&self) -> Vec<KernelPlan> {
        let mut out: Vec<KernelPlan> = Vec::new();
        for (ki, k) in self.kinds.iter().enumerate() {
            if let Some(target) = k.alias {
                let theirs: Vec<KernelPlan> = out
                    .iter()
                    .filter(|p| p.kind == target)
                    .map(|p| KernelPlan {
                        kind: ki,
                        shared: true,
                        ..p.clone()
                    })
                    .collect();
                out.extend(theirs);
                continue;
            }
            for (di, d) in self.dtypes.iter().enumerate() {
                if !k.accepts.contains(&d.class) {
                    continue;
                }
                // A pair holds two f32 or two f64: a kind that makes one
                // exists for those two dtypes alone.
                if k.result == ResultRule::Pair && d.is_mini() {
                    continue;
                }
                // A kind that makes a complex number exists for the float
                // dtypes some complex dtype has as its parts.
                if k.result == ResultRule::Complex && self.complex_of(d).is_none() {
                    continue;
                }
                for v in self.variants_for(k.arity) {
                    let (call, extra, codecs) = self.call_for(k, d, v);
                    let through = (d.is_mini() || d.is_mini_complex())
                        && !k.raw_floats
                        && matches!(k.operands, OperandRule::Same | OperandRule::ComplexReal);
                    out.push(KernelPlan {
                        kind: ki,
                        dtype: di,
                        variant: v,
                        fn_name: format!("{}_{}_{}", k.name, d.name, v.name()),
                        call,
                        extra,
                        through,
                        shared: false,
                        codecs,
                    });
                }
            }
        }
        out
    }

    /// The call of kernel (`k`, `d`, `v`), its second argument if any, and
    /// the codecs of its inputs and result.
    fn call_for(&self, k: &Kind, d: &DType, v: Variant) -> (String, Option<String>, Vec<String>) {
        // A kind that only moves values passes float storage through
        // untouched (NaN payloads included).
        let codec_of = |x: &DType| {
            if k.raw_floats && matches!(x.class, Class::Float | Class::Complex) {
                format!("Raw<{}>", x.store_type())
            } else {
                x.codec()
            }
        };
        let codec = codec_of(d);
        let out = match k.result {
            ResultRule::Bool => "Bool".to_string(),
            ResultRule::Real if d.class == Class::Complex => {
                codec_of(self.component_of(d).expect("validated"))
            }
            ResultRule::Real if d.class == Class::Pair => format!("Native<f{}>", d.bits / 2),
            ResultRule::Pair => format!("Native<Pair<f{}>>", d.bits),
            ResultRule::Order => "Native<i8>".to_string(),
            ResultRule::Complex => codec_of(self.complex_of(d).expect("filtered by the caller")),
            _ => codec.clone(),
        };
        let ins: Vec<String> = (0..k.arity)
            .map(|i| {
                if i == 0 && k.operands == OperandRule::CondFirst {
                    "Bool".to_string()
                } else if i == 1 && k.operands == OperandRule::ComplexReal {
                    codec_of(self.component_of(d).expect("validated"))
                } else {
                    codec.clone()
                }
            })
            .collect();
        let codecs: Vec<String> = ins.iter().cloned().chain([out.clone()]).collect();
        let complex = d.class == Class::Complex && !d.is_mini_complex();
        let via = if d.is_mini() {
            d.carrier == "f32"
        } else {
            (d.name == "f32" || d.name == "f64" || complex) && v != Variant::Contig
        };
        if k.accuracy != Accuracy::Exact
            && (d.class == Class::Float || complex)
            && via
            && k.result == ResultRule::Same
        {
            // A transcendental on a narrow float, or in a variant other than
            // the contiguous one (complex exp included), runs its carrier's
            // contiguous kernel over blocks of decoded values: the same bits
            // as inlining the function here, with one copy of it per tier and
            // carrier instead of one per dtype and variant.
            let carrier = if d.is_mini() { "f32" } else { d.name.as_str() };
            let carrier_type = if complex {
                format!("Complex<f{}>", d.bits / 2)
            } else {
                carrier.to_string()
            };
            return (
                format!(
                    "run{}_via::<{carrier_type}, {}, {}, {}>",
                    k.arity,
                    ins.join(", "),
                    out,
                    v.code(),
                ),
                Some(format!("{}_{carrier}_contig", k.name)),
                codecs,
            );
        }
        (
            format!(
                "run{}::<{}, {}, {}, {}>",
                k.arity,
                ins.join(", "),
                out,
                k.op,
                v.code()
            ),
            None,
            codecs,
        )
    }
}
