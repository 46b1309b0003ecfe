//! `contract_scaled` and `contract_grouped` as calls.
//!
//! ```json
//! {"kernel": "contract_scaled",
//!  "attrs": {"contracting": [[1, 1]], "acc": "f32", "a_block": 32},
//!  "operands": {"a": {"npy": "codes.npy", "dtype": "e4m3fn"},
//!               "a_scales": {"npy": "scales.npy", "dtype": "u8"},
//!               "b": {"npy": "b.npy"}},
//!  "results": {"y": {"npy": "y.npy"}}}
//! ```
//!
//! `contract_scaled`: operands `a`, `b`, optional `init`, and for each of a
//! and b optionally its block scales (`a_scales`, `b_scales`: `f32`/`f64`
//! values, or UE8M0 codes as `u8` or `e8m0fnu`), one per run of `<x>_block`
//! elements along its last axis, which must be contracted (attribute
//! `a_block`/`b_block`, given exactly when the scales are). An MX tensor is
//! its element codes (with `"dtype"` naming the element type, e.g.
//! `e4m3fn`) and its scale codes with a block of 32. `contracting` and
//! `batch` as for `contract`; `acc` is `f32` (default) or `f64`.
//!
//! `contract_grouped`: operands `a`, `b`, `ids` (any integer dtype of at most
//! 32 bits, or `int64`) and optional `init`; attribute `by` is `rows` (a
//! `[B.., R, K]`, b `[B.., G, K, N]`, ids `[R]` or `[B.., R]`, y
//! `[B.., R, N]`) or `depth` (a `[B.., R, K]`, b `[B.., K, N]`, ids `[K]` or
//! `[B.., K]`, y `[B.., groups, R, N]`, attribute `groups` required); `acc`
//! as for `contract`. Ids of shape `[R]` (`[K]`) are shared by every batch
//! element; otherwise each batch element has its own.
//!
//! Both write `y` (dtype defaulting to `acc`, shape the call's) only after
//! it is computed; every refusal comes first. Order, bound and refusals are
//! the library's (`tessera::contract::scaled`, `tessera::contract::grouped`).

use super::contract::pairs_of;
use super::{count_attr, expect_attrs, expect_names, string_attr, whole_byte_view};
use crate::budget;
use crate::call::Call;
use crate::codes::values_per_byte;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand::{self, Loaded};
use crate::results::Results;
use std::path::Path;
use tessera::contract::grouped::{contract_grouped_depth, contract_grouped_rows, Ids};
use tessera::contract::scaled::{contract_scaled, Blocked, Operand};
use tessera::contract::{default_acc, output_shape, ContractSpec};
use tessera::{ArrayView, ArrayViewMut, Class, DType, Exec};

/// The scaled contraction's name in call files.
pub const SCALED: &str = "contract_scaled";
/// The grouped contraction's name in call files.
pub const GROUPED: &str = "contract_grouped";

/// What `tessera kernels` says of `contract_scaled`.
pub const SCALED_DOC: &str =
    "contract with block-scaled operands: a and/or b given as values plus \
one scale per block along its contracted last axis (f32/f64 values or UE8M0 codes), each element's \
cast times its scale rounded once into acc (f32 or f64)";

/// What `tessera kernels` says of `contract_grouped`.
pub const GROUPED_DOC: &str = "grouped contraction: rows of a grouped by ids, each group with its \
own b (by rows), or the contracted indices grouped (by depth); leading batch axes allowed, ids shared \
or per batch element; each group computes as an unsegmented call of its indices alone";

fn run_err(kernel: &str, e: impl std::fmt::Display) -> Failure {
    Failure::run(format!("kernel `{kernel}`: {e}"))
}

/// Operands of the call: exactly `required`, plus any of `optional`.
fn check_operands(kernel: &str, call: &Call, required: &[&str], optional: &[&str]) -> Outcome<()> {
    for g in call.operands.0.keys() {
        if !required.contains(&g.as_str()) && !optional.contains(&g.as_str()) {
            let all: Vec<String> = required
                .iter()
                .chain(optional)
                .map(|n| format!("`{n}`"))
                .collect();
            return Err(Failure::usage(format!(
                "kernel `{kernel}` takes operands {}; the call file names `{}`",
                all.join(", "),
                super::truncate(g, 40)
            )));
        }
    }
    if let Some(missing) = required.iter().find(|n| !call.operands.0.contains_key(**n)) {
        return Err(Failure::usage(format!(
            "kernel `{kernel}` needs operand {missing}"
        )));
    }
    expect_names(kernel, "result", &call.results, &["y"])
}

fn load_opt(call_path: &Path, call: &Call, name: &str) -> Outcome<Option<Loaded>> {
    call.operands
        .0
        .get(name)
        .map(|s| operand::load(call_path, name, s))
        .transpose()
}

/// The result's dtype (default `acc`) and its checked shape; refuses a
/// sub-byte dtype and a `shape` other than the call's.
fn result_of(kernel: &str, call: &Call, acc: DType, shape: &[usize]) -> Outcome<DType> {
    let out = &call.results.0["y"];
    if let Some(s) = &out.shape {
        if s.as_slice() != shape {
            return Err(Failure::run(format!(
                "result y: shape {s:?} is not the call's {shape:?}"
            )));
        }
    }
    let to = operand::dtype_name("result y", out.dtype.as_deref())?.unwrap_or(acc);
    if values_per_byte(to) > 1 {
        return Err(Failure::run(format!(
            "result y: kernel `{kernel}` does not write sub-byte dtypes ({to})"
        )));
    }
    Ok(to)
}

/// A zeroed buffer for result y.
fn result_buffer(to: DType, shape: &[usize]) -> Outcome<Vec<u8>> {
    let bytes = npy::byte_size(shape, to.info().item_bytes)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    operand::zeroed(bytes)
}

/// An operand of a scaled call: blocked where it has scales (and so a
/// block), else plain.
fn scaled_operand<'v>(
    values: ArrayView<'v>,
    scales: Option<ArrayView<'v>>,
    block: Option<usize>,
) -> Operand<'v> {
    match (scales, block) {
        (Some(scales), Some(block)) => Operand::Blocked(Blocked {
            values,
            scales,
            block,
        }),
        _ => Operand::Plain(values),
    }
}

/// Run `contract_scaled`; returns the lines to report.
pub fn scaled_call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    const K: &str = SCALED;
    expect_attrs(
        K,
        &call.attrs,
        &["contracting", "batch", "acc", "a_block", "b_block"],
    )?;
    check_operands(K, call, &["a", "b"], &["init", "a_scales", "b_scales"])?;
    let contracting = pairs_of(K, &call.attrs, "contracting")?.ok_or_else(|| {
        Failure::usage(format!(
            "kernel `{K}` needs attribute contracting (a list of [axis of a, axis of b] pairs)"
        ))
    })?;
    let batch = pairs_of(K, &call.attrs, "batch")?.unwrap_or_default();
    let acc = operand::dtype_name("attribute acc", string_attr(K, &call.attrs, "acc")?)?
        .unwrap_or(DType::F32);
    if !matches!(acc, DType::F32 | DType::F64) {
        return Err(Failure::usage(format!(
            "kernel `{K}`: attribute acc must be f32 or f64, not {acc}"
        )));
    }
    let mut blocks = [None, None];
    for (i, x) in ["a", "b"].into_iter().enumerate() {
        let block = count_attr(K, &call.attrs, &format!("{x}_block"), "a count")?;
        let scaled = call.operands.0.contains_key(&format!("{x}_scales"));
        match (block, scaled) {
            (Some(0), true) => {
                return Err(Failure::usage(format!(
                    "kernel `{K}`: attribute {x}_block must be a positive count, not 0"
                )))
            }
            (Some(_), false) => {
                return Err(Failure::usage(format!(
                    "kernel `{K}`: attribute {x}_block applies only with operand {x}_scales"
                )))
            }
            (None, true) => {
                return Err(Failure::usage(format!(
                "kernel `{K}`: operand {x}_scales needs attribute {x}_block (elements per scale)"
            )))
            }
            _ => blocks[i] = block,
        }
    }
    let a = operand::load(call_path, "a", &call.operands.0["a"])?;
    let b = operand::load(call_path, "b", &call.operands.0["b"])?;
    let init = load_opt(call_path, call, "init")?;
    let a_scales = load_opt(call_path, call, "a_scales")?;
    let b_scales = load_opt(call_path, call, "b_scales")?;
    for s in [&a_scales, &b_scales].into_iter().flatten() {
        if !matches!(
            s.dtype,
            DType::F32 | DType::F64 | DType::U8 | DType::E8m0fnu
        ) {
            return Err(Failure::run(format!(
                "operand {}: scales are f32 or f64 values, or u8 (e8m0fnu) UE8M0 codes, not {}",
                s.name, s.dtype
            )));
        }
    }
    let spec = ContractSpec {
        batch,
        contracting,
        acc,
    };
    let shape = output_shape(&a.shape, &b.shape, &spec).map_err(|e| run_err(K, e))?;
    let to = result_of(K, call, acc, &shape)?;
    super::contract::charge_products(&shape, &a.shape, &spec)?;
    let (va, vb) = (whole_byte_view(K, &a)?, whole_byte_view(K, &b)?);
    let vi = init.as_ref().map(|x| whole_byte_view(K, x)).transpose()?;
    let sa = a_scales
        .as_ref()
        .map(|x| whole_byte_view(K, x))
        .transpose()?;
    let sb = b_scales
        .as_ref()
        .map(|x| whole_byte_view(K, x))
        .transpose()?;
    let oa = scaled_operand(va, sa, blocks[0]);
    let ob = scaled_operand(vb, sb, blocks[1]);
    let mut out = result_buffer(to, &shape)?;
    let mut y = ArrayViewMut::contiguous(to, &shape, &mut out)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    contract_scaled(&spec, &oa, &ob, vi.as_ref(), &mut y, exec).map_err(|e| run_err(K, e))?;
    drop(y);
    let path = results.add("y", to, &shape, &out)?;
    let tier = exec.resolve_tier()?;
    let scaled: Vec<&str> = [("a", blocks[0]), ("b", blocks[1])]
        .iter()
        .filter(|(_, b)| b.is_some())
        .map(|(n, _)| *n)
        .collect();
    Ok(vec![format!(
        "contract_scaled (acc {acc}, scaled: {}): y = {to} {shape:?} -> {} (tier {tier})",
        if scaled.is_empty() {
            "none".to_string()
        } else {
            scaled.join(", ")
        },
        path.display()
    )])
}

/// The ids of a grouped call as `i64`, C order (read whole, any layout):
/// integers of at most 32 bits, or `i64`.
fn ids_of(x: &Loaded) -> Outcome<Vec<i64>> {
    let info = x.dtype.info();
    let ok = match info.class {
        Class::Int => true,
        Class::Uint => info.bits <= 32,
        _ => false,
    };
    if !ok || x.is_codes() {
        return Err(Failure::run(format!(
            "operand ids: ids are integers of at most 32 bits or int64, not {}",
            x.dtype
        )));
    }
    let v = whole_byte_view(GROUPED, x)?;
    let n = crate::npy::element_count(&x.shape);
    let mut out = budget::zeroed::<i64>(n, "operand ids as int64")?;
    tessera::cast(
        tessera::CastMode::Default,
        &v,
        &mut ArrayViewMut::from_slice(&mut out, &x.shape)
            .map_err(|e| Failure::run(format!("operand ids: {e}")))?,
        &Exec::SEQ,
    )
    .map_err(|e| Failure::run(format!("operand ids: {e}")))?;
    Ok(out)
}

/// Leading batch extents of two shapes (`n` axes each; an extent of 1
/// broadcasts; a mismatch is left to the library to refuse).
fn batch_of(a: &[usize], b: &[usize], n: usize) -> Vec<usize> {
    (0..n)
        .map(|i| if a[i] == 1 { b[i] } else { a[i] })
        .collect()
}

/// Run `contract_grouped`; returns the lines to report.
pub fn grouped_call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    const K: &str = GROUPED;
    expect_attrs(K, &call.attrs, &["by", "groups", "acc"])?;
    check_operands(K, call, &["a", "b", "ids"], &["init"])?;
    let rows = match string_attr(K, &call.attrs, "by")? {
        Some("rows") => true,
        Some("depth") => false,
        Some(other) => {
            return Err(Failure::usage(format!(
                "kernel `{K}`: attribute by must be rows or depth, not {}",
                super::truncate(other, 40)
            )))
        }
        None => {
            return Err(Failure::usage(format!(
                "kernel `{K}` needs attribute by (rows or depth)"
            )))
        }
    };
    let groups = count_attr(K, &call.attrs, "groups", "a count")?;
    match (rows, groups) {
        (true, Some(_)) => {
            return Err(Failure::usage(format!(
                "kernel `{K}`: attribute groups applies only by depth (by rows, b's extent G counts the groups)"
            )))
        }
        (false, None) => {
            return Err(Failure::usage(format!(
                "kernel `{K}` by depth needs attribute groups (a count)"
            )))
        }
        _ => {}
    }
    let acc_attr = operand::dtype_name("attribute acc", string_attr(K, &call.attrs, "acc")?)?;
    let a = operand::load(call_path, "a", &call.operands.0["a"])?;
    let b = operand::load(call_path, "b", &call.operands.0["b"])?;
    let ids_l = operand::load(call_path, "ids", &call.operands.0["ids"])?;
    let init = load_opt(call_path, call, "init")?;
    let acc = acc_attr.unwrap_or_else(|| default_acc(a.dtype, b.dtype));
    let ids = ids_of(&ids_l)?;
    let (ra, rb) = (a.shape.len(), b.shape.len());
    let want_b = if rows { ra + 1 } else { ra };
    if ra < 2 || rb != want_b {
        let form = if rows {
            "a [B.., R, K] and b [B.., G, K, N]"
        } else {
            "a [B.., R, K] and b [B.., K, N]"
        };
        let (name, shape) = if ra < 2 {
            ("a", &a.shape)
        } else {
            ("b", &b.shape)
        };
        return Err(Failure::run(format!(
            "operand {name}: shape {shape:?} does not fit: grouping by {} takes {form}",
            if rows { "rows" } else { "depth" }
        )));
    }
    let nbat = ra - 2;
    let bat = batch_of(&a.shape, &b.shape, nbat);
    let (r, k, n) = (a.shape[nbat], a.shape[nbat + 1], b.shape[rb - 1]);
    // The ids: one list (shape [R] or [K]) or one per batch element.
    let per = if rows { r } else { k };
    let mut per_batch = bat.clone();
    per_batch.push(per);
    if ids_l.shape != [per] && ids_l.shape != per_batch {
        return Err(Failure::run(format!(
            "operand ids: shape {:?} is neither [{per}] nor {per_batch:?}",
            ids_l.shape
        )));
    }
    let mut shape = bat.clone();
    if let Some(g) = groups {
        shape.push(g);
    }
    shape.extend([r, n]);
    let to = result_of(K, call, acc, &shape)?;
    // Every product once (R·K·N per batch element), and by depth every
    // group's outputs (groups·R·N, an empty group's too).
    let mut work = budget::steps(&[r, k, n]);
    if let Some(g) = groups {
        work = work.saturating_add(budget::steps(&[g, r, n]));
    }
    budget::charge_work(
        work.saturating_mul(budget::steps(&bat)),
        "the grouped contraction's products and outputs",
    )?;
    let (va, vb) = (whole_byte_view(K, &a)?, whole_byte_view(K, &b)?);
    let vi = init.as_ref().map(|x| whole_byte_view(K, x)).transpose()?;
    let mut out = result_buffer(to, &shape)?;
    let mut y = ArrayViewMut::contiguous(to, &shape, &mut out)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    let done = match groups {
        None => contract_grouped_rows(acc, &va, &vb, Ids::I64(&ids), vi.as_ref(), &mut y, exec),
        Some(g) => {
            contract_grouped_depth(acc, g, &va, &vb, Ids::I64(&ids), vi.as_ref(), &mut y, exec)
        }
    };
    done.map_err(|e| run_err(K, e))?;
    drop(y);
    let path = results.add("y", to, &shape, &out)?;
    let tier = exec.resolve_tier()?;
    let order = tessera::contract::choose_order(r, n, k);
    Ok(vec![format!(
        "contract_grouped (by {}, acc {acc}, {order:?} order, rows {r}, columns {n}, depth {k}): y = {to} {shape:?} -> {} (tier {tier})",
        if rows { "rows" } else { "depth" },
        path.display()
    )])
}
