//! # tessera
//!
//! CPU kernels whose every result is a function of the operands' values alone —
//! not of layout, thread count or SIMD tier — with stated error bounds.
//!
//! The elementwise kernels are generated from `spec/*.toml` (the
//! `tessera-generated` crate, whose catalogue this crate re-exports, and one
//! crate of kernels per tier); this crate holds the hand-written engines that
//! run them over arrays of any layout: [`elementwise()`], [`cast()`],
//! [`map()`] (fused programs), [`reduce()`] and [`scan()`], [`contract()`],
//! the block-scaled [`formats`], [`fill`], [`quant`] and [`poly`], the
//! [`movement`] kernels ([`gather()`], [`gather_ranges()`], [`scatter()`]),
//! [`unique()`] numbering, the ordering kernels of [`order`] ([`sort()`],
//! [`argsort()`], top-k, median, quantile, search, sets, compress,
//! partition) and the [`assembly`] kernels (padded loads, [`fold()`],
//! [`assemble()`], tile). The
//! contract of each (its order, its error bound, what it refuses) is on the
//! function, and in the repository's ARCHITECTURE.md.
//!
//! # The API rule
//!
//! Every call that computes follows one shape:
//!
//! ```text
//! call(attributes…, inputs…, destinations…, exec: &Exec) -> Result<…>
//! ```
//!
//! - **attributes** say what is computed: the kind, the op, the axes, the
//!   contraction spec, the cast mode, the program (or a [`MapPlan`]), the
//!   format, the seed;
//! - **inputs** are read: [`ArrayView`]s (type-erased: a dtype, a shape,
//!   strides in elements, zero and negative allowed, an offset, over bytes),
//!   or typed slices in [`typed`] and ndarray views in `nd` (feature
//!   `ndarray`);
//! - **destinations** are written: [`ArrayViewMut`]s (or slices), none of
//!   which may reach one element twice;
//! - **`exec`** comes last, always: the tier and the parallelism
//!   ([`Exec`], [`tier::Par`]: sequential, a thread count, or rayon's pool).
//!   Neither changes a bit; `&Exec::default()` is the active tier on rayon's
//!   pool.
//!
//! Every call checks everything (dtypes, arity, shapes, layouts against
//! their bytes, size arithmetic, attributes) before it writes anything, and
//! refuses with a typed [`Error`] whose variant says what was wrong (an
//! [`Error::Axis`], an [`Error::Shape`], an [`Error::Attribute`], …) and
//! names the operand. Queries that compute nothing (a result's dtype or
//! shape, an encoded size, a scratch size) take no `exec`. Where planning
//! costs, a plan is built once from shapes, dtypes and attributes and run
//! many times ([`MapPlan`], [`contract::ContractPlan`]); where a run needs
//! scratch, the plan says how much (`scratch_bytes()`) and the caller's
//! buffer can be used (`run_with_scratch`).
//!
//! ```
//! use tessera::{elementwise, ArrayView, ArrayViewMut, Exec, Kind};
//! let a = [1.0f32, 2.0, 3.0];
//! let b = [0.5f32];
//! let mut y = [0.0f32; 3];
//! elementwise(
//!     Kind::Add,
//!     &[ArrayView::from_slice(&a, &[3])?, ArrayView::from_slice(&b, &[1])?],
//!     &mut ArrayViewMut::from_slice(&mut y, &[3])?,
//!     &Exec::default(),
//! )?;
//! assert_eq!(y, [1.5, 2.5, 3.5]);
//! # Ok::<(), tessera::Error>(())
//! ```

#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

mod alloc;
pub mod array;
pub mod assembly;
pub mod attention;
pub mod bytes;
pub mod cast;
mod checks;
pub mod contract;
pub mod copy;
pub mod elementwise;
pub mod error;
pub mod fft;
pub mod fill;
pub mod formats;
pub mod linalg;
pub mod map;
pub mod movement;
#[cfg(feature = "ndarray")]
pub mod nd;
pub mod order;
pub mod poly;
pub mod probe;
pub mod quant;
pub mod reduce;
pub mod scratch;
pub mod signal;
mod simd;
pub mod spline;
pub mod terms;
pub mod tier;
pub mod typed;
pub mod unique;

pub use array::{ArrayView, ArrayViewMut, Element, Layout};
pub use assembly::{
    assemble, assemble_query, assemble_region_shape, fold, Pad, PaddedLoad, PieceShape,
};
pub use attention::{attention, attention_refusal, AttentionPlan, Kv};
pub use cast::{cast, CastMode};
pub use checks::check_destination;
pub use contract::{contract, contract_in_order, matmul, ContractSpec};
pub use elementwise::{elementwise, result_dtype};
pub use error::{Error, Result};
pub use map::{map, map_in_place, MapPlan, Program, ProgramBuilder};
pub use movement::{gather, gather_ranges, gather_ranges_shape, scatter, Combine};
pub use order::{argsort, argsort_with, sort, sort_with, FloatOrder};
pub use reduce::{
    dot, dot_conj, l1_distance, l1_norm, l2_norm, min_max, reduce, reduce_in_place, reduce_many,
    reduce_terms, scan, scan_in_place, scan_many, scan_terms, squared_distance, sum_squares,
    ReduceOp, ScanOp, Terms,
};
pub use scratch::Scratch;
pub use signal::{convolve, correlate, ConvMode};
/// A value `hi + lo` of two f32 (the dtype df32) or two f64 (dd64), and the
/// pair arithmetic every pair kind and cast runs (`tessera::pair::two_sum`,
/// `Pair::add`, …; bounds on each function).
pub use tessera_generated::runtime::pair;
pub use tessera_generated::runtime::pair::Pair;
pub use tessera_generated::{
    cast_index, kernel_index, variants_for, Accuracy, Args, Class, DType, DTypeInfo, FloatInfo,
    Format, FormatInfo, KernelInfo, Kind, KindInfo, LoopFn, NanStyle, NanTo, Negative, OperandRule,
    Overflow, ResultRule, ScaleRule, Tier, TierInfo, Variant, CAST_COUNT, KERNELS, KERNEL_COUNT,
};
pub use tier::{active_tier, available_tiers, best_tier, Exec, Par};
pub use unique::unique;

/// The README's Rust examples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;

/// The generated layer itself: codecs, operations and per-tier kernels, for
/// callers that drive kernels directly and for the tests.
pub use tessera_generated as generated;
