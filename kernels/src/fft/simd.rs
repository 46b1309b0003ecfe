//! The vector tiers of the passes.
//!
//! The passes (`radix.rs`) are written once, as loops of IEEE additions,
//! subtractions and multiplications with no fused multiply-add, and marked
//! `inline(always)`. Here they are instantiated inside functions compiled
//! with AVX2 (and FMA) or AVX-512 enabled, where the compiler vectorises the
//! loops over the interleaved sequences of a pass. A vector lane computes
//! exactly the operation the scalar loop computes on that point, and Rust
//! never contracts a multiply and an add into a fused one, so every tier
//! gives the scalar tier's bits (ARCHITECTURE.md §3): the vector code is the
//! same operations in the same order, a point per lane.
//!
//! The radix-8, 4, 2, 3 and 5 passes also have explicit vector loops, written
//! once over a vector type: AVX2 (4 points of complex64, 2 of complex128)
//! on the avx2 tier, and AVX-512 (8 and 4 points) on the avx512 tier, which
//! falls back to the AVX2 loop for a pass whose shape the wider vectors do
//! not fit. A vector holds consecutive complex points in their memory order, real and imaginary
//! parts side by side. A product by a twiddle `w` is `a·w.re` and
//! `swap(a)·w.im` combined by `addsub` (`re·w.re − im·w.im`,
//! `im·w.re + re·w.im`: the scalar `cmul`'s roundings, the sum of two
//! products being commutative; AVX-512, which has no `addsub`, adds the
//! second product with its real lanes' signs flipped, the same bits), and `∓i·z` is a swap and an exact negation.
//! Passes of at least a vector of interleaved sequences run over them (the
//! last vector of each `q` overlapping the one before where the count is not
//! whole: it rewrites the same values); the first pass (one sequence) runs
//! over `q`, its twiddles read from a table by `k`, its results interleaved
//! into place (4 × L transposes for radix 4 and 8), the `q`s of a last partial
//! vector by the scalar loop. The radix-8 butterfly is two radix-4 ones and
//! the products by `w₈^k`: `(z ∓ i·z)·(1/√2)` for `k = 1`, an exact `∓i` for
//! `k = 2`, both for `k = 3`.

use super::radix::{run_pass_from, run_passes as passes_generic, run_passes_with, Butterfly, Pass};
use super::FftFloat;
use crate::tier::{runs_avx2, runs_avx512};
use crate::Tier;
use num_complex::Complex;

/// The instruction set the passes of a call run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Simd {
    Scalar,
    Avx2,
    Avx512,
}

impl Simd {
    /// What `tier` executes.
    pub(crate) fn of(tier: Tier) -> Simd {
        if runs_avx512(tier) {
            Simd::Avx512
        } else if runs_avx2(tier) {
            Simd::Avx2
        } else {
            Simd::Scalar
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use super::{Butterfly, FftFloat, Pass};
    use crate::fft::butterflies::{Consts3, Consts5, Consts8};
    use core::arch::x86_64::*;
    use num_complex::Complex;

    /// A vector of `L` complex points of `T`.
    pub(super) trait Cv: Copy {
        type T: FftFloat;
        const L: usize;
        unsafe fn load(p: *const Complex<Self::T>) -> Self;
        unsafe fn store(self, p: *mut Complex<Self::T>);
        unsafe fn add(self, o: Self) -> Self;
        unsafe fn sub(self, o: Self) -> Self;
        /// `−i·z` (forward) or `+i·z` (inverse).
        unsafe fn rot(self, inverse: bool) -> Self;
        /// `w.re` and `w.im` in every lane.
        unsafe fn splat(w: Complex<Self::T>) -> (Self, Self);
        /// The real parts and the imaginary parts of L twiddles, each duplicated.
        unsafe fn dup(w: Self) -> (Self, Self);
        /// `self·w` from `w`'s parts as `splat` or `dup` give them.
        unsafe fn cmul(self, wr: Self, wi: Self) -> Self;
        /// Both parts times the real `c`.
        unsafe fn mulr(self, c: Self::T) -> Self;
        /// `p[row·i + k] = b[k][i]` for `i < L`, `k < 4` (`row ≥ 4`, a
        /// multiple of 4: the rows of four points `row` points apart).
        unsafe fn store4(b: [Self; 4], p: *mut Complex<Self::T>, row: usize);
    }

    #[derive(Clone, Copy)]
    pub(super) struct V32(__m256);
    #[derive(Clone, Copy)]
    pub(super) struct V64(__m256d);

    impl Cv for V32 {
        type T = f32;
        const L: usize = 4;
        #[inline(always)]
        unsafe fn load(p: *const Complex<f32>) -> Self {
            V32(_mm256_loadu_ps(p as *const f32))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut Complex<f32>) {
            _mm256_storeu_ps(p as *mut f32, self.0)
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            V32(_mm256_add_ps(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            V32(_mm256_sub_ps(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn rot(self, inverse: bool) -> Self {
            let sw = _mm256_permute_ps(self.0, 0xB1);
            let m = if inverse {
                _mm256_setr_ps(-0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0)
            } else {
                _mm256_setr_ps(0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0)
            };
            V32(_mm256_xor_ps(sw, m))
        }
        #[inline(always)]
        unsafe fn splat(w: Complex<f32>) -> (Self, Self) {
            (V32(_mm256_set1_ps(w.re)), V32(_mm256_set1_ps(w.im)))
        }
        #[inline(always)]
        unsafe fn dup(w: Self) -> (Self, Self) {
            (V32(_mm256_moveldup_ps(w.0)), V32(_mm256_movehdup_ps(w.0)))
        }
        #[inline(always)]
        unsafe fn cmul(self, wr: Self, wi: Self) -> Self {
            let a = _mm256_mul_ps(self.0, wr.0);
            let b = _mm256_mul_ps(_mm256_permute_ps(self.0, 0xB1), wi.0);
            V32(_mm256_addsub_ps(a, b))
        }
        #[inline(always)]
        unsafe fn mulr(self, c: f32) -> Self {
            V32(_mm256_mul_ps(_mm256_set1_ps(c), self.0))
        }
        #[inline(always)]
        unsafe fn store4(b: [Self; 4], p: *mut Complex<f32>, row: usize) {
            let (d0, d1) = (_mm256_castps_pd(b[0].0), _mm256_castps_pd(b[1].0));
            let (d2, d3) = (_mm256_castps_pd(b[2].0), _mm256_castps_pd(b[3].0));
            let t0 = _mm256_unpacklo_pd(d0, d1);
            let t1 = _mm256_unpackhi_pd(d0, d1);
            let t2 = _mm256_unpacklo_pd(d2, d3);
            let t3 = _mm256_unpackhi_pd(d2, d3);
            // One complex64 per f64 unit; a row of four points is one vector.
            let q = p as *mut f64;
            _mm256_storeu_pd(q, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(q.add(row), _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(q.add(2 * row), _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(q.add(3 * row), _mm256_permute2f128_pd(t1, t3, 0x31));
        }
    }

    impl Cv for V64 {
        type T = f64;
        const L: usize = 2;
        #[inline(always)]
        unsafe fn load(p: *const Complex<f64>) -> Self {
            V64(_mm256_loadu_pd(p as *const f64))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut Complex<f64>) {
            _mm256_storeu_pd(p as *mut f64, self.0)
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            V64(_mm256_add_pd(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            V64(_mm256_sub_pd(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn rot(self, inverse: bool) -> Self {
            let sw = _mm256_permute_pd(self.0, 0b0101);
            let m = if inverse {
                _mm256_setr_pd(-0.0, 0.0, -0.0, 0.0)
            } else {
                _mm256_setr_pd(0.0, -0.0, 0.0, -0.0)
            };
            V64(_mm256_xor_pd(sw, m))
        }
        #[inline(always)]
        unsafe fn splat(w: Complex<f64>) -> (Self, Self) {
            (V64(_mm256_set1_pd(w.re)), V64(_mm256_set1_pd(w.im)))
        }
        #[inline(always)]
        unsafe fn dup(w: Self) -> (Self, Self) {
            (
                V64(_mm256_movedup_pd(w.0)),
                V64(_mm256_permute_pd(w.0, 0b1111)),
            )
        }
        #[inline(always)]
        unsafe fn cmul(self, wr: Self, wi: Self) -> Self {
            let a = _mm256_mul_pd(self.0, wr.0);
            let b = _mm256_mul_pd(_mm256_permute_pd(self.0, 0b0101), wi.0);
            V64(_mm256_addsub_pd(a, b))
        }
        #[inline(always)]
        unsafe fn mulr(self, c: f64) -> Self {
            V64(_mm256_mul_pd(_mm256_set1_pd(c), self.0))
        }
        #[inline(always)]
        unsafe fn store4(b: [Self; 4], p: *mut Complex<f64>, row: usize) {
            // Two f64 units per complex128: a row of four points is two vectors.
            let q = p as *mut f64;
            let r1 = q.add(2 * row);
            _mm256_storeu_pd(q, _mm256_permute2f128_pd(b[0].0, b[1].0, 0x20));
            _mm256_storeu_pd(q.add(4), _mm256_permute2f128_pd(b[2].0, b[3].0, 0x20));
            _mm256_storeu_pd(r1, _mm256_permute2f128_pd(b[0].0, b[1].0, 0x31));
            _mm256_storeu_pd(r1.add(4), _mm256_permute2f128_pd(b[2].0, b[3].0, 0x31));
        }
    }

    /// Eight complex64 points in a zmm register.
    #[derive(Clone, Copy)]
    pub(super) struct W32(__m512);
    /// Four complex128 points in a zmm register.
    #[derive(Clone, Copy)]
    pub(super) struct W64(__m512d);

    /// `a + (b with the real parts negated)`: `addsub`'s bits (an exact
    /// negation, then one rounded addition per lane), which AVX-512 lacks.
    #[inline(always)]
    unsafe fn addsub512_ps(a: __m512, b: __m512) -> __m512 {
        let m = _mm512_castsi512_ps(_mm512_set1_epi64(0x0000_0000_8000_0000));
        _mm512_add_ps(a, _mm512_xor_ps(b, m))
    }
    #[inline(always)]
    unsafe fn addsub512_pd(a: __m512d, b: __m512d) -> __m512d {
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

    impl W32 {
        /// The 4 × 8 transpose of `b` (complex64 points as 64-bit units):
        /// vector j holds rows 2j and 2j + 1 (row i: `b[0][i] … b[3][i]`), the
        /// low and high halves.
        #[inline(always)]
        unsafe fn rows4(b: [W32; 4]) -> [__m512d; 4] {
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

        /// The 8 × 8 transpose: vector i is `b[0][i] … b[7][i]`.
        #[inline(always)]
        pub(super) unsafe fn transpose8(b: [W32; 8]) -> [W32; 8] {
            let lo = W32::rows4([b[0], b[1], b[2], b[3]]);
            let hi = W32::rows4([b[4], b[5], b[6], b[7]]);
            let mut out = [b[0]; 8];
            for j in 0..4 {
                out[2 * j] = W32(_mm512_castpd_ps(_mm512_shuffle_f64x2(lo[j], hi[j], 0x44)));
                out[2 * j + 1] = W32(_mm512_castpd_ps(_mm512_shuffle_f64x2(lo[j], hi[j], 0xEE)));
            }
            out
        }
    }

    impl Cv for W32 {
        type T = f32;
        const L: usize = 8;
        #[inline(always)]
        unsafe fn load(p: *const Complex<f32>) -> Self {
            W32(_mm512_loadu_ps(p as *const f32))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut Complex<f32>) {
            _mm512_storeu_ps(p as *mut f32, self.0)
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            W32(_mm512_add_ps(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            W32(_mm512_sub_ps(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn rot(self, inverse: bool) -> Self {
            let sw = _mm512_permute_ps(self.0, 0xB1);
            // Negate the real parts (inverse: +i·z = (−im, re)) or the
            // imaginary parts (forward: −i·z = (im, −re)) of the swapped pairs.
            let bits: i64 = if inverse {
                0x0000_0000_8000_0000
            } else {
                0x8000_0000_0000_0000u64 as i64
            };
            W32(_mm512_xor_ps(
                sw,
                _mm512_castsi512_ps(_mm512_set1_epi64(bits)),
            ))
        }
        #[inline(always)]
        unsafe fn splat(w: Complex<f32>) -> (Self, Self) {
            (W32(_mm512_set1_ps(w.re)), W32(_mm512_set1_ps(w.im)))
        }
        #[inline(always)]
        unsafe fn dup(w: Self) -> (Self, Self) {
            (W32(_mm512_moveldup_ps(w.0)), W32(_mm512_movehdup_ps(w.0)))
        }
        #[inline(always)]
        unsafe fn cmul(self, wr: Self, wi: Self) -> Self {
            let a = _mm512_mul_ps(self.0, wr.0);
            let b = _mm512_mul_ps(_mm512_permute_ps(self.0, 0xB1), wi.0);
            W32(addsub512_ps(a, b))
        }
        #[inline(always)]
        unsafe fn mulr(self, c: f32) -> Self {
            W32(_mm512_mul_ps(_mm512_set1_ps(c), self.0))
        }
        #[inline(always)]
        unsafe fn store4(b: [Self; 4], p: *mut Complex<f32>, row: usize) {
            let q = p as *mut f64;
            let rows = W32::rows4(b);
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

    impl Cv for W64 {
        type T = f64;
        const L: usize = 4;
        #[inline(always)]
        unsafe fn load(p: *const Complex<f64>) -> Self {
            W64(_mm512_loadu_pd(p as *const f64))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut Complex<f64>) {
            _mm512_storeu_pd(p as *mut f64, self.0)
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            W64(_mm512_add_pd(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            W64(_mm512_sub_pd(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn rot(self, inverse: bool) -> Self {
            let sw = _mm512_permute_pd(self.0, 0b0101_0101);
            let (re, im) = if inverse {
                (i64::MIN, 0)
            } else {
                (0, i64::MIN)
            };
            let m = _mm512_set_epi64(im, re, im, re, im, re, im, re);
            W64(_mm512_xor_pd(sw, _mm512_castsi512_pd(m)))
        }
        #[inline(always)]
        unsafe fn splat(w: Complex<f64>) -> (Self, Self) {
            (W64(_mm512_set1_pd(w.re)), W64(_mm512_set1_pd(w.im)))
        }
        #[inline(always)]
        unsafe fn dup(w: Self) -> (Self, Self) {
            (
                W64(_mm512_movedup_pd(w.0)),
                W64(_mm512_permute_pd(w.0, 0b1111_1111)),
            )
        }
        #[inline(always)]
        unsafe fn cmul(self, wr: Self, wi: Self) -> Self {
            let a = _mm512_mul_pd(self.0, wr.0);
            let b = _mm512_mul_pd(_mm512_permute_pd(self.0, 0b0101_0101), wi.0);
            W64(addsub512_pd(a, b))
        }
        #[inline(always)]
        unsafe fn mulr(self, c: f64) -> Self {
            W64(_mm512_mul_pd(_mm512_set1_pd(c), self.0))
        }
        #[inline(always)]
        unsafe fn store4(b: [Self; 4], p: *mut Complex<f64>, row: usize) {
            // Two f64 units per complex128: a row of four points is one vector.
            let q = p as *mut f64;
            let t = W64::transpose4(b);
            for (i, v) in t.iter().enumerate() {
                _mm512_storeu_pd(q.add(2 * i * row), v.0);
            }
        }
    }

    impl W64 {
        /// The 4 × 4 transpose of complex128 points (128-bit lanes): vector
        /// i is `b[0][i] … b[3][i]`.
        #[inline(always)]
        pub(super) unsafe fn transpose4(b: [W64; 4]) -> [W64; 4] {
            let t0 = _mm512_shuffle_f64x2(b[0].0, b[1].0, 0x44); // b0.0 b0.1 b1.0 b1.1
            let t1 = _mm512_shuffle_f64x2(b[2].0, b[3].0, 0x44); // b2.0 b2.1 b3.0 b3.1
            let t2 = _mm512_shuffle_f64x2(b[0].0, b[1].0, 0xEE); // b0.2 b0.3 b1.2 b1.3
            let t3 = _mm512_shuffle_f64x2(b[2].0, b[3].0, 0xEE);
            [
                W64(_mm512_shuffle_f64x2(t0, t1, 0x88)),
                W64(_mm512_shuffle_f64x2(t0, t1, 0xDD)),
                W64(_mm512_shuffle_f64x2(t2, t3, 0x88)),
                W64(_mm512_shuffle_f64x2(t2, t3, 0xDD)),
            ]
        }
    }

    #[inline(always)]
    unsafe fn bf4<V: Cv>(a: [V; 4], inverse: bool) -> [V; 4] {
        let t0 = a[0].add(a[2]);
        let t1 = a[0].sub(a[2]);
        let t2 = a[1].add(a[3]);
        let t3 = a[1].sub(a[3]).rot(inverse);
        [t0.add(t2), t1.add(t3), t0.sub(t2), t1.sub(t3)]
    }

    /// One pass in AVX2 vectors (see [`pass_body`]).
    ///
    /// # Safety
    /// The CPU runs AVX2; `x` and `y` hold the pass's n points.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn pass<V: Cv>(
        pass: &Pass<V::T>,
        s: usize,
        inverse: bool,
        x: &[Complex<V::T>],
        y: &mut [Complex<V::T>],
    ) -> bool {
        // SAFETY: the caller's promise, AVX2 runs.
        unsafe { pass_body::<V>(pass, s, inverse, x, y) }
    }

    /// One pass in AVX-512 vectors (see [`pass_body`]).
    ///
    /// # Safety
    /// The CPU runs AVX-512 F/DQ/VL/BW; `x` and `y` hold the pass's n points.
    #[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
    pub(super) unsafe fn pass512<V: Cv>(
        pass: &Pass<V::T>,
        s: usize,
        inverse: bool,
        x: &[Complex<V::T>],
        y: &mut [Complex<V::T>],
    ) -> bool {
        // SAFETY: the caller's promise, AVX-512 runs.
        unsafe { pass_body::<V>(pass, s, inverse, x, y) }
    }

    /// One radix-8, 4, 2, 3 or 5 pass in vectors of `V` where its shape allows
    /// (else false, and the caller runs narrower vectors or the scalar loop).
    /// Where the `s` interleaved sequences are at least a vector but not a
    /// whole number of them, the last vector of each `q` starts at `s − L`
    /// and recomputes some points of the one before it: the same values into
    /// the same places of `y`, which is not `x`.
    ///
    /// # Safety
    /// The CPU runs `V`'s instructions; `x` and `y` hold the pass's n points.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // k names the output and its twiddle
    unsafe fn pass_body<V: Cv>(
        pass: &Pass<V::T>,
        s: usize,
        inverse: bool,
        x: &[Complex<V::T>],
        y: &mut [Complex<V::T>],
    ) -> bool {
        let (p, m, l) = (pass.p, pass.m, V::L);
        let n = p * m * s;
        if x.len() < n || y.len() < n {
            return false;
        }
        let (xp, yp) = (x.as_ptr(), y.as_mut_ptr());
        let twid = m > 1;
        match (&pass.bf, s >= l) {
            (Butterfly::R4, true) => {
                for q in 0..m {
                    let w = splats::<V, 3>(&pass.tw, q, twid);
                    for r in starts(s, l) {
                        let b = bf4(loads::<V, 4>(xp.add(s * q + r), s * m), inverse);
                        store_rows(&b, &w, twid, yp.add(s * 4 * q + r), s);
                    }
                }
                true
            }
            (Butterfly::R3(c), true) => {
                for q in 0..m {
                    let w = splats::<V, 2>(&pass.tw, q, twid);
                    for r in starts(s, l) {
                        let b = bf3(loads::<V, 3>(xp.add(s * q + r), s * m), c, inverse);
                        store_rows(&b, &w, twid, yp.add(s * 3 * q + r), s);
                    }
                }
                true
            }
            (Butterfly::R5(c), true) => {
                for q in 0..m {
                    let w = splats::<V, 4>(&pass.tw, q, twid);
                    for r in starts(s, l) {
                        let b = bf5(loads::<V, 5>(xp.add(s * q + r), s * m), c, inverse);
                        store_rows(&b, &w, twid, yp.add(s * 5 * q + r), s);
                    }
                }
                true
            }
            (Butterfly::R8(c), true) => {
                for q in 0..m {
                    let w = splats::<V, 7>(&pass.tw, q, twid);
                    for r in starts(s, l) {
                        let b = bf8(loads::<V, 8>(xp.add(s * q + r), s * m), c, inverse);
                        store_rows(&b, &w, twid, yp.add(s * 8 * q + r), s);
                    }
                }
                true
            }
            (Butterfly::R2, true) => {
                for q in 0..m {
                    let w = splats::<V, 1>(&pass.tw, q, twid);
                    for r in starts(s, l) {
                        let [a0, a1] = loads::<V, 2>(xp.add(s * q + r), s * m);
                        store_rows(
                            &[a0.add(a1), a0.sub(a1)],
                            &w,
                            twid,
                            yp.add(s * 2 * q + r),
                            s,
                        );
                    }
                }
                true
            }
            (_, false) if s == 1 && twid && !pass.twk.is_empty() && m >= l => {
                first_pass::<V>(pass, inverse, x, y);
                true
            }
            _ => false,
        }
    }

    /// The first pass (one sequence, `s = 1`) of radix 2 to 5 or 8, in vectors of
    /// `L` consecutive `q`s: `a_j = x[q + m·j]` are whole vectors, the
    /// twiddles come from the table by `k`, and the `p` results of each `q`
    /// are interleaved into place. The `q`s of a last partial vector run the
    /// scalar loop (the same operations).
    ///
    /// # Safety
    /// The CPU runs `V`'s instructions; `x` and `y` hold the pass's n points;
    /// `pass.twk` is filled (`s = 1`, `m > 1`).
    #[inline(always)]
    unsafe fn first_pass<V: Cv>(
        pass: &Pass<V::T>,
        inverse: bool,
        x: &[Complex<V::T>],
        y: &mut [Complex<V::T>],
    ) {
        let (p, m, l) = (pass.p, pass.m, V::L);
        let whole = m - m % l;
        let (xp, yp, tk) = (x.as_ptr(), y.as_mut_ptr(), pass.twk.as_ptr());
        for q in (0..whole).step_by(l) {
            let a = xp.add(q);
            let t = |k: usize| tk.add((k - 1) * m + q);
            let o = yp.add(p * q);
            match &pass.bf {
                Butterfly::R4 => {
                    let mut b = bf4(loads::<V, 4>(a, m), inverse);
                    for (k, bk) in b.iter_mut().enumerate().skip(1) {
                        *bk = twiddle(*bk, t(k));
                    }
                    V::store4(b, o, 4);
                }
                Butterfly::R2 => {
                    let [a0, a1] = loads::<V, 2>(a, m);
                    store_interleaved(&[a0.add(a1), twiddle(a0.sub(a1), t(1))], o);
                }
                Butterfly::R3(c) => {
                    let [b0, b1, b2] = bf3(loads::<V, 3>(a, m), c, inverse);
                    store_interleaved(&[b0, twiddle(b1, t(1)), twiddle(b2, t(2))], o);
                }
                Butterfly::R5(c) => {
                    let mut b = bf5(loads::<V, 5>(a, m), c, inverse);
                    for (k, bk) in b.iter_mut().enumerate().skip(1) {
                        *bk = twiddle(*bk, t(k));
                    }
                    store_interleaved(&b, o);
                }
                Butterfly::R8(c) => {
                    let mut b = bf8(loads::<V, 8>(a, m), c, inverse);
                    for (k, bk) in b.iter_mut().enumerate().skip(1) {
                        *bk = twiddle(*bk, t(k));
                    }
                    V::store4([b[0], b[1], b[2], b[3]], o, 8);
                    V::store4([b[4], b[5], b[6], b[7]], o.add(4), 8);
                }
                Butterfly::Prime(_) => unreachable!("vector passes are of radix 2 to 5 and 8"),
            }
        }
        if whole < m {
            super::run_pass_from(pass, 1, inverse, x, y, &mut [], whole);
        }
    }

    /// The two radix-8 constants and the first pass's twiddles by `k` of a
    /// 64-point line's passes `[8, 8]`; None for any other shape.
    fn radix8_pair<T: FftFloat>(
        passes: &[Pass<T>],
        n: usize,
    ) -> Option<(&Consts8<T>, &Consts8<T>, *const Complex<T>)> {
        let [first, second] = passes else {
            return None;
        };
        let (Butterfly::R8(c1), Butterfly::R8(c2)) = (&first.bf, &second.bf) else {
            return None;
        };
        (n == 64 && first.m == 8 && second.m == 1 && first.twk.len() == 56).then_some((
            c1,
            c2,
            first.twk.as_ptr(),
        ))
    }

    /// A line of 64 complex64 points whose passes are radix 8 and 8, in
    /// registers: the first pass over `q` (vector `j` is `x[8j..8j + 8]`) with
    /// its twiddles, the 8 × 8 transpose that is the reordering between the
    /// two passes, and the second pass, stored in place. The same operations
    /// as the two passes through memory. False (nothing done) for any other
    /// shape.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F/DQ/VL/BW.
    #[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
    pub(super) unsafe fn line64(
        passes: &[Pass<f32>],
        inverse: bool,
        data: &mut [Complex<f32>],
    ) -> bool {
        let Some((c1, c2, tk)) = radix8_pair(passes, data.len()) else {
            return false;
        };
        let xp = data.as_mut_ptr();
        let mut b = bf8(loads::<W32, 8>(xp, 8), c1, inverse);
        for (k, bk) in b.iter_mut().enumerate().skip(1) {
            *bk = twiddle(*bk, tk.add((k - 1) * 8));
        }
        let out = bf8(W32::transpose8(b), c2, inverse);
        for (k, v) in out.iter().enumerate() {
            v.store(xp.add(8 * k));
        }
        true
    }

    /// [`line64`] for complex128 (four points a vector): the first pass in
    /// two groups of four `q`s, the reordering as 4 × 4 transposes, the
    /// second pass in two groups of four `r`s. The same operations as the
    /// two passes through memory.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F/DQ/VL/BW.
    #[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
    pub(super) unsafe fn line64_f64(
        passes: &[Pass<f64>],
        inverse: bool,
        data: &mut [Complex<f64>],
    ) -> bool {
        let Some((c1, c2, tk)) = radix8_pair(passes, data.len()) else {
            return false;
        };
        let xp = data.as_mut_ptr();
        // rows[j][h]: points 4h..4h + 4 of row j (y[8j + 4h..]) after the first pass.
        let mut rows = [[W64::load(xp); 2]; 8];
        for g in 0..2 {
            let mut b = bf8(loads::<W64, 8>(xp.add(4 * g), 8), c1, inverse);
            for (k, bk) in b.iter_mut().enumerate().skip(1) {
                *bk = twiddle(*bk, tk.add((k - 1) * 8 + 4 * g));
            }
            let lo = W64::transpose4([b[0], b[1], b[2], b[3]]);
            let hi = W64::transpose4([b[4], b[5], b[6], b[7]]);
            for i in 0..4 {
                rows[4 * g + i] = [lo[i], hi[i]];
            }
        }
        for h in 0..2 {
            let mut a = [rows[0][h]; 8];
            for (aj, row) in a.iter_mut().zip(&rows) {
                *aj = row[h];
            }
            let out = bf8(a, c2, inverse);
            for (k, v) in out.iter().enumerate() {
                v.store(xp.add(8 * k + 4 * h));
            }
        }
        true
    }

    /// `o[s·k] = b[k]`, each `k ≥ 1` times its twiddle `w[k − 1]` where
    /// `twid` (a pass's results for one `q`, `s` sequences apart).
    #[inline(always)]
    unsafe fn store_rows<V: Cv>(
        b: &[V],
        w: &[(V, V)],
        twid: bool,
        o: *mut Complex<V::T>,
        s: usize,
    ) {
        b[0].store(o);
        for (k, (bk, wk)) in b[1..].iter().zip(w).enumerate() {
            let v = if twid { bk.cmul(wk.0, wk.1) } else { *bk };
            v.store(o.add(s * (k + 1)));
        }
    }

    /// The twiddles `w^(q·k)`, `k = 1..=K`, of a pass of radix `K + 1` as
    /// splats; ones where the pass has none (`twid` false).
    #[inline(always)]
    unsafe fn splats<V: Cv, const K: usize>(
        tw: &[Complex<V::T>],
        q: usize,
        twid: bool,
    ) -> [(V, V); K] {
        let mut w = [V::splat(Complex::new(V::T::ONE, V::T::ZERO)); K];
        if twid {
            for (k, wk) in w.iter_mut().enumerate() {
                *wk = V::splat(tw[K * q + k]);
            }
        }
        w
    }

    /// Where the vectors over `s ≥ L` interleaved sequences start: every `L`,
    /// the last at `s − L` (overlapping the one before where `s` is not a
    /// whole number of vectors).
    #[inline(always)]
    fn starts(s: usize, l: usize) -> impl Iterator<Item = usize> {
        (0..s).step_by(l).map(move |r| r.min(s - l))
    }

    /// `b` times the `L` twiddles at `t`.
    #[inline(always)]
    unsafe fn twiddle<V: Cv>(b: V, t: *const Complex<V::T>) -> V {
        let (wr, wi) = V::dup(V::load(t));
        b.cmul(wr, wi)
    }

    /// `o[p·i + k] = b[k][i]` for `i < L`, `k < p = b.len()` (through the stack).
    #[inline(always)]
    unsafe fn store_interleaved<V: Cv>(b: &[V], o: *mut Complex<V::T>) {
        const MAX: usize = 5 * 8;
        let (p, l) = (b.len(), V::L);
        let mut t = [Complex::new(V::T::ZERO, V::T::ZERO); MAX];
        for (k, v) in b.iter().enumerate() {
            v.store(t.as_mut_ptr().add(k * l));
        }
        for i in 0..l {
            for k in 0..p {
                *o.add(p * i + k) = t[k * l + i];
            }
        }
    }

    #[inline(always)]
    unsafe fn bf3<V: Cv>(a: [V; 3], c: &Consts3<V::T>, inverse: bool) -> [V; 3] {
        let t1 = a[1].add(a[2]);
        let t2 = a[1].sub(a[2]);
        let b0 = a[0].add(t1);
        let mm = a[0].sub(t1.mulr(V::T::HALF));
        let nn = t2.mulr(c.s).rot(inverse);
        [b0, mm.add(nn), mm.sub(nn)]
    }

    /// `butterflies::mul45`: `(z ∓ i·z)·(1/√2)`.
    #[inline(always)]
    unsafe fn mul45<V: Cv>(z: V, c: V::T, inverse: bool) -> V {
        z.add(z.rot(inverse)).mulr(c)
    }

    /// `P` vectors at `p + j·d`, `j < P` (a loop, not a closure: closures
    /// do not inherit the target features of the function that inlines them,
    /// and would call the intrinsics out of line).
    #[inline(always)]
    unsafe fn loads<V: Cv, const P: usize>(p: *const Complex<V::T>, d: usize) -> [V; P] {
        let mut a = [V::load(p); P];
        for (j, aj) in a.iter_mut().enumerate().skip(1) {
            *aj = V::load(p.add(j * d));
        }
        a
    }

    /// The radix-8 butterfly of `butterflies::bf8`, the same operations.
    #[inline(always)]
    unsafe fn bf8<V: Cv>(a: [V; 8], c: &Consts8<V::T>, inverse: bool) -> [V; 8] {
        let e = bf4([a[0], a[2], a[4], a[6]], inverse);
        let o = bf4([a[1], a[3], a[5], a[7]], inverse);
        let o1 = mul45(o[1], c.c, inverse);
        let o2 = o[2].rot(inverse);
        let o3 = mul45(o[3], c.c, inverse).rot(inverse);
        [
            e[0].add(o[0]),
            e[1].add(o1),
            e[2].add(o2),
            e[3].add(o3),
            e[0].sub(o[0]),
            e[1].sub(o1),
            e[2].sub(o2),
            e[3].sub(o3),
        ]
    }

    #[inline(always)]
    unsafe fn bf5<V: Cv>(a: [V; 5], c: &Consts5<V::T>, inverse: bool) -> [V; 5] {
        let t1 = a[1].add(a[4]);
        let t2 = a[2].add(a[3]);
        let t3 = a[1].sub(a[4]);
        let t4 = a[2].sub(a[3]);
        let b0 = a[0].add(t1).add(t2);
        let m1 = a[0].add(t1.mulr(c.c1)).add(t2.mulr(c.c2));
        let m2 = a[0].add(t1.mulr(c.c2)).add(t2.mulr(c.c1));
        let n1 = t3.mulr(c.s1).add(t4.mulr(c.s2)).rot(inverse);
        let n2 = t3.mulr(c.s2).sub(t4.mulr(c.s1)).rot(inverse);
        [b0, m1.add(n1), m2.add(n2), m2.sub(n2), m1.sub(n1)]
    }
}

/// A pass in vectors where it can run so (see [`avx::pass`]): with `wide`,
/// in AVX-512 vectors first, then (a shape they do not fit) in AVX2 ones.
///
/// # Safety
/// The CPU runs AVX2 and FMA, and AVX-512 F/VL/DQ/BW where `wide`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn vector_pass<T: FftFloat>(
    pass: &Pass<T>,
    s: usize,
    inverse: bool,
    x: &[Complex<T>],
    y: &mut [Complex<T>],
    wide: bool,
) -> bool {
    if matches!(pass.bf, Butterfly::Prime(_)) {
        return false;
    }
    if T::TWIDDLE_DD {
        // SAFETY: `T` is f64 (the sealed trait's only type with double-double
        // twiddles), so these are the same references retyped.
        let (pass, x, y) = unsafe {
            (
                &*(pass as *const Pass<T> as *const Pass<f64>),
                core::slice::from_raw_parts(x.as_ptr() as *const Complex<f64>, x.len()),
                core::slice::from_raw_parts_mut(y.as_mut_ptr() as *mut Complex<f64>, y.len()),
            )
        };
        // SAFETY: the caller's promise: AVX2 runs, and AVX-512 where `wide`.
        unsafe {
            (wide && avx::pass512::<avx::W64>(pass, s, inverse, x, y))
                || avx::pass::<avx::V64>(pass, s, inverse, x, y)
        }
    } else {
        // SAFETY: `T` is f32, the sealed trait's other type.
        let (pass, x, y) = unsafe {
            (
                &*(pass as *const Pass<T> as *const Pass<f32>),
                core::slice::from_raw_parts(x.as_ptr() as *const Complex<f32>, x.len()),
                core::slice::from_raw_parts_mut(y.as_mut_ptr() as *mut Complex<f32>, y.len()),
            )
        };
        // SAFETY: as above.
        unsafe {
            (wide && avx::pass512::<avx::W32>(pass, s, inverse, x, y))
                || avx::pass::<avx::V32>(pass, s, inverse, x, y)
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn passes_avx2<T: FftFloat>(
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
) {
    // SAFETY: this function runs only where AVX2 and FMA do.
    run_passes_with(passes, inverse, data, scratch, |p, s, x, y| unsafe {
        vector_pass(p, s, inverse, x, y, false)
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn passes_avx512<T: FftFloat>(
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
) {
    if T::TWIDDLE_DD && data.len() == 64 {
        // SAFETY: `T` is f64 (the sealed trait's type with double-double
        // twiddles), so these are the same references retyped; AVX-512 runs.
        let done = unsafe {
            avx::line64_f64(
                core::slice::from_raw_parts(passes.as_ptr() as *const Pass<f64>, passes.len()),
                inverse,
                core::slice::from_raw_parts_mut(data.as_mut_ptr() as *mut Complex<f64>, 64),
            )
        };
        if done {
            return;
        }
    }
    if !T::TWIDDLE_DD && data.len() == 64 {
        // SAFETY: `T` is f32 (the sealed trait's type without double-double
        // twiddles), so these are the same references retyped; AVX-512 runs.
        let done = unsafe {
            avx::line64(
                core::slice::from_raw_parts(passes.as_ptr() as *const Pass<f32>, passes.len()),
                inverse,
                core::slice::from_raw_parts_mut(data.as_mut_ptr() as *mut Complex<f32>, 64),
            )
        };
        if done {
            return;
        }
    }
    // SAFETY: this function runs only where AVX-512 F/VL/DQ/BW, AVX2 and
    // FMA do.
    run_passes_with(passes, inverse, data, scratch, |p, s, x, y| unsafe {
        vector_pass(p, s, inverse, x, y, true)
    })
}

/// The passes over one line on `simd`'s instructions (same bits on each).
pub(crate) fn run_passes<T: FftFloat>(
    simd: Simd,
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Simd::Avx512` comes from a tier this CPU runs (checked by
        // `Exec::resolve_tier`) that executes AVX-512 F, AVX2 and FMA.
        Simd::Avx512 => unsafe { passes_avx512(passes, inverse, data, scratch) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Simd::Avx2` comes from an available tier that executes AVX2 and FMA.
        Simd::Avx2 => unsafe { passes_avx2(passes, inverse, data, scratch) },
        _ => passes_generic(passes, inverse, data, scratch),
    }
}

/// `f()` compiled for `simd`'s instructions: the vectoriser turns its loops
/// into vector lanes, each lane the scalar operations (Rust never fuses a
/// multiply into an add), so every tier gives the same bits.
#[inline(always)]
pub(crate) fn with_simd<R>(simd: Simd, f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2,fma")]
        unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        #[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
        unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        match simd {
            // SAFETY: `Simd::Avx512` comes from a tier this CPU runs that
            // executes AVX-512 F/VL/DQ/BW, AVX2 and FMA.
            Simd::Avx512 => return unsafe { avx512(f) },
            // SAFETY: `Simd::Avx2` comes from a tier that executes AVX2 and FMA.
            Simd::Avx2 => return unsafe { avx2(f) },
            Simd::Scalar => {}
        }
    }
    let _ = simd;
    f()
}
