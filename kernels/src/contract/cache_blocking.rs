//! Cache blocking derived from the cache sizes this CPU reports.
//!
//! The blocking changes only speed: in chain order every output's products are
//! added in increasing k whatever the blocks are.

use std::sync::OnceLock;

/// Data cache sizes in bytes: level 1, level 2 and the last level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSizes {
    /// Level-1 data cache of one core.
    pub l1: usize,
    /// Level-2 cache of one core.
    pub l2: usize,
    /// Last-level cache.
    pub l3: usize,
}

impl Default for CacheSizes {
    fn default() -> Self {
        CacheSizes {
            l1: 32 << 10,
            l2: 512 << 10,
            l3: 8 << 20,
        }
    }
}

/// Parse a sysfs cache size such as `48K`, `1024K` or `32M`.
fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1usize << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<usize>().ok()?.checked_mul(mult)
}

fn read_sysfs() -> Option<CacheSizes> {
    let mut sizes = CacheSizes {
        l1: 0,
        l2: 0,
        l3: 0,
    };
    for i in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let Ok(level) = std::fs::read_to_string(format!("{dir}/level")) else {
            break;
        };
        let kind = std::fs::read_to_string(format!("{dir}/type")).unwrap_or_default();
        if kind.trim() == "Instruction" {
            continue;
        }
        let Some(size) = std::fs::read_to_string(format!("{dir}/size"))
            .ok()
            .and_then(|s| parse_size(&s))
        else {
            continue;
        };
        match level.trim() {
            "1" => sizes.l1 = size,
            "2" => sizes.l2 = size,
            "3" | "4" => sizes.l3 = sizes.l3.max(size),
            _ => {}
        }
    }
    (sizes.l1 > 0).then_some(sizes)
}

/// Cache sizes from CPUID (`crate::tier::cpuid_cache_sizes`).
fn read_cpuid() -> Option<CacheSizes> {
    crate::tier::cpuid_cache_sizes().map(|[l1, l2, l3]| CacheSizes { l1, l2, l3 })
}

/// The cache sizes of this CPU (sysfs on Linux, else CPUID), each one missing
/// or implausible replaced by a common value (32 KiB, 512 KiB, 8 MiB).
pub fn cache_sizes() -> CacheSizes {
    static SIZES: OnceLock<CacheSizes> = OnceLock::new();
    *SIZES.get_or_init(|| {
        let d = CacheSizes::default();
        let s = read_sysfs().or_else(read_cpuid).unwrap_or(d);
        let pick = |v: usize, lo: usize, hi: usize, def: usize| {
            if (lo..=hi).contains(&v) {
                v
            } else {
                def
            }
        };
        let l1 = pick(s.l1, 8 << 10, 1 << 20, d.l1);
        let l2 = pick(s.l2, 64 << 10, 64 << 20, d.l2);
        let l3 = pick(s.l3, l2, 1 << 30, d.l3.max(l2));
        CacheSizes { l1, l2, l3 }
    })
}

/// Block sizes of the packed GEMM: `kc` the depth of a panel, `mc` the rows of
/// a packed A block, `nc` the columns of a packed B block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocking {
    /// Rows of the microkernel.
    pub mr: usize,
    /// Columns of the microkernel.
    pub nr: usize,
    /// Depth of one packed panel.
    pub kc: usize,
    /// Rows of one packed A block (a multiple of `mr`).
    pub mc: usize,
    /// Columns of one packed B block (a multiple of `nr`).
    pub nc: usize,
}

/// Blocking for a microkernel of `mr × nr` on elements of `size` bytes: a B
/// micro-panel of a quarter of L2 (at most 512 steps deep: the C tile's load
/// and store, once per k-block, then cost under 1/500 of the tile's work, and
/// a B micro-panel that spills from L1 streams from L2 at the FMA rate on
/// the measured hosts), an A block half of L2, a B block a quarter of the last
/// level.
pub fn blocking(mr: usize, nr: usize, size: usize, caches: CacheSizes) -> Blocking {
    let kc = (caches.l2 / 4 / (nr * size)).clamp(64, 512) / 8 * 8;
    let mc = ((caches.l2 / 2 / (kc * size)) / mr).clamp(4, 128) * mr;
    let nc = ((caches.l3 / 4 / (kc * size)) / nr).clamp(4, 4096 / nr) * nr;
    Blocking { mr, nr, kc, mc, nc }
}

/// [`blocking`] of an `mr × nr` microkernel of elements of `size` bytes
/// for this CPU's caches ([`cache_sizes`]).
pub(crate) fn for_tile(mr: usize, nr: usize, size: usize) -> Blocking {
    blocking(mr, nr, size, cache_sizes())
}

/// [`blocking`] for a product of at most two micro-panels of columns
/// (`n ≤ 2·nr`), where B is small and A is the stream: a depth block of
/// half of L2 per B micro-panel (at most 4096 steps), so that each row of A
/// is read in long runs (a packer reading `mr` rows far apart in runs of
/// 512 steps was bound by the memory's latency), and the A block sized to
/// the rest of L2 as [`blocking`] sizes it for the depth `k` the product
/// has (a shallow product keeps [`blocking`]'s rows).
pub fn blocking_skinny(
    mr: usize,
    nr: usize,
    size: usize,
    caches: CacheSizes,
    k: usize,
) -> Blocking {
    let b = blocking(mr, nr, size, caches);
    let kc = (caches.l2 / 2 / (nr * size)).clamp(64, 4096) / 8 * 8;
    let depth = kc.min(k.div_ceil(8) * 8).max(b.kc);
    let mc = ((caches.l2 / 2 / (depth * size)) / mr).clamp(4, 128) * mr;
    Blocking {
        kc: kc.max(b.kc),
        mc,
        ..b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("48K\n"), Some(48 << 10));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn cpuid_agrees_with_sysfs_where_both_answer() {
        if let (Some(a), Some(b)) = (read_sysfs(), read_cpuid()) {
            assert_eq!(a.l1, b.l1);
            assert_eq!(a.l2, b.l2);
        }
    }

    #[test]
    fn blocks_are_multiples() {
        for c in [CacheSizes::default(), cache_sizes()] {
            for (mr, nr, s) in [(6, 16, 4), (6, 8, 8)] {
                let b = blocking(mr, nr, s, c);
                assert!(
                    b.kc >= 64 && b.mc.is_multiple_of(mr) && b.nc.is_multiple_of(nr) && b.mc > 0
                );
                let d = blocking_skinny(mr, nr, s, c, 1 << 20);
                assert!(
                    d.kc >= b.kc
                        && d.kc <= 4096
                        && d.kc.is_multiple_of(8)
                        && d.mc.is_multiple_of(mr)
                        && d.mc > 0
                        && (d.mr, d.nr, d.nc) == (b.mr, b.nr, b.nc)
                );
            }
        }
    }
}
