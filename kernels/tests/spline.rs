//! The log-uniform cubic spline (`tessera::spline`) against a 200-bit
//! evaluation of the same table at the same x (astro-float), within the
//! bound the module states, in exp and linear modes, f32 and f64, on every
//! tier and thread count with the same bits; refusals before any write.

mod common;

use astro_float::{BigFloat, Consts, RoundingMode};
use tessera::spline::{LogSpline, LogSplinePlan, SplineOutput};
use tessera::{ArrayView, ArrayViewMut, DType, Exec};
use tessera_testkit::rng::Rng;

const P: usize = 200;
const RM: RoundingMode = RoundingMode::ToEven;

fn big(x: f64) -> BigFloat {
    BigFloat::from_f64(x, P)
}

fn to_f64(b: &BigFloat) -> f64 {
    format!("{b}").parse().unwrap_or(f64::NAN)
}

/// A table whose coefficients are f32 values (so the f32 and f64 plans
/// hold the same spline), constant tails within half an ulp of c₃.
fn table(rng: &mut Rng, output: SplineOutput) -> LogSpline {
    let n = 40;
    let coefficients: Vec<[f64; 4]> = (0..n)
        .map(|_| {
            [
                ((rng.unit() - 0.5) * 2.0) as f32 as f64,
                ((rng.unit() - 0.5) * 4.0) as f32 as f64,
                ((rng.unit() - 0.5) * 6.0) as f32 as f64,
                ((rng.unit() - 0.5) * 20.0) as f32 as f64,
            ]
        })
        .collect();
    let constant_tails = coefficients
        .iter()
        .map(|c| {
            let c3 = c[3] as f32;
            let ulp = (f32::from_bits(c3.abs().to_bits() + 1) - c3.abs()) as f64;
            ((rng.unit() - 0.5) * ulp) as f32 as f64
        })
        .collect();
    LogSpline {
        log_e0: -3.0,
        width: 0.15,
        coefficients,
        constant_tails,
        x_min: 0.05,
        x_max: 20.0,
        below: 0.0,
        above: 7.5,
        output,
    }
}

#[test]
fn spline_within_its_bound_of_a_200_bit_evaluation() {
    let mut rng = Rng::for_label("spline", 1);
    let mut cc = Consts::new().unwrap();
    for output in [SplineOutput::Exp, SplineOutput::Linear] {
        let tab = table(&mut rng, output);
        let xs: Vec<f64> = (0..4000)
            .map(|_| (-2.99 + rng.unit() * 5.98).exp())
            .collect();
        for dtype in [DType::F32, DType::F64] {
            let plan = LogSplinePlan::new(dtype, &tab).unwrap();
            let u = if dtype == DType::F32 {
                2f64.powi(-24)
            } else {
                2f64.powi(-53)
            };
            let xq: Vec<f64> = if dtype == DType::F32 {
                xs.iter().map(|&x| x as f32 as f64).collect()
            } else {
                xs.clone()
            };
            let got = eval(&plan, dtype, &xq, &Exec::SEQ);
            let mut worst = 0f64;
            for (i, &x) in xq.iter().enumerate() {
                // The interval by exact arithmetic; points within 1e-6 of a
                // knot are skipped (the interval choice may differ there).
                let pos = (x.ln() - tab.log_e0) / tab.width;
                if (pos - pos.round()).abs() < 1e-6 {
                    continue;
                }
                let k = (pos.floor() as usize).min(tab.coefficients.len() - 1);
                let lnx = big(x).ln(P, RM, &mut cc);
                let edge = big(tab.log_e0).add(&big(tab.width).mul(&big(k as f64), P, RM), P, RM);
                let t = lnx.sub(&edge, P, RM);
                let c = tab.coefficients[k];
                let rem = big(c[0])
                    .mul(&t, P, RM)
                    .add(&big(c[1]), P, RM)
                    .mul(&t, P, RM)
                    .add(&big(c[2]), P, RM)
                    .mul(&t, P, RM);
                let s = rem
                    .add(&big(c[3]), P, RM)
                    .add(&big(tab.constant_tails[k]), P, RM);
                let tv = to_f64(&t);
                let ds = 3.0 * c[0] * tv * tv + 2.0 * c[1] * tv + c[2];
                let slack = 2.0 * (ds * tv).abs() + 3.0 * to_f64(&rem).abs();
                let (err, allowed) = match output {
                    SplineOutput::Exp => {
                        let r = s.exp(P, RM, &mut cc);
                        let e = to_f64(&big(got[i]).sub(&r, P, RM).div(&r, P, RM).abs());
                        (e, (4.0 + slack) * u)
                    }
                    SplineOutput::Linear => {
                        let e = to_f64(&big(got[i]).sub(&s, P, RM).abs());
                        (e, (2.0 * to_f64(&s).abs() + slack) * u)
                    }
                };
                worst = worst.max(err / allowed);
                assert!(
                    err <= allowed,
                    "{output:?} {dtype} x {x}: error {err:e} > {allowed:e}"
                );
            }
            eprintln!("{output:?} {dtype}: worst error {worst:.3} of the bound");
            // Every tier and thread count: the same bits.
            for tier in common::tiers() {
                for th in [1, 2, 7] {
                    let again = eval(&plan, dtype, &xq, &Exec::on(tier).threads(th));
                    assert!(
                        again
                            .iter()
                            .zip(&got)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{tier:?} {th}"
                    );
                }
            }
        }
    }
}

fn eval(plan: &LogSplinePlan, dtype: DType, xs: &[f64], exec: &Exec) -> Vec<f64> {
    if dtype == DType::F32 {
        let x: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
        let mut y = vec![0f32; x.len()];
        plan.evaluate(
            &ArrayView::from_slice(&x, &[x.len()]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut y, &[x.len()]).unwrap(),
            exec,
        )
        .unwrap();
        y.into_iter().map(|v| v as f64).collect()
    } else {
        let mut y = vec![0f64; xs.len()];
        plan.evaluate(
            &ArrayView::from_slice(xs, &[xs.len()]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut y, &[xs.len()]).unwrap(),
            exec,
        )
        .unwrap();
        y
    }
}

#[test]
fn outside_the_range_and_refusals() {
    let mut rng = Rng::for_label("spline/edges", 2);
    let tab = table(&mut rng, SplineOutput::Exp);
    let plan = LogSplinePlan::new(DType::F64, &tab).unwrap();
    let y = eval(
        &plan,
        DType::F64,
        &[0.01, 25.0, f64::NAN, 0.05, 20.0],
        &Exec::SEQ,
    );
    assert_eq!(y[0], 0.0);
    assert_eq!(y[1], 7.5);
    assert!(y[2].is_nan());
    assert!(y[3].is_finite() && y[4].is_finite());
    // Refusals: dtype, intervals, width, tails, order of the bounds.
    assert!(LogSplinePlan::new(DType::I32, &tab).is_err());
    let mut t = tab.clone();
    t.coefficients.clear();
    assert!(LogSplinePlan::new(DType::F32, &t).is_err());
    let mut t = tab.clone();
    t.width = 0.0;
    assert!(LogSplinePlan::new(DType::F32, &t).is_err());
    let mut t = tab.clone();
    t.constant_tails.pop();
    assert!(LogSplinePlan::new(DType::F32, &t).is_err());
    let mut t = tab.clone();
    t.x_min = 30.0;
    assert!(LogSplinePlan::new(DType::F32, &t).is_err());
    // A dtype mismatch and a shape mismatch write nothing.
    let x = [1.0f64, 2.0];
    let mut out = [9.0f32; 2];
    assert!(plan
        .evaluate(
            &ArrayView::from_slice(&x, &[2]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut out, &[2]).unwrap(),
            &Exec::SEQ
        )
        .is_err());
    assert_eq!(out, [9.0, 9.0]);
    let mut out = [9.0f64; 3];
    assert!(plan
        .evaluate(
            &ArrayView::from_slice(&x, &[2]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut out, &[3]).unwrap(),
            &Exec::SEQ
        )
        .is_err());
    assert_eq!(out, [9.0, 9.0, 9.0]);
}
