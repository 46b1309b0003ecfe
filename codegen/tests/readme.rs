//! The README's worked example of adding a dtype, run as a reader would: its
//! TOML table is read out of README.md, appended to `spec/dtypes.toml` and
//! generated from. A table the generator refuses, or one that yields no
//! kernels for the new dtype, fails here, so the example cannot rot.

mod common;
use common::*;

use tessera_codegen::{generate, parse_spec, SpecSources};

/// The first ```toml block after the heading that starts with `heading`.
fn toml_block(readme: &str, heading: &str) -> String {
    let at = readme
        .find(heading)
        .unwrap_or_else(|| panic!("README.md has no heading {heading:?}"));
    let rest = &readme[at..];
    let start = rest.find("```toml\n").expect("a ```toml block") + "```toml\n".len();
    let len = rest[start..].find("```").expect("the block closes");
    rest[start..start + len].to_string()
}

#[test]
fn the_readme_dtype_example_generates() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let table = toml_block(&readme, "## Adding a dtype");
    let parsed: toml::Table = table.parse().expect("the README's table is TOML");
    let name = parsed["dtype"][0]["name"]
        .as_str()
        .expect("the table names its dtype")
        .to_string();
    let mut src = SpecSources::read(&root().join("spec")).expect("the spec files");
    assert!(
        !src.dtypes.contains(&format!("name = \"{name}\"")),
        "the README's dtype {name} is already in the spec: the example adds nothing"
    );
    src.dtypes = format!("{}\n{table}", src.dtypes.trim_end());
    let spec = parse_spec(&src).unwrap_or_else(|e| panic!("the README's table is refused: {e}"));
    let files = generate(&spec);
    let tiers = &files
        .iter()
        .find(|f| f.path == "tiers.rs")
        .expect("tiers.rs")
        .text;
    let catalog = &files
        .iter()
        .find(|f| f.path == "catalog.rs")
        .expect("catalog.rs")
        .text;
    let ident: String = name[..1].to_ascii_uppercase() + &name[1..];
    assert!(catalog.contains(&format!("{ident},")), "no DType::{ident}");
    for kernel in [
        format!("add_{name}_contig"),
        format!("exp_{name}_strided"),
        format!("cast_f32_{name}_sat_contig"),
    ] {
        assert!(tiers.contains(&kernel), "no kernel {kernel}");
    }
    // The README states the example's largest value; the generator checked
    // it against the parameters, and so does this test, independently.
    let f = &parsed["dtype"][0]["float"];
    let (e, m, bias) = (
        f["exponent_bits"].as_integer().unwrap() as i32,
        f["mantissa_bits"].as_integer().unwrap() as i32,
        f["bias"].as_integer().unwrap() as i32,
    );
    let top = (1 << e) - 1 - bias; // no infinities or NaN: every code is a number
    let max = (2.0 - 2f64.powi(-m)) * 2f64.powi(top);
    assert_eq!(f["max_finite"].as_float(), Some(max));
}
