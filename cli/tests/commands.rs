//! `tessera kernels`, `tessera coverage` and `tessera selftest`.

mod common;

use common::*;
use std::collections::BTreeSet;
use tessera::{kernel_index, variants_for, DType, Kind, Tier};

#[test]
fn kernels_lists_every_kind() {
    let dir = TempDir::new("kernels");
    let run = tessera(&dir.0, &["kernels", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let list: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let list = list.as_array().expect("a list");
    assert_eq!(list.len(), Kind::ALL.len());
    for (entry, kind) in list.iter().zip(Kind::ALL) {
        assert_eq!(entry["name"], kind.name());
        assert_eq!(entry["arity"], kind.info().arity);
        let dtypes: BTreeSet<String> = entry["dtypes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().to_string())
            .collect();
        // A dtype is listed exactly when the catalogue has a kernel for it.
        for d in DType::ALL {
            let has = kernel_index(kind, d, variants_for(kind.info().arity)[0]).is_some();
            assert_eq!(dtypes.contains(d.name()), has, "{kind} {d}");
        }
        assert_eq!(
            entry["variants"].as_array().unwrap().len(),
            variants_for(kind.info().arity).len()
        );
    }
    let text = tessera(&dir.0, &["kernels"]);
    assert_eq!(text.code, Some(0));
    for kind in Kind::ALL {
        assert!(
            text.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{} ", kind.name()))),
            "{kind} listed"
        );
    }
}

/// Every declared row, by the rule: kind × accepted-class dtypes × variants × tiers.
fn declared_rows() -> Vec<String> {
    let mut rows = Vec::new();
    for kind in Kind::ALL {
        for d in DType::ALL {
            if !kind.info().accepts.contains(&d.info().class) {
                continue;
            }
            for t in Tier::ALL {
                for v in variants_for(kind.info().arity) {
                    rows.push(format!(
                        "{} {} {} {}",
                        kind.name(),
                        d.name(),
                        t.name(),
                        v.name()
                    ));
                }
            }
        }
    }
    rows
}

#[test]
fn coverage_reads_records() {
    let dir = TempDir::new("coverage");
    let records = dir.path("records");
    std::fs::create_dir_all(&records).unwrap();
    let rows = declared_rows();
    let runnable = |row: &str| {
        let tier = row.split(' ').nth(2).unwrap();
        Tier::from_name(tier).unwrap().available()
    };
    // Every row recorded, split over two files, with comments and blank lines.
    let (first, second) = rows.split_at(rows.len() / 2);
    std::fs::write(
        records.join("a.txt"),
        format!("# part one\n{}\n\n", first.join("\n")),
    )
    .unwrap();
    std::fs::write(
        records.join("b.txt"),
        format!("{}  # trailing comment\n", second.join("\n")),
    )
    .unwrap();
    std::fs::write(records.join("ignored.log"), "not a record file").unwrap();
    let rec = records.display().to_string();
    let run = tessera(&dir.0, &["coverage", "--tested", &rec]);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!("declared {}", rows.len())),
        "{}",
        run.stdout
    );

    // JSON: one object per row, all tested.
    let json = tessera(&dir.0, &["coverage", "--json", "--tested", &rec]);
    assert_eq!(json.code, Some(0), "{}", json.stderr);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let list = doc["rows"].as_array().unwrap();
    assert_eq!(list.len(), rows.len());
    assert!(list.iter().all(|r| r["tested"] == true));

    // Drop one runnable row: exit 1, and the row is named.
    let victim = rows.iter().find(|r| runnable(r)).unwrap().clone();
    let kept: Vec<&String> = rows.iter().filter(|r| **r != victim).collect();
    std::fs::remove_file(records.join("b.txt")).unwrap();
    std::fs::write(
        records.join("a.txt"),
        kept.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let run = tessera(&dir.0, &["coverage", "--tested", &rec]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stdout.contains(&format!("missing: {victim}")),
        "{}",
        run.stdout
    );
    assert!(run.stderr.starts_with("error: 1 of"), "{}", run.stderr);

    // The environment variable names the directory too.
    let env_run = tessera_env(&dir.0, &["coverage"], &[("TESSERA_COVERAGE_DIR", &rec)]);
    assert_eq!(env_run.code, Some(1));
    assert!(env_run.stdout.contains(&victim));

    // A malformed record line is refused with its place.
    std::fs::write(records.join("c.txt"), "add f32 scalar\n").unwrap();
    tessera(&dir.0, &["coverage", "--tested", &rec]).assert_refused(1, "c.txt:1");
}

#[test]
fn coverage_without_records_fails() {
    let dir = TempDir::new("coverage-none");
    tessera_env(&dir.0, &["coverage"], &[("TESSERA_COVERAGE_DIR", "")])
        .assert_refused(1, "tessera-coverage");
    tessera(&dir.0, &["coverage", "--tested", "nowhere"]).assert_refused(1, "nowhere");
}

#[test]
fn selftest_passes_on_every_tier() {
    let dir = TempDir::new("selftest");
    let run = tessera(&dir.0, &["selftest"]);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    for tier in Tier::ALL.iter().filter(|t| t.available()) {
        let line = run
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{tier}:")))
            .unwrap_or_else(|| panic!("a summary line for {tier}: {}", run.stdout));
        assert!(
            line.contains(&format!("{} kernels", tessera::KERNELS.len())),
            "{line}"
        );
        assert!(line.contains(" 0 mismatches"), "{line}");
    }
    assert!(run.stdout.contains("selftest passed"));
    assert!(!run.stdout.contains("WRONG"));

    // An unusable TESSERA_TIER is reported, not fatal.
    let run = tessera_env(&dir.0, &["selftest"], &[("TESSERA_TIER", "nonsense")]);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.contains("TESSERA_TIER ignored"),
        "{}",
        run.stdout
    );
}
