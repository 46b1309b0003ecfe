//! `reduce` and `scan` as calls.
//!
//! ```json
//! {"kernel": "reduce", "attrs": {"op": "sum", "axes": [0]},
//!  "operands": {"x": {"npy": "x.npy", "dtype": "f32"}},
//!  "results": {"y": {"npy": "y.npy", "dtype": "f32"}}}
//! ```
//!
//! `reduce`: attribute `op` is one reduction (`sum`, `prod`, `max`, `min`,
//! `argmax`, `argmin`, `logsumexp`, `mean`, `variance`, `l2norm`, and `sum2`,
//! the compensated sum; `sum2` with `terms: "product"` is the compensated dot
//! product Dot2) with result `y`, or a
//! list of them with results `y0`, `y1`, … (one loop, every result checked
//! before any is written); `axes` (default: every axis); `terms` (default
//! `value`; `square`, `abs` on `x`, or `product`, `squared_difference`,
//! `abs_difference` of `x` and a second operand `x1`). A result's dtype
//! defaults to `x`'s (`i64` for argmax/argmin), its shape to `x`'s without the
//! reduced axes.
//!
//! `scan`: attribute `op` (`sum`, `prod`, `max`, `min`, and the doubling-order
//! `sum_doubling`, `prod_doubling`, …) and `axis` (default 0),
//! operand `x` and, for sum and prod, an optional `carry` (of `x`'s shape
//! without the axis, in the terms' carrier dtype); result `y` of `x`'s shape,
//! its dtype defaulting to `x`'s.
//!
//! Either kernel also takes a fused program instead of `x`: attribute
//! `program` (its text, as kernel `map` takes it), operands `x0`, `x1`, … (its
//! inputs), `output` (which of its outputs is reduced or scanned, default 0)
//! and `shape` (the loop's shape, default the operands' shapes broadcast; a
//! program without inputs needs it). The terms are that output as `map`
//! computes it, tile by tile, with no array of it stored:
//!
//! ```json
//! {"kernel": "reduce", "attrs": {"op": ["sum", "max"], "axes": [1],
//!   "program": "y0 = exp(x0 - x1) * x0"},
//!  "operands": {"x0": {"npy": "x.npy"}, "x1": {"npy": "m.npy"}},
//!  "results": {"y0": {"npy": "s.npy"}, "y1": {"npy": "mx.npy"}}}
//! ```
//!
//! Sub-byte operands need a last axis of whole bytes; sub-byte results too.

use super::{count_attr, expect_attrs, expect_names, numbered, string_attr};
use crate::call::Call;
use crate::codes::{self, values_per_byte};
use crate::failure::{Failure, Outcome};
use crate::operand::{self, Loaded};
use crate::results::Results;
use std::path::Path;
use tessera::reduce::{reduced_shape, TermMap};
use tessera::{ArrayView, ArrayViewMut, DType, Exec, Program, ReduceOp, ScanOp, Terms};

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
        data: codes::pack(a.dtype, &a.data)?,
    })
}

impl Held {
    fn view(&self, name: &str) -> Outcome<ArrayView<'_>> {
        ArrayView::new(self.dtype, &self.shape, &self.strides, 0, &self.data)
            .map_err(|e| Failure::run(format!("operand {name}: {e}")))
    }
}

/// The terms of a call: operand `x` (and `x1` for a pair), or a program's
/// output over its inputs `x0`, `x1`, ….
enum Operands {
    Plain {
        map: TermMap,
        x: Held,
        x1: Option<Held>,
    },
    Program {
        program: Program,
        output: usize,
        ins: Vec<Held>,
        shape: Vec<usize>,
    },
}

impl Operands {
    /// Load the call's operands (`extra`: other operand names the kernel
    /// takes beside them, e.g. `carry`).
    fn load(
        k: &str,
        call_path: &Path,
        call: &Call,
        map: TermMap,
        extra: &[&str],
    ) -> Outcome<Operands> {
        let text = string_attr(k, &call.attrs, "program")?;
        let Some(text) = text else {
            for a in ["output", "shape"] {
                if call.attrs.0.contains_key(a) {
                    return Err(Failure::usage(format!(
                        "kernel `{k}`: attribute {a} goes with attribute program"
                    )));
                }
            }
            let pair = map.arity() == 2;
            let mut names: Vec<&str> = if pair { vec!["x", "x1"] } else { vec!["x"] };
            names.extend(extra.iter().filter(|e| call.operands.0.contains_key(**e)));
            expect_names(k, "operand", &call.operands, &names)?;
            let x = hold(k, operand::load(call_path, "x", &call.operands.0["x"])?)?;
            let x1 = if pair {
                Some(hold(
                    k,
                    operand::load(call_path, "x1", &call.operands.0["x1"])?,
                )?)
            } else {
                None
            };
            return Ok(Operands::Plain { map, x, x1 });
        };
        if map != TermMap::Value {
            return Err(Failure::usage(format!(
                "kernel `{k}`: attribute terms does not go with attribute program \
                 (write the terms in the program)"
            )));
        }
        let names: Vec<&String> = call
            .operands
            .0
            .keys()
            .filter(|n| !extra.contains(&n.as_str()))
            .collect();
        let count = numbered(k, &names, "x", "operands (with a program)")?;
        let mut ins = Vec::with_capacity(count);
        for i in 0..count {
            let name = format!("x{i}");
            ins.push(hold(
                k,
                operand::load(call_path, &name, &call.operands.0[&name])?,
            )?);
        }
        let dtypes: Vec<DType> = ins.iter().map(|h| h.dtype).collect();
        let program = Program::parse(text, &dtypes)
            .map_err(|e| Failure::usage(format!("kernel `{k}`: program: {e}")))?;
        let output = count_attr(k, &call.attrs, "output", "an output number")?.unwrap_or(0);
        let shape = match call.attrs.0.get("shape") {
            Some(v) => usize_list(k, v, "shape")?,
            None => {
                let shapes: Vec<&[usize]> = ins.iter().map(|h| h.shape.as_slice()).collect();
                tessera::elementwise::broadcast_shapes(&shapes).ok_or_else(|| {
                    Failure::run(format!(
                        "kernel `{k}`: the operands' shapes {shapes:?} do not broadcast"
                    ))
                })?
            }
        };
        // The program's nodes evaluated at every index of the loop, which a
        // `shape` names without any operand to bound it.
        let mut counts = shape.clone();
        counts.push(program.nodes().len().max(1));
        crate::budget::charge_work(
            crate::budget::steps(&counts),
            &format!("kernel `{k}`: the program over the loop shape {shape:?}"),
        )?;
        Ok(Operands::Program {
            program,
            output,
            ins,
            shape,
        })
    }

    /// The loop's shape.
    fn shape(&self) -> &[usize] {
        match self {
            Operands::Plain { x, .. } => &x.shape,
            Operands::Program { shape, .. } => shape,
        }
    }

    /// The terms' dtype (a program output beyond its outputs is refused by
    /// the call; its dtype here is the first output's).
    fn dtype(&self) -> DType {
        match self {
            Operands::Plain { x, .. } => x.dtype,
            Operands::Program {
                program, output, ..
            } => {
                let d = program.output_dtypes();
                d.get(*output).or(d.first()).copied().unwrap_or(DType::F32)
            }
        }
    }

    /// What the terms are, for the report.
    fn describe(&self) -> String {
        match self {
            Operands::Plain { x, .. } => format!("x {}", x.dtype),
            Operands::Program { output, .. } => {
                format!("program output y{output} ({})", self.dtype())
            }
        }
    }

    /// Call `f` with the terms over views of the operands.
    fn with_terms<R>(&self, f: impl FnOnce(Terms<'_, '_>) -> Outcome<R>) -> Outcome<R> {
        match self {
            Operands::Plain { map, x, x1 } => {
                let xv = x.view("x")?;
                let x1v = match x1 {
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
                f(terms)
            }
            Operands::Program {
                program,
                output,
                ins,
                shape,
            } => {
                let views = ins
                    .iter()
                    .enumerate()
                    .map(|(i, h)| h.view(&format!("x{i}")))
                    .collect::<Outcome<Vec<_>>>()?;
                f(Terms::program(program, *output, &views, shape))
            }
        }
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
pub fn reduce_call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = REDUCE;
    expect_attrs(
        k,
        &call.attrs,
        &["op", "axes", "terms", "program", "output", "shape"],
    )?;
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
    let names: Vec<String> =
        if ops.len() == 1 && call.attrs.0.get("op").is_some_and(|v| v.is_string()) {
            vec!["y".to_string()]
        } else {
            (0..ops.len()).map(|i| format!("y{i}")).collect()
        };
    let name_refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    expect_names(k, "result", &call.results, &name_refs)?;
    let x = Operands::load(k, call_path, call, map, &[])?;
    let rank = x.shape().len();
    let axes = match call.attrs.0.get("axes") {
        None => (0..rank).collect(),
        Some(v) => usize_list(k, v, "axes")?,
    };
    if let Some(&a) = axes.iter().find(|&&a| a >= rank) {
        return Err(Failure::run(format!(
            "kernel `{k}`: axis {a} is out of range for terms of rank {rank}"
        )));
    }
    let default_shape = reduced_shape(x.shape(), &axes);
    let mut outs = Vec::new();
    for (op, n) in ops.iter().zip(&names) {
        let spec = &call.results.0[n];
        let dtype = operand::dtype_name(&format!("result {n}"), spec.dtype.as_deref())?.unwrap_or(
            match op {
                ReduceOp::ArgMax | ReduceOp::ArgMin => DType::I64,
                _ => x.dtype(),
            },
        );
        let shape = spec.shape.clone().unwrap_or_else(|| default_shape.clone());
        let buf = result_buffer(n, dtype, &shape)?;
        outs.push((dtype, shape, buf));
    }
    x.with_terms(|terms| {
        let mut views = Vec::new();
        for (n, (dtype, shape, buf)) in names.iter().zip(outs.iter_mut()) {
            views.push(
                ArrayViewMut::contiguous(*dtype, shape, buf)
                    .map_err(|e| Failure::run(format!("result {n}: {e}")))?,
            );
        }
        let mut pairs: Vec<(ReduceOp, &mut ArrayViewMut<'_>)> =
            ops.iter().copied().zip(views.iter_mut()).collect();
        tessera::reduce_terms(&axes, terms, &mut pairs, exec)
            .map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))
    })?;
    let tier = exec.resolve_tier()?;
    let mut lines = Vec::new();
    for ((op, n), (dtype, shape, buf)) in ops.iter().zip(&names).zip(outs) {
        let last = shape.last().copied().unwrap_or(1);
        let path = results.add_library(n, dtype, &shape, &buf, last)?;
        lines.push(format!(
            "reduce {} over axes {axes:?}: {n} = {dtype} {shape:?} from {} -> {} (tier {tier})",
            op.name(),
            x.describe(),
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
pub fn scan_call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = SCAN;
    expect_attrs(
        k,
        &call.attrs,
        &["op", "axis", "program", "output", "shape"],
    )?;
    let op_name = string_attr(k, &call.attrs, "op")?
        .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs attribute op")))?;
    let axis = count_attr(k, &call.attrs, "axis", "an axis number")?.unwrap_or(0);
    // The log-shift scans (FastCumSum, FastCumProd): f32 or f64 x alone.
    let fast = match op_name {
        "fast_sum" => Some(tessera::reduce::FastScanOp::Sum),
        "fast_prod" => Some(tessera::reduce::FastScanOp::Prod),
        _ => None,
    };
    if let Some(fop) = fast {
        expect_attrs(k, &call.attrs, &["op", "axis"])?;
        expect_names(k, "operand", &call.operands, &["x"])?;
        expect_names(k, "result", &call.results, &["y"])?;
        let x = operand::load(call_path, "x", &call.operands.0["x"])?;
        let xv = super::whole_byte_view(k, &x)?;
        let y_spec = &call.results.0["y"];
        let dtype = operand::dtype_name("result y", y_spec.dtype.as_deref())?.unwrap_or(x.dtype);
        let shape = y_spec.shape.clone().unwrap_or_else(|| x.shape.clone());
        let mut buf = result_buffer("y", dtype, &shape)?;
        {
            let mut yv = ArrayViewMut::contiguous(dtype, &shape, &mut buf)
                .map_err(|e| Failure::run(format!("result y: {e}")))?;
            tessera::reduce::fast_scan(fop, axis, &xv, &mut yv, exec)
                .map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))?;
        }
        let last = shape.last().copied().unwrap_or(1);
        let path = results.add_library("y", dtype, &shape, &buf, last)?;
        return Ok(vec![format!(
            "scan {op_name} along axis {axis}: y = {dtype} {shape:?} -> {} (tier {})",
            path.display(),
            exec.resolve_tier()?
        )]);
    }
    let op = ScanOp::from_name(op_name).ok_or_else(|| {
        Failure::usage(format!(
            "kernel `{k}`: unknown scan \"{}\" (sum, prod, max, min, argmax, argmin, logsumexp, mean, variance, fast_sum, fast_prod)",
            super::truncate(op_name, 40)
        ))
    })?;
    expect_names(k, "result", &call.results, &["y"])?;
    let y_spec = &call.results.0["y"];
    let x = Operands::load(k, call_path, call, TermMap::Value, &["carry"])?;
    let carry = match call.operands.0.get("carry") {
        Some(s) => Some(hold(k, operand::load(call_path, "carry", s)?)?),
        None => None,
    };
    // An ArgMax/ArgMin scan writes i64 positions.
    let default = if op.is_arg() { DType::I64 } else { x.dtype() };
    let dtype = operand::dtype_name("result y", y_spec.dtype.as_deref())?.unwrap_or(default);
    let shape = y_spec.shape.clone().unwrap_or_else(|| x.shape().to_vec());
    let mut buf = result_buffer("y", dtype, &shape)?;
    x.with_terms(|terms| {
        let cv = match &carry {
            Some(c) => Some(c.view("carry")?),
            None => None,
        };
        let mut yv = ArrayViewMut::contiguous(dtype, &shape, &mut buf)
            .map_err(|e| Failure::run(format!("result y: {e}")))?;
        tessera::scan_terms(axis, terms, cv.as_ref(), &mut [(op, &mut yv)], exec)
            .map_err(|e| Failure::run(format!("kernel `{k}`: {e}")))
    })?;
    let last = shape.last().copied().unwrap_or(1);
    let path = results.add_library("y", dtype, &shape, &buf, last)?;
    let tier = exec.resolve_tier()?;
    Ok(vec![format!(
        "scan {} along axis {axis}: y = {dtype} {shape:?} from {} -> {} (tier {tier})",
        op.name(),
        x.describe(),
        path.display()
    )])
}
