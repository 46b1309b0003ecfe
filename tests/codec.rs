//! The parameterised-float codecs of the runtime (`runtime::minifloat::{decode,
//! encode}` with the generated parameter types) against the independent model
//! of testkit/src/mini.rs: every code decoded, every value, midpoint and
//! midpoint neighbour encoded in both cast modes, random f32 bit patterns, and
//! the catalogue's parameters checked against the generated ones.
//!
//! `cargo test --release -- --ignored` also runs every one of the 2^32 f32
//! inputs through every encoder in both modes.

use tessera_generated::codecs::visit_params;
use tessera_generated::runtime::minifloat::{
    decode, encode, encode_general, graded_applies, pow2_applies, truncated_applies, MiniFloat,
    ParamsVisitor,
};
use tessera_generated::{Class, DType, NanStyle, NanTo, Negative, Overflow};
use tessera_testkit::mini::{mini, MiniOracle};
use tessera_testkit::rng::{seed, Rng};

/// The runtime's codec of one dtype, through plain function pointers.
struct Rt {
    dtype: DType,
    decode: fn(u32) -> f32,
    encode: [fn(f32) -> u32; 2],
    /// The general form that `encode` replaces by a shorter one for some dtypes.
    general: [fn(f32) -> u32; 2],
    /// Which form `encode` takes: "graded", "pow2" or "general".
    form: &'static str,
    exp_bits: u32,
    man_bits: u32,
    bias: i32,
    signed: bool,
    subnormals: bool,
    infinities: bool,
    nan: NanStyle,
    neg_zero: bool,
    ties_away: bool,
    max_code: u32,
    overflow: [Overflow; 2],
    nan_to: NanTo,
    negative: Negative,
    store_bytes: usize,
}

fn rt<P: MiniFloat>(dtype: DType) -> Rt {
    Rt {
        dtype,
        decode: decode::<P>,
        encode: [encode::<P, false>, encode::<P, true>],
        general: [encode_general::<P, false>, encode_general::<P, true>],
        form: if graded_applies::<P>() {
            "graded"
        } else if truncated_applies::<P>() {
            "truncated"
        } else if pow2_applies::<P>() {
            "pow2"
        } else {
            "general"
        },
        exp_bits: P::EXP_BITS,
        man_bits: P::MAN_BITS,
        bias: P::BIAS,
        signed: P::SIGNED,
        subnormals: P::SUBNORMALS,
        infinities: P::INFINITIES,
        nan: P::NAN,
        neg_zero: P::NEG_ZERO,
        ties_away: P::TIES_AWAY,
        max_code: P::MAX_CODE,
        overflow: [P::OVERFLOW, P::OVERFLOW_SAT],
        nan_to: P::NAN_TO,
        negative: P::NEGATIVE,
        store_bytes: std::mem::size_of::<P::Store>(),
    }
}

/// Every parameterised float of the catalogue, reached through the generated
/// dispatch (a dtype added to the spec is included with no edit here).
fn runtimes() -> Vec<Rt> {
    struct ToRt;
    impl ParamsVisitor<DType> for ToRt {
        type Out = Rt;
        fn visit<P: MiniFloat>(self, dtype: DType) -> Rt {
            rt::<P>(dtype)
        }
    }
    DType::ALL
        .iter()
        .filter_map(|&d| visit_params(d, ToRt))
        .collect()
}

fn model(r: &Rt) -> &'static MiniOracle {
    mini(r.dtype).expect("a model for every parameterised float")
}

fn f32_up(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::from_bits(1);
    }
    if x > 0.0 {
        f32::from_bits(x.to_bits() + 1)
    } else {
        f32::from_bits(x.to_bits() - 1)
    }
}

fn f32_down(x: f32) -> f32 {
    -f32_up(-x)
}

/// Compare the runtime's encoding of x (mode 0 default, 1 saturating) with the model's.
fn check_encode(r: &Rt, m: &MiniOracle, x: f32, mode: usize) -> Result<(), String> {
    let got = (r.encode[mode])(x);
    let want = m.encode(x as f64, mode == 1);
    let ok = if m.is_nan_code(want) {
        got < (1 << m.code_bits) && m.is_nan_code(got)
    } else {
        got == want
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{} encode{}({x:e} = {:#010x}) = {got:#x} ({}), want {want:#x} ({})",
            r.dtype.name(),
            if mode == 1 { "_sat" } else { "" },
            x.to_bits(),
            m.decode(got),
            m.decode(want)
        ))
    }
}

fn report(what: &str, errs: &[String]) {
    if !errs.is_empty() {
        panic!(
            "{what}: {} failures; first:\n{}",
            errs.len(),
            errs.iter().take(30).cloned().collect::<Vec<_>>().join("\n")
        );
    }
}

#[test]
fn every_parameterised_float_has_a_codec_under_test() {
    let rts = runtimes();
    for d in DType::ALL {
        let info = d.info();
        if info.class == Class::Float && info.bits <= 16 {
            assert!(
                rts.iter().any(|r| r.dtype == d),
                "{}: no codec reachable through codecs::visit_params",
                info.name
            );
        }
    }
}

#[test]
fn parameters_agree_with_the_catalogue() {
    for r in runtimes() {
        let info = r.dtype.info();
        let f = info.float.unwrap();
        let name = info.name;
        assert_eq!(r.exp_bits, f.exponent_bits, "{name}");
        assert_eq!(r.man_bits, f.mantissa_bits, "{name}");
        assert_eq!(r.bias, f.bias, "{name}");
        assert_eq!(r.signed, f.signed, "{name}");
        assert_eq!(r.subnormals, f.subnormals, "{name}");
        assert_eq!(r.infinities, f.infinities, "{name}");
        assert_eq!(r.nan, f.nan, "{name}");
        assert_eq!(r.neg_zero, f.negative_zero, "{name}");
        assert_eq!(r.ties_away, f.ties_away, "{name}");
        assert_eq!(
            r.overflow,
            [f.overflow_default, f.overflow_saturating],
            "{name}"
        );
        assert_eq!(r.nan_to, f.nan_to, "{name}");
        assert_eq!(r.negative, f.negative, "{name}");
        assert_eq!(r.store_bytes, info.item_bytes, "{name}");
        let m = model(&r);
        // The model's largest finite value is the catalogue's, and the runtime's
        // largest code is the model's.
        assert_eq!(m.max, f.max_finite, "{name}: max_finite");
        assert_eq!(r.max_code, m.max_code, "{name}: MAX_CODE");
        let smallest = m.finite.iter().map(|v| v.0).find(|&v| v > 0.0).unwrap();
        assert_eq!(smallest, f.min_positive, "{name}: min_positive");
        // Without subnormals every value is normal, the smallest included.
        let normal = if m.subnormals {
            m.decode(1 << m.m)
        } else {
            smallest
        };
        assert_eq!(normal, f.min_normal, "{name}: min_normal");
        let one = m.finite.iter().position(|v| v.0 == 1.0).unwrap();
        assert_eq!(m.finite[one + 1].0 - 1.0, f.epsilon, "{name}: epsilon");
        assert_eq!(m.code_bits + (info.bits - m.code_bits), info.bits);
        assert!(
            m.code_bits <= info.bits,
            "{name}: code wider than its storage"
        );
        // Signed dtypes: -0 exists exactly when the catalogue says so.
        if f.signed {
            let neg_zero = m.decode(1 << (m.e + m.m));
            assert_eq!(
                neg_zero == 0.0 && neg_zero.is_sign_negative(),
                f.negative_zero,
                "{name}: -0"
            );
        }
    }
}

#[test]
fn decode_every_code() {
    let mut errs = Vec::new();
    for r in runtimes() {
        let m = model(&r);
        for code in 0..(1u32 << (8 * r.store_bytes)) {
            let got = (r.decode)(code) as f64;
            let want = m.decode(code);
            let ok = if want.is_nan() {
                got.is_nan()
            } else {
                got.to_bits() == want.to_bits()
            };
            if !ok {
                errs.push(format!(
                    "{} decode({code:#x}) = {got:e}, want {want:e}",
                    r.dtype.name()
                ));
            }
        }
    }
    report("decode", &errs);
}

/// Every finite value, every midpoint between neighbours (the rounding ties),
/// one f32 ulp either side of each, the overflow threshold and its
/// neighbours, below the smallest value, and the specials; with both signs.
fn structured_inputs(m: &MiniOracle) -> Vec<f32> {
    let mut xs = Vec::new();
    let exact = |v: f64| {
        let f = v as f32;
        assert_eq!(f as f64, v, "{:?}: {v:e} is not an f32", m.dtype);
        f
    };
    let around = |v: f64, xs: &mut Vec<f32>| {
        let f = exact(v);
        xs.extend([f, f32_up(f), f32_down(f)]);
    };
    for &(v, _) in &m.finite {
        around(v, &mut xs);
    }
    for w in m.finite.windows(2) {
        around((w[0].0 + w[1].0) / 2.0, &mut xs);
    }
    around(m.overflow_threshold, &mut xs);
    around(m.finite[0].0 / 2.0, &mut xs);
    around(m.finite[1].0 / 2.0, &mut xs);
    let specials = [
        0.0f32,
        f32::INFINITY,
        f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0x7fd2_3456),
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
    ];
    xs.extend(specials);
    let neg: Vec<f32> = xs.iter().map(|x| -x).collect();
    xs.extend(neg);
    xs
}

#[test]
fn encode_values_midpoints_and_neighbours() {
    let mut errs = Vec::new();
    for r in runtimes() {
        let m = model(&r);
        for x in structured_inputs(m) {
            for mode in 0..2 {
                if let Err(e) = check_encode(&r, m, x, mode) {
                    errs.push(e);
                }
            }
        }
    }
    report("encode (structured)", &errs);
}

#[test]
fn encode_random_f32() {
    let mut errs = Vec::new();
    for r in runtimes() {
        let m = model(&r);
        let mut rng = Rng::for_label(r.dtype.name(), seed());
        let (lo, hi) = (m.finite[1].0.log2() - 3.0, m.max.log2() + 2.0);
        // 250 000 random bit patterns and 250 000 values spread over the range.
        for i in 0..500_000 {
            let x = if i % 2 == 0 {
                f32::from_bits(rng.next_u32())
            } else {
                // Log-uniform over the dtype's range and a little beyond.
                let e = lo + (hi - lo) * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let s = if rng.chance(1, 2) { -1.0 } else { 1.0 };
                (s * e.exp2()) as f32
            };
            for mode in 0..2 {
                if let Err(e) = check_encode(&r, m, x, mode) {
                    errs.push(e);
                }
            }
        }
    }
    report("encode (random)", &errs);
}

#[test]
fn decode_then_encode_is_the_identity() {
    for r in runtimes() {
        let m = model(&r);
        for code in m.codes() {
            let v = (r.decode)(code);
            if v.is_nan() {
                continue;
            }
            let back = (r.encode[0])(v);
            // The only code with a different canonical encoding: -0 where there is none (not a code).
            assert_eq!(
                back,
                code,
                "{}: encode(decode({code:#x}) = {v:e})",
                r.dtype.name()
            );
        }
    }
}

/// Rules spelled out from spec/dtypes.toml, values worked by hand.
#[test]
fn encode_rules_by_hand() {
    let rts = runtimes();
    let enc = |d: DType, x: f32, sat: bool| {
        (rts.iter().find(|r| r.dtype == d).unwrap().encode[sat as usize])(x)
    };
    // e4m3fn: 448 is the largest value; 464 is the tie between 448 (0x7e, even)
    // and the would-be 480 (0x7f): it stays 448. Above it overflows: NaN by
    // default (0x7f), 448 saturating. Infinity likewise.
    assert_eq!(enc(DType::E4m3fn, 464.0, false), 0x7e);
    assert_eq!(enc(DType::E4m3fn, 464.0001, false) & 0x7f, 0x7f);
    assert_eq!(enc(DType::E4m3fn, 464.0001, true), 0x7e);
    assert_eq!(enc(DType::E4m3fn, -1e30, true), 0xfe);
    assert_eq!(enc(DType::E4m3fn, f32::INFINITY, false) & 0x7f, 0x7f);
    // Subnormals: 2^-9 is the smallest; 2^-10 ties to 0 (even), above it to 2^-9.
    assert_eq!(enc(DType::E4m3fn, 2f32.powi(-9), false), 0x01);
    assert_eq!(enc(DType::E4m3fn, 2f32.powi(-10), false), 0x00);
    assert_eq!(enc(DType::E4m3fn, -2f32.powi(-10), false), 0x80);
    assert_eq!(enc(DType::E4m3fn, 2f32.powi(-10) * 1.0001, false), 0x01);
    // f16: 65504 is the largest; 65520 ties with 65536 (even code 0x7c00): infinity.
    assert_eq!(enc(DType::F16, 65519.0, false), 0x7bff);
    assert_eq!(enc(DType::F16, 65520.0, false), 0x7c00);
    assert_eq!(enc(DType::F16, 65520.0, true), 0x7bff);
    assert_eq!(enc(DType::F16, -0.0, false), 0x8000);
    // e5m2: 57344 is the largest; 61440 ties with 65536: infinity (0x7c).
    assert_eq!(enc(DType::E5m2, 61440.0, false), 0x7c);
    assert_eq!(enc(DType::E5m2, 61439.0, false), 0x7b);
    // fnuz: no -0, so tiny negatives and -0 become +0; NaN is 0x80.
    assert_eq!(enc(DType::E4m3fnuz, -0.0, false), 0x00);
    assert_eq!(enc(DType::E4m3fnuz, -1e-30, false), 0x00);
    assert_eq!(enc(DType::E4m3fnuz, f32::NAN, false), 0x80);
    assert_eq!(enc(DType::E4m3fnuz, 1e9, false), 0x80);
    assert_eq!(enc(DType::E4m3fnuz, -1e9, true), 0xff);
    // e2m1fn: values 0 0.5 1 1.5 2 3 4 6; no NaN or infinity: NaN becomes the
    // zero of the opposite sign, overflow saturates in both modes; 5 ties 4
    // (even code 0b110) and 6 (0b111).
    assert_eq!(enc(DType::E2m1fn, f32::NAN, false), 0x8);
    assert_eq!(enc(DType::E2m1fn, -f32::NAN, false), 0x0);
    assert_eq!(enc(DType::E2m1fn, f32::INFINITY, false), 0x7);
    assert_eq!(enc(DType::E2m1fn, f32::NEG_INFINITY, false), 0xf);
    assert_eq!(enc(DType::E2m1fn, 5.0, false), 0x6);
    assert_eq!(enc(DType::E2m1fn, 2.5, false), 0x4);
    assert_eq!(enc(DType::E2m1fn, 0.25, false), 0x0);
    assert_eq!(enc(DType::E2m1fn, -0.75, false), 0x8 | 0x2);
    // e8m0fnu: powers of two 2^-127 (code 0) .. 2^127 (code 254), NaN 0xff, no
    // zero and no sign; halves round up (nearest-away). Zero and negatives are
    // NaN; below 2^-126 the ml_dtypes grid of multiples of 2^-126 applies (see
    // testkit/src/mini.rs).
    assert_eq!(enc(DType::E8m0fnu, 0.0, false), 0xff);
    assert_eq!(enc(DType::E8m0fnu, -0.0, false), 0xff);
    assert_eq!(enc(DType::E8m0fnu, f32::from_bits(1), false), 0x00);
    assert_eq!(enc(DType::E8m0fnu, 2f32.powi(-127), false), 0x00);
    assert_eq!(enc(DType::E8m0fnu, 1.5 * 2f32.powi(-127), false), 0x01);
    assert_eq!(enc(DType::E8m0fnu, 2f32.powi(-126), false), 0x01);
    assert_eq!(enc(DType::E8m0fnu, 1.5 * 2f32.powi(-126), false), 0x02); // tie, up
    assert_eq!(
        enc(DType::E8m0fnu, f32_down(1.5 * 2f32.powi(-126)), false),
        0x01
    );
    assert_eq!(enc(DType::E8m0fnu, 1.0, false), 127);
    assert_eq!(enc(DType::E8m0fnu, 1.5, false), 128); // tie 1 and 2: up
    assert_eq!(enc(DType::E8m0fnu, 3.0, false), 129); // tie 2 and 4: up
    assert_eq!(enc(DType::E8m0fnu, 2.9, false), 128);
    assert_eq!(enc(DType::E8m0fnu, 3.1, false), 129);
    assert_eq!(enc(DType::E8m0fnu, -1.0, false), 0xff);
    assert_eq!(enc(DType::E8m0fnu, -1.0, true), 0xff);
    assert_eq!(enc(DType::E8m0fnu, f32::MAX, false), 0xff);
    assert_eq!(enc(DType::E8m0fnu, f32::MAX, true), 254);
    assert_eq!(
        enc(DType::E8m0fnu, f32_down(1.5 * 2f32.powi(127)), false),
        254
    );
    assert_eq!(enc(DType::E8m0fnu, 1.5 * 2f32.powi(127), false), 0xff); // tie, up: overflow
    assert_eq!(enc(DType::E8m0fnu, 1.5 * 2f32.powi(127), true), 254);
    // ue4m3: no sign bit; a negative input becomes its magnitude; NaN is 0x7f.
    assert_eq!(
        enc(DType::Ue4m3, -2.0, false),
        enc(DType::Ue4m3, 2.0, false)
    );
    assert_eq!(enc(DType::Ue4m3, -2.0, false), 0x40);
    assert_eq!(enc(DType::Ue4m3, -0.0, false), 0x00);
    assert_eq!(enc(DType::Ue4m3, f32::NAN, false), 0x7f);
    assert_eq!(enc(DType::Ue4m3, 1e6, false), 0x7f);
    assert_eq!(enc(DType::Ue4m3, 1e6, true), 0x7e);
    // bf16: subnormals kept: 2^-133 is the smallest.
    assert_eq!(enc(DType::Bf16, 2f32.powi(-133), false), 0x0001);
    assert_eq!(enc(DType::Bf16, 2f32.powi(-134), false), 0x0000);
    assert_eq!(enc(DType::Bf16, 3.0 * 2f32.powi(-134), false), 0x0002);
}

fn ml_dtypes_data(file: &str) -> Vec<u8> {
    let p = format!("{}/tests/data/ml_dtypes/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("cannot read {p}: {e}"))
}

/// The model of the spec's rules (testkit/src/mini.rs) against ml_dtypes
/// 0.6.0 on its reference vectors (tests/data/ml_dtypes): the spec says it
/// matches ml_dtypes, so the model (and through it every test above) must too.
#[test]
fn spec_model_matches_ml_dtypes() {
    let inputs: Vec<u32> = ml_dtypes_data("inputs.u32")
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut errs = Vec::new();
    let mut compared = 0;
    for r in runtimes() {
        let d = r.dtype;
        let name = match d {
            DType::F16 => "float16".to_string(),
            DType::Bf16 => "bfloat16".to_string(),
            DType::Ue4m3 => continue, // not an ml_dtypes type
            _ => d.info().aliases[0].to_string(),
        };
        // A dtype ml_dtypes does not have (one added to the spec) has no vectors.
        let path = format!(
            "{}/tests/data/ml_dtypes/{name}.codes",
            env!("CARGO_MANIFEST_DIR")
        );
        if !std::path::Path::new(&path).exists() {
            continue;
        }
        compared += 1;
        let raw = ml_dtypes_data(&format!("{name}.codes"));
        let want: Vec<u32> = if r.store_bytes == 2 {
            raw.chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
                .collect()
        } else {
            raw.iter().map(|&b| b as u32).collect()
        };
        assert_eq!(want.len(), inputs.len(), "{name}");
        let m = model(&r);
        for (&x, &w) in inputs.iter().zip(&want) {
            let got = m.encode(f32::from_bits(x) as f64, false);
            if !(got == w || m.is_nan_code(w) && m.is_nan_code(got)) {
                errs.push(format!(
                    "{name}: model encodes f32 {x:#010x} to {got:#x}, ml_dtypes to {w:#x}"
                ));
            }
        }
    }
    // The 13 ml_dtypes types with recorded vectors (tests/data/ml_dtypes).
    assert_eq!(compared, 13, "reference vectors compared");
    report("model vs ml_dtypes", &errs);
}

/// Every f32 through every encoder in both modes (2^37 encodings; the model
/// keeps its place in the value table as a cursor while magnitudes increase):
/// several minutes per core, run with `cargo test --release -- --ignored`.
#[test]
#[ignore = "exhaustive: cargo test --release -- --ignored"]
fn encode_every_f32_exhaustive() {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as u32;
    let t0 = std::time::Instant::now();
    for r in &runtimes() {
        let m = model(r);
        let chunk = (1u32 << 31).div_ceil(threads);
        let errs: Vec<String> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let mut errs = Vec::new();
                        let start = t * chunk;
                        let end = start.saturating_add(chunk).min(1 << 31);
                        let mut below = m.below(f32::from_bits(start) as f64);
                        for b in start..end {
                            let a = f32::from_bits(b) as f64;
                            while below < m.finite.len() && m.finite[below].0 < a {
                                below += 1;
                            }
                            for x in [f32::from_bits(b), f32::from_bits(b | 0x8000_0000)] {
                                for mode in 0..2 {
                                    let got = (r.encode[mode])(x);
                                    let want = m.encode_at(x as f64, mode == 1, Some(below));
                                    let ok = if m.is_nan_code(want) {
                                        got < (1 << m.code_bits) && m.is_nan_code(got)
                                    } else {
                                        got == want
                                    };
                                    if !ok && errs.len() < 10 {
                                        errs.push(format!(
                                            "{} encode{}({x:e} = {:#010x}) = {got:#x}, want {want:#x}",
                                            r.dtype.name(),
                                            if mode == 1 { "_sat" } else { "" },
                                            x.to_bits()
                                        ));
                                    }
                                }
                            }
                        }
                        errs
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        report(&format!("{} exhaustive encode", r.dtype.name()), &errs);
        eprintln!(
            "{}: every f32 encoded as the model says ({:.0} s)",
            r.dtype.name(),
            t0.elapsed().as_secs_f64()
        );
    }
}

/// Compare the shorter form of `r` with the general one on `x` and `-x`.
fn compare_forms(r: &Rt, bits: u32, errs: &mut Vec<String>) {
    for x in [f32::from_bits(bits), f32::from_bits(bits | 0x8000_0000)] {
        for mode in 0..2 {
            let (got, want) = ((r.encode[mode])(x), (r.general[mode])(x));
            if got != want && errs.len() < 10 {
                errs.push(format!(
                    "{} ({} form) mode {mode}: {:#010x} -> {got:#x}, general {want:#x}",
                    r.dtype.name(),
                    r.form,
                    x.to_bits()
                ));
            }
        }
    }
}

/// The dtypes whose `encode` takes a shorter form than the general one.
fn shorter() -> Vec<Rt> {
    runtimes()
        .into_iter()
        .filter(|r| r.form != "general")
        .collect()
}

/// The shorter encoders against the general one (itself checked against the
/// model above) on f32 bit patterns `start, start + step, …` of both signs.
fn forms_agree(step: u32, start: u32) -> Vec<String> {
    let mut errs = Vec::new();
    for r in &shorter() {
        for b in (start as u64..1 << 31).step_by(step as usize) {
            compare_forms(r, b as u32, &mut errs);
        }
    }
    errs
}

#[test]
fn shorter_encoders_match_the_general_one() {
    let forms: Vec<(&str, &str)> = runtimes()
        .iter()
        .map(|r| (r.dtype.name(), r.form))
        .collect();
    // The fp8/fp6/fp4 family and f16 take the graded form, bf16 the truncated
    // one, e8m0fnu the power-of-two one.
    for (name, form) in [
        ("e4m3fn", "graded"),
        ("e2m1fn", "graded"),
        ("f16", "graded"),
        ("e8m0fnu", "pow2"),
        ("bf16", "truncated"),
    ] {
        assert!(
            forms.contains(&(name, form)),
            "{name} should take the {form} form: {forms:?}"
        );
    }
    // Every exponent field with many mantissas (a prime step), and every
    // pattern of the low 16 bits in binades around the narrow dtypes' subnormal,
    // normal and overflow thresholds.
    let mut errs = forms_agree(65521, 0);
    for r in &shorter() {
        for e in [
            0u32,
            0x3b00_0000,
            0x3c00_0000,
            0x3f00_0000,
            0x4300_0000,
            0x4380_0000,
            0x7f7f_0000,
            0x7f80_0000,
        ] {
            for low in 0..1u32 << 16 {
                compare_forms(r, e | low, &mut errs);
            }
        }
    }
    report("shorter encoder forms", &errs);
}

/// The shorter encoders against the general one on every f32.
#[test]
#[ignore = "exhaustive: cargo test --release -- --ignored"]
fn shorter_encoders_match_the_general_one_exhaustive() {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as u32;
    let errs: Vec<String> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| s.spawn(move || forms_agree(threads, t)))
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    report("shorter encoder forms, every f32", &errs);
}
