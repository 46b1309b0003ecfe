//! Compensated sums ([`super::ReduceOp::Sum2`]): the lane order of §5.3 with
//! each lane's running sum kept as a pair (s, c), where s is the plain
//! running sum and c gathers the exact error of each of its additions
//! (Ogita–Rump–Oishi's Sum2, and Dot2 where the terms are products formed
//! exactly by TwoProd). The terms are pairs of the carrier (df32 for f32 and
//! narrower, dd64 for f64, a pair dtype itself): a term (t, e) adds t to s
//! by TwoSum, whose error q is exact, and q + e to c.
//!
//! The order, per block of 1024 terms: term j to lane j mod 16; each lane
//! from (+0, +0) takes its terms in increasing number,
//! `s' = s + t; q = TwoSum error; c' = c + (q + e)`; the lanes fold as §5.3
//! says (lane i takes lane i + 8, then i + 4, i + 2, i + 1), and the blocks
//! combine by §5.3's tree, each combination of (s₁, c₁) and (s₂, c₂) being
//! `s = s₁ + s₂; q = its TwoSum error; c = (c₁ + c₂) + q`. The result is
//! s + c rounded once into the destination (s alone, with c dropped, where s
//! is not finite). Every tier runs the same operations in this order: the
//! vector tiers instantiate the one body below under their target features.

use super::engine::Pass;
use super::lanes::{BLOCK, LANES};
use crate::{Pair, Tier};
use tessera_generated::runtime::pair::PairFloat;

/// The compensated-sum pass over pair terms.
pub(crate) struct PairSum(pub Tier);

/// One term into a lane: TwoSum of the running sum and the term's leading
/// part, its error and the term's trailing part into the compensation.
#[inline(always)]
fn step<F: PairFloat>(s: &mut F, c: &mut F, t: Pair<F>) {
    let s1 = *s + t.hi;
    let bb = s1 - *s;
    let q = (*s - (s1 - bb)) + (t.hi - bb);
    *c = *c + (q + t.lo);
    *s = s1;
}

/// Two partial sums, left then right.
#[inline(always)]
pub(crate) fn join<F: PairFloat>(a: Pair<F>, b: Pair<F>) -> Pair<F> {
    let s = a.hi + b.hi;
    let bb = s - a.hi;
    let q = (a.hi - (s - bb)) + (b.hi - bb);
    Pair {
        hi: s,
        lo: (a.lo + b.lo) + q,
    }
}

/// One block's (s, c): the 16 lanes, then their fold.
#[inline(always)]
fn block_body<F: PairFloat>(x: &[Pair<F>]) -> Pair<F> {
    let mut s = [F::ZERO; LANES];
    let mut c = [F::ZERO; LANES];
    let mut chunks = x.chunks_exact(LANES);
    for ch in &mut chunks {
        for l in 0..LANES {
            step(&mut s[l], &mut c[l], ch[l]);
        }
    }
    for (l, &t) in chunks.remainder().iter().enumerate() {
        step(&mut s[l], &mut c[l], t);
    }
    let mut w = LANES / 2;
    while w >= 1 {
        for i in 0..w {
            let r = join(
                Pair { hi: s[i], lo: c[i] },
                Pair {
                    hi: s[i + w],
                    lo: c[i + w],
                },
            );
            s[i] = r.hi;
            c[i] = r.lo;
        }
        w /= 2;
    }
    Pair { hi: s[0], lo: c[0] }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;

    /// [`block_body`] compiled with AVX2.
    ///
    /// # Safety
    /// The CPU must run AVX2 (the caller's tier does).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn block_avx2<F: PairFloat>(x: &[Pair<F>]) -> Pair<F> {
        block_body(x)
    }

    /// [`block_body`] compiled with AVX-512.
    ///
    /// # Safety
    /// The CPU must run AVX-512 F/BW/VL/DQ (the caller's tier does).
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")]
    pub(super) unsafe fn block_avx512<F: PairFloat>(x: &[Pair<F>]) -> Pair<F> {
        block_body(x)
    }
}

/// One block's (s, c) on `tier` (the same bits on every tier: one body).
pub(crate) fn block_on<F: PairFloat>(tier: Tier, x: &[Pair<F>]) -> Pair<F> {
    debug_assert!(x.len() <= BLOCK);
    #[cfg(target_arch = "x86_64")]
    {
        if crate::tier::runs_avx512(tier) {
            // SAFETY: the tier was resolved against this CPU and runs AVX-512.
            return unsafe { x86::block_avx512(x) };
        }
        if crate::tier::runs_avx2(tier) {
            // SAFETY: the tier was resolved against this CPU and runs AVX2.
            return unsafe { x86::block_avx2(x) };
        }
    }
    let _ = tier;
    block_body(x)
}

impl<F: PairFloat + Send + Sync> Pass<Pair<F>> for PairSum {
    type V = Pair<F>;
    fn empty(&self) -> Pair<F> {
        Pair {
            hi: F::ZERO,
            lo: F::ZERO,
        }
    }
    fn block(&self, _: usize, _: usize, x: &[Pair<F>]) -> Pair<F> {
        block_on(self.0, x)
    }
    fn combine(&self, a: Pair<F>, b: Pair<F>) -> Pair<F> {
        join(a, b)
    }
}

/// The value of a pass's (s, c): the pair itself where s is finite, else
/// (s, +0) (an overflowed or NaN sum is the plain sum's).
pub(crate) fn settle<F: PairFloat>(v: Pair<F>) -> Pair<F> {
    if v.hi.finite() {
        v
    } else {
        Pair {
            hi: v.hi,
            lo: F::ZERO,
        }
    }
}
