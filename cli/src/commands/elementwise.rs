//! An elementwise kind as a call: operands `x0`, `x1`, `x2` (`x` also for a
//! unary kind), one result `y`, no attributes.
//!
//! The library packs sub-byte dtypes along the last axis and needs that axis to
//! fill whole bytes. Where a call's last extent does not (an `i4` array of 3
//! values, an `i4` scalar broadcast against a row), the call runs on the last
//! axis padded to whole bytes (zero codes, or the broadcast value repeated) and
//! the padding is dropped from the result.

use crate::call::Call;
use crate::codes::{self, values_per_byte};
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand::{self, Loaded};
use crate::results::Results;
use std::path::Path;
use tessera::elementwise::{broadcast_shapes, call_dtype};
use tessera::{result_dtype, ArrayView, ArrayViewMut, DType, Exec, Kind};

/// The operand names a kind takes, in input order.
pub fn operand_names(kind: Kind, given: &[&str]) -> Outcome<Vec<String>> {
    let arity = kind.info().arity;
    let names: Vec<String> = (0..arity).map(|i| format!("x{i}")).collect();
    if arity == 1 && given == ["x"] {
        return Ok(vec!["x".to_string()]);
    }
    for g in given {
        if !names.iter().any(|n| n == g) {
            let also = if arity == 1 { " (or x)" } else { "" };
            return Err(Failure::usage(format!(
                "kernel `{kind}` takes operands {}{also}; the call file names `{}`",
                names.join(", "),
                super::truncate(g, 40)
            )));
        }
    }
    if let Some(missing) = names.iter().find(|n| !given.contains(&n.as_str())) {
        return Err(Failure::usage(format!(
            "kernel `{kind}` needs operand {missing} ({} inputs: {})",
            arity,
            names.join(", ")
        )));
    }
    Ok(names)
}

/// Run an elementwise kind as described by `call` (read from `call_path`);
/// returns the lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    kind: Kind,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    if let Some(attr) = call.attrs.0.keys().next() {
        return Err(Failure::usage(format!(
            "kernel `{kind}` takes no attributes; the call file gives `{}`",
            super::truncate(attr, 40)
        )));
    }
    let given: Vec<&str> = call.operands.0.keys().map(String::as_str).collect();
    let names = operand_names(kind, &given)?;
    let result_names: Vec<&String> = call.results.0.keys().collect();
    if result_names != ["y"] {
        return Err(Failure::usage(format!(
            "kernel `{kind}` has one result, `y`; the call file names {}",
            if result_names.is_empty() {
                "none".to_string()
            } else {
                result_names
                    .iter()
                    .map(|n| format!("`{}`", super::truncate(n, 40)))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )));
    }
    let out_spec = call
        .results
        .0
        .get("y")
        .ok_or_else(|| Failure::usage(format!("kernel `{kind}` needs result y")))?;
    let out_named = operand::dtype_name("result y", out_spec.dtype.as_deref())?;
    if let Some(d) = out_named {
        if out_spec.packed && values_per_byte(d) == 1 {
            return Err(Failure::usage(format!(
                "result y: \"packed\" applies only to sub-byte dtypes (i4, u4, u1, e2m1fn), not {d}"
            )));
        }
    }

    let mut inputs = Vec::with_capacity(names.len());
    for name in &names {
        let spec = call
            .operands
            .0
            .get(name)
            .ok_or_else(|| Failure::usage(format!("kernel `{kind}` needs operand {name}")))?;
        inputs.push(operand::load(call_path, name, spec)?);
    }
    let dtypes: Vec<DType> = inputs.iter().map(|a| a.dtype).collect();
    let dtype = call_dtype(kind, &dtypes).map_err(|e| {
        Failure::run(format!(
            "kernel `{kind}`: {}",
            rename_inputs(&e.to_string(), &names)
        ))
    })?;
    let want = result_dtype(kind, dtype)?;
    if let Some(d) = out_named {
        if d != want {
            return Err(Failure::run(format!(
                "result y: dtype {d}, but `{kind}` of {dtype} gives {want}"
            )));
        }
    }
    if out_spec.packed && values_per_byte(want) == 1 {
        return Err(Failure::usage(format!(
            "result y: \"packed\" applies only to sub-byte dtypes, and `{kind}` of {dtype} gives {want}"
        )));
    }
    let shapes: Vec<&[usize]> = inputs.iter().map(|a| a.shape.as_slice()).collect();
    let target = match &out_spec.shape {
        Some(s) => s.clone(),
        None => broadcast_shapes(&shapes).ok_or_else(|| {
            Failure::run(format!(
                "the operands' shapes {} do not broadcast together",
                describe_shapes(&inputs)
            ))
        })?,
    };
    npy::byte_size(&target, want.info().item_bytes)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    for a in &inputs {
        if broadcast_shapes(&[&a.shape, &target]).as_deref() != Some(target.as_slice()) {
            return Err(Failure::run(format!(
                "operand {}: shape {:?} does not broadcast to the result's {target:?}",
                a.name, a.shape
            )));
        }
    }

    // The last axis the kernel runs on: whole bytes of every sub-byte operand.
    let vpb = inputs
        .iter()
        .map(|a| values_per_byte(a.dtype))
        .chain([values_per_byte(want)])
        .max()
        .unwrap_or(1);
    let (work_shape, _, padded_last) = work_shape(&target, vpb);
    let prepared: Vec<Prepared> = inputs
        .into_iter()
        .map(|a| prepare(a, vpb, padded_last))
        .collect::<Outcome<_>>()?;
    let views: Vec<ArrayView<'_>> = prepared
        .iter()
        .map(|p| {
            ArrayView::new(p.dtype, &p.shape, &p.strides, 0, &p.data)
                .map_err(|e| Failure::run(format!("operand {}: {e}", p.name)))
        })
        .collect::<Outcome<_>>()?;

    let count = npy::element_count(&work_shape);
    let out_vpb = values_per_byte(want);
    let mut out = operand::zeroed(count / out_vpb * want.info().item_bytes)?;
    let mut out_view = ArrayViewMut::contiguous(want, &work_shape, &mut out)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    tessera::elementwise(kind, &views, &mut out_view, exec).map_err(|e| {
        Failure::run(format!(
            "kernel `{kind}`: {}",
            rename_inputs(&e.to_string(), &names)
        ))
    })?;
    drop(out_view);

    let path = results.add_library("y", want, &target, &out, padded_last)?;
    let tier = exec.resolve_tier()?;
    Ok(vec![format!(
        "{kind}: y = {want} {target:?} -> {} (tier {tier})",
        path.display()
    )])
}

/// The shape a call runs on when its widest packing is `vpb` values per byte:
/// the result's shape (a rank-0 result as one value) with its last axis padded
/// to whole bytes; also the last extent before and after padding.
pub(crate) fn work_shape(target: &[usize], vpb: usize) -> (Vec<usize>, usize, usize) {
    let mut work = if vpb > 1 && target.is_empty() {
        vec![1]
    } else {
        target.to_vec()
    };
    let last = work.last().copied().unwrap_or(1);
    let padded_last = last.div_ceil(vpb) * vpb;
    if let Some(l) = work.last_mut() {
        *l = padded_last;
    }
    (work, last, padded_last)
}

/// An operand in the layout the library takes.
pub(crate) struct Prepared {
    /// The operand's name in the call file.
    pub name: String,
    /// Its dtype.
    pub dtype: DType,
    /// Its shape, the last axis padded where the call pads it.
    pub shape: Vec<usize>,
    /// Its element strides.
    pub strides: Vec<isize>,
    /// Its bytes, packed for sub-byte dtypes.
    pub data: Vec<u8>,
}

/// Bring an operand into the library's layout for a call whose last axis runs
/// padded to `padded_last` values (a multiple of `vpb`). The operand's last
/// extent is 1 (broadcast), the call's last extent, or already `padded_last`.
pub(crate) fn prepare(a: Loaded, vpb: usize, padded_last: usize) -> Outcome<Prepared> {
    let is_codes = a.is_codes();
    if vpb == 1 {
        return Ok(Prepared {
            name: a.name,
            dtype: a.dtype,
            shape: a.shape,
            strides: a.strides,
            data: a.data,
        });
    }
    let item = a.dtype.info().item_bytes;
    let (mut shape, mut strides, mut data) = if a.shape.is_empty() {
        (vec![1], vec![1], a.data)
    } else {
        (a.shape, a.strides, a.data)
    };
    let n = shape.last().copied().unwrap_or(1);
    if n != padded_last && (is_codes || n != 1) {
        // Repeat a broadcast value, or pad each row with zero codes.
        let c = operand::to_c_order(&data, &shape, &strides, item)?;
        let row_in = (n * item).max(1);
        let row_out = padded_last * item;
        let rows = c.len() / row_in;
        let what = format!("operand {}: its rows padded to whole bytes", a.name);
        let bytes = rows.checked_mul(row_out).ok_or_else(|| {
            Failure::run(format!("{what}: {rows} rows of {row_out} bytes overflow"))
        })?;
        let mut padded = crate::budget::with_capacity(bytes, &what)?;
        for row in c.chunks(row_in) {
            if n == 1 {
                for _ in 0..padded_last {
                    padded.extend_from_slice(row);
                }
            } else {
                padded.extend_from_slice(row);
                padded.resize(padded.len() + (row_out - row.len()), 0);
            }
        }
        if let Some(l) = shape.last_mut() {
            *l = padded_last;
        }
        strides = npy::c_strides(&shape);
        data = padded;
    }
    if is_codes {
        data = codes::pack(a.dtype, &data)?;
    }
    Ok(Prepared {
        name: a.name,
        dtype: a.dtype,
        shape,
        strides,
        data,
    })
}

fn describe_shapes(inputs: &[Loaded]) -> String {
    inputs
        .iter()
        .map(|a| format!("{} {:?}", a.name, a.shape))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The library names inputs by position (`input 1`); say the call file's names.
fn rename_inputs(message: &str, names: &[String]) -> String {
    let mut m = message.to_string();
    for (i, n) in names.iter().enumerate() {
        m = m.replace(&format!("input {i}"), &format!("operand {n}"));
    }
    m
}
