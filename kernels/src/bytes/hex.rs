//! Hexadecimal: lowercase encoding, and decoding of either case.

use super::{length_error, path, tiered};
use crate::simd::ByteReg;
use crate::{Error, Exec, Result};

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `src` as lowercase hex (two digits per byte, the high nibble first)
/// into the front of `dst`; returns the digits written, `2·src.len()`.
///
/// # Errors
/// [`Error::Length`] where `dst` holds fewer than `2·src.len()` bytes
/// (nothing written); the `Exec`'s.
pub fn hex_encode(src: &[u8], dst: &mut [u8], exec: &Exec) -> Result<usize> {
    let p = path(exec)?;
    let need = src
        .len()
        .checked_mul(2)
        .ok_or_else(|| length_error("dst", dst.len(), usize::MAX))?;
    if dst.len() < need {
        return Err(length_error("dst", dst.len(), need));
    }
    encode(p, src, &mut dst[..need]);
    Ok(need)
}

/// The bytes that `n` hex digits decode to: `n / 2`.
///
/// # Errors
/// [`Error::Encoding`] for an odd `n` (its offset `n − 1`, the digit
/// without a pair).
pub fn hex_decoded_len(n: usize) -> Result<usize> {
    if n % 2 == 1 {
        return Err(Error::Encoding {
            format: "hex",
            offset: n - 1,
            reason: "an odd number of digits: the last has no pair".into(),
        });
    }
    Ok(n / 2)
}

/// The bytes of the hex digits `src` (`0-9`, `a-f`, `A-F`; two per byte,
/// the high nibble first) into the front of `dst`; returns the bytes
/// written, `src.len() / 2`.
///
/// # Errors
/// Before any write: [`Error::Encoding`] for an odd length (offset
/// `src.len() − 1`) or at the first byte that is not a hex digit;
/// [`Error::Length`] where `dst` is shorter than `src.len() / 2`; the
/// `Exec`'s.
pub fn hex_decode(src: &[u8], dst: &mut [u8], exec: &Exec) -> Result<usize> {
    let p = path(exec)?;
    let need = hex_decoded_len(src.len())?;
    if dst.len() < need {
        return Err(length_error("dst", dst.len(), need));
    }
    if let Some(at) = first_invalid(p, src) {
        return Err(Error::Encoding {
            format: "hex",
            offset: at,
            reason: format!("byte 0x{:02x} is not a hex digit", src[at]),
        });
    }
    decode(p, src, &mut dst[..need]);
    Ok(need)
}

/// A digit's value, or 16 for any other byte.
#[inline(always)]
fn value(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 16,
    }
}

/// # Safety
/// The CPU runs `R`'s instructions; `dst` is twice as long as `src`.
#[inline(always)]
unsafe fn encode_vec<R: ByteReg>(src: &[u8], dst: &mut [u8]) {
    let l = R::LANES;
    let n = src.len();
    let (ps, pd) = (src.as_ptr(), dst.as_mut_ptr());
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; each step reads l bytes of
    // src from i ≤ n − l and writes 2·l of dst from 2i ≤ 2n − 2l.
    unsafe {
        let t = R::table16(DIGITS);
        while i + l <= n {
            let x = R::load(ps.add(i));
            let hi = R::lookup16(t, R::high_nibbles(x));
            let lo = R::lookup16(t, R::low_nibbles(x));
            let (a, b) = R::zip(hi, lo);
            a.store(pd.add(2 * i));
            b.store(pd.add(2 * i + l));
            i += l;
        }
    }
    encode_scalar(&src[i..], &mut dst[2 * i..])
}

fn encode_scalar(src: &[u8], dst: &mut [u8]) {
    for (d, &s) in dst.chunks_exact_mut(2).zip(src) {
        d[0] = DIGITS[(s >> 4) as usize];
        d[1] = DIGITS[(s & 15) as usize];
    }
}

tiered! {
    fn encode(src: &[u8], dst: &mut [u8]) -> () {
        vector: encode_vec, scalar: encode_scalar
    }
}

/// The values of the digits in `x` (`(value, valid)`: a lane of `valid` is
/// 0xff where `x` is a digit).
///
/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn classify<R: ByteReg>(x: R) -> (R, R) {
    // SAFETY: the caller runs R's instructions.
    unsafe {
        // d = x − '0' is a decimal digit where d ≤ 9; f = (x | 0x20) − 'a'
        // is a letter digit where f ≤ 5 (the OR folds A-F onto a-f).
        let d = R::add(x, R::set1(b'0'.wrapping_neg()));
        let f = R::add(R::or(x, R::set1(0x20)), R::set1(b'a'.wrapping_neg()));
        let dig = R::eq(R::min(d, R::set1(9)), d);
        let let_ = R::eq(R::min(f, R::set1(5)), f);
        let v = R::or(R::and(dig, d), R::and(let_, R::add(f, R::set1(10))));
        (v, R::or(dig, let_))
    }
}

/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn first_invalid_vec<R: ByteReg>(src: &[u8]) -> Option<usize> {
    let l = R::LANES;
    let n = src.len();
    let ps = src.as_ptr();
    let full = super::first_lanes(l);
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; every load reads l bytes
    // from an offset at most n − l.
    unsafe {
        let ones = R::set1(0xff);
        // Four registers checked at once; the first bad one located after.
        while i + 4 * l <= n {
            let ok = R::and(
                R::and(
                    classify::<R>(R::load(ps.add(i))).1,
                    classify::<R>(R::load(ps.add(i + l))).1,
                ),
                R::and(
                    classify::<R>(R::load(ps.add(i + 2 * l))).1,
                    classify::<R>(R::load(ps.add(i + 3 * l))).1,
                ),
            );
            if !R::eq_bits(ok, ones) & full != 0 {
                break;
            }
            i += 4 * l;
        }
        while i + l <= n {
            let (_, ok) = classify::<R>(R::load(ps.add(i)));
            let bad = !R::eq_bits(ok, ones) & full;
            if bad != 0 {
                return Some(i + bad.trailing_zeros() as usize);
            }
            i += l;
        }
    }
    first_invalid_scalar(&src[i..]).map(|k| i + k)
}

fn first_invalid_scalar(src: &[u8]) -> Option<usize> {
    src.iter().position(|&c| value(c) == 16)
}

tiered! {
    fn first_invalid(src: &[u8]) -> Option<usize> {
        vector: first_invalid_vec, scalar: first_invalid_scalar
    }
}

/// # Safety
/// The CPU runs `R`'s instructions; `src` holds only digits and is twice
/// as long as `dst`.
#[inline(always)]
unsafe fn decode_vec<R: ByteReg>(src: &[u8], dst: &mut [u8]) {
    let l = R::LANES;
    let n = dst.len();
    let (ps, pd) = (src.as_ptr(), dst.as_mut_ptr());
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; each step reads 2·l bytes
    // of src from 2i ≤ 2n − 2l and writes l of dst from i ≤ n − l.
    unsafe {
        // A digit's value is its low nibble, plus 9 for a letter (high
        // nibble 4 or 6): the input is known to hold digits only.
        let mut plus = [0u8; 16];
        plus[4] = 9;
        plus[6] = 9;
        let plus = R::table16(&plus);
        while i + l <= n {
            let x = R::load(ps.add(2 * i));
            let y = R::load(ps.add(2 * i + l));
            let a = R::add(R::low_nibbles(x), R::lookup16(plus, R::high_nibbles(x)));
            let b = R::add(R::low_nibbles(y), R::lookup16(plus, R::high_nibbles(y)));
            R::pack_nibble_pairs(a, b).store(pd.add(i));
            i += l;
        }
    }
    decode_scalar(&src[2 * i..], &mut dst[i..])
}

fn decode_scalar(src: &[u8], dst: &mut [u8]) {
    for (d, s) in dst.iter_mut().zip(src.chunks_exact(2)) {
        *d = value(s[0]) << 4 | value(s[1]);
    }
}

tiered! {
    fn decode(src: &[u8], dst: &mut [u8]) -> () {
        vector: decode_vec, scalar: decode_scalar
    }
}
