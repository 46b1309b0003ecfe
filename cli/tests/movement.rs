//! `tessera run` of `gather`, `gather_ranges`, `scatter` and `unique`:
//! results against values worked out here, attributes, and malformed calls
//! refused without writing a result.

mod common;

use common::*;

fn npy_i64(shape: &[usize], v: &[i64]) -> Vec<u8> {
    let data: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    npy_bytes("<i8", false, shape, &data, 1)
}

fn i64s(data: &[u8]) -> Vec<i64> {
    data.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn run_call(dir: &TempDir, json: &str) -> Run {
    dir.write("call.json", json.as_bytes());
    tessera(&dir.0, &["run", "call.json"])
}

#[test]
fn gather_along_an_axis() {
    let dir = TempDir::new("mv-gather");
    dir.write("x.npy", &npy_f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    dir.write("p.npy", &npy_i64(&[2, 2], &[2, 0, -1, 1]));
    let run = run_call(
        &dir,
        r#"{"kernel": "gather", "attrs": {"axis": 1},
            "operands": {"x": {"npy": "x.npy"}, "positions": {"npy": "p.npy"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!((y.descr.as_str(), y.shape.clone()), ("<f4", vec![2, 2]));
    assert_eq!(f32s(&y.data), vec![3.0, 1.0, 0.0, 5.0]);
}

#[test]
fn gather_ranges_with_and_without_size() {
    let dir = TempDir::new("mv-ranges");
    dir.write("x.npy", &npy_f32(&[5], &[10.0, 11.0, 12.0, 13.0, 14.0]));
    dir.write("s.npy", &npy_i64(&[2], &[3, 0]));
    dir.write("e.npy", &npy_i64(&[2], &[2, 4]));
    let run = run_call(
        &dir,
        r#"{"kernel": "gather_ranges",
            "operands": {"x": {"npy": "x.npy"}, "starts": {"npy": "s.npy"}, "ends": {"npy": "e.npy"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // Run 0: rows 3, 4; run 1: rows 0, 1.
    assert_eq!(
        f32s(&read_npy(&dir.path("y.npy")).data),
        vec![13.0, 14.0, 10.0, 11.0]
    );
    let run = run_call(
        &dir,
        r#"{"kernel": "gather_ranges", "attrs": {"size": 6},
            "operands": {"x": {"npy": "x.npy"}, "starts": {"npy": "s.npy"}, "ends": {"npy": "e.npy"}},
            "results": {"y": {"npy": "y6.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        f32s(&read_npy(&dir.path("y6.npy")).data),
        vec![13.0, 14.0, 10.0, 11.0, 0.0, 0.0]
    );
}

#[test]
fn scatter_add_keeps_order_and_drops_out_of_range() {
    let dir = TempDir::new("mv-scatter");
    dir.write("into.npy", &npy_f32(&[3], &[-0.0, 1.0, 2.0]));
    dir.write("p.npy", &npy_i64(&[4], &[1, 0, 7, 1]));
    dir.write("u.npy", &npy_f32(&[4], &[1e8, -0.0, 5.0, -1e8]));
    let run = run_call(
        &dir,
        r#"{"kernel": "scatter", "attrs": {"combine": "add", "axis": 0, "unique": false},
            "operands": {"into": {"npy": "into.npy"}, "positions": {"npy": "p.npy"}, "updates": {"npy": "u.npy"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = f32s(&read_npy(&dir.path("y.npy")).data);
    // (1 + 1e8) − 1e8 in f32 is 0; −0 + −0 stays −0.
    assert_eq!(y[0].to_bits(), (-0.0f32).to_bits());
    assert_eq!(y[1], (1.0f32 + 1e8) - 1e8);
    assert_eq!(y[2], 2.0);
    let run = run_call(
        &dir,
        r#"{"kernel": "scatter", "operands": {"into": {"npy": "into.npy"}, "positions": {"npy": "p.npy"}, "updates": {"npy": "u.npy"}},
            "results": {"y": {"npy": "ys.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        f32s(&read_npy(&dir.path("ys.npy")).data),
        vec![-0.0, -1e8, 2.0]
    );
}

#[test]
fn unique_numbers_rows_by_first_appearance() {
    let dir = TempDir::new("mv-unique");
    dir.write("k.npy", &npy_i64(&[6, 1], &[7, 3, 7, 7, -2, 3]));
    let run = run_call(
        &dir,
        r#"{"kernel": "unique", "operands": {"keys": {"npy": "k.npy"}},
            "results": {"ids": {"npy": "ids.npy"}, "first": {"npy": "f.npy", "shape": [4]},
                        "counts": {"npy": "c.npy"}, "count": {"npy": "n.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        i64s(&read_npy(&dir.path("ids.npy")).data),
        vec![0, 1, 0, 0, 2, 1]
    );
    assert_eq!(i64s(&read_npy(&dir.path("f.npy")).data), vec![0, 1, 4, 6]);
    assert_eq!(i64s(&read_npy(&dir.path("c.npy")).data), vec![3, 2, 1, 0]);
    let n = read_npy(&dir.path("n.npy"));
    assert_eq!((n.shape.clone(), i64s(&n.data)), (vec![], vec![3]));
}

#[test]
fn malformed_calls_write_nothing() {
    let dir = TempDir::new("mv-bad");
    dir.write("x.npy", &npy_f32(&[3], &[1.0, 2.0, 3.0]));
    dir.write(
        "p32.npy",
        &npy_bytes("<i4", false, &[2], &[0, 0, 0, 0, 1, 0, 0, 0], 1),
    );
    dir.write("p.npy", &npy_i64(&[2], &[0, 1]));
    for (what, json) in [
        (
            "i32 positions",
            r#"{"kernel": "gather", "operands": {"x": {"npy": "x.npy"}, "positions": {"npy": "p32.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
        ),
        (
            "unknown combine",
            r#"{"kernel": "scatter", "attrs": {"combine": "mul"}, "operands": {"into": {"npy": "x.npy"}, "positions": {"npy": "p.npy"}, "updates": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
        ),
        (
            "mismatched updates",
            r#"{"kernel": "scatter", "operands": {"into": {"npy": "x.npy"}, "positions": {"npy": "p.npy"}, "updates": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
        ),
        (
            "axis out of range",
            r#"{"kernel": "gather", "attrs": {"axis": 3}, "operands": {"x": {"npy": "x.npy"}, "positions": {"npy": "p.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
        ),
        (
            "rank-1 keys",
            r#"{"kernel": "unique", "operands": {"keys": {"npy": "p.npy"}}, "results": {"ids": {"npy": "y.npy"}, "first": {"npy": "f.npy"}, "counts": {"npy": "c.npy"}, "count": {"npy": "n.npy"}}}"#,
        ),
        (
            "missing operand",
            r#"{"kernel": "gather_ranges", "operands": {"x": {"npy": "x.npy"}, "starts": {"npy": "p.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
        ),
    ] {
        let run = run_call(&dir, json);
        assert_ne!(run.code, Some(0), "{what}: {}", run.stdout);
        assert!(!dir.path("y.npy").exists(), "{what} wrote y");
        assert!(!dir.path("f.npy").exists(), "{what} wrote first");
    }
}
