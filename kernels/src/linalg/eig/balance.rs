//! Balancing as LAPACK's gebal (3.12): a permutation isolating the
//! eigenvalues that rows or columns of zeros allow, then powers of 2 that
//! bring each row's 2-norm near its column's, and the transformation's
//! inverse on eigenvectors (gebak).

use crate::linalg::field::{Field, Real};

/// The 2-norm of the parts of the values `it` gives, scaled by their
/// largest magnitude, in a fixed order.
fn norm<F: Field>(it: impl Iterator<Item = F> + Clone) -> F::Real {
    let zero = <F::Real as Field>::ZERO;
    let mut m = zero;
    for e in it.clone() {
        m = m.max_nan(e.re().fabs()).max_nan(e.im().fabs());
    }
    if m == zero {
        return m;
    }
    let mut s = zero;
    for e in it {
        let (a, b) = (e.re() / m, e.im() / m);
        s = s + a * a;
        if F::COMPLEX {
            s = s + b * b;
        }
    }
    s.sqrt() * m
}

/// Whether `x` is zero (both parts).
#[inline]
fn is_zero<F: Field>(x: F) -> bool {
    x.re() == <F::Real as Field>::ZERO && x.im() == <F::Real as Field>::ZERO
}

/// Swaps rows and columns `j` and `m` of the n×n `a` as gebal does:
/// columns over rows `0..=l`, rows over columns `k..n`.
fn exchange<F: Field>(n: usize, a: &mut [F], j: usize, m: usize, k: usize, l: usize) {
    if j == m {
        return;
    }
    for i in 0..=l {
        a.swap(i + j * n, i + m * n);
    }
    for c in k..n {
        a.swap(j + c * n, m + c * n);
    }
}

/// Balances the n×n column-major `a` in place: `a ← D⁻¹ Pᵀ a P D`.
/// Returns `(ilo, ihi)` (0-based, inclusive): rows and columns outside hold
/// isolated eigenvalues (the matrix is upper triangular there). `scale[i]`
/// is D's element for `ilo <= i <= ihi`; `perm[i]` the row exchanged with
/// `i` for the others.
pub(super) fn balance<F: Field>(
    n: usize,
    a: &mut [F],
    scale: &mut [F::Real],
    perm: &mut [usize],
) -> (usize, usize) {
    let one = <F::Real as Field>::ONE;
    for s in scale[..n].iter_mut() {
        *s = one;
    }
    for (i, p) in perm[..n].iter_mut().enumerate() {
        *p = i;
    }
    let mut k = 0usize;
    let mut l = n - 1;
    // Rows isolating an eigenvalue, pushed down.
    loop {
        let found = (0..=l)
            .rev()
            .find(|&j| (0..=l).all(|i| i == j || is_zero(a[j + i * n])));
        let Some(j) = found else { break };
        perm[l] = j;
        exchange(n, a, j, l, k, l);
        if l == 0 {
            return (0, 0);
        }
        l -= 1;
    }
    // Columns isolating an eigenvalue, pushed left (a last one stays the
    // block's own).
    while k < l {
        let found = (k..=l).find(|&j| (k..=l).all(|i| i == j || is_zero(a[i + j * n])));
        let Some(j) = found else { break };
        perm[k] = j;
        exchange(n, a, j, k, k, l);
        k += 1;
    }
    // Scaling by powers of two.
    let two = one + one;
    let half = one / two;
    let eps = <F::Real as Real>::UNIT + <F::Real as Real>::UNIT;
    let sfmin1 = <F::Real as Real>::MIN_NORMAL / eps;
    let sfmax1 = one / sfmin1;
    let sfmin2 = sfmin1 * two;
    let sfmax2 = one / sfmin2;
    let factor = <F::Real as Real>::of(0.95);
    // The loop ends where nothing changes; the cap is a guard only.
    for _ in 0..(100 + 10 * n) {
        let mut noconv = false;
        for i in k..=l {
            let c = norm((k..=l).map(|r| a[r + i * n]));
            let r = norm((k..=l).map(|cc| a[i + cc * n]));
            let mut ca = <F::Real as Field>::ZERO;
            for rr in 0..=l {
                ca = ca.max_nan(a[rr + i * n].abs());
            }
            let mut ra = <F::Real as Field>::ZERO;
            for cc in k..n {
                ra = ra.max_nan(a[i + cc * n].abs());
            }
            let zero = <F::Real as Field>::ZERO;
            if c == zero || r == zero {
                continue;
            }
            if (c + ca + r + ra).is_nan() {
                return (k, l);
            }
            let (mut c, mut r, mut ca, mut ra) = (c, r, ca, ra);
            let mut g = r / two;
            let mut f = one;
            let s = c + r;
            while c < g && f.max_nan(c).max_nan(ca) < sfmax2 && min3(r, g, ra) > sfmin2 {
                f = f * two;
                c = c * two;
                ca = ca * two;
                r = r * half;
                g = g * half;
                ra = ra * half;
            }
            g = c / two;
            while g >= r && r.max_nan(ra) < sfmax2 && min3(f, c, g).min_of(ca) > sfmin2 {
                f = f * half;
                c = c * half;
                g = g * half;
                ca = ca * half;
                r = r * two;
                ra = ra * two;
            }
            if c + r >= factor * s {
                continue;
            }
            if f < one && scale[i] < one && f * scale[i] <= sfmin1 {
                continue;
            }
            if f > one && scale[i] > one && scale[i] >= sfmax1 / f {
                continue;
            }
            let g = one / f;
            scale[i] = scale[i] * f;
            noconv = true;
            for cc in k..n {
                a[i + cc * n] = a[i + cc * n].scale(g);
            }
            for rr in 0..=l {
                a[rr + i * n] = a[rr + i * n].scale(f);
            }
        }
        if !noconv {
            break;
        }
    }
    (k, l)
}

/// The least of three.
fn min3<R: Real>(a: R, b: R, c: R) -> R {
    a.min_of(b).min_of(c)
}

/// The lesser of two reals.
trait MinOf {
    /// The lesser of `self` and `o` (`o` where they are unordered).
    fn min_of(self, o: Self) -> Self;
}

impl<R: Real> MinOf for R {
    fn min_of(self, o: Self) -> Self {
        if self < o {
            self
        } else {
            o
        }
    }
}

/// Undoes the balancing on one eigenvector held as its real and imaginary
/// parts (`im` None for a real one): `x ← P D x`.
pub(super) fn back<R: Real>(
    n: usize,
    (ilo, ihi): (usize, usize),
    scale: &[R],
    perm: &[usize],
    re: &mut [R],
    mut im: Option<&mut [R]>,
) {
    for i in ilo..=ihi {
        re[i] = re[i] * scale[i];
        if let Some(im) = im.as_deref_mut() {
            im[i] = im[i] * scale[i];
        }
    }
    for i in (0..ilo).rev().chain(ihi + 1..n) {
        let k = perm[i];
        if k != i {
            re.swap(i, k);
            if let Some(im) = im.as_deref_mut() {
                im.swap(i, k);
            }
        }
    }
}

/// [`back`] on a complex eigenvector.
pub(super) fn back_complex<C: Field>(
    n: usize,
    (ilo, ihi): (usize, usize),
    scale: &[C::Real],
    perm: &[usize],
    x: &mut [C],
) {
    for i in ilo..=ihi {
        x[i] = x[i].scale(scale[i]);
    }
    for i in (0..ilo).rev().chain(ihi + 1..n) {
        let k = perm[i];
        if k != i {
            x.swap(i, k);
        }
    }
}
