//! `tessera run` with `reduce` and `scan` call files: results checked against
//! values computed here in the lane order, a Fortran-order operand, several
//! reductions of one call, and refusals with the right exit code.

mod common;

use common::*;
use tessera_testkit::rng::Rng;

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
            ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5)
                * 2f32.powi((rng.next_u64() % 20) as i32 - 10)
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
    let mut rng = Rng::new(21);
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
    let mut rng = Rng::new(22);
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
    let mut rng = Rng::new(23);
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
fn argmax_scan_writes_int64_positions() {
    let dir = TempDir::new("scan-argmax");
    // Row 0 ties at 3.0 (the first stays); row 1 meets a NaN, which stays.
    let x = [1.0f32, 3.0, 3.0, 2.0, 5.0, -0.0, 0.0, f32::NAN, 9.0, 1.0];
    dir.write("x.npy", &npy_f32(&[2, 5], &x));
    dir.write(
        "call.json",
        br#"{"kernel": "scan", "attrs": {"op": "argmax", "axis": 1},
             "operands": {"x": {"npy": "x.npy"}},
             "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![2, 5]);
    let got: Vec<i64> = y
        .data
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // By hand from the stated order: -0 < +0, a NaN above all.
    assert_eq!(got, vec![0, 1, 1, 1, 4, 0, 1, 2, 2, 2]);
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

/// A program's output reduced and scanned: `sum(x0 * x1)` over the last axis
/// (x1 broadcast as a row) against the lane order written out here, its max
/// in the same call, and a running sum of `x0 * 2` (exact doubling).
#[test]
fn reduce_and_scan_of_a_program() {
    let dir = TempDir::new("reduce-program");
    let mut rng = Rng::new(24);
    let x = values(&mut rng, 15);
    let w = values(&mut rng, 5);
    dir.write("x.npy", &npy_f32(&[3, 5], &x));
    dir.write("w.npy", &npy_f32(&[5], &w));
    dir.write(
        "call.json",
        br#"{"kernel": "reduce",
             "attrs": {"op": ["sum", "max"], "axes": [1], "program": "y0 = x0 * x1"},
             "operands": {"x0": {"npy": "x.npy"}, "x1": {"npy": "w.npy"}},
             "results": {"y0": {"npy": "s.npy"}, "y1": {"npy": "m.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let s = f32s(&read_npy(&dir.path("s.npy")).data);
    let m = f32s(&read_npy(&dir.path("m.npy")).data);
    for r in 0..3 {
        let t: Vec<f32> = (0..5).map(|c| x[r * 5 + c] * w[c]).collect();
        assert_eq!(s[r].to_bits(), lane_sum5(&t).to_bits(), "row {r}");
        let mx = t.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(m[r], mx);
    }
    dir.write(
        "scan.json",
        br#"{"kernel": "scan", "attrs": {"op": "sum", "axis": 1, "program": "y0 = x0 * 2f32"},
             "operands": {"x0": {"npy": "x.npy"}},
             "results": {"y": {"npy": "c.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "scan.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let c = f32s(&read_npy(&dir.path("c.npy")).data);
    for r in 0..3 {
        let mut acc = -0.0f32;
        for j in 0..5 {
            acc += x[r * 5 + j] * 2.0;
            assert_eq!(c[r * 5 + j].to_bits(), acc.to_bits());
        }
    }
    // A program without inputs over a given shape; refusals name the problem.
    dir.write(
        "coord.json",
        br#"{"kernel": "reduce",
             "attrs": {"op": "sum", "program": "y0 = cast<i64>(coord(0))", "shape": [4, 3]},
             "operands": {}, "results": {"y": {"npy": "k.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "coord.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(i64s(&read_npy(&dir.path("k.npy")).data), vec![18]);
    for (body, needle) in [
        (
            r#"{"kernel": "reduce", "attrs": {"op": "sum", "program": "y0 = x0", "terms": "square"},
               "operands": {"x0": {"npy": "x.npy"}}, "results": {"y": {"npy": "e.npy"}}}"#,
            "terms",
        ),
        (
            r#"{"kernel": "reduce", "attrs": {"op": "sum", "program": "y0 = x0 +"},
               "operands": {"x0": {"npy": "x.npy"}}, "results": {"y": {"npy": "e.npy"}}}"#,
            "program",
        ),
        (
            r#"{"kernel": "reduce", "attrs": {"op": "sum", "program": "y0 = x0", "output": 3},
               "operands": {"x0": {"npy": "x.npy"}}, "results": {"y": {"npy": "e.npy"}}}"#,
            "y3",
        ),
        (
            r#"{"kernel": "scan", "attrs": {"op": "sum", "program": "y0 = x0 * x1"},
               "operands": {"x0": {"npy": "x.npy"}, "x2": {"npy": "w.npy"}},
               "results": {"y": {"npy": "e.npy"}}}"#,
            "x1 is missing",
        ),
    ] {
        dir.write("bad.json", body.as_bytes());
        let run = tessera(&dir.0, &["run", "bad.json"]);
        assert_ne!(run.code, Some(0));
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
        assert!(
            !dir.path("e.npy").exists(),
            "a refused call wrote its result"
        );
    }
}

/// The series kernels through `tessera run`, against their stated orders
/// written out here: differences, a rolling max and mean over 3 terms (lane
/// order for three terms: (t0 + t2) + t1), the EMA recurrence; refusals.
#[test]
fn series_calls() {
    let dir = TempDir::new("series");
    let mut rng = Rng::new(25);
    let x = values(&mut rng, 9);
    dir.write("x.npy", &npy_f32(&[9], &x));
    let run_op = |attrs: &str| -> Vec<f32> {
        let body = format!(
            r#"{{"kernel": "series", "attrs": {attrs},
                "operands": {{"x": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        );
        dir.write("s.json", body.as_bytes());
        let run = tessera(&dir.0, &["run", "s.json"]);
        assert_eq!(run.code, Some(0), "{attrs}: {}", run.stderr);
        f32s(&read_npy(&dir.path("y.npy")).data)
    };
    let d = run_op(r#"{"op": "diff"}"#);
    assert_eq!(d.len(), 8);
    for i in 0..8 {
        assert_eq!(d[i].to_bits(), (x[i + 1] - x[i]).to_bits());
    }
    let m = run_op(r#"{"op": "rolling_max", "window": 3}"#);
    let a = run_op(r#"{"op": "rolling_mean", "window": 3}"#);
    assert_eq!((m.len(), a.len()), (7, 7));
    for i in 0..7 {
        let w = &x[i..i + 3];
        assert_eq!(m[i], w[0].max(w[1]).max(w[2]));
        assert_eq!(a[i].to_bits(), (((w[0] + w[2]) + w[1]) / 3.0).to_bits());
    }
    let e = run_op(r#"{"op": "ema", "alpha": 0.25}"#);
    let mut prev = x[0];
    for i in 0..9 {
        if i > 0 {
            prev = 0.25 * x[i] + 0.75 * prev;
        }
        assert_eq!(e[i].to_bits(), prev.to_bits(), "ema {i}");
    }
    for (attrs, needle) in [
        (r#"{"op": "rolling_mean"}"#, "window"),
        (r#"{"op": "rolling_mean", "window": 10}"#, "window 10"),
        (r#"{"op": "ema", "alpha": 1.5}"#, "alpha"),
        (r#"{"op": "cumsum"}"#, "unknown op"),
    ] {
        let body = format!(
            r#"{{"kernel": "series", "attrs": {attrs},
                "operands": {{"x": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "bad.npy"}}}}}}"#
        );
        dir.write("b.json", body.as_bytes());
        let run = tessera(&dir.0, &["run", "b.json"]);
        assert_ne!(run.code, Some(0));
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
        assert!(!dir.path("bad.npy").exists());
    }
}

#[test]
fn fast_sum_scan_in_log_shift_blocks() {
    let dir = TempDir::new("scan-fast");
    let mut rng = Rng::new(29);
    let n = 40;
    let x = values(&mut rng, 2 * n);
    dir.write("x.npy", &npy_f32(&[2, n], &x));
    dir.write(
        "call.json",
        br#"{"kernel": "scan", "attrs": {"op": "fast_sum", "axis": 1},
             "operands": {"x": {"npy": "x.npy"}},
             "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let got = f32s(&read_npy(&dir.path("y.npy")).data);
    // The stated order: blocks of 16, Hillis–Steele inside, the previous
    // block's last output added to each.
    for r in 0..2 {
        let line = &x[r * n..(r + 1) * n];
        let mut carry: Option<f32> = None;
        for (b, block) in line.chunks(16).enumerate() {
            let mut v = block.to_vec();
            let mut d = 1;
            while d < 16 {
                let prev = v.clone();
                for j in d..v.len() {
                    v[j] = prev[j] + prev[j - d];
                }
                d *= 2;
            }
            for (j, t) in v.iter_mut().enumerate() {
                if let Some(c) = carry {
                    *t += c;
                }
                assert_eq!(
                    got[r * n + b * 16 + j].to_bits(),
                    t.to_bits(),
                    "row {r} element {}",
                    b * 16 + j
                );
            }
            carry = v.last().copied();
        }
    }
    // An integer operand is refused.
    dir.write(
        "i.npy",
        &common::npy_bytes("<i4", false, &[4], &[0u8; 16], 1),
    );
    dir.write(
        "call.json",
        br#"{"kernel": "scan", "attrs": {"op": "fast_prod"},
             "operands": {"x": {"npy": "i.npy"}},
             "results": {"y": {"npy": "z.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_ne!(run.code, Some(0));
    assert!(!dir.path("z.npy").exists());
}
