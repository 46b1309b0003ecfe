//! Bit packing: `u32` values of `bits` bits each into a dense stream of
//! `u32` words, and back.
//!
//! The stream is little-endian in bits: bit `j` of value `i` is bit
//! `i·bits + j` of the stream, and stream bit `s` is bit `s mod 32` of word
//! `⌊s / 32⌋`. The last word's bits past the last value are zero. So 32
//! values fill exactly `bits` words: a *block*.
//!
//! The vector paths unpack a block at a time with per-lane shifts and
//! permutes whose indices and counts depend on the width alone (a small
//! plan built once per call): each value's 64-bit window of the two words
//! its bits start in (a permute of a loaded run of words), shifted right by
//! the value's offset, masked to `bits` bits.
//!
//! Packing, unpacking at 16 and 32 bits, the blocks too near the end of the
//! stream for whole-register loads, and the scalar tier go through
//! straight-line code with constant shifts (one function per width,
//! compiled with each tier's instruction set, which the compiler
//! vectorises), and the values past the last whole block one at a time
//! through a 64-bit accumulator. Every path writes the same words:
//! shifts and ors have no rounding, and the tests hold each tier to a
//! bit-at-a-time model.

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
    pack(narrow_path(p), src, bits, &mut dst[..words]);
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

/// Dword lanes of `R`.
const fn lanes32<R: ByteReg>() -> usize {
    R::LANES / 4
}

/// The unpacking plan for one width: the block's values in groups of
/// `lanes32 / 2`, each group read from the run of words at `base[g]`
/// (within the block), the group's value `j` from the 64-bit window of
/// run words `idx[g][2j]`, `idx[g][2j + 1]` shifted right by `shift[g][j]`.
struct UnpackPlan {
    base: [usize; 8],
    idx: [[u32; 16]; 8],
    shift: [[u64; 8]; 8],
    mask: [u32; 16],
}

impl UnpackPlan {
    fn new(bits: usize, group: usize) -> Self {
        let mut p = UnpackPlan {
            base: [0; 8],
            idx: [[0; 16]; 8],
            shift: [[0; 8]; 8],
            mask: [if bits == 32 {
                u32::MAX
            } else {
                (1u32 << bits) - 1
            }; 16],
        };
        for g in 0..BLOCK / group {
            let base = g * group * bits / 32;
            p.base[g] = base;
            for j in 0..group {
                let s = (g * group + j) * bits;
                // The window's two words lie within the run: a group spans
                // at most (24 + group·bits − 1)/32 + 1 ≤ group + 1 words
                // past its base, and runs are 2·group words long.
                p.idx[g][2 * j] = (s / 32 - base) as u32;
                p.idx[g][2 * j + 1] = (s / 32 - base + 1) as u32;
                p.shift[g][j] = (s % 32) as u64;
            }
        }
        p
    }
}

/// Unpack the blocks whose word runs lie inside `src` with the register
/// path; returns the number of blocks done.
///
/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn unpack_blocks_vec<R: ByteReg>(src: &[u32], bits: usize, dst: &mut [u32]) -> usize {
    let l = lanes32::<R>();
    let group = l / 2;
    let groups = BLOCK / group;
    let plan = UnpackPlan::new(bits, group);
    let reach = plan.base[groups - 1] + l;
    let blocks = (dst.len() / BLOCK).min(match src.len().checked_sub(reach) {
        Some(room) => room / bits + 1,
        None => 0,
    });
    // SAFETY: `R`'s instructions run (this function's contract). Block b
    // reads the words b·bits + base[g] .. + l, inside `src` because
    // b·bits + base[g] + l ≤ (blocks − 1)·bits + reach ≤ src.len(); it
    // writes its 32 values at 32·b inside `dst` (b < dst.len() / 32); the
    // plan's arrays hold at least the lanes each load reads.
    unsafe {
        let mask = R::load(plan.mask.as_ptr() as *const u8);
        for b in 0..blocks {
            let words = src.as_ptr().add(b * bits);
            let out = dst.as_mut_ptr().add(b * BLOCK);
            for h in 0..groups / 2 {
                let mut half = [mask; 2];
                for (k, x) in half.iter_mut().enumerate() {
                    let g = 2 * h + k;
                    let run = R::load(words.add(plan.base[g]) as *const u8);
                    let pairs = R::permute_u32(run, R::load(plan.idx[g].as_ptr() as *const u8));
                    *x = R::shr_u64_by(pairs, R::load(plan.shift[g].as_ptr() as *const u8));
                }
                let v = R::and(R::even_u32(half[0], half[1]), mask);
                v.store(out.add(h * l) as *mut u8);
            }
        }
    }
    blocks
}

/// Packing on the register paths: the straight-line per-width code
/// compiled with `R`'s instruction set, which the compiler vectorises (it
/// measured faster than a permute plan at every width).
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
    // Widths of whole half-words: the per-width code is a plain copy of
    // halves, faster than the windows (measured).
    if bits == 0 || bits == 16 || bits == 32 {
        unpack_all(src, bits, dst);
        return;
    }
    // SAFETY: `R`'s instructions run (this function's contract).
    let done = unsafe { unpack_blocks_vec::<R>(src, bits as usize, dst) };
    let head = done * bits as usize;
    unpack_all(&src[head..], bits, &mut dst[done * BLOCK..])
}

/// The path packing runs on: the avx2 build where the tier is avx512. The
/// compiler vectorises the per-width code well for 256-bit registers and
/// poorly for 512-bit ones (measured on a Xeon, 64K values: 2 to 3 times
/// slower at most widths, e.g. 24 bits 2.7 against 6.7 Gvalues/s); an
/// avx512 path runs on a CPU that runs AVX2.
fn narrow_path(p: super::Path) -> super::Path {
    #[cfg(target_arch = "x86_64")]
    if p == super::Path::Avx512 {
        return super::Path::Avx2;
    }
    p
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
