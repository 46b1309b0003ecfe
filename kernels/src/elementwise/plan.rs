//! How one elementwise call walks its operands: axes merged where every operand
//! is contiguous across them, an innermost run per row, rows split across threads.

use super::sub_byte;
use crate::array::{ArrayView, ArrayViewMut};
use crate::{Args, LoopFn, Variant};
use rayon::prelude::*;

/// Operand slots: inputs 0..3, then the destination.
pub(super) const OUT: usize = 3;

/// One operand's addressing.
#[derive(Clone, Copy)]
pub(crate) struct Addr {
    /// Start of the operand's bytes.
    pub base: *mut u8,
    /// Position of element 0, in elements.
    pub offset: isize,
    /// Bytes per stored element (per code for packed dtypes).
    pub item: usize,
    /// Values per byte (1 unless packed).
    pub vpb: usize,
    /// Bits per value.
    pub bits: u32,
}

pub(crate) struct Plan {
    arity: usize,
    /// Merged axes, outer to inner (at least one).
    dims: Vec<usize>,
    /// Element strides per merged axis: inputs, then the destination at `OUT`.
    strides: Vec<[isize; 4]>,
    pub(super) addr: [Addr; 4],
    packed: bool,
}

// SAFETY: a plan's pointers address the validated operands of one call; tasks
// running on other threads write disjoint destination elements and only read
// inputs, which the destination (a unique borrow) does not overlap.
unsafe impl Sync for Plan {}

impl Plan {
    pub(crate) fn new(inputs: &[ArrayView<'_>], out: &mut ArrayViewMut<'_>) -> Plan {
        let shape = out.shape().to_vec();
        let rank = shape.len();
        let arity = inputs.len();
        let null = Addr {
            base: core::ptr::null_mut(),
            offset: 0,
            item: 1,
            vpb: 1,
            bits: 8,
        };
        let mut addr = [null; 4];
        let mut full: Vec<[isize; 4]> = vec![[0; 4]; rank];
        let mut packed = false;
        for (k, a) in inputs.iter().enumerate() {
            let info = a.dtype().info();
            addr[k] = Addr {
                base: a.data().as_ptr() as *mut u8,
                offset: a.layout().offset as isize,
                item: info.item_bytes,
                vpb: info.values_per_byte as usize,
                bits: info.bits,
            };
            packed |= info.values_per_byte > 1;
            let lead = rank - a.shape().len();
            for (i, (&n, &s)) in a.shape().iter().zip(a.strides()).enumerate() {
                full[lead + i][k] = if n == 1 { 0 } else { s };
            }
        }
        let info = out.dtype().info();
        packed |= info.values_per_byte > 1;
        let offset = out.layout().offset as isize;
        let strides_out = out.strides().to_vec();
        addr[OUT] = Addr {
            base: out.data_mut().as_mut_ptr(),
            offset,
            item: info.item_bytes,
            vpb: info.values_per_byte as usize,
            bits: info.bits,
        };
        for (i, s) in strides_out.iter().enumerate() {
            full[i][OUT] = if shape[i] == 1 { 0 } else { *s };
        }
        // Merge axes: drop extent-1 axes, join neighbours contiguous in every operand.
        let mut dims: Vec<usize> = Vec::new();
        let mut strides: Vec<[isize; 4]> = Vec::new();
        for (i, &n) in shape.iter().enumerate() {
            if n == 1 {
                continue;
            }
            let s = full[i];
            if let (Some(ln), Some(ls)) = (dims.last_mut(), strides.last_mut()) {
                if (0..4).all(|k| s[k].checked_mul(n as isize) == Some(ls[k])) {
                    *ln *= n;
                    *ls = s;
                    continue;
                }
            }
            dims.push(n);
            strides.push(s);
        }
        if dims.is_empty() {
            dims.push(1);
            strides.push([0; 4]);
        }
        Plan {
            arity,
            dims,
            strides,
            addr,
            packed,
        }
    }

    /// Elements in the call.
    pub(crate) fn total(&self) -> usize {
        self.dims.iter().product()
    }

    fn inner(&self) -> (usize, [isize; 4]) {
        (
            *self.dims.last().expect("a plan has an axis"),
            *self.strides.last().expect("a plan has an axis"),
        )
    }

    fn rows(&self) -> usize {
        self.dims[..self.dims.len() - 1].iter().product()
    }

    /// Element positions of row `r`'s first element, per operand.
    fn row_pos(&self, mut r: usize) -> [isize; 4] {
        let mut pos = self.addr.map(|a| a.offset);
        for d in (0..self.dims.len() - 1).rev() {
            let n = self.dims[d];
            let i = (r % n) as isize;
            r /= n;
            for (p, s) in pos.iter_mut().zip(self.strides[d]) {
                *p += i * s;
            }
        }
        pos
    }

    /// The loop variant for the innermost run.
    fn variant(&self) -> Variant {
        let (_, s) = self.inner();
        let ins = &s[..self.arity];
        if s[OUT] == 1 {
            if ins.iter().all(|&x| x == 1) {
                return Variant::Contig;
            }
            let zeros: Vec<usize> = (0..self.arity).filter(|&k| ins[k] == 0).collect();
            if self.arity >= 2
                && zeros.len() == 1
                && ins.iter().filter(|&&x| x == 1).count() == self.arity - 1
            {
                return [Variant::Bcast0, Variant::Bcast1, Variant::Bcast2][zeros[0]];
            }
        }
        Variant::Strided
    }

    /// Run every element with the kernels `select` gives for each loop variant
    /// (it must give one for `Strided`; a missing variant falls back to it).
    ///
    /// # Safety
    /// The plan's operands must be valid for every position the plan visits
    /// (guaranteed by the caller's validation), and `select`'s kernels must be
    /// the call's kernels for the operands' dtypes.
    pub(crate) unsafe fn run(&self, select: &dyn Fn(Variant) -> Option<LoopFn>, threads: usize) {
        let pick = |v: Variant| {
            select(v)
                .or_else(|| select(Variant::Strided))
                .expect("every kernel has a strided variant")
        };
        let contig = pick(Variant::Contig);
        if self.packed {
            // SAFETY: every row of the plan, whose positions the operands
            // hold and whose kernels are the call's (this function's
            // contract).
            unsafe { sub_byte::run_packed(self, contig, 0, self.rows()) };
            return;
        }
        let f = pick(self.variant());
        let rows = self.rows();
        let (n, _) = self.inner();
        // More threads than elements buy nothing (and would overflow the task count).
        let threads = threads.min(self.total()).max(1);
        if threads <= 1 {
            // SAFETY: every row and element of the plan, whose positions the
            // operands hold (this function's contract); `f` is the call's
            // kernel for the plan's variant.
            unsafe { self.run_rows(f, 0, rows, 0, n) };
        } else if rows >= threads {
            let chunk = rows.div_ceil(threads);
            (0..threads).into_par_iter().for_each(|t| {
                let r0 = (t * chunk).min(rows);
                let r1 = ((t + 1) * chunk).min(rows);
                // SAFETY: rows r0..r1 of the plan, whose positions the
                // operands hold (this function's contract), disjoint from the
                // other tasks' rows of the destination.
                unsafe { self.run_rows(f, r0, r1, 0, n) };
            });
        } else {
            let chunk = n.div_ceil(threads);
            (0..rows * threads).into_par_iter().for_each(|task| {
                let (r, t) = (task / threads, task % threads);
                let i0 = (t * chunk).min(n);
                let i1 = ((t + 1) * chunk).min(n);
                // SAFETY: elements i0..i1 of row r of the plan, whose
                // positions the operands hold (this function's contract),
                // disjoint from the other tasks' ranges of the destination.
                unsafe { self.run_rows(f, r, r + 1, i0, i1) };
            });
        }
    }

    /// Rows `r0..r1`, inner elements `i0..i1`.
    ///
    /// # Safety
    /// `r1 ≤ rows()` and `i1 ≤` the inner extent; the plan's operands are
    /// valid for every position it visits (the caller's validation), `f` is
    /// a kernel of the operands' dtypes this CPU runs, and no other thread
    /// writes these rows' elements of the destination.
    unsafe fn run_rows(&self, f: LoopFn, r0: usize, r1: usize, i0: usize, i1: usize) {
        if i0 >= i1 {
            return;
        }
        let (_, s) = self.inner();
        for r in r0..r1 {
            let pos = self.row_pos(r);
            let mut args = Args {
                n: i1 - i0,
                src: [core::ptr::null(); 3],
                src_stride: [s[0], s[1], s[2]],
                dst: core::ptr::null_mut(),
                dst_stride: s[OUT],
            };
            for k in 0..self.arity {
                let p = pos[k] + i0 as isize * s[k];
                // SAFETY: p is a validated element position of operand k.
                args.src[k] = unsafe { self.addr[k].base.offset(p * self.addr[k].item as isize) };
            }
            let p = pos[OUT] + i0 as isize * s[OUT];
            // SAFETY: p is a validated element position of the destination.
            args.dst = unsafe { self.addr[OUT].base.offset(p * self.addr[OUT].item as isize) };
            // SAFETY: the run stays inside every operand (validated extents).
            unsafe { f(&args) };
        }
    }

    pub(super) fn arity(&self) -> usize {
        self.arity
    }

    pub(super) fn inner_run(&self) -> (usize, [isize; 4]) {
        self.inner()
    }

    pub(super) fn row_start(&self, r: usize) -> [isize; 4] {
        self.row_pos(r)
    }
}
