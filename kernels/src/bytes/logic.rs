//! Bitwise maps of byte strings (`and`, `or`, `xor`, `and_not`, `not`,
//! `fill`) and the widening and narrowing of bytes to and from 16- and
//! 32-bit units (the ASCII paths of UTF-16 and UTF-32 conversion).
//!
//! Each is a plain loop compiled under every tier's instruction set, where
//! the compiler turns it into register code; the results are the same
//! bytes on every path (no arithmetic that rounds).

use super::{length_error, path, tiered};
use crate::simd::ByteReg;
use crate::{Exec, Result};

/// A bitwise operation of two bytes.
#[derive(Clone, Copy)]
enum Op2 {
    And,
    Or,
    Xor,
    AndNot,
}

#[inline(always)]
fn map2_all(op: Op2, a: &[u8], b: &[u8], dst: &mut [u8]) {
    // One loop per operation (the match outside the loop), and plain
    // loops, not closures: a closure would not inherit the caller's target
    // features.
    let it = dst.iter_mut().zip(a.iter().zip(b));
    match op {
        Op2::And => {
            for (d, (&x, &y)) in it {
                *d = x & y;
            }
        }
        Op2::Or => {
            for (d, (&x, &y)) in it {
                *d = x | y;
            }
        }
        Op2::Xor => {
            for (d, (&x, &y)) in it {
                *d = x ^ y;
            }
        }
        Op2::AndNot => {
            for (d, (&x, &y)) in it {
                *d = x & !y;
            }
        }
    }
}

/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn map2_vec<R: ByteReg>(op: Op2, a: &[u8], b: &[u8], dst: &mut [u8]) {
    map2_all(op, a, b, dst)
}

tiered! {
    fn map2(op: Op2, a: &[u8], b: &[u8], dst: &mut [u8]) -> () {
        vector: map2_vec, scalar: map2_all
    }
}

fn binary(op: Op2, a: &[u8], b: &[u8], dst: &mut [u8], exec: &Exec) -> Result<()> {
    let p = path(exec)?;
    if b.len() != a.len() {
        return Err(length_error("b", b.len(), a.len()));
    }
    if dst.len() != a.len() {
        return Err(length_error("dst", dst.len(), a.len()));
    }
    map2(p, op, a, b, dst);
    Ok(())
}

/// `dst[i] = a[i] & b[i]`.
///
/// # Errors
/// [`Error::Length`](crate::Error::Length) where `b` or `dst` is not as
/// long as `a` (nothing written); the `Exec`'s.
pub fn and(a: &[u8], b: &[u8], dst: &mut [u8], exec: &Exec) -> Result<()> {
    binary(Op2::And, a, b, dst, exec)
}

/// `dst[i] = a[i] | b[i]`.
///
/// # Errors
/// As [`and`].
pub fn or(a: &[u8], b: &[u8], dst: &mut [u8], exec: &Exec) -> Result<()> {
    binary(Op2::Or, a, b, dst, exec)
}

/// `dst[i] = a[i] ^ b[i]`.
///
/// # Errors
/// As [`and`].
pub fn xor(a: &[u8], b: &[u8], dst: &mut [u8], exec: &Exec) -> Result<()> {
    binary(Op2::Xor, a, b, dst, exec)
}

/// `dst[i] = a[i] & !b[i]` (the bits of `a` that `b` does not have).
///
/// # Errors
/// As [`and`].
pub fn and_not(a: &[u8], b: &[u8], dst: &mut [u8], exec: &Exec) -> Result<()> {
    binary(Op2::AndNot, a, b, dst, exec)
}

#[inline(always)]
fn not_all(a: &[u8], dst: &mut [u8]) {
    for (d, &x) in dst.iter_mut().zip(a) {
        *d = !x;
    }
}

/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn not_vec<R: ByteReg>(a: &[u8], dst: &mut [u8]) {
    not_all(a, dst)
}

tiered! {
    fn not_map(a: &[u8], dst: &mut [u8]) -> () {
        vector: not_vec, scalar: not_all
    }
}

/// `dst[i] = !a[i]`.
///
/// # Errors
/// [`Error::Length`](crate::Error::Length) where `dst` is not as long as
/// `a`; the `Exec`'s.
pub fn not(a: &[u8], dst: &mut [u8], exec: &Exec) -> Result<()> {
    let p = path(exec)?;
    if dst.len() != a.len() {
        return Err(length_error("dst", dst.len(), a.len()));
    }
    not_map(p, a, dst);
    Ok(())
}

/// Every byte of `dst` set to `v`.
///
/// # Errors
/// Only the `Exec`'s.
pub fn fill(dst: &mut [u8], v: u8, exec: &Exec) -> Result<()> {
    path(exec)?;
    dst.fill(v);
    Ok(())
}

macro_rules! widen_narrow {
    ($($widen:ident, $narrow:ident, $t:ty, $wall:ident, $wvec:ident, $wt:ident, $nall:ident, $nvec:ident, $nt:ident, $bits:literal);*) => {$(
        #[inline(always)]
        fn $wall(src: &[u8], dst: &mut [$t]) {
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = s as $t;
            }
        }
        /// # Safety
        /// The CPU runs `R`'s instructions.
        #[inline(always)]
        unsafe fn $wvec<R: ByteReg>(src: &[u8], dst: &mut [$t]) {
            $wall(src, dst)
        }
        tiered! {
            fn $wt(src: &[u8], dst: &mut [$t]) -> () {
                vector: $wvec, scalar: $wall
            }
        }
        #[inline(always)]
        fn $nall(src: &[$t], dst: &mut [u8]) {
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = s as u8;
            }
        }
        /// # Safety
        /// The CPU runs `R`'s instructions.
        #[inline(always)]
        unsafe fn $nvec<R: ByteReg>(src: &[$t], dst: &mut [u8]) {
            $nall(src, dst)
        }
        tiered! {
            fn $nt(src: &[$t], dst: &mut [u8]) -> () {
                vector: $nvec, scalar: $nall
            }
        }

        #[doc = concat!("Each byte of `src` zero-extended to a ", $bits, "-bit unit in `dst` (the ASCII path of a conversion to UTF-", $bits, ").")]
        ///
        /// # Errors
        /// [`Error::Length`](crate::Error::Length) where `dst` is not as long
        /// as `src` (nothing written); the `Exec`'s.
        pub fn $widen(src: &[u8], dst: &mut [$t], exec: &Exec) -> Result<()> {
            let p = path(exec)?;
            if dst.len() != src.len() {
                return Err(crate::Error::Length {
                    operand: "dst".into(),
                    len: dst.len(),
                    expected: src.len(),
                    unit: "values",
                });
            }
            $wt(p, src, dst);
            Ok(())
        }

        #[doc = concat!("Each ", $bits, "-bit unit of `src` truncated to its low byte in `dst`: exact for units below 256 (an ASCII run, as [`index_non_ascii16`](super::index_non_ascii16) finds one for UTF-16); higher bits are dropped, not refused.")]
        ///
        /// # Errors
        /// [`Error::Length`](crate::Error::Length) where `dst` is not as long
        /// as `src` (nothing written); the `Exec`'s.
        pub fn $narrow(src: &[$t], dst: &mut [u8], exec: &Exec) -> Result<()> {
            let p = path(exec)?;
            if dst.len() != src.len() {
                return Err(length_error("dst", dst.len(), src.len()));
            }
            $nt(p, src, dst);
            Ok(())
        }
    )*};
}

widen_narrow!(
    widen_u8_u16, narrow_u16_u8, u16, widen16_all, widen16_vec, widen16, narrow16_all,
        narrow16_vec, narrow16, "16";
    widen_u8_u32, narrow_u32_u8, u32, widen32_all, widen32_vec, widen32, narrow32_all,
        narrow32_vec, narrow32, "32"
);
