//! Sorted-set [`intersect`] and [`difference`] of u32, u64, i32 and i64.

use super::check_destination;
use super::key::KeyMap;
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::{DType, Exec};

/// The elements of `a` that are also in `b`, in `a`'s order, into the first
/// elements of `dst`; returns how many were written (the rest of `dst` keeps
/// its bits).
///
/// `a` and `b` are 1-D, of one dtype among u32, u64, i32 and i64, sorted
/// ascending and free of duplicates (the caller's promise, not checked; on
/// other inputs the result is that of the same merge walk). `dst` (1-D, the
/// same dtype) must hold min(len a, len b) elements, the most that can be
/// written.
///
/// # Refusals (before any write)
/// [`Error::Rank`] for operands not 1-D; [`Error::DTypeUnsupported`] for other
/// dtypes; [`Error::DTypeMismatch`] for `b` or `dst` of another dtype than
/// `a`; [`Error::Length`] for a `dst` shorter than min(len a, len b);
/// [`Error::Layout`] for a `dst` that reaches an element twice or overlaps an
/// operand.
pub fn intersect(
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<usize> {
    let need = check(a, b, dst, exec, true)?;
    let _ = need;
    walk(a, b, dst, true)
}

/// The elements of `a` that are not in `b`, in `a`'s order, into the first
/// elements of `dst`; returns how many were written (the rest of `dst` keeps
/// its bits). The same promises and dtypes as [`intersect`]; `dst` must hold
/// len a elements. Refusals as [`intersect`].
pub fn difference(
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<usize> {
    check(a, b, dst, exec, false)?;
    walk(a, b, dst, false)
}

fn check(
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
    inter: bool,
) -> Result<usize> {
    exec.resolve_tier()?;
    for (name, s) in [("a", a.shape()), ("b", b.shape()), ("dst", dst.shape())] {
        if s.len() != 1 {
            return Err(Error::Rank {
                operand: name.into(),
                shape: s.to_vec(),
                expected: "sorted sets are 1-D".into(),
            });
        }
    }
    if !matches!(a.dtype(), DType::U32 | DType::U64 | DType::I32 | DType::I64) {
        return Err(Error::DTypeUnsupported {
            operand: "a".into(),
            dtype: a.dtype(),
            reason: "sorted sets take u32, u64, i32 and i64".into(),
        });
    }
    for (name, d) in [("b", b.dtype()), ("dst", dst.dtype())] {
        if d != a.dtype() {
            return Err(Error::DTypeMismatch {
                operand: name.into(),
                expected: a.dtype(),
                got: d,
            });
        }
    }
    let (na, nb) = (a.shape()[0], b.shape()[0]);
    let need = if inter { na.min(nb) } else { na };
    if dst.shape()[0] < need {
        return Err(Error::Length {
            operand: "dst".into(),
            len: dst.shape()[0],
            expected: need,
            unit: "elements",
        });
    }
    check_destination(dst, "dst", &[a, b])?;
    Ok(need)
}

fn walk(
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    inter: bool,
) -> Result<usize> {
    with_key_map!(a.dtype(), |m| Ok(merge(m, a, b, dst, inter)))
}

fn merge<M: KeyMap>(
    m: &M,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    inter: bool,
) -> usize {
    let (na, nb) = (a.shape()[0], b.shape()[0]);
    let (pa, oa, sa) = (
        a.data().as_ptr(),
        a.layout().offset as isize,
        a.strides()[0],
    );
    let (pb, ob, sb) = (
        b.data().as_ptr(),
        b.layout().offset as isize,
        b.strides()[0],
    );
    let (od, sd) = (dst.layout().offset as isize, dst.strides()[0]);
    let pd = dst.data_mut().as_mut_ptr();
    // SAFETY: every i passed is below na, an element of the validated a.
    let ka = |i: usize| unsafe { m.key_at(pa, oa + i as isize * sa) };
    // SAFETY: every j passed is below nb, an element of the validated b.
    let kb = |j: usize| unsafe { m.key_at(pb, ob + j as isize * sb) };
    let (mut i, mut j, mut w) = (0usize, 0usize, 0usize);
    while i < na {
        let x = ka(i);
        // Skip b's smaller elements, galloping where b runs far ahead.
        let mut step = 1;
        while j + step < nb && kb(j + step) < x {
            j += step;
            step *= 2;
        }
        while j < nb && kb(j) < x {
            j += 1;
        }
        let found = j < nb && kb(j) == x;
        if found == inter {
            // SAFETY: w < the checked destination length; i < na.
            unsafe { m.copy(pa, oa + i as isize * sa, pd, od + w as isize * sd) };
            w += 1;
        }
        i += 1;
    }
    w
}
