//! `convolve` and `correlate` as calls.
//!
//! ```json
//! {"kernel": "convolve", "attrs": {"mode": "same", "acc": "f64"},
//!  "operands": {"x": {"npy": "signal.npy"}, "k": {"npy": "taps.npy"}},
//!  "results": {"y": {"npy": "y.npy"}}}
//! ```
//!
//! Along the last axis of x (any rank: leading axes are a batch) with the
//! one-axis kernel k: `mode` is `full` (default: n + m - 1 outputs), `same`
//! (n, centred) or `valid` (n - m + 1; refused where m > n); `acc` is the
//! contraction's accumulator (default `tessera::contract::default_acc` of
//! the two dtypes); y takes the accumulator's dtype unless it names
//! another, and a shape it gives must be the one computed. Order, bound and
//! refusals are the library's (`tessera::signal`); sub-byte operands are
//! refused here (cast them first; the library takes them packed). The
//! padded copy of x and the products are charged to the call's budgets.

use super::{expect_attrs, expect_names, string_attr};
use crate::call::Call;
use crate::codes::values_per_byte;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand;
use crate::results::Results;
use std::path::Path;
use tessera::signal::{convolve_shape, ConvMode};
use tessera::{ArrayViewMut, Exec};

/// `convolve`'s name in call files.
pub const CONVOLVE: &str = "convolve";
/// `correlate`'s name in call files.
pub const CORRELATE: &str = "correlate";
/// What `tessera kernels` says of `convolve`.
pub const CONVOLVE_DOC: &str = "Convolution along the last axis of x (leading axes a batch) with the one-axis kernel k: y[..., i] = sum_t xp[..., i + t] * k[m - 1 - t], xp padded by mode (full, same, valid); each output a contraction over the taps in accumulator acc (contract's order and bound)";
/// What `tessera kernels` says of `correlate`.
pub const CORRELATE_DOC: &str = "Correlation along the last axis of x with the one-axis kernel k, not reversed and not conjugated: y[..., i] = sum_t xp[..., i + t] * k[t], modes, order and bound as convolve";

/// Run `convolve` (`reverse`) or `correlate`; returns the lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    reverse: bool,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = if reverse { CONVOLVE } else { CORRELATE };
    expect_attrs(k, &call.attrs, &["mode", "acc"])?;
    expect_names(k, "operand", &call.operands, &["x", "k"])?;
    expect_names(k, "result", &call.results, &["y"])?;
    let mode = match string_attr(k, &call.attrs, "mode")?.unwrap_or("full") {
        "full" => ConvMode::Full,
        "same" => ConvMode::Same,
        "valid" => ConvMode::Valid,
        other => {
            return Err(Failure::usage(format!(
                "kernel `{k}`: unknown mode \"{}\" (full, same, valid)",
                super::truncate(other, 40)
            )))
        }
    };
    let x = operand::load(call_path, "x", &call.operands.0["x"])?;
    let taps = operand::load(call_path, "k", &call.operands.0["k"])?;
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    let shape = convolve_shape(&x.shape, &taps.shape, mode).map_err(fail)?;
    let y_spec = &call.results.0["y"];
    if let Some(s) = &y_spec.shape {
        if *s != shape {
            return Err(Failure::run(format!(
                "result y: shape {s:?} is not the {k}'s {shape:?}"
            )));
        }
    }
    let acc = operand::dtype_name("attribute acc", string_attr(k, &call.attrs, "acc")?)?
        .unwrap_or_else(|| tessera::contract::default_acc(x.dtype, taps.dtype));
    let to = operand::dtype_name("result y", y_spec.dtype.as_deref())?.unwrap_or(acc);
    if values_per_byte(to) > 1 {
        return Err(Failure::run(format!(
            "result y: kernel `{k}` does not write sub-byte dtypes ({to})"
        )));
    }
    let bytes = npy::byte_size(&shape, to.info().item_bytes)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    // The padded copy of x (its last axis grows by at most 2(m - 1)) and
    // the products: every output times the taps.
    let m = taps.shape[0];
    let mut padded = shape.clone();
    if let Some(last) = padded.last_mut() {
        *last = last.saturating_add(m);
    }
    let copy =
        crate::budget::steps(&padded).saturating_mul(x.dtype.info().item_bytes.max(4) as u128);
    crate::budget::charge_bytes(
        usize::try_from(copy).unwrap_or(usize::MAX),
        "operand x: its padded copy",
    )?;
    let mut products = shape.clone();
    products.push(m);
    crate::budget::charge_work(crate::budget::steps(&products), "the products")?;
    let xv = super::whole_byte_view(k, &x)?;
    let kv = super::whole_byte_view(k, &taps)?;
    let mut out = operand::zeroed(bytes)?;
    let mut yv = ArrayViewMut::contiguous(to, &shape, &mut out).map_err(fail)?;
    let f = if reverse {
        tessera::convolve
    } else {
        tessera::correlate
    };
    f(&xv, &kv, mode, acc, &mut yv, exec).map_err(fail)?;
    let path = results.add("y", to, &shape, &out)?;
    Ok(vec![format!(
        "{k} ({mode:?}, acc {acc}) of x {:?} with k [{m}]: y = {to} {shape:?} -> {} (tier {})",
        x.shape,
        path.display(),
        exec.resolve_tier()?
    )])
}
