//! Run starts, and the BT.601 luma and chroma planes of planar RGB.
//!
//! These are elementwise integer maps (exact, so every tier gives the same
//! bytes); on the vector tiers the same plain-Rust loop is compiled with
//! the tier's instructions.

use super::{length_error, path, tiered};
use crate::simd::ByteReg;
use crate::{Exec, Result};

/// Marks in `dst` the first element of every run of equal values of
/// `src`: `dst[0]` is true (where `src` is not empty) and `dst[i]` is
/// `src[i] != src[i − 1]` (the two-phase form of run-length encoding:
/// `compress` by this mask finds the runs).
///
/// # Errors
/// [`Error::Length`](crate::Error::Length) where `dst` is not as long as
/// `src` (nothing written); the `Exec`'s.
pub fn run_starts<T: Copy + PartialEq>(src: &[T], dst: &mut [bool], exec: &Exec) -> Result<()> {
    path(exec)?;
    if dst.len() != src.len() {
        return Err(length_error("dst", dst.len(), src.len()));
    }
    if let Some(first) = dst.first_mut() {
        *first = true;
    }
    for (d, w) in dst.iter_mut().skip(1).zip(src.windows(2)) {
        *d = w[1] != w[0];
    }
    Ok(())
}

/// The luma plane of planar 8-bit RGB, BT.601 weights in Q8 fixed point
/// (full range, as JPEG): `Y = (77·R + 150·G + 29·B + 128) >> 8` (the
/// weights sum to 256, so Y stays in 0..=255). Exact.
///
/// # Errors
/// [`Error::Length`](crate::Error::Length) where the planes and `dst`
/// differ in length (nothing written); the `Exec`'s.
pub fn grayscale(r: &[u8], g: &[u8], b: &[u8], dst: &mut [u8], exec: &Exec) -> Result<()> {
    let p = path(exec)?;
    for (name, len) in [("g", g.len()), ("b", b.len()), ("dst", dst.len())] {
        if len != r.len() {
            return Err(length_error(name, len, r.len()));
        }
    }
    luma(p, r, g, b, dst);
    Ok(())
}

/// The chroma planes of planar 8-bit RGB, BT.601 in Q8 fixed point (full
/// range): `U = 128 + ((−43·R − 85·G + 128·B + 128) >> 8)` and
/// `V = 128 + ((128·R − 107·G − 21·B + 128) >> 8)` (`>>` an arithmetic
/// shift: the floor), each clamped to 0..=255 (only 256 occurs above, for
/// pure blue in U and pure red in V). Exact.
///
/// # Errors
/// As [`grayscale`], for `u` and `v`.
pub fn rgb_to_uv(
    r: &[u8],
    g: &[u8],
    b: &[u8],
    u: &mut [u8],
    v: &mut [u8],
    exec: &Exec,
) -> Result<()> {
    let p = path(exec)?;
    for (name, len) in [
        ("g", g.len()),
        ("b", b.len()),
        ("u", u.len()),
        ("v", v.len()),
    ] {
        if len != r.len() {
            return Err(length_error(name, len, r.len()));
        }
    }
    chroma(p, r, g, b, u, v);
    Ok(())
}

#[inline(always)]
fn luma_scalar(r: &[u8], g: &[u8], b: &[u8], dst: &mut [u8]) {
    for (((d, &r), &g), &b) in dst.iter_mut().zip(r).zip(g).zip(b) {
        *d = ((77 * r as u32 + 150 * g as u32 + 29 * b as u32 + 128) >> 8) as u8;
    }
}

/// # Safety
/// The CPU runs `R`'s instructions (the loop is compiled with them).
#[inline(always)]
unsafe fn luma_vec<R: ByteReg>(r: &[u8], g: &[u8], b: &[u8], dst: &mut [u8]) {
    luma_scalar(r, g, b, dst)
}

tiered! {
    fn luma(r: &[u8], g: &[u8], b: &[u8], dst: &mut [u8]) -> () {
        vector: luma_vec, scalar: luma_scalar
    }
}

#[inline(always)]
fn chroma_scalar(r: &[u8], g: &[u8], b: &[u8], u: &mut [u8], v: &mut [u8]) {
    for (i, (uo, vo)) in u.iter_mut().zip(v.iter_mut()).enumerate() {
        let (r, g, b) = (r[i] as i32, g[i] as i32, b[i] as i32);
        *uo = (128 + ((-43 * r - 85 * g + 128 * b + 128) >> 8)).min(255) as u8;
        *vo = (128 + ((128 * r - 107 * g - 21 * b + 128) >> 8)).min(255) as u8;
    }
}

/// # Safety
/// The CPU runs `R`'s instructions (the loop is compiled with them).
#[inline(always)]
unsafe fn chroma_vec<R: ByteReg>(r: &[u8], g: &[u8], b: &[u8], u: &mut [u8], v: &mut [u8]) {
    chroma_scalar(r, g, b, u, v)
}

tiered! {
    fn chroma(r: &[u8], g: &[u8], b: &[u8], u: &mut [u8], v: &mut [u8]) -> () {
        vector: chroma_vec, scalar: chroma_scalar
    }
}
