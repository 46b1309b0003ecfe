//! Group `cast-sweep`: every cast to and from f32, one row per dtype and
//! direction, against the project's target (a cast to or from f32 runs at no
//! less than 0.70 of a same-size memcpy's bandwidth on one core).
//!
//! For each dtype D of [`DType::ALL`] other than f32: f32 → D over the f32 data
//! of [`f32_data`], then D → f32 over the codes that cast produced (so they are
//! valid), both in the default mode, one thread, on each vector tier the CPU
//! runs (avx2, avx512), one table each. Sub-byte
//! dtypes are packed (n values in n / values_per_byte bytes). The reference is
//! a memcpy (`copy_from_slice`) of the f32 buffer, its GB/s counting source
//! plus destination. Each row alternates one call of its cast with one memcpy
//! for `--time` seconds (at least [`RUNS`] of each, after one untimed call of
//! each) and compares the fastest cast with the fastest memcpy of that same
//! window, so that a host whose bandwidth drifts from minute to minute moves
//! both sides of a ratio together; GB/s counts bytes read plus bytes written.
//!
//! The group is slow at the default size (60 casts of 64 MiB of f32), so it
//! runs only when a filter names it, never in a plain or `--quick` run of
//! every group.

use crate::casts::f32_data;
use crate::chart::Chart;
use std::fmt::Write as _;
use std::time::Instant;
use tessera::{ArrayView, ArrayViewMut, CastMode, DType, Exec, Tier};

/// The group's name.
pub const NAME: &str = "cast-sweep";
/// Least timed calls per row (after one untimed call).
pub const RUNS: usize = 5;
/// The target: a row's GB/s over memcpy's.
pub const TARGET: f64 = 0.70;

/// One measured row.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The dtype cast to or from f32.
    pub dtype: DType,
    /// True for f32 → dtype, false for dtype → f32.
    pub from_f32: bool,
    /// GB/s (bytes read + written over the best call's time), or the error.
    pub gbps: Result<f64, String>,
    /// The memcpy's GB/s in the same window (read + written).
    pub memcpy_gbps: f64,
}

impl Row {
    /// GB/s over the memcpy of the row's window (an error for a failed row).
    pub fn ratio(&self) -> Result<f64, &String> {
        self.gbps.as_ref().map(|g| g / self.memcpy_gbps)
    }
}

/// What the sweep measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The tier the casts ran on.
    pub tier: Tier,
    /// Elements per array.
    pub n: usize,
    /// The fastest memcpy of the f32 buffer over every row's window, GB/s
    /// (read + written).
    pub memcpy_gbps: f64,
    /// Seconds of samples per row.
    pub secs: f64,
    /// Two rows per dtype.
    pub rows: Vec<Row>,
}

/// Bytes holding `n` elements of `dtype` (sub-byte dtypes packed).
pub fn dtype_bytes(dtype: DType, n: usize) -> usize {
    let info = dtype.info();
    let vpb = info.values_per_byte as usize;
    if vpb > 1 {
        n.div_ceil(vpb)
    } else {
        n * info.item_bytes
    }
}

/// Seconds of the fastest call of `f` and of `g` when the two alternate for
/// `secs` seconds (at least `RUNS` calls of each), after one untimed call of
/// each; `g`'s time is measured even when `f` fails (then `f`'s error).
fn best_interleaved<F, G>(secs: f64, mut f: F, mut g: G) -> (Result<f64, String>, f64)
where
    F: FnMut() -> Result<(), String>,
    G: FnMut(),
{
    let time = |h: &mut dyn FnMut()| {
        let t = Instant::now();
        h();
        t.elapsed().as_secs_f64()
    };
    g();
    let mut ok = f();
    let (mut best_f, mut best_g) = (f64::INFINITY, f64::INFINITY);
    let start = Instant::now();
    let mut runs = 0;
    while runs < RUNS || start.elapsed().as_secs_f64() < secs {
        if ok.is_ok() {
            let mut r = Ok(());
            best_f = best_f.min(time(&mut || r = f()));
            ok = r;
        }
        best_g = best_g.min(time(&mut g));
        runs += 1;
    }
    (ok.map(|()| best_f.max(1e-9)), best_g.max(1e-9))
}

fn cast(
    exec: &Exec,
    from: DType,
    src: &[u8],
    to: DType,
    dst: &mut [u8],
    n: usize,
) -> Result<(), String> {
    let src = ArrayView::contiguous(from, &[n], src).map_err(|e| e.to_string())?;
    let mut dst = ArrayViewMut::contiguous(to, &[n], dst).map_err(|e| e.to_string())?;
    tessera::cast(CastMode::Default, &src, &mut dst, exec).map_err(|e| e.to_string())
}

/// Runs the sweep over `bytes` bytes of f32 (rounded to a multiple of 32
/// elements) on `exec`, each row and each memcpy timed for `secs` seconds.
pub fn sweep(exec: &Exec, bytes: usize, only: &[DType], secs: f64) -> Sweep {
    let n = (bytes / 4).max(32) / 32 * 32;
    let x = f32_data(n);
    let src: &[u8] = tessera::array::as_bytes(&x);
    let f32_bytes = src.len();
    let mut copy = vec![0u8; f32_bytes];
    let mut back = vec![0u8; f32_bytes];
    let mut memcpy = || {
        copy.copy_from_slice(src);
        std::hint::black_box(&mut copy);
    };
    let copy_gbps = |s: f64| 2.0 * f32_bytes as f64 / s / 1e9;
    let mut rows = Vec::new();
    for dtype in DType::ALL
        .into_iter()
        .filter(|&d| d != DType::F32 && (only.is_empty() || only.contains(&d)))
    {
        let d_bytes = dtype_bytes(dtype, n);
        let moved = (f32_bytes + d_bytes) as f64;
        let mut codes = vec![0u8; d_bytes];
        let (to, m) = best_interleaved(
            secs,
            || cast(exec, DType::F32, src, dtype, &mut codes, n),
            &mut memcpy,
        );
        let ok = to.is_ok();
        rows.push(Row {
            dtype,
            from_f32: true,
            gbps: to.map(|s| moved / s / 1e9),
            memcpy_gbps: copy_gbps(m),
        });
        let (from, m) = if ok {
            best_interleaved(
                secs,
                || cast(exec, dtype, &codes, DType::F32, &mut back, n),
                &mut memcpy,
            )
        } else {
            (Err("no codes: the cast from f32 failed".to_string()), m)
        };
        rows.push(Row {
            dtype,
            from_f32: false,
            gbps: from.map(|s| moved / s / 1e9),
            memcpy_gbps: copy_gbps(m),
        });
    }
    let memcpy_gbps = rows.iter().map(|r| r.memcpy_gbps).fold(0.0, f64::max);
    Sweep {
        tier: exec.resolve_tier().unwrap_or(Tier::Scalar),
        n,
        memcpy_gbps,
        secs,
        rows,
    }
}

impl Sweep {
    /// The rows below the target (failed rows count as below).
    pub fn below(&self) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.ratio().map_or(true, |q| q < TARGET))
            .collect()
    }

    /// The table and the summary line.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{NAME}  (every cast to and from f32, default mode, {} tier, 1 thread; {} f32 = {:.1} MiB; fastest call of {} s of samples alternating with a memcpy, at least {RUNS} each; GB/s = bytes read + written; x memcpy = over the memcpy of the row's own window)",
            self.tier.name(),
            self.n,
            (self.n * 4) as f64 / (1u64 << 20) as f64,
            self.secs
        );
        let _ = writeln!(
            s,
            "  {:<12}  {:<9}  {:>9}  {:>11}  {:>8}  result",
            "dtype", "direction", "GB/s", "memcpy GB/s", "x memcpy"
        );
        let _ = writeln!(
            s,
            "  {:<12}  {:<9}  {:>9.2}  {:>11.2}  {:>8.2}  (the fastest memcpy of every window)",
            "memcpy", "f32", self.memcpy_gbps, self.memcpy_gbps, 1.0
        );
        for r in &self.rows {
            let dir = if r.from_f32 { "f32 -> D" } else { "D -> f32" };
            match (&r.gbps, r.ratio()) {
                (Ok(g), Ok(ratio)) => {
                    let verdict = if ratio >= TARGET { "ok" } else { "BELOW 0.70" };
                    let _ = writeln!(
                        s,
                        "  {:<12}  {:<9}  {:>9.2}  {:>11.2}  {:>8.2}  {verdict}",
                        r.dtype.name(),
                        dir,
                        g,
                        r.memcpy_gbps,
                        ratio
                    );
                }
                (Err(e), _) | (_, Err(e)) => {
                    let _ = writeln!(s, "  {:<12}  {:<9}  FAILED: {e}", r.dtype.name(), dir);
                }
            }
        }
        let below = self.below();
        let _ = writeln!(
            s,
            "  {} of {} rows below the target of {TARGET:.2} x memcpy{}",
            below.len(),
            self.rows.len(),
            if below.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = below
                    .iter()
                    .map(|r| {
                        if r.from_f32 {
                            format!("f32->{}", r.dtype.name())
                        } else {
                            format!("{}->f32", r.dtype.name())
                        }
                    })
                    .collect();
                format!(": {}", names.join(", "))
            }
        );
        s
    }
}

/// The dtypes a filter `cast-sweep:D1,D2,…` restricts the sweep to (empty: all).
pub fn restriction(filters: &[String]) -> Result<Vec<DType>, String> {
    let mut only = Vec::new();
    for f in filters {
        if let Some(list) = f.strip_prefix(&format!("{NAME}:")) {
            for name in list.split(',') {
                only.push(DType::from_name(name).ok_or(format!("{NAME}: unknown dtype `{name}`"))?);
            }
        }
    }
    Ok(only)
}

/// Runs the group over `bytes` bytes of f32 (only the casts of `only`'s dtypes
/// when it is not empty; `secs` seconds of samples per row) on each vector
/// tier this CPU runs and returns the
/// tables, or a note when it runs none. The second value is false when a cast
/// failed; the third is the tables as one chart ([`chart`]).
pub fn run(bytes: usize, only: &[DType], secs: f64) -> (String, bool, Chart) {
    let tiers: Vec<Tier> = tessera::available_tiers()
        .into_iter()
        .filter(|&t| t != Tier::Scalar)
        .collect();
    if tiers.is_empty() {
        return (
            format!("{NAME}: skipped: this CPU runs no vector tier of tessera\n"),
            true,
            chart(&[]),
        );
    }
    let mut text = String::new();
    let mut ok = true;
    let mut sweeps = Vec::new();
    for tier in tiers {
        let s = sweep(&Exec::on(tier).threads(1), bytes, only, secs);
        ok &= s.rows.iter().all(|r| r.gbps.is_ok());
        text.push_str(&s.table());
        sweeps.push(s);
    }
    (text, ok, chart(&sweeps))
}

/// The sweeps of every tier as one chart: a row per cast, a bar per tier's
/// GB/s (the best tier first; a failed cast: no bar) and one for the memcpy
/// of the window of the tier whose ratio is the row's label: the best ratio
/// to its own window's memcpy, as the tables compute it.
pub fn chart(sweeps: &[Sweep]) -> Chart {
    let n = sweeps.first().map_or(0, |s| s.n);
    let mut c = Chart::new(
        NAME,
        format!(
            "every cast to and from f32, default mode, 1 thread, {n} f32; bytes read + written"
        ),
        "GB/s",
    )
    .ratio_note(format!(
        "the best tier's GB/s ÷ the memcpy of its own window (target {TARGET:.2})"
    ))
    .target(TARGET);
    let Some(first) = sweeps.first() else {
        return c;
    };
    for (i, r) in first.rows.iter().enumerate() {
        let label = if r.from_f32 {
            format!("f32 → {}", r.dtype.name())
        } else {
            format!("{} → f32", r.dtype.name())
        };
        // The same cast in another tier's sweep.
        fn same<'a>(s: &'a Sweep, i: usize, r: &Row) -> Option<&'a Row> {
            s.rows
                .get(i)
                .filter(|q| q.dtype == r.dtype && q.from_f32 == r.from_f32)
        }
        let row = |s| same(s, i, r);
        let mut cells: Vec<(String, Option<f64>)> = sweeps
            .iter()
            .rev()
            .map(|s| {
                (
                    format!("tessera {}", s.tier.name()),
                    row(s).and_then(|q| q.gbps.as_ref().ok().copied()),
                )
            })
            .collect();
        let best = sweeps
            .iter()
            .filter_map(row)
            .filter_map(|q| q.ratio().ok().map(|x| (x, q.memcpy_gbps)))
            .reduce(|a, b| if b.0 > a.0 { b } else { a });
        cells.push(("memcpy".to_string(), best.map(|b| b.1)));
        let cells: Vec<(&str, Option<f64>)> = cells.iter().map(|(p, v)| (p.as_str(), *v)).collect();
        c.add_row(label, &cells, best.map(|b| b.0));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_sizes() {
        assert_eq!(dtype_bytes(DType::U1, 64), 8);
        assert_eq!(dtype_bytes(DType::I4, 64), 32);
        assert_eq!(dtype_bytes(DType::E2m1fn, 64), 32);
        assert_eq!(dtype_bytes(DType::C128, 64), 1024);
        assert_eq!(dtype_bytes(DType::E4m3fn, 64), 64);
    }

    #[test]
    fn small_sweep_covers_every_dtype_and_succeeds() {
        let exec = Exec::default().threads(1);
        let s = sweep(&exec, 4096, &[], 0.0);
        assert_eq!(s.rows.len(), 2 * (DType::ALL.len() - 1));
        for r in &s.rows {
            assert!(r.gbps.is_ok(), "{} {}: {:?}", r.dtype, r.from_f32, r.gbps);
        }
        let t = s.table();
        assert!(t.contains("e2m1fn") && t.contains("rows below the target"));
    }

    #[test]
    fn a_filter_restricts_the_dtypes() {
        let f = vec!["cast-sweep:u4,float8_e4m3fn".to_string()];
        assert_eq!(restriction(&f).unwrap(), [DType::U4, DType::E4m3fn]);
        assert!(restriction(&["cast-sweep:nope".to_string()]).is_err());
        let s = sweep(&Exec::default().threads(1), 4096, &[DType::U4], 0.0);
        assert_eq!(s.rows.len(), 2);
    }
}
