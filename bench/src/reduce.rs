//! `reduce/sum-f32` and `reduce/sum-f64`: the sum of one contiguous array
//! (64 MiB by default) beside its peers, in GB/s of bytes read.
//!
//! Peers: `tessera <tier>` on one thread for every tier the CPU runs, `tessera
//! <best tier> 2 threads`, a `naive loop` (`for x in a { s += x }`),
//! `iter().sum()`, ndarray's `.sum()`, and `read avx2`, a read of the array
//! with four independent 256-bit loads per step and a software prefetch 8 KiB
//! ahead, and no arithmetic worth the name: the single-core read bandwidth the
//! sums are measured against (the `bandwidth` group's `read`, an
//! autovectorised integer sum without prefetch, comes out lower).
//!
//! The tessera cases must give the bits of the scalar tier; the other peers sum
//! in other orders, so each is checked against an f64 sum within n·u·Σ|x|.
//!
//! `reduce/sum-squares-f32`: Σ x² of the same f32 array, three ways on the
//! best tier, one thread: `tessera program` (the terms of a `map` program
//! `y0 = x0 * x0`, tile by tile), `tessera square terms` (the fixed
//! [`tessera::Terms::square`] map), `tessera map then sum` (the program mapped
//! into a temporary array, then summed: two passes, the array written and read
//! back), beside `iter map sum` and `read avx2`. All three tessera cases give
//! one result, bit for bit.

use crate::harness::{Case, Group, RatioSpec};
use tessera::{
    map, reduce, reduce_terms, ArrayView, ArrayViewMut, DType, Exec, Program, ReduceOp, Terms, Tier,
};
use tessera_testkit::rng::Rng;

/// The group names.
pub const NAMES: [&str; 3] = ["reduce/sum-f32", "reduce/sum-f64", "reduce/sum-squares-f32"];

/// The buffers of both groups.
pub struct SumBufs {
    a32: Vec<f32>,
    a64: Vec<f64>,
    /// The temporary of `tessera map then sum` (allocated on its first run).
    tmp: Vec<f32>,
    out: f64,
}

impl SumBufs {
    /// `bytes` bytes of values in [0, 1) per dtype (one buffer per group that runs).
    pub fn new(bytes: usize, f32s: bool, f64s: bool) -> SumBufs {
        let mut rng = Rng::new(0x1234_5678_9abc_def0);
        let mut next = move || rng.unit();
        let a32 = if f32s {
            (0..(bytes / 4).max(1)).map(|_| next() as f32).collect()
        } else {
            Vec::new()
        };
        let a64 = if f64s {
            (0..(bytes / 8).max(1)).map(|_| next()).collect()
        } else {
            Vec::new()
        };
        SumBufs {
            a32,
            a64,
            tmp: Vec::new(),
            out: 0.0,
        }
    }
}

fn tessera_sum<T: tessera::Element>(exec: &Exec, a: &[T]) -> Result<f64, String> {
    let x = ArrayView::from_slice(a, &[a.len()]).map_err(|e| e.to_string())?;
    let mut y = [0f64];
    let mut d = ArrayViewMut::from_slice(&mut y, &[]).map_err(|e| e.to_string())?;
    reduce(ReduceOp::Sum, &[0], &x, &mut d, exec).map_err(|e| e.to_string())?;
    Ok(y[0])
}

/// How `reduce/sum-squares-f32` forms its terms.
#[derive(Clone, Copy)]
enum Squares {
    Program,
    Fixed,
    MapThenSum,
}

fn squares(exec: &Exec, how: Squares, s: &mut SumBufs) -> Result<f64, String> {
    let e = |e: tessera::Error| e.to_string();
    let n = s.a32.len();
    let x = ArrayView::from_slice(&s.a32, &[n]).map_err(e)?;
    let p = Program::parse("y0 = x0 * x0", &[DType::F32]).map_err(e)?;
    let mut y = [0f64];
    let mut d = ArrayViewMut::from_slice(&mut y, &[]).map_err(e)?;
    let outs = &mut [(ReduceOp::Sum, &mut d)];
    match how {
        Squares::Program => {
            let ins = [x];
            reduce_terms(&[0], Terms::program(&p, 0, &ins, &[n]), outs, exec).map_err(e)?
        }
        Squares::Fixed => reduce_terms(&[0], Terms::square(&x), outs, exec).map_err(e)?,
        Squares::MapThenSum => {
            s.tmp.resize(n, 0.0);
            let mut t = ArrayViewMut::from_slice(&mut s.tmp, &[n]).map_err(e)?;
            map(&p, &[x], std::slice::from_mut(&mut t), exec).map_err(e)?;
            let tv = ArrayView::from_slice(&s.tmp, &[n]).map_err(e)?;
            reduce_terms(&[0], Terms::of(&tv), outs, exec).map_err(e)?
        }
    }
    Ok(y[0])
}

/// The Σ x² group (see the module documentation).
#[inline(never)]
pub fn squares_group<'a>(tiers: &[Tier], size_note: &str) -> Group<'a, SumBufs> {
    let best = *tiers.last().expect("the scalar tier is always there");
    let mut cases: Vec<Case<'a, SumBufs>> = Vec::new();
    for (nm, how) in [
        ("tessera program", Squares::Program),
        ("tessera square terms", Squares::Fixed),
        ("tessera map then sum", Squares::MapThenSum),
    ] {
        let e = Exec::on(best).threads(1);
        cases.push(Case {
            name: nm.into(),
            bytes: 0,
            run: Box::new(move |s: &mut SumBufs| {
                s.out = squares(&e, how, s)?;
                Ok(())
            }),
            check: Box::new(move |s: &SumBufs| {
                // The reference: the scalar tier's fixed square terms.
                let x = ArrayView::from_slice(&s.a32, &[s.a32.len()]).map_err(|e| e.to_string())?;
                let mut y = [0f64];
                let mut d = ArrayViewMut::from_slice(&mut y, &[]).map_err(|e| e.to_string())?;
                reduce_terms(
                    &[0],
                    Terms::square(&x),
                    &mut [(ReduceOp::Sum, &mut d)],
                    &Exec::on(Tier::ALL[0]).threads(1),
                )
                .map_err(|e| e.to_string())?;
                if s.out.to_bits() == y[0].to_bits() {
                    Ok(())
                } else {
                    Err(format!("{} instead of the scalar tier's {}", s.out, y[0]))
                }
            }),
        });
    }
    cases.push(Case {
        name: "iter map sum".into(),
        bytes: 0,
        run: Box::new(|s: &mut SumBufs| {
            s.out = s.a32.iter().map(|&v| v * v).sum::<f32>() as f64;
            Ok(())
        }),
        check: Box::new(|s: &SumBufs| {
            let exact: f64 = s.a32.iter().map(|&v| (v as f64) * (v as f64)).sum();
            let n = s.a32.len() as f64;
            if (s.out - exact).abs() <= (n + 1.0) * 2f64.powi(-24) * exact * 1.01 + 1e-300 {
                Ok(())
            } else {
                Err(format!("{} is far from {exact}", s.out))
            }
        }),
    });
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        cases.push(Case {
            name: "read avx2".into(),
            bytes: 0,
            run: Box::new(|s: &mut SumBufs| {
                // SAFETY: the CPU runs AVX2 (checked when the case was made).
                s.out = unsafe { read_avx2(as_bytes(&s.a32)) } as f64;
                Ok(())
            }),
            check: Box::new(|_| Ok(())),
        });
    }
    let ratio = |num: &str, den: &str| RatioSpec {
        num: num.into(),
        den: den.into(),
        target: None,
    };
    Group {
        name: NAMES[2].into(),
        note: format!("{size_note} of f32, bytes read, {} tier", best.name()),
        baseline: "iter map sum".into(),
        reference: Some("read avx2".into()),
        reset: Box::new(|s: &mut SumBufs| s.out = f64::NAN),
        cases,
        ratios: vec![
            ratio("tessera program", "tessera map then sum"),
            ratio("tessera program", "tessera square terms"),
            ratio("tessera program", "read avx2"),
        ],
    }
}

#[inline(never)]
fn naive32(a: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for &x in a {
        s += x;
    }
    s
}
#[inline(never)]
fn naive64(a: &[f64]) -> f64 {
    let mut s = 0.0f64;
    for &x in a {
        s += x;
    }
    s
}
#[inline(never)]
fn iter32(a: &[f32]) -> f32 {
    a.iter().sum()
}
#[inline(never)]
fn iter64(a: &[f64]) -> f64 {
    a.iter().sum()
}
#[inline(never)]
fn nd32(a: &[f32]) -> f32 {
    ndarray::ArrayView1::from(a).sum()
}
#[inline(never)]
fn nd64(a: &[f64]) -> f64 {
    ndarray::ArrayView1::from(a).sum()
}

/// Reads every byte of `a` through four 256-bit load streams; returns a value
/// that depends on all of them so the loads stay.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn read_avx2(a: &[u8]) -> u64 {
    use core::arch::x86_64::*;
    let mut acc = [_mm256_setzero_si256(); 4];
    let p = a.as_ptr();
    let steps = a.len() / 128;
    for i in 0..steps {
        // The same software prefetch as the sums (8 KiB ahead): without it the
        // hardware prefetchers alone leave the read below what the core can do.
        _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(i * 128 + 8192) as *const i8);
        _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(i * 128 + 8192 + 64) as *const i8);
        for (k, v) in acc.iter_mut().enumerate() {
            // SAFETY: i·128 + k·32 + 32 <= a.len().
            let x = unsafe { _mm256_loadu_si256(p.add(i * 128 + k * 32) as *const __m256i) };
            *v = _mm256_xor_si256(*v, x);
        }
    }
    let x = _mm256_xor_si256(
        _mm256_xor_si256(acc[0], acc[1]),
        _mm256_xor_si256(acc[2], acc[3]),
    );
    let mut out = [0u64; 4];
    // SAFETY: out holds 32 bytes.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, x) };
    out.iter().fold(0, |s, &v| s ^ v) ^ a[steps * 128..].iter().fold(0, |s, &b| s ^ b as u64)
}

fn as_bytes<T>(a: &[T]) -> &[u8] {
    // SAFETY: plain floats, every byte initialised.
    unsafe { core::slice::from_raw_parts(a.as_ptr() as *const u8, core::mem::size_of_val(a)) }
}

/// One group: `f32` or not (f64).
pub fn sum_group<'a>(f32s: bool, tiers: &[Tier], size_note: &str) -> Group<'a, SumBufs> {
    let mut cases: Vec<Case<'a, SumBufs>> = Vec::new();
    let name = |t: Tier, th: usize| {
        if th == 1 {
            format!("tessera {}", t.name())
        } else {
            format!("tessera {} {th} threads", t.name())
        }
    };
    let best = *tiers.last().expect("the scalar tier is always there");
    let mut execs: Vec<(String, Exec)> = tiers
        .iter()
        .map(|&t| (name(t, 1), Exec::on(t).threads(1)))
        .collect();
    execs.push((name(best, 2), Exec::on(best).threads(2)));
    // The reference bits: the scalar tier, computed once per check.
    let reference = move |s: &SumBufs| -> Result<f64, String> {
        let e = Exec::on(Tier::ALL[0]).threads(1);
        if f32s {
            tessera_sum(&e, &s.a32)
        } else {
            tessera_sum(&e, &s.a64)
        }
    };
    for (nm, e) in execs {
        cases.push(Case {
            name: nm,
            bytes: 0,
            run: Box::new(move |s: &mut SumBufs| {
                s.out = if f32s {
                    tessera_sum(&e, &s.a32)?
                } else {
                    tessera_sum(&e, &s.a64)?
                };
                Ok(())
            }),
            check: Box::new(move |s: &SumBufs| {
                let want = reference(s)?;
                if s.out.to_bits() == want.to_bits() {
                    Ok(())
                } else {
                    Err(format!("{} instead of the scalar tier's {want}", s.out))
                }
            }),
        });
    }
    let loose = move |s: &SumBufs| -> Result<(), String> {
        let (exact, n, u): (f64, usize, f64) = if f32s {
            (
                s.a32.iter().map(|&x| x as f64).sum(),
                s.a32.len(),
                2f64.powi(-24),
            )
        } else {
            (s.a64.iter().sum(), s.a64.len(), 2f64.powi(-53))
        };
        // Terms are non-negative: Σ|x| is the sum.
        if (s.out - exact).abs() <= n as f64 * u * exact * 1.01 + 1e-300 {
            Ok(())
        } else {
            Err(format!("{} is far from {exact}", s.out))
        }
    };
    type Peer = (&'static str, fn(&[f32]) -> f32, fn(&[f64]) -> f64);
    let peers: [Peer; 3] = [
        ("naive loop", naive32, naive64),
        ("iter().sum()", iter32, iter64),
        ("ndarray sum", nd32, nd64),
    ];
    for (nm, f, g) in peers {
        cases.push(Case {
            name: nm.into(),
            bytes: 0,
            run: Box::new(move |s: &mut SumBufs| {
                s.out = if f32s { f(&s.a32) as f64 } else { g(&s.a64) };
                Ok(())
            }),
            check: Box::new(loose),
        });
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        cases.push(Case {
            name: "read avx2".into(),
            bytes: 0,
            run: Box::new(move |s: &mut SumBufs| {
                let b = if f32s {
                    as_bytes(&s.a32)
                } else {
                    as_bytes(&s.a64)
                };
                // SAFETY: the CPU runs AVX2 (checked when the case was made).
                s.out = unsafe { read_avx2(b) } as f64;
                Ok(())
            }),
            check: Box::new(|_| Ok(())),
        });
    }
    let top = name(best, 1);
    let mut ratios = vec![
        RatioSpec {
            num: top.clone(),
            den: "read avx2".into(),
            target: Some(0.9),
        },
        RatioSpec {
            num: top.clone(),
            den: "iter().sum()".into(),
            target: if f32s { Some(4.0) } else { None },
        },
        RatioSpec {
            num: name(best, 2),
            den: top.clone(),
            target: Some(1.6),
        },
        RatioSpec {
            num: top.clone(),
            den: "ndarray sum".into(),
            target: None,
        },
    ];
    if tiers.len() > 1 {
        ratios.push(RatioSpec {
            num: top,
            den: name(Tier::ALL[0], 1),
            target: None,
        });
    }
    Group {
        name: if f32s { NAMES[0] } else { NAMES[1] }.into(),
        note: format!(
            "{size_note} of {}, bytes read",
            if f32s { "f32" } else { "f64" }
        ),
        baseline: "naive loop".into(),
        reference: Some("read avx2".into()),
        reset: Box::new(|s: &mut SumBufs| s.out = f64::NAN),
        cases,
        ratios,
    }
}

/// Set every case's byte count (the buffer's size).
pub fn with_bytes<S>(mut g: Group<'_, S>, bytes: u64) -> Group<'_, S> {
    for c in &mut g.cases {
        c.bytes = bytes;
    }
    g
}

/// The `fast-scan` group's name (only when named).
pub const FAST_SCAN_NAME: &str = "fast-scan";

/// FastCumSum (`reduce::fast_scan`) beside the serial-order cumsum
/// (`scan(ScanOp::Sum)`) and a plain running-sum loop, f32 and f64, one
/// thread, the default tier; best of alternating samples, in Gelem/s.
pub fn run_fast_scan(quick: bool) -> (String, bool, crate::chart::Chart) {
    use std::time::Instant;
    use tessera::reduce::{fast_scan, FastScanOp};
    use tessera::{ArrayViewMut, ScanOp};
    let rounds = if quick { 3 } else { 11 };
    let sizes: &[usize] = if quick {
        &[65536]
    } else {
        &[4096, 65536, 1 << 20]
    };
    let exec = Exec::default().threads(1);
    let mut out = format!(
        "{FAST_SCAN_NAME}: one thread, tier {:?}, best of {rounds} alternating samples, Gelem/s\n{:<14} {:>10} {:>10} {:>10} {:>12}\n",
        exec.resolve_tier().ok(),
        "case",
        "loop",
        "cumsum",
        "fast",
        "fast ÷ cumsum"
    );
    fn time(f: &mut dyn FnMut(), n: usize) -> f64 {
        let inner = (4_000_000 / n).max(1);
        let t = Instant::now();
        for _ in 0..inner {
            f();
        }
        t.elapsed().as_secs_f64() / inner as f64
    }
    macro_rules! one {
        ($t:ty, $name:literal, $n:expr) => {{
            let n = $n;
            let mut rng = Rng::for_label("bench fast-scan", n as u64);
            let x: Vec<$t> = (0..n).map(|_| (rng.unit() - 0.5) as $t).collect();
            let mut y = vec![0 as $t; n];
            let xv = ArrayView::from_slice(&x, &[n]).unwrap();
            let mut best = [f64::INFINITY; 3];
            for _ in 0..rounds {
                best[0] = best[0].min(time(
                    &mut || {
                        let mut s = 0 as $t;
                        for (o, &v) in y.iter_mut().zip(&x) {
                            s += v;
                            *o = s;
                        }
                        std::hint::black_box(&y);
                    },
                    n,
                ));
                best[1] = best[1].min(time(
                    &mut || {
                        let mut d = ArrayViewMut::from_slice(&mut y, &[n]).unwrap();
                        tessera::scan(ScanOp::Sum, 0, &xv, None, &mut d, &exec).unwrap();
                    },
                    n,
                ));
                best[2] = best[2].min(time(
                    &mut || {
                        let mut d = ArrayViewMut::from_slice(&mut y, &[n]).unwrap();
                        fast_scan(FastScanOp::Sum, 0, &xv, &mut d, &exec).unwrap();
                    },
                    n,
                ));
            }
            let g = |t: f64| n as f64 / t / 1e9;
            out.push_str(&format!(
                "{:<14} {:>10.2} {:>10.2} {:>10.2} {:>12.2}\n",
                format!("{} {}", $name, n),
                g(best[0]),
                g(best[1]),
                g(best[2]),
                best[1] / best[2]
            ));
        }};
    }
    for &n in sizes {
        one!(f32, "f32", n);
        one!(f64, "f64", n);
    }
    let chart = crate::chart::Chart::new(FAST_SCAN_NAME, "one thread", "Gelem/s");
    (out, true, chart)
}
