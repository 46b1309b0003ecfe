//! The Cholesky factorisation of one matrix in a column-major buffer.
//!
//! **Order.** `l_ij = (a_ij − Σ_{k<j} l_ik·conj(l_jk)) / l_jj` and
//! `l_jj = √re(a_jj − Σ_{k<j} l_jk·conj(l_jk))`, each sum a chain of
//! [`Field::fms`] steps in increasing k from a_ij. Recursive (faer's
//! shape): the leading half factored, the rows below it solved against it,
//! the trailing lower triangle updated through [`gemm_sub`] by block
//! columns, the trailing half factored; blocks of at most
//! [`BASE`](crate::linalg::triangular::BASE) columns right-looking. Every
//! piece keeps the chains, so the splits and the threads change no bit.

use crate::linalg::field::{Field, Real};
use crate::linalg::triangular::{half, BASE};
use crate::linalg::update::{axpy_inline, axpy_sub, gemm_neg, gemm_sub, tiered, Isa, Op};
use crate::tier::Exec;

/// The block columns of the trailing update.
const COLUMNS: usize = 128;

/// The elements of `tmp` [`factor`] needs for order n.
pub(crate) fn tmp_len(n: usize) -> usize {
    let h = half(n);
    h * h + 1
}

/// The elements of `neg` [`factor`] needs for order n.
pub(crate) fn neg_len(n: usize) -> usize {
    n * half(n) + 1
}

/// Factor the `n × n` matrix `a` (column-major, leading dimension `ld`) in
/// place: its lower triangle (and the real parts of its diagonal) become L;
/// its strictly upper triangle is overwritten with what means nothing.
/// False where a pivot is not positive or is NaN.
#[allow(clippy::too_many_arguments)]
pub(crate) fn factor<T: Field>(
    n: usize,
    a: &mut [T],
    ld: usize,
    tmp: &mut [T],
    neg: &mut [T],
    isa: Isa,
    exec: &Exec,
) -> bool {
    if n <= BASE {
        return unblocked(isa, n, a, ld);
    }
    let n1 = half(n);
    let n2 = n - n1;
    if !factor(n1, a, ld, tmp, neg, isa, exec) {
        return false;
    }
    // L₁₁'s lower triangle, copied (it shares columns with L₂₁).
    let l11 = &mut tmp[..n1 * n1];
    for j in 0..n1 {
        l11[j * n1 + j..(j + 1) * n1].copy_from_slice(&a[j * ld + j..j * ld + n1]);
    }
    right_adjoint((n2, n1), l11, n1, &mut a[n1..], ld, neg, isa, exec);
    // A₂₂ ← A₂₂ − L₂₁·L₂₁ᴴ on and below the diagonal, a block column at a
    // time, from one negated copy of L₂₁.
    let (left, right) = a.split_at_mut(n1 * ld);
    let nl = &mut neg[..n2 * n1];
    for kk in 0..n1 {
        for (i, x) in nl[kk * n2..(kk + 1) * n2].iter_mut().enumerate() {
            *x = -left[n1 + i + kk * ld];
        }
    }
    let mut q = n1;
    while q < n {
        let bq = COLUMNS.min(n - q);
        gemm_neg(
            isa,
            (n - q, bq, n1),
            &nl[q - n1..],
            n2,
            Op::adjoint(&left[q..], ld),
            &mut right[(q - n1) * ld + q..],
            ld,
            exec,
        );
        q += bq;
    }
    factor(n2, &mut right[n1..], ld, tmp, neg, isa, exec)
}

tiered!(
    /// Right-looking, column by column (compiled whole per instruction
    /// set: small matrices pay no dispatch per column).
    unblocked, unblocked_body, (n: usize, a: &mut [T], ld: usize) -> bool
);

#[inline(always)]
fn unblocked_body<T: Field>(n: usize, a: &mut [T], ld: usize) -> bool {
    for c in 0..n {
        let d = a[c + c * ld].re();
        if d.is_nan() || d <= T::Real::ZERO {
            return false;
        }
        let s = d.sqrt();
        a[c + c * ld] = T::from_real(s);
        for x in &mut a[c + 1 + c * ld..n + c * ld] {
            *x = x.div_real(s);
        }
        if c + 1 == n {
            break;
        }
        let (left, right) = a.split_at_mut((c + 1) * ld);
        let col = &left[c * ld..];
        for c2 in c + 1..n {
            let s = col[c2].conj();
            let o = (c2 - c - 1) * ld;
            axpy_inline::<T, false>(&mut right[o + c2..o + n], &col[c2..n], s);
        }
    }
    true
}

/// Solve `X Lᴴ = X₀` in place of `x` (`p × w`, column-major, leading
/// dimension `ldx`), L `w × w` lower triangular with a real diagonal:
/// `x_ij = (x_ij − Σ_{k<j} x_ik·conj(l_jk)) / l_jj`, the same chains.
#[allow(clippy::too_many_arguments)]
fn right_adjoint<T: Field>(
    (p, w): (usize, usize),
    l: &[T],
    ldl: usize,
    x: &mut [T],
    ldx: usize,
    neg: &mut [T],
    isa: Isa,
    exec: &Exec,
) {
    if p == 0 || w == 0 {
        return;
    }
    if w <= BASE {
        for j in 0..w {
            let (left, right) = x.split_at_mut(j * ldx);
            let col = &mut right[..p];
            for k in 0..j {
                axpy_sub(isa, col, &left[k * ldx..k * ldx + p], l[j + k * ldl].conj());
            }
            let d = l[j + j * ldl].re();
            for v in col.iter_mut() {
                *v = v.div_real(d);
            }
        }
        return;
    }
    let w1 = half(w);
    let w2 = w - w1;
    right_adjoint((p, w1), l, ldl, x, ldx, neg, isa, exec);
    let (x1, x2) = x.split_at_mut(w1 * ldx);
    gemm_sub(
        isa,
        (p, w2, w1),
        Op::plain(x1, ldx),
        Op::adjoint(&l[w1..], ldl),
        x2,
        ldx,
        neg,
        exec,
    );
    right_adjoint((p, w2), &l[w1 + w1 * ldl..], ldl, x2, ldx, neg, isa, exec);
}
