//! The 256-bit registers (AVX2 and FMA): [`RealReg`] for `__m256` (8 × f32)
//! and `__m256d` (4 × f64), [`ComplexReg`] for [`Cf32x4`] and [`Cf64x2`].
//!
//! Every `unsafe` block below relies on the trait's `# Safety` contract: the
//! caller runs AVX2 and FMA (its `#[target_feature]`), and the pointers it
//! passes address the elements the method reads or writes.

use super::{ByteReg, ComplexReg, RealReg};
use core::arch::x86_64::*;
use num_complex::Complex;

/// The 8 lanes of `a` folded by halving (lane `i` takes `i + 4`, then
/// `i + 2`, then lane 0 takes lane 1), by products where `MUL`, else by sums.
///
/// # Safety
/// The CPU runs AVX2 (the caller's `#[target_feature]`).
#[inline(always)]
pub(super) unsafe fn halving_ps<const MUL: bool>(a: __m256) -> f32 {
    // SAFETY: AVX and SSE3 run (AVX2 does, this function's contract); no
    // memory is touched.
    unsafe {
        let op = |u: __m128, v: __m128| {
            if MUL {
                _mm_mul_ps(u, v)
            } else {
                _mm_add_ps(u, v)
            }
        };
        // i takes i + 4.
        let s4 = op(_mm256_castps256_ps128(a), _mm256_extractf128_ps::<1>(a));
        // i takes i + 2.
        let s2 = op(s4, _mm_movehl_ps(s4, s4));
        // 0 takes 1.
        let s1 = op(s2, _mm_movehdup_ps(s2));
        _mm_cvtss_f32(s1)
    }
}

/// The 4 lanes of `a` folded by halving (lanes 0, 1 take 2, 3, then lane 0
/// takes lane 1), by products where `MUL`, else by sums.
///
/// # Safety
/// The CPU runs AVX2 (the caller's `#[target_feature]`).
#[inline(always)]
pub(super) unsafe fn halving_pd<const MUL: bool>(a: __m256d) -> f64 {
    // SAFETY: AVX and SSE2 run (AVX2 does, this function's contract); no
    // memory is touched.
    unsafe {
        let op = |u: __m128d, v: __m128d| {
            if MUL {
                _mm_mul_pd(u, v)
            } else {
                _mm_add_pd(u, v)
            }
        };
        let s2 = op(_mm256_castpd256_pd128(a), _mm256_extractf128_pd::<1>(a));
        let s1 = op(s2, _mm_unpackhi_pd(s2, s2));
        _mm_cvtsd_f64(s1)
    }
}

impl RealReg for __m256 {
    type T = f32;
    const LANES: usize = 8;
    type Mask = __m256i;
    const MASK_REGISTERS: bool = false;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_setzero_ps() }
    }
    #[inline(always)]
    unsafe fn set1(v: f32) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_set1_ps(v) }
    }
    #[inline(always)]
    unsafe fn splat(p: *const f32) -> Self {
        // SAFETY: `*p` is readable (the trait's memory contract); AVX runs.
        unsafe { _mm256_broadcast_ss(&*p) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the 8 elements from `p` are readable (the trait's memory
        // contract); AVX runs.
        unsafe { _mm256_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the 8 elements from `p` are writable (the trait's memory
        // contract); AVX runs.
        unsafe { _mm256_storeu_ps(p, self) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_add_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn sub(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_sub_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_mul_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn fmadd(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: FMA runs (the trait's feature contract).
        unsafe { _mm256_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fnmadd(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: FMA runs (the trait's feature contract).
        unsafe { _mm256_fnmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fmsub(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: FMA runs (the trait's feature contract).
        unsafe { _mm256_fmsub_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn div(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_div_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn sqrt(a: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_sqrt_ps(a) }
    }
    #[inline(always)]
    unsafe fn neg(a: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_xor_ps(a, _mm256_set1_ps(-0.0)) }
    }
    #[inline(always)]
    unsafe fn abs(a: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_andnot_ps(_mm256_set1_ps(-0.0), a) }
    }
    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe {
            let t = _mm256_min_ps(a, b);
            let t = _mm256_blendv_ps(t, _mm256_or_ps(a, b), _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b));
            _mm256_blendv_ps(t, _mm256_add_ps(a, b), _mm256_cmp_ps::<_CMP_UNORD_Q>(a, b))
        }
    }
    #[inline(always)]
    unsafe fn max(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe {
            let t = _mm256_max_ps(a, b);
            let t = _mm256_blendv_ps(t, _mm256_and_ps(a, b), _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b));
            _mm256_blendv_ps(t, _mm256_add_ps(a, b), _mm256_cmp_ps::<_CMP_UNORD_Q>(a, b))
        }
    }
    #[inline(always)]
    unsafe fn first(n: usize) -> __m256i {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe {
            let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            _mm256_cmpgt_epi32(_mm256_set1_epi32(n.min(8) as i32), iota)
        }
    }
    #[inline(always)]
    unsafe fn from_lane(n: usize) -> __m256i {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe {
            // Lane i is set where i + 1 > n, that is i ≥ n.
            let iota1 = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8);
            _mm256_cmpgt_epi32(iota1, _mm256_set1_epi32(n.min(8) as i32))
        }
    }
    #[inline(always)]
    unsafe fn load_m(p: *const f32, m: __m256i) -> Self {
        // SAFETY: the masked lanes' elements are readable (the trait's memory
        // contract; `vmaskmovps` reads no other); AVX runs.
        unsafe { _mm256_maskload_ps(p, m) }
    }
    #[inline(always)]
    unsafe fn store_m(self, p: *mut f32, m: __m256i) {
        // SAFETY: the masked lanes' elements are writable (the trait's memory
        // contract; `vmaskmovps` writes no other); AVX runs.
        unsafe { _mm256_maskstore_ps(p, m, self) }
    }
    #[inline(always)]
    unsafe fn mul_m(a: Self, b: Self, m: __m256i) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_blendv_ps(a, _mm256_mul_ps(a, b), _mm256_castsi256_ps(m)) }
    }
    #[inline(always)]
    unsafe fn reduce_add(self) -> f32 {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { halving_ps::<false>(self) }
    }
    #[inline(always)]
    unsafe fn reduce_mul(self) -> f32 {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { halving_ps::<true>(self) }
    }
    #[inline(always)]
    unsafe fn shift_up_from(self, below: Self, d: usize) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract). Both registers
        // rotated up by d (index (i − d) mod 8), then the lanes i < d taken
        // from below's.
        unsafe {
            let d = d.min(8) as i32;
            let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            let idx = _mm256_and_si256(
                _mm256_sub_epi32(iota, _mm256_set1_epi32(d)),
                _mm256_set1_epi32(7),
            );
            let up = _mm256_permutevar8x32_ps(self, idx);
            let low = _mm256_permutevar8x32_ps(below, idx);
            let from_below = _mm256_cmpgt_epi32(_mm256_set1_epi32(d), iota);
            _mm256_blendv_ps(up, low, _mm256_castsi256_ps(from_below))
        }
    }
    #[inline(always)]
    unsafe fn splat_last(self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_permutevar8x32_ps(self, _mm256_set1_epi32(7)) }
    }
}

impl RealReg for __m256d {
    type T = f64;
    const LANES: usize = 4;
    type Mask = __m256i;
    const MASK_REGISTERS: bool = false;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_setzero_pd() }
    }
    #[inline(always)]
    unsafe fn set1(v: f64) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_set1_pd(v) }
    }
    #[inline(always)]
    unsafe fn splat(p: *const f64) -> Self {
        // SAFETY: `*p` is readable (the trait's memory contract); AVX runs.
        unsafe { _mm256_broadcast_sd(&*p) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        // SAFETY: the 4 elements from `p` are readable (the trait's memory
        // contract); AVX runs.
        unsafe { _mm256_loadu_pd(p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f64) {
        // SAFETY: the 4 elements from `p` are writable (the trait's memory
        // contract); AVX runs.
        unsafe { _mm256_storeu_pd(p, self) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_add_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn sub(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_sub_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_mul_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn fmadd(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: FMA runs (the trait's feature contract).
        unsafe { _mm256_fmadd_pd(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fnmadd(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: FMA runs (the trait's feature contract).
        unsafe { _mm256_fnmadd_pd(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fmsub(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: FMA runs (the trait's feature contract).
        unsafe { _mm256_fmsub_pd(a, b, c) }
    }
    #[inline(always)]
    unsafe fn div(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_div_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn sqrt(a: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_sqrt_pd(a) }
    }
    #[inline(always)]
    unsafe fn neg(a: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_xor_pd(a, _mm256_set1_pd(-0.0)) }
    }
    #[inline(always)]
    unsafe fn abs(a: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_andnot_pd(_mm256_set1_pd(-0.0), a) }
    }
    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe {
            let t = _mm256_min_pd(a, b);
            let t = _mm256_blendv_pd(t, _mm256_or_pd(a, b), _mm256_cmp_pd::<_CMP_EQ_OQ>(a, b));
            _mm256_blendv_pd(t, _mm256_add_pd(a, b), _mm256_cmp_pd::<_CMP_UNORD_Q>(a, b))
        }
    }
    #[inline(always)]
    unsafe fn max(a: Self, b: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe {
            let t = _mm256_max_pd(a, b);
            let t = _mm256_blendv_pd(t, _mm256_and_pd(a, b), _mm256_cmp_pd::<_CMP_EQ_OQ>(a, b));
            _mm256_blendv_pd(t, _mm256_add_pd(a, b), _mm256_cmp_pd::<_CMP_UNORD_Q>(a, b))
        }
    }
    #[inline(always)]
    unsafe fn first(n: usize) -> __m256i {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe {
            let iota = _mm256_setr_epi64x(0, 1, 2, 3);
            _mm256_cmpgt_epi64(_mm256_set1_epi64x(n.min(4) as i64), iota)
        }
    }
    #[inline(always)]
    unsafe fn from_lane(n: usize) -> __m256i {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe {
            // Lane i is set where i + 1 > n, that is i ≥ n.
            let iota1 = _mm256_setr_epi64x(1, 2, 3, 4);
            _mm256_cmpgt_epi64(iota1, _mm256_set1_epi64x(n.min(4) as i64))
        }
    }
    #[inline(always)]
    unsafe fn load_m(p: *const f64, m: __m256i) -> Self {
        // SAFETY: the masked lanes' elements are readable (the trait's memory
        // contract; `vmaskmovpd` reads no other); AVX runs.
        unsafe { _mm256_maskload_pd(p, m) }
    }
    #[inline(always)]
    unsafe fn store_m(self, p: *mut f64, m: __m256i) {
        // SAFETY: the masked lanes' elements are writable (the trait's memory
        // contract; `vmaskmovpd` writes no other); AVX runs.
        unsafe { _mm256_maskstore_pd(p, m, self) }
    }
    #[inline(always)]
    unsafe fn mul_m(a: Self, b: Self, m: __m256i) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_blendv_pd(a, _mm256_mul_pd(a, b), _mm256_castsi256_pd(m)) }
    }
    #[inline(always)]
    unsafe fn reduce_add(self) -> f64 {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { halving_pd::<false>(self) }
    }
    #[inline(always)]
    unsafe fn reduce_mul(self) -> f64 {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { halving_pd::<true>(self) }
    }
    #[inline(always)]
    unsafe fn shift_up_from(self, below: Self, d: usize) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract). As the f32
        // register's, on pairs of f32 lanes: f64 lane i is f32 lanes 2i and
        // 2i + 1.
        unsafe {
            let d = d.min(4) as i32;
            let lane = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
            let half = _mm256_setr_epi32(0, 1, 0, 1, 0, 1, 0, 1);
            let src = _mm256_and_si256(
                _mm256_sub_epi32(lane, _mm256_set1_epi32(d)),
                _mm256_set1_epi32(3),
            );
            let idx = _mm256_add_epi32(_mm256_add_epi32(src, src), half);
            let up = _mm256_permutevar8x32_ps(_mm256_castpd_ps(self), idx);
            let low = _mm256_permutevar8x32_ps(_mm256_castpd_ps(below), idx);
            let from_below = _mm256_cmpgt_epi32(_mm256_set1_epi32(d), lane);
            _mm256_castps_pd(_mm256_blendv_ps(up, low, _mm256_castsi256_ps(from_below)))
        }
    }
    #[inline(always)]
    unsafe fn splat_last(self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_permute4x64_pd::<0xFF>(self) }
    }
}

/// Four complex64 points in a ymm register.
#[derive(Clone, Copy)]
pub(crate) struct Cf32x4(__m256);
/// Two complex128 points in a ymm register.
#[derive(Clone, Copy)]
pub(crate) struct Cf64x2(__m256d);

impl ComplexReg for Cf32x4 {
    type T = f32;
    const L: usize = 4;
    #[inline(always)]
    unsafe fn load(p: *const Complex<f32>) -> Self {
        // SAFETY: 4 points are the 8 floats from `p`, readable (the trait's
        // memory contract); AVX2 and FMA run (its feature contract).
        unsafe { Cf32x4(RealReg::load(p as *const f32)) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut Complex<f32>) {
        // SAFETY: 4 points are the 8 floats from `p`, writable (the trait's
        // memory contract); AVX2 and FMA run.
        unsafe { self.0.store(p as *mut f32) }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: AVX2 and FMA run (the trait's feature contract).
        unsafe { Cf32x4(RealReg::add(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        // SAFETY: AVX2 and FMA run (the trait's feature contract).
        unsafe { Cf32x4(RealReg::sub(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn rot(self, inverse: bool) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe {
            let sw = _mm256_permute_ps(self.0, 0xB1);
            let m = if inverse {
                _mm256_setr_ps(-0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0)
            } else {
                _mm256_setr_ps(0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0)
            };
            Cf32x4(_mm256_xor_ps(sw, m))
        }
    }
    #[inline(always)]
    unsafe fn splat(w: Complex<f32>) -> (Self, Self) {
        // SAFETY: AVX2 and FMA run (the trait's feature contract).
        unsafe { (Cf32x4(RealReg::set1(w.re)), Cf32x4(RealReg::set1(w.im))) }
    }
    #[inline(always)]
    unsafe fn dup(w: Self) -> (Self, Self) {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe {
            (
                Cf32x4(_mm256_moveldup_ps(w.0)),
                Cf32x4(_mm256_movehdup_ps(w.0)),
            )
        }
    }
    #[inline(always)]
    unsafe fn cmul(self, wr: Self, wi: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe {
            let a = _mm256_mul_ps(self.0, wr.0);
            let b = _mm256_mul_ps(_mm256_permute_ps(self.0, 0xB1), wi.0);
            Cf32x4(_mm256_addsub_ps(a, b))
        }
    }
    #[inline(always)]
    unsafe fn mulr(self, c: f32) -> Self {
        // SAFETY: AVX2 and FMA run (the trait's feature contract).
        unsafe { Cf32x4(RealReg::mul(<__m256 as RealReg>::set1(c), self.0)) }
    }
    #[inline(always)]
    unsafe fn store4(b: [Self; 4], p: *mut Complex<f32>, row: usize) {
        // SAFETY: one complex64 is one f64 unit, so a row of four points is
        // the 4 units from `q + row·i`, i < 4: the rows the trait's memory
        // contract makes writable; AVX runs.
        unsafe {
            let (d0, d1) = (_mm256_castps_pd(b[0].0), _mm256_castps_pd(b[1].0));
            let (d2, d3) = (_mm256_castps_pd(b[2].0), _mm256_castps_pd(b[3].0));
            let t0 = _mm256_unpacklo_pd(d0, d1);
            let t1 = _mm256_unpackhi_pd(d0, d1);
            let t2 = _mm256_unpacklo_pd(d2, d3);
            let t3 = _mm256_unpackhi_pd(d2, d3);
            let q = p as *mut f64;
            _mm256_storeu_pd(q, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(q.add(row), _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(q.add(2 * row), _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(q.add(3 * row), _mm256_permute2f128_pd(t1, t3, 0x31));
        }
    }
    #[inline(always)]
    unsafe fn transpose(b: &mut [Self]) {
        let b: &mut [Self; 4] = b.try_into().expect("four registers");
        // SAFETY: AVX runs (the trait's feature contract); a complex64 point
        // is one 64-bit unit, so this is the 4 × 4 transpose of units.
        unsafe {
            let (d0, d1) = (_mm256_castps_pd(b[0].0), _mm256_castps_pd(b[1].0));
            let (d2, d3) = (_mm256_castps_pd(b[2].0), _mm256_castps_pd(b[3].0));
            let t0 = _mm256_unpacklo_pd(d0, d1); // d0.0 d1.0 | d0.2 d1.2
            let t1 = _mm256_unpackhi_pd(d0, d1); // d0.1 d1.1 | d0.3 d1.3
            let t2 = _mm256_unpacklo_pd(d2, d3);
            let t3 = _mm256_unpackhi_pd(d2, d3);
            b[0] = Cf32x4(_mm256_castpd_ps(_mm256_permute2f128_pd(t0, t2, 0x20)));
            b[1] = Cf32x4(_mm256_castpd_ps(_mm256_permute2f128_pd(t1, t3, 0x20)));
            b[2] = Cf32x4(_mm256_castpd_ps(_mm256_permute2f128_pd(t0, t2, 0x31)));
            b[3] = Cf32x4(_mm256_castpd_ps(_mm256_permute2f128_pd(t1, t3, 0x31)));
        }
    }
}

impl ComplexReg for Cf64x2 {
    type T = f64;
    const L: usize = 2;
    #[inline(always)]
    unsafe fn load(p: *const Complex<f64>) -> Self {
        // SAFETY: 2 points are the 4 doubles from `p`, readable (the trait's
        // memory contract); AVX2 and FMA run (its feature contract).
        unsafe { Cf64x2(RealReg::load(p as *const f64)) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut Complex<f64>) {
        // SAFETY: 2 points are the 4 doubles from `p`, writable (the trait's
        // memory contract); AVX2 and FMA run.
        unsafe { self.0.store(p as *mut f64) }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: AVX2 and FMA run (the trait's feature contract).
        unsafe { Cf64x2(RealReg::add(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        // SAFETY: AVX2 and FMA run (the trait's feature contract).
        unsafe { Cf64x2(RealReg::sub(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn rot(self, inverse: bool) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe {
            let sw = _mm256_permute_pd(self.0, 0b0101);
            let m = if inverse {
                _mm256_setr_pd(-0.0, 0.0, -0.0, 0.0)
            } else {
                _mm256_setr_pd(0.0, -0.0, 0.0, -0.0)
            };
            Cf64x2(_mm256_xor_pd(sw, m))
        }
    }
    #[inline(always)]
    unsafe fn splat(w: Complex<f64>) -> (Self, Self) {
        // SAFETY: AVX2 and FMA run (the trait's feature contract).
        unsafe { (Cf64x2(RealReg::set1(w.re)), Cf64x2(RealReg::set1(w.im))) }
    }
    #[inline(always)]
    unsafe fn dup(w: Self) -> (Self, Self) {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe {
            (
                Cf64x2(_mm256_movedup_pd(w.0)),
                Cf64x2(_mm256_permute_pd(w.0, 0b1111)),
            )
        }
    }
    #[inline(always)]
    unsafe fn cmul(self, wr: Self, wi: Self) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe {
            let a = _mm256_mul_pd(self.0, wr.0);
            let b = _mm256_mul_pd(_mm256_permute_pd(self.0, 0b0101), wi.0);
            Cf64x2(_mm256_addsub_pd(a, b))
        }
    }
    #[inline(always)]
    unsafe fn mulr(self, c: f64) -> Self {
        // SAFETY: AVX2 and FMA run (the trait's feature contract).
        unsafe { Cf64x2(RealReg::mul(<__m256d as RealReg>::set1(c), self.0)) }
    }
    #[inline(always)]
    unsafe fn store4(b: [Self; 4], p: *mut Complex<f64>, row: usize) {
        // SAFETY: a complex128 is two f64 units, so row i of four points is
        // the 8 units from `q + 2·row·i`, i < 2: the rows the trait's memory
        // contract makes writable; AVX runs.
        unsafe {
            let q = p as *mut f64;
            let r1 = q.add(2 * row);
            _mm256_storeu_pd(q, _mm256_permute2f128_pd(b[0].0, b[1].0, 0x20));
            _mm256_storeu_pd(q.add(4), _mm256_permute2f128_pd(b[2].0, b[3].0, 0x20));
            _mm256_storeu_pd(r1, _mm256_permute2f128_pd(b[0].0, b[1].0, 0x31));
            _mm256_storeu_pd(r1.add(4), _mm256_permute2f128_pd(b[2].0, b[3].0, 0x31));
        }
    }
    #[inline(always)]
    unsafe fn transpose(b: &mut [Self]) {
        let b: &mut [Self; 2] = b.try_into().expect("two registers");
        // SAFETY: AVX runs (the trait's feature contract); a complex128
        // point is one 128-bit half.
        unsafe {
            let (x, y) = (b[0].0, b[1].0);
            b[0] = Cf64x2(_mm256_permute2f128_pd(x, y, 0x20));
            b[1] = Cf64x2(_mm256_permute2f128_pd(x, y, 0x31));
        }
    }
}

/// An 8 × 8 tile of f32 transposed: row `j` of the source (eight values
/// from `src + j·rs`) becomes column `j` of the destination (eight rows
/// from `dst + d·ds`). A move of bits: no arithmetic.
///
/// # Safety
/// The CPU runs AVX2 (the caller's `#[target_feature]`); `src + j·rs + d`
/// is readable and `dst + d·ds + j` writable for `j, d < 8`.
#[inline(always)]
pub(crate) unsafe fn transpose8_f32(src: *const f32, rs: isize, dst: *mut f32, ds: isize) {
    // SAFETY: AVX runs; the loads and stores address the tile (the
    // contract).
    unsafe {
        let r: [__m256; 8] = core::array::from_fn(|j| _mm256_loadu_ps(src.offset(j as isize * rs)));
        let t0 = _mm256_unpacklo_ps(r[0], r[1]);
        let t1 = _mm256_unpackhi_ps(r[0], r[1]);
        let t2 = _mm256_unpacklo_ps(r[2], r[3]);
        let t3 = _mm256_unpackhi_ps(r[2], r[3]);
        let t4 = _mm256_unpacklo_ps(r[4], r[5]);
        let t5 = _mm256_unpackhi_ps(r[4], r[5]);
        let t6 = _mm256_unpacklo_ps(r[6], r[7]);
        let t7 = _mm256_unpackhi_ps(r[6], r[7]);
        let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
        let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
        let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
        let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
        let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
        let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
        let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
        let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
        let o = [
            _mm256_permute2f128_ps::<0x20>(u0, u4),
            _mm256_permute2f128_ps::<0x20>(u1, u5),
            _mm256_permute2f128_ps::<0x20>(u2, u6),
            _mm256_permute2f128_ps::<0x20>(u3, u7),
            _mm256_permute2f128_ps::<0x31>(u0, u4),
            _mm256_permute2f128_ps::<0x31>(u1, u5),
            _mm256_permute2f128_ps::<0x31>(u2, u6),
            _mm256_permute2f128_ps::<0x31>(u3, u7),
        ];
        for (d, v) in o.into_iter().enumerate() {
            _mm256_storeu_ps(dst.offset(d as isize * ds), v);
        }
    }
}

/// A 4 × 4 tile of f64 transposed, as [`transpose8_f32`].
///
/// # Safety
/// The CPU runs AVX2; `src + j·rs + d` is readable and `dst + d·ds + j`
/// writable for `j, d < 4`.
#[inline(always)]
pub(crate) unsafe fn transpose4_f64(src: *const f64, rs: isize, dst: *mut f64, ds: isize) {
    // SAFETY: AVX runs; the loads and stores address the tile.
    unsafe {
        let r: [__m256d; 4] =
            core::array::from_fn(|j| _mm256_loadu_pd(src.offset(j as isize * rs)));
        let t0 = _mm256_unpacklo_pd(r[0], r[1]);
        let t1 = _mm256_unpackhi_pd(r[0], r[1]);
        let t2 = _mm256_unpacklo_pd(r[2], r[3]);
        let t3 = _mm256_unpackhi_pd(r[2], r[3]);
        let o = [
            _mm256_permute2f128_pd::<0x20>(t0, t2),
            _mm256_permute2f128_pd::<0x20>(t1, t3),
            _mm256_permute2f128_pd::<0x31>(t0, t2),
            _mm256_permute2f128_pd::<0x31>(t1, t3),
        ];
        for (d, v) in o.into_iter().enumerate() {
            _mm256_storeu_pd(dst.offset(d as isize * ds), v);
        }
    }
}

impl ByteReg for __m256i {
    const LANES: usize = 32;
    #[inline(always)]
    unsafe fn set1(v: u8) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_set1_epi8(v as i8) }
    }
    #[inline(always)]
    unsafe fn table16(t: &[u8; 16]) -> Self {
        // SAFETY: AVX2 runs; `t` is 16 readable bytes.
        unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr() as *const __m128i)) }
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the 32 bytes from `p` are readable (the trait's memory
        // contract); AVX runs.
        unsafe { _mm256_loadu_si256(p as *const __m256i) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: the 32 bytes from `p` are writable (the trait's memory
        // contract); AVX runs.
        unsafe { _mm256_storeu_si256(p as *mut __m256i, self) }
    }
    #[inline(always)]
    unsafe fn and(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_and_si256(a, b) }
    }
    #[inline(always)]
    unsafe fn or(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_or_si256(a, b) }
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_xor_si256(a, b) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_add_epi8(a, b) }
    }
    #[inline(always)]
    unsafe fn subs(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_subs_epu8(a, b) }
    }
    #[inline(always)]
    unsafe fn eq(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_cmpeq_epi8(a, b) }
    }
    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_min_epu8(a, b) }
    }
    #[inline(always)]
    unsafe fn eq_bits(a: Self, b: Self) -> u64 {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_movemask_epi8(_mm256_cmpeq_epi8(a, b)) as u32 as u64 }
    }
    #[inline(always)]
    unsafe fn high_bits(a: Self) -> u64 {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_movemask_epi8(a) as u32 as u64 }
    }
    #[inline(always)]
    unsafe fn nonzero_bits(a: Self) -> u64 {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe {
            !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, _mm256_setzero_si256())) as u32) as u64
        }
    }
    #[inline(always)]
    unsafe fn any(a: Self) -> bool {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_testz_si256(a, a) == 0 }
    }
    #[inline(always)]
    unsafe fn high_nibbles(a: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_and_si256(_mm256_srli_epi16::<4>(a), _mm256_set1_epi8(0x0f)) }
    }
    #[inline(always)]
    unsafe fn low_nibbles(a: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_and_si256(a, _mm256_set1_epi8(0x0f)) }
    }
    #[inline(always)]
    unsafe fn lookup16(t: Self, idx: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract); each 128-bit
        // block of `t` holds the whole table.
        unsafe { _mm256_shuffle_epi8(t, idx) }
    }
    #[inline(always)]
    unsafe fn prev1(cur: Self, prev: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract). `t` is prev's
        // high half then cur's low half: the 16 bytes before each half of cur.
        unsafe { _mm256_alignr_epi8::<15>(cur, _mm256_permute2x128_si256::<0x21>(prev, cur)) }
    }
    #[inline(always)]
    unsafe fn prev2(cur: Self, prev: Self) -> Self {
        // SAFETY: as prev1.
        unsafe { _mm256_alignr_epi8::<14>(cur, _mm256_permute2x128_si256::<0x21>(prev, cur)) }
    }
    #[inline(always)]
    unsafe fn prev3(cur: Self, prev: Self) -> Self {
        // SAFETY: as prev1.
        unsafe { _mm256_alignr_epi8::<13>(cur, _mm256_permute2x128_si256::<0x21>(prev, cur)) }
    }
    #[inline(always)]
    unsafe fn sum(a: Self) -> u64 {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe {
            let s = _mm256_sad_epu8(a, _mm256_setzero_si256());
            let h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
            (_mm_cvtsi128_si64(h) + _mm_extract_epi64::<1>(h)) as u64
        }
    }
    #[inline(always)]
    unsafe fn zip(a: Self, b: Self) -> (Self, Self) {
        // SAFETY: AVX2 runs (the trait's feature contract). The unpacks
        // interleave within each 128-bit half; the permutes put the halves
        // in memory order.
        unsafe {
            let lo = _mm256_unpacklo_epi8(a, b);
            let hi = _mm256_unpackhi_epi8(a, b);
            (
                _mm256_permute2x128_si256::<0x20>(lo, hi),
                _mm256_permute2x128_si256::<0x31>(lo, hi),
            )
        }
    }
    #[inline(always)]
    unsafe fn pack_nibble_pairs(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract). maddubs forms
        // 16·x[2j] + x[2j+1] (≤ 255) in 16-bit lanes; packus narrows them per
        // 128-bit half (a's, b's, a's, b's); the permute restores the order.
        unsafe {
            let w = _mm256_set1_epi16(0x0110);
            let pa = _mm256_maddubs_epi16(a, w);
            let pb = _mm256_maddubs_epi16(b, w);
            _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi16(pa, pb))
        }
    }
    #[inline(always)]
    unsafe fn set1_u32(v: u32) -> Self {
        // SAFETY: AVX runs (the trait's feature contract).
        unsafe { _mm256_set1_epi32(v as i32) }
    }
    #[inline(always)]
    unsafe fn mulhi_u16(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_mulhi_epu16(a, b) }
    }
    #[inline(always)]
    unsafe fn mullo_u16(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_mullo_epi16(a, b) }
    }
    #[inline(always)]
    unsafe fn maddubs(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_maddubs_epi16(a, b) }
    }
    #[inline(always)]
    unsafe fn madd16(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_madd_epi16(a, b) }
    }
    #[inline(always)]
    unsafe fn load12(p: *const u8) -> Self {
        // SAFETY: the 24 bytes from `p` are readable (the trait's memory
        // contract): the first 16 and the 16 from p + 8, whose last 12 are
        // shifted down; AVX2 runs. Each block's last four lanes are zeroed.
        unsafe {
            let keep = _mm_set_epi32(0, -1, -1, -1);
            let lo = _mm_and_si128(_mm_loadu_si128(p as *const __m128i), keep);
            let hi = _mm_srli_si128::<4>(_mm_loadu_si128(p.add(8) as *const __m128i));
            _mm256_set_m128i(hi, lo)
        }
    }
    #[inline(always)]
    unsafe fn store12(self, p: *mut u8) {
        // SAFETY: the 24 bytes from `p` are writable (the trait's memory
        // contract): 8 + 4 bytes from each 128-bit half; AVX2 runs.
        unsafe {
            let lo = _mm256_castsi256_si128(self);
            let hi = _mm256_extracti128_si256::<1>(self);
            _mm_storel_epi64(p as *mut __m128i, lo);
            (p.add(8) as *mut i32).write_unaligned(_mm_extract_epi32::<2>(lo));
            _mm_storel_epi64(p.add(12) as *mut __m128i, hi);
            (p.add(20) as *mut i32).write_unaligned(_mm_extract_epi32::<2>(hi));
        }
    }
    #[inline(always)]
    unsafe fn permute_u32(a: Self, idx: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_permutevar8x32_epi32(a, idx) }
    }
    #[inline(always)]
    unsafe fn even_u32(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract). The shuffle
        // gives a0 a2 b0 b2 | a4 a6 b4 b6; the 64-bit permute orders it.
        unsafe {
            let t =
                _mm256_shuffle_ps::<0b10_00_10_00>(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
            _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_castps_si256(t))
        }
    }
    #[inline(always)]
    unsafe fn shr_u64_by(a: Self, n: Self) -> Self {
        // SAFETY: AVX2 runs (the trait's feature contract).
        unsafe { _mm256_srlv_epi64(a, n) }
    }
    #[inline(always)]
    unsafe fn prefetch(p: *const u8) {
        // SAFETY: a prefetch is a hint that reads no memory and faults on no
        // address; SSE runs wherever this tier does.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) }
    }
}
