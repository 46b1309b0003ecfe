//! The complex exponential, e^(x + iy) = e^x·cos y + i·e^x·sin y, for the
//! `exp` kind on c64 and c128.
//!
//! Both components come from double-words: e^x as the mantissa of
//! `exp_core` (e^r, x = n·ln2 + r) and 2^n apart, cos y and sin y from the
//! exact reduction of `trig.rs` and its double-word polynomials; each
//! mantissa product is a double-word product rounded once, then scaled by
//! 2^n in two exact halves (a subnormal result rounds once more). x is
//! clamped to [-746, 1500] before the reduction: below, every component
//! rounds to zero whatever cos y and sin y are; above, every nonzero
//! component overflows (|cos y| of a double exceeds 2^-62, |sin y| is at
//! least 2^-1074 unless zero), and clamping keeps e^x finite, so an
//! infinite x never meets a zero factor. A y below 2^-900 enters the
//! imaginary part as y·2^1000 (exact) with 2^-1000 moved into the scale, so
//! its product stays normal. c64 computes its components so, in f64, and
//! rounds each once into f32.
//!
//! Special values follow C99 Annex G's cexp: a zero y gives that zero as
//! the imaginary part whatever x is (e^x + i0, NaN + i0 for a NaN x);
//! x = −∞ gives +0·cis y (both components +0 where y is not finite);
//! x = +∞ gives +∞·cis y for a finite nonzero y and +∞ + iNaN for an
//! infinite or NaN y; every other NaN or infinite y gives NaN + iNaN. NaN
//! results are the canonical quiet NaN (positive), the same on every tier.

use super::exp::{clamp64, exp_core, scale_64};
use super::prim::*;
use super::trig::{reduce_f64, sincos_dd};

/// Below this |y| (2^-27), cos y rounds to 1 and sin y to y in f64; the
/// reduction is skipped there.
const TINY: f64 = 7.450580596923828e-9;

/// 2^-900 and 2^1000: the tiny y that enter the imaginary part rescaled.
const DEEP: f64 = f64::from_bits((1023 - 900) << 52);
const UP: f64 = f64::from_bits((1023 + 1000) << 52);

/// e^(x + iy) as (real, imaginary): each component within 1 ulp of its
/// exact value (see the module documentation for the order and the special
/// values).
#[inline(always)]
pub fn exp_c128(x: f64, y: f64) -> (f64, f64) {
    let (mh, ml, n) = exp_core(clamp64(x, -746.0, 1500.0));
    let e = Dd { hi: mh, lo: ml };
    let (q, r) = reduce_f64::<false>(y);
    let (s, c) = sincos_dd(r);
    // The quadrant q mod 4 picks and signs the two functions.
    let odd = q & 1 == 1;
    let (cs, sn) = if odd { (s, c) } else { (c, s) };
    let flip = |d: Dd, bit: u64| Dd {
        hi: f64::from_bits(d.hi.to_bits() ^ bit),
        lo: f64::from_bits(d.lo.to_bits() ^ bit),
    };
    let cs = flip(cs, ((q + 1) & 2) << 62);
    let sn = flip(sn, (q & 2) << 62);
    let tiny = y.abs() < TINY;
    let cs = if tiny { Dd { hi: 1.0, lo: 0.0 } } else { cs };
    // A y below 2^-900 (sin y = y) enters as y·2^1000, exact, and 2^-1000
    // joins the scale: its product with e^r stays normal.
    let deep = y.abs() < DEEP;
    let sn = if tiny {
        Dd {
            hi: if deep { y * UP } else { y },
            lo: 0.0,
        }
    } else {
        sn
    };
    let re = e.mul(cs);
    let im = e.mul(sn);
    // Scales beyond ±2000 give the same overflow or zero as the exact one
    // (the factors are at least 2^-75 and at most 2^1), and keep both
    // halves of the scale normal powers of two.
    let bound = |k: f64| k.clamp(-2000.0, 2000.0);
    let re = scale_64(re.hi + re.lo, bound(n));
    let im = scale_64(im.hi + im.lo, bound(if deep { n - 1000.0 } else { n }));
    // A zero y's imaginary part is that zero (also for an infinite or NaN x).
    let im = if y == 0.0 { y } else { im };
    let finite_y = y.abs() < f64::INFINITY;
    let (re, im) = if x == f64::INFINITY && !finite_y {
        (f64::INFINITY, f64::NAN)
    } else if x == f64::NEG_INFINITY && !finite_y {
        (0.0, 0.0)
    } else if !finite_y || x.is_nan() {
        (f64::NAN, im)
    } else {
        (re, im)
    };
    let im = if !finite_y && x != f64::NEG_INFINITY {
        f64::NAN
    } else {
        im
    };
    (canonical(re), canonical(im))
}

/// e^(x + iy) for c64: [`exp_c128`] of the same values, each component
/// rounded once into f32 (within 1 ulp).
#[inline(always)]
pub fn exp_c64(x: f32, y: f32) -> (f32, f32) {
    let (re, im) = exp_c128(x as f64, y as f64);
    (re as f32, im as f32)
}

/// The canonical quiet NaN for any NaN, other values unchanged.
#[inline(always)]
fn canonical(v: f64) -> f64 {
    if v.is_nan() {
        f64::NAN
    } else {
        v
    }
}
