//! Radix sort of keys (with their indices alongside): stable, so the order
//! of equal keys is their order in the input, and exact, so the result is
//! the same whether one task or several run it.
//!
//! A long run of keys first moves by its top 8 bits into 256 buckets (one
//! most-significant-digit pass); each bucket, small enough to stay in cache,
//! then sorts by its remaining bits least significant digit first, in
//! digits of at most 12 bits. A short run goes least significant digit
//! first directly. Each sequence of passes counts all its digits in one
//! read and skips a digit that is the same for every key. With several
//! tasks the top pass cuts the keys into contiguous chunks, each counting
//! its own digits, a chunk's keys of one digit landing after every earlier
//! chunk's (exactly where the sequential pass puts them); the buckets are
//! then shared out whole.

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
/// From this many keys, the top digit goes first.
const MSD_MIN: usize = 1 << 16;
/// Below this many keys per task, one task runs the top pass.
const CHUNK_MIN: usize = 1 << 16;
/// Widest digit.
const WIDE: u32 = 12;
const BUCKETS: usize = 1 << WIDE;

/// Bits `[0, bits)` as digits `(lo, width)` of at most 12 bits, low first.
fn digits(bits: u32) -> Vec<(u32, u32)> {
    let n = bits.div_ceil(WIDE).max(1);
    let mut out = Vec::with_capacity(n as usize);
    let mut lo = 0;
    for i in 0..n {
        let w = (bits - lo) / (n - i);
        out.push((lo, w));
        lo += w;
    }
    out
}

/// Sort `keys` ascending, stably, moving `idx` (when given, of the same
/// length) alongside. `tk` and `ti` are scratch of the same length (`ti`
/// unused without `idx`). At most `tasks` tasks; the result does not depend
/// on their number. Keys are fewer than 2^32.
pub(crate) fn radix_sort<K: RadixKey>(
    keys: &mut [K],
    idx: Option<&mut [u32]>,
    tk: &mut [K],
    ti: &mut [u32],
    tasks: usize,
) {
    let n = keys.len();
    let with_idx = idx.is_some();
    let ka = Shared(keys.as_mut_ptr());
    let ia = Shared(idx.map_or(core::ptr::null_mut(), |s| s.as_mut_ptr()));
    let kb = Shared(tk.as_mut_ptr());
    let ib = Shared(ti.as_mut_ptr());
    if n < MSD_MIN || K::BITS <= 8 {
        // SAFETY: a and b are distinct buffers of n elements (b's indices
        // unused without a's).
        unsafe {
            if lsd(ka, ia, kb, ib, 0, n, &digits(K::BITS), with_idx) {
                core::ptr::copy_nonoverlapping(kb.ptr(), ka.ptr(), n);
                if with_idx {
                    core::ptr::copy_nonoverlapping(ib.ptr(), ia.ptr(), n);
                }
            }
        }
        return;
    }
    // SAFETY: a and b are distinct buffers of n elements; a's keys and
    // indices are read (each once, in the top pass) before a is written.
    unsafe {
        msd(
            n,
            |i| *ka.ptr().add(i),
            with_idx.then_some(ia),
            ka,
            ia,
            kb,
            ib,
            with_idx,
            tasks,
        )
    };
}

/// Sort the keys `key(i)`, i < n, ascending and stably into buffer a (with
/// their indices into a's indices: read from `src_idx` where given, else i),
/// through buffer b: the top pass scatters the keys straight from `key`.
/// `n` is at least [`MSD_MIN`] and keys are wider than 8 bits.
pub(crate) fn radix_sort_from<K: RadixKey, F: Fn(usize) -> K + Sync>(
    key: F,
    keys: &mut [K],
    idx: Option<&mut [u32]>,
    tk: &mut [K],
    ti: &mut [u32],
    tasks: usize,
) {
    let n = keys.len();
    let with_idx = idx.is_some();
    let ka = Shared(keys.as_mut_ptr());
    let ia = Shared(idx.map_or(core::ptr::null_mut(), |s| s.as_mut_ptr()));
    let kb = Shared(tk.as_mut_ptr());
    let ib = Shared(ti.as_mut_ptr());
    // SAFETY: a and b are distinct buffers of n elements; `key` reads none.
    unsafe { msd(n, key, None, ka, ia, kb, ib, with_idx, tasks) };
}

/// Whether [`radix_sort_from`] takes `n` keys of type K.
pub(crate) fn takes_from<K: RadixKey>(n: usize) -> bool {
    n >= MSD_MIN && K::BITS > 8 && n <= u32::MAX as usize
}

/// The top pass from `key` (and `src_idx`, or the position) into b, then
/// each bucket's lower digits from b into a.
///
/// # Safety
/// a and b are distinct buffers of n elements (indices too, with
/// `with_idx`); `key` and `src_idx` read nothing written before they are
/// done (the top pass reads every element before the buckets write).
#[allow(clippy::too_many_arguments)]
unsafe fn msd<K: RadixKey, F: Fn(usize) -> K + Sync>(
    n: usize,
    key: F,
    src_idx: Option<Shared<u32>>,
    ka: Shared<K>,
    ia: Shared<u32>,
    kb: Shared<K>,
    ib: Shared<u32>,
    with_idx: bool,
    tasks: usize,
) {
    let top = K::BITS - 8;
    let tasks = tasks.clamp(1, (n / CHUNK_MIN).max(1));
    let bounds: Vec<usize> = (0..=tasks).map(|t| n * t / tasks).collect();
    // The top digit's counts, per chunk.
    let local: Vec<[u32; 256]> = (0..tasks)
        .into_par_iter()
        .with_max_len(1)
        .map(|t| {
            let mut h = [0u32; 256];
            for i in bounds[t]..bounds[t + 1] {
                h[key(i).field(top, 8)] += 1;
            }
            h
        })
        .collect();
    let mut offs = vec![[0u32; 256]; tasks];
    let mut starts = [0usize; 257];
    let mut acc = 0u32;
    for d in 0..256 {
        starts[d] = acc as usize;
        for t in 0..tasks {
            offs[t][d] = acc;
            acc += local[t][d];
        }
    }
    starts[256] = n;
    let scatter_chunk = |t: usize, off: &mut [u32; 256]| {
        for i in bounds[t]..bounds[t + 1] {
            // SAFETY: chunk t reads its own elements of a and writes the
            // slots [offs[t][d], offs[t][d] + local[t][d]) of b for each
            // digit d: disjoint from every other chunk's, below n.
            unsafe {
                let k = key(i);
                let d = k.field(top, 8);
                let o = off[d] as usize;
                off[d] += 1;
                *kb.ptr().add(o) = k;
                if with_idx {
                    *ib.ptr().add(o) = match src_idx {
                        Some(p) => *p.ptr().add(i),
                        None => i as u32,
                    };
                }
            }
        }
    };
    if tasks == 1 {
        scatter_chunk(0, &mut offs[0]);
    } else {
        offs.into_par_iter()
            .enumerate()
            .with_max_len(1)
            .for_each(|(t, mut off)| scatter_chunk(t, &mut off));
    }
    // Each bucket: its lower bits, from b back into a.
    let lower = digits(top);
    let bucket = |d: usize| {
        let (s, e) = (starts[d], starts[d + 1]);
        // SAFETY: bucket d owns [s, e) of a and b (the buckets partition
        // [0, n)); one task sorts it.
        unsafe {
            let off = |p: Shared<K>| Shared(p.ptr().add(s));
            let offi = |p: Shared<u32>| Shared(if with_idx { p.ptr().add(s) } else { p.ptr() });
            // Sorted from b (first) through a (second): unless the result
            // ended in a, it moves there.
            let in_a = lsd(
                off(kb),
                offi(ib),
                off(ka),
                offi(ia),
                0,
                e - s,
                &lower,
                with_idx,
            );
            if !in_a {
                core::ptr::copy_nonoverlapping(kb.ptr().add(s), ka.ptr().add(s), e - s);
                if with_idx {
                    core::ptr::copy_nonoverlapping(ib.ptr().add(s), ia.ptr().add(s), e - s);
                }
            }
        }
    };
    if tasks == 1 {
        (0..256).for_each(bucket);
    } else {
        (0..256).into_par_iter().for_each(bucket);
    }
}

/// Sort elements `lo..hi` of buffer a by the digits `ds`, least significant
/// first, through buffer b; returns whether the result ended in b (else in
/// a). Short runs sort by comparison in a.
///
/// # Safety
/// a and b (keys, and indices with `with_idx`) are distinct buffers holding
/// elements `lo..hi`, which no other caller touches meanwhile.
#[allow(clippy::too_many_arguments)]
unsafe fn lsd<K: RadixKey>(
    ka: Shared<K>,
    ia: Shared<u32>,
    kb: Shared<K>,
    ib: Shared<u32>,
    lo: usize,
    hi: usize,
    ds: &[(u32, u32)],
    with_idx: bool,
) -> bool {
    let n = hi - lo;
    if n < RADIX_MIN {
        // SAFETY: the caller's promise: a holds elements lo..hi.
        unsafe {
            let keys = core::slice::from_raw_parts_mut(ka.ptr().add(lo), n);
            let idx = with_idx.then(|| core::slice::from_raw_parts_mut(ia.ptr().add(lo), n));
            small_sort(keys, idx);
        }
        return false;
    }
    // Every digit's counts in one read; a digit is the key shifted and
    // masked (a mask below BUCKETS, so the counts are indexed in bounds).
    let masks: Vec<(u32, usize)> = ds.iter().map(|&(l, w)| (l, (1usize << w) - 1)).collect();
    let mut hist = vec![[0u32; BUCKETS]; ds.len()];
    for i in lo..hi {
        // SAFETY: the caller's promise.
        let k = unsafe { *ka.ptr().add(i) };
        for (h, &(l, m)) in hist.iter_mut().zip(&masks) {
            // SAFETY: the digit is masked below 2^w ≤ BUCKETS.
            unsafe { *h.get_unchecked_mut(k.low64(l) as usize & m) += 1 };
        }
    }
    let (mut sk, mut dk, mut si, mut di) = (ka, kb, ia, ib);
    let mut in_b = false;
    for (h, &(l, w)) in hist.iter().zip(ds) {
        if h.iter().any(|&c| c as usize == n) {
            continue;
        }
        let mut off = [0u32; BUCKETS];
        let mut acc = lo as u32;
        for d in 0..1usize << w {
            off[d] = acc;
            acc += h[d];
        }
        let m = (1usize << w) - 1;
        // SAFETY: the caller's promise; offsets are prefix counts of the
        // digits from lo, so each slot in lo..hi is written once; a digit
        // is masked below 2^w ≤ BUCKETS.
        unsafe {
            if with_idx {
                for i in lo..hi {
                    let k = *sk.ptr().add(i);
                    let slot = off.get_unchecked_mut(k.low64(l) as usize & m);
                    let o = *slot as usize;
                    *slot += 1;
                    *dk.ptr().add(o) = k;
                    *di.ptr().add(o) = *si.ptr().add(i);
                }
            } else {
                for i in lo..hi {
                    let k = *sk.ptr().add(i);
                    let slot = off.get_unchecked_mut(k.low64(l) as usize & m);
                    let o = *slot as usize;
                    *slot += 1;
                    *dk.ptr().add(o) = k;
                }
            }
        }
        core::mem::swap(&mut sk, &mut dk);
        core::mem::swap(&mut si, &mut di);
        in_b = !in_b;
    }
    in_b
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
