//! The `sort` group: tessera's stable sort of 16M elements (f32, u32, i64;
//! values alone, and values with i64 positions) on one thread beside the
//! standard library's `slice::sort` (driftsort, stable) and
//! `slice::sort_unstable` (ipnsort), and top-k of 1% beside tessera's own
//! full sort. Times are ns per element, best of alternating samples; each
//! call starts from the unsorted input (the peers copy it into their buffer
//! first, as tessera reads it into its destination). Ratios are peer time /
//! tessera time (above 1: tessera faster). Each result is compared with the
//! stable peer's after timing (a mismatch is reported). numpy's figures come from
//! `bench/scripts/sort_numpy.py` (same sizes, one thread). On an AVX-512 tier
//! the values-alone rows run the vector quicksort (`order/quicksort.rs`),
//! the others the radix sort.

use crate::chart::{speed_ratio, Chart};
use std::time::Instant;
use tessera::order::sort;
use tessera::{ArrayView, ArrayViewMut, Element, Exec};
use tessera_testkit::rng::Rng;

/// The group's name on the command line.
pub const NAME: &str = "sort";

/// Best seconds per call of each closure, sampled alternately.
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

trait Key: Element + Copy + Default + Send + Sync {
    const NAME: &'static str;
    fn draw(rng: &mut Rng) -> Self;
    fn cmp(a: &Self, b: &Self) -> std::cmp::Ordering;
    fn bits(self) -> u64;
}
impl Key for f32 {
    const NAME: &'static str = "f32";
    fn draw(rng: &mut Rng) -> f32 {
        // Finite, both signs, magnitudes over many binades.
        (rng.unit() as f32 - 0.5) * (2f32).powi(rng.below(40) as i32 - 20)
    }
    fn cmp(a: &f32, b: &f32) -> std::cmp::Ordering {
        a.total_cmp(b)
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}
impl Key for u32 {
    const NAME: &'static str = "u32";
    fn draw(rng: &mut Rng) -> u32 {
        rng.next_u32()
    }
    fn cmp(a: &u32, b: &u32) -> std::cmp::Ordering {
        a.cmp(b)
    }
    fn bits(self) -> u64 {
        self as u64
    }
}
impl Key for i64 {
    const NAME: &'static str = "i64";
    fn draw(rng: &mut Rng) -> i64 {
        rng.next_u64() as i64
    }
    fn cmp(a: &i64, b: &i64) -> std::cmp::Ordering {
        a.cmp(b)
    }
    fn bits(self) -> u64 {
        self as u64
    }
}

struct Row {
    case: String,
    tessera: f64,
    stable: f64,
    unstable: f64,
    ok: bool,
}

fn values_case<T: Key>(n: usize, rounds: usize, rng: &mut Rng) -> Row {
    let x: Vec<T> = (0..n).map(|_| T::draw(rng)).collect();
    let mut out = vec![T::default(); n];
    let mut a = vec![T::default(); n];
    let mut b = vec![T::default(); n];
    let xv = ArrayView::from_slice(&x, &[n]).expect("a view");
    let mut tes = || {
        let mut o = ArrayViewMut::from_slice(&mut out, &[n]).expect("a view");
        sort(0, false, &xv, &mut o, None, &Exec::SEQ).expect("sort");
    };
    let mut st = || {
        a.copy_from_slice(&x);
        a.sort_by(T::cmp);
    };
    let mut un = || {
        b.copy_from_slice(&x);
        b.sort_unstable_by(T::cmp);
    };
    let t = race(&mut [&mut tes, &mut st, &mut un], rounds);
    let ok = out.iter().zip(&a).all(|(p, q)| p.bits() == q.bits());
    Row {
        case: format!("{} values {n}", T::NAME),
        tessera: t[0],
        stable: t[1],
        unstable: t[2],
        ok,
    }
}

fn pairs_case<T: Key>(n: usize, rounds: usize, rng: &mut Rng) -> Row {
    let x: Vec<T> = (0..n).map(|_| T::draw(rng)).collect();
    let mut out = vec![T::default(); n];
    let mut pos = vec![0i64; n];
    let mut a: Vec<(T, i64)> = vec![(T::default(), 0); n];
    let mut b: Vec<(T, i64)> = vec![(T::default(), 0); n];
    let xv = ArrayView::from_slice(&x, &[n]).expect("a view");
    let mut tes = || {
        let mut o = ArrayViewMut::from_slice(&mut out, &[n]).expect("a view");
        let mut p = ArrayViewMut::from_slice(&mut pos, &[n]).expect("a view");
        sort(0, false, &xv, &mut o, Some(&mut p), &Exec::SEQ).expect("sort");
    };
    // Stable: sort_by_key on (value, position) pairs, by value.
    let mut st = || {
        for (i, (d, &v)) in a.iter_mut().zip(&x).enumerate() {
            *d = (v, i as i64);
        }
        a.sort_by(|p, q| T::cmp(&p.0, &q.0));
    };
    // Unstable on (value, position): distinct pairs, so the same order.
    let mut un = || {
        for (i, (d, &v)) in b.iter_mut().zip(&x).enumerate() {
            *d = (v, i as i64);
        }
        b.sort_unstable_by(|p, q| T::cmp(&p.0, &q.0).then(p.1.cmp(&q.1)));
    };
    let t = race(&mut [&mut tes, &mut st, &mut un], rounds);
    let ok = out
        .iter()
        .zip(&pos)
        .zip(&a)
        .all(|((v, p), (w, q))| v.bits() == w.bits() && p == q);
    Row {
        case: format!("{} values+positions {n}", T::NAME),
        tessera: t[0],
        stable: t[1],
        unstable: t[2],
        ok,
    }
}

/// Top-k of 1% (values and positions) beside tessera's full sort.
fn topk_case(n: usize, rounds: usize, rng: &mut Rng) -> (String, f64, f64, bool) {
    let x: Vec<f32> = (0..n).map(|_| f32::draw(rng)).collect();
    let k = n / 100;
    let mut full = vec![0f32; n];
    let mut fpos = vec![0i64; n];
    let mut top = vec![0f32; k];
    let mut tpos = vec![0i64; k];
    let xv = ArrayView::from_slice(&x, &[n]).expect("a view");
    let mut f = || {
        let mut o = ArrayViewMut::from_slice(&mut full, &[n]).expect("a view");
        let mut p = ArrayViewMut::from_slice(&mut fpos, &[n]).expect("a view");
        sort(0, false, &xv, &mut o, Some(&mut p), &Exec::SEQ).expect("sort");
    };
    let mut t = || {
        let mut o = ArrayViewMut::from_slice(&mut top, &[k]).expect("a view");
        let mut p = ArrayViewMut::from_slice(&mut tpos, &[k]).expect("a view");
        sort(0, false, &xv, &mut o, Some(&mut p), &Exec::SEQ).expect("sort");
    };
    let s = race(&mut [&mut t, &mut f], rounds);
    let ok = top
        .iter()
        .zip(&full)
        .all(|(a, b)| a.to_bits() == b.to_bits())
        && tpos[..] == fpos[..k];
    (format!("f32 top-k 1% of {n}"), s[0], s[1], ok)
}

/// Run the group; returns its table, whether every result agreed, and the
/// table as a chart.
pub fn run(quick: bool) -> (String, bool, Chart) {
    let mut rng = Rng::for_label("bench sort", 1);
    let n = if quick { 1 << 20 } else { 1 << 24 };
    let rounds = if quick { 1 } else { 3 };
    let rows = vec![
        values_case::<f32>(n, rounds, &mut rng),
        pairs_case::<f32>(n, rounds, &mut rng),
        values_case::<u32>(n, rounds, &mut rng),
        pairs_case::<u32>(n, rounds, &mut rng),
        values_case::<i64>(n, rounds, &mut rng),
        pairs_case::<i64>(n, rounds, &mut rng),
    ];
    let mut out = format!(
        "{NAME}: ns/element, one thread, best of {rounds} alternating samples; ratio = peer / tessera (above 1: tessera faster)\n"
    );
    out.push_str(&format!(
        "{:<30} {:>9} {:>12} {:>14} {:>9} {:>9}\n",
        "case", "tessera", "slice::sort", "sort_unstable", "vs sort", "vs unst."
    ));
    let mut chart = Chart::new(
        NAME,
        format!("{n} elements, one thread, best of {rounds} alternating samples"),
        "ns/element",
    )
    .lower_is_better()
    .ratio_note(
        "tessera's speed ÷ the faster std sort's; top-k: ÷ tessera's full sort (above 1: tessera faster)",
    );
    let mut all_ok = true;
    let ns = |s: f64| s * 1e9 / n as f64;
    for r in &rows {
        all_ok &= r.ok;
        chart.add_row(
            format!("{}{}", r.case, if r.ok { "" } else { " MISMATCH" }),
            &[
                ("tessera", Some(ns(r.tessera))),
                ("slice::sort", Some(ns(r.stable))),
                ("sort_unstable", Some(ns(r.unstable))),
            ],
            speed_ratio(r.tessera, r.stable.min(r.unstable), true),
        );
        out.push_str(&format!(
            "{:<30} {:>9.2} {:>12.2} {:>14.2} {:>8.2}x {:>8.2}x{}\n",
            r.case,
            ns(r.tessera),
            ns(r.stable),
            ns(r.unstable),
            r.stable / r.tessera,
            r.unstable / r.tessera,
            if r.ok { "" } else { "  MISMATCH" }
        ));
    }
    let (case, t, f, ok) = topk_case(n, rounds, &mut rng);
    all_ok &= ok;
    chart.add_row(
        format!("{case}{}", if ok { "" } else { " MISMATCH" }),
        &[("tessera", Some(ns(t))), ("tessera full sort", Some(ns(f)))],
        speed_ratio(t, f, true),
    );
    out.push_str(&format!(
        "{:<30} {:>9.2} ns/element; full sort {:.2}; full / top-k {:.2}x{}\n",
        case,
        ns(t),
        ns(f),
        f / t,
        if ok { "" } else { "  MISMATCH" }
    ));
    (out, all_ok, chart)
}
