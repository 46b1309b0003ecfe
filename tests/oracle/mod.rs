//! Test support shared by the integration tests of the generated layer: a
//! deterministic generator, input generators, an oracle for every kind written
//! from the spec's contracts (independent of the runtime under test), a kernel
//! runner for every loop layout, and the coverage records.
#![allow(dead_code)]

pub mod exact;
pub mod expect;
pub mod harness;
pub mod math_ref;
pub mod mini;
pub mod rng;
pub mod values;

/// The kinds, for `math_ref`, which names them `super::Kind` (the `tessera
/// ulp` command includes it too, and imports `Kind` through `tessera`).
use tessera_generated::Kind;
