//! `fold` and `assemble` as calls.
//!
//! ```json
//! {"kernel": "fold", "attrs": {"pad": [[1, 1, 3, 1, 1]]},
//!  "operands": {"x": {"npy": "windows.npy"}},
//!  "results": {"y": {"npy": "y.npy", "shape": [8]}}}
//! {"kernel": "assemble", "attrs": {"starts": [[0, 0], [2, 1]], "fill": 0},
//!  "operands": {"piece0": {"npy": "a.npy"}, "piece1": {"npy": "b.npy"}},
//!  "results": {"y": {"npy": "y.npy", "shape": [4, 4]}}}
//! ```
//!
//! `fold`: the adjoint of a padded load by `pad` (one entry per axis of y,
//! `[before, after]` or `[before, after, size, stride, dilation]`) of y's
//! shape, which the result must give; x has the load's shape; y's dtype is
//! x's. `assemble`: pieces `piece0, piece1, …` into y (its `shape` given,
//! its dtype that of the pieces, or its `dtype` where there is none), piece
//! k's region starting at `starts[k]`, the last piece holding an index
//! winning, `fill` (a number, converted as a cast does; default the element
//! of zero bits) elsewhere. Order and refusals are the library's
//! (`tessera::assembly`). Any operand of any kernel may itself be a padded
//! load: its `pad` (and `fill`) fields (see `tessera kernels`).

use super::{expect_attrs, expect_names, numbered};
use crate::call::Call;
use crate::codes::values_per_byte;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand;
use crate::results::Results;
use std::path::Path;
use tessera::assembly::Piece;
use tessera::{ArrayView, ArrayViewMut, DType, Exec};

/// `fold`'s name in call files.
pub const FOLD: &str = "fold";
/// `assemble`'s name in call files.
pub const ASSEMBLE: &str = "assemble";

/// `tile`'s name in call files.
pub const TILE: &str = "tile";
/// `sparse_dot`'s name in call files.
pub const SPARSE_DOT: &str = "sparse_dot";
/// What `tessera kernels` says of `tile`.
pub const TILE_DOC: &str = "The pattern repeated across y (its shape given): y at index i is the pattern at i mod its extents; bits copied, every dtype";
/// What `tessera kernels` says of `sparse_dot`.
pub const SPARSE_DOT_DOC: &str = "One CSR row times a vector: sum of v[i] * x[idx[i]] (f32 or f64; idx i32 or i64), the products summed in lane order as reduce's Sum; a column outside x contributes nothing";
/// What `tessera kernels` says of `fold`.
pub const FOLD_DOC: &str = "The adjoint of a padded load (pad: per axis [before, after] or [before, after, size, stride, dilation]): each element of y the sum of the elements of x the load reads from it, in C order of their taps, no +0 before the first, +0 where none";
/// What `tessera kernels` says of `assemble`.
pub const ASSEMBLE_DOC: &str = "Pieces piece0, piece1, ... into regions of y starting at starts[k]; the last piece holding an index wins, fill elsewhere; bits copied, every dtype";

fn pad_entries(k: &str, call: &Call) -> Outcome<Vec<Vec<u64>>> {
    let v = call
        .attrs
        .0
        .get("pad")
        .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs attribute pad")))?;
    serde_json::from_value::<Vec<Vec<u64>>>(v.clone()).map_err(|_| {
        Failure::usage(format!(
            "kernel `{k}`: attribute pad must be a list of [before, after] or [before, after, size, stride, dilation] counts, not {}",
            super::truncate(&v.to_string(), 40)
        ))
    })
}

fn result_shape(k: &str, call: &Call) -> Outcome<Vec<usize>> {
    call.results.0["y"].shape.clone().ok_or_else(|| {
        Failure::usage(format!(
            "kernel `{k}`: result y must give its shape (the destination's)"
        ))
    })
}

/// Run `fold`; returns the lines to report.
pub fn fold_call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = FOLD;
    expect_attrs(k, &call.attrs, &["pad"])?;
    expect_names(k, "operand", &call.operands, &["x"])?;
    expect_names(k, "result", &call.results, &["y"])?;
    let pad = operand::pad_of(&format!("kernel `{k}`"), &pad_entries(k, call)?)?;
    let shape = result_shape(k, call)?;
    let x = operand::load(call_path, "x", &call.operands.0["x"])?;
    let y_spec = &call.results.0["y"];
    let dtype = operand::dtype_name("result y", y_spec.dtype.as_deref())?.unwrap_or(x.dtype);
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    // Sub-byte dtypes travel as one code per byte; the library folds them
    // as packed arrays, so they are packed first.
    let packed;
    let (xbytes, xstrides): (&[u8], Vec<isize>) = if x.is_codes() {
        packed = crate::codes::pack(x.dtype, &x.data)?;
        (&packed, npy::c_strides(&x.shape))
    } else {
        (&x.data, x.strides.clone())
    };
    let xv = ArrayView::new(x.dtype, &x.shape, &xstrides, 0, xbytes).map_err(fail)?;
    let count = npy::element_count(&shape);
    let vpb = values_per_byte(dtype);
    let bytes = if vpb > 1 {
        if shape.last().is_some_and(|&l| l % vpb != 0) {
            return Err(Failure::run(format!(
                "result y: the last extent of a {dtype} result must be a multiple of {vpb}"
            )));
        }
        count / vpb
    } else {
        npy::byte_size(&shape, dtype.info().item_bytes)
            .map_err(|e| Failure::run(format!("result y: {e}")))?
    };
    let mut out = operand::zeroed(bytes)?;
    let mut yv = ArrayViewMut::contiguous(dtype, &shape, &mut out).map_err(fail)?;
    tessera::assembly::fold(&pad, &xv, &mut yv, exec).map_err(fail)?;
    let last = shape.last().copied().unwrap_or(1);
    let path = results.add_library("y", dtype, &shape, &out, last)?;
    Ok(vec![format!(
        "fold of x {:?} into y = {dtype} {shape:?} -> {} (tier {})",
        x.shape,
        path.display(),
        exec.resolve_tier()?
    )])
}

/// Run `assemble`; returns the lines to report.
pub fn assemble_call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = ASSEMBLE;
    expect_attrs(k, &call.attrs, &["starts", "fill"])?;
    expect_names(k, "result", &call.results, &["y"])?;
    let names: Vec<&String> = call.operands.0.keys().collect();
    let n = numbered(k, &names, "piece", "operands")?;
    let starts: Vec<Vec<usize>> = match call.attrs.0.get("starts") {
        None if n == 0 => Vec::new(),
        None => {
            return Err(Failure::usage(format!(
                "kernel `{k}` needs attribute starts"
            )))
        }
        Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
            Failure::usage(format!(
                "kernel `{k}`: attribute starts must be a list of index lists, not {}",
                super::truncate(&v.to_string(), 40)
            ))
        })?,
    };
    if starts.len() != n {
        return Err(Failure::usage(format!(
            "kernel `{k}`: {} starts for {n} pieces",
            starts.len()
        )));
    }
    let shape = result_shape(k, call)?;
    let mut pieces = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("piece{i}");
        pieces.push(operand::load(call_path, &name, &call.operands.0[&name])?);
    }
    let y_spec = &call.results.0["y"];
    let named = operand::dtype_name("result y", y_spec.dtype.as_deref())?;
    let dtype = match (named, pieces.first()) {
        (Some(d), _) => d,
        (None, Some(p)) => p.dtype,
        (None, None) => {
            return Err(Failure::usage(format!(
                "kernel `{k}`: with no piece, result y must give its dtype"
            )))
        }
    };
    // Sub-byte dtypes travel as one code per byte: they are assembled as
    // u8 codes, which copies the same bits.
    let codes = values_per_byte(dtype) > 1;
    let work = if codes { DType::U8 } else { dtype };
    let fill = match call.attrs.0.get("fill") {
        None => None,
        Some(serde_json::Value::Number(num)) => {
            let mut e = operand::element_of(&format!("kernel `{k}`"), dtype, num)?;
            if codes {
                // A 0-d packed value sits in the high bits of its byte.
                e[0] >>= 8 - dtype.info().bits;
            }
            Some(e)
        }
        Some(v) => {
            return Err(Failure::usage(format!(
                "kernel `{k}`: attribute fill must be a number, not {}",
                super::truncate(&v.to_string(), 40)
            )))
        }
    };
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    let mut views = Vec::with_capacity(n);
    for (p, start) in pieces.iter().zip(&starts) {
        if p.dtype != dtype {
            return Err(Failure::run(format!(
                "operand {}: dtype {} is not the result's {dtype}",
                p.name, p.dtype
            )));
        }
        views.push(Piece {
            start: start.clone(),
            x: ArrayView::new(work, &p.shape, &p.strides, 0, &p.data).map_err(fail)?,
        });
    }
    let bytes = npy::byte_size(&shape, work.info().item_bytes)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    let mut out = operand::zeroed(bytes)?;
    let mut yv = ArrayViewMut::contiguous(work, &shape, &mut out).map_err(fail)?;
    let fill = match &fill {
        Some(e) => Some(ArrayView::contiguous(work, &[], e).map_err(fail)?),
        None => None,
    };
    tessera::assembly::assemble(fill.as_ref(), &views, &mut yv, exec).map_err(fail)?;
    let path = results.add("y", dtype, &shape, &out)?;
    Ok(vec![format!(
        "assemble of {n} pieces into y = {dtype} {shape:?} -> {} (tier {})",
        path.display(),
        exec.resolve_tier()?
    )])
}

/// Run `tile`; returns the lines to report.
pub fn tile_call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = TILE;
    expect_attrs(k, &call.attrs, &[])?;
    expect_names(k, "operand", &call.operands, &["pattern"])?;
    expect_names(k, "result", &call.results, &["y"])?;
    let shape = result_shape(k, call)?;
    let p = operand::load(call_path, "pattern", &call.operands.0["pattern"])?;
    let y_spec = &call.results.0["y"];
    let dtype = operand::dtype_name("result y", y_spec.dtype.as_deref())?.unwrap_or(p.dtype);
    if dtype != p.dtype {
        return Err(Failure::run(format!(
            "result y: dtype {dtype} is not the pattern's {}",
            p.dtype
        )));
    }
    // Sub-byte dtypes travel as one code per byte: tiled as u8 codes.
    let work = if p.is_codes() { DType::U8 } else { dtype };
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    let pv = ArrayView::new(work, &p.shape, &p.strides, 0, &p.data).map_err(fail)?;
    let bytes = npy::byte_size(&shape, work.info().item_bytes)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    let mut out = operand::zeroed(bytes)?;
    let mut yv = ArrayViewMut::contiguous(work, &shape, &mut out).map_err(fail)?;
    tessera::assembly::tile(&pv, &mut yv, exec).map_err(fail)?;
    let path = results.add("y", dtype, &shape, &out)?;
    Ok(vec![format!(
        "tile of {:?} into y = {dtype} {shape:?} -> {} (tier {})",
        p.shape,
        path.display(),
        exec.resolve_tier()?
    )])
}

/// Run `sparse_dot`; returns the lines to report.
pub fn sparse_dot_call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = SPARSE_DOT;
    expect_attrs(k, &call.attrs, &[])?;
    expect_names(k, "operand", &call.operands, &["v", "idx", "x"])?;
    expect_names(k, "result", &call.results, &["y"])?;
    let load = |name: &str| operand::load(call_path, name, &call.operands.0[name]);
    let (v, idx, x) = (load("v")?, load("idx")?, load("x")?);
    let vv = super::whole_byte_view(k, &v)?;
    let iv = super::whole_byte_view(k, &idx)?;
    let xv = super::whole_byte_view(k, &x)?;
    let y_spec = &call.results.0["y"];
    if y_spec.shape.as_ref().is_some_and(|s| !s.is_empty()) {
        return Err(Failure::run("result y: a sparse dot is 0-d".to_string()));
    }
    let dtype = operand::dtype_name("result y", y_spec.dtype.as_deref())?.unwrap_or(v.dtype);
    if values_per_byte(dtype) > 1 {
        return Err(Failure::run(format!(
            "result y: kernel `{k}` does not write sub-byte dtypes ({dtype})"
        )));
    }
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    let mut out = operand::zeroed(dtype.info().item_bytes)?;
    let mut yv = ArrayViewMut::contiguous(dtype, &[], &mut out).map_err(fail)?;
    tessera::reduce::sparse_dot(&vv, &iv, &xv, &mut yv, exec).map_err(fail)?;
    let path = results.add("y", dtype, &[], &out)?;
    Ok(vec![format!(
        "sparse_dot of {} terms over x {:?}: y = {dtype} -> {} (tier {})",
        v.shape.first().copied().unwrap_or(0),
        x.shape,
        path.display(),
        exec.resolve_tier()?
    )])
}
