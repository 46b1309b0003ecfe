//! The Householder QR factorisation of one matrix in a column-major buffer,
//! and the forming of q from its reflectors.
//!
//! **Order.** By panels of [`PANEL`] columns (a constant: the bits depend
//! on the shape alone). In a panel, column j's reflector is made from the
//! column as the previous reflectors left it ([`householder::make`]) and
//! applied to the panel's later columns ([`householder::apply`]); the
//! panel's reflectors are then applied at once to the columns right of it
//! as `I − V Tᴴ Vᴴ` (the compact WY form, T upper triangular), through
//! [`gemm_sub`]. q is formed the same way, the panels in reverse order,
//! from the identity's first columns.

use super::householder;
use crate::linalg::field::Field;
use crate::linalg::update::{dot, gemm_sub, tiered, Isa, Op};
use crate::tier::Exec;

/// The panel width.
pub(crate) const PANEL: usize = 32;

/// The work of [`factor`] and [`form_q`] for an `m × n` matrix whose q has
/// `qc` columns: V (`m × PANEL`), T (`PANEL²`), W (`PANEL × max(n, qc)`),
/// and `neg` (`m × PANEL`), in elements.
pub(crate) fn work_len(m: usize, n: usize, qc: usize) -> usize {
    2 * m * PANEL + PANEL * PANEL + PANEL * n.max(qc) + 1
}

/// The panel's V (`rows × b`, unit lower trapezoidal, zeros above its
/// diagonal) from the reflectors stored below the diagonal of `a` (`m`
/// rows, leading dimension `lda`) at (j, j), and its T (`b × b` upper
/// triangular: `H₁⋯H_b = I − V T Vᴴ`).
#[allow(clippy::too_many_arguments)]
fn panel_wy<T: Field>(
    (m, lda): (usize, usize),
    j: usize,
    b: usize,
    a: &[T],
    tau: &[T],
    v: &mut [T],
    t: &mut [T],
    isa: Isa,
) {
    let rows = m - j;
    for c in 0..b {
        let col = &mut v[c * rows..(c + 1) * rows];
        for (i, x) in col.iter_mut().enumerate() {
            *x = if i < c {
                T::ZERO
            } else if i == c {
                T::ONE
            } else {
                a[j + i + (j + c) * lda]
            };
        }
    }
    for c in 0..b {
        t[c + c * b] = tau[j + c];
        // T[0..c, c] = −τ_c · T[0..c, 0..c] · (V[:, 0..c]ᴴ v_c).
        let vc = &v[c * rows..(c + 1) * rows];
        let mut z = [T::ZERO; PANEL];
        for (i, zi) in z.iter_mut().enumerate().take(c) {
            *zi = dot(isa, &v[i * rows + c..(i + 1) * rows], &vc[c..]);
        }
        let nt = -tau[j + c];
        for i in 0..c {
            let mut acc = T::ZERO;
            for (l, zl) in z.iter().enumerate().take(c).skip(i) {
                acc = T::fma_add(acc, t[i + l * b], *zl);
            }
            t[i + c * b] = nt * acc;
        }
    }
}

/// `C ← (I − V op(T) Vᴴ) C` for the `rows × cols` block C (leading
/// dimension `ldc`), op(T) = Tᴴ where `adjoint` (applying Qᴴ), T where not
/// (applying Q). `w` holds `b × cols`, `neg` `rows × b`.
#[allow(clippy::too_many_arguments)]
fn apply_wy<T: Field>(
    (rows, cols, b): (usize, usize, usize),
    v: &[T],
    t: &[T],
    adjoint: bool,
    c: &mut [T],
    ldc: usize,
    w: &mut [T],
    neg: &mut [T],
    isa: Isa,
    exec: &Exec,
) {
    if cols == 0 {
        return;
    }
    let w = &mut w[..b * cols];
    w.fill(T::ZERO);
    // W = −Vᴴ C.
    gemm_sub(
        isa,
        (b, cols, rows),
        Op::adjoint(v, rows),
        Op::plain(c, ldc),
        w,
        b,
        neg,
        exec,
    );
    // W ← −op(T)·W = op(T) Vᴴ C, column by column (T is b × b).
    times_t(isa, b, cols, t, adjoint, w);
    // C ← C − V·W.
    gemm_sub(
        isa,
        (rows, cols, b),
        Op::plain(v, rows),
        Op::plain(w, b),
        c,
        ldc,
        neg,
        exec,
    );
}

tiered!(
    /// `W ← −op(T)·W` for the `b × cols` W (leading dimension b), T upper
    /// triangular `b × b`: each element a chain of fused steps in
    /// increasing l from +0, negated (compiled whole per instruction set).
    times_t, times_t_body,
    (b: usize, cols: usize, t: &[T], adjoint: bool, w: &mut [T])
);

#[inline(always)]
fn times_t_body<T: Field>(b: usize, cols: usize, t: &[T], adjoint: bool, w: &mut [T]) {
    let mut y = [T::ZERO; PANEL];
    for q in 0..cols {
        let col = &mut w[q * b..(q + 1) * b];
        for (i, yi) in y.iter_mut().enumerate().take(b) {
            let mut acc = T::ZERO;
            if adjoint {
                // (Tᴴ)_il = conj(T_li), l ≤ i.
                for (l, x) in col.iter().enumerate().take(i + 1) {
                    acc = T::fma_add(acc, t[l + i * b].conj(), *x);
                }
            } else {
                for (l, x) in col.iter().enumerate().skip(i) {
                    acc = T::fma_add(acc, t[i + l * b], *x);
                }
            }
            *yi = -acc;
        }
        col.copy_from_slice(&y[..b]);
    }
}

/// Factor the `m × n` matrix `a` (column-major, leading dimension m) in
/// place: R on and above the diagonal (its diagonal real), the reflectors'
/// v below it, their τ in `tau` (min(m, n)). `work` holds [`work_len`].
pub(crate) fn factor<T: Field>(
    m: usize,
    n: usize,
    a: &mut [T],
    tau: &mut [T],
    work: &mut [T],
    isa: Isa,
    exec: &Exec,
) {
    let k = m.min(n);
    let (v, rest) = work.split_at_mut(m * PANEL);
    let (t, rest) = rest.split_at_mut(PANEL * PANEL);
    let (neg, w) = rest.split_at_mut(m * PANEL);
    let mut j = 0;
    while j < k {
        let b = PANEL.min(k - j);
        for c in j..j + b {
            let (left, right) = a.split_at_mut((c + 1) * m);
            let col = &mut left[c * m..];
            let (beta, tc) = householder::make(col[c], &mut col[c + 1..m]);
            col[c] = T::from_real(beta);
            tau[c] = tc;
            let vv = &col[c + 1..m];
            for q in 0..j + b - c - 1 {
                householder::apply(vv, tc, true, &mut right[q * m + c..(q + 1) * m], isa);
            }
        }
        if j + b < n {
            panel_wy((m, m), j, b, a, tau, v, t, isa);
            let rows = m - j;
            apply_wy(
                (rows, n - j - b, b),
                &v[..rows * b],
                &t[..b * b],
                true,
                &mut a[j + (j + b) * m..],
                m,
                w,
                neg,
                isa,
                exec,
            );
        }
        j += b;
    }
}

/// q (`m × qc`, column-major, leading dimension m; qc = min(m, n) for the
/// reduced factor, m for the complete one): the reflectors [`factor`] left
/// in `a` and `tau` applied to the identity's first qc columns. `work`
/// holds [`work_len`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn form_q<T: Field>(
    m: usize,
    k: usize,
    a: &[T],
    tau: &[T],
    q: &mut [T],
    qc: usize,
    work: &mut [T],
    isa: Isa,
    exec: &Exec,
) {
    form_q_ld((m, k, qc), (a, m), tau, (q, m), work, isa, exec);
}

/// [`form_q`] on strided storage: q (`m × qc`, leading dimension `ldq`)
/// ← the first qc columns of `H₀ ⋯ H_{k−1}`, reflector i stored below
/// (i, i) of `a` (leading dimension `lda`, its leading 1 not read), τᵢ in
/// `tau[i]`. Only q's first m rows of each column are written. `work`
/// holds [`work_len`]`(m, qc, qc)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn form_q_ld<T: Field>(
    (m, k, qc): (usize, usize, usize),
    (a, lda): (&[T], usize),
    tau: &[T],
    (q, ldq): (&mut [T], usize),
    work: &mut [T],
    isa: Isa,
    exec: &Exec,
) {
    if m == 0 {
        return;
    }
    for c in 0..qc {
        for (i, x) in q[c * ldq..c * ldq + m].iter_mut().enumerate() {
            *x = if i == c { T::ONE } else { T::ZERO };
        }
    }
    let (v, rest) = work.split_at_mut(m * PANEL);
    let (t, rest) = rest.split_at_mut(PANEL * PANEL);
    let (neg, w) = rest.split_at_mut(m * PANEL);
    let last = if k == 0 { 0 } else { (k - 1) / PANEL * PANEL };
    let mut j = last;
    loop {
        if j < k {
            let b = PANEL.min(k - j);
            panel_wy((m, lda), j, b, a, tau, v, t, isa);
            let rows = m - j;
            // Columns left of j are zero in rows j.. (the identity's).
            apply_wy(
                (rows, qc - j, b),
                &v[..rows * b],
                &t[..b * b],
                false,
                &mut q[j + j * ldq..],
                ldq,
                w,
                neg,
                isa,
                exec,
            );
        }
        if j == 0 {
            break;
        }
        j -= PANEL;
    }
}

/// q (`n × n`, leading dimension `ldq`) ← `H₀ ⋯ H_{n−2}`, reflector i
/// stored from (i + 1, i) down (its leading 1 not read) in `a` (leading
/// dimension `lda`), τᵢ in `tau[i]`: the Q of a Hermitian tridiagonal
/// reduction or the right factor of a bidiagonal one. `work` holds
/// [`work_len`]`(n, n, n)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn form_q_shifted<T: Field>(
    n: usize,
    (a, lda): (&[T], usize),
    tau: &[T],
    (q, ldq): (&mut [T], usize),
    work: &mut [T],
    isa: Isa,
    exec: &Exec,
) {
    if n == 0 {
        return;
    }
    for j in 0..n {
        q[j * ldq..j * ldq + n].fill(T::ZERO);
    }
    q[0] = T::ONE;
    if n == 1 {
        return;
    }
    form_q_ld(
        (n - 1, n - 1, n - 1),
        (&a[1..], lda),
        tau,
        (&mut q[1 + ldq..], ldq),
        work,
        isa,
        exec,
    );
}
