//! The `math` group: the transcendental kinds on `--size-mib`-sized f32
//! arrays (default 64 MiB, 16M elements), one thread, in Gelem/s: tessera on
//! every tier the CPU runs, beside a plain loop over the platform's libm
//! (`f32::exp` and friends, one call per element) and, when `python3` with
//! numpy is on the PATH, numpy's `np.f(x, out=y)` on the same number of
//! elements (numpy's own timing in a subprocess; its inputs are generated the
//! same way). `math` measures exp, log, sin, tanh and sigmoid; `math:all` every
//! default and fast transcendental, then sin, cos and tan again on arguments
//! spread over ±10^5 (rows `sin |x|<1e5` and so on; `math:wide` those three
//! alone); `math:NAME` the kinds named.
//!
//! A sample of each tessera result is checked within the kind's bound (1 or
//! 3.5 ulp, plus half an ulp for the reference) against the platform's f64
//! libm (not the f32 loop, whose own error is larger) before it is timed.
//! Best of `reps` calls (5; 2 with --quick).

use crate::chart::Chart;
use std::time::Instant;
use tessera::{Accuracy, ArrayView, ArrayViewMut, Exec, Kind};

/// The group's name on the command line.
pub const NAME: &str = "math";

/// The kinds the platform's libm has, as `(name, f32 function, f64 function)`.
macro_rules! libm_table {
    ($($name:literal => $f:ident),* ; $($xname:literal => |$x:ident| $body:expr),*) => {
        /// The platform's f32 libm function of a kind (std's `f32::exp` and
        /// friends): the timed peer.
        fn libm32(name: &str) -> Option<fn(f32) -> f32> {
            Some(match name {
                $($name => f32::$f,)*
                $($xname => |$x: f32| $body,)*
                _ => return None,
            })
        }
        /// The f64 reference of a kind (the platform's f64 libm through std):
        /// the check of tessera's f32 results, far more accurate than the f32
        /// loop (whose own error near the ends of some domains, atanh's say,
        /// exceeds an ulp).
        fn ref64(name: &str) -> Option<fn(f64) -> f64> {
            Some(match name {
                $($name => f64::$f,)*
                $($xname => |$x: f64| $body,)*
                _ => return None,
            })
        }
    };
}

libm_table! {
    "exp" => exp, "exp2" => exp2, "expm1" => exp_m1, "log" => ln, "log2" => log2,
    "log10" => log10, "log1p" => ln_1p, "sin" => sin, "cos" => cos, "tan" => tan,
    "asin" => asin, "acos" => acos, "atan" => atan, "sinh" => sinh, "cosh" => cosh,
    "tanh" => tanh, "asinh" => asinh, "acosh" => acosh, "atanh" => atanh, "cbrt" => cbrt;
    "sigmoid" => |x| 1.0 / (1.0 + (-x).exp()),
    "rsqrt" => |x| 1.0 / x.sqrt()
}

/// Inputs where the function is interesting: a spread over its domain
/// (with `wide`, the trigonometric kinds' arguments spread over ±10^5).
fn input(name: &str, i: usize, wide: bool) -> f32 {
    let u = ((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as f64 / (1u64 << 24) as f64;
    let v = match name {
        "sin" | "cos" | "tan" if wide => -1.0e5 + 2.0e5 * u,
        "exp" | "exp2" | "expm1" | "sinh" | "cosh" => -80.0 + 160.0 * u,
        "log" | "log2" | "log10" | "rsqrt" | "cbrt" => (2.0f64).powf(-60.0 + 120.0 * u),
        "log1p" => -0.999 + 1000.0 * u * u,
        "asin" | "acos" | "atanh" => -1.0 + 2.0 * u,
        "acosh" => 1.0 + 1000.0 * u,
        "sin" | "cos" | "tan" => -100.0 + 200.0 * u,
        _ => -20.0 + 40.0 * u,
    };
    v as f32
}

fn best<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    f();
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn numpy(name: &str, n: usize, reps: usize, wide: bool) -> Option<f64> {
    let np = match name {
        "exp" | "exp2" | "expm1" | "log" | "log2" | "log10" | "log1p" | "sin" | "cos" | "tan"
        | "sinh" | "cosh" | "tanh" | "cbrt" => format!("np.{name}(x, out=y)"),
        "asin" | "acos" | "atan" | "asinh" | "acosh" | "atanh" => {
            format!("np.arc{}(x, out=y)", &name[1..])
        }
        "sigmoid" => {
            "np.negative(x, out=y); np.exp(y, out=y); y += 1; np.reciprocal(y, out=y)".into()
        }
        _ => return None,
    };
    let lo_hi = match name {
        "log" | "log2" | "log10" | "rsqrt" | "cbrt" => "2.0**np.random.uniform(-60, 60, N)",
        "asin" | "acos" | "atanh" => "np.random.uniform(-1, 1, N)",
        "acosh" => "np.random.uniform(1, 1000, N)",
        "log1p" => "np.random.uniform(-0.99, 1000, N)",
        "exp" | "exp2" | "expm1" | "sinh" | "cosh" => "np.random.uniform(-80, 80, N)",
        "sin" | "cos" | "tan" if wide => "np.random.uniform(-1e5, 1e5, N)",
        "sin" | "cos" | "tan" => "np.random.uniform(-100, 100, N)",
        _ => "np.random.uniform(-20, 20, N)",
    };
    let script = format!(
        "import numpy as np, time\nN={n}\nx=({lo_hi}).astype(np.float32)\ny=np.empty_like(x)\n\
         {np}\nb=1e9\nfor _ in range({reps}):\n t=time.perf_counter(); {np}; b=min(b,time.perf_counter()-t)\nprint(b)\n"
    );
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(&script)
        .env_remove("OPENBLAS_CORETYPE")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()?.trim().parse().ok()
}

/// Run the group; returns the text, whether every checked result held, and
/// the kinds' table as a chart (the fused program's lines are not charted).
pub fn run(filters: &[String], n: usize, quick: bool) -> (String, bool, Chart) {
    let all = filters.iter().any(|f| f == "math:all");
    // `math:NAME` (one or more) picks kinds by name.
    let picked: Vec<&str> = filters
        .iter()
        .filter_map(|f| f.strip_prefix("math:"))
        .filter(|n| *n != "all")
        .collect();
    // The sine, cosine and tangent again on arguments up to 10^5, where the
    // f32 sine's and cosine's chunks mix their f32-lane and f64 paths
    // (`math:all`, or `math:wide` for these rows alone).
    let wide_rows = all || picked.contains(&"wide");
    let reps = if quick { 2 } else { 5 };
    let names: Vec<(Kind, bool)> = Kind::ALL
        .into_iter()
        .filter(|k| k.info().accuracy != Accuracy::Exact && k.info().arity == 1)
        // An alias runs its target's kernels: the target's row measures it.
        .filter(|k| k.implementation() == *k)
        .filter(|k| {
            if all {
                true
            } else if !picked.is_empty() {
                picked.contains(&k.name())
            } else {
                matches!(k.name(), "exp" | "log" | "sin" | "tanh" | "sigmoid")
            }
        })
        .map(|k| (k, false))
        .chain(
            [Kind::Sin, Kind::Cos, Kind::Tan]
                .into_iter()
                .filter(|_| wide_rows)
                .map(|k| (k, true)),
        )
        .collect();
    let tiers = tessera::available_tiers();
    let mut chart = Chart::new(
        NAME,
        format!(
            "{}, {n} f32 per call, 1 thread, best of {reps}",
            if all {
                "every transcendental kind, and sin, cos and tan on |x| < 1e5 (math:all)"
            } else if !picked.is_empty() {
                "the kinds named"
            } else {
                "exp, log, sin, tanh and sigmoid"
            }
        ),
        "Gelem/s",
    )
    .ratio_note("tessera's best tier ÷ the faster of libm and numpy (above 1: tessera faster)");
    let mut s = format!(
        "math: {n} f32 per call, 1 thread, Gelem/s (best of {reps}); ratios over the libm loop and numpy\n\
         {:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}\n",
        "kind", "scalar", "avx2", "avx512", "libm", "numpy", "best/libm", "best/numpy"
    );
    let mut ok = true;
    let mut y = vec![0f32; n];
    for (k, wide) in names {
        let base = k.name().strip_prefix("fast_").unwrap_or(k.name());
        let label = if wide {
            format!("{} |x|<1e5", k.name())
        } else {
            k.name().to_string()
        };
        let x: Vec<f32> = (0..n).map(|i| input(base, i, wide)).collect();
        let bound = if k.info().accuracy == Accuracy::Ulp1 {
            1.0
        } else {
            3.5
        };
        let mut rates = [None::<f64>; 3];
        let mut failed = false;
        for tier in &tiers {
            let exec = Exec::on(*tier).threads(1);
            let xv = ArrayView::from_slice(&x, &[n]).expect("view");
            let run = |y: &mut [f32]| {
                let mut yv = ArrayViewMut::from_slice(y, &[n]).expect("view");
                tessera::elementwise(k, std::slice::from_ref(&xv), &mut yv, &exec).expect("call");
            };
            run(&mut y);
            // Check a sample against the f64 reference (within the bound
            // and a margin of half an ulp for the reference's own error and
            // the f32 ulp's size at the value).
            if let Some(f) = ref64(base) {
                for i in (0..n).step_by(n / 1000 + 1) {
                    let r = f(x[i] as f64);
                    let ulp = (r.abs().max(1e-38) * f32::EPSILON as f64).max(1e-45);
                    if r.is_finite() && (y[i] as f64 - r).abs() > (bound + 0.5) * ulp {
                        s += &format!(
                            "  {} on {}: x = {} gives {}, f64 libm {}: FAILED\n",
                            label,
                            tier.name(),
                            x[i],
                            y[i],
                            r
                        );
                        ok = false;
                        failed = true;
                        break;
                    }
                }
            }
            let t = best(reps, || run(&mut y));
            let slot = match tier.name() {
                "scalar" => 0,
                "avx2" => 1,
                _ => 2,
            };
            rates[slot] = Some(n as f64 / t / 1e9);
        }
        let libm = libm32(base).map(|f| {
            let t = best(reps, || {
                for (o, &v) in y.iter_mut().zip(&x) {
                    *o = f(v);
                }
            });
            n as f64 / t / 1e9
        });
        let np = if k.name().starts_with("fast_") {
            None
        } else {
            numpy(base, n, reps, wide).map(|t| n as f64 / t / 1e9)
        };
        let best_t = rates.iter().flatten().fold(0.0f64, |a, &b| a.max(b));
        // tessera's tiers, the best first, then the peers that ran.
        let mut cells: Vec<(String, Option<f64>)> = tiers
            .iter()
            .rev()
            .map(|t| {
                let slot = match t.name() {
                    "scalar" => 0,
                    "avx2" => 1,
                    _ => 2,
                };
                (format!("tessera {}", t.name()), rates[slot])
            })
            .collect();
        cells.extend(libm.map(|v| ("libm loop".to_string(), Some(v))));
        cells.extend(np.map(|v| ("numpy".to_string(), Some(v))));
        let cells: Vec<(&str, Option<f64>)> = cells.iter().map(|(p, v)| (p.as_str(), *v)).collect();
        chart.add_row(
            format!("{label}{}", if failed { " FAILED" } else { "" }),
            &cells,
            None,
        );
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        s += &format!(
            "{:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}\n",
            label,
            f(rates[0]),
            f(rates[1]),
            f(rates[2]),
            f(libm),
            f(np),
            f(libm.map(|l| best_t / l)),
            f(np.map(|p| best_t / p)),
        );
    }
    s += "targets: exp on avx2 >= 0.8x numpy and >= 3x the libm loop\n";
    let mut fused_ok = true;
    // The size of the kinds above (memory-bound for a loop this short) and
    // one whose operands stay in the second-level cache (the executor's
    // own throughput).
    let target = if quick { 0.002 } else { 0.02 };
    for size in [n, n.min(1 << 16)] {
        let (t, ok) = fused(size, target);
        s += &t;
        fused_ok &= ok;
    }
    (s, ok && fused_ok, chart.with_tessera_ratios())
}

/// The program's expression as a plain loop (Rust neither contracts nor
/// reassociates: the bits of the four kinds), for the compiler to vectorise
/// with the instructions the caller's features enable.
#[inline(always)]
fn hand_loop(x0: &[f32], x1: &[f32], y: &mut [f32]) {
    for ((y, &a), &b) in y.iter_mut().zip(x0).zip(x1) {
        *y = (a * b + b).sqrt() - a;
    }
}

/// [`hand_loop`] compiled for AVX-512.
///
/// # Safety
/// The CPU runs AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn hand_loop_avx512(x0: &[f32], x1: &[f32], y: &mut [f32]) {
    hand_loop(x0, x1, y)
}

/// [`hand_loop`] compiled for AVX2.
///
/// # Safety
/// The CPU runs AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn hand_loop_avx2(x0: &[f32], x1: &[f32], y: &mut [f32]) {
    hand_loop(x0, x1, y)
}

/// The hand-written loop for a tier's instructions.
fn hand_loop_on(tier: &str, x0: &[f32], x1: &[f32], y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    match tier {
        // SAFETY: the tier is available, so the CPU runs its features.
        "avx512" => return unsafe { hand_loop_avx512(x0, x1, y) },
        // SAFETY: as above.
        "avx2" => return unsafe { hand_loop_avx2(x0, x1, y) },
        _ => {}
    }
    hand_loop(x0, x1, y)
}

/// A program of four kinds, `y0 = sqrt(x0 * x1 + x1) - x0`, fused (one
/// `map` call) beside the same kinds run as four `elementwise` calls through
/// temporaries and beside a hand-written loop of the expression compiled
/// for the tier's instructions, on every tier, one thread, samples
/// alternating; the fused result is checked to be the separate passes' and
/// the loop's bit for bit.
fn fused(n: usize, target: f64) -> (String, bool) {
    use tessera::{map, DType, Program};
    let x0: Vec<f32> = (0..n).map(|i| input("log", i, false)).collect();
    let x1: Vec<f32> = (0..n).map(|i| input("tanh", i, false).abs()).collect();
    let text = "y0 = sqrt(x0 * x1 + x1) - x0";
    let p = Program::parse(text, &[DType::F32, DType::F32]).expect("program parses");
    let mut s = format!(
        "map: `{text}` on {n} f32, 1 thread, best of 5 alternating samples of {target} s: fused vs four separate passes and a hand-written loop\n"
    );
    let mut ok = true;
    for tier in tessera::available_tiers() {
        let exec = Exec::on(tier).threads(1);
        let v0 = ArrayView::from_slice(&x0, &[n]).expect("view");
        let v1 = ArrayView::from_slice(&x1, &[n]).expect("view");
        let mut y = vec![0f32; n];
        let mut t1 = vec![0f32; n];
        let mut t2 = vec![0f32; n];
        let mut z = vec![0f32; n];
        let fused_run = |y: &mut [f32]| {
            let mut out = [ArrayViewMut::from_slice(y, &[n]).expect("view")];
            map(&p, &[v0.clone(), v1.clone()], &mut out, &exec).expect("map");
        };
        let passes = |t1: &mut [f32], t2: &mut [f32], z: &mut [f32]| {
            let call = |k: Kind, a: &[f32], b: Option<&[f32]>, o: &mut [f32]| {
                let mut ins = vec![ArrayView::from_slice(a, &[n]).expect("view")];
                if let Some(b) = b {
                    ins.push(ArrayView::from_slice(b, &[n]).expect("view"));
                }
                let mut ov = ArrayViewMut::from_slice(o, &[n]).expect("view");
                tessera::elementwise(k, &ins, &mut ov, &exec).expect("call");
            };
            call(Kind::Mul, &x0, Some(&x1), t1);
            call(Kind::Add, t1, Some(&x1), t2);
            call(Kind::Sqrt, t2, None, t1);
            call(Kind::Sub, t1, Some(&x0), z);
        };
        let mut h = vec![0f32; n];
        fused_run(&mut y);
        passes(&mut t1, &mut t2, &mut z);
        hand_loop_on(tier.name(), &x0, &x1, &mut h);
        let same_as = |z: &[f32]| {
            y.iter()
                .zip(z)
                .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
        };
        let same = same_as(&z) && same_as(&h);
        ok &= same;
        let t = crate::harness::alternate(
            &mut [
                &mut || fused_run(&mut y),
                &mut || passes(&mut t1, &mut t2, &mut z),
                &mut || hand_loop_on(tier.name(), &x0, &x1, &mut h),
            ],
            target,
        );
        let (tf, ts, th) = (t[0], t[1], t[2]);
        s += &format!(
            "  {:<7} fused {:.3} Gelem/s, separate {:.3} Gelem/s: {:.2}x; hand loop {:.3} Gelem/s: fused {:.2}x of it{}\n",
            tier.name(),
            n as f64 / tf / 1e9,
            n as f64 / ts / 1e9,
            ts / tf,
            n as f64 / th / 1e9,
            th / tf,
            if same { "" } else { "  FAILED: results differ" }
        );
    }
    s += "targets: fused >= 2x the separate passes and >= 0.9x the hand-written loop\n";
    (s, ok)
}
