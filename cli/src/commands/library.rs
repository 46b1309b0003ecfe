//! The library's remaining calls as `tessera run` kernels: `random`
//! (`tessera::fill::random`), `quantize` and `dequantize`
//! (`tessera::quant`), `polyval` (`tessera::poly`), `qmatmul_i8` and
//! `requantize_i8` (`tessera::contract::qmatmul`) and `sum_lanes`
//! (`tessera::reduce::lanes`), `spline` (`tessera::spline`), `terms`
//! (`tessera::terms`) and `ue8m0_encode`/`ue8m0_decode`
//! (`tessera::formats::ue8m0_*`). Each checks its call file strictly, runs the
//! call and stores its result; none takes sub-byte dtypes.
//!
//! ```json
//! {"kernel": "random", "attrs": {"seed": 7},
//!  "operands": {}, "results": {"y": {"npy": "y.npy", "dtype": "f32", "shape": [4, 5]}}}
//! {"kernel": "quantize", "attrs": {"scale": 0.5, "zero_point": 3},
//!  "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "q.npy", "dtype": "i8"}}}
//! {"kernel": "quantize", "attrs": {"axis": 1},
//!  "operands": {"x": {"npy": "x.npy"}, "scale": {"npy": "s.npy"}, "zero_point": {"npy": "z.npy"}},
//!  "results": {"y": {"npy": "q.npy", "dtype": "u8"}}}
//! {"kernel": "polyval", "attrs": {"coeffs": [1, -2, 0.5]},
//!  "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}
//! {"kernel": "qmatmul_i8", "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}},
//!  "results": {"y": {"npy": "y.npy"}}}
//! {"kernel": "requantize_i8", "attrs": {"scale": 0.01, "zero_point": -4},
//!  "operands": {"x": {"npy": "acc.npy"}}, "results": {"y": {"npy": "y.npy"}}}
//! {"kernel": "sum_lanes", "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "lanes.npy"}}}
//! ```

use super::{count_attr, expect_attrs, expect_names, number_attr, truncate, whole_byte_view};
use crate::budget;
use crate::call::{Call, Output};
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand::{self, Loaded};
use crate::results::Results;
use std::path::Path;
use tessera::quant::QParams;
use tessera::reduce::lanes::{LaneFloat, LANES};
use tessera::{ArrayView, ArrayViewMut, DType, Element, Exec};

/// The kernels of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LibraryKernel {
    /// `random`: the counter-based fill.
    Random,
    /// `quantize`: float to integer, per tensor or per channel.
    Quantize,
    /// `dequantize`: integer to float.
    Dequantize,
    /// `polyval`: a polynomial by Horner's rule.
    Polyval,
    /// `qmatmul_i8`: the int8 product into int32.
    QmatmulI8,
    /// `requantize_i8`: int32 accumulators back to int8.
    RequantizeI8,
    /// `sum_lanes`: the 16 lanes of every block of a lane-order sum.
    SumLanes,
    /// `spline`: a cubic spline uniform in ln x (`tessera::spline`).
    Spline,
    /// `terms`: a combination of binary64 terms in double-float, or its
    /// exponential (`tessera::terms`).
    Terms,
    /// `ue8m0_encode`: f32 magnitudes into the seed's UE8M0 variant.
    Ue8m0Encode,
    /// `ue8m0_decode`: the seed's UE8M0 variant into f32.
    Ue8m0Decode,
}

impl LibraryKernel {
    /// Every kernel of this module.
    pub const ALL: [LibraryKernel; 11] = [
        LibraryKernel::Random,
        LibraryKernel::Quantize,
        LibraryKernel::Dequantize,
        LibraryKernel::Polyval,
        LibraryKernel::QmatmulI8,
        LibraryKernel::RequantizeI8,
        LibraryKernel::SumLanes,
        LibraryKernel::Spline,
        LibraryKernel::Terms,
        LibraryKernel::Ue8m0Encode,
        LibraryKernel::Ue8m0Decode,
    ];
    /// Its name in call files.
    pub fn name(self) -> &'static str {
        match self {
            LibraryKernel::Random => "random",
            LibraryKernel::Quantize => "quantize",
            LibraryKernel::Dequantize => "dequantize",
            LibraryKernel::Polyval => "polyval",
            LibraryKernel::QmatmulI8 => "qmatmul_i8",
            LibraryKernel::RequantizeI8 => "requantize_i8",
            LibraryKernel::SumLanes => "sum_lanes",
            LibraryKernel::Spline => "spline",
            LibraryKernel::Terms => "terms",
            LibraryKernel::Ue8m0Encode => "ue8m0_encode",
            LibraryKernel::Ue8m0Decode => "ue8m0_decode",
        }
    }
    /// The kernel named `name`.
    pub fn from_name(name: &str) -> Option<LibraryKernel> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
    /// Its operands, results and attributes, as `tessera kernels` lists them.
    pub fn io(
        self,
    ) -> (
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    ) {
        match self {
            LibraryKernel::Random => (&[], &["y"], &["seed"]),
            LibraryKernel::Quantize | LibraryKernel::Dequantize => (
                &["x", "scale (per channel)", "zero_point (per channel)"],
                &["y"],
                &["scale", "zero_point", "axis"],
            ),
            LibraryKernel::Polyval => (&["x"], &["y"], &["coeffs"]),
            LibraryKernel::QmatmulI8 => (&["a", "b"], &["y"], &[]),
            LibraryKernel::RequantizeI8 => (&["x"], &["y"], &["scale", "zero_point"]),
            LibraryKernel::SumLanes => (&["x"], &["y"], &[]),
            LibraryKernel::Ue8m0Encode | LibraryKernel::Ue8m0Decode => (&["x"], &["y"], &[]),
            LibraryKernel::Spline => (
                &["x"],
                &["y"],
                &[
                    "log_e0",
                    "width",
                    "coefficients",
                    "constant_tails",
                    "x_min",
                    "x_max",
                    "below",
                    "above",
                    "output",
                ],
            ),
            LibraryKernel::Terms => (
                &["terms"],
                &["y", "moments (mode phi)"],
                &["weights", "mode", "sign", "count"],
            ),
        }
    }
    /// What `tessera kernels` says of it.
    pub fn doc(self) -> &'static str {
        match self {
            LibraryKernel::Random => {
                "fill y (bool, integers of 8 bits or more, f16, bf16, f32, f64; dtype and shape \
                 given) with the counter-based stream of attribute seed: the same values for any \
                 layout and thread count; floats uniform in [0, 1)"
            }
            LibraryKernel::Quantize => {
                "y = sat(rint(x / scale) + zero_point) into an integer dtype of at most 32 bits \
                 (y's dtype, required): per tensor (attributes scale, zero_point) or per channel \
                 along attribute axis (operands scale in x's carrier, zero_point i32); halves to \
                 even, NaN to 0"
            }
            LibraryKernel::Dequantize => {
                "y = (x - zero_point) * scale, rounded once into y's float dtype (required); \
                 parameters as quantize"
            }
            LibraryKernel::Polyval => {
                "y = c0 x^(n-1) + ... + c(n-1) by Horner's rule (numpy's order), one fused \
                 multiply-add per coefficient in the carrier; y's dtype defaults to x's"
            }
            LibraryKernel::QmatmulI8 => {
                "y[i, j] = sum_k a[i, k] b[k, j] of i8 or u8 matrices into i32, exact modulo 2^32"
            }
            LibraryKernel::RequantizeI8 => {
                "y = clamp(rint(x * scale) + zero_point, -128, 127) of i32 x into i8, the product \
                 exact, halves to even"
            }
            LibraryKernel::SumLanes => {
                "the 16 lane sums of every block of 1024 terms of a one-dimensional f32 or f64 x \
                 (ARCHITECTURE.md §5.3), as y of shape [blocks, 16]"
            }
            LibraryKernel::Spline => {
                "a cubic spline uniform in ln x at every element of f32/f64 x: coefficients a \
                 list of [c0, c1, c2, c3] per interval (c3 the constant term, constant_tails its \
                 tails), intervals of width `width` from ln E0 = log_e0; below x_min `below`, \
                 above x_max `above`; output `exp` (default: exp of the spline, a rate table) or \
                 `linear`"
            }
            LibraryKernel::Ue8m0Encode => {
                "the UE8M0 byte (seed variant: 0x00 zero, 0xFF NaN, 2^(v-127) otherwise) of each \
                 f32 magnitude of x: nearest power of two split at sqrt(2)*2^e, zero and \
                 subnormals to 0x00, NaN to 0xFF, saturating at 0xFE; y u8 of x's shape"
            }
            LibraryKernel::Ue8m0Decode => {
                "the f32 value of each UE8M0 byte of u8 x (seed variant: 0x00 zero, 0xFF NaN, \
                 2^(v-127) otherwise); y f32 of x's shape"
            }
            LibraryKernel::Terms => {
                "x = sum_t weights[t] terms[t, :] of f64 or c128 terms [T, N] held as \
                 double-float pairs, rounded once into y (f32 or c64, [N]): mode `combine` \
                 (default), `exp` for exp(sign x) (sign +1 default or -1, y c64), or `phi` for \
                 y = exp(x) and moments [count, N] (c64) of k! phi_(k+1)(x), k < count \
                 (attribute count, at most 8)"
            }
        }
    }
}

fn integer(k: &str, call: &Call, key: &str) -> Outcome<Option<i64>> {
    match call.attrs.0.get(key) {
        None => Ok(None),
        Some(v) => v.as_i64().map(Some).ok_or_else(|| {
            Failure::usage(format!(
                "kernel `{k}`: attribute {key} must be an integer, not {}",
                truncate(&v.to_string(), 40)
            ))
        }),
    }
}

fn need<T>(k: &str, what: &str, v: Option<T>) -> Outcome<T> {
    v.ok_or_else(|| Failure::usage(format!("kernel `{k}` needs {what}")))
}

/// A result's dtype: the one it names, else `default` (refused if there is none).
fn result_dtype(k: &str, spec: &Output, default: Option<DType>) -> Outcome<DType> {
    let named = operand::dtype_name("result y", spec.dtype.as_deref())?;
    match named.or(default) {
        Some(d) => Ok(d),
        None => Err(Failure::usage(format!(
            "kernel `{k}`: result y must name its dtype"
        ))),
    }
}

/// A result's shape: the one it names, which must equal `shape` where the
/// call fixes it.
fn result_shape(k: &str, spec: &Output, shape: Option<&[usize]>) -> Outcome<Vec<usize>> {
    match (&spec.shape, shape) {
        (Some(s), Some(want)) if s.as_slice() != want => Err(Failure::run(format!(
            "kernel `{k}`: result y has shape {want:?}, not {s:?}"
        ))),
        (_, Some(want)) => Ok(want.to_vec()),
        (Some(s), None) => Ok(s.clone()),
        (None, None) => Err(Failure::usage(format!(
            "kernel `{k}`: result y must give its shape"
        ))),
    }
}

/// A zero-filled C-order buffer for a result of `dtype` and `shape`, refused
/// (not aborted) when its size cannot be held.
fn buffer(k: &str, dtype: DType, shape: &[usize]) -> Outcome<Vec<u8>> {
    if dtype.info().values_per_byte > 1 {
        return Err(Failure::run(format!(
            "kernel `{k}` does not take sub-byte dtypes ({dtype})"
        )));
    }
    let bytes = npy::byte_size(shape, dtype.info().item_bytes)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    operand::zeroed(bytes)
}

/// Run `f` on a view of a fresh result buffer, then store it as result y.
fn compute_and_store(
    results: &mut Results,
    k: &str,
    dtype: DType,
    shape: &[usize],
    f: impl FnOnce(&mut ArrayViewMut<'_>) -> tessera::Result<()>,
) -> Outcome<String> {
    let mut out = buffer(k, dtype, shape)?;
    {
        let mut v = ArrayViewMut::contiguous(dtype, shape, &mut out)
            .map_err(|e| Failure::run(format!("result y: {e}")))?;
        f(&mut v).map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))?;
    }
    let path = results.add("y", dtype, shape, &out)?;
    Ok(format!("{k}: y = {dtype} {shape:?} -> {}", path.display()))
}

fn load(call_path: &Path, call: &Call, name: &str) -> Outcome<Loaded> {
    operand::load(call_path, name, &call.operands.0[name])
}

/// Run one of this module's kernels as `call` describes; returns the lines
/// to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    kernel: LibraryKernel,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = kernel.name();
    let (_, _, attrs) = kernel.io();
    expect_attrs(k, &call.attrs, attrs)?;
    // The φ functions of `terms` write a second result, the moments.
    let phi = kernel == LibraryKernel::Terms
        && super::string_attr(k, &call.attrs, "mode")? == Some("phi");
    let names: &[&str] = if phi { &["y", "moments"] } else { &["y"] };
    expect_names(k, "result", &call.results, names)?;
    let spec = &call.results.0["y"];
    let line = match kernel {
        LibraryKernel::Random => {
            expect_names(k, "operand", &call.operands, &[])?;
            let seed = call.attrs.0.get("seed").map(|v| {
                v.as_u64().ok_or_else(|| {
                    Failure::usage(format!(
                        "kernel `{k}`: attribute seed must be an integer in [0, 2^64), not {}",
                        truncate(&v.to_string(), 40)
                    ))
                })
            });
            let seed = need(k, "attribute seed", seed)??;
            let dtype = result_dtype(k, spec, None)?;
            let shape = result_shape(k, spec, None)?;
            // A dtype the fill does not define is refused before the
            // result's buffer is allocated.
            tessera::fill::random_dtype(dtype)
                .map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))?;
            compute_and_store(results, k, dtype, &shape, |y| {
                tessera::fill::random(seed, y, exec)
            })?
        }
        LibraryKernel::Quantize | LibraryKernel::Dequantize => {
            let per_channel = call.operands.0.contains_key("scale");
            let x = if per_channel {
                expect_names(k, "operand", &call.operands, &["x", "scale", "zero_point"])?;
                if call.attrs.0.contains_key("scale") || call.attrs.0.contains_key("zero_point") {
                    return Err(Failure::usage(format!(
                        "kernel `{k}`: per-channel scale and zero_point are operands, not attributes"
                    )));
                }
                load(call_path, call, "x")?
            } else {
                expect_names(k, "operand", &call.operands, &["x"])?;
                if call.attrs.0.contains_key("axis") {
                    return Err(Failure::usage(format!(
                        "kernel `{k}`: attribute axis needs operands scale and zero_point (per channel)"
                    )));
                }
                load(call_path, call, "x")?
            };
            let xv = whole_byte_view(k, &x)?;
            let dtype = result_dtype(k, spec, None)?;
            let shape = result_shape(k, spec, Some(&x.shape))?;
            let (s, z);
            let (sv, zv);
            let params = if per_channel {
                let axis = need(
                    k,
                    "attribute axis",
                    count_attr(k, &call.attrs, "axis", "an axis number")?,
                )?;
                s = load(call_path, call, "scale")?;
                z = load(call_path, call, "zero_point")?;
                sv = whole_byte_view(k, &s)?;
                zv = whole_byte_view(k, &z)?;
                QParams::Channel {
                    axis,
                    scale: &sv,
                    zero_point: &zv,
                }
            } else {
                QParams::Tensor {
                    scale: need(k, "attribute scale", number_attr(k, &call.attrs, "scale")?)?,
                    zero_point: integer(k, call, "zero_point")?.unwrap_or(0),
                }
            };
            compute_and_store(results, k, dtype, &shape, |y| {
                if kernel == LibraryKernel::Quantize {
                    tessera::quant::quantize(&params, &xv, y, exec)
                } else {
                    tessera::quant::dequantize(&params, &xv, y, exec)
                }
            })?
        }
        LibraryKernel::Ue8m0Encode | LibraryKernel::Ue8m0Decode => {
            expect_names(k, "operand", &call.operands, &["x"])?;
            let x = load(call_path, call, "x")?;
            let (from, to) = if kernel == LibraryKernel::Ue8m0Encode {
                (DType::F32, DType::U8)
            } else {
                (DType::U8, DType::F32)
            };
            if x.dtype != from {
                return Err(Failure::run(format!(
                    "kernel `{k}`: operand x holds {}, it takes {from}",
                    x.dtype
                )));
            }
            let dtype = result_dtype(k, spec, Some(to))?;
            let shape = result_shape(k, spec, Some(&x.shape))?;
            let xv = whole_byte_view(k, &x)?;
            compute_and_store(results, k, dtype, &shape, |y| {
                if kernel == LibraryKernel::Ue8m0Encode {
                    tessera::formats::ue8m0_encode(&xv, y, exec)
                } else {
                    tessera::formats::ue8m0_decode(&xv, y, exec)
                }
            })?
        }
        LibraryKernel::Polyval => {
            expect_names(k, "operand", &call.operands, &["x"])?;
            let coeffs: Vec<f64> = match call.attrs.0.get("coeffs") {
                Some(serde_json::Value::Array(a)) => a
                    .iter()
                    .map(|v| {
                        v.as_f64().ok_or_else(|| {
                            Failure::usage(format!(
                                "kernel `{k}`: attribute coeffs holds numbers, not {}",
                                truncate(&v.to_string(), 40)
                            ))
                        })
                    })
                    .collect::<Outcome<_>>()?,
                Some(v) => {
                    return Err(Failure::usage(format!(
                        "kernel `{k}`: attribute coeffs must be a list of numbers, not {}",
                        truncate(&v.to_string(), 40)
                    )))
                }
                None => {
                    return Err(Failure::usage(format!(
                        "kernel `{k}` needs attribute coeffs"
                    )))
                }
            };
            let x = load(call_path, call, "x")?;
            let xv = whole_byte_view(k, &x)?;
            let dtype = result_dtype(k, spec, Some(x.dtype))?;
            let shape = result_shape(k, spec, Some(&x.shape))?;
            // Horner's rule: every coefficient at every element.
            budget::charge_work(
                budget::steps(&[npy::element_count(&shape), coeffs.len()]),
                "polyval's coefficients at every element",
            )?;
            compute_and_store(results, k, dtype, &shape, |y| {
                tessera::poly::polyval(&coeffs, &xv, y, exec)
            })?
        }
        LibraryKernel::QmatmulI8 => {
            expect_names(k, "operand", &call.operands, &["a", "b"])?;
            let (a, b) = (load(call_path, call, "a")?, load(call_path, call, "b")?);
            let (av, bv) = (whole_byte_view(k, &a)?, whole_byte_view(k, &b)?);
            let dtype = result_dtype(k, spec, Some(DType::I32))?;
            let shape = match (a.shape.as_slice(), b.shape.as_slice()) {
                (&[m, _], &[_, n]) => vec![m, n],
                _ => {
                    return Err(Failure::run(format!(
                        "kernel `{k}`: a and b must be matrices, not of shapes {:?} and {:?}",
                        a.shape, b.shape
                    )))
                }
            };
            let shape = result_shape(k, spec, Some(&shape))?;
            compute_and_store(results, k, dtype, &shape, |y| {
                tessera::contract::qmatmul::qmatmul_i8(&av, &bv, y, exec)
            })?
        }
        LibraryKernel::RequantizeI8 => {
            expect_names(k, "operand", &call.operands, &["x"])?;
            let scale = need(k, "attribute scale", number_attr(k, &call.attrs, "scale")?)?;
            let zero_point = integer(k, call, "zero_point")?.unwrap_or(0);
            let zero_point = i32::try_from(zero_point).map_err(|_| {
                Failure::usage(format!(
                    "kernel `{k}`: attribute zero_point {zero_point} is not an i32"
                ))
            })?;
            let x = load(call_path, call, "x")?;
            let xv = whole_byte_view(k, &x)?;
            let dtype = result_dtype(k, spec, Some(DType::I8))?;
            let shape = result_shape(k, spec, Some(&x.shape))?;
            compute_and_store(results, k, dtype, &shape, |y| {
                tessera::contract::qmatmul::requantize_i8(scale as f32, zero_point, &xv, y, exec)
            })?
        }
        LibraryKernel::SumLanes => {
            expect_names(k, "operand", &call.operands, &["x"])?;
            let x = load(call_path, call, "x")?;
            if x.shape.len() != 1 {
                return Err(Failure::run(format!(
                    "kernel `{k}`: operand x must be one-dimensional, not of shape {:?}",
                    x.shape
                )));
            }
            let dtype = result_dtype(k, spec, Some(x.dtype))?;
            if dtype != x.dtype {
                return Err(Failure::run(format!(
                    "kernel `{k}`: result y has x's dtype {}, not {dtype}",
                    x.dtype
                )));
            }
            let blocks = x.shape[0].div_ceil(tessera::reduce::lanes::BLOCK);
            let shape = result_shape(k, spec, Some(&[blocks, LANES]))?;
            let bytes = match x.dtype {
                DType::F32 => lanes::<f32>(k, &x, blocks, exec)?,
                DType::F64 => lanes::<f64>(k, &x, blocks, exec)?,
                d => {
                    return Err(Failure::run(format!(
                        "kernel `{k}` takes f32 or f64, not {d}"
                    )))
                }
            };
            let path = results.add("y", dtype, &shape, &bytes)?;
            format!("{k}: y = {dtype} {shape:?} -> {}", path.display())
        }
        LibraryKernel::Spline => {
            expect_names(k, "operand", &call.operands, &["x"])?;
            let table = spline_table(k, call)?;
            let x = load(call_path, call, "x")?;
            let xv = whole_byte_view(k, &x)?;
            let plan = tessera::spline::LogSplinePlan::new(x.dtype, &table)
                .map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))?;
            let dtype = result_dtype(k, spec, Some(x.dtype))?;
            let shape = result_shape(k, spec, Some(&x.shape))?;
            compute_and_store(results, k, dtype, &shape, |y| plan.evaluate(&xv, y, exec))?
        }
        LibraryKernel::Terms => {
            expect_names(k, "operand", &call.operands, &["terms"])?;
            let weights = need(k, "attribute weights", numbers(k, call, "weights")?)?;
            let exp = match super::string_attr(k, &call.attrs, "mode")? {
                None | Some("combine") => false,
                Some("exp") | Some("phi") => true,
                Some(m) => {
                    return Err(Failure::usage(format!(
                        "kernel `{k}`: attribute mode is `combine`, `exp` or `phi`, not `{}`",
                        truncate(m, 40)
                    )))
                }
            };
            let count = match integer(k, call, "count")? {
                Some(c) if phi && (0..=tessera::terms::MAX_PHI_ORDER as i64).contains(&c) => {
                    c as usize
                }
                Some(c) if phi => {
                    return Err(Failure::usage(format!(
                        "kernel `{k}`: attribute count is 0 to {}, not {c}",
                        tessera::terms::MAX_PHI_ORDER
                    )))
                }
                Some(_) => {
                    return Err(Failure::usage(format!(
                        "kernel `{k}`: attribute count belongs to mode `phi`"
                    )))
                }
                None if phi => {
                    return Err(Failure::usage(format!(
                        "kernel `{k}`: mode `phi` needs attribute count"
                    )))
                }
                None => 0,
            };
            let sign = number_attr(k, &call.attrs, "sign")?.unwrap_or(1.0);
            let t = load(call_path, call, "terms")?;
            let tv = whole_byte_view(k, &t)?;
            let plan = tessera::terms::TermsPlan::upload(&tv)
                .map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))?;
            let (_, n) = plan.shape();
            let default = if exp || t.dtype == DType::C128 {
                DType::C64
            } else {
                DType::F32
            };
            let dtype = result_dtype(k, spec, Some(default))?;
            let shape = result_shape(k, spec, Some(&[n]))?;
            budget::charge_work(
                budget::steps(&[npy::element_count(&t.shape), 1]),
                "the terms at every point",
            )?;
            if phi {
                let mspec = &call.results.0["moments"];
                let mdtype = operand::dtype_name("result moments", mspec.dtype.as_deref())?
                    .unwrap_or(DType::C64);
                let mshape = mspec.shape.clone().unwrap_or_else(|| vec![count, n]);
                let mut flow = buffer(k, dtype, &shape)?;
                let mut moments = buffer(k, mdtype, &mshape)?;
                {
                    let mut fv = ArrayViewMut::contiguous(dtype, &shape, &mut flow)
                        .map_err(|e| Failure::run(format!("result y: {e}")))?;
                    let mut mv = ArrayViewMut::contiguous(mdtype, &mshape, &mut moments)
                        .map_err(|e| Failure::run(format!("result moments: {e}")))?;
                    plan.phi(&weights, count, &mut fv, &mut mv, exec)
                        .map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))?;
                }
                let p1 = results.add("y", dtype, &shape, &flow)?;
                let p2 = results.add("moments", mdtype, &mshape, &moments)?;
                return Ok(vec![format!(
                    "{k}: y = {dtype} {shape:?} -> {}, moments = {mdtype} {mshape:?} -> {}",
                    p1.display(),
                    p2.display()
                )]);
            }
            compute_and_store(results, k, dtype, &shape, |y| {
                if exp {
                    plan.exponential(&weights, sign, y, exec)
                } else {
                    plan.combine(&weights, y, exec)
                }
            })?
        }
    };
    Ok(vec![line])
}

/// A list of numbers attribute.
fn numbers(k: &str, call: &Call, key: &str) -> Outcome<Option<Vec<f64>>> {
    match call.attrs.0.get(key) {
        None => Ok(None),
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_f64().ok_or_else(|| {
                    Failure::usage(format!(
                        "kernel `{k}`: attribute {key} holds numbers, not {}",
                        truncate(&v.to_string(), 40)
                    ))
                })
            })
            .collect::<Outcome<Vec<f64>>>()
            .map(Some),
        Some(v) => Err(Failure::usage(format!(
            "kernel `{k}`: attribute {key} must be a list of numbers, not {}",
            truncate(&v.to_string(), 40)
        ))),
    }
}

/// The spline table of a `spline` call.
fn spline_table(k: &str, call: &Call) -> Outcome<tessera::spline::LogSpline> {
    let num = |key: &str| -> Outcome<f64> {
        need(
            k,
            &format!("attribute {key}"),
            number_attr(k, &call.attrs, key)?,
        )
    };
    let coefficients = match call.attrs.0.get("coefficients") {
        Some(serde_json::Value::Array(rows)) => rows
            .iter()
            .map(|r| {
                let row: Option<Vec<f64>> = r
                    .as_array()
                    .map(|a| a.iter().filter_map(|v| v.as_f64()).collect());
                match row {
                    Some(v) if v.len() == 4 && r.as_array().is_some_and(|a| a.len() == 4) => {
                        Ok([v[0], v[1], v[2], v[3]])
                    }
                    _ => Err(Failure::usage(format!(
                        "kernel `{k}`: each coefficient row is a list of 4 numbers, not {}",
                        truncate(&r.to_string(), 40)
                    ))),
                }
            })
            .collect::<Outcome<Vec<[f64; 4]>>>()?,
        _ => {
            return Err(Failure::usage(format!(
                "kernel `{k}` needs attribute coefficients, a list of [c0, c1, c2, c3]"
            )))
        }
    };
    let output = match super::string_attr(k, &call.attrs, "output")? {
        None | Some("exp") => tessera::spline::SplineOutput::Exp,
        Some("linear") => tessera::spline::SplineOutput::Linear,
        Some(o) => {
            return Err(Failure::usage(format!(
                "kernel `{k}`: attribute output is `exp` or `linear`, not `{}`",
                truncate(o, 40)
            )))
        }
    };
    Ok(tessera::spline::LogSpline {
        log_e0: num("log_e0")?,
        width: num("width")?,
        constant_tails: numbers(k, call, "constant_tails")?.unwrap_or_default(),
        coefficients,
        x_min: num("x_min")?,
        x_max: num("x_max")?,
        below: number_attr(k, &call.attrs, "below")?.unwrap_or(0.0),
        above: num("above")?,
        output,
    })
}

/// The lanes of every block of a one-dimensional operand, as bytes.
fn lanes<F: LaneFloat + Element + Default>(
    k: &str,
    x: &Loaded,
    blocks: usize,
    exec: &Exec,
) -> Outcome<Vec<u8>> {
    let n = x.shape[0];
    let view = ArrayView::new(x.dtype, &x.shape, &x.strides, 0, &x.data)
        .map_err(|e| Failure::run(format!("operand x: {e}")))?;
    // The terms in index order (the operand may have any stride).
    let mut terms = budget::zeroed(n, "operand x: its terms in index order")?;
    tessera::cast(
        tessera::CastMode::Default,
        &view,
        &mut ArrayViewMut::from_slice(&mut terms, &[n])
            .map_err(|e| Failure::run(format!("operand x: {e}")))?,
        exec,
    )
    .map_err(|e| Failure::run(format!("operand x: {e}")))?;
    let mut out = budget::zeroed::<[F; LANES]>(blocks, "result y")?;
    tessera::reduce::lanes::sum_lanes(&terms, &mut out, exec)
        .map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))?;
    let flat = out.as_flattened();
    budget::copy_of(tessera::array::as_bytes(flat), "result y as bytes")
}
