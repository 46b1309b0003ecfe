//! `tessera coverage [--json] [--tested DIR]`: which kernels the catalogue
//! declares, which are generated, and which the test suite exercised.
//!
//! Declared: every kind × every dtype whose class the kind accepts (a kind
//! that makes a pair: f32 and f64 alone) × the loop
//! variants of its arity × every tier. Generated: the kernel has a table index
//! and the tier's table is built for this machine's architecture (`n/a` for a
//! tier of another architecture). Tested: a record file of the test suite names
//! the row. Record files are the `*.txt` files of the record directory, one row
//! per line, `KIND DTYPE TIER VARIANT` (`add e4m3fn avx2 bcast1`), `#` starting
//! a comment. The directory is `--tested DIR`, else `$TESSERA_COVERAGE_DIR`,
//! else `target/tessera-coverage`.
//!
//! Casts are their own section: declared is every (source, destination) pair
//! of dtypes × the two cast modes × the loop variants of a one-input kernel ×
//! every tier; generated means the pair has a cast table index (and the tier is
//! built here); a cast is tested when a record line `cast SRC DST MODE TIER
//! VARIANT` names it (`cast f32 e4m3fn saturating avx2 contig`), MODE being
//! `default` or `saturating`.
//!
//! Rows of a tier this CPU cannot run are reported but not required to be tested.

use super::cast::mode_name;
use super::parse_args;
use crate::failure::{Failure, Outcome};
use crate::outln;
use serde_json::json;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use tessera::{cast_index, kernel_index, variants_for, CastMode, DType, Kind, Tier, Variant};

/// One declared (kind, dtype, tier, variant).
pub type Key = (Kind, DType, Tier, Variant);

/// One declared cast: (source, destination, mode, tier, variant).
pub type CastKey = (DType, DType, Mode, Tier, Variant);

/// A cast mode as a record names it (ordered, unlike [`CastMode`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// `default`.
    Default,
    /// `saturating`.
    Saturating,
}

impl Mode {
    /// Both modes.
    pub const ALL: [Mode; 2] = [Mode::Default, Mode::Saturating];

    /// The library's mode.
    pub fn cast_mode(self) -> CastMode {
        match self {
            Mode::Default => CastMode::Default,
            Mode::Saturating => CastMode::Saturating,
        }
    }

    /// The name records use.
    pub fn name(self) -> &'static str {
        mode_name(self.cast_mode())
    }

    /// The mode named `name`.
    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// A record line's row: a kind's or a cast's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// `KIND DTYPE TIER VARIANT`.
    Kind(Key),
    /// `cast SRC DST MODE TIER VARIANT`.
    Cast(CastKey),
}

/// Whether a declared kernel is generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generated {
    /// It has a table index and its tier is built for this architecture.
    Yes,
    /// The catalogue declares it but no kernel exists.
    No,
    /// Its tier is for another architecture.
    NotApplicable,
}

impl Generated {
    /// The word printed for it.
    pub fn word(self) -> &'static str {
        match self {
            Generated::Yes => "yes",
            Generated::No => "no",
            Generated::NotApplicable => "n/a",
        }
    }
}

/// One row of the table: a kind's ([`Key`]) or a cast's ([`CastKey`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row<K = Key> {
    /// The kernel.
    pub key: K,
    /// Whether it is generated.
    pub generated: Generated,
    /// Whether this CPU runs its tier.
    pub runnable: bool,
    /// Whether a record names it.
    pub tested: bool,
}

impl<K> Row<K> {
    /// Whether the row counts against coverage: declared here, runnable, and
    /// not generated or not tested.
    pub fn missing(&self) -> bool {
        match self.generated {
            Generated::No => true,
            Generated::Yes => self.runnable && !self.tested,
            Generated::NotApplicable => false,
        }
    }
}

/// Whether a tier's table is built for this machine's architecture.
pub fn tier_built_here(tier: Tier) -> bool {
    let arch = tier.info().arch;
    arch == "any" || arch == std::env::consts::ARCH
}

/// Every declared row, in catalogue order.
pub fn declared() -> Vec<Key> {
    let mut keys = Vec::new();
    for &kind in &Kind::ALL {
        let info = kind.info();
        for &dtype in &DType::ALL {
            if !info.accepts.contains(&dtype.info().class) {
                continue;
            }
            // A kind that makes a pair exists for f32 and f64 alone (a pair
            // holds two of them); one that makes a complex number for the
            // float dtypes some complex dtype has as its parts.
            let skip = match info.result {
                tessera::ResultRule::Pair => !matches!(dtype, DType::F32 | DType::F64),
                tessera::ResultRule::Complex => dtype.complex().is_none(),
                _ => false,
            };
            if skip {
                continue;
            }
            for &tier in &Tier::ALL {
                for &variant in variants_for(info.arity) {
                    keys.push((kind, dtype, tier, variant));
                }
            }
        }
    }
    keys
}

/// Every declared cast, in table order: source, destination, mode, tier, variant.
pub fn declared_casts() -> Vec<CastKey> {
    let mut keys = Vec::new();
    for &src in &DType::ALL {
        for &dst in &DType::ALL {
            for mode in Mode::ALL {
                for &tier in &Tier::ALL {
                    for &variant in variants_for(1) {
                        keys.push((src, dst, mode, tier, variant));
                    }
                }
            }
        }
    }
    keys
}

/// The records of a directory: the rows they name, the files read, and the
/// lines naming rows outside the catalogue (stale records).
#[derive(Clone, Debug, Default)]
pub struct Records {
    /// Kind rows named.
    pub rows: BTreeSet<Key>,
    /// Cast rows named.
    pub casts: BTreeSet<CastKey>,
    /// Record files read.
    pub files: usize,
    /// Lines naming unknown kinds, dtypes, tiers or variants.
    pub stale: usize,
}

fn variant_named(name: &str) -> Option<Variant> {
    Variant::ALL.into_iter().find(|x| x.name() == name)
}

/// Parse one record line: None for a blank or comment line, Some(None) for a
/// well-formed line naming something outside the catalogue (a stale record).
pub fn parse_record(line: &str) -> Result<Option<Option<Record>>, String> {
    let line = line.split('#').next().unwrap_or("").trim();
    if line.is_empty() {
        return Ok(None);
    }
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields[0] == "cast" {
        let [_, s, d, m, t, v] = fields[..] else {
            return Err(format!(
                "expected `cast SRC DST MODE TIER VARIANT`, found {} fields",
                fields.len()
            ));
        };
        let key = (|| {
            Some((
                DType::from_name(s)?,
                DType::from_name(d)?,
                Mode::from_name(m)?,
                Tier::from_name(t)?,
                variant_named(v)?,
            ))
        })();
        return Ok(Some(key.map(Record::Cast)));
    }
    let [k, d, t, v] = fields[..] else {
        return Err(format!(
            "expected `KIND DTYPE TIER VARIANT`, found {} fields",
            fields.len()
        ));
    };
    let key = (|| {
        Some((
            Kind::from_name(k)?,
            DType::from_name(d)?,
            Tier::from_name(t)?,
            variant_named(v)?,
        ))
    })();
    Ok(Some(key.map(Record::Kind)))
}

/// Read every `*.txt` record file of `dir`.
pub fn read_records(dir: &Path) -> Outcome<Records> {
    if !dir.is_dir() {
        return Err(Failure::run(format!(
            "no coverage records: {} is not a directory (run the test suite first, or pass --tested DIR)",
            dir.display()
        )));
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Failure::run(format!("cannot list {}: {e}", dir.display())))?;
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| Failure::run(format!("cannot list {}: {e}", dir.display())))?;
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "txt") && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    let mut records = Records::default();
    for path in paths {
        let bytes = std::fs::read(&path)
            .map_err(|e| Failure::run(format!("cannot read {}: {e}", path.display())))?;
        let text = String::from_utf8_lossy(&bytes);
        records.files += 1;
        for (i, line) in text.lines().enumerate() {
            match parse_record(line) {
                Ok(None) => {}
                Ok(Some(Some(Record::Kind(key)))) => {
                    records.rows.insert(key);
                }
                Ok(Some(Some(Record::Cast(key)))) => {
                    records.casts.insert(key);
                }
                Ok(Some(None)) => records.stale += 1,
                Err(e) => return Err(Failure::run(format!("{}:{}: {e}", path.display(), i + 1))),
            }
        }
    }
    Ok(records)
}

/// The table: every declared row with its status.
pub fn table(records: &Records) -> Vec<Row> {
    declared()
        .into_iter()
        .map(|key| {
            let (kind, dtype, tier, variant) = key;
            let generated = if !tier_built_here(tier) {
                Generated::NotApplicable
            } else if kernel_index(kind, dtype, variant).is_some() {
                Generated::Yes
            } else {
                Generated::No
            };
            Row {
                key,
                generated,
                runnable: tier.available(),
                tested: records.rows.contains(&key),
            }
        })
        .collect()
}

/// The cast table: every declared cast with its status.
pub fn cast_table(records: &Records) -> Vec<Row<CastKey>> {
    declared_casts()
        .into_iter()
        .map(|key| {
            let (src, dst, mode, tier, variant) = key;
            let saturating = mode == Mode::Saturating;
            let generated = if !tier_built_here(tier) {
                Generated::NotApplicable
            } else if cast_index(src, dst, saturating, variant)
                .is_some_and(|i| i < tessera::CAST_COUNT)
            {
                Generated::Yes
            } else {
                Generated::No
            };
            Row {
                key,
                generated,
                runnable: tier.available(),
                tested: records.casts.contains(&key),
            }
        })
        .collect()
}

fn row_name(key: &Key) -> String {
    format!("{} {} {} {}", key.0, key.1, key.2, key.3.name())
}

/// A cast row as its record line names it.
pub fn cast_row_name(key: &CastKey) -> String {
    format!(
        "cast {} {} {} {} {}",
        key.0,
        key.1,
        key.2.name(),
        key.3,
        key.4.name()
    )
}

/// Counts over a table's rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Rows declared.
    pub declared: usize,
    /// Rows generated.
    pub generated: usize,
    /// Rows of a tier of another architecture.
    pub not_applicable: usize,
    /// Generated rows of a tier this CPU cannot run.
    pub not_runnable_here: usize,
    /// Generated rows a record names.
    pub tested: usize,
    /// Rows that count against coverage.
    pub missing: usize,
}

impl Totals {
    /// Count `rows`.
    pub fn of<K>(rows: &[Row<K>]) -> Totals {
        let count = |f: &dyn Fn(&Row<K>) -> bool| rows.iter().filter(|r| f(r)).count();
        Totals {
            declared: rows.len(),
            generated: count(&|r| r.generated == Generated::Yes),
            not_applicable: count(&|r| r.generated == Generated::NotApplicable),
            not_runnable_here: count(&|r| r.generated == Generated::Yes && !r.runnable),
            tested: count(&|r| r.generated == Generated::Yes && r.tested),
            missing: count(&|r| r.missing()),
        }
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "declared": self.declared,
            "generated": self.generated,
            "not_applicable": self.not_applicable,
            "not_runnable_here": self.not_runnable_here,
            "tested": self.tested,
            "missing": self.missing,
        })
    }

    fn line(&self) -> String {
        format!(
            "declared {}, generated {}, n/a {}, not runnable here {}, tested {}, missing {}",
            self.declared,
            self.generated,
            self.not_applicable,
            self.not_runnable_here,
            self.tested,
            self.missing
        )
    }
}

/// The summary character of a (kind, dtype) or (source, destination) cell.
fn cell<K>(rows: &[&Row<K>]) -> char {
    if rows.is_empty() {
        return '.';
    }
    if rows.iter().any(|r| r.generated == Generated::No) {
        return 'X';
    }
    let counted: Vec<&&Row<K>> = rows
        .iter()
        .filter(|r| r.generated == Generated::Yes && r.runnable)
        .collect();
    let tested = counted.iter().filter(|r| r.tested).count();
    if counted.is_empty() {
        'n'
    } else if tested == counted.len() {
        '+'
    } else if tested == 0 {
        '-'
    } else {
        't'
    }
}

/// Run `tessera coverage` with its arguments.
pub fn main(args: &[String], out: &mut dyn Write) -> Outcome<u8> {
    let args = parse_args("coverage", args, &["--json"], &["--tested"])?;
    args.at_most("coverage", 0)?;
    let dir = match args.value("--tested") {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("TESSERA_COVERAGE_DIR") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => PathBuf::from("target/tessera-coverage"),
        },
    };
    let records = read_records(&dir)?;
    let rows = table(&records);
    let casts = cast_table(&records);
    let totals = Totals::of(&rows);
    let cast_totals = Totals::of(&casts);
    let missing: Vec<&Row> = rows.iter().filter(|r| r.missing()).collect();
    let missing_casts: Vec<&Row<CastKey>> = casts.iter().filter(|r| r.missing()).collect();

    if args.has("--json") {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                json!({
                    "kind": r.key.0.name(),
                    "dtype": r.key.1.name(),
                    "tier": r.key.2.name(),
                    "variant": r.key.3.name(),
                    "generated": r.generated.word(),
                    "runnable": r.runnable,
                    "tested": r.tested,
                })
            })
            .collect();
        let cast_list: Vec<serde_json::Value> = casts
            .iter()
            .map(|r| {
                json!({
                    "src": r.key.0.name(),
                    "dst": r.key.1.name(),
                    "mode": r.key.2.name(),
                    "tier": r.key.3.name(),
                    "variant": r.key.4.name(),
                    "generated": r.generated.word(),
                    "runnable": r.runnable,
                    "tested": r.tested,
                })
            })
            .collect();
        let doc = json!({
            "records": dir.display().to_string(),
            "record_files": records.files,
            "stale_records": records.stale,
            "totals": totals.json(),
            "rows": list,
            "casts": {
                "totals": cast_totals.json(),
                "rows": cast_list,
            },
        });
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::run(format!("cannot format the table: {e}")))?;
        outln!(out, "{text}")?;
    } else {
        print_table(out, &dir, &records, &rows)?;
        outln!(out, "{}", totals.line())?;
        let why = |g: Generated| {
            if g == Generated::No {
                "not generated"
            } else {
                "not tested"
            }
        };
        for r in missing.iter().take(10) {
            outln!(
                out,
                "  missing: {} ({})",
                row_name(&r.key),
                why(r.generated)
            )?;
        }
        if missing.len() > 10 {
            outln!(out, "  … and {} more", missing.len() - 10)?;
        }
        outln!(out)?;
        print_cast_table(out, &casts)?;
        outln!(out, "casts: {}", cast_totals.line())?;
        for r in missing_casts.iter().take(10) {
            outln!(
                out,
                "  missing: {} ({})",
                cast_row_name(&r.key),
                why(r.generated)
            )?;
        }
        if missing_casts.len() > 10 {
            outln!(out, "  … and {} more", missing_casts.len() - 10)?;
        }
    }
    let mut parts = Vec::new();
    let mut first: Vec<String> = Vec::new();
    if !missing.is_empty() {
        parts.push(format!(
            "{} of {} declared kernels",
            missing.len(),
            totals.declared
        ));
        first.extend(missing.iter().take(3).map(|r| row_name(&r.key)));
    }
    if !missing_casts.is_empty() {
        parts.push(format!(
            "{} of {} declared casts",
            missing_casts.len(),
            cast_totals.declared
        ));
        let room = 3usize.saturating_sub(first.len()).max(1);
        first.extend(
            missing_casts
                .iter()
                .take(room)
                .map(|r| cast_row_name(&r.key)),
        );
    }
    if parts.is_empty() {
        return Ok(0);
    }
    Err(Failure::run(format!(
        "{} are not generated or not tested (first: {})",
        parts.join(" and "),
        first.join(", ")
    )))
}

fn print_table(out: &mut dyn Write, dir: &Path, records: &Records, rows: &[Row]) -> Outcome<()> {
    outln!(
        out,
        "coverage: {} record file(s) in {}, {} row(s) recorded{}",
        records.files,
        dir.display(),
        records.rows.len(),
        if records.stale > 0 {
            format!(", {} stale line(s) naming unknown kernels", records.stale)
        } else {
            String::new()
        }
    )?;
    let tiers: Vec<String> = Tier::ALL
        .iter()
        .map(|t| {
            let state = if !tier_built_here(*t) {
                "n/a: another architecture"
            } else if t.available() {
                "runs here"
            } else {
                "built, but this CPU cannot run it"
            };
            format!("{t} ({state})")
        })
        .collect();
    outln!(out, "tiers: {}", tiers.join(", "))?;
    outln!(
        out,
        "cell per kind × dtype over tiers and variants: + all tested, t some tested, \
         - none tested, X not generated, n only n/a, . not declared"
    )?;
    let width = Kind::ALL.iter().map(|k| k.name().len()).max().unwrap_or(4) + 2;
    let tall = DType::ALL.iter().map(|d| d.name().len()).max().unwrap_or(1);
    for line in 0..tall {
        let mut s = " ".repeat(width);
        for d in DType::ALL {
            s.push(d.name().chars().nth(line).unwrap_or(' '));
            s.push(' ');
        }
        outln!(out, "{}", s.trim_end())?;
    }
    for &kind in &Kind::ALL {
        let mut s = format!("{:width$}", kind.name());
        for dtype in DType::ALL {
            let cell_rows: Vec<&Row> = rows
                .iter()
                .filter(|r| r.key.0 == kind && r.key.1 == dtype)
                .collect();
            s.push(cell(&cell_rows));
            s.push(' ');
        }
        outln!(out, "{}", s.trim_end())?;
    }
    Ok(())
}

/// The cast section: one cell per (source, destination) pair over modes, tiers
/// and variants, sources down, destinations across.
fn print_cast_table(out: &mut dyn Write, casts: &[Row<CastKey>]) -> Outcome<()> {
    outln!(
        out,
        "casts, cell per source (down) × destination (across) over modes, tiers and variants:"
    )?;
    let width = DType::ALL.iter().map(|d| d.name().len()).max().unwrap_or(4) + 2;
    let tall = width - 2;
    for line in 0..tall {
        let mut s = " ".repeat(width);
        for d in DType::ALL {
            s.push(d.name().chars().nth(line).unwrap_or(' '));
            s.push(' ');
        }
        outln!(out, "{}", s.trim_end())?;
    }
    for src in DType::ALL {
        let mut s = format!("{:width$}", src.name());
        let src_rows: Vec<&Row<CastKey>> = casts.iter().filter(|r| r.key.0 == src).collect();
        for dst in DType::ALL {
            let cell_rows: Vec<&Row<CastKey>> = src_rows
                .iter()
                .copied()
                .filter(|r| r.key.1 == dst)
                .collect();
            s.push(cell(&cell_rows));
            s.push(' ');
        }
        outln!(out, "{}", s.trim_end())?;
    }
    Ok(())
}
