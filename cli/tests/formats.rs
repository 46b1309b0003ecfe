//! `tessera run` with `cast`, `encode`, `decode` and `transcode`: results
//! checked against values worked out here from the formats' definitions (not
//! from the library), and malformed calls refused with one line.

mod common;

use common::*;
use tessera_testkit::rng::Rng;

// ---- the formats, from their parameters -------------------------------------

/// The value of a code of a small float with `eb` exponent and `mb` mantissa
/// bits, bias `bias`, subnormals, no infinities, a sign bit above the magnitude
/// when `signed`, and NaN at the all-ones magnitude when `nan_all_ones`.
fn mini_value(code: u8, eb: u32, mb: u32, bias: i32, signed: bool, nan_all_ones: bool) -> f64 {
    let vb = eb + mb;
    let mag = (code as u32) & ((1 << vb) - 1);
    let negative = signed && (code as u32 >> vb) & 1 == 1;
    if nan_all_ones && mag == (1 << vb) - 1 {
        return f64::NAN;
    }
    let e = (mag >> mb) as i32;
    let m = (mag & ((1 << mb) - 1)) as f64;
    let v = if e == 0 {
        m * 2f64.powi(1 - bias - mb as i32)
    } else {
        (2f64.powi(mb as i32) + m) * 2f64.powi(e - bias - mb as i32)
    };
    if negative {
        -v
    } else {
        v
    }
}

/// e4m3fn: 1 sign, 4 exponent, 3 mantissa bits, bias 7, NaN at S.1111.111.
fn e4m3fn(code: u8) -> f64 {
    mini_value(code, 4, 3, 7, true, true)
}

/// e2m1fn: 1 sign, 2 exponent, 1 mantissa bit, bias 1, no NaN (0 … 6).
fn e2m1(code: u8) -> f64 {
    mini_value(code, 2, 1, 1, true, false)
}

/// ue4m3: e4m3fn without its sign bit (0 … 448, NaN at 0x7f).
fn ue4m3(code: u8) -> f64 {
    mini_value(code, 4, 3, 7, false, true)
}

/// The magnitude code (among `0..count`, whose values `value` gives, ascending)
/// nearest to `a ≥ 0`, ties to the even code.
fn nearest_magnitude(a: f64, count: u8, value: impl Fn(u8) -> f64) -> u8 {
    let mut best = 0u8;
    for c in 1..count {
        let (db, dc) = ((value(best) - a).abs(), (value(c) - a).abs());
        if dc < db || (dc == db && c % 2 == 0) {
            best = c;
        }
    }
    best
}

/// f32 → e4m3fn by a search over the codes: nearest, ties to the even code;
/// NaN, infinities and values rounding beyond 448 give NaN (0x7f with the
/// sign), or ±448 when `saturating` (NaN stays NaN).
fn e4m3fn_cast(x: f32, saturating: bool) -> u8 {
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    if x.is_nan() {
        return sign | 0x7f;
    }
    let a = (x as f64).abs();
    // Code 0x7f stands for the first step beyond 448 (480), so 448 < a < 464
    // rounds down, a = 464 is a tie that goes to the even 448, and beyond is out.
    // At and past 480 itself the nearest is plainly 0x7f (far beyond, the
    // distances to 448 and 480 no longer differ in f64).
    let best = if a >= 480.0 {
        0x7f
    } else {
        nearest_magnitude(a, 0x80, |c| if c == 0x7f { 480.0 } else { e4m3fn(c) })
    };
    match (best, saturating) {
        (0x7f, true) => sign | 0x7e,
        (c, _) => sign | c,
    }
}

/// A real value → e2m1fn, nearest with ties to the even code, saturating at ±6.
fn e2m1_round(v: f64) -> u8 {
    let sign = if v.is_sign_negative() { 0x8 } else { 0 };
    sign | nearest_magnitude(v.abs(), 8, e2m1)
}

/// A positive real → ue4m3, nearest with ties to even, saturating at 448.
fn ue4m3_round(v: f64) -> u8 {
    nearest_magnitude(v, 0x7f, ue4m3)
}

// ---- helpers ----------------------------------------------------------------

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn npy_f64(shape: &[usize], values: &[f64]) -> Vec<u8> {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy_bytes("<f8", false, shape, &data, 1)
}

/// Write `call.json` in `dir`, run it, and return the run.
fn run_call(dir: &TempDir, call: &str) -> Run {
    dir.write("call.json", call.as_bytes());
    tessera(&dir.0, &["run", "call.json"])
}

fn ok(run: &Run) {
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

/// The tiers this machine runs, by name.
fn tiers() -> Vec<&'static str> {
    tessera::Tier::ALL
        .iter()
        .filter(|t| t.available())
        .map(|t| t.name())
        .collect()
}

/// f32 test values around e4m3fn's decisions: every code's value, the
/// midpoints between neighbours (ties), just off them, the overflow boundary,
/// specials, subnormals, and random values over a wide range.
fn e4m3fn_probe_values() -> Vec<f32> {
    let mut v = Vec::new();
    let mut mags: Vec<f64> = (0..0x7fu8).map(e4m3fn).collect();
    mags.push(480.0);
    for w in mags.windows(2) {
        let mid = (w[0] + w[1]) / 2.0;
        for x in [w[0], mid, w[1]] {
            let x = x as f32;
            v.extend([
                x,
                -x,
                f32::from_bits(x.to_bits() + 1),
                f32::from_bits(x.to_bits().saturating_sub(1)),
            ]);
        }
    }
    v.extend([
        0.0,
        -0.0,
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-40,
        464.0,
        464.00003,
        463.99997,
        -464.0,
        1e6,
    ]);
    let mut rng = Rng::new(0xE4);
    for _ in 0..4000 {
        let e = rng.below(40) as i32 - 20;
        let m = 1.0 + (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        let s = if rng.next_u64() & 1 == 1 { -1.0 } else { 1.0 };
        v.push(s * m * 2f32.powi(e));
    }
    v
}

// ---- cast -------------------------------------------------------------------

#[test]
fn cast_f32_to_e4m3fn_matches_a_search_over_the_codes() {
    let dir = TempDir::new("cast-e4m3fn");
    let x = e4m3fn_probe_values();
    dir.write("x.npy", &npy_f32(&[x.len()], &x));
    for tier in tiers() {
        for (mode, saturating) in [("default", false), ("saturating", true)] {
            let run = run_call(
                &dir,
                &format!(
                    r#"{{"kernel": "cast", "attrs": {{"mode": "{mode}"}}, "tier": "{tier}",
                        "operands": {{"x": {{"npy": "x.npy", "dtype": "f32"}}}},
                        "results": {{"y": {{"npy": "y.npy", "dtype": "float8_e4m3fn"}}}}}}"#
                ),
            );
            ok(&run);
            assert!(
                run.stdout.contains(&format!("tier {tier}")),
                "{}",
                run.stdout
            );
            let y = read_npy(&dir.path("y.npy"));
            assert_eq!((y.descr.as_str(), y.shape.clone()), ("|u1", vec![x.len()]));
            for (i, (&v, &got)) in x.iter().zip(&y.data).enumerate() {
                let want = e4m3fn_cast(v, saturating);
                if want & 0x7f == 0x7f {
                    assert_eq!(got & 0x7f, 0x7f, "{tier} {mode} [{i}] {v:e}: NaN expected");
                } else {
                    assert_eq!(got, want, "{tier} {mode} [{i}] {v:e}");
                }
            }
        }
    }
    // The attribute is optional: the default mode.
    let run = run_call(
        &dir,
        r#"{"kernel": "cast", "operands": {"x": {"npy": "x.npy"}},
            "results": {"y": {"npy": "z.npy", "dtype": "e4m3fn"}}}"#,
    );
    ok(&run);
    let z = read_npy(&dir.path("z.npy"));
    for (&v, &got) in x.iter().zip(&z.data) {
        let want = e4m3fn_cast(v, false);
        assert!(got == want || (want & 0x7f == 0x7f && got & 0x7f == 0x7f));
    }
}

#[test]
fn cast_rounds_broadcasts_and_reads_layouts() {
    let dir = TempDir::new("cast-misc");
    // f64 → f32 rounds once, to nearest even: Rust's `as` does the same.
    let mut rng = Rng::new(21);
    let x: Vec<f64> = (0..400)
        .map(|_| {
            // Exponents across f32's range and past both of its ends.
            let exponent = 1023 - 160 + rng.below(320);
            let sign = rng.next_u64() & (1 << 63);
            f64::from_bits(sign | exponent << 52 | (rng.next_u64() >> 12))
        })
        .chain([
            1.0 + 2f64.powi(-24),
            1.0 + 3.0 * 2f64.powi(-24),
            1e300,
            -1e-300,
        ])
        .collect();
    dir.write("x.npy", &npy_f64(&[x.len()], &x));
    let run = run_call(
        &dir,
        r#"{"kernel": "cast", "operands": {"x": {"npy": "x.npy"}},
            "results": {"y": {"npy": "y.npy", "dtype": "f32"}}}"#,
    );
    ok(&run);
    let got = f32s(&read_npy(&dir.path("y.npy")).data);
    for (a, b) in x.iter().zip(&got) {
        assert!(
            (*a as f32).to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "{a:e}"
        );
    }

    // i32 → u8: wraps by default, clamps when saturating.
    let ints: [i32; 6] = [-1, 0, 255, 256, 1000, -300];
    let data: Vec<u8> = ints.iter().flat_map(|v| v.to_le_bytes()).collect();
    dir.write("i.npy", &npy_bytes("<i4", false, &[6], &data, 1));
    for (mode, want) in [
        ("default", ints.map(|v| v as u8)),
        ("saturating", ints.map(|v| v.clamp(0, 255) as u8)),
    ] {
        let run = run_call(
            &dir,
            &format!(
                r#"{{"kernel": "cast", "attrs": {{"mode": "{mode}"}},
                    "operands": {{"x": {{"npy": "i.npy"}}}},
                    "results": {{"y": {{"npy": "y.npy", "dtype": "u8"}}}}}}"#
            ),
        );
        ok(&run);
        assert_eq!(read_npy(&dir.path("y.npy")).data, want, "{mode}");
    }

    // A column broadcast to a [3, 5] i4 result, packed: truncation toward
    // zero, saturation to [-8, 7], NaN to 0.
    let col = [2.9f32, -9.5, f32::NAN];
    dir.write("c.npy", &npy_f32(&[3, 1], &col));
    let run = run_call(
        &dir,
        r#"{"kernel": "cast", "operands": {"x": {"npy": "c.npy"}},
            "results": {"y": {"npy": "y.npy", "dtype": "i4", "shape": [3, 5]}}}"#,
    );
    ok(&run);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![3, 5]);
    let want: Vec<u8> = [2u8, 0x8, 0]
        .iter()
        .flat_map(|&c| std::iter::repeat_n(c, 5))
        .collect();
    assert_eq!(y.data, want);

    // i4 codes (packed input) → f32, from a Fortran-order file of bytes.
    // Logical bytes [[0x7f, 0x81], [0x12, 0xe0]] stored column-major.
    dir.write(
        "p.npy",
        &npy_bytes("|u1", true, &[2, 2], &[0x7f, 0x12, 0x81, 0xe0], 1),
    );
    let run = run_call(
        &dir,
        r#"{"kernel": "cast", "operands": {"x": {"npy": "p.npy", "dtype": "i4", "packed": true}},
            "results": {"y": {"npy": "y.npy", "dtype": "f32"}}}"#,
    );
    ok(&run);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![2, 4]);
    assert_eq!(f32s(&y.data), [7.0, -1.0, -8.0, 1.0, 1.0, 2.0, -2.0, 0.0]);
}

/// Saturating casts between integer dtypes clamp to the destination's range.
/// Ignored until the library's `int_dst!` (codegen/runtime/cast.rs) computes
/// its upper bound without `i64::MAX as $t`, which is -1 for i8, i16 and i32:
/// today every non-negative value saturates to -1 there.
#[test]
fn saturating_integer_casts_clamp() {
    let dir = TempDir::new("cast-sat-int");
    let v: [i64; 8] = [0, 1, -1, 127, 128, -129, 70_000, -70_000];
    let data: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    dir.write("x.npy", &npy_bytes("<i8", false, &[8], &data, 1));
    for (dtype, lo, hi, size) in [
        ("i8", i8::MIN as i64, i8::MAX as i64, 1),
        ("i16", i16::MIN as i64, i16::MAX as i64, 2),
        ("i32", i32::MIN as i64, i32::MAX as i64, 4),
        ("u8", 0, u8::MAX as i64, 1),
    ] {
        let run = run_call(
            &dir,
            &format!(
                r#"{{"kernel": "cast", "attrs": {{"mode": "saturating"}},
                    "operands": {{"x": {{"npy": "x.npy"}}}},
                    "results": {{"y": {{"npy": "y.npy", "dtype": "{dtype}"}}}}}}"#
            ),
        );
        ok(&run);
        let y = read_npy(&dir.path("y.npy"));
        let want: Vec<u8> = v
            .iter()
            .flat_map(|x| x.clamp(&lo, &hi).to_le_bytes()[..size].to_vec())
            .collect();
        assert_eq!(y.data, want, "{dtype}");
    }
}

// ---- encode and decode ------------------------------------------------------

/// The OCP MX rule for one e4m3 block, worked out here: the shared exponent
/// is floor(log2 amax) − 8 (8 being the exponent of e4m3's largest value,
/// 448 = 1.75 · 2^8), or with `ceil` the smallest e with amax ≤ 448 · 2^e;
/// elements are v / 2^e rounded to e4m3fn, saturating.
fn mxfp8_expected(block: &[f32], ceil: bool) -> (u8, Vec<u8>) {
    let amax = block.iter().fold(0f64, |m, &v| m.max((v as f64).abs()));
    if amax == 0.0 {
        return (
            0,
            block
                .iter()
                .map(|v| if v.is_sign_negative() { 0x80 } else { 0 })
                .collect(),
        );
    }
    let mut e = amax.log2().floor() as i32 - 8;
    if ceil && amax > 448.0 * 2f64.powi(e) {
        e += 1;
    }
    let codes = block
        .iter()
        .map(|&v| e4m3fn_cast((v as f64 / 2f64.powi(e)) as f32, true))
        .collect();
    ((127 + e) as u8, codes)
}

fn encode_call(format: &str, rule: Option<&str>, x: &str, tensor_scale: bool) -> String {
    let rule = rule
        .map(|r| format!(r#", "rule": "{r}""#))
        .unwrap_or_default();
    let ts = if tensor_scale {
        r#", "tensor_scale": {"npy": "t.npy"}"#
    } else {
        ""
    };
    format!(
        r#"{{"kernel": "encode", "attrs": {{"format": "{format}"{rule}}},
            "operands": {{"x": {{"npy": "{x}"}}}},
            "results": {{"codes": {{"npy": "codes.npy"}}, "scales": {{"npy": "scales.npy"}}{ts}}}}}"#
    )
}

fn decode_call(format: &str, tensor_scale: bool, y_extra: &str) -> String {
    let ts = if tensor_scale {
        r#", "tensor_scale": {"npy": "t.npy"}"#
    } else {
        ""
    };
    format!(
        r#"{{"kernel": "decode", "attrs": {{"format": "{format}"}},
            "operands": {{"codes": {{"npy": "codes.npy"}}, "scales": {{"npy": "scales.npy"}}{ts}}},
            "results": {{"y": {{"npy": "y.npy"{y_extra}}}}}}}"#
    )
}

#[test]
fn mxfp8_round_trip_follows_the_ocp_rule() {
    let dir = TempDir::new("mxfp8");
    // Four blocks of 32: a ramp, large values past 448 · 2^k, tiny subnormal-
    // range values, and zeros.
    let mut x: Vec<f32> = (0..32).map(|i| (i as f32 - 15.5) * 0.37).collect();
    x.extend((0..32).map(|i| 300.0 + 13.0 * i as f32));
    x.extend((0..32).map(|i| (i as f32 - 16.0) * 1e-5));
    x.extend([0.0f32; 32]);
    dir.write("x.npy", &npy_f32(&[2, 64], &x));
    // The first block by hand: amax 5.735, floor(log2) = 2, exponent −6.
    assert_eq!(mxfp8_expected(&x[..32], false).0, 127 - 6);
    for (rule, ceil) in [(None, false), (Some("floor"), false), (Some("ceil"), true)] {
        for tier in tiers() {
            let call = encode_call("mxfp8_e4m3", rule, "x.npy", false).replacen(
                '{',
                &format!(r#"{{"tier": "{tier}", "#),
                1,
            );
            ok(&run_call(&dir, &call));
            let codes = read_npy(&dir.path("codes.npy"));
            let scales = read_npy(&dir.path("scales.npy"));
            assert_eq!(
                (codes.descr.as_str(), codes.shape.clone()),
                ("|u1", vec![2, 64])
            );
            assert_eq!(
                (scales.descr.as_str(), scales.shape.clone()),
                ("|u1", vec![2, 2])
            );
            for b in 0..4 {
                let (scale, want) = mxfp8_expected(&x[b * 32..(b + 1) * 32], ceil);
                assert_eq!(scales.data[b], scale, "{rule:?} {tier} block {b} scale");
                assert_eq!(
                    &codes.data[b * 32..(b + 1) * 32],
                    &want[..],
                    "{rule:?} {tier} block {b} codes"
                );
            }
            // Decode: each element times its block's scale, exactly.
            ok(&run_call(&dir, &decode_call("mxfp8_e4m3", false, "")));
            let y = read_npy(&dir.path("y.npy"));
            assert_eq!((y.descr.as_str(), y.shape.clone()), ("<f4", vec![2, 64]));
            for (i, &got) in f32s(&y.data).iter().enumerate() {
                let s = 2f64.powi(scales.data[i / 32] as i32 - 127);
                let want = (e4m3fn(codes.data[i]) * s) as f32;
                assert_eq!(got.to_bits(), want.to_bits(), "{rule:?} element {i}");
            }
        }
    }
    // Through the alias, decoded into f64: no element of these blocks lands
    // beyond 448 or among e4m3's subnormals once scaled, so each is within
    // half a step of e4m3 (2^-4 relative) of its value.
    ok(&run_call(&dir, &encode_call("mxfp8", None, "x.npy", false)));
    ok(&run_call(
        &dir,
        &decode_call("mxfp8_e4m3", false, r#", "dtype": "f64""#),
    ));
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.descr, "<f8");
    for (i, c) in y.data.chunks_exact(8).enumerate() {
        let got = f64::from_le_bytes(c.try_into().unwrap());
        let want = x[i] as f64;
        assert!(
            (got - want).abs() <= want.abs() / 16.0 + 1e-9,
            "element {i}: {got} for {want}"
        );
    }
}

#[test]
fn special_blocks_get_the_nan_scale_and_zero_blocks_the_smallest() {
    let dir = TempDir::new("mx-special");
    let mut x = vec![1.0f32; 64];
    x[5] = f32::NAN;
    x[40] = -0.0;
    for v in &mut x[32..] {
        *v = 0.0;
    }
    dir.write("x.npy", &npy_f32(&[64], &x));
    ok(&run_call(
        &dir,
        &encode_call("mxfp8_e4m3", None, "x.npy", false),
    ));
    let scales = read_npy(&dir.path("scales.npy"));
    assert_eq!(scales.data, [0xff, 0x00]);
    ok(&run_call(&dir, &decode_call("mxfp8_e4m3", false, "")));
    let y = f32s(&read_npy(&dir.path("y.npy")).data);
    assert!(y[..32].iter().all(|v| v.is_nan()), "{y:?}");
    assert!(y[32..].iter().all(|&v| v == 0.0));
}

#[test]
fn mxfp4_packs_two_codes_per_byte_and_nvfp4_has_a_tensor_scale() {
    let dir = TempDir::new("fp4");
    let mut rng = Rng::new(31);
    let x: Vec<f32> = (0..64)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 20.0)
        .collect();
    dir.write("x.npy", &npy_f32(&[1, 64], &x));

    // MXFP4: e2m1's largest value 6 = 1.5 · 2^2, so the exponent is floor(log2 amax) − 2.
    ok(&run_call(&dir, &encode_call("mxfp4", None, "x.npy", false)));
    let codes = read_npy(&dir.path("codes.npy"));
    let scales = read_npy(&dir.path("scales.npy"));
    assert_eq!(codes.shape, vec![1, 32], "two codes per byte");
    assert_eq!(scales.shape, vec![1, 2]);
    for b in 0..2 {
        let block = &x[b * 32..(b + 1) * 32];
        let amax = block.iter().fold(0f64, |m, &v| m.max((v as f64).abs()));
        let e = amax.log2().floor() as i32 - 2;
        assert_eq!(scales.data[b] as i32, 127 + e, "block {b}");
        for (j, &v) in block.iter().enumerate() {
            let i = b * 32 + j;
            let byte = codes.data[i / 2];
            let code = if i % 2 == 0 { byte >> 4 } else { byte & 0xf };
            assert_eq!(code, e2m1_round(v as f64 / 2f64.powi(e)), "element {i}");
        }
    }

    // NVFP4: tensor scale amax / (448 · 6) in f32; block scales
    // amax_block / (6 t) rounded to ue4m3; elements v / (s · t) rounded to e2m1.
    ok(&run_call(&dir, &encode_call("nvfp4", None, "x.npy", true)));
    let codes = read_npy(&dir.path("codes.npy"));
    let scales = read_npy(&dir.path("scales.npy"));
    let t = read_npy(&dir.path("t.npy"));
    assert_eq!((t.descr.as_str(), t.shape.clone()), ("<f4", vec![]));
    assert_eq!(
        (codes.shape.clone(), scales.shape.clone()),
        (vec![1, 32], vec![1, 4])
    );
    let amax = x.iter().fold(0f64, |m, &v| m.max((v as f64).abs()));
    let ts = f32s(&t.data)[0];
    assert_eq!(ts, (amax / (448.0 * 6.0)) as f32);
    for b in 0..4 {
        let block = &x[b * 16..(b + 1) * 16];
        let bmax = block.iter().fold(0f64, |m, &v| m.max((v as f64).abs()));
        let s = ue4m3_round(bmax / (6.0 * ts as f64));
        assert_eq!(scales.data[b], s, "block {b}");
        let d = ue4m3(s) * ts as f64;
        for (j, &v) in block.iter().enumerate() {
            let i = b * 16 + j;
            let code = (codes.data[i / 2] >> if i % 2 == 0 { 4 } else { 0 }) & 0xf;
            assert_eq!(code, e2m1_round(v as f64 / d), "element {i}");
        }
    }
    // Decode (f32, the default) into the shape the codes imply.
    ok(&run_call(
        &dir,
        &decode_call("nvfp4", true, r#", "dtype": "f32""#),
    ));
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![1, 64]);
    for (i, &got) in f32s(&y.data).iter().enumerate() {
        let code = (codes.data[i / 2] >> if i % 2 == 0 { 4 } else { 0 }) & 0xf;
        let want = (e2m1(code) * ue4m3(scales.data[i / 16]) * ts as f64) as f32;
        assert_eq!(got.to_bits(), want.to_bits(), "element {i}");
    }
    // A given shape must match the codes; a bf16 result is written as <u2.
    ok(&run_call(
        &dir,
        &decode_call("nvfp4", true, r#", "dtype": "bf16", "shape": [1, 64]"#),
    ));
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!((y.descr.as_str(), y.shape.clone()), ("<u2", vec![1, 64]));
}

#[test]
fn transcode_is_decode_then_encode() {
    let dir = TempDir::new("transcode");
    let mut rng = Rng::new(41);
    let x: Vec<f32> = (0..128)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 1000.0)
        .collect();
    dir.write("x.npy", &npy_f32(&[2, 64], &x));
    ok(&run_call(&dir, &encode_call("nvfp4", None, "x.npy", true)));
    // The decoded values, in f64 (exact for nvfp4: e2m1 · ue4m3 · f32).
    ok(&run_call(
        &dir,
        &decode_call("nvfp4", true, r#", "dtype": "f64""#),
    ));
    std::fs::rename(dir.path("y.npy"), dir.path("v.npy")).unwrap();
    for (to, rule) in [
        ("mxfp8_e4m3", None),
        ("mxfp6_e3m2", Some("ceil")),
        ("mxint8", None),
    ] {
        let rule_attr = rule
            .map(|r| format!(r#", "rule": "{r}""#))
            .unwrap_or_default();
        let run = run_call(
            &dir,
            &format!(
                r#"{{"kernel": "transcode", "attrs": {{"from": "nvfp4", "to": "{to}"{rule_attr}}},
                    "operands": {{"codes": {{"npy": "codes.npy"}}, "scales": {{"npy": "scales.npy"}},
                                  "tensor_scale": {{"npy": "t.npy"}}}},
                    "results": {{"codes": {{"npy": "tc.npy"}}, "scales": {{"npy": "ts.npy"}}}}}}"#
            ),
        );
        ok(&run);
        let tc = read_npy(&dir.path("tc.npy"));
        let tsc = read_npy(&dir.path("ts.npy"));
        assert_eq!(
            (tc.shape.clone(), tsc.shape.clone()),
            (vec![2, 64], vec![2, 2])
        );
        // The same as encoding the decoded values.
        let run = run_call(
            &dir,
            &encode_call(to, rule, "v.npy", false)
                .replace("codes.npy", "ec.npy")
                .replace("scales.npy", "es.npy"),
        );
        ok(&run);
        assert_eq!(tc.data, read_npy(&dir.path("ec.npy")).data, "{to}");
        assert_eq!(tsc.data, read_npy(&dir.path("es.npy")).data, "{to}");
    }
}

// ---- refusals ---------------------------------------------------------------

#[test]
fn malformed_calls_are_refused_with_one_line() {
    let dir = TempDir::new("formats-bad");
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    dir.write("x.npy", &npy_f32(&[2, 32], &x));
    dir.write("x30.npy", &npy_f32(&[2, 15], &x[..30]));
    dir.write("x0.npy", &npy_f32(&[], &[1.0]));
    dir.write("f.npy", &npy_f32(&[2, 32], &x));
    ok(&run_call(
        &dir,
        &encode_call("mxfp8_e4m3", None, "x.npy", false),
    ));
    dir.write("nv_x.npy", &npy_f32(&[32], &x[..32]));
    let nv = encode_call("nvfp4", None, "nv_x.npy", true)
        .replace("codes.npy", "nc.npy")
        .replace("scales.npy", "ns.npy");
    ok(&run_call(&dir, &nv));
    dir.write("t2.npy", &npy_f32(&[2], &[1.0, 2.0]));
    dir.write("bad6.npy", &npy_u8(&[2, 32], &[0x40; 64]));
    dir.write("badscale.npy", &npy_u8(&[2], &[0x80, 0x01]));
    dir.write("rank0.npy", &npy_u8(&[], &[0]));
    dir.write("s3.npy", &npy_u8(&[2, 3], &[127; 6]));

    let decode_with = |codes: &str, scales: &str, extra: &str| {
        format!(
            r#"{{"kernel": "decode", "attrs": {{"format": "mxfp8_e4m3"}},
                "operands": {{"codes": {{"npy": "{codes}"}}, "scales": {{"npy": "{scales}"}}}},
                "results": {{"y": {{"npy": "y.npy"{extra}}}}}}}"#
        )
    };
    let nv_decode = |ts: &str| {
        format!(
            r#"{{"kernel": "decode", "attrs": {{"format": "nvfp4"}},
                "operands": {{"codes": {{"npy": "nc.npy"}}, "scales": {{"npy": "ns.npy"}}{ts}}},
                "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        )
    };
    let cast = |attrs: &str, y: &str| {
        format!(
            r#"{{"kernel": "cast", "attrs": {attrs}, "operands": {{"x": {{"npy": "x.npy"}}}},
                "results": {{"y": {{"npy": "y.npy"{y}}}}}}}"#
        )
    };
    let cases: Vec<(&str, String, i32, &str)> = vec![
        (
            "unknown format",
            encode_call("mxfp9", None, "x.npy", false),
            2,
            "unknown format `mxfp9`",
        ),
        (
            "format not a string",
            encode_call("mxfp8", None, "x.npy", false).replace(r#""mxfp8""#, "8"),
            2,
            "must be a string",
        ),
        (
            "missing format",
            encode_call("mxfp8", None, "x.npy", false)
                .replace(r#""format": "mxfp8""#, r#""rule": "floor""#),
            2,
            "needs attribute format",
        ),
        (
            "bad rule",
            encode_call("mxfp8", Some("round"), "x.npy", false),
            2,
            "not \"round\"",
        ),
        (
            "nvfp4 rule on mx",
            encode_call("mxfp8", Some("nvfp4"), "x.npy", false),
            2,
            "does not apply",
        ),
        (
            "floor rule on nvfp4",
            encode_call("nvfp4", Some("floor"), "nv_x.npy", true),
            2,
            "does not apply",
        ),
        (
            "unknown attribute",
            encode_call("mxfp8", None, "x.npy", false)
                .replace(r#""format""#, r#""block": 32, "format""#),
            2,
            "`block`",
        ),
        (
            "missing tensor_scale result",
            encode_call("nvfp4", None, "nv_x.npy", false),
            2,
            "tensor_scale",
        ),
        (
            "tensor_scale result for mx",
            encode_call("mxfp8", None, "x.npy", true),
            2,
            "`tensor_scale`",
        ),
        (
            "wrong operand name",
            encode_call("mxfp8", None, "x.npy", false).replace(r#""x": "#, r#""x0": "#),
            2,
            "`x0`",
        ),
        (
            "last axis not whole blocks",
            encode_call("mxfp8", None, "x30.npy", false),
            1,
            "whole number",
        ),
        (
            "rank-0 input",
            encode_call("mxfp8", None, "x0.npy", false),
            1,
            "rank-0",
        ),
        (
            "codes result not u8",
            encode_call("mxfp8", None, "x.npy", false)
                .replace(r#""codes.npy""#, r#""codes.npy", "dtype": "f32""#),
            2,
            "u8",
        ),
        (
            "codes result packed",
            encode_call("mxfp8", None, "x.npy", false)
                .replace(r#""codes.npy""#, r#""codes.npy", "packed": true"#),
            2,
            "packed",
        ),
        (
            "codes result wrong shape",
            encode_call("mxfp8", None, "x.npy", false)
                .replace(r#""codes.npy""#, r#""codes.npy", "shape": [64]"#),
            1,
            "shape",
        ),
        (
            "missing tensor_scale operand",
            nv_decode(""),
            2,
            "tensor_scale",
        ),
        (
            "tensor_scale of two values",
            nv_decode(r#", "tensor_scale": {"npy": "t2.npy"}"#),
            1,
            "one",
        ),
        (
            "tensor_scale not f32",
            nv_decode(r#", "tensor_scale": {"npy": "t.npy", "dtype": "f64"}"#),
            2,
            "f32",
        ),
        (
            "tensor_scale for mx",
            decode_with("codes.npy", "scales.npy", "").replace(
                r#""scales.npy"}"#,
                r#""scales.npy"}, "tensor_scale": {"npy": "t.npy"}"#,
            ),
            2,
            "`tensor_scale`",
        ),
        (
            "codes of floats",
            decode_with("f.npy", "scales.npy", ""),
            1,
            "|u1",
        ),
        (
            "codes named e4m3fn",
            decode_with("codes.npy", "scales.npy", "")
                .replace(r#""codes.npy"}"#, r#""codes.npy", "dtype": "e4m3fn"}"#),
            2,
            "u8",
        ),
        (
            "codes rank 0",
            decode_with("rank0.npy", "scales.npy", ""),
            1,
            "axis",
        ),
        (
            "scales of the wrong shape",
            decode_with("codes.npy", "s3.npy", ""),
            1,
            "scales",
        ),
        (
            "scales swapped for codes",
            decode_with("scales.npy", "codes.npy", ""),
            1,
            "whole number",
        ),
        (
            "y shape not the codes'",
            decode_with("codes.npy", "scales.npy", r#", "shape": [4, 32]"#),
            1,
            "codes",
        ),
        (
            "y shape rank 0",
            decode_with("codes.npy", "scales.npy", r#", "shape": []"#),
            1,
            "rank-0",
        ),
        (
            "y dtype unknown",
            decode_with("codes.npy", "scales.npy", r#", "dtype": "f33""#),
            2,
            "f33",
        ),
        (
            "y packed f32",
            decode_with("codes.npy", "scales.npy", r#", "packed": true"#),
            2,
            "packed",
        ),
        (
            "mxfp6 codes too wide",
            decode_with("bad6.npy", "scales.npy", "").replace("mxfp8_e4m3", "mxfp6_e2m3"),
            1,
            "does not fit",
        ),
        (
            "ue4m3 scale too wide",
            nv_decode(r#", "tensor_scale": {"npy": "t.npy"}"#).replace("ns.npy", "badscale.npy"),
            1,
            "does not fit",
        ),
        (
            "decode takes no rule",
            decode_with("codes.npy", "scales.npy", "").replace(
                r#""format": "mxfp8_e4m3""#,
                r#""format": "mxfp8_e4m3", "rule": "ceil""#,
            ),
            2,
            "`rule`",
        ),
        (
            "transcode without to",
            r#"{"kernel": "transcode", "attrs": {"from": "mxfp8"}, "operands": {}, "results": {}}"#
                .to_string(),
            2,
            "needs attribute to",
        ),
        (
            "cast without a dtype",
            cast("{}", ""),
            2,
            "must name its dtype",
        ),
        (
            "cast bad mode",
            cast(r#"{"mode": "clamp"}"#, r#", "dtype": "f16""#),
            2,
            "\"clamp\"",
        ),
        (
            "cast mode not a string",
            cast(r#"{"mode": 1}"#, r#", "dtype": "f16""#),
            2,
            "must be a string",
        ),
        (
            "cast unknown attribute",
            cast(r#"{"rounding": "even"}"#, r#", "dtype": "f16""#),
            2,
            "`rounding`",
        ),
        (
            "cast shape not broadcast",
            cast("{}", r#", "dtype": "f16", "shape": [3, 32]"#),
            1,
            "broadcast",
        ),
        (
            "cast packed f16",
            cast("{}", r#", "dtype": "f16", "packed": true"#),
            2,
            "packed",
        ),
        (
            "cast two operands",
            cast("{}", r#", "dtype": "f16""#).replace(
                r#""x": {"npy": "x.npy"}"#,
                r#""x": {"npy": "x.npy"}, "y": {"npy": "x.npy"}"#,
            ),
            2,
            "`y`",
        ),
        (
            "cast huge shape",
            cast(
                "{}",
                r#", "dtype": "f16", "shape": [1099511627776, 1099511627776, 32]"#,
            ),
            1,
            "2^40",
        ),
    ];
    for (case, call, code, needle) in cases {
        let run = run_call(&dir, &call);
        std::panic::catch_unwind(|| run.assert_refused(code, needle))
            .unwrap_or_else(|_| panic!("case `{case}` failed: {run:?}"));
    }
    // nvfp4 [32] → mxfp4 is one block of 32; nvfp4 [16] is not a whole one.
    let to_mxfp4 = r#"{"kernel": "transcode", "attrs": {"from": "nvfp4", "to": "mxfp4"},
        "operands": {"codes": {"npy": "nc.npy"}, "scales": {"npy": "ns.npy"}, "tensor_scale": {"npy": "t.npy"}},
        "results": {"codes": {"npy": "o.npy"}, "scales": {"npy": "p.npy"}}}"#;
    ok(&run_call(&dir, to_mxfp4));
    assert_eq!(read_npy(&dir.path("o.npy")).shape, vec![16]);
    dir.write("nv16.npy", &npy_f32(&[16], &x[..16]));
    ok(&run_call(&dir, &nv.replace("nv_x.npy", "nv16.npy")));
    run_call(&dir, to_mxfp4).assert_refused(1, "whole number");
}

#[test]
fn nvfp4_encodes_under_the_callers_tensor_scale() {
    let dir = TempDir::new("fp4-scale");
    let x: Vec<f32> = (0..32).map(|i| (i as f32 - 15.5) * 0.8).collect();
    dir.write("x.npy", &npy_f32(&[32], &x));
    let call = encode_call("nvfp4", None, "x.npy", true).replace(
        r#""format": "nvfp4""#,
        r#""format": "nvfp4", "tensor_scale": 0.25"#,
    );
    ok(&run_call(&dir, &call));
    let t = read_npy(&dir.path("t.npy"));
    assert_eq!(f32s(&t.data), [0.25]);
    let codes = read_npy(&dir.path("codes.npy"));
    let scales = read_npy(&dir.path("scales.npy"));
    for b in 0..2 {
        let block = &x[b * 16..(b + 1) * 16];
        let bmax = block.iter().fold(0f64, |m, &v| m.max((v as f64).abs()));
        let s = ue4m3_round(bmax / (6.0 * 0.25));
        assert_eq!(scales.data[b], s, "block {b}");
        let d = ue4m3(s) * 0.25;
        for (j, &v) in block.iter().enumerate() {
            let i = b * 16 + j;
            let code = (codes.data[i / 2] >> if i % 2 == 0 { 4 } else { 0 }) & 0xf;
            assert_eq!(code, e2m1_round(v as f64 / d), "element {i}");
        }
    }
    // A zero scale, and a tensor scale for a format without one: refused.
    for (format, ts) in [("nvfp4", "0"), ("mxfp8_e4m3", "1.0")] {
        let call = encode_call(format, None, "x.npy", format == "nvfp4").replace(
            &format!(r#""format": "{format}""#),
            &format!(r#""format": "{format}", "tensor_scale": {ts}"#),
        );
        let out = run_call(&dir, &call);
        assert_ne!(
            out.code,
            Some(0),
            "{format} with tensor_scale {ts} accepted"
        );
    }
}

#[test]
fn the_block_as_value_layout_through_encode_and_decode() {
    let dir = TempDir::new("blocks");
    let mut rng = Rng::new(77);
    let x: Vec<f32> = (0..2 * 64)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 9.0)
        .collect();
    dir.write("x.npy", &npy_f32(&[2, 64], &x));
    for (format, value, ts) in [
        ("mxfp6_e3m2", 25usize, false),
        ("nvfp4", 9, true),
        ("mxfp8_e4m3", 33, false),
    ] {
        let block = if format == "nvfp4" { 16 } else { 32 };
        // The separate layout, then the blocks, of the same x.
        ok(&run_call(&dir, &encode_call(format, None, "x.npy", ts)));
        let codes = read_npy(&dir.path("codes.npy"));
        let scales = read_npy(&dir.path("scales.npy"));
        let t = if ts {
            ", \"tensor_scale\": {\"npy\": \"t2.npy\"}"
        } else {
            ""
        };
        let call = format!(
            r#"{{"kernel": "encode", "attrs": {{"format": "{format}", "layout": "blocks"}},
                "operands": {{"x": {{"npy": "x.npy"}}}},
                "results": {{"blocks": {{"npy": "b.npy"}}{t}}}}}"#
        );
        ok(&run_call(&dir, &call));
        let b = read_npy(&dir.path("b.npy"));
        let nb = 2 * 64 / block;
        assert_eq!(b.shape, vec![2, 64 / block, value], "{format}");
        let per = codes.data.len() / nb;
        for k in 0..nb {
            let v = &b.data[k * value..(k + 1) * value];
            assert_eq!(
                v[value - 1],
                scales.data[k],
                "{format} block {k}: scale last"
            );
            let c = &codes.data[k * per..(k + 1) * per];
            if value == 25 {
                // Four six-bit codes in three bytes, the first in the top bits.
                for (j, &code) in c.iter().enumerate() {
                    let g = j / 4;
                    let w =
                        (v[3 * g] as u32) << 16 | (v[3 * g + 1] as u32) << 8 | v[3 * g + 2] as u32;
                    assert_eq!(
                        (w >> (18 - 6 * (j % 4))) & 63,
                        code as u32,
                        "{format} {k} {j}"
                    );
                }
            } else {
                assert_eq!(&v[..value - 1], c, "{format} block {k}: codes first");
            }
        }
        // Decoding the blocks gives decode's values.
        ok(&run_call(&dir, &decode_call(format, ts, "")));
        let y1 = read_npy(&dir.path("y.npy")).data;
        let t = if ts {
            ", \"tensor_scale\": {\"npy\": \"t2.npy\"}"
        } else {
            ""
        };
        let call = format!(
            r#"{{"kernel": "decode", "attrs": {{"format": "{format}", "layout": "blocks"}},
                "operands": {{"blocks": {{"npy": "b.npy"}}{t}}},
                "results": {{"y": {{"npy": "y2.npy"}}}}}}"#
        );
        ok(&run_call(&dir, &call));
        let y2 = read_npy(&dir.path("y2.npy"));
        assert_eq!(y2.shape, vec![2, 64]);
        assert_eq!(y2.data, y1, "{format}: decoded");
    }
    // An unknown layout is refused.
    let call = encode_call("mxfp4", None, "x.npy", false).replace(
        r#""format": "mxfp4""#,
        r#""format": "mxfp4", "layout": "rows""#,
    );
    assert_ne!(run_call(&dir, &call).code, Some(0));
}
