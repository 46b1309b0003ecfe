//! The `gather`, `scatter` and `unique` groups: tessera's movement and
//! numbering kernels beside the plain loops a caller would write, in one
//! process, samples alternating (best of 3 rounds, each at least 0.2 s of
//! calls; `--quick`: small sizes, one round). Each result is checked
//! against the peer's before timing.
//!
//! * `gather`: 16M f32 gathered from 16M and from 1M (GB/s: the positions
//!   and values read and written) beside `out[j] = x[p]` with the same
//!   zero for a position out of range; `gather_ranges` of 10 000 runs of
//!   rows of 64 bytes, 64 MiB in all, beside one `memcpy` of as many bytes.
//! * `scatter`: Add of 16M f32 updates into 1M and into 16M targets, with
//!   uniform positions and with positions among 1024 hot targets, beside
//!   the serial loop `dst.copy_from_slice(into); dst[i[j]] += u[j]` (the
//!   deterministic baseline computing the same result), tessera at 1 and 2
//!   threads.
//! * `unique`: numbering of 16M i64 keys (1000 distinct, 1M distinct, all
//!   distinct, and 1M distinct of small span) beside a `hashbrown` +
//!   `foldhash` loop writing the same ids, first rows and counts, tessera
//!   at 1 and 2 threads. numpy's `np.unique` is measured by
//!   `bench/scripts/unique_numpy.py`.

use crate::chart::{speed_ratio, Chart};
use std::time::Instant;
use tessera::{gather, gather_ranges, scatter, ArrayView, ArrayViewMut, Combine, Exec};
use tessera_testkit::rng::Rng;

/// The gather group's name on the command line.
pub const GATHER: &str = "gather";
/// The scatter group's name.
pub const SCATTER: &str = "scatter";
/// The unique group's name.
pub const UNIQUE: &str = "unique";

/// Best seconds per call of each closure, sampled alternately.
pub(crate) fn race(fs: &mut [&mut dyn FnMut()], quick: bool) -> Vec<f64> {
    let sample = if quick { 0.01 } else { 0.2 };
    let mut best = vec![f64::INFINITY; fs.len()];
    let mut reps = vec![1usize; fs.len()];
    for (i, f) in fs.iter_mut().enumerate() {
        let t = Instant::now();
        f();
        let dt = t.elapsed().as_secs_f64().max(1e-9);
        reps[i] = ((sample / dt).ceil() as usize).max(1);
    }
    for _ in 0..if quick { 1 } else { 3 } {
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

struct Row {
    case: String,
    unit: &'static str,
    /// (name, value in unit or seconds), tessera's first.
    cols: Vec<(String, f64)>,
    ok: bool,
}

/// The table of group `name` (its first line `title`), whether every row's
/// check held, and the rows as a chart (its title `name: about`).
fn table(name: &str, title: &str, about: &str, rows: &[Row]) -> (String, bool, Chart) {
    let unit = rows.first().map_or("", |r| r.unit);
    let mut chart = Chart::new(
        name,
        format!("{about}; tier {}", tessera::active_tier()),
        if unit == "s" { "s/call" } else { unit },
    )
    .ratio_note("tessera (one thread) ÷ the peer, as speed (above 1: tessera faster)");
    if unit == "s" {
        chart = chart.lower_is_better();
    }
    let mut out = format!(
        "{title}; tier {}\n{:<46} {:>12} {:>12} {:>12} {:>8} {:>8}\n",
        tessera::active_tier(),
        "case",
        "tessera",
        "tessera 2thr",
        "peer",
        "1thr/pr",
        "2thr/pr"
    );
    let mut ok = true;
    for r in rows {
        let v = |i: usize| r.cols.get(i).map(|c| c.1);
        let fmt = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.3}"));
        // Ratios as speed: tessera over peer (above 1: tessera faster).
        let speed = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if r.unit == "s" => format!("{:.2}", b / a),
            (Some(a), Some(b)) => format!("{:.2}", a / b),
            _ => "-".into(),
        };
        let (t1, t2, p) = (
            v(0),
            if r.cols.len() > 2 { v(1) } else { None },
            r.cols.last().map(|c| c.1),
        );
        out.push_str(&format!(
            "{:<46} {:>12} {:>12} {:>12} {:>8} {:>8}{}\n",
            format!("{} [{}]", r.case, r.unit),
            fmt(t1),
            fmt(t2),
            fmt(p),
            speed(t1, p),
            speed(t2, p),
            if r.ok { "" } else { "  MISMATCH" }
        ));
        ok &= r.ok;
        let cells: Vec<(&str, Option<f64>)> =
            r.cols.iter().map(|(p, v)| (p.as_str(), Some(*v))).collect();
        chart.add_row(
            format!("{}{}", r.case, if r.ok { "" } else { " MISMATCH" }),
            &cells,
            t1.zip(p)
                .and_then(|(a, b)| speed_ratio(a, b, r.unit == "s")),
        );
    }
    (out, ok, chart)
}

fn two() -> Exec {
    Exec::default().threads(2)
}

// ---------- gather ----------

fn gather_case(n: usize, src: usize, quick: bool, rng: &mut Rng) -> Row {
    let x: Vec<f32> = (0..src).map(|i| i as f32).collect();
    let pos: Vec<i64> = (0..n).map(|_| rng.below(src as u64) as i64).collect();
    let mut a = vec![0f32; n];
    let mut b = vec![0f32; n];
    let xv = ArrayView::from_slice(&x, &[src]).unwrap();
    let pv = ArrayView::from_slice(&pos, &[n]).unwrap();
    let mut f1 = || {
        gather(
            0,
            &xv,
            &pv,
            &mut ArrayViewMut::from_slice(&mut a, &[n]).unwrap(),
            &Exec::SEQ,
        )
        .unwrap();
    };
    f1();
    let mut fp = || {
        for (o, &p) in b.iter_mut().zip(&pos) {
            *o = if (p as u64) < src as u64 {
                x[p as usize]
            } else {
                0.0
            };
        }
    };
    fp();
    let mut c = vec![0f32; n];
    let mut f2 = || {
        gather(
            0,
            &xv,
            &pv,
            &mut ArrayViewMut::from_slice(&mut c, &[n]).unwrap(),
            &two(),
        )
        .unwrap();
    };
    let t = race(&mut [&mut f1, &mut f2, &mut fp], quick);
    let ok = a == b && c == b;
    let gb = (n * 16) as f64 / 1e9;
    Row {
        case: format!("gather f32 {n} from {src}"),
        unit: "GB/s",
        cols: vec![
            ("tessera".into(), gb / t[0]),
            ("tessera 2thr".into(), gb / t[1]),
            ("loop".into(), gb / t[2]),
        ],
        ok,
    }
}

fn ranges_case(quick: bool, rng: &mut Rng) -> Row {
    let cells = 16usize; // 64-byte rows of f32
    let rows = if quick { 1 << 16 } else { 1 << 20 };
    let k = if quick { 1000 } else { 10_000 };
    let x: Vec<f32> = (0..rows * cells).map(|i| i as f32).collect();
    // Runs of random lengths whose total is the destination's rows.
    let mut starts = Vec::with_capacity(k);
    let mut ends = Vec::with_capacity(k);
    let mut acc = 0i64;
    for j in 0..k {
        let len = if j + 1 == k {
            rows as i64 - acc
        } else {
            (rng.below((2 * rows / k) as u64) as i64).min(rows as i64 - acc)
        };
        starts.push(rng.below((rows as i64 - len + 1) as u64) as i64);
        acc += len;
        ends.push(acc);
    }
    let size = rows;
    let mut a = vec![0f32; size * cells];
    let mut b = vec![0f32; size * cells];
    let xv = ArrayView::from_slice(&x, &[rows, cells]).unwrap();
    let sv = ArrayView::from_slice(&starts, &[k]).unwrap();
    let ev = ArrayView::from_slice(&ends, &[k]).unwrap();
    let mut f1 = || {
        gather_ranges(
            &xv,
            &sv,
            &ev,
            &mut ArrayViewMut::from_slice(&mut a, &[size, cells]).unwrap(),
            &Exec::SEQ,
        )
        .unwrap();
    };
    f1();
    // The check: the runs by hand.
    let mut want = vec![0f32; size * cells];
    let mut e = 0usize;
    for j in 0..k {
        let (s, end) = (starts[j] as usize, ends[j] as usize);
        want[e * cells..end * cells].copy_from_slice(&x[s * cells..(s + end - e) * cells]);
        e = end;
    }
    let mut fp = || b.copy_from_slice(&x[..size * cells]);
    let mut c = vec![0f32; size * cells];
    let mut f2 = || {
        gather_ranges(
            &xv,
            &sv,
            &ev,
            &mut ArrayViewMut::from_slice(&mut c, &[size, cells]).unwrap(),
            &two(),
        )
        .unwrap();
    };
    let t = race(&mut [&mut f1, &mut f2, &mut fp], quick);
    let ok = a == want && c == want;
    let gb = (size * cells * 4 * 2) as f64 / 1e9;
    Row {
        case: format!("gather_ranges {k} runs, {size} rows of 64 B"),
        unit: "GB/s",
        cols: vec![
            ("tessera".into(), gb / t[0]),
            ("tessera 2thr".into(), gb / t[1]),
            ("memcpy".into(), gb / t[2]),
        ],
        ok,
    }
}

/// Run the gather group; the table, whether every check passed, and the chart.
pub fn run_gather(quick: bool) -> (String, bool, Chart) {
    let mut rng = Rng::for_label("bench gather", 1);
    let n = if quick { 1 << 18 } else { 1 << 24 };
    let rows = vec![
        gather_case(n, n, quick, &mut rng),
        gather_case(n, if quick { 1 << 14 } else { 1 << 20 }, quick, &mut rng),
        ranges_case(quick, &mut rng),
    ];
    table(
        GATHER,
        "gather: GB/s (bytes read and written), peer a plain loop / memcpy",
        "bytes read and written, peer a plain loop / memcpy",
        &rows,
    )
}

// ---------- scatter ----------

fn scatter_case(m: usize, n: usize, hot: Option<usize>, quick: bool, rng: &mut Rng) -> Row {
    let into: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.5).collect();
    let upd: Vec<f32> = (0..m).map(|_| rng.unit() as f32 - 0.5).collect();
    let targets: Vec<i64> = match hot {
        Some(h) => (0..h).map(|_| rng.below(n as u64) as i64).collect(),
        None => Vec::new(),
    };
    let pos: Vec<i64> = (0..m)
        .map(|_| match hot {
            Some(h) => targets[rng.below_usize(h)],
            None => rng.below(n as u64) as i64,
        })
        .collect();
    let iv = ArrayView::from_slice(&into, &[n]).unwrap();
    let pv = ArrayView::from_slice(&pos, &[m]).unwrap();
    let uv = ArrayView::from_slice(&upd, &[m]).unwrap();
    let mut a = vec![0f32; n];
    let mut c = vec![0f32; n];
    let mut b = vec![0f32; n];
    let mut f1 = || {
        scatter(
            Combine::Add,
            0,
            &iv,
            &pv,
            &uv,
            &mut ArrayViewMut::from_slice(&mut a, &[n]).unwrap(),
            &Exec::SEQ,
        )
        .unwrap();
    };
    let mut f2 = || {
        scatter(
            Combine::Add,
            0,
            &iv,
            &pv,
            &uv,
            &mut ArrayViewMut::from_slice(&mut c, &[n]).unwrap(),
            &two(),
        )
        .unwrap();
    };
    let mut fp = || {
        b.copy_from_slice(&into);
        for (&p, &u) in pos.iter().zip(&upd) {
            if (p as u64) < n as u64 {
                b[p as usize] += u;
            }
        }
    };
    let t = race(&mut [&mut f1, &mut f2, &mut fp], quick);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let ok = bits(&a) == bits(&b) && bits(&c) == bits(&b);
    Row {
        case: format!(
            "scatter-add f32 {}M into {}M{}",
            m >> 20,
            n.max(1 << 20) >> 20,
            match hot {
                Some(h) => format!(" ({h} hot)"),
                None => " (uniform)".into(),
            }
        ),
        unit: "s",
        cols: vec![
            ("tessera".into(), t[0]),
            ("tessera 2thr".into(), t[1]),
            ("serial loop".into(), t[2]),
        ],
        ok,
    }
}

/// Run the scatter group; the table, whether every check passed, and the chart.
pub fn run_scatter(quick: bool) -> (String, bool, Chart) {
    let mut rng = Rng::for_label("bench scatter", 1);
    let m = if quick { 1 << 18 } else { 1 << 24 };
    let mut rows = Vec::new();
    for n in [m / 16, m] {
        for hot in [None, Some(1024)] {
            rows.push(scatter_case(m, n, hot, quick, &mut rng));
        }
    }
    table(
        SCATTER,
        "scatter: seconds per call (ratios: peer time / tessera time), peer the serial loop with its copy of into",
        "scatter-add, peer the serial loop with its copy of into",
        &rows,
    )
}

// ---------- unique ----------

/// The peer: hashbrown's table with foldhash's fast hasher, numbering by
/// first appearance into ids, first rows and counts.
fn peer_unique(keys: &[i64], ids: &mut [i64], first: &mut Vec<i64>, counts: &mut Vec<i64>) {
    let mut map: hashbrown::HashMap<i64, i64, foldhash::fast::RandomState> =
        hashbrown::HashMap::with_hasher(foldhash::fast::RandomState::default());
    first.clear();
    counts.clear();
    for (r, (&k, id)) in keys.iter().zip(ids.iter_mut()).enumerate() {
        let next = first.len() as i64;
        let g = *map.entry(k).or_insert(next);
        if g == next {
            first.push(r as i64);
            counts.push(0);
        }
        counts[g as usize] += 1;
        *id = g;
    }
}

fn unique_case(label: &str, keys: Vec<i64>, quick: bool) -> Row {
    let n = keys.len();
    let kv = ArrayView::from_slice(&keys, &[n, 1]).unwrap();
    let mut pids = vec![0i64; n];
    let mut pfirst = Vec::new();
    let mut pcounts = Vec::new();
    // `first` and `counts` hold as many entries as the caller asks for: here
    // one per key, as the peer's vectors end up (a caller that knows its key
    // count, or a second call); the peer's run before timing says how many.
    peer_unique(&keys, &mut pids, &mut pfirst, &mut pcounts);
    let m = pfirst.len();
    let mut ids = vec![0i64; n];
    let mut first = vec![0i64; m];
    let mut counts = vec![0i64; m];
    let mut count = [0i64];
    let mut ids2 = vec![0i64; n];
    let mut first2 = vec![0i64; m];
    let mut counts2 = vec![0i64; m];
    let mut count2 = [0i64];
    let run_t = |exec: &Exec,
                 ids: &mut [i64],
                 first: &mut [i64],
                 counts: &mut [i64],
                 count: &mut [i64; 1]| {
        count[0] = tessera::unique(
            &kv,
            &mut ArrayViewMut::from_slice(ids, &[n]).unwrap(),
            &mut ArrayViewMut::from_slice(first, &[m]).unwrap(),
            &mut ArrayViewMut::from_slice(counts, &[m]).unwrap(),
            exec,
        )
        .unwrap() as i64;
    };
    let mut f1 = || run_t(&Exec::SEQ, &mut ids, &mut first, &mut counts, &mut count);
    f1();
    let mut fp = || peer_unique(&keys, &mut pids, &mut pfirst, &mut pcounts);
    fp();
    let t;
    {
        let run_2 =
            |ids: &mut [i64], first: &mut [i64], counts: &mut [i64], count: &mut [i64; 1]| {
                count[0] = tessera::unique(
                    &kv,
                    &mut ArrayViewMut::from_slice(ids, &[n]).unwrap(),
                    &mut ArrayViewMut::from_slice(first, &[m]).unwrap(),
                    &mut ArrayViewMut::from_slice(counts, &[m]).unwrap(),
                    &two(),
                )
                .unwrap() as i64;
            };
        let mut f2 = || run_2(&mut ids2, &mut first2, &mut counts2, &mut count2);
        let mut f1 = || run_t(&Exec::SEQ, &mut ids, &mut first, &mut counts, &mut count);
        t = race(&mut [&mut f1, &mut f2, &mut fp], quick);
    }
    let k = pfirst.len();
    let ok = ids == pids
        && first[..k] == pfirst[..]
        && counts[..k] == pcounts[..]
        && count[0] as usize == k
        && ids2 == pids
        && count2 == count;
    Row {
        case: format!("unique i64 {}M, {label} ({k} keys)", n >> 20),
        unit: "s",
        cols: vec![
            ("tessera".into(), t[0]),
            ("tessera 2thr".into(), t[1]),
            ("hashbrown+foldhash".into(), t[2]),
        ],
        ok,
    }
}

/// Run the unique group; the table, whether every check passed, and the chart.
pub fn run_unique(quick: bool) -> (String, bool, Chart) {
    let mut rng = Rng::for_label("bench unique", 1);
    let n = if quick { 1 << 18 } else { 1 << 24 };
    let pool =
        |rng: &mut Rng, k: usize| -> Vec<i64> { (0..k).map(|_| rng.next_u64() as i64).collect() };
    let few = pool(&mut rng, 1000);
    let many = pool(&mut rng, n / 16);
    let rows = vec![
        unique_case(
            "few",
            (0..n).map(|_| few[rng.below_usize(few.len())]).collect(),
            quick,
        ),
        unique_case(
            "many",
            (0..n).map(|_| many[rng.below_usize(many.len())]).collect(),
            quick,
        ),
        unique_case(
            "all distinct",
            (0..n).map(|_| rng.next_u64() as i64).collect(),
            quick,
        ),
        unique_case(
            "small span",
            (0..n)
                .map(|_| rng.below((n / 16) as u64) as i64 - 5000)
                .collect(),
            quick,
        ),
    ];
    table(
        UNIQUE,
        "unique: seconds per call (ratios: peer time / tessera time)",
        "numbering of i64 keys, peer a hashbrown + foldhash loop",
        &rows,
    )
}
