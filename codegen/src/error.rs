//! Spec errors: every one names the file, the table and the key.

use std::fmt;

/// A spec that cannot be parsed or does not make sense.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    /// The file, as `spec/NAME.toml`, or `runtime/src/ops.rs` for its list of
    /// operations.
    pub file: String,
    /// The table, e.g. `[[dtype]] "e4m3fn"` (`pub enum Operation` in
    /// `runtime/src/ops.rs`), or empty for a parse error of a TOML file.
    pub table: String,
    /// The key, or empty.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl SpecError {
    pub(crate) fn new(
        file: &str,
        table: impl Into<String>,
        key: &str,
        message: impl Into<String>,
    ) -> Self {
        SpecError {
            file: file.to_string(),
            table: table.into(),
            key: key.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if !self.table.is_empty() {
            write!(f, ": {}", self.table)?;
        }
        if !self.key.is_empty() {
            write!(f, ", key `{}`", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for SpecError {}
