//! `contract` as a call: operands `a`, `b` and optionally `init`, result `y`.
//!
//! ```json
//! {"kernel": "contract",
//!  "attrs": {"contracting": [[1, 0]], "batch": [], "acc": "f32"},
//!  "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}},
//!  "results": {"y": {"npy": "y.npy", "dtype": "f32"}}}
//! ```
//!
//! `contracting` (required) and `batch` (default none) are lists of
//! `[axis of a, axis of b]` pairs; `acc` is the accumulator (`f32`, `f64`,
//! `c64`, `c128`, the compensated pairs `df32` and `dd64`, or an integer
//! of 4 to 64 bits; default: `tessera::contract::default_acc` of a's and
//! b's dtypes). `y`'s dtype defaults to `acc` (a pair as complex .npy: hi
//! real, lo imaginary), its shape to the contraction's
//! (batch extents, a's free axes, b's free axes); `init` broadcasts to it.
//! Order, bound and refusals are the library's (`tessera::contract`).
//! Sub-byte dtypes are not taken here.

use super::{expect_attrs, string_attr, whole_byte_view};
use crate::call::{Call, UniqueMap};
use crate::codes::values_per_byte;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand;
use crate::results::Results;
use std::path::Path;
use tessera::contract::{default_acc, output_shape, ContractSpec};
use tessera::{ArrayViewMut, Exec};

/// The kernel's name in call files.
pub const NAME: &str = "contract";

/// What `tessera kernels` says of it.
pub const DOC: &str = "dst[B,I,J] = init[B,I,J] + sum_K a[B,I,K]*b[B,K,J] in an accumulator \
(f32, f64, c64, c128, or an integer of 4 to 64 bits, exact modulo 2^w), rounded once into y: chain order (fused multiply-adds in increasing k) \
where rows > 4, columns > 4, rows*columns >= 64 and depth < 128*rows*columns, lane order otherwise";

/// A list of axis pairs from attribute `key`.
fn pairs(attrs: &UniqueMap<serde_json::Value>, key: &str) -> Outcome<Option<Vec<(usize, usize)>>> {
    pairs_of(NAME, attrs, key)
}

/// A list of axis pairs from attribute `key` of kernel `kernel`'s call.
pub fn pairs_of(
    kernel: &str,
    attrs: &UniqueMap<serde_json::Value>,
    key: &str,
) -> Outcome<Option<Vec<(usize, usize)>>> {
    let Some(v) = attrs.0.get(key) else {
        return Ok(None);
    };
    let bad = || {
        Failure::usage(format!(
            "kernel `{kernel}`: attribute {key} must be a list of [axis of a, axis of b] pairs, not {}",
            super::truncate(&v.to_string(), 40)
        ))
    };
    let list = v.as_array().ok_or_else(bad)?;
    list.iter()
        .map(|p| {
            let p = p.as_array().ok_or_else(bad)?;
            match p.as_slice() {
                [x, y] => Ok((
                    x.as_u64().ok_or_else(bad)? as usize,
                    y.as_u64().ok_or_else(bad)? as usize,
                )),
                _ => Err(bad()),
            }
        })
        .collect::<Outcome<Vec<_>>>()
        .map(Some)
}

/// Charge a contraction's products (every output times the contracted
/// extents of `a`) to the call's work budget; `out` is the output shape
/// [`output_shape`] accepted for `spec`.
pub fn charge_products(out: &[usize], a: &[usize], spec: &ContractSpec) -> Outcome<()> {
    let mut counts = out.to_vec();
    counts.extend(
        spec.contracting
            .iter()
            .map(|p| a.get(p.0).copied().unwrap_or(1)),
    );
    crate::budget::charge_work(crate::budget::steps(&counts), "the contraction's products")
}

/// Run a contraction as described by `call` (read from `call_path`); returns
/// the lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    expect_attrs(NAME, &call.attrs, &["contracting", "batch", "acc"])?;
    let contracting = pairs(&call.attrs, "contracting")?.ok_or_else(|| {
        Failure::usage(format!(
            "kernel `{NAME}` needs attribute contracting (a list of [axis of a, axis of b] pairs)"
        ))
    })?;
    let batch = pairs(&call.attrs, "batch")?.unwrap_or_default();
    let acc = operand::dtype_name("attribute acc", string_attr(NAME, &call.attrs, "acc")?)?;
    for g in call.operands.0.keys() {
        if !["a", "b", "init"].contains(&g.as_str()) {
            return Err(Failure::usage(format!(
                "kernel `{NAME}` takes operands `a`, `b` and `init`; the call file names `{}`",
                super::truncate(g, 40)
            )));
        }
    }
    super::expect_names(NAME, "result", &call.results, &["y"])?;
    let (Some(a_spec), Some(b_spec), Some(out_spec)) = (
        call.operands.0.get("a"),
        call.operands.0.get("b"),
        call.results.0.get("y"),
    ) else {
        return Err(Failure::usage(format!(
            "kernel `{NAME}` needs operands a and b and result y"
        )));
    };
    let a = operand::load(call_path, "a", a_spec)?;
    let b = operand::load(call_path, "b", b_spec)?;
    let init = match call.operands.0.get("init") {
        Some(s) => Some(operand::load(call_path, "init", s)?),
        None => None,
    };
    let spec = ContractSpec {
        batch,
        contracting,
        acc: acc.unwrap_or_else(|| default_acc(a.dtype, b.dtype)),
    };
    let shape = output_shape(&a.shape, &b.shape, &spec)
        .map_err(|e| Failure::run(format!("kernel `{NAME}`: {e}")))?;
    if let Some(s) = &out_spec.shape {
        if *s != shape {
            return Err(Failure::run(format!(
                "result y: shape {s:?} is not the contraction's {shape:?}"
            )));
        }
    }
    let to = operand::dtype_name("result y", out_spec.dtype.as_deref())?.unwrap_or(spec.acc);
    if values_per_byte(to) > 1 {
        return Err(Failure::run(format!(
            "result y: kernel `{NAME}` does not write sub-byte dtypes ({to})"
        )));
    }
    let bytes = npy::byte_size(&shape, to.info().item_bytes)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    charge_products(&shape, &a.shape, &spec)?;
    let (va, vb) = (whole_byte_view(NAME, &a)?, whole_byte_view(NAME, &b)?);
    let vi = init
        .as_ref()
        .map(|x| whole_byte_view(NAME, x))
        .transpose()?;
    let mut out = operand::zeroed(bytes)?;
    let mut out_view = ArrayViewMut::contiguous(to, &shape, &mut out)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    tessera::contract(&spec, &va, &vb, vi.as_ref(), &mut out_view, exec)
        .map_err(|e| Failure::run(format!("kernel `{NAME}`: {e}")))?;
    drop(out_view);
    let path = results.add("y", to, &shape, &out)?;
    let tier = exec.resolve_tier()?;
    let (r, c, k) = {
        let g = |s: &[usize], skip: &dyn Fn(usize) -> bool| -> usize {
            s.iter()
                .enumerate()
                .filter(|(i, _)| !skip(*i))
                .map(|(_, &n)| n)
                .product()
        };
        let named_a = |i: usize| spec.batch.iter().chain(&spec.contracting).any(|p| p.0 == i);
        let named_b = |i: usize| spec.batch.iter().chain(&spec.contracting).any(|p| p.1 == i);
        let k: usize = spec.contracting.iter().map(|p| a.shape[p.0]).product();
        (g(&a.shape, &named_a), g(&b.shape, &named_b), k)
    };
    let order = tessera::contract::choose_order(r, c, k);
    Ok(vec![format!(
        "contract (acc {}, {order:?} order, rows {r}, columns {c}, depth {k}): y = {to} {shape:?} -> {} (tier {tier})",
        spec.acc,
        path.display()
    )])
}
