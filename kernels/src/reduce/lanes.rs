//! The lane order of float sums and products (ARCHITECTURE.md §5.3), per tier, and the
//! lane-level API for callers that fold chunk by chunk.
//!
//! A block holds at most [`BLOCK`] consecutive terms; term `j` of a block goes
//! to lane `j mod 16`; each lane adds its terms in increasing number from +0
//! (a product multiplies them from its first term); the lanes fold 16 → 8 → 4
//! → 2 → 1 (lane `i` takes lane `i + 8` for `i < 8`, then `i + 4`, `i + 2`,
//! and lane 0 takes lane 1); the blocks combine by [`combine_blocks`]'s tree.
//!
//! The vector tiers keep the 16 lanes in registers, one generic body over
//! `crate::simd::RealReg` instantiated per instruction set and carrier (on
//! AVX2 two `__m256` for f32, four `__m256d` for f64; on AVX-512 one
//! `__m512`, two `__m512d`); the scalar tier keeps them in an array of 16.
//! The block tree itself is `tree.rs`'s. A sum's lanes start from +0 and a
//! product's from 1: a lane sum that starts from +0 is never -0, so an empty
//! lane (+0) changes nothing it is added to, and multiplying by 1 is exact,
//! so both give the bits of "a lane with no term takes no part".

use super::tree::tree;
use crate::error::{Error, Result};
use crate::tier::kernel_table;
use crate::tier::Exec;
use crate::{kernel_index, DType, Element, Kind, LoopFn, Tier, Variant};
use tessera_generated::runtime::math;

/// Terms per block of the lane order.
pub const BLOCK: usize = 1024;
/// Lanes per block.
pub const LANES: usize = 16;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A float carrier of the lane order: `f32` or `f64`.
pub trait LaneFloat:
    sealed::Sealed
    + Element
    + Copy
    + Default
    + Send
    + Sync
    + PartialOrd
    + core::fmt::Debug
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Div<Output = Self>
    + core::ops::Neg<Output = Self>
{
    /// +0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// +∞.
    const INF: Self;
    /// A quiet NaN.
    const NAN: Self;
    /// The least integer whose exp is normal (-87 for f32, -708 for f64): an
    /// exp of anything below it counts as 0 in Logsumexp.
    const CUT: Self;
    /// The carrier's dtype.
    const CARRIER: DType;
    /// Unit roundoff (2^-24 for f32, 2^-53 for f64).
    const U: f64;
    /// Whether the value is a NaN.
    fn is_nan(self) -> bool;
    /// Whether the value is finite.
    fn is_finite(self) -> bool;
    /// Whether the sign bit is set.
    fn is_sign_negative(self) -> bool;
    /// e^x: the `exp` kind's function (within 1 ulp; the same bits on every
    /// tier and platform, no libm).
    fn exp(self) -> Self;
    /// ln x: the `log` kind's function (within 1 ulp, as `exp`).
    fn ln(self) -> Self;
    /// The kernel of a unary float `kind` for this carrier on `tier`
    /// (contiguous): its results have the bits of [`LaneFloat::exp`] and
    /// [`LaneFloat::ln`] for `exp` and `log`.
    fn unary_kernel(tier: Tier, kind: Kind) -> Option<LoopFn> {
        let table = kernel_table(tier)?;
        Some(table[kernel_index(kind, Self::CARRIER, Variant::Contig)?])
    }
    /// |x|.
    fn abs(self) -> Self;
    /// √x, correctly rounded.
    fn sqrt(self) -> Self;
    /// The count `n` rounded into the carrier.
    fn from_count(n: usize) -> Self;
    /// To f64 (exact).
    fn to_f64(self) -> f64;
    /// The 16 sum lanes of one block (at most [`BLOCK`] terms) on `tier`.
    #[doc(hidden)]
    fn sum_lanes_on(tier: Tier, x: &[Self]) -> [Self; LANES];
    /// The 16 product lanes of one block on `tier`.
    #[doc(hidden)]
    fn prod_lanes_on(tier: Tier, x: &[Self]) -> [Self; LANES];
    /// One block's folded sum on `tier`.
    #[doc(hidden)]
    fn sum_block_on(tier: Tier, x: &[Self]) -> Self;
    /// One block's folded product on `tier`.
    #[doc(hidden)]
    fn prod_block_on(tier: Tier, x: &[Self]) -> Self;
    /// The folded sums of consecutive blocks of `x` (the last possibly
    /// partial) into `out`, one per block, on `tier` (as many blocks as both
    /// hold).
    #[doc(hidden)]
    fn sum_blocks_on(tier: Tier, x: &[Self], out: &mut [Self]);
    /// One block's IEEE 754-2019 maximum (`max`) or minimum on `tier`
    /// (`reduce/extreme.rs`; −∞ or +∞ for no term).
    #[doc(hidden)]
    fn ext_block_on(tier: Tier, x: &[Self], max: bool) -> Self;
    /// One non-empty block's first maximum (`max`) or minimum, a NaN the
    /// most extreme, and its position, on `tier` (`reduce/extreme.rs`).
    #[doc(hidden)]
    fn arg_block_on(tier: Tier, x: &[Self], max: bool) -> (Self, usize);
}

/// The lanes of a block, the scalar tier's way: an array of 16.
#[inline(always)]
fn lanes_scalar<F: Copy>(x: &[F], init: F, op: impl Fn(F, F) -> F) -> [F; LANES] {
    let mut l = [init; LANES];
    let mut chunks = x.chunks_exact(LANES);
    for c in &mut chunks {
        for i in 0..LANES {
            l[i] = op(l[i], c[i]);
        }
    }
    for (i, &v) in chunks.remainder().iter().enumerate() {
        l[i] = op(l[i], v);
    }
    l
}

/// Fold 16 lanes: i takes i + 8, then i + 4, then i + 2, then 0 takes 1.
#[inline(always)]
fn fold<F: Copy>(mut l: [F; LANES], op: impl Fn(F, F) -> F) -> F {
    for i in 0..8 {
        l[i] = op(l[i], l[i + 8]);
    }
    for i in 0..4 {
        l[i] = op(l[i], l[i + 4]);
    }
    for i in 0..2 {
        l[i] = op(l[i], l[i + 2]);
    }
    op(l[0], l[1])
}

macro_rules! lane_float {
    ($t:ty, $dt:ident, $cut:expr, $u:expr, $avx:ident, $zmm:ident, $ext:ident, $exp:path, $ln:path) => {
        impl LaneFloat for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const INF: Self = <$t>::INFINITY;
            const NAN: Self = <$t>::NAN;
            const CUT: Self = $cut;
            const CARRIER: DType = DType::$dt;
            const U: f64 = $u;
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            fn exp(self) -> Self {
                $exp(self)
            }
            fn ln(self) -> Self {
                $ln(self)
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn from_count(n: usize) -> Self {
                n as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn ext_block_on(tier: Tier, x: &[Self], max: bool) -> Self {
                super::extreme::$ext::ext(tier, x, max)
            }
            fn arg_block_on(tier: Tier, x: &[Self], max: bool) -> (Self, usize) {
                super::extreme::$ext::arg(tier, x, max)
            }
            #[inline]
            fn sum_lanes_on(tier: Tier, x: &[Self]) -> [Self; LANES] {
                debug_assert!(x.len() <= BLOCK);
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX-512 F, AVX2 and FMA: the tier
                    // executes them (`runs_avx512`) and this CPU runs the tier
                    // (`available`).
                    return unsafe { $zmm::lanes::<false>(x) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX2 and FMA: the tier executes them
                    // (`runs_avx2`) and this CPU runs the tier (`available`).
                    return unsafe { $avx::lanes::<false>(x) };
                }
                let _ = tier;
                lanes_scalar(x, 0.0, |a, b| a + b)
            }
            #[inline]
            fn prod_lanes_on(tier: Tier, x: &[Self]) -> [Self; LANES] {
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX-512 F, AVX2 and FMA: the tier
                    // executes them (`runs_avx512`) and this CPU runs the tier
                    // (`available`).
                    return unsafe { $zmm::lanes::<true>(x) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX2 and FMA: the tier executes them
                    // (`runs_avx2`) and this CPU runs the tier (`available`).
                    return unsafe { $avx::lanes::<true>(x) };
                }
                let _ = tier;
                lanes_scalar(x, 1.0, |a, b| a * b)
            }
            #[inline]
            fn sum_block_on(tier: Tier, x: &[Self]) -> Self {
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX-512 F, AVX2 and FMA: the tier
                    // executes them (`runs_avx512`) and this CPU runs the tier
                    // (`available`).
                    return unsafe { $zmm::block::<false>(x) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX2 and FMA: the tier executes them
                    // (`runs_avx2`) and this CPU runs the tier (`available`).
                    return unsafe { $avx::block::<false>(x) };
                }
                fold(lanes_scalar(x, 0.0, |a, b| a + b), |a, b| a + b)
            }
            #[inline]
            fn prod_block_on(tier: Tier, x: &[Self]) -> Self {
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX-512 F, AVX2 and FMA: the tier
                    // executes them (`runs_avx512`) and this CPU runs the tier
                    // (`available`).
                    return unsafe { $zmm::block::<true>(x) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX2 and FMA: the tier executes them
                    // (`runs_avx2`) and this CPU runs the tier (`available`).
                    return unsafe { $avx::block::<true>(x) };
                }
                fold(lanes_scalar(x, 1.0, |a, b| a * b), |a, b| a * b)
            }
            #[inline]
            fn sum_blocks_on(tier: Tier, x: &[Self], out: &mut [Self]) {
                // Only whole pairs of (block, slot) are computed.
                let nb = out.len().min(x.len().div_ceil(BLOCK));
                let (x, out) = (&x[..(nb * BLOCK).min(x.len())], &mut out[..nb]);
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX-512 F, AVX2 and FMA: the tier
                    // executes them (`runs_avx512`) and this CPU runs the tier
                    // (`available`).
                    return unsafe { $zmm::sums(x, out) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX2 and FMA: the tier executes them
                    // (`runs_avx2`) and this CPU runs the tier (`available`).
                    return unsafe { $avx::sums(x, out) };
                }
                for (o, c) in out.iter_mut().zip(x.chunks(BLOCK)) {
                    *o = Self::sum_block_on(tier, c);
                }
            }
        }
    };
}

lane_float!(
    f32,
    F32,
    -87.0,
    5.960464477539063e-8,
    avx_f32,
    zmm_f32,
    f32s,
    math::exp::exp_f32,
    math::log::log_f32
);
lane_float!(
    f64,
    F64,
    -708.0,
    1.1102230246251565e-16,
    avx_f64,
    zmm_f64,
    f64s,
    math::exp::exp_f64,
    math::log::log_f64
);

/// Apply a contiguous unary kernel in place to `x`.
pub(crate) fn apply_in_place<F: LaneFloat>(f: LoopFn, x: &mut [F]) {
    let p = x.as_mut_ptr() as *mut u8;
    let args = crate::Args {
        n: x.len(),
        src: [p as *const u8, core::ptr::null(), core::ptr::null()],
        src_stride: [1; 3],
        dst: p,
        dst_stride: 1,
    };
    // SAFETY: a contiguous kernel of F's dtype reads and writes `x.len()`
    // elements; the kernels accept a destination that is exactly the source.
    unsafe { f(&args) };
}

/// The lane order in vector registers ([`crate::simd::RealReg`]), one body
/// for every instruction set and carrier: `N` registers of `R::LANES` lanes
/// hold the 16 lanes (lane `i` in register `i / R::LANES`), each lane a chain
/// of vector adds (or multiplies) in term order, and the fold is
/// [`fold`]'s, from registers. The same operations in the same order as the
/// scalar tier: the same bits.
///
/// Each function here is `#[inline(always)]` and instantiated by
/// [`lane_kernels!`] inside a function compiled for the register's
/// instruction set.
#[cfg(target_arch = "x86_64")]
mod vector {
    use super::{LaneFloat, BLOCK, LANES};
    use crate::simd::RealReg;
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};

    /// Bytes of a cache line: the unit of the block sums' prefetches.
    const LINE_BYTES: usize = 64;

    /// `acc · u` for a product, else `acc + u`.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract).
    #[inline(always)]
    unsafe fn op<R: RealReg, const PROD: bool>(acc: R, u: R) -> R {
        // SAFETY: the CPU runs R's instruction set (this function's
        // contract); no memory is touched.
        unsafe {
            if PROD {
                R::mul(acc, u)
            } else {
                R::add(acc, u)
            }
        }
    }

    /// The `N` registers of the 16 lanes after one block (at most
    /// [`BLOCK`] terms; any count is computed right). The terms of a last
    /// partial row of 16 go to their lanes by masked loads where the masks
    /// are mask registers, else through a row of the identity on the stack;
    /// either way a lane past the last term keeps its value.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract).
    #[inline(always)]
    unsafe fn regs<R, const N: usize, const PROD: bool>(x: &[R::T]) -> [R; N]
    where
        R: RealReg,
        R::T: LaneFloat,
    {
        const { assert!(N * R::LANES == LANES) };
        let w = R::LANES;
        // SAFETY: the CPU runs R's instruction set (this function's
        // contract); every load is inside `x` or `t` (below).
        unsafe {
            let mut r = [if PROD { R::set1(R::T::ONE) } else { R::zero() }; N];
            let full = x.len() / LANES * LANES;
            let p = x.as_ptr();
            let mut i = 0;
            while i < full {
                for (h, acc) in r.iter_mut().enumerate() {
                    // Elements i + w·h .. i + w·(h + 1) ≤ i + 16 ≤ x.len().
                    *acc = op::<R, PROD>(*acc, R::load(p.add(i + w * h)));
                }
                i += LANES;
            }
            if full < x.len() {
                let rest = x.len() - full;
                if R::MASK_REGISTERS {
                    for (h, acc) in r.iter_mut().enumerate() {
                        let n = rest.saturating_sub(w * h).min(w);
                        if n > 0 {
                            let m = R::first(n);
                            // Only the first n lanes, elements full + w·h ..
                            // full + w·h + n ≤ x.len(), are read.
                            let u = R::load_m(p.add(full + w * h), m);
                            *acc = if PROD {
                                R::mul_m(*acc, u, m)
                            } else {
                                R::add(*acc, u)
                            };
                        }
                    }
                } else {
                    let mut t = [if PROD { R::T::ONE } else { R::T::ZERO }; LANES];
                    t[..rest].copy_from_slice(&x[full..]);
                    for (h, acc) in r.iter_mut().enumerate() {
                        // Elements w·h .. w·(h + 1) ≤ 16 of `t`.
                        *acc = op::<R, PROD>(*acc, R::load(t.as_ptr().add(w * h)));
                    }
                }
            }
            r
        }
    }

    /// Fold the 16 lanes in the lane order: the registers by halves (lane
    /// `i` takes lane `i + 8`, then `i + 4`, … while they are in different
    /// registers), then inside the last register by halving.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract).
    #[inline(always)]
    unsafe fn fold<R: RealReg, const N: usize, const PROD: bool>(mut r: [R; N]) -> R::T {
        // SAFETY: the CPU runs R's instruction set (this function's
        // contract); no memory is touched.
        unsafe {
            let mut n = N;
            while n > 1 {
                n /= 2;
                for k in 0..n {
                    r[k] = op::<R, PROD>(r[k], r[k + n]);
                }
            }
            if PROD {
                r[0].reduce_mul()
            } else {
                r[0].reduce_add()
            }
        }
    }

    /// The 16 lanes of one block.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract).
    #[inline(always)]
    pub(super) unsafe fn lanes<R, const N: usize, const PROD: bool>(x: &[R::T]) -> [R::T; LANES]
    where
        R: RealReg,
        R::T: LaneFloat,
    {
        let mut out = [R::T::ZERO; LANES];
        // SAFETY: the CPU runs R's instruction set (this function's
        // contract); register h stores lanes w·h .. w·(h + 1) ≤ 16 of `out`.
        unsafe {
            for (h, v) in regs::<R, N, PROD>(x).iter().enumerate() {
                v.store(out.as_mut_ptr().add(R::LANES * h));
            }
        }
        out
    }

    /// One block, folded.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract).
    #[inline(always)]
    pub(super) unsafe fn block<R, const N: usize, const PROD: bool>(x: &[R::T]) -> R::T
    where
        R: RealReg,
        R::T: LaneFloat,
    {
        // SAFETY: the CPU runs R's instruction set (this function's contract).
        unsafe { fold::<R, N, PROD>(regs::<R, N, PROD>(x)) }
    }

    /// The sums of consecutive blocks of `x` into `out` (one per block, the
    /// last possibly partial; as many as `out` holds), `K` full blocks side
    /// by side (independent chains keep the adders busy where the data is in
    /// cache), with a software prefetch of each line two groups ahead where
    /// `PF` (it keeps the read stream full from memory on the CPUs it was
    /// measured on, and slows L2-resident sums on others).
    ///
    /// The loads of the full blocks never cross a register-sized boundary:
    /// where `x` starts `s` elements past one, every load starts `s`
    /// elements before the register-aligned address the lane order would
    /// name, so position `p` of register `h` holds lane `(w·h + p − s) mod
    /// 16` throughout the block. A block's first register is read masked
    /// (its positions from `s` on: the block's first `w − s` terms), its
    /// last `s` terms arrive masked (positions below `s`) from the first
    /// register of the next block's frame. Every position still receives
    /// its lane's terms in increasing number, from +0, and a masked-off
    /// position adds +0, which changes no lane sum (a lane sum from +0 is
    /// never −0). The fold then runs on the rotated lanes: it adds lane `i`
    /// to lane `i + 8`, then the pairs 4 apart, …, so every step combines
    /// the same sets of lanes (the classes of lane numbers modulo 8, 4, 2,
    /// 1, which a rotation maps onto themselves), at most with the two
    /// operands of an addition swapped, and IEEE addition is commutative:
    /// the block's value has the bits of the unrotated fold (a NaN's payload
    /// aside, which the reduction makes the positive quiet NaN at its end).
    /// (A load that crosses a 64-byte line costs two; a `Vec`'s large
    /// buffers commonly start 16 bytes past a line.)
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract).
    /// (Memory needs nothing of the caller: the blocks read are whole blocks
    /// of `x`, and `out` is indexed with checks.)
    #[inline(always)]
    pub(super) unsafe fn sums<R, const N: usize, const K: usize, const PF: bool>(
        x: &[R::T],
        out: &mut [R::T],
    ) where
        R: RealReg,
        R::T: LaneFloat,
    {
        let w = R::LANES;
        let line = LINE_BYTES / core::mem::size_of::<R::T>();
        let full = x.len() / BLOCK;
        // Elements of `x` before its first register-aligned element (a
        // slice's elements are aligned to their size).
        let s = (x.as_ptr() as usize / core::mem::size_of::<R::T>()) % w;
        // The frame's origin: s elements before x (never dereferenced there;
        // every access below is masked or offset back inside `x`).
        let base = x.as_ptr().wrapping_sub(s);
        // SAFETY: the CPU runs R's instruction set (this function's
        // contract); no memory is touched.
        let (head, tail) = unsafe { (R::from_lane(s), R::first(s)) };
        let mut b = 0;
        while b + K <= full {
            let p = base.wrapping_add(b * BLOCK);
            // SAFETY: the CPU runs R's instruction set (this function's
            // contract).
            let mut r = [[unsafe { R::zero() }; N]; K];
            for (k, rk) in r.iter_mut().enumerate() {
                // SAFETY: only positions s..w are read: elements
                // (b + k)·BLOCK .. (b + k)·BLOCK + w − s of `x`, inside the
                // whole block b + k; the CPU runs R's instruction set.
                rk[0] = unsafe { R::add(rk[0], R::load_m(p.wrapping_add(k * BLOCK), head)) };
            }
            let mut i = 0;
            while i < BLOCK {
                for (k, rk) in r.iter_mut().enumerate() {
                    for (h, acc) in rk.iter_mut().enumerate() {
                        if i + w * h == 0 {
                            continue;
                        }
                        let q = p.wrapping_add(k * BLOCK + i + w * h);
                        if PF && w * h % line == 0 {
                            // The line two groups ahead (a hint; never
                            // dereferenced, so it may lie past `x`).
                            _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(2 * K * BLOCK) as *const i8);
                        }
                        // SAFETY: the w elements from q are those numbered
                        // (b + k)·BLOCK + i + w·h − s + 0..w of `x`; as
                        // w ≤ i + w·h and i + w·(h + 1) ≤ BLOCK they lie in
                        // the whole block b + k; the CPU runs R's
                        // instruction set.
                        *acc = unsafe { R::add(*acc, R::load(q)) };
                    }
                }
                i += LANES;
            }
            for (k, rk) in r.iter_mut().enumerate() {
                if s > 0 {
                    // SAFETY: only positions 0..s are read: the last s
                    // elements of the whole block b + k; the CPU runs R's
                    // instruction set.
                    rk[0] =
                        unsafe { R::add(rk[0], R::load_m(p.wrapping_add((k + 1) * BLOCK), tail)) };
                }
                // SAFETY: the CPU runs R's instruction set.
                out[b + k] = unsafe { fold::<R, N, false>(*rk) };
            }
            b += K;
        }
        for (o, c) in out[b..].iter_mut().zip(x[b * BLOCK..].chunks(BLOCK)) {
            // SAFETY: the CPU runs R's instruction set.
            *o = unsafe { block::<R, N, false>(c) };
        }
    }
}

/// The lane kernels of one carrier on one instruction set: the generic
/// bodies of [`vector`] over register `$reg` (`$n` of them hold the 16
/// lanes), compiled with the features `$feat`, `$k` blocks side by side in
/// the block sums.
macro_rules! lane_kernels {
    ($(#[$doc:meta])* $name:ident, $t:ty, $reg:ty, $n:literal, $k:literal, $pf:literal, $feat:literal) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use super::{vector, LANES};

            /// The 16 lanes of one block (at most `BLOCK` terms).
            ///
            /// # Safety
            #[doc = concat!("The CPU runs ", $feat, ".")]
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn lanes<const PROD: bool>(x: &[$t]) -> [$t; LANES] {
                // SAFETY: this function enables the register's features,
                // which the CPU runs (its contract).
                unsafe { vector::lanes::<$reg, $n, PROD>(x) }
            }

            /// One block, folded.
            ///
            /// # Safety
            #[doc = concat!("The CPU runs ", $feat, ".")]
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn block<const PROD: bool>(x: &[$t]) -> $t {
                // SAFETY: this function enables the register's features,
                // which the CPU runs (its contract).
                unsafe { vector::block::<$reg, $n, PROD>(x) }
            }

            /// The sums of consecutive blocks of `x` into `out`, one per
            /// block, as many as `out` holds.
            ///
            /// # Safety
            #[doc = concat!("The CPU runs ", $feat, ".")]
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn sums(x: &[$t], out: &mut [$t]) {
                // SAFETY: this function enables the register's features,
                // which the CPU runs (its contract).
                unsafe { vector::sums::<$reg, $n, $k, $pf>(x, out) }
            }
        }
    };
}

lane_kernels!(
    /// AVX2: f32 lanes 0..8 and 8..16 in two `__m256`, one block at a time
    /// (the two chains keep ahead of memory).
    avx_f32, f32, core::arch::x86_64::__m256, 2, 1, true, "avx2,fma"
);
lane_kernels!(
    /// AVX2: f64 lanes in four `__m256d`, one block at a time.
    avx_f64, f64, core::arch::x86_64::__m256d, 4, 1, true, "avx2,fma"
);
lane_kernels!(
    /// AVX-512: the 16 f32 lanes in one `__m512`, four blocks side by side.
    zmm_f32, f32, core::arch::x86_64::__m512, 1, 4, false, "avx512f,avx2,fma"
);
lane_kernels!(
    /// AVX-512: f64 lanes 0..8 and 8..16 in two `__m512d`, two blocks side
    /// by side.
    zmm_f64, f64, core::arch::x86_64::__m512d, 2, 2, false, "avx512f,avx2,fma"
);

/// Fold 16 sum lanes into the block's sum: lane `i` takes lane `i + 8` for
/// `i < 8`, then `i + 4`, then `i + 2`, then lane 0 takes lane 1.
pub fn fold_sum_lanes<F: LaneFloat>(lanes: &[F; LANES]) -> F {
    fold(*lanes, |a, b| a + b)
}

/// Fold 16 product lanes as [`fold_sum_lanes`] does, multiplying.
pub fn fold_prod_lanes<F: LaneFloat>(lanes: &[F; LANES]) -> F {
    fold(*lanes, |a, b| a * b)
}

/// Combine per-block sums into the total by the block tree (+0 for none): the
/// left part holds the largest power of two of blocks strictly below their
/// count, each part combined the same way. The slice is read once, in
/// order, with O(log n) state.
pub fn combine_blocks<F: LaneFloat>(block_sums: &[F]) -> F {
    tree(block_sums, &|a: F, b: F| a + b).unwrap_or(F::ZERO)
}

/// Combine per-block products by the block tree (1 for none).
pub fn combine_block_products<F: LaneFloat>(block_prods: &[F]) -> F {
    tree(block_prods, &|a: F, b: F| a * b).unwrap_or(F::ONE)
}

/// The lane-level API for streaming callers: the 16 partial sum lanes of each
/// block of `chunk`, a run of consecutive terms that starts at a block boundary
/// (term number a multiple of [`BLOCK`]), into `lanes[b]` for block `b`.
///
/// Only the last block of `chunk` may hold fewer than [`BLOCK`] terms. A
/// caller that folds each block's lanes with [`fold_sum_lanes`] and combines
/// every block of its stream with [`combine_blocks`] gets the bits of
/// [`crate::reduce()`]'s Sum over the whole stream, however the stream was cut
/// into chunks (at block boundaries). Refuses (before any write) a `lanes`
/// whose length is not the block count of `chunk`.
pub fn sum_lanes<F: LaneFloat>(chunk: &[F], lanes: &mut [[F; LANES]], exec: &Exec) -> Result<()> {
    lanes_with(exec, chunk, lanes, false)
}

/// [`sum_lanes`] for products: the 16 partial product lanes of each block, a
/// lane with no term holding 1.
pub fn prod_lanes<F: LaneFloat>(chunk: &[F], lanes: &mut [[F; LANES]], exec: &Exec) -> Result<()> {
    lanes_with(exec, chunk, lanes, true)
}

fn lanes_with<F: LaneFloat>(
    exec: &Exec,
    chunk: &[F],
    lanes: &mut [[F; LANES]],
    prod: bool,
) -> Result<()> {
    let tier = exec.resolve_tier_for(crate::tier::Engine::Reduce)?;
    let blocks = chunk.len().div_ceil(BLOCK);
    if lanes.len() != blocks {
        return Err(Error::Length {
            operand: format!("lanes (for {} terms in blocks of {BLOCK})", chunk.len()),
            len: lanes.len(),
            expected: blocks,
            unit: "blocks",
        });
    }
    for (l, x) in lanes.iter_mut().zip(chunk.chunks(BLOCK)) {
        *l = if prod {
            F::prod_lanes_on(tier, x)
        } else {
            F::sum_lanes_on(tier, x)
        };
    }
    Ok(())
}
