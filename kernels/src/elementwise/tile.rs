//! Sub-byte operands: gather a tile of values into one code per byte (or the
//! element bytes of unpacked operands), run the contiguous kernel on the tile,
//! and scatter the result back, packing it into its bytes.

use super::plan::{Addr, Plan, OUT};
use crate::{Args, LoopFn};

/// Values per tile.
const TILE: usize = 256;
/// The largest element (c128).
const MAX_ITEM: usize = 16;

/// Read the value at element position `p` of `a` into `dst` (its item bytes, or
/// its code in one byte for packed dtypes).
///
/// # Safety
/// `p` must be a valid element position of `a`.
unsafe fn gather(a: &Addr, p: isize, dst: &mut [u8]) {
    if a.vpb > 1 {
        let byte_at = (p as usize) / a.vpb;
        let slot = (p as usize) % a.vpb;
        let shift = (a.vpb - 1 - slot) as u32 * a.bits;
        // SAFETY: the byte holding position p is inside the validated view.
        let byte = unsafe { a.base.add(byte_at).read() };
        dst[0] = (byte >> shift) & ((1u16 << a.bits) - 1) as u8;
    } else {
        for (j, d) in dst[..a.item].iter_mut().enumerate() {
            // SAFETY: the element's bytes are inside the validated view.
            *d = unsafe { a.base.offset(p * a.item as isize + j as isize).read() };
        }
    }
}

/// Write `src` to element position `p` of `a`, packing codes into their byte.
///
/// # Safety
/// `p` must be a valid element position of `a`, written by no other thread.
unsafe fn scatter(a: &Addr, p: isize, src: &[u8]) {
    if a.vpb > 1 {
        let byte_at = (p as usize) / a.vpb;
        let slot = (p as usize) % a.vpb;
        let shift = (a.vpb - 1 - slot) as u32 * a.bits;
        let mask = (((1u16 << a.bits) - 1) as u8) << shift;
        // SAFETY: the byte holding position p is inside the validated view.
        unsafe {
            let b = a.base.add(byte_at);
            b.write((b.read() & !mask) | ((src[0] << shift) & mask));
        }
    } else {
        for (j, s) in src[..a.item].iter().enumerate() {
            // SAFETY: the element's bytes are inside the validated view.
            unsafe { a.base.offset(p * a.item as isize + j as isize).write(*s) };
        }
    }
}

/// Gather `len` values from position `p0` at unit stride in one pass, where the
/// run is whole bytes (packed) or plain elements; false when it is neither.
///
/// # Safety
/// The run must lie inside the validated operand.
unsafe fn gather_run(a: &Addr, p0: isize, stride: isize, len: usize, dst: &mut [u8]) -> bool {
    if stride != 1 {
        return false;
    }
    if a.vpb == 1 {
        // SAFETY: the run's bytes are inside the view; dst holds len items.
        unsafe {
            core::ptr::copy_nonoverlapping(
                a.base.offset(p0 * a.item as isize),
                dst.as_mut_ptr(),
                len * a.item,
            )
        };
        return true;
    }
    if !(p0 as usize).is_multiple_of(a.vpb) || !len.is_multiple_of(a.vpb) {
        return false;
    }
    let mask = ((1u16 << a.bits) - 1) as u8;
    let first = p0 as usize / a.vpb;
    for j in 0..len / a.vpb {
        // SAFETY: byte `first + j` holds values of the run.
        let byte = unsafe { a.base.add(first + j).read() };
        for q in 0..a.vpb {
            dst[j * a.vpb + q] = (byte >> ((a.vpb - 1 - q) as u32 * a.bits)) & mask;
        }
    }
    true
}

/// Scatter `len` values to position `p0` at unit stride in one pass (whole
/// bytes for a packed destination); false when the run is not of that shape.
///
/// # Safety
/// The run must lie inside the validated destination.
unsafe fn scatter_run(a: &Addr, p0: isize, stride: isize, len: usize, src: &[u8]) -> bool {
    if stride != 1 {
        return false;
    }
    if a.vpb == 1 {
        // SAFETY: the run's bytes are inside the view; src holds len items.
        unsafe {
            core::ptr::copy_nonoverlapping(
                src.as_ptr(),
                a.base.offset(p0 * a.item as isize),
                len * a.item,
            )
        };
        return true;
    }
    if !(p0 as usize).is_multiple_of(a.vpb) || !len.is_multiple_of(a.vpb) {
        return false;
    }
    let mask = ((1u16 << a.bits) - 1) as u8;
    let first = p0 as usize / a.vpb;
    for j in 0..len / a.vpb {
        let mut byte = 0u8;
        for q in 0..a.vpb {
            byte |= (src[j * a.vpb + q] & mask) << ((a.vpb - 1 - q) as u32 * a.bits);
        }
        // SAFETY: byte `first + j` is wholly inside the run.
        unsafe { a.base.add(first + j).write(byte) };
    }
    true
}

/// Run rows `r0..r1` of a plan with a packed operand through tiles.
///
/// # Safety
/// As `Plan::run`.
pub(super) unsafe fn run_packed(plan: &Plan, contig: LoopFn, r0: usize, r1: usize) {
    let arity = plan.arity();
    let (n, s) = plan.inner_run();
    let mut bufs = vec![0u8; 4 * TILE * MAX_ITEM];
    for r in r0..r1 {
        let pos = plan.row_start(r);
        let mut i0 = 0;
        while i0 < n {
            let len = TILE.min(n - i0);
            let (ins, out) = bufs.split_at_mut(3 * TILE * MAX_ITEM);
            for k in 0..arity {
                let a = &plan.addr[k];
                let item = if a.vpb > 1 { 1 } else { a.item };
                let buf = &mut ins[k * TILE * MAX_ITEM..];
                let p0 = pos[k] + i0 as isize * s[k];
                // SAFETY (both arms): positions inside the row of a validated operand.
                if !unsafe { gather_run(a, p0, s[k], len, buf) } {
                    for i in 0..len {
                        let p = pos[k] + (i0 + i) as isize * s[k];
                        unsafe { gather(a, p, &mut buf[i * item..i * item + item.max(1)]) };
                    }
                }
            }
            let mut args = Args {
                n: len,
                src: [core::ptr::null(); 3],
                src_stride: [1; 3],
                dst: out.as_mut_ptr(),
                dst_stride: 1,
            };
            for k in 0..arity {
                args.src[k] = ins[k * TILE * MAX_ITEM..].as_ptr();
            }
            // SAFETY: the tile buffers hold `len` elements of each operand.
            unsafe { contig(&args) };
            let o = &plan.addr[OUT];
            let item = if o.vpb > 1 { 1 } else { o.item };
            let p0 = pos[OUT] + i0 as isize * s[OUT];
            // SAFETY (both arms): positions inside the row of the validated destination.
            if !unsafe { scatter_run(o, p0, s[OUT], len, out) } {
                for i in 0..len {
                    let p = pos[OUT] + (i0 + i) as isize * s[OUT];
                    unsafe { scatter(o, p, &out[i * item..i * item + item]) };
                }
            }
            i0 += len;
        }
    }
}
