//! The general (non-symmetric) eigenproblem of one matrix, on a
//! column-major buffer: balancing as LAPACK's gebal, Householder reduction
//! to Hessenberg form, shifted QR to (real or complex) Schur form and the
//! eigenvectors by back-substitution on it.
//!
//! Every choice (shifts, deflation tests, iteration caps) is a function of
//! the order and the dtype; the arithmetic is plain IEEE operations and the
//! fused steps of [`axpy_sub`], so the bits are those of any tier and any
//! thread count.

mod balance;
mod hessenberg;
mod schur;
mod vectors;

#[cfg(test)]
mod tests;

use crate::linalg::field::{Field, Real};
use crate::linalg::update::{axpy_sub, Isa};
use crate::linalg::work::Carve;
use crate::tier::Exec;

/// The complex scalar of a field's precision.
pub(crate) type Cx<T> = <<T as Field>::Real as Real>::Complex;

/// The working storage of [`eig_one`] for matrices of one order.
pub(crate) struct EigWork<'a, T: Field> {
    /// The order.
    n: usize,
    /// Whether eigenvectors are computed.
    vectors: bool,
    /// The matrix, real (real input).
    hr: &'a mut [T::Real],
    /// The Schur vectors, real (real input with vectors).
    zr: &'a mut [T::Real],
    /// The matrix, complex (complex input).
    hc: &'a mut [Cx<T>],
    /// The Schur vectors, complex (complex input with vectors).
    zc: &'a mut [Cx<T>],
    /// The balancing's scale factors.
    scale: &'a mut [T::Real],
    /// The balancing's permutation (LAPACK's scale for isolated rows).
    perm: &'a mut [usize],
    /// Scratch of order n, real (reflectors, back-substitution).
    r1: &'a mut [T::Real],
    /// Scratch of order n, real.
    r2: &'a mut [T::Real],
    /// Scratch of order n, real.
    r3: &'a mut [T::Real],
    /// Scratch of order n, real.
    r4: &'a mut [T::Real],
    /// Scratch of order n, real.
    r5: &'a mut [T::Real],
    /// Scratch of order n, complex.
    c1: &'a mut [Cx<T>],
    /// Scratch of order n, complex.
    c2: &'a mut [Cx<T>],
    /// Scratch of order n, complex.
    c3: &'a mut [Cx<T>],
}

impl<'a, T: Field> EigWork<'a, T> {
    /// Work for matrices of order n, carved from `area`.
    pub(crate) fn new(area: &mut Carve<'a>, n: usize, vectors: bool) -> Self {
        let nn = if T::COMPLEX {
            n.saturating_mul(schur_stride::<Cx<T>>(n))
        } else {
            n.saturating_mul(schur_stride::<T::Real>(n))
        };
        let (rn, cn) = if T::COMPLEX { (0, nn) } else { (nn, 0) };
        let rz = if vectors { rn } else { 0 };
        let cz = if vectors { cn } else { 0 };
        EigWork {
            n,
            vectors,
            hr: area.take(rn),
            zr: area.take(rz),
            hc: area.take(cn),
            zc: area.take(cz),
            scale: area.take(n),
            perm: area.take(n),
            r1: area.take(n),
            r2: area.take(n),
            r3: area.take(n),
            r4: area.take(n),
            r5: area.take(n),
            c1: area.take(n),
            c2: area.take(n),
            c3: area.take(n),
        }
    }
}

/// The distance between columns of the Schur iteration's matrices of order
/// n: n, or a cache line more where n columns of E would be a multiple of
/// 512 bytes, so that the iteration's walks along a row do not map every
/// element to one cache set (at n = 1024 in f64 the iteration took 2.7
/// times as long). Only where the elements lie changes: no bit does.
fn schur_stride<E>(n: usize) -> usize {
    let size = size_of::<E>();
    if n >= 32 && (n * size).is_multiple_of(512) {
        n + 64 / size
    } else {
        n
    }
}

/// Moves the n×n column-major matrix at the front of `x` from columns `from`
/// apart to columns `to` apart (`x` holds `n·max(from, to)` elements).
fn restride<E: Copy>(x: &mut [E], n: usize, from: usize, to: usize) {
    if from == to {
        return;
    }
    // Columns move away from the front when spreading, towards it when
    // closing up: walk so that no column is overwritten before it moves.
    if to > from {
        for c in (0..n).rev() {
            x.copy_within(c * from..c * from + n, c * to);
        }
    } else {
        for c in 0..n {
            x.copy_within(c * from..c * from + n, c * to);
        }
    }
}

/// The eigenvalues `w` (and with `v` the unit eigenvectors, `a v = v diag
/// w`) of the n×n column-major `a`. False where `a` holds NaN or an
/// infinity or the QR iteration does not converge (w and v then hold
/// unspecified values; the caller writes NaN).
pub(crate) fn eig_one<T: Field>(
    n: usize,
    a: &mut [T],
    w: &mut [Cx<T>],
    v: Option<&mut [Cx<T>]>,
    work: &mut EigWork<T>,
    isa: Isa,
    _exec: &Exec,
) -> bool {
    if n == 0 {
        return true;
    }
    assert!(
        work.n == n && (v.is_none() || work.vectors),
        "EigWork made for another order"
    );
    let a = &a[..n * n];
    if !a.iter().all(|x| x.is_finite()) {
        return false;
    }
    let with_v = v.is_some();
    // Scale a whose largest element is near underflow or overflow by a
    // power of two (LAPACK's geev: into [smlnum, bignum]).
    let mut amax = <T::Real as Field>::ZERO;
    for x in a {
        amax = amax.max_nan(x.re().fabs()).max_nan(x.im().fabs());
    }
    let factor = scale_factor::<T::Real>(amax);
    if T::COMPLEX {
        let h = &mut work.hc[..n * n];
        for (h, x) in h.iter_mut().zip(a) {
            *h = Cx::<T>::from_parts(x.re() * factor, x.im() * factor);
        }
        if !run_complex(n, work, w, v, isa) {
            return false;
        }
    } else {
        let h = &mut work.hr[..n * n];
        for (h, x) in h.iter_mut().zip(a) {
            *h = x.re() * factor;
        }
        if !run_real(n, work, w, v, isa) {
            return false;
        }
    }
    if factor != <T::Real as Field>::ONE {
        let back = <T::Real as Field>::ONE / factor;
        for x in w.iter_mut() {
            let (re, im) = (x.re() * back, x.im() * back);
            // Keep a real value's +0 imaginary part.
            *x = Cx::<T>::from_parts(
                re,
                if im == <T::Real as Field>::ZERO {
                    im.fabs()
                } else {
                    im
                },
            );
        }
    }
    let _ = with_v;
    true
}

/// The power of two that brings a largest magnitude `amax` into LAPACK's
/// `[smlnum, bignum]` (`smlnum = √safmin / ulp`), 1 where it is there (or
/// zero).
fn scale_factor<R: Real>(amax: R) -> R {
    let ulp = (R::UNIT + R::UNIT).to_f64();
    let sml = R::MIN_NORMAL.to_f64().sqrt() / ulp;
    let big = 1.0 / sml;
    let x = amax.to_f64();
    if x == 0.0 || (x >= sml && x <= big) {
        return R::ONE;
    }
    let target = if x < sml { sml } else { big };
    let e = (target / x).log2().floor() as i32;
    R::of(2f64.powi(e))
}

/// The real pipeline: balance, Hessenberg, real Schur, vectors.
fn run_real<T: Field>(
    n: usize,
    work: &mut EigWork<T>,
    w: &mut [Cx<T>],
    v: Option<&mut [Cx<T>]>,
    isa: Isa,
) -> bool {
    let want = v.is_some();
    let h = &mut work.hr[..n * n];
    let (ilo, ihi) = balance::balance(n, h, work.scale, work.perm);
    hessenberg::reduce(n, ilo, ihi, h, work.r1, work.r2, work.r3, isa);
    if want {
        hessenberg::form_q(n, ilo, ihi, h, work.r1, work.zr, work.r2, isa);
    }
    hessenberg::clear_below(n, h);
    let ld = schur_stride::<T::Real>(n);
    restride(work.hr, n, n, ld);
    if want {
        restride(work.zr, n, n, ld);
    }
    let ok = schur::real_schur(
        n,
        ld,
        ilo,
        ihi,
        work.hr,
        if want { Some(&mut work.zr[..]) } else { None },
        w,
        isa,
    );
    restride(work.hr, n, ld, n);
    if want {
        restride(work.zr, n, ld, n);
    }
    if !ok {
        return false;
    }
    if let Some(v) = v {
        vectors::real_vectors(
            n,
            work.hr,
            work.zr,
            w,
            v,
            (ilo, ihi, work.scale, work.perm),
            (
                &mut work.r1,
                &mut work.r2,
                &mut work.r3,
                &mut work.r4,
                &mut work.r5,
            ),
            isa,
        );
    }
    true
}

/// The complex pipeline: balance, Hessenberg, complex Schur, vectors.
fn run_complex<T: Field>(
    n: usize,
    work: &mut EigWork<T>,
    w: &mut [Cx<T>],
    v: Option<&mut [Cx<T>]>,
    isa: Isa,
) -> bool {
    let want = v.is_some();
    let h = &mut work.hc[..n * n];
    let (ilo, ihi) = balance::balance(n, h, work.scale, work.perm);
    hessenberg::reduce(n, ilo, ihi, h, work.c1, work.c2, work.c3, isa);
    if want {
        hessenberg::form_q(n, ilo, ihi, h, work.c1, work.zc, work.c2, isa);
    }
    hessenberg::clear_below(n, h);
    let ld = schur_stride::<Cx<T>>(n);
    restride(work.hc, n, n, ld);
    if want {
        restride(work.zc, n, n, ld);
    }
    let ok = schur::complex_schur(
        n,
        ld,
        ilo,
        ihi,
        work.hc,
        if want { Some(&mut work.zc[..]) } else { None },
        w,
        isa,
    );
    restride(work.hc, n, ld, n);
    if want {
        restride(work.zc, n, ld, n);
    }
    if !ok {
        return false;
    }
    if let Some(v) = v {
        vectors::complex_vectors::<T>(
            n,
            work.hc,
            work.zc,
            w,
            v,
            (ilo, ihi, work.scale, work.perm),
            (
                &mut work.c1,
                &mut work.c2,
                &mut work.r1,
                &mut work.r2,
                &mut work.r3,
            ),
            isa,
        );
    }
    true
}

/// `Σ conj(v_i)·x_i` in eight interleaved partial sums of plain products
/// and sums, added pairwise at the end: the same bits on every tier.
#[inline(always)]
fn dot_body<F: Field>(v: &[F], x: &[F]) -> F {
    let n = v.len().min(x.len());
    let (v, x) = (&v[..n], &x[..n]);
    let mut acc = [F::ZERO; 8];
    let mut vc = v.chunks_exact(8);
    let mut xc = x.chunks_exact(8);
    for (vv, xx) in (&mut vc).zip(&mut xc) {
        for l in 0..8 {
            acc[l] = acc[l] + vv[l].conj() * xx[l];
        }
    }
    for (l, (a, b)) in vc.remainder().iter().zip(xc.remainder()).enumerate() {
        acc[l] = acc[l] + a.conj() * *b;
    }
    let s0 = (acc[0] + acc[4]) + (acc[2] + acc[6]);
    let s1 = (acc[1] + acc[5]) + (acc[3] + acc[7]);
    s0 + s1
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2<F: Field>(v: &[F], x: &[F]) -> F {
    dot_body(v, x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f")]
unsafe fn dot_avx512<F: Field>(v: &[F], x: &[F]) -> F {
    dot_body(v, x)
}

/// `vᴴx` (see [`dot_body`]: plain operations, the same bits on every
/// `isa`).
#[inline]
pub(crate) fn dot_conj<F: Field>(isa: Isa, v: &[F], x: &[F]) -> F {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` comes from a tier this CPU runs, which has
        // AVX2 and FMA (`Isa::of`).
        Isa::Avx2 => unsafe { dot_avx2(v, x) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` comes from a tier this CPU runs, which has
        // AVX-512 F, AVX2 and FMA (`Isa::of`).
        Isa::Avx512 => unsafe { dot_avx512(v, x) },
        _ => dot_body(v, x),
    }
}

/// `y ← y + x·s` (one fused step each, through [`axpy_sub`]).
#[inline]
pub(crate) fn axpy_add<F: Field>(isa: Isa, y: &mut [F], x: &[F], s: F) {
    axpy_sub(isa, y, x, -s)
}

/// The 2-norm of the parts of `x`, scaled by their largest magnitude (no
/// overflow or underflow on the way), in a fixed order.
pub(crate) fn nrm2<F: Field>(x: &[F]) -> F::Real {
    let zero = <F::Real as Field>::ZERO;
    let mut m = zero;
    for e in x {
        let (a, b) = (e.re().fabs(), e.im().fabs());
        if a > m {
            m = a;
        }
        if b > m {
            m = b;
        }
    }
    if m == zero || !m.is_finite() {
        return m;
    }
    let mut s = zero;
    for e in x {
        let (a, b) = (e.re() / m, e.im() / m);
        s = s + a * a;
        if F::COMPLEX {
            s = s + b * b;
        }
    }
    s.sqrt() * m
}
