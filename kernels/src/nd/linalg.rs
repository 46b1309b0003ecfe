//! The linear-algebra routines on ndarray views (`tessera::linalg`'s
//! calls, bit for bit): operands of any layout (views that do not fill
//! their span are read through dense copies), destinations written where
//! they lie or through dense copies assigned back only when the call
//! succeeds. Batches are the leading axes, as in the view-based calls.

use super::{with_out, In};
use crate::array::Element;
use crate::error::Result;
use crate::linalg::{self, Triangle};
use crate::tier::Exec;
use ndarray::{ArrayView as NdView, ArrayViewMut as NdViewMut, Dimension};

/// [`linalg::cholesky`] of `a` into `dst` (a's shape).
pub fn cholesky<T: Element, D: Dimension>(
    triangle: Triangle,
    a: NdView<'_, T, D>,
    mut dst: NdViewMut<'_, T, D>,
    exec: &Exec,
) -> Result<()> {
    let ia = In::of(&a)?;
    let va = ia.tessera()?;
    with_out(&mut dst, |o| linalg::cholesky(triangle, &va, o, exec))
}

/// [`linalg::lu`] of `a` into `lu`, `pivots` and `permutation`.
pub fn lu<T: Element, D: Dimension, E: Dimension>(
    a: NdView<'_, T, D>,
    mut lu: NdViewMut<'_, T, D>,
    mut pivots: NdViewMut<'_, i64, E>,
    mut permutation: NdViewMut<'_, i64, E>,
    exec: &Exec,
) -> Result<()> {
    let ia = In::of(&a)?;
    let va = ia.tessera()?;
    with_out(&mut lu, |l| {
        with_out(&mut pivots, |p| {
            with_out(&mut permutation, |q| linalg::lu(&va, l, p, q, exec))
        })
    })
}

/// [`linalg::qr`] of `a` into `q` and `r` (reduced or complete as their
/// shapes say).
pub fn qr<T: Element, D: Dimension>(
    a: NdView<'_, T, D>,
    mut q: NdViewMut<'_, T, D>,
    mut r: NdViewMut<'_, T, D>,
    exec: &Exec,
) -> Result<()> {
    let ia = In::of(&a)?;
    let va = ia.tessera()?;
    with_out(&mut q, |qv| {
        with_out(&mut r, |rv| linalg::qr(&va, qv, rv, exec))
    })
}

/// [`linalg::solve_triangular`] of `a` and `b` into `x`.
pub fn solve_triangular<T: Element, D: Dimension, E: Dimension>(
    triangle: Triangle,
    adjoint: bool,
    unit_diagonal: bool,
    a: NdView<'_, T, D>,
    b: NdView<'_, T, E>,
    mut x: NdViewMut<'_, T, E>,
    exec: &Exec,
) -> Result<()> {
    let (ia, ib) = (In::of(&a)?, In::of(&b)?);
    let (va, vb) = (ia.tessera()?, ib.tessera()?);
    with_out(&mut x, |o| {
        linalg::solve_triangular(triangle, adjoint, unit_diagonal, &va, &vb, o, exec)
    })
}

/// [`linalg::eigh`] of `a` into `w` and, where given, `v`.
pub fn eigh<T: Element, R: Element, D: Dimension, E: Dimension>(
    a: NdView<'_, T, D>,
    mut w: NdViewMut<'_, R, E>,
    v: Option<NdViewMut<'_, T, D>>,
    exec: &Exec,
) -> Result<()> {
    let ia = In::of(&a)?;
    let va = ia.tessera()?;
    match v {
        Some(mut v) => with_out(&mut w, |wv| {
            with_out(&mut v, |vv| linalg::eigh(&va, wv, Some(vv), exec))
        }),
        None => with_out(&mut w, |wv| linalg::eigh(&va, wv, None, exec)),
    }
}

/// [`linalg::svd`] of `a` into `s` and, where given, `(u, vh)`.
pub fn svd<T: Element, R: Element, D: Dimension, E: Dimension>(
    a: NdView<'_, T, D>,
    mut s: NdViewMut<'_, R, E>,
    vectors: Option<(NdViewMut<'_, T, D>, NdViewMut<'_, T, D>)>,
    exec: &Exec,
) -> Result<()> {
    let ia = In::of(&a)?;
    let va = ia.tessera()?;
    match vectors {
        Some((mut u, mut vh)) => with_out(&mut s, |sv| {
            with_out(&mut u, |uv| {
                with_out(&mut vh, |hv| linalg::svd(&va, sv, Some((uv, hv)), exec))
            })
        }),
        None => with_out(&mut s, |sv| linalg::svd(&va, sv, None, exec)),
    }
}

/// [`linalg::eig`] of `a` into `w` and, where given, `v` (complex).
pub fn eig<T: Element, C: Element, D: Dimension, E: Dimension>(
    a: NdView<'_, T, D>,
    mut w: NdViewMut<'_, C, E>,
    v: Option<NdViewMut<'_, C, D>>,
    exec: &Exec,
) -> Result<()> {
    let ia = In::of(&a)?;
    let va = ia.tessera()?;
    match v {
        Some(mut v) => with_out(&mut w, |wv| {
            with_out(&mut v, |vv| linalg::eig(&va, wv, Some(vv), exec))
        }),
        None => with_out(&mut w, |wv| linalg::eig(&va, wv, None, exec)),
    }
}
