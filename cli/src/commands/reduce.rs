//! `reduce` and `scan` as calls.
//!
//! ```json
//! {"kernel": "reduce", "attrs": {"op": "sum", "axes": [0]},
//!  "operands": {"x": {"npy": "x.npy", "dtype": "f32"}},
//!  "results": {"y": {"npy": "y.npy", "dtype": "f32"}}}
//! ```
//!
//! `reduce`: attribute `op` is one reduction (`sum`, `prod`, `max`, `min`,
//! `argmax`, `argmin`, `logsumexp`, `mean`, `variance`, `l2norm`) with result `y`, or a
//! list of them with results `y0`, `y1`, … (one loop, every result checked
//! before any is written); `axes` (default: every axis); `terms` (default
//! `value`; `square`, `abs` on `x`, or `product`, `squared_difference`,
//! `abs_difference` of `x` and a second operand `x1`). A result's dtype
//! defaults to `x`'s (`i64` for argmax/argmin), its shape to `x`'s without the
//! reduced axes.
//!
//! `scan`: attribute `op` (`sum`, `prod`, `max`, `min`) and `axis` (default 0),
//! operand `x` and, for sum and prod, an optional `carry` (of `x`'s shape
//! without the axis, in the terms' carrier dtype); result `y` of `x`'s shape,
//! its dtype defaulting to `x`'s.
//!
//! Sub-byte operands need a last axis of whole bytes; sub-byte results too.

use super::{expect_attrs, expect_names, string_attr};
use crate::call::Call;
use crate::codes::{self, values_per_byte};
use crate::failure::{Failure, Outcome};
use crate::operand::{self, Loaded};
use std::path::Path;
use tessera::reduce::{reduced_shape, TermMap};
use tessera::{ArrayView, ArrayViewMut, DType, Exec, ReduceOp, ScanOp, Terms};

/// The reduction kernel's name in call files.
pub const REDUCE: &str = "reduce";
/// The scan kernel's name in call files.
pub const SCAN: &str = "scan";

/// An operand in the library's layout: packed along the last axis for
/// sub-byte dtypes.
struct Held {
    dtype: DType,
    shape: Vec<usize>,
    strides: Vec<isize>,
    data: Vec<u8>,
}

fn hold(kernel: &str, a: Loaded) -> Outcome<Held> {
    let vpb = values_per_byte(a.dtype);
    if vpb == 1 {
        return Ok(Held {
            dtype: a.dtype,
            shape: a.shape,
            strides: a.strides,
            data: a.data,
        });
    }
    let last = a.shape.last().copied().unwrap_or(1);
    if !last.is_multiple_of(vpb) && last != 1 {
        return Err(Failure::run(format!(
            "kernel `{kernel}`: operand {}: a last axis of {last} {} values is not whole bytes",
            a.name, a.dtype
        )));
    }
    Ok(Held {
        dtype: a.dtype,
        strides: tessera::array::c_strides(&a.shape),
        shape: a.shape,
        data: codes::pack(a.dtype, &a.data),
    })
}

impl Held {
    fn view(&self, name: &str) -> Outcome<ArrayView<'_>> {
        ArrayView::new(self.dtype, &self.shape, &self.strides, 0, &self.data)
            .map_err(|e| Failure::run(format!("operand {name}: {e}")))
    }
}

fn usize_list(kernel: &str, v: &serde_json::Value, key: &str) -> Outcome<Vec<usize>> {
    let bad = || {
        Failure::usage(format!(
            "kernel `{kernel}`: attribute {key} must be a list of axis numbers, not {}",
            super::truncate(&v.to_string(), 40)
        ))
    };
    let arr = v.as_array().ok_or_else(bad)?;
    arr.iter()
        .map(|x| {
            x.as_u64()
                .and_then(|u| usize::try_from(u).ok())
                .ok_or_else(bad)
        })
        .collect()
}

/// A zeroed result buffer of `shape` and `dtype` (packed for sub-byte dtypes).
fn result_buffer(name: &str, dtype: DType, shape: &[usize]) -> Outcome<Vec<u8>> {
    let vpb = values_per_byte(dtype);
    let count = crate::npy::element_count(shape);
    if vpb > 1 {
        let last = shape.last().copied().unwrap_or(1);
        if shape.is_empty() || !last.is_multiple_of(vpb) {
            return Err(Failure::run(format!(
                "result {name}: a {dtype} result needs a last axis of whole bytes"
            )));
        }
    }
    crate::npy::byte_size(shape, dtype.info().item_bytes)
        .map_err(|e| Failure::run(format!("result {name}: {e}")))?;
    operand::zeroed(count / vpb * dtype.info().item_bytes)
}

fn term_map(kernel: &str, name: Option<&str>) -> Outcome<TermMap> {
    Ok(match name {
        None | Some("value") => TermMap::Value,
        Some("square") => TermMap::Square,
        Some("abs") => TermMap::Abs,
        Some("product") => TermMap::Product,
        Some("squared_difference") => TermMap::SquaredDifference,
        Some("abs_difference") => TermMap::AbsDifference,
        Some(other) => {
            return Err(Failure::usage(format!(
                "kernel `{kernel}`: attribute terms is value, square, abs, product, \
                 squared_difference or abs_difference, not \"{}\"",
                super::truncate(other, 40)
            )))
        }
    })
}

/// Run a `reduce` call; returns the lines to report.
pub fn reduce_call(call_path: &Path, call: &Call, exec: &Exec) -> Outcome<Vec<String>> {
    let k = REDUCE;
    expect_attrs(k, &call.attrs, &["op", "axes", "terms"])?;
    let ops: Vec<ReduceOp> = match call.attrs.0.get("op") {
        None => return Err(Failure::usage(format!("kernel `{k}` needs attribute op"))),
        Some(serde_json::Value::String(s)) => vec![parse_reduce_op(s)?],
        Some(serde_json::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| match v.as_str() {
                Some(s) => parse_reduce_op(s),
                None => Err(Failure::usage(format!(
                    "kernel `{k}`: attribute op lists reduction names"
                ))),
            })
            .collect::<Outcome<_>>()?,
        Some(v) => {
            return Err(Failure::usage(format!(
                "kernel `{k}`: attribute op is a reduction name or a list of them, not {}",
                super::truncate(&v.to_string(), 40)
            )))
        }
    };
    let map = term_map(k, string_attr(k, &call.attrs, "terms")?)?;
    let pair = map.arity() == 2;
    expect_names(
        k,
        "operand",
        &call.operands,
        if pair { &["x", "x1"] } else { &["x"] },
    )?;
    let names: Vec<String> =
        if ops.len() == 1 && call.attrs.0.get("op").is_some_and(|v| v.is_string()) {
            vec!["y".to_string()]
        } else {
            (0..ops.len()).map(|i| format!("y{i}")).collect()
        };
    let name_refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    expect_names(k, "result", &call.results, &name_refs)?;
    for n in &names {
        if !call.results.0.contains_key(n) {
            return Err(Failure::usage(format!("kernel `{k}` needs result {n}")));
        }
    }
    let Some(x_spec) = call.operands.0.get("x") else {
        return Err(Failure::usage(format!("kernel `{k}` needs operand x")));
    };
    let x = hold(k, operand::load(call_path, "x", x_spec)?)?;
    let x1 = match (pair, call.operands.0.get("x1")) {
        (true, Some(s)) => Some(hold(k, operand::load(call_path, "x1", s)?)?),
        (true, None) => {
            return Err(Failure::usage(format!(
                "kernel `{k}`: terms {map:?} need operand x1"
            )))
        }
        _ => None,
    };
    let axes = match call.attrs.0.get("axes") {
        None => (0..x.shape.len()).collect(),
        Some(v) => usize_list(k, v, "axes")?,
    };
    if let Some(&a) = axes.iter().find(|&&a| a >= x.shape.len()) {
        return Err(Failure::run(format!(
            "kernel `{k}`: axis {a} is out of range for x of rank {}",
            x.shape.len()
        )));
    }
    let default_shape = reduced_shape(&x.shape, &axes);
    let mut outs = Vec::new();
    for (op, n) in ops.iter().zip(&names) {
        let spec = &call.results.0[n];
        let dtype = operand::dtype_name(&format!("result {n}"), spec.dtype.as_deref())?.unwrap_or(
            match op {
                ReduceOp::ArgMax | ReduceOp::ArgMin => DType::I64,
                _ => x.dtype,
            },
        );
        let shape = spec.shape.clone().unwrap_or_else(|| default_shape.clone());
        let buf = result_buffer(n, dtype, &shape)?;
        outs.push((dtype, shape, buf));
    }
    {
        let xv = x.view("x")?;
        let x1v = match &x1 {
            Some(h) => Some(h.view("x1")?),
            None => None,
        };
        let terms = match (&x1v, map) {
            (None, TermMap::Square) => Terms::square(&xv),
            (None, TermMap::Abs) => Terms::abs(&xv),
            (None, _) => Terms::of(&xv),
            (Some(y), TermMap::Product) => Terms::product(&xv, y),
            (Some(y), TermMap::SquaredDifference) => Terms::squared_difference(&xv, y),
            (Some(y), _) => Terms::abs_difference(&xv, y),
        };
        let mut views = Vec::new();
        for (n, (dtype, shape, buf)) in names.iter().zip(outs.iter_mut()) {
            views.push(
                ArrayViewMut::contiguous(*dtype, shape, buf)
                    .map_err(|e| Failure::run(format!("result {n}: {e}")))?,
            );
        }
        let mut pairs: Vec<(ReduceOp, &mut ArrayViewMut<'_>)> =
            ops.iter().copied().zip(views.iter_mut()).collect();
        tessera::reduce_terms(terms, &axes, &mut pairs, exec)
            .map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))?;
    }
    let tier = exec.resolve_tier()?;
    let mut lines = Vec::new();
    for ((op, n), (dtype, shape, buf)) in ops.iter().zip(&names).zip(outs) {
        let codes = if values_per_byte(dtype) > 1 {
            codes::unpack(dtype, &buf)
        } else {
            buf
        };
        let spec = &call.results.0[n];
        let path = operand::store(call_path, n, spec, dtype, &shape, &codes)?;
        lines.push(format!(
            "reduce {} over axes {axes:?}: {n} = {dtype} {shape:?} from x {} -> {} (tier {tier})",
            op.name(),
            x.dtype,
            path.display()
        ));
    }
    Ok(lines)
}

fn parse_reduce_op(s: &str) -> Outcome<ReduceOp> {
    ReduceOp::from_name(s).ok_or_else(|| {
        Failure::usage(format!(
            "kernel `reduce`: unknown reduction \"{}\" (sum, prod, max, min, argmax, argmin, logsumexp, mean, variance, l2norm)",
            super::truncate(s, 40)
        ))
    })
}

/// Run a `scan` call; returns the lines to report.
pub fn scan_call(call_path: &Path, call: &Call, exec: &Exec) -> Outcome<Vec<String>> {
    let k = SCAN;
    expect_attrs(k, &call.attrs, &["op", "axis"])?;
    let op_name = string_attr(k, &call.attrs, "op")?
        .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs attribute op")))?;
    let op = ScanOp::from_name(op_name).ok_or_else(|| {
        Failure::usage(format!(
            "kernel `{k}`: unknown scan \"{}\" (sum, prod, max, min, logsumexp, mean, variance)",
            super::truncate(op_name, 40)
        ))
    })?;
    let axis = match call.attrs.0.get("axis") {
        None => 0,
        Some(v) => v
            .as_u64()
            .and_then(|u| usize::try_from(u).ok())
            .ok_or_else(|| {
                Failure::usage(format!(
                    "kernel `{k}`: attribute axis must be an axis number, not {}",
                    super::truncate(&v.to_string(), 40)
                ))
            })?,
    };
    let carried = call.operands.0.contains_key("carry");
    expect_names(
        k,
        "operand",
        &call.operands,
        if carried { &["x", "carry"] } else { &["x"] },
    )?;
    expect_names(k, "result", &call.results, &["y"])?;
    let (Some(x_spec), Some(y_spec)) = (call.operands.0.get("x"), call.results.0.get("y")) else {
        return Err(Failure::usage(format!(
            "kernel `{k}` needs operand x and result y"
        )));
    };
    let x = hold(k, operand::load(call_path, "x", x_spec)?)?;
    let carry = match call.operands.0.get("carry") {
        Some(s) => Some(hold(k, operand::load(call_path, "carry", s)?)?),
        None => None,
    };
    let dtype = operand::dtype_name("result y", y_spec.dtype.as_deref())?.unwrap_or(x.dtype);
    let shape = y_spec.shape.clone().unwrap_or_else(|| x.shape.clone());
    let mut buf = result_buffer("y", dtype, &shape)?;
    {
        let xv = x.view("x")?;
        let cv = match &carry {
            Some(c) => Some(c.view("carry")?),
            None => None,
        };
        let mut yv = ArrayViewMut::contiguous(dtype, &shape, &mut buf)
            .map_err(|e| Failure::run(format!("result y: {e}")))?;
        tessera::scan(op, &xv, axis, cv.as_ref(), &mut yv, exec)
            .map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))?;
    }
    let codes = if values_per_byte(dtype) > 1 {
        codes::unpack(dtype, &buf)
    } else {
        buf
    };
    let path = operand::store(call_path, "y", y_spec, dtype, &shape, &codes)?;
    let tier = exec.resolve_tier()?;
    Ok(vec![format!(
        "scan {} along axis {axis}: y = {dtype} {shape:?} from x {} -> {} (tier {tier})",
        op.name(),
        x.dtype,
        path.display()
    )])
}
