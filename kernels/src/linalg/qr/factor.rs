//! The Householder QR factorisation of one matrix in a column-major buffer,
//! and the forming of q from its reflectors.
//!
//! **Order.** Column j's reflector is made from the column as the previous
//! reflectors left it ([`householder::make`]), then applied to each later
//! column in turn ([`householder::apply`]); q is the reflectors applied in
//! reverse order to the identity's first columns. Each step's sums are in
//! the lane order of [`householder`]: a function of the shape alone.

use super::householder;
use crate::linalg::field::Field;

/// Factor the `m × n` matrix `a` (column-major, leading dimension m) in
/// place: R on and above the diagonal (its diagonal real), the reflectors'
/// v below it, their τ in `tau` (min(m, n)).
pub(crate) fn factor<T: Field>(m: usize, n: usize, a: &mut [T], tau: &mut [T]) {
    let k = m.min(n);
    for j in 0..k {
        let (left, right) = a.split_at_mut((j + 1) * m);
        let col = &mut left[j * m..];
        let alpha = col[j];
        let (beta, t) = householder::make(alpha, &mut col[j + 1..m]);
        col[j] = T::from_real(beta);
        tau[j] = t;
        let v = &col[j + 1..m];
        for q in 0..n - j - 1 {
            householder::apply(v, t, true, &mut right[q * m + j..(q + 1) * m]);
        }
    }
}

/// q (`m × qc`, column-major, leading dimension m; qc = min(m, n) for the
/// reduced factor, m for the complete one): the product of the reflectors
/// that [`factor`] left in `a` and `tau`, applied to the identity.
pub(crate) fn form_q<T: Field>(m: usize, k: usize, a: &[T], tau: &[T], q: &mut [T], qc: usize) {
    if m == 0 {
        return;
    }
    for (c, col) in q.chunks_exact_mut(m).take(qc).enumerate() {
        for (i, x) in col.iter_mut().enumerate() {
            *x = if i == c { T::ONE } else { T::ZERO };
        }
    }
    for j in (0..k).rev() {
        let v = &a[j * m + j + 1..(j + 1) * m];
        // Columns left of j are zero in rows j.. (the identity's).
        for c in j..qc {
            householder::apply(v, tau[j], false, &mut q[c * m + j..(c + 1) * m]);
        }
    }
}
