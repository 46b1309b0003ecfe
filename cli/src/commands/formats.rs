//! The block-scaled formats as calls: `encode`, `decode` and `transcode`.
//!
//! An encoded tensor of logical shape `[.., n]` (blocks run along the last
//! axis; `n` a whole number of blocks) is held in `.npy` files of bytes (`|u1`):
//!
//! * `codes`: the element codes in C order, shape `[.., n]`, or `[.., n/2]` for
//!   the E2M1 formats (`mxfp4`, `nvfp4`), whose codes are packed two per byte,
//!   element 0 in the high nibble (MXINT8: the i8 elements as bytes);
//! * `scales`: one scale code per block, shape `[.., n/block]` (UE8M0 for the MX
//!   formats, UE4M3 for NVFP4);
//! * `tensor_scale` (NVFP4 only): the f32 tensor scale, an `<f4` file holding one
//!   value (shape `[]` when written; any shape of one element when read).
//!
//! ```json
//! {"kernel": "encode", "attrs": {"format": "mxfp8_e4m3", "rule": "ceil"},
//!  "operands": {"x": {"npy": "x.npy"}},
//!  "results": {"codes": {"npy": "codes.npy"}, "scales": {"npy": "scales.npy"}}}
//! {"kernel": "decode", "attrs": {"format": "nvfp4"},
//!  "operands": {"codes": {"npy": "c.npy"}, "scales": {"npy": "s.npy"},
//!               "tensor_scale": {"npy": "t.npy"}},
//!  "results": {"y": {"npy": "y.npy", "dtype": "bf16"}}}
//! {"kernel": "transcode", "attrs": {"from": "nvfp4", "to": "mxfp8_e4m3"},
//!  "operands": {"codes": …, "scales": …, "tensor_scale": …},
//!  "results": {"codes": …, "scales": …}}
//! ```
//!
//! A tensor scale read (by `decode` and `transcode`) must be finite and
//! greater than zero, as `encode` writes it: a NaN, an infinity, a zero or a
//! negative tensor scale is refused with the operand's name.
//!
//! `encode` takes `x` of any dtype; `rule` (`floor`, `ceil`; `nvfp4` for NVFP4)
//! overrides an MX format's scale rule; `tensor_scale` (a positive finite
//! number, rounded to f32; NVFP4 only) is the tensor scale to encode under
//! instead of one derived from x's amax (it is written as the result).
//! `layout` (`encode`, `decode`): `separate` (default: `codes` and `scales`)
//! or `blocks`, the block-as-value layout: one result or operand `blocks`
//! of shape `[.., n/block, V]` bytes, each block's codes packed tight then its
//! scale (V = 33 for MXFP8 and MXINT8, 25 for MXFP6, 17 for MXFP4, 9 for
//! NVFP4, whose `tensor_scale` stays apart). `decode` writes `y` in the dtype its
//! result names (default f32) and the shape the codes imply (or the shape given,
//! which must match them). `transcode` decodes one format and encodes the values
//! into another (`rule` applies to the target). The operands' and results'
//! dtypes, where named, must be `u8` (codes, scales) and `f32` (tensor_scale).

use super::{expect_attrs, expect_names, string_attr, truncate};
use crate::call::{Call, Operand, Output};
use crate::codes::{self, values_per_byte};
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand::{self, Loaded};
use crate::results::Results;
use std::path::Path;
use tessera::formats::{self, EncodedSizes};
use tessera::{ArrayView, ArrayViewMut, DType, Exec, Format, ScaleRule};

/// Which of the three calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatKernel {
    /// Values of any dtype into codes, scales (and a tensor scale).
    Encode,
    /// Codes and scales into values of any dtype.
    Decode,
    /// Codes and scales of one format into another's.
    Transcode,
}

impl FormatKernel {
    /// Every one, in listing order.
    pub const ALL: [FormatKernel; 3] = [
        FormatKernel::Encode,
        FormatKernel::Decode,
        FormatKernel::Transcode,
    ];

    /// The name in call files.
    pub fn name(self) -> &'static str {
        match self {
            FormatKernel::Encode => "encode",
            FormatKernel::Decode => "decode",
            FormatKernel::Transcode => "transcode",
        }
    }

    /// The one named `name`.
    pub fn from_name(name: &str) -> Option<FormatKernel> {
        FormatKernel::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The names of every format, for messages and listings.
pub fn format_names() -> Vec<&'static str> {
    Format::ALL.iter().map(|f| f.info().name).collect()
}

/// The format an attribute names (a usage error if missing or unknown).
pub fn parse_format(kernel: &str, call: &Call, key: &str) -> Outcome<Format> {
    let Some(name) = string_attr(kernel, &call.attrs, key)? else {
        return Err(Failure::usage(format!(
            "kernel `{kernel}` needs attribute {key} (one of {})",
            format_names().join(", ")
        )));
    };
    Format::from_name(name).ok_or_else(|| {
        Failure::usage(format!(
            "kernel `{kernel}`: unknown format `{}` (known: {})",
            truncate(name, 40),
            format_names().join(", ")
        ))
    })
}

/// A scale rule's name.
pub fn rule_name(rule: ScaleRule) -> &'static str {
    match rule {
        ScaleRule::Floor => "floor",
        ScaleRule::Ceil => "ceil",
        ScaleRule::Nvfp4 => "nvfp4",
    }
}

/// The optional `rule` attribute, checked against the format it encodes into.
pub fn parse_rule(kernel: &str, call: &Call, format: Format) -> Outcome<Option<ScaleRule>> {
    let Some(name) = string_attr(kernel, &call.attrs, "rule")? else {
        return Ok(None);
    };
    let rule = match name {
        "floor" => ScaleRule::Floor,
        "ceil" => ScaleRule::Ceil,
        "nvfp4" => ScaleRule::Nvfp4,
        other => {
            return Err(Failure::usage(format!(
                "kernel `{kernel}`: attribute rule is \"floor\", \"ceil\" or \"nvfp4\", not \"{}\"",
                truncate(other, 40)
            )))
        }
    };
    let own = format.info().scale_rule;
    if (rule == ScaleRule::Nvfp4) != (own == ScaleRule::Nvfp4) {
        let allowed = if own == ScaleRule::Nvfp4 {
            "nvfp4"
        } else {
            "floor or ceil"
        };
        return Err(Failure::usage(format!(
            "kernel `{kernel}`: scale rule {name} does not apply to {} (it takes {allowed})",
            format.info().name
        )));
    }
    Ok(Some(rule))
}

fn dtype_of(name: &str) -> Outcome<DType> {
    DType::from_name(name)
        .ok_or_else(|| Failure::run(format!("the catalogue names an unknown dtype `{name}`")))
}

/// The element dtype of a format.
pub fn element_dtype(format: Format) -> Outcome<DType> {
    dtype_of(format.info().element)
}

/// The scale dtype of a format.
pub fn scale_dtype(format: Format) -> Outcome<DType> {
    dtype_of(format.info().scale)
}

fn has_tensor_scale(format: Format) -> bool {
    format.info().tensor_scale.is_some()
}

/// The operand or result names of an encoded tensor of `format`.
pub fn encoded_names(format: Format) -> Vec<&'static str> {
    let mut v = vec!["codes", "scales"];
    if has_tensor_scale(format) {
        v.push("tensor_scale");
    }
    v
}

/// Whether the call asks for the block-as-value layout (attribute `layout`:
/// `blocks`; `separate`, the default, is codes and scales).
fn blocks_layout(kernel: &str, call: &Call) -> Outcome<bool> {
    match string_attr(kernel, &call.attrs, "layout")? {
        None | Some("separate") => Ok(false),
        Some("blocks") => Ok(true),
        Some(other) => Err(Failure::usage(format!(
            "kernel `{kernel}`: unknown layout \"{}\" (separate, blocks)",
            truncate(other, 40)
        ))),
    }
}

/// The operand or result names of an encoded tensor of `format` in the
/// block-as-value layout.
fn block_names(format: Format) -> Vec<&'static str> {
    let mut v = vec!["blocks"];
    if has_tensor_scale(format) {
        v.push("tensor_scale");
    }
    v
}

/// The shape of the blocks file of a tensor of `shape` (rank ≥ 1): one
/// value (`formats::block_value_bytes` bytes) per block.
fn blocks_shape(format: Format, shape: &[usize]) -> Vec<usize> {
    let mut s = scales_shape(format, shape);
    s.push(formats::block_value_bytes(format));
    s
}

/// The shape of the codes file of a tensor of `shape` (rank ≥ 1).
pub fn codes_shape(format: Format, shape: &[usize]) -> Outcome<Vec<usize>> {
    let vpb = values_per_byte(element_dtype(format)?);
    let mut s = shape.to_vec();
    if let Some(l) = s.last_mut() {
        *l /= vpb;
    }
    Ok(s)
}

/// The shape of the scales file of a tensor of `shape` (rank ≥ 1).
pub fn scales_shape(format: Format, shape: &[usize]) -> Vec<usize> {
    let mut s = shape.to_vec();
    if let Some(l) = s.last_mut() {
        *l /= format.info().block.max(1);
    }
    s
}

/// The logical shape a codes file of `codes_shape` stands for.
fn shape_of_codes(format: Format, codes: &[usize]) -> Outcome<Vec<usize>> {
    let vpb = values_per_byte(element_dtype(format)?);
    let Some((&last, outer)) = codes.split_last() else {
        return Err(Failure::run(
            "operand codes: a codes file needs at least one axis (blocks run along the last)"
                .to_string(),
        ));
    };
    let values = last
        .checked_mul(vpb)
        .ok_or_else(|| Failure::run("operand codes: the value count overflows".to_string()))?;
    let mut s = outer.to_vec();
    s.push(values);
    Ok(s)
}

fn sizes(format: Format, shape: &[usize], what: &str) -> Outcome<EncodedSizes> {
    formats::encoded_sizes(format, shape).map_err(|e| {
        Failure::run(format!(
            "{what} {shape:?} as {}: {}",
            format.info().name,
            e.to_string().replace("source: ", "")
        ))
    })
}

/// Load an operand that holds bytes (codes or scales) and return them in C
/// order with the file's shape.
fn load_bytes(call_path: &Path, name: &str, spec: &Operand) -> Outcome<Loaded> {
    if let Some(d) = operand::dtype_name(&format!("operand {name}"), spec.dtype.as_deref())? {
        if d != DType::U8 {
            return Err(Failure::usage(format!(
                "operand {name}: encoded {name} are bytes (u8), not {d}"
            )));
        }
    }
    let mut a = operand::load(call_path, name, spec)?;
    if a.dtype != DType::U8 {
        return Err(Failure::run(format!(
            "operand {name}: the file holds {} values, encoded {name} are bytes (|u1)",
            a.dtype
        )));
    }
    a.data = operand::to_c_order(&a.data, &a.shape, &a.strides, 1)?;
    a.strides = npy::c_strides(&a.shape);
    Ok(a)
}

/// Load the f32 tensor scale: a file of one f32 value.
fn load_tensor_scale(call_path: &Path, spec: &Operand) -> Outcome<f32> {
    if let Some(d) = operand::dtype_name("operand tensor_scale", spec.dtype.as_deref())? {
        if d != DType::F32 {
            return Err(Failure::usage(format!(
                "operand tensor_scale: the tensor scale is an f32, not {d}"
            )));
        }
    }
    let a = operand::load(call_path, "tensor_scale", spec)?;
    if a.dtype != DType::F32 {
        return Err(Failure::run(format!(
            "operand tensor_scale: the file holds {} values, the tensor scale is one f32",
            a.dtype
        )));
    }
    let t = match a.data[..] {
        [b0, b1, b2, b3] => f32::from_le_bytes([b0, b1, b2, b3]),
        _ => {
            return Err(Failure::run(format!(
                "operand tensor_scale: shape {:?} holds {} values, the tensor scale is one",
                a.shape,
                npy::element_count(&a.shape)
            )))
        }
    };
    check_tensor_scale(t)?;
    Ok(t)
}

/// The rule for a tensor scale read from a file: finite and greater than
/// zero, as `encode` writes it (a NaN, an infinity, a zero or a negative
/// number would turn every value into NaN, an infinity, zero or its
/// negation: no encoder's output).
pub fn check_tensor_scale(t: f32) -> Outcome<()> {
    if t.is_finite() && t > 0.0 {
        Ok(())
    } else {
        Err(Failure::run(format!(
            "operand tensor_scale: {t:e} is not a tensor scale; a tensor scale is finite and \
             greater than zero, as encode writes it"
        )))
    }
}

/// Check a result's dtype, shape and packing against what the call writes.
fn check_output(name: &str, spec: &Output, dtype: DType, shape: &[usize]) -> Outcome<()> {
    if let Some(d) = operand::dtype_name(&format!("result {name}"), spec.dtype.as_deref())? {
        if d != dtype {
            return Err(Failure::usage(format!(
                "result {name}: {name} are written as {dtype}, not {d}"
            )));
        }
    }
    if spec.packed {
        return Err(Failure::usage(format!(
            "result {name}: \"packed\" applies only to sub-byte dtypes; {name} are {dtype}"
        )));
    }
    if let Some(s) = &spec.shape {
        if s.as_slice() != shape {
            return Err(Failure::run(format!(
                "result {name}: shape {s:?} given, but the call gives {shape:?}"
            )));
        }
    }
    Ok(())
}

/// An encoded tensor read from a call's operands: C-order codes and scales of
/// a tensor of `shape`, checked against the format.
struct Encoded {
    shape: Vec<usize>,
    codes: Vec<u8>,
    scales: Vec<u8>,
    tensor_scale: Option<f32>,
}

/// Read the operands `codes`, `scales` (and `tensor_scale`) of `format`; the
/// logical shape is `shape` where given (it must match the codes), else what
/// the codes file implies.
fn load_encoded(
    call_path: &Path,
    call: &Call,
    format: Format,
    shape: Option<&[usize]>,
) -> Outcome<Encoded> {
    let spec = |n: &str| {
        call.operands
            .0
            .get(n)
            .ok_or_else(|| Failure::usage(format!("the call needs operand {n}")))
    };
    let codes = load_bytes(call_path, "codes", spec("codes")?)?;
    let scales = load_bytes(call_path, "scales", spec("scales")?)?;
    let tensor_scale = if has_tensor_scale(format) {
        Some(load_tensor_scale(call_path, spec("tensor_scale")?)?)
    } else {
        None
    };
    let name = format.info().name;
    let shape = match shape {
        Some(s) => {
            if s.is_empty() {
                return Err(Failure::run(format!(
                    "result y: {name} encodes along the last axis; a rank-0 shape has none"
                )));
            }
            let want = codes_shape(format, s)?;
            let vpb = values_per_byte(element_dtype(format)?);
            if s.last().is_some_and(|&l| l % vpb != 0) || codes.shape != want {
                return Err(Failure::run(format!(
                    "operand codes: shape {:?}, but a {name} tensor of shape {s:?} has codes of shape {want:?}",
                    codes.shape
                )));
            }
            s.to_vec()
        }
        None => shape_of_codes(format, &codes.shape)?,
    };
    sizes(format, &shape, "a tensor of shape")?;
    let want = scales_shape(format, &shape);
    if scales.shape != want {
        return Err(Failure::run(format!(
            "operand scales: shape {:?}, but a {name} tensor of shape {shape:?} has scales of shape {want:?} (one per block of {})",
            scales.shape,
            format.info().block
        )));
    }
    let element = element_dtype(format)?;
    if values_per_byte(element) == 1 {
        codes::check_codes(element, &codes.data)
            .map_err(|e| Failure::run(format!("operand codes: {e}")))?;
    }
    codes::check_codes(scale_dtype(format)?, &scales.data)
        .map_err(|e| Failure::run(format!("operand scales: {e}")))?;
    Ok(Encoded {
        shape,
        codes: codes.data,
        scales: scales.data,
        tensor_scale,
    })
}

/// Write `codes`, `scales` (and `tensor_scale`) of a tensor of `shape` to the
/// call's results; returns the report's words for them.
/// Store codes and scales as the block-as-value result `blocks` (and the
/// tensor scale); returns the words to report.
fn store_blocks(
    results: &mut Results,
    call: &Call,
    format: Format,
    shape: &[usize],
    codes: &[u8],
    scales: &[u8],
    tensor_scale: Option<f32>,
) -> Outcome<String> {
    let bshape = blocks_shape(format, shape);
    let get = |n: &str| {
        call.results
            .0
            .get(n)
            .ok_or_else(|| Failure::usage(format!("the call needs result {n}")))
    };
    check_output("blocks", get("blocks")?, DType::U8, &bshape)?;
    if has_tensor_scale(format) {
        check_output("tensor_scale", get("tensor_scale")?, DType::F32, &[])?;
    }
    let mut values = operand::zeroed(scales.len() * formats::block_value_bytes(format))?;
    formats::to_block_values(format, codes, scales, &mut values)
        .map_err(|e| Failure::run(format!("result blocks: {e}")))?;
    let b = results.add("blocks", DType::U8, &bshape, &values)?;
    let mut words = format!("blocks = u8 {bshape:?} -> {}", b.display());
    if let (true, Some(t)) = (has_tensor_scale(format), tensor_scale) {
        let p = results.add("tensor_scale", DType::F32, &[], &t.to_le_bytes())?;
        words.push_str(&format!(", tensor_scale = {t:e} -> {}", p.display()));
    }
    Ok(words)
}

/// Read the operand `blocks` (and `tensor_scale`) of `format` as codes and
/// scales; the logical shape is `shape` where given (it must match), else
/// what the blocks file implies (its last axis the value's bytes).
fn load_blocks(
    call_path: &Path,
    call: &Call,
    format: Format,
    shape: Option<&[usize]>,
) -> Outcome<Encoded> {
    let spec = |n: &str| {
        call.operands
            .0
            .get(n)
            .ok_or_else(|| Failure::usage(format!("the call needs operand {n}")))
    };
    let blocks = load_bytes(call_path, "blocks", spec("blocks")?)?;
    let tensor_scale = if has_tensor_scale(format) {
        Some(load_tensor_scale(call_path, spec("tensor_scale")?)?)
    } else {
        None
    };
    let (name, value, block) = (
        format.info().name,
        formats::block_value_bytes(format),
        format.info().block,
    );
    let implied = match blocks.shape.split_last() {
        Some((&v, outer)) if v == value && !outer.is_empty() => {
            let mut s = outer.to_vec();
            let last = s.last_mut().expect("rank at least 2");
            *last = last.checked_mul(block).ok_or_else(|| {
                Failure::run("operand blocks: the value count overflows".to_string())
            })?;
            s
        }
        _ => {
            return Err(Failure::run(format!(
            "operand blocks: shape {:?}, but {name} block values are [..., blocks, {value}] bytes",
            blocks.shape
        )))
        }
    };
    let shape = match shape {
        Some(s) if s != implied.as_slice() => {
            return Err(Failure::run(format!(
                "operand blocks: shape {:?} holds a {name} tensor of shape {implied:?}, not {s:?}",
                blocks.shape
            )))
        }
        _ => implied,
    };
    let sz = sizes(format, &shape, "a tensor of shape")?;
    let mut codes = operand::zeroed(sz.code_bytes)?;
    let mut scales = operand::zeroed(sz.blocks)?;
    formats::from_block_values(format, &blocks.data, &mut codes, &mut scales)
        .map_err(|e| Failure::run(format!("operand blocks: {e}")))?;
    let element = element_dtype(format)?;
    if values_per_byte(element) == 1 {
        codes::check_codes(element, &codes)
            .map_err(|e| Failure::run(format!("operand blocks: {e}")))?;
    }
    codes::check_codes(scale_dtype(format)?, &scales)
        .map_err(|e| Failure::run(format!("operand blocks: {e}")))?;
    Ok(Encoded {
        shape,
        codes,
        scales,
        tensor_scale,
    })
}

fn store_encoded(
    results: &mut Results,
    call: &Call,
    format: Format,
    shape: &[usize],
    codes: &[u8],
    scales: &[u8],
    tensor_scale: Option<f32>,
) -> Outcome<String> {
    let cshape = codes_shape(format, shape)?;
    let sshape = scales_shape(format, shape);
    let get = |n: &str| {
        call.results
            .0
            .get(n)
            .ok_or_else(|| Failure::usage(format!("the call needs result {n}")))
    };
    check_output("codes", get("codes")?, DType::U8, &cshape)?;
    check_output("scales", get("scales")?, DType::U8, &sshape)?;
    if has_tensor_scale(format) {
        check_output("tensor_scale", get("tensor_scale")?, DType::F32, &[])?;
    }
    let c = results.add("codes", DType::U8, &cshape, codes)?;
    let s = results.add("scales", DType::U8, &sshape, scales)?;
    let mut words = format!(
        "codes = u8 {cshape:?} -> {}, scales = u8 {sshape:?} -> {}",
        c.display(),
        s.display()
    );
    if let (true, Some(t)) = (has_tensor_scale(format), tensor_scale) {
        let p = results.add("tensor_scale", DType::F32, &[], &t.to_le_bytes())?;
        words.push_str(&format!(", tensor_scale = {t:e} -> {}", p.display()));
    }
    Ok(words)
}

fn library(kernel: FormatKernel) -> impl Fn(tessera::Error) -> Failure {
    move |e| Failure::run(format!("kernel `{}`: {e}", kernel.name()))
}

/// Run `encode`, `decode` or `transcode` as described by `call`; returns the
/// lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    kernel: FormatKernel,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = kernel.name();
    let line = match kernel {
        FormatKernel::Encode => {
            expect_attrs(
                k,
                &call.attrs,
                &["format", "rule", "tensor_scale", "layout"],
            )?;
            let format = parse_format(k, call, "format")?;
            let rule = parse_rule(k, call, format)?;
            let given = super::number_attr(k, &call.attrs, "tensor_scale")?;
            let blocks = blocks_layout(k, call)?;
            expect_names(k, "operand", &call.operands, &["x"])?;
            let names = if blocks {
                block_names(format)
            } else {
                encoded_names(format)
            };
            expect_names(k, "result", &call.results, &names)?;
            let x_spec = call
                .operands
                .0
                .get("x")
                .ok_or_else(|| Failure::usage("kernel `encode` needs operand x".to_string()))?;
            let x = operand::load(call_path, "x", x_spec)?;
            let sz = sizes(format, &x.shape, "operand x: shape")?;
            let (data, strides) = if x.is_codes() {
                (codes::pack(x.dtype, &x.data)?, npy::c_strides(&x.shape))
            } else {
                (x.data, x.strides)
            };
            let view = ArrayView::new(x.dtype, &x.shape, &strides, 0, &data)
                .map_err(|e| Failure::run(format!("operand x: {e}")))?;
            let mut c = operand::zeroed(sz.code_bytes)?;
            let mut s = operand::zeroed(sz.blocks)?;
            let t = match given {
                Some(t) => {
                    let t = t as f32;
                    formats::encode_with_tensor_scale(format, t, &view, &mut c, &mut s, exec)
                        .map_err(library(kernel))?;
                    Some(t)
                }
                None => formats::encode(format, rule, &view, &mut c, &mut s, exec)
                    .map_err(library(kernel))?,
            };
            let words = if blocks {
                store_blocks(results, call, format, &x.shape, &c, &s, t)?
            } else {
                store_encoded(results, call, format, &x.shape, &c, &s, t)?
            };
            format!(
                "encode {}{}: x {} {:?} -> {words}",
                format.info().name,
                rule.map(|r| format!(" (rule {})", rule_name(r)))
                    .unwrap_or_default(),
                x.dtype,
                x.shape
            )
        }
        FormatKernel::Decode => {
            expect_attrs(k, &call.attrs, &["format", "layout"])?;
            let format = parse_format(k, call, "format")?;
            let blocks = blocks_layout(k, call)?;
            let names = if blocks {
                block_names(format)
            } else {
                encoded_names(format)
            };
            expect_names(k, "operand", &call.operands, &names)?;
            expect_names(k, "result", &call.results, &["y"])?;
            let y_spec = call
                .results
                .0
                .get("y")
                .ok_or_else(|| Failure::usage("kernel `decode` needs result y".to_string()))?;
            let to =
                operand::dtype_name("result y", y_spec.dtype.as_deref())?.unwrap_or(DType::F32);
            if y_spec.packed && values_per_byte(to) == 1 {
                return Err(Failure::usage(format!(
                    "result y: \"packed\" applies only to sub-byte dtypes (i4, u4, u1, e2m1fn), not {to}"
                )));
            }
            let enc = if blocks {
                load_blocks(call_path, call, format, y_spec.shape.as_deref())?
            } else {
                load_encoded(call_path, call, format, y_spec.shape.as_deref())?
            };
            let bytes = npy::byte_size(&enc.shape, to.info().item_bytes)
                .map_err(|e| Failure::run(format!("result y: {e}")))?;
            let mut out = operand::zeroed(bytes / values_per_byte(to))?;
            let mut view = ArrayViewMut::contiguous(to, &enc.shape, &mut out)
                .map_err(|e| Failure::run(format!("result y: {e}")))?;
            formats::decode(
                format,
                &enc.codes,
                &enc.scales,
                enc.tensor_scale,
                &mut view,
                exec,
            )
            .map_err(library(kernel))?;
            drop(view);
            let last = enc.shape.last().copied().unwrap_or(1);
            let path = results.add_library("y", to, &enc.shape, &out, last)?;
            format!(
                "decode {}: y = {to} {:?} -> {}",
                format.info().name,
                enc.shape,
                path.display()
            )
        }
        FormatKernel::Transcode => {
            expect_attrs(k, &call.attrs, &["from", "to", "rule"])?;
            let from = parse_format(k, call, "from")?;
            let to = parse_format(k, call, "to")?;
            let rule = parse_rule(k, call, to)?;
            expect_names(k, "operand", &call.operands, &encoded_names(from))?;
            expect_names(k, "result", &call.results, &encoded_names(to))?;
            let enc = load_encoded(call_path, call, from, None)?;
            let sz = sizes(to, &enc.shape, "a tensor of shape")?;
            let mut c = operand::zeroed(sz.code_bytes)?;
            let mut s = operand::zeroed(sz.blocks)?;
            let t = formats::transcode(
                from,
                to,
                rule,
                &enc.shape,
                &enc.codes,
                &enc.scales,
                enc.tensor_scale,
                &mut c,
                &mut s,
                exec,
            )
            .map_err(library(kernel))?;
            let words = store_encoded(results, call, to, &enc.shape, &c, &s, t)?;
            format!(
                "transcode {} -> {}{}: {:?} -> {words}",
                from.info().name,
                to.info().name,
                rule.map(|r| format!(" (rule {})", rule_name(r)))
                    .unwrap_or_default(),
                enc.shape
            )
        }
    };
    let tier = exec.resolve_tier()?;
    Ok(vec![format!("{line} (tier {tier})")])
}
