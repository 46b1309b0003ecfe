//! The transcendental functions of the elementwise kinds, on `f32` and `f64`.
//!
//! Every function here is written once, on one element, from IEEE operations
//! alone: `+ - * /`, `mul_add` (one rounding), `sqrt`, comparisons, selects and
//! bit manipulation. It calls no platform maths library. Each tier compiles the
//! same source (the vector tiers inside `#[target_feature]` kernels, where the
//! compiler turns the element loop into vector lanes), and Rust never contracts,
//! reassociates or flushes, so every tier executes the same operations on every
//! element and gives the same bits. The element type (`f32`, `f64`) is the lane
//! trait of DESIGN §5.2: its operations are exactly the vector lane's.
//!
//! The main paths are branch-free (both sides of a choice are computed and one is
//! selected) so the element loop vectorises. Accuracy: the default functions are
//! within 1 ulp of the exact value over their whole domain; `fast_*` functions
//! within 3.5 ulp. Special values follow IEEE 754 and C99 Annex F.

#![allow(clippy::excessive_precision, clippy::approx_constant)]

pub mod prim;

pub mod atrig;
pub mod erf;
pub mod exp;
pub mod log;
pub mod pow;
pub mod root;
pub mod trig;
