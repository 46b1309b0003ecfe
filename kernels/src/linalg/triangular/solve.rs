//! Forward substitution of one lower triangular system in column-major
//! buffers (the call reduces every other case to it: an upper triangle by
//! reversing the order of rows and columns, the adjoint by reading the
//! triangle conjugate-transposed).
//!
//! **Order.** `x_i = (b_i − Σ_{k<i} m_ik·x_k) / m_ii` (no division on a unit
//! diagonal), the sum a chain of fused steps in increasing k from b_i;
//! blocked by panels of [`PANEL`] rows whose trailing update runs through
//! [`gemm_sub`] with the same chains, so neither the panel height nor the
//! threads change a bit.

use crate::linalg::field::Field;
use crate::linalg::update::{axpy_sub, gemm_sub, Block, Isa};
use crate::tier::Exec;

/// The panel height.
pub(crate) const PANEL: usize = 64;

/// Solve `M X = B` in place of `x` (`n × r`, column-major, leading
/// dimension n), M `n × n` lower triangular (column-major, leading
/// dimension n; its diagonal taken as ones where `unit`). `tmp` holds
/// `PANEL·r` elements, `neg` `n·PANEL`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn forward<T: Field>(
    n: usize,
    r: usize,
    m: &[T],
    unit: bool,
    x: &mut [T],
    tmp: &mut [T],
    neg: &mut [T],
    isa: Isa,
    exec: &Exec,
) {
    let mut j = 0;
    while j < n {
        let b = PANEL.min(n - j);
        for q in 0..r {
            let col = &mut x[q * n..(q + 1) * n];
            for c in j..j + b {
                if !unit {
                    col[c] = col[c].div(m[c + c * n]);
                }
                let s = col[c];
                axpy_sub(
                    isa,
                    &mut col[c + 1..j + b],
                    &m[c + 1 + c * n..j + b + c * n],
                    s,
                );
            }
        }
        if j + b < n {
            for q in 0..r {
                tmp[q * b..(q + 1) * b].copy_from_slice(&x[j + q * n..j + b + q * n]);
            }
            gemm_sub(
                isa,
                (n - j - b, r, b),
                Block {
                    data: &m[j + b + j * n..],
                    ld: n,
                },
                Block { data: tmp, ld: b },
                false,
                &mut x[j + b..],
                n,
                neg,
                exec,
            );
        }
        j += b;
    }
}
