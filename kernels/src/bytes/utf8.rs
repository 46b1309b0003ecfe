//! UTF-8 validation with the position of the first error.
//!
//! The register path classifies every byte by three 16-entry tables (the
//! high nibble of the byte before it, that byte's low nibble, and its own
//! high nibble), whose AND is non-zero exactly where the pair is not a
//! valid step of UTF-8 (an overlong form, a surrogate, a value above
//! U+10FFFF, a continuation byte where none belongs or a missing one); the
//! bytes two and three places after a three- or four-byte lead must be
//! continuations, which the tables mark and a saturating subtraction
//! expects. A block of ASCII skips the tables. Where a block holds an
//! error, the scalar decoder resumes at the last character boundary before
//! it and finds the exact position, so every tier returns the scalar
//! decoder's answer.

use super::{path, tiered};
use crate::simd::ByteReg;
use crate::{Exec, Result};

/// The length of the longest prefix of `b` that is valid UTF-8: `b.len()`
/// where all of it is, otherwise the offset of the first byte of the first
/// sequence that is invalid or cut short (as `std::str::Utf8Error::valid_up_to`).
///
/// # Errors
/// Only the `Exec`'s: a tier this CPU does not run.
pub fn utf8_valid_up_to(b: &[u8], exec: &Exec) -> Result<usize> {
    Ok(valid_up_to(path(exec)?, b))
}

/// Whether `b` is valid UTF-8 throughout.
///
/// # Errors
/// As [`utf8_valid_up_to`].
pub fn valid_utf8(b: &[u8], exec: &Exec) -> Result<bool> {
    Ok(utf8_valid_up_to(b, exec)? == b.len())
}

/// The scalar decoder: the valid prefix's length.
fn valid_up_to_scalar(b: &[u8]) -> usize {
    let n = b.len();
    let mut i = 0;
    while i < n {
        let c = b[i];
        if c < 0x80 {
            i += 1;
            continue;
        }
        // Length and the range of the second byte, from the lead.
        let (len, lo, hi) = match c {
            0xc2..=0xdf => (2, 0x80, 0xbf),
            0xe0 => (3, 0xa0, 0xbf),
            0xe1..=0xec | 0xee..=0xef => (3, 0x80, 0xbf),
            0xed => (3, 0x80, 0x9f),
            0xf0 => (4, 0x90, 0xbf),
            0xf1..=0xf3 => (4, 0x80, 0xbf),
            0xf4 => (4, 0x80, 0x8f),
            _ => return i,
        };
        if i + 1 >= n || !(lo..=hi).contains(&b[i + 1]) {
            return i;
        }
        for k in 2..len {
            if i + k >= n || b[i + k] & 0xc0 != 0x80 {
                return i;
            }
        }
        i += len;
    }
    n
}

// The error classes of a pair of bytes (a byte and the one before it).
const TOO_SHORT: u8 = 1 << 0; // a lead, then no continuation
const TOO_LONG: u8 = 1 << 1; // ASCII, then a continuation
const OVERLONG_3: u8 = 1 << 2; // E0, then 80..9F
const TOO_LARGE: u8 = 1 << 3; // F4, then 90..BF; F5..FF, then 90..BF
const SURROGATE: u8 = 1 << 4; // ED, then A0..BF
const OVERLONG_2: u8 = 1 << 5; // C0 or C1, then a continuation
const TOO_LARGE_1000: u8 = 1 << 6; // F5..FF, then 80..8F
const OVERLONG_4: u8 = 1 << 6; // F0, then 80..8F
const TWO_CONTS: u8 = 1 << 7; // a continuation, then a continuation
const CARRY: u8 = TOO_SHORT | TOO_LONG | TWO_CONTS;

/// By the high nibble of the byte before.
const PREV_HIGH: [u8; 16] = [
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TWO_CONTS,
    TWO_CONTS,
    TWO_CONTS,
    TWO_CONTS,
    TOO_SHORT | OVERLONG_2,
    TOO_SHORT,
    TOO_SHORT | OVERLONG_3 | SURROGATE,
    TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
];

/// By the low nibble of the byte before.
const PREV_LOW: [u8; 16] = [
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,
    CARRY | OVERLONG_2,
    CARRY,
    CARRY,
    CARRY | TOO_LARGE,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
];

/// By the byte's own high nibble.
const CUR_HIGH: [u8; 16] = [
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
];

/// The largest byte that completes its sequence within a block, by its
/// place from the block's end (the last 64 bytes; a block of `L` lanes
/// reads the last `L`): a lead in the last three places starts a sequence
/// the block cannot hold.
const LAST_COMPLETE: [u8; 64] = {
    let mut t = [0xff; 64];
    t[61] = 0xef;
    t[62] = 0xdf;
    t[63] = 0xbf;
    t
};

/// The last character boundary at or before `i`, for a prefix `b[..i]`
/// whose sequences that end before `i` are valid: back over at most three
/// continuation bytes to their lead.
fn boundary_before(b: &[u8], i: usize) -> usize {
    let mut r = i;
    while r > 0 && i - r < 3 && b[r - 1] & 0xc0 == 0x80 {
        r -= 1;
    }
    if r > 0 && b[r - 1] >= 0xc0 {
        r -= 1;
    }
    r
}

/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn valid_up_to_vec<R: ByteReg>(b: &[u8]) -> usize {
    let l = R::LANES;
    let n = b.len();
    let p = b.as_ptr();
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; every load reads l bytes
    // from an offset at most n − l, or from LAST_COMPLETE's last l bytes.
    unsafe {
        let (t1h, t1l, t2h) = (
            R::table16(&PREV_HIGH),
            R::table16(&PREV_LOW),
            R::table16(&CUR_HIGH),
        );
        let last = R::load(LAST_COMPLETE.as_ptr().add(64 - l));
        let (third, fourth, top) = (R::set1(0xe0 - 0x80), R::set1(0xf0 - 0x80), R::set1(0x80));
        let mut prev = R::set1(0);
        // Whether the previous block ends inside a sequence.
        let mut open = false;
        // Whether the previous block was all ASCII.
        let mut ascii = true;
        while i + l <= n {
            // After a block of ASCII, four registers at a time while they
            // stay ASCII (no sequence is open then).
            if ascii && i + 4 * l <= n {
                let last4 = R::load(p.add(i + 3 * l));
                let any = R::or(
                    R::or(R::load(p.add(i)), R::load(p.add(i + l))),
                    R::or(R::load(p.add(i + 2 * l)), last4),
                );
                if R::high_bits(any) == 0 {
                    prev = last4;
                    i += 4 * l;
                    continue;
                }
            }
            let x = R::load(p.add(i));
            ascii = R::high_bits(x) == 0;
            if ascii {
                if open {
                    break;
                }
            } else {
                let p1 = R::prev1(x, prev);
                let sc = R::and(
                    R::and(
                        R::lookup16(t1h, R::high_nibbles(p1)),
                        R::lookup16(t1l, R::low_nibbles(p1)),
                    ),
                    R::lookup16(t2h, R::high_nibbles(x)),
                );
                let must = R::or(
                    R::subs(R::prev2(x, prev), third),
                    R::subs(R::prev3(x, prev), fourth),
                );
                if R::any(R::xor(R::and(must, top), sc)) {
                    break;
                }
            }
            open = R::any(R::subs(x, last));
            prev = x;
            i += l;
        }
    }
    // An error in the block at i (or the tail): every sequence that ends
    // before i is valid; the scalar decoder resumes at the boundary.
    let r = boundary_before(b, i);
    r + valid_up_to_scalar(&b[r..])
}

tiered! {
    fn valid_up_to(b: &[u8]) -> usize {
        vector: valid_up_to_vec, scalar: valid_up_to_scalar
    }
}
