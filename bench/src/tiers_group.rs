//! The `tiers` group: every engine on every tier this CPU runs, one
//! thread, side by side, and the path each engine takes by default here
//! (`tessera::tier::engine_tier`: the host table of ARCHITECTURE.md §3).
//! Each case is one call on arrays that fit the second-level cache (so the
//! tier's code, not memory, sets the time), timed on each tier in turn,
//! best of alternating samples, after its results were checked to be the
//! scalar tier's bit for bit. A row whose default is more than 5% slower
//! than the faster vector tier is marked `SLOWER DEFAULT`: the host table
//! for this CPU should change.

use crate::chart::{speed_ratio, Chart};
use std::time::Instant;
use tessera::copy::copy_slice;
use tessera::fft::{Direction, FftPlan, FftPlanner};
use tessera::tier::{engine_tier, Engine};
use tessera::{ArrayView, ArrayViewMut, DType, Exec, Kind, Program, ReduceOp, ScanOp, Tier};
use tessera_testkit::rng::Rng;

/// The group's name on the command line.
pub const NAME: &str = "tiers";

/// A call on a given `Exec` that returns its results' bytes.
type Call = Box<dyn FnMut(&Exec) -> Vec<u8>>;

/// One case: an engine, a label, and its call.
struct Case {
    engine: Engine,
    label: String,
    call: Call,
}

fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: plain numbers of `size_of::<T>()` bytes each, read as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
        .to_vec()
}

fn f32s(rng: &mut Rng, n: usize, lo: f64, hi: f64) -> Vec<f32> {
    (0..n)
        .map(|_| (lo + (hi - lo) * rng.unit()) as f32)
        .collect()
}

fn f64s(rng: &mut Rng, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..n).map(|_| lo + (hi - lo) * rng.unit()).collect()
}

fn elementwise_case(kind: Kind, label: &str, a: Vec<f32>, b: Option<Vec<f32>>) -> Case {
    let n = a.len();
    let mut y = vec![0f32; n];
    Case {
        engine: Engine::Elementwise,
        label: label.to_string(),
        call: Box::new(move |exec| {
            let mut ins = vec![ArrayView::from_slice(&a, &[n]).expect("view")];
            if let Some(b) = &b {
                ins.push(ArrayView::from_slice(b, &[n]).expect("view"));
            }
            let mut out = ArrayViewMut::from_slice(&mut y, &[n]).expect("view");
            tessera::elementwise(kind, &ins, &mut out, exec).expect("elementwise");
            bytes_of(&y)
        }),
    }
}

fn cast_case(to: DType, label: &str, a: Vec<f32>) -> Case {
    let n = a.len();
    let mut y = vec![0u8; n * to.info().item_bytes];
    Case {
        engine: Engine::Cast,
        label: label.to_string(),
        call: Box::new(move |exec| {
            let src = ArrayView::from_slice(&a, &[n]).expect("view");
            let mut dst = ArrayViewMut::contiguous(to, &[n], &mut y).expect("view");
            tessera::cast(tessera::CastMode::Default, &src, &mut dst, exec).expect("cast");
            y.clone()
        }),
    }
}

/// The square product of two `s × s` matrices `a` and `b` of one dtype.
fn matmul_case<T: tessera::Element + Copy + Default + 'static>(
    label: &str,
    s: usize,
    a: Vec<T>,
    b: Vec<T>,
) -> Case {
    let mut c = vec![T::default(); s * s];
    Case {
        engine: Engine::Contract,
        label: format!("matmul {label} {s}^3"),
        call: Box::new(move |exec| {
            let av = ArrayView::from_slice(&a, &[s, s]).expect("view");
            let bv = ArrayView::from_slice(&b, &[s, s]).expect("view");
            let mut cv = ArrayViewMut::from_slice(&mut c, &[s, s]).expect("view");
            tessera::matmul(&av, &bv, &mut cv, exec).expect("matmul");
            bytes_of(&c)
        }),
    }
}

fn cases(rng: &mut Rng, quick: bool) -> Vec<Case> {
    let n = if quick { 1 << 12 } else { 1 << 16 };
    let mut v = vec![
        elementwise_case(
            Kind::Add,
            &format!("add f32 {n}"),
            f32s(rng, n, -1.0, 1.0),
            Some(f32s(rng, n, -1.0, 1.0)),
        ),
        elementwise_case(
            Kind::Exp,
            &format!("exp f32 {n}"),
            f32s(rng, n, -80.0, 80.0),
            None,
        ),
        elementwise_case(
            Kind::Sin,
            &format!("sin f32 {n}"),
            f32s(rng, n, -100.0, 100.0),
            None,
        ),
        cast_case(
            DType::Bf16,
            &format!("f32 -> bf16 {n}"),
            f32s(rng, n, -1e3, 1e3),
        ),
        cast_case(
            DType::E4m3fn,
            &format!("f32 -> e4m3fn {n}"),
            f32s(rng, n, -400.0, 400.0),
        ),
    ];
    {
        let (x0, x1) = (f32s(rng, n, 0.0, 4.0), f32s(rng, n, 0.0, 4.0));
        let p = Program::parse("y0 = sqrt(x0 * x1 + x1) - x0", &[DType::F32, DType::F32])
            .expect("program");
        let mut y = vec![0f32; n];
        v.push(Case {
            engine: Engine::Map,
            label: format!("sqrt(x0*x1+x1)-x0 f32 {n}"),
            call: Box::new(move |exec| {
                let ins = [
                    ArrayView::from_slice(&x0, &[n]).expect("view"),
                    ArrayView::from_slice(&x1, &[n]).expect("view"),
                ];
                let mut out = [ArrayViewMut::from_slice(&mut y, &[n]).expect("view")];
                tessera::map(&p, &ins, &mut out, exec).expect("map");
                bytes_of(&y)
            }),
        });
    }
    for (dt, label, m) in [
        (DType::F32, "f32", n),
        (DType::F64, "f64", n),
        (DType::F32, "f32", 16 * n),
        (DType::F64, "f64", 16 * n),
    ] {
        let x32 = f32s(rng, m, -1.0, 1.0);
        let x64 = f64s(rng, m, -1.0, 1.0);
        let mut s = vec![0u8; 8];
        v.push(Case {
            engine: Engine::Reduce,
            label: format!("sum {label} {m}"),
            call: Box::new(move |exec| {
                let x = if dt == DType::F32 {
                    ArrayView::from_slice(&x32, &[m]).expect("view")
                } else {
                    ArrayView::from_slice(&x64, &[m]).expect("view")
                };
                let bytes = dt.info().item_bytes;
                let mut d = ArrayViewMut::contiguous(dt, &[], &mut s[..bytes]).expect("view");
                tessera::reduce(ReduceOp::Sum, &[0], &x, &mut d, exec).expect("reduce");
                s.clone()
            }),
        });
    }
    {
        // Values alone: the vector quicksort on AVX-512 tiers, radix on
        // the others.
        let x = f32s(rng, n, -1.0, 1.0);
        let mut y = vec![0f32; n];
        v.push(Case {
            engine: Engine::Sort,
            label: format!("sort f32 {n}"),
            call: Box::new(move |exec| {
                let xv = ArrayView::from_slice(&x, &[n]).expect("view");
                let mut yv = ArrayViewMut::from_slice(&mut y, &[n]).expect("view");
                tessera::sort(0, false, &xv, &mut yv, None, exec).expect("sort");
                bytes_of(&y)
            }),
        });
        let x: Vec<i64> = (0..n).map(|_| rng.next_u64() as i64).collect();
        let mut y = vec![0i64; n];
        v.push(Case {
            engine: Engine::Sort,
            label: format!("sort i64 {n}"),
            call: Box::new(move |exec| {
                let xv = ArrayView::from_slice(&x, &[n]).expect("view");
                let mut yv = ArrayViewMut::from_slice(&mut y, &[n]).expect("view");
                tessera::sort(0, false, &xv, &mut yv, None, exec).expect("sort");
                bytes_of(&y)
            }),
        });
    }
    {
        let x = f32s(rng, n, -1.0, 1.0);
        let mut y = vec![0f32; n];
        v.push(Case {
            engine: Engine::Scan,
            label: format!("cumsum f32 {n}"),
            call: Box::new(move |exec| {
                let xv = ArrayView::from_slice(&x, &[n]).expect("view");
                let mut d = ArrayViewMut::from_slice(&mut y, &[n]).expect("view");
                tessera::scan(ScanOp::Sum, 0, &xv, None, &mut d, exec).expect("scan");
                bytes_of(&y)
            }),
        });
    }
    let s32 = if quick { 48 } else { 256 };
    let s64 = if quick { 48 } else { 192 };
    v.push(matmul_case(
        "f32",
        s32,
        f32s(rng, s32 * s32, -1.0, 1.0),
        f32s(rng, s32 * s32, -1.0, 1.0),
    ));
    v.push(matmul_case(
        "f64",
        s64,
        f64s(rng, s64 * s64, -1.0, 1.0),
        f64s(rng, s64 * s64, -1.0, 1.0),
    ));
    for len in [1024usize, 16384] {
        let len = if quick { len / 4 } else { len };
        let plan32: std::sync::Arc<FftPlan<f32>> = FftPlanner::new()
            .plan::<f32>(len, Direction::Forward)
            .expect("plan");
        let plan64: std::sync::Arc<FftPlan<f64>> = FftPlanner::new()
            .plan::<f64>(len, Direction::Forward)
            .expect("plan");
        let x32: Vec<num_complex::Complex<f32>> = (0..len)
            .map(|_| num_complex::Complex::new(rng.unit() as f32, rng.unit() as f32))
            .collect();
        let x64: Vec<num_complex::Complex<f64>> = (0..len)
            .map(|_| num_complex::Complex::new(rng.unit(), rng.unit()))
            .collect();
        let (mut a32, mut a64) = (x32.clone(), x64.clone());
        v.push(Case {
            engine: Engine::Fft,
            label: format!("c2c f32 {len}"),
            call: Box::new(move |exec| {
                copy_slice(&mut a32, &x32);
                plan32.run(&mut a32, exec).expect("fft");
                bytes_of(&a32)
            }),
        });
        v.push(Case {
            engine: Engine::Fft,
            label: format!("c2c f64 {len}"),
            call: Box::new(move |exec| {
                copy_slice(&mut a64, &x64);
                plan64.run(&mut a64, exec).expect("fft");
                bytes_of(&a64)
            }),
        });
    }
    // The byte engine: a full scan, UTF-8 validation and base64 encoding
    // of 256 KiB (64 KiB with --quick).
    let nb = if quick { 1 << 16 } else { 1 << 18 };
    let hay: Vec<u8> = (0..nb).map(|_| 1 + rng.below(255) as u8).collect();
    let text: Vec<u8> = "the naïve café 日本語 🦀 "
        .bytes()
        .cycle()
        .take(nb)
        .collect();
    let mut enc = vec![0u8; nb / 3 * 4 + 4];
    v.push(Case {
        engine: Engine::Bytes,
        label: format!("index_byte absent {nb}"),
        call: Box::new(move |exec| {
            let r = tessera::bytes::index_byte(&hay, 0, exec).expect("index_byte");
            format!("{r:?}").into_bytes()
        }),
    });
    let text2 = text.clone();
    v.push(Case {
        engine: Engine::Bytes,
        label: format!("utf8_valid_up_to {nb}"),
        call: Box::new(move |exec| {
            let r = tessera::bytes::utf8_valid_up_to(&text, exec).expect("utf8");
            r.to_le_bytes().to_vec()
        }),
    });
    v.push(Case {
        engine: Engine::Bytes,
        label: format!("base64 encode {nb}"),
        call: Box::new(move |exec| {
            let std64 = tessera::bytes::Base64::STANDARD;
            let k = tessera::bytes::base64_encode(&text2, &mut enc, std64, exec).expect("base64");
            enc[..k].to_vec()
        }),
    });
    v
}

/// The tier's column: its best seconds per call.
fn race(case: &mut Case, tiers: &[Tier], rounds: usize) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; tiers.len()];
    for _ in 0..rounds {
        for (i, &t) in tiers.iter().enumerate() {
            let exec = Exec::on(t).threads(1);
            let t0 = Instant::now();
            let mut reps = 0u32;
            // At least 5 ms per sample.
            while reps == 0 || t0.elapsed().as_secs_f64() < 5e-3 {
                std::hint::black_box((case.call)(&exec));
                reps += 1;
            }
            best[i] = best[i].min(t0.elapsed().as_secs_f64() / reps as f64);
        }
    }
    best
}

/// Runs the group: the table, whether every result matched the scalar
/// tier's and every default was the faster path, and the chart.
pub fn run(quick: bool) -> (String, bool, Chart) {
    let mut rng = Rng::for_label("bench tiers", 1);
    let tiers = tessera::available_tiers();
    let rounds = if quick { 1 } else { 7 };
    let mut out = format!(
        "tiers: every engine on every tier, one thread, µs per call (best of {rounds} alternating samples); \
         the default path on this CPU (host: {})\n{:<12} {:<26}",
        tessera::tier::host_description(),
        "engine",
        "case"
    );
    for t in &tiers {
        out += &format!(" {:>9}", t.name());
    }
    out += &format!(" {:>8} {:>8}\n", "default", "faster");
    let mut chart = Chart::new(NAME, "every engine on every tier, one thread", "µs/call")
        .lower_is_better()
        .ratio_note(
            "the default path's speed ÷ the fastest tier's (1: the default is the fastest)",
        );
    let mut ok = true;
    for mut case in cases(&mut rng, quick) {
        let want = (case.call)(&Exec::on(tiers[0]).threads(1));
        let mut same = true;
        for &t in &tiers[1..] {
            same &= (case.call)(&Exec::on(t).threads(1)) == want;
        }
        let times = race(&mut case, &tiers, rounds);
        let default = engine_tier(case.engine);
        let di = tiers
            .iter()
            .position(|&t| t == default)
            .unwrap_or(tiers.len() - 1);
        let (fi, &fast) = times
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .expect("a tier");
        let slower = times[di] > fast * 1.05;
        ok &= same;
        out += &format!("{:<12} {:<26}", case.engine.name(), case.label);
        for t in &times {
            out += &format!(" {:>9.2}", t * 1e6);
        }
        out += &format!(
            " {:>8} {:>8}{}{}\n",
            tiers[di].name(),
            tiers[fi].name(),
            if slower { "  SLOWER DEFAULT" } else { "" },
            if same { "" } else { "  MISMATCH" }
        );
        let cells: Vec<(&str, Option<f64>)> = tiers
            .iter()
            .zip(&times)
            .map(|(t, &s)| (t.name(), Some(s * 1e6)))
            .collect();
        chart.add_row(
            format!("{} {}", case.engine.name(), case.label),
            &cells,
            speed_ratio(times[di], fast, true),
        );
    }
    out += "the default is the tier `tessera::tier::engine_tier` picks for the engine on this CPU \
            (TESSERA_TIER or Exec::on override it)\n";
    (out, ok, chart)
}
