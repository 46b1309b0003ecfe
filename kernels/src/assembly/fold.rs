//! The fold: the adjoint of a padded load.

use super::pad::Pad;
use crate::array::{c_strides, element_count, ArrayView, ArrayViewMut, Element};
use crate::cast::{cast, CastMode};
use crate::checks::check_destination;
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{Class, DType};
use num_complex::Complex;

/// A carrier the fold adds in.
trait Adds: Element + Copy + Default {
    fn add(self, b: Self) -> Self;
}
impl Adds for f32 {
    fn add(self, b: f32) -> f32 {
        self + b
    }
}
impl Adds for f64 {
    fn add(self, b: f64) -> f64 {
        self + b
    }
}
impl Adds for Complex<f32> {
    fn add(self, b: Self) -> Self {
        Complex::new(self.re + b.re, self.im + b.im)
    }
}
impl Adds for Complex<f64> {
    fn add(self, b: Self) -> Self {
        Complex::new(self.re + b.re, self.im + b.im)
    }
}
impl Adds for i64 {
    fn add(self, b: i64) -> i64 {
        self.wrapping_add(b)
    }
}
impl Adds for u64 {
    fn add(self, b: u64) -> u64 {
        self.wrapping_add(b)
    }
}

/// Fold `x`, of the shape a padded load by `pad` of `dst`'s shape gives
/// ([`Pad::load_shape`]), into `dst`: the adjoint of that load. Where the
/// load reads one element of its operand into several of its indices, the
/// fold adds the elements of `x` at those indices into that element's
/// place.
///
/// **Order.** An element of `dst` is the sum of its terms, the elements of
/// `x` the load reads from it, taken in C order of their taps (the indices
/// along the load's tap axes) and added left to right with no +0 before the
/// first, so that a single −0 keeps its sign; an element no tap reads is +0
/// (0 for integers). The sum runs in the dtype's carrier
/// ([`crate::reduce::carrier`]): f32 for f32 and every narrower float (each
/// sum rounded once into the dtype at the end), f64, complex part by part,
/// and 64-bit integers that wrap (so an integer fold equals the wrapping sum
/// in its own width). A NaN result is stored as the positive NaN
/// (ARCHITECTURE.md §5.1). The bits depend on the values alone, never on
/// layouts, threads or tier.
///
/// **Refusals** (before any write): a pad of another rank than `dst`,
/// windows that do not fit ([`Pad::load_shape`]), an `x` of another shape
/// than the load's, dtypes that differ, bool (no sum), a destination that
/// reaches an element twice, an unavailable tier, scratch that cannot be
/// allocated.
pub fn fold(pad: &Pad, x: &ArrayView<'_>, dst: &mut ArrayViewMut<'_>, exec: &Exec) -> Result<()> {
    exec.resolve_tier()?;
    let dtype = dst.dtype();
    if x.dtype() != dtype {
        return Err(Error::DTypeMismatch {
            operand: "x".into(),
            expected: dtype,
            got: x.dtype(),
        });
    }
    if dtype.info().class == Class::Bool {
        return Err(Error::DTypeUnsupported {
            operand: "x".into(),
            dtype,
            reason: "a fold adds, and bool has no sum".into(),
        });
    }
    let load = pad.load_shape(dst.shape())?;
    if x.shape() != load.as_slice() {
        return Err(Error::Shape {
            operand: "x".into(),
            shape: x.shape().to_vec(),
            target: load,
        });
    }
    check_destination(dst)?;
    match crate::reduce::carrier(dtype) {
        DType::F32 => run::<f32>(pad, x, dst, exec),
        DType::F64 => run::<f64>(pad, x, dst, exec),
        DType::C64 => run::<Complex<f32>>(pad, x, dst, exec),
        DType::C128 => run::<Complex<f64>>(pad, x, dst, exec),
        DType::U64 => run::<u64>(pad, x, dst, exec),
        _ => run::<i64>(pad, x, dst, exec),
    }
}

use crate::alloc::try_filled as filled;

fn run<C: Adds>(
    pad: &Pad,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let shape = dst.shape().to_vec();
    let rank = shape.len();
    let load = x.shape().to_vec();
    let nx = element_count(&load).unwrap_or(0);
    let nd = element_count(&shape).unwrap_or(0);
    // x in its carrier, C order (exact: every dtype enters its carrier
    // exactly).
    let mut xc: Vec<C> = filled(nx, C::default(), "the fold's terms")?;
    if nx > 0 {
        let mut xv = ArrayViewMut::from_slice(&mut xc, &load)?;
        cast(CastMode::Default, x, &mut xv, exec)?;
    }
    let mut acc: Vec<C> = filled(nd, C::default(), "the fold's sums")?;
    let mut seen = filled(nd, false, "the fold's sums")?;
    let xs = c_strides(&load);
    let ds = c_strides(&shape);
    // The windowed axes, in order: (operand axis, its tap axis in x).
    let windowed: Vec<usize> = (0..rank)
        .filter(|&a| pad.axes[a].window.is_some())
        .collect();
    let taps: Vec<usize> = load[rank..].to_vec();
    if nx > 0 {
        let mut t = vec![0usize; taps.len()];
        let mut i = vec![0usize; rank];
        'taps: loop {
            // Every window index for this tap index, in C order.
            i.iter_mut().for_each(|v| *v = 0);
            'windows: loop {
                let mut at = 0usize;
                let mut inside = true;
                let mut xi = 0usize;
                for a in 0..rank {
                    let ap = &pad.axes[a];
                    let padded = match ap.window {
                        None => i[a],
                        Some(w) => {
                            let j = windowed.iter().position(|&b| b == a).unwrap_or(0);
                            i[a] * w.stride + t[j] * w.dilation
                        }
                    };
                    xi += i[a] * xs[a] as usize;
                    if padded < ap.before || padded - ap.before >= shape[a] {
                        inside = false;
                    } else {
                        at += (padded - ap.before) * ds[a] as usize;
                    }
                }
                if inside {
                    for (j, &tj) in t.iter().enumerate() {
                        xi += tj * xs[rank + j] as usize;
                    }
                    let v = xc[xi];
                    acc[at] = if seen[at] { acc[at].add(v) } else { v };
                    seen[at] = true;
                }
                let mut a = rank;
                loop {
                    if a == 0 {
                        break 'windows;
                    }
                    a -= 1;
                    i[a] += 1;
                    if i[a] < load[a] {
                        break;
                    }
                    i[a] = 0;
                }
            }
            let mut j = taps.len();
            loop {
                if j == 0 {
                    break 'taps;
                }
                j -= 1;
                t[j] += 1;
                if t[j] < taps[j] {
                    break;
                }
                t[j] = 0;
            }
        }
    }
    if nd == 0 {
        return Ok(());
    }
    crate::cast::cast_results(&acc, dst, exec)
}
