//! Radix sort of keys (with their indices alongside): stable, so the order
//! of equal keys is their order in the input, and exact, so the result is
//! the same whether one task or several run it.
//!
//! A long run of keys first moves into at most 256 buckets (one
//! most-significant-digit pass). The buckets follow the keys' values, not a
//! fixed digit: one read counts the 12-bit prefix just below the highest bit
//! in which the keys differ (a second read finds it where the top 12 bits
//! are the same for every key), and runs of consecutive prefixes holding
//! about n/256 keys each make the buckets, so that skewed keys (floats of
//! a few binades, small integers in a wide type) still give buckets small
//! enough to stay in cache. Each bucket then sorts by its keys less the
//! bucket's least possible key, least significant digit first, in digits of
//! at most 12 bits, only over the bits that can differ within it. A short
//! run goes least significant digit first directly. Each sequence of passes
//! counts all its digits in one read and skips a digit that is the same for
//! every key. With several tasks the top pass cuts the keys into contiguous
//! chunks, each counting its own prefixes, a chunk's keys of one bucket
//! landing after every earlier chunk's (exactly where the sequential pass
//! puts them); the buckets are then shared out whole.
//!
//! Where the top pass writes the result buffer itself (a sort straight from
//! the input), each bucket borrows only the front of the scratch, so a
//! one-task sort touches a bucket's worth of scratch rather than all of it,
//! and hands each finished bucket to the caller while it is still in cache.

use super::key::RadixKey;
use rayon::prelude::*;

/// A pointer that may cross threads: each task writes elements no other
/// task writes.
#[derive(Clone, Copy)]
pub(crate) struct Shared<T>(pub(crate) *mut T);
// SAFETY: the pointer is only used for writes to disjoint elements (and reads
// of elements no task writes in the same phase), as each use states.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: sharing one only copies the address: writes through it go to
// disjoint elements, and reads to elements no task writes in that phase.
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
            if lsd(
                ka,
                ia,
                kb,
                ib,
                0,
                n,
                K::default(),
                &digits(K::BITS),
                with_idx,
            ) {
                core::ptr::copy_nonoverlapping(kb.ptr(), ka.ptr(), n);
                if with_idx {
                    core::ptr::copy_nonoverlapping(ib.ptr(), ia.ptr(), n);
                }
            }
        }
        return;
    }
    // SAFETY: a and b are distinct buffers of n elements; a's keys and
    // indices are read (each once, in the top pass) before a is written (the
    // top pass writes b).
    unsafe {
        msd(
            n,
            |i| *ka.ptr().add(i),
            with_idx.then_some(ia),
            false,
            Bufs { ka, ia, kb, ib },
            with_idx,
            tasks,
            |_, _, _, _| {},
        )
    };
}

/// Sort the keys `key(i)`, i < n, ascending and stably into buffer a (with
/// their indices into a's indices, i for key i), through buffer b: the top
/// pass scatters the keys straight from `key` into a, and each bucket sorts
/// in a through the front of b (so only the largest bucket's share of b is
/// touched on one task). As soon as a bucket is in place, `finish(s, e, k,
/// i)` runs on it: elements `s..e` of the keys at `k` and the indices at
/// `i` (null without `idx`) are final, and `finish` may read them and write
/// anything but a and b. `n` is at least [`MSD_MIN`] and keys are wider than
/// 8 bits.
#[allow(clippy::too_many_arguments)]
pub(crate) fn radix_sort_from<K, F, G>(
    key: F,
    keys: &mut [K],
    idx: Option<&mut [u32]>,
    tk: &mut [K],
    ti: &mut [u32],
    tasks: usize,
    finish: G,
) where
    K: RadixKey,
    F: Fn(usize) -> K + Sync,
    G: Fn(usize, usize, *mut K, *const u32) + Sync,
{
    let n = keys.len();
    let with_idx = idx.is_some();
    let ka = Shared(keys.as_mut_ptr());
    let ia = Shared(idx.map_or(core::ptr::null_mut(), |s| s.as_mut_ptr()));
    let kb = Shared(tk.as_mut_ptr());
    let ib = Shared(ti.as_mut_ptr());
    // SAFETY: a and b are distinct buffers of n elements; `key` reads none.
    unsafe {
        msd(
            n,
            key,
            None,
            true,
            Bufs { ka, ia, kb, ib },
            with_idx,
            tasks,
            finish,
        )
    };
}

/// Whether [`radix_sort_from`] takes `n` keys of type K.
pub(crate) fn takes_from<K: RadixKey>(n: usize) -> bool {
    n >= MSD_MIN && K::BITS > 8 && n <= u32::MAX as usize
}

/// The two buffers of a sort: keys and indices of a (where the result
/// ends) and of b (scratch).
#[derive(Clone, Copy)]
struct Bufs<K> {
    ka: Shared<K>,
    ia: Shared<u32>,
    kb: Shared<K>,
    ib: Shared<u32>,
}

/// Most buckets of the top pass.
const MAXB: usize = 256;

/// Bits of the prefix the top pass counts.
const PREFIX: u32 = 12;
/// The prefix's mask (after the shift to its position).
const PREFIX_MASK: usize = (1 << PREFIX) - 1;

/// Counts of the [`PREFIX`]-bit prefix at bit `pos` of keys `lo..hi`, with
/// the OR and AND of the keys.
#[inline(always)]
fn count_prefix<K: RadixKey, F: Fn(usize) -> K>(
    key: &F,
    pos: u32,
    lo: usize,
    hi: usize,
) -> (Vec<u32>, K, K) {
    let mut h = vec![0u32; 1 << PREFIX];
    let (mut or, mut and) = (K::default(), K::default().flip());
    for i in lo..hi {
        let k = key(i);
        or = or.or(k);
        and = and.and(k);
        // SAFETY: the prefix is masked below the table's length.
        unsafe { *h.get_unchecked_mut(k.low64(pos) as usize & PREFIX_MASK) += 1 };
    }
    (h, or, and)
}

/// Scatter keys `lo..hi` by their bucket to the slots `off` (advanced),
/// with their indices (from `src_idx`, else the position) where `with_idx`.
///
/// # Safety
/// Every slot `off` reaches for these keys is an element of the destination
/// buffers that no other caller writes meanwhile; `bucket_of` is below
/// `off.len()`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn scatter_top<K: RadixKey, F: Fn(usize) -> K, D: Fn(K) -> usize>(
    key: &F,
    src_idx: Option<Shared<u32>>,
    bucket_of: &D,
    lo: usize,
    hi: usize,
    off: &mut [u32],
    dk: Shared<K>,
    di: Shared<u32>,
    with_idx: bool,
) {
    if with_idx {
        for i in lo..hi {
            let k = key(i);
            // SAFETY: the bucket indexes `off`; the slot is the caller's.
            unsafe {
                let slot = off.get_unchecked_mut(bucket_of(k));
                let o = *slot as usize;
                *slot += 1;
                *dk.ptr().add(o) = k;
                *di.ptr().add(o) = match src_idx {
                    Some(p) => *p.ptr().add(i),
                    None => i as u32,
                };
            }
        }
    } else {
        for i in lo..hi {
            let k = key(i);
            // SAFETY: the bucket indexes `off`; the slot is the caller's
            // (its place in `dk` written by this task alone).
            unsafe {
                let slot = off.get_unchecked_mut(bucket_of(k));
                let o = *slot as usize;
                *slot += 1;
                *dk.ptr().add(o) = k;
            }
        }
    }
}

/// The top pass from `key` (and `src_idx`, or the position) into a (where
/// `into_a`) or b, then each bucket's lower digits through the other buffer
/// so that it ends in a, then `finish` on the bucket (see
/// [`radix_sort_from`]).
///
/// # Safety
/// a and b are distinct buffers of n elements (indices too, with
/// `with_idx`); `key` and `src_idx` read nothing the top pass writes, nor
/// anything written before the top pass is done.
#[allow(clippy::too_many_arguments)]
unsafe fn msd<K, F, G>(
    n: usize,
    key: F,
    src_idx: Option<Shared<u32>>,
    into_a: bool,
    bufs: Bufs<K>,
    with_idx: bool,
    tasks: usize,
    finish: G,
) where
    K: RadixKey,
    F: Fn(usize) -> K + Sync,
    G: Fn(usize, usize, *mut K, *const u32) + Sync,
{
    let Bufs { ka, ia, kb, ib } = bufs;
    // The top pass's destination, and the other buffer.
    let (k1, i1, k2, i2) = if into_a {
        (ka, ia, kb, ib)
    } else {
        (kb, ib, ka, ia)
    };
    let tasks = tasks.clamp(1, (n / CHUNK_MIN).max(1));
    let bounds: Vec<usize> = (0..=tasks).map(|t| n * t / tasks).collect();
    // Counts of the prefix below the highest bit in which keys differ, per
    // chunk: the top bits first, and again lower down where those are the
    // same for every key.
    let count = |pos: u32| -> Vec<(Vec<u32>, K, K)> {
        if tasks == 1 {
            vec![count_prefix(&key, pos, 0, n)]
        } else {
            (0..tasks)
                .into_par_iter()
                .with_max_len(1)
                .map(|t| count_prefix(&key, pos, bounds[t], bounds[t + 1]))
                .collect()
        }
    };
    let mut pos = K::BITS - PREFIX;
    let mut local = count(pos);
    let or = local.iter().fold(K::default(), |a, l| a.or(l.1));
    let and = local.iter().fold(K::default().flip(), |a, l| a.and(l.2));
    // The bits in which some keys differ: set in `or`, clear in `and`.
    let high = or.and(and.flip()).width();
    if high < pos + PREFIX {
        pos = high.saturating_sub(PREFIX);
        local = count(pos);
    }
    // Bits above the prefix are the same for every key (those of `and`).
    let fixed = and.above(pos + PREFIX);
    // Buckets: runs of consecutive prefixes holding about n/256 keys each
    // (a prefix more common than that alone), at most 256. Order is kept:
    // a lower bucket holds only lower keys.
    let target = n.div_ceil(MAXB).max(1);
    let mut table = vec![0u16; 1 << PREFIX];
    let mut first_prefix = vec![0u32; MAXB];
    let mut last_prefix = vec![0u32; MAXB];
    let mut nb = 0usize;
    let mut acc = 0usize;
    for (p, slot) in table.iter_mut().enumerate() {
        let c: usize = local.iter().map(|l| l.0[p] as usize).sum();
        if c == 0 {
            *slot = nb.min(MAXB - 1) as u16;
            continue;
        }
        if acc == 0 {
            first_prefix[nb] = p as u32;
        }
        *slot = nb as u16;
        last_prefix[nb] = p as u32;
        acc += c;
        if acc >= target && nb < MAXB - 1 {
            nb += 1;
            acc = 0;
        }
    }
    let buckets = if acc > 0 { nb + 1 } else { nb };
    let mut offs = vec![vec![0u32; MAXB]; tasks];
    let mut starts = vec![0usize; MAXB + 1];
    {
        let mut per = vec![vec![0u32; MAXB]; tasks];
        for (t, l) in local.iter().enumerate() {
            for p in 0..1usize << PREFIX {
                per[t][table[p] as usize] += l.0[p];
            }
        }
        let mut acc = 0u32;
        for d in 0..MAXB {
            starts[d] = acc as usize;
            for t in 0..tasks {
                offs[t][d] = acc;
                acc += per[t][d];
            }
        }
        starts[MAXB] = n;
    }
    drop(local);
    let bucket_of = |k: K| -> usize {
        // SAFETY: the prefix is masked below the table's length.
        unsafe { *table.get_unchecked(k.low64(pos) as usize & PREFIX_MASK) as usize }
    };
    if tasks == 1 {
        // SAFETY: the slots of one chunk are a permutation of 0..n.
        unsafe {
            scatter_top(
                &key,
                src_idx,
                &bucket_of,
                0,
                n,
                &mut offs[0],
                k1,
                i1,
                with_idx,
            )
        };
    } else {
        offs.into_par_iter()
            .enumerate()
            .with_max_len(1)
            .for_each(|(t, mut off)| {
                // SAFETY: chunk t writes the slots [offs[t][d], offs[t][d] +
                // its count of d) for each bucket d: disjoint from every
                // other chunk's, below n.
                unsafe {
                    scatter_top(
                        &key,
                        src_idx,
                        &bucket_of,
                        bounds[t],
                        bounds[t + 1],
                        &mut off,
                        k1,
                        i1,
                        with_idx,
                    )
                }
            });
    }
    // Each bucket: its keys less the bucket's least possible key (the fixed
    // high bits and its first prefix), sorted by their low bits through the
    // other buffer, ending in a. On one task every bucket borrows the front
    // of the other buffer (only the largest bucket's share of it is ever
    // touched); on several, its own range.
    let front = tasks == 1 && into_a;
    let bucket = |d: usize| {
        let (s, e) = (starts[d], starts[d + 1]);
        let base = fixed.or(K::from_u64_at(first_prefix[d] as u64, pos));
        let bits = pos + (last_prefix[d] - first_prefix[d]).width();
        let t = if front { 0 } else { s };
        // SAFETY: bucket d owns [s, e) of both buffers (the buckets
        // partition [0, n)); with `front`, one task runs the buckets one at
        // a time, so the front of the other buffer is this bucket's alone.
        unsafe {
            let at = |p: Shared<K>, o: usize| Shared(p.ptr().add(o));
            let ati =
                |p: Shared<u32>, o: usize| Shared(if with_idx { p.ptr().add(o) } else { p.ptr() });
            let in_second = lsd(
                at(k1, s),
                ati(i1, s),
                at(k2, t),
                ati(i2, t),
                0,
                e - s,
                base,
                &digits(bits),
                with_idx,
            );
            // Where the bucket ended, and whether that is a.
            let (ek, ei) = if in_second {
                (at(k2, t), ati(i2, t))
            } else {
                (at(k1, s), ati(i1, s))
            };
            if in_second == into_a {
                core::ptr::copy_nonoverlapping(ek.ptr(), ka.ptr().add(s), e - s);
                if with_idx {
                    core::ptr::copy_nonoverlapping(ei.ptr(), ia.ptr().add(s), e - s);
                }
            }
        }
        finish(s, e, ka.ptr(), ia.ptr());
    };
    if tasks == 1 {
        (0..buckets).for_each(bucket);
    } else {
        (0..buckets).into_par_iter().for_each(bucket);
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
    base: K,
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
        // SAFETY: lo ≤ i < hi: an element buffer a holds (this function's
        // contract).
        let k = unsafe { *ka.ptr().add(i) };
        for (h, &(l, m)) in hist.iter_mut().zip(&masks) {
            // SAFETY: the digit is masked below 2^w ≤ BUCKETS.
            unsafe { *h.get_unchecked_mut(k.minus(base).low64(l) as usize & m) += 1 };
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
                    let slot = off.get_unchecked_mut(k.minus(base).low64(l) as usize & m);
                    let o = *slot as usize;
                    *slot += 1;
                    *dk.ptr().add(o) = k;
                    *di.ptr().add(o) = *si.ptr().add(i);
                }
            } else {
                for i in lo..hi {
                    let k = *sk.ptr().add(i);
                    let slot = off.get_unchecked_mut(k.minus(base).low64(l) as usize & m);
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
