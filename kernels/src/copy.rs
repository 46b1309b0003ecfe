//! Copies whose speed does not hang on where the buffers lie.
//!
//! glibc's `memcpy` copies a block of a few KiB or more by `rep movsb`, and on
//! AMD Zen 3 (EPYC family 19h model 01h, measured) that instruction runs 15
//! to 30 times slower when the destination lies 8 to 31 bytes past the source
//! modulo 4096: blocks of 4 KiB to 256 KiB moved at 2–3 GB/s at such a
//! distance against 40–88 GB/s at any other (a 64-byte distance, say);
//! blocks of 512 KiB and more did not stall there. Two buffers of one size
//! allocated one after the other lie 16 bytes apart modulo 4096 whenever the
//! size is whole pages, so a user's arrays hit this often. The copies here
//! cut a block of 1 KiB to 4 MiB into pieces of 1 KiB, which lie below
//! glibc's default `rep movsb` threshold (2 KiB; tunable, and not measured on
//! other hosts), so glibc copies them by its vector loop, at the same speed
//! at every distance on the host measured; smaller blocks and larger ones go
//! to `memcpy` whole. The bytes are the same either way. Only Zen 3 was
//! measured: on other hosts the pieces cost at most the loop's overhead per
//! KiB, not measured there.

/// Blocks of at most this many bytes are copied whole.
const PIECE: usize = 1024;

/// Blocks above this many bytes are copied whole: on Zen 3 copies of 512 KiB
/// and more did not stall, and past L2 the loop's overhead per piece no
/// longer pays for itself; the bound is a margin above that, not a measured
/// optimum.
const PIECEWISE_MAX: usize = 4 << 20;

/// Copies `len` bytes from `src` to `dst` ([module](self): in pieces of
/// 1 KiB from 1 KiB to 4 MiB).
///
/// # Safety
/// `src` is readable and `dst` writable for `len` bytes, and the two ranges
/// do not overlap.
#[inline]
pub(crate) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    if len <= PIECE || len > PIECEWISE_MAX {
        // SAFETY: this function's contract.
        unsafe { core::ptr::copy_nonoverlapping(src, dst, len) };
        return;
    }
    let mut done = 0;
    while done < len {
        // A length that varies (the last piece) keeps the compiler from
        // joining the pieces back into one `memcpy`.
        let k = (len - done).min(PIECE);
        // SAFETY: [done, done + k) lies inside [0, len) of both ranges
        // (this function's contract).
        unsafe { core::ptr::copy_nonoverlapping(src.add(done), dst.add(done), k) };
        done += k;
    }
}

/// `dst.copy_from_slice(src)`, the same elements, but with blocks of 1 KiB to
/// 4 MiB copied in pieces of 1 KiB ([module](self)), so that its speed does
/// not depend on where the two slices lie modulo a page.
///
/// # Panics
/// Where `dst.len() != src.len()`, as `copy_from_slice` does.
#[inline]
pub fn copy_slice<T: Copy>(dst: &mut [T], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "copy of unequal lengths");
    // SAFETY: both slices hold `len` elements of `T`, so `size_of_val`
    // bytes each; `dst` is borrowed mutably, so it overlaps nothing `src`
    // borrows; `T: Copy`, so a byte copy is a valid copy.
    unsafe {
        copy_bytes(
            src.as_ptr() as *const u8,
            dst.as_mut_ptr() as *mut u8,
            core::mem::size_of_val(src),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length around the piece size and the whole-copy bounds, at four
    /// pairs of source/destination byte offsets (aligned, both odd, one
    /// word-aligned and the other not): the source's bytes, and nothing
    /// written before or after the destination range.
    #[test]
    fn copies_every_byte_whatever_the_length_and_offsets() {
        let lens = [
            0usize,
            1,
            7,
            1023,
            1024,
            1025,
            2047,
            4096,
            4100,
            65_537,
            (4 << 20) - 1,
            4 << 20,
            (4 << 20) + 3,
        ];
        let max = (4 << 20) + 16;
        let src: Vec<u8> = (0..max).map(|i| (i * 131 + i / 251) as u8).collect();
        let mut dst = vec![0u8; max];
        for &len in &lens {
            for (so, d_o) in [(0usize, 0usize), (1, 8), (3, 5), (8, 0)] {
                dst.iter_mut().for_each(|b| *b = 0xA5);
                // SAFETY: `so + len` and `d_o + len` lie within the two
                // buffers of `max` bytes (len ≤ max − 16, offsets < 16),
                // which are distinct allocations.
                unsafe { copy_bytes(src.as_ptr().add(so), dst.as_mut_ptr().add(d_o), len) };
                assert!(dst[..d_o].iter().all(|&b| b == 0xA5), "len {len}: before");
                assert!(
                    dst[d_o..d_o + len] == src[so..so + len],
                    "len {len}, offsets {so}/{d_o}"
                );
                assert!(
                    dst[d_o + len..].iter().all(|&b| b == 0xA5),
                    "len {len}: after"
                );
            }
        }
        let mut a = vec![0u32; 5000];
        let b: Vec<u32> = (0..5000).collect();
        copy_slice(&mut a, &b);
        assert_eq!(a, b);
    }
}
