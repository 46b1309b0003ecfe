//! `attention` as a call: flash attention (`tessera::attention`) of `q` over
//! `k` and `v`, with a mask-and-score program given as text.
//!
//! ```json
//! {"kernel": "attention",
//!  "attrs": {"scale": 0.125, "acc": "f32",
//!            "program": "y0 = coord(3) <= coord(2); y1 = x0"},
//!  "operands": {"q": {"npy": "q.npy"}, "k": {"npy": "k.npy"}, "v": {"npy": "v.npy"},
//!               "lengths": {"npy": "lengths.npy"}, "x1": {"npy": "slopes.npy"}},
//!  "results": {"o": {"npy": "o.npy"}, "lse": {"npy": "lse.npy"}}}
//! ```
//!
//! `q` is `[lead…, hq, tq, dk]`, `k` `[lead…, hk, tk, dk]`, `v` `[lead…,
//! hk, tk, dv]`; optional `lengths` (i64, `[lead…]`) and loads `x1`, `x2`, …
//! (the program's operands after the score `x0`). Attributes: `scale`
//! (default 1/√dk), `acc` (the accumulator and lse's dtype: f32 or f64;
//! default f64 for f64 inputs, else f32) and `program` (default `y0 =
//! true; y1 = x0`: every pair visible, scores kept). `o` is of the
//! accumulator's dtype unless its result names q's; `lse` is the
//! accumulator's. Orders, bounds and refusals are the library's; both
//! results are written only when the call succeeds.

use super::{expect_attrs, number_attr, string_attr, whole_byte_view};
use crate::call::Call;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand;
use crate::results::Results;
use std::path::Path;
use tessera::attention::{attention, Kv};
use tessera::{ArrayView, DType, Exec, Program};

/// The kernel's name in call files.
pub const NAME: &str = "attention";

/// What `tessera kernels` says of it.
pub const DOC: &str =
    "flash attention: o = softmax(scale·q·kᵀ masked and rewritten by a program)·v \
over key blocks of 64 with a running max, sum and accumulator, and lse = the rows' log-sum-exp; \
grouped heads (hk divides hq), per-lead lengths, the same bits at any thread count";

/// Run an attention as described by `call`; returns the lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    expect_attrs(NAME, &call.attrs, &["scale", "acc", "program"])?;
    for n in ["q", "k", "v"] {
        if !call.operands.0.contains_key(n) {
            return Err(Failure::usage(format!("kernel `{NAME}` needs operand {n}")));
        }
    }
    // Loads x1, x2, … without gaps; no other names.
    let mut n_loads = 0usize;
    for name in call.operands.0.keys() {
        match name.as_str() {
            "q" | "k" | "v" | "lengths" => {}
            other => {
                let ok = other
                    .strip_prefix('x')
                    .filter(|d| !d.is_empty() && !d.starts_with('0'))
                    .and_then(|d| d.parse::<usize>().ok())
                    .filter(|&i| i >= 1);
                if ok.is_none() {
                    return Err(Failure::usage(format!(
                        "kernel `{NAME}` takes operands q, k, v, lengths and loads x1, x2, …; the call file names `{}`",
                        super::truncate(other, 40)
                    )));
                }
                n_loads += 1;
            }
        }
    }
    for i in 1..=n_loads {
        if !call.operands.0.contains_key(&format!("x{i}")) {
            return Err(Failure::usage(format!(
                "kernel `{NAME}` takes loads x1, x2, … without gaps; x{i} is missing"
            )));
        }
    }
    super::expect_names(NAME, "result", &call.results, &["lse", "o"])?;
    let load = |n: &str| operand::load(call_path, n, &call.operands.0[n]);
    let q = load("q")?;
    let k = load("k")?;
    let v = load("v")?;
    let lengths = match call.operands.0.get("lengths") {
        Some(_) => Some(load("lengths")?),
        None => None,
    };
    let loads: Vec<operand::Loaded> = (1..=n_loads)
        .map(|i| load(&format!("x{i}")))
        .collect::<Outcome<_>>()?;
    let acc = match string_attr(NAME, &call.attrs, "acc")? {
        None => {
            if q.dtype == DType::F64 {
                DType::F64
            } else {
                DType::F32
            }
        }
        Some(name) => operand::dtype_name("attribute acc", Some(name))?.unwrap_or(DType::F32),
    };
    let text = string_attr(NAME, &call.attrs, "program")?.unwrap_or("y0 = true; y1 = x0");
    let mut in_dtypes = vec![acc];
    in_dtypes.extend(loads.iter().map(|l| l.dtype));
    let program = Program::parse(text, &in_dtypes)
        .map_err(|e| Failure::usage(format!("kernel `{NAME}`: program: {e}")))?;
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{NAME}`: {e}"));
    let qv = whole_byte_view(NAME, &q)?;
    let kv = Kv {
        k: whole_byte_view(NAME, &k)?,
        v: whole_byte_view(NAME, &v)?,
    };
    let lv: Vec<ArrayView<'_>> = loads
        .iter()
        .map(|l| whole_byte_view(NAME, l))
        .collect::<Outcome<_>>()?;
    let lenv = match &lengths {
        Some(l) => Some(whole_byte_view(NAME, l)?),
        None => None,
    };
    let qs = qv.shape().to_vec();
    if qs.len() < 3 || kv.v.shape().len() != qs.len() || kv.k.shape().len() != qs.len() {
        return Err(Failure::run(format!(
            "kernel `{NAME}`: q, k and v are of one rank, 3 or more ([lead…, heads, rows, depth]); they have shapes {:?}, {:?}, {:?}",
            qs,
            kv.k.shape(),
            kv.v.shape()
        )));
    }
    let r = qs.len();
    let dv = kv.v.shape()[r - 1];
    let tk = kv.k.shape()[r - 2];
    let dk = qs[r - 1];
    let scale = number_attr(NAME, &call.attrs, "scale")?.unwrap_or(1.0 / (dk.max(1) as f64).sqrt());
    let odt = operand::dtype_name("result o", call.results.0["o"].dtype.as_deref())?.unwrap_or(acc);
    let ldt =
        operand::dtype_name("result lse", call.results.0["lse"].dtype.as_deref())?.unwrap_or(acc);
    let mut oshape = qs.clone();
    oshape[r - 1] = dv;
    let lshape = qs[..r - 1].to_vec();
    // Work: every product of both matrix products, and the program's nodes
    // at every pair.
    let pairs = crate::budget::steps(&[lshape.iter().product::<usize>(), tk]);
    let nodes = program.nodes().len().max(1) as u128;
    crate::budget::charge_work(
        pairs.saturating_mul((dk + dv) as u128 + nodes),
        &format!("kernel `{NAME}`: the products and the program over the pairs"),
    )?;
    let obytes = npy::byte_size(&oshape, odt.info().item_bytes)
        .map_err(|e| Failure::run(format!("result o: {e}")))?;
    let lbytes = npy::byte_size(&lshape, ldt.info().item_bytes)
        .map_err(|e| Failure::run(format!("result lse: {e}")))?;
    let mut obuf = operand::zeroed(obytes)?;
    let mut lbuf = operand::zeroed(lbytes)?;
    {
        let mut ov = super::result_view("o", odt, &oshape, &mut obuf)?;
        let mut lsv = super::result_view("lse", ldt, &lshape, &mut lbuf)?;
        attention(
            &program,
            scale,
            &qv,
            &kv,
            &lv,
            lenv.as_ref(),
            &mut ov,
            &mut lsv,
            exec,
        )
        .map_err(fail)?;
    }
    let mut lines = Vec::new();
    for (name, dt, shape, buf) in [("o", odt, &oshape, &obuf), ("lse", ldt, &lshape, &lbuf)] {
        let path = results.add(name, dt, shape, buf)?;
        lines.push(format!(
            "{NAME}: {name} = {dt} {shape:?} -> {}",
            path.display()
        ));
    }
    Ok(lines)
}
