//! Tier selection: one tier per process, chosen once, wholesale.
//!
//! The active tier is the best tier the CPU runs, unless the environment variable
//! `TESSERA_TIER` names another available one. Every call can also be run on a
//! named tier through [`Exec::on`], which is how the tests compare tiers in one
//! process. A call that names none runs its engine on [`engine_tier`]: the
//! active tier, or the AVX2 tier where the host table says this CPU runs the
//! engine faster there (the same bits either way).

use crate::error::{Error, Result};
use crate::Tier;
use std::num::NonZeroUsize;
use std::sync::OnceLock;

/// Every tier this CPU runs, the scalar reference first.
pub fn available_tiers() -> Vec<Tier> {
    Tier::ALL
        .iter()
        .copied()
        .filter(|t| t.available())
        .collect()
}

/// The most capable tier this CPU runs (the last available in spec order).
pub fn best_tier() -> Tier {
    *available_tiers().last().unwrap_or(&Tier::ALL[0])
}

static ACTIVE: OnceLock<Tier> = OnceLock::new();
static ENV_NOTE: OnceLock<Option<String>> = OnceLock::new();
/// Whether `TESSERA_TIER` named a tier this CPU runs (the process's tier is
/// then forced for every engine).
static FORCED: OnceLock<bool> = OnceLock::new();

/// Parse a `TESSERA_TIER` value against this CPU.
pub fn parse_tier(name: &str) -> Result<Tier> {
    let t = Tier::from_name(name.trim()).ok_or_else(|| Error::UnknownTier(name.to_string()))?;
    if t.available() {
        Ok(t)
    } else {
        Err(Error::TierUnavailable(t))
    }
}

/// The process's tier: `TESSERA_TIER` if set to an available tier, else the best.
/// An unusable `TESSERA_TIER` falls back to the best tier; [`tier_env_note`]
/// says why.
pub fn active_tier() -> Tier {
    *ACTIVE.get_or_init(|| match std::env::var("TESSERA_TIER") {
        Ok(v) if !v.is_empty() => match parse_tier(&v) {
            Ok(t) => {
                let _ = ENV_NOTE.set(None);
                let _ = FORCED.set(true);
                t
            }
            Err(e) => {
                let _ = FORCED.set(false);
                let _ = ENV_NOTE.set(Some(format!(
                    "TESSERA_TIER ignored: {e}; using `{}`",
                    best_tier()
                )));
                best_tier()
            }
        },
        _ => {
            let _ = FORCED.set(false);
            best_tier()
        }
    })
}

/// The engines whose code path the host table may choose per CPU model
/// (see [`engine_tier`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The generated elementwise kernels (`elementwise`).
    Elementwise,
    /// The generated casts (`cast`).
    Cast,
    /// The fused programs (`map`, `MapPlan`).
    Map,
    /// Reductions (`reduce`, `reduce_many`, `dot` and the norms).
    Reduce,
    /// Scans (`scan`, `scan_many`).
    Scan,
    /// Contractions (`contract`, `matmul`, `ContractPlan`).
    Contract,
    /// Fourier transforms (`fft`).
    Fft,
    /// The byte and text kernels (`bytes::*`).
    Bytes,
    /// Sorting (`sort`, `sort_with`, `argsort`, `argsort_with`): values
    /// alone of 32- and 64-bit keys run a vector quicksort on an AVX-512
    /// tier, everything else the radix sort on every tier.
    Sort,
}

impl Engine {
    /// Every engine, in the order of the host table's documentation.
    pub const ALL: [Engine; 9] = [
        Engine::Elementwise,
        Engine::Cast,
        Engine::Map,
        Engine::Reduce,
        Engine::Scan,
        Engine::Contract,
        Engine::Fft,
        Engine::Bytes,
        Engine::Sort,
    ];

    /// The engine's name, as the benchmark's `tiers` group prints it.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Elementwise => "elementwise",
            Engine::Cast => "cast",
            Engine::Map => "map",
            Engine::Reduce => "reduce",
            Engine::Scan => "scan",
            Engine::Contract => "contract",
            Engine::Fft => "fft",
            Engine::Bytes => "bytes",
            Engine::Sort => "sort",
        }
    }
}

/// A CPU as CPUID names it: vendor, family and model (both with their
/// extended fields added, as the vendors' manuals compute them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    /// CPUID leaf 0's vendor string (`AuthenticAMD`, `GenuineIntel`, …;
    /// empty off x86-64).
    pub vendor: [u8; 12],
    /// The display family.
    pub family: u32,
    /// The display model.
    pub model: u32,
}

/// One row of the host table: CPUs of `vendor`, `family` and a model in
/// one of the ranges `models`, measured to run `narrow`'s engines faster on
/// the AVX2 tier than on the AVX-512 tier.
struct HostRow {
    name: &'static str,
    vendor: &'static [u8; 12],
    family: u32,
    models: &'static [(u32, u32)],
    narrow: &'static [Engine],
    /// Whether the CPU executes 512-bit operations as two 256-bit halves
    /// ([`splits_512`]).
    splits_512: bool,
}

/// The host table: per CPU model, the engines that run faster on the AVX2
/// tier than on the AVX-512 tier (whose every other engine runs on the
/// best tier). Each row comes from `tessera-bench tiers` on such a CPU
/// (ARCHITECTURE.md §3 gives the figures); a CPU no row names runs every
/// engine on its best tier. The choice never changes a bit: every tier
/// gives the scalar tier's.
const HOST_TABLE: &[HostRow] = &[
    HostRow {
        // Zen 4, whose 512-bit operations run as two 256-bit halves: the
        // models of family 19h that AMD gives its Zen 4 parts (10h–1Fh
        // Genoa and Storm Peak, 60h–6Fh Raphael, 70h–7Fh Phoenix and Hawk
        // Point, A0h–AFh Bergamo and Siena). The family's other models are
        // Zen 3 (00h–0Fh Milan, 20h–2Fh Vermeer, 40h–5Fh Rembrandt and
        // Cezanne), without AVX-512: no row.
        name: "AMD Zen 4",
        vendor: b"AuthenticAMD",
        family: 0x19,
        models: &[(0x10, 0x1f), (0x60, 0x7f), (0xa0, 0xaf)],
        narrow: ZEN4_NARROW,
        splits_512: true,
    },
    HostRow {
        // The Intel Xeon measured (AVX-512 F/BW/VL/DQ with FP16, BF16, VNNI and
        // AMX; full-width 512-bit operations), as its CPUID names it.
        name: "Intel Xeon (family 6 model a7h)",
        vendor: b"GenuineIntel",
        family: 0x6,
        models: &[(0xa7, 0xa7)],
        narrow: XEON_A7_NARROW,
        splits_512: false,
    },
];

/// The engines the AVX2 tier runs faster on Zen 4 (see [`HOST_TABLE`]):
/// none since the block sums align their loads. `tessera-bench tiers` on an
/// EPYC family 19h model 11h, three runs: every engine ran as fast or faster
/// on the AVX-512 tier (sum of 65536 f64 5.2–5.6 µs on avx512 against
/// 5.5–5.9 µs on avx2, of 2^20 f32 50–51 against 59–60 µs; the map and the
/// scans within 2% of each other). The lane-order reductions were listed
/// here before (2^20 f32 63 µs on avx2 against 79 µs on avx512, loads then
/// straddling lines). The row stays for [`splits_512`].
const ZEN4_NARROW: &[Engine] = &[];

/// The engines the AVX2 tier runs faster on the Intel Xeon of family 6
/// model a7h (see [`HOST_TABLE`]): the scans (`tessera-bench tiers`: a Sum
/// scan of 65536 f32 43 µs on avx2 against 48 µs on avx512, 8–10% in every
/// run, where its result's copy and chunk totals are L2-bound). Its
/// lane-order reductions, elementwise kinds, casts, map, contraction and
/// FFT ran as fast or faster on the AVX-512 tier (a plain f32 add 10–14%
/// slower there, exp and sin 24–59% faster: one choice per engine).
const XEON_A7_NARROW: &[Engine] = &[Engine::Scan];

/// This CPU's vendor, family and model, read once from CPUID.
pub fn host() -> Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    *HOST.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::__cpuid;
            // SAFETY: CPUID leaves 0 and 1 exist on every x86-64 CPU.
            // (Older compilers mark it unsafe.)
            #[allow(unused_unsafe)]
            let (v, f) = unsafe { (__cpuid(0), __cpuid(1)) };
            let mut vendor = [0u8; 12];
            vendor[..4].copy_from_slice(&v.ebx.to_le_bytes());
            vendor[4..8].copy_from_slice(&v.edx.to_le_bytes());
            vendor[8..].copy_from_slice(&v.ecx.to_le_bytes());
            let base_family = (f.eax >> 8) & 0xF;
            let base_model = (f.eax >> 4) & 0xF;
            let family = if base_family == 0xF {
                base_family + ((f.eax >> 20) & 0xFF)
            } else {
                base_family
            };
            let model = if base_family == 0xF || base_family == 0x6 {
                base_model | ((f.eax >> 12) & 0xF0)
            } else {
                base_model
            };
            Host {
                vendor,
                family,
                model,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Host {
            vendor: [0; 12],
            family: 0,
            model: 0,
        }
    })
}

/// The host table's row for this CPU, where one names it.
fn host_row() -> Option<&'static HostRow> {
    row_of(&host())
}

/// The host table's row that names `h`, if any.
fn row_of(h: &Host) -> Option<&'static HostRow> {
    HOST_TABLE.iter().find(|r| {
        &h.vendor == r.vendor
            && h.family == r.family
            && r.models
                .iter()
                .any(|&(lo, hi)| (lo..=hi).contains(&h.model))
    })
}

/// This CPU in words: vendor, family and model in hex, and the host
/// table's row that names it (or that none does).
pub fn host_description() -> String {
    let h = host();
    format!(
        "{} family {:x}h model {:x}h, {}",
        String::from_utf8_lossy(&h.vendor),
        h.family,
        h.model,
        host_row().map_or(
            "no row of the host table: every engine on the best tier".to_string(),
            |r| { format!("host table row `{}`", r.name) }
        )
    )
}

/// The tier `engine` runs on for a call that names none (an [`Exec`] whose
/// `tier` is `None`): the process's tier where `TESSERA_TIER` forces one;
/// otherwise the AVX2 tier where the host table says this CPU runs the
/// engine faster there than on its best tier (an AVX-512 one); otherwise the
/// best tier. Never a choice of bits: every tier gives the scalar tier's.
pub fn engine_tier(engine: Engine) -> Tier {
    // Decided once per process (small calls ask on every call).
    static TABLE: OnceLock<[Tier; Engine::ALL.len()]> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let active = active_tier();
        let narrow_tier = available_tiers()
            .into_iter()
            .rfind(|&t| runs_avx2(t) && !runs_avx512(t));
        Engine::ALL.map(|e| {
            pick_engine_tier(
                e,
                active,
                FORCED.get().copied().unwrap_or(false),
                host_row().map(|r| r.narrow),
                narrow_tier,
            )
        })
    });
    // `Engine::ALL` lists the engines in declaration order.
    table[engine as usize]
}

/// [`engine_tier`]'s rule: `active` where it is `forced`, not an AVX-512
/// tier, or the CPU's row (`narrow`, if any) does not list `engine`;
/// otherwise the AVX2 tier (`narrow_tier`, where the CPU runs one).
fn pick_engine_tier(
    engine: Engine,
    active: Tier,
    forced: bool,
    narrow: Option<&[Engine]>,
    narrow_tier: Option<Tier>,
) -> Tier {
    if forced || !runs_avx512(active) || !narrow.is_some_and(|n| n.contains(&engine)) {
        return active;
    }
    narrow_tier.unwrap_or(active)
}

/// Why `TESSERA_TIER` was ignored, if it was.
pub fn tier_env_note() -> Option<String> {
    active_tier();
    ENV_NOTE.get().cloned().flatten()
}

/// How many threads a call may use. The thread count never changes a bit of
/// any result: work is split only along independent outputs or whole blocks
/// of a fixed order (ARCHITECTURE.md §6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Par {
    /// On the calling thread alone.
    Seq,
    /// Up to this many tasks on rayon's current pool (2 or more; see
    /// [`Par::threads`]).
    Threads(NonZeroUsize),
    /// As many tasks as rayon's current pool has threads (the default).
    #[default]
    Pool,
}

impl Par {
    /// `n` threads: [`Par::Seq`] for 0 or 1, else [`Par::Threads`].
    pub fn threads(n: usize) -> Par {
        match NonZeroUsize::new(n) {
            Some(n) if n.get() > 1 => Par::Threads(n),
            _ => Par::Seq,
        }
    }
    /// The number of tasks this allows: at least 1, at most [`MAX_THREADS`]
    /// (a larger `Par::Threads` is clamped: more tasks than that only cost
    /// their bookkeeping).
    pub fn count(self) -> usize {
        match self {
            Par::Seq => 1,
            Par::Threads(n) => n.get().min(MAX_THREADS),
            Par::Pool => {
                guard_pool();
                rayon::current_num_threads().clamp(1, MAX_THREADS)
            }
        }
    }
}

/// The most threads (tasks) a call uses, and the most threads the library
/// lets rayon's global pool start with: `RAYON_NUM_THREADS` above it (where
/// rayon would try to start that many threads before the first call could
/// run) is clamped to it.
pub const MAX_THREADS: usize = 1024;

/// Before rayon's global pool first starts: where `RAYON_NUM_THREADS` asks
/// for more than [`MAX_THREADS`] threads, build the global pool with
/// [`MAX_THREADS`] instead (an application that built its global pool
/// already keeps it). Checked once per process; afterwards a load of a flag.
fn guard_pool() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let asked = std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<u128>().ok());
        if asked.is_some_and(|n| n > MAX_THREADS as u128) {
            let _ = rayon::ThreadPoolBuilder::new()
                .num_threads(MAX_THREADS)
                .build_global();
        }
    });
}

/// How a call runs: on which tier and with what parallelism. Every call that
/// computes takes one, as its last argument (the API rule of the crate
/// documentation); results never depend on it, only speed does.
///
/// `Exec::default()` runs on the process's active tier ([`active_tier`]),
/// engine by engine as the host table says ([`engine_tier`]), with rayon's
/// pool ([`Par::Pool`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Exec {
    /// The tier, or None for the process's active tier.
    pub tier: Option<Tier>,
    /// The parallelism.
    pub par: Par,
}

impl Exec {
    /// Sequential, on the active tier: what a caller that brings its own
    /// threads wants.
    pub const SEQ: Exec = Exec {
        tier: None,
        par: Par::Seq,
    };
    /// Run on a named tier (with the default parallelism).
    pub fn on(tier: Tier) -> Self {
        Exec {
            tier: Some(tier),
            ..Exec::default()
        }
    }
    /// The same, with this parallelism.
    pub fn par(self, par: Par) -> Self {
        Exec { par, ..self }
    }
    /// The same, with `n` threads ([`Par::threads`]: 0 and 1 are sequential).
    pub fn threads(self, n: usize) -> Self {
        self.par(Par::threads(n))
    }
    /// The tier this runs on, checked against the CPU. (Every call asks
    /// this first; it also keeps rayon's global pool within
    /// [`MAX_THREADS`], see [`Par::count`].)
    pub fn resolve_tier(&self) -> Result<Tier> {
        guard_pool();
        let t = self.tier.unwrap_or_else(active_tier);
        if t.available() {
            Ok(t)
        } else {
            Err(Error::TierUnavailable(t))
        }
    }
    /// [`Exec::resolve_tier`] for a call of `engine`: the named tier, or
    /// where none is named, [`engine_tier`] (the host table's choice).
    pub fn resolve_tier_for(&self, engine: Engine) -> Result<Tier> {
        guard_pool();
        match self.tier {
            // The table holds tiers this CPU runs.
            None => Ok(engine_tier(engine)),
            Some(t) if t.available() => Ok(t),
            Some(t) => Err(Error::TierUnavailable(t)),
        }
    }
    /// The number of tasks this allows (at least 1).
    pub fn thread_count(&self) -> usize {
        self.par.count()
    }
}

// `kernel_table(tier)` and `cast_table(tier)`: each tier's dispatch tables,
// defined by its crate (`tiers/<name>/`).
tessera_generated::dispatch!();

/// Whether `tier` executes AVX-512 F besides AVX2 and FMA (the engines'
/// AVX-512 paths run on it, with the scalar tier's bits).
pub fn runs_avx512(tier: Tier) -> bool {
    features_of(tier).1
}

/// Whether `tier` executes AVX-512 F and BW besides AVX2 and FMA (the byte
/// engine's 512-bit paths run on it, with the scalar tier's results).
pub fn runs_avx512bw(tier: Tier) -> bool {
    features_of(tier).2
}

/// `(runs_avx2, runs_avx512, runs_avx512bw)` of a tier, read from its
/// declared features once per process (small calls ask on every call).
fn features_of(tier: Tier) -> (bool, bool, bool) {
    use std::sync::OnceLock;
    static TABLE: OnceLock<Vec<(bool, bool, bool)>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        Tier::ALL
            .iter()
            .map(|t| {
                let f = t.info().features;
                let avx2 = f.contains(&"avx2") && f.contains(&"fma") && f.contains(&"popcnt");
                let avx512 = avx2 && f.contains(&"avx512f");
                (avx2, avx512, avx512 && f.contains(&"avx512bw"))
            })
            .collect()
    });
    table[tier as usize]
}

/// Whether `tier` executes AVX2, FMA and POPCNT instructions (the
/// hand-written AVX2 paths of the reduction, contraction and byte engines
/// run on it). Every tier that declares the three in `spec/tiers.toml` does; the engines' AVX2 paths
/// give the scalar tier's bits, so the choice never changes a result.
pub fn runs_avx2(tier: Tier) -> bool {
    features_of(tier).0
}

/// CPU features the engines ask about beyond a tier's declared ones (a tier
/// is chosen wholesale; these pick a kernel within it, never a result bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CpuFeature {
    /// AVX (256-bit non-temporal stores).
    Avx,
    /// AVX-512 F.
    Avx512f,
    /// AVX-512 VNNI (`vpdpbusd`, `vpdpwssd`).
    Avx512Vnni,
}

/// Whether this CPU runs `feature` (the one place, with
/// [`Tier::available`], where the library asks the CPU what it runs).
pub(crate) fn cpu_runs(feature: CpuFeature) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match feature {
            CpuFeature::Avx => std::arch::is_x86_feature_detected!("avx"),
            CpuFeature::Avx512f => std::arch::is_x86_feature_detected!("avx512f"),
            CpuFeature::Avx512Vnni => std::arch::is_x86_feature_detected!("avx512vnni"),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = feature;
        false
    }
}

/// Whether the CPU's vendor string (CPUID leaf 0) is Intel's.
pub(crate) fn cpu_vendor_is_intel() -> bool {
    &host().vendor == b"GenuineIntel"
}

/// Whether this CPU executes 512-bit vector operations as two 256-bit
/// halves (the Zen 4 models of AMD family 19h), where a 512-bit store that a load reads
/// back soon after is slow to forward and 256-bit code is as fast or
/// faster: a field of the host table's row for this CPU. Engines use it only
/// to choose between register widths that give the same bits.
pub(crate) fn splits_512() -> bool {
    host_row().is_some_and(|r| r.splits_512)
}

/// The data and unified cache sizes `[L1, L2, L3]` in bytes from CPUID's
/// deterministic cache parameters (leaf 4 on Intel, 0x8000001D on AMD,
/// which share one layout), where the CPU reports them.
pub(crate) fn cpuid_cache_sizes() -> Option<[usize; 3]> {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{__cpuid, __cpuid_count};
        // SAFETY: CPUID is available on every x86-64 CPU; leaves above the
        // reported maxima are not queried. (Older compilers mark it unsafe.)
        #[allow(unused_unsafe)]
        let (max_basic, max_ext) = unsafe { (__cpuid(0).eax, __cpuid(0x8000_0000).eax) };
        let leaf = if max_ext >= 0x8000_001D {
            0x8000_001D
        } else if max_basic >= 4 {
            4
        } else {
            return None;
        };
        let mut sizes = [0usize; 3];
        for sub in 0..16 {
            // SAFETY: the leaf is at most the reported maximum (above).
            #[allow(unused_unsafe)]
            let r = unsafe { __cpuid_count(leaf, sub) };
            let kind = r.eax & 0x1f;
            if kind == 0 {
                break;
            }
            if kind == 2 {
                continue; // instruction cache
            }
            let level = (r.eax >> 5) & 0x7;
            let ways = ((r.ebx >> 22) & 0x3ff) as usize + 1;
            let parts = ((r.ebx >> 12) & 0x3ff) as usize + 1;
            let line = (r.ebx & 0xfff) as usize + 1;
            let sets = r.ecx as usize + 1;
            let size = ways * parts * line * sets;
            match level {
                1 => sizes[0] = size,
                2 => sizes[1] = size,
                3 | 4 => sizes[2] = sizes[2].max(size),
                _ => {}
            }
        }
        (sizes[0] > 0).then_some(sizes)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows name CPUs by their published CPUID family and model: AMD's
    /// Zen 4 parts (Genoa 19h/11h, Storm Peak 19h/18h, Raphael 19h/61h,
    /// Phoenix 19h/74h, Bergamo 19h/A0h) take the Zen 4 row, its Zen 3
    /// parts of the same family (Milan 19h/01h, Vermeer 19h/21h,
    /// Rembrandt 19h/44h, Cezanne 19h/50h) and Zen 5 (1Ah) none; the Xeon
    /// row names family 6 model A7h only.
    #[test]
    fn host_rows_name_their_cpus_only() {
        let amd = |family, model| Host {
            vendor: *b"AuthenticAMD",
            family,
            model,
        };
        for model in [0x11, 0x18, 0x61, 0x74, 0xa0] {
            let row = row_of(&amd(0x19, model)).map(|r| r.name);
            assert_eq!(row, Some("AMD Zen 4"), "model {model:x}h");
            assert!(row_of(&amd(0x19, model)).unwrap().splits_512);
        }
        for model in [0x01, 0x08, 0x21, 0x44, 0x50] {
            assert!(row_of(&amd(0x19, model)).is_none(), "model {model:x}h");
        }
        assert!(row_of(&amd(0x1a, 0x02)).is_none());
        assert!(row_of(&amd(0x1a, 0x11)).is_none());
        let intel = |model| Host {
            vendor: *b"GenuineIntel",
            family: 6,
            model,
        };
        assert!(row_of(&intel(0xa7)).is_some_and(|r| !r.splits_512));
        assert!(row_of(&intel(0x8f)).is_none());
        assert!(row_of(&intel(0xa6)).is_none());
        // Another vendor with Zen 4's family and model: no row.
        let other = Host {
            vendor: *b"HygonGenuine",
            family: 0x19,
            model: 0x11,
        };
        assert!(row_of(&other).is_none());
    }

    /// The host table's rule on every combination: a forced tier, a tier
    /// without AVX-512, a CPU no row names and an engine its row does not
    /// list keep the active tier; only a listed engine on an AVX-512 tier
    /// moves to the AVX2 tier.
    #[test]
    fn engine_tier_rule() {
        let narrow: &[Engine] = &[Engine::Reduce];
        for engine in Engine::ALL {
            let listed = engine == Engine::Reduce;
            // Unforced, AVX-512 active, row lists the engine.
            let want = if listed { Tier::Avx2 } else { Tier::Avx512 };
            assert_eq!(
                pick_engine_tier(engine, Tier::Avx512, false, Some(narrow), Some(Tier::Avx2)),
                want
            );
            // Forced (TESSERA_TIER): the active tier, always.
            assert_eq!(
                pick_engine_tier(engine, Tier::Avx512, true, Some(narrow), Some(Tier::Avx2)),
                Tier::Avx512
            );
            // No row for this CPU.
            assert_eq!(
                pick_engine_tier(engine, Tier::Avx512, false, None, Some(Tier::Avx2)),
                Tier::Avx512
            );
            // An active tier without AVX-512.
            for t in [Tier::Scalar, Tier::Avx2] {
                assert_eq!(
                    pick_engine_tier(engine, t, false, Some(narrow), Some(Tier::Avx2)),
                    t
                );
            }
            // No AVX2 tier to move to.
            assert_eq!(
                pick_engine_tier(engine, Tier::Avx512, false, Some(narrow), None),
                Tier::Avx512
            );
        }
    }

    /// A named tier is the tier a call runs on, whatever the host table
    /// says; without one, the table's choice, which the CPU runs.
    #[test]
    fn a_named_tier_overrides_the_table() {
        for engine in Engine::ALL {
            for t in available_tiers() {
                assert_eq!(Exec::on(t).resolve_tier_for(engine).unwrap(), t);
            }
            // Without one: a tier this CPU runs, the process's own or the
            // AVX2 tier the table may move an engine to.
            let d = Exec::default().resolve_tier_for(engine).unwrap();
            assert!(d.available());
            assert!(d == active_tier() || (runs_avx2(d) && !runs_avx512(d)));
        }
    }
}
