//! Exponentials and the functions built on them: `exp`, `exp2`, `expm1`,
//! `sinh`, `cosh`, `tanh`, `sigmoid`, and `fast_*` variants of `exp`, `tanh`
//! and `sigmoid`.
//!
//! Reduction: x = n·ln2 + r with n = rint(x·log2 e) taken from the bits of a
//! magic adder and |r| ≤ 0.3467 (Cody–Waite, the high part of ln2 has 42
//! bits so n·ln2_hi and x − n·ln2_hi are exact). `exp_f32` computes in f32
//! with its last step split exactly (8 lanes per AVX2 vector), `tanh_f32`
//! in f32 with expm1 and the quotient as exact pairs; the other
//! `f32` defaults compute in `f64` (a polynomial of relative error about
//! 2^-28.5, one rounding to `f32` at the end, so subnormal results round
//! once). The `f64` defaults
//! carry e^r as a double-word (relative error about 2^-56) and round once
//! at the end; powers of two are built from bits, the result scaled by two
//! exact halves so subnormal and overflowing results round correctly.
//! Polynomial coefficients are Chebyshev interpolants computed with mpmath.
//! All paths are branch-free: special values are handled by clamps and
//! selects.

use super::prim::*;

const LOG2E: f64 = 1.4426950408889634;
const LN2: f64 = 0.6931471805599453;
/// ln2 − LN2 (the tail of the double nearest ln2).
const LN2_TAIL: f64 = 2.3190468138462996e-17;
/// ln2 truncated to 42 bits, and the rest.
const LN2_HI: f64 = 0.6931471805598903;
const LN2_LO: f64 = 5.497923018708371e-14;

const LOG2E_F: f32 = 1.4426950216293335;
/// ln2 truncated to 16 bits, and the rest (in f32).
const LN2_HI_F: f32 = 0.693145751953125;
const LN2_LO_F: f32 = 1.428606765330187e-06;

/// e^r on [-0.3467, 0.3467], degree 6, abs error 2^-28.6.
const E32: [f64; 7] = [
    1.0,
    1.0000000377989096,
    0.5000000047221047,
    0.16666415147533203,
    0.04166635243824799,
    0.00837515695468468,
    0.001394114659780266,
];
/// expm1(r)/r on [-0.3467, 0.3467], degree 6, rel error 2^-31.8.
const EM1_32: [f64; 7] = [
    1.0,
    0.5000000047221047,
    0.16666666719112208,
    0.04166635243824799,
    0.00833329843283755,
    0.001394114659780266,
    0.00019899316337189542,
];
/// (e^r − 1 − r)/r² on [-0.3467, 0.3467], degree 10, rel error 2^-57.6.
const Q64: [f64; 11] = [
    0.5,
    0.1666666666666667,
    0.04166666666666667,
    0.00833333333332612,
    0.0013888888888883867,
    0.00019841269874873975,
    2.4801587325340162e-05,
    2.755725533255441e-06,
    2.755727379918862e-07,
    2.510524515390137e-08,
    2.0914645237001456e-09,
];
/// (e^r − 1 − r)/r², degree 9, rel error 2^-51.9 (fast f64).
const Q64F: [f64; 10] = [
    0.5000000000000001,
    0.16666666666666669,
    0.04166666666662404,
    0.008333333333330055,
    0.0013888888917258759,
    0.00019841269863088255,
    2.4801521225986432e-05,
    2.7557268406190795e-06,
    2.7620121717381933e-07,
    2.51004110820149e-08,
];
/// expm1(r)/r, degree 10, rel error 2^-55.2 (fast f64 tanh).
const EM1_64F: [f64; 11] = [
    1.0,
    0.5000000000000006,
    0.1666666666666667,
    0.04166666666657287,
    0.008333333333326158,
    0.0013888888932584156,
    0.0001984126987480027,
    2.4801504225811066e-05,
    2.7557255393871175e-06,
    2.762640767090547e-07,
    2.510522660411727e-08,
];
/// (e^r − 1 − r)/r² in f32, degree 4 (rel error 2^-22.8; 2^-26.8 on e^r).
const QF32: [f32; 5] = [
    0.5,
    0.166665768946066,
    0.0416665544984137,
    0.008363194882419041,
    0.0013926203361634341,
];
/// (e^r − 1 − r)/r² in f32, degree 5 (rel error 2^-28.4).
const QF32_5: [f32; 6] = [
    0.5000000013487226,
    0.16666666681647016,
    0.04166646471137908,
    0.00833331090172597,
    0.0013933673732931852,
    0.0001989101718430203,
];
/// expm1(r)/r in f32, degree 6, rel error 2^-31.8.
const EM1F32: [f32; 7] = [
    1.0,
    0.5000000047221047,
    0.16666666719112208,
    0.04166635243824799,
    0.00833329843283755,
    0.001394114659780266,
    0.00019899316337189542,
];

// ---------------------------------------------------------------- helpers

/// Clamp to [lo, hi]; NaN passes through.
#[inline(always)]
pub(super) fn clamp64(x: f64, lo: f64, hi: f64) -> f64 {
    let x = if x < lo { lo } else { x };
    if x > hi {
        hi
    } else {
        x
    }
}

#[inline(always)]
fn clamp32(x: f32, lo: f32, hi: f32) -> f32 {
    let x = if x < lo { lo } else { x };
    if x > hi {
        hi
    } else {
        x
    }
}

/// 2^n for an integer-valued n in [-1022, 1023], from the bits of n + MAGIC + 1023
/// (no float-to-integer conversion, which AVX2 lacks for 64-bit lanes).
#[inline(always)]
fn pow2_64(n: f64) -> f64 {
    f64::from_bits((n + (MAGIC + 1023.0)).to_bits() << 52)
}

/// x · 2^n for an integer-valued n in [-2044, 2046], one rounding (the last
/// product): both halves of the scale are normal powers of two.
#[inline(always)]
pub(super) fn scale_64(x: f64, n: f64) -> f64 {
    let h = rint_f64(n * 0.5);
    x * pow2_64(h) * pow2_64(n - h)
}

/// a + b exactly for any a, b, returned as (hi, lo).
#[inline(always)]
fn ts(a: f64, b: f64) -> (f64, f64) {
    let d = two_sum(a, b);
    (d.hi, d.lo)
}

/// Quotient of double-words a / b as a double-word (relative error ~2^-100
/// when a and b are exact; errors of a and b pass through to first order).
#[inline(always)]
fn dd_div(ah: f64, al: f64, bh: f64, bl: f64) -> (f64, f64) {
    let q0 = ah / bh;
    let rem = (-q0).mul_add(bh, ah) + (al - q0 * bl);
    (q0, rem / bh)
}

/// e^(rh + rl) as a double-word, for |rh + rl| ≤ 0.3467 and |rl| ≤ 2^-30:
/// relative error about 2^-56.
#[inline(always)]
fn exp_mant(rh: f64, rl: f64) -> (f64, f64) {
    let (r, dr) = ts(rh, rl);
    let q = horner_f64(r, &Q64);
    let r2 = r * r;
    let s = fast_two_sum(1.0, r);
    // e^(r+dr) = e^r (1 + dr) = 1 + r + r² q + dr (1 + r)
    let lo = s.lo + r2.mul_add(q, dr.mul_add(r, dr));
    let m = fast_two_sum(s.hi, lo);
    (m.hi, m.lo)
}

/// Reduction of exp: x (clamped to [-746, 711]) = n·ln2 + r; returns
/// (mantissa e^r as a double-word, n).
#[inline(always)]
pub(super) fn exp_core(x: f64) -> (f64, f64, f64) {
    let t = x.mul_add(LOG2E, MAGIC);
    let n = t - MAGIC;
    let rh = n.mul_add(-LN2_HI, x);
    let rl = n * -LN2_LO;
    let (mh, ml) = exp_mant(rh, rl);
    (mh, ml, n)
}

/// e^x − 1 as a double-word for x in [0, 45] (n ≤ 65).
#[inline(always)]
fn expm1_dd_pos(x: f64) -> (f64, f64) {
    let (mh, ml, n) = exp_core(x);
    let s = pow2_64(n);
    let (eh, el) = ts(s * mh, -1.0);
    let d = fast_two_sum(eh, el + s * ml);
    (d.hi, d.lo)
}

/// e^x in f64 for x in [-110, 100] with relative error about 2^-28.5 (the core
/// of the f32 functions).
#[inline(always)]
fn exp_for32(x: f64) -> f64 {
    let t = x.mul_add(LOG2E, MAGIC);
    let n = t - MAGIC;
    let r = n.mul_add(-LN2, x);
    let p = horner_f64(r, &E32);
    f64::from_bits(p.to_bits().wrapping_add(t.to_bits() << 52))
}

/// e^x − 1 in f64 for x in [-40, 100] with relative error about 2^-29 (the
/// core of the f32 functions). ±0 gives +0.
#[inline(always)]
fn expm1_for32(x: f64) -> f64 {
    let t = x.mul_add(LOG2E, MAGIC);
    let n = t - MAGIC;
    let r = n.mul_add(-LN2, x);
    let p = r * horner_f64(r, &EM1_32);
    let s = f64::from_bits((t.to_bits() << 52).wrapping_add(1.0f64.to_bits()));
    s.mul_add(p, s - 1.0)
}

/// e^x in f32 arithmetic for x in [-104, 89] (about 1 ulp), with correct
/// scaling into the subnormal range.
#[inline(always)]
fn exp_f32_core(x: f32) -> f32 {
    let t = x.mul_add(LOG2E_F, MAGIC_F);
    let n = t - MAGIC_F;
    let r = n.mul_add(-LN2_HI_F, x);
    let r = n.mul_add(-LN2_LO_F, r);
    let q = horner_f32(r, &QF32);
    let p = (r * r).mul_add(q, r) + 1.0;
    let ni = (t.to_bits() as i32).wrapping_sub(MAGIC_F.to_bits() as i32);
    let h = ni >> 1;
    let s1 = f32::from_bits(((h + 127) as u32) << 23);
    let s2 = f32::from_bits(((ni - h + 127) as u32) << 23);
    p * s1 * s2
}

/// e^x in f64 without double-word steps, for x clamped to [-746, 711]
/// (about 1 ulp).
#[inline(always)]
fn exp_f64_fast_core(x: f64) -> f64 {
    let t = x.mul_add(LOG2E, MAGIC);
    let n = t - MAGIC;
    let r = n.mul_add(-LN2_HI, x);
    let r = n.mul_add(-LN2_LO, r);
    let q = horner_f64(r, &Q64F);
    let p = (r * r).mul_add(q, r) + 1.0;
    scale_64(p, n)
}

// ---------------------------------------------------------------- exp

/// e^x, in f32 arithmetic (8 lanes per AVX2 vector): Cody–Waite reduction
/// with n·ln2_hi exact, e^r = (1 + r) + (r² q(r)) with 1 + r split exactly
/// so the result is rounded once, and the scale 2^n applied in two exact
/// halves (subnormal results round once more). Max error 0.8 ulp over all
/// f32 inputs (verified exhaustively). exp(±0) = 1, exp(-inf) = +0,
/// exp(+inf) = +inf, exp(NaN) = NaN; overflows to +inf above 88.72284,
/// underflows through the subnormals to +0.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    let x = clamp32(x, -104.0, 89.0);
    let t = x.mul_add(LOG2E_F, MAGIC_F);
    let n = t - MAGIC_F;
    let r = n.mul_add(-LN2_HI_F, x); // exact
    let r = n.mul_add(-LN2_LO_F, r);
    let q = horner_f32(r, &QF32_5);
    let sh = 1.0 + r;
    let sl = r - (sh - 1.0); // exact: |1| ≥ |r|
    let p = sh + (r * r).mul_add(q, sl);
    let ni = (t.to_bits() as i32).wrapping_sub(MAGIC_F.to_bits() as i32);
    let h = ni >> 1;
    let s1 = f32::from_bits(((h + 127) as u32) << 23);
    let s2 = f32::from_bits(((ni - h + 127) as u32) << 23);
    p * s1 * s2
}

/// e^x. Max error < 1 ulp (measured 0.66 ulp; double-word mantissa, one
/// rounding; subnormal results one extra rounding of at most half an ulp).
/// exp(±0) = 1, exp(-inf) = +0, exp(+inf) = +inf, exp(NaN) = NaN, overflow to
/// +inf above 709.7827, underflow through the subnormals to +0.
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    let x = clamp64(x, -746.0, 711.0);
    let (mh, ml, n) = exp_core(x);
    scale_64(mh + ml, n)
}

/// ln 2 as an f32 head and tail (exp2).
const LN2_F32_HI: f32 = 0.6931471824645996;
const LN2_F32_LO: f32 = -1.9046542121259336e-09;

/// 2^x, computed in f32 lanes (16 per AVX-512 vector). Max error 0.78 ulp
/// (measured over every f32, exhaustively; the worst are subnormal results,
/// which round once more); exact at integers. exp2(±0) = 1, exp2(−∞) = +0,
/// exp2(+∞) = +∞, exp2(NaN) = NaN.
///
/// x = n + f with n = rint(x) from a magic adder and f = x − n exact; r =
/// f·ln2 as an exact pair (a fused residual and the tail of ln2), then as
/// [`exp_f32`]: e^r = (1 + r) + r²·q(r) with 1 + r split exactly, the scale
/// 2^n in two exact halves.
#[inline(always)]
pub fn exp2_f32(x: f32) -> f32 {
    let x = clamp32(x, -151.0, 129.0);
    let t = x + MAGIC_F;
    let n = t - MAGIC_F;
    let f = x - n; // exact, |f| ≤ 1/2
    let r = f * LN2_F32_HI;
    let rl = f.mul_add(LN2_F32_HI, -r) + f * LN2_F32_LO;
    let q = horner_f32(r, &QF32_5);
    let sh = 1.0 + r;
    let sl = r - (sh - 1.0); // exact: |1| ≥ |r|
    let p = sh + ((r * r).mul_add(q, sl) + rl);
    let ni = (t.to_bits() as i32).wrapping_sub(MAGIC_F.to_bits() as i32);
    let h = ni >> 1;
    let s1 = f32::from_bits(((h + 127) as u32) << 23);
    let s2 = f32::from_bits(((ni - h + 127) as u32) << 23);
    p * s1 * s2
}

/// 2^x. Max error < 1 ulp (measured 0.67 ulp; double-word mantissa). exp2 of an integer is
/// exact; exp2(±0) = 1, exp2(-inf) = +0, exp2(+inf) = +inf, exp2(NaN) = NaN;
/// overflow to +inf at 1024, subnormal results rounded once.
#[inline(always)]
pub fn exp2_f64(x: f64) -> f64 {
    let x = clamp64(x, -1076.0, 1025.0);
    let n = rint_f64(x);
    let f = x - n;
    let rh = f * LN2;
    let rl = f.mul_add(LN2, -rh) + f * LN2_TAIL;
    let (mh, ml) = exp_mant(rh, rl);
    scale_64(mh + ml, n)
}

/// e^x − 1. Max error 0.52 ulp (computed in f64). expm1(±0) = ±0,
/// expm1(-inf) = -1, expm1(+inf) = +inf, expm1(NaN) = NaN; tiny x give x.
#[inline(always)]
pub fn expm1_f32(x: f32) -> f32 {
    let xd = clamp64(x as f64, -40.0, 90.0);
    let v = expm1_for32(xd) as f32;
    if x == 0.0 {
        x
    } else {
        v
    }
}

/// e^x − 1. Max error < 1 ulp (measured 0.80 ulp; double-word). expm1(±0) = ±0 (and x for
/// |x| < 2^-54), expm1(-inf) = -1, expm1(+inf) = +inf, expm1(NaN) = NaN,
/// overflow to +inf above 709.7827.
#[inline(always)]
pub fn expm1_f64(x: f64) -> f64 {
    let xc = clamp64(x, -40.0, 710.0);
    let (mh, ml, n) = exp_core(xc);
    // (2^n M − 1) / 4 in double-word, scaled back at the end so n = 1024 works.
    let s = pow2_64(n - 2.0);
    let (eh, el) = ts(s * mh, -0.25);
    let v = eh + (el + s * ml);
    let v = v * 4.0;
    if x.abs() < 5.551115123125783e-17 {
        x
    } else {
        v
    }
}

// ---------------------------------------------------------------- sigmoid

/// 1/(1 + e^-x). Max error 0.51 ulp (computed in f64). sigmoid(-inf) = +0,
/// sigmoid(+inf) = 1, sigmoid(NaN) = NaN, sigmoid(±0) = 0.5; results for
/// x < -87.3 are subnormal, rounded once.
#[inline(always)]
pub fn sigmoid_f32(x: f32) -> f32 {
    let xd = x as f64;
    let a = clamp64(-xd.abs(), -105.0, 0.0);
    let e = exp_for32(a);
    let num = if xd >= 0.0 { 1.0 } else { e };
    (num / (1.0 + e)) as f32
}

/// 1/(1 + e^-x). Max error < 1 ulp (measured 0.66 ulp; double-word e^-|x|
/// and quotient).
/// sigmoid(-inf) = +0, sigmoid(+inf) = 1, sigmoid(NaN) = NaN, sigmoid(±0) =
/// 0.5; subnormal results (x < -708.4) rounded once more at most.
#[inline(always)]
pub fn sigmoid_f64(x: f64) -> f64 {
    let a = clamp64(-x.abs(), -746.0, 0.0);
    let (mh, ml, n) = exp_core(a);
    // E = e^-|x| (scale floored at 2^-200, below which 1 + E = 1 anyway)
    let sc = pow2_64(if n < -200.0 { -200.0 } else { n });
    let d = fast_two_sum(1.0, sc * mh);
    let dl = d.lo + sc * ml;
    let pos = x >= 0.0;
    let (nh, nl) = if pos { (1.0, 0.0) } else { (mh, ml) };
    let (q0, q1) = dd_div(nh, nl, d.hi, dl);
    let v = q0 + q1;
    if pos {
        v
    } else {
        scale_64(v, n)
    }
}

// ---------------------------------------------------------------- hyperbolic

/// tanh x, computed in f32 lanes (16 per AVX-512 vector). Max error 0.77
/// ulp (measured over every f32, exhaustively). Odd (tanh(±0) = ±0),
/// tanh(±inf) = ±1, tanh(NaN) = NaN.
///
/// E/(E + 2) with E = expm1(2a), a = |x| clamped to 9.5 (beyond, the result
/// rounds to 1): 2a = n·ln2 + r with n·LN2_HI exact, so r is exact and the
/// tail −n·LN2_LO joins the polynomial term; E = (2^n − 1) + 2^n·r +
/// 2^n·(r²·q(r) + …) is summed exactly into a pair (both sums are Dekker's,
/// their larger term first); E + 2 is a pair too; the quotient's head comes
/// from one reciprocal and its tail from the fused residual, divided by the
/// same reciprocal. One rounding at the end.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let a = clamp32(x.abs(), 0.0, 9.5);
    let y = a + a;
    let t = y.mul_add(LOG2E_F, MAGIC_F);
    let n = t - MAGIC_F;
    let r = n.mul_add(-LN2_HI_F, y); // exact
    let rl = n * -LN2_LO_F;
    let q = horner_f32(r, &QF32_5);
    let em1 = (r * r).mul_add(q, r);
    // expm1(r + rl) − r = r²·q + rl·e^r
    let tail = (r * r).mul_add(q, rl * (1.0 + em1));
    let s = f32::from_bits((t.to_bits() << 23).wrapping_add(1.0f32.to_bits()));
    let sm1 = s - 1.0;
    let sr = s * r;
    let e1 = sm1 + sr;
    let st = s.mul_add(tail, (sm1 - e1) + sr);
    let eh = e1 + st;
    let el = (e1 - eh) + st;
    let d = eh + 2.0;
    let dl = if eh > 2.0 {
        (eh - d) + 2.0
    } else {
        (2.0 - d) + eh
    } + el;
    let w = 1.0 / d;
    let vh = eh * w;
    let res = (-vh).mul_add(dl, (-vh).mul_add(d, eh) + el);
    res.mul_add(w, vh).copysign(x)
}

/// tanh x. Max error < 1 ulp (measured 0.67 ulp; E/(E+2) with E = expm1(2|x|) as a
/// double-word). Odd (tanh(±0) = ±0, tanh x = x for |x| < 2^-27),
/// tanh(±inf) = ±1, tanh(NaN) = NaN.
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    let ax = x.abs();
    let a = clamp64(ax, 0.0, 20.0);
    let (eh, el) = expm1_dd_pos(2.0 * a);
    let (dh, dl) = ts(eh, 2.0);
    let (q0, q1) = dd_div(eh, el, dh, dl + el);
    let v = (q0 + q1).copysign(x);
    if ax < 7.450580596923828e-9 {
        x
    } else {
        v
    }
}

/// cosh r on |r| ≤ 0.3467 as 1 + r²·Q(r²), Q of degree 2 interpolating
/// (cosh r − 1)/r² at Chebyshev nodes of r² (mpmath's chebyfit): relative
/// error below 2^-32.6 (3000 points), some 2^-8.6 of an f32 ulp; the
/// leading 1 is exact, so cosh 0 = 1.
const COSH_R: [f64; 4] = [
    1.0,
    0.5000000013487226,
    0.04166646471137908,
    0.0013933673732931852,
];
/// sinh(r)/r on |r| ≤ 0.3467 as 1 + r²·S(r²), S of degree 2 fitted as
/// [`COSH_R`]'s Q: relative error below 2^-35.7.
const SINH_R: [f64; 4] = [
    1.0,
    0.16666666681647016,
    0.00833331090172597,
    0.0001989101718430203,
];

/// The parts of e^a and e^-a for the f32 hyperbolic functions, in f64 for
/// a in [0, 90] (or NaN): a = n·ln2 + r with |r| ≤ 0.3467, and
/// (cosh r, sinh r, 2^(n−1), 2^(−n−1)), so that
/// sinh a = (2^(n−1) − 2^(−n−1))·cosh r + (2^(n−1) + 2^(−n−1))·sinh r and
/// cosh a the same with the two factors exchanged: no division, and a
/// bounded cancellation (at n = 0 the first factor of sinh is exactly 0;
/// from n = 1 on, the sinh r term is at most 0.6 of the cosh r term, so the
/// sum is at least 0.4 of its larger term and the parts' relative errors
/// grow at most 2.5-fold, at n = 1 with r < 0). cosh r is within 2^-32.6
/// relative and sinh r within 2^-35.7 ([`COSH_R`], [`SINH_R`]).
#[inline(always)]
fn hyp_parts_for32(a: f64) -> (f64, f64, f64, f64) {
    let t = a.mul_add(LOG2E, MAGIC);
    let n = t - MAGIC;
    let r = n.mul_add(-LN2, a);
    let z = r * r;
    let c = horner_f64(z, &COSH_R);
    let s = r * horner_f64(z, &SINH_R);
    // n in the low bits of t, moved into the exponent field: 2^(n−1) and
    // 2^(−n−1) (n ≤ 130, so both are normal).
    let k = t.to_bits() << 52;
    let half = 0.5f64.to_bits();
    let up = f64::from_bits(half.wrapping_add(k));
    let down = f64::from_bits(half.wrapping_sub(k));
    (c, s, up, down)
}

/// sinh x. Max error 0.5037 ulp (measured over every f32, exhaustively;
/// computed in f64 from the parts of [`hyp_parts_for32`], one rounding to
/// f32 at the end). Odd (sinh(±0) = ±0), sinh(±inf) = ±inf,
/// sinh(NaN) = NaN, overflow to ±inf above 89.4159.
#[inline(always)]
pub fn sinh_f32(x: f32) -> f32 {
    let a = clamp64((x as f64).abs(), 0.0, 90.0);
    let (c, s, up, down) = hyp_parts_for32(a);
    ((up - down).mul_add(c, (up + down) * s) as f32).copysign(x)
}

/// sinh x. Max error < 1 ulp (measured 0.71 ulp; (E + E/(E+1))/2 with E = expm1|x| as a
/// double-word for |x| ≤ 22, e^|x|/2 above). Odd (sinh(±0) = ±0, sinh x = x
/// for |x| < 2^-27), sinh(±inf) = ±inf, sinh(NaN) = NaN, overflow to ±inf
/// above 710.4758.
#[inline(always)]
pub fn sinh_f64(x: f64) -> f64 {
    let ax = x.abs();
    let a = clamp64(ax, 0.0, 711.0);
    let (mh, ml, n) = exp_core(a);
    // large: e^|x| / 2
    let big = scale_64(mh + ml, n - 1.0);
    // small: E = 2^n M − 1 (n ≤ 32 where used)
    let ns = if n > 40.0 { 40.0 } else { n };
    let s = pow2_64(ns);
    let (eh, el) = ts(s * mh, -1.0);
    let e = fast_two_sum(eh, el + s * ml);
    let (dh, dl) = ts(e.hi, 1.0);
    let (q0, q1) = dd_div(e.hi, e.lo, dh, dl + e.lo);
    let (sh, sl) = ts(e.hi, q0);
    let small = 0.5 * (sh + (sl + (e.lo + q1)));
    let v = if a > 22.0 { big } else { small };
    let v = v.copysign(x);
    if ax < 7.450580596923828e-9 {
        x
    } else {
        v
    }
}

/// cosh x. Max error 0.5025 ulp (measured over every f32, exhaustively;
/// computed in f64 from the parts of [`hyp_parts_for32`], one rounding to
/// f32 at the end). cosh(±0) = 1, cosh(±inf) = +inf, cosh(NaN) = NaN,
/// overflow to +inf above 89.4159.
#[inline(always)]
pub fn cosh_f32(x: f32) -> f32 {
    let a = clamp64((x as f64).abs(), 0.0, 90.0);
    let (c, s, up, down) = hyp_parts_for32(a);
    (up + down).mul_add(c, (up - down) * s) as f32
}

/// cosh x. Max error < 1 ulp (measured 0.58 ulp; e^|x|/2 as a double-word plus e^-|x|/2 by a
/// corrected division, for |x| ≤ 22; e^|x|/2 above). cosh(±0) = 1,
/// cosh(±inf) = +inf, cosh(NaN) = NaN, overflow to +inf above 710.4758.
#[inline(always)]
pub fn cosh_f64(x: f64) -> f64 {
    let a = clamp64(x.abs(), 0.0, 711.0);
    let (mh, ml, n) = exp_core(a);
    let big = scale_64(mh + ml, n - 1.0);
    let ns = if n > 40.0 { 40.0 } else { n };
    let s = pow2_64(ns - 1.0);
    let (ph, pl) = (s * mh, s * ml);
    let (i0, i1) = dd_div(0.25, 0.0, ph, pl);
    let (sh, sl) = ts(ph, i0);
    let small = sh + (sl + (pl + i1));
    if a > 22.0 {
        big
    } else {
        small
    }
}

// ---------------------------------------------------------------- fast

/// e^x in f32 arithmetic, as [`exp_f32`] without its exact split of the
/// last step and with a shorter polynomial. Max error 1.5 ulp (including
/// subnormal results, scaled in two exact halves).
/// Special values as [`exp_f32`].
#[inline(always)]
pub fn fast_exp_f32(x: f32) -> f32 {
    exp_f32_core(clamp32(x, -104.0, 89.0))
}

/// e^x without the double-word steps of [`exp_f64`]. Max error 1.5 ulp
/// (measured 1.0 ulp).
/// Special values as [`exp_f64`].
#[inline(always)]
pub fn fast_exp_f64(x: f64) -> f64 {
    exp_f64_fast_core(clamp64(x, -746.0, 711.0))
}

/// tanh x in f32 arithmetic as E/(E+2), E = expm1(2|x|), the rounding of
/// E+2 corrected (by v·dl·(1 − v)/2, since 1/(E + 2) = (1 − v)/2). Max
/// error 3 ulp.
/// Special values as [`tanh_f32`].
#[inline(always)]
pub fn fast_tanh_f32(x: f32) -> f32 {
    let y = 2.0 * clamp32(x.abs(), 0.0, 10.0);
    let t = y.mul_add(LOG2E_F, MAGIC_F);
    let n = t - MAGIC_F;
    let r = n.mul_add(-LN2_HI_F, y);
    let r = n.mul_add(-LN2_LO_F, r);
    let p = r * horner_f32(r, &EM1F32);
    let s = f32::from_bits((t.to_bits() << 23).wrapping_add(1.0f32.to_bits()));
    let e = s.mul_add(p, s - 1.0);
    // E/(E+2) with the rounding error of E+2 corrected
    let d = e + 2.0;
    let dl = if e > 2.0 {
        (e - d) + 2.0
    } else {
        (2.0 - d) + e
    };
    let v = e / d;
    // v·dl/d with 1/d = (1 − v)/2: one division instead of two.
    (v - (v * dl) * ((1.0 - v) * 0.5)).copysign(x)
}

/// tanh x as E/(E+2), E = expm1(2|x|) without double-word steps. Max error
/// 3 ulp. Special values as [`tanh_f64`].
#[inline(always)]
pub fn fast_tanh_f64(x: f64) -> f64 {
    let y = 2.0 * clamp64(x.abs(), 0.0, 20.0);
    let t = y.mul_add(LOG2E, MAGIC);
    let n = t - MAGIC;
    let r = n.mul_add(-LN2_HI, y);
    let r = n.mul_add(-LN2_LO, r);
    let p = r * horner_f64(r, &EM1_64F);
    let s = f64::from_bits((t.to_bits() << 52).wrapping_add(1.0f64.to_bits()));
    let e = s.mul_add(p, s - 1.0);
    (e / (e + 2.0)).copysign(x)
}

/// 1/(1 + e^-x) in f32 arithmetic. Max error 2.5 ulp. Special values as
/// [`sigmoid_f32`].
#[inline(always)]
pub fn fast_sigmoid_f32(x: f32) -> f32 {
    let e = exp_f32_core(clamp32(-x.abs(), -104.0, 0.0));
    let num = if x >= 0.0 { 1.0 } else { e };
    num / (1.0 + e)
}

/// 1/(1 + e^-x) without double-word steps. Max error 2.5 ulp. Special values
/// as [`sigmoid_f64`].
#[inline(always)]
pub fn fast_sigmoid_f64(x: f64) -> f64 {
    let e = exp_f64_fast_core(clamp64(-x.abs(), -746.0, 0.0));
    let num = if x >= 0.0 { 1.0 } else { e };
    num / (1.0 + e)
}
