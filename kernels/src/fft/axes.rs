//! The multi-axis driver: transforms along each named axis of arrays of any
//! layout and batch.
//!
//! A pass along one axis takes the lines of that axis (every index of the
//! other axes, numbered in C order), gathers up to 16 consecutive lines into
//! contiguous buffers, runs the one-line transform on each, and scatters the
//! results. Lines are split among rayon tasks in contiguous ranges; a single
//! long line (Bailey's four steps) gives its tasks to the line's columns and
//! rows instead. Each line is computed by the same operations whatever its
//! position, the buffer it shares, the layout or the task, so no bit depends
//! on them.
//!
//! Order of the passes: c2c runs its axes from the last named to the first,
//! the first pass reading the operand and writing the destination, the others
//! in place in the destination; r2c runs the real pass along the last named
//! axis first, then forward c2c passes along the others, last to first; c2r
//! runs inverse c2c passes along the other axes, last to first, the first of
//! them from the operand into a C-order complex buffer of the operand's shape,
//! then the c2r pass along the last named axis into the destination. A
//! normalised transform multiplies each result of its final pass by the
//! scale (`1/N` or `1/√N`, computed in f64 and rounded once).

use super::plan::FftPlan;
use super::real::RealFftPlan;
use super::simd::Simd;
use super::FftFloat;
use num_complex::Complex;
use std::sync::Arc;

/// Lines per gathered block.
const BLOCK: usize = 16;
/// Fewer points than this in a pass run on the calling thread.
const PARALLEL_POINTS: usize = 1 << 15;

/// An element type of a line: `T` or `Complex<T>`.
pub(crate) trait Elem<T>: Copy + Send + Sync + 'static {
    /// Parts of `T` per element.
    const PARTS: usize;
}
impl<T: FftFloat> Elem<T> for T {
    const PARTS: usize = 1;
}
impl<T: FftFloat> Elem<T> for Complex<T> {
    const PARTS: usize = 2;
}

/// Split `count` elements of `S` off the front of complex storage.
pub(crate) fn carve<T: FftFloat, S: Elem<T>>(
    buf: &mut [Complex<T>],
    count: usize,
) -> (&mut [S], &mut [Complex<T>]) {
    let units = (count * S::PARTS).div_ceil(2);
    let (a, b) = buf.split_at_mut(units);
    // SAFETY: `Complex<T>` is `repr(C)` of two `T`s, so `units` complex points
    // are at least `count` elements of `S` (`T` or `Complex<T>`, of the same
    // alignment), all of them initialised plain floats.
    let s = unsafe { core::slice::from_raw_parts_mut(a.as_mut_ptr() as *mut S, count) };
    (s, b)
}

/// Where the lines of a pass are: a base pointer, the offset of element 0,
/// the step along the axis and the strides of the other axes (elements).
#[derive(Clone)]
pub(crate) struct Side {
    pub base: *mut u8,
    pub offset: isize,
    pub step: isize,
    pub others: Vec<isize>,
}

// SAFETY: a side is only dereferenced by the tasks of a pass, each on its own
// lines (see `Ptr`).
unsafe impl Send for Side {}
// SAFETY: sharing a side only copies its pointer and strides: each task of a
// pass dereferences it on its own lines alone (see `Ptr`).
unsafe impl Sync for Side {}

/// The one-line transform of a pass.
#[derive(Clone)]
pub(crate) enum LineOp<T> {
    C2c(Arc<FftPlan<T>>),
    R2c(Arc<RealFftPlan<T>>),
    C2r(Arc<RealFftPlan<T>>),
}

impl<T: FftFloat> LineOp<T> {
    fn n_in(&self) -> usize {
        match self {
            LineOp::C2c(p) => p.len(),
            LineOp::R2c(p) => p.len(),
            LineOp::C2r(p) => p.bins(),
        }
    }
    fn n_out(&self) -> usize {
        match self {
            LineOp::C2c(p) => p.len(),
            LineOp::R2c(p) => p.bins(),
            LineOp::C2r(p) => p.len(),
        }
    }
    fn in_parts(&self) -> usize {
        if matches!(self, LineOp::R2c(_)) {
            1
        } else {
            2
        }
    }
    fn out_parts(&self) -> usize {
        if matches!(self, LineOp::C2r(_)) {
            1
        } else {
            2
        }
    }
    /// Scratch of one line on `inner` tasks; `apart`: a complex line read
    /// from an operand apart from its result (run by `run_line_apart`).
    fn scratch_for(&self, inner: usize, apart: bool) -> usize {
        match self {
            LineOp::C2c(p) if apart => p.scratch_apart_for(inner),
            LineOp::C2c(p) => p.scratch_for(inner),
            LineOp::R2c(p) | LineOp::C2r(p) => p.scratch_for(inner),
        }
    }
}

/// One pass: the transform, the other axes' extents and the two sides.
pub(crate) struct Pass<T> {
    pub op: LineOp<T>,
    pub other_shape: Vec<usize>,
    pub src: Side,
    pub dst: Side,
    /// The source is another array than the destination (the operand, or
    /// a c2r's buffer): no element of it is a destination element.
    pub apart: bool,
    /// Multiply each result by this (a normalised transform's final pass).
    pub scale: Option<T>,
}

/// Lines per gathered block of a pass of `op`: 1 where both sides' lines
/// are side by side (`unit_steps`; copied whole, one at a time stays in L1),
/// else as many as fit 16384 points, at most [`BLOCK`].
fn block_of<T: FftFloat>(op: &LineOp<T>, unit_steps: bool) -> usize {
    if unit_steps {
        return 1;
    }
    let n = op.n_in().max(op.n_out()).max(1);
    (16384 / n).clamp(1, BLOCK)
}

/// How a pass of `lines` lines of `op` splits its work on `threads`:
/// (tasks over lines, tasks inside a line).
fn split_of<T: FftFloat>(op: &LineOp<T>, lines: usize, threads: usize) -> (usize, usize) {
    let points = lines.saturating_mul(op.n_in().max(op.n_out()));
    if threads <= 1 || points < PARALLEL_POINTS {
        (1, 1)
    } else if lines == 1 {
        (1, threads)
    } else {
        (threads.min(lines), 1)
    }
}

/// Complex points of scratch one task of such a pass needs; `direct`: a
/// pass from an operand apart from its destination whose lines are side by
/// side on both sides (each line runs from the operand straight into the
/// destination, no block buffers).
fn units_of<T: FftFloat>(op: &LineOp<T>, lines: usize, threads: usize, direct: bool) -> usize {
    let (_, inner) = split_of(op, lines, threads);
    if direct {
        return op.scratch_for(inner, true);
    }
    let b = block_of(op, false);
    (b * op.n_in() * op.in_parts()).div_ceil(2)
        + (b * op.n_out() * op.out_parts()).div_ceil(2)
        + op.scratch_for(inner, false)
}

/// The tasks and the complex points per task that passes of `ops` (each with
/// its lines, and whether it is direct: see [`units_of`]) need on
/// `threads`. With no pass direct, the need of any layout (the gathered
/// block at its largest): what a plan sizes its scratch by before it sees
/// a view.
pub(crate) fn task_need<T: FftFloat>(
    ops: &[(&LineOp<T>, usize, bool)],
    threads: usize,
) -> (usize, usize) {
    let tasks = ops
        .iter()
        .map(|&(op, lines, _)| split_of(op, lines, threads).0)
        .max()
        .unwrap_or(1);
    let units = ops
        .iter()
        .map(|&(op, lines, direct)| units_of(op, lines, threads, direct))
        .max()
        .unwrap_or(0);
    (tasks, units)
}

/// What [`task_need`] takes of each pass: its op, its lines and whether it
/// runs direct (apart, lines side by side on both sides).
pub(crate) fn pass_need<T: FftFloat>(passes: &[Pass<T>]) -> Vec<(&LineOp<T>, usize, bool)> {
    passes
        .iter()
        .map(|p| (&p.op, p.lines(), p.direct()))
        .collect()
}

impl<T: FftFloat> Pass<T> {
    /// Every line from the source straight into the destination.
    fn direct(&self) -> bool {
        self.apart && self.unit_steps()
    }
    fn lines(&self) -> usize {
        self.other_shape.iter().product()
    }
    fn unit_steps(&self) -> bool {
        self.src.step == 1 && self.dst.step == 1
    }
    fn block(&self) -> usize {
        block_of(&self.op, self.unit_steps())
    }
    /// How the pass splits its work: (tasks over lines, tasks inside a line).
    fn split(&self, threads: usize) -> (usize, usize) {
        split_of(&self.op, self.lines(), threads)
    }
}

#[derive(Clone, Copy)]
struct Ptr(*mut u8);
// SAFETY: tasks share the pointers of a pass, each reading and writing only
// its own lines, which no other task reaches (a destination reaches no element
// twice; the operand is only read).
unsafe impl Send for Ptr {}
// SAFETY: sharing one only copies the address: each task reads and writes
// through it only its own lines, which no other task reaches.
unsafe impl Sync for Ptr {}

impl Ptr {
    fn get(self) -> *mut u8 {
        self.0
    }
}

/// Run the passes in order; `scratch` holds a region per task of at least
/// the points [`task_need`] gives for the passes on `threads`.
///
/// # Safety
/// Each side's pointer, offset, step and strides must address valid elements
/// of its type for every line; a destination must reach no element twice and
/// overlap no source but its own lines (an in-place pass), and none of the
/// source of a pass marked `apart`.
pub(crate) unsafe fn run<T: FftFloat>(
    passes: &[Pass<T>],
    scratch: &mut [&mut [Complex<T>]],
    simd: Simd,
    threads: usize,
) {
    for pass in passes {
        match (pass.op.in_parts(), pass.op.out_parts()) {
            // SAFETY: the sides address valid elements of this pass's types
            // (complex in, complex out) for every line, and the destination
            // reaches no element twice (this function's contract).
            (2, 2) => unsafe {
                run_pass::<T, Complex<T>, Complex<T>>(pass, scratch, simd, threads)
            },
            // SAFETY: the sides address valid elements of this pass's types
            // (real in, complex out) for every line, and the destination
            // reaches no element twice (this function's contract).
            (1, 2) => unsafe { run_pass::<T, T, Complex<T>>(pass, scratch, simd, threads) },
            // SAFETY: the sides address valid elements of this pass's types
            // (complex in, real out) for every line, and the destination
            // reaches no element twice (this function's contract).
            _ => unsafe { run_pass::<T, Complex<T>, T>(pass, scratch, simd, threads) },
        }
    }
}

fn scale_c<T: FftFloat>(z: Complex<T>, s: Option<T>) -> Complex<T> {
    match s {
        Some(s) => Complex::new(z.re * s, z.im * s),
        None => z,
    }
}

/// One pass: every line's transform, from the source side (elements `S`) to
/// the destination side (elements `D`), on up to `threads` tasks over
/// disjoint lines.
///
/// # Safety
/// Each side's pointer, offset, step and strides must address valid
/// elements of its type (`S` for the source, `D` for the destination) for
/// every line; the destination must reach no element twice and overlap no
/// source but its own lines (an in-place pass), and none of the source of a
/// pass marked `apart`.
#[allow(clippy::needless_range_loop)] // the block's lines index three arrays
unsafe fn run_pass<T: FftFloat, S: Elem<T>, D: Elem<T>>(
    pass: &Pass<T>,
    scratch: &mut [&mut [Complex<T>]],
    simd: Simd,
    threads: usize,
) {
    let lines = pass.lines();
    if lines == 0 {
        return;
    }
    let (tasks, inner) = pass.split(threads);
    let n_in = pass.op.n_in();
    let n_out = pass.op.n_out();
    let b = pass.block();
    let (sp, dp) = (Ptr(pass.src.base), Ptr(pass.dst.base));
    let per = lines.div_ceil(tasks);
    let task = |t: usize, buf: &mut [Complex<T>]| {
        let (l0, l1) = ((t * per).min(lines), ((t + 1) * per).min(lines));
        if l0 >= l1 {
            return;
        }
        // A direct pass gives the whole region to its lines' scratch (its
        // sizing counts no block buffers); the others carve the buffers first.
        let direct = pass.direct();
        let (inb, rest) = carve::<T, S>(buf, if direct { 0 } else { b * n_in });
        let (outb, work) = carve::<T, D>(rest, if direct { 0 } else { b * n_out });
        // The other axes' index of line l0, and the two offsets.
        let rank = pass.other_shape.len();
        let mut idx = vec![0usize; rank];
        let mut rem = l0;
        for a in (0..rank).rev() {
            let e = pass.other_shape[a];
            idx[a] = rem % e;
            rem /= e;
        }
        let off = |side: &Side, idx: &[usize]| -> isize {
            side.offset
                + idx
                    .iter()
                    .zip(&side.others)
                    .map(|(&i, &s)| i as isize * s)
                    .sum::<isize>()
        };
        let mut l = l0;
        let mut so = [0isize; BLOCK];
        let mut dof = [0isize; BLOCK];
        while l < l1 {
            let cnt = b.min(l1 - l);
            for c in 0..cnt {
                so[c] = off(&pass.src, &idx);
                dof[c] = off(&pass.dst, &idx);
                for a in (0..rank).rev() {
                    idx[a] += 1;
                    if idx[a] < pass.other_shape[a] {
                        break;
                    }
                    idx[a] = 0;
                }
            }
            let src = sp.get() as *const S;
            let dst = dp.get() as *mut D;
            // Lines side by side on both sides (one per block): each runs in
            // the destination itself, or reads the operand where it is, with
            // no copies through the block buffers. A direct pass's sides are
            // apart, so its lines always run here.
            if cnt == 1
                && pass.src.step == 1
                && pass.dst.step == 1
                // SAFETY: the caller's promise: the line's elements are valid and
                // side by side on both sides, the destination's this task's alone.
                && unsafe {
                    direct_line::<T, S, D>(
                        &pass.op,
                        src.offset(so[0]),
                        dst.offset(dof[0]),
                        work,
                        simd,
                        inner,
                        pass.scale,
                    )
                }
            {
                l += 1;
                continue;
            }
            // A direct pass carved no block buffers: its sides never overlap
            // (the caller's promise), so its lines never come here.
            assert!(!direct, "an apart pass's sides overlap");
            if pass.src.step == 1 {
                for c in 0..cnt {
                    // SAFETY: the caller's promise: line c's n_in elements are
                    // valid elements of S, side by side; `inb` is apart from them.
                    unsafe {
                        crate::copy::copy_bytes(
                            src.offset(so[c]) as *const u8,
                            inb.as_mut_ptr().add(c * n_in) as *mut u8,
                            n_in * core::mem::size_of::<S>(),
                        )
                    };
                }
            } else {
                for j in 0..n_in {
                    let js = j as isize * pass.src.step;
                    for c in 0..cnt {
                        // SAFETY: the caller's promise: every line's elements are
                        // valid elements of S.
                        inb[c * n_in + j] = unsafe { src.offset(so[c] + js).read_unaligned() };
                    }
                }
            }
            for c in 0..cnt {
                apply_line::<T, S, D>(
                    &pass.op,
                    Some(&inb[c * n_in..(c + 1) * n_in]),
                    &mut outb[c * n_out..(c + 1) * n_out],
                    work,
                    simd,
                    inner,
                    pass.scale,
                );
            }
            if pass.dst.step == 1 {
                for c in 0..cnt {
                    // SAFETY: the caller's promise: this task's lines alone,
                    // each of n_out elements side by side, apart from `outb`.
                    unsafe {
                        crate::copy::copy_bytes(
                            outb.as_ptr().add(c * n_out) as *const u8,
                            dst.offset(dof[c]) as *mut u8,
                            n_out * core::mem::size_of::<D>(),
                        )
                    };
                }
            } else {
                for j in 0..n_out {
                    let js = j as isize * pass.dst.step;
                    for c in 0..cnt {
                        // SAFETY: the caller's promise: this task's lines alone.
                        unsafe { dst.offset(dof[c] + js).write_unaligned(outb[c * n_out + j]) };
                    }
                }
            }
            l += cnt;
        }
    };
    if tasks == 1 {
        task(0, &mut *scratch[0]);
    } else {
        use rayon::prelude::*;
        scratch[..tasks]
            .par_iter_mut()
            .enumerate()
            .for_each(|(t, buf)| task(t, buf));
    }
}

/// One line of `op` whose elements lie side by side at `src` and at `dst`,
/// computed without the block buffers by [`apply_line`]: the operand is read
/// where it lies, or (an in-place complex pass, `src` = `dst`) the line is
/// already in the destination. False (nothing written) where the two sides
/// overlap otherwise, which the block path handles.
///
/// # Safety
/// `src` addresses `op.n_in()` valid elements of `S` and `dst` `op.n_out()`
/// of `D`, no other task's.
#[allow(clippy::too_many_arguments)]
unsafe fn direct_line<T: FftFloat, S: Elem<T>, D: Elem<T>>(
    op: &LineOp<T>,
    src: *const S,
    dst: *mut D,
    work: &mut [Complex<T>],
    simd: Simd,
    inner: usize,
    scale: Option<T>,
) -> bool {
    let (n_in, n_out) = (op.n_in(), op.n_out());
    let (a0, a1) = (
        src as usize,
        src as usize + n_in * core::mem::size_of::<S>(),
    );
    let (b0, b1) = (
        dst as usize,
        dst as usize + n_out * core::mem::size_of::<D>(),
    );
    let in_place = a0 == b0 && matches!(op, LineOp::C2c(_));
    if !in_place && a1 > b0 && b1 > a0 {
        return false;
    }
    // SAFETY: the caller's promise: the destination's n_out elements, this
    // task's alone.
    let y = unsafe { core::slice::from_raw_parts_mut(dst, n_out) };
    // SAFETY: the caller's promise: the operand's n_in elements, apart from
    // the destination (checked) unless the line is already there.
    let x = (!in_place).then(|| unsafe { core::slice::from_raw_parts(src, n_in) });
    apply_line(op, x, y, work, simd, inner, scale);
    true
}

/// One line of `op` into `y`, scaled: from `x`, or (a complex line, `x`
/// None) in place in `y`. A complex line from `x` runs by
/// `run_line_apart` (copied into `y` and transformed there, or a four-step
/// line with its matrix in `y`); a real line reads `x` and writes `y`.
fn apply_line<T: FftFloat, S: Elem<T>, D: Elem<T>>(
    op: &LineOp<T>,
    x: Option<&[S]>,
    y: &mut [D],
    work: &mut [Complex<T>],
    simd: Simd,
    inner: usize,
    scale: Option<T>,
) {
    // The element types are fixed by the op (checked by `run`): reinterpret.
    let operand = || x.expect("a real line reads its operand");
    match op {
        LineOp::C2c(p) => {
            let y = as_c::<T, D>(y);
            match x {
                Some(x) => p.run_line_apart(retype::<S, Complex<T>>(x), y, work, simd, inner),
                None => p.run_line(y, work, simd, inner),
            }
            scale_all(y, scale);
        }
        LineOp::R2c(p) => {
            let y = as_c::<T, D>(y);
            p.r2c_line(retype::<S, T>(operand()), y, work, simd, inner);
            scale_all(y, scale);
        }
        LineOp::C2r(p) => {
            let y = as_r::<T, D>(y);
            p.c2r_line(retype::<S, Complex<T>>(operand()), y, work, simd, inner);
            if let Some(s) = scale {
                for o in y.iter_mut() {
                    *o = *o * s;
                }
            }
        }
    }
}

/// Every point of `y` times `scale`, where given.
fn scale_all<T: FftFloat>(y: &mut [Complex<T>], scale: Option<T>) {
    if scale.is_some() {
        for o in y.iter_mut() {
            *o = scale_c(*o, scale);
        }
    }
}

/// `x` read as elements of `U`, the same type as `S` (the op fixes both).
fn retype<S: Copy, U: Copy>(x: &[S]) -> &[U] {
    assert_eq!(core::mem::size_of::<S>(), core::mem::size_of::<U>());
    assert_eq!(core::mem::align_of::<S>(), core::mem::align_of::<U>());
    // SAFETY: S and U are the same float or complex type (checked by size and
    // alignment; the op fixes which), so the bytes are valid elements of U.
    unsafe { core::slice::from_raw_parts(x.as_ptr() as *const U, x.len()) }
}

fn as_c<T: FftFloat, S: Elem<T>>(x: &mut [S]) -> &mut [Complex<T>] {
    assert_eq!(S::PARTS, 2);
    // SAFETY: S has two parts, so it is `Complex<T>` (the only such `Elem`).
    unsafe { core::slice::from_raw_parts_mut(x.as_mut_ptr() as *mut Complex<T>, x.len()) }
}

fn as_r<T: FftFloat, S: Elem<T>>(x: &mut [S]) -> &mut [T] {
    assert_eq!(S::PARTS, 1);
    // SAFETY: S has one part, so it is `T` (the only such `Elem`).
    unsafe { core::slice::from_raw_parts_mut(x.as_mut_ptr() as *mut T, x.len()) }
}
