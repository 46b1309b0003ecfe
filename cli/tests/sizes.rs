//! Sizes through `tessera run` (ARCHITECTURE.md §4): a program's loop whose
//! element count overflows is refused with one error line naming it, before
//! anything is written; empty arrays (an extent of 0, whatever the others)
//! run and give empty results, packed dtypes included.

mod common;

use common::{npy_f32, read_npy, tessera, TempDir};

#[test]
fn a_reduction_over_a_loop_whose_size_overflows_is_refused() {
    let dir = TempDir::new("sizes-loop");
    // 3 · 6148914691236517206 wraps to 2 and 2^32 · 2^32 to 0; 2^63 fits a
    // u64 but no array.
    for (op, shape) in [
        ("sum", "[3, 6148914691236517206]"),
        ("mean", "[4294967296, 4294967296]"),
        ("max", "[4294967296, 4294967296]"),
        ("sum", "[4611686018427387904, 2]"),
    ] {
        let call = format!(
            r#"{{"kernel": "reduce",
                 "attrs": {{"op": "{op}", "program": "y0 = 1f32", "shape": {shape}}},
                 "operands": {{}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        );
        dir.write("call.json", call.as_bytes());
        tessera(&dir.0, &["run", "call.json"]).assert_refused(1, "loop shape");
        assert!(
            !dir.path("y.npy").exists(),
            "{op} {shape}: a refused call wrote y"
        );
    }
    // The same program over a loop that fits: 3 · 4 ones.
    dir.write(
        "call.json",
        br#"{"kernel": "reduce", "attrs": {"op": "sum", "program": "y0 = 1f32", "shape": [3, 4]},
             "operands": {}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        read_npy(&dir.path("y.npy")).data,
        12f32.to_le_bytes().to_vec()
    );
}

#[test]
fn empty_arrays_run_into_empty_results() {
    let dir = TempDir::new("sizes-empty");
    dir.write("x.npy", &npy_f32(&[3, 0], &[]));
    // An empty i4 result of [3, 0]: no packing rule applies to it.
    for dtype in ["i4", "u1", "e2m1fn", "f16"] {
        let call = format!(
            r#"{{"kernel": "cast", "operands": {{"x": {{"npy": "x.npy"}}}},
                 "results": {{"y": {{"npy": "y.npy", "dtype": "{dtype}"}}}}}}"#
        );
        dir.write("call.json", call.as_bytes());
        let run = tessera(&dir.0, &["run", "call.json"]);
        assert_eq!(run.code, Some(0), "{dtype}: {}", run.stderr);
        let y = read_npy(&dir.path("y.npy"));
        assert_eq!(y.shape, vec![3, 0], "{dtype}");
        assert!(y.data.is_empty(), "{dtype}");
    }
    // An empty result whose other extents multiply past 2^64 holds no
    // element: it is written (it was refused as an overflow).
    dir.write("e.npy", &npy_f32(&[0], &[]));
    dir.write(
        "call.json",
        br#"{"kernel": "neg", "operands": {"x": {"npy": "e.npy"}},
             "results": {"y": {"npy": "y.npy", "shape": [1099511627776, 1099511627776, 0]}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![1 << 40, 1 << 40, 0]);
    assert!(y.data.is_empty());
    // A sum over the empty axis: three outputs of no term, each +0.
    dir.write(
        "call.json",
        br#"{"kernel": "reduce", "attrs": {"op": "sum", "axes": [1]},
             "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "s.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let s = read_npy(&dir.path("s.npy"));
    assert_eq!(s.shape, vec![3]);
    assert_eq!(s.data, vec![0u8; 12]);
}

#[test]
fn a_tiny_operand_broadcast_into_a_huge_result_is_refused_by_the_result_budget() {
    let dir = TempDir::new("sizes-budget");
    dir.write("x.npy", &npy_f32(&[], &[-0.5]));
    dir.write("y.npy", b"kept");
    // 2^32 f32 results: 16 GiB, held in memory until written.
    let call = br#"{"kernel": "abs", "operands": {"x": {"npy": "x.npy"}},
                    "results": {"y": {"npy": "y.npy", "shape": [4294967296]}}}"#;
    dir.write("call.json", call);
    let run = common::tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("TESSERA_MAX_RESULT_BYTES", "1073741824")],
    );
    run.assert_refused(1, "result budget");
    assert_eq!(std::fs::read(dir.path("y.npy")).unwrap(), b"kept");
    // The default budget (half the machine's memory) refuses it as well on a
    // machine of less than 32 GiB; a budget that fits runs the same call
    // shape at a size that fits.
    let small = br#"{"kernel": "abs", "operands": {"x": {"npy": "x.npy"}},
                     "results": {"y": {"npy": "y.npy", "shape": [4]}}}"#;
    dir.write("call.json", small);
    let run = common::tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("TESSERA_MAX_RESULT_BYTES", "16")],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.data, 0.5f32.to_le_bytes().repeat(4));
    // One byte less than the result and it is refused.
    let run = common::tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("TESSERA_MAX_RESULT_BYTES", "15")],
    );
    run.assert_refused(1, "result budget");
    let run = common::tessera_env(
        &dir.0,
        &["run", "call.json"],
        &[("TESSERA_MAX_RESULT_BYTES", "lots")],
    );
    run.assert_refused(2, "TESSERA_MAX_RESULT_BYTES");
}
