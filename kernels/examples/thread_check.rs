//! Same bits at every thread count, and how the time scales: runs one large
//! call of each engine (elementwise, map, reduce, scan, contraction, FFT,
//! sort, scatter-add, unique) with 1, 2, 4, 8 and 16 threads (those up to
//! the machine's), compares every output with the one-thread output byte for
//! byte, and prints each time and the speed-up over one thread. Exits 1 on
//! any difference.
//!
//! `cargo run --release -p tessera --example thread_check [-- SCALE]`
//! (SCALE, default 1, multiplies every problem's size).

use num_complex::Complex32;
use std::time::Instant;
use tessera::fft::{c2c, Direction, Norm};
use tessera::reduce::ScanOp;
use tessera::{
    contract, elementwise, map, reduce, scatter, sort, unique, ArrayView, ArrayViewMut, Combine,
    ContractSpec, DType, Exec, Kind, Program, ReduceOp,
};
use tessera_testkit::rng::Rng;

fn floats(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.spread() as f32).collect()
}

/// One engine's call: fills its outputs (as bytes) with `threads` threads.
type Job<'a> = Box<dyn Fn(&Exec) -> Vec<u8> + 'a>;

fn bytes<T: tessera::Element>(v: &[T]) -> Vec<u8> {
    tessera::array::as_bytes(v).to_vec()
}

fn main() {
    let scale: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1)
        .max(1);
    let n = scale << 24;
    let a = floats(n, 1);
    let b = floats(n, 2);
    let dim = 768 * scale.min(4);
    let ma = floats(dim * dim, 3);
    let mb = floats(dim * dim, 4);
    let lines = 256 * scale;
    let fft_n = 4096;
    let signal: Vec<Complex32> = floats(2 * lines * fft_n, 5)
        .chunks(2)
        .map(|c| Complex32::new(c[0], c[1]))
        .collect();
    let mut rng = Rng::new(6);
    let keys: Vec<u64> = (0..n / 4).map(|_| rng.below(1 << 20)).collect();
    let positions: Vec<i64> = (0..n / 4).map(|_| rng.below(1 << 16) as i64).collect();
    let program = Program::parse("y0 = sqrt(x0 * x1 + x1) - x0", &[DType::F32, DType::F32])
        .expect("the program parses");
    let max_threads = rayon::current_num_threads();
    let counts: Vec<usize> = [1, 2, 4, 8, 16]
        .into_iter()
        .filter(|&t| t <= max_threads)
        .collect();
    println!(
        "tier {}, {max_threads} threads available, scale {scale}",
        tessera::active_tier()
    );
    let jobs: Vec<(&str, Job)> = vec![
        (
            "elementwise add f32",
            Box::new(|e| {
                let mut y = vec![0f32; n];
                let ins = [
                    ArrayView::from_slice(&a, &[n]).unwrap(),
                    ArrayView::from_slice(&b, &[n]).unwrap(),
                ];
                elementwise(
                    Kind::Add,
                    &ins,
                    &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
                    e,
                )
                .unwrap();
                bytes(&y)
            }),
        ),
        (
            "map sqrt(x0*x1+x1)-x0",
            Box::new(|e| {
                let mut y = vec![0f32; n];
                let ins = [
                    ArrayView::from_slice(&a, &[n]).unwrap(),
                    ArrayView::from_slice(&b, &[n]).unwrap(),
                ];
                map(
                    &program,
                    &ins,
                    &mut [ArrayViewMut::from_slice(&mut y, &[n]).unwrap()],
                    e,
                )
                .unwrap();
                bytes(&y)
            }),
        ),
        (
            "reduce sum f32 (rows)",
            Box::new(|e| {
                let rows = 64;
                let mut y = vec![0f32; rows];
                reduce(
                    ReduceOp::Sum,
                    &[1],
                    &ArrayView::from_slice(&a, &[rows, n / rows]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut y, &[rows]).unwrap(),
                    e,
                )
                .unwrap();
                let mut all = [0f32];
                reduce(
                    ReduceOp::Sum,
                    &[0],
                    &ArrayView::from_slice(&a, &[n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut all, &[]).unwrap(),
                    e,
                )
                .unwrap();
                let mut out = bytes(&y);
                out.extend(bytes(&all));
                out
            }),
        ),
        (
            "scan sum f32",
            Box::new(|e| {
                let mut y = vec![0f32; n];
                tessera::reduce::scan(
                    ScanOp::Sum,
                    0,
                    &ArrayView::from_slice(&a, &[n]).unwrap(),
                    None,
                    &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
                    e,
                )
                .unwrap();
                bytes(&y)
            }),
        ),
        (
            "contract f32 (gemm)",
            Box::new(|e| {
                let mut y = vec![0f32; dim * dim];
                contract(
                    &ContractSpec::matmul(2, DType::F32),
                    &ArrayView::from_slice(&ma, &[dim, dim]).unwrap(),
                    &ArrayView::from_slice(&mb, &[dim, dim]).unwrap(),
                    None,
                    &mut ArrayViewMut::from_slice(&mut y, &[dim, dim]).unwrap(),
                    e,
                )
                .unwrap();
                bytes(&y)
            }),
        ),
        (
            "fft c2c c64 (lines of 4096)",
            Box::new(|e| {
                let mut y = vec![Complex32::new(0.0, 0.0); lines * fft_n];
                c2c(
                    &[1],
                    Direction::Forward,
                    Norm::None,
                    &ArrayView::from_slice(&signal, &[lines, fft_n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut y, &[lines, fft_n]).unwrap(),
                    e,
                )
                .unwrap();
                bytes(&y)
            }),
        ),
        (
            "sort f32",
            Box::new(|e| {
                let mut y = vec![0f32; n / 4];
                sort(
                    0,
                    false,
                    &ArrayView::from_slice(&a[..n / 4], &[n / 4]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut y, &[n / 4]).unwrap(),
                    None,
                    e,
                )
                .unwrap();
                bytes(&y)
            }),
        ),
        (
            "scatter add f32",
            Box::new(|e| {
                let into = vec![0f32; 1 << 16];
                let mut y = vec![0f32; 1 << 16];
                scatter(
                    Combine::Add,
                    0,
                    &ArrayView::from_slice(&into, &[1 << 16]).unwrap(),
                    &ArrayView::from_slice(&positions, &[n / 4]).unwrap(),
                    &ArrayView::from_slice(&a[..n / 4], &[n / 4]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut y, &[1 << 16]).unwrap(),
                    e,
                )
                .unwrap();
                bytes(&y)
            }),
        ),
        (
            "unique u64 keys",
            Box::new(|e| {
                let m = keys.len();
                let (mut ids, mut first, mut cnt) = (vec![0i64; m], vec![0i64; m], vec![0i64; m]);
                let count = [unique(
                    &ArrayView::from_slice(&keys, &[m, 1]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut ids, &[m]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut first, &[m]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut cnt, &[m]).unwrap(),
                    e,
                )
                .unwrap() as i64];
                let mut out = bytes(&ids);
                out.extend(bytes(&first));
                out.extend(bytes(&cnt));
                out.extend(bytes(&count));
                out
            }),
        ),
    ];
    let mut failed = false;
    for (name, job) in &jobs {
        let mut reference: Option<Vec<u8>> = None;
        let mut one = 0.0;
        let mut line = format!("{name:<30}");
        for &t in &counts {
            let exec = Exec::default().threads(t);
            job(&exec); // warm: pages, plans, pools
            let start = Instant::now();
            let out = job(&exec);
            let secs = start.elapsed().as_secs_f64();
            if t == 1 {
                one = secs;
            }
            let same = match &reference {
                None => {
                    reference = Some(out);
                    true
                }
                Some(r) => *r == out,
            };
            failed |= !same;
            line.push_str(&format!(
                "  {t:>2}t {:>8.2} ms ×{:>5.2}{}",
                secs * 1e3,
                one / secs,
                if same { "" } else { " DIFFERENT BITS" }
            ));
        }
        println!("{line}");
    }
    if failed {
        eprintln!("thread_check: some output changed with the thread count");
        std::process::exit(1);
    }
    println!("thread_check: every output has the one-thread bits");
}
