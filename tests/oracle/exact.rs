//! Exact binary arithmetic for the oracle: a small unsigned big integer, dyadic
//! numbers `±m·2^e` built on it, and rounding of an exact (or exact-plus-sticky)
//! value to a binary format, round to nearest, ties to even, with gradual
//! underflow and overflow to infinity. Nothing here uses the code under test,
//! and nothing rounds except `Dy::round`.
//!
//! Also double-double helpers (Dekker's products, Knuth's sums), used where a
//! reference to about 100 bits is enough (complex division and magnitude bounds).

use std::cmp::Ordering;

pub use tessera_testkit::binary64::{decompose, exponent, pow2};

/// An unsigned integer of any size, little-endian 64-bit limbs, no high zero limbs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BigU(Vec<u64>);

impl BigU {
    /// 0.
    pub fn zero() -> BigU {
        BigU(Vec::new())
    }

    /// From a u128.
    pub fn from_u128(v: u128) -> BigU {
        let mut b = BigU(vec![v as u64, (v >> 64) as u64]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// Whether it is 0.
    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// Bit length (0 for 0).
    pub fn bits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => 64 * (self.0.len() as u64 - 1) + (64 - top.leading_zeros() as u64),
        }
    }

    /// Bit `i`.
    pub fn bit(&self, i: u64) -> bool {
        let limb = (i / 64) as usize;
        limb < self.0.len() && (self.0[limb] >> (i % 64)) & 1 == 1
    }

    /// Whether any bit below bit `i` is set.
    pub fn any_below(&self, i: u64) -> bool {
        let full = (i / 64) as usize;
        for (k, &l) in self.0.iter().enumerate() {
            if k < full {
                if l != 0 {
                    return true;
                }
            } else if k == full {
                let r = i % 64;
                return r != 0 && l & ((1u64 << r) - 1) != 0;
            } else {
                break;
            }
        }
        false
    }

    /// The low 64 bits.
    pub fn low_u64(&self) -> u64 {
        self.0.first().copied().unwrap_or(0)
    }

    /// self · 2^n.
    pub fn shl(&self, n: u64) -> BigU {
        if self.is_zero() {
            return BigU::zero();
        }
        let limbs = (n / 64) as usize;
        let r = n % 64;
        let mut out = vec![0u64; limbs];
        let mut carry = 0u64;
        for &l in &self.0 {
            if r == 0 {
                out.push(l);
            } else {
                out.push((l << r) | carry);
                carry = l >> (64 - r);
            }
        }
        if carry != 0 {
            out.push(carry);
        }
        let mut b = BigU(out);
        b.trim();
        b
    }

    /// floor(self / 2^n).
    pub fn shr(&self, n: u64) -> BigU {
        let limbs = (n / 64) as usize;
        if limbs >= self.0.len() {
            return BigU::zero();
        }
        let r = n % 64;
        let src = &self.0[limbs..];
        let mut out = Vec::with_capacity(src.len());
        for k in 0..src.len() {
            let lo = src[k] >> r;
            let hi = if r == 0 || k + 1 >= src.len() {
                0
            } else {
                src[k + 1] << (64 - r)
            };
            out.push(lo | hi);
        }
        let mut b = BigU(out);
        b.trim();
        b
    }

    /// self + o.
    pub fn add(&self, o: &BigU) -> BigU {
        let n = self.0.len().max(o.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u128;
        for k in 0..n {
            let s = self.0.get(k).copied().unwrap_or(0) as u128
                + o.0.get(k).copied().unwrap_or(0) as u128
                + carry;
            out.push(s as u64);
            carry = s >> 64;
        }
        if carry != 0 {
            out.push(carry as u64);
        }
        let mut b = BigU(out);
        b.trim();
        b
    }

    /// self - o, for self >= o.
    pub fn sub(&self, o: &BigU) -> BigU {
        assert!(self.cmp(o) != Ordering::Less, "BigU::sub would go negative");
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i128;
        for k in 0..self.0.len() {
            let d = self.0[k] as i128 - o.0.get(k).copied().unwrap_or(0) as i128 - borrow;
            if d < 0 {
                out.push((d + (1i128 << 64)) as u64);
                borrow = 1;
            } else {
                out.push(d as u64);
                borrow = 0;
            }
        }
        let mut b = BigU(out);
        b.trim();
        b
    }

    /// self · o.
    pub fn mul(&self, o: &BigU) -> BigU {
        if self.is_zero() || o.is_zero() {
            return BigU::zero();
        }
        let mut out = vec![0u64; self.0.len() + o.0.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in o.0.iter().enumerate() {
                let t = out[i + j] as u128 + a as u128 * b as u128 + carry;
                out[i + j] = t as u64;
                carry = t >> 64;
            }
            let mut k = i + o.0.len();
            while carry != 0 {
                let t = out[k] as u128 + carry;
                out[k] = t as u64;
                carry = t >> 64;
                k += 1;
            }
        }
        let mut b = BigU(out);
        b.trim();
        b
    }

    /// Compare.
    pub fn cmp(&self, o: &BigU) -> Ordering {
        if self.0.len() != o.0.len() {
            return self.0.len().cmp(&o.0.len());
        }
        for k in (0..self.0.len()).rev() {
            match self.0[k].cmp(&o.0[k]) {
                Ordering::Equal => continue,
                c => return c,
            }
        }
        Ordering::Equal
    }
}

/// A binary floating-point format: precision (bits, hidden bit included) and
/// exponent range of its normal numbers; subnormals always exist.
#[derive(Clone, Copy, Debug)]
pub struct Fmt {
    /// Precision.
    pub p: u32,
    /// Smallest normal exponent.
    pub emin: i64,
    /// Largest exponent.
    pub emax: i64,
}

/// IEEE binary32.
pub const F32: Fmt = Fmt {
    p: 24,
    emin: -126,
    emax: 127,
};
/// IEEE binary64.
pub const F64: Fmt = Fmt {
    p: 53,
    emin: -1022,
    emax: 1023,
};

/// A signed dyadic number (-1)^neg · mag · 2^exp.
#[derive(Clone, Debug)]
pub struct Dy {
    /// Sign.
    pub neg: bool,
    /// Magnitude's integer significand.
    pub mag: BigU,
    /// Exponent of its last bit.
    pub exp: i64,
}

impl Dy {
    /// A finite f64, exactly.
    pub fn from_f64(x: f64) -> Dy {
        let (m, e) = decompose(x);
        Dy {
            neg: x.is_sign_negative(),
            mag: BigU::from_u128(m as u128),
            exp: e,
        }
    }

    /// The exact sum; an exact zero is +0.
    pub fn add(&self, o: &Dy) -> Dy {
        let e = self.exp.min(o.exp);
        let a = self.mag.shl((self.exp - e) as u64);
        let b = o.mag.shl((o.exp - e) as u64);
        let (neg, mag) = if self.neg == o.neg {
            (self.neg, a.add(&b))
        } else {
            match a.cmp(&b) {
                Ordering::Less => (o.neg, b.sub(&a)),
                _ => (self.neg, a.sub(&b)),
            }
        };
        let neg = neg && !mag.is_zero();
        Dy { neg, mag, exp: e }
    }

    /// The negation.
    pub fn negate(&self) -> Dy {
        Dy {
            neg: !self.neg,
            mag: self.mag.clone(),
            exp: self.exp,
        }
    }

    /// The exact product.
    pub fn mul(&self, o: &Dy) -> Dy {
        Dy {
            neg: self.neg ^ o.neg,
            mag: self.mag.mul(&o.mag),
            exp: self.exp + o.exp,
        }
    }

    /// Round to `fmt`, to nearest with ties to even; the result as an f64 (every
    /// value of the formats used here is an f64). Overflow gives ±infinity, a
    /// zero keeps the sign of `self`.
    pub fn round(&self, fmt: Fmt) -> f64 {
        let sign = if self.neg { -1.0 } else { 1.0 };
        if self.mag.is_zero() {
            return sign * 0.0;
        }
        let len = self.mag.bits() as i64;
        let top = self.exp + len - 1;
        let p = fmt.p as i64;
        let q = (top - (p - 1)).max(fmt.emin - (p - 1));
        let drop = q - self.exp;
        let (kept, q) = if drop <= 0 {
            (self.mag.low_u64(), self.exp)
        } else {
            let mut kept = self.mag.shr(drop as u64).low_u64();
            let half = self.mag.bit(drop as u64 - 1);
            let sticky = self.mag.any_below(drop as u64 - 1);
            if half && (sticky || kept & 1 == 1) {
                kept += 1;
            }
            (kept, q)
        };
        if kept == 0 {
            return sign * 0.0;
        }
        let kept_top = q + 63 - kept.leading_zeros() as i64;
        if kept_top > fmt.emax {
            return sign * f64::INFINITY;
        }
        // Exact: kept < 2^54 is an f64, 2^q is one, and so is their product.
        sign * (kept as f64) * pow2(q)
    }
}

/// a + b rounded once to `fmt` (a, b values of `fmt`). Infinities, NaN and the
/// sign of a zero sum follow IEEE 754.
pub fn add_round(a: f64, b: f64, fmt: Fmt) -> f64 {
    if !a.is_finite() || !b.is_finite() || a == 0.0 || b == 0.0 {
        // No rounding happens in these cases: the special-value rules of IEEE 754.
        return a + b;
    }
    Dy::from_f64(a).add(&Dy::from_f64(b)).round(fmt)
}

/// a - b rounded once to `fmt`.
pub fn sub_round(a: f64, b: f64, fmt: Fmt) -> f64 {
    add_round(a, -b, fmt)
}

/// a × b rounded once to `fmt`.
pub fn mul_round(a: f64, b: f64, fmt: Fmt) -> f64 {
    if !a.is_finite() || !b.is_finite() || a == 0.0 || b == 0.0 {
        return a * b;
    }
    Dy::from_f64(a).mul(&Dy::from_f64(b)).round(fmt)
}

/// a ÷ b rounded once to `fmt`, by long division to p + 3 bits and a sticky bit.
pub fn div_round(a: f64, b: f64, fmt: Fmt) -> f64 {
    if !a.is_finite() || !b.is_finite() || a == 0.0 || b == 0.0 {
        return a / b;
    }
    let (ma, ea) = decompose(a);
    let (mb, eb) = decompose(b);
    let bits = |v: u64| 64 - v.leading_zeros() as i64;
    let s = (fmt.p as i64 + 4 + bits(mb) - bits(ma)).max(0);
    let num = (ma as u128) << s;
    let q = num / mb as u128;
    let r = num % mb as u128;
    let mag = BigU::from_u128((q << 1) | (r != 0) as u128);
    let neg = a.is_sign_negative() ^ b.is_sign_negative();
    Dy {
        neg,
        mag,
        exp: ea - eb - s - 1,
    }
    .round(fmt)
}

/// floor(sqrt(n)).
pub fn isqrt(n: u128) -> u128 {
    let mut r = (n as f64).sqrt() as u128;
    while r * r > n {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    r
}

/// sqrt(a) rounded once to `fmt`, by an integer square root to p + 3 bits and a
/// sticky bit. sqrt(-0) = -0, negative inputs give NaN.
pub fn sqrt_round(a: f64, fmt: Fmt) -> f64 {
    if a.is_nan() || a < 0.0 {
        return f64::NAN;
    }
    if a == 0.0 || a.is_infinite() {
        return a;
    }
    let (m, mut e) = decompose(a);
    let mut n = m as u128;
    if e % 2 != 0 {
        n <<= 1;
        e -= 1;
    }
    let nbits = 128 - n.leading_zeros() as i64;
    let want = 2 * (fmt.p as i64 + 4);
    let s = ((want - nbits + 1) / 2).max(0);
    let n = n << (2 * s);
    let r = isqrt(n);
    let sticky = r * r != n;
    let mag = BigU::from_u128((r << 1) | sticky as u128);
    Dy {
        neg: false,
        mag,
        exp: (e - 2 * s) / 2 - 1,
    }
    .round(fmt)
}

/// a × b + c with one rounding to `fmt` (a, b, c values of `fmt`).
pub fn fma_round(a: f64, b: f64, c: f64, fmt: Fmt) -> f64 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return f64::NAN;
    }
    if !a.is_finite() || !b.is_finite() {
        // The product is infinite or NaN (inf × 0): IEEE rules, no rounding.
        return a * b + c;
    }
    if !c.is_finite() {
        return c;
    }
    if a == 0.0 || b == 0.0 {
        // An exact zero product: its sign and c's decide a zero sum.
        return (a * b) + c;
    }
    let p = Dy::from_f64(a).mul(&Dy::from_f64(b));
    if c == 0.0 {
        // The exact product is not zero, so neither is the result's sign in doubt.
        return p.round(fmt);
    }
    p.add(&Dy::from_f64(c)).round(fmt)
}

/// fmod(a, b): a - n·b with n = trunc(a / b), exactly (the result is always
/// representable in the operands' format). IEEE 754 special cases.
pub fn fmod(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() || a.is_infinite() || b == 0.0 {
        return f64::NAN;
    }
    if b.is_infinite() || a == 0.0 {
        return a;
    }
    let (ma, ea) = decompose(a);
    let (mb, eb) = decompose(b);
    let (r, e) = if ea >= eb {
        // (ma · 2^(ea-eb)) mod mb, one doubling at a time.
        let mut r = (ma % mb) as u128;
        for _ in 0..(ea - eb) {
            r = (r << 1) % mb as u128;
        }
        (r, eb)
    } else if eb - ea >= 64 {
        (ma as u128, ea)
    } else {
        ((ma as u128) % ((mb as u128) << (eb - ea)), ea)
    };
    let v = Dy {
        neg: false,
        mag: BigU::from_u128(r),
        exp: e,
    }
    .round(F64);
    if a.is_sign_negative() {
        -v
    } else {
        v
    }
}

// ---------------------------------------------------------------- double-double

/// A double-double: hi + lo with |lo| <= ulp(hi)/2.
pub type Dd = (f64, f64);

/// Knuth's TwoSum: s + e = a + b exactly.
pub fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

fn split(a: f64) -> (f64, f64) {
    let c = 134_217_729.0 * a; // 2^27 + 1
    let hi = c - (c - a);
    (hi, a - hi)
}

/// Dekker's TwoProduct: p + e = a · b exactly (no overflow or underflow).
pub fn two_prod(a: f64, b: f64) -> Dd {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    let e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    (p, e)
}

/// x + y.
pub fn dd_add(x: Dd, y: Dd) -> Dd {
    let (s, e) = two_sum(x.0, y.0);
    let (t, f) = two_sum(x.1, y.1);
    let e = e + t;
    let (s, e) = two_sum(s, e);
    let e = e + f;
    two_sum(s, e)
}

/// -x.
pub fn dd_neg(x: Dd) -> Dd {
    (-x.0, -x.1)
}

/// x · y.
pub fn dd_mul(x: Dd, y: Dd) -> Dd {
    let (p, e) = two_prod(x.0, y.0);
    let e = e + (x.0 * y.1 + x.1 * y.0);
    two_sum(p, e)
}

/// x / y.
pub fn dd_div(x: Dd, y: Dd) -> Dd {
    let q1 = x.0 / y.0;
    let r = dd_add(x, dd_neg(dd_mul(y, (q1, 0.0))));
    let q2 = r.0 / y.0;
    let r = dd_add(r, dd_neg(dd_mul(y, (q2, 0.0))));
    let q3 = r.0 / y.0;
    let (s, e) = two_sum(q1, q2);
    dd_add((s, e), (q3, 0.0))
}

/// sqrt(x), x > 0.
pub fn dd_sqrt(x: Dd) -> Dd {
    let r = x.0.sqrt();
    let sq = two_prod(r, r);
    let res = dd_add(x, dd_neg(sq));
    let corr = res.0 / (2.0 * r);
    two_sum(r, corr)
}
