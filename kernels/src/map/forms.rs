//! Stable forms of population quantities as ready-made `map` programs:
//! written with `expm1` and `exp` so that nothing cancels where a rate X is
//! small or a probability p is close to 1. Inputs: x0 = p, x1 = X, both of
//! `dtype` (a float dtype); one output of `dtype`.
//!
//! - [`hit_probability`]: `p + (1 − p)·(−expm1(−X))`, the probability of at
//!   least one event given a prior p and an integrated rate X (never the
//!   cancelling `1 − (1 − p)·exp(−X)`);
//! - [`survival`]: `(1 − p)·exp(−X)`.
//!
//! For 0 ≤ p ≤ 1 and X ≥ 0 in f32 each is within 6u (hit probability) and
//! 4u (survival) relative of the exact value, u = 2^-24: one rounding of
//! 1 − p, expm1/exp within 1 ulp, one rounding of the product and of the
//! sum (tested against binary64 evaluation rounded once,
//! `kernels/tests/doubling.rs`).

use super::{Program, ProgramBuilder};
use crate::error::Result;
use crate::{DType, Kind};

/// `y0 = x0 + (1 − x0)·(−expm1(−x1))`.
pub fn hit_probability(dtype: DType) -> Result<Program> {
    let mut b = ProgramBuilder::with_inputs(&[dtype, dtype]);
    let p = b.load(0, dtype)?;
    let x = b.load(1, dtype)?;
    let one = b.constant(1.0, dtype)?;
    let q = b.apply(Kind::Sub, &[one, p])?;
    let nx = b.apply(Kind::Neg, &[x])?;
    let m = b.apply(Kind::Expm1, &[nx])?;
    let e = b.apply(Kind::Neg, &[m])?;
    let t = b.apply(Kind::Mul, &[q, e])?;
    let y = b.apply(Kind::Add, &[p, t])?;
    b.output(y)?;
    b.build()
}

/// `y0 = (1 − x0)·exp(−x1)`.
pub fn survival(dtype: DType) -> Result<Program> {
    let mut b = ProgramBuilder::with_inputs(&[dtype, dtype]);
    let p = b.load(0, dtype)?;
    let x = b.load(1, dtype)?;
    let one = b.constant(1.0, dtype)?;
    let q = b.apply(Kind::Sub, &[one, p])?;
    let nx = b.apply(Kind::Neg, &[x])?;
    let e = b.apply(Kind::Exp, &[nx])?;
    let y = b.apply(Kind::Mul, &[q, e])?;
    b.output(y)?;
    b.build()
}
