//! The hand-written runtime of the generated layer: the codecs that move a value
//! between its storage and its carrier, the operations each kind computes, and the
//! loop shells the generated kernels instantiate. `tessera-codegen` emits only
//! parameters, names and tables; every line of arithmetic lives here, once.
//!
//! Every tier compiles this same source (the AVX2 tier inside
//! `#[target_feature]` functions), so every tier executes the same IEEE
//! operations in the same order and gives the same bits.

pub mod cast;
pub mod codec;
#[cfg(target_arch = "x86_64")]
pub mod fast_x86;
pub mod loops;
pub mod math;
pub mod meta;
pub mod minifloat;
pub mod ops;
