//! Casts between dtypes: the source decodes exactly into its carrier, the
//! destination rounds once from that exact value.
//!
//! - float → float: to nearest (ties by the destination's rule), subnormals kept,
//!   NaN stays NaN, overflow by the destination's rule of the cast mode. An f64
//!   source rounds once, never through f32.
//! - float → int: truncate toward zero, saturate, NaN → 0 (both modes).
//! - int → float: to nearest even (an i64/u64 beyond 2^53 first rounds to odd
//!   in f64, which keeps the final rounding correct for every narrower dtype).
//! - int → int: wrap to the destination's width (default) or clamp (saturating).
//! - bool → anything: 0 or 1; anything → bool: zero vs non-zero (NaN is true).
//! - complex → real: the real part; real → complex: a +0 imaginary part.
//! - pair (df32, dd64) → float, complex or bool: the exact value hi + lo
//!   rounded once (through f64 rounded to odd, which keeps the final rounding
//!   correct for every destination narrower than f64); → integer: the exact
//!   value truncated toward zero, saturated, NaN → 0; → pair: rounded to the
//!   destination's leading part, the remainder rounded once into its trailing
//!   part. Float, integer or bool → pair: the value rounded once into the
//!   leading part and the remainder into the trailing part (exact for every
//!   f32, f64, integer of up to 48 bits (df32) or any i64/u64 (dd64), and for
//!   an f64 into df32 within 2^-48 relative where no part is subnormal).
//!
//! The saturating mode clamps every value beyond the largest finite one,
//! infinities included, to ±max for float destinations, and clamps integers to
//! the destination's range; NaN handling is the destination's (NaN stays NaN
//! where the dtype has one).

use super::codec::{Bool, MiniComplex, NarrowInt, NarrowUint, Native};
use super::minifloat::{encode, encode_f64, Mini, MiniFloat};
use super::ops::Op1;
use crate::codec::Codec;
use crate::pair::Pair;
use core::marker::PhantomData;
use num_complex::Complex;

/// A destination of a cast: how each kind of exact source value rounds into it.
pub trait CastDst: Codec {
    /// From an f32 (the carrier of f32 and every narrow float).
    #[inline(always)]
    fn from_f32<const SAT: bool>(v: f32) -> Self::Store {
        Self::from_f64::<SAT>(v as f64)
    }
    /// From an f64.
    fn from_f64<const SAT: bool>(v: f64) -> Self::Store;
    /// From a signed integer.
    fn from_i64<const SAT: bool>(v: i64) -> Self::Store;
    /// From an unsigned integer.
    fn from_u64<const SAT: bool>(v: u64) -> Self::Store;
    /// From a bool.
    fn from_bool(v: bool) -> Self::Store;
    /// From a complex of f32: the real part, unless the destination is complex.
    #[inline(always)]
    fn from_c32<const SAT: bool>(v: Complex<f32>) -> Self::Store {
        Self::from_f32::<SAT>(v.re)
    }
    /// From a complex of f64.
    #[inline(always)]
    fn from_c64<const SAT: bool>(v: Complex<f64>) -> Self::Store {
        Self::from_f64::<SAT>(v.re)
    }
    /// From a double-float: by default its value rounded to odd in f64, then
    /// rounded as an f64 (correct for every destination narrower than f64).
    #[inline(always)]
    fn from_p32<const SAT: bool>(v: Pair<f32>) -> Self::Store {
        Self::from_f64::<SAT>(sum_to_odd(v.hi as f64, v.lo as f64))
    }
    /// From a double-double (as [`CastDst::from_p32`]).
    #[inline(always)]
    fn from_p64<const SAT: bool>(v: Pair<f64>) -> Self::Store {
        Self::from_f64::<SAT>(sum_to_odd(v.hi, v.lo))
    }
}

/// a + b rounded to odd in f64: the rounded-to-nearest sum where it is exact
/// (or not finite), else the neighbour of the exact sum whose last bit is 1,
/// so that one more rounding into a format of at most 51 bits is correct.
#[inline(always)]
pub fn sum_to_odd(a: f64, b: f64) -> f64 {
    let p = crate::pair::ts(a, b);
    let s = p.hi;
    if !s.is_finite() || p.lo == 0.0 || s.to_bits() & 1 == 1 {
        return s;
    }
    // The exact sum lies between s and its neighbour towards lo.
    let away = (p.lo > 0.0) == (s > 0.0);
    f64::from_bits(if away {
        s.to_bits() + 1
    } else {
        s.to_bits() - 1
    })
}

/// The exact value hi + lo (two f64) truncated toward zero, saturated to
/// i128's range; NaN gives 0.
#[inline(always)]
fn pair_trunc(hi: f64, lo: f64) -> i128 {
    if hi.is_nan() || lo.is_nan() {
        return 0;
    }
    const BIG: f64 = 1.7014118346046923e38; // 2^127
    if hi.abs() >= BIG / 2.0 || lo.abs() >= BIG / 2.0 {
        // Beyond every integer destination: the sign decides.
        let s = hi + lo;
        return if s > 0.0 { i128::MAX } else { i128::MIN };
    }
    let (th, tl) = (hi.trunc(), lo.trunc());
    let whole = th as i128 + tl as i128;
    // The fractional parts are exact, each in (-1, 1); their exact sum f is
    // fs + fe.
    let f = crate::pair::ts(hi - th, lo - tl);
    let fl = f.hi.floor();
    let g = if fl == f.hi && f.lo < 0.0 {
        fl - 1.0
    } else {
        fl
    };
    let base = whole + g as i128;
    // value = base + (f - g), 0 ≤ f - g < 1.
    let frac = !(g == f.hi && f.lo == 0.0);
    if base < 0 && frac {
        base + 1
    } else {
        base
    }
}

/// A pair truncated into an integer destination `D` (float → integer rules:
/// toward zero, saturating, NaN → 0).
#[inline(always)]
fn int_from_pair<D: CastDst>(hi: f64, lo: f64) -> D::Store {
    let v = pair_trunc(hi, lo);
    if v > i64::MAX as i128 {
        D::from_u64::<true>(v.min(u64::MAX as i128) as u64)
    } else {
        D::from_i64::<true>(v.max(i64::MIN as i128) as i64)
    }
}

/// Integer destinations take pairs by [`int_from_pair`].
macro_rules! int_pair_methods {
    () => {
        #[inline(always)]
        fn from_p32<const SAT: bool>(v: Pair<f32>) -> Self::Store {
            int_from_pair::<Self>(v.hi as f64, v.lo as f64)
        }
        #[inline(always)]
        fn from_p64<const SAT: bool>(v: Pair<f64>) -> Self::Store {
            int_from_pair::<Self>(v.hi, v.lo)
        }
    };
}

/// f64 destinations take a pair's value rounded once to nearest.
macro_rules! f64_pair_methods {
    (()) => {
        #[inline(always)]
        fn from_p32<const SAT: bool>(v: Pair<f32>) -> Self::Store {
            Self::from_f64::<SAT>(v.hi as f64 + v.lo as f64)
        }
        #[inline(always)]
        fn from_p64<const SAT: bool>(v: Pair<f64>) -> Self::Store {
            Self::from_f64::<SAT>(v.hi + v.lo)
        }
    };
}

/// f32 destinations take a df32's value as one f32 addition of its parts
/// (IEEE addition rounds the exact sum once: the same value as the default
/// path through f64 rounded to odd, without the f64 steps); a dd64's as
/// every other narrower destination does.
macro_rules! f32_pair_methods {
    (()) => {
        #[inline(always)]
        fn from_p32<const SAT: bool>(v: Pair<f32>) -> Self::Store {
            Self::from_f32::<SAT>(v.hi + v.lo)
        }
    };
}

macro_rules! pair_dst {
    ($t:ty, $from_int:ident) => {
        impl CastDst for Native<Pair<$t>> {
            /// An f32 is exact in either component: (v, +0).
            #[inline(always)]
            fn from_f32<const SAT: bool>(v: f32) -> Pair<$t> {
                Pair::new(<Native<$t>>::from_f32::<SAT>(v), 0.0)
            }
            #[inline(always)]
            fn from_f64<const SAT: bool>(v: f64) -> Pair<$t> {
                let hi = <Native<$t>>::from_f64::<SAT>(v);
                // An f64 is exact in a double-double's leading part.
                if core::mem::size_of::<$t>() == 8 || !(v as $t).is_finite() {
                    return Pair::new(hi, 0.0);
                }
                // v − hi is exact (Sterbenz, or hi = 0).
                Pair::new(hi, (v - hi as f64) as $t)
            }
            #[inline(always)]
            fn from_i64<const SAT: bool>(v: i64) -> Pair<$t> {
                $from_int(v as i128)
            }
            #[inline(always)]
            fn from_u64<const SAT: bool>(v: u64) -> Pair<$t> {
                $from_int(v as i128)
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Pair<$t> {
                Pair::new(v as u8 as $t, 0.0)
            }
            #[inline(always)]
            fn from_p32<const SAT: bool>(v: Pair<f32>) -> Pair<$t> {
                Self::from_p64::<SAT>(Pair::new(v.hi as f64, v.lo as f64))
            }
            /// The leading part: the exact value rounded once (by the
            /// component's own pair cast); the trailing part: the exact
            /// remainder rounded once. Any source pair, normalised or not.
            #[inline(always)]
            fn from_p64<const SAT: bool>(v: Pair<f64>) -> Pair<$t> {
                let hi = <Native<$t>>::from_p64::<SAT>(v);
                let clamped = SAT && !<Native<$t>>::from_p64::<false>(v).is_finite();
                if clamped || !hi.is_finite() || !(v.hi.is_finite() && v.lo.is_finite()) {
                    return Pair::new(hi, 0.0);
                }
                // v = s + e exactly; s − hi is exact (Sterbenz: s and hi both
                // round the same value, or hi = 0).
                let t = crate::pair::ts(v.hi, v.lo);
                Pair::new(
                    hi,
                    <Native<$t>>::from_f64::<false>(sum_to_odd(t.hi - hi as f64, t.lo)),
                )
            }
        }
    };
}

/// An integer into a double-float: the leading part rounded once, the
/// remainder (below 2^104, exact in f64) rounded once.
#[inline(always)]
fn p32_from_int(v: i128) -> Pair<f32> {
    let hi = v as f32;
    Pair::new(hi, ((v - hi as i128) as f64) as f32)
}

/// An integer of at most 64 bits into a double-double (exact).
#[inline(always)]
fn p64_from_int(v: i128) -> Pair<f64> {
    let hi = v as f64;
    Pair::new(hi, (v - hi as i128) as f64)
}

pair_dst!(f32, p32_from_int);
pair_dst!(f64, p64_from_int);

impl CastSrc for Pair<f32> {
    #[inline(always)]
    fn cast<D: CastDst, const SAT: bool>(self) -> D::Store {
        D::from_p32::<SAT>(self)
    }
}
impl CastSrc for Pair<f64> {
    #[inline(always)]
    fn cast<D: CastDst, const SAT: bool>(self) -> D::Store {
        D::from_p64::<SAT>(self)
    }
}

/// A carrier value that can be cast into any destination.
pub trait CastSrc: Copy {
    /// Round `self` into `D`'s storage.
    fn cast<D: CastDst, const SAT: bool>(self) -> D::Store;
}

macro_rules! src {
    ($t:ty, $via:ident, $conv:ty) => {
        impl CastSrc for $t {
            #[inline(always)]
            fn cast<D: CastDst, const SAT: bool>(self) -> D::Store {
                D::$via::<SAT>(self as $conv)
            }
        }
    };
}
src!(f32, from_f32, f32);
src!(f64, from_f64, f64);
src!(i8, from_i64, i64);
src!(i16, from_i64, i64);
src!(i32, from_i64, i64);
src!(i64, from_i64, i64);
src!(u8, from_u64, u64);
src!(u16, from_u64, u64);
src!(u32, from_u64, u64);
src!(u64, from_u64, u64);

impl CastSrc for bool {
    #[inline(always)]
    fn cast<D: CastDst, const SAT: bool>(self) -> D::Store {
        D::from_bool(self)
    }
}
impl CastSrc for Complex<f32> {
    #[inline(always)]
    fn cast<D: CastDst, const SAT: bool>(self) -> D::Store {
        D::from_c32::<SAT>(self)
    }
}
impl CastSrc for Complex<f64> {
    #[inline(always)]
    fn cast<D: CastDst, const SAT: bool>(self) -> D::Store {
        D::from_c64::<SAT>(self)
    }
}

/// i64 → f64 rounding to odd: exact below 2^53; otherwise the truncated value
/// with its last bit set when anything was dropped, so a second rounding to a
/// narrower float is correct.
#[inline(always)]
fn i64_to_f64_odd(v: i64) -> f64 {
    let mag = v.unsigned_abs();
    let f = u64_to_f64_odd(mag);
    if v < 0 {
        -f
    } else {
        f
    }
}

/// u64 → f64 rounding to odd (see [`i64_to_f64_odd`]).
#[inline(always)]
fn u64_to_f64_odd(v: u64) -> f64 {
    if v < (1u64 << 53) {
        return v as f64;
    }
    let lz = v.leading_zeros();
    let drop = 11 - lz; // bits below the 53 kept
    let kept = v >> drop;
    let sticky = (v & ((1u64 << drop) - 1) != 0) as u64;
    ((kept | sticky) as f64) * f64::from_bits(((drop as u64) + 1023) << 52)
}

/// The cast operation: `Op1<S, Raw-like D>` producing the destination's storage.
pub struct Cast<D, const SAT: bool>(PhantomData<D>);

/// The output codec of a cast: the destination's storage passed through.
pub struct CastOut<D>(PhantomData<D>);

impl<D: CastDst> Codec for CastOut<D> {
    type Store = D::Store;
    type Carrier = D::Store;
    #[inline(always)]
    fn decode(s: D::Store) -> D::Store {
        s
    }
    #[inline(always)]
    fn encode(c: D::Store) -> D::Store {
        c
    }
}

impl<S: Codec, D: CastDst, const SAT: bool> Op1<S, CastOut<D>> for Cast<D, SAT>
where
    S::Carrier: CastSrc,
{
    #[inline(always)]
    fn f(a: S::Carrier) -> D::Store {
        a.cast::<D, SAT>()
    }
}

// ------------------------------------------------------------- destinations

impl<P: MiniFloat> CastDst for Mini<P> {
    #[inline(always)]
    fn from_f32<const SAT: bool>(v: f32) -> P::Store {
        <Self as Codec>::Store::from_code(encode::<P, SAT>(v))
    }
    #[inline(always)]
    fn from_f64<const SAT: bool>(v: f64) -> P::Store {
        <Self as Codec>::Store::from_code(encode_f64::<P, SAT>(v))
    }
    #[inline(always)]
    fn from_i64<const SAT: bool>(v: i64) -> P::Store {
        Self::from_f64::<SAT>(i64_to_f64_odd(v))
    }
    #[inline(always)]
    fn from_u64<const SAT: bool>(v: u64) -> P::Store {
        Self::from_f64::<SAT>(u64_to_f64_odd(v))
    }
    #[inline(always)]
    fn from_bool(v: bool) -> P::Store {
        Self::from_f32::<false>(v as u8 as f32)
    }
}

/// Storage of a code, built from a u32 code.
trait FromCode {
    fn from_code(c: u32) -> Self;
}
impl<T: super::minifloat::CodeStore> FromCode for T {
    #[inline(always)]
    fn from_code(c: u32) -> Self {
        T::from_u32(c)
    }
}

macro_rules! float_dst {
    ($t:ty $(, $pairs:ident)?) => {
        impl CastDst for Native<$t> {
            $( $pairs!(()); )?
            #[inline(always)]
            fn from_f32<const SAT: bool>(v: f32) -> $t {
                Self::from_f64::<SAT>(v as f64)
            }
            #[inline(always)]
            fn from_f64<const SAT: bool>(v: f64) -> $t {
                let r = v as $t;
                if SAT && r.is_infinite() {
                    <$t>::MAX.copysign(r)
                } else {
                    r
                }
            }
            #[inline(always)]
            fn from_i64<const SAT: bool>(v: i64) -> $t {
                v as $t
            }
            #[inline(always)]
            fn from_u64<const SAT: bool>(v: u64) -> $t {
                v as $t
            }
            #[inline(always)]
            fn from_bool(v: bool) -> $t {
                v as u8 as $t
            }
        }
    };
}
float_dst!(f32, f32_pair_methods);
float_dst!(f64, f64_pair_methods);

/// f32 → an integer whose range lies inside i32's with bounds exact in f32
/// (i8, i16, u8, u16 and the 4-bit and 1-bit integers): NaN → 0, clamp, truncate.
/// The same result as Rust's saturating `as`, in a form that vectorises
/// (NaN test, max, min, one truncating convert).
#[inline(always)]
fn f32_to_small_int(v: f32, lo: f32, hi: f32) -> i32 {
    #[allow(clippy::eq_op)]
    let t = if v != v { 0.0 } else { v };
    // SAFETY: t is finite and within [lo, hi] ⊂ i32's range after the clamp.
    unsafe { t.max(lo).min(hi).to_int_unchecked::<i32>() }
}

/// Saturating f32 → i32 in a vectorisable form (see [`f32_to_small_int`]):
/// magnitudes from 2^31 up clamp to `i32::MAX`, which no f32 equals.
#[inline(always)]
fn f32_to_i32(v: f32) -> i32 {
    const BELOW_2_31: f32 = 2147483520.0; // the largest f32 below 2^31
    let r = f32_to_small_int(v, -2147483648.0, BELOW_2_31);
    if v >= 2147483648.0 {
        i32::MAX
    } else {
        r
    }
}

/// Saturating f32 → u32 in a vectorisable form: values from 2^31 convert after
/// subtracting 2^31 (exact) and get the top bit back.
#[inline(always)]
#[allow(clippy::manual_clamp)] // max/min of a non-NaN value: what vectorises
fn f32_to_u32(v: f32) -> u32 {
    const BELOW_2_32: f32 = 4294967040.0; // the largest f32 below 2^32
    #[allow(clippy::eq_op)]
    let t = if v != v { 0.0 } else { v };
    let t = t.max(0.0).min(BELOW_2_32);
    let big = t >= 2147483648.0;
    let s = if big { t - 2147483648.0 } else { t };
    // SAFETY: s is in [0, 2^31).
    let r = unsafe { s.to_int_unchecked::<i32>() } as u32;
    let r = if big { r | 0x8000_0000 } else { r };
    if v >= 4294967296.0 {
        u32::MAX
    } else {
        r
    }
}

/// How an f32 becomes each native integer (saturating, NaN → 0).
trait FromF32Sat {
    fn from_f32_sat(v: f32) -> Self;
}
macro_rules! small_from_f32 {
    ($($t:ty),*) => {$(
        impl FromF32Sat for $t {
            #[inline(always)]
            fn from_f32_sat(v: f32) -> $t {
                f32_to_small_int(v, <$t>::MIN as f32, <$t>::MAX as f32) as $t
            }
        }
    )*};
}
small_from_f32!(i8, i16, u8, u16);
impl FromF32Sat for i32 {
    #[inline(always)]
    fn from_f32_sat(v: f32) -> i32 {
        f32_to_i32(v)
    }
}
impl FromF32Sat for u32 {
    #[inline(always)]
    fn from_f32_sat(v: f32) -> u32 {
        f32_to_u32(v)
    }
}
impl FromF32Sat for i64 {
    #[inline(always)]
    fn from_f32_sat(v: f32) -> i64 {
        v as i64
    }
}
impl FromF32Sat for u64 {
    #[inline(always)]
    fn from_f32_sat(v: f32) -> u64 {
        v as u64
    }
}

macro_rules! int_dst {
    ($t:ty) => {
        impl CastDst for Native<$t> {
            int_pair_methods!();
            #[inline(always)]
            fn from_f32<const SAT: bool>(v: f32) -> $t {
                <$t as FromF32Sat>::from_f32_sat(v)
            }
            #[inline(always)]
            fn from_f64<const SAT: bool>(v: f64) -> $t {
                v as $t
            }
            #[inline(always)]
            fn from_i64<const SAT: bool>(v: i64) -> $t {
                if SAT {
                    let hi = (<$t>::MAX as i128).min(i64::MAX as i128) as i64;
                    v.clamp(<$t>::MIN as i128 as i64, hi) as $t
                } else {
                    v as $t
                }
            }
            #[inline(always)]
            fn from_u64<const SAT: bool>(v: u64) -> $t {
                if SAT {
                    v.min(<$t>::MAX as u64) as $t
                } else {
                    v as $t
                }
            }
            #[inline(always)]
            fn from_bool(v: bool) -> $t {
                v as $t
            }
        }
    };
}
int_dst!(i8);
int_dst!(i16);
int_dst!(i32);
int_dst!(i64);
int_dst!(u8);
int_dst!(u16);
int_dst!(u32);
int_dst!(u64);

impl<const BITS: u32> CastDst for NarrowInt<BITS> {
    int_pair_methods!();
    /// Directly in f32 (every bound is exact in f32): the same result as via f64.
    #[inline(always)]
    fn from_f32<const SAT: bool>(v: f32) -> u8 {
        let lo = -((1i32 << (BITS - 1)) as f32);
        let hi = ((1i32 << (BITS - 1)) - 1) as f32;
        <Self as Codec>::encode(f32_to_small_int(v, lo, hi) as i8)
    }
    #[inline(always)]
    fn from_f64<const SAT: bool>(v: f64) -> u8 {
        let lo = -((1i64 << (BITS - 1)) as f64);
        let hi = ((1i64 << (BITS - 1)) - 1) as f64;
        let t = if v.is_nan() {
            0.0
        } else {
            v.trunc().clamp(lo, hi)
        };
        <Self as Codec>::encode(t as i8)
    }
    #[inline(always)]
    fn from_i64<const SAT: bool>(v: i64) -> u8 {
        let w = if SAT {
            v.clamp(-(1i64 << (BITS - 1)), (1i64 << (BITS - 1)) - 1)
        } else {
            v
        };
        <Self as Codec>::encode(w as i8)
    }
    #[inline(always)]
    fn from_u64<const SAT: bool>(v: u64) -> u8 {
        let w = if SAT {
            v.min((1u64 << (BITS - 1)) - 1)
        } else {
            v
        };
        <Self as Codec>::encode(w as i8)
    }
    #[inline(always)]
    fn from_bool(v: bool) -> u8 {
        v as u8
    }
}

impl<const BITS: u32> CastDst for NarrowUint<BITS> {
    int_pair_methods!();
    /// Directly in f32 (every bound is exact in f32): the same result as via f64.
    #[inline(always)]
    fn from_f32<const SAT: bool>(v: f32) -> u8 {
        let hi = ((1u32 << BITS) - 1) as f32;
        f32_to_small_int(v, 0.0, hi) as u8
    }
    #[inline(always)]
    fn from_f64<const SAT: bool>(v: f64) -> u8 {
        let hi = ((1u64 << BITS) - 1) as f64;
        let t = if v.is_nan() {
            0.0
        } else {
            v.trunc().clamp(0.0, hi)
        };
        t as u8
    }
    #[inline(always)]
    fn from_i64<const SAT: bool>(v: i64) -> u8 {
        let w = if SAT {
            v.clamp(0, (1i64 << BITS) - 1)
        } else {
            v
        };
        <Self as Codec>::encode(w as u8)
    }
    #[inline(always)]
    fn from_u64<const SAT: bool>(v: u64) -> u8 {
        let w = if SAT { v.min((1u64 << BITS) - 1) } else { v };
        <Self as Codec>::encode(w as u8)
    }
    #[inline(always)]
    fn from_bool(v: bool) -> u8 {
        v as u8
    }
}

impl CastDst for Bool {
    #[inline(always)]
    fn from_f32<const SAT: bool>(v: f32) -> u8 {
        (v != 0.0) as u8
    }
    #[inline(always)]
    fn from_f64<const SAT: bool>(v: f64) -> u8 {
        (v != 0.0) as u8
    }
    #[inline(always)]
    fn from_i64<const SAT: bool>(v: i64) -> u8 {
        (v != 0) as u8
    }
    #[inline(always)]
    fn from_u64<const SAT: bool>(v: u64) -> u8 {
        (v != 0) as u8
    }
    #[inline(always)]
    fn from_bool(v: bool) -> u8 {
        v as u8
    }
    #[inline(always)]
    fn from_c32<const SAT: bool>(v: Complex<f32>) -> u8 {
        (v.re != 0.0 || v.im != 0.0) as u8
    }
    #[inline(always)]
    fn from_c64<const SAT: bool>(v: Complex<f64>) -> u8 {
        (v.re != 0.0 || v.im != 0.0) as u8
    }
}

macro_rules! complex_dst {
    ($t:ty) => {
        impl CastDst for Native<Complex<$t>> {
            #[inline(always)]
            fn from_p32<const SAT: bool>(v: Pair<f32>) -> Complex<$t> {
                Complex::new(<Native<$t>>::from_p32::<SAT>(v), 0.0)
            }
            #[inline(always)]
            fn from_p64<const SAT: bool>(v: Pair<f64>) -> Complex<$t> {
                Complex::new(<Native<$t>>::from_p64::<SAT>(v), 0.0)
            }
            #[inline(always)]
            fn from_f32<const SAT: bool>(v: f32) -> Complex<$t> {
                Complex::new(<Native<$t>>::from_f32::<SAT>(v), 0.0)
            }
            #[inline(always)]
            fn from_f64<const SAT: bool>(v: f64) -> Complex<$t> {
                Complex::new(<Native<$t>>::from_f64::<SAT>(v), 0.0)
            }
            #[inline(always)]
            fn from_i64<const SAT: bool>(v: i64) -> Complex<$t> {
                Complex::new(v as $t, 0.0)
            }
            #[inline(always)]
            fn from_u64<const SAT: bool>(v: u64) -> Complex<$t> {
                Complex::new(v as $t, 0.0)
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Complex<$t> {
                Complex::new(v as u8 as $t, 0.0)
            }
            #[inline(always)]
            fn from_c32<const SAT: bool>(v: Complex<f32>) -> Complex<$t> {
                Complex::new(
                    <Native<$t>>::from_f32::<SAT>(v.re),
                    <Native<$t>>::from_f32::<SAT>(v.im),
                )
            }
            #[inline(always)]
            fn from_c64<const SAT: bool>(v: Complex<f64>) -> Complex<$t> {
                Complex::new(
                    <Native<$t>>::from_f64::<SAT>(v.re),
                    <Native<$t>>::from_f64::<SAT>(v.im),
                )
            }
        }
    };
}
complex_dst!(f32);
complex_dst!(f64);

/// A complex of narrow floats: each part rounds as the part's own dtype does
/// (directly from the source's precision, one rounding), a real source's
/// imaginary part is +0. Pairs take the trait's rounding to odd through
/// [`CastDst::from_f64`].
impl<C: CastDst<Carrier = f32>> CastDst for MiniComplex<C> {
    #[inline(always)]
    fn from_f32<const SAT: bool>(v: f32) -> Self::Store {
        real_part::<C>(C::from_f32::<SAT>(v))
    }
    #[inline(always)]
    fn from_f64<const SAT: bool>(v: f64) -> Self::Store {
        real_part::<C>(C::from_f64::<SAT>(v))
    }
    #[inline(always)]
    fn from_i64<const SAT: bool>(v: i64) -> Self::Store {
        real_part::<C>(C::from_i64::<SAT>(v))
    }
    #[inline(always)]
    fn from_u64<const SAT: bool>(v: u64) -> Self::Store {
        real_part::<C>(C::from_u64::<SAT>(v))
    }
    #[inline(always)]
    fn from_bool(v: bool) -> Self::Store {
        real_part::<C>(C::from_bool(v))
    }
    #[inline(always)]
    fn from_c32<const SAT: bool>(v: Complex<f32>) -> Self::Store {
        Complex::new(C::from_f32::<SAT>(v.re), C::from_f32::<SAT>(v.im))
    }
    #[inline(always)]
    fn from_c64<const SAT: bool>(v: Complex<f64>) -> Self::Store {
        Complex::new(C::from_f64::<SAT>(v.re), C::from_f64::<SAT>(v.im))
    }
}

/// A complex code of `C`'s parts from a real part's code: the imaginary part
/// +0 (the same code in either mode).
#[inline(always)]
fn real_part<C: CastDst<Carrier = f32>>(re: C::Store) -> Complex<C::Store> {
    Complex::new(re, C::from_f32::<false>(0.0))
}
