//! Profiling helper: one attention case (decode, or causal prefill) run
//! `reps` times on one thread; prints the best time. `TK` sets decode's
//! key count.
use tessera::attention::{attention, programs, Kv};
use tessera::{ArrayView, ArrayViewMut, DType, Exec};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let decode = args.get(1).map(|s| s == "decode").unwrap_or(true);
    let tkd: usize = std::env::var("TK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(32768);
    let (hq, hk, tq, tk, d) = if decode {
        (32, 8, 1, tkd, 128)
    } else {
        (32, 8, 2048, 2048, 128)
    };
    let q: Vec<f32> = (0..hq * tq * d)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5)
        .collect();
    let k: Vec<f32> = (0..hk * tk * d)
        .map(|i| ((i * 104729) % 1000) as f32 / 1000.0 - 0.5)
        .collect();
    let v = k.clone();
    let mut o = vec![0f32; hq * tq * d];
    let mut lse = vec![0f32; hq * tq];
    let prog = if decode {
        programs::full(DType::F32).unwrap()
    } else {
        programs::causal(DType::F32, 3, 0).unwrap()
    };
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = std::time::Instant::now();
        let qv = ArrayView::from_slice(&q, &[hq, tq, d]).unwrap();
        let kv = Kv {
            k: ArrayView::from_slice(&k, &[hk, tk, d]).unwrap(),
            v: ArrayView::from_slice(&v, &[hk, tk, d]).unwrap(),
        };
        let mut ov = ArrayViewMut::from_slice(&mut o, &[hq, tq, d]).unwrap();
        let mut lv = ArrayViewMut::from_slice(&mut lse, &[hq, tq]).unwrap();
        attention(
            &prog,
            0.088,
            &qv,
            &kv,
            &[],
            None,
            &mut ov,
            &mut lv,
            &Exec::SEQ,
        )
        .unwrap();
        best = best.min(t.elapsed().as_secs_f64());
    }
    let bytes = (2 * hk * tk * d * 4) as f64;
    let flops = 4.0 * (hq * tq * tk * d) as f64 / if decode { 1.0 } else { 2.0 };
    println!(
        "{} {:.3} ms, K,V {:.2} GB/s, {:.1} GFLOP/s",
        if decode { "decode" } else { "prefill causal" },
        best * 1e3,
        bytes / best / 1e9,
        flops / best / 1e9
    );
}
