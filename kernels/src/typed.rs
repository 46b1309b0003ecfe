//! Typed conveniences over slices: the calls users make most, on `&[T]` of
//! any [`Element`] type (`bool`, the integers, `half::f16`, `half::bf16`,
//! `f32`, `f64`, `num_complex::Complex<f32>` and `Complex<f64>`), each a thin
//! wrapper that builds the views and calls the view-based function, so the
//! results are that function's, bit for bit. They follow the crate's API
//! rule (attributes, inputs, destinations, then the [`Exec`]).
//!
//! A slice is a one-dimensional array of its length; an input of length 1
//! broadcasts (numpy's rule), any other length must be the destination's.
//!
//! ```
//! use tessera::typed;
//! use tessera::{Exec, Kind, ReduceOp};
//!
//! let a = [1.0f32, 2.0, 3.0];
//! let mut y = [0.0f32; 3];
//! typed::elementwise(Kind::Mul, &[&a, &[2.0]], &mut y, &Exec::default())?;
//! assert_eq!(y, [2.0, 4.0, 6.0]);
//! let sum: f32 = typed::reduce(ReduceOp::Sum, &y, &Exec::default())?;
//! assert_eq!(sum, 12.0);
//! # Ok::<(), tessera::Error>(())
//! ```

pub mod attention;
pub mod linalg;

use crate::array::{ArrayView, ArrayViewMut, Element};
use crate::cast::CastMode;
use crate::contract::ContractSpec;
use crate::error::{Error, Result};
use crate::map::{MapPlan, Program};
use crate::reduce::ReduceOp;
use crate::tier::Exec;
use crate::Kind;

fn views<'a, T: Element>(inputs: &[&'a [T]]) -> Result<Vec<ArrayView<'a>>> {
    inputs
        .iter()
        .map(|s| ArrayView::from_slice(s, &[s.len()]))
        .collect()
}

fn views_mut<'a, U: Element>(outputs: &'a mut [&mut [U]]) -> Result<Vec<ArrayViewMut<'a>>> {
    outputs
        .iter_mut()
        .map(|o| {
            let n = o.len();
            ArrayViewMut::from_slice(o, &[n])
        })
        .collect()
}

/// [`crate::elementwise()`] of `kind` on slices: `out[i] = kind(inputs[..][i])`.
/// The inputs share one type (`select`, whose condition is bool, takes
/// views). Refusals as the view-based call's.
pub fn elementwise<T: Element, U: Element>(
    kind: Kind,
    inputs: &[&[T]],
    out: &mut [U],
    exec: &Exec,
) -> Result<()> {
    let n = out.len();
    crate::elementwise(
        kind,
        &views(inputs)?,
        &mut ArrayViewMut::from_slice(out, &[n])?,
        exec,
    )
}

/// [`crate::cast()`] of a slice into a slice of another type, in `mode`.
pub fn cast<T: Element, U: Element>(
    mode: CastMode,
    src: &[T],
    dst: &mut [U],
    exec: &Exec,
) -> Result<()> {
    let n = dst.len();
    crate::cast(
        mode,
        &ArrayView::from_slice(src, &[src.len()])?,
        &mut ArrayViewMut::from_slice(dst, &[n])?,
        exec,
    )
}

/// [`crate::map()`] of `program` on slices: inputs of one type, outputs of
/// one type, every output of one length (the inputs broadcast to it).
pub fn map<T: Element, U: Element>(
    program: &Program,
    inputs: &[&[T]],
    outputs: &mut [&mut [U]],
    exec: &Exec,
) -> Result<()> {
    crate::map(program, &views(inputs)?, &mut views_mut(outputs)?, exec)
}

/// [`MapPlan::run`] on slices (the plan's shapes are one-dimensional).
pub fn map_planned<T: Element, U: Element>(
    plan: &MapPlan,
    inputs: &[&[T]],
    outputs: &mut [&mut [U]],
    exec: &Exec,
) -> Result<()> {
    plan.run(&views(inputs)?, &mut views_mut(outputs)?, exec)
}

/// [`crate::reduce()`] of a whole slice by `op`, the result rounded once
/// into `U` (`i64` for ArgMax/ArgMin: a position).
pub fn reduce<T: Element, U: Element + Default>(op: ReduceOp, x: &[T], exec: &Exec) -> Result<U> {
    let mut out = [U::default()];
    crate::reduce(
        op,
        &[0],
        &ArrayView::from_slice(x, &[x.len()])?,
        &mut ArrayViewMut::from_slice(&mut out, &[])?,
        exec,
    )?;
    Ok(out[0])
}

/// [`crate::matmul()`] of row-major matrices: `a` is `m × k`, `b` is
/// `k × n` and `out` `m × n` (`dims = (m, k, n)`), accumulated in
/// [`crate::contract::default_acc`] of `T`, rounded once into `U`. Refuses
/// slices whose lengths are not those of `dims` ([`Error::Length`]).
pub fn matmul<T: Element, U: Element>(
    a: &[T],
    b: &[T],
    dims: (usize, usize, usize),
    out: &mut [U],
    exec: &Exec,
) -> Result<()> {
    let (m, k, n) = dims;
    let len = |what: &str, got: usize, r: usize, c: usize| {
        check_len(what, format!("matmul: {what} ({r} × {c})"), got, &[r, c])
    };
    len("a", a.len(), m, k)?;
    len("b", b.len(), k, n)?;
    len("out", out.len(), m, n)?;
    crate::matmul(
        &ArrayView::from_slice(a, &[m, k])?,
        &ArrayView::from_slice(b, &[k, n])?,
        &mut ArrayViewMut::from_slice(out, &[m, n])?,
        exec,
    )
}

/// [`crate::contract()`] of typed slices holding C-order arrays of the given
/// shapes: `a` of `a_shape`, `b` of `b_shape` and `out` of the
/// contraction's shape (`out_shape`), accumulated in `spec.acc`.
pub fn contract<T: Element, U: Element>(
    spec: &ContractSpec,
    a: (&[T], &[usize]),
    b: (&[T], &[usize]),
    out: (&mut [U], &[usize]),
    exec: &Exec,
) -> Result<()> {
    crate::contract(
        spec,
        &ArrayView::from_slice(a.0, a.1)?,
        &ArrayView::from_slice(b.0, b.1)?,
        None,
        &mut ArrayViewMut::from_slice(out.0, out.1)?,
        exec,
    )
}

/// [`Error::Length`] naming `label` where a slice of `got` values is not
/// the product of `dims` long ([`Error::Overflow`] naming `what` where that
/// product overflows): the length check of every typed call.
pub(crate) fn check_len(what: &str, label: String, got: usize, dims: &[usize]) -> Result<()> {
    let expected = dims
        .iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or(Error::Overflow {
            operand: what.into(),
        })?;
    if got == expected {
        Ok(())
    } else {
        Err(Error::Length {
            operand: label,
            len: got,
            expected,
            unit: "values",
        })
    }
}

/// `f` (convolve or correlate) of slices.
fn signal<T: Element, U: Element>(
    f: crate::signal::SignalFn,
    x: &[T],
    k: &[T],
    mode: crate::ConvMode,
    acc: crate::DType,
    out: &mut [U],
    exec: &Exec,
) -> Result<()> {
    let n = out.len();
    f(
        &ArrayView::from_slice(x, &[x.len()])?,
        &ArrayView::from_slice(k, &[k.len()])?,
        mode,
        acc,
        &mut ArrayViewMut::from_slice(out, &[n])?,
        exec,
    )
}

/// [`crate::convolve()`] of a signal slice with a kernel slice in `mode`,
/// accumulated in `acc`, into `out` (`crate::signal::convolve_shape`'s
/// length). Refusals as the view-based call's.
pub fn convolve<T: Element, U: Element>(
    x: &[T],
    k: &[T],
    mode: crate::ConvMode,
    acc: crate::DType,
    out: &mut [U],
    exec: &Exec,
) -> Result<()> {
    signal(crate::convolve, x, k, mode, acc, out, exec)
}

/// [`crate::correlate()`] of slices, as [`convolve`] (the kernel neither
/// reversed nor conjugated).
pub fn correlate<T: Element, U: Element>(
    x: &[T],
    k: &[T],
    mode: crate::ConvMode,
    acc: crate::DType,
    out: &mut [U],
    exec: &Exec,
) -> Result<()> {
    signal(crate::correlate, x, k, mode, acc, out, exec)
}

/// [`crate::contract::matmul_packed`] of a row-major `m × k` slice `a`
/// (`m` = `a.len() / k`) by a packed B into the row-major `m × n` `out`.
/// Refuses lengths that are not those shapes' ([`Error::Length`]).
pub fn matmul_packed<T: Element, U: Element>(
    a: &[T],
    b: &crate::contract::PackedB,
    out: &mut [U],
    exec: &Exec,
) -> Result<()> {
    let (k, n) = b.shape();
    let m = a.len().checked_div(k).unwrap_or(0);
    check_len(
        "a",
        format!("matmul_packed: a ({m} × {k})"),
        a.len(),
        &[m, k],
    )?;
    check_len(
        "out",
        format!("matmul_packed: out ({m} × {n})"),
        out.len(),
        &[m, n],
    )?;
    crate::contract::matmul_packed(
        &ArrayView::from_slice(a, &[m, k])?,
        b,
        &mut ArrayViewMut::from_slice(out, &[m, n])?,
        exec,
    )
}
