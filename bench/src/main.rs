//! # tessera-bench
//!
//! tessera side by side with its peers, measured in one process, reported as
//! GB/s and as ratios (ratios travel between machines; absolute rates do not).
//!
//! ```text
//! cargo run --release -p tessera-bench -- elementwise-f32   # add, mul and fma
//! cargo run --release -p tessera-bench -- add mul           # some groups only
//! cargo run --release -p tessera-bench                      # every group
//! cargo run --release -p tessera-bench -- --quick           # smoke run (CI)
//! cargo run --release -p tessera-bench -- --json > bench.json
//! cargo run --release -p tessera-bench -- gemm math:all --svg docs/charts
//! ```
//!
//! Always run it in release: a debug build measures the debug build.
//!
//! ## Groups
//!
//! * `bandwidth`: what one core moves through memory: `memcpy`
//!   (`copy_from_slice`, which may use streaming stores on large buffers), a
//!   `copy loop` with ordinary stores, `read` (a sum over one buffer) and
//!   `write` (`fill`). The line to compare every other rate with. These are
//!   baseline-target loops sized for memory: on buffers that fit in cache they
//!   measure the core more than the caches.
//! * `elementwise-f32/add`, `/mul`, `/fma`: `y = a + b`, `a × b`, `a × b + c`
//!   on contiguous f32 arrays. Peers: `tessera <tier>` for every tier the CPU
//!   runs (`Exec::on(tier)`), `plain loop` (`for i in 0..n { y[i] = a[i] + b[i] }`,
//!   the baseline), `iterator zip`, `loop avx2+fma` (the same loop compiled
//!   with `#[target_feature(enable = "avx2,fma")]`, the like-for-like peer of
//!   tessera's avx2 tier; without that feature `f32::mul_add` is a libm call per
//!   element), `ndarray Zip` and `memcpy` of one operand (the bandwidth
//!   reference).
//!
//! Filters select groups whose name contains any of them (`add` selects
//! `elementwise-f32/add`). Every peer's output is checked once against the plain
//! loop's, bit for bit, before it is timed; a peer whose output differs is shown
//! as `FAILED` with the first differing element, is not timed, and makes the run
//! exit with status 1, so a fast but wrong result is never reported.
//!
//! ## Options
//!
//! * `--size-mib N`: MiB per operand (default 64; 1 with `--quick`); fractions allowed.
//! * `--threads N`: threads for every peer (default 1): tessera through
//!   `Exec::threads`, the others over N contiguous chunks on scoped threads
//!   spawned per call (tens of µs: nothing at the default size, much on small
//!   arrays, where the other peers' rates then understate them).
//! * `--quick`: small arrays and a few repetitions: a smoke test, not a measurement.
//! * `--time S`: seconds of timed runs per peer (default 1).
//! * `--stat best|median`: the sample the GB/s and ratio columns use (default best).
//! * `--json`: one JSON document on stdout instead of the tables.
//! * `--svg DIR`: also draw every group that runs as an SVG bar chart,
//!   `DIR/<group>.svg` (see `chart.rs`): a cluster of bars per row of its
//!   table, a bar per peer (tessera in one fixed colour), the unit on the
//!   axis, each cluster labelled with the ratio the table computes (tessera
//!   over the fastest peer, as a speed), the group and the host (CPU model,
//!   tiers) in the title. The harness groups chart by family:
//!   `bandwidth.svg`, `elementwise-f32.svg`, `casts.svg`, `reduce.svg`.
//!   DIR is created if missing and checked writable before anything runs (a
//!   bad DIR: one line on stderr, exit status 2); each file is written to a
//!   temporary name and renamed into place. The tables and `--json` are the
//!   same with or without it.
//! * `--list`: the group names.
//!
//! ## How a group is measured
//!
//! Each peer runs once to be checked and once more to estimate its time; from
//! that comes a sample size (enough calls back to back to last 0.2 ms) and a
//! sample count (about `--time` seconds in all, at least 5). The samples are
//! taken in 5 rounds; in every round each peer takes its share, in alternating
//! order, so a change in the machine's load touches all peers alike.
//!
//! ## Columns
//!
//! * `GB/s`: bytes read plus bytes written per call (inputs + output; memcpy:
//!   source + destination), divided by the time of the fastest sample, in 10⁹
//!   bytes per second. With `--stat median`, of the median sample.
//! * `median GB/s`: the same for the median sample.
//! * `spread`: how much slower the median sample was than the fastest; a large
//!   spread means other work shared the machine: run again.
//! * `us/call`: microseconds per call (of the sample the `GB/s` column uses).
//! * `x plain loop`: the row's GB/s over the baseline peer's (above 1: faster).
//! * `x memcpy`: the row's GB/s over memcpy's on the same buffers.
//!
//! Under each table, the ratios that matter for tessera, with the project's
//! target where it has one (tessera's best tier on `add` at ≥ 0.90 of the plain
//! loop; casts to and from f32 at ≥ 0.70 of a memcpy of their source, and f16
//! ↔ f32 at least as fast as the `half` crate).
//!
//! * `casts/f16-f32`, `/f32-f16`, `/bf16-f32`, `/f32-bf16`, `/f32-e4m3fn`,
//!   `/e4m3fn-f32`, `/f32-mxfp8`: a cast (default mode) or the MXFP8 (E4M3)
//!   encode of `--size-mib` MiB of source data. Peers: `tessera <tier>`
//!   (`cast` / `formats::encode` on contiguous views), `half slice` (the
//!   `half` crate's `convert_from_f32_slice` / `convert_to_f32_slice`, f16 and
//!   bf16 only), `scalar loop` (`half::f16::from_f32` and friends per element;
//!   for e4m3fn and MXFP8 the bench's own scalar functions, tested to give
//!   tessera's bytes), `table lookup` (e4m3fn → f32 through 256 entries),
//!   on AVX2 machines three sketches of a dedicated avx2 path (`f16c
//!   intrinsics`, `avx2 branch-free` for e4m3fn, `avx2 fused loop` for MXFP8),
//!   and `memcpy` of the source. GB/s counts bytes read + written (a memcpy: twice
//!   the source), so `x memcpy` compares bandwidths. f16 and bf16 outputs must
//!   equal `half`'s bit for bit except NaN payloads.
//! * `cast-sweep`: every cast to and from f32 (f32 → D and D → f32 for each
//!   dtype D), default mode, one thread, on each vector tier, the fastest of
//!   `--time` seconds of calls alternating with a memcpy of the f32 buffer,
//!   each row's GB/s over that window's memcpy against the 0.70 target, and a
//!   count of the rows below it. Slow at the default size, so it runs only when
//!   a filter names it (`tessera-bench cast-sweep`, or `cast-sweep:u4,i8` for
//!   some dtypes only), not in a run of every group or `--quick`; in `--json` mode its table goes to stderr.
//! * `gemm`: f32 and f64 matrix products beside the `gemm` crate,
//!   `matrixmultiply` (AVX-512 kernels) and, with python3 and numpy, OpenBLAS
//!   and MKL through `bench/scripts/blas_peer.py`, in GFLOP/s (see
//!   `gemm_group.rs`); like `cast-sweep`, only
//!   when a filter names it (`tessera-bench gemm`, with `--quick` for a smoke run);
//!   in `--json` mode its table goes to stderr. `gemm-int` (also named by
//!   `gemm`): the integer products (u8·i8 and i16·i16 into i32) in GOP/s beside
//!   tessera's f32 product of the same shape. `gemm-complex` (also named by
//!   `gemm`): c64 and c128 products beside `gemm` and `matrixmultiply`.
//!   `gemm-packed` (also named by `gemm`): `matmul_packed` with B packed once
//!   beside `matmul` of the same operands, f32 and f64, one thread, bits
//!   compared first.
//! * `fast-scan`: FastCumSum (`reduce::fast_scan`) beside `scan`'s cumsum and
//!   a plain running-sum loop, f32 and f64, one thread; only when named.
//! * `fft`: c2c, r2c and c2r beside `rustfft` and `realfft` in GFLOP/s (see
//!   `fft_group.rs`); only when a filter names it (`tessera-bench fft`, with
//!   `--quick` for a smoke run); in `--json` mode its table goes to stderr.
//! * `gather`, `scatter`, `unique`: gather and gather_ranges, scatter-add
//!   and unique numbering beside plain loops, memcpy and a `hashbrown` +
//!   `foldhash` numbering loop (see `movement_group.rs`); only when named.
//! * `bytes`: byte search and count, substring search, UTF-8 validation,
//!   hex, base64 and popcount beside `memchr`, `memmem`, `simdutf8`,
//!   `hex-simd`, `const-hex`, `base64-simd` and `base64` in GB/s (see `bytes_group.rs`); only when named.
//! * `sort`: stable sort of 16M f32, u32 and i64 (values, and values with
//!   positions) beside `slice::sort` and `slice::sort_unstable`, and top-k
//!   of 1% beside the full sort, in ns/element on one thread (see
//!   `sort_group.rs`; numpy's from `bench/scripts/sort_numpy.py`); only when named.
//! * `protected`: the compensated sum and dot (`sum2`, `dot2`) of 64 MiB of
//!   f32 and f64 beside the plain lane-order ones and a Kahan loop, and the
//!   pair kinds beside the plain kinds (see `protected_group.rs`); only when
//!   named.
//! * `tiers`: every engine with tier-specific code (elementwise, cast, map,
//!   reduce, scan, contract, fft) on every tier the CPU runs, one thread,
//!   in µs per call, each result checked against the scalar tier's, and the
//!   tier each engine takes by default on this CPU (the host table,
//!   `tessera::tier::engine_tier`); a default more than 5% slower than the
//!   fastest tier is marked (see `tiers_group.rs`); only when named.
//! * `attention`: flash attention prefill (2048 × 2048, d 128, 32/8 heads,
//!   causal and full) and decode (tk 32768), f32 and bf16, in GFLOP/s at
//!   one and two threads, beside a naive tessera pipeline, tessera's f32
//!   GEMM and a plain read of K and V (see `attention_group.rs`; numpy's
//!   and PyTorch's from `bench/scripts/attention_peers.py`); only when named.
//! * `linalg`: cholesky, lu, qr, solve_triangular, eigh, svd and eig at
//!   n = 64, 256, 1024 (2048 for the factorisations) in f64 and f32, and
//!   batches of 10^5 small matrices, beside faer at one and two threads
//!   (see `linalg_group.rs`); only when named; `linalg:cholesky,1024,f64`
//!   keeps some routines, orders and dtypes.
//! * `reduce/sum-f32`, `reduce/sum-f64`, `reduce/sum-squares-f32`: the sum of
//!   `--size-mib` MiB beside a naive loop, `iter().sum()`, ndarray and a read
//!   of the buffer; Σ x² three ways (see `reduce.rs`).
//! * `math`: exp, log, sin, tanh and sigmoid on `--size-mib` MiB of f32
//!   (16M elements by default), tessera on every tier beside a libm loop and
//!   numpy (when python3 has it), in Gelem/s; `math:all` every transcendental
//!   and the sine, cosine and tangent again on arguments up to 10^5
//!   (`math:wide` those three alone; see `math_group.rs`). Only when named.

#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

mod attention_group;
mod bytes_group;
mod cast_sweep;
mod casts;
mod chart;
mod elementwise;
mod fft_group;
mod gemm_group;
mod harness;
mod linalg_group;
mod math_group;
mod movement_group;
mod protected_group;
mod reduce;
mod sort_group;
mod tiers_group;

use casts::{cast_group, CastBufs, CastCase};
use elementwise::{bandwidth_group, elementwise_group, read_sum, reference, Bufs, Op};
use harness::{group_json, json_num, json_str, run_group, table, Budget, GroupResult, Stat};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The command line.
#[derive(Clone, Debug, PartialEq)]
struct Options {
    filters: Vec<String>,
    size_mib: Option<f64>,
    threads: usize,
    quick: bool,
    json: bool,
    list: bool,
    time_s: Option<f64>,
    stat: Stat,
    /// `--svg DIR`: where the charts go.
    svg: Option<PathBuf>,
}

const USAGE: &str =
    "usage: tessera-bench [GROUP-FILTER...] [--size-mib N] [--threads N] [--quick] \
[--time SECONDS] [--stat best|median] [--json] [--svg DIR] [--list]";

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        filters: Vec::new(),
        size_mib: None,
        threads: 1,
        quick: false,
        json: false,
        list: false,
        time_s: None,
        stat: Stat::Best,
        svg: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag {
            "--size-mib" => {
                let v = value(flag)?;
                let mib: f64 = v
                    .parse()
                    .map_err(|_| format!("--size-mib: not a number: {v}"))?;
                if !(mib > 0.0 && mib.is_finite()) {
                    return Err(format!("--size-mib must be positive, not {v}"));
                }
                o.size_mib = Some(mib);
            }
            "--threads" => {
                let v = value(flag)?;
                o.threads = v
                    .parse()
                    .ok()
                    .filter(|&t: &usize| t >= 1)
                    .ok_or_else(|| format!("--threads needs a count of at least 1, not {v}"))?;
            }
            "--time" => {
                let v = value(flag)?;
                let t: f64 = v
                    .parse()
                    .map_err(|_| format!("--time: not a number: {v}"))?;
                if !(t > 0.0 && t.is_finite()) {
                    return Err(format!("--time must be positive, not {v}"));
                }
                o.time_s = Some(t);
            }
            "--stat" => {
                o.stat = match value(flag)?.as_str() {
                    "best" => Stat::Best,
                    "median" => Stat::Median,
                    v => return Err(format!("--stat is best or median, not {v}")),
                }
            }
            "--svg" => {
                let v = value(flag)?;
                if v.is_empty() {
                    return Err("--svg needs a directory".to_string());
                }
                o.svg = Some(PathBuf::from(v));
            }
            "--quick" => o.quick = true,
            "--json" => o.json = true,
            "--list" => o.list = true,
            "-h" | "--help" => return Err(String::new()),
            f if f.starts_with('-') => return Err(format!("unknown option {f}")),
            f => o.filters.push(f.to_string()),
        }
    }
    Ok(o)
}

/// Every group, in run order.
fn group_names() -> Vec<String> {
    let mut names = vec!["bandwidth".to_string()];
    names.extend(Op::ALL.iter().map(|op| op.group_name()));
    names.extend(CastCase::ALL.iter().map(|c| c.group_name()));
    names.extend(reduce::NAMES.iter().map(|s| s.to_string()));
    names
}

fn selected(name: &str, filters: &[String]) -> bool {
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// Writes `chart` into `dir` (nothing without `--svg`, or for a chart of no
/// rows); false when the write failed (said on stderr).
fn emit(dir: Option<&Path>, chart: &chart::Chart, host: &str) -> bool {
    let Some(dir) = dir else { return true };
    if chart.rows.is_empty() {
        eprintln!("--svg: {}: no rows, no chart", chart.name);
        return true;
    }
    match chart::write(dir, chart, host) {
        Ok(path) => {
            eprintln!("wrote {}", path.display());
            true
        }
        Err(e) => {
            eprintln!("tessera-bench: {e}");
            false
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse_args(&args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            println!(
                "{USAGE}\ngroups: {}, {} (only when named)",
                group_names().join(", "),
                cast_sweep::NAME
            );
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("tessera-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let names: Vec<String> = group_names()
        .into_iter()
        .filter(|g| selected(g, &o.filters))
        .collect();
    // Only when named: it is slow, and not part of a plain or --quick run.
    let sweep = !o.filters.is_empty()
        && (selected(cast_sweep::NAME, &o.filters)
            || o.filters.iter().any(|f| f.starts_with(cast_sweep::NAME)));
    let gemm_group = !o.filters.is_empty() && selected(gemm_group::NAME, &o.filters);
    let gemm_int = !o.filters.is_empty() && selected(gemm_group::INT_NAME, &o.filters);
    let gemm_complex = !o.filters.is_empty() && selected(gemm_group::COMPLEX_NAME, &o.filters);
    let gemm_packed = !o.filters.is_empty() && selected(gemm_group::PACKED_NAME, &o.filters);
    let fast_scan_g = !o.filters.is_empty() && selected(reduce::FAST_SCAN_NAME, &o.filters);
    let fft_group = !o.filters.is_empty() && selected(fft_group::NAME, &o.filters);
    let gather_g = !o.filters.is_empty() && selected(movement_group::GATHER, &o.filters);
    let scatter_g = !o.filters.is_empty() && selected(movement_group::SCATTER, &o.filters);
    let unique_g = !o.filters.is_empty() && selected(movement_group::UNIQUE, &o.filters);
    let bytes_g = !o.filters.is_empty() && selected(bytes_group::NAME, &o.filters);
    let sort_group = !o.filters.is_empty() && selected(sort_group::NAME, &o.filters);
    let attention_g = !o.filters.is_empty() && selected(attention_group::NAME, &o.filters);
    let protected_g = !o.filters.is_empty() && selected(protected_group::NAME, &o.filters);
    let tiers_g = !o.filters.is_empty() && selected(tiers_group::NAME, &o.filters);
    let linalg_g = !o.filters.is_empty()
        && (selected(linalg_group::NAME, &o.filters)
            || o.filters.iter().any(|f| f.starts_with(linalg_group::NAME)));
    let math = !o.filters.is_empty() && o.filters.iter().any(|f| f.starts_with(math_group::NAME));
    if o.list {
        for g in group_names() {
            println!("{g}");
        }
        println!("{}", cast_sweep::NAME);
        return ExitCode::SUCCESS;
    }
    if names.is_empty()
        && !sweep
        && !gemm_group
        && !gemm_int
        && !gemm_complex
        && !gemm_packed
        && !fast_scan_g
        && !math
        && !fft_group
        && !gather_g
        && !scatter_g
        && !unique_g
        && !bytes_g
        && !sort_group
        && !attention_g
        && !protected_g
        && !tiers_g
        && !linalg_g
    {
        eprintln!(
            "tessera-bench: no group matches {:?}; groups: {}, {}",
            o.filters,
            group_names().join(", "),
            cast_sweep::NAME
        );
        return ExitCode::from(2);
    }
    // A bad --svg is refused before any benchmark runs.
    if let Some(dir) = &o.svg {
        if let Err(e) = chart::prepare_dir(dir) {
            eprintln!("tessera-bench: {e}");
            return ExitCode::from(2);
        }
    }
    let svg = o.svg.as_deref();
    let mut svg_ok = true;

    let mut budget = if o.quick { Budget::QUICK } else { Budget::FULL };
    if let Some(t) = o.time_s {
        budget.target_s = t;
    }
    let size_mib = o.size_mib.unwrap_or(if o.quick { 1.0 } else { 64.0 });
    let n = ((size_mib * (1u64 << 20) as f64 / 4.0).round() as usize).max(1);
    let size_note = format!("{size_mib} MiB ({n} f32)");
    let tiers = tessera::available_tiers();
    let tier_names: Vec<&str> = tiers.iter().map(|t| t.name()).collect();
    let host = format!("{}; tiers {}", cpu_model(), tier_names.join(", "));

    if !o.json {
        println!(
            "tessera-bench: {}; tiers {}; {} thread{}; {} MiB per operand; GB/s = 10^9 bytes read + written per second ({} sample)",
            cpu_model(),
            tier_names.join(", "),
            o.threads,
            if o.threads == 1 { "" } else { "s" },
            size_mib,
            o.stat.name()
        );
        if o.quick {
            println!("--quick: small arrays, few repetitions: a smoke test, not a measurement");
        }
        println!();
    }

    let f32_groups = names
        .iter()
        .any(|g| !g.starts_with("casts/") && !g.starts_with("reduce/"));
    let mut bufs = Bufs::new(if f32_groups { n } else { 1 });
    let mut results: Vec<GroupResult> = Vec::new();
    for name in &names {
        eprintln!("running {name} ...");
        let cast_case = CastCase::ALL.iter().find(|c| &c.group_name() == name);
        let r = if let Some(&case) = cast_case {
            let source_bytes = (size_mib * (1u64 << 20) as f64).round() as usize;
            let mut cb = CastBufs::new(case, source_bytes);
            let want = casts::reference(case, &cb);
            let g = cast_group(case, &cb, &tiers, o.threads, &want);
            run_group(&g, &mut cb, &budget, o.stat)
        } else if let Some(k) = reduce::NAMES.iter().position(|g| g == name) {
            let bytes = (size_mib * (1u64 << 20) as f64).round() as usize;
            let mut rb = reduce::SumBufs::new(bytes, k != 1, k == 1);
            let note = format!("{size_mib} MiB");
            let g = if k == 2 {
                reduce::squares_group(&tiers, &note)
            } else {
                reduce::sum_group(k == 0, &tiers, &note)
            };
            run_group(
                &reduce::with_bytes(g, bytes as u64),
                &mut rb,
                &budget,
                o.stat,
            )
        } else if name == "bandwidth" {
            let sum = read_sum(&bufs.a);
            run_group(
                &bandwidth_group(n, o.threads, &size_note, sum),
                &mut bufs,
                &budget,
                o.stat,
            )
        } else {
            let op = *Op::ALL
                .iter()
                .find(|op| &op.group_name() == name)
                .expect("every group name is an op's or bandwidth");
            let want = reference(op, &bufs);
            let g = elementwise_group(op, &tiers, o.threads, &size_note, &want);
            run_group(&g, &mut bufs, &budget, o.stat)
        };
        if !o.json {
            println!("{}", table(&r, o.stat));
        }
        results.push(r);
    }
    let about = format!(
        "{size_mib} MiB per operand, {} thread{}, bytes read + written, {} sample",
        o.threads,
        if o.threads == 1 { "" } else { "s" },
        o.stat.name()
    );
    for c in chart::harness_charts(&results, o.stat, &about) {
        svg_ok &= emit(svg, &c, &host);
    }
    let mut sweep_ok = true;
    if math {
        let (text, ok, c) = math_group::run(&o.filters, n, o.quick);
        if o.json {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
        sweep_ok &= ok;
        svg_ok &= emit(svg, &c, &host);
    }
    // The groups run only when named, each printing its own table.
    type NamedRun = fn(bool) -> (String, bool, chart::Chart);
    let named_runs = [
        (fft_group, fft_group::run as NamedRun),
        (gemm_group, gemm_group::run),
        (sort_group, sort_group::run),
        (attention_g, attention_group::run),
        (protected_g, protected_group::run),
        (tiers_g, tiers_group::run),
        (gemm_int, gemm_group::run_int),
        (gemm_complex, gemm_group::run_complex),
        (gemm_packed, gemm_group::run_packed),
        (fast_scan_g, reduce::run_fast_scan),
        (gather_g, movement_group::run_gather),
        (scatter_g, movement_group::run_scatter),
        (unique_g, movement_group::run_unique),
        (bytes_g, bytes_group::run),
    ];
    if linalg_g {
        let only = match linalg_group::restriction(&o.filters) {
            Ok(only) => only,
            Err(e) => {
                eprintln!("tessera-bench: {e}");
                return ExitCode::from(2);
            }
        };
        let (text, ok, c) = linalg_group::run(o.quick, &only);
        if o.json {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
        sweep_ok &= ok;
        svg_ok &= emit(svg, &c, &host);
    }
    for (_, run) in named_runs.iter().filter(|g| g.0) {
        let (text, ok, c) = run(o.quick);
        if o.json {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
        sweep_ok &= ok;
        svg_ok &= emit(svg, &c, &host);
    }
    if sweep {
        eprintln!("running {} ...", cast_sweep::NAME);
        let only = match cast_sweep::restriction(&o.filters) {
            Ok(only) => only,
            Err(e) => {
                eprintln!("tessera-bench: {e}");
                return ExitCode::from(2);
            }
        };
        let bytes = (size_mib * (1u64 << 20) as f64).round() as usize;
        let (text, ok, c) = cast_sweep::run(bytes, &only, o.time_s.unwrap_or(1.0));
        if o.json {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
        sweep_ok = ok;
        svg_ok &= emit(svg, &c, &host);
    }

    if o.json {
        let groups: Vec<String> = results.iter().map(|g| group_json(g, o.stat)).collect();
        let tiers_json: Vec<String> = tier_names.iter().map(|t| json_str(t)).collect();
        println!(
            "{{\"cpu\":{},\"tiers\":[{}],\"threads\":{},\"size_mib\":{},\"elements\":{},\"quick\":{},\
             \"stat\":{},\"target_s\":{},\"groups\":[{}]}}",
            json_str(&cpu_model()),
            tiers_json.join(","),
            o.threads,
            json_num(Some(size_mib)),
            n,
            o.quick,
            json_str(o.stat.name()),
            json_num(Some(budget.target_s)),
            groups.join(",")
        );
    }
    if !svg_ok {
        eprintln!("tessera-bench: a chart could not be written (see above)");
        return ExitCode::FAILURE;
    }
    if !sweep_ok {
        eprintln!(
            "tessera-bench: a cast of {} failed (see FAILED above)",
            cast_sweep::NAME
        );
        return ExitCode::FAILURE;
    }
    if results.iter().all(GroupResult::all_correct) {
        ExitCode::SUCCESS
    } else {
        eprintln!("tessera-bench: some peers produced a wrong result (see FAILED above)");
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn command_line() {
        let o = parse_args(&args(
            "add mul --size-mib 0.5 --threads=2 --json --stat median",
        ))
        .unwrap();
        assert_eq!(o.filters, ["add", "mul"]);
        assert_eq!(o.size_mib, Some(0.5));
        assert_eq!(o.threads, 2);
        assert!(o.json && !o.quick);
        assert_eq!(o.stat, Stat::Median);
        assert_eq!(o.svg, None);
        let o = parse_args(&args("gemm --svg docs/charts")).unwrap();
        assert_eq!(o.svg.as_deref(), Some(Path::new("docs/charts")));
        assert_eq!(o.filters, ["gemm"]);
        assert_eq!(
            parse_args(&args("--svg=out")).unwrap().svg,
            Some(PathBuf::from("out"))
        );
        assert!(parse_args(&args("--svg")).is_err());
        assert!(parse_args(&args("--svg=")).is_err());
        assert!(parse_args(&args("--threads 0")).is_err());
        assert!(parse_args(&args("--size-mib")).is_err());
        assert!(parse_args(&args("--bogus")).is_err());
        assert_eq!(parse_args(&args("--help")), Err(String::new()));
    }

    #[test]
    fn filters_select_by_substring() {
        let pick = |f: &str| -> Vec<String> {
            let f = args(f);
            group_names()
                .into_iter()
                .filter(|g| selected(g, &f))
                .collect()
        };
        assert_eq!(pick("add"), ["elementwise-f32/add"]);
        assert_eq!(pick("elementwise-f32").len(), 3);
        assert_eq!(pick("").len(), 14);
        assert_eq!(
            pick("reduce/sum"),
            ["reduce/sum-f32", "reduce/sum-f64", "reduce/sum-squares-f32"]
        );
        assert_eq!(pick("squares"), ["reduce/sum-squares-f32"]);
        assert_eq!(pick("casts").len(), 7);
        assert_eq!(pick("e4m3fn"), ["casts/f32-e4m3fn", "casts/e4m3fn-f32"]);
        assert_eq!(pick("bandwidth fma"), ["bandwidth", "elementwise-f32/fma"]);
        // cast-sweep is not among them: it runs only when a filter names it.
        assert!(pick("cast-sweep").is_empty());
        assert!(selected(cast_sweep::NAME, &args("cast-sweep")));
        assert!(!selected(cast_sweep::NAME, &args("casts")));
    }
}
