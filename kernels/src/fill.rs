//! Counter-based random fill: element i of a destination (its position in C
//! order over the destination's shape) is a function of the seed and i alone,
//! so the stream is the same on every tier, at every thread count and for
//! every layout, needs no state between calls and splits across threads
//! freely.
//!
//! The bits of element i are splitmix64's finaliser of `seed + (i + 1)·φ`
//! (φ = 0x9E3779B97F4A7C15, wrapping). Integers take the low bits of their
//! width, bool the lowest bit. Floats are uniform on [0, 1) and never 1: the
//! top p bits of the word (p = the dtype's significand precision: 24 for f32,
//! 53 for f64, 11 for f16, 8 for bf16) as k·2^-p, which each of those dtypes
//! holds exactly. Not cryptographic.

use crate::array::ArrayViewMut;
use crate::checks::check_destination;
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::DType;
use rayon::prelude::*;

/// The golden-ratio increment of the counter.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The 64 random bits of element `i` for `seed`.
#[inline]
pub fn bits(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_add(1).wrapping_mul(GOLDEN));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Write the stored bytes (little-endian) of element `i` into `out` (a dtype
/// [`supported`] accepts).
fn element(d: DType, seed: u64, i: u64, out: &mut [u8]) {
    let z = bits(seed, i);
    match d {
        DType::Bool => out[0] = (z & 1) as u8,
        DType::F32 => {
            out.copy_from_slice(&(((z >> 40) as f32) * (1.0 / 16_777_216.0)).to_le_bytes())
        }
        DType::F64 => out
            .copy_from_slice(&(((z >> 11) as f64) * (1.0 / 9_007_199_254_740_992.0)).to_le_bytes()),
        DType::F16 => {
            // k·2^-11 for k < 2^11 as binary16 bits (exact).
            let v = ((z >> 53) as f32) * (1.0 / 2048.0);
            out.copy_from_slice(&f16_bits(v).to_le_bytes());
        }
        DType::Bf16 => {
            // k·2^-8 for k < 2^8: its f32 bits' top half (exact).
            let v = ((z >> 56) as f32) * (1.0 / 256.0);
            out.copy_from_slice(&((v.to_bits() >> 16) as u16).to_le_bytes());
        }
        _ => {
            let w = out.len();
            out.copy_from_slice(&z.to_le_bytes()[..w]);
        }
    }
}

/// binary16 bits of a value k·2^-11, 0 ≤ k < 2^11 (normal or zero in f16).
fn f16_bits(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let b = v.to_bits();
    let e = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let m = (b >> 13) & 0x3ff; // exact: k has at most 11 significant bits
    ((e as u32) << 10 | m) as u16
}

/// Whether [`random`] fills `dtype` (a query: nothing computed), refused as
/// `random` refuses it otherwise: bool, integers of 8 bits or more, f16,
/// bf16, f32 and f64 are defined.
pub fn random_dtype(d: DType) -> Result<()> {
    let info = d.info();
    let ok = matches!(
        d,
        DType::Bool | DType::F16 | DType::Bf16 | DType::F32 | DType::F64
    ) || (matches!(info.class, crate::Class::Int | crate::Class::Uint)
        && info.values_per_byte == 1);
    if ok {
        Ok(())
    } else {
        Err(Error::DTypeUnsupported {
            operand: "random fill destination".into(),
            dtype: d,
            reason: "random fill defines bool, integers of 8 bits or more, f16, bf16, f32 and f64"
                .into(),
        })
    }
}

/// Elements below which a fill stays on the calling thread.
const PARALLEL_MIN: usize = 1 << 16;

/// Fill `out` with the counter-based stream of `seed` (see the module doc).
///
/// Refused before any write: a dtype other than bool, the byte-sized and wider
/// integers, f16, bf16, f32 and f64 ([`Error::DTypeUnsupported`]), and a destination
/// that reaches one element twice ([`Error::Layout`]).
pub fn random(seed: u64, out: &mut ArrayViewMut<'_>, exec: &Exec) -> Result<()> {
    let d = out.dtype();
    random_dtype(d)?;
    check_destination(out)?;
    let n = out.layout().len();
    if n == 0 {
        return Ok(());
    }
    let w = d.info().item_bytes;
    let shape = out.shape().to_vec();
    let strides = out.strides().to_vec();
    let offset = out.layout().offset;
    let data = out.data_mut();
    if crate::array::c_contiguous(&shape, &strides) {
        let bytes = &mut data[offset * w..(offset + n) * w];
        let threads = if n >= PARALLEL_MIN {
            exec.thread_count()
        } else {
            1
        };
        let chunk = n.div_ceil(threads.max(1)).max(1);
        bytes
            .par_chunks_mut(chunk * w)
            .enumerate()
            .for_each(|(c, part)| {
                for (j, e) in part.chunks_exact_mut(w).enumerate() {
                    element(d, seed, (c * chunk + j) as u64, e);
                }
            });
        return Ok(());
    }
    // Any other layout: walk the positions in C order.
    let mut idx = vec![0usize; shape.len()];
    for i in 0..n {
        let pos = offset as isize
            + idx
                .iter()
                .zip(&strides)
                .map(|(&k, &s)| k as isize * s)
                .sum::<isize>();
        let p = pos as usize * w;
        element(d, seed, i as u64, &mut data[p..p + w]);
        for a in (0..shape.len()).rev() {
            idx[a] += 1;
            if idx[a] < shape[a] {
                break;
            }
            idx[a] = 0;
        }
    }
    Ok(())
}
