//! `tessera run` with the complex dtypes of narrow floats: f16c and bf16c
//! travel in `.npy` files as raw `<u4` codes (the real part's 16-bit code in
//! the low half), named by the call's `dtype`. Expected codes are worked out
//! here from the formats (f16: 1 sign, 5 exponent, 10 mantissa bits, bias
//! 15; bf16: the top half of an f32).

mod common;

use common::*;

/// `<u4` codes of complex numbers given as (real code, imaginary code).
fn codes(z: &[(u16, u16)]) -> Vec<u8> {
    z.iter()
        .flat_map(|&(re, im)| ((re as u32) | (im as u32) << 16).to_le_bytes())
        .collect()
}

fn npy_c64(shape: &[usize], z: &[(f32, f32)]) -> Vec<u8> {
    let data: Vec<u8> = z
        .iter()
        .flat_map(|&(re, im)| [re.to_le_bytes(), im.to_le_bytes()].concat())
        .collect();
    npy_bytes("<c8", false, shape, &data, 1)
}

fn ok(run: &Run) {
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
}

#[test]
fn casts_into_and_out_of_f16c_and_bf16c() {
    let dir = TempDir::new("complex-half-cast");
    // 1.5 + 2i, -0.25 + 65504i, 1e6 - 0i (beyond f16: infinity by default,
    // the largest finite value saturating), 2^-25·1.5 (f16: above half the
    // smallest subnormal, rounds up to it).
    let tiny = 1.5 * 2f32.powi(-25);
    dir.write(
        "z.npy",
        &npy_c64(
            &[4],
            &[(1.5, 2.0), (-0.25, 65504.0), (1e6, -0.0), (tiny, 0.0)],
        ),
    );
    for (mode, big) in [("default", 0x7c00u16), ("saturating", 0x7bff)] {
        let run = run_call(
            &dir,
            &format!(
                r#"{{"kernel": "cast", "attrs": {{"mode": "{mode}"}},
                    "operands": {{"x": {{"npy": "z.npy"}}}},
                    "results": {{"y": {{"npy": "h.npy", "dtype": "f16c"}}}}}}"#
            ),
        );
        ok(&run);
        let y = read_npy(&dir.path("h.npy"));
        assert_eq!((y.descr.as_str(), y.shape.clone()), ("<u4", vec![4]));
        assert_eq!(
            y.data,
            codes(&[
                (0x3e00, 0x4000),
                (0xb400, 0x7bff),
                (big, 0x8000),
                (0x0001, 0x0000)
            ]),
            "{mode}"
        );
    }
    // bf16c: the top halves of the f32 parts, rounded to nearest even
    // (1 + 2^-8 is a tie: down to 1; 1 + 3·2^-9 rounds up).
    dir.write(
        "w.npy",
        &npy_c64(
            &[2],
            &[
                (1.0 + 2f32.powi(-8), -3.0),
                (1.0 + 3.0 * 2f32.powi(-9), 0.5),
            ],
        ),
    );
    ok(&run_call(
        &dir,
        r#"{"kernel": "cast", "operands": {"x": {"npy": "w.npy"}},
            "results": {"y": {"npy": "b.npy", "dtype": "bf16c"}}}"#,
    ));
    let y = read_npy(&dir.path("b.npy"));
    assert_eq!(
        y.data,
        codes(&[(0x3f80, 0xc040), (0x3f81, 0x3f00)]),
        "bf16c codes"
    );
    // And back to c64, exactly.
    ok(&run_call(
        &dir,
        r#"{"kernel": "cast", "operands": {"x": {"npy": "b.npy", "dtype": "bf16c"}},
            "results": {"y": {"npy": "c.npy", "dtype": "c64"}}}"#,
    ));
    let c = read_npy(&dir.path("c.npy"));
    assert_eq!(c.descr, "<c8");
    assert_eq!(
        f32s(&c.data),
        [1.0, -3.0, 1.0 + 2f32.powi(-7), 0.5],
        "bf16c -> c64"
    );
}

#[test]
fn arithmetic_and_sums_of_f16c() {
    let dir = TempDir::new("complex-half-kinds");
    // (1 + 2i)(3 - i) = 5 + 5i; (0.5 + 0i)(-2 + 4i) = -1 + 2i.
    dir.write(
        "a.npy",
        &npy_bytes(
            "<u4",
            false,
            &[2],
            &codes(&[(0x3c00, 0x4000), (0x3800, 0x0000)]),
            1,
        ),
    );
    dir.write(
        "b.npy",
        &npy_bytes(
            "<u4",
            false,
            &[2],
            &codes(&[(0x4200, 0xbc00), (0xc000, 0x4400)]),
            1,
        ),
    );
    ok(&run_call(
        &dir,
        r#"{"kernel": "mul", "operands": {"x0": {"npy": "a.npy", "dtype": "f16c"},
            "x1": {"npy": "b.npy", "dtype": "f16c"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    ));
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.descr, "<u4");
    assert_eq!(y.data, codes(&[(0x4500, 0x4500), (0xbc00, 0x4000)]));
    // Their sum, into c64: (1 + 0.5) + (2 + 0)i.
    ok(&run_call(
        &dir,
        r#"{"kernel": "reduce", "attrs": {"op": "sum", "axes": [0]},
            "operands": {"x": {"npy": "a.npy", "dtype": "f16c"}},
            "results": {"y": {"npy": "s.npy", "dtype": "c64"}}}"#,
    ));
    let s = read_npy(&dir.path("s.npy"));
    assert_eq!(f32s(&s.data), [1.5, 2.0]);
    // The real part, as f16 (raw `<f2`).
    ok(&run_call(
        &dir,
        r#"{"kernel": "imag", "operands": {"x0": {"npy": "b.npy", "dtype": "f16c"}},
            "results": {"y": {"npy": "i.npy"}}}"#,
    ));
    let i = read_npy(&dir.path("i.npy"));
    assert_eq!(i.descr, "<f2");
    assert_eq!(i.data, [0x00, 0xbc, 0x00, 0x44]);
    // A complex FFT of f16c is refused with one line.
    run_call(
        &dir,
        r#"{"kernel": "c2c", "attrs": {"axes": [0]},
            "operands": {"x": {"npy": "a.npy", "dtype": "f16c"}},
            "results": {"y": {"npy": "f.npy"}}}"#,
    )
    .assert_refused(1, "f16c");
}
