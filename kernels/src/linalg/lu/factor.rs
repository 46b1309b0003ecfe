//! The LU factorisation with partial pivoting of one matrix in a
//! column-major buffer.
//!
//! **Pivots.** Column j's search starts at row j and moves to a later row
//! only where that row's `|re| + |im|` is strictly greater than the current
//! one's; a NaN is never greater, and nothing is greater than a NaN. Rows j
//! and the pivot row are then swapped across the whole matrix. A zero pivot
//! stays in U and its column of L is not divided.
//!
//! **Order.** Right-looking by panels of [`PANEL`] columns (the panel
//! factored column by column, its rows of U then solved, the trailing
//! matrix updated through [`gemm_sub`]), so every element is
//! `a_ij − Σ_{k<min(i,j)} l_ik·u_kj`, a chain of fused steps in increasing k
//! from a_ij (then divided by the pivot below the diagonal): the panel
//! width and the threads change no bit, and the pivots searched are those
//! of the unblocked algorithm.

use crate::linalg::field::{Field, Real};
use crate::linalg::update::{axpy_sub, gemm_sub, Block, Isa};
use crate::tier::Exec;

/// The panel width.
pub(crate) const PANEL: usize = 64;

/// Whether `x` is a better pivot magnitude than `current` (strictly
/// greater; a NaN is never greater and nothing is greater than a NaN).
#[inline]
fn greater<R: Real>(x: R, current: R) -> bool {
    !current.is_nan() && x > current
}

/// Factor the `m × n` matrix `a` (column-major, leading dimension m) in
/// place into L (unit, below the diagonal) and U (on and above), writing
/// `pivots` (min(m, n) rows) and `perm` (m rows: row i of L·U is row
/// `perm[i]` of a). `tmp` holds `PANEL·n` elements, `neg` `m·PANEL`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn factor<T: Field>(
    m: usize,
    n: usize,
    a: &mut [T],
    pivots: &mut [usize],
    perm: &mut [usize],
    tmp: &mut [T],
    neg: &mut [T],
    isa: Isa,
    exec: &Exec,
) {
    let k = m.min(n);
    for (i, p) in perm.iter_mut().enumerate().take(m) {
        *p = i;
    }
    let mut j = 0;
    while j < k {
        let b = PANEL.min(k - j);
        for c in j..j + b {
            // The search.
            let col = &a[c * m..(c + 1) * m];
            let mut p = c;
            let mut best = col[c].abs1();
            for (r, x) in col.iter().enumerate().skip(c + 1) {
                let v = x.abs1();
                if greater(v, best) {
                    best = v;
                    p = r;
                }
            }
            pivots[c] = p;
            if p != c {
                for q in 0..n {
                    a.swap(c + q * m, p + q * m);
                }
                perm.swap(c, p);
            }
            let piv = a[c + c * m];
            if piv != T::ZERO {
                for x in &mut a[c + 1 + c * m..(c + 1) * m] {
                    *x = x.div(piv);
                }
            }
            let (left, right) = a.split_at_mut((c + 1) * m);
            let l = &left[c * m..];
            for c2 in c + 1..j + b {
                let o = (c2 - c - 1) * m;
                let s = right[o + c];
                axpy_sub(isa, &mut right[o + c + 1..o + m], &l[c + 1..m], s);
            }
        }
        if j + b < n {
            // U's panel rows right of the panel: the unit lower solve.
            let (left, right) = a.split_at_mut((j + b) * m);
            for q in 0..n - j - b {
                let col = &mut right[q * m..(q + 1) * m];
                for c in j..j + b {
                    let s = col[c];
                    axpy_sub(
                        isa,
                        &mut col[c + 1..j + b],
                        &left[c + 1 + c * m..j + b + c * m],
                        s,
                    );
                }
            }
            // The trailing matrix, from a copy of those rows (they share
            // columns with it).
            if j + b < m {
                let w = n - j - b;
                for q in 0..w {
                    tmp[q * b..(q + 1) * b].copy_from_slice(&right[j + q * m..j + b + q * m]);
                }
                gemm_sub(
                    isa,
                    (m - j - b, w, b),
                    Block {
                        data: &left[j + b + j * m..],
                        ld: m,
                    },
                    Block { data: tmp, ld: b },
                    false,
                    &mut right[j + b..],
                    m,
                    neg,
                    exec,
                );
            }
        }
        j += b;
    }
}
