//! Every field of a call file applies or is refused with its name: results'
//! shapes that contradict each other or the result, `"packed"` on results
//! that are not sub-byte, attributes given to an op they do not belong to, a
//! tensor scale no encoder writes. And a refusal does not repeat a
//! megabyte value back: every message is one short line.

mod common;

use common::*;

fn run_call(dir: &TempDir, json: &str) -> Run {
    dir.write("call.json", json.as_bytes());
    tessera(&dir.0, &["run", "call.json"])
}

/// Assert a refusal naming `needle` that wrote none of `results`.
fn refused(dir: &TempDir, case: &str, json: &str, code: i32, needle: &str, results: &[&str]) {
    for r in results {
        let _ = std::fs::remove_file(dir.path(r));
    }
    let run = run_call(dir, json);
    std::panic::catch_unwind(|| run.assert_refused(code, needle))
        .unwrap_or_else(|_| panic!("case `{case}`: {run:?}"));
    for r in results {
        assert!(
            !dir.path(r).exists(),
            "case `{case}`: result {r} was written"
        );
    }
}

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn packed_is_refused_on_results_that_are_not_sub_byte() {
    let dir = TempDir::new("packed");
    dir.write("x.npy", &npy_f32(&[2, 8], &[0.5; 16]));
    dir.write("v.npy", &npy_f32(&[8], &[0.25; 8]));
    dir.write("i.npy", &npy_bytes("|i1", false, &[2, 2], &[1, 2, 3, 4], 1));
    let p = r#", "packed": true"#;
    let cases: Vec<(&str, String)> = vec![
        (
            "map",
            format!(
                r#"{{"kernel": "map", "attrs": {{"program": "y0 = x0 * x0"}},
            "operands": {{"x0": {{"npy": "x.npy"}}}}, "results": {{"y0": {{"npy": "out.npy"{p}}}}}}}"#
            ),
        ),
        (
            "reduce",
            format!(
                r#"{{"kernel": "reduce", "attrs": {{"op": "sum", "axes": [1]}},
            "operands": {{"x": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "out.npy"{p}}}}}}}"#
            ),
        ),
        (
            "scan",
            format!(
                r#"{{"kernel": "scan", "attrs": {{"op": "sum", "axis": 1}},
            "operands": {{"x": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "out.npy"{p}}}}}}}"#
            ),
        ),
        (
            "contract",
            format!(
                r#"{{"kernel": "contract", "attrs": {{"contracting": [[1, 0]]}},
            "operands": {{"a": {{"npy": "x.npy"}}, "b": {{"npy": "v.npy"}}}},
            "results": {{"y": {{"npy": "out.npy"{p}}}}}}}"#
            ),
        ),
        (
            "series",
            format!(
                r#"{{"kernel": "series", "attrs": {{"op": "diff"}},
            "operands": {{"x": {{"npy": "v.npy"}}}}, "results": {{"y": {{"npy": "out.npy"{p}}}}}}}"#
            ),
        ),
        (
            "random",
            format!(
                r#"{{"kernel": "random", "attrs": {{"seed": 1}}, "operands": {{}},
            "results": {{"y": {{"npy": "out.npy", "dtype": "f32", "shape": [4]{p}}}}}}}"#
            ),
        ),
        (
            "polyval",
            format!(
                r#"{{"kernel": "polyval", "attrs": {{"coeffs": [1, 2]}},
            "operands": {{"x": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "out.npy"{p}}}}}}}"#
            ),
        ),
        (
            "sum_lanes",
            format!(
                r#"{{"kernel": "sum_lanes",
            "operands": {{"x": {{"npy": "v.npy"}}}}, "results": {{"y": {{"npy": "out.npy"{p}}}}}}}"#
            ),
        ),
        (
            "qmatmul_i8",
            format!(
                r#"{{"kernel": "qmatmul_i8",
            "operands": {{"a": {{"npy": "i.npy"}}, "b": {{"npy": "i.npy"}}}},
            "results": {{"y": {{"npy": "out.npy"{p}}}}}}}"#
            ),
        ),
    ];
    for (case, json) in cases {
        refused(&dir, case, &json, 2, "packed", &["out.npy"]);
    }
}

#[test]
fn contradictory_result_shapes_are_refused() {
    let dir = TempDir::new("shapes");
    dir.write("x.npy", &npy_f32(&[4], &[1.0, 2.0, 4.0, 8.0]));
    // map: one output's shape against another's.
    refused(
        &dir,
        "map y0 and y1",
        r#"{"kernel": "map", "attrs": {"program": "y0 = x0 * x0; y1 = x0 + x0"},
            "operands": {"x0": {"npy": "x.npy"}},
            "results": {"y0": {"npy": "a.npy", "shape": [4]}, "y1": {"npy": "b.npy", "shape": [2, 4]}}}"#,
        2,
        "shape",
        &["a.npy", "b.npy"],
    );
    // series: a shape other than the one the op writes (diff of 4: 3).
    for (case, shape) in [
        ("series [4]", "[4]"),
        ("series []", "[]"),
        ("series [1, 3]", "[1, 3]"),
    ] {
        refused(
            &dir,
            case,
            &format!(
                r#"{{"kernel": "series", "attrs": {{"op": "diff"}},
                    "operands": {{"x": {{"npy": "x.npy"}}}},
                    "results": {{"y": {{"npy": "y.npy", "shape": {shape}}}}}}}"#
            ),
            1,
            "shape",
            &["y.npy"],
        );
    }
    // The shape the op writes is accepted, and the values are the differences.
    let run = run_call(
        &dir,
        r#"{"kernel": "series", "attrs": {"op": "diff"},
            "operands": {"x": {"npy": "x.npy"}},
            "results": {"y": {"npy": "y.npy", "shape": [3]}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(f32s(&read_npy(&dir.path("y.npy")).data), [1.0, 2.0, 4.0]);
}

#[test]
fn series_attributes_apply_to_their_ops_only() {
    let dir = TempDir::new("series-attrs");
    dir.write("x.npy", &npy_f32(&[4], &[1.0, 2.0, 4.0, 8.0]));
    let call = |attrs: &str| {
        format!(
            r#"{{"kernel": "series", "attrs": {attrs},
                "operands": {{"x": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        )
    };
    for (case, attrs, needle) in [
        (
            "window with diff",
            r#"{"op": "diff", "window": 2}"#,
            "window",
        ),
        (
            "alpha with rolling_mean",
            r#"{"op": "rolling_mean", "window": 2, "alpha": 0.5}"#,
            "alpha",
        ),
        (
            "centre with ema",
            r#"{"op": "ema", "alpha": 0.5, "centre": 1}"#,
            "centre",
        ),
        (
            "window with sum_squared_deviations",
            r#"{"op": "sum_squared_deviations", "window": 3}"#,
            "window",
        ),
        (
            "centre beyond f32",
            r#"{"op": "sum_squared_deviations", "centre": 1e39}"#,
            "centre",
        ),
    ] {
        refused(&dir, case, &call(attrs), 2, needle, &["y.npy"]);
    }
    // Each attribute with its own op runs: sum of (x - 1)^2 = 0 + 1 + 9 + 49.
    let run = run_call(
        &dir,
        &call(r#"{"op": "sum_squared_deviations", "centre": 1}"#),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(f32s(&read_npy(&dir.path("y.npy")).data), [59.0]);
}

#[test]
fn a_tensor_scale_must_be_finite_and_positive() {
    let dir = TempDir::new("tensor-scale");
    // 32 NVFP4 values (a whole MXFP8 block too), all code 2 (1.0), two block
    // scales 0x38 (UE4M3 1.0).
    dir.write("codes.npy", &npy_u8(&[16], &[0x22; 16]));
    dir.write("scales.npy", &npy_u8(&[2], &[0x38; 2]));
    let decode = r#"{"kernel": "decode", "attrs": {"format": "nvfp4"},
        "operands": {"codes": {"npy": "codes.npy"}, "scales": {"npy": "scales.npy"},
                     "tensor_scale": {"npy": "t.npy"}},
        "results": {"y": {"npy": "y.npy"}}}"#;
    let transcode = r#"{"kernel": "transcode", "attrs": {"from": "nvfp4", "to": "mxfp8_e4m3"},
        "operands": {"codes": {"npy": "codes.npy"}, "scales": {"npy": "scales.npy"},
                     "tensor_scale": {"npy": "t.npy"}},
        "results": {"codes": {"npy": "c2.npy"}, "scales": {"npy": "s2.npy"}}}"#;
    for t in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, -2.0] {
        dir.write("t.npy", &npy_f32(&[], &[t]));
        refused(
            &dir,
            &format!("decode, t = {t}"),
            decode,
            1,
            "tensor_scale",
            &["y.npy"],
        );
        refused(
            &dir,
            &format!("transcode, t = {t}"),
            transcode,
            1,
            "tensor_scale",
            &["c2.npy", "s2.npy"],
        );
    }
    // A positive tensor scale multiplies every value: 1.0 * 1.0 * t.
    for t in [2.0f32, f32::MIN_POSITIVE / 4.0] {
        dir.write("t.npy", &npy_f32(&[], &[t]));
        let run = run_call(&dir, decode);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert_eq!(f32s(&read_npy(&dir.path("y.npy")).data), vec![t; 32]);
    }
}

#[test]
fn messages_do_not_repeat_long_values() {
    let dir = TempDir::new("long");
    dir.write("x.npy", &npy_f32(&[2], &[1.0, 2.0]));
    let long = "q".repeat(1 << 20);
    let neg = |x: &str, y: &str| {
        format!(
            r#"{{"kernel": "neg", "operands": {{"x": {{"npy": "{x}"}}}}, "results": {{"y": {{"npy": "{y}"}}}}}}"#
        )
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "kernel name",
            format!(r#"{{"kernel": "{long}", "operands": {{}}, "results": {{}}}}"#),
            "unknown kernel",
        ),
        (
            "unknown call key",
            format!(r#"{{"kernel": "neg", "{long}": 1, "operands": {{}}, "results": {{}}}}"#),
            "bad call file",
        ),
        (
            "repeated key",
            format!(
                r#"{{"kernel": "neg", "operands": {{"{long}": {{"npy": "x.npy"}}, "{long}": {{"npy": "x.npy"}}}}, "results": {{}}}}"#
            ),
            "twice",
        ),
        (
            "operand name",
            format!(
                r#"{{"kernel": "neg", "operands": {{"{long}": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
            ),
            "takes operands",
        ),
        (
            "attribute name",
            format!(
                r#"{{"kernel": "neg", "attrs": {{"{long}": 1}}, "operands": {{"x": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
            ),
            "attributes",
        ),
        (
            "dtype",
            format!(
                r#"{{"kernel": "neg", "operands": {{"x": {{"npy": "x.npy", "dtype": "{long}"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
            ),
            "unknown dtype",
        ),
        ("operand path", neg(&long, "y.npy"), "operand x"),
        (
            "result path",
            neg("x.npy", &format!("{long}/y.npy")),
            "result y",
        ),
        (
            "tier",
            format!(
                r#"{{"kernel": "neg", "tier": "{long}", "operands": {{"x": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
            ),
            "tier",
        ),
        (
            "program",
            format!(
                r#"{{"kernel": "map", "attrs": {{"program": "y0 = x0 + {long}"}}, "operands": {{"x0": {{"npy": "x.npy"}}}}, "results": {{"y0": {{"npy": "y.npy"}}}}}}"#
            ),
            "program",
        ),
        (
            "string value",
            format!(
                r#"{{"kernel": "neg", "operands": {{"x": {{"npy": "x.npy", "packed": "{long}"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
            ),
            "bad call file",
        ),
    ];
    for (case, json, needle) in cases {
        let run = run_call(&dir, &json);
        assert!(
            matches!(run.code, Some(1) | Some(2)),
            "case `{case}`: exit {:?}",
            run.code
        );
        let line = run.stderr.lines().next().unwrap_or("");
        assert!(
            run.stderr.len() < 2000,
            "case `{case}`: a message of {} bytes: {}…",
            run.stderr.len(),
            &line[..line.len().min(300)]
        );
        std::panic::catch_unwind(|| run.assert_refused(run.code.unwrap_or(0), needle))
            .unwrap_or_else(|_| panic!("case `{case}`: {}", run.stderr));
    }
}
