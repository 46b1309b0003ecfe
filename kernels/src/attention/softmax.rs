//! The online softmax of one key block for the rows of a unit: each row's
//! new maximum, the block's weights, the 8-lane block sum, α, the running
//! sum and the rescaled accumulator (seed 000's steps, in its order).
//!
//! One generic body, compiled for each instruction set inside a
//! `#[target_feature]` function: the weights' `exp` is the runtime's
//! branch-free `exp_f32`/`exp_f64` (IEEE operations and fused
//! multiply-adds only), so every tier computes the same bits and the
//! vector tiers vectorise the loops over keys and over the accumulator.

use crate::contract::Chained;
use crate::Tier;
use std::ops::{Add, Div, Mul, Sub};

/// An accumulator of attention: f32 or f64.
pub(crate) trait AccFloat:
    Chained
    + crate::linalg::work::Plain
    + Copy
    + PartialOrd
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
{
    const PLUS_ZERO: Self;
    const ONE: Self;
    const NEG_INF: Self;
    const POS_INF: Self;
    /// The positive quiet NaN.
    const NAN: Self;
    /// The runtime's `exp` (within 1 ulp).
    fn exp(self) -> Self;
    /// The runtime's `log`.
    fn ln(self) -> Self;
    /// `self` rounded into this type from f64 (round to nearest even).
    fn of_f64(v: f64) -> Self;
    fn is_nan(self) -> bool;
    /// `self + a·b`, rounded once.
    fn fused(self, a: Self, b: Self) -> Self;
    /// Neither a NaN nor an infinity.
    fn finite(self) -> bool;
}

impl AccFloat for f32 {
    const PLUS_ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const NEG_INF: f32 = f32::NEG_INFINITY;
    const POS_INF: f32 = f32::INFINITY;
    const NAN: f32 = f32::NAN;
    #[inline(always)]
    fn exp(self) -> f32 {
        tessera_generated::runtime::math::exp::exp_f32(self)
    }
    #[inline(always)]
    fn ln(self) -> f32 {
        tessera_generated::runtime::math::log::log_f32(self)
    }
    fn of_f64(v: f64) -> f32 {
        v as f32
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline(always)]
    fn fused(self, a: f32, b: f32) -> f32 {
        a.mul_add(b, self)
    }
    #[inline(always)]
    fn finite(self) -> bool {
        f32::is_finite(self)
    }
}

impl AccFloat for f64 {
    const PLUS_ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    const NEG_INF: f64 = f64::NEG_INFINITY;
    const POS_INF: f64 = f64::INFINITY;
    const NAN: f64 = f64::NAN;
    #[inline(always)]
    fn exp(self) -> f64 {
        tessera_generated::runtime::math::exp::exp_f64(self)
    }
    #[inline(always)]
    fn ln(self) -> f64 {
        tessera_generated::runtime::math::log::log_f64(self)
    }
    fn of_f64(v: f64) -> f64 {
        v
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline(always)]
    fn fused(self, a: f64, b: f64) -> f64 {
        a.mul_add(b, self)
    }
    #[inline(always)]
    fn finite(self) -> bool {
        f64::is_finite(self)
    }
}

/// Keys of a block (and the row stride of the score and weight tiles).
pub(super) const BLOCK: usize = 64;

/// One block's softmax step for `m.len()` rows.
pub(super) struct Rows<'a, T> {
    /// The block's scores, row `i` at `i·BLOCK`, `nk` of them.
    pub s: &'a [T],
    /// Visibility (nonzero: visible) in the same layout, or None where every
    /// pair of the block is visible.
    pub vis: Option<&'a [u8]>,
    /// Keys in the block.
    pub nk: usize,
    /// Running maxima.
    pub m: &'a mut [T],
    /// Running sums.
    pub l: &'a mut [T],
    /// Accumulators, row `i` at `i·dv`.
    pub a: &'a mut [T],
    /// Values per row of the accumulator.
    pub dv: usize,
    /// The block's weights (written), laid out as `s`.
    pub w: &'a mut [T],
    /// Whether the block changed each row (written): false where the row has
    /// no visible pair in it or its new maximum is −∞.
    pub active: &'a mut [bool],
    /// The weights again, packed for the values' product: row `i`'s weight
    /// of key `j` at `(i / mr)·mr·64 + j·mr + i mod mr` (rows the block
    /// leaves as they were hold stale values, which the caller discards).
    pub packed: &'a mut [T],
    /// The rows of a packed panel.
    pub mr: usize,
}

/// One row's step. Returns whether the row takes the block.
#[inline(always)]
fn row<T: AccFloat>(
    s: &[T],
    vis: Option<&[u8]>,
    m: &mut T,
    l: &mut T,
    a: &mut [T],
    w: &mut [T],
) -> bool {
    let nk = s.len();
    // m′: the greatest of m and the visible scores, a NaN where one is. The
    // maximum is taken in 16 lanes (a value, whatever the order: only the
    // sign of a zero maximum could differ, and no result depends on it:
    // exp(x − m′), α and m + log l are the same for either zero).
    let mut lanes = [T::NEG_INF; 16];
    let mut nan = m.is_nan();
    let mut any = false;
    match vis {
        None => {
            any = nk > 0;
            let mut chunks = s.chunks_exact(16);
            for c in &mut chunks {
                for k in 0..16 {
                    let x = c[k];
                    nan |= x.is_nan();
                    lanes[k] = if x > lanes[k] { x } else { lanes[k] };
                }
            }
            for (k, &x) in chunks.remainder().iter().enumerate() {
                nan |= x.is_nan();
                lanes[k] = if x > lanes[k] { x } else { lanes[k] };
            }
        }
        Some(v) => {
            let mut chunks = s.chunks_exact(16).zip(v.chunks_exact(16));
            for (c, b) in &mut chunks {
                for k in 0..16 {
                    let shown = b[k] != 0;
                    any |= shown;
                    let x = if shown { c[k] } else { T::NEG_INF };
                    nan |= x.is_nan();
                    lanes[k] = if x > lanes[k] { x } else { lanes[k] };
                }
            }
            let done = nk / 16 * 16;
            for k in done..nk {
                let shown = v[k] != 0;
                any |= shown;
                let x = if shown { s[k] } else { T::NEG_INF };
                nan |= x.is_nan();
                lanes[k - done] = if x > lanes[k - done] {
                    x
                } else {
                    lanes[k - done]
                };
            }
        }
    }
    let mut mx = *m;
    for &x in &lanes {
        if x > mx {
            mx = x;
        }
    }
    if !any {
        return false;
    }
    if nan {
        mx = T::NAN;
    }
    if mx == T::NEG_INF {
        return false;
    }
    // The weights exp(x − m′), 0 at a hidden pair.
    for (wj, &x) in w.iter_mut().zip(s) {
        *wj = (x - mx).exp();
    }
    if let Some(v) = vis {
        for (wj, &b) in w.iter_mut().zip(v) {
            if b == 0 {
                *wj = T::PLUS_ZERO;
            }
        }
    }
    // Term j into lane j mod 8, then lanes i + (i+4), (i+2), (i+1).
    let mut lanes = [T::PLUS_ZERO; 8];
    let mut chunks = w.chunks_exact(8);
    for c in &mut chunks {
        for k in 0..8 {
            lanes[k] = lanes[k] + c[k];
        }
    }
    for (k, &x) in chunks.remainder().iter().enumerate() {
        lanes[k] = lanes[k] + x;
    }
    let t: [T; 4] = core::array::from_fn(|i| lanes[i] + lanes[i + 4]);
    let u: [T; 2] = core::array::from_fn(|i| t[i] + t[i + 2]);
    let sum = u[0] + u[1];
    let alpha = (*m - mx).exp();
    *l = alpha * *l + sum;
    if alpha != T::ONE {
        for x in a.iter_mut() {
            *x = alpha * *x;
        }
    }
    *m = mx;
    true
}

/// The first `n` rows of `w` (64 apart, `nk` weights each) packed in
/// panels of `mr` rows. On a vector tier with panels of 14 rows of f32 (the
/// AVX-512 kernel's), each panel goes through the 256-bit 8 × 8
/// transposes: rows 8–15 first (their last two land in the next step's
/// first two places, or past the panel), then rows 0–7 over them; `w` holds
/// two rows and `packed` eight values past what the panels use. Else one
/// value at a time.
#[inline(always)]
fn pack_weights<T: AccFloat, const VEC: bool>(
    w: &[T],
    n: usize,
    nk: usize,
    packed: &mut [T],
    mr: usize,
) {
    #[cfg(target_arch = "x86_64")]
    if VEC && mr == 14 && size_of::<T>() == 4 {
        let tiles = n.div_ceil(14);
        let jf = nk / 8 * 8;
        assert!(w.len() >= (tiles * 14 + 2) * BLOCK && packed.len() >= tiles * 14 * BLOCK + 8);
        for ti in 0..tiles {
            let base = ti * 14 * BLOCK;
            for group in [8usize, 0] {
                let mut j0 = 0;
                while j0 < jf {
                    // SAFETY: rows ti·14 + group .. +8 of w (≤ tiles·14 + 2
                    // rows, asserted) at keys j0 .. +8 ≤ 64; the panel's
                    // steps j0 .. +8 at places group .. group + 8, the last
                    // at most base + 63·14 + 16 ≤ packed's length
                    // (asserted); VEC: the caller runs AVX2.
                    unsafe {
                        crate::simd::avx2::transpose8_f32(
                            w.as_ptr().add((ti * 14 + group) * BLOCK + j0) as *const f32,
                            BLOCK as isize,
                            packed.as_mut_ptr().add(base + j0 * 14 + group) as *mut f32,
                            14,
                        )
                    };
                    j0 += 8;
                }
            }
            for j in jf..nk {
                for ii in 0..14 {
                    packed[base + j * 14 + ii] = w[(ti * 14 + ii) * BLOCK + j];
                }
            }
        }
        return;
    }
    for i in 0..n {
        let base = (i / mr) * mr * BLOCK + i % mr;
        for j in 0..nk {
            packed[base + j * mr] = w[i * BLOCK + j];
        }
    }
}

#[inline(always)]
fn rows_body<T: AccFloat, const VEC: bool>(r: Rows<'_, T>) {
    let n = r.m.len();
    for i in 0..n {
        let at = i * BLOCK;
        let vis = r.vis.map(|v| &v[at..at + r.nk]);
        r.active[i] = row(
            &r.s[at..at + r.nk],
            vis,
            &mut r.m[i],
            &mut r.l[i],
            &mut r.a[i * r.dv..(i + 1) * r.dv],
            &mut r.w[at..at + r.nk],
        );
    }
    pack_weights::<T, VEC>(r.w, n, r.nk, r.packed, r.mr);
}

/// # Safety
/// The CPU runs AVX-512 F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx2,fma")]
unsafe fn rows_avx512<T: AccFloat>(r: Rows<'_, T>) {
    rows_body::<T, true>(r)
}

/// # Safety
/// The CPU runs AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn rows_avx2<T: AccFloat>(r: Rows<'_, T>) {
    rows_body::<T, true>(r)
}

/// The block's step for every row, on `tier`'s instructions (the same bits
/// on every tier).
pub(super) fn update<T: AccFloat>(tier: Tier, r: Rows<'_, T>) {
    #[cfg(target_arch = "x86_64")]
    if crate::tier::runs_avx512(tier) && tier.available() {
        // SAFETY: the tier executes AVX-512 F, AVX2 and FMA (`runs_avx512`)
        // and this CPU runs the tier (`available`).
        return unsafe { rows_avx512(r) };
    }
    #[cfg(target_arch = "x86_64")]
    if crate::tier::runs_avx2(tier) && tier.available() {
        // SAFETY: the tier executes AVX2 and FMA (`runs_avx2`) and this CPU
        // runs the tier (`available`).
        return unsafe { rows_avx2(r) };
    }
    let _ = tier;
    rows_body::<T, false>(r)
}
