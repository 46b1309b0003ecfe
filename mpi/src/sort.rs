//! Distributed sort (sample sort) and numbering by first appearance.
//!
//! Sorting permutes values, so the single-process result is one array and
//! a distributed sort gives each rank its block of it: the elements at
//! global sorted positions `B_r .. B_r + n_r` (the rank's own input block's
//! place), with their global input positions where asked. Equal elements
//! keep their input order (the sort is stable, and equal elements may
//! differ in bits: NaNs, bools, complex numbers with a NaN part), which
//! the steps keep: a stable local sort; splitters chosen from the data
//! alone (regular samples of every rank's sorted block, gathered in rank
//! order and sorted on every rank alike); buckets cut at the splitters (a
//! rank's block and the splitters sorted stably together, so equal
//! elements share a bucket, in whichever order the sort takes); each
//! bucket's pieces joined in rank order and sorted stably (so equal
//! elements from lower ranks, which came first, stay first); the buckets'
//! elements finally moved to the ranks whose output block holds their
//! global sorted positions.

use crate::agree::{agree, all_gather_bytes, exchange, signature, Local};
use crate::error::{DistError, Result};
use crate::reduce::row_offsets;
use mpi::collective::SystemOperation;
use mpi::traits::*;
use tessera::{ArrayView, ArrayViewMut, DType, Exec, FloatOrder};

/// Samples each rank contributes to the splitters.
const SAMPLES: usize = 64;

/// Sort `v` (elements of `dtype`, `item` bytes each) stably, with `pos`
/// (one i64 per element) moved alike.
fn sort_with_positions(
    v: &[u8],
    pos: &[i64],
    (dtype, how): (DType, Order),
    exec: &Exec,
) -> tessera::Result<(Vec<u8>, Vec<i64>)> {
    let n = pos.len();
    let mut sorted = vec![0u8; v.len()];
    let mut perm = vec![0i64; n];
    let x = ArrayView::contiguous(dtype, &[n], v)?;
    {
        let mut d = ArrayViewMut::contiguous(dtype, &[n], &mut sorted)?;
        let mut p = ArrayViewMut::from_slice(&mut perm, &[n])?;
        tessera::sort_with(
            0,
            how.descending,
            how.floats,
            &x,
            &mut d,
            Some(&mut p),
            exec,
        )?;
    }
    let moved = perm.iter().map(|&i| pos[i as usize]).collect();
    Ok((sorted, moved))
}

fn i64_bytes(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|p| p.to_le_bytes()).collect()
}

fn i64s(b: &[u8]) -> Vec<i64> {
    b.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

/// The order of a distributed sort: `tessera::sort_with`'s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Order {
    /// Largest first (equal elements still in increasing position).
    pub descending: bool,
    /// How floats order: NaN last with every NaN equal (the default), or
    /// IEEE totalOrder.
    pub floats: FloatOrder,
}

/// Sort the block-distributed 1-D `x` (this rank's elements) in `how`'s
/// order, `tessera::sort_with`'s (by default ascending, −∞ < … < −0 < +0 <
/// … < +∞ < NaN with every NaN equal; or IEEE totalOrder; descending keeps
/// equal elements in increasing position; complex by parts; any dtype of
/// whole bytes), stably: `values`
/// (this rank's element count, `x`'s dtype) gets the elements at global
/// sorted positions `B_r .. B_r + n_r` (the rank's own block's place) and
/// `positions`, where given (i64), their positions in the whole input; the
/// bits of `tessera::sort_with` of the whole array on one process, sliced,
/// at any number of ranks.
///
/// Collective: every rank calls it with the same dtype and the same
/// choice of positions. A rank's memory holds at most its bucket: the
/// elements between two splitters, which many equal elements can make
/// large.
///
/// # Errors
/// On every rank alike, before any destination is written:
/// [`DistError::Refused`] with the lowest refusing rank's error (an `x`
/// not 1-D or of a packed dtype, destinations of the wrong shape or dtype
/// or that reach an element twice, an allocation);
/// [`DistError::Mismatch`] where the ranks' calls differ.
pub fn sort<C: Communicator>(
    comm: &C,
    how: Order,
    x: &ArrayView<'_>,
    values: &mut ArrayViewMut<'_>,
    positions: Option<&mut ArrayViewMut<'_>>,
    exec: &Exec,
) -> Result<()> {
    let (rank, size) = (comm.rank() as usize, comm.size() as usize);
    let dtype = x.dtype();
    let item = dtype.info().item_bytes;
    let n = x.shape().first().copied().unwrap_or(0);
    let (before, _) = row_offsets(comm, n as u64);
    let before = before as usize;
    let local: Local<()> = (|| {
        if x.shape().len() != 1 {
            return Err(format!(
                "x: shape {:?}; a distributed sort takes 1-D arrays",
                x.shape()
            ));
        }
        if dtype.info().values_per_byte != 1 {
            return Err(format!("x: {dtype} packs several values per byte"));
        }
        if values.shape() != x.shape() || values.dtype() != dtype {
            return Err(format!(
                "values: {} {:?}, expected {dtype} {:?}",
                values.dtype(),
                values.shape(),
                x.shape()
            ));
        }
        tessera::check_destination(values).map_err(|e| e.to_string())?;
        if let Some(p) = positions.as_deref() {
            if p.shape() != x.shape() || p.dtype() != DType::I64 {
                return Err(format!(
                    "positions: {} {:?}, expected i64 {:?}",
                    p.dtype(),
                    p.shape(),
                    x.shape()
                ));
            }
            tessera::check_destination(p).map_err(|e| e.to_string())?;
        }
        exec.resolve_tier().map_err(|e| e.to_string())?;
        Ok(())
    })();
    let sig = signature(&[
        dtype.name().as_bytes(),
        &[u8::from(positions.is_some())],
        format!("{how:?}").as_bytes(),
    ]);
    agree(
        comm,
        &local,
        sig,
        "the dtype, the order or the choice of positions",
    )?;
    let err = |e: tessera::Error| e.to_string();
    let mut outcome: Local<()> = Ok(());
    // 1. A stable local sort, with global input positions.
    let mine_pos: Vec<i64> = (0..n).map(|i| (before + i) as i64).collect();
    let sorted = crate::bytes::load(x)
        .and_then(|raw| sort_with_positions(&raw, &mine_pos, (dtype, how), exec));
    let (mine, mine_pos) = match sorted {
        Ok(v) => v,
        Err(e) => {
            outcome = Err(err(e));
            (vec![0u8; n * item], mine_pos)
        }
    };
    // 2. Splitters: regular samples of every sorted block, in rank order,
    // sorted alike on every rank.
    let k = SAMPLES.min(n);
    let mut samples = Vec::with_capacity(k * item);
    for i in 0..k {
        let at = (i * n + n / 2) / k;
        samples.extend_from_slice(&mine[at * item..(at + 1) * item]);
    }
    let all = all_gather_bytes(comm, &samples).concat();
    let m = all.len() / item;
    let splitters: Vec<u8> = match (|| -> tessera::Result<Vec<u8>> {
        let mut sorted = vec![0u8; all.len()];
        let x = ArrayView::contiguous(dtype, &[m], &all)?;
        let mut d = ArrayViewMut::contiguous(dtype, &[m], &mut sorted)?;
        tessera::sort_with(0, how.descending, how.floats, &x, &mut d, None, exec)?;
        let mut s = Vec::with_capacity((size - 1) * item);
        for j in 1..size {
            let at = (j * m / size).min(m.saturating_sub(1));
            if m > 0 {
                s.extend_from_slice(&sorted[at * item..(at + 1) * item]);
            }
        }
        Ok(s)
    })() {
        Ok(s) => s,
        Err(e) => {
            if outcome.is_ok() {
                outcome = Err(err(e));
            }
            Vec::new()
        }
    };
    // 3. Buckets: the sorted block cut after the elements that sort before
    // or with each splitter (the block then the splitters, sorted stably
    // together: an element equal to a splitter, which came first, stays
    // before it), in any order the sort takes.
    let ns = splitters.len() / item;
    let mut cuts = vec![0i64; ns];
    if ns > 0 {
        let r = (|| {
            let mut both = mine.clone();
            both.extend_from_slice(&splitters);
            let marks: Vec<i64> = (0..(n + ns) as i64).collect();
            let (_, order) = sort_with_positions(&both, &marks, (dtype, how), exec)?;
            let mut seen = 0i64;
            for &p in &order {
                match usize::try_from(p).ok().and_then(|p| p.checked_sub(n)) {
                    Some(j) if j < ns => cuts[j] = seen,
                    _ => seen += 1,
                }
            }
            Ok::<(), tessera::Error>(())
        })();
        if let Err(e) = r {
            if outcome.is_ok() {
                outcome = Err(err(e));
            }
        }
    }
    let bound = |j: usize| -> usize {
        if j == 0 {
            0
        } else if j >= size || ns == 0 {
            n
        } else {
            (cuts[j - 1].max(0) as usize).min(n)
        }
    };
    let send: Vec<Vec<u8>> = (0..size)
        .map(|j| {
            let (a, b) = (bound(j), bound(j + 1).max(bound(j)));
            let mut msg = (mine[a * item..b * item]).to_vec();
            msg.extend_from_slice(&i64_bytes(&mine_pos[a..b]));
            msg
        })
        .collect();
    // Each message is values then positions: its element count is
    // len / (item + 8).
    let got = exchange(comm, &send);
    let mut bucket = Vec::new();
    let mut bucket_pos = Vec::new();
    for g in &got {
        let c = g.len() / (item + 8);
        bucket.extend_from_slice(&g[..c * item]);
        bucket_pos.extend(i64s(&g[c * item..]));
    }
    // 4. The bucket in order: pieces joined in rank order, sorted stably.
    let (bucket, bucket_pos) = match sort_with_positions(&bucket, &bucket_pos, (dtype, how), exec) {
        Ok(v) => v,
        Err(e) => {
            if outcome.is_ok() {
                outcome = Err(err(e));
            }
            (bucket, bucket_pos)
        }
    };
    // 5. Every element to the rank whose output block holds its global
    // sorted position.
    let b = bucket_pos.len() as u64;
    let mut g0 = 0u64;
    comm.exclusive_scan_into(&b, &mut g0, SystemOperation::sum());
    if rank == 0 {
        g0 = 0;
    }
    let (counts, starts) = crate::agree::counts_and_starts(comm, n);
    let g0 = g0 as usize;
    let send: Vec<Vec<u8>> = (0..size)
        .map(|r| {
            let lo = starts[r].max(g0);
            let hi = (starts[r] + counts[r]).min(g0 + bucket_pos.len());
            if lo >= hi {
                return Vec::new();
            }
            let (a, b) = (lo - g0, hi - g0);
            let mut msg = bucket[a * item..b * item].to_vec();
            msg.extend_from_slice(&i64_bytes(&bucket_pos[a..b]));
            msg
        })
        .collect();
    let got = exchange(comm, &send);
    let mut out = Vec::with_capacity(n * item);
    let mut out_pos = Vec::with_capacity(n);
    for g in &got {
        let c = g.len() / (item + 8);
        out.extend_from_slice(&g[..c * item]);
        out_pos.extend(i64s(&g[c * item..]));
    }
    if outcome.is_ok() && out_pos.len() != n {
        outcome = Err("the sorted elements did not arrive".into());
    }
    agree(comm, &outcome, 0, "")?;
    let fail = |e: tessera::Error| DistError::Refused {
        rank: rank as i32,
        message: e.to_string(),
    };
    crate::bytes::store(values, &out).map_err(fail)?;
    if let Some(p) = positions {
        crate::bytes::store(p, &i64_bytes(&out_pos)).map_err(fail)?;
    }
    Ok(())
}

/// Number the block-distributed rows of `keys` (this rank's rows of an
/// `[n; w]` array of u64 or i64 words) by first appearance over the whole
/// array, as `tessera::unique` numbers them on one process: `ids` (this
/// rank's rows, i64) gets each row's key's number; `first` and `counts`
/// (i64, `[m]`, the same on every rank) key g's first row in the whole
/// array and its number of rows (entries from k on: the row count and 0).
/// Returns k, the number of keys, on every rank.
///
/// Each rank numbers its own rows; the ranks' keys, in their first
/// appearance order, are gathered in rank order on every rank (as many as
/// all ranks' distinct keys together) and numbered there by first
/// appearance, which is the whole array's.
///
/// # Errors
/// On every rank alike, before any destination is written:
/// [`DistError::Refused`] with the lowest refusing rank's error (what
/// `tessera::unique` refuses, destinations of another length);
/// [`DistError::Mismatch`] where the ranks' dtypes, key widths or `m`
/// differ.
pub fn unique<C: Communicator>(
    comm: &C,
    keys: &ArrayView<'_>,
    ids: &mut ArrayViewMut<'_>,
    first: &mut ArrayViewMut<'_>,
    counts: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<usize> {
    let rank = comm.rank();
    let n = keys.shape().first().copied().unwrap_or(0);
    let w = keys.shape().get(1).copied().unwrap_or(0);
    let m = first.shape().first().copied().unwrap_or(0);
    let (before, total) = row_offsets(comm, n as u64);
    let err = |e: tessera::Error| e.to_string();
    let mut local_ids = vec![0i64; n];
    let mut local_first = vec![0i64; n];
    let mut local_counts = vec![0i64; n];
    let mut k_local = 0usize;
    let local: Local<()> = (|| {
        if first.shape() != counts.shape() || first.shape().len() != 1 {
            return Err(format!(
                "first and counts: shapes {:?} and {:?}; one rank-1 shape",
                first.shape(),
                counts.shape()
            ));
        }
        for d in [&*ids, &*first, &*counts] {
            if d.dtype() != DType::I64 {
                return Err(format!("a destination of {}; i64 expected", d.dtype()));
            }
            tessera::check_destination(d).map_err(err)?;
        }
        if ids.shape() != [n] {
            return Err(format!("ids: shape {:?}, expected [{n}]", ids.shape()));
        }
        let mut i = ArrayViewMut::from_slice(&mut local_ids, &[n]).map_err(err)?;
        let mut f = ArrayViewMut::from_slice(&mut local_first, &[n]).map_err(err)?;
        let mut c = ArrayViewMut::from_slice(&mut local_counts, &[n]).map_err(err)?;
        k_local = tessera::unique(keys, &mut i, &mut f, &mut c, exec).map_err(err)?;
        Ok(())
    })();
    let sig = signature(&[
        keys.dtype().name().as_bytes(),
        &w.to_le_bytes(),
        &m.to_le_bytes(),
    ]);
    agree(
        comm,
        &local,
        sig,
        "the key dtype, the key width or the length of first and counts",
    )?;
    // This rank's keys in first-appearance order, with their first rows
    // (global) and counts.
    let word = |r: usize, j: usize| -> u64 {
        let off = keys.layout().offset as isize
            + r as isize * keys.strides()[0]
            + j as isize * keys.strides()[1];
        let b = &keys.data()[off as usize * 8..off as usize * 8 + 8];
        u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))
    };
    let mut msg = Vec::with_capacity(k_local * (w + 2) * 8);
    for g in 0..k_local {
        let row = local_first[g] as usize;
        for j in 0..w {
            msg.extend_from_slice(&word(row, j).to_le_bytes());
        }
        msg.extend_from_slice(&((before as usize + row) as i64).to_le_bytes());
        msg.extend_from_slice(&local_counts[g].to_le_bytes());
    }
    let all = all_gather_bytes(comm, &msg);
    let rec = (w + 2) * 8;
    let gathered: Vec<u64> = all
        .iter()
        .flat_map(|b| b.chunks_exact(rec))
        .flat_map(|r| {
            r[..w * 8]
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        })
        .collect();
    let kk = all.iter().map(|b| b.len() / rec).sum::<usize>();
    let mut gid = vec![0i64; kk];
    let mut gfirst = vec![0i64; kk];
    let mut gcounts = vec![0i64; kk];
    let numbered = (|| -> tessera::Result<usize> {
        let kv = ArrayView::from_slice(&gathered, &[kk, w])?;
        let mut i = ArrayViewMut::from_slice(&mut gid, &[kk])?;
        let mut f = ArrayViewMut::from_slice(&mut gfirst, &[kk])?;
        let mut c = ArrayViewMut::from_slice(&mut gcounts, &[kk])?;
        tessera::unique(&kv, &mut i, &mut f, &mut c, exec)
    })();
    let k = numbered.as_ref().copied().unwrap_or(0);
    let outcome: Local<()> = numbered.map(|_| ()).map_err(err);
    agree(comm, &outcome, 0, "")?;
    // Key g's first row: that of its first entry (the lowest rank holding
    // it); its count: the sum over its entries.
    let entries: Vec<(i64, i64)> = all
        .iter()
        .flat_map(|b| b.chunks_exact(rec))
        .map(|r| {
            let f = i64::from_le_bytes(r[w * 8..w * 8 + 8].try_into().unwrap_or([0; 8]));
            let c = i64::from_le_bytes(r[w * 8 + 8..].try_into().unwrap_or([0; 8]));
            (f, c)
        })
        .collect();
    let mut key_first = vec![total as i64; m];
    let mut key_count = vec![0i64; m];
    for g in 0..k.min(m) {
        key_first[g] = entries[gfirst[g] as usize].0;
    }
    for (&g, &(_, c)) in gid.iter().zip(&entries) {
        if (g as usize) < m {
            key_count[g as usize] += c;
        }
    }
    // This rank's entries start after the lower ranks'.
    let offset: usize = all[..rank as usize].iter().map(|b| b.len() / rec).sum();
    let my_ids: Vec<i64> = local_ids
        .iter()
        .map(|&l| gid[offset + l as usize])
        .collect();
    let fail = |e: tessera::Error| DistError::Refused {
        rank,
        message: e.to_string(),
    };
    let put =
        |v: &[i64], d: &mut ArrayViewMut<'_>| crate::bytes::store(d, &i64_bytes(v)).map_err(fail);
    put(&my_ids, ids)?;
    put(&key_first, first)?;
    put(&key_count, counts)?;
    Ok(k)
}
