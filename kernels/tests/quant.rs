//! Quantisation and polynomial evaluation against models of their stated
//! order written here in plain Rust (f32/f64 operations one at a time):
//! per tensor and per channel, halves, saturation, NaN, strided and reversed
//! layouts, every tier at 1, 2 and 7 threads; refusals before any write.

use tessera::poly::polyval;
use tessera::quant::{dequantize, quantize, QParams};
use tessera::{available_tiers, ArrayView, ArrayViewMut, DType, Exec};
use tessera_testkit::rng::Rng;

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in available_tiers() {
        for n in [1, 2, 7] {
            v.push(Exec::on(t).threads(n));
        }
    }
    v
}

/// The stated order: x / s rounded, rint (halves to even), + z, clamp, NaN → 0.
fn model_q(x: f32, s: f32, z: i32, lo: i64, hi: i64) -> i64 {
    let v = (x / s).round_ties_even() + z as f32;
    if v.is_nan() {
        0
    } else {
        (v.max(lo as f32).min(hi as f32)) as i64
    }
}

/// Data over several quantisation steps, with exact halves, values far
/// beyond the range, infinities and a NaN.
fn data(n: usize, s: f32, rng: &mut Rng) -> Vec<f32> {
    (0..n)
        .map(|i| match i % 11 {
            0 => ((rng.next_u64() % 600) as f32 - 300.0 + 0.5) * s,
            1 => f32::NAN,
            2 => f32::INFINITY * if i % 2 == 0 { 1.0 } else { -1.0 },
            3 => 1e30,
            _ => ((rng.unit() - 0.5) * 400.0) as f32 * s,
        })
        .collect()
}

#[test]
fn quantize_follows_its_stated_order_per_tensor_and_per_channel() {
    let mut rng = Rng::new(7);
    let (r, c) = (37usize, 6usize);
    let scales: Vec<f32> = (0..c).map(|i| 0.01 + 0.37 * i as f32).collect();
    let zeros: Vec<i32> = (0..c).map(|i| i as i32 * 9 - 20).collect();
    let x = data(r * c, 0.5, &mut rng);
    for (dt, lo, hi) in [(DType::I8, -128i64, 127i64), (DType::U8, 0, 255)] {
        let zs: Vec<i32> = zeros
            .iter()
            .map(|&z| if dt == DType::U8 { z + 40 } else { z })
            .collect();
        // Per tensor.
        // Scale 0.5: the data's exact halves of a step are ties.
        let want_t: Vec<i64> = x.iter().map(|&v| model_q(v, 0.5, 5, lo, hi)).collect();
        assert!(x.iter().any(|&v| (v / 0.5).fract().abs() == 0.5));
        // Per channel along axis 1, scales and zero points reversed in memory.
        let want_c: Vec<i64> = x
            .iter()
            .enumerate()
            .map(|(i, &v)| model_q(v, scales[i % c], zs[i % c], lo, hi))
            .collect();
        let rs: Vec<f32> = scales.iter().rev().copied().collect();
        let rz: Vec<i32> = zs.iter().rev().copied().collect();
        let sv = ArrayView::from_slice_strided(&rs, &[c], &[-1], c - 1).unwrap();
        let zv = ArrayView::from_slice_strided(&rz, &[c], &[-1], c - 1).unwrap();
        // The data also transposed: stored column-major.
        let xt: Vec<f32> = (0..r * c).map(|k| x[(k % r) * c + k / r]).collect();
        for e in execs() {
            for (params, want) in [
                (
                    QParams::Tensor {
                        scale: 0.5,
                        zero_point: 5,
                    },
                    &want_t,
                ),
                (
                    QParams::Channel {
                        axis: 1,
                        scale: &sv,
                        zero_point: &zv,
                    },
                    &want_c,
                ),
            ] {
                for transposed in [false, true] {
                    let xv = if transposed {
                        ArrayView::from_slice_strided(&xt, &[r, c], &[1, r as isize], 0).unwrap()
                    } else {
                        ArrayView::from_slice(&x, &[r, c]).unwrap()
                    };
                    let got: Vec<i64> = if dt == DType::I8 {
                        let mut q = vec![0i8; r * c];
                        quantize(
                            &params,
                            &xv,
                            &mut ArrayViewMut::from_slice(&mut q, &[r, c]).unwrap(),
                            &e,
                        )
                        .unwrap();
                        q.iter().map(|&v| v as i64).collect()
                    } else {
                        let mut q = vec![0u8; r * c];
                        quantize(
                            &params,
                            &xv,
                            &mut ArrayViewMut::from_slice(&mut q, &[r, c]).unwrap(),
                            &e,
                        )
                        .unwrap();
                        q.iter().map(|&v| v as i64).collect()
                    };
                    assert_eq!(&got, want, "{dt} {params:?} transposed={transposed} {e:?}");
                }
            }
        }
    }
}

#[test]
fn dequantize_and_round_trip() {
    let q: Vec<i8> = (-128..=127).collect();
    let n = q.len();
    let qv = ArrayView::from_slice(&q, &[n]).unwrap();
    for e in execs() {
        // f32: (q - z) · s, one rounding.
        let mut y = vec![0f32; n];
        let p = QParams::Tensor {
            scale: 0.1f32 as f64,
            zero_point: -3,
        };
        dequantize(
            &p,
            &qv,
            &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        for (i, &v) in q.iter().enumerate() {
            assert_eq!(y[i].to_bits(), ((v as f32 - -3.0) * 0.1f32).to_bits());
        }
        // Back to i8: every code round-trips (the step is the scale).
        let mut back = vec![0i8; n];
        let yv = ArrayView::from_slice(&y, &[n]).unwrap();
        quantize(
            &p,
            &yv,
            &mut ArrayViewMut::from_slice(&mut back, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(back, q);
        // f16 destination: the f32 product rounded once more.
        let mut h = vec![half::f16::ZERO; n];
        dequantize(
            &p,
            &qv,
            &mut ArrayViewMut::from_slice(&mut h, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        for (i, &v) in q.iter().enumerate() {
            assert_eq!(h[i], half::f16::from_f32((v as f32 + 3.0) * 0.1f32));
        }
        // f64 data and scales.
        let mut d = vec![0f64; n];
        dequantize(
            &QParams::Tensor {
                scale: 0.1,
                zero_point: 7,
            },
            &qv,
            &mut ArrayViewMut::from_slice(&mut d, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        for (i, &v) in q.iter().enumerate() {
            assert_eq!(d[i].to_bits(), ((v as f64 - 7.0) * 0.1).to_bits());
        }
    }
}

#[test]
fn quantisation_refusals_write_nothing() {
    let x = vec![1.0f32; 6];
    let xv = ArrayView::from_slice(&x, &[2, 3]).unwrap();
    let s3 = vec![1.0f32; 3];
    let s2 = vec![1.0f32; 2];
    let z3 = vec![0i32; 3];
    let z_far = vec![0i32, 300, 0];
    let s_neg = vec![1.0f32, -1.0, 1.0];
    let s64 = vec![1.0f64; 3];
    let (v3, v2, vz, vfar, vneg, v64) = (
        ArrayView::from_slice(&s3, &[3]).unwrap(),
        ArrayView::from_slice(&s2, &[2]).unwrap(),
        ArrayView::from_slice(&z3, &[3]).unwrap(),
        ArrayView::from_slice(&z_far, &[3]).unwrap(),
        ArrayView::from_slice(&s_neg, &[3]).unwrap(),
        ArrayView::from_slice(&s64, &[3]).unwrap(),
    );
    let ch = |axis, scale, zero_point| QParams::Channel {
        axis,
        scale,
        zero_point,
    };
    let cases: Vec<(QParams<'_, '_>, &str)> = vec![
        (
            QParams::Tensor {
                scale: 0.0,
                zero_point: 0,
            },
            "scale 0",
        ),
        (
            QParams::Tensor {
                scale: f64::NAN,
                zero_point: 0,
            },
            "scale 0 is NaN",
        ),
        (
            QParams::Tensor {
                scale: 1e300,
                zero_point: 0,
            },
            "positive and finite",
        ),
        (
            QParams::Tensor {
                scale: 1.0,
                zero_point: 128,
            },
            "zero point 0 is 128",
        ),
        (ch(2, &v3, &vz), "axis 2"),
        (ch(1, &v2, &vz), "scale"),
        (ch(1, &v3, &vfar), "zero point 1 is 300"),
        (ch(1, &vneg, &vz), "scale 1 is -1"),
        (ch(1, &v64, &vz), "scale"),
    ];
    for (p, needle) in cases {
        let mut q = vec![9i8; 6];
        let err = quantize(
            &p,
            &xv,
            &mut ArrayViewMut::from_slice(&mut q, &[2, 3]).unwrap(),
            &Exec::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains(needle),
            "{err} should say {needle}"
        );
        assert_eq!(q, vec![9i8; 6]);
    }
    // Float destination, wrong shape, integer data.
    let p = QParams::Tensor {
        scale: 1.0,
        zero_point: 0,
    };
    let mut f = vec![9f32; 6];
    assert!(quantize(
        &p,
        &xv,
        &mut ArrayViewMut::from_slice(&mut f, &[2, 3]).unwrap(),
        &Exec::default(),
    )
    .is_err());
    let mut q = vec![9i8; 6];
    assert!(quantize(
        &p,
        &xv,
        &mut ArrayViewMut::from_slice(&mut q, &[3, 2]).unwrap(),
        &Exec::default(),
    )
    .is_err());
    assert_eq!((f, q), (vec![9f32; 6], vec![9i8; 6]));
    let qi = vec![1i8; 6];
    let qv = ArrayView::from_slice(&qi, &[6]).unwrap();
    let mut o = vec![9i8; 6];
    assert!(quantize(
        &p,
        &qv,
        &mut ArrayViewMut::from_slice(&mut o, &[6]).unwrap(),
        &Exec::default(),
    )
    .is_err());
    assert_eq!(o, vec![9i8; 6]);
}

#[test]
fn polyval_is_horner_with_one_fma_per_coefficient() {
    let mut rng = Rng::new(11);
    let coeffs: [f64; 6] = [0.75, -1.5, 2.0 / 3.0, 0.125, -7.0, 1e-3];
    let n = 3001;
    let x: Vec<f32> = (0..n).map(|_| ((rng.unit() - 0.5) * 8.0) as f32).collect();
    let model32 = |v: f32| {
        let mut acc = coeffs[0] as f32;
        for &k in &coeffs[1..] {
            acc = acc.mul_add(v, k as f32);
        }
        acc
    };
    let x64: Vec<f64> = x.iter().map(|&v| v as f64 * 1.000001).collect();
    let model64 = |v: f64| {
        coeffs[1..]
            .iter()
            .fold(coeffs[0], |acc, &k| acc.mul_add(v, k))
    };
    let xr: Vec<f32> = x.iter().rev().copied().collect();
    let xh: Vec<half::f16> = x.iter().map(|&v| half::f16::from_f32(v)).collect();
    for e in execs() {
        let mut y = vec![0f32; n];
        polyval(
            &coeffs,
            &ArrayView::from_slice(&x, &[n]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        for i in 0..n {
            assert_eq!(y[i].to_bits(), model32(x[i]).to_bits(), "f32 {i} {e:?}");
        }
        // A reversed view gives the same values at the same indices.
        let mut yr = vec![0f32; n];
        let rv = ArrayView::from_slice_strided(&xr, &[n], &[-1], n - 1).unwrap();
        polyval(
            &coeffs,
            &rv,
            &mut ArrayViewMut::from_slice(&mut yr, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(yr, y);
        let mut y64 = vec![0f64; n];
        polyval(
            &coeffs,
            &ArrayView::from_slice(&x64, &[n]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut y64, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        for i in 0..n {
            assert_eq!(y64[i].to_bits(), model64(x64[i]).to_bits(), "f64 {i}");
        }
        // f16 data computes in f32 and rounds once into f16.
        let mut yh = vec![half::f16::ZERO; n];
        polyval(
            &coeffs,
            &ArrayView::from_slice(&xh, &[n]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut yh, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        for i in 0..n {
            assert_eq!(
                yh[i],
                half::f16::from_f32(model32(xh[i].to_f32())),
                "f16 {i}"
            );
        }
    }
    let mut y = vec![0f32; 2];
    let two = [1.0f32, 2.0];
    assert!(polyval(
        &[],
        &ArrayView::from_slice(&two, &[2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[2]).unwrap(),
        &Exec::default(),
    )
    .is_err());
    assert_eq!(y, [0.0, 0.0]);
}
