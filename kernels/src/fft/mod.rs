//! Fourier transforms: [`c2c`], [`r2c`] and [`c2r`] over any non-empty,
//! strictly increasing set of axes of arrays of any layout and batch, and the
//! plans behind them: [`NdPlan`] (a whole transform planned once, with
//! `scratch_bytes`, `run` and `run_with_scratch`), and the one-line plans
//! [`FftPlan`] and [`RealFftPlan`] (cached by [`FftPlanner`]).
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
mod nd_plan;
mod plan;
mod radix;
mod real;
mod simd;
mod twiddle;

pub use nd_plan::{query, NdPlan};
pub use plan::{Algorithm, FftPlan, FftPlanner, BLUESTEIN_PRIME, FOUR_STEP_BYTES};
pub use real::{RealFftPlan, HALF_LENGTH_MIN};

use crate::array::{ArrayView, ArrayViewMut};
use crate::error::Result;
use crate::tier::Exec;
use crate::DType;

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
    NdPlan::c2c(axes, direction, norm, x.shape(), x.dtype())?.run(x, dst, exec)
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
    NdPlan::r2c(axes, norm, x.shape(), x.dtype())?.run(x, dst, exec)
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
    NdPlan::c2r(axes, norm, dst.shape(), x.dtype())?.run(x, dst, exec)
}
