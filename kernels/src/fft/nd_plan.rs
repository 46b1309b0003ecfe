//! A transform along axes planned once: [`NdPlan`], the plan behind [`c2c`],
//! [`r2c`] and [`c2r`] (ARCHITECTURE.md §4, the plan convention).
//!
//! The plan holds the one-line plans of its passes (in the order `axes.rs`
//! states) and the shapes and dtypes it takes; a run builds the passes over
//! the views it is given (any layout) and runs them with the scratch a
//! [`Scratch`] lends: a C-order buffer of the operand's shape for a c2r of
//! several axes, then a region per task.

use super::axes::{self, LineOp, Pass, Side};
use super::plan::{self};
use super::real::RealFftPlan;
#[allow(unused_imports)] // the one-shot calls, named in the docs
use super::{c2c, c2r, r2c};
use super::{complex_of, real_of, simd, Direction, FftFloat, Norm, Transform};
use crate::array::{c_strides, ArrayView, ArrayViewMut, Layout};
use crate::checks::{check_destination, shape_err};
use crate::error::{Error, Result};
use crate::scratch::Scratch;
use crate::tier::Exec;
use crate::DType;
use num_complex::Complex;
use std::sync::Arc;

/// The line transforms of a plan's passes, in pass order, each with its axis.
#[derive(Clone)]
enum Lines {
    F32(Vec<(usize, LineOp<f32>)>),
    F64(Vec<(usize, LineOp<f64>)>),
}

/// A transform along `axes` of arrays of one shape and dtype, planned once
/// (no `exec`): the one-line plans of every pass, the shapes and dtypes it
/// takes and gives, and the scratch a run needs. [`NdPlan::run`] and
/// [`NdPlan::run_with_scratch`] take views of those shapes and dtypes in
/// any layout and give the bits of the one-shot call ([`c2c`], [`r2c`],
/// [`c2r`]), which is a thin wrapper over a plan. Cheap to clone (the line
/// plans are shared).
#[derive(Clone)]
pub struct NdPlan {
    transform: Transform,
    direction: Direction,
    norm: Norm,
    axes: Vec<usize>,
    input: (Vec<usize>, DType),
    output: (Vec<usize>, DType),
    lines: Lines,
}

impl std::fmt::Debug for NdPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NdPlan")
            .field("transform", &self.transform)
            .field("direction", &self.direction)
            .field("norm", &self.norm)
            .field("axes", &self.axes)
            .field("input", &self.input)
            .field("output", &self.output)
            .finish()
    }
}

fn unsupported(dtype: DType, reason: &str) -> Error {
    Error::DTypeUnsupported {
        operand: "x".into(),
        dtype,
        reason: reason.into(),
    }
}

/// `shape` with the last of `axes` holding `n/2 + 1` bins.
fn binned(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    let last = *axes.last().unwrap_or(&0);
    let mut s = shape.to_vec();
    s[last] = s[last] / 2 + 1;
    s
}

/// The operand's and the destination's (shape, dtype) that a `transform`
/// along `axes` planned from `shape` and `dtype` takes (the operand's for
/// c2c and r2c, the destination's for c2r, as the one-shot calls plan),
/// or the refusal of the axes or the dtype.
#[allow(clippy::type_complexity)]
fn expected(
    transform: Transform,
    axes: &[usize],
    shape: &[usize],
    dtype: DType,
) -> Result<((Vec<usize>, DType), (Vec<usize>, DType))> {
    match transform {
        Transform::C2c => {
            crate::checks::increasing_axes(axes, shape.len(), "c2c")?;
            if real_of(dtype).is_none() {
                return Err(unsupported(dtype, "c2c takes complex64 or complex128"));
            }
            Ok(((shape.to_vec(), dtype), (shape.to_vec(), dtype)))
        }
        Transform::R2c => {
            crate::checks::increasing_axes(axes, shape.len(), "r2c")?;
            let Some(cd) = complex_of(dtype) else {
                return Err(unsupported(dtype, "r2c takes f32 or f64"));
            };
            Ok(((shape.to_vec(), dtype), (binned(shape, axes), cd)))
        }
        Transform::C2r => {
            crate::checks::increasing_axes(axes, shape.len(), "c2r")?;
            let Some(rd) = real_of(dtype) else {
                return Err(unsupported(dtype, "c2r takes complex64 or complex128"));
            };
            Ok(((binned(shape, axes), dtype), (shape.to_vec(), rd)))
        }
    }
}

/// The views' shapes and dtypes against a plan's, in the order the calls
/// refuse them.
fn compare(
    input: (&[usize], DType),
    output: (&[usize], DType),
    x: (&[usize], DType),
    dst: (&[usize], DType),
) -> Result<()> {
    if x.1 != input.1 {
        return Err(Error::DTypeMismatch {
            operand: "x".into(),
            expected: input.1,
            got: x.1,
        });
    }
    if dst.1 != output.1 {
        return Err(Error::DTypeMismatch {
            operand: "destination".into(),
            expected: output.1,
            got: dst.1,
        });
    }
    if x.0 != input.0 {
        return Err(shape_err("x", x.0, input.0));
    }
    if dst.0 != output.0 {
        return Err(shape_err("destination", dst.0, output.0));
    }
    Ok(())
}

/// Whether the one-shot [`c2c`](super::c2c) (`transform` C2c),
/// [`r2c`](super::r2c) or [`c2r`](super::c2r) of an operand of shape and
/// dtype `x` along `axes` into a destination of shape and dtype `dst` fits,
/// decided from shapes and dtypes alone: no plan is built, nothing is
/// allocated or computed. `Ok` exactly where the call would run, but for
/// the destination's layout (one that reaches an element twice), the tier
/// and the allocation of the plan and its scratch, which need the views,
/// the `Exec` and the memory. Errors as the call's, in its order: the
/// axes, the operand's dtype, the destination's dtype, the operand's
/// shape, the destination's shape.
pub fn query(
    transform: Transform,
    axes: &[usize],
    x: (&[usize], DType),
    dst: (&[usize], DType),
) -> Result<()> {
    // The calls plan from the operand, but c2r from its destination's
    // shape (the real points) and the operand's dtype.
    let (input, output) = match transform {
        Transform::C2r => expected(transform, axes, dst.0, x.1)?,
        _ => expected(transform, axes, x.0, x.1)?,
    };
    compare((&input.0, input.1), (&output.0, output.1), x, dst)
}

impl NdPlan {
    /// The complex transform `direction` along `axes` of operands of `shape`
    /// and `dtype` (complex64 or complex128), into destinations of the same
    /// shape and dtype, scaled as `norm` says. Refuses what [`c2c`] refuses
    /// of axes and dtypes, and plans that cannot be allocated.
    pub fn c2c(
        axes: &[usize],
        direction: Direction,
        norm: Norm,
        shape: &[usize],
        dtype: DType,
    ) -> Result<NdPlan> {
        let _ = expected(Transform::C2c, axes, shape, dtype)?;
        fn lines<T: FftFloat>(
            axes: &[usize],
            shape: &[usize],
            dir: Direction,
        ) -> Result<Vec<(usize, LineOp<T>)>> {
            let mut v = Vec::new();
            if shape.contains(&0) {
                return Ok(v);
            }
            for &a in axes.iter().rev() {
                v.push((a, LineOp::C2c(plan::global().plan::<T>(shape[a], dir)?)));
            }
            Ok(v)
        }
        let lines = match dtype {
            DType::C64 => Lines::F32(lines::<f32>(axes, shape, direction)?),
            _ => Lines::F64(lines::<f64>(axes, shape, direction)?),
        };
        Ok(NdPlan {
            transform: Transform::C2c,
            direction,
            norm,
            axes: axes.to_vec(),
            input: (shape.to_vec(), dtype),
            output: (shape.to_vec(), dtype),
            lines,
        })
    }

    /// The forward real transform along `axes` of operands of `shape` and
    /// `dtype` (f32 or f64), into destinations of the complex dtype of that
    /// precision and `shape` with `n/2 + 1` bins along the last of `axes`,
    /// scaled as `norm` says. Refuses what [`r2c`] refuses of axes and
    /// dtypes, and plans that cannot be allocated.
    pub fn r2c(axes: &[usize], norm: Norm, shape: &[usize], dtype: DType) -> Result<NdPlan> {
        let (_, (out, cd)) = expected(Transform::R2c, axes, shape, dtype)?;
        fn lines<T: FftFloat>(
            axes: &[usize],
            xs: &[usize],
            ds: &[usize],
        ) -> Result<Vec<(usize, LineOp<T>)>> {
            let mut v = Vec::new();
            if ds.contains(&0) || xs.contains(&0) {
                return Ok(v);
            }
            let last = axes[axes.len() - 1];
            let r = RealFftPlan::<T>::new(xs[last], Direction::Forward)?;
            v.push((last, LineOp::R2c(Arc::new(r))));
            for &a in axes[..axes.len() - 1].iter().rev() {
                let p = plan::global().plan::<T>(ds[a], Direction::Forward)?;
                v.push((a, LineOp::C2c(p)));
            }
            Ok(v)
        }
        let lines = match dtype {
            DType::F32 => Lines::F32(lines::<f32>(axes, shape, &out)?),
            _ => Lines::F64(lines::<f64>(axes, shape, &out)?),
        };
        Ok(NdPlan {
            transform: Transform::R2c,
            direction: Direction::Forward,
            norm,
            axes: axes.to_vec(),
            input: (shape.to_vec(), dtype),
            output: (out, cd),
            lines,
        })
    }

    /// The inverse real transform along `axes` into destinations of `shape`
    /// (the real points) of the real dtype of `dtype`'s precision, from
    /// operands of `dtype` (complex64 or complex128) and `shape` with
    /// `n/2 + 1` bins along the last of `axes`, scaled as `norm` says.
    /// Refuses what [`c2r`] refuses of axes and dtypes, and plans that
    /// cannot be allocated.
    pub fn c2r(axes: &[usize], norm: Norm, shape: &[usize], dtype: DType) -> Result<NdPlan> {
        let ((input, _), (_, rd)) = expected(Transform::C2r, axes, shape, dtype)?;
        fn lines<T: FftFloat>(
            axes: &[usize],
            xs: &[usize],
            ds: &[usize],
        ) -> Result<Vec<(usize, LineOp<T>)>> {
            let mut v = Vec::new();
            if ds.contains(&0) {
                return Ok(v);
            }
            for &a in axes[..axes.len() - 1].iter().rev() {
                let p = plan::global().plan::<T>(xs[a], Direction::Inverse)?;
                v.push((a, LineOp::C2c(p)));
            }
            let last = axes[axes.len() - 1];
            let r = RealFftPlan::<T>::new(ds[last], Direction::Inverse)?;
            v.push((last, LineOp::C2r(Arc::new(r))));
            Ok(v)
        }
        let lines = match dtype {
            DType::C64 => Lines::F32(lines::<f32>(axes, &input, shape)?),
            _ => Lines::F64(lines::<f64>(axes, &input, shape)?),
        };
        Ok(NdPlan {
            transform: Transform::C2r,
            direction: Direction::Inverse,
            norm,
            axes: axes.to_vec(),
            input: (input, dtype),
            output: (shape.to_vec(), rd),
            lines,
        })
    }

    /// Which transform this is.
    pub fn transform(&self) -> Transform {
        self.transform
    }

    /// The operand's shape and dtype.
    pub fn input(&self) -> (&[usize], DType) {
        (&self.input.0, self.input.1)
    }

    /// The destination's shape and dtype.
    pub fn output(&self) -> (&[usize], DType) {
        (&self.output.0, self.output.1)
    }

    /// Bytes of scratch a run on one thread needs, for any layout and tier
    /// (a c2r of several axes' C-order buffer included). A run uses as many
    /// of its `exec`'s threads as its scratch holds regions for, and the bits
    /// are the same at any count. [`NdPlan::run`] allocates less where it
    /// can: a pass whose lines lie side by side in the operand and in the
    /// destination runs them straight from one into the other, and a
    /// four-step line (past [`super::FOUR_STEP_BYTES`]) keeps its matrix
    /// between the steps in the destination, so its scratch is a few
    /// blocks of columns instead of three times the line.
    pub fn scratch_bytes(&self) -> usize {
        self.bytes_for(1)
    }

    /// Bytes of scratch a run over these views on one thread needs: at most
    /// [`NdPlan::scratch_bytes`], less where a pass runs its lines straight
    /// from the operand into the destination (its lines side by side in
    /// both), and far less for a four-step line so run (its matrix between
    /// the steps kept in the destination). Views of other shapes or dtypes
    /// than the plan's get [`NdPlan::scratch_bytes`].
    pub fn scratch_bytes_for(&self, x: &ArrayView<'_>, dst: &ArrayViewMut<'_>) -> usize {
        if self.check(x, dst).is_err() {
            return self.scratch_bytes();
        }
        self.bytes_for_views(1, x.layout(), dst.layout())
    }

    /// Bytes of scratch a run on `threads` threads needs (buffer, then one
    /// region per task, each rounded to 64 bytes).
    fn bytes_for(&self, threads: usize) -> usize {
        fn need<T: FftFloat>(ops: &[(usize, LineOp<T>)], nd: &NdPlan, threads: usize) -> usize {
            if ops.is_empty() {
                return 0;
            }
            let point = core::mem::size_of::<Complex<T>>();
            let with_lines: Vec<(&LineOp<T>, usize, bool)> = ops
                .iter()
                .map(|(a, op)| {
                    // A pass's lines: the other axes of the side it runs on
                    // (the bins' shape but for an r2c's real pass).
                    let shape = match op {
                        LineOp::R2c(_) => &nd.input.0,
                        _ if nd.transform == Transform::C2r => &nd.input.0,
                        _ => &nd.output.0,
                    };
                    let lines = shape
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| i != *a)
                        .map(|(_, &e)| e)
                        .product::<usize>();
                    (op, lines, false)
                })
                .collect();
            let (tasks, units) = axes::task_need(&with_lines, threads);
            let region = (units * point).div_ceil(64) * 64;
            buffer_bytes(nd, point) + tasks * region
        }
        match &self.lines {
            Lines::F32(v) => need(v, self, threads),
            Lines::F64(v) => need(v, self, threads),
        }
    }

    /// Run on `x` into `dst` (the planned shapes and dtypes, any layouts),
    /// allocating the scratch of `exec`'s threads: the one-shot call's bits.
    /// Refuses, before any write, views of other shapes or dtypes, a
    /// destination that reaches an element twice, scratch that cannot be
    /// allocated and an unavailable tier.
    pub fn run(&self, x: &ArrayView<'_>, dst: &mut ArrayViewMut<'_>, exec: &Exec) -> Result<()> {
        self.check(x, dst)?;
        let need = self.bytes_for_views(exec.thread_count(), x.layout(), dst.layout());
        let mut scratch = Scratch::with_size(need)?;
        self.go(x, dst, &mut scratch, exec)
    }

    /// [`NdPlan::run`] with the buffers in the caller's `scratch`, grown
    /// (fallibly) to [`NdPlan::scratch_bytes_for`] these views where it is
    /// smaller (at most [`NdPlan::scratch_bytes`]); the run
    /// uses as many of `exec`'s threads as `scratch` holds regions for.
    pub fn run_with_scratch(
        &self,
        x: &ArrayView<'_>,
        dst: &mut ArrayViewMut<'_>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        self.check(x, dst)?;
        scratch.reserve(self.bytes_for_views(1, x.layout(), dst.layout()))?;
        self.go(x, dst, scratch, exec)
    }

    /// The views against the plan, before any write.
    fn check(&self, x: &ArrayView<'_>, dst: &ArrayViewMut<'_>) -> Result<()> {
        compare(
            (&self.input.0, self.input.1),
            (&self.output.0, self.output.1),
            (x.shape(), x.dtype()),
            (dst.shape(), dst.dtype()),
        )?;
        check_destination(dst)
    }

    fn go(
        &self,
        x: &ArrayView<'_>,
        dst: &mut ArrayViewMut<'_>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        let tier = exec.resolve_tier_for(crate::tier::Engine::Fft)?;
        // The most threads the scratch serves (the need grows with them).
        let mut threads = exec.thread_count().max(1);
        while threads > 1
            && self.bytes_for_views(threads, x.layout(), dst.layout()) > scratch.size()
        {
            threads -= 1;
        }
        let simd = simd::Simd::of(tier);
        match &self.lines {
            Lines::F32(v) => self.go_typed::<f32>(v, x, dst, scratch, simd, threads),
            Lines::F64(v) => self.go_typed::<f64>(v, x, dst, scratch, simd, threads),
        }
        Ok(())
    }

    /// The passes of a run over views of layouts `xl` and `dl` at `xb` and
    /// `db`, the c2r buffer at `tb` (null pointers: for sizing alone).
    #[allow(clippy::too_many_arguments)]
    fn passes<T: FftFloat>(
        &self,
        ops: &[(usize, LineOp<T>)],
        xl: &Layout,
        dl: &Layout,
        xb: *mut u8,
        db: *mut u8,
        tb: *mut u8,
        scale: Option<T>,
    ) -> Vec<Pass<T>> {
        let xs = &self.input.0;
        let ds = &self.output.0;
        let ts = c_strides(xs);
        match self.transform {
            Transform::C2c => ops
                .iter()
                .enumerate()
                .map(|(i, (a, op))| Pass {
                    op: op.clone(),
                    other_shape: others(xs, *a),
                    src: if i == 0 {
                        side(xb, &xl.strides, xl.offset, *a)
                    } else {
                        side(db, &dl.strides, dl.offset, *a)
                    },
                    dst: side(db, &dl.strides, dl.offset, *a),
                    apart: i == 0,
                    scale: if i + 1 == ops.len() { scale } else { None },
                })
                .collect(),
            Transform::R2c => ops
                .iter()
                .enumerate()
                .map(|(i, (a, op))| Pass {
                    op: op.clone(),
                    other_shape: others(if i == 0 { xs } else { ds }, *a),
                    src: if i == 0 {
                        side(xb, &xl.strides, xl.offset, *a)
                    } else {
                        side(db, &dl.strides, dl.offset, *a)
                    },
                    dst: side(db, &dl.strides, dl.offset, *a),
                    apart: i == 0,
                    scale: if i + 1 == ops.len() { scale } else { None },
                })
                .collect(),
            Transform::C2r => {
                let k = ops.len() - 1;
                ops.iter()
                    .enumerate()
                    .map(|(i, (a, op))| {
                        let src = if i == 0 {
                            side(xb, &xl.strides, xl.offset, *a)
                        } else {
                            side(tb, &ts, 0, *a)
                        };
                        let to = if i < k {
                            side(tb, &ts, 0, *a)
                        } else {
                            side(db, &dl.strides, dl.offset, *a)
                        };
                        Pass {
                            op: op.clone(),
                            other_shape: others(xs, *a),
                            src,
                            dst: to,
                            apart: i == 0 || i == k,
                            scale: if i == k { scale } else { None },
                        }
                    })
                    .collect()
            }
        }
    }

    /// Bytes of scratch a run over views of layouts `xl` and `dl` on
    /// `threads` threads needs: [`NdPlan::bytes_for`]'s but where a pass
    /// runs its lines directly from the operand into the destination (no
    /// block buffers; a four-step line's matrix in the destination).
    fn bytes_for_views(&self, threads: usize, xl: &Layout, dl: &Layout) -> usize {
        fn need<T: FftFloat>(
            nd: &NdPlan,
            ops: &[(usize, LineOp<T>)],
            threads: usize,
            xl: &Layout,
            dl: &Layout,
        ) -> usize {
            if ops.is_empty() || nd.output.0.contains(&0) {
                return 0;
            }
            let null = core::ptr::null_mut();
            let passes = nd.passes::<T>(ops, xl, dl, null, null, null, None);
            let point = core::mem::size_of::<Complex<T>>();
            let (tasks, units) = axes::task_need(&axes::pass_need(&passes), threads);
            buffer_bytes(nd, point) + tasks * (units * point).div_ceil(64) * 64
        }
        match &self.lines {
            Lines::F32(v) => need(self, v, threads, xl, dl),
            Lines::F64(v) => need(self, v, threads, xl, dl),
        }
    }

    fn go_typed<T: FftFloat>(
        &self,
        ops: &[(usize, LineOp<T>)],
        x: &ArrayView<'_>,
        dst: &mut ArrayViewMut<'_>,
        scratch: &mut Scratch,
        simd: simd::Simd,
        threads: usize,
    ) {
        let (xs, ds) = (&self.input.0, &self.output.0);
        if ds.contains(&0) {
            return;
        }
        if ops.is_empty() {
            // An r2c of zero points along its last axis: one bin of +0.
            zero_fill::<T>(dst);
            return;
        }
        let n_points = match self.transform {
            Transform::C2r => points(ds, &self.axes),
            _ => points(xs, &self.axes),
        };
        let scale = norm_scale::<T>(self.norm, n_points, self.direction);
        let xl = x.layout().clone();
        let dl = dst.layout().clone();
        let xb = x.data().as_ptr() as *mut u8;
        let db = dst.data_mut().as_mut_ptr();
        let point = core::mem::size_of::<Complex<T>>();
        let base = scratch.as_mut_ptr();
        let buf_bytes = buffer_bytes(self, point);
        // The c2r buffer (a C-order complex array of the operand's shape)
        // at the start of the scratch.
        let passes = self.passes::<T>(ops, &xl, &dl, xb, db, base, scale);
        let (tasks, units) = axes::task_need(&axes::pass_need(&passes), threads);
        let region = (units * point).div_ceil(64) * 64;
        let mut regions: Vec<&mut [Complex<T>]> = (0..tasks)
            .map(|t| {
                // SAFETY: the scratch holds `bytes_for_views(threads, ..)`
                // bytes of these layouts, at least the buffer and `tasks`
                // regions of `region` bytes (64-byte aligned, so aligned for
                // `Complex<T>`), disjoint from each other and from the
                // buffer; every bit pattern is a valid pair of floats, and
                // the scratch is borrowed mutably for the run.
                unsafe {
                    core::slice::from_raw_parts_mut(
                        base.add(buf_bytes + t * region) as *mut Complex<T>,
                        units,
                    )
                }
            })
            .collect();
        // SAFETY: the passes were built from validated views (every line
        // inside its bytes) and the buffer (a C-order array of the operand's
        // shape inside the scratch, apart from the task regions); the
        // destination reaches no element twice, an in-place pass reads only
        // the lines it writes, and a pass marked apart reads the operand
        // (borrowed apart from the destination) or the buffer (apart from
        // the destination).
        unsafe { axes::run(&passes, &mut regions, simd, threads) };
    }
}

/// Bytes of a c2r of several axes' buffer (rounded to 64), else 0.
fn buffer_bytes(nd: &NdPlan, point: usize) -> usize {
    if nd.transform == Transform::C2r && nd.axes.len() > 1 {
        (nd.input.0.iter().product::<usize>() * point).div_ceil(64) * 64
    } else {
        0
    }
}

/// The side of a view along `axis`.
fn side(base: *mut u8, strides: &[isize], offset: usize, axis: usize) -> Side {
    Side {
        base,
        offset: offset as isize,
        step: strides[axis],
        others: strides
            .iter()
            .enumerate()
            .filter(|&(a, _)| a != axis)
            .map(|(_, &s)| s)
            .collect(),
    }
}

fn others(shape: &[usize], axis: usize) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter(|&(a, _)| a != axis)
        .map(|(_, &e)| e)
        .collect()
}

fn points(shape: &[usize], axes: &[usize]) -> usize {
    axes.iter().map(|&a| shape[a]).product()
}

fn norm_scale<T: FftFloat>(norm: Norm, n: usize, dir: Direction) -> Option<T> {
    norm.scale(n, dir).map(T::from_f64)
}

fn zero_fill<T: FftFloat>(dst: &mut ArrayViewMut<'_>) {
    let l = dst.layout().clone();
    let base = dst.data_mut().as_mut_ptr() as *mut Complex<T>;
    let rank = l.shape.len();
    let mut idx = vec![0usize; rank];
    let count: usize = l.shape.iter().product();
    for _ in 0..count {
        let off = l.offset as isize
            + idx
                .iter()
                .zip(&l.strides)
                .map(|(&i, &s)| i as isize * s)
                .sum::<isize>();
        // SAFETY: the validated layout addresses this element inside the bytes.
        unsafe {
            base.offset(off)
                .write_unaligned(Complex::new(T::ZERO, T::ZERO))
        };
        for a in (0..rank).rev() {
            idx[a] += 1;
            if idx[a] < l.shape[a] {
                break;
            }
            idx[a] = 0;
        }
    }
}
