//! The Hermitian (symmetric) eigenproblem of one matrix on a column-major
//! buffer: Householder tridiagonalisation ([`tridiagonal`]), the implicit
//! QL iteration with Wilkinson shifts ([`iteration`]), the ascending sort.
//! Every choice is a function of the order and the dtype alone, and every
//! operation a fixed chain of roundings, so the bits are those of the values
//! whatever the threads or the tier.

pub(crate) mod iteration;
pub(crate) mod ops;
pub(crate) mod tridiagonal;

#[cfg(test)]
pub(crate) mod testutil;

use crate::linalg::field::{Field, Real};
use crate::linalg::update::Isa;
use crate::linalg::work::Carve;
use crate::tier::Exec;
use ops::{normalising_exponent, scale_pow2};

/// Rotations queued per unit of the order before they are applied to the
/// vectors by blocks of rows (the bits do not depend on it).
const ROTATIONS_PER_ORDER: usize = 64;

/// The working memory of [`eigh_one`] for matrices of one order.
pub(crate) struct EighWork<'a, T: Field> {
    n: usize,
    d: &'a mut [T::Real],
    e: &'a mut [T::Real],
    tau: &'a mut [T],
    p: &'a mut [T],
    /// The blocked reduction's W and update operands.
    blk: &'a mut [T],
    /// The forming of Q's panels.
    wy: &'a mut [T],
    rots: ops::Rotations<'a, T::Real>,
}

impl<'a, T: Field> EighWork<'a, T> {
    /// Work for matrices of order `n` (`vectors`: whether eigenvectors will
    /// be asked for), carved from `area`.
    pub(crate) fn new(area: &mut Carve<'a>, n: usize, vectors: bool) -> Self {
        EighWork {
            n,
            d: area.take(n),
            e: area.take(n),
            tau: area.take(n),
            p: area.take(n),
            blk: area.take(tridiagonal::reduce_work_len(n)),
            // O(n), so kept for a work made without vectors too (which
            // may still be asked for them).
            wy: area.take(tridiagonal::form_work_len(n)),
            rots: ops::Rotations::new(
                area,
                if vectors {
                    ROTATIONS_PER_ORDER.saturating_mul(n)
                } else {
                    0
                },
            ),
        }
    }
}

/// The eigenvalues `w` (ascending) and, where `v` is given, orthonormal
/// eigenvectors (n×n column-major, `a v = v diag w`) of the Hermitian
/// matrix of order `n` named by `a`'s lower triangle and the real parts of
/// its diagonal (column-major `a[i + j n]`; the rest is never read; `a` is
/// overwritten). False where what is read holds NaN or an infinity, or the
/// iteration does not converge.
pub(crate) fn eigh_one<T: Field>(
    n: usize,
    a: &mut [T],
    w: &mut [T::Real],
    mut v: Option<&mut [T]>,
    work: &mut EighWork<T>,
    isa: Isa,
    exec: &Exec,
) -> bool {
    // The threads only share the matrix products; the bits never depend
    // on them.
    if n == 0 {
        return true;
    }
    // A work made for another order is the caller's error: refused, never
    // a panic (the blocked reduction's work is sized for one order).
    debug_assert_eq!(work.n, n);
    if work.n != n {
        return false;
    }
    let a = &mut a[..n * n];
    // Finite? The largest part read, and a clean (real) diagonal.
    let mut amax = T::Real::ZERO;
    for j in 0..n {
        let dj = a[j + j * n].re();
        if !dj.is_finite() {
            return false;
        }
        a[j + j * n] = T::from_real(dj);
        amax = amax.max_nan(dj.fabs());
        for x in &a[j + 1 + j * n..(j + 1) * n] {
            if !x.is_finite() {
                return false;
            }
            amax = amax.max_nan(x.re().fabs()).max_nan(x.im().fabs());
        }
    }
    // Scaled by a power of two so the largest part is in [1, 2).
    let sc = normalising_exponent(amax);
    if sc != 0 {
        for j in 0..n {
            ops::scale_slice(&mut a[j + j * n..(j + 1) * n], sc);
        }
    }
    let EighWork {
        d,
        e,
        tau,
        p,
        blk,
        wy,
        rots,
        ..
    } = work;
    let (d, e, tau, p) = (&mut d[..n], &mut e[..n], &mut tau[..n], &mut p[..n]);
    tridiagonal::tridiagonalise(isa, n, a, d, e, tau, p, blk, exec);
    if let Some(v) = v.as_deref_mut() {
        tridiagonal::form_q(isa, n, a, tau, &mut v[..n * n], wy, exec);
    }
    let z = v.as_deref_mut().map(|v| &mut v[..n * n]);
    if !iteration::tql(isa, n, d, e, z, rots) {
        return false;
    }
    iteration::sort_ascending(d, v.map(|v| &mut v[..n * n]), n);
    for (w, &x) in w[..n].iter_mut().zip(d.iter()) {
        *w = scale_pow2(x, -sc);
    }
    true
}

#[cfg(test)]
mod tests;
