//! `c2c`, `r2c` and `c2r` as calls: operand `x`, result `y`.
//!
//! ```json
//! {"kernel": "c2c", "attrs": {"axes": [0, 1], "direction": "inverse", "norm": "backward"},
//!  "operands": {"x": {"npy": "x.npy"}},
//!  "results": {"y": {"npy": "y.npy"}}}
//! ```
//!
//! `axes` (default: every axis) are strictly increasing; `direction`
//! (`forward`, the default, or `inverse`) is c2c's alone; `norm` is `none`
//! (the default: unscaled both ways), `backward` (the inverse scaled by 1/N),
//! `ortho` (both by 1/√N) or `forward` (the forward scaled by 1/N), N the
//! points along the axes. `y`'s dtype defaults to the transform's (c2c: x's;
//! r2c: the complex dtype of x's precision; c2r: the real one), its shape to
//! x's with, along the last of `axes`, `n/2 + 1` bins (r2c) or n points
//! (c2r: n from `y`'s `shape` where given, else `2·(bins − 1)`). Order,
//! bound and refusals are the library's (`tessera::fft`).

use super::{expect_attrs, expect_names, string_attr, whole_byte_view};
use crate::call::Call;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand;
use crate::results::Results;
use std::path::Path;
use tessera::fft::{Direction, Norm, Transform};
use tessera::{ArrayViewMut, DType, Exec};

/// Which transform a call names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FftKernel {
    /// `c2c`.
    C2c,
    /// `r2c`.
    R2c,
    /// `c2r`.
    C2r,
}

impl FftKernel {
    /// Every transform.
    pub const ALL: [FftKernel; 3] = [FftKernel::C2c, FftKernel::R2c, FftKernel::C2r];

    /// The kernel named `name`.
    pub fn from_name(name: &str) -> Option<FftKernel> {
        FftKernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Its name in call files.
    pub fn name(self) -> &'static str {
        match self {
            FftKernel::C2c => "c2c",
            FftKernel::R2c => "r2c",
            FftKernel::C2r => "c2r",
        }
    }

    /// The attributes it takes.
    pub fn attrs(self) -> &'static [&'static str] {
        match self {
            FftKernel::C2c => &["axes", "direction", "norm"],
            _ => &["axes", "norm"],
        }
    }

    /// What `tessera kernels` says of it.
    pub fn doc(self) -> &'static str {
        match self {
            FftKernel::C2c => "Complex Fourier transform (c64, c128) along each of axes, forward exp(-2 pi i jk/n) or inverse, \
unnormalised unless norm says; bits independent of layout, batch, threads and tier; |y - exact| <= eps u sqrt(N) |x| (tessera::fft::error_factor)",
            FftKernel::R2c => "Real-to-complex Fourier transform (f32 -> c64, f64 -> c128) along each of axes, bins 0..=n/2 along the last; n = 0 gives one bin of +0",
            FftKernel::C2r => "Complex-to-real inverse Fourier transform: reads n/2+1 bins along the last of axes; the real parts of the inverse of the Hermitian extension (imaginary parts of bins 0 and n/2 never contribute), for any operand",
        }
    }
}

fn axes_attr(k: &str, call: &Call, rank: usize) -> Outcome<Vec<usize>> {
    let Some(v) = call.attrs.0.get("axes") else {
        return Ok((0..rank).collect());
    };
    let bad = || {
        Failure::usage(format!(
            "kernel `{k}`: attribute axes must be a list of axis numbers, not {}",
            super::truncate(&v.to_string(), 40)
        ))
    };
    v.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|x| {
            x.as_u64()
                .and_then(|u| usize::try_from(u).ok())
                .ok_or_else(bad)
        })
        .collect()
}

/// Run the transform `which` as described by `call`; returns the lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    which: FftKernel,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = which.name();
    expect_attrs(k, &call.attrs, which.attrs())?;
    expect_names(k, "operand", &call.operands, &["x"])?;
    expect_names(k, "result", &call.results, &["y"])?;
    let (Some(x_spec), Some(y_spec)) = (call.operands.0.get("x"), call.results.0.get("y")) else {
        return Err(Failure::usage(format!(
            "kernel `{k}` needs operand x and result y"
        )));
    };
    let direction = match string_attr(k, &call.attrs, "direction")? {
        None | Some("forward") => Direction::Forward,
        Some("inverse") => Direction::Inverse,
        Some(s) => {
            return Err(Failure::usage(format!(
                "kernel `{k}`: attribute direction must be \"forward\" or \"inverse\", not \"{}\"",
                super::truncate(s, 40)
            )))
        }
    };
    let norm = match string_attr(k, &call.attrs, "norm")? {
        None | Some("none") => Norm::None,
        Some("backward") => Norm::Backward,
        Some("ortho") => Norm::Ortho,
        Some("forward") => Norm::Forward,
        Some(s) => {
            return Err(Failure::usage(format!(
                "kernel `{k}`: attribute norm must be \"none\", \"backward\", \"ortho\" or \"forward\", not \"{}\"",
                super::truncate(s, 40)
            )))
        }
    };
    let x = operand::load(call_path, "x", x_spec)?;
    let vx = whole_byte_view(k, &x)?;
    let axes = axes_attr(k, call, x.shape.len())?;
    let last = axes.last().copied();
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    let precision_of = |d: DType| match d {
        DType::F32 | DType::C64 => Some(false),
        DType::F64 | DType::C128 => Some(true),
        _ => None,
    };
    let (default_dtype, shape) = match which {
        FftKernel::C2c => (x.dtype, x.shape.clone()),
        FftKernel::R2c => {
            let mut s = x.shape.clone();
            if let Some(a) = last.filter(|&a| a < s.len()) {
                s[a] = s[a] / 2 + 1;
            }
            let d = match x.dtype {
                DType::F64 => DType::C128,
                _ => DType::C64,
            };
            (d, s)
        }
        FftKernel::C2r => {
            let mut s = x.shape.clone();
            if let Some(a) = last.filter(|&a| a < s.len()) {
                s[a] = match &y_spec.shape {
                    Some(ys) if ys.len() == s.len() => ys[a],
                    _ => 2 * s[a].saturating_sub(1),
                };
            }
            let d = match x.dtype {
                DType::C128 => DType::F64,
                _ => DType::F32,
            };
            (d, s)
        }
    };
    if let Some(s) = &y_spec.shape {
        if *s != shape {
            return Err(Failure::run(format!(
                "result y: shape {s:?} is not the transform's {shape:?}"
            )));
        }
    }
    let to = operand::dtype_name("result y", y_spec.dtype.as_deref())?.unwrap_or(default_dtype);
    let bytes = npy::byte_size(&shape, to.info().item_bytes)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    let mut out = operand::zeroed(bytes)?;
    let mut yv = ArrayViewMut::contiguous(to, &shape, &mut out)
        .map_err(|e| Failure::run(format!("result y: {e}")))?;
    let transform = match which {
        FftKernel::C2c => {
            tessera::fft::c2c(&axes, direction, norm, &vx, &mut yv, exec).map_err(fail)?;
            Transform::C2c
        }
        FftKernel::R2c => {
            tessera::fft::r2c(&axes, norm, &vx, &mut yv, exec).map_err(fail)?;
            Transform::R2c
        }
        FftKernel::C2r => {
            tessera::fft::c2r(&axes, norm, &vx, &mut yv, exec).map_err(fail)?;
            Transform::C2r
        }
    };
    drop(yv);
    let path = results.add("y", to, &shape, &out)?;
    let tier = exec.resolve_tier()?;
    let real_shape = if which == FftKernel::C2r {
        &shape
    } else {
        &x.shape
    };
    let lengths: Vec<usize> = axes.iter().map(|&a| real_shape[a]).collect();
    let eps = tessera::fft::error_factor(
        transform,
        &lengths,
        norm,
        precision_of(x.dtype).unwrap_or(false),
        direction,
    )
    .map_err(fail)?;
    Ok(vec![format!(
        "{k} along axes {axes:?} ({direction:?}, norm {norm:?}): y = {to} {shape:?} -> {} (tier {tier}, error factor {eps:.1})",
        path.display()
    )])
}
