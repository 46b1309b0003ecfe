//! The stated error bound of a lane-order sum, as a number a caller can use.

use crate::error::{Error, Result};
use crate::{Class, DType};

/// The unit roundoff of a float dtype (half the distance from 1 to the next
/// value), or of a pair's part squared over two for the pair dtypes.
fn unit_roundoff(d: DType) -> Option<f64> {
    match d {
        DType::Df32 => Some(f64::powi(2.0, -48)),
        DType::Dd64 => Some(f64::powi(2.0, -106)),
        DType::C64 => Some(f64::powi(2.0, -24)),
        DType::C128 => Some(f64::powi(2.0, -53)),
        _ => {
            let info = d.info();
            match (info.class, info.float) {
                (Class::Float, Some(f)) => Some(f.epsilon / 2.0),
                _ => None,
            }
        }
    }
}

/// γ(k) = k·u / (1 − k·u), infinite where k·u ≥ 1.
fn gamma(k: f64, u: f64) -> f64 {
    let ku = k * u;
    if ku >= 1.0 {
        f64::INFINITY
    } else {
        ku / (1.0 - ku)
    }
}

/// The number of roundings on a term's way through the lane order of `n`
/// terms (ARCHITECTURE.md §5.3): ⌈min(n, 1024)/16⌉ in its lane, 4 in the
/// fold of the 16 lanes, ⌈log₂ B⌉ in the tree of the B blocks.
fn lane_roundings(n: usize) -> f64 {
    let blocks = n.div_ceil(1024);
    let tree = if blocks <= 1 {
        0
    } else {
        usize::BITS - (blocks - 1).leading_zeros()
    };
    (n.min(1024).div_ceil(16) + 4) as f64 + tree as f64
}

/// A bound β on the error of a lane-order sum (§5.3: [`ReduceOp::Sum`]
/// and [`ReduceOp::Sum2`](super::ReduceOp::Sum2) of `reduce`, and the
/// lane-order depth sums of the contractions) of `n` terms accumulated in
/// `acc` and rounded once into `dtype`:
///
/// ```text
/// |result − Σ xᵢ| ≤ β · Σ |xᵢ|
/// ```
///
/// * a float accumulator (`f32`, `f64`; `c64`, `c128` per component):
///   β = γ(r) + u_d·(1 + γ(r)), with γ(r) = r·u/(1 − r·u) of the
///   accumulator's unit roundoff u, r = ⌈min(n, 1024)/16⌉ + 4 + ⌈log₂ B⌉
///   for B = ⌈n/1024⌉ blocks, and u_d the unit roundoff of `dtype` where it
///   is coarser than the accumulator's (0 where the rounding into `dtype` is
///   exact);
/// * a pair accumulator (`df32`, `dd64`, the compensated sums):
///   β = 2γ(r + 1)² of the part's unit roundoff, plus u_d of `dtype`
///   (the compensated result rounds once, relative to |Σ xᵢ| ≤ Σ|xᵢ|);
/// * an integer accumulator: 0 (integer sums are exact modulo 2^w; a
///   wrapped sum is not covered);
///
/// 0 for n ≤ 1 in every case but the rounding into `dtype`; ∞ where r·u
/// reaches 1.
///
/// # Errors
/// [`Error::DTypeUnsupported`] for an `acc` that no sum accumulates in
/// (bool, the narrow floats, f16, bf16) or a `dtype` without a numeric
/// value (bool).
///
/// [`ReduceOp::Sum`]: super::ReduceOp::Sum
pub fn accumulation_error_bound(dtype: DType, acc: DType, n: usize) -> Result<f64> {
    let acc_class = acc.info().class;
    let accepted = matches!(
        acc,
        DType::F32 | DType::F64 | DType::C64 | DType::C128 | DType::Df32 | DType::Dd64
    ) || (matches!(acc_class, Class::Int | Class::Uint) && acc.info().bits >= 8);
    if !accepted {
        return Err(Error::DTypeUnsupported {
            operand: "acc".into(),
            dtype: acc,
            reason: "sums accumulate in f32, f64, c64, c128, df32, dd64 or an integer of 8 \
                     bits or more"
                .into(),
        });
    }
    if dtype.info().class == Class::Bool {
        return Err(Error::DTypeUnsupported {
            operand: "dtype".into(),
            dtype,
            reason: "a sum's result has a numeric dtype".into(),
        });
    }
    if matches!(acc_class, Class::Int | Class::Uint) {
        return Ok(0.0);
    }
    let u = unit_roundoff(acc).unwrap_or(0.0);
    // The rounding into the result's dtype: exact where that dtype is at
    // least as fine as the accumulator (integers: counted as exact).
    let u_d = unit_roundoff(dtype).filter(|&ud| ud > u).unwrap_or(0.0);
    let r = if n <= 1 { 0.0 } else { lane_roundings(n) };
    let part_u = match acc {
        DType::Df32 => f64::powi(2.0, -24),
        DType::Dd64 => f64::powi(2.0, -53),
        _ => u,
    };
    let beta = match acc {
        DType::Df32 | DType::Dd64 if n > 1 => {
            let g = gamma(r + 1.0, part_u);
            2.0 * g * g + u_d
        }
        DType::Df32 | DType::Dd64 => u_d,
        _ => {
            let g = if n <= 1 { 0.0 } else { gamma(r, u) };
            g + u_d * (1.0 + g)
        }
    };
    Ok(beta)
}
