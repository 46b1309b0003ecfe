//! Decimal integers: fields of a byte string parsed to `i64`/`u64`, and
//! values formatted with a separator.
//!
//! A field of at most 16 digits is read eight digits at a time as one
//! 64-bit word (SWAR: every byte checked to be a digit with two masked
//! compares, the eight digits combined by three multiply-and-mask steps
//! with no branch per digit; a short field is padded with leading zeros in
//! the word). Longer fields, and fields the word check refuses, go digit by
//! digit, which locates the error or the overflow exactly. Integer
//! arithmetic has no rounding, so the same code serves every tier; a call
//! parses every field into a work area first and copies it to the
//! destination only when all are valid, so a refused call writes nothing.

use super::length_error;
use crate::{Error, Exec, Result};

/// The fields of `src` as (start, end) positions: split at the separator
/// positions `seps` (ascending, each below `src.len()`): `src[..seps[0]]`,
/// `src[seps[k−1]+1..seps[k]]`, …, and `src[seps[last]+1..]` — one more
/// field than separators (`index_all` finds them).
fn fields<'a>(
    src: &'a [u8],
    seps: &'a [usize],
) -> Result<impl Iterator<Item = (usize, usize)> + 'a> {
    let mut prev: Option<usize> = None;
    for (k, &s) in seps.iter().enumerate() {
        if s >= src.len() || prev.is_some_and(|p| s <= p) {
            return Err(Error::Attribute {
                name: format!("seps[{k}] of parse_ints"),
                reason: format!(
                    "{s}: separator positions must ascend and lie below the source's length {}",
                    src.len()
                ),
            });
        }
        prev = Some(s);
    }
    let starts = core::iter::once(0).chain(seps.iter().map(|&s| s + 1));
    let ends = seps.iter().copied().chain(core::iter::once(src.len()));
    Ok(starts.zip(ends))
}

/// '0' in every byte.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// The eight ASCII bytes of `chunk` (the first in its lowest byte, the most
/// significant digit) as a number, if every one is a digit.
#[inline(always)]
fn eight_digits(chunk: u64) -> Option<u64> {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    // Every byte in 0x30..=0x3F, and (no carry between bytes then) at most
    // 0x39: adding 6 keeps its high nibble 3.
    if chunk & HIGH != ZEROS || chunk.wrapping_add(0x0606_0606_0606_0606) & HIGH != ZEROS {
        return None;
    }
    let v = chunk - ZEROS;
    // Pairs of digits (10·d[2i] + d[2i+1] in byte 2i), then quadruples,
    // then the eight: each step's products stay within their lanes.
    let v = (v * 10 + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    let v = (v * 100 + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
    Some((v * 10_000 + (v >> 32)) & 0xFFFF_FFFF)
}

/// The `k` bytes `src[p..p + k]` (1 ≤ k ≤ 8) as the last `k` bytes of an
/// eight-byte word whose first `8 − k` bytes are '0': from a word read
/// forward from `p` or back from `p + k` where `src` holds one, shifted or
/// masked so that no byte outside the field counts.
#[inline(always)]
fn padded_word(src: &[u8], p: usize, k: usize) -> u64 {
    let word = |at: usize| u64::from_le_bytes(src[at..at + 8].try_into().unwrap());
    if k == 8 {
        return word(p);
    }
    let pad = 8 * (8 - k) as u32;
    if p + 8 <= src.len() {
        // The field in the low k bytes: moved to the top, zeros below.
        (word(p) << pad) | (ZEROS >> (64 - pad))
    } else if p + k >= 8 {
        // The field in the top k bytes: the bytes before it replaced.
        let low = (1u64 << pad) - 1;
        (word(p + k - 8) & !low) | (ZEROS & low)
    } else {
        let mut b = [b'0'; 8];
        b[8 - k..].copy_from_slice(&src[p..p + k]);
        u64::from_le_bytes(b)
    }
}

/// The value of the digits `src[a..b]` where there are 1 to 16 of them
/// and all are digits (below 10^16, inside every range); `None` otherwise.
#[inline(always)]
fn short_digits(src: &[u8], a: usize, b: usize) -> Option<u64> {
    let k = b - a;
    if k == 0 || k > 16 {
        return None;
    }
    if k <= 8 {
        return eight_digits(padded_word(src, a, k));
    }
    let hi = eight_digits(padded_word(src, a, k - 8))?;
    let lo = eight_digits(padded_word(src, b - 8, 8))?;
    Some(hi * 100_000_000 + lo)
}

/// The value of the field `src[a..b]`: optional sign (where `signed`),
/// then one or more decimal digits, within `i64` (signed) or `u64`; the
/// error's offset is within the field.
fn parse_field(
    src: &[u8],
    a: usize,
    b: usize,
    signed: bool,
) -> core::result::Result<(bool, u64), (usize, &'static str)> {
    let f = &src[a..b];
    let (neg, at) = match f.first() {
        Some(b'-') if signed => (true, 1),
        Some(b'+') if signed => (false, 1),
        _ => (false, 0),
    };
    if let Some(v) = short_digits(src, a + at, b) {
        return Ok((neg, v));
    }
    let digits = &f[at..];
    if digits.is_empty() {
        return Err((at.min(f.len()), "a field with no digits"));
    }
    // The magnitude's limit: i64's 2^63 − 1 (2^63 negated), or u64's.
    let limit: u64 = match (signed, neg) {
        (false, _) => u64::MAX,
        (true, false) => i64::MAX as u64,
        (true, true) => 1 << 63,
    };
    let mut v: u64 = 0;
    for (j, &c) in digits.iter().enumerate() {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return Err((at + j, "not a decimal digit"));
        }
        v = match v.checked_mul(10).and_then(|x| x.checked_add(d as u64)) {
            Some(x) if x <= limit => x,
            _ => return Err((at + j, "the value overflows")),
        };
    }
    Ok((neg, v))
}

fn parse<T: Copy>(
    src: &[u8],
    seps: &[usize],
    dst: &mut [T],
    signed: bool,
    cast: impl Fn(bool, u64) -> T,
) -> Result<usize> {
    let n = seps.len() + 1;
    if dst.len() < n {
        return Err(Error::Length {
            operand: "dst".into(),
            len: dst.len(),
            expected: n,
            unit: "values",
        });
    }
    let mut work: Vec<T> = crate::alloc::try_vec(n, "parsed integers")?;
    for (start, end) in fields(src, seps)? {
        match parse_field(src, start, end, signed) {
            Ok((neg, v)) => work.push(cast(neg, v)),
            Err((at, reason)) => {
                return Err(Error::Encoding {
                    format: if signed { "decimal i64" } else { "decimal u64" },
                    offset: start + at,
                    reason: reason.into(),
                })
            }
        }
    }
    dst[..n].copy_from_slice(&work);
    Ok(n)
}

/// The fields of `src` (split at the separator positions `seps`, one more
/// field than separators: `src[..seps[0]]`, …, `src[seps[last]+1..]`) as
/// `i64`: an optional `+` or `-`, then decimal digits (leading zeros
/// allowed, no spaces), into the front of `dst`; returns the count,
/// `seps.len() + 1`.
///
/// # Errors
/// Before any write: [`Error::Attribute`] for a separator position not
/// ascending or not below `src.len()`; [`Error::Length`] where `dst` holds
/// fewer values than fields; [`Error::Encoding`] at the first byte of the
/// first invalid field that is not a digit, at the digit where the value
/// leaves `i64`, or (an empty field or a lone sign) at the field's end.
pub fn parse_ints(src: &[u8], seps: &[usize], dst: &mut [i64], exec: &Exec) -> Result<usize> {
    super::path(exec)?;
    parse(src, seps, dst, true, |neg, v| {
        if neg {
            (v as i64).wrapping_neg()
        } else {
            v as i64
        }
    })
}

/// [`parse_ints`] to `u64`: digits only (no sign), up to `u64::MAX`.
///
/// # Errors
/// As [`parse_ints`], the range `u64`'s.
pub fn parse_uints(src: &[u8], seps: &[usize], dst: &mut [u64], exec: &Exec) -> Result<usize> {
    super::path(exec)?;
    parse(src, seps, dst, false, |_, v| v)
}

/// Decimal digits of `|v|`.
fn digits(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The bytes [`format_ints`] writes for `vals` (the query that sizes its
/// destination): each value's digits, a `-` for each negative one, and a
/// separator between values.
pub fn format_ints_len(vals: &[i64]) -> usize {
    vals.iter()
        .map(|&v| digits(v.unsigned_abs()) + (v < 0) as usize)
        .sum::<usize>()
        + vals.len().saturating_sub(1)
}

/// `vals` in decimal (a `-` before negative values, no `+`, no leading
/// zeros), `sep` between consecutive values (none after the last), into the
/// front of `dst`; returns the bytes written ([`format_ints_len`]).
///
/// # Errors
/// [`Error::Length`] where `dst` is shorter (nothing written); the `Exec`'s.
pub fn format_ints(vals: &[i64], sep: u8, dst: &mut [u8], exec: &Exec) -> Result<usize> {
    super::path(exec)?;
    let need = format_ints_len(vals);
    if dst.len() < need {
        return Err(length_error("dst", dst.len(), need));
    }
    let mut k = 0;
    for (i, &v) in vals.iter().enumerate() {
        if i > 0 {
            dst[k] = sep;
            k += 1;
        }
        if v < 0 {
            dst[k] = b'-';
            k += 1;
        }
        let mut m = v.unsigned_abs();
        let d = digits(m);
        for j in (0..d).rev() {
            dst[k + j] = b'0' + (m % 10) as u8;
            m /= 10;
        }
        k += d;
    }
    Ok(k)
}
