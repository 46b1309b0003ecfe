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
//! place, step 1 reads the line, the matrix lives in an n-point scratch, and
//! step 3 writes each point to its place in the line (no copy back). Every
//! column and row is one sub-plan's line, computed the same way whichever
//! task, block or layout takes it, so the bits do not depend on threads or
//! on whether the call ran in place.

use super::butterflies::cmul;
use super::plan::{try_vec, FftPlan};
use super::simd::{with_simd, Simd};
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
/// [`TILE`] values of j at a time (their rows' pointers held, the count a
/// constant but for the last), so each source row is read along `lines`
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
    while j0 + TILE <= len {
        // SAFETY: rows j0..j0 + TILE start inside `src` (the contract).
        let rows: [*const T; TILE] =
            core::array::from_fn(|j| unsafe { src.add((j0 + j) * stride) });
        for c in 0..lines {
            let out: &mut [T; TILE] = (&mut dst[c * ld + j0..c * ld + j0 + TILE])
                .try_into()
                .expect("a tile");
            for (o, r) in out.iter_mut().zip(rows) {
                // SAFETY: (j0 + j)·stride + c is inside `src` (the contract).
                *o = unsafe { *r.add(c) };
            }
        }
        j0 += TILE;
    }
    for c in 0..lines {
        for j in j0..len {
            // SAFETY: j·stride + c is inside `src` (the contract).
            dst[c * ld + j] = unsafe { *src.add(j * stride + c) };
        }
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
    while j0 + TILE <= len {
        // SAFETY: rows j0..j0 + TILE start inside `dst` (the contract).
        let rows: [*mut T; TILE] = core::array::from_fn(|j| unsafe { dst.add((j0 + j) * stride) });
        for c in 0..lines {
            let from: &[T; TILE] = (&src[c * ld + j0..c * ld + j0 + TILE])
                .try_into()
                .expect("a tile");
            for (&v, r) in from.iter().zip(rows) {
                // SAFETY: (j0 + j)·stride + c is inside `dst` (the contract).
                unsafe { *r.add(c) = v };
            }
        }
        j0 += TILE;
    }
    for c in 0..lines {
        for j in j0..len {
            // SAFETY: j·stride + c is inside `dst` (the contract).
            unsafe { *dst.add(j * stride + c) = src[c * ld + j] };
        }
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

    /// The line transformed in place: step 1 reads it, the matrix between
    /// the steps lives in the front of `scratch` (n points), and step 3
    /// writes each point to its place in the line (no copy back).
    /// `scratch` holds n points and at least one task's; the tasks are as
    /// many of `threads` as it holds.
    pub(crate) fn run(
        &self,
        line: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
        simd: Simd,
        threads: usize,
    ) {
        let (matrix, work) = scratch.split_at_mut(self.n1 * self.n2);
        let p = line.as_mut_ptr();
        // SAFETY: `line` holds n points and is this call's alone; the matrix
        // is apart from it.
        unsafe { self.steps(p, matrix.as_mut_ptr(), p, work, simd, threads) }
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
        let yp = y.as_mut_ptr();
        // SAFETY: both hold n points; `y` is apart from `x` and this call's.
        unsafe { self.steps(x.as_ptr(), yp, yp, scratch, simd, threads) }
    }

    /// The steps: the columns of `x` transformed, twiddled and written as
    /// the rows of the matrix `m`; then the rows of `m`'s transpose
    /// transformed and written to their places in `y`. `y` may be `x` (in
    /// place: step 1 has read all of `x` before step 3 writes) or `m`
    /// (apart: each block of step 3 reads and writes the same columns of
    /// `m`, its own); `m` is apart from `x`. Steps 1 and 3's loops are
    /// compiled for `simd`'s instructions (the same operations: Rust never
    /// fuses a product into a sum).
    ///
    /// # Safety
    /// `x`, `m` and `y` each address n = n₁·n₂ points, readable (`x`, `m`)
    /// and writable (`m`, `y`), that nothing else touches during the call;
    /// `m` overlaps neither `x` nor, unless it is `y`, `y`.
    unsafe fn steps(
        &self,
        x: *const Complex<T>,
        m: *mut Complex<T>,
        y: *mut Complex<T>,
        scratch: &mut [Complex<T>],
        simd: Simd,
        threads: usize,
    ) {
        let (n1, n2, cb, rb) = (self.n1, self.n2, self.cb, self.rb);
        let (ld1, ld2) = (padded::<T>(n1), padded::<T>(n2));
        let ts = self.task_scratch();
        let threads = threads.max(1).min(scratch.len() / ts).max(1);
        let (xp, mp, yp) = (SendPtr(x as *mut Complex<T>), SendPtr(m), SendPtr(y));
        // Steps 1 and 2: a block of columns of x, transformed, twiddled and
        // written as rows of n1 points of m.
        let col_block = |c0: usize, rows: &mut [Complex<T>], w: &mut [Complex<T>]| {
            let cols = rows.len() / n1;
            let (buf, sub) = w.split_at_mut((cols - 1) * ld1 + n1);
            // SAFETY: the columns c0..c0 + cols of x's n1 rows of n2 points:
            // (n1 − 1)·n2 + c0 + cols ≤ n1·n2 points from x[c0] (the
            // contract), which step 1 only reads.
            with_simd(
                simd,
                #[inline(always)]
                || unsafe { gather(xp.get().add(c0) as *const _, n2, n1, cols, buf, ld1) },
            );
            for c in 0..cols {
                self.p1
                    .run_line(&mut buf[c * ld1..c * ld1 + n1], sub, simd, 1);
            }
            let tw = &self.tw[c0 * n1..(c0 + cols) * n1];
            with_simd(
                simd,
                #[inline(always)]
                || {
                    for ((out, col), tw) in rows
                        .chunks_exact_mut(n1)
                        .zip(buf.chunks(ld1))
                        .zip(tw.chunks_exact(n1))
                    {
                        for ((o, &v), &t) in out.iter_mut().zip(col).zip(tw) {
                            *o = cmul(v, t);
                        }
                    }
                },
            );
        };
        {
            // SAFETY: `m` addresses n writable points apart from `x`, this
            // call's alone (the contract); the slice ends before step 3.
            let mat = unsafe { core::slice::from_raw_parts_mut(mp.get(), n1 * n2) };
            let blocks = n2.div_ceil(cb);
            if threads == 1 {
                for (b, rows) in mat.chunks_mut(cb * n1).enumerate() {
                    col_block(b * cb, rows, &mut scratch[..ts]);
                }
            } else {
                use rayon::prelude::*;
                let per = blocks.div_ceil(threads);
                mat.par_chunks_mut(per * cb * n1)
                    .zip(scratch.par_chunks_mut(ts))
                    .enumerate()
                    .for_each(|(t, (rows, w))| {
                        for (b, r) in rows.chunks_mut(cb * n1).enumerate() {
                            col_block((t * per + b) * cb, r, &mut w[..ts]);
                        }
                    });
            }
        }
        // Step 3: rows k1 of the matrix, at stride n1 in m, a block at a
        // time; each result point to its place in y.
        let row_block = |k0: usize, w: &mut [Complex<T>]| {
            let cnt = rb.min(n1 - k0);
            let (buf, sub) = w.split_at_mut((cnt - 1) * ld2 + n2);
            // SAFETY: the columns k0..k0 + cnt of m's n2 rows of n1 points,
            // inside m ((n2 − 1)·n1 + k0 + cnt ≤ n2·n1); those columns (of
            // m, and of y where it is m) are this block's alone.
            with_simd(
                simd,
                #[inline(always)]
                || unsafe { gather(mp.get().add(k0) as *const _, n1, n2, cnt, buf, ld2) },
            );
            for c in 0..cnt {
                self.p2
                    .run_line(&mut buf[c * ld2..c * ld2 + n2], sub, simd, 1);
            }
            // SAFETY: the same columns of y, inside it, this block's alone;
            // where y is x, step 1 has read all of x.
            with_simd(
                simd,
                #[inline(always)]
                || unsafe { scatter(buf, ld2, n2, cnt, yp.get().add(k0), n1) },
            );
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
