//! The run-time probes: every family passes on this build and CPU (the table
//! is printed: the margins are reported in the closing notes), and a
//! deliberately wrong path is refused: a product whose operands are rounded
//! to 10 mantissa bits (as TF32 does), a transform whose twiddles carry an
//! rounded to 8-bit mantissas (the bound 512·eps·⌈log₂ n⌉ discriminates
//! errors above about 5·10⁻⁴: a twiddle wrong in binary32's last bits stays
//! far below it and is not what the transform probe can see).

mod common;

use num_complex::Complex;
use tessera::probe::{
    fft_bound, fft_error_f32, gemm_error_f32, probe, ProbeReport, ProbeRow, GEMM_BOUND_32,
};
use tessera::{Error, Exec, Tier};

#[test]
fn every_family_passes_here() {
    common::tiers();
    let report = probe(&Exec::default().threads(2)).unwrap();
    eprintln!("{}", report.table());
    assert!(report.rows.len() > 40);
    report.check().unwrap();
}

/// Round an f32 to 10 mantissa bits (TF32's), to nearest even.
fn tf32(x: f32) -> f32 {
    round_to(x, 10)
}

/// Round an f32 to `bits` mantissa bits, to nearest even.
fn round_to(x: f32, bits: u32) -> f32 {
    let b = x.to_bits();
    let keep = 23 - bits;
    let half = 1u32 << (keep - 1);
    let rounded = (b + half - 1 + ((b >> keep) & 1)) & !((1 << keep) - 1);
    f32::from_bits(rounded)
}

#[test]
fn a_tf32_product_is_refused() {
    let (m, k, n) = (64, 256, 48);
    let product = |a: &[f32], b: &[f32]| -> tessera::Result<Vec<f32>> {
        let mut c = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0f32;
                for l in 0..k {
                    s += tf32(a[i * k + l]) * tf32(b[l * n + j]);
                }
                c[i * n + j] = s;
            }
        }
        Ok(c)
    };
    let err = gemm_error_f32(m, k, n, &product).unwrap();
    // The same loop in binary32 passes (the bound discriminates).
    let plain = |a: &[f32], b: &[f32]| -> tessera::Result<Vec<f32>> {
        let mut c = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
            }
        }
        Ok(c)
    };
    let ok = gemm_error_f32(m, k, n, &plain).unwrap();
    eprintln!("TF32-like product: {err:.3e}; binary32: {ok:.3e}; bound {GEMM_BOUND_32:.3e}");
    assert!(
        ok * 4.0 < GEMM_BOUND_32,
        "binary32 within a quarter of the bound"
    );
    assert!(
        err > 4.0 * GEMM_BOUND_32,
        "TF32 beyond four times the bound"
    );
    let report = ProbeReport {
        rows: vec![ProbeRow {
            family: "gemm f32 injected".into(),
            tier: Tier::Scalar,
            bound: GEMM_BOUND_32,
            measured: err,
        }],
    };
    match report.check() {
        Err(Error::Probe { family, .. }) => assert!(family.contains("injected")),
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_transform_with_wrong_twiddles_is_refused() {
    let n = 256;
    // A direct DFT whose twiddles are rounded to 8-bit mantissas.
    let dft = |x: &[Complex<f32>]| -> tessera::Result<Vec<Complex<f32>>> {
        Ok((0..n)
            .map(|k| {
                let mut s = Complex::new(0f32, 0f32);
                for (j, v) in x.iter().enumerate() {
                    let t = -2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                    let w = Complex::new(round_to(t.cos() as f32, 8), round_to(t.sin() as f32, 8));
                    s += v * w;
                }
                s
            })
            .collect())
    };
    let err = fft_error_f32(n, &dft).unwrap();
    let bound = fft_bound(2f64.powi(-23), n);
    eprintln!("wrong twiddles: {err:.3e}; bound {bound:.3e}");
    assert!(err > bound);
    let report = ProbeReport {
        rows: vec![ProbeRow {
            family: "fft injected".into(),
            tier: Tier::Scalar,
            bound,
            measured: err,
        }],
    };
    assert!(matches!(report.check(), Err(Error::Probe { .. })));
}
