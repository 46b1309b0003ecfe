//! Distributed scans along the distributed axis, with the single-process
//! chunk order (ARCHITECTURE.md §5.4): chunks of 4096 rows numbered over
//! the whole axis, a chunk's total reduced in lane order, the carry into
//! chunk c + 1 the carry into c combined with c's total, and each result
//! the chunk's carry combined with its rows up to it, left to right.
//!
//! Each rank reduces the chunks its rows touch: a whole chunk to its total,
//! a chunk cut by a rank boundary to a partial state
//! ([`tessera::reduce::Partial`]) of its rows. The ranks' lists are
//! gathered on every rank (one carrier value or state per chunk and output:
//! 1/4096 of the data), which joins the cut chunks' states in rank order
//! and folds the totals into the carry of its first whole chunk, left to
//! right as the single call does. The rows of a chunk cut at a rank's start
//! continue the previous rank's last results, which that rank passes on;
//! only ranks whose rows all lie in one cut chunk wait on it.

use crate::agree::{agree, all_gather_bytes, signature, Local};
use crate::error::{DistError, Result};
use crate::reduce::row_offsets;
use mpi::traits::*;
use tessera::reduce::scan::CHUNK;
use tessera::reduce::{carrier, reduce_finish, reduce_partial, scan_query, Partial, TermRange};
use tessera::{ArrayView, ArrayViewMut, DType, Exec, ReduceOp, ScanOp, Terms};

/// Rows `a..b` of `x` (a view of the same bytes).
fn rows<'a>(x: &ArrayView<'a>, a: usize, b: usize) -> tessera::Result<ArrayView<'a>> {
    let mut shape = x.shape().to_vec();
    shape[0] = b - a;
    let off = x.layout().offset as isize + a as isize * x.strides()[0];
    ArrayView::new(
        x.dtype(),
        &shape,
        x.strides(),
        usize::try_from(off).unwrap_or(usize::MAX),
        x.data(),
    )
}

/// The reduction whose value is a scan's chunk total.
fn total_op(op: ScanOp) -> Option<ReduceOp> {
    Some(match op {
        ScanOp::Sum => ReduceOp::Sum,
        ScanOp::Prod => ReduceOp::Prod,
        ScanOp::Max => ReduceOp::Max,
        ScanOp::Min => ReduceOp::Min,
        _ => return None,
    })
}

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
    let c = carrier(dtype);
    let rest: Vec<usize> = x.shape().get(1..).unwrap_or(&[]).to_vec();
    let row_bytes = rest.iter().product::<usize>() * c.info().item_bytes;
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
        if axis == 0 && total_op(op).is_none() {
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
    let mut res = vec![0u8; n * row_bytes];
    let out_dtype = if axis == 0 { c } else { dst.dtype() };
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
        along_rows(comm, op, x, (s, total), carry, &carry_bytes, &mut res, exec)
    };
    agree(comm, &done, 0, "")?;
    let written = if axis == 0 {
        // Each result rounds once from the carrier into the destination.
        ArrayView::contiguous(out_dtype, x.shape(), &res)
            .and_then(|v| tessera::cast(tessera::CastMode::Default, &v, dst, exec))
    } else {
        crate::bytes::store(dst, &res)
    };
    written.map_err(|e| DistError::Refused {
        rank: comm.rank(),
        message: e.to_string(),
    })
}

/// One chunk a rank's rows touch: its index and either its total (bytes of
/// the carrier per output) or the partial state of the rows it holds.
enum Piece {
    Total(Vec<u8>),
    State(Vec<u8>),
}

fn encode_pieces(p: &[(usize, Piece)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (c, piece) in p {
        let (kind, b) = match piece {
            Piece::Total(b) => (0u8, b),
            Piece::State(b) => (1u8, b),
        };
        out.extend_from_slice(&(*c as u64).to_le_bytes());
        out.push(kind);
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        out.extend_from_slice(b);
    }
    out
}

fn decode_pieces(mut b: &[u8]) -> std::result::Result<Vec<(usize, Piece)>, String> {
    let mut out = Vec::new();
    while !b.is_empty() {
        if b.len() < 17 {
            return Err("a chunk record cut short".into());
        }
        let c = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])) as usize;
        let kind = b[8];
        let len = u64::from_le_bytes(b[9..17].try_into().unwrap_or([0; 8])) as usize;
        let body = b
            .get(17..17 + len)
            .ok_or("a chunk record cut short")?
            .to_vec();
        out.push((
            c,
            if kind == 0 {
                Piece::Total(body)
            } else {
                Piece::State(body)
            },
        ));
        b = &b[17 + len..];
    }
    Ok(out)
}

/// The carry into chunk `chunks` (this rank's first whole chunk): the
/// totals of the chunks before it, from every rank's pieces (cut chunks'
/// states joined in rank order), folded left to right from the carry.
fn carry_before(
    op: ScanOp,
    all: &[Vec<u8>],
    chunks: usize,
    (c, rest): (DType, &[usize]),
    carry: Option<&[u8]>,
    exec: &Exec,
) -> Local<Option<Vec<u8>>> {
    let err = |e: tessera::Error| e.to_string();
    let row_bytes = rest.iter().product::<usize>() * c.info().item_bytes;
    let mut totals = vec![0u8; chunks * row_bytes];
    let mut states: Vec<Option<Partial>> = (0..chunks).map(|_| None).collect();
    let mut seen = vec![false; chunks];
    for bytes in all {
        for (k, piece) in decode_pieces(bytes)? {
            if k >= chunks {
                continue;
            }
            seen[k] = true;
            match piece {
                Piece::Total(t) if t.len() == row_bytes => {
                    totals[k * row_bytes..(k + 1) * row_bytes].copy_from_slice(&t)
                }
                Piece::Total(_) => return Err("a chunk total of another size".into()),
                Piece::State(b) => {
                    let p = Partial::from_bytes(&b).map_err(err)?;
                    states[k] = Some(match states[k].take() {
                        None => p,
                        Some(q) => q.merge(&p).map_err(err)?,
                    });
                }
            }
        }
    }
    if seen.iter().any(|&v| !v) {
        return Err("a chunk's total is missing (a rank failed before it)".into());
    }
    for (k, st) in states.iter().enumerate() {
        if let Some(p) = st {
            let t = &mut totals[k * row_bytes..(k + 1) * row_bytes];
            let mut d = ArrayViewMut::contiguous(c, rest, t).map_err(err)?;
            reduce_finish(p, None, &mut d, exec).map_err(err)?;
        }
    }
    // Left to right from the carry, one chunk's worth of totals at a time
    // (a scan of at most one chunk runs left to right from its carry).
    let mut cur: Option<Vec<u8>> = carry.map(|b| b.to_vec());
    let mut shape = vec![0usize];
    shape.extend_from_slice(rest);
    for run in totals.chunks(CHUNK * row_bytes) {
        let m = run.len() / row_bytes;
        shape[0] = m;
        let tv = ArrayView::contiguous(c, &shape, run).map_err(err)?;
        let mut out = vec![0u8; run.len()];
        {
            let kv = match &cur {
                Some(b) => Some(ArrayView::contiguous(c, rest, b).map_err(err)?),
                None => None,
            };
            let mut ov = ArrayViewMut::contiguous(c, &shape, &mut out).map_err(err)?;
            tessera::scan(op, 0, &tv, kv.as_ref(), &mut ov, exec).map_err(err)?;
        }
        cur = Some(out[(m - 1) * row_bytes..].to_vec());
    }
    Ok(cur)
}

/// The scan along axis 0 of this rank's rows `s .. s + n` of `total`, into
/// `res` (carrier values, C order).
#[allow(clippy::too_many_arguments)]
fn along_rows<C: Communicator>(
    comm: &C,
    op: ScanOp,
    x: &ArrayView<'_>,
    (s, total): (usize, usize),
    carry: Option<&ArrayView<'_>>,
    carry_bytes: &[u8],
    res: &mut [u8],
    exec: &Exec,
) -> Local<()> {
    let (rank, size) = (comm.rank(), comm.size());
    let n = x.shape()[0];
    let e = s + n;
    let c = carrier(x.dtype());
    let rest: Vec<usize> = x.shape()[1..].to_vec();
    let row_bytes = rest.iter().product::<usize>() * c.info().item_bytes;
    let rop = total_op(op).ok_or("no chunk total for this scan")?;
    let err = |e: tessera::Error| e.to_string();
    // The chunks this rank's rows touch.
    let mut pieces: Vec<(usize, Piece)> = Vec::new();
    let mut local: Local<()> = Ok(());
    if n > 0 {
        for k in s / CHUNK..=(e - 1) / CHUNK {
            let (c0, c1) = (k * CHUNK, ((k + 1) * CHUNK).min(total));
            let (a, b) = (s.max(c0), e.min(c1));
            let part = rows(x, a - s, b - s).map_err(err);
            let piece = part.and_then(|v| {
                if (a, b) == (c0, c1) {
                    let mut t = vec![0u8; row_bytes];
                    let mut d = ArrayViewMut::contiguous(c, &rest, &mut t).map_err(err)?;
                    tessera::reduce(rop, &[0], &v, &mut d, exec).map_err(err)?;
                    Ok(Piece::Total(t))
                } else {
                    let range = TermRange {
                        start: a - c0,
                        total: c1 - c0,
                    };
                    let p = reduce_partial(rop, &[0], Terms::of(&v), range, None, exec);
                    Ok(Piece::State(p.map_err(err)?.to_bytes()))
                }
            });
            match piece {
                Ok(p) => pieces.push((k, p)),
                Err(m) => {
                    local = Err(m);
                    break;
                }
            }
        }
    }
    // Every rank's pieces on every rank (a failed rank sends those it has
    // and reports its failure at the agreement after the call; it still
    // takes part in every message below).
    let all = all_gather_bytes(comm, &encode_pieces(&pieces));
    let a0 = s.div_ceil(CHUNK) * CHUNK;
    let prepared = local.and_then(|()| {
        if a0 < e && a0 > 0 {
            let chunks = a0 / CHUNK;
            carry_before(
                op,
                &all,
                chunks,
                (c, &rest),
                carry.map(|_| carry_bytes),
                exec,
            )
        } else {
            Ok(None)
        }
    });
    let mut outcome: Local<()> = prepared.as_ref().map(|_| ()).map_err(|m| m.clone());
    let carry_a0 = prepared.ok().flatten();
    // Rows a0 .. e: the library's scan from the carry into chunk a0 (chunks
    // from a0 are the whole axis's chunks).
    let mid = |res: &mut [u8]| -> Local<()> {
        if a0 >= e {
            return Ok(());
        }
        let v = rows(x, a0 - s, n).map_err(err)?;
        let kv = match (a0, &carry_a0) {
            (0, _) => carry.cloned(),
            (_, Some(b)) => Some(ArrayView::contiguous(c, &rest, b).map_err(err)?),
            (_, None) => None,
        };
        let mut shape = rest.clone();
        shape.insert(0, e - a0);
        let mut d =
            ArrayViewMut::contiguous(c, &shape, &mut res[(a0 - s) * row_bytes..]).map_err(err)?;
        tessera::scan(op, 0, &v, kv.as_ref(), &mut d, exec).map_err(err)
    };
    // Rows s .. min(a0, e) continue the previous rank's last results.
    let receives = !s.is_multiple_of(CHUNK) && rank > 0;
    let sends = !e.is_multiple_of(CHUNK) && rank + 1 < size;
    let independent = a0 < e;
    let last_row = |res: &[u8], got: &Option<Vec<u8>>| -> Vec<u8> {
        if n > 0 {
            res[(n - 1) * row_bytes..n * row_bytes].to_vec()
        } else {
            got.clone().unwrap_or_default()
        }
    };
    let send = |outcome: &Local<()>, row: Vec<u8>| {
        let mut m = vec![u8::from(outcome.is_err())];
        m.extend_from_slice(&row);
        comm.process_at_rank(rank + 1).send(&m[..]);
    };
    if independent {
        if outcome.is_ok() {
            outcome = mid(res);
        }
        if sends {
            send(&outcome, last_row(res, &None));
        }
    }
    let mut got = None;
    if receives {
        let (m, _) = comm.process_at_rank(rank - 1).receive_vec::<u8>();
        match m.split_first() {
            Some((0, row)) if row.len() == row_bytes => got = Some(row.to_vec()),
            _ => {
                if outcome.is_ok() {
                    outcome = Err("the previous rank's last results did not arrive".into())
                }
            }
        }
        if let (Some(v), Ok(())) = (&got, &outcome) {
            let head = a0.min(e) - s;
            if head > 0 {
                let r = (|| {
                    let xv = rows(x, 0, head).map_err(err)?;
                    let kv = ArrayView::contiguous(c, &rest, v).map_err(err)?;
                    let mut shape = rest.clone();
                    shape.insert(0, head);
                    let mut d = ArrayViewMut::contiguous(c, &shape, &mut res[..head * row_bytes])
                        .map_err(err)?;
                    tessera::scan(op, 0, &xv, Some(&kv), &mut d, exec).map_err(err)
                })();
                outcome = r;
            }
        }
    }
    if !independent && sends {
        let row = last_row(res, &got);
        let row = if row.len() == row_bytes {
            row
        } else {
            vec![0u8; row_bytes]
        };
        send(&outcome, row);
    }
    outcome
}
