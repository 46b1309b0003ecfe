//! `tessera coverage [--json] [--tested DIR]`: which kernels the catalogue
//! declares, which are generated, and which the test suite exercised.
//!
//! Declared: every kind × every dtype whose class the kind accepts × the loop
//! variants of its arity × every tier. Generated: the kernel has a table index
//! and the tier's table is built for this machine's architecture (`n/a` for a
//! tier of another architecture). Tested: a record file of the test suite names
//! the row. Record files are the `*.txt` files of the record directory, one row
//! per line, `KIND DTYPE TIER VARIANT` (`add e4m3fn avx2 bcast1`), `#` starting
//! a comment. The directory is `--tested DIR`, else `$TESSERA_COVERAGE_DIR`,
//! else `target/tessera-coverage`.
//!
//! Rows of a tier this CPU cannot run are reported but not required to be tested.

use super::parse_args;
use crate::failure::{Failure, Outcome};
use crate::outln;
use serde_json::json;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use tessera::{kernel_index, variants_for, DType, Kind, Tier, Variant};

/// One declared (kind, dtype, tier, variant).
pub type Key = (Kind, DType, Tier, Variant);

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

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The kernel.
    pub key: Key,
    /// Whether it is generated.
    pub generated: Generated,
    /// Whether this CPU runs its tier.
    pub runnable: bool,
    /// Whether a record names it.
    pub tested: bool,
}

impl Row {
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
            for &tier in &Tier::ALL {
                for &variant in variants_for(info.arity) {
                    keys.push((kind, dtype, tier, variant));
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
    /// Rows named.
    pub rows: BTreeSet<Key>,
    /// Record files read.
    pub files: usize,
    /// Lines naming unknown kinds, dtypes, tiers or variants.
    pub stale: usize,
}

/// Parse one record line (without its comment); None for a blank line.
pub fn parse_record(line: &str) -> Result<Option<Option<Key>>, String> {
    let line = line.split('#').next().unwrap_or("").trim();
    if line.is_empty() {
        return Ok(None);
    }
    let fields: Vec<&str> = line.split_whitespace().collect();
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
            Variant::ALL.into_iter().find(|x| x.name() == v)?,
        ))
    })();
    Ok(Some(key))
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
                Ok(Some(Some(key))) => {
                    records.rows.insert(key);
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

fn row_name(key: &Key) -> String {
    format!("{} {} {} {}", key.0, key.1, key.2, key.3.name())
}

/// The summary character of a (kind, dtype) cell.
fn cell(rows: &[&Row]) -> char {
    if rows.is_empty() {
        return '.';
    }
    if rows.iter().any(|r| r.generated == Generated::No) {
        return 'X';
    }
    let counted: Vec<&&Row> = rows
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
    let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    let declared = rows.len();
    let generated = count(&|r| r.generated == Generated::Yes);
    let not_applicable = count(&|r| r.generated == Generated::NotApplicable);
    let unrunnable = count(&|r| r.generated == Generated::Yes && !r.runnable);
    let tested = count(&|r| r.generated == Generated::Yes && r.tested);
    let missing: Vec<&Row> = rows.iter().filter(|r| r.missing()).collect();

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
        let doc = json!({
            "records": dir.display().to_string(),
            "record_files": records.files,
            "stale_records": records.stale,
            "totals": {
                "declared": declared,
                "generated": generated,
                "not_applicable": not_applicable,
                "not_runnable_here": unrunnable,
                "tested": tested,
                "missing": missing.len(),
            },
            "rows": list,
        });
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::run(format!("cannot format the table: {e}")))?;
        outln!(out, "{text}")?;
    } else {
        print_table(out, &dir, &records, &rows)?;
        outln!(
            out,
            "declared {declared}, generated {generated}, n/a {not_applicable}, \
             not runnable here {unrunnable}, tested {tested}, missing {}",
            missing.len()
        )?;
        for r in missing.iter().take(10) {
            let why = if r.generated == Generated::No {
                "not generated"
            } else {
                "not tested"
            };
            outln!(out, "  missing: {} ({why})", row_name(&r.key))?;
        }
        if missing.len() > 10 {
            outln!(out, "  … and {} more", missing.len() - 10)?;
        }
    }
    if missing.is_empty() {
        return Ok(0);
    }
    let first: Vec<String> = missing.iter().take(3).map(|r| row_name(&r.key)).collect();
    Err(Failure::run(format!(
        "{} of {declared} declared kernels are not generated or not tested (first: {})",
        missing.len(),
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
