//! Collective outcomes: every rank learns whether any rank refused a step
//! (and the lowest such rank's error), or whether the ranks' calls differ,
//! in the same collective operations whatever happened, so no rank is
//! left waiting.

use crate::error::{DistError, Result};
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;

/// One rank's outcome of a step: its error as text where it failed.
pub(crate) type Local<T> = std::result::Result<T, String>;

/// A step's outcome agreed by every rank: `Err` on every rank where any
/// rank's `local` failed (the lowest such rank's message) or where the
/// ranks' `signature`s differ (`what` says what they cover).
pub(crate) fn agree<C: Communicator>(
    comm: &C,
    local: &Local<()>,
    signature: u64,
    what: &str,
) -> Result<()> {
    let (rank, size) = (comm.rank(), comm.size());
    let failing = if local.is_err() {
        rank as u64
    } else {
        size as u64
    };
    let send = [failing, signature, !signature];
    let mut got = [0u64; 3];
    comm.all_reduce_into(&send[..], &mut got[..], SystemOperation::min());
    if got[0] < size as u64 {
        let root = got[0] as i32;
        let mut msg = match local {
            Err(m) if rank == root => m.clone().into_bytes(),
            _ => Vec::new(),
        };
        broadcast_bytes(comm, root, &mut msg);
        return Err(DistError::Refused {
            rank: root,
            message: String::from_utf8_lossy(&msg).into_owned(),
        });
    }
    if got[1] != !got[2] {
        return Err(DistError::Mismatch { what: what.into() });
    }
    Ok(())
}

/// `bytes` of rank `root` on every rank (their length first).
pub(crate) fn broadcast_bytes<C: Communicator>(comm: &C, root: i32, bytes: &mut Vec<u8>) {
    let p = comm.process_at_rank(root);
    let mut len = bytes.len() as u64;
    p.broadcast_into(&mut len);
    if comm.rank() != root {
        *bytes = vec![0u8; len as usize];
    }
    if len > 0 {
        p.broadcast_into(&mut bytes[..]);
    }
}

/// An outcome as bytes: 0 then the value, or 1, the failing rank and its
/// message.
pub(crate) fn encode(outcome: &std::result::Result<Vec<u8>, (i32, String)>) -> Vec<u8> {
    match outcome {
        Ok(v) => {
            let mut b = Vec::with_capacity(1 + v.len());
            b.push(0);
            b.extend_from_slice(v);
            b
        }
        Err((rank, m)) => {
            let mut b = vec![1];
            b.extend_from_slice(&rank.to_le_bytes());
            b.extend_from_slice(m.as_bytes());
            b
        }
    }
}

/// The outcome [`encode`] wrote.
pub(crate) fn decode(b: &[u8]) -> std::result::Result<Vec<u8>, (i32, String)> {
    match b.split_first() {
        Some((0, v)) => Ok(v.to_vec()),
        Some((_, rest)) if rest.len() >= 4 => {
            let rank = i32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
            Err((rank, String::from_utf8_lossy(&rest[4..]).into_owned()))
        }
        _ => Err((-1, "a message that is no outcome".into())),
    }
}

/// Rank 0's outcome on every rank.
pub(crate) fn share<C: Communicator>(
    comm: &C,
    root_outcome: Option<std::result::Result<Vec<u8>, (i32, String)>>,
) -> Result<Vec<u8>> {
    let mut b = root_outcome.map(|o| encode(&o)).unwrap_or_default();
    broadcast_bytes(comm, 0, &mut b);
    decode(&b).map_err(|(rank, message)| DistError::Refused { rank, message })
}

/// A 64-bit digest of a call's description, for [`agree`].
pub(crate) fn signature(parts: &[&[u8]]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for p in parts {
        for &x in p.iter().chain(&[0xff]) {
            h = (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// All-to-all of byte blocks (`send[j]` to rank j), received in rank order.
pub(crate) fn exchange<C: Communicator>(comm: &C, send: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let size = comm.size() as usize;
    let counts: Vec<i32> = send.iter().map(|b| b.len() as i32).collect();
    let displs = prefix(&counts);
    let flat: Vec<u8> = send.concat();
    let mut rcounts = vec![0i32; size];
    comm.all_to_all_into(&counts[..], &mut rcounts[..]);
    let rdispls = prefix(&rcounts);
    let total: usize = rcounts.iter().map(|&c| c as usize).sum();
    let mut recv = vec![0u8; total];
    {
        let s = Partition::new(&flat[..], counts, &displs[..]);
        let mut r = PartitionMut::new(&mut recv[..], rcounts.clone(), &rdispls[..]);
        comm.all_to_all_varcount_into(&s, &mut r);
    }
    (0..size)
        .map(|j| recv[rdispls[j] as usize..(rdispls[j] + rcounts[j]) as usize].to_vec())
        .collect()
}

/// Every rank's bytes on every rank, in rank order.
pub(crate) fn all_gather_bytes<C: Communicator>(comm: &C, mine: &[u8]) -> Vec<Vec<u8>> {
    let size = comm.size() as usize;
    let len = mine.len() as u64;
    let mut lens = vec![0u64; size];
    comm.all_gather_into(&len, &mut lens[..]);
    let counts: Vec<i32> = lens.iter().map(|&l| l as i32).collect();
    let displs = prefix(&counts);
    let all = lens.iter().sum::<u64>() as usize;
    let mut buf = vec![0u8; all];
    {
        let mut part = PartitionMut::new(&mut buf[..], counts.clone(), &displs[..]);
        comm.all_gather_varcount_into(mine, &mut part);
    }
    (0..size)
        .map(|r| buf[displs[r] as usize..(displs[r] + counts[r]) as usize].to_vec())
        .collect()
}

fn prefix(counts: &[i32]) -> Vec<i32> {
    let mut acc = 0i32;
    counts
        .iter()
        .map(|&c| {
            let d = acc;
            acc += c;
            d
        })
        .collect()
}

/// Every rank's count and the first index of each in rank order (an
/// all-gather of the counts).
pub(crate) fn counts_and_starts<C: Communicator>(comm: &C, n: usize) -> (Vec<usize>, Vec<usize>) {
    let mut counts = vec![0u64; comm.size() as usize];
    comm.all_gather_into(&(n as u64), &mut counts[..]);
    let counts: Vec<usize> = counts.into_iter().map(|c| c as usize).collect();
    let mut acc = 0usize;
    let starts = counts
        .iter()
        .map(|&c| {
            let d = acc;
            acc += c;
            d
        })
        .collect();
    (counts, starts)
}
