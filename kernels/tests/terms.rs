//! Combinations of terms and their exponentials (`tessera::terms`) against
//! 300-bit evaluations of the same f64 terms and weights (astro-float):
//! the combination within u·|x| + (2 + 8T)·2^-48·Σ|w·T| per part, the
//! exponential within 8u + 2^-45·(|Im x| + |Re x|) relative for phases up
//! to 10^7 rad, the phasor's modulus kept at 1; the φ functions within
//! 2^-22 of 300-bit series across the join; the same bits on every tier and
//! thread count; refusals before any write.

mod common;

use astro_float::{BigFloat, Consts, RoundingMode};
use num_complex::Complex;
use tessera::terms::TermsPlan;
use tessera::{ArrayView, ArrayViewMut, Exec};
use tessera_testkit::rng::Rng;

const P: usize = 300;
const RM: RoundingMode = RoundingMode::ToEven;

fn big(x: f64) -> BigFloat {
    BigFloat::from_f64(x, P)
}

fn to_f64(b: &BigFloat) -> f64 {
    format!("{b}").parse().unwrap_or(f64::NAN)
}

struct Case {
    t: usize,
    n: usize,
    terms: Vec<Complex<f64>>,
    weights: Vec<f64>,
}

fn case(rng: &mut Rng, t: usize, n: usize, phase: f64) -> Case {
    let terms = (0..t * n)
        .map(|_| Complex::new((rng.unit() - 0.5) * 4.0, (rng.unit() - 0.5) * 2.0 * phase))
        .collect();
    let weights = (0..t)
        .map(|_| (rng.unit() - 0.5) * 2.0 / t as f64)
        .collect();
    Case {
        t,
        n,
        terms,
        weights,
    }
}

/// The exact combination at point i (real, imaginary) and Σ|w·T| per part.
fn exact(c: &Case, i: usize) -> (BigFloat, BigFloat, f64, f64) {
    let (mut re, mut im) = (big(0.0), big(0.0));
    let (mut ar, mut ai) = (0.0, 0.0);
    for t in 0..c.t {
        let v = c.terms[t * c.n + i];
        let w = big(c.weights[t]);
        re = re.add(&w.mul(&big(v.re), P, RM), P, RM);
        im = im.add(&w.mul(&big(v.im), P, RM), P, RM);
        ar += (c.weights[t] * v.re).abs();
        ai += (c.weights[t] * v.im).abs();
    }
    (re, im, ar, ai)
}

fn run(plan: &TermsPlan, c: &Case, exp: Option<f64>, exec: &Exec) -> Vec<Complex<f32>> {
    let mut out = vec![Complex::<f32>::default(); c.n];
    let mut v = ArrayViewMut::from_slice(&mut out, &[c.n]).unwrap();
    match exp {
        Some(s) => plan.exponential(&c.weights, s, &mut v, exec).unwrap(),
        None => plan.combine(&c.weights, &mut v, exec).unwrap(),
    }
    out
}

#[test]
fn combinations_and_exponentials_within_their_bounds() {
    let mut rng = Rng::for_label("terms", 1);
    let mut cc = Consts::new().unwrap();
    let u = 2f64.powi(-24);
    let (mut worst_c, mut worst_e) = (0f64, 0f64);
    for &(t, n, phase) in &[
        (1usize, 50usize, 1.0),
        (6, 200, 100.0),
        (12, 200, 3e6),
        (4, 300, 2e7),
    ] {
        let c = case(&mut rng, t, n, phase);
        let plan = TermsPlan::upload(&ArrayView::from_slice(&c.terms, &[t, n]).unwrap()).unwrap();
        let comb = run(&plan, &c, None, &Exec::SEQ);
        let fwd = run(&plan, &c, Some(1.0), &Exec::SEQ);
        let back = run(&plan, &c, Some(-1.0), &Exec::SEQ);
        for i in 0..n {
            let (re, im, ar, ai) = exact(&c, i);
            let slack = (2.0 + 8.0 * t as f64) * 2f64.powi(-48);
            for (got, want, abs) in [(comb[i].re, &re, ar), (comb[i].im, &im, ai)] {
                let err = to_f64(&big(got as f64).sub(want, P, RM).abs());
                let allowed = u * to_f64(want).abs() + slack * abs;
                worst_c = worst_c.max(err / allowed);
                assert!(
                    err <= allowed,
                    "combination t {t} point {i}: {err:e} > {allowed:e}"
                );
            }
            for (s, got) in [(1.0, fwd[i]), (-1.0, back[i])] {
                let m = big(s).mul(&re, P, RM).exp(P, RM, &mut cc);
                let a = big(s).mul(&im, P, RM);
                let (wr, wi) = (
                    m.mul(&a.cos(P, RM, &mut cc), P, RM),
                    m.mul(&a.sin(P, RM, &mut cc), P, RM),
                );
                let dr = big(got.re as f64).sub(&wr, P, RM);
                let di = big(got.im as f64).sub(&wi, P, RM);
                let err = to_f64(
                    &dr.mul(&dr, P, RM)
                        .add(&di.mul(&di, P, RM), P, RM)
                        .sqrt(P, RM),
                );
                let modulus = to_f64(&m);
                let (xr, xi) = (to_f64(&re).abs(), to_f64(&im).abs());
                let allowed = (8.0 * u + 2f64.powi(-45) * (xi + xr)) * modulus;
                worst_e = worst_e.max(err / allowed);
                assert!(
                    err <= allowed,
                    "exp sign {s} t {t} point {i} phase {xi:e}: {err:e} > {allowed:e}"
                );
            }
        }
        for tier in common::tiers() {
            for th in [1, 2, 7] {
                let e = Exec::on(tier).threads(th);
                for (want, exp) in [(&comb, None), (&fwd, Some(1.0)), (&back, Some(-1.0))] {
                    let got = run(&plan, &c, exp, &e);
                    assert!(
                        got.iter()
                            .zip(want.iter())
                            .all(|(a, b)| a.re.to_bits() == b.re.to_bits()
                                && a.im.to_bits() == b.im.to_bits()),
                        "{tier:?} {th}"
                    );
                }
            }
        }
    }
    eprintln!("worst: combination {worst_c:.3}, exponential {worst_e:.3} of their bounds");
}

#[test]
fn refusals_write_nothing() {
    let terms = vec![Complex::new(1.0f64, 2.0); 6];
    let plan = TermsPlan::upload(&ArrayView::from_slice(&terms, &[2, 3]).unwrap()).unwrap();
    let mut out = vec![Complex::new(9.0f32, 9.0); 3];
    let mut v = ArrayViewMut::from_slice(&mut out, &[3]).unwrap();
    assert!(
        plan.combine(&[1.0], &mut v, &Exec::SEQ).is_err(),
        "one weight for two terms"
    );
    assert!(
        plan.combine(&[1.0, f64::NAN], &mut v, &Exec::SEQ).is_err(),
        "a NaN weight"
    );
    assert!(
        plan.exponential(&[1.0, 1.0], 2.0, &mut v, &Exec::SEQ)
            .is_err(),
        "a sign of 2"
    );
    assert!(out.iter().all(|c| c.re == 9.0 && c.im == 9.0));
    let mut short = vec![Complex::<f32>::default(); 2];
    assert!(plan
        .combine(
            &[1.0, 1.0],
            &mut ArrayViewMut::from_slice(&mut short, &[2]).unwrap(),
            &Exec::SEQ
        )
        .is_err());
    let bad = vec![Complex::new(f64::INFINITY, 0.0); 3];
    assert!(TermsPlan::upload(&ArrayView::from_slice(&bad, &[1, 3]).unwrap()).is_err());
    let ints = [1i32, 2, 3];
    assert!(TermsPlan::upload(&ArrayView::from_slice(&ints, &[1, 3]).unwrap()).is_err());
    // Real terms combine into f32.
    let real = [1.0f64, 2.0, 3.0, 4.0];
    let plan = TermsPlan::upload(&ArrayView::from_slice(&real, &[2, 2]).unwrap()).unwrap();
    let mut y = [0f32; 2];
    plan.combine(
        &[0.5, 0.25],
        &mut ArrayViewMut::from_slice(&mut y, &[2]).unwrap(),
        &Exec::SEQ,
    )
    .unwrap();
    assert_eq!(y, [1.25, 2.0]);
}

/// Σ_m x^m/(m + k)! at 300 bits, x complex (re, im).
fn phi_ref(re: f64, im: f64, k: usize) -> (BigFloat, BigFloat) {
    let (xr, xi) = (big(re), big(im));
    // term = x^m / (m + k)!, starting at 1/k!.
    let mut f = big(1.0);
    for j in 2..=k {
        f = f.mul(&big(j as f64), P, RM);
    }
    let (mut tr, mut ti) = (big(1.0).div(&f, P, RM), big(0.0));
    let (mut sr, mut si) = (tr.clone(), ti.clone());
    for m in 1..400 {
        let d = big((m + k) as f64);
        let nr = tr
            .mul(&xr, P, RM)
            .sub(&ti.mul(&xi, P, RM), P, RM)
            .div(&d, P, RM);
        let ni = tr
            .mul(&xi, P, RM)
            .add(&ti.mul(&xr, P, RM), P, RM)
            .div(&d, P, RM);
        tr = nr;
        ti = ni;
        sr = sr.add(&tr, P, RM);
        si = si.add(&ti, P, RM);
    }
    (sr, si)
}

#[test]
fn phi_functions_within_their_bound() {
    let mut rng = Rng::for_label("terms/phi", 3);
    let mut xs: Vec<Complex<f64>> = vec![
        Complex::new(0.0, 0.0),
        Complex::new(1e-7, -2e-7),
        Complex::new(1.9, 0.3),
        Complex::new(2.1, -0.3),
        Complex::new(-30.0, 5.0),
        Complex::new(0.0, 39.0),
        Complex::new(-0.5, 0.0),
    ];
    for _ in 0..40 {
        let r = rng.unit() * 40.0 * rng.unit();
        let a = rng.unit() * std::f64::consts::TAU;
        xs.push(Complex::new(r * a.cos(), r * a.sin()));
    }
    let n = xs.len();
    let count = tessera::terms::MAX_PHI_ORDER;
    let plan = TermsPlan::upload(&ArrayView::from_slice(&xs, &[1, n]).unwrap()).unwrap();
    let run_phi = |exec: &Exec| {
        let mut flow = vec![Complex::<f32>::default(); n];
        let mut mom = vec![Complex::<f32>::default(); count * n];
        plan.phi(
            &[1.0],
            count,
            &mut ArrayViewMut::from_slice(&mut flow, &[n]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut mom, &[count, n]).unwrap(),
            exec,
        )
        .unwrap();
        (flow, mom)
    };
    let (flow, mom) = run_phi(&Exec::SEQ);
    let mut worst = 0f64;
    for (i, x) in xs.iter().enumerate() {
        // The uploaded x: the f64 value split into a pair (within 2^-48).
        let x = Complex::new(
            x.re as f32 as f64 + (x.re - x.re as f32 as f64) as f32 as f64,
            x.im as f32 as f64 + (x.im - x.im as f32 as f64) as f32 as f64,
        );
        let mut fact = 1.0;
        for k in 0..=count {
            let got = if k == 0 {
                flow[i]
            } else {
                mom[(k - 1) * n + i]
            };
            let (wr, wi) = phi_ref(x.re, x.im, k);
            // Output k ≥ 1 is (k − 1)!·φ_k.
            if k >= 2 {
                fact *= (k - 1) as f64;
            }
            let (wr, wi) = (wr.mul(&big(fact), P, RM), wi.mul(&big(fact), P, RM));
            let dr = big(got.re as f64).sub(&wr, P, RM);
            let di = big(got.im as f64).sub(&wi, P, RM);
            let err = to_f64(
                &dr.mul(&dr, P, RM)
                    .add(&di.mul(&di, P, RM), P, RM)
                    .sqrt(P, RM),
            );
            let mag = to_f64(
                &wr.mul(&wr, P, RM)
                    .add(&wi.mul(&wi, P, RM), P, RM)
                    .sqrt(P, RM),
            );
            let rel = err / mag;
            worst = worst.max(rel);
            assert!(
                rel <= 2f64.powi(-22),
                "x {x} order {k}: relative error {rel:e}"
            );
        }
    }
    eprintln!(
        "phi functions: worst relative error {worst:e} (2^{:.1})",
        worst.log2()
    );
    for tier in common::tiers() {
        for th in [1, 2, 7] {
            let (f2, m2) = run_phi(&Exec::on(tier).threads(th));
            assert!(
                f2.iter()
                    .zip(&flow)
                    .all(|(a, b)| a.re.to_bits() == b.re.to_bits()
                        && a.im.to_bits() == b.im.to_bits())
            );
            assert!(
                m2.iter()
                    .zip(&mom)
                    .all(|(a, b)| a.re.to_bits() == b.re.to_bits()
                        && a.im.to_bits() == b.im.to_bits())
            );
        }
    }
    // More orders than the maximum: refused.
    let mut flow = vec![Complex::<f32>::default(); n];
    let mut mom = vec![Complex::<f32>::default(); 9 * n];
    assert!(plan
        .phi(
            &[1.0],
            9,
            &mut ArrayViewMut::from_slice(&mut flow, &[n]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut mom, &[9, n]).unwrap(),
            &Exec::SEQ
        )
        .is_err());
}
