//! Block-scaled formats against an independent model: scales from the OCP MX
//! rules computed here from amax's exponent, elements by a nearest-value search
//! over every code of the element dtype (values derived from the spec's
//! parameters in this file), ties to the even code.

use tessera::formats::{decode, encode, encoded_sizes, transcode};
use tessera::{ArrayView, ArrayViewMut, DType, Exec, Format, NanStyle, ScaleRule, Tier};
use tessera_testkit::rng::Rng;

/// Every finite code of a float dtype with its value, from the parameters.
fn finite_values(d: DType) -> Vec<(u32, f64)> {
    let f = d.info().float.expect("a float dtype");
    let (e_bits, m_bits) = (f.exponent_bits, f.mantissa_bits);
    let vb = e_bits + m_bits;
    let codes = 1u32 << (vb + f.signed as u32);
    let mut out = Vec::new();
    for c in 0..codes {
        let sign = if f.signed && (c >> vb) & 1 == 1 {
            -1.0
        } else {
            1.0
        };
        let mag = c & ((1 << vb) - 1);
        let e = mag >> m_bits;
        let m = mag & ((1 << m_bits) - 1);
        let all_e = (1 << e_bits) - 1;
        let special = match f.nan {
            NanStyle::Ieee => e == all_e,
            NanStyle::AllOnes => mag == (1 << vb) - 1,
            NanStyle::SignOnly => sign < 0.0 && mag == 0,
            NanStyle::None => false,
        };
        if special {
            continue;
        }
        let v = if e == 0 && f.subnormals {
            m as f64 * 2f64.powi(1 - f.bias - m_bits as i32)
        } else {
            (1.0 + m as f64 / 2f64.powi(m_bits as i32)) * 2f64.powi(e as i32 - f.bias)
        };
        out.push((c, sign * v));
    }
    out
}

/// The code nearest to `v` (|v| ≤ max finite, else the clamped extreme), ties to
/// the code whose lowest value bit is 0; -0 kept where the dtype has it.
fn nearest(values: &[(u32, f64)], v: f64) -> u32 {
    let mut best: Option<(u32, f64)> = None;
    for &(c, x) in values {
        let d = (x - v).abs();
        let better = match best {
            None => true,
            Some((bc, bd)) => d < bd || (d == bd && (c & 1) == 0 && (bc & 1) == 1),
        };
        if better {
            best = Some((c, d));
        }
    }
    let (c, _) = best.expect("values");
    // Prefer the zero of v's sign.
    let zero_of_sign = values
        .iter()
        .find(|&&(_, x)| x == 0.0 && x.is_sign_negative() == v.is_sign_negative())
        .map(|&(c, _)| c);
    if values.iter().any(|&(cc, x)| cc == c && x == 0.0) {
        zero_of_sign.unwrap_or(c)
    } else {
        c
    }
}

fn value_of(values: &[(u32, f64)], code: u32) -> f64 {
    values
        .iter()
        .find(|&&(c, _)| c == code)
        .map(|&(_, v)| v)
        .unwrap_or(f64::NAN)
}

fn floor_log2(v: f64) -> i32 {
    let mut e = 0;
    let mut x = v.abs();
    while x >= 2.0 {
        x /= 2.0;
        e += 1;
    }
    while x < 1.0 {
        x *= 2.0;
        e -= 1;
    }
    e
}

fn elem_codes(format: Format, codes: &[u8], n: usize) -> Vec<u32> {
    let el = DType::from_name(format.info().element).unwrap();
    if el.info().values_per_byte == 2 {
        (0..n)
            .map(|i| {
                let b = codes[i / 2];
                (if i % 2 == 0 { b >> 4 } else { b & 15 }) as u32
            })
            .collect()
    } else {
        codes[..n].iter().map(|&b| b as u32).collect()
    }
}

struct Encoded {
    codes: Vec<u8>,
    scales: Vec<u8>,
    tensor: Option<f32>,
}

fn enc_f32(format: Format, rule: Option<ScaleRule>, x: &[f32], tier: Tier) -> Encoded {
    let s = encoded_sizes(format, &[x.len()]).unwrap();
    let mut codes = vec![0u8; s.code_bytes];
    let mut scales = vec![0u8; s.blocks];
    let tensor = encode(
        format,
        rule,
        &ArrayView::from_slice(x, &[x.len()]).unwrap(),
        &mut codes,
        &mut scales,
        &Exec::on(tier),
    )
    .unwrap();
    Encoded {
        codes,
        scales,
        tensor,
    }
}

/// Check one MX block of f32 values against the model, for a rule.
fn check_mx_block(format: Format, rule: ScaleRule, x: &[f32]) {
    let info = format.info();
    assert_eq!(x.len(), info.block);
    let el = DType::from_name(info.element).unwrap();
    let float_el = el.info().float.is_some();
    let values = if float_el {
        finite_values(el)
    } else {
        (-128i32..=127)
            .map(|c| ((c as u8) as u32, c as f64 / 64.0))
            .collect()
    };
    let max_el = values.iter().map(|v| v.1).fold(0.0, f64::max);
    let emax = floor_log2(max_el);
    let amax = x.iter().fold(0f64, |m, &v| m.max((v as f64).abs()));
    let special = x.iter().any(|v| !v.is_finite());
    for tier in tessera::available_tiers() {
        let e = enc_f32(format, Some(rule), x, tier);
        let what = format!("{} {rule:?} {tier} block {:?}", info.name, &x[..4]);
        if special {
            assert_eq!(
                e.scales[0], 0xFF,
                "{what}: NaN scale for a block with NaN/inf"
            );
            let mut y = vec![0f32; x.len()];
            decode(
                format,
                &e.codes,
                &e.scales,
                None,
                &mut ArrayViewMut::from_slice(&mut y, &[x.len()]).unwrap(),
                &Exec::on(tier),
            )
            .unwrap();
            assert!(y.iter().all(|v| v.is_nan()), "{what}: decodes to NaN");
            continue;
        }
        let exp = if amax == 0.0 {
            -127
        } else {
            let e0 = floor_log2(amax) - emax;
            let e1 = if rule == ScaleRule::Ceil && amax > max_el * 2f64.powi(e0) {
                e0 + 1
            } else {
                e0
            };
            e1.clamp(-127, 127)
        };
        assert_eq!(e.scales[0] as i32, exp + 127, "{what}: scale code");
        let got = elem_codes(format, &e.codes, x.len());
        let scale = 2f64.powi(exp);
        for (i, &v) in x.iter().enumerate() {
            let target = (v as f64) / scale;
            let clamped = target.clamp(-max_el, max_el);
            let want = if float_el {
                nearest(&values, clamped)
            } else {
                // Integers: round half to even in units of 2^-6, then clamp.
                let q = (target * 64.0).round_ties_even().clamp(-128.0, 127.0);
                (q as i32 as u8) as u32
            };
            assert_eq!(got[i], want, "{what}: element {i} ({v:e} / 2^{exp})");
        }
        // Decode: element value times scale, exactly, rounded once into f64 (exact).
        let mut y = vec![0f64; x.len()];
        decode(
            format,
            &e.codes,
            &e.scales,
            None,
            &mut ArrayViewMut::from_slice(&mut y, &[x.len()]).unwrap(),
            &Exec::on(tier),
        )
        .unwrap();
        for i in 0..x.len() {
            let want = value_of(&values, got[i]) * scale;
            assert_eq!(y[i], want, "{what}: decoded element {i}");
        }
    }
}

fn block_with_amax(n: usize, amax: f32, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut out: Vec<f32> = (0..n)
        .map(|_| {
            let s = rng.next_u64();
            let u = ((s >> 40) as f32) / (1u64 << 24) as f32; // [0, 1)
            let sign = if (s >> 20) & 1 == 1 { -1.0 } else { 1.0 };
            sign * u * amax
        })
        .collect();
    out[(seed as usize) % n] = if seed.is_multiple_of(2) { amax } else { -amax };
    out
}

const MX: [&str; 6] = [
    "mxfp8_e4m3",
    "mxfp8_e5m2",
    "mxfp6_e2m3",
    "mxfp6_e3m2",
    "mxfp4",
    "mxint8",
];

#[test]
fn mx_adversarial_amax_each_rule() {
    for name in MX {
        let f = Format::from_name(name).unwrap();
        let b = f.info().block;
        for rule in [ScaleRule::Floor, ScaleRule::Ceil] {
            for (k, sig) in [
                (0, 1.5f32),
                (5, 1.75),
                (-3, 2.0 - f32::EPSILON),
                (20, 1.0),
                (-20, 1.25),
            ] {
                let amax = sig * 2f32.powi(k);
                for seed in 0..3 {
                    check_mx_block(f, rule, &block_with_amax(b, amax, seed));
                }
            }
            // All zeros (with a negative zero), a subnormal amax, NaN and inf inside.
            let mut zeros = vec![0f32; b];
            zeros[3] = -0.0;
            check_mx_block(f, rule, &zeros);
            check_mx_block(f, rule, &block_with_amax(b, f32::from_bits(0x0000_1234), 7));
            check_mx_block(f, rule, &block_with_amax(b, 2f32.powi(-130), 9));
            let mut nan = block_with_amax(b, 3.0, 1);
            nan[5] = f32::NAN;
            check_mx_block(f, rule, &nan);
            let mut inf = block_with_amax(b, 3.0, 2);
            inf[0] = f32::NEG_INFINITY;
            check_mx_block(f, rule, &inf);
            // Largest f32 amax: the exponent stays within UE8M0's range.
            check_mx_block(f, rule, &block_with_amax(b, f32::MAX, 3));
        }
    }
}

#[test]
fn mx_scale_exponent_clamps_on_f64_overflow_and_underflow() {
    let f = Format::from_name("mxfp8_e4m3").unwrap();
    for (amax, want_code) in [(1e300f64, 254u8), (1e-300, 0)] {
        let x: Vec<f64> = (0..32).map(|i| amax * (i as f64 + 1.0) / 32.0).collect();
        let mut codes = vec![0u8; 32];
        let mut scales = vec![0u8; 1];
        encode(
            f,
            None,
            &ArrayView::from_slice(&x, &[32]).unwrap(),
            &mut codes,
            &mut scales,
            &Exec::default(),
        )
        .unwrap();
        assert_eq!(scales[0], want_code, "amax {amax:e}");
        if amax > 1.0 {
            // Saturated: every element at the largest magnitude 448 (0x7E).
            assert_eq!(codes[31] & 0x7F, 0x7E);
        } else {
            assert!(codes.iter().all(|&c| c & 0x7F == 0), "underflow to zero");
        }
    }
}

/// NVFP4 codes and scales of `x` under tensor scale `t` against the model:
/// each block's scale its amax over 6·t rounded into UE4M3 (saturating at
/// 448), each element the nearest E2M1 value of v over the decoded scale
/// times t (ties to the even code, saturating at ±6).
fn check_nvfp4(x: &[f32], t: f32, e: &Encoded, tier: Tier) {
    let f = Format::Nvfp4;
    let e2m1 = finite_values(DType::E2m1fn);
    let ue4m3 = finite_values(DType::Ue4m3);
    let n = x.len();
    let got = elem_codes(f, &e.codes, n);
    for b in 0..n / 16 {
        let blk = &x[b * 16..(b + 1) * 16];
        let amax = blk.iter().fold(0f64, |m, &v| m.max((v as f64).abs()));
        let s = amax / (6.0 * t as f64);
        let want_scale = nearest(&ue4m3, s.min(448.0));
        assert_eq!(e.scales[b] as u32, want_scale, "{tier} block {b} scale");
        let d = value_of(&ue4m3, want_scale) * t as f64;
        for (i, &v) in blk.iter().enumerate() {
            let want = if d == 0.0 {
                nearest(&e2m1, 0.0f64.copysign(v as f64))
            } else {
                // Nearest e2m1 value c to v/d, compared exactly as |v − c·d|.
                let mut best = (0u32, f64::INFINITY);
                for &(c, cv) in &e2m1 {
                    let dist = ((v as f64) - cv * d).abs();
                    if dist < best.1 || (dist == best.1 && c & 1 == 0) {
                        best = (c, dist);
                    }
                }
                let q = (v as f64 / d).abs();
                if q >= 6.0 {
                    if v < 0.0 {
                        0xF
                    } else {
                        0x7
                    }
                } else {
                    best.0
                }
            };
            let gi = got[b * 16 + i];
            let same_zero = value_of(&e2m1, gi) == 0.0 && value_of(&e2m1, want) == 0.0;
            assert!(
                gi == want || same_zero,
                "{tier} block {b} element {i}: {v:e}, d {d:e}: got {gi:#x} want {want:#x}"
            );
        }
    }
}

#[test]
fn nvfp4_matches_the_model() {
    let f = Format::Nvfp4;
    let e2m1 = finite_values(DType::E2m1fn);
    let ue4m3 = finite_values(DType::Ue4m3);
    let mut x: Vec<f32> = Vec::new();
    for (i, amax) in [6.0f32, 0.75, 1000.0, 3.3e-3, 0.0, 17.5, 2.0e5, 1.0]
        .iter()
        .enumerate()
    {
        if *amax == 0.0 {
            x.extend(std::iter::repeat_n(0.0, 16));
        } else {
            x.extend(block_with_amax(16, *amax, i as u64));
        }
    }
    let n = x.len();
    let tensor_amax = x.iter().fold(0f64, |m, &v| m.max((v as f64).abs()));
    let t = (tensor_amax / 2688.0) as f32;
    for tier in tessera::available_tiers() {
        let e = enc_f32(f, None, &x, tier);
        assert_eq!(e.tensor, Some(t), "tensor scale");
        check_nvfp4(&x, t, &e, tier);
        let got = elem_codes(f, &e.codes, n);
        // Decode: element × block scale × tensor scale, exact in f64.
        let mut y = vec![0f64; n];
        decode(
            f,
            &e.codes,
            &e.scales,
            e.tensor,
            &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
            &Exec::on(tier),
        )
        .unwrap();
        for i in 0..n {
            let want =
                value_of(&e2m1, got[i]) * value_of(&ue4m3, e.scales[i / 16] as u32) * t as f64;
            assert_eq!(y[i], want, "{tier} decoded element {i}");
        }
    }
}

#[test]
fn packed_mxfp4_rows_and_transcode() {
    // Two rows of 64 (two blocks each), decoded back within the format's bound,
    // and transcoded mxfp4 → mxfp8 equal to encoding the decoded values.
    let rows = 2;
    let n = 64;
    let x: Vec<f32> = (0..rows * n)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
        .collect();
    let f4 = Format::Mxfp4;
    let s = encoded_sizes(f4, &[rows, n]).unwrap();
    assert_eq!((s.blocks, s.code_bytes), (4, 64));
    let mut codes = vec![0u8; s.code_bytes];
    let mut scales = vec![0u8; s.blocks];
    let ex = Exec::default();
    encode(
        f4,
        None,
        &ArrayView::from_slice(&x, &[rows, n]).unwrap(),
        &mut codes,
        &mut scales,
        &ex,
    )
    .unwrap();
    let mut y = vec![0f32; rows * n];
    decode(
        f4,
        &codes,
        &scales,
        None,
        &mut ArrayViewMut::from_slice(&mut y, &[rows, n]).unwrap(),
        &ex,
    )
    .unwrap();
    let f8 = Format::Mxfp8E4m3;
    let mut c8 = vec![0u8; rows * n];
    let mut s8 = vec![0u8; s.blocks];
    transcode(
        f4,
        f8,
        None,
        &[rows, n],
        &codes,
        &scales,
        None,
        &mut c8,
        &mut s8,
        &ex,
    )
    .unwrap();
    let mut c8b = vec![0u8; rows * n];
    let mut s8b = vec![0u8; s.blocks];
    encode(
        f8,
        None,
        &ArrayView::from_slice(&y, &[rows, n]).unwrap(),
        &mut c8b,
        &mut s8b,
        &ex,
    )
    .unwrap();
    assert_eq!((c8, s8), (c8b, s8b));
    // Each decoded value is within half a step of the element grid at its scale
    // (e2m1's largest step is 2, between 4 and 6) or, where the floor rule clamps
    // (amax < 8·X but the largest element is 6·X), less than 2·X from its value.
    for (i, (&a, &b)) in x.iter().zip(&y).enumerate() {
        let scale = 2f32.powi(scales[i / 32] as i32 - 127);
        assert!(
            (a - b).abs() < 2.0 * scale,
            "element {i}: {a} vs {b} at scale {scale}"
        );
    }
}

#[test]
fn refusals_write_nothing() {
    let x = vec![1f32; 40];
    let mut codes = vec![0xAAu8; 40];
    let mut scales = vec![0xAAu8; 2];
    let ex = Exec::default();
    let v = ArrayView::from_slice(&x, &[40]).unwrap();
    // 40 is not a whole number of 32-blocks.
    assert!(matches!(
        encode(Format::Mxfp8E4m3, None, &v, &mut codes, &mut scales, &ex),
        Err(tessera::Error::Layout { .. })
    ));
    let v32 = ArrayView::from_slice(&x[..32], &[32]).unwrap();
    // Wrong buffer sizes; a rule that does not apply.
    assert!(encode(Format::Mxfp8E4m3, None, &v32, &mut codes, &mut scales, &ex).is_err());
    assert!(encode(
        Format::Mxfp8E4m3,
        Some(ScaleRule::Nvfp4),
        &v32,
        &mut codes[..32],
        &mut scales[..1],
        &ex,
    )
    .is_err());
    assert!(codes.iter().chain(&scales).all(|&b| b == 0xAA));
    let mut y = vec![0f32; 16];
    let mut yv = ArrayViewMut::from_slice(&mut y, &[16]).unwrap();
    assert!(decode(Format::Nvfp4, &codes[..8], &scales[..1], None, &mut yv, &ex).is_err());
    assert!(y.iter().all(|&v| v == 0.0));
}

#[test]
fn mx_f32_and_f64_paths_agree() {
    // The same values as f32 (encoded in f32 tiles) and as f64 (encoded in f64)
    // give the same codes and scales, for every MX format and rule; 3 rows of
    // 2080 (not a whole number of tiles) with special, zero and tiny blocks.
    let (rows, n) = (3usize, 2080usize);
    let x = mx_data(rows * n / 32);
    let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let x = ArrayView::from_slice(&x, &[rows, n]).unwrap();
    let x64 = ArrayView::from_slice(&x64, &[rows, n]).unwrap();
    for name in MX {
        let f = Format::from_name(name).unwrap();
        for rule in [ScaleRule::Floor, ScaleRule::Ceil] {
            let ex = Exec::default();
            assert!(
                encode_view(&ex, f, rule, &x) == encode_view(&ex, f, rule, &x64),
                "{name} {rule:?}: f32 and f64 paths differ"
            );
        }
    }
}

/// MX test data: `blocks` blocks of 32 whose amax walks 60 binades, with a NaN
/// block, an infinity block, an all-zero block and a block of f32 subnormals.
fn mx_data(blocks: usize) -> Vec<f32> {
    let mut x: Vec<f32> = Vec::with_capacity(blocks * 32);
    for b in 0..blocks {
        let amax = 2f32.powi((b as i32 % 60) - 30) * (1.0 + (b % 7) as f32 / 8.0);
        x.extend(block_with_amax(32, amax, b as u64));
    }
    x[64 + 5] = f32::NAN;
    x[3 * 32 + 1] = f32::INFINITY;
    for v in &mut x[32 * 10..32 * 11] {
        *v = 0.0;
    }
    for v in &mut x[32 * 12..32 * 13] {
        *v *= 1e-38;
    }
    x
}

/// Codes and scales of `src` (shape `[rows, n]`) in `format` under `rule`.
fn encode_view(
    exec: &Exec,
    format: Format,
    rule: ScaleRule,
    src: &ArrayView<'_>,
) -> (Vec<u8>, Vec<u8>) {
    let s = encoded_sizes(format, src.shape()).unwrap();
    let mut codes = vec![0u8; s.code_bytes];
    let mut scales = vec![0u8; s.blocks];
    encode(format, Some(rule), src, &mut codes, &mut scales, exec).unwrap();
    (codes, scales)
}

#[test]
fn mx_f32_encoder_is_independent_of_tier_layout_and_threads() {
    // The f64 path on the scalar tier is the reference; the f32 encoder must
    // give its bytes on every tier for contiguous rows (1 and 3 threads, more
    // than one tile per row and per thread), unaligned data, and a strided
    // last axis (which is first cast into f32).
    let (rows, n) = (5usize, 1usize << 16);
    let x = mx_data(rows * n / 32);
    let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let mut wide = vec![0f32; 2 * x.len()];
    for (i, &v) in x.iter().enumerate() {
        wide[2 * i + 1] = v;
    }
    let mut unaligned = vec![0u8; 4 * x.len() + 1];
    for (i, v) in x.iter().enumerate() {
        unaligned[1 + 4 * i..5 + 4 * i].copy_from_slice(&v.to_ne_bytes());
    }
    let reference = ArrayView::from_slice(&x64, &[rows, n]).unwrap();
    let contiguous = ArrayView::from_slice(&x, &[rows, n]).unwrap();
    let strided =
        ArrayView::from_slice_strided(&wide, &[rows, n], &[2 * n as isize, 2], 1).unwrap();
    let odd = ArrayView::contiguous(DType::F32, &[rows, n], &unaligned[1..]).unwrap();
    for name in MX {
        let f = Format::from_name(name).unwrap();
        for rule in [ScaleRule::Floor, ScaleRule::Ceil] {
            let want = encode_view(&Exec::on(Tier::Scalar), f, rule, &reference);
            for tier in tessera::available_tiers() {
                for (what, src, threads) in [
                    ("contiguous", &contiguous, 1),
                    ("contiguous", &contiguous, 3),
                    ("unaligned", &odd, 1),
                    ("strided", &strided, 2),
                ] {
                    let got = encode_view(&Exec::on(tier).threads(threads), f, rule, src);
                    assert!(
                        got == want,
                        "{name} {rule:?} {tier} {what} ({threads} threads): differs from the f64 path"
                    );
                }
            }
        }
    }
}

/// A decode destination that reaches one element twice (a zero stride on an
/// axis of two rows, or rows that interleave) is refused with a layout
/// error before any write, as every other call's destination is; before,
/// the second row overwrote the first and the call succeeded.
#[test]
fn decode_refuses_a_destination_that_reaches_an_element_twice() {
    let x: Vec<f32> = (0..64).map(|i| i as f32 * 0.25 - 3.0).collect();
    let sizes = encoded_sizes(Format::Mxfp8E4m3, &[2, 32]).unwrap();
    let (mut codes, mut scales) = (vec![0u8; sizes.code_bytes], vec![0u8; sizes.blocks]);
    encode(
        Format::Mxfp8E4m3,
        None,
        &ArrayView::from_slice(&x, &[2, 32]).unwrap(),
        &mut codes,
        &mut scales,
        &Exec::default(),
    )
    .unwrap();
    for strides in [[0isize, 1], [1, 1], [16, 1]] {
        let mut buf = vec![0xa5u8; 64 * 4];
        let before = buf.clone();
        let mut dst = ArrayViewMut::new(DType::F32, &[2, 32], &strides, 0, &mut buf).unwrap();
        let r = decode(
            Format::Mxfp8E4m3,
            &codes,
            &scales,
            None,
            &mut dst,
            &Exec::default(),
        );
        assert!(
            matches!(r, Err(tessera::Error::Layout { .. })),
            "{strides:?}: {r:?}"
        );
        assert_eq!(buf, before, "{strides:?}: a refused decode wrote");
    }
    // The same rows with distinct elements decode.
    let mut y = vec![0f32; 64];
    let mut dst = ArrayViewMut::from_slice(&mut y, &[2, 32]).unwrap();
    decode(
        Format::Mxfp8E4m3,
        &codes,
        &scales,
        None,
        &mut dst,
        &Exec::default(),
    )
    .unwrap();
}

#[test]
fn nvfp4_encodes_under_a_callers_tensor_scale() {
    let f = Format::Nvfp4;
    let mut x: Vec<f32> = Vec::new();
    for (i, amax) in [6.0f32, 0.75, 1000.0, 3.3e-3, 17.5, 2.0e5]
        .iter()
        .enumerate()
    {
        x.extend(block_with_amax(16, *amax, 40 + i as u64));
    }
    let n = x.len();
    // A scale near the data's own, one far below it (blocks saturate at
    // 448·6·t), and one far above (small blocks flush toward zero).
    for t in [0.37f32, 1.5e-3, 900.0] {
        for tier in tessera::available_tiers() {
            let s = encoded_sizes(f, &[n]).unwrap();
            let mut e = Encoded {
                codes: vec![0u8; s.code_bytes],
                scales: vec![0u8; s.blocks],
                tensor: Some(t),
            };
            tessera::formats::encode_with_tensor_scale(
                f,
                t,
                &ArrayView::from_slice(&x, &[n]).unwrap(),
                &mut e.codes,
                &mut e.scales,
                &Exec::on(tier),
            )
            .unwrap();
            check_nvfp4(&x, t, &e, tier);
        }
    }
    // The derived scale given back reproduces encode's bytes.
    let auto = enc_f32(f, None, &x, Tier::ALL[0]);
    let s = encoded_sizes(f, &[n]).unwrap();
    let (mut c, mut sc) = (vec![0u8; s.code_bytes], vec![0u8; s.blocks]);
    let view = ArrayView::from_slice(&x, &[n]).unwrap();
    tessera::formats::encode_with_tensor_scale(
        f,
        auto.tensor.unwrap(),
        &view,
        &mut c,
        &mut sc,
        &Exec::default(),
    )
    .unwrap();
    assert_eq!((c, sc), (auto.codes.clone(), auto.scales.clone()));
    // Refused before any write: no tensor scale in the format, and scales
    // that are not positive finite f32.
    let (mut c, mut sc) = (vec![0xAAu8; s.code_bytes], vec![0xAAu8; s.blocks]);
    for t in [0.0f32, -1.0, f32::NAN, f32::INFINITY] {
        assert!(tessera::formats::encode_with_tensor_scale(
            f,
            t,
            &view,
            &mut c,
            &mut sc,
            &Exec::default()
        )
        .is_err());
    }
    let m = encoded_sizes(Format::Mxfp8E4m3, &[n]).unwrap();
    let (mut mc, mut ms) = (vec![0xAAu8; m.code_bytes], vec![0xAAu8; m.blocks]);
    assert!(tessera::formats::encode_with_tensor_scale(
        Format::Mxfp8E4m3,
        1.0,
        &view,
        &mut mc,
        &mut ms,
        &Exec::default()
    )
    .is_err());
    assert!(c
        .iter()
        .chain(&sc)
        .chain(&mc)
        .chain(&ms)
        .all(|&b| b == 0xAA));
}

/// The model of the seed's UE8M0 variant, from f64: |x| against √2·2^e.
fn ue8m0_model(x: f32) -> u8 {
    let a = (x as f64).abs();
    if a.is_nan() {
        return 0xFF;
    }
    if a < f32::MIN_POSITIVE as f64 {
        return 0; // zero and subnormals
    }
    if a.is_infinite() {
        return 0xFE;
    }
    let e = a.log2().floor() as i32; // exact for f32 magnitudes' binades
    let e = if a >= 2f64.powi(e + 1) { e + 1 } else { e };
    let e = if a < 2f64.powi(e) { e - 1 } else { e };
    let up = a / 2f64.powi(e) >= std::f64::consts::SQRT_2;
    (e + 127 + up as i32).clamp(1, 254) as u8
}

#[test]
fn ue8m0_variant_rounds_at_the_geometric_midpoint_and_saturates() {
    let mut rng = Rng::new(0x0e80_0001);
    let mut xs: Vec<f32> = Vec::new();
    // Every binade at its edges and around √2, both signs.
    for e in 0..=255u32 {
        for m in [
            0u32, 1, 0x3504F2, 0x3504F3, 0x3504F4, 0x3504F5, 0x7fffff, 0x400000,
        ] {
            xs.push(f32::from_bits(e << 23 | m));
            xs.push(-f32::from_bits(e << 23 | m));
        }
    }
    xs.extend((0..200_000).map(|_| f32::from_bits(rng.next_u64() as u32)));
    for (i, &x) in xs.iter().enumerate() {
        let (got, want) = (tessera::formats::ue8m0_of(x), ue8m0_model(x));
        assert_eq!(got, want, "{x:e} ({:#010x}), case {i}", x.to_bits());
    }
    // The seed's fixed points.
    let of = tessera::formats::ue8m0_of;
    assert_eq!(of(1.0), 127);
    assert_eq!(of(f32::from_bits(0x3FB5_04F3)), 127); // just below √2
    assert_eq!(of(f32::from_bits(0x3FB5_04F4)), 128); // just above
    assert_eq!(of(0.0), 0);
    assert_eq!(of(1e-40), 0);
    assert_eq!(of(f32::NAN), 0xFF);
    assert_eq!(of(f32::INFINITY), 0xFE);
    assert_eq!(of(f32::MAX), 0xFE);
    assert_eq!(of(-0.5), 126);
    // Decoding: 0 is zero, 0xFF NaN, the rest exact powers of two; every code
    // but 0xFF round-trips.
    for c in 0..=255u8 {
        let v = tessera::formats::ue8m0_value(c);
        match c {
            0 => assert_eq!(v.to_bits(), 0),
            0xFF => assert!(v.is_nan()),
            _ => {
                assert_eq!(v as f64, 2f64.powi(c as i32 - 127));
                assert_eq!(of(v), c);
            }
        }
    }
    // The array calls, strided source and destination, every tier.
    let n = 1000;
    let src: Vec<f32> = xs[..2 * n].to_vec();
    for tier in tessera::available_tiers() {
        let exec = Exec::on(tier);
        let sv = ArrayView::from_slice_strided(&src, &[n], &[2], 0).unwrap();
        let mut codes = vec![0xAAu8; 2 * n];
        {
            let mut cv =
                ArrayViewMut::from_slice_strided(&mut codes, &[n], &[-2], 2 * n - 1).unwrap();
            tessera::formats::ue8m0_encode(&sv, &mut cv, &exec).unwrap();
        }
        for i in 0..n {
            assert_eq!(
                codes[2 * n - 1 - 2 * i],
                ue8m0_model(src[2 * i]),
                "{tier} {i}"
            );
            assert_eq!(codes[2 * n - 2 - 2 * i], 0xAA, "{tier}: a write outside");
        }
        let cv = ArrayView::from_slice(&codes, &[2 * n]).unwrap();
        let mut back = vec![0f32; 2 * n];
        tessera::formats::ue8m0_decode(
            &cv,
            &mut ArrayViewMut::from_slice(&mut back, &[2 * n]).unwrap(),
            &exec,
        )
        .unwrap();
        for i in 0..2 * n {
            let v = tessera::formats::ue8m0_value(codes[i]);
            assert!(back[i].to_bits() == v.to_bits() || (v.is_nan() && back[i].is_nan()));
        }
        // Refusals: wrong dtypes, wrong shapes, nothing written.
        let mut out = vec![0xAAu8; 3];
        let mut ov = ArrayViewMut::from_slice(&mut out, &[3]).unwrap();
        assert!(tessera::formats::ue8m0_encode(&sv, &mut ov, &exec).is_err());
        let f64s = [1.0f64; 3];
        assert!(tessera::formats::ue8m0_encode(
            &ArrayView::from_slice(&f64s, &[3]).unwrap(),
            &mut ov,
            &exec
        )
        .is_err());
        assert_eq!(out, [0xAA; 3]);
    }
}

#[test]
fn block_values_hold_each_blocks_codes_then_its_scale() {
    use tessera::formats::{
        block_value_bytes, block_values_len, decode_block_values, encode_block_values,
        from_block_values,
    };
    let mut rng = Rng::new(0xb10c_0001);
    let want_bytes = [
        (Format::Mxfp8E4m3, 33),
        (Format::Mxfp8E5m2, 33),
        (Format::Mxfp6E2m3, 25),
        (Format::Mxfp6E3m2, 25),
        (Format::Mxfp4, 17),
        (Format::Mxint8, 33),
        (Format::Nvfp4, 9),
    ];
    for (f, bytes) in want_bytes {
        assert_eq!(block_value_bytes(f), bytes, "{f:?}");
        let block = f.info().block;
        let (rows, n) = (3, 2 * block);
        let x: Vec<f32> = (0..rows * n)
            .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 37.0)
            .collect();
        let view = ArrayView::from_slice(&x, &[rows, n]).unwrap();
        let sizes = encoded_sizes(f, &[rows, n]).unwrap();
        let (mut codes, mut scales) = (vec![0u8; sizes.code_bytes], vec![0u8; sizes.blocks]);
        let t = encode(f, None, &view, &mut codes, &mut scales, &Exec::default()).unwrap();
        let len = block_values_len(f, &[rows, n]).unwrap();
        assert_eq!(len, sizes.blocks * bytes);
        let mut values = vec![0u8; len];
        let t2 = encode_block_values(f, None, &view, &mut values, &Exec::default()).unwrap();
        assert_eq!(t, t2, "{f:?}: tensor scale");
        let codes_per_block = sizes.code_bytes / sizes.blocks;
        for b in 0..sizes.blocks {
            let v = &values[b * bytes..(b + 1) * bytes];
            assert_eq!(v[bytes - 1], scales[b], "{f:?} block {b}: the scale last");
            let c = &codes[b * codes_per_block..(b + 1) * codes_per_block];
            if bytes == 25 {
                // Six-bit codes, element 0 in the most significant bits.
                for (j, &code) in c.iter().enumerate() {
                    let bit = 6 * j;
                    let word = (v[bit / 8] as u16) << 8 | *v.get(bit / 8 + 1).unwrap_or(&0) as u16;
                    let got = (word >> (10 - bit % 8)) as u8 & 63;
                    assert_eq!(got, code, "{f:?} block {b} element {j}");
                }
            } else {
                assert_eq!(&v[..bytes - 1], c, "{f:?} block {b}: the codes first");
            }
        }
        // Back to codes and scales, and decoded as decode does.
        let (mut c2, mut s2) = (vec![0xAAu8; codes.len()], vec![0xAAu8; scales.len()]);
        from_block_values(f, &values, &mut c2, &mut s2).unwrap();
        assert_eq!((&c2, &s2), (&codes, &scales), "{f:?}: round trip");
        let mut y1 = vec![0f32; rows * n];
        let mut y2 = vec![1f32; rows * n];
        decode(
            f,
            &codes,
            &scales,
            t,
            &mut ArrayViewMut::from_slice(&mut y1, &[rows, n]).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        decode_block_values(
            f,
            &values,
            t,
            &mut ArrayViewMut::from_slice(&mut y2, &[rows, n]).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        assert_eq!(bits_of_f32(&y1), bits_of_f32(&y2), "{f:?}: decoded");
        // Lengths that do not fit: refused, nothing written.
        let mut short = vec![0xAAu8; len - 1];
        assert!(encode_block_values(f, None, &view, &mut short, &Exec::default()).is_err());
        assert!(short.iter().all(|&b| b == 0xAA));
        assert!(from_block_values(f, &values[..len - 1], &mut c2, &mut s2).is_err());
    }
}

fn bits_of_f32(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}
