//! The transcendental kinds against references that are not the code under
//! test: f64 results against mpmath's values at 320 bits
//! (`tests/data/math/f64.txt`, written by `make_f64.py` beside it), within
//! 1 ulp (3.5 for `fast_*`), on every tier this CPU runs; f32 results on
//! inputs spread over every binade against the f64 maths library; the special
//! values of C99 Annex F that the spec's `specials` cannot express (they need
//! values no narrow float holds). The scalar tier's f32 and narrow-float
//! results are also checked, every code of the 16-bit dtypes included, by
//! tests/scalar_oracle.rs, and every tier against the scalar tier by
//! tests/differential.rs.

mod oracle;

use oracle::expect::{check, Expect};
use tessera_generated::{Accuracy, Args, DType, Kind, Tier, Variant};
use tessera_testkit::differential::kernel;
use tessera_testkit::math_ref::reference_of;
use tessera_testkit::rng::Rng;

#[track_caller]
fn tiers() -> Vec<Tier> {
    for t in Tier::ALL.into_iter().filter(|t| !t.available()) {
        eprintln!(
            "skipped ({}): the {} tier does not run on this CPU",
            std::panic::Location::caller(),
            t.name()
        );
    }
    Tier::ALL.into_iter().filter(|t| t.available()).collect()
}

/// Run the contiguous kernel of `k` on dtype `d` (f32 or f64) over `ins`.
fn apply<T: Copy + Default>(tier: Tier, k: Kind, d: DType, ins: &[Vec<T>]) -> Vec<T> {
    let f = kernel(tier, k, d, Variant::Contig).expect("kernel exists");
    let n = ins[0].len();
    let mut out = vec![T::default(); n];
    let mut src = [core::ptr::null(); 3];
    for (s, i) in src.iter_mut().zip(ins) {
        *s = i.as_ptr() as *const u8;
    }
    let args = Args {
        n,
        src,
        src_stride: [1; 3],
        dst: out.as_mut_ptr() as *mut u8,
        dst_stride: 1,
    };
    // SAFETY: every input holds n elements of the kernel's dtype and so does
    // the destination, which overlaps none of them.
    unsafe { f(&args) };
    out
}

struct Case {
    kind: String,
    args: Vec<f64>,
    hi: f64,
    lo: f64,
}

fn f64_cases() -> Vec<Case> {
    let text = include_str!("data/math/f64.txt");
    let h = |s: &str| f64::from_bits(u64::from_str_radix(s, 16).expect("hex"));
    text.lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let n = w.len();
            Case {
                kind: w[0].to_string(),
                args: w[1..n - 2].iter().map(|s| h(s)).collect(),
                hi: h(w[n - 2]),
                lo: h(w[n - 1]),
            }
        })
        .collect()
}

#[test]
fn f64_kinds_within_their_bound_of_mpmath() {
    let cases = f64_cases();
    assert!(cases.len() > 10_000);
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for tier in tiers() {
        for prefix in ["", "fast_"] {
            let names: std::collections::BTreeSet<&str> =
                cases.iter().map(|c| c.kind.as_str()).collect();
            for name in names {
                // The data names the kinds; those without a kind of the
                // prefix are skipped.
                let Some(k) = Kind::from_name(&format!("{prefix}{name}")) else {
                    continue;
                };
                let ulps = if prefix.is_empty() { 1.0 } else { 3.5 };
                let mine: Vec<&Case> = cases.iter().filter(|c| c.kind == name).collect();
                let arity = mine[0].args.len();
                let ins: Vec<Vec<f64>> = (0..arity)
                    .map(|j| mine.iter().map(|c| c.args[j]).collect())
                    .collect();
                let got = apply(tier, k, DType::F64, &ins);
                for (c, g) in mine.iter().zip(&got) {
                    if c.hi == 0.0 {
                        // The exact value is below half the smallest subnormal:
                        // within 1 ulp are +0 and the smallest subnormal.
                        checked += 1;
                        if g.abs() > 5e-324 || g.is_sign_negative() != c.hi.is_sign_negative() {
                            failures.push(format!(
                                "{} {:?} on {}: {g:e}, want 0",
                                k.name(),
                                c.args,
                                tier.name()
                            ));
                        }
                        continue;
                    }
                    let want = Expect::Near {
                        hi: c.hi,
                        lo: c.lo,
                        k: 0,
                        ulps,
                    };
                    checked += 1;
                    if let Err(e) = check(DType::F64, &g.to_le_bytes(), &want, &[]) {
                        failures.push(format!(
                            "{} {:?} on {}: {:?} -> {g:e} ({:#018x}): {e}",
                            k.name(),
                            c.args,
                            tier.name(),
                            c.args.iter().map(|a| a.to_bits()).collect::<Vec<_>>(),
                            g.to_bits()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} f64 results out of bound:\n{}",
        failures.len(),
        failures[..failures.len().min(40)].join("\n")
    );
}

/// The references cover exactly the kinds that spec/kinds.toml gives an ulp
/// bound, with that bound.
#[test]
fn references_cover_the_inexact_kinds() {
    for k in Kind::ALL {
        let bound = match k.info().accuracy {
            Accuracy::Exact => None,
            Accuracy::Ulp1 => Some(1.0),
            Accuracy::Ulp35 => Some(3.5),
        };
        let got = reference_of(k, &[0.5, 0.5]).map(|(_, ulps)| ulps);
        assert_eq!(got, bound, "{k}: the reference's bound");
    }
}

/// f32 inputs: every binade of both signs, with random significands, plus
/// small integers and halves.
fn f32_inputs(rng: &mut Rng) -> Vec<f32> {
    let mut xs = Vec::new();
    for e in 0..255u32 {
        for _ in 0..48 {
            let m = (rng.next_u64() as u32) & 0x7f_ffff;
            let s = (rng.next_u64() as u32 & 1) << 31;
            xs.push(f32::from_bits(s | e << 23 | m));
        }
    }
    for i in -64..=64 {
        xs.push(i as f32);
        xs.push(i as f32 + 0.5);
    }
    xs
}

#[test]
fn f32_kinds_within_their_bound_on_every_tier() {
    let mut rng = Rng::new(0x5eed_0f32);
    let xs = f32_inputs(&mut rng);
    let mut ys = xs.clone();
    for y in ys.iter_mut() {
        let j = (rng.next_u64() % xs.len() as u64) as usize;
        *y = xs[j];
    }
    let mut failures = Vec::new();
    for tier in tiers() {
        for k in Kind::ALL {
            let ins64: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
            let Some((_, _)) = reference_of(k, &[1.0, 1.0]) else {
                continue;
            };
            let arity = k.info().arity;
            let ins: Vec<Vec<f32>> = if arity == 1 {
                vec![xs.clone()]
            } else {
                vec![xs.clone(), ys.clone()]
            };
            let got = apply(tier, k, DType::F32, &ins);
            for i in 0..xs.len() {
                let v: Vec<f64> = if arity == 1 {
                    vec![ins64[i]]
                } else {
                    vec![ins64[i], ys[i] as f64]
                };
                let (r, ulps) = reference_of(k, &v).expect("a transcendental");
                // At or beyond 2^128 every f32 within the bound is infinite.
                let want =
                    if r.is_nan() || r.is_infinite() || r == 0.0 || r.abs() >= 3.402823669209385e38
                    {
                        Expect::Float(r as f32 as f64)
                    } else {
                        Expect::Near {
                            hi: r,
                            lo: 0.0,
                            k: 0,
                            ulps,
                        }
                    };
                if let Err(e) = check(DType::F32, &got[i].to_le_bytes(), &want, &[]) {
                    failures.push(format!(
                        "{}({v:?}) on {}: {} ({:#010x}): {e}",
                        k.name(),
                        tier.name(),
                        got[i],
                        got[i].to_bits()
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} f32 results out of bound:\n{}",
        failures.len(),
        failures[..failures.len().min(40)].join("\n")
    );
}

/// Annex F cases that need values beyond the narrow floats' (so the spec's
/// specials do not carry them), on f32 and f64, every tier, exactly.
#[test]
fn annex_f_special_values() {
    let inf = f64::INFINITY;
    let nan = f64::NAN;
    let pi = std::f64::consts::PI;
    #[rustfmt::skip]
    let cases: &[(Kind, &[f64], f64)] = &[
        (Kind::Exp, &[1000.0], inf), (Kind::Exp, &[-1000.0], 0.0),
        (Kind::Exp2, &[10.0], 1024.0), (Kind::Exp2, &[-10.0], 1.0 / 1024.0), (Kind::Exp2, &[2000.0], inf),
        (Kind::Log2, &[1024.0], 10.0), (Kind::Log2, &[1.0 / 1024.0], -10.0),
        (Kind::Log, &[-inf], nan), (Kind::Log1p, &[-inf], nan),
        (Kind::Pow, &[-0.0, 3.0], -0.0), (Kind::Pow, &[-0.0, 4.0], 0.0), (Kind::Pow, &[0.0, -3.0], inf),
        (Kind::Pow, &[-0.0, -3.0], -inf), (Kind::Pow, &[-0.0, -4.0], inf), (Kind::Pow, &[-1.0, -inf], 1.0),
        (Kind::Pow, &[0.5, inf], 0.0), (Kind::Pow, &[2.0, inf], inf), (Kind::Pow, &[-inf, 3.0], -inf),
        (Kind::Pow, &[-inf, -3.0], -0.0), (Kind::Pow, &[-inf, 4.0], inf), (Kind::Pow, &[inf, -1.0], 0.0),
        (Kind::Pow, &[nan, 0.0], 1.0), (Kind::Pow, &[1.0, nan], 1.0), (Kind::Pow, &[-8.0, 1.0 / 3.0], nan),
        (Kind::Pow, &[2.0, 10.0], 1024.0), (Kind::Pow, &[-2.0, 11.0], -2048.0),
        (Kind::Atan2, &[0.0, -1.0], pi), (Kind::Atan2, &[-0.0, -1.0], -pi), (Kind::Atan2, &[0.0, -0.0], pi),
        (Kind::Atan2, &[-0.0, -0.0], -pi), (Kind::Atan2, &[-0.0, 0.0], -0.0), (Kind::Atan2, &[1.0, 0.0], pi / 2.0),
        (Kind::Atan2, &[inf, inf], pi / 4.0), (Kind::Atan2, &[-inf, -inf], -3.0 * pi / 4.0),
        (Kind::Atan2, &[1.0, inf], 0.0), (Kind::Atan2, &[1.0, -inf], pi), (Kind::Atan2, &[-1.0, -inf], -pi),
        (Kind::Hypot, &[-inf, nan], inf), (Kind::Hypot, &[3e300, 4e300], 5e300), (Kind::Hypot, &[3e-300, 4e-300], 5e-300),
        (Kind::Cbrt, &[-27.0], -3.0), (Kind::Cbrt, &[64.0], 4.0), (Kind::Cbrt, &[-0.125], -0.5),
        (Kind::Rsqrt, &[-inf], nan), (Kind::Rsqrt, &[0.25], 2.0),
        (Kind::Sinh, &[1000.0], inf), (Kind::Cosh, &[-1000.0], inf), (Kind::Tanh, &[1000.0], 1.0),
        (Kind::Sigmoid, &[1000.0], 1.0), (Kind::Sigmoid, &[-1e5], 0.0),
        (Kind::Erfc, &[1000.0], 0.0), (Kind::Erf, &[1000.0], 1.0),
        (Kind::Asinh, &[-inf], -inf), (Kind::Acosh, &[-inf], nan), (Kind::Atanh, &[inf], nan),
        (Kind::Atan, &[inf], pi / 2.0), (Kind::Atan, &[-inf], -pi / 2.0),
    ];
    let mut failures = Vec::new();
    for tier in tiers() {
        for &(k, args, want) in cases {
            let g64 = apply(
                tier,
                k,
                DType::F64,
                &args.iter().map(|&a| vec![a]).collect::<Vec<_>>(),
            )[0];
            let a32: Vec<Vec<f32>> = args.iter().map(|&a| vec![a as f32]).collect();
            let g32 = apply(tier, k, DType::F32, &a32)[0];
            let w32 = want as f32;
            let same64 = (want.is_nan() && g64.is_nan()) || g64.to_bits() == want.to_bits();
            let same32 = (w32.is_nan() && g32.is_nan()) || g32.to_bits() == w32.to_bits();
            if !same64 {
                failures.push(format!(
                    "{k}{args:?} f64 on {}: {g64:e}, want {want:e}",
                    tier.name()
                ));
            }
            if !same32 {
                failures.push(format!(
                    "{k}{args:?} f32 on {}: {g32:e}, want {w32:e}",
                    tier.name()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Inputs found hardest by the exhaustive f32 sweeps and the f64 samples, with
/// the correctly rounded result from mpmath: `d` is the largest distance
/// allowed in units of the last place (0: exact; 1: the neighbour of the
/// correctly rounded value, still within 1 ulp of the exact one).
#[test]
fn pinned_hard_cases() {
    #[rustfmt::skip]
    let f32_cases: &[(Kind, &[u32], u32, u32)] = &[
        (Kind::Exp, &[0x42b17217], 0x7f7fff84, 0), (Kind::Exp, &[0x42b17218], 0x7f800000, 0),
        (Kind::Exp, &[0xc2aeac4f], 0x00800026, 0), (Kind::Exp, &[0xc2aeac50], 0x007fffe6, 0),
        (Kind::Exp, &[0xc2cff1b4], 0x00000001, 0), (Kind::Exp, &[0xc2cff1b5], 0x00000000, 0),
        (Kind::Exp, &[0xc2afeb48], 0x0044a6c1, 1), (Kind::Exp2, &[0xc3150000], 0x00000001, 0),
        (Kind::Exp2, &[0xc3160000], 0x00000000, 0), (Kind::Expm1, &[0x3ecad857], 0x3ef8e745, 1),
        (Kind::Sigmoid, &[0xc2c80000], 0x0000001b, 0),
        (Kind::Log, &[0x00000001], 0xc2ce8ed0, 0), (Kind::Log, &[0x3f7fffff], 0xb3800000, 0),
        (Kind::Log, &[0x7f7fffff], 0x42b17218, 0), (Kind::Log, &[0x3fa2d64f], 0x3e767f63, 1),
        (Kind::Log2, &[0x3f350931], 0xbeffeeb2, 1), (Kind::Log10, &[0x3faaa541], 0x3dffc3ab, 1),
        (Kind::Log1p, &[0xbf21c3e7], 0xbf7fd7ea, 1), (Kind::Asinh, &[0x7f7fffff], 0x42b2d4fc, 0),
        (Kind::Acosh, &[0x3f800001], 0x3a000000, 0), (Kind::Atanh, &[0x3f7fffff], 0x410aa123, 0),
        (Kind::Sin, &[0x5922aa80], 0xbf587522, 0), (Kind::Cos, &[0x5922aa80], 0x3f08aebf, 1),
        (Kind::Tan, &[0x5922aa80], 0xbfcab514, 0), (Kind::Sin, &[0x7f7fffff], 0xbf0599b3, 0),
        (Kind::Cos, &[0x7f7fffff], 0x3f5a5f96, 0), (Kind::Tan, &[0x7f7fffff], 0xbf1c9eca, 0),
        (Kind::Sin, &[0x40490fdb], 0xb3bbbd2e, 0), (Kind::Cos, &[0x3fc90fdb], 0xb33bbd2e, 0),
        (Kind::Tan, &[0x3fc90fdb], 0xcbae8a4a, 0), (Kind::Sin, &[0x55b19d22], 0xbf7f9e41, 1),
        (Kind::Sin, &[0x00000001], 0x00000001, 0),
        (Kind::Atan, &[0x3ed045e3], 0x3ec5ce64, 1), (Kind::Atan2, &[0xe86a5a1f, 0x6911d138], 0xbec39bf0, 1),
        (Kind::Asin, &[0xbf0526f6], 0xbf0c0813, 1), (Kind::Acos, &[0x3f2ced30], 0x3f5443ef, 1),
        (Kind::Hypot, &[0x00000003, 0x00000004], 0x00000005, 0), (Kind::Rsqrt, &[0x00000001], 0x64b504f3, 0),
        (Kind::Cbrt, &[0x00000020], 0x27800000, 0),
        (Kind::Pow, &[0x44120038, 0x41000000], 0x6437605b, 1), (Kind::Pow, &[0x37cd6a22, 0x401451ab], 0x2db53b20, 1),
        (Kind::Pow, &[0xbf800004, 0x4bcd33d2], 0x48b55e45, 1), (Kind::Pow, &[0xb2b4f6f0, 0xc0a00000], 0xff354b14, 1),
        (Kind::Pow, &[0x3f800001, 0x4b000000], 0x402df854, 1), (Kind::Pow, &[0x00000001, 0x3f000000], 0x1a3504f3, 1),
        (Kind::Pow, &[0x40000000, 0xc3150000], 0x00000001, 0),
        (Kind::Erf, &[0x3f000000], 0x3f053f7b, 1), (Kind::Erfc, &[0x3f000000], 0x3ef5810a, 1),
        (Kind::Erfc, &[0x41200000], 0x00000001, 0), (Kind::Erfc, &[0xbf000000], 0x3fc29fbd, 1),
        (Kind::Erf, &[0x00000001], 0x00000001, 0), (Kind::Erfc, &[0x40c00000], 0x23c67c0b, 1),
        // The worst inputs of the sweeps of erf and erfc before their f32 core
        // became one polynomial in 1/(x + 3).
        (Kind::Erf, &[0x3940ead6], 0x3959af14, 1), (Kind::Erfc, &[0x41020a63], 0x0de54284, 1),
        // The worst input of each kind's sweep over all 2^32 f32 (`tessera ulp
        // KIND f32 --exhaustive`, tests/data/math/f32_exhaustive.txt); fast
        // kinds within 4 of the correctly rounded value (their bound is 3.5 ulp).
        (Kind::Acos, &[0x3f173df8], 0x3f70528c, 1), (Kind::Acosh, &[0x3f87c524], 0x3eb1823f, 1),
        (Kind::Asin, &[0x3f001918], 0x3f06278c, 1), (Kind::Asinh, &[0x3eb503f1], 0x3eb17125, 1),
        (Kind::Atanh, &[0x3e2fb117], 0x3e317264, 1), (Kind::Cbrt, &[0x010353b5], 0x2aa2a7bc, 1),
        (Kind::Cos, &[0x3980002b], 0x3f7fffff, 1), (Kind::Cosh, &[0x40db55ba], 0x43ecf796, 1),
        (Kind::Erf, &[0x3f164d06], 0x3f17f84b, 1), (Kind::Erfc, &[0x404ad93c], 0x36f7b3ee, 1),
        (Kind::Exp, &[0xc2af6c76], 0x0057f27f, 1), (Kind::Exp2, &[0xbde2f265], 0x3f6d12a1, 1),
        (Kind::Expm1, &[0x3eb18115], 0x3ed42900, 1), (Kind::FastCos, &[0x39afd0d7], 0x3f7fffff, 4),
        (Kind::FastExp, &[0x40a65d1a], 0x4335110d, 4), (Kind::FastLog, &[0x3fb5012f], 0x3eb16771, 4),
        (Kind::FastSigmoid, &[0xc085088d], 0x3c7c74cf, 4), (Kind::FastSin, &[0x68cbda8f], 0xbf7fffff, 4),
        (Kind::FastTanh, &[0x3c7d3244], 0x3c7d2d1b, 4), (Kind::Log1p, &[0xbe95f293], 0xbeb16d1c, 1),
        (Kind::Rsqrt, &[0x013a18e3], 0x5e96209e, 1), (Kind::Sigmoid, &[0xc24529b2], 0x1becf6d8, 1),
        (Kind::Sinh, &[0x3eb173c9], 0x3eb506bf, 1), (Kind::Tan, &[0x655a4765], 0xbf7ff708, 1),
        (Kind::Tanh, &[0x3cfec37b], 0x3cfeae76, 1),
        // The worst inputs after tan's quotient became one Padé approximant
        // and the polynomials of sin and cos, sinh and cosh lost their last terms.
        (Kind::Tan, &[0x557acd76], 0xbf7fc08c, 1),
        (Kind::Sin, &[0x47287c7f], 0xbf800000, 1), (Kind::Cos, &[0x397f8c77], 0x3f800000, 1),
        (Kind::Sinh, &[0x3eb17abd], 0x3eb50e1f, 1), (Kind::Cosh, &[0x3f8519d8], 0x3fcbaadc, 1),
        // The worst inputs after the f32 sine and cosine took f32 lanes up to
        // 2^16; f32 inputs up to 2^16 near a multiple of π/2 (the two nearest,
        // 0x437ce5f1 and its double, and the one with the largest relative
        // error of the reduction, 0x474d246f; numpy search, mpmath values);
        // one whose result needs the two-sum's error term; 3π/2's sign.
        (Kind::Sin, &[0x4354d887], 0xbf347e03, 1), (Kind::Cos, &[0x3f4a7860], 0x3f340553, 1),
        (Kind::Sin, &[0x43fce5f1], 0xb20fd1de, 0), (Kind::Cos, &[0x437ce5f1], 0xb18fd1de, 0),
        (Kind::Cos, &[0x474d246f], 0xb28b5715, 0), (Kind::Sin, &[0x447ce5f1], 0x328fd1de, 0),
        (Kind::Cos, &[0x466db2a5], 0x3ef60bd9, 0), (Kind::Sin, &[0x4096cbe4], 0xbf800000, 0),
        // The worst inputs of the sweeps after log2, log10, log1p, the inverse
        // hyperbolics, atan, tanh, cbrt, asin, acos and exp2 moved to f32 lanes.
        (Kind::Log2, &[0x3fb4c77e], 0x3eff050d, 1), (Kind::Log10, &[0x3faa54cf], 0x3dfe1ffd, 1),
        (Kind::Log1p, &[0x3ecdfb2d], 0x3ead1de5, 1), (Kind::Asinh, &[0x3e7cbfb3], 0x3e7a4019, 1),
        (Kind::Acosh, &[0x3f83f9bb], 0x3e7e8f23, 1), (Kind::Atanh, &[0x3dfc84b9], 0x3dfdcf57, 1),
        (Kind::Atan, &[0xbf89d266], 0xbf52843f, 1), (Kind::Atan, &[0x3f77b67a], 0x3f44d9bd, 1),
        (Kind::Tanh, &[0x3e00aaa8], 0x3dfffccb, 1), (Kind::Cbrt, &[0x7f37516a], 0x54b5c848, 1),
        (Kind::Asin, &[0x3f0683a5], 0x3f0da11b, 1), (Kind::Acos, &[0x3f140b8d], 0x3f744345, 1),
        (Kind::Exp2, &[0xc2fcfc82], 0x005af047, 1),
        // The worst inputs of the sweeps after sinh and cosh (f32) took e^a
        // and e^-a from one reduction instead of a division.
        (Kind::Sinh, &[0x3eb2e6b3], 0x3eb69059, 1), (Kind::Cosh, &[0x4047b04d], 0x41358c7f, 1),
    ];
    #[rustfmt::skip]
    let f64_cases: &[(Kind, &[u64], u64, u64)] = &[
        (Kind::Exp, &[0x40862e42fefa39ef], 0x7fefffffffffff2a, 0), (Kind::Exp, &[0x40862e42fefa39f0], 0x7ff0000000000000, 0),
        (Kind::Exp, &[0xc0874910d52d3051], 0x0000000000000001, 0), (Kind::Exp, &[0xc0874910d52d3052], 0x0000000000000000, 0),
        (Kind::Exp, &[0xc086232bdd7abcd2], 0x001000000000007c, 0), (Kind::Exp2, &[0xc090c80000000000], 0x0000000000000001, 0),
        (Kind::Exp2, &[0xc090cc0000000000], 0x0000000000000000, 0), (Kind::Sinh, &[0x408633ce8fb9f87d], 0x7feffffffffffd3b, 0),
        (Kind::Cosh, &[0x408633ce8fb9f87d], 0x7feffffffffffd3b, 0), (Kind::Expm1, &[0x3c80000000000000], 0x3c80000000000000, 0),
        (Kind::Expm1, &[0x3fd633b2543e8560], 0x3fda8a2991ebf563, 1), (Kind::Tanh, &[0x3fc65f0edf301000], 0x3fc62572a32d8f19, 1),
        (Kind::Sigmoid, &[0xc0862bd6708343bc], 0x00056a6ab858e5c9, 1),
        (Kind::Log, &[0x0000000000000001], 0xc0874385446d71c3, 0), (Kind::Log, &[0x7fefffffffffffff], 0x40862e42fefa39ef, 0),
        (Kind::Log, &[0x3ff6a09e667f37bf], 0x3fd62e42fefa2e79, 1), (Kind::Log2, &[0x3ff6a09e667f3715], 0x3fdfffffffffecc0, 1),
        (Kind::Log1p, &[0x4000000000000000], 0x3ff193ea7aad030b, 0), (Kind::Asinh, &[0x3ff8000000000000], 0x3ff31dc0090b63d8, 0),
        (Kind::Acosh, &[0x4000000000000000], 0x3ff5124271980435, 0), (Kind::Atanh, &[0x3fe0000000000000], 0x3fe193ea7aad030b, 0),
        (Kind::Sin, &[0x7506ac5b262ca1ff], 0x3ff0000000000000, 0), (Kind::Cos, &[0x7506ac5b262ca1ff], 0xbc214ae72e6ba22f, 1),
        (Kind::Tan, &[0x7506ac5b262ca1ff], 0xc3bd9ba9a7975636, 1), (Kind::Sin, &[0x7fefffffffffffff], 0x3f7452fc98b34e97, 1),
        (Kind::Cos, &[0x7fefffffffffffff], 0xbfefffe62ecfab75, 1), (Kind::Sin, &[0x44b52d02c7e14af6], 0xbfd4bd4cba14452e, 1),
        (Kind::Cos, &[0x3ff921fb54442d18], 0x3c91a62633145c07, 1), (Kind::Tan, &[0x3ff921fb54442d18], 0x434d02967c31cdb5, 1),
        (Kind::Sin, &[0x400921fb54442d18], 0x3ca1a62633145c07, 1), (Kind::Sin, &[0x756125a944501363], 0xbfe69a94a037f047, 1),
        (Kind::Atan, &[0xbfda858714ad856e], 0xbfd9249651ca3a05, 1), (Kind::Asin, &[0x3fe03d94bf4c9e25], 0x3fe1089bdb306595, 1),
        (Kind::Acos, &[0x3fe23beb7d12f2fb], 0x3feedd5147675553, 1),
        (Kind::Atan2, &[0x21318a4dc00b1be2, 0x21452c472e960454], 0x3fd921fac88f1e4b, 1),
        (Kind::Hypot, &[0x000fffffffffffff, 0x000fffffffffffff], 0x0016a09e667f3bcb, 0),
        (Kind::Rsqrt, &[0x0000000000000001], 0x6180000000000000, 0),
        (Kind::Pow, &[0x3ff000019d305f21, 0xc18300d83dada0cf], 0x3a66a1b30c58e9af, 1),
        (Kind::Pow, &[0x591f4d217bc2ce9b, 0x4000f1c20f9c8a3f], 0x7546b4ec24dc7fd2, 1),
        (Kind::Pow, &[0x3ff0000000000001, 0x43e0000000000000], 0x7ff0000000000000, 0),
        (Kind::Pow, &[0xc000000000000000, 0xc08f400000000000], 0x0170000000000000, 0),
        (Kind::Pow, &[0x3fe0000000000000, 0x4090c80000000000], 0x0000000000000001, 0),
        (Kind::Erf, &[0xbff602d6f5cec45c], 0xbfee586037cffda7, 1), (Kind::Erfc, &[0xbff602d6f5cec45c], 0x3fff2c301be7fed4, 1),
        (Kind::Erfc, &[0x403a00f5c28f5c29], 0x029e78791205b3f3, 1), (Kind::Erf, &[0x001d1a5d0fdbb97a], 0x00206b6ae0d9c887, 1),
        // The worst input of each kind on 10^6 samples (`tessera ulp KIND f64
        // --samples 1000000`, the earlier record of f64_sampled.txt).
        (Kind::Acos, &[0x3fe4ec3e13383ba0], 0x3feb75f77309d1b5, 1),
        (Kind::Acosh, &[0x402752aa1ac9b3e6], 0x40092e45061c7c4a, 1),
        (Kind::Asin, &[0x3fe0f58ae9682f11], 0x3fe1dfccab9a9b9d, 1),
        (Kind::Asinh, &[0xbfd6c1a96d367240], 0xbfd64d67b638da33, 1),
        (Kind::Atan, &[0x3fdc21209ea4de9f], 0x3fda80b7a2e5e3e1, 1),
        (Kind::Atan2, &[0x38c60c5ca6fb561e, 0x38d9d5d5019defd9], 0x3fd9cff2f77c1123, 1),
        (Kind::Atanh, &[0xbfc74630d236a245], 0xbfc7893024b5008f, 1),
        (Kind::Cbrt, &[0x682732cd006c7a39], 0x4d56d0f11d72b691, 1),
        (Kind::Cos, &[0x74d2f3dd8fbd5a1b], 0xbfe55eb3935af0e1, 1),
        (Kind::Cosh, &[0xc073e86d7046416d], 0x5c9736c22a2a35a5, 1),
        (Kind::Erf, &[0x3fd9493fdd247918], 0x3fdb1d5e6d230eca, 1),
        (Kind::Erfc, &[0x40205e42c5e14175], 0x39a69fcb30b05b79, 1),
        (Kind::Exp, &[0xc06c052e079a6a91], 0x2bb84c5d593d93fb, 1),
        (Kind::Exp2, &[0x403481fc1f396a28], 0x4136bfd54dfeda9b, 1),
        (Kind::Expm1, &[0xbc96b7ccad86fa2b], 0xbc96b7ccad86fa2b, 1),
        (Kind::FastCos, &[0xd3e69dacfa3861d5], 0x3fe68505d1096b69, 4),
        (Kind::FastExp, &[0x3fd72fe754050e81], 0x3ff6fc6dcc867219, 4),
        (Kind::FastLog, &[0x3feec907092ecedf], 0xbfa3d075307133fc, 4),
        (Kind::FastSigmoid, &[0xbffffa801f3c8cfc], 0x3fbe8d5378790dc3, 4),
        (Kind::FastSin, &[0x7d6e5bc4dd74a55a], 0x3fe636f70075d1af, 4),
        (Kind::FastTanh, &[0xbecf815818b19551], 0xbecf815818b0f272, 4),
        (Kind::Hypot, &[0xbe105a5a9ad32a1d, 0xbd91eeca325fff84], 0x3e105a646ff64b3a, 1),
        (Kind::Log, &[0x3ff6c4fb2a6f8cf4], 0x3fd694c9ddaad6db, 1),
        (Kind::Log10, &[0x3ff514a92865f327], 0x3fbea8ee27dd1872, 1),
        (Kind::Log1p, &[0x3fd9333c0ffb8ff8], 0x3fd53f7ab6e85777, 1),
        (Kind::Log2, &[0x40261b1b939b04c7], 0x400bbb1a5dd89eb0, 1),
        (Kind::Rsqrt, &[0x04f958148546e61d], 0x5d696cf69258c523, 1),
        (Kind::Sigmoid, &[0xc075aeb3d7d77ec9], 0x20a6a7e7605bee8d, 1),
        (Kind::Sin, &[0x65ae92dc5773fad0], 0x3fe67cccb563fe4d, 1),
        (Kind::Sinh, &[0xbfcde2df29f2e786], 0xbfce2893b3dc32bd, 1),
        (Kind::Tan, &[0xf5277815dbfc95dd], 0xbfefe1f485ee7306, 1),
        (Kind::Tanh, &[0xbfc7085ef3889124], 0xbfc6c98b46975b93, 1),
        // The worst input of each kind on 10^7 samples (`tessera ulp KIND f64
        // --samples 10000000`, tests/data/math/f64_sampled.txt), where it
        // differs from the one above.
        (Kind::Acos, &[0x3fe2d2b3a4cdad71], 0x3fee245ee7fe3fa7, 1),
        (Kind::Acosh, &[0x3ff83b0ad5636481], 0x3fef34e44f5bd4de, 1),
        (Kind::Asin, &[0xbfe0a5a6571e2610], 0xbfe181ec021ec13d, 1),
        (Kind::Asinh, &[0xbfd6c01c019c00c3], 0xbfd64bf140aeaace, 1),
        (Kind::Atan, &[0x3fdc21209ea4de9f], 0x3fda80b7a2e5e3e1, 1),
        (Kind::Atan2, &[0xcce27b0dddd02b3b, 0x4cf891e166159cab], 0xbfd705ac115b9867, 1),
        (Kind::Atanh, &[0x3fc5a3915472521a], 0x3fc5d9438ca10521, 1),
        (Kind::Cbrt, &[0xd6ca6c8d628ea59f], 0xc78e0583df6417d3, 1),
        (Kind::Cos, &[0x567248df7efa96a5], 0x3fe69ff73007df35, 1),
        (Kind::Cosh, &[0x4069dcb37fdb15b1], 0x52867536060e928f, 1),
        (Kind::Erf, &[0x3fe400dcf773fb44], 0x3fe3f23f8f323667, 1),
        (Kind::Erfc, &[0x400dfbb904e160f0], 0x3e7f06c7156ddbdf, 1),
        (Kind::Exp, &[0xc0647cfa7d57ab87], 0x31272bba02863733, 1),
        (Kind::Exp2, &[0xc08ff4b2396454ff], 0x000aa6c4b8015797, 1),
        (Kind::Expm1, &[0x3fd9e88a27fac0b5], 0x3fdff01aa9e554f1, 1),
        (Kind::FastCos, &[0x6bead21f230d3644], 0x3fe66b158c7e2c41, 4),
        (Kind::FastExp, &[0x403950edf0d74ee5], 0x4236ff91822b665b, 4),
        (Kind::FastLog, &[0x3ff6eb4279e8b68d], 0x3fd700078deb0ee3, 4),
        (Kind::FastPow, &[0x5ff9269d5d543d8a, 0xbf96f4c95ce008ae], 0x3f36bde4988f92bd, 4),
        (Kind::FastSigmoid, &[0xc00b9794c9cef0aa], 0x3f9f8994e6d3b306, 4),
        (Kind::FastSin, &[0x7d6e5bc4dd74a55a], 0x3fe636f70075d1af, 4),
        (Kind::FastTanh, &[0xbf8fa797244567ac], 0xbf8fa6f1f4fce30e, 4),
        (Kind::Hypot, &[0x4dc42bbec0f45ca1, 0xce5dd7c15cef6ce6], 0x4e5dd7c31135bbdb, 1),
        (Kind::Log, &[0x3ff60b7b11bf1817], 0x3fd482e9134c07d5, 1),
        (Kind::Log10, &[0x3ff514a92865f327], 0x3fbea8ee27dd1872, 1),
        (Kind::Log1p, &[0x3fdbcd3c02263acb], 0x3fd7167d8439d0c0, 1),
        (Kind::Log2, &[0x3fe6edef4c35d9cb], 0xbfdec698321d6f72, 1),
        (Kind::Pow, &[0x24e873afc665d8b7, 0xbf53b3d8888bf1c0], 0x3ff6f15882995a78, 1),
        (Kind::Rsqrt, &[0x2b7f0286a5e0e048], 0x4a26fc5ec13dcbdc, 1),
        (Kind::Sigmoid, &[0xc08623bd3f76d9e3], 0x000ee750a02000c9, 1),
        (Kind::Sin, &[0x6dd94727fc4a9aca], 0x3fe60756eb1521dd, 1),
        (Kind::Sinh, &[0xbfd65eb9d9d5a410], 0xbfd6d40c5d35c00c, 1),
        // tan and tanh: the same worst inputs as on 10^6 samples (above).
    ];
    let mut failures = Vec::new();
    for tier in tiers() {
        for &(k, args, want, d) in f32_cases {
            let ins: Vec<Vec<f32>> = args.iter().map(|&b| vec![f32::from_bits(b)]).collect();
            let got = apply(tier, k, DType::F32, &ins)[0].to_bits();
            if (got as i64 - want as i64).unsigned_abs() > d as u64 {
                failures.push(format!(
                    "{k}{args:x?} f32 on {}: {got:#010x}, want {want:#010x}",
                    tier.name()
                ));
            }
        }
        for &(k, args, want, d) in f64_cases {
            let ins: Vec<Vec<f64>> = args.iter().map(|&b| vec![f64::from_bits(b)]).collect();
            let got = apply(tier, k, DType::F64, &ins)[0].to_bits();
            if (got as i128 - want as i128).unsigned_abs() > d as u128 {
                failures.push(format!(
                    "{k}{args:x?} f64 on {}: {got:#018x}, want {want:#018x}",
                    tier.name()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The trigonometric kinds run a chunk of arguments that all fit through a
/// small form (which vectorises), any other chunk through the full form: for
/// the f32 sine and cosine (and their fast forms) the f32-lane path up to
/// 2^16, and a middle form (both paths, no gathers) for chunks below 2^25;
/// for the f32 tangent a Cody–Waite reduction below 2^25; for every f64
/// kind (below 2^53) the reduction that reads its table's first entry as
/// constants. Every form must give the full one's bits for the arguments it
/// takes: each value here runs once in a chunk whose last argument is 1 (the
/// small or the middle form, as the chunk's other values allow) and once in
/// a chunk whose last argument is 2^30 (the full form).
fn trig_forms_agree<T: Copy + Default + PartialEq + core::fmt::Debug>(
    on: &[Tier],
    d: DType,
    xs: &[T],
    big: T,
    small: T,
    bits: impl Fn(T) -> u64,
) {
    const CHUNK: usize = 64;
    for k in [
        Kind::Sin,
        Kind::Cos,
        Kind::Tan,
        Kind::FastSin,
        Kind::FastCos,
    ] {
        for &tier in on {
            for part in xs.chunks((CHUNK - 1) * 4096) {
                let mut a = Vec::with_capacity(part.len() / (CHUNK - 1) * CHUNK + CHUNK);
                let mut b = a.clone();
                for c in part.chunks(CHUNK - 1) {
                    // The values, padded with zeros to CHUNK - 1, then the
                    // chunk's last argument.
                    for v in [&mut a, &mut b] {
                        v.extend_from_slice(c);
                        v.resize(v.len() + CHUNK - 1 - c.len(), T::default());
                    }
                    a.push(small);
                    b.push(big);
                }
                let ya = apply(tier, k, d, &[a.clone()]);
                let yb = apply(tier, k, d, &[b]);
                for (i, (p, q)) in ya.iter().zip(&yb).enumerate() {
                    if i % CHUNK < CHUNK - 1 && bits(*p) != bits(*q) {
                        panic!("{k} {d} on {tier}: x = {:?} gives {p:?} and {q:?}", a[i]);
                    }
                }
            }
        }
    }
}

#[test]
fn trig_small_form_matches_the_full_form() {
    let mut rng = Rng::new(77);
    // f32: every binade below 2^25, the edge, and random patterns.
    let mut xs: Vec<f32> = Vec::new();
    for e in -149i32..25 {
        for _ in 0..64 {
            let m = 1.0 + (rng.next_u64() >> 41) as f32 / (1u64 << 23) as f32;
            let v = m * 2f32.powi(e);
            xs.push(v);
            xs.push(-v);
        }
    }
    let edge = 33554432.0f32;
    xs.extend([
        edge.next_down(),
        -edge.next_down(),
        0.0,
        -0.0,
        f32::NAN,
        f32::INFINITY,
    ]);
    trig_forms_agree(&tiers(), DType::F32, &xs, 2f32.powi(30), 1.0, |v| {
        v.to_bits() as u64
    });
    // The f32 lanes' limit in chunks of their own (among values near 2^24,
    // the chunk would never take the small form); the third chunk lies
    // beyond the lanes (the sine's and cosine's middle form, the tangent's
    // small one), the last mixes both sides of the limit and 2^25's
    // neighbour below (the middle form against the full one).
    let lanes = 65536.0f32;
    for edge in [
        vec![lanes, -lanes, lanes.next_down(), 0.0, -0.0, f32::NAN],
        vec![f32::INFINITY, f32::NEG_INFINITY, 1.0],
        vec![lanes.next_up(), -lanes.next_up()],
        vec![
            1.5,
            -7.25e4,
            9.9e4,
            lanes,
            lanes.next_up(),
            -3.3e7,
            33554432.0f32.next_down(),
            f32::NAN,
            f32::INFINITY,
        ],
    ] {
        trig_forms_agree(&tiers(), DType::F32, &edge, 2f32.powi(30), 1.0, |v| {
            v.to_bits() as u64
        });
    }
    let mut ys: Vec<f64> = Vec::new();
    for e in -1074i32..53 {
        for _ in 0..8 {
            let m = 1.0 + (rng.next_u64() >> 12) as f64 / (1u64 << 52) as f64;
            ys.push(m * 2f64.powi(e));
            ys.push(-m * 2f64.powi(e));
        }
    }
    let edge = 9007199254740992.0f64;
    ys.extend([edge.next_down(), -edge.next_down(), 0.0, -0.0, f64::NAN]);
    trig_forms_agree(&tiers(), DType::F64, &ys, 2f64.powi(60), 1.0, f64::to_bits);
}

/// Every f32 below 2^25 in magnitude through the small or middle form
/// against the full one (about 2^31.6
/// values; minutes in release), on the best tier (the differential tests
/// hold the tiers to one another's bits).
#[test]
#[ignore]
fn trig_small_form_matches_the_full_form_on_every_f32() {
    for hi in 0u32..256 {
        let xs: Vec<f32> = (0..1u32 << 24)
            .map(|lo| f32::from_bits(hi << 24 | lo))
            .filter(|v| v.abs() < 33554432.0)
            .collect();
        let best = *tiers().last().expect("the scalar tier runs");
        trig_forms_agree(&[best], DType::F32, &xs, 2f32.powi(30), 1.0, |v| {
            v.to_bits() as u64
        });
    }
}
