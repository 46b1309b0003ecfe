//! Householder reduction of a tall matrix (p×q, p ≥ q) to a real upper
//! bidiagonal one, `Qᴴ A P = B` (LAPACK's `gebd2`), and the accumulation of
//! `Q = H₀ ⋯ H_{q−1}` and `P = G₀ ⋯ G_{q−2}`.

use crate::linalg::eigh::ops::{dotc, larfg, reflect};
use crate::linalg::field::Field;
use crate::linalg::update::{axpy_sub, Isa};

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
) {
    for i in 0..q {
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
/// `H₀ ⋯ H_{q−1}` from the reflectors [`bidiagonalise`] left in `b`, `tauq`.
pub(crate) fn form_left<T: Field>(
    isa: Isa,
    (p, q, c): (usize, usize, usize),
    b: &[T],
    tauq: &[T],
    qm: &mut [T],
) {
    qm[..p * c].fill(T::ZERO);
    for j in 0..c {
        qm[j + j * p] = T::ONE;
    }
    for i in (0..q).rev() {
        let t = tauq[i];
        if t == T::ZERO {
            continue;
        }
        let v = &b[i + i * p..(i + 1) * p];
        for j in i..c {
            reflect(isa, v, t, &mut qm[i + j * p..(j + 1) * p]);
        }
    }
}

/// `pm` (q×q column-major) ← `G₀ ⋯ G_{q−2}` from the reflectors
/// [`bidiagonalise`] left in `pv`, `taup`.
pub(crate) fn form_right<T: Field>(isa: Isa, q: usize, pv: &[T], taup: &[T], pm: &mut [T]) {
    pm[..q * q].fill(T::ZERO);
    for j in 0..q {
        pm[j + j * q] = T::ONE;
    }
    for i in (0..q.saturating_sub(1)).rev() {
        let t = taup[i];
        if t == T::ZERO {
            continue;
        }
        let v = &pv[i + 1 + i * q..(i + 1) * q];
        for j in i + 1..q {
            reflect(isa, v, t, &mut pm[i + 1 + j * q..(j + 1) * q]);
        }
    }
}
