//! Distributed Fourier transforms by slab decomposition. A c2c transform
//! runs its axes from the last named to the first, each line apart with the
//! bits of its own points (ARCHITECTURE.md §5.8), so a slab of rows
//! transforms the named axes after 0 where it lies; an all-to-all exchange
//! then gives each rank all rows of a block of axis-1 columns, whose lines
//! along axis 0 it transforms (the scale of a normalised transform, from
//! the whole transform's point count, taken after that last pass as the
//! single call takes it); a second exchange brings the rows home.

use crate::agree::{agree, exchange, signature, Local};
use crate::error::{DistError, Result};
use crate::reduce::row_offsets;
use mpi::traits::*;
use tessera::fft::{c2c, query, Direction, Norm, Transform};
use tessera::{ArrayView, ArrayViewMut, DType, Exec};

/// An even split of `n` over `size` ranks: rank j's first index and count.
fn even(n: usize, size: usize, j: usize) -> (usize, usize) {
    let (q, r) = (n / size, n % size);
    let lo = j * q + j.min(r);
    (lo, q + usize::from(j < r))
}

/// The complex transform `direction` along `axes` (strictly increasing,
/// axis 0 among them or not) of the block-distributed `x` (this rank's rows
/// of the leading axis; complex64 or complex128) into `dst` (this rank's
/// rows of the result, same shape and dtype), scaled as `norm` says: the
/// bits of `tessera::fft::c2c` of the whole array on one process, at any
/// number of ranks (empty slabs allowed) and on any mix of tiers and thread
/// counts. The arrays have rank 2 or more; the exchanges move each
/// element twice (slab to column block and back).
///
/// Collective: every rank calls it with the same axes, direction, norm,
/// dtype and trailing shape.
///
/// # Errors
/// On every rank alike, before any destination is written:
/// [`DistError::Refused`] with the lowest refusing rank's error (what
/// `tessera::fft::c2c` refuses, an operand of rank below 2 with axis 0
/// named, a message past 2 GiB, an allocation); [`DistError::Mismatch`]
/// where the ranks' calls differ.
pub fn fft_c2c<C: Communicator>(
    comm: &C,
    axes: &[usize],
    direction: Direction,
    norm: Norm,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let (rank, size) = (comm.rank() as usize, comm.size() as usize);
    let n = x.shape().first().copied().unwrap_or(0);
    let (_, total) = row_offsets(comm, n as u64);
    let total = total as usize;
    let dtype = x.dtype();
    let item = dtype.info().item_bytes;
    let mut shape = x.shape().to_vec();
    let distributed = axes.first() == Some(&0);
    let local: Local<()> = (|| {
        if shape.is_empty() {
            return Err("x: a distributed array has a leading axis (rank 0 given)".into());
        }
        shape[0] = total;
        query(Transform::C2c, axes, (&shape, dtype), (&shape, dtype)).map_err(|e| e.to_string())?;
        if dst.shape() != x.shape() || dst.dtype() != dtype {
            return Err(format!(
                "destination: {} {:?}, expected this rank's {} {:?}",
                dst.dtype(),
                dst.shape(),
                dtype,
                x.shape()
            ));
        }
        if distributed && shape.len() < 2 {
            return Err("x: a slab decomposition needs rank 2 or more".into());
        }
        if shape.iter().product::<usize>().saturating_mul(item) > i32::MAX as usize {
            return Err("x: the exchanges move more than 2 GiB in one message".into());
        }
        tessera::check_destination(dst).map_err(|e| e.to_string())?;
        exec.resolve_tier().map_err(|e| e.to_string())?;
        Ok(())
    })();
    let sig = signature(&[
        format!("{axes:?} {direction:?} {norm:?}").as_bytes(),
        dtype.name().as_bytes(),
        format!("{:?}", x.shape().get(1..)).as_bytes(),
    ]);
    agree(
        comm,
        &local,
        sig,
        "the axes, direction, norm, dtype or trailing shape",
    )?;
    let err = |e: tessera::Error| e.to_string();
    let row: usize = shape[1..].iter().product::<usize>() * item;
    let mut res = vec![0u8; n * row];
    let whole = ArrayViewMut::contiguous(dtype, x.shape(), &mut res);
    let mut outcome: Local<()> = if !distributed {
        whole
            .and_then(|mut d| c2c(axes, direction, norm, x, &mut d, exec))
            .map_err(err)
    } else if axes.len() > 1 {
        // The axes after 0 where the rows lie (unscaled).
        whole
            .and_then(|mut d| c2c(&axes[1..], direction, Norm::None, x, &mut d, exec))
            .map_err(err)
    } else {
        drop(whole);
        crate::bytes::load(x)
            .map(|b| res.copy_from_slice(&b))
            .map_err(err)
    };
    if distributed {
        // Every rank's first row.
        let mut counts = vec![0u64; size];
        comm.all_gather_into(&(n as u64), &mut counts[..]);
        let starts: Vec<usize> = counts
            .iter()
            .scan(0usize, |acc, &c| {
                let d = *acc;
                *acc += c as usize;
                Some(d)
            })
            .collect();
        // Slab to column blocks: rank j gets columns cols(j) of axis 1 of
        // every row.
        let n1 = shape[1];
        let inner: usize = shape[2..].iter().product::<usize>() * item;
        let send: Vec<Vec<u8>> = (0..size)
            .map(|j| {
                let (c0, w) = even(n1, size, j);
                let mut b = Vec::with_capacity(n * w * inner);
                for r in 0..n {
                    let at = r * row + c0 * inner;
                    b.extend_from_slice(&res[at..at + w * inner]);
                }
                b
            })
            .collect();
        let got = exchange(comm, &send);
        let (_, w) = even(n1, size, rank);
        // All rows of this rank's columns: the blocks in rank order are the
        // rows in order.
        let cols: Vec<u8> = got.concat();
        let mut cshape = shape.clone();
        cshape[1] = w;
        let mut out = vec![0u8; cols.len()];
        if outcome.is_ok() && cols.len() == total * w * inner {
            outcome = (|| {
                let cv = ArrayView::contiguous(dtype, &cshape, &cols).map_err(err)?;
                let mut ov = ArrayViewMut::contiguous(dtype, &cshape, &mut out).map_err(err)?;
                c2c(&[0], direction, Norm::None, &cv, &mut ov, exec).map_err(err)?;
                let points: usize = axes.iter().map(|&a| shape[a]).product();
                scale(&mut out, dtype, norm, direction, points);
                Ok(())
            })();
        } else if outcome.is_ok() {
            outcome = Err("a column block of the wrong size arrived".into());
        }
        // Column blocks back to slabs: rank r gets its rows of this rank's
        // columns.
        let send: Vec<Vec<u8>> = (0..size)
            .map(|r| {
                let (r0, nr) = (starts[r], counts[r] as usize);
                out.get(r0 * w * inner..(r0 + nr) * w * inner)
                    .unwrap_or(&[])
                    .to_vec()
            })
            .collect();
        let back = exchange(comm, &send);
        for (j, b) in back.iter().enumerate() {
            let (c0, wj) = even(n1, size, j);
            if b.len() != n * wj * inner {
                if outcome.is_ok() {
                    outcome = Err("a slab block of the wrong size arrived".into());
                }
                continue;
            }
            for r in 0..n {
                let at = r * row + c0 * inner;
                res[at..at + wj * inner].copy_from_slice(&b[r * wj * inner..(r + 1) * wj * inner]);
            }
        }
    }
    agree(comm, &outcome, 0, "")?;
    crate::bytes::store(dst, &res).map_err(|e| DistError::Refused {
        rank: rank as i32,
        message: e.to_string(),
    })
}

/// Multiply every part by the scale of a normalised transform of `points`
/// (computed in f64 and rounded once into the precision), as the single
/// call's final pass does.
fn scale(out: &mut [u8], dtype: DType, norm: Norm, direction: Direction, points: usize) {
    let n = points as f64;
    let s = match (norm, direction) {
        (Norm::Backward, Direction::Inverse) | (Norm::Forward, Direction::Forward) => 1.0 / n,
        (Norm::Ortho, _) => 1.0 / n.sqrt(),
        _ => return,
    };
    if dtype == DType::C64 {
        let s = s as f32;
        for b in out.chunks_exact_mut(4) {
            let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]) * s;
            b.copy_from_slice(&v.to_le_bytes());
        }
    } else {
        for b in out.chunks_exact_mut(8) {
            let v = f64::from_le_bytes(b.try_into().unwrap_or([0; 8])) * s;
            b.copy_from_slice(&v.to_le_bytes());
        }
    }
}
