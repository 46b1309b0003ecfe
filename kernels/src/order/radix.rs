//! Least-significant-digit radix sort of keys (with their indices alongside),
//! a byte per pass: stable, so the order of equal keys is their order in the
//! input, and exact, so the result is the same whether one task or several
//! run the passes.
//!
//! One read counts every pass's digits; a pass whose digit is the same for
//! every key moves nothing and is skipped. With several tasks the keys are
//! cut into contiguous chunks; each counts its own digits, and a chunk's
//! elements of one digit land after those of every earlier chunk, which is
//! exactly where the sequential pass puts them.

use super::key::RadixKey;
use rayon::prelude::*;

/// A pointer that may cross threads: each task writes elements no other
/// task writes.
#[derive(Clone, Copy)]
pub(crate) struct Shared<T>(pub(crate) *mut T);
// SAFETY: the pointer is only used for writes to disjoint elements (and reads
// of elements no task writes in the same phase), as each use states.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The pointer (a method, so closures capture the whole wrapper).
    #[inline(always)]
    pub(crate) fn ptr(self) -> *mut T {
        self.0
    }
}

/// Below this many keys, comparison sorting wins.
pub(crate) const RADIX_MIN: usize = 256;
/// Below this many keys per task, one task runs the passes.
const CHUNK_MIN: usize = 1 << 16;

type Hist = [u32; 256];

fn count<K: RadixKey>(keys: &[K]) -> Vec<Hist> {
    let mut h = vec![[0u32; 256]; K::BYTES];
    for &k in keys {
        for (p, hp) in h.iter_mut().enumerate() {
            hp[k.digit(p)] += 1;
        }
    }
    h
}

/// Sort `keys` ascending, stably, moving `idx` (when given, of the same
/// length) alongside. `tk` and `ti` are scratch of the same length (`ti`
/// unused without `idx`). At most `tasks` tasks; the result does not depend
/// on their number. Keys are fewer than 2^32.
pub(crate) fn radix_sort<K: RadixKey>(
    keys: &mut [K],
    mut idx: Option<&mut [u32]>,
    tk: &mut [K],
    ti: &mut [u32],
    tasks: usize,
) {
    let n = keys.len();
    debug_assert!(n <= u32::MAX as usize && tk.len() >= n);
    let tasks = tasks.clamp(1, (n / CHUNK_MIN).max(1));
    let bounds: Vec<usize> = (0..=tasks).map(|t| n * t / tasks).collect();
    // Every pass's digit counts in one read.
    let hist: Vec<Hist> = if tasks == 1 {
        count(keys)
    } else {
        let parts: Vec<Vec<Hist>> = (0..tasks)
            .into_par_iter()
            .map(|t| count(&keys[bounds[t]..bounds[t + 1]]))
            .collect();
        let mut h = vec![[0u32; 256]; K::BYTES];
        for part in parts {
            for (hp, pp) in h.iter_mut().zip(part) {
                for (a, b) in hp.iter_mut().zip(pp) {
                    *a += b;
                }
            }
        }
        h
    };
    let passes: Vec<usize> = (0..K::BYTES)
        .filter(|&p| !hist[p].iter().any(|&c| c as usize == n))
        .collect();
    let with_idx = idx.is_some();
    let (mut sk, mut dk) = (Shared(keys.as_mut_ptr()), Shared(tk.as_mut_ptr()));
    let (mut si, mut di) = (
        Shared(
            idx.as_deref_mut()
                .map_or(core::ptr::null_mut(), |s| s.as_mut_ptr()),
        ),
        Shared(ti.as_mut_ptr()),
    );
    for &p in &passes {
        if tasks == 1 {
            let mut off = [0u32; 256];
            let mut acc = 0u32;
            for d in 0..256 {
                off[d] = acc;
                acc += hist[p][d];
            }
            // SAFETY: sk/dk (si/di with indices) point at distinct buffers of n
            // elements; every `i < n` is read once and every offset, a prefix
            // count of the digits, is below n and written once.
            unsafe { scatter(sk, si, dk, di, 0, n, p, &mut off, with_idx) };
        } else {
            let local: Vec<Hist> = (0..tasks)
                .into_par_iter()
                .map(|t| {
                    let mut h = [0u32; 256];
                    for i in bounds[t]..bounds[t + 1] {
                        // SAFETY: i < n, an element of the source buffer, which
                        // no task writes in this phase.
                        h[unsafe { *sk.ptr().add(i) }.digit(p)] += 1;
                    }
                    h
                })
                .collect();
            let mut offs = vec![[0u32; 256]; tasks];
            let mut acc = 0u32;
            for d in 0..256 {
                for t in 0..tasks {
                    offs[t][d] = acc;
                    acc += local[t][d];
                }
            }
            offs.into_par_iter().enumerate().for_each(|(t, mut off)| {
                // SAFETY: chunk t reads its own source elements and writes the
                // destination slots [offs[t][d], offs[t][d] + local[t][d]) of
                // each digit, disjoint from every other chunk's and below n.
                unsafe {
                    scatter(
                        sk,
                        si,
                        dk,
                        di,
                        bounds[t],
                        bounds[t + 1],
                        p,
                        &mut off,
                        with_idx,
                    )
                };
            });
        }
        core::mem::swap(&mut sk, &mut dk);
        core::mem::swap(&mut si, &mut di);
    }
    if passes.len() % 2 == 1 {
        keys.copy_from_slice(&tk[..n]);
        if let Some(idx) = idx {
            idx.copy_from_slice(&ti[..n]);
        }
    }
}

/// One pass over source elements `lo..hi`: each to its digit's next slot.
///
/// # Safety
/// Source and destination are distinct buffers holding every index read and
/// written; `off` gives slots that no other caller writes.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn scatter<K: RadixKey>(
    sk: Shared<K>,
    si: Shared<u32>,
    dk: Shared<K>,
    di: Shared<u32>,
    lo: usize,
    hi: usize,
    p: usize,
    off: &mut Hist,
    with_idx: bool,
) {
    if with_idx {
        for i in lo..hi {
            // SAFETY: the caller's promise.
            unsafe {
                let k = *sk.0.add(i);
                let d = k.digit(p);
                let o = off[d] as usize;
                off[d] += 1;
                *dk.0.add(o) = k;
                *di.0.add(o) = *si.0.add(i);
            }
        }
    } else {
        for i in lo..hi {
            // SAFETY: the caller's promise.
            unsafe {
                let k = *sk.0.add(i);
                let d = k.digit(p);
                let o = off[d] as usize;
                off[d] += 1;
                *dk.0.add(o) = k;
            }
        }
    }
}

/// Sort short `keys` (with `idx`) ascending, stably: by (key, index) pairs,
/// which are distinct, so an unstable sort gives the stable order.
pub(crate) fn small_sort<K: RadixKey>(keys: &mut [K], idx: Option<&mut [u32]>) {
    match idx {
        None => keys.sort_unstable(),
        Some(idx) => {
            let mut v: Vec<(K, u32)> = keys.iter().copied().zip(idx.iter().copied()).collect();
            v.sort_unstable();
            for (j, (k, i)) in v.into_iter().enumerate() {
                keys[j] = k;
                idx[j] = i;
            }
        }
    }
}
