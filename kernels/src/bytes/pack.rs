//! Bit packing: `u32` values of `bits` bits each into a dense stream of
//! `u32` words, and back.
//!
//! The stream is little-endian in bits: bit `j` of value `i` is bit
//! `i·bits + j` of the stream, and stream bit `s` is bit `s mod 32` of word
//! `⌊s / 32⌋`. The last word's bits past the last value are zero. So 32
//! values fill exactly `bits` words, and a block of 32 values is packed (and
//! unpacked) by straight-line code whose shifts are constants: one function
//! per width, chosen once per call, compiled for each instruction set the
//! byte engine runs (the compiler vectorises it where it can). The values
//! past the last whole block go one at a time through a 64-bit
//! accumulator. Every path writes the same words: shifts and ors have no
//! rounding, and the tests hold each tier to a bit-at-a-time model.

use super::{path, tiered};
use crate::simd::ByteReg;
use crate::{Error, Exec, Result};

/// The number of words that `n` values of `bits` bits fill:
/// ⌈n·bits / 32⌉ (0 for `bits` = 0).
///
/// # Errors
/// [`Error::Attribute`] for `bits` above 32; [`Error::Overflow`] where
/// n·bits does not fit a `usize`.
pub fn bit_packed_words(n: usize, bits: u32) -> Result<usize> {
    check_bits(bits)?;
    n.checked_mul(bits as usize)
        .map(|b| b.div_ceil(32))
        .ok_or_else(|| Error::Overflow {
            operand: "bit-packed length".into(),
        })
}

/// Pack `src` (each value below 2^`bits`) into the front of `dst`, `bits`
/// bits per value in the module's stream order; returns the words written,
/// [`bit_packed_words`]`(src.len(), bits)`. With `bits` = 0 every value
/// must be 0 and nothing is written.
///
/// # Errors
/// [`Error::Attribute`] for `bits` above 32; [`Error::Encoding`] (format
/// `bit-pack`, `offset` the position of the value) where a value needs more
/// than `bits` bits; [`Error::Length`] where `dst` holds fewer words than
/// the result; the `Exec`'s. Each before any write.
pub fn bit_pack_u32(src: &[u32], bits: u32, dst: &mut [u32], exec: &Exec) -> Result<usize> {
    let p = path(exec)?;
    let words = bit_packed_words(src.len(), bits)?;
    if bits < 32 {
        let wide = src.iter().fold(0u32, |a, &v| a | v);
        if wide >> bits != 0 {
            let at = src.iter().position(|&v| v >> bits != 0).unwrap_or(0);
            return Err(Error::Encoding {
                format: "bit-pack",
                offset: at,
                reason: format!("value {} needs more than {bits} bits", src[at]),
            });
        }
    }
    if dst.len() < words {
        return Err(Error::Length {
            operand: "dst (packed words)".into(),
            len: dst.len(),
            expected: words,
            unit: "words",
        });
    }
    pack(p, src, bits, &mut dst[..words]);
    Ok(words)
}

/// Unpack `dst.len()` values of `bits` bits each from the stream `src`
/// (the module's order), into `dst`. `src` needs
/// [`bit_packed_words`]`(dst.len(), bits)` words; more are not read. With
/// `bits` = 0 every value is 0.
///
/// # Errors
/// [`Error::Attribute`] for `bits` above 32; [`Error::Length`] where `src`
/// is shorter than the values need; the `Exec`'s. Each before any write.
pub fn bit_unpack_u32(src: &[u32], bits: u32, dst: &mut [u32], exec: &Exec) -> Result<()> {
    let p = path(exec)?;
    let words = bit_packed_words(dst.len(), bits)?;
    if src.len() < words {
        return Err(Error::Length {
            operand: "src (packed words)".into(),
            len: src.len(),
            expected: words,
            unit: "words",
        });
    }
    unpack(p, &src[..words], bits, dst);
    Ok(())
}

fn check_bits(bits: u32) -> Result<()> {
    if bits > 32 {
        return Err(Error::Attribute {
            name: "bits (bit packing)".into(),
            reason: format!("{bits} is above 32"),
        });
    }
    Ok(())
}

/// Values per block: a block of `bits`-bit values fills `bits` words.
const BLOCK: usize = 32;

/// `$body` 32 times with `$i` bound to 0, 1, …, 31: straight-line code
/// whose indices and shifts are constants once the width is.
macro_rules! unroll32 {
    ($i:ident => $body:block) => {
        unroll32!(@ $i $body; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15
                  16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)
    };
    (@ $i:ident $body:block; $($n:literal)*) => {
        $( { let $i: usize = $n; $body } )*
    };
}

/// Pack one block of 32 values into `bits` = `B` words: value i's bits
/// start at bit i·B, in word i·B/32 at shift i·B mod 32, its high part
/// (where it straddles) in the next word.
#[inline(always)]
fn pack_block<const B: usize>(v: &[u32], w: &mut [u32]) {
    if B == 0 {
        return;
    }
    let v: &[u32; BLOCK] = v[..BLOCK].try_into().unwrap();
    let mut out = [0u32; 32];
    unroll32!(i => {
        let s = i * B;
        let (k, sh) = (s / 32, s % 32);
        out[k] |= v[i] << sh;
        if sh + B > 32 {
            out[k + 1] |= v[i] >> (32 - sh);
        }
    });
    w[..B].copy_from_slice(&out[..B]);
}

/// Unpack one block of 32 values from `bits` = `B` words.
#[inline(always)]
fn unpack_block<const B: usize>(w: &[u32], v: &mut [u32]) {
    let v: &mut [u32; BLOCK] = (&mut v[..BLOCK]).try_into().unwrap();
    if B == 0 {
        *v = [0; BLOCK];
        return;
    }
    let mut words = [0u32; 33];
    words[..B].copy_from_slice(&w[..B]);
    let mask = if B == 32 { u32::MAX } else { (1u32 << B) - 1 };
    unroll32!(i => {
        let s = i * B;
        let (k, sh) = (s / 32, s % 32);
        let lo = words[k] >> sh;
        let hi = if sh + B > 32 { words[k + 1] << (32 - sh) } else { 0 };
        v[i] = (lo | hi) & mask;
    });
}

/// `$f::<B>($args)` for the runtime width `$bits` (0 to 32).
macro_rules! by_width {
    ($bits:expr, $f:ident, $($a:expr),*) => {
        match $bits {
            0 => $f::<0>($($a),*), 1 => $f::<1>($($a),*), 2 => $f::<2>($($a),*),
            3 => $f::<3>($($a),*), 4 => $f::<4>($($a),*), 5 => $f::<5>($($a),*),
            6 => $f::<6>($($a),*), 7 => $f::<7>($($a),*), 8 => $f::<8>($($a),*),
            9 => $f::<9>($($a),*), 10 => $f::<10>($($a),*), 11 => $f::<11>($($a),*),
            12 => $f::<12>($($a),*), 13 => $f::<13>($($a),*), 14 => $f::<14>($($a),*),
            15 => $f::<15>($($a),*), 16 => $f::<16>($($a),*), 17 => $f::<17>($($a),*),
            18 => $f::<18>($($a),*), 19 => $f::<19>($($a),*), 20 => $f::<20>($($a),*),
            21 => $f::<21>($($a),*), 22 => $f::<22>($($a),*), 23 => $f::<23>($($a),*),
            24 => $f::<24>($($a),*), 25 => $f::<25>($($a),*), 26 => $f::<26>($($a),*),
            27 => $f::<27>($($a),*), 28 => $f::<28>($($a),*), 29 => $f::<29>($($a),*),
            30 => $f::<30>($($a),*), 31 => $f::<31>($($a),*), _ => $f::<32>($($a),*),
        }
    };
}

/// Every whole block at width `B`.
#[inline(always)]
fn pack_blocks<const B: usize>(src: &[u32], dst: &mut [u32]) {
    for (v, w) in src.chunks_exact(BLOCK).zip(dst.chunks_exact_mut(B.max(1))) {
        pack_block::<B>(v, w);
    }
}

#[inline(always)]
fn unpack_blocks<const B: usize>(src: &[u32], dst: &mut [u32]) {
    if B == 0 {
        dst.fill(0);
        return;
    }
    for (w, v) in src.chunks_exact(B).zip(dst.chunks_exact_mut(BLOCK)) {
        unpack_block::<B>(w, v);
    }
}

/// The whole stream: blocks, then the tail one value at a time.
/// `dst.len()` is exactly the packed length.
#[inline(always)]
fn pack_all(src: &[u32], bits: u32, dst: &mut [u32]) {
    let whole = src.len() / BLOCK * BLOCK;
    let head = whole / BLOCK * bits as usize;
    by_width!(bits, pack_blocks, &src[..whole], &mut dst[..head]);
    let mut acc = 0u64;
    let mut fill = 0u32;
    let mut k = head;
    for &x in &src[whole..] {
        acc |= (x as u64) << fill;
        fill += bits;
        if fill >= 32 {
            dst[k] = acc as u32;
            k += 1;
            acc >>= 32;
            fill -= 32;
        }
    }
    if fill > 0 {
        dst[k] = acc as u32;
    }
}

/// `src.len()` is exactly the packed length of `dst.len()` values.
#[inline(always)]
fn unpack_all(src: &[u32], bits: u32, dst: &mut [u32]) {
    if bits == 0 {
        dst.fill(0);
        return;
    }
    let whole = dst.len() / BLOCK * BLOCK;
    let head = whole / BLOCK * bits as usize;
    let (dh, dt) = dst.split_at_mut(whole);
    by_width!(bits, unpack_blocks, &src[..head], dh);
    let mask = if bits == 32 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    for (i, x) in dt.iter_mut().enumerate() {
        let s = i * bits as usize;
        let (k, sh) = (head + s / 32, s % 32);
        let lo = src[k] as u64;
        let hi = if sh + bits as usize > 32 {
            (src[k + 1] as u64) << 32
        } else {
            0
        };
        *x = (((lo | hi) >> sh) & mask) as u32;
    }
}

/// The register paths compile the same code under their instruction sets
/// (`R` picks the set; the code is scalar Rust the compiler vectorises).
///
/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn pack_vec<R: ByteReg>(src: &[u32], bits: u32, dst: &mut [u32]) {
    pack_all(src, bits, dst)
}

/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn unpack_vec<R: ByteReg>(src: &[u32], bits: u32, dst: &mut [u32]) {
    unpack_all(src, bits, dst)
}

tiered! {
    fn pack(src: &[u32], bits: u32, dst: &mut [u32]) -> () {
        vector: pack_vec, scalar: pack_all
    }
}

tiered! {
    fn unpack(src: &[u32], bits: u32, dst: &mut [u32]) -> () {
        vector: unpack_vec, scalar: unpack_all
    }
}
