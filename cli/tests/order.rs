//! `tessera run` of the ordering kernels: results against models computed
//! here (a stable sort by the stated order, counts, set walks), and
//! malformed calls refused without writing.

mod common;

use common::*;

fn i64s(d: &[u8]) -> Vec<i64> {
    d.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn f64s(d: &[u8]) -> Vec<f64> {
    d.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn sort_and_argsort_with_nans_and_top_k() {
    let dir = TempDir::new("order-sort");
    let x = [2.0f32, f32::NAN, -0.0, 0.0, -1.0, 2.0, 5.0, -f32::NAN];
    dir.write("x.npy", &npy_f32(&[2, 4], &x));
    let run = run_call(
        &dir,
        r#"{"kernel": "sort", "attrs": {"axis": 1},
            "operands": {"x": {"npy": "x.npy"}},
            "results": {"values": {"npy": "v.npy"}, "positions": {"npy": "p.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let p = i64s(&read_npy(&dir.path("p.npy")).data);
    // Row 0: 2, NaN, -0, +0 -> -0, +0, 2, NaN. Row 1: -1, 2, 5, -NaN.
    assert_eq!(p, [2, 3, 0, 1, 0, 1, 2, 3]);
    let v = f32s(&read_npy(&dir.path("v.npy")).data);
    let want: Vec<u32> = p
        .iter()
        .enumerate()
        .map(|(j, &i)| x[(j / 4) * 4 + i as usize].to_bits())
        .collect();
    assert_eq!(v.iter().map(|f| f.to_bits()).collect::<Vec<_>>(), want);
    let run = run_call(
        &dir,
        r#"{"kernel": "argsort", "attrs": {"axis": 1, "descending": true, "k": 2},
            "operands": {"x": {"npy": "x.npy"}},
            "results": {"positions": {"npy": "q.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let q = read_npy(&dir.path("q.npy"));
    assert_eq!(q.shape, vec![2, 2]);
    assert_eq!(i64s(&q.data), [1, 0, 3, 2]);
    // IEEE totalOrder: -NaN first, -0 before +0, +NaN last.
    let run = run_call(
        &dir,
        r#"{"kernel": "argsort", "attrs": {"axis": 1, "order": "total"},
            "operands": {"x": {"npy": "x.npy"}},
            "results": {"positions": {"npy": "t.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        i64s(&read_npy(&dir.path("t.npy")).data),
        [2, 3, 0, 1, 3, 0, 1, 2]
    );
}

#[test]
fn median_quantile_and_search() {
    let dir = TempDir::new("order-stats");
    dir.write(
        "x.npy",
        &npy_f32(&[2, 4], &[4.0, 1.0, 3.0, 2.0, 1.0, f32::NAN, 0.0, 0.0]),
    );
    let run = run_call(
        &dir,
        r#"{"kernel": "quantile", "attrs": {"q": 0.25, "axis": 1},
            "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = f64s(&read_npy(&dir.path("y.npy")).data);
    // Row 0 sorted 1 2 3 4: h = 0.75, 1 + (2 - 1)·0.75 computed as 2 - 1·0.25.
    assert_eq!(y[0], 1.75);
    assert!(y[1].is_nan());
    let run = run_call(
        &dir,
        r#"{"kernel": "median", "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "m.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(f64s(&read_npy(&dir.path("m.npy")).data)[0], 2.5);
    dir.write("a.npy", &npy_f32(&[5], &[-1.0, 0.0, 0.0, 2.0, f32::NAN]));
    dir.write("q.npy", &npy_f32(&[4], &[0.0, -0.0, 3.0, f32::NAN]));
    let run = run_call(
        &dir,
        r#"{"kernel": "lower_bound", "operands": {"a": {"npy": "a.npy"}, "q": {"npy": "q.npy"}},
            "results": {"y": {"npy": "l.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(i64s(&read_npy(&dir.path("l.npy")).data), [1, 1, 4, 4]);
}

#[test]
fn sets_compress_and_partition() {
    let dir = TempDir::new("order-sets");
    dir.write("a.npy", &npy_i64(&[5], &[-5, 1, 3, 7, 9]));
    dir.write("b.npy", &npy_i64(&[4], &[1, 2, 7, 100]));
    for (k, want) in [("intersect", vec![1i64, 7]), ("difference", vec![-5, 3, 9])] {
        let run = run_call(
            &dir,
            &format!(
                r#"{{"kernel": "{k}", "operands": {{"a": {{"npy": "a.npy"}}, "b": {{"npy": "b.npy"}}}},
                    "results": {{"y": {{"npy": "{k}.npy"}}}}}}"#
            ),
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let y = read_npy(&dir.path(&format!("{k}.npy")));
        assert_eq!(y.shape, vec![want.len()]);
        assert_eq!(i64s(&y.data), want);
    }
    dir.write("m.npy", &npy_bytes("|b1", false, &[5], &[1, 0, 0, 2, 1], 1));
    dir.write("x.npy", &npy_f32(&[5], &[3.0, 1.0, 4.0, 1.5, 9.0]));
    let run = run_call(
        &dir,
        r#"{"kernel": "compress", "operands": {"x": {"npy": "x.npy"}, "mask": {"npy": "m.npy"}},
            "results": {"y": {"npy": "c.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(f32s(&read_npy(&dir.path("c.npy")).data), [3.0, 1.5, 9.0]);
    dir.write("p.npy", &npy_f32(&[1], &[3.0]));
    let run = run_call(
        &dir,
        r#"{"kernel": "partition", "operands": {"x": {"npy": "x.npy"}, "pivot": {"npy": "p.npy"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("2 below"), "{}", run.stdout);
    assert_eq!(
        f32s(&read_npy(&dir.path("y.npy")).data),
        [1.0, 1.5, 3.0, 4.0, 9.0]
    );
}

#[test]
fn malformed_calls_are_refused_without_writing() {
    let dir = TempDir::new("order-bad");
    dir.write("x.npy", &npy_f32(&[2, 3], &[1.0; 6]));
    dir.write("a.npy", &npy_f32(&[3], &[1.0; 3]));
    for (json, code, needle) in [
        (
            r#"{"kernel": "sort", "attrs": {"axis": 2}, "operands": {"x": {"npy": "x.npy"}}, "results": {"values": {"npy": "y.npy"}, "positions": {"npy": "z.npy"}}}"#,
            1,
            "axis",
        ),
        (
            r#"{"kernel": "sort", "attrs": {"k": 4}, "operands": {"x": {"npy": "x.npy"}}, "results": {"values": {"npy": "y.npy"}, "positions": {"npy": "z.npy"}}}"#,
            1,
            "more than",
        ),
        (
            r#"{"kernel": "sort", "attrs": {"descending": 1}, "operands": {"x": {"npy": "x.npy"}}, "results": {"values": {"npy": "y.npy"}, "positions": {"npy": "z.npy"}}}"#,
            2,
            "descending",
        ),
        (
            r#"{"kernel": "sort", "attrs": {"order": "up"}, "operands": {"x": {"npy": "x.npy"}}, "results": {"values": {"npy": "y.npy"}, "positions": {"npy": "z.npy"}}}"#,
            2,
            "order",
        ),
        (
            r#"{"kernel": "quantile", "attrs": {"q": 2}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            1,
            "q",
        ),
        (
            r#"{"kernel": "intersect", "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "a.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            1,
            "f32",
        ),
        (
            r#"{"kernel": "lower_bound", "operands": {"a": {"npy": "x.npy"}, "q": {"npy": "a.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            1,
            "1-D",
        ),
    ] {
        let run = run_call(&dir, json);
        run.assert_refused(code, needle);
        assert!(!dir.path("y.npy").exists(), "{json}: wrote a result");
        assert!(!dir.path("z.npy").exists(), "{json}: wrote a result");
    }
}

#[test]
fn kernels_lists_the_ordering_kernels() {
    let dir = TempDir::new("order-kernels");
    let run = tessera(&dir.0, &["kernels"]);
    for k in [
        "sort",
        "argsort",
        "median",
        "quantile",
        "lower_bound",
        "intersect",
        "difference",
        "compress",
        "partition",
    ] {
        assert!(run.stdout.lines().any(|l| l.starts_with(k)), "{k} missing");
    }
}
