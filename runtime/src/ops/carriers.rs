//! The carrier traits: what each operation asks of the Rust type that
//! carries a dtype's values (arithmetic, ordering, bits, float and complex
//! parts), implemented for the primitive carriers, `bool` and the complex
//! numbers.

use super::*;
use crate::pair::{Pair, PairFloat};

/// +, -, ×, ÷ and negation. Integers wrap; integer x / 0 is 0.
pub trait Arith: Copy {
    /// a + b
    fn add(self, b: Self) -> Self;
    /// a - b
    fn sub(self, b: Self) -> Self;
    /// a × b
    fn mul(self, b: Self) -> Self;
    /// a ÷ b
    fn div(self, b: Self) -> Self;
    /// -a
    fn neg(self) -> Self;
}

/// Remainder with the sign of the dividend.
pub trait RemT: Copy {
    /// a rem b
    fn rem(self, b: Self) -> Self;
}

/// Magnitude, into the real type.
pub trait AbsT: Copy {
    /// The result type.
    type Out: Copy;
    /// |a|
    fn abs(self) -> Self::Out;
}

/// IEEE 754-2019 minimum and maximum (plain min/max for integers).
pub trait MinMax: Copy {
    /// minimum(a, b)
    fn minimum(self, b: Self) -> Self;
    /// maximum(a, b)
    fn maximum(self, b: Self) -> Self;
}

/// Sign: -1, 0 or 1 (float zeros and NaN pass through).
pub trait Signum: Copy {
    /// sign(a)
    fn sign(self) -> Self;
}

/// Ordering comparisons.
pub trait OrdT: Copy {
    /// a < b
    fn lt(self, b: Self) -> bool;
    /// a <= b
    fn le(self, b: Self) -> bool;
}

/// Equality (IEEE for floats).
pub trait EqT: Copy {
    /// a == b
    fn eq(self, b: Self) -> bool;
}

/// Non-zero test (NaN counts as non-zero).
pub trait Truthy: Copy {
    /// a != 0
    fn truthy(self) -> bool;
}

/// Bitwise logic.
pub trait BitOps: Copy {
    /// a & b
    fn and(self, b: Self) -> Self;
    /// a | b
    fn or(self, b: Self) -> Self;
    /// a ^ b
    fn xor(self, b: Self) -> Self;
    /// !a
    fn not(self) -> Self;
}

/// Float-only operations, each exact or correctly rounded.
pub trait FloatT: Copy {
    /// a × b + c, one rounding
    fn fma(self, b: Self, c: Self) -> Self;
    /// correctly rounded square root
    fn sqrt(self) -> Self;
    /// floor
    fn floor(self) -> Self;
    /// ceil
    fn ceil(self) -> Self;
    /// trunc
    fn trunc(self) -> Self;
    /// round half away from zero
    fn round(self) -> Self;
    /// round half to even
    fn rint(self) -> Self;
    /// magnitude of a, sign of b
    fn copysign(self, b: Self) -> Self;
}

/// Integer bits for shifts, rotates and saturation.
pub trait IntBits: Copy + Ord {
    /// The bits, zero-extended from the carrier's width.
    fn bits(self) -> u64;
    /// From bits (truncating).
    fn from_bits(b: u64) -> Self;
    /// Wrapping left shift by s < carrier width.
    fn shl(self, s: u32) -> Self;
    /// Arithmetic (signed) or logical (unsigned) right shift by s < carrier width.
    fn shr(self, s: u32) -> Self;
    /// -1 for a negative value, else 0.
    fn sign_fill(self) -> Self;
    /// Saturating add in the carrier.
    fn sat_add(self, b: Self) -> Self;
    /// Saturating sub in the carrier.
    fn sat_sub(self, b: Self) -> Self;
    /// Saturating product in the carrier.
    fn sat_mul(self, b: Self) -> Self;
    /// The carrier's width in bits.
    const WIDTH: u32;
    /// The number of one bits over the carrier's width, as a carrier value.
    fn ones(self) -> Self;
    /// The leading zero bits over the carrier's width (the width for 0).
    fn lead_zeros(self) -> Self;
    /// The trailing zero bits over the carrier's width (the width for 0).
    fn trail_zeros(self) -> Self;
    /// The carrier's bits in reverse order.
    fn rev_bits(self) -> Self;
    /// The carrier's bytes in reverse order.
    fn swap_bytes_(self) -> Self;
}

/// IEEE 754 totalOrder as a three-way comparison.
pub trait TotalOrderT: Copy {
    /// −1, 0 or +1 as `self` comes before, with or after `b` in totalOrder:
    /// −NaN (larger payloads first) < −∞ < … < −0 < +0 < … < +∞ < +NaN
    /// (larger payloads last); equal only for equal bits.
    fn total_cmp3(self, b: Self) -> i8;
}

macro_rules! total_order_impls {
    ($($t:ty, $i:ty, $u:ty);*) => {$(
        impl TotalOrderT for $t {
            #[inline(always)]
            fn total_cmp3(self, b: Self) -> i8 {
                // The bits as a signed integer with the magnitude bits of a
                // negative value flipped: then integer order is totalOrder.
                let key = |x: $t| {
                    let k = x.to_bits() as $i;
                    k ^ ((((k >> (<$i>::BITS - 1)) as $u) >> 1) as $i)
                };
                let (x, y) = (key(self), key(b));
                (x > y) as i8 - (x < y) as i8
            }
        }
    )*};
}
total_order_impls!(f32, i32, u32; f64, i64, u64);

/// A complex carrier's parts.
pub trait PartsT: Copy {
    /// The component type.
    type Part;
    /// The real part, bits unchanged.
    fn re_part(self) -> Self::Part;
    /// The imaginary part, bits unchanged.
    fn im_part(self) -> Self::Part;
}

/// Complex-only operations.
pub trait ComplexT: Copy {
    /// The conjugate.
    fn conj(self) -> Self;
}

/// A complex number from its two components.
pub trait FromPartsT: PartsT {
    /// re + i·im, bits unchanged.
    fn from_parts(re: Self::Part, im: Self::Part) -> Self;
}

/// A complex number's product with a real of its component type.
pub trait CompositeT: FromPartsT {
    /// (re·s) + i(im·s), each product rounded once.
    fn scale(self, s: Self::Part) -> Self;
}

macro_rules! float_impls {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, b: Self) -> Self { self + b }
            #[inline(always)] fn sub(self, b: Self) -> Self { self - b }
            #[inline(always)] fn mul(self, b: Self) -> Self { self * b }
            #[inline(always)] fn div(self, b: Self) -> Self { self / b }
            #[inline(always)] fn neg(self) -> Self { -self }
        }
        impl RemT for $t {
            #[inline(always)] fn rem(self, b: Self) -> Self { self % b }
        }
        impl AbsT for $t {
            type Out = $t;
            #[inline(always)] fn abs(self) -> Self { <$t>::abs(self) }
        }
        impl MinMax for $t {
            #[inline(always)]
            fn minimum(self, b: Self) -> Self {
                if self < b { self } else if b < self { b }
                else if self == b { <$t>::from_bits(self.to_bits() | b.to_bits()) }
                else { self + b }
            }
            #[inline(always)]
            fn maximum(self, b: Self) -> Self {
                if self > b { self } else if b > self { b }
                else if self == b { <$t>::from_bits(self.to_bits() & b.to_bits()) }
                else { self + b }
            }
        }
        impl Signum for $t {
            #[inline(always)]
            fn sign(self) -> Self {
                if self > 0.0 { 1.0 } else if self < 0.0 { -1.0 } else { self }
            }
        }
        impl OrdT for $t {
            #[inline(always)] fn lt(self, b: Self) -> bool { self < b }
            #[inline(always)] fn le(self, b: Self) -> bool { self <= b }
        }
        impl EqT for $t {
            #[inline(always)] fn eq(self, b: Self) -> bool { self == b }
        }
        impl Truthy for $t {
            #[inline(always)] fn truthy(self) -> bool { self != 0.0 }
        }
        impl FloatT for $t {
            #[inline(always)] fn fma(self, b: Self, c: Self) -> Self { self.mul_add(b, c) }
            #[inline(always)] fn sqrt(self) -> Self { <$t>::sqrt(self) }
            #[inline(always)] fn floor(self) -> Self { <$t>::floor(self) }
            #[inline(always)] fn ceil(self) -> Self { <$t>::ceil(self) }
            #[inline(always)] fn trunc(self) -> Self { <$t>::trunc(self) }
            #[inline(always)] fn round(self) -> Self { <$t>::round(self) }
            #[inline(always)] fn rint(self) -> Self { <$t>::round_ties_even(self) }
            #[inline(always)] fn copysign(self, b: Self) -> Self { <$t>::copysign(self, b) }
        }
    )*};
}
float_impls!(f32, f64);

macro_rules! int_impls {
    ($($t:ty, $signed:expr);*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, b: Self) -> Self { self.wrapping_add(b) }
            #[inline(always)] fn sub(self, b: Self) -> Self { self.wrapping_sub(b) }
            #[inline(always)] fn mul(self, b: Self) -> Self { self.wrapping_mul(b) }
            #[inline(always)]
            fn div(self, b: Self) -> Self {
                if b == 0 { 0 } else { self.wrapping_div(b) }
            }
            #[inline(always)] fn neg(self) -> Self { self.wrapping_neg() }
        }
        impl RemT for $t {
            #[inline(always)]
            fn rem(self, b: Self) -> Self {
                if b == 0 { 0 } else { self.wrapping_rem(b) }
            }
        }
        impl MinMax for $t {
            #[inline(always)] fn minimum(self, b: Self) -> Self { Ord::min(self, b) }
            #[inline(always)] fn maximum(self, b: Self) -> Self { Ord::max(self, b) }
        }
        impl OrdT for $t {
            #[inline(always)] fn lt(self, b: Self) -> bool { self < b }
            #[inline(always)] fn le(self, b: Self) -> bool { self <= b }
        }
        impl EqT for $t {
            #[inline(always)] fn eq(self, b: Self) -> bool { self == b }
        }
        impl Truthy for $t {
            #[inline(always)] fn truthy(self) -> bool { self != 0 }
        }
        impl BitOps for $t {
            #[inline(always)] fn and(self, b: Self) -> Self { self & b }
            #[inline(always)] fn or(self, b: Self) -> Self { self | b }
            #[inline(always)] fn xor(self, b: Self) -> Self { self ^ b }
            #[inline(always)] fn not(self) -> Self { !self }
        }
        impl IntBits for $t {
            #[inline(always)] fn bits(self) -> u64 { self as u64 & (u64::MAX >> (64 - <$t>::BITS)) }
            #[inline(always)] fn from_bits(b: u64) -> Self { b as $t }
            #[inline(always)] fn shl(self, s: u32) -> Self { self.wrapping_shl(s) }
            #[inline(always)] fn shr(self, s: u32) -> Self { self.wrapping_shr(s) }
            #[inline(always)]
            fn sign_fill(self) -> Self {
                #[allow(unused_comparisons)]
                let negative = self < 0;
                if negative { (0 as $t).wrapping_sub(1) } else { 0 }
            }
            #[inline(always)] fn sat_add(self, b: Self) -> Self { self.saturating_add(b) }
            #[inline(always)] fn sat_sub(self, b: Self) -> Self { self.saturating_sub(b) }
            #[inline(always)] fn sat_mul(self, b: Self) -> Self { self.saturating_mul(b) }
            const WIDTH: u32 = <$t>::BITS;
            #[inline(always)] fn ones(self) -> Self { self.count_ones() as $t }
            #[inline(always)] fn lead_zeros(self) -> Self { self.leading_zeros() as $t }
            #[inline(always)] fn trail_zeros(self) -> Self { self.trailing_zeros() as $t }
            #[inline(always)] fn rev_bits(self) -> Self { self.reverse_bits() }
            #[inline(always)] fn swap_bytes_(self) -> Self { self.swap_bytes() }
        }
        impl Signum for $t {
            #[inline(always)]
            fn sign(self) -> Self {
                #[allow(unused_comparisons)]
                let negative = self < 0;
                if negative { (0 as $t).wrapping_sub(1) } else if self > 0 { 1 } else { 0 }
            }
        }
        impl AbsT for $t {
            type Out = $t;
            #[inline(always)]
            fn abs(self) -> Self {
                #[allow(unused_comparisons)]
                let negative = $signed && self < 0;
                if negative { self.wrapping_neg() } else { self }
            }
        }
    )*};
}
int_impls!(i8, true; i16, true; i32, true; i64, true; u8, false; u16, false; u32, false; u64, false);

impl OrdT for bool {
    #[inline(always)]
    fn lt(self, b: Self) -> bool {
        !self & b
    }
    #[inline(always)]
    fn le(self, b: Self) -> bool {
        !self | b
    }
}
impl EqT for bool {
    #[inline(always)]
    fn eq(self, b: Self) -> bool {
        self == b
    }
}
impl Truthy for bool {
    #[inline(always)]
    fn truthy(self) -> bool {
        self
    }
}
impl BitOps for bool {
    #[inline(always)]
    fn and(self, b: Self) -> Self {
        self & b
    }
    #[inline(always)]
    fn or(self, b: Self) -> Self {
        self | b
    }
    #[inline(always)]
    fn xor(self, b: Self) -> Self {
        self ^ b
    }
    #[inline(always)]
    fn not(self) -> Self {
        !self
    }
}

/// |re + i·im| for f64 components: scaled by a power of two into a safe range,
/// then sqrt(fma(b, b, s·s)), within 1 ulp; an infinite component gives +inf
/// even beside a NaN (C99 Annex G).
#[inline(always)]
fn hypot64(re: f64, im: f64) -> f64 {
    let x = re.abs();
    let y = im.abs();
    if x == f64::INFINITY || y == f64::INFINITY {
        return f64::INFINITY;
    }
    let (big, small) = if x >= y { (x, y) } else { (y, x) };
    let (scale, unscale) = if big > 2f64.powi(500) {
        (2f64.powi(-600), 2f64.powi(600))
    } else if big < 2f64.powi(-500) {
        (2f64.powi(600), 2f64.powi(-600))
    } else {
        (1.0, 1.0)
    };
    let b = big * scale;
    let s = small * scale;
    b.mul_add(b, s * s).sqrt() * unscale
}

macro_rules! complex_impls {
    ($t:ty) => {
        impl Arith for Complex<$t> {
            #[inline(always)]
            fn add(self, b: Self) -> Self {
                Complex::new(self.re + b.re, self.im + b.im)
            }
            #[inline(always)]
            fn sub(self, b: Self) -> Self {
                Complex::new(self.re - b.re, self.im - b.im)
            }
            #[inline(always)]
            fn mul(self, b: Self) -> Self {
                Complex::new(
                    self.re * b.re - self.im * b.im,
                    self.re * b.im + self.im * b.re,
                )
            }
            /// Smith's algorithm: divide through by the larger component of b.
            #[inline(always)]
            fn div(self, b: Self) -> Self {
                if b.re.abs() >= b.im.abs() {
                    let r = b.im / b.re;
                    let d = b.re + b.im * r;
                    Complex::new((self.re + self.im * r) / d, (self.im - self.re * r) / d)
                } else {
                    let r = b.re / b.im;
                    let d = b.im + b.re * r;
                    Complex::new((self.re * r + self.im) / d, (self.im * r - self.re) / d)
                }
            }
            #[inline(always)]
            fn neg(self) -> Self {
                Complex::new(-self.re, -self.im)
            }
        }
        impl EqT for Complex<$t> {
            #[inline(always)]
            fn eq(self, b: Self) -> bool {
                self.re == b.re && self.im == b.im
            }
        }
        impl ComplexT for Complex<$t> {
            #[inline(always)]
            fn conj(self) -> Self {
                Complex::new(self.re, -self.im)
            }
        }
        impl FromPartsT for Complex<$t> {
            #[inline(always)]
            fn from_parts(re: $t, im: $t) -> Self {
                Complex::new(re, im)
            }
        }
        impl CompositeT for Complex<$t> {
            #[inline(always)]
            fn scale(self, s: $t) -> Self {
                Complex::new(self.re * s, self.im * s)
            }
        }
        impl PartsT for Complex<$t> {
            type Part = $t;
            #[inline(always)]
            fn re_part(self) -> $t {
                self.re
            }
            #[inline(always)]
            fn im_part(self) -> $t {
                self.im
            }
        }
    };
}
complex_impls!(f32);
complex_impls!(f64);

// A complex number of two 16-bit float codes (f16c, bf16c) as stored, for the
// kinds that move its parts without computing (`raw_floats`): each part's
// top bit is its sign.
impl ComplexT for Complex<u16> {
    #[inline(always)]
    fn conj(self) -> Self {
        Complex::new(self.re, self.im ^ 0x8000)
    }
}
impl FromPartsT for Complex<u16> {
    #[inline(always)]
    fn from_parts(re: u16, im: u16) -> Self {
        Complex::new(re, im)
    }
}
impl PartsT for Complex<u16> {
    type Part = u16;
    #[inline(always)]
    fn re_part(self) -> u16 {
        self.re
    }
    #[inline(always)]
    fn im_part(self) -> u16 {
        self.im
    }
}

impl AbsT for Complex<f32> {
    type Out = f32;
    /// Squares and sum in f64 (each square exact), square root, one rounding to f32.
    #[inline(always)]
    fn abs(self) -> f32 {
        let (x, y) = (self.re as f64, self.im as f64);
        if x.is_infinite() || y.is_infinite() {
            return f32::INFINITY;
        }
        x.mul_add(x, y * y).sqrt() as f32
    }
}

impl AbsT for Complex<f64> {
    type Out = f64;
    #[inline(always)]
    fn abs(self) -> f64 {
        hypot64(self.re, self.im)
    }
}

/// Square root (correctly rounded for floats; within 25/8·u² for pairs).
pub trait SqrtT: Copy {
    /// √a
    fn root(self) -> Self;
}

/// The exponential (within 1 ulp for floats; within the bound of
/// [`Pair::exp`] for pairs).
pub trait ExpT: Copy {
    /// e^a
    fn expo(self) -> Self;
}

macro_rules! float_root_exp {
    ($t:ty, $exp:path) => {
        impl SqrtT for $t {
            #[inline(always)]
            fn root(self) -> Self {
                <$t>::sqrt(self)
            }
        }
        impl ExpT for $t {
            #[inline(always)]
            fn expo(self) -> Self {
                $exp(self)
            }
        }
    };
}
float_root_exp!(f32, crate::math::exp::exp_f32);
float_root_exp!(f64, crate::math::exp::exp_f64);

impl ExpT for Complex<f32> {
    /// e^(x + iy), each component within 1 ulp ([`crate::math::cexp`]).
    #[inline(always)]
    fn expo(self) -> Self {
        let (re, im) = crate::math::cexp::exp_c64(self.re, self.im);
        Complex::new(re, im)
    }
}

impl ExpT for Complex<f64> {
    /// e^(x + iy), each component within 1 ulp ([`crate::math::cexp`]).
    #[inline(always)]
    fn expo(self) -> Self {
        let (re, im) = crate::math::cexp::exp_c128(self.re, self.im);
        Complex::new(re, im)
    }
}

impl<T: PairFloat> Arith for Pair<T> {
    #[inline(always)]
    fn add(self, b: Self) -> Self {
        Pair::add(self, b)
    }
    #[inline(always)]
    fn sub(self, b: Self) -> Self {
        Pair::sub(self, b)
    }
    #[inline(always)]
    fn mul(self, b: Self) -> Self {
        Pair::mul(self, b)
    }
    #[inline(always)]
    fn div(self, b: Self) -> Self {
        Pair::div(self, b)
    }
    #[inline(always)]
    fn neg(self) -> Self {
        Pair::neg(self)
    }
}

impl<T: PairFloat> SqrtT for Pair<T> {
    #[inline(always)]
    fn root(self) -> Self {
        Pair::sqrt(self)
    }
}

impl<T: PairFloat> ExpT for Pair<T> {
    #[inline(always)]
    fn expo(self) -> Self {
        Pair::exp(self)
    }
}
