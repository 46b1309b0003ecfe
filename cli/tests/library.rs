//! `tessera run` of the library's other calls (`random`, `quantize`,
//! `dequantize`, `polyval`, `qmatmul_i8`, `requantize_i8`, `sum_lanes`,
//! `ue8m0_encode`, `ue8m0_decode`):
//! results checked against values computed here from each call's stated
//! rule, and malformed calls refused without writing; `tessera kernels`
//! lists every kernel `--json` lists.

mod common;

use common::*;
use tessera_testkit::rng::Rng;

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn f64s(data: &[u8]) -> Vec<f64> {
    data.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn i32s(data: &[u8]) -> Vec<i32> {
    data.chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn run_call(dir: &TempDir, json: &str) -> Run {
    dir.write("call.json", json.as_bytes());
    tessera(&dir.0, &["run", "call.json"])
}

#[test]
fn random_fills_the_shape_asked_for_with_the_counter_stream() {
    let dir = TempDir::new("random");
    let run = run_call(
        &dir,
        r#"{"kernel": "random", "attrs": {"seed": 7}, "operands": {},
            "results": {"y": {"npy": "y.npy", "dtype": "u64", "shape": [3, 5]}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.descr, "<u8");
    assert_eq!(y.shape, vec![3, 5]);
    // The stated stream: splitmix64's finaliser over seed + (i + 1)·φ.
    for (i, c) in y.data.chunks_exact(8).enumerate() {
        let mut z = 7u64.wrapping_add((i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        assert_eq!(u64::from_le_bytes(c.try_into().unwrap()), z, "element {i}");
    }
    // No shape, no seed, a bad seed: refused, nothing written.
    for (json, needle) in [
        (
            r#"{"kernel": "random", "attrs": {"seed": 1}, "operands": {}, "results": {"y": {"npy": "z.npy", "dtype": "f32"}}}"#,
            "shape",
        ),
        (
            r#"{"kernel": "random", "attrs": {}, "operands": {}, "results": {"y": {"npy": "z.npy", "dtype": "f32", "shape": [2]}}}"#,
            "seed",
        ),
        (
            r#"{"kernel": "random", "attrs": {"seed": -1}, "operands": {}, "results": {"y": {"npy": "z.npy", "dtype": "f32", "shape": [2]}}}"#,
            "seed",
        ),
        (
            r#"{"kernel": "random", "attrs": {"seed": 1}, "operands": {}, "results": {"y": {"npy": "z.npy", "dtype": "c64", "shape": [2]}}}"#,
            "c64",
        ),
    ] {
        let run = run_call(&dir, json);
        assert_ne!(run.code, Some(0), "{json}");
        assert!(run.stderr.contains(needle), "{json}: {}", run.stderr);
        assert!(!dir.path("z.npy").exists(), "{json}: wrote a result");
    }
}

#[test]
fn quantize_and_dequantize_per_tensor_and_per_channel() {
    let dir = TempDir::new("quant");
    let x: Vec<f32> = vec![-3.0, -1.25, 0.0, 0.75, 2.5, 1000.0];
    dir.write("x.npy", &npy_f32(&[2, 3], &x));
    let run = run_call(
        &dir,
        r#"{"kernel": "quantize", "attrs": {"scale": 0.5, "zero_point": 3},
            "operands": {"x": {"npy": "x.npy", "dtype": "f32"}},
            "results": {"y": {"npy": "q.npy", "dtype": "i8"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let q = read_npy(&dir.path("q.npy"));
    assert_eq!(q.shape, vec![2, 3]);
    // q = sat(rint(x / s) + z): halves to even, saturating.
    let want: Vec<i8> = x
        .iter()
        .map(|&v| ((v as f64 / 0.5).round_ties_even() + 3.0).clamp(-128.0, 127.0) as i8)
        .collect();
    assert_eq!(q.data, want.iter().map(|&v| v as u8).collect::<Vec<_>>());
    // And back: (q - z)·s into f64.
    let run = run_call(
        &dir,
        r#"{"kernel": "dequantize", "attrs": {"scale": 0.5, "zero_point": 3},
            "operands": {"x": {"npy": "q.npy", "dtype": "i8"}},
            "results": {"y": {"npy": "d.npy", "dtype": "f64"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let d = f64s(&read_npy(&dir.path("d.npy")).data);
    let back: Vec<f64> = want.iter().map(|&q| (q as f64 - 3.0) * 0.5).collect();
    assert_eq!(d, back);
    // Per channel along axis 1: a scale and a zero point per column.
    dir.write("s.npy", &npy_f32(&[3], &[0.25, 1.0, 4.0]));
    let zb: Vec<u8> = [0i32, -2, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
    dir.write("z.npy", &npy_bytes("<i4", false, &[3], &zb, 1));
    let run = run_call(
        &dir,
        r#"{"kernel": "quantize", "attrs": {"axis": 1},
            "operands": {"x": {"npy": "x.npy"}, "scale": {"npy": "s.npy"}, "zero_point": {"npy": "z.npy"}},
            "results": {"y": {"npy": "c.npy", "dtype": "i16"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let c = read_npy(&dir.path("c.npy"));
    let got: Vec<i16> = c
        .data
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect();
    let (s, z) = ([0.25f64, 1.0, 4.0], [0.0f64, -2.0, 5.0]);
    let want: Vec<i16> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| ((v as f64 / s[i % 3]).round_ties_even() + z[i % 3]) as i16)
        .collect();
    assert_eq!(got, want);
    // Contradictions refused before any write.
    for (json, needle) in [
        (
            r#"{"kernel": "quantize", "attrs": {"zero_point": 1}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "w.npy", "dtype": "i8"}}}"#,
            "scale",
        ),
        (
            r#"{"kernel": "quantize", "attrs": {"scale": 1, "axis": 0}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "w.npy", "dtype": "i8"}}}"#,
            "axis",
        ),
        (
            r#"{"kernel": "quantize", "attrs": {"scale": 0, "zero_point": 1}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "w.npy", "dtype": "i8"}}}"#,
            "scale",
        ),
        (
            r#"{"kernel": "quantize", "attrs": {"scale": 1}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "w.npy", "dtype": "i8", "shape": [6]}}}"#,
            "shape",
        ),
        (
            r#"{"kernel": "dequantize", "attrs": {"scale": 1}, "operands": {"x": {"npy": "q.npy", "dtype": "i8"}}, "results": {"y": {"npy": "w.npy", "dtype": "i32"}}}"#,
            "float",
        ),
    ] {
        let run = run_call(&dir, json);
        assert_ne!(run.code, Some(0), "{json}");
        assert!(run.stderr.contains(needle), "{json}: {}", run.stderr);
        assert!(!dir.path("w.npy").exists(), "{json}: wrote a result");
    }
}

#[test]
fn polyval_is_horner_with_one_fma_per_coefficient() {
    let dir = TempDir::new("polyval");
    let x: Vec<f32> = vec![-2.0, -0.5, 0.0, 1.0, 3.0, 0.1];
    dir.write("x.npy", &npy_f32(&[6], &x));
    let run = run_call(
        &dir,
        r#"{"kernel": "polyval", "attrs": {"coeffs": [1.5, -2, 0.25, 3]},
            "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = f32s(&read_npy(&dir.path("y.npy")).data);
    let c = [1.5f32, -2.0, 0.25, 3.0];
    let want: Vec<f32> = x
        .iter()
        .map(|&v| c[1..].iter().fold(c[0], |acc, &ci| acc.mul_add(v, ci)))
        .collect();
    assert_eq!(
        y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    let run = run_call(
        &dir,
        r#"{"kernel": "polyval", "attrs": {"coeffs": [1, "x"]},
            "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "w.npy"}}}"#,
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(!dir.path("w.npy").exists());
}

#[test]
fn qmatmul_and_requantize_are_exact() {
    let dir = TempDir::new("qmatmul");
    let mut rng = Rng::new(21);
    let (m, k, n) = (5, 37, 6);
    let a: Vec<i8> = (0..m * k).map(|_| rng.below(256) as u8 as i8).collect();
    let b: Vec<i8> = (0..k * n).map(|_| rng.below(256) as u8 as i8).collect();
    let bytes = |v: &[i8]| v.iter().map(|&x| x as u8).collect::<Vec<u8>>();
    dir.write("a.npy", &npy_bytes("|i1", false, &[m, k], &bytes(&a), 1));
    dir.write("b.npy", &npy_bytes("|i1", false, &[k, n], &bytes(&b), 1));
    let run = run_call(
        &dir,
        r#"{"kernel": "qmatmul_i8", "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!((y.descr.as_str(), y.shape.clone()), ("<i4", vec![m, n]));
    let got = i32s(&y.data);
    for i in 0..m {
        for j in 0..n {
            let s: i64 = (0..k)
                .map(|t| a[i * k + t] as i64 * b[t * n + j] as i64)
                .sum();
            assert_eq!(got[i * n + j] as i64, s, "({i}, {j})");
        }
    }
    // Requantise those sums: clamp(rint(x·s) + z), the product exact.
    let run = run_call(
        &dir,
        r#"{"kernel": "requantize_i8", "attrs": {"scale": 0.0078125, "zero_point": -4},
            "operands": {"x": {"npy": "y.npy"}}, "results": {"y": {"npy": "r.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let r = read_npy(&dir.path("r.npy"));
    assert_eq!(r.descr, "|i1");
    for (g, &x) in r.data.iter().zip(&got) {
        let want = ((x as f64 * 0.0078125).round_ties_even() - 4.0).clamp(-128.0, 127.0) as i8;
        assert_eq!(*g as i8, want, "{x}");
    }
    let run = run_call(
        &dir,
        r#"{"kernel": "requantize_i8", "attrs": {"scale": 1, "zero_point": 4294967296},
            "operands": {"x": {"npy": "y.npy"}}, "results": {"y": {"npy": "w.npy"}}}"#,
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(!dir.path("w.npy").exists());
}

#[test]
fn sum_lanes_gives_the_lane_sums_of_every_block() {
    let dir = TempDir::new("lanes");
    let mut rng = Rng::new(22);
    let n = 2500;
    let x: Vec<f32> = (0..n)
        .map(|_| (rng.below(1 << 20) as f32 - (1 << 19) as f32) / 64.0)
        .collect();
    dir.write("x.npy", &npy_f32(&[n], &x));
    let run = run_call(
        &dir,
        r#"{"kernel": "sum_lanes", "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![3, 16]);
    let got = f32s(&y.data);
    // Block b, lane l: the terms j ≡ l (mod 16) of the block, in order from +0.
    for b in 0..3 {
        for l in 0..16 {
            let mut s = 0f32;
            let mut j = b * 1024 + l;
            while j < ((b + 1) * 1024).min(n) {
                s += x[j];
                j += 16;
            }
            assert_eq!(got[b * 16 + l].to_bits(), s.to_bits(), "block {b} lane {l}");
        }
    }
}

#[test]
fn the_text_list_names_every_kernel_of_the_json_list() {
    let dir = TempDir::new("kernels");
    let json = tessera(&dir.0, &["kernels", "--json"]);
    assert_eq!(json.code, Some(0), "{}", json.stderr);
    let list: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let text = tessera(&dir.0, &["kernels"]);
    assert_eq!(text.code, Some(0), "{}", text.stderr);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    for name in [
        "add",
        "cast",
        "contract",
        "map",
        "reduce",
        "scan",
        "series",
        "encode",
        "random",
        "quantize",
        "dequantize",
        "polyval",
        "qmatmul_i8",
        "requantize_i8",
        "sum_lanes",
    ] {
        assert!(names.contains(&name), "--json lacks {name}");
    }
    for name in names {
        assert!(
            text.stdout
                .lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "the text list lacks {name}"
        );
    }
}

#[test]
fn ue8m0_encode_and_decode_calls() {
    let dir = TempDir::new("ue8m0");
    // 1 → 127; just below and above √2 → 127, 128; 0 and a subnormal → 0;
    // ∞ → 0xFE; −0.5 → 126 (the sign ignored).
    let x = [
        1.0f32,
        f32::from_bits(0x3FB5_04F3),
        f32::from_bits(0x3FB5_04F4),
        0.0,
        1e-40,
        f32::INFINITY,
        -0.5,
        3.0e38,
    ];
    dir.write("x.npy", &npy_f32(&[2, 4], &x));
    let run = run_call(
        &dir,
        r#"{"kernel": "ue8m0_encode", "operands": {"x": {"npy": "x.npy"}},
             "results": {"y": {"npy": "c.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let c = read_npy(&dir.path("c.npy"));
    assert_eq!((c.descr.as_str(), c.shape.clone()), ("|u1", vec![2, 4]));
    assert_eq!(c.data, [127, 127, 128, 0, 0, 0xFE, 126, 0xFE]);
    let run = run_call(
        &dir,
        r#"{"kernel": "ue8m0_decode", "operands": {"x": {"npy": "c.npy"}},
             "results": {"y": {"npy": "v.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let v = f32s(&read_npy(&dir.path("v.npy")).data);
    assert_eq!(
        v,
        [1.0, 1.0, 2.0, 0.0, 0.0, 2f32.powi(127), 0.5, 2f32.powi(127)]
    );
    // An f64 operand is refused.
    let run = run_call(
        &dir,
        r#"{"kernel": "ue8m0_decode", "operands": {"x": {"npy": "x.npy"}},
             "results": {"y": {"npy": "w.npy"}}}"#,
    );
    assert_ne!(run.code, Some(0));
    assert!(!dir.path("w.npy").exists());
}
