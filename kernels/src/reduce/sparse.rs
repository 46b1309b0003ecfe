//! One row of a sparse (CSR) matrix times a dense vector.

use super::{reduce, ReduceOp};
use crate::array::{ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::DType;

/// The sparse dot product `Σ_i v[i]·x[idx[i]]` of one CSR row (`v` its
/// values, `idx` their columns, both 1-D of one length) with the 1-D vector
/// `x`, into the 0-d `dst` (any dtype, rounded once as a cast does).
///
/// **Order.** Term i is the product `v[i]·x[idx[i]]` rounded in the dtype
/// (f32 or f64, `v`'s and `x`'s), and the terms are summed as
/// [`crate::reduce()`]'s Sum of them along their one axis: in lane order, so
/// the bits are those of `reduce(Sum)` of the products written out, on every
/// tier and thread count. A column outside `[0, len x)` contributes nothing:
/// its term is −0, the one value that leaves every sum unchanged (so an
/// infinite or NaN value at a stray column does not reach the result).
///
/// **Refusals** (before any write): `v` and `x` not both f32 or both f64, an
/// `idx` that is not i32 or i64, operands that are not 1-D or whose lengths
/// differ, a `dst` that is not 0-d, an unavailable tier, terms that cannot be
/// allocated.
pub fn sparse_dot(
    v: &ArrayView<'_>,
    idx: &ArrayView<'_>,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    exec.resolve_tier()?;
    let dtype = v.dtype();
    if !matches!(dtype, DType::F32 | DType::F64) {
        return Err(Error::DTypeUnsupported {
            operand: "v".into(),
            dtype,
            reason: "sparse_dot takes f32 or f64 values".into(),
        });
    }
    if x.dtype() != dtype {
        return Err(Error::DTypeMismatch {
            operand: "x".into(),
            expected: dtype,
            got: x.dtype(),
        });
    }
    if !matches!(idx.dtype(), DType::I32 | DType::I64) {
        return Err(Error::DTypeUnsupported {
            operand: "idx".into(),
            dtype: idx.dtype(),
            reason: "columns are i32 or i64".into(),
        });
    }
    for (name, a) in [("v", v), ("idx", idx), ("x", x)] {
        if a.shape().len() != 1 {
            return Err(Error::Rank {
                operand: name.into(),
                shape: a.shape().to_vec(),
                expected: "1 axis".into(),
            });
        }
    }
    if idx.shape() != v.shape() {
        return Err(Error::Shape {
            operand: "idx".into(),
            shape: idx.shape().to_vec(),
            target: v.shape().to_vec(),
        });
    }
    if !dst.shape().is_empty() {
        return Err(Error::Shape {
            operand: "destination".into(),
            shape: dst.shape().to_vec(),
            target: vec![],
        });
    }
    let n = v.shape()[0];
    let mut cols: Vec<i64> = crate::alloc::try_filled(n, 0, "sparse_dot columns")?;
    cast(
        CastMode::Default,
        idx,
        &mut ArrayViewMut::from_slice(&mut cols, &[n])?,
        exec,
    )?;
    match dtype {
        DType::F32 => {
            let t = terms::<f32>(v, &cols, x, exec)?;
            reduce(
                ReduceOp::Sum,
                &[0],
                &ArrayView::from_slice(&t, &[n])?,
                dst,
                exec,
            )
        }
        _ => {
            let t = terms::<f64>(v, &cols, x, exec)?;
            reduce(
                ReduceOp::Sum,
                &[0],
                &ArrayView::from_slice(&t, &[n])?,
                dst,
                exec,
            )
        }
    }
}

/// A float of the sparse dot.
trait Term: crate::Element + Copy + Default + std::ops::Mul<Output = Self> {
    const NEG_ZERO: Self;
    fn from_le(b: &[u8]) -> Self;
}
impl Term for f32 {
    const NEG_ZERO: f32 = -0.0;
    fn from_le(b: &[u8]) -> f32 {
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}
impl Term for f64 {
    const NEG_ZERO: f64 = -0.0;
    fn from_le(b: &[u8]) -> f64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        f64::from_le_bytes(w)
    }
}

fn terms<F: Term>(
    v: &ArrayView<'_>,
    cols: &[i64],
    x: &ArrayView<'_>,
    exec: &Exec,
) -> Result<Vec<F>> {
    let n = cols.len();
    let mut t: Vec<F> = crate::alloc::try_zeroed(n, "sparse_dot terms")?;
    cast(
        CastMode::Default,
        v,
        &mut ArrayViewMut::from_slice(&mut t, &[n])?,
        exec,
    )?;
    let len = x.shape()[0] as i64;
    let (stride, offset) = (x.strides()[0], x.layout().offset as isize);
    let item = std::mem::size_of::<F>();
    let data = x.data();
    for (ti, &c) in t.iter_mut().zip(cols) {
        *ti = if (0..len).contains(&c) {
            // A validated view reaches every element in range.
            let at = (offset + c as isize * stride) as usize * item;
            *ti * F::from_le(&data[at..at + item])
        } else {
            F::NEG_ZERO
        };
    }
    Ok(t)
}
