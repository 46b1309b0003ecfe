//! Convolution and correlation, order statistics, sorted-set operations
//! and the byte engine (search, UTF-8, hex, base64).

use crate::errors::{argument_error, detached, guarded, to_py};
use crate::exec_of;
use crate::operand::{operand, run_views, Call};
use pyo3::prelude::*;
use tessera::bytes::{self, Base64};
use tessera::reduce::lanes::LaneFloat;
use tessera::reduce::series;
use tessera::ConvMode;

fn conv_mode(mode: &str) -> PyResult<ConvMode> {
    match mode {
        "full" => Ok(ConvMode::Full),
        "same" => Ok(ConvMode::Same),
        "valid" => Ok(ConvMode::Valid),
        other => Err(argument_error(format!(
            "mode `{other}`: expected \"full\", \"same\" or \"valid\""
        ))),
    }
}

/// The result shape of a convolution of `x` (along its last axis) with `k`.
#[pyfunction]
pub fn convolve_shape(x: Vec<usize>, k: Vec<usize>, mode: &str) -> PyResult<Vec<usize>> {
    guarded(|| tessera::signal::convolve_shape(&x, &k, conv_mode(mode)?).map_err(to_py))
}

/// Convolution (`reverse` true) or correlation of `x` with `k` along the
/// last axis into `out`, accumulated in `acc`.
#[pyfunction]
#[pyo3(signature = (x, k, out, mode, acc, reverse, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
pub fn convolve(
    py: Python<'_>,
    x: Bound<'_, PyAny>,
    k: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    mode: &str,
    acc: &str,
    reverse: bool,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let mode = conv_mode(mode)?;
    let acc = crate::dtype_named(acc)?;
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![operand(&x, "x")?, operand(&k, "kernel")?],
        vec![operand(&out, "out")?],
    )?;
    run_views(py, call, exec, move |ins, outs, exec| {
        if reverse {
            tessera::convolve(&ins[0], &ins[1], mode, acc, &mut outs[0], exec)
        } else {
            tessera::correlate(&ins[0], &ins[1], mode, acc, &mut outs[0], exec)
        }
    })
}

/// The median (`q` None) or the `q`-quantile of `x` along `axis` into `out` (f64).
#[pyfunction]
#[pyo3(signature = (x, axis, out, q=None, threads=None, tier=None))]
pub fn order_statistic(
    py: Python<'_>,
    x: Bound<'_, PyAny>,
    axis: usize,
    out: Bound<'_, PyAny>,
    q: Option<f64>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let exec = exec_of(threads, tier)?;
    let call = Call::new(vec![operand(&x, "x")?], vec![operand(&out, "out")?])?;
    run_views(py, call, exec, move |ins, outs, exec| match q {
        None => tessera::order::median(axis, &ins[0], &mut outs[0], exec),
        Some(q) => tessera::order::quantile(q, axis, &ins[0], &mut outs[0], exec),
    })
}

/// For each query of `q`, the number of elements of the sorted `a` below it (int64 into `out`).
#[pyfunction]
#[pyo3(signature = (a, q, out, threads=None, tier=None))]
pub fn lower_bound(
    py: Python<'_>,
    a: Bound<'_, PyAny>,
    q: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![operand(&a, "a")?, operand(&q, "v")?],
        vec![operand(&out, "out")?],
    )?;
    run_views(py, call, exec, move |ins, outs, exec| {
        tessera::order::lower_bound(&ins[0], &ins[1], &mut outs[0], exec)
    })
}

/// The intersection (`intersect` true) or difference of the sorted,
/// duplicate-free `a` and `b` into the front of `out`; returns its length.
#[pyfunction]
#[pyo3(signature = (a, b, out, intersect, threads=None, tier=None))]
pub fn sorted_set(
    py: Python<'_>,
    a: Bound<'_, PyAny>,
    b: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    intersect: bool,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<usize> {
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![operand(&a, "a")?, operand(&b, "b")?],
        vec![operand(&out, "out")?],
    )?;
    run_views(py, call, exec, move |ins, outs, exec| {
        if intersect {
            tessera::order::intersect(&ins[0], &ins[1], &mut outs[0], exec)
        } else {
            tessera::order::difference(&ins[0], &ins[1], &mut outs[0], exec)
        }
    })
}

/// The first (or, `last`, the last) position of `needle` in `hay`, or None.
#[pyfunction]
#[pyo3(signature = (hay, needle, last=false, threads=None, tier=None))]
pub fn bytes_find(
    py: Python<'_>,
    hay: Bound<'_, PyAny>,
    needle: Bound<'_, PyAny>,
    last: bool,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<Option<usize>> {
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![operand(&hay, "hay")?, operand(&needle, "needle")?],
        vec![],
    )?;
    detached(py, move || {
        let (_, raw, _, _) = call.parts(&[0, 1], &[])?;
        if last {
            bytes::last_index(raw[0], raw[1], &exec)
        } else {
            bytes::index(raw[0], raw[1], &exec)
        }
    })
}

/// The number of non-overlapping occurrences of `needle` in `hay`.
#[pyfunction]
#[pyo3(signature = (hay, needle, threads=None, tier=None))]
pub fn bytes_count(
    py: Python<'_>,
    hay: Bound<'_, PyAny>,
    needle: Bound<'_, PyAny>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<usize> {
    let exec = exec_of(threads, tier)?;
    let call = Call::new(
        vec![operand(&hay, "hay")?, operand(&needle, "needle")?],
        vec![],
    )?;
    detached(py, move || {
        let (_, raw, _, _) = call.parts(&[0, 1], &[])?;
        bytes::count_seq(raw[0], raw[1], &exec)
    })
}

/// The length of the longest valid UTF-8 prefix of `b`.
#[pyfunction]
#[pyo3(signature = (b, threads=None, tier=None))]
pub fn utf8_valid_up_to(
    py: Python<'_>,
    b: Bound<'_, PyAny>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<usize> {
    let exec = exec_of(threads, tier)?;
    let call = Call::new(vec![operand(&b, "bytes")?], vec![])?;
    detached(py, move || {
        let (_, raw, _, _) = call.parts(&[0], &[])?;
        bytes::utf8_valid_up_to(raw[0], &exec)
    })
}

/// The bytes a codec call writes for `n` input bytes: `"hex_encode"`,
/// `"hex_decode"`, `"base64_encode"`; for `"base64_decode"` the text itself
/// is needed (its padding), so `text` is given instead of `n`.
#[pyfunction]
#[pyo3(signature = (codec, n, text=None, url=false, pad=true))]
pub fn coded_len(
    py: Python<'_>,
    codec: &str,
    n: usize,
    text: Option<Bound<'_, PyAny>>,
    url: bool,
    pad: bool,
) -> PyResult<usize> {
    let cfg = Base64 { url, pad };
    match codec {
        "hex_encode" => n.checked_mul(2).ok_or_else(|| {
            to_py(tessera::Error::Overflow {
                operand: "hex text length".into(),
            })
        }),
        "hex_decode" => bytes::hex_decoded_len(n).map_err(to_py),
        "base64_encode" => bytes::base64_encoded_len(n, cfg).map_err(to_py),
        "base64_decode" => {
            let t = text.ok_or_else(|| argument_error("base64_decode needs the text".into()))?;
            let call = Call::new(vec![operand(&t, "text")?], vec![])?;
            detached(py, move || {
                let (_, raw, _, _) = call.parts(&[0], &[])?;
                bytes::base64_decoded_len(raw[0], cfg)
            })
        }
        other => Err(argument_error(format!("unknown codec `{other}`"))),
    }
}

/// Run a codec (`"hex_encode"`, `"hex_decode"`, `"base64_encode"`,
/// `"base64_decode"`) from `src` into the front of `dst`; returns the bytes
/// written. All or nothing: a decoder checks the whole text first.
#[pyfunction]
#[pyo3(signature = (codec, src, dst, url=false, pad=true, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
pub fn code(
    py: Python<'_>,
    codec: &str,
    src: Bound<'_, PyAny>,
    dst: Bound<'_, PyAny>,
    url: bool,
    pad: bool,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<usize> {
    let cfg = Base64 { url, pad };
    let exec = exec_of(threads, tier)?;
    let which = match codec {
        "hex_encode" => 0,
        "hex_decode" => 1,
        "base64_encode" => 2,
        "base64_decode" => 3,
        other => return Err(argument_error(format!("unknown codec `{other}`"))),
    };
    let call = Call::new(vec![operand(&src, "src")?], vec![operand(&dst, "dst")?])?;
    detached(py, move || {
        let (_, raw, _, mut out) = call.parts(&[0], &[0])?;
        let (s, d) = (raw[0], &mut *out[0]);
        match which {
            0 => bytes::hex_encode(s, d, &exec),
            1 => bytes::hex_decode(s, d, &exec),
            2 => bytes::base64_encode(s, d, cfg, &exec),
            _ => bytes::base64_decode(s, d, cfg, &exec),
        }
    })
}

/// A reduction of two operands of one shape term by term: `"dot"` (Σ x·y),
/// `"dot_conj"` (Σ conj(x)·y, complex), `"dot2"` (compensated Σ x·y),
/// `"squared_distance"` (Σ (x − y)²), `"l1_distance"` (Σ |x − y|); or of one
/// (`y` None): `"sum_squares"` (Σ x²), `"l1_norm"` (Σ |x|); along `axes` into `out`.
#[pyfunction]
#[pyo3(signature = (which, axes, x, y, out, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
pub fn reduce_terms(
    py: Python<'_>,
    which: &str,
    axes: Vec<usize>,
    x: Bound<'_, PyAny>,
    y: Option<Bound<'_, PyAny>>,
    out: Bound<'_, PyAny>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    const PAIRS: [&str; 5] = ["dot", "dot_conj", "dot2", "squared_distance", "l1_distance"];
    const ONES: [&str; 2] = ["sum_squares", "l1_norm"];
    let pair = PAIRS.contains(&which);
    if !pair && !ONES.contains(&which) {
        return Err(argument_error(format!("unknown reduction `{which}`")));
    }
    if pair != y.is_some() {
        return Err(argument_error(format!(
            "{which} takes {} operand(s)",
            if pair { 2 } else { 1 }
        )));
    }
    let exec = exec_of(threads, tier)?;
    let mut ins = vec![operand(&x, "x")?];
    if let Some(y) = &y {
        ins.push(operand(y, "y")?);
    }
    let call = Call::new(ins, vec![operand(&out, "out")?])?;
    let which = which.to_string();
    run_views(py, call, exec, move |ins, outs, exec| {
        let (x, o) = (&ins[0], &mut outs[0]);
        match which.as_str() {
            "dot" => tessera::dot(&axes, x, &ins[1], o, exec),
            "dot_conj" => tessera::dot_conj(&axes, x, &ins[1], o, exec),
            "dot2" => tessera::reduce::dot2(&axes, x, &ins[1], o, exec),
            "squared_distance" => tessera::squared_distance(&axes, x, &ins[1], o, exec),
            "l1_distance" => tessera::l1_distance(&axes, x, &ins[1], o, exec),
            "sum_squares" => tessera::sum_squares(&axes, x, o, exec),
            _ => tessera::l1_norm(&axes, x, o, exec),
        }
    })
}

/// Values of a float dtype read from little-endian-native bytes (any alignment).
trait SeriesFloat: LaneFloat + Copy {
    fn read(b: &[u8]) -> Vec<Self>;
    fn write(v: &[Self], b: &mut [u8]);
    fn of(x: f64) -> Self;
}

macro_rules! series_float {
    ($t:ty, $n:expr) => {
        impl SeriesFloat for $t {
            fn read(b: &[u8]) -> Vec<Self> {
                b.chunks_exact($n)
                    .map(|c| <$t>::from_ne_bytes(c.try_into().expect("chunks of the size")))
                    .collect()
            }
            fn write(v: &[Self], b: &mut [u8]) {
                for (c, x) in b.chunks_exact_mut($n).zip(v) {
                    c.copy_from_slice(&x.to_ne_bytes());
                }
            }
            fn of(x: f64) -> Self {
                x as $t
            }
        }
    };
}
series_float!(f32, 4);
series_float!(f64, 8);

fn run_series<F: SeriesFloat>(
    which: &str,
    x: &[u8],
    out: &mut [u8],
    window: usize,
    alpha: f64,
    exec: &tessera::Exec,
) -> tessera::Result<Option<f64>> {
    let xs = F::read(x);
    let mut ys = vec![F::of(0.0); out.len() / std::mem::size_of::<F>()];
    match which {
        "diff" => series::diff(&xs, &mut ys, exec)?,
        "rolling_mean" => series::rolling_mean(window, &xs, &mut ys, exec)?,
        "rolling_min" => series::rolling_min(window, &xs, &mut ys, exec)?,
        "rolling_max" => series::rolling_max(window, &xs, &mut ys, exec)?,
        "ema" => series::ema(F::of(alpha), &xs, &mut ys, exec)?,
        _ => {
            let c = series::sum_squared_deviations(F::of(alpha), &xs, exec)?;
            return Ok(Some(LaneFloat::to_f64(c)));
        }
    }
    F::write(&ys, out);
    Ok(None)
}

/// A one-dimensional series kernel over the contiguous f32 or f64 `x` into
/// `out` (its dtype): `"diff"`, `"rolling_mean"`, `"rolling_min"`,
/// `"rolling_max"` (with `window`), `"ema"` (with `alpha`), or
/// `"sum_squared_deviations"` about `alpha` (returned; `out` unused).
#[pyfunction]
#[pyo3(signature = (which, x, out, window=1, alpha=0.0, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
pub fn series_run(
    py: Python<'_>,
    which: &str,
    x: Bound<'_, PyAny>,
    out: Bound<'_, PyAny>,
    window: usize,
    alpha: f64,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<Option<f64>> {
    const WHICH: [&str; 6] = [
        "diff",
        "rolling_mean",
        "rolling_min",
        "rolling_max",
        "ema",
        "sum_squared_deviations",
    ];
    if !WHICH.contains(&which) {
        return Err(argument_error(format!("unknown series kernel `{which}`")));
    }
    let exec = exec_of(threads, tier)?;
    let (xo, oo) = (operand(&x, "x")?, operand(&out, "out")?);
    let dtype = xo.dtype;
    if !matches!(dtype, tessera::DType::F32 | tessera::DType::F64) || oo.dtype != dtype {
        return Err(crate::errors::dtype_error(format!(
            "{which} takes f32 or f64 and a destination of the same dtype (x is {}, out {})",
            dtype.name(),
            oo.dtype.name()
        )));
    }
    if xo.shape.len() != 1 || oo.shape.len() != 1 {
        return Err(crate::errors::value_error(format!(
            "{which} takes one-dimensional series"
        )));
    }
    let which = which.to_string();
    let call = Call::new(vec![xo], vec![oo])?;
    detached(py, move || {
        let (_, raw, _, mut ob) = call.parts(&[0], &[0])?;
        if dtype == tessera::DType::F32 {
            run_series::<f32>(&which, raw[0], ob[0], window, alpha, &exec)
        } else {
            run_series::<f64>(&which, raw[0], ob[0], window, alpha, &exec)
        }
    })
}
