//! Eigenvectors from the Schur form (LAPACK's trevc, right vectors, back
//! transformed): back-substitution on the (quasi-)triangular T with
//! LAPACK's perturbation of tiny pivots and its scaling against overflow,
//! then the Schur vectors, the balancing's inverse, unit 2-norm and the
//! rotation that makes each column's element of largest magnitude real.

use super::balance;
use super::{axpy_add, Cx};
use crate::linalg::field::{Field, Real};
use crate::linalg::update::{axpy_sub, Isa};

/// `(ilo, ihi, scale, perm)` of the balancing.
pub(super) type Bal<'a, R> = (usize, usize, &'a [R], &'a [usize]);

/// Scratch of order n: two vectors of `A`, three of `R`.
pub(super) type Scratch<'a, A, R> = (
    &'a mut [A],
    &'a mut [A],
    &'a mut [R],
    &'a mut [R],
    &'a mut [R],
);

/// LAPACK's trevc constants: `(smlnum, bignum)`.
fn limits<R: Real>(n: usize) -> (R, R) {
    let ulp = R::UNIT + R::UNIT;
    let smlnum = R::MIN_NORMAL * (R::of(n as f64) / ulp);
    (smlnum, (R::ONE - ulp) / smlnum)
}

/// Multiplies `x[..len]` (and `y[..len]`) by `s`.
fn scale_all<R: Real>(x: &mut [R], y: Option<&mut [R]>, len: usize, s: R) {
    for e in x[..len].iter_mut() {
        *e = *e * s;
    }
    if let Some(y) = y {
        for e in y[..len].iter_mut() {
            *e = *e * s;
        }
    }
}

/// The 1-norms of T's columns above the diagonal into `cn`.
fn column_norms<F: Field>(n: usize, t: &[F], cn: &mut [F::Real]) {
    for j in 0..n {
        let mut s = <F::Real as Field>::ZERO;
        for i in 0..j {
            s = s + t[i + j * n].abs1();
        }
        cn[j] = s;
    }
}

/// Unit 2-norm and the largest element real (positive where `positive`,
/// and for any column with an imaginary part): the column as parts `re`,
/// `im` (None: a real column, whose sign is kept).
fn finish<R: Real>(re: &mut [R], im: Option<&mut [R]>) {
    let zero = R::ZERO;
    let mut m = zero;
    for e in re.iter() {
        m = m.max_nan(e.fabs());
    }
    if let Some(im) = im.as_deref() {
        for e in im.iter() {
            m = m.max_nan(e.fabs());
        }
    }
    if m == zero {
        return;
    }
    let mut s = zero;
    for e in re.iter() {
        let a = *e / m;
        s = s + a * a;
    }
    if let Some(im) = im.as_deref() {
        for e in im.iter() {
            let a = *e / m;
            s = s + a * a;
        }
    }
    let nrm = s.sqrt() * m;
    for e in re.iter_mut() {
        *e = *e / nrm;
    }
    let Some(im) = im else {
        return;
    };
    for e in im.iter_mut() {
        *e = *e / nrm;
    }
    // The element of largest magnitude (the first of equals).
    let mut p = 0;
    let mut best = R::ZERO;
    for (i, (a, b)) in re.iter().zip(im.iter()).enumerate() {
        let q = b.mul_add(*b, *a * *a);
        if q > best {
            best = q;
            p = i;
        }
    }
    let r = re[p].hypot(im[p]);
    if r == zero {
        return;
    }
    let (cr, ci) = (re[p] / r, -im[p] / r);
    for (a, b) in re.iter_mut().zip(im.iter_mut()) {
        let (x, y) = (*a, *b);
        *a = x * cr - y * ci;
        *b = x * ci + y * cr;
    }
    im[p] = zero;
}

/// Solves the 2×2 complex system `M y = s·r` by complete pivoting, tiny
/// pivots raised to `smin`, choosing `s ≤ 1` against overflow. Returns
/// `(y1, y2, s)`.
fn solve2<C: Field>(m: [[C; 2]; 2], r: [C; 2], smin: C::Real, bignum: C::Real) -> (C, C, C::Real) {
    let one = <C::Real as Field>::ONE;
    let mut best = 0;
    let mut bv = <C::Real as Field>::ZERO;
    for q in 0..4 {
        let a = m[q / 2][q % 2].abs1();
        if a > bv {
            bv = a;
            best = q;
        }
    }
    if bv < smin {
        // M ≈ 0: smin·I.
        let mut s = one;
        let rm = r[0].abs1().max_nan(r[1].abs1());
        if smin < one && rm > bignum * smin {
            s = one / rm;
        }
        return (
            r[0].scale(s).scale(one / smin),
            r[1].scale(s).scale(one / smin),
            s,
        );
    }
    let (pr, pc) = (best / 2, best % 2);
    let (qr, qc) = (1 - pr, 1 - pc);
    let m11 = m[pr][pc];
    let m12 = m[pr][qc];
    let m21 = m[qr][pc];
    let m22 = m[qr][qc];
    let (r1, r2) = (r[pr], r[qr]);
    let l21 = m21.div(m11);
    let mut u22 = m22 - l21 * m12;
    if u22.abs1() < smin {
        u22 = C::from_real(smin);
    }
    let r2 = r2 - l21 * r1;
    let mut s = one;
    let (a2, au) = (r2.abs1(), u22.abs1());
    if au < one && a2 > bignum * au {
        s = one / a2;
    }
    let (r1, r2) = (r1.scale(s), r2.scale(s));
    let y2 = r2.div(u22);
    let y1 = (r1 - m12 * y2).div(m11);
    // Unknown pc is y1, qc is y2.
    if pc == 0 {
        (y1, y2, s)
    } else {
        (y2, y1, s)
    }
}

/// The eigenvectors of the real quasi-triangular `t` (Schur vectors `z`)
/// into the complex n×n `v`, a pair's columns conjugate, a real value's
/// column with +0 imaginary parts.
#[allow(clippy::too_many_arguments)]
pub(super) fn real_vectors<R: Real>(
    n: usize,
    t: &[R],
    z: &[R],
    w: &[R::Complex],
    v: &mut [R::Complex],
    (ilo, ihi, scale, perm): Bal<'_, R>,
    (xr, xi, yr, yi, cn): Scratch<'_, R, R>,
    isa: Isa,
) {
    let zero = R::ZERO;
    let one = R::ONE;
    let at = |r: usize, c: usize| r + c * n;
    let (smlnum, bignum) = limits::<R>(n);
    let ulp = R::UNIT + R::UNIT;
    column_norms(n, t, cn);
    let mut ki = 0;
    while ki < n {
        let pair = ki + 1 < n && t[at(ki + 1, ki)] != zero;
        let (wr, wi) = (w[ki].re(), if pair { w[ki].im() } else { zero });
        let smin = max(ulp * (wr.fabs() + wi.fabs()), smlnum);
        let top = if pair { ki + 1 } else { ki };
        for e in xr[..=top].iter_mut() {
            *e = zero;
        }
        for e in xi[..=top].iter_mut() {
            *e = zero;
        }
        if pair {
            let (b, c) = (t[at(ki, ki + 1)], t[at(ki + 1, ki)]);
            if b.fabs() >= c.fabs() {
                xr[ki] = one;
                xi[ki + 1] = wi / b;
            } else {
                xr[ki] = -wi / c;
                xi[ki + 1] = one;
            }
            // Right-hand side: −T[0..ki, ki..=ki+1]·x.
            let (x0r, x1i) = (xr[ki], xi[ki + 1]);
            axpy_sub(isa, &mut xr[..ki], &t[at(0, ki)..at(ki, ki)], x0r);
            axpy_sub(isa, &mut xi[..ki], &t[at(0, ki + 1)..at(ki, ki + 1)], x1i);
        } else {
            xr[ki] = one;
            axpy_sub(isa, &mut xr[..ki], &t[at(0, ki)..at(ki, ki)], one);
        }
        // Back-substitution.
        let mut j = ki;
        while j > 0 {
            let jj = j - 1; // the row being solved (the block's last)
            if jj >= 1 && t[at(jj, jj - 1)] != zero {
                // 2×2 block rows jj−1, jj.
                let p = jj - 1;
                let c = |x: R, y: R| R::Complex::from_parts(x, y);
                let mm = [
                    [c(t[at(p, p)] - wr, -wi), c(t[at(p, jj)], zero)],
                    [c(t[at(jj, p)], zero), c(t[at(jj, jj)] - wr, -wi)],
                ];
                let (y1, y2, s) = solve2(mm, [c(xr[p], xi[p]), c(xr[jj], xi[jj])], smin, bignum);
                if s != one {
                    scale_all(xr, Some(&mut xi[..]), top + 1, s);
                }
                xr[p] = y1.re();
                xr[jj] = y2.re();
                if pair {
                    xi[p] = y1.im();
                    xi[jj] = y2.im();
                }
                let big = y1.abs1().max_nan(y2.abs1());
                if big > one && cn[p].max_nan(cn[jj]) > bignum / big {
                    scale_all(xr, Some(&mut xi[..]), top + 1, one / big);
                }
                let (ar, ai, br, bi) = (xr[p], xi[p], xr[jj], xi[jj]);
                axpy_add(isa, &mut xr[..p], &t[at(0, p)..at(p, p)], -ar);
                axpy_add(isa, &mut xr[..p], &t[at(0, jj)..at(p, jj)], -br);
                if pair {
                    axpy_add(isa, &mut xi[..p], &t[at(0, p)..at(p, p)], -ai);
                    axpy_add(isa, &mut xi[..p], &t[at(0, jj)..at(p, jj)], -bi);
                }
                j = p;
            } else {
                let mut d = R::Complex::from_parts(t[at(jj, jj)] - wr, -wi);
                if d.abs1() < smin {
                    d = R::Complex::from_real(smin);
                }
                let rr = R::Complex::from_parts(xr[jj], xi[jj]);
                let (ad, ar) = (d.abs1(), rr.abs1());
                let mut rr = rr;
                if ad < one && ar > bignum * ad {
                    let s = one / ar;
                    scale_all(xr, Some(&mut xi[..]), top + 1, s);
                    rr = rr.scale(s);
                }
                let x = if pair {
                    rr.div(d)
                } else {
                    R::Complex::from_real(rr.re() / d.re())
                };
                xr[jj] = x.re();
                xi[jj] = if pair { x.im() } else { zero };
                let ax = x.abs1();
                if ax > one && cn[jj] > bignum / ax {
                    scale_all(xr, Some(&mut xi[..]), top + 1, one / ax);
                }
                let (a, b) = (xr[jj], xi[jj]);
                axpy_sub(isa, &mut xr[..jj], &t[at(0, jj)..at(jj, jj)], a);
                if pair {
                    axpy_sub(isa, &mut xi[..jj], &t[at(0, jj)..at(jj, jj)], b);
                }
                j = jj;
            }
        }
        // y = Z x.
        for e in yr[..n].iter_mut() {
            *e = zero;
        }
        for e in yi[..n].iter_mut() {
            *e = zero;
        }
        for q in 0..=top {
            let col = &z[at(0, q)..at(n, q)];
            axpy_add(isa, &mut yr[..n], col, xr[q]);
            if pair {
                axpy_add(isa, &mut yi[..n], col, xi[q]);
            }
        }
        // Largest part 1 before the balancing's scales (which reach
        // 1/safmin), as trevc leaves its back-transformed columns.
        let m = max_part(&yr[..n]).max_nan(max_part(&yi[..n]));
        if m > zero {
            for e in yr[..n].iter_mut().chain(yi[..n].iter_mut()) {
                *e = *e / m;
            }
        }
        if pair {
            balance::back(n, (ilo, ihi), scale, perm, yr, Some(&mut yi[..]));
            finish(&mut yr[..n], Some(&mut yi[..n]));
            for r in 0..n {
                v[at(r, ki)] = R::Complex::from_parts(yr[r], yi[r]);
                v[at(r, ki + 1)] = R::Complex::from_parts(yr[r], -yi[r]);
            }
            ki += 2;
        } else {
            balance::back(n, (ilo, ihi), scale, perm, yr, None);
            finish(&mut yr[..n], None);
            for r in 0..n {
                v[at(r, ki)] = R::Complex::from_parts(yr[r], zero);
            }
            ki += 1;
        }
    }
}

/// The largest magnitude in `x`.
fn max_part<R: Real>(x: &[R]) -> R {
    x.iter().fold(R::ZERO, |m, e| m.max_nan(e.fabs()))
}

/// The greater of two reals.
fn max<R: Real>(a: R, b: R) -> R {
    if b > a {
        b
    } else {
        a
    }
}

/// The eigenvectors of the complex upper triangular `t` (Schur vectors
/// `z`) into `v`, each column's largest element real and positive.
#[allow(clippy::too_many_arguments)]
pub(super) fn complex_vectors<T: Field>(
    n: usize,
    t: &[Cx<T>],
    z: &[Cx<T>],
    w: &[Cx<T>],
    v: &mut [Cx<T>],
    (ilo, ihi, scale, perm): Bal<'_, T::Real>,
    (x, y, yr, yi, cn): Scratch<'_, Cx<T>, T::Real>,
    isa: Isa,
) {
    let zero = <T::Real as Field>::ZERO;
    let one = <T::Real as Field>::ONE;
    let at = |r: usize, c: usize| r + c * n;
    let (smlnum, bignum) = limits::<T::Real>(n);
    let ulp = <T::Real as Real>::UNIT + <T::Real as Real>::UNIT;
    column_norms(n, t, cn);
    let scale_x = |x: &mut [Cx<T>], len: usize, s: T::Real| {
        for e in x[..len].iter_mut() {
            *e = e.scale(s);
        }
    };
    for ki in 0..n {
        let lam = w[ki];
        let smin = max(ulp * lam.abs1(), smlnum);
        x[ki] = Cx::<T>::ONE;
        for e in x[..ki].iter_mut() {
            *e = Cx::<T>::ZERO;
        }
        axpy_sub(isa, &mut x[..ki], &t[at(0, ki)..at(ki, ki)], Cx::<T>::ONE);
        for jj in (0..ki).rev() {
            let mut d = t[at(jj, jj)] - lam;
            if d.abs1() < smin {
                d = Cx::<T>::from_real(smin);
            }
            let (ad, ar) = (d.abs1(), x[jj].abs1());
            if ad < one && ar > bignum * ad {
                scale_x(x, ki + 1, one / ar);
            }
            let xj = x[jj].div(d);
            x[jj] = xj;
            let ax = xj.abs1();
            if ax > one && cn[jj] > bignum / ax {
                scale_x(x, ki + 1, one / ax);
            }
            let xj = x[jj];
            axpy_sub(isa, &mut x[..jj], &t[at(0, jj)..at(jj, jj)], xj);
        }
        for e in y[..n].iter_mut() {
            *e = Cx::<T>::ZERO;
        }
        for q in 0..=ki {
            axpy_add(isa, &mut y[..n], &z[at(0, q)..at(n, q)], x[q]);
        }
        let m = y[..n]
            .iter()
            .fold(zero, |m, e| m.max_nan(e.re().fabs()).max_nan(e.im().fabs()));
        if m > zero {
            for e in y[..n].iter_mut() {
                *e = Cx::<T>::from_parts(e.re() / m, e.im() / m);
            }
        }
        balance::back_complex(n, (ilo, ihi), scale, perm, &mut y[..n]);
        for r in 0..n {
            yr[r] = y[r].re();
            yi[r] = y[r].im();
        }
        finish(&mut yr[..n], Some(&mut yi[..n]));
        for r in 0..n {
            v[at(r, ki)] = Cx::<T>::from_parts(yr[r], yi[r]);
        }
    }
}
