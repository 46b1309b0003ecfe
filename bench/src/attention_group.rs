//! The `attention` group: tessera's flash attention on one thread (and
//! two, for prefill) beside a naive softmax(q·kᵀ)·v built from tessera's own
//! contraction, reductions and map in the same run, with tessera's f32 GEMM
//! and a plain read of K and V as the yardsticks the issue names.
//!
//! Prefill: tq = tk = 2048, d = 128, 32 query heads over 8 key heads,
//! causal and not; decode: tq = 1, tk = 32768, same heads; f32 and bf16
//! inputs (accumulator f32). GFLOP/s count 4·tq·tk·d per query head, halved
//! for causal. Times are the best of alternating samples. numpy's and
//! PyTorch's figures come from `bench/scripts/attention_peers.py` (same
//! shapes, one thread).

use crate::chart::{speed_ratio, Chart};
use half::bf16;
use std::time::Instant;
use tessera::attention::{attention, programs, Kv};
use tessera::map::Program;
use tessera::{
    contract, map, reduce, ArrayView, ArrayViewMut, ContractSpec, DType, Exec, ReduceOp,
};
use tessera_testkit::rng::Rng;

/// The group's name on the command line.
pub const NAME: &str = "attention";

fn race(fs: &mut [&mut dyn FnMut()], rounds: usize) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; fs.len()];
    for _ in 0..rounds {
        for (i, f) in fs.iter_mut().enumerate() {
            let t = Instant::now();
            f();
            best[i] = best[i].min(t.elapsed().as_secs_f64());
        }
    }
    best
}

#[derive(Clone, Copy)]
struct Shape {
    hq: usize,
    hk: usize,
    tq: usize,
    tk: usize,
    d: usize,
}

/// Inputs of one case, as f32 values (exact in bf16 where the case is).
struct Inputs {
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
}

fn inputs(s: Shape, rng: &mut Rng, narrow: bool) -> Inputs {
    let mut draw = |n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| {
                let x = (rng.unit() as f32 - 0.5) * 2.0;
                if narrow {
                    bf16::from_f32(x).to_f32()
                } else {
                    x
                }
            })
            .collect()
    };
    Inputs {
        q: draw(s.hq * s.tq * s.d),
        k: draw(s.hk * s.tk * s.d),
        v: draw(s.hk * s.tk * s.d),
    }
}

/// The flash attention of the case, on `exec`.
fn flash<'a>(
    s: Shape,
    x: &'a Inputs,
    narrow: bool,
    causal: bool,
    exec: &Exec,
) -> impl FnMut() + 'a {
    let prog = if causal {
        programs::causal(DType::F32, 3, (s.tk - s.tq) as i64).expect("program")
    } else {
        programs::full(DType::F32).expect("program")
    };
    let to16 = |v: &[f32]| -> Vec<bf16> { v.iter().map(|&x| bf16::from_f32(x)).collect() };
    let (q16, k16, v16) = if narrow {
        (to16(&x.q), to16(&x.k), to16(&x.v))
    } else {
        (vec![], vec![], vec![])
    };
    let mut o = vec![0f32; s.hq * s.tq * s.d];
    let mut lse = vec![0f32; s.hq * s.tq];
    let scale = 1.0 / (s.d as f64).sqrt();
    let exec = *exec;
    move || {
        let qs = [s.hq, s.tq, s.d];
        let ks = [s.hk, s.tk, s.d];
        let (q, k, v) = if narrow {
            (
                ArrayView::from_slice(&q16, &qs).expect("q"),
                ArrayView::from_slice(&k16, &ks).expect("k"),
                ArrayView::from_slice(&v16, &ks).expect("v"),
            )
        } else {
            (
                ArrayView::from_slice(&x.q, &qs).expect("q"),
                ArrayView::from_slice(&x.k, &ks).expect("k"),
                ArrayView::from_slice(&x.v, &ks).expect("v"),
            )
        };
        let mut ov = ArrayViewMut::from_slice(&mut o, &qs).expect("o");
        let mut lv = ArrayViewMut::from_slice(&mut lse, &[s.hq, s.tq]).expect("lse");
        attention(
            &prog,
            scale,
            &q,
            &Kv { k, v },
            &[],
            None,
            &mut ov,
            &mut lv,
            &exec,
        )
        .expect("attention");
    }
}

/// softmax(q·kᵀ·scale)·v from tessera's contraction (the query heads of a
/// key head as one matrix of g·tq rows), reductions and map, f32.
fn naive(s: Shape, x: &Inputs, causal: bool) -> impl FnMut() + '_ {
    let g = s.hq / s.hk;
    let rows = g * s.tq;
    let mut sc = vec![0f32; s.hk * rows * s.tk];
    let mut p = vec![0f32; s.hk * rows * s.tk];
    let mut mx = vec![0f32; s.hk * rows];
    let mut sum = vec![0f32; s.hk * rows];
    let mut o = vec![0f32; s.hk * rows * s.d];
    let mut out = vec![0f32; s.hk * rows * s.d];
    let scale = 1.0 / (s.d as f32).sqrt();
    let exp_prog = if causal {
        Program::parse(
            &format!(
                "y0 = select(coord(2) <= coord(1) % {tq} + {off}, exp(x0 * {scale:e}f32 - x1 * {scale:e}f32), 0f32)",
                tq = s.tq,
                off = s.tk - s.tq
            ),
            &[DType::F32, DType::F32],
        )
    } else {
        Program::parse(
            &format!("y0 = exp(x0 * {scale:e}f32 - x1 * {scale:e}f32)"),
            &[DType::F32, DType::F32],
        )
    }
    .expect("program");
    let div = Program::parse("y0 = x0 / x1", &[DType::F32, DType::F32]).expect("program");
    let qk = ContractSpec::new(DType::F32).batch(0, 0).contracting(2, 2);
    let pv = ContractSpec::new(DType::F32).batch(0, 0).contracting(2, 1);
    let e = Exec::SEQ;
    move || {
        let q = ArrayView::from_slice(&x.q, &[s.hk, rows, s.d]).expect("q");
        let k = ArrayView::from_slice(&x.k, &[s.hk, s.tk, s.d]).expect("k");
        let v = ArrayView::from_slice(&x.v, &[s.hk, s.tk, s.d]).expect("v");
        {
            let mut d = ArrayViewMut::from_slice(&mut sc, &[s.hk, rows, s.tk]).expect("s");
            contract(&qk, &q, &k, None, &mut d, &e).expect("q·kᵀ");
        }
        let sv = ArrayView::from_slice(&sc, &[s.hk, rows, s.tk]).expect("s");
        {
            let mut m = ArrayViewMut::from_slice(&mut mx, &[s.hk, rows]).expect("max");
            reduce(ReduceOp::Max, &[2], &sv, &mut m, &e).expect("max");
        }
        {
            let mv = ArrayView::from_slice(&mx, &[s.hk, rows, 1]).expect("max");
            let mut pd = ArrayViewMut::from_slice(&mut p, &[s.hk, rows, s.tk]).expect("p");
            map(&exp_prog, &[sv, mv], std::slice::from_mut(&mut pd), &e).expect("exp");
        }
        let pv_ = ArrayView::from_slice(&p, &[s.hk, rows, s.tk]).expect("p");
        {
            let mut sm = ArrayViewMut::from_slice(&mut sum, &[s.hk, rows]).expect("sum");
            reduce(ReduceOp::Sum, &[2], &pv_, &mut sm, &e).expect("sum");
        }
        {
            let mut od = ArrayViewMut::from_slice(&mut o, &[s.hk, rows, s.d]).expect("o");
            contract(&pv, &pv_, &v, None, &mut od, &e).expect("p·v");
        }
        let ov = ArrayView::from_slice(&o, &[s.hk, rows, s.d]).expect("o");
        let smv = ArrayView::from_slice(&sum, &[s.hk, rows, 1]).expect("sum");
        let mut od = ArrayViewMut::from_slice(&mut out, &[s.hk, rows, s.d]).expect("out");
        map(&div, &[ov, smv], std::slice::from_mut(&mut od), &e).expect("divide");
    }
}

/// tessera's f32 GEMM GFLOP/s at 2048³ on one thread.
fn gemm_gflops(rounds: usize, n: usize) -> f64 {
    let mut rng = Rng::for_label("bench attention gemm", 1);
    let a: Vec<f32> = (0..n * n).map(|_| rng.unit() as f32).collect();
    let b: Vec<f32> = (0..n * n).map(|_| rng.unit() as f32).collect();
    let mut c = vec![0f32; n * n];
    let mut f = || {
        let av = ArrayView::from_slice(&a, &[n, n]).expect("a");
        let bv = ArrayView::from_slice(&b, &[n, n]).expect("b");
        let mut cv = ArrayViewMut::from_slice(&mut c, &[n, n]).expect("c");
        tessera::matmul(&av, &bv, &mut cv, &Exec::SEQ).expect("gemm");
    };
    let t = race(&mut [&mut f], rounds)[0];
    2.0 * (n * n * n) as f64 / t / 1e9
}

/// A plain read of `bytes` on one thread (tessera's lane-order sum of f32).
fn read_gbs(data: &[f32], rounds: usize) -> f64 {
    let mut out = [0f32];
    let mut f = || {
        let x = ArrayView::from_slice(data, &[data.len()]).expect("x");
        let mut o = ArrayViewMut::from_slice(&mut out, &[]).expect("o");
        reduce(ReduceOp::Sum, &[0], &x, &mut o, &Exec::SEQ).expect("sum");
    };
    let t = race(&mut [&mut f], rounds)[0];
    (data.len() * 4) as f64 / t / 1e9
}

/// Run the group; returns its table, whether every run completed, and the
/// table as a chart.
pub fn run(quick: bool) -> (String, bool, Chart) {
    let mut rng = Rng::for_label("bench attention", 1);
    let rounds = if quick { 1 } else { 3 };
    let (pre, dec) = if quick {
        (
            Shape {
                hq: 8,
                hk: 2,
                tq: 512,
                tk: 512,
                d: 128,
            },
            Shape {
                hq: 8,
                hk: 2,
                tq: 1,
                tk: 8192,
                d: 128,
            },
        )
    } else {
        (
            Shape {
                hq: 32,
                hk: 8,
                tq: 2048,
                tk: 2048,
                d: 128,
            },
            Shape {
                hq: 32,
                hk: 8,
                tq: 1,
                tk: 32768,
                d: 128,
            },
        )
    };
    let gemm = gemm_gflops(rounds, if quick { 512 } else { 2048 });
    let mut out = format!(
        "{NAME}: one thread unless named, best of {rounds} alternating samples; GFLOP/s = 4·tq·tk·d per query head (halved for causal) / s\n\
         tessera f32 GEMM ({n}³, one thread): {gemm:.1} GFLOP/s\n",
        n = if quick { 512 } else { 2048 }
    );
    out.push_str(&format!(
        "{:<34} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}\n",
        "case", "flash", "flash 2T", "naive", "÷ GEMM", "vs naive", "2T / 1T"
    ));
    let mut chart = Chart::new(
        NAME,
        format!(
            "prefill {}×{} d {} heads {}/{}, decode tk {}; one thread unless named",
            pre.tq, pre.tk, pre.d, pre.hq, pre.hk, dec.tk
        ),
        "GFLOP/s",
    )
    .ratio_note("tessera's flash attention ÷ the naive tessera pipeline (above 1: flash faster)");
    let two = Exec::default().threads(2);
    for narrow in [false, true] {
        let x = inputs(pre, &mut rng, narrow);
        for causal in [true, false] {
            let flops =
                4.0 * (pre.tq * pre.tk * pre.d * pre.hq) as f64 / if causal { 2.0 } else { 1.0 };
            let mut f1 = flash(pre, &x, narrow, causal, &Exec::SEQ);
            let mut f2 = flash(pre, &x, narrow, causal, &two);
            let mut nv = naive(pre, &x, causal);
            let t = race(&mut [&mut f1, &mut f2, &mut nv], rounds);
            let g = |t: f64| flops / t / 1e9;
            let case = format!(
                "prefill {} {}",
                if narrow { "bf16" } else { "f32" },
                if causal { "causal" } else { "full" }
            );
            out.push_str(&format!(
                "{:<34} {:>10.1} {:>10.1} {:>10.1} {:>8.2} {:>8.2}x {:>8.2}x\n",
                case,
                g(t[0]),
                g(t[1]),
                g(t[2]),
                g(t[0]) / gemm,
                t[2] / t[0],
                t[0] / t[1]
            ));
            chart.add_row(
                case,
                &[
                    ("tessera flash", Some(g(t[0]))),
                    ("tessera flash 2T", Some(g(t[1]))),
                    ("tessera naive", Some(g(t[2]))),
                    ("tessera GEMM", Some(gemm)),
                ],
                speed_ratio(g(t[0]), g(t[2]), false),
            );
        }
    }
    // Decode: GB/s over K and V beside a plain read of them.
    for narrow in [false, true] {
        let x = inputs(dec, &mut rng, narrow);
        let kv_bytes = (2 * dec.hk * dec.tk * dec.d * if narrow { 2 } else { 4 }) as f64;
        let flops = 4.0 * (dec.tq * dec.tk * dec.d * dec.hq) as f64;
        let mut f1 = flash(dec, &x, narrow, false, &Exec::SEQ);
        let mut f2 = flash(dec, &x, narrow, false, &two);
        let mut nv = naive(dec, &x, false);
        let t = race(&mut [&mut f1, &mut f2, &mut nv], rounds);
        let mut both = x.k.clone();
        both.extend_from_slice(&x.v);
        let read = read_gbs(&both, rounds);
        let case = format!(
            "decode {} tk {}",
            if narrow { "bf16" } else { "f32" },
            dec.tk
        );
        let gbs = kv_bytes / t[0] / 1e9;
        out.push_str(&format!(
            "{:<34} {:>10.1} {:>10.1} {:>10.1} {:>9} {:>8.2}x {:>8.2}x   K,V {:.1} GB/s = {:.2} of a read ({:.1} GB/s{})\n",
            case,
            flops / t[0] / 1e9,
            flops / t[1] / 1e9,
            flops / t[2] / 1e9,
            "",
            t[2] / t[0],
            t[0] / t[1],
            gbs,
            gbs / read,
            read,
            if narrow { ", read of the same values in f32" } else { "" }
        ));
        chart.add_row(
            case,
            &[
                ("tessera flash", Some(flops / t[0] / 1e9)),
                ("tessera flash 2T", Some(flops / t[1] / 1e9)),
                ("tessera naive", Some(flops / t[2] / 1e9)),
            ],
            speed_ratio(flops / t[0], flops / t[2], false),
        );
    }
    (out, true, chart)
}
