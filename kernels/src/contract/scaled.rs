//! Contraction with block-scaled operands (MX and NVFP4 formats of
//! `spec/formats.toml`).

use super::{contract, ContractSpec};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::formats;
use crate::tier::Exec;
use crate::{DType, Format};

/// A block-scaled tensor as [`formats::encode`] lays it out: element codes and
/// one scale code per block along the last axis (plus NVFP4's tensor scale).
#[derive(Clone, Copy, Debug)]
pub struct Scaled<'a> {
    /// The format.
    pub format: Format,
    /// The logical shape; blocks run along its last axis.
    pub shape: &'a [usize],
    /// Element codes, C order.
    pub codes: &'a [u8],
    /// Scale codes, one per block, C order.
    pub scales: &'a [u8],
    /// The tensor scale of formats that have one (NVFP4).
    pub tensor_scale: Option<f32>,
}

/// An operand of [`contract_scaled`]: a plain view or a block-scaled tensor.
#[derive(Clone, Debug)]
pub enum Operand<'a> {
    /// Any dtype, any layout: enters the accumulator as a cast does.
    Plain(ArrayView<'a>),
    /// Block-scaled, blocks along its last axis, which must be contracted.
    Scaled(Scaled<'a>),
}

/// Decode a scaled operand into the accumulator: each element times its
/// block's scale (and the tensor scale), exact in f64, rounded once into acc.
fn decoded(exec: &Exec, s: &Scaled<'_>, acc: DType, name: &str) -> Result<Vec<u8>> {
    let count = crate::array::count_of(s.shape, &format!("contract: scaled operand {name}"))?;
    let bytes = count
        .checked_mul(acc.info().item_bytes)
        .ok_or(Error::Overflow {
            operand: format!("contract: scaled operand {name}"),
        })?;
    // The codes must fit the shape before anything is allocated for it.
    let sizes = formats::encoded_sizes(s.format, s.shape)?;
    for (what, len, expected, unit) in [
        ("codes", s.codes.len(), sizes.code_bytes, "bytes"),
        ("scales", s.scales.len(), sizes.blocks, "scales"),
    ] {
        if len != expected {
            return Err(Error::Length {
                operand: format!("contract: scaled operand {name}'s {what}"),
                len,
                expected,
                unit,
            });
        }
    }
    let mut buf = super::try_filled(bytes, 0u8, "a decoded operand")?;
    let mut view = ArrayViewMut::contiguous(acc, s.shape, &mut buf)?;
    formats::decode(s.format, s.codes, s.scales, s.tensor_scale, &mut view, exec)?;
    Ok(buf)
}

/// [`contract`] where `a` and/or `b` may be block-scaled.
///
/// A scaled operand's blocks run along its last axis, which must be one of
/// its contracted axes; each of its elements enters the accumulator as its
/// value times its block's scale (times the tensor scale), computed exactly
/// and rounded once into `acc`, which must be `f32` or `f64`. Everything else
/// is [`contract`]'s contract; each scaled operand adds one unit roundoff of
/// `acc` per term to the bound: γ(K + 1 + s)·(|init| + Σ|a||b|) for `s`
/// scaled operands. Refusals (before any write): a scaled operand whose last
/// axis is not contracted, an accumulator other than `f32`/`f64` with a scaled
/// operand, codes or scales of the wrong size, a missing or unexpected tensor
/// scale, and everything [`contract`] refuses.
pub fn contract_scaled(
    spec: &ContractSpec,
    a: &Operand<'_>,
    b: &Operand<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let exec = *exec;
    for (name, op, side) in [("a", a, 0usize), ("b", b, 1)] {
        if let Operand::Scaled(s) = op {
            if !matches!(spec.acc, DType::F32 | DType::F64) {
                return Err(Error::DTypeUnsupported {
                    operand: "contract: the accumulator".into(),
                    dtype: spec.acc,
                    reason: "a scaled operand needs an f32 or f64 accumulator".into(),
                });
            }
            let last = s.shape.len().checked_sub(1);
            let contracted = spec
                .contracting
                .iter()
                .any(|p| Some(if side == 0 { p.0 } else { p.1 }) == last);
            if !contracted {
                return Err(Error::Axis {
                    operand: format!("contract: scaled operand {name}"),
                    axis: last.unwrap_or(0),
                    reason: "holds its blocks and must be contracted".into(),
                });
            }
        }
    }
    let da = match a {
        Operand::Scaled(s) => decoded(&exec, s, spec.acc, "a")?,
        Operand::Plain(_) => Vec::new(),
    };
    let db = match b {
        Operand::Scaled(s) => decoded(&exec, s, spec.acc, "b")?,
        Operand::Plain(_) => Vec::new(),
    };
    let va = match a {
        Operand::Plain(v) => v.clone(),
        Operand::Scaled(s) => ArrayView::contiguous(spec.acc, s.shape, &da)?,
    };
    let vb = match b {
        Operand::Plain(v) => v.clone(),
        Operand::Scaled(s) => ArrayView::contiguous(spec.acc, s.shape, &db)?,
    };
    contract(spec, &va, &vb, init, dst, &exec)
}
