//! Inclusive scans along one axis (ARCHITECTURE.md §5.4).
//!
//! Each slice along the axis is cut into chunks of [`CHUNK`] terms from its
//! start. A chunk's total is its terms reduced in lane order (as a reduction of
//! exactly them). The carry into chunk 0 is the slice's element of the given
//! carry array, else the identity (-0 for a Sum, so that every term passes
//! through exactly, 1 for a Prod, -∞/+∞ for Max/Min); the carry into chunk
//! c + 1 is the carry into c combined with c's total; each result is its
//! chunk's carry combined with the chunk's terms up to it, left to right.
//! Chunks are therefore independent work: threads take whole slices, or the
//! chunks of one slice in two passes, with the same bits.
//!
//! Max and Min scans are exact (their association changes no bit) and take a
//! carry as Sum and Prod do: each result is the extreme of the slice's carry
//! element and the terms up to it.
//!
//! ArgMax and ArgMin scans write, at each index, the position along the axis
//! (an `i64`, from 0) of the first most extreme term up to that index, in the
//! order [`crate::reduce()`]'s ArgMax and ArgMin use: a NaN is the most
//! extreme of all (the first NaN stays the answer), -0 is below +0, ties keep
//! the earlier position. Their running extreme itself is the Max or Min scan
//! of the same terms (ask for both in one [`scan_many`]). They are exact, so
//! threads may take whole slices or the chunks of one slice. They take no
//! carry.
//!
//! The doubling scans ([`ScanOp::SumDoubling`], [`ScanOp::ProdDoubling`],
//! floats) follow Hillis–Steele's order instead: level ℓ, d = 2^ℓ while
//! d < n, replaces every yᵢ with i ≥ d by y_{i−d} + yᵢ (or ·), all of a
//! level from the previous level's values; ⌈log₂ n⌉ levels, O(n log n)
//! operations, threads taking whole slices; no carry.
//!
//! Logsumexp and Moments scans (floats) instead combine per-term states by the
//! odd/even prefix network ([`odd_even_scan`]), whose association is a
//! function of the slice's length alone: Logsumexp states are (m, s), a term
//! x being (x, e(x - c)), c = x where finite and 0 elsewhere, e the exp that
//! is 0 below -87 (f32) or -708 (f64); a then b combine to m = max(ma, mb),
//! s = sa·e(ma - c) + sb·e(mb - c) with c = m (or 0 where m is not finite); the
//! result is m + ln s, or m where m is not finite. Moments states are (μ, S, n),
//! a term t being (t - c, +0, 1) with c the slice's first term (0 where not
//! finite); a then b combine to n = na + nb, δ = μb - μa, w = nb/n,
//! μ = μa + δ·w (μa + μb where either is not finite), S = (Sa + Sb) + δ²·(na·w);
//! the mean is c + μ and the variance S/(i + 1), NaN where μ is not finite.
//! Threads take whole slices for these.
//!
//! Terms convert into their carrier as in [`crate::reduce()`], and each result
//! rounds once into the destination's dtype. Integer scans wrap (Sum, Prod)
//! and are exact; Max/Min follow IEEE 754-2019 (NaN propagates, -0 < +0).

use super::engine::{fmax, fmin, try_filled, Carrier, IntCarrier, PARALLEL_MIN};
use super::lanes::{LaneFloat, BLOCK};
use super::source::{Source, TermMap};
use super::tree::tree_of;
use super::{carrier, check_axes, reduced_shape, Terms};
use crate::array::{c_strides, ArrayView, ArrayViewMut};
use crate::checks::check_destination;
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{Class, DType, Tier};
use num_complex::Complex;
use rayon::prelude::*;

/// Terms per chunk of a scan.
pub const CHUNK: usize = 4096;

/// A scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanOp {
    /// Running sum (cumulative sum).
    Sum,
    /// Running product.
    Prod,
    /// Running IEEE 754-2019 maximum (cumulative max).
    Max,
    /// Running IEEE 754-2019 minimum (cumulative min).
    Min,
    /// The position (i64) of the first maximum so far, a NaN the maximum of
    /// all and -0 below +0.
    ArgMax,
    /// The position (i64) of the first minimum so far, a NaN the most
    /// extreme of all and -0 below +0.
    ArgMin,
    /// Running logsumexp (floats): states (m, s) combined by the odd/even
    /// network, see [`odd_even_scan`].
    Logsumexp,
    /// Running mean (Moments scan, floats).
    Mean,
    /// Running variance about the running mean, divided by the count
    /// (Moments scan, floats).
    Variance,
    /// Running sum in the doubling order (Hillis–Steele, floats): level ℓ
    /// (d = 2^ℓ, ℓ = 0, 1, … while d < n) replaces every yᵢ with i ≥ d by
    /// y_{i−d} + yᵢ, all of a level from the previous level's values, the
    /// terms being level 0. ⌈log₂ n⌉ roundings per result, O(n log n)
    /// additions; for reproducing a computation written that way, bit for
    /// bit. Within γ(⌈log₂ n⌉)·Σ|xⱼ| of each exact prefix sum.
    SumDoubling,
    /// Running product in the doubling order (as [`ScanOp::SumDoubling`],
    /// y_{i−d} · yᵢ).
    ProdDoubling,
}

impl ScanOp {
    /// Every scan.
    pub const ALL: [ScanOp; 11] = [
        ScanOp::Sum,
        ScanOp::Prod,
        ScanOp::Max,
        ScanOp::Min,
        ScanOp::ArgMax,
        ScanOp::ArgMin,
        ScanOp::Logsumexp,
        ScanOp::Mean,
        ScanOp::Variance,
        ScanOp::SumDoubling,
        ScanOp::ProdDoubling,
    ];
    /// The name (as the CLI spells it).
    pub fn name(self) -> &'static str {
        match self {
            ScanOp::Sum => "sum",
            ScanOp::Prod => "prod",
            ScanOp::Max => "max",
            ScanOp::Min => "min",
            ScanOp::ArgMax => "argmax",
            ScanOp::ArgMin => "argmin",
            ScanOp::Logsumexp => "logsumexp",
            ScanOp::Mean => "mean",
            ScanOp::Variance => "variance",
            ScanOp::SumDoubling => "sum_doubling",
            ScanOp::ProdDoubling => "prod_doubling",
        }
    }
    /// The scan of a name, if any.
    pub fn from_name(name: &str) -> Option<ScanOp> {
        ScanOp::ALL.iter().copied().find(|o| o.name() == name)
    }
    /// Whether the scan takes a carry (the monoids: Sum, Prod, Max, Min).
    pub fn takes_carry(self) -> bool {
        matches!(self, ScanOp::Sum | ScanOp::Prod | ScanOp::Max | ScanOp::Min)
    }
    /// Whether the scan writes positions (ArgMax, ArgMin: an `i64`
    /// destination).
    pub fn is_arg(self) -> bool {
        matches!(self, ScanOp::ArgMax | ScanOp::ArgMin)
    }
    /// Whether the scan is defined for terms of `dtype`.
    pub fn accepts(self, dtype: DType) -> bool {
        match self {
            ScanOp::Sum | ScanOp::Prod => true,
            ScanOp::Max | ScanOp::Min | ScanOp::ArgMax | ScanOp::ArgMin => {
                dtype.info().class != Class::Complex
            }
            ScanOp::Logsumexp
            | ScanOp::Mean
            | ScanOp::Variance
            | ScanOp::SumDoubling
            | ScanOp::ProdDoubling => dtype.info().class == Class::Float,
        }
    }
}

/// The monoid of a scan in a carrier.
trait Monoid<C: Copy>: Sync {
    fn identity(&self) -> C;
    fn block(&self, x: &[C]) -> C;
    fn op(&self, a: C, b: C) -> C;
    /// Each chain `k` of `r` combined with the terms `x[k]` left to right,
    /// every running value written to `y[k]` (all of one length): the
    /// chains in turn, term by term. A monoid that picks its operation at
    /// run time overrides it to pick once per call, not once per term.
    fn scan_side<const K: usize>(&self, r: &mut [C; K], x: [&[C]; K], y: [&mut [C]; K]) {
        side(r, x, y, |a, b| self.op(a, b));
    }
}

/// [`Monoid::scan_side`] with the operation `op`.
#[inline(always)]
fn side<C: Copy, const K: usize>(
    r: &mut [C; K],
    x: [&[C]; K],
    y: [&mut [C]; K],
    op: impl Fn(C, C) -> C,
) {
    let len = y[0].len();
    if x.iter().any(|v| v.len() != len) || y.iter().any(|v| v.len() != len) {
        return;
    }
    for j in 0..len {
        for k in 0..K {
            r[k] = op(r[k], x[k][j]);
            y[k][j] = r[k];
        }
    }
}

struct FloatScan(ScanOp, Tier);
impl<F: LaneFloat> Monoid<F> for FloatScan {
    fn identity(&self) -> F {
        match self.0 {
            ScanOp::Prod => F::ONE,
            ScanOp::Max => -F::INF,
            ScanOp::Min => F::INF,
            _ => -F::ZERO,
        }
    }
    fn block(&self, x: &[F]) -> F {
        match self.0 {
            ScanOp::Sum => F::sum_block_on(self.1, x),
            ScanOp::Prod => F::prod_block_on(self.1, x),
            _ => x
                .iter()
                .fold(Monoid::<F>::identity(self), |a, &b| self.op(a, b)),
        }
    }
    #[inline]
    fn op(&self, a: F, b: F) -> F {
        match self.0 {
            ScanOp::Prod => a * b,
            ScanOp::Max => fmax(a, b),
            ScanOp::Min => fmin(a, b),
            _ => a + b,
        }
    }
    fn scan_side<const K: usize>(&self, r: &mut [F; K], x: [&[F]; K], y: [&mut [F]; K]) {
        match self.0 {
            ScanOp::Prod => side(r, x, y, |a, b| a * b),
            ScanOp::Max => side(r, x, y, fmax),
            ScanOp::Min => side(r, x, y, fmin),
            _ => side(r, x, y, |a, b| a + b),
        }
    }
}

struct IntScan(ScanOp);
impl<I: IntCarrier> Monoid<I> for IntScan {
    fn identity(&self) -> I {
        match self.0 {
            ScanOp::Prod => I::ONE,
            ScanOp::Max => I::MIN,
            ScanOp::Min => I::MAX,
            _ => I::ZERO,
        }
    }
    fn block(&self, x: &[I]) -> I {
        x.iter()
            .fold(Monoid::<I>::identity(self), |a, &b| self.op(a, b))
    }
    #[inline]
    fn op(&self, a: I, b: I) -> I {
        match self.0 {
            ScanOp::Prod => a.wmul(b),
            ScanOp::Max => a.max(b),
            ScanOp::Min => a.min(b),
            _ => a.wadd(b),
        }
    }
    fn scan_side<const K: usize>(&self, r: &mut [I; K], x: [&[I]; K], y: [&mut [I]; K]) {
        match self.0 {
            ScanOp::Prod => side(r, x, y, |a: I, b| a.wmul(b)),
            ScanOp::Max => side(r, x, y, |a: I, b| a.max(b)),
            ScanOp::Min => side(r, x, y, |a: I, b| a.min(b)),
            _ => side(r, x, y, |a: I, b| a.wadd(b)),
        }
    }
}

struct ComplexScan(ScanOp);
impl<F: LaneFloat> Monoid<Complex<F>> for ComplexScan {
    fn identity(&self) -> Complex<F> {
        match self.0 {
            ScanOp::Prod => Complex::new(F::ONE, F::ZERO),
            _ => Complex::new(-F::ZERO, -F::ZERO),
        }
    }
    fn block(&self, x: &[Complex<F>]) -> Complex<F> {
        super::engine::complex_block(x, self.0 == ScanOp::Prod)
    }
    fn op(&self, a: Complex<F>, b: Complex<F>) -> Complex<F> {
        if self.0 == ScanOp::Prod {
            super::engine::cmul(a, b)
        } else {
            Complex::new(a.re + b.re, a.im + b.im)
        }
    }
}

/// Scan `x` along `axis` by `op` into `dst` (the shape of `x`, any dtype),
/// inclusive, in the order the module documentation states. `carry`, for Sum,
/// Prod, Max and Min, continues each slice: an array
/// of `x`'s shape without `axis`, of the terms' carrier dtype
/// ([`super::carrier`]).
///
/// Refuses (before any write) an axis out of range, an op not defined for the
/// dtype, a destination of another shape or that reaches an element twice, an
/// ArgMax/ArgMin destination that is not `i64`, a carry of the wrong shape or
/// dtype or given to a scan that takes none, an unavailable tier.
pub fn scan(
    op: ScanOp,
    axis: usize,
    x: &ArrayView<'_>,
    carry: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    scan_many(axis, x, carry, &mut [(op, dst)], exec)
}

/// [`scan`] of `x` written over `x` itself: at each index, `op` of the
/// terms along `axis` up to it, inclusive, in [`scan`]'s order and with its
/// bits, each result rounded once into `x`'s dtype. An ArgMax or ArgMin
/// scan needs an `i64` array, whose positions replace its values.
///
/// All or nothing: every result is computed into a buffer of the scan's
/// carrier (or `i64`) of `x`'s element count, which the call allocates,
/// before the first element of `x` is written.
///
/// # Errors
/// Before any write, as [`scan`]: an axis out of range, an `op` not defined
/// for `x`'s dtype, an Arg scan of an array that is not `i64`, a carry of
/// the wrong shape or dtype or given to a scan that takes none, an `x` that
/// reaches an element twice (a broadcast view), an unavailable tier;
/// [`Error::Overflow`] or [`Error::Alloc`] where the buffer cannot be
/// sized or allocated.
pub fn scan_in_place(
    op: ScanOp,
    axis: usize,
    x: &mut ArrayViewMut<'_>,
    carry: Option<&ArrayView<'_>>,
    exec: &Exec,
) -> Result<()> {
    exec.resolve_tier_for(crate::tier::Engine::Scan)?;
    let shapes = scan_query(
        op,
        axis,
        x.shape(),
        x.dtype(),
        carry.map(|k| (k.shape(), k.dtype())),
        Some((x.shape(), x.dtype())),
    )?;
    check_destination(x)?;
    let held = shapes.out_dtype.unwrap_or(shapes.carry_dtype);
    let overflow = || Error::Overflow {
        operand: "the in-place scan's buffer".into(),
    };
    let count = crate::array::element_count(x.shape()).ok_or_else(overflow)?;
    let len = count
        .checked_mul(held.info().item_bytes)
        .ok_or_else(overflow)?;
    let mut buf = crate::alloc::try_zeroed::<u8>(len, "the in-place scan's results")?;
    let mut held_view = ArrayViewMut::contiguous(held, x.shape(), &mut buf)?;
    scan(op, axis, &x.view(), carry, &mut held_view, exec)?;
    // The carrier's values round once into x's dtype (an Arg scan's i64
    // positions are copied).
    crate::cast::cast(crate::cast::CastMode::Default, &held_view.view(), x, exec)
}

/// Several scans of one operand along one axis, each into its own
/// destination; every destination is checked before any is written.
pub fn scan_many(
    axis: usize,
    x: &ArrayView<'_>,
    carry: Option<&ArrayView<'_>>,
    outs: &mut [(ScanOp, &mut ArrayViewMut<'_>)],
    exec: &Exec,
) -> Result<()> {
    scan_terms(axis, Terms::of(x), carry, outs, exec)
}

/// The refusals of one destination of a scan that shapes and dtypes decide.
fn check_scan(
    name: &str,
    op: ScanOp,
    shape: &[usize],
    dtype: DType,
    carry: Option<(&[usize], DType)>,
    (dst_shape, dst_dtype): (&[usize], DType),
) -> Result<()> {
    if !op.accepts(dtype) {
        return Err(Error::DTypeUnsupported {
            operand: "the terms".into(),
            dtype,
            reason: format!("a {} scan is not defined for it", op.name()),
        });
    }
    if carry.is_some() && !op.takes_carry() {
        return Err(Error::Attribute {
            name: "carry".into(),
            reason: format!("a {} scan takes no carry", op.name()),
        });
    }
    if dst_shape != shape {
        return Err(Error::Shape {
            operand: name.into(),
            shape: dst_shape.to_vec(),
            target: shape.to_vec(),
        });
    }
    if op.is_arg() && dst_dtype != DType::I64 {
        return Err(Error::DTypeMismatch {
            operand: name.into(),
            expected: DType::I64,
            got: dst_dtype,
        });
    }
    Ok(())
}

/// A carry's dtype (the scan's carrier) and shape (the terms' without the
/// axis).
fn check_carry(
    shape: &[usize],
    dtype: DType,
    axes: &[usize],
    carry: Option<(&[usize], DType)>,
) -> Result<()> {
    if let Some((k_shape, k_dtype)) = carry {
        let c = carrier(dtype);
        if k_dtype != c {
            return Err(Error::DTypeMismatch {
                operand: "carry".into(),
                expected: c,
                got: k_dtype,
            });
        }
        let want = reduced_shape(shape, axes);
        if k_shape != want.as_slice() {
            return Err(Error::Shape {
                operand: "carry".into(),
                shape: k_shape.to_vec(),
                target: want,
            });
        }
    }
    Ok(())
}

/// What a scan's operands and results look like, from [`scan_query`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanShapes {
    /// The destination's shape (the terms').
    pub out: Vec<usize>,
    /// The destination's dtype where the op fixes it (i64 for the Arg
    /// scans), else `None` (any dtype the terms cast into).
    pub out_dtype: Option<DType>,
    /// The shape of a carry (the terms' without the axis).
    pub carry: Vec<usize>,
    /// The dtype of a carry: the scan's carrier ([`carrier`]).
    pub carry_dtype: DType,
}

/// Whether [`scan`] of terms of `shape` and `dtype` along `axis` by `op`
/// fits, decided from shapes and dtypes alone (no data, no work), with the
/// shapes and dtypes its destination and carry take; with `carry` and `dst`
/// (shape and dtype each) their refusals are decided too (all but a
/// destination's layout's, which need the view).
///
/// # Errors
/// As [`scan`]: an axis out of range ([`Error::Axis`]), an `op` not
/// defined for `dtype` ([`Error::DTypeUnsupported`]), a carry for an op
/// that takes none ([`Error::Attribute`]), a carry or destination of the
/// wrong dtype or shape.
pub fn scan_query(
    op: ScanOp,
    axis: usize,
    shape: &[usize],
    dtype: DType,
    carry: Option<(&[usize], DType)>,
    dst: Option<(&[usize], DType)>,
) -> Result<ScanShapes> {
    let axes = check_axes(&[axis], shape.len())?;
    let out_dtype = op.is_arg().then_some(DType::I64);
    check_scan(
        "destination",
        op,
        shape,
        dtype,
        carry,
        dst.unwrap_or((shape, out_dtype.unwrap_or(dtype))),
    )?;
    check_carry(shape, dtype, &axes, carry)?;
    Ok(ScanShapes {
        out: shape.to_vec(),
        out_dtype,
        carry: reduced_shape(shape, &axes),
        carry_dtype: carrier(dtype),
    })
}

/// [`scan_many`] over any term source ([`Terms`]), e.g. a `map` program's
/// output ([`Terms::program`]): the results are those of the scan of that
/// output mapped into an array, with no array of it stored. The
/// destinations have the loop's shape.
pub fn scan_terms(
    axis: usize,
    terms: Terms<'_, '_>,
    carry: Option<&ArrayView<'_>>,
    outs: &mut [(ScanOp, &mut ArrayViewMut<'_>)],
    exec: &Exec,
) -> Result<()> {
    let tier = exec.resolve_tier_for(crate::tier::Engine::Scan)?;
    let (shape, dtype) = terms.shape_dtype()?;
    let axes = check_axes(&[axis], shape.len())?;
    let c = carrier(dtype);
    if outs.is_empty() {
        return Err(Error::Attribute {
            name: "outs".into(),
            reason: "a scan needs at least one destination".into(),
        });
    }
    let carry_of = carry.map(|k| (k.shape(), k.dtype()));
    for (i, (op, dst)) in outs.iter().enumerate() {
        let name = if outs.len() == 1 {
            "destination".to_string()
        } else {
            format!("destination {i}")
        };
        check_scan(
            &name,
            *op,
            shape,
            dtype,
            carry_of,
            (dst.shape(), dst.dtype()),
        )?;
        check_destination(dst)?;
    }
    check_carry(shape, dtype, &axes, carry_of)?;
    let no_conv = || Error::DTypeUnsupported {
        operand: "carry".into(),
        dtype,
        reason: format!("no conversion into the scan's carrier {c}"),
    };
    let src = terms.source(&axes, c, tier)?;
    let carry_src = match carry {
        Some(k) => Some(Source::new(&[k], &[], TermMap::Value, c, tier).ok_or_else(no_conv)?),
        None => None,
    };
    let threads = exec.thread_count();
    // The result buffer holds slice after slice; its view in x's shape has
    // stride 1 along the axis and the slices' C strides times the length on
    // the other axes.
    let len = shape[axis];
    let kept = reduced_shape(shape, &axes);
    let ks = c_strides(&kept);
    let mut strides = Vec::with_capacity(shape.len());
    let mut j = 0;
    for ax in 0..shape.len() {
        if ax == axis {
            strides.push(1);
        } else {
            // Exact where the scan has elements; only an empty one saturates.
            strides.push(ks[j].saturating_mul(len as isize));
            j += 1;
        }
    }
    for (op, dst) in outs.iter_mut() {
        let op = *op;
        let cs = carry_src.as_ref();
        if matches!(
            op,
            ScanOp::Logsumexp
                | ScanOp::Mean
                | ScanOp::Variance
                | ScanOp::SumDoubling
                | ScanOp::ProdDoubling
        ) {
            match c {
                DType::F32 => {
                    let mut r = run_network::<f32>(&src, op, threads)?;
                    write(&mut r, shape, &strides, dst, exec)?;
                }
                _ => {
                    let mut r = run_network::<f64>(&src, op, threads)?;
                    write(&mut r, shape, &strides, dst, exec)?;
                }
            }
            continue;
        }
        if op.is_arg() {
            let max = op == ScanOp::ArgMax;
            let mut r = match c {
                DType::F32 => run_arg::<f32>(&src, max, threads)?,
                DType::F64 => run_arg::<f64>(&src, max, threads)?,
                DType::I64 => run_arg::<i64>(&src, max, threads)?,
                _ => run_arg::<u64>(&src, max, threads)?,
            };
            write(&mut r, shape, &strides, dst, exec)?;
            continue;
        }
        match c {
            DType::F32 => {
                let m = FloatScan(op, tier);
                if !run_direct::<f32, _>(&src, cs, &m, threads, dst, axis)? {
                    let mut r = run::<f32, _>(&src, cs, &m, threads)?;
                    write(&mut r, shape, &strides, dst, exec)?;
                }
            }
            DType::F64 => {
                let m = FloatScan(op, tier);
                if !run_direct::<f64, _>(&src, cs, &m, threads, dst, axis)? {
                    let mut r = run::<f64, _>(&src, cs, &m, threads)?;
                    write(&mut r, shape, &strides, dst, exec)?;
                }
            }
            DType::C64 => {
                let m = ComplexScan(op);
                if !run_direct::<Complex<f32>, _>(&src, cs, &m, threads, dst, axis)? {
                    let mut r = run::<Complex<f32>, _>(&src, cs, &m, threads)?;
                    write(&mut r, shape, &strides, dst, exec)?;
                }
            }
            DType::C128 => {
                let m = ComplexScan(op);
                if !run_direct::<Complex<f64>, _>(&src, cs, &m, threads, dst, axis)? {
                    let mut r = run::<Complex<f64>, _>(&src, cs, &m, threads)?;
                    write(&mut r, shape, &strides, dst, exec)?;
                }
            }
            DType::I64 => {
                let m = IntScan(op);
                if !run_direct::<i64, _>(&src, cs, &m, threads, dst, axis)? {
                    let mut r = run::<i64, _>(&src, cs, &m, threads)?;
                    write(&mut r, shape, &strides, dst, exec)?;
                }
            }
            DType::U64 => {
                let m = IntScan(op);
                if !run_direct::<u64, _>(&src, cs, &m, threads, dst, axis)? {
                    let mut r = run::<u64, _>(&src, cs, &m, threads)?;
                    write(&mut r, shape, &strides, dst, exec)?;
                }
            }
            other => {
                return Err(Error::DTypeUnsupported {
                    operand: "the terms".into(),
                    dtype: other,
                    reason: "it is not a scan carrier (f32, f64, c64, c128, i64, u64)".into(),
                })
            }
        }
    }
    Ok(())
}

fn write<C: Carrier>(
    res: &mut [C],
    shape: &[usize],
    strides: &[isize],
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    if res.is_empty() {
        return Ok(());
    }
    // NaN results become the positive NaN before they round into `dst`, as
    // reduce's and contract's do (ARCHITECTURE.md §5.1).
    crate::cast::cast_owned_results_strided(res, shape, strides, dst, exec)
}

/// The total of one chunk (terms `t0..t0 + len` of slice `o`): its blocks in
/// lane order, combined by the block tree.
fn chunk_total<C: Carrier, M: Monoid<C>>(
    src: &Source,
    m: &M,
    o: usize,
    t0: usize,
    len: usize,
    s: &mut super::source::Scratch<C>,
) -> C {
    let nb = len.div_ceil(BLOCK);
    let block = |b: usize| {
        let b0 = t0 + b * BLOCK;
        let bl = (t0 + len - b0).min(BLOCK);
        m.block(src.fetch(o, b0, bl, s))
    };
    tree_of(nb, m.identity(), block, &|a, b| m.op(a, b)).unwrap_or_else(|| m.identity())
}

/// Scan one chunk from its carry into `out` (the chunk's results).
fn chunk_scan<C: Carrier, M: Monoid<C>>(
    src: &Source,
    m: &M,
    o: usize,
    t0: usize,
    carry: C,
    out: &mut [C],
    s: &mut super::source::Scratch<C>,
) {
    let mut r = [carry];
    for (b, piece) in out.chunks_mut(BLOCK).enumerate() {
        let x = src.fetch(o, t0 + b * BLOCK, piece.len(), s);
        m.scan_side(&mut r, [x], [piece]);
    }
}

/// Whole chunks scanned side by side by [`scan_chunks`]: independent
/// chains of the scan's operation keep the adder busy where one chain waits
/// on each result (a scan is otherwise bound by the operation's latency),
/// and few enough streams that their lines, a chunk apart, share an L1 set
/// without evicting each other.
const SIDE: usize = 4;

/// Scan the consecutive chunks of slice `o` that `out` holds (the first at
/// chunk `c0`; every chunk whole but possibly the last), chunk `i` from
/// `carries[i]`. Groups of [`SIDE`] whole chunks run side by side, one term
/// of each in turn; every chunk still combines its carry with its terms left
/// to right, so the results are [`chunk_scan`]'s.
fn scan_chunks<C: Carrier, M: Monoid<C>>(
    src: &Source,
    m: &M,
    o: usize,
    c0: usize,
    carries: &[C],
    out: &mut [C],
    s: &mut [super::source::Scratch<C>; SIDE],
) {
    let mut c = 0;
    let mut rest = out;
    while !rest.is_empty() {
        if rest.len() >= SIDE * CHUNK && c + SIDE <= carries.len() {
            let (group, tail) = rest.split_at_mut(SIDE * CHUNK);
            let mut r: [C; SIDE] = core::array::from_fn(|k| carries[c + k]);
            let [o0, o1, o2, o3] = split4(group);
            let [s0, s1, s2, s3] = &mut *s;
            for b in 0..CHUNK / BLOCK {
                let t = |k: usize| (c0 + c + k) * CHUNK + b * BLOCK;
                let x0 = src.fetch(o, t(0), BLOCK, s0);
                let x1 = src.fetch(o, t(1), BLOCK, s1);
                let x2 = src.fetch(o, t(2), BLOCK, s2);
                let x3 = src.fetch(o, t(3), BLOCK, s3);
                let range = b * BLOCK..(b + 1) * BLOCK;
                let (y0, y1) = (&mut o0[range.clone()], &mut o1[range.clone()]);
                let (y2, y3) = (&mut o2[range.clone()], &mut o3[range]);
                m.scan_side(&mut r, [x0, x1, x2, x3], [y0, y1, y2, y3]);
            }
            rest = tail;
            c += SIDE;
        } else {
            let len = rest.len().min(CHUNK);
            let (piece, tail) = rest.split_at_mut(len);
            chunk_scan(src, m, o, (c0 + c) * CHUNK, carries[c], piece, &mut s[0]);
            rest = tail;
            c += 1;
        }
    }
}

/// The four chunks of a group, in order.
fn split4<C>(group: &mut [C]) -> [&mut [C]; SIDE] {
    let (a, rest) = group.split_at_mut(CHUNK);
    let (b, rest) = rest.split_at_mut(CHUNK);
    let (c, d) = rest.split_at_mut(CHUNK);
    [a, b, c, d]
}

fn run<C: Carrier, M: Monoid<C>>(
    src: &Source,
    carry: Option<&Source>,
    m: &M,
    threads: usize,
) -> Result<Vec<C>> {
    // One carrier value per destination element (outs · n is the
    // destination's element count, checked).
    let mut res = try_filled(src.outputs * src.n, m.identity(), "scan results")?;
    run_into(src, carry, m, threads, &mut res)?;
    Ok(res)
}

/// [`run`] into `res` (slice after slice, `outputs · n` elements; every
/// element is written, whatever it held). Fails ([`Error::Alloc`]) only
/// before its first write.
fn run_into<C: Carrier, M: Monoid<C>>(
    src: &Source,
    carry: Option<&Source>,
    m: &M,
    threads: usize,
    res: &mut [C],
) -> Result<()> {
    let (outs, n) = (src.outputs, src.n);
    if res.is_empty() {
        return Ok(());
    }
    let threads = if outs * n < PARALLEL_MIN {
        1
    } else {
        threads.max(1)
    };
    let start = |o: usize, s: &mut super::source::Scratch<C>| -> C {
        match carry {
            Some(k) => k.fetch(o, 0, 1, s)[0],
            None => m.identity(),
        }
    };
    // One slice, SIDE chunks at a time: their carries (each the previous
    // one combined with the previous chunk's total, as before), then their
    // scans side by side.
    let slice = |o: usize,
                 out: &mut [C],
                 s: &mut [super::source::Scratch<C>; SIDE],
                 ks: &mut super::source::Scratch<C>| {
        let mut cr = start(o, ks);
        for (g, group) in out.chunks_mut(SIDE * CHUNK).enumerate() {
            let c0 = g * SIDE;
            let mut carries = [m.identity(); SIDE];
            let count = group.len().div_ceil(CHUNK);
            for (k, v) in carries[..count].iter_mut().enumerate() {
                *v = cr;
                let t0 = (c0 + k) * CHUNK;
                if t0 + CHUNK < n {
                    cr = m.op(cr, chunk_total(src, m, o, t0, CHUNK, &mut s[0]));
                }
            }
            scan_chunks(src, m, o, c0, &carries[..count], group, s);
        }
    };
    let scratches =
        || -> [super::source::Scratch<C>; SIDE] { core::array::from_fn(|_| src.scratch::<C>()) };
    if threads == 1 {
        let mut s = scratches();
        let mut ks = src.scratch::<C>();
        for (o, row) in res.chunks_mut(n).enumerate() {
            slice(o, row, &mut s, &mut ks);
        }
        return Ok(());
    }
    if outs >= threads || n <= CHUNK {
        let per = outs.div_ceil(threads);
        res.par_chunks_mut(per * n)
            .enumerate()
            .for_each(|(t, rows)| {
                let mut s = scratches();
                let mut ks = src.scratch::<C>();
                for (i, row) in rows.chunks_mut(n).enumerate() {
                    slice(t * per + i, row, &mut s, &mut ks);
                }
            });
        return Ok(());
    }
    // Few long slices: chunk totals in parallel, carries in order, then the
    // chunks' scans in parallel (one carry per chunk of 4096 destination
    // elements).
    let chunks = n.div_ceil(CHUNK);
    let mut carries = try_filled(chunks, m.identity(), "scan carries")?;
    for (o, row) in res.chunks_mut(n).enumerate() {
        carries
            .par_chunks_mut(chunks.div_ceil(threads))
            .enumerate()
            .for_each(|(t, cs)| {
                let mut s = src.scratch::<C>();
                let per = chunks.div_ceil(threads);
                for (i, v) in cs.iter_mut().enumerate() {
                    let c = t * per + i;
                    let t0 = c * CHUNK;
                    *v = chunk_total(src, m, o, t0, (n - t0).min(CHUNK), &mut s);
                }
            });
        let mut ks = src.scratch::<C>();
        let mut cr = start(o, &mut ks);
        for v in carries.iter_mut() {
            let total = *v;
            *v = cr;
            cr = m.op(cr, total);
        }
        let carries = &carries;
        row.par_chunks_mut(SIDE * CHUNK)
            .enumerate()
            .for_each(|(g, group)| {
                let mut s = scratches();
                let c0 = g * SIDE;
                let count = group.len().div_ceil(CHUNK);
                scan_chunks(src, m, o, c0, &carries[c0..c0 + count], group, &mut s);
            });
    }
    Ok(())
}

/// [`run_into`] straight into `dst` where it holds the carrier's dtype,
/// C-contiguous with the scan's axis last, so that its elements are the
/// result buffer's order: no buffer of the destination's size, no cast
/// pass. NaN results then become the positive quiet NaN in place, as the
/// cast into a destination makes them. Returns whether it ran (false: the
/// caller takes the buffered path).
fn run_direct<C: Carrier, M: Monoid<C>>(
    src: &Source,
    carry: Option<&Source>,
    m: &M,
    threads: usize,
    dst: &mut ArrayViewMut<'_>,
    axis: usize,
) -> Result<bool> {
    let shape = dst.shape().to_vec();
    if dst.dtype() != C::DTYPE
        || axis + 1 != shape.len()
        || dst.strides() != c_strides(&shape).as_slice()
    {
        return Ok(false);
    }
    let Some(count) = crate::array::element_count(&shape) else {
        return Ok(false);
    };
    let size = core::mem::size_of::<C>();
    let start = dst.layout().offset.saturating_mul(size);
    let end = count.saturating_mul(size).saturating_add(start);
    let Some(region) = dst.data_mut().get_mut(start..end) else {
        return Ok(false);
    };
    // SAFETY: the carriers (f32, f64, their complex pairs, i64, u64) take
    // every bit pattern, so any bytes read as them are values; `align_to_mut`
    // hands out only the whole, aligned elements of the region.
    let (head, res, _) = unsafe { region.align_to_mut::<C>() };
    if !head.is_empty() || res.len() != count {
        return Ok(false);
    }
    run_into(src, carry, m, threads, res)?;
    if matches!(C::DTYPE, DType::F32 | DType::F64 | DType::C64 | DType::C128) {
        crate::cast::positive_nans(crate::array::as_bytes_mut(res), C::DTYPE);
    }
    Ok(true)
}

/// A carrier whose terms an ArgMax/ArgMin scan ranks.
trait Ranked: Carrier {
    /// Whether `cand` replaces `cur` as the running extreme (a later term
    /// replaces an earlier one only when strictly more extreme).
    fn beats(cand: Self, cur: Self, max: bool) -> bool;
}
impl Ranked for f32 {
    fn beats(cand: f32, cur: f32, max: bool) -> bool {
        super::engine::beats(cand, cur, max)
    }
}
impl Ranked for f64 {
    fn beats(cand: f64, cur: f64, max: bool) -> bool {
        super::engine::beats(cand, cur, max)
    }
}
impl Ranked for i64 {
    fn beats(cand: i64, cur: i64, max: bool) -> bool {
        if max {
            cand > cur
        } else {
            cand < cur
        }
    }
}
impl Ranked for u64 {
    fn beats(cand: u64, cur: u64, max: bool) -> bool {
        if max {
            cand > cur
        } else {
            cand < cur
        }
    }
}

/// The running extreme and its position: `None` before the first term.
type Best<C> = Option<(C, usize)>;

/// `a`, then the terms of `b` (all after `a`'s): the later extreme only
/// where it beats the earlier.
fn join<C: Ranked>(a: Best<C>, b: Best<C>, max: bool) -> Best<C> {
    match (a, b) {
        (Some(x), Some(y)) if C::beats(y.0, x.0, max) => Some(y),
        (Some(x), _) => Some(x),
        (None, y) => y,
    }
}

/// The ArgMax (`max`) or ArgMin scan of every slice, as positions along the
/// axis, slice after slice. Exact, so threads over slices or over the chunks
/// of one slice give the same positions.
fn run_arg<C: Ranked>(src: &Source, max: bool, threads: usize) -> Result<Vec<i64>> {
    let (outs, n) = (src.outputs, src.n);
    let mut res = try_filled(outs * n, 0i64, "scan results")?;
    if res.is_empty() {
        return Ok(res);
    }
    let threads = if outs * n < PARALLEL_MIN {
        1
    } else {
        threads.max(1)
    };
    // Scan terms t0.. of slice o from `best` into `out`; returns the extreme
    // after them.
    let scan_from = |o: usize,
                     t0: usize,
                     mut best: Best<C>,
                     out: &mut [i64],
                     s: &mut super::source::Scratch<C>|
     -> Best<C> {
        for (b, piece) in out.chunks_mut(BLOCK).enumerate() {
            let b0 = t0 + b * BLOCK;
            let x = src.fetch(o, b0, piece.len(), s);
            for (j, (d, &v)) in piece.iter_mut().zip(x).enumerate() {
                best = join(best, Some((v, b0 + j)), max);
                // A position along an axis of an array fits an i64.
                *d = best.map_or(0, |b| b.1 as i64);
            }
        }
        best
    };
    if threads == 1 {
        let mut s = src.scratch::<C>();
        for (o, row) in res.chunks_mut(n).enumerate() {
            scan_from(o, 0, None, row, &mut s);
        }
        return Ok(res);
    }
    if outs >= threads || n <= CHUNK {
        let per = outs.div_ceil(threads);
        res.par_chunks_mut(per * n)
            .enumerate()
            .for_each(|(t, rows)| {
                let mut s = src.scratch::<C>();
                for (i, row) in rows.chunks_mut(n).enumerate() {
                    scan_from(t * per + i, 0, None, row, &mut s);
                }
            });
        return Ok(res);
    }
    // Few long slices: each chunk's extreme in parallel, the extremes before
    // each chunk in order, then the chunks' scans in parallel.
    let chunks = n.div_ceil(CHUNK);
    let mut carries: Vec<Best<C>> = try_filled(chunks, None, "scan carries")?;
    let per = chunks.div_ceil(threads);
    for (o, row) in res.chunks_mut(n).enumerate() {
        carries.par_chunks_mut(per).enumerate().for_each(|(t, cs)| {
            let mut s = src.scratch::<C>();
            for (i, v) in cs.iter_mut().enumerate() {
                let t0 = (t * per + i) * CHUNK;
                let len = (n - t0).min(CHUNK);
                let mut best = None;
                for b0 in (t0..t0 + len).step_by(BLOCK) {
                    let x = src.fetch(o, b0, (t0 + len - b0).min(BLOCK), &mut s);
                    for (j, &v) in x.iter().enumerate() {
                        best = join(best, Some((v, b0 + j)), max);
                    }
                }
                *v = best;
            }
        });
        let mut before = None;
        for v in carries.iter_mut() {
            let chunk = *v;
            *v = before;
            before = join(before, chunk, max);
        }
        let carries = &carries;
        row.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, piece)| {
                let mut s = src.scratch::<C>();
                scan_from(o, c * CHUNK, carries[c], piece, &mut s);
            });
    }
    Ok(res)
}

/// The odd/even (Brent–Kung) prefix network over `a`, in place: neighbouring
/// pairs `(2i, 2i + 1)` combine, the network runs on the pairs' results,
/// which become the odd positions' results, and each even position `2i > 0`
/// combines the result at `2i - 1` with its own state. The network, and so
/// every result's association, is a function of the length alone; its depth
/// is at most `2⌈log₂ n⌉`.
pub fn odd_even_scan<S: Copy>(a: &mut [S], op: &impl Fn(S, S) -> S) {
    if a.len() < 2 {
        return;
    }
    let mut scratch = a.to_vec();
    odd_even_in(a, &mut scratch, op);
}

/// [`odd_even_scan`] with the pairs of every level in `scratch` (at least
/// `a.len()` entries; their values are overwritten).
fn odd_even_in<S: Copy>(a: &mut [S], scratch: &mut [S], op: &impl Fn(S, S) -> S) {
    let n = a.len();
    if n < 2 {
        return;
    }
    let (pairs, rest) = scratch.split_at_mut(n / 2);
    for (i, p) in pairs.iter_mut().enumerate() {
        *p = op(a[2 * i], a[2 * i + 1]);
    }
    odd_even_in(pairs, rest, op);
    for (i, &p) in pairs.iter().enumerate() {
        a[2 * i + 1] = p;
    }
    for i in (2..n).step_by(2) {
        a[i] = op(a[i - 1], a[i]);
    }
}

/// Run the odd/even network on the states `st` holds (its first `n`),
/// the rest of its room (`n` more) the pairs' scratch.
fn network<S: Copy>(st: &mut Vec<S>, n: usize, op: &impl Fn(S, S) -> S) {
    if let Some(&x) = st.first() {
        st.resize(2 * n, x);
    }
    let (a, scratch) = st.split_at_mut(n);
    odd_even_in(a, scratch, op);
}

/// exp z, or 0 below the cut.
#[inline]
fn e<F: LaneFloat>(z: F) -> F {
    if z < F::CUT {
        F::ZERO
    } else {
        z.exp()
    }
}

/// The Logsumexp scan of one slice's terms into `out` (`st`: room for
/// twice the terms' states).
fn lse_scan<F: LaneFloat>(x: &[F], out: &mut [F], st: &mut Vec<(F, F)>) {
    let centre = |m: F| if m.is_finite() { m } else { F::ZERO };
    st.clear();
    st.extend(x.iter().map(|&t| (t, e(t - centre(t)))));
    network(st, x.len(), &|a: (F, F), b: (F, F)| {
        let m = fmax(a.0, b.0);
        let c = centre(m);
        (m, a.1 * e(a.0 - c) + b.1 * e(b.0 - c))
    });
    for (o, &(m, s)) in out.iter_mut().zip(st.iter()) {
        *o = if m.is_finite() { m + s.ln() } else { m };
    }
}

/// The Moments scan of one slice's terms: the running mean or variance
/// (`st`: room for twice the terms' states).
fn moments_scan<F: LaneFloat>(x: &[F], out: &mut [F], variance: bool, st: &mut Vec<(F, F, F)>) {
    let Some(&first) = x.first() else { return };
    let c = if first.is_finite() { first } else { F::ZERO };
    st.clear();
    st.extend(x.iter().map(|&t| (t - c, F::ZERO, F::ONE)));
    network(st, x.len(), &|a: (F, F, F), b: (F, F, F)| {
        let n = a.2 + b.2;
        let d = b.0 - a.0;
        let w = b.2 / n;
        let mu = if a.0.is_finite() && b.0.is_finite() {
            a.0 + d * w
        } else {
            a.0 + b.0
        };
        (mu, (a.1 + b.1) + (d * d) * (a.2 * w), n)
    });
    for (i, (o, &(mu, s, _))) in out.iter_mut().zip(st.iter()).enumerate() {
        *o = if !mu.is_finite() {
            F::NAN
        } else if variance {
            s / F::from_count(i + 1)
        } else {
            c + mu
        };
    }
}

/// The doubling (Hillis–Steele) scan of `x` into `out` by `op`: level by
/// level, each level's values from the previous level's (`tmp` holds one
/// level; it grows to `x`'s length, within the task's reserved room).
fn doubling_scan<F: Copy>(x: &[F], out: &mut [F], tmp: &mut Vec<F>, op: impl Fn(F, F) -> F) {
    let n = x.len();
    crate::copy::copy_slice(out, x);
    tmp.clear();
    tmp.extend_from_slice(x);
    let mut d = 1;
    while d < n {
        // tmp holds the previous level; the new one goes into out.
        for i in d..n {
            out[i] = op(tmp[i - d], tmp[i]);
        }
        tmp[d..].copy_from_slice(&out[d..]);
        d *= 2;
    }
}

/// Logsumexp, Moments and doubling scans: each slice's terms fetched whole
/// into the carrier, then the network; threads take whole slices.
fn run_network<F: LaneFloat + Carrier>(src: &Source, op: ScanOp, threads: usize) -> Result<Vec<F>> {
    let (outs, n) = (src.outputs, src.n);
    let mut res = try_filled(outs * n, F::ZERO, "scan results")?;
    if res.is_empty() {
        return Ok(res);
    }
    let threads = if outs * n < PARALLEL_MIN {
        1
    } else {
        threads.max(1)
    };
    // Each task holds one slice's terms and the network's states with the
    // pairs' scratch (2n states): scratch proportional to a destination row.
    let tasks = threads.min(outs);
    let mut bufs: Vec<NetBufs<F>> = crate::alloc::try_vec(tasks, "scan states")?;
    for _ in 0..tasks {
        bufs.push(NetBufs::new(op, n)?);
    }
    let slice = |o: usize, row: &mut [F], b: &mut NetBufs<F>, s: &mut super::source::Scratch<F>| {
        b.terms.clear();
        for t0 in (0..n).step_by(BLOCK) {
            b.terms
                .extend_from_slice(src.fetch(o, t0, (n - t0).min(BLOCK), s));
        }
        match op {
            ScanOp::Logsumexp => lse_scan(&b.terms, row, &mut b.lse),
            ScanOp::SumDoubling => doubling_scan(&b.terms, row, &mut b.ping, |a, b| a + b),
            ScanOp::ProdDoubling => doubling_scan(&b.terms, row, &mut b.ping, |a, b| a * b),
            _ => moments_scan(&b.terms, row, op == ScanOp::Variance, &mut b.moments),
        }
    };
    let per = outs.div_ceil(threads);
    let work = |t: usize, rows: &mut [F], b: &mut NetBufs<F>| {
        let mut s = src.scratch::<F>();
        for (i, row) in rows.chunks_mut(n).enumerate() {
            slice(t * per + i, row, b, &mut s);
        }
    };
    if threads == 1 {
        work(0, &mut res, &mut bufs[0]);
    } else {
        // ⌈outs / per⌉ ≤ tasks runs of rows, one buffer each.
        res.par_chunks_mut(per * n)
            .zip(bufs.par_iter_mut())
            .enumerate()
            .for_each(|(t, (rows, b))| work(t, rows, b));
    }
    Ok(res)
}

/// One task's buffers for a network scan of slices of `n` terms.
struct NetBufs<F> {
    terms: Vec<F>,
    ping: Vec<F>,
    lse: Vec<(F, F)>,
    moments: Vec<(F, F, F)>,
}

impl<F: LaneFloat> NetBufs<F> {
    fn new(op: ScanOp, n: usize) -> Result<Self> {
        fn room<T>(n: usize) -> Result<Vec<T>> {
            crate::alloc::try_vec(n, "scan states")
        }
        let two = n.saturating_mul(2);
        Ok(NetBufs {
            terms: room(n)?,
            ping: room(
                if matches!(op, ScanOp::SumDoubling | ScanOp::ProdDoubling) {
                    n
                } else {
                    0
                },
            )?,
            lse: room(if op == ScanOp::Logsumexp { two } else { 0 })?,
            moments: room(if op == ScanOp::Logsumexp { 0 } else { two })?,
        })
    }
}
