//! The typed error every public call returns before any write.

use crate::{DType, Kind, Tier};
use std::fmt;

/// Why a call was refused. Every refusal happens before anything is written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A dtype name that is not in the catalogue.
    UnknownDType(String),
    /// A kind name that is not in the catalogue.
    UnknownKind(String),
    /// A tier name that is not in the catalogue.
    UnknownTier(String),
    /// The tier exists but this CPU cannot run it.
    TierUnavailable(Tier),
    /// The spec declares no kernel of this kind for this dtype.
    Unsupported {
        /// The kind.
        kind: Kind,
        /// The dtype.
        dtype: DType,
    },
    /// Wrong number of inputs.
    Arity {
        /// The kind.
        kind: Kind,
        /// Inputs it takes.
        expected: usize,
        /// Inputs given.
        got: usize,
    },
    /// An operand of the wrong dtype.
    DTypeMismatch {
        /// Which operand.
        operand: String,
        /// The dtype it must have.
        expected: DType,
        /// The dtype it has.
        got: DType,
    },
    /// An operand whose shape does not broadcast to the destination's.
    Shape {
        /// Which operand.
        operand: String,
        /// Its shape.
        shape: Vec<usize>,
        /// The shape it must broadcast to.
        target: Vec<usize>,
    },
    /// Shape, strides and offset that do not describe a valid view.
    Layout {
        /// Which operand.
        operand: String,
        /// What is wrong.
        reason: String,
    },
    /// A view that reaches past its bytes.
    OutOfBounds {
        /// Which operand.
        operand: String,
        /// Bytes the view needs.
        needed: u128,
        /// Bytes given.
        len: usize,
    },
    /// Size or offset arithmetic that overflows.
    Overflow {
        /// Which operand.
        operand: String,
    },
    /// A malformed attribute or argument.
    Invalid(String),
    /// A map program that is not well formed, or does not fit the call.
    Program {
        /// The node: its text (or `program` for the whole program).
        node: String,
        /// What is wrong.
        reason: String,
    },
    /// Map program text that does not lex or parse.
    Parse {
        /// Byte offset of the token in the text.
        offset: usize,
        /// The token (or `end of input`).
        token: String,
        /// What was expected or is wrong.
        reason: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownDType(s) => write!(f, "unknown dtype `{s}`"),
            Error::UnknownKind(s) => write!(f, "unknown kind `{s}`"),
            Error::UnknownTier(s) => write!(f, "unknown tier `{s}`"),
            Error::TierUnavailable(t) => write!(f, "tier `{t}` is not available on this CPU"),
            Error::Unsupported { kind, dtype } => {
                write!(f, "kind `{kind}` is not defined for dtype `{dtype}`")
            }
            Error::Arity {
                kind,
                expected,
                got,
            } => write!(f, "kind `{kind}` takes {expected} inputs, got {got}"),
            Error::DTypeMismatch {
                operand,
                expected,
                got,
            } => write!(f, "{operand}: dtype `{got}`, expected `{expected}`"),
            Error::Shape {
                operand,
                shape,
                target,
            } => write!(
                f,
                "{operand}: shape {shape:?} does not broadcast to {target:?}"
            ),
            Error::Layout { operand, reason } => write!(f, "{operand}: {reason}"),
            Error::OutOfBounds {
                operand,
                needed,
                len,
            } => write!(
                f,
                "{operand}: the view needs {needed} bytes but {len} are given"
            ),
            Error::Overflow { operand } => write!(f, "{operand}: size arithmetic overflows"),
            Error::Invalid(s) => f.write_str(s),
            Error::Program { node, reason } => write!(f, "node `{node}`: {reason}"),
            Error::Parse {
                offset,
                token,
                reason,
            } => write!(f, "at byte {offset}, `{token}`: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

/// The result of a tessera call.
pub type Result<T> = std::result::Result<T, Error>;
