//! Distributed scans along the distributed axis, with the single-process
//! chunk order (ARCHITECTURE.md §5.4): each rank computes the state of its
//! rows (`tessera::reduce::ScanState`: chunk totals, cut chunks' partial
//! states, the rows of a chunk its end cuts), the states are gathered on
//! every rank (one carrier value per chunk and slice, and at most 4095 rows
//! per slice: about 1/4096 of the data), and each rank joins the states of
//! the ranks before it and computes its rows with `tessera::reduce::
//! scan_range`. No rank waits on another's results.

use crate::agree::{agree, all_gather_bytes, signature, Local};
use crate::error::{DistError, Result};
use crate::reduce::row_offsets;
use mpi::traits::*;
use tessera::reduce::{scan_query, scan_range, scan_state, ScanState, TermRange};
use tessera::{ArrayView, ArrayViewMut, Exec, ScanOp};

/// Scan the block-distributed `x` (this rank's rows of the leading axis)
/// along `axis` by `op` into `dst` (this rank's rows of the result), with
/// the bits of `tessera::scan` of the whole array on one process, at any
/// number of ranks and on any mix of tiers and thread counts. `carry`
/// (Sum, Prod, Max, Min; the same on every rank) continues each slice as
/// in `tessera::scan`.
///
/// Along axis 0 (the distributed axis) it takes Sum, Prod, Max and Min (the
/// scans a chunk's carry continues); along another axis every scan, each
/// rank scanning its own rows.
///
/// Collective: every rank calls it with the same op, axis, dtype, trailing
/// shape, carry and destination dtype.
///
/// # Errors
/// On every rank alike, before any destination is written:
/// [`DistError::Refused`] with the lowest refusing rank's error (what
/// `tessera::scan` refuses, an Arg, Logsumexp, Moments or doubling scan
/// along the distributed axis, an allocation); [`DistError::Mismatch`]
/// where the ranks' calls differ.
pub fn scan<C: Communicator>(
    comm: &C,
    op: ScanOp,
    axis: usize,
    x: &ArrayView<'_>,
    carry: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let n = x.shape().first().copied().unwrap_or(0);
    let (before, total) = row_offsets(comm, n as u64);
    let (s, total) = (before as usize, total as usize);
    let dtype = x.dtype();
    let rest: Vec<usize> = x.shape().get(1..).unwrap_or(&[]).to_vec();
    let local: Local<()> = (|| {
        if x.shape().is_empty() {
            return Err("x: a distributed array has a leading axis (rank 0 given)".into());
        }
        scan_query(
            op,
            axis,
            x.shape(),
            dtype,
            carry.map(|k| (k.shape(), k.dtype())),
            Some((dst.shape(), dst.dtype())),
        )
        .map_err(|e| e.to_string())?;
        if axis == 0 && !op.takes_carry() {
            return Err(format!(
                "a {} scan along the distributed axis: only Sum, Prod, Max and Min scans \
                 continue a chunk's carry",
                op.name()
            ));
        }
        tessera::check_destination(dst).map_err(|e| e.to_string())?;
        exec.resolve_tier().map_err(|e| e.to_string())?;
        Ok(())
    })();
    let carry_bytes: Vec<u8> = carry
        .map(|k| crate::bytes::load(k).unwrap_or_else(|_| k.data().to_vec()))
        .unwrap_or_default();
    let sig = signature(&[
        op.name().as_bytes(),
        &axis.to_le_bytes(),
        dtype.name().as_bytes(),
        format!("{rest:?}").as_bytes(),
        &carry_bytes,
        dst.dtype().name().as_bytes(),
    ]);
    agree(
        comm,
        &local,
        sig,
        "the scan, its axis, the dtype, the trailing shape, the carry or the destination's dtype",
    )?;
    let out_dtype = dst.dtype();
    let info = out_dtype.info();
    let mut res = vec![
        0u8;
        (n * rest.iter().product::<usize>()).div_ceil(info.values_per_byte as usize)
            * info.item_bytes
    ];
    let done: Local<()> = if axis != 0 {
        let mut d = vec![0u8; 0];
        let r = (|| {
            let info = out_dtype.info();
            d = vec![0u8; x.shape().iter().product::<usize>() * info.item_bytes];
            let mut v = ArrayViewMut::contiguous(out_dtype, x.shape(), &mut d)
                .map_err(|e| e.to_string())?;
            tessera::scan(op, axis, x, carry, &mut v, exec).map_err(|e| e.to_string())
        })();
        res = d;
        r
    } else {
        along_rows(comm, op, x, (s, total), carry, out_dtype, &mut res, exec)
    };
    agree(comm, &done, 0, "")?;
    crate::bytes::store(dst, &res).map_err(|e| DistError::Refused {
        rank: comm.rank(),
        message: e.to_string(),
    })
}

/// The scan along axis 0 of this rank's rows `s .. s + n` of `total` into
/// `res` (the destination's dtype, C order).
#[allow(clippy::too_many_arguments)]
fn along_rows<C: Communicator>(
    comm: &C,
    op: ScanOp,
    x: &ArrayView<'_>,
    (s, total): (usize, usize),
    carry: Option<&ArrayView<'_>>,
    out_dtype: tessera::DType,
    res: &mut [u8],
    exec: &Exec,
) -> Local<()> {
    let rank = comm.rank() as usize;
    let range = TermRange { start: s, total };
    let err = |e: tessera::Error| e.to_string();
    let mine = scan_state(op, x, range, exec).map(|st| st.to_bytes());
    // A status byte, then the state.
    let mut msg = vec![u8::from(mine.is_err())];
    if let Ok(b) = &mine {
        msg.extend_from_slice(b);
    }
    let all = all_gather_bytes(comm, &msg);
    mine.map_err(err)?;
    let mut before: Option<ScanState> = None;
    for m in &all[..rank] {
        match m.split_first() {
            Some((0, b)) => {
                let st = ScanState::from_bytes(b).map_err(err)?;
                before = Some(match before {
                    None => st,
                    Some(p) => p.merge(&st, exec).map_err(err)?,
                });
            }
            _ => return Err("a rank before this one failed".into()),
        }
    }
    let mut d = ArrayViewMut::contiguous(out_dtype, x.shape(), res).map_err(err)?;
    scan_range(op, x, range, before.as_ref(), carry, &mut d, exec).map_err(err)
}
