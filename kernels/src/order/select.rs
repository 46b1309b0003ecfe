//! Order statistics along an axis: [`median`] and [`quantile`].

use super::{check_axis, check_destination, slice_bases};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::{cast, CastMode, DType, Exec};

/// The median of each slice of `x` along `axis`, into `dst` (f64, `x`'s shape
/// without `axis`).
///
/// Elements are decoded exactly to f64 (an i64 or u64 beyond 2^53 rounds to
/// nearest, which keeps the order) and ordered by the module's total order.
/// With n elements sorted a₀ ≤ … ≤ aₙ₋₁, the median is a₍ₙ₋₁₎/₂ for odd n and
/// (aₙ/₂₋₁ + aₙ/₂) / 2 in f64 for even n (numpy's `median`, computed in f64).
/// A slice holding a NaN gives NaN (as numpy does), an empty slice NaN.
///
/// # Refusals (before any write)
/// [`Error::Rank`], [`Error::Axis`] as [`super::sort`];
/// [`Error::DTypeUnsupported`] for complex `x`; [`Error::DTypeMismatch`] for
/// `dst` not f64; [`Error::Shape`] for `dst`'s shape; [`Error::Layout`] for a
/// `dst` that reaches an element twice or overlaps `x`; [`Error::Alloc`].
pub fn median(
    axis: usize,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    stat(axis, x, dst, exec, |a| {
        let n = a.len();
        let m = (n - 1) / 2;
        let (_, &mut lo, rest) = a.select_nth_unstable_by(m, f64::total_cmp);
        if n % 2 == 1 {
            lo
        } else {
            let hi = rest.iter().copied().fold(f64::INFINITY, f64::min);
            (lo + hi) / 2.0
        }
    })
}

/// The `q`-quantile of each slice of `x` along `axis` by linear
/// interpolation (numpy's default method, `linear`), into `dst` (f64, `x`'s
/// shape without `axis`).
///
/// With n elements sorted a₀ ≤ … ≤ aₙ₋₁ in the module's total order (decoded
/// exactly to f64, as [`median`]): h = q·(n − 1), i = ⌊h⌋, t = h − i,
/// a = aᵢ, b = aₘᵢₙ₍ᵢ₊₁,ₙ₋₁₎; the result is a + (b − a)·t for t < 0.5 and
/// b − (b − a)·(1 − t) otherwise, each operation rounded in f64 (numpy's
/// `_lerp`, so q = 0 and q = 1 give the extremes exactly). A slice holding
/// a NaN gives NaN, an empty slice NaN.
///
/// # Refusals (before any write)
/// [`Error::Attribute`] for q outside [0, 1] or NaN; the rest as [`median`].
pub fn quantile(
    q: f64,
    axis: usize,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    if !(0.0..=1.0).contains(&q) {
        return Err(Error::Attribute {
            name: "quantile q".into(),
            reason: format!("must be in [0, 1], not {q}"),
        });
    }
    stat(axis, x, dst, exec, |a| {
        let n = a.len();
        let h = q * (n - 1) as f64;
        let i = (h.floor() as usize).min(n - 1);
        let t = h - i as f64;
        let (_, &mut lo, rest) = a.select_nth_unstable_by(i, f64::total_cmp);
        let hi = if i + 1 < n {
            rest.iter().copied().fold(f64::INFINITY, f64::min)
        } else {
            lo
        };
        let diff = hi - lo;
        if t < 0.5 {
            lo + diff * t
        } else {
            hi - diff * (1.0 - t)
        }
    })
}

fn stat(
    axis: usize,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
    f: impl Fn(&mut [f64]) -> f64,
) -> Result<()> {
    exec.resolve_tier()?;
    check_axis(x, axis, "median/quantile")?;
    if x.dtype().info().class == crate::Class::Complex {
        return Err(Error::DTypeUnsupported {
            operand: "x".into(),
            dtype: x.dtype(),
            reason: "order statistics take real dtypes".into(),
        });
    }
    if dst.dtype() != DType::F64 {
        return Err(Error::DTypeMismatch {
            operand: "dst".into(),
            expected: DType::F64,
            got: dst.dtype(),
        });
    }
    let mut want = x.shape().to_vec();
    want.remove(axis);
    if dst.shape() != want.as_slice() {
        return Err(Error::Shape {
            operand: "dst".into(),
            shape: dst.shape().to_vec(),
            target: want,
        });
    }
    check_destination(dst, "dst", &[x])?;
    let total = x.layout().len();
    let n = x.shape()[axis];
    // The elements decoded to f64, in C order (exact: cast is exact into f64
    // for every real dtype but 64-bit integers, which round monotonically).
    let mut vals: Vec<f64> = crate::alloc::try_filled(total, 0.0, "decoded elements")?;
    let mut lane: Vec<f64> = crate::alloc::try_vec(n, "a slice")?;
    let dl = dst.layout().clone();
    let mut dshape = dl.shape.clone();
    dshape.push(1);
    let mut dstrides = dl.strides.clone();
    dstrides.push(0);
    let out = slice_bases(&dshape, &dstrides, dl.offset, dshape.len() - 1)?;
    if out.is_empty() {
        return Ok(());
    }
    if total > 0 {
        let shape = x.shape().to_vec();
        let mut decoded = ArrayViewMut::from_slice(&mut vals, &shape)?;
        cast(CastMode::Default, x, &mut decoded, exec)?;
    }
    let shape = x.shape();
    let strides = crate::array::c_strides(shape);
    let bases = slice_bases(shape, &strides, 0, axis)?;
    let step = strides[axis];
    let data = dst.data_mut();
    for (o, &pos) in out.iter().enumerate() {
        let r = if n == 0 {
            f64::NAN
        } else {
            let b = bases[o];
            lane.clear();
            lane.extend((0..n).map(|i| vals[(b + i as isize * step) as usize]));
            if lane.iter().any(|v| v.is_nan()) {
                f64::NAN
            } else {
                f(&mut lane)
            }
        };
        let at = pos as usize * 8;
        data[at..at + 8].copy_from_slice(&r.to_le_bytes());
    }
    Ok(())
}
