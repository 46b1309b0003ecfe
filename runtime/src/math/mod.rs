//! The transcendental functions of the elementwise kinds, on `f32` and `f64`.
//!
//! Where each kind is computed (the kernels reach these through
//! [`crate::ops`]; a name in code font without a link is a private helper of
//! the same file):
//!
//! | kind | file | f32 | f64 |
//! |---|---|---|---|
//! | exp | `exp.rs` | [`exp::exp_f32`] | [`exp::exp_f64`] (`exp_core`) |
//! | exp of c64 / c128 | `cexp.rs` | [`cexp::exp_c64`] | [`cexp::exp_c128`] (`exp_core`, trig's reduction) |
//! | exp2 | `exp.rs` | [`exp::exp2_f32`] | [`exp::exp2_f64`] |
//! | expm1 | `exp.rs` | [`exp::expm1_f32`] (`expm1_for32`) | [`exp::expm1_f64`] (`exp_core`) |
//! | log | `log.rs` | [`log::log_f32`] | [`log::log_f64`] |
//! | log2 | `log.rs` | [`log::log2_f32`] | [`log::log2_f64`] |
//! | log10 | `log.rs` | [`log::log10_f32`] | [`log::log10_f64`] |
//! | log1p | `log.rs` | [`log::log1p_f32`] | [`log::log1p_f64`] |
//! | sin | `trig.rs` | [`trig::sin_f32_on`] (`sin_lanes_f32` to 2^16, `sin_wide_f32` beyond; shared with fast_sin) | [`trig::sin_f64_on`] |
//! | cos | `trig.rs` | [`trig::cos_f32_on`] (`sin_lanes_f32` to 2^16, `cos_wide_f32` beyond; shared with fast_cos) | [`trig::cos_f64_on`] |
//! | tan | `trig.rs` | [`trig::tan_f32_on`] (`tan_near_f32` below 2^25, `tan_wide_f32` beyond) | [`trig::tan_f64_on`] |
//! | asin | `atrig.rs` | [`atrig::asin_f32`] | [`atrig::asin_f64`] |
//! | acos | `atrig.rs` | [`atrig::acos_f32`] | [`atrig::acos_f64`] |
//! | atan | `atrig.rs` | [`atrig::atan_f32`] | [`atrig::atan_f64`] |
//! | atan2 | `atrig.rs` | [`atrig::atan2_f32`] | [`atrig::atan2_f64`] |
//! | sinh | `exp.rs` | [`exp::sinh_f32`] | [`exp::sinh_f64`] |
//! | cosh | `exp.rs` | [`exp::cosh_f32`] | [`exp::cosh_f64`] |
//! | tanh | `exp.rs` | [`exp::tanh_f32`] | [`exp::tanh_f64`] |
//! | asinh | `log.rs` | [`log::asinh_f32`] | [`log::asinh_f64`] |
//! | acosh | `log.rs` | [`log::acosh_f32`] | [`log::acosh_f64`] |
//! | atanh | `log.rs` | [`log::atanh_f32`] | [`log::atanh_f64`] |
//! | erf | `erf.rs` | [`erf::erf_f32`] | [`erf::erf_f64`] |
//! | erfc | `erf.rs` | [`erf::erfc_f32`] | [`erf::erfc_f64`] |
//! | pow | `pow.rs` | [`pow::pow_f32`] | [`pow::pow_f64`] |
//! | hypot | `root.rs` | [`root::hypot_f32`] | [`root::hypot_f64`] |
//! | cbrt | `root.rs` | [`root::cbrt_f32`] | [`root::cbrt_f64`] |
//! | sigmoid | `exp.rs` | [`exp::sigmoid_f32`] | [`exp::sigmoid_f64`] |
//! | rsqrt | `root.rs` | [`root::rsqrt_f32`] | [`root::rsqrt_f64`] |
//! | fast_exp | `exp.rs` | [`exp::fast_exp_f32`] | [`exp::fast_exp_f64`] |
//! | fast_log | `log.rs` | [`log::fast_log_f32`] | [`log::fast_log_f64`] |
//! | fast_sin | `trig.rs` | [`trig::fast_sin_f32_on`] (`sincos_f32_with`) | [`trig::sin_f64_on`], the default sine |
//! | fast_cos | `trig.rs` | [`trig::fast_cos_f32_on`] (`sincos_f32_with`) | [`trig::cos_f64_on`], the default cosine |
//! | fast_tanh | `exp.rs` | [`exp::fast_tanh_f32`] | [`exp::fast_tanh_f64`] |
//! | fast_sigmoid | `exp.rs` | [`exp::fast_sigmoid_f32`] | [`exp::fast_sigmoid_f64`] |
//! | fast_pow | `pow.rs` | [`pow::fast_pow_f32`] | [`pow::fast_pow_f64`] = [`pow::pow_f64`] |
//!
//! The trigonometric kernels call the `_on::<SMALL>` forms (and the f32
//! sine's and cosine's `_mid` forms), which give the
//! full forms' bits where their test holds: for the f32 sine and cosine
//! (and their fast forms) `SMALL` is the f32-lane path alone
//! ([`trig::fits_lanes_f32`], |x| ≤ 2^16), and their `_mid` forms
//! ([`trig::sin_f32_mid`] and so on) give the full forms' bits where
//! [`trig::fits_small_f32`] holds, reading their table's first entry as
//! constants; for the f32 tangent the
//! Cody–Waite path below 2^25 ([`trig::fits_small_f32`]); for every f64 form
//! the reduction that reads the first entry of its table as constants
//! ([`trig::fits_small_f64`]); `sin_f32(x)` is `sin_f32_on::<false>(x)`, and
//! so on. `prim.rs` holds
//! the shared pieces (double-words, Horner, scaling by powers of two). The
//! large constant tables are data files under `tables/`, each with a header
//! that says what it holds, how the code indexes it and how it was made:
//! `pio2_f32.rs` and `pio2_f64.rs` (bits of 2/π, for `trig.rs`) and
//! `erfc_f64.rs` (the piecewise polynomials of `erf.rs`);
//! `runtime/tests/tables.rs` recomputes every entry from first principles.
//!
//! Every function here is written once, on one element, from IEEE operations
//! alone: `+ - * /`, `mul_add` (one rounding), `sqrt`, comparisons, selects and
//! bit manipulation. It calls no platform maths library. Each tier compiles the
//! same source (the vector tiers inside `#[target_feature]` kernels, where the
//! compiler turns the element loop into vector lanes), and Rust never contracts,
//! reassociates or flushes, so every tier executes the same operations on every
//! element and gives the same bits. The element type (`f32`, `f64`) is the lane
//! trait of ARCHITECTURE.md §5.2: its operations are exactly the vector lane's.
//!
//! The main paths are branch-free (both sides of a choice are computed and one is
//! selected) so the element loop vectorises. Accuracy: the default functions are
//! within 1 ulp of the exact value over their whole domain; `fast_*` functions
//! within 3.5 ulp. Special values follow IEEE 754 and C99 Annex F.

#![allow(clippy::excessive_precision, clippy::approx_constant)]

pub mod prim;

pub mod atrig;
pub mod cexp;
pub mod erf;
pub mod exp;
pub mod log;
pub mod pow;
pub mod root;
pub mod trig;
