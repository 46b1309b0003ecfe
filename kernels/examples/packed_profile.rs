//! Times casts between f32 and the packed dtypes in cache and from memory:
//! `cargo run --release -p tessera --example packed_profile [-- DTYPE...]`.
use tessera::cast;
use tessera::{ArrayView, ArrayViewMut, CastMode, DType, Exec};
fn main() {
    let names: Vec<String> = std::env::args().skip(1).collect();
    let names = if names.is_empty() {
        ["u1", "u4", "i4", "e2m1fn", "u8"]
            .map(String::from)
            .to_vec()
    } else {
        names
    };
    let exec = Exec::default().threads(1);
    for n in [1usize << 16, 1 << 24] {
        let xs: Vec<f32> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f32 * 0.013 - 6.0)
            .collect();
        let mut back = vec![0f32; n];
        for name in &names {
            let d = DType::from_name(name).unwrap();
            let vpb = d.info().values_per_byte as usize;
            let bytes = n * d.info().bits as usize / 8;
            let mut packed = vec![0u8; bytes.max(n / vpb)];
            let reps = (1usize << 28) / n;
            let time = |f: &mut dyn FnMut()| {
                f();
                let t = std::time::Instant::now();
                for _ in 0..reps {
                    f();
                }
                t.elapsed().as_secs_f64() * 1e9 / (reps * n) as f64
            };
            let enc = time(&mut || {
                let x = ArrayView::from_slice(&xs, &[n]).unwrap();
                let mut y = ArrayViewMut::contiguous(d, &[n], &mut packed).unwrap();
                cast(CastMode::Default, &x, &mut y, &exec).unwrap();
            });
            let dec = time(&mut || {
                let x = ArrayView::contiguous(d, &[n], &packed).unwrap();
                let mut y = ArrayViewMut::from_slice(&mut back, &[n]).unwrap();
                cast(CastMode::Default, &x, &mut y, &exec).unwrap();
            });
            println!("n={n:>9} {name:>7}: f32->D {enc:.3} ns/value, D->f32 {dec:.3} ns/value");
        }
    }
}
