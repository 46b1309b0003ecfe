//! Bit counts: the set bits of a byte string, and the differing bits of two.

use super::{path, tiered};
use crate::simd::ByteReg;
use crate::{Exec, Result};

/// The number of set bits in `b`.
///
/// # Errors
/// Only the `Exec`'s: a tier this CPU does not run.
pub fn popcount(b: &[u8], exec: &Exec) -> Result<u64> {
    Ok(ones(path(exec)?, b, None))
}

/// The number of bits in which `a` and `b` differ, over the shorter of the
/// two (the longer one's extra bytes are not counted).
///
/// # Errors
/// As [`popcount`].
pub fn hamming(a: &[u8], b: &[u8], exec: &Exec) -> Result<u64> {
    let n = a.len().min(b.len());
    Ok(ones(path(exec)?, &a[..n], Some(&b[..n])))
}

/// [`hamming`] of two bit vectors held as `u64` words, over the shorter.
///
/// # Errors
/// As [`popcount`].
pub fn hamming_words(a: &[u64], b: &[u64], exec: &Exec) -> Result<u64> {
    let n = a.len().min(b.len());
    // SAFETY: a u64 slice's memory is 8·len initialised bytes, readable for
    // as long as the borrow; u8 needs no alignment.
    let (a, b) = unsafe {
        (
            core::slice::from_raw_parts(a.as_ptr() as *const u8, 8 * n),
            core::slice::from_raw_parts(b.as_ptr() as *const u8, 8 * n),
        )
    };
    Ok(ones(path(exec)?, a, Some(b)))
}

/// Set bits per nibble value.
const NIBBLE_ONES: [u8; 16] = [0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4];

/// The register at `pa + at`, XORed with the one at `pb + at` where given.
///
/// # Safety
/// The CPU runs `R`'s instructions; `R::LANES` bytes are readable from each
/// address.
#[inline(always)]
unsafe fn word<R: ByteReg>(pa: *const u8, pb: Option<*const u8>, at: usize) -> R {
    // SAFETY: the caller's contract.
    unsafe {
        let x = R::load(pa.add(at));
        match pb {
            Some(pb) => R::xor(x, R::load(pb.add(at))),
            None => x,
        }
    }
}

/// The set bits of each lane of `x` (`t` the table of [`NIBBLE_ONES`]).
///
/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn ones_of<R: ByteReg>(t: R, x: R) -> R {
    // SAFETY: the caller's contract.
    unsafe {
        R::add(
            R::lookup16(t, R::low_nibbles(x)),
            R::lookup16(t, R::high_nibbles(x)),
        )
    }
}

/// # Safety
/// The CPU runs `R`'s instructions; `b`, where given, is as long as `a`.
#[inline(always)]
unsafe fn ones_vec<R: ByteReg>(a: &[u8], b: Option<&[u8]>) -> u64 {
    let l = R::LANES;
    let n = a.len();
    let pa = a.as_ptr();
    let pb = b.map(|b| b.as_ptr());
    let mut total = 0u64;
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; every load reads l bytes
    // of each operand from an offset at most n − l.
    unsafe {
        let t = R::table16(&NIBBLE_ONES);
        while i + l <= n {
            // Up to 30 registers per byte counter (≤ 8 each: ≤ 240).
            let mut acc = R::set1(0);
            let mut k = 0;
            while k < 30 && i + 2 * l <= n {
                acc = R::add(
                    acc,
                    R::add(ones_of(t, word(pa, pb, i)), ones_of(t, word(pa, pb, i + l))),
                );
                i += 2 * l;
                k += 2;
            }
            if k == 0 {
                acc = ones_of(t, word(pa, pb, i));
                i += l;
            }
            total += R::sum(acc);
        }
    }
    total + ones_scalar(&a[i..], b.map(|b| &b[i..]))
}

fn ones_scalar(a: &[u8], b: Option<&[u8]>) -> u64 {
    match b {
        Some(b) => a
            .iter()
            .zip(b)
            .map(|(x, y)| (x ^ y).count_ones() as u64)
            .sum(),
        None => a.iter().map(|x| x.count_ones() as u64).sum(),
    }
}

tiered! {
    fn ones(a: &[u8], b: Option<&[u8]>) -> u64 {
        vector: ones_vec, scalar: ones_scalar
    }
}
