//! The error function `erf` and the complementary error function `erfc` on
//! `f32` and `f64`.
//!
//! Below |x| = 1/2, `erf(x) = x · P(x²)` (Taylor series, the terms in x and x³
//! as double-words in `f64`) and `erfc = 1 - erf`. From 1/2 on,
//! `erfc(x) = e^(-x²) · F(x)` with `F(x) = erfc(x)·e^(x²)` a polynomial per
//! piece, fitted by Chebyshev interpolation at 160 bits. In `f64` there are 48
//! pieces (each binade from 1/2 to 32 cut in eight; the index and the local
//! variable come from the bits of `x`, the coefficients from the table in
//! `tables/erfc_f64.rs`, which `runtime/tests/tables.rs` recomputes exactly)
//! and `e^(-x²)` is evaluated from `x²` as a double-word, so `erfc` keeps its
//! relative accuracy down to its subnormal results. In `f32` (computed in
//! `f64`, rounded once) one polynomial in `1/(x + 3)` covers `[0, 10.5]`,
//! with no per-lane choice of piece: `erfc` uses it from 0 (no Taylor
//! branch), `erf = 1 - erfc` from 1/2 on, and `erfc(-x) = 2 - erfc(x)`.
//!
//! Special values: `erf(±0) = ±0`, `erf(±inf) = ±1`, `erfc(-inf) = 2`,
//! `erfc(+inf) = +0`, NaN gives NaN.

// Clamps are written as selects (NaN passes through unchanged).
#![allow(clippy::manual_clamp)]

use super::prim::*;

const LOG2E: f64 = 1.4426950408889634;

/// Per piece: c0..c11 of erfc(x)·e^(x²) in v ∈ [-1, 1], then the low part of
/// c0. Its file says exactly what the pieces and coefficients are and how they
/// were made (`runtime/tests/tables.rs` recomputes every entry).
static ERFC_F64: [[f64; 13]; 48] = include!("tables/erfc_f64.rs");

/// erfc(x)·e^(x²) on x ∈ [0, 10.5] as a polynomial in
/// v = (1/(x + 3) − ERFCX_MID)·ERFCX_SCALE ∈ [-1, 1]: c0..c14, the Chebyshev
/// interpolant (mpmath, 80 digits) at the f64 values of the two constants;
/// relative error below 2^-37.7 (for the f32 functions). The function
/// varies slowly in 1/(x + 3) (it tends to 1/(x√π)), so one piece covers
/// what five binades did in x.
const ERFCX_F32: [f64; 15] = [
    0.2654619219972814,
    0.35862291746604447,
    0.22366884999669034,
    0.10667478656440176,
    0.03716437573029415,
    0.008248284234118575,
    0.0005171317451806641,
    -0.00030280328382590097,
    -7.131803388488437e-05,
    1.148656315456892e-05,
    5.352342761598752e-06,
    -6.676585733235857e-07,
    -3.8625908337424047e-07,
    4.6241709012161125e-08,
    2.2354125733982633e-08,
];
/// (1/13.5 + 1/3)/2 and 2/(1/3 − 1/13.5): v is -1 at x = 10.5 and 1 at 0.
const ERFCX_MID: f64 = 0.2037037037037037;
const ERFCX_SCALE: f64 = 7.714285714285714;

const ERF_C0: Dd = Dd {
    hi: 1.1283791670955126,
    lo: 1.533545961316588e-17,
};
const ERF_C1: Dd = Dd {
    hi: -0.37612638903183754,
    lo: 1.3391897206030649e-17,
};
/// 2/√π · (-1)^n / (n!(2n+1)), n = 2..=13.
const ERF_TAYLOR2: [f64; 12] = [
    0.11283791670955126,
    -0.026866170645131252,
    0.005223977625442188,
    -0.0008548327023450853,
    0.00012055332981789664,
    -1.492565035840625e-05,
    1.6462114365889248e-06,
    -1.6365844691234924e-07,
    1.4807192815879218e-08,
    -1.2290555301717928e-09,
    9.422759064650411e-11,
    -6.7113668551641105e-12,
];
/// 2/√π · (-1)^n / (n!(2n+1)), n = 0..=9 (for the f32 functions).
const ERF_TAYLOR_F32: [f64; 10] = [
    1.1283791670955126,
    -0.37612638903183754,
    0.11283791670955126,
    -0.026866170645131252,
    0.005223977625442188,
    -0.0008548327023450853,
    0.00012055332981789664,
    -1.492565035840625e-05,
    1.6462114365889248e-06,
    -1.6365844691234924e-07,
];

/// The piece of x in [1/2, 32): (index, v in [-1, 1]) with x = mid + v·w/2.
#[inline(always)]
fn piece(x: f64) -> (usize, f64) {
    let b = x.to_bits();
    let i = (b >> 49) as i64 - (1022 << 3);
    let i = if i < 0 {
        0
    } else if i > 47 {
        47
    } else {
        i
    };
    let mid = f64::from_bits((b & !((1u64 << 49) - 1)) | (1u64 << 48));
    let biased = (b >> 52) as i64;
    let scale = f64::from_bits(((2050 - biased) as u64) << 52); // 2/w = 2^(4-k)
    (i as usize, (x - mid) * scale)
}

/// erf(x) for |x| < 1/2 as a double-word (relative error about 2^-62): the
/// terms in x and x³ as double-words, the rest in double.
#[inline(always)]
fn erf_small_dd(x: f64) -> Dd {
    let z = two_prod(x, x);
    let x3 = two_prod(x, z.hi);
    let x3 = fast_two_sum(x3.hi, x.mul_add(z.lo, x3.lo));
    let t1 = x3.mul(ERF_C1);
    let rest = (x3.hi * z.hi) * horner_f64(z.hi, &ERF_TAYLOR2);
    Dd::new(x).mul(ERF_C0).add(t1).add_f64(rest)
}

/// erfc(x) = m · 2^n for x in [1/2, 27.5], m a double-word (relative error
/// about 2^-57), n an integer.
#[inline(always)]
fn erfc_core_dd(x: f64) -> (Dd, f64) {
    let (i, v) = piece(x);
    let c = &ERFC_F64[if i < 48 { i } else { 47 }];
    let mut acc = c[11];
    let mut k = 11;
    while k > 1 {
        k -= 1;
        acc = acc.mul_add(v, c[k]);
    }
    let f = two_sum(c[0], acc * v);
    let f = fast_two_sum(f.hi, f.lo + c[12]);
    // e^(-x²) with x² as a double-word: -x² = n·ln2 + r.
    let sq = two_prod(x, x);
    let n = rint_f64(-sq.hi * LOG2E);
    let a = two_prod(n, LN2_DD.hi);
    let r = Dd {
        hi: -sq.hi,
        lo: -sq.lo,
    }
    .add(Dd {
        hi: -a.hi,
        lo: -a.lo,
    })
    .add_f64(-n * LN2_DD.lo);
    let q = horner_f64(r.hi, &EXP_TAIL);
    let e = Dd::new(q)
        .mul(r)
        .add_f64(0.5)
        .mul(r)
        .add_f64(1.0)
        .mul(r)
        .add_f64(1.0);
    (f.mul(e), n)
}

/// m · 2^n rounded once, also where the result is subnormal (n in
/// [-1100, 0]).
#[inline(always)]
fn scale_dd(m: Dd, n: f64) -> f64 {
    let normal = ldexp_f64(m.value(), n);
    // Subnormal results: round in a binade whose ulp is the subnormal spacing
    // (all scaled by 2^1000): z = 2^-22 + m·2^(n+1000), then remove 2^-22.
    let ns = if n > 0.0 { 0.0 } else { n };
    let sc = pow2i_f64(ns + 1000.0);
    let c = two_sum(2.384185791015625e-07, m.hi * sc);
    let z = c.hi + (c.lo + m.lo * sc);
    let sub = (z - 2.384185791015625e-07) * 9.332636185032189e-302; // 2^-1000
    if normal < 2.2250738585072014e-308 {
        sub
    } else {
        normal
    }
}

/// The error function.
///
/// Accuracy: within 1 ulp (measured 0.515 ulp on 4·10^5 samples against a
/// 200-bit reference). Special values: erf(±0) = ±0, erf(±inf) = ±1, NaN
/// gives NaN.
#[inline(always)]
pub fn erf_f64(x: f64) -> f64 {
    let ax = x.abs();
    let small = erf_small_dd(ax).value();
    let xc = if ax < 0.5 {
        0.5
    } else if ax > 6.0 {
        6.0
    } else {
        ax
    };
    let (m, n) = erfc_core_dd(xc);
    let s = pow2i_f64(n); // n ≥ -53 here
    let big = two_sum(1.0, -m.hi * s);
    let big = big.hi + (big.lo - m.lo * s);
    // Tiny |x|: x·(2/√π) rounded once, scaled up so no low part is lost.
    let tiny = scale_dd(Dd::new(ax * 1.2676506002282294e30).mul(ERF_C0), -100.0); // 2^100
    let r = if ax < 0.5 { small } else { big };
    let r = if ax < 1.0e-300 { tiny } else { r };
    let r = if ax >= 6.0 { 1.0 } else { r };
    r.copysign(x)
}

/// The complementary error function, 1 - erf(x).
///
/// Accuracy: within 1 ulp, with relative accuracy kept down to the subnormal
/// results (x up to 26.55; measured 0.555 ulp on 4·10^5 samples against a
/// 200-bit reference). Special values: erfc(-inf) = 2, erfc(+inf) = +0,
/// NaN gives NaN.
#[inline(always)]
pub fn erfc_f64(x: f64) -> f64 {
    let ax = x.abs();
    let e = erf_small_dd(x);
    let s1 = two_sum(1.0, -e.hi);
    let small = s1.hi + (s1.lo - e.lo);
    let xc = if ax < 0.5 {
        0.5
    } else if ax > 27.5 {
        27.5
    } else {
        ax
    };
    let (m, n) = erfc_core_dd(xc);
    let pos = scale_dd(m, n);
    let ns = if n < -1022.0 { -1022.0 } else { n };
    let s = pow2i_f64(ns);
    let s2 = two_sum(2.0, -m.hi * s);
    let neg = s2.hi + (s2.lo - m.lo * s);
    let r = if x > 0.0 { pos } else { neg };
    if ax < 0.5 {
        small
    } else {
        r
    }
}

/// erfc(x) for x in [0, 10.5] in f64 arithmetic (relative error about
/// 2^-36.5: the polynomial and 2^t, whose argument -x²·log2(e) is within
/// 2^-45 of exact since x² of an f32 is exact), for the f32 functions.
#[inline(always)]
fn erfc_core_f64(x: f64) -> f64 {
    let v = (1.0 / (x + 3.0) - ERFCX_MID) * ERFCX_SCALE;
    horner_f64(v, &ERFCX_F32) * exp2_core_f64(-(x * x) * LOG2E)
}

/// The error function.
///
/// Accuracy: within 1 ulp (measured 0.5001 ulp over all 2^32 inputs).
/// Special values: erf(±0) = ±0, erf(±inf) = ±1, NaN gives NaN.
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    let xd = x as f64;
    let ax = xd.abs();
    let small = ax * horner_f64(ax * ax, &ERF_TAYLOR_F32);
    // From 3.92 on erf rounds to 1 (erfc < 2^-26); the clamp keeps the
    // unused side of the select finite.
    let xc = if ax < 0.5 {
        0.5
    } else if ax > 3.999 {
        3.999
    } else {
        ax
    };
    let big = 1.0 - erfc_core_f64(xc);
    let r = if ax < 0.5 { small } else { big };
    (r as f32).copysign(x)
}

/// The complementary error function, 1 - erf(x).
///
/// Accuracy: within 1 ulp, with relative accuracy kept down to the subnormal
/// results (x up to 10.05; measured 0.5001 ulp over all 2^32 inputs).
/// Special values: erfc(-inf) = 2, erfc(+inf) = +0, NaN gives NaN.
#[inline(always)]
pub fn erfc_f32(x: f32) -> f32 {
    let xd = x as f64;
    let ax = xd.abs();
    // erfc(10.5) < 2^-160: from there on the f32 result is +0 (or 2).
    let xc = if ax > 10.5 { 10.5 } else { ax };
    let c = erfc_core_f64(xc);
    let r = if xd > 0.0 { c } else { 2.0 - c };
    r as f32
}
