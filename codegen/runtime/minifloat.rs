//! Floats described by parameters (f16, bf16, the fp8/fp6/fp4 family, the
//! scale types), carried in f32. Decoding is exact; encoding rounds to nearest,
//! ties to even, keeps subnormals, and applies the dtype's overflow rule.

use super::codec::Codec;
use super::meta::{NanStyle, NanTo, Negative, Overflow};
use core::marker::PhantomData;

/// Storage of a code: u8 or u16.
pub trait CodeStore: Copy + 'static {
    /// Widen.
    fn to_u32(self) -> u32;
    /// Narrow (the code fits).
    fn from_u32(v: u32) -> Self;
}

impl CodeStore for u8 {
    #[inline(always)]
    fn to_u32(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_u32(v: u32) -> Self {
        v as u8
    }
}

impl CodeStore for u16 {
    #[inline(always)]
    fn to_u32(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_u32(v: u32) -> Self {
        v as u16
    }
}

/// The parameters of a float dtype, emitted from `spec/dtypes.toml`. The
/// generator checks that every value fits an f32 (exponent range and
/// precision), so decoding into f32 is exact.
pub trait MiniFloat: 'static {
    /// The storage of one code.
    type Store: CodeStore;
    /// Exponent field width.
    const EXP_BITS: u32;
    /// Mantissa field width (at most 22).
    const MAN_BITS: u32;
    /// Exponent bias.
    const BIAS: i32;
    /// Whether a sign bit sits above the magnitude bits.
    const SIGNED: bool;
    /// Whether exponent field 0 holds subnormals.
    const SUBNORMALS: bool;
    /// Whether the all-ones exponent with zero mantissa is infinity.
    const INFINITIES: bool;
    /// Which codes are NaN.
    const NAN: NanStyle;
    /// Whether the sign bit with a zero magnitude is -0.
    const NEG_ZERO: bool;
    /// The largest finite magnitude code.
    const MAX_CODE: u32;
    /// Overflow rule of the default cast mode.
    const OVERFLOW: Overflow;
    /// Overflow rule of the saturating cast mode.
    const OVERFLOW_SAT: Overflow;
    /// What a NaN becomes where there is no NaN code.
    const NAN_TO: NanTo;
    /// What a negative input becomes where there is no sign.
    const NEGATIVE: Negative;
}

/// 2^k as an f32, for k in [-149, 127] (subnormal powers included).
#[inline(always)]
pub const fn pow2f(k: i32) -> f32 {
    if k >= -126 {
        f32::from_bits(((k + 127) as u32) << 23)
    } else {
        f32::from_bits(1u32 << (k + 149))
    }
}

/// The f32 bits below which a dtype without subnormals is handled apart: the
/// smallest f32 normal or the dtype's smallest value, whichever is larger.
#[inline(always)]
fn lowest_normal_bits<P: MiniFloat>() -> u32 {
    let own = pow2f(-P::BIAS).to_bits();
    let f32_normal = pow2f(-126).to_bits();
    if own > f32_normal {
        own
    } else {
        f32_normal
    }
}

#[inline(always)]
const fn value_bits<P: MiniFloat>() -> u32 {
    P::EXP_BITS + P::MAN_BITS
}

/// The NaN code of sign `sign` (0 or 1), or the stand-in of `NAN_TO`.
#[inline(always)]
fn nan_code<P: MiniFloat>(sign: u32) -> u32 {
    let vb = value_bits::<P>();
    let sign_code = if P::SIGNED { sign << vb } else { 0 };
    match P::NAN {
        NanStyle::Ieee => {
            sign_code | (((1 << P::EXP_BITS) - 1) << P::MAN_BITS) | (1 << (P::MAN_BITS - 1))
        }
        NanStyle::AllOnes => sign_code | ((1 << vb) - 1),
        NanStyle::SignOnly => 1 << vb,
        NanStyle::None => match P::NAN_TO {
            NanTo::MaxFinite => sign_code | P::MAX_CODE,
            _ => 0,
        },
    }
}

/// Decode a code into its exact f32 value. Bits above the dtype's width are ignored.
#[inline(always)]
pub fn decode<P: MiniFloat>(code: u32) -> f32 {
    let vb = value_bits::<P>();
    let m_bits = P::MAN_BITS;
    let mag = code & ((1 << vb) - 1);
    let sign = if P::SIGNED { (code >> vb) & 1 } else { 0 };
    let e = mag >> m_bits;
    let m = mag & ((1 << m_bits) - 1);
    let emax_field = (1u32 << P::EXP_BITS) - 1;
    let value = if e == 0 {
        if P::SUBNORMALS {
            m as f32 * pow2f(1 - P::BIAS - m_bits as i32)
        } else {
            ((1 << m_bits) | m) as f32 * pow2f(-P::BIAS - m_bits as i32)
        }
    } else {
        f32::from_bits((((e as i32 - P::BIAS + 127) as u32) << 23) | (m << (23 - m_bits)))
    };
    let is_nan = match P::NAN {
        NanStyle::Ieee => e == emax_field && m != 0,
        NanStyle::AllOnes => mag == (1 << vb) - 1,
        NanStyle::SignOnly => sign == 1 && mag == 0,
        NanStyle::None => false,
    };
    let is_inf = P::INFINITIES && e == emax_field && m == 0;
    let body = if is_nan {
        0x7fc0_0000
    } else if is_inf {
        0x7f80_0000
    } else {
        value.to_bits()
    };
    f32::from_bits(body | (sign << 31))
}

/// Encode an f32 by rounding to nearest, ties to even, with the overflow rule of
/// the default (`SAT = false`) or saturating (`SAT = true`) cast mode.
///
/// Rounding works on the f32's bits: in the dtype's normal range the mantissa is
/// rounded by adding half an ulp (less one, plus the kept bit, for ties to even)
/// and shifting, which carries into the exponent; below the smallest normal the
/// value is added to 2^(emin - m + 23), whose ulp is the dtype's subnormal
/// spacing, so the f32 adder itself rounds to the subnormal grid.
#[inline(always)]
pub fn encode<P: MiniFloat, const SAT: bool>(x: f32) -> u32 {
    let vb = value_bits::<P>();
    let m_bits = P::MAN_BITS;
    let bits = x.to_bits();
    let sign = bits >> 31;
    let a = bits & 0x7fff_ffff;
    let is_nan = a > 0x7f80_0000;
    let negative_nan = !P::SIGNED && sign == 1 && a != 0 && matches!(P::NEGATIVE, Negative::Nan);
    let sign_code = if P::SIGNED { sign << vb } else { 0 };
    let rule = if SAT { P::OVERFLOW_SAT } else { P::OVERFLOW };

    let emin = 1 - P::BIAS;
    let rounded: u32 = if P::SUBNORMALS && emin >= -126 && a < pow2f(emin).to_bits() {
        let magic = pow2f(emin - m_bits as i32 + 23);
        (f32::from_bits(a) + magic).to_bits() - magic.to_bits()
    } else if !P::SUBNORMALS && a < lowest_normal_bits::<P>() {
        // Below the bits the shift rounding handles: the dtype's smallest value is
        // 2^-bias with no zero beneath it. With bias 127 the two smallest values are
        // 2^-127 and 2^-126, both below f32's normal range; ties go to the even code.
        if P::BIAS == 127 && f32::from_bits(a) > pow2f(-127) * 1.5 {
            1u32 << m_bits
        } else {
            0
        }
    } else {
        let shift = 23 - m_bits;
        let half = (1u32 << (shift - 1)) - 1;
        let r = (a + half + ((a >> shift) & 1)) >> shift;
        (r as i64 - (((127 - P::BIAS) as i64) << m_bits)) as u32
    };
    let is_inf = a == 0x7f80_0000;
    let overflow = is_inf || rounded > P::MAX_CODE;
    let over_code = match rule {
        Overflow::Infinity => sign_code | (((1 << P::EXP_BITS) - 1) << m_bits),
        Overflow::Nan => nan_code::<P>(sign),
        Overflow::MaxFinite => sign_code | P::MAX_CODE,
    };
    let finite_code = if !P::NEG_ZERO && rounded == 0 {
        0
    } else {
        sign_code | rounded
    };
    if is_nan || negative_nan {
        nan_code::<P>(sign)
    } else if overflow {
        over_code
    } else {
        finite_code
    }
}

/// The codec of a parameterised float: f32 carrier, default cast mode.
pub struct Mini<P>(PhantomData<P>);

impl<P: MiniFloat> Codec for Mini<P> {
    type Store = P::Store;
    type Carrier = f32;
    #[inline(always)]
    fn decode(s: P::Store) -> f32 {
        decode::<P>(s.to_u32())
    }
    #[inline(always)]
    fn encode(c: f32) -> P::Store {
        P::Store::from_u32(encode::<P, false>(c))
    }
}
