//! The `linalg` group: tessera's cholesky, lu, qr, solve_triangular, eigh,
//! svd and eig beside faer (`Par::Seq` and two rayon threads) in one
//! process, f64 and f32, n = 64, 256, 1024 (and 2048 for cholesky, lu and
//! qr), plus batches of 10^5 matrices of 4×4, 8×8 and 16×16 (cholesky, lu,
//! solve_triangular) beside faer called per matrix. Times are the best of
//! alternating samples (one call per sample); ratios are faer's time over
//! tessera's (above 1: tessera faster). Inputs: a random symmetric positive
//! definite matrix (cholesky, eigh, solve's lower triangle) or a random
//! matrix (lu, qr, svd, eig); solve_triangular has n right-hand sides.
//! `--quick` runs n = 64 and 256 and batches of 10^4. `linalg:TOKENS`
//! (comma-separated) keeps only the named routines, orders (64, 256, 1024,
//! 2048 for the square rows; 4, 8, 16 for the batches) and dtypes (f32,
//! f64), each list empty meaning all: `linalg:cholesky,lu,1024,f64`.
//! LAPACK's figures
//! (scipy's OpenBLAS, MKL's LAPACKE) come from
//! `bench/scripts/linalg_lapack.py` (same cases, one thread).

use crate::chart::{speed_ratio, Chart};
use faer::{Mat, Par, Side};
use std::time::Instant;
use tessera::linalg::{cholesky, eig, eigh, lu, qr, solve_triangular, svd, Triangle};
use tessera::{ArrayView, ArrayViewMut, Exec};
use tessera_testkit::rng::Rng;

/// The group's name on the command line.
pub const NAME: &str = "linalg";

/// The routines of the group, in the order its rows run.
const ROUTINES: [&str; 7] = [
    "cholesky",
    "lu",
    "qr",
    "solve_triangular",
    "eigh",
    "svd",
    "eig",
];

/// What `linalg:…` filters keep (an empty list keeps all).
#[derive(Debug, Default, PartialEq)]
pub struct Only {
    routines: Vec<&'static str>,
    orders: Vec<usize>,
    dtypes: Vec<&'static str>,
}

impl Only {
    fn routine(&self, r: &str) -> bool {
        self.routines.is_empty() || self.routines.contains(&r)
    }
    fn order(&self, n: usize) -> bool {
        self.orders.is_empty() || self.orders.contains(&n)
    }
    fn dtype(&self, d: &str) -> bool {
        self.dtypes.is_empty() || self.dtypes.contains(&d)
    }
}

/// The restriction the `linalg:TOKENS` filters name (routines, orders,
/// dtypes); an unknown token is refused.
pub fn restriction(filters: &[String]) -> Result<Only, String> {
    let mut only = Only::default();
    for f in filters {
        let Some(list) = f.strip_prefix(&format!("{NAME}:")) else {
            continue;
        };
        for t in list.split(',') {
            if let Some(&r) = ROUTINES.iter().find(|&&r| r == t) {
                only.routines.push(r);
            } else if let Some(&d) = ["f32", "f64"].iter().find(|&&d| d == t) {
                only.dtypes.push(d);
            } else if let Ok(n) = t.parse() {
                only.orders.push(n);
            } else {
                return Err(format!(
                    "{NAME}: unknown `{t}` (a routine of {ROUTINES:?}, an order or f32/f64)"
                ));
            }
        }
    }
    Ok(only)
}

/// Best seconds per call of each closure, sampled alternately.
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

trait Real:
    tessera::Element + faer::traits::RealField + Copy + Default + Send + Sync + 'static
{
    const NAME: &'static str;
    /// The complex type of its precision (eig's results).
    type C: tessera::Element + Default + Copy;
    fn of(x: f64) -> Self;
}
impl Real for f64 {
    const NAME: &'static str = "f64";
    type C = num_complex::Complex<f64>;
    fn of(x: f64) -> f64 {
        x
    }
}
impl Real for f32 {
    const NAME: &'static str = "f32";
    type C = num_complex::Complex<f32>;
    fn of(x: f64) -> f32 {
        x as f32
    }
}

/// A random n × n matrix (row-major), and its symmetric positive definite
/// companion `B Bᵀ / n + I`.
fn inputs<T: Real>(n: usize, rng: &mut Rng) -> (Vec<T>, Vec<T>) {
    let b: Vec<f64> = (0..n * n).map(|_| rng.unit() - 0.5).collect();
    let mut spd = vec![0f64; n * n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = 0.0;
            for k in 0..n {
                s += b[i * n + k] * b[j * n + k];
            }
            let v = s / n as f64 + if i == j { 1.0 } else { 0.0 };
            spd[i * n + j] = v;
            spd[j * n + i] = v;
        }
    }
    (
        b.iter().map(|&x| T::of(x)).collect(),
        spd.iter().map(|&x| T::of(x)).collect(),
    )
}

fn faer_mat<T: Real>(n: usize, v: &[T]) -> Mat<T> {
    Mat::from_fn(n, n, |i, j| v[i * n + j])
}

/// One row: tessera at 1 and 2 threads, faer at 1 and 2 threads.
struct Row {
    case: String,
    t1: f64,
    t2: f64,
    f1: f64,
    f2: f64,
}

fn square_rows<T: Real>(n: usize, rounds: usize, only: &Only, rng: &mut Rng, out: &mut Vec<Row>) {
    let (a, spd) = inputs::<T>(n, rng);
    let fa = faer_mat(n, &a);
    let fs = faer_mat(n, &spd);
    let mut o1 = vec![T::default(); n * n];
    let mut o2 = vec![T::default(); n * n];
    let mut piv = vec![0i64; n];
    let mut perm = vec![0i64; n];
    let mut wr = vec![T::default(); n];
    let mut wc = vec![T::C::default(); n];
    let mut vc = vec![T::C::default(); n * n];
    let av = ArrayView::from_slice(&a, &[n, n]).unwrap();
    let sv = ArrayView::from_slice(&spd, &[n, n]).unwrap();
    let big = n >= 2048;
    let routines = if big { &ROUTINES[..3] } else { &ROUTINES[..] };
    for &r in routines.iter().filter(|r| only.routine(r)) {
        let mut run_t = |exec: &Exec| match r {
            "cholesky" => cholesky(
                Triangle::Lower,
                &sv,
                &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                exec,
            )
            .unwrap(),
            "lu" => lu(
                &av,
                &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut piv, &[n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut perm, &[n]).unwrap(),
                exec,
            )
            .unwrap(),
            "qr" => qr(
                &av,
                &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut o2, &[n, n]).unwrap(),
                exec,
            )
            .unwrap(),
            "solve_triangular" => solve_triangular(
                Triangle::Lower,
                false,
                false,
                &sv,
                &av,
                &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                exec,
            )
            .unwrap(),
            "eigh" => eigh(
                &sv,
                &mut ArrayViewMut::from_slice(&mut wr, &[n]).unwrap(),
                Some(&mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap()),
                exec,
            )
            .unwrap(),
            "svd" => svd(
                &av,
                &mut ArrayViewMut::from_slice(&mut wr, &[n]).unwrap(),
                Some((
                    &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut o2, &[n, n]).unwrap(),
                )),
                exec,
            )
            .unwrap(),
            _ => eig(
                &av,
                &mut ArrayViewMut::from_slice(&mut wc, &[n]).unwrap(),
                Some(&mut ArrayViewMut::from_slice(&mut vc, &[n, n]).unwrap()),
                exec,
            )
            .unwrap(),
        };
        let run_f = |par: Par| {
            faer::set_global_parallelism(par);
            match r {
                "cholesky" => {
                    std::hint::black_box(fs.llt(Side::Lower).unwrap());
                }
                "lu" => {
                    std::hint::black_box(fa.partial_piv_lu());
                }
                "qr" => {
                    let q = fa.qr();
                    std::hint::black_box((q.compute_Q(), q.R()));
                }
                "solve_triangular" => {
                    let mut x = fa.clone();
                    fs.solve_lower_triangular_in_place(&mut x);
                    std::hint::black_box(x);
                }
                "eigh" => {
                    std::hint::black_box(fs.self_adjoint_eigen(Side::Lower).unwrap());
                }
                "svd" => {
                    std::hint::black_box(fa.svd().unwrap());
                }
                _ => {
                    std::hint::black_box(fa.eigen().unwrap());
                }
            }
        };
        let two = Par::rayon(2);
        let first = {
            let mut a1 = || run_t(&Exec::SEQ);
            let mut a2 = || run_f(Par::Seq);
            race(&mut [&mut a1, &mut a2], rounds)
        };
        let second = {
            let mut a3 = || run_t(&Exec::default().threads(2));
            let mut a4 = || run_f(two);
            race(&mut [&mut a3, &mut a4], rounds)
        };
        let b = [first[0], second[0], first[1], second[1]];
        out.push(Row {
            case: format!("{r} {} n={n}", T::NAME),
            t1: b[0],
            t2: b[1],
            f1: b[2],
            f2: b[3],
        });
    }
    faer::set_global_parallelism(Par::Seq);
}

fn batch_rows<T: Real>(
    n: usize,
    count: usize,
    rounds: usize,
    only: &Only,
    rng: &mut Rng,
    out: &mut Vec<Row>,
) {
    let mut a = Vec::with_capacity(count * n * n);
    let mut s = Vec::with_capacity(count * n * n);
    for _ in 0..count.min(64) {
        let (x, y) = inputs::<T>(n, rng);
        a.extend(x);
        s.extend(y);
    }
    while a.len() < count * n * n {
        let l = a.len().min(count * n * n - a.len());
        a.extend_from_within(..l);
        s.extend_from_within(..l);
    }
    let fa: Vec<Mat<T>> = (0..count).map(|b| faer_mat(n, &a[b * n * n..])).collect();
    let fs: Vec<Mat<T>> = (0..count).map(|b| faer_mat(n, &s[b * n * n..])).collect();
    let mut o = vec![T::default(); count * n * n];
    let mut piv = vec![0i64; count * n];
    let mut perm = vec![0i64; count * n];
    let shape = [count, n, n];
    for r in ["cholesky", "lu", "solve_triangular"]
        .into_iter()
        .filter(|r| only.routine(r))
    {
        let mut t = |exec: &Exec| {
            let mut ov = ArrayViewMut::from_slice(&mut o, &shape).unwrap();
            match r {
                "cholesky" => cholesky(
                    Triangle::Lower,
                    &ArrayView::from_slice(&s, &shape).unwrap(),
                    &mut ov,
                    exec,
                ),
                "lu" => lu(
                    &ArrayView::from_slice(&a, &shape).unwrap(),
                    &mut ov,
                    &mut ArrayViewMut::from_slice(&mut piv, &[count, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut perm, &[count, n]).unwrap(),
                    exec,
                ),
                _ => solve_triangular(
                    Triangle::Lower,
                    false,
                    false,
                    &ArrayView::from_slice(&s, &shape).unwrap(),
                    &ArrayView::from_slice(&a, &shape).unwrap(),
                    &mut ov,
                    exec,
                ),
            }
            .unwrap()
        };
        let mut xs = fa.clone();
        let f = || {
            faer::set_global_parallelism(Par::Seq);
            for b in 0..count {
                match r {
                    "cholesky" => {
                        std::hint::black_box(fs[b].llt(Side::Lower).unwrap());
                    }
                    "lu" => {
                        std::hint::black_box(fa[b].partial_piv_lu());
                    }
                    _ => {
                        // Into a kept destination, as tessera writes into `o`.
                        let x = &mut xs[b];
                        x.copy_from(&fa[b]);
                        fs[b].solve_lower_triangular_in_place(&mut *x);
                        std::hint::black_box(x);
                    }
                }
            }
        };
        let first = {
            let mut t1 = || t(&Exec::SEQ);
            let mut f1 = f;
            race(&mut [&mut t1, &mut f1], rounds)
        };
        let second = {
            let mut t2 = || t(&Exec::default().threads(2));
            race(&mut [&mut t2], rounds)
        };
        out.push(Row {
            case: format!("{r} {} {count}×{n}×{n}", T::NAME),
            t1: first[0],
            t2: second[0],
            f1: first[1],
            f2: f64::NAN,
        });
    }
}

/// Run the group (the cases `only` keeps); returns its table, whether
/// every case ran, and its chart.
pub fn run(quick: bool, only: &Only) -> (String, bool, Chart) {
    let mut rng = Rng::for_label("bench linalg", 1);
    let rounds = if quick { 1 } else { 3 };
    let sizes: &[usize] = if quick {
        &[64, 256]
    } else {
        &[64, 256, 1024, 2048]
    };
    let count = if quick { 10_000 } else { 100_000 };
    let mut rows = Vec::new();
    for &n in sizes.iter().filter(|&&n| only.order(n)) {
        if only.dtype("f64") {
            square_rows::<f64>(n, rounds, only, &mut rng, &mut rows);
        }
        if only.dtype("f32") {
            square_rows::<f32>(n, rounds, only, &mut rng, &mut rows);
        }
    }
    if only.dtype("f64") {
        for n in [4, 8, 16].into_iter().filter(|&n| only.order(n)) {
            batch_rows::<f64>(n, count, rounds, only, &mut rng, &mut rows);
        }
    }
    let mut out = format!(
        "{NAME}: ms per call, best of {rounds} alternating samples; ratio = faer / tessera (above 1: tessera faster); batches: faer called per matrix\n"
    );
    out.push_str(&format!(
        "{:<34} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>7}\n",
        "case", "tessera 1T", "tessera 2T", "faer seq", "faer 2T", "1T", "2T", "2T/1T"
    ));
    // The cases' times span six decades: the chart draws each row's times
    // as multiples of faer's one-thread time, so every row reads alike.
    let mut chart = Chart::new(
        NAME,
        "one process, best of alternating samples",
        "time ÷ faer's one-thread time",
    )
    .lower_is_better()
    .ratio_note("faer's time ÷ tessera's, one thread (above 1: tessera faster)");
    for r in &rows {
        chart.add_row(
            r.case.clone(),
            &[
                ("tessera", Some(r.t1 / r.f1)),
                ("tessera 2T", Some(r.t2 / r.f1)),
                ("faer", Some(1.0)),
                ("faer 2T", (r.f2.is_finite()).then_some(r.f2 / r.f1)),
            ],
            speed_ratio(r.t1, r.f1, true),
        );
        // No two-thread faer row for the batches (faer is called per matrix).
        let (f2, r2) = if r.f2.is_finite() {
            (format!("{:.3}", r.f2 * 1e3), format!("{:.2}x", r.f2 / r.t2))
        } else {
            ("-".to_string(), "-".to_string())
        };
        out.push_str(&format!(
            "{:<34} {:>10.3} {:>10.3} {:>10.3} {:>10} {:>7.2}x {:>8} {:>6.2}x\n",
            r.case,
            r.t1 * 1e3,
            r.t2 * 1e3,
            r.f1 * 1e3,
            f2,
            r.f1 / r.t1,
            r2,
            r.t1 / r.t2,
        ));
    }
    (out, true, chart)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restriction_reads_routines_orders_and_dtypes() {
        let f = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(restriction(&f("linalg")).unwrap(), Only::default());
        let o = restriction(&f("linalg:cholesky,1024,f64 linalg:lu")).unwrap();
        assert_eq!(o.routines, ["cholesky", "lu"]);
        assert_eq!(o.orders, [1024]);
        assert_eq!(o.dtypes, ["f64"]);
        assert!(o.routine("lu") && !o.routine("qr"));
        assert!(o.order(1024) && !o.order(64));
        assert!(o.dtype("f64") && !o.dtype("f32"));
        assert!(restriction(&f("linalg:cholesky,f16")).is_err());
        assert!(restriction(&f("linalg:chol")).is_err());
    }
}
