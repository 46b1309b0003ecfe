//! Householder reduction of a Hermitian matrix (its lower triangle) to a
//! real symmetric tridiagonal one, `Qᴴ A Q = T`, and the forming of
//! `Q = H₀ H₁ ⋯ H_{n−2}`.
//!
//! **Order.** By panels of [`PANEL`] columns while more than [`UNBLOCKED`]
//! columns are left (LAPACK's `hetrd`/`latrd`, lower): a panel's reflectors
//! are made one by one from its columns brought up to date with the
//! panel's earlier reflectors (`A − V Wᴴ − W Vᴴ` on one column), and `W`
//! with level-2 operations; the trailing matrix is then updated at once,
//! `A ← A − V Wᴴ − W Vᴴ` by block columns of its lower trapezoid, through
//! [`gemm_neg`]. The last columns are reduced one by one (`hetd2`). Q is
//! formed in compact WY panels through [`gemm_sub`](crate::linalg::update::gemm_sub).
//! Every choice is a function of the order alone.

use super::ops::{dotc, larfg, sub_projection};
use crate::linalg::field::{Field, Real};
use crate::linalg::qr::factor::{form_q_shifted, work_len};
use crate::linalg::update::{axpy_sub, gemm_neg, Isa, Op};
use crate::tier::Exec;

/// The panel width of the blocked reduction.
pub(crate) const PANEL: usize = 32;
const _: () = assert!(PANEL <= crate::linalg::eigh::ops::PROJECTED);

/// The columns left to the unblocked reduction: a matrix of order at most
/// this is reduced one column at a time.
pub(crate) const UNBLOCKED: usize = 64;

/// The width of the block columns of the trailing update.
const UPDATE_COLS: usize = 64;

/// The work of [`tridiagonalise`] for order `n` (W, and the two operands
/// of the trailing update), in elements.
pub(crate) fn reduce_work_len(n: usize) -> usize {
    if n > UNBLOCKED {
        5 * n * PANEL
    } else {
        0
    }
}

/// The work of [`form_q`] for order `n`, in elements.
pub(crate) fn form_work_len(n: usize) -> usize {
    work_len(n, n, n)
}

/// `p ← A v` for the Hermitian `A` named by the lower triangle and the
/// real parts of the diagonal of the order-`m` block at `a[off..]`
/// (leading dimension `ld`): column j gives p[j] its diagonal term and the
/// conjugated dot below it, and p[j+1..] its column times v[j].
fn hemv_lower<T: Field>(isa: Isa, m: usize, a: &[T], off: usize, ld: usize, v: &[T], p: &mut [T]) {
    p[..m].fill(T::ZERO);
    for jj in 0..m {
        let col = &a[off + jj * ld + jj..off + jj * ld + m];
        let dj = col[0].re();
        let below = &col[1..];
        axpy_sub(isa, &mut p[jj + 1..m], below, -v[jj]);
        let s = dotc(isa, below, &v[jj + 1..m]);
        p[jj] = (p[jj] + s) + v[jj].scale(dj);
    }
}

/// Reduces `a` (n×n column-major, its lower triangle with a real diagonal)
/// to the tridiagonal `d` (n) / `e` (n−1, `e[i]` couples `d[i]` and
/// `d[i+1]`). The reflector `Hᵢ = I − τᵢ vᵢ vᵢᴴ` is left in
/// `a[i+1.., i]` (its leading 1 stored) and `tau[i]`. `p` holds n scalars.
#[allow(clippy::too_many_arguments)]
pub(crate) fn tridiagonalise<T: Field>(
    isa: Isa,
    n: usize,
    a: &mut [T],
    d: &mut [T::Real],
    e: &mut [T::Real],
    tau: &mut [T],
    p: &mut [T],
    work: &mut [T],
    exec: &Exec,
) {
    let mut start = 0;
    while n - start > UNBLOCKED {
        reduce_panel(isa, n, start, a, d, e, tau, work, exec);
        start += PANEL;
    }
    unblocked(isa, n, start, a, d, e, tau, p);
}

/// The unblocked reduction (LAPACK's `hetd2`) of columns `start..` of `a`
/// (order n), the columns before it reduced.
#[allow(clippy::too_many_arguments)]
fn unblocked<T: Field>(
    isa: Isa,
    n: usize,
    start: usize,
    a: &mut [T],
    d: &mut [T::Real],
    e: &mut [T::Real],
    tau: &mut [T],
    p: &mut [T],
) {
    let half = T::Real::of(0.5);
    for i in start..n.saturating_sub(1) {
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
        // p = A22 v, from the lower triangle.
        hemv_lower(isa, m, tail, i + 1, n, v, p);
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
/// [`tridiagonalise`] left in `a` and `tau`, in compact WY panels. `work`
/// holds [`form_work_len`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn form_q<T: Field>(
    isa: Isa,
    n: usize,
    a: &[T],
    tau: &[T],
    q: &mut [T],
    work: &mut [T],
    exec: &Exec,
) {
    form_q_shifted(n, (a, n), tau, (q, n), work, isa, exec);
}

/// One panel of the blocked reduction (LAPACK's `latrd`, lower, then the
/// rank-2·[`PANEL`] update of `hetrd`): columns `i0..i0 + PANEL` of `a`
/// (order n, `n − i0 > PANEL`) reduced, their reflectors stored as
/// [`tridiagonalise`] states, the trailing matrix's lower triangle updated.
#[allow(clippy::too_many_arguments)]
fn reduce_panel<T: Field>(
    isa: Isa,
    n: usize,
    i0: usize,
    a: &mut [T],
    d: &mut [T::Real],
    e: &mut [T::Real],
    tau: &mut [T],
    work: &mut [T],
    exec: &Exec,
) {
    let half = T::Real::of(0.5);
    let nb = PANEL;
    let r0 = n - i0; // W's rows: global rows i0..n
    let (w, rest) = work.split_at_mut(r0 * nb);
    let (na, rest) = rest.split_at_mut(2 * r0 * nb);
    let bb = &mut rest[..2 * r0 * nb];
    for c in 0..nb {
        let i = i0 + c;
        // Column i (rows i..) brought up to date with the panel's earlier
        // reflectors: a ← a − V W[i, ..c]ᴴ − W V[i, ..c]ᴴ.
        {
            let (left, right) = a.split_at_mut(i * n);
            let col = &mut right[i..n];
            for l in 0..c {
                let vl = &left[(i0 + l) * n + i..(i0 + l + 1) * n];
                axpy_sub(isa, col, vl, w[i - i0 + l * r0].conj());
                let wl = &w[l * r0 + (i - i0)..(l + 1) * r0];
                axpy_sub(isa, col, wl, left[i + (i0 + l) * n].conj());
            }
            col[0] = T::from_real(col[0].re());
            d[i] = col[0].re();
        }
        // The reflector of column i.
        let c0 = i + 1 + i * n;
        let col_end = (i + 1) * n;
        let (beta, t) = larfg(a[c0], &mut a[c0 + 1..col_end]);
        e[i] = beta;
        tau[i] = t;
        a[c0] = T::ONE;
        let m = n - i - 1;
        let (wl, wr) = w.split_at_mut(c * r0);
        let wc = &mut wr[i + 1 - i0..r0];
        if t == T::ZERO {
            wc.fill(T::ZERO);
            continue;
        }
        let (head, tail) = a.split_at_mut((i + 1) * n);
        let v = &head[c0..col_end];
        // W[:, c] = τ (A22 v − V (Wᴴ v) − W (Vᴴ v)), then − (τ/2)(wᴴv) v.
        hemv_lower(isa, m, tail, i + 1, n, v, wc);
        let w_col = |l: usize| &wl[l * r0 + (i + 1 - i0)..(l + 1) * r0];
        let v_col = |l: usize| &head[(i0 + l) * n + i + 1..(i0 + l + 1) * n];
        sub_projection(isa, wc, c, v, |l| (w_col(l), v_col(l)));
        sub_projection(isa, wc, c, v, |l| (v_col(l), w_col(l)));
        for x in wc.iter_mut() {
            *x = t * *x;
        }
        let alpha2 = -(t.scale(half) * dotc(isa, wc, v));
        axpy_sub(isa, wc, v, -alpha2);
    }
    // The trailing matrix (rows and columns s..n): A ← A − [V W]·[W V]ᴴ,
    // by block columns of its lower trapezoid (the upper triangle of each
    // diagonal block is written too, and never read).
    let s = i0 + nb;
    let rows = n - s;
    let k = 2 * nb;
    for l in 0..nb {
        let vl = &a[(i0 + l) * n + s..(i0 + l + 1) * n];
        let wl = &w[l * r0 + nb..(l + 1) * r0];
        for (r, (&x, &y)) in vl.iter().zip(wl).enumerate() {
            na[r + l * rows] = -x;
            na[r + (nb + l) * rows] = -y;
            bb[r + l * rows] = y;
            bb[r + (nb + l) * rows] = x;
        }
    }
    let mut c0 = s;
    while c0 < n {
        let bw = UPDATE_COLS.min(n - c0);
        let off = c0 - s;
        gemm_neg(
            isa,
            (n - c0, bw, k),
            &na[off..],
            rows,
            Op::adjoint(&bb[off..], rows),
            &mut a[c0 + c0 * n..],
            n,
            exec,
        );
        c0 += bw;
    }
    for j in s..n {
        a[j + j * n] = T::from_real(a[j + j * n].re());
    }
}
