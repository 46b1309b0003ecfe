//! Elements as bytes: what each dtype's storage holds, how a test reads it
//! (exactly, through the narrow-float model of [`crate::mini`] where the
//! dtype is one), when two results are the same under the numerical contract,
//! and input generators (random codes and values, a share of them edge values
//! of [`crate::edges`]).

use crate::edges::{edge_elems, int_edges, F32_EDGES, F64_EDGES};
use crate::mini::mini;
use crate::rng::Rng;
use tessera::{Class, DType, Kind, OperandRule, ResultRule};

/// An element's value as the oracle sees it.
#[derive(Clone, Copy, Debug)]
pub enum Val {
    /// bool (any non-zero byte is true).
    B(bool),
    /// Any integer dtype.
    I(i128),
    /// Any real float dtype, exactly (NaN keeps its sign bit).
    F(f64),
    /// A complex dtype: (re, im), exactly.
    C(f64, f64),
}

impl Val {
    /// The float value (panics for other classes).
    pub fn f(self) -> f64 {
        match self {
            Val::F(x) => x,
            v => panic!("not a float: {v:?}"),
        }
    }
    /// The integer value.
    pub fn i(self) -> i128 {
        match self {
            Val::I(x) => x,
            v => panic!("not an integer: {v:?}"),
        }
    }
    /// The bool value.
    pub fn b(self) -> bool {
        match self {
            Val::B(x) => x,
            v => panic!("not a bool: {v:?}"),
        }
    }
    /// The complex value.
    pub fn c(self) -> (f64, f64) {
        match self {
            Val::C(r, i) => (r, i),
            v => panic!("not a complex: {v:?}"),
        }
    }
}

/// Bytes of one element in the kernels' view.
pub fn width(d: DType) -> usize {
    d.info().item_bytes
}

/// The dtype of each input of `kind` called on `d`.
pub fn in_dtypes(kind: Kind, d: DType) -> Vec<DType> {
    let info = kind.info();
    (0..info.arity)
        .map(|k| match info.operands {
            OperandRule::CondFirst if k == 0 => DType::Bool,
            _ => d,
        })
        .collect()
}

/// The dtype of the result of `kind` called on `d`.
pub fn out_dtype(kind: Kind, d: DType) -> DType {
    match kind.info().result {
        ResultRule::Same => d,
        ResultRule::Bool => DType::Bool,
        ResultRule::Real => match d {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        },
    }
}

/// Width in bits, smallest and largest value of an integer dtype.
pub fn int_range(d: DType) -> (u32, i128, i128) {
    let info = d.info();
    let bits = info.bits;
    match info.class {
        Class::Int => (bits, -(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
        Class::Uint => (bits, 0, (1i128 << bits) - 1),
        c => panic!("{}: not an integer ({c:?})", info.name),
    }
}

/// The integer v reduced into d's range (two's complement wrap).
pub fn wrap_int(d: DType, v: i128) -> i128 {
    let (bits, min, _) = int_range(d);
    let m = v.rem_euclid(1i128 << bits);
    if min < 0 && m >= (1i128 << (bits - 1)) {
        m - (1i128 << bits)
    } else {
        m
    }
}

/// The storage bytes of integer v (wrapped into d's width).
pub fn int_bytes(d: DType, v: i128) -> Vec<u8> {
    let (bits, _, _) = int_range(d);
    let u = (v.rem_euclid(1i128 << bits)) as u128;
    u.to_le_bytes()[..width(d)].to_vec()
}

/// The code of a parameterised float element.
pub fn code_of(d: DType, bytes: &[u8]) -> u32 {
    match bytes.len() {
        1 => bytes[0] as u32,
        2 => u16::from_le_bytes([bytes[0], bytes[1]]) as u32,
        n => panic!("{}: {n}-byte code", d.name()),
    }
}

/// The storage bytes of a code.
pub fn code_bytes(d: DType, code: u32) -> Vec<u8> {
    match width(d) {
        1 => vec![code as u8],
        2 => (code as u16).to_le_bytes().to_vec(),
        n => panic!("{}: {n}-byte code", d.name()),
    }
}

/// Read one element.
pub fn decode(d: DType, b: &[u8]) -> Val {
    let info = d.info();
    assert_eq!(b.len(), info.item_bytes);
    match info.class {
        Class::Bool => Val::B(b[0] != 0),
        Class::Int | Class::Uint => {
            let (bits, min, _) = int_range(d);
            let mut raw = [0u8; 16];
            raw[..b.len()].copy_from_slice(b);
            let u = u128::from_le_bytes(raw) & ((1u128 << bits) - 1);
            let v = u as i128;
            Val::I(if min < 0 && v >= (1i128 << (bits - 1)) {
                v - (1i128 << bits)
            } else {
                v
            })
        }
        Class::Float => match d {
            DType::F32 => Val::F(f32::from_le_bytes(b.try_into().unwrap()) as f64),
            DType::F64 => Val::F(f64::from_le_bytes(b.try_into().unwrap())),
            _ => Val::F(mini(d).expect("parameterised float").decode(code_of(d, b))),
        },
        Class::Complex => match d {
            DType::C64 => Val::C(
                f32::from_le_bytes(b[0..4].try_into().unwrap()) as f64,
                f32::from_le_bytes(b[4..8].try_into().unwrap()) as f64,
            ),
            DType::C128 => Val::C(
                f64::from_le_bytes(b[0..8].try_into().unwrap()),
                f64::from_le_bytes(b[8..16].try_into().unwrap()),
            ),
            _ => panic!("unknown complex dtype {}", info.name),
        },
    }
}

// ---------------------------------------------------------------- generators

/// A random f32: random bits, moderate magnitudes, small halves, or an edge.
pub fn random_f32(rng: &mut Rng) -> f32 {
    match rng.below(8) {
        0 | 1 => f32::from_bits(rng.next_u32()),
        2..=4 => {
            let e = rng.range_i64(-30, 30) as i32;
            let m = rng.next_u32() & 0x007f_ffff;
            let s = rng.next_u32() & 0x8000_0000;
            f32::from_bits(s | (((e + 127) as u32) << 23) | m)
        }
        5 => (rng.range_i64(-64, 64) as f32) * 0.5,
        6 => {
            // A few significant bits only: results land on ties and exact values.
            let m = rng.range_i64(-255, 255) as f32;
            m * f32::from_bits(((rng.range_i64(-20, 20) + 127) as u32) << 23)
        }
        _ => f32::from_bits(*rng.pick(F32_EDGES)),
    }
}

/// A random f64, as `random_f32` (wider exponents, full significands).
pub fn random_f64(rng: &mut Rng) -> f64 {
    match rng.below(8) {
        0 | 1 => f64::from_bits(rng.next_u64()),
        2..=4 => {
            let e = rng.range_i64(-60, 60);
            let m = rng.next_u64() & ((1u64 << 52) - 1);
            let s = rng.next_u64() & (1u64 << 63);
            f64::from_bits(s | (((e + 1023) as u64) << 52) | m)
        }
        5 => (rng.range_i64(-64, 64) as f64) * 0.5,
        6 => {
            let m = rng.range_i64(-(1 << 20), 1 << 20) as f64;
            m * f64::from_bits(((rng.range_i64(-40, 40) + 1023) as u64) << 52)
        }
        _ => f64::from_bits(*rng.pick(F64_EDGES)),
    }
}

/// One random element of dtype d (valid codes only), appended to `out`.
pub fn push_random(d: DType, rng: &mut Rng, out: &mut Vec<u8>) {
    let info = d.info();
    match info.class {
        Class::Bool => out.push(*rng.pick(&[0u8, 1, 1, 0, 2, 0x80, 0xff, 0, 1])),
        Class::Int | Class::Uint => {
            let (bits, min, max) = int_range(d);
            let v = match rng.below(4) {
                0 => *rng.pick(&int_edges(d)),
                1 => (rng.range_i64(-70, 70) as i128).clamp(min, max),
                _ => wrap_int(d, (rng.next_u64() >> (64 - bits.min(64))) as i128),
            };
            out.extend(int_bytes(d, v));
        }
        Class::Float => match d {
            DType::F32 => out.extend(random_f32(rng).to_le_bytes()),
            DType::F64 => out.extend(random_f64(rng).to_le_bytes()),
            _ => {
                let m = mini(d).unwrap();
                let code = rng.below(1u64 << m.code_bits) as u32;
                out.extend(code_bytes(d, code));
            }
        },
        Class::Complex => match d {
            DType::C64 => {
                for _ in 0..2 {
                    let x = if rng.chance(1, 6) {
                        0.0
                    } else {
                        random_f32(rng)
                    };
                    out.extend(x.to_le_bytes());
                }
            }
            _ => {
                for _ in 0..2 {
                    let x = if rng.chance(1, 6) {
                        0.0
                    } else {
                        random_f64(rng)
                    };
                    out.extend(x.to_le_bytes());
                }
            }
        },
    }
}

/// n elements of dtype d: a quarter edges, the rest random; appended to `out`.
pub fn push_operand(d: DType, rng: &mut Rng, n: usize, out: &mut Vec<u8>) {
    let edges = edge_elems(d);
    for _ in 0..n {
        if rng.chance(1, 4) {
            out.extend(rng.pick(edges));
        } else {
            push_random(d, rng, out);
        }
    }
}

/// Replicate element 0 of `bytes` (elements of `w` bytes) across n elements.
pub fn replicate(bytes: &[u8], w: usize, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * w);
    for _ in 0..n {
        out.extend_from_slice(&bytes[..w]);
    }
    out
}

/// The bytes of element i.
pub fn elem(bytes: &[u8], w: usize, i: usize) -> &[u8] {
    &bytes[i * w..(i + 1) * w]
}

/// Whether two elements of dtype d are the same result under §5.1 of the
/// design: bit for bit, except that two NaNs (of a float output, or of one
/// complex component) are the same whatever their signs and payloads.
pub fn same_result(d: DType, a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return true;
    }
    let both_nan = |x: Val, y: Val| match (x, y) {
        (Val::F(x), Val::F(y)) => x.is_nan() && y.is_nan(),
        _ => false,
    };
    match d.info().class {
        Class::Float => both_nan(decode(d, a), decode(d, b)),
        Class::Complex => {
            let h = a.len() / 2;
            let c = if h == 4 { DType::F32 } else { DType::F64 };
            (a[..h] == b[..h] || both_nan(decode(c, &a[..h]), decode(c, &b[..h])))
                && (a[h..] == b[h..] || both_nan(decode(c, &a[h..]), decode(c, &b[h..])))
        }
        _ => false,
    }
}
