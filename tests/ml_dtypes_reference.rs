//! The default float codecs against ml_dtypes (and numpy for float16), an
//! independent implementation: reference vectors recorded by
//! `tests/data/ml_dtypes/make.py` (ml_dtypes 0.6.0). Every f32 input must encode
//! to the same code (NaN payloads aside: any NaN code matches any NaN code), and
//! every code of an 8-bit-or-narrower dtype must decode to the same f32.

use tessera_generated::codecs::*;
use tessera_generated::runtime::minifloat::{decode, encode, MiniFloat};

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

#[test]
fn fp8_codecs_match_ml_dtypes() {
    check::<E4m3fnParams>("float8_e4m3fn");
    check::<E5m2Params>("float8_e5m2");
    check::<E4m3Params>("float8_e4m3");
    check::<E3m4Params>("float8_e3m4");
    check::<E4m3fnuzParams>("float8_e4m3fnuz");
    check::<E5m2fnuzParams>("float8_e5m2fnuz");
    check::<E4m3b11fnuzParams>("float8_e4m3b11fnuz");
    check::<E8m0fnuParams>("float8_e8m0fnu");
}

#[test]
fn fp6_fp4_codecs_match_ml_dtypes() {
    check::<E2m3fnParams>("float6_e2m3fn");
    check::<E3m2fnParams>("float6_e3m2fn");
    check::<E2m1fnParams>("float4_e2m1fn");
}

#[test]
fn sixteen_bit_codecs_match_numpy_and_ml_dtypes() {
    check::<F16Params>("float16");
    check::<Bf16Params>("bfloat16");
}
