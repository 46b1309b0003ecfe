//! The elementwise engine: runs one generated kernel over operands of any
//! layout, broadcasting inputs to the destination's shape.
//!
//! The engine validates everything first (kind and dtype, arity, dtypes, shapes,
//! layouts), then merges axes that are contiguous in every operand, and hands
//! each innermost run to the best loop variant of the kernel: `contig` when every
//! operand has unit stride, `bcastK` when input K alone is a broadcast scalar,
//! `strided` otherwise. Sub-byte operands are unpacked into small tiles, computed
//! with the contiguous kernel and packed back. Every path gives the same bits:
//! an elementwise result depends on its inputs' values alone.

pub(crate) mod plan;
mod tile;

use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{kernel_index, Class, DType, Kind, OperandRule, ResultRule, Variant};
use plan::Plan;

/// Elements below which a call stays on the calling thread.
pub(crate) const PARALLEL_MIN: usize = 1 << 18;

/// The dtype of a call's inputs (the value inputs for `select`).
pub fn call_dtype(kind: Kind, inputs: &[DType]) -> Result<DType> {
    let info = kind.info();
    if inputs.len() != info.arity {
        return Err(Error::Arity {
            kind,
            expected: info.arity,
            got: inputs.len(),
        });
    }
    let lead = match info.operands {
        OperandRule::Same => 0,
        OperandRule::CondFirst => 1,
    };
    let dtype = inputs[lead];
    for (i, &d) in inputs.iter().enumerate() {
        let want = if i == 0 && info.operands == OperandRule::CondFirst {
            DType::Bool
        } else {
            dtype
        };
        if d != want {
            return Err(Error::DTypeMismatch {
                operand: format!("input {i}"),
                expected: want,
                got: d,
            });
        }
    }
    if kernel_index(kind, dtype, Variant::Strided).is_none() {
        return Err(Error::Unsupported { kind, dtype });
    }
    Ok(dtype)
}

/// The dtype a kind produces from inputs of `dtype`.
pub fn result_dtype(kind: Kind, dtype: DType) -> Result<DType> {
    if kernel_index(kind, dtype, Variant::Strided).is_none() {
        return Err(Error::Unsupported { kind, dtype });
    }
    Ok(match kind.info().result {
        ResultRule::Same => dtype,
        ResultRule::Bool => DType::Bool,
        ResultRule::Real if dtype.info().class == Class::Complex => {
            if dtype.info().bits == 64 {
                DType::F32
            } else {
                DType::F64
            }
        }
        ResultRule::Real => dtype,
    })
}

/// The shape `shapes` broadcast to (numpy's rules), or None.
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Option<Vec<usize>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        for (i, &n) in s.iter().enumerate() {
            let o = &mut out[rank - s.len() + i];
            if *o == 1 {
                *o = n;
            } else if n != 1 && n != *o {
                return None;
            }
        }
    }
    Some(out)
}

/// Why a destination could reach one element twice, if it could: its axes of
/// more than one element, by increasing stride magnitude, must each step past
/// everything the smaller ones span. (This sufficient rule refuses every zero
/// stride and every interleaving; a write to one element from two places
/// would make the result depend on which lands last, and with threads on
/// timing.)
pub(crate) fn self_overlap(shape: &[usize], strides: &[isize]) -> Option<String> {
    let mut axes: Vec<(u128, usize, usize)> = shape
        .iter()
        .zip(strides)
        .enumerate()
        .filter(|(_, (&n, _))| n > 1)
        .map(|(i, (&n, &s))| (s.unsigned_abs() as u128, n, i))
        .collect();
    axes.sort_unstable();
    let mut span: u128 = 0;
    for (s, n, i) in axes {
        if s <= span {
            return Some(format!(
                "axis {i} (stride {}) reaches elements the other axes also reach: \
                 a destination must address each element once",
                strides[i]
            ));
        }
        span += (n as u128 - 1) * s;
    }
    None
}

/// Run `kind` on `inputs` into `out` on the active tier.
///
/// Inputs broadcast to `out`'s shape; `out` must have the kind's result dtype
/// ([`result_dtype`]). Refusals ([`Error`]) happen before any write.
pub fn elementwise(kind: Kind, inputs: &[ArrayView<'_>], out: &mut ArrayViewMut<'_>) -> Result<()> {
    elementwise_with(&Exec::default(), kind, inputs, out)
}

/// [`elementwise`] with an explicit tier and thread count.
pub fn elementwise_with(
    exec: &Exec,
    kind: Kind,
    inputs: &[ArrayView<'_>],
    out: &mut ArrayViewMut<'_>,
) -> Result<()> {
    let tier = exec.resolve_tier()?;
    let dtypes: Vec<DType> = inputs.iter().map(|a| a.dtype()).collect();
    let dtype = call_dtype(kind, &dtypes)?;
    let want = result_dtype(kind, dtype)?;
    if out.dtype() != want {
        return Err(Error::DTypeMismatch {
            operand: "destination".into(),
            expected: want,
            got: out.dtype(),
        });
    }
    for (i, a) in inputs.iter().enumerate() {
        if broadcast_shapes(&[a.shape(), out.shape()]).as_deref() != Some(out.shape()) {
            return Err(Error::Shape {
                operand: format!("input {i}"),
                shape: a.shape().to_vec(),
                target: out.shape().to_vec(),
            });
        }
    }
    let table = tier.table().ok_or(Error::TierUnavailable(tier))?;
    if out.layout().is_empty() {
        return Ok(());
    }
    if let Some(reason) = self_overlap(out.shape(), out.strides()) {
        return Err(Error::Layout {
            operand: "destination".into(),
            reason,
        });
    }
    let plan = Plan::new(inputs, out);
    let threads = if plan.total() >= PARALLEL_MIN {
        exec.thread_count()
    } else {
        1
    };
    // SAFETY: every operand was validated against its bytes (views validate on
    // construction), shapes broadcast to the destination's, and the plan only
    // visits positions inside the destination's shape; the destination is a
    // unique borrow, so it overlaps no input.
    unsafe { plan.run(&|v| kernel_index(kind, dtype, v).map(|i| table[i]), threads) };
    Ok(())
}
