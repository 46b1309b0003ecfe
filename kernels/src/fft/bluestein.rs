//! Bluestein's convolution: a line of n points through transforms of
//! `m ≥ 2n − 1` points, m the least power of two or three times a power of
//! two (see [`inner_length`]).
//!
//! With the chirp `w_j = exp(∓πi·j²/n)` (`j² mod 2n` exactly),
//! `X_k = w_k · Σ_j (x_j·w_j)·conj(w_{k−j})`: the line times the chirp,
//! padded with zeros to m, is transformed, multiplied by the transform of
//! the conjugate chirp wrapped at m (computed once, in f64, and divided by m,
//! which is exact), transformed back, and multiplied by the chirp.

use super::plan::{try_vec, try_zeros, FftPlan};
use super::simd::{with_simd, Simd};
use super::twiddle::RootTable;
use super::{Direction, FftFloat};
use crate::error::Result;
use num_complex::Complex;

pub(crate) struct Bluestein<T> {
    n: usize,
    m: usize,
    chirp: Vec<Complex<T>>,
    kernel: Vec<Complex<T>>,
    fwd: FftPlan<T>,
    inv: FftPlan<T>,
}

#[inline(always)]
fn cmul<T: FftFloat>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    super::butterflies::cmul(a, b)
}

/// The inner length of a line of `n` points: the least `m ≥ 2n − 1` that is
/// a power of two or three times one. Both run radix-8 passes but for one
/// pass (a 4 or a 2, or a 3); where `3·2^k` fits it is at most ¾ of the power
/// of two (5183 points: 12288 instead of 16384), a quarter fewer points
/// through the two transforms and the products.
pub(crate) fn inner_length(n: usize) -> usize {
    let need = 2 * n - 1;
    let pow2 = need.next_power_of_two();
    let three = 3 * need.div_ceil(3).next_power_of_two();
    pow2.min(three)
}

impl<T: FftFloat> Bluestein<T> {
    /// The convolution for `n`, or None where the chirp's transform exceeds
    /// `2·√(2n − 1)` in magnitude (the line then runs passes).
    pub(crate) fn new(n: usize, inverse: bool) -> Result<Option<Self>> {
        let m = inner_length(n);
        let table = RootTable::new(2 * n, true)?;
        let mut chirp64 = try_vec::<Complex<f64>>(n, "chirp")?;
        for j in 0..n {
            let jj = ((j as u128 * j as u128) % (2 * n as u128)) as usize;
            chirp64.push(table.get_f64(jj, inverse));
        }
        let mut b = try_zeros::<f64>(m, "chirp transform")?;
        b[0] = chirp64[0].conj();
        for j in 1..n {
            b[j] = chirp64[j].conj();
            b[m - j] = chirp64[j].conj();
        }
        let plan64 = FftPlan::<f64>::new(m, Direction::Forward)?;
        let mut s = try_zeros::<f64>(plan64.scratch_len(), "scratch")?;
        plan64.run_line(&mut b, &mut s, Simd::Scalar, 1);
        let cap = 2.0 * ((2 * n - 1) as f64).sqrt();
        if b.iter().any(|z| z.norm() > cap) {
            return Ok(None);
        }
        let inv_m = 1.0 / m as f64;
        let mut kernel = try_vec(m, "chirp transform")?;
        kernel.extend(
            b.iter()
                .map(|z| Complex::new(T::from_f64(z.re * inv_m), T::from_f64(z.im * inv_m))),
        );
        let mut chirp = try_vec(n, "chirp")?;
        chirp.extend(
            chirp64
                .iter()
                .map(|z| Complex::new(T::from_f64(z.re), T::from_f64(z.im))),
        );
        Ok(Some(Bluestein {
            n,
            m,
            chirp,
            kernel,
            fwd: FftPlan::new(m, Direction::Forward)?,
            inv: FftPlan::new(m, Direction::Inverse)?,
        }))
    }

    pub(crate) fn m(&self) -> usize {
        self.m
    }

    pub(crate) fn scratch_len(&self) -> usize {
        self.m + self.fwd.scratch_len().max(self.inv.scratch_len())
    }

    pub(crate) fn error_factor(&self) -> f64 {
        6.0 * self.fwd.error_factor() + 26.0
    }

    pub(crate) fn run(&self, line: &mut [Complex<T>], scratch: &mut [Complex<T>], simd: Simd) {
        let (a, rest) = scratch.split_at_mut(self.m);
        let (n, chirp) = (self.n, &self.chirp[..self.n]);
        with_simd(
            simd,
            #[inline(always)]
            || {
                for ((z, &x), &c) in a[..n].iter_mut().zip(&line[..n]).zip(chirp) {
                    *z = cmul(x, c);
                }
                for z in &mut a[n..] {
                    *z = Complex::new(T::ZERO, T::ZERO);
                }
            },
        );
        self.fwd.run_line(a, rest, simd, 1);
        with_simd(
            simd,
            #[inline(always)]
            || {
                for (z, k) in a.iter_mut().zip(&self.kernel) {
                    *z = cmul(*z, *k);
                }
            },
        );
        self.inv.run_line(a, rest, simd, 1);
        with_simd(
            simd,
            #[inline(always)]
            || {
                for ((y, &z), &c) in line[..n].iter_mut().zip(&a[..n]).zip(chirp) {
                    *y = cmul(z, c);
                }
            },
        );
    }
}
