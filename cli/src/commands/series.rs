//! `series` as a call: the one-dimensional series kernels of
//! `tessera::reduce::series` on an f32 or f64 operand.
//!
//! ```json
//! {"kernel": "series", "attrs": {"op": "rolling_mean", "window": 5},
//!  "operands": {"x": {"npy": "x.npy"}},
//!  "results": {"y": {"npy": "y.npy"}}}
//! ```
//!
//! Attribute `op`: `diff` (n - 1 results), `rolling_min`, `rolling_max`,
//! `rolling_mean` (attribute `window`: n - window + 1 results), `ema`
//! (attribute `alpha` in [0, 1]: n results) or `sum_squared_deviations`
//! (attribute `centre`, default 0: one result); an attribute given to an op
//! it does not belong to is refused. The operand is one-dimensional (any
//! stride); the result has its dtype, and a shape it gives must be the one
//! written.

use super::{count_attr, expect_attrs, expect_names, number_attr, string_attr};
use crate::budget;
use crate::call::Call;
use crate::failure::{Failure, Outcome};
use crate::operand::{self, Loaded};
use crate::results::Results;
use std::path::Path;
use tessera::reduce::series;
use tessera::{DType, Exec};

/// The kernel's name in call files.
pub const NAME: &str = "series";

/// The operations.
pub const OPS: [&str; 6] = [
    "diff",
    "rolling_min",
    "rolling_max",
    "rolling_mean",
    "ema",
    "sum_squared_deviations",
];

/// What `tessera kernels` says of it.
pub const DOC: &str = "one-dimensional series (attribute op: diff, rolling_min, rolling_max, \
rolling_mean with window, ema with alpha, sum_squared_deviations with centre), each in its stated \
order (rolling means and the squared deviations sum in lane order)";

/// The values of a one-dimensional operand in index order (a copy charged to
/// the call's result budget).
fn values<F: Copy + Default>(
    x: &Loaded,
    from: impl Fn(&[u8]) -> F,
    item: usize,
) -> Outcome<Vec<F>> {
    let n = x.shape[0];
    let s = x.strides[0];
    let mut v = budget::with_capacity(n, "operand x: its values in index order")?;
    v.extend((0..n).map(|i| {
        let p = (i as isize * s) as usize * item;
        from(&x.data[p..p + item])
    }));
    Ok(v)
}

fn run<F: tessera::reduce::lanes::LaneFloat + tessera::Element + Default>(
    k: &str,
    op: &str,
    x: &[F],
    window: Option<usize>,
    alpha: Option<F>,
    centre: F,
    exec: &Exec,
) -> Outcome<Vec<F>> {
    let n = x.len();
    let need_window = || {
        window
            .ok_or_else(|| Failure::usage(format!("kernel `{k}`: op {op} needs attribute window")))
    };
    let err = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    Ok(match op {
        "diff" => {
            let mut y = budget::zeroed(n.saturating_sub(1), "result y")?;
            series::diff(x, &mut y, exec).map_err(err)?;
            y
        }
        "rolling_min" | "rolling_max" | "rolling_mean" => {
            let w = need_window()?;
            let m = (n + 1).saturating_sub(w.max(1));
            if op == "rolling_mean" {
                // Each window is summed afresh (its own lane order): m·w
                // terms. The extremes take O(n) whatever the window.
                budget::charge_work(budget::steps(&[m, w]), "rolling_mean's windows")?;
            }
            let mut y = budget::zeroed(m, "result y")?;
            match op {
                "rolling_min" => series::rolling_min(w, x, &mut y, exec),
                "rolling_max" => series::rolling_max(w, x, &mut y, exec),
                _ => series::rolling_mean(w, x, &mut y, exec),
            }
            .map_err(err)?;
            y
        }
        "ema" => {
            let a = alpha.ok_or_else(|| {
                Failure::usage(format!("kernel `{k}`: op ema needs attribute alpha"))
            })?;
            let mut y = budget::zeroed(n, "result y")?;
            series::ema(a, x, &mut y, exec).map_err(err)?;
            y
        }
        _ => vec![series::sum_squared_deviations(centre, x, exec).map_err(err)?],
    })
}

/// A series' result.
enum Series {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Run a `series` call; returns the lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = NAME;
    expect_attrs(k, &call.attrs, &["op", "window", "alpha", "centre"])?;
    let op = string_attr(k, &call.attrs, "op")?
        .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs attribute op")))?;
    if !OPS.contains(&op) {
        return Err(Failure::usage(format!(
            "kernel `{k}`: unknown op \"{}\" ({})",
            super::truncate(op, 40),
            OPS.join(", ")
        )));
    }
    // Each parameter belongs to its ops: given to another, it is refused,
    // not ignored.
    for (attr, ops) in [
        (
            "window",
            &["rolling_min", "rolling_max", "rolling_mean"][..],
        ),
        ("alpha", &["ema"][..]),
        ("centre", &["sum_squared_deviations"][..]),
    ] {
        if call.attrs.0.contains_key(attr) && !ops.contains(&op) {
            return Err(Failure::usage(format!(
                "kernel `{k}`: attribute {attr} does not apply to op {op} (it goes with {})",
                ops.join(", ")
            )));
        }
    }
    let window = count_attr(k, &call.attrs, "window", "a count")?;
    let alpha = number_attr(k, &call.attrs, "alpha")?;
    let centre = number_attr(k, &call.attrs, "centre")?.unwrap_or(0.0);
    expect_names(k, "operand", &call.operands, &["x"])?;
    expect_names(k, "result", &call.results, &["y"])?;
    let x = operand::load(call_path, "x", &call.operands.0["x"])?;
    if x.shape.len() != 1 {
        return Err(Failure::run(format!(
            "kernel `{k}`: operand x must be one-dimensional, not of shape {:?}",
            x.shape
        )));
    }
    let spec = &call.results.0["y"];
    if let Some(d) = operand::dtype_name("result y", spec.dtype.as_deref())? {
        if d != x.dtype {
            return Err(Failure::run(format!(
                "kernel `{k}`: result y has x's dtype {}, not {d}",
                x.dtype
            )));
        }
    }
    let y = match x.dtype {
        DType::F32 => {
            // A number beyond f32's range would become an infinity on the
            // way to an f32 series: refused, not changed.
            for (attr, value) in [("alpha", alpha), ("centre", Some(centre))] {
                if let Some(v) = value.filter(|v| (*v as f32).is_infinite()) {
                    return Err(Failure::usage(format!(
                        "kernel `{k}`: attribute {attr} {v:e} is beyond f32's range (operand x is f32)"
                    )));
                }
            }
            let v = values(&x, |b| f32::from_le_bytes(b.try_into().unwrap()), 4)?;
            let y = run(
                k,
                op,
                &v,
                window,
                alpha.map(|a| a as f32),
                centre as f32,
                exec,
            )?;
            Series::F32(y)
        }
        DType::F64 => {
            let v = values(&x, |b| f64::from_le_bytes(b.try_into().unwrap()), 8)?;
            let y = run(k, op, &v, window, alpha, centre, exec)?;
            Series::F64(y)
        }
        d => {
            return Err(Failure::run(format!(
                "kernel `{k}` takes f32 or f64, not {d}"
            )))
        }
    };
    let (bytes, len) = match &y {
        Series::F32(v) => (tessera::array::as_bytes(v), v.len()),
        Series::F64(v) => (tessera::array::as_bytes(v), v.len()),
    };
    let shape: Vec<usize> = if op == "sum_squared_deviations" {
        Vec::new()
    } else {
        vec![len]
    };
    let path = results.add("y", x.dtype, &shape, bytes)?;
    Ok(vec![format!(
        "series {op}: y = {} {shape:?} -> {}",
        x.dtype,
        path.display()
    )])
}
