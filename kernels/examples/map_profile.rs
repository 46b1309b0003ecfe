//! Times one fused program over a large f32 array (for profiling the map
//! executor): `cargo run --release -p tessera --example map_profile`.
use tessera::{map, ArrayView, ArrayViewMut, DType, Exec, Program};
fn main() {
    #[cfg(target_arch = "x86_64")]
    reference_loop();
    let n = 1 << 24;
    let x0: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.01).collect();
    let x1: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.02).collect();
    let mut y = vec![0f32; n];
    let p = Program::parse("y0 = sqrt(x0 * x1 + x1) - x0", &[DType::F32, DType::F32]).unwrap();
    let exec = Exec::default().threads(1);
    let v0 = ArrayView::from_slice(&x0, &[n]).unwrap();
    let v1 = ArrayView::from_slice(&x1, &[n]).unwrap();
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let t = std::time::Instant::now();
    for _ in 0..reps {
        let mut out = [ArrayViewMut::from_slice(&mut y, &[n]).unwrap()];
        map(&p, &[v0.clone(), v1.clone()], &mut out, &exec).unwrap();
    }
    let s = t.elapsed().as_secs_f64() / reps as f64;
    println!(
        "{:.3} Gelem/s ({:.2} ms per call)",
        n as f64 / s / 1e9,
        s * 1e3
    );
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn handwritten(a: &[f32], b: &[f32], y: &mut [f32]) {
    for ((o, &p), &q) in y.iter_mut().zip(a).zip(b) {
        *o = (p * q + q).sqrt() - p;
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(dead_code)]
fn reference_loop() {
    let n = 1 << 24;
    let x0: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.01).collect();
    let x1: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.02).collect();
    let mut y = vec![0f32; n];
    let t = std::time::Instant::now();
    for _ in 0..10 {
        // SAFETY: probe only.
        unsafe { handwritten(&x0, &x1, &mut y) };
    }
    let s = t.elapsed().as_secs_f64() / 10.0;
    println!("hand-written fused loop: {:.3} Gelem/s", n as f64 / s / 1e9);
}
