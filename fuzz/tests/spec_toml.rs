//! Fuzz target: the spec. Byte mutations of one of `spec/*.toml` (or of the
//! runtime's list of operations) go through the codegen's strict parser and
//! validator (no generation, no compile): each is a [`SpecError`] naming its
//! file (and, for a semantic error, its table), in one line, or a spec; never
//! a panic. The unmutated spec must parse.

use std::path::Path;
use tessera_codegen::{parse_spec, SpecError, SpecSources};
use tessera_fuzz::mutate::mutate;
use tessera_fuzz::{run, show_bytes, Plan, Stats, Verdict};
use tessera_testkit::rng::Rng;

const WORDS: &[&[u8]] = &[
    b"[[dtype]]", b"[[kind]]", b"[[loop]]", b"[[tier]]", b"[[format]]", b"name = ", b"\"",
    b"=", b"[", b"]", b"{", b"}", b",", b"\n", b"#", b"true", b"false", b"-1", b"0",
    b"99999999999999999999", b"\"f32\"", b"\"add\"", b"bits = ", b"arity = ", b"carrier = ",
    b"\"\"", b"'''", b"\"\"\"", b"1e400", b"inf", b"nan", b"\\u0000", b"\xff",
];

const FILES: [&str; 6] = [
    "spec/dtypes.toml",
    "spec/kinds.toml",
    "spec/loops.toml",
    "spec/tiers.toml",
    "spec/formats.toml",
    "runtime/src/ops.rs",
];

fn target(plan: Plan, verbose: bool) -> Stats {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let base = SpecSources::read(&root.join("spec")).expect("the spec reads");
    parse_spec(&base).expect("the unmutated spec parses");
    run(
        "spec_toml",
        plan,
        verbose,
        |rng: &mut Rng, _| {
            let n = if rng.chance(1, 8) { 6 } else { 5 };
            let which = rng.below_usize(n);
            let text = match which {
                0 => &base.dtypes,
                1 => &base.kinds,
                2 => &base.loops,
                3 => &base.tiers,
                4 => &base.formats,
                _ => &base.ops,
            };
            let bytes = mutate(rng, text.as_bytes(), WORDS);
            (which, String::from_utf8_lossy(&bytes).into_owned())
        },
        |(which, text): &(usize, String)| format!("{}: {}", FILES[*which], show_bytes(text.as_bytes())),
        |(which, text)| {
            let mut src = base.clone();
            *match which {
                0 => &mut src.dtypes,
                1 => &mut src.kinds,
                2 => &mut src.loops,
                3 => &mut src.tiers,
                4 => &mut src.formats,
                _ => &mut src.ops,
            } = text.clone();
            match parse_spec(&src) {
                Ok(_) => Ok(Verdict::Succeeded { models: 0 }),
                Err(e) => check_error(&e).map(|_| Verdict::Refused),
            }
        },
    )
}

/// A spec error names a file of the spec, says what is wrong, and is one
/// line (a message quoting a mutated line may hold its text, not a newline).
fn check_error(e: &SpecError) -> Result<(), String> {
    if !FILES.contains(&e.file.as_str()) {
        return Err(format!("the error names no spec file: {e:?}"));
    }
    if e.message.trim().is_empty() {
        return Err(format!("the error says nothing: {e:?}"));
    }
    if e.table.contains('\n') || e.key.contains('\n') {
        return Err(format!("a table or key of several lines: {e:?}"));
    }
    Ok(())
}

#[test]
fn spec_toml_default_run() {
    let s = target(Plan::default_run(), true);
    assert!(s.refusals > 0 && s.successes > 0, "{s:?}");
}

#[test]
#[ignore = "long run: TESSERA_FUZZ_CASES (default 10^6), TESSERA_FUZZ_SEED"]
fn spec_toml_long_run() {
    target(Plan::long_run(), true);
}
