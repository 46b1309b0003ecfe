//! Sine, cosine and tangent on `f32` and `f64`, with the argument reduced
//! correctly over the whole finite range.
//!
//! The table reduction (both widths, one branch-free path for every finite
//! input; the shorter reductions below take the f32 arguments of moderate
//! size): write
//! x = m·2^e (m an integer). Only x·(2/π) modulo 4 matters, so the bits of 2/π
//! with weight ≥ 2^(2−e) (which give multiples of 4) are dropped: a table indexed
//! by the biased exponent holds A(e) = 2/π mod 2^(2−e), split into 53-bit parts
//! (Payne–Hanek with a per-exponent table; the vector tiers read it by gathers).
//! The two tables are data files, `tables/pio2_f32.rs` and
//! `tables/pio2_f64.rs`, whose headers say exactly what they hold and how they
//! are made; `runtime/tests/tables.rs` derives every entry from π.
//! The products x·a_i are formed exactly with fused multiply-adds, the integer
//! part is removed by adder rounding, and the fraction is summed with error-free
//! transformations, so the reduced argument is accurate to far below one ulp
//! even for the inputs nearest a multiple of π/2.
//!
//! The f32 sine and cosine up to |x| = [`LANES_LIMIT_F32`] (2^16) stay in
//! f32 lanes, 16 per AVX-512 vector: a three-part Cody–Waite reduction (n·π/2
//! subtracted in three f32 parts, the first exactly, the second by an exact
//! product and Knuth's two-sum) leaves the remainder as an f32 pair, and
//! compensated polynomials round once. Beyond that limit they evaluate in
//! `f64` after the table reduction above and round once. The f32 tangent
//! evaluates in `f64` and rounds once, after a two-part Cody–Waite reduction
//! below 2^25 and the table reduction beyond. `f64` functions carry the reduced argument
//! as a double-word and evaluate the polynomials so that the final result has
//! one rounding plus a small error.

use super::prim::*;

const PIO2: f64 = f64::from_bits(0x3ff921fb54442d18);
const PIO2_LO: f64 = f64::from_bits(0x3c91a62633145c07);

/// Whether [`tan_f32`] takes its near path ([`tan_near_f32`]) for `x`, so
/// that `tan_f32_on::<true>` gives its bits: |x| below 2^25, or not finite
/// (whose results do not depend on the reduction). Also the test of the
/// sine's and cosine's middle forms ([`sin_f32_mid`] and so on): below 2^25
/// their table index is 0, and non-finite arguments take their f32 lanes.
#[inline(always)]
pub fn fits_small_f32(x: f32) -> bool {
    !(x.abs() >= 33554432.0 && x.abs() < f32::INFINITY)
}

/// As [`fits_small_f32`] for f64: |x| below 2^53 (biased exponent at most
/// 1076, where the table index is 0), or not finite.
#[inline(always)]
pub fn fits_small_f64(x: f64) -> bool {
    !(x.abs() >= 9007199254740992.0 && x.abs() < f64::INFINITY)
}

/// Exact-ish x·(2/π) mod 4 pieces for an f32 x: (h, l, m) with
/// h + l = x·a0 exactly and m ≈ x·a1, where a0 + a1 = 2/π mod 2^(2−e) to 106
/// bits (the table entry of x's exponent). |h| < 2^26.
///
/// With `FIRST`, the table's first entry is taken as constants: the same
/// values, so the same bits, for every x below 2^25 in magnitude (whose
/// entry index is 0), and no load that a vector loop would gather.
#[inline(always)]
fn pio2_prod_f32<const FIRST: bool>(x: f32) -> (f64, f64, f64) {
    let i = if FIRST {
        0
    } else {
        let be = ((x.to_bits() >> 23) & 0xff) as usize;
        let i = be.saturating_sub(151);
        if i > 104 {
            104
        } else {
            i
        }
    };
    let (a0, a1) = (
        f64::from_bits(PIO2_TAB_F32[2 * i]),
        f64::from_bits(PIO2_TAB_F32[2 * i + 1]),
    );
    let xd = x as f64;
    let h = xd * a0;
    let l = xd.mul_add(a0, -h);
    (h, l, xd * a1)
}

/// The largest |x| whose f32 sine and cosine take the f32-lane path
/// ([`sin_lanes_f32`]); beyond it, the f64 path.
pub const LANES_LIMIT_F32: f32 = 65536.0;

// The reduction's exactness at the limit: n = x·(2/π) rounded stays below
// 2^22 (MAGIC_F's range), and |x − n·PIO2_F1| ≤ π/4·(1 + 2^-8) + |n|·2^-24 < 1
// (see `reduce_lanes_f32`). Its accuracy (2^-33.8 relative, 0.7584 ulp for
// the sine) was measured up to 2^16 only: a larger limit needs the sweeps
// of every f32 again.
const _: () = assert!(LANES_LIMIT_F32 * INV_PIO2_F + 1.0 < 4194304.0);
const _: () = assert!(0.7885 + (LANES_LIMIT_F32 * INV_PIO2_F + 1.0) * 5.96e-8 < 1.0);

/// Whether [`sin_f32`] and [`cos_f32`] (and the fast forms) take their f32
/// lanes for `x`, so that the `_on::<true>` forms give their bits: |x| at
/// most [`LANES_LIMIT_F32`], or not finite (the lanes give NaN there).
#[inline(always)]
pub fn fits_lanes_f32(x: f32) -> bool {
    x.abs() <= LANES_LIMIT_F32 || !x.is_finite()
}

/// 2/π rounded to f32.
const INV_PIO2_F: f32 = f32::from_bits(0x3f22_f983);
/// π/2 as three f32 parts: PIO2_F1 = π/2 rounded to f32, PIO2_F2 the
/// remainder rounded, PIO2_F3 the rest rounded (their sum within 2^-76 of
/// π/2).
const PIO2_F1: f32 = f32::from_bits(0x3fc9_0fdb);
const PIO2_F2: f32 = f32::from_bits(0xb33b_bd2e);
const PIO2_F3: f32 = f32::from_bits(0xa6f7_2ced);

/// (sin r − r)/r³ ≈ S(r²) on |r| ≤ 0.79: degree 3, mpmath's `chebyfit`,
/// coefficients rounded to f32; the sine it gives is within 2^-28.1
/// (relative) of sin r.
const SIN_F: [f32; 4] = [
    -0.1666666716337204,
    0.008333331905305386,
    -0.00019840059394482523,
    2.724633304751478e-06,
];
/// The fast forms' S: degree 2, within 2^-26.2.
const SIN_FF: [f32; 3] = [
    -0.166666641831398,
    0.008332734927535057,
    -0.0001958493230631575,
];
/// (cos r − 1 + r²/2)/r⁴ ≈ C(r²) on |r| ≤ 0.79: degree 2, fitted as
/// [`SIN_F`]; the cosine it gives is within 2^-30.0 of cos r.
const COS_F: [f32; 3] = [
    0.0416666641831398,
    -0.001388828968629241,
    2.454497735016048e-05,
];

/// x = n·π/2 + rh + rl for |x| ≤ [`LANES_LIMIT_F32`], in f32 alone: returns
/// the low bits of n (two's complement) and the pair (rh, rl), |rh + rl| ≤
/// 0.789, within |n|·2^-71 + 2^-47·|rh| of the exact remainder (the roundings
/// of rl's two operations grow with n; the worst relative error over every
/// argument near a multiple of π/2 is 2^-33.8).
///
/// n = x·INV_PIO2_F rounded (|n| < 2^16). x − n·PIO2_F1 is exact: for n = 0
/// it is x; otherwise |x| > π/4, so x and n·PIO2_F1 are multiples of 2^-24
/// and their difference is below 1. n·PIO2_F2 is split
/// exactly by a fused multiply-add and subtracted by Knuth's two-sum; n·PIO2_F3
/// and the two error terms form rl.
#[inline(always)]
fn reduce_lanes_f32(x: f32) -> (u32, f32, f32) {
    let t = x.mul_add(INV_PIO2_F, MAGIC_F);
    let n = t - MAGIC_F;
    let a = n.mul_add(-PIO2_F1, x); // exact
    let p = n * PIO2_F2;
    let pe = n.mul_add(PIO2_F2, -p); // exact: n·PIO2_F2 = p + pe
    let rh = a - p;
    let bb = rh - a;
    let e = (a - (rh - bb)) + (-p - bb); // exact: a − p = rh + e
    let rl = n.mul_add(-PIO2_F3, e - pe);
    (t.to_bits(), rh, rl)
}

/// The reduced argument's sine and cosine in f32 lanes: returns (q, s, c)
/// with s ≈ sin r and c ≈ cos r, each a compensated sum rounded once, q the
/// low bits of n (x = n·π/2 + r).
///
/// sin r = rh + (rh·g·S(g) + rl·(1 − g/2)), g = rh²; cos r = w + (((1 − w)
/// − h) − (hl + rh·rl) + g²·C(g)), where h + hl = rh²/2 exactly and w = 1 −
/// h (its rounding error recovered exactly). `FAST` takes the shorter S.
#[inline(always)]
fn lanes_parts<const FAST: bool>(x: f32) -> (u32, f32, f32) {
    let (q, rh, rl) = reduce_lanes_f32(x);
    let g = rh * rh;
    let sp = if FAST {
        horner_f32(g, &SIN_FF)
    } else {
        horner_f32(g, &SIN_F)
    };
    let st = rh.mul_add(g * sp, rl * (-0.5f32).mul_add(g, 1.0));
    let h = 0.5 * g;
    let hl = (0.5 * rh).mul_add(rh, -h);
    let w = 1.0 - h;
    let cp = horner_f32(g, &COS_F);
    let ct = (g * g).mul_add(cp, ((1.0 - w) - h) - rh.mul_add(rl, hl));
    (q, rh + st, w + ct)
}

/// The special values of the f32-lane functions: `v` for finite x, except
/// ±0 itself where `keep_zero` (the sine); NaN for ±∞ and NaN.
#[inline(always)]
fn fix_lanes_f32(x: f32, v: f32, keep_zero: bool) -> f32 {
    let v = if keep_zero && x == 0.0 { x } else { v };
    if x.abs() < f32::INFINITY {
        v
    } else {
        f32::NAN
    }
}

/// sin(x) (`shift` 0) or cos(x) (`shift` 1, the sine a quadrant on) for
/// |x| ≤ [`LANES_LIMIT_F32`], in f32 lanes (16 per AVX-512 vector): both
/// values of [`lanes_parts`] are formed, and the quadrant picks one and its
/// sign.
#[inline(always)]
fn sin_lanes_f32<const FAST: bool>(x: f32, shift: u32) -> f32 {
    let (q, sh, ch) = lanes_parts::<FAST>(x);
    let q = q.wrapping_add(shift);
    let v = if q & 1 == 0 { sh } else { ch };
    let v = f32::from_bits(v.to_bits() ^ ((q & 2) << 30));
    fix_lanes_f32(x, v, shift == 0)
}

// sin(r) = r + r^3 * P(r^2), |r| <= pi/2 + 2^-20: P of degree 4 in r^2
// interpolating (sin r − r)/r^3 at Chebyshev nodes of r^2 (mpmath's
// chebyfit), relative error of the sum below 2^-33.1 (3000 points), some
// 2^-9 of an f32 ulp.
const SIN_W: [f64; 5] = [
    -0.1666666666388122,
    0.008333332768750857,
    -0.00019841086560817362,
    2.753646351256283e-06,
    -2.4080189275224565e-08,
];
// f64: sin(r) = r + r^3 * P(r^2), |r| <= pi/4 + 2^-20, |error of P| < 2^-56.
const SIN_D: [f64; 7] = [
    -0.16666666666666666,
    0.008333333333333331,
    -0.00019841269841265065,
    2.755731921933912e-06,
    -2.505210623243192e-08,
    1.6058531616504608e-10,
    -7.586696971425154e-13,
];
// f64: cos(r) = 1 - r^2/2 + r^4 * Q(r^2), |r| <= pi/4 + 2^-20, |error| < 2^-58.
const COS_D: [f64; 7] = [
    0.041666666666666664,
    -0.0013888888888888887,
    2.4801587301584645e-05,
    -2.75573192214028e-07,
    2.087675579107172e-09,
    -1.1470460886230275e-11,
    4.74587182071329e-14,
];

/// Sine, f32. Max error 0.7584 ulp (measured on all 2^32 inputs; the
/// f32-lane path up to [`LANES_LIMIT_F32`], the f64 one beyond).
/// sin(±0) = ±0, sin(±inf) = NaN, NaN → NaN.
#[inline(always)]
pub fn sin_f32(x: f32) -> f32 {
    sin_f32_on::<false>(x)
}

/// [`sin_f32`] on its f32 lanes alone (`SMALL`): the same bits wherever
/// [`fits_lanes_f32`] holds.
#[inline(always)]
pub fn sin_f32_on<const SMALL: bool>(x: f32) -> f32 {
    sincos_f32_with::<SMALL, false, false, false>(x)
}

/// [`sin_f32`] without table loads: both of its paths, the f64 one with its
/// reduction's first table entry as constants. The same bits wherever
/// [`fits_small_f32`] holds (|x| below 2^25, or not finite), and a vector loop runs it
/// without gathers: the form for arguments on both sides of
/// [`LANES_LIMIT_F32`].
#[inline(always)]
pub fn sin_f32_mid(x: f32) -> f32 {
    sincos_f32_with::<false, true, false, false>(x)
}

/// sin(r) for |r| <= π/2 + 2^-20 as r + r³·P(r²), P being [`SIN_W`] or, with
/// `FAST`, the shorter [`SIN_WF`]: where the f64 paths of the default and
/// fast f32 sine and cosine differ (their f32 lanes differ in [`SIN_F`] and
/// [`SIN_FF`]).
#[inline(always)]
fn sin_poly_f32<const FAST: bool>(r: f64) -> f64 {
    let r2 = r * r;
    let p = if FAST {
        horner_f64(r2, &SIN_WF)
    } else {
        horner_f64(r2, &SIN_W)
    };
    (r * r2).mul_add(p, r)
}

/// The one body of the f32 sine (`COS` false) and cosine (`COS` true), default
/// (`FAST` false) and fast: [`sin_lanes_f32`] where [`fits_lanes_f32`] holds,
/// [`sin_wide_f32`] or [`cos_wide_f32`] beyond. The `SMALL` form is the
/// first alone; the `MID` form reads the second's table entry as constants
/// (the same bits below 2^25).
#[inline(always)]
fn sincos_f32_with<const SMALL: bool, const MID: bool, const FAST: bool, const COS: bool>(
    x: f32,
) -> f32 {
    let near = sin_lanes_f32::<FAST>(x, COS as u32);
    if SMALL {
        return near;
    }
    let far = if COS {
        cos_wide_f32::<FAST, MID>(x)
    } else {
        sin_wide_f32::<FAST, MID>(x)
    };
    if fits_lanes_f32(x) {
        near
    } else {
        far
    }
}

/// The sine of any f32 in f64 lanes (the exact reduction through
/// [`pio2_prod_f32`], [`sin_poly_f32`], one rounding): the arguments beyond
/// [`LANES_LIMIT_F32`]. `FAST` selects the shorter polynomial; `FIRST`
/// the table's first entry (the same bits below 2^25).
#[inline(always)]
fn sin_wide_f32<const FAST: bool, const FIRST: bool>(x: f32) -> f32 {
    let (h, l, m) = pio2_prod_f32::<FIRST>(x);
    // nearest even n to h: n = 2j; x·2/π = n + f (mod 4), |f| <= 1 + 2^-26.
    let t = h.mul_add(0.5, MAGIC);
    let j = t - MAGIC;
    let odd = t.to_bits() & 1;
    let s = j.mul_add(-2.0, h); // exact
    let f = (s + l) + m;
    let v = sin_poly_f32::<FAST>(f * PIO2);
    let v = f64::from_bits(v.to_bits() ^ (odd << 63)) as f32;
    let v = if x == 0.0 { x } else { v };
    if x.abs() < f32::INFINITY {
        v
    } else {
        f32::NAN
    }
}

/// Cosine, f32. Max error 0.7624 ulp (measured on all 2^32 inputs; the
/// paths as [`sin_f32`]).
/// cos(±0) = 1, cos(±inf) = NaN, NaN → NaN.
#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    cos_f32_on::<false>(x)
}

/// [`cos_f32`] on its f32 lanes alone (`SMALL`): the same bits wherever
/// [`fits_lanes_f32`] holds.
#[inline(always)]
pub fn cos_f32_on<const SMALL: bool>(x: f32) -> f32 {
    sincos_f32_with::<SMALL, false, false, true>(x)
}

/// [`cos_f32`] without table loads, as [`sin_f32_mid`]: the same bits
/// wherever [`fits_small_f32`] holds.
#[inline(always)]
pub fn cos_f32_mid(x: f32) -> f32 {
    sincos_f32_with::<false, true, false, true>(x)
}

/// The cosine of any f32 in f64 lanes, as [`sin_wide_f32`].
#[inline(always)]
fn cos_wide_f32<const FAST: bool, const FIRST: bool>(x: f32) -> f32 {
    let (h, l, m) = pio2_prod_f32::<FIRST>(x);
    // nearest odd n = 2j + 1 to h; cos x = -(-1)^j sin(fπ/2).
    let t = (h - 1.0).mul_add(0.5, MAGIC);
    let j = t - MAGIC;
    let even = !t.to_bits() & 1;
    let s = h - j.mul_add(2.0, 1.0); // exact when |h| >= 1/2
    let f = (s + l) + m;
    let v = sin_poly_f32::<FAST>(f * PIO2);
    let v = f64::from_bits(v.to_bits() ^ (even << 63)) as f32;
    if x.abs() < f32::INFINITY {
        v
    } else {
        f32::NAN
    }
}

/// tan(r)/r ≈ P(r²)/Q(r²): the Padé approximant of tan of degree 5 over 6
/// in r (the continued fraction r/(1 − r²/(3 − r²/(5 − … − r²/11))) cut
/// after 11), whose coefficients are integers, exact in f64. Its relative
/// error on |r| ≤ π/4·(1 + 2^-25) is below 2^-33.9 (mpmath, 2000 points),
/// some 2^-10 of an f32 ulp.
const TAN_P: [f64; 3] = [10395.0, -1260.0, 21.0];
const TAN_Q: [f64; 4] = [10395.0, -4725.0, 210.0, -1.0];

/// Tangent, f32. Max error 0.5010 ulp (measured on all 2^32 inputs).
/// tan(±0) = ±0, tan(±inf) = NaN, NaN → NaN.
#[inline(always)]
pub fn tan_f32(x: f32) -> f32 {
    tan_f32_on::<false>(x)
}

/// [`tan_f32`] by its near path alone (`SMALL`, [`tan_near_f32`]): the same
/// bits wherever [`fits_small_f32`] holds; beyond, [`tan_wide_f32`].
#[inline(always)]
pub fn tan_f32_on<const SMALL: bool>(x: f32) -> f32 {
    let near = tan_near_f32(x);
    if SMALL {
        return near;
    }
    let far = tan_wide_f32(x);
    if fits_small_f32(x) {
        near
    } else {
        far
    }
}

/// The tangent of |x| below 2^25: a two-part Cody–Waite reduction in f64.
/// n = x·(2/π) rounded (|n| < 2^25). x − n·PIO2 is exact: for n = 0 it is x;
/// otherwise |x| > π/4, so x and n·PIO2 are multiples of 2^-52 and their
/// difference is below 1. n·PIO2_LO joins it with one rounding, so r is
/// within 2^-53·|r| + |n|·2^-107 of x − n·π/2: far below an f32 ulp of the
/// result even at the f32 arguments nearest a multiple of π/2.
#[inline(always)]
fn tan_near_f32(x: f32) -> f32 {
    let xd = x as f64;
    let t = xd.mul_add(core::f64::consts::FRAC_2_PI, MAGIC);
    let n = t - MAGIC;
    let r = n.mul_add(-PIO2_LO, n.mul_add(-PIO2, xd));
    tan_quotient_f32(x, r, t.to_bits() & 1 == 1)
}

/// The tangent of any f32 in f64 lanes after the table reduction
/// ([`pio2_prod_f32`]): the arguments of 2^25 and beyond.
#[inline(always)]
fn tan_wide_f32(x: f32) -> f32 {
    let (h, l, m) = pio2_prod_f32::<false>(x);
    let t = h + MAGIC;
    let n = t - MAGIC;
    let f = ((h - n) + l) + m; // |f| <= 1/2 + 2^-26
    tan_quotient_f32(x, f * PIO2, t.to_bits() & 1 == 1)
}

/// tan x from its reduced argument r (|r| ≤ π/4·(1 + 2^-25)) and the parity
/// of its quadrant: tan r = r·P/Q ([`TAN_P`], [`TAN_Q`]) in an even quadrant
/// and −cot r = −Q/(r·P) in an odd one, one quotient of two short
/// polynomials in f64, rounded once to f32. tan(±0) = ±0; ±∞ and NaN give
/// NaN.
#[inline(always)]
fn tan_quotient_f32(x: f32, r: f64, odd: bool) -> f32 {
    let r2 = r * r;
    let p = r * horner_f64(r2, &TAN_P);
    let q = horner_f64(r2, &TAN_Q);
    let num = if odd { -q } else { p };
    let den = if odd { p } else { q };
    let v = (num / den) as f32;
    let v = if x == 0.0 { x } else { v };
    if x.abs() < f32::INFINITY {
        v
    } else {
        f32::NAN
    }
}

/// x·(2/π) reduced: returns (n, r) with x = (n + f)·π/2 + 4kπ/2, r = f·π/2 as a
/// double-word, |f| <= 1/2 + 2^-46, and n mod 4 in the low bits of `n`. Valid for
/// every finite |x| >= 2^-27 (smaller |x| are handled by the callers).
///
/// With `SMALL`, the table's first entry as constants: the same
/// bits for every |x| below 2^53 (entry index 0, no scaling).
#[inline(always)]
pub(super) fn reduce_f64<const SMALL: bool>(x: f64) -> (u64, Dd) {
    let be = ((x.to_bits() >> 52) & 0x7ff) as usize;
    let i = be.saturating_sub(1076);
    let i = if SMALL || i > 971 {
        if SMALL {
            0
        } else {
            971
        }
    } else {
        i
    };
    // Entries above biased exponent 1500 are stored times 2^600.
    let xs = if be > 1500 {
        x * f64::from_bits(0x1a70000000000000)
    } else {
        x
    };
    let a0 = f64::from_bits(PIO2_TAB_F64[4 * i]);
    let a1 = f64::from_bits(PIO2_TAB_F64[4 * i + 1]);
    let a2 = f64::from_bits(PIO2_TAB_F64[4 * i + 2]);
    let a3 = f64::from_bits(PIO2_TAB_F64[4 * i + 3]);
    let p0 = two_prod(xs, a0); // |hi| < 2^55
    let q = rint_f64(p0.hi * 0.0625);
    let v = q.mul_add(-16.0, p0.hi); // exact, |v| <= 8
    let s1 = two_sum(v, p0.lo);
    let p1 = two_prod(xs, a1); // |hi| < 4
    let s2 = two_sum(s1.hi, p1.hi);
    let t = s2.hi + MAGIC;
    let n = t - MAGIC;
    let s3 = s2.hi - n; // exact, |s3| <= 1/2
    let p2 = two_prod(xs, a2);
    let p3 = xs * a3;
    // Cascaded error-free sums (Sum2): the fraction to about 2^-150 absolute.
    let u1 = two_sum(s3, s1.lo);
    let u2 = two_sum(u1.hi, s2.lo);
    let u3 = two_sum(u2.hi, p1.lo);
    let u4 = two_sum(u3.hi, p2.hi);
    let lo = ((u1.lo + u2.lo) + (u3.lo + u4.lo)) + (p2.lo + p3);
    let f = fast_two_sum(u4.hi, lo);
    let r = f.mul(Dd {
        hi: PIO2,
        lo: PIO2_LO,
    });
    (t.to_bits(), r)
}

/// sin and cos of a reduced |r| <= π/4 + 2^-40 as double-words.
#[inline(always)]
pub(super) fn sincos_dd(r: Dd) -> (Dd, Dd) {
    let (rh, rl) = (r.hi, r.lo);
    let t = rh * rh;
    let sp = horner_f64(t, &SIN_D);
    let s_lo = (rh * t).mul_add(sp, rl * t.mul_add(-0.5, 1.0));
    let s = fast_two_sum(rh, s_lo);
    let tt = two_prod(rh, rh);
    let a = fast_two_sum(1.0, -0.5 * tt.hi);
    let cp = horner_f64(tt.hi, &COS_D);
    let c_lo = a.lo + ((tt.hi * tt.hi).mul_add(cp, -0.5 * tt.lo) - rh * rl);
    let c = fast_two_sum(a.hi, c_lo);
    (s, c)
}

/// Sine, f64. Max error below 1 ulp (0.712 ulp measured on 10^6 inputs over the
/// whole exponent range and near multiples of π/2; exact reduction for all finite x). sin(±0) = ±0, sin(±inf) = NaN, NaN → NaN.
#[inline(always)]
pub fn sin_f64(x: f64) -> f64 {
    sin_f64_on::<false>(x)
}

/// [`sin_f64`] with its reduction's table taken as the constants of its first
/// entry (`SMALL`): the same bits wherever [`fits_small_f64`] holds.
#[inline(always)]
pub fn sin_f64_on<const SMALL: bool>(x: f64) -> f64 {
    let (n, r) = reduce_f64::<SMALL>(x);
    let (s, c) = sincos_dd(r);
    let v = if n & 1 == 1 { c.hi } else { s.hi };
    let v = f64::from_bits(v.to_bits() ^ ((n & 2) << 62));
    let v = if x.abs() < f64::from_bits(0x3e40000000000000) {
        x
    } else {
        v
    }; // 2^-27
    if x.abs() < f64::INFINITY {
        v
    } else {
        f64::NAN
    }
}

/// Cosine, f64. Max error below 1 ulp (0.715 ulp measured, as [`sin_f64`]).
/// cos(±0) = 1, cos(±inf) = NaN, NaN → NaN.
#[inline(always)]
pub fn cos_f64(x: f64) -> f64 {
    cos_f64_on::<false>(x)
}

/// [`cos_f64`] with its reduction's table taken as the constants of its first
/// entry (`SMALL`): the same bits wherever [`fits_small_f64`] holds.
#[inline(always)]
pub fn cos_f64_on<const SMALL: bool>(x: f64) -> f64 {
    let (n, r) = reduce_f64::<SMALL>(x);
    let (s, c) = sincos_dd(r);
    let v = if n & 1 == 1 { s.hi } else { c.hi };
    let v = f64::from_bits(v.to_bits() ^ (((n + 1) & 2) << 62));
    let v = if x.abs() < f64::from_bits(0x3e40000000000000) {
        1.0
    } else {
        v
    };
    if x.abs() < f64::INFINITY {
        v
    } else {
        f64::NAN
    }
}

/// Tangent, f64. Max error below 1 ulp (0.814 ulp measured, as [`sin_f64`]).
/// tan(±0) = ±0, tan(±inf) = NaN, NaN → NaN.
#[inline(always)]
pub fn tan_f64(x: f64) -> f64 {
    tan_f64_on::<false>(x)
}

/// [`tan_f64`] with its reduction's table taken as the constants of its first
/// entry (`SMALL`): the same bits wherever [`fits_small_f64`] holds.
#[inline(always)]
pub fn tan_f64_on<const SMALL: bool>(x: f64) -> f64 {
    let (n, r) = reduce_f64::<SMALL>(x);
    let (s, c) = sincos_dd(r);
    let odd = n & 1 == 1;
    let nh = if odd { -c.hi } else { s.hi };
    let nl = if odd { -c.lo } else { s.lo };
    let dh = if odd { s.hi } else { c.hi };
    let dl = if odd { s.lo } else { c.lo };
    let q = nh / dh;
    let v = q + (q.mul_add(-dh, nh) + q.mul_add(-dl, nl)) / dh;
    let v = if x.abs() < f64::from_bits(0x3e40000000000000) {
        x
    } else {
        v
    };
    if x.abs() < f64::INFINITY {
        v
    } else {
        f64::NAN
    }
}

// fast: sin(r) = r + r^3 * P(r^2), |r| <= pi/2 + 2^-20, |error of P| < 2^-27.
const SIN_WF: [f64; 4] = [
    -0.16666665963804755,
    0.00833324213350186,
    -0.00019822739273401633,
    2.6347556945344614e-06,
];

/// Sine, f32, faster: the two paths of [`sin_f32`], each with a polynomial
/// one term shorter. Max error 0.9433 ulp (measured on all 2^32 inputs, the
/// worst beyond 2^16). Special values as [`sin_f32`].
#[inline(always)]
pub fn fast_sin_f32(x: f32) -> f32 {
    fast_sin_f32_on::<false>(x)
}

/// [`fast_sin_f32`] on its f32 lanes alone (`SMALL`): the same bits wherever
/// [`fits_lanes_f32`] holds.
#[inline(always)]
pub fn fast_sin_f32_on<const SMALL: bool>(x: f32) -> f32 {
    sincos_f32_with::<SMALL, false, true, false>(x)
}

/// [`fast_sin_f32`] without table loads, as [`sin_f32_mid`].
#[inline(always)]
pub fn fast_sin_f32_mid(x: f32) -> f32 {
    sincos_f32_with::<false, true, true, false>(x)
}

/// Cosine, f32, faster (see [`fast_sin_f32`]). Max error 0.9433 ulp
/// (measured on all 2^32 inputs). Special values as [`cos_f32`].
#[inline(always)]
pub fn fast_cos_f32(x: f32) -> f32 {
    fast_cos_f32_on::<false>(x)
}

/// [`fast_cos_f32`] on its f32 lanes alone (`SMALL`): the same bits wherever
/// [`fits_lanes_f32`] holds.
#[inline(always)]
pub fn fast_cos_f32_on<const SMALL: bool>(x: f32) -> f32 {
    sincos_f32_with::<SMALL, false, true, true>(x)
}

/// [`fast_cos_f32`] without table loads, as [`sin_f32_mid`].
#[inline(always)]
pub fn fast_cos_f32_mid(x: f32) -> f32 {
    sincos_f32_with::<false, true, true, true>(x)
}

/// Sine, f64, "fast" variant: no faster variant was found (the exact
/// reduction dominates the cost), so this is [`sin_f64`] itself (< 1 ulp).
#[inline(always)]
pub fn fast_sin_f64(x: f64) -> f64 {
    sin_f64(x)
}

/// Cosine, f64, "fast" variant: this is [`cos_f64`] itself (< 1 ulp); see
/// [`fast_sin_f64`].
#[inline(always)]
pub fn fast_cos_f64(x: f64) -> f64 {
    cos_f64(x)
}

/// The f32 reduction's table, indexed by the biased exponent: entry i
/// (words 2i, 2i+1) is (2/π) mod 2^(1−i) in two parts. The file says exactly
/// how it is laid out, read and made (`runtime/tests/tables.rs` derives it).
static PIO2_TAB_F32: [u64; 210] = include!("tables/pio2_f32.rs");

/// The f64 reduction's table, indexed by the biased exponent: entry i
/// (words 4i..4i+3) is (2/π) mod 2^(1−i) in four parts, times 2^600 past
/// biased exponent 1500. Its file says exactly how (as for `PIO2_TAB_F32`).
static PIO2_TAB_F64: [u64; 3888] = include!("tables/pio2_f64.rs");

#[cfg(test)]
mod tests {
    use super::{INV_PIO2_F, PIO2, PIO2_F1, PIO2_F2, PIO2_F3, PIO2_LO, TAN_P, TAN_Q};

    /// The sine's and cosine's middle forms against their full forms, bit for
    /// bit: every 97th f32 from 2^16 to 2^25 (both signs), the binades below
    /// at a stride, and the special values.
    #[test]
    fn mid_forms_give_the_full_forms_bits() {
        use super::{
            cos_f32, cos_f32_mid, fast_cos_f32, fast_cos_f32_mid, fast_sin_f32, fast_sin_f32_mid,
            sin_f32, sin_f32_mid,
        };
        type Form = fn(f32) -> f32;
        let forms: [(Form, Form); 4] = [
            (sin_f32, sin_f32_mid),
            (cos_f32, cos_f32_mid),
            (fast_sin_f32, fast_sin_f32_mid),
            (fast_cos_f32, fast_cos_f32_mid),
        ];
        let beyond = (65536f32.to_bits()..33554432f32.to_bits()).step_by(97);
        let below = (0..65536f32.to_bits()).step_by(100_003);
        let special = [0.0f32, f32::INFINITY, f32::NAN, 33554432f32.next_down()];
        let xs = beyond
            .chain(below)
            .map(f32::from_bits)
            .chain(special)
            .flat_map(|x| [x, -x]);
        for x in xs {
            for (full, mid) in forms {
                assert_eq!(full(x).to_bits(), mid(x).to_bits(), "x = {x:e}");
            }
        }
    }

    /// The f32 lanes' constants against π/2 as the 107-bit pair PIO2 +
    /// PIO2_LO and 2/π from the standard library: each part is the rest
    /// rounded to f32, and the three leave less than 2^-76.
    #[test]
    fn lanes_constants_split_pi_over_two() {
        assert_eq!(INV_PIO2_F, std::f64::consts::FRAC_2_PI as f32);
        assert_eq!(PIO2_F1, PIO2 as f32);
        // PIO2 − F1 and then − F2 are exact (Sterbenz); the tail joins last.
        let d1 = PIO2 - PIO2_F1 as f64;
        assert_eq!(PIO2_F2, (d1 + PIO2_LO) as f32);
        let d2 = (d1 - PIO2_F2 as f64) + PIO2_LO;
        assert_eq!(PIO2_F3, d2 as f32);
        assert!((d2 - PIO2_F3 as f64).abs() < 2f64.powi(-76));
    }

    /// TAN_P and TAN_Q are the convergent of tan r = r/(1 − g/(3 − g/(5 −
    /// … − g/11))), g = r², built here from the fraction in exact integers
    /// (polynomials in g, lowest power first): tan r = r·D/N.
    #[test]
    fn tan_quotient_is_the_continued_fractions_convergent() {
        // The innermost partial denominator, 11, as N/D.
        let (mut n, mut d): (Vec<i64>, Vec<i64>) = (vec![11], vec![1]);
        for k in [9i64, 7, 5, 3, 1] {
            // k − g/(N/D) = (k·N − g·D)/N.
            let mut next = vec![0i64; n.len().max(d.len() + 1)];
            for (i, c) in n.iter().enumerate() {
                next[i] += k * c;
            }
            for (i, c) in d.iter().enumerate() {
                next[i + 1] -= c;
            }
            d = std::mem::replace(&mut n, next);
        }
        let p: Vec<i64> = TAN_P.iter().map(|&c| c as i64).collect();
        let q: Vec<i64> = TAN_Q.iter().map(|&c| c as i64).collect();
        assert!(TAN_P.iter().chain(&TAN_Q).all(|c| c.fract() == 0.0));
        assert_eq!(p, d);
        assert_eq!(q, n);
    }
}
