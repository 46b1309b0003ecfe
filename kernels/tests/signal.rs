//! `convolve` and `correlate` against a naive model of their definition
//! (exact on integers and on floats whose sums are exact, within the
//! contraction's stated bound elsewhere), in every mode, layout, batch,
//! tier and thread count, with their refusals before any write.

mod common;

use common::*;
use num_complex::Complex;
use tessera::signal::convolve_shape;
use tessera::{convolve, correlate, ArrayView, ArrayViewMut, ConvMode, DType, Error, Exec};
use tessera_testkit::rng::Rng;

const MODES: [ConvMode; 3] = [ConvMode::Full, ConvMode::Same, ConvMode::Valid];

/// The naive definition in f64 (exact here for integer values below 2^26):
/// full output i is Σ_t xp[i + t]·k'[t], xp the signal with m − 1 zeros on
/// both sides, k' the kernel (reversed for a convolution); same keeps
/// outputs ⌊(m − 1)/2⌋ … that + n − 1, valid m − 1 … n − 1.
fn model(x: &[f64], k: &[f64], mode: ConvMode, reverse: bool) -> Vec<f64> {
    let (n, m) = (x.len(), k.len());
    let tap = |t: usize| if reverse { k[m - 1 - t] } else { k[t] };
    let full: Vec<f64> = (0..n + m - 1)
        .map(|i| {
            (0..m)
                .map(|t| {
                    let j = i + t;
                    if j < m - 1 || j - (m - 1) >= n {
                        0.0
                    } else {
                        x[j - (m - 1)] * tap(t)
                    }
                })
                .sum()
        })
        .collect();
    match mode {
        ConvMode::Full => full,
        ConvMode::Same => full[(m - 1) / 2..(m - 1) / 2 + n].to_vec(),
        ConvMode::Valid => full[m - 1..n].to_vec(),
    }
}

fn execs() -> Vec<Exec> {
    tiers()
        .into_iter()
        .flat_map(|t| [Exec::on(t).threads(1), Exec::on(t).threads(3)])
        .collect()
}

#[test]
fn numpy_and_scipy_reference_values() {
    // numpy.convolve([1, 2, 3], [0, 1, 0.5], mode) and numpy.correlate.
    let x = [1.0f64, 2.0, 3.0];
    let k = [0.0f64, 1.0, 0.5];
    let cases: [(ConvMode, bool, &[f64]); 6] = [
        (ConvMode::Full, true, &[0.0, 1.0, 2.5, 4.0, 1.5]),
        (ConvMode::Same, true, &[1.0, 2.5, 4.0]),
        (ConvMode::Valid, true, &[2.5]),
        (ConvMode::Full, false, &[0.5, 2.0, 3.5, 3.0, 0.0]),
        (ConvMode::Same, false, &[2.0, 3.5, 3.0]),
        (ConvMode::Valid, false, &[3.5]),
    ];
    for (mode, conv, want) in cases {
        let mut y = vec![f64::NAN; want.len()];
        let xv = ArrayView::from_slice(&x, &[3]).unwrap();
        let kv = ArrayView::from_slice(&k, &[3]).unwrap();
        let mut yv = ArrayViewMut::from_slice(&mut y, &[want.len()]).unwrap();
        let f = if conv { convolve } else { correlate };
        f(&xv, &kv, mode, DType::F64, &mut yv, &Exec::default()).unwrap();
        assert_eq!(y, want, "{mode:?} convolve={conv}");
    }
}

#[test]
fn integers_are_exact_in_every_mode_layout_and_batch() {
    let mut rng = Rng::new(0x5167_0001);
    for case in 0..40 {
        let n = 1 + rng.below_usize(70);
        let m = 1 + rng.below_usize(if case % 4 == 0 { 90 } else { 12 });
        let batch = 1 + rng.below_usize(3);
        let x: Vec<i32> = (0..batch * n)
            .map(|_| rng.below(2001) as i32 - 1000)
            .collect();
        let k: Vec<i32> = (0..m).map(|_| rng.below(201) as i32 - 100).collect();
        let kf: Vec<f64> = k.iter().map(|&v| v as f64).collect();
        for mode in MODES {
            let Ok(shape) = convolve_shape(&[batch, n], &[m], mode) else {
                assert!(mode == ConvMode::Valid && m > n);
                continue;
            };
            let len = shape[1];
            for reverse in [true, false] {
                let mut want = Vec::new();
                for b in 0..batch {
                    let xf: Vec<f64> = x[b * n..(b + 1) * n].iter().map(|&v| v as f64).collect();
                    want.extend(model(&xf, &kf, mode, reverse).into_iter().map(|v| v as i64));
                }
                for exec in execs() {
                    // The signal transposed in memory (column-major) and the
                    // kernel every other element of a longer buffer.
                    let mut xt = vec![0i32; batch * n];
                    for b in 0..batch {
                        for i in 0..n {
                            xt[i * batch + b] = x[b * n + i];
                        }
                    }
                    let mut k2 = vec![7i32; 2 * m];
                    for t in 0..m {
                        k2[2 * t] = k[t];
                    }
                    let layouts: [(ArrayView<'_>, ArrayView<'_>); 2] = [
                        (
                            ArrayView::from_slice(&x, &[batch, n]).unwrap(),
                            ArrayView::from_slice(&k, &[m]).unwrap(),
                        ),
                        (
                            ArrayView::from_slice_strided(
                                &xt,
                                &[batch, n],
                                &[1, batch as isize],
                                0,
                            )
                            .unwrap(),
                            ArrayView::from_slice_strided(&k2, &[m], &[2], 0).unwrap(),
                        ),
                    ];
                    for (xv, kv) in &layouts {
                        let mut y = vec![i64::MIN; batch * len];
                        let mut yv = ArrayViewMut::from_slice(&mut y, &[batch, len]).unwrap();
                        let f = if reverse { convolve } else { correlate };
                        f(xv, kv, mode, DType::I64, &mut yv, &exec).unwrap();
                        assert_eq!(y, want, "n {n} m {m} batch {batch} {mode:?} conv={reverse}");
                    }
                }
            }
        }
    }
}

#[test]
fn floats_give_their_bits_whatever_the_layout_and_stay_within_the_bound() {
    let mut rng = Rng::new(0x5167_0002);
    let (n, m, batch) = (300, 17, 3);
    let x = grid_f32s(&mut rng, batch * n);
    let k = grid_f32s(&mut rng, m);
    for mode in MODES {
        let len = convolve_shape(&[batch, n], &[m], mode).unwrap()[1];
        let run = |xv: &ArrayView<'_>, exec: &Exec| -> Vec<f32> {
            let kv = ArrayView::from_slice(&k, &[m]).unwrap();
            let mut y = vec![f32::NAN; batch * len];
            let mut yv = ArrayViewMut::from_slice(&mut y, &[batch, len]).unwrap();
            convolve(xv, &kv, mode, DType::F32, &mut yv, exec).unwrap();
            y
        };
        let reference = run(
            &ArrayView::from_slice(&x, &[batch, n]).unwrap(),
            &Exec::on(tessera::Tier::ALL[0]).threads(1),
        );
        // Each row alone, and the rows reversed in memory, give the same bits.
        let mut xr = x.clone();
        xr.reverse();
        for exec in execs() {
            let whole = run(&ArrayView::from_slice(&x, &[batch, n]).unwrap(), &exec);
            assert_eq!(bits_of(&whole), bits_of(&reference), "{mode:?} {exec:?}");
            let rev = ArrayView::from_slice_strided(
                &xr,
                &[batch, n],
                &[-(n as isize), -1],
                batch * n - 1,
            )
            .unwrap();
            assert_eq!(
                bits_of(&run(&rev, &exec)),
                bits_of(&reference),
                "{mode:?} reversed"
            );
        }
        for b in 0..batch {
            let row = &x[b * n..(b + 1) * n];
            let kv = ArrayView::from_slice(&k, &[m]).unwrap();
            let mut y = vec![f32::NAN; len];
            let mut yv = ArrayViewMut::from_slice(&mut y, &[len]).unwrap();
            let xv = ArrayView::from_slice(row, &[n]).unwrap();
            convolve(&xv, &kv, mode, DType::F32, &mut yv, &Exec::default()).unwrap();
            assert_eq!(
                bits_of(&y),
                bits_of(&reference[b * len..(b + 1) * len]),
                "row {b}"
            );
            // The bound of a dot product of m terms: γ(m + 1)·Σ|x||k|.
            let xf: Vec<f64> = row.iter().map(|&v| v as f64).collect();
            let kf: Vec<f64> = k.iter().map(|&v| v as f64).collect();
            let exact = model(&xf, &kf, mode, true);
            let abs_x: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
            let abs_k: Vec<f64> = kf.iter().map(|v| v.abs()).collect();
            let mag = model(&abs_x, &abs_k, mode, true);
            let u = 2f64.powi(-24);
            let gamma = (m as f64 + 1.0) * u / (1.0 - (m as f64 + 1.0) * u);
            for i in 0..len {
                let err = (y[i] as f64 - exact[i]).abs();
                assert!(
                    err <= gamma * mag[i] + 1e-40,
                    "{mode:?} row {b} output {i}: {err:e}"
                );
            }
        }
    }
}

#[test]
fn complex_kernels_enter_unconjugated_and_packed_signals_by_value() {
    // Complex: small integer parts, every sum exact.
    let x: Vec<Complex<f64>> = (0..9)
        .map(|i| Complex::new(i as f64, 2.0 - i as f64))
        .collect();
    let k = [Complex::new(1.0, 2.0), Complex::new(-3.0, 0.5)];
    let mut y = vec![Complex::new(f64::NAN, 0.0); 10];
    let xv = ArrayView::from_slice(&x, &[9]).unwrap();
    let kv = ArrayView::from_slice(&k, &[2]).unwrap();
    let mut yv = ArrayViewMut::from_slice(&mut y, &[10]).unwrap();
    correlate(
        &xv,
        &kv,
        ConvMode::Full,
        DType::C128,
        &mut yv,
        &Exec::default(),
    )
    .unwrap();
    for (i, v) in y.iter().enumerate() {
        let mut want = Complex::new(0.0, 0.0);
        for (t, kt) in k.iter().enumerate() {
            let j = i + t;
            if (1..10).contains(&j) {
                want += x[j - 1] * kt;
            }
        }
        assert_eq!(*v, want, "output {i}");
    }
    // i4 codes (two a byte, element 0 in the high nibble) convolve as their
    // values.
    let vals: [i8; 8] = [-8, 7, -1, 0, 3, -5, 6, 1];
    let packed: Vec<u8> = vals
        .chunks(2)
        .map(|p| ((p[0] as u8 & 0xf) << 4) | (p[1] as u8 & 0xf))
        .collect();
    let xv = ArrayView::contiguous(DType::I4, &[8], &packed).unwrap();
    let k = [2i8, -3, 1];
    let kv = ArrayView::from_slice(&k, &[3]).unwrap();
    let mut y = vec![0i32; 6];
    let mut yv = ArrayViewMut::from_slice(&mut y, &[6]).unwrap();
    convolve(
        &xv,
        &kv,
        ConvMode::Valid,
        DType::I32,
        &mut yv,
        &Exec::default(),
    )
    .unwrap();
    let xf: Vec<f64> = vals.iter().map(|&v| v as f64).collect();
    let want: Vec<i32> = model(&xf, &[2.0, -3.0, 1.0], ConvMode::Valid, true)
        .into_iter()
        .map(|v| v as i32)
        .collect();
    assert_eq!(y, want);
}

#[test]
fn refusals_come_before_any_write() {
    let x = [1.0f32; 8];
    let k = [1.0f32; 9];
    let xv = ArrayView::from_slice(&x, &[8]).unwrap();
    let long = ArrayView::from_slice(&k, &[9]).unwrap();
    let two = ArrayView::from_slice(&k[..8], &[2, 4]).unwrap();
    let empty = ArrayView::from_slice(&k[..0], &[0]).unwrap();
    let mut y = [7.0f32; 16];
    let cases: [(&ArrayView<'_>, ConvMode, usize, DType, &str); 5] = [
        (
            &long,
            ConvMode::Valid,
            1,
            DType::F32,
            "longer than the signal",
        ),
        (&two, ConvMode::Full, 11, DType::F32, "two axes"),
        (&empty, ConvMode::Full, 7, DType::F32, "empty"),
        (
            &long,
            ConvMode::Full,
            15,
            DType::F32,
            "a destination of the wrong length",
        ),
        (&long, ConvMode::Full, 16, DType::F16, "an f16 accumulator"),
    ];
    for (kv, mode, len, acc, what) in cases {
        let mut yv = ArrayViewMut::from_slice(&mut y[..len], &[len]).unwrap();
        let e = convolve(&xv, kv, mode, acc, &mut yv, &Exec::default());
        assert!(e.is_err(), "{what} accepted");
        if what.starts_with("longer") {
            assert!(matches!(e, Err(Error::Shape { .. })), "{what}: {e:?}");
        }
        assert!(y.iter().all(|&v| v == 7.0), "{what}: a write");
    }
    assert!(convolve_shape(&[], &[3], ConvMode::Full).is_err());
    assert!(convolve_shape(&[4, 0], &[3], ConvMode::Full).is_err());
    assert_eq!(
        convolve_shape(&[2, 5], &[3], ConvMode::Same).unwrap(),
        vec![2, 5]
    );
    assert_eq!(
        convolve_shape(&[5], &[8], ConvMode::Full).unwrap(),
        vec![12]
    );
}

#[test]
fn typed_and_ndarray_conveniences_give_the_view_calls_bits() {
    let mut rng = Rng::new(0x5167_0003);
    let (rows, n, m) = (3, 50, 7);
    let x = grid_f32s(&mut rng, rows * n);
    let k = grid_f32s(&mut rng, m);
    let len = n + m - 1;
    let mut want = vec![0f32; rows * len];
    {
        let xv = ArrayView::from_slice(&x, &[rows, n]).unwrap();
        let kv = ArrayView::from_slice(&k, &[m]).unwrap();
        let mut yv = ArrayViewMut::from_slice(&mut want, &[rows, len]).unwrap();
        correlate(
            &xv,
            &kv,
            ConvMode::Full,
            DType::F32,
            &mut yv,
            &Exec::default(),
        )
        .unwrap();
    }
    // One row through the slice call.
    let mut row = vec![0f32; len];
    tessera::typed::correlate(
        &x[..n],
        &k,
        ConvMode::Full,
        DType::F32,
        &mut row,
        &Exec::default(),
    )
    .unwrap();
    assert_eq!(bits_of(&row), bits_of(&want[..len]));
    #[cfg(feature = "ndarray")]
    {
        // All rows through ndarray, the signal transposed in memory.
        let xa = ndarray::Array2::from_shape_vec((rows, n), x.clone()).unwrap();
        let xt = xa.t().to_owned();
        let ka = ndarray::Array1::from_vec(k.clone());
        let mut ya = ndarray::Array2::<f32>::zeros((rows, len));
        tessera::nd::correlate(
            xt.t(),
            ka.view(),
            ConvMode::Full,
            DType::F32,
            ya.view_mut(),
            &Exec::default(),
        )
        .unwrap();
        assert_eq!(bits_of(ya.as_slice().unwrap()), bits_of(&want));
    }
    // A slice of the wrong length is refused.
    let mut short = vec![0f32; len - 1];
    assert!(tessera::typed::convolve(
        &x[..n],
        &k,
        ConvMode::Full,
        DType::F32,
        &mut short,
        &Exec::default()
    )
    .is_err());
}
