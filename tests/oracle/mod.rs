//! Test support of the integration tests of the generated layer that only
//! they use: exact arithmetic, an oracle for every kind written from the
//! spec's contracts (independent of the runtime under test), inputs near other
//! inputs, and the failure and coverage records. The generator, the edge
//! values, the narrow-float model, the f64 references of the transcendental
//! kinds and the differential engine are in `tessera_testkit`.
#![allow(dead_code)]

pub mod exact;
pub mod expect;
pub mod harness;
pub mod pair;
pub mod values;
