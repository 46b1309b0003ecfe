//! `tessera run` of `contract_scaled` and `contract_grouped`: results
//! against sums computed here (values chosen so every order is exact, or
//! the library's own call on the same arrays for the bits of a rounded
//! one), and the refusals: one line naming the field, nothing written.

mod common;

use common::*;
use tessera::contract::scaled::{contract_scaled, Blocked, Operand};
use tessera::{ArrayView, ArrayViewMut, ContractSpec, DType, Exec};
use tessera_testkit::rng::Rng;

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn f64s(b: &[u8]) -> Vec<f64> {
    b.chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn bytes_of<const N: usize, T: Copy>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    v.iter().flat_map(|&x| f(x)).collect()
}

/// Small integers times power-of-two scales, in f64: every product and sum
/// is exact, so y is the exact sum computed here. a's scales are UE8M0
/// codes, b's f64 values; b is stored in Fortran order.
#[test]
fn scaled_values_and_scales_give_the_exact_sums() {
    let dir = TempDir::new("contract_scaled");
    let mut rng = Rng::new(31);
    let (m, k, n, ba, bb) = (5, 24, 6, 8, 4);
    let a: Vec<f32> = (0..m * k).map(|_| rng.range_i64(-20, 20) as f32).collect();
    let b: Vec<f32> = (0..n * k).map(|_| rng.range_i64(-20, 20) as f32).collect();
    let asc: Vec<u8> = (0..m * k / ba).map(|_| 120 + rng.below(14) as u8).collect();
    let bsc: Vec<f64> = (0..n * k / bb)
        .map(|_| 2f64.powi(rng.range_i64(-5, 5) as i32))
        .collect();
    dir.write("a.npy", &npy_f32(&[m, k], &a));
    // b [n, k] in Fortran order: element (j, q) at q * n + j.
    let bf: Vec<f32> = (0..k)
        .flat_map(|q| (0..n).map(move |j| (q, j)))
        .map(|(q, j)| b[j * k + q])
        .collect();
    dir.write(
        "b.npy",
        &npy_bytes("<f4", true, &[n, k], &bytes_of(&bf, f32::to_le_bytes), 1),
    );
    dir.write("as.npy", &npy_u8(&[m, k / ba], &asc));
    dir.write(
        "bs.npy",
        &npy_bytes(
            "<f8",
            false,
            &[n, k / bb],
            &bytes_of(&bsc, f64::to_le_bytes),
            1,
        ),
    );
    dir.write(
        "call.json",
        br#"{"kernel": "contract_scaled",
            "attrs": {"contracting": [[1, 1]], "acc": "f64", "a_block": 8, "b_block": 4},
            "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"},
                         "a_scales": {"npy": "as.npy"}, "b_scales": {"npy": "bs.npy"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("scaled: a, b"), "{}", run.stdout);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!((y.descr.as_str(), y.shape.clone()), ("<f8", vec![m, n]));
    let got = f64s(&y.data);
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k)
                .map(|q| {
                    let sa = 2f64.powi(asc[(i * k + q) / ba] as i32 - 127);
                    let sb = bsc[(j * k + q) / bb];
                    a[i * k + q] as f64 * sa * (b[j * k + q] as f64 * sb)
                })
                .sum();
            assert_eq!(got[i * n + j], want, "({i}, {j})");
        }
    }
}

/// An MX operand as codes (`"dtype": "e4m3fn"`) and scale codes: the bits
/// of the library's call on the same arrays, in f32.
#[test]
fn scaled_mx_codes_match_the_library() {
    let dir = TempDir::new("contract_scaled_mx");
    let mut rng = Rng::new(32);
    let (m, k, n) = (9, 64, 8);
    // Finite e4m3fn codes (0x7F and 0xFF are NaN).
    let codes: Vec<u8> = (0..m * k)
        .map(|_| {
            let c = rng.next_u64() as u8;
            if c & 0x7F == 0x7F {
                0x10
            } else {
                c
            }
        })
        .collect();
    let sc: Vec<u8> = (0..m * k / 32).map(|_| 115 + rng.below(20) as u8).collect();
    let b: Vec<f32> = (0..k * n).map(|_| rng.unit() as f32 - 0.5).collect();
    dir.write("a.npy", &npy_u8(&[m, k], &codes));
    dir.write("as.npy", &npy_u8(&[m, k / 32], &sc));
    dir.write("b.npy", &npy_f32(&[k, n], &b));
    dir.write(
        "call.json",
        br#"{"kernel": "contract_scaled",
            "attrs": {"contracting": [[1, 0]], "a_block": 32},
            "operands": {"a": {"npy": "a.npy", "dtype": "e4m3fn"}, "b": {"npy": "b.npy"},
                         "a_scales": {"npy": "as.npy", "dtype": "e8m0fnu"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!((y.descr.as_str(), y.shape.clone()), ("<f4", vec![m, n]));
    let mut want = vec![0f32; m * n];
    contract_scaled(
        &ContractSpec::new(DType::F32).contracting(1, 0),
        &Operand::Blocked(Blocked {
            values: ArrayView::contiguous(DType::E4m3fn, &[m, k], &codes).unwrap(),
            scales: ArrayView::contiguous(DType::U8, &[m, k / 32], &sc).unwrap(),
            block: 32,
        }),
        &Operand::Plain(ArrayView::from_slice(&b, &[k, n]).unwrap()),
        None,
        &mut ArrayViewMut::from_slice(&mut want, &[m, n]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    let got = f32s(&y.data);
    assert!(got
        .iter()
        .zip(&want)
        .all(|(x, y)| x.to_bits() == y.to_bits()));
}

/// Each refusal is one line naming the field, and no result file appears.
#[test]
fn scaled_refusals_name_the_field_and_write_nothing() {
    let dir = TempDir::new("contract_scaled_bad");
    dir.write("a.npy", &npy_f32(&[2, 8], &[1.0; 16]));
    dir.write("b.npy", &npy_f32(&[8, 3], &[1.0; 24]));
    dir.write("s.npy", &npy_f32(&[2, 2], &[1.0; 4]));
    dir.write("s3.npy", &npy_f32(&[2, 3], &[1.0; 6]));
    dir.write("si.npy", &npy_bytes("<i4", false, &[2, 2], &[0; 16], 1));
    let call = |attrs: &str, ops: &str| {
        format!(
            r#"{{"kernel": "contract_scaled", "attrs": {{"contracting": [[1, 0]]{attrs}}},
               "operands": {{"a": {{"npy": "a.npy"}}, "b": {{"npy": "b.npy"}}{ops}}},
               "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        )
    };
    let scales = r#", "a_scales": {"npy": "s.npy"}"#;
    for (attrs, ops, code, needle) in [
        (r#", "a_block": 4"#, "", 2, "a_block"),
        ("", scales, 2, "a_block"),
        (r#", "a_block": 0"#, scales, 2, "a_block"),
        (r#", "a_block": 4, "acc": "i32""#, scales, 2, "acc"),
        (r#", "a_block": 3"#, scales, 1, "block"),
        (
            r#", "a_block": 4"#,
            r#", "a_scales": {"npy": "s3.npy"}"#,
            1,
            "scales",
        ),
        (
            r#", "a_block": 4"#,
            r#", "a_scales": {"npy": "si.npy"}"#,
            1,
            "scales",
        ),
        (
            r#", "a_block": 4"#,
            r#", "c_scales": {"npy": "s.npy"}"#,
            2,
            "c_scales",
        ),
    ] {
        dir.write("bad.json", call(attrs, ops).as_bytes());
        tessera(&dir.0, &["run", "bad.json"]).assert_refused(code, needle);
        assert!(!dir.path("y.npy").exists(), "{attrs} {ops}");
    }
}

/// Row groups over a batch axis with int64 ids per batch element, init
/// broadcast: small integers, so each output is the exact sum computed
/// here; and depth groups with int32 ids shared by the batch.
#[test]
fn grouped_rows_and_depth_give_the_exact_sums() {
    let dir = TempDir::new("contract_grouped");
    let mut rng = Rng::new(33);
    let (bt, r, k, n, g) = (2, 7, 5, 6, 3);
    let a: Vec<f32> = (0..bt * r * k)
        .map(|_| rng.range_i64(-9, 9) as f32)
        .collect();
    let b: Vec<f32> = (0..bt * g * k * n)
        .map(|_| rng.range_i64(-9, 9) as f32)
        .collect();
    let init: Vec<f32> = (0..n).map(|_| rng.range_i64(-9, 9) as f32).collect();
    let ids: Vec<i64> = (0..bt * r).map(|_| rng.below(g as u64) as i64).collect();
    dir.write("a.npy", &npy_f32(&[bt, r, k], &a));
    dir.write("b.npy", &npy_f32(&[bt, g, k, n], &b));
    dir.write("init.npy", &npy_f32(&[n], &init));
    dir.write(
        "ids.npy",
        &npy_bytes("<i8", false, &[bt, r], &bytes_of(&ids, i64::to_le_bytes), 1),
    );
    dir.write(
        "rows.json",
        br#"{"kernel": "contract_grouped", "attrs": {"by": "rows", "acc": "f32"},
            "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}, "ids": {"npy": "ids.npy"},
                         "init": {"npy": "init.npy"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "rows.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!((y.descr.as_str(), y.shape.clone()), ("<f4", vec![bt, r, n]));
    let got = f32s(&y.data);
    for x in 0..bt {
        for i in 0..r {
            let gi = ids[x * r + i] as usize;
            for j in 0..n {
                let s: f32 = init[j]
                    + (0..k)
                        .map(|q| a[(x * r + i) * k + q] * b[((x * g + gi) * k + q) * n + j])
                        .sum::<f32>();
                assert_eq!(got[(x * r + i) * n + j], s, "rows ({x}, {i}, {j})");
            }
        }
    }
    // Depth groups: b [bt, k, n] is the first group of each batch element's b.
    let bd: Vec<f32> = (0..bt * k * n)
        .map(|_| rng.range_i64(-9, 9) as f32)
        .collect();
    let kid: Vec<i32> = (0..k).map(|_| rng.below(g as u64) as i32).collect();
    dir.write("bd.npy", &npy_f32(&[bt, k, n], &bd));
    dir.write(
        "kid.npy",
        &npy_bytes("<i4", false, &[k], &bytes_of(&kid, i32::to_le_bytes), 1),
    );
    dir.write(
        "depth.json",
        br#"{"kernel": "contract_grouped", "attrs": {"by": "depth", "groups": 3},
            "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "bd.npy"}, "ids": {"npy": "kid.npy"}},
            "results": {"y": {"npy": "yd.npy", "dtype": "f64"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "depth.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("by depth"), "{}", run.stdout);
    let y = read_npy(&dir.path("yd.npy"));
    assert_eq!(
        (y.descr.as_str(), y.shape.clone()),
        ("<f8", vec![bt, g, r, n])
    );
    let got = f64s(&y.data);
    for x in 0..bt {
        for gi in 0..g {
            for i in 0..r {
                for j in 0..n {
                    let s: f64 = (0..k)
                        .filter(|&q| kid[q] as usize == gi)
                        .map(|q| a[(x * r + i) * k + q] as f64 * bd[(x * k + q) * n + j] as f64)
                        .sum();
                    assert_eq!(
                        got[((x * g + gi) * r + i) * n + j],
                        s,
                        "depth ({x}, {gi}, {i}, {j})"
                    );
                }
            }
        }
    }
}

#[test]
fn grouped_refusals_name_the_field_and_write_nothing() {
    let dir = TempDir::new("contract_grouped_bad");
    dir.write("a.npy", &npy_f32(&[3, 4], &[1.0; 12]));
    dir.write("b.npy", &npy_f32(&[2, 4, 5], &[1.0; 40]));
    dir.write("b2.npy", &npy_f32(&[4, 5], &[1.0; 20]));
    let i64s = |v: &[i64]| npy_bytes("<i8", false, &[v.len()], &bytes_of(v, i64::to_le_bytes), 1);
    dir.write("ids.npy", &i64s(&[0, 1, 1]));
    dir.write("neg.npy", &i64s(&[0, -1, 1]));
    dir.write("big.npy", &i64s(&[0, 2, 1]));
    dir.write("long.npy", &i64s(&[0, 1, 1, 0]));
    dir.write("fl.npy", &npy_f32(&[3], &[0.0; 3]));
    dir.write("u64.npy", &npy_bytes("<u8", false, &[3], &[0; 24], 1));
    let call = |attrs: &str, b: &str, ids: &str| {
        format!(
            r#"{{"kernel": "contract_grouped", "attrs": {{{attrs}}},
               "operands": {{"a": {{"npy": "a.npy"}}, "b": {{"npy": "{b}"}}, "ids": {{"npy": "{ids}"}}}},
               "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        )
    };
    for (attrs, b, ids, code, needle) in [
        ("", "b.npy", "ids.npy", 2, "by"),
        (r#""by": "cols""#, "b.npy", "ids.npy", 2, "by"),
        (
            r#""by": "rows", "groups": 2"#,
            "b.npy",
            "ids.npy",
            2,
            "groups",
        ),
        (r#""by": "depth""#, "b2.npy", "ids.npy", 2, "groups"),
        (
            r#""by": "rows", "acc": "f16""#,
            "b.npy",
            "ids.npy",
            1,
            "accumulator",
        ),
        (r#""by": "rows""#, "b.npy", "neg.npy", 1, "ids"),
        (r#""by": "rows""#, "b.npy", "big.npy", 1, "ids"),
        (r#""by": "rows""#, "b.npy", "long.npy", 1, "ids"),
        (r#""by": "rows""#, "b.npy", "fl.npy", 1, "ids"),
        (r#""by": "rows""#, "b.npy", "u64.npy", 1, "ids"),
        (r#""by": "rows""#, "b2.npy", "ids.npy", 1, "operand b"),
    ] {
        dir.write("bad.json", call(attrs, b, ids).as_bytes());
        tessera(&dir.0, &["run", "bad.json"]).assert_refused(code, needle);
        assert!(!dir.path("y.npy").exists(), "{attrs} {b} {ids}");
    }
}

/// `contract` takes every integer accumulator: u8 sums wrap modulo 256, and
/// a float operand saturates at u8's range before its products.
#[test]
fn contract_with_a_u8_accumulator_wraps_modulo_256() {
    let dir = TempDir::new("contract_u8");
    let mut rng = Rng::new(34);
    let (m, k, n) = (4, 9, 3);
    let a: Vec<i16> = (0..m * k).map(|_| rng.next_u64() as i16).collect();
    let b: Vec<f32> = (0..k * n)
        .map(|_| (rng.unit() as f32 - 0.3) * 600.0)
        .collect();
    dir.write(
        "a.npy",
        &npy_bytes("<i2", false, &[m, k], &bytes_of(&a, i16::to_le_bytes), 1),
    );
    dir.write("b.npy", &npy_f32(&[k, n], &b));
    dir.write(
        "call.json",
        br#"{"kernel": "contract", "attrs": {"contracting": [[1, 0]], "acc": "u8"},
            "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!((y.descr.as_str(), y.shape.clone()), ("|u1", vec![m, n]));
    for i in 0..m {
        for j in 0..n {
            let s: i64 = (0..k)
                .map(|q| {
                    let x = (a[i * k + q] as i64).rem_euclid(256);
                    let y = b[q * n + j].trunc().clamp(0.0, 255.0) as i64;
                    x * y
                })
                .sum();
            assert_eq!(y.data[i * n + j] as i64, s.rem_euclid(256), "({i}, {j})");
        }
    }
}
