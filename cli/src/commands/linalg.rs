//! The linear-algebra routines as calls: `cholesky`, `lu`, `qr`,
//! `solve_triangular`, `eigh`, `svd` and `eig`.
//!
//! ```json
//! {"kernel": "solve_triangular",
//!  "attrs": {"triangle": "upper", "adjoint": false, "unit_diagonal": false},
//!  "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}},
//!  "results": {"x": {"npy": "x.npy"}}}
//! ```
//!
//! Operands end in their matrix axes, the axes before them a batch
//! (`[batch…, m, n]`). `cholesky` (attribute `triangle`, default `lower`)
//! writes `l` under lower, `u` under upper; `lu` writes `lu`, `pivots` and
//! `permutation` (i64); `qr` writes `q` and `r` (attribute `mode`:
//! `reduced`, the default, or `complete`); `solve_triangular` reads `a` and
//! `b` (`[batch…, n, r]`) and writes `x` (attributes `triangle`, `adjoint`,
//! `unit_diagonal`); `eigh` writes `w` (and `v` unless attribute `vectors`
//! is false); `svd` writes `s` (and `u`, `vh` unless `vectors` is false;
//! `mode` as qr's); `eig` writes `w` (complex) and `v` unless `vectors` is
//! false. Orders, bounds and refusals are the library's
//! (`tessera::linalg`); every result is written only when the call
//! succeeds.

use super::{string_attr, whole_byte_view};
use crate::call::Call;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand;
use crate::results::Results;
use std::path::Path;
use tessera::linalg::{self, Triangle};
use tessera::{ArrayView, DType, Exec};

/// Which routine a call names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinalgKernel {
    /// `cholesky`.
    Cholesky,
    /// `lu`.
    Lu,
    /// `qr`.
    Qr,
    /// `solve_triangular`.
    SolveTriangular,
    /// `eigh`.
    Eigh,
    /// `svd`.
    Svd,
    /// `eig`.
    Eig,
}

impl LinalgKernel {
    /// Every routine.
    pub const ALL: [LinalgKernel; 7] = [
        LinalgKernel::Cholesky,
        LinalgKernel::Lu,
        LinalgKernel::Qr,
        LinalgKernel::SolveTriangular,
        LinalgKernel::Eigh,
        LinalgKernel::Svd,
        LinalgKernel::Eig,
    ];

    /// The routine named `name`.
    pub fn from_name(name: &str) -> Option<LinalgKernel> {
        LinalgKernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Its name in call files.
    pub fn name(self) -> &'static str {
        match self {
            LinalgKernel::Cholesky => "cholesky",
            LinalgKernel::Lu => "lu",
            LinalgKernel::Qr => "qr",
            LinalgKernel::SolveTriangular => "solve_triangular",
            LinalgKernel::Eigh => "eigh",
            LinalgKernel::Svd => "svd",
            LinalgKernel::Eig => "eig",
        }
    }

    /// Its operands, results (every one it may write) and attributes.
    pub fn io(
        self,
    ) -> (
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    ) {
        match self {
            LinalgKernel::Cholesky => (&["a"], &["l", "u"], &["triangle"]),
            LinalgKernel::Lu => (&["a"], &["lu", "pivots", "permutation"], &[]),
            LinalgKernel::Qr => (&["a"], &["q", "r"], &["mode"]),
            LinalgKernel::SolveTriangular => (
                &["a", "b"],
                &["x"],
                &["triangle", "adjoint", "unit_diagonal"],
            ),
            LinalgKernel::Eigh => (&["a"], &["w", "v"], &["vectors"]),
            LinalgKernel::Svd => (&["a"], &["s", "u", "vh"], &["vectors", "mode"]),
            LinalgKernel::Eig => (&["a"], &["w", "v"], &["vectors"]),
        }
    }

    /// What `tessera kernels` says of it.
    pub fn doc(self) -> &'static str {
        match self {
            LinalgKernel::Cholesky => "Cholesky factor of each Hermitian positive definite matrix (f32, f64, c64, c128; batched): l under triangle lower, u = conjugate transpose of l (bit for bit) under upper; reads the lower triangle; a non-positive or NaN pivot makes that matrix NaN",
            LinalgKernel::Lu => "LU with partial pivoting (|re|+|im| search, strictly greater moves, NaN never greater): lu (unit L below, U on and above), pivots and permutation (i64)",
            LinalgKernel::Qr => "Householder QR: q with orthonormal columns and r upper triangular with a real diagonal; mode reduced (default) or complete",
            LinalgKernel::SolveTriangular => "x with a x = b (a^H x = b under adjoint) reading a's triangle (ones on the diagonal under unit_diagonal); a zero diagonal makes that matrix's x NaN",
            LinalgKernel::Eigh => "Eigenvalues of each Hermitian matrix ascending (w, real) and orthonormal eigenvectors (v, unless vectors is false); reads the lower triangle",
            LinalgKernel::Svd => "Singular values descending (s, real) and u, vh (unless vectors is false; mode reduced or complete)",
            LinalgKernel::Eig => "Eigenvalues (w, complex) and unit-norm eigenvectors (v, complex, unless vectors is false) after balancing, Hessenberg and shifted QR; conjugate pairs adjacent on real input",
        }
    }
}

fn bool_attr(call: &Call, k: &str, key: &str, default: bool) -> Outcome<bool> {
    match call.attrs.0.get(key) {
        None => Ok(default),
        Some(v) => v.as_bool().ok_or_else(|| {
            Failure::usage(format!(
                "kernel `{k}`: attribute {key} must be true or false, not {}",
                super::truncate(&v.to_string(), 40)
            ))
        }),
    }
}

fn choice<'a>(call: &'a Call, k: &str, key: &str, options: &[&'a str]) -> Outcome<&'a str> {
    match string_attr(k, &call.attrs, key)? {
        None => Ok(options[0]),
        Some(v) if options.contains(&v) => Ok(v),
        Some(v) => Err(Failure::usage(format!(
            "kernel `{k}`: attribute {key} must be one of {options:?}, not {:?}",
            super::truncate(v, 40)
        ))),
    }
}

/// A result buffer of `dtype` and `shape`, zeroed.
fn new(dtype: DType, shape: &[usize]) -> Outcome<Vec<u8>> {
    let bytes = npy::byte_size(shape, dtype.info().item_bytes)
        .map_err(|e| Failure::run(format!("result: {e}")))?;
    operand::zeroed(bytes)
}

/// The real and complex dtypes of a's precision.
fn precision(k: &str, a: &ArrayView<'_>) -> Outcome<(DType, DType)> {
    match a.dtype() {
        DType::F32 | DType::C64 => Ok((DType::F32, DType::C64)),
        DType::F64 | DType::C128 => Ok((DType::F64, DType::C128)),
        d => Err(Failure::run(format!(
            "kernel `{k}`: a is {d}; linear algebra takes f32, f64, complex64 and complex128"
        ))),
    }
}

/// The batch and matrix extents of a (`[batch…, m, n]`).
fn split(k: &str, a: &ArrayView<'_>) -> Outcome<(Vec<usize>, usize, usize)> {
    let s = a.shape();
    if s.len() < 2 {
        return Err(Failure::run(format!(
            "kernel `{k}`: a has shape {s:?}; it needs at least 2 axes (the batch, then the matrix)"
        )));
    }
    Ok((s[..s.len() - 2].to_vec(), s[s.len() - 2], s[s.len() - 1]))
}

fn with(batch: &[usize], tail: &[usize]) -> Vec<usize> {
    batch.iter().chain(tail).copied().collect()
}

/// One result to write: its name, dtype, shape and buffer.
struct Out {
    name: &'static str,
    dtype: DType,
    shape: Vec<usize>,
    buf: Vec<u8>,
}

impl Out {
    fn new(name: &'static str, dtype: DType, shape: Vec<usize>) -> Outcome<Out> {
        let buf = new(dtype, &shape)?;
        Ok(Out {
            name,
            dtype,
            shape,
            buf,
        })
    }
    fn view(&mut self) -> Outcome<tessera::ArrayViewMut<'_>> {
        super::result_view(self.name, self.dtype, &self.shape, &mut self.buf)
    }
}

/// Run `which` as described by `call`; returns the lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    which: LinalgKernel,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = which.name();
    let (ops, _, attrs) = which.io();
    super::expect_attrs(k, &call.attrs, attrs)?;
    super::expect_names(k, "operand", &call.operands, ops)?;
    let vectors = match which {
        LinalgKernel::Eigh | LinalgKernel::Svd | LinalgKernel::Eig => {
            bool_attr(call, k, "vectors", true)?
        }
        _ => true,
    };
    let triangle = match which {
        LinalgKernel::Cholesky | LinalgKernel::SolveTriangular => {
            match choice(call, k, "triangle", &["lower", "upper"])? {
                "upper" => Triangle::Upper,
                _ => Triangle::Lower,
            }
        }
        _ => Triangle::Lower,
    };
    let complete = match which {
        LinalgKernel::Qr | LinalgKernel::Svd => {
            choice(call, k, "mode", &["reduced", "complete"])? == "complete"
        }
        _ => false,
    };
    let names: &[&str] = match which {
        LinalgKernel::Cholesky if triangle == Triangle::Upper => &["u"],
        LinalgKernel::Cholesky => &["l"],
        LinalgKernel::Eigh | LinalgKernel::Eig if !vectors => &["w"],
        LinalgKernel::Svd if !vectors => &["s"],
        _ => which.io().1,
    };
    super::expect_names(k, "result", &call.results, names)?;
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    let loaded: Vec<operand::Loaded> = ops
        .iter()
        .map(|n| operand::load(call_path, n, &call.operands.0[*n]))
        .collect::<Outcome<_>>()?;
    let views: Vec<ArrayView<'_>> = loaded
        .iter()
        .map(|x| whole_byte_view(k, x))
        .collect::<Outcome<_>>()?;
    let a = &views[0];
    let (real, cplx) = precision(k, a)?;
    let (batch, m, n) = split(k, a)?;
    let kk = m.min(n);
    let mut outs: Vec<Out> = Vec::new();
    match which {
        LinalgKernel::Cholesky => {
            outs.push(Out::new(names[0], a.dtype(), with(&batch, &[m, n]))?);
            let mut d = outs[0].view()?;
            linalg::cholesky(triangle, a, &mut d, exec).map_err(fail)?;
        }
        LinalgKernel::Lu => {
            outs.push(Out::new("lu", a.dtype(), with(&batch, &[m, n]))?);
            outs.push(Out::new("pivots", DType::I64, with(&batch, &[kk]))?);
            outs.push(Out::new("permutation", DType::I64, with(&batch, &[m]))?);
            let [o0, o1, o2] = &mut outs[..] else {
                unreachable!("three results")
            };
            linalg::lu(a, &mut o0.view()?, &mut o1.view()?, &mut o2.view()?, exec).map_err(fail)?;
        }
        LinalgKernel::Qr => {
            let qc = if complete { m } else { kk };
            outs.push(Out::new("q", a.dtype(), with(&batch, &[m, qc]))?);
            outs.push(Out::new("r", a.dtype(), with(&batch, &[qc, n]))?);
            let [q, r] = &mut outs[..] else {
                unreachable!("two results")
            };
            linalg::qr(a, &mut q.view()?, &mut r.view()?, exec).map_err(fail)?;
        }
        LinalgKernel::SolveTriangular => {
            let b = &views[1];
            let (bbatch, _, r) = split(k, b)?;
            let adjoint = bool_attr(call, k, "adjoint", false)?;
            let unit = bool_attr(call, k, "unit_diagonal", false)?;
            let lead = batch.len().max(bbatch.len());
            let mut xb = vec![1usize; lead];
            for (src, off) in [(&batch, lead - batch.len()), (&bbatch, lead - bbatch.len())] {
                for (i, &e) in src.iter().enumerate() {
                    if e != 1 {
                        xb[off + i] = e;
                    }
                }
            }
            outs.push(Out::new("x", a.dtype(), with(&xb, &[m, r]))?);
            linalg::solve_triangular(triangle, adjoint, unit, a, b, &mut outs[0].view()?, exec)
                .map_err(fail)?;
        }
        LinalgKernel::Eigh => {
            outs.push(Out::new("w", real, with(&batch, &[m]))?);
            if vectors {
                outs.push(Out::new("v", a.dtype(), with(&batch, &[m, n]))?);
            }
            let (w, rest) = outs.split_at_mut(1);
            let mut wv = w[0].view()?;
            match rest.first_mut() {
                Some(v) => linalg::eigh(a, &mut wv, Some(&mut v.view()?), exec),
                None => linalg::eigh(a, &mut wv, None, exec),
            }
            .map_err(fail)?;
        }
        LinalgKernel::Svd => {
            let (uc, vr) = if complete { (m, n) } else { (kk, kk) };
            outs.push(Out::new("s", real, with(&batch, &[kk]))?);
            if vectors {
                outs.push(Out::new("u", a.dtype(), with(&batch, &[m, uc]))?);
                outs.push(Out::new("vh", a.dtype(), with(&batch, &[vr, n]))?);
            }
            let (s, rest) = outs.split_at_mut(1);
            let mut sv = s[0].view()?;
            match rest {
                [u, vh] => linalg::svd(a, &mut sv, Some((&mut u.view()?, &mut vh.view()?)), exec),
                _ => linalg::svd(a, &mut sv, None, exec),
            }
            .map_err(fail)?;
        }
        LinalgKernel::Eig => {
            outs.push(Out::new("w", cplx, with(&batch, &[m]))?);
            if vectors {
                outs.push(Out::new("v", cplx, with(&batch, &[m, n]))?);
            }
            let (w, rest) = outs.split_at_mut(1);
            let mut wv = w[0].view()?;
            match rest.first_mut() {
                Some(v) => linalg::eig(a, &mut wv, Some(&mut v.view()?), exec),
                None => linalg::eig(a, &mut wv, None, exec),
            }
            .map_err(fail)?;
        }
    }
    let mut lines = Vec::new();
    for o in &outs {
        let path = results.add(o.name, o.dtype, &o.shape, &o.buf)?;
        lines.push(format!(
            "{k}: {} = {} {:?} -> {}",
            o.name,
            o.dtype,
            o.shape,
            path.display()
        ));
    }
    Ok(lines)
}
