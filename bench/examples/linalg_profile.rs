//! Profiling aid: one routine in a loop (`linalg_profile ROUTINE N DTYPE SECONDS`).
use std::time::Instant;
use tessera::linalg::{cholesky, eig, eigh, lu, qr, solve_triangular, svd, Triangle};
use tessera::{ArrayView, ArrayViewMut, Exec};

fn batch(r: &str, n: usize, count: usize) {
    let mut s = 7u64;
    let mut rnd = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let a: Vec<f64> = (0..count * n * n).map(|_| rnd()).collect();
    let mut spd = vec![0f64; count * n * n];
    for b in 0..count {
        for i in 0..n {
            for j in 0..n {
                spd[b * n * n + i * n + j] = if i == j { n as f64 } else { 0.0 }
                    + a[b * n * n + i * n + j] * a[b * n * n + j * n + i] * 0.1;
            }
        }
    }
    let shape = [count, n, n];
    let mut o = vec![0f64; count * n * n];
    let mut piv = vec![0i64; count * n];
    let mut perm = vec![0i64; count * n];
    let fa: Vec<faer::Mat<f64>> = (0..count)
        .map(|b| faer::Mat::from_fn(n, n, |i, j| a[b * n * n + i * n + j]))
        .collect();
    let fs: Vec<faer::Mat<f64>> = (0..count)
        .map(|b| faer::Mat::from_fn(n, n, |i, j| spd[b * n * n + i * n + j]))
        .collect();
    faer::set_global_parallelism(faer::Par::Seq);
    let (mut tb, mut fb) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..5 {
        let t = Instant::now();
        let mut ov = ArrayViewMut::from_slice(&mut o, &shape).unwrap();
        match r {
            "cholesky" => cholesky(
                Triangle::Lower,
                &ArrayView::from_slice(&spd, &shape).unwrap(),
                &mut ov,
                &Exec::SEQ,
            ),
            "lu" => lu(
                &ArrayView::from_slice(&a, &shape).unwrap(),
                &mut ov,
                &mut ArrayViewMut::from_slice(&mut piv, &[count, n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut perm, &[count, n]).unwrap(),
                &Exec::SEQ,
            ),
            _ => solve_triangular(
                Triangle::Lower,
                false,
                false,
                &ArrayView::from_slice(&spd, &shape).unwrap(),
                &ArrayView::from_slice(&a, &shape).unwrap(),
                &mut ov,
                &Exec::SEQ,
            ),
        }
        .unwrap();
        tb = tb.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for b in 0..count {
            match r {
                "cholesky" => {
                    std::hint::black_box(fs[b].llt(faer::Side::Lower).unwrap());
                }
                "lu" => {
                    std::hint::black_box(fa[b].partial_piv_lu());
                }
                _ => {
                    let mut x = fa[b].clone();
                    fs[b].solve_lower_triangular_in_place(&mut x);
                    std::hint::black_box(x);
                }
            }
        }
        fb = fb.min(t.elapsed().as_secs_f64());
    }
    println!("batch {r} {count}×{n}×{n}: tessera {:.1} ns/matrix, faer {:.1} ns/matrix, faer/tessera {:.2}", tb / count as f64 * 1e9, fb / count as f64 * 1e9, fb / tb);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("batch") {
        let n = args[3].parse().unwrap();
        batch(&args[2], n, 100_000);
        return;
    }
    let r = args.get(1).map(String::as_str).unwrap_or("cholesky");
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let secs: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let mut s = 1u64;
    let mut rnd = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let a: Vec<f64> = (0..n * n).map(|_| rnd()).collect();
    let mut spd = vec![0f64; n * n];
    for i in 0..n {
        for j in 0..n {
            spd[i * n + j] =
                if i == j { n as f64 } else { 0.0 } + a[i * n + j] * a[j * n + i] * 0.1;
        }
    }
    let mut o1 = vec![0f64; n * n];
    let mut o2 = vec![0f64; n * n];
    let mut piv = vec![0i64; n];
    let mut perm = vec![0i64; n];
    let mut piv_f = vec![0f64; n];
    let mut wc = vec![num_complex::Complex::<f64>::default(); n];
    let mut vc = vec![num_complex::Complex::<f64>::default(); n * n];
    let av = ArrayView::from_slice(&a, &[n, n]).unwrap();
    let sv = ArrayView::from_slice(&spd, &[n, n]).unwrap();
    let exec = Exec::SEQ;
    let t0 = Instant::now();
    let mut best = f64::INFINITY;
    let mut calls = 0;
    while t0.elapsed().as_secs_f64() < secs {
        let t = Instant::now();
        match r {
            "cholesky" => cholesky(
                Triangle::Lower,
                &sv,
                &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                &exec,
            )
            .unwrap(),
            "lu" => lu(
                &av,
                &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut piv, &[n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut perm, &[n]).unwrap(),
                &exec,
            )
            .unwrap(),
            "qr" => qr(
                &av,
                &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut o2, &[n, n]).unwrap(),
                &exec,
            )
            .unwrap(),
            "eigh" => eigh(
                &sv,
                &mut ArrayViewMut::from_slice(&mut piv_f, &[n]).unwrap(),
                Some(&mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap()),
                &exec,
            )
            .unwrap(),
            "svd" => svd(
                &av,
                &mut ArrayViewMut::from_slice(&mut piv_f, &[n]).unwrap(),
                Some((
                    &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut o2, &[n, n]).unwrap(),
                )),
                &exec,
            )
            .unwrap(),
            "eig" => eig(
                &av,
                &mut ArrayViewMut::from_slice(&mut wc, &[n]).unwrap(),
                Some(&mut ArrayViewMut::from_slice(&mut vc, &[n, n]).unwrap()),
                &exec,
            )
            .unwrap(),
            "solve" => solve_triangular(
                Triangle::Lower,
                false,
                false,
                &sv,
                &av,
                &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                &exec,
            )
            .unwrap(),
            _ => tessera::matmul(
                &av,
                &sv,
                &mut ArrayViewMut::from_slice(&mut o1, &[n, n]).unwrap(),
                &exec,
            )
            .unwrap(),
        }
        best = best.min(t.elapsed().as_secs_f64());
        calls += 1;
    }
    let fa = faer::Mat::<f64>::from_fn(n, n, |i, j| a[i * n + j]);
    let fs = faer::Mat::<f64>::from_fn(n, n, |i, j| spd[i * n + j]);
    faer::set_global_parallelism(faer::Par::Seq);
    let mut fbest = f64::INFINITY;
    let t0 = Instant::now();
    while t0.elapsed().as_secs_f64() < secs && std::env::var("FAER").is_ok() {
        let t = Instant::now();
        match r {
            "cholesky" => {
                std::hint::black_box(fs.llt(faer::Side::Lower).unwrap());
            }
            "lu" => {
                std::hint::black_box(fa.partial_piv_lu());
            }
            "qr" => {
                let q = fa.qr();
                std::hint::black_box((q.compute_Q(), q.R()));
            }
            "solve" => {
                let mut x = fa.clone();
                fs.solve_lower_triangular_in_place(&mut x);
                std::hint::black_box(x);
            }
            _ => {
                std::hint::black_box(&fa * &fs);
            }
        }
        fbest = fbest.min(t.elapsed().as_secs_f64());
    }
    println!(
        "faer {:.2} ms, faer/tessera {:.2}",
        fbest * 1e3,
        fbest / best
    );
    let flops = match r {
        "cholesky" => n * n * n / 3,
        "lu" => 2 * n * n * n / 3,
        "qr" => 4 * n * n * n / 3 * 2,
        "solve" => n * n * n,
        _ => 2 * n * n * n,
    } as f64;
    println!(
        "{r} n={n}: best {:.2} ms over {calls} calls, {:.1} GF/s",
        best * 1e3,
        flops / best / 1e9
    );
}
