//! tessera-codegen: reads `spec/*.toml`, validates it, and emits the generated
//! layer of tessera (the `generated/` directory of the workspace).
//!
//! The pipeline is strict parse (every table `deny_unknown_fields`, and the
//! runtime's list of operations, `pub enum Operation` of
//! `runtime/src/ops.rs`) → semantic validation ([`SpecError`] names the file,
//! table and key; the kinds and the runtime's operations must name each other
//! one to one) → emitters that
//! write laid-out Rust text (no parser, formatter or template engine: this
//! crate is on the critical path of every clean build). [`write_if_changed`]
//! touches only files whose content differs.

#![deny(missing_docs)]

mod emit;
mod error;
pub mod model;
pub mod spec;
mod validate;

pub use emit::{generate, GeneratedFile};
pub use error::SpecError;
pub use spec::Spec;
pub use validate::{parse_operations, parse_special};

use std::path::Path;

/// Where the runtime's operations are declared, relative to the workspace root
/// (the directory that holds `spec/`).
pub const OPS_PATH: &str = "runtime/src/ops.rs";

/// The text of the five spec files, and of the runtime's operations.
#[derive(Clone, Debug, Default)]
pub struct SpecSources {
    /// `dtypes.toml`
    pub dtypes: String,
    /// `kinds.toml`
    pub kinds: String,
    /// `loops.toml`
    pub loops: String,
    /// `tiers.toml`
    pub tiers: String,
    /// `formats.toml`
    pub formats: String,
    /// `runtime/src/ops.rs`: the runtime's operations, of which the generator
    /// reads the `pub enum Operation { ... }` block (see [`parse_operations`]).
    pub ops: String,
}

impl SpecSources {
    /// Read the five files from a spec directory, and `runtime/src/ops.rs`
    /// from the workspace root that holds it (`dir/..`).
    pub fn read(dir: &Path) -> Result<SpecSources, SpecError> {
        let read = |name: &str| {
            std::fs::read_to_string(dir.join(name)).map_err(|e| {
                SpecError::new(&format!("spec/{name}"), "", "", format!("cannot read: {e}"))
            })
        };
        Ok(SpecSources {
            dtypes: read("dtypes.toml")?,
            kinds: read("kinds.toml")?,
            loops: read("loops.toml")?,
            tiers: read("tiers.toml")?,
            formats: read("formats.toml")?,
            ops: std::fs::read_to_string(dir.join("..").join(OPS_PATH))
                .map_err(|e| SpecError::new(OPS_PATH, "", "", format!("cannot read: {e}")))?,
        })
    }
}

fn parse_file<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> Result<T, SpecError> {
    toml::from_str(text).map_err(|e| {
        let msg = e.message().to_string();
        let start = e.span().map(|s| s.start.min(text.len()));
        let at = start
            .map(|s| format!(" (line {})", text[..s].matches('\n').count() + 1))
            .unwrap_or_default();
        let (table, key) = start.map(|s| locate(text, s, &msg)).unwrap_or_default();
        SpecError::new(&format!("spec/{name}"), table, &key, format!("{msg}{at}"))
    })
}

/// The table (`[[dtype]] "name"`) and key a parse error at byte `pos` sits in:
/// the nearest table header above it with that table's `name`, and the key of the
/// line (or the field a serde message names).
fn locate(text: &str, pos: usize, msg: &str) -> (String, String) {
    let before = &text[..pos];
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = msg
        .split('`')
        .nth(1)
        .filter(|_| msg.contains("unknown field") || msg.contains("missing field"))
        .map(str::to_string)
        .or_else(|| {
            line.split_once('=')
                .map(|(k, _)| k.trim().to_string())
                .filter(|k| !k.is_empty() && !k.starts_with('['))
        })
        .unwrap_or_default();
    let header = before
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("[["))
        .map(|l| l.trim().to_string());
    let table = match header {
        None => String::new(),
        Some(h) => {
            let from = text[..pos].rfind(h.as_str()).unwrap_or(0);
            let name = text[from..]
                .lines()
                .skip(1)
                .take_while(|l| !l.trim_start().starts_with("[["))
                .find_map(|l| {
                    let (k, v) = l.split_once('=')?;
                    (k.trim() == "name").then(|| v.trim().to_string())
                });
            match name {
                Some(n) => format!("{h} {n}"),
                None => h,
            }
        }
    };
    (table, key)
}

/// Parse and validate spec sources.
pub fn parse_spec(src: &SpecSources) -> Result<Spec, SpecError> {
    validate::validate(
        parse_file("dtypes.toml", &src.dtypes)?,
        parse_file("kinds.toml", &src.kinds)?,
        parse_file("loops.toml", &src.loops)?,
        parse_file("tiers.toml", &src.tiers)?,
        parse_file("formats.toml", &src.formats)?,
        &parse_operations(&src.ops)?,
    )
}

/// Read, parse and validate the spec directory.
pub fn load_spec(dir: &Path) -> Result<Spec, SpecError> {
    parse_spec(&SpecSources::read(dir)?)
}

/// Write each file under `out_dir` only when its content differs from what is
/// there, and remove generated files no longer produced. Returns the paths written.
pub fn write_if_changed(out_dir: &Path, files: &[GeneratedFile]) -> std::io::Result<Vec<String>> {
    let mut written = Vec::new();
    std::fs::create_dir_all(out_dir)?;
    for f in files {
        let path = out_dir.join(&f.path);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(f.text.as_str()) {
            std::fs::write(&path, &f.text)?;
            written.push(f.path.clone());
        }
    }
    for entry in std::fs::read_dir(out_dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        if name.ends_with(".rs") && !files.iter().any(|f| f.path == name) {
            std::fs::remove_file(entry.path())?;
            written.push(name);
        }
    }
    Ok(written)
}
