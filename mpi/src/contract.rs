//! Contractions whose row operand is distributed by rows: each output's
//! products are associated by its own k alone, so a rank's rows, run in the
//! association the whole contraction would choose, are exactly those rows
//! of the whole result.

use crate::agree::{agree, signature, Local};
use crate::error::{DistError, Result};
use crate::reduce::row_offsets;
use mpi::traits::*;
use tessera::contract::choose_order;
use tessera::{contract_in_order, ArrayView, ArrayViewMut, ContractSpec, Exec};

/// Contract the block-distributed `a` (this rank's block of a's axis 0,
/// which must be a free axis: neither batch nor contracted) with `b`
/// (whole on every rank) plus `init` (this rank's part of it, broadcasting
/// to `dst`), into `dst`: this rank's outputs, with the bits those outputs
/// have in `tessera::contract` of the whole `a` on one process, at any
/// number of ranks and on any mix of tiers and thread counts. The
/// association (chain or lane order, ARCHITECTURE.md §5.5) is chosen from
/// the whole contraction's rows, columns and depth, not from this rank's.
///
/// Collective: every rank calls it with the same spec, dtypes, `b` and
/// trailing shape of `a`.
///
/// # Errors
/// On every rank alike, before any destination is written:
/// [`DistError::Refused`] with the lowest refusing rank's error (what
/// `tessera::contract` refuses of its operands and destination, axis 0 of
/// `a` batch or contracted, an allocation); [`DistError::Mismatch`] where
/// the ranks' calls differ.
pub fn contract_rows<C: Communicator>(
    comm: &C,
    spec: &ContractSpec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let rows = a.shape().first().copied().unwrap_or(0);
    let (_, total_rows) = row_offsets(comm, rows as u64);
    let mut buf = Vec::new();
    let local: Local<()> = (|| {
        if a.shape().is_empty() {
            return Err("a: a distributed operand has a leading axis (rank 0 given)".into());
        }
        let bound = |ax: usize| {
            spec.batch
                .iter()
                .chain(&spec.contracting)
                .any(|p| p.0 == ax)
        };
        if bound(0) {
            return Err("a: its distributed axis 0 is a batch or contracted axis; \
                        only a free (row) axis can be split over ranks"
                .into());
        }
        let extent = |ax: usize, e: usize| if ax == 0 { total_rows as usize } else { e };
        let free_a: usize = (0..a.shape().len())
            .filter(|&ax| !bound(ax))
            .map(|ax| extent(ax, a.shape()[ax]))
            .product();
        let bound_b = |ax: usize| {
            spec.batch
                .iter()
                .chain(&spec.contracting)
                .any(|p| p.1 == ax)
        };
        let cols: usize = (0..b.shape().len())
            .filter(|&ax| !bound_b(ax))
            .map(|ax| b.shape()[ax])
            .product();
        let depth: usize = spec
            .contracting
            .iter()
            .map(|&(ax, _)| a.shape().get(ax).copied().unwrap_or(0))
            .product();
        let order = choose_order(free_a, cols, depth);
        tessera::check_destination(dst).map_err(|e| e.to_string())?;
        let info = dst.dtype().info();
        let count: usize = dst.shape().iter().product();
        buf = vec![0u8; count.div_ceil(info.values_per_byte as usize) * info.item_bytes];
        let mut view = ArrayViewMut::contiguous(dst.dtype(), dst.shape(), &mut buf)
            .map_err(|e| e.to_string())?;
        contract_in_order(spec, a, b, init, &mut view, order, exec).map_err(|e| e.to_string())
    })();
    let sig = signature(&[
        format!("{spec:?}").as_bytes(),
        a.dtype().name().as_bytes(),
        format!("{:?}", a.shape().get(1..)).as_bytes(),
        b.dtype().name().as_bytes(),
        format!("{:?}", b.shape()).as_bytes(),
        dst.dtype().name().as_bytes(),
    ]);
    agree(
        comm,
        &local,
        sig,
        "the spec, the dtypes, b's shape or a's trailing shape",
    )?;
    crate::bytes::store(dst, &buf).map_err(|e| DistError::Refused {
        rank: comm.rank(),
        message: e.to_string(),
    })
}
