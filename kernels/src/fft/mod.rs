//! Fourier transforms: [`c2c`], [`r2c`] and [`c2r`] over any non-empty,
//! strictly increasing set of axes of arrays of any layout and batch, and the
//! plans behind them ([`FftPlanner`], [`FftPlan`], [`RealFftPlan`]).
//!
//! # Contract
//!
//! * **What.** Along each named axis of n points, the forward transform is
//!   `y_k = Σ_j x_j·exp(−2πi·jk/n)` and the inverse `y_k = Σ_j
//!   x_j·exp(+2πi·jk/n)`, both unnormalised unless [`Norm`] says otherwise.
//!   A transform of zero points is the empty sum: zeros. [`r2c`] keeps bins
//!   `0..=n/2` along the last named axis (n = 0: one bin of +0); [`c2r`]
//!   reads `n/2 + 1` bins there (n the destination's extent) and is the
//!   inverse transform along the other named axes, then along the last the
//!   real parts of the inverse transform of the Hermitian extension
//!   `X'_k = X_k` (k ≤ n/2), `conj(X_{n−k})` above: the imaginary parts of
//!   bin 0 and, for even n, of bin n/2 never contribute, and it is this one
//!   linear map for every operand, Hermitian or not.
//! * **Dtypes.** complex64 and complex128 (f32 and f64 on the real side); an
//!   operand and its destination are of one precision.
//! * **Determinism.** Each line is computed by a plan that is a function of
//!   its length, precision and direction alone (`plan.rs` states the recipe),
//!   by the same operations in the same order whatever its position in a
//!   batch, the layouts, the thread count or the tier; the passes are in the
//!   order `axes.rs` states. So the bits are a function of the operand's
//!   values alone (a NaN result's sign and payload aside).
//! * **Bound.** Barring overflow and underflow, the result `ŷ` of N points
//!   (the product of the points along the axes) satisfies
//!   `‖ŷ − y‖₂ ≤ ε·u·√N·‖x‖₂` (scaled by the normalisation), u the unit
//!   roundoff of the parts, ‖x‖₂ the operand's norm (for c2r √2 times it,
//!   the parts that never contribute included), ε the sum over the axes of
//!   each line's e(n) (`bound.rs`), plus 2 when normalised: see
//!   [`error_factor`] and [`FftPlan::error_factor`].
//! * **Refusals**, all before any write, as a typed [`Error`]: empty,
//!   unsorted or repeated axes ([`Error::Attribute`]); an axis out of range
//!   ([`Error::Axis`]); an operand that is not complex64/complex128 (or, for
//!   r2c, f32/f64) ([`Error::DTypeUnsupported`]); a destination of another
//!   dtype than the transform gives ([`Error::DTypeMismatch`]: mixed
//!   precisions included); shapes that do not match, the bin count included
//!   ([`Error::Shape`]); a destination reaching an element twice
//!   ([`Error::Layout`]); scratch or plans that cannot be allocated
//!   ([`Error::Alloc`]); an unavailable tier. An operand cannot overlap its
//!   destination: the borrows of [`ArrayView`] and [`ArrayViewMut`] forbid it.

mod axes;
mod bluestein;
pub mod bound;
mod butterflies;
mod four_step;
mod plan;
mod radix;
mod real;
mod simd;
mod twiddle;

pub use plan::{Algorithm, FftPlan, FftPlanner, BLUESTEIN_PRIME, FOUR_STEP_BYTES};
pub use real::{RealFftPlan, HALF_LENGTH_MIN};

use crate::array::{ArrayView, ArrayViewMut};
use crate::checks::{check_destination, shape_err};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::DType;
use axes::{LineOp, Pass, Side};
use num_complex::Complex;
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The real part types of the transforms: `f32` and `f64`.
pub trait FftFloat:
    sealed::Sealed
    + Copy
    + Send
    + Sync
    + Default
    + PartialEq
    + std::fmt::Debug
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Neg<Output = Self>
    + 'static
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// ½.
    const HALF: Self;
    /// Whether twiddles are evaluated in double-double (f64) or f64 (f32).
    const TWIDDLE_DD: bool;
    /// The real dtype.
    const REAL: DType;
    /// The complex dtype.
    const COMPLEX: DType;
    /// The unit roundoff.
    const UNIT_ROUNDOFF: f64;
    /// Round an f64 to nearest.
    fn from_f64(v: f64) -> Self;
    /// Widen exactly.
    fn to_f64(self) -> f64;
}

impl FftFloat for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const HALF: f32 = 0.5;
    const TWIDDLE_DD: bool = false;
    const REAL: DType = DType::F32;
    const COMPLEX: DType = DType::C64;
    const UNIT_ROUNDOFF: f64 = 1.0 / 16_777_216.0;
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl FftFloat for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    const HALF: f64 = 0.5;
    const TWIDDLE_DD: bool = true;
    const REAL: DType = DType::F64;
    const COMPLEX: DType = DType::C128;
    const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;
    fn from_f64(v: f64) -> f64 {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// The sign of the exponent: `Forward` is `exp(−2πi·jk/n)`, `Inverse` `exp(+2πi·jk/n)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `exp(−2πi·jk/n)`.
    #[default]
    Forward,
    /// `exp(+2πi·jk/n)`.
    Inverse,
}

/// The scale of a transform of N points (the product along the axes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Norm {
    /// No scale either way (the default): an inverse of a forward transform
    /// is N times the operand.
    #[default]
    None,
    /// numpy's "backward": the inverse (and c2r) scaled by 1/N, the forward unscaled.
    Backward,
    /// Both directions scaled by 1/√N.
    Ortho,
    /// numpy's "forward": the forward (and r2c) scaled by 1/N, the inverse unscaled.
    Forward,
}

impl Norm {
    /// The scale of a transform of `points` in `direction`, or None for 1.
    fn scale(self, points: usize, direction: Direction) -> Option<f64> {
        let n = points as f64;
        match (self, direction) {
            (Norm::None, _) => None,
            (Norm::Backward, Direction::Inverse) | (Norm::Forward, Direction::Forward) => {
                Some(1.0 / n)
            }
            (Norm::Ortho, _) => Some(1.0 / n.sqrt()),
            _ => None,
        }
    }
}

/// Which transform a bound is asked of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transform {
    /// Complex to complex.
    C2c,
    /// Real to complex (the last length is the real one).
    R2c,
    /// Complex to real (the last length is the real one).
    C2r,
}

/// ε of the bound `‖ŷ − y‖₂ ≤ ε·u·√N·‖x‖₂` of a transform whose axes have
/// `lengths` points (in axis order; for r2c and c2r the last is the real
/// length), of complex128 precision where `double`, else complex64, with
/// `norm`. Builds (and caches) the plans; [`Error::Alloc`] where it cannot.
pub fn error_factor(
    transform: Transform,
    lengths: &[usize],
    norm: Norm,
    double: bool,
    direction: Direction,
) -> Result<f64> {
    fn go<T: FftFloat>(t: Transform, lengths: &[usize], dir: Direction) -> Result<f64> {
        let mut e = 0.0;
        let last = lengths.len().saturating_sub(1);
        for (i, &n) in lengths.iter().enumerate() {
            e += match t {
                Transform::R2c if i == last => {
                    RealFftPlan::<T>::new(n, Direction::Forward)?.error_factor()
                }
                Transform::C2r if i == last => {
                    RealFftPlan::<T>::new(n, Direction::Inverse)?.error_factor()
                }
                Transform::R2c => plan::global()
                    .plan::<T>(n, Direction::Forward)?
                    .error_factor(),
                Transform::C2r => plan::global()
                    .plan::<T>(n, Direction::Inverse)?
                    .error_factor(),
                Transform::C2c => plan::global().plan::<T>(n, dir)?.error_factor(),
            };
        }
        Ok(e)
    }
    let e = if double {
        go::<f64>(transform, lengths, direction)?
    } else {
        go::<f32>(transform, lengths, direction)?
    };
    Ok(if norm == Norm::None { e } else { e + 2.0 })
}

fn complex_of(d: DType) -> Option<DType> {
    match d {
        DType::F32 => Some(DType::C64),
        DType::F64 => Some(DType::C128),
        _ => None,
    }
}

fn real_of(d: DType) -> Option<DType> {
    match d {
        DType::C64 => Some(DType::F32),
        DType::C128 => Some(DType::F64),
        _ => None,
    }
}

fn check_dst_dtype(expected: DType, dst: &ArrayViewMut<'_>) -> Result<()> {
    if dst.dtype() != expected {
        return Err(Error::DTypeMismatch {
            operand: "destination".into(),
            expected,
            got: dst.dtype(),
        });
    }
    Ok(())
}

/// The complex transform `direction` of `x` along each of `axes` into `dst`
/// (same shape and dtype, complex64 or complex128), scaled as `norm` says;
/// the module documentation states the contract.
///
/// ```
/// use num_complex::Complex32;
/// use tessera::fft::{c2c, Direction, Norm};
/// use tessera::{ArrayView, ArrayViewMut, Exec};
/// let x = [Complex32::new(1.0, 0.0), Complex32::new(2.0, 0.0)];
/// let mut y = [Complex32::new(0.0, 0.0); 2];
/// c2c(&[0], Direction::Forward, Norm::None,
///     &ArrayView::from_slice(&x, &[2])?, &mut ArrayViewMut::from_slice(&mut y, &[2])?,
///     &Exec::default())?;
/// assert_eq!(y, [Complex32::new(3.0, 0.0), Complex32::new(-1.0, 0.0)]);
/// # Ok::<(), tessera::Error>(())
/// ```
pub fn c2c(
    axes: &[usize],
    direction: Direction,
    norm: Norm,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    crate::checks::increasing_axes(axes, x.shape().len(), "c2c")?;
    if real_of(x.dtype()).is_none() {
        return Err(Error::DTypeUnsupported {
            operand: "x".into(),
            dtype: x.dtype(),
            reason: "c2c takes complex64 or complex128".into(),
        });
    }
    check_dst_dtype(x.dtype(), dst)?;
    if dst.shape() != x.shape() {
        return Err(shape_err("destination", dst.shape(), x.shape()));
    }
    check_destination(dst)?;
    let tier = exec.resolve_tier()?;
    match x.dtype() {
        DType::C64 => run_c2c::<f32>(axes, direction, norm, x, dst, exec, tier),
        _ => run_c2c::<f64>(axes, direction, norm, x, dst, exec, tier),
    }
}

/// The forward real transform of `x` (f32 or f64) along each of `axes` into
/// `dst` (complex64 or complex128 of its precision), bins `0..=n/2` along
/// the last of `axes` (n = 0: one bin of +0), scaled as `norm` says; the
/// module documentation states the contract.
pub fn r2c(
    axes: &[usize],
    norm: Norm,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    crate::checks::increasing_axes(axes, x.shape().len(), "r2c")?;
    let Some(cd) = complex_of(x.dtype()) else {
        return Err(Error::DTypeUnsupported {
            operand: "x".into(),
            dtype: x.dtype(),
            reason: "r2c takes f32 or f64".into(),
        });
    };
    check_dst_dtype(cd, dst)?;
    let last = *axes.last().unwrap_or(&0);
    let mut want = x.shape().to_vec();
    want[last] = want[last] / 2 + 1;
    if dst.shape() != want.as_slice() {
        return Err(shape_err("destination", dst.shape(), &want));
    }
    check_destination(dst)?;
    let tier = exec.resolve_tier()?;
    match x.dtype() {
        DType::F32 => run_r2c::<f32>(axes, norm, x, dst, exec, tier),
        _ => run_r2c::<f64>(axes, norm, x, dst, exec, tier),
    }
}

/// The inverse real transform of `x` (complex64 or complex128) along each
/// of `axes` into `dst` (f32 or f64 of its precision): `x` holds `n/2 + 1`
/// bins along the last of `axes`, n `dst`'s extent there; scaled as `norm`
/// says; the module documentation states the linear map and the contract.
pub fn c2r(
    axes: &[usize],
    norm: Norm,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    crate::checks::increasing_axes(axes, dst.shape().len(), "c2r")?;
    let Some(rd) = real_of(x.dtype()) else {
        return Err(Error::DTypeUnsupported {
            operand: "x".into(),
            dtype: x.dtype(),
            reason: "c2r takes complex64 or complex128".into(),
        });
    };
    check_dst_dtype(rd, dst)?;
    let last = *axes.last().unwrap_or(&0);
    let mut want = dst.shape().to_vec();
    want[last] = want[last] / 2 + 1;
    if x.shape() != want.as_slice() {
        return Err(shape_err("x", x.shape(), &want));
    }
    check_destination(dst)?;
    let tier = exec.resolve_tier()?;
    match x.dtype() {
        DType::C64 => run_c2r::<f32>(axes, norm, x, dst, exec, tier),
        _ => run_c2r::<f64>(axes, norm, x, dst, exec, tier),
    }
}

/// The side of a view along `axis`.
fn side(base: *mut u8, shape_len: usize, strides: &[isize], offset: usize, axis: usize) -> Side {
    let _ = shape_len;
    Side {
        base,
        offset: offset as isize,
        step: strides[axis],
        others: strides
            .iter()
            .enumerate()
            .filter(|&(a, _)| a != axis)
            .map(|(_, &s)| s)
            .collect(),
    }
}

fn others(shape: &[usize], axis: usize) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter(|&(a, _)| a != axis)
        .map(|(_, &e)| e)
        .collect()
}

fn points(shape: &[usize], axes: &[usize]) -> usize {
    axes.iter().map(|&a| shape[a]).product()
}

fn scale_of<T: FftFloat>(norm: Norm, n: usize, dir: Direction) -> Option<T> {
    norm.scale(n, dir).map(T::from_f64)
}

fn execute<T: FftFloat>(passes: &[Pass<T>], exec: &Exec, tier: crate::Tier) -> Result<()> {
    let threads = exec.thread_count();
    let mut scratch = axes::alloc_scratch(passes, threads)?;
    // SAFETY: the passes were built from validated views (every line inside
    // its bytes), the destination reaches no element twice, and an in-place
    // pass reads only the lines it writes.
    unsafe { axes::run(passes, &mut scratch, simd::Simd::of(tier), threads) };
    Ok(())
}

fn zero_fill<T: FftFloat>(dst: &mut ArrayViewMut<'_>) {
    let l = dst.layout().clone();
    let base = dst.data_mut().as_mut_ptr() as *mut Complex<T>;
    let rank = l.shape.len();
    let mut idx = vec![0usize; rank];
    let count: usize = l.shape.iter().product();
    for _ in 0..count {
        let off = l.offset as isize
            + idx
                .iter()
                .zip(&l.strides)
                .map(|(&i, &s)| i as isize * s)
                .sum::<isize>();
        // SAFETY: the validated layout addresses this element inside the bytes.
        unsafe {
            base.offset(off)
                .write_unaligned(Complex::new(T::ZERO, T::ZERO))
        };
        for a in (0..rank).rev() {
            idx[a] += 1;
            if idx[a] < l.shape[a] {
                break;
            }
            idx[a] = 0;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run_c2c<T: FftFloat>(
    axes: &[usize],
    direction: Direction,
    norm: Norm,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
    tier: crate::Tier,
) -> Result<()> {
    let shape = x.shape().to_vec();
    if shape.contains(&0) {
        return Ok(());
    }
    let scale = scale_of::<T>(norm, points(&shape, axes), direction);
    let xl = x.layout().clone();
    let dl = dst.layout().clone();
    let xb = x.data().as_ptr() as *mut u8;
    let db = dst.data_mut().as_mut_ptr();
    let mut passes = Vec::new();
    for (i, &a) in axes.iter().rev().enumerate() {
        let plan = plan::global().plan::<T>(shape[a], direction)?;
        let src = if i == 0 {
            side(xb, shape.len(), &xl.strides, xl.offset, a)
        } else {
            side(db, shape.len(), &dl.strides, dl.offset, a)
        };
        passes.push(Pass {
            op: LineOp::C2c(plan),
            other_shape: others(&shape, a),
            src,
            dst: side(db, shape.len(), &dl.strides, dl.offset, a),
            scale: if i + 1 == axes.len() { scale } else { None },
        });
    }
    execute(&passes, exec, tier)
}

fn run_r2c<T: FftFloat>(
    axes: &[usize],
    norm: Norm,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
    tier: crate::Tier,
) -> Result<()> {
    let xs = x.shape().to_vec();
    let ds = dst.shape().to_vec();
    if ds.contains(&0) {
        return Ok(());
    }
    if xs.contains(&0) {
        zero_fill::<T>(dst);
        return Ok(());
    }
    let scale = scale_of::<T>(norm, points(&xs, axes), Direction::Forward);
    let xl = x.layout().clone();
    let dl = dst.layout().clone();
    let xb = x.data().as_ptr() as *mut u8;
    let db = dst.data_mut().as_mut_ptr();
    let last = axes[axes.len() - 1];
    let mut passes = Vec::new();
    let rplan = Arc::new(RealFftPlan::<T>::new(xs[last], Direction::Forward)?);
    passes.push(Pass {
        op: LineOp::R2c(rplan),
        other_shape: others(&xs, last),
        src: side(xb, xs.len(), &xl.strides, xl.offset, last),
        dst: side(db, ds.len(), &dl.strides, dl.offset, last),
        scale: if axes.len() == 1 { scale } else { None },
    });
    for (i, &a) in axes[..axes.len() - 1].iter().rev().enumerate() {
        let plan = plan::global().plan::<T>(ds[a], Direction::Forward)?;
        passes.push(Pass {
            op: LineOp::C2c(plan),
            other_shape: others(&ds, a),
            src: side(db, ds.len(), &dl.strides, dl.offset, a),
            dst: side(db, ds.len(), &dl.strides, dl.offset, a),
            scale: if i + 2 == axes.len() { scale } else { None },
        });
    }
    execute(&passes, exec, tier)
}

fn run_c2r<T: FftFloat>(
    axes: &[usize],
    norm: Norm,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
    tier: crate::Tier,
) -> Result<()> {
    let xs = x.shape().to_vec();
    let ds = dst.shape().to_vec();
    if ds.contains(&0) {
        return Ok(());
    }
    let scale = scale_of::<T>(norm, points(&ds, axes), Direction::Inverse);
    let xl = x.layout().clone();
    let dl = dst.layout().clone();
    let xb = x.data().as_ptr() as *mut u8;
    let db = dst.data_mut().as_mut_ptr();
    let last = axes[axes.len() - 1];
    let mut passes = Vec::new();
    // The other axes, into a C-order complex buffer of x's shape.
    let mut tmp: Vec<Complex<T>> = Vec::new();
    let (mut lsrc, lsrc_strides, lsrc_off) = (xb, xl.strides.clone(), xl.offset);
    let mut lsrc_strides = lsrc_strides;
    let mut lsrc_off = lsrc_off;
    if axes.len() > 1 {
        let count: usize = xs.iter().product();
        tmp = plan::try_zeros::<T>(count, "c2r buffer")?;
        let tb = tmp.as_mut_ptr() as *mut u8;
        let ts = crate::array::c_strides(&xs);
        for (i, &a) in axes[..axes.len() - 1].iter().rev().enumerate() {
            let plan = plan::global().plan::<T>(xs[a], Direction::Inverse)?;
            let src = if i == 0 {
                side(xb, xs.len(), &xl.strides, xl.offset, a)
            } else {
                side(tb, xs.len(), &ts, 0, a)
            };
            passes.push(Pass {
                op: LineOp::C2c(plan),
                other_shape: others(&xs, a),
                src,
                dst: side(tb, xs.len(), &ts, 0, a),
                scale: None,
            });
        }
        lsrc = tb;
        lsrc_strides = ts;
        lsrc_off = 0;
    }
    let rplan = Arc::new(RealFftPlan::<T>::new(ds[last], Direction::Inverse)?);
    passes.push(Pass {
        op: LineOp::C2r(rplan),
        other_shape: others(&xs, last),
        src: side(lsrc, xs.len(), &lsrc_strides, lsrc_off, last),
        dst: side(db, ds.len(), &dl.strides, dl.offset, last),
        scale,
    });
    let r = execute(&passes, exec, tier);
    drop(tmp);
    r
}
