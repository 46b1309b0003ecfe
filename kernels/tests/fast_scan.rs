//! FastCumSum and FastCumProd (`reduce::fast_scan`): the bits of an
//! independent model of the stated order (blocks of 16 f32 or 8 f64 from
//! each line's start, Hillis–Steele steps inside, the previous block's last
//! output joined to each) on every tier, thread count and layout, along
//! either axis; sums within the stated bound of exact; refusals first.

mod common;

use common::*;
use tessera::reduce::{fast_scan, FastScanOp};
use tessera::{ArrayView, ArrayViewMut, DType, Exec};
use tessera_testkit::rng::Rng;

/// The model: one line, block length `l`, `op` one IEEE operation.
fn model<T: Copy>(x: &[T], l: usize, op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut out = Vec::with_capacity(x.len());
    let mut carry: Option<T> = None;
    for block in x.chunks(l) {
        let mut v = block.to_vec();
        let mut d = 1;
        while d < l {
            let prev = v.clone();
            for j in d..v.len() {
                v[j] = op(prev[j], prev[j - d]);
            }
            d *= 2;
        }
        let y: Vec<T> = match carry {
            None => v,
            Some(c) => v.iter().map(|&t| op(c, t)).collect(),
        };
        carry = y.last().copied();
        out.extend(y);
    }
    out
}

fn values_f32(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| match i % 29 {
            3 => -0.0,
            7 => 0.0,
            _ => {
                f32::from_bits(0x3c00_0000 + (rng.next_u64() as u32 & 0x07ff_ffff))
                    * if rng.next_u64() & 1 == 1 { -1.0 } else { 1.0 }
            }
        })
        .collect()
}

#[test]
fn the_bits_of_the_model_on_every_tier_layout_and_thread_count() {
    let mut rng = Rng::new(0xfa57_5ca0);
    for n in [1usize, 5, 15, 16, 17, 31, 32, 33, 100, 1000, 70_001] {
        let x = values_f32(&mut rng, n);
        let x64: Vec<f64> = x.iter().map(|&v| v as f64 * 1.000_000_1).collect();
        let want_s = model(&x, 16, |a, b| a + b);
        let want_p = model(
            &x.iter().map(|v| 1.0 + v / 64.0).collect::<Vec<f32>>(),
            16,
            |a, b| a * b,
        );
        let want_s64 = model(&x64, 8, |a, b| a + b);
        let xp: Vec<f32> = x.iter().map(|v| 1.0 + v / 64.0).collect();
        for tier in tiers() {
            for threads in [1, 3] {
                let exec = Exec::on(tier).threads(threads);
                let mut y = vec![f32::NAN; n];
                fast_scan(
                    FastScanOp::Sum,
                    0,
                    &ArrayView::from_slice(&x, &[n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
                    &exec,
                )
                .unwrap();
                assert_eq!(bits_of(&y), bits_of(&want_s), "sum n {n} {tier:?}");
                fast_scan(
                    FastScanOp::Prod,
                    0,
                    &ArrayView::from_slice(&xp, &[n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
                    &exec,
                )
                .unwrap();
                assert_eq!(bits_of(&y), bits_of(&want_p), "prod n {n} {tier:?}");
                let mut y64 = vec![f64::NAN; n];
                fast_scan(
                    FastScanOp::Sum,
                    0,
                    &ArrayView::from_slice(&x64, &[n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut y64, &[n]).unwrap(),
                    &exec,
                )
                .unwrap();
                assert_eq!(bits_of(&y64), bits_of(&want_s64), "f64 sum n {n} {tier:?}");
            }
        }
    }
}

#[test]
fn along_either_axis_of_a_strided_array() {
    let mut rng = Rng::new(0xfa57_5ca1);
    let (r, c) = (37, 45);
    let x = values_f32(&mut rng, r * c);
    for tier in tiers() {
        let exec = Exec::on(tier).threads(2);
        for axis in [0usize, 1] {
            // The destination every other element of a transposed buffer.
            let mut buf = vec![7f32; 2 * r * c];
            {
                let mut dv =
                    ArrayViewMut::from_slice_strided(&mut buf, &[r, c], &[2, 2 * r as isize], 0)
                        .unwrap();
                fast_scan(
                    FastScanOp::Sum,
                    axis,
                    &ArrayView::from_slice(&x, &[r, c]).unwrap(),
                    &mut dv,
                    &exec,
                )
                .unwrap();
            }
            let at = |i: usize, j: usize| buf[2 * i + 2 * r * j];
            if axis == 1 {
                for i in 0..r {
                    let want = model(&x[i * c..(i + 1) * c], 16, |a, b| a + b);
                    let got: Vec<f32> = (0..c).map(|j| at(i, j)).collect();
                    assert_eq!(bits_of(&got), bits_of(&want), "{tier:?} row {i}");
                }
            } else {
                for j in 0..c {
                    let col: Vec<f32> = (0..r).map(|i| x[i * c + j]).collect();
                    let want = model(&col, 16, |a, b| a + b);
                    let got: Vec<f32> = (0..r).map(|i| at(i, j)).collect();
                    assert_eq!(bits_of(&got), bits_of(&want), "{tier:?} column {j}");
                }
            }
            assert!(
                buf.iter().skip(1).step_by(2).all(|&v| v == 7.0),
                "a write outside"
            );
        }
    }
}

#[test]
fn sums_stay_within_the_stated_bound() {
    let mut rng = Rng::new(0xfa57_5ca2);
    let n = 100_000;
    let x: Vec<f32> = (0..n)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.3) * 1000.0)
        .collect();
    let mut y = vec![0f32; n];
    fast_scan(
        FastScanOp::Sum,
        0,
        &ArrayView::from_slice(&x, &[n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    let u = 2f64.powi(-24);
    let (mut exact, mut mag) = (0f64, 0f64);
    for i in 0..n {
        exact += x[i] as f64; // exact: f32 values of 24 bits in a 53-bit sum below 2^29
        mag += (x[i] as f64).abs();
        let m = (4 + i / 16 + 1) as f64;
        let gamma = m * u / (1.0 - m * u);
        let err = (y[i] as f64 - exact).abs();
        assert!(
            err <= gamma * mag,
            "output {i}: {err:e} > {:e}",
            gamma * mag
        );
    }
}

#[test]
fn refusals_come_before_any_write() {
    let x = [1i32; 8];
    let mut y = [7i32; 8];
    let e = fast_scan(
        FastScanOp::Sum,
        0,
        &ArrayView::from_slice(&x, &[8]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[8]).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(
        e,
        Err(tessera::Error::DTypeUnsupported {
            dtype: DType::I32,
            ..
        })
    ));
    let xf = [1f32; 8];
    let mut yf = [7f32; 8];
    for (axis, shape) in [(1usize, [8usize]), (0, [8])] {
        let mut y64 = [7f64; 8];
        let dv = &mut ArrayViewMut::from_slice(&mut y64, &shape).unwrap();
        let e = fast_scan(
            FastScanOp::Sum,
            axis,
            &ArrayView::from_slice(&xf, &shape).unwrap(),
            dv,
            &Exec::default(),
        );
        assert!(e.is_err());
        assert!(y64.iter().all(|&v| v == 7.0));
    }
    let e = fast_scan(
        FastScanOp::Sum,
        0,
        &ArrayView::from_slice(&xf, &[8]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut yf[..4], &[4]).unwrap(),
        &Exec::default(),
    );
    assert!(e.is_err());
    assert!(yf.iter().all(|&v| v == 7.0) && y.iter().all(|&v| v == 7));
}

#[test]
fn a_contiguous_destination_of_a_transposed_source() {
    let mut rng = Rng::new(0xfa57_5ca3);
    let (r, c) = (21, 50);
    let x = values_f32(&mut rng, r * c);
    // x read as its transpose: a c × r array with strides (1, c).
    for tier in tiers() {
        let mut y = vec![f32::NAN; r * c];
        fast_scan(
            FastScanOp::Prod,
            1,
            &ArrayView::from_slice_strided(&x, &[c, r], &[1, c as isize], 0).unwrap(),
            &mut ArrayViewMut::from_slice(&mut y, &[c, r]).unwrap(),
            &Exec::on(tier),
        )
        .unwrap();
        for j in 0..c {
            let col: Vec<f32> = (0..r).map(|i| x[i * c + j]).collect();
            let want = model(&col, 16, |a, b| a * b);
            assert_eq!(
                bits_of(&y[j * r..(j + 1) * r]),
                bits_of(&want),
                "{tier:?} line {j}"
            );
        }
    }
}
