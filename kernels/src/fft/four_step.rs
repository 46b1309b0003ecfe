//! Bailey's four steps for lines past the cache: `n = n₁·n₂`,
//!
//! ```text
//! X[k₁ + n₁·k₂] = Σ_{j₂} w_n^{j₂·k₁} · (Σ_{j₁} x[j₁·n₂ + j₂]·w_{n₁}^{j₁·k₁}) · w_{n₂}^{j₂·k₂}
//! ```
//!
//! 1. the n₂ columns (stride n₂) are gathered a block of 16 at a time and
//!    transformed (n₁ points each);
//! 2. each point is multiplied by its twiddle `w_n^{j₂·k₁}` into a matrix of
//!    n₁ rows of n₂ points;
//! 3. each row is transformed (n₂ points) in place;
//! 4. the matrix is transposed into the line.
//!
//! Every column and row is one sub-plan's line, computed the same way
//! whichever task or block takes it, so the bits do not depend on threads.
//!
//! From an operand apart from the result ([`FourStep::run_apart`]) the
//! matrix between the steps lives in the result instead of an n-point
//! scratch: the twiddled column transforms go to the result with column j₂
//! as its row j₂ (`y[j₂·n₁ + k₁]`), then each block of 16 of the row
//! transforms gathers its points at stride n₁, transforms them and puts
//! point k₂ of row k₁ at `y[k₂·n₁ + k₁]` = `X[k₁ + n₁·k₂]`, its place in the
//! result, so no transpose is left. The same sub-plans run on the same
//! values, so the bits are those of the in-place steps.

use super::butterflies::cmul;
use super::plan::{try_vec, FftPlan};
use super::simd::Simd;
use super::twiddle::RootTable;
use super::{Direction, FftFloat};
use crate::error::Result;
use num_complex::Complex;

/// Columns gathered together in step 1.
const BLOCK: usize = 16;

pub(crate) struct FourStep<T> {
    n1: usize,
    n2: usize,
    p1: FftPlan<T>,
    p2: FftPlan<T>,
    /// `tw[k₁·n₂ + j₂] = w_n^{j₂·k₁}`.
    tw: Vec<Complex<T>>,
}

use crate::scratch::SendPtr;

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
        for k1 in 0..n1 {
            for j2 in 0..n2 {
                tw.push(table.get::<T>((j2 * k1) % n, inverse));
            }
        }
        Ok(FourStep {
            n1,
            n2,
            p1: FftPlan::new(n1, dir)?,
            p2: FftPlan::new(n2, dir)?,
            tw,
        })
    }

    pub(crate) fn n1(&self) -> usize {
        self.n1
    }
    pub(crate) fn n2(&self) -> usize {
        self.n2
    }

    fn task_scratch(&self) -> usize {
        (BLOCK * self.n1 + self.p1.scratch_len()).max(self.p2.scratch_len())
    }

    pub(crate) fn scratch_len(&self, threads: usize) -> usize {
        self.n1 * self.n2 + threads.max(1) * self.task_scratch()
    }

    /// A task's points in [`FourStep::run_apart`]: a block of columns or of
    /// rows and its sub-plan's scratch.
    fn apart_task_scratch(&self) -> usize {
        (BLOCK * self.n1 + self.p1.scratch_len()).max(BLOCK * self.n2 + self.p2.scratch_len())
    }

    /// Scratch points of [`FourStep::run_apart`] on `threads` tasks (no
    /// matrix: it lives in the result).
    pub(crate) fn apart_scratch_len(&self, threads: usize) -> usize {
        threads.max(1) * self.apart_task_scratch()
    }

    /// The line `x` transformed into `y` (apart from it, both `n` points),
    /// the matrix between the steps kept in `y` (module documentation): the
    /// bits of [`FourStep::run`] on a copy of `x`. `scratch` holds at least
    /// one task's points; the tasks are as many of `threads` as it holds.
    pub(crate) fn run_apart(
        &self,
        x: &[Complex<T>],
        y: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
        simd: Simd,
        threads: usize,
    ) {
        let (n1, n2) = (self.n1, self.n2);
        let ts = self.apart_task_scratch();
        let threads = threads.max(1).min(scratch.len() / ts).max(1);
        // Steps 1 and 2: a block of 16 columns of x, transformed, twiddled
        // and written as 16 rows of n1 points of y.
        let col_block = |c0: usize, rows: &mut [Complex<T>], w: &mut [Complex<T>]| {
            let (buf, sub) = w.split_at_mut(BLOCK * n1);
            let cols = rows.len() / n1;
            for j1 in 0..n1 {
                let row = &x[j1 * n2 + c0..j1 * n2 + c0 + cols];
                for (c, &v) in row.iter().enumerate() {
                    buf[c * n1 + j1] = v;
                }
            }
            for c in 0..cols {
                self.p1
                    .run_line(&mut buf[c * n1..(c + 1) * n1], sub, simd, 1);
            }
            for (c, out) in rows.chunks_exact_mut(n1).enumerate() {
                for (k1, o) in out.iter_mut().enumerate() {
                    *o = cmul(buf[c * n1 + k1], self.tw[k1 * n2 + c0 + c]);
                }
            }
        };
        let blocks = n2.div_ceil(BLOCK);
        if threads == 1 {
            for (b, rows) in y.chunks_mut(BLOCK * n1).enumerate() {
                col_block(b * BLOCK, rows, &mut scratch[..ts]);
            }
        } else {
            use rayon::prelude::*;
            let per = blocks.div_ceil(threads);
            y.par_chunks_mut(per * BLOCK * n1)
                .zip(scratch.par_chunks_mut(ts))
                .enumerate()
                .for_each(|(t, (rows, w))| {
                    for (b, r) in rows.chunks_mut(BLOCK * n1).enumerate() {
                        col_block((t * per + b) * BLOCK, r, &mut w[..ts]);
                    }
                });
        }
        // Step 3: rows k1 of the matrix, at stride n1 in y, 16 at a time;
        // each result point to its place in the line.
        let yp = SendPtr(y.as_mut_ptr());
        let row_block = |k0: usize, w: &mut [Complex<T>]| {
            let (buf, sub) = w.split_at_mut(BLOCK * n2);
            let cnt = BLOCK.min(n1 - k0);
            for j2 in 0..n2 {
                for c in 0..cnt {
                    // SAFETY: j2·n1 + k0 + c < n2·n1 = y.len(); the points
                    // of columns k0..k0 + cnt belong to this block alone.
                    buf[c * n2 + j2] = unsafe { *yp.get().add(j2 * n1 + k0 + c) };
                }
            }
            for c in 0..cnt {
                self.p2
                    .run_line(&mut buf[c * n2..(c + 1) * n2], sub, simd, 1);
            }
            for k2 in 0..n2 {
                for c in 0..cnt {
                    // SAFETY: as above: inside y, and this block's alone.
                    unsafe { *yp.get().add(k2 * n1 + k0 + c) = buf[c * n2 + k2] };
                }
            }
        };
        let rblocks = n1.div_ceil(BLOCK);
        if threads == 1 {
            for b in 0..rblocks {
                row_block(b * BLOCK, &mut scratch[..ts]);
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
                        row_block(b * BLOCK, w);
                    }
                });
        }
    }

    pub(crate) fn error_factor(&self) -> f64 {
        self.p1.error_factor() + self.p2.error_factor() + 8.0
    }

    pub(crate) fn run(
        &self,
        line: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
        simd: Simd,
        threads: usize,
    ) {
        let (n1, n2) = (self.n1, self.n2);
        let n = n1 * n2;
        let (mat, work) = scratch.split_at_mut(n);
        let ts = self.task_scratch();
        let threads = threads.max(1).min(work.len() / ts).max(1);
        let mat_p = SendPtr(mat.as_mut_ptr());
        let line_r: &[Complex<T>] = line;
        // Steps 1 and 2: column blocks.
        let blocks = n2.div_ceil(BLOCK);
        let col_task = |b0: usize, b1: usize, w: &mut [Complex<T>]| {
            let (buf, sub) = w.split_at_mut(BLOCK * n1);
            for b in b0..b1 {
                let c0 = b * BLOCK;
                let cols = BLOCK.min(n2 - c0);
                for j1 in 0..n1 {
                    let row = &line_r[j1 * n2 + c0..j1 * n2 + c0 + cols];
                    for (c, &v) in row.iter().enumerate() {
                        buf[c * n1 + j1] = v;
                    }
                }
                for c in 0..cols {
                    self.p1
                        .run_line(&mut buf[c * n1..(c + 1) * n1], sub, simd, 1);
                }
                for k1 in 0..n1 {
                    let tw = &self.tw[k1 * n2 + c0..k1 * n2 + c0 + cols];
                    for c in 0..cols {
                        let v = cmul(buf[c * n1 + k1], tw[c]);
                        // SAFETY: column c0 + c of the matrix belongs to this
                        // block alone; the index is below n.
                        unsafe { *mat_p.get().add(k1 * n2 + c0 + c) = v };
                    }
                }
            }
        };
        let per = blocks.div_ceil(threads);
        if threads == 1 {
            col_task(0, blocks, &mut work[..ts]);
        } else {
            use rayon::prelude::*;
            work.par_chunks_mut(ts)
                .take(threads)
                .enumerate()
                .for_each(|(t, w)| col_task((t * per).min(blocks), ((t + 1) * per).min(blocks), w));
        }
        // Step 3: rows.
        let rows_per = n1.div_ceil(threads);
        if threads == 1 {
            for row in mat.chunks_exact_mut(n2) {
                self.p2.run_line(row, &mut work[..ts], simd, 1);
            }
        } else {
            use rayon::prelude::*;
            mat.par_chunks_mut(rows_per * n2)
                .zip(work.par_chunks_mut(ts))
                .for_each(|(rows, w)| {
                    for row in rows.chunks_exact_mut(n2) {
                        self.p2.run_line(row, w, simd, 1);
                    }
                });
        }
        // Step 4: transpose, in tiles.
        const TILE: usize = 32;
        let mat: &[Complex<T>] = mat;
        let tr = |k2_0: usize, out: &mut [Complex<T>]| {
            // `out` is line[k2_0·n1 ..], whole rows of n1 points (k2 fixed).
            let k2s = out.len() / n1;
            for kb in (0..n1).step_by(TILE) {
                let ke = (kb + TILE).min(n1);
                for k2 in 0..k2s {
                    for k1 in kb..ke {
                        out[k2 * n1 + k1] = mat[k1 * n2 + k2_0 + k2];
                    }
                }
            }
        };
        if threads == 1 {
            for (i, out) in line.chunks_mut(TILE * n1).enumerate() {
                tr(i * TILE, out);
            }
        } else {
            use rayon::prelude::*;
            line.par_chunks_mut(TILE * n1)
                .enumerate()
                .for_each(|(i, out)| tr(i * TILE, out));
        }
    }
}
