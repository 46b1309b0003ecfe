//! The scalars of the linear-algebra engine: f32, f64 and their complex
//! pairs, with the few operations the routines need, each rounded the same
//! way on every tier (plain IEEE operations and fused multiply-adds, which
//! `mul_add` computes exactly rounded whatever the target).

use crate::array::Element;
use num_complex::Complex;
use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A scalar of a matrix: real (f32, f64) or complex (complex64, complex128).
pub(crate) trait Field:
    Element
    + super::work::Plain
    + Copy
    + Send
    + Sync
    + Debug
    + PartialEq
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + crate::linalg::update::ChainUpdate
    + 'static
{
    /// The real type of its parts.
    type Real: Real;
    /// Whether it is complex.
    const COMPLEX: bool;
    /// +0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// A value from its real part (+0 imaginary part).
    fn from_real(r: Self::Real) -> Self;
    /// A value from its parts (the imaginary part dropped on a real type).
    fn from_parts(re: Self::Real, im: Self::Real) -> Self;
    /// Its real part.
    fn re(self) -> Self::Real;
    /// Its imaginary part (+0 on a real type).
    fn im(self) -> Self::Real;
    /// Its conjugate (itself on a real type).
    fn conj(self) -> Self;
    /// `|re| + |im|`: the pivot search's magnitude.
    fn abs1(self) -> Self::Real;
    /// The modulus, by `hypot` (no overflow or underflow on the way).
    fn abs(self) -> Self::Real;
    /// Times a real.
    fn scale(self, r: Self::Real) -> Self;
    /// `acc − a·b`, the chain order's step: on a real type one fused
    /// multiply-add; on a complex type the real part is
    /// `fma(a.im, b.im, fma(−a.re, b.re, acc.re))` and the imaginary part
    /// `fma(−a.im, b.re, fma(−a.re, b.im, acc.im))`.
    fn fms(acc: Self, a: Self, b: Self) -> Self;
    /// `self / d` with no overflow or underflow a scaled division would
    /// avoid (Smith's method on a complex type).
    fn div(self, d: Self) -> Self;
    /// Each part divided by a real.
    fn div_real(self, r: Self::Real) -> Self;
    /// `acc + a·b`: [`Field::fms`] of `−a`.
    #[inline(always)]
    fn fma_add(acc: Self, a: Self, b: Self) -> Self {
        Self::fms(acc, -a, b)
    }
    /// A quiet NaN (both parts on a complex type).
    fn nan() -> Self;
    /// Whether every part is finite.
    fn is_finite(self) -> bool;
    /// Whether a part is NaN.
    fn is_nan(self) -> bool;
}

/// A real scalar (f32 or f64).
pub(crate) trait Real: Field<Real = Self> + PartialOrd + Div<Output = Self> {
    /// The complex scalar of its precision.
    type Complex: Field<Real = Self>;
    /// Its dtype's unit roundoff, 2^-24 or 2^-53.
    const UNIT: Self;
    /// The least positive normal number.
    const MIN_NORMAL: Self;
    /// The least positive subnormal number (the tests' η).
    #[cfg_attr(not(test), allow(dead_code))]
    const MIN_SUBNORMAL: Self;
    /// The greatest finite number.
    const MAX: Self;
    /// From an f64 (rounded once).
    fn of(x: f64) -> Self;
    /// To f64 (exact).
    fn to_f64(self) -> f64;
    /// The square root (exactly rounded).
    fn sqrt(self) -> Self;
    /// `√(x² + y²)` without overflow or underflow.
    fn hypot(self, y: Self) -> Self;
    /// `self·b + c` rounded once.
    fn mul_add(self, b: Self, c: Self) -> Self;
    /// Absolute value.
    fn fabs(self) -> Self;
    /// The value with `sign`'s sign.
    fn copysign(self, sign: Self) -> Self;
    /// The greater, NaN if either is.
    fn max_nan(self, other: Self) -> Self {
        if self.is_nan() || other.is_nan() {
            Self::nan()
        } else if other > self {
            other
        } else {
            self
        }
    }
}

macro_rules! real {
    ($t:ty, $unit:expr) => {
        impl Field for $t {
            type Real = $t;
            const COMPLEX: bool = false;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn from_real(r: $t) -> Self {
                r
            }
            #[inline(always)]
            fn from_parts(re: $t, _im: $t) -> Self {
                re
            }
            #[inline(always)]
            fn re(self) -> $t {
                self
            }
            #[inline(always)]
            fn im(self) -> $t {
                0.0
            }
            #[inline(always)]
            fn conj(self) -> Self {
                self
            }
            #[inline(always)]
            fn abs1(self) -> $t {
                self.abs()
            }
            #[inline(always)]
            fn abs(self) -> $t {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn scale(self, r: $t) -> Self {
                self * r
            }
            #[inline(always)]
            fn fms(acc: Self, a: Self, b: Self) -> Self {
                (-a).mul_add(b, acc)
            }
            #[inline(always)]
            fn div(self, d: Self) -> Self {
                self / d
            }
            #[inline(always)]
            fn div_real(self, r: $t) -> Self {
                self / r
            }
            #[inline(always)]
            fn nan() -> Self {
                <$t>::NAN
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
        impl Real for $t {
            type Complex = Complex<$t>;
            const UNIT: Self = $unit;
            const MIN_NORMAL: Self = <$t>::MIN_POSITIVE;
            const MIN_SUBNORMAL: Self = <$t>::from_bits(1);
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn of(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn hypot(self, y: Self) -> Self {
                <$t>::hypot(self, y)
            }
            #[inline(always)]
            fn mul_add(self, b: Self, c: Self) -> Self {
                <$t>::mul_add(self, b, c)
            }
            #[inline(always)]
            fn fabs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn copysign(self, sign: Self) -> Self {
                <$t>::copysign(self, sign)
            }
        }
    };
}

real!(f32, 1.0 / 16_777_216.0);
real!(f64, 1.0 / 9_007_199_254_740_992.0);

macro_rules! complex {
    ($r:ty) => {
        impl Field for Complex<$r> {
            type Real = $r;
            const COMPLEX: bool = true;
            const ZERO: Self = Complex { re: 0.0, im: 0.0 };
            const ONE: Self = Complex { re: 1.0, im: 0.0 };
            #[inline(always)]
            fn from_real(r: $r) -> Self {
                Complex { re: r, im: 0.0 }
            }
            #[inline(always)]
            fn from_parts(re: $r, im: $r) -> Self {
                Complex { re, im }
            }
            #[inline(always)]
            fn re(self) -> $r {
                self.re
            }
            #[inline(always)]
            fn im(self) -> $r {
                self.im
            }
            #[inline(always)]
            fn conj(self) -> Self {
                Complex {
                    re: self.re,
                    im: -self.im,
                }
            }
            #[inline(always)]
            fn abs1(self) -> $r {
                self.re.abs() + self.im.abs()
            }
            #[inline(always)]
            fn abs(self) -> $r {
                self.re.hypot(self.im)
            }
            #[inline(always)]
            fn scale(self, r: $r) -> Self {
                Complex {
                    re: self.re * r,
                    im: self.im * r,
                }
            }
            #[inline(always)]
            fn fms(acc: Self, a: Self, b: Self) -> Self {
                Complex {
                    re: a.im.mul_add(b.im, (-a.re).mul_add(b.re, acc.re)),
                    im: (-a.im).mul_add(b.re, (-a.re).mul_add(b.im, acc.im)),
                }
            }
            #[inline(always)]
            fn div(self, d: Self) -> Self {
                // Smith's method: divide through by the larger part of d.
                if d.re.abs() >= d.im.abs() {
                    let r = d.im / d.re;
                    let den = d.im.mul_add(r, d.re);
                    Complex {
                        re: self.im.mul_add(r, self.re) / den,
                        im: (-self.re).mul_add(r, self.im) / den,
                    }
                } else {
                    let r = d.re / d.im;
                    let den = d.re.mul_add(r, d.im);
                    Complex {
                        re: self.re.mul_add(r, self.im) / den,
                        im: self.im.mul_add(r, -self.re) / den,
                    }
                }
            }
            #[inline(always)]
            fn div_real(self, r: $r) -> Self {
                Complex {
                    re: self.re / r,
                    im: self.im / r,
                }
            }
            #[inline(always)]
            fn nan() -> Self {
                Complex {
                    re: <$r>::NAN,
                    im: <$r>::NAN,
                }
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                self.re.is_finite() && self.im.is_finite()
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.re.is_nan() || self.im.is_nan()
            }
        }
    };
}

complex!(f32);
complex!(f64);
