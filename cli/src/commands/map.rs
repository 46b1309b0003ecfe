//! `map` as a call: a fused elementwise program (`tessera::map`) given as text
//! in attribute `program`, operands `x0`, `x1`, … and results `y0`, `y1`, ….
//!
//! ```json
//! {"kernel": "map",
//!  "attrs": {"program": "y0 = exp(x0 - x1) * 0.5f32; y1 = x0 > x1"},
//!  "operands": {"x0": {"npy": "a.npy"}, "x1": {"npy": "b.npy"}},
//!  "results": {"y0": {"npy": "e.npy"}, "y1": {"npy": "gt.npy"}}}
//! ```
//!
//! The program's input dtypes are the operands'; each result's dtype must be
//! (and defaults to) its output node's, and every result has one shape: the
//! operands' shapes broadcast, unless the results name another they broadcast
//! to (results that give a shape must all give that one). `"packed"` does not
//! apply: sub-byte operands and results are not taken here.

use super::{expect_attrs, numbered, string_attr, whole_byte_view};
use crate::call::Call;
use crate::codes::values_per_byte;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand;
use crate::results::Results;
use std::path::Path;
use tessera::{ArrayViewMut, Exec, Program};

/// The kernel's name in call files.
pub const NAME: &str = "map";

/// What `tessera kernels` says of it.
pub const DOC: &str = "a fused elementwise program (attribute program, e.g. \
\"y0 = exp(x0 - x1) * 0.5f32; y1 = x0 > x1\"): every node computes in its carrier and rounds once \
into its dtype, tile by tile, so the chain reads and writes memory once";

/// Run a program as described by `call`; returns the lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    expect_attrs(NAME, &call.attrs, &["program"])?;
    let text = string_attr(NAME, &call.attrs, "program")?.ok_or_else(|| {
        Failure::usage(format!(
            "kernel `{NAME}` needs attribute program (the program's text)"
        ))
    })?;
    let in_names: Vec<&String> = call.operands.0.keys().collect();
    let n_in = numbered(NAME, &in_names, "x", "operands")?;
    let out_names: Vec<&String> = call.results.0.keys().collect();
    let n_out = numbered(NAME, &out_names, "y", "results")?;
    let mut loaded = Vec::with_capacity(n_in);
    for i in 0..n_in {
        let name = format!("x{i}");
        loaded.push(operand::load(call_path, &name, &call.operands.0[&name])?);
    }
    let dtypes: Vec<_> = loaded.iter().map(|x| x.dtype).collect();
    let program = Program::parse(text, &dtypes)
        .map_err(|e| Failure::usage(format!("kernel `{NAME}`: program: {e}")))?;
    let out_dtypes = program.output_dtypes();
    if out_dtypes.len() != n_out {
        return Err(Failure::usage(format!(
            "kernel `{NAME}`: the program has {} outputs, the call file names {n_out} results",
            out_dtypes.len()
        )));
    }
    let shapes: Vec<&[usize]> = loaded.iter().map(|x| x.shape.as_slice()).collect();
    let mut shape = tessera::elementwise::broadcast_shapes(&shapes).ok_or_else(|| {
        Failure::run(format!(
            "kernel `{NAME}`: the operands' shapes {shapes:?} do not broadcast"
        ))
    })?;
    // Every result has the loop's one shape: results that give shapes must
    // give the same one.
    let mut given: Option<(String, &Vec<usize>)> = None;
    for i in 0..n_out {
        let name = format!("y{i}");
        if let Some(s) = &call.results.0[&name].shape {
            match &given {
                Some((first, g)) if *g != s => {
                    return Err(Failure::usage(format!(
                        "kernel `{NAME}`: results {first} and {name} give different shapes \
                         ({} and {}); every result of a map has the loop's one shape",
                        super::truncate(&format!("{g:?}"), 60),
                        super::truncate(&format!("{s:?}"), 60)
                    )))
                }
                Some(_) => {}
                None => given = Some((name, s)),
            }
        }
    }
    if let Some((_, s)) = given {
        shape = s.clone();
    }
    // Every node of the program at every index of the loop.
    let mut counts = shape.clone();
    counts.push(program.nodes().len().max(1));
    crate::budget::charge_work(
        crate::budget::steps(&counts),
        &format!("kernel `{NAME}`: the program over the loop shape {shape:?}"),
    )?;
    let mut bufs = Vec::with_capacity(n_out);
    let mut to = Vec::with_capacity(n_out);
    for (i, &want) in out_dtypes.iter().enumerate() {
        let spec = &call.results.0[&format!("y{i}")];
        let d =
            operand::dtype_name(&format!("result y{i}"), spec.dtype.as_deref())?.unwrap_or(want);
        if d != want {
            return Err(Failure::run(format!(
                "result y{i}: the program's output y{i} is {want}, not {d}"
            )));
        }
        if values_per_byte(d) > 1 {
            return Err(Failure::run(format!(
                "result y{i}: kernel `{NAME}` does not write sub-byte dtypes ({d})"
            )));
        }
        let bytes = npy::byte_size(&shape, d.info().item_bytes)
            .map_err(|e| Failure::run(format!("result y{i}: {e}")))?;
        bufs.push(operand::zeroed(bytes)?);
        to.push(d);
    }
    let views = loaded
        .iter()
        .map(|x| whole_byte_view(NAME, x))
        .collect::<Outcome<Vec<_>>>()?;
    {
        let mut outs = bufs
            .iter_mut()
            .zip(&to)
            .enumerate()
            .map(|(i, (b, &d))| {
                ArrayViewMut::contiguous(d, &shape, b)
                    .map_err(|e| Failure::run(format!("result y{i}: {e}")))
            })
            .collect::<Outcome<Vec<_>>>()?;
        tessera::map(&program, &views, &mut outs, exec)
            .map_err(|e| Failure::run(format!("kernel `{NAME}`: {e}")))?;
    }
    let tier = exec.resolve_tier()?;
    let mut lines = Vec::with_capacity(n_out);
    for (i, (b, &d)) in bufs.iter().zip(&to).enumerate() {
        let name = format!("y{i}");
        let path = results.add(&name, d, &shape, b)?;
        lines.push(format!(
            "map: {name} = {d} {shape:?} -> {} (tier {tier})",
            path.display()
        ));
    }
    Ok(lines)
}
