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

use super::acc::{Acc, Src};
use super::pack;
use crate::reduce::tree::{tree_of, tree_parallel};
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

/// [`block_generic`] compiled with AVX2 and FMA enabled (the compiler's
/// vectorisation of the same lane loop: the same operations, so the same
/// bits).
///
/// # Safety
/// The CPU runs AVX2 and FMA.
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
    crate::reduce::tree::tree(parts, &|p: T, q: T| p.plus(q)).unwrap_or(T::ZERO)
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

/// The elements at `base + ks[q]` for each q: the operand's own memory where
/// they are consecutive and aligned, else a gathered copy.
///
/// # Safety
/// Every position is inside the operand's validated view of dtype `T`.
pub(super) unsafe fn sequence<'a, T: Acc>(
    src: Src<'a>,
    base: isize,
    ks: &[isize],
    unit: bool,
) -> std::borrow::Cow<'a, [T]> {
    if let (true, Some(&k0)) = (unit, ks.first()) {
        // SAFETY: `base + k0` is a position of the view, of dtype T (this
        // function's contract).
        let p = unsafe { src.ptr::<T>(base + k0) };
        if (p as usize).is_multiple_of(align_of::<T>()) {
            // SAFETY: `ks.len()` consecutive elements of the view, aligned,
            // borrowed for as long as the operand's bytes; every bit pattern
            // is a valid T.
            return std::borrow::Cow::Borrowed(unsafe { std::slice::from_raw_parts(p, ks.len()) });
        }
    }
    // SAFETY: every `base + ko` is a position of the view, of dtype T (this
    // function's contract).
    std::borrow::Cow::Owned(
        ks.iter()
            .map(|&ko| unsafe { src.get::<T>(base + ko) })
            .collect(),
    )
}

/// Lane order for one batch element: each output is the lane-order dot of its
/// row of a and column of b (the operands' own memory where consecutive, else
/// gathered copies), then plus its init (already in `tile`).
///
/// # Safety
/// Every position the tables reach from the bases (`a_base + row + k`,
/// `b_base + k + col`) is inside the operands' validated views, of dtype
/// `T`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn lane_tile<T: Acc>(
    tier: Tier,
    sa: Src<'_>,
    a_base: isize,
    a_rows: &[isize],
    a_ks: &[isize],
    sb: Src<'_>,
    b_base: isize,
    b_ks: &[isize],
    b_cols: &[isize],
    tile: &mut [T],
    threads: usize,
) {
    let k = a_ks.len();
    let c = b_cols.len();
    let (a_unit, b_unit) = (pack::unit(a_ks), pack::unit(b_ks));
    // SAFETY: `a_base + ro + k` for each k of `a_ks` is a position of a,
    // of dtype T (this function's contract).
    let rows: Vec<std::borrow::Cow<'_, [T]>> = a_rows
        .iter()
        .map(|&ro| unsafe { sequence(sa, a_base + ro, a_ks, a_unit) })
        .collect();
    let cols: Vec<std::borrow::Cow<'_, [T]>> = b_cols
        .iter()
        // SAFETY: `b_base + co + k` for each k of `b_ks` is a position of b,
        // of dtype T (this function's contract).
        .map(|&co| unsafe { sequence(sb, b_base + co, b_ks, b_unit) })
        .collect();
    let outputs = tile.len();
    let work = outputs as u128 * k as u128;
    let one = |o: usize, threads: usize| -> T {
        let (i, j) = (o / c, o % c);
        dot(tier, &rows[i], &cols[j], threads)
    };
    if threads <= 1 || work < 1 << 18 {
        for (o, v) in tile.iter_mut().enumerate() {
            *v = one(o, 1).plus(*v);
        }
    } else if outputs >= threads * 4 {
        // Many outputs: threads take whole outputs.
        use rayon::prelude::*;
        let per = outputs.div_ceil(threads);
        tile.par_chunks_mut(per).enumerate().for_each(|(ch, vs)| {
            for (i, v) in vs.iter_mut().enumerate() {
                *v = one(ch * per + i, 1).plus(*v);
            }
        });
    } else {
        // Few outputs, long depth: threads share each output's blocks.
        for (o, v) in tile.iter_mut().enumerate() {
            *v = one(o, threads).plus(*v);
        }
    }
}

/// One block of the depth of one row (or column): the values at `base +
/// ks[q]`, read in place where they are consecutive and aligned, else
/// gathered into `buf`.
///
/// # Safety
/// Every position `base + ks[q]` is inside the operand's validated view of
/// dtype `T`.
#[inline]
pub(super) unsafe fn depth_block<'s, T: Acc>(
    src: Src<'s>,
    base: isize,
    ks: &[isize],
    unit: bool,
    buf: &'s mut [T; BLOCK],
) -> &'s [T] {
    let len = ks.len();
    if let (true, Some(&k0)) = (unit, ks.first()) {
        // SAFETY: `base + k0` is a position of the view, of dtype T (this
        // function's contract).
        let p = unsafe { src.ptr::<T>(base + k0) };
        if (p as usize).is_multiple_of(align_of::<T>()) {
            // SAFETY: `len` consecutive elements of the view, aligned; every
            // bit pattern is a valid T.
            return unsafe { std::slice::from_raw_parts(p, len) };
        }
    }
    for (v, &ko) in buf[..len].iter_mut().zip(ks) {
        // SAFETY: `base + ko` is a position of the view, of dtype T (this
        // function's contract).
        *v = unsafe { src.get(base + ko) };
    }
    &buf[..len]
}

/// How lane order sums one output's products: the value of a block of
/// products, and the join of two values (left, right) that the block tree,
/// and then the init, use.
pub(super) trait LaneSum: Sync {
    /// The operands' element (the accumulator's, or its part's).
    type T: Acc + Send + Sync;
    /// A block's (and a node's, and an output's) value.
    type V: Copy + Send + Sync;
    /// The value of no block.
    fn zero(&self) -> Self::V;
    /// The lane-order value of one block of products `x[k]·y[k]`.
    fn block(&self, x: &[Self::T], y: &[Self::T]) -> Self::V;
    /// Two values joined, left then right.
    fn join(&self, l: Self::V, r: Self::V) -> Self::V;
}

/// Plain lane order: each lane's fused multiply-adds, the fold and the tree
/// by additions ([`block_sum`]).
pub(super) struct Fused<T>(pub(super) Tier, pub(super) core::marker::PhantomData<T>);

impl<T: Acc + Send + Sync> LaneSum for Fused<T> {
    type T = T;
    type V = T;
    fn zero(&self) -> T {
        T::ZERO
    }
    fn block(&self, x: &[T], y: &[T]) -> T {
        block_sum(self.0, x, y)
    }
    fn join(&self, l: T, r: T) -> T {
        l.plus(r)
    }
}

/// [`lane_tile`] for many long rows and columns: each output's row and
/// column are read block by block (in place where consecutive, else
/// gathered into a block's buffer) and the block values combine by the block
/// tree as they come, so the scratch is a few blocks per thread. The same
/// blocks, so the same bits. Each output of `tile` holds its init on entry
/// and becomes `join(sum, init)`.
///
/// # Safety
/// Every position the tables reach from the bases (`a_base + row + k`,
/// `b_base + k + col`) is inside the operands' validated views, of dtype
/// `L::T`.
pub(super) unsafe fn lane_tile_streamed<L: LaneSum>(
    sum: &L,
    (sa, a_base, a_rows, a_ks): (Src<'_>, isize, &[isize], &[isize]),
    (sb, b_base, b_cols, b_ks): (Src<'_>, isize, &[isize], &[isize]),
    tile: &mut [L::V],
    threads: usize,
) {
    use crate::reduce::tree::{tree_of, tree_parallel};
    let k = a_ks.len();
    let c = b_cols.len();
    let (a_unit, b_unit) = (pack::unit(a_ks), pack::unit(b_ks));
    let blocks = k.div_ceil(BLOCK);
    let op = |p: L::V, q: L::V| sum.join(p, q);
    let zero = <L::T as super::acc::Bits>::ZERO;
    let bufs = || ([zero; BLOCK], [zero; BLOCK]);
    type Bufs<T> = ([T; BLOCK], [T; BLOCK]);
    // Blocks q0 .. q0 + m of output o, by the tree of their own count.
    let node = |o: usize, q0: usize, m: usize, (ba, bb): &mut Bufs<L::T>| -> L::V {
        let (pa, pb) = (a_base + a_rows[o / c], b_base + b_cols[o % c]);
        let block = |i: usize| {
            let r = (q0 + i) * BLOCK..((q0 + i + 1) * BLOCK).min(k);
            // SAFETY: the block's ks are a range of the tables, so every
            // `pa + k` and `pb + k` is a position of a and b, of dtype L::T
            // (this function's contract).
            let (x, y) = unsafe {
                (
                    depth_block(sa, pa, &a_ks[r.clone()], a_unit, ba),
                    depth_block(sb, pb, &b_ks[r], b_unit, bb),
                )
            };
            sum.block(x, y)
        };
        tree_of(m, sum.zero(), block, &op).unwrap_or(sum.zero())
    };
    let outputs = tile.len();
    let work = outputs as u128 * k as u128;
    if threads <= 1 || work < 1 << 18 {
        let mut w = bufs();
        for (o, v) in tile.iter_mut().enumerate() {
            *v = op(node(o, 0, blocks, &mut w), *v);
        }
    } else if outputs >= threads * 4 {
        // Many outputs: threads take whole outputs.
        use rayon::prelude::*;
        let per = outputs.div_ceil(threads);
        tile.par_chunks_mut(per).enumerate().for_each(|(ch, vs)| {
            let mut w = bufs();
            for (i, v) in vs.iter_mut().enumerate() {
                *v = op(node(ch * per + i, 0, blocks, &mut w), *v);
            }
        });
    } else {
        // Few outputs, long depth: threads share each output's blocks (nodes
        // of its block tree).
        for (o, v) in tile.iter_mut().enumerate() {
            let nodes = |list: &[(usize, usize)], vals: &mut [L::V]| {
                let mut w = bufs();
                for (val, &(q0, m)) in vals.iter_mut().zip(list) {
                    *val = node(o, q0, m, &mut w);
                }
            };
            let total =
                tree_parallel(blocks, threads, sum.zero(), &nodes, &op).unwrap_or(sum.zero());
            *v = op(total, *v);
        }
    }
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
