//! The objects built once and run many times: a fused map program and an
//! FFT plan.

use crate::errors::{argument_error, guarded, to_py};
use crate::operand::{operand, run_views, Call};
use crate::{dtype_named, exec_of, operands};
use pyo3::prelude::*;
use tessera::fft::{Direction, NdPlan, Norm};

/// A map program parsed and typed once (`tessera.map`'s grammar), its
/// inputs `x0, x1, …` of fixed dtypes.
#[pyclass(module = "tessera._native", frozen)]
pub struct Program {
    program: tessera::Program,
}

#[pymethods]
impl Program {
    #[new]
    fn new(text: &str, inputs: Vec<String>) -> PyResult<Self> {
        guarded(|| {
            let ds = inputs
                .iter()
                .map(|d| dtype_named(d))
                .collect::<PyResult<Vec<_>>>()?;
            let program = tessera::Program::parse(text, &ds).map_err(to_py)?;
            Ok(Program { program })
        })
    }

    /// The dtypes of the inputs.
    fn input_dtypes(&self) -> Vec<&'static str> {
        self.program.inputs().iter().map(|d| d.name()).collect()
    }

    /// The dtypes of the outputs, in order.
    fn output_dtypes(&self) -> Vec<&'static str> {
        self.program
            .output_dtypes()
            .iter()
            .map(|d| d.name())
            .collect()
    }

    fn __str__(&self) -> String {
        self.program.to_string()
    }

    /// Run the program over `inputs` (broadcast) into `outputs` (one shape).
    #[pyo3(signature = (inputs, outputs, threads=None, tier=None))]
    fn run(
        &self,
        py: Python<'_>,
        inputs: Vec<Bound<'_, PyAny>>,
        outputs: Vec<Bound<'_, PyAny>>,
        threads: Option<usize>,
        tier: Option<&str>,
    ) -> PyResult<()> {
        let exec = exec_of(threads, tier)?;
        let call = Call::new(operands(&inputs, "x")?, operands(&outputs, "out")?)?;
        let program = &self.program;
        run_views(py, call, exec, move |ins, outs, exec| {
            tessera::map(program, ins, outs, exec)
        })
    }
}

fn norm_of(name: Option<&str>) -> PyResult<Norm> {
    match name {
        None | Some("none") => Ok(Norm::None),
        Some("backward") => Ok(Norm::Backward),
        Some("ortho") => Ok(Norm::Ortho),
        Some("forward") => Ok(Norm::Forward),
        Some(other) => Err(argument_error(format!(
            "norm `{other}`: expected \"backward\", \"ortho\", \"forward\" or \"none\""
        ))),
    }
}

/// An FFT planned once for one shape and dtype: `transform` is "c2c", "r2c"
/// or "c2r"; `shape` is the input's for c2c and r2c and the (real) output's
/// for c2r; `dtype` the input's.
#[pyclass(module = "tessera._native", frozen)]
pub struct FftPlan {
    plan: NdPlan,
}

#[pymethods]
impl FftPlan {
    #[new]
    #[pyo3(signature = (transform, axes, inverse, norm, shape, dtype))]
    fn new(
        transform: &str,
        axes: Vec<usize>,
        inverse: bool,
        norm: Option<&str>,
        shape: Vec<usize>,
        dtype: &str,
    ) -> PyResult<Self> {
        guarded(|| {
            let norm = norm_of(norm)?;
            let dtype = dtype_named(dtype)?;
            let plan = match transform {
                "c2c" => {
                    let dir = if inverse {
                        Direction::Inverse
                    } else {
                        Direction::Forward
                    };
                    NdPlan::c2c(&axes, dir, norm, &shape, dtype)
                }
                "r2c" => NdPlan::r2c(&axes, norm, &shape, dtype),
                "c2r" => NdPlan::c2r(&axes, norm, &shape, dtype),
                other => {
                    return Err(argument_error(format!(
                        "transform `{other}`: expected \"c2c\", \"r2c\" or \"c2r\""
                    )))
                }
            }
            .map_err(to_py)?;
            Ok(FftPlan { plan })
        })
    }

    /// The input's shape and dtype.
    fn input(&self) -> (Vec<usize>, &'static str) {
        let (s, d) = self.plan.input();
        (s.to_vec(), d.name())
    }

    /// The output's shape and dtype.
    fn output(&self) -> (Vec<usize>, &'static str) {
        let (s, d) = self.plan.output();
        (s.to_vec(), d.name())
    }

    /// Bytes of scratch a run allocates (for views of any layout at most this).
    fn scratch_bytes(&self) -> usize {
        self.plan.scratch_bytes()
    }

    /// Transform `x` into `out`.
    #[pyo3(signature = (x, out, threads=None, tier=None))]
    fn run(
        &self,
        py: Python<'_>,
        x: Bound<'_, PyAny>,
        out: Bound<'_, PyAny>,
        threads: Option<usize>,
        tier: Option<&str>,
    ) -> PyResult<()> {
        let exec = exec_of(threads, tier)?;
        let call = Call::new(vec![operand(&x, "x")?], vec![operand(&out, "out")?])?;
        let plan = &self.plan;
        run_views(py, call, exec, move |ins, outs, exec| {
            plan.run(&ins[0], &mut outs[0], exec)
        })
    }
}
