//! Test oracles independent of the routines under test: random unitary
//! matrices by Gram–Schmidt (twice) in complex f64, matrices with known
//! spectra, the residual and orthogonality measures in f64.

use crate::linalg::field::{Field, Real};
use num_complex::Complex;

/// The tiers a bit-identity test compares, saying on stderr that the
/// comparison between tiers is skipped where this CPU runs the scalar tier
/// alone.
pub(crate) fn compared_tiers() -> Vec<crate::Tier> {
    let tiers = crate::available_tiers();
    if tiers.len() < 2 {
        eprintln!("tier comparison skipped: only the scalar tier runs on this CPU");
    }
    tiers
}

/// The order of the timing tests: `TESSERA_TIMING_N`, else 1024.
pub(crate) fn timing_order() -> usize {
    std::env::var("TESSERA_TIMING_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024)
}

/// A complex f64.
pub(crate) type C = Complex<f64>;

/// A xorshift generator (fixed seeds: the tests are reproducible).
pub(crate) struct Rng(u64);

impl Rng {
    /// From a seed.
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Uniform in [-1, 1).
    pub(crate) fn next(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// A random n×n unitary (real orthogonal where `!complex`), column-major,
/// by modified Gram–Schmidt applied twice.
pub(crate) fn unitary(n: usize, complex: bool, rng: &mut Rng) -> Vec<C> {
    let mut q: Vec<C> = (0..n * n)
        .map(|_| C::new(rng.next(), if complex { rng.next() } else { 0.0 }))
        .collect();
    for j in 0..n {
        for _pass in 0..2 {
            for k in 0..j {
                let mut s = C::new(0.0, 0.0);
                for i in 0..n {
                    s += q[i + k * n].conj() * q[i + j * n];
                }
                for i in 0..n {
                    let t = q[i + k * n] * s;
                    q[i + j * n] -= t;
                }
            }
            let nrm = (0..n).map(|i| q[i + j * n].norm_sqr()).sum::<f64>().sqrt();
            for i in 0..n {
                q[i + j * n] /= nrm;
            }
        }
    }
    q
}

/// `x · 2^e` in f64 (exact unless subnormal).
pub(crate) fn ldexp(x: f64, e: i32) -> f64 {
    let mut x = x;
    let mut e = e;
    while e != 0 {
        let k = e.clamp(-1000, 1000);
        x *= f64::from_bits(((k + 1023) as u64) << 52);
        e -= k;
    }
    x
}

/// A scalar of `T` from a complex f64 (each part rounded once).
pub(crate) fn to_t<T: Field>(z: C) -> T {
    T::from_parts(T::Real::of(z.re), T::Real::of(z.im))
}

/// A scalar of `T` as a complex f64 (exact).
pub(crate) fn of_t<T: Field>(x: T) -> C {
    C::new(x.re().to_f64(), x.im().to_f64())
}

/// `‖x‖_F`.
pub(crate) fn fro(x: &[C]) -> f64 {
    x.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
}

/// `‖Xᴴ X − I‖_F` of a column-major rows×cols X.
pub(crate) fn orth_cols(x: &[C], rows: usize, cols: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..cols {
        for j in 0..cols {
            let mut d = C::new(if i == j { -1.0 } else { 0.0 }, 0.0);
            for r in 0..rows {
                d += x[r + i * rows].conj() * x[r + j * rows];
            }
            s += d.norm_sqr();
        }
    }
    s.sqrt()
}

/// `‖X Xᴴ − I‖_F` of a column-major rows×cols X (its rows orthonormal?).
pub(crate) fn orth_rows(x: &[C], rows: usize, cols: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..rows {
        for j in 0..rows {
            let mut d = C::new(if i == j { -1.0 } else { 0.0 }, 0.0);
            for c in 0..cols {
                d += x[i + c * rows] * x[j + c * rows].conj();
            }
            s += d.norm_sqr();
        }
    }
    s.sqrt()
}

/// γ(k) = k u / (1 − k u).
pub(crate) fn gamma(k: usize, u: f64) -> f64 {
    let ku = k as f64 * u;
    ku / (1.0 - ku)
}

/// The named spectra of the tests, n values of magnitude at most 1 (u the
/// dtype's unit roundoff; `signed`: random signs on some).
pub(crate) fn spectrum(kind: usize, n: usize, u: f64, signed: bool, rng: &mut Rng) -> Vec<f64> {
    let t = |i: usize| {
        if n > 1 {
            i as f64 / (n - 1) as f64
        } else {
            0.0
        }
    };
    let mut w: Vec<f64> = (0..n)
        .map(|i| match kind {
            0 => 1.0 + t(i),                    // condition 2
            1 => (0.1 / u).sqrt().powf(-t(i)),  // condition √(0.1/ε)
            2 => (0.1 / u).powf(-t(i)),         // condition 0.1/ε
            3 => 0.5f64.powi(i as i32),         // graded
            4 => 1.0 + 10.0 * i as f64 * u,     // clustered
            _ => ((i % 3) as f64 - 1.0) * 0.75, // repeated, with zeros
        })
        .collect();
    if kind == 0 {
        let m = w.iter().fold(0.0f64, |a, &b| a.max(b));
        for x in &mut w {
            *x /= m;
        }
    }
    if signed && kind != 5 {
        for x in &mut w {
            if rng.next() < 0.0 {
                *x = -*x;
            }
        }
    }
    w
}

/// The names of the spectra, for messages.
pub(crate) const KINDS: [&str; 6] = ["cond2", "sqrt", "inv", "graded", "clustered", "repeated"];
