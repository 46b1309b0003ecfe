//! The `protected` group: the compensated sum and dot product
//! (`ReduceOp::Sum2`, `reduce::dot2`) of 64 MiB of f32 and f64 beside the
//! plain lane-order ones and a Kahan loop (the textbook compensated sum, one
//! running pair, sequential), and the pair kinds (`add`, `mul` on df32 and
//! dd64, `two_sum`, `two_prod`) beside the plain f32/f64 kind they protect,
//! and the square contraction of n = 1024 accumulated in df32/dd64 beside
//! the same in f32/f64, in one run, one thread, best of alternating samples. Ratios are tessera's
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
    sums_and_dots::<f32>(&mut out, &mut chart, &mut rng, bytes, rounds);
    sums_and_dots::<f64>(&mut out, &mut chart, &mut rng, bytes, rounds);
    // Pair kinds beside the plain kind, 1 Mi elements (in cache).
    pair_kinds::<f32>(&mut out, &mut chart, &mut rng, rounds, true);
    pair_kinds::<f64>(&mut out, &mut chart, &mut rng, rounds, false);
    // The pair contraction beside the plain one (square, n = 1024).
    let n = if quick { 256 } else { 1024 };
    pair_contraction::<f32>(&mut out, &mut chart, &mut rng, n, rounds);
    pair_contraction::<f64>(&mut out, &mut chart, &mut rng, n, rounds);
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

/// The part dtypes of the pairs: f32 (df32) and f64 (dd64).
trait Part:
    tessera::Element + Default + Copy + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self>
{
    const NAME: &'static str;
    const PAIR: tessera::DType;
    fn of(v: f64) -> Self;
    fn pair(v: Self, rel: f64) -> Pair<Self>;
    fn kinds(kind: Kind, x: &[&[Pair<Self>]], out: &mut [Pair<Self>]);
    fn eft(kind: Kind, x: &[&[Self]], out: &mut [Pair<Self>]);
}

macro_rules! part {
    ($t:ty, $name:literal, $pair:ident) => {
        impl Part for $t {
            const NAME: &'static str = $name;
            const PAIR: tessera::DType = tessera::DType::$pair;
            fn of(v: f64) -> Self {
                v as $t
            }
            fn pair(v: Self, rel: f64) -> Pair<Self> {
                Pair {
                    hi: v,
                    lo: v * rel as $t,
                }
            }
            fn kinds(kind: Kind, x: &[&[Pair<Self>]], out: &mut [Pair<Self>]) {
                typed::elementwise(kind, x, out, &Exec::SEQ).unwrap()
            }
            fn eft(kind: Kind, x: &[&[Self]], out: &mut [Pair<Self>]) {
                typed::elementwise(kind, x, out, &Exec::SEQ).unwrap()
            }
        }
    };
}
part!(f32, "f32", Df32);
part!(f64, "f64", Dd64);

/// Sum (plain, Sum2, Kahan) and dot (plain, Dot2) of `bytes` per operand.
fn sums_and_dots<F: Part>(
    out: &mut String,
    chart: &mut Chart,
    rng: &mut Rng,
    bytes: usize,
    rounds: usize,
) {
    let n = bytes / size_of::<F>();
    let x: Vec<F> = (0..n).map(|_| F::of(rng.unit() - 0.5)).collect();
    let y: Vec<F> = (0..n).map(|_| F::of(rng.unit() - 0.5)).collect();
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
    row(
        out,
        chart,
        &format!("sum {}", F::NAME),
        bytes as f64,
        &t,
        "GB/s",
    );
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
        out,
        chart,
        &format!("dot {}", F::NAME),
        2.0 * bytes as f64,
        &t,
        "GB/s",
    );
}

/// The pair kinds `add`, `mul` beside the plain kind, and (f32) `two_sum`,
/// `two_prod` beside `add`, `mul`: 1 Mi elements.
fn pair_kinds<F: Part>(
    out: &mut String,
    chart: &mut Chart,
    rng: &mut Rng,
    rounds: usize,
    eft: bool,
) {
    let n = 1 << 20;
    let rel = if size_of::<F>() == 4 { 1e-9 } else { 1e-18 };
    let a: Vec<F> = (0..n).map(|_| F::of(rng.unit() + 0.5)).collect();
    let b: Vec<F> = (0..n).map(|_| F::of(rng.unit() + 0.5)).collect();
    let pa: Vec<Pair<F>> = a.iter().map(|&v| F::pair(v, rel)).collect();
    let pb: Vec<Pair<F>> = b.iter().map(|&v| F::pair(v, rel)).collect();
    let mut o = vec![F::default(); n];
    let mut po = vec![Pair::<F>::default(); n];
    for kind in [Kind::Add, Kind::Mul] {
        let t = race(
            &mut [
                &mut || typed::elementwise(kind, &[&a, &b], &mut o, &Exec::SEQ).unwrap(),
                &mut || F::kinds(kind, &[&pa, &pb], &mut po),
            ],
            rounds * 4,
        );
        let case = format!("{} {} vs {}", kind.name(), F::PAIR.name(), F::NAME);
        row(out, chart, &case, n as f64, &t, "Gelem/s");
    }
    if !eft {
        return;
    }
    for (kind, plain) in [(Kind::TwoSum, Kind::Add), (Kind::TwoProd, Kind::Mul)] {
        let t = race(
            &mut [
                &mut || typed::elementwise(plain, &[&a, &b], &mut o, &Exec::SEQ).unwrap(),
                &mut || F::eft(kind, &[&a, &b], &mut po),
            ],
            rounds * 4,
        );
        let case = format!("{} {} vs {}", kind.name(), F::NAME, plain.name());
        row(out, chart, &case, n as f64, &t, "Gelem/s");
    }
}

/// The `n × n × n` product accumulated in `F` beside the same accumulated
/// in its pair (destination `F` both), one thread: GFLOP/s (2n³ each).
fn pair_contraction<F: Part>(
    out: &mut String,
    chart: &mut Chart,
    rng: &mut Rng,
    n: usize,
    rounds: usize,
) {
    let a: Vec<F> = (0..n * n).map(|_| F::of(rng.unit() - 0.5)).collect();
    let b: Vec<F> = (0..n * n).map(|_| F::of(rng.unit() - 0.5)).collect();
    let run = |acc: tessera::DType, c: &mut [F]| {
        tessera::contract(
            &tessera::ContractSpec::new(acc).contracting(1, 0),
            &ArrayView::from_slice(&a, &[n, n]).unwrap(),
            &ArrayView::from_slice(&b, &[n, n]).unwrap(),
            None,
            &mut ArrayViewMut::from_slice(c, &[n, n]).unwrap(),
            &Exec::SEQ,
        )
        .unwrap()
    };
    let (mut c0, mut c1) = (vec![F::default(); n * n], vec![F::default(); n * n]);
    let t = race(
        &mut [
            &mut || run(<F as tessera::Element>::DTYPE, &mut c0),
            &mut || run(F::PAIR, &mut c1),
        ],
        rounds.min(3),
    );
    let case = format!("contract {n}³ {} vs {}", F::PAIR.name(), F::NAME);
    row(out, chart, &case, 2.0 * (n as f64).powi(3), &t, "GFLOP/s");
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
