//! `tessera run` against inputs of a few bytes that name huge or endless
//! work: numbers in attributes read exactly, allocations charged to the
//! result budget and refused (never aborted), work charged to the work
//! budget or done in linear time, temporary files removed on SIGXFSZ,
//! SIGTERM and SIGINT, and the smaller refusals (ARCHITECTURE.md §4, the
//! README's budgets and signals).

mod common;

use common::{npy_bytes, npy_f32, read_npy, tessera, tessera_env, TempDir};
use std::path::Path;
use tessera_testkit::rng::Rng;

fn npy_f64(shape: &[usize], values: &[f64]) -> Vec<u8> {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy_bytes("<f8", false, shape, &data, 1)
}

fn npy_i64(shape: &[usize], values: &[i64]) -> Vec<u8> {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy_bytes("<i8", false, shape, &data, 1)
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Entries of `dir` whose name marks a temporary file of the tool.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tessera-"))
        .collect()
}

/// Run a call in-process (no process per case): the exit code and the
/// message of a refusal.
fn run_in_process(dir: &Path, call: &str) -> Result<(), String> {
    std::fs::write(dir.join("call.json"), call).unwrap();
    let args = vec![
        "run".to_string(),
        dir.join("call.json").display().to_string(),
    ];
    let mut out = Vec::new();
    tessera_cli::main_with(&args, &mut out)
        .map(|_| ())
        .map_err(|e| e.one_line())
}

#[test]
fn quantile_and_polyval_read_their_numbers_exactly() {
    let dir = TempDir::new("robust-numbers");
    // q = 0.9999999999999999 is 1 − 2^-53 (std's parser, correctly
    // rounded); the documented formula h = q·(n − 1), i = ⌊h⌋, t = h − i,
    // hi − (hi − lo)·(1 − t) for t ≥ 0.5, gives 1 − 2^-51 over [0, 0, 0, 1]
    // (numpy's 0.9999999999999996).
    dir.write("q.npy", &npy_f64(&[4], &[0.0, 0.0, 0.0, 1.0]));
    dir.write(
        "call.json",
        br#"{"kernel": "quantile", "attrs": {"q": 0.9999999999999999},
             "operands": {"x": {"npy": "q.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let q: f64 = "0.9999999999999999".parse().unwrap();
    assert_eq!(q, 1.0 - 2f64.powi(-53));
    let h = q * 3.0;
    let t = h - h.floor();
    let want = 1.0 - (1.0 - t);
    assert_eq!(want, 0.9999999999999996);
    assert_eq!(f64s(&read_npy(&dir.path("y.npy")).data), vec![want]);
    // A polynomial of degree 0 is its coefficient.
    dir.write("x.npy", &npy_f64(&[1], &[2.0]));
    dir.write(
        "call.json",
        br#"{"kernel": "polyval", "attrs": {"coeffs": [10928588.983213553]},
             "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let c: f64 = "10928588.983213553".parse().unwrap();
    assert_eq!(
        f64s(&read_npy(&dir.path("y.npy")).data)[0].to_bits(),
        c.to_bits()
    );
}

/// Every double's shortest round-trip string, and the strings of the
/// edges (±0, subnormals, the largest finite values, long decimal
/// expansions), read into the number the string names (std's correctly
/// rounded parser is the oracle): through `polyval`'s coefficient (a
/// polynomial of degree 0 is its coefficient, at x = 0 as anywhere).
#[test]
fn every_numeric_attribute_string_is_read_as_the_nearest_double() {
    let dir = TempDir::new("robust-doubles");
    dir.write("x.npy", &npy_f64(&[1], &[0.0]));
    let mut rng = Rng::new(0x28);
    let mut strings: Vec<String> = [
        "0.0",
        "-0.0",
        "5e-324",
        "-5e-324",
        "2.225073858507201e-308",
        "2.2250738585072014e-308",
        "1.7976931348623157e308",
        "-1.7976931348623157e308",
        "9007199254740993",
        "18446744073709551617",
        "0.1",
        "0.30000000000000004",
        "2.4703282292062328e-324",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "123456789012345678901234567890e-20",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    while strings.len() < 700 {
        let v = f64::from_bits(rng.next_u64());
        if v.is_finite() {
            strings.push(format!("{v:?}"));
        }
    }
    let mut wrong = Vec::new();
    for s in &strings {
        let call = format!(
            r#"{{"kernel": "polyval", "attrs": {{"coeffs": [{s}]}},
                 "operands": {{"x": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        );
        run_in_process(&dir.0, &call).unwrap_or_else(|e| panic!("{s}: {e}"));
        let got = f64s(&read_npy(&dir.path("y.npy")).data)[0];
        let want: f64 = s.parse().unwrap();
        if got.to_bits() != want.to_bits() {
            wrong.push(format!("{s}: {got:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {}: {wrong:?}",
        wrong.len(),
        strings.len()
    );
}

/// Integer attributes are read as integers: beyond 2^53 they keep every
/// digit, beyond their type they are refused, never rounded.
#[test]
fn integer_attributes_beyond_2_53_are_exact_or_refused() {
    let dir = TempDir::new("robust-integers");
    let random = |seed: &str| {
        format!(
            r#"{{"kernel": "random", "attrs": {{"seed": {seed}}}, "operands": {{}},
                 "results": {{"y": {{"npy": "y.npy", "dtype": "u64", "shape": [4]}}}}}}"#
        )
    };
    // Seeds 2^53 and 2^53 + 1 (one double) are two seeds.
    let mut outs = Vec::new();
    for seed in [
        "9007199254740992",
        "9007199254740993",
        "18446744073709551615",
    ] {
        run_in_process(&dir.0, &random(seed)).unwrap_or_else(|e| panic!("{seed}: {e}"));
        outs.push(read_npy(&dir.path("y.npy")).data);
    }
    assert_ne!(outs[0], outs[1]);
    for seed in ["18446744073709551616", "-1", "1e3", "9007199254740993.0"] {
        let e = run_in_process(&dir.0, &random(seed)).unwrap_err();
        assert!(e.contains("attribute seed"), "{seed}: {e}");
    }
    // A window of 2^53 + 1 over 3 values is refused, and named exactly.
    dir.write("s.npy", &npy_f32(&[3], &[1.0, 2.0, 3.0]));
    let e = run_in_process(
        &dir.0,
        r#"{"kernel": "series", "attrs": {"op": "rolling_max", "window": 9007199254740993},
            "operands": {"x": {"npy": "s.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    )
    .unwrap_err();
    assert!(e.contains("9007199254740993"), "{e}");
    // A fill of 2^53 + 1 into int64 keeps its last digit.
    dir.write("p.npy", &npy_i64(&[1], &[7]));
    run_in_process(
        &dir.0,
        r#"{"kernel": "assemble", "attrs": {"starts": [[0]], "fill": 9007199254740993},
            "operands": {"piece0": {"npy": "p.npy"}}, "results": {"y": {"npy": "y.npy", "shape": [2]}}}"#,
    )
    .unwrap();
    let y = read_npy(&dir.path("y.npy")).data;
    assert_eq!(
        y,
        [7i64, 9007199254740993]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>()
    );
}

/// The five allocation sites of a one-element file with a large pad, and a
/// sub-byte result of 2^32 values: each refused by the result budget with
/// one error line, nothing written, no temporary file left.
#[test]
fn copies_sized_by_a_pad_are_charged_to_the_result_budget() {
    let dir = TempDir::new("robust-alloc");
    dir.write("one.npy", &npy_f32(&[1], &[1.0]));
    dir.write("s.npy", &npy_f32(&[], &[1.0]));
    dir.write("ids.npy", &npy_i64(&[1], &[0]));
    dir.write("a.npy", &npy_f32(&[1, 4], &[1.0; 4]));
    dir.write("b.npy", &npy_f32(&[4, 1], &[1.0; 4]));
    let budget = [("TESSERA_MAX_RESULT_BYTES", "100000000")];
    for (what, call) in [
        (
            "sum_lanes",
            r#"{"kernel": "sum_lanes", "operands": {"x": {"npy": "one.npy", "pad": [[0, 800000000]]}},
                "results": {"y": {"npy": "y.npy"}}}"#,
        ),
        (
            "fold",
            r#"{"kernel": "fold", "attrs": {"pad": [[0, 0]]},
                "operands": {"x": {"npy": "one.npy", "pad": [[0, 800000000]]}},
                "results": {"y": {"npy": "y.npy", "shape": [800000001]}}}"#,
        ),
        (
            "series",
            r#"{"kernel": "series", "attrs": {"op": "diff"},
                "operands": {"x": {"npy": "one.npy", "pad": [[0, 700000000]]}},
                "results": {"y": {"npy": "y.npy"}}}"#,
        ),
        (
            "contract_grouped",
            r#"{"kernel": "contract_grouped", "attrs": {"by": "depth", "groups": 2},
                "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"},
                             "ids": {"npy": "ids.npy", "pad": [[0, 536870912]]}},
                "results": {"y": {"npy": "y.npy"}}}"#,
        ),
        (
            "cast to u4",
            r#"{"kernel": "cast", "operands": {"x": {"npy": "s.npy"}},
                "results": {"y": {"npy": "y.npy", "dtype": "u4", "shape": [4294967296]}}}"#,
        ),
    ] {
        dir.write("call.json", call.as_bytes());
        let run = tessera_env(&dir.0, &["run", "call.json"], &budget);
        run.assert_refused(1, "result budget");
        assert!(!dir.path("y.npy").exists(), "{what} wrote y");
        assert!(temporaries(&dir.0).is_empty(), "{what}");
    }
}

/// A sub-byte result is held packed and unpacked on its way to the file:
/// the budget is charged what the call holds (a u1 result of 8,000,000
/// values holds 1,000,000 bytes), one byte less is refused, and the file
/// holds one code per value.
#[test]
fn a_sub_byte_result_is_charged_as_the_bytes_it_holds() {
    let dir = TempDir::new("robust-u1");
    dir.write("s.npy", &npy_f32(&[], &[1.0]));
    dir.write(
        "call.json",
        br#"{"kernel": "cast", "operands": {"x": {"npy": "s.npy"}},
             "results": {"y": {"npy": "y.npy", "dtype": "u1", "shape": [8000000]}}}"#,
    );
    let run = tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("TESSERA_MAX_RESULT_BYTES", "999999")],
    );
    run.assert_refused(1, "result budget");
    let run = tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("TESSERA_MAX_RESULT_BYTES", "1000000")],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![8_000_000]);
    assert!(y.data.len() == 8_000_000 && y.data.iter().all(|&c| c == 1));
}

/// Names checked in one pass: a map naming 100,000 operands with one
/// missing is refused naming it; a reduce program's and assemble's pieces
/// likewise.
#[test]
fn a_hundred_thousand_operand_names_are_checked_in_linear_time() {
    let dir = TempDir::new("robust-names");
    dir.write("m.npy", &npy_f32(&[2], &[1.0, 2.0]));
    let names = |prefix: &str| -> String {
        (0..100_000)
            .filter(|&i| i != 79_999)
            .map(|i| format!(r#""{prefix}{i}": {{"npy": "m.npy"}}"#))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ops = names("x");
    for call in [
        format!(
            r#"{{"kernel": "map", "attrs": {{"program": "y0 = x0"}}, "operands": {{{ops}}},
                 "results": {{"y0": {{"npy": "y.npy"}}}}}}"#
        ),
        format!(
            r#"{{"kernel": "reduce", "attrs": {{"op": "sum", "program": "y0 = x0"}}, "operands": {{{ops}}},
                 "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        ),
    ] {
        let e = run_in_process(&dir.0, &call).unwrap_err();
        assert!(e.contains("x79999 is missing"), "{e}");
    }
    let pieces = names("piece");
    let e = run_in_process(
        &dir.0,
        &format!(
            r#"{{"kernel": "assemble", "attrs": {{"starts": []}}, "operands": {{{pieces}}},
                 "results": {{"y": {{"npy": "y.npy", "shape": [4]}}}}}}"#
        ),
    )
    .unwrap_err();
    assert!(e.contains("piece79999 is missing"), "{e}");
    assert!(!dir.path("y.npy").exists());
    // All 100,000 given: the map runs (the program reads two of them).
    let all: String = (0..100_000)
        .map(|i| format!(r#""x{i}": {{"npy": "m.npy"}}"#))
        .collect::<Vec<_>>()
        .join(", ");
    run_in_process(
        &dir.0,
        &format!(
            r#"{{"kernel": "map", "attrs": {{"program": "y0 = x0 + x99999"}}, "operands": {{{all}}},
                 "results": {{"y0": {{"npy": "y.npy"}}}}}}"#
        ),
    )
    .unwrap();
    assert_eq!(
        read_npy(&dir.path("y.npy")).data,
        [2f32, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>()
    );
}

/// Rolling extremes of 300,000 values over a window of 150,000 (linear
/// time): a sample of windows checked against a direct scan.
#[test]
fn rolling_extremes_over_a_long_window_are_linear() {
    let dir = TempDir::new("robust-rolling");
    let mut rng = Rng::new(5);
    let n = 300_000;
    let w = 150_000;
    let v: Vec<f32> = (0..n).map(|_| rng.spread() as f32).collect();
    dir.write("x.npy", &npy_f32(&[n], &v));
    for op in ["rolling_min", "rolling_max"] {
        let call = format!(
            r#"{{"kernel": "series", "attrs": {{"op": "{op}", "window": {w}}},
                 "operands": {{"x": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        );
        run_in_process(&dir.0, &call).unwrap();
        let y = read_npy(&dir.path("y.npy"));
        assert_eq!(y.shape, vec![n - w + 1]);
        let got: Vec<f32> = y
            .data
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for _ in 0..12 {
            let i = rng.below_usize(n - w + 1);
            let win = &v[i..i + w];
            let want = if op == "rolling_min" {
                win.iter().copied().fold(f32::INFINITY, f32::min)
            } else {
                win.iter().copied().fold(f32::NEG_INFINITY, f32::max)
            };
            assert_eq!(got[i], want, "{op} at {i}");
        }
    }
}

/// Depth groups cost O(groups·R·N), not a call per group: 2^22 groups of a
/// [1, 4]·[4, 1] product, four of them with an index.
#[test]
fn millions_of_empty_depth_groups_are_written_in_one_pass() {
    let dir = TempDir::new("robust-groups");
    dir.write("a.npy", &npy_f32(&[1, 4], &[1.0, 2.0, 3.0, 4.0]));
    dir.write("b.npy", &npy_f32(&[4, 1], &[1.0; 4]));
    dir.write("ids.npy", &npy_i64(&[4], &[0, 5, 4194303, 5]));
    let groups = 1usize << 22;
    let call = format!(
        r#"{{"kernel": "contract_grouped", "attrs": {{"by": "depth", "groups": {groups}}},
             "operands": {{"a": {{"npy": "a.npy"}}, "b": {{"npy": "b.npy"}}, "ids": {{"npy": "ids.npy"}}}},
             "results": {{"y": {{"npy": "y.npy"}}}}}}"#
    );
    run_in_process(&dir.0, &call).unwrap();
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![groups, 1, 1]);
    for (g, c) in y.data.chunks(4).enumerate() {
        let v = f32::from_le_bytes(c.try_into().unwrap());
        let want = match g {
            0 => 1.0,
            5 => 2.0 + 4.0,
            4194303 => 3.0,
            _ => 0.0,
        };
        assert_eq!(v.to_bits(), f32::to_bits(want), "group {g}");
    }
}

/// Work a few bytes name is charged before it starts: a reduction of a
/// program over a virtual shape of 2^62, a windowed load whose windows
/// overlap, a rolling mean's windows, a polynomial's coefficients; each
/// refused by the work budget (the default, or `TESSERA_MAX_WORK`).
#[test]
fn work_named_by_a_few_bytes_is_refused_by_the_work_budget() {
    let dir = TempDir::new("robust-work");
    dir.write(
        "call.json",
        br#"{"kernel": "reduce", "attrs": {"op": "sum", "program": "y0 = 1f32", "shape": [4611686018427387904]},
             "operands": {}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    tessera(&dir.0, &["run", "call.json"]).assert_refused(1, "work budget");
    // The same over [1000] runs within a budget of 1000 steps, not 999.
    dir.write(
        "call.json",
        br#"{"kernel": "reduce", "attrs": {"op": "sum", "program": "y0 = 1f32", "shape": [1000]},
             "operands": {}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let ok = tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("TESSERA_MAX_WORK", "1000")],
    );
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    assert_eq!(read_npy(&dir.path("y.npy")).data, 1000f32.to_le_bytes());
    std::fs::remove_file(dir.path("y.npy")).unwrap();
    tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("TESSERA_MAX_WORK", "999")],
    )
    .assert_refused(1, "work budget");
    tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("TESSERA_MAX_WORK", "many")],
    )
    .assert_refused(2, "TESSERA_MAX_WORK");
    // Overlapping windows: 2^20 values padded and read through windows of
    // 2^19 taps, 2^39 elements named by a 4 MiB copy.
    dir.write("x.npy", &npy_f32(&[1 << 20], &vec![1.0; 1 << 20]));
    dir.write("c.npy", &npy_f64(&[1], &[0.5]));
    let coeffs = vec!["1.5"; 1000].join(", ");
    for call in [
        r#"{"kernel": "reduce", "attrs": {"op": "sum"},
            "operands": {"x": {"npy": "x.npy", "pad": [[0, 0, 524288, 1, 1]]}},
            "results": {"y": {"npy": "y.npy"}}}"#
            .to_string(),
        r#"{"kernel": "series", "attrs": {"op": "rolling_mean", "window": 524288},
            "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#
            .to_string(),
        format!(
            r#"{{"kernel": "polyval", "attrs": {{"coeffs": [{coeffs}]}},
                 "operands": {{"x": {{"npy": "c.npy"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        ),
    ] {
        dir.write("call.json", call.as_bytes());
        let run = tessera_env(
            &dir.0,
            &["run", "call.json"],
            &[("TESSERA_MAX_WORK", "999")],
        );
        run.assert_refused(1, "work budget");
        assert!(!dir.path("y.npy").exists());
    }
}

/// `random` into a dtype it does not define is refused before its buffer
/// is allocated (a budget of 1,000 bytes does not refuse it first); a
/// `RAYON_NUM_THREADS` rayon cannot start is clamped; `run --help` prints
/// the usage.
#[test]
fn smaller_refusals_come_first() {
    let dir = TempDir::new("robust-small");
    dir.write(
        "call.json",
        br#"{"kernel": "random", "attrs": {"seed": 1}, "operands": {},
             "results": {"y": {"npy": "y.npy", "dtype": "c128", "shape": [268435456]}}}"#,
    );
    tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("TESSERA_MAX_RESULT_BYTES", "1000")],
    )
    .assert_refused(1, "c128");
    dir.write("x.npy", &npy_f32(&[3], &[1.0, -2.0, 3.0]));
    dir.write(
        "call.json",
        br#"{"kernel": "abs", "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("RAYON_NUM_THREADS", "100000")],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        read_npy(&dir.path("y.npy")).data,
        [1f32, 2.0, 3.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>()
    );
    for args in [
        &["run", "--help"][..],
        &["run", "-h"],
        &["kernels", "--help"],
    ] {
        let run = tessera(&dir.0, args);
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
        assert!(run.stdout.starts_with("usage: tessera"), "{args:?}");
    }
}

/// Under a file-size limit the write fails with EFBIG (SIGXFSZ ignored):
/// the call is refused and no temporary file stays.
#[test]
fn a_file_size_limit_leaves_no_temporary_file() {
    use std::os::unix::process::CommandExt;
    let dir = TempDir::new("robust-fsize");
    let mut rng = Rng::new(3);
    let v: Vec<f32> = (0..100_000).map(|_| rng.spread() as f32).collect();
    dir.write("x.npy", &npy_f32(&[100_000], &v));
    dir.write(
        "call.json",
        br#"{"kernel": "sort", "operands": {"x": {"npy": "x.npy"}},
             "results": {"values": {"npy": "a.npy"}, "positions": {"npy": "p.npy"}}}"#,
    );
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tessera"));
    cmd.args(["run", "call.json"]).current_dir(&dir.0);
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 64 * 1024,
                rlim_max: 64 * 1024,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert!(!dir.path("a.npy").exists() && !dir.path("p.npy").exists());
    assert!(temporaries(&dir.0).is_empty(), "{:?}", temporaries(&dir.0));
}

/// SIGTERM and SIGINT while results are being written: the signal ends the
/// process (its status says which), and every temporary file written or
/// being written is gone; no destination is created.
#[test]
fn a_signal_during_the_writes_removes_the_temporary_files() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let dir = TempDir::new("robust-signal");
        dir.write("s.npy", &npy_f32(&[], &[2.0]));
        // Four results of 64 Mi f32 each (256 MiB apiece): the first
        // temporary file appears once all are computed, and the writes
        // take a while after it.
        dir.write(
            "call.json",
            br#"{"kernel": "map", "attrs": {"program": "y0 = x0; y1 = x0 + x0; y2 = x0 * x0; y3 = -x0"},
                 "operands": {"x0": {"npy": "s.npy"}},
                 "results": {"y0": {"npy": "a.npy", "shape": [67108864]}, "y1": {"npy": "b.npy"},
                             "y2": {"npy": "c.npy"}, "y3": {"npy": "d.npy"}}}"#,
        );
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tessera"));
        cmd.args(["run", "call.json"])
            .current_dir(&dir.0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // A shell without job control starts background jobs with SIGINT
        // ignored, and an ignored signal stays ignored (as `nohup` wants):
        // the child starts with the default dispositions here.
        // SAFETY: signal is async-signal-safe and touches only the child.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("the call ended ({status}) before a temporary file was seen");
            }
            if !temporaries(&dir.0).is_empty() {
                // SAFETY: kill sends a signal to the child only.
                unsafe {
                    libc::kill(child.id() as libc::pid_t, signal);
                }
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(signal), "{status}");
        assert!(temporaries(&dir.0).is_empty(), "{:?}", temporaries(&dir.0));
        for f in ["a.npy", "b.npy", "c.npy", "d.npy"] {
            assert!(!dir.path(f).exists(), "{f}");
        }
    }
}
