//! The drivers of integer contractions: the packed narrow-integer kernels
//! (`integer.rs`), exact f64 GEMMs of narrow integers, and the wrap into the
//! accumulator.

use super::acc::{Acc, Src};
use super::association::Order;
use super::drive_real::run;
use super::gemm::Panels;
use super::geometry::Tables;
use super::{geometry, integer, ContractSpec};
use crate::alloc::{try_collect, try_filled};
use crate::array::{c_strides, extent_product, ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::error::Result;
use crate::tier::Exec;
use crate::{DType, Tier};

/// Whether an integer contraction can run as an exact f64 GEMM: both inputs
/// integers (or bool) of at most 16 bits, so that every partial sum of
/// products, at most K·max|a|·max|b| in magnitude, is below 2^53 and every
/// f64 operation on them is exact; and enough rows and columns for the GEMM
/// to pay.
pub(super) fn int_via_f64(
    a_shape: &[usize],
    a_dtype: DType,
    b_shape: &[usize],
    b_dtype: DType,
    spec: &ContractSpec,
) -> bool {
    use crate::Class;
    let small = |d: DType| {
        let i = d.info();
        matches!(i.class, Class::Int | Class::Uint | Class::Bool) && i.bits <= 16
    };
    if !small(a_dtype) || !small(b_dtype) {
        return false;
    }
    let Ok(g) = geometry(
        a_shape,
        &c_strides(a_shape),
        b_shape,
        &c_strides(b_shape),
        spec,
    ) else {
        return false;
    };
    let (r, c) = (
        extent_product(g.rows.iter().copied()),
        extent_product(g.cols.iter().copied()),
    );
    let k = extent_product(g.depth.iter().copied()) as u128;
    let mag = |d: DType| {
        d.info()
            .int_range
            .map_or(1, |(lo, hi)| lo.unsigned_abs().max(hi.unsigned_abs()))
    };
    r >= 8 && c >= 8 && k.saturating_mul(mag(a_dtype) * mag(b_dtype)) < 1u128 << 53
}

/// An integer contraction of narrow integers as an f64 chain-order GEMM
/// (exact: see [`int_via_f64`]), then reduced modulo 2^w and plus init in the
/// integer accumulator, wrapping: the exact result modulo 2^w, as every
/// integer path gives.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_int_via_f64(
    tier: Tier,
    exec: Exec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
    panels: Panels,
) -> Result<()> {
    let len = dst.layout().len();
    let mut sums = try_filled(len, 0f64, "the destination in f64")?;
    let spec64 = ContractSpec {
        acc: DType::F64,
        ..spec.clone()
    };
    run::<f64>(
        tier,
        exec,
        a,
        b,
        None,
        &mut ArrayViewMut::from_slice(&mut sums, dst.shape())?,
        &spec64,
        Some(Order::Chain),
        panels,
    )?;
    if spec.acc == DType::I32 {
        let out = try_collect(sums.len(), sums.iter().map(|&v| v as i64 as i32), "acc")?;
        finish_int::<i32>(exec, out, init, dst)
    } else {
        let out = try_collect(sums.len(), sums.iter().map(|&v| v as i64), "acc")?;
        finish_int::<i64>(exec, out, init, dst)
    }
}

/// The integer sums `out` (C order of the destination's shape) plus init,
/// wrapping in the accumulator, cast into `dst`.
pub(super) fn finish_int<T: Acc + crate::Element>(
    exec: Exec,
    mut out: Vec<T>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
) -> Result<()> {
    if let Some(i) = init {
        let mut iv = try_filled(out.len(), T::ZERO, "the init in acc")?;
        cast(
            CastMode::Default,
            i,
            &mut ArrayViewMut::from_slice(&mut iv, dst.shape())?,
            &exec,
        )?;
        for (o, x) in out.iter_mut().zip(iv) {
            *o = o.plus(x);
        }
    }
    cast(
        CastMode::Default,
        &ArrayView::from_slice(&out, dst.shape())?,
        dst,
        &exec,
    )
}

/// A contraction of `i8`, `u8` and `i16` inputs into `i32` by the packed
/// integer kernels ([`integer`]): exact modulo 2^32, as every integer path.
pub(super) fn run_integer(
    plan: integer::Plan,
    exec: Exec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
) -> Result<()> {
    let g = geometry(a.shape(), a.strides(), b.shape(), b.strides(), spec)?;
    let t = Tables::of(&g, a.layout().offset, b.layout().offset, false)?;
    let (r, c) = (t.a_rows.len(), t.b_cols.len());
    // An i32 destination of C order and no init takes the sums in place
    // (each batch element's product checks everything it needs before its
    // first write, and the elements are independent).
    let len = dst.layout().len();
    let in_place = init.is_none()
        && dst.dtype() == DType::I32
        && crate::array::c_contiguous(dst.shape(), dst.strides());
    let off = dst.layout().offset * 4;
    let direct = in_place && len > 0 && {
        let bytes = &dst.data_mut()[off..];
        bytes.as_ptr().align_offset(4) == 0 && bytes.len() >= 4 * len
    };
    let mut out = Vec::new();
    let sums: &mut [i32] = if direct {
        // SAFETY: any bit pattern is an i32; the bytes from the offset are
        // 4-aligned and hold `len` of them (checked above).
        let (_, mid, _) = unsafe { dst.data_mut()[off..].align_to_mut::<i32>() };
        &mut mid[..len]
    } else {
        out = try_filled(len, 0i32, "the destination in acc")?;
        &mut out
    };
    let side_a = integer::Side {
        src: Src::new(a.data()),
        dtype: a.dtype(),
        free: &t.a_rows,
        ks: &t.a_ks,
    };
    let side_b = integer::Side {
        src: Src::new(b.data()),
        dtype: b.dtype(),
        free: &t.b_cols,
        ks: &t.b_ks,
    };
    if r * c > 0 {
        for (bi, tile) in sums.chunks_mut(r * c).enumerate() {
            // SAFETY: the tables come from the validated views' shapes,
            // strides and offsets, over their own bytes.
            unsafe {
                integer::product(
                    plan,
                    exec.thread_count(),
                    (&side_a, t.a_batch[bi]),
                    (&side_b, t.b_batch[bi]),
                    tile,
                )?
            };
        }
    }
    if direct {
        return Ok(());
    }
    finish_int::<i32>(exec, out, init, dst)
}
