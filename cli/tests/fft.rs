//! `tessera run` of `c2c`, `r2c` and `c2r`: results against a direct DFT in
//! f64 computed here, attributes (axes, direction, norm), a Fortran-order
//! operand, and malformed calls refused without writing.

mod common;

use common::*;
use std::f64::consts::TAU;

fn c64s(data: &[u8]) -> Vec<(f64, f64)> {
    data.chunks_exact(8)
        .map(|c| {
            (
                f32::from_le_bytes(c[..4].try_into().unwrap()) as f64,
                f32::from_le_bytes(c[4..].try_into().unwrap()) as f64,
            )
        })
        .collect()
}

fn npy_c64(shape: &[usize], values: &[(f32, f32)], fortran: bool) -> Vec<u8> {
    let data: Vec<u8> = values
        .iter()
        .flat_map(|(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes()))
        .collect();
    npy_bytes("<c8", fortran, shape, &data, 1)
}

/// The DFT of one line in f64 (sign −1 forward).
fn dft(x: &[(f64, f64)], sign: f64) -> Vec<(f64, f64)> {
    let n = x.len();
    (0..n)
        .map(|k| {
            x.iter()
                .enumerate()
                .fold((0.0, 0.0), |acc, (j, &(re, im))| {
                    let t = sign * TAU * ((j * k) % n) as f64 / n as f64;
                    (
                        acc.0 + re * t.cos() - im * t.sin(),
                        acc.1 + re * t.sin() + im * t.cos(),
                    )
                })
        })
        .collect()
}

fn close(a: &[(f64, f64)], b: &[(f64, f64)], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x.0 - y.0).abs() <= tol && (x.1 - y.1).abs() <= tol,
            "{i}: {x:?} vs {y:?}"
        );
    }
}

fn run_call(dir: &TempDir, json: &str) -> Run {
    dir.write("call.json", json.as_bytes());
    tessera(&dir.0, &["run", "call.json"])
}

#[test]
fn c2c_along_one_axis_with_direction_and_norm() {
    let dir = TempDir::new("fft-c2c");
    let vals: Vec<(f32, f32)> = (0..12)
        .map(|i| (i as f32 * 0.5 - 2.0, (i % 5) as f32 - 1.0))
        .collect();
    dir.write("x.npy", &npy_c64(&[2, 6], &vals, false));
    let run = run_call(
        &dir,
        r#"{"kernel": "c2c", "attrs": {"axes": [1], "direction": "inverse", "norm": "backward"},
            "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!((y.descr.as_str(), y.shape.clone()), ("<c8", vec![2, 6]));
    let got = c64s(&y.data);
    let x64: Vec<(f64, f64)> = vals.iter().map(|&(a, b)| (a as f64, b as f64)).collect();
    for r in 0..2 {
        let want: Vec<(f64, f64)> = dft(&x64[r * 6..r * 6 + 6], 1.0)
            .iter()
            .map(|&(a, b)| (a / 6.0, b / 6.0))
            .collect();
        close(&got[r * 6..r * 6 + 6], &want, 1e-5);
    }
    // Both axes, forward, of the Fortran-order file holding the same values.
    let mut fvals = vec![(0.0f32, 0.0f32); 12];
    for i in 0..2 {
        for j in 0..6 {
            fvals[j * 2 + i] = vals[i * 6 + j];
        }
    }
    dir.write("xf.npy", &npy_c64(&[2, 6], &fvals, true));
    let run = run_call(
        &dir,
        r#"{"kernel": "c2c", "operands": {"x": {"npy": "xf.npy"}}, "results": {"y": {"npy": "y2.npy", "dtype": "c64"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let got = c64s(&read_npy(&dir.path("y2.npy")).data);
    let rows: Vec<Vec<(f64, f64)>> = (0..2).map(|r| dft(&x64[r * 6..r * 6 + 6], -1.0)).collect();
    for j in 0..6 {
        let col = dft(&[rows[0][j], rows[1][j]], -1.0);
        close(&[got[j], got[6 + j]], &col, 1e-4);
    }
}

#[test]
fn r2c_then_c2r_round_trip() {
    let dir = TempDir::new("fft-real");
    let vals: Vec<f32> = (0..10).map(|i| ((i * 7) % 5) as f32 - 1.5).collect();
    dir.write("x.npy", &npy_f32(&[10], &vals));
    let run = run_call(
        &dir,
        r#"{"kernel": "r2c", "attrs": {"axes": [0]}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "b.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let b = read_npy(&dir.path("b.npy"));
    assert_eq!((b.descr.as_str(), b.shape.clone()), ("<c8", vec![6]));
    let x64: Vec<(f64, f64)> = vals.iter().map(|&v| (v as f64, 0.0)).collect();
    close(&c64s(&b.data), &dft(&x64, -1.0)[..6], 1e-4);
    let run = run_call(
        &dir,
        r#"{"kernel": "c2r", "attrs": {"norm": "backward"}, "operands": {"x": {"npy": "b.npy"}}, "results": {"y": {"npy": "z.npy", "shape": [10]}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let z = read_npy(&dir.path("z.npy"));
    assert_eq!((z.descr.as_str(), z.shape.clone()), ("<f4", vec![10]));
    for (i, c) in z.data.chunks_exact(4).enumerate() {
        let v = f32::from_le_bytes(c.try_into().unwrap());
        assert!((v - vals[i]).abs() < 1e-5, "{i}: {v}");
    }
}

#[test]
fn malformed_calls_are_refused_without_writing() {
    let dir = TempDir::new("fft-bad");
    dir.write("x.npy", &npy_c64(&[4], &[(1.0, 0.0); 4], false));
    dir.write("r.npy", &npy_f32(&[4], &[1.0; 4]));
    for (json, code, needle) in [
        (
            r#"{"kernel": "c2c", "attrs": {"axes": []}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            1,
            "axes",
        ),
        (
            r#"{"kernel": "c2c", "attrs": {"axes": [3]}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            1,
            "axis",
        ),
        (
            r#"{"kernel": "c2c", "attrs": {"direction": "up"}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            2,
            "direction",
        ),
        (
            r#"{"kernel": "c2c", "attrs": {"norm": "half"}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            2,
            "norm",
        ),
        (
            r#"{"kernel": "r2c", "attrs": {"direction": "inverse"}, "operands": {"x": {"npy": "r.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            2,
            "direction",
        ),
        (
            r#"{"kernel": "c2c", "operands": {"x": {"npy": "r.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
            1,
            "f32",
        ),
        (
            r#"{"kernel": "r2c", "operands": {"x": {"npy": "r.npy"}}, "results": {"y": {"npy": "y.npy", "shape": [4]}}}"#,
            1,
            "shape",
        ),
        (
            r#"{"kernel": "c2r", "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy", "dtype": "f64"}}}"#,
            1,
            "f64",
        ),
    ] {
        let run = run_call(&dir, json);
        run.assert_refused(code, needle);
        assert!(!dir.path("y.npy").exists(), "{json}: wrote a result");
    }
}

#[test]
fn kernels_lists_the_transforms() {
    let dir = TempDir::new("fft-kernels");
    let run = tessera(&dir.0, &["kernels"]);
    for k in ["c2c", "r2c", "c2r"] {
        assert!(run.stdout.lines().any(|l| l.starts_with(k)), "{k} missing");
    }
}
