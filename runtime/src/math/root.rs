//! Roots: `hypot`, `cbrt` and `rsqrt` (1/√x).
//!
//! `hypot` and `rsqrt` of `f32` evaluate in `f64` (where f32 squares are
//! exact and f32 quotients cannot overflow) and round once; `cbrt` of `f32`
//! computes in f32 lanes without a division (see [`cbrt_f32`]). The `f64` functions scale their
//! operands by powers of two (exactly) into a safe range, and finish with one
//! Newton step whose residual is exact (a fused multiply-add or double-word
//! product), so only the final addition rounds at full weight.

use super::prim::*;

/// 2^e as an `f64` constant, for a normal exponent e.
const fn p2(e: i64) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// sqrt(x² + y²) within 0.51 ulp (in `f64`: the squares are exact, one rounding
/// of the sum, one of the square root, one to `f32`). No intermediate overflow
/// or underflow. hypot(±∞, y) = hypot(x, ±∞) = +∞ even when the other operand is
/// NaN (Annex F); otherwise NaN gives NaN; hypot(x, ±0) = |x|.
#[inline(always)]
pub fn hypot_f32(x: f32, y: f32) -> f32 {
    let a = x as f64;
    let b = y as f64;
    let r = (a * a + b * b).sqrt() as f32;
    if x.is_infinite() || y.is_infinite() {
        f32::INFINITY
    } else {
        r
    }
}

/// sqrt(x² + y²) in `f64` within 1 ulp (about 0.5 measured), with no harmful
/// overflow or underflow: the larger operand is scaled by a power of two into
/// [2^-474, 2^450], the sum of squares is formed as a double-word and the root
/// gets one Newton correction. When the larger operand is subnormal both are
/// scaled to integers (×2^1074) and the root is rounded to an integer, which is
/// exactly the subnormal grid, so subnormal results round once. Special values:
/// hypot(±∞, y) = +∞ even for y NaN (Annex F); otherwise NaN gives NaN;
/// hypot(x, ±0) = |x|; the result overflows only when the true value does.
#[inline(always)]
pub fn hypot_f64(x: f64, y: f64) -> f64 {
    let xa = x.abs();
    let ya = y.abs();
    let big = if xa > ya { xa } else { ya };
    let small = if xa > ya { ya } else { xa };
    let sub = big < p2(-1022);
    let tiny = big < p2(-450);
    let huge = big > p2(450);
    let sc1 = if sub {
        p2(537)
    } else if tiny {
        p2(600)
    } else if huge {
        p2(-600)
    } else {
        1.0
    };
    let sc2 = if sub { p2(537) } else { 1.0 };
    let bs = big * sc1 * sc2;
    let ss = small * sc1 * sc2;
    let p = two_prod(bs, bs);
    let q = two_prod(ss, ss);
    let s = two_sum(p.hi, q.hi);
    let zh = s.hi;
    let zl = s.lo + (p.lo + q.lo);
    let r = zh.sqrt();
    let res = (-r).mul_add(r, zh) + zl;
    let c = res / (r + r);
    let norm = r + c;
    // Subnormal result path: the scaled result lies below 2^53 and its grid is
    // the integers; round r + c to an integer with r split exactly at 2^52.
    const M: f64 = 4503599627370496.0; // 2^52
    let tt = r + M;
    let e = r - (tt - M);
    let adj = if c > 0.5 - e {
        1.0
    } else if c < -0.5 - e {
        -1.0
    } else {
        0.0
    };
    let ri = (tt + adj) - M;
    let subres = if r >= M { norm } else { ri };
    let un = if tiny {
        p2(-600)
    } else if huge {
        p2(600)
    } else {
        1.0
    };
    let out = if sub {
        subres * p2(-537) * p2(-537)
    } else {
        norm * un
    };
    let out = if big == 0.0 { 0.0 } else { out };
    let out = if x.is_nan() || y.is_nan() { x + y } else { out };
    if xa == f64::INFINITY || ya == f64::INFINITY {
        f64::INFINITY
    } else {
        out
    }
}

/// One Halley-type step for y ≈ a^(−1/3), division-free: with
/// e = 1 − a·y³, y·(1 + e/3 + 2e²/9) (the error d becomes about 4.7·d³).
#[inline(always)]
fn rcbrt_step_f32(y: f32, a: f32) -> f32 {
    let e = (-a).mul_add(y * y * y, 1.0);
    let p = e.mul_add(2.0 / 9.0, 1.0 / 3.0);
    (y * e).mul_add(p, y)
}

/// The cube root of `x`, computed in f32 lanes without a division. Max
/// error 0.74 ulp (measured over every f32, exhaustively); exact for
/// perfect cubes (cbrt(27) = 3). Odd (keeps the sign of zero); cbrt(±∞) =
/// ±∞; NaN gives NaN.
///
/// a = |x| (scaled by 2^72 below 2^-80, the result by 2^-24); a guess of
/// a^(−1/3) to 4.8 bits from the bits (a constant less a third of the bit
/// pattern, the third taken by an f32 multiply and read back by an adder),
/// two [`rcbrt_step_f32`] (about 2^-23), c = a·y², and one Newton step
/// c − (c³ − a)·y²/3 whose residual is one fused multiply-add.
#[inline(always)]
pub fn cbrt_f32(x: f32) -> f32 {
    let a = x.abs();
    let tiny = a < 8.271806125530277e-25; // 2^-80
    let s = if tiny { a * 4.722366482869645e21 } else { a }; // 2^72
    let t = (s.to_bits() as i32 as f32).mul_add(1.0 / 768.0, MAGIC_F);
    let third = t.to_bits().wrapping_sub(0x4b40_0000) << 8;
    let y = f32::from_bits(0x54a2_32a7u32.wrapping_sub(third));
    let y = rcbrt_step_f32(y, s);
    let y = rcbrt_step_f32(y, s);
    let y2 = y * y;
    let c = s * y2;
    let res = (c * c).mul_add(c, -s);
    let c = (-res).mul_add(y2 * (1.0 / 3.0), c);
    let c = if tiny { c * 5.960464477539063e-8 } else { c }; // 2^-24
    let c = c.copysign(x);
    // ±0, ±∞ and NaN are their own cube roots.
    if a.to_bits().wrapping_sub(1) < 0x7f7f_ffff {
        c
    } else {
        x
    }
}

/// A first guess of a^(1/3) for a normal positive `a`, to about 5 bits: the
/// upper word of the bits divided by three plus a bias.
#[inline(always)]
fn cbrt_guess(a: f64) -> f64 {
    // (1023 − 1023/3 − 0.0330…)·2^20: the bias of the upper 32 bits.
    const B1: u32 = 715094163;
    let hi = (a.to_bits() >> 32) as u32;
    f64::from_bits(((hi / 3 + B1) as u64) << 32)
}

/// One Halley step for t ≈ a^(1/3): t·(t³ + 2a)/(2t³ + a) (triples the bits).
#[inline(always)]
fn cbrt_halley(t: f64, a: f64) -> f64 {
    let t3 = t * t * t;
    t * (t3 + a + a) / (t3 + t3 + a)
}

/// The cube root of `x` in `f64` within 1 ulp (about 0.5 measured): scaled by
/// 2^∓600 out of [2^-300, 2^300], a guess from the bits, two Halley steps (about
/// 45 bits), then one Newton step whose residual t³ − a is exact (double-word
/// cube), so the result rounds once; perfect cubes are exact. Odd (keeps the
/// sign of zero); cbrt(±∞) = ±∞; NaN gives NaN; subnormals are scaled exactly.
#[inline(always)]
pub fn cbrt_f64(x: f64) -> f64 {
    let a0 = x.abs();
    let tiny = a0 < p2(-300);
    let huge = a0 > p2(300);
    let sc = if tiny {
        p2(600)
    } else if huge {
        p2(-600)
    } else {
        1.0
    };
    let a = a0 * sc;
    let t = cbrt_guess(a);
    let t = cbrt_halley(t, a);
    let t = cbrt_halley(t, a);
    let t2 = two_prod(t, t);
    let t3 = t2.mul_f64(t);
    // t3.hi is within a factor 2 of a, so t3.hi − a is exact.
    let res = (t3.hi - a) + t3.lo;
    let y = t - res / (3.0 * t2.hi);
    let un = if tiny {
        p2(-200)
    } else if huge {
        p2(200)
    } else {
        1.0
    };
    let r = (y * un).copysign(x);
    if a0 == 0.0 || !a0.is_finite() {
        x
    } else {
        r
    }
}

/// 1/√x within 0.51 ulp (in `f64`: square root and quotient each round at
/// 2^-53, then one rounding to `f32`). rsqrt(+0) = +∞, rsqrt(−0) = −∞,
/// rsqrt(+∞) = +0, x < 0 and NaN give NaN.
#[inline(always)]
pub fn rsqrt_f32(x: f32) -> f32 {
    (1.0 / (x as f64).sqrt()) as f32
}

/// 1/√x in `f64` within 1 ulp (about 0.5 measured): s = √x as a double-word
/// (exact residual by a fused multiply-add), r = 1/s with its exact residual
/// e = 1 − r·s, and the result r + r·(e − s_lo·r), rounded once. Inputs below
/// 2^-800 are scaled by 2^600 (exactly) so the residuals stay exact.
/// rsqrt(+0) = +∞, rsqrt(−0) = −∞, rsqrt(+∞) = +0, x < 0 and NaN give NaN.
#[inline(always)]
pub fn rsqrt_f64(x: f64) -> f64 {
    let small = x < p2(-800);
    let xs = if small { x * p2(600) } else { x };
    let s = xs.sqrt();
    let sl = (-s).mul_add(s, xs) / (s + s);
    let r = 1.0 / s;
    let e = (-r).mul_add(s, 1.0);
    let y = r.mul_add(e - sl * r, r);
    let y = if small { y * p2(300) } else { y };
    if x == 0.0 {
        f64::INFINITY.copysign(x)
    } else if x == f64::INFINITY {
        0.0
    } else {
        y
    }
}
