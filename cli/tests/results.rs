//! `tessera run` writes its results all or nothing: a call that fails after
//! its first result is computed (a later result cannot be written, or is
//! refused) leaves every file byte for byte as it was and no temporary file
//! behind; two results never name one file.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Every entry under `dir` (recursively), with the bytes of each file (a
/// directory as `None`, a symbolic link as its target's text).
fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        for entry in std::fs::read_dir(dir).expect("list the directory") {
            let entry = entry.expect("a directory entry");
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&path).expect("an entry's metadata");
            if meta.file_type().is_symlink() {
                let t = std::fs::read_link(&path).unwrap();
                out.insert(rel, Some(t.to_string_lossy().as_bytes().to_vec()));
            } else if meta.is_dir() {
                out.insert(rel, None);
                walk(root, &path, out);
            } else {
                out.insert(rel, Some(std::fs::read(&path).expect("read a file")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn f32_values(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 - n as f32 / 3.0) * 0.25).collect()
}

/// Assert that a run was refused (exit 1 or 2, one line, no panic) and that
/// the directory is exactly as `before`.
fn assert_untouched(case: &str, dir: &Path, before: &BTreeMap<String, Option<Vec<u8>>>, run: &Run) {
    assert!(
        matches!(run.code, Some(1) | Some(2)),
        "case {case}: the call should be refused: {run:?}"
    );
    assert!(!run.stderr.contains("panicked"), "case {case}: {run:?}");
    let after = snapshot(dir);
    let created: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let removed: Vec<&String> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    assert!(
        created.is_empty() && removed.is_empty(),
        "case {case}: files created {created:?}, removed {removed:?}; stderr {}",
        run.stderr
    );
    for (name, bytes) in before {
        assert!(
            after[name] == *bytes,
            "case {case}: {name} changed; stderr {}",
            run.stderr
        );
    }
}

/// A directory with an operand `x.npy` and pre-existing result files whose
/// bytes are not any result's.
fn prepared(tag: &str, results: &[&str]) -> TempDir {
    let dir = TempDir::new(tag);
    dir.write("x.npy", &npy_f32(&[2, 16], &f32_values(32)));
    for (i, r) in results.iter().enumerate() {
        dir.write(
            r,
            format!("the file that was there before, number {i}\n").as_bytes(),
        );
    }
    dir
}

#[test]
fn a_later_result_that_cannot_be_written_changes_nothing() {
    // map with two outputs: y1's path is a directory.
    let dir = prepared("late-map", &["y0.npy"]);
    std::fs::create_dir(dir.path("y1.npy")).unwrap();
    dir.write(
        "call.json",
        br#"{"kernel": "map", "attrs": {"program": "y0 = x0 * x0; y1 = x0 + x0"},
             "operands": {"x0": {"npy": "x.npy"}},
             "results": {"y0": {"npy": "y0.npy"}, "y1": {"npy": "y1.npy"}}}"#,
    );
    let before = snapshot(&dir.0);
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_untouched("map, y1 a directory", &dir.0, &before, &run);
    assert!(run.stderr.contains("y1"), "{}", run.stderr);

    // reduce with a list of ops: y1's directory does not exist.
    let dir = prepared("late-reduce", &["y0.npy"]);
    dir.write(
        "call.json",
        br#"{"kernel": "reduce", "attrs": {"op": ["sum", "max"], "axes": [1]},
             "operands": {"x": {"npy": "x.npy"}},
             "results": {"y0": {"npy": "y0.npy"}, "y1": {"npy": "missing/y1.npy"}}}"#,
    );
    let before = snapshot(&dir.0);
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_untouched("reduce, y1's directory missing", &dir.0, &before, &run);
    assert!(run.stderr.contains("y1"), "{}", run.stderr);

    // encode nvfp4: codes and scales can be written, tensor_scale cannot.
    let dir = prepared("late-encode", &["codes.npy", "scales.npy"]);
    dir.write(
        "call.json",
        br#"{"kernel": "encode", "attrs": {"format": "nvfp4"},
             "operands": {"x": {"npy": "x.npy"}},
             "results": {"codes": {"npy": "codes.npy"}, "scales": {"npy": "scales.npy"},
                         "tensor_scale": {"npy": "nowhere/t.npy"}}}"#,
    );
    let before = snapshot(&dir.0);
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_untouched(
        "encode, tensor_scale's directory missing",
        &dir.0,
        &before,
        &run,
    );
    assert!(run.stderr.contains("tensor_scale"), "{}", run.stderr);
}

#[test]
fn a_later_result_that_is_refused_changes_nothing() {
    // reduce: y0 is computed and could be written; y1 asks for "packed" on
    // an f32 result, which does not apply.
    let dir = prepared("refused-reduce", &["y0.npy", "y1.npy"]);
    dir.write(
        "call.json",
        br#"{"kernel": "reduce", "attrs": {"op": ["sum", "max"], "axes": [1]},
             "operands": {"x": {"npy": "x.npy"}},
             "results": {"y0": {"npy": "y0.npy"}, "y1": {"npy": "y1.npy", "packed": true}}}"#,
    );
    let before = snapshot(&dir.0);
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_untouched("reduce, y1 packed f32", &dir.0, &before, &run);
    assert!(run.stderr.contains("packed"), "{}", run.stderr);

    // map: y1 gives a shape that contradicts y0's.
    let dir = prepared("refused-map", &["y0.npy", "y1.npy"]);
    dir.write(
        "call.json",
        br#"{"kernel": "map", "attrs": {"program": "y0 = x0 * x0; y1 = x0 + x0"},
             "operands": {"x0": {"npy": "x.npy"}},
             "results": {"y0": {"npy": "y0.npy", "shape": [2, 16]},
                         "y1": {"npy": "y1.npy", "shape": [3, 2, 16]}}}"#,
    );
    let before = snapshot(&dir.0);
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_untouched("map, contradictory shapes", &dir.0, &before, &run);
    assert!(run.stderr.contains("shape"), "{}", run.stderr);
}

/// Whether `sh` can lower the file-size limit here.
fn file_size_limit_available() -> bool {
    Command::new("sh")
        .args(["-c", "ulimit -f 64"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_write_that_fails_partway_destroys_nothing() {
    if !file_size_limit_available() {
        eprintln!("skipped: sh cannot set a file-size limit here");
        return;
    }
    // Two results of 16 Ki values: y0 bool (16 KiB), y1 f32 (64 KiB). Under
    // a file-size limit of 64 blocks (32 KiB for dash, 64 KiB for bash: 512-
    // or 1024-byte blocks), y0 fits and y1 fails partway. SIGXFSZ is ignored,
    // so the failing write returns an error instead of killing the tool.
    let dir = TempDir::new("fsize");
    let n = 16 * 1024;
    dir.write("x.npy", &npy_f32(&[n], &f32_values(n)));
    let old0 = vec![0x5au8; 40_000];
    let old1 = vec![0xa5u8; 50_000];
    dir.write("y0.npy", &old0);
    dir.write("y1.npy", &old1);
    dir.write(
        "call.json",
        br#"{"kernel": "map", "attrs": {"program": "y0 = x0 > 0f32; y1 = x0 * x0"},
             "operands": {"x0": {"npy": "x.npy"}},
             "results": {"y0": {"npy": "y0.npy"}, "y1": {"npy": "y1.npy"}}}"#,
    );
    let before = snapshot(&dir.0);
    let out = Command::new("sh")
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 64; exec \"$0\" run call.json",
            env!("CARGO_BIN_EXE_tessera"),
        ])
        .current_dir(&dir.0)
        .output()
        .expect("run sh");
    let run = Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_untouched("a file-size limit", &dir.0, &before, &run);
    assert!(run.stderr.contains("y1"), "{}", run.stderr);

    // Without the limit the same call succeeds and leaves only its results.
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let names: Vec<String> = snapshot(&dir.0).into_keys().collect();
    assert_eq!(names, ["call.json", "x.npy", "y0.npy", "y1.npy"]);
    let y1 = read_npy(&dir.path("y1.npy"));
    assert_eq!(y1.shape, vec![n]);
    let expect: Vec<u8> = f32_values(n)
        .iter()
        .flat_map(|v| (v * v).to_le_bytes())
        .collect();
    assert_eq!(y1.data, expect);
}

#[test]
fn two_results_naming_one_file_are_refused() {
    let dir = TempDir::new("duplicates");
    dir.write("x.npy", &npy_f32(&[2, 16], &f32_values(32)));
    std::fs::create_dir(dir.path("sub")).unwrap();
    std::os::unix::fs::symlink(".", dir.path("here")).unwrap();
    dir.write("existing.npy", b"kept as it is\n");
    std::fs::hard_link(dir.path("existing.npy"), dir.path("hard.npy")).unwrap();
    std::os::unix::fs::symlink("existing.npy", dir.path("soft.npy")).unwrap();
    let absolute = dir.path("out.npy").to_string_lossy().into_owned();
    let pairs: Vec<(&str, String, String)> = vec![
        ("the same path", "out.npy".into(), "out.npy".into()),
        ("./ and a plain name", "./out.npy".into(), "out.npy".into()),
        ("through ..", "sub/../out.npy".into(), "out.npy".into()),
        (
            "through a linked directory",
            "here/out.npy".into(),
            "out.npy".into(),
        ),
        ("absolute and relative", absolute.clone(), "out.npy".into()),
        ("a hard link", "hard.npy".into(), "existing.npy".into()),
        ("a symbolic link", "soft.npy".into(), "existing.npy".into()),
    ];
    for (case, a, b) in pairs {
        let call = format!(
            r#"{{"kernel": "reduce", "attrs": {{"op": ["sum", "max"], "axes": [1]}},
                "operands": {{"x": {{"npy": "x.npy"}}}},
                "results": {{"y0": {{"npy": "{a}"}}, "y1": {{"npy": "{b}"}}}}}}"#
        );
        dir.write("call.json", call.as_bytes());
        let before = snapshot(&dir.0);
        let run = tessera(&dir.0, &["run", "call.json"]);
        std::panic::catch_unwind(|| run.assert_refused(2, "one file"))
            .unwrap_or_else(|_| panic!("case `{case}`: {run:?}"));
        assert!(
            run.stderr.contains("y0") && run.stderr.contains("y1"),
            "{case}: {}",
            run.stderr
        );
        assert_untouched(case, &dir.0, &before, &run);
    }
    // Distinct files in one call are fine, and a result named through a
    // symbolic link replaces the link's target, as before.
    dir.write(
        "call.json",
        br#"{"kernel": "reduce", "attrs": {"op": ["sum", "max"], "axes": [1]},
             "operands": {"x": {"npy": "x.npy"}},
             "results": {"y0": {"npy": "sub/out.npy"}, "y1": {"npy": "soft.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(std::fs::symlink_metadata(dir.path("soft.npy"))
        .unwrap()
        .file_type()
        .is_symlink());
    let max = read_npy(&dir.path("existing.npy"));
    let x = f32_values(32);
    let expect: Vec<u8> = x
        .chunks(16)
        .map(|row| row.iter().copied().fold(f32::NEG_INFINITY, f32::max))
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(max.data, expect);
    assert_eq!(read_npy(&dir.path("sub/out.npy")).shape, vec![2]);
}
