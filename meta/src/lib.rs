//! Metadata types the generated tables are made of, and the generator's
//! vocabulary for the spec: one definition of each enum, which
//! `tessera-codegen` parses the spec's names into and prints as variants, and
//! which `tessera-runtime` (as `tessera_runtime::meta`) the generated
//! tables are built from.

#![deny(missing_docs)]

/// The class of a dtype, as `spec/dtypes.toml` declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// One byte, zero is false and anything else true.
    Bool,
    /// Signed two's-complement integer.
    Int,
    /// Unsigned integer.
    Uint,
    /// Binary floating point described by its parameters.
    Float,
    /// A pair of floats (real, imaginary).
    Complex,
    /// An unevaluated sum hi + lo of two floats of one format (double-float
    /// of f32, double-double of f64), |lo| at most half an ulp of hi.
    Pair,
}

impl Class {
    /// The class a spec name names (`bool`, `int`, `uint`, `float`,
    /// `complex`, `pair`).
    pub fn from_name(name: &str) -> Option<Class> {
        Some(match name {
            "bool" => Class::Bool,
            "int" => Class::Int,
            "uint" => Class::Uint,
            "float" => Class::Float,
            "complex" => Class::Complex,
            "pair" => Class::Pair,
            _ => return None,
        })
    }

    /// The name used in the spec.
    pub const fn name(self) -> &'static str {
        match self {
            Class::Bool => "bool",
            Class::Int => "int",
            Class::Uint => "uint",
            Class::Float => "float",
            Class::Complex => "complex",
            Class::Pair => "pair",
        }
    }
}

/// Which codes of a float dtype are NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NanStyle {
    /// All-ones exponent with a non-zero mantissa (IEEE 754).
    Ieee,
    /// Only the all-ones magnitude code (S.1111.111).
    AllOnes,
    /// Only the code with the sign bit alone (the `fnuz` types).
    SignOnly,
    /// No NaN code.
    None,
}

/// What a value beyond the largest finite one becomes in a cast mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overflow {
    /// Infinity of the value's sign.
    Infinity,
    /// NaN.
    Nan,
    /// The largest finite value of the value's sign.
    MaxFinite,
}

/// What a NaN becomes in a float dtype without a NaN code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NanTo {
    /// The dtype has a NaN code; NaN stays NaN.
    Nan,
    /// +0.
    Zero,
    /// The largest finite value, with the NaN's sign.
    MaxFinite,
    /// Zero with the opposite of the NaN's sign (what ml_dtypes gives for the
    /// fp6 and fp4 types).
    ZeroOppositeSign,
}

/// What a negative input becomes in an unsigned float dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Negative {
    /// The dtype is signed; negatives are kept.
    Keep,
    /// NaN.
    Nan,
    /// Its magnitude.
    Abs,
}

/// The parameters and limits of a float dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatInfo {
    /// Exponent field width in bits.
    pub exponent_bits: u32,
    /// Mantissa (trailing significand) field width in bits.
    pub mantissa_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Whether a sign bit exists.
    pub signed: bool,
    /// Whether exponent field 0 encodes subnormals.
    pub subnormals: bool,
    /// Whether infinities exist.
    pub infinities: bool,
    /// Which codes are NaN.
    pub nan: NanStyle,
    /// Whether -0 exists.
    pub negative_zero: bool,
    /// Largest finite value.
    pub max_finite: f64,
    /// Smallest positive normal value.
    pub min_normal: f64,
    /// Smallest positive value (the smallest subnormal where subnormals exist).
    pub min_positive: f64,
    /// Distance from 1 to the next larger value.
    pub epsilon: f64,
    /// Whether ties round away from zero (true) or to even (false).
    pub ties_away: bool,
    /// Overflow rule of the default cast mode.
    pub overflow_default: Overflow,
    /// Overflow rule of the saturating cast mode.
    pub overflow_saturating: Overflow,
    /// What a NaN becomes.
    pub nan_to: NanTo,
    /// What a negative input becomes.
    pub negative: Negative,
}

/// Everything the spec says of a dtype.
#[derive(Clone, Copy, Debug)]
pub struct DTypeInfo {
    /// Printed name.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// Class.
    pub class: Class,
    /// Bits of one value.
    pub bits: u32,
    /// Values in one byte of storage (1 unless packed).
    pub values_per_byte: u32,
    /// Bytes of one element in memory, or of one unpacked code for packed dtypes.
    pub item_bytes: usize,
    /// The name of the dtype this one computes in.
    pub carrier: &'static str,
    /// The name of the dtype its sums accumulate in.
    pub accumulator: &'static str,
    /// The name of the float dtype of its real and imaginary parts (class
    /// complex only).
    pub component: Option<&'static str>,
    /// Unit roundoff of the accumulator (0 for exact integer accumulation).
    pub accumulation_unit_roundoff: f64,
    /// numpy's descriptor, where numpy has the type.
    pub numpy: Option<&'static str>,
    /// One line of documentation.
    pub doc: &'static str,
    /// Float parameters (class float only).
    pub float: Option<FloatInfo>,
    /// Smallest and largest value of an integer or bool dtype.
    pub int_range: Option<(i128, i128)>,
}

/// How a kind's inputs are typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperandRule {
    /// Every input has the call's dtype.
    Same,
    /// Input 0 is bool, the others have the call's dtype.
    CondFirst,
    /// Input 0 has the call's (complex) dtype, input 1 its component dtype
    /// (c64: f32, c128: f64, f16c: f16, bf16c: bf16).
    ComplexReal,
}

/// A kind's result dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultRule {
    /// The call's dtype.
    Same,
    /// bool.
    Bool,
    /// The component dtype for complex and pair, the call's dtype otherwise.
    Real,
    /// The pair of the call's float dtype (f32 → df32, f64 → dd64).
    Pair,
    /// i8, holding a three-way comparison's −1, 0 or +1.
    Order,
    /// The complex dtype whose components have the call's float dtype
    /// (f32 → c64, f64 → c128, f16 → f16c, bf16 → bf16c).
    Complex,
}

/// A kind's accuracy class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Accuracy {
    /// The exact value in the carrier, rounded once.
    Exact,
    /// Within 1 ulp.
    Ulp1,
    /// Within 3.5 ulp.
    Ulp35,
}

/// Everything the spec says of an elementwise kind.
#[derive(Clone, Copy, Debug)]
pub struct KindInfo {
    /// Name.
    pub name: &'static str,
    /// Number of inputs.
    pub arity: usize,
    /// Accepted classes.
    pub accepts: &'static [Class],
    /// Input typing.
    pub operands: OperandRule,
    /// Result typing.
    pub result: ResultRule,
    /// Accuracy class.
    pub accuracy: Accuracy,
    /// Values every float dtype that holds them must reproduce: inputs, then the expected result.
    pub specials: &'static [&'static [&'static str]],
    /// The contract.
    pub doc: &'static str,
}

/// Everything the spec says of a tier.
#[derive(Clone, Copy, Debug)]
pub struct TierInfo {
    /// Name.
    pub name: &'static str,
    /// Architecture (`any` or a `target_arch`).
    pub arch: &'static str,
    /// CPU features it needs.
    pub features: &'static [&'static str],
    /// One line.
    pub doc: &'static str,
}

/// How a block-scaled format derives its scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleRule {
    /// OCP MX v1.0: floor(log2 amax) minus the element's largest exponent.
    Floor,
    /// The smallest power of two with no element clamping.
    Ceil,
    /// NVFP4: tensor scale from the tensor's amax, block scale rounded to the scale dtype.
    Nvfp4,
}

/// Everything the spec says of a block-scaled format.
#[derive(Clone, Copy, Debug)]
pub struct FormatInfo {
    /// Name.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// Element dtype name.
    pub element: &'static str,
    /// Scale dtype name.
    pub scale: &'static str,
    /// Elements per block.
    pub block: usize,
    /// Per-tensor scale dtype name, if any.
    pub tensor_scale: Option<&'static str>,
    /// For an integer element: code c has the value c · 2^-fraction_bits.
    pub fraction_bits: u32,
    /// Scale derivation.
    pub scale_rule: ScaleRule,
    /// One line.
    pub doc: &'static str,
}

/// A loop variant of an elementwise kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// Every operand contiguous.
    Contig,
    /// Input 0 broadcast (stride 0), the rest contiguous.
    Bcast0,
    /// Input 1 broadcast.
    Bcast1,
    /// Input 2 broadcast.
    Bcast2,
    /// Any strides.
    Strided,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 5] = [
        Variant::Contig,
        Variant::Bcast0,
        Variant::Bcast1,
        Variant::Bcast2,
        Variant::Strided,
    ];

    /// The variant's name.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Contig => "contig",
            Variant::Bcast0 => "bcast0",
            Variant::Bcast1 => "bcast1",
            Variant::Bcast2 => "bcast2",
            Variant::Strided => "strided",
        }
    }
}
