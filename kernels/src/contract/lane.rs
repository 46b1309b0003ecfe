//! Lane order (ARCHITECTURE.md §5.3) for the products of a contraction: the products of
//! one output, numbered by k, are cut into blocks of 1024; within a block,
//! product k goes to lane `k mod 16`, each lane adding its products in
//! increasing k by fused multiply-adds from +0; the lanes fold (i takes i+8,
//! then i+4, then i+2, then 0 takes 1); the blocks combine by a binary tree
//! whose left part holds the largest power of two of blocks strictly below
//! their count. Threads share the depth in whole blocks.
//!
//! A lane with no product holds +0, and no lane or partial sum is ever −0 (a
//! round-to-nearest sum is −0 only when both addends are), so folding it in
//! changes no bit: it takes no part, as the order states.

use super::acc::Acc;
use crate::reduce::lanes::{tree_of, tree_parallel};
use crate::Tier;

/// Products per block.
pub(crate) const BLOCK: usize = 1024;
/// Lanes per block.
pub(crate) const LANES: usize = 16;

/// The lane-order sum of `a[k]·b[k]` over one block (`a.len() ≤ 1024`).
#[inline(always)]
fn block_generic<T: Acc>(a: &[T], b: &[T]) -> T {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut l = [T::ZERO; LANES];
    let full = n / LANES * LANES;
    for (ca, cb) in a[..full]
        .chunks_exact(LANES)
        .zip(b[..full].chunks_exact(LANES))
    {
        for j in 0..LANES {
            l[j] = l[j].madd(ca[j], cb[j]);
        }
    }
    for j in full..n {
        l[j - full] = l[j - full].madd(a[j], b[j]);
    }
    for step in [8, 4, 2, 1] {
        for i in 0..step {
            l[i] = l[i].plus(l[i + step]);
        }
    }
    l[0]
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn block_avx2<T: Acc>(a: &[T], b: &[T]) -> T {
    block_generic(a, b)
}

/// One block's sum on `tier` (the same bits on every tier).
#[inline]
pub(crate) fn block_sum<T: Acc>(tier: Tier, a: &[T], b: &[T]) -> T {
    #[cfg(target_arch = "x86_64")]
    if crate::tier::runs_avx2(tier) {
        // SAFETY: the tier was checked against this CPU (`Exec::resolve_tier`),
        // and `runs_avx2` holds only for tiers that require AVX2 and FMA.
        return unsafe { block_avx2(a, b) };
    }
    let _ = tier;
    block_generic(a, b)
}

/// Combine block sums by the binary tree of lane order (the reduction
/// engine's tree; +0 for no block).
#[cfg(test)]
pub(crate) fn tree<T: Acc>(parts: &[T]) -> T {
    crate::reduce::lanes::tree(parts, &|p: T, q: T| p.plus(q)).unwrap_or(T::ZERO)
}

/// The lane-order sum of `a[k]·b[k]` over all k, the blocks shared by up to
/// `threads` threads (whole blocks each, nodes of the block tree; the bits
/// do not depend on it). The block sums combine as they are computed, in
/// O(log B) state ([`TreeFold`]).
pub(crate) fn dot<T: Acc>(tier: Tier, a: &[T], b: &[T], threads: usize) -> T {
    let n = a.len().min(b.len());
    let blocks = n.div_ceil(BLOCK);
    let op = |p: T, q: T| p.plus(q);
    // The tree of blocks b0 .. b0 + m (a node of the block tree).
    let node = |b0: usize, m: usize| -> T {
        let block = |i: usize| {
            let r = (b0 + i) * BLOCK..((b0 + i + 1) * BLOCK).min(n);
            block_sum(tier, &a[r.clone()], &b[r])
        };
        tree_of(m, T::ZERO, block, &op).unwrap_or(T::ZERO)
    };
    if threads <= 1 || blocks < 2 * threads.max(1) || n < 1 << 16 {
        return node(0, blocks);
    }
    let nodes = |list: &[(usize, usize)], vals: &mut [T]| {
        for (v, &(b0, m)) in vals.iter_mut().zip(list) {
            *v = node(b0, m);
        }
    };
    tree_parallel(blocks, threads, T::ZERO, &nodes, &op).unwrap_or(T::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_shape() {
        // Left part: the largest power of two strictly below the count.
        let v = [1.0f64, 1e100, -1e100, 1.0, 1.0];
        // (((1 + 1e100) + (-1e100 + 1)) + 1) = (1e100 - 1e100) + 1 = 1
        assert_eq!(tree(&v), 1.0);
        assert_eq!(tree(&[3.0f32]), 3.0);
        assert_eq!(tree::<f32>(&[]), 0.0);
    }
}
