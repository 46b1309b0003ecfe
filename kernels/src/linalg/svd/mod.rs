//! The singular value decomposition of one matrix on a column-major
//! buffer: Householder bidiagonalisation ([`bidiagonal`]) of the matrix or,
//! when it is wide, of its conjugate transpose, the Golub–Kahan implicit
//! QR iteration ([`iteration`]), the descending sort. Every choice is a
//! function of the shape and the dtype alone, and every operation a fixed
//! chain of roundings, so the bits are those of the values whatever the
//! threads or the tier.

pub(crate) mod bidiagonal;
pub(crate) mod iteration;

use crate::linalg::eigh::ops::{normalising_exponent, scale_pow2, scale_slice, Rotations};
use crate::linalg::field::{Field, Real};
use crate::linalg::update::Isa;
use crate::linalg::work::Carve;
use crate::tier::Exec;
use iteration::Factor;

/// Rotations queued per unit of min(m, n) before they are applied to the
/// factors by blocks of rows (the bits do not depend on it).
const ROTATIONS_PER_ORDER: usize = 64;

/// The working memory of [`svd_one`] for m×n matrices.
pub(crate) struct SvdWork<'a, T: Field> {
    m: usize,
    n: usize,
    vectors: bool,
    /// The conjugate transpose of a wide matrix (n×m).
    t: &'a mut [T],
    /// The left factor of a wide matrix's transpose, reduced (n×m).
    lw: &'a mut [T],
    /// The right factor of a tall matrix (n×n).
    rw: &'a mut [T],
    /// The right reflectors (k×k).
    pv: &'a mut [T],
    d: &'a mut [T::Real],
    e: &'a mut [T::Real],
    tauq: &'a mut [T],
    taup: &'a mut [T],
    row: &'a mut [T],
    y: &'a mut [T],
    /// The blocked reduction's X, Y, U and update operands.
    blk: &'a mut [T],
    /// The forming of the factors' panels (with vectors).
    wy: &'a mut [T],
    rl: Rotations<'a, T::Real>,
    rr: Rotations<'a, T::Real>,
}

impl<'a, T: Field> SvdWork<'a, T> {
    /// Work for m×n matrices (`vectors`: whether u and vh will be asked
    /// for; [`svd_one`] refuses a work of another shape, or one made
    /// without vectors when they are asked for), carved from `area`.
    pub(crate) fn new(area: &mut Carve<'a>, m: usize, n: usize, vectors: bool) -> Self {
        let k = m.min(n);
        let p = m.max(n);
        let wide = m < n;
        let mn = m.saturating_mul(n);
        let rots = if vectors {
            ROTATIONS_PER_ORDER.saturating_mul(k)
        } else {
            0
        };
        SvdWork {
            m,
            n,
            vectors,
            t: area.take(if wide { mn } else { 0 }),
            lw: area.take(if wide && vectors { mn } else { 0 }),
            rw: area.take(if !wide && vectors {
                n.saturating_mul(n)
            } else {
                0
            }),
            pv: area.take(if vectors { k.saturating_mul(k) } else { 0 }),
            d: area.take(k),
            e: area.take(k),
            tauq: area.take(k),
            taup: area.take(k),
            row: area.take(k),
            y: area.take(p),
            blk: area.take(bidiagonal::reduce_work_len(p, k)),
            wy: area.take(if vectors {
                bidiagonal::form_work_len(p, k, p)
            } else {
                0
            }),
            rl: Rotations::new(area, rots),
            rr: Rotations::new(area, rots),
        }
    }
}

/// The singular values `s` (k = min(m, n), descending, non-negative, a zero
/// +0) of the m×n column-major `a` (`a[i + j m]`, overwritten) and, where
/// `u = (buf, ucols)` and `vh = (buf, vhrows)` are given (both or neither),
/// the m×ucols column-major u and vhrows×n column-major vh (ucols k or m,
/// vhrows k or n) with `a = u diag(s) vh` over u's first k columns and vh's
/// first k rows, u's columns and vh's rows orthonormal. False where `a`
/// holds NaN or an infinity, or the iteration does not converge.
#[allow(clippy::too_many_arguments)]
pub(crate) fn svd_one<T: Field>(
    m: usize,
    n: usize,
    a: &mut [T],
    s: &mut [T::Real],
    u: Option<(&mut [T], usize)>,
    vh: Option<(&mut [T], usize)>,
    work: &mut SvdWork<T>,
    isa: Isa,
    exec: &Exec,
) -> bool {
    // The threads only share the matrix products; the bits never depend
    // on them.
    let k = m.min(n);
    if k == 0 {
        return true;
    }
    let vectors = u.is_some() && vh.is_some();
    // A work made for another shape, or without vectors when they are
    // asked for, is the caller's error: refused, never a panic.
    debug_assert!(work.m == m && work.n == n && (work.vectors || !vectors));
    if work.m != m || work.n != n || (vectors && !work.vectors) {
        return false;
    }
    let a = &mut a[..m * n];
    let mut amax = T::Real::ZERO;
    for x in a.iter() {
        if !x.is_finite() {
            return false;
        }
        amax = amax.max_nan(x.re().fabs()).max_nan(x.im().fabs());
    }
    let sc = normalising_exponent(amax);
    let wide = m < n;
    let (p, q) = if wide { (n, m) } else { (m, n) };
    let SvdWork {
        t,
        lw,
        rw,
        pv,
        d,
        e,
        tauq,
        taup,
        row,
        y,
        blk,
        wy,
        rl,
        rr,
        ..
    } = work;
    let b: &mut [T] = if wide {
        // Aᴴ (n×m): row j of a, conjugated, is column j of b.
        for j in 0..n {
            for i in 0..m {
                t[j + i * n] = a[i + j * m].conj();
            }
        }
        &mut t[..]
    } else {
        a
    };
    scale_slice(b, sc);
    let (d, e) = (&mut d[..k], &mut e[..k]);
    bidiagonal::bidiagonalise(
        isa,
        (p, q),
        b,
        d,
        e,
        tauq,
        taup,
        if vectors { Some(&mut pv[..]) } else { None },
        row,
        y,
        blk,
        exec,
    );
    // The superdiagonal shifted in place: rv[i] couples d[i−1] and d[i].
    for i in (1..k).rev() {
        e[i] = e[i - 1];
    }
    e[0] = T::Real::ZERO;
    let rv = e;
    match (u, vh) {
        (Some((ub, ucols)), Some((vb, vhrows))) => {
            if !wide {
                // u (m×ucols) = Q·(rotations); vh = (P·rotations)ᴴ.
                let ub = &mut ub[..m * ucols];
                bidiagonal::form_left(isa, (p, q, ucols), b, tauq, ub, wy, exec);
                bidiagonal::form_right(isa, q, pv, taup, rw, wy, exec);
                if !iteration::golub_kahan(
                    isa,
                    d,
                    rv,
                    Some(Factor { data: ub, rows: p }),
                    Some(Factor { data: rw, rows: q }),
                    (&mut *rl, &mut *rr),
                ) {
                    return false;
                }
                iteration::sort_descending(
                    d,
                    Some(Factor { data: ub, rows: p }),
                    Some(Factor { data: rw, rows: q }),
                );
                for j in 0..n {
                    for r in 0..vhrows {
                        vb[r + j * vhrows] = rw[j + r * n].conj();
                    }
                }
            } else {
                // aᴴ = L Σ Rᴴ: u = R (m×m), vh = Lᴴ (vhrows×n).
                let ub = &mut ub[..m * m];
                let complete = vhrows == n;
                let lbuf: &mut [T] = if complete {
                    &mut vb[..n * n]
                } else {
                    &mut lw[..n * m]
                };
                bidiagonal::form_left(isa, (p, q, vhrows), b, tauq, lbuf, wy, exec);
                bidiagonal::form_right(isa, q, pv, taup, ub, wy, exec);
                if !iteration::golub_kahan(
                    isa,
                    d,
                    rv,
                    Some(Factor {
                        data: lbuf,
                        rows: p,
                    }),
                    Some(Factor { data: ub, rows: q }),
                    (&mut *rl, &mut *rr),
                ) {
                    return false;
                }
                iteration::sort_descending(
                    d,
                    Some(Factor {
                        data: lbuf,
                        rows: p,
                    }),
                    Some(Factor { data: ub, rows: q }),
                );
                if complete {
                    // In place: vh = Lᴴ (n×n).
                    for j in 0..n {
                        vb[j + j * n] = vb[j + j * n].conj();
                        for i in j + 1..n {
                            let x = vb[i + j * n];
                            vb[i + j * n] = vb[j + i * n].conj();
                            vb[j + i * n] = x.conj();
                        }
                    }
                } else {
                    for j in 0..n {
                        for r in 0..m {
                            vb[r + j * m] = lw[j + r * n].conj();
                        }
                    }
                }
            }
        }
        _ => {
            if !iteration::golub_kahan::<T>(isa, d, rv, None, None, (rl, rr)) {
                return false;
            }
            iteration::sort_descending::<T>(d, None, None);
        }
    }
    for (s, &x) in s[..k].iter_mut().zip(d.iter()) {
        *s = scale_pow2(x, -sc);
    }
    true
}

#[cfg(test)]
mod tests;
