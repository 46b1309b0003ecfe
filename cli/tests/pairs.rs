//! `tessera run` of the pair kinds and the compensated calls: `two_sum` of
//! two f32 files into a df32 result (a complex64 .npy: hi real, lo
//! imaginary) whose parts add to the exact sum; pair `add` of df32 files;
//! `reduce` with op `sum2` and terms `product` (Dot2) against the exact dot
//! product; a doubling scan; a pair-kind program through `map`; and `tessera
//! probe`.

mod common;

use common::*;

fn c64_parts(d: &[u8]) -> Vec<(f32, f32)> {
    d.chunks_exact(8)
        .map(|c| {
            (
                f32::from_le_bytes(c[..4].try_into().unwrap()),
                f32::from_le_bytes(c[4..].try_into().unwrap()),
            )
        })
        .collect()
}

fn npy_c64(shape: &[usize], parts: &[(f32, f32)]) -> Vec<u8> {
    let data: Vec<u8> = parts
        .iter()
        .flat_map(|(h, l)| h.to_le_bytes().into_iter().chain(l.to_le_bytes()))
        .collect();
    npy_bytes("<c8", false, shape, &data, 1)
}

#[test]
fn two_sum_writes_a_pair_whose_parts_add_exactly() {
    let a = [1.0f32, 1e8, -3.5, 0.1];
    let b = [2f32.powi(-30), 1.0, 3.5, 0.2];
    let dir = TempDir::new("pairs-two-sum");
    dir.write("a.npy", &npy_f32(&[4], &a));
    dir.write("b.npy", &npy_f32(&[4], &b));
    let run = run_call(
        &dir,
        r#"{"kernel": "two_sum", "operands": {"x0": {"npy": "a.npy"}, "x1": {"npy": "b.npy"}},
            "results": {"y": {"npy": "s.npy", "dtype": "df32"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let back = read_npy(&dir.path("s.npy"));
    assert_eq!(back.descr, "<c8");
    for (i, (h, l)) in c64_parts(&back.data).into_iter().enumerate() {
        assert_eq!(h, a[i] + b[i]);
        assert_eq!(
            h as f64 + l as f64,
            a[i] as f64 + b[i] as f64,
            "element {i}"
        );
    }
    // Pair add of the results with themselves: exactly twice.
    let parts = c64_parts(&back.data);
    dir.write("p.npy", &npy_c64(&[4], &parts));
    let run = run_call(
        &dir,
        r#"{"kernel": "add", "operands": {"x0": {"npy": "p.npy", "dtype": "df32"}, "x1": {"npy": "p.npy", "dtype": "df32"}},
            "results": {"y": {"npy": "q.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for (i, (h, l)) in c64_parts(&read_npy(&dir.path("q.npy")).data)
        .into_iter()
        .enumerate()
    {
        assert_eq!(
            h as f64 + l as f64,
            2.0 * (a[i] as f64 + b[i] as f64),
            "element {i}"
        );
    }
}

#[test]
fn sum2_of_products_is_the_compensated_dot() {
    // x·y = 1 + 2^-40 − 1 exactly 2^-40: the plain dot loses it in f32.
    let x = [1.0f32, 1.0 + 2f32.powi(-20), -1.0, -1.0];
    let y = [1.0f32, 1.0 + 2f32.powi(-20), 1.0, 2f32.powi(-19)];
    let exact: f64 = x.iter().zip(&y).map(|(a, b)| *a as f64 * *b as f64).sum();
    let dir = TempDir::new("pairs-dot2");
    dir.write("x.npy", &npy_f32(&[4], &x));
    dir.write("y.npy", &npy_f32(&[4], &y));
    let run = run_call(
        &dir,
        r#"{"kernel": "reduce", "attrs": {"op": "sum2", "terms": "product"},
            "operands": {"x": {"npy": "x.npy"}, "x1": {"npy": "y.npy"}},
            "results": {"y": {"npy": "d.npy", "dtype": "f64"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let d = f64::from_le_bytes(read_npy(&dir.path("d.npy")).data[..8].try_into().unwrap());
    assert_eq!(d, exact);
}

#[test]
fn doubling_scan_and_pair_programs() {
    let x: Vec<f32> = (0..9).map(|i| 0.1 * i as f32 + 1.0).collect();
    let dir = TempDir::new("pairs-scan");
    dir.write("x.npy", &npy_f32(&[9], &x));
    let run = run_call(
        &dir,
        r#"{"kernel": "scan", "attrs": {"op": "sum_doubling"},
            "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "s.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let got = f32s(&read_npy(&dir.path("s.npy")).data);
    // The level model.
    let mut level = x.clone();
    let mut d = 1;
    while d < level.len() {
        let prev = level.clone();
        for i in d..level.len() {
            level[i] = prev[i - d] + prev[i];
        }
        d *= 2;
    }
    assert_eq!(got, level);
    // A program of pair kinds: the error of x + x·x, rounded.
    let run = run_call(
        &dir,
        r#"{"kernel": "map", "attrs": {"program": "t = two_sum(x0, x0) + two_prod(x0, x0); y0 = pair_lo(t)"},
            "operands": {"x0": {"npy": "x.npy"}}, "results": {"y0": {"npy": "m.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let got = f32s(&read_npy(&dir.path("m.npy")).data);
    for (i, &v) in x.iter().enumerate() {
        let exact = 2.0 * v as f64 + v as f64 * v as f64;
        let hi = exact as f32;
        assert_eq!(
            got[i] as f64,
            ((exact - hi as f64) as f32) as f64,
            "element {i}"
        );
    }
}

#[test]
fn probe_prints_the_table_and_passes() {
    let dir = TempDir::new("probe");
    let run = tessera(&dir.0, &["probe"]);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("gemm f32 packed"), "{}", run.stdout);
    assert!(run.stdout.contains("fft c2c f32 n=1009"), "{}", run.stdout);
    assert!(run.stdout.contains("probes passed"), "{}", run.stdout);
    // Arguments are refused.
    assert_eq!(tessera(&dir.0, &["probe", "extra"]).code, Some(2));
}

#[test]
fn spline_and_terms_calls() {
    let dir = TempDir::new("spline-terms");
    // A one-interval linear spline s = 2t + 1, t = ln(x / 1): y = 2 ln x + 1.
    dir.write("x.npy", &npy_f32(&[3], &[1.0, 2.0, 4.0]));
    let run = run_call(
        &dir,
        r#"{"kernel": "spline",
            "attrs": {"log_e0": 0, "width": 2, "coefficients": [[0, 0, 2, 1]],
                      "x_min": 0.5, "x_max": 5, "above": 9, "output": "linear"},
            "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = f32s(&read_npy(&dir.path("y.npy")).data);
    for (x, y) in [1.0f64, 2.0, 4.0].iter().zip(y) {
        assert!((y as f64 - (2.0 * x.ln() + 1.0)).abs() < 1e-6, "{x}: {y}");
    }
    // Terms: 2 real terms of 2 points, combined with weights 0.5 and 0.25.
    let data: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    dir.write("t.npy", &npy_bytes("<f8", false, &[2, 2], &data, 1));
    let run = run_call(
        &dir,
        r#"{"kernel": "terms", "attrs": {"weights": [0.5, 0.25]},
            "operands": {"terms": {"npy": "t.npy"}}, "results": {"y": {"npy": "c.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(f32s(&read_npy(&dir.path("c.npy")).data), vec![1.25, 2.0]);
    // Its exponential: exp(1.25), exp(2) as complex64.
    let run = run_call(
        &dir,
        r#"{"kernel": "terms", "attrs": {"weights": [0.5, 0.25], "mode": "exp"},
            "operands": {"terms": {"npy": "t.npy"}}, "results": {"y": {"npy": "e.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let e = c64_parts(&read_npy(&dir.path("e.npy")).data);
    assert!((e[0].0 as f64 - 1.25f64.exp()).abs() < 1e-6 && e[0].1 == 0.0);
    // The φ functions: y = e^x and moments [3, 2] of k!·φ_{k+1}(x): at
    // x = 1.25 and 2, φ₁ = (e^x − 1)/x, 1!·φ₂ = (e^x − 1 − x)/x²,
    // 2!·φ₃ = 2(e^x − 1 − x − x²/2)/x³ (binary64 here, f32 there).
    let run = run_call(
        &dir,
        r#"{"kernel": "terms", "attrs": {"weights": [0.5, 0.25], "mode": "phi", "count": 3},
            "operands": {"terms": {"npy": "t.npy"}},
            "results": {"y": {"npy": "f.npy"}, "moments": {"npy": "m.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let f = c64_parts(&read_npy(&dir.path("f.npy")).data);
    let m = read_npy(&dir.path("m.npy"));
    assert_eq!(m.shape, vec![3, 2]);
    let m = c64_parts(&m.data);
    for (p, x) in [1.25f64, 2.0].into_iter().enumerate() {
        let e = x.exp();
        assert!((f[p].0 as f64 - e).abs() < 2e-6 * e, "flow {x}");
        let want = [
            (e - 1.0) / x,
            (e - 1.0 - x) / (x * x),
            2.0 * (e - 1.0 - x - x * x / 2.0) / (x * x * x),
        ];
        for (k, w) in want.iter().enumerate() {
            let got = m[k * 2 + p].0 as f64;
            assert!(
                (got - w).abs() < 2e-6 * w.abs(),
                "k {k} x {x}: {got} vs {w}"
            );
            assert_eq!(m[k * 2 + p].1, 0.0);
        }
    }
    // Refusals write nothing: a weight count other than T; an order above
    // the most; phi without its moments result.
    for (call, file) in [
        (
            r#"{"kernel": "terms", "attrs": {"weights": [0.5]},
            "operands": {"terms": {"npy": "t.npy"}}, "results": {"y": {"npy": "bad.npy"}}}"#,
            "bad.npy",
        ),
        (
            r#"{"kernel": "terms", "attrs": {"weights": [0.5, 0.25], "mode": "phi", "count": 9},
            "operands": {"terms": {"npy": "t.npy"}},
            "results": {"y": {"npy": "bad2.npy"}, "moments": {"npy": "bad3.npy"}}}"#,
            "bad2.npy",
        ),
        (
            r#"{"kernel": "terms", "attrs": {"weights": [0.5, 0.25], "mode": "phi", "count": 2},
            "operands": {"terms": {"npy": "t.npy"}}, "results": {"y": {"npy": "bad4.npy"}}}"#,
            "bad4.npy",
        ),
    ] {
        let run = run_call(&dir, call);
        assert_ne!(run.code, Some(0), "{call}: {}", run.stderr);
        assert!(!dir.path(file).exists(), "{call}");
    }
    assert!(!dir.path("bad3.npy").exists());
}
