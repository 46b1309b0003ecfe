//! The block-as-value layout of the block-scaled formats: one value is one
//! whole block, its element codes then its scale byte, values in C order of
//! the blocks. Element codes pack tight: E2M1 two a byte (element 0 in the
//! high nibble, as tessera's codes), E2M3 and E3M2 four in three bytes
//! (element 0 in the most significant six bits of the first byte), eight-bit
//! elements one a byte. Bytes per value: MXFP8 and MXINT8 33, MXFP6 25,
//! MXFP4 17, NVFP4 9 (whose f32 tensor scale stays outside the values, with
//! the tensor). [`to_block_values`] and [`from_block_values`] convert
//! between this layout and [`super::encode`]'s codes and scales, bit for
//! bit; [`encode_block_values`] and [`decode_block_values`] are encode and
//! decode through it.

use super::{decode, encode, encoded_sizes, EncodedSizes};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{DType, Format, ScaleRule};

/// Bits of one element code of `format`.
fn element_bits(format: Format) -> usize {
    DType::from_name(format.info().element)
        .expect("formats.toml names dtypes of dtypes.toml")
        .info()
        .bits as usize
}

/// Bytes of one block value of `format`: its element codes packed tight,
/// then one scale byte.
pub fn block_value_bytes(format: Format) -> usize {
    format.info().block * element_bits(format) / 8 + 1
}

/// Bytes of the block values of a tensor of `shape` (a query; refuses what
/// [`encoded_sizes`] refuses, and sizes that overflow).
pub fn block_values_len(format: Format, shape: &[usize]) -> Result<usize> {
    let sizes = encoded_sizes(format, shape)?;
    sizes
        .blocks
        .checked_mul(block_value_bytes(format))
        .ok_or(Error::Overflow {
            operand: "block values".into(),
        })
}

fn check(what: &str, len: usize, expected: usize) -> Result<()> {
    if len == expected {
        Ok(())
    } else {
        Err(Error::Length {
            operand: what.into(),
            len,
            expected,
            unit: "bytes",
        })
    }
}

/// The block values of codes and scales of `format` (as [`super::encode`]
/// writes them for a tensor of `blocks` blocks) into `out`
/// ([`block_values_len`] bytes). Refuses slices of other lengths before any
/// write.
pub fn to_block_values(format: Format, codes: &[u8], scales: &[u8], out: &mut [u8]) -> Result<()> {
    let blocks = scales.len();
    let (block, bits, value) = (
        format.info().block,
        element_bits(format),
        block_value_bytes(format),
    );
    // tessera's codes: E2M1 two a byte, every other element one a byte.
    let per_block = if bits == 4 { block / 2 } else { block };
    check("codes", codes.len(), blocks * per_block)?;
    check("block values", out.len(), blocks * value)?;
    for b in 0..blocks {
        let src = &codes[b * per_block..(b + 1) * per_block];
        let dst = &mut out[b * value..(b + 1) * value];
        if bits == 6 {
            // Four codes into three bytes, element 0 first.
            for (q, four) in src.chunks_exact(4).enumerate() {
                let w = (four[0] as u32 & 63) << 18
                    | (four[1] as u32 & 63) << 12
                    | (four[2] as u32 & 63) << 6
                    | (four[3] as u32 & 63);
                dst[3 * q] = (w >> 16) as u8;
                dst[3 * q + 1] = (w >> 8) as u8;
                dst[3 * q + 2] = w as u8;
            }
        } else {
            dst[..per_block].copy_from_slice(src);
        }
        dst[value - 1] = scales[b];
    }
    Ok(())
}

/// The codes and scales of block values of `format` (the inverse of
/// [`to_block_values`]): `values` holds whole values, `codes` and `scales`
/// the sizes [`super::encode`] uses for as many blocks. Refuses other
/// lengths before any write.
pub fn from_block_values(
    format: Format,
    values: &[u8],
    codes: &mut [u8],
    scales: &mut [u8],
) -> Result<()> {
    let (block, bits, value) = (
        format.info().block,
        element_bits(format),
        block_value_bytes(format),
    );
    if !values.len().is_multiple_of(value) {
        return Err(Error::Length {
            operand: "block values (not whole values)".into(),
            len: values.len(),
            expected: values.len() / value * value,
            unit: "bytes",
        });
    }
    let blocks = values.len() / value;
    let per_block = if bits == 4 { block / 2 } else { block };
    check("codes", codes.len(), blocks * per_block)?;
    check("scales", scales.len(), blocks)?;
    for b in 0..blocks {
        let src = &values[b * value..(b + 1) * value];
        let dst = &mut codes[b * per_block..(b + 1) * per_block];
        if bits == 6 {
            for (q, four) in dst.chunks_exact_mut(4).enumerate() {
                let w = (src[3 * q] as u32) << 16
                    | (src[3 * q + 1] as u32) << 8
                    | src[3 * q + 2] as u32;
                four[0] = (w >> 18) as u8 & 63;
                four[1] = (w >> 12) as u8 & 63;
                four[2] = (w >> 6) as u8 & 63;
                four[3] = w as u8 & 63;
            }
        } else {
            dst.copy_from_slice(&src[..per_block]);
        }
        scales[b] = src[value - 1];
    }
    Ok(())
}

/// [`super::encode`] of `src` into block values `out` ([`block_values_len`]
/// bytes): the same codes and scales, in this layout. Returns the tensor
/// scale of a format that has one. Refusals are encode's and the length's,
/// before any write.
pub fn encode_block_values(
    format: Format,
    rule: Option<ScaleRule>,
    src: &ArrayView<'_>,
    out: &mut [u8],
    exec: &Exec,
) -> Result<Option<f32>> {
    let sizes: EncodedSizes = encoded_sizes(format, src.shape())?;
    check(
        "block values",
        out.len(),
        block_values_len(format, src.shape())?,
    )?;
    let mut codes = crate::alloc::try_filled(sizes.code_bytes, 0u8, "the codes")?;
    let mut scales = crate::alloc::try_filled(sizes.blocks, 0u8, "the scales")?;
    let t = encode(format, rule, src, &mut codes, &mut scales, exec)?;
    to_block_values(format, &codes, &scales, out)?;
    Ok(t)
}

/// [`super::decode`] of block values (`values`, [`block_values_len`] bytes
/// for `dst`'s shape) into `dst`: the same values as decoding the codes and
/// scales they hold. Refusals are decode's and the length's, before any
/// write.
pub fn decode_block_values(
    format: Format,
    values: &[u8],
    tensor_scale: Option<f32>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let sizes = encoded_sizes(format, dst.shape())?;
    check(
        "block values",
        values.len(),
        block_values_len(format, dst.shape())?,
    )?;
    let mut codes = crate::alloc::try_filled(sizes.code_bytes, 0u8, "the codes")?;
    let mut scales = crate::alloc::try_filled(sizes.blocks, 0u8, "the scales")?;
    from_block_values(format, values, &mut codes, &mut scales)?;
    decode(format, &codes, &scales, tensor_scale, dst, exec)
}
