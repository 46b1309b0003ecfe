//! # tessera
//!
//! CPU kernels whose every result is a function of the operands' values alone —
//! not of layout, thread count or SIMD tier — with stated error bounds.
//!
//! The elementwise kernels are generated from `spec/*.toml` (see the
//! `tessera-generated` crate, whose API this crate re-exports); this crate holds
//! the hand-written engines that run them over arrays of any layout.
//!
//! ```
//! use tessera::{elementwise, ArrayView, ArrayViewMut, Kind};
//! let a = [1.0f32, 2.0, 3.0];
//! let b = [0.5f32];
//! let mut y = [0.0f32; 3];
//! elementwise(
//!     Kind::Add,
//!     &[ArrayView::from_slice(&a, &[3]).unwrap(), ArrayView::from_slice(&b, &[1]).unwrap()],
//!     &mut ArrayViewMut::from_slice(&mut y, &[3]).unwrap(),
//! )
//! .unwrap();
//! assert_eq!(y, [1.5, 2.5, 3.5]);
//! ```

#![deny(missing_docs)]

pub mod array;
pub mod cast;
pub mod contract;
pub mod elementwise;
pub mod error;
pub mod fill;
pub mod formats;
pub mod map;
pub mod poly;
pub mod quant;
pub mod reduce;
pub mod tier;

pub use array::{ArrayView, ArrayViewMut, Element, Layout};
pub use cast::{cast, cast_with, CastMode};
pub use contract::{contract, matmul, ContractSpec};
pub use elementwise::{elementwise, elementwise_with, result_dtype};
pub use error::{Error, Result};
pub use map::{map, map_in_place, Program, ProgramBuilder};
pub use reduce::{
    dot, l1_distance, l1_norm, l2_norm, min_max, reduce, reduce_many, reduce_terms, scan,
    scan_many, scan_terms, squared_distance, sum_squares, ReduceOp, ScanOp, Terms,
};
pub use tessera_generated::{
    cast_index, kernel_index, variants_for, Accuracy, Args, Class, DType, DTypeInfo, FloatInfo,
    Format, FormatInfo, KernelInfo, Kind, KindInfo, LoopFn, NanStyle, NanTo, Negative, OperandRule,
    Overflow, ResultRule, ScaleRule, Tier, TierInfo, Variant, CAST_COUNT, KERNELS, KERNEL_COUNT,
};
pub use tier::{active_tier, available_tiers, best_tier, Exec};

/// The generated layer itself: codecs, operations and per-tier kernels, for
/// callers that drive kernels directly and for the tests.
pub use tessera_generated as generated;
