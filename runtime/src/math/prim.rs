//! Primitives the transcendental functions share: rounding to an integer by an
//! adder, powers of two from bits, double-word (unevaluated sum) arithmetic and
//! polynomial evaluation. Each is exact or states its one rounding.

/// Round to the nearest integer, ties to even, for |x| < 2^51 (one add and one
/// subtract of 1.5·2^52; the result is exact). Larger |x| are returned as the
/// adder leaves them (callers clamp first).
#[inline(always)]
pub fn rint_f64(x: f64) -> f64 {
    (x + MAGIC) - MAGIC
}

/// 1.5·2^52: adding it rounds an f64 below 2^51 in magnitude to an integer
/// (ties to even), which the sum's low mantissa bits hold.
pub const MAGIC: f64 = 6755399441055744.0;

/// 1.5·2^23: adding it rounds an f32 below 2^22 in magnitude to an integer
/// (ties to even), which the sum's low mantissa bits hold.
pub const MAGIC_F: f32 = 12582912.0;

/// Round to the nearest integer, ties to even, for |x| < 2^22 (see
/// [`rint_f64`]).
#[inline(always)]
pub fn rint_f32(x: f32) -> f32 {
    (x + MAGIC_F) - MAGIC_F
}

/// 2^n as an f64 for an integer-valued `n` in [-1022, 1023] (from the bits).
///
/// `n + 1.5·2^52 + 1023` is exact and holds `n + 1023` in its low mantissa
/// bits, which the shift moves into the exponent field: no f64 → i64
/// conversion, which AVX2 lacks (the loops that call this stay vectorised).
#[inline(always)]
pub fn pow2i_f64(n: f64) -> f64 {
    const M: f64 = MAGIC + 1023.0;
    f64::from_bits((n + M).to_bits() << 52)
}

/// 2^n as an f32 for an integer-valued `n` in [-126, 127] (from the bits).
#[inline(always)]
pub fn pow2i_f32(n: f32) -> f32 {
    f32::from_bits(((n as i32 + 127) as u32) << 23)
}

/// x · 2^n for an integer-valued `n` in [-2044, 2046], with one rounding at
/// most (the product by the second factor): the scale is split in two halves,
/// each a normal power of two, so subnormal and overflowing results round
/// correctly.
#[inline(always)]
pub fn ldexp_f64(x: f64, n: f64) -> f64 {
    let h = (n * 0.5).floor_exact();
    x * pow2i_f64(h) * pow2i_f64(n - h)
}

/// x · 2^n for an integer-valued `n` in [-252, 254] (see [`ldexp_f64`]).
#[inline(always)]
pub fn ldexp_f32(x: f32, n: f32) -> f32 {
    let h = (n * 0.5).floor_exact();
    x * pow2i_f32(h) * pow2i_f32(n - h)
}

/// Floor of a value that is an integer or a half-integer of magnitude below
/// 2^22, without a library call.
trait FloorExact {
    fn floor_exact(self) -> Self;
}

impl FloorExact for f64 {
    #[inline(always)]
    fn floor_exact(self) -> f64 {
        let r = rint_f64(self);
        if r > self {
            r - 1.0
        } else {
            r
        }
    }
}

impl FloorExact for f32 {
    #[inline(always)]
    fn floor_exact(self) -> f32 {
        let r = rint_f32(self);
        if r > self {
            r - 1.0
        } else {
            r
        }
    }
}

/// Horner evaluation c[0] + x·(c[1] + x·(c[2] + …)) with one `mul_add` per
/// coefficient, highest first.
#[inline(always)]
pub fn horner_f64<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let mut acc = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        acc = acc.mul_add(x, c[i]);
    }
    acc
}

/// Horner evaluation in f32 (see [`horner_f64`]).
#[inline(always)]
pub fn horner_f32<const N: usize>(x: f32, c: &[f32; N]) -> f32 {
    let mut acc = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        acc = acc.mul_add(x, c[i]);
    }
    acc
}

/// An unevaluated sum `hi + lo` with |lo| ≤ ulp(hi)/2: about 106 bits.
#[derive(Clone, Copy, Debug)]
pub struct Dd {
    /// The leading part.
    pub hi: f64,
    /// The trailing part.
    pub lo: f64,
}

/// a + b exactly, as (rounded sum, error); any a and b (Knuth's TwoSum).
#[inline(always)]
pub fn two_sum(a: f64, b: f64) -> Dd {
    let p = crate::pair::ts(a, b);
    Dd { hi: p.hi, lo: p.lo }
}

/// a + b exactly for |a| ≥ |b| (or a = 0) (Dekker's FastTwoSum).
#[inline(always)]
pub fn fast_two_sum(a: f64, b: f64) -> Dd {
    let p = crate::pair::fts(a, b);
    Dd { hi: p.hi, lo: p.lo }
}

/// a · b exactly, as (rounded product, error), by one fused multiply-add.
#[inline(always)]
pub fn two_prod(a: f64, b: f64) -> Dd {
    let p = crate::pair::tp(a, b);
    Dd { hi: p.hi, lo: p.lo }
}

// Named methods, not operator traits: each states its error, which `+` would hide.
#[allow(clippy::should_implement_trait)]
impl Dd {
    /// A double-word from one double.
    #[inline(always)]
    pub fn new(hi: f64) -> Dd {
        Dd { hi, lo: 0.0 }
    }

    /// The double nearest the sum (one rounding of hi + lo).
    #[inline(always)]
    pub fn value(self) -> f64 {
        self.hi + self.lo
    }

    /// Sum of two double-words (relative error about 2^-104).
    #[inline(always)]
    pub fn add(self, b: Dd) -> Dd {
        let s = two_sum(self.hi, b.hi);
        let t = two_sum(self.lo, b.lo);
        let u = fast_two_sum(s.hi, s.lo + t.hi);
        fast_two_sum(u.hi, u.lo + t.lo)
    }

    /// Sum of a double-word and a double.
    #[inline(always)]
    pub fn add_f64(self, b: f64) -> Dd {
        let s = two_sum(self.hi, b);
        fast_two_sum(s.hi, s.lo + self.lo)
    }

    /// Product of two double-words (relative error about 2^-102).
    #[inline(always)]
    pub fn mul(self, b: Dd) -> Dd {
        let p = two_prod(self.hi, b.hi);
        let lo = self.hi.mul_add(b.lo, self.lo * b.hi) + p.lo;
        fast_two_sum(p.hi, lo)
    }

    /// Product of a double-word and a double.
    #[inline(always)]
    pub fn mul_f64(self, b: f64) -> Dd {
        let p = two_prod(self.hi, b);
        fast_two_sum(p.hi, self.lo.mul_add(b, p.lo))
    }

    /// Quotient of two double-words (relative error about 2^-100).
    #[inline(always)]
    pub fn div(self, b: Dd) -> Dd {
        let q1 = self.hi / b.hi;
        let r = self.add(b.mul_f64(-q1));
        let q2 = r.hi / b.hi;
        let r = r.add(b.mul_f64(-q2));
        let q3 = r.hi / b.hi;
        let q = fast_two_sum(q1, q2);
        q.add_f64(q3)
    }
}

/// ln 2 as a double-word (hi + lo to about 2^-106).
pub const LN2_DD: Dd = Dd {
    hi: 0.6931471805599453,
    lo: 2.3190468138462996e-17,
};

/// 1/k!, k = 3..=15: the tail of e^u after u²/2.
pub const EXP_TAIL: [f64; 13] = [
    0.16666666666666666,
    0.041666666666666664,
    0.008333333333333333,
    0.001388888888888889,
    0.0001984126984126984,
    2.48015873015873e-05,
    2.7557319223985893e-06,
    2.755731922398589e-07,
    2.505210838544172e-08,
    2.08767569878681e-09,
    1.6059043836821613e-10,
    1.1470745597729725e-11,
    7.647163731819816e-13,
];

/// ln2^k / k!, k = 0..=9 (Taylor series of 2^r; truncation below 2^-38 for
/// |r| ≤ 1/2).
const EXP2_TAYLOR: [f64; 10] = [
    1.0,
    0.6931471805599453,
    0.24022650695910072,
    0.05550410866482158,
    0.009618129107628477,
    0.0013333558146428443,
    0.0001540353039338161,
    1.5252733804059841e-05,
    1.321548679014431e-06,
    1.01780860092397e-07,
];

/// The first `K` terms of [`EXP2_TAYLOR`] (shorter series for the fast
/// variants).
pub const fn exp2_taylor<const K: usize>() -> [f64; K] {
    let mut out = [0.0; K];
    let mut i = 0;
    while i < K {
        out[i] = EXP2_TAYLOR[i];
        i += 1;
    }
    out
}

/// 2^t for |t| ≤ 200 (relative error below 2^-38); exact for integer t.
#[inline(always)]
pub fn exp2_core_f64(t: f64) -> f64 {
    let n = rint_f64(t);
    let r = t - n;
    horner_f64(r, &EXP2_TAYLOR) * pow2i_f64(n)
}
