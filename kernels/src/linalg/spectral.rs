//! The public calls of the spectral routines, `eigh`, `svd` and `eig` (their
//! kernels are `eigh/`, `svd/` and `eig/`).

use super::batch::{
    broadcast_batch, check_destinations, check_dtype, check_shape, count_of, for_each_matrix,
    matrix_of, square_of, zeros, Mats, MatsMut,
};
use super::by_dtype;
use super::eig::{eig_one, EigWork};
use super::eigh::{eigh_one, EighWork};
use super::field::{Field, Real};
use super::svd::{svd_one, SvdWork};
use super::update::Isa;
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;

fn overflow() -> Error {
    Error::Overflow {
        operand: "a".into(),
    }
}

/// The eigenvalues of each Hermitian (real symmetric) matrix of `a`
/// (`[batch…, n, n]`), ascending, into `w` (`[batch…, n]`, the real dtype
/// of a's precision), and where `v` is given (`[batch…, n, n]`, a's dtype)
/// orthonormal eigenvectors as its columns, `a v = v diag w`.
///
/// Reads a's lower triangle and the real parts of its diagonal alone. A
/// matrix whose read part holds NaN or an infinity, or on which the
/// iteration does not converge, is NaN in every result.
///
/// **Bound.** With g = γ(16n) and h = ε(16n): `‖a − v diag w vᴴ‖_F ≤ g‖a‖_F + h`,
/// `‖vᴴv − I‖_F ≤ g`, each eigenvalue within `g‖a‖₂ + h` of the exact one,
/// with v or without (values alone may differ from the vectors' call's in
/// their last bits). Refusals: the module's.
pub fn eigh(
    a: &ArrayView<'_>,
    w: &mut ArrayViewMut<'_>,
    v: Option<&mut ArrayViewMut<'_>>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => eigh_run::<T>(a, w, v, isa, exec))
}

fn eigh_run<T: Field>(
    a: &ArrayView<'_>,
    w: &mut ArrayViewMut<'_>,
    v: Option<&mut ArrayViewMut<'_>>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    check_dtype::<T::Real>("w", w.dtype())?;
    let n = square_of("a", a.shape())?;
    let batch = broadcast_batch(&[("a", a.shape(), 2)])?;
    check_shape("w", w.shape(), &batch, &[n])?;
    if let Some(v) = v.as_deref() {
        check_dtype::<T>("v", v.dtype())?;
        check_shape("v", v.shape(), &batch, &[n, n])?;
    }
    match v.as_deref() {
        Some(vv) => check_destinations(&[("w", w), ("v", vv)], &[a])?,
        None => check_destinations(&[("w", w)], &[a])?,
    }
    let count = count_of(&batch)?;
    let nn = n.checked_mul(n).ok_or_else(overflow)?;
    let vectors = v.is_some();
    let src = Mats::new(a, 2, &batch)?;
    let w_out = MatsMut::new(w, 1, &batch)?;
    let v_out = match v {
        Some(v) => Some(MatsMut::new(v, 2, &batch)?),
        None => None,
    };
    type Work<T> = (Vec<T>, Vec<<T as Field>::Real>, Vec<T>, EighWork<T>);
    let make = || -> Result<Work<T>> {
        Ok((
            zeros(nn, "eigh work")?,
            zeros(n, "eigh work")?,
            zeros(if vectors { nn } else { 0 }, "eigh work")?,
            EighWork::new(n, vectors)?,
        ))
    };
    for_each_matrix(count, make, exec, |b, (aw, ws, vs, work), inner| {
        src.read(b, aw);
        let ok = eigh_one(
            n,
            aw,
            ws,
            if vectors { Some(&mut vs[..]) } else { None },
            work,
            isa,
            inner,
        );
        // SAFETY: w and v were validated, are of the dtypes checked, reach
        // no element twice and do not overlap (checked), and are borrowed
        // mutably for this call; batch index b is this task's alone.
        unsafe {
            write_or_nan(&w_out, b, ok, ws, n);
            if let Some(vo) = &v_out {
                write_or_nan(vo, b, ok, vs, n);
            }
        }
    })
}

/// Write `src` (leading dimension `ld`) as matrix `b`, or NaN where `!ok`.
///
/// # Safety
/// As for [`MatsMut::write`].
unsafe fn write_or_nan<T: Field>(out: &MatsMut, b: usize, ok: bool, src: &[T], ld: usize) {
    // SAFETY: the caller's contract is `write`'s and `write_with`'s.
    unsafe {
        if ok {
            out.write(b, src, ld.max(1));
        } else {
            out.write_with(b, |_, _| T::nan());
        }
    }
}

/// The singular values of each matrix of `a` (`[batch…, m, n]`, k =
/// min(m, n)), descending and not negative (a zero one +0), into `s`
/// (`[batch…, k]`, the real dtype of a's precision), and where `vectors`
/// `(u, vh)` are given (a's dtype) `a = u diag s vh`: reduced where u is
/// `[batch…, m, k]` and vh `[batch…, k, n]`, complete where u is
/// `[batch…, m, m]` and vh `[batch…, n, n]`.
///
/// A matrix that holds NaN or an infinity, or on which the iteration does
/// not converge, is NaN in every result.
///
/// **Bound.** With g = γ(16·max(m, n) + 100) and h = ε(16·max(m, n) + 100):
/// `‖a − u diag s vh‖_F ≤ g‖a‖_F + h` over u's first k columns and vh's
/// first k rows, `‖uᴴu − I‖_F ≤ g`, `‖vh vhᴴ − I‖_F ≤ g`, each singular
/// value within `g‖a‖₂ + h` of the exact one, with vectors or without
/// (values alone may differ from the vectors' call's in their last bits).
/// The iteration drops a superdiagonal element of the bidiagonal below
/// `max(10, min(100, u^(−1/8)))·u` times its neighbours. Refusals: the
/// module's, and u and vh that are neither both reduced nor both complete
/// ([`Error::Shape`]).
pub fn svd(
    a: &ArrayView<'_>,
    s: &mut ArrayViewMut<'_>,
    vectors: Option<(&mut ArrayViewMut<'_>, &mut ArrayViewMut<'_>)>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => svd_run::<T>(a, s, vectors, isa, exec))
}

fn svd_run<T: Field>(
    a: &ArrayView<'_>,
    s: &mut ArrayViewMut<'_>,
    mut vectors: Option<(&mut ArrayViewMut<'_>, &mut ArrayViewMut<'_>)>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    check_dtype::<T::Real>("s", s.dtype())?;
    let (m, n) = matrix_of("a", a.shape())?;
    let k = m.min(n);
    let batch = broadcast_batch(&[("a", a.shape(), 2)])?;
    check_shape("s", s.shape(), &batch, &[k])?;
    let (mut uc, mut vr) = (k, k);
    if let Some((u, vh)) = vectors.as_ref() {
        check_dtype::<T>("u", u.dtype())?;
        check_dtype::<T>("vh", vh.dtype())?;
        let (_, c) = matrix_of("u", u.shape())?;
        let (r, _) = matrix_of("vh", vh.shape())?;
        if (c, r) == (m, n) {
            (uc, vr) = (m, n);
        }
        check_shape("u", u.shape(), &batch, &[m, uc])?;
        check_shape("vh", vh.shape(), &batch, &[vr, n])?;
        check_destinations(&[("s", s), ("u", u), ("vh", vh)], &[a])?;
    } else {
        check_destinations(&[("s", s)], &[a])?;
    }
    let count = count_of(&batch)?;
    let mn = m.checked_mul(n).ok_or_else(overflow)?;
    let muc = m.checked_mul(uc).ok_or_else(overflow)?;
    let vrn = vr.checked_mul(n).ok_or_else(overflow)?;
    let want = vectors.is_some();
    let src = Mats::new(a, 2, &batch)?;
    let s_out = MatsMut::new(s, 1, &batch)?;
    let outs = match vectors.as_mut() {
        Some((u, vh)) => Some((MatsMut::new(u, 2, &batch)?, MatsMut::new(vh, 2, &batch)?)),
        None => None,
    };
    type Work<T> = (Vec<T>, Vec<<T as Field>::Real>, Vec<T>, Vec<T>, SvdWork<T>);
    let make = || -> Result<Work<T>> {
        Ok((
            zeros(mn, "svd work")?,
            zeros(k, "svd work")?,
            zeros(if want { muc } else { 0 }, "svd work")?,
            zeros(if want { vrn } else { 0 }, "svd work")?,
            SvdWork::new(m, n, want)?,
        ))
    };
    for_each_matrix(count, make, exec, |b, (aw, ss, us, vhs, work), inner| {
        src.read(b, aw);
        if k == 0 && want {
            // No singular value: the complete factors are identities.
            for (p, x) in us.iter_mut().enumerate() {
                *x = if p % (m + 1) == 0 { T::ONE } else { T::ZERO };
            }
            for (p, x) in vhs.iter_mut().enumerate() {
                *x = if p % (vr + 1) == 0 { T::ONE } else { T::ZERO };
            }
        }
        let ok = if want {
            svd_one(
                m,
                n,
                aw,
                ss,
                Some((&mut us[..], uc)),
                Some((&mut vhs[..], vr)),
                work,
                isa,
                inner,
            )
        } else {
            svd_one(m, n, aw, ss, None, None, work, isa, inner)
        };
        // SAFETY: s, u and vh were validated, are of the dtypes checked,
        // reach no element twice and do not overlap (checked), and are
        // borrowed mutably for this call; batch index b is this task's
        // alone.
        unsafe {
            write_or_nan(&s_out, b, ok, ss, k);
            if let Some((uo, vo)) = &outs {
                write_or_nan(uo, b, ok, us, m);
                write_or_nan(vo, b, ok, vhs, vr);
            }
        }
    })
}

/// The eigenvalues of each square matrix of `a` (`[batch…, n, n]`) into `w`
/// (`[batch…, n]`, the complex dtype of a's precision), and where `v` is
/// given (`[batch…, n, n]`, that complex dtype) columns of unit norm with
/// `a v = v diag w`.
///
/// a is first balanced (`b = D⁻¹ Pᵀ a P D`, P a permutation and D diagonal
/// of powers of 2; D = I where rows' and columns' norms are equal already),
/// reduced to Hessenberg form and iterated to Schur form by shifted QR
/// (the double shift on real a). w is in the order the Schur form's
/// diagonal leaves it; on real a, values that are not real come in
/// adjacent conjugate pairs, positive imaginary part first, with conjugate
/// columns of v, and a real value has a +0 imaginary part and a column of
/// +0 imaginary parts. Each column of v has an element of largest magnitude
/// real (positive on complex a). A matrix that holds NaN or an infinity, or
/// on which the iteration does not converge, is NaN in every result.
///
/// **Bound.** With g = γ(16n) and h = ε(16n), w is the spectrum of a + E
/// with `‖D⁻¹PᵀEPD‖_F ≤ g‖b‖_F + h`, with v or without; each column has
/// `|‖v_j‖₂ − 1| ≤ g` and `‖D⁻¹Pᵀ(a v_j − w_j v_j)‖₂ ≤ (g‖b‖_F + h)·‖D⁻¹Pᵀv_j‖₂`.
/// Values alone may differ from the vectors' call's. Refusals: the
/// module's.
pub fn eig(
    a: &ArrayView<'_>,
    w: &mut ArrayViewMut<'_>,
    v: Option<&mut ArrayViewMut<'_>>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => eig_run::<T>(a, w, v, isa, exec))
}

fn eig_run<T: Field>(
    a: &ArrayView<'_>,
    w: &mut ArrayViewMut<'_>,
    v: Option<&mut ArrayViewMut<'_>>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    type C<T> = <<T as Field>::Real as Real>::Complex;
    check_dtype::<C<T>>("w", w.dtype())?;
    let n = square_of("a", a.shape())?;
    let batch = broadcast_batch(&[("a", a.shape(), 2)])?;
    check_shape("w", w.shape(), &batch, &[n])?;
    if let Some(v) = v.as_deref() {
        check_dtype::<C<T>>("v", v.dtype())?;
        check_shape("v", v.shape(), &batch, &[n, n])?;
    }
    match v.as_deref() {
        Some(vv) => check_destinations(&[("w", w), ("v", vv)], &[a])?,
        None => check_destinations(&[("w", w)], &[a])?,
    }
    let count = count_of(&batch)?;
    let nn = n.checked_mul(n).ok_or_else(overflow)?;
    let vectors = v.is_some();
    let src = Mats::new(a, 2, &batch)?;
    let w_out = MatsMut::new(w, 1, &batch)?;
    let v_out = match v {
        Some(v) => Some(MatsMut::new(v, 2, &batch)?),
        None => None,
    };
    type Work<T> = (Vec<T>, Vec<C<T>>, Vec<C<T>>, EigWork<T>);
    let make = || -> Result<Work<T>> {
        Ok((
            zeros(nn, "eig work")?,
            zeros(n, "eig work")?,
            zeros(if vectors { nn } else { 0 }, "eig work")?,
            EigWork::new(n, vectors)?,
        ))
    };
    for_each_matrix(count, make, exec, |b, (aw, ws, vs, work), inner| {
        src.read(b, aw);
        let ok = eig_one(
            n,
            aw,
            ws,
            if vectors { Some(&mut vs[..]) } else { None },
            work,
            isa,
            inner,
        );
        // SAFETY: w and v were validated, are of the dtypes checked, reach
        // no element twice and do not overlap (checked), and are borrowed
        // mutably for this call; batch index b is this task's alone.
        unsafe {
            write_or_nan(&w_out, b, ok, ws, n);
            if let Some(vo) = &v_out {
                write_or_nan(vo, b, ok, vs, n);
            }
        }
    })
}
