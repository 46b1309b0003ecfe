//! Householder reduction of a Hermitian matrix (its lower triangle) to a
//! real symmetric tridiagonal one, `Qᴴ A Q = T` (LAPACK's `hetd2`, lower),
//! and the accumulation of `Q = H₀ H₁ ⋯ H_{n−2}`.

use super::ops::{dotc, larfg, reflect};
use crate::linalg::field::{Field, Real};
use crate::linalg::update::{axpy_sub, Isa};

/// Reduces `a` (n×n column-major, its lower triangle with a real diagonal)
/// to the tridiagonal `d` (n) / `e` (n−1, `e[i]` couples `d[i]` and
/// `d[i+1]`). The reflector `Hᵢ = I − τᵢ vᵢ vᵢᴴ` is left in
/// `a[i+1.., i]` (its leading 1 stored) and `tau[i]`. `p` holds n scalars.
pub(crate) fn tridiagonalise<T: Field>(
    isa: Isa,
    n: usize,
    a: &mut [T],
    d: &mut [T::Real],
    e: &mut [T::Real],
    tau: &mut [T],
    p: &mut [T],
) {
    let half = T::Real::of(0.5);
    for i in 0..n.saturating_sub(1) {
        let c0 = i + 1 + i * n; // first element of the column below the diagonal
        let col_end = (i + 1) * n;
        let alpha = a[c0];
        let (beta, t) = larfg(alpha, &mut a[c0 + 1..col_end]);
        e[i] = beta;
        tau[i] = t;
        d[i] = a[i + i * n].re();
        if t == T::ZERO {
            a[c0] = T::ONE;
            continue;
        }
        a[c0] = T::ONE;
        let m = n - i - 1; // order of the trailing block A22 = a[i+1.., i+1..]
        let (head, tail) = a.split_at_mut((i + 1) * n);
        let v = &head[c0..col_end];
        let p = &mut p[..m];
        // p = A22 v, from the lower triangle: column j gives p[j] its
        // diagonal term and the conjugated dot below it, and p[j+1..] its
        // column times v[j].
        p.fill(T::ZERO);
        for jj in 0..m {
            let col = &tail[jj * n + i + 1 + jj..(jj + 1) * n];
            let dj = col[0].re();
            let below = &col[1..];
            axpy_sub(isa, &mut p[jj + 1..], below, -v[jj]);
            let s = dotc(isa, below, &v[jj + 1..]);
            p[jj] = (p[jj] + s) + v[jj].scale(dj);
        }
        // p = τ p; w = p − (τ/2)(pᴴv) v.
        for x in p.iter_mut() {
            *x = t * *x;
        }
        let alpha2 = -(t.scale(half) * dotc(isa, p, v));
        axpy_sub(isa, p, v, -alpha2);
        // A22 ← A22 − v wᴴ − w vᴴ on the lower triangle.
        for jj in 0..m {
            let col = &mut tail[jj * n + i + 1 + jj..(jj + 1) * n];
            axpy_sub(isa, col, &v[jj..], p[jj].conj());
            axpy_sub(isa, col, &p[jj..], v[jj].conj());
            col[0] = T::from_real(col[0].re());
        }
    }
    if n > 0 {
        d[n - 1] = a[n * n - 1].re();
    }
}

/// `q` (n×n column-major) ← `H₀ H₁ ⋯ H_{n−2}` from the reflectors
/// [`tridiagonalise`] left in `a` and `tau`.
pub(crate) fn form_q<T: Field>(isa: Isa, n: usize, a: &[T], tau: &[T], q: &mut [T]) {
    q[..n * n].fill(T::ZERO);
    for j in 0..n {
        q[j + j * n] = T::ONE;
    }
    for i in (0..n.saturating_sub(1)).rev() {
        let t = tau[i];
        if t == T::ZERO {
            continue;
        }
        let v = &a[i + 1 + i * n..(i + 1) * n];
        for j in i + 1..n {
            reflect(isa, v, t, &mut q[i + 1 + j * n..(j + 1) * n]);
        }
    }
}
