//! Accurate roots of unity.
//!
//! `exp(∓2πi·j/n)` is reduced to the first octant exactly, in integers (the
//! angle is `2π·a/d` with `d = 8n` and `0 ≤ a ≤ n` after the reduction), then
//! evaluated once: in double-double arithmetic (a Taylor series of about 32
//! correct digits) for f64 plans, in f64 (`sin`/`cos` of the reduced angle)
//! for f32 plans, and rounded once into the plan's precision. No twiddle is
//! ever obtained by multiplying others, so each is within about half an ulp
//! of the exact root, whatever its index.

use super::FftFloat;
use num_complex::Complex;

/// A double-double number: `hi + lo`, `|lo| ≤ ulp(hi)/2`.
#[derive(Clone, Copy, Debug)]
struct Dd {
    hi: f64,
    lo: f64,
}

fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    Dd { hi: s, lo: e }
}

fn quick_two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd {
        hi: s,
        lo: b - (s - a),
    }
}

fn dd_add(a: Dd, b: Dd) -> Dd {
    let s = two_sum(a.hi, b.hi);
    let t = two_sum(a.lo, b.lo);
    let s = quick_two_sum(s.hi, s.lo + t.hi);
    quick_two_sum(s.hi, s.lo + t.lo)
}

fn dd_mul(a: Dd, b: Dd) -> Dd {
    let p = a.hi * b.hi;
    let e = a.hi.mul_add(b.hi, -p);
    quick_two_sum(p, e + (a.hi * b.lo + a.lo * b.hi))
}

fn dd_div_f64(a: Dd, b: f64) -> Dd {
    let q1 = a.hi / b;
    // a − q1·b, exactly in its leading part.
    let p = q1 * b;
    let pe = q1.mul_add(b, -p);
    let r = ((a.hi - p) - pe) + a.lo;
    let q2 = r / b;
    quick_two_sum(q1, q2)
}

/// 2π in double-double.
const TWO_PI: Dd = Dd {
    hi: core::f64::consts::TAU,
    lo: 2.449_293_598_294_706_4e-16,
};

/// cos and sin of `2π·a/d` for `0 ≤ a/d ≤ 1/8`, in double-double, rounded to f64.
fn cos_sin_dd(a: u128, d: u128) -> (f64, f64) {
    if a == 0 {
        return (1.0, 0.0);
    }
    // q = a/d in double-double (a, d < 2^53 on every length a plan allocates).
    let (af, df) = (a as f64, d as f64);
    let qh = af / df;
    let rem = (-qh).mul_add(df, af);
    let q = quick_two_sum(qh, rem / df);
    let x = dd_mul(TWO_PI, q);
    let x2 = dd_mul(x, x);
    // sin x = Σ (−1)^k x^(2k+1)/(2k+1)!, cos x = Σ (−1)^k x^(2k)/(2k)!; for
    // x ≤ π/4 the 14th terms are below 1e-33 of the sums.
    let mut s = x;
    let mut c = Dd { hi: 1.0, lo: 0.0 };
    let mut ts = x;
    let mut tc = Dd { hi: 1.0, lo: 0.0 };
    for k in 1..16u32 {
        let k2 = 2.0 * k as f64;
        tc = dd_div_f64(dd_mul(tc, x2), -(k2 - 1.0) * k2);
        ts = dd_div_f64(dd_mul(ts, x2), -k2 * (k2 + 1.0));
        c = dd_add(c, tc);
        s = dd_add(s, ts);
    }
    (c.hi + c.lo, s.hi + s.lo)
}

/// cos and sin of `2π·a/d` for `0 ≤ a/d ≤ 1/8`, in f64 from std's `cos`/`sin`.
fn cos_sin_f64(a: u128, d: u128) -> (f64, f64) {
    if a == 0 {
        return (1.0, 0.0);
    }
    let x = core::f64::consts::TAU * (a as f64 / d as f64);
    (x.cos(), x.sin())
}

/// `(cos, sin)` of `2π·j/n` (any `j`, `n ≥ 1`), each part from the exactly
/// reduced angle; `dd` evaluates in double-double, else in f64.
pub(crate) fn cos_sin(j: u128, n: u128, dd: bool) -> (f64, f64) {
    let d = 8 * n;
    let mut a = 8 * (j % n);
    let (mut sgn_s, mut sgn_c, mut swap) = (1.0, 1.0, false);
    if 2 * a > d {
        a = d - a;
        sgn_s = -1.0;
    }
    if 4 * a > d {
        a = d / 2 - a;
        sgn_c = -1.0;
    }
    if 8 * a > d {
        a = d / 4 - a;
        swap = true;
    }
    let (c, s) = if dd {
        cos_sin_dd(a, d)
    } else {
        cos_sin_f64(a, d)
    };
    let (c, s) = if swap { (s, c) } else { (c, s) };
    (sgn_c * c, sgn_s * s)
}

/// `exp(−2πi·j/n)` (forward) or `exp(+2πi·j/n)` (inverse), rounded once into `T`.
pub(crate) fn root<T: FftFloat>(j: u128, n: u128, inverse: bool) -> Complex<T> {
    let (c, s) = cos_sin(j, n, T::TWIDDLE_DD);
    let s = if inverse { s } else { -s };
    Complex::new(T::from_f64(c), T::from_f64(s))
}

/// The same root in f64, for tables computed in f64 whatever the plan.
#[cfg(test)]
pub(crate) fn root_f64(j: u128, n: u128, inverse: bool) -> Complex<f64> {
    let (c, s) = cos_sin(j, n, true);
    Complex::new(c, if inverse { s } else { -s })
}

/// The `n` roots `exp(−2πi·j/n)`, `j < n`, each as [`cos_sin`] gives it (so
/// with the bits `root` would give), evaluating each reduced angle once.
pub(crate) struct RootTable {
    n: usize,
    vals: Vec<Complex<f64>>,
}

impl RootTable {
    /// The table of `n ≥ 1` roots, evaluated in double-double where `dd`.
    pub(crate) fn new(n: usize, dd: bool) -> crate::error::Result<Self> {
        let mut vals = super::plan::try_vec(n, "twiddle table")?;
        let mut seen: Vec<Complex<f64>> = super::plan::try_vec(n + 1, "twiddle table")?;
        seen.resize(n + 1, Complex::new(f64::NAN, f64::NAN));
        let (nn, d) = (n as u128, 8 * n as u128);
        for j in 0..nn {
            let mut a = 8 * j;
            let (mut sgn_s, mut sgn_c, mut swap) = (1.0, 1.0, false);
            if 2 * a > d {
                a = d - a;
                sgn_s = -1.0;
            }
            if 4 * a > d {
                a = d / 2 - a;
                sgn_c = -1.0;
            }
            if 8 * a > d {
                a = d / 4 - a;
                swap = true;
            }
            let slot = &mut seen[a as usize];
            if slot.re.is_nan() {
                let (c, s) = if dd {
                    cos_sin_dd(a, d)
                } else {
                    cos_sin_f64(a, d)
                };
                *slot = Complex::new(c, s);
            }
            let (c, s) = if swap {
                (slot.im, slot.re)
            } else {
                (slot.re, slot.im)
            };
            vals.push(Complex::new(sgn_c * c, -(sgn_s * s)));
        }
        Ok(RootTable { n, vals })
    }

    /// `exp(∓2πi·j/n)` (`+` where `inverse`), rounded into `T`.
    #[inline]
    pub(crate) fn get<T: FftFloat>(&self, j: usize, inverse: bool) -> Complex<T> {
        let w = self.vals[j % self.n];
        Complex::new(
            T::from_f64(w.re),
            T::from_f64(if inverse { -w.im } else { w.im }),
        )
    }

    /// The same root in f64.
    #[inline]
    pub(crate) fn get_f64(&self, j: usize, inverse: bool) -> Complex<f64> {
        let w = self.vals[j % self.n];
        Complex::new(w.re, if inverse { -w.im } else { w.im })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_match_libm_closely_and_hit_exact_points() {
        for n in [1u128, 2, 3, 4, 5, 7, 8, 12, 360, 1000, 1 << 20] {
            for j in 0..n.min(4096) {
                let (c, s) = cos_sin(j, n, true);
                let x = core::f64::consts::TAU * j as f64 / n as f64;
                assert!((c - x.cos()).abs() < 1e-15 && (s - x.sin()).abs() < 1e-15);
            }
        }
        assert_eq!(cos_sin(1, 4, true), (0.0, 1.0));
        assert_eq!(cos_sin(2, 4, true), (-1.0, 0.0));
        assert_eq!(cos_sin(3, 4, true), (0.0, -1.0));
        let (c, s) = cos_sin(1, 8, true);
        assert_eq!(c, core::f64::consts::FRAC_1_SQRT_2);
        assert_eq!(s, core::f64::consts::FRAC_1_SQRT_2);
        let (c, _) = cos_sin(1, 6, true);
        assert_eq!(c, 0.5);
        for n in [1usize, 2, 3, 8, 12, 1000, 4093] {
            let t = RootTable::new(n, true).unwrap();
            for j in 0..n {
                let w = t.get_f64(j, false);
                let r = root_f64(j as u128, n as u128, false);
                assert_eq!(
                    (w.re.to_bits(), w.im.to_bits()),
                    (r.re.to_bits(), r.im.to_bits())
                );
            }
        }
    }
}
