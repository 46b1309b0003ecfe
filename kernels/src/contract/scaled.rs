//! Contraction with block-scaled operands: the MX and NVFP4 formats of
//! `spec/formats.toml` ([`Scaled`]), and values of any dtype with an array of
//! scales, one per block ([`Blocked`]).

use super::{block_scaled, contract, ContractSpec};
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

/// Values of any dtype scaled block by block by an array of scales: the
/// blocks are runs of `block` consecutive elements along the last axis
/// (which the operand must contract), one scale each.
///
/// Element `[.., j]` belongs to block `[.., j / block]`, so `scales` has the
/// shape of `values` with the last extent divided by `block`. The scales are
/// either values (`f32` or `f64`), each entering the accumulator as a cast
/// does, or UE8M0 codes (`u8`, or `e8m0fnu` read as its codes): a code `e`
/// is the scale 2^(e − 127), and 255 is NaN. An MX operand is its element
/// codes as `values` (e.g. `e4m3fn`) with its scale codes as `scales` and a
/// block of 32.
#[derive(Clone, Debug)]
pub struct Blocked<'a> {
    /// The elements, any dtype and layout.
    pub values: ArrayView<'a>,
    /// One scale per block, any layout.
    pub scales: ArrayView<'a>,
    /// Elements per block along the last axis (positive, dividing its extent).
    pub block: usize,
}

/// An operand of [`contract_scaled`]: a plain view or a block-scaled tensor.
#[derive(Clone, Debug)]
pub enum Operand<'a> {
    /// Any dtype, any layout: enters the accumulator as a cast does.
    Plain(ArrayView<'a>),
    /// Block-scaled, blocks along its last axis, which must be contracted.
    Scaled(Scaled<'a>),
    /// Values with an array of block scales, blocks along its last axis,
    /// which must be contracted.
    Blocked(Blocked<'a>),
}

/// An operand as [`contract`] takes it: a plain view, or a scaled one
/// decoded into the accumulator (C order of the shape).
enum Decoded<'a> {
    Plain(ArrayView<'a>),
    Bytes(Vec<u8>, &'a [usize]),
    F32(Vec<f32>, &'a [usize]),
    F64(Vec<f64>, &'a [usize]),
}

impl Decoded<'_> {
    fn view(&self, acc: DType) -> Result<ArrayView<'_>> {
        match self {
            Decoded::Plain(v) => Ok(v.clone()),
            Decoded::Bytes(bytes, shape) => ArrayView::contiguous(acc, shape, bytes),
            Decoded::F32(v, shape) => ArrayView::from_slice(v, shape),
            Decoded::F64(v, shape) => ArrayView::from_slice(v, shape),
        }
    }
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
/// and rounded once into `acc`, which must be `f32` or `f64`. A
/// [`Blocked`] operand's element enters as its cast into `acc` times its
/// block's scale read into `acc` (a value's cast; 2^(e − 127) of a code e,
/// NaN of 255), the product rounded once in `acc` (where the element and
/// the scale are exact in `acc`, as an MX operand's are, this is the exact
/// product rounded once, so an MX operand given either way has the same
/// bits). Everything else
/// is [`contract`]'s contract; each scaled operand adds one unit roundoff of
/// `acc` per term to the bound: γ(K + 1 + s)·(|init| + Σ|a||b|) for `s`
/// scaled operands. Refusals (before any write): a scaled operand whose last
/// axis is not contracted, an accumulator other than `f32`/`f64` with a scaled
/// operand, codes or scales of the wrong size, a missing or unexpected tensor
/// scale, a [`Blocked`] operand's block of 0 or not dividing its last
/// extent, scales of another shape than the blocks' or of a dtype other
/// than `f32`, `f64`, `u8` and `e8m0fnu`, and everything [`contract`]
/// refuses.
pub fn contract_scaled<'a>(
    spec: &ContractSpec,
    a: &'a Operand<'a>,
    b: &'a Operand<'a>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let exec = *exec;
    for (name, op, side) in [("a", a, 0usize), ("b", b, 1)] {
        let shape = match op {
            Operand::Plain(_) => None,
            Operand::Scaled(s) => Some(s.shape),
            Operand::Blocked(bl) => Some(bl.values.shape()),
        };
        if let Some(shape) = shape {
            if !matches!(spec.acc, DType::F32 | DType::F64) {
                return Err(Error::DTypeUnsupported {
                    operand: "contract: the accumulator".into(),
                    dtype: spec.acc,
                    reason: "a scaled operand needs an f32 or f64 accumulator".into(),
                });
            }
            let last = shape.len().checked_sub(1);
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
    // Every blocked operand is checked before either is decoded.
    for (name, op) in [("a", a), ("b", b)] {
        if let Operand::Blocked(bl) = op {
            block_scaled::check(bl, name)?;
        }
    }
    let decode = |op: &'a Operand<'a>, name: &str| -> Result<Decoded<'a>> {
        Ok(match op {
            Operand::Plain(v) => Decoded::Plain(v.clone()),
            Operand::Scaled(s) => Decoded::Bytes(decoded(&exec, s, spec.acc, name)?, s.shape),
            Operand::Blocked(bl) if spec.acc == DType::F32 => Decoded::F32(
                block_scaled::decode::<f32>(&exec, bl, name)?,
                bl.values.shape(),
            ),
            Operand::Blocked(bl) => Decoded::F64(
                block_scaled::decode::<f64>(&exec, bl, name)?,
                bl.values.shape(),
            ),
        })
    };
    let (da, db) = (decode(a, "a")?, decode(b, "b")?);
    let (va, vb) = (da.view(spec.acc)?, db.view(spec.acc)?);
    contract(spec, &va, &vb, init, dst, &exec)
}
