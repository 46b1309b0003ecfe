//! Gather, scatter, random fill, affine quantisation and the block-scaled
//! formats.

use crate::errors::{argument_error, detached, guarded, to_py};
use crate::exec_of;
use crate::operand::{operand, run_views, Call};
use pyo3::prelude::*;
use tessera::quant::QParams;
use tessera::{Combine, Format, ScaleRule};

/// `out[j] = x[j with its index along axis replaced by positions[j]]`
/// (zero bits where a position is outside the axis).
#[pyfunction]
#[pyo3(signature = (axis, x, positions, out, threads=None, tier=None))]
pub fn gather(
    py: Python<'_>,
    axis: usize,
    x: Bound<'_, PyAny>,
    positions: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![operand(&x, "x")?, operand(&positions, "positions")?],
        vec![operand(&out, "out")?],
    )?;
    run_views(py, call, exec, move |ins, outs, exec| {
        tessera::gather(axis, &ins[0], &ins[1], &mut outs[0], exec)
    })
}

/// `out` = `into` with `updates` combined in by `combine` ("set", "add",
/// "max", "min") at `positions` along `axis`, in C order of the updates.
#[pyfunction]
#[pyo3(signature = (combine, axis, into, positions, updates, out, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
pub fn scatter(
    py: Python<'_>,
    combine: &str,
    axis: usize,
    into: Bound<'_, PyAny>,
    positions: Bound<'_, PyAny>,
    updates: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let combine = match combine {
        "set" => Combine::Set,
        "add" => Combine::Add,
        "max" => Combine::Max,
        "min" => Combine::Min,
        other => {
            return Err(argument_error(format!(
                "combine `{other}`: expected \"set\", \"add\", \"max\" or \"min\""
            )))
        }
    };
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![
            operand(&into, "into")?,
            operand(&positions, "positions")?,
            operand(&updates, "updates")?,
        ],
        vec![operand(&out, "out")?],
    )?;
    run_views(py, call, exec, move |ins, outs, exec| {
        tessera::scatter(combine, axis, &ins[0], &ins[1], &ins[2], &mut outs[0], exec)
    })
}

/// Fill `out` with the counter-based stream of `seed`.
#[pyfunction]
#[pyo3(signature = (seed, out, threads=None, tier=None))]
pub fn random(
    py: Python<'_>,
    seed: u64,
    out: Bound<'_, PyAny>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let exec = exec_of(threads, tier)?;
    let call = Call::new(Vec::new(), vec![operand(&out, "out")?])?;
    detached(py, move || {
        let (_, mut outs) = call.views()?;
        tessera::fill::random(seed, &mut outs[0], &exec)
    })
}

/// Affine quantisation (`dequantize` false: float `x` into integer `out`)
/// or dequantisation (true: integer `x` into float `out`), per tensor
/// (`scale`, `zero_point`) or per channel along `axis` (`scales`,
/// `zero_points` arrays).
#[pyfunction]
#[pyo3(signature = (dequantize, x, out, scale=None, zero_point=0, axis=None, scales=None, zero_points=None, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
pub fn quantize(
    py: Python<'_>,
    dequantize: bool,
    x: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    scale: Option<f64>,
    zero_point: i64,
    axis: Option<usize>,
    scales: Option<Bound<'_, PyAny>>,
    zero_points: Option<Bound<'_, PyAny>>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let exec = exec_of(threads, tier)?;
    let mut ins = vec![operand(&x, "x")?];
    let channel = match (scale, axis, &scales, &zero_points) {
        (Some(_), None, None, None) => None,
        (None, Some(a), Some(s), Some(z)) => {
            ins.push(operand(s, "scales")?);
            ins.push(operand(z, "zero_points")?);
            Some(a)
        }
        _ => {
            return Err(argument_error(
                "give scale= (and zero_point=) for one tensor, or axis=, scales= and \
                 zero_points= per channel"
                    .into(),
            ))
        }
    };
    let call = Call::new(ins, vec![operand(&out, "out")?])?;
    run_views(py, call, exec, move |ins, outs, exec| {
        let params = match channel {
            None => QParams::Tensor {
                scale: scale.unwrap_or(1.0),
                zero_point,
            },
            Some(axis) => QParams::Channel {
                axis,
                scale: &ins[1],
                zero_point: &ins[2],
            },
        };
        if dequantize {
            tessera::quant::dequantize(&params, &ins[0], &mut outs[0], exec)
        } else {
            tessera::quant::quantize(&params, &ins[0], &mut outs[0], exec)
        }
    })
}

fn format_named(name: &str) -> PyResult<Format> {
    Format::from_name(name).ok_or_else(|| {
        argument_error(format!(
            "unknown format `{name}` (one of {})",
            Format::ALL.map(|f| f.info().name).join(", ")
        ))
    })
}

/// Every block-scaled format's name.
#[pyfunction]
pub fn formats() -> Vec<&'static str> {
    Format::ALL.iter().map(|f| f.info().name).collect()
}

/// (code bytes, blocks) of a tensor of `shape` encoded in `format`.
#[pyfunction]
pub fn encoded_sizes(format: &str, shape: Vec<usize>) -> PyResult<(usize, usize)> {
    guarded(|| {
        let s = tessera::formats::encoded_sizes(format_named(format)?, &shape).map_err(to_py)?;
        Ok((s.code_bytes, s.blocks))
    })
}

/// Encode `x` (blocks along its last axis) into the byte arrays `codes` and
/// `scales`; returns the tensor scale of formats that have one.
#[pyfunction]
#[pyo3(signature = (format, x, codes, scales, rule=None, tensor_scale=None, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
pub fn encode(
    py: Python<'_>,
    format: &str,
    x: Bound<'_, PyAny>,
    codes: Bound<'_, PyAny>,
    scales: Bound<'_, PyAny>,
    rule: Option<&str>,
    tensor_scale: Option<f32>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<Option<f32>> {
    let format = format_named(format)?;
    let rule = match rule {
        None => None,
        Some("floor") => Some(ScaleRule::Floor),
        Some("ceil") => Some(ScaleRule::Ceil),
        Some(other) => {
            return Err(argument_error(format!(
                "scale rule `{other}`: expected \"floor\" or \"ceil\""
            )))
        }
    };
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![operand(&x, "x")?],
        vec![operand(&codes, "codes")?, operand(&scales, "scales")?],
    )?;
    detached(py, move || {
        let (ins, _, _, mut raw) = call.parts(&[], &[0, 1])?;
        let (c, s) = raw.split_at_mut(1);
        match tensor_scale {
            Some(t) => {
                if rule.is_some() {
                    return Err(tessera::Error::Attribute {
                        name: "encode: rule".into(),
                        reason: "a caller's tensor scale takes the format's own rule".into(),
                    });
                }
                tessera::formats::encode_with_tensor_scale(format, t, &ins[0], c[0], s[0], &exec)
                    .map(|()| Some(t))
            }
            None => tessera::formats::encode(format, rule, &ins[0], c[0], s[0], &exec),
        }
    })
}

/// Decode `codes` and `scales` (as `encode` lays them out) into `out`.
#[pyfunction]
#[pyo3(signature = (format, codes, scales, out, tensor_scale=None, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
pub fn decode(
    py: Python<'_>,
    format: &str,
    codes: Bound<'_, PyAny>,
    scales: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    tensor_scale: Option<f32>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let format = format_named(format)?;
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![operand(&codes, "codes")?, operand(&scales, "scales")?],
        vec![operand(&out, "out")?],
    )?;
    detached(py, move || {
        let (_, raw, mut outs, _) = call.parts(&[0, 1], &[])?;
        tessera::formats::decode(format, raw[0], raw[1], tensor_scale, &mut outs[0], &exec)
    })
}
