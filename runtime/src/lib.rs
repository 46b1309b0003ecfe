//! # tessera-runtime
//!
//! The hand-written runtime that tessera's generated kernels instantiate: the
//! codecs that move a value between its storage and its carrier ([`codec`],
//! [`minifloat`]), the operation each kind computes ([`ops`]), the cast
//! operation ([`cast`]), the loop shells every kernel is an instance of
//! ([`loops`]) and the transcendental functions ([`math`]). `tessera-codegen`
//! emits only parameters, names and tables; every line of arithmetic lives
//! here, once.
//!
//! Every tier compiles this same source (the vector tiers inside
//! `#[target_feature]` functions of their own crates), so every tier executes
//! the same IEEE operations in the same order and gives the same bits
//! (ARCHITECTURE.md §3).

#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod cast;
pub mod codec;
#[cfg(target_arch = "x86_64")]
pub mod fast_x86;
pub mod loops;
pub mod math;
pub use tessera_meta as meta;
pub mod minifloat;
pub mod ops;
pub mod pair;
