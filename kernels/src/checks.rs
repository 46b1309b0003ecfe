//! The checks every engine makes before any write, the one home of each: a
//! destination that reaches an element twice or overlaps an operand, axes
//! out of range, named twice or out of order, and the refusal of a shape.
//! Each refuses with the typed [`Error`] the API rule names
//! (ARCHITECTURE.md §4).

use crate::array::{extent_product, ArrayView, ArrayViewMut};
use crate::elementwise::self_overlap;
use crate::error::{Error, Result};

/// Refuse a destination that reaches one element twice (see
/// [`self_overlap`]), as [`Error::Layout`] naming "destination": the
/// check every call makes of its destinations, for callers that must know
/// before a call whether its destination will be taken.
pub fn check_destination(dst: &ArrayViewMut<'_>) -> Result<()> {
    match self_overlap(dst.shape(), dst.strides()) {
        Some(reason) => Err(Error::Layout {
            operand: "destination".into(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Whether two byte slices share a byte.
pub(crate) fn overlaps(a: &[u8], b: &[u8]) -> bool {
    let span = |s: &[u8]| {
        let p = s.as_ptr() as usize;
        p..p + s.len()
    };
    let (a, b) = (span(a), span(b));
    !a.is_empty() && !b.is_empty() && a.start < b.end && b.start < a.end
}

/// [`Error::Layout`] naming `name` where `dst` reaches an element twice or
/// its bytes overlap one of `inputs`' (a destination that holds elements).
pub(crate) fn check_destination_of(
    dst: &ArrayViewMut<'_>,
    name: &str,
    inputs: &[&ArrayView<'_>],
) -> Result<()> {
    if let Some(reason) = self_overlap(dst.shape(), dst.strides()) {
        return Err(Error::Layout {
            operand: name.into(),
            reason,
        });
    }
    for x in inputs {
        if extent_product(dst.shape().iter().copied()) > 0
            && !x.layout().is_empty()
            && overlaps(dst.view().data(), x.data())
        {
            return Err(Error::Layout {
                operand: name.into(),
                reason: "its bytes overlap an operand's".into(),
            });
        }
    }
    Ok(())
}

/// Refuse an axis at or past `rank` ([`Error::Axis`] naming `operand`).
pub(crate) fn check_axis(axis: usize, rank: usize, operand: &str) -> Result<()> {
    if axis >= rank {
        return Err(Error::Axis {
            operand: operand.into(),
            axis,
            reason: format!("is out of range for rank {rank}"),
        });
    }
    Ok(())
}

/// `axes` sorted, refusing one named twice or at or past `rank`
/// ([`Error::Axis`] naming "axes"): the axes of a reduction, in any order.
pub(crate) fn distinct_axes(axes: &[usize], rank: usize) -> Result<Vec<usize>> {
    let mut v = axes.to_vec();
    v.sort_unstable();
    for w in v.windows(2) {
        if w[0] == w[1] {
            return Err(Error::Axis {
                operand: "axes".into(),
                axis: w[0],
                reason: "is named twice".into(),
            });
        }
    }
    if let Some(&a) = v.iter().find(|&&a| a >= rank) {
        return Err(Error::Axis {
            operand: "axes".into(),
            axis: a,
            reason: format!("is out of range for an operand of rank {rank}"),
        });
    }
    Ok(v)
}

/// Refuse `axes` of `call` that are empty or not strictly increasing
/// ([`Error::Attribute`]), or that reach `rank` ([`Error::Axis`] naming
/// "x"): the axes of a transform, in the order they are taken.
pub(crate) fn increasing_axes(axes: &[usize], rank: usize, call: &str) -> Result<()> {
    if axes.is_empty() {
        return Err(Error::Attribute {
            name: format!("{call} axes"),
            reason: "no axis named: name at least one".into(),
        });
    }
    if axes.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::Attribute {
            name: format!("{call} axes"),
            reason: format!("{axes:?} are not strictly increasing"),
        });
    }
    match axes.iter().find(|&&a| a >= rank) {
        Some(&a) => check_axis(a, rank, "x"),
        None => Ok(()),
    }
}

/// The refusal of `operand`'s `shape` where `target` was needed.
pub(crate) fn shape_err(operand: &str, shape: &[usize], target: &[usize]) -> Error {
    Error::Shape {
        operand: operand.into(),
        shape: shape.to_vec(),
        target: target.to_vec(),
    }
}
