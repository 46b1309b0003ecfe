//! Casts between any two dtypes, on any layout, in the default or the
//! saturating mode.
//!
//! The source decodes exactly into its carrier and the destination rounds once:
//! float → float rounds to nearest (ties to even, or as the destination's spec
//! says), keeps subnormals and applies the destination's overflow rule of the
//! mode (the default mode matches ml_dtypes for f32 sources: e4m3fn overflow and
//! infinities become NaN, e5m2 infinity, fp6/fp4 saturate, e8m0fnu rounds halves
//! up); an f64 source rounds once, never through f32. float → int truncates
//! toward zero and saturates, NaN → 0. int → float rounds to nearest even.
//! int → int wraps (default) or clamps (saturating). bool ↔ anything: zero vs
//! non-zero. complex → real takes the real part; real → complex gets +0i.
//! The saturating mode clamps any magnitude beyond the destination's largest
//! finite value, infinities included, to that value.
//!
//! Every path gives the scalar tier's bits. On the vector tiers a contiguous
//! cast between f32 and a packed dtype runs a fused kernel (one pass, whole
//! packed bytes; `elementwise::packed`, derived from the scalar kernel); any
//! other layout goes through the general engine.

use crate::array::{ArrayView, ArrayViewMut};
use crate::checks::check_destination;
use crate::elementwise::broadcasts_to;
use crate::error::{Error, Result};
use crate::tier::cast_table;
use crate::tier::Exec;
use crate::{cast_index, DType, Element, Variant};

/// How a cast treats values beyond the destination's range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CastMode {
    /// The destination's default overflow rule (ml_dtypes' behaviour); integers wrap.
    #[default]
    Default,
    /// Clamp to the largest finite value (floats) or the range (integers).
    Saturating,
}

/// Cast `src` into `dst` (whose dtype is the target) in `mode`, on `exec`'s
/// tier and threads. `src` broadcasts to `dst`'s shape; `dst` must reach no
/// element twice. Refusals happen before any write.
pub fn cast(
    mode: CastMode,
    src: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let tier = exec.resolve_tier_for(crate::tier::Engine::Cast)?;
    if !broadcasts_to(src.shape(), dst.shape()) {
        return Err(Error::Shape {
            operand: "source".into(),
            shape: src.shape().to_vec(),
            target: dst.shape().to_vec(),
        });
    }
    let table = cast_table(tier).ok_or(Error::TierUnavailable(tier))?;
    if dst.layout().is_empty() {
        return Ok(());
    }
    check_destination(dst)?;
    let (from, to) = (src.dtype(), dst.dtype());
    let saturating = mode == CastMode::Saturating;
    if crate::tier::runs_avx2(tier) {
        let threads = crate::elementwise::call_threads(exec, dst.layout().len());
        // SAFETY: both views were validated and the tier's features (AVX2
        // among them) are present (`resolve_tier`).
        if unsafe { crate::elementwise::packed::try_cast(src, dst, saturating, threads) } {
            return Ok(());
        }
    }
    let select = |v: Variant| cast_index(from, to, saturating, v).map(|i| table[i]);
    // SAFETY: both views were validated against their bytes, the source broadcasts
    // to the destination's shape, the kernels are the casts for these two dtypes,
    // and the destination is a unique borrow.
    unsafe { crate::elementwise::run(exec, std::slice::from_ref(src), dst, &select, true) };
    Ok(())
}

/// Cast an engine's results `res` (C order of `dst`'s shape, in the
/// accumulator or carrier) into `dst`, every NaN (or NaN part) first made the
/// positive quiet NaN: a NaN's sign and payload depend on the order in which
/// the hardware met the NaN operands, which differs between tiers, and a
/// destination without a NaN code (e2m3fn and the other `fn` formats) would
/// turn that sign into a zero's sign (ARCHITECTURE.md §5.1).
pub(crate) fn cast_results<T: Element>(
    res: &[T],
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let shape = dst.shape().to_vec();
    cast_results_strided(res, &shape, &crate::array::c_strides(&shape), dst, exec)
}

/// Make every NaN (every NaN part of a complex number) among `bytes`, the
/// elements of `dtype`, the positive quiet NaN; other dtypes are left as
/// they are (ARCHITECTURE.md §5.1).
pub(crate) fn positive_nans(bytes: &mut [u8], dtype: DType) {
    // One compare and one select a part, branch-free, so that the loop
    // vectorises: the pass costs a small fraction of the products before it.
    fn parts<W: Copy + PartialOrd + core::ops::BitAnd<Output = W>>(
        bytes: &mut [u8],
        abs: W,
        inf: W,
        nan: W,
        from: impl Fn(&[u8]) -> W,
        to: impl Fn(W, &mut [u8]),
    ) {
        let size = core::mem::size_of::<W>();
        let one_by_one = |run: &mut [u8]| {
            for part in run.chunks_exact_mut(size) {
                if (from(part) & abs) > inf {
                    to(nan, part);
                }
            }
        };
        if bytes.as_ptr().align_offset(core::mem::align_of::<W>()) != 0 {
            // The parts (from byte 0) do not lie at W's alignment.
            one_by_one(bytes);
            return;
        }
        // SAFETY: every bit pattern is a valid W (u32 or u64); the slice
        // starts aligned for W, so the middle holds its whole parts from
        // the first and the tail the bytes after the last whole one.
        let (head, mid, tail) = unsafe { bytes.align_to_mut::<W>() };
        debug_assert!(head.is_empty());
        for w in mid.iter_mut() {
            *w = if (*w & abs) > inf { nan } else { *w };
        }
        one_by_one(tail);
    }
    match dtype {
        DType::F32 | DType::C64 | DType::Df32 => parts::<u32>(
            bytes,
            0x7fff_ffff,
            0x7f80_0000,
            f32::NAN.to_bits(),
            |p| u32::from_ne_bytes([p[0], p[1], p[2], p[3]]),
            |w, p| p.copy_from_slice(&w.to_ne_bytes()),
        ),
        DType::F64 | DType::C128 | DType::Dd64 => parts::<u64>(
            bytes,
            u64::MAX >> 1,
            0x7ff0_0000_0000_0000,
            f64::NAN.to_bits(),
            |p| {
                let mut b = [0u8; 8];
                b.copy_from_slice(p);
                u64::from_ne_bytes(b)
            },
            |w, p| p.copy_from_slice(&w.to_ne_bytes()),
        ),
        _ => {}
    }
}

/// [`cast_results`] for results laid out in `res` by `strides` (elements,
/// from element 0) over `shape`, `dst`'s shape.
/// [`cast_results_strided`] of results the caller no longer needs: their
/// NaNs become the positive quiet NaN in place rather than in a copy (one
/// pass and one allocation fewer, which a scan's result of the input's size
/// notices).
pub(crate) fn cast_owned_results_strided<T: Element>(
    res: &mut [T],
    shape: &[usize],
    strides: &[isize],
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    if matches!(T::DTYPE, DType::F32 | DType::C64 | DType::F64 | DType::C128) {
        positive_nans(crate::array::as_bytes_mut(res), T::DTYPE);
    }
    let view = ArrayView::from_slice_strided(res, shape, strides, 0)?;
    cast(CastMode::Default, &view, dst, exec)
}

pub(crate) fn cast_results_strided<T: Element>(
    res: &[T],
    shape: &[usize],
    strides: &[isize],
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    if matches!(T::DTYPE, DType::F32 | DType::C64 | DType::F64 | DType::C128) {
        // The caller keeps its results: canonicalise a copy.
        return cast_owned_results_strided(&mut res.to_vec(), shape, strides, dst, exec);
    }
    let view = ArrayView::from_slice_strided(res, shape, strides, 0)?;
    cast(CastMode::Default, &view, dst, exec)
}
