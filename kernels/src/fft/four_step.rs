//! Bailey's four steps for lines past the cache: `n = n₁·n₂`,
//!
//! ```text
//! X[k₁ + n₁·k₂] = Σ_{j₂} w_n^{j₂·k₁} · (Σ_{j₁} x[j₁·n₂ + j₂]·w_{n₁}^{j₁·k₁}) · w_{n₂}^{j₂·k₂}
//! ```
//!
//! From the operand `x` into the result `y` (apart):
//!
//! 1. the n₂ columns of `x` (stride n₂) are gathered a block at a time and
//!    transformed (n₁ points each);
//! 2. each point is multiplied by its twiddle `w_n^{j₂·k₁}` and column j₂
//!    written as row j₂ of `y` (`y[j₂·n₁ + k₁]`): the matrix between the
//!    steps lives in the result;
//! 3. the rows k₁ of that matrix (stride n₁ in `y`) are gathered a block at
//!    a time, transformed (n₂ points each), and point k₂ of row k₁ put at
//!    `y[k₂·n₁ + k₁]` = `X[k₁ + n₁·k₂]`, its place in the result, so no
//!    transpose is left.
//!
//! Gathers and scatters go eight strided lines at a time into blocks whose
//! lines start a cache line apart (a padded leading dimension), so a
//! power-of-two stride does not pile every access onto one cache set. In
//! place, the line is the operand and an n-point scratch the result, copied
//! back. Every column and row is one sub-plan's line, computed the same way
//! whichever task, block or layout takes it, so the bits do not depend on
//! threads or on whether the call ran in place.

use super::butterflies::cmul;
use super::plan::{try_vec, FftPlan};
use super::simd::Simd;
use super::twiddle::RootTable;
use super::{Direction, FftFloat};
use crate::error::Result;
use num_complex::Complex;

/// The bytes of a block of gathered columns (or rows, read at a stride):
/// enough neighbours per strided line that each cache line and page
/// touched serves many points, within a core's L2.
const BLOCK_BYTES: usize = 1 << 19;

/// Strided lines moved together by a gather or scatter.
const TILE: usize = 8;

/// Lines of `len` points of `T` per gathered block: [`BLOCK_BYTES`] of
/// them, 16 to 256 (the bits do not depend on it: each line is transformed
/// alone).
fn block_lines<T>(len: usize) -> usize {
    (BLOCK_BYTES / (len.max(1) * core::mem::size_of::<Complex<T>>())).clamp(16, 256)
}

/// The padded leading dimension of a block of lines of `len` points: one
/// 64-byte line more, so consecutive lines fall in different cache sets.
fn padded<T>(len: usize) -> usize {
    len + 64 / core::mem::size_of::<Complex<T>>()
}

pub(crate) struct FourStep<T> {
    n1: usize,
    n2: usize,
    p1: FftPlan<T>,
    p2: FftPlan<T>,
    /// `tw[j₂·n₁ + k₁] = w_n^{j₂·k₁}` (read in the order step 2 writes).
    tw: Vec<Complex<T>>,
    /// Columns (of n₁ points) per gathered block.
    cb: usize,
    /// Rows (of n₂ points) per gathered block.
    rb: usize,
}

use crate::scratch::SendPtr;

/// Copy `lines` strided lines into a block: `dst[c·ld + j] = src(j, c)`
/// for j < `len`, c < `lines`, where `src(j, c)` is `src[j·stride + c]`;
/// eight values of j at a time, so each source row is read along `lines`
/// neighbours and each block line written eight points at a time.
///
/// # Safety
/// `src` addresses `(len − 1)·stride + lines` readable points; `dst` holds
/// `(lines − 1)·ld + len` points.
#[inline(always)]
unsafe fn gather<T: Copy>(
    src: *const T,
    stride: usize,
    len: usize,
    lines: usize,
    dst: &mut [T],
    ld: usize,
) {
    let mut j0 = 0;
    while j0 < len {
        let t = TILE.min(len - j0);
        for c in 0..lines {
            let out = &mut dst[c * ld + j0..c * ld + j0 + t];
            for (j, o) in out.iter_mut().enumerate() {
                // SAFETY: (j0 + j)·stride + c is inside `src` (the contract).
                *o = unsafe { *src.add((j0 + j) * stride + c) };
            }
        }
        j0 += t;
    }
}

/// The inverse of [`gather`]: `dst[j·stride + c] = src[c·ld + j]`.
///
/// # Safety
/// `dst` addresses `(len − 1)·stride + lines` writable points no one else
/// touches meanwhile; `src` holds `(lines − 1)·ld + len` points.
#[inline(always)]
unsafe fn scatter<T: Copy>(
    src: &[T],
    ld: usize,
    len: usize,
    lines: usize,
    dst: *mut T,
    stride: usize,
) {
    let mut j0 = 0;
    while j0 < len {
        let t = TILE.min(len - j0);
        for c in 0..lines {
            let from = &src[c * ld + j0..c * ld + j0 + t];
            for (j, &v) in from.iter().enumerate() {
                // SAFETY: (j0 + j)·stride + c is inside `dst` (the contract).
                unsafe { *dst.add((j0 + j) * stride + c) = v };
            }
        }
        j0 += t;
    }
}

impl<T: FftFloat> FourStep<T> {
    pub(crate) fn new(n1: usize, n2: usize, inverse: bool) -> Result<Self> {
        let n = n1 * n2;
        let dir = if inverse {
            Direction::Inverse
        } else {
            Direction::Forward
        };
        let table = RootTable::new(n, T::TWIDDLE_DD)?;
        let mut tw = try_vec(n, "four-step twiddles")?;
        for j2 in 0..n2 {
            for k1 in 0..n1 {
                tw.push(table.get::<T>((j2 * k1) % n, inverse));
            }
        }
        Ok(FourStep {
            n1,
            n2,
            p1: FftPlan::new(n1, dir)?,
            p2: FftPlan::new(n2, dir)?,
            tw,
            cb: block_lines::<T>(n1),
            rb: block_lines::<T>(n2),
        })
    }

    pub(crate) fn n1(&self) -> usize {
        self.n1
    }
    pub(crate) fn n2(&self) -> usize {
        self.n2
    }

    /// A task's points: a block of columns or of rows (padded) and its
    /// sub-plan's scratch.
    fn task_scratch(&self) -> usize {
        let cols = (self.cb - 1) * padded::<T>(self.n1) + self.n1 + self.p1.scratch_len();
        let rows = (self.rb - 1) * padded::<T>(self.n2) + self.n2 + self.p2.scratch_len();
        cols.max(rows)
    }

    /// Scratch points of [`FourStep::run`] (in place) on `threads` tasks:
    /// the result of the steps, then the tasks'.
    pub(crate) fn scratch_len(&self, threads: usize) -> usize {
        self.n1 * self.n2 + self.apart_scratch_len(threads)
    }

    /// Scratch points of [`FourStep::run_apart`] on `threads` tasks (no
    /// matrix: it lives in the result).
    pub(crate) fn apart_scratch_len(&self, threads: usize) -> usize {
        threads.max(1) * self.task_scratch()
    }

    pub(crate) fn error_factor(&self) -> f64 {
        self.p1.error_factor() + self.p2.error_factor() + 8.0
    }

    /// The line transformed in place: the steps into the front of
    /// `scratch` (n points), then copied back. `scratch` holds n points and
    /// at least one task's; the tasks are as many of `threads` as it holds.
    pub(crate) fn run(
        &self,
        line: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
        simd: Simd,
        threads: usize,
    ) {
        let (out, work) = scratch.split_at_mut(self.n1 * self.n2);
        self.run_apart(line, out, work, simd, threads);
        crate::copy::copy_slice(line, out);
    }

    /// The line `x` transformed into `y` (apart from it, both `n` points),
    /// the matrix between the steps kept in `y` (module documentation).
    /// `scratch` holds at least one task's points; the tasks are as many of
    /// `threads` as it holds.
    pub(crate) fn run_apart(
        &self,
        x: &[Complex<T>],
        y: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
        simd: Simd,
        threads: usize,
    ) {
        let (n1, n2, cb, rb) = (self.n1, self.n2, self.cb, self.rb);
        let (ld1, ld2) = (padded::<T>(n1), padded::<T>(n2));
        let ts = self.task_scratch();
        let threads = threads.max(1).min(scratch.len() / ts).max(1);
        // Steps 1 and 2: a block of columns of x, transformed, twiddled and
        // written as rows of n1 points of y.
        let col_block = |c0: usize, rows: &mut [Complex<T>], w: &mut [Complex<T>]| {
            let cols = rows.len() / n1;
            let (buf, sub) = w.split_at_mut((cols - 1) * ld1 + n1);
            // SAFETY: the columns c0..c0 + cols of x's n1 rows of n2 points:
            // (n1 − 1)·n2 + c0 + cols ≤ n1·n2 = x.len() points from x[c0].
            unsafe { gather(x.as_ptr().add(c0), n2, n1, cols, buf, ld1) };
            for c in 0..cols {
                self.p1
                    .run_line(&mut buf[c * ld1..c * ld1 + n1], sub, simd, 1);
            }
            for (c, out) in rows.chunks_exact_mut(n1).enumerate() {
                let tw = &self.tw[(c0 + c) * n1..(c0 + c + 1) * n1];
                let col = &buf[c * ld1..c * ld1 + n1];
                for ((o, &v), &t) in out.iter_mut().zip(col).zip(tw) {
                    *o = cmul(v, t);
                }
            }
        };
        let blocks = n2.div_ceil(cb);
        if threads == 1 {
            for (b, rows) in y.chunks_mut(cb * n1).enumerate() {
                col_block(b * cb, rows, &mut scratch[..ts]);
            }
        } else {
            use rayon::prelude::*;
            let per = blocks.div_ceil(threads);
            y.par_chunks_mut(per * cb * n1)
                .zip(scratch.par_chunks_mut(ts))
                .enumerate()
                .for_each(|(t, (rows, w))| {
                    for (b, r) in rows.chunks_mut(cb * n1).enumerate() {
                        col_block((t * per + b) * cb, r, &mut w[..ts]);
                    }
                });
        }
        // Step 3: rows k1 of the matrix, at stride n1 in y, a block at a
        // time; each result point to its place in the line.
        let yp = SendPtr(y.as_mut_ptr());
        let row_block = |k0: usize, w: &mut [Complex<T>]| {
            let cnt = rb.min(n1 - k0);
            let (buf, sub) = w.split_at_mut((cnt - 1) * ld2 + n2);
            // SAFETY: the columns k0..k0 + cnt of y's n2 rows of n1 points,
            // inside y ((n2 − 1)·n1 + k0 + cnt ≤ n2·n1); those columns belong
            // to this block alone.
            unsafe { gather(yp.get().add(k0) as *const _, n1, n2, cnt, buf, ld2) };
            for c in 0..cnt {
                self.p2
                    .run_line(&mut buf[c * ld2..c * ld2 + n2], sub, simd, 1);
            }
            // SAFETY: as above: the same points of y, this block's alone.
            unsafe { scatter(buf, ld2, n2, cnt, yp.get().add(k0), n1) };
        };
        let rblocks = n1.div_ceil(rb);
        if threads == 1 {
            for b in 0..rblocks {
                row_block(b * rb, &mut scratch[..ts]);
            }
        } else {
            use rayon::prelude::*;
            let per = rblocks.div_ceil(threads);
            scratch
                .par_chunks_mut(ts)
                .take(threads)
                .enumerate()
                .for_each(|(t, w)| {
                    for b in (t * per).min(rblocks)..((t + 1) * per).min(rblocks) {
                        row_block(b * rb, w);
                    }
                });
        }
    }
}
