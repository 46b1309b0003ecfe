//! The implicit QL iteration with Wilkinson shifts on a real symmetric
//! tridiagonal matrix (EISPACK's `tql2`), the rotations accumulated into the
//! columns of a (real or complex) matrix, and the ascending sort.

use super::ops::{swap_cols, Rotations};
use crate::linalg::field::{Field, Real};
use crate::linalg::update::Isa;

/// Diagonalises the tridiagonal `d` (n) / `e` (n, `e[i]` couples `d[i]`
/// and `d[i+1]`, `e[n−1]` unused) in place: `d` ends as the eigenvalues
/// (unsorted). Where `z` (n×n column-major) is given, its columns are
/// rotated along (`z ← z·G`). False where the iteration takes more than
/// `30 n` QL sweeps. The rotations go through `rots` (flushed before the
/// return). `d` and `e` are finite, with magnitudes at most a few
/// units (the caller normalises them).
pub(crate) fn tql<T: Field>(
    isa: Isa,
    n: usize,
    d: &mut [T::Real],
    e: &mut [T::Real],
    mut z: Option<&mut [T]>,
    rots: &mut Rotations<T::Real>,
) -> bool {
    if n == 0 {
        return true;
    }
    let zero = T::Real::ZERO;
    let one = T::Real::ONE;
    let two = T::Real::of(2.0);
    let u = T::Real::UNIT;
    let tiny = T::Real::MIN_NORMAL;
    e[n - 1] = zero;
    let cap = 30 * n;
    let mut sweeps = 0usize;
    for l in 0..n {
        loop {
            // The first negligible off-diagonal element from l on.
            let mut m = l;
            while m + 1 < n {
                let dd = d[m].fabs() + d[m + 1].fabs();
                let em = e[m].fabs();
                if em <= u * dd || em <= tiny {
                    break;
                }
                m += 1;
            }
            if m == l {
                break;
            }
            sweeps += 1;
            if sweeps > cap {
                if let Some(z) = z.as_deref_mut() {
                    rots.flush(isa, z, n);
                }
                return false;
            }
            // Wilkinson's shift from the leading 2×2 block.
            let mut g = (d[l + 1] - d[l]) / (two * e[l]);
            let mut r = g.hypot(one);
            g = d[m] - d[l] + e[l] / (g + r.copysign(g));
            let (mut s, mut c, mut p) = (one, one, zero);
            let mut i = m;
            let mut collapsed = false;
            while i > l {
                i -= 1;
                let f = s * e[i];
                let b = c * e[i];
                r = f.hypot(g);
                e[i + 1] = r;
                if r == zero {
                    // Underflow: the block splits here.
                    d[i + 1] = d[i + 1] - p;
                    e[m] = zero;
                    collapsed = true;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g).mul_add(s, two * c * b);
                p = s * r;
                d[i + 1] = g + p;
                g = c.mul_add(r, -b);
                if let Some(z) = z.as_deref_mut() {
                    // (z_i, z_{i+1}) ← (c z_i − s z_{i+1}, s z_i + c z_{i+1})
                    rots.push(isa, z, n, (i, i + 1), c, s);
                }
            }
            if collapsed {
                continue;
            }
            d[l] = d[l] - p;
            e[l] = g;
            e[m] = zero;
        }
    }
    if let Some(z) = z {
        rots.flush(isa, z, n);
    }
    true
}

/// Sorts `d` ascending (selection of the first least value at each step: a
/// fixed rule), swapping `z`'s columns (`rows` rows) along.
pub(crate) fn sort_ascending<T: Field>(d: &mut [T::Real], mut z: Option<&mut [T]>, rows: usize) {
    let n = d.len();
    for i in 0..n {
        let mut k = i;
        for j in i + 1..n {
            if d[j] < d[k] {
                k = j;
            }
        }
        if k != i {
            d.swap(i, k);
            if let Some(z) = z.as_deref_mut() {
                swap_cols(z, rows, i, k);
            }
        }
    }
}
