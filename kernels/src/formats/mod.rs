//! Block-scaled formats (`spec/formats.toml`): OCP MXFP8, MXFP6, MXFP4 and MXINT8
//! with one UE8M0 scale per 32 elements, and NVFP4 with one UE4M3 scale per 16
//! and one f32 scale per tensor. Blocks run along the last axis, whose length
//! must be a whole number of blocks.
//!
//! Layout of an encoded tensor of shape `[.., n]` with `r` rows of `n`:
//! `codes` holds the element codes in C order (e2m1 packed two per byte, element
//! 0 in the high nibble; other elements one byte each), `scales` one scale code
//! per block in C order (`r × n / block` bytes), and NVFP4 adds an f32 tensor
//! scale returned by [`encode`].
//!
//! Every value works in f64, where every step below is exact, and rounds once:
//! - **MX, scale rule `floor`** (OCP MX v1.0): the shared exponent is
//!   `floor(log2 amax) − emax`, with `floor(log2 amax)` read from amax's
//!   exponent bits (subnormals included) and `emax` the exponent of the element
//!   type's largest finite value (0 for MXINT8). **`ceil`**: the smallest
//!   exponent with `amax ≤ max_element · 2^e`, so no element clamps. The
//!   exponent is clamped to UE8M0's range [−127, 127] (underflow and overflow).
//!   Elements are the values times the exact reciprocal `2^−e` (a power of two,
//!   so the product is exact), rounded once to nearest even into the element
//!   type with saturation; MXINT8 elements are `round_half_even(v · 2^−e · 64)`
//!   clamped to [−128, 127].
//! - **NVFP4**: the tensor scale is `t = amax_tensor / (448 · 6)` rounded to f32
//!   (1 when the tensor is all zeros or has no finite value); a block's scale is
//!   `amax_block / (6 · t)` rounded to nearest even into UE4M3 (saturating); its
//!   elements are the values divided by the decoded `d = ue4m3 · t` (a true
//!   division: d is not a power of two; the quotient's rounding is made exact by
//!   checking the FMA residual) rounded to nearest even into E2M1 with
//!   saturation. A block whose scale decodes to 0 stores zeros.
//! - **Specials**: a block holding a NaN or an infinity gets the scale dtype's NaN
//!   code and decodes to NaN everywhere; an all-zero block gets the smallest
//!   scale (UE8M0 code 0, UE4M3 code 0) and zero elements of the values' signs.
//! - **Decode** multiplies each element by its block's scale (and the tensor
//!   scale) in f64, exactly, and rounds once into the destination dtype.
//!
//! `ue8m0_encode` / `ue8m0_decode` (`ue8m0.rs`) convert f32 magnitudes to and
//! from the seed's variant of the UE8M0 byte (0x00 is zero, the rounding split
//! at the geometric midpoint √2·2^e, saturation to 0xFE), beside the OCP
//! `e8m0fnu` dtype that the MX scales use.
//!
//! An MX encode of values that are all exactly f32 (floats narrower than f64,
//! integers of at most 16 bits, bool) runs in f32 with the same codes: tiles of
//! 1024 values in L1, read in place from contiguous f32 rows (on up to the
//! call's thread count, whole tiles each, so the bytes do not depend on it),
//! each block's scale taken from the bits and its values multiplied by the
//! exact reciprocal, then the tier's casts into the scale and element dtypes.

use crate::array::{ArrayView, ArrayViewMut, Layout};
use crate::cast::{cast, CastMode};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{DType, Format, ScaleRule};

mod block_values;
mod mx_f32;
mod ue8m0;

pub use block_values::{
    block_value_bytes, block_values_len, decode_block_values, encode_block_values,
    from_block_values, to_block_values,
};

pub use ue8m0::{ue8m0_decode, ue8m0_encode, ue8m0_of, ue8m0_value};

/// Bytes an encoded tensor of `len` elements needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodedSizes {
    /// Blocks (and scale bytes).
    pub blocks: usize,
    /// Bytes of element codes.
    pub code_bytes: usize,
}

fn dtype(name: &str) -> DType {
    DType::from_name(name).expect("formats.toml names dtypes of dtypes.toml (validated)")
}

/// The sizes of an encoded tensor of `shape`, or why it cannot be encoded.
pub fn encoded_sizes(format: Format, shape: &[usize]) -> Result<EncodedSizes> {
    let info = format.info();
    let n = *shape.last().ok_or_else(|| Error::Layout {
        operand: "source".into(),
        reason: format!(
            "{} encodes along the last axis; a rank-0 array has none",
            info.name
        ),
    })?;
    if n % info.block != 0 {
        return Err(Error::Layout {
            operand: "source".into(),
            reason: format!(
                "the last axis has {n} values, not a whole number of {} blocks of {}",
                info.name, info.block
            ),
        });
    }
    // 0 where an extent is 0, whatever the others.
    let len = crate::array::count_of(shape, "source")?;
    let vpb = dtype(info.element).info().values_per_byte as usize;
    Ok(EncodedSizes {
        blocks: len / info.block,
        code_bytes: len / vpb,
    })
}

/// Element positions (in elements) of each row's first value, C order (one
/// per row of the encoded tensor, whose scales the caller holds).
fn row_offsets(layout: &Layout) -> Result<Vec<isize>> {
    let rank = layout.shape.len();
    let outer = &layout.shape[..rank - 1];
    let rows = crate::array::extent_product(outer.iter().copied());
    let mut out = crate::alloc::try_vec(rows, "formats scratch (row offsets)")?;
    let mut idx = vec![0usize; outer.len()];
    for _ in 0..rows {
        let mut p = layout.offset as isize;
        for (i, &k) in idx.iter().enumerate() {
            p += k as isize * layout.strides[i];
        }
        out.push(p);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < outer[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(out)
}

/// `n` zeros in a vector reserved fallibly ([`Error::Alloc`]): scratch
/// proportional to a row of the tensor, or to its rows.
fn try_zeros<T: Clone + Default>(n: usize, what: &str) -> Result<Vec<T>> {
    crate::alloc::try_zeroed(n, format_args!("formats scratch ({what})"))
}

/// floor(log2 |v|) of a finite non-zero f64, from its bits.
fn floor_log2(v: f64) -> i32 {
    let bits = v.abs().to_bits();
    let e = (bits >> 52) as i32;
    if e == 0 {
        -1074 + (63 - bits.leading_zeros() as i32)
    } else {
        e - 1023
    }
}

/// 2^e as an f64 from its bits (0 below the subnormals, infinity above the
/// range): exact, and without `powi`'s loop.
fn pow2(e: i32) -> f64 {
    if e > 1023 {
        f64::INFINITY
    } else if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else if e >= -1074 {
        f64::from_bits(1u64 << (e + 1074))
    } else {
        0.0
    }
}

struct Spec {
    element: DType,
    scale: DType,
    block: usize,
    fraction_bits: u32,
    /// Largest finite element magnitude and its exponent.
    max_element: f64,
    emax: i32,
}

fn spec_of(format: Format) -> Spec {
    let info = format.info();
    let element = dtype(info.element);
    let scale = dtype(info.scale);
    let max_element = match element.info().float {
        Some(f) => f.max_finite,
        None => 127.0 / pow2(info.fraction_bits as i32),
    };
    Spec {
        element,
        scale,
        block: info.block,
        fraction_bits: info.fraction_bits,
        max_element,
        emax: floor_log2(max_element),
    }
}

fn cast_slice(exec: &Exec, src: &[f64], to: DType, out: &mut [u8], mode: CastMode) -> Result<()> {
    let n = src.len();
    let v = ArrayView::from_slice(src, &[n])?;
    let mut o = ArrayViewMut::contiguous(to, &[n], out)?;
    cast(mode, &v, &mut o, exec)
}

fn decode_slice(exec: &Exec, from: DType, codes: &[u8], n: usize, out: &mut [f64]) -> Result<()> {
    let v = ArrayView::contiguous(from, &[n], codes)?;
    let mut o = ArrayViewMut::from_slice(&mut out[..n], &[n])?;
    cast(CastMode::Default, &v, &mut o, exec)
}

/// Encode `src` (any dtype; blocks along its last axis) into `codes` and
/// `scales` (sized by [`encoded_sizes`]). `rule` overrides the format's scale
/// rule for MX formats (`Floor` or `Ceil`); NVFP4 takes only its own rule.
/// Returns the tensor scale of formats that have one (NVFP4's: the finite
/// amax over 448·6, or 1 where that is zero or not finite).
pub fn encode(
    format: Format,
    rule: Option<ScaleRule>,
    src: &ArrayView<'_>,
    codes: &mut [u8],
    scales: &mut [u8],
    exec: &Exec,
) -> Result<Option<f32>> {
    encode_with(format, rule, None, src, codes, scales, exec)
}

/// [`encode`] of a format with a tensor scale (NVFP4) under the caller's
/// tensor scale `tensor` instead of one derived from the data: what a
/// caller does who shares one scale across tensors or calls (a calibrated
/// scale, a global amax). Each block's scale is then its amax over 6·tensor
/// rounded into UE4M3 (saturating), and each element its value over the
/// decoded scale times `tensor`, rounded once, exactly as [`encode`] does
/// with the scale it derives; values beyond what the codes reach saturate.
/// Refuses a format without a tensor scale and a `tensor` that is not a
/// positive finite f32 ([`Error::Attribute`]), then what [`encode`] refuses,
/// all before any write.
pub fn encode_with_tensor_scale(
    format: Format,
    tensor: f32,
    src: &ArrayView<'_>,
    codes: &mut [u8],
    scales: &mut [u8],
    exec: &Exec,
) -> Result<()> {
    if format.info().tensor_scale.is_none() {
        return Err(Error::Attribute {
            name: "encode: tensor_scale".into(),
            reason: format!("{} has no tensor scale", format.info().name),
        });
    }
    if !(tensor.is_finite() && tensor > 0.0) {
        return Err(Error::Attribute {
            name: "encode: tensor_scale".into(),
            reason: format!("a tensor scale is a positive finite f32, not {tensor}"),
        });
    }
    encode_with(format, None, Some(tensor), src, codes, scales, exec).map(|_| ())
}

fn encode_with(
    format: Format,
    rule: Option<ScaleRule>,
    given: Option<f32>,
    src: &ArrayView<'_>,
    codes: &mut [u8],
    scales: &mut [u8],
    exec: &Exec,
) -> Result<Option<f32>> {
    let info = format.info();
    let rule = rule.unwrap_or(info.scale_rule);
    if (rule == ScaleRule::Nvfp4) != (info.scale_rule == ScaleRule::Nvfp4) {
        return Err(Error::Attribute {
            name: "encode: rule".into(),
            reason: format!(
                "scale rule {rule:?} does not apply to {} (its rule is {:?})",
                info.name, info.scale_rule
            ),
        });
    }
    let sizes = encoded_sizes(format, src.shape())?;
    check_len("codes", codes.len(), sizes.code_bytes)?;
    check_len("scales", scales.len(), sizes.blocks)?;
    let sp = spec_of(format);
    let n = *src.shape().last().expect("checked by encoded_sizes");
    if sizes.blocks == 0 {
        return Ok(info.tensor_scale.map(|_| given.unwrap_or(1.0)));
    }
    let layout = src.layout();
    let rows = row_offsets(layout)?;
    let last_stride = *layout.strides.last().expect("rank ≥ 1");
    if rule != ScaleRule::Nvfp4 && exact_in_f32(src.dtype()) {
        encode_mx_f32(exec, &sp, rule, src, &rows, codes, scales)?;
        return Ok(None);
    }
    let mut row = try_zeros::<f64>(n, "a row")?;
    let read_row = |r: usize, row: &mut [f64]| -> Result<()> {
        let v = ArrayView::new(
            src.dtype(),
            &[n],
            &[last_stride],
            rows[r] as usize,
            src.data(),
        )?;
        let mut o = ArrayViewMut::from_slice(row, &[n])?;
        cast(CastMode::Default, &v, &mut o, exec)
    };
    // NVFP4's tensor scale is the caller's, or comes from a first pass over
    // every finite value.
    let tensor = if given.is_some() {
        given
    } else if rule == ScaleRule::Nvfp4 {
        let mut amax = 0f64;
        for r in 0..rows.len() {
            read_row(r, &mut row)?;
            for &v in &row {
                if v.is_finite() {
                    amax = amax.max(v.abs());
                }
            }
        }
        let t = (amax / (448.0 * 6.0)) as f32;
        Some(if t > 0.0 && t.is_finite() { t } else { 1.0 })
    } else {
        None
    };
    let blocks_per_row = n / sp.block;
    let code_bytes_per_row = sizes.code_bytes / rows.len();
    let mut scaled = try_zeros::<f64>(n, "a row")?;
    let mut scale_vals = try_zeros::<f64>(blocks_per_row, "a row's scales")?;
    let mut decoded = try_zeros::<f64>(blocks_per_row, "a row's scales")?;
    for r in 0..rows.len() {
        read_row(r, &mut row)?;
        let srow = &mut scales[r * blocks_per_row..(r + 1) * blocks_per_row];
        for b in 0..blocks_per_row {
            let vals = &row[b * sp.block..(b + 1) * sp.block];
            let special = vals.iter().any(|v| !v.is_finite());
            let amax = vals.iter().fold(0f64, |m, v| m.max(v.abs()));
            let out = &mut scaled[b * sp.block..(b + 1) * sp.block];
            // The scale's value, NaN for a special block; filled below.
            scale_vals[b] = if special {
                f64::NAN
            } else if let Some(t) = tensor {
                (amax / (6.0 * t as f64)).max(0.0)
            } else if amax == 0.0 {
                pow2(-127)
            } else {
                let e0 = floor_log2(amax) - sp.emax;
                let e = match rule {
                    ScaleRule::Ceil if amax > sp.max_element * pow2(e0) => e0 + 1,
                    _ => e0,
                };
                pow2(e.clamp(-127, 127))
            };
            out.copy_from_slice(vals);
        }
        // Scale codes (UE8M0 from exact powers of two; UE4M3 rounds, saturating).
        cast_slice(exec, &scale_vals, sp.scale, srow, CastMode::Saturating)?;
        decode_slice(exec, sp.scale, srow, blocks_per_row, &mut decoded)?;
        for b in 0..blocks_per_row {
            let out = &mut scaled[b * sp.block..(b + 1) * sp.block];
            let d = match tensor {
                Some(t) => decoded[b] * t as f64,
                None => decoded[b],
            };
            for v in out.iter_mut() {
                *v = if d.is_nan() {
                    *v
                } else if d == 0.0 {
                    0.0f64.copysign(*v)
                } else if tensor.is_some() {
                    exact_quotient(*v, d)
                } else {
                    // d is a power of two: multiplying by its reciprocal is exact.
                    *v * (1.0 / d)
                };
                if sp.element.info().float.is_none() {
                    *v = (*v * pow2(sp.fraction_bits as i32)).round_ties_even();
                }
            }
        }
        let crow = &mut codes[r * code_bytes_per_row..(r + 1) * code_bytes_per_row];
        cast_slice(exec, &scaled, sp.element, crow, CastMode::Saturating)?;
    }
    Ok(tensor)
}

/// Whether every value of `d` is exactly an f32 (so MX encoding can work in f32).
fn exact_in_f32(d: DType) -> bool {
    let info = d.info();
    match info.class {
        crate::Class::Float => info.bits < 64,
        crate::Class::Int | crate::Class::Uint => info.bits <= 16,
        crate::Class::Bool => true,
        crate::Class::Complex | crate::Class::Pair => false,
    }
}

/// Values converted per call when the source is not contiguous f32: 64 KiB of
/// f32, in L2, and few enough calls that their cost is small.
const MX_TILE: usize = 16384;

/// MX encoding in f32 ([`mx_f32`]): the same codes as the f64 path. Every source
/// value is exactly an f32; scaling by the power of two 2^-e is exact except
/// where the product falls below f32's normal range, and there it is far below
/// half the element type's smallest step, so the element rounds to zero either
/// way. Rows of contiguous f32 are read in place, on up to the call's thread
/// count (over whole tiles, so the result does not depend on it); any other
/// source is first cast into f32, [`MX_TILE`] values at a time.
fn encode_mx_f32(
    exec: &Exec,
    sp: &Spec,
    rule: ScaleRule,
    src: &ArrayView<'_>,
    rows: &[isize],
    codes: &mut [u8],
    scales: &mut [u8],
) -> Result<()> {
    let tier = exec.resolve_tier()?;
    let n = *src.shape().last().expect("rank ≥ 1");
    let last_stride = *src.strides().last().expect("rank ≥ 1");
    let vpb = sp.element.info().values_per_byte as usize;
    let mx = mx_f32::MxRule {
        block: sp.block,
        emax: sp.emax,
        max_fraction: {
            let m = sp.max_element as f32;
            debug_assert!(m.is_normal() && m as f64 == sp.max_element);
            m.to_bits() & 0x007f_ffff
        },
        ceil: rule == ScaleRule::Ceil,
        int_unit: (sp.element.info().float.is_none()).then(|| pow2(sp.fraction_bits as i32) as f32),
    };
    let in_place = src.dtype() == DType::F32 && last_stride == 1;
    let far = in_place
        && rows.len().saturating_mul(n).saturating_mul(4)
            >= tessera_generated::runtime::loops::FAR_BYTES;
    let enc = mx_f32::MxEncoder::new(tier, mx, sp.element, sp.scale, far);
    let tile = enc.tile();
    let blocks_per_row = n / sp.block;
    let (cp, sp_out) = (codes.as_mut_ptr() as usize, scales.as_mut_ptr() as usize);
    // Encode values t0 .. t0 + len of row r from `p` (which holds them).
    // SAFETY: `p` holds the row's values t0 .. t0 + len, a whole
    // number of blocks; the code and scale bytes of distinct (r, t0) are
    // disjoint and inside the buffers `encoded_sizes` sized.
    let tile_at = |r: usize, t0: usize, len: usize, p: *const f32, s: &mut mx_f32::Scratch| unsafe {
        enc.encode(
            p,
            len,
            (cp as *mut u8).add((r * n + t0) / vpb),
            (sp_out as *mut u8).add(r * blocks_per_row + t0 / sp.block),
            s,
        )
    };
    if in_place {
        let tiles_per_row = n.div_ceil(tile);
        let units = rows.len() * tiles_per_row;
        let threads = crate::elementwise::call_threads(exec, rows.len() * n)
            .min(units)
            .max(1);
        let per = units.div_ceil(threads);
        let base = src.data().as_ptr() as usize;
        let run = |u0: usize| {
            let mut s = mx_f32::Scratch::new(&enc);
            for u in u0..(u0 + per).min(units) {
                let (r, t0) = (u / tiles_per_row, (u % tiles_per_row) * tile);
                let len = tile.min(n - t0);
                // Row r's values start at element rows[r] of the validated
                // view, contiguous (stride 1), n of them.
                let p = (base as *const f32).wrapping_add(rows[r] as usize + t0);
                tile_at(r, t0, len, p, &mut s);
            }
        };
        if threads == 1 {
            run(0);
        } else {
            use rayon::prelude::*;
            (0..threads).into_par_iter().for_each(|c| run(c * per));
        }
        return Ok(());
    }
    let mut buf = vec![0f32; MX_TILE.next_multiple_of(tile)];
    let mut s = mx_f32::Scratch::new(&enc);
    for (r, &start) in rows.iter().enumerate() {
        let mut t0 = 0;
        while t0 < n {
            let len = buf.len().min(n - t0);
            let off = start + t0 as isize * last_stride;
            let v = ArrayView::new(
                src.dtype(),
                &[len],
                &[last_stride],
                off as usize,
                src.data(),
            )?;
            cast(
                CastMode::Default,
                &v,
                &mut ArrayViewMut::from_slice(&mut buf[..len], &[len])?,
                exec,
            )?;
            for i in (0..len).step_by(tile) {
                let m = tile.min(len - i);
                tile_at(r, t0 + i, m, buf[i..].as_ptr(), &mut s);
            }
            t0 += len;
        }
    }
    Ok(())
}

/// v / d rounded in f64, nudged off an exact tie it does not truly sit on: when
/// the FMA residual v − q·d is not zero the true quotient is not q, so q moves one
/// ulp toward it. A later rounding to a narrower format is then correct.
fn exact_quotient(v: f64, d: f64) -> f64 {
    let q = v / d;
    if !q.is_finite() {
        return q;
    }
    let r = (-q).mul_add(d, v);
    if r == 0.0 {
        return q;
    }
    let toward_up = (r > 0.0) == (d > 0.0);
    let bits = q.to_bits();
    let up_in_magnitude = toward_up == (q >= 0.0);
    f64::from_bits(if up_in_magnitude {
        bits + 1
    } else if q == 0.0 {
        return q;
    } else {
        bits - 1
    })
}

fn check_len(what: &str, got: usize, need: usize) -> Result<()> {
    if got == need {
        Ok(())
    } else {
        Err(Error::Length {
            operand: what.into(),
            len: got,
            expected: need,
            unit: "bytes",
        })
    }
}

/// Decode `codes` and `scales` (as [`encode`] lays them out, for a tensor of
/// `dst`'s shape) into `dst`, whose dtype is any; each value rounds once.
/// Refuses, before any write, codes or scales of the wrong length, a
/// missing or unexpected tensor scale, and a destination that reaches one
/// element twice ([`Error::Layout`]).
pub fn decode(
    format: Format,
    codes: &[u8],
    scales: &[u8],
    tensor_scale: Option<f32>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let info = format.info();
    let sizes = encoded_sizes(format, dst.shape())?;
    check_len("codes", codes.len(), sizes.code_bytes)?;
    check_len("scales", scales.len(), sizes.blocks)?;
    // A destination that reaches one element twice (a zero stride, axes that
    // interleave) would keep whichever row landed last.
    crate::checks::check_destination(dst)?;
    let t = match (info.tensor_scale, tensor_scale) {
        (Some(_), Some(t)) => Some(t as f64),
        (Some(_), None) => {
            return Err(Error::Attribute {
                name: "decode: tensor_scale".into(),
                reason: format!("{} needs its tensor scale", info.name),
            });
        }
        (None, Some(_)) => {
            return Err(Error::Attribute {
                name: "decode: tensor_scale".into(),
                reason: format!("{} has no tensor scale", info.name),
            });
        }
        (None, None) => None,
    };
    if sizes.blocks == 0 {
        return Ok(());
    }
    let sp = spec_of(format);
    let n = *dst.shape().last().expect("rank ≥ 1");
    let layout = dst.layout().clone();
    let rows = row_offsets(&layout)?;
    let last_stride = *layout.strides.last().expect("rank ≥ 1");
    let blocks_per_row = n / sp.block;
    let code_bytes_per_row = sizes.code_bytes / rows.len();
    let mut vals = try_zeros::<f64>(n, "a row")?;
    let mut sc = try_zeros::<f64>(blocks_per_row, "a row's scales")?;
    let unit = pow2(-(sp.fraction_bits as i32));
    // Every row view shares `dst`'s validated layout and every buffer size was
    // checked above, so no call below can refuse after a row is written.
    for (r, &off) in rows.iter().enumerate() {
        let crow = &codes[r * code_bytes_per_row..(r + 1) * code_bytes_per_row];
        decode_slice(exec, sp.element, crow, n, &mut vals)?;
        let srow = &scales[r * blocks_per_row..(r + 1) * blocks_per_row];
        decode_slice(exec, sp.scale, srow, blocks_per_row, &mut sc)?;
        for (i, v) in vals.iter_mut().enumerate() {
            let s = sc[i / sp.block] * t.unwrap_or(1.0);
            *v = *v * unit * s;
        }
        let src = ArrayView::from_slice(&vals, &[n])?;
        let dtype = dst.dtype();
        let mut row = ArrayViewMut::new(dtype, &[n], &[last_stride], off as usize, dst.data_mut())?;
        cast(CastMode::Default, &src, &mut row, exec)?;
    }
    Ok(())
}

/// Decode from one format and encode into another (values in f64 between).
/// Returns the new tensor scale where the target format has one.
#[allow(clippy::too_many_arguments)]
pub fn transcode(
    from: Format,
    to: Format,
    rule: Option<ScaleRule>,
    shape: &[usize],
    codes: &[u8],
    scales: &[u8],
    tensor_scale: Option<f32>,
    out_codes: &mut [u8],
    out_scales: &mut [u8],
    exec: &Exec,
) -> Result<Option<f32>> {
    let sizes = encoded_sizes(from, shape)?;
    let out_sizes = encoded_sizes(to, shape)?;
    // Every buffer is checked against the shape before the values (one f64
    // per element) are allocated.
    check_len("codes", codes.len(), sizes.code_bytes)?;
    check_len("scales", scales.len(), sizes.blocks)?;
    check_len("out_codes", out_codes.len(), out_sizes.code_bytes)?;
    check_len("out_scales", out_scales.len(), out_sizes.blocks)?;
    let len = crate::array::count_of(shape, "source")?;
    let mut tmp = try_zeros::<f64>(len, "the decoded values")?;
    {
        let mut v = ArrayViewMut::from_slice(&mut tmp, shape)?;
        decode(from, codes, scales, tensor_scale, &mut v, exec)?;
    }
    let v = ArrayView::from_slice(&tmp, shape)?;
    encode(to, rule, &v, out_codes, out_scales, exec)
}
