//! The byte and text kernels: search, count, compare, bit counts, ASCII
//! case, UTF-8 validation, hex, base64, decimal integers, run starts,
//! BT.601 planes, bit packing, zigzag and LEB128 varints, over `&[u8]` (and
//! `&[u16]`, `&[u32]`, `&[u64]` and signed integers where named). Every result is an exact function of the bytes: each tier
//! gives the scalar tier's counts, positions and bytes (integer work has no
//! rounding, so the lane width is not observable), which the tests hold to
//! naive models on every tier.
//!
//! Where each call is:
//!
//! | calls | file |
//! |---|---|
//! | [`index_byte`], [`last_index_byte`], [`count_byte`], [`index_all`], [`index_any`], [`last_index_any`], [`count_any`], [`index_not_any`], [`last_index_not_any`] | `search.rs` |
//! | [`index`], [`last_index`], [`count_seq`] (substring search) | `substring.rs` |
//! | [`equal`], [`compare`], [`common_prefix`] | `compare.rs` |
//! | [`popcount`], [`hamming`], [`hamming_words`] | `bits.rs` |
//! | [`is_ascii`], [`index_non_ascii`], [`index_non_ascii16`], [`to_upper_ascii`], [`to_lower_ascii`], [`equal_fold_ascii`], [`replace_byte`] | `text.rs` |
//! | [`utf8_valid_up_to`], [`valid_utf8`] | `utf8.rs` |
//! | [`hex_encode`], [`hex_decode`], [`hex_decoded_len`] | `hex.rs` |
//! | [`parse_ints`], [`parse_uints`], [`format_ints`], [`format_ints_len`] | `ints.rs` |
//! | [`run_starts`], [`grayscale`], [`rgb_to_uv`] | `runs.rs` |
//! | [`base64_encode`], [`base64_decode`], [`base64_encoded_len`], [`base64_decoded_len`], [`Base64`] | `base64.rs` |
//! | [`bit_pack_u32`], [`bit_unpack_u32`], [`bit_packed_words`] | `pack.rs` |
//! | [`and`], [`or`], [`xor`], [`and_not`], [`not`], [`fill`], [`widen_u8_u16`], [`widen_u8_u32`], [`narrow_u16_u8`], [`narrow_u32_u8`] | `logic.rs` |
//! | [`zigzag_encode`], [`zigzag_decode`], [`varint_lens`], [`varint_size`], [`varint_encode`], [`varint_count`], [`varint_decode`], [`Zigzag`], [`Varint`] | `varint.rs` |
//!
//! "Absent" is `None` for the searches; [`index_non_ascii`] returns the
//! length where every byte is ASCII (the length of the ASCII run, as a
//! caller converting runs wants it). Calls that write take their
//! destination's length as the contract: a destination too short (or, for
//! same-length maps, of another length) is refused with
//! [`Error::Length`](crate::Error::Length) before any write, and a decoder
//! refuses invalid input with [`Error::Encoding`](crate::Error::Encoding)
//! (the offset of the first byte in error) before any write, so a refused
//! call leaves its destination as it was.
//!
//! Every call takes an [`Exec`] for its tier (the host table's choice for
//! [`Engine::Bytes`](crate::tier::Engine::Bytes), or the tier the `Exec`
//! names); the kernels run on one thread.

mod base64;
mod bits;
mod compare;
mod hex;
mod ints;
mod logic;
mod pack;
mod runs;
mod search;
mod substring;
mod text;
mod utf8;
mod varint;

pub use base64::{base64_decode, base64_decoded_len, base64_encode, base64_encoded_len, Base64};
pub use bits::{hamming, hamming_words, popcount};
pub use compare::{common_prefix, compare, equal};
pub use hex::{hex_decode, hex_decoded_len, hex_encode};
pub use ints::{format_ints, format_ints_len, parse_ints, parse_uints};
pub use logic::{
    and, and_not, fill, narrow_u16_u8, narrow_u32_u8, not, or, widen_u8_u16, widen_u8_u32, xor,
};
pub use pack::{bit_pack_u32, bit_packed_words, bit_unpack_u32};
pub use runs::{grayscale, rgb_to_uv, run_starts};
pub use search::{
    count_any, count_byte, index_all, index_any, index_byte, index_not_any, last_index_any,
    last_index_byte, last_index_not_any,
};
pub use substring::{count_seq, index, last_index};
pub use text::{
    equal_fold_ascii, index_non_ascii, index_non_ascii16, is_ascii, replace_byte, to_lower_ascii,
    to_upper_ascii,
};
pub use utf8::{utf8_valid_up_to, valid_utf8};
pub use varint::{
    varint_count, varint_decode, varint_encode, varint_lens, varint_size, zigzag_decode,
    zigzag_encode, Varint, Zigzag,
};

use crate::tier::Engine;
use crate::{Exec, Result};

/// The code a byte kernel runs: plain Rust, or the register code of one
/// instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// The path of `exec`'s tier for the byte engine.
fn path(exec: &Exec) -> Result<Path> {
    let tier = exec.resolve_tier_for(Engine::Bytes)?;
    #[cfg(target_arch = "x86_64")]
    {
        if crate::tier::runs_avx512bw(tier) && tier.available() {
            return Ok(Path::Avx512);
        }
        if crate::tier::runs_avx2(tier) && tier.available() {
            return Ok(Path::Avx2);
        }
    }
    let _ = tier;
    Ok(Path::Scalar)
}

/// `fn $name(path, args) -> ret`: the generic register body `$vec::<R>`
/// on the path's instruction set, or the plain `$scalar`.
macro_rules! tiered {
    ($vis:vis fn $name:ident($($a:ident: $t:ty),*) -> $r:ty { vector: $vec:ident, scalar: $sc:expr }) => {
        $vis fn $name(path: $crate::bytes::Path, $($a: $t),*) -> $r {
            #[cfg(target_arch = "x86_64")]
            {
                use core::arch::x86_64::{__m256i, __m512i};
                /// # Safety
                /// The CPU runs AVX2 and POPCNT.
                #[target_feature(enable = "avx2,popcnt")]
                unsafe fn on_avx2($($a: $t),*) -> $r {
                    // SAFETY: this function enables AVX2 (and POPCNT, for the
                    // mask counts), which its caller runs.
                    unsafe { $vec::<__m256i>($($a),*) }
                }
                /// # Safety
                /// The CPU runs AVX-512 F and BW, AVX2 and POPCNT.
                #[target_feature(enable = "avx512f,avx512bw,avx2,popcnt")]
                unsafe fn on_avx512($($a: $t),*) -> $r {
                    // SAFETY: this function enables AVX-512 F and BW, AVX2
                    // and POPCNT, which its caller runs.
                    unsafe { $vec::<__m512i>($($a),*) }
                }
                match path {
                    // SAFETY: the path is Avx512 only where the tier runs
                    // AVX-512 F and BW with AVX2 and POPCNT on this CPU
                    // (`path`: `runs_avx512bw` implies `runs_avx2`).
                    $crate::bytes::Path::Avx512 => return unsafe { on_avx512($($a),*) },
                    // SAFETY: the path is Avx2 only where the tier runs AVX2
                    // and POPCNT on this CPU (`path`, `runs_avx2`).
                    $crate::bytes::Path::Avx2 => return unsafe { on_avx2($($a),*) },
                    $crate::bytes::Path::Scalar => {}
                }
            }
            let _ = path;
            $sc($($a),*)
        }
    };
}
pub(crate) use tiered;

/// The set of the first `n` lanes (`n ≤ 64`): every lane of a register of
/// `n` lanes.
fn first_lanes(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// A destination of the wrong length, refused before any write.
fn length_error(operand: &str, len: usize, expected: usize) -> crate::Error {
    crate::Error::Length {
        operand: operand.to_string(),
        len,
        expected,
        unit: "bytes",
    }
}
