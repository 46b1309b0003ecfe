//! Affine integer quantisation, per tensor or per channel, as fused `map`
//! programs (one pass, any layout, the same bits on every tier and at every
//! thread count).
//!
//! * [`quantize`]: `q = sat(rint(x / s) + z)`: x converted into its carrier
//!   (f32 for f32 and narrower floats, f64 for f64; exact), divided by the
//!   scale s (one correctly rounded division, not a multiplication by 1/s),
//!   rounded to the nearest integer with halves to even, the zero point z
//!   added (exact: both are integers below 2^24), then cast into the integer
//!   destination saturating (values beyond its range clamp to it; a NaN
//!   becomes 0).
//! * [`dequantize`]: `x = (q - z) · s`: q - z exact in the carrier, one
//!   rounded multiplication, then one rounding into the destination's dtype
//!   where it is narrower (a default-mode cast).
//!
//! Parameters ([`QParams`]) are one scale and zero point for the tensor, or a
//! scale and a zero point per index along one axis (per channel). Scales must
//! be positive and finite, zero points inside the integer dtype's range; the
//! scales are held in the carrier (f32, or f64 for f64 data) and the zero
//! points as i32. Every refusal comes before any write.

use crate::array::{ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::error::{Error, Result};
use crate::map::{map, NodeId, Program, ProgramBuilder};
use crate::reduce::carrier;
use crate::tier::Exec;
use crate::{Class, DType, Kind};

/// Quantisation parameters.
#[derive(Clone, Copy, Debug)]
pub enum QParams<'v, 'a> {
    /// One scale and zero point for every element.
    Tensor {
        /// The scale (positive, finite).
        scale: f64,
        /// The zero point (inside the integer dtype's range).
        zero_point: i64,
    },
    /// A scale and a zero point per index along `axis`: `scale` of the
    /// carrier's dtype (f32, or f64 for f64 data) and `zero_point` of i32,
    /// each one-dimensional with the axis's extent (any stride).
    Channel {
        /// The channel axis of the data.
        axis: usize,
        /// One scale per channel.
        scale: &'v ArrayView<'a>,
        /// One zero point per channel.
        zero_point: &'v ArrayView<'a>,
    },
}

/// The integer range of `dtype`.
fn int_range(dtype: DType) -> Option<(i64, i64)> {
    let info = dtype.info();
    let bits = info.bits;
    match info.class {
        Class::Int if bits <= 32 => Some((-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)),
        Class::Uint if bits <= 32 => Some((0, (1i64 << bits) - 1)),
        _ => None,
    }
}

pub(crate) fn refuse(what: &str, reason: String) -> Error {
    Error::Attribute {
        name: what.into(),
        reason,
    }
}

/// The scale and zero-point operands of a call over data of `shape`: rank-0
/// views (per tensor) or one-dimensional ones seen along `axis` (per channel),
/// each value checked. `ints` is the integer dtype.
struct Params {
    scale: Vec<u8>,
    zero: Vec<u8>,
    /// Shape and strides of both operands' views (rank 0, or the data's rank).
    shape: Vec<usize>,
    strides: Vec<isize>,
    c: DType,
}

impl Params {
    fn new(
        what: &str,
        p: &QParams<'_, '_>,
        shape: &[usize],
        c: DType,
        ints: DType,
    ) -> Result<Params> {
        let (lo, hi) = int_range(ints).ok_or_else(|| {
            refuse(
                what,
                format!("{ints} is not an integer dtype of at most 32 bits"),
            )
        })?;
        let (scales, zeros, vshape, vstrides): (Vec<f64>, Vec<i64>, Vec<usize>, Vec<isize>) =
            match *p {
                QParams::Tensor { scale, zero_point } => {
                    (vec![scale], vec![zero_point], Vec::new(), Vec::new())
                }
                QParams::Channel {
                    axis,
                    scale,
                    zero_point,
                } => {
                    if axis >= shape.len() {
                        return Err(refuse(
                            what,
                            format!(
                                "channel axis {axis} is out of range for rank {}",
                                shape.len()
                            ),
                        ));
                    }
                    let k = shape[axis];
                    for (name, v, want) in
                        [("scale", scale, c), ("zero point", zero_point, DType::I32)]
                    {
                        if v.dtype() != want {
                            return Err(Error::DTypeMismatch {
                                operand: name.into(),
                                expected: want,
                                got: v.dtype(),
                            });
                        }
                        if v.shape() != [k] {
                            return Err(Error::Shape {
                                operand: name.into(),
                                shape: v.shape().to_vec(),
                                target: vec![k],
                            });
                        }
                    }
                    let s = read::<f64>(scale)?;
                    let z = read::<i64>(zero_point)?;
                    let mut st = vec![0isize; shape.len()];
                    st[axis] = 1;
                    (
                        s,
                        z,
                        shape
                            .iter()
                            .enumerate()
                            .map(|(a, &n)| if a == axis { n } else { 1 })
                            .collect(),
                        st,
                    )
                }
            };
        for (i, &s) in scales.iter().enumerate() {
            let held = if c == DType::F32 { s as f32 as f64 } else { s };
            if !(held > 0.0 && held.is_finite()) {
                return Err(refuse(
                    what,
                    format!("scale {i} is {s}: scales are positive and finite"),
                ));
            }
        }
        for (i, &z) in zeros.iter().enumerate() {
            if z < lo || z > hi {
                return Err(refuse(
                    what,
                    format!("zero point {i} is {z}, outside {ints}'s range {lo}..={hi}"),
                ));
            }
        }
        let scale: Vec<u8> = if c == DType::F32 {
            scales
                .iter()
                .flat_map(|&s| (s as f32).to_le_bytes())
                .collect()
        } else {
            scales.iter().flat_map(|&s| s.to_le_bytes()).collect()
        };
        let zero: Vec<u8> = zeros
            .iter()
            .flat_map(|&z| (z as i32).to_le_bytes())
            .collect();
        Ok(Params {
            scale,
            zero,
            shape: vshape,
            strides: vstrides,
            c,
        })
    }

    fn views(&self) -> Result<(ArrayView<'_>, ArrayView<'_>)> {
        Ok((
            ArrayView::new(self.c, &self.shape, &self.strides, 0, &self.scale)?,
            ArrayView::new(DType::I32, &self.shape, &self.strides, 0, &self.zero)?,
        ))
    }
}

/// The values of a one-dimensional view, cast into `T` in index order.
fn read<T: crate::Element + Default + Clone>(v: &ArrayView<'_>) -> Result<Vec<T>> {
    // One value per channel (the data's extent along its channel axis).
    let n = v.layout().len();
    let mut out: Vec<T> = crate::alloc::try_zeroed(n, "quantisation parameters")?;
    let shape = v.shape().to_vec();
    cast(
        CastMode::Default,
        v,
        &mut ArrayViewMut::from_slice(&mut out, &shape)?,
        &Exec::default().threads(1),
    )?;
    Ok(out)
}

/// `id` cast into `dtype` unless it has it.
pub(crate) fn to(b: &mut ProgramBuilder, id: NodeId, dtype: DType) -> Result<NodeId> {
    if b.dtype(id) == Some(dtype) {
        Ok(id)
    } else {
        b.cast(id, dtype, CastMode::Default)
    }
}

/// The program of [`quantize`]: inputs x, s, z.
pub fn quantize_program(x: DType, q: DType) -> Result<Program> {
    let c = carrier(x);
    let mut b = ProgramBuilder::with_inputs(&[x, c, DType::I32]);
    let x0 = b.load(0, x)?;
    let xs = to(&mut b, x0, c)?;
    let s = b.load(1, c)?;
    let z = b.load(2, DType::I32)?;
    let t = b.apply(Kind::Div, &[xs, s])?;
    let r = b.apply(Kind::Rint, &[t])?;
    let zc = b.cast(z, c, CastMode::Default)?;
    let v = b.apply(Kind::Add, &[r, zc])?;
    let y = b.cast(v, q, CastMode::Saturating)?;
    b.output(y)?;
    b.build()
}

/// The program of [`dequantize`]: inputs q, s, z.
pub fn dequantize_program(q: DType, y: DType) -> Result<Program> {
    let c = carrier(y);
    let mut b = ProgramBuilder::with_inputs(&[q, c, DType::I32]);
    let q0 = b.load(0, q)?;
    let s = b.load(1, c)?;
    let z = b.load(2, DType::I32)?;
    let qc = b.cast(q0, c, CastMode::Default)?;
    let zc = b.cast(z, c, CastMode::Default)?;
    let d = b.apply(Kind::Sub, &[qc, zc])?;
    let m = b.apply(Kind::Mul, &[d, s])?;
    let out = to(&mut b, m, y)?;
    b.output(out)?;
    b.build()
}

/// Which way a call converts.
#[derive(Clone, Copy, PartialEq)]
enum Way {
    Quantize,
    Dequantize,
}

/// Run `src` through the program of `way` into `dst`: the float side's
/// dtype class, one shape, the parameters checked first.
fn run(
    way: Way,
    exec: &Exec,
    src: &ArrayView<'_>,
    params: &QParams<'_, '_>,
    dst: &mut ArrayViewMut<'_>,
) -> Result<()> {
    let (what, float, int) = match way {
        Way::Quantize => ("quantize", ("the data", src.dtype()), dst.dtype()),
        Way::Dequantize => ("dequantize", ("the destination", dst.dtype()), src.dtype()),
    };
    if float.1.info().class != Class::Float {
        return Err(refuse(
            what,
            format!("{} must be a float dtype, not {}", float.0, float.1),
        ));
    }
    if dst.shape() != src.shape() {
        return Err(Error::Shape {
            operand: "destination".into(),
            shape: dst.shape().to_vec(),
            target: src.shape().to_vec(),
        });
    }
    let p = Params::new(what, params, src.shape(), carrier(float.1), int)?;
    let (s, z) = p.views()?;
    let program = match way {
        Way::Quantize => quantize_program(src.dtype(), int)?,
        Way::Dequantize => dequantize_program(int, float.1)?,
    };
    map(
        &program,
        &[src.clone(), s, z],
        std::slice::from_mut(dst),
        exec,
    )
}

/// Quantise float `x` into the integer destination `q` (same shape; an
/// integer dtype of at most 32 bits, e.g. i8 or u8) as the module states.
/// Refuses, before any write, a non-float `x`, a destination of another
/// shape or dtype class, bad parameters (see [`QParams`]).
pub fn quantize(
    params: &QParams<'_, '_>,
    x: &ArrayView<'_>,
    q: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    run(Way::Quantize, exec, x, params, q)
}

/// Dequantise integer `q` into the float destination `x` (same shape) as the
/// module states; the scales are in `x`'s carrier. Refuses, before any
/// write, what [`quantize`] refuses with the roles swapped.
pub fn dequantize(
    params: &QParams<'_, '_>,
    q: &ArrayView<'_>,
    x: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    run(Way::Dequantize, exec, q, params, x)
}
