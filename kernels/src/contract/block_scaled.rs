//! Operands scaled block by block by an array of scales (see
//! [`Blocked`](super::scaled::Blocked)): the elements' values in any dtype,
//! one scale per block of `block` consecutive elements along the last axis.

use super::scaled::Blocked;
use super::{try_collect, try_filled};
use crate::array::{ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::DType;

/// A float accumulator a blocked operand decodes into.
pub(super) trait Real:
    crate::Element + Copy + Default + std::ops::Mul<Output = Self>
{
    /// `x`, which the caller guarantees it holds exactly.
    fn exact(x: f64) -> Self;
    /// NaN.
    const NAN: Self;
}
impl Real for f32 {
    fn exact(x: f64) -> Self {
        x as f32
    }
    const NAN: Self = f32::NAN;
}
impl Real for f64 {
    fn exact(x: f64) -> Self {
        x
    }
    const NAN: Self = f64::NAN;
}

/// The value of a UE8M0 scale code: 2^(e − 127), NaN for 255. Every such
/// power is exact in f32 (2^−127 as a subnormal) and in f64.
fn ue8m0<T: Real>(e: u8) -> T {
    if e == 255 {
        T::NAN
    } else {
        T::exact(2f64.powi(e as i32 - 127))
    }
}

/// Checks a blocked operand (named `name`, `a` or `b`) against its
/// contract: a positive block that divides the last extent, scales of the
/// values' shape with the last extent divided by the block, scales of
/// `f32`/`f64` (values) or `u8`/`e8m0fnu` (UE8M0 codes).
pub(super) fn check(bl: &Blocked<'_>, name: &str) -> Result<()> {
    let shape = bl.values.shape();
    let Some(&last) = shape.last() else {
        return Err(Error::Rank {
            operand: format!("contract: blocked operand {name}"),
            shape: shape.to_vec(),
            expected: "at least one axis (the last holds the blocks)".into(),
        });
    };
    if bl.block == 0 || !last.is_multiple_of(bl.block) {
        return Err(Error::Attribute {
            name: format!("contract: blocked operand {name}'s block"),
            reason: format!(
                "{} does not divide the last extent {last} into whole blocks",
                bl.block
            ),
        });
    }
    let mut target = shape.to_vec();
    if let Some(t) = target.last_mut() {
        *t = last / bl.block;
    }
    if bl.scales.shape() != target.as_slice() {
        return Err(Error::Shape {
            operand: format!("contract: blocked operand {name}'s scales"),
            shape: bl.scales.shape().to_vec(),
            target,
        });
    }
    match bl.scales.dtype() {
        DType::F32 | DType::F64 | DType::U8 | DType::E8m0fnu => Ok(()),
        other => Err(Error::DTypeUnsupported {
            operand: format!("contract: blocked operand {name}'s scales"),
            dtype: other,
            reason: "scales are f32 or f64 values, or u8 (or e8m0fnu) UE8M0 codes".into(),
        }),
    }
}

/// The elements of a checked blocked operand in the accumulator `T`, C
/// order: each value's cast into `T` times its block's scale read into `T`,
/// the product rounded once.
pub(super) fn decode<T: Real>(exec: &Exec, bl: &Blocked<'_>, name: &str) -> Result<Vec<T>> {
    let shape = bl.values.shape();
    let what = format!("contract: blocked operand {name}");
    let count = crate::array::count_of(shape, &what)?;
    let mut v = try_filled(count, T::default(), "a decoded operand")?;
    cast(
        CastMode::Default,
        &bl.values,
        &mut ArrayViewMut::from_slice(&mut v, shape)?,
        exec,
    )?;
    let sshape = bl.scales.shape();
    let blocks = count / bl.block.max(1);
    let scales: Vec<T> = match bl.scales.dtype() {
        DType::F32 | DType::F64 => {
            let mut s = try_filled(blocks, T::default(), "decoded scales")?;
            cast(
                CastMode::Default,
                &bl.scales,
                &mut ArrayViewMut::from_slice(&mut s, sshape)?,
                exec,
            )?;
            s
        }
        _ => {
            // The codes themselves, in C order (an e8m0fnu view read as the
            // bytes it holds).
            let l = bl.scales.layout();
            let codes = ArrayView::new(DType::U8, sshape, &l.strides, l.offset, bl.scales.data())?;
            let mut c = try_filled(blocks, 0u8, "scale codes")?;
            cast(
                CastMode::Default,
                &codes,
                &mut ArrayViewMut::from_slice(&mut c, sshape)?,
                exec,
            )?;
            try_collect(blocks, c.into_iter().map(ue8m0::<T>), "decoded scales")?
        }
    };
    // Blocks run along the last axis, whose extent they divide: element i
    // (C order) is in block i / block.
    for (chunk, &s) in v.chunks_mut(bl.block.max(1)).zip(&scales) {
        for x in chunk {
            *x = *x * s;
        }
    }
    Ok(v)
}
