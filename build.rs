//! Runs tessera-codegen over spec/ and writes generated/ (only files whose
//! content changed, so an unchanged tree never rebuilds).

use std::path::PathBuf;

fn main() {
    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=spec");
    println!("cargo:rerun-if-changed=codegen/src");
    // The runtime's list of operations, which kinds.toml is checked against.
    println!("cargo:rerun-if-changed={}", tessera_codegen::OPS_PATH);
    let spec = match tessera_codegen::load_spec(&root.join("spec")) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let files = tessera_codegen::generate(&spec);
    if let Err(e) = tessera_codegen::write_if_changed(&root.join("generated"), &files) {
        eprintln!("error: cannot write generated/: {e}");
        std::process::exit(1);
    }
}
