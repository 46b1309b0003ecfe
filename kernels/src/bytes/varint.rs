//! Zigzag and LEB128 varints: the integer encodings of protocol buffers and
//! column stores.
//!
//! Zigzag maps a signed integer `x` of `W` bits to the unsigned
//! `(x << 1) ^ (x >> (W − 1))` (0, −1, 1, −2, … to 0, 1, 2, 3, …) and back
//! by `(u >> 1) ^ −(u & 1)`: total and exact both ways, the most negative
//! value included. A varint (unsigned LEB128) writes a value seven bits at
//! a time from the least significant, each byte's top bit set where more
//! follow: 1 to 5 bytes for a `u32`, 1 to 10 for a `u64`.
//!
//! The widths come first ([`varint_lens`], [`varint_size`]) so an encoder
//! sizes its output once; the encoder and decoder then write all of their
//! result or, refused, nothing. Every path gives the same bytes and values:
//! the work is shifts, ors and compares (the tests hold each tier to a
//! byte-at-a-time model and the fuzz target `bytes_parsers` the decoder).

use super::{length_error, path};
use crate::{Error, Exec, Result};

mod sealed {
    pub trait Sealed {}
}

/// The signed integers zigzag takes (`i8`, `i16`, `i32`, `i64`) and their
/// unsigned images.
pub trait Zigzag: Copy + sealed::Sealed {
    /// The unsigned integer of the same width.
    type Unsigned: Copy;
    /// `(x << 1) ^ (x >> (W − 1))`.
    fn zigzag(self) -> Self::Unsigned;
    /// The inverse: `(u >> 1) ^ −(u & 1)`.
    fn unzigzag(u: Self::Unsigned) -> Self;
}

macro_rules! zigzag_impl {
    ($($s:ty => $u:ty),*) => {$(
        impl sealed::Sealed for $s {}
        impl Zigzag for $s {
            type Unsigned = $u;
            #[inline(always)]
            fn zigzag(self) -> $u {
                ((self as $u) << 1) ^ ((self >> (<$s>::BITS - 1)) as $u)
            }
            #[inline(always)]
            fn unzigzag(u: $u) -> $s {
                ((u >> 1) ^ (0 as $u).wrapping_sub(u & 1)) as $s
            }
        }
    )*};
}
zigzag_impl!(i8 => u8, i16 => u16, i32 => u32, i64 => u64);

/// The zigzag image of each value of `src` into `dst` (the same length).
///
/// # Errors
/// [`Error::Length`] where the lengths differ; the `Exec`'s. Before any
/// write.
pub fn zigzag_encode<T: Zigzag>(src: &[T], dst: &mut [T::Unsigned], exec: &Exec) -> Result<()> {
    path(exec)?;
    if dst.len() != src.len() {
        return Err(value_length("dst", dst.len(), src.len()));
    }
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s.zigzag();
    }
    Ok(())
}

/// The signed value of each zigzag image of `src` into `dst` (the same
/// length): the inverse of [`zigzag_encode`], defined for every input.
///
/// # Errors
/// As [`zigzag_encode`].
pub fn zigzag_decode<T: Zigzag>(src: &[T::Unsigned], dst: &mut [T], exec: &Exec) -> Result<()> {
    path(exec)?;
    if dst.len() != src.len() {
        return Err(value_length("dst", dst.len(), src.len()));
    }
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = T::unzigzag(s);
    }
    Ok(())
}

fn value_length(operand: &str, len: usize, expected: usize) -> Error {
    Error::Length {
        operand: operand.into(),
        len,
        expected,
        unit: "values",
    }
}

/// The unsigned integers a varint carries (`u32`, `u64`).
pub trait Varint: Copy + sealed::Sealed {
    /// The most bytes one value takes (5 for `u32`, 10 for `u64`).
    const MAX_BYTES: usize;
    /// The value as a `u64`.
    fn to_u64(self) -> u64;
    /// The value of `v` (which fits).
    fn from_u64(v: u64) -> Self;
    /// Bits of the type.
    const BITS: u32;
}

impl sealed::Sealed for u32 {}
impl sealed::Sealed for u64 {}
impl Varint for u32 {
    const MAX_BYTES: usize = 5;
    const BITS: u32 = 32;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_u64(v: u64) -> u32 {
        v as u32
    }
}
impl Varint for u64 {
    const MAX_BYTES: usize = 10;
    const BITS: u32 = 64;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_u64(v: u64) -> u64 {
        v
    }
}

/// The LEB128 width of `v`: 1 + ⌊(bit length − 1) / 7⌋, 1 for 0.
#[inline(always)]
fn width(v: u64) -> usize {
    // bit length b (at least 1), then ⌈b / 7⌉.
    let b = 64 - (v | 1).leading_zeros() as usize;
    b.div_ceil(7)
}

/// The byte width of each value's varint into `dst` (the same length):
/// 1 to 5 for `u32`, 1 to 10 for `u64`.
///
/// # Errors
/// [`Error::Length`] where the lengths differ; the `Exec`'s.
pub fn varint_lens<T: Varint>(src: &[T], dst: &mut [u8], exec: &Exec) -> Result<()> {
    path(exec)?;
    if dst.len() != src.len() {
        return Err(value_length("dst", dst.len(), src.len()));
    }
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = width(s.to_u64()) as u8;
    }
    Ok(())
}

/// The bytes [`varint_encode`] writes for `src`: the sum of the widths.
///
/// # Errors
/// Only the `Exec`'s.
pub fn varint_size<T: Varint>(src: &[T], exec: &Exec) -> Result<usize> {
    path(exec)?;
    Ok(src.iter().map(|&s| width(s.to_u64())).sum())
}

/// The varints of `src`, one after another, into the front of `dst`;
/// returns the bytes written ([`varint_size`]).
///
/// # Errors
/// [`Error::Length`] where `dst` is shorter than [`varint_size`] (nothing
/// is written); the `Exec`'s.
pub fn varint_encode<T: Varint>(src: &[T], dst: &mut [u8], exec: &Exec) -> Result<usize> {
    let size = varint_size(src, exec)?;
    if dst.len() < size {
        return Err(length_error("dst (varints)", dst.len(), size));
    }
    let dst = &mut dst[..size];
    let mut at = 0;
    for &s in src {
        let mut v = s.to_u64();
        while v >= 0x80 {
            dst[at] = (v as u8) | 0x80;
            v >>= 7;
            at += 1;
        }
        dst[at] = v as u8;
        at += 1;
    }
    Ok(at)
}

/// The number of varints in `src` (its bytes below 0x80, each the last of
/// a value), the length [`varint_decode`] wants for its destination.
///
/// # Errors
/// Only the `Exec`'s.
pub fn varint_count(src: &[u8], exec: &Exec) -> Result<usize> {
    super::count_any(src, &(0u8..0x80).collect::<Vec<u8>>(), exec)
}

/// Decode the varints that fill `src` exactly into the front of `dst`;
/// returns how many ([`varint_count`]). A value may carry redundant high
/// groups of zero bits (as protocol buffers' decoders accept) up to
/// `T::MAX_BYTES` bytes.
///
/// # Errors
/// [`Error::Encoding`] (format `varint`, the offset of the byte in error)
/// for a value longer than `T::MAX_BYTES` bytes, a last byte whose bits
/// pass the type's width, or input that ends inside a value;
/// [`Error::Length`] where `dst` holds fewer values than `src` does; the
/// `Exec`'s. Each before any write.
pub fn varint_decode<T: Varint>(src: &[u8], dst: &mut [T], exec: &Exec) -> Result<usize> {
    path(exec)?;
    // Pass 1: validate and count, so a refusal writes nothing.
    let n = scan::<T>(src)?;
    if dst.len() < n {
        return Err(value_length("dst (values)", dst.len(), n));
    }
    // Pass 2: decode what pass 1 proved well formed.
    let mut at = 0;
    for d in &mut dst[..n] {
        let mut v = 0u64;
        let mut sh = 0;
        loop {
            let b = src[at];
            at += 1;
            v |= ((b & 0x7f) as u64) << sh;
            if b < 0x80 {
                break;
            }
            sh += 7;
        }
        *d = T::from_u64(v);
    }
    Ok(n)
}

/// The count of values in a well-formed `src`, or the first error.
fn scan<T: Varint>(src: &[u8]) -> Result<usize> {
    let bad = |offset: usize, reason: String| Error::Encoding {
        format: "varint",
        offset,
        reason,
    };
    // Bits the last of MAX_BYTES bytes may hold: 32 − 28 = 4 for u32,
    // 64 − 63 = 1 for u64.
    let last_bits = T::BITS - 7 * (T::MAX_BYTES as u32 - 1);
    let (mut n, mut len) = (0usize, 0usize);
    for (i, &b) in src.iter().enumerate() {
        len += 1;
        if len == T::MAX_BYTES && (b >= 0x80 || (b as u32) >> last_bits != 0) {
            return Err(bad(
                i,
                if b >= 0x80 {
                    format!("a value runs past {} bytes", T::MAX_BYTES)
                } else {
                    format!("the value passes {} bits", T::BITS)
                },
            ));
        }
        if b < 0x80 {
            n += 1;
            len = 0;
        }
    }
    if len > 0 {
        return Err(bad(src.len(), "the input ends inside a value".into()));
    }
    Ok(n)
}
