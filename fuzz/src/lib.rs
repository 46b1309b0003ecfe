//! tessera's fuzz harness, on stable Rust: structured generators on the
//! testkit's splitmix64 ([`tessera_testkit::rng::Rng`]) and byte mutations of
//! valid seeds, for six targets (one test file each under `tests/`):
//!
//! - `call_files`: call files of `tessera run`, every routed kernel, run
//!   in-process; a refusal changes and creates no file, a success of a
//!   sampled call equals a slow model;
//! - `npy`: `.npy` bytes, structured headers and mutations; a typed error or
//!   an array whose element count matches its shape and its bytes;
//! - `program_text`: map program texts, random trees of the grammar and
//!   mutations; what parses and binds runs and equals a node-by-node
//!   evaluation through single elementwise and cast calls on the scalar tier;
//! - `spec_toml`: mutations of `spec/*.toml` fed to the codegen parser and
//!   validator; a typed error that names its file, or success;
//! - `views`: random views (zero, negative and large strides, offsets,
//!   packed dtypes, mismatched shapes, destinations that reach an element
//!   twice, in-place inputs) against every public call of `tessera`; a
//!   refusal leaves the destination's canary bytes as they were, a success
//!   equals the same call on contiguous copies on the scalar tier and
//!   touches no byte the destination does not address;
//! - `attention`: random shapes, head groupings, lengths, programs and
//!   values (NaN and infinities anywhere) against `tessera::attention`; a
//!   refusal leaves o and lse as they were, a success equals the contiguous
//!   scalar one-thread call, and a row that sees no key holds +0 and −∞.
//!
//! Each case is generated from its own generator, seeded by the run's seed
//! and the case's number ([`case_rng`]), so a failure names the seed and the
//! case and prints the case's input (cut to 2 kB): the run can be replayed
//! with `TESSERA_FUZZ_SEED`.

#![deny(missing_docs)]

pub mod calls;
pub mod hostile;
/// The byte mutator, shared with the command line's tests (it lives in the
/// testkit).
pub use tessera_testkit::mutate;
pub mod npy_gen;
pub mod program;
pub mod views;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;
use tessera_testkit::rng::{mix, parse_seed, Rng};

/// The base seed of the default runs (and of the long runs unless
/// `TESSERA_FUZZ_SEED` names another).
pub const BASE_SEED: u64 = 0xf022_7e55_e4a0_0016;

/// Cases of each target in the default test run.
pub const DEFAULT_CASES: u64 = 10_000;

/// Cases of each target in a long run when `TESSERA_FUZZ_CASES` is not set.
pub const LONG_CASES: u64 = 1_000_000;

/// The most bytes of a failing case's input that are printed.
pub const SHOW_LIMIT: usize = 2048;

/// What one case came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The input was refused with a typed error (and the checks of a
    /// refusal held).
    Refused,
    /// The call succeeded; `models` results were compared with a model
    /// (a slow model or the same call on contiguous operands).
    Succeeded {
        /// Model comparisons made for this case.
        models: u64,
    },
}

/// The counts of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Cases run.
    pub cases: u64,
    /// Cases refused with a typed error.
    pub refusals: u64,
    /// Cases that succeeded.
    pub successes: u64,
    /// Model comparisons made (a case may make several).
    pub model_checks: u64,
    /// Cases that panicked (a run stops at the first, so 0 or 1).
    pub panics: u64,
    /// The longest case, in microseconds, and its number.
    pub slowest_us: u64,
    /// The number of the longest case.
    pub slowest_case: u64,
}

/// How many cases and which seed a run uses.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Cases to run.
    pub cases: u64,
    /// The run's seed.
    pub seed: u64,
    /// The longest a case may take: a slower one fails the run (a hang
    /// caught while it is still a delay). None in the default runs, which
    /// share the machine with the rest of the tests.
    pub case_limit: Option<std::time::Duration>,
}

impl Plan {
    /// The default test run: [`DEFAULT_CASES`] cases from [`BASE_SEED`].
    pub fn default_run() -> Plan {
        Plan {
            cases: DEFAULT_CASES,
            seed: BASE_SEED,
            case_limit: None,
        }
    }

    /// A long run: `TESSERA_FUZZ_CASES` cases (default [`LONG_CASES`]) from
    /// `TESSERA_FUZZ_SEED` (decimal or 0x-hex; default [`BASE_SEED`]), each
    /// case within `TESSERA_FUZZ_CASE_LIMIT_S` seconds (default 5).
    ///
    /// # Panics
    ///
    /// When either variable is set but is not a number.
    pub fn long_run() -> Plan {
        let var = |name: &str, default: u64| match std::env::var(name) {
            Ok(s) => parse_seed(&s).unwrap_or_else(|| panic!("{name}={s:?} is not a number")),
            Err(_) => default,
        };
        Plan {
            cases: var("TESSERA_FUZZ_CASES", LONG_CASES),
            seed: var("TESSERA_FUZZ_SEED", BASE_SEED),
            case_limit: Some(std::time::Duration::from_secs(var(
                "TESSERA_FUZZ_CASE_LIMIT_S",
                5,
            ))),
        }
    }
}

/// The generator of case `case` of a run of `seed`: independent of every
/// other case, so one case can be replayed alone.
pub fn case_rng(seed: u64, case: u64) -> Rng {
    Rng::new(mix(seed ^ mix(case.wrapping_add(0x5eed))))
}

/// `s` cut to [`SHOW_LIMIT`] bytes on a character boundary.
pub fn cut(s: &str) -> String {
    if s.len() <= SHOW_LIMIT {
        return s.to_string();
    }
    let mut end = SHOW_LIMIT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &s[..end], s.len())
}

/// Run `plan.cases` cases of target `name`: each generates its input with
/// `generate` from [`case_rng`], and `check` judges it. A check that fails
/// (returns `Err`) or panics stops the run with a panic whose message names
/// the target, the seed, the case and the input (`show`, cut to 2 kB).
/// Prints the counts and the time when `verbose`.
pub fn run<I>(
    name: &str,
    plan: Plan,
    verbose: bool,
    mut generate: impl FnMut(&mut Rng, u64) -> I,
    show: impl Fn(&I) -> String,
    mut check: impl FnMut(&I) -> Result<Verdict, String>,
) -> Stats {
    let start = Instant::now();
    let mut stats = Stats::default();
    // TESSERA_FUZZ_TRACE=1 prints every case's input before it runs: the
    // last one printed names a case that aborts the process (an allocation
    // that fails, a stack overflow), which no check can report.
    let trace = std::env::var_os("TESSERA_FUZZ_TRACE").is_some();
    let first = std::env::var("TESSERA_FUZZ_FROM")
        .ok()
        .and_then(|s| parse_seed(&s))
        .unwrap_or(0);
    for case in first..plan.cases {
        let mut rng = case_rng(plan.seed, case);
        let input = generate(&mut rng, case);
        if trace {
            eprintln!("case {case}: {}", cut(&show(&input)));
        }
        let began = Instant::now();
        let verdict = catch_unwind(AssertUnwindSafe(|| check(&input)));
        let took = began.elapsed();
        stats.cases += 1;
        if took.as_micros() as u64 > stats.slowest_us {
            stats.slowest_us = took.as_micros() as u64;
            stats.slowest_case = case;
        }
        let fail = |what: String| -> ! {
            panic!(
                "fuzz target {name}: case {case} of seed {seed:#x} (TESSERA_FUZZ_SEED={seed:#x}): {what}\ninput: {input}",
                seed = plan.seed,
                input = cut(&show(&input)),
            )
        };
        if let Some(limit) = plan.case_limit.filter(|&l| took > l) {
            fail(format!(
                "took {:.1} s, over the limit of {:.1} s",
                took.as_secs_f64(),
                limit.as_secs_f64()
            ))
        }
        match verdict {
            Ok(Ok(Verdict::Refused)) => stats.refusals += 1,
            Ok(Ok(Verdict::Succeeded { models })) => {
                stats.successes += 1;
                stats.model_checks += models;
            }
            Ok(Err(e)) => fail(cut(&e)),
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                fail(format!("panicked: {msg}"))
            }
        }
    }
    if verbose {
        println!(
            "fuzz target {name}: seed {:#x}: {} cases, {} refusals, {} successes, {} model checks, {} panics, {:.1} s; slowest case {} ({:.3} s)",
            plan.seed,
            stats.cases,
            stats.refusals,
            stats.successes,
            stats.model_checks,
            stats.panics,
            start.elapsed().as_secs_f64(),
            stats.slowest_case,
            stats.slowest_us as f64 / 1e6
        );
    }
    stats
}

/// Bytes shown as text where they are UTF-8, else as escaped bytes.
pub fn show_bytes(b: &[u8]) -> String {
    let cut_at = b.len().min(SHOW_LIMIT);
    let mut s = match std::str::from_utf8(&b[..cut_at]) {
        Ok(t) => format!("{t:?}"),
        Err(_) => b[..cut_at].escape_ascii().to_string(),
    };
    if b.len() > cut_at {
        s.push_str(&format!("… ({} bytes in all)", b.len()));
    }
    s
}

/// The tiers this CPU runs, for targets that run every case on each; the
/// library's tiers it does not run are reported as skipped on stderr (once
/// per process).
pub fn tiers() -> Vec<tessera::Tier> {
    static REPORT: std::sync::Once = std::sync::Once::new();
    let have = tessera::available_tiers();
    REPORT.call_once(|| {
        for t in tessera::Tier::ALL {
            if !have.contains(&t) {
                eprintln!("skipped on this CPU: tier {t:?} (its cases run on the other tiers)");
            }
        }
    });
    have
}
