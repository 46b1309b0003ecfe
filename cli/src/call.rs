//! The call file: one kernel call as JSON (ARCHITECTURE.md §9).
//!
//! ```json
//! {"kernel": "add",
//!  "attrs": {},
//!  "operands": {"x0": {"npy": "a.npy", "dtype": "f32"},
//!               "x1": {"npy": "b.npy", "dtype": "f32"}},
//!  "results": {"y": {"npy": "y.npy", "dtype": "f32", "shape": [4]}},
//!  "tier": "avx2", "threads": 2}
//! ```
//!
//! Parsing is strict: unknown keys and repeated keys are refused. Paths are
//! relative to the call file's directory. Checking what a kernel makes of the
//! operands is the business of the kernel's command module, not of this one.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// A parsed call file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Call {
    /// The kernel to call: an elementwise kind (`add`, `fma`, …) for now;
    /// later `map`, `cast`, `reduce`, ….
    pub kernel: String,
    /// The kernel's attributes.
    #[serde(default)]
    pub attrs: UniqueMap<serde_json::Value>,
    /// The inputs by name (`x0`, `x1`, … for elementwise kinds).
    pub operands: UniqueMap<Operand>,
    /// The outputs by name (`y` for elementwise kinds).
    pub results: UniqueMap<Output>,
    /// The tier to run on (default: the process's active tier).
    #[serde(default)]
    pub tier: Option<String>,
    /// Threads (absent or 0: rayon's pool; 1: the calling thread).
    #[serde(default)]
    pub threads: Option<usize>,
}

/// An input: a `.npy` file and the dtype its contents are read as.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Operand {
    /// The file, relative to the call file's directory.
    pub npy: String,
    /// The dtype (default: the file's own numpy type).
    #[serde(default)]
    pub dtype: Option<String>,
    /// For sub-byte dtypes: the file's last axis holds packed bytes rather than
    /// one code per byte.
    #[serde(default)]
    pub packed: bool,
    /// A padded load of the file: one entry per axis, `[before, after]` or
    /// `[before, after, size, stride, dilation]` (a window; see
    /// `tessera::assembly::Pad`). The kernel reads the load, whose shape has
    /// a tap axis per window at its end.
    #[serde(default)]
    pub pad: Option<Vec<Vec<u64>>>,
    /// The value of the pad's fill elements (default: the element of zero
    /// bits), converted into the operand's dtype as a cast does.
    #[serde(default)]
    pub fill: Option<serde_json::Number>,
}

/// An output: the `.npy` file to write, its dtype and shape.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// The file, relative to the call file's directory.
    pub npy: String,
    /// The dtype (default: the kernel's result dtype).
    #[serde(default)]
    pub dtype: Option<String>,
    /// The shape (default: inferred from the operands).
    #[serde(default)]
    pub shape: Option<Vec<usize>>,
    /// For sub-byte dtypes: write packed bytes rather than one code per byte.
    #[serde(default)]
    pub packed: bool,
}

/// A JSON object read into a sorted map, refusing a key that appears twice.
#[derive(Clone, Debug, PartialEq)]
pub struct UniqueMap<V>(pub BTreeMap<String, V>);

impl<V> Default for UniqueMap<V> {
    fn default() -> Self {
        UniqueMap(BTreeMap::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for UniqueMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V2<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for V2<V> {
            type Value = UniqueMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    if out.contains_key(&key) {
                        return Err(de::Error::custom(format_args!(
                            "key `{}` appears twice",
                            crate::commands::truncate(&key, 40)
                        )));
                    }
                    let value = map.next_value()?;
                    out.insert(key, value);
                }
                Ok(UniqueMap(out))
            }
        }
        d.deserialize_map(V2(PhantomData))
    }
}

impl Call {
    /// Parse a call file's text.
    pub fn parse(text: &str) -> Result<Call, String> {
        serde_json::from_str(text).map_err(|e| {
            format!(
                "bad call file: {}",
                crate::commands::cut_quoted(&e.to_string(), 80)
            )
        })
    }

    /// Read and parse a call file: a regular file (not a FIFO, a device or a
    /// directory) of at most [`crate::files::MAX_CALL_BYTES`] bytes.
    pub fn read(path: &Path) -> Result<Call, String> {
        let text = crate::files::read_call_file(path)
            .map_err(|e| format!("the call file {}: {e}", crate::files::shown(path)))?;
        Call::parse(&text)
    }
}

/// A path of a call file resolved against the call file's directory.
pub fn resolve(call_file: &Path, relative: &str) -> PathBuf {
    let dir = call_file.parent().unwrap_or(Path::new(""));
    dir.join(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        let c = Call::parse(
            r#"{"kernel": "add", "attrs": {},
                "operands": {"x0": {"npy": "a.npy", "dtype": "f32"}, "x1": {"npy": "b.npy"}},
                "results": {"y": {"npy": "y.npy", "shape": [2, 3]}}, "threads": 1}"#,
        )
        .unwrap();
        assert_eq!(c.kernel, "add");
        assert_eq!(c.operands.0.len(), 2);
        assert_eq!(c.results.0["y"].shape, Some(vec![2, 3]));
        assert_eq!(c.threads, Some(1));
    }

    #[test]
    fn strict() {
        for bad in [
            r#"{"kernel": "add", "operands": {}, "results": {}, "extra": 1}"#,
            r#"{"kernel": "add", "operands": {"x0": {"npy": "a", "dtyp": "f32"}}, "results": {}}"#,
            r#"{"kernel": "add", "operands": {"x0": {"npy": "a"}, "x0": {"npy": "b"}}, "results": {}}"#,
            r#"{"kernel": "add", "kernel": "sub", "operands": {}, "results": {}}"#,
            r#"{"kernel": "add", "operands": {}, "results": {"y": {"npy": "y", "shape": [-1]}}}"#,
            r#"{"operands": {}, "results": {}}"#,
            r#"[1, 2]"#,
            "",
        ] {
            assert!(Call::parse(bad).is_err(), "{bad}");
        }
    }
}
