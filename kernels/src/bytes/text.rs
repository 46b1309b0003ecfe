//! ASCII: the first non-ASCII unit, case mapping and folding, byte
//! replacement.

use super::{length_error, path, tiered};
use crate::simd::ByteReg;
use crate::{Exec, Result};

/// Whether every byte of `b` is below 0x80.
///
/// # Errors
/// Only the `Exec`'s: a tier this CPU does not run.
pub fn is_ascii(b: &[u8], exec: &Exec) -> Result<bool> {
    Ok(index_non_ascii(b, exec)? == b.len())
}

/// The position of the first byte at or above 0x80, or `b.len()` where
/// there is none (the length of the leading ASCII run).
///
/// # Errors
/// As [`is_ascii`].
pub fn index_non_ascii(b: &[u8], exec: &Exec) -> Result<usize> {
    Ok(non_ascii(path(exec)?, b, 0x8080))
}

/// The position of the first UTF-16 unit at or above 0x80, or `u.len()`.
///
/// # Errors
/// As [`is_ascii`].
pub fn index_non_ascii16(u: &[u16], exec: &Exec) -> Result<usize> {
    // SAFETY: a u16 slice's memory is 2·len initialised bytes, readable for
    // as long as the borrow; u8 needs no alignment.
    let b = unsafe { core::slice::from_raw_parts(u.as_ptr() as *const u8, 2 * u.len()) };
    // A unit is non-ASCII where its low byte has its top bit or its high
    // byte any bit: in memory order (little-endian), bytes masked by 0x80
    // and 0xff alternately; the unit of the first byte flagged.
    let at = non_ascii(
        path(exec)?,
        b,
        if cfg!(target_endian = "little") {
            0xff80
        } else {
            0x80ff
        },
    );
    Ok(at / 2)
}

/// `src` with `a`–`z` mapped to `A`–`Z` into `dst` (every other byte as it
/// is).
///
/// # Errors
/// [`Error::Length`](crate::Error::Length) where `dst` is not as long as
/// `src` (nothing written); the `Exec`'s.
pub fn to_upper_ascii(src: &[u8], dst: &mut [u8], exec: &Exec) -> Result<()> {
    case(src, dst, b'a', exec)
}

/// `src` with `A`–`Z` mapped to `a`–`z` into `dst`.
///
/// # Errors
/// As [`to_upper_ascii`].
pub fn to_lower_ascii(src: &[u8], dst: &mut [u8], exec: &Exec) -> Result<()> {
    case(src, dst, b'A', exec)
}

fn case(src: &[u8], dst: &mut [u8], from: u8, exec: &Exec) -> Result<()> {
    let p = path(exec)?;
    if dst.len() != src.len() {
        return Err(length_error("dst", dst.len(), src.len()));
    }
    map_bytes(p, src, dst, Map::Case(from));
    Ok(())
}

/// Whether `a` and `b` are equal once `A`–`Z` are mapped to `a`–`z` in both
/// (ASCII case folding; every other byte compared as it is).
///
/// # Errors
/// As [`is_ascii`].
pub fn equal_fold_ascii(a: &[u8], b: &[u8], exec: &Exec) -> Result<bool> {
    let p = path(exec)?;
    Ok(a.len() == b.len() && fold_prefix(p, a, b) == a.len())
}

/// `src` with every `old` byte replaced by `new`, into `dst`.
///
/// # Errors
/// As [`to_upper_ascii`].
pub fn replace_byte(src: &[u8], dst: &mut [u8], old: u8, new: u8, exec: &Exec) -> Result<()> {
    let p = path(exec)?;
    if dst.len() != src.len() {
        return Err(length_error("dst", dst.len(), src.len()));
    }
    map_bytes(p, src, dst, Map::Replace(old, new));
    Ok(())
}

/// The pattern `m` (two bytes, low first in memory) repeated: the first
/// byte `x` with `x & pattern != 0`.
///
/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn non_ascii_vec<R: ByteReg>(b: &[u8], m: u16) -> usize {
    let l = R::LANES;
    let n = b.len();
    let p = b.as_ptr();
    let pattern: [u8; 16] = core::array::from_fn(|i| m.to_le_bytes()[i % 2]);
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; every load reads l bytes
    // from an offset at most n − l (an even offset: l is even).
    unsafe {
        let mask = R::table16(&pattern);
        while i + 4 * l <= n {
            let x = R::or(
                R::or(R::load(p.add(i)), R::load(p.add(i + l))),
                R::or(R::load(p.add(i + 2 * l)), R::load(p.add(i + 3 * l))),
            );
            if R::any(R::and(x, mask)) {
                break;
            }
            i += 4 * l;
        }
        while i + l <= n {
            let hit = R::nonzero_bits(R::and(R::load(p.add(i)), mask));
            if hit != 0 {
                return i + hit.trailing_zeros() as usize;
            }
            i += l;
        }
    }
    i + non_ascii_scalar(&b[i..], m)
}

fn non_ascii_scalar(b: &[u8], m: u16) -> usize {
    let mb = m.to_le_bytes();
    b.iter()
        .enumerate()
        .position(|(k, &x)| x & mb[k % 2] != 0)
        .unwrap_or(b.len())
}

tiered! {
    fn non_ascii(b: &[u8], m: u16) -> usize {
        vector: non_ascii_vec, scalar: non_ascii_scalar
    }
}

/// A byte-to-byte map.
#[derive(Clone, Copy)]
enum Map {
    /// Bytes from `from` to `from + 25` get bit 5 flipped (`a` → `A` from
    /// `b'a'`, `A` → `a` from `b'A'`).
    Case(u8),
    /// `old` → `new`.
    Replace(u8, u8),
}

#[inline(always)]
fn map_one(c: u8, m: Map) -> u8 {
    match m {
        Map::Case(from) => {
            if c.wrapping_sub(from) < 26 {
                c ^ 0x20
            } else {
                c
            }
        }
        Map::Replace(old, new) => {
            if c == old {
                new
            } else {
                c
            }
        }
    }
}

/// # Safety
/// The CPU runs `R`'s instructions; `dst` is as long as `src`.
#[inline(always)]
unsafe fn map_vec<R: ByteReg>(src: &[u8], dst: &mut [u8], m: Map) {
    let l = R::LANES;
    let n = src.len();
    let (ps, pd) = (src.as_ptr(), dst.as_mut_ptr());
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; every load reads and every
    // store writes l bytes from an offset at most n − l of operands n long.
    unsafe {
        match m {
            Map::Case(from) => {
                // In range: (c − from) mod 256 ≤ 25, i.e. min(d, 25) == d.
                let (shift, top, flip) = (R::set1(from.wrapping_neg()), R::set1(25), R::set1(0x20));
                while i + l <= n {
                    let x = R::load(ps.add(i));
                    let d = R::add(x, shift);
                    let hit = R::eq(R::min(d, top), d);
                    R::xor(x, R::and(hit, flip)).store(pd.add(i));
                    i += l;
                }
            }
            Map::Replace(old, new) => {
                let (o, swap) = (R::set1(old), R::set1(old ^ new));
                while i + l <= n {
                    let x = R::load(ps.add(i));
                    R::xor(x, R::and(R::eq(x, o), swap)).store(pd.add(i));
                    i += l;
                }
            }
        }
    }
    map_scalar(&src[i..], &mut dst[i..], m)
}

fn map_scalar(src: &[u8], dst: &mut [u8], m: Map) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = map_one(s, m);
    }
}

tiered! {
    fn map_bytes(src: &[u8], dst: &mut [u8], m: Map) -> () {
        vector: map_vec, scalar: map_scalar
    }
}

/// `x` with `A`–`Z` mapped to `a`–`z` (`shift` = −'A', `top` = 25, `flip` =
/// 0x20 in every lane).
///
/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn lower<R: ByteReg>(x: R, shift: R, top: R, flip: R) -> R {
    // SAFETY: the caller's contract.
    unsafe {
        let d = R::add(x, shift);
        R::or(x, R::and(R::eq(R::min(d, top), d), flip))
    }
}

/// # Safety
/// The CPU runs `R`'s instructions; `a` and `b` are equally long.
#[inline(always)]
unsafe fn fold_prefix_vec<R: ByteReg>(a: &[u8], b: &[u8]) -> usize {
    let l = R::LANES;
    let n = a.len();
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let full = super::first_lanes(l);
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; every load reads l bytes
    // of both operands from an offset at most n − l.
    unsafe {
        let (shift, top, flip) = (R::set1(b'A'.wrapping_neg()), R::set1(25), R::set1(0x20));
        while i + l <= n {
            let ne = !R::eq_bits(
                lower::<R>(R::load(pa.add(i)), shift, top, flip),
                lower::<R>(R::load(pb.add(i)), shift, top, flip),
            ) & full;
            if ne != 0 {
                return i + ne.trailing_zeros() as usize;
            }
            i += l;
        }
    }
    i + fold_prefix_scalar(&a[i..], &b[i..])
}

fn fold_prefix_scalar(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .take_while(|(x, y)| map_one(**x, Map::Case(b'A')) == map_one(**y, Map::Case(b'A')))
        .count()
}

tiered! {
    fn fold_prefix(a: &[u8], b: &[u8]) -> usize {
        vector: fold_prefix_vec, scalar: fold_prefix_scalar
    }
}
