//! The NaN-sign rule of ARCHITECTURE.md §5.1, engine by engine: a NaN
//! result's sign and payload are the one thing that may depend on the order
//! in which the hardware met NaN operands, so the engines that accumulate in
//! a carrier (reduce, scan, contract, fold) make every NaN result the
//! positive quiet NaN before it rounds into another dtype, and no engine
//! lets a NaN's sign become a visible difference between tiers or thread
//! counts in a destination without a NaN code (e2m3fn turns a NaN into a
//! zero of a sign). The reduce and scan
//! tests of this rule are in `reduce.rs` and `scan.rs`.
//!
//! The expected codes come from the rule, not from the code under test: the
//! positive quiet NaN is 0x7fc0_0000 (f32), and a destination without a NaN
//! code is compared across every tier and thread count.

use num_complex::Complex;
use tessera::{available_tiers, ArrayView, ArrayViewMut, DType, Exec, Par};
use tessera_testkit::rng::Rng;

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in available_tiers() {
        for par in [Par::Seq, Par::threads(3)] {
            v.push(Exec::on(t).par(par));
        }
    }
    v
}

/// f32 values where about one in `one_in` is a NaN of either sign and of a
/// random payload.
fn with_nans(rng: &mut Rng, n: usize, one_in: usize) -> Vec<f32> {
    (0..n)
        .map(|_| match rng.below_usize(one_in) {
            0 => f32::from_bits(0x7fc0_0000 | (rng.next_u64() as u32 & 0x3f_ffff)),
            1 => f32::from_bits(0xffc0_0000 | (rng.next_u64() as u32 & 0x3f_ffff)),
            _ => (rng.unit() as f32 - 0.5) * 4.0,
        })
        .collect()
}

/// f32 parts from `run` on every exec: NaN at the same places, every other
/// part the same bits (a NaN's sign and payload are the exception of §5.1).
fn nan_places_everywhere(what: &str, run: impl Fn(&Exec) -> Vec<f32>) {
    let mut first: Option<(Exec, Vec<f32>)> = None;
    for e in execs() {
        let got = run(&e);
        match &first {
            None => first = Some((e, got)),
            Some((e0, want)) => {
                for (g, w) in got.iter().zip(want) {
                    assert_eq!(g.is_nan(), w.is_nan(), "{what}: {e:?} against {e0:?}");
                    if !g.is_nan() {
                        assert_eq!(g.to_bits(), w.to_bits(), "{what}: {e:?} against {e0:?}");
                    }
                }
            }
        }
    }
}

/// The same bytes from `run` on every exec; the first exec's bytes. With
/// only the scalar tier on this CPU the tiers' comparison is skipped (said
/// on stderr); the thread counts are still compared.
fn same_everywhere(what: &str, run: impl Fn(&Exec) -> Vec<u8>) -> Vec<u8> {
    if available_tiers().len() < 2 {
        eprintln!("{what}: skipped the comparison of tiers: only the scalar tier runs here");
    }
    let mut first: Option<(Exec, Vec<u8>)> = None;
    for e in execs() {
        let got = run(&e);
        match &first {
            None => first = Some((e, got)),
            Some((e0, want)) => assert_eq!(&got, want, "{what}: {e:?} against {e0:?}"),
        }
    }
    first.expect("the scalar tier runs").1
}

#[test]
fn contraction_nan_results_into_a_nan_free_dtype_are_the_same_everywhere() {
    let mut rng = Rng::new(0x9a1);
    for case in 0..40 {
        let (m, k, n) = (
            1 + rng.below_usize(20),
            1 + rng.below_usize(70),
            1 + rng.below_usize(20),
        );
        let a = with_nans(&mut rng, m * k, 40);
        let b = with_nans(&mut rng, k * n, 40);
        let av = ArrayView::from_slice(&a, &[m, k]).unwrap();
        let bv = ArrayView::from_slice(&b, &[k, n]).unwrap();
        let spec = tessera::ContractSpec::new(DType::F32).contracting(1, 0);
        // Into f32 (the accumulator's dtype, which holds NaN codes): NaN
        // at the same places on every tier and count, the other results
        // the same bits; a NaN's sign is the exception of §5.1.
        nan_places_everywhere(&format!("contract into f32, case {case}"), |e| {
            let mut y = vec![0f32; m * n];
            tessera::contract(
                &spec,
                &av,
                &bv,
                None,
                &mut ArrayViewMut::from_slice(&mut y, &[m, n]).unwrap(),
                e,
            )
            .unwrap();
            y
        });
        // Into e2m3fn (no NaN code): the same code on every tier and count.
        same_everywhere("contract into e2m3fn", |e| {
            let mut y = vec![0u8; m * n];
            tessera::contract(
                &spec,
                &av,
                &bv,
                None,
                &mut ArrayViewMut::contiguous(DType::E2m3fn, &[m, n], &mut y).unwrap(),
                e,
            )
            .unwrap();
            y
        });
    }
}

#[test]
fn complex_contraction_nan_parts_are_the_positive_nan() {
    let mut rng = Rng::new(0x9a2);
    let (m, k, n) = (5, 33, 7);
    let re = with_nans(&mut rng, 2 * m * k, 30);
    let a: Vec<Complex<f32>> = re.chunks(2).map(|p| Complex::new(p[0], p[1])).collect();
    let im = with_nans(&mut rng, 2 * k * n, 30);
    let b: Vec<Complex<f32>> = im.chunks(2).map(|p| Complex::new(p[0], p[1])).collect();
    let av = ArrayView::from_slice(&a, &[m, k]).unwrap();
    let bv = ArrayView::from_slice(&b, &[k, n]).unwrap();
    let spec = tessera::ContractSpec::new(DType::C64).contracting(1, 0);
    same_everywhere("complex contract", |e| {
        let mut y = vec![Complex::new(0f32, 0.0); m * n];
        tessera::contract(
            &spec,
            &av,
            &bv,
            None,
            &mut ArrayViewMut::from_slice(&mut y, &[m, n]).unwrap(),
            e,
        )
        .unwrap();
        for z in &y {
            for p in [z.re, z.im] {
                assert!(!p.is_nan() || p.to_bits() == 0x7fc0_0000, "{z:?} on {e:?}");
            }
        }
        tessera::array::as_bytes(&y).to_vec()
    });
}

#[test]
fn fold_nan_results_are_the_positive_nan() {
    use tessera::assembly::{fold, AxisPad, Pad, Window};
    let mut rng = Rng::new(0x9a3);
    let n = 40;
    // A window of 5 taps along the only axis, padded 2 each side: every
    // element of dst is the sum of up to 5 taps of x.
    let pad = Pad {
        axes: vec![AxisPad {
            before: 2,
            after: 2,
            window: Some(Window::new(5)),
        }],
    };
    let shape = pad.load_shape(&[n]).unwrap();
    let count: usize = shape.iter().product();
    for _ in 0..20 {
        let x = with_nans(&mut rng, count, 12);
        let xv = ArrayView::from_slice(&x, &shape).unwrap();
        same_everywhere("fold", |e| {
            let mut y = vec![0f32; n];
            fold(
                &pad,
                &xv,
                &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
                e,
            )
            .unwrap();
            assert!(
                y.iter().all(|v| !v.is_nan() || v.to_bits() == 0x7fc0_0000),
                "{y:?}"
            );
            tessera::array::as_bytes(&y).to_vec()
        });
    }
}

/// A map program whose float results round into e2m3fn (a cast node into a
/// dtype without a NaN code): the codes are the same on every tier and
/// thread count, NaN operands of both signs included.
#[test]
fn map_casts_of_nan_into_a_nan_free_dtype_are_the_same_everywhere() {
    let mut rng = Rng::new(0x9a4);
    let p = tessera::Program::parse(
        "t = x0 + x1; u = x0 * x1 - x1; y0 = cast<e2m3fn>(t); y1 = cast<e2m3fn>(u); y2 = cast<e2m3fn>(fma(x0, x1, t))",
        &[DType::F32, DType::F32],
    )
    .unwrap();
    let n = 70_000;
    let a = with_nans(&mut rng, n, 6);
    let b = with_nans(&mut rng, n, 6);
    let ins = [
        ArrayView::from_slice(&a, &[n]).unwrap(),
        ArrayView::from_slice(&b, &[n]).unwrap(),
    ];
    same_everywhere("map", |e| {
        let (mut y0, mut y1, mut y2) = (vec![0u8; n], vec![0u8; n], vec![0u8; n]);
        tessera::map(
            &p,
            &ins,
            &mut [
                ArrayViewMut::contiguous(DType::E2m3fn, &[n], &mut y0).unwrap(),
                ArrayViewMut::contiguous(DType::E2m3fn, &[n], &mut y1).unwrap(),
                ArrayViewMut::contiguous(DType::E2m3fn, &[n], &mut y2).unwrap(),
            ],
            e,
        )
        .unwrap();
        [y0, y1, y2].concat()
    });
}

/// Elementwise kinds that make a NaN from e2m3fn operands (no NaN code: the
/// NaN comes from an invalid operation in the f32 carrier) store the same
/// code on every tier and thread count.
#[test]
fn elementwise_nan_into_a_nan_free_dtype_is_the_same_everywhere() {
    // Every e2m3fn code against every other (64 × 64), so each kind meets
    // its invalid cases: 0/0, sqrt and log of negatives.
    let a: Vec<u8> = (0..64 * 64).map(|i| (i / 64) as u8).collect();
    let b: Vec<u8> = (0..64 * 64).map(|i| (i % 64) as u8).collect();
    let av = ArrayView::contiguous(DType::E2m3fn, &[64 * 64], &a).unwrap();
    let bv = ArrayView::contiguous(DType::E2m3fn, &[64 * 64], &b).unwrap();
    for kind in [tessera::Kind::Div, tessera::Kind::Sqrt, tessera::Kind::Log] {
        let unary = kind != tessera::Kind::Div;
        same_everywhere(&format!("{kind:?}"), |e| {
            let mut y = vec![0u8; 64 * 64];
            let ins = if unary {
                vec![av.clone()]
            } else {
                vec![av.clone(), bv.clone()]
            };
            tessera::elementwise(
                kind,
                &ins,
                &mut ArrayViewMut::contiguous(DType::E2m3fn, &[64 * 64], &mut y).unwrap(),
                e,
            )
            .unwrap();
            y
        });
    }
}

/// polyval from f32 operands with NaNs (and NaN coefficients) into e2m3fn.
#[test]
fn polyval_nan_into_a_nan_free_dtype_is_the_same_everywhere() {
    let mut rng = Rng::new(0x9a5);
    let n = 5000;
    let x = with_nans(&mut rng, n, 8);
    let xv = ArrayView::from_slice(&x, &[n]).unwrap();
    for coeffs in [
        vec![1.5, -2.0, 0.25],
        vec![f64::NAN, 1.0],
        vec![-f64::NAN, 3.0, 1.0],
    ] {
        same_everywhere(&format!("polyval {coeffs:?}"), |e| {
            let mut y = vec![0u8; n];
            tessera::poly::polyval(
                &coeffs,
                &xv,
                &mut ArrayViewMut::contiguous(DType::E2m3fn, &[n], &mut y).unwrap(),
                e,
            )
            .unwrap();
            y
        });
    }
}

/// The transforms write complex64/complex128, which have NaN codes, so a
/// NaN's sign never becomes a visible difference: the rule asks that the
/// same elements be NaN on every tier and thread count (and the finite ones
/// the same bits).
#[test]
fn fft_nan_results_are_nan_at_the_same_places_everywhere() {
    let mut rng = Rng::new(0x9a6);
    for n in [16usize, 60, 97, 1024] {
        let re = with_nans(&mut rng, 2 * n * 3, 200);
        let x: Vec<Complex<f32>> = re.chunks(2).map(|p| Complex::new(p[0], p[1])).collect();
        let xv = ArrayView::from_slice(&x, &[3, n]).unwrap();
        nan_places_everywhere(&format!("c2c n {n}"), |e| {
            let mut y = vec![Complex::new(0f32, 0.0); 3 * n];
            tessera::fft::c2c(
                &[1],
                tessera::fft::Direction::Forward,
                tessera::fft::Norm::None,
                &xv,
                &mut ArrayViewMut::from_slice(&mut y, &[3, n]).unwrap(),
                e,
            )
            .unwrap();
            y.iter().flat_map(|z| [z.re, z.im]).collect()
        });
    }
}
