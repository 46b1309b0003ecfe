//! Pair arithmetic: a value held as the unevaluated sum `hi + lo` of two
//! floats of one format (double-float for f32, double-double for f64), and
//! the error-free transformations it is built from. The one home of these
//! operations: the spec's pair kinds (`two_sum`, `two_prod`, pair `add`, …),
//! the casts into and out of the pair dtypes and the hand-written engines that
//! accumulate in pairs all call the functions here.
//!
//! Notation: `p` is the component's precision (24 for f32, 53 for f64) and
//! `u = 2^-p` its unit roundoff. A pair is *normalised* when `hi` is the
//! component nearest `hi + lo` (so |lo| ≤ ulp(hi)/2); every operation here
//! returns a normalised pair, and its stated bound assumes normalised
//! operands and finite results in the normal range (no bound is claimed where
//! `lo` would be subnormal).
//!
//! **Nothing here can be reassociated.** Each function is a fixed sequence of
//! IEEE additions, subtractions, multiplications, divisions, square roots and
//! fused multiply-adds (`mul_add`, only where written): Rust gives float
//! operators no licence to reorder (there is no fast-math mode; the unstable
//! `fadd_fast` intrinsics are not used), and no tier crate enables one, so
//! `(a - (s - bb)) + (b - bb)` is evaluated exactly as written on every tier.
//! The tests check the identities `a + b = s + e` and `a·b = p + e` in exact
//! arithmetic on every tier, which a reassociating build would break.
//!
//! **Non-finite values.** Where an operation's leading result is not finite
//! (an overflow, an infinite or NaN operand), the result is the plain
//! operation on the leading parts with a zero trailing part: `inf + 0`,
//! `NaN + 0`, so the trailing part never holds a NaN made by the algorithm.

use core::ops::{Add, Div, Mul, Neg, Sub};

/// A value `hi + lo` held as two floats of one format.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pair<T> {
    /// The leading part: the component nearest the value when normalised.
    pub hi: T,
    /// The trailing part.
    pub lo: T,
}

impl<T> Pair<T> {
    /// The pair `hi + lo`, stored as given (not normalised).
    #[inline(always)]
    pub const fn new(hi: T, lo: T) -> Pair<T> {
        Pair { hi, lo }
    }
}

/// A component format of pairs: f32 or f64.
pub trait PairFloat:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + 'static
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// Two.
    const TWO: Self;
    /// 1 / ln 2 rounded.
    const INV_LN2: Self;
    /// ln 2 rounded to p − 12 bits (k·L1 is exact for every |k| < 2^11).
    const LN2_1: Self;
    /// The rest of ln 2 as a pair (L2 + L3).
    const LN2_23: Pair<Self>;
    /// Where the exponential overflows (above it, +inf).
    const EXP_OVER: Self;
    /// Where the exponential underflows to +0 (below it).
    const EXP_UNDER: Self;
    /// The halvings of the reduced argument before the Taylor series.
    const EXP_HALVINGS: u32;
    /// 2^-EXP_HALVINGS.
    const EXP_SCALE: Self;
    /// 1/n! for n = 2.. as pairs (the series' coefficients, highest last).
    const EXP_COEF: &'static [Pair<Self>];
    /// a × b + c with one rounding.
    fn fma(self, b: Self, c: Self) -> Self;
    /// Correctly rounded square root.
    fn sqrt(self) -> Self;
    /// Round half to even to an integer value.
    fn rint(self) -> Self;
    /// Whether the value is finite.
    fn finite(self) -> bool;
    /// 2^n for an integral `n` within the normal exponent range.
    fn pow2(n: Self) -> Self;
    /// The exponential of the component format (within 1 ulp).
    fn exp1(self) -> Self;
}

macro_rules! pair_float {
    ($t:ty, $bits:ty, $mant:expr, $exp1:path, $rint:path,
     inv_ln2 = $inv:expr, ln2 = ($l1:expr, $l2:expr, $l3:expr),
     over = $over:expr, under = $under:expr, halvings = $h:expr,
     coef = [$(($ch:expr, $cl:expr)),* $(,)?]) => {
        // The constants are exact values of the component, written with the
        // digits that show it.
        #[allow(clippy::excessive_precision)]
        impl PairFloat for $t {
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            const TWO: $t = 2.0;
            const INV_LN2: $t = $inv;
            const LN2_1: $t = $l1;
            const LN2_23: Pair<$t> = Pair { hi: $l2, lo: $l3 };
            const EXP_OVER: $t = $over;
            const EXP_UNDER: $t = $under;
            const EXP_HALVINGS: u32 = $h;
            const EXP_SCALE: $t = 1.0 / (1u32 << $h) as $t;
            const EXP_COEF: &'static [Pair<$t>] = &[$(Pair { hi: $ch, lo: $cl }),*];
            #[inline(always)]
            fn fma(self, b: $t, c: $t) -> $t {
                self.mul_add(b, c)
            }
            #[inline(always)]
            fn sqrt(self) -> $t {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn rint(self) -> $t {
                $rint(self)
            }
            #[inline(always)]
            fn finite(self) -> bool {
                self.is_finite()
            }
            #[inline(always)]
            fn pow2(n: $t) -> $t {
                let bias = <$t>::MAX_EXP - 1;
                <$t>::from_bits(((n as i32 + bias) as $bits) << $mant)
            }
            #[inline(always)]
            fn exp1(self) -> $t {
                $exp1(self)
            }
        }
    };
}

pair_float!(
    f32,
    u32,
    23,
    crate::math::exp::exp_f32,
    crate::math::prim::rint_f32,
    inv_ln2 = core::f32::consts::LOG2_E,
    ln2 = (0.693_115_234_375_f32, 3.194_618_3e-5_f32, 1.646_595e-12_f32),
    over = 88.722_84_f32,
    under = -103.972_08_f32,
    halvings = 4,
    coef = [
        (0.5, 0.0),
        (0.166_666_67, -4.967_053_9e-9),
        (0.041_666_668, -1.241_763_5e-9),
        (0.008_333_334, -4.346_172e-10),
        (0.001_388_888_9, -3.363_109_4e-11),
    ]
);

pair_float!(
    f64,
    u64,
    52,
    crate::math::exp::exp_f64,
    crate::math::prim::rint_f64,
    inv_ln2 = core::f64::consts::LOG2_E,
    ln2 = (
        0.6931471805601177,
        -1.7239444525614835e-13,
        1.94704509238075e-31
    ),
    over = 709.782712893384,
    under = -745.1332191019412,
    halvings = 4,
    coef = [
        (0.5, 0.0),
        (0.16666666666666666, 9.25185853854297e-18),
        (0.041666666666666664, 2.3129646346357427e-18),
        (0.008333333333333333, 1.1564823173178714e-19),
        (0.001388888888888889, -5.300543954373577e-20),
        (0.0001984126984126984, 1.7209558293420705e-22),
        (2.48015873015873e-05, 2.1511947866775882e-23),
        (2.7557319223985893e-06, -1.858393274046472e-22),
        (2.755731922398589e-07, 2.3767714622250297e-23),
        (2.505210838544172e-08, -1.448814070935912e-24),
        (2.08767569878681e-09, -1.20734505911326e-25),
        (1.6059043836821613e-10, 1.2585294588752098e-26),
    ]
);

/// `a + b` exactly, as the rounded sum and its error, for any finite `a`
/// and `b` (Knuth's TwoSum, 6 operations, and one more that makes an exact
/// zero error +0). Where the sum is not finite the error is +0.
#[inline(always)]
pub fn two_sum<T: PairFloat>(a: T, b: T) -> Pair<T> {
    let p = ts(a, b);
    finite_or(
        Pair {
            hi: p.hi,
            lo: p.lo + T::ZERO,
        },
        p.hi,
    )
}

/// `a + b` exactly for |a| ≥ |b| or a = 0 (Dekker's FastTwoSum, 3
/// operations, and one that makes an exact zero error +0); for other
/// operands the pair is not exact (and no bound is claimed). Where the sum is
/// not finite the error is +0.
#[inline(always)]
pub fn fast_two_sum<T: PairFloat>(a: T, b: T) -> Pair<T> {
    let p = fts(a, b);
    finite_or(
        Pair {
            hi: p.hi,
            lo: p.lo + T::ZERO,
        },
        p.hi,
    )
}

/// `a · b` exactly, as the rounded product and its error (one fused
/// multiply-add), where the product's error is representable (no underflow
/// below 2^(emin + p)); where the product is not finite the error is +0.
#[inline(always)]
pub fn two_prod<T: PairFloat>(a: T, b: T) -> Pair<T> {
    let p = tp(a, b);
    finite_or(
        Pair {
            hi: p.hi,
            lo: p.lo + T::ZERO,
        },
        p.hi,
    )
}

/// The pair itself where its leading part is finite, else (`plain`, +0).
#[inline(always)]
fn finite_or<T: PairFloat>(r: Pair<T>, plain: T) -> Pair<T> {
    if r.hi.finite() {
        r
    } else {
        Pair {
            hi: plain,
            lo: T::ZERO,
        }
    }
}

/// FastTwoSum without the non-finite fix-up, for the inside of the
/// algorithms below (which fix their final result once).
#[inline(always)]
pub(crate) fn fts<T: PairFloat>(a: T, b: T) -> Pair<T> {
    let s = a + b;
    Pair {
        hi: s,
        lo: b - (s - a),
    }
}

/// TwoSum without the non-finite fix-up.
#[inline(always)]
pub(crate) fn ts<T: PairFloat>(a: T, b: T) -> Pair<T> {
    let s = a + b;
    let bb = s - a;
    Pair {
        hi: s,
        lo: (a - (s - bb)) + (b - bb),
    }
}

/// TwoProd without the non-finite fix-up.
#[inline(always)]
pub(crate) fn tp<T: PairFloat>(a: T, b: T) -> Pair<T> {
    let p = a * b;
    Pair {
        hi: p,
        lo: a.fma(b, -p),
    }
}

// Named methods, not operator traits: each states its bound, which `+` would hide.
#[allow(clippy::should_implement_trait)]
impl<T: PairFloat> Pair<T> {
    /// The pair of one component (`lo` = +0).
    #[inline(always)]
    pub fn from_hi(hi: T) -> Pair<T> {
        Pair { hi, lo: T::ZERO }
    }

    /// −x: both parts negated (exact).
    #[inline(always)]
    pub fn neg(self) -> Pair<T> {
        Pair {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    /// x + y: AccurateDWPlusDW (Joldes, Muller, Popescu, "Tight and rigorous
    /// error bounds for basic building blocks of double-word arithmetic",
    /// ACM TOMS 44(2), 2017, Algorithm 6), relative error at most
    /// 3u² + 13u³ (their Theorem 3.1, as corrected there); 20 operations.
    #[inline(always)]
    pub fn add(self, y: Pair<T>) -> Pair<T> {
        let s = ts(self.hi, y.hi);
        let t = ts(self.lo, y.lo);
        let c = s.lo + t.hi;
        let v = fts(s.hi, c);
        let w = t.lo + v.lo;
        finite_or(fts(v.hi, w), self.hi + y.hi)
    }

    /// x − y: [`Pair::add`] of −y (the same bound).
    #[inline(always)]
    pub fn sub(self, y: Pair<T>) -> Pair<T> {
        self.add(y.neg())
    }

    /// x + b for one component b: DWPlusFP (ibid., Algorithm 4), relative
    /// error at most 2u².
    #[inline(always)]
    pub fn add_fp(self, b: T) -> Pair<T> {
        let s = ts(self.hi, b);
        let v = self.lo + s.lo;
        finite_or(fts(s.hi, v), self.hi + b)
    }

    /// x × y: DWTimesDW3 (ibid., Algorithm 12, with fused multiply-adds),
    /// relative error at most 4u² (ibid., Theorem 5.3); 9 operations.
    #[inline(always)]
    pub fn mul(self, y: Pair<T>) -> Pair<T> {
        let c = tp(self.hi, y.hi);
        let tl0 = self.lo * y.lo;
        let tl1 = self.hi.fma(y.lo, tl0);
        let cl2 = self.lo.fma(y.hi, tl1);
        let cl3 = c.lo + cl2;
        finite_or(fts(c.hi, cl3), self.hi * y.hi)
    }

    /// x × b for one component b: DWTimesFP3 (ibid., Algorithm 9), relative
    /// error at most 2u².
    #[inline(always)]
    pub fn mul_fp(self, b: T) -> Pair<T> {
        let c = tp(self.hi, b);
        let cl3 = self.lo.fma(b, c.lo);
        finite_or(fts(c.hi, cl3), self.hi * b)
    }

    /// x ÷ y: DWDivDW2 (ibid., Algorithm 17), relative error at most
    /// 15u² + 56u³ (ibid., Theorem 7.4).
    #[inline(always)]
    pub fn div(self, y: Pair<T>) -> Pair<T> {
        let th = self.hi / y.hi;
        // DWTimesFP1 (ibid., Algorithm 7): r = y × th.
        let c = tp(y.hi, th);
        let cl2 = y.lo * th;
        let t = fts(c.hi, cl2);
        let tl2 = t.lo + c.lo;
        let r = fts(t.hi, tl2);
        let pi = ts(self.hi, -r.hi);
        let dh = pi.lo - r.lo;
        let dl = dh + self.lo;
        let d = pi.hi + dl;
        let tl = d / y.hi;
        finite_or(fts(th, tl), th)
    }

    /// √x: SQRTDWtoDW (Lefèvre, Louvet, Muller, Picot, Rideau, "Accurate
    /// calculation of Euclidean norms using double-word arithmetic", ACM
    /// TOMS 49(1), 2023, Algorithm 8), relative error at most 25/8·u².
    /// x ≤ 0, infinities and NaN give (√hi, +0).
    #[inline(always)]
    pub fn sqrt(self) -> Pair<T> {
        let sh = self.hi.sqrt();
        if !(self.hi > T::ZERO && sh.finite()) {
            return Pair {
                hi: sh,
                lo: T::ZERO,
            };
        }
        let r1 = (-sh).fma(sh, self.hi);
        let r2 = self.lo + r1;
        let sl = r2 / (T::TWO * sh);
        fts(sh, sl)
    }

    /// e^x: x − k·ln 2 formed in pair arithmetic with ln 2 in three parts
    /// (k·L1 exact), the remainder r (|r| ≤ ln2/2 + ε) halved four times,
    /// e^s − 1 by its Taylor series in pair arithmetic (Horner, the
    /// coefficients 1/n! as pairs; the truncation below 2^-(2p+4)), squared
    /// back by e^(2s) − 1 = (e^s − 1)(e^s − 1 + 2), one added, then 2^k.
    /// Relative error at most 32u² for results in the normal range
    /// (measured at most … in the tests against a 200-bit reference); +inf
    /// above `ln(max)`, +0 below the smallest subnormal's logarithm, NaN for
    /// NaN (each with a zero trailing part).
    #[inline(always)]
    pub fn exp(self) -> Pair<T> {
        let h = self.hi;
        if !(h < T::EXP_OVER && h > T::EXP_UNDER) {
            return Pair {
                hi: h.exp1(),
                lo: T::ZERO,
            };
        }
        let k = (h * T::INV_LN2).rint();
        // h − k·L1 is exact: k·L1 is exact, and within a factor 2 of h
        // (Sterbenz) or k = 0.
        let t = h - k * T::LN2_1;
        let r = Pair::from_hi(t).add_fp(self.lo).add(T::LN2_23.mul_fp(-k));
        let s = Pair {
            hi: r.hi * T::EXP_SCALE,
            lo: r.lo * T::EXP_SCALE,
        };
        let coef = T::EXP_COEF;
        let mut p = coef[coef.len() - 1];
        for c in coef[..coef.len() - 1].iter().rev() {
            p = p.mul(s).add(*c);
        }
        // e^s − 1 = s + s²·(1/2 + s/6 + …) = s·(1 + s·p).
        let mut m = p.mul(s).add_fp(T::ONE).mul(s);
        for _ in 0..T::EXP_HALVINGS {
            m = m.mul(m.add_fp(T::TWO));
        }
        let e = m.add_fp(T::ONE);
        // 2^k in two factors, each within the normal range.
        let k1 = (k * (T::ONE / T::TWO)).rint();
        let (f1, f2) = (T::pow2(k1), T::pow2(k - k1));
        let hi = e.hi * f1 * f2;
        finite_or(
            Pair {
                hi,
                lo: e.lo * f1 * f2,
            },
            hi,
        )
    }

    /// The component nearest `hi + lo` (one rounding of their exact sum).
    #[inline(always)]
    pub fn round(self) -> T {
        self.hi + self.lo
    }
}
