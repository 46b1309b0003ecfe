//! Map program texts: random, mostly well-typed trees of the grammar (kinds,
//! operators, casts, literals with and without dtypes, inputs, coordinates,
//! intermediates, several outputs), hostile forms (nesting at and past the
//! limit, long flat chains, huge and malformed indices), and a slow
//! evaluator of a parsed [`Program`] that computes node by node through
//! single [`tessera::elementwise`] and [`tessera::cast`] calls on
//! contiguous arrays on the scalar tier, never through the map engine.

use crate::views::{count, get, pack, per_byte, Buf};
use tessera::map::{Op, Program, Scalar};
use tessera::{ArrayView, ArrayViewMut, CastMode, Class, DType, Exec, Kind, Tier};
use tessera_testkit::rng::Rng;

/// The dtypes programs are mostly written in.
pub const COMMON: &[DType] = &[
    DType::F32,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::Bool,
    DType::F16,
    DType::Bf16,
    DType::E4m3fn,
    DType::I8,
    DType::C64,
    DType::I4,
];

/// A random dtype: mostly [`COMMON`], sometimes any of the catalogue.
pub fn random_dtype(rng: &mut Rng) -> DType {
    if rng.chance(3, 4) {
        *rng.pick(COMMON)
    } else {
        *rng.pick(&DType::ALL)
    }
}

/// A generated program text and the input dtypes it is parsed with.
#[derive(Clone, Debug)]
pub struct Text {
    /// The program's text.
    pub text: String,
    /// The dtypes of `x0, x1, …`.
    pub inputs: Vec<DType>,
}

struct Gen<'r> {
    rng: &'r mut Rng,
    inputs: Vec<DType>,
    /// Intermediates defined so far: (name, dtype).
    names: Vec<(String, DType)>,
    budget: usize,
}

fn literal(rng: &mut Rng, d: DType, suffix: bool) -> String {
    let info = d.info();
    let body = match info.class {
        Class::Bool => return (if rng.chance(1, 2) { "true" } else { "false" }).into(),
        Class::Int | Class::Uint => {
            let v: i128 = match rng.below(5) {
                0 => *rng.pick(&[0i128, 1, -1, 127, 128, 255, 256, -129, 1 << 31, -(1 << 63)]),
                1 => i64::MAX as i128 + rng.below(2) as i128,
                2 => u64::MAX as i128,
                _ => rng.range_i64(-20, 40) as i128,
            };
            v.to_string()
        }
        _ => match rng.below(8) {
            0 => "inf".into(),
            1 => "-inf".into(),
            2 => "nan".into(),
            3 => "1e300".into(),
            4 => "-0.0".into(),
            _ => format!("{}", (rng.range_i64(-64, 64) as f64) / 8.0),
        },
    };
    if suffix {
        // `inf` and `nan` take their dtype after an underscore.
        if body.ends_with("inf") || body == "nan" || rng.chance(1, 3) {
            format!("{body}_{}", d.name())
        } else {
            format!("{body}{}", d.name())
        }
    } else {
        body
    }
}

impl Gen<'_> {
    fn leaf(&mut self, d: DType) -> String {
        let loads: Vec<usize> = (0..self.inputs.len())
            .filter(|&i| self.inputs[i] == d)
            .collect();
        let named: Vec<String> = self
            .names
            .iter()
            .filter(|(_, nd)| *nd == d)
            .map(|(n, _)| n.clone())
            .collect();
        match self.rng.below(6) {
            0 | 1 if !loads.is_empty() => format!("x{}", self.rng.pick(&loads)),
            2 if !named.is_empty() => self.rng.pick(&named).clone(),
            3 if d == DType::I64 => format!("coord({})", self.rng.below(3)),
            _ => literal(self.rng, d, true),
        }
    }

    fn expr(&mut self, d: DType, depth: usize) -> String {
        if depth == 0 || self.budget == 0 || self.rng.chance(1, 4) {
            return self.leaf(d);
        }
        self.budget -= 1;
        let class = d.info().class;
        let numeric = matches!(
            class,
            Class::Int | Class::Uint | Class::Float | Class::Complex
        );
        match self.rng.below(11) {
            0 | 1 if numeric => {
                let op = *self.rng.pick(&["+", "-", "*", "/", "%"]);
                let a = self.expr(d, depth - 1);
                // An untyped literal takes the other operand's dtype.
                let b = if self.rng.chance(1, 5) {
                    literal(self.rng, d, false)
                } else {
                    self.expr(d, depth - 1)
                };
                format!("({a} {op} {b})")
            }
            2 if numeric => format!("-{}", self.expr(d, depth - 1)),
            3 if class == Class::Bool => {
                let od = random_dtype(self.rng);
                let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                let a = self.expr(od, depth - 1);
                let b = self.expr(od, depth - 1);
                format!("({a} {op} {b})")
            }
            4 => {
                let c = self.expr(DType::Bool, depth - 1);
                let a = self.expr(d, depth - 1);
                let b = self.expr(d, depth - 1);
                format!("select({c}, {a}, {b})")
            }
            5 | 6 => {
                let from = random_dtype(self.rng);
                let a = self.expr(from, depth - 1);
                let cast = if self.rng.chance(1, 3) {
                    "cast_sat"
                } else {
                    "cast"
                };
                format!("{cast}<{}>({a})", d.name())
            }
            _ => {
                // A kind of the catalogue, its arguments typed by its operand
                // rule for a call of d (which it may refuse: a typed error).
                let kind = *self.rng.pick(&Kind::ALL);
                let ins = tessera_testkit::values::in_dtypes(kind, d);
                let args: Vec<String> = ins.iter().map(|&a| self.expr(a, depth - 1)).collect();
                format!("{}({})", kind.name(), args.join(", "))
            }
        }
    }
}

/// A random program on the register path of `map` (`kernels/src/map/exec/registers.rs`):
/// every node an input, a literal, or `+`, `-`, `*`, `/`, `sqrt`, `fma`,
/// negation, `abs`, `min` or `max` of one float dtype (f32 or f64), with up to two intermediates and one or two
/// outputs, literals typed and untyped and special ones among them (±∞,
/// NaN, 0, 10^±30), about 20 nodes at most (the path takes up to 24).
pub fn register_text(rng: &mut Rng) -> Text {
    let d = if rng.chance(1, 2) {
        DType::F32
    } else {
        DType::F64
    };
    let n_in = 1 + rng.below_usize(3);
    let mut names: Vec<String> = (0..n_in).map(|i| format!("x{i}")).collect();
    let mut budget = 8usize;
    let mut stmts = Vec::new();
    let temps = rng.below_usize(3);
    let outs = 1 + rng.below_usize(2);
    for s in 0..temps + outs {
        let e = register_expr(rng, &names, d, 3, &mut budget);
        let name = if s < temps {
            format!("t{s}")
        } else {
            format!("y{}", s - temps)
        };
        stmts.push(format!("{name} = {e}"));
        if s < temps {
            names.push(name);
        }
    }
    Text {
        text: stmts.join("; "),
        inputs: vec![d; n_in],
    }
}

/// A literal of a register-path program: typed (`0.5f32`, `inf_f64`) or
/// untyped (taking the other operand's dtype).
fn register_literal(rng: &mut Rng, d: DType, typed: bool) -> String {
    let body = *rng.pick(&[
        "0.5", "3.0", "1e30", "1e-30", "0.0", "2.0", "0.1", "inf", "nan", "1.5",
    ]);
    match (typed, body) {
        (false, _) => body.to_string(),
        (true, "inf" | "nan") => format!("{body}_{}", d.name()),
        (true, _) => format!("{body}{}", d.name()),
    }
}

fn register_expr(
    rng: &mut Rng,
    names: &[String],
    d: DType,
    depth: usize,
    budget: &mut usize,
) -> String {
    // A statement's root is an operation while the budget lasts.
    let root = depth == 3;
    if depth == 0 || *budget == 0 || (!root && rng.chance(1, 4)) {
        return if rng.chance(1, 6) {
            register_literal(rng, d, true)
        } else {
            rng.pick(names).clone()
        };
    }
    *budget -= 1;
    match rng.below(7) {
        6 => {
            let a = register_expr(rng, names, d, depth - 1, budget);
            if rng.chance(1, 2) {
                format!("-{a}")
            } else {
                format!("abs({a})")
            }
        }
        0..=2 => {
            let op = *rng.pick(&["+", "-", "*", "/"]);
            let a = register_expr(rng, names, d, depth - 1, budget);
            let b = if rng.chance(1, 5) {
                register_literal(rng, d, false)
            } else {
                register_expr(rng, names, d, depth - 1, budget)
            };
            format!("({a} {op} {b})")
        }
        3 => format!("sqrt({})", register_expr(rng, names, d, depth - 1, budget)),
        4 => {
            let args: Vec<String> = (0..3)
                .map(|_| register_expr(rng, names, d, depth - 1, budget))
                .collect();
            format!("fma({})", args.join(", "))
        }
        _ => {
            let kind = *rng.pick(&["add", "sub", "mul", "div", "min", "max"]);
            let a = register_expr(rng, names, d, depth - 1, budget);
            let b = register_expr(rng, names, d, depth - 1, budget);
            format!("{kind}({a}, {b})")
        }
    }
}

/// A random program text: some intermediates, then one to three outputs,
/// mostly well-typed, over up to three inputs.
pub fn random_text(rng: &mut Rng) -> Text {
    let n_in = rng.below_usize(4);
    let inputs: Vec<DType> = (0..n_in).map(|_| random_dtype(rng)).collect();
    let mut g = Gen {
        rng,
        inputs: inputs.clone(),
        names: Vec::new(),
        budget: 24,
    };
    let mut stmts = Vec::new();
    for t in 0..g.rng.below_usize(3) {
        let d = random_dtype(g.rng);
        let e = g.expr(d, 3);
        stmts.push(format!("t{t} = {e}"));
        g.names.push((format!("t{t}"), d));
    }
    let outs = 1 + g.rng.below_usize(3);
    for k in 0..outs {
        let d = random_dtype(g.rng);
        let e = g.expr(d, 4);
        stmts.push(format!("y{k} = {e}"));
    }
    let sep = if g.rng.chance(1, 8) {
        ";\n# note\n"
    } else {
        "; "
    };
    Text {
        text: stmts.join(sep),
        inputs,
    }
}

/// A hostile text: nesting at and past [`tessera::map::MAX_NESTING`], long
/// flat chains, huge or malformed indices, unknown names, repeated or
/// missing outputs, empty or odd text.
pub fn hostile_text(rng: &mut Rng) -> Text {
    let inputs = vec![DType::F32, DType::F32];
    let limit = tessera::map::MAX_NESTING;
    let depth = *rng.pick(&[limit - 2, limit - 1, limit, limit + 1, 3000]);
    let text = match rng.below(12) {
        0 => format!("y0 = {}x0{}", "(".repeat(depth), ")".repeat(depth)),
        1 => format!("y0 = {}x0{}", "sqrt(".repeat(depth), ")".repeat(depth)),
        2 => format!("y0 = {}x0", "-".repeat(depth)),
        3 => {
            let n = *rng.pick(&[2usize, 100, 1000, 3000]);
            format!("y0 = x0{}", " + x1".repeat(n))
        }
        4 => format!(
            "y{} = x0",
            rng.pick(&[
                "18446744073709551615",
                "18446744073709551616",
                "99999999999",
                "1",
                "01",
                "4294967296"
            ])
        ),
        5 => format!(
            "y0 = x{}",
            rng.pick(&[
                "18446744073709551615",
                "2",
                "99999999999999999999",
                "00",
                "-1"
            ])
        ),
        6 => format!(
            "y0 = coord({})",
            rng.pick(&["18446744073709551615", "7", "-1", "99999999999999999999999"])
        ),
        7 => "y0 = x0; y0 = x1".into(),
        8 => format!(
            "y0 = {}",
            rng.pick(&[
                "",
                "x0 +",
                "(x0",
                "x0)",
                "cast<f99>(x0)",
                "foo(x0)",
                "1e99999f32",
                "300u8",
                "y0"
            ])
        ),
        9 => format!("t = x0 * x1; y0 = t{}", " + t".repeat(rng.below_usize(50))),
        10 => format!(
            "y0 = {}x0{}",
            "max(x1, ".repeat(depth.min(300)),
            ")".repeat(depth.min(300))
        ),
        _ => format!("{}y0 = x0", "# comment\n".repeat(rng.below_usize(5))),
    };
    Text { text, inputs }
}

/// Words a mutation of a program text may insert.
pub const WORDS: &[&[u8]] = &[
    b"(",
    b")",
    b",",
    b";",
    b"=",
    b"+",
    b"-",
    b"*",
    b"/",
    b"%",
    b"<",
    b"<=",
    b"==",
    b"!=",
    b"x0",
    b"x1",
    b"x2",
    b"y0",
    b"y1",
    b"y2",
    b"t0",
    b"cast<f64>(",
    b"cast_sat<i8>(",
    b"coord(0)",
    b"select(",
    b"fma(",
    b"sqrt(",
    b"exp(",
    b"f32",
    b"_bf16",
    b"i4",
    b"u1",
    b"e2m1fn",
    b"true",
    b"nan",
    b"inf",
    b"1e308",
    b"-",
    b"#",
    b"\n",
    b"\xe2\x80\xa6",
    b"18446744073709551615",
];

/// The values of a program's outputs over `shape`, computed node by node:
/// each node one elementwise or cast call (on the scalar tier, sequential)
/// on contiguous arrays of `shape`, loads and coordinates gathered by hand.
/// `inputs` are C-order buffers broadcasting to `shape`. Returns the
/// outputs' elements in C order, or the refusal of a node's call.
pub fn evaluate(p: &Program, inputs: &[Buf], shape: &[usize]) -> Result<Vec<Vec<Vec<u8>>>, String> {
    let exec = Exec::on(Tier::Scalar).par(tessera::Par::Seq);
    let n = count(shape);
    // Every node is an array of the loop's n indices laid out as [n, 1]:
    // one value per byte for packed dtypes (whose arrays of an odd count
    // cannot be contiguous), so that any node of any dtype has an array.
    let flat = [n, 1];
    let mut values: Vec<Buf> = Vec::with_capacity(p.nodes().len());
    for (i, node) in p.nodes().iter().enumerate() {
        let d = node.dtype;
        let vpb = per_byte(d);
        let item = if vpb > 1 { 1 } else { d.info().item_bytes };
        let mut out = Buf {
            dtype: d,
            shape: flat.to_vec(),
            strides: vec![vpb as isize, 1],
            offset: 0,
            bytes: vec![0u8; n * item],
        };
        match &node.op {
            Op::Load(k) => {
                let elems = broadcast(&inputs[*k], shape);
                out.bytes = spread(d, &elems);
            }
            Op::Coord(a) => {
                let elems: Vec<Vec<u8>> = indices(shape)
                    .into_iter()
                    .map(|idx| (idx[*a] as i64).to_le_bytes().to_vec())
                    .collect();
                out.bytes = spread(d, &elems);
            }
            Op::Const(v) => {
                let (sd, bytes): (DType, Vec<u8>) = match *v {
                    Scalar::Bool(b) => (DType::Bool, vec![b as u8]),
                    Scalar::Int(x) => (DType::I64, x.to_le_bytes().to_vec()),
                    Scalar::UInt(x) => (DType::U64, x.to_le_bytes().to_vec()),
                    Scalar::Float(x) => (DType::F64, x.to_le_bytes().to_vec()),
                };
                let src = ArrayView::new(sd, &[], &[], 0, &bytes).map_err(|e| e.to_string())?;
                let mut dst = out.view_mut().map_err(|e| e.to_string())?;
                tessera::cast(CastMode::Default, &src, &mut dst, &exec)
                    .map_err(|e| format!("node {i}: the constant's cast: {e}"))?;
            }
            Op::Kind(kind, args) => {
                let views: Vec<ArrayView<'_>> = args
                    .iter()
                    .map(|a| values[a.index()].view())
                    .collect::<tessera::Result<_>>()
                    .map_err(|e| e.to_string())?;
                let mut dst = ArrayViewMut::new(d, &out.shape, &out.strides, 0, &mut out.bytes)
                    .map_err(|e| e.to_string())?;
                tessera::elementwise(*kind, &views, &mut dst, &exec)
                    .map_err(|e| format!("node {i} ({}): {e}", kind.name()))?;
            }
            Op::Cast(a, mode) => {
                let src = values[a.index()].view().map_err(|e| e.to_string())?;
                let mut dst = ArrayViewMut::new(d, &out.shape, &out.strides, 0, &mut out.bytes)
                    .map_err(|e| e.to_string())?;
                tessera::cast(*mode, &src, &mut dst, &exec)
                    .map_err(|e| format!("node {i} (cast): {e}"))?;
            }
        }
        values.push(out);
    }
    Ok(p.outputs()
        .iter()
        .map(|o| values[o.index()].elements())
        .collect())
}

/// Elements (as [`crate::views::get`] gives them) stored one value per
/// byte (in its most significant bits) for a packed dtype, else in order.
fn spread(d: DType, elems: &[Vec<u8>]) -> Vec<u8> {
    let vpb = per_byte(d);
    if vpb > 1 {
        let bits = 8 / vpb;
        elems.iter().map(|e| e[0] << (8 - bits)).collect()
    } else {
        pack(d, elems)
    }
}

/// Storage bytes of `n` C-order elements of `d`.
pub fn storage_len(d: DType, n: usize) -> usize {
    let vpb = per_byte(d);
    if vpb > 1 {
        n.div_ceil(vpb)
    } else {
        n * d.info().item_bytes
    }
}

/// Every index of `shape` in C order.
pub fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n = count(shape);
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        out.push(idx.clone());
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// The elements of `b` (any valid layout) broadcast to `shape`, in C order.
pub fn broadcast(b: &Buf, shape: &[usize]) -> Vec<Vec<u8>> {
    let lead = shape.len() - b.shape.len();
    indices(shape)
        .into_iter()
        .map(|idx| {
            let mut p = b.offset as i128;
            for (k, (&e, &s)) in b.shape.iter().zip(&b.strides).enumerate() {
                let i = if e == 1 { 0 } else { idx[lead + k] };
                p += i as i128 * s as i128;
            }
            get(b.dtype, &b.bytes, p as usize)
        })
        .collect()
}
