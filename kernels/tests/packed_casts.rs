//! Casts between f32 and the packed dtypes (u1, u4, i4, e2m1fn, and any
//! packed dtype the spec adds) on contiguous views run fused kernels on the
//! vector tiers; these tests hold them to the scalar tier's bits: every
//! neighbour midpoint of every packed dtype's values and one ulp either
//! side, specials, NaN payloads and random bit patterns, both modes, 1/2/7
//! threads, lengths with tails and single values, misaligned f32 views, and
//! (ignored, release) every one of the 2^32 f32 inputs.

mod common;

use tessera::{ArrayView, ArrayViewMut, CastMode, DType, Exec, Tier};
use tessera_testkit::rng::Rng;

fn packed_dtypes() -> Vec<DType> {
    DType::ALL
        .iter()
        .copied()
        .filter(|d| d.info().values_per_byte > 1)
        .collect()
}

/// The tiers compared with scalar (saying so where there is none).
#[track_caller]
fn vector_tiers() -> Vec<Tier> {
    tessera_testkit::differential::compared_tiers(|_| true)
}

const MODES: [CastMode; 2] = [CastMode::Default, CastMode::Saturating];

/// Panic at the first position where `got` differs from `want`, naming it
/// with `what(i)`.
fn assert_same<T: PartialEq + core::fmt::LowerHex>(
    got: &[T],
    want: &[T],
    what: impl Fn(usize) -> String,
) {
    assert_eq!(got.len(), want.len());
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!("{}: {:#x}, scalar tier {:#x}", what(i), got[i], want[i]);
    }
}

/// f32 → `d` on `exec` from `xs[off..]` (n values) into bytes pre-filled
/// with a pattern, returned whole (so a write outside the values shows).
fn encode(exec: &Exec, d: DType, xs: &[f32], off: usize, n: usize, mode: CastMode) -> Vec<u8> {
    let vpb = d.info().values_per_byte as usize;
    let mut bytes = vec![0xA5u8; n.div_ceil(vpb) + 2];
    let src = ArrayView::from_slice_strided(xs, &[n], &[1], off).unwrap();
    let mut dst = ArrayViewMut::new(d, &[n], &[1], vpb, &mut bytes).unwrap();
    tessera::cast(mode, &src, &mut dst, exec).unwrap();
    bytes
}

/// `d` → f32 on `exec`, n values from byte 1 of `bytes`, into `off..` of a
/// pre-filled f32 buffer, returned whole as bits.
fn decode(exec: &Exec, d: DType, bytes: &[u8], n: usize, off: usize, mode: CastMode) -> Vec<u32> {
    let vpb = d.info().values_per_byte as usize;
    let mut out = vec![f32::from_bits(0x7fa5_a5a5); n + off + 3];
    let src = ArrayView::new(d, &[n], &[1], vpb, bytes).unwrap();
    let mut dst = ArrayViewMut::from_slice_strided(&mut out, &[n], &[1], off).unwrap();
    tessera::cast(mode, &src, &mut dst, exec).unwrap();
    out.iter().map(|x| x.to_bits()).collect()
}

/// The values of `d`'s codes (through the scalar tier's decoder).
fn code_values(d: DType) -> Vec<f32> {
    let bits = d.info().bits;
    let vpb = d.info().values_per_byte as usize;
    let codes: Vec<u8> = (0..1u32 << bits).map(|c| c as u8).collect();
    // One code per value position, packed by the layout rule (value 0 in
    // the most significant bits).
    let mut bytes = vec![0u8; codes.len().div_ceil(vpb) + 1];
    for (i, &c) in codes.iter().enumerate() {
        bytes[1 + i / vpb] |= c << ((vpb - 1 - i % vpb) as u32 * bits);
    }
    let n = codes.len().div_ceil(vpb) * vpb;
    let out = decode(&Exec::on(Tier::Scalar), d, &bytes, n, 0, CastMode::Default);
    out[..codes.len()]
        .iter()
        .map(|&b| f32::from_bits(b))
        .collect()
}

/// Inputs that pin every decision of an encoder into `d`.
fn hard_inputs(d: DType, rng: &mut Rng) -> Vec<f32> {
    let mut vals: Vec<f32> = code_values(d)
        .into_iter()
        .filter(|v| v.is_finite())
        .collect();
    vals.sort_by(f32::total_cmp);
    vals.dedup();
    let mut xs = vec![
        0.0,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::MAX,
        f32::INFINITY,
        1e-30,
        1e30,
    ];
    let step = |x: f32, up: bool| {
        let b = x.to_bits();
        f32::from_bits(if (x > 0.0) == up {
            b + 1
        } else {
            b.saturating_sub(1)
        })
    };
    for w in vals.windows(2) {
        let mid = ((w[0] as f64 + w[1] as f64) / 2.0) as f32;
        xs.extend([mid, step(mid, true), step(mid, false)]);
    }
    for &v in &vals {
        if v != 0.0 {
            xs.extend([v, step(v, true), step(v, false)]);
        }
        // Integers and half-integers around every value (truncation edges).
        xs.extend([v + 0.5, v - 0.5, v + 0.999, v - 0.999]);
    }
    let mut all: Vec<f32> = xs.iter().flat_map(|&x| [x, -x]).collect();
    all.extend(
        [
            0x7fc0_0000u32,
            0x7f80_0001,
            0xffc0_0000,
            0xff80_0001,
            0x7fff_ffff,
            0xffff_ffff,
        ]
        .map(f32::from_bits),
    );
    for _ in 0..(1 << 20) {
        all.push(f32::from_bits(rng.next_u64() as u32));
    }
    // Random values near the codes' range, where most decisions are.
    let top = vals.last().copied().unwrap_or(1.0).abs().max(1.0) * 1.5;
    for _ in 0..(1 << 18) {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        all.push(((2.0 * u - 1.0) * top as f64) as f32);
    }
    all
}

#[test]
fn fused_encoders_give_the_scalar_tiers_bits() {
    let mut rng = Rng::new(0x009a_c4ed);
    let scalar = Exec::on(Tier::Scalar);
    for d in packed_dtypes() {
        let vpb = d.info().values_per_byte as usize;
        let xs = hard_inputs(d, &mut rng);
        // A whole number of bytes, not of 32-value groups: a tail is left.
        let n = (xs.len() - 40) / 32 * 32 + 8;
        assert_eq!(n % vpb, 0);
        for mode in MODES {
            for off in [0, 3] {
                let want = encode(&scalar, d, &xs, off, n, mode);
                for tier in vector_tiers() {
                    for threads in [1, 2, 7] {
                        let exec = Exec::on(tier).threads(threads);
                        let got = encode(&exec, d, &xs, off, n, mode);
                        assert_same(&got, &want, |i| {
                            format!(
                                "{d:?} {mode:?} {tier:?} {threads} threads, offset {off}: byte {i} \
                                 (values {}..{}: {:?})",
                                i * vpb,
                                i * vpb + vpb,
                                &xs[(off + i * vpb).min(xs.len())..(off + i * vpb + vpb).min(xs.len())]
                            )
                        });
                    }
                }
            }
            // Short calls: a single value, one byte, one group plus a byte.
            for len in [1, vpb, 32 + vpb, 64] {
                let want = encode(&scalar, d, &xs, 5, len, mode);
                for tier in vector_tiers() {
                    assert_eq!(
                        encode(&Exec::on(tier), d, &xs, 5, len, mode),
                        want,
                        "{d:?} {len}"
                    );
                }
            }
        }
    }
}

#[test]
fn fused_decoders_give_the_scalar_tiers_bits() {
    let mut rng = Rng::new(0xdec0de);
    let scalar = Exec::on(Tier::Scalar);
    for d in packed_dtypes() {
        let vpb = d.info().values_per_byte as usize;
        // Every byte value in order, then random bytes (byte 0 is never read).
        let mut bytes: Vec<u8> = vec![0x5a];
        bytes.extend((0..=255u8).cycle().take(4096));
        bytes.extend((0..(1 << 18)).map(|_| rng.next_u64() as u8));
        let whole = (bytes.len() - 1) * vpb;
        // Leave a tail after the last whole group of 32.
        let n = whole - 32 + vpb;
        for mode in MODES {
            for off in [0, 5] {
                let want = decode(&scalar, d, &bytes, n, off, mode);
                for tier in vector_tiers() {
                    for threads in [1, 2, 7] {
                        let got = decode(&Exec::on(tier).threads(threads), d, &bytes, n, off, mode);
                        assert_same(&got, &want, |i| {
                            format!("{d:?} {mode:?} {tier:?} {threads} threads, offset {off}: value {i}")
                        });
                    }
                }
            }
            for len in [1, vpb, 32 + vpb] {
                let want = decode(&scalar, d, &bytes, len, 2, mode);
                for tier in vector_tiers() {
                    assert_eq!(
                        decode(&Exec::on(tier), d, &bytes, len, 2, mode),
                        want,
                        "{d:?} {len}"
                    );
                }
            }
        }
    }
}

/// Every f32 bit pattern, through each packed dtype in each mode, on each
/// vector tier against the scalar tier. `cargo test --release -p tessera
/// --test packed_casts -- --ignored` (a few minutes).
#[test]
#[ignore = "all 2^32 inputs: run with --release -- --ignored"]
fn fused_encoders_on_every_f32() {
    let scalar = Exec::on(Tier::Scalar);
    let chunk = 1usize << 24;
    let mut xs = vec![0f32; chunk];
    for d in packed_dtypes() {
        for mode in MODES {
            for c in 0..(1usize << 32) / chunk {
                for (i, x) in xs.iter_mut().enumerate() {
                    *x = f32::from_bits((c * chunk + i) as u32);
                }
                let want = encode(&scalar, d, &xs, 0, chunk, mode);
                for tier in vector_tiers() {
                    let got = encode(&Exec::on(tier), d, &xs, 0, chunk, mode);
                    assert!(got == want, "{d:?} {mode:?} {tier:?}: chunk {c:#x} differs");
                }
            }
        }
    }
}
