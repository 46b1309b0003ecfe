//! Flash attention with the library's ready-made mask programs or a
//! program's text.

use crate::errors::{argument_error, guarded, to_py};
use crate::operand::{operand, run_views, Call};
use crate::{dtype_named, exec_of, operands};
use pyo3::prelude::*;
use tessera::attention::programs;
use tessera::Program;

/// The mask-and-score program: `mask` is "full", "causal", "sliding_window"
/// (with `window`) or "program" (with `text`, whose input 0 is the score
/// and inputs 1… the loads, of `load_dtypes`).
#[allow(clippy::too_many_arguments)]
fn program_of(
    mask: &str,
    acc: tessera::DType,
    rank: usize,
    offset: i64,
    window: Option<i64>,
    text: Option<&str>,
    load_dtypes: &[String],
) -> PyResult<Program> {
    guarded(|| {
        match mask {
            "full" => programs::full(acc),
            "causal" => programs::causal(acc, rank, offset),
            "sliding_window" => {
                let w = window
                    .ok_or_else(|| argument_error("a sliding window needs window=".into()))?;
                programs::sliding_window(acc, rank, offset, w)
            }
            "program" => {
                let text =
                    text.ok_or_else(|| argument_error("mask=\"program\" needs its text".into()))?;
                let mut ds = vec![acc];
                for d in load_dtypes {
                    ds.push(dtype_named(d)?);
                }
                Program::parse(text, &ds)
            }
            other => {
                return Err(argument_error(format!(
                "mask `{other}`: expected \"full\", \"causal\", \"sliding_window\" or \"program\""
            )))
            }
        }
        .map_err(to_py)
    })
}

/// `o` and `lse` of attention of `q` over `k`, `v` (the library's
/// contract), with `loads` the program's operands and `lengths` the
/// optional key counts per lead index.
#[pyfunction]
#[pyo3(signature = (q, k, v, o, lse, scale, mask, offset=0, window=None, text=None, loads=Vec::new(), lengths=None, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
pub fn attention(
    py: Python<'_>,
    q: Bound<'_, PyAny>,
    k: Bound<'_, PyAny>,
    v: Bound<'_, PyAny>,
    o: Bound<'_, PyAny>,
    lse: Bound<'_, PyAny>,
    scale: f64,
    mask: &str,
    offset: i64,
    window: Option<i64>,
    text: Option<&str>,
    loads: Vec<Bound<'_, PyAny>>,
    lengths: Option<Bound<'_, PyAny>>,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let exec = exec_of(threads, tier)?;
    let mut ins = vec![operand(&q, "q")?, operand(&k, "k")?, operand(&v, "v")?];
    let acc = operand(&lse, "lse")?.dtype;
    let rank = ins[0].shape.len();
    let load_ops = operands(&loads, "loads")?;
    let load_dtypes: Vec<String> = load_ops
        .iter()
        .map(|l| l.dtype.name().to_string())
        .collect();
    let program = program_of(mask, acc, rank, offset, window, text, &load_dtypes)?;
    let n_loads = load_ops.len();
    ins.extend(load_ops);
    let has_lengths = lengths.is_some();
    if let Some(l) = &lengths {
        ins.push(operand(l, "lengths")?);
    }
    let call = Call::new(ins, vec![operand(&o, "o")?, operand(&lse, "lse")?])?;
    run_views(py, call, exec, move |ins, outs, exec| {
        let kv = tessera::Kv {
            k: ins[1].clone(),
            v: ins[2].clone(),
        };
        let loads = &ins[3..3 + n_loads];
        let lengths = has_lengths.then(|| &ins[3 + n_loads]);
        let [o, lse] = &mut outs[..] else {
            unreachable!("two destinations were given")
        };
        tessera::attention(&program, scale, &ins[0], &kv, loads, lengths, o, lse, exec)
    })
}
