//! What the generator's tests share: the workspace's paths and spec, and a
//! name conversion written independently of the generator.

#![allow(dead_code)]

use std::path::PathBuf;
use tessera_codegen::SpecSources;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The real spec files.
pub fn real() -> SpecSources {
    SpecSources::read(&root().join("spec")).expect("the real spec files are readable")
}

/// `snake_case` to `CamelCase`, written here independently of the generator.
pub fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in name.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.push(c.to_ascii_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}
