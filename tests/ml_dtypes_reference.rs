//! The default float codecs against ml_dtypes (and numpy for float16), an
//! independent implementation: reference vectors recorded by
//! `tests/data/ml_dtypes/make.py` (ml_dtypes 0.6.0). Every f32 input must encode
//! to the same code (NaN payloads aside: any NaN code matches any NaN code), and
//! every code of an 8-bit-or-narrower dtype must decode to the same f32.

use tessera_generated::codecs::visit_params;
use tessera_generated::runtime::minifloat::{decode, encode, MiniFloat, ParamsVisitor};
use tessera_generated::DType;

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/ml_dtypes/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn check<P: MiniFloat>(name: &str) {
    let inputs = words(&data("inputs.u32"));
    let raw = data(&format!("{name}.codes"));
    let wide = raw.len() == 2 * inputs.len();
    let expected: Vec<u32> = if wide {
        raw.chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
            .collect()
    } else {
        raw.iter().map(|&b| b as u32).collect()
    };
    assert_eq!(expected.len(), inputs.len(), "{name}: vector lengths");
    let is_nan_code = |c: u32| decode::<P>(c).is_nan();
    let mut bad = Vec::new();
    for (&x, &want) in inputs.iter().zip(&expected) {
        let got = encode::<P, false>(f32::from_bits(x));
        if got != want && !(is_nan_code(got) && is_nan_code(want)) {
            bad.push((x, got, want));
        }
    }
    assert!(
        bad.is_empty(),
        "{name}: {} of {} encodes differ from ml_dtypes, first (input bits, ours, theirs): {:x?}",
        bad.len(),
        inputs.len(),
        &bad[..bad.len().min(8)]
    );
    if !wide {
        let values = words(&data(&format!("{name}.values")));
        for (code, &want) in values.iter().enumerate() {
            let got = decode::<P>(code as u32);
            let want = f32::from_bits(want);
            // Codes with bits above the dtype's width are not values; ml_dtypes
            // reads them with its own masking, so compare the dtype's own codes.
            if (code as u32) >> (P::EXP_BITS + P::MAN_BITS + P::SIGNED as u32) != 0 {
                continue;
            }
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{name}: code {code:#x} decodes to {got:e}, ml_dtypes says {want:e}"
            );
        }
    }
}

/// Run `check` for the dtype ml_dtypes calls `name`, through the generated
/// dispatch.
fn check_named(name: &str) {
    struct Check<'a>(&'a str);
    impl ParamsVisitor<DType> for Check<'_> {
        type Out = ();
        fn visit<P: MiniFloat>(self, _: DType) {
            check::<P>(self.0)
        }
    }
    let d = DType::from_name(name).unwrap_or_else(|| panic!("no dtype is called {name}"));
    visit_params(d, Check(name)).unwrap_or_else(|| panic!("{name} is not a parameterised float"));
}

#[test]
fn fp8_codecs_match_ml_dtypes() {
    for name in [
        "float8_e4m3fn",
        "float8_e5m2",
        "float8_e4m3",
        "float8_e3m4",
        "float8_e4m3fnuz",
        "float8_e5m2fnuz",
        "float8_e4m3b11fnuz",
        "float8_e8m0fnu",
    ] {
        check_named(name);
    }
}

#[test]
fn fp6_fp4_codecs_match_ml_dtypes() {
    for name in ["float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"] {
        check_named(name);
    }
}

#[test]
fn sixteen_bit_codecs_match_numpy_and_ml_dtypes() {
    check_named("float16");
    check_named("bfloat16");
}
