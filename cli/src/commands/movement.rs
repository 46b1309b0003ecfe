//! `gather`, `gather_ranges`, `scatter` and `unique` as calls.
//!
//! ```json
//! {"kernel": "scatter", "attrs": {"combine": "add", "axis": 0},
//!  "operands": {"into": {"npy": "into.npy"}, "positions": {"npy": "p.npy"},
//!               "updates": {"npy": "u.npy"}},
//!  "results": {"y": {"npy": "y.npy"}}}
//! ```
//!
//! * `gather`: operands `x` and `positions` (int64), attribute `axis`
//!   (default 0); result `y` of `positions`' shape and `x`'s dtype.
//! * `gather_ranges`: operands `x`, `starts` and `ends` (int64,
//!   `[lead…; k]`); attribute `size`, `y`'s extent along the runs' axis
//!   (default: the greatest end, or 0); result `y` `[lead…; size; cells…]`.
//! * `scatter`: operands `into`, `positions` and `updates`; attributes
//!   `combine` (`set`, the default, `add`, `max`, `min`), `axis` (default
//!   0) and `unique` (a bool, default false: the promise that no two updates
//!   share a target, which changes no result); result `y` of `into`'s shape.
//! * `unique`: operand `keys` (`[n, w]`, u64 or i64); results `ids` (`[n]`),
//!   `first` and `counts` (`[m]`, m from `first`'s `shape`, default n) and
//!   `count` (0-d), all int64.
//!
//! Sub-byte dtypes are not taken here (the library's calls take them).
//! Order, exactness and refusals are the library's (`tessera::movement`,
//! `tessera::unique`).

use super::{count_attr, string_attr, truncate, whole_byte_view};
use crate::call::Call;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand;
use crate::results::Results;
use std::path::Path;
use tessera::{Combine, DType, Exec};

/// Which kernel a call names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MovementKernel {
    /// `gather`.
    Gather,
    /// `gather_ranges`.
    GatherRanges,
    /// `scatter`.
    Scatter,
    /// `unique`.
    Unique,
}

impl MovementKernel {
    /// Every kernel of the family.
    pub const ALL: [MovementKernel; 4] = [
        MovementKernel::Gather,
        MovementKernel::GatherRanges,
        MovementKernel::Scatter,
        MovementKernel::Unique,
    ];

    /// The kernel named `name`.
    pub fn from_name(name: &str) -> Option<MovementKernel> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Its name in call files.
    pub fn name(self) -> &'static str {
        match self {
            MovementKernel::Gather => "gather",
            MovementKernel::GatherRanges => "gather_ranges",
            MovementKernel::Scatter => "scatter",
            MovementKernel::Unique => "unique",
        }
    }

    /// Operands, results and attributes.
    pub fn io(
        self,
    ) -> (
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    ) {
        match self {
            MovementKernel::Gather => (&["x", "positions"], &["y"], &["axis"]),
            MovementKernel::GatherRanges => (&["x", "starts", "ends"], &["y"], &["size"]),
            MovementKernel::Scatter => (
                &["into", "positions", "updates"],
                &["y"],
                &["combine", "axis", "unique"],
            ),
            MovementKernel::Unique => (&["keys"], &["ids", "first", "counts", "count"], &[]),
        }
    }

    /// What `tessera kernels` says of it.
    pub fn doc(self) -> &'static str {
        match self {
            MovementKernel::Gather => "y[j] = x[j with axis replaced by positions[j]] (int64 positions; out of [0, d): zero bits); bits copied",
            MovementKernel::GatherRanges => "Runs of x's rows along axis rank(starts)-1 packed into y: position p of run j reads row starts[j] + p - ends[j-1] (int64 modulo 2^64); past every end or outside x: zero bits; runs cut at size",
            MovementKernel::Scatter => "y = into with updates combined (set, add, max, min) at int64 positions along axis, each target's updates in C order (add: left to right, no +0 before the target; narrow floats summed in f32, rounded once); out-of-range positions dropped; bits the same on every thread count and tier",
            MovementKernel::Unique => "Numbers the rows of keys [n, w] (u64/i64 words) by first appearance: ids, first rows, counts (entries from k on: n and 0), count k; independent of the hash seed",
        }
    }
}

fn load_view<'a>(
    k: &str,
    call_path: &Path,
    call: &Call,
    name: &str,
    store: &'a mut Option<operand::Loaded>,
) -> Outcome<tessera::ArrayView<'a>> {
    let spec = call
        .operands
        .0
        .get(name)
        .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs operand {name}")))?;
    *store = Some(operand::load(call_path, name, spec)?);
    whole_byte_view(k, store.as_ref().expect("just loaded"))
}

/// The bytes of a result of `shape` and `dtype`, zeroed.
fn zeros(name: &str, dtype: DType, shape: &[usize]) -> Outcome<Vec<u8>> {
    let bytes = npy::byte_size(shape, dtype.info().item_bytes)
        .map_err(|e| Failure::run(format!("result {name}: {e}")))?;
    operand::zeroed(bytes)
}

fn check_shape(call: &Call, name: &str, shape: &[usize]) -> Outcome<()> {
    if let Some(s) = call.results.0.get(name).and_then(|r| r.shape.as_ref()) {
        if s != shape {
            return Err(Failure::run(format!(
                "result {name}: shape {s:?} is not the kernel's {shape:?}"
            )));
        }
    }
    Ok(())
}

fn check_dtype(call: &Call, name: &str, dtype: DType) -> Outcome<()> {
    let spec = call.results.0.get(name).and_then(|r| r.dtype.as_deref());
    if let Some(d) = operand::dtype_name(&format!("result {name}"), spec)? {
        if d != dtype {
            return Err(Failure::run(format!(
                "result {name}: dtype {d} is not the kernel's {dtype}"
            )));
        }
    }
    Ok(())
}

/// Run the kernel `which` as described by `call`; returns the lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    which: MovementKernel,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = which.name();
    super::expect_io(k, call, which.io())?;
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    let tier = exec.resolve_tier()?;
    match which {
        MovementKernel::Gather | MovementKernel::Scatter => {
            let axis = count_attr(k, &call.attrs, "axis", "an axis number")?.unwrap_or(0);
            let (mut s0, mut s1, mut s2) = (None, None, None);
            let (first_name, shape, dtype, out, what) = if which == MovementKernel::Gather {
                let x = load_view(k, call_path, call, "x", &mut s0)?;
                let p = load_view(k, call_path, call, "positions", &mut s1)?;
                let shape = p.shape().to_vec();
                check_shape(call, "y", &shape)?;
                check_dtype(call, "y", x.dtype())?;
                let mut out = zeros("y", x.dtype(), &shape)?;
                let mut y = super::result_view("y", x.dtype(), &shape, &mut out)?;
                tessera::gather(axis, &x, &p, &mut y, exec).map_err(fail)?;
                ("x", shape, x.dtype(), out, format!("along axis {axis}"))
            } else {
                let combine = match string_attr(k, &call.attrs, "combine")? {
                    None => Combine::Set,
                    Some(s) => Combine::from_name(s).ok_or_else(|| {
                        Failure::usage(format!(
                            "kernel `{k}`: attribute combine must be \"set\", \"add\", \"max\" or \"min\", not \"{}\"",
                            truncate(s, 40)
                        ))
                    })?,
                };
                // `unique` is the caller's promise that no two updates share
                // a target; the library's scatter combines every target's
                // updates in C order whether or not it holds, so the promise
                // is checked for its type and changes no result.
                match call.attrs.0.get("unique") {
                    None | Some(serde_json::Value::Bool(_)) => {}
                    Some(v) => {
                        return Err(Failure::usage(format!(
                            "kernel `{k}`: attribute unique must be true or false, not {}",
                            truncate(&v.to_string(), 40)
                        )))
                    }
                }
                let into = load_view(k, call_path, call, "into", &mut s0)?;
                let p = load_view(k, call_path, call, "positions", &mut s1)?;
                let u = load_view(k, call_path, call, "updates", &mut s2)?;
                let shape = into.shape().to_vec();
                check_shape(call, "y", &shape)?;
                check_dtype(call, "y", into.dtype())?;
                let mut out = zeros("y", into.dtype(), &shape)?;
                let mut y = super::result_view("y", into.dtype(), &shape, &mut out)?;
                tessera::scatter(combine, axis, &into, &p, &u, &mut y, exec).map_err(fail)?;
                (
                    "into",
                    shape,
                    into.dtype(),
                    out,
                    format!("{} along axis {axis}", combine.name()),
                )
            };
            let path = results.add("y", dtype, &shape, &out)?;
            Ok(vec![format!(
                "{k} of {first_name} {what}: y = {dtype} {shape:?} -> {} (tier {tier})",
                path.display()
            )])
        }
        MovementKernel::GatherRanges => {
            let (mut s0, mut s1, mut s2) = (None, None, None);
            let x = load_view(k, call_path, call, "x", &mut s0)?;
            let starts = load_view(k, call_path, call, "starts", &mut s1)?;
            let ends = load_view(k, call_path, call, "ends", &mut s2)?;
            let a = starts.shape().len().checked_sub(1).ok_or_else(|| {
                Failure::run(format!("kernel `{k}`: starts needs at least one axis"))
            })?;
            if ends.dtype() != DType::I64 || x.shape().len() <= a {
                // The library names what is wrong.
                let mut none: [u8; 0] = [];
                let mut y = super::result_view("y", x.dtype(), &[0], &mut none)?;
                tessera::gather_ranges(&x, &starts, &ends, &mut y, exec).map_err(fail)?;
            }
            let size = match count_attr(k, &call.attrs, "size", "a count")? {
                Some(s) => s,
                None => {
                    let e = ends.data();
                    e.chunks_exact(8)
                        .map(|c| i64::from_ne_bytes(c.try_into().expect("8 bytes")))
                        .max()
                        .unwrap_or(0)
                        .max(0) as usize
                }
            };
            let mut shape = x.shape().to_vec();
            shape[a] = size;
            check_shape(call, "y", &shape)?;
            check_dtype(call, "y", x.dtype())?;
            let mut out = zeros("y", x.dtype(), &shape)?;
            let mut y = super::result_view("y", x.dtype(), &shape, &mut out)?;
            tessera::gather_ranges(&x, &starts, &ends, &mut y, exec).map_err(fail)?;
            let path = results.add("y", x.dtype(), &shape, &out)?;
            Ok(vec![format!(
                "{k} of x along axis {a}: y = {} {shape:?} -> {} (tier {tier})",
                x.dtype(),
                path.display()
            )])
        }
        MovementKernel::Unique => {
            let mut s0 = None;
            let keys = load_view(k, call_path, call, "keys", &mut s0)?;
            let n = keys.shape().first().copied().unwrap_or(0);
            let m = match call.results.0.get("first").and_then(|r| r.shape.as_ref()) {
                Some(s) if s.len() == 1 => s[0],
                Some(s) => {
                    return Err(Failure::run(format!(
                        "result first: shape {s:?} is not [m]"
                    )))
                }
                None => n,
            };
            for name in ["ids", "first", "counts", "count"] {
                check_dtype(call, name, DType::I64)?;
            }
            check_shape(call, "ids", &[n])?;
            check_shape(call, "counts", &[m])?;
            check_shape(call, "count", &[])?;
            let mut ids = zeros("ids", DType::I64, &[n])?;
            let mut first = zeros("first", DType::I64, &[m])?;
            let mut counts = zeros("counts", DType::I64, &[m])?;
            let kk = tessera::unique(
                &keys,
                &mut super::result_view("ids", DType::I64, &[n], &mut ids)?,
                &mut super::result_view("first", DType::I64, &[m], &mut first)?,
                &mut super::result_view("counts", DType::I64, &[m], &mut counts)?,
                exec,
            )
            .map_err(fail)?;
            let count = (kk as i64).to_ne_bytes();
            let mut lines = Vec::new();
            for (name, shape, data) in [
                ("ids", vec![n], &ids[..]),
                ("first", vec![m], &first[..]),
                ("counts", vec![m], &counts[..]),
                ("count", vec![], &count[..]),
            ] {
                let path = results.add(name, DType::I64, &shape, data)?;
                lines.push(format!("{name} -> {}", path.display()));
            }
            Ok(vec![format!(
                "{k} of {n} rows: {kk} keys; {} (tier {tier})",
                lines.join(", ")
            )])
        }
    }
}
