//! The driver of real float (and 32/64-bit integer) contractions: operands
//! brought into the accumulator, then every batch element's outputs in chain
//! order (the packed GEMM of `gemm.rs`) or lane order (`lane.rs`).

use super::acc::Src;
use super::association::{choose as choose_order, Order};
use super::gemm::{Chain, Operand, Panels};
use super::geometry::Tables;
use super::lane::{lane_tile, lane_tile_streamed, Fused};
use super::select::Chained;
use super::{geometry, ContractSpec};
use crate::alloc::try_filled;
use crate::array::{c_strides, extent_product, ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{DType, Tier};

/// An operand as the accumulator's dtype: its own bytes if it already has it,
/// else a C-order copy cast into it.
pub(super) struct AccOperand<'a> {
    pub(super) bytes: std::borrow::Cow<'a, [u8]>,
    pub(super) strides: Vec<isize>,
    pub(super) offset: usize,
}

pub(super) fn to_acc<'a, T: crate::Element + Default>(
    exec: Exec,
    v: &ArrayView<'a>,
    acc: DType,
) -> Result<AccOperand<'a>> {
    if v.dtype() == acc {
        return Ok(AccOperand {
            bytes: std::borrow::Cow::Borrowed(v.data()),
            strides: v.strides().to_vec(),
            offset: v.layout().offset,
        });
    }
    // A C-order copy of the operand's (logical) elements in acc, cast into
    // its bytes directly.
    let bytes = v
        .layout()
        .len()
        .checked_mul(size_of::<T>())
        .ok_or(Error::Overflow {
            operand: "contract: a converted operand".into(),
        })?;
    let mut buf = try_filled(bytes, 0u8, "a converted operand")?;
    cast(
        CastMode::Default,
        v,
        &mut ArrayViewMut::contiguous(acc, v.shape(), &mut buf)?,
        &exec,
    )?;
    Ok(AccOperand {
        bytes: std::borrow::Cow::Owned(buf),
        strides: c_strides(v.shape()),
        offset: 0,
    })
}

/// The destination's inits in the accumulator's element type `T` (C
/// order of `dst`'s shape): `init` cast into it, or zeros (+0) without one.
pub(super) fn inits_in_acc<T: crate::Element + Default>(
    exec: Exec,
    init: Option<&ArrayView<'_>>,
    dst: &ArrayViewMut<'_>,
) -> Result<Vec<T>> {
    let mut out = try_filled(dst.layout().len(), T::default(), "the destination in acc")?;
    if let Some(i) = init {
        cast(
            CastMode::Default,
            i,
            &mut ArrayViewMut::from_slice(&mut out, dst.shape())?,
            &exec,
        )?;
    }
    Ok(out)
}

/// Values `(R + C)·K` up to which lane order gathers whole rows and columns
/// before it sums (each gathered once, whatever the other side's count);
/// beyond, it reads each output's row and column block by block, so that
/// its scratch is a few blocks per thread (rows broadcast along R, say,
/// would otherwise be copied R times).
pub(super) const LANE_COPY_MAX: usize = 1 << 22;

/// Compute every batch element's `R × C` outputs, row-major, into `out` in
/// `order`. `out` holds the inits (in acc) where `holds_init`, else anything.
///
/// # Safety
/// Every position the tables reach is inside `sa` (resp. `sb`) as elements
/// of `T` (of the raw dtype where one is given); `tier` is one this CPU runs
/// (its microkernels are called). (`out` is a slice: it should hold
/// `batch · R · C` elements.)
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn batch_outputs<T: Chained>(
    tier: Tier,
    threads: usize,
    order: Order,
    sa: (Src<'_>, Option<DType>),
    sb: (Src<'_>, Option<DType>),
    t: &Tables,
    out: &mut [T],
    holds_init: bool,
    panels: Panels,
) -> Result<()> {
    let ((sa, raw_a), (sb, raw_b)) = (sa, sb);
    let (r, c, k) = (t.a_rows.len(), t.b_cols.len(), t.a_ks.len());
    if r * c == 0 {
        return Ok(());
    }
    let chain = if order == Order::Chain {
        T::micro(tier)
    } else {
        None
    };
    let one = |bi: usize, tile: &mut [T], threads: usize, panels: Panels| -> Result<()> {
        let (a_base, b_base) = (t.a_batch[bi], t.b_batch[bi]);
        if let Some(micro) = chain {
            let job = Chain::new(
                micro,
                Operand {
                    src: sa,
                    base: a_base,
                    raw: raw_a,
                },
                &t.a_rows,
                &t.a_ks,
                Operand {
                    src: sb,
                    base: b_base,
                    raw: raw_b,
                },
                &t.b_ks,
                &t.b_cols,
                holds_init,
                panels,
            );
            // SAFETY: the tables' positions from these bases are in the
            // operands (this function's contract), `tile` is this batch
            // element's R × C outputs, and the microkernel is the resolved
            // tier's, which this CPU runs.
            unsafe { job.run(tile, threads, tier)? };
        } else {
            // Lane order; and integers in either order, whose sums are exact
            // whatever the association.
            if !holds_init {
                tile.fill(T::ZERO);
            }
            if k > 0 {
                if t.streamed {
                    // SAFETY: the tables' positions from these bases are in
                    // the operands, of dtype T (this function's contract).
                    unsafe {
                        lane_tile_streamed(
                            &Fused(tier, core::marker::PhantomData),
                            (sa, a_base, &t.a_rows, &t.a_ks),
                            (sb, b_base, &t.b_cols, &t.b_ks),
                            tile,
                            threads,
                        )
                    }
                } else {
                    // SAFETY: the tables' positions from these bases are in
                    // the operands, of dtype T (this function's contract).
                    unsafe {
                        lane_tile(
                            tier, sa, a_base, &t.a_rows, &t.a_ks, sb, b_base, &t.b_ks, &t.b_cols,
                            tile, threads,
                        )
                    }
                }
            }
        }
        Ok(())
    };
    let nb = t.a_batch.len();
    let work = r as u128 * c as u128 * k as u128;
    if threads > 1 && nb > 1 && work < 1 << 20 {
        // Many small batch elements: threads take whole ones.
        use rayon::prelude::*;
        let per = nb.div_ceil(threads);
        return out
            .par_chunks_mut(r * c * per)
            .enumerate()
            .map(|(ch, part)| {
                for (q, tile) in part.chunks_mut(r * c).enumerate() {
                    one(ch * per + q, tile, 1, panels.skip_tasks(ch))?;
                }
                Ok(())
            })
            .collect();
    }
    for (bi, tile) in out.chunks_mut(r * c).enumerate() {
        one(bi, tile, threads, panels)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run<'a, T: Chained>(
    tier: Tier,
    exec: Exec,
    a: &ArrayView<'a>,
    b: &ArrayView<'a>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
    forced: Option<Order>,
    panels: Panels,
) -> Result<()> {
    let threads = exec.thread_count();
    let g0 = geometry(a.shape(), a.strides(), b.shape(), b.strides(), spec)?;
    // The destination is not empty: R and C are exact, and K is (0 where a
    // depth extent is 0, whatever the others).
    let (r, c, k) = (
        extent_product(g0.rows.iter().copied()),
        extent_product(g0.cols.iter().copied()),
        extent_product(g0.depth.iter().copied()),
    );
    let order = forced.unwrap_or_else(|| choose_order(r, c, k));
    // In chain order an operand of another (whole-byte) dtype is packed as
    // raw codes and cast into the accumulator panel by panel; otherwise it is
    // cast whole into a C-order copy first. Either way each element enters
    // acc as a cast does.
    let chained = order == Order::Chain && T::micro(tier).is_some();
    let raw = |v: &ArrayView<'_>| {
        (chained && v.dtype() != spec.acc && v.dtype().info().values_per_byte == 1)
            .then(|| v.dtype())
    };
    let (raw_a, raw_b) = (raw(a), raw(b));
    for dt in [raw_a, raw_b].into_iter().flatten() {
        // The pair is checked once here, so no panel cast refuses later.
        let zero = vec![0u8; dt.info().item_bytes];
        let mut one = [T::ZERO];
        cast(
            CastMode::Default,
            &ArrayView::contiguous(dt, &[1], &zero)?,
            &mut ArrayViewMut::from_slice(&mut one, &[1])?,
            &Exec::on(tier).threads(1),
        )?;
    }
    let keep = |v: &ArrayView<'a>| AccOperand {
        bytes: std::borrow::Cow::Borrowed(v.data()),
        strides: v.strides().to_vec(),
        offset: v.layout().offset,
    };
    let ea = if raw_a.is_some() {
        keep(a)
    } else {
        to_acc::<T>(exec, a, spec.acc)?
    };
    let eb = if raw_b.is_some() {
        keep(b)
    } else {
        to_acc::<T>(exec, b, spec.acc)?
    };
    let g = geometry(a.shape(), &ea.strides, b.shape(), &eb.strides, spec)?;
    // Lane order of many long rows and columns reads them block by block.
    let streamed = !chained && r.saturating_add(c).saturating_mul(k) > LANE_COPY_MAX;
    let t = Tables::of(&g, ea.offset, eb.offset, streamed)?;
    let (sa, sb) = ((Src::new(&ea.bytes), raw_a), (Src::new(&eb.bytes), raw_b));
    // Chain order straight into a C-contiguous, aligned destination of the
    // accumulator's dtype: no scratch and no final pass.
    let len = dst.layout().len();
    let off = dst.layout().offset * size_of::<T>();
    if order == Order::Chain
        && T::micro(tier).is_some()
        && dst.dtype() == spec.acc
        && crate::array::c_contiguous(dst.shape(), dst.strides())
        && (dst.data_mut()[off..].as_ptr() as usize).is_multiple_of(align_of::<T>())
    {
        if let Some(i) = init {
            cast(CastMode::Default, i, dst, &exec)?;
        }
        let bytes = &mut dst.data_mut()[off..off + len * size_of::<T>()];
        // SAFETY: the bytes start aligned for T (checked), hold `len` elements
        // of dst's dtype, which is T's, and every bit pattern is a valid T.
        let (pre, out, _) = unsafe { bytes.align_to_mut::<T>() };
        debug_assert!(pre.is_empty() && out.len() == len);
        // SAFETY: the tables come from the validated views' shapes and
        // strides (or the C-order copies cast into acc).
        unsafe {
            batch_outputs(
                tier,
                threads,
                order,
                sa,
                sb,
                &t,
                out,
                init.is_some(),
                panels,
            )?
        };
        // The accumulator's own dtype holds NaN codes: a NaN's sign here is
        // the exception of ARCHITECTURE.md §5.1, and no pass is spent on it.
        return Ok(());
    }
    let mut out = inits_in_acc::<T>(exec, init, dst)?;
    // SAFETY: the tables come from the validated views' shapes and strides
    // (or the C-order copies cast into acc); `out` holds the destination's
    // `len` = batch · R · C elements.
    unsafe { batch_outputs(tier, threads, order, sa, sb, &t, &mut out, true, panels)? };
    crate::cast::cast_results(&out, dst, &exec)
}
