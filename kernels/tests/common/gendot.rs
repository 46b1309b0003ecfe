//! Ogita–Rump–Oishi's ill-conditioned dot products (GenDot, "Accurate sum
//! and dot product", SIAM J. Sci. Comput. 26(6), 2005, Algorithm 6.1) and
//! their exact values (astro-float at 3 000 bits, exact for these
//! operands), shared by the compensated reduction and contraction tests.

use astro_float::{BigFloat, RoundingMode};
use tessera_testkit::rng::Rng;

pub const RM: RoundingMode = RoundingMode::ToEven;
pub const PREC: usize = 3000;

pub fn big(x: f64) -> BigFloat {
    const TWO64: f64 = 18446744073709551616.0;
    if x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        BigFloat::from_f64(x * TWO64, PREC).mul(&BigFloat::from_f64(1.0 / TWO64, PREC), PREC, RM)
    } else {
        BigFloat::from_f64(x, PREC)
    }
}

pub fn to_f64(b: &BigFloat) -> f64 {
    format!("{b}").parse().unwrap_or(f64::NAN)
}

/// The exact Σ xᵢ·yᵢ (every product and sum exact at 3 000 bits).
pub fn exact_dot(x: &[f64], y: &[f64]) -> BigFloat {
    let mut s = BigFloat::from_f64(0.0, PREC);
    for (a, b) in x.iter().zip(y) {
        s = s.add(&big(*a).mul(&big(*b), PREC, RM), PREC, RM);
    }
    s
}

/// GenDot: n pairs (x, y) whose dot product has condition about `cond`,
/// values rounded to f32 where `single`.
pub fn gen_dot(n: usize, cond: f64, single: bool, rng: &mut Rng) -> (Vec<f64>, Vec<f64>) {
    let round = |v: f64| if single { v as f32 as f64 } else { v };
    let b = cond.log2();
    let n2 = n / 2;
    let mut x = vec![0.0; n];
    let mut y = vec![0.0; n];
    let mut e: Vec<i32> = (0..n2)
        .map(|_| (rng.unit() * b / 2.0).round() as i32)
        .collect();
    e[0] = (b / 2.0).round() as i32 + 1;
    e[n2 - 1] = 0;
    for i in 0..n2 {
        x[i] = round((2.0 * rng.unit() - 1.0) * 2f64.powi(e[i]));
        y[i] = round((2.0 * rng.unit() - 1.0) * 2f64.powi(e[i]));
    }
    // The rest cancel the running dot product down to 2^e.
    let mut s = exact_dot(&x[..n2], &y[..n2]);
    for i in n2..n {
        let ei = ((b / 2.0) * (n - 1 - i) as f64 / (n - 1 - n2).max(1) as f64).round() as i32;
        x[i] = round((2.0 * rng.unit() - 1.0) * 2f64.powi(ei));
        let target = (2.0 * rng.unit() - 1.0) * 2f64.powi(ei);
        y[i] = round((target - to_f64(&s)) / x[i]);
        s = s.add(&big(x[i]).mul(&big(y[i]), PREC, RM), PREC, RM);
    }
    // A random permutation.
    for i in (1..n).rev() {
        let j = rng.below_usize(i + 1);
        x.swap(i, j);
        y.swap(i, j);
    }
    (x, y)
}
