//! Typed conveniences over `ndarray` views (feature `ndarray`, ndarray 0.16):
//! the calls users make most, each a thin wrapper that builds tessera's
//! views from ndarray's (any strides: transposed, sliced with steps,
//! reversed, broadcast) and calls the view-based function, so the results
//! are that function's, bit for bit. They follow the crate's API rule
//! (attributes, inputs, destinations, then the [`Exec`]).
//!
//! An ndarray view becomes a tessera view over the memory its elements span
//! when its elements fill that span (every layout that is a permutation,
//! reversal or broadcast of a dense one). A view with gaps between its
//! elements (a slice with a step, a column block of a matrix) is copied into
//! a dense array first, or, for a destination, computed into one and then
//! assigned element by element: the memory in its gaps may belong to other
//! views, so tessera never takes a reference to it. Either way the values
//! are the same, so the bits are.
//!
//! ```
//! use ndarray::{array, Array2};
//! use tessera::{nd, Exec, Kind};
//!
//! let a = array![[1.0f32, 2.0], [3.0, 4.0]];
//! let mut y = Array2::<f32>::zeros((2, 2));
//! // a + aᵀ, the transpose read where it lies.
//! nd::elementwise(Kind::Add, &[a.view(), a.t()], y.view_mut(), &Exec::default())?;
//! assert_eq!(y, array![[2.0, 5.0], [5.0, 8.0]]);
//! # Ok::<(), tessera::Error>(())
//! ```

pub mod attention;
pub mod linalg;

use crate::array::{ArrayView, ArrayViewMut, Element};
use crate::cast::CastMode;
use crate::contract::ContractSpec;
use crate::error::{Error, Result};
use crate::map::Program;
use crate::reduce::ReduceOp;
use crate::tier::Exec;
use crate::Kind;
use ndarray::{Array, ArrayView as NdView, ArrayViewMut as NdViewMut, Dimension, Ix1, Ix2};

/// Where the elements of a layout lie: the first element's position from
/// the lowest address and the elements the span holds, when the elements
/// fill their span (None when there are gaps, or when two positions
/// coincide on an axis of more than one element with a non-zero stride).
fn dense_span(shape: &[usize], strides: &[isize]) -> Option<(usize, usize)> {
    if shape.contains(&0) {
        return Some((0, 0));
    }
    let mut axes: Vec<(usize, usize)> = shape
        .iter()
        .zip(strides)
        .filter(|(&n, &s)| n > 1 && s != 0)
        .map(|(&n, &s)| (s.unsigned_abs(), n))
        .collect();
    axes.sort_unstable();
    let mut expected = 1usize;
    for (s, n) in axes {
        if s != expected {
            return None;
        }
        expected = expected.checked_mul(n)?;
    }
    let low: isize = shape
        .iter()
        .zip(strides)
        .filter(|(_, &s)| s < 0)
        .map(|(&n, &s)| (n as isize - 1) * s)
        .sum();
    Some(((-low) as usize, expected))
}

/// A tessera view of `a` where its elements fill their span (see the
/// module documentation), else None.
pub fn view<'a, T: Element, D: Dimension>(a: &NdView<'a, T, D>) -> Result<Option<ArrayView<'a>>> {
    let (shape, strides) = (a.shape(), a.strides());
    let Some((first, span)) = dense_span(shape, strides) else {
        return Ok(None);
    };
    // SAFETY: `span` elements from `first` before the first element's
    // address are exactly the memory the view's elements occupy (they fill
    // it: `dense_span`), inside the view's allocation and borrowed by it for
    // 'a; `Element` types are plain data.
    let data = unsafe {
        let p = a.as_ptr().wrapping_sub(first);
        core::slice::from_raw_parts(p as *const u8, span * size_of::<T>())
    };
    ArrayView::new(T::DTYPE, shape, strides, first, data).map(Some)
}

/// A writable tessera view of `a` where its elements fill their span, else
/// None.
pub fn view_mut<'a, T: Element, D: Dimension>(
    a: &'a mut NdViewMut<'_, T, D>,
) -> Result<Option<ArrayViewMut<'a>>> {
    let (shape, strides) = (a.shape().to_vec(), a.strides().to_vec());
    let Some((first, span)) = dense_span(&shape, &strides) else {
        return Ok(None);
    };
    // SAFETY: as in `view`, for the unique borrow the mutable view holds;
    // kernels write only values valid for `T` (`Element`).
    let data = unsafe {
        let p = a.as_mut_ptr().wrapping_sub(first);
        core::slice::from_raw_parts_mut(p as *mut u8, span * size_of::<T>())
    };
    ArrayViewMut::new(T::DTYPE, &shape, &strides, first, data).map(Some)
}

/// The elements of `a` in C order, in a vector reserved fallibly
/// ([`Error::Alloc`] where the allocator refuses): a copy the size of the
/// view's elements.
fn dense_values<T: Element, D: Dimension>(a: &NdView<'_, T, D>, what: &str) -> Result<Vec<T>> {
    crate::alloc::try_collect(
        a.len(),
        a.iter().copied(),
        format_args!("a dense copy of {what}"),
    )
}

/// A dense (C-order) owned copy of `a`, allocated fallibly.
fn dense_copy<T: Element, D: Dimension>(a: &NdView<'_, T, D>, what: &str) -> Result<Array<T, D>> {
    let v = dense_values(a, what)?;
    Array::from_shape_vec(a.raw_dim(), v).map_err(|e| Error::Layout {
        operand: what.into(),
        reason: format!("a dense copy does not take its shape: {e}"),
    })
}

/// An input: the view itself, or a dense copy of the elements it stores
/// (its broadcast axes, of stride 0, kept as such: a copy as large as the
/// memory the view reads, not as the elements it names), with the shape
/// and strides that view the copy as the input.
enum In<'a, T, D: Dimension> {
    View(NdView<'a, T, D>),
    Copy {
        data: Vec<T>,
        shape: Vec<usize>,
        strides: Vec<isize>,
    },
}

impl<'a, T: Element, D: Dimension> In<'a, T, D> {
    fn of(a: &NdView<'a, T, D>) -> Result<Self> {
        if view(a)?.is_some() {
            return Ok(In::View(a.clone()));
        }
        // The stored core: every broadcast axis (stride 0) at index 0.
        let mut core = a.clone();
        for (i, (&n, &s)) in a.shape().iter().zip(a.strides()).enumerate() {
            if n > 1 && s == 0 {
                core.collapse_axis(ndarray::Axis(i), 0);
            }
        }
        let data = dense_values(&core, "an ndarray input")?;
        let mut strides = crate::array::c_strides(core.shape());
        for (st, (&n, &s)) in strides.iter_mut().zip(a.shape().iter().zip(a.strides())) {
            if n > 1 && s == 0 {
                *st = 0;
            }
        }
        Ok(In::Copy {
            data,
            shape: a.shape().to_vec(),
            strides,
        })
    }
    fn tessera(&self) -> Result<ArrayView<'_>> {
        match self {
            In::View(v) => view(v)?.ok_or_else(|| Error::Layout {
                operand: "ndarray view".into(),
                reason: "its elements do not fill their span".into(),
            }),
            In::Copy {
                data,
                shape,
                strides,
            } => ArrayView::from_slice_strided(data, shape, strides, 0),
        }
    }
}

/// Run `f` on a writable tessera view of `out`: the view itself where its
/// elements fill their span, else a dense copy assigned back to it after
/// `f` succeeds (so a refusal writes nothing).
fn with_out<T: Element, D: Dimension>(
    out: &mut NdViewMut<'_, T, D>,
    f: impl FnOnce(&mut ArrayViewMut<'_>) -> Result<()>,
) -> Result<()> {
    if dense_span(out.shape(), out.strides()).is_some() {
        let mut v = view_mut(out)?.ok_or_else(|| Error::Layout {
            operand: "ndarray destination".into(),
            reason: "its elements do not fill their span".into(),
        })?;
        return f(&mut v);
    }
    refuse_overlap(out.shape(), out.strides(), "ndarray destination")?;
    let mut tmp = dense_copy(&out.view(), "an ndarray destination")?;
    {
        let mut tv = tmp.view_mut();
        let mut v = view_mut(&mut tv)?.ok_or_else(|| Error::Layout {
            operand: "ndarray destination".into(),
            reason: "a dense copy does not fill its span".into(),
        })?;
        f(&mut v)?;
    }
    out.assign(&tmp);
    Ok(())
}

/// A destination that reaches an element twice is refused before it is
/// copied (a dense copy would hide it).
fn refuse_overlap(shape: &[usize], strides: &[isize], what: &str) -> Result<()> {
    match crate::elementwise::self_overlap(shape, strides) {
        Some(reason) => Err(Error::Layout {
            operand: what.into(),
            reason,
        }),
        None => Ok(()),
    }
}

fn ins<'a, T: Element, D: Dimension>(inputs: &[NdView<'a, T, D>]) -> Result<Vec<In<'a, T, D>>> {
    inputs.iter().map(In::of).collect()
}

fn tviews<'s, T: Element, D: Dimension>(ins: &'s [In<'_, T, D>]) -> Result<Vec<ArrayView<'s>>> {
    ins.iter().map(In::tessera).collect()
}

/// [`crate::elementwise()`] on ndarray views (inputs broadcast to `out`'s
/// shape by numpy's rules, as the view-based call broadcasts them).
pub fn elementwise<T: Element, U: Element, D: Dimension>(
    kind: Kind,
    inputs: &[NdView<'_, T, D>],
    mut out: NdViewMut<'_, U, D>,
    exec: &Exec,
) -> Result<()> {
    let ins = ins(inputs)?;
    let views = tviews(&ins)?;
    with_out(&mut out, |o| crate::elementwise(kind, &views, o, exec))
}

/// [`crate::cast()`] of an ndarray view into another, in `mode`.
pub fn cast<T: Element, U: Element, D: Dimension>(
    mode: CastMode,
    src: NdView<'_, T, D>,
    mut dst: NdViewMut<'_, U, D>,
    exec: &Exec,
) -> Result<()> {
    let ins = ins(std::slice::from_ref(&src))?;
    let views = tviews(&ins)?;
    with_out(&mut dst, |o| crate::cast(mode, &views[0], o, exec))
}

/// [`crate::map()`] of `program` on ndarray views: inputs of one type,
/// outputs of one type and one shape.
pub fn map<T: Element, U: Element, D: Dimension>(
    program: &Program,
    inputs: &[NdView<'_, T, D>],
    outputs: &mut [NdViewMut<'_, U, D>],
    exec: &Exec,
) -> Result<()> {
    let ins = ins(inputs)?;
    let views = tviews(&ins)?;
    // Outputs whose elements fill their span are written where they lie;
    // the others through dense copies assigned back after the call.
    let mut copies: Vec<Option<Array<U, D>>> = Vec::with_capacity(outputs.len());
    for o in outputs.iter() {
        copies.push(match dense_span(o.shape(), o.strides()) {
            Some(_) => None,
            None => {
                refuse_overlap(o.shape(), o.strides(), "ndarray output")?;
                Some(dense_copy(&o.view(), "an ndarray output")?)
            }
        });
    }
    {
        let mut copy_views: Vec<Option<NdViewMut<'_, U, D>>> = copies
            .iter_mut()
            .map(|c| c.as_mut().map(|c| c.view_mut()))
            .collect();
        let mut outs = Vec::with_capacity(outputs.len());
        for (o, c) in outputs.iter_mut().zip(copy_views.iter_mut()) {
            let v = match c {
                Some(c) => view_mut(c)?,
                None => view_mut(o)?,
            };
            outs.push(v.ok_or_else(|| Error::Layout {
                operand: "ndarray output".into(),
                reason: "its elements do not fill their span".into(),
            })?);
        }
        crate::map(program, &views, &mut outs, exec)?;
    }
    for (o, c) in outputs.iter_mut().zip(&copies) {
        if let Some(c) = c {
            o.assign(c);
        }
    }
    Ok(())
}

/// [`crate::reduce()`] of an ndarray view along `axes` by `op` into `dst`
/// (the shape without `axes`, or with extent 1 there).
pub fn reduce<T: Element, U: Element, D: Dimension, E: Dimension>(
    op: ReduceOp,
    axes: &[usize],
    x: NdView<'_, T, D>,
    mut dst: NdViewMut<'_, U, E>,
    exec: &Exec,
) -> Result<()> {
    let ins = ins(std::slice::from_ref(&x))?;
    let views = tviews(&ins)?;
    with_out(&mut dst, |o| crate::reduce(op, axes, &views[0], o, exec))
}

/// [`crate::contract()`] of two ndarray views by `spec` into `dst` (the
/// contraction's shape).
pub fn contract<T: Element, U: Element, D: Dimension, E: Dimension, F: Dimension>(
    spec: &ContractSpec,
    a: NdView<'_, T, D>,
    b: NdView<'_, T, E>,
    mut dst: NdViewMut<'_, U, F>,
    exec: &Exec,
) -> Result<()> {
    let (ia, ib) = (In::of(&a)?, In::of(&b)?);
    let (va, vb) = (ia.tessera()?, ib.tessera()?);
    with_out(&mut dst, |o| crate::contract(spec, &va, &vb, None, o, exec))
}

/// [`crate::matmul()`] of two matrices into a third.
pub fn matmul<T: Element, U: Element>(
    a: NdView<'_, T, Ix2>,
    b: NdView<'_, T, Ix2>,
    mut dst: NdViewMut<'_, U, Ix2>,
    exec: &Exec,
) -> Result<()> {
    let (ia, ib) = (In::of(&a)?, In::of(&b)?);
    let (va, vb) = (ia.tessera()?, ib.tessera()?);
    with_out(&mut dst, |o| crate::matmul(&va, &vb, o, exec))
}

/// `f` (convolve or correlate) of ndarray views.
fn signal<T: Element, U: Element, D: Dimension, E: Dimension>(
    f: crate::signal::SignalFn,
    x: NdView<'_, T, D>,
    k: NdView<'_, T, Ix1>,
    mode: crate::ConvMode,
    acc: crate::DType,
    mut dst: NdViewMut<'_, U, E>,
    exec: &Exec,
) -> Result<()> {
    let (ix, ik) = (In::of(&x)?, In::of(&k)?);
    let (vx, vk) = (ix.tessera()?, ik.tessera()?);
    with_out(&mut dst, |o| f(&vx, &vk, mode, acc, o, exec))
}

/// [`crate::convolve()`] of an ndarray signal (along its last axis; leading
/// axes a batch) with a one-axis kernel, accumulated in `acc`, into `dst`
/// (`crate::signal::convolve_shape`'s shape).
pub fn convolve<T: Element, U: Element, D: Dimension, E: Dimension>(
    x: NdView<'_, T, D>,
    k: NdView<'_, T, Ix1>,
    mode: crate::ConvMode,
    acc: crate::DType,
    dst: NdViewMut<'_, U, E>,
    exec: &Exec,
) -> Result<()> {
    signal(crate::convolve, x, k, mode, acc, dst, exec)
}

/// [`crate::correlate()`] of an ndarray signal with a one-axis kernel, as
/// [`convolve`] (the kernel neither reversed nor conjugated).
pub fn correlate<T: Element, U: Element, D: Dimension, E: Dimension>(
    x: NdView<'_, T, D>,
    k: NdView<'_, T, Ix1>,
    mode: crate::ConvMode,
    acc: crate::DType,
    dst: NdViewMut<'_, U, E>,
    exec: &Exec,
) -> Result<()> {
    signal(crate::correlate, x, k, mode, acc, dst, exec)
}

/// [`crate::contract::matmul_packed`] of a matrix by a packed B into a
/// matrix.
pub fn matmul_packed<T: Element, U: Element>(
    a: NdView<'_, T, Ix2>,
    b: &crate::contract::PackedB,
    mut dst: NdViewMut<'_, U, Ix2>,
    exec: &Exec,
) -> Result<()> {
    let ia = In::of(&a)?;
    let va = ia.tessera()?;
    with_out(&mut dst, |o| {
        crate::contract::matmul_packed(&va, b, o, exec)
    })
}
