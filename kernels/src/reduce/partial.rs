//! Partial states of reductions over ranges of term numbers (ARCHITECTURE.md
//! §5.3, "Partial states"): the lane order is a function of the term
//! numbering alone, so a reduction cut into contiguous ranges of numbers,
//! each reduced apart (another thread, process or machine), gives exactly the
//! single call's bits when only the ranges' *states* are combined.
//!
//! The state of a range `s..e` of the `n` terms of every output holds, per
//! output, in a canonical form that is a function of `(s, e, n)` and the
//! terms alone:
//!
//! * the **head**: where `s` is not a multiple of the block (1024), the terms
//!   from `s` to the end of its block (or to `e`, or `n`), mapped as the
//!   reduction maps them (at most 1023 values): a lane adds its terms in
//!   sequence, so the lanes of a block cut by `s` cannot be formed here;
//! * the **nodes**: the values of the largest nodes of the block tree of
//!   all `⌈n/1024⌉` blocks that hold only whole blocks inside `s..e` (at
//!   most about 2·log₂ of the blocks);
//! * the **tail**: where `e` cuts a block that starts inside the range, that
//!   block's 16 lanes (its partial lane sums or products, or the extreme so
//!   far) and the count of its terms, which the next range's head continues.
//!
//! [`Partial::merge`] joins the states of two adjacent ranges into the state
//! of their union, completing the block they share and replacing sibling
//! nodes by their parent (each node's value is its two children combined,
//! the tree's own association). The canonical form makes merging
//! associative in bits: any grouping of the merges of ranges that tile
//! `0..n` gives the one state of `0..n`, whose root is the single call's
//! result before its rounding into the destination.
//!
//! Two-pass reductions (Logsumexp, Variance, L2Norm) run two stages: the
//! first stage's whole state gives [`Centres`] (the maximum, the mean, the
//! largest magnitude, per output), which every range's second stage takes.

use super::engine::{
    beats, complex_fold, complex_push, fmax, run_pass, AbsMax, CSumProd, Carrier, DevSums, FArg,
    FExt, FProd, FSum, IArg, IExt, ISum, IntCarrier, LseSum, Pass, ScaledSquares,
};
use super::lanes::{fold_prod_lanes, fold_sum_lanes, LaneFloat, BLOCK, LANES};
use super::tree::left_part;
use super::{
    carrier, check_axes, check_reduction, l2_result, lse_centre, lse_result, reduced_shape,
    variance_result, ReduceOp, TermMap, Terms,
};
use crate::array::ArrayViewMut;
use crate::checks::check_destination;
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{DType, Tier};
use num_complex::Complex;

/// The version of [`Partial::to_bytes`] and [`Centres::to_bytes`]'s layout;
/// bytes of another version are refused.
pub const PARTIAL_VERSION: u32 = 1;

const PARTIAL_MAGIC: [u8; 4] = *b"TSRP";
const CENTRES_MAGIC: [u8; 4] = *b"TSRC";

/// Where one operand's terms sit in the whole reduction's numbering: each
/// output's local terms `0..len` are terms `start..start + len` of `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermRange {
    /// The number of the operand's first term.
    pub start: usize,
    /// Terms per output of the whole reduction.
    pub total: usize,
}

/// How many stages a reduction's partials run: 2 for Logsumexp, Variance
/// and L2Norm (the second takes the first's [`Centres`]), 1 for the others.
pub fn partial_stages(op: ReduceOp) -> usize {
    match op {
        ReduceOp::Logsumexp | ReduceOp::Variance | ReduceOp::L2Norm => 2,
        _ => 1,
    }
}

fn bad(reason: impl Into<String>) -> Error {
    Error::Partial {
        reason: reason.into(),
    }
}

/// Values a state stores, little-endian, `SIZE` bytes each.
pub(crate) trait Bits: Copy {
    const SIZE: usize;
    fn put(self, out: &mut [u8]);
    fn get(b: &[u8]) -> Self;
}

macro_rules! bits_num {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            fn put(self, out: &mut [u8]) {
                out[..Self::SIZE].copy_from_slice(&self.to_le_bytes());
            }
            fn get(b: &[u8]) -> Self {
                let mut a = [0u8; core::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..Self::SIZE]);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}
bits_num!(f32, f64, i64, u64);

impl Bits for usize {
    const SIZE: usize = 8;
    fn put(self, out: &mut [u8]) {
        (self as u64).put(out)
    }
    fn get(b: &[u8]) -> Self {
        // A position beyond the address space only comes from damaged
        // bytes; it saturates (and is then no position of any term).
        usize::try_from(u64::get(b)).unwrap_or(usize::MAX)
    }
}

impl<A: Bits, B: Bits> Bits for (A, B) {
    const SIZE: usize = A::SIZE + B::SIZE;
    fn put(self, out: &mut [u8]) {
        self.0.put(out);
        self.1.put(&mut out[A::SIZE..]);
    }
    fn get(b: &[u8]) -> Self {
        (A::get(b), B::get(&b[A::SIZE..]))
    }
}

impl<F: Bits> Bits for Complex<F> {
    const SIZE: usize = 2 * F::SIZE;
    fn put(self, out: &mut [u8]) {
        (self.re, self.im).put(out)
    }
    fn get(b: &[u8]) -> Self {
        let (re, im) = <(F, F)>::get(b);
        Complex::new(re, im)
    }
}

impl<A: Bits + Default> Bits for [A; LANES] {
    const SIZE: usize = LANES * A::SIZE;
    fn put(self, out: &mut [u8]) {
        for (i, v) in self.iter().enumerate() {
            v.put(&mut out[i * A::SIZE..]);
        }
    }
    fn get(b: &[u8]) -> Self {
        let mut l = [A::default(); LANES];
        for (i, v) in l.iter_mut().enumerate() {
            *v = A::get(&b[i * A::SIZE..]);
        }
        l
    }
}

/// A pass whose blocks can be cut: its terms mapped one by one (`M`), the
/// lanes of a block's first terms (`L`) continued term by term, and the
/// block's value from them, with the bits of [`Pass::block`] on the whole
/// block.
pub(crate) trait PartialPass<C: Carrier>: Pass<C> {
    /// A mapped term of a head.
    type M: Bits;
    /// The lanes of a block's first terms.
    type L: Bits;
    /// Term `x` of output `o` as the pass maps it.
    fn map(&self, o: usize, x: C) -> Self::M;
    /// Lanes holding no term.
    fn lanes_empty(&self) -> Self::L;
    /// The block's term at position `j` (term number `t`) into the lanes.
    fn push(&self, l: &mut Self::L, j: usize, t: usize, m: Self::M);
    /// The lanes of a block's first `x.len()` terms (first term number
    /// `t0`, a multiple of the block).
    fn lanes_of(&self, o: usize, t0: usize, x: &[C]) -> Self::L {
        let mut l = self.lanes_empty();
        for (j, &v) in x.iter().enumerate() {
            self.push(&mut l, j, t0 + j, self.map(o, v));
        }
        l
    }
    /// A term of a two-operand pass ([`Pass::TWO`]) from its operands'
    /// values.
    fn map2(&self, o: usize, x: C, y: C) -> Self::M {
        let _ = y;
        self.map(o, x)
    }
    /// [`PartialPass::lanes_of`] of a two-operand pass.
    fn lanes_of2(&self, o: usize, t0: usize, x: &[C], y: &[C]) -> Self::L {
        let mut l = self.lanes_empty();
        for (j, (&v, &w)) in x.iter().zip(y).enumerate() {
            self.push(&mut l, j, t0 + j, self.map2(o, v, w));
        }
        l
    }
    /// The value of a block from lanes holding its `count` terms (≥ 1).
    fn value(&self, l: &Self::L, count: usize) -> Self::V;
    /// A node's value computed with term numbers from 0, renumbered from
    /// `by` (the positions of the Arg reductions).
    fn shift(&self, v: Self::V, by: usize) -> Self::V {
        let _ = by;
        v
    }
}

/// Lanes of a sum: +0 then each term added.
fn add_lane<F: LaneFloat>(l: &mut [F; LANES], j: usize, m: F) {
    l[j % LANES] = l[j % LANES] + m;
}

impl<F: LaneFloat + Carrier + Bits + Default> PartialPass<F> for FSum {
    type M = F;
    type L = [F; LANES];
    fn map(&self, _: usize, x: F) -> F {
        x
    }
    fn lanes_empty(&self) -> [F; LANES] {
        [F::ZERO; LANES]
    }
    fn push(&self, l: &mut [F; LANES], j: usize, _: usize, m: F) {
        add_lane(l, j, m)
    }
    fn lanes_of(&self, _: usize, _: usize, x: &[F]) -> [F; LANES] {
        F::sum_lanes_on(self.0, x)
    }
    fn value(&self, l: &[F; LANES], _: usize) -> F {
        fold_sum_lanes(l)
    }
}

impl<F: LaneFloat + Carrier + Bits + Default> PartialPass<F> for FProd {
    type M = F;
    type L = [F; LANES];
    fn map(&self, _: usize, x: F) -> F {
        x
    }
    fn lanes_empty(&self) -> [F; LANES] {
        [F::ONE; LANES]
    }
    fn push(&self, l: &mut [F; LANES], j: usize, _: usize, m: F) {
        l[j % LANES] = l[j % LANES] * m;
    }
    fn lanes_of(&self, _: usize, _: usize, x: &[F]) -> [F; LANES] {
        F::prod_lanes_on(self.0, x)
    }
    fn value(&self, l: &[F; LANES], _: usize) -> F {
        fold_prod_lanes(l)
    }
}

impl<F: LaneFloat + Carrier + Bits> PartialPass<F> for FExt {
    type M = F;
    type L = F;
    fn map(&self, _: usize, x: F) -> F {
        x
    }
    fn lanes_empty(&self) -> F {
        Pass::<F>::empty(self)
    }
    fn push(&self, l: &mut F, _: usize, _: usize, m: F) {
        *l = Pass::<F>::combine(self, *l, m);
    }
    fn lanes_of(&self, o: usize, t0: usize, x: &[F]) -> F {
        self.block(o, t0, x)
    }
    fn value(&self, l: &F, _: usize) -> F {
        *l
    }
}

impl<F: LaneFloat + Carrier + Bits> PartialPass<F> for AbsMax {
    type M = F;
    type L = F;
    fn map(&self, _: usize, x: F) -> F {
        x.abs()
    }
    fn lanes_empty(&self) -> F {
        F::ZERO
    }
    fn push(&self, l: &mut F, _: usize, _: usize, m: F) {
        *l = fmax(*l, m);
    }
    fn value(&self, l: &F, _: usize) -> F {
        *l
    }
}

impl<F: LaneFloat + Carrier + Bits> PartialPass<F> for FArg {
    type M = F;
    type L = (F, usize);
    fn map(&self, _: usize, x: F) -> F {
        x
    }
    fn lanes_empty(&self) -> (F, usize) {
        (F::NAN, usize::MAX)
    }
    fn push(&self, l: &mut (F, usize), _: usize, t: usize, m: F) {
        if l.1 == usize::MAX || beats(m, l.0, self.0) {
            *l = (m, t);
        }
    }
    fn lanes_of(&self, o: usize, t0: usize, x: &[F]) -> (F, usize) {
        self.block(o, t0, x)
    }
    fn value(&self, l: &(F, usize), _: usize) -> (F, usize) {
        *l
    }
    fn shift(&self, v: (F, usize), by: usize) -> (F, usize) {
        (v.0, v.1.saturating_add(by))
    }
}

impl<F: LaneFloat + Carrier + Bits + Default> PartialPass<F> for LseSum<F> {
    type M = F;
    type L = [F; LANES];
    fn map(&self, o: usize, x: F) -> F {
        // As the block does: below the cut the argument is -∞ (exp +0).
        let z = x - self.c[o];
        if z < F::CUT {
            (-F::INF).exp()
        } else {
            z.exp()
        }
    }
    fn lanes_empty(&self) -> [F; LANES] {
        [F::ZERO; LANES]
    }
    fn push(&self, l: &mut [F; LANES], j: usize, _: usize, m: F) {
        add_lane(l, j, m)
    }
    fn value(&self, l: &[F; LANES], _: usize) -> F {
        fold_sum_lanes(l)
    }
}

impl<F: LaneFloat + Carrier + Bits + Default> PartialPass<F> for DevSums<F> {
    type M = (F, F);
    type L = ([F; LANES], [F; LANES]);
    fn map(&self, o: usize, x: F) -> (F, F) {
        let d = x - self.c[o];
        (d * d, d)
    }
    fn lanes_empty(&self) -> Self::L {
        ([F::ZERO; LANES], [F::ZERO; LANES])
    }
    fn push(&self, l: &mut Self::L, j: usize, _: usize, m: (F, F)) {
        add_lane(&mut l.0, j, m.0);
        add_lane(&mut l.1, j, m.1);
    }
    fn value(&self, l: &Self::L, _: usize) -> (F, F) {
        (fold_sum_lanes(&l.0), fold_sum_lanes(&l.1))
    }
}

impl<F: LaneFloat + Carrier + Bits + Default> PartialPass<F> for ScaledSquares<F> {
    type M = F;
    type L = [F; LANES];
    fn map(&self, o: usize, x: F) -> F {
        let q = x / self.s[o];
        q * q
    }
    fn lanes_empty(&self) -> [F; LANES] {
        [F::ZERO; LANES]
    }
    fn push(&self, l: &mut [F; LANES], j: usize, _: usize, m: F) {
        add_lane(l, j, m)
    }
    fn value(&self, l: &[F; LANES], _: usize) -> F {
        fold_sum_lanes(l)
    }
}

/// Integer Sum, Prod, Max and Min: exact in any order, so a block's first
/// terms are held as one running value, continued term by term.
macro_rules! running_int_partial {
    ($($p:ty),*) => {$(
        impl<I: IntCarrier + Bits> PartialPass<I> for $p {
            type M = I;
            type L = I;
            fn map(&self, _: usize, x: I) -> I {
                x
            }
            fn lanes_empty(&self) -> I {
                Pass::<I>::empty(self)
            }
            fn push(&self, l: &mut I, _: usize, _: usize, m: I) {
                *l = Pass::<I>::combine(self, *l, m);
            }
            fn value(&self, l: &I, _: usize) -> I {
                *l
            }
        }
    )*};
}
running_int_partial!(ISum, IExt);

impl<I: IntCarrier + Bits> PartialPass<I> for IArg {
    type M = I;
    type L = (I, usize);
    fn map(&self, _: usize, x: I) -> I {
        x
    }
    fn lanes_empty(&self) -> (I, usize) {
        (I::ZERO, usize::MAX)
    }
    fn push(&self, l: &mut (I, usize), _: usize, t: usize, m: I) {
        let better = if self.0 { m > l.0 } else { m < l.0 };
        if l.1 == usize::MAX || better {
            *l = (m, t);
        }
    }
    fn value(&self, l: &(I, usize), _: usize) -> (I, usize) {
        *l
    }
    fn shift(&self, v: (I, usize), by: usize) -> (I, usize) {
        (v.0, v.1.saturating_add(by))
    }
}

impl<F: LaneFloat + Bits + Default> PartialPass<Complex<F>> for CSumProd
where
    Complex<F>: Carrier,
{
    type M = Complex<F>;
    type L = [Complex<F>; LANES];
    fn map(&self, _: usize, x: Complex<F>) -> Complex<F> {
        x
    }
    fn lanes_empty(&self) -> Self::L {
        [Complex::new(F::ZERO, F::ZERO); LANES]
    }
    fn push(&self, l: &mut Self::L, j: usize, _: usize, m: Complex<F>) {
        complex_push(l, j, m, self.0)
    }
    fn value(&self, l: &Self::L, count: usize) -> Complex<F> {
        complex_fold(*l, count, self.0)
    }
}

/// The lane order of a contraction's products (`contract/lane.rs`): lane
/// `k mod 16` of a block adds `a·b` by a fused multiply-add, in increasing
/// k from +0; the lanes fold and the blocks combine as a Sum's.
pub(crate) struct FmaDot(pub Tier);

impl<F: LaneFloat + Carrier + crate::contract::acc::Acc> Pass<F> for FmaDot {
    type V = F;
    const TWO: bool = true;
    fn empty(&self) -> F {
        <F as LaneFloat>::ZERO
    }
    fn block(&self, _: usize, _: usize, _: &[F]) -> F {
        // A two-operand pass: the engine calls `block2`.
        <F as LaneFloat>::ZERO
    }
    fn block2(&self, _: usize, _: usize, x: &[F], y: &[F]) -> F {
        crate::contract::lane::block_sum(self.0, x, y)
    }
    fn combine(&self, a: F, b: F) -> F {
        a + b
    }
}

impl<F: LaneFloat + Carrier + Bits + Default + crate::contract::acc::Acc> PartialPass<F>
    for FmaDot
{
    type M = (F, F);
    type L = [F; LANES];
    fn map(&self, _: usize, x: F) -> (F, F) {
        (x, <F as LaneFloat>::ZERO)
    }
    fn map2(&self, _: usize, x: F, y: F) -> (F, F) {
        (x, y)
    }
    fn lanes_empty(&self) -> [F; LANES] {
        [<F as LaneFloat>::ZERO; LANES]
    }
    fn push(&self, l: &mut [F; LANES], j: usize, _: usize, m: (F, F)) {
        let i = j % LANES;
        l[i] = l[i].madd(m.0, m.1);
    }
    fn value(&self, l: &[F; LANES], _: usize) -> F {
        fold_sum_lanes(l)
    }
}

/// The canonical shape of a range's state (the module documentation).
#[derive(Debug, PartialEq, Eq)]
struct Geometry {
    /// Terms in the head.
    head: usize,
    /// The whole-block nodes, `(first block, blocks)`, left to right.
    nodes: Vec<(usize, usize)>,
    /// The tail's block and its term count (0: no tail).
    tail_block: usize,
    tail: usize,
}

/// The nodes of the block tree of `(lo, count)` that lie inside blocks
/// `a..b` and whose parents do not, left to right.
fn largest_nodes(lo: usize, count: usize, a: usize, b: usize, out: &mut Vec<(usize, usize)>) {
    let hi = lo + count;
    if count == 0 || hi <= a || lo >= b {
        return;
    }
    if a <= lo && hi <= b {
        out.push((lo, count));
        return;
    }
    let p = left_part(count);
    largest_nodes(lo, p, a, b, out);
    largest_nodes(lo + p, count - p, a, b, out);
}

fn geometry(start: usize, end: usize, total: usize) -> Geometry {
    let blocks = total.div_ceil(BLOCK);
    let block_end = |b: usize| ((b + 1) * BLOCK).min(total);
    let mut g = Geometry {
        head: 0,
        nodes: Vec::new(),
        tail_block: 0,
        tail: 0,
    };
    let mut s = start;
    if start < end && !start.is_multiple_of(BLOCK) {
        g.head = end.min(block_end(start / BLOCK)) - start;
        s += g.head;
    }
    if s < end {
        let first = s / BLOCK;
        let last = if end == total { blocks } else { end / BLOCK };
        largest_nodes(0, blocks, first, last, &mut g.nodes);
        if end < total && !end.is_multiple_of(BLOCK) {
            g.tail_block = end / BLOCK;
            g.tail = end % BLOCK;
        }
    }
    g
}

/// Bytes of one output's record in a state of geometry `g`.
fn record_bytes<C: Carrier, P: PartialPass<C>>(g: &Geometry) -> usize
where
    P::V: Bits,
{
    g.head * P::M::SIZE + g.nodes.len() * P::V::SIZE + if g.tail > 0 { P::L::SIZE } else { 0 }
}

/// One output's record, decoded.
struct Record<M, V, L> {
    head: Vec<M>,
    nodes: Vec<V>,
    tail: Option<L>,
}

fn decode<C: Carrier, P: PartialPass<C>>(g: &Geometry, r: &[u8]) -> Record<P::M, P::V, P::L>
where
    P::V: Bits,
{
    let (m, v) = (P::M::SIZE, P::V::SIZE);
    let head = (0..g.head).map(|i| P::M::get(&r[i * m..])).collect();
    let at = g.head * m;
    let nodes = (0..g.nodes.len())
        .map(|i| P::V::get(&r[at + i * v..]))
        .collect();
    let at = at + g.nodes.len() * v;
    let tail = (g.tail > 0).then(|| P::L::get(&r[at..]));
    Record { head, nodes, tail }
}

fn encode<C: Carrier, P: PartialPass<C>>(rec: &Record<P::M, P::V, P::L>, r: &mut [u8])
where
    P::V: Bits,
{
    let (m, v) = (P::M::SIZE, P::V::SIZE);
    for (i, &x) in rec.head.iter().enumerate() {
        x.put(&mut r[i * m..]);
    }
    let at = rec.head.len() * m;
    for (i, &x) in rec.nodes.iter().enumerate() {
        x.put(&mut r[at + i * v..]);
    }
    if let Some(l) = rec.tail {
        l.put(&mut r[at + rec.nodes.len() * v..]);
    }
}

/// The state of every output's local terms `0..src.n`, numbered from
/// `start` of `total`.
fn compute<C: Carrier, P: PartialPass<C>>(
    pass: &P,
    src: &mut super::source::Source,
    start: usize,
    total: usize,
    threads: usize,
) -> Result<Vec<u8>>
where
    P::V: Bits,
{
    let len = src.n;
    let g = geometry(start, start + len, total);
    let rec = record_bytes::<C, P>(&g);
    let outs = src.outputs;
    let size = outs.checked_mul(rec).ok_or_else(|| Error::Overflow {
        operand: "the partial state".into(),
    })?;
    let mut data = crate::alloc::try_zeroed::<u8>(size, "the partial state")?;
    let mut s = src.scratch::<C>();
    let tail_at = rec - if g.tail > 0 { P::L::SIZE } else { 0 };
    for o in 0..outs {
        let r = &mut data[o * rec..(o + 1) * rec];
        if g.head > 0 {
            if P::TWO {
                let (x, y) = src.fetch_two(o, 0, g.head, &mut s);
                for (i, (&v, &w)) in x.iter().zip(y).enumerate() {
                    pass.map2(o, v, w).put(&mut r[i * P::M::SIZE..]);
                }
            } else {
                let x = src.fetch(o, 0, g.head, &mut s);
                for (i, &v) in x.iter().enumerate() {
                    pass.map(o, v).put(&mut r[i * P::M::SIZE..]);
                }
            }
        }
        if g.tail > 0 {
            let t0 = g.tail_block * BLOCK;
            let l = if P::TWO {
                let (x, y) = src.fetch_two(o, t0 - start, g.tail, &mut s);
                pass.lanes_of2(o, t0, x, y)
            } else {
                pass.lanes_of(o, t0, src.fetch(o, t0 - start, g.tail, &mut s))
            };
            l.put(&mut r[tail_at..]);
        }
    }
    let node_at = g.head * P::M::SIZE;
    for (k, &(b0, m)) in g.nodes.iter().enumerate() {
        let t0 = b0 * BLOCK;
        src.set_window(t0 - start, (m * BLOCK).min(total - t0));
        let vals = run_pass(src, pass, threads);
        src.set_window(0, len);
        for (o, &v) in vals?.iter().enumerate() {
            let at = o * rec + node_at + k * P::V::SIZE;
            pass.shift(v, t0).put(&mut data[at..]);
        }
    }
    Ok(data)
}

/// The value of node `(lo, count)` from the known nodes below it (sorted by
/// first block), by the tree's recursion; None where a block is missing.
fn node_value<V: Copy>(
    lo: usize,
    count: usize,
    known: &[((usize, usize), V)],
    op: &impl Fn(V, V) -> V,
) -> Option<V> {
    // Known nodes are disjoint: one at most starts at `lo`, and it is this
    // node or lies inside it.
    if let Ok(i) = known.binary_search_by(|&((l, _), _)| l.cmp(&lo)) {
        if known[i].0 .1 == count {
            return Some(known[i].1);
        }
    }
    if count < 2 {
        return None;
    }
    let p = left_part(count);
    let a = node_value(lo, p, known, op)?;
    let b = node_value(lo + p, count - p, known, op)?;
    Some(op(a, b))
}

/// The state of `a.start .. b.end` from those of two adjacent ranges.
fn merge_data<C: Carrier, P: PartialPass<C>>(pass: &P, a: &Partial, b: &Partial) -> Result<Vec<u8>>
where
    P::V: Bits,
{
    let total = a.total;
    let (ga, gb) = (
        geometry(a.start, a.end, total),
        geometry(b.start, b.end, total),
    );
    let gu = geometry(a.start, b.end, total);
    let (ra, rb) = (record_bytes::<C, P>(&ga), record_bytes::<C, P>(&gb));
    let ru = record_bytes::<C, P>(&gu);
    let size = a.outputs.checked_mul(ru).ok_or_else(|| Error::Overflow {
        operand: "the partial state".into(),
    })?;
    let mut data = crate::alloc::try_zeroed::<u8>(size, "the partial state")?;
    let combine = |x, y| pass.combine(x, y);
    let a_head_only = ga.nodes.is_empty() && ga.tail == 0 && ga.head == a.end - a.start;
    for o in 0..a.outputs {
        let x = decode::<C, P>(&ga, &a.data[o * ra..(o + 1) * ra]);
        let y = decode::<C, P>(&gb, &b.data[o * rb..(o + 1) * rb]);
        let mut known: Vec<((usize, usize), P::V)> =
            ga.nodes.iter().copied().zip(x.nodes).collect();
        let mut head = x.head;
        let mut tail = None;
        if let Some(mut l) = x.tail {
            // The block a's tail started continues with b's head.
            let (bt, k) = (ga.tail_block, ga.tail);
            for (i, &m) in y.head.iter().enumerate() {
                pass.push(&mut l, k + i, bt * BLOCK + k + i, m);
            }
            let count = k + y.head.len();
            if bt * BLOCK + count == ((bt + 1) * BLOCK).min(total) {
                known.push(((bt, 1), pass.value(&l, count)));
            } else {
                tail = Some(l);
            }
        } else if a_head_only {
            head.extend(y.head);
        }
        known.extend(gb.nodes.iter().copied().zip(y.nodes));
        if y.tail.is_some() {
            tail = y.tail;
        }
        let mut nodes = Vec::with_capacity(gu.nodes.len());
        for &(lo, m) in &gu.nodes {
            nodes.push(
                node_value(lo, m, &known, &combine)
                    .ok_or_else(|| bad("the two states do not hold every block of their union"))?,
            );
        }
        if head.len() != gu.head || tail.is_some() != (gu.tail > 0) {
            return Err(bad("the two states do not join into their union's state"));
        }
        let rec = Record { head, nodes, tail };
        encode::<C, P>(&rec, &mut data[o * ru..(o + 1) * ru]);
    }
    Ok(data)
}

/// The root value of every output of a state of `0..total` (the pass's
/// empty value for no term), as bytes.
fn root_values<C: Carrier, P: PartialPass<C>>(pass: &P, p: &Partial) -> Result<Vec<u8>>
where
    P::V: Bits,
{
    let g = geometry(0, p.total, p.total);
    let rec = record_bytes::<C, P>(&g);
    let mut out = crate::alloc::try_zeroed::<u8>(p.outputs * P::V::SIZE, "the results")?;
    for o in 0..p.outputs {
        let v = if g.nodes.is_empty() {
            pass.empty()
        } else {
            P::V::get(&p.data[o * rec + g.head * P::M::SIZE..])
        };
        v.put(&mut out[o * P::V::SIZE..]);
    }
    Ok(out)
}

/// What a generic step over a pass does.
enum Job<'j> {
    Compute(&'j mut super::source::Source, usize, usize),
    Merge(&'j Partial, &'j Partial),
    Root(&'j Partial),
    Size(&'j Partial),
}

fn job<C: Carrier, P: PartialPass<C>>(pass: &P, j: Job<'_>, threads: usize) -> Result<Vec<u8>>
where
    P::V: Bits,
{
    match j {
        Job::Compute(src, start, total) => compute(pass, src, start, total, threads),
        Job::Merge(a, b) => merge_data(pass, a, b),
        Job::Root(p) => root_values(pass, p),
        Job::Size(p) => {
            let g = geometry(p.start, p.end, p.total);
            Ok((record_bytes::<C, P>(&g) as u64).to_le_bytes().to_vec())
        }
    }
}

/// Run `j` over the pass of `op`'s `stage` on `carrier` (`centre` the
/// second stage's per-output values; empty where merging, which reads no
/// centre).
fn on_pass<F: LaneFloat + Carrier + Bits + Default + crate::contract::acc::Acc>(
    (op, stage, fused): (ReduceOp, u8, bool),
    tier: Tier,
    centre: Vec<F>,
    j: Job<'_>,
    threads: usize,
) -> Result<Vec<u8>> {
    use ReduceOp::*;
    if fused {
        return job::<F, _>(&FmaDot(tier), j, threads);
    }
    match (op, stage) {
        (Sum | Mean | Variance, 0) => job::<F, _>(&FSum(tier), j, threads),
        (Prod, 0) => job::<F, _>(&FProd(tier), j, threads),
        (Max | Logsumexp, 0) => job::<F, _>(&FExt(true, tier), j, threads),
        (Min, 0) => job::<F, _>(&FExt(false, tier), j, threads),
        (ArgMax | ArgMin, 0) => job::<F, _>(&FArg(op == ArgMax, tier), j, threads),
        (L2Norm, 0) => job::<F, _>(&AbsMax, j, threads),
        (Logsumexp, 1) => {
            let exp = F::unary_kernel(tier, crate::Kind::Exp);
            job::<F, _>(
                &LseSum {
                    tier,
                    c: centre,
                    exp,
                },
                j,
                threads,
            )
        }
        (Variance, 1) => job::<F, _>(&DevSums { tier, c: centre }, j, threads),
        (L2Norm, 1) => job::<F, _>(&ScaledSquares { tier, s: centre }, j, threads),
        _ => Err(bad(format!("{} has no stage {}", op.name(), stage + 1))),
    }
}

fn on_int_pass<I: IntCarrier + Bits>(op: ReduceOp, j: Job<'_>, threads: usize) -> Result<Vec<u8>> {
    use ReduceOp::*;
    match op {
        Sum | Prod => job::<I, _>(&ISum(op == Prod), j, threads),
        Max | Min => job::<I, _>(&IExt(op == Max), j, threads),
        ArgMax | ArgMin => job::<I, _>(&IArg(op == ArgMax), j, threads),
        _ => Err(bad(format!("{} takes no integer terms", op.name()))),
    }
}

fn on_complex_pass<F: LaneFloat + Bits + Default>(
    op: ReduceOp,
    j: Job<'_>,
    threads: usize,
) -> Result<Vec<u8>>
where
    Complex<F>: Carrier,
{
    match op {
        ReduceOp::Sum | ReduceOp::Prod => {
            job::<Complex<F>, _>(&CSumProd(op == ReduceOp::Prod), j, threads)
        }
        _ => Err(bad(format!("{} takes no complex terms", op.name()))),
    }
}

/// Dispatch `j` by the state's reduction, stage (and whether it is a
/// contraction's fused products) and carrier.
fn dispatch(
    (op, stage, fused): (ReduceOp, u8, bool),
    dtype: DType,
    tier: Tier,
    centre: Option<&Centres>,
    j: Job<'_>,
    threads: usize,
) -> Result<Vec<u8>> {
    let how = (op, stage, fused);
    match carrier(dtype) {
        DType::F32 => on_pass::<f32>(how, tier, centre_values(centre, op), j, threads),
        DType::F64 => on_pass::<f64>(how, tier, centre_values(centre, op), j, threads),
        DType::C64 => on_complex_pass::<f32>(op, j, threads),
        DType::C128 => on_complex_pass::<f64>(op, j, threads),
        DType::I64 => on_int_pass::<i64>(op, j, threads),
        DType::U64 => on_int_pass::<u64>(op, j, threads),
        other => Err(Error::DTypeUnsupported {
            operand: "the terms".into(),
            dtype: other,
            reason: "partial states are kept for the f32, f64, c64, c128, i64 and u64 carriers"
                .into(),
        }),
    }
}

/// The second stage's per-output values of `op` from its centres: the
/// Logsumexp's centre (the maximum where finite, else 0), the mean, the
/// largest magnitude.
fn centre_values<F: LaneFloat + Bits>(c: Option<&Centres>, op: ReduceOp) -> Vec<F> {
    let Some(c) = c else { return Vec::new() };
    let f = F::SIZE;
    (0..c.outputs)
        .map(|o| {
            let v = F::get(&c.values[o * f..]);
            if op == ReduceOp::Logsumexp {
                lse_centre(v)
            } else {
                v
            }
        })
        .collect()
}

/// The partial state of one stage of a reduction over a contiguous range of
/// its term numbers, for every output: see the module documentation for
/// its canonical form. Made by [`reduce_partial`], joined by
/// [`Partial::merge`] or [`Partial::combine`], finished by
/// [`reduce_finish`] (or [`reduce_centres`] after a first of two stages),
/// and moved between processes as [`Partial::to_bytes`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partial {
    op: ReduceOp,
    stage: u8,
    dtype: DType,
    map: TermMap,
    /// A contraction's products in lane order, each by a fused
    /// multiply-add (`crate::contract::contract_partial`).
    fused: bool,
    total: usize,
    start: usize,
    end: usize,
    outputs: usize,
    /// A digest of the centres a second stage was computed with (0 for a
    /// first stage).
    centres: u64,
    data: Vec<u8>,
}

fn map_code(m: TermMap) -> u8 {
    match m {
        TermMap::Value => 0,
        TermMap::Square => 1,
        TermMap::Abs => 2,
        TermMap::Product => 3,
        TermMap::SquaredDifference => 4,
        TermMap::AbsDifference => 5,
        TermMap::Program => 6,
    }
}

fn map_of(code: u8) -> Option<TermMap> {
    Some(match code {
        0 => TermMap::Value,
        1 => TermMap::Square,
        2 => TermMap::Abs,
        3 => TermMap::Product,
        4 => TermMap::SquaredDifference,
        5 => TermMap::AbsDifference,
        6 => TermMap::Program,
        _ => return None,
    })
}

fn op_code(op: ReduceOp) -> u8 {
    ReduceOp::ALL.iter().position(|&o| o == op).unwrap_or(0) as u8
}

/// FNV-1a over bytes: the digest that ties a second stage to its centres.
fn digest(b: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &x in b {
        h = (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h | 1
}

/// A reader of a state's bytes that refuses to read past them.
pub(crate) struct Reader<'b> {
    pub(crate) b: &'b [u8],
    pub(crate) at: usize,
}

impl<'b> Reader<'b> {
    pub(crate) fn take(&mut self, n: usize) -> Result<&'b [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| {
            bad(format!(
                "the bytes end at {} of {}",
                self.b.len(),
                self.at.saturating_add(n)
            ))
        })?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    /// A tag and [`PARTIAL_VERSION`], refused otherwise (`what` names the
    /// kind of bytes the tag marks).
    pub(crate) fn header(&mut self, magic: [u8; 4], what: &str) -> Result<()> {
        if self.take(4)? != magic {
            return Err(bad(format!("not {what} (wrong tag)")));
        }
        let version = u32::from_le_bytes(self.take(4)?.try_into().unwrap_or([0; 4]));
        if version != PARTIAL_VERSION {
            return Err(bad(format!(
                "version {version}; this build reads version {PARTIAL_VERSION}"
            )));
        }
        Ok(())
    }
    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u64(&mut self) -> Result<u64> {
        Ok(u64::get(self.take(8)?))
    }
    pub(crate) fn count(&mut self) -> Result<usize> {
        usize::try_from(self.u64()?).map_err(|_| bad("a count beyond this machine's address space"))
    }
    pub(crate) fn dtype(&mut self) -> Result<DType> {
        let n = self.u8()? as usize;
        let name = core::str::from_utf8(self.take(n)?)
            .map_err(|_| bad("a dtype name that is not UTF-8"))?;
        DType::from_name(name).ok_or_else(|| bad(format!("unknown dtype `{name}`")))
    }
}

fn put_dtype(out: &mut Vec<u8>, d: DType) {
    out.push(d.name().len() as u8);
    out.extend_from_slice(d.name().as_bytes());
}

impl Partial {
    /// The reduction.
    pub fn op(&self) -> ReduceOp {
        self.op
    }
    /// The stage (1 or 2; see [`partial_stages`]).
    pub fn stage(&self) -> usize {
        self.stage as usize + 1
    }
    /// The terms' dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// The range of term numbers the state covers.
    pub fn range(&self) -> core::ops::Range<usize> {
        self.start..self.end
    }
    /// Terms per output of the whole reduction.
    pub fn total(&self) -> usize {
        self.total
    }
    /// Outputs (results) the state holds.
    pub fn outputs(&self) -> usize {
        self.outputs
    }
    /// Whether the state covers every term (`0..total`).
    pub fn is_whole(&self) -> bool {
        self.start == 0 && self.end == self.total
    }

    /// The state of `self.range()` followed by `next.range()`.
    ///
    /// # Errors
    /// [`Error::Partial`] where the two are not of one reduction (op, stage,
    /// dtype, term map, total, outputs, second-stage centres) or `next` does
    /// not start where `self` ends; [`Error::Alloc`] where the joined state
    /// cannot be allocated.
    pub fn merge(&self, next: &Partial) -> Result<Partial> {
        let same = self.op == next.op
            && self.stage == next.stage
            && self.dtype == next.dtype
            && self.map == next.map
            && self.fused == next.fused
            && self.total == next.total
            && self.outputs == next.outputs
            && self.centres == next.centres;
        if !same {
            return Err(bad(format!(
                "states of different reductions ({} stage {} of {} {:?}, {} outputs of {} terms; \
                 and {} stage {} of {} {:?}, {} outputs of {} terms), or of different centres",
                self.op.name(),
                self.stage(),
                self.dtype,
                self.map,
                self.outputs,
                self.total,
                next.op.name(),
                next.stage(),
                next.dtype,
                next.map,
                next.outputs,
                next.total
            )));
        }
        if self.end != next.start {
            return Err(bad(format!(
                "terms {}..{} are not followed by {}..{}",
                self.start, self.end, next.start, next.end
            )));
        }
        if self.start == self.end {
            return Ok(next.clone());
        }
        if next.start == next.end {
            return Ok(self.clone());
        }
        let data = dispatch(
            (self.op, self.stage, self.fused),
            self.dtype,
            Tier::Scalar,
            None,
            Job::Merge(self, next),
            1,
        )?;
        Ok(Partial {
            start: self.start,
            end: next.end,
            data,
            ..self.clone()
        })
    }

    /// The states of consecutive ranges, in order, joined left to right
    /// into one (any grouping of [`Partial::merge`] gives the same state).
    ///
    /// # Errors
    /// As [`Partial::merge`]; [`Error::Partial`] for no state.
    pub fn combine(parts: &[Partial]) -> Result<Partial> {
        let (first, rest) = parts
            .split_first()
            .ok_or_else(|| bad("no state to combine"))?;
        rest.iter().try_fold(first.clone(), |acc, p| acc.merge(p))
    }

    /// The state as bytes: a tag, [`PARTIAL_VERSION`], the reduction, the
    /// range, then each output's record (little-endian values).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.data.len());
        out.extend_from_slice(&PARTIAL_MAGIC);
        out.extend_from_slice(&PARTIAL_VERSION.to_le_bytes());
        out.push(op_code(self.op));
        out.push(self.stage);
        out.push(map_code(self.map));
        out.push(u8::from(self.fused));
        put_dtype(&mut out, self.dtype);
        for v in [self.total, self.start, self.end, self.outputs] {
            out.extend_from_slice(&(v as u64).to_le_bytes());
        }
        out.extend_from_slice(&self.centres.to_le_bytes());
        out.extend_from_slice(&(self.data.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.data);
        out
    }

    /// A state from [`Partial::to_bytes`]'s bytes, checked: the tag and
    /// version, a known reduction, stage, term map and dtype the reduction
    /// takes, `start ≤ end ≤ total`, and a record length that is the one
    /// the range's canonical form has. Allocates at most the bytes' length.
    ///
    /// # Errors
    /// [`Error::Partial`] for bytes that fail any of these checks.
    pub fn from_bytes(bytes: &[u8]) -> Result<Partial> {
        let mut r = Reader { b: bytes, at: 0 };
        r.header(PARTIAL_MAGIC, "a partial reduction state")?;
        let op = *ReduceOp::ALL
            .get(r.u8()? as usize)
            .ok_or_else(|| bad("an unknown reduction"))?;
        let stage = r.u8()?;
        let map = map_of(r.u8()?).ok_or_else(|| bad("an unknown term map"))?;
        let fused = match r.u8()? {
            0 => false,
            1 => true,
            _ => return Err(bad("an unknown kind of state")),
        };
        let dtype = r.dtype()?;
        let (total, start, end, outputs) = (r.count()?, r.count()?, r.count()?, r.count()?);
        if fused && !(op == ReduceOp::Sum && stage == 0 && matches!(dtype, DType::F32 | DType::F64))
        {
            return Err(bad("a contraction's state is a first-stage f32 or f64 sum"));
        }
        let centres = r.u64()?;
        let len = r.count()?;
        if stage as usize >= partial_stages(op) || op == ReduceOp::Sum2 || !op.accepts(dtype) {
            return Err(bad(format!(
                "stage {} of {} over {dtype} is not a partial state this build keeps",
                stage as usize + 1,
                op.name()
            )));
        }
        if !(start <= end && end <= total) {
            return Err(bad(format!("the range {start}..{end} of {total} terms")));
        }
        let data = r.take(len)?;
        if r.at != bytes.len() {
            return Err(bad("bytes after the state"));
        }
        let mut p = Partial {
            op,
            stage,
            dtype,
            map,
            fused,
            total,
            start,
            end,
            outputs,
            centres,
            data: Vec::new(),
        };
        let rec = dispatch(
            (op, stage, fused),
            dtype,
            Tier::Scalar,
            None,
            Job::Size(&p),
            1,
        )?;
        let rec = usize::try_from(u64::get(&rec)).unwrap_or(usize::MAX);
        if outputs.checked_mul(rec) != Some(len) {
            return Err(bad(format!(
                "{len} bytes of records; {outputs} outputs of the range {start}..{end} of \
                 {total} take {rec} each"
            )));
        }
        p.data = data.to_vec();
        Ok(p)
    }
}

/// The first stage's results of a two-stage reduction, per output (the
/// maximum for Logsumexp, the mean for Variance, the largest magnitude for
/// L2Norm), which every range's second stage takes ([`reduce_partial`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Centres {
    op: ReduceOp,
    dtype: DType,
    map: TermMap,
    total: usize,
    outputs: usize,
    values: Vec<u8>,
}

impl Centres {
    /// The centres as bytes (a tag, [`PARTIAL_VERSION`], the reduction,
    /// then one carrier value per output, little-endian).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + self.values.len());
        out.extend_from_slice(&CENTRES_MAGIC);
        out.extend_from_slice(&PARTIAL_VERSION.to_le_bytes());
        out.push(op_code(self.op));
        out.push(map_code(self.map));
        put_dtype(&mut out, self.dtype);
        out.extend_from_slice(&(self.total as u64).to_le_bytes());
        out.extend_from_slice(&(self.outputs as u64).to_le_bytes());
        out.extend_from_slice(&self.values);
        out
    }

    /// Centres from [`Centres::to_bytes`]'s bytes, checked as
    /// [`Partial::from_bytes`] checks a state.
    ///
    /// # Errors
    /// [`Error::Partial`] for bytes that are not such centres.
    pub fn from_bytes(bytes: &[u8]) -> Result<Centres> {
        let mut r = Reader { b: bytes, at: 0 };
        r.header(CENTRES_MAGIC, "the centres of a reduction")?;
        let op = *ReduceOp::ALL
            .get(r.u8()? as usize)
            .ok_or_else(|| bad("an unknown reduction"))?;
        let map = map_of(r.u8()?).ok_or_else(|| bad("an unknown term map"))?;
        let dtype = r.dtype()?;
        let (total, outputs) = (r.count()?, r.count()?);
        if partial_stages(op) != 2 || !op.accepts(dtype) {
            return Err(bad(format!("{} over {dtype} has no centres", op.name())));
        }
        let item = carrier(dtype).info().item_bytes;
        let rest = &bytes[r.at..];
        if outputs.checked_mul(item) != Some(rest.len()) {
            return Err(bad(format!(
                "{} bytes of values for {outputs} outputs of {item} bytes",
                rest.len()
            )));
        }
        Ok(Centres {
            op,
            dtype,
            map,
            total,
            outputs,
            values: rest.to_vec(),
        })
    }
}

/// The partial state of one stage of `op` over the terms of `terms` along
/// `axes`: each output's local terms `0..len` (in C order of the reduced
/// axes, `len` their extents' product) are terms `range.start ..
/// range.start + len` of `range.total`. A first stage takes no centres;
/// the second stage of a two-stage reduction ([`partial_stages`]) takes the
/// [`Centres`] of the whole first stage.
///
/// # Errors
/// What [`crate::reduce()`] refuses of the terms and axes (its destination
/// aside), and [`Error::Partial`] for a range past `total`, Sum2 (not kept
/// as partials), centres missing, not needed, or of another reduction or
/// output count; [`Error::Alloc`] where the state cannot be allocated.
pub fn reduce_partial(
    op: ReduceOp,
    axes: &[usize],
    terms: Terms<'_, '_>,
    range: TermRange,
    centres: Option<&Centres>,
    exec: &Exec,
) -> Result<Partial> {
    let tier = exec.resolve_tier_for(crate::tier::Engine::Reduce)?;
    let (shape, dtype) = terms.shape_dtype()?;
    let axes = check_axes(axes, shape.len())?;
    let out_shape = reduced_shape(shape, &axes);
    let out_dtype = if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
        DType::I64
    } else {
        dtype
    };
    if op == ReduceOp::Sum2 {
        return Err(bad("Sum2 is not kept as partial states"));
    }
    // The refusals of `reduce` (a Max of no term is refused for the whole,
    // at the finish: a range may hold none).
    let whole_shape: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(i, &e)| if axes.contains(&i) { 1 } else { e })
        .collect();
    check_reduction(
        "destination",
        op,
        &whole_shape,
        dtype,
        &axes,
        (&out_shape, out_dtype),
    )?;
    let mut src = terms.source(&axes, carrier(dtype), tier)?;
    let end = range.start.checked_add(src.n).filter(|&e| e <= range.total);
    let end = end.ok_or_else(|| {
        bad(format!(
            "terms {}.. ({} of them) of a reduction of {} terms",
            range.start, src.n, range.total
        ))
    })?;
    let stage = match (partial_stages(op), centres) {
        (1, None) => 0u8,
        (2, None) => 0,
        (2, Some(c)) => {
            if c.op != op
                || c.dtype != dtype
                || c.map != terms.map()
                || c.total != range.total
                || c.outputs != src.outputs
            {
                return Err(bad(format!(
                    "centres of {} over {} ({} outputs of {} terms) for {} over {dtype} ({} outputs of {} terms)",
                    c.op.name(), c.dtype, c.outputs, c.total, op.name(), src.outputs, range.total
                )));
            }
            1
        }
        _ => {
            return Err(bad(format!(
                "{} has one stage and takes no centres",
                op.name()
            )))
        }
    };
    let data = dispatch(
        (op, stage, false),
        dtype,
        tier,
        centres,
        Job::Compute(&mut src, range.start, range.total),
        exec.thread_count(),
    )?;
    Ok(Partial {
        op,
        stage,
        dtype,
        map: terms.map(),
        fused: false,
        total: range.total,
        start: range.start,
        end,
        outputs: src.outputs,
        centres: centres.map_or(0, |c| digest(&c.values)),
        data,
    })
}

fn whole(p: &Partial) -> Result<()> {
    if !p.is_whole() {
        return Err(bad(format!(
            "the state covers terms {}..{} of {}, not all of them",
            p.start, p.end, p.total
        )));
    }
    Ok(())
}

/// The [`Centres`] of a two-stage reduction from the state of its whole
/// first stage (range `0..total`).
///
/// # Errors
/// [`Error::Partial`] for a state that is not a whole first stage of a
/// two-stage reduction.
pub fn reduce_centres(first: &Partial) -> Result<Centres> {
    whole(first)?;
    if first.stage != 0 || partial_stages(first.op) != 2 {
        return Err(bad(format!(
            "stage {} of {} gives no centres",
            first.stage(),
            first.op.name()
        )));
    }
    let roots = dispatch(
        (first.op, 0, first.fused),
        first.dtype,
        Tier::Scalar,
        None,
        Job::Root(first),
        1,
    )?;
    let values = match carrier(first.dtype) {
        DType::F32 => centres_of::<f32>(first, &roots),
        _ => centres_of::<f64>(first, &roots),
    };
    Ok(Centres {
        op: first.op,
        dtype: first.dtype,
        map: first.map,
        total: first.total,
        outputs: first.outputs,
        values,
    })
}

fn centres_of<F: LaneFloat + Bits>(p: &Partial, roots: &[u8]) -> Vec<u8> {
    let n = F::from_count(p.total);
    let mut out = vec![0u8; p.outputs * F::SIZE];
    for o in 0..p.outputs {
        let v = F::get(&roots[o * F::SIZE..]);
        let c = match p.op {
            ReduceOp::Variance => v / n,
            _ => v,
        };
        c.put(&mut out[o * F::SIZE..]);
    }
    out
}

/// Write the results of a reduction from the state of its whole last stage
/// (range `0..total`; for a two-stage reduction with the first stage's
/// `centres`) into `dst`, as [`crate::reduce()`] writes them: the same bits
/// as the single call over all the terms.
///
/// # Errors
/// [`Error::Partial`] for a state that does not cover every term, a first
/// stage of a two-stage reduction, centres missing or not those the state
/// was computed with; the destination's refusals of [`crate::reduce()`]
/// (shape: the reduced shape, or with extent 1 kept; an Arg's `i64`; a Max,
/// Min or Arg of no term).
pub fn reduce_finish(
    last: &Partial,
    centres: Option<&Centres>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    whole(last)?;
    exec.resolve_tier_for(crate::tier::Engine::Reduce)?;
    if last.stage as usize + 1 != partial_stages(last.op) {
        return Err(bad(format!(
            "{} needs its stage 2 state to finish",
            last.op.name()
        )));
    }
    if last.stage == 1 && centres.map(|c| digest(&c.values)) != Some(last.centres) {
        return Err(bad("the centres are not those the state was computed with"));
    }
    let count = dst.shape().iter().product::<usize>();
    if count != last.outputs {
        return Err(Error::Shape {
            operand: "destination".into(),
            shape: dst.shape().to_vec(),
            target: vec![last.outputs],
        });
    }
    if last.total == 0
        && last.outputs > 0
        && matches!(
            last.op,
            ReduceOp::Max | ReduceOp::Min | ReduceOp::ArgMax | ReduceOp::ArgMin
        )
    {
        return Err(Error::Axis {
            operand: "the terms".into(),
            axis: 0,
            reason: format!(
                "is reduced and has extent 0: {} of no term is not defined",
                last.op.name()
            ),
        });
    }
    if matches!(last.op, ReduceOp::ArgMax | ReduceOp::ArgMin) && dst.dtype() != DType::I64 {
        return Err(Error::DTypeMismatch {
            operand: "destination".into(),
            expected: DType::I64,
            got: dst.dtype(),
        });
    }
    check_destination(dst)?;
    let roots = dispatch(
        (last.op, last.stage, last.fused),
        last.dtype,
        Tier::Scalar,
        centres,
        Job::Root(last),
        1,
    )?;
    if matches!(last.op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
        // Each root is (extreme, position): the position is its last 8 bytes.
        let size = roots.len() / last.outputs.max(1);
        let p: Vec<i64> = (0..last.outputs)
            .map(|o| usize::get(&roots[(o + 1) * size - 8..]) as i64)
            .collect();
        return super::write(&p, dst, exec);
    }
    match carrier(last.dtype) {
        DType::F32 => write_as::<f32>(&float_results::<f32>(last, centres, &roots), dst, exec),
        DType::F64 => write_as::<f64>(&float_results::<f64>(last, centres, &roots), dst, exec),
        DType::C64 => write_as::<Complex<f32>>(&roots, dst, exec),
        DType::C128 => write_as::<Complex<f64>>(&roots, dst, exec),
        DType::I64 => write_as::<i64>(&roots, dst, exec),
        _ => write_as::<u64>(&roots, dst, exec),
    }
}

/// Results stored as bytes of `T` into the destination, as `reduce` writes.
fn write_as<T: Bits + crate::Element>(
    b: &[u8],
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let v: Vec<T> = b.chunks_exact(T::SIZE).map(T::get).collect();
    super::write(&v, dst, exec)
}

/// The float results from the roots of the last stage (the Arg
/// reductions' positions are read apart).
fn float_results<F: LaneFloat + Bits>(
    p: &Partial,
    centres: Option<&Centres>,
    roots: &[u8],
) -> Vec<u8> {
    let n = F::from_count(p.total);
    let c = |o: usize| centres.map_or(F::ZERO, |c| F::get(&c.values[o * F::SIZE..]));
    let mut out = vec![0u8; p.outputs * F::SIZE];
    for o in 0..p.outputs {
        let r = match p.op {
            ReduceOp::Variance => {
                variance_result(c(o), <(F, F)>::get(&roots[o * 2 * F::SIZE..]), n)
            }
            ReduceOp::Mean => F::get(&roots[o * F::SIZE..]) / n,
            ReduceOp::Logsumexp => lse_result(c(o), F::get(&roots[o * F::SIZE..])),
            ReduceOp::L2Norm => l2_result(c(o), F::get(&roots[o * F::SIZE..])),
            _ => F::get(&roots[o * F::SIZE..]),
        };
        r.put(&mut out[o * F::SIZE..]);
    }
    out
}

/// The partial state of a lane-order contraction's products over the
/// depth numbers `range.start .. range.start + k` of `range.total`: `a`
/// (`[R, k]` or `[k, R]`) and `b` (`[k, C]` or `[C, k]`), 2-D, contracted
/// along the one pair of `spec` (no batch pairs), accumulator `f32` or
/// `f64`. Each output's products enter the accumulator as the contraction
/// casts them and are added in lane order by fused multiply-adds
/// (ARCHITECTURE.md §5.5), so the states of ranges that tile the depth,
/// merged ([`Partial::merge`]) and finished by [`contract_finish`], give
/// `contract`'s bits where the whole contraction runs in lane order.
///
/// # Errors
/// [`Error::Attribute`] for a spec with batch pairs, other than one
/// contracted pair, or whose whole contraction runs in chain order (its
/// products form one sequence per output, which no range can start apart:
/// split rows or columns instead); [`Error::DTypeUnsupported`] for another
/// accumulator; [`Error::Rank`], [`Error::Shape`] for operands that are
/// not 2-D or whose depths differ; [`Error::Partial`] for a range past the
/// total; [`Error::Alloc`].
pub fn contract_partial(
    spec: &crate::ContractSpec,
    a: &crate::ArrayView<'_>,
    b: &crate::ArrayView<'_>,
    range: TermRange,
    exec: &Exec,
) -> Result<Partial> {
    let tier = exec.resolve_tier()?;
    if !spec.batch.is_empty() || spec.contracting.len() != 1 {
        return Err(Error::Attribute {
            name: "spec".into(),
            reason: "a contraction's partial state takes one contracted pair and no batch pairs"
                .into(),
        });
    }
    if !matches!(spec.acc, DType::F32 | DType::F64) {
        return Err(Error::DTypeUnsupported {
            operand: "the accumulator".into(),
            dtype: spec.acc,
            reason: "a contraction's partial state takes f32 or f64 (lane order)".into(),
        });
    }
    for (name, v) in [("a", a), ("b", b)] {
        if v.shape().len() != 2 {
            return Err(Error::Rank {
                operand: name.into(),
                shape: v.shape().to_vec(),
                expected: "a 2-D operand".into(),
            });
        }
    }
    let (ka, kb) = spec.contracting[0];
    if ka > 1 || kb > 1 {
        return Err(Error::Axis {
            operand: "a or b".into(),
            axis: ka.max(kb),
            reason: "is not an axis of a 2-D operand".into(),
        });
    }
    let (fa, fb) = (1 - ka, 1 - kb);
    let (rows, cols, k) = (a.shape()[fa], b.shape()[fb], a.shape()[ka]);
    if b.shape()[kb] != k {
        return Err(Error::Shape {
            operand: "b".into(),
            shape: b.shape().to_vec(),
            target: a.shape().to_vec(),
        });
    }
    let end = range.start.checked_add(k).filter(|&e| e <= range.total);
    let end = end.ok_or_else(|| {
        bad(format!(
            "depth {}.. ({} of it) of a contraction of depth {}",
            range.start, k, range.total
        ))
    })?;
    if crate::contract::choose_order(rows, cols, range.total) == crate::contract::Order::Chain {
        return Err(Error::Attribute {
            name: "spec".into(),
            reason: format!(
                "a {rows}x{cols} contraction of depth {} runs in chain order, one sequence of \
                 products per output that no range of depth starts apart: split its rows or \
                 columns instead",
                range.total
            ),
        });
    }
    // Both operands as [R, C, k] (a repeated along C, b along R).
    let shape = [rows, cols, k];
    let a3 = crate::ArrayView::new(
        a.dtype(),
        &shape,
        &[a.strides()[fa], 0, a.strides()[ka]],
        a.layout().offset,
        a.data(),
    )?;
    let b3 = crate::ArrayView::new(
        b.dtype(),
        &shape,
        &[0, b.strides()[fb], b.strides()[kb]],
        b.layout().offset,
        b.data(),
    )?;
    let terms = Terms::product(&a3, &b3);
    terms.shape_dtype()?;
    let mut src = terms.source(&[2], spec.acc, tier)?;
    let data = dispatch(
        (ReduceOp::Sum, 0, true),
        spec.acc,
        tier,
        None,
        Job::Compute(&mut src, range.start, range.total),
        exec.thread_count(),
    )?;
    Ok(Partial {
        op: ReduceOp::Sum,
        stage: 0,
        dtype: spec.acc,
        map: TermMap::Product,
        fused: true,
        total: range.total,
        start: range.start,
        end,
        outputs: src.outputs,
        centres: 0,
        data,
    })
}

/// Write a lane-order contraction from the state of its whole depth
/// ([`contract_partial`] merged over `0..total`) into `dst` (`[R, C]`, any
/// dtype), plus `init` (of `dst`'s shape) where given: each output its
/// products' lane-order sum, then its init added, rounded once into `dst`,
/// as `contract` computes it.
///
/// # Errors
/// [`Error::Partial`] for a state that is not a whole contraction's;
/// [`Error::Shape`] for `dst` or `init` of another element count or shape;
/// [`Error::Layout`] for a `dst` that reaches an element twice.
pub fn contract_finish(
    state: &Partial,
    init: Option<&crate::ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    whole(state)?;
    if !state.fused {
        return Err(bad("not a contraction's state"));
    }
    let count: usize = dst.shape().iter().product();
    if count != state.outputs {
        return Err(Error::Shape {
            operand: "destination".into(),
            shape: dst.shape().to_vec(),
            target: vec![state.outputs],
        });
    }
    if let Some(i) = init {
        if i.shape() != dst.shape() {
            return Err(Error::Shape {
                operand: "init".into(),
                shape: i.shape().to_vec(),
                target: dst.shape().to_vec(),
            });
        }
    }
    check_destination(dst)?;
    let roots = dispatch(
        (ReduceOp::Sum, 0, true),
        state.dtype,
        Tier::Scalar,
        None,
        Job::Root(state),
        1,
    )?;
    match state.dtype {
        DType::F32 => finish_products::<f32>(&roots, init, dst, exec),
        _ => finish_products::<f64>(&roots, init, dst, exec),
    }
}

fn finish_products<F: LaneFloat + Bits + Default + crate::Element>(
    roots: &[u8],
    init: Option<&crate::ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let mut v: Vec<F> = roots.chunks_exact(F::SIZE).map(F::get).collect();
    if let Some(i) = init {
        let mut held = vec![F::default(); v.len()];
        let mut hv = ArrayViewMut::from_slice(&mut held, i.shape())?;
        crate::cast::cast(crate::cast::CastMode::Default, i, &mut hv, exec)?;
        for (x, &c) in v.iter_mut().zip(&held) {
            *x = *x + c;
        }
    }
    let src = crate::ArrayView::from_slice(&v, dst.shape())?;
    crate::cast::cast(crate::cast::CastMode::Default, &src, dst, exec)
}
