//! Compensated contractions: the accumulators `df32` (pairs of f32) and
//! `dd64` (pairs of f64).
//!
//! Each operand element enters the pair's part dtype `F` (f32 or f64) as a
//! cast rounds it (complex operands are refused); init enters the pair as a
//! cast does (its exact value where it is an `F`, a pair or an integer the
//! pair holds). Each output keeps a running sum `s` and a compensation `c`.
//!
//! - **Chain order** (the rule of §5.5 on R, C and K): from init's (hi, lo)
//!   or (+0, +0), each product in increasing k by
//!   [`super::micro::pair_step`]: `s' = s + a·b` rounded, and what `s'`
//!   misses of `s + a·b` — TwoSum's leading error term `s − (s' − b')` plus
//!   `fma(a, b, −b')`, `b' = s' − s` — added to `c`.
//! - **Lane order**: the reduction order of §5.3 with
//!   [`crate::reduce::dot2`]'s lanes (Ogita–Rump–Oishi's Dot2 step: the
//!   product by TwoProd, its leading part into `s` by TwoSum, both errors
//!   into `c`), the lanes' fold and the block tree joining (s₁, c₁) and
//!   (s₂, c₂) as `s = s₁ + s₂` by TwoSum, `c = (c₁ + c₂) + q`; then init's
//!   pair joined to the total the same way.
//!
//! The output is the exact value `s + c` (as the TwoSum of its parts; `s`
//! alone where `s` is not finite), rounded once into the destination (a
//! pair destination takes the normalised pair). With n = K + 2 (the
//! products, init, and the chain step's one extra rounding), the error
//! before that rounding is within `γ(n)²·(|init| + Σ|a||b|)`, so the result
//! is within `u·|x| + γ(n)²·(|init| + Σ|a||b|)` of the exact `x` for a
//! destination of unit roundoff u (Ogita, Rump and Oishi, *Accurate sum
//! and dot product*, SIAM J. Sci. Comput. 26 (2005), Theorem 5.3, whose
//! count the lane tree's TwoSum joins keep): the plain accumulator's
//! accuracy in twice its precision. (On a CPU, f32 operands contracted in
//! the plain `f64` accumulator are more accurate still, and faster: each
//! f32 product is exact in f64.)

use super::acc::Src;
use super::association::{choose as choose_order, Order};
use super::drive_real::{inits_in_acc, to_acc};
use super::geometry::Tables;
use super::lane::{lane_tile_streamed, LaneSum};
use super::micro::{self, PlaneKernel};
use super::{geometry, planes, ContractSpec};
use crate::alloc::try_collect;
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::reduce::compensated::{join, settle, FloatBlock};
use crate::tier::Exec;
use crate::{Class, Pair, Tier};

/// A pair's part dtype with its compensated microkernel on each tier.
pub(super) trait PairPart:
    FloatBlock + planes::Planar<T = Self> + super::acc::Acc + Default + Send + Sync
{
    /// The kernel of `tier` and its `(MR, NR)`.
    fn kernel(tier: Tier) -> (PlaneKernel<Self>, usize, usize);
}

impl PairPart for f32 {
    fn kernel(tier: Tier) -> (PlaneKernel<Self>, usize, usize) {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return (micro::avx512_df32_4x32, 4, 32);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return (micro::avx2_df32_4x8, 4, 8);
        }
        let _ = tier;
        (micro::pscalar::<f32, 4, 8>, 4, 8)
    }
}

impl PairPart for f64 {
    fn kernel(tier: Tier) -> (PlaneKernel<Self>, usize, usize) {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return (micro::avx512_dd64_4x16, 4, 16);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return (micro::avx2_dd64_4x4, 4, 4);
        }
        let _ = tier;
        (micro::pscalar::<f64, 4, 4>, 4, 4)
    }
}

/// Lane order with Dot2 lanes ([`crate::reduce::dot2`]'s blocks and joins).
struct Dot2Lanes<F>(Tier, core::marker::PhantomData<F>);

impl<F: PairPart> LaneSum for Dot2Lanes<F> {
    type T = F;
    type V = Pair<F>;
    fn zero(&self) -> Pair<F> {
        Pair {
            hi: <F as super::acc::Bits>::ZERO,
            lo: <F as super::acc::Bits>::ZERO,
        }
    }
    fn block(&self, x: &[F], y: &[F]) -> Pair<F> {
        F::dot_block_on(self.0, x, y)
    }
    fn join(&self, l: Pair<F>, r: Pair<F>) -> Pair<F> {
        join(l, r)
    }
}

/// A contraction accumulated in pairs of `F` (see the [module](self)).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_pair<F: PairPart>(
    tier: Tier,
    exec: Exec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
    forced: Option<Order>,
) -> Result<()>
where
    Pair<F>: crate::Element + Default,
{
    for (name, v) in [("a", a), ("b", b)] {
        if v.dtype().info().class == Class::Complex {
            return Err(Error::DTypeUnsupported {
                operand: format!("contract: {name}"),
                dtype: v.dtype(),
                reason: format!("a {} accumulator takes real operands", spec.acc),
            });
        }
    }
    let threads = exec.thread_count();
    let ea = to_acc::<F>(exec, a, <F as crate::Element>::DTYPE)?;
    let eb = to_acc::<F>(exec, b, <F as crate::Element>::DTYPE)?;
    let g = geometry(a.shape(), &ea.strides, b.shape(), &eb.strides, spec)?;
    let t = Tables::of(&g, ea.offset, eb.offset, true)?;
    let (r, c, k) = (t.a_rows.len(), t.b_cols.len(), t.a_ks.len());
    let order = forced.unwrap_or_else(|| choose_order(r, c, k));
    let (sa, sb) = (Src::new(&ea.bytes), Src::new(&eb.bytes));
    let len = dst.layout().len();
    let mut out = inits_in_acc::<Pair<F>>(exec, init, dst)?;
    if order == Order::Chain {
        let mut s = try_collect(len, out.iter().map(|x| x.hi), "the destination in acc")?;
        let mut cc = try_collect(len, out.iter().map(|x| x.lo), "the destination in acc")?;
        // SAFETY: the tables come from the validated (or copied) operands,
        // of dtype F; the kernel is the resolved tier's, which this CPU runs.
        unsafe { planes::chain::<F>(F::kernel(tier), threads, sa, sb, &t, &mut s, &mut cc)? };
        for ((o, hi), lo) in out.iter_mut().zip(s).zip(cc) {
            *o = Pair { hi, lo };
        }
    } else if k > 0 {
        let sum = Dot2Lanes::<F>(tier, core::marker::PhantomData);
        for (bi, tile) in out.chunks_mut(r * c).enumerate() {
            // SAFETY: the tables' positions from these bases are in the
            // operands, of dtype F.
            unsafe {
                lane_tile_streamed(
                    &sum,
                    (sa, t.a_batch[bi], &t.a_rows, &t.a_ks),
                    (sb, t.b_batch[bi], &t.b_cols, &t.b_ks),
                    tile,
                    threads,
                )
            }
        }
    }
    for o in &mut out {
        *o = normal(settle(*o));
    }
    crate::cast::cast_results(&out, dst, &exec)
}

/// A finite (s, c) as the TwoSum of its parts (the same exact value, `c`
/// within half an ulp of `s`); anything else as it is.
fn normal<F: PairPart>(v: Pair<F>) -> Pair<F> {
    let n = crate::pair::two_sum(v.hi, v.lo);
    if n.hi.finite() {
        n
    } else {
        v
    }
}
