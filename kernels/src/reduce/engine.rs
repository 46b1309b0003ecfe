//! The reduction engine: a pass reduces each output's blocks and combines them
//! by the block tree as they are computed (O(log B) state, never a vector of
//! block values), on the calling thread or over rayon threads (whole outputs,
//! or whole nodes of one output's tree), with the same bits either way.

use super::lanes::{apply_in_place, LaneFloat, BLOCK};
use super::source::{MapTerms, Scratch, Source};
use super::tree::{tree_in_place, tree_parallel, TreeFold};
use crate::error::Result;
use crate::{Element, LoopFn, Tier};
use num_complex::Complex;
use rayon::prelude::*;

/// Terms (outputs × terms per output) below which a call stays on the calling
/// thread.
pub(crate) const PARALLEL_MIN: usize = 1 << 16;

/// Neighbouring outputs whose gathered terms go block by block together.
const GROUP: usize = 16;

/// One pass over every output's terms: a value per block, and the combination
/// of two neighbouring runs of blocks (left, right).
pub(crate) trait Pass<C>: Sync {
    /// A partial result.
    type V: Copy + Send + Sync;
    /// The result of no term.
    fn empty(&self) -> Self::V;
    /// The value of one block of output `o`, whose first term is number `t0`.
    fn block(&self, o: usize, t0: usize, x: &[C]) -> Self::V;
    /// Left run then right run.
    fn combine(&self, a: Self::V, b: Self::V) -> Self::V;
    /// Whether the pass reads a two-operand source's operands themselves
    /// ([`Pass::block2`]) instead of its mapped terms.
    const TWO: bool = false;
    /// The value of one block from the two operands' values `x`, `y` (a
    /// pass with [`Pass::TWO`] set).
    fn block2(&self, o: usize, t0: usize, x: &[C], y: &[C]) -> Self::V {
        let _ = (o, t0, y);
        self.block(o, t0, x)
    }
    /// The values of consecutive blocks of output `o` from term `t0` (a
    /// multiple of the block), `out` one per block.
    fn blocks(&self, o: usize, t0: usize, x: &[C], out: &mut [Self::V]) {
        for (i, (v, c)) in out.iter_mut().zip(x.chunks(BLOCK)).enumerate() {
            *v = self.block(o, t0 + i * BLOCK, c);
        }
    }
}

/// A carrier the engine can fetch.
pub(crate) trait Carrier: Element + Default + Clone + MapTerms + Send + Sync {}
impl<T: Element + Default + Clone + MapTerms + Send + Sync> Carrier for T {}

/// Blocks whose values are computed together (then fed to the tree).
const BATCH: usize = 64;

/// `n` copies of `x` in a vector reserved fallibly ([`Error::Alloc`] where
/// the allocator refuses): scratch proportional to a call's sizes.
pub(crate) use crate::alloc::try_filled;

/// Run `pass` over every output of `src` with up to `threads` threads: a
/// value per output, each its blocks' values combined by the block tree as
/// they are computed ([`TreeFold`]), so the state is O(log B) per output
/// whatever the number B of blocks. Refuses ([`Error::Alloc`]) only the
/// vector of results, one per output, where it cannot be allocated.
pub(crate) fn run_pass<C: Carrier, P: Pass<C>>(
    src: &Source,
    pass: &P,
    threads: usize,
) -> Result<Vec<P::V>> {
    let (outs, n) = (src.outputs, src.n);
    let blocks = n.div_ceil(BLOCK);
    let mut res = try_filled(outs, pass.empty(), "reduction results")?;
    if outs == 0 || blocks == 0 {
        return Ok(res);
    }
    let threads = if outs.saturating_mul(n) < PARALLEL_MIN {
        1
    } else {
        threads.max(1)
    };
    let combine = |a, b| pass.combine(a, b);
    // One block of output o from term t0.
    let one = |o: usize, t0: usize, len: usize, s: &mut Scratch<C>| -> P::V {
        if P::TWO {
            let (x, y) = src.fetch_two(o, t0, len, s);
            pass.block2(o, t0, x, y)
        } else {
            pass.block(o, t0, src.fetch(o, t0, len, s))
        }
    };
    // Blocks b0 .. b0 + tt.len() of output o into tt.
    let fill = |o: usize, b0: usize, tt: &mut [P::V], s: &mut Scratch<C>| {
        let t0 = b0 * BLOCK;
        let t1 = ((b0 + tt.len()) * BLOCK).min(n);
        if !P::TWO {
            if let Some(x) = src.direct::<C>(o, t0, t1 - t0) {
                pass.blocks(o, t0, x, tt);
                return;
            }
        }
        for (i, v) in tt.iter_mut().enumerate() {
            let b0 = t0 + i * BLOCK;
            let len = (n - b0).min(BLOCK);
            *v = one(o, b0, len, s);
        }
    };
    // The tree of blocks b0 .. b0 + m of output o (a node of its block
    // tree), a batch of block values at a time (one batch: in place).
    let node = |o: usize, b0: usize, m: usize, s: &mut Scratch<C>, tt: &mut [P::V]| -> P::V {
        if m <= tt.len() {
            fill(o, b0, &mut tt[..m], s);
            return tree_in_place(&mut tt[..m], &combine).unwrap_or_else(|| pass.empty());
        }
        let mut tree = TreeFold::new(m, pass.empty());
        let mut b = b0;
        while b < b0 + m {
            let k = tt.len().min(b0 + m - b);
            fill(o, b, &mut tt[..k], s);
            for &v in &tt[..k] {
                tree.push(v, &combine);
            }
            b += k;
        }
        tree.finish(&combine).unwrap_or_else(|| pass.empty())
    };
    // Outputs o0 .. o0 + r.len() into r. Gathered terms go block by block
    // over groups of neighbouring outputs, which reuse the lines a block
    // touches (a reduction over an outer axis); contiguous ones output by
    // output.
    let outputs = |o0: usize, r: &mut [P::V]| {
        let mut s = src.scratch::<C>();
        if r.len() == 1 || src.direct::<C>(o0, 0, n).is_some() {
            let mut tt = [pass.empty(); BATCH];
            for (i, v) in r.iter_mut().enumerate() {
                *v = node(o0 + i, 0, blocks, &mut s, &mut tt);
            }
            return;
        }
        if blocks <= BATCH {
            // Few blocks: a group's block values side by side (at most
            // GROUP · BATCH of them), each output's tree in place.
            let mut totals = vec![pass.empty(); GROUP.min(r.len()) * blocks];
            for (g, rg) in r.chunks_mut(GROUP).enumerate() {
                let og = o0 + g * GROUP;
                for b in 0..blocks {
                    let t0 = b * BLOCK;
                    let len = (n - t0).min(BLOCK);
                    for i in 0..rg.len() {
                        totals[i * blocks + b] = one(og + i, t0, len, &mut s);
                    }
                }
                for (i, v) in rg.iter_mut().enumerate() {
                    let tt = &mut totals[i * blocks..(i + 1) * blocks];
                    *v = tree_in_place(tt, &combine).unwrap_or_else(|| pass.empty());
                }
            }
            return;
        }
        let mut trees: Vec<TreeFold<P::V>> = Vec::with_capacity(GROUP);
        for (g, rg) in r.chunks_mut(GROUP).enumerate() {
            let og = o0 + g * GROUP;
            trees.clear();
            trees.extend((0..rg.len()).map(|_| TreeFold::new(blocks, pass.empty())));
            for b in 0..blocks {
                let t0 = b * BLOCK;
                let len = (n - t0).min(BLOCK);
                for (i, tree) in trees.iter_mut().enumerate() {
                    tree.push(one(og + i, t0, len, &mut s), &combine);
                }
            }
            for (v, tree) in rg.iter_mut().zip(trees.drain(..)) {
                *v = tree.finish(&combine).unwrap_or_else(|| pass.empty());
            }
        }
    };
    if threads == 1 {
        outputs(0, &mut res);
    } else if outs >= threads || blocks < 2 {
        let chunk = outs.div_ceil(threads);
        res.par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(c, r)| outputs(c * chunk, r));
    } else {
        // Few outputs, many blocks: threads take nodes of each output's
        // block tree (whole blocks), combined by the tree above them.
        for (o, r) in res.iter_mut().enumerate() {
            let nodes = |list: &[(usize, usize)], vals: &mut [P::V]| {
                let mut s = src.scratch::<C>();
                let mut tt = [pass.empty(); BATCH];
                for (v, &(b0, m)) in vals.iter_mut().zip(list) {
                    *v = node(o, b0, m, &mut s, &mut tt);
                }
            };
            *r = tree_parallel(blocks, threads, pass.empty(), &nodes, &combine)
                .unwrap_or_else(|| pass.empty());
        }
    }
    Ok(res)
}

/// IEEE 754-2019 maximum: NaN propagates, -0 < +0.
#[inline]
pub(crate) fn fmax<F: LaneFloat>(a: F, b: F) -> F {
    if a.is_nan() {
        a
    } else if b.is_nan() || b > a || (b == a && a.is_sign_negative()) {
        b
    } else {
        a
    }
}

/// IEEE 754-2019 minimum: NaN propagates, -0 < +0.
#[inline]
pub(crate) fn fmin<F: LaneFloat>(a: F, b: F) -> F {
    if a.is_nan() {
        a
    } else if b.is_nan() || b < a || (b == a && b.is_sign_negative()) {
        b
    } else {
        a
    }
}

/// Whether `cand` is strictly more extreme than `cur` (max: larger), NaN the
/// most extreme of all, -0 < +0.
#[inline]
pub(crate) fn beats<F: LaneFloat>(cand: F, cur: F, max: bool) -> bool {
    if cur.is_nan() {
        return false;
    }
    if cand.is_nan() {
        return true;
    }
    if max {
        cand > cur || (cand == cur && cur.is_sign_negative() && !cand.is_sign_negative())
    } else {
        cand < cur || (cand == cur && cand.is_sign_negative() && !cur.is_sign_negative())
    }
}

/// Float Sum in lane order on a tier.
pub(crate) struct FSum(pub Tier);
impl<F: LaneFloat> Pass<F> for FSum {
    type V = F;
    fn empty(&self) -> F {
        F::ZERO
    }
    #[inline]
    fn block(&self, _: usize, _: usize, x: &[F]) -> F {
        F::sum_block_on(self.0, x)
    }
    fn combine(&self, a: F, b: F) -> F {
        a + b
    }
    fn blocks(&self, _: usize, _: usize, x: &[F], out: &mut [F]) {
        F::sum_blocks_on(self.0, x, out)
    }
}

/// Float Prod in lane order on a tier.
pub(crate) struct FProd(pub Tier);
impl<F: LaneFloat> Pass<F> for FProd {
    type V = F;
    fn empty(&self) -> F {
        F::ONE
    }
    #[inline]
    fn block(&self, _: usize, _: usize, x: &[F]) -> F {
        F::prod_block_on(self.0, x)
    }
    fn combine(&self, a: F, b: F) -> F {
        a * b
    }
}

/// Float Max (`true`) or Min (exact; order free), each block's extreme on
/// a tier (`extreme.rs`: vectorised, the fold's bits).
pub(crate) struct FExt(pub bool, pub Tier);
impl<F: LaneFloat> Pass<F> for FExt {
    type V = F;
    fn empty(&self) -> F {
        if self.0 {
            -F::INF
        } else {
            F::INF
        }
    }
    fn block(&self, _: usize, _: usize, x: &[F]) -> F {
        F::ext_block_on(self.1, x, self.0)
    }
    fn combine(&self, a: F, b: F) -> F {
        if self.0 {
            fmax(a, b)
        } else {
            fmin(a, b)
        }
    }
}

/// The largest |x| (NaN propagates).
pub(crate) struct AbsMax;
impl<F: LaneFloat> Pass<F> for AbsMax {
    type V = F;
    fn empty(&self) -> F {
        F::ZERO
    }
    fn block(&self, _: usize, _: usize, x: &[F]) -> F {
        x.iter().fold(F::ZERO, |m, &v| fmax(m, v.abs()))
    }
    fn combine(&self, a: F, b: F) -> F {
        fmax(a, b)
    }
}

/// Float ArgMax (`true`) or ArgMin: the first position of the extreme, a NaN
/// the extreme of all.
pub(crate) struct FArg(pub bool, pub Tier);
impl<F: LaneFloat> Pass<F> for FArg {
    type V = (F, usize);
    fn empty(&self) -> (F, usize) {
        (F::NAN, usize::MAX)
    }
    fn block(&self, _: usize, t0: usize, x: &[F]) -> (F, usize) {
        let (v, j) = F::arg_block_on(self.1, x, self.0);
        (v, t0 + j)
    }
    fn combine(&self, a: (F, usize), b: (F, usize)) -> (F, usize) {
        if beats(b.0, a.0, self.0) {
            b
        } else {
            a
        }
    }
}

/// The sum of `e(x - c)` for Logsumexp's second pass, `c` per output, `e` the
/// exp that is 0 below the cut.
pub(crate) struct LseSum<F> {
    pub tier: Tier,
    pub c: Vec<F>,
    /// The tier's `exp` kernel of the carrier (None: the element function,
    /// the same bits).
    pub exp: Option<LoopFn>,
}
impl<F: LaneFloat> Pass<F> for LseSum<F> {
    type V = F;
    fn empty(&self) -> F {
        F::ZERO
    }
    fn block(&self, o: usize, _: usize, x: &[F]) -> F {
        let c = self.c[o];
        let mut t = [F::ZERO; BLOCK];
        let t = &mut t[..x.len()];
        // Below the cut the argument becomes -∞, whose exp is exactly +0.
        for (d, &v) in t.iter_mut().zip(x) {
            let z = v - c;
            *d = if z < F::CUT { -F::INF } else { z };
        }
        match self.exp {
            Some(f) => apply_in_place(f, t),
            None => t.iter_mut().for_each(|v| *v = v.exp()),
        }
        F::sum_block_on(self.tier, t)
    }
    fn combine(&self, a: F, b: F) -> F {
        a + b
    }
}

/// Moments' second pass: Σ d² and Σ d, d = x - c, each in lane order.
pub(crate) struct DevSums<F> {
    pub tier: Tier,
    pub c: Vec<F>,
}
impl<F: LaneFloat> Pass<F> for DevSums<F> {
    type V = (F, F);
    fn empty(&self) -> (F, F) {
        (F::ZERO, F::ZERO)
    }
    fn block(&self, o: usize, _: usize, x: &[F]) -> (F, F) {
        let c = self.c[o];
        let mut d = [F::ZERO; BLOCK];
        let mut d2 = [F::ZERO; BLOCK];
        for ((p, q), &v) in d.iter_mut().zip(d2.iter_mut()).zip(x) {
            *p = v - c;
            *q = *p * *p;
        }
        let n = x.len();
        (
            F::sum_block_on(self.tier, &d2[..n]),
            F::sum_block_on(self.tier, &d[..n]),
        )
    }
    fn combine(&self, a: (F, F), b: (F, F)) -> (F, F) {
        (a.0 + b.0, a.1 + b.1)
    }
}

/// L2's second pass: Σ (x / s)², s per output.
pub(crate) struct ScaledSquares<F> {
    pub tier: Tier,
    pub s: Vec<F>,
}
impl<F: LaneFloat> Pass<F> for ScaledSquares<F> {
    type V = F;
    fn empty(&self) -> F {
        F::ZERO
    }
    fn block(&self, o: usize, _: usize, x: &[F]) -> F {
        let s = self.s[o];
        let mut t = [F::ZERO; BLOCK];
        for (d, &v) in t.iter_mut().zip(x) {
            let q = v / s;
            *d = q * q;
        }
        F::sum_block_on(self.tier, &t[..x.len()])
    }
    fn combine(&self, a: F, b: F) -> F {
        a + b
    }
}

/// An exact integer carrier (i64 or u64): wrapping sums and products.
pub(crate) trait IntCarrier: Carrier + Ord {
    const ZERO: Self;
    const ONE: Self;
    const MIN: Self;
    const MAX: Self;
    fn wadd(self, b: Self) -> Self;
    fn wmul(self, b: Self) -> Self;
}
macro_rules! int_carrier {
    ($($t:ty),*) => {$(
        impl IntCarrier for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            fn wadd(self, b: Self) -> Self { self.wrapping_add(b) }
            fn wmul(self, b: Self) -> Self { self.wrapping_mul(b) }
        }
    )*};
}
int_carrier!(i64, u64);

/// Integer Sum or Prod (wrapping, exact: the order is free).
pub(crate) struct ISum(pub bool);
impl<I: IntCarrier> Pass<I> for ISum {
    type V = I;
    fn empty(&self) -> I {
        if self.0 {
            I::ONE
        } else {
            I::ZERO
        }
    }
    fn block(&self, _: usize, _: usize, x: &[I]) -> I {
        if self.0 {
            x.iter().fold(I::ONE, |a, &b| a.wmul(b))
        } else {
            x.iter().fold(I::ZERO, |a, &b| a.wadd(b))
        }
    }
    fn combine(&self, a: I, b: I) -> I {
        if self.0 {
            a.wmul(b)
        } else {
            a.wadd(b)
        }
    }
}

/// Integer Max (`true`) or Min.
pub(crate) struct IExt(pub bool);
impl<I: IntCarrier> Pass<I> for IExt {
    type V = I;
    fn empty(&self) -> I {
        if self.0 {
            I::MIN
        } else {
            I::MAX
        }
    }
    fn block(&self, _: usize, _: usize, x: &[I]) -> I {
        let e = <Self as Pass<I>>::empty(self);
        if self.0 {
            x.iter().fold(e, |a, &b| a.max(b))
        } else {
            x.iter().fold(e, |a, &b| a.min(b))
        }
    }
    fn combine(&self, a: I, b: I) -> I {
        if self.0 {
            a.max(b)
        } else {
            a.min(b)
        }
    }
}

/// Integer ArgMax (`true`) or ArgMin, first occurrence.
pub(crate) struct IArg(pub bool);
impl<I: IntCarrier> Pass<I> for IArg {
    type V = (I, usize);
    fn empty(&self) -> (I, usize) {
        (I::ZERO, usize::MAX)
    }
    fn block(&self, _: usize, t0: usize, x: &[I]) -> (I, usize) {
        let mut best = (x[0], t0);
        for (j, &v) in x.iter().enumerate().skip(1) {
            if (self.0 && v > best.0) || (!self.0 && v < best.0) {
                best = (v, t0 + j);
            }
        }
        best
    }
    fn combine(&self, a: (I, usize), b: (I, usize)) -> (I, usize) {
        if (self.0 && b.0 > a.0) || (!self.0 && b.0 < a.0) {
            b
        } else {
            a
        }
    }
}

/// Complex Sum (lane order on each part) or Prod (lane order, each lane from
/// its first term, the complex product `(ac - bd) + i(ad + bc)` with each
/// product and sum rounded).
pub(crate) struct CSumProd(pub bool);

#[inline]
pub(crate) fn cmul<F: LaneFloat>(a: Complex<F>, b: Complex<F>) -> Complex<F> {
    Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

/// The complex lane operation: a sum, or the product `(ac - bd) + i(ad + bc)`.
#[inline]
fn complex_op<F: LaneFloat>(prod: bool, a: Complex<F>, b: Complex<F>) -> Complex<F> {
    if prod {
        cmul(a, b)
    } else {
        Complex::new(a.re + b.re, a.im + b.im)
    }
}

/// Term `j` of a block (its position from the block's start) into complex
/// lane `j mod 16`: a product lane starts from its first term, a sum lane
/// from +0.
#[inline]
pub(crate) fn complex_push<F: LaneFloat>(
    l: &mut [Complex<F>; 16],
    j: usize,
    v: Complex<F>,
    prod: bool,
) {
    let i = j % 16;
    l[i] = if j < 16 && prod {
        v
    } else {
        complex_op(prod, l[i], v)
    };
}

/// The block value of complex lanes that hold `count` terms: the lane fold,
/// lanes holding no term taking no part.
pub(crate) fn complex_fold<F: LaneFloat>(
    mut l: [Complex<F>; 16],
    count: usize,
    prod: bool,
) -> Complex<F> {
    let used = count.min(16);
    let mut w = 8;
    while w >= 1 {
        for i in 0..w {
            if i + w < used {
                l[i] = complex_op(prod, l[i], l[i + w]);
            }
        }
        w /= 2;
    }
    l[0]
}

/// One block of complex terms in lane order (lanes holding no term take no
/// part).
pub(crate) fn complex_block<F: LaneFloat>(x: &[Complex<F>], prod: bool) -> Complex<F> {
    let mut l = [Complex::new(F::ZERO, F::ZERO); 16];
    for (j, &v) in x.iter().enumerate() {
        complex_push(&mut l, j, v, prod);
    }
    complex_fold(l, x.len(), prod)
}

impl<F: LaneFloat> Pass<Complex<F>> for CSumProd
where
    Complex<F>: Carrier,
{
    type V = Complex<F>;
    fn empty(&self) -> Complex<F> {
        if self.0 {
            Complex::new(F::ONE, F::ZERO)
        } else {
            Complex::new(F::ZERO, F::ZERO)
        }
    }
    fn block(&self, _: usize, _: usize, x: &[Complex<F>]) -> Complex<F> {
        complex_block(x, self.0)
    }
    fn combine(&self, a: Complex<F>, b: Complex<F>) -> Complex<F> {
        complex_op(self.0, a, b)
    }
}

/// Most reductions one fused pass computes.
pub(crate) const FUSED: usize = 8;

/// Several one-pass float reductions of one loop (Sum, Prod, Max, Min,
/// ArgMax, ArgMin; Mean as its Sum): each block of terms is fetched once and
/// every reduction takes it, each with the bits it has alone.
pub(crate) struct Fused {
    pub tier: Tier,
    pub ops: Vec<super::ReduceOp>,
}

impl<F: LaneFloat> Pass<F> for Fused {
    type V = [(F, usize); FUSED];
    fn empty(&self) -> Self::V {
        let mut v = [(F::ZERO, usize::MAX); FUSED];
        for (slot, op) in v.iter_mut().zip(&self.ops) {
            *slot = match op {
                super::ReduceOp::Prod => (F::ONE, 0),
                super::ReduceOp::Max => (-F::INF, 0),
                super::ReduceOp::Min => (F::INF, 0),
                super::ReduceOp::ArgMax | super::ReduceOp::ArgMin => (F::NAN, usize::MAX),
                _ => (F::ZERO, 0),
            };
        }
        v
    }
    fn block(&self, o: usize, t0: usize, x: &[F]) -> Self::V {
        let mut v = Pass::<F>::empty(self);
        for (slot, op) in v.iter_mut().zip(&self.ops) {
            *slot = match op {
                super::ReduceOp::Prod => (F::prod_block_on(self.tier, x), 0),
                super::ReduceOp::Max => (FExt(true, self.tier).block(o, t0, x), 0),
                super::ReduceOp::Min => (FExt(false, self.tier).block(o, t0, x), 0),
                super::ReduceOp::ArgMax => FArg(true, self.tier).block(o, t0, x),
                super::ReduceOp::ArgMin => FArg(false, self.tier).block(o, t0, x),
                _ => (F::sum_block_on(self.tier, x), 0),
            };
        }
        v
    }
    fn combine(&self, a: Self::V, b: Self::V) -> Self::V {
        let mut v = a;
        for ((slot, &r), op) in v.iter_mut().zip(&b).zip(&self.ops) {
            *slot = match op {
                super::ReduceOp::Prod => (slot.0 * r.0, 0),
                super::ReduceOp::Max => (fmax(slot.0, r.0), 0),
                super::ReduceOp::Min => (fmin(slot.0, r.0), 0),
                super::ReduceOp::ArgMax => Pass::<F>::combine(&FArg(true, self.tier), *slot, r),
                super::ReduceOp::ArgMin => Pass::<F>::combine(&FArg(false, self.tier), *slot, r),
                _ => (slot.0 + r.0, 0),
            };
        }
        v
    }
}
