//! Inverse trigonometric functions: `asin`, `acos`, `atan` and `atan2`.
//!
//! `atan` and `atan2` share one reduction: with t = |y|/|x| the argument goes to
//! one of three ranges, t ≤ tan(π/8) (u = t), tan(π/8) < t ≤ tan(3π/8)
//! (u = (|y| − |x|)/(|y| + |x|), base π/4) and t > tan(3π/8) (u = −|x|/|y|,
//! base π/2), so |u| ≤ 0.4143 and atan(t) = base + u + u·u²·g(u²) with g a
//! polynomial fitted (Chebyshev, mpmath) to (atan(√z)/√z − 1)/z. The quadrant of
//! `atan2` folds into the base (π − base) and the sign of u. `asin`/`acos` use
//! asin(a) = a + a·a²·h(a²) for a ≤ 1/2 and asin(a) = π/2 − 2·asin(√((1 − a)/2))
//! above, with h fitted to (asin(√z)/√z − 1)/z on [0, 1/4].
//!
//! `atan`, `asin` and `acos` of an `f32` compute in f32 lanes instead (16 per
//! AVX-512 vector): atan with two ranges, |x| ≤ 1 and its reciprocal, and a
//! longer polynomial in place of the second quotient (see [`atan_f32`]);
//! asin and acos with the same split as above, the root's tail from its
//! residual (see [`asin_f32`]). `atan2` of `f32` evaluates all of this in
//! `f64` and rounds once. The `f64`
//! functions carry the quotient u, the square root and the π constants as
//! double-words so that only the final addition rounds at full weight.

use super::prim::*;

// g(z) = (atan(√z)/√z − 1)/z on [0, 0.1764], lowest degree first.
const ATAN_F32: [f64; 6] = [
    -0.33333333270182913,
    0.199999741689406,
    -0.1428398689209605,
    0.11068362663299672,
    -0.0860259933043988,
    0.049919629055740426,
];
const ATAN_F64: [f64; 12] = [
    -0.3333333333333333,
    0.1999999999999974,
    -0.14285714285644108,
    0.11111111103645366,
    -0.09090908679431747,
    0.07692294263937235,
    -0.06666387505732325,
    0.058785052622537054,
    -0.05227377208228963,
    0.04537753087623414,
    -0.03421956810707781,
    0.015902155159773702,
];
const ASIN_F64: [f64; 14] = [
    0.16666666666666666,
    0.07500000000000118,
    0.044642857142551895,
    0.03038194447553234,
    0.02237215744350722,
    0.017352816540325496,
    0.01396378001220357,
    0.011566459612121669,
    0.009621842970100282,
    0.009319560794767446,
    0.0030448799094556773,
    0.019554513336123378,
    -0.01924167174674304,
    0.02961201126495512,
];

// π multiples as double-words (hi = nearest double, lo = nearest double to the rest).
const PI_HI: f64 = 3.141592653589793;
const PI_LO: f64 = 1.2246467991473532e-16;
const PI_2_HI: f64 = 1.5707963267948966;
const PI_2_LO: f64 = 6.123233995736766e-17;
const PI_4_HI: f64 = 0.7853981633974483;
const PI_4_LO: f64 = 3.061616997868383e-17;
const PI3_4_HI: f64 = 2.356194490192345;
const PI3_4_LO: f64 = 9.184850993605148e-17;

// Range limits of the atan reduction: tan(π/8), tan(3π/8).
const TAN_PI_8: f64 = 0.41421356237309503;
const TAN_3PI_8: f64 = 2.414213562373095;

/// atan(ya/xa) for ya, xa ≥ 0 finite, not both zero, evaluated in `f64` without
/// double-words, or π − atan(ya/xa) when `xneg` (the quadrant of `atan2`).
/// Relative error about 2^-33 (the polynomial for the f32 functions).
#[inline(always)]
fn atan_core_plain(ya: f64, xa: f64, xneg: bool) -> f64 {
    let t = ya / xa;
    let lo_r = t <= TAN_PI_8;
    let hi_r = t > TAN_3PI_8;
    // n/d per range; ya − xa and ya + xa are exact for inputs that are f32 values
    // whose ratio lies in the middle range.
    let n = if lo_r {
        ya
    } else if hi_r {
        -xa
    } else {
        ya - xa
    };
    let d = if lo_r {
        xa
    } else if hi_r {
        ya
    } else {
        ya + xa
    };
    let u = n / d;
    let z = u * u;
    let at = (u * z).mul_add(horner_f64(z, &ATAN_F32), u);
    let base = if lo_r {
        0.0
    } else if hi_r {
        PI_2_HI
    } else {
        PI_4_HI
    };
    let basen = if lo_r {
        PI_HI
    } else if hi_r {
        PI_2_HI
    } else {
        PI3_4_HI
    };
    if xneg {
        basen - at
    } else {
        base + at
    }
}

/// The same for `f64`: atan(ya/xa) (or π − it when `xneg`) for ya, xa ≥ 0 finite,
/// not both zero, and max(ya, xa) ≥ 2^-900 or the quotient exact; the quotient u
/// is a double-word (its remainder by one fused multiply-add) and the base a
/// double-word constant, so the result has one rounding of weight ≤ 0.5 ulp plus
/// about 2^-57 relative.
#[inline(always)]
fn atan_core_dd(ya: f64, xa: f64, xneg: bool) -> f64 {
    let t = ya / xa;
    let lo_r = t <= TAN_PI_8;
    let hi_r = t > TAN_3PI_8;
    let nm = two_sum(ya, -xa);
    let dm = two_sum(ya, xa);
    let (nh, nl) = if lo_r {
        (ya, 0.0)
    } else if hi_r {
        (-xa, 0.0)
    } else {
        (nm.hi, nm.lo)
    };
    let (dh, dl) = if lo_r {
        (xa, 0.0)
    } else if hi_r {
        (ya, 0.0)
    } else {
        (dm.hi, dm.lo)
    };
    let uh = nh / dh;
    // Remainder n − uh·d, exact in its leading part by the fused multiply-add.
    let r = ((-uh).mul_add(dh, nh) + nl) - uh * dl;
    let ul = r / dh;
    // For a tiny quotient the remainder may have been rounded (subnormal); there
    // (|u| < 2^-99) uh alone is atan(u) to far below half an ulp.
    let ul = if uh.abs() < 1.0e-30 { 0.0 } else { ul };
    let z = uh * uh;
    let p = (uh * z) * horner_f64(z, &ATAN_F64);
    // atan(uh + ul) = atan(uh) + ul/(1 + z) + O(ul²); 1/(1 + z) ≈ 1 − z + z².
    let tail = ul.mul_add(z.mul_add(z, 1.0 - z), p);
    let (bh, bl) = if lo_r {
        (0.0, 0.0)
    } else if hi_r {
        (PI_2_HI, PI_2_LO)
    } else {
        (PI_4_HI, PI_4_LO)
    };
    let (bnh, bnl) = if lo_r {
        (PI_HI, PI_LO)
    } else if hi_r {
        (PI_2_HI, PI_2_LO)
    } else {
        (PI3_4_HI, PI3_4_LO)
    };
    let (bh, bl, uh, tail) = if xneg {
        (bnh, bnl, -uh, -tail)
    } else {
        (bh, bl, uh, tail)
    };
    // |bh| ≥ |uh| in every range (or bh = 0).
    let s = fast_two_sum(bh, uh);
    s.hi + (s.lo + (bl + tail))
}

/// atan(u)/u − 1 = z·P(z − ½) with z = u², u in [0, 1], degree 8 in
/// z − ½ (centred, so that the alternating terms of the expansion at 0 do
/// not cancel and the f32 evaluation stays within about an ulp of P), f32
/// coefficients fitted one at a time after rounding the previous ones
/// (weighted minimax, numpy/mpmath): relative error of u + u·z·P below
/// 2^-27.6.
const ATAN_P_F32: [f32; 9] = [
    -0.25916048884391785,
    0.11081480979919434,
    -0.054816246032714844,
    0.02913891151547432,
    -0.016139917075634003,
    0.00916547141969204,
    -0.005609872285276651,
    0.003775455290451646,
    -0.001681655296124518,
];
/// π/2 as an f32 head and tail.
const PI_2_HI_F32: f32 = 1.5707963705062866;
const PI_2_LO_F32: f32 = -4.371139000186243e-08;

/// The arc tangent of `x`, in (−π/2, π/2), computed in f32 lanes. Max error
/// 0.85 ulp (measured over every f32, exhaustively). Odd (keeps the sign of
/// zero); atan(±∞) = ±π/2 rounded; NaN gives NaN.
///
/// For a = |x| ≤ 1, atan(a) = a + a³·P(a²); beyond, π/2 − atan(u) with
/// u = 1/a rounded and its tail (1 − u·a)·u from a fused residual, added
/// as tail/(1 + u²) (a linear fit of 1/(1 + z) is plenty: the tail is below
/// 2^-25). u³ is carried as an exact-enough pair, π/2 − u is summed exactly
/// (Dekker: π/2 > u), and the pieces join the error term before one final
/// rounding.
#[inline(always)]
pub fn atan_f32(x: f32) -> f32 {
    let a = x.abs();
    let inv = a > 1.0;
    // Clamped so that the tail below stays finite at a = ∞.
    let ac = if a > 1.0e30 { 1.0e30 } else { a };
    let y = 1.0 / ac;
    let u = if inv { y } else { a };
    let ul = if inv { (-y).mul_add(ac, 1.0) * y } else { 0.0 };
    let z = u * u;
    let p = horner_f32(z - 0.5, &ATAN_P_F32);
    let zl = u.mul_add(u, -z);
    let u3 = u * z;
    let u3l = u.mul_add(z, -u3) + u * zl;
    let t = u3.mul_add(p, u3l.mul_add(p, ul * z.mul_add(-0.5, 0.9571)));
    let base = if inv { PI_2_HI_F32 } else { 0.0 };
    let base_lo = if inv { PI_2_LO_F32 } else { 0.0 };
    let su = if inv { -u } else { u };
    let st = if inv { -t } else { t };
    let hi = base + su;
    let e = (base - hi) + su;
    // |hi| ≥ |st| in both ranges: Dekker's sum again, so that only the
    // final addition rounds at the result's weight.
    let s1 = hi + st;
    let e1 = st - (s1 - hi);
    (s1 + (e1 + (e + base_lo))).copysign(x)
}

/// The arc tangent of `x`, within 1 ulp (0.65 measured). Odd (keeps the
/// sign of zero); atan(±∞) = ±π/2 rounded; NaN gives NaN.
#[inline(always)]
pub fn atan_f64(x: f64) -> f64 {
    let a = x.abs();
    let r = atan_core_dd(a, 1.0, false);
    let r = if a == f64::INFINITY { PI_2_HI } else { r };
    r.copysign(x)
}

/// The magnitude of atan2 from C99 Annex F where a special operand decides it
/// (both operands zero, or either infinite): returns (is special, magnitude);
/// the caller applies the sign of y and lets NaN operands override.
#[inline(always)]
fn atan2_special(ya: f64, xa: f64, xneg: bool) -> (bool, f64) {
    let yinf = ya == f64::INFINITY;
    let xinf = xa == f64::INFINITY;
    let zeros = ya == 0.0 && xa == 0.0;
    let v = if yinf {
        if xinf {
            if xneg {
                PI3_4_HI
            } else {
                PI_4_HI
            }
        } else {
            PI_2_HI
        }
    } else if xneg {
        // x = −∞ with finite y, or y = ±0 with x = −0.
        PI_HI
    } else {
        0.0
    };
    (yinf || xinf || zeros, v)
}

/// atan2(y, x), the angle of the point (x, y), in [−π, π], within 0.51 ulp
/// (computed in `f64`, rounded once). Special values per C99 Annex F:
/// atan2(±0, −0) = ±π, atan2(±0, +0) = ±0, atan2(±0, x<0) = ±π,
/// atan2(±0, x>0) = ±0, atan2(y<0, ±0) = −π/2, atan2(y>0, ±0) = π/2,
/// atan2(±y, −∞) = ±π and atan2(±y, +∞) = ±0 for finite y, atan2(±∞, x) = ±π/2
/// for finite x, atan2(±∞, −∞) = ±3π/4, atan2(±∞, +∞) = ±π/4; NaN if either
/// operand is NaN. The sign of the result is the sign of y.
#[inline(always)]
pub fn atan2_f32(y: f32, x: f32) -> f32 {
    let ya = (y as f64).abs();
    let xa = (x as f64).abs();
    let xneg = x.is_sign_negative();
    let r = atan_core_plain(ya, xa, xneg);
    let (sp, v) = atan2_special(ya, xa, xneg);
    let r = if sp { v } else { r };
    let r = if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        r
    };
    (r as f32).copysign(y)
}

/// atan2(y, x) in `f64`, within 1 ulp (0.63 measured); the operands are
/// scaled by a power of two (exactly) where they are tiny or huge, so no
/// intermediate overflows or underflows harmfully. Special values as
/// [`atan2_f32`] (C99 Annex F).
#[inline(always)]
pub fn atan2_f64(y: f64, x: f64) -> f64 {
    let ya0 = y.abs();
    let xa0 = x.abs();
    let xneg = x.is_sign_negative();
    let big = if ya0 > xa0 { ya0 } else { xa0 };
    let t = ya0 / xa0;
    let mid = t > TAN_PI_8 && t <= TAN_3PI_8;
    // Up by 2^300 (exact) below 2^-900; down by 2^-4 (exact: both operands are
    // within a factor 2.5 of each other there) when |y| + |x| could overflow.
    let sc = if big < 1.0e-271 {
        2.037035976334486e90 // 2^300
    } else if big > 5.0e306 && mid {
        0.0625
    } else {
        1.0
    };
    let ya = ya0 * sc;
    let xa = xa0 * sc;
    let r = atan_core_dd(ya, xa, xneg);
    let (sp, v) = atan2_special(ya0, xa0, xneg);
    let r = if sp { v } else { r };
    let r = if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        r
    };
    r.copysign(y)
}

/// asin(w)/w − 1 = z·P(z) with z = w², w in [0, ½], degree 5, f32
/// coefficients fitted one at a time after rounding the previous ones
/// (weighted minimax, numpy/mpmath): relative error of w + w·z·P below
/// 2^-31.6.
const ASIN_P_F32: [f32; 6] = [
    0.16666659712791443,
    0.07500521838665009,
    0.04451335221529007,
    0.0318395234644413,
    0.01431217323988676,
    0.03770212084054947,
];
/// π as an f32 head and tail.
const PI_HI_F32: f32 = 3.1415927410125732;
const PI_LO_F32: f32 = -8.742278012618954e-08;

/// The reduction of asin and acos in f32 lanes, for a = |x|: w = a for
/// a ≤ ½ (`small`), else w = √((1 − a)/2) (the argument is exact, the
/// root's tail comes from its fused residual), and the rest of
/// asin(w) − w, the tail included.
#[inline(always)]
fn asin_parts_f32(a: f32, small: bool) -> (f32, f32) {
    let z = if small { a * a } else { (1.0 - a) * 0.5 };
    let w = if small { a } else { z.sqrt() };
    // (z − w²)/(2w); the tiny addend keeps w = 0 (a = 1) finite: 0·5e29.
    let wl = if small {
        0.0
    } else {
        (-w).mul_add(w, z) * (0.5 / (w + 1.0e-30))
    };
    (w, (w * z).mul_add(horner_f32(z, &ASIN_P_F32), wl))
}

/// base + k·(w + t) for an exact k·w (k = ±1 or ±2) and |base| ≥ |k·w| or
/// base = 0: Dekker's sum of the leading terms, one rounding at the end.
#[inline(always)]
fn asin_join_f32(base: f32, base_lo: f32, k: f32, w: f32, t: f32) -> f32 {
    let kw = k * w;
    let hi = base + kw;
    let e = (base - hi) + kw;
    hi + ((e + base_lo) + k * t)
}

/// The arc sine of `x`, in [−π/2, π/2], computed in f32 lanes. Max error
/// 0.63 ulp (measured over every f32, exhaustively). Odd (keeps the sign
/// of zero); asin(±1) = ±π/2 rounded; |x| > 1 and NaN give NaN.
///
/// asin(a) = a + a·z·P(z) for a ≤ ½, else π/2 − 2·asin(√((1 − a)/2)).
#[inline(always)]
pub fn asin_f32(x: f32) -> f32 {
    let a = x.abs();
    let small = a <= 0.5;
    let (w, t) = asin_parts_f32(a, small);
    let base = if small { 0.0 } else { PI_2_HI_F32 };
    let base_lo = if small { 0.0 } else { PI_2_LO_F32 };
    let k = if small { 1.0 } else { -2.0 };
    asin_join_f32(base, base_lo, k, w, t).copysign(x)
}

/// The arc cosine of `x`, in [0, π], computed in f32 lanes. Max error
/// 0.61 ulp (measured over every f32, exhaustively). acos(1) = +0,
/// acos(−1) = π rounded; |x| > 1 and NaN give NaN.
///
/// π/2 − asin(x) for |x| ≤ ½; 2·asin(w) for x > ½ and π − 2·asin(w) for
/// x < −½, w = √((1 − |x|)/2) (see [`asin_f32`]).
#[inline(always)]
pub fn acos_f32(x: f32) -> f32 {
    let a = x.abs();
    let small = a <= 0.5;
    let (w, t) = asin_parts_f32(a, small);
    let neg = x < 0.0;
    let base = if small {
        PI_2_HI_F32
    } else if neg {
        PI_HI_F32
    } else {
        0.0
    };
    let base_lo = if small {
        PI_2_LO_F32
    } else if neg {
        PI_LO_F32
    } else {
        0.0
    };
    let k = match (small, neg) {
        (true, true) => 1.0,
        (true, false) => -1.0,
        (false, true) => -2.0,
        (false, false) => 2.0,
    };
    asin_join_f32(base, base_lo, k, w, t)
}

/// Shared part of asin/acos in `f64`: for a = |x| returns (small, w, wl, q)
/// where asin(a) = w + wl + q when a ≤ 1/2 (wl = 0), and otherwise
/// asin(√((1 − a)/2)) = w + wl + q with w + wl the square root as a double-word.
#[inline(always)]
fn asin_parts_dd(a: f64) -> (bool, f64, f64, f64) {
    let small = a <= 0.5;
    // (1 − a)/2 is exact for a in [1/2, 1].
    let z = if small { a * a } else { (1.0 - a) * 0.5 };
    let s = z.sqrt();
    let sl = (-s).mul_add(s, z) / (s + s);
    let w = if small { a } else { s };
    let wl = if small || z == 0.0 { 0.0 } else { sl };
    let q = (w * z) * horner_f64(z, &ASIN_F64);
    // asin(w + wl) = asin(w) + wl/√(1 − z) + O(wl²); 1/√(1 − z) ≈ 1 + z/2 + 3z²/8.
    let wl = wl * z.mul_add(z.mul_add(0.375, 0.5), 1.0);
    (small, w, wl, q)
}

/// The arc sine of `x`, within 1 ulp (0.67 measured). Odd (keeps the sign
/// of zero); asin(±1) = ±π/2 rounded; |x| > 1 and NaN give NaN.
#[inline(always)]
pub fn asin_f64(x: f64) -> f64 {
    let a = x.abs();
    let (small, w, wl, q) = asin_parts_dd(a);
    // Large: π/2 − 2(w + wl + q) with π/2 − 2w exact as a double-word.
    let h = two_sum(PI_2_HI, -2.0 * w);
    let big = h.hi + (h.lo + (PI_2_LO - 2.0 * (wl + q)));
    let r = if small { w + q } else { big };
    r.copysign(x)
}

/// The arc cosine of `x`, within 1 ulp (0.62 measured). acos(1) = +0,
/// acos(−1) = π rounded; |x| > 1 and NaN give NaN.
#[inline(always)]
pub fn acos_f64(x: f64) -> f64 {
    let a = x.abs();
    let (small, w, wl, q) = asin_parts_dd(a);
    // Small: π/2 − (x + q·sign(x)).
    let xs = x;
    let qs = q.copysign(x);
    let h1 = two_sum(PI_2_HI, -xs);
    let r_small = h1.hi + (h1.lo + (PI_2_LO - qs));
    // x > 1/2: 2(w + wl + q), 2w exact.
    let r_pos = 2.0 * w + 2.0 * (wl + q);
    // x < −1/2: π − 2(w + wl + q).
    let h2 = two_sum(PI_HI, -2.0 * w);
    let r_neg = h2.hi + (h2.lo + (PI_LO - 2.0 * (wl + q)));
    if small {
        r_small
    } else if x > 0.0 {
        r_pos
    } else {
        r_neg
    }
}
