//! `tessera run` with `reduce` and `scan` call files: results checked against
//! values computed here in the lane order, a Fortran-order operand, several
//! reductions of one call, and refusals with the right exit code.

mod common;

use common::*;

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn i64s(data: &[u8]) -> Vec<i64> {
    data.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn values(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            ((rng.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5)
                * 2f32.powi((rng.next() % 20) as i32 - 10)
        })
        .collect()
}

/// The lane order for five terms: lanes 0..5 hold one term each; lane 0
/// takes lane 4, then lanes 0 and 1 take 2 and 3, then lane 0 takes lane 1.
fn lane_sum5(t: &[f32]) -> f32 {
    assert_eq!(t.len(), 5);
    ((0.0 + t[0] + (0.0 + t[4])) + (0.0 + t[2])) + ((0.0 + t[1]) + (0.0 + t[3]))
}

#[test]
fn reduce_sum_over_the_last_axis() {
    let dir = TempDir::new("reduce-sum");
    let mut rng = Rng(21);
    let x = values(&mut rng, 15);
    dir.write("x.npy", &npy_f32(&[3, 5], &x));
    dir.write(
        "call.json",
        br#"{"kernel": "reduce", "attrs": {"op": "sum", "axes": [1]},
             "operands": {"x": {"npy": "x.npy", "dtype": "f32"}},
             "results": {"y": {"npy": "y.npy"}}, "threads": 2}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(
        (y.descr.as_str(), y.shape.as_slice()),
        ("<f4", &[3usize][..])
    );
    let got = f32s(&y.data);
    for r in 0..3 {
        assert_eq!(got[r].to_bits(), lane_sum5(&x[r * 5..r * 5 + 5]).to_bits());
    }
}

#[test]
fn several_reductions_of_a_fortran_operand() {
    let dir = TempDir::new("reduce-many");
    let mut rng = Rng(22);
    // Logical (5, 2) stored column-major: element (i, j) at j * 5 + i.
    let stored = values(&mut rng, 10);
    let data: Vec<u8> = stored.iter().flat_map(|v| v.to_le_bytes()).collect();
    dir.write("x.npy", &npy_bytes("<f4", true, &[5, 2], &data, 1));
    dir.write(
        "call.json",
        br#"{"kernel": "reduce", "attrs": {"op": ["sum", "argmax"], "axes": [0]},
             "operands": {"x": {"npy": "x.npy"}},
             "results": {"y0": {"npy": "s.npy", "dtype": "f64"}, "y1": {"npy": "a.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let s = read_npy(&dir.path("s.npy"));
    assert_eq!(s.descr, "<f8");
    let a = read_npy(&dir.path("a.npy"));
    assert_eq!(a.descr, "<i8");
    let sums: Vec<f64> = s
        .data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let args = i64s(&a.data);
    for j in 0..2 {
        let col = &stored[j * 5..j * 5 + 5];
        assert_eq!(sums[j], lane_sum5(col) as f64);
        let mut best = 0;
        for i in 1..5 {
            if col[i] > col[best] {
                best = i;
            }
        }
        assert_eq!(args[j], best as i64);
    }
}

#[test]
fn scan_sum_along_an_axis() {
    let dir = TempDir::new("scan-sum");
    let mut rng = Rng(23);
    let x = values(&mut rng, 12);
    dir.write("x.npy", &npy_f32(&[3, 4], &x));
    dir.write(
        "call.json",
        br#"{"kernel": "scan", "attrs": {"op": "sum", "axis": 1},
             "operands": {"x": {"npy": "x.npy"}},
             "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![3, 4]);
    let got = f32s(&y.data);
    for r in 0..3 {
        let mut acc = -0.0f32;
        for c in 0..4 {
            acc += x[r * 4 + c];
            assert_eq!(got[r * 4 + c].to_bits(), acc.to_bits());
        }
    }
}

#[test]
fn reduce_and_scan_refusals() {
    let dir = TempDir::new("reduce-bad");
    dir.write("x.npy", &npy_f32(&[2, 3], &[1.0; 6]));
    let cases: [(&[u8], i32, &str); 5] = [
        (
            br#"{"kernel": "reduce", "attrs": {"op": "median"}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            2,
            "unknown reduction",
        ),
        (
            br#"{"kernel": "reduce", "attrs": {"op": "sum", "axes": [2]}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            1,
            "out of range",
        ),
        (
            br#"{"kernel": "reduce", "attrs": {"op": "sum", "axes": [0]}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy", "shape": [2]}}}"#,
            1,
            "shape",
        ),
        (
            br#"{"kernel": "scan", "attrs": {"op": "sum", "axis": "x"}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            2,
            "axis",
        ),
        (
            br#"{"kernel": "reduce", "attrs": {"op": "argmax"}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy", "dtype": "f32"}}}"#,
            1,
            "i64",
        ),
    ];
    for (call, code, needle) in cases {
        dir.write("call.json", call);
        tessera(&dir.0, &["run", "call.json"]).assert_refused(code, needle);
        assert!(!dir.path("y.npy").exists(), "a refused call wrote y");
    }
}
