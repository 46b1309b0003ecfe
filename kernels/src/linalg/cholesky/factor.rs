//! The Cholesky factorisation of one matrix in a column-major buffer.
//!
//! **Order.** Right-looking by panels of [`PANEL`] columns: a panel is
//! factored column by column (the pivot's square root, the column divided
//! by it, the panel's later columns updated), then the trailing lower
//! triangle is updated block column by block column through
//! [`gemm_sub`]. Every element below the diagonal is therefore
//! `(a_ij − Σ_{k<j} l_ik·conj(l_jk)) / l_jj`, the sum a chain of fused steps
//! in increasing k from a_ij, and every pivot `re(a_jj − Σ_{k<j} l_jk·conj(l_jk))`
//! the same chain: the panel width changes no bit, nor do the threads.

use crate::linalg::field::{Field, Real};
use crate::linalg::update::{axpy_sub, gemm_sub, Block, Isa};
use crate::tier::Exec;

/// The panel width (the block columns of the trailing update).
pub(crate) const PANEL: usize = 64;

/// Factor the `n × n` matrix `a` (column-major, leading dimension n) in
/// place: its lower triangle (and the real parts of its diagonal) become L,
/// its strictly upper triangle is left as it was. `neg` holds `n·PANEL`
/// elements. False where a pivot is not positive or is NaN.
pub(crate) fn factor<T: Field>(
    n: usize,
    a: &mut [T],
    neg: &mut [T],
    isa: Isa,
    exec: &Exec,
) -> bool {
    let mut j = 0;
    while j < n {
        let b = PANEL.min(n - j);
        for c in j..j + b {
            let d = a[c + c * n].re();
            if !(d > T::Real::ZERO) {
                return false;
            }
            let s = d.sqrt();
            a[c + c * n] = T::from_real(s);
            for x in &mut a[c + 1 + c * n..(c + 1) * n] {
                *x = x.div_real(s);
            }
            let (left, right) = a.split_at_mut((c + 1) * n);
            let col = &left[c * n..];
            for c2 in c + 1..j + b {
                let s = col[c2].conj();
                let o = (c2 - c - 1) * n;
                axpy_sub(isa, &mut right[o + c2..o + n], &col[c2..n], s);
            }
        }
        // The trailing lower triangle, a block column at a time.
        let mut q = j + b;
        while q < n {
            let bq = PANEL.min(n - q);
            let (left, right) = a.split_at_mut(q * n);
            let l = Block {
                data: &left[q + j * n..],
                ld: n,
            };
            gemm_sub(
                isa,
                (n - q, bq, b),
                l,
                l,
                true,
                &mut right[q..],
                n,
                neg,
                exec,
            );
            q += bq;
        }
        j += b;
    }
    true
}
