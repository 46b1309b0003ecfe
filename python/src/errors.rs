//! tessera's errors as Python exceptions, and the boundary that no Rust
//! panic crosses.
//!
//! The exception classes live in the pure-Python module `tessera.errors`
//! (so that they can derive from both `TesseraError` and the builtin they
//! stand for: `ValueError`, `TypeError`, `MemoryError`); this module picks
//! the class by the error's variant and raises it with the library's message.

use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tessera::Error;

/// The class of `tessera.errors` for an error, and the builtin it derives from.
fn class_of(e: &Error) -> (&'static str, Builtin) {
    match e {
        Error::UnknownDType(_)
        | Error::Unsupported { .. }
        | Error::DTypeMismatch { .. }
        | Error::DTypeUnsupported { .. } => ("DTypeError", Builtin::Type),
        Error::Shape { .. }
        | Error::Layout { .. }
        | Error::OutOfBounds { .. }
        | Error::Overflow { .. }
        | Error::Axis { .. }
        | Error::Rank { .. }
        | Error::Length { .. } => ("ShapeError", Builtin::Value),
        Error::UnknownKind(_)
        | Error::UnknownTier(_)
        | Error::Arity { .. }
        | Error::Attribute { .. }
        | Error::Program { .. }
        | Error::Parse { .. }
        | Error::Encoding { .. }
        | Error::Partial { .. } => ("ArgumentError", Builtin::Value),
        Error::Alloc { .. } => ("AllocationError", Builtin::Memory),
        Error::TierUnavailable(_) => ("TierError", Builtin::Runtime),
        _ => ("TesseraError", Builtin::Runtime),
    }
}

#[derive(Clone, Copy)]
enum Builtin {
    Value,
    Type,
    Memory,
    Runtime,
}

/// An exception of class `class` of `tessera.errors` with `message`, or the
/// builtin where that module cannot be imported.
fn raise(class: &str, builtin: Builtin, message: String) -> PyErr {
    Python::with_gil(|py| {
        let made = py
            .import("tessera.errors")
            .and_then(|m| m.getattr(class))
            .and_then(|c| c.call1((message.clone(),)));
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(_) => match builtin {
                Builtin::Value => PyValueError::new_err(message),
                Builtin::Type => PyTypeError::new_err(message),
                Builtin::Memory => PyMemoryError::new_err(message),
                Builtin::Runtime => PyRuntimeError::new_err(message),
            },
        }
    })
}

/// tessera's error as the Python exception of its class.
pub fn to_py(e: Error) -> PyErr {
    let (class, builtin) = class_of(&e);
    raise(class, builtin, e.to_string())
}

/// A `tessera.errors.ShapeError` (a `ValueError`) raised by the boundary itself.
pub fn value_error(message: String) -> PyErr {
    raise("ShapeError", Builtin::Value, message)
}

/// A `tessera.errors.DTypeError` (a `TypeError`) raised by the boundary itself.
pub fn dtype_error(message: String) -> PyErr {
    raise("DTypeError", Builtin::Type, message)
}

/// A `tessera.errors.ArgumentError` (a `ValueError`) for a bad keyword.
pub fn argument_error(message: String) -> PyErr {
    raise("ArgumentError", Builtin::Value, message)
}

/// Run `f` without the GIL and with panics caught: a panic (a bug) becomes
/// `tessera.errors.InternalError` instead of unwinding into Python; a
/// KeyboardInterrupt that arrived while `f` ran is raised once the GIL is
/// back.
pub fn detached<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> tessera::Result<T> + Send,
) -> PyResult<T> {
    let outcome = py.allow_threads(|| catch_unwind(AssertUnwindSafe(f)));
    py.check_signals()?;
    settle(outcome)
}

/// The Python result of a call's outcome: its value, its refusal as the
/// refusal's class, or its panic as `InternalError`.
fn settle<T>(outcome: std::thread::Result<tessera::Result<T>>) -> PyResult<T> {
    match outcome {
        Ok(r) => r.map_err(to_py),
        Err(payload) => Err(internal(payload)),
    }
}

/// [`detached`] with the GIL kept (for calls too short to gain from
/// releasing it): panics caught alike.
pub fn held<T>(f: impl FnOnce() -> tessera::Result<T>) -> PyResult<T> {
    settle(catch_unwind(AssertUnwindSafe(f)))
}

/// The exception for a caught panic's payload.
pub fn internal(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    raise(
        "InternalError",
        Builtin::Runtime,
        format!("internal error in tessera (please report it): {what}"),
    )
}

/// Run `f` with the GIL held and panics caught (for the calls that build
/// plans or answer queries, which take no array).
pub fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(internal(p)))
}
