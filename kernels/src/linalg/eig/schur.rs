//! Shifted QR on a Hessenberg matrix: LAPACK's lahqr, the Francis
//! double-shift on real matrices (real Schur form, 2×2 blocks standardised
//! by lanv2) and the single-shift on complex ones.

use super::hessenberg::larfg;
use crate::linalg::field::{Field, Real};
use crate::linalg::update::Isa;

/// Exceptional shifts every `KEXSH` iterations without deflation.
const KEXSH: usize = 10;

/// The real with +0 for −0.
#[inline]
fn pz<R: Real>(x: R) -> R {
    if x == R::ZERO {
        R::ZERO
    } else {
        x
    }
}

/// The greater of two reals.
#[inline]
fn max<R: Real>(a: R, b: R) -> R {
    if b > a {
        b
    } else {
        a
    }
}

/// The lesser of two reals.
#[inline]
fn min<R: Real>(a: R, b: R) -> R {
    if b < a {
        b
    } else {
        a
    }
}

/// The sign of `x` on 1.
#[inline]
fn sgn<R: Real>(x: R) -> R {
    R::ONE.copysign(x)
}

/// LAPACK's lanv2: the Schur factorisation of a real 2×2 nonsymmetric
/// matrix in standardised form. Returns `(a, b, c, d, rt1r, rt1i, rt2r,
/// rt2i, cs, sn)`.
#[allow(clippy::type_complexity)]
pub(super) fn lanv2<R: Real>(
    mut a: R,
    mut b: R,
    mut c: R,
    mut d: R,
) -> (R, R, R, R, R, R, R, R, R, R) {
    let zero = R::ZERO;
    let one = R::ONE;
    let half = R::of(0.5);
    let eps = R::UNIT + R::UNIT;
    let multpl = R::of(4.0);
    let k = ((R::MIN_NORMAL.to_f64().log2() - eps.to_f64().log2()) / 2.0) as i32;
    let safmn2 = R::of(2f64.powi(k));
    let safmx2 = one / safmn2;
    let (mut cs, mut sn);
    if c == zero {
        cs = one;
        sn = zero;
    } else if b == zero {
        cs = zero;
        sn = one;
        std::mem::swap(&mut a, &mut d);
        b = -c;
        c = zero;
    } else if a - d == zero && sgn(b) != sgn(c) {
        cs = one;
        sn = zero;
    } else {
        let mut temp = a - d;
        let mut p = half * temp;
        let bcmax = max(b.fabs(), c.fabs());
        let bcmis = min(b.fabs(), c.fabs()) * sgn(b) * sgn(c);
        let scale = max(p.fabs(), bcmax);
        let mut z = (p / scale) * p + (bcmax / scale) * bcmis;
        if z >= multpl * eps {
            // Real eigenvalues.
            z = p + (scale.sqrt() * z.sqrt()).copysign(p);
            a = d + z;
            d = d - (bcmax / z) * bcmis;
            let tau = c.hypot(z);
            cs = z / tau;
            sn = c / tau;
            b = b - c;
            c = zero;
        } else {
            // Complex or almost equal real eigenvalues: equal diagonal.
            let mut count = 0;
            let mut sigma = b + c;
            loop {
                count += 1;
                let scale = max(temp.fabs(), sigma.fabs());
                if scale >= safmx2 {
                    sigma = sigma * safmn2;
                    temp = temp * safmn2;
                    if count <= 20 {
                        continue;
                    }
                }
                if scale <= safmn2 {
                    sigma = sigma * safmx2;
                    temp = temp * safmx2;
                    if count <= 20 {
                        continue;
                    }
                }
                break;
            }
            p = half * temp;
            let mut tau = sigma.hypot(temp);
            cs = (half * (one + sigma.fabs() / tau)).sqrt();
            sn = -(p / (tau * cs)) * sgn(sigma);
            let aa = a * cs + b * sn;
            let bb = -a * sn + b * cs;
            let cc = c * cs + d * sn;
            let dd = -c * sn + d * cs;
            a = aa * cs + cc * sn;
            b = bb * cs + dd * sn;
            c = -aa * sn + cc * cs;
            d = -bb * sn + dd * cs;
            temp = half * (a + d);
            a = temp;
            d = temp;
            if c != zero {
                if b != zero {
                    if sgn(b) == sgn(c) {
                        // Real eigenvalues: upper triangular.
                        let sab = b.fabs().sqrt();
                        let sac = c.fabs().sqrt();
                        p = (sab * sac).copysign(c);
                        tau = one / (b + c).fabs().sqrt();
                        a = temp + p;
                        d = temp - p;
                        b = b - c;
                        c = zero;
                        let cs1 = sab * tau;
                        let sn1 = sac * tau;
                        let t = cs * cs1 - sn * sn1;
                        sn = cs * sn1 + sn * cs1;
                        cs = t;
                    }
                } else {
                    b = -c;
                    c = zero;
                    let t = cs;
                    cs = -sn;
                    sn = t;
                }
            }
        }
    }
    let (rt1r, rt2r) = (a, d);
    let (rt1i, rt2i) = if c == zero {
        (zero, zero)
    } else {
        let r = b.fabs().sqrt() * c.fabs().sqrt();
        (r, -r)
    };
    (a, b, c, d, rt1r, rt1i, rt2r, rt2i, cs, sn)
}

/// Applies the plane rotation `(x, y) ← (c x + s y, c y − s x)` to the
/// elements of `h` at `xi + k·step`, `yi + k·step`, `k < len`.
#[inline(always)]
fn rot<R: Real>(h: &mut [R], xi: usize, yi: usize, step: usize, len: usize, c: R, s: R) {
    for k in 0..len {
        let (x, y) = (h[xi + k * step], h[yi + k * step]);
        h[xi + k * step] = c * x + s * y;
        h[yi + k * step] = c * y - s * x;
    }
}

/// The reflector `I − t1·[1 v2 v3]ᵀ[1 v2 v3]` applied from the right to
/// rows `r0..r1` of columns `k..k+3` of the column-major `a` (columns `ld`
/// apart):
/// LAPACK's expressions, on contiguous column slices.
// Inlined into each tier's compiled body (an outlined copy would be built
// for the baseline instruction set).
#[inline(always)]
fn reflect3_cols<R: Real>(
    a: &mut [R],
    ld: usize,
    k: usize,
    r0: usize,
    r1: usize,
    (v2, v3, t1, t2, t3): (R, R, R, R, R),
) {
    let block = &mut a[k * ld..k * ld + 2 * ld + r1];
    let (c0, rest) = block.split_at_mut(ld);
    let (c1, c2) = rest.split_at_mut(ld);
    for ((x, y), w) in c0[r0..r1]
        .iter_mut()
        .zip(c1[r0..r1].iter_mut())
        .zip(c2[r0..r1].iter_mut())
    {
        let sum = *x + v2 * *y + v3 * *w;
        *x = *x - sum * t1;
        *y = *y - sum * t2;
        *w = *w - sum * t3;
    }
}

/// The real Schur form of the upper Hessenberg n×n `h` (columns `ld` apart,
/// as `z`'s) over rows and
/// columns `ilo..=ihi` (dlahqr): with `z`, the whole of `h` is updated to
/// T and the transformations accumulated into `z` (rows `ilo..=ihi`);
/// without, only the active block. Eigenvalues into `w` (a pair as
/// `(re, +im), (re, −im)`, a real one with +0 imaginary part). False where
/// an eigenvalue takes more than 30·max(10, ihi − ilo + 1) iterations.
#[allow(clippy::too_many_arguments)]
pub(super) fn real_schur<R: Real>(
    n: usize,
    ld: usize,
    ilo: usize,
    ihi: usize,
    h: &mut [R],
    z: Option<&mut [R]>,
    w: &mut [R::Complex],
    isa: Isa,
) -> bool {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` comes from a tier this CPU runs, which has
        // AVX2 and FMA (`Isa::of`).
        Isa::Avx2 => unsafe { real_schur_avx2(n, ld, ilo, ihi, h, z, w) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` comes from a tier this CPU runs, which has
        // AVX-512 F, AVX2 and FMA (`Isa::of`).
        Isa::Avx512 => unsafe { real_schur_avx512(n, ld, ilo, ihi, h, z, w) },
        _ => real_schur_body(n, ld, ilo, ihi, h, z, w),
    }
}

/// [`real_schur_body`] compiled for AVX2 (plain operations: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn real_schur_avx2<R: Real>(
    n: usize,
    ld: usize,
    ilo: usize,
    ihi: usize,
    h: &mut [R],
    z: Option<&mut [R]>,
    w: &mut [R::Complex],
) -> bool {
    real_schur_body(n, ld, ilo, ihi, h, z, w)
}

/// [`real_schur_body`] compiled for AVX-512 (plain operations: the same
/// bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f")]
unsafe fn real_schur_avx512<R: Real>(
    n: usize,
    ld: usize,
    ilo: usize,
    ihi: usize,
    h: &mut [R],
    z: Option<&mut [R]>,
    w: &mut [R::Complex],
) -> bool {
    real_schur_body(n, ld, ilo, ihi, h, z, w)
}

/// The body of [`real_schur`].
#[inline(always)]
fn real_schur_body<R: Real>(
    n: usize,
    ld: usize,
    ilo: usize,
    ihi: usize,
    h: &mut [R],
    mut z: Option<&mut [R]>,
    w: &mut [R::Complex],
) -> bool {
    let zero = R::ZERO;
    let one = R::ONE;
    let wantt = z.is_some();
    let cx = |re: R, im: R| R::Complex::from_parts(pz(re), pz(im));
    for i in (0..ilo).chain(ihi + 1..n) {
        w[i] = cx(h[i + i * ld], zero);
    }
    if ilo == ihi {
        w[ilo] = cx(h[ilo + ilo * ld], zero);
        return true;
    }
    let nh = ihi - ilo + 1;
    let ulp = R::UNIT + R::UNIT;
    let smlnum = R::MIN_NORMAL * (R::of(nh as f64) / ulp);
    let dat1 = R::of(0.75);
    let dat2 = R::of(-0.4375);
    let (mut i1, mut i2) = (0usize, n - 1);
    let itmax = 30 * nh.max(10);
    let mut kdefl = 0usize;
    let mut i = ihi as isize;
    let at = |r: usize, c: usize| r + c * ld;
    while i >= ilo as isize {
        let iu = i as usize;
        let mut l = ilo;
        let mut done = false;
        for _its in 0..=itmax {
            // A single small subdiagonal element.
            let mut k = iu;
            while k > l {
                let hkk1 = h[at(k, k - 1)].fabs();
                if hkk1 <= smlnum {
                    break;
                }
                let mut tst = h[at(k - 1, k - 1)].fabs() + h[at(k, k)].fabs();
                if tst == zero {
                    if k >= ilo + 2 {
                        tst = tst + h[at(k - 1, k - 2)].fabs();
                    }
                    if k < ihi {
                        tst = tst + h[at(k + 1, k)].fabs();
                    }
                }
                if hkk1 <= ulp * tst {
                    let hk1k = h[at(k - 1, k)].fabs();
                    let ab = max(hkk1, hk1k);
                    let ba = min(hkk1, hk1k);
                    let hkk = h[at(k, k)].fabs();
                    let dd = (h[at(k - 1, k - 1)] - h[at(k, k)]).fabs();
                    let aa = max(hkk, dd);
                    let bb = min(hkk, dd);
                    let s = aa + ab;
                    if ba * (ab / s) <= max(smlnum, ulp * (bb * (aa / s))) {
                        break;
                    }
                }
                k -= 1;
            }
            l = k;
            if l > ilo {
                h[at(l, l - 1)] = zero;
            }
            if l + 1 >= iu {
                done = true;
                break;
            }
            kdefl += 1;
            if !wantt {
                i1 = l;
                i2 = iu;
            }
            // The shifts.
            let (mut h11, mut h12, mut h21, mut h22);
            if kdefl.is_multiple_of(2 * KEXSH) {
                let s = h[at(iu, iu - 1)].fabs() + h[at(iu - 1, iu - 2)].fabs();
                h11 = dat1 * s + h[at(iu, iu)];
                h12 = dat2 * s;
                h21 = s;
                h22 = h11;
            } else if kdefl.is_multiple_of(KEXSH) {
                let s = h[at(l + 1, l)].fabs() + h[at(l + 2, l + 1)].fabs();
                h11 = dat1 * s + h[at(l, l)];
                h12 = dat2 * s;
                h21 = s;
                h22 = h11;
            } else {
                h11 = h[at(iu - 1, iu - 1)];
                h21 = h[at(iu, iu - 1)];
                h12 = h[at(iu - 1, iu)];
                h22 = h[at(iu, iu)];
            }
            let s = h11.fabs() + h12.fabs() + h21.fabs() + h22.fabs();
            let (rt1r, rt1i, rt2r, rt2i);
            if s == zero {
                (rt1r, rt1i, rt2r, rt2i) = (zero, zero, zero, zero);
            } else {
                h11 = h11 / s;
                h21 = h21 / s;
                h12 = h12 / s;
                h22 = h22 / s;
                let tr = (h11 + h22) / (one + one);
                let det = (h11 - tr) * (h22 - tr) - h12 * h21;
                let rtdisc = det.fabs().sqrt();
                if det >= zero {
                    rt1r = tr * s;
                    rt2r = rt1r;
                    rt1i = rtdisc * s;
                    rt2i = -rt1i;
                } else {
                    let a1 = tr + rtdisc;
                    let a2 = tr - rtdisc;
                    let r = if (a1 - h22).fabs() <= (a2 - h22).fabs() {
                        a1 * s
                    } else {
                        a2 * s
                    };
                    rt1r = r;
                    rt2r = r;
                    rt1i = zero;
                    rt2i = zero;
                }
            }
            // Two consecutive small subdiagonal elements.
            let mut v = [zero; 3];
            let mut m = iu - 2;
            loop {
                let h21s0 = h[at(m + 1, m)];
                let hmm = h[at(m, m)];
                let s = (hmm - rt2r).fabs() + rt2i.fabs() + h21s0.fabs();
                let h21s = h21s0 / s;
                v[0] =
                    h21s * h[at(m, m + 1)] + (hmm - rt1r) * ((hmm - rt2r) / s) - rt1i * (rt2i / s);
                v[1] = h21s * (hmm + h[at(m + 1, m + 1)] - rt1r - rt2r);
                v[2] = h21s * h[at(m + 2, m + 1)];
                let s = v[0].fabs() + v[1].fabs() + v[2].fabs();
                v[0] = v[0] / s;
                v[1] = v[1] / s;
                v[2] = v[2] / s;
                if m == l {
                    break;
                }
                let h00 = h[at(m, m - 1)].fabs() * (v[1].fabs() + v[2].fabs());
                let h01 = v[0].fabs()
                    * (h[at(m - 1, m - 1)].fabs() + hmm.fabs() + h[at(m + 1, m + 1)].fabs());
                if h00 <= ulp * h01 {
                    break;
                }
                m -= 1;
            }
            // The double-shift QR sweep.
            for k in m..iu {
                let nr = 3.min(iu - k + 1);
                if k > m {
                    for (q, e) in v[..nr].iter_mut().enumerate() {
                        *e = h[at(k + q, k - 1)];
                    }
                }
                let (beta, t1) = larfg(v[0], &mut v[1..nr]);
                v[0] = beta;
                if k > m {
                    h[at(k, k - 1)] = v[0];
                    h[at(k + 1, k - 1)] = zero;
                    if k + 1 < iu {
                        h[at(k + 2, k - 1)] = zero;
                    }
                } else if m > l {
                    h[at(k, k - 1)] = h[at(k, k - 1)] * (one - t1);
                }
                let v2 = v[1];
                let t2 = t1 * v2;
                if nr == 3 {
                    let v3 = v[2];
                    let t3 = t1 * v3;
                    for j in k..=i2 {
                        let c = j * ld;
                        let sum = h[k + c] + v2 * h[k + 1 + c] + v3 * h[k + 2 + c];
                        h[k + c] = h[k + c] - sum * t1;
                        h[k + 1 + c] = h[k + 1 + c] - sum * t2;
                        h[k + 2 + c] = h[k + 2 + c] - sum * t3;
                    }
                    let tv = (v2, v3, t1, t2, t3);
                    reflect3_cols(h, ld, k, i1, (k + 3).min(iu) + 1, tv);
                    if let Some(z) = z.as_deref_mut() {
                        reflect3_cols(z, ld, k, ilo, ihi + 1, tv);
                    }
                } else if nr == 2 {
                    for j in k..=i2 {
                        let c = j * ld;
                        let sum = h[k + c] + v2 * h[k + 1 + c];
                        h[k + c] = h[k + c] - sum * t1;
                        h[k + 1 + c] = h[k + 1 + c] - sum * t2;
                    }
                    for j in i1..=iu {
                        let sum = h[at(j, k)] + v2 * h[at(j, k + 1)];
                        h[at(j, k)] = h[at(j, k)] - sum * t1;
                        h[at(j, k + 1)] = h[at(j, k + 1)] - sum * t2;
                    }
                    if let Some(z) = z.as_deref_mut() {
                        for j in ilo..=ihi {
                            let sum = z[at(j, k)] + v2 * z[at(j, k + 1)];
                            z[at(j, k)] = z[at(j, k)] - sum * t1;
                            z[at(j, k + 1)] = z[at(j, k + 1)] - sum * t2;
                        }
                    }
                }
            }
        }
        if !done {
            return false;
        }
        if l == iu {
            w[iu] = cx(h[at(iu, iu)], zero);
        } else {
            // l == iu − 1: a 2×2 block.
            let p = iu - 1;
            let (a, b, c, d, rt1r, rt1i, rt2r, rt2i, cs, sn) =
                lanv2(h[at(p, p)], h[at(p, iu)], h[at(iu, p)], h[at(iu, iu)]);
            h[at(p, p)] = a;
            h[at(p, iu)] = b;
            h[at(iu, p)] = c;
            h[at(iu, iu)] = d;
            w[p] = cx(rt1r, rt1i);
            w[iu] = cx(rt2r, rt2i);
            if wantt {
                if i2 > iu {
                    rot(h, at(p, iu + 1), at(iu, iu + 1), ld, i2 - iu, cs, sn);
                }
                rot(h, at(i1, p), at(i1, iu), 1, p - i1, cs, sn);
            }
            if let Some(z) = z.as_deref_mut() {
                rot(z, at(ilo, p), at(ilo, iu), 1, ihi + 1 - ilo, cs, sn);
            }
        }
        kdefl = 0;
        i = l as isize - 1;
    }
    true
}

/// `|re| + |im|`.
#[inline]
fn cabs1<C: Field>(x: C) -> C::Real {
    x.abs1()
}

/// The principal square root of a complex number, scaled away from
/// overflow and underflow.
pub(super) fn csqrt<C: Field>(z: C) -> C {
    let zero = <C::Real as Field>::ZERO;
    let (x, y) = (z.re(), z.im());
    if x == zero && y == zero {
        return C::from_parts(zero, y);
    }
    let u = <C::Real as Real>::UNIT;
    let r = x.hypot(y);
    // Scale by an even power of two where r is near either end.
    let (f, back) = if r < <C::Real as Real>::MIN_NORMAL / (u * u) {
        (<C::Real as Field>::ONE / (u * u), u)
    } else if r > <C::Real as Real>::MAX * (u * u) {
        (u * u, <C::Real as Field>::ONE / u)
    } else {
        (<C::Real as Field>::ONE, <C::Real as Field>::ONE)
    };
    let (x, y) = (x * f, y * f);
    let r = x.hypot(y);
    let half = <C::Real as Real>::of(0.5);
    let t = ((x.fabs() + r) * half).sqrt();
    let (re, im) = if x >= zero {
        (t, y / (t + t))
    } else {
        (y.fabs() / (t + t), t.copysign(y))
    };
    C::from_parts(re * back, im * back)
}

/// The Schur form of the upper Hessenberg complex n×n `h` (columns `ld`
/// apart, as `z`'s) over rows and
/// columns `ilo..=ihi` (zlahqr), as [`real_schur`] for the complex case;
/// eigenvalues into `w`.
#[allow(clippy::too_many_arguments)]
pub(super) fn complex_schur<C: Field>(
    n: usize,
    ld: usize,
    ilo: usize,
    ihi: usize,
    h: &mut [C],
    z: Option<&mut [C]>,
    w: &mut [C],
    isa: Isa,
) -> bool {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` comes from a tier this CPU runs, which has
        // AVX2 and FMA (`Isa::of`).
        Isa::Avx2 => unsafe { complex_schur_avx2(n, ld, ilo, ihi, h, z, w) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` comes from a tier this CPU runs, which has
        // AVX-512 F, AVX2 and FMA (`Isa::of`).
        Isa::Avx512 => unsafe { complex_schur_avx512(n, ld, ilo, ihi, h, z, w) },
        _ => complex_schur_body(n, ld, ilo, ihi, h, z, w),
    }
}

/// [`complex_schur_body`] compiled for AVX2 (plain operations: the same
/// bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn complex_schur_avx2<C: Field>(
    n: usize,
    ld: usize,
    ilo: usize,
    ihi: usize,
    h: &mut [C],
    z: Option<&mut [C]>,
    w: &mut [C],
) -> bool {
    complex_schur_body(n, ld, ilo, ihi, h, z, w)
}

/// [`complex_schur_body`] compiled for AVX-512 (plain operations: the
/// same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f")]
unsafe fn complex_schur_avx512<C: Field>(
    n: usize,
    ld: usize,
    ilo: usize,
    ihi: usize,
    h: &mut [C],
    z: Option<&mut [C]>,
    w: &mut [C],
) -> bool {
    complex_schur_body(n, ld, ilo, ihi, h, z, w)
}

/// The body of [`complex_schur`].
#[inline(always)]
fn complex_schur_body<C: Field>(
    n: usize,
    ld: usize,
    ilo: usize,
    ihi: usize,
    h: &mut [C],
    mut z: Option<&mut [C]>,
    w: &mut [C],
) -> bool {
    let zero = <C::Real as Field>::ZERO;
    let one = <C::Real as Field>::ONE;
    let wantt = z.is_some();
    let at = |r: usize, c: usize| r + c * ld;
    for i in (0..ilo).chain(ihi + 1..n) {
        w[i] = h[at(i, i)];
    }
    if ilo == ihi {
        w[ilo] = h[at(ilo, ilo)];
        return true;
    }
    let (jlo, jhi) = if wantt { (0, n - 1) } else { (ilo, ihi) };
    // Real subdiagonal entries.
    for i in ilo + 1..=ihi {
        let hv = h[at(i, i - 1)];
        if hv.im() != zero {
            let c1 = cabs1(hv);
            let sc = C::from_parts(hv.re() / c1, hv.im() / c1);
            let asc = sc.abs();
            let sc = C::from_parts(sc.re() / asc, -sc.im() / asc);
            h[at(i, i - 1)] = C::from_real(hv.abs());
            for c in i..=jhi {
                h[at(i, c)] = h[at(i, c)] * sc;
            }
            for r in jlo..=jhi.min(i + 1) {
                h[at(r, i)] = h[at(r, i)] * sc.conj();
            }
            if let Some(z) = z.as_deref_mut() {
                for r in ilo..=ihi {
                    z[at(r, i)] = z[at(r, i)] * sc.conj();
                }
            }
        }
    }
    let nh = ihi - ilo + 1;
    let ulp = <C::Real as Real>::UNIT + <C::Real as Real>::UNIT;
    let smlnum = <C::Real as Real>::MIN_NORMAL * (<C::Real as Real>::of(nh as f64) / ulp);
    let dat1 = <C::Real as Real>::of(0.75);
    let half = <C::Real as Real>::of(0.5);
    let (mut i1, mut i2) = (0usize, n - 1);
    let itmax = 30 * nh.max(10);
    let mut kdefl = 0usize;
    let mut i = ihi as isize;
    while i >= ilo as isize {
        let iu = i as usize;
        let mut l = ilo;
        let mut done = false;
        for _its in 0..=itmax {
            let mut k = iu;
            while k > l {
                let hkk1 = h[at(k, k - 1)];
                if cabs1(hkk1) <= smlnum {
                    break;
                }
                let mut tst = cabs1(h[at(k - 1, k - 1)]) + cabs1(h[at(k, k)]);
                if tst == zero {
                    if k >= ilo + 2 {
                        tst = tst + h[at(k - 1, k - 2)].re().fabs();
                    }
                    if k < ihi {
                        tst = tst + h[at(k + 1, k)].re().fabs();
                    }
                }
                if hkk1.re().fabs() <= ulp * tst {
                    let x1 = cabs1(hkk1);
                    let x2 = cabs1(h[at(k - 1, k)]);
                    let ab = max(x1, x2);
                    let ba = min(x1, x2);
                    let y1 = cabs1(h[at(k, k)]);
                    let y2 = cabs1(h[at(k - 1, k - 1)] - h[at(k, k)]);
                    let aa = max(y1, y2);
                    let bb = min(y1, y2);
                    let s = aa + ab;
                    if ba * (ab / s) <= max(smlnum, ulp * (bb * (aa / s))) {
                        break;
                    }
                }
                k -= 1;
            }
            l = k;
            if l > ilo {
                h[at(l, l - 1)] = C::ZERO;
            }
            if l >= iu {
                done = true;
                break;
            }
            kdefl += 1;
            if !wantt {
                i1 = l;
                i2 = iu;
            }
            let t: C;
            if kdefl.is_multiple_of(2 * KEXSH) {
                let s = dat1 * h[at(iu, iu - 1)].re().fabs();
                t = h[at(iu, iu)] + C::from_real(s);
            } else if kdefl.is_multiple_of(KEXSH) {
                let s = dat1 * h[at(l + 1, l)].re().fabs();
                t = h[at(l, l)] + C::from_real(s);
            } else {
                // Wilkinson's shift.
                let mut tt = h[at(iu, iu)];
                let u = csqrt(h[at(iu - 1, iu)]) * csqrt(h[at(iu, iu - 1)]);
                let s = cabs1(u);
                if s != zero {
                    let x = (h[at(iu - 1, iu - 1)] - tt).scale(half);
                    let sx = cabs1(x);
                    let s = max(s, sx);
                    let xs = C::from_parts(x.re() / s, x.im() / s);
                    let us = C::from_parts(u.re() / s, u.im() / s);
                    let mut y = csqrt(xs * xs + us * us).scale(s);
                    if sx > zero {
                        let xx = C::from_parts(x.re() / sx, x.im() / sx);
                        if xx.re() * y.re() + xx.im() * y.im() < zero {
                            y = -y;
                        }
                    }
                    tt = tt - u * u.div(x + y);
                }
                t = tt;
            }
            // Two consecutive small subdiagonal elements.
            let mut v = [C::ZERO; 2];
            let mut m = iu - 1;
            loop {
                let h11 = h[at(m, m)];
                let h22 = h[at(m + 1, m + 1)];
                let h11s = h11 - t;
                let h21 = h[at(m + 1, m)].re();
                let s = cabs1(h11s) + h21.fabs();
                let h11s = C::from_parts(h11s.re() / s, h11s.im() / s);
                let h21 = h21 / s;
                v[0] = h11s;
                v[1] = C::from_real(h21);
                if m == l {
                    break;
                }
                let h10 = h[at(m, m - 1)].re();
                if h10.fabs() * h21.fabs() <= ulp * (cabs1(h11s) * (cabs1(h11) + cabs1(h22))) {
                    break;
                }
                m -= 1;
            }
            // The single-shift QR sweep.
            for k in m..iu {
                if k > m {
                    v[0] = h[at(k, k - 1)];
                    v[1] = h[at(k + 1, k - 1)];
                }
                let (beta, t1) = larfg(v[0], &mut v[1..2]);
                v[0] = beta;
                if k > m {
                    h[at(k, k - 1)] = v[0];
                    h[at(k + 1, k - 1)] = C::ZERO;
                }
                let v2 = v[1];
                let t2 = (t1 * v2).re();
                let t1c = t1.conj();
                for j in k..=i2 {
                    let sum = t1c * h[at(k, j)] + h[at(k + 1, j)].scale(t2);
                    h[at(k, j)] = h[at(k, j)] - sum;
                    h[at(k + 1, j)] = h[at(k + 1, j)] - sum * v2;
                }
                let v2c = v2.conj();
                for j in i1..=(k + 2).min(iu) {
                    let sum = t1 * h[at(j, k)] + h[at(j, k + 1)].scale(t2);
                    h[at(j, k)] = h[at(j, k)] - sum;
                    h[at(j, k + 1)] = h[at(j, k + 1)] - sum * v2c;
                }
                if let Some(z) = z.as_deref_mut() {
                    for j in ilo..=ihi {
                        let sum = t1 * z[at(j, k)] + z[at(j, k + 1)].scale(t2);
                        z[at(j, k)] = z[at(j, k)] - sum;
                        z[at(j, k + 1)] = z[at(j, k + 1)] - sum * v2c;
                    }
                }
                if k == m && m > l {
                    // Keep h[m, m−1] real.
                    let tmp = C::ONE - t1;
                    let at_ = tmp.abs();
                    let tmp = C::from_parts(tmp.re() / at_, tmp.im() / at_);
                    let tc = tmp.conj();
                    h[at(m + 1, m)] = h[at(m + 1, m)] * tc;
                    if m + 2 <= iu {
                        h[at(m + 2, m + 1)] = h[at(m + 2, m + 1)] * tmp;
                    }
                    for j in m..=iu {
                        if j != m + 1 {
                            for c in j + 1..=i2 {
                                h[at(j, c)] = h[at(j, c)] * tmp;
                            }
                            for r in i1..j {
                                h[at(r, j)] = h[at(r, j)] * tc;
                            }
                            if let Some(z) = z.as_deref_mut() {
                                for r in ilo..=ihi {
                                    z[at(r, j)] = z[at(r, j)] * tc;
                                }
                            }
                        }
                    }
                }
            }
            // Keep h[i, i−1] real.
            let tmp = h[at(iu, iu - 1)];
            if tmp.im() != zero {
                let rt = tmp.abs();
                h[at(iu, iu - 1)] = C::from_real(rt);
                let tmp = C::from_parts(tmp.re() / rt, tmp.im() / rt);
                let tc = tmp.conj();
                for c in iu + 1..=i2 {
                    h[at(iu, c)] = h[at(iu, c)] * tc;
                }
                for r in i1..iu {
                    h[at(r, iu)] = h[at(r, iu)] * tmp;
                }
                if let Some(z) = z.as_deref_mut() {
                    for r in ilo..=ihi {
                        z[at(r, iu)] = z[at(r, iu)] * tmp;
                    }
                }
            }
        }
        if !done {
            return false;
        }
        w[iu] = h[at(iu, iu)];
        kdefl = 0;
        i = l as isize - 1;
    }
    let _ = one;
    true
}
