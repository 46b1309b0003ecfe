//! The blocked, packed GEMM of chain order.
//!
//! Loops (BLIS): column blocks of `nc`, then depth blocks of `kc` in increasing
//! k, then row blocks of `mc`, then `nr`-column and `mr`-row micro-tiles. The
//! microkernel loads each C tile, continues its chain over the k-block and
//! stores it, so each output's products are added in increasing k from what C
//! held (init or +0) whatever the blocks, the tier or the thread split. Threads
//! take disjoint blocks of rows or of columns, never of depth.

use super::acc::{Acc, Src};
pub(crate) use super::cache_blocking::Blocking;
use super::micro::Micro;
use super::pack::{self, pack_a, pack_b};
use crate::array::{as_bytes, ArrayView, ArrayViewMut};
use crate::error::Result;

/// One operand of the product: its bytes, and per batch a base position.
pub(crate) struct Operand<'a> {
    pub src: Src<'a>,
    pub base: isize,
    /// The elements' dtype where it is not the accumulator's: panels are then
    /// packed as raw codes and cast into the accumulator block by block.
    pub raw: Option<crate::DType>,
}

/// A chain-order product `C[i, j] += Σ_k A[i, k]·B[k, j]` into a row-major C.
pub(crate) struct Chain<'a, T> {
    pub micro: Micro<T>,
    pub blk: Blocking,
    pub a: Operand<'a>,
    pub a_rows: &'a [isize],
    pub a_ks: &'a [isize],
    pub a_ks_unit: bool,
    pub b: Operand<'a>,
    pub b_ks: &'a [isize],
    pub b_cols: &'a [isize],
    pub b_cols_unit: bool,
    /// Whether C holds the chains' starting values (init); if not, the first
    /// k-block starts from +0 and C's contents are never read.
    pub c_holds_init: bool,
    /// Where the packing buffers come from.
    pub panels: Panels,
    /// B already packed whole ([`super::packed::PackedB`]): for each depth
    /// block of `kc` from k = 0, every `nr`-column micro-panel of all of B's
    /// columns in order (`kcb · nr` values each). Used in place of packing B
    /// block by block; B's operand and tables then only size the product.
    pub b_packed: Option<&'a [T]>,
}

impl<'a, T> Chain<'a, T> {
    /// A chain-order product of `a`'s rows and `b`'s columns through the
    /// position tables, with `micro`'s cache blocking on this CPU and the
    /// tables' unit-stride flags derived from them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        micro: Micro<T>,
        a: Operand<'a>,
        a_rows: &'a [isize],
        a_ks: &'a [isize],
        b: Operand<'a>,
        b_ks: &'a [isize],
        b_cols: &'a [isize],
        c_holds_init: bool,
        panels: Panels,
    ) -> Self {
        let (mr, nr) = (micro.mr, micro.nr);
        // B rows of at most 512 bytes (64 f32, 64 f64 columns) or two
        // micro-panels: a skinny product, A the stream.
        let blk = if b_cols.len() <= 2 * nr || b_cols.len() * size_of::<T>() <= 512 {
            super::cache_blocking::blocking_skinny(
                mr,
                nr,
                size_of::<T>(),
                super::cache_blocking::cache_sizes(),
                a_ks.len(),
            )
        } else {
            super::cache_blocking::for_tile(mr, nr, size_of::<T>())
        };
        Chain {
            blk,
            micro,
            a,
            a_rows,
            a_ks,
            a_ks_unit: pack::unit(a_ks),
            b,
            b_ks,
            b_cols,
            b_cols_unit: pack::unit(b_cols),
            c_holds_init,
            panels,
            b_packed: None,
        }
    }
}

/// The packing buffers one task of a product needs: A and B panels in the
/// accumulator's dtype, and the raw codes they are cast from where an
/// operand has another dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PanelNeed {
    /// Elements of one A block (`mc · kc`, or less for a small product).
    pub a: usize,
    /// Elements of one B block.
    pub b: usize,
    /// Bytes of the accumulator's elements.
    pub item: usize,
    /// Bytes per raw A code (0: A is in the accumulator's dtype).
    pub a_raw: usize,
    /// Bytes per raw B code.
    pub b_raw: usize,
}

/// Regions of a task's scratch are aligned to this many bytes.
const ALIGN: usize = 64;

impl PanelNeed {
    /// What a product of `m × n` outputs and depth `k` with these blocks
    /// needs per task (`a_raw`, `b_raw`: bytes per raw code, or 0).
    pub(crate) fn of(
        blk: Blocking,
        m: usize,
        n: usize,
        k: usize,
        item: usize,
        a_raw: usize,
        b_raw: usize,
    ) -> PanelNeed {
        let kc = blk.kc.min(k);
        PanelNeed {
            a: blk.mc.min(m.div_ceil(blk.mr) * blk.mr) * kc,
            b: blk.nc.min(n.div_ceil(blk.nr) * blk.nr) * kc,
            item,
            a_raw,
            b_raw,
        }
    }
    /// Byte offsets of the four regions of a task (A, B, raw A, raw B) and
    /// the task's whole size, each region aligned.
    fn layout(&self) -> ([usize; 4], usize) {
        let sizes = [
            self.a * self.item,
            self.b * self.item,
            self.a * self.a_raw,
            self.b * self.b_raw,
        ];
        let mut offs = [0usize; 4];
        let mut at = 0usize;
        for (o, s) in offs.iter_mut().zip(sizes) {
            *o = at;
            at += s.next_multiple_of(ALIGN);
        }
        (offs, at)
    }
    /// Bytes of scratch one task needs.
    pub(crate) fn task_bytes(&self) -> usize {
        self.layout().1
    }
}

/// Where a product's packing buffers come from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Panels {
    /// Buffers kept per thread between calls (the default).
    Cache,
    /// A caller's scratch: task `p` (counted from `first`) uses the `need`
    /// regions at `base + (first + p) · need.task_bytes()`; `tasks` regions in
    /// all, the buffer 64-byte aligned and written by no one else during the
    /// call.
    Caller {
        base: SendPtr<u8>,
        need: PanelNeed,
        first: usize,
        tasks: usize,
    },
}

impl Panels {
    /// The same source for tasks counted from `first` more.
    pub(crate) fn skip_tasks(self, more: usize) -> Panels {
        match self {
            Panels::Cache => Panels::Cache,
            Panels::Caller {
                base,
                need,
                first,
                tasks,
            } => Panels::Caller {
                base,
                need,
                first: first + more,
                tasks,
            },
        }
    }
}

/// A packing buffer: kept per thread, or a region of the caller's scratch.
enum Buf<'r, T> {
    Kept(Vec<T>),
    Lent(&'r mut [T]),
}

impl<T> core::ops::Deref for Buf<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Buf::Kept(v) => v,
            Buf::Lent(s) => s,
        }
    }
}

impl<T> core::ops::DerefMut for Buf<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Buf::Kept(v) => v,
            Buf::Lent(s) => s,
        }
    }
}

impl Panels {
    /// Buffer `slot` (0, 1: A and B panels; 2, 3: their raw codes) of `len`
    /// elements for task `task`.
    fn take<'r, T: super::acc::Bits>(self, task: usize, slot: usize, len: usize) -> Buf<'r, T> {
        match self {
            Panels::Cache => Buf::Kept(scratch::take::<T>(slot, len)),
            Panels::Caller {
                base,
                need,
                first,
                tasks,
            } => {
                let (offs, per) = need.layout();
                let t = first + task;
                assert!(
                    t < tasks,
                    "task {t} of a product given {tasks} scratch regions"
                );
                let cap = [need.a, need.b, need.a, need.b][slot];
                assert!(len <= cap, "a panel of {len} elements in a region of {cap}");
                // SAFETY: region `t` of the caller's scratch (sized for
                // `tasks` regions of `per` bytes, 64-byte aligned) is this
                // task's alone during the call; the slot's offset is aligned
                // for every element type (at most 16 bytes, 8-aligned) and
                // holds `cap` ≥ `len` elements of the size the need was made
                // for; any bit pattern is a valid `T` (plain numbers).
                unsafe {
                    let p = base.get().add(t * per + offs[slot]) as *mut T;
                    Buf::Lent(core::slice::from_raw_parts_mut(p, len))
                }
            }
        }
    }
    /// Return a buffer (kept buffers go back to this thread's cache).
    fn give<T: super::acc::Bits>(slot: usize, buf: Buf<'_, T>) {
        if let Buf::Kept(v) = buf {
            scratch::give(slot, v);
        }
    }
}

pub(crate) use crate::scratch::SendPtr;

/// Multiply-adds below which a product stays on the calling thread.
const PARALLEL_MIN: u128 = 1 << 20;

impl<T: Acc + crate::Element> Chain<'_, T> {
    /// Run into `c`, row-major `rows × cols` (`rows = a_rows.len()`,
    /// `cols = b_cols.len()`), with up to `threads` threads.
    ///
    /// # Safety
    /// Every position the tables reach from the bases (`a.base + row + k`,
    /// `b.base + k + col`) is inside the operands' validated views, of their
    /// dtypes; the microkernel (and its packer) run on this CPU.
    pub(crate) unsafe fn run(&self, c: &mut [T], threads: usize, tier: crate::Tier) -> Result<()> {
        let (m, n) = (self.a_rows.len(), self.b_cols.len());
        assert_eq!(c.len(), m * n);
        // SAFETY: c holds the m × n tile row-major (row stride n), and this
        // call holds it alone (`&mut`); the operands' positions and the
        // kernel are this function's contract, which is run_strided's.
        unsafe { self.run_strided(c.as_mut_ptr(), n, threads, tier) }
    }

    /// [`Chain::run`] into a row-major C of row stride `ldc` (≥ its columns)
    /// at `c`.
    ///
    /// # Safety
    /// Every position the tables reach from the bases is inside the
    /// operands' validated views, of their dtypes; the microkernel (and its
    /// packer) run on this CPU; `c` is valid for reads and writes of the
    /// `rows × cols` tile at row stride `ldc`, which no one else touches
    /// during the call.
    pub(crate) unsafe fn run_strided(
        &self,
        c: *mut T,
        ldc: usize,
        threads: usize,
        tier: crate::Tier,
    ) -> Result<()> {
        let (m, n, k) = (self.a_rows.len(), self.b_cols.len(), self.a_ks.len());
        assert!(ldc >= n, "a row stride of {ldc} for {n} columns");
        if m == 0 || n == 0 {
            return Ok(());
        }
        if k == 0 {
            if !self.c_holds_init {
                for i in 0..m {
                    // SAFETY: i < m: row i's n elements at c + i·ldc lie in
                    // the tile this function may write (its contract).
                    unsafe { core::slice::from_raw_parts_mut(c.add(i * ldc), n) }.fill(T::ZERO);
                }
            }
            return Ok(());
        }
        let work = m as u128 * n as u128 * k as u128;
        let threads = if work < PARALLEL_MIN {
            1
        } else {
            threads.max(1)
        };
        let (mr, nr) = (self.blk.mr, self.blk.nr);
        // Split along the longer side in whole micro-tiles.
        let by_rows = m.div_ceil(mr) >= n.div_ceil(nr);
        let (units, unit) = if by_rows {
            (m.div_ceil(mr), mr)
        } else {
            (n.div_ceil(nr), nr)
        };
        let parts = threads.min(units).max(1);
        let ptr = SendPtr(c);
        let task = |p: usize| {
            let lo = (units * p / parts) * unit;
            let hi = ((units * (p + 1) / parts) * unit).min(if by_rows { m } else { n });
            let (r, cc) = if by_rows {
                (lo..hi, 0..n)
            } else {
                (0..m, lo..hi)
            };
            // SAFETY: each task writes only its own rows (lo..hi) or columns
            // of C, disjoint from the other tasks'; the operands' positions
            // and the kernel are this function's contract, which block's is.
            unsafe { self.block(ptr.get(), ldc, r, cc, tier, p) }
        };
        if parts == 1 {
            task(0)
        } else {
            use rayon::prelude::*;
            (0..parts).into_par_iter().map(task).collect::<Result<()>>()
        }
    }

    /// Cast `len` raw codes of `dtype` (the first `len` of `raw`) into `out`.
    fn cast_raw(tier: crate::Tier, dtype: crate::DType, raw: &[u8], out: &mut [T]) -> Result<()> {
        let n = out.len();
        crate::cast::cast(
            crate::CastMode::Default,
            &ArrayView::contiguous(dtype, &[n], raw)?,
            &mut ArrayViewMut::from_slice(out, &[n])?,
            &crate::Exec::on(tier).threads(1),
        )
    }

    /// Pack an A block into `pa` (in the accumulator's dtype).
    ///
    /// # Safety
    /// Every `a.base + row + k` for `row` in `rows` and `k` in `ks` is inside
    /// A's validated view, of its dtype; the microkernel's packer runs on
    /// this CPU.
    unsafe fn fill_a(
        &self,
        tier: crate::Tier,
        task: usize,
        rows: &[isize],
        ks: &[isize],
        pa: &mut [T],
    ) -> Result<()> {
        let mr = self.blk.mr;
        let len = rows.len().div_ceil(mr) * mr * ks.len();
        let Some(dt) = self.a.raw else {
            // SAFETY: A's positions for these rows and ks are in its view, of
            // dtype T (no raw dtype), and the packer runs on this CPU (this
            // function's contract).
            unsafe {
                pack_a(
                    self.a.src,
                    self.a.base,
                    rows,
                    ks,
                    self.a_ks_unit,
                    mr,
                    self.micro.pack,
                    pa,
                )
            };
            return Ok(());
        };
        macro_rules! raw {
            ($u:ty) => {{
                let mut buf = self.panels.take::<$u>(task, 2, len);
                // SAFETY: A's positions for these rows and ks are in its view
                // (this function's contract), read as `$u`, a type of `dt`'s
                // item size; no packer is passed.
                unsafe {
                    pack_a::<$u>(
                        self.a.src,
                        self.a.base,
                        rows,
                        ks,
                        self.a_ks_unit,
                        mr,
                        None,
                        &mut buf,
                    )
                };
                let r = Self::cast_raw(
                    tier,
                    dt,
                    &as_bytes(&buf)[..len * size_of::<$u>()],
                    &mut pa[..len],
                );
                Panels::give(2, buf);
                r
            }};
        }
        match dt.info().item_bytes {
            1 => raw!(u8),
            2 => raw!(u16),
            4 => raw!(u32),
            8 => raw!(u64),
            _ => raw!(num_complex::Complex<f64>),
        }
    }

    /// Pack a B block into `pb` (in the accumulator's dtype).
    ///
    /// # Safety
    /// Every `b.base + k + col` for `k` in `ks` and `col` in `cols` is inside
    /// B's validated view, of its dtype.
    unsafe fn fill_b(
        &self,
        tier: crate::Tier,
        task: usize,
        ks: &[isize],
        cols: &[isize],
        pb: &mut [T],
    ) -> Result<()> {
        let nr = self.blk.nr;
        let len = cols.len().div_ceil(nr) * nr * ks.len();
        let Some(dt) = self.b.raw else {
            // SAFETY: B's positions for these ks and columns are in its view,
            // of dtype T (no raw dtype; this function's contract).
            unsafe { pack_b(self.b.src, self.b.base, ks, cols, self.b_cols_unit, nr, pb) };
            return Ok(());
        };
        macro_rules! raw {
            ($u:ty) => {{
                let mut buf = self.panels.take::<$u>(task, 3, len);
                // SAFETY: B's positions for these ks and columns are in its
                // view (this function's contract), read as `$u`, a type of
                // `dt`'s item size.
                unsafe {
                    pack_b::<$u>(
                        self.b.src,
                        self.b.base,
                        ks,
                        cols,
                        self.b_cols_unit,
                        nr,
                        &mut buf,
                    )
                };
                let r = Self::cast_raw(
                    tier,
                    dt,
                    &as_bytes(&buf)[..len * size_of::<$u>()],
                    &mut pb[..len],
                );
                Panels::give(3, buf);
                r
            }};
        }
        match dt.info().item_bytes {
            1 => raw!(u8),
            2 => raw!(u16),
            4 => raw!(u32),
            8 => raw!(u64),
            _ => raw!(num_complex::Complex<f64>),
        }
    }

    /// The sequential loops over rows `rows` and columns `cols` of C.
    ///
    /// # Safety
    /// Every position the tables reach from the bases is inside the
    /// operands' validated views, of their dtypes; the microkernel (and its
    /// packer) run on this CPU; `c` is the row-major C of row stride `ldc`,
    /// valid for reads and writes of rows `rows` × columns `cols`, which no
    /// other thread touches.
    unsafe fn block(
        &self,
        c: *mut T,
        ldc: usize,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        tier: crate::Tier,
        task: usize,
    ) -> Result<()> {
        let Blocking { mr, nr, kc, mc, nc } = self.blk;
        let k = self.a_ks.len();
        let kc_max = kc.min(k);
        let mut pa = self
            .panels
            .take::<T>(task, 0, mc.min(rows.len().div_ceil(mr) * mr) * kc_max);
        let pb_len = if self.b_packed.is_some() {
            0
        } else {
            nc.min(cols.len().div_ceil(nr) * nr) * kc_max
        };
        let mut pb = self.panels.take::<T>(task, 1, pb_len);
        // Micro-panels of all of B's columns per depth block, when packed whole.
        let groups = self.b_cols.len().div_ceil(nr);
        let mut jc = cols.start;
        while jc < cols.end {
            let ncb = nc.min(cols.end - jc);
            let mut pc = 0;
            while pc < k {
                let kcb = kc.min(k - pc);
                let load = pc > 0 || self.c_holds_init;
                let panel: &[T] = match self.b_packed {
                    Some(all) => {
                        // Whole depth blocks before pc hold groups·nr·kc
                        // values each; column blocks start on micro-panels
                        // (threads split columns in whole micro-tiles, and
                        // nc is a multiple of nr).
                        debug_assert!(jc.is_multiple_of(nr));
                        &all[pc * groups * nr + jc / nr * nr * kcb..]
                    }
                    None => {
                        // SAFETY: ks and columns are slices of the tables,
                        // whose positions are in B's view (this function's
                        // contract).
                        unsafe {
                            self.fill_b(
                                tier,
                                task,
                                &self.b_ks[pc..pc + kcb],
                                &self.b_cols[jc..jc + ncb],
                                &mut pb,
                            )?
                        };
                        &pb[..]
                    }
                };
                let mut ic = rows.start;
                while ic < rows.end {
                    let mcb = mc.min(rows.end - ic);
                    // SAFETY: rows and ks are slices of the tables, whose
                    // positions are in A's view; the packer runs on this CPU
                    // (this function's contract).
                    unsafe {
                        self.fill_a(
                            tier,
                            task,
                            &self.a_rows[ic..ic + mcb],
                            &self.a_ks[pc..pc + kcb],
                            &mut pa,
                        )?
                    };
                    let mut jr = 0;
                    while jr < ncb {
                        let nw = nr.min(ncb - jr);
                        let bp = panel[jr / nr * nr * kcb..].as_ptr();
                        let mut ir = 0;
                        while ir < mcb {
                            let mw = mr.min(mcb - ir);
                            let ap = pa[ir / mr * mr * kcb..].as_ptr();
                            // SAFETY: the tile lies in this task's rectangle.
                            let ct = unsafe { c.add((ic + ir) * ldc + jc + jr) };
                            if mw == mr && nw == nr {
                                // SAFETY: full micro-panels of kcb steps (mr and
                                // nr values a step) and a full tile of C in this
                                // task's rectangle; the kernel runs on this CPU
                                // (this function's contract).
                                unsafe {
                                    (self.micro.full)(kcb, ap, bp, nr as isize, ct, ldc, load)
                                };
                            } else {
                                // SAFETY: the edge tile's mw ≤ mr rows and nw ≤
                                // nr columns of C in this task's rectangle; its
                                // micro-panels are packed to mr and nr; the
                                // kernel runs on this CPU (this function's
                                // contract).
                                unsafe {
                                    (self.micro.edge)(
                                        kcb,
                                        ap,
                                        bp,
                                        nr as isize,
                                        ct,
                                        ldc,
                                        load,
                                        mw,
                                        nw,
                                    )
                                };
                            }
                            ir += mr;
                        }
                        jr += nr;
                    }
                    ic += mcb;
                }
                pc += kcb;
            }
            jc += ncb;
        }
        Panels::give(0, pa);
        Panels::give(1, pb);
        Ok(())
    }
}

/// Packing buffers (slots 0, 1: A and B panels; 2, 3: their raw codes) kept
/// per thread between calls, so that a call neither
/// allocates nor faults in fresh pages for its panels.
mod scratch {
    use super::super::acc::Bits;
    use std::any::Any;
    use std::cell::RefCell;

    /// Buffers above this many bytes are not kept.
    const KEEP_MAX: usize = 16 << 20;

    thread_local! {
        static SLOTS: RefCell<[Option<Box<dyn Any>>; 4]> = const { RefCell::new([None, None, None, None]) };
    }

    /// A buffer of `len` elements (contents unspecified but initialised).
    pub(super) fn take<T: Bits>(slot: usize, len: usize) -> Vec<T> {
        let kept = SLOTS.with(|s| s.borrow_mut()[slot].take());
        let mut v = kept
            .and_then(|b| b.downcast::<Vec<T>>().ok())
            .map(|b| *b)
            .unwrap_or_default();
        if v.len() < len {
            v.resize(len, T::ZERO);
        }
        v
    }

    /// Return a buffer for the next call on this thread.
    pub(super) fn give<T: Bits>(slot: usize, v: Vec<T>) {
        if v.len() * size_of::<T>() <= KEEP_MAX {
            SLOTS.with(|s| s.borrow_mut()[slot] = Some(Box::new(v)));
        }
    }
}
