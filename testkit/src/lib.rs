//! What tessera's tests and `tessera selftest` share, written once:
//!
//! - [`rng`]: the test generator (splitmix64), the run's seed
//!   (`TESSERA_TEST_SEED`) and labelled streams;
//! - [`edges`]: the edge values of every dtype the checks feed the kernels;
//! - [`values`]: elements as bytes, how a test reads them, when two results are
//!   the same, and random inputs;
//! - [`mini`]: an independent model of the parameterised (narrow) floats,
//!   from nothing but the catalogue's `FloatInfo`, and [`binary64`], the exact
//!   f64 facts it is built on;
//! - [`math_ref`]: the f64 references of the transcendental kinds;
//! - [`differential`]: the tier-vs-scalar differential engine: one kernel on
//!   every tier in its loop variant's layouts, on the same logical operands,
//!   compared bit for bit (NaN sign and payload aside).
//!
//! Nothing here calls the code under test except [`differential`], which runs
//! the kernels of the tiers' tables to compare them with each other.
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod binary64;
pub mod differential;
pub mod edges;
pub mod math_ref;
pub mod mini;
pub mod mutate;
pub mod rng;
pub mod values;
