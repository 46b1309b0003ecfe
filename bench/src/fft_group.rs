//! The `fft` group: tessera's transforms beside `rustfft` (complex) and
//! `realfft` (real), in one process, in GFLOP/s (5·N·log₂N per transform of
//! N points, halved for the real ones, over the best sample), with the ratio
//! tessera / peer (above 1: tessera faster).
//!
//! Cases: c2c f32 and f64 at n = 64, 1024, 4096, 65536, 2^20, 1000, 4093
//! (prime), 5183 (71·73), 49152 (2^14·3), each an in-place line through the
//! plan objects (`FftPlan::run_with_scratch`, rustfft's
//! `process_with_scratch`); r2c and c2r f32 at 4096 and 2^20
//! (`RealFftPlan` against realfft); the 2-D 1024×1024 c2c and r2c f32
//! through the array API (`tessera::fft::c2c` / `r2c` over axes [0, 1],
//! out of place) against rustfft/realfft along the rows, a transpose, the
//! other axis, and a transpose back; a batch of 1024-point c2c f32 lines
//! filling 32 MiB (tessera over axis 1 of a [4096, 1024] array, rustfft over
//! the buffer). The batch and 2-D rows also run tessera at 2 threads (the
//! peers have no threads of their own). Each tessera result is checked
//! against the peer's within a relative L2 of 1e-4 (f32) or 1e-12 (f64)
//! before timing. Samples alternate between peers in 5 rounds, each sample
//! at least 0.05 s of calls (`--quick`: a handful of small cases, one round).
//! Every timed call refills its input with `tessera::copy::copy_slice`
//! (blocks of 1 KiB to 4 MiB in 1 KiB pieces), whose speed does not hang on
//! where the allocator put the buffers.

use crate::chart::Chart;
use realfft::RealFftPlanner;
use rustfft::num_complex::Complex;
use rustfft::FftPlanner as RustPlanner;
use std::time::Instant;
use tessera::copy::copy_slice;
use tessera::fft::{Direction, FftPlan, FftPlanner, Norm, RealFftPlan};
use tessera::{ArrayView, ArrayViewMut, Exec};
use tessera_testkit::rng::Rng;

/// The group's name on the command line.
pub const NAME: &str = "fft";

/// Seconds per sample.
fn sample_s(quick: bool) -> f64 {
    if quick {
        0.005
    } else {
        0.05
    }
}

/// Best seconds per call of each closure, sampled alternately.
fn race(fs: &mut [&mut dyn FnMut()], quick: bool) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; fs.len()];
    let mut reps = vec![1usize; fs.len()];
    for (i, f) in fs.iter_mut().enumerate() {
        let t = Instant::now();
        f();
        let dt = t.elapsed().as_secs_f64().max(1e-9);
        reps[i] = ((sample_s(quick) / dt).ceil() as usize).max(1);
    }
    let rounds = if quick { 1 } else { 5 };
    for _ in 0..rounds {
        for (i, f) in fs.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..reps[i] {
                f();
            }
            best[i] = best[i].min(t.elapsed().as_secs_f64() / reps[i] as f64);
        }
    }
    best
}

fn rel_l2<T: Copy + Into<f64>>(a: &[Complex<T>], b: &[Complex<T>]) -> f64 {
    let mut num = 0.0;
    let mut den = 0.0;
    for (x, y) in a.iter().zip(b) {
        let (xr, xi, yr, yi): (f64, f64, f64, f64) =
            (x.re.into(), x.im.into(), y.re.into(), y.im.into());
        num += (xr - yr).powi(2) + (xi - yi).powi(2);
        den += yr * yr + yi * yi;
    }
    (num / den.max(1e-300)).sqrt()
}

trait F: tessera::fft::FftFloat + rustfft::FftNum + Into<f64> + realfft::FftNum {
    const NAME: &'static str;
    const TOL: f64;
    const DTYPE: tessera::DType;
}
impl F for f32 {
    const NAME: &'static str = "f32";
    const DTYPE: tessera::DType = tessera::DType::C64;
    const TOL: f64 = 1e-4;
}
impl F for f64 {
    const DTYPE: tessera::DType = tessera::DType::C128;
    const NAME: &'static str = "f64";
    const TOL: f64 = 1e-12;
}

fn rand_c<T: F>(rng: &mut Rng, n: usize) -> Vec<Complex<T>> {
    (0..n)
        .map(|_| {
            Complex::new(
                <T as tessera::fft::FftFloat>::from_f64(rng.unit() - 0.5),
                <T as tessera::fft::FftFloat>::from_f64(rng.unit() - 0.5),
            )
        })
        .collect()
}

struct Row {
    case: String,
    gflops: Vec<(String, f64)>,
    ok: bool,
}

fn flops(n: usize, count: usize, real: bool) -> f64 {
    let f = 5.0 * n as f64 * (n as f64).log2().max(1.0) * count as f64;
    if real {
        f / 2.0
    } else {
        f
    }
}

fn c2c_line<T: F>(n: usize, quick: bool, rng: &mut Rng) -> Row {
    let exec = Exec::SEQ;
    let plan: std::sync::Arc<FftPlan<T>> = FftPlanner::new()
        .plan::<T>(n, Direction::Forward)
        .expect("plan");
    let rplan = RustPlanner::<T>::new().plan_fft_forward(n);
    let x = rand_c::<T>(rng, n);
    let mut a = x.clone();
    let mut b = x.clone();
    let mut sa = vec![Complex::new(T::ZERO, T::ZERO); plan.scratch_len()];
    let mut sb = vec![Complex::new(T::ZERO, T::ZERO); rplan.get_inplace_scratch_len()];
    plan.run_with_scratch(&mut a, &mut sa, &exec)
        .expect("tessera");
    rplan.process_with_scratch(&mut b, &mut sb);
    let ok = rel_l2(&a, &b) <= T::TOL;
    let mut ft = || {
        copy_slice(&mut a, &x);
        plan.run_with_scratch(&mut a, &mut sa, &exec)
            .expect("tessera");
    };
    let mut fr = || {
        copy_slice(&mut b, &x);
        rplan.process_with_scratch(&mut b, &mut sb);
    };
    let t = race(&mut [&mut ft, &mut fr], quick);
    one_line_row(
        format!("c2c {} n={n} ({:?})", T::NAME, plan.algorithm()),
        n,
        &t,
        ok,
    )
}

/// The row of one line's transform: tessera's and rustfft's GFLOP/s from
/// their times `t`.
fn one_line_row(case: String, n: usize, t: &[f64], ok: bool) -> Row {
    let fl = flops(n, 1, false);
    Row {
        case,
        gflops: vec![
            ("tessera".into(), fl / t[0] / 1e9),
            ("rustfft".into(), fl / t[1] / 1e9),
        ],
        ok,
    }
}

/// One line from an operand into a separate result (`fft::c2c` of views),
/// beside rustfft in place: a four-step line so run keeps its matrix in the
/// result (no copy back, no n-point scratch).
fn c2c_apart_line<T: F>(n: usize, quick: bool, rng: &mut Rng) -> Row
where
    Complex<T>: tessera::Element,
{
    let exec = Exec::SEQ;
    let plan = tessera::fft::NdPlan::c2c(&[0], Direction::Forward, Norm::None, &[n], T::DTYPE)
        .expect("plan");
    let rplan = RustPlanner::<T>::new().plan_fft_forward(n);
    let x = rand_c::<T>(rng, n);
    let mut y = vec![Complex::new(T::ZERO, T::ZERO); n];
    let mut b = x.clone();
    let mut sb = vec![Complex::new(T::ZERO, T::ZERO); rplan.get_inplace_scratch_len()];
    let mut scratch = tessera::Scratch::new();
    let xv = ArrayView::from_slice(&x, &[n]).expect("view");
    let mut run = |y: &mut [Complex<T>]| {
        plan.run_with_scratch(
            &xv,
            &mut ArrayViewMut::from_slice(y, &[n]).expect("view"),
            &mut scratch,
            &exec,
        )
        .expect("tessera");
    };
    run(&mut y);
    rplan.process_with_scratch(&mut b, &mut sb);
    let ok = rel_l2(&y, &b) <= T::TOL;
    let mut ft = || run(&mut y);
    let mut fr = || {
        copy_slice(&mut b, &x);
        rplan.process_with_scratch(&mut b, &mut sb);
    };
    let t = race(&mut [&mut ft, &mut fr], quick);
    one_line_row(format!("c2c {} n={n} x → y", T::NAME), n, &t, ok)
}

fn real_line(n: usize, quick: bool, rng: &mut Rng) -> Vec<Row> {
    let exec = Exec::SEQ;
    let nb = n / 2 + 1;
    let x: Vec<f32> = (0..n).map(|_| rng.unit() as f32 - 0.5).collect();
    let fwd = RealFftPlan::<f32>::new(n, Direction::Forward).expect("plan");
    let inv = RealFftPlan::<f32>::new(n, Direction::Inverse).expect("plan");
    let mut rp = RealFftPlanner::<f32>::new();
    let rf = rp.plan_fft_forward(n);
    let ri = rp.plan_fft_inverse(n);
    let zero = Complex::new(0.0f32, 0.0);
    let mut s = vec![zero; fwd.scratch_len().max(inv.scratch_len())];
    let mut rs = vec![zero; rf.get_scratch_len().max(ri.get_scratch_len())];
    let (mut ya, mut yb) = (vec![zero; nb], vec![zero; nb]);
    let mut xin = x.clone();
    fwd.r2c_with_scratch(&x, &mut ya, &mut s, &exec)
        .expect("r2c");
    rf.process_with_scratch(&mut xin, &mut yb, &mut rs)
        .expect("realfft");
    let ok1 = rel_l2(&ya, &yb) <= 1e-4;
    let (mut za, mut zb) = (vec![0.0f32; n], vec![0.0f32; n]);
    inv.c2r_with_scratch(&ya, &mut za, &mut s, &exec)
        .expect("c2r");
    let mut yc = ya.to_vec();
    ri.process_with_scratch(&mut yc, &mut zb, &mut rs)
        .expect("realfft");
    let zc: Vec<Complex<f32>> = za.iter().map(|&v| Complex::new(v, 0.0)).collect();
    let zd: Vec<Complex<f32>> = zb.iter().map(|&v| Complex::new(v, 0.0)).collect();
    let ok2 = rel_l2(&zc, &zd) <= 1e-4;
    let fl = flops(n, 1, true);
    let t = race(
        &mut [
            &mut || {
                fwd.r2c_with_scratch(&x, &mut ya, &mut s, &exec)
                    .expect("r2c")
            },
            &mut || {
                copy_slice(&mut xin, &x);
                rf.process_with_scratch(&mut xin, &mut yb, &mut rs)
                    .expect("realfft")
            },
        ],
        quick,
    );
    let r1 = Row {
        case: format!("r2c f32 n={n}"),
        gflops: vec![
            ("tessera".into(), fl / t[0] / 1e9),
            ("realfft".into(), fl / t[1] / 1e9),
        ],
        ok: ok1,
    };
    let t = race(
        &mut [
            &mut || {
                inv.c2r_with_scratch(&ya, &mut za, &mut s, &exec)
                    .expect("c2r")
            },
            &mut || {
                copy_slice(&mut yc, &ya);
                ri.process_with_scratch(&mut yc, &mut zb, &mut rs)
                    .expect("realfft")
            },
        ],
        quick,
    );
    let r2 = Row {
        case: format!("c2r f32 n={n}"),
        gflops: vec![
            ("tessera".into(), fl / t[0] / 1e9),
            ("realfft".into(), fl / t[1] / 1e9),
        ],
        ok: ok2,
    };
    vec![r1, r2]
}

/// A blocked transpose of an r × c matrix into c × r.
fn transpose<T: Copy>(src: &[T], dst: &mut [T], r: usize, c: usize) {
    const B: usize = 32;
    for i0 in (0..r).step_by(B) {
        for j0 in (0..c).step_by(B) {
            for i in i0..(i0 + B).min(r) {
                for j in j0..(j0 + B).min(c) {
                    dst[j * r + i] = src[i * c + j];
                }
            }
        }
    }
}

fn two_d(n: usize, quick: bool, rng: &mut Rng) -> Vec<Row> {
    let zero = Complex::new(0.0f32, 0.0);
    let x = rand_c::<f32>(rng, n * n);
    let mut y = vec![zero; n * n];
    let shape = [n, n];
    let run_t = |y: &mut [Complex<f32>], threads: usize| {
        tessera::fft::c2c(
            &[0, 1],
            Direction::Forward,
            Norm::None,
            &ArrayView::from_slice(&x, &shape).expect("view"),
            &mut ArrayViewMut::from_slice(y, &shape).expect("view"),
            &Exec::default().threads(threads),
        )
        .expect("c2c")
    };
    let rplan = RustPlanner::<f32>::new().plan_fft_forward(n);
    let mut rs = vec![zero; rplan.get_inplace_scratch_len()];
    let mut buf = x.clone();
    let mut tb = vec![zero; n * n];
    let mut peer = |buf: &mut Vec<Complex<f32>>, tb: &mut Vec<Complex<f32>>| {
        copy_slice(buf, &x);
        rplan.process_with_scratch(buf, &mut rs);
        transpose(buf, tb, n, n);
        rplan.process_with_scratch(tb, &mut rs);
        transpose(tb, buf, n, n);
    };
    let mut y2 = y.clone();
    run_t(&mut y, 1);
    peer(&mut buf, &mut tb);
    let ok = rel_l2(&y, &buf) <= 1e-4;
    let t = race(
        &mut [
            &mut || run_t(&mut y, 1),
            &mut || run_t(&mut y2, 2),
            &mut || peer(&mut buf, &mut tb),
        ],
        quick,
    );
    let fl = flops(n * n, 1, false);
    let mut rows = vec![Row {
        case: format!("c2c 2-D f32 {n}x{n}"),
        gflops: vec![
            ("tessera".into(), fl / t[0] / 1e9),
            ("rustfft+T".into(), fl / t[2] / 1e9),
            ("tessera 2thr".into(), fl / t[1] / 1e9),
        ],
        ok,
    }];
    // r2c 2-D: realfft along rows, transpose, rustfft along columns, transpose back.
    let nb = n / 2 + 1;
    let xr: Vec<f32> = (0..n * n).map(|_| rng.unit() as f32 - 0.5).collect();
    let mut yr = vec![zero; n * nb];
    let run_r = |y: &mut [Complex<f32>], threads: usize| {
        tessera::fft::r2c(
            &[0, 1],
            Norm::None,
            &ArrayView::from_slice(&xr, &shape).expect("view"),
            &mut ArrayViewMut::from_slice(y, &[n, nb]).expect("view"),
            &Exec::default().threads(threads),
        )
        .expect("r2c")
    };
    let rf = RealFftPlanner::<f32>::new().plan_fft_forward(n);
    let mut rfs = vec![zero; rf.get_scratch_len()];
    let mut xin = xr.clone();
    let mut pb = vec![zero; n * nb];
    let mut pt = vec![zero; n * nb];
    let mut peer_r = |pb: &mut Vec<Complex<f32>>, pt: &mut Vec<Complex<f32>>| {
        copy_slice(&mut xin, &xr);
        for (xl, yl) in xin.chunks_exact_mut(n).zip(pb.chunks_exact_mut(nb)) {
            rf.process_with_scratch(xl, yl, &mut rfs).expect("realfft");
        }
        transpose(pb, pt, n, nb);
        rplan.process_with_scratch(pt, &mut rs);
        transpose(pt, pb, nb, n);
    };
    let mut yr2 = yr.clone();
    run_r(&mut yr, 1);
    peer_r(&mut pb, &mut pt);
    let ok = rel_l2(&yr, &pb) <= 1e-4;
    let t = race(
        &mut [
            &mut || run_r(&mut yr, 1),
            &mut || run_r(&mut yr2, 2),
            &mut || peer_r(&mut pb, &mut pt),
        ],
        quick,
    );
    let fl = flops(n * n, 1, true);
    rows.push(Row {
        case: format!("r2c 2-D f32 {n}x{n}"),
        gflops: vec![
            ("tessera".into(), fl / t[0] / 1e9),
            ("realfft+T".into(), fl / t[2] / 1e9),
            ("tessera 2thr".into(), fl / t[1] / 1e9),
        ],
        ok,
    });
    rows
}

fn batch(lines: usize, quick: bool, rng: &mut Rng) -> Row {
    let n = 1024;
    let x = rand_c::<f32>(rng, n * lines);
    let zero = Complex::new(0.0f32, 0.0);
    let mut y = vec![zero; n * lines];
    let run_t = |y: &mut [Complex<f32>], threads: usize| {
        tessera::fft::c2c(
            &[1],
            Direction::Forward,
            Norm::None,
            &ArrayView::from_slice(&x, &[lines, n]).expect("view"),
            &mut ArrayViewMut::from_slice(y, &[lines, n]).expect("view"),
            &Exec::default().threads(threads),
        )
        .expect("c2c")
    };
    let rplan = RustPlanner::<f32>::new().plan_fft_forward(n);
    let mut rs = vec![zero; rplan.get_inplace_scratch_len()];
    let mut b = x.clone();
    let mut peer = |b: &mut Vec<Complex<f32>>| {
        copy_slice(b, &x);
        rplan.process_with_scratch(b, &mut rs);
    };
    let mut y2 = y.clone();
    run_t(&mut y, 1);
    peer(&mut b);
    let ok = rel_l2(&y, &b) <= 1e-4;
    let t = race(
        &mut [
            &mut || run_t(&mut y, 1),
            &mut || run_t(&mut y2, 2),
            &mut || peer(&mut b),
        ],
        quick,
    );
    let fl = flops(n, lines, false);
    Row {
        case: format!("c2c batch f32 {lines}x1024"),
        gflops: vec![
            ("tessera".into(), fl / t[0] / 1e9),
            ("rustfft".into(), fl / t[2] / 1e9),
            ("tessera 2thr".into(), fl / t[1] / 1e9),
        ],
        ok,
    }
}

/// Run the group; the table, whether every check passed, and the table as
/// a chart.
pub fn run(quick: bool) -> (String, bool, Chart) {
    let mut rng = Rng::for_label("bench fft", 1);
    let mut rows = Vec::new();
    let sizes: &[usize] = if quick {
        &[64, 1000, 4093]
    } else {
        &[
            64,
            1024,
            4096,
            65536,
            1 << 20,
            1 << 22,
            1000,
            4093,
            5183,
            3 << 14,
        ]
    };
    for &n in sizes {
        rows.push(c2c_line::<f32>(n, quick, &mut rng));
        rows.push(c2c_line::<f64>(n, quick, &mut rng));
        if n >= 1 << 22 {
            rows.push(c2c_apart_line::<f32>(n, quick, &mut rng));
            rows.push(c2c_apart_line::<f64>(n, quick, &mut rng));
        }
    }
    for &n in if quick {
        &[4096usize][..]
    } else {
        &[4096, 1 << 20][..]
    } {
        rows.extend(real_line(n, quick, &mut rng));
    }
    rows.extend(two_d(if quick { 128 } else { 1024 }, quick, &mut rng));
    rows.push(batch(if quick { 64 } else { 4096 }, quick, &mut rng));
    let mut out = format!(
        "{NAME}: GFLOP/s (5·N·log2 N per transform, halved for real ones; best of 5 alternating samples), one thread unless `2thr`; tier {}\n",
        tessera::active_tier()
    );
    out.push_str(&format!(
        "{:<44} {:>9} {:>10} {:>7} {:>13} {:>9}\n",
        "case", "tessera", "peer", "ratio", "tessera 2thr", "2thr/1thr"
    ));
    let mut chart = Chart::new(
        NAME,
        format!(
            "5·N·log₂N per transform (halved for real ones), one thread unless 2thr; tier {}",
            tessera::active_tier()
        ),
        "GFLOP/s",
    )
    .ratio_note("tessera (one thread) ÷ its peer (above 1: tessera faster)");
    let mut all_ok = true;
    for r in &rows {
        all_ok &= r.ok;
        let cells: Vec<(&str, Option<f64>)> = r
            .gflops
            .iter()
            .map(|(p, v)| (p.as_str(), Some(*v)))
            .collect();
        chart.add_row(
            format!("{}{}", r.case, if r.ok { "" } else { " FAILED" }),
            &cells,
            Some(r.gflops[0].1 / r.gflops[1].1),
        );
        let t = r.gflops[0].1;
        let p = r.gflops[1].1;
        let two = r.gflops.get(2).map(|g| g.1);
        out.push_str(&format!(
            "{:<44} {:>9.2} {:>10.2} {:>7.2} {:>13} {:>9}{}\n",
            r.case,
            t,
            p,
            t / p,
            two.map_or(String::new(), |v| format!("{v:.2}")),
            two.map_or(String::new(), |v| format!("{:.2}", v / t)),
            if r.ok {
                format!("  ({})", r.gflops[1].0)
            } else {
                "  FAILED: differs from the peer".into()
            }
        ));
    }
    (out, all_ok, chart)
}
