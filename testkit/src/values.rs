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
    /// A pair dtype: (hi, lo), exactly (its value is hi + lo).
    P(f64, f64),
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
    /// The pair's parts.
    pub fn p(self) -> (f64, f64) {
        match self {
            Val::P(h, l) => (h, l),
            v => panic!("not a pair: {v:?}"),
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
            OperandRule::ComplexReal if k == 1 => d.component().unwrap_or(DType::F64),
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
            DType::Df32 => DType::F32,
            DType::Dd64 => DType::F64,
            d => d.component().unwrap_or(d),
        },
        ResultRule::Pair => match d {
            DType::F32 => DType::Df32,
            _ => DType::Dd64,
        },
        ResultRule::Order => DType::I8,
        ResultRule::Complex => d.complex().expect("a float dtype with a complex dtype"),
    }
}

/// The component dtype of a pair dtype (f32 for df32, f64 for dd64).
pub fn pair_component(d: DType) -> DType {
    if d.info().item_bytes == 8 {
        DType::F32
    } else {
        DType::F64
    }
}

/// The bytes of the pair (hi, lo) of dtype `d` (each part rounded to the
/// component, which is exact for parts that are component values).
pub fn pair_bytes(d: DType, hi: f64, lo: f64) -> Vec<u8> {
    if pair_component(d) == DType::F32 {
        let mut b = (hi as f32).to_le_bytes().to_vec();
        b.extend((lo as f32).to_le_bytes());
        b
    } else {
        let mut b = hi.to_le_bytes().to_vec();
        b.extend(lo.to_le_bytes());
        b
    }
}

/// The distance from `h` to the next component value away from zero (the
/// ulp of `h` in the component of `d`); NaN for non-finite `h`.
pub fn component_ulp(d: DType, h: f64) -> f64 {
    if pair_component(d) == DType::F32 {
        let x = (h as f32).abs();
        (f32::from_bits(x.to_bits() + 1) - x) as f64
    } else {
        let x = h.abs();
        f64::from_bits(x.to_bits() + 1) - x
    }
}

/// A random normalised pair of `d`'s component: a random leading part and a
/// trailing part of at most half its ulp (a tie now and then), or an
/// unnormalised pair, or a special with a zero trailing part.
pub fn random_pair(d: DType, rng: &mut Rng) -> (f64, f64) {
    let hi = if pair_component(d) == DType::F32 {
        random_f32(rng) as f64
    } else {
        random_f64(rng)
    };
    if !hi.is_finite() || hi == 0.0 || rng.chance(1, 8) {
        return (hi, 0.0);
    }
    let ulp = component_ulp(d, hi);
    let lo = match rng.below(8) {
        0 => ulp * 0.5,
        1 => -ulp * 0.5,
        2 => ulp * (rng.range_i64(-64, 64) as f64) / 256.0,
        _ => {
            // A fraction of the half ulp with full precision.
            let f = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            let l = ulp * f;
            if pair_component(d) == DType::F32 {
                l as f32 as f64
            } else {
                l
            }
        }
    };
    (hi, lo)
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
        Class::Complex => {
            let (c, h) = (d.component().expect("a complex dtype"), b.len() / 2);
            Val::C(decode(c, &b[..h]).f(), decode(c, &b[h..]).f())
        }
        Class::Pair => {
            let h = b.len() / 2;
            let c = pair_component(d);
            Val::P(decode(c, &b[..h]).f(), decode(c, &b[h..]).f())
        }
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
            DType::F16c | DType::Bf16c => {
                let c = d.component().expect("a complex dtype");
                let m = mini(c).unwrap();
                for _ in 0..2 {
                    let code = if rng.chance(1, 6) {
                        0
                    } else {
                        rng.below(1u64 << m.code_bits) as u32
                    };
                    out.extend(code_bytes(c, code));
                }
            }
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
        Class::Pair => {
            let (hi, lo) = random_pair(d, rng);
            out.extend(pair_bytes(d, hi, lo));
        }
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
        Class::Complex | Class::Pair => {
            let h = a.len() / 2;
            let c = match d.component() {
                Some(c) => c,
                None if h == 4 => DType::F32,
                None => DType::F64,
            };
            (a[..h] == b[..h] || both_nan(decode(c, &a[..h]), decode(c, &b[..h])))
                && (a[h..] == b[h..] || both_nan(decode(c, &a[h..]), decode(c, &b[h..])))
        }
        _ => false,
    }
}
