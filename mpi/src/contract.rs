//! Distributed contractions. Split rows or columns: each output's products
//! are associated by its own k alone, so a rank's rows (or columns), run in
//! the association the whole contraction would choose, are exactly those
//! outputs of the whole result. A split depth: the lane order's partial
//! states, merged over the ranks.

use crate::agree::{agree, signature, Local};
use crate::error::{DistError, Result};
use crate::reduce::row_offsets;
use mpi::traits::*;
use tessera::contract::choose_order;
use tessera::{contract_in_order, ArrayView, ArrayViewMut, ContractSpec, Exec};

/// Which operand is split over the ranks by its axis 0.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    A,
    B,
}

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
    split_free(comm, Side::A, spec, (a, b, init), dst, exec)
}

/// [`contract_rows`] with the columns split instead: `b` is this rank's
/// block of b's axis 0, a free axis of b (for a matrix product, b given as
/// its transpose `[N, K]` with the spec contracting a's last axis with b's
/// axis 1), `a` whole on every rank; `dst` gets this rank's columns (its
/// shape the contraction's with b's block), with the bits they have in the
/// whole contraction, in the association the whole contraction chooses.
///
/// # Errors
/// As [`contract_rows`], for b's axis 0.
pub fn contract_cols<C: Communicator>(
    comm: &C,
    spec: &ContractSpec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    split_free(comm, Side::B, spec, (a, b, init), dst, exec)
}

fn split_free<C: Communicator>(
    comm: &C,
    side: Side,
    spec: &ContractSpec,
    (a, b, init): (&ArrayView<'_>, &ArrayView<'_>, Option<&ArrayView<'_>>),
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let split = if side == Side::A { a } else { b };
    let (name, whole) = if side == Side::A { ("a", b) } else { ("b", a) };
    let rows = split.shape().first().copied().unwrap_or(0);
    let (_, total_rows) = row_offsets(comm, rows as u64);
    let mut buf = Vec::new();
    let local: Local<()> = (|| {
        if split.shape().is_empty() {
            return Err(format!(
                "{name}: a distributed operand has a leading axis (rank 0 given)"
            ));
        }
        let bound = |ax: usize, of_b: bool| {
            spec.batch
                .iter()
                .chain(&spec.contracting)
                .any(|p| if of_b { p.1 == ax } else { p.0 == ax })
        };
        if bound(0, side == Side::B) {
            return Err(format!(
                "{name}: its distributed axis 0 is a batch or contracted axis; only a free axis \
                 can be split over ranks"
            ));
        }
        // The free extents of each operand, the split one's axis 0 whole.
        let free = |v: &ArrayView<'_>, of_b: bool, is_split: bool| -> usize {
            (0..v.shape().len())
                .filter(|&ax| !bound(ax, of_b))
                .map(|ax| {
                    if is_split && ax == 0 {
                        total_rows as usize
                    } else {
                        v.shape()[ax]
                    }
                })
                .product()
        };
        let rows_all = free(a, false, side == Side::A);
        let cols_all = free(b, true, side == Side::B);
        let depth: usize = spec
            .contracting
            .iter()
            .map(|&(ax, _)| a.shape().get(ax).copied().unwrap_or(0))
            .product();
        let order = choose_order(rows_all, cols_all, depth);
        tessera::check_destination(dst).map_err(|e| e.to_string())?;
        let info = dst.dtype().info();
        let count: usize = dst.shape().iter().product();
        buf = vec![0u8; count.div_ceil(info.values_per_byte as usize) * info.item_bytes];
        let mut view = ArrayViewMut::contiguous(dst.dtype(), dst.shape(), &mut buf)
            .map_err(|e| e.to_string())?;
        contract_in_order(spec, a, b, init, &mut view, order, exec).map_err(|e| e.to_string())
    })();
    let sig = signature(&[
        format!("{spec:?} {name}").as_bytes(),
        a.dtype().name().as_bytes(),
        b.dtype().name().as_bytes(),
        format!("{:?} {:?}", split.shape().get(1..), whole.shape()).as_bytes(),
        dst.dtype().name().as_bytes(),
    ]);
    agree(
        comm,
        &local,
        sig,
        "the spec, the dtypes, the whole operand's shape or the split one's trailing shape",
    )?;
    crate::bytes::store(dst, &buf).map_err(|e| DistError::Refused {
        rank: comm.rank(),
        message: e.to_string(),
    })
}

/// Contract over a depth split between the ranks: `a` is this rank's block
/// of the contracted axis of a 2-D operand (`[R, k_r]`, or `[k_r, R]` for a
/// spec contracting a's axis 0) and `b` this rank's rows of a `[K, C]`
/// operand (`k_r` of them, the ranks' blocks in rank order tiling the
/// depth); every rank gets the whole `[R, C]` result in `dst`, plus `init`
/// (of `dst`'s shape, the same on every rank) where given, with the bits of
/// `tessera::contract` on one process. The whole contraction must run in
/// lane order (`tessera::contract::choose_order` of R, C and the whole
/// depth: few rows or columns, or a long depth), whose products' partial
/// states ([`tessera::contract::contract_partial`]) merge over the ranks in
/// rank order by the binomial tree, as [`crate::reduce`]'s do; rank 0
/// finishes and broadcasts the result.
///
/// Collective: every rank calls it with the same spec, dtypes, R, C and
/// init.
///
/// # Errors
/// On every rank alike, before any destination is written:
/// [`DistError::Refused`] with the lowest refusing rank's error (what
/// `contract_partial` refuses, chain order among it; a destination of
/// another shape; an allocation); [`DistError::Mismatch`] where the ranks'
/// calls differ.
pub fn contract_depth<C: Communicator>(
    comm: &C,
    spec: &ContractSpec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    use tessera::contract::{contract_finish, contract_partial};
    use tessera::reduce::{Partial, TermRange};
    let rank = comm.rank();
    let k = b.shape().first().copied().unwrap_or(0);
    let (before, total) = row_offsets(comm, k as u64);
    let range = TermRange {
        start: before as usize,
        total: total as usize,
    };
    // This rank's state (its refusals are the call's).
    let state = contract_partial(spec, a, b, range, exec).map(|p| p.to_bytes());
    let local: Local<()> = (|| {
        let s = state.as_ref().map_err(|e| e.to_string())?;
        let p = Partial::from_bytes(s).map_err(|e| e.to_string())?;
        if dst.shape().iter().product::<usize>() != p.outputs() || dst.shape().len() != 2 {
            return Err(format!(
                "destination: shape {:?}; the whole [rows, columns] result ({} outputs) expected",
                dst.shape(),
                p.outputs()
            ));
        }
        if let Some(i) = init {
            if i.shape() != dst.shape() {
                return Err(format!(
                    "init: shape {:?}, expected {:?}",
                    i.shape(),
                    dst.shape()
                ));
            }
        }
        tessera::check_destination(dst).map_err(|e| e.to_string())?;
        Ok(())
    })();
    let init_bytes = init.map(|i| crate::bytes::load(i).unwrap_or_default());
    let sig = signature(&[
        format!("{spec:?}").as_bytes(),
        a.dtype().name().as_bytes(),
        b.dtype().name().as_bytes(),
        format!("{:?}", dst.shape()).as_bytes(),
        dst.dtype().name().as_bytes(),
        init_bytes.as_deref().unwrap_or(b"-"),
    ]);
    agree(
        comm,
        &local,
        sig,
        "the spec, the dtypes, the result's shape and dtype or init",
    )?;
    let mine = state.map_err(|e| (rank, e.to_string()));
    let merge = |x: &[u8], y: &[u8]| -> std::result::Result<Vec<u8>, String> {
        let x = Partial::from_bytes(x).map_err(|e| e.to_string())?;
        let y = Partial::from_bytes(y).map_err(|e| e.to_string())?;
        Ok(x.merge(&y).map_err(|e| e.to_string())?.to_bytes())
    };
    let root = crate::tree::merge_to_root(comm, mine, merge);
    let shape = dst.shape().to_vec();
    let out_dtype = dst.dtype();
    let finished = root.map(|w| {
        let w = w?;
        let at0 = |e: tessera::Error| (0, e.to_string());
        let p = Partial::from_bytes(&w).map_err(at0)?;
        let info = out_dtype.info();
        let count: usize = shape.iter().product();
        let mut buf = vec![0u8; count.div_ceil(info.values_per_byte as usize) * info.item_bytes];
        let mut view = ArrayViewMut::contiguous(out_dtype, &shape, &mut buf).map_err(at0)?;
        contract_finish(&p, init, &mut view, exec).map_err(at0)?;
        Ok(buf)
    });
    let result = crate::agree::share(comm, finished)?;
    crate::bytes::store(dst, &result).map_err(|e| DistError::Refused {
        rank,
        message: e.to_string(),
    })
}
