//! Householder reflectors `H = I − τ v vᴴ` (v₀ = 1) in column-major
//! buffers: their making, their application and the sums they need.
//!
//! **Order.** A dot product ([`dot`]) or a sum of squares adds term i into
//! lane `i mod 8` by fused steps (term 0 first), then lanes `l` and
//! `l + 4`, `l + 2`, `l + 1`: a fixed function of the length alone, whatever
//! the tier (the lanes are named in the code, not left to a vectoriser).

use crate::linalg::field::{Field, Real};
use crate::linalg::update::{axpy_sub, dot, Isa};

/// The lanes folded: `l + 4`, `l + 2`, `l + 1`.
#[inline]
fn fold<T: Field>(mut acc: [T; 8]) -> T {
    for h in [4, 2, 1] {
        for l in 0..h {
            acc[l] = acc[l] + acc[l + h];
        }
    }
    acc[0]
}

/// `‖x‖₂` without overflow or underflow on the way: the lane-order sum of
/// squares where it is safely inside the normal range, else the same sum on
/// x scaled by a power of two chosen from its largest part.
pub(crate) fn norm2<T: Field>(x: &[T]) -> T::Real {
    let sumsq = |s: T::Real| {
        let mut acc = [T::Real::ZERO; 8];
        for (i, v) in x.iter().enumerate() {
            let (re, im) = (v.re() * s, v.im() * s);
            let a = &mut acc[i % 8];
            *a = re.mul_add(re, *a);
            if T::COMPLEX {
                *a = im.mul_add(im, *a);
            }
        }
        fold(acc)
    };
    let plain = sumsq(T::Real::ONE);
    // Far from overflow and from where squares lose bits to underflow.
    let low = T::Real::MIN_NORMAL / T::Real::UNIT;
    if plain.is_finite() && plain >= low && plain < T::Real::MAX * T::Real::UNIT {
        return plain.sqrt();
    }
    let mut big = T::Real::ZERO;
    for v in x {
        big = big.max_nan(v.re().fabs()).max_nan(v.im().fabs());
    }
    if big.is_nan() || big <= T::Real::ZERO || !big.is_finite() {
        return if big.is_nan() { T::Real::nan() } else { big };
    }
    // s = 2^-e with big·s in [1, 2): exact scaling.
    let e = exponent(big.to_f64());
    let s = T::Real::of(2f64.powi(-e));
    let inv = T::Real::of(2f64.powi(e));
    sumsq(s).sqrt() * inv
}

/// The binary exponent of a positive finite f64 (`x` in `[2^e, 2^(e+1))`).
fn exponent(x: f64) -> i32 {
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 {
        // Subnormal: count from the leading bit of the fraction.
        -1074 + (63 - (bits & ((1u64 << 52) - 1)).leading_zeros() as i32)
    } else {
        e - 1023
    }
}

/// Make the reflector that maps `(alpha, x)` to `(beta, 0)`: `x` becomes v
/// below v₀ = 1, the return is `(beta, tau)`, beta real (of the opposite
/// sign to `re alpha`; `alpha` itself, real, with τ = 0, where x is zero and
/// alpha real).
pub(crate) fn make<T: Field>(alpha: T, x: &mut [T]) -> (T::Real, T) {
    let xnorm = norm2(x);
    if xnorm == T::Real::ZERO && alpha.im() == T::Real::ZERO {
        return (alpha.re(), T::ZERO);
    }
    let r = alpha.re().hypot(alpha.im()).hypot(xnorm);
    let beta = -r.copysign(alpha.re());
    let tau = T::from_parts((beta - alpha.re()) / beta, -alpha.im() / beta);
    let d = alpha - T::from_real(beta);
    for v in x.iter_mut() {
        *v = v.div(d);
    }
    (beta, tau)
}

/// Apply `Hᴴ = I − conj(τ) v vᴴ` (or `H` where `!adjoint`) from the left
/// to the column `y` (the reflector's rows): `y ← y − τ' v (vᴴ y)`.
/// `v` holds v below v₀ = 1.
#[inline]
pub(crate) fn apply<T: Field>(v: &[T], tau: T, adjoint: bool, y: &mut [T], isa: Isa) {
    if tau == T::ZERO || y.is_empty() {
        return;
    }
    let w = y[0] + dot(isa, v, &y[1..]);
    let t = if adjoint { tau.conj() } else { tau };
    let s = t * w;
    y[0] = y[0] - s;
    axpy_sub(isa, &mut y[1..], v, s);
}
