//! Times the MX encode of each MX format from contiguous f32, one thread:
//! `cargo run --release -p tessera --example mx_profile [-- VALUES [SECONDS]]`
//! (default 262144 values, in cache, for 2 s each; the fastest call, ns/value).
use tessera::formats::{encode, encoded_sizes};
use tessera::{ArrayView, Exec, Format};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(1 << 18);
    let secs: f64 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(2.0);
    let exec = Exec::default().threads(1);
    let xs: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 * 0.013 - 6.0)
        .collect();
    for name in ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp4", "mxint8"] {
        let f = Format::from_name(name).unwrap();
        let s = encoded_sizes(f, &[n]).unwrap();
        let mut c = vec![0u8; s.code_bytes];
        let mut sc = vec![0u8; s.blocks];
        let x = ArrayView::from_slice(&xs, &[n]).unwrap();
        let mut best = f64::INFINITY;
        let t0 = std::time::Instant::now();
        while t0.elapsed().as_secs_f64() < secs {
            let t = std::time::Instant::now();
            encode(f, None, &x, &mut c, &mut sc, &exec).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{name:>12}: {:.3} ns/value", best * 1e9 / n as f64);
    }
}
