//! Sub-byte operands: gather a tile of values into one code per byte (or the
//! element bytes of unpacked operands), run the contiguous kernel on the tile,
//! and scatter the result back, packing it into its bytes.

use super::plan::{Addr, Plan, OUT};
use crate::{Args, LoopFn};

/// Values per tile: an f32 tile (16 KiB) stays in L1, the widest (c128) in L2.
const TILE: usize = 4096;
/// The largest element (c128).
const MAX_ITEM: usize = 16;

/// Read the value at element position `p` of `a` into `dst` (its item bytes, or
/// its code in one byte for packed dtypes).
///
/// # Safety
/// `p` must be a valid element position of `a`.
pub(crate) unsafe fn gather(a: &Addr, p: isize, dst: &mut [u8]) {
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
pub(crate) unsafe fn scatter(a: &Addr, p: isize, src: &[u8]) {
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
/// Positions `p0 .. p0 + len` (where `stride` is 1) must lie inside the
/// validated operand, and `dst` hold `len` items (codes or elements).
pub(crate) unsafe fn gather_run(
    a: &Addr,
    p0: isize,
    stride: isize,
    len: usize,
    dst: &mut [u8],
) -> bool {
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
    let first = p0 as usize / a.vpb;
    // SAFETY: bytes `first..first + len / vpb` hold the run.
    let bytes = unsafe { core::slice::from_raw_parts(a.base.add(first), len / a.vpb) };
    unpack(bytes, a.bits, a.vpb, &mut dst[..len]);
    true
}

/// Split packed bytes into one code per byte, element 0 in the most
/// significant bits; `dst` holds `src.len() * vpb` codes.
pub(crate) fn unpack(src: &[u8], bits: u32, vpb: usize, dst: &mut [u8]) {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if vpb == 2 && bits == 4 {
        done = x86::unpack_nibbles(src, dst);
    } else if vpb == 8 && bits == 1 {
        done = x86::unpack_bits(src, dst);
    }
    let mask = ((1u16 << bits) - 1) as u8;
    for (j, &byte) in src.iter().enumerate().skip(done) {
        for q in 0..vpb {
            dst[j * vpb + q] = (byte >> ((vpb - 1 - q) as u32 * bits)) & mask;
        }
    }
}

/// Join one code per byte (the low `bits` of each) into packed bytes, element 0
/// in the most significant bits; `src` holds `dst.len() * vpb` codes.
pub(crate) fn pack(src: &[u8], bits: u32, vpb: usize, dst: &mut [u8]) {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if vpb == 2 && bits == 4 {
        done = x86::pack_nibbles(src, dst);
    } else if vpb == 8 && bits == 1 {
        done = x86::pack_bits(src, dst);
    }
    let mask = ((1u16 << bits) - 1) as u8;
    for (j, d) in dst.iter_mut().enumerate().skip(done) {
        let mut byte = 0u8;
        for q in 0..vpb {
            byte |= (src[j * vpb + q] & mask) << ((vpb - 1 - q) as u32 * bits);
        }
        *d = byte;
    }
}

/// SSE2 (part of every x86-64) forms of the two common packings. Each returns
/// how many packed bytes it handled; the caller finishes the rest.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    /// Bytes → two 4-bit codes each, 16 bytes at a time.
    pub(super) fn unpack_nibbles(src: &[u8], dst: &mut [u8]) -> usize {
        let n = src.len() / 16 * 16;
        assert!(dst.len() >= 2 * n);
        let mut j = 0;
        while j < n {
            // SAFETY: SSE2 is part of x86-64; bytes j..j+16 of src and
            // 2j..2j+32 of dst are in bounds (j + 16 <= n, dst.len() >= 2n).
            unsafe {
                let x = _mm_loadu_si128(src.as_ptr().add(j) as *const __m128i);
                let low = _mm_set1_epi8(0x0f);
                let hi = _mm_and_si128(_mm_srli_epi16::<4>(x), low);
                let lo = _mm_and_si128(x, low);
                let d = dst.as_mut_ptr().add(2 * j) as *mut __m128i;
                _mm_storeu_si128(d, _mm_unpacklo_epi8(hi, lo));
                _mm_storeu_si128(d.add(1), _mm_unpackhi_epi8(hi, lo));
            }
            j += 16;
        }
        n
    }

    /// Two 4-bit codes → one byte, 32 codes at a time.
    pub(super) fn pack_nibbles(src: &[u8], dst: &mut [u8]) -> usize {
        let n = dst.len() / 16 * 16;
        assert!(src.len() >= 2 * n);
        let mut j = 0;
        while j < n {
            // SAFETY: SSE2 is part of x86-64; codes 2j..2j+32 of src and bytes
            // j..j+16 of dst are in bounds.
            unsafe {
                let s = src.as_ptr().add(2 * j) as *const __m128i;
                let low = _mm_set1_epi16(0x0f);
                // Each 16-bit lane holds code 2i (low byte) and code 2i+1 (high byte).
                let join = |v: __m128i| {
                    _mm_or_si128(
                        _mm_slli_epi16::<4>(_mm_and_si128(v, low)),
                        _mm_and_si128(_mm_srli_epi16::<8>(v), low),
                    )
                };
                let a = join(_mm_loadu_si128(s));
                let b = join(_mm_loadu_si128(s.add(1)));
                _mm_storeu_si128(
                    dst.as_mut_ptr().add(j) as *mut __m128i,
                    _mm_packus_epi16(a, b),
                );
            }
            j += 16;
        }
        n
    }

    /// Bytes → eight 1-bit codes each (most significant bit first), two bytes
    /// (16 codes) at a time.
    pub(super) fn unpack_bits(src: &[u8], dst: &mut [u8]) -> usize {
        let n = src.len() / 2 * 2;
        assert!(dst.len() >= 8 * n);
        let mut j = 0;
        while j < n {
            let pair = u16::from_le_bytes([src[j], src[j + 1]]);
            // SAFETY: SSE2 is part of x86-64; codes 8j..8j+16 of dst are in bounds.
            unsafe {
                let x = _mm_cvtsi32_si128(pair as i32);
                // b0 b1 → b0 b0 b1 b1 → b0×4 b1×4 → b0×8 b1×8.
                let x = _mm_unpacklo_epi8(x, x);
                let x = _mm_unpacklo_epi16(x, x);
                let x = _mm_unpacklo_epi32(x, x);
                // Code q of a byte is its bit 7 - q.
                let bit = _mm_set_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
                let set = _mm_cmpeq_epi8(_mm_and_si128(x, bit), bit);
                let codes = _mm_and_si128(set, _mm_set1_epi8(1));
                _mm_storeu_si128(dst.as_mut_ptr().add(8 * j) as *mut __m128i, codes);
            }
            j += 2;
        }
        n
    }

    /// Eight 1-bit codes → one byte (the first in the most significant bit),
    /// 16 codes at a time.
    pub(super) fn pack_bits(src: &[u8], dst: &mut [u8]) -> usize {
        let n = dst.len() / 2 * 2;
        assert!(src.len() >= 8 * n);
        let mut j = 0;
        while j < n {
            // SAFETY: SSE2 is part of x86-64; codes 8j..8j+16 of src are in bounds.
            let m = unsafe {
                let v = _mm_loadu_si128(src.as_ptr().add(8 * j) as *const __m128i);
                let w = _mm_and_si128(v, _mm_set1_epi8(1));
                // In each 16-bit lane (codes lo, hi): swap the two bytes and move
                // each code to its byte's top bit: (hi << 7) | (lo << 15).
                let w = _mm_or_si128(
                    _mm_and_si128(_mm_srli_epi16::<1>(w), _mm_set1_epi16(0x80)),
                    _mm_slli_epi16::<15>(w),
                );
                // Reverse the four lanes of each 8-byte half: each half's bytes
                // now run from its last code to its first.
                let w = _mm_shufflelo_epi16::<0x1b>(w);
                let w = _mm_shufflehi_epi16::<0x1b>(w);
                // Bit i of the mask is byte i's top bit: code 7 - i of its half.
                _mm_movemask_epi8(w) as u16
            };
            dst[j..j + 2].copy_from_slice(&m.to_le_bytes());
            j += 2;
        }
        n
    }
}

/// Scatter `len` values to position `p0` at unit stride in one pass (whole
/// bytes for a packed destination); false when the run is not of that shape.
///
/// # Safety
/// Positions `p0 .. p0 + len` (where `stride` is 1) must lie inside the
/// validated destination, written by no other thread, and `src` hold `len`
/// items (codes or elements).
pub(crate) unsafe fn scatter_run(
    a: &Addr,
    p0: isize,
    stride: isize,
    len: usize,
    src: &[u8],
) -> bool {
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
    let first = p0 as usize / a.vpb;
    // SAFETY: bytes `first..first + len / vpb` are wholly inside the run, which
    // this thread alone writes.
    let bytes = unsafe { core::slice::from_raw_parts_mut(a.base.add(first), len / a.vpb) };
    pack(&src[..len], a.bits, a.vpb, bytes);
    true
}

/// Run rows `r0..r1` of a plan with a packed operand through tiles.
///
/// # Safety
/// The plan's operands must be valid for every position rows `r0..r1`
/// visit (the caller's validation), no other thread writes those rows of
/// the destination, and `contig` is the call's contiguous kernel for the
/// operands' dtypes (on codes one per byte for packed ones), which this CPU
/// runs.
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
            let mut args = Args {
                n: len,
                src: [core::ptr::null(); 3],
                src_stride: [1; 3],
                dst: out.as_mut_ptr(),
                dst_stride: 1,
            };
            for k in 0..arity {
                let a = &plan.addr[k];
                let p0 = pos[k] + i0 as isize * s[k];
                if a.vpb == 1 && s[k] == 1 {
                    // A unit-stride unpacked run is read where it lies.
                    // SAFETY: p0 is an element position of the validated operand.
                    args.src[k] = unsafe { a.base.offset(p0 * a.item as isize) };
                    continue;
                }
                let item = if a.vpb > 1 { 1 } else { a.item };
                let buf = &mut ins[k * TILE * MAX_ITEM..];
                // SAFETY: positions inside the row of a validated operand.
                if !unsafe { gather_run(a, p0, s[k], len, buf) } {
                    for i in 0..len {
                        let p = pos[k] + (i0 + i) as isize * s[k];
                        // SAFETY: position p lies in the row of the validated operand.
                        unsafe { gather(a, p, &mut buf[i * item..i * item + item.max(1)]) };
                    }
                }
                args.src[k] = buf.as_ptr();
            }
            let o = &plan.addr[OUT];
            let p0 = pos[OUT] + i0 as isize * s[OUT];
            let direct = o.vpb == 1 && s[OUT] == 1;
            if direct {
                // SAFETY: p0 is an element position of the validated destination.
                args.dst = unsafe { o.base.offset(p0 * o.item as isize) };
            }
            // SAFETY: every source pointer and the destination hold `len`
            // elements (tile buffers or unit-stride runs of validated operands).
            unsafe { contig(&args) };
            let item = if o.vpb > 1 { 1 } else { o.item };
            // SAFETY: positions inside the row of the validated destination.
            if !direct && !unsafe { scatter_run(o, p0, s[OUT], len, out) } {
                for i in 0..len {
                    let p = pos[OUT] + (i0 + i) as isize * s[OUT];
                    // SAFETY: position p lies in the row of the validated destination.
                    unsafe { scatter(o, p, &out[i * item..i * item + item]) };
                }
            }
            i0 += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{pack, unpack};

    /// Code `i` of packed bytes, read one at a time (the layout rule itself).
    fn code(bytes: &[u8], bits: u32, vpb: usize, i: usize) -> u8 {
        let shift = (vpb - 1 - i % vpb) as u32 * bits;
        (bytes[i / vpb] >> shift) & ((1u16 << bits) - 1) as u8
    }

    #[test]
    fn unpack_and_pack_follow_the_layout_rule() {
        for (bits, vpb) in [(4u32, 2usize), (1, 8), (2, 4)] {
            for len in 0..70 {
                // Every byte value appears across the lengths and offsets.
                let bytes: Vec<u8> = (0..len).map(|j| (j * 37 + len * 11) as u8).collect();
                let mut codes = vec![0xaau8; len * vpb];
                unpack(&bytes, bits, vpb, &mut codes);
                for (i, &c) in codes.iter().enumerate() {
                    assert_eq!(
                        c,
                        code(&bytes, bits, vpb, i),
                        "bits {bits} len {len} code {i}"
                    );
                }
                // Junk above the low bits must be ignored when packing.
                let dirty: Vec<u8> = codes.iter().map(|&c| c | (0xf0u8 << bits)).collect();
                let mut back = vec![0x55u8; len];
                pack(&dirty, bits, vpb, &mut back);
                assert_eq!(back, bytes, "bits {bits} len {len}");
            }
        }
        let all: Vec<u8> = (0..=255).collect();
        let mut codes = vec![0; 256 * 8];
        unpack(&all, 1, 8, &mut codes);
        let mut back = vec![0; 256];
        pack(&codes, 1, 8, &mut back);
        assert_eq!(back, all);
    }
}
