//! An independent model of the parameterised floats (f16, bf16, the fp8, fp6
//! and fp4 families, e8m0fnu, ue4m3), built from nothing but the `FloatInfo`
//! parameters of the catalogue and the rules of spec/dtypes.toml:
//!
//! * decoding: value = ±(1 + m/2^M)·2^(e−bias) for a normal code,
//!   ±(m/2^M)·2^(1−bias) for a subnormal one, NaN and infinity codes by the
//!   dtype's `NanStyle` and `infinities`, in f64 arithmetic;
//! * encoding: the nearest value in the sorted list of every finite code's value
//!   (binary search); a tie goes to the even code, or to the larger magnitude
//!   where the dtype's rounding is nearest-away. Then the overflow rule: a
//!   magnitude beyond max_finite + ulp/2 (ulp of the top binade), or at exactly
//!   that point when the tie goes past the largest code, becomes what the cast
//!   mode's `Overflow` says. NaN follows `NanStyle`, or `NanTo` where there is
//!   no NaN code (`ZeroOppositeSign`: the zero whose sign is the NaN's
//!   flipped). A negative input to an unsigned dtype follows `Negative` (−0 is
//!   a zero, not a negative). A zero result of a dtype without −0 is +0.
//!
//! A dtype without subnormals has no zero (e8m0fnu: the powers of two 2^−127
//! … 2^127, NaN at 0xff): by spec/dtypes.toml a zero input becomes NaN, and by
//! the nearest-value rule any other magnitude below 2^−127 becomes 2^−127.
//! One departure from the nearest-value rule is modelled on purpose, because
//! the spec's stated intent is to match ml_dtypes bit for bit and ml_dtypes
//! (float8.h, `ConvertImpl`) rounds magnitudes below 2^(1−bias) as if the
//! lowest binade were subnormal: on the grid of multiples of 2^(1−bias), ties
//! to even. So 2^−127 < x < 1.5·2^−127 becomes 2^−126 although 2^−127 is
//! nearer; at most 2^−127 stays 2^−127. The nearest-value rule of the spec
//! does not say this (a spec gap, reported).

use crate::binary64::{exponent, pow2};
use std::sync::OnceLock;
use tessera::{Class, DType, NanStyle, NanTo, Negative, Overflow};

/// The model of one parameterised float dtype.
#[derive(Clone, Debug)]
pub struct MiniOracle {
    /// The dtype.
    pub dtype: DType,
    /// Exponent field bits.
    pub e: u32,
    /// Mantissa field bits.
    pub m: u32,
    /// Bias.
    pub bias: i32,
    /// Whether a sign bit exists (above the magnitude bits).
    pub signed: bool,
    /// Whether exponent field 0 is subnormal.
    pub subnormals: bool,
    /// Whether infinities exist.
    pub infinities: bool,
    /// NaN codes.
    pub nan: NanStyle,
    /// Whether −0 exists.
    pub negative_zero: bool,
    /// Whether a tie rounds to the larger magnitude (else to the even code).
    pub ties_away: bool,
    /// Whether some code is zero.
    pub has_zero: bool,
    /// Overflow rule of the default (index 0) and saturating (index 1) cast mode.
    pub overflow: [Overflow; 2],
    /// What NaN becomes without a NaN code.
    pub nan_to: NanTo,
    /// What a negative input becomes in an unsigned dtype.
    pub negative: Negative,
    /// Bits of a code (exponent, mantissa, sign where there is one).
    pub code_bits: u32,
    /// Every non-negative finite value with its magnitude code, ascending.
    pub finite: Vec<(f64, u32)>,
    /// The largest finite magnitude code.
    pub max_code: u32,
    /// The largest finite value.
    pub max: f64,
    /// max + half an ulp of the top binade.
    pub overflow_threshold: f64,
}

/// The models of every dtype they apply to, by `DType as usize`.
pub fn minis() -> &'static [Option<MiniOracle>] {
    static M: OnceLock<Vec<Option<MiniOracle>>> = OnceLock::new();
    M.get_or_init(|| DType::ALL.iter().map(|&d| MiniOracle::new(d)).collect())
}

/// The model of a parameterised float dtype, or None (f32, f64, non-floats).
pub fn mini(d: DType) -> Option<&'static MiniOracle> {
    minis()[d as usize].as_ref()
}

impl MiniOracle {
    /// The model of `d`, if it is a float of at most 16 bits.
    pub fn new(d: DType) -> Option<MiniOracle> {
        let info = d.info();
        if info.class != Class::Float || info.bits > 16 {
            return None;
        }
        let f = info.float.expect("a float dtype has float parameters");
        let code_bits = f.exponent_bits + f.mantissa_bits + f.signed as u32;
        let mut o = MiniOracle {
            dtype: d,
            e: f.exponent_bits,
            m: f.mantissa_bits,
            bias: f.bias,
            signed: f.signed,
            subnormals: f.subnormals,
            infinities: f.infinities,
            nan: f.nan,
            negative_zero: f.negative_zero,
            ties_away: f.ties_away,
            has_zero: false,
            overflow: [f.overflow_default, f.overflow_saturating],
            nan_to: f.nan_to,
            negative: f.negative,
            code_bits,
            finite: Vec::new(),
            max_code: 0,
            max: 0.0,
            overflow_threshold: 0.0,
        };
        let vb = o.e + o.m;
        for mag in 0..(1u32 << vb) {
            let v = o.decode_parts(mag, false);
            if v.is_finite() {
                o.finite.push((v, mag));
            }
        }
        for w in o.finite.windows(2) {
            assert!(
                w[0].0 < w[1].0,
                "{}: values not increasing with the code",
                info.name
            );
        }
        let &(max, max_code) = o.finite.last().expect("some finite value");
        o.has_zero = o.finite[0].0 == 0.0;
        o.max = max;
        o.max_code = max_code;
        let top = exponent(max);
        o.overflow_threshold = max + pow2(top - o.m as i64) / 2.0;
        Some(o)
    }

    fn decode_parts(&self, mag: u32, neg: bool) -> f64 {
        let vb = self.e + self.m;
        let ef = mag >> self.m;
        let mf = mag & ((1 << self.m) - 1);
        let all_ones = (1u32 << self.e) - 1;
        let is_nan = match self.nan {
            NanStyle::Ieee => ef == all_ones && mf != 0,
            NanStyle::AllOnes => mag == (1 << vb) - 1,
            NanStyle::SignOnly => neg && mag == 0,
            NanStyle::None => false,
        };
        // Negation flips the sign bit, NaN's included (a product would not).
        let s = |v: f64| if neg { -v } else { v };
        if is_nan {
            return s(f64::NAN);
        }
        if self.infinities && ef == all_ones && mf == 0 {
            return s(f64::INFINITY);
        }
        let v = if ef == 0 && self.subnormals {
            mf as f64 * pow2(1 - self.bias as i64 - self.m as i64)
        } else {
            ((1u64 << self.m) + mf as u64) as f64
                * pow2(ef as i64 - self.bias as i64 - self.m as i64)
        };
        s(v)
    }

    /// The value of a code (bits above the code's width are ignored); NaN codes
    /// give a NaN with the code's sign.
    pub fn decode(&self, code: u32) -> f64 {
        let vb = self.e + self.m;
        let mag = code & ((1 << vb) - 1);
        let neg = self.signed && (code >> vb) & 1 == 1;
        self.decode_parts(mag, neg)
    }

    /// Whether a code is NaN.
    pub fn is_nan_code(&self, code: u32) -> bool {
        self.decode(code).is_nan()
    }

    fn sign_bit(&self, neg: bool) -> u32 {
        if self.signed && neg {
            1 << (self.e + self.m)
        } else {
            0
        }
    }

    /// The code a NaN input becomes (one NaN code, or NanTo's stand-in).
    pub fn nan_code(&self, neg: bool) -> u32 {
        let vb = self.e + self.m;
        match self.nan {
            NanStyle::Ieee => self.sign_bit(neg) | (((1 << self.e) - 1) << self.m) | 1,
            NanStyle::AllOnes => self.sign_bit(neg) | ((1 << vb) - 1),
            NanStyle::SignOnly => 1 << vb,
            NanStyle::None => match self.nan_to {
                NanTo::Zero => 0,
                NanTo::MaxFinite => self.sign_bit(neg) | self.max_code,
                NanTo::ZeroOppositeSign => self.sign_bit(!neg),
                NanTo::Nan => panic!("{:?}: no NaN code and nan_to = nan", self.dtype),
            },
        }
    }

    /// How many finite values are below a >= 0.
    pub fn below(&self, a: f64) -> usize {
        self.finite.partition_point(|&(v, _)| v < a)
    }

    /// The magnitude code nearest to a >= 0 (finite), or None when it overflows;
    /// `below` is `self.below(a)` where the caller knows it.
    fn nearest(&self, a: f64, below: Option<usize>) -> Option<u32> {
        let t = &self.finite;
        let i = below.unwrap_or_else(|| self.below(a));
        if i == t.len() {
            if a < self.overflow_threshold {
                return Some(self.max_code);
            }
            if a == self.overflow_threshold && !self.ties_away && self.max_code.is_multiple_of(2) {
                return Some(self.max_code);
            }
            return None;
        }
        if t[i].0 == a {
            return Some(t[i].1);
        }
        if !self.has_zero && a < t[1].0 {
            // Below the second value: ml_dtypes' grid of multiples of t[1].0
            // (see the module's documentation), ties to the even code 0.
            return Some(if a > t[1].0 / 2.0 { t[1].1 } else { t[0].1 });
        }
        if i == 0 {
            return Some(t[0].1);
        }
        let (lo, lc) = t[i - 1];
        let (hi, hc) = t[i];
        let mid = (lo + hi) / 2.0; // exact: both have few significant bits
                                   // Below the midpoint the lower neighbour; above it, or on it when ties
                                   // go away from zero or the upper code is the even one, the upper one.
        let up = a > mid || (a == mid && (self.ties_away || !lc.is_multiple_of(2)));
        Some(if up { hc } else { lc })
    }

    /// Encode x in the default (`sat = false`) or saturating cast mode.
    pub fn encode(&self, x: f64, sat: bool) -> u32 {
        self.encode_at(x, sat, None)
    }

    /// As `encode`, given `self.below(|x|)` (sweeps in increasing magnitude keep
    /// it as a cursor instead of searching for it).
    pub fn encode_at(&self, x: f64, sat: bool, below: Option<usize>) -> u32 {
        if x.is_nan() {
            return self.nan_code(x.is_sign_negative());
        }
        let mut x = x;
        if !self.signed && x < 0.0 {
            match self.negative {
                Negative::Nan => return self.nan_code(false),
                Negative::Abs => x = -x,
                Negative::Keep => panic!("{:?}: unsigned with negative = keep", self.dtype),
            }
        }
        if x == 0.0 && !self.has_zero {
            return self.nan_code(false);
        }
        let neg = self.signed && x.is_sign_negative();
        let a = x.abs();
        let mag = if a.is_infinite() {
            None
        } else {
            self.nearest(a, below)
        };
        match mag {
            None => match self.overflow[sat as usize] {
                Overflow::Infinity => {
                    assert!(
                        self.infinities,
                        "{:?}: overflow to infinity without one",
                        self.dtype
                    );
                    self.sign_bit(neg) | (((1 << self.e) - 1) << self.m)
                }
                Overflow::Nan => self.nan_code(neg),
                Overflow::MaxFinite => self.sign_bit(neg) | self.max_code,
            },
            Some(mc) => {
                if self.decode(mc) == 0.0 {
                    self.sign_bit(neg && self.negative_zero)
                } else {
                    self.sign_bit(neg) | mc
                }
            }
        }
    }

    /// Every code of the dtype (the code's width, nothing above it).
    pub fn codes(&self) -> impl Iterator<Item = u32> {
        0..(1u32 << self.code_bits)
    }
}
