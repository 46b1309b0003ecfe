//! Elements as bytes: what each dtype's storage holds, how the oracle reads it,
//! and input generators (random codes and values, plus edge values).

use super::mini::mini;
use super::rng::Rng;
use tessera_generated::{Class, DType, Kind, OperandRule, ResultRule};

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

/// Whether a dtype is a parameterised float (f16, bf16, fp8, fp6, fp4, scales).
pub fn is_mini(d: DType) -> bool {
    mini(d).is_some()
}

// ---------------------------------------------------------------- generators

/// Edge values of f32, as bits.
pub const F32_EDGES: &[u32] = &[
    0x0000_0000, // +0
    0x8000_0000, // -0
    0x7f80_0000, // +inf
    0xff80_0000, // -inf
    0x7fc0_0000, // NaN
    0xffc0_0000, // -NaN
    0x7f80_0001, // signalling NaN
    0x7fd2_3456, // NaN with a payload
    0x0000_0001, // smallest subnormal
    0x8000_0001,
    0x007f_ffff, // largest subnormal
    0x0080_0000, // smallest normal
    0x7f7f_ffff, // largest finite
    0xff7f_ffff,
    0x3f80_0000, // 1
    0xbf80_0000, // -1
    0x3f00_0000, // 0.5
    0xbf00_0000, // -0.5
    0x3fc0_0000, // 1.5
    0xbfc0_0000, // -1.5
    0x4020_0000, // 2.5
    0xc020_0000, // -2.5
    0x4000_0000, // 2
    0x4040_0000, // 3
    0xc0e0_0000, // -7
    0x3eff_ffff, // 0.49999997
    0x4b00_0000, // 2^23
    0x4b00_0001, // 2^23 + 1
    0x4aff_ffff, // 2^23 - 0.5
    0x4b80_0000, // 2^24
    0x3e80_0000, // 0.25
    0xbe80_0000, // -0.25
    0x3f7f_ffff, // 1 - 2^-24
    0x3f80_0001, // 1 + 2^-23
];

/// Edge values of f64, as bits.
pub const F64_EDGES: &[u64] = &[
    0x0000_0000_0000_0000,
    0x8000_0000_0000_0000,
    0x7ff0_0000_0000_0000,
    0xfff0_0000_0000_0000,
    0x7ff8_0000_0000_0000,
    0xfff8_0000_0000_0000,
    0x7ff0_0000_0000_0001,
    0x7ffa_bcde_f012_3456,
    0x0000_0000_0000_0001,
    0x8000_0000_0000_0001,
    0x000f_ffff_ffff_ffff,
    0x0010_0000_0000_0000,
    0x7fef_ffff_ffff_ffff,
    0xffef_ffff_ffff_ffff,
    0x3ff0_0000_0000_0000, // 1
    0xbff0_0000_0000_0000,
    0x3fe0_0000_0000_0000, // 0.5
    0xbfe0_0000_0000_0000,
    0x3ff8_0000_0000_0000, // 1.5
    0xbff8_0000_0000_0000,
    0x4004_0000_0000_0000, // 2.5
    0xc004_0000_0000_0000,
    0x4000_0000_0000_0000, // 2
    0x4008_0000_0000_0000, // 3
    0xc01c_0000_0000_0000, // -7
    0x3fdf_ffff_ffff_ffff, // 0.5 - 2^-54
    0x4330_0000_0000_0000, // 2^52
    0x4330_0000_0000_0001, // 2^52 + 1
    0x432f_ffff_ffff_ffff, // 2^52 - 0.5
    0x4340_0000_0000_0000, // 2^53
    0x3fd0_0000_0000_0000, // 0.25
    0xbfd0_0000_0000_0000,
    0x3fef_ffff_ffff_ffff, // 1 - 2^-53
    0x3ff0_0000_0000_0001, // 1 + 2^-52
];

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

/// Integer edge values of a dtype: 0, ±1, 2, MIN, MAX, their neighbours, and
/// counts around the width (for shifts and rotates).
pub fn int_edges(d: DType) -> Vec<i128> {
    let (bits, min, max) = int_range(d);
    let b = bits as i128;
    let mut v = vec![
        0,
        1,
        -1,
        2,
        -2,
        3,
        min,
        max,
        min + 1,
        max - 1,
        b - 1,
        b,
        b + 1,
        2 * b,
        -b,
        7,
        8,
    ];
    v.retain(|x| (min..=max).contains(x));
    v.sort();
    v.dedup();
    v
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

/// Edge elements of a dtype, each as its storage bytes (computed once).
pub fn edge_elems(d: DType) -> &'static [Vec<u8>] {
    static EDGES: std::sync::OnceLock<Vec<Vec<Vec<u8>>>> = std::sync::OnceLock::new();
    &EDGES.get_or_init(|| DType::ALL.iter().map(|&d| make_edges(d)).collect())[d as usize]
}

fn make_edges(d: DType) -> Vec<Vec<u8>> {
    let info = d.info();
    match info.class {
        Class::Bool => vec![vec![0], vec![1], vec![2], vec![0xff]],
        Class::Int | Class::Uint => int_edges(d).into_iter().map(|v| int_bytes(d, v)).collect(),
        Class::Float => match d {
            DType::F32 => F32_EDGES.iter().map(|b| b.to_le_bytes().to_vec()).collect(),
            DType::F64 => F64_EDGES.iter().map(|b| b.to_le_bytes().to_vec()).collect(),
            _ => {
                let m = mini(d).unwrap();
                let mut codes = vec![0u32, 1, m.max_code, m.max_code - 1];
                let sign = if m.signed { 1u32 << (m.e + m.m) } else { 0 };
                for c in codes.clone() {
                    codes.push(c | sign);
                }
                // Infinities, the first and last NaN code of each sign, and the
                // values 1, 0.5, 1.5, 2.5, 3 where they exist.
                let mut nans = [Vec::new(), Vec::new()];
                for c in m.codes() {
                    let v = m.decode(c);
                    if v.is_nan() {
                        nans[v.is_sign_negative() as usize].push(c);
                    } else if v.is_infinite()
                        || [1.0, 0.5, 1.5, 2.5, 3.0, -1.0, -0.5, -1.5, -2.5].contains(&v)
                    {
                        codes.push(c);
                    }
                }
                for n in nans {
                    codes.extend(n.first());
                    codes.extend(n.last());
                }
                codes.sort();
                codes.dedup();
                codes.into_iter().map(|c| code_bytes(d, c)).collect()
            }
        },
        Class::Complex => {
            let comps: Vec<Vec<u8>> = match d {
                DType::C64 => [
                    0x0000_0000u32,
                    0x8000_0000,
                    0x3f80_0000,
                    0xbfc0_0000,
                    0x7f80_0000,
                    0x7fc0_0000,
                    0x0000_0001,
                    0x7f7f_ffff,
                ]
                .iter()
                .map(|b| b.to_le_bytes().to_vec())
                .collect(),
                _ => [
                    0u64,
                    0x8000_0000_0000_0000,
                    0x3ff0_0000_0000_0000,
                    0xbff8_0000_0000_0000,
                    0x7ff0_0000_0000_0000,
                    0x7ff8_0000_0000_0000,
                    1,
                    0x7fef_ffff_ffff_ffff,
                ]
                .iter()
                .map(|b| b.to_le_bytes().to_vec())
                .collect(),
            };
            let mut out = Vec::new();
            for re in &comps {
                for im in &comps {
                    let mut e = re.clone();
                    e.extend(im);
                    out.push(e);
                }
            }
            out
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
        Class::Complex => {
            let h = a.len() / 2;
            let c = if h == 4 { DType::F32 } else { DType::F64 };
            (a[..h] == b[..h] || both_nan(decode(c, &a[..h]), decode(c, &b[..h])))
                && (a[h..] == b[h..] || both_nan(decode(c, &a[h..]), decode(c, &b[h..])))
        }
        _ => false,
    }
}

/// `a` with its sign flipped (if `flip`) and then moved `k` ulps (codes) along
/// its bit pattern; other classes get `a` itself.
pub fn nudge(d: DType, a: &[u8], k: i64, flip: bool, out: &mut Vec<u8>) {
    match d {
        DType::F32 => {
            let b = u32::from_le_bytes(a.try_into().unwrap());
            let b = (b ^ if flip { 0x8000_0000 } else { 0 }).wrapping_add(k as u32);
            out.extend(b.to_le_bytes());
        }
        DType::F64 => {
            let b = u64::from_le_bytes(a.try_into().unwrap());
            let b = (b ^ if flip { 1 << 63 } else { 0 }).wrapping_add(k as u64);
            out.extend(b.to_le_bytes());
        }
        DType::C64 | DType::C128 => {
            let h = a.len() / 2;
            let c = if h == 4 { DType::F32 } else { DType::F64 };
            nudge(c, &a[..h], k, flip, out);
            nudge(c, &a[h..], k, flip, out);
        }
        _ => match mini(d) {
            Some(m) => {
                let c = code_of(d, a);
                let sign = if m.signed && flip {
                    1u32 << (m.e + m.m)
                } else {
                    0
                };
                let c = ((c ^ sign) as i64 + k).rem_euclid(1 << m.code_bits) as u32;
                out.extend(code_bytes(d, c));
            }
            None => out.extend_from_slice(a),
        },
    }
}

/// An element near `a` or near `-a` (a few ulps or codes away, or exactly),
/// for cancellations and ties in two-input float kinds.
pub fn near(d: DType, a: &[u8], rng: &mut Rng, out: &mut Vec<u8>) {
    let k = if rng.chance(1, 3) {
        0
    } else {
        rng.range_i64(-3, 3)
    };
    nudge(d, a, k, rng.chance(1, 2), out);
}

/// For fma: an addend near -(a·b) rounded into d, so that the sum cancels
/// exactly or leaves only the product's low bits.
pub fn fma_addend(d: DType, a: &[u8], b: &[u8], rng: &mut Rng, out: &mut Vec<u8>) {
    let p = decode(d, a).f() * decode(d, b).f();
    let rounded = match d {
        DType::F32 => (p as f32).to_le_bytes().to_vec(),
        DType::F64 => p.to_le_bytes().to_vec(),
        _ => code_bytes(d, mini(d).expect("a float dtype").encode(p, true)),
    };
    let k = if rng.chance(1, 3) {
        0
    } else {
        rng.range_i64(-2, 2)
    };
    nudge(d, &rounded, k, true, out);
}
