//! tessera over MPI: calls on block-distributed arrays that give, at any
//! number of processes, exactly the bits of the single-process call.
//!
//! An array is **block-distributed** along its leading axis: rank r of the
//! communicator holds rows `R_r .. R_{r+1}` (any counts, empty allowed) as
//! an ordinary [`tessera::ArrayView`], every rank the same trailing shape
//! and dtype. tessera's orders are functions of the element numbering
//! alone (ARCHITECTURE.md §5.3), so a distributed call moves only partial
//! *states* ([`tessera::reduce::Partial`]) between ranks, merged in rank
//! order by a binomial tree, never `MPI_Allreduce` of floats (whose order
//! is the implementation's).
//!
//! Every call is **collective** and refuses collectively: what one rank
//! refuses (its operand, its destination, an allocation) or a disagreement
//! between ranks (dtypes, trailing shapes, reductions) gives every rank the
//! same [`DistError`] before any destination is written, and a failure in
//! the middle of a call is carried through the same messages the call
//! sends anyway, so no rank waits for one that gave up.
//!
//! * [`reduce`], [`reduce_many`]: any reduction of `tessera::reduce()`
//!   but Sum2, along any axes; along the distributed axis the result is on
//!   every rank.
//! * [`contract_rows`]: a contraction whose row operand is distributed by
//!   rows: each rank's rows of the result, the single call's bits.
//!
//! The ranks may run different tiers (`TESSERA_TIER` per process) and
//! thread counts: the bits are the same.

mod agree;
mod bytes;
mod contract;
mod error;
mod fft;
mod reduce;
mod scan;
mod sort;
mod tree;

pub use contract::{contract_cols, contract_depth, contract_rows};
pub use error::DistError;
pub use fft::{fft_c2c, fft_c2r, fft_r2c};
pub use reduce::{dot, reduce, reduce_many, reduce_terms, Form};
pub use scan::scan;
pub use sort::{sort, unique, Order};

/// Fault injection for the tests of collective failure: the next call on
/// this process fails at `point` (`"state"`: computing its partial state;
/// `"merge"`: merging a received one) as an allocation would.
#[doc(hidden)]
pub mod fault {
    use std::sync::Mutex;

    static AT: Mutex<Option<&'static str>> = Mutex::new(None);

    /// Fail once at `point` (None: never).
    pub fn inject(point: Option<&'static str>) {
        *AT.lock().unwrap_or_else(|e| e.into_inner()) = point;
    }

    /// Whether this point is to fail now (the fault is then spent).
    pub(crate) fn hit(point: &str) -> bool {
        let mut at = AT.lock().unwrap_or_else(|e| e.into_inner());
        if *at == Some(point) {
            *at = None;
            return true;
        }
        false
    }
}
