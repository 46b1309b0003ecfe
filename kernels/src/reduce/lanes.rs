//! The lane order of float sums and products (ARCHITECTURE.md §5.3), per tier, and the
//! lane-level API for callers that fold chunk by chunk.
//!
//! A block holds at most [`BLOCK`] consecutive terms; term `j` of a block goes
//! to lane `j mod 16`; each lane adds its terms in increasing number from +0
//! (a product multiplies them from its first term); the lanes fold 16 → 8 → 4
//! → 2 → 1 (lane `i` takes lane `i + 8` for `i < 8`, then `i + 4`, `i + 2`,
//! and lane 0 takes lane 1); the blocks combine by [`combine_blocks`]'s tree.
//!
//! The AVX2 tier keeps the 16 lanes in registers (two `__m256` for f32, four
//! `__m256d` for f64); the scalar tier keeps them in an array of 16. A sum's
//! lanes start from +0 and a product's from 1: a lane sum that starts from +0 is
//! never -0, so an empty lane (+0) changes nothing it is added to, and
//! multiplying by 1 is exact, so both give the bits of "a lane with no term
//! takes no part".

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
    ($t:ty, $dt:ident, $cut:expr, $u:expr, $avx:ident, $zmm:ident, $exp:path, $ln:path) => {
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
            #[inline]
            fn sum_lanes_on(tier: Tier, x: &[Self]) -> [Self; LANES] {
                debug_assert!(x.len() <= BLOCK);
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX-512 F (the tier is available).
                    return unsafe { $zmm::lanes::<false>(x) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX2 and FMA (the tier is available).
                    return unsafe { $avx::lanes::<false>(x) };
                }
                let _ = tier;
                lanes_scalar(x, 0.0, |a, b| a + b)
            }
            #[inline]
            fn prod_lanes_on(tier: Tier, x: &[Self]) -> [Self; LANES] {
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX-512 F (the tier is available).
                    return unsafe { $zmm::lanes::<true>(x) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: as above.
                    return unsafe { $avx::lanes::<true>(x) };
                }
                let _ = tier;
                lanes_scalar(x, 1.0, |a, b| a * b)
            }
            #[inline]
            fn sum_block_on(tier: Tier, x: &[Self]) -> Self {
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX-512 F (the tier is available).
                    return unsafe { $zmm::block::<false>(x) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: as above.
                    return unsafe { $avx::block::<false>(x) };
                }
                fold(lanes_scalar(x, 0.0, |a, b| a + b), |a, b| a + b)
            }
            #[inline]
            fn prod_block_on(tier: Tier, x: &[Self]) -> Self {
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX-512 F (the tier is available).
                    return unsafe { $zmm::block::<true>(x) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: as above.
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
                    // SAFETY: the CPU runs AVX-512 F (the tier is available).
                    return unsafe { $zmm::sums(x, out) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: the CPU runs AVX2; out has one slot per block.
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

#[cfg(target_arch = "x86_64")]
mod avx_f32 {
    use core::arch::x86_64::*;

    /// The two registers of lanes 0..8 and 8..16 after one block.
    ///
    /// # Safety
    /// The CPU must run AVX2.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn regs<const PROD: bool>(x: &[f32]) -> (__m256, __m256) {
        let (mut a, mut b) = if PROD {
            (_mm256_set1_ps(1.0), _mm256_set1_ps(1.0))
        } else {
            (_mm256_setzero_ps(), _mm256_setzero_ps())
        };
        let full = x.len() / 16 * 16;
        let p = x.as_ptr();
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= x.len().
            let (u, v) = unsafe { (_mm256_loadu_ps(p.add(i)), _mm256_loadu_ps(p.add(i + 8))) };
            if PROD {
                a = _mm256_mul_ps(a, u);
                b = _mm256_mul_ps(b, v);
            } else {
                a = _mm256_add_ps(a, u);
                b = _mm256_add_ps(b, v);
            }
            i += 16;
        }
        if full < x.len() {
            // The tail: lanes past the last term keep the identity.
            let mut t = [if PROD { 1.0f32 } else { 0.0 }; 16];
            t[..x.len() - full].copy_from_slice(&x[full..]);
            // SAFETY: t holds 16 floats.
            let (u, v) = unsafe {
                (
                    _mm256_loadu_ps(t.as_ptr()),
                    _mm256_loadu_ps(t.as_ptr().add(8)),
                )
            };
            if PROD {
                a = _mm256_mul_ps(a, u);
                b = _mm256_mul_ps(b, v);
            } else {
                a = _mm256_add_ps(a, u);
                b = _mm256_add_ps(b, v);
            }
        }
        (a, b)
    }

    /// The 16 lanes of one block.
    ///
    /// # Safety
    /// The CPU must run AVX2.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn lanes<const PROD: bool>(x: &[f32]) -> [f32; 16] {
        // SAFETY: forwarded.
        let (a, b) = unsafe { regs::<PROD>(x) };
        let mut out = [0.0f32; 16];
        // SAFETY: out holds 16 floats.
        unsafe {
            _mm256_storeu_ps(out.as_mut_ptr(), a);
            _mm256_storeu_ps(out.as_mut_ptr().add(8), b);
        }
        out
    }

    /// One block, folded.
    ///
    /// # Safety
    /// The CPU must run AVX2.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn block<const PROD: bool>(x: &[f32]) -> f32 {
        // SAFETY: forwarded.
        let (a, b) = unsafe { regs::<PROD>(x) };
        fold_regs::<PROD>(a, b)
    }

    /// Fold lanes 0..8 (`a`) and 8..16 (`b`) in the lane order.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn fold_regs<const PROD: bool>(a: __m256, b: __m256) -> f32 {
        let op = |u: __m128, v: __m128| {
            if PROD {
                _mm_mul_ps(u, v)
            } else {
                _mm_add_ps(u, v)
            }
        };
        // i takes i + 8.
        let s8 = if PROD {
            _mm256_mul_ps(a, b)
        } else {
            _mm256_add_ps(a, b)
        };
        // i takes i + 4.
        let s4 = op(_mm256_castps256_ps128(s8), _mm256_extractf128_ps::<1>(s8));
        // i takes i + 2.
        let s2 = op(s4, _mm_movehl_ps(s4, s4));
        // 0 takes 1.
        let s1 = op(s2, _mm_movehdup_ps(s2));
        _mm_cvtss_f32(s1)
    }

    /// The sums of consecutive blocks of `x` into `out` (one per block, the
    /// last possibly partial), `K` full blocks side by side (one: the two lane
    /// registers' adds keep ahead of memory) with a software prefetch of the
    /// lines two groups ahead, which is what brings the sum to the core's read
    /// bandwidth.
    ///
    /// # Safety
    /// The CPU must run AVX2; `out.len()` must be the block count of `x`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn sums(x: &[f32], out: &mut [f32]) {
        const K: usize = 1;
        let full = x.len() / super::BLOCK;
        let mut b = 0;
        while b + K <= full {
            let p = x[b * super::BLOCK..].as_ptr();
            let mut r = [_mm256_setzero_ps(); 2 * K];
            let mut i = 0;
            while i < super::BLOCK {
                for k in 0..K {
                    // SAFETY: block b + k is full, i + 16 <= BLOCK.
                    unsafe {
                        let q = p.add(k * super::BLOCK + i);
                        // The next group's line (a hint; never dereferenced).
                        _mm_prefetch::<_MM_HINT_T0>(
                            q.wrapping_add(2 * K * super::BLOCK) as *const i8
                        );
                        r[2 * k] = _mm256_add_ps(r[2 * k], _mm256_loadu_ps(q));
                        r[2 * k + 1] = _mm256_add_ps(r[2 * k + 1], _mm256_loadu_ps(q.add(8)));
                    }
                }
                i += 16;
            }
            for k in 0..K {
                out[b + k] = fold_regs::<false>(r[2 * k], r[2 * k + 1]);
            }
            b += K;
        }
        for (o, c) in out[b..]
            .iter_mut()
            .zip(x[b * super::BLOCK..].chunks(super::BLOCK))
        {
            // SAFETY: forwarded.
            *o = unsafe { block::<false>(c) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx_f64 {
    use core::arch::x86_64::*;

    /// The four registers of lanes 0..4, 4..8, 8..12, 12..16 after one block.
    ///
    /// # Safety
    /// The CPU must run AVX2.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn regs<const PROD: bool>(x: &[f64]) -> [__m256d; 4] {
        let init = if PROD {
            _mm256_set1_pd(1.0)
        } else {
            _mm256_setzero_pd()
        };
        let mut r = [init; 4];
        let full = x.len() / 16 * 16;
        let p = x.as_ptr();
        let mut i = 0;
        let step = |r: &mut [__m256d; 4], q: *const f64| {
            for (k, acc) in r.iter_mut().enumerate() {
                // SAFETY: the caller passes a pointer to 16 readable doubles.
                let v = unsafe { _mm256_loadu_pd(q.add(4 * k)) };
                *acc = if PROD {
                    _mm256_mul_pd(*acc, v)
                } else {
                    _mm256_add_pd(*acc, v)
                };
            }
        };
        while i < full {
            // SAFETY: i + 16 <= x.len().
            step(&mut r, unsafe { p.add(i) });
            i += 16;
        }
        if full < x.len() {
            let mut t = [if PROD { 1.0f64 } else { 0.0 }; 16];
            t[..x.len() - full].copy_from_slice(&x[full..]);
            step(&mut r, t.as_ptr());
        }
        r
    }

    /// The 16 lanes of one block.
    ///
    /// # Safety
    /// The CPU must run AVX2.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn lanes<const PROD: bool>(x: &[f64]) -> [f64; 16] {
        // SAFETY: forwarded.
        let r = unsafe { regs::<PROD>(x) };
        let mut out = [0.0f64; 16];
        for (k, v) in r.iter().enumerate() {
            // SAFETY: out holds 16 doubles.
            unsafe { _mm256_storeu_pd(out.as_mut_ptr().add(4 * k), *v) };
        }
        out
    }

    /// One block, folded.
    ///
    /// # Safety
    /// The CPU must run AVX2.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn block<const PROD: bool>(x: &[f64]) -> f64 {
        // SAFETY: forwarded.
        let r = unsafe { regs::<PROD>(x) };
        fold_regs::<PROD>(r)
    }

    /// Fold lanes 0..4, 4..8, 8..12, 12..16 in the lane order.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn fold_regs<const PROD: bool>(r: [__m256d; 4]) -> f64 {
        let op4 = |u, v| {
            if PROD {
                _mm256_mul_pd(u, v)
            } else {
                _mm256_add_pd(u, v)
            }
        };
        let op2 = |u, v| {
            if PROD {
                _mm_mul_pd(u, v)
            } else {
                _mm_add_pd(u, v)
            }
        };
        // i takes i + 8: lanes 0..4 take 8..12, 4..8 take 12..16.
        let a = op4(r[0], r[2]);
        let b = op4(r[1], r[3]);
        // i takes i + 4.
        let s4 = op4(a, b);
        // i takes i + 2.
        let s2 = op2(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd::<1>(s4));
        // 0 takes 1.
        let s1 = op2(s2, _mm_unpackhi_pd(s2, s2));
        _mm_cvtsd_f64(s1)
    }

    /// The sums of consecutive blocks of `x` into `out`, `K` full blocks side
    /// by side (one: four lane registers), prefetching two groups ahead.
    ///
    /// # Safety
    /// The CPU must run AVX2; `out.len()` must be the block count of `x`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn sums(x: &[f64], out: &mut [f64]) {
        const K: usize = 1;
        let full = x.len() / super::BLOCK;
        let mut b = 0;
        while b + K <= full {
            let p = x[b * super::BLOCK..].as_ptr();
            let mut r = [[_mm256_setzero_pd(); 4]; K];
            let mut i = 0;
            while i < super::BLOCK {
                for (k, rk) in r.iter_mut().enumerate() {
                    let q = p.wrapping_add(k * super::BLOCK + i);
                    // The next group's lines (a hint; never dereferenced).
                    _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(2 * K * super::BLOCK) as *const i8);
                    _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(K * super::BLOCK + 8) as *const i8);
                    for (j, acc) in rk.iter_mut().enumerate() {
                        // SAFETY: block b + k is full, i + 16 <= BLOCK.
                        let v = unsafe { _mm256_loadu_pd(p.add(k * super::BLOCK + i + 4 * j)) };
                        *acc = _mm256_add_pd(*acc, v);
                    }
                }
                i += 16;
            }
            for (k, rk) in r.iter().enumerate() {
                out[b + k] = fold_regs::<false>(*rk);
            }
            b += K;
        }
        for (o, c) in out[b..]
            .iter_mut()
            .zip(x[b * super::BLOCK..].chunks(super::BLOCK))
        {
            // SAFETY: forwarded.
            *o = unsafe { block::<false>(c) };
        }
    }
}

/// The lane order on AVX-512: the 16 lanes of f32 are one register (of f64,
/// two), so a block is one chain of vector adds (or multiplies) per
/// register and the fold is the AVX2 path's, from a wider start. The same
/// operations in the same order as the scalar tier: the same bits.
#[cfg(target_arch = "x86_64")]
mod zmm_f32 {
    use core::arch::x86_64::*;

    /// The register of lanes 0..16 after one block.
    ///
    /// # Safety
    /// The CPU must run AVX-512 F.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn reg<const PROD: bool>(x: &[f32]) -> __m512 {
        let mut a = if PROD {
            _mm512_set1_ps(1.0)
        } else {
            _mm512_setzero_ps()
        };
        let full = x.len() / 16 * 16;
        let p = x.as_ptr();
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= x.len().
            let u = unsafe { _mm512_loadu_ps(p.add(i)) };
            a = if PROD {
                _mm512_mul_ps(a, u)
            } else {
                _mm512_add_ps(a, u)
            };
            i += 16;
        }
        if full < x.len() {
            // The tail: lanes past the last term take the identity.
            let m = ((1u32 << (x.len() - full)) - 1) as __mmask16;
            // SAFETY: only the masked lanes, inside x, are read.
            let u = unsafe { _mm512_maskz_loadu_ps(m, p.add(full)) };
            a = if PROD {
                _mm512_mask_mul_ps(a, m, a, u)
            } else {
                _mm512_add_ps(a, u)
            };
        }
        a
    }

    /// Fold the 16 lanes in the lane order: i takes i + 8 (the two halves),
    /// then i + 4, i + 2, and 0 takes 1.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn fold<const PROD: bool>(a: __m512) -> f32 {
        let lo = _mm512_castps512_ps256(a);
        let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(a)));
        let op = |u: __m128, v: __m128| {
            if PROD {
                _mm_mul_ps(u, v)
            } else {
                _mm_add_ps(u, v)
            }
        };
        let s8 = if PROD {
            _mm256_mul_ps(lo, hi)
        } else {
            _mm256_add_ps(lo, hi)
        };
        let s4 = op(_mm256_castps256_ps128(s8), _mm256_extractf128_ps::<1>(s8));
        let s2 = op(s4, _mm_movehl_ps(s4, s4));
        let s1 = op(s2, _mm_movehdup_ps(s2));
        _mm_cvtss_f32(s1)
    }

    /// The 16 lanes of one block.
    ///
    /// # Safety
    /// The CPU must run AVX-512 F.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn lanes<const PROD: bool>(x: &[f32]) -> [f32; 16] {
        let mut out = [0.0f32; 16];
        // SAFETY: forwarded; out holds 16 floats.
        unsafe { _mm512_storeu_ps(out.as_mut_ptr(), reg::<PROD>(x)) };
        out
    }

    /// One block, folded.
    ///
    /// # Safety
    /// The CPU must run AVX-512 F.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn block<const PROD: bool>(x: &[f32]) -> f32 {
        // SAFETY: forwarded.
        fold::<PROD>(unsafe { reg::<PROD>(x) })
    }

    /// The sums of consecutive blocks of `x` into `out` (one per block, the
    /// last possibly partial), four full blocks side by side: four
    /// independent chains keep both adders busy where the data is in cache;
    /// from memory the read stream is the limit, kept full by a software
    /// prefetch of the lines two groups ahead (as the AVX2 path).
    ///
    /// # Safety
    /// The CPU must run AVX-512 F; `out.len()` must be the block count of `x`.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn sums(x: &[f32], out: &mut [f32]) {
        const K: usize = 4;
        let full = x.len() / super::BLOCK;
        let mut b = 0;
        while b + K <= full {
            let p = x[b * super::BLOCK..].as_ptr();
            let mut r = [_mm512_setzero_ps(); K];
            let mut i = 0;
            while i < super::BLOCK {
                for (k, acc) in r.iter_mut().enumerate() {
                    let q = p.wrapping_add(k * super::BLOCK + i);
                    // The line two groups ahead (a hint; never dereferenced).
                    _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(2 * K * super::BLOCK) as *const i8);
                    // SAFETY: block b + k is full, i + 16 <= BLOCK.
                    *acc = _mm512_add_ps(*acc, unsafe { _mm512_loadu_ps(q) });
                }
                i += 16;
            }
            for (k, acc) in r.iter().enumerate() {
                out[b + k] = fold::<false>(*acc);
            }
            b += K;
        }
        for (o, c) in out[b..]
            .iter_mut()
            .zip(x[b * super::BLOCK..].chunks(super::BLOCK))
        {
            // SAFETY: forwarded.
            *o = unsafe { block::<false>(c) };
        }
    }
}

/// As [`zmm_f32`] for f64: lanes 0..8 and 8..16 in two registers.
#[cfg(target_arch = "x86_64")]
mod zmm_f64 {
    use core::arch::x86_64::*;

    /// The registers of lanes 0..8 and 8..16 after one block.
    ///
    /// # Safety
    /// The CPU must run AVX-512 F.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn regs<const PROD: bool>(x: &[f64]) -> [__m512d; 2] {
        let init = if PROD {
            _mm512_set1_pd(1.0)
        } else {
            _mm512_setzero_pd()
        };
        let mut r = [init; 2];
        let full = x.len() / 16 * 16;
        let p = x.as_ptr();
        let op = |a: __m512d, u: __m512d| {
            if PROD {
                _mm512_mul_pd(a, u)
            } else {
                _mm512_add_pd(a, u)
            }
        };
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= x.len().
            unsafe {
                r[0] = op(r[0], _mm512_loadu_pd(p.add(i)));
                r[1] = op(r[1], _mm512_loadu_pd(p.add(i + 8)));
            }
            i += 16;
        }
        if full < x.len() {
            let rest = x.len() - full;
            for (h, acc) in r.iter_mut().enumerate() {
                let n = rest.saturating_sub(8 * h).min(8);
                if n > 0 {
                    let m = ((1u32 << n) - 1) as __mmask8;
                    // SAFETY: only the masked lanes, inside x, are read.
                    let u = unsafe { _mm512_maskz_loadu_pd(m, p.add(full + 8 * h)) };
                    *acc = if PROD {
                        _mm512_mask_mul_pd(*acc, m, *acc, u)
                    } else {
                        _mm512_add_pd(*acc, u)
                    };
                }
            }
        }
        r
    }

    /// Fold lanes 0..8 and 8..16 in the lane order.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn fold<const PROD: bool>(r: [__m512d; 2]) -> f64 {
        let s8 = if PROD {
            _mm512_mul_pd(r[0], r[1])
        } else {
            _mm512_add_pd(r[0], r[1])
        };
        let (lo, hi) = (_mm512_castpd512_pd256(s8), _mm512_extractf64x4_pd::<1>(s8));
        let s4 = if PROD {
            _mm256_mul_pd(lo, hi)
        } else {
            _mm256_add_pd(lo, hi)
        };
        let op2 = |u, v| {
            if PROD {
                _mm_mul_pd(u, v)
            } else {
                _mm_add_pd(u, v)
            }
        };
        let s2 = op2(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd::<1>(s4));
        let s1 = op2(s2, _mm_unpackhi_pd(s2, s2));
        _mm_cvtsd_f64(s1)
    }

    /// The 16 lanes of one block.
    ///
    /// # Safety
    /// The CPU must run AVX-512 F.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn lanes<const PROD: bool>(x: &[f64]) -> [f64; 16] {
        // SAFETY: forwarded.
        let r = unsafe { regs::<PROD>(x) };
        let mut out = [0.0f64; 16];
        // SAFETY: out holds 16 doubles.
        unsafe {
            _mm512_storeu_pd(out.as_mut_ptr(), r[0]);
            _mm512_storeu_pd(out.as_mut_ptr().add(8), r[1]);
        }
        out
    }

    /// One block, folded.
    ///
    /// # Safety
    /// The CPU must run AVX-512 F.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn block<const PROD: bool>(x: &[f64]) -> f64 {
        // SAFETY: forwarded.
        fold::<PROD>(unsafe { regs::<PROD>(x) })
    }

    /// The sums of consecutive blocks of `x` into `out`, two full blocks
    /// side by side (four chains), prefetching two groups ahead.
    ///
    /// # Safety
    /// The CPU must run AVX-512 F; `out.len()` must be the block count of `x`.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn sums(x: &[f64], out: &mut [f64]) {
        const K: usize = 2;
        let full = x.len() / super::BLOCK;
        let mut b = 0;
        while b + K <= full {
            let p = x[b * super::BLOCK..].as_ptr();
            let mut r = [[_mm512_setzero_pd(); 2]; K];
            let mut i = 0;
            while i < super::BLOCK {
                for (k, rk) in r.iter_mut().enumerate() {
                    for (h, acc) in rk.iter_mut().enumerate() {
                        let q = p.wrapping_add(k * super::BLOCK + i + 8 * h);
                        // The line two groups ahead (a hint; never dereferenced).
                        _mm_prefetch::<_MM_HINT_T0>(
                            q.wrapping_add(2 * K * super::BLOCK) as *const i8
                        );
                        // SAFETY: block b + k is full, i + 16 <= BLOCK.
                        *acc = _mm512_add_pd(*acc, unsafe { _mm512_loadu_pd(q) });
                    }
                }
                i += 16;
            }
            for (k, rk) in r.iter().enumerate() {
                out[b + k] = fold::<false>(*rk);
            }
            b += K;
        }
        for (o, c) in out[b..]
            .iter_mut()
            .zip(x[b * super::BLOCK..].chunks(super::BLOCK))
        {
            // SAFETY: forwarded.
            *o = unsafe { block::<false>(c) };
        }
    }
}

/// Fold 16 sum lanes into the block's sum: lane `i` takes lane `i + 8` for
/// `i < 8`, then `i + 4`, then `i + 2`, then lane 0 takes lane 1.
pub fn fold_sum_lanes<F: LaneFloat>(lanes: &[F; LANES]) -> F {
    fold(*lanes, |a, b| a + b)
}

/// Fold 16 product lanes as [`fold_sum_lanes`] does, multiplying.
pub fn fold_prod_lanes<F: LaneFloat>(lanes: &[F; LANES]) -> F {
    fold(*lanes, |a, b| a * b)
}

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
    let tier = exec.resolve_tier()?;
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
