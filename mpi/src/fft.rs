//! Distributed Fourier transforms by slab decomposition. Each pass of a
//! transform runs its lines apart, each with the bits of its own points
//! (ARCHITECTURE.md §5.8), in a fixed order of axes: c2c from the last
//! named axis to the first; r2c the real pass along the last named axis,
//! then the others last to first; c2r the others' inverse passes last to
//! first, then the real pass. Axis 0, the distributed one, is therefore the
//! last complex pass of c2c and r2c and the last before the real pass of
//! c2r. A slab of rows runs the passes along the other axes where it lies;
//! for axis 0 an all-to-all exchange gives each rank all rows of a block of
//! axis-1 columns, whose lines along axis 0 it transforms, and a second
//! exchange brings the rows home. The scale of a normalised transform
//! (from the whole transform's point count, rounded once) multiplies the
//! results of the last pass, as the single call does.

use crate::agree::{agree, exchange, signature, Local};
use crate::error::{DistError, Result};
use crate::reduce::row_offsets;
use mpi::traits::*;
use tessera::fft::{c2c, c2r, query, r2c, Direction, Norm, Transform};
use tessera::{ArrayView, ArrayViewMut, DType, Exec};

/// An even split of `n` over `size` ranks: rank j's first index and count.
fn even(n: usize, size: usize, j: usize) -> (usize, usize) {
    let (q, r) = (n / size, n % size);
    let lo = j * q + j.min(r);
    (lo, q + usize::from(j < r))
}

/// The complex dtype of a real one's precision, and back.
fn complex_of(d: DType) -> DType {
    if d == DType::F32 {
        DType::C64
    } else {
        DType::C128
    }
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
    if matches!(dtype, DType::C64 | DType::F32) {
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

/// The complex passes along axis 0 of the slabs `res` (this rank's `n`
/// rows of a C-order complex array whose whole shape is `shape`), unscaled:
/// to column blocks, axis 0's lines, back to slabs. Every rank takes part
/// in both exchanges whatever its outcome.
fn axis0_pass<C: Communicator>(
    comm: &C,
    res: &mut [u8],
    n: usize,
    (shape, dtype): (&[usize], DType),
    direction: Direction,
    mut outcome: Local<()>,
    exec: &Exec,
) -> Local<()> {
    let (rank, size) = (comm.rank() as usize, comm.size() as usize);
    let item = dtype.info().item_bytes;
    let total = shape[0];
    let row: usize = shape[1..].iter().product::<usize>() * item;
    let (counts, starts) = crate::agree::counts_and_starts(comm, n);
    // Slab to column blocks: rank j gets its columns of axis 1 of every row.
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
    // The blocks arrive in rank order, which is the rows' order.
    let cols: Vec<u8> = exchange(comm, &send).concat();
    let (_, w) = even(n1, size, rank);
    let mut cshape = shape.to_vec();
    cshape[1] = w;
    let mut out = vec![0u8; cols.len()];
    if outcome.is_ok() && cols.len() == total * w * inner {
        outcome = (|| {
            let err = |e: tessera::Error| e.to_string();
            let cv = ArrayView::contiguous(dtype, &cshape, &cols).map_err(err)?;
            let mut ov = ArrayViewMut::contiguous(dtype, &cshape, &mut out).map_err(err)?;
            c2c(&[0], direction, Norm::None, &cv, &mut ov, exec).map_err(err)
        })();
    } else if outcome.is_ok() {
        outcome = Err("a column block of the wrong size arrived".into());
    }
    // Column blocks back to slabs: rank r gets its rows of these columns.
    let send: Vec<Vec<u8>> = (0..size)
        .map(|r| {
            let (r0, nr) = (starts[r], counts[r]);
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
    outcome
}

/// Which transform, with its direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    C2c(Direction),
    R2c,
    C2r,
}

/// The common body: checks, agreement, the passes, the final write.
#[allow(clippy::too_many_arguments)]
fn transform<C: Communicator>(
    comm: &C,
    kind: Kind,
    axes: &[usize],
    norm: Norm,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let rank = comm.rank();
    let n = x.shape().first().copied().unwrap_or(0);
    let (_, total) = row_offsets(comm, n as u64);
    let total = total as usize;
    let distributed = axes.first() == Some(&0);
    let mut xg = x.shape().to_vec();
    let mut dg = dst.shape().to_vec();
    let local: Local<()> = (|| {
        if xg.is_empty() || dg.is_empty() {
            return Err("a distributed array has a leading axis (rank 0 given)".into());
        }
        if dg[0] != n {
            return Err(format!("destination: {} rows, this rank holds {n}", dg[0]));
        }
        xg[0] = total;
        dg[0] = total;
        let t = match kind {
            Kind::C2c(_) => Transform::C2c,
            Kind::R2c => Transform::R2c,
            Kind::C2r => Transform::C2r,
        };
        query(t, axes, (&xg, x.dtype()), (&dg, dst.dtype())).map_err(|e| e.to_string())?;
        if distributed && xg.len() < 2 {
            return Err("x: a slab decomposition needs rank 2 or more".into());
        }
        if distributed
            && kind != Kind::C2c(Direction::Forward)
            && kind != Kind::C2c(Direction::Inverse)
            && axes.len() < 2
        {
            return Err(
                "a real transform along axis 0 alone: its real pass would run along the \
                        distributed axis (name another axis after it)"
                    .into(),
            );
        }
        let big = |s: &[usize], d: DType| {
            s.iter()
                .product::<usize>()
                .saturating_mul(d.info().item_bytes)
        };
        if big(&xg, x.dtype())
            .max(big(&dg, dst.dtype()))
            .max(big(&dg, complex_of_any(dst.dtype())))
            > i32::MAX as usize
        {
            return Err("the exchanges move more than 2 GiB in one message".into());
        }
        tessera::check_destination(dst).map_err(|e| e.to_string())?;
        exec.resolve_tier().map_err(|e| e.to_string())?;
        Ok(())
    })();
    let sig = signature(&[
        format!("{kind:?} {axes:?} {norm:?}").as_bytes(),
        x.dtype().name().as_bytes(),
        format!("{:?} {:?}", x.shape().get(1..), dst.shape().get(1..)).as_bytes(),
    ]);
    agree(
        comm,
        &local,
        sig,
        "the transform, axes, norm, dtypes or trailing shapes",
    )?;
    let err = |e: tessera::Error| e.to_string();
    let out_dtype = dst.dtype();
    let out_bytes = dst.shape().iter().product::<usize>() * out_dtype.info().item_bytes;
    let mut res = vec![0u8; out_bytes];
    let outcome: Local<()> = if !distributed {
        ArrayViewMut::contiguous(out_dtype, dst.shape(), &mut res)
            .and_then(|mut d| match kind {
                Kind::C2c(dir) => c2c(axes, dir, norm, x, &mut d, exec),
                Kind::R2c => r2c(axes, norm, x, &mut d, exec),
                Kind::C2r => c2r(axes, norm, x, &mut d, exec),
            })
            .map_err(err)
    } else {
        match kind {
            Kind::C2c(dir) => {
                // The axes after 0 where the rows lie, then axis 0.
                let first = ArrayViewMut::contiguous(out_dtype, x.shape(), &mut res)
                    .and_then(|mut d| {
                        if axes.len() > 1 {
                            c2c(&axes[1..], dir, Norm::None, x, &mut d, exec)
                        } else {
                            let b = crate::bytes::load(x)?;
                            d.data_mut().copy_from_slice(&b);
                            Ok(())
                        }
                    })
                    .map_err(err);
                let done = axis0_pass(comm, &mut res, n, (&xg, out_dtype), dir, first, exec);
                let points: usize = axes.iter().map(|&a| xg[a]).product();
                scale(&mut res, out_dtype, norm, dir, points);
                done
            }
            Kind::R2c => {
                // The real pass and the other axes after 0 where the rows
                // lie, then axis 0.
                let first = ArrayViewMut::contiguous(out_dtype, dst.shape(), &mut res)
                    .and_then(|mut d| r2c(&axes[1..], Norm::None, x, &mut d, exec))
                    .map_err(err);
                let done = axis0_pass(
                    comm,
                    &mut res,
                    n,
                    (&dg, out_dtype),
                    Direction::Forward,
                    first,
                    exec,
                );
                let points: usize = axes.iter().map(|&a| xg[a]).product();
                scale(&mut res, out_dtype, norm, Direction::Forward, points);
                done
            }
            Kind::C2r => {
                // The others' inverse passes after 0 where the rows lie,
                // axis 0, then the real pass where the rows lie.
                let last = axes.len() - 1;
                let mut mid =
                    vec![0u8; x.shape().iter().product::<usize>() * x.dtype().info().item_bytes];
                let first = ArrayViewMut::contiguous(x.dtype(), x.shape(), &mut mid)
                    .and_then(|mut d| {
                        if last > 1 {
                            c2c(
                                &axes[1..last],
                                Direction::Inverse,
                                Norm::None,
                                x,
                                &mut d,
                                exec,
                            )
                        } else {
                            let b = crate::bytes::load(x)?;
                            d.data_mut().copy_from_slice(&b);
                            Ok(())
                        }
                    })
                    .map_err(err);
                let done = axis0_pass(
                    comm,
                    &mut mid,
                    n,
                    (&xg, x.dtype()),
                    Direction::Inverse,
                    first,
                    exec,
                );
                let real = done.and_then(|()| {
                    let mv = ArrayView::contiguous(x.dtype(), x.shape(), &mid).map_err(err)?;
                    let mut d =
                        ArrayViewMut::contiguous(out_dtype, dst.shape(), &mut res).map_err(err)?;
                    c2r(&axes[last..], Norm::None, &mv, &mut d, exec).map_err(err)
                });
                let points: usize = axes.iter().map(|&a| dg[a]).product();
                scale(&mut res, out_dtype, norm, Direction::Inverse, points);
                real
            }
        }
    };
    agree(comm, &outcome, 0, "")?;
    crate::bytes::store(dst, &res).map_err(|e| DistError::Refused {
        rank,
        message: e.to_string(),
    })
}

/// The complex dtype of a dtype's precision (itself where complex).
fn complex_of_any(d: DType) -> DType {
    match d {
        DType::F32 | DType::F64 => complex_of(d),
        d => d,
    }
}

/// The complex transform `direction` along `axes` (strictly increasing,
/// axis 0 among them or not) of the block-distributed `x` (this rank's rows
/// of the leading axis; complex64 or complex128) into `dst` (this rank's
/// rows of the result, same shape and dtype), scaled as `norm` says: the
/// bits of `tessera::fft::c2c` of the whole array on one process, at any
/// number of ranks (empty slabs allowed) and on any mix of tiers and thread
/// counts. With axis 0 named the arrays have rank 2 or more; the exchanges
/// move each element twice (slab to column block and back).
///
/// Collective: every rank calls it with the same axes, direction, norm,
/// dtype and trailing shape.
///
/// # Errors
/// On every rank alike, before any destination is written:
/// [`DistError::Refused`] with the lowest refusing rank's error (what
/// `tessera::fft::c2c` refuses of the whole array, a destination with
/// other rows than this rank's, an operand of rank below 2 with axis 0
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
    transform(comm, Kind::C2c(direction), axes, norm, x, dst, exec)
}

/// The forward real transform of the block-distributed `x` (f32 or f64,
/// this rank's rows) along `axes` into `dst` (this rank's rows of the
/// complex result: bins `0..=n/2` along the last of `axes`), scaled as
/// `norm` says, with the bits of `tessera::fft::r2c` of the whole array.
/// Where axis 0 is named another axis must follow it (the real pass runs
/// along the last named axis, where the rows lie).
///
/// # Errors
/// As [`fft_c2c`], and axis 0 named alone.
pub fn fft_r2c<C: Communicator>(
    comm: &C,
    axes: &[usize],
    norm: Norm,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    transform(comm, Kind::R2c, axes, norm, x, dst, exec)
}

/// The inverse real transform of the block-distributed `x` (complex64 or
/// complex128, this rank's rows, `n/2 + 1` bins along the last of `axes`)
/// into `dst` (this rank's rows of the real result, n along that axis),
/// scaled as `norm` says, with the bits of `tessera::fft::c2r` of the whole
/// array. Where axis 0 is named another axis must follow it.
///
/// # Errors
/// As [`fft_c2c`], and axis 0 named alone.
pub fn fft_c2r<C: Communicator>(
    comm: &C,
    axes: &[usize],
    norm: Norm,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    transform(comm, Kind::C2r, axes, norm, x, dst, exec)
}
