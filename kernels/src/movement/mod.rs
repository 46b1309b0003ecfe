//! Data movement along one axis at positions an int64 array holds:
//! [`gather()`], [`gather_ranges()`] and [`scatter()`].
//!
//! # Contract
//!
//! * **Positions** are int64 (any other dtype is refused with
//!   [`Error::DTypeMismatch`]), one per element of the destination (a
//!   gather) or of the updates (a scatter). A position outside `[0, d)`, d
//!   the extent of the axis it indexes, reads the element of zero bits (a
//!   gather: +0, false, 0 + 0i, the code 0 of a packed dtype) or drops its
//!   update (a scatter). Nothing is refused for a position's value.
//! * **Moves.** A gather, a ranges gather and a scatter by
//!   [`Combine::Set`] copy bits: NaN payloads, signalling NaNs and −0 pass
//!   unchanged.
//! * **Determinism.** Every result is a function of the operands' values
//!   alone: the threads split the destination (or the targets) into
//!   disjoint parts, and a scatter applies every target's updates in C
//!   order of their indices whatever the thread count, tier or layout.
//! * **Layouts.** Any strides (zero and negative included) on the inputs;
//!   a destination must reach no element twice ([`Error::Layout`]).
//!   Operands that are not C-contiguous are read through a C-ordered copy,
//!   and a destination that is not is computed into one and copied out.
//! * **Refusals**, all before any write: the typed [`Error`] of each entry.

mod gather;
mod ranges;
mod scatter;

pub use gather::{gather, gather_query};
pub use ranges::{gather_ranges, gather_ranges_shape};
pub use scatter::{scatter, scatter_query, Combine};

use crate::array::{c_contiguous, count_of, ArrayView, ArrayViewMut};
use crate::elementwise::self_overlap;
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::DType;
use std::borrow::Cow;

/// Elements from which a call splits its work among threads.
pub(crate) const PARALLEL_MIN: usize = 1 << 15;

/// A raw pointer that tasks share; each task touches only its own part.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shared<T>(pub(crate) *mut T);
// SAFETY: the tasks that share one write disjoint elements only (each use
// states which), and the buffer outlives the scoped tasks.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: sharing one only copies the address: the tasks write disjoint
// elements through it (each use states which) while the buffer outlives them.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The pointer (a method, so that closures capture the whole wrapper).
    pub(crate) fn get(self) -> *mut T {
        self.0
    }
}

/// Run `f(part)` for `parts` parts, on rayon's pool where `parts > 1`.
pub(crate) fn run_parts<F: Fn(usize) + Sync + Send>(parts: usize, f: F) {
    if parts <= 1 {
        f(0);
    } else {
        use rayon::prelude::*;
        (0..parts).into_par_iter().for_each(f);
    }
}

/// The threads for `n` units of work: 1 below [`PARALLEL_MIN`].
pub(crate) fn threads_for(exec: &Exec, n: usize) -> usize {
    if n < PARALLEL_MIN {
        1
    } else {
        exec.thread_count().min(n).max(1)
    }
}

/// Whether a dtype packs several values into a byte.
pub(crate) fn packed(d: DType) -> bool {
    d.info().values_per_byte > 1
}

/// The bytes one element occupies in a C-ordered working buffer: its item
/// size, or one byte per code for a packed dtype.
pub(crate) fn work_bytes(d: DType) -> usize {
    if packed(d) {
        1
    } else {
        d.info().item_bytes
    }
}

pub(crate) use crate::alloc::{try_filled as filled, try_zeroed as zeroed};

/// Visit the element positions of a layout in C order (positions in
/// elements from the start of the bytes).
pub(crate) fn for_each_offset(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    mut f: impl FnMut(usize),
) {
    if shape.contains(&0) {
        return;
    }
    let rank = shape.len();
    if rank == 0 {
        f(offset);
        return;
    }
    let last = shape[rank - 1];
    let ls = strides[rank - 1];
    let mut idx = vec![0usize; rank - 1];
    let mut base = offset as isize;
    loop {
        let mut p = base;
        for _ in 0..last {
            f(p as usize);
            p += ls;
        }
        // Advance the odometer over the leading axes.
        let mut k = rank - 1;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            base += strides[k];
            if idx[k] < shape[k] {
                break;
            }
            base -= strides[k] * shape[k] as isize;
            idx[k] = 0;
        }
    }
}

/// The code of element `e` of a packed buffer (element 0 of a byte in its
/// most significant bits).
#[inline]
pub(crate) fn code_at(data: &[u8], e: usize, vpb: usize, bits: u32) -> u8 {
    let shift = (vpb - 1 - e % vpb) as u32 * bits;
    (data[e / vpb] >> shift) & ((1u16 << bits) - 1) as u8
}

/// Store `code` as element `e` of a packed buffer.
#[inline]
pub(crate) fn set_code(data: &mut [u8], e: usize, vpb: usize, bits: u32, code: u8) {
    let shift = (vpb - 1 - e % vpb) as u32 * bits;
    let mask = (((1u16 << bits) - 1) as u8) << shift;
    let b = &mut data[e / vpb];
    *b = (*b & !mask) | ((code << shift) & mask);
}

/// The elements of a view in C order, `work_bytes` bytes each: borrowed
/// where the view is C-contiguous and not packed, else copied.
pub(crate) fn load_c<'a>(v: &ArrayView<'a>, what: &str) -> Result<Cow<'a, [u8]>> {
    let d = v.dtype();
    let n = count_of(v.shape(), what)?;
    let data = v.data();
    if n == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    let info = d.info();
    if !packed(d) && c_contiguous(v.shape(), v.strides()) {
        let ib = info.item_bytes;
        let start = v.layout().offset * ib;
        return Ok(Cow::Borrowed(&data[start..start + n * ib]));
    }
    let wb = work_bytes(d);
    let mut out = zeroed(n * wb, what)?;
    let mut j = 0usize;
    if packed(d) {
        let (vpb, bits) = (info.values_per_byte as usize, info.bits);
        for_each_offset(v.shape(), v.strides(), v.layout().offset, |e| {
            out[j] = code_at(data, e, vpb, bits);
            j += 1;
        });
    } else {
        for_each_offset(v.shape(), v.strides(), v.layout().offset, |e| {
            out[j * wb..(j + 1) * wb].copy_from_slice(&data[e * wb..(e + 1) * wb]);
            j += 1;
        });
    }
    Ok(Cow::Owned(out))
}

/// The destination's bytes as one C-ordered run, where it is C-contiguous
/// and not packed.
pub(crate) fn direct_c<'b>(dst: &'b mut ArrayViewMut<'_>) -> Option<&'b mut [u8]> {
    let d = dst.dtype();
    if packed(d) || !c_contiguous(dst.shape(), dst.strides()) {
        return None;
    }
    let n = dst.layout().len();
    let ib = d.info().item_bytes;
    let start = dst.layout().offset * ib;
    if n == 0 {
        return Some(&mut []);
    }
    Some(&mut dst.data_mut()[start..start + n * ib])
}

/// Copy a C-ordered working buffer (`work_bytes` per element) into the
/// destination's elements.
pub(crate) fn store_c(src: &[u8], dst: &mut ArrayViewMut<'_>) {
    let d = dst.dtype();
    let info = d.info();
    let (shape, strides, offset) = (
        dst.shape().to_vec(),
        dst.strides().to_vec(),
        dst.layout().offset,
    );
    let data = dst.data_mut();
    let mut j = 0usize;
    if packed(d) {
        let (vpb, bits) = (info.values_per_byte as usize, info.bits);
        for_each_offset(&shape, &strides, offset, |e| {
            set_code(data, e, vpb, bits, src[j]);
            j += 1;
        });
    } else {
        let wb = info.item_bytes;
        for_each_offset(&shape, &strides, offset, |e| {
            data[e * wb..(e + 1) * wb].copy_from_slice(&src[j * wb..(j + 1) * wb]);
            j += 1;
        });
    }
}

/// Refuse a destination that reaches one element twice.
pub(crate) fn check_dst(v: &ArrayViewMut<'_>, name: &str) -> Result<()> {
    match self_overlap(v.shape(), v.strides()) {
        Some(reason) => Err(Error::Layout {
            operand: name.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Refuse positions that are not int64.
pub(crate) fn check_i64(d: DType, name: &str) -> Result<()> {
    if d != DType::I64 {
        return Err(Error::DTypeMismatch {
            operand: name.to_string(),
            expected: DType::I64,
            got: d,
        });
    }
    Ok(())
}

/// Refuse a dtype other than `expected`.
pub(crate) fn check_same(d: DType, expected: DType, name: &str) -> Result<()> {
    if d != expected {
        return Err(Error::DTypeMismatch {
            operand: name.to_string(),
            expected,
            got: d,
        });
    }
    Ok(())
}

pub(crate) use crate::checks::check_axis;

/// Refuse `shape` unless it equals `target` on every axis but `skip`
/// (and has its rank).
pub(crate) fn check_shape_but(
    shape: &[usize],
    target: &[usize],
    skip: Option<usize>,
    name: &str,
) -> Result<()> {
    let ok = shape.len() == target.len()
        && shape
            .iter()
            .zip(target)
            .enumerate()
            .all(|(k, (a, b))| Some(k) == skip || a == b);
    if !ok {
        return Err(Error::Shape {
            operand: name.to_string(),
            shape: shape.to_vec(),
            target: target.to_vec(),
        });
    }
    Ok(())
}

/// The int64 at element `j` of a C-ordered buffer of positions.
#[inline(always)]
pub(crate) fn pos_at(buf: &[u8], j: usize) -> i64 {
    debug_assert!(j * 8 + 8 <= buf.len());
    // SAFETY: the callers index positions below the buffer's element count,
    // so the 8 bytes lie inside `buf`; an unaligned read of plain bytes.
    unsafe { (buf.as_ptr().add(j * 8) as *const i64).read_unaligned() }
}

/// Split `[0, n)` into `parts` ranges whose ends (but the last) are
/// multiples of `grain`.
pub(crate) fn split_range(n: usize, parts: usize, grain: usize) -> Vec<(usize, usize)> {
    let parts = parts.max(1);
    let mut out = Vec::with_capacity(parts);
    let mut lo = 0usize;
    for p in 0..parts {
        let mut hi = if p + 1 == parts {
            n
        } else {
            let raw = (n as u128 * (p as u128 + 1) / parts as u128) as usize;
            raw / grain * grain
        };
        hi = hi.max(lo).min(n);
        out.push((lo, hi));
        lo = hi;
    }
    out
}
