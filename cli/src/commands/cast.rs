//! `cast` as a call: operand `x` of any dtype, result `y` whose dtype is the
//! target (required), attribute `mode` (`"default"` or `"saturating"`,
//! default `"default"`).
//!
//! ```json
//! {"kernel": "cast", "attrs": {"mode": "saturating"},
//!  "operands": {"x": {"npy": "x.npy", "dtype": "f32"}},
//!  "results": {"y": {"npy": "y.npy", "dtype": "e4m3fn"}}}
//! ```
//!
//! `y`'s shape defaults to `x`'s; a given shape must be one `x` broadcasts to.
//! Sub-byte dtypes on either side run on the last axis padded to whole bytes,
//! as the elementwise kinds do.

use super::elementwise::{prepare, work_shape};
use super::{expect_attrs, expect_names, string_attr};
use crate::call::Call;
use crate::codes::values_per_byte;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand;
use crate::results::Results;
use std::path::Path;
use tessera::elementwise::broadcast_shapes;
use tessera::{ArrayView, ArrayViewMut, CastMode, Exec};

/// The kernel's name in call files.
pub const NAME: &str = "cast";

/// The mode an attribute value names.
pub fn parse_mode(value: Option<&str>) -> Outcome<CastMode> {
    match value {
        None | Some("default") => Ok(CastMode::Default),
        Some("saturating") => Ok(CastMode::Saturating),
        Some(other) => Err(Failure::usage(format!(
            "kernel `cast`: attribute mode is \"default\" or \"saturating\", not \"{}\"",
            super::truncate(other, 40)
        ))),
    }
}

/// A mode's name in call files and coverage records.
pub fn mode_name(mode: CastMode) -> &'static str {
    match mode {
        CastMode::Default => "default",
        CastMode::Saturating => "saturating",
    }
}

/// Run a cast as described by `call` (read from `call_path`); returns the
/// lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    expect_attrs(NAME, &call.attrs, &["mode"])?;
    let mode = parse_mode(string_attr(NAME, &call.attrs, "mode")?)?;
    expect_names(NAME, "operand", &call.operands, &["x"])?;
    expect_names(NAME, "result", &call.results, &["y"])?;
    let (Some(x_spec), Some(out_spec)) = (call.operands.0.get("x"), call.results.0.get("y")) else {
        return Err(Failure::usage(
            "kernel `cast` needs operand x and result y".to_string(),
        ));
    };
    let to = operand::dtype_name("result y", out_spec.dtype.as_deref())?.ok_or_else(|| {
        Failure::usage(
            "kernel `cast`: result y must name its dtype (the dtype cast to)".to_string(),
        )
    })?;
    if out_spec.packed && values_per_byte(to) == 1 {
        return Err(Failure::usage(format!(
            "result y: \"packed\" applies only to sub-byte dtypes (i4, u4, u1, e2m1fn), not {to}"
        )));
    }
    let x = operand::load(call_path, "x", x_spec)?;
    let from = x.dtype;
    let target = out_spec.shape.clone().unwrap_or_else(|| x.shape.clone());
    npy::byte_size(&target, to.info().item_bytes)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    if broadcast_shapes(&[&x.shape, &target]).as_deref() != Some(target.as_slice()) {
        return Err(Failure::run(format!(
            "operand x: shape {:?} does not broadcast to the result's {target:?}",
            x.shape
        )));
    }
    let vpb = values_per_byte(from).max(values_per_byte(to));
    let (work, _, padded_last) = work_shape(&target, vpb);
    let src = prepare(x, vpb, padded_last)?;
    let view = ArrayView::new(src.dtype, &src.shape, &src.strides, 0, &src.data)
        .map_err(|e| Failure::run(format!("operand x: {e}")))?;
    let count = npy::element_count(&work);
    let mut out = operand::zeroed(count / values_per_byte(to) * to.info().item_bytes)?;
    let mut out_view = ArrayViewMut::contiguous(to, &work, &mut out)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    tessera::cast(mode, &view, &mut out_view, exec)
        .map_err(|e| Failure::run(format!("kernel `cast`: {e}")))?;
    drop(out_view);
    let path = results.add_library("y", to, &target, &out, padded_last)?;
    let tier = exec.resolve_tier()?;
    Ok(vec![format!(
        "cast ({}): y = {to} {target:?} from x {from} -> {} (tier {tier})",
        mode_name(mode),
        path.display()
    )])
}
