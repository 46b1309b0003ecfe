//! Householder reduction of a tall matrix (p×q, p ≥ q) to a real upper
//! bidiagonal one, `Qᴴ A P = B`, and the forming of `Q = H₀ ⋯ H_{q−1}`
//! and `P = G₀ ⋯ G_{q−2}`.
//!
//! **Order.** By panels of [`PANEL`] columns while more than [`UNBLOCKED`]
//! columns are left (LAPACK's `gebrd`/`labrd`): a panel's reflectors are
//! made one by one from its column and row brought up to date with the
//! panel's earlier reflectors (`A − V Yᴴ − X Uᴴ` on one column and one
//! row), `X` and `Y` with level-2 operations; the trailing matrix is then
//! updated at once, `A ← A − V Yᴴ − X Uᴴ`, through [`gemm_neg`]. The last
//! columns are reduced one by one (`gebd2`). Q and P are formed in compact
//! WY panels through [`gemm_sub`](crate::linalg::update::gemm_sub). Every
//! choice is a function of the shape alone.

use crate::linalg::eigh::ops::{dotc, larfg, sub_projection};
use crate::linalg::field::Field;
use crate::linalg::qr::factor::{form_q_ld, form_q_shifted, work_len};
use crate::linalg::update::{axpy_sub, gemm_neg, Isa, Op};
use crate::tier::Exec;

/// The panel width of the blocked reduction.
pub(crate) const PANEL: usize = 32;
const _: () = assert!(PANEL <= crate::linalg::eigh::ops::PROJECTED);

/// The columns left to the unblocked reduction: a matrix of at most this
/// many columns is reduced one column at a time.
pub(crate) const UNBLOCKED: usize = 64;

/// The work of [`bidiagonalise`] for a p×q matrix (V's copy, X, Y, U, and
/// the two operands of the trailing update), in elements.
pub(crate) fn reduce_work_len(p: usize, q: usize) -> usize {
    if q > UNBLOCKED {
        (3 * p + 4 * q) * PANEL
    } else {
        0
    }
}

/// The work of [`form_left`] (c columns) and [`form_right`] for a p×q
/// matrix, in elements.
pub(crate) fn form_work_len(p: usize, q: usize, c: usize) -> usize {
    work_len(p, c, c).max(work_len(q, q, q))
}

/// Reduces `b` (p×q column-major, p ≥ q ≥ 1) to the bidiagonal `d` (q) /
/// `e` (q−1, `e[i]` at (i, i+1)). The left reflector `Hᵢ` is left in
/// `b[i.., i]` (its leading 1 stored) and `tauq[i]`; the right one `Gᵢ`,
/// where `pv` is given (q×q), in `pv[i+1.., i]` and `taup[i]`. `row` and
/// `y` hold q and p scalars.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bidiagonalise<T: Field>(
    isa: Isa,
    (p, q): (usize, usize),
    b: &mut [T],
    d: &mut [T::Real],
    e: &mut [T::Real],
    tauq: &mut [T],
    taup: &mut [T],
    mut pv: Option<&mut [T]>,
    row: &mut [T],
    y: &mut [T],
    work: &mut [T],
    exec: &Exec,
) {
    let mut start = 0;
    while q - start > UNBLOCKED {
        reduce_panel(
            isa,
            (p, q),
            start,
            b,
            d,
            e,
            (&mut *tauq, &mut *taup),
            pv.as_deref_mut(),
            work,
            exec,
        );
        start += PANEL;
    }
    unblocked(isa, (p, q), start, b, d, e, tauq, taup, pv, row, y);
}

/// The unblocked reduction (LAPACK's `gebd2`) of columns `start..` of `b`,
/// the columns before it reduced.
#[allow(clippy::too_many_arguments)]
fn unblocked<T: Field>(
    isa: Isa,
    (p, q): (usize, usize),
    start: usize,
    b: &mut [T],
    d: &mut [T::Real],
    e: &mut [T::Real],
    tauq: &mut [T],
    taup: &mut [T],
    mut pv: Option<&mut [T]>,
    row: &mut [T],
    y: &mut [T],
) {
    for i in start..q {
        // H_i annihilates b[i+1.., i]; Hᵢᴴ applied to b[i.., i+1..].
        let c0 = i + i * p;
        let (beta, tq) = larfg(b[c0], &mut b[c0 + 1..(i + 1) * p]);
        d[i] = beta;
        tauq[i] = tq;
        b[c0] = T::ONE;
        if tq != T::ZERO {
            let (head, tail) = b.split_at_mut((i + 1) * p);
            let v = &head[c0..];
            let tc = tq.conj();
            for j in 0..q - i - 1 {
                let col = &mut tail[j * p + i..(j + 1) * p];
                let s = dotc(isa, v, col);
                axpy_sub(isa, col, v, tc * s);
            }
        }
        if i + 1 >= q {
            continue;
        }
        // G_i annihilates b[i, i+2..] (on the conjugated row), applied to
        // b[i+1.., i+1..] from the right.
        let r = &mut row[..q - i - 1];
        for (jj, x) in r.iter_mut().enumerate() {
            *x = b[i + (i + 1 + jj) * p].conj();
        }
        let alpha = r[0];
        let (beta, tp) = larfg(alpha, &mut r[1..]);
        r[0] = T::ONE;
        e[i] = beta;
        taup[i] = tp;
        if let Some(pv) = pv.as_deref_mut() {
            pv[i + 1 + i * q..(i + 1) * q].copy_from_slice(r);
        }
        if tp != T::ZERO && i + 1 < p {
            let y = &mut y[..p - i - 1];
            y.fill(T::ZERO);
            for (jj, &vj) in r.iter().enumerate() {
                let col = &b[(i + 1 + jj) * p + i + 1..(i + 2 + jj) * p];
                axpy_sub(isa, y, col, -vj);
            }
            for (jj, &vj) in r.iter().enumerate() {
                let col = &mut b[(i + 1 + jj) * p + i + 1..(i + 2 + jj) * p];
                axpy_sub(isa, col, y, tp * vj.conj());
            }
        }
    }
}

/// `qm` (p×c column-major, c ≥ q) ← the first c columns of
/// `H₀ ⋯ H_{q−1}` from the reflectors [`bidiagonalise`] left in `b`,
/// `tauq`, in compact WY panels. `work` holds [`form_work_len`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn form_left<T: Field>(
    isa: Isa,
    (p, q, c): (usize, usize, usize),
    b: &[T],
    tauq: &[T],
    qm: &mut [T],
    work: &mut [T],
    exec: &Exec,
) {
    form_q_ld((p, q, c), (b, p), tauq, (qm, p), work, isa, exec);
}

/// `pm` (q×q column-major) ← `G₀ ⋯ G_{q−2}` from the reflectors
/// [`bidiagonalise`] left in `pv`, `taup`, in compact WY panels. `work`
/// holds [`form_work_len`].
pub(crate) fn form_right<T: Field>(
    isa: Isa,
    q: usize,
    pv: &[T],
    taup: &[T],
    pm: &mut [T],
    work: &mut [T],
    exec: &Exec,
) {
    form_q_shifted(q, (pv, q), taup, (pm, q), work, isa, exec);
}

/// One panel of the blocked reduction (LAPACK's `labrd`, then the
/// rank-2·[`PANEL`] update of `gebrd`): columns `i0..i0 + PANEL` of `b`
/// (p×q, `q − i0 > PANEL`) and the rows beside them reduced, the
/// reflectors stored as [`bidiagonalise`] states, the trailing matrix
/// updated.
#[allow(clippy::too_many_arguments)]
fn reduce_panel<T: Field>(
    isa: Isa,
    (p, q): (usize, usize),
    i0: usize,
    b: &mut [T],
    d: &mut [T::Real],
    e: &mut [T::Real],
    (tauq, taup): (&mut [T], &mut [T]),
    mut pv: Option<&mut [T]>,
    work: &mut [T],
    exec: &Exec,
) {
    let nb = PANEL;
    let rp = p - i0; // X's rows: global rows i0..p
    let rq = q - i0; // Y's and U's rows: global columns i0..q
    let (xm, rest) = work.split_at_mut(rp * nb);
    let (ym, rest) = rest.split_at_mut(rq * nb);
    let (um, rest) = rest.split_at_mut(rq * nb);
    let (na, rest) = rest.split_at_mut(2 * rp * nb);
    let bb = &mut rest[..2 * rq * nb];
    for c in 0..nb {
        let i = i0 + c;
        // Column i (rows i..) brought up to date: − V Y[i, ..c]ᴴ − X U[i, ..c]ᴴ.
        {
            let (left, right) = b.split_at_mut(i * p);
            let col = &mut right[i..p];
            for l in 0..c {
                let vl = &left[(i0 + l) * p + i..(i0 + l + 1) * p];
                axpy_sub(isa, col, vl, ym[(i - i0) + l * rq].conj());
                let xl = &xm[l * rp + (i - i0)..(l + 1) * rp];
                axpy_sub(isa, col, xl, um[(i - i0) + l * rq].conj());
            }
        }
        // The left reflector of column i.
        let c0 = i + i * p;
        let (beta, tq) = larfg(b[c0], &mut b[c0 + 1..(i + 1) * p]);
        d[i] = beta;
        tauq[i] = tq;
        b[c0] = T::ONE;
        {
            let (yl, yr) = ym.split_at_mut(c * rq);
            let yc = &mut yr[i + 1 - i0..rq];
            if tq == T::ZERO {
                yc.fill(T::ZERO);
            } else {
                let (head, tail) = b.split_at_mut((i + 1) * p);
                let v = &head[c0..];
                // Y[:, c] = τ (Bᴴ v − Y (Vᴴ v) − U (Xᴴ v)).
                for (jj, x) in yc.iter_mut().enumerate() {
                    *x = dotc(isa, &tail[jj * p + i..(jj + 1) * p], v);
                }
                sub_projection(isa, yc, c, v, |l| {
                    (
                        &head[(i0 + l) * p + i..(i0 + l + 1) * p],
                        &yl[l * rq + (i + 1 - i0)..(l + 1) * rq],
                    )
                });
                sub_projection(isa, yc, c, v, |l| {
                    (
                        &xm[l * rp + (i - i0)..(l + 1) * rp],
                        &um[l * rq + (i + 1 - i0)..(l + 1) * rq],
                    )
                });
                for x in yc.iter_mut() {
                    *x = tq * *x;
                }
            }
        }
        // Row i (columns i+1..), conjugated, brought up to date:
        // r = conj(row) − Y V[i, ..=c]ᴴ − U X[i, ..c]ᴴ; into U[:, c].
        let (ul, ur) = um.split_at_mut(c * rq);
        let r = &mut ur[i + 1 - i0..rq];
        for (jj, x) in r.iter_mut().enumerate() {
            *x = b[i + (i + 1 + jj) * p].conj();
        }
        for l in 0..=c {
            let vil = b[i + (i0 + l) * p];
            axpy_sub(isa, r, &ym[l * rq + (i + 1 - i0)..(l + 1) * rq], vil.conj());
        }
        for l in 0..c {
            let xil = xm[(i - i0) + l * rp];
            axpy_sub(isa, r, &ul[l * rq + (i + 1 - i0)..(l + 1) * rq], xil.conj());
        }
        // The right reflector of row i.
        let alpha = r[0];
        let (beta, tp) = larfg(alpha, &mut r[1..]);
        r[0] = T::ONE;
        e[i] = beta;
        taup[i] = tp;
        if let Some(pv) = pv.as_deref_mut() {
            pv[i + 1 + i * q..(i + 1) * q].copy_from_slice(r);
        }
        ur[..i + 1 - i0].fill(T::ZERO);
        let u = &ur[i + 1 - i0..rq];
        let (xl, xr) = xm.split_at_mut(c * rp);
        let xc = &mut xr[i + 1 - i0..rp];
        if tp == T::ZERO {
            xc.fill(T::ZERO);
            continue;
        }
        // X[:, c] = τ (B u − V (Yᴴ u) − X (Uᴴ u)) on rows i+1...
        xc.fill(T::ZERO);
        for (jj, &uj) in u.iter().enumerate() {
            axpy_sub(isa, xc, &b[(i + 1 + jj) * p + i + 1..(i + 2 + jj) * p], -uj);
        }
        sub_projection(isa, xc, c + 1, u, |l| {
            (
                &ym[l * rq + (i + 1 - i0)..(l + 1) * rq],
                &b[(i0 + l) * p + i + 1..(i0 + l + 1) * p],
            )
        });
        sub_projection(isa, xc, c, u, |l| {
            (
                &ul[l * rq + (i + 1 - i0)..(l + 1) * rq],
                &xl[l * rp + (i + 1 - i0)..(l + 1) * rp],
            )
        });
        for x in xc.iter_mut() {
            *x = tp * *x;
        }
    }
    // The trailing matrix (rows sp.., columns sq..):
    // A ← A − [V X]·[Y U]ᴴ.
    let s = i0 + nb;
    let (rows, cols) = (p - s, q - s);
    let k = 2 * nb;
    for l in 0..nb {
        let vl = &b[(i0 + l) * p + s..(i0 + l + 1) * p];
        let xl = &xm[l * rp + nb..(l + 1) * rp];
        for (r, (&v, &x)) in vl.iter().zip(xl).enumerate() {
            na[r + l * rows] = -v;
            na[r + (nb + l) * rows] = -x;
        }
        let yl = &ym[l * rq + nb..(l + 1) * rq];
        let ul = &um[l * rq + nb..(l + 1) * rq];
        for (r, (&y, &u)) in yl.iter().zip(ul).enumerate() {
            bb[r + l * cols] = y;
            bb[r + (nb + l) * cols] = u;
        }
    }
    gemm_neg(
        isa,
        (rows, cols, k),
        na,
        rows,
        Op::adjoint(bb, cols),
        &mut b[s + s * p..],
        p,
        exec,
    );
}
