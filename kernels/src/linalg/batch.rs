//! The batch around every routine: the leading axes of each operand and
//! destination, broadcast against one another, and the copy of each matrix
//! into (and out of) a column-major working buffer. Every routine computes
//! on that buffer alone, so a matrix's bits depend on its values, never on
//! its layout, its place in the batch or the threads.

use crate::array::{ArrayView, ArrayViewMut, Element};
use crate::error::{Error, Result};
use crate::linalg::field::Field;
use crate::linalg::lanes::LANES;
use crate::scratch::SendPtr;
use tessera_generated::runtime::loops::prefetch_lines;

/// The batch shape the leading axes of `ops` (name, shape, trailing matrix
/// rank 2 or 1) broadcast to: extents equal or 1 (numpy's rule, aligned at
/// the right). Refuses a rank below the matrix rank ([`Error::Rank`]) and
/// extents that do not broadcast ([`Error::Shape`]).
pub(crate) fn broadcast_batch(ops: &[(&str, &[usize], usize)]) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = Vec::new();
    for &(name, shape, rank) in ops {
        if shape.len() < rank {
            return Err(Error::Rank {
                operand: name.into(),
                shape: shape.to_vec(),
                expected: format!("at least {rank} axes (the batch, then the matrix)"),
            });
        }
        let lead = &shape[..shape.len() - rank];
        if lead.len() > out.len() {
            let mut grown = vec![1; lead.len() - out.len()];
            grown.extend_from_slice(&out);
            out = grown;
        }
        let skip = out.len() - lead.len();
        for (i, &e) in lead.iter().enumerate() {
            let o = &mut out[skip + i];
            if *o == 1 {
                *o = e;
            } else if e != 1 && e != *o {
                return Err(Error::Shape {
                    operand: name.into(),
                    shape: shape.to_vec(),
                    target: out.clone(),
                });
            }
        }
    }
    Ok(out)
}

/// The element offset of each batch index (C order over `batch`) of an
/// operand of `shape`/`strides`/`offset` whose last `rank` axes are its
/// matrix: its leading axes broadcast to `batch` (stride 0 where its extent
/// is 1 or the axis is missing).
fn batch_offsets(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    rank: usize,
    batch: &[usize],
) -> Result<Vec<isize>> {
    let count = crate::array::extent_product(batch.iter().copied());
    let mut v = crate::alloc::try_vec(count, "batch offsets")?;
    if count == 0 {
        return Ok(v);
    }
    let lead = shape.len() - rank;
    let skip = batch.len() - lead;
    let eff: Vec<isize> = (0..batch.len())
        .map(|i| {
            if i < skip || shape[i - skip] == 1 {
                0
            } else {
                strides[i - skip]
            }
        })
        .collect();
    let mut idx = vec![0usize; batch.len()];
    let mut pos = offset as isize;
    for _ in 0..count {
        v.push(pos);
        for ax in (0..batch.len()).rev() {
            idx[ax] += 1;
            pos += eff[ax];
            if idx[ax] < batch[ax] {
                break;
            }
            pos -= eff[ax] * batch[ax] as isize;
            idx[ax] = 0;
        }
    }
    Ok(v)
}

/// Refuse `x` unless its dtype is `T`'s.
pub(crate) fn check_dtype<T: Field>(name: &str, got: crate::DType) -> Result<()> {
    if got != T::DTYPE {
        return Err(Error::DTypeMismatch {
            operand: name.into(),
            expected: T::DTYPE,
            got,
        });
    }
    Ok(())
}

/// Refuse a destination whose shape is not `batch` then `tail` exactly.
pub(crate) fn check_shape(
    name: &str,
    shape: &[usize],
    batch: &[usize],
    tail: &[usize],
) -> Result<()> {
    let want: Vec<usize> = batch.iter().chain(tail).copied().collect();
    if shape != want.as_slice() {
        return Err(Error::Shape {
            operand: name.into(),
            shape: shape.to_vec(),
            target: want,
        });
    }
    Ok(())
}

/// The matrices (or vectors) of a read operand, by batch index.
pub(crate) struct Mats<'a> {
    data: &'a [u8],
    offsets: Vec<isize>,
    /// Rows (the vector's length for a vector operand).
    pub rows: usize,
    /// Columns (1 for a vector operand).
    pub cols: usize,
    rs: isize,
    cs: isize,
}

impl<'a> Mats<'a> {
    /// The matrices (`rank` 2) or vectors (`rank` 1) of a validated view,
    /// broadcast over `batch`.
    pub(crate) fn new(x: &ArrayView<'a>, rank: usize, batch: &[usize]) -> Result<Self> {
        let l = x.layout();
        let r = l.shape.len();
        let (rows, cols, rs, cs) = if rank == 2 {
            (
                l.shape[r - 2],
                l.shape[r - 1],
                l.strides[r - 2],
                l.strides[r - 1],
            )
        } else {
            (l.shape[r - 1], 1, l.strides[r - 1], 0)
        };
        Ok(Mats {
            data: x.data(),
            offsets: batch_offsets(&l.shape, &l.strides, l.offset, rank, batch)?,
            rows,
            cols,
            rs,
            cs,
        })
    }

    /// The same matrices read transposed (rows and columns swapped).
    pub(crate) fn transposed(mut self) -> Self {
        std::mem::swap(&mut self.rows, &mut self.cols);
        std::mem::swap(&mut self.rs, &mut self.cs);
        self
    }

    /// The same matrices read with their rows (and, where `columns`, their
    /// columns) in the opposite order.
    pub(crate) fn reversed(mut self, columns: bool) -> Self {
        let shift = |o: &mut isize, n: usize, s: isize| *o += n.saturating_sub(1) as isize * s;
        for o in &mut self.offsets {
            shift(o, self.rows, self.rs);
            if columns {
                shift(o, self.cols, self.cs);
            }
        }
        self.rs = -self.rs;
        if columns {
            self.cs = -self.cs;
        }
        self
    }

    /// Matrices `first..first + count` (`count` ≤ [`LANES`], at least one)
    /// into `x` lane by lane, column-major (`x[i + j·rows][l]` is element
    /// (i, j) of matrix `first + l`); lanes past `count` repeat the first
    /// matrix.
    pub(crate) fn read_lanes<T: Field>(&self, first: usize, count: usize, x: &mut [[T; LANES]]) {
        let (rows, cols) = (self.rows, self.cols);
        if rows == 0 || cols == 0 || count == 0 {
            return;
        }
        let x = &mut x[..rows * cols];
        let mut bases = [0isize; LANES];
        for (l, b) in bases.iter_mut().enumerate() {
            *b = self.offsets[first + l.min(count - 1)];
            self.assert_inside::<T>(*b);
        }
        let p = self.data.as_ptr() as *const T;
        let mut one = |i: usize, j: usize| {
            let at = i as isize * self.rs + j as isize * self.cs;
            x[i + j * rows] = std::array::from_fn(|l| {
                // SAFETY: element (i, j) of a matrix whose reach was asserted
                // inside the view, of T's dtype (checked by the caller);
                // `read_unaligned` takes any alignment.
                unsafe { p.offset(bases[l] + at).read_unaligned() }
            });
        };
        // In the order of the source's memory where its rows are contiguous.
        if self.cs.unsigned_abs() == 1 {
            for i in 0..rows {
                for j in 0..cols {
                    one(i, j);
                }
            }
        } else {
            for j in 0..cols {
                for i in 0..rows {
                    one(i, j);
                }
            }
        }
        // The next group's lines, while this group is worked on.
        self.prefetch_group::<T>(first + LANES);
    }

    /// Asks for the cache lines of matrices `first..first + LANES` (those
    /// that exist): the next lane group arrives while this one is worked
    /// on. A hint only.
    fn prefetch_group<T>(&self, first: usize) {
        let (rows, cols, rs, cs) = (self.rows, self.cols, self.rs, self.cs);
        let near = self.offsets.iter().skip(first).take(LANES);
        prefetch_matrices::<T>(self.data.as_ptr(), near, (rows, cols, rs, cs));
    }

    /// Panics unless every element of the matrix at `base` lies in the
    /// validated view.
    fn assert_inside<T>(&self, base: isize) {
        let (rows, cols) = (self.rows as isize, self.cols as isize);
        let last = base + (rows - 1) * self.rs.max(0) + (cols - 1) * self.cs.max(0);
        let first = base + (rows - 1) * self.rs.min(0) + (cols - 1) * self.cs.min(0);
        assert!(
            first >= 0 && (last as usize + 1) * size_of::<T>() <= self.data.len(),
            "a matrix outside its validated view"
        );
    }

    /// Matrix `b` into `out` column-major (`out[i + j·rows]`).
    pub(crate) fn read<T: Field>(&self, b: usize, out: &mut [T]) {
        let (rows, cols) = (self.rows, self.cols);
        if rows == 0 || cols == 0 {
            return;
        }
        let out = &mut out[..rows * cols];
        // Every position the matrix reaches lies in the validated view.
        let base = self.offsets[b];
        self.assert_inside::<T>(base);
        let p = self.data.as_ptr() as *const T;
        if self.cs == 1 && self.rs != 1 {
            // Rows contiguous: eight elements of a row at a time, into
            // eight columns.
            let mut j0 = 0;
            while j0 + 8 <= cols {
                // Tiles of 8 × 8: eight row pieces in, eight column pieces
                // out, each a whole run of eight elements.
                let mut i0 = 0;
                while i0 + 8 <= rows {
                    for l in 0..8 {
                        let o = i0 + (j0 + l) * rows;
                        let piece = &mut out[o..o + 8];
                        for (r, x) in piece.iter_mut().enumerate() {
                            let at = base + (i0 + r) as isize * self.rs + (j0 + l) as isize;
                            // SAFETY: element (i0 + r, j0 + l) lies at `at`,
                            // inside the view (asserted above), of T's dtype.
                            *x = unsafe { p.offset(at).read_unaligned() };
                        }
                    }
                    i0 += 8;
                }
                for i in i0..rows {
                    let at = base + i as isize * self.rs + j0 as isize;
                    // SAFETY: elements (i, j0..j0 + 8) lie at at..at + 8,
                    // inside the view (asserted above), of T's dtype.
                    let v = unsafe { (p.offset(at) as *const [T; 8]).read_unaligned() };
                    for (l, x) in v.into_iter().enumerate() {
                        out[i + (j0 + l) * rows] = x;
                    }
                }
                j0 += 8;
            }
            for j in j0..cols {
                for i in 0..rows {
                    let at = base + i as isize * self.rs + j as isize;
                    // SAFETY: as above, one element.
                    out[i + j * rows] = unsafe { p.offset(at).read_unaligned() };
                }
            }
            return;
        }
        tiles(rows, cols, self.rs, self.cs, |i, j| {
            let at = base + i as isize * self.rs + j as isize * self.cs;
            // SAFETY: `at` is an element of the matrix (its indices are in
            // range), inside the view's bytes (asserted above), which
            // hold elements of T's dtype (checked by the caller);
            // `read_unaligned` takes any alignment.
            out[i + j * rows] = unsafe { p.offset(at).read_unaligned() };
        });
    }
}

/// Asks for the cache lines of the matrices at `bases` (in elements of T from
/// `p`) of the given `(rows, cols, rs, cs)`, where their rows or columns are
/// contiguous (nothing otherwise). A hint only: no address is read.
fn prefetch_matrices<'a, T>(
    p: *const u8,
    bases: impl Iterator<Item = &'a isize>,
    (rows, cols, rs, cs): (usize, usize, isize, isize),
) {
    // `runs` pieces of `run` contiguous elements, `step` apart, each walked
    // with stride `unit` (±1).
    let (runs, run, step, unit) = match (rs.unsigned_abs(), cs.unsigned_abs()) {
        (_, 1) => (rows, cols, rs, cs),
        (1, _) => (cols, rows, cs, rs),
        _ => return,
    };
    // The lowest element of a piece.
    let back = if unit < 0 { run as isize - 1 } else { 0 };
    let size = size_of::<T>() as isize;
    for &base in bases {
        for r in 0..runs {
            let at = base + r as isize * step - back;
            prefetch_lines(p.wrapping_offset(at * size), run * size as usize);
        }
    }
}

/// Visit every (i, j) of a `rows × cols` matrix whose elements lie at
/// `i·rs + j·cs`: in tiles of 16 × 16 where neither stride is 1 along the
/// walk of a column-major buffer, so both sides of a copy stay in cache,
/// each tile row by row where the rows are contiguous.
#[inline(always)]
fn tiles(rows: usize, cols: usize, rs: isize, cs: isize, mut f: impl FnMut(usize, usize)) {
    if rs.unsigned_abs() <= 1 || cols == 1 {
        for j in 0..cols {
            for i in 0..rows {
                f(i, j);
            }
        }
        return;
    }
    const B: usize = 16;
    let across = cs.unsigned_abs() == 1;
    for j0 in (0..cols).step_by(B) {
        for i0 in (0..rows).step_by(B) {
            let (ie, je) = ((i0 + B).min(rows), (j0 + B).min(cols));
            if across {
                // Rows contiguous: each row's piece in memory order.
                for i in i0..ie {
                    for j in j0..je {
                        f(i, j);
                    }
                }
            } else {
                for j in j0..je {
                    for i in i0..ie {
                        f(i, j);
                    }
                }
            }
        }
    }
}

/// The matrices (or vectors) of a destination, by batch index; distinct
/// batch indices reach distinct elements (the destination is checked not to
/// reach an element twice), so tasks write distinct matrices at once.
pub(crate) struct MatsMut {
    ptr: SendPtr<u8>,
    offsets: Vec<isize>,
    /// Rows (the vector's length for a vector destination).
    pub rows: usize,
    /// Columns (1 for a vector destination).
    pub cols: usize,
    rs: isize,
    cs: isize,
}

impl MatsMut {
    /// The matrices (`rank` 2) or vectors (`rank` 1) of a validated
    /// destination whose batch axes are `batch` exactly.
    pub(crate) fn new(x: &mut ArrayViewMut<'_>, rank: usize, batch: &[usize]) -> Result<Self> {
        let l = x.layout().clone();
        let r = l.shape.len();
        let (rows, cols, rs, cs) = if rank == 2 {
            (
                l.shape[r - 2],
                l.shape[r - 1],
                l.strides[r - 2],
                l.strides[r - 1],
            )
        } else {
            (l.shape[r - 1], 1, l.strides[r - 1], 0)
        };
        Ok(MatsMut {
            ptr: SendPtr(x.data_mut().as_mut_ptr()),
            offsets: batch_offsets(&l.shape, &l.strides, l.offset, rank, batch)?,
            rows,
            cols,
            rs,
            cs,
        })
    }

    /// The same matrices written with their rows in the opposite order.
    pub(crate) fn rows_reversed(mut self) -> Self {
        for o in &mut self.offsets {
            *o += self.rows.saturating_sub(1) as isize * self.rs;
        }
        self.rs = -self.rs;
        self
    }

    /// Write matrix `b` from `src` (column-major with leading dimension
    /// `ld`).
    ///
    /// # Safety
    /// The destination's view was validated, is of T's dtype, reaches no
    /// element twice and is borrowed mutably for the whole call; no other
    /// task writes batch index `b` at the same time.
    pub(crate) unsafe fn write<T: Element>(&self, b: usize, src: &[T], ld: usize) {
        let (rows, cols) = (self.rows, self.cols);
        if self.cs == 1 && self.rs != 1 && rows > 0 {
            // Rows contiguous: eight elements of a row at a time.
            let base = self.offsets[b];
            let p = self.ptr.get() as *mut T;
            let mut j0 = 0;
            while j0 + 8 <= cols {
                for i in 0..rows {
                    let v: [T; 8] = std::array::from_fn(|l| src[i + (j0 + l) * ld]);
                    let at = base + i as isize * self.rs + j0 as isize;
                    // SAFETY: elements (i, j0..j0 + 8) of the validated
                    // view (the caller's contract) lie at at..at + 8; no
                    // other task touches batch index b.
                    unsafe { (p.offset(at) as *mut [T; 8]).write_unaligned(v) };
                }
                j0 += 8;
            }
            for j in j0..cols {
                for i in 0..rows {
                    let at = base + i as isize * self.rs + j as isize;
                    // SAFETY: as above, one element.
                    unsafe { p.offset(at).write_unaligned(src[i + j * ld]) };
                }
            }
            return;
        }
        // SAFETY: the caller's contract.
        unsafe { self.write_with(b, |i, j| src[i + j * ld]) }
    }

    /// Write `f(i, j)` to each element (i, j) of matrix `b`.
    ///
    /// # Safety
    /// As for [`MatsMut::write`].
    pub(crate) unsafe fn write_with<T: Element>(&self, b: usize, f: impl Fn(usize, usize) -> T) {
        let base = self.offsets[b];
        let p = self.ptr.get() as *mut T;
        tiles(self.rows, self.cols, self.rs, self.cs, |i, j| {
            let at = base + i as isize * self.rs + j as isize * self.cs;
            // SAFETY: `at` is an element the validated view reaches (the
            // caller's contract: its indices are in range); no other task
            // touches batch index b; `write_unaligned` takes any alignment.
            unsafe { p.offset(at).write_unaligned(f(i, j)) };
        });
    }
}

/// The extents of the last two axes of `x` (rows, columns), refusing a rank
/// below 2 ([`Error::Rank`]).
pub(crate) fn matrix_of(name: &str, shape: &[usize]) -> Result<(usize, usize)> {
    let r = shape.len();
    if r < 2 {
        return Err(Error::Rank {
            operand: name.into(),
            shape: shape.to_vec(),
            expected: "at least 2 axes (the batch, then the matrix)".into(),
        });
    }
    Ok((shape[r - 2], shape[r - 1]))
}

/// The order of a square matrix operand, refusing a non-square one
/// ([`Error::Shape`]).
pub(crate) fn square_of(name: &str, shape: &[usize]) -> Result<usize> {
    let (m, n) = matrix_of(name, shape)?;
    if m != n {
        let mut target = shape.to_vec();
        let r = target.len();
        target[r - 1] = m;
        return Err(Error::Shape {
            operand: name.into(),
            shape: shape.to_vec(),
            target,
        });
    }
    Ok(n)
}

/// Refuse destinations that reach an element twice, overlap an input, or
/// overlap one another ([`Error::Layout`]).
pub(crate) fn check_destinations(
    dsts: &[(&str, &ArrayViewMut<'_>)],
    inputs: &[&ArrayView<'_>],
) -> Result<()> {
    for (i, (name, d)) in dsts.iter().enumerate() {
        crate::checks::check_destination_of(d, name, inputs)?;
        for (other, e) in &dsts[..i] {
            if !d.layout().is_empty()
                && !e.layout().is_empty()
                && crate::checks::overlaps(d.view().data(), e.view().data())
            {
                return Err(Error::Layout {
                    operand: (*name).into(),
                    reason: format!("its bytes overlap destination {other}'s"),
                });
            }
        }
    }
    Ok(())
}

/// The number of matrices of a batch shape.
pub(crate) fn count_of(batch: &[usize]) -> Result<usize> {
    crate::array::count_of(batch, "batch")
}
