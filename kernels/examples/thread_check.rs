//! Same bits at every thread count, and how the time scales: runs elementwise
//! kinds and casts over large arrays with 1, 2, 4, 8 and 16 threads (capped at
//! the machine's), compares every output with the one-thread output byte for
//! byte, and prints the time of each. Exits 1 on any difference.
//!
//! `cargo run --release -p tessera --example thread_check [-- MIB]`

use std::time::Instant;
use tessera::cast;
use tessera::elementwise;
use tessera::{ArrayView, ArrayViewMut, CastMode, DType, Exec, Kind};
use tessera_testkit::rng::Rng;

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let s = rng.next_u64();
            f32::from_bits(((s >> 32) as u32 & 0x3fff_ffff) | 0x3000_0000)
                * if s & 1 == 1 { -1.0 } else { 1.0 }
        })
        .collect()
}

fn main() {
    let mib: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(64);
    let n = mib * (1 << 20) / 4;
    let a = data(n, 1);
    let b = data(n, 2);
    let c = data(n, 3);
    let max_threads = rayon::current_num_threads();
    let counts: Vec<usize> = [1, 2, 4, 8, 16]
        .into_iter()
        .filter(|&t| t <= max_threads)
        .collect();
    println!(
        "tier {}, {} threads available, {} MiB per operand",
        tessera::active_tier(),
        max_threads,
        mib
    );
    let mut failed = false;
    type Job<'a> = Box<dyn Fn(usize, &mut [u8]) + 'a>;
    let jobs: Vec<(&str, usize, Job)> = vec![
        (
            "add f32",
            4,
            Box::new(|t, out: &mut [u8]| {
                let ins = [
                    ArrayView::from_slice(&a, &[n]).unwrap(),
                    ArrayView::from_slice(&b, &[n]).unwrap(),
                ];
                let mut o = ArrayViewMut::contiguous(DType::F32, &[n], out).unwrap();
                elementwise(Kind::Add, &ins, &mut o, &Exec::default().threads(t)).unwrap();
            }),
        ),
        (
            "fma f32 (2-D, strided rows)",
            4,
            Box::new(|t, out: &mut [u8]| {
                let rows = n / 1024;
                let ins = [
                    ArrayView::from_slice(&a, &[rows, 1024]).unwrap(),
                    ArrayView::from_slice_strided(&b, &[rows, 1024], &[1024, 1], 0).unwrap(),
                    ArrayView::from_slice(&c[..1024], &[1024]).unwrap(),
                ];
                let mut o = ArrayViewMut::contiguous(DType::F32, &[rows, 1024], out).unwrap();
                elementwise(Kind::Fma, &ins, &mut o, &Exec::default().threads(t)).unwrap();
            }),
        ),
        (
            "cast f32 -> e4m3fn",
            1,
            Box::new(|t, out: &mut [u8]| {
                let mut o = ArrayViewMut::contiguous(DType::E4m3fn, &[n], out).unwrap();
                cast(
                    CastMode::Default,
                    &ArrayView::from_slice(&a, &[n]).unwrap(),
                    &mut o,
                    &Exec::default().threads(t),
                )
                .unwrap();
            }),
        ),
        (
            "cast f32 -> bf16",
            2,
            Box::new(|t, out: &mut [u8]| {
                let mut o = ArrayViewMut::contiguous(DType::Bf16, &[n], out).unwrap();
                cast(
                    CastMode::Saturating,
                    &ArrayView::from_slice(&a, &[n]).unwrap(),
                    &mut o,
                    &Exec::default().threads(t),
                )
                .unwrap();
            }),
        ),
    ];
    for (name, item, job) in &jobs {
        let mut reference = vec![0u8; n * item];
        let mut out = vec![0u8; n * item];
        print!("{name:32}");
        for &t in &counts {
            let buf = if t == 1 { &mut reference } else { &mut out };
            job(t, buf);
            let start = Instant::now();
            let reps = 3;
            for _ in 0..reps {
                job(t, buf);
            }
            let ms = start.elapsed().as_secs_f64() * 1e3 / reps as f64;
            let same = t == 1 || out == reference;
            failed |= !same;
            print!(
                "  {t:2}t {ms:7.2} ms {}",
                if same { "same" } else { "DIFFERENT" }
            );
        }
        println!();
    }
    if failed {
        eprintln!("error: a thread count changed the bits");
        std::process::exit(1);
    }
    println!("every thread count gave the same bits");
}
