//! The doubling (Hillis–Steele) scans against an independent level-by-level
//! model, bit for bit, on every tier, at 1, 2 and 7 threads, contiguous and
//! strided; and the stable population forms of `map::forms` against binary64
//! evaluation rounded once.

mod common;

use tessera::map::forms;
use tessera::{scan, typed, ArrayView, ArrayViewMut, DType, Exec, ScanOp};
use tessera_testkit::rng::Rng;

/// The model: every level as a new vector, level ℓ from level ℓ − 1.
fn model<F: Copy>(x: &[F], op: impl Fn(F, F) -> F) -> Vec<F> {
    let mut level = x.to_vec();
    let mut d = 1;
    while d < x.len() {
        let prev = level.clone();
        for i in 0..x.len() {
            level[i] = if i >= d {
                op(prev[i - d], prev[i])
            } else {
                prev[i]
            };
        }
        d *= 2;
    }
    level
}

#[test]
fn doubling_scans_match_the_level_model() {
    let mut rng = Rng::for_label("scan/doubling", 1);
    for &n in &[1usize, 2, 3, 7, 16, 17, 100, 1000, 4097] {
        let rows = 3;
        let x: Vec<f32> = (0..rows * n)
            .map(|_| (rng.unit() as f32 - 0.5) * 3.0)
            .collect();
        let xd: Vec<f64> = (0..rows * n).map(|_| (rng.unit() - 0.5) * 1e3).collect();
        for (op, prod) in [(ScanOp::SumDoubling, false), (ScanOp::ProdDoubling, true)] {
            let mut want = Vec::new();
            let mut want_d = Vec::new();
            for r in 0..rows {
                let row = &x[r * n..(r + 1) * n];
                let rd = &xd[r * n..(r + 1) * n];
                if prod {
                    want.extend(model(row, |a, b| a * b));
                    want_d.extend(model(rd, |a, b| a * b));
                } else {
                    want.extend(model(row, |a, b| a + b));
                    want_d.extend(model(rd, |a, b| a + b));
                }
            }
            for tier in common::tiers() {
                for t in [1, 2, 7] {
                    let exec = Exec::on(tier).threads(t);
                    let mut got = vec![0f32; rows * n];
                    scan(
                        op,
                        1,
                        &ArrayView::from_slice(&x, &[rows, n]).unwrap(),
                        None,
                        &mut ArrayViewMut::from_slice(&mut got, &[rows, n]).unwrap(),
                        &exec,
                    )
                    .unwrap();
                    assert!(
                        got.iter()
                            .zip(&want)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{op:?} f32 n {n} {tier:?} {t}"
                    );
                    // f64, along axis 0 of the transposed layout.
                    let mut got = vec![0f64; rows * n];
                    let xt = ArrayView::from_slice_strided(&xd, &[n, rows], &[1, n as isize], 0)
                        .unwrap();
                    let mut dt =
                        ArrayViewMut::from_slice_strided(&mut got, &[n, rows], &[1, n as isize], 0)
                            .unwrap();
                    scan(op, 0, &xt, None, &mut dt, &exec).unwrap();
                    assert!(
                        got.iter()
                            .zip(&want_d)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{op:?} f64 n {n} {tier:?} {t}"
                    );
                }
            }
        }
    }
}

#[test]
fn doubling_scans_refuse_what_they_do_not_define() {
    let x = [1i32, 2, 3];
    let mut d = [0i32; 3];
    let r = scan(
        ScanOp::SumDoubling,
        0,
        &ArrayView::from_slice(&x, &[3]).unwrap(),
        None,
        &mut ArrayViewMut::from_slice(&mut d, &[3]).unwrap(),
        &Exec::SEQ,
    );
    assert!(r.is_err(), "integer terms");
    assert_eq!(d, [0, 0, 0]);
}

/// f32 results of the stable forms within their stated relative bounds (6u
/// and 4u) of binary64 evaluation (far more accurate than that).
#[test]
fn stable_population_forms_against_binary64() {
    let mut rng = Rng::for_label("forms", 2);
    let n = 20_000;
    let p: Vec<f32> = (0..n).map(|_| rng.unit() as f32).collect();
    let x: Vec<f32> = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                (rng.unit() * 1e-6) as f32
            } else {
                (rng.unit() * 30.0) as f32
            }
        })
        .collect();
    let gain = forms::hit_probability(DType::F32).unwrap();
    let surv = forms::survival(DType::F32).unwrap();
    let u = 2f64.powi(-24);
    let (mut worst_g, mut worst_s) = (0f64, 0f64);
    for tier in common::tiers() {
        let exec = Exec::on(tier);
        let mut g = vec![0f32; n];
        let mut s = vec![0f32; n];
        typed::map(&gain, &[&p, &x], &mut [&mut g], &exec).unwrap();
        typed::map(&surv, &[&p, &x], &mut [&mut s], &exec).unwrap();
        for i in 0..n {
            let (pp, xx) = (p[i] as f64, x[i] as f64);
            let want_g = pp + (1.0 - pp) * (-(-xx).exp_m1());
            let want_s = (1.0 - pp) * (-xx).exp();
            let rel = |got: f32, want: f64| {
                if want == 0.0 {
                    (got as f64).abs()
                } else {
                    ((got as f64 - want) / want).abs()
                }
            };
            let (eg, es) = (rel(g[i], want_g), rel(s[i], want_s));
            worst_g = worst_g.max(eg / u);
            worst_s = worst_s.max(es / u);
            assert!(
                eg <= 6.0 * u,
                "hit probability p {pp} x {xx}: {} vs {want_g}",
                g[i]
            );
            assert!(
                es <= 4.0 * u || want_s < 1e-37,
                "survival p {pp} x {xx}: {} vs {want_s}",
                s[i]
            );
        }
    }
    eprintln!("worst relative errors: hit probability {worst_g:.2} u, survival {worst_s:.2} u");
}
