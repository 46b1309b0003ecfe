//! Fuzz target: the spec. Byte mutations of one of `spec/*.toml` (or of the
//! runtime's list of operations) go through the codegen's strict parser and
//! validator (no generation, no compile): each is a [`SpecError`] naming its
//! file (and, for a semantic error, its table), in one line, or a spec; never
//! a panic. The unmutated spec must parse. Most cases mutate a reduced
//! spec (one kind in seven) to keep a case cheap; see [`reduced`].

use std::path::Path;
use tessera_codegen::{parse_spec, SpecError, SpecSources};
use tessera_fuzz::mutate::mutate;
use tessera_fuzz::{run, show_bytes, Plan, Stats, Verdict};
use tessera_testkit::rng::Rng;

const WORDS: &[&[u8]] = &[
    b"[[dtype]]",
    b"[[kind]]",
    b"[[loop]]",
    b"[[tier]]",
    b"[[format]]",
    b"name = ",
    b"\"",
    b"=",
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
    b"\n",
    b"#",
    b"true",
    b"false",
    b"-1",
    b"0",
    b"99999999999999999999",
    b"\"f32\"",
    b"\"add\"",
    b"bits = ",
    b"arity = ",
    b"carrier = ",
    b"\"\"",
    b"'''",
    b"\"\"\"",
    b"1e400",
    b"inf",
    b"nan",
    b"\\u0000",
    b"\xff",
];

const FILES: [&str; 6] = [
    "spec/dtypes.toml",
    "spec/kinds.toml",
    "spec/loops.toml",
    "spec/tiers.toml",
    "spec/formats.toml",
    "runtime/src/ops.rs",
];

/// A smaller valid spec: every file as it is but `kinds.toml`, which keeps
/// one kind in seven (and its header), and the runtime's list of operations,
/// which keeps the operations of those kinds. The validator runs every check
/// on it as on the whole spec; its kernels are a seventh as many, so a case
/// costs a fraction of one of the whole spec (whose TOML parse and kernel
/// enumeration are most of a case's time).
fn reduced(full: &SpecSources) -> SpecSources {
    let mut blocks = full.kinds.split("\n[[kind]]");
    let head = blocks.next().unwrap_or_default().to_string();
    let mut kinds = head;
    let mut kept = std::collections::HashSet::new();
    let mut names = std::collections::HashSet::new();
    let value = |b: &str, key: &str| -> Option<String> {
        b.lines()
            .find(|l| l.split('=').next().map(str::trim) == Some(key))
            .and_then(|l| l.split('"').nth(1))
            .map(str::to_string)
    };
    for (i, b) in blocks.enumerate() {
        // An alias stays with its target (which comes first) or not at all.
        let keep = match value(b, "alias") {
            Some(target) => names.contains(&target),
            None => i % 7 == 0,
        };
        if !keep {
            continue;
        }
        names.extend(value(b, "name"));
        kinds.push_str("\n[[kind]]");
        kinds.push_str(b);
        if let Some(line) = b.lines().find(|l| l.trim_start().starts_with("algorithm")) {
            let alg = line.split('"').nth(1).unwrap_or_default();
            kept.insert(tessera_codegen::spec::camel(alg));
        }
    }
    let mut ops = String::new();
    let mut docs = String::new();
    let mut inside = false;
    for line in full.ops.lines() {
        let t = line.trim();
        if t == "pub enum Operation {" {
            inside = true;
        } else if inside && t == "}" {
            inside = false;
        } else if inside && t.starts_with("///") {
            docs.push_str(line);
            docs.push('\n');
            continue;
        } else if inside && t.ends_with(',') {
            if kept.contains(t.trim_end_matches(',')) {
                ops.push_str(&docs);
                ops.push_str(line);
                ops.push('\n');
            }
            docs.clear();
            continue;
        }
        ops.push_str(&docs);
        docs.clear();
        ops.push_str(line);
        ops.push('\n');
    }
    SpecSources {
        kinds,
        ops,
        ..full.clone()
    }
}

fn target(plan: Plan, verbose: bool) -> Stats {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let full = SpecSources::read(&root.join("spec")).expect("the spec reads");
    parse_spec(&full).expect("the unmutated spec parses");
    let small = reduced(&full);
    if let Err(e) = parse_spec(&small) {
        panic!("the reduced spec does not parse: {e}");
    }
    run(
        "spec_toml",
        plan,
        verbose,
        |rng: &mut Rng, _| {
            // One case in eight mutates the whole spec, the rest the reduced one.
            let whole = rng.chance(1, 8);
            let base = if whole { &full } else { &small };
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
            (which, whole, String::from_utf8_lossy(&bytes).into_owned())
        },
        |(which, whole, text): &(usize, bool, String)| {
            let spec = if *whole {
                "the whole spec"
            } else {
                "the reduced spec"
            };
            format!(
                "{} of {spec}: {}",
                FILES[*which],
                show_bytes(text.as_bytes())
            )
        },
        |(which, whole, text)| {
            let mut src = if *whole { full.clone() } else { small.clone() };
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
