//! The LU factorisation with partial pivoting of one matrix in a
//! column-major buffer.
//!
//! **Pivots.** Column j's search starts at row j and moves to a later row
//! only where that row's `|re| + |im|` is strictly greater than the current
//! one's; a NaN is never greater, and nothing is greater than a NaN. Rows j
//! and the pivot row are then swapped across the whole matrix. A zero pivot
//! stays in U and its column of L is not divided.
//!
//! **Order.** Every element is `a_ij − Σ_{k<min(i,j)} l_ik·u_kj`, a chain of
//! [`Field::fms`] steps in increasing k from a_ij, divided by the pivot
//! below the diagonal. Recursive over columns (Toledo's shape, as faer's):
//! the left half factored, its rows of U solved
//! ([`lower_left`](crate::linalg::triangular::lower_left)), the rows below
//! updated through [`gemm_sub`], the right half factored; panels of at most
//! [`PANEL`] columns right-looking. Every piece keeps the chains, so the
//! splits and the threads change no bit, and the pivots searched are the
//! unblocked algorithm's.

use crate::linalg::field::{Field, Real};
use crate::linalg::triangular::{half, lower_left};
use crate::linalg::update::{axpy_inline, gemm_sub, tiered, Isa, Op};
use crate::tier::Exec;

/// The widest panel factored column by column.
pub(crate) const PANEL: usize = 16;

/// Whether `x` is a better pivot magnitude than `current` (strictly
/// greater; a NaN is never greater and nothing is greater than a NaN).
#[inline]
fn greater<R: Real>(x: R, current: R) -> bool {
    !current.is_nan() && x > current
}

/// The elements of `tmp` [`factor`] needs for an `m × n` matrix.
pub(crate) fn tmp_len(m: usize, n: usize) -> usize {
    let k = m.min(n);
    let h = half(k) + 8;
    2 * h * h + k * (n - k) + 1
}

/// The elements of `neg` [`factor`] needs for an `m × n` matrix.
pub(crate) fn neg_len(m: usize, n: usize) -> usize {
    let k = m.min(n);
    m * (half(k) + 8) + k * k / 4 + 1
}

/// The matrix being factored and what its steps share.
struct Lu<'a, T> {
    m: usize,
    a: &'a mut [T],
    pivots: &'a mut [usize],
    perm: &'a mut [usize],
    tmp: &'a mut [T],
    neg: &'a mut [T],
    isa: Isa,
    exec: &'a Exec,
}

/// Factor the `m × n` matrix `a` (column-major, leading dimension m) in
/// place into L (unit, below the diagonal) and U (on and above), writing
/// `pivots` (min(m, n) rows) and `perm` (m rows: row i of L·U is row
/// `perm[i]` of a). `tmp` and `neg` hold [`tmp_len`] and [`neg_len`]
/// elements.
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
    for (i, p) in perm.iter_mut().enumerate().take(m) {
        *p = i;
    }
    let k = m.min(n);
    let mut lu = Lu {
        m,
        a,
        pivots,
        perm,
        tmp,
        neg,
        isa,
        exec,
    };
    lu.columns(0, k);
    if n > k {
        lu.swap_rows(0, k, k, n - k);
        // m < n: U's columns right of the square part.
        let (left, right) = lu.a.split_at_mut(k * m);
        lower_left(
            (k, n - k),
            left,
            m,
            true,
            right,
            m,
            lu.tmp,
            lu.neg,
            isa,
            exec,
        );
    }
}

impl<T: Field> Lu<'_, T> {
    /// Factor columns `j..j + w` (rows j..m), every earlier column applied.
    fn columns(&mut self, j: usize, w: usize) {
        if w <= PANEL {
            self.panel(j, w);
            return;
        }
        let (m, isa, exec) = (self.m, self.isa, self.exec);
        let w1 = half(w);
        let w2 = w - w1;
        self.columns(j, w1);
        self.swap_rows(j, w1, j + w1, w2);
        let (left, right) = self.a.split_at_mut((j + w1) * m);
        let right = &mut right[..w2 * m];
        // U₁₂: the unit lower solve of the left half's rows.
        lower_left(
            (w1, w2),
            &left[j + j * m..],
            m,
            true,
            &mut right[j..],
            m,
            self.tmp,
            self.neg,
            isa,
            exec,
        );
        if j + w1 < m {
            // A₂₂ ← A₂₂ − L₂₁·U₁₂, from a copy of U₁₂ (it shares columns
            // with A₂₂).
            let t = &mut self.tmp[..w1 * w2];
            for q in 0..w2 {
                t[q * w1..(q + 1) * w1].copy_from_slice(&right[j + q * m..j + w1 + q * m]);
            }
            gemm_sub(
                isa,
                (m - j - w1, w2, w1),
                Op::plain(&left[j + w1 + j * m..], m),
                Op::plain(t, w1),
                &mut right[j + w1..],
                m,
                self.neg,
                exec,
            );
        }
        self.columns(j + w1, w2);
        self.swap_rows(j + w1, w2, j, w1);
    }

    /// Apply the row swaps of pivots `p0..p0 + np` (in order) to columns
    /// `c0..c0 + nc`, a column at a time (each swap of a column stays in
    /// that column's stretch of memory).
    fn swap_rows(&mut self, p0: usize, np: usize, c0: usize, nc: usize) {
        let m = self.m;
        for q in c0..c0 + nc {
            let col = &mut self.a[q * m..(q + 1) * m];
            for (c, &p) in self.pivots[p0..p0 + np].iter().enumerate() {
                col.swap(p0 + c, p);
            }
        }
    }

    /// Columns `j..j + w`, right-looking column by column (row swaps within
    /// these columns only).
    fn panel(&mut self, j: usize, w: usize) {
        panel(
            self.isa,
            self.m,
            &mut *self.a,
            (j, w),
            &mut *self.pivots,
            &mut *self.perm,
        );
    }
}

tiered!(
    /// Columns `j..j + w` of the `m × n` matrix, right-looking column by
    /// column (compiled whole per instruction set).
    panel, panel_body,
    (m: usize, a: &mut [T], cols: (usize, usize), pivots: &mut [usize], perm: &mut [usize])
);

#[inline(always)]
fn panel_body<T: Field>(
    m: usize,
    a: &mut [T],
    (j, w): (usize, usize),
    pivots: &mut [usize],
    perm: &mut [usize],
) {
    for c in j..j + w {
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
            // Within the panel's columns only: the callers apply the swap
            // to the other columns (`Lu::swap_rows`).
            for q in j..j + w {
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
        for c2 in c + 1..j + w {
            let o = (c2 - c - 1) * m;
            let s = right[o + c];
            axpy_inline::<T, false>(&mut right[o + c + 1..o + m], &l[c + 1..m], s);
        }
    }
}
