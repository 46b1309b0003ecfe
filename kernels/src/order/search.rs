//! Batch binary search: [`lower_bound`].

use super::key::KeyMap;
use super::{check_destination, slice_bases};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::{DType, Exec};

/// For each element of `q`, the number of elements of the sorted 1-D `a`
/// strictly below it in the module's total order, as i64 into `dst` (`q`'s
/// shape): the index `std::lower_bound` returns. A NaN query counts every
/// non-NaN element (NaNs are equal, not below).
///
/// `a` must be sorted ascending in that order (as [`super::sort`] leaves
/// it); this is not checked (it would cost as much as the search). On an
/// unsorted `a` the counts are those of the same binary search: a function of
/// the values, but not the number of smaller elements.
///
/// # Refusals (before any write)
/// [`Error::Rank`] for `a` not of rank 1; [`Error::DTypeMismatch`] for `q` of
/// another dtype than `a` or `dst` not i64; [`Error::Shape`] for `dst`'s
/// shape other than `q`'s; [`Error::Layout`] for a `dst` that reaches an
/// element twice or overlaps an operand; [`Error::Alloc`].
pub fn lower_bound(
    a: &ArrayView<'_>,
    q: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    exec.resolve_tier()?;
    if a.shape().len() != 1 {
        return Err(Error::Rank {
            operand: "a".into(),
            shape: a.shape().to_vec(),
            expected: "lower_bound searches a 1-D array".into(),
        });
    }
    if q.dtype() != a.dtype() {
        return Err(Error::DTypeMismatch {
            operand: "q".into(),
            expected: a.dtype(),
            got: q.dtype(),
        });
    }
    if dst.dtype() != DType::I64 {
        return Err(Error::DTypeMismatch {
            operand: "dst".into(),
            expected: DType::I64,
            got: dst.dtype(),
        });
    }
    if dst.shape() != q.shape() {
        return Err(Error::Shape {
            operand: "dst".into(),
            shape: dst.shape().to_vec(),
            target: q.shape().to_vec(),
        });
    }
    check_destination(dst, "dst", &[a, q])?;
    let qs = all_positions(q.shape(), q.strides(), q.layout().offset)?;
    let ds = all_positions(dst.shape(), dst.strides(), dst.layout().offset)?;
    let n = a.shape()[0];
    let (ab, astep) = (a.layout().offset as isize, a.strides()[0]);
    with_key_map!(a.dtype(), |m| {
        let mut keys = crate::alloc::try_vec(n, "search keys")?;
        // SAFETY: i < n is an element of the validated view a.
        keys.extend(
            (0..n).map(|i| unsafe { m.key_at(a.data().as_ptr(), ab + i as isize * astep) }),
        );
        search(m, &keys, q.data().as_ptr(), &qs, dst, &ds);
        Ok(())
    })
}

fn search<M: KeyMap>(
    m: &M,
    keys: &[M::K],
    q: *const u8,
    qs: &[isize],
    dst: &mut ArrayViewMut<'_>,
    ds: &[isize],
) {
    let out = dst.data_mut();
    for (&qp, &dp) in qs.iter().zip(ds) {
        // SAFETY: qp is an element of the validated view q.
        let kq = unsafe { m.key_at(q, qp) };
        let c = keys.partition_point(|&k| k < kq) as i64;
        let at = dp as usize * 8;
        out[at..at + 8].copy_from_slice(&c.to_le_bytes());
    }
}

/// Every element position of a view, in C order.
pub(crate) fn all_positions(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
) -> Result<Vec<isize>> {
    let mut s = shape.to_vec();
    s.push(1);
    let mut st = strides.to_vec();
    st.push(0);
    slice_bases(&s, &st, offset, shape.len())
}
