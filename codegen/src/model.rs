//! The spec as written: serde structs that mirror the TOML files and refuse any
//! unknown key. `validate` turns them into the typed [`crate::Spec`]. Field
//! meanings are documented where they are written: the header of each spec file.

#![allow(missing_docs)]

use serde::Deserialize;

/// `spec/dtypes.toml`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DTypesFile {
    /// `[[dtype]]` tables.
    pub dtype: Vec<RawDType>,
}

/// One `[[dtype]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDType {
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub class: String,
    pub bits: u32,
    pub carrier: String,
    pub accumulator: String,
    pub numpy: Option<String>,
    pub values_per_byte: Option<u32>,
    pub component: Option<String>,
    pub doc: String,
    pub float: Option<RawFloat>,
}

/// `[dtype.float]`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFloat {
    pub exponent_bits: u32,
    pub mantissa_bits: u32,
    pub bias: i32,
    pub signed: bool,
    pub subnormals: bool,
    pub infinities: bool,
    pub nan: String,
    pub negative_zero: bool,
    pub max_finite: f64,
    pub overflow: RawOverflow,
    pub rounding: Option<String>,
    pub nan_to: Option<String>,
    pub negative: Option<String>,
}

/// `overflow = { default = ..., saturating = ... }`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOverflow {
    pub default: String,
    pub saturating: String,
}

/// `spec/kinds.toml`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindsFile {
    /// `[[kind]]` tables.
    pub kind: Vec<RawKind>,
}

/// One `[[kind]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKind {
    pub name: String,
    /// The kind whose kernels this one runs (its every other key but
    /// `accuracy` and `doc` taken from there, so written nowhere here).
    #[serde(default)]
    pub alias: Option<String>,
    #[serde(default)]
    pub arity: Option<usize>,
    #[serde(default)]
    pub accepts: Option<Vec<String>>,
    #[serde(default)]
    pub operands: Option<String>,
    #[serde(default)]
    pub result: Option<String>,
    pub accuracy: String,
    #[serde(default)]
    pub algorithm: Option<String>,
    #[serde(default)]
    pub raw_floats: Option<bool>,
    #[serde(default)]
    pub specials: Option<Vec<Vec<String>>>,
    pub doc: String,
}

/// `spec/loops.toml`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopsFile {
    /// `[[variant]]` tables.
    pub variant: Vec<RawVariant>,
}

/// One `[[variant]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    pub name: String,
    pub shape: String,
    pub doc: String,
}

/// `spec/tiers.toml`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TiersFile {
    /// `[[tier]]` tables.
    pub tier: Vec<RawTier>,
}

/// One `[[tier]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTier {
    pub name: String,
    pub arch: String,
    pub features: Vec<String>,
    pub doc: String,
    #[serde(default)]
    pub fast_casts: Vec<RawFastCast>,
}

/// One entry of a tier's `fast_casts`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFastCast {
    pub src: String,
    pub dst: String,
    pub function: String,
}

/// `spec/formats.toml`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatsFile {
    /// `[[format]]` tables.
    pub format: Vec<RawFormat>,
}

/// One `[[format]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFormat {
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub element: String,
    pub scale: String,
    pub block: usize,
    pub tensor_scale: Option<String>,
    pub fraction_bits: Option<u32>,
    pub scale_rule: String,
    pub doc: String,
}
