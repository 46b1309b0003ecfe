//! The implicit-shift QR iteration of Golub and Kahan (Golub–Reinsch) on a
//! real upper bidiagonal matrix, the rotations accumulated into the columns
//! of the left and right factors, the signs made non-negative and the
//! descending sort.

use crate::linalg::eigh::ops::{swap_cols, Rotations};
use crate::linalg::field::{Field, Real};
use crate::linalg::update::Isa;

/// The tolerance of the convergence test: a superdiagonal element below
/// `max(10, min(100, u^(−1/8))) · u` times its neighbours is dropped.
fn tolerance<R: Real>() -> R {
    let u = R::UNIT.to_f64();
    R::of(10f64.max(100f64.min(u.powf(-0.125))) * u)
}

/// A factor the rotations act on: column-major, `rows` rows.
pub(crate) struct Factor<'a, T> {
    /// The elements.
    pub data: &'a mut [T],
    /// Its rows (the columns' length).
    pub rows: usize,
}

/// Diagonalises the bidiagonal `d` (k) / `rv` (k, `rv[i]` at (i−1, i),
/// `rv[0]` unused) in place: `d` ends as the singular values, non-negative
/// and unsorted. Rotations from the left act on `left`'s first k columns,
/// those from the right on `right`'s, through the queues `rots` (flushed
/// before the return). False beyond `6 k²` QR sweeps. The
/// values are finite and of magnitudes near 1 or less (the caller
/// normalises them).
pub(crate) fn golub_kahan<T: Field>(
    isa: Isa,
    d: &mut [T::Real],
    rv: &mut [T::Real],
    mut left: Option<Factor<'_, T>>,
    mut right: Option<Factor<'_, T>>,
    rots: (&mut Rotations<T::Real>, &mut Rotations<T::Real>),
) -> bool {
    let (rl, rr) = rots;
    let k = d.len();
    if k == 0 {
        return true;
    }
    let zero = T::Real::ZERO;
    let one = T::Real::ONE;
    let two = T::Real::of(2.0);
    let u = T::Real::UNIT;
    let tol = tolerance::<T::Real>();
    let tiny = T::Real::MIN_NORMAL;
    rv[0] = zero;
    let mut anorm = zero;
    for i in 0..k {
        anorm = anorm.max_nan(d[i].fabs() + rv[i].fabs());
    }
    let dneg = u * anorm; // a diagonal element below this is negligible
    let cap = 6 * k * k;
    let mut sweeps = 0usize;
    let mut converged = true;
    let mut rot_left = |i: usize, j: usize, c: T::Real, s: T::Real| {
        if let Some(f) = left.as_mut() {
            // (x, y) ← (c x + s y, c y − s x)
            rl.push(isa, f.data, f.rows, (i, j), c, -s);
        }
    };
    for kk in (0..k).rev() {
        loop {
            // The block l..=kk: rv[l] negligible, or d[l−1] (then cancelled).
            let mut l = kk;
            let mut cancel = false;
            loop {
                if l == 0 {
                    break;
                }
                let r = rv[l].fabs();
                if r <= tol * (d[l - 1].fabs() + d[l].fabs()) || r <= tiny {
                    break;
                }
                if d[l - 1].fabs() <= dneg {
                    cancel = true;
                    break;
                }
                l -= 1;
            }
            if cancel {
                // d[l−1] negligible: rotate rv[l..] away from the left.
                let nm = l - 1;
                let (mut c, mut s) = (zero, one);
                for i in l..=kk {
                    let f = s * rv[i];
                    rv[i] = c * rv[i];
                    if f.fabs() <= dneg {
                        break;
                    }
                    let g = d[i];
                    let h = f.hypot(g);
                    d[i] = h;
                    c = g / h;
                    s = -f / h;
                    rot_left(nm, i, c, s);
                }
            }
            let z = d[kk];
            if l == kk {
                // Converged; a negative value is made positive (with its
                // right vector) at the end, when the queues are flushed.
                break;
            }
            sweeps += 1;
            if sweeps > cap {
                converged = false;
                break;
            }
            // The shift from the trailing 2×2 block of BᵀB.
            let mut x = d[l];
            let nm = kk - 1;
            let mut y = d[nm];
            let mut g = rv[nm];
            let mut h = rv[kk];
            let mut f = ((y - z) * (y + z) + (g - h) * (g + h)) / (two * h * y);
            g = f.hypot(one);
            f = ((x - z) * (x + z) + h * ((y / (f + g.copysign(f))) - h)) / x;
            let (mut c, mut s) = (one, one);
            for j in l..=nm {
                let i = j + 1;
                g = rv[i];
                y = d[i];
                h = s * g;
                g = c * g;
                let mut zz = f.hypot(h);
                rv[j] = zz;
                c = f / zz;
                s = h / zz;
                f = x.mul_add(c, g * s);
                g = g.mul_add(c, -(x * s));
                h = y * s;
                y = y * c;
                if let Some(fr) = right.as_mut() {
                    rr.push(isa, fr.data, fr.rows, (j, i), c, -s);
                }
                zz = f.hypot(h);
                d[j] = zz;
                if zz != zero {
                    let r = one / zz;
                    c = f * r;
                    s = h * r;
                }
                f = c.mul_add(g, s * y);
                x = c.mul_add(y, -(s * g));
                rot_left(j, i, c, s);
            }
            rv[l] = zero;
            rv[kk] = f;
            d[kk] = x;
        }
        if !converged {
            break;
        }
    }
    if let Some(f) = left.as_mut() {
        rl.flush(isa, f.data, f.rows);
    }
    if let Some(f) = right.as_mut() {
        rr.flush(isa, f.data, f.rows);
    }
    if !converged {
        return false;
    }
    for (kk, x) in d.iter_mut().enumerate() {
        if *x < zero {
            *x = -*x;
            if let Some(f) = right.as_mut() {
                for y in &mut f.data[kk * f.rows..(kk + 1) * f.rows] {
                    *y = -*y;
                }
            }
        } else if *x == zero {
            *x = zero; // +0
        }
    }
    true
}

/// Sorts `d` descending (selection of the first greatest value at each
/// step: a fixed rule), swapping the factors' columns along.
pub(crate) fn sort_descending<T: Field>(
    d: &mut [T::Real],
    mut left: Option<Factor<'_, T>>,
    mut right: Option<Factor<'_, T>>,
) {
    let n = d.len();
    for i in 0..n {
        let mut k = i;
        for j in i + 1..n {
            if d[j] > d[k] {
                k = j;
            }
        }
        if k != i {
            d.swap(i, k);
            if let Some(f) = left.as_mut() {
                swap_cols(f.data, f.rows, i, k);
            }
            if let Some(f) = right.as_mut() {
                swap_cols(f.data, f.rows, i, k);
            }
        }
    }
}
