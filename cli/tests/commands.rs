//! `tessera kernels`, `tessera coverage` and `tessera selftest`.

mod common;

use common::*;
use std::collections::BTreeSet;
use tessera::{cast_index, kernel_index, variants_for, DType, Format, Kind, Tier};

#[test]
fn kernels_lists_every_kind() {
    let dir = TempDir::new("kernels");
    let run = tessera(&dir.0, &["kernels", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let list: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let list = list.as_array().expect("a list");
    let kinds: Vec<&serde_json::Value> = list
        .iter()
        .filter(|e| e["family"] == "elementwise")
        .collect();
    assert_eq!(kinds.len(), Kind::ALL.len());
    // Then cast, contract (plain, scaled, grouped), map, the three calls of the block-scaled formats,
    // reduce, scan, series, the Fourier transforms, the assembly calls, the
    // movement calls, the ordering kernels, the linear-algebra routines,
    // attention and the library's other calls.
    // The byte kernels are a family of their own (checked below).
    let others: Vec<&str> = list[Kind::ALL.len()..]
        .iter()
        .filter(|e| e["family"] != "bytes")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let byte_kernels: Vec<&str> = list
        .iter()
        .filter(|e| e["family"] == "bytes")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    // Every name once across the whole list (a byte kernel named like a
    // kind or another kernel would be shadowed), and the byte group's
    // searches, codecs and packers among them.
    let mut all: Vec<&str> = list.iter().map(|e| e["name"].as_str().unwrap()).collect();
    all.sort_unstable();
    let n = all.len();
    all.dedup();
    assert_eq!(all.len(), n, "a kernel name is listed twice");
    for name in [
        "index_byte",
        "utf8_valid_up_to",
        "base64_decode",
        "varint_decode",
        "bit_pack_u32",
    ] {
        assert!(
            byte_kernels.contains(&name),
            "{name} missing from the bytes family"
        );
    }
    assert_eq!(byte_kernels.len(), 50);
    assert_eq!(
        others,
        [
            "cast",
            "contract",
            "contract_scaled",
            "contract_grouped",
            "map",
            "encode",
            "decode",
            "transcode",
            "reduce",
            "scan",
            "series",
            "c2c",
            "r2c",
            "c2r",
            "fold",
            "assemble",
            "tile",
            "sparse_dot",
            "convolve",
            "correlate",
            "gather",
            "gather_ranges",
            "scatter",
            "unique",
            "sort",
            "argsort",
            "median",
            "quantile",
            "lower_bound",
            "intersect",
            "difference",
            "compress",
            "partition",
            "cholesky",
            "lu",
            "qr",
            "solve_triangular",
            "eigh",
            "svd",
            "eig",
            "attention",
            "random",
            "quantize",
            "dequantize",
            "polyval",
            "qmatmul_i8",
            "requantize_i8",
            "sum_lanes",
            "spline",
            "terms",
            "ue8m0_encode",
            "ue8m0_decode"
        ]
    );
    for (entry, kind) in kinds.into_iter().zip(Kind::ALL) {
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
    let cast = &list[Kind::ALL.len()];
    assert_eq!(cast["operands"], serde_json::json!(["x"]));
    assert_eq!(
        cast["attrs"]["mode"],
        serde_json::json!(["default", "saturating"])
    );
    assert_eq!(cast["dtypes"].as_array().unwrap().len(), DType::ALL.len());
    let contract = &list[Kind::ALL.len() + 1];
    assert_eq!(contract["operands"], serde_json::json!(["a", "b", "init"]));
    let scaled = &list[Kind::ALL.len() + 2];
    assert_eq!(
        scaled["operands"],
        serde_json::json!(["a", "b", "init", "a_scales", "b_scales"])
    );
    let grouped = &list[Kind::ALL.len() + 3];
    assert_eq!(grouped["attrs"]["by"], serde_json::json!(["rows", "depth"]));
    let map = &list[Kind::ALL.len() + 4];
    assert_eq!(map["family"], "map");
    for entry in &list[Kind::ALL.len() + 5..Kind::ALL.len() + 8] {
        let formats: Vec<&str> = entry["formats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        let want: Vec<&str> = Format::ALL.iter().map(|f| f.info().name).collect();
        assert_eq!(formats, want);
    }
    let nvfp4 = &list[Kind::ALL.len() + 5]["formats"][6];
    assert_eq!(nvfp4["block"], 16);
    assert_eq!(nvfp4["tensor_scale"], "f32");
    assert_eq!(nvfp4["codes_per_byte"], 2);

    let text = tessera(&dir.0, &["kernels"]);
    assert_eq!(text.code, Some(0));
    for name in [
        "cast",
        "contract",
        "contract_scaled",
        "contract_grouped",
        "encode",
        "decode",
        "transcode",
    ] {
        assert!(
            text.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{name} "))),
            "{name} listed"
        );
    }
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
            // Pairs hold two f32 or two f64; a complex number's parts are a
            // float dtype that has a complex dtype.
            let (pair, complex) = (
                kind.info().result == tessera::ResultRule::Pair,
                kind.info().result == tessera::ResultRule::Complex,
            );
            if pair && !matches!(d, DType::F32 | DType::F64)
                || complex && !matches!(d, DType::F32 | DType::F64 | DType::F16 | DType::Bf16)
            {
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

/// Every declared cast row, by the rule: every dtype pair × both modes × every
/// tier × the one-input variants, as record lines.
fn declared_cast_rows() -> Vec<String> {
    let mut rows = Vec::new();
    for s in DType::ALL {
        for d in DType::ALL {
            for mode in ["default", "saturating"] {
                for t in Tier::ALL {
                    for v in variants_for(1) {
                        rows.push(format!(
                            "cast {} {} {mode} {} {}",
                            s.name(),
                            d.name(),
                            t.name(),
                            v.name()
                        ));
                    }
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
    let casts = declared_cast_rows();
    let runnable = |row: &str| {
        let tier = row.split(' ').nth(2).unwrap();
        Tier::from_name(tier).unwrap().available()
    };
    // The casts all recorded in a file of their own.
    std::fs::write(records.join("casts.txt"), casts.join("\n")).unwrap();
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
    assert!(
        run.stdout
            .contains(&format!("casts: declared {}", casts.len())),
        "{}",
        run.stdout
    );
    assert_eq!(
        casts.len(),
        DType::ALL.len().pow(2) * 2 * Tier::ALL.len() * 2
    );

    // JSON: one object per row, all tested; the casts in their own section.
    let json = tessera(&dir.0, &["coverage", "--json", "--tested", &rec]);
    assert_eq!(json.code, Some(0), "{}", json.stderr);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let list = doc["rows"].as_array().unwrap();
    assert_eq!(list.len(), rows.len());
    assert!(list.iter().all(|r| r["tested"] == true));
    let cast_list = doc["casts"]["rows"].as_array().unwrap();
    assert_eq!(cast_list.len(), casts.len());
    assert_eq!(doc["casts"]["totals"]["declared"], casts.len());
    assert_eq!(doc["casts"]["totals"]["missing"], 0);
    for r in cast_list {
        assert_eq!(r["tested"], true);
        let (s, d) = (r["src"].as_str().unwrap(), r["dst"].as_str().unwrap());
        let generated = cast_index(
            DType::from_name(s).unwrap(),
            DType::from_name(d).unwrap(),
            r["mode"] == "saturating",
            tessera::Variant::Contig,
        )
        .is_some();
        assert_eq!(r["generated"] == "yes", generated, "{r}");
    }

    // Drop one runnable cast: exit 1, the cast named, the kinds still complete.
    let cast_victim = casts
        .iter()
        .find(|r| {
            let tier = r.split(' ').nth(4).unwrap();
            r.contains("f32 e4m3fn saturating") && Tier::from_name(tier).unwrap().available()
        })
        .unwrap()
        .clone();
    let kept: Vec<&str> = casts
        .iter()
        .filter(|r| **r != cast_victim)
        .map(|s| s.as_str())
        .collect();
    std::fs::write(records.join("casts.txt"), kept.join("\n")).unwrap();
    let run = tessera(&dir.0, &["coverage", "--tested", &rec]);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("missing: {cast_victim}")),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.starts_with("error: 1 of ") && run.stderr.contains("declared casts"),
        "{}",
        run.stderr
    );
    let json = tessera(&dir.0, &["coverage", "--json", "--tested", &rec]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["casts"]["totals"]["missing"], 1);
    assert_eq!(doc["totals"]["missing"], 0);
    // A stale cast record (unknown dtype) is counted, a malformed one refused.
    std::fs::write(
        records.join("casts.txt"),
        format!("{}\ncast f32 f99 default scalar contig\n", casts.join("\n")),
    )
    .unwrap();
    let run = tessera(&dir.0, &["coverage", "--tested", &rec]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("1 stale line"), "{}", run.stdout);
    std::fs::write(records.join("bad.txt"), "cast f32 e4m3fn avx2 contig\n").unwrap();
    tessera(&dir.0, &["coverage", "--tested", &rec]).assert_refused(1, "bad.txt:1");
    std::fs::remove_file(records.join("bad.txt")).unwrap();

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
    for tier in Tier::ALL.iter().filter(|t| t.available()) {
        let line = run
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{tier} casts:")))
            .unwrap_or_else(|| panic!("a cast summary line for {tier}: {}", run.stdout));
        assert!(
            line.contains(&format!("{} kernels", tessera::CAST_COUNT)),
            "{line}"
        );
        assert!(line.contains(" 0 mismatches"), "{line}");
    }
    for demo in [
        "cast f32 -> e4m3fn (default)",
        "cast f32 -> e4m3fn (saturating)",
        "mxfp8_e4m3:",
    ] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.contains(demo) && l.ends_with("ok")),
            "{demo}: {}",
            run.stdout
        );
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

/// `tessera ulp` on f64 samples: within the bound, specials included (the
/// references of exp2 at ±inf and rsqrt at ±0 and +inf were astro-float's
/// pow and 1/sqrt, not exact there, and the command reported 14 correct
/// specials as wrong); an unknown kind is a usage error.
#[test]
fn ulp_measures_kinds_against_the_reference() {
    let dir = TempDir::new("ulp");
    for kind in ["exp2", "rsqrt", "exp", "log1p"] {
        let run = tessera(&dir.0, &["ulp", kind, "f64", "--samples", "2000"]);
        assert_eq!(run.code, Some(0), "{kind}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains("(bound 1)") && run.stdout.contains(": ok"),
            "{}",
            run.stdout
        );
        assert!(!run.stdout.contains("wrong special"), "{}", run.stdout);
    }
    tessera(&dir.0, &["ulp", "nope", "f32"]).assert_refused(2, "unknown kind");
}
