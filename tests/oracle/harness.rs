//! What the tests record: the coverage records that `tessera coverage` reads,
//! failures collected over many kernels, and a parallel map over kernels.
//! Running the kernels is `tessera_testkit::differential`'s.

use std::collections::BTreeSet;
use std::path::PathBuf;
use tessera_generated::{DType, Kind, Tier, Variant};

/// Lines `KIND DTYPE TIER VARIANT` of kernels a test has checked.
#[derive(Default)]
pub struct Coverage(BTreeSet<String>);

impl Coverage {
    /// Record a checked kernel.
    pub fn add(&mut self, kind: Kind, d: DType, tier: Tier, v: Variant) {
        self.0.insert(format!(
            "{} {} {} {}",
            kind.name(),
            d.name(),
            tier.name(),
            v.name()
        ));
    }

    /// Merge another record.
    pub fn merge(&mut self, o: Coverage) {
        self.0.extend(o.0);
    }

    /// How many kernels were recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether one was recorded.
    pub fn contains(&self, kind: Kind, d: DType, tier: Tier, v: Variant) -> bool {
        self.0.contains(&format!(
            "{} {} {} {}",
            kind.name(),
            d.name(),
            tier.name(),
            v.name()
        ))
    }

    /// Rewrite `<dir>/<file>` with the records (see [`write_records`]).
    pub fn write(&self, file: &str) {
        write_records(file, &self.0);
    }
}

/// Collected failures of a test: a count per failing kernel (or other key),
/// and the first few messages of each in full.
#[derive(Default)]
pub struct Failures {
    /// Messages kept.
    pub msgs: Vec<String>,
    /// Failures counted.
    pub count: usize,
    /// Failures per key.
    pub by_key: std::collections::BTreeMap<String, usize>,
}

impl Failures {
    /// Record one, under the key "" (no per-kernel count).
    pub fn push(&mut self, m: String) {
        self.push_at("", m);
    }

    /// Record one under a key (a kernel's name); the first 3 of a key and at
    /// most 60 in all keep their message.
    pub fn push_at(&mut self, key: &str, m: String) {
        self.count += 1;
        let n = self.by_key.entry(key.to_string()).or_insert(0);
        *n += 1;
        if *n <= 3 && self.msgs.len() < 60 {
            self.msgs.push(m);
        }
    }

    /// Merge another.
    pub fn merge(&mut self, o: Failures) {
        self.count += o.count;
        for (k, n) in o.by_key {
            *self.by_key.entry(k).or_insert(0) += n;
        }
        for m in o.msgs {
            if self.msgs.len() < 60 {
                self.msgs.push(m);
            }
        }
    }

    /// Panic with the failing keys and the kept messages if any failure was recorded.
    pub fn finish(&self, what: &str) {
        if self.count > 0 {
            let keys: Vec<String> = self
                .by_key
                .iter()
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, n)| format!("{k} ({n})"))
                .collect();
            panic!(
                "{what}: {} failures (seed {:#x}) in {} kernels: {}\nfirst messages:\n{}",
                self.count,
                tessera_testkit::rng::seed(),
                keys.len(),
                keys.join(", "),
                self.msgs.join("\n")
            );
        }
    }
}

/// Run `work(item)` for every item on every core, in order of the items; the
/// results in item order.
pub fn par_map<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let results = std::sync::Mutex::new(&mut slots);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                let r = work(&items[i]);
                results.lock().unwrap()[i] = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

/// Rewrite `<dir>/<file>` with `lines`, one record a line, where dir is
/// `TESSERA_COVERAGE_DIR` or `<workspace root>/target/tessera-coverage`
/// (written to a temporary file, then renamed).
pub fn write_records(file: &str, lines: &BTreeSet<String>) {
    let dir = match std::env::var_os("TESSERA_COVERAGE_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join("tessera-coverage"),
    };
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let mut text = String::new();
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    let tmp = dir.join(format!(".{file}.{}", std::process::id()));
    let path = dir.join(file);
    std::fs::write(&tmp, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", tmp.display()));
    std::fs::rename(&tmp, &path).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}
