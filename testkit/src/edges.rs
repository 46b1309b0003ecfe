//! Edge values of every dtype, as the differential checks and the oracle
//! tests feed them to the kernels. Two families:
//!
//! * curated values ([`edge_elems`], [`F32_EDGES`], [`F64_EDGES`],
//!   [`int_edges`]): signed zeros, infinities, NaNs with and without payloads,
//!   subnormals, the largest finite values, halves and values on either side
//!   of the integer thresholds of rounding, integer extremes and shift counts
//!   around the width;
//! * codes derived from the format's fields ([`code_edges`],
//!   [`float_edge_codes`], [`int_edge_codes`]): every pattern at the ends of
//!   the exponent and mantissa fields (zeros, the smallest subnormals, the
//!   smallest normal, one and its neighbours, the largest finite codes,
//!   infinity and the codes after it), both signs, and the integers at the
//!   ends and the middle of the width.
//!
//! The tests' differential and oracle checks use the first family, `tessera
//! selftest` the second.

use crate::mini::mini;
use crate::values::{code_bytes, decode, int_bytes, int_range, Val};
use tessera::{Class, DType};

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

/// Edge elements of a dtype, each as its storage bytes (computed once).
pub fn edge_elems(d: DType) -> &'static [Vec<u8>] {
    static EDGES: std::sync::OnceLock<Vec<Vec<Vec<u8>>>> = std::sync::OnceLock::new();
    &EDGES.get_or_init(|| DType::ALL.iter().map(|&d| make_edges(d)).collect())[d as usize]
}

fn make_edges(d: DType) -> Vec<Vec<u8>> {
    let info = d.info();
    match info.class {
        Class::Pair => pair_edges(d),
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
        Class::Complex if d.info().item_bytes == 4 => {
            // f16c, bf16c: a handful of each part's codes (zeros, one,
            // -1.5, the extremes, infinity, NaN), every pairing.
            let c = d.component().expect("a complex dtype");
            let part: [u32; 8] = if c == DType::F16 {
                [0, 0x8000, 0x3c00, 0xbe00, 0x7c00, 0x7e00, 0x0001, 0x7bff]
            } else {
                [0, 0x8000, 0x3f80, 0xbfc0, 0x7f80, 0x7fc0, 0x0001, 0x7f7f]
            };
            let mut out = Vec::new();
            for re in part {
                for im in part {
                    let mut e = code_bytes(c, re);
                    e.extend(code_bytes(c, im));
                    out.push(e);
                }
            }
            out
        }
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

/// All ones in the low `bits` bits.
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Edge codes of an integer of `bits` bits (two's complement codes when
/// `signed`): 0 to 3, the width and one less (shift counts), all ones and one
/// less, the top bit alone and its neighbours, and for a signed integer the
/// code two below all ones (-3).
pub fn int_edge_codes(bits: u32, signed: bool) -> Vec<u64> {
    let m = mask(bits);
    let top = 1u64 << (bits - 1);
    let mut v = vec![
        0,
        1,
        2,
        3,
        (bits - 1) as u64,
        bits as u64,
        m,
        m - 1,
        top,
        top - 1,
    ];
    if signed {
        v.extend([top + 1, m - 2]);
    } else {
        v.push(top + 1);
    }
    v.into_iter().map(|c| c & m).collect()
}

/// Whether the code `code` of the float dtype `d` is a finite value.
fn finite_code(d: DType, code: u64) -> bool {
    let bytes = code.to_le_bytes();
    match decode(d, &bytes[..d.info().item_bytes]) {
        Val::F(x) => x.is_finite(),
        _ => false,
    }
}

/// Edge codes of a float dtype, from its fields: zeros, the smallest
/// subnormals, the largest mantissa, the smallest normal, one and its
/// neighbours, the largest finite values, infinity (or the code where it would
/// be) and the code after it, all ones; both signs where the dtype has a sign,
/// each code once. A dtype without float parameters gets `[0]`.
pub fn float_edge_codes(dtype: DType) -> Vec<u64> {
    let Some(f) = dtype.info().float else {
        return vec![0];
    };
    let (eb, mb) = (f.exponent_bits as u64, f.mantissa_bits as u64);
    let vb = eb + mb;
    let all = mask(vb as u32);
    let emax = mask(eb as u32);
    let max_finite = [all, all - 1, (emax << mb).saturating_sub(1)]
        .into_iter()
        .find(|&c| finite_code(dtype, c))
        .unwrap_or(0);
    let one = (f.bias as u64).min(emax) << mb;
    let mut mags = vec![
        0,
        1,
        2,
        mask(mb as u32),
        1 << mb,
        one,
        one + 1,
        one.saturating_sub(1 << mb),
        max_finite,
        max_finite.saturating_sub(1),
        emax << mb,
        (emax << mb) | 1,
        all,
    ];
    mags.iter_mut().for_each(|c| *c &= all);
    let mut codes = mags.clone();
    if f.signed {
        codes.extend(mags.iter().map(|c| c | (1 << vb)));
    }
    let mut seen = std::collections::BTreeSet::new();
    codes.retain(|c| seen.insert(*c));
    codes
}

/// The storage bytes of every format-derived edge element of `dtype`: bool
/// 0 and 1, [`int_edge_codes`], [`float_edge_codes`], and for a complex
/// dtype each float edge of its component as the real part, paired with
/// another edge, +0 and itself as the imaginary part.
pub fn code_edges(dtype: DType) -> Vec<Vec<u8>> {
    let info = dtype.info();
    let item = info.item_bytes;
    let to_bytes = |code: u64, width: usize| code.to_le_bytes()[..width].to_vec();
    match info.class {
        Class::Bool => vec![vec![0], vec![1]],
        Class::Int | Class::Uint => int_edge_codes(info.bits, info.class == Class::Int)
            .into_iter()
            .map(|c| to_bytes(c, item))
            .collect(),
        Class::Float => float_edge_codes(dtype)
            .into_iter()
            .map(|c| to_bytes(c, item))
            .collect(),
        Class::Pair => pair_edges(dtype),
        Class::Complex => {
            let comp = dtype.component().expect("a complex dtype");
            let half = item / 2;
            let e = float_edge_codes(comp);
            let mut out = Vec::new();
            for (i, &re) in e.iter().enumerate() {
                for im in [e[(i * 7 + 1) % e.len()], 0, re] {
                    let mut b = to_bytes(re, half);
                    b.extend(to_bytes(im, half));
                    out.push(b);
                }
            }
            out
        }
    }
}

/// Edge pairs of a pair dtype: every component edge with a zero trailing
/// part, and each finite non-zero one with +half its ulp (a tie) and −a
/// quarter of it.
fn pair_edges(d: DType) -> Vec<Vec<u8>> {
    let comp = crate::values::pair_component(d);
    let his: Vec<f64> = if comp == DType::F32 {
        F32_EDGES
            .iter()
            .map(|&b| f32::from_bits(b) as f64)
            .collect()
    } else {
        F64_EDGES.iter().map(|&b| f64::from_bits(b)).collect()
    };
    let mut out = Vec::new();
    for h in his {
        out.push(crate::values::pair_bytes(d, h, 0.0));
        if h.is_finite() && h != 0.0 {
            let ulp = crate::values::component_ulp(d, h);
            for lo in [ulp * 0.5, -ulp * 0.25] {
                if lo != 0.0 {
                    out.push(crate::values::pair_bytes(d, h, lo));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_derived_edges() {
        assert_eq!(
            int_edge_codes(8, true),
            [0, 1, 2, 3, 7, 8, 0xff, 0xfe, 0x80, 0x7f, 0x81, 0xfd]
        );
        assert_eq!(int_edge_codes(4, false).len(), 11);
        let f32s = float_edge_codes(DType::F32);
        for c in [
            0,
            0x8000_0000,
            1,
            0x0080_0000,
            0x3f80_0000,
            0x7f7f_ffff,
            0x7f80_0000,
        ] {
            assert!(f32s.contains(&c), "{c:#x}");
        }
        assert!(f32s.contains(&0xff80_0001), "a negative NaN");
        // e4m3fn: no infinity, NaN at all ones: the largest finite is 0x7e.
        let e4 = float_edge_codes(DType::E4m3fn);
        assert!(e4.contains(&0x7e) && e4.contains(&0xfe) && e4.contains(&0x7f));
        assert!(e4.iter().all(|&c| c <= 0xff));
        let seen: std::collections::BTreeSet<_> = e4.iter().collect();
        assert_eq!(seen.len(), e4.len(), "each code once");
        assert_eq!(code_edges(DType::Bool), [vec![0], vec![1]]);
        let c64 = code_edges(DType::C64);
        assert_eq!(c64.len(), 3 * f32s.len());
        assert!(c64.iter().all(|e| e.len() == 8));
    }

    #[test]
    fn curated_edges() {
        assert_eq!(int_edges(DType::U8), [0, 1, 2, 3, 7, 8, 9, 16, 254, 255]);
        assert!(int_edges(DType::I8).contains(&-128));
        let f16 = edge_elems(DType::F16);
        for bits in [0x0000u16, 0x8000, 0x7c00, 0xfc00, 0x3c00, 0x7bff, 0x0001] {
            assert!(f16.contains(&bits.to_le_bytes().to_vec()), "{bits:#06x}");
        }
        assert!(f16
            .iter()
            .any(|e| mini(DType::F16).unwrap().is_nan_code(code_of16(e))));
        assert_eq!(edge_elems(DType::C128).len(), 64);
        assert_eq!(edge_elems(DType::F32).len(), F32_EDGES.len());
    }

    fn code_of16(e: &[u8]) -> u32 {
        u16::from_le_bytes([e[0], e[1]]) as u32
    }
}
