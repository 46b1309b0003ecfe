//! Reductions in lane order (ARCHITECTURE.md §5.3) and scans (§5.4).
//!
//! A reduction numbers each output's terms `0..n` in C order of the reduced
//! axes, whatever the operand's layout, and converts them block by block into
//! the carrier of their dtype (f32 for f32 and narrower floats, f64, the
//! complex pairs, i64 for signed integers and bool, u64 for unsigned) as a cast
//! does. Each result is computed in the carrier and rounds once into the
//! destination's dtype, as a cast does.
//!
//! * **Sum, Prod** of floats and complex: lane order ([`lanes`]): blocks of
//!   1024, 16 lanes by term number mod 16, the fixed lane fold, the block tree
//!   whose left part holds the largest power of two of blocks below their
//!   count. A Sum of n terms is within γ(r)·Σ|x| of the exact sum, with
//!   r = ⌈min(n, 1024)/16⌉ + 4 + ⌈log₂ B⌉ and B = ⌈n/1024⌉ blocks (γ(r) =
//!   r·u/(1 - r·u), u the carrier's unit roundoff). A complex Sum adds its
//!   parts so; a complex Prod multiplies by `(ac - bd) + i(ad + bc)`.
//!   The Sum of no term is +0, the Prod 1. Integer sums and products wrap in
//!   the 64-bit carrier and are exact.
//! * **Max, Min**: IEEE 754-2019 maximum/minimum (NaN propagates, -0 < +0);
//!   exact. Integers compare exactly. Refused for complex dtypes and for an
//!   empty reduction with outputs.
//! * **ArgMax, ArgMin**: the position (term number, into an `i64`
//!   destination) of the first most extreme term, a NaN the most extreme of
//!   all and -0 below +0.
//! * **Logsumexp** (floats): two passes, each in lane order: the maximum m,
//!   then `c + ln Σ e(x - c)` with c = m where finite and 0 elsewhere, e the
//!   exp that is 0 below -87 (f32) or -708 (f64); a NaN where m is; -∞ for no
//!   term. exp and ln are the `exp` and `log` kinds (within 1 ulp, no libm:
//!   the same bits on every tier and platform).
//! * **Mean, Variance** (Moments, floats): the mean c = Σx / n (lane order);
//!   the variance `(Σd² - Σd·(Σd/n)) / n`, d = x - c, both sums in lane order,
//!   +0 where that is negative and +∞ where Σd² is; a NaN where c is.
//!
//! Threads take whole outputs, or whole blocks of one output combined in the
//! fixed tree, so neither the thread count nor the tier changes a bit. The
//! blocks' values combine as they are computed (one partial sum per level of
//! the tree: O(log B) state for B blocks, whatever the number of terms).
//! Every operand and destination is checked before anything is written, a
//! program's loop shape among them (its element count must not exceed
//! `isize::MAX`: [`Error::Overflow`]).
//!
//! The terms come from a *term source* ([`Terms`]): one operand, a pair of
//! operands combined term by term (products for [`dot`], squared and absolute
//! differences for distances), or an output of a `map` program
//! ([`Terms::program`]), computed tile by tile as the blocks are reduced.

mod bound;
mod engine;
mod extreme;
pub mod fast_scan;
pub mod lanes;
pub mod partial;
pub mod scan;
pub mod scan_partial;
pub mod series;
mod source;
pub mod sparse;
pub(crate) mod tree;

use crate::array::{count_of, extent_product, ArrayView, ArrayViewMut};
use crate::checks::check_destination;
use crate::error::{Error, Result};
use crate::map::Program;
use crate::tier::Exec;
use crate::{Class, DType, Element, Pair, Tier};
pub(crate) mod compensated;
pub use bound::accumulation_error_bound;
use engine::*;
pub use fast_scan::{fast_scan, FastScanOp};
use lanes::LaneFloat;
use num_complex::Complex;
pub use partial::{
    partial_stages, reduce_centres, reduce_finish, reduce_partial, Centres, Partial, TermRange,
};
pub use scan::{scan, scan_in_place, scan_many, scan_query, scan_terms, ScanOp, ScanShapes};
pub use scan_partial::{scan_range, scan_state, ScanState};
pub use series::{diff, ema, rolling_max, rolling_mean, rolling_min, sum_squared_deviations};
use source::Source;
pub use source::TermMap;
pub use sparse::sparse_dot;

/// A reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum (lane order for floats and complex; wrapping for integers).
    Sum,
    /// The product (lane order for floats and complex; wrapping for integers).
    Prod,
    /// IEEE 754-2019 maximum.
    Max,
    /// IEEE 754-2019 minimum.
    Min,
    /// Position of the first maximum (NaN the largest, -0 below +0), as i64.
    /// The extreme itself is [`ReduceOp::Max`]; asked for together in one
    /// [`reduce_many`] call, both come from one loop.
    ArgMax,
    /// Position of the first minimum (NaN the smallest), as i64.
    ArgMin,
    /// ln Σ exp x, two passes.
    Logsumexp,
    /// The mean (Moments' first pass).
    Mean,
    /// The variance about the mean (Moments' two passes), divided by n.
    Variance,
    /// The L2 norm √Σx², two passes: s = max |x|, then `s·√Σ(x/s)²` with the
    /// sum in lane order (s itself where s is 0, ∞ or NaN), so no square
    /// overflows or underflows where the norm is representable.
    L2Norm,
    /// The compensated sum (Ogita–Rump–Oishi's Sum2 in the lane order,
    /// `compensated.rs`): terms as pairs of the carrier, each lane's running
    /// sum with the exact error of every addition gathered beside it, the
    /// result rounded once. Within u·|S| + 2γ(r+1)²·Σ|tᵢ| of the exact sum S
    /// (r as for [`ReduceOp::Sum`]): about twice the working precision, so
    /// sums of condition up to about 1/u are accurate to the last bits.
    /// Products ([`dot2`], [`Terms::square`]) are formed exactly (Dot2).
    /// Float and pair dtypes.
    Sum2,
}

impl ReduceOp {
    /// Every reduction.
    pub const ALL: [ReduceOp; 11] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::ArgMax,
        ReduceOp::ArgMin,
        ReduceOp::Logsumexp,
        ReduceOp::Mean,
        ReduceOp::Variance,
        ReduceOp::L2Norm,
        ReduceOp::Sum2,
    ];
    /// The name (as the CLI spells it).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::ArgMax => "argmax",
            ReduceOp::ArgMin => "argmin",
            ReduceOp::Logsumexp => "logsumexp",
            ReduceOp::Mean => "mean",
            ReduceOp::Variance => "variance",
            ReduceOp::L2Norm => "l2norm",
            ReduceOp::Sum2 => "sum2",
        }
    }
    /// The reduction of a name, if any.
    pub fn from_name(name: &str) -> Option<ReduceOp> {
        ReduceOp::ALL.iter().copied().find(|o| o.name() == name)
    }
    /// Whether the reduction is defined for terms of `dtype`.
    pub fn accepts(self, dtype: DType) -> bool {
        let class = dtype.info().class;
        match self {
            ReduceOp::Sum | ReduceOp::Prod => class != Class::Pair,
            ReduceOp::Sum2 => matches!(class, Class::Float | Class::Pair),
            ReduceOp::Max | ReduceOp::Min | ReduceOp::ArgMax | ReduceOp::ArgMin => {
                !matches!(class, Class::Complex | Class::Pair)
            }
            ReduceOp::Logsumexp | ReduceOp::Mean | ReduceOp::Variance | ReduceOp::L2Norm => {
                class == Class::Float
            }
        }
    }
}

/// Where a reduction's or a scan's terms come from: one operand, two of one
/// shape combined term by term in the carrier, or an output of a `map`
/// program (its terms are that output as [`crate::map()`] computes it, so a
/// reduction of it has the bits of the output mapped into an array and then
/// reduced, without the array).
#[derive(Clone, Copy, Debug)]
pub struct Terms<'v, 'a> {
    map: TermMap,
    of: Of<'v, 'a>,
}

#[derive(Clone, Copy, Debug)]
enum Of<'v, 'a> {
    Views {
        x: &'v ArrayView<'a>,
        y: Option<&'v ArrayView<'a>>,
    },
    Program {
        program: &'v Program,
        output: usize,
        inputs: &'v [ArrayView<'a>],
        shape: &'v [usize],
    },
}

impl<'v, 'a> Terms<'v, 'a> {
    fn one(map: TermMap, x: &'v ArrayView<'a>) -> Self {
        Terms {
            map,
            of: Of::Views { x, y: None },
        }
    }
    fn two(map: TermMap, x: &'v ArrayView<'a>, y: &'v ArrayView<'a>) -> Self {
        Terms {
            map,
            of: Of::Views { x, y: Some(y) },
        }
    }
    /// The values of `x`.
    pub fn of(x: &'v ArrayView<'a>) -> Self {
        Terms::one(TermMap::Value, x)
    }
    /// `x · x` (float dtypes).
    pub fn square(x: &'v ArrayView<'a>) -> Self {
        Terms::one(TermMap::Square, x)
    }
    /// `|x|` (float dtypes).
    pub fn abs(x: &'v ArrayView<'a>) -> Self {
        Terms::one(TermMap::Abs, x)
    }
    /// `x · y` (float dtypes; x and y of one dtype and shape).
    pub fn product(x: &'v ArrayView<'a>, y: &'v ArrayView<'a>) -> Self {
        Terms::two(TermMap::Product, x, y)
    }
    /// `(x - y)²` (float dtypes).
    pub fn squared_difference(x: &'v ArrayView<'a>, y: &'v ArrayView<'a>) -> Self {
        Terms::two(TermMap::SquaredDifference, x, y)
    }
    /// `|x - y|` (float dtypes).
    pub fn abs_difference(x: &'v ArrayView<'a>, y: &'v ArrayView<'a>) -> Self {
        Terms::two(TermMap::AbsDifference, x, y)
    }
    /// Output `output` of `program`, run with `inputs` (each broadcasting to
    /// `shape`) over a loop of `shape`: the reduction's or scan's operand
    /// shape, its axes numbered as the loop's (a program with no input reads
    /// the loop's shape alone, e.g. through its coordinates). The terms'
    /// dtype is that output's; each is computed in a tile of the program as
    /// [`crate::map()`] computes it, so no array of them is ever stored.
    ///
    /// Refused, before any write, by the call it is given to: a `shape`
    /// whose element count exceeds `isize::MAX` ([`Error::Overflow`]), what
    /// `map` refuses of the inputs (count, dtype, shape), a coordinate axis
    /// not below the rank of `shape`, an output index beyond the program's.
    pub fn program(
        program: &'v Program,
        output: usize,
        inputs: &'v [ArrayView<'a>],
        shape: &'v [usize],
    ) -> Self {
        Terms {
            map: TermMap::Program,
            of: Of::Program {
                program,
                output,
                inputs,
                shape,
            },
        }
    }
    /// How the terms are formed.
    pub fn map(&self) -> TermMap {
        self.map
    }

    /// The loop's shape and the terms' dtype, the operands checked against
    /// each other (a pair: one dtype and shape; mapped terms: a float dtype).
    pub(crate) fn shape_dtype(&self) -> Result<(&'v [usize], DType)> {
        match self.of {
            Of::Views { x, y } => {
                let dtype = x.dtype();
                if let Some(y) = y {
                    if y.dtype() != dtype {
                        return Err(Error::DTypeMismatch {
                            operand: "y".into(),
                            expected: dtype,
                            got: y.dtype(),
                        });
                    }
                    if y.shape() != x.shape() {
                        return Err(Error::Shape {
                            operand: "y".into(),
                            shape: y.shape().to_vec(),
                            target: x.shape().to_vec(),
                        });
                    }
                }
                if self.map != TermMap::Value && dtype.info().class != Class::Float {
                    return Err(Error::DTypeUnsupported {
                        operand: "x".into(),
                        dtype,
                        reason: format!("terms {:?} need a float dtype", self.map),
                    });
                }
                Ok((x.shape(), dtype))
            }
            Of::Program {
                program,
                output,
                shape,
                ..
            } => match program.outputs().get(output) {
                Some(&id) => {
                    // The loop is no view: its size is checked here, as a
                    // view's is when it is made.
                    count_of(shape, &format!("the terms' loop shape {shape:?}"))?;
                    Ok((shape, program.nodes[id.0].dtype))
                }
                None => Err(Error::Program {
                    node: format!("y{output}"),
                    reason: format!(
                        "the terms are output {output}, and the program has {} outputs",
                        program.outputs().len()
                    ),
                }),
            },
        }
    }

    /// The source of the terms reduced along `axes` (sorted, in range) into
    /// `carrier` on `tier`; a program is validated and planned here.
    pub(crate) fn source(&self, axes: &[usize], carrier: DType, tier: Tier) -> Result<Source> {
        let (shape, dtype) = self.shape_dtype()?;
        let no_conv = || Error::DTypeUnsupported {
            operand: "the terms".into(),
            dtype,
            reason: format!("no conversion into the reduction's carrier {carrier}"),
        };
        match self.of {
            Of::Views { x, y } => {
                let ops: Vec<&ArrayView<'_>> = match y {
                    Some(y) => vec![x, y],
                    None => vec![x],
                };
                Source::new(&ops, axes, self.map, carrier, tier).ok_or_else(no_conv)
            }
            Of::Program {
                program,
                output,
                inputs,
                ..
            } => {
                let perm: Vec<usize> = (0..shape.len())
                    .filter(|a| !axes.contains(a))
                    .chain(axes.iter().copied())
                    .collect();
                let plan = crate::map::plan_terms(tier, program, output, inputs, shape, &perm)?;
                Source::program(plan, shape, axes, carrier, tier).ok_or_else(no_conv)
            }
        }
    }
}

/// The carrier the terms of `dtype` reduce in: i64 for bool and signed
/// integers, u64 for unsigned, the accumulator of the spec for floats and
/// complex (f32 for f32 and narrower floats).
pub fn carrier(dtype: DType) -> DType {
    let info = dtype.info();
    match info.class {
        Class::Bool | Class::Int => DType::I64,
        Class::Uint => DType::U64,
        Class::Float | Class::Complex | Class::Pair => {
            DType::from_name(info.accumulator).unwrap_or(DType::F64)
        }
    }
}

/// The carrier of a compensated sum of `dtype`'s terms: the pair of its
/// float carrier (df32 for f32 and narrower floats, dd64 for f64), a pair
/// dtype itself.
pub fn pair_carrier(dtype: DType) -> DType {
    match carrier(dtype) {
        DType::F32 | DType::Df32 => DType::Df32,
        _ => DType::Dd64,
    }
}

/// The shape of a reduction's destination: `shape` without `axes`.
pub fn reduced_shape(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(i))
        .map(|(_, &n)| n)
        .collect()
}

/// The refusal of `op` on terms of `dtype`'s class.
fn unsupported(op: ReduceOp, dtype: DType) -> Error {
    Error::DTypeUnsupported {
        operand: "the terms".into(),
        dtype,
        reason: format!("{} is not defined for it", op.name()),
    }
}

pub(crate) use crate::checks::distinct_axes as check_axes;

/// Whether `dst` fits a reduction of `shape` along `axes`: the reduced shape,
/// or the same rank with extent 1 at every reduced axis.
fn fits(dst: &[usize], shape: &[usize], axes: &[usize]) -> bool {
    dst == reduced_shape(shape, axes).as_slice()
        || (dst.len() == shape.len()
            && dst.iter().zip(shape).enumerate().all(|(i, (&d, &s))| {
                if axes.contains(&i) {
                    d == 1
                } else {
                    d == s
                }
            }))
}

/// The refusals of one destination of a reduction that its shapes and
/// dtypes decide (the layout's are checked with the view).
fn check_reduction(
    name: &str,
    op: ReduceOp,
    shape: &[usize],
    dtype: DType,
    axes: &[usize],
    (dst_shape, dst_dtype): (&[usize], DType),
) -> Result<()> {
    if !op.accepts(dtype) {
        return Err(Error::DTypeUnsupported {
            operand: "the terms".into(),
            dtype,
            reason: format!("{} is not defined for it", op.name()),
        });
    }
    if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) && dst_dtype != DType::I64 {
        return Err(Error::DTypeMismatch {
            operand: name.into(),
            expected: DType::I64,
            got: dst_dtype,
        });
    }
    if !fits(dst_shape, shape, axes) {
        return Err(Error::Shape {
            operand: name.into(),
            shape: dst_shape.to_vec(),
            target: reduced_shape(shape, axes),
        });
    }
    let n = extent_product(axes.iter().map(|&a| shape[a]));
    let outputs = extent_product(dst_shape.iter().copied());
    if n == 0
        && outputs > 0
        && matches!(
            op,
            ReduceOp::Max | ReduceOp::Min | ReduceOp::ArgMax | ReduceOp::ArgMin
        )
    {
        let empty = axes.iter().copied().find(|&a| shape[a] == 0).unwrap_or(0);
        return Err(Error::Axis {
            operand: "the terms".into(),
            axis: empty,
            reason: format!(
                "is reduced and has extent 0: {} of no term is not defined",
                op.name()
            ),
        });
    }
    Ok(())
}

/// Whether [`reduce`] of terms of `shape` and `dtype` along `axes` by `op`
/// fits, decided from shapes and dtypes alone (no data, no work): the
/// destination's shape ([`reduced_shape`]) where it does, else the error
/// the call would give. With `dst` (its shape and dtype) the destination's
/// refusals are decided too (all but its layout's, which need the view).
///
/// # Errors
/// As [`reduce`]: an axis out of range or named twice ([`Error::Axis`]), an
/// `op` not defined for `dtype` ([`Error::DTypeUnsupported`]), a Max, Min or
/// Arg over an empty reduced extent ([`Error::Axis`]); with `dst`, its
/// shape ([`Error::Shape`]) or an Arg's destination not i64
/// ([`Error::DTypeMismatch`]).
pub fn reduce_query(
    op: ReduceOp,
    axes: &[usize],
    shape: &[usize],
    dtype: DType,
    dst: Option<(&[usize], DType)>,
) -> Result<Vec<usize>> {
    let axes = check_axes(axes, shape.len())?;
    let out = reduced_shape(shape, &axes);
    let out_dtype = if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
        DType::I64
    } else {
        dtype
    };
    check_reduction(
        "destination",
        op,
        shape,
        dtype,
        &axes,
        dst.unwrap_or((&out, out_dtype)),
    )?;
    Ok(out)
}

/// Reduce `x` along `axes` by `op` into `dst` (shape: `x`'s without `axes`,
/// or with extent 1 there; any dtype, but `i64` for ArgMax/ArgMin).
///
/// Refuses (before any write) an axis out of range or named twice, an `op`
/// not defined for `x`'s dtype, a destination of the wrong shape or dtype or
/// that reaches an element twice, a Max/Min/Arg of no term, an unavailable
/// tier. See the module documentation for each reduction's order and bound.
pub fn reduce(
    op: ReduceOp,
    axes: &[usize],
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    reduce_terms(axes, Terms::of(x), &mut [(op, dst)], exec)
}

/// [`reduce`] of `x` written over `x` itself: the results go to the
/// elements of `x` at index 0 along each of `axes` (the sub-array [`reduce`]
/// would write with extent 1 kept there), each with [`reduce`]'s bits into
/// `x`'s dtype; every other element of `x` is left as it was. An ArgMax or
/// ArgMin needs an `i64` array, whose positions replace its values.
///
/// All or nothing: the results are computed into a buffer of the reduced
/// shape, which the call allocates, before the first element of `x` is
/// written. A reduction with no result (an extent 0 along an axis not
/// reduced) writes nothing.
///
/// # Errors
/// Before any write, as [`reduce`] with that sub-array as destination: an
/// axis out of range or named twice, an `op` not defined for `x`'s dtype, an
/// Arg of an array that is not `i64` ([`Error::DTypeMismatch`]), a Max, Min
/// or Arg of no term, an `x` that reaches an element twice, an unavailable
/// tier; [`Error::Axis`] where a reduced axis has extent 0 but results are
/// due (there is no element at index 0 to hold them); [`Error::Alloc`]
/// where the buffer cannot be allocated.
pub fn reduce_in_place(
    op: ReduceOp,
    axes: &[usize],
    x: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    exec.resolve_tier_for(crate::tier::Engine::Reduce)?;
    let checked = check_axes(axes, x.shape().len())?;
    let kept: Vec<usize> = x
        .shape()
        .iter()
        .enumerate()
        .map(|(a, &e)| if checked.contains(&a) { 1 } else { e })
        .collect();
    reduce_query(op, axes, x.shape(), x.dtype(), Some((&kept, x.dtype())))?;
    crate::checks::check_destination(x)?;
    let results = crate::array::element_count(&kept).ok_or_else(|| Error::Overflow {
        operand: "the in-place reduction's results".into(),
    })?;
    let empty_reduced = checked.iter().find(|&&a| x.shape()[a] == 0);
    if let Some(&a) = empty_reduced {
        if results == 0 {
            return Ok(());
        }
        return Err(Error::Axis {
            operand: "x".into(),
            axis: a,
            reason: "has extent 0: an in-place reduction writes its results at index 0 of each \
                     reduced axis"
                .into(),
        });
    }
    let bytes = results * x.dtype().info().item_bytes;
    let mut buf = crate::alloc::try_zeroed::<u8>(bytes, "the in-place reduction's results")?;
    let mut held = ArrayViewMut::contiguous(x.dtype(), &kept, &mut buf)?;
    reduce(op, axes, &x.view(), &mut held, exec)?;
    // The sub-array at index 0 of the reduced axes: x's strides and offset
    // with extent 1 there (inside x, which has an element at each index 0).
    let (strides, offset) = (x.strides().to_vec(), x.layout().offset);
    let dtype = x.dtype();
    let mut dst = ArrayViewMut::new(dtype, &kept, &strides, offset, x.data_mut())?;
    crate::cast::cast(crate::cast::CastMode::Default, &held.view(), &mut dst, exec)
}

/// Several reductions of one operand along the same axes, each into its own
/// destination, with each one's bits alone. Every destination is checked
/// before any is written.
pub fn reduce_many(
    axes: &[usize],
    x: &ArrayView<'_>,
    outs: &mut [(ReduceOp, &mut ArrayViewMut<'_>)],
    exec: &Exec,
) -> Result<()> {
    reduce_terms(axes, Terms::of(x), outs, exec)
}

/// [`reduce_many`] over any term source ([`Terms`]): so `Σ x·x` of a
/// program `y0 = x0 * x0` is one pass with no temporary. A pair's operands
/// must have one dtype and one shape; the fixed maps ([`Terms::square`] …)
/// need a float dtype; a program's terms may have any dtype its output has,
/// each reduction accepting it as it accepts an operand of that dtype.
pub fn reduce_terms(
    axes: &[usize],
    terms: Terms<'_, '_>,
    outs: &mut [(ReduceOp, &mut ArrayViewMut<'_>)],
    exec: &Exec,
) -> Result<()> {
    let tier = exec.resolve_tier_for(crate::tier::Engine::Reduce)?;
    let (shape, dtype) = terms.shape_dtype()?;
    let axes = check_axes(axes, shape.len())?;
    if outs.is_empty() {
        return Err(Error::Attribute {
            name: "outs".into(),
            reason: "a reduction needs at least one destination".into(),
        });
    }
    for (i, (op, dst)) in outs.iter().enumerate() {
        let name = if outs.len() == 1 {
            "destination".to_string()
        } else {
            format!("destination {i}")
        };
        check_reduction(&name, *op, shape, dtype, &axes, (dst.shape(), dst.dtype()))?;
        check_destination(dst).map_err(|e| match e {
            Error::Layout { reason, .. } => Error::Layout {
                operand: name.clone(),
                reason,
            },
            e => e,
        })?;
    }
    let c = carrier(dtype);
    let threads = exec.thread_count();
    // Compensated sums: float terms whose map rounds nothing (the values,
    // their magnitudes) are read as they are; products, squares, programs
    // and pair dtypes run over the terms as pairs, a source of their own.
    if outs.iter().any(|(op, _)| *op == ReduceOp::Sum2) {
        let float = matches!(c, DType::F32 | DType::F64);
        let exact_map = matches!(terms.map(), TermMap::Value | TermMap::Abs);
        let product = float && terms.map() == TermMap::Product;
        let plain = float && exact_map || product;
        let src2 = terms.source(&axes, if plain { c } else { pair_carrier(dtype) }, tier)?;
        for (op, dst) in outs.iter_mut() {
            if *op == ReduceOp::Sum2 {
                use compensated::{FloatDot2, FloatSum2, PairSum};
                let s = &src2;
                match (plain, c) {
                    (true, DType::F32) if product => {
                        compensated_out::<f32, f32, _>(s, &FloatDot2(tier), threads, dst, exec)?
                    }
                    (true, _) if product => {
                        compensated_out::<f64, f64, _>(s, &FloatDot2(tier), threads, dst, exec)?
                    }
                    (true, DType::F32) => {
                        compensated_out::<f32, f32, _>(s, &FloatSum2(tier), threads, dst, exec)?
                    }
                    (true, _) => {
                        compensated_out::<f64, f64, _>(s, &FloatSum2(tier), threads, dst, exec)?
                    }
                    (false, _) => match pair_carrier(dtype) {
                        DType::Df32 => compensated_out::<Pair<f32>, f32, _>(
                            s,
                            &PairSum(tier),
                            threads,
                            dst,
                            exec,
                        )?,
                        _ => compensated_out::<Pair<f64>, f64, _>(
                            s,
                            &PairSum(tier),
                            threads,
                            dst,
                            exec,
                        )?,
                    },
                }
            }
        }
        if outs.iter().all(|(op, _)| *op == ReduceOp::Sum2) {
            return Ok(());
        }
    }
    let src = terms.source(&axes, c, tier)?;
    // One-pass float reductions of several outputs share one loop: each block
    // of terms is fetched (converted, mapped) once.
    let fusable = |op: ReduceOp| {
        !matches!(
            op,
            ReduceOp::Logsumexp | ReduceOp::Variance | ReduceOp::L2Norm
        ) && matches!(c, DType::F32 | DType::F64)
    };
    let fused: Vec<usize> = (0..outs.len())
        .filter(|&i| outs[i].0 != ReduceOp::Sum2 && fusable(outs[i].0))
        .collect();
    let mut done = vec![false; outs.len()];
    if fused.len() > 1 {
        for group in fused.chunks(FUSED) {
            let ops: Vec<ReduceOp> = group.iter().map(|&i| outs[i].0).collect();
            match c {
                DType::F32 => fused_out::<f32>(&ops, group, &src, tier, threads, outs, exec)?,
                _ => fused_out::<f64>(&ops, group, &src, tier, threads, outs, exec)?,
            }
            for &i in group {
                done[i] = true;
            }
        }
    }
    for (k, (op, dst)) in outs.iter_mut().enumerate() {
        if done[k] || *op == ReduceOp::Sum2 {
            continue;
        }
        match c {
            DType::F32 => float_out::<f32>(*op, &src, tier, threads, dst, exec)?,
            DType::F64 => float_out::<f64>(*op, &src, tier, threads, dst, exec)?,
            DType::C64 => complex_out::<f32>(*op, &src, threads, dst, exec)?,
            DType::C128 => complex_out::<f64>(*op, &src, threads, dst, exec)?,
            DType::I64 => int_out::<i64>(*op, &src, threads, dst, exec)?,
            DType::U64 => int_out::<u64>(*op, &src, threads, dst, exec)?,
            other => {
                return Err(Error::DTypeUnsupported {
                    operand: "the terms".into(),
                    dtype: other,
                    reason: "it is not a reduction carrier (f32, f64, c64, c128, i64, u64)".into(),
                })
            }
        }
    }
    Ok(())
}

/// Several one-pass float reductions in one loop ([`Fused`]), each result
/// written to its own destination.
fn fused_out<F: LaneFloat + Carrier>(
    ops: &[ReduceOp],
    group: &[usize],
    src: &Source,
    tier: Tier,
    threads: usize,
    outs: &mut [(ReduceOp, &mut ArrayViewMut<'_>)],
    exec: &Exec,
) -> Result<()> {
    let res = run_pass::<F, _>(
        src,
        &Fused {
            tier,
            ops: ops.to_vec(),
        },
        threads,
    )?;
    let n = F::from_count(src.n);
    for (k, (&i, &op)) in group.iter().zip(ops).enumerate() {
        let dst = &mut *outs[i].1;
        match op {
            ReduceOp::ArgMax | ReduceOp::ArgMin => {
                let p: Vec<i64> = res.iter().map(|v| v[k].1 as i64).collect();
                write(&p, dst, exec)?;
            }
            ReduceOp::Mean => {
                let m: Vec<F> = res.iter().map(|v| v[k].0 / n).collect();
                write(&m, dst, exec)?;
            }
            _ => {
                let r: Vec<F> = res.iter().map(|v| v[k].0).collect();
                write(&r, dst, exec)?;
            }
        }
    }
    Ok(())
}

/// A compensated pass (a [`ReduceOp::Sum2`] of pair or float terms, or a
/// Dot2 of two float operands) into `dst`: each result settled, then
/// rounded once.
fn compensated_out<C, F, P>(
    src: &Source,
    pass: &P,
    threads: usize,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()>
where
    C: Carrier,
    F: compensated::FloatBlock + Send + Sync,
    P: engine::Pass<C, V = Pair<F>>,
    Pair<F>: Carrier,
{
    let res: Vec<Pair<F>> = run_pass(src, pass, threads)?;
    let res: Vec<Pair<F>> = res.into_iter().map(compensated::settle).collect();
    write(&res, dst, exec)
}

/// Round the carrier results into the destination (a cast of validated
/// views: it cannot be refused), NaN results made the positive NaN first
/// ([`crate::cast::cast_results`]).
fn write<T: Element>(res: &[T], dst: &mut ArrayViewMut<'_>, exec: &Exec) -> Result<()> {
    crate::cast::cast_results(res, dst, exec)
}

fn positions<V>(res: &[(V, usize)]) -> Vec<i64> {
    res.iter().map(|&(_, i)| i as i64).collect()
}

fn float_out<F: LaneFloat + Carrier>(
    op: ReduceOp,
    src: &Source,
    tier: Tier,
    threads: usize,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let res: Vec<F> = match op {
        ReduceOp::Sum => run_pass(src, &FSum(tier), threads)?,
        ReduceOp::Prod => run_pass(src, &FProd(tier), threads)?,
        ReduceOp::Max => run_pass(src, &FExt(true, tier), threads)?,
        ReduceOp::Min => run_pass(src, &FExt(false, tier), threads)?,
        ReduceOp::ArgMax | ReduceOp::ArgMin => {
            let r = run_pass::<F, _>(src, &FArg(op == ReduceOp::ArgMax, tier), threads)?;
            return write(&positions(&r), dst, exec);
        }
        ReduceOp::Logsumexp => logsumexp::<F>(src, tier, threads)?,
        ReduceOp::Mean => mean::<F>(src, tier, threads)?,
        ReduceOp::Variance => variance::<F>(src, tier, threads)?,
        ReduceOp::L2Norm => l2::<F>(src, tier, threads)?,
        // A source of pair terms of its own (`reduce_terms`).
        ReduceOp::Sum2 => return Err(unsupported(op, F::CARRIER)),
    };
    write(&res, dst, exec)
}

pub(crate) fn logsumexp<F: LaneFloat + Carrier>(
    src: &Source,
    tier: Tier,
    threads: usize,
) -> Result<Vec<F>> {
    let m: Vec<F> = run_pass(src, &FExt(true, tier), threads)?;
    let c: Vec<F> = m.iter().map(|&v| lse_centre(v)).collect();
    let exp = F::unary_kernel(tier, crate::Kind::Exp);
    let s: Vec<F> = run_pass(src, &LseSum { tier, c, exp }, threads)?;
    Ok(m.iter().zip(&s).map(|(&m, &s)| lse_result(m, s)).collect())
}

/// Logsumexp's centre: the maximum where finite, else 0.
pub(crate) fn lse_centre<F: LaneFloat>(m: F) -> F {
    if m.is_finite() {
        m
    } else {
        F::ZERO
    }
}

/// Logsumexp from the maximum `m` and the sum `s` of `e(x - c)`.
pub(crate) fn lse_result<F: LaneFloat>(m: F, s: F) -> F {
    if m.is_nan() {
        m
    } else {
        lse_centre(m) + s.ln()
    }
}

/// The L2 norm from the largest magnitude `s` and `Σ (x / s)²`.
pub(crate) fn l2_result<F: LaneFloat>(s: F, q: F) -> F {
    if s == F::ZERO || !s.is_finite() {
        s
    } else {
        s * q.sqrt()
    }
}

/// The variance from the mean `c`, `Σd²`, `Σd` and the count `n`.
pub(crate) fn variance_result<F: LaneFloat>(c: F, (s2, s1): (F, F), n: F) -> F {
    if c.is_nan() {
        return c;
    }
    if s2 == F::INF {
        return s2;
    }
    let v = (s2 - s1 * (s1 / n)) / n;
    if v < F::ZERO {
        F::ZERO
    } else {
        v
    }
}

pub(crate) fn l2<F: LaneFloat + Carrier>(
    src: &Source,
    tier: Tier,
    threads: usize,
) -> Result<Vec<F>> {
    let s: Vec<F> = run_pass::<F, _>(src, &AbsMax, threads)?
        .into_iter()
        .map(|v| if src.n == 0 { F::ZERO } else { v })
        .collect();
    let q: Vec<F> = run_pass(src, &ScaledSquares { tier, s: s.clone() }, threads)?;
    Ok(s.iter().zip(&q).map(|(&s, &q)| l2_result(s, q)).collect())
}

pub(crate) fn mean<F: LaneFloat + Carrier>(
    src: &Source,
    tier: Tier,
    threads: usize,
) -> Result<Vec<F>> {
    let s: Vec<F> = run_pass(src, &FSum(tier), threads)?;
    let n = F::from_count(src.n);
    Ok(s.iter().map(|&v| v / n).collect())
}

pub(crate) fn variance<F: LaneFloat + Carrier>(
    src: &Source,
    tier: Tier,
    threads: usize,
) -> Result<Vec<F>> {
    let c = mean::<F>(src, tier, threads)?;
    let n = F::from_count(src.n);
    let sums: Vec<(F, F)> = run_pass(src, &DevSums { tier, c: c.clone() }, threads)?;
    Ok(c.iter()
        .zip(&sums)
        .map(|(&c, &s)| variance_result(c, s, n))
        .collect())
}

fn complex_out<F: LaneFloat>(
    op: ReduceOp,
    src: &Source,
    threads: usize,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()>
where
    Complex<F>: Carrier,
{
    let res: Vec<Complex<F>> = match op {
        ReduceOp::Sum => run_pass(src, &CSumProd(false), threads)?,
        ReduceOp::Prod => run_pass(src, &CSumProd(true), threads)?,
        // Refused by `ReduceOp::accepts` before any work.
        _ => return Err(unsupported(op, DType::C64)),
    };
    write(&res, dst, exec)
}

fn int_out<I: IntCarrier>(
    op: ReduceOp,
    src: &Source,
    threads: usize,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let res: Vec<I> = match op {
        ReduceOp::Sum => run_pass(src, &ISum(false), threads)?,
        ReduceOp::Prod => run_pass(src, &ISum(true), threads)?,
        ReduceOp::Max => run_pass(src, &IExt(true), threads)?,
        ReduceOp::Min => run_pass(src, &IExt(false), threads)?,
        ReduceOp::ArgMax | ReduceOp::ArgMin => {
            let r = run_pass::<I, _>(src, &IArg(op == ReduceOp::ArgMax), threads)?;
            return write(&positions(&r), dst, exec);
        }
        // Refused by `ReduceOp::accepts` before any work.
        _ => return Err(unsupported(op, DType::I64)),
    };
    write(&res, dst, exec)
}

/// The dot product `Σ x·y` along `axes` (products rounded, then summed in
/// lane order) into `dst`. Float dtypes.
pub fn dot(
    axes: &[usize],
    x: &ArrayView<'_>,
    y: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    reduce_terms(
        axes,
        Terms::product(x, y),
        &mut [(ReduceOp::Sum, dst)],
        exec,
    )
}

/// The conjugated dot product `Σ conj(x)·y` of complex `x` and `y` (c64
/// or c128, one dtype and shape) along `axes` into `dst`: each term is the
/// `map` program `conj(x0) * x1` (the `conj` kind, then the `mul` kind's
/// stated formula, each part rounded as that kind rounds it), computed tile
/// by tile without a temporary, and the terms summed in lane order per
/// part. The same bits as `conj` and `mul` called one after the other and
/// their result reduced by [`ReduceOp::Sum`]; each part within
/// γ(r + 2)·Σ(|Re xᵢ||Re yᵢ| + |Im xᵢ||Im yᵢ|) (or the imaginary part's
/// cross terms) of the exact value, r as [`ReduceOp::Sum`]'s.
///
/// # Errors
/// [`Error::DTypeUnsupported`] for a dtype that is not complex;
/// [`Error::DTypeMismatch`] or [`Error::Shape`] for a `y` of another dtype
/// or shape than `x`; then [`reduce`]'s refusals.
pub fn dot_conj(
    axes: &[usize],
    x: &ArrayView<'_>,
    y: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let d = x.dtype();
    if d.info().class != Class::Complex {
        return Err(Error::DTypeUnsupported {
            operand: "x".into(),
            dtype: d,
            reason: "dot_conj takes complex operands (c64, c128)".into(),
        });
    }
    // y against x as the views of a product's terms are checked (that map
    // itself takes floats alone).
    if y.dtype() != d || y.shape() != x.shape() {
        return Terms {
            map: TermMap::Value,
            of: Of::Views { x, y: Some(y) },
        }
        .shape_dtype()
        .map(|_| ());
    }
    let program = Program::parse("y0 = conj(x0) * x1", &[d, d])?;
    let inputs = [x.clone(), y.clone()];
    reduce_terms(
        axes,
        Terms::program(&program, 0, &inputs, x.shape()),
        &mut [(ReduceOp::Sum, dst)],
        exec,
    )
}

/// The compensated dot product `Σ x·y` along `axes` into `dst`
/// (Ogita–Rump–Oishi's Dot2 in the lane order: each product formed exactly
/// as a pair by TwoProd, summed by [`ReduceOp::Sum2`], rounded once):
/// within u·|S| + 2γ(r+1)²·Σ|xᵢyᵢ| of the exact dot product S. Float and
/// pair dtypes.
pub fn dot2(
    axes: &[usize],
    x: &ArrayView<'_>,
    y: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    reduce_terms(
        axes,
        Terms::product(x, y),
        &mut [(ReduceOp::Sum2, dst)],
        exec,
    )
}

/// The sum of squares `Σ x²` in lane order. Float dtypes.
pub fn sum_squares(
    axes: &[usize],
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    reduce_terms(axes, Terms::square(x), &mut [(ReduceOp::Sum, dst)], exec)
}

/// The L1 norm `Σ |x|` in lane order. Float dtypes.
pub fn l1_norm(
    axes: &[usize],
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    reduce_terms(axes, Terms::abs(x), &mut [(ReduceOp::Sum, dst)], exec)
}

/// The squared Euclidean distance `Σ (x - y)²` in lane order. Float dtypes.
pub fn squared_distance(
    axes: &[usize],
    x: &ArrayView<'_>,
    y: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    reduce_terms(
        axes,
        Terms::squared_difference(x, y),
        &mut [(ReduceOp::Sum, dst)],
        exec,
    )
}

/// The L1 distance `Σ |x - y|` in lane order. Float dtypes.
pub fn l1_distance(
    axes: &[usize],
    x: &ArrayView<'_>,
    y: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    reduce_terms(
        axes,
        Terms::abs_difference(x, y),
        &mut [(ReduceOp::Sum, dst)],
        exec,
    )
}

/// The L2 norm `√Σ x²` along `axes` without overflow or underflow for
/// representable answers ([`ReduceOp::L2Norm`]). Float dtypes.
pub fn l2_norm(
    axes: &[usize],
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    reduce(ReduceOp::L2Norm, axes, x, dst, exec)
}

/// The minimum and the maximum of `x` along `axes` in one call (IEEE
/// 754-2019: NaN propagates, -0 < +0). Both destinations are checked before
/// either is written.
pub fn min_max<'a>(
    axes: &[usize],
    x: &ArrayView<'_>,
    min: &mut ArrayViewMut<'a>,
    max: &mut ArrayViewMut<'a>,
    exec: &Exec,
) -> Result<()> {
    reduce_many(
        axes,
        x,
        &mut [(ReduceOp::Min, min), (ReduceOp::Max, max)],
        exec,
    )
}
