//! The `protected` group: the compensated sum and dot product
//! (`ReduceOp::Sum2`, `reduce::dot2`) of 64 MiB of f32 and f64 beside the
//! plain lane-order ones and a Kahan loop (the textbook compensated sum, one
//! running pair, sequential), and the pair kinds (`add`, `mul` on df32 and
//! dd64, `two_sum`, `two_prod`) beside the plain f32/f64 kind they protect,
//! in one run, one thread, best of alternating samples. Ratios are tessera's
//! protected call ÷ the plain one (times: above 1 means slower by that
//! factor is shown as its inverse, the speed ratio).

use crate::chart::{speed_ratio, Chart};
use std::hint::black_box;
use std::time::Instant;
use tessera::reduce::dot2;
use tessera::{dot, reduce, typed, ArrayView, ArrayViewMut, Exec, Kind, Pair, ReduceOp};
use tessera_testkit::rng::Rng;

/// The group's name on the command line.
pub const NAME: &str = "protected";

fn race(fs: &mut [&mut dyn FnMut()], rounds: usize) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; fs.len()];
    for _ in 0..rounds {
        for (i, f) in fs.iter_mut().enumerate() {
            let t = Instant::now();
            f();
            best[i] = best[i].min(t.elapsed().as_secs_f64());
        }
    }
    best
}

/// Kahan's compensated summation, one running (sum, compensation).
fn kahan<F: Copy + std::ops::Add<Output = F> + std::ops::Sub<Output = F> + Default>(x: &[F]) -> F {
    let mut s = F::default();
    let mut c = F::default();
    for &v in x {
        let y = v - c;
        let t = s + y;
        c = (t - s) - y;
        s = t;
    }
    s
}

fn sum_into<T: tessera::Element + Default>(op: ReduceOp, x: &[T]) -> T {
    let mut out = [T::default()];
    reduce(
        op,
        &[0],
        &ArrayView::from_slice(x, &[x.len()]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
        &Exec::SEQ,
    )
    .unwrap();
    out[0]
}

fn dot_into<T: tessera::Element + Default>(comp: bool, x: &[T], y: &[T]) -> T {
    let mut out = [T::default()];
    let (vx, vy) = (
        ArrayView::from_slice(x, &[x.len()]).unwrap(),
        ArrayView::from_slice(y, &[y.len()]).unwrap(),
    );
    let mut d = ArrayViewMut::from_slice(&mut out, &[]).unwrap();
    if comp {
        dot2(&[0], &vx, &vy, &mut d, &Exec::SEQ).unwrap();
    } else {
        dot(&[0], &vx, &vy, &mut d, &Exec::SEQ).unwrap();
    }
    out[0]
}

/// Run the group: a table and a chart of GB/s (reductions) and
/// Gelem/s (kinds).
pub fn run(quick: bool) -> (String, bool, Chart) {
    let mut rng = Rng::for_label("bench protected", 1);
    let rounds = if quick { 2 } else { 5 };
    let bytes = if quick { 8 << 20 } else { 64 << 20 };
    let mut out = format!(
        "{NAME}: one thread, {} MiB per operand, best of {rounds} alternating samples\n{:<34} {:>10} {:>10} {:>10} {:>12}\n",
        bytes >> 20,
        "case",
        "plain",
        "protected",
        "Kahan",
        "prot ÷ plain"
    );
    let mut chart = Chart::new(
        NAME,
        format!("{} MiB operands, one thread", bytes >> 20),
        "GB/s or Gelem/s",
    )
    .ratio_note("the protected call's speed ÷ the plain call's (1 = no cost)");
    // Sums and dots, f32 and f64.
    {
        let n = bytes / 4;
        let x: Vec<f32> = (0..n).map(|_| rng.unit() as f32 - 0.5).collect();
        let y: Vec<f32> = (0..n).map(|_| rng.unit() as f32 - 0.5).collect();
        let t = race(
            &mut [
                &mut || {
                    black_box(sum_into(ReduceOp::Sum, &x));
                },
                &mut || {
                    black_box(sum_into(ReduceOp::Sum2, &x));
                },
                &mut || {
                    black_box(kahan(&x));
                },
            ],
            rounds,
        );
        row(&mut out, &mut chart, "sum f32", bytes as f64, &t, "GB/s");
        let t = race(
            &mut [
                &mut || {
                    black_box(dot_into(false, &x, &y));
                },
                &mut || {
                    black_box(dot_into(true, &x, &y));
                },
            ],
            rounds,
        );
        row(
            &mut out,
            &mut chart,
            "dot f32",
            2.0 * bytes as f64,
            &t,
            "GB/s",
        );
    }
    {
        let n = bytes / 8;
        let x: Vec<f64> = (0..n).map(|_| rng.unit() - 0.5).collect();
        let y: Vec<f64> = (0..n).map(|_| rng.unit() - 0.5).collect();
        let t = race(
            &mut [
                &mut || {
                    black_box(sum_into(ReduceOp::Sum, &x));
                },
                &mut || {
                    black_box(sum_into(ReduceOp::Sum2, &x));
                },
                &mut || {
                    black_box(kahan(&x));
                },
            ],
            rounds,
        );
        row(&mut out, &mut chart, "sum f64", bytes as f64, &t, "GB/s");
        let t = race(
            &mut [
                &mut || {
                    black_box(dot_into(false, &x, &y));
                },
                &mut || {
                    black_box(dot_into(true, &x, &y));
                },
            ],
            rounds,
        );
        row(
            &mut out,
            &mut chart,
            "dot f64",
            2.0 * bytes as f64,
            &t,
            "GB/s",
        );
    }
    // Pair kinds beside the plain kind, 1 Mi elements (in cache).
    {
        let n = 1 << 20;
        let a: Vec<f32> = (0..n).map(|_| rng.unit() as f32 + 0.5).collect();
        let b: Vec<f32> = (0..n).map(|_| rng.unit() as f32 + 0.5).collect();
        let pa: Vec<Pair<f32>> = a
            .iter()
            .map(|&v| Pair {
                hi: v,
                lo: v * 1e-9,
            })
            .collect();
        let pb: Vec<Pair<f32>> = b
            .iter()
            .map(|&v| Pair {
                hi: v,
                lo: v * 1e-9,
            })
            .collect();
        let mut o = vec![0f32; n];
        let mut po = vec![Pair::<f32>::default(); n];
        for kind in [Kind::Add, Kind::Mul] {
            let t = race(
                &mut [
                    &mut || typed::elementwise(kind, &[&a, &b], &mut o, &Exec::SEQ).unwrap(),
                    &mut || typed::elementwise(kind, &[&pa, &pb], &mut po, &Exec::SEQ).unwrap(),
                ],
                rounds * 4,
            );
            row(
                &mut out,
                &mut chart,
                &format!("{} df32 vs f32", kind.name()),
                n as f64,
                &t,
                "Gelem/s",
            );
        }
        for kind in [Kind::TwoSum, Kind::TwoProd] {
            let plain = if kind == Kind::TwoSum {
                Kind::Add
            } else {
                Kind::Mul
            };
            let t = race(
                &mut [
                    &mut || typed::elementwise(plain, &[&a, &b], &mut o, &Exec::SEQ).unwrap(),
                    &mut || typed::elementwise(kind, &[&a, &b], &mut po, &Exec::SEQ).unwrap(),
                ],
                rounds * 4,
            );
            row(
                &mut out,
                &mut chart,
                &format!("{} f32 vs {}", kind.name(), plain.name()),
                n as f64,
                &t,
                "Gelem/s",
            );
        }
        let a: Vec<f64> = a.iter().map(|&v| v as f64).collect();
        let b: Vec<f64> = b.iter().map(|&v| v as f64).collect();
        let pa: Vec<Pair<f64>> = a
            .iter()
            .map(|&v| Pair {
                hi: v,
                lo: v * 1e-18,
            })
            .collect();
        let pb: Vec<Pair<f64>> = b
            .iter()
            .map(|&v| Pair {
                hi: v,
                lo: v * 1e-18,
            })
            .collect();
        let mut o = vec![0f64; n];
        let mut po = vec![Pair::<f64>::default(); n];
        for kind in [Kind::Add, Kind::Mul] {
            let t = race(
                &mut [
                    &mut || typed::elementwise(kind, &[&a, &b], &mut o, &Exec::SEQ).unwrap(),
                    &mut || typed::elementwise(kind, &[&pa, &pb], &mut po, &Exec::SEQ).unwrap(),
                ],
                rounds * 4,
            );
            row(
                &mut out,
                &mut chart,
                &format!("{} dd64 vs f64", kind.name()),
                n as f64,
                &t,
                "Gelem/s",
            );
        }
    }
    // The combination of terms and its exponential (T = 8, N = 2^20 points;
    // numpy's binary64 figures from bench/scripts/terms_numpy.py).
    {
        let (t, n) = (8usize, if quick { 1 << 16 } else { 1 << 20 });
        let terms: Vec<num_complex::Complex<f64>> = (0..t * n)
            .map(|_| {
                num_complex::Complex::new((rng.unit() - 0.5) * 4.0, (rng.unit() - 0.5) * 100.0)
            })
            .collect();
        let w: Vec<f64> = (0..t)
            .map(|_| (rng.unit() - 0.5) * 2.0 / t as f64)
            .collect();
        let plan =
            tessera::terms::TermsPlan::upload(&ArrayView::from_slice(&terms, &[t, n]).unwrap())
                .unwrap();
        let mut y = vec![num_complex::Complex::<f32>::default(); n];
        let tm = race(
            &mut [&mut || {
                plan.combine(
                    &w,
                    &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
                    &Exec::SEQ,
                )
                .unwrap()
            }],
            rounds,
        );
        let mut z = vec![num_complex::Complex::<f32>::default(); n];
        let te = race(
            &mut [&mut || {
                plan.exponential(
                    &w,
                    1.0,
                    &mut ArrayViewMut::from_slice(&mut z, &[n]).unwrap(),
                    &Exec::SEQ,
                )
                .unwrap()
            }],
            rounds,
        );
        out.push_str(&format!(
            "terms (T = {t}, N = {n}, double-float, one thread): combine {:.1} Mpoints/s, exp {:.1} Mpoints/s \
             (numpy binary64: bench/scripts/terms_numpy.py)\n",
            n as f64 / tm[0] / 1e6,
            n as f64 / te[0] / 1e6
        ));
    }
    (out, true, chart)
}

/// One table row: `work` bytes (or elements) per call, times `t` (plain,
/// protected, optional Kahan).
fn row(out: &mut String, chart: &mut Chart, case: &str, work: f64, t: &[f64], unit: &str) {
    let g = |t: f64| work / t / 1e9;
    let kahan = t.get(2).map(|&k| g(k));
    out.push_str(&format!(
        "{:<34} {:>10.2} {:>10.2} {:>10} {:>11.2}x   ({unit})\n",
        case,
        g(t[0]),
        g(t[1]),
        kahan
            .map(|k| format!("{k:.2}"))
            .unwrap_or_else(|| "-".into()),
        g(t[1]) / g(t[0])
    ));
    let mut peers = vec![
        ("tessera plain", Some(g(t[0]))),
        ("tessera protected", Some(g(t[1]))),
    ];
    if let Some(k) = kahan {
        peers.push(("Kahan loop", Some(k)));
    }
    chart.add_row(
        case.to_string(),
        &peers,
        speed_ratio(g(t[1]), g(t[0]), false),
    );
}
