//! `tessera._native`: the Rust side of the Python package `tessera`.
//!
//! Every function here takes numpy arrays (or packed tuples, see
//! [`operand`]) that the Python layer has already allocated and shaped, reads
//! their geometry with the GIL held, then runs one library call with the GIL
//! released and panics caught ([`errors::detached`]). The numpy-flavoured
//! conveniences (allocation, broadcasting, keywords, the ml_dtypes
//! conversions) live in `python/tessera/*.py`.

mod attention;
mod errors;
mod extras;
mod fast;
mod linalg;
mod movement;
mod operand;
mod plans;

use errors::{argument_error, detached, guarded, to_py};
use operand::{operand, run_views, Call, Operand};
use pyo3::prelude::*;
use tessera::{CastMode, DType, Exec, Kind, ReduceOp, ScanOp};

/// The `Exec` of the keywords `threads` and `tier` (None: the default, the
/// best tier this CPU runs and rayon's pool).
pub(crate) fn exec_of(threads: Option<usize>, tier: Option<&str>) -> PyResult<Exec> {
    let mut exec = Exec::default();
    if let Some(name) = tier {
        exec.tier = Some(tessera::tier::parse_tier(name).map_err(to_py)?);
        exec.resolve_tier().map_err(to_py)?;
    }
    if let Some(n) = threads {
        if n == 0 {
            return Err(argument_error("threads must be at least 1".into()));
        }
        exec = exec.threads(n);
    }
    Ok(exec)
}

pub(crate) fn dtype_named(name: &str) -> PyResult<DType> {
    DType::from_name(name).ok_or_else(|| to_py(tessera::Error::UnknownDType(name.to_string())))
}

fn kind_named(name: &str) -> PyResult<Kind> {
    Kind::from_name(name).ok_or_else(|| to_py(tessera::Error::UnknownKind(name.to_string())))
}

pub(crate) fn operands(xs: &[Bound<'_, PyAny>], prefix: &str) -> PyResult<Vec<Operand>> {
    xs.iter()
        .enumerate()
        .map(|(i, x)| {
            let name = if xs.len() == 1 {
                prefix.to_string()
            } else {
                format!("{prefix}[{i}]")
            };
            operand(x, &name)
        })
        .collect()
}

/// Every dtype: (name, class, bits, values per byte, item bytes, aliases,
/// numpy descriptor or None, doc).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn dtypes() -> Vec<(
    &'static str,
    String,
    u32,
    u32,
    usize,
    Vec<&'static str>,
    Option<&'static str>,
    &'static str,
)> {
    DType::ALL
        .iter()
        .map(|d| {
            let i = d.info();
            (
                i.name,
                format!("{:?}", i.class).to_lowercase(),
                i.bits,
                i.values_per_byte,
                i.item_bytes,
                i.aliases.to_vec(),
                i.numpy,
                i.doc,
            )
        })
        .collect()
}

/// Every elementwise kind: (name, arity, accepted classes, accuracy, doc).
#[pyfunction]
fn kinds() -> Vec<(&'static str, usize, Vec<String>, String, &'static str)> {
    Kind::ALL
        .iter()
        .map(|k| {
            let i = k.info();
            (
                i.name,
                i.arity,
                i.accepts
                    .iter()
                    .map(|c| format!("{c:?}").to_lowercase())
                    .collect(),
                format!("{:?}", i.accuracy).to_lowercase(),
                i.doc,
            )
        })
        .collect()
}

/// Every tier: (name, whether this CPU runs it), and the default one.
#[pyfunction]
fn tiers() -> (Vec<(&'static str, bool)>, &'static str) {
    let avail = tessera::available_tiers();
    (
        tessera::Tier::ALL
            .iter()
            .map(|t| (t.name(), avail.contains(t)))
            .collect(),
        tessera::active_tier().name(),
    )
}

/// The dtype a kind computes in for inputs of `dtypes`, and its result's dtype.
#[pyfunction]
fn call_dtypes(kind: &str, dtypes: Vec<String>) -> PyResult<(&'static str, &'static str)> {
    guarded(|| {
        let kind = kind_named(kind)?;
        let ds = dtypes
            .iter()
            .map(|d| dtype_named(d))
            .collect::<PyResult<Vec<_>>>()?;
        let call = tessera::elementwise::call_dtype(kind, &ds).map_err(to_py)?;
        let result = tessera::result_dtype(kind, call).map_err(to_py)?;
        Ok((call.name(), result.name()))
    })
}

/// `out = kind(*inputs)`, the inputs broadcast to `out`'s shape.
#[pyfunction]
#[pyo3(signature = (kind, inputs, out, threads=None, tier=None))]
fn elementwise(
    py: Python<'_>,
    kind: &str,
    inputs: Vec<Bound<'_, PyAny>>,
    out: Bound<'_, PyAny>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let kind = kind_named(kind)?;
    let exec = exec_of(threads, tier)?;
    let call = Call::new(operands(&inputs, "x")?, vec![operand(&out, "out")?])?;
    run_views(py, call, exec, move |ins, outs, exec| {
        tessera::elementwise(kind, ins, &mut outs[0], exec)
    })
}

fn cast_mode(mode: &str) -> PyResult<CastMode> {
    match mode {
        "default" => Ok(CastMode::Default),
        "saturating" => Ok(CastMode::Saturating),
        _ => Err(argument_error(format!(
            "cast mode `{mode}`: expected \"default\" or \"saturating\""
        ))),
    }
}

/// `out = cast(x)` in `mode` ("default" or "saturating"), `x` broadcast.
#[pyfunction]
#[pyo3(signature = (x, out, mode="default", threads=None, tier=None))]
fn cast(
    py: Python<'_>,
    x: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    mode: &str,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let mode = cast_mode(mode)?;
    let exec = exec_of(threads, tier)?;
    let call = Call::new(vec![operand(&x, "x")?], vec![operand(&out, "out")?])?;
    run_views(py, call, exec, move |ins, outs, exec| {
        tessera::cast(mode, &ins[0], &mut outs[0], exec)
    })
}

fn reduce_op(name: &str) -> PyResult<ReduceOp> {
    ReduceOp::from_name(name).ok_or_else(|| {
        argument_error(format!(
            "unknown reduction `{name}` (one of {})",
            ReduceOp::ALL.map(|o| o.name()).join(", ")
        ))
    })
}

fn scan_op(name: &str) -> PyResult<ScanOp> {
    ScanOp::from_name(name).ok_or_else(|| {
        argument_error(format!(
            "unknown scan `{name}` (one of {})",
            ScanOp::ALL.map(|o| o.name()).join(", ")
        ))
    })
}

/// The shape and dtype of a reduction's result, or the error the call would give.
#[pyfunction]
fn reduce_shape(
    op: &str,
    axes: Vec<usize>,
    shape: Vec<usize>,
    dtype: &str,
) -> PyResult<(Vec<usize>, &'static str)> {
    guarded(|| {
        let op = reduce_op(op)?;
        let dtype = dtype_named(dtype)?;
        let out = tessera::reduce::reduce_query(op, &axes, &shape, dtype, None).map_err(to_py)?;
        let dt = if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
            DType::I64
        } else {
            dtype
        };
        Ok((out, dt.name()))
    })
}

/// Reduce `x` along `axes` by each of `ops` into the matching `outs`
/// (one pass where the ops share one).
#[pyfunction]
#[pyo3(signature = (ops, axes, x, outs, threads=None, tier=None))]
fn reduce(
    py: Python<'_>,
    ops: Vec<String>,
    axes: Vec<usize>,
    x: Bound<'_, PyAny>,
    outs: Vec<Bound<'_, PyAny>>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    if ops.len() != outs.len() {
        return Err(argument_error(format!(
            "{} reductions but {} destinations",
            ops.len(),
            outs.len()
        )));
    }
    let ops = ops
        .iter()
        .map(|o| reduce_op(o))
        .collect::<PyResult<Vec<_>>>()?;
    let exec = exec_of(threads, tier)?;
    let call = Call::new(vec![operand(&x, "x")?], operands(&outs, "out")?)?;
    detached(py, move || {
        let (ins, mut dsts) = call.views()?;
        let mut pairs: Vec<_> = ops.iter().copied().zip(dsts.iter_mut()).collect();
        tessera::reduce_many(&axes, &ins[0], &mut pairs, &exec)
    })
}

/// The dtype of a scan's result (None: any the caller picks; i64 for the
/// Arg scans) and its carrier, or the error the call would give.
#[pyfunction]
fn scan_dtype(
    op: &str,
    axis: usize,
    shape: Vec<usize>,
    dtype: &str,
) -> PyResult<(Option<&'static str>, &'static str)> {
    guarded(|| {
        let op = scan_op(op)?;
        let dtype = dtype_named(dtype)?;
        let s = tessera::reduce::scan_query(op, axis, &shape, dtype, None, None).map_err(to_py)?;
        Ok((s.out_dtype.map(|d| d.name()), s.carry_dtype.name()))
    })
}

/// The scan `op` of `x` along `axis` into `out`.
#[pyfunction]
#[pyo3(signature = (op, axis, x, out, threads=None, tier=None))]
fn scan(
    py: Python<'_>,
    op: &str,
    axis: usize,
    x: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let op = scan_op(op)?;
    let exec = exec_of(threads, tier)?;
    let call = Call::new(vec![operand(&x, "x")?], vec![operand(&out, "out")?])?;
    run_views(py, call, exec, move |ins, outs, exec| {
        tessera::scan(op, axis, &ins[0], None, &mut outs[0], exec)
    })
}

/// The accumulator `contract` uses by default for inputs of two dtypes.
#[pyfunction]
fn default_acc(a: &str, b: &str) -> PyResult<&'static str> {
    Ok(tessera::contract::default_acc(dtype_named(a)?, dtype_named(b)?).name())
}

fn contract_spec(
    batch: &[(usize, usize)],
    contracting: &[(usize, usize)],
    acc: &str,
) -> PyResult<tessera::ContractSpec> {
    let mut spec = tessera::ContractSpec::new(dtype_named(acc)?);
    for &(i, j) in batch {
        spec = spec.batch(i, j);
    }
    for &(i, j) in contracting {
        spec = spec.contracting(i, j);
    }
    Ok(spec)
}

/// The shape of a contraction's result, or the error the call would give.
#[pyfunction]
fn contract_shape(
    a: Vec<usize>,
    b: Vec<usize>,
    batch: Vec<(usize, usize)>,
    contracting: Vec<(usize, usize)>,
    acc: &str,
) -> PyResult<Vec<usize>> {
    guarded(|| {
        let spec = contract_spec(&batch, &contracting, acc)?;
        tessera::contract::output_shape(&a, &b, &spec).map_err(to_py)
    })
}

/// `out = Σ a·b` over the `contracting` axis pairs, batched over `batch`,
/// accumulated in `acc`.
#[pyfunction]
#[pyo3(signature = (a, b, out, batch, contracting, acc, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
fn contract(
    py: Python<'_>,
    a: Bound<'_, PyAny>,
    b: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    batch: Vec<(usize, usize)>,
    contracting: Vec<(usize, usize)>,
    acc: &str,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let spec = contract_spec(&batch, &contracting, acc)?;
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![operand(&a, "a")?, operand(&b, "b")?],
        vec![operand(&out, "out")?],
    )?;
    run_views(py, call, exec, move |ins, outs, exec| {
        tessera::contract(&spec, &ins[0], &ins[1], None, &mut outs[0], exec)
    })
}

/// Sort `x` along `axis` into `values` and/or `positions` (int64).
#[pyfunction]
#[pyo3(signature = (x, axis, descending, total_order, values=None, positions=None, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
fn sort(
    py: Python<'_>,
    x: Bound<'_, PyAny>,
    axis: usize,
    descending: bool,
    total_order: bool,
    values: Option<Bound<'_, PyAny>>,
    positions: Option<Bound<'_, PyAny>>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let exec = exec_of(threads, tier)?;
    let order = if total_order {
        tessera::FloatOrder::Total
    } else {
        tessera::FloatOrder::NanLast
    };
    let has_values = values.is_some();
    let mut outs = Vec::new();
    if let Some(v) = &values {
        outs.push(operand(v, "values")?);
    }
    if let Some(p) = &positions {
        outs.push(operand(p, "positions")?);
    }
    if outs.is_empty() {
        return Err(argument_error(
            "sort needs a destination for the values or the positions".into(),
        ));
    }
    let call = Call::new(vec![operand(&x, "x")?], outs)?;
    run_views(py, call, exec, move |ins, outs, exec| {
        let (v, p) = if has_values {
            let (v, rest) = outs.split_at_mut(1);
            (Some(&mut v[0]), rest.first_mut())
        } else {
            (None, outs.first_mut())
        };
        match v {
            Some(v) => tessera::sort_with(axis, descending, order, &ins[0], v, p, exec),
            None => tessera::argsort_with(
                axis,
                descending,
                order,
                &ins[0],
                p.expect("a destination was checked above"),
                exec,
            ),
        }
    })
}

/// Number the rows of `keys` (`[n, w]` of u64 or i64) by first appearance
/// into `ids`, `first` and `counts` (int64); returns the number of keys.
#[pyfunction]
#[pyo3(signature = (keys, ids, first, counts, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
fn unique(
    py: Python<'_>,
    keys: Bound<'_, PyAny>,
    ids: Bound<'_, PyAny>,
    first: Bound<'_, PyAny>,
    counts: Bound<'_, PyAny>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<usize> {
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![operand(&keys, "keys")?],
        vec![
            operand(&ids, "ids")?,
            operand(&first, "first")?,
            operand(&counts, "counts")?,
        ],
    )?;
    run_views(py, call, exec, move |ins, outs, exec| {
        let [ids, first, counts] = &mut outs[..] else {
            unreachable!("three destinations were given")
        };
        tessera::unique(&ins[0], ids, first, counts, exec)
    })
}

/// Panics inside the boundary, for the test that no panic reaches Python.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    detached(py, || -> tessera::Result<()> {
        panic!("a panic raised on purpose by _panic_for_test")
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(kinds, m)?)?;
    m.add_function(wrap_pyfunction!(tiers, m)?)?;
    m.add_function(wrap_pyfunction!(call_dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(elementwise, m)?)?;
    m.add_function(wrap_pyfunction!(cast, m)?)?;
    m.add_function(wrap_pyfunction!(reduce_shape, m)?)?;
    m.add_function(wrap_pyfunction!(reduce, m)?)?;
    m.add_function(wrap_pyfunction!(scan_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    m.add_function(wrap_pyfunction!(default_acc, m)?)?;
    m.add_function(wrap_pyfunction!(contract_shape, m)?)?;
    m.add_function(wrap_pyfunction!(contract, m)?)?;
    m.add_function(wrap_pyfunction!(sort, m)?)?;
    m.add_function(wrap_pyfunction!(unique, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(_time_elementwise, m)?)?;
    m.add_function(wrap_pyfunction!(_time_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::linalg_run, m)?)?;
    m.add_function(wrap_pyfunction!(attention::attention, m)?)?;
    m.add_function(wrap_pyfunction!(movement::gather, m)?)?;
    m.add_function(wrap_pyfunction!(movement::scatter, m)?)?;
    m.add_function(wrap_pyfunction!(movement::random, m)?)?;
    m.add_function(wrap_pyfunction!(movement::quantize, m)?)?;
    m.add_function(wrap_pyfunction!(movement::formats, m)?)?;
    m.add_function(wrap_pyfunction!(movement::encoded_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(movement::encode, m)?)?;
    m.add_function(wrap_pyfunction!(movement::decode, m)?)?;
    m.add_function(wrap_pyfunction!(fast::register_dtypes, m)?)?;
    m.add_class::<fast::Ufunc>()?;
    m.add_class::<fast::Reducer>()?;
    m.add_function(wrap_pyfunction!(extras::convolve_shape, m)?)?;
    m.add_function(wrap_pyfunction!(extras::convolve, m)?)?;
    m.add_function(wrap_pyfunction!(extras::order_statistic, m)?)?;
    m.add_function(wrap_pyfunction!(extras::lower_bound, m)?)?;
    m.add_function(wrap_pyfunction!(extras::sorted_set, m)?)?;
    m.add_function(wrap_pyfunction!(extras::bytes_find, m)?)?;
    m.add_function(wrap_pyfunction!(extras::bytes_count, m)?)?;
    m.add_function(wrap_pyfunction!(extras::utf8_valid_up_to, m)?)?;
    m.add_function(wrap_pyfunction!(extras::coded_len, m)?)?;
    m.add_function(wrap_pyfunction!(extras::code, m)?)?;
    m.add_function(wrap_pyfunction!(extras::reduce_terms, m)?)?;
    m.add_function(wrap_pyfunction!(extras::series_run, m)?)?;
    m.add_class::<plans::Program>()?;
    m.add_class::<plans::FftPlan>()?;
    Ok(())
}

/// The best of `reps` runs of `kind` over `inputs` into `out`, timed inside
/// Rust (no Python between runs): the library's own speed, for
/// `python/bench.py` to set the Python call beside.
#[pyfunction]
#[pyo3(signature = (kind, inputs, out, reps, threads=None, tier=None))]
fn _time_elementwise(
    py: Python<'_>,
    kind: &str,
    inputs: Vec<Bound<'_, PyAny>>,
    out: Bound<'_, PyAny>,
    reps: usize,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<f64> {
    let kind = kind_named(kind)?;
    let exec = exec_of(threads, tier)?;
    let call = Call::new(operands(&inputs, "x")?, vec![operand(&out, "out")?])?;
    run_views(py, call, exec, move |ins, outs, exec| {
        let mut best = f64::INFINITY;
        for _ in 0..reps.max(1) {
            let t = std::time::Instant::now();
            tessera::elementwise(kind, ins, &mut outs[0], exec)?;
            best = best.min(t.elapsed().as_secs_f64());
        }
        Ok(best)
    })
}

/// As [`_time_elementwise`], for a reduction over `axes`.
#[pyfunction]
#[pyo3(signature = (op, axes, x, out, reps, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
fn _time_reduce(
    py: Python<'_>,
    op: &str,
    axes: Vec<usize>,
    x: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    reps: usize,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<f64> {
    let op = reduce_op(op)?;
    let exec = exec_of(threads, tier)?;
    let call = Call::new(vec![operand(&x, "x")?], vec![operand(&out, "out")?])?;
    run_views(py, call, exec, move |ins, outs, exec| {
        let mut best = f64::INFINITY;
        for _ in 0..reps.max(1) {
            let t = std::time::Instant::now();
            tessera::reduce(op, &axes, &ins[0], &mut outs[0], exec)?;
            best = best.min(t.elapsed().as_secs_f64());
        }
        Ok(best)
    })
}

/// The extension's Rust allocations (the library's views, plans and scratch)
/// go through mimalloc: a call on a small array makes a few small
/// allocations (each view's shape and strides), and glibc's malloc and free
/// cost a measurable part of a call that numpy makes in ~250 ns.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
