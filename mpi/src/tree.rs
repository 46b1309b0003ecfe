//! Partial states merged over the ranks in rank order by a binomial tree:
//! at step k (k = 1, 2, 4, …) a rank r with r mod 2k = 0 receives the state
//! of ranks r + k .. r + 2k from rank r + k and joins it after its own, so
//! rank 0 ends with the state of every rank's range, in ⌈log₂ P⌉ steps and
//! P − 1 messages. A merge of adjacent ranges is exact in any grouping
//! (`tessera::reduce::partial`), so the tree's shape changes no bit. A
//! rank's failure travels up the tree in place of its state.

use crate::agree::{decode, encode};
use mpi::traits::*;

/// A state or the failure that replaced it (the lowest failing rank).
pub(crate) type Outcome = std::result::Result<Vec<u8>, (i32, String)>;

/// The outcome of every rank's `mine` merged in rank order by `merge`
/// (left state, right state), on rank 0 (None on the others).
pub(crate) fn merge_to_root<C: Communicator>(
    comm: &C,
    mine: Outcome,
    merge: impl Fn(&[u8], &[u8]) -> std::result::Result<Vec<u8>, String>,
) -> Option<Outcome> {
    let (rank, size) = (comm.rank(), comm.size());
    let mut acc = mine;
    let mut step = 1;
    while step < size {
        if rank % (2 * step) == 0 {
            if rank + step < size {
                let (msg, _) = comm.process_at_rank(rank + step).receive_vec::<u8>();
                let right = decode(&msg);
                acc = match (acc, right) {
                    (Err(e), _) => Err(e),
                    (Ok(_), Err(e)) => Err(e),
                    (Ok(a), Ok(b)) => {
                        let merged = if crate::fault::hit("merge") {
                            Err("cannot allocate the merged state (injected)".to_string())
                        } else {
                            merge(&a, &b)
                        };
                        merged.map_err(|m| (rank, m))
                    }
                };
            }
        } else {
            comm.process_at_rank(rank - step).send(&encode(&acc)[..]);
            return None;
        }
        step *= 2;
    }
    Some(acc)
}
