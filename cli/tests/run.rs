//! `tessera run`: good calls checked against values computed here, and every
//! kind of malformed input refused with one line and the right exit code.

mod common;

use common::*;
use tessera_testkit::rng::Rng;

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn random_f32s(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 100.0)
        .collect()
}

#[test]
fn f32_add_broadcasts_a_row() {
    let dir = TempDir::new("f32add");
    let mut rng = Rng::new(11);
    let a = random_f32s(&mut rng, 12);
    let b = random_f32s(&mut rng, 4);
    dir.write("a.npy", &npy_f32(&[3, 4], &a));
    dir.write("b.npy", &npy_f32(&[4], &b));
    dir.write(
        "call.json",
        call_json(
            "add",
            &[("x0", "a.npy", "f32", false), ("x1", "b.npy", "f32", false)],
            "",
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.descr, "<f4");
    assert_eq!(y.shape, vec![3, 4]);
    assert!(!y.fortran);
    let got = f32s(&y.data);
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(got[i * 4 + j].to_bits(), (a[i * 4 + j] + b[j]).to_bits());
        }
    }
}

#[test]
fn fortran_order_input_is_read_as_its_layout() {
    let dir = TempDir::new("fortran");
    let mut rng = Rng::new(12);
    // Logical a[i][j] for shape (3, 4) stored column-major: element (i, j) at j * 3 + i.
    let stored = random_f32s(&mut rng, 12);
    let b = random_f32s(&mut rng, 12);
    let data: Vec<u8> = stored.iter().flat_map(|v| v.to_le_bytes()).collect();
    dir.write("a.npy", &npy_bytes("<f4", true, &[3, 4], &data, 1));
    dir.write("b.npy", &npy_f32(&[3, 4], &b));
    dir.write(
        "call.json",
        call_json(
            "sub",
            &[("x0", "a.npy", "f32", false), ("x1", "b.npy", "f32", false)],
            "",
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert!(!y.fortran, "results are written in C order");
    assert_eq!(y.shape, vec![3, 4]);
    let got = f32s(&y.data);
    for i in 0..3 {
        for j in 0..4 {
            let a = stored[j * 3 + i];
            assert_eq!(
                got[i * 4 + j].to_bits(),
                (a - b[i * 4 + j]).to_bits(),
                "({i}, {j})"
            );
        }
    }
}

#[test]
fn big_endian_and_later_versions_read_the_same_values() {
    let dir = TempDir::new("endian");
    let a = [1.5f32, -2.25, 1e-3, 7.0];
    let b = [0.5f32, 0.25, 2.0, -7.0];
    let be: Vec<u8> = a.iter().flat_map(|v| v.to_be_bytes()).collect();
    let le_b: Vec<u8> = b.iter().flat_map(|v| v.to_le_bytes()).collect();
    for (i, (file_a, file_b)) in [
        (npy_bytes(">f4", false, &[4], &be, 1), npy_f32(&[4], &b)),
        (npy_f32(&[4], &a), npy_bytes("<f4", false, &[4], &le_b, 2)),
        (npy_f32(&[4], &a), npy_bytes("<f4", false, &[4], &le_b, 3)),
    ]
    .into_iter()
    .enumerate()
    {
        dir.write("a.npy", &file_a);
        dir.write("b.npy", &file_b);
        dir.write(
            "call.json",
            call_json(
                "mul",
                &[("x0", "a.npy", "f32", false), ("x1", "b.npy", "f32", false)],
                "",
            )
            .as_bytes(),
        );
        let run = tessera(&dir.0, &["run", "call.json"]);
        assert_eq!(run.code, Some(0), "case {i}: {}", run.stderr);
        let got = f32s(&read_npy(&dir.path("y.npy")).data);
        for k in 0..4 {
            assert_eq!(got[k].to_bits(), (a[k] * b[k]).to_bits(), "case {i}");
        }
    }
}

/// The value of an e4m3fn code, from the format: 1 sign, 4 exponent and 3
/// mantissa bits, bias 7, subnormals, no infinities, NaN only at S.1111.111.
fn e4m3fn_value(code: u8) -> f64 {
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((code >> 3) & 0xf) as i32;
    let m = (code & 7) as f64;
    if e == 15 && code & 7 == 7 {
        return f64::NAN;
    }
    let mag = if e == 0 {
        m * 2f64.powi(-9)
    } else {
        (8.0 + m) * 2f64.powi(e - 10)
    };
    sign * mag
}

/// Round a real value to e4m3fn: nearest, ties to the even code; beyond the
/// largest finite value (448) after rounding, NaN.
fn e4m3fn_round(v: f64) -> Option<u8> {
    if v.is_nan() {
        return None;
    }
    let sign = if v.is_sign_negative() { 0x80u8 } else { 0 };
    let a = v.abs();
    // Magnitudes of codes 0..=0x7e, and 0x7f standing for the next step (480).
    let value = |c: u8| if c == 0x7f { 480.0 } else { e4m3fn_value(c) };
    let mut best = 0u8;
    for c in 1..=0x7fu8 {
        let (d_best, d_c) = ((value(best) - a).abs(), (value(c) - a).abs());
        if d_c < d_best || (d_c == d_best && c % 2 == 0) {
            best = c;
        }
    }
    if best == 0x7f || a > 480.0 {
        None
    } else {
        Some(sign | best)
    }
}

#[test]
fn e4m3fn_mul_of_every_pair_matches_the_format() {
    let dir = TempDir::new("e4m3fn");
    let a: Vec<u8> = (0..65536u32).map(|i| (i >> 8) as u8).collect();
    let b: Vec<u8> = (0..65536u32).map(|i| i as u8).collect();
    dir.write("a.npy", &npy_u8(&[256, 256], &a));
    dir.write("b.npy", &npy_u8(&[256, 256], &b));
    dir.write(
        "call.json",
        call_json(
            "mul",
            &[
                ("x0", "a.npy", "e4m3fn", false),
                ("x1", "b.npy", "float8_e4m3fn", false),
            ],
            r#", "dtype": "e4m3fn""#,
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.descr, "|u1");
    assert_eq!(y.shape, vec![256, 256]);
    let mut checked = 0;
    for i in 0..65536 {
        let p = e4m3fn_value(a[i]) * e4m3fn_value(b[i]);
        match e4m3fn_round(p) {
            Some(code) => assert_eq!(y.data[i], code, "{:#x} * {:#x}", a[i], b[i]),
            None => assert_eq!(y.data[i] & 0x7f, 0x7f, "{:#x} * {:#x} is NaN", a[i], b[i]),
        }
        checked += 1;
    }
    assert_eq!(checked, 65536);
}

fn i4_codes(values: &[i8]) -> Vec<u8> {
    values.iter().map(|&v| (v as u8) & 0xf).collect()
}

fn pack_nibbles(codes: &[u8]) -> Vec<u8> {
    codes.chunks(2).map(|p| (p[0] << 4) | p[1]).collect()
}

fn wrap_i4(v: i32) -> u8 {
    (v as u8) & 0xf
}

#[test]
fn i4_packed_and_unpacked_io() {
    let dir = TempDir::new("i4");
    let mut rng = Rng::new(13);
    let a: Vec<i8> = (0..24).map(|_| rng.below(16) as i8 - 8).collect();
    let b: Vec<i8> = (0..24).map(|_| rng.below(16) as i8 - 8).collect();
    dir.write("a.npy", &npy_u8(&[4, 6], &i4_codes(&a)));
    // b packed: two values per byte, element 0 in the high nibble.
    dir.write("b.npy", &npy_u8(&[4, 3], &pack_nibbles(&i4_codes(&b))));
    let expect: Vec<u8> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| wrap_i4(x as i32 + y as i32))
        .collect();

    dir.write(
        "call.json",
        call_json(
            "add",
            &[("x0", "a.npy", "i4", false), ("x1", "b.npy", "i4", true)],
            "",
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!((y.descr.as_str(), y.shape.clone()), ("|u1", vec![4, 6]));
    assert_eq!(y.data, expect, "one code per byte");

    dir.write(
        "call.json",
        call_json(
            "add",
            &[("x0", "a.npy", "i4", false), ("x1", "b.npy", "int4", true)],
            r#", "packed": true"#,
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![4, 3]);
    assert_eq!(y.data, pack_nibbles(&expect), "packed bytes");
}

#[test]
fn i4_odd_last_axis_and_scalar_broadcast() {
    let dir = TempDir::new("i4odd");
    let a: Vec<i8> = vec![7, -8, 3, -1, 5, 0, 1, 2, -3, 4, 6, -7, -2, 5, -5];
    dir.write("a.npy", &npy_u8(&[3, 5], &i4_codes(&a)));
    dir.write("s.npy", &npy_u8(&[], &i4_codes(&[3])));
    dir.write(
        "call.json",
        call_json(
            "mul",
            &[("x0", "a.npy", "i4", false), ("x1", "s.npy", "i4", false)],
            "",
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![3, 5]);
    let expect: Vec<u8> = a.iter().map(|&x| wrap_i4(x as i32 * 3)).collect();
    assert_eq!(y.data, expect);

    // Two scalars give a scalar.
    dir.write("t.npy", &npy_u8(&[], &i4_codes(&[-7])));
    dir.write(
        "call.json",
        call_json(
            "sub",
            &[("x0", "s.npy", "i4", false), ("x1", "t.npy", "i4", false)],
            "",
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, Vec::<usize>::new());
    assert_eq!(y.data, vec![wrap_i4(3 - -7)]);

    // A packed result needs whole bytes on the last axis.
    dir.write(
        "call.json",
        call_json(
            "mul",
            &[("x0", "a.npy", "i4", false), ("x1", "s.npy", "i4", false)],
            r#", "packed": true"#,
        )
        .as_bytes(),
    );
    tessera(&dir.0, &["run", "call.json"]).assert_refused(1, "whole bytes");
}

#[test]
fn u1_bits_and_comparisons_to_bool() {
    let dir = TempDir::new("u1");
    let mut rng = Rng::new(14);
    let a: Vec<u8> = (0..32).map(|_| (rng.next_u64() & 1) as u8).collect();
    let b: Vec<u8> = (0..32).map(|_| (rng.next_u64() & 1) as u8).collect();
    let pack_bits = |bits: &[u8]| -> Vec<u8> {
        bits.chunks(8)
            .map(|c| c.iter().fold(0u8, |acc, &bit| (acc << 1) | bit))
            .collect()
    };
    dir.write("a.npy", &npy_u8(&[2, 16], &a));
    dir.write("b.npy", &npy_u8(&[2, 2], &pack_bits(&b)));
    dir.write(
        "call.json",
        call_json(
            "bitwise_xor",
            &[("x0", "a.npy", "u1", false), ("x1", "b.npy", "u1", true)],
            r#", "packed": true"#,
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![2, 2]);
    let xor: Vec<u8> = a.iter().zip(&b).map(|(x, y)| x ^ y).collect();
    assert_eq!(y.data, pack_bits(&xor));

    dir.write(
        "call.json",
        call_json(
            "lt",
            &[("x0", "a.npy", "u1", false), ("x1", "b.npy", "u1", true)],
            "",
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!((y.descr.as_str(), y.shape.clone()), ("|b1", vec![2, 16]));
    let lt: Vec<u8> = a.iter().zip(&b).map(|(x, y)| (x < y) as u8).collect();
    assert_eq!(y.data, lt);
}

#[test]
fn select_bf16_and_unary_x() {
    let dir = TempDir::new("select");
    // bf16 codes of 1, -2, 0.5, 3 and of 10, 20, 30, 40.
    let a: [u16; 4] = [0x3f80, 0xc000, 0x3f00, 0x4040];
    let b: [u16; 4] = [0x4120, 0x41a0, 0x41f0, 0x4220];
    let cond = [1u8, 0, 0, 1];
    let le = |v: &[u16]| -> Vec<u8> { v.iter().flat_map(|c| c.to_le_bytes()).collect() };
    dir.write("c.npy", &npy_bytes("|b1", false, &[4], &cond, 1));
    dir.write("a.npy", &npy_bytes("<u2", false, &[4], &le(&a), 1));
    dir.write("b.npy", &npy_bytes("<u2", false, &[4], &le(&b), 1));
    dir.write(
        "call.json",
        call_json(
            "select",
            &[
                ("x0", "c.npy", "bool", false),
                ("x1", "a.npy", "bf16", false),
                ("x2", "b.npy", "bfloat16", false),
            ],
            "",
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.descr, "<u2");
    let want: Vec<u16> = (0..4)
        .map(|i| if cond[i] != 0 { a[i] } else { b[i] })
        .collect();
    assert_eq!(y.data, le(&want));

    // A unary kind takes `x`; neg flips a float's sign bit.
    dir.write(
        "call.json",
        r#"{"kernel": "neg", "operands": {"x": {"npy": "a.npy", "dtype": "bf16"}},
            "results": {"y": {"npy": "y.npy", "dtype": "bf16", "shape": [4]}},
            "tier": "scalar", "threads": 1}"#
            .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let want: Vec<u16> = a.iter().map(|c| c ^ 0x8000).collect();
    assert_eq!(read_npy(&dir.path("y.npy")).data, le(&want));
}

#[test]
fn every_tier_gives_the_same_bytes() {
    let dir = TempDir::new("tiers");
    let mut rng = Rng::new(15);
    let a = random_f32s(&mut rng, 1000);
    let b = random_f32s(&mut rng, 1000);
    dir.write("a.npy", &npy_f32(&[10, 100], &a));
    dir.write("b.npy", &npy_f32(&[10, 100], &b));
    let mut outputs = Vec::new();
    for tier in ["scalar", "avx2"] {
        let text = format!(
            r#"{{"kernel": "div", "operands": {{"x0": {{"npy": "a.npy"}}, "x1": {{"npy": "b.npy"}}}},
                "results": {{"y": {{"npy": "y.npy"}}}}, "tier": "{tier}", "threads": 3}}"#
        );
        dir.write("call.json", text.as_bytes());
        let run = tessera(&dir.0, &["run", "call.json"]);
        if tier != "scalar" && run.code == Some(1) && run.stderr.contains("not available") {
            continue;
        }
        assert_eq!(run.code, Some(0), "{tier}: {}", run.stderr);
        outputs.push(read_npy(&dir.path("y.npy")).data);
    }
    let got = f32s(&outputs[0]);
    for i in 0..1000 {
        assert_eq!(got[i].to_bits(), (a[i] / b[i]).to_bits());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
}

/// A refusal case: name, x0's file, the call file (None: the default), exit
/// code, and words the error must hold.
type Case = (&'static str, Vec<u8>, Option<String>, i32, &'static str);

/// Files and call files that must be refused: (case, npy bytes for x0, call
/// file text or None for the default, exit code, words the error must hold).
#[test]
fn malformed_inputs_are_refused_with_one_line() {
    let dir = TempDir::new("malformed");
    let good = npy_f32(&[4], &[1.0, 2.0, 3.0, 4.0]);
    dir.write("good.npy", &good);
    let with_header = |h: &str| -> Vec<u8> {
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        v.extend_from_slice(&(h.len() as u16).to_le_bytes());
        v.extend_from_slice(h.as_bytes());
        v.extend_from_slice(&[0u8; 16]);
        v
    };
    let default_call = call_json(
        "add",
        &[
            ("x0", "x.npy", "f32", false),
            ("x1", "good.npy", "f32", false),
        ],
        "",
    );
    let with_call = |s: &str| Some(s.to_string());
    let cases: Vec<Case> = vec![
        ("wrong magic", b"\x93NUMPZ\x01\x00\x10\x00".to_vec(), None, 1, "magic"),
        ("empty file", vec![], None, 1, "magic"),
        ("truncated magic", b"\x93NUM".to_vec(), None, 1, "truncated"),
        ("truncated length", b"\x93NUMPY\x01\x00\x10".to_vec(), None, 1, "truncated"),
        ("truncated header", good[..40].to_vec(), None, 1, "truncated"),
        ("truncated data", good[..good.len() - 1].to_vec(), None, 1, "truncated"),
        ("extra data", [good.clone(), vec![0]].concat(), None, 1, "size mismatch"),
        ("bad version", [b"\x93NUMPY\x04\x00".to_vec(), good[8..].to_vec()].concat(), None, 1, "version"),
        ("header not a dict", with_header("['descr', '<f4']\n"), None, 1, "header"),
        ("missing key", with_header("{'descr': '<f4', 'shape': (4,)}\n"), None, 1, "header"),
        ("unknown key", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}\n"), None, 1, "unexpected key"),
        ("shape not a tuple", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': 4}\n"), None, 1, "header"),
        ("negative extent", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,)}\n"), None, 1, "header"),
        ("structured dtype", with_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,)}\n"), None, 1, "structured"),
        ("unknown descr", with_header("{'descr': '<f3', 'fortran_order': False, 'shape': (4,)}\n"), None, 1, "descr"),
        ("object descr", with_header("{'descr': '|O', 'fortran_order': False, 'shape': (4,)}\n"), None, 1, "descr"),
        ("shape/size mismatch", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (5,)}\n"), None, 1, "truncated"),
        ("overflowing shape", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904)}\n"), None, 1, "2^40"),
        ("huge shape", with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,)}\n"), None, 1, "2^40"),
        ("unterminated header", with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,"), None, 1, "header"),
        ("dtype mismatch", npy_bytes("<f8", false, &[2], &[0u8; 16], 1), None, 1, "<f8"),
        ("missing operand file", good.clone(),
            with_call(&call_json("add", &[("x0", "nothere.npy", "f32", false), ("x1", "good.npy", "f32", false)], "")), 1, "nothere.npy"),
        ("unknown dtype name", good.clone(),
            with_call(&call_json("add", &[("x0", "x.npy", "f33", false), ("x1", "good.npy", "f32", false)], "")), 2, "unknown dtype `f33`"),
        ("code too wide for i4", npy_u8(&[2], &[0x1f, 0x01]), with_call(&call_json("neg", &[("x0", "x.npy", "i4", false)], "")), 1, "does not fit"),
        ("code too wide for e2m3fn", npy_u8(&[2], &[0x40, 0x01]), with_call(&call_json("neg", &[("x0", "x.npy", "e2m3fn", false)], "")), 1, "does not fit"),
        ("packed non-sub-byte", good.clone(),
            with_call(&call_json("add", &[("x0", "x.npy", "f32", true), ("x1", "good.npy", "f32", false)], "")), 2, "packed"),
        ("packed rank 0", npy_u8(&[], &[0x12]), with_call(&call_json("neg", &[("x0", "x.npy", "i4", true)], "")), 1, "axis"),
        ("bad JSON", good.clone(), with_call("{\"kernel\": \"add\", "), 2, "bad call file"),
        ("JSON not an object", good.clone(), with_call("[1, 2, 3]"), 2, "bad call file"),
        ("unknown call key", good.clone(),
            with_call(r#"{"kernel": "add", "operands": {}, "results": {}, "colour": "red"}"#), 2, "colour"),
        ("duplicate operand", good.clone(),
            with_call(r#"{"kernel": "add", "operands": {"x0": {"npy": "x.npy"}, "x0": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#), 2, "twice"),
        ("unknown kernel", good.clone(),
            with_call(r#"{"kernel": "frobnicate", "operands": {}, "results": {}}"#), 2, "unknown kernel"),
        ("wrong operand name", good.clone(),
            with_call(&call_json("add", &[("x0", "x.npy", "f32", false), ("z", "good.npy", "f32", false)], "")), 2, "`z`"),
        ("missing operand", good.clone(), with_call(&call_json("add", &[("x0", "x.npy", "f32", false)], "")), 2, "x1"),
        ("attributes", good.clone(),
            with_call(r#"{"kernel": "neg", "attrs": {"op": "sum"}, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#), 2, "attributes"),
        ("two results", good.clone(),
            with_call(r#"{"kernel": "neg", "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}, "z": {"npy": "z.npy"}}}"#), 2, "one result"),
        ("unknown tier", good.clone(),
            with_call(r#"{"kernel": "neg", "tier": "sse9", "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#), 2, "sse9"),
        ("result dtype mismatch", good.clone(),
            with_call(&call_json("add", &[("x0", "x.npy", "f32", false), ("x1", "good.npy", "f32", false)], r#", "dtype": "f16""#)), 1, "f16"),
        ("result shape too large", good.clone(),
            with_call(&call_json("add", &[("x0", "x.npy", "f32", false), ("x1", "good.npy", "f32", false)], r#", "shape": [1099511627776, 4]"#)), 1, "2^40"),
        ("result shape overflow", good.clone(),
            with_call(&call_json("add", &[("x0", "x.npy", "f32", false), ("x1", "good.npy", "f32", false)], r#", "shape": [18446744073709551615, 18446744073709551615]"#)), 1, "2^40"),
        ("negative result extent", good.clone(),
            with_call(&call_json("add", &[("x0", "x.npy", "f32", false), ("x1", "good.npy", "f32", false)], r#", "shape": [-4]"#)), 2, "bad call file"),
        ("shapes do not broadcast", npy_f32(&[3], &[1.0, 2.0, 3.0]), None, 1, "broadcast"),
        ("result shape mismatch", good.clone(),
            with_call(&call_json("add", &[("x0", "x.npy", "f32", false), ("x1", "good.npy", "f32", false)], r#", "shape": [5]"#)), 1, "broadcast"),
        ("dtype not accepted", good.clone(),
            with_call(&call_json("shl", &[("x0", "x.npy", "f32", false), ("x1", "good.npy", "f32", false)], "")), 1, "not defined"),
        ("mixed dtypes", npy_bytes("<f8", false, &[4], &[0u8; 32], 1),
            with_call(&call_json("add", &[("x0", "x.npy", "f64", false), ("x1", "good.npy", "f32", false)], "")), 1, "x1"),
        ("too many threads", good.clone(),
            with_call(r#"{"kernel": "neg", "threads": 18446744073709551615, "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#), 2, "threads"),
        ("unwritable result", good.clone(),
            with_call(r#"{"kernel": "neg", "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "no/such/dir/y.npy"}}}"#), 1, "cannot write"),
    ];
    for (case, npy, call, code, needle) in cases {
        dir.write("x.npy", &npy);
        dir.write(
            "call.json",
            call.unwrap_or_else(|| default_call.clone()).as_bytes(),
        );
        let run = tessera(&dir.0, &["run", "call.json"]);
        std::panic::catch_unwind(|| run.assert_refused(code, needle))
            .unwrap_or_else(|_| panic!("case `{case}` failed: {run:?}"));
    }
}

#[test]
fn command_line_errors_are_usage_errors() {
    let dir = TempDir::new("usage");
    tessera(&dir.0, &[]).assert_refused(2, "no command");
    tessera(&dir.0, &["frobnicate"]).assert_refused(2, "unknown command");
    tessera(&dir.0, &["run"]).assert_refused(2, "call file");
    tessera(&dir.0, &["run", "a.json", "b.json"]).assert_refused(2, "call file");
    tessera(&dir.0, &["run", "missing.json"]).assert_refused(2, "missing.json");
    tessera(&dir.0, &["kernels", "--yaml"]).assert_refused(2, "--yaml");
    tessera(&dir.0, &["coverage", "--tested"]).assert_refused(2, "needs a value");
    tessera(&dir.0, &["selftest", "now"]).assert_refused(2, "now");
    let help = tessera(&dir.0, &["help"]);
    assert_eq!(help.code, Some(0));
    assert!(help.stdout.contains("tessera run CALL.json") || help.stdout.contains("run CALL.json"));
}

#[test]
fn empty_arrays_run() {
    let dir = TempDir::new("empty");
    dir.write("a.npy", &npy_f32(&[0, 3], &[]));
    dir.write("b.npy", &npy_f32(&[3], &[1.0, 2.0, 3.0]));
    dir.write(
        "call.json",
        call_json(
            "max",
            &[("x0", "a.npy", "f32", false), ("x1", "b.npy", "f32", false)],
            "",
        )
        .as_bytes(),
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![0, 3]);
    assert!(y.data.is_empty());
}

#[test]
fn paths_are_relative_to_the_call_file() {
    let dir = TempDir::new("relative");
    std::fs::create_dir_all(dir.path("sub")).unwrap();
    dir.write("sub/a.npy", &npy_f32(&[2], &[1.0, -4.0]));
    dir.write(
        "sub/call.json",
        br#"{"kernel": "abs", "operands": {"x": {"npy": "a.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "sub/call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(f32s(&read_npy(&dir.path("sub/y.npy")).data), vec![1.0, 4.0]);
}

/// A contraction through `tessera run`: a C-order, b read from a Fortran-order
/// file (a transposed view), an init row that broadcasts; the result is the
/// chain-order sum computed here (rows 9 > 4, columns 8 > 4, 72 ≥ 64 outputs).
#[test]
fn contract_matches_a_chain_computed_here() {
    let dir = TempDir::new("contract");
    let mut rng = Rng::new(21);
    let (m, k, n) = (9, 5, 8);
    let a = random_f32s(&mut rng, m * k);
    let stored_b = random_f32s(&mut rng, k * n); // b[q][j] at j * k + q
    let init = random_f32s(&mut rng, n);
    dir.write("a.npy", &npy_f32(&[m, k], &a));
    let bytes: Vec<u8> = stored_b.iter().flat_map(|v| v.to_le_bytes()).collect();
    dir.write("b.npy", &npy_bytes("<f4", true, &[k, n], &bytes, 1));
    dir.write("init.npy", &npy_f32(&[n], &init));
    dir.write(
        "call.json",
        br#"{"kernel": "contract", "attrs": {"contracting": [[1, 0]], "acc": "f32"},
            "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}, "init": {"npy": "init.npy"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("Chain order"), "{}", run.stdout);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.descr, "<f4");
    assert_eq!(y.shape, vec![m, n]);
    let got = f32s(&y.data);
    for i in 0..m {
        for j in 0..n {
            let mut s = init[j];
            for q in 0..k {
                s = a[i * k + q].mul_add(stored_b[j * k + q], s);
            }
            assert_eq!(got[i * n + j].to_bits(), s.to_bits(), "({i}, {j})");
        }
    }

    // Refusals: contracted extents that differ; a missing attribute.
    dir.write(
        "bad.json",
        br#"{"kernel": "contract", "attrs": {"contracting": [[0, 0]]},
            "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}},
            "results": {"y": {"npy": "y2.npy"}}}"#,
    );
    tessera(&dir.0, &["run", "bad.json"]).assert_refused(1, "differ");
    assert!(!dir.path("y2.npy").exists());
    dir.write(
        "bad2.json",
        br#"{"kernel": "contract", "attrs": {},
            "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}},
            "results": {"y": {"npy": "y2.npy"}}}"#,
    );
    tessera(&dir.0, &["run", "bad2.json"]).assert_refused(2, "contracting");
}

/// Integer inputs take the default accumulator (i32 for i8 × i8) and give the
/// exact sums; the report names the order.
#[test]
fn contract_of_int8_defaults_to_exact_int32() {
    let dir = TempDir::new("contract_i8");
    let mut rng = Rng::new(77);
    let (m, k, n) = (6, 40, 7);
    let a: Vec<i8> = (0..m * k).map(|_| rng.next_u64() as i8).collect();
    let b: Vec<i8> = (0..k * n).map(|_| rng.next_u64() as i8).collect();
    let bytes = |v: &[i8]| v.iter().map(|&x| x as u8).collect::<Vec<u8>>();
    dir.write("a.npy", &npy_bytes("|i1", false, &[m, k], &bytes(&a), 1));
    dir.write("b.npy", &npy_bytes("|i1", false, &[k, n], &bytes(&b), 1));
    dir.write(
        "call.json",
        br#"{"kernel": "contract", "attrs": {"contracting": [[1, 0]]},
            "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}},
            "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("acc i32"), "{}", run.stdout);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.descr, "<i4");
    assert_eq!(y.shape, vec![m, n]);
    for i in 0..m {
        for j in 0..n {
            let p = (i * n + j) * 4;
            let got = i32::from_le_bytes([y.data[p], y.data[p + 1], y.data[p + 2], y.data[p + 3]]);
            let want: i32 = (0..k)
                .map(|q| a[i * k + q] as i32 * b[q * n + j] as i32)
                .sum();
            assert_eq!(got, want, "({i}, {j})");
        }
    }
}
