//! The linear-algebra routines: the destinations come shaped from the
//! Python layer (`tessera/linalg.py`), which follows the library's shapes.

use crate::errors::argument_error;
use crate::operand::{run_views, Call};
use crate::{exec_of, operands};
use pyo3::prelude::*;
use tessera::linalg::{self, Triangle};

/// Run routine `routine` ("cholesky", "lu", "qr", "solve_triangular",
/// "eigh", "svd", "eig") over `inputs` into `outputs` (the library's order:
/// lu → lu, pivots, permutation; qr → q, r; eigh/eig → w[, v]; svd →
/// s[, u, vh]).
#[pyfunction]
#[pyo3(signature = (routine, inputs, outputs, upper=false, adjoint=false, unit_diagonal=false, threads=None, tier=None))]
#[allow(clippy::too_many_arguments)]
pub fn linalg_run(
    py: Python<'_>,
    routine: &str,
    inputs: Vec<Bound<'_, PyAny>>,
    outputs: Vec<Bound<'_, PyAny>>,
    upper: bool,
    adjoint: bool,
    unit_diagonal: bool,
    threads: Option<usize>,
    tier: Option<&str>,
) -> PyResult<()> {
    let exec = exec_of(threads, tier)?;
    let triangle = if upper {
        Triangle::Upper
    } else {
        Triangle::Lower
    };
    let (n_in, n_out): (usize, &[usize]) = match routine {
        "cholesky" => (1, &[1]),
        "lu" => (1, &[3]),
        "qr" => (1, &[2]),
        "solve_triangular" => (2, &[1]),
        "eigh" | "eig" => (1, &[1, 2]),
        "svd" => (1, &[1, 3]),
        other => return Err(argument_error(format!("unknown routine `{other}`"))),
    };
    if inputs.len() != n_in || !n_out.contains(&outputs.len()) {
        return Err(argument_error(format!(
            "{routine}: {} operands and {} results given",
            inputs.len(),
            outputs.len()
        )));
    }
    let call = Call::new(operands(&inputs, "a")?, operands(&outputs, "result")?)?;
    let routine = routine.to_string();
    run_views(py, call, exec, move |ins, outs, exec| {
        let a = &ins[0];
        match (routine.as_str(), &mut outs[..]) {
            ("cholesky", [l]) => linalg::cholesky(triangle, a, l, exec),
            ("lu", [lu, piv, perm]) => linalg::lu(a, lu, piv, perm, exec),
            ("qr", [q, r]) => linalg::qr(a, q, r, exec),
            ("solve_triangular", [x]) => {
                linalg::solve_triangular(triangle, adjoint, unit_diagonal, a, &ins[1], x, exec)
            }
            ("eigh", [w]) => linalg::eigh(a, w, None, exec),
            ("eigh", [w, v]) => linalg::eigh(a, w, Some(v), exec),
            ("eig", [w]) => linalg::eig(a, w, None, exec),
            ("eig", [w, v]) => linalg::eig(a, w, Some(v), exec),
            ("svd", [s]) => linalg::svd(a, s, None, exec),
            ("svd", [s, u, vh]) => linalg::svd(a, s, Some((u, vh)), exec),
            _ => unreachable!("the routine and its result count were checked above"),
        }
    })
}
