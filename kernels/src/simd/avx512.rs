//! The 512-bit registers (AVX-512 F, with AVX2 and FMA; DQ besides for the
//! complex ones): [`RealReg`] for `__m512` (16 × f32) and `__m512d`
//! (8 × f64), [`ComplexReg`] for [`Cf32x8`] and [`Cf64x4`], and the
//! transposes of the FFT's 64-point lines.
//!
//! Every `unsafe` block below relies on the trait's `# Safety` contract: the
//! caller runs the features (its `#[target_feature]`), and the pointers it
//! passes address the elements the method reads or writes.

use super::avx2::{halving_pd, halving_ps};
use super::{ByteReg, ComplexReg, KeyReg, RealReg};
use core::arch::x86_64::*;
use num_complex::Complex;

impl RealReg for __m512 {
    type T = f32;
    const LANES: usize = 16;
    type Mask = __mmask16;
    const MASK_REGISTERS: bool = true;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_setzero_ps() }
    }
    #[inline(always)]
    unsafe fn set1(v: f32) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_set1_ps(v) }
    }
    #[inline(always)]
    unsafe fn splat(p: *const f32) -> Self {
        // SAFETY: `*p` is readable (the trait's memory contract); AVX-512 F
        // runs.
        unsafe { _mm512_set1_ps(*p) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the 16 elements from `p` are readable (the trait's memory
        // contract); AVX-512 F runs.
        unsafe { _mm512_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the 16 elements from `p` are writable (the trait's memory
        // contract); AVX-512 F runs.
        unsafe { _mm512_storeu_ps(p, self) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_add_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn sub(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_sub_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_mul_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn fmadd(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fnmadd(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_fnmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fmsub(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_fmsub_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn div(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_div_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn sqrt(a: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_sqrt_ps(a) }
    }
    #[inline(always)]
    unsafe fn neg(a: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract); integer
        // forms, which AVX-512 F has (the float ones need DQ).
        unsafe {
            _mm512_castsi512_ps(_mm512_xor_si512(
                _mm512_castps_si512(a),
                _mm512_set1_epi32(i32::MIN),
            ))
        }
    }
    #[inline(always)]
    unsafe fn abs(a: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe {
            _mm512_castsi512_ps(_mm512_and_si512(
                _mm512_castps_si512(a),
                _mm512_set1_epi32(i32::MAX),
            ))
        }
    }
    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract); the
        // bitwise or in its integer form (the float one needs DQ).
        unsafe {
            let or = _mm512_castsi512_ps(_mm512_or_si512(
                _mm512_castps_si512(a),
                _mm512_castps_si512(b),
            ));
            let t = _mm512_min_ps(a, b);
            let t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b), t, or);
            _mm512_mask_blend_ps(
                _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, b),
                t,
                _mm512_add_ps(a, b),
            )
        }
    }
    #[inline(always)]
    unsafe fn max(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract); the
        // bitwise and in its integer form (the float one needs DQ).
        unsafe {
            let and = _mm512_castsi512_ps(_mm512_and_si512(
                _mm512_castps_si512(a),
                _mm512_castps_si512(b),
            ));
            let t = _mm512_max_ps(a, b);
            let t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b), t, and);
            _mm512_mask_blend_ps(
                _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, b),
                t,
                _mm512_add_ps(a, b),
            )
        }
    }
    #[inline(always)]
    unsafe fn first(n: usize) -> __mmask16 {
        ((1u32 << n.min(16)) - 1) as __mmask16
    }
    #[inline(always)]
    unsafe fn from_lane(n: usize) -> __mmask16 {
        (0xFFFFu32 << n.min(16)) as __mmask16
    }
    #[inline(always)]
    unsafe fn load_m(p: *const f32, m: __mmask16) -> Self {
        // SAFETY: the masked lanes' elements are readable (the trait's memory
        // contract; masked-off lanes are not accessed); AVX-512 F runs.
        unsafe { _mm512_maskz_loadu_ps(m, p) }
    }
    #[inline(always)]
    unsafe fn store_m(self, p: *mut f32, m: __mmask16) {
        // SAFETY: the masked lanes' elements are writable (the trait's memory
        // contract; masked-off lanes are not accessed); AVX-512 F runs.
        unsafe { _mm512_mask_storeu_ps(p, m, self) }
    }
    #[inline(always)]
    unsafe fn mul_m(a: Self, b: Self, m: __mmask16) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_mask_mul_ps(a, m, a, b) }
    }
    #[inline(always)]
    unsafe fn reduce_add(self) -> f32 {
        // SAFETY: AVX-512 F and AVX2 run (the trait's feature contract).
        unsafe { halving_ps::<false>(RealReg::add(lo_ps(self), hi_ps(self))) }
    }
    #[inline(always)]
    unsafe fn reduce_mul(self) -> f32 {
        // SAFETY: AVX-512 F and AVX2 run (the trait's feature contract).
        unsafe { halving_ps::<true>(RealReg::mul(lo_ps(self), hi_ps(self))) }
    }
    #[inline(always)]
    unsafe fn shift_up_from(self, below: Self, d: usize) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract). Index
        // 16 + i − d picks self's lane i − d (indices 16..32) or below's
        // lane 16 + i − d (indices 0..16).
        unsafe {
            let iota = _mm512_setr_epi32(
                16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
            );
            let idx = _mm512_sub_epi32(iota, _mm512_set1_epi32(d.min(16) as i32));
            _mm512_permutex2var_ps(below, idx, self)
        }
    }
    #[inline(always)]
    unsafe fn splat_last(self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_permutexvar_ps(_mm512_set1_epi32(15), self) }
    }
}

/// Lanes 0..8 of `a`.
///
/// # Safety
/// The CPU runs AVX-512 F (the caller's `#[target_feature]`).
#[inline(always)]
unsafe fn lo_ps(a: __m512) -> __m256 {
    // SAFETY: AVX-512 F runs (this function's contract).
    unsafe { _mm512_castps512_ps256(a) }
}

/// Lanes 8..16 of `a` (moved as 64-bit units: AVX-512 F has no 8 × f32
/// extract).
///
/// # Safety
/// The CPU runs AVX-512 F (the caller's `#[target_feature]`).
#[inline(always)]
unsafe fn hi_ps(a: __m512) -> __m256 {
    // SAFETY: AVX-512 F runs (this function's contract).
    unsafe { _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(a))) }
}

impl RealReg for __m512d {
    type T = f64;
    const LANES: usize = 8;
    type Mask = __mmask8;
    const MASK_REGISTERS: bool = true;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_setzero_pd() }
    }
    #[inline(always)]
    unsafe fn set1(v: f64) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_set1_pd(v) }
    }
    #[inline(always)]
    unsafe fn splat(p: *const f64) -> Self {
        // SAFETY: `*p` is readable (the trait's memory contract); AVX-512 F
        // runs.
        unsafe { _mm512_set1_pd(*p) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        // SAFETY: the 8 elements from `p` are readable (the trait's memory
        // contract); AVX-512 F runs.
        unsafe { _mm512_loadu_pd(p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f64) {
        // SAFETY: the 8 elements from `p` are writable (the trait's memory
        // contract); AVX-512 F runs.
        unsafe { _mm512_storeu_pd(p, self) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_add_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn sub(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_sub_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_mul_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn fmadd(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_fmadd_pd(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fnmadd(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_fnmadd_pd(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fmsub(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_fmsub_pd(a, b, c) }
    }
    #[inline(always)]
    unsafe fn div(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_div_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn sqrt(a: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_sqrt_pd(a) }
    }
    #[inline(always)]
    unsafe fn neg(a: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract); integer
        // forms, which AVX-512 F has (the float ones need DQ).
        unsafe {
            _mm512_castsi512_pd(_mm512_xor_si512(
                _mm512_castpd_si512(a),
                _mm512_set1_epi64(i64::MIN),
            ))
        }
    }
    #[inline(always)]
    unsafe fn abs(a: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe {
            _mm512_castsi512_pd(_mm512_and_si512(
                _mm512_castpd_si512(a),
                _mm512_set1_epi64(i64::MAX),
            ))
        }
    }
    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract); the
        // bitwise or in its integer form (the float one needs DQ).
        unsafe {
            let or = _mm512_castsi512_pd(_mm512_or_si512(
                _mm512_castpd_si512(a),
                _mm512_castpd_si512(b),
            ));
            let t = _mm512_min_pd(a, b);
            let t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, b), t, or);
            _mm512_mask_blend_pd(
                _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(a, b),
                t,
                _mm512_add_pd(a, b),
            )
        }
    }
    #[inline(always)]
    unsafe fn max(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract); the
        // bitwise and in its integer form (the float one needs DQ).
        unsafe {
            let and = _mm512_castsi512_pd(_mm512_and_si512(
                _mm512_castpd_si512(a),
                _mm512_castpd_si512(b),
            ));
            let t = _mm512_max_pd(a, b);
            let t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, b), t, and);
            _mm512_mask_blend_pd(
                _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(a, b),
                t,
                _mm512_add_pd(a, b),
            )
        }
    }
    #[inline(always)]
    unsafe fn first(n: usize) -> __mmask8 {
        ((1u32 << n.min(8)) - 1) as __mmask8
    }
    #[inline(always)]
    unsafe fn from_lane(n: usize) -> __mmask8 {
        (0xFFu32 << n.min(8)) as __mmask8
    }
    #[inline(always)]
    unsafe fn load_m(p: *const f64, m: __mmask8) -> Self {
        // SAFETY: the masked lanes' elements are readable (the trait's memory
        // contract; masked-off lanes are not accessed); AVX-512 F runs.
        unsafe { _mm512_maskz_loadu_pd(m, p) }
    }
    #[inline(always)]
    unsafe fn store_m(self, p: *mut f64, m: __mmask8) {
        // SAFETY: the masked lanes' elements are writable (the trait's memory
        // contract; masked-off lanes are not accessed); AVX-512 F runs.
        unsafe { _mm512_mask_storeu_pd(p, m, self) }
    }
    #[inline(always)]
    unsafe fn mul_m(a: Self, b: Self, m: __mmask8) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_mask_mul_pd(a, m, a, b) }
    }
    #[inline(always)]
    unsafe fn reduce_add(self) -> f64 {
        // SAFETY: AVX-512 F and AVX2 run (the trait's feature contract).
        unsafe {
            let (lo, hi) = (
                _mm512_castpd512_pd256(self),
                _mm512_extractf64x4_pd::<1>(self),
            );
            halving_pd::<false>(_mm256_add_pd(lo, hi))
        }
    }
    #[inline(always)]
    unsafe fn reduce_mul(self) -> f64 {
        // SAFETY: AVX-512 F and AVX2 run (the trait's feature contract).
        unsafe {
            let (lo, hi) = (
                _mm512_castpd512_pd256(self),
                _mm512_extractf64x4_pd::<1>(self),
            );
            halving_pd::<true>(_mm256_mul_pd(lo, hi))
        }
    }
    #[inline(always)]
    unsafe fn shift_up_from(self, below: Self, d: usize) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract). Index
        // 8 + i − d picks self's lane i − d (indices 8..16) or below's lane
        // 8 + i − d (indices 0..8).
        unsafe {
            let iota = _mm512_setr_epi64(8, 9, 10, 11, 12, 13, 14, 15);
            let idx = _mm512_sub_epi64(iota, _mm512_set1_epi64(d.min(8) as i64));
            _mm512_permutex2var_pd(below, idx, self)
        }
    }
    #[inline(always)]
    unsafe fn splat_last(self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_permutexvar_pd(_mm512_set1_epi64(7), self) }
    }
}

/// Eight complex64 points in a zmm register.
#[derive(Clone, Copy)]
pub(crate) struct Cf32x8(__m512);
/// Four complex128 points in a zmm register.
#[derive(Clone, Copy)]
pub(crate) struct Cf64x4(__m512d);

/// `a + (b with the real parts negated)`: `addsub`'s bits (an exact
/// negation, then one rounded addition per lane), which AVX-512 lacks.
///
/// # Safety
/// The CPU runs AVX-512 F and DQ (the caller's `#[target_feature]`).
#[inline(always)]
unsafe fn addsub512_ps(a: __m512, b: __m512) -> __m512 {
    // SAFETY: AVX-512 F and DQ run (this function's contract).
    unsafe {
        let m = _mm512_castsi512_ps(_mm512_set1_epi64(0x0000_0000_8000_0000));
        _mm512_add_ps(a, _mm512_xor_ps(b, m))
    }
}

/// [`addsub512_ps`] for complex128.
///
/// # Safety
/// The CPU runs AVX-512 F and DQ (the caller's `#[target_feature]`).
#[inline(always)]
unsafe fn addsub512_pd(a: __m512d, b: __m512d) -> __m512d {
    // SAFETY: AVX-512 F and DQ run (this function's contract).
    unsafe {
        let m = _mm512_castsi512_pd(_mm512_set_epi64(
            0,
            i64::MIN,
            0,
            i64::MIN,
            0,
            i64::MIN,
            0,
            i64::MIN,
        ));
        _mm512_add_pd(a, _mm512_xor_pd(b, m))
    }
}

impl Cf32x8 {
    /// The 4 × 8 transpose of `b` (complex64 points as 64-bit units):
    /// vector j holds rows 2j and 2j + 1 (row i: `b[0][i] … b[3][i]`), the
    /// low and high halves.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F (the caller's `#[target_feature]`); no memory
    /// is touched.
    #[inline(always)]
    unsafe fn rows4(b: [Cf32x8; 4]) -> [__m512d; 4] {
        // SAFETY: AVX-512 F runs (this function's contract).
        unsafe {
            // Each complex64 is one 64-bit unit: a 4 × 8 transpose of units.
            let (d0, d1) = (_mm512_castps_pd(b[0].0), _mm512_castps_pd(b[1].0));
            let (d2, d3) = (_mm512_castps_pd(b[2].0), _mm512_castps_pd(b[3].0));
            let l01 = _mm512_unpacklo_pd(d0, d1); // b0[2j], b1[2j] per 128-bit lane j
            let h01 = _mm512_unpackhi_pd(d0, d1); // b0[2j+1], b1[2j+1]
            let l23 = _mm512_unpacklo_pd(d2, d3);
            let h23 = _mm512_unpackhi_pd(d2, d3);
            // Lanes j = 0, 1 of each, then j = 2, 3.
            let lo = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
            let hi = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
            let u0 = _mm512_permutex2var_pd(l01, lo, l23); // l01.0 l23.0 l01.1 l23.1
            let v0 = _mm512_permutex2var_pd(h01, lo, h23); // h01.0 h23.0 h01.1 h23.1
            let u1 = _mm512_permutex2var_pd(l01, hi, l23);
            let v1 = _mm512_permutex2var_pd(h01, hi, h23);
            // Row 2j: l01.j l23.j; row 2j + 1: h01.j h23.j.
            [
                _mm512_shuffle_f64x2(u0, v0, 0x44),
                _mm512_shuffle_f64x2(u0, v0, 0xEE),
                _mm512_shuffle_f64x2(u1, v1, 0x44),
                _mm512_shuffle_f64x2(u1, v1, 0xEE),
            ]
        }
    }

    /// The 8 × 8 transpose: vector i is `b[0][i] … b[7][i]`.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F (the caller's `#[target_feature]`); no memory
    /// is touched.
    #[inline(always)]
    pub(crate) unsafe fn transpose8(b: [Cf32x8; 8]) -> [Cf32x8; 8] {
        // SAFETY: AVX-512 F runs (this function's contract).
        unsafe {
            let lo = Cf32x8::rows4([b[0], b[1], b[2], b[3]]);
            let hi = Cf32x8::rows4([b[4], b[5], b[6], b[7]]);
            let mut out = [b[0]; 8];
            for j in 0..4 {
                out[2 * j] = Cf32x8(_mm512_castpd_ps(_mm512_shuffle_f64x2(lo[j], hi[j], 0x44)));
                out[2 * j + 1] = Cf32x8(_mm512_castpd_ps(_mm512_shuffle_f64x2(lo[j], hi[j], 0xEE)));
            }
            out
        }
    }
}

impl ComplexReg for Cf32x8 {
    type T = f32;
    const L: usize = 8;
    #[inline(always)]
    unsafe fn load(p: *const Complex<f32>) -> Self {
        // SAFETY: 8 points are the 16 floats from `p`, readable (the trait's
        // memory contract); AVX-512 F runs (its feature contract).
        unsafe { Cf32x8(RealReg::load(p as *const f32)) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut Complex<f32>) {
        // SAFETY: 8 points are the 16 floats from `p`, writable (the trait's
        // memory contract); AVX-512 F runs.
        unsafe { self.0.store(p as *mut f32) }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { Cf32x8(RealReg::add(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { Cf32x8(RealReg::sub(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn rot(self, inverse: bool) -> Self {
        // SAFETY: AVX-512 F and DQ run (the trait's feature contract).
        unsafe {
            let sw = _mm512_permute_ps(self.0, 0xB1);
            // Negate the real parts (inverse: +i·z = (−im, re)) or the
            // imaginary parts (forward: −i·z = (im, −re)) of the swapped pairs.
            let bits: i64 = if inverse {
                0x0000_0000_8000_0000
            } else {
                0x8000_0000_0000_0000u64 as i64
            };
            Cf32x8(_mm512_xor_ps(
                sw,
                _mm512_castsi512_ps(_mm512_set1_epi64(bits)),
            ))
        }
    }
    #[inline(always)]
    unsafe fn splat(w: Complex<f32>) -> (Self, Self) {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { (Cf32x8(RealReg::set1(w.re)), Cf32x8(RealReg::set1(w.im))) }
    }
    #[inline(always)]
    unsafe fn dup(w: Self) -> (Self, Self) {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe {
            (
                Cf32x8(_mm512_moveldup_ps(w.0)),
                Cf32x8(_mm512_movehdup_ps(w.0)),
            )
        }
    }
    #[inline(always)]
    unsafe fn cmul(self, wr: Self, wi: Self) -> Self {
        // SAFETY: AVX-512 F and DQ run (the trait's feature contract).
        unsafe {
            let a = _mm512_mul_ps(self.0, wr.0);
            let b = _mm512_mul_ps(_mm512_permute_ps(self.0, 0xB1), wi.0);
            Cf32x8(addsub512_ps(a, b))
        }
    }
    #[inline(always)]
    unsafe fn mulr(self, c: f32) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { Cf32x8(RealReg::mul(<__m512 as RealReg>::set1(c), self.0)) }
    }
    #[inline(always)]
    unsafe fn store4(b: [Self; 4], p: *mut Complex<f32>, row: usize) {
        // SAFETY: one complex64 is one f64 unit; row i of four points is the
        // 4 units from `q + row·i`, i < 8 (with `row` = 4, the 32 units from
        // `q`): the rows the trait's memory contract makes writable; AVX-512
        // F runs.
        unsafe {
            let q = p as *mut f64;
            let rows = Cf32x8::rows4(b);
            if row == 4 {
                for (j, v) in rows.iter().enumerate() {
                    _mm512_storeu_pd(q.add(8 * j), *v);
                }
            } else {
                for (j, v) in rows.iter().enumerate() {
                    _mm256_storeu_pd(q.add(2 * j * row), _mm512_castpd512_pd256(*v));
                    _mm256_storeu_pd(q.add((2 * j + 1) * row), _mm512_extractf64x4_pd(*v, 1));
                }
            }
        }
    }
    #[inline(always)]
    unsafe fn transpose(b: &mut [Self]) {
        let r: &mut [Self; 8] = b.try_into().expect("eight registers");
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        *r = unsafe { Cf32x8::transpose8(*r) };
    }
}

impl ComplexReg for Cf64x4 {
    type T = f64;
    const L: usize = 4;
    #[inline(always)]
    unsafe fn load(p: *const Complex<f64>) -> Self {
        // SAFETY: 4 points are the 8 doubles from `p`, readable (the trait's
        // memory contract); AVX-512 F runs (its feature contract).
        unsafe { Cf64x4(RealReg::load(p as *const f64)) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut Complex<f64>) {
        // SAFETY: 4 points are the 8 doubles from `p`, writable (the trait's
        // memory contract); AVX-512 F runs.
        unsafe { self.0.store(p as *mut f64) }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { Cf64x4(RealReg::add(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { Cf64x4(RealReg::sub(self.0, o.0)) }
    }
    #[inline(always)]
    unsafe fn rot(self, inverse: bool) -> Self {
        // SAFETY: AVX-512 F and DQ run (the trait's feature contract).
        unsafe {
            let sw = _mm512_permute_pd(self.0, 0b0101_0101);
            let (re, im) = if inverse {
                (i64::MIN, 0)
            } else {
                (0, i64::MIN)
            };
            let m = _mm512_set_epi64(im, re, im, re, im, re, im, re);
            Cf64x4(_mm512_xor_pd(sw, _mm512_castsi512_pd(m)))
        }
    }
    #[inline(always)]
    unsafe fn splat(w: Complex<f64>) -> (Self, Self) {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { (Cf64x4(RealReg::set1(w.re)), Cf64x4(RealReg::set1(w.im))) }
    }
    #[inline(always)]
    unsafe fn dup(w: Self) -> (Self, Self) {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe {
            (
                Cf64x4(_mm512_movedup_pd(w.0)),
                Cf64x4(_mm512_permute_pd(w.0, 0b1111_1111)),
            )
        }
    }
    #[inline(always)]
    unsafe fn cmul(self, wr: Self, wi: Self) -> Self {
        // SAFETY: AVX-512 F and DQ run (the trait's feature contract).
        unsafe {
            let a = _mm512_mul_pd(self.0, wr.0);
            let b = _mm512_mul_pd(_mm512_permute_pd(self.0, 0b0101_0101), wi.0);
            Cf64x4(addsub512_pd(a, b))
        }
    }
    #[inline(always)]
    unsafe fn mulr(self, c: f64) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { Cf64x4(RealReg::mul(<__m512d as RealReg>::set1(c), self.0)) }
    }
    #[inline(always)]
    unsafe fn store4(b: [Self; 4], p: *mut Complex<f64>, row: usize) {
        // SAFETY: a complex128 is two f64 units, so row i of four points is
        // the 8 units from `q + 2·row·i`, i < 4: the rows the trait's memory
        // contract makes writable; AVX-512 F runs.
        unsafe {
            let q = p as *mut f64;
            let t = Cf64x4::transpose4(b);
            for (i, v) in t.iter().enumerate() {
                _mm512_storeu_pd(q.add(2 * i * row), v.0);
            }
        }
    }
    #[inline(always)]
    unsafe fn transpose(b: &mut [Self]) {
        let r: &mut [Self; 4] = b.try_into().expect("four registers");
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        *r = unsafe { Cf64x4::transpose4(*r) };
    }
}

impl Cf64x4 {
    /// The 4 × 4 transpose of complex128 points (128-bit lanes): vector
    /// i is `b[0][i] … b[3][i]`.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F (the caller's `#[target_feature]`); no memory
    /// is touched.
    #[inline(always)]
    pub(crate) unsafe fn transpose4(b: [Cf64x4; 4]) -> [Cf64x4; 4] {
        // SAFETY: AVX-512 F runs (this function's contract).
        unsafe {
            let t0 = _mm512_shuffle_f64x2(b[0].0, b[1].0, 0x44); // b0.0 b0.1 b1.0 b1.1
            let t1 = _mm512_shuffle_f64x2(b[2].0, b[3].0, 0x44); // b2.0 b2.1 b3.0 b3.1
            let t2 = _mm512_shuffle_f64x2(b[0].0, b[1].0, 0xEE); // b0.2 b0.3 b1.2 b1.3
            let t3 = _mm512_shuffle_f64x2(b[2].0, b[3].0, 0xEE);
            [
                Cf64x4(_mm512_shuffle_f64x2(t0, t1, 0x88)),
                Cf64x4(_mm512_shuffle_f64x2(t0, t1, 0xDD)),
                Cf64x4(_mm512_shuffle_f64x2(t2, t3, 0x88)),
                Cf64x4(_mm512_shuffle_f64x2(t2, t3, 0xDD)),
            ]
        }
    }
}

impl ByteReg for __m512i {
    const LANES: usize = 64;
    #[inline(always)]
    unsafe fn set1(v: u8) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_set1_epi8(v as i8) }
    }
    #[inline(always)]
    unsafe fn table16(t: &[u8; 16]) -> Self {
        // SAFETY: AVX-512 F runs; `t` is 16 readable bytes.
        unsafe { _mm512_broadcast_i32x4(_mm_loadu_si128(t.as_ptr() as *const __m128i)) }
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the 64 bytes from `p` are readable (the trait's memory
        // contract); AVX-512 F runs.
        unsafe { _mm512_loadu_si512(p as *const _) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: the 64 bytes from `p` are writable (the trait's memory
        // contract); AVX-512 F runs.
        unsafe { _mm512_storeu_si512(p as *mut _, self) }
    }
    #[inline(always)]
    unsafe fn and(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_and_si512(a, b) }
    }
    #[inline(always)]
    unsafe fn or(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_or_si512(a, b) }
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_xor_si512(a, b) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_add_epi8(a, b) }
    }
    #[inline(always)]
    unsafe fn subs(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_subs_epu8(a, b) }
    }
    #[inline(always)]
    unsafe fn eq(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_movm_epi8(_mm512_cmpeq_epi8_mask(a, b)) }
    }
    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_min_epu8(a, b) }
    }
    #[inline(always)]
    unsafe fn eq_bits(a: Self, b: Self) -> u64 {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_cmpeq_epi8_mask(a, b) }
    }
    #[inline(always)]
    unsafe fn high_bits(a: Self) -> u64 {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_movepi8_mask(a) }
    }
    #[inline(always)]
    unsafe fn nonzero_bits(a: Self) -> u64 {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_test_epi8_mask(a, a) }
    }
    #[inline(always)]
    unsafe fn any(a: Self) -> bool {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_test_epi64_mask(a, a) != 0 }
    }
    #[inline(always)]
    unsafe fn high_nibbles(a: Self) -> Self {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_and_si512(_mm512_srli_epi16::<4>(a), _mm512_set1_epi8(0x0f)) }
    }
    #[inline(always)]
    unsafe fn low_nibbles(a: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_and_si512(a, _mm512_set1_epi8(0x0f)) }
    }
    #[inline(always)]
    unsafe fn lookup16(t: Self, idx: Self) -> Self {
        // SAFETY: AVX-512 BW runs (the trait's feature contract); each
        // 128-bit block of `t` holds the whole table.
        unsafe { _mm512_shuffle_epi8(t, idx) }
    }
    #[inline(always)]
    unsafe fn prev1(cur: Self, prev: Self) -> Self {
        // SAFETY: AVX-512 F and BW run (the trait's feature contract). `t`
        // is prev's last 128-bit block then cur's first three: the 16 bytes
        // before each block of cur.
        unsafe { _mm512_alignr_epi8::<15>(cur, _mm512_alignr_epi64::<6>(cur, prev)) }
    }
    #[inline(always)]
    unsafe fn prev2(cur: Self, prev: Self) -> Self {
        // SAFETY: as prev1.
        unsafe { _mm512_alignr_epi8::<14>(cur, _mm512_alignr_epi64::<6>(cur, prev)) }
    }
    #[inline(always)]
    unsafe fn prev3(cur: Self, prev: Self) -> Self {
        // SAFETY: as prev1.
        unsafe { _mm512_alignr_epi8::<13>(cur, _mm512_alignr_epi64::<6>(cur, prev)) }
    }
    #[inline(always)]
    unsafe fn sum(a: Self) -> u64 {
        // SAFETY: AVX-512 F and BW run (the trait's feature contract).
        unsafe { _mm512_reduce_add_epi64(_mm512_sad_epu8(a, _mm512_setzero_si512())) as u64 }
    }
    #[inline(always)]
    unsafe fn zip(a: Self, b: Self) -> (Self, Self) {
        // SAFETY: AVX-512 F and BW run (the trait's feature contract). The
        // unpacks interleave within each 128-bit block; the two-source
        // permutes of 64-bit words put the blocks in memory order.
        unsafe {
            let lo = _mm512_unpacklo_epi8(a, b);
            let hi = _mm512_unpackhi_epi8(a, b);
            let first = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
            let second = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
            (
                _mm512_permutex2var_epi64(lo, first, hi),
                _mm512_permutex2var_epi64(lo, second, hi),
            )
        }
    }
    #[inline(always)]
    unsafe fn pack_nibble_pairs(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F and BW run (the trait's feature contract). As the
        // AVX2 form: maddubs, packus per 128-bit block (a, b, a, b, …), and a
        // permute of 64-bit words into memory order.
        unsafe {
            let w = _mm512_set1_epi16(0x0110);
            let pa = _mm512_maddubs_epi16(a, w);
            let pb = _mm512_maddubs_epi16(b, w);
            let order = _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0);
            _mm512_permutexvar_epi64(order, _mm512_packus_epi16(pa, pb))
        }
    }
    #[inline(always)]
    unsafe fn set1_u32(v: u32) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_set1_epi32(v as i32) }
    }
    #[inline(always)]
    unsafe fn mulhi_u16(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_mulhi_epu16(a, b) }
    }
    #[inline(always)]
    unsafe fn mullo_u16(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_mullo_epi16(a, b) }
    }
    #[inline(always)]
    unsafe fn maddubs(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_maddubs_epi16(a, b) }
    }
    #[inline(always)]
    unsafe fn madd16(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 BW runs (the trait's feature contract).
        unsafe { _mm512_madd_epi16(a, b) }
    }
    #[inline(always)]
    unsafe fn load12(p: *const u8) -> Self {
        // SAFETY: the 48 bytes from `p` are readable (the trait's memory
        // contract) and the masked load reads only them; AVX-512 F and BW
        // run. The permute gives block k the words 3k..3k+2 and a zero word.
        unsafe {
            let x = _mm512_maskz_loadu_epi8((1u64 << 48) - 1, p as *const i8);
            let idx = _mm512_set_epi32(15, 11, 10, 9, 15, 8, 7, 6, 15, 5, 4, 3, 15, 2, 1, 0);
            _mm512_permutexvar_epi32(idx, x)
        }
    }
    #[inline(always)]
    unsafe fn store12(self, p: *mut u8) {
        // SAFETY: the 48 bytes from `p` are writable (the trait's memory
        // contract) and the masked store writes only them; AVX-512 F and BW
        // run. The permute packs words 0–2 of each block together.
        unsafe {
            let idx = _mm512_set_epi32(0, 0, 0, 0, 14, 13, 12, 10, 9, 8, 6, 5, 4, 2, 1, 0);
            let x = _mm512_permutexvar_epi32(idx, self);
            _mm512_mask_storeu_epi8(p as *mut i8, (1u64 << 48) - 1, x);
        }
    }
    #[inline(always)]
    unsafe fn permute_u32(a: Self, idx: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_permutexvar_epi32(idx, a) }
    }
    #[inline(always)]
    unsafe fn even_u32(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract). Lane i
        // takes lane 2i of a then b (indices 16..31 are b's).
        unsafe {
            let idx = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
            _mm512_permutex2var_epi32(a, idx, b)
        }
    }
    #[inline(always)]
    unsafe fn shr_u64_by(a: Self, n: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        unsafe { _mm512_srlv_epi64(a, n) }
    }
    #[inline(always)]
    unsafe fn prefetch(p: *const u8) {
        // SAFETY: a prefetch is a hint that reads no memory and faults on no
        // address; SSE runs wherever this tier does.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) }
    }
}

/// Sixteen u32 sort keys in a 512-bit register ([`KeyReg`]).
#[derive(Clone, Copy)]
pub(crate) struct Keys32x16(__m512i);

/// Eight u64 sort keys in a 512-bit register ([`KeyReg`]).
#[derive(Clone, Copy)]
pub(crate) struct Keys64x8(__m512i);

/// The mask of the first `n` lanes (`n ≤ 16`).
#[inline(always)]
fn first_lanes(n: usize) -> u32 {
    ((1u64 << n) - 1) as u32
}

impl KeyReg for Keys32x16 {
    type K = u32;
    const LANES: usize = 16;
    const MAX: u32 = u32::MAX;
    #[inline(always)]
    unsafe fn set1(k: u32) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys32x16(unsafe { _mm512_set1_epi32(k as i32) })
    }
    #[inline(always)]
    unsafe fn load(p: *const u32) -> Self {
        // SAFETY: the 16 keys from `p` are readable (the trait's memory
        // contract); AVX-512 F runs.
        Keys32x16(unsafe { _mm512_loadu_si512(p as *const _) })
    }
    #[inline(always)]
    unsafe fn load_first(p: *const u32, n: usize) -> Self {
        // SAFETY: the first n keys from `p` are readable, and a masked load
        // reads no other (the trait's memory contract); AVX-512 F runs.
        Keys32x16(unsafe {
            _mm512_mask_loadu_epi32(_mm512_set1_epi32(-1), first_lanes(n) as u16, p as *const _)
        })
    }
    #[inline(always)]
    unsafe fn store_first(self, p: *mut u32, n: usize) {
        // SAFETY: the first n keys from `p` are writable, and a masked store
        // writes no other (the trait's memory contract); AVX-512 F runs.
        unsafe { _mm512_mask_storeu_epi32(p as *mut _, first_lanes(n) as u16, self.0) }
    }
    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys32x16(unsafe { _mm512_min_epu32(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn max(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys32x16(unsafe { _mm512_max_epu32(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn swap_xor(self, j: usize) -> Self {
        let v = self.0;
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys32x16(unsafe {
            match j {
                1 => _mm512_shuffle_epi32::<_MM_PERM_CDAB>(v),
                2 => _mm512_shuffle_epi32::<_MM_PERM_BADC>(v),
                4 => _mm512_shuffle_i32x4::<0xB1>(v, v),
                _ => _mm512_shuffle_i32x4::<0x4E>(v, v),
            }
        })
    }
    #[inline(always)]
    unsafe fn reverse(self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys32x16(unsafe {
            _mm512_permutexvar_epi32(
                _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                self.0,
            )
        })
    }
    #[inline(always)]
    unsafe fn blend(lanes: u32, lo: Self, hi: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys32x16(unsafe { _mm512_mask_blend_epi32(lanes as u16, lo.0, hi.0) })
    }
    #[inline(always)]
    unsafe fn split_store(self, pivot: Self, n: usize, lo: *mut u32, hi_end: *mut u32) -> usize {
        // SAFETY: AVX-512 F runs; the masked stores write the n − c keys
        // from `lo` and the c keys before `hi_end`, which the caller
        // provides (the trait's memory contract). The compress is into a
        // register (a compress straight to memory is slow on some CPUs).
        unsafe {
            let live = first_lanes(n) as u16;
            let ge = _mm512_mask_cmpge_epu32_mask(live, self.0, pivot.0);
            let below_lanes = !ge & live;
            let c = ge.count_ones() as usize;
            let below = _mm512_maskz_compress_epi32(below_lanes, self.0);
            let above = _mm512_maskz_compress_epi32(ge, self.0);
            _mm512_mask_storeu_epi32(lo as *mut _, first_lanes(n - c) as u16, below);
            _mm512_mask_storeu_epi32(hi_end.sub(c) as *mut _, first_lanes(c) as u16, above);
            c
        }
    }
    #[inline(always)]
    unsafe fn lane(self, i: usize) -> u32 {
        let mut a = [0u32; 16];
        // SAFETY: `a` holds 16 keys; AVX-512 F runs.
        unsafe { _mm512_storeu_si512(a.as_mut_ptr() as *mut _, self.0) };
        a[i]
    }
}

impl KeyReg for Keys64x8 {
    type K = u64;
    const LANES: usize = 8;
    const MAX: u64 = u64::MAX;
    #[inline(always)]
    unsafe fn set1(k: u64) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys64x8(unsafe { _mm512_set1_epi64(k as i64) })
    }
    #[inline(always)]
    unsafe fn load(p: *const u64) -> Self {
        // SAFETY: the 8 keys from `p` are readable (the trait's memory
        // contract); AVX-512 F runs.
        Keys64x8(unsafe { _mm512_loadu_si512(p as *const _) })
    }
    #[inline(always)]
    unsafe fn load_first(p: *const u64, n: usize) -> Self {
        // SAFETY: the first n keys from `p` are readable, and a masked load
        // reads no other (the trait's memory contract); AVX-512 F runs.
        Keys64x8(unsafe {
            _mm512_mask_loadu_epi64(_mm512_set1_epi64(-1), first_lanes(n) as u8, p as *const _)
        })
    }
    #[inline(always)]
    unsafe fn store_first(self, p: *mut u64, n: usize) {
        // SAFETY: the first n keys from `p` are writable, and a masked store
        // writes no other (the trait's memory contract); AVX-512 F runs.
        unsafe { _mm512_mask_storeu_epi64(p as *mut _, first_lanes(n) as u8, self.0) }
    }
    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys64x8(unsafe { _mm512_min_epu64(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn max(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys64x8(unsafe { _mm512_max_epu64(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn swap_xor(self, j: usize) -> Self {
        let v = self.0;
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys64x8(unsafe {
            match j {
                1 => _mm512_shuffle_epi32::<_MM_PERM_BADC>(v),
                2 => _mm512_shuffle_i32x4::<0xB1>(v, v),
                _ => _mm512_shuffle_i32x4::<0x4E>(v, v),
            }
        })
    }
    #[inline(always)]
    unsafe fn reverse(self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys64x8(unsafe {
            _mm512_permutexvar_epi64(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), self.0)
        })
    }
    #[inline(always)]
    unsafe fn blend(lanes: u32, lo: Self, hi: Self) -> Self {
        // SAFETY: AVX-512 F runs (the trait's feature contract).
        Keys64x8(unsafe { _mm512_mask_blend_epi64(lanes as u8, lo.0, hi.0) })
    }
    #[inline(always)]
    unsafe fn split_store(self, pivot: Self, n: usize, lo: *mut u64, hi_end: *mut u64) -> usize {
        // SAFETY: AVX-512 F runs; the masked stores write the n − c keys
        // from `lo` and the c keys before `hi_end`, which the caller
        // provides (the trait's memory contract). The compress is into a
        // register (a compress straight to memory is slow on some CPUs).
        unsafe {
            let live = first_lanes(n) as u8;
            let ge = _mm512_mask_cmpge_epu64_mask(live, self.0, pivot.0);
            let below_lanes = !ge & live;
            let c = ge.count_ones() as usize;
            let below = _mm512_maskz_compress_epi64(below_lanes, self.0);
            let above = _mm512_maskz_compress_epi64(ge, self.0);
            _mm512_mask_storeu_epi64(lo as *mut _, first_lanes(n - c) as u8, below);
            _mm512_mask_storeu_epi64(hi_end.sub(c) as *mut _, first_lanes(c) as u8, above);
            c
        }
    }
    #[inline(always)]
    unsafe fn lane(self, i: usize) -> u64 {
        let mut a = [0u64; 8];
        // SAFETY: `a` holds 8 keys; AVX-512 F runs.
        unsafe { _mm512_storeu_si512(a.as_mut_ptr() as *mut _, self.0) };
        a[i]
    }
}
