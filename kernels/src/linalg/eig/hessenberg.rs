//! Householder reduction to upper Hessenberg form (LAPACK's gehd2) and the
//! accumulation of its reflectors into the unitary Q (unghr), column by
//! column through [`dot_conj`] and [`axpy_sub`].

use super::{axpy_add, dot_conj, nrm2};
use crate::linalg::field::{Field, Real};
use crate::linalg::update::{axpy_sub, Isa};

/// LAPACK's larfg: a reflector `H = I − τ v vᴴ` (`v₀ = 1`, the rest written
/// over `x`) with `Hᴴ [α; x] = [β; 0]`, β real. Returns `(β, τ)`.
pub(super) fn larfg<F: Field>(alpha: F, x: &mut [F]) -> (F, F) {
    let zero = <F::Real as Field>::ZERO;
    let mut xnorm = nrm2(x);
    let (mut ar, mut ai) = (alpha.re(), alpha.im());
    if xnorm == zero && ai == zero {
        return (alpha, F::ZERO);
    }
    let eps = <F::Real as Real>::UNIT + <F::Real as Real>::UNIT;
    let safmin = <F::Real as Real>::MIN_NORMAL / eps;
    let rsafmn = <F::Real as Field>::ONE / safmin;
    let mut beta = -ar.hypot(ai).hypot(xnorm).copysign(ar);
    let mut knt = 0;
    if beta.fabs() < safmin {
        loop {
            knt += 1;
            for e in x.iter_mut() {
                *e = e.scale(rsafmn);
            }
            beta = beta * rsafmn;
            ar = ar * rsafmn;
            ai = ai * rsafmn;
            if !(beta.fabs() < safmin && knt < 20) {
                break;
            }
        }
        xnorm = nrm2(x);
        beta = -ar.hypot(ai).hypot(xnorm).copysign(ar);
    }
    let tau = F::from_parts((beta - ar) / beta, -ai / beta);
    let r = F::ONE.div(F::from_parts(ar - beta, ai));
    for e in x.iter_mut() {
        *e = *e * r;
    }
    for _ in 0..knt {
        beta = beta * safmin;
    }
    (F::from_real(beta), tau)
}

/// Reduces rows and columns `ilo..=ihi` of the n×n column-major `a` to
/// upper Hessenberg form, `a ← Qᴴ a Q`, keeping the reflectors below the
/// subdiagonal and their τ in `tau` (gehd2). `y` and `vt` are scratch of
/// order n.
#[allow(clippy::too_many_arguments)]
pub(super) fn reduce<F: Field>(
    n: usize,
    ilo: usize,
    ihi: usize,
    a: &mut [F],
    tau: &mut [F],
    y: &mut [F],
    vt: &mut [F],
    isa: Isa,
) {
    for t in tau[..n].iter_mut() {
        *t = F::ZERO;
    }
    for i in ilo..ihi {
        let len = ihi - i; // rows i+1..=ihi
        let alpha = a[i + 1 + i * n];
        let (beta, t) = larfg(alpha, &mut a[i + 2 + i * n..ihi + 1 + i * n]);
        tau[i] = t;
        if t == F::ZERO {
            continue;
        }
        vt[0] = F::ONE;
        vt[1..len].copy_from_slice(&a[i + 2 + i * n..ihi + 1 + i * n]);
        let v = &vt[..len];
        // Right: a[0..=ihi, i+1..=ihi] ← a − τ (a v) vᴴ.
        let y = &mut y[..ihi + 1];
        for e in y.iter_mut() {
            *e = F::ZERO;
        }
        for (m, &vm) in v.iter().enumerate() {
            let c = i + 1 + m;
            axpy_add(isa, y, &a[c * n..c * n + ihi + 1], vm);
        }
        for (m, &vm) in v.iter().enumerate() {
            let c = i + 1 + m;
            axpy_sub(isa, &mut a[c * n..c * n + ihi + 1], y, t * vm.conj());
        }
        // Left: a[i+1..=ihi, i+1..n] ← (I − τ̄ v vᴴ) a.
        let tc = t.conj();
        for c in i + 1..n {
            let col = &mut a[c * n + i + 1..c * n + ihi + 1];
            let s = dot_conj(isa, v, col);
            axpy_sub(isa, col, v, tc * s);
        }
        a[i + 1 + i * n] = beta;
    }
}

/// The unitary `Q` of [`reduce`] into the n×n `z` (identity outside
/// `ilo+1..=ihi`), accumulated backwards (unghr). `vt` is scratch.
#[allow(clippy::too_many_arguments)]
pub(super) fn form_q<F: Field>(
    n: usize,
    ilo: usize,
    ihi: usize,
    a: &[F],
    tau: &[F],
    z: &mut [F],
    vt: &mut [F],
    isa: Isa,
) {
    let z = &mut z[..n * n];
    for e in z.iter_mut() {
        *e = F::ZERO;
    }
    for j in 0..n {
        z[j + j * n] = F::ONE;
    }
    for i in (ilo..ihi).rev() {
        let t = tau[i];
        if t == F::ZERO {
            continue;
        }
        let len = ihi - i;
        vt[0] = F::ONE;
        vt[1..len].copy_from_slice(&a[i + 2 + i * n..ihi + 1 + i * n]);
        let v = &vt[..len];
        for c in i + 1..=ihi {
            let col = &mut z[c * n + i + 1..c * n + ihi + 1];
            let s = dot_conj(isa, v, col);
            axpy_sub(isa, col, v, t * s);
        }
    }
}

/// Zeroes the n×n `a` below its subdiagonal (the reflectors' room).
pub(super) fn clear_below<F: Field>(n: usize, a: &mut [F]) {
    for c in 0..n {
        for r in c + 2..n {
            a[r + c * n] = F::ZERO;
        }
    }
}
