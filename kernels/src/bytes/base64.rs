//! Base64 (RFC 4648): the standard and URL-safe alphabets, with or without
//! padding, decoding strictly (one canonical text per byte string).
//!
//! The register path encodes `3·LANES/4` bytes to `LANES` symbols per step:
//! twelve source bytes to each 128-bit block, a byte shuffle that puts the
//! three bytes of each group in a 32-bit lane, the four 6-bit fields moved
//! into place by 16-bit multiplies, and the symbols formed from the field
//! values by a 16-entry table of offsets. Decoding classifies each symbol
//! by ranges into its value, joins four values into three bytes by two
//! multiply-adds and a shuffle, and stores twelve bytes per block. Tails
//! and the final group run the scalar code; every path writes the same
//! bytes and reports the same error offsets.

use super::{length_error, path, tiered};
use crate::simd::ByteReg;
use crate::{Error, Exec, Result};

/// A base64 variant: the alphabet and whether the text is padded with `=`
/// to a multiple of four symbols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Base64 {
    /// The URL-safe alphabet (`-` and `_` for 62 and 63) instead of the
    /// standard one (`+` and `/`).
    pub url: bool,
    /// Padding: encoding appends `=` to a multiple of four symbols, and
    /// decoding requires it; without, encoding writes none and decoding
    /// refuses any `=`.
    pub pad: bool,
}

impl Base64 {
    /// RFC 4648 §4: `+`, `/`, padded.
    pub const STANDARD: Base64 = Base64 {
        url: false,
        pad: true,
    };
    /// §4's alphabet without padding.
    pub const STANDARD_NO_PAD: Base64 = Base64 {
        url: false,
        pad: false,
    };
    /// RFC 4648 §5: `-`, `_`, padded.
    pub const URL: Base64 = Base64 {
        url: true,
        pad: true,
    };
    /// §5's alphabet without padding.
    pub const URL_NO_PAD: Base64 = Base64 {
        url: true,
        pad: false,
    };

    fn symbols(self) -> &'static [u8; 64] {
        if self.url {
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        } else {
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        }
    }

    /// The value of symbol `c`, or 64 for any other byte.
    #[inline(always)]
    fn value(self, c: u8) -> u8 {
        match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' if !self.url => 62,
            b'/' if !self.url => 63,
            b'-' if self.url => 62,
            b'_' if self.url => 63,
            _ => 64,
        }
    }
}

/// The symbols that `n` bytes encode to: `4·⌈n/3⌉` padded, `⌈4n/3⌉`
/// without padding.
///
/// # Errors
/// [`Error::Overflow`] where that exceeds `usize`.
pub fn base64_encoded_len(n: usize, cfg: Base64) -> Result<usize> {
    let over = || Error::Overflow {
        operand: "base64 text length".into(),
    };
    let full = (n / 3).checked_mul(4).ok_or_else(over)?;
    let rest = match (n % 3, cfg.pad) {
        (0, _) => 0,
        (_, true) => 4,
        (r, false) => r + 1,
    };
    full.checked_add(rest).ok_or_else(over)
}

/// `src` as base64 into the front of `dst`; returns the symbols written
/// ([`base64_encoded_len`]).
///
/// # Errors
/// [`Error::Length`] where `dst` is shorter (nothing written);
/// [`Error::Overflow`]; the `Exec`'s.
pub fn base64_encode(src: &[u8], dst: &mut [u8], cfg: Base64, exec: &Exec) -> Result<usize> {
    let p = path(exec)?;
    let need = base64_encoded_len(src.len(), cfg)?;
    if dst.len() < need {
        return Err(length_error("dst", dst.len(), need));
    }
    let full = src.len() / 3 * 3;
    let done = encode(p, &src[..full], &mut dst[..full / 3 * 4], cfg);
    debug_assert_eq!(done, full / 3 * 4);
    // The last one or two bytes.
    let sym = cfg.symbols();
    let tail = &src[full..];
    let out = &mut dst[done..need];
    match tail.len() {
        1 => {
            out[0] = sym[(tail[0] >> 2) as usize];
            out[1] = sym[((tail[0] & 3) << 4) as usize];
            if cfg.pad {
                out[2] = b'=';
                out[3] = b'=';
            }
        }
        2 => {
            out[0] = sym[(tail[0] >> 2) as usize];
            out[1] = sym[((tail[0] & 3) << 4 | tail[1] >> 4) as usize];
            out[2] = sym[((tail[1] & 15) << 2) as usize];
            if cfg.pad {
                out[3] = b'=';
            }
        }
        _ => {}
    }
    Ok(need)
}

/// The shape of a base64 text: the symbols before any padding and the
/// bytes they decode to.
fn shape(src: &[u8], cfg: Base64) -> Result<(usize, usize)> {
    let n = src.len();
    let err = |offset: usize, reason: &str| Error::Encoding {
        format: "base64",
        offset,
        reason: reason.into(),
    };
    let body = if cfg.pad {
        if !n.is_multiple_of(4) {
            return Err(err(
                n,
                "the length is not a multiple of 4 (padding missing)",
            ));
        }
        let pads = src.iter().rev().take(3).take_while(|&&c| c == b'=').count();
        if pads == 3 {
            return Err(err(n - 3, "more than two padding symbols"));
        }
        n - pads
    } else {
        if n % 4 == 1 {
            return Err(err(n - 1, "a single symbol cannot end the text"));
        }
        n
    };
    let out = body / 4 * 3 + (body % 4).saturating_sub(1);
    Ok((body, out))
}

/// The bytes the base64 text `src` decodes to, from its length and
/// padding (the query that sizes [`base64_decode`]'s destination; the
/// symbols themselves are checked by the decoder).
///
/// # Errors
/// [`Error::Encoding`]: padded, a length that is not a multiple of 4
/// (offset `src.len()`) or more than two `=` (the first); unpadded, a
/// length of 1 mod 4 (offset `src.len() − 1`).
pub fn base64_decoded_len(src: &[u8], cfg: Base64) -> Result<usize> {
    shape(src, cfg).map(|s| s.1)
}

/// The bytes of the base64 text `src` into the front of `dst`; returns how
/// many ([`base64_decoded_len`]). Strict: no whitespace, `=` only as the
/// padding `cfg` requires, and the bits after the last byte (in the last
/// symbol) zero, so each byte string has one text.
///
/// # Errors
/// Before any write: [`Error::Encoding`] for the length and padding (as
/// [`base64_decoded_len`]), at the first byte that is not a symbol of the
/// alphabet, or at the last symbol where its unused bits are not zero;
/// [`Error::Length`] where `dst` is shorter; the `Exec`'s.
pub fn base64_decode(src: &[u8], dst: &mut [u8], cfg: Base64, exec: &Exec) -> Result<usize> {
    let p = path(exec)?;
    let (body, need) = shape(src, cfg)?;
    if dst.len() < need {
        return Err(length_error("dst", dst.len(), need));
    }
    let text = &src[..body];
    if let Some(at) = first_invalid(p, text, cfg) {
        return Err(Error::Encoding {
            format: "base64",
            offset: at,
            reason: format!("byte 0x{:02x} is not a base64 symbol", text[at]),
        });
    }
    // The unused low bits of a final partial group's last symbol.
    let unused = match body % 4 {
        2 => 15,
        3 => 3,
        _ => 0,
    };
    if unused != 0 && cfg.value(text[body - 1]) & unused != 0 {
        return Err(Error::Encoding {
            format: "base64",
            offset: body - 1,
            reason: "the last symbol has bits set after the last byte".into(),
        });
    }
    let full = body / 4 * 4;
    let done = decode(p, &text[..full], &mut dst[..full / 4 * 3], cfg);
    debug_assert_eq!(done, full / 4 * 3);
    let v: Vec<u8> = text[full..].iter().map(|&c| cfg.value(c)).collect();
    let out = &mut dst[done..need];
    if v.len() >= 2 {
        out[0] = v[0] << 2 | v[1] >> 4;
    }
    if v.len() == 3 {
        out[1] = v[1] << 4 | v[2] >> 2;
    }
    Ok(need)
}

/// Encodes whole groups of three; returns the symbols written.
fn encode_scalar(src: &[u8], dst: &mut [u8], cfg: Base64) -> usize {
    let sym = cfg.symbols();
    let mut k = 0;
    for g in src.chunks_exact(3) {
        let w = (g[0] as u32) << 16 | (g[1] as u32) << 8 | g[2] as u32;
        for (j, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            dst[k + j] = sym[(w >> shift & 63) as usize];
        }
        k += 4;
    }
    k
}

/// The offsets that turn a field value into its symbol, by the value's
/// class (0: 26..=51, 1–10: 52..=61, 11: 62, 12: 63, 13: 0..=25).
fn offsets(cfg: Base64) -> [u8; 16] {
    let (s62, s63) = if cfg.url { (b'-', b'_') } else { (b'+', b'/') };
    let mut t = [0u8; 16];
    t[0] = b'a'.wrapping_sub(26);
    for e in &mut t[1..11] {
        *e = b'0'.wrapping_sub(52);
    }
    t[11] = s62.wrapping_sub(62);
    t[12] = s63.wrapping_sub(63);
    t[13] = b'A';
    t
}

/// # Safety
/// The CPU runs `R`'s instructions; `src` is whole groups of three and
/// `dst` holds `4/3` as many bytes.
#[inline(always)]
unsafe fn encode_vec<R: ByteReg>(src: &[u8], dst: &mut [u8], cfg: Base64) -> usize {
    let l = R::LANES;
    let step = 3 * l / 4;
    let n = src.len();
    let (ps, pd) = (src.as_ptr(), dst.as_mut_ptr());
    let mut i = 0;
    let mut k = 0;
    // SAFETY: the caller runs R's instructions; each step reads the 3l/4
    // bytes from i ≤ n − 3l/4 and writes the l from k = 4i/3 ≤ 4n/3 − l.
    unsafe {
        let spread = R::table16(&[1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10]);
        let (m0, k0) = (R::set1_u32(0x0fc0_fc00), R::set1_u32(0x0400_0040));
        let (m1, k1) = (R::set1_u32(0x003f_03f0), R::set1_u32(0x0100_0010));
        let table = R::table16(&offsets(cfg));
        let (c51, c25, c13) = (R::set1(51), R::set1(25), R::set1(13));
        while i + step <= n {
            let x = R::lookup16(R::load12(ps.add(i)), spread);
            // The four 6-bit fields of each group, one per byte.
            let v = R::or(
                R::mulhi_u16(R::and(x, m0), k0),
                R::mullo_u16(R::and(x, m1), k1),
            );
            let below26 = R::eq(R::min(v, c25), v);
            let class = R::or(R::subs(v, c51), R::and(below26, c13));
            R::add(v, R::lookup16(table, class)).store(pd.add(k));
            i += step;
            k += l;
        }
    }
    k + encode_scalar(&src[i..], &mut dst[k..], cfg)
}

tiered! {
    fn encode(src: &[u8], dst: &mut [u8], cfg: Base64) -> usize {
        vector: encode_vec, scalar: encode_scalar
    }
}

/// The lanes of `x` in `[lo, lo + span]` (`(x − lo) mod 256 ≤ span`), and
/// `x − lo + base` in them (0 in the others).
///
/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn range<R: ByteReg>(x: R, lo: u8, span: u8, base: u8) -> (R, R) {
    // SAFETY: the caller runs R's instructions.
    unsafe {
        let d = R::add(x, R::set1(lo.wrapping_neg()));
        let hit = R::eq(R::min(d, R::set1(span)), d);
        (hit, R::and(hit, R::add(d, R::set1(base))))
    }
}

/// The values of the symbols in `x` (`(value, valid)`, `valid` 0xff in the
/// lanes holding a symbol of the alphabet).
///
/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn classify<R: ByteReg>(x: R, cfg: Base64) -> (R, R) {
    // SAFETY: the caller runs R's instructions.
    unsafe {
        let (s62, s63) = if cfg.url { (b'-', b'_') } else { (b'+', b'/') };
        let (h0, v0) = range::<R>(x, b'A', 25, 0);
        let (h1, v1) = range::<R>(x, b'a', 25, 26);
        let (h2, v2) = range::<R>(x, b'0', 9, 52);
        let h3 = R::eq(x, R::set1(s62));
        let h4 = R::eq(x, R::set1(s63));
        let v = R::or(
            R::or(v0, v1),
            R::or(v2, R::or(R::and(h3, R::set1(62)), R::and(h4, R::set1(63)))),
        );
        (v, R::or(R::or(h0, h1), R::or(h2, R::or(h3, h4))))
    }
}

/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn first_invalid_vec<R: ByteReg>(src: &[u8], cfg: Base64) -> Option<usize> {
    let l = R::LANES;
    let n = src.len();
    let ps = src.as_ptr();
    let full = super::first_lanes(l);
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; every load reads l bytes
    // from an offset at most n − l.
    unsafe {
        let ones = R::set1(0xff);
        while i + l <= n {
            let (_, ok) = classify::<R>(R::load(ps.add(i)), cfg);
            let bad = !R::eq_bits(ok, ones) & full;
            if bad != 0 {
                return Some(i + bad.trailing_zeros() as usize);
            }
            i += l;
        }
    }
    first_invalid_scalar(&src[i..], cfg).map(|k| i + k)
}

fn first_invalid_scalar(src: &[u8], cfg: Base64) -> Option<usize> {
    src.iter().position(|&c| cfg.value(c) == 64)
}

tiered! {
    fn first_invalid(src: &[u8], cfg: Base64) -> Option<usize> {
        vector: first_invalid_vec, scalar: first_invalid_scalar
    }
}

/// Decodes whole groups of four valid symbols; returns the bytes written.
fn decode_scalar(src: &[u8], dst: &mut [u8], cfg: Base64) -> usize {
    let mut k = 0;
    for g in src.chunks_exact(4) {
        let w = g.iter().fold(0u32, |w, &c| w << 6 | cfg.value(c) as u32);
        dst[k] = (w >> 16) as u8;
        dst[k + 1] = (w >> 8) as u8;
        dst[k + 2] = w as u8;
        k += 3;
    }
    k
}

/// # Safety
/// The CPU runs `R`'s instructions; `src` is whole groups of four valid
/// symbols and `dst` holds `3/4` as many bytes.
#[inline(always)]
unsafe fn decode_vec<R: ByteReg>(src: &[u8], dst: &mut [u8], cfg: Base64) -> usize {
    let l = R::LANES;
    let step = 3 * l / 4;
    let n = src.len();
    let (ps, pd) = (src.as_ptr(), dst.as_mut_ptr());
    let mut i = 0;
    let mut k = 0;
    // SAFETY: the caller runs R's instructions; each step reads the l
    // symbols from i ≤ n − l and writes the 3l/4 bytes from k = 3i/4.
    unsafe {
        let (w1, w2) = (R::set1_u32(0x0140_0140), R::set1_u32(0x0001_1000));
        let gather = R::table16(&[2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, 3, 7, 11, 15]);
        while i + l <= n {
            let (v, _) = classify::<R>(R::load(ps.add(i)), cfg);
            // Pairs of 6-bit values to 12 bits, pairs of those to 24 bits
            // (the first symbol highest), then the three bytes of each
            // 32-bit lane high first.
            let w = R::madd16(R::maddubs(v, w1), w2);
            R::lookup16(w, gather).store12(pd.add(k));
            i += l;
            k += step;
        }
    }
    k + decode_scalar(&src[i..], &mut dst[k..], cfg)
}

tiered! {
    fn decode(src: &[u8], dst: &mut [u8], cfg: Base64) -> usize {
        vector: decode_vec, scalar: decode_scalar
    }
}
