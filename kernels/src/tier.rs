//! Tier selection: one tier per process, chosen once, wholesale.
//!
//! The active tier is the best tier the CPU runs, unless the environment variable
//! `TESSERA_TIER` names another available one. Every call can also be run on a
//! named tier through [`Exec::on`], which is how the tests compare tiers in one
//! process.

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
                t
            }
            Err(e) => {
                let _ = ENV_NOTE.set(Some(format!(
                    "TESSERA_TIER ignored: {e}; using `{}`",
                    best_tier()
                )));
                best_tier()
            }
        },
        _ => best_tier(),
    })
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
/// `Exec::default()` runs on the process's active tier ([`active_tier`]) with
/// rayon's pool ([`Par::Pool`]).
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

/// `(runs_avx2, runs_avx512)` of a tier, read from its declared features once
/// per process (small calls ask on every call).
fn features_of(tier: Tier) -> (bool, bool) {
    use std::sync::OnceLock;
    static TABLE: OnceLock<Vec<(bool, bool)>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        Tier::ALL
            .iter()
            .map(|t| {
                let f = t.info().features;
                let avx2 = f.contains(&"avx2") && f.contains(&"fma");
                (avx2, avx2 && f.contains(&"avx512f"))
            })
            .collect()
    });
    table[tier as usize]
}

/// Whether `tier` executes AVX2 and FMA instructions (the hand-written AVX2
/// paths of the reduction and contraction engines run on it). Every tier that
/// declares both features in `spec/tiers.toml` does; the engines' AVX2 paths
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
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__cpuid;
        // SAFETY: CPUID leaf 0 exists on every x86-64 CPU. (Older compilers
        // mark it unsafe.)
        #[allow(unused_unsafe)]
        let r = unsafe { __cpuid(0) };
        let mut v = [0u8; 12];
        v[..4].copy_from_slice(&r.ebx.to_le_bytes());
        v[4..8].copy_from_slice(&r.edx.to_le_bytes());
        v[8..].copy_from_slice(&r.ecx.to_le_bytes());
        &v == b"GenuineIntel"
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether this CPU executes 512-bit vector operations as two 256-bit
/// halves (AMD family 19h: Zen 4), where a 512-bit store that a load reads
/// back soon after is slow to forward and 256-bit code is as fast or
/// faster. Read once per process from CPUID. Engines use it only to choose
/// between register widths that give the same bits.
pub(crate) fn splits_512() -> bool {
    use std::sync::OnceLock;
    static SPLITS: OnceLock<bool> = OnceLock::new();
    *SPLITS.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::__cpuid;
            // SAFETY: CPUID leaves 0 and 1 exist on every x86-64 CPU.
            #[allow(unused_unsafe)]
            let (v, f) = unsafe { (__cpuid(0), __cpuid(1)) };
            let amd = (v.ebx, v.edx, v.ecx) == (0x6874_7541, 0x6974_6E65, 0x444D_4163);
            let family = ((f.eax >> 8) & 0xF) + ((f.eax >> 20) & 0xFF);
            amd && family == 0x19
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    })
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
