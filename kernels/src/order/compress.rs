//! Stable [`compress`] (by a mask) and [`partition`] (about a pivot).

use super::check_destination;
use super::key::KeyMap;
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::{DType, Exec};

fn one_d(name: &str, s: &[usize]) -> Result<usize> {
    if s.len() != 1 {
        return Err(Error::Rank {
            operand: name.into(),
            shape: s.to_vec(),
            expected: "a 1-D array".into(),
        });
    }
    Ok(s[0])
}

/// The elements of the 1-D `src` whose `mask` byte is nonzero (bool, `src`'s
/// length), in order and bits unchanged, into the first elements of `dst`
/// (1-D, `src`'s dtype); returns how many were written (the rest of `dst`
/// keeps its bits). Every dtype is taken.
///
/// # Refusals (before any write)
/// [`Error::Rank`] for operands not 1-D; [`Error::DTypeMismatch`] for a mask
/// not bool or `dst` of another dtype; [`Error::Shape`] for a mask of another
/// length; [`Error::Length`] for a `dst` shorter than the kept count;
/// [`Error::Layout`] for a `dst` that reaches an element twice or overlaps
/// an operand.
pub fn compress(
    src: &ArrayView<'_>,
    mask: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<usize> {
    exec.resolve_tier()?;
    let n = one_d("src", src.shape())?;
    let nm = one_d("mask", mask.shape())?;
    let nd = one_d("dst", dst.shape())?;
    if mask.dtype() != DType::Bool {
        return Err(Error::DTypeMismatch {
            operand: "mask".into(),
            expected: DType::Bool,
            got: mask.dtype(),
        });
    }
    if dst.dtype() != src.dtype() {
        return Err(Error::DTypeMismatch {
            operand: "dst".into(),
            expected: src.dtype(),
            got: dst.dtype(),
        });
    }
    if nm != n {
        return Err(Error::Shape {
            operand: "mask".into(),
            shape: mask.shape().to_vec(),
            target: src.shape().to_vec(),
        });
    }
    let (pm, om, sm) = (
        mask.data().as_ptr(),
        mask.layout().offset as isize,
        mask.strides()[0],
    );
    // SAFETY: i < n is an element of the validated one-byte mask view.
    let keep = |i: usize| unsafe { *pm.offset(om + i as isize * sm) } != 0;
    let count = (0..n).filter(|&i| keep(i)).count();
    if nd < count {
        return Err(Error::Length {
            operand: "dst".into(),
            len: nd,
            expected: count,
            unit: "elements",
        });
    }
    check_destination(dst, "dst", &[src, mask])?;
    let (ps, os, ss) = (
        src.data().as_ptr(),
        src.layout().offset as isize,
        src.strides()[0],
    );
    let (od, sd) = (dst.layout().offset as isize, dst.strides()[0]);
    let pd = dst.data_mut().as_mut_ptr();
    with_key_map!(src.dtype(), |m| {
        let mut w = 0isize;
        for i in 0..n {
            if keep(i) {
                // SAFETY: i < n and w < count ≤ nd address elements of the
                // validated views; dst overlaps neither operand.
                unsafe { m.copy(ps, os + i as isize * ss, pd, od + w * sd) };
                w += 1;
            }
        }
        Ok(())
    })?;
    Ok(count)
}

/// The elements of the 1-D `src` strictly below `pivot` (a one-element view
/// of `src`'s dtype) in the module's total order, then the others, each
/// group in its order in `src`, bits unchanged, into `dst` (1-D, `src`'s
/// dtype and length); returns how many are below. A NaN pivot puts every
/// non-NaN element below it; a NaN is below nothing.
///
/// # Refusals (before any write)
/// [`Error::Rank`] for `src` or `dst` not 1-D; [`Error::Shape`] for a pivot of
/// more than one element or a `dst` of another length;
/// [`Error::DTypeMismatch`] for a pivot or `dst` of another dtype;
/// [`Error::Layout`] for a `dst` that reaches an element twice or overlaps
/// an operand.
pub fn partition(
    src: &ArrayView<'_>,
    pivot: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<usize> {
    exec.resolve_tier()?;
    let n = one_d("src", src.shape())?;
    let nd = one_d("dst", dst.shape())?;
    for (name, d) in [("pivot", pivot.dtype()), ("dst", dst.dtype())] {
        if d != src.dtype() {
            return Err(Error::DTypeMismatch {
                operand: name.into(),
                expected: src.dtype(),
                got: d,
            });
        }
    }
    if pivot.layout().len() != 1 {
        return Err(Error::Shape {
            operand: "pivot".into(),
            shape: pivot.shape().to_vec(),
            target: vec![1],
        });
    }
    if nd != n {
        return Err(Error::Shape {
            operand: "dst".into(),
            shape: dst.shape().to_vec(),
            target: src.shape().to_vec(),
        });
    }
    check_destination(dst, "dst", &[src, pivot])?;
    let (ps, os, ss) = (
        src.data().as_ptr(),
        src.layout().offset as isize,
        src.strides()[0],
    );
    let (od, sd) = (dst.layout().offset as isize, dst.strides()[0]);
    let pp = pivot.data().as_ptr();
    let op = pivot.layout().offset as isize;
    let pd = dst.data_mut().as_mut_ptr();
    with_key_map!(src.dtype(), |m| Ok(split(
        m, ps, os, ss, n, pp, op, pd, od, sd
    )))
}

#[allow(clippy::too_many_arguments)]
fn split<M: KeyMap>(
    m: &M,
    ps: *const u8,
    os: isize,
    ss: isize,
    n: usize,
    pp: *const u8,
    op: isize,
    pd: *mut u8,
    od: isize,
    sd: isize,
) -> usize {
    // SAFETY: op is the pivot view's one element.
    let kp = unsafe { m.key_at(pp, op) };
    // SAFETY: every i passed is below n, an element of the validated src.
    let key = |i: usize| unsafe { m.key_at(ps, os + i as isize * ss) };
    let below = (0..n).filter(|&i| key(i) < kp).count();
    let (mut lo, mut hi) = (0isize, below as isize);
    for i in 0..n {
        let at = if key(i) < kp {
            lo += 1;
            lo - 1
        } else {
            hi += 1;
            hi - 1
        };
        // SAFETY: at < n = dst's length; dst overlaps no operand.
        unsafe { m.copy(ps, os + i as isize * ss, pd, od + at * sd) };
    }
    below
}
