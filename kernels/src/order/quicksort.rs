//! The vector quicksort of keys alone (u32 and u64), for the AVX-512 tier.
//!
//! Where a sort returns values only and the keys map back to the values'
//! bits, equal keys are equal elements: the sorted keys are one sequence
//! whatever algorithm sorts them, so an unstable sort gives the stable
//! sort's bits. This one partitions in place with [`KeyReg::split_store`]
//! (each register's keys below the pivot packed to the left end of the free
//! space, the others to the right end; [`GROUP`] registers of keys from
//! each end held back so the two gaps never close on unread keys), the
//! pivot the median of a sample at even spacing (4·LANES keys from 4096 keys
//! on, LANES below), sorted by the network below.
//! Ranges of at most 16 registers of keys sort in registers: each register
//! by a bitonic network, then runs of registers merged by bitonic merges
//! (padding lanes hold the largest key and are never stored). A partition
//! that finds no key below the pivot (the pivot is the least key) splits
//! off the keys equal to it, so every step shrinks the range; past a depth
//! of 2·log₂n + 8 a range sorts by radix (`radix.rs`) instead, so no input
//! costs more than O(n log n). With several tasks the two sides of a large
//! partition sort in parallel; the keys end the same.

use super::key::RadixKey;
use super::radix::{radix_sort, Shared};
use crate::simd::KeyReg;

/// Most registers a range sorts in by the network.
const NETWORK_REGS: usize = 16;
/// From this many keys the two sides of a partition may go to two tasks.
const SPLIT_MIN: usize = 1 << 16;

/// The lanes that take the larger key in step `(k, j)` of a bitonic sort of
/// `lanes` lanes: lane `i` pairs with `i ^ j` and, in blocks of `k` lanes,
/// ascends where `i & k` is 0 and descends elsewhere.
const fn high_lanes(lanes: usize, j: usize, k: usize) -> u32 {
    let mut m = 0u32;
    let mut i = 0;
    while i < lanes {
        if ((i & j) != 0) != ((i & k) != 0) {
            m |= 1 << i;
        }
        i += 1;
    }
    m
}

/// Step `(K, J)` of a bitonic network within a register (see
/// [`high_lanes`]).
///
/// # Safety
/// [`KeyReg`]'s feature contract.
#[inline(always)]
unsafe fn step<R: KeyReg, const J: usize, const K: usize>(v: R) -> R {
    let m = const { high_lanes(R::LANES, J, K) };
    // SAFETY: the caller's feature contract.
    unsafe {
        let p = v.swap_xor(J);
        R::blend(m, R::min(v, p), R::max(v, p))
    }
}

/// One register's keys sorted ascending (a bitonic network).
///
/// # Safety
/// [`KeyReg`]'s feature contract.
#[inline(always)]
unsafe fn sort_reg<R: KeyReg>(mut v: R) -> R {
    // SAFETY: the caller's feature contract.
    unsafe {
        v = step::<R, 1, 2>(v);
        v = step::<R, 2, 4>(v);
        v = step::<R, 1, 4>(v);
        v = step::<R, 4, 8>(v);
        v = step::<R, 2, 8>(v);
        v = step::<R, 1, 8>(v);
        if R::LANES == 16 {
            v = step::<R, 8, 16>(v);
            v = step::<R, 4, 16>(v);
            v = step::<R, 2, 16>(v);
            v = step::<R, 1, 16>(v);
        }
    }
    v
}

/// A bitonic register sorted ascending (the half-cleaners within it).
///
/// # Safety
/// [`KeyReg`]'s feature contract.
#[inline(always)]
unsafe fn clean_reg<R: KeyReg>(mut v: R) -> R {
    // SAFETY: the caller's feature contract.
    unsafe {
        if R::LANES == 16 {
            v = step::<R, 8, 32>(v);
        }
        v = step::<R, 4, 32>(v);
        v = step::<R, 2, 32>(v);
        v = step::<R, 1, 32>(v);
    }
    v
}

/// Merge runs of `W` sorted registers pairwise into runs of `2W`.
///
/// # Safety
/// [`KeyReg`]'s feature contract.
#[inline(always)]
unsafe fn merge_runs<R: KeyReg, const N: usize, const W: usize>(r: &mut [R; N]) {
    let mut a = 0;
    while a < N {
        // SAFETY: the caller's feature contract (this whole block).
        unsafe {
            // The first run against the second reversed: the smaller keys
            // (a bitonic run) to the first, the larger to the second.
            let mut hi = [r[a]; W];
            for i in 0..W {
                let x = r[a + i];
                let y = r[a + 2 * W - 1 - i].reverse();
                r[a + i] = R::min(x, y);
                hi[i] = R::max(x, y);
            }
            r[a + W..a + 2 * W].copy_from_slice(&hi);
            // Each bitonic run cleaned: across registers, then within.
            for run in [a, a + W] {
                let mut d = W / 2;
                while d >= 1 {
                    for i in 0..W {
                        if i & d == 0 {
                            let (x, y) = (r[run + i], r[run + i + d]);
                            r[run + i] = R::min(x, y);
                            r[run + i + d] = R::max(x, y);
                        }
                    }
                    d /= 2;
                }
                for i in 0..W {
                    r[run + i] = clean_reg(r[run + i]);
                }
            }
        }
        a += 2 * W;
    }
}

/// `N` registers (a power of two, at most 16) sorted ascending as one
/// sequence of `N·LANES` keys, register 0 first.
///
/// # Safety
/// [`KeyReg`]'s feature contract.
#[inline(always)]
unsafe fn sort_regs<R: KeyReg, const N: usize>(r: &mut [R; N]) {
    // SAFETY: the caller's feature contract.
    unsafe {
        for x in r.iter_mut() {
            *x = sort_reg(*x);
        }
        if N >= 2 {
            merge_runs::<R, N, 1>(r);
        }
        if N >= 4 {
            merge_runs::<R, N, 2>(r);
        }
        if N >= 8 {
            merge_runs::<R, N, 4>(r);
        }
        if N >= 16 {
            merge_runs::<R, N, 8>(r);
        }
    }
}

/// Sort the `n ≤ N·LANES` keys from `p` in `N` registers.
///
/// # Safety
/// [`KeyReg`]'s feature contract; the `n` keys from `p` are this caller's.
#[inline(always)]
unsafe fn sort_in_regs<R: KeyReg, const N: usize>(p: *mut R::K, n: usize) {
    // SAFETY: the caller's feature contract; lane loads and stores touch
    // only the first n keys from p (this whole block).
    unsafe {
        let mut r = [R::set1(R::MAX); N];
        for (i, x) in r.iter_mut().enumerate() {
            let s = i * R::LANES;
            if s < n {
                *x = R::load_first(p.add(s), (n - s).min(R::LANES));
            }
        }
        sort_regs(&mut r);
        for (i, x) in r.iter().enumerate() {
            let s = i * R::LANES;
            if s < n {
                x.store_first(p.add(s), (n - s).min(R::LANES));
            }
        }
    }
}

/// Sort `n ≤ NETWORK_REGS·LANES` keys from `p` by the network.
///
/// # Safety
/// As [`sort_in_regs`].
#[inline(always)]
unsafe fn sort_small<R: KeyReg>(p: *mut R::K, n: usize) {
    // SAFETY: the caller's contract; n fits the register count chosen.
    unsafe {
        match n.div_ceil(R::LANES) {
            0 => {}
            1 => sort_in_regs::<R, 1>(p, n),
            2 => sort_in_regs::<R, 2>(p, n),
            3 | 4 => sort_in_regs::<R, 4>(p, n),
            5..=8 => sort_in_regs::<R, 8>(p, n),
            _ => sort_in_regs::<R, NETWORK_REGS>(p, n),
        }
    }
}

/// The median of a sample of the `n ≥ 4·LANES` keys from `p` at even
/// spacing: 4·LANES keys from 4096 keys on, one register's worth below.
///
/// # Safety
/// [`KeyReg`]'s feature contract; the `n` keys from `p` are readable.
#[inline(always)]
unsafe fn pivot<R: KeyReg>(p: *const R::K, n: usize) -> R::K
where
    R::K: RadixKey,
{
    let regs = if n >= 4096 { 4 } else { 1 };
    let count = regs * R::LANES;
    let step = n / count;
    let mut sample = [R::K::default(); 4 * 16];
    for (i, s) in sample[..count].iter_mut().enumerate() {
        // SAFETY: i·step + step/2 < count·step ≤ n.
        *s = unsafe { *p.add(i * step + step / 2) };
    }
    // SAFETY: the caller's feature contract; the sample holds `count` keys.
    unsafe {
        if regs == 1 {
            return sort_reg(R::load(sample.as_ptr())).lane(R::LANES / 2);
        }
        let mut r = [R::set1(R::MAX); 4];
        for (i, x) in r.iter_mut().enumerate() {
            *x = R::load(sample.as_ptr().add(i * R::LANES));
        }
        sort_regs(&mut r);
        r[2].lane(0)
    }
}

/// Registers a partition loads from one end at a time (one branch on the
/// side per group).
const GROUP: usize = 8;

/// Partition the `n > 2·GROUP·LANES` keys from `a` about `pivot`: the keys
/// below it first, then the others. Returns how many are below it.
///
/// # Safety
/// [`KeyReg`]'s feature contract; the `n` keys from `a` are this caller's.
#[inline(always)]
unsafe fn partition<R: KeyReg>(a: *mut R::K, n: usize, pivot: R::K) -> usize {
    let l = R::LANES;
    let (mut left, mut right) = (0, n);
    // SAFETY: every index in this block stays in 0..n. The n mod LANES
    // keys at the start are held back in a register; then [left, right) is
    // a multiple of LANES of at least 2·GROUP registers; GROUP registers
    // held back from each end leave gaps of GROUP·LANES keys at both ends
    // (the front one with the first n mod LANES keys besides), and keys
    // loaded from the end with the smaller gap leave each gap at least as
    // large as what is loaded, so the stores (at most the loaded count on each side) never
    // reach a key not yet read. At the end the two gaps meet and take the
    // held-back keys exactly.
    unsafe {
        let pv = R::set1(pivot);
        // The keys past the last whole register from the start, held back
        // in a register of their own.
        let part = n % l;
        let head = R::load_first(a, part);
        left += part;
        let mut held = [pv; 2 * GROUP];
        for g in 0..GROUP {
            held[g] = R::load(a.add(left + g * l));
            held[GROUP + g] = R::load(a.add(right - (g + 1) * l));
        }
        let (mut lo, mut hi) = (0, right);
        left += GROUP * l;
        right -= GROUP * l;
        while right - left >= GROUP * l {
            let from = if hi - right < left - lo {
                right -= GROUP * l;
                right
            } else {
                left += GROUP * l;
                left - GROUP * l
            };
            let mut cur = [pv; GROUP];
            for (g, c) in cur.iter_mut().enumerate() {
                *c = R::load(a.add(from + g * l));
            }
            // The next group on this side on its way into the cache.
            let ahead = if from == right {
                from.wrapping_sub(GROUP * l)
            } else {
                from + 2 * GROUP * l
            };
            for g in 0..GROUP * core::mem::size_of::<R::K>() * l / 64 {
                crate::simd::prefetch_read(
                    (a as *const u8).wrapping_add(ahead * core::mem::size_of::<R::K>() + 64 * g),
                );
            }
            for c in cur {
                let above = c.split_store(pv, l, a.add(lo), a.add(hi));
                lo += l - above;
                hi -= above;
            }
        }
        while left < right {
            let cur = if hi - right < left - lo {
                right -= l;
                R::load(a.add(right))
            } else {
                left += l;
                R::load(a.add(left - l))
            };
            let above = cur.split_store(pv, l, a.add(lo), a.add(hi));
            lo += l - above;
            hi -= above;
        }
        for c in held {
            let above = c.split_store(pv, l, a.add(lo), a.add(hi));
            lo += l - above;
            hi -= above;
        }
        let above = head.split_store(pv, part, a.add(lo), a.add(hi));
        lo += part - above;
        lo
    }
}

/// Sort the `n` keys from `a` ascending, with `scratch` (n keys) for the
/// radix fallback, `depth` partitions left before it, `tasks` tasks.
///
/// # Safety
/// The CPU runs the features below ([`KeyReg`]'s feature contract); the `n`
/// keys from `a` and from `scratch` are this caller's alone.
#[target_feature(enable = "avx512f,avx2,popcnt")]
unsafe fn quicksort<R: KeyReg>(
    a: Shared<R::K>,
    n: usize,
    scratch: Shared<R::K>,
    depth: u32,
    tasks: usize,
) where
    R::K: RadixKey,
{
    let (mut a, mut n, mut scratch) = (a, n, scratch);
    loop {
        if n <= NETWORK_REGS * R::LANES {
            // SAFETY: the caller's contract.
            unsafe { sort_small::<R>(a.ptr(), n) };
            return;
        }
        if depth == 0 {
            // SAFETY: the caller's: both ranges are this caller's alone.
            let (k, t) = unsafe {
                (
                    core::slice::from_raw_parts_mut(a.ptr(), n),
                    core::slice::from_raw_parts_mut(scratch.ptr(), n),
                )
            };
            radix_sort(k, None, t, &mut [], 1);
            return;
        }
        // SAFETY: the caller's contract; n > 16·LANES keys.
        let p = unsafe { pivot::<R>(a.ptr(), n) };
        // SAFETY: as above.
        let b = unsafe { partition::<R>(a.ptr(), n, p) };
        if b == 0 {
            // The pivot is the least key: the keys equal to it go first,
            // and are in place.
            if p == R::MAX {
                return;
            }
            let next = p.minus(R::MAX);
            // SAFETY: as above.
            let e = unsafe { partition::<R>(a.ptr(), n, next) };
            // SAFETY: e ≤ n keys into both buffers.
            (a, scratch) = unsafe { (Shared(a.ptr().add(e)), Shared(scratch.ptr().add(e))) };
            n -= e;
            continue;
        }
        // SAFETY: b < n (the pivot is one of the keys, not below itself).
        let (ra, rs) = unsafe { (Shared(a.ptr().add(b)), Shared(scratch.ptr().add(b))) };
        if tasks > 1 && n >= SPLIT_MIN {
            let lt = (tasks * b / n).clamp(1, tasks - 1);
            rayon::join(
                // SAFETY: the two sides are disjoint ranges of both buffers;
                // the features run (the caller's contract).
                || unsafe { quicksort::<R>(a, b, scratch, depth - 1, lt) },
                // SAFETY: as for the left side.
                || unsafe { quicksort::<R>(ra, n - b, rs, depth - 1, tasks - lt) },
            );
            return;
        }
        // The smaller side first by recursion, the larger by the loop (a
        // stack of at most log₂n frames).
        if b <= n - b {
            // SAFETY: the left side, disjoint from the right.
            unsafe { quicksort::<R>(a, b, scratch, depth - 1, 1) };
            (a, scratch, n) = (ra, rs, n - b);
        } else {
            // SAFETY: the right side, disjoint from the left.
            unsafe { quicksort::<R>(ra, n - b, rs, depth - 1, 1) };
            n = b;
        }
    }
}

/// The depth past which a range of `n` keys sorts by radix.
fn depth_limit(n: usize) -> u32 {
    2 * (usize::BITS - n.leading_zeros()) + 8
}

/// Sort `keys` ascending with the AVX-512 quicksort on registers `R`,
/// `scratch` (as many keys) for the radix fallback, on at most `tasks`
/// tasks. The result is the sorted sequence of the keys, whatever the
/// number of tasks.
///
/// # Safety
/// The CPU runs AVX-512 F, AVX2 and POPCNT (a tier for which
/// [`crate::tier::runs_avx512`] holds).
#[target_feature(enable = "avx512f,avx2,popcnt")]
unsafe fn sort_on<R: KeyReg>(keys: &mut [R::K], scratch: &mut [R::K], tasks: usize)
where
    R::K: RadixKey,
{
    assert!(scratch.len() >= keys.len());
    let n = keys.len();
    // SAFETY: the features run (this function's contract); both buffers are
    // borrowed mutably here, n keys each.
    unsafe {
        quicksort::<R>(
            Shared(keys.as_mut_ptr()),
            n,
            Shared(scratch.as_mut_ptr()),
            depth_limit(n),
            tasks,
        )
    }
}

/// Sort `keys` (u32 or u64; others are left alone) with the AVX-512
/// quicksort ([`sort_on`] with 16 u32 or 8 u64 lanes).
///
/// # Safety
/// As [`sort_on`].
pub(crate) unsafe fn sort_keys_avx512<K: RadixKey>(
    keys: &mut [K],
    scratch: &mut [K],
    tasks: usize,
) {
    use crate::simd::{Keys32x16, Keys64x8};
    use core::any::TypeId;
    let (k, s) = (keys as *mut [K], scratch as *mut [K]);
    if TypeId::of::<K>() == TypeId::of::<u32>() {
        // SAFETY: K is u32 (the same type); the features run (the
        // caller's contract).
        unsafe { sort_on::<Keys32x16>(&mut *(k as *mut [u32]), &mut *(s as *mut [u32]), tasks) }
    } else if TypeId::of::<K>() == TypeId::of::<u64>() {
        // SAFETY: K is u64 (the same type); the features run.
        unsafe { sort_on::<Keys64x8>(&mut *(k as *mut [u64]), &mut *(s as *mut [u64]), tasks) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tier::runs_avx512;
    use crate::Tier;

    /// The quicksort with its depth limit forced low (the radix fallback
    /// at every depth from the top down) and with several tasks, against
    /// the standard sort.
    #[test]
    fn radix_fallback_and_tasks_give_the_sorted_keys() {
        if !Tier::Avx512.available() || !runs_avx512(Tier::Avx512) {
            eprintln!("skipped: this CPU does not run the avx512 tier");
            return;
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in [257usize, 1000, 5000, 70_000, 200_000] {
            let keys32: Vec<u32> = (0..n)
                .map(|i| (next() % (1 + i as u64 % 5000)) as u32)
                .collect();
            let keys64: Vec<u64> = (0..n).map(|_| next() >> (next() % 64)).collect();
            let mut want32 = keys32.clone();
            want32.sort_unstable();
            let mut want64 = keys64.clone();
            want64.sort_unstable();
            for depth in [0, 1, 2, 5] {
                for tasks in [1, 3] {
                    let mut k = keys32.clone();
                    let mut s = vec![0u32; n];
                    // SAFETY: the avx512 tier runs (checked above); both
                    // buffers hold n keys.
                    unsafe {
                        quicksort::<crate::simd::Keys32x16>(
                            Shared(k.as_mut_ptr()),
                            n,
                            Shared(s.as_mut_ptr()),
                            depth,
                            tasks,
                        )
                    };
                    assert!(k == want32, "u32, n {n}, depth {depth}, tasks {tasks}");
                    let mut k = keys64.clone();
                    let mut s = vec![0u64; n];
                    // SAFETY: as above.
                    unsafe {
                        quicksort::<crate::simd::Keys64x8>(
                            Shared(k.as_mut_ptr()),
                            n,
                            Shared(s.as_mut_ptr()),
                            depth,
                            tasks,
                        )
                    };
                    assert!(k == want64, "u64, n {n}, depth {depth}, tasks {tasks}");
                }
            }
        }
    }
}
