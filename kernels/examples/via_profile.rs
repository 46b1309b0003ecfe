//! Times `exp` on f16 and on strided f32 (the kinds that run their f32
//! kernel over blocks of decoded values):
//! `cargo run --release -p tessera --example via_profile`.
use tessera::elementwise;
use tessera::{ArrayView, ArrayViewMut, Exec, Kind};
fn main() {
    let n = 1 << 22;
    let exec = Exec::default().threads(1);
    let xs: Vec<f32> = (0..2 * n).map(|i| (i % 1000) as f32 * 0.01 - 5.0).collect();
    let xh: Vec<half::f16> = xs[..n].iter().map(|&v| half::f16::from_f32(v)).collect();
    let mut yh = vec![half::f16::ZERO; n];
    let mut ys = vec![0f32; n];
    let time = |f: &mut dyn FnMut()| {
        f();
        let t = std::time::Instant::now();
        for _ in 0..10 {
            f();
        }
        n as f64 * 10.0 / t.elapsed().as_secs_f64() / 1e9
    };
    let h = time(&mut || {
        let x = ArrayView::from_slice(&xh, &[n]).unwrap();
        let mut y = ArrayViewMut::from_slice(&mut yh, &[n]).unwrap();
        elementwise(Kind::Exp, &[x], &mut y, &exec).unwrap();
    });
    let s = time(&mut || {
        let x = ArrayView::from_slice_strided(&xs, &[n], &[2], 0).unwrap();
        let mut y = ArrayViewMut::from_slice(&mut ys, &[n]).unwrap();
        elementwise(Kind::Exp, &[x], &mut y, &exec).unwrap();
    });
    println!("exp f16: {h:.3} Gelem/s; exp f32 stride 2: {s:.3} Gelem/s");
}
