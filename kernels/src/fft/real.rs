//! Real transforms of one line: r2c (n real points → bins 0..=n/2) and c2r
//! (bins 0..=n/2 → n real points, the Hermitian extension's inverse).
//!
//! An even `n ≥ 512` runs through a complex line of `h = n/2` points,
//! `z_j = x_{2j} + i·x_{2j+1}`:
//!
//! * r2c: `Z = DFT_h(z)`; for `k ≤ h`, with `A = Z_{k mod h}`,
//!   `B = conj(Z_{(h−k) mod h})`, `E = (A + B)·½`, `O = −i·(A − B)·½`:
//!   `X_k = E + w_n^k·O`;
//! * c2r: the imaginary parts of bins 0 and h are taken as +0; for `k < h`,
//!   `S = X_k + conj(X_{h−k})`, `D = (X_k − conj(X_{h−k}))·conj(w_n^k)`,
//!   `Z_k = S + i·D`; `z = IDFT_h(Z)` (unnormalised) and
//!   `x_{2j} = Re z_j`, `x_{2j+1} = Im z_j`.
//!
//! Other lengths run the complex transform of n points: r2c on the points
//! with +0 imaginary parts, keeping bins 0..=n/2; c2r on the extension
//! `X'_k = X_k` (k ≤ n/2) and `conj(X_{n−k})` above, the imaginary parts of
//! bin 0 and (even n) bin n/2 taken as +0, keeping the real parts. Either
//! way c2r is one linear map of every operand, Hermitian or not.

use super::butterflies::{cmul, conj};
use super::plan::{try_vec, FftPlan};
use super::simd::{with_simd, Simd};
use super::twiddle::RootTable;
use super::{Direction, FftFloat};
use crate::error::{Error, Result};
use crate::tier::Exec;
use num_complex::Complex;
use std::sync::Arc;

/// Even real lengths from this on run through half-length complex lines.
pub const HALF_LENGTH_MIN: usize = 512;

enum Kind<T> {
    /// Through a complex line of n/2 points, with `w_n^k`, `k ≤ n/2`.
    Half(Arc<FftPlan<T>>, Vec<Complex<T>>),
    /// Through a complex line of n points.
    Full(Arc<FftPlan<T>>),
}

/// A real transform of one length and precision: r2c (`Direction::Forward`)
/// or c2r (`Direction::Inverse`), unnormalised. Its recipe is a function of
/// the length, precision and direction alone.
pub struct RealFftPlan<T> {
    n: usize,
    direction: Direction,
    kind: Kind<T>,
}

impl<T: FftFloat> std::fmt::Debug for RealFftPlan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealFftPlan")
            .field("n", &self.n)
            .field("direction", &self.direction)
            .finish()
    }
}

impl<T: FftFloat> RealFftPlan<T> {
    /// The plan of `n` real points, its complex plan from the shared planner.
    pub fn new(n: usize, direction: Direction) -> Result<Self> {
        Self::with_planner(n, direction, super::plan::global())
    }

    /// The same, with the complex plan from `planner`.
    pub fn with_planner(
        n: usize,
        direction: Direction,
        planner: &super::FftPlanner,
    ) -> Result<Self> {
        let kind = if n >= HALF_LENGTH_MIN && n.is_multiple_of(2) {
            let h = n / 2;
            let table = RootTable::new(n, T::TWIDDLE_DD)?;
            let mut w = try_vec(h + 1, "real twiddles")?;
            for k in 0..=h {
                w.push(table.get::<T>(k, false));
            }
            Kind::Half(planner.plan::<T>(h, direction)?, w)
        } else {
            Kind::Full(planner.plan::<T>(n, direction)?)
        };
        Ok(RealFftPlan { n, direction, kind })
    }

    /// The number of real points.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the line has no point.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// r2c (`Forward`) or c2r (`Inverse`).
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// The number of bins: `n/2 + 1`.
    pub fn bins(&self) -> usize {
        self.n / 2 + 1
    }

    /// The points of complex scratch a line needs.
    pub fn scratch_len(&self) -> usize {
        match &self.kind {
            Kind::Half(p, _) => self.n / 2 + p.scratch_len(),
            Kind::Full(p) => self.n + p.scratch_len(),
        }
    }

    /// The bytes of scratch a line needs ([`RealFftPlan::scratch_len`]
    /// points of `Complex<T>`).
    pub fn scratch_bytes(&self) -> usize {
        self.scratch_len() * core::mem::size_of::<Complex<T>>()
    }

    /// e(n) of the line (see the module documentation of `fft`).
    pub fn error_factor(&self) -> f64 {
        match &self.kind {
            Kind::Half(p, _) => p.error_factor() + 8.0,
            Kind::Full(p) => p.error_factor(),
        }
    }

    fn check(&self, real: usize, bins: usize, scratch: usize) -> Result<()> {
        let len = |operand: &str, len: usize, expected: usize| Error::Length {
            operand: operand.into(),
            len,
            expected,
            unit: "points",
        };
        if real != self.n {
            return Err(len("real line", real, self.n));
        }
        if bins != self.bins() {
            return Err(len("bins", bins, self.bins()));
        }
        if scratch < self.scratch_len() {
            return Err(len("scratch", scratch, self.scratch_len()));
        }
        Ok(())
    }

    /// r2c of one line: `bins = X_0..=X_{n/2}` of `x` (a `Forward` plan;
    /// [`Error::Attribute`] otherwise), scratch of [`RealFftPlan::scratch_len`]
    /// points; [`Error::Length`] for wrong lengths.
    pub fn r2c_with_scratch(
        &self,
        x: &[T],
        bins: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
        exec: &Exec,
    ) -> Result<()> {
        let simd = super::simd::Simd::of(exec.resolve_tier_for(crate::tier::Engine::Fft)?);
        if self.direction != Direction::Forward {
            return Err(Error::Attribute {
                name: "r2c plan".into(),
                reason: "an Inverse real plan computes c2r".into(),
            });
        }
        self.check(x.len(), bins.len(), scratch.len())?;
        self.r2c_line(x, bins, scratch, simd, 1);
        Ok(())
    }

    /// c2r of one line (an `Inverse` plan), as the module documentation states.
    pub fn c2r_with_scratch(
        &self,
        bins: &[Complex<T>],
        x: &mut [T],
        scratch: &mut [Complex<T>],
        exec: &Exec,
    ) -> Result<()> {
        let simd = super::simd::Simd::of(exec.resolve_tier_for(crate::tier::Engine::Fft)?);
        if self.direction != Direction::Inverse {
            return Err(Error::Attribute {
                name: "c2r plan".into(),
                reason: "a Forward real plan computes r2c".into(),
            });
        }
        self.check(x.len(), bins.len(), scratch.len())?;
        self.c2r_line(bins, x, scratch, simd, 1);
        Ok(())
    }

    /// Scratch for `threads` tasks inside one line.
    pub(crate) fn scratch_for(&self, threads: usize) -> usize {
        match &self.kind {
            Kind::Half(p, _) => self.n / 2 + p.scratch_for(threads),
            Kind::Full(p) => self.n + p.scratch_for(threads),
        }
    }

    pub(crate) fn r2c_line(
        &self,
        x: &[T],
        out: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
        simd: Simd,
        threads: usize,
    ) {
        let n = self.n;
        if n == 0 {
            out[0] = Complex::new(T::ZERO, T::ZERO);
            return;
        }
        match &self.kind {
            Kind::Full(p) => {
                let (buf, rest) = scratch.split_at_mut(n);
                for (z, &v) in buf.iter_mut().zip(x) {
                    *z = Complex::new(v, T::ZERO);
                }
                p.run_line(buf, rest, simd, threads);
                crate::copy::copy_slice(out, &buf[..n / 2 + 1]);
            }
            Kind::Half(p, w) => {
                let h = n / 2;
                let (z, rest) = scratch.split_at_mut(h);
                crate::copy::copy_slice(as_points_mut(z), x);
                p.run_line(z, rest, simd, threads);
                with_simd(
                    simd,
                    #[inline(always)]
                    || unpack_r2c(z, w, out),
                );
            }
        }
    }

    pub(crate) fn c2r_line(
        &self,
        bins: &[Complex<T>],
        x: &mut [T],
        scratch: &mut [Complex<T>],
        simd: Simd,
        threads: usize,
    ) {
        let n = self.n;
        if n == 0 {
            return;
        }
        let zero = T::ZERO;
        match &self.kind {
            Kind::Full(p) => {
                let (buf, rest) = scratch.split_at_mut(n);
                let nb = n / 2 + 1;
                crate::copy::copy_slice(&mut buf[..nb], &bins[..nb]);
                buf[0].im = zero;
                if n.is_multiple_of(2) {
                    buf[n / 2].im = zero;
                }
                for k in nb..n {
                    buf[k] = conj(buf[n - k]);
                }
                p.run_line(buf, rest, simd, threads);
                for (v, z) in x.iter_mut().zip(buf.iter()) {
                    *v = z.re;
                }
            }
            Kind::Half(p, w) => {
                let h = n / 2;
                let (z, rest) = scratch.split_at_mut(h);
                with_simd(
                    simd,
                    #[inline(always)]
                    || pack_c2r(bins, w, z),
                );
                p.run_line(z, rest, simd, threads);
                crate::copy::copy_slice(x, as_points_mut(z));
            }
        }
    }
}

/// The real and imaginary parts of `z` in order: `2·z.len()` reals.
fn as_points_mut<T: FftFloat>(z: &mut [Complex<T>]) -> &mut [T] {
    let n = 2 * z.len();
    super::axes::carve::<T, T>(z, n).0
}

/// One bin of r2c from the half-length transform: `a = Z_k`,
/// `b = conj(Z_{h−k})` (indices mod h), `w = w_n^k`.
#[inline(always)]
fn r2c_bin<T: FftFloat>(a: Complex<T>, b: Complex<T>, w: Complex<T>) -> Complex<T> {
    let half = T::HALF;
    let e = Complex::new((a.re + b.re) * half, (a.im + b.im) * half);
    let d = Complex::new(a.re - b.re, a.im - b.im);
    let o = Complex::new(d.im * half, -(d.re * half));
    let t = cmul(w, o);
    Complex::new(e.re + t.re, e.im + t.im)
}

/// Bins `0..=h` of r2c from `z = DFT_h` (`out` holds `h + 1`, `w` `h + 1`).
#[inline(always)]
fn unpack_r2c<T: FftFloat>(z: &[Complex<T>], w: &[Complex<T>], out: &mut [Complex<T>]) {
    let h = z.len();
    let (z0, w, out) = (z[0], &w[..h + 1], &mut out[..h + 1]);
    out[0] = r2c_bin(z0, conj(z0), w[0]);
    out[h] = r2c_bin(z0, conj(z0), w[h]);
    let ups = z[1..].iter();
    let downs = z[1..].iter().rev();
    for ((o, &wk), (&a, &b)) in out[1..h].iter_mut().zip(&w[1..h]).zip(ups.zip(downs)) {
        *o = r2c_bin(a, conj(b), wk);
    }
}

/// `Z_k`, `k < h`, of c2r from the bins (`h + 1` of them; the imaginary
/// parts of bins 0 and h read as +0).
#[inline(always)]
fn pack_c2r<T: FftFloat>(bins: &[Complex<T>], w: &[Complex<T>], z: &mut [Complex<T>]) {
    let h = z.len();
    let zero = T::ZERO;
    let point = |a: Complex<T>, b: Complex<T>, w: Complex<T>| {
        let s = Complex::new(a.re + b.re, a.im + b.im);
        let d = cmul(Complex::new(a.re - b.re, a.im - b.im), conj(w));
        Complex::new(s.re - d.im, s.im + d.re)
    };
    let (bins, w) = (&bins[..h + 1], &w[..h]);
    let b0 = Complex::new(bins[0].re, zero);
    let bh = Complex::new(bins[h].re, zero);
    z[0] = point(b0, conj(bh), w[0]);
    let ups = bins[1..h].iter();
    let downs = bins[1..h].iter().rev();
    for ((zk, &wk), (&a, &b)) in z[1..].iter_mut().zip(&w[1..]).zip(ups.zip(downs)) {
        *zk = point(a, conj(b), wk);
    }
}
