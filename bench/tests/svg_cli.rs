//! `tessera-bench --svg DIR` end to end: a bad DIR is refused before any
//! benchmark runs; a good one (created if missing) gets one chart per group
//! family, well-formed, with no temporary file left beside them, and the
//! tables and `--json` on stdout stay as they are without it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The bench binary, run on `args` then `--svg dir`.
fn bench(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tessera-bench"))
        .args(args)
        .arg("--svg")
        .arg(dir)
        .output()
        .expect("the bench binary runs")
}

/// A fresh scratch directory for one test.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tessera-bench-svg-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch directory");
    d
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("listed")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Every `<text>` of an SVG file, which must be well-formed.
fn svg_texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).expect("chart read back");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    assert!(doc.root_element().has_tag_name("svg"));
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

const QUICK: [&str; 3] = ["--quick", "--size-mib", "0.0625"];

#[test]
fn a_dir_under_a_regular_file_is_refused_before_anything_runs() {
    let root = scratch("bad");
    let file = root.join("file");
    std::fs::write(&file, b"keep").expect("written");
    for bad in [file.join("charts"), file.clone()] {
        let out = bench(&[&["bandwidth"][..], &QUICK].concat(), &bad);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(
            err.contains("--svg") && err.contains(&bad.display().to_string()),
            "{err}"
        );
        // Nothing ran: no header, no table, no progress.
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(!err.contains("running"), "{err}");
    }
    assert_eq!(names(&root), ["file"]);
    assert_eq!(std::fs::read(&file).expect("read"), b"keep");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_quick_run_writes_one_chart_per_family() {
    let root = scratch("ok");
    let dir = root.join("new").join("charts");
    let out = bench(&[&["bandwidth", "add", "mul"][..], &QUICK].concat(), &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(names(&dir), ["bandwidth.svg", "elementwise-f32.svg"]);
    // The tables, as without --svg: no word of the charts on stdout.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("elementwise-f32/add") && text.contains("elementwise-f32/mul"));
    assert!(!text.contains(".svg"), "{text}");
    let t = svg_texts(&dir.join("elementwise-f32.svg"));
    assert!(
        t.iter().any(|s| s.starts_with("elementwise-f32: ")),
        "{t:?}"
    );
    for want in ["add", "mul", "plain loop", "memcpy", "tessera scalar"] {
        assert!(t.iter().any(|s| s == want), "{want} missing: {t:?}");
    }
    // A ratio label per row (tessera's best tier over the plain loop's kin).
    assert_eq!(t.iter().filter(|s| s.starts_with('×')).count(), 2, "{t:?}");
    let b = svg_texts(&dir.join("bandwidth.svg"));
    assert!(b.iter().any(|s| s.starts_with("bandwidth: ")), "{b:?}");
    assert!(b.iter().any(|s| s == "copy loop"), "{b:?}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn json_stays_one_document_on_stdout() {
    let root = scratch("json");
    let out = bench(&[&["bandwidth", "--json"][..], &QUICK].concat(), &root);
    assert!(out.status.success());
    let json = String::from_utf8_lossy(&out.stdout);
    assert_eq!(json.lines().count(), 1, "{json}");
    assert!(json.starts_with("{\"cpu\":") && json.trim_end().ends_with('}'));
    assert_eq!(names(&root), ["bandwidth.svg"]);
    let _ = std::fs::remove_dir_all(&root);
}
