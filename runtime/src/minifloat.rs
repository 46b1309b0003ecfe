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
    /// Whether ties round away from zero (else to even).
    const TIES_AWAY: bool;
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

/// 2^k as an f64, for k in [-1022, 1023].
#[inline(always)]
pub const fn pow2d(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
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
            NanTo::ZeroOppositeSign if P::SIGNED && P::NEG_ZERO => (sign ^ 1) << vb,
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
    let value = if P::BIAS == 127 && P::SUBNORMALS {
        // The dtype's binades are f32's (bf16): its bits are f32's top bits,
        // subnormals included, so no arithmetic (and no denormal multiply) is needed.
        f32::from_bits(mag << (23 - m_bits))
    } else if P::SUBNORMALS {
        // A normal code's bits are an f32's with the exponent rebiased (one
        // integer add); a subnormal code is its integer significand times the
        // subnormal spacing (exact, and no f32 subnormal passes through an
        // arithmetic instruction, which costs a microcode assist on some CPUs).
        let normal = f32::from_bits((mag << (23 - m_bits)) + (((127 - P::BIAS) as u32) << 23));
        let sub = mag as f32 * pow2f(1 - P::BIAS - m_bits as i32);
        if e == 0 {
            sub
        } else {
            normal
        }
    } else if e == 0 {
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

macro_rules! rounding_fns {
    ($round:ident, $encode:ident, $float:ty, $uint:ty, $man:expr, $bias:expr, $pow2:ident, $doc:literal) => {
        /// Round `mant · 2^-sh` to an integer: to nearest, ties to even or away from zero.
        #[inline(always)]
        fn $round(mant: $uint, sh: u32, ties_away: bool) -> $uint {
            if sh == 0 {
                return mant;
            }
            if sh > $man + 2 {
                return 0;
            }
            let q = mant >> sh;
            let rem = mant & ((1 << sh) - 1);
            let half: $uint = 1 << (sh - 1);
            let up = rem > half || (rem == half && (ties_away || q & 1 == 1));
            q + up as $uint
        }

        #[doc = $doc]
        ///
        /// Rounding is to nearest (ties to even, or away from zero where the spec
        /// says so) with subnormals kept, and the overflow rule of the default
        /// (`SAT = false`) or saturating (`SAT = true`) cast mode. The result is
        /// built as one continuous magnitude code: in the dtype's normal range the
        /// source mantissa is rounded by integer arithmetic on its bits (a carry
        /// moves into the exponent); below it the value is rounded to a multiple of
        /// the dtype's subnormal spacing, whose multiples are exactly the subnormal
        /// codes and the first normal one.
        #[inline(always)]
        pub fn $encode<P: MiniFloat, const SAT: bool>(x: $float) -> u32 {
            const SIGN_SHIFT: u32 = <$uint>::BITS - 1;
            const MAG: $uint = <$uint>::MAX >> 1;
            const INF: $uint = (((1 as $uint) << (SIGN_SHIFT - $man)) - 1) << $man;
            let vb = value_bits::<P>();
            let m_bits = P::MAN_BITS;
            let bits = x.to_bits();
            let sign = (bits >> SIGN_SHIFT) as u32;
            let a = bits & MAG;
            let is_nan = a > INF;
            let negative_nan =
                !P::SIGNED && sign == 1 && a != 0 && matches!(P::NEGATIVE, Negative::Nan);
            // Without subnormals there is no zero code: zero becomes NaN (as in ml_dtypes).
            let zero_nan = !P::SUBNORMALS && a == 0 && !matches!(P::NAN, NanStyle::None);
            let sign_code = if P::SIGNED { sign << vb } else { 0 };
            let rule = if SAT { P::OVERFLOW_SAT } else { P::OVERFLOW };
            let hidden: $uint = 1 << $man;
            // The source as mant · 2^exp2 with an integer mantissa.
            let (mant, exp2) = if a >= hidden {
                (
                    (a & (hidden - 1)) | hidden,
                    (a >> $man) as i32 - ($bias + $man),
                )
            } else {
                (a, 1 - ($bias + $man))
            };
            let bits_of = |e: i32| -> $uint { (((e + $bias) as $uint) << $man) };
            let emin = 1 - P::BIAS;
            let rounded: u32 = if P::SUBNORMALS && a < bits_of(emin) && !P::TIES_AWAY {
                // Multiples of the subnormal spacing 2^(emin - m) are the codes
                // themselves: adding 2^(emin - m + mantissa bits), whose ulp is that
                // spacing, makes the adder round to them (to nearest, ties to even).
                let magic = <$float>::from_bits(bits_of(emin - m_bits as i32 + $man));
                let _ = (mant, exp2);
                (<$float>::from_bits(a) + magic)
                    .to_bits()
                    .wrapping_sub(magic.to_bits()) as u32
            } else if P::SUBNORMALS && a < bits_of(emin) {
                // Ties away from zero: the same rounding in integers.
                let sh = (emin - m_bits as i32) - exp2;
                if sh <= 0 {
                    (mant << (-sh) as u32) as u32
                } else {
                    $round(mant, sh as u32, P::TIES_AWAY) as u32
                }
            } else if !P::SUBNORMALS && a < $pow2(1 - P::BIAS).to_bits() {
                // The lowest binade of a dtype without subnormals (its mantissa is
                // empty, no zero beneath): rounded as ml_dtypes does, as if it were
                // subnormal, on the grid of 2^(1-bias): a value above 2^-bias takes
                // 2^(1-bias), the rest 2^-bias.
                if a > $pow2(-P::BIAS).to_bits() {
                    1u32 << m_bits
                } else {
                    0
                }
            } else {
                let shift = $man - m_bits;
                let r = if P::TIES_AWAY {
                    $round(a, shift, true)
                } else {
                    // Ties to even: add half an ulp less one, plus the kept bit.
                    (a + ((1 as $uint) << (shift - 1)) - 1 + ((a >> shift) & 1)) >> shift
                };
                (r as i64 - ((($bias - P::BIAS) as i64) << m_bits)) as u32
            };
            let is_inf = a == INF;
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
            if is_nan || negative_nan || zero_nan {
                nan_code::<P>(sign)
            } else if overflow {
                over_code
            } else {
                finite_code
            }
        }
    };
}

rounding_fns!(
    round_shift32,
    encode_general,
    f32,
    u32,
    23,
    127,
    pow2f,
    "Encode an f32 into the dtype's code (one rounding): the general form, for\n/// any parameters; [`encode`] takes shorter forms where they apply."
);

/// Encode an f32 into the dtype's code (one rounding): to nearest (ties to even,
/// or away from zero where the spec says so), subnormals kept, and the overflow
/// rule of the default (`SAT = false`) or saturating (`SAT = true`) cast mode.
///
/// Three shapes of dtype take a shorter form with the same result for every
/// f32 (checked over all 2^32 inputs against [`encode_general`] by the ignored
/// tests): dtypes with subnormals and ties to even whose largest binade is small
/// enough ([`encode_graded`]), f32 with a shorter mantissa ([`encode_truncated`],
/// bf16), and powers of two with f32's exponent range ([`encode_pow2`]); every
/// other dtype uses [`encode_general`].
#[inline(always)]
pub fn encode<P: MiniFloat, const SAT: bool>(x: f32) -> u32 {
    if graded_applies::<P>() {
        encode_graded::<P, SAT>(x)
    } else if truncated_applies::<P>() {
        encode_truncated::<P, SAT>(x)
    } else if pow2_applies::<P>() {
        encode_pow2::<P, SAT>(x)
    } else {
        encode_general::<P, SAT>(x)
    }
}

/// The exponent of the dtype's largest finite value.
#[inline(always)]
const fn emax<P: MiniFloat>() -> i32 {
    (P::MAX_CODE >> P::MAN_BITS) as i32 - P::BIAS
}

/// Whether [`encode_graded`] serves `P`: subnormals, ties to even, and an adder
/// 2^(emax + 23 - m) that is a finite f32.
#[inline(always)]
pub const fn graded_applies<P: MiniFloat>() -> bool {
    P::SUBNORMALS && !P::TIES_AWAY && emax::<P>() + 23 - (P::MAN_BITS as i32) <= 127
}

/// Whether [`encode_pow2`] serves `P`: 8 exponent bits of bias 127, no mantissa,
/// no subnormals (e8m0fnu).
#[inline(always)]
pub const fn pow2_applies<P: MiniFloat>() -> bool {
    !P::SUBNORMALS && P::BIAS == 127 && P::EXP_BITS == 8 && P::MAN_BITS == 0
}

/// Whether [`encode_truncated`] serves `P`: f32's exponent field and bias with
/// subnormals, a shorter mantissa, ties to even (bf16).
#[inline(always)]
pub const fn truncated_applies<P: MiniFloat>() -> bool {
    P::SUBNORMALS && !P::TIES_AWAY && P::BIAS == 127 && P::EXP_BITS == 8 && P::MAN_BITS < 23
}

/// [`encode`] for f32 with a shorter mantissa (bf16): the dtype's codes are the
/// top bits of f32's, subnormals included, so rounding the bits to nearest
/// (adding half less one plus the kept last bit) rounds the value; a carry
/// moves into the exponent, up to infinity, which the overflow rule replaces.
#[inline(always)]
pub fn encode_truncated<P: MiniFloat, const SAT: bool>(x: f32) -> u32 {
    let shift = 23 - P::MAN_BITS;
    let bits = x.to_bits();
    let sign = bits >> 31;
    let a = bits & 0x7fff_ffff;
    let r = (a + (1 << (shift - 1)) - 1 + ((a >> shift) & 1)) >> shift;
    let rule = if SAT { P::OVERFLOW_SAT } else { P::OVERFLOW };
    let mag = clamp_magnitude::<P>(r, overflow_magnitude::<P>(rule));
    let sign_code = if P::SIGNED {
        sign << value_bits::<P>()
    } else {
        0
    };
    let negative_nan = !P::SIGNED && matches!(P::NEGATIVE, Negative::Nan) && sign == 1 && a != 0;
    if a > 0x7f80_0000 || negative_nan {
        nan_code::<P>(sign)
    } else {
        mag | sign_code
    }
}

/// The magnitude code an overflow takes under `rule`.
#[inline(always)]
fn overflow_magnitude<P: MiniFloat>(rule: Overflow) -> u32 {
    match rule {
        Overflow::Infinity => ((1 << P::EXP_BITS) - 1) << P::MAN_BITS,
        Overflow::Nan => nan_code::<P>(0),
        Overflow::MaxFinite => P::MAX_CODE,
    }
}

/// Clamp a magnitude code that may exceed `MAX_CODE` to the overflow magnitude
/// `over`: a `min` where `over` is `MAX_CODE` or the next code, a select otherwise.
#[inline(always)]
fn clamp_magnitude<P: MiniFloat>(code: u32, over: u32) -> u32 {
    if over == P::MAX_CODE || over == P::MAX_CODE + 1 {
        code.min(over)
    } else if code > P::MAX_CODE {
        over
    } else {
        code
    }
}

/// [`encode`] for dtypes with subnormals and ties to even: one rounding for
/// every binade. With E the source's exponent clamped to [emin, emax], adding
/// 2^(E + 23 - m) (whose ulp is the dtype's spacing 2^(E - m) in that binade)
/// rounds |x| to that spacing in the adder, and the bits of the sum minus the
/// adder's count the spacings: the significand with its hidden bit, so the code
/// is (E - emin)·2^m plus that count. A source above the largest binade, an
/// infinity or a NaN gives a count beyond `MAX_CODE`, which the overflow rule
/// then replaces.
#[inline(always)]
pub fn encode_graded<P: MiniFloat, const SAT: bool>(x: f32) -> u32 {
    let m = P::MAN_BITS;
    let vb = value_bits::<P>();
    let bits = x.to_bits();
    let sign = bits >> 31;
    let a = bits & 0x7fff_ffff;
    let emin_bits = ((1 - P::BIAS + 127) as u32) << 23;
    let emax_bits = ((emax::<P>() + 127) as u32) << 23;
    // max then min (not `clamp`): two vector instructions.
    #[allow(clippy::manual_clamp)]
    let e = (a & 0x7f80_0000).max(emin_bits).min(emax_bits);
    let adder = e + ((23 - m) << 23);
    let count = (f32::from_bits(a) + f32::from_bits(adder))
        .to_bits()
        .wrapping_sub(adder);
    let code = ((e - emin_bits) >> (23 - m)) + count;
    let rule = if SAT { P::OVERFLOW_SAT } else { P::OVERFLOW };
    let mag = clamp_magnitude::<P>(code, overflow_magnitude::<P>(rule));
    let sign_code = if P::SIGNED { sign << vb } else { 0 };
    // -0 only where the dtype has it (a sign-only NaN code holds the sign bit
    // itself, so OR-ing the sign in is harmless there).
    let signed = if P::NEG_ZERO {
        sign_code
    } else {
        sign_code & 0u32.wrapping_sub((mag != 0) as u32)
    };
    let r = mag | signed;
    // A NaN source already took the overflow code; that is its result where
    // the overflow rule is NaN.
    let nan_by_overflow = matches!(rule, Overflow::Nan) && !matches!(P::NAN, NanStyle::None);
    let negative_nan = !P::SIGNED && matches!(P::NEGATIVE, Negative::Nan) && sign == 1 && a != 0;
    if (!nan_by_overflow && a > 0x7f80_0000) || negative_nan {
        nan_code::<P>(sign)
    } else {
        r
    }
}

/// [`encode`] for powers of two with f32's exponent range and no zero
/// (e8m0fnu): the exponent rounded from the bits by adding half a binade (less
/// one, plus the exponent's last bit for ties to even; exactly half for ties
/// away). An f32 subnormal takes the lowest code by the same sum with half less
/// one (above 2^-127 → code 1, else 0), as [`encode_general`]'s lowest-binade
/// rule states; zero, a negative value and NaN are NaN.
#[inline(always)]
pub fn encode_pow2<P: MiniFloat, const SAT: bool>(x: f32) -> u32 {
    let bits = x.to_bits();
    let a = bits & 0x7fff_ffff;
    let tie = if P::TIES_AWAY {
        (a >= 0x80_0000) as u32
    } else {
        (a >> 23) & 1
    };
    let r = (a + 0x3f_ffff + tie) >> 23;
    let rule = if SAT { P::OVERFLOW_SAT } else { P::OVERFLOW };
    let r = clamp_magnitude::<P>(r, overflow_magnitude::<P>(rule));
    let is_nan = a > 0x7f80_0000;
    let zero_nan = a == 0 && !matches!(P::NAN, NanStyle::None);
    let negative_nan =
        !P::SIGNED && (bits >> 31) == 1 && a != 0 && matches!(P::NEGATIVE, Negative::Nan);
    if is_nan || zero_nan || negative_nan {
        nan_code::<P>(bits >> 31)
    } else {
        r
    }
}
rounding_fns!(
    round_shift64,
    encode_f64,
    f64,
    u64,
    52,
    1023,
    pow2d,
    "Encode an f64 into the dtype's code (one rounding, never through f32)."
);

/// Code that is generic over a dtype's parameters, run for a dtype chosen at run
/// time by the generated `codecs::visit_params` (so tests and tools reach every
/// parameterised dtype without naming its type: a new dtype in the spec is
/// covered with no Rust edit). `D` is the dtype identifier the visit is given
/// (the generated `DType`).
pub trait ParamsVisitor<D> {
    /// What the visit returns.
    type Out;
    /// Run with the dtype's parameters.
    fn visit<P: MiniFloat>(self, dtype: D) -> Self::Out;
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
