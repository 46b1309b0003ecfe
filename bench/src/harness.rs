//! The measuring harness: verify each case once, calibrate a repetition count,
//! time every case of a group in interleaved rounds, and report GB/s and ratios
//! as a table or as JSON.

use std::fmt::Write as _;
use std::time::Instant;

/// How long and how often to measure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// Wall time aimed at per case, in seconds (all its timed runs together).
    pub target_s: f64,
    /// Fewest timed samples per case.
    pub min_samples: usize,
    /// Most timed samples per case.
    pub max_samples: usize,
    /// A sample runs the case enough times back to back to last at least this long.
    pub min_sample_s: f64,
    /// Rounds the samples are split into; every case of a group runs once per
    /// round, so slow drift in the machine's load spreads over all of them.
    pub rounds: usize,
}

impl Budget {
    /// About a second per case: the default.
    pub const FULL: Budget = Budget {
        target_s: 1.0,
        min_samples: 5,
        max_samples: 10_000,
        min_sample_s: 2e-4,
        rounds: 5,
    };
    /// A smoke run: a few samples per case.
    pub const QUICK: Budget = Budget {
        target_s: 0.01,
        min_samples: 3,
        max_samples: 50,
        min_sample_s: 1e-4,
        rounds: 1,
    };
}

/// Which statistic of the samples the GB/s and ratio columns use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    /// The fastest sample (least disturbed by other load).
    Best,
    /// The median sample.
    Median,
}

impl Stat {
    /// The statistic's name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Stat::Best => "best",
            Stat::Median => "median",
        }
    }
}

/// The work of one case on the group's state `S`.
pub type RunFn<'a, S> = Box<dyn Fn(&mut S) -> Result<(), String> + 'a>;
/// A check of the state after one run of a case: Err says what differs.
pub type CheckFn<'a, S> = Box<dyn Fn(&S) -> Result<(), String> + 'a>;

/// One peer of a group.
pub struct Case<'a, S> {
    /// The peer's name in the table ("tessera avx2", "plain loop", ...).
    pub name: String,
    /// Bytes read plus bytes written by one run.
    pub bytes: u64,
    /// One run.
    pub run: RunFn<'a, S>,
    /// Checks the output of a run against the reference, bit for bit.
    pub check: CheckFn<'a, S>,
}

/// A ratio worth printing under a group's table: `num / den` of the GB/s.
#[derive(Clone, Debug, PartialEq)]
pub struct RatioSpec {
    /// Numerator peer.
    pub num: String,
    /// Denominator peer.
    pub den: String,
    /// The ratio the project aims for, if it has stated one.
    pub target: Option<f64>,
}

/// Peers measured side by side on one state.
pub struct Group<'a, S> {
    /// Name, matched by the command line's filters ("elementwise-f32/add").
    pub name: String,
    /// One line on what is measured (size, threads).
    pub note: String,
    /// The peer every row is compared to.
    pub baseline: String,
    /// The bandwidth reference peer, if the group has one.
    pub reference: Option<String>,
    /// Puts the state into a known, wrong-for-every-case condition (poisons the
    /// output) before a case's checked run, so that a case that writes nothing
    /// cannot pass on an earlier case's output.
    pub reset: Box<dyn Fn(&mut S) + 'a>,
    /// The peers, in table order.
    pub cases: Vec<Case<'a, S>>,
    /// Ratios printed under the table.
    pub ratios: Vec<RatioSpec>,
}

/// What became of one case.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    /// The peer's name.
    pub name: String,
    /// Bytes moved per run.
    pub bytes: u64,
    /// Runs per sample.
    pub inner: usize,
    /// Seconds per run, one per sample, in the order taken.
    pub samples: Vec<f64>,
    /// Why the case was abandoned (a wrong result or an error), if it was.
    pub error: Option<String>,
}

impl CaseResult {
    /// Seconds per run of the fastest sample.
    pub fn best_s(&self) -> Option<f64> {
        self.samples.iter().copied().reduce(f64::min)
    }

    /// Seconds per run of the median sample.
    pub fn median_s(&self) -> Option<f64> {
        if self.samples.is_empty() {
            return None;
        }
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        let m = s.len() / 2;
        Some(if s.len() % 2 == 1 {
            s[m]
        } else {
            0.5 * (s[m - 1] + s[m])
        })
    }

    /// Seconds per run under `stat`.
    pub fn seconds(&self, stat: Stat) -> Option<f64> {
        match stat {
            Stat::Best => self.best_s(),
            Stat::Median => self.median_s(),
        }
    }

    /// GB/s (10⁹ bytes per second) under `stat`.
    pub fn gbps(&self, stat: Stat) -> Option<f64> {
        self.seconds(stat).map(|s| self.bytes as f64 / s / 1e9)
    }
}

/// A ratio, evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratio {
    /// What was compared.
    pub spec: RatioSpec,
    /// GB/s of `num` over GB/s of `den`, when both were measured.
    pub value: Option<f64>,
}

/// What became of one group.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupResult {
    /// The group's name.
    pub name: String,
    /// Its note.
    pub note: String,
    /// Its baseline peer.
    pub baseline: String,
    /// Its bandwidth reference peer.
    pub reference: Option<String>,
    /// One result per peer, in table order.
    pub cases: Vec<CaseResult>,
    /// The ratios, evaluated under the statistic the run reports.
    pub ratios: Vec<Ratio>,
}

impl GroupResult {
    /// The result of the peer called `name`.
    pub fn case(&self, name: &str) -> Option<&CaseResult> {
        self.cases.iter().find(|c| c.name == name)
    }

    /// GB/s of peer `num` over GB/s of peer `den`, when both were measured.
    pub fn ratio(&self, num: &str, den: &str, stat: Stat) -> Option<f64> {
        let n = self.case(num)?.gbps(stat)?;
        let d = self.case(den)?.gbps(stat)?;
        Some(n / d)
    }

    /// Whether every case produced the reference output.
    pub fn all_correct(&self) -> bool {
        self.cases.iter().all(|c| c.error.is_none())
    }
}

fn timed<S>(case: &Case<'_, S>, state: &mut S, inner: usize) -> Result<f64, String> {
    let t = Instant::now();
    for _ in 0..inner {
        (case.run)(state)?;
    }
    Ok(t.elapsed().as_secs_f64() / inner as f64)
}

/// Measures every case of `group`: each is first run once on a reset state and
/// checked (a case whose output differs is reported as failed and not timed),
/// then timed in `budget.rounds` interleaved rounds.
pub fn run_group<S>(
    group: &Group<'_, S>,
    state: &mut S,
    budget: &Budget,
    stat: Stat,
) -> GroupResult {
    struct Plan {
        inner: usize,
        samples: usize,
    }
    let mut results: Vec<CaseResult> = Vec::with_capacity(group.cases.len());
    let mut plans: Vec<Option<Plan>> = Vec::with_capacity(group.cases.len());
    for case in &group.cases {
        let mut r = CaseResult {
            name: case.name.clone(),
            bytes: case.bytes,
            inner: 0,
            samples: Vec::new(),
            error: None,
        };
        (group.reset)(state);
        let first = (case.run)(state).and_then(|()| (case.check)(state));
        // A second, warm run estimates the time per run.
        let estimate = first.and_then(|()| timed(case, state, 1));
        match estimate {
            Err(e) => {
                eprintln!("  {} / {}: FAILED, not timed: {e}", group.name, case.name);
                r.error = Some(e);
                plans.push(None);
            }
            Ok(t) => {
                let t = t.max(1e-9);
                let inner = ((budget.min_sample_s / t).ceil() as usize).max(1);
                let samples = ((budget.target_s / (t * inner as f64)).round() as usize)
                    .clamp(budget.min_samples, budget.max_samples);
                r.inner = inner;
                plans.push(Some(Plan { inner, samples }));
            }
        }
        results.push(r);
    }
    let rounds = budget.rounds.max(1);
    for round in 0..rounds {
        // Alternate the order so no peer always runs right after the same one.
        let order: Vec<usize> = if round % 2 == 0 {
            (0..group.cases.len()).collect()
        } else {
            (0..group.cases.len()).rev().collect()
        };
        for k in order {
            let Some(plan) = &plans[k] else { continue };
            let lo = plan.samples * round / rounds;
            let hi = plan.samples * (round + 1) / rounds;
            for _ in lo..hi {
                match timed(&group.cases[k], state, plan.inner) {
                    Ok(t) => results[k].samples.push(t),
                    Err(e) => {
                        results[k].error = Some(e);
                        results[k].samples.clear();
                        plans[k] = None;
                        break;
                    }
                }
            }
        }
    }
    let mut out = GroupResult {
        name: group.name.clone(),
        note: group.note.clone(),
        baseline: group.baseline.clone(),
        reference: group.reference.clone(),
        cases: results,
        ratios: Vec::new(),
    };
    out.ratios = group
        .ratios
        .iter()
        .map(|spec| Ratio {
            spec: spec.clone(),
            value: out.ratio(&spec.num, &spec.den, stat),
        })
        .collect();
    out
}

fn fmt_opt(v: Option<f64>, prec: usize) -> String {
    match v {
        Some(v) => format!("{v:.prec$}"),
        None => "-".to_string(),
    }
}

/// The group as a text table, then its ratios.
pub fn table(g: &GroupResult, stat: Stat) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}  ({})", g.name, g.note);
    let base_col = format!("x {}", g.baseline);
    let ref_col = g.reference.as_ref().map(|r| format!("x {r}"));
    let name_w = g
        .cases
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let base_w = base_col.len().max(6);
    let ref_w = ref_col.as_ref().map_or(0, |r| r.len().max(6));
    let _ = write!(
        s,
        "  {:<name_w$}  {:>9}  {:>11}  {:>7}  {:>10}  {:>base_w$}",
        "peer", "GB/s", "median GB/s", "spread", "us/call", base_col
    );
    if let Some(r) = &ref_col {
        let _ = write!(s, "  {r:>ref_w$}");
    }
    s.push('\n');
    let base = g.case(&g.baseline).and_then(|c| c.gbps(stat));
    let reference = g
        .reference
        .as_ref()
        .and_then(|r| g.case(r))
        .and_then(|c| c.gbps(stat));
    for c in &g.cases {
        if let Some(e) = &c.error {
            let _ = writeln!(s, "  {:<name_w$}  FAILED: {e}", c.name);
            continue;
        }
        let gb = c.gbps(stat);
        let spread = match (c.best_s(), c.median_s()) {
            (Some(b), Some(m)) => Some(100.0 * (m / b - 1.0)),
            _ => None,
        };
        let us = c.seconds(stat).map(|t| t * 1e6);
        let _ = write!(
            s,
            "  {:<name_w$}  {:>9}  {:>11}  {:>6}%  {:>10}  {:>base_w$}",
            c.name,
            fmt_opt(gb, 2),
            fmt_opt(c.gbps(Stat::Median), 2),
            fmt_opt(spread, 1),
            fmt_opt(us, 2),
            fmt_opt(gb.zip(base).map(|(a, b)| a / b), 2),
        );
        if ref_col.is_some() {
            let _ = write!(
                s,
                "  {:>ref_w$}",
                fmt_opt(gb.zip(reference).map(|(a, b)| a / b), 2)
            );
        }
        s.push('\n');
    }
    if !g.ratios.is_empty() {
        let w = g
            .ratios
            .iter()
            .map(|r| r.spec.num.len() + r.spec.den.len() + 3)
            .max()
            .unwrap_or(0);
        for r in &g.ratios {
            let label = format!("{} / {}", r.spec.num, r.spec.den);
            let _ = write!(s, "  {label:<w$} = {}", fmt_opt(r.value, 2));
            if let Some(t) = r.spec.target {
                let verdict = match r.value {
                    Some(v) if v >= t => "met",
                    Some(_) => "MISSED",
                    None => "not measured",
                };
                let _ = write!(s, "   (target >= {t:.2}: {verdict})");
            }
            s.push('\n');
        }
    }
    s
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON number, or null for None and non-finite values.
pub fn json_num(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => "null".to_string(),
    }
}

/// One group as a JSON object.
pub fn group_json(g: &GroupResult, stat: Stat) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\"name\":{},\"note\":{},\"baseline\":{},\"reference\":{},\"cases\":[",
        json_str(&g.name),
        json_str(&g.note),
        json_str(&g.baseline),
        g.reference.as_deref().map_or("null".to_string(), json_str),
    );
    let base = g.case(&g.baseline).and_then(|c| c.gbps(stat));
    for (i, c) in g.cases.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            "{{\"name\":{},\"ok\":{},\"error\":{},\"bytes\":{},\"inner\":{},\"samples\":{},\
             \"best_s\":{},\"median_s\":{},\"best_gbps\":{},\"median_gbps\":{},\"ratio_to_baseline\":{}}}",
            json_str(&c.name),
            c.error.is_none(),
            c.error.as_deref().map_or("null".to_string(), json_str),
            c.bytes,
            c.inner,
            c.samples.len(),
            json_num(c.best_s()),
            json_num(c.median_s()),
            json_num(c.gbps(Stat::Best)),
            json_num(c.gbps(Stat::Median)),
            json_num(c.gbps(stat).zip(base).map(|(a, b)| a / b)),
        );
    }
    s.push_str("],\"ratios\":[");
    for (i, r) in g.ratios.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            "{{\"num\":{},\"den\":{},\"value\":{},\"target\":{}}}",
            json_str(&r.spec.num),
            json_str(&r.spec.den),
            json_num(r.value),
            json_num(r.spec.target),
        );
    }
    s.push_str("]}");
    s
}

/// Runs `f` over `out` split into `threads` contiguous chunks, one scoped thread
/// per chunk (the calling thread alone when `threads <= 1`). `f` gets a chunk
/// and the chunk's start index in `out`.
pub fn split<T: Send, F: Fn(&mut [T], usize) + Sync>(threads: usize, out: &mut [T], f: F) {
    if threads <= 1 || out.len() < threads {
        f(out, 0);
        return;
    }
    let chunk = out.len().div_ceil(threads);
    std::thread::scope(|s| {
        let f = &f;
        for (k, part) in out.chunks_mut(chunk).enumerate() {
            s.spawn(move || f(part, k * chunk));
        }
    });
}

/// Best seconds per call of each of `fs` over samples of about `target`
/// seconds, alternating between them (5 rounds, the order reversed every
/// other round), so that a drift of the machine's speed reaches every
/// peer alike.
pub fn alternate(fs: &mut [&mut dyn FnMut()], target: f64) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; fs.len()];
    for round in 0..5 {
        for q in 0..fs.len() {
            let p = if round % 2 == 0 { q } else { fs.len() - 1 - q };
            let t0 = Instant::now();
            let mut calls = 0u32;
            while calls == 0 || t0.elapsed().as_secs_f64() < target {
                (fs[p])();
                calls += 1;
            }
            best[p] = best[p].min(t0.elapsed().as_secs_f64() / calls as f64);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(samples: &[f64]) -> CaseResult {
        CaseResult {
            name: "x".into(),
            bytes: 2_000_000_000,
            inner: 1,
            samples: samples.to_vec(),
            error: None,
        }
    }

    #[test]
    fn statistics() {
        let r = result(&[0.4, 0.1, 0.3, 0.2]);
        assert_eq!(r.best_s(), Some(0.1));
        assert_eq!(r.median_s(), Some(0.25));
        assert_eq!(r.gbps(Stat::Best), Some(20.0));
        assert_eq!(result(&[3.0, 1.0, 2.0]).median_s(), Some(2.0));
        assert_eq!(result(&[]).gbps(Stat::Median), None);
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_str("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
        assert_eq!(json_num(Some(1.5)), "1.5");
        assert_eq!(json_num(Some(f64::NAN)), "null");
        assert_eq!(json_num(None), "null");
    }

    #[test]
    fn split_covers_every_index_once() {
        for threads in [1, 2, 3, 7] {
            let mut v = vec![0usize; 100];
            split(threads, &mut v, |part, start| {
                for (i, x) in part.iter_mut().enumerate() {
                    *x += start + i + 1;
                }
            });
            assert!(
                v.iter().enumerate().all(|(i, &x)| x == i + 1),
                "threads {threads}"
            );
        }
    }

    #[test]
    fn failed_case_is_not_timed_and_others_are() {
        let group: Group<'_, Vec<u32>> = Group {
            name: "g".into(),
            note: String::new(),
            baseline: "good".into(),
            reference: None,
            reset: Box::new(|v: &mut Vec<u32>| v.fill(u32::MAX)),
            cases: vec![
                Case {
                    name: "good".into(),
                    bytes: 4,
                    run: Box::new(|v: &mut Vec<u32>| {
                        v.fill(1);
                        Ok(())
                    }),
                    check: Box::new(|v: &Vec<u32>| {
                        if v.iter().all(|&x| x == 1) {
                            Ok(())
                        } else {
                            Err("differs".into())
                        }
                    }),
                },
                Case {
                    name: "lazy".into(),
                    bytes: 4,
                    run: Box::new(|_: &mut Vec<u32>| Ok(())),
                    check: Box::new(|v: &Vec<u32>| {
                        if v.iter().all(|&x| x == 1) {
                            Ok(())
                        } else {
                            Err("differs".into())
                        }
                    }),
                },
            ],
            ratios: vec![RatioSpec {
                num: "lazy".into(),
                den: "good".into(),
                target: Some(0.9),
            }],
        };
        let mut state = vec![0u32; 8];
        let r = run_group(&group, &mut state, &Budget::QUICK, Stat::Best);
        assert!(r.case("good").unwrap().error.is_none());
        assert!(r.case("good").unwrap().samples.len() >= Budget::QUICK.min_samples);
        assert_eq!(r.case("lazy").unwrap().error.as_deref(), Some("differs"));
        assert!(r.case("lazy").unwrap().samples.is_empty());
        assert_eq!(r.ratios[0].value, None);
        assert!(!r.all_correct());
        assert!(table(&r, Stat::Best).contains("FAILED: differs"));
        assert!(group_json(&r, Stat::Best).contains("\"ok\":false"));
    }
}
