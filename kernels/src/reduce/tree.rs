//! The block tree (ARCHITECTURE.md §5.3) by which the lane order combines
//! blocks, and the contraction and scan engines their block values: its
//! evaluation in place, as values arrive in O(log n) state, and split over
//! threads, all with the association (so the bits) of the recursive
//! definition.

/// The largest power of two strictly below `n` (n ≥ 2).
#[inline]
pub(crate) fn left_part(n: usize) -> usize {
    debug_assert!(n >= 2);
    1usize << (usize::BITS - 1 - (n - 1).leading_zeros())
}

/// Entries a [`TreeFold`] holds at most: ⌊log₂ n⌋ + 2 ≤ 65 for any `n`.
const TREE_DEPTH: usize = usize::BITS as usize + 2;

/// The block tree (ARCHITECTURE.md §5.3) of `n` values evaluated as they
/// arrive, left to right, in O(log n) state: the same association, so the
/// same bits, as the recursive evaluation over a vector of all `n` values.
///
/// The tree of `n` values is `op(tree(p), tree(n − p))`, `p` the largest
/// power of two strictly below `n`; unrolled, it is `op(P₁, op(P₂, … op(Pₘ₋₁,
/// Pₘ)))` over consecutive parts whose sizes are the successive left parts
/// of what remains (`p₁ = p`, then that of `n − p₁`, …, a last part of one
/// value), each part of 2^k values the complete pairwise tree. A part is
/// built as a binary counter (a value enters at height 0, two neighbours of
/// equal height combine into one a level up), which is exactly the complete
/// tree's association; a finished part stays on the stack until
/// [`TreeFold::finish`] folds the parts from the right. The parts' sizes are
/// distinct powers of two (but for the last two, of one each), so the stack
/// holds at most ⌊log₂ n⌋ + 2 entries.
pub(crate) struct TreeFold<V> {
    /// Values still to come in the current part.
    left: usize,
    /// Values after the current part.
    rest: usize,
    /// Finished parts at the bottom of the stack.
    parts: usize,
    /// Entries in use.
    len: usize,
    /// Finished parts, then the current part's complete subtrees with their
    /// heights, left to right.
    stack: [(u32, V); TREE_DEPTH],
}

impl<V: Copy> TreeFold<V> {
    /// The tree of `n` values (`fill` initialises unused entries; never read).
    pub(crate) fn new(n: usize, fill: V) -> Self {
        TreeFold {
            left: 0,
            rest: n,
            parts: 0,
            len: 0,
            stack: [(0, fill); TREE_DEPTH],
        }
    }

    /// The next value (at most `n` of them).
    #[inline]
    pub(crate) fn push(&mut self, v: V, op: &impl Fn(V, V) -> V) {
        if self.left == 0 {
            debug_assert!(self.rest > 0, "more values than the tree was made for");
            let size = match self.rest {
                0 | 1 => 1,
                r => left_part(r),
            };
            self.left = size;
            self.rest = self.rest.saturating_sub(size);
        }
        self.stack[self.len] = (0, v);
        self.len += 1;
        self.left -= 1;
        // Complete subtrees of one height inside the current part combine,
        // the earlier on the left.
        while self.len >= self.parts + 2 && self.stack[self.len - 1].0 == self.stack[self.len - 2].0
        {
            let (h, b) = self.stack[self.len - 1];
            let a = self.stack[self.len - 2].1;
            self.len -= 1;
            self.stack[self.len - 1] = (h + 1, op(a, b));
        }
        if self.left == 0 {
            self.parts = self.len;
        }
    }

    /// The tree's value once all `n` values have been pushed (None for `n` = 0).
    pub(crate) fn finish(self, op: &impl Fn(V, V) -> V) -> Option<V> {
        debug_assert!(self.left == 0 && self.rest == 0, "values missing");
        let (mut i, mut acc) = match self.len {
            0 => return None,
            n => (n - 1, self.stack[n - 1].1),
        };
        while i > 0 {
            i -= 1;
            acc = op(self.stack[i].1, acc);
        }
        Some(acc)
    }
}

/// The block tree of a buffer's values, the buffer its scratch: a part of
/// 2^k values is the complete pairwise tree, combined level by level in
/// place; only the right parts recurse (depth ⌈log₂ n⌉). For the engines'
/// small, fixed buffers of block values; [`TreeFold`] for longer runs.
pub(crate) fn tree_in_place<V: Copy>(v: &mut [V], op: &impl Fn(V, V) -> V) -> Option<V> {
    match v.len() {
        0 => None,
        1 => Some(v[0]),
        n => {
            let p = left_part(n);
            let (left, right) = v.split_at_mut(p);
            let mut len = p;
            while len > 1 {
                for i in 0..len / 2 {
                    left[i] = op(left[2 * i], left[2 * i + 1]);
                }
                len /= 2;
            }
            Some(op(left[0], tree_in_place(right, op)?))
        }
    }
}

/// Values a tree of which [`tree_of`] combines in a buffer on the stack.
const SMALL_TREE: usize = 32;

/// The block tree of `n` values, value `i` given by `value(i)` in order:
/// in place in a small buffer where they fit one (no state to set up),
/// else as they come ([`TreeFold`]). None for `n` = 0.
#[inline]
pub(crate) fn tree_of<V: Copy>(
    n: usize,
    fill: V,
    mut value: impl FnMut(usize) -> V,
    op: &impl Fn(V, V) -> V,
) -> Option<V> {
    if n <= SMALL_TREE {
        let mut buf = [fill; SMALL_TREE];
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = value(i);
        }
        return tree_in_place(&mut buf[..n], op);
    }
    let mut t = TreeFold::new(n, fill);
    for i in 0..n {
        t.push(value(i), op);
    }
    t.finish(op)
}

/// The block tree of the values of a slice, read once in order with
/// O(log n) state (no copy).
pub(crate) fn tree<V: Copy>(v: &[V], op: &impl Fn(V, V) -> V) -> Option<V> {
    tree_of(v.len(), *v.first()?, |i| v[i], op)
}

/// Most tasks a tree is split into for threads (bounds the split's state).
const MAX_TASKS: usize = 1024;

/// The nodes of the tree of `n` values from `lo` that hold at most `chunk`
/// values and whose parents hold more, left to right, as `(first, count)`:
/// each is the tree of its own count (the tree's recursion holds at every
/// node), so threads can evaluate them apart.
fn tree_nodes(lo: usize, n: usize, chunk: usize, out: &mut Vec<(usize, usize)>) {
    if n <= chunk.max(1) {
        out.push((lo, n));
        return;
    }
    let p = left_part(n);
    tree_nodes(lo, p, chunk, out);
    tree_nodes(lo + p, n - p, chunk, out);
}

/// Combine the values of [`tree_nodes`]`(0, n, chunk)`, in order, by the
/// tree above them.
fn tree_join<V: Copy>(
    n: usize,
    chunk: usize,
    vals: &mut impl Iterator<Item = V>,
    op: &impl Fn(V, V) -> V,
) -> Option<V> {
    if n <= chunk.max(1) {
        return vals.next();
    }
    let p = left_part(n);
    let a = tree_join(p, chunk, vals, op)?;
    let b = tree_join(n - p, chunk, vals, op)?;
    Some(op(a, b))
}

/// The block tree of `n` values on up to `threads` rayon tasks: the tree is
/// cut into nodes of at most ⌈n / threads⌉ values, `nodes(list, out)`
/// evaluates consecutive nodes (`(first, count)`, each the tree of its own
/// values, e.g. by a [`TreeFold`]) into `out`, one task per run of nodes, and
/// the nodes' values combine by the tree above them: the bits of the
/// sequential evaluation, with O(threads + log n) state. None for `n` = 0.
pub(crate) fn tree_parallel<V: Copy + Send + Sync>(
    n: usize,
    threads: usize,
    fill: V,
    nodes: &(impl Fn(&[(usize, usize)], &mut [V]) + Sync),
    op: &impl Fn(V, V) -> V,
) -> Option<V> {
    use rayon::prelude::*;
    if n == 0 {
        return None;
    }
    let threads = threads.clamp(1, MAX_TASKS);
    let chunk = n.div_ceil(threads);
    let mut list = Vec::new();
    tree_nodes(0, n, chunk, &mut list);
    let mut vals = vec![fill; list.len()];
    let per = list.len().div_ceil(threads);
    if per >= list.len() {
        nodes(&list, &mut vals);
    } else {
        vals.par_chunks_mut(per)
            .zip(list.par_chunks(per))
            .for_each(|(v, l)| nodes(l, v));
    }
    tree_join(n, chunk, &mut vals.into_iter(), op)
}

#[cfg(test)]
mod tests {
    use super::{left_part, tree_parallel, TreeFold};

    /// The block tree by its definition (recursion over a slice).
    fn model(v: &[f64]) -> f64 {
        match v.len() {
            1 => v[0],
            n => {
                let p = left_part(n);
                model(&v[..p]) + model(&v[p..])
            }
        }
    }

    /// Values of spread magnitudes (a fixed LCG; no association of their
    /// sum gives the bits of another, almost surely).
    fn values(n: usize) -> Vec<f64> {
        let mut z = 0x2545_f491_4f6c_dd1du64;
        (0..n)
            .map(|_| {
                z = z
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let m = 1.0 + (z >> 11) as f64 / (1u64 << 53) as f64;
                let e = ((z >> 3) % 40) as i32 - 20;
                if z & 1 == 1 {
                    -m * 2f64.powi(e)
                } else {
                    m * 2f64.powi(e)
                }
            })
            .collect()
    }

    fn fold(v: &[f64]) -> (f64, usize) {
        let add = |a: f64, b: f64| a + b;
        let mut t = TreeFold::new(v.len(), 0.0);
        let mut most = 0;
        for &x in v {
            t.push(x, &add);
            most = most.max(t.len);
        }
        (t.finish(&add).expect("values"), most)
    }

    #[test]
    fn the_fold_and_its_parallel_split_follow_the_definition() {
        let v = values(2100);
        let add = |a: f64, b: f64| a + b;
        for n in 1..=v.len() {
            let want = model(&v[..n]).to_bits();
            let (got, most) = fold(&v[..n]);
            assert_eq!(got.to_bits(), want, "{n} values");
            // One entry per level (and one more for the last part of one).
            assert!(most <= n.ilog2() as usize + 2, "{n} values held {most}");
            for threads in [2, 3, 4, 7, 16] {
                let nodes = |list: &[(usize, usize)], out: &mut [f64]| {
                    for (o, &(lo, m)) in out.iter_mut().zip(list) {
                        *o = fold(&v[lo..lo + m]).0;
                    }
                };
                let got = tree_parallel(n, threads, 0.0, &nodes, &add).expect("values");
                assert_eq!(got.to_bits(), want, "{n} values on {threads} threads");
            }
        }
    }

    #[test]
    fn the_state_is_logarithmic_for_long_trees() {
        // Counts around powers of two up to 2^21 (pushing zeros: only the
        // stack's depth is measured).
        for k in [10u32, 15, 20, 21] {
            for n in [(1usize << k) - 1, 1 << k, (1 << k) + 1, (3 << k) / 2] {
                let mut t = TreeFold::new(n, 0u8);
                let mut most = 0;
                for _ in 0..n {
                    t.push(0, &|a, _| a);
                    most = most.max(t.len);
                }
                assert!(t.finish(&|a, _| a).is_some());
                assert!(most <= n.ilog2() as usize + 2, "{n}: {most}");
            }
        }
    }
}
