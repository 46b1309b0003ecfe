//! The `gemm` group: tessera's chain-order matrix product beside the `gemm`
//! crate (faer's) and `matrixmultiply`, in one process, in GFLOP/s (2·m·n·k
//! per call over the best sample) with ratios to the faster peer.
//!
//! Cases: f32 and f64 square products n = 64, 256, 512, 1024, 2048 and the
//! skinny 1024 × 4096 × 64 (m × k × n), at 1 and 2 threads (tessera through
//! `Exec::threads`, gemm through `Parallelism::Rayon`; matrixmultiply is built
//! single-threaded and is shown at 1 thread only). All operands are
//! contiguous row-major. Each peer's result is checked against tessera's
//! within 1e-4 relative to Σ|a||b| before it is timed.
//!
//! Samples: each peer runs back to back for about 0.1 s (at least one call)
//! per sample, samples alternate between peers over 5 rounds, and the best is
//! kept.

use std::time::Instant;
use tessera::{matmul, ArrayView, ArrayViewMut, Exec};
use tessera_testkit::rng::Rng;

/// The group's name on the command line.
pub const NAME: &str = "gemm";

trait Elem: Copy + Default + 'static + tessera::Element + std::fmt::Debug {
    fn of(x: f64) -> Self;
    fn to(self) -> f64;
    fn one() -> Self {
        Self::of(1.0)
    }
    fn mm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]);
}

impl Elem for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
    fn to(self) -> f64 {
        self as f64
    }
    fn mm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]) {
        // SAFETY: row-major buffers of m×k, k×n and m×n elements.
        unsafe {
            matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                k as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            )
        }
    }
}

impl Elem for f64 {
    fn of(x: f64) -> Self {
        x
    }
    fn to(self) -> f64 {
        self
    }
    fn mm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]) {
        // SAFETY: as for f32.
        unsafe {
            matrixmultiply::dgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                k as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            )
        }
    }
}

fn faer_gemm<T: Elem>(m: usize, k: usize, n: usize, a: &[T], b: &[T], c: &mut [T], threads: usize) {
    let par = if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: row-major buffers of m×k, k×n and m×n elements; dst not read.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
            T::default(),
            T::one(),
            false,
            false,
            false,
            par,
        )
    }
}

fn tessera_mm<T: Elem>(
    m: usize,
    k: usize,
    n: usize,
    a: &[T],
    b: &[T],
    c: &mut [T],
    threads: usize,
) {
    matmul(
        &ArrayView::from_slice(a, &[m, k]).expect("view"),
        &ArrayView::from_slice(b, &[k, n]).expect("view"),
        &mut ArrayViewMut::from_slice(c, &[m, n]).expect("view"),
        &Exec::default().threads(threads),
    )
    .expect("matmul");
}

type Peer<'a, T> = (&'static str, Box<dyn Fn(&mut [T]) + 'a>);

/// One case: GFLOP/s of each peer (None where it failed the check) as rows.
fn case<T: Elem>(
    m: usize,
    k: usize,
    n: usize,
    threads: usize,
    quick: bool,
) -> (Vec<(String, Option<f64>)>, bool) {
    let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
    let mut rnd = || T::of(rng.unit() - 0.5);
    let a: Vec<T> = (0..m * k).map(|_| rnd()).collect();
    let b: Vec<T> = (0..k * n).map(|_| rnd()).collect();
    let mut peers: Vec<Peer<T>> = vec![
        (
            "tessera",
            Box::new(|c: &mut [T]| tessera_mm(m, k, n, &a, &b, c, threads)),
        ),
        (
            "gemm",
            Box::new(|c: &mut [T]| faer_gemm(m, k, n, &a, &b, c, threads)),
        ),
    ];
    if threads == 1 {
        peers.push((
            "matrixmultiply",
            Box::new(|c: &mut [T]| T::mm(m, k, n, &a, &b, c)),
        ));
    }
    let mut c = vec![T::default(); m * n];
    let mut want = vec![T::default(); m * n];
    tessera_mm(m, k, n, &a, &b, &mut want, 1);
    let tol = 1e-4 * k as f64 * 0.25;
    let mut ok = vec![true; peers.len()];
    for (p, (_, f)) in peers.iter().enumerate() {
        f(&mut c);
        ok[p] = c
            .iter()
            .zip(&want)
            .all(|(x, y)| (x.to() - y.to()).abs() <= tol);
    }
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    let mut best = vec![f64::INFINITY; peers.len()];
    let target = if quick { 0.005 } else { 0.1 };
    for round in 0..5 {
        for q in 0..peers.len() {
            let p = if round % 2 == 0 {
                q
            } else {
                peers.len() - 1 - q
            };
            if !ok[p] {
                continue;
            }
            let t0 = Instant::now();
            let mut calls = 0u32;
            while calls == 0 || t0.elapsed().as_secs_f64() < target {
                (peers[p].1)(&mut c);
                calls += 1;
            }
            best[p] = best[p].min(t0.elapsed().as_secs_f64() / calls as f64);
        }
    }
    let rows = peers
        .iter()
        .enumerate()
        .map(|(p, (name, _))| (name.to_string(), ok[p].then(|| flops / best[p] / 1e9)))
        .collect();
    (rows, ok.iter().all(|&x| x))
}

/// Run the group; the text of its table, and whether every peer agreed.
pub fn run(quick: bool) -> (String, bool) {
    let mut out = String::new();
    out.push_str(&format!("{NAME}: GFLOP/s (2·m·n·k / best sample); ratio = tessera / the faster peer at the same threads\n"));
    out.push_str(&format!(
        "{:<5} {:>22} {:>3}  {:>9} {:>9} {:>14}  {:>6}  {:>9}\n",
        "dtype", "m x k x n", "thr", "tessera", "gemm", "matrixmultiply", "ratio", "2thr/1thr"
    ));
    let mut all_ok = true;
    let sizes: Vec<(usize, usize, usize)> = if quick {
        vec![(64, 64, 64), (256, 256, 256), (128, 4096, 64)]
    } else {
        let mut v: Vec<_> = [64, 256, 512, 1024, 2048]
            .iter()
            .map(|&n| (n, n, n))
            .collect();
        v.push((1024, 4096, 64));
        v
    };
    for dt in ["f32", "f64"] {
        for &(m, k, n) in &sizes {
            let mut one = None;
            for threads in [1, 2] {
                eprintln!("  {dt} {m}x{k}x{n}, {threads} thread(s)");
                let (rows, ok) = if dt == "f32" {
                    case::<f32>(m, k, n, threads, quick)
                } else {
                    case::<f64>(m, k, n, threads, quick)
                };
                all_ok &= ok;
                let get = |name: &str| rows.iter().find(|r| r.0 == name).and_then(|r| r.1);
                let fmt = |v: Option<f64>, present: bool| match (v, present) {
                    (Some(x), _) => format!("{x:.1}"),
                    (None, true) => "FAILED".to_string(),
                    (None, false) => "-".to_string(),
                };
                let t = get("tessera");
                let peer = [get("gemm"), get("matrixmultiply")]
                    .into_iter()
                    .flatten()
                    .fold(0.0f64, f64::max);
                let ratio = t.map(|t| t / peer);
                if threads == 1 {
                    one = t;
                }
                let scale = match (threads, t, one) {
                    (2, Some(t2), Some(t1)) => format!("{:.2}", t2 / t1),
                    _ => String::new(),
                };
                out.push_str(&format!(
                    "{:<5} {:>22} {:>3}  {:>9} {:>9} {:>14}  {:>6}  {:>9}\n",
                    dt,
                    format!("{m} x {k} x {n}"),
                    threads,
                    fmt(t, true),
                    fmt(get("gemm"), true),
                    fmt(get("matrixmultiply"), threads == 1),
                    ratio.map(|r| format!("{r:.2}")).unwrap_or_default(),
                    scale
                ));
            }
        }
    }
    (out, all_ok)
}
