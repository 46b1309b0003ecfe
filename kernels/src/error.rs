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
    /// An axis argument out of range, named twice, or whose extent does not
    /// fit the call.
    Axis {
        /// The operand whose axis it is.
        operand: String,
        /// The axis.
        axis: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// An operand whose rank or shape the call does not take (a shape that
    /// does not broadcast is [`Error::Shape`]).
    Rank {
        /// Which operand.
        operand: String,
        /// Its shape.
        shape: Vec<usize>,
        /// What the call takes.
        expected: String,
    },
    /// An attribute or argument value the call does not take.
    Attribute {
        /// The attribute (with the call it belongs to).
        name: String,
        /// What is wrong with its value.
        reason: String,
    },
    /// A dtype the operation is not defined for (a reduction, an
    /// accumulator, a fill, a format's operand).
    DTypeUnsupported {
        /// Which operand (or the accumulator).
        operand: String,
        /// Its dtype.
        dtype: DType,
        /// What the operation takes instead.
        reason: String,
    },
    /// A buffer or slice of the wrong length.
    Length {
        /// Which operand.
        operand: String,
        /// Its length.
        len: usize,
        /// The length needed.
        expected: usize,
        /// What the lengths count (`bytes`, `values`, `ids`).
        unit: &'static str,
    },
    /// Scratch memory the call needs and cannot allocate (a refusal, not an
    /// abort).
    Alloc {
        /// What the memory is for.
        what: String,
        /// Elements asked for.
        elements: usize,
    },
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
    /// Input bytes that are not valid text of their format (UTF-8, hex,
    /// base64, decimal integers): the first byte in error.
    Encoding {
        /// The format (`utf-8`, `hex`, …).
        format: &'static str,
        /// Byte offset of the first byte that cannot be read (the input's
        /// length where it ends too early); for a format of values (`bit-pack`),
        /// the position of the first value that cannot be encoded.
        offset: usize,
        /// What is wrong there.
        reason: String,
    },
    /// A partial state of a reduction ([`crate::reduce::partial`]) that does
    /// not fit the call: bytes that do not decode (tag, version, lengths),
    /// states of different reductions, ranges that do not follow each other
    /// or do not cover every term.
    Partial {
        /// What is wrong.
        reason: String,
    },
    /// A dispatch family whose measured error misses its stated bound
    /// ([`crate::probe`]): this process's build or CPU does not compute it
    /// as the contract says.
    Probe {
        /// The family and tier.
        family: String,
        /// The measured error (as printed: the report holds the numbers).
        measured: String,
        /// The bound it had to meet.
        bound: String,
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
            Error::Axis {
                operand,
                axis,
                reason,
            } => write!(f, "{operand}: axis {axis} {reason}"),
            Error::Rank {
                operand,
                shape,
                expected,
            } => write!(f, "{operand}: shape {shape:?}; {expected}"),
            Error::Attribute { name, reason } => write!(f, "{name}: {reason}"),
            Error::Encoding {
                format,
                offset,
                reason,
            } => write!(f, "{format} input, at byte {offset}: {reason}"),
            Error::Partial { reason } => write!(f, "partial state: {reason}"),
            Error::Probe {
                family,
                measured,
                bound,
            } => write!(
                f,
                "probe {family}: measured error {measured} is above its bound {bound}: refused"
            ),
            Error::DTypeUnsupported {
                operand,
                dtype,
                reason,
            } => write!(f, "{operand}: dtype `{dtype}` is not taken: {reason}"),
            Error::Length {
                operand,
                len,
                expected,
                unit,
            } => write!(f, "{operand}: {len} {unit} given, {expected} needed"),
            Error::Alloc { what, elements } => {
                write!(f, "cannot allocate {what} ({elements} elements)")
            }
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
