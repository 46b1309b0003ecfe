//! The error every rank of a distributed call returns alike.

use std::fmt;

/// Why a distributed call was refused. Every rank of the communicator gets
/// the same value, and no destination was written on any rank.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DistError {
    /// A rank refused the call: its input, its destination, or an
    /// allocation (its tessera error as text; `rank` the lowest rank that
    /// refused).
    Refused {
        /// The lowest refusing rank.
        rank: i32,
        /// Its error.
        message: String,
    },
    /// The ranks' calls do not agree: a dtype, a trailing shape, the
    /// reduction or its axes, the destination's shape or dtype.
    Mismatch {
        /// What differs.
        what: String,
    },
}

impl fmt::Display for DistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DistError::Refused { rank, message } => write!(f, "rank {rank}: {message}"),
            DistError::Mismatch { what } => write!(f, "the ranks' calls differ: {what}"),
        }
    }
}

impl std::error::Error for DistError {}

/// A distributed call's result.
pub type Result<T> = std::result::Result<T, DistError>;
