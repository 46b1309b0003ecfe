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
//! once over a register of complex points ([`crate::simd::ComplexReg`], the
//! crate's one home of vector code): AVX2 (4 points of complex64, 2 of
//! complex128) on the avx2 tier, and AVX-512 (8 and 4 points) on the avx512
//! tier, which falls back to the AVX2 loop for a pass whose shape the wider
//! vectors do not fit. A vector holds consecutive complex points in their
//! memory order, real and imaginary parts side by side. A product by a twiddle `w` is `a·w.re` and
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
    use crate::simd::{Cf32x4, Cf32x8, Cf64x2, Cf64x4, ComplexReg};
    use num_complex::Complex;

    /// The radix-4 butterfly of `butterflies::bf4`, the same operations.
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature contract:
    /// the caller is compiled with it); no memory is touched.
    #[inline(always)]
    unsafe fn bf4<V: ComplexReg>(a: [V; 4], inverse: bool) -> [V; 4] {
        let t0 = a[0].add(a[2]);
        let t1 = a[0].sub(a[2]);
        let t2 = a[1].add(a[3]);
        let t3 = a[1].sub(a[3]).rot(inverse);
        [t0.add(t2), t1.add(t3), t0.sub(t2), t1.sub(t3)]
    }

    /// One pass in AVX2 vectors (see [`pass_body`]).
    ///
    /// # Safety
    /// The CPU runs AVX2 and FMA, and `V` is a 256-bit register
    /// ([`crate::simd::Cf32x4`] or [`crate::simd::Cf64x2`]), whose
    /// instructions are those. (The slices are checked against the pass.)
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn pass<V: ComplexReg>(
        pass: &Pass<V::T>,
        s: usize,
        inverse: bool,
        x: &[Complex<V::T>],
        y: &mut [Complex<V::T>],
    ) -> bool {
        // SAFETY: this function enables AVX2 and FMA, which run (its
        // contract), and `V` needs no more.
        unsafe { pass_body::<V>(pass, s, inverse, x, y) }
    }

    /// One pass in AVX-512 vectors (see [`pass_body`]).
    ///
    /// # Safety
    /// The CPU runs AVX-512 F/DQ/VL/BW, AVX2 and FMA (which cover every
    /// [`ComplexReg`]). (The slices are checked against the pass.)
    #[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
    pub(super) unsafe fn pass512<V: ComplexReg>(
        pass: &Pass<V::T>,
        s: usize,
        inverse: bool,
        x: &[Complex<V::T>],
        y: &mut [Complex<V::T>],
    ) -> bool {
        // SAFETY: this function enables AVX-512 F/DQ/VL/BW, AVX2 and FMA,
        // which run (its contract): every register's instruction set.
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
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature
    /// contract). Memory needs nothing of the caller: `x` and `y` are checked
    /// to hold the pass's `p·m·s` points before any access, and every access
    /// is inside them (each vector's `L` points at `r ≤ s − L`).
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // k names the output and its twiddle
    unsafe fn pass_body<V: ComplexReg>(
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
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature
    /// contract); `x` and `y` hold the pass's `p·m` points; `pass.twk` is
    /// filled (`s = 1`, `m > 1`: `(p − 1)·m` twiddles by `k`).
    #[inline(always)]
    unsafe fn first_pass<V: ComplexReg>(
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

    /// A line of 64 points whose passes are radix 8 and 8, in registers of
    /// `L` points (`L` = 2, 4 or 8): the first pass over `q` in `8 / L`
    /// groups of `L` (vector `j` of group `g` is `x[8j + L·g..][..L]`) with
    /// its twiddles, the reordering between the two passes as `L × L`
    /// transposes of points, and the second pass over `k` in `8 / L` groups
    /// of `L`, stored in place. The same operations as the two passes
    /// through memory. False (nothing done) for any other shape.
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature
    /// contract: the caller is compiled with it). (Memory needs nothing of
    /// the caller: the shape is checked first, `data` holding 64 points and
    /// the first pass 56 twiddles by `k`.)
    #[inline(always)]
    unsafe fn line64<V: ComplexReg>(
        passes: &[Pass<V::T>],
        inverse: bool,
        data: &mut [Complex<V::T>],
    ) -> bool {
        let Some((c1, c2, tk)) = radix8_pair(passes, data.len()) else {
            return false;
        };
        let l = V::L;
        let groups = 8 / l;
        let xp = data.as_mut_ptr();
        // rows[q][h]: points L·h..L·h + L of row q (y[8q + L·h..], lanes k)
        // after the first pass; left unset (an initial value cost 32 stores
        // a line while the array lived in memory, about a tenth of a line's
        // time on Zen 3), and every entry read below is written first:
        // q = L·g + i over g < 8 / L and i < L covers 0..8, for every
        // h < 8 / L.
        let mut rows = [[core::mem::MaybeUninit::<V>::uninit(); 4]; 8];
        /// The first pass, group g (twiddled, transposed into `rows`).
        ///
        /// # Safety
        /// As [`line64`], after its shape check: 64 points at `xp`, the
        /// first pass's 56 twiddles at `tk`, and `g < 8 / L`.
        #[inline(always)]
        unsafe fn first<V: ComplexReg>(
            xp: *mut Complex<V::T>,
            tk: *const Complex<V::T>,
            c1: &Consts8<V::T>,
            inverse: bool,
            g: usize,
            rows: &mut [[core::mem::MaybeUninit<V>; 4]; 8],
        ) {
            let l = V::L;
            // SAFETY: this function's contract: the loads and twiddles lie
            // inside the 64 points and the 56 twiddles.
            unsafe {
                let mut b = bf8(loads::<V, 8>(xp.add(l * g), 8), c1, inverse);
                for (k, bk) in b.iter_mut().enumerate().skip(1) {
                    *bk = twiddle(*bk, tk.add((k - 1) * 8 + l * g));
                }
                for h in 0..8 / l {
                    let block = &mut b[l * h..l * h + l];
                    V::transpose(block);
                    for (i, v) in block.iter().enumerate() {
                        rows[l * g + i][h] = core::mem::MaybeUninit::new(*v);
                    }
                }
            }
        }
        /// The second pass, group h, stored in place.
        ///
        /// # Safety
        /// As [`line64`], after its shape check: 64 points at `xp`,
        /// `h < 8 / L`, and every group of the first pass run into `rows`.
        #[inline(always)]
        unsafe fn second<V: ComplexReg>(
            xp: *mut Complex<V::T>,
            c2: &Consts8<V::T>,
            inverse: bool,
            h: usize,
            rows: &[[core::mem::MaybeUninit<V>; 4]; 8],
        ) {
            // SAFETY: this function's contract: rows[q][h] for every q < 8
            // was written by the first pass (see `rows`), and the stores lie
            // inside the 64 points.
            unsafe {
                let a: [V; 8] = core::array::from_fn(|q| rows[q][h].assume_init());
                let out = bf8(a, c2, inverse);
                for (r, v) in out.iter().enumerate() {
                    v.store(xp.add(8 * r + V::L * h));
                }
            }
        }
        // Each group written out (the count is a constant of `V`): a loop
        // over the groups was left rolled, its values through memory.
        // SAFETY (every call below): the shape was checked above (64
        // points, 56 twiddles), each g and h is below 8 / L, and the second
        // pass runs after every group of the first.
        match groups {
            1 => {
                first::<V>(xp, tk, c1, inverse, 0, &mut rows);
                second::<V>(xp, c2, inverse, 0, &rows);
            }
            2 => {
                first::<V>(xp, tk, c1, inverse, 0, &mut rows);
                first::<V>(xp, tk, c1, inverse, 1, &mut rows);
                second::<V>(xp, c2, inverse, 0, &rows);
                second::<V>(xp, c2, inverse, 1, &rows);
            }
            // Four groups (L = 2, the only other register width).
            _ => {
                debug_assert_eq!(groups, 4);
                for g in 0..4 {
                    first::<V>(xp, tk, c1, inverse, g, &mut rows);
                }
                second::<V>(xp, c2, inverse, 0, &rows);
                second::<V>(xp, c2, inverse, 1, &rows);
                second::<V>(xp, c2, inverse, 2, &rows);
                second::<V>(xp, c2, inverse, 3, &rows);
            }
        }
        true
    }

    /// [`line64`] on complex64 points, eight a register.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F/DQ/VL/BW, AVX2 and FMA.
    #[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
    pub(super) unsafe fn line64_f32x8(
        passes: &[Pass<f32>],
        inverse: bool,
        data: &mut [Complex<f32>],
    ) -> bool {
        line64::<Cf32x8>(passes, inverse, data)
    }

    /// [`line64`] on complex128 points, four a register.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F/DQ/VL/BW, AVX2 and FMA.
    #[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
    pub(super) unsafe fn line64_f64x4(
        passes: &[Pass<f64>],
        inverse: bool,
        data: &mut [Complex<f64>],
    ) -> bool {
        line64::<Cf64x4>(passes, inverse, data)
    }

    /// [`line64`] on complex64 points, four a register.
    ///
    /// # Safety
    /// The CPU runs AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn line64_f32x4(
        passes: &[Pass<f32>],
        inverse: bool,
        data: &mut [Complex<f32>],
    ) -> bool {
        line64::<Cf32x4>(passes, inverse, data)
    }

    /// [`line64`] on complex128 points, two a register.
    ///
    /// # Safety
    /// The CPU runs AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn line64_f64x2(
        passes: &[Pass<f64>],
        inverse: bool,
        data: &mut [Complex<f64>],
    ) -> bool {
        line64::<Cf64x2>(passes, inverse, data)
    }

    /// `o[s·k] = b[k]`, each `k ≥ 1` times its twiddle `w[k − 1]` where
    /// `twid` (a pass's results for one `q`, `s` sequences apart).
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature
    /// contract); the `L` points from `o + s·k` are writable for every
    /// `k < b.len()`.
    #[inline(always)]
    unsafe fn store_rows<V: ComplexReg>(
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
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature contract:
    /// the caller is compiled with it); `tw` is read by checked indexing.
    #[inline(always)]
    unsafe fn splats<V: ComplexReg, const K: usize>(
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
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature
    /// contract); the `L` points from `t` are readable.
    #[inline(always)]
    unsafe fn twiddle<V: ComplexReg>(b: V, t: *const Complex<V::T>) -> V {
        let (wr, wi) = V::dup(V::load(t));
        b.cmul(wr, wi)
    }

    /// `o[p·i + k] = b[k][i]` for `i < L`, `k < p = b.len()` (through the stack).
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature
    /// contract); `b.len()·L ≤ 40` (the stack buffer: radix 2, 3 and 5 of at
    /// most 8 points a vector); the `p·L` points from `o` are writable.
    #[inline(always)]
    unsafe fn store_interleaved<V: ComplexReg>(b: &[V], o: *mut Complex<V::T>) {
        const MAX: usize = 5 * 8;
        let (p, l) = (b.len(), V::L);
        debug_assert!(p * l <= MAX);
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

    /// The radix-3 butterfly of `butterflies::bf3`, the same operations.
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature contract:
    /// the caller is compiled with it); no memory is touched.
    #[inline(always)]
    unsafe fn bf3<V: ComplexReg>(a: [V; 3], c: &Consts3<V::T>, inverse: bool) -> [V; 3] {
        let t1 = a[1].add(a[2]);
        let t2 = a[1].sub(a[2]);
        let b0 = a[0].add(t1);
        let mm = a[0].sub(t1.mulr(V::T::HALF));
        let nn = t2.mulr(c.s).rot(inverse);
        [b0, mm.add(nn), mm.sub(nn)]
    }

    /// `butterflies::mul45`: `(z ∓ i·z)·(1/√2)`.
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature contract:
    /// the caller is compiled with it); no memory is touched.
    #[inline(always)]
    unsafe fn mul45<V: ComplexReg>(z: V, c: V::T, inverse: bool) -> V {
        z.add(z.rot(inverse)).mulr(c)
    }

    /// `P` vectors at `p + j·d`, `j < P` (a loop, not a closure: closures
    /// do not inherit the target features of the function that inlines them,
    /// and would call the intrinsics out of line).
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature
    /// contract); the `L` points from `p + j·d` are readable for every
    /// `j < P`.
    #[inline(always)]
    unsafe fn loads<V: ComplexReg, const P: usize>(p: *const Complex<V::T>, d: usize) -> [V; P] {
        let mut a = [V::load(p); P];
        for (j, aj) in a.iter_mut().enumerate().skip(1) {
            *aj = V::load(p.add(j * d));
        }
        a
    }

    /// The radix-8 butterfly of `butterflies::bf8`, the same operations.
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature contract:
    /// the caller is compiled with it); no memory is touched.
    #[inline(always)]
    unsafe fn bf8<V: ComplexReg>(a: [V; 8], c: &Consts8<V::T>, inverse: bool) -> [V; 8] {
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

    /// The radix-5 butterfly of `butterflies::bf5`, the same operations.
    ///
    /// # Safety
    /// The CPU runs `V`'s instruction set ([`ComplexReg`]'s feature contract:
    /// the caller is compiled with it); no memory is touched.
    #[inline(always)]
    unsafe fn bf5<V: ComplexReg>(a: [V; 5], c: &Consts5<V::T>, inverse: bool) -> [V; 5] {
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
        // SAFETY: this function's contract: AVX2 and FMA run (`pass` with a
        // 256-bit register needs no more), and AVX-512 F/VL/DQ/BW where
        // `wide` (all `pass512` needs).
        unsafe {
            (wide && avx::pass512::<crate::simd::Cf64x4>(pass, s, inverse, x, y))
                || avx::pass::<crate::simd::Cf64x2>(pass, s, inverse, x, y)
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
        // SAFETY: this function's contract, as for f64: AVX2 and FMA run
        // (all `pass` needs for the 256-bit Cf32x4), and AVX-512 F/VL/DQ/BW
        // where `wide` (all `pass512` needs).
        unsafe {
            (wide && avx::pass512::<crate::simd::Cf32x8>(pass, s, inverse, x, y))
                || avx::pass::<crate::simd::Cf32x4>(pass, s, inverse, x, y)
        }
    }
}

/// A whole line's passes in registers: the passes, the direction, the line;
/// true where it ran.
#[cfg(target_arch = "x86_64")]
type LineFn<T> = unsafe fn(&[Pass<T>], bool, &mut [Complex<T>]) -> bool;

/// A 64-point line of two radix-8 passes in registers, by `f32_line` or
/// `f64_line` (one of the [`avx`] `line64_*` functions) as `T` is f32 or
/// f64: true where it ran, false (nothing done) for any other line.
///
/// # Safety
/// The CPU runs the instruction set the two functions are compiled for.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn line64_in_registers<T: FftFloat>(
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    f32_line: LineFn<f32>,
    f64_line: LineFn<f64>,
) -> bool {
    if data.len() != 64 {
        return false;
    }
    if T::TWIDDLE_DD {
        // SAFETY: `T` is f64 (the sealed trait's type with double-double
        // twiddles), so these are the same references retyped, `data`'s 64
        // points; the CPU runs `f64_line`'s instructions (the contract).
        unsafe {
            f64_line(
                core::slice::from_raw_parts(passes.as_ptr() as *const Pass<f64>, passes.len()),
                inverse,
                core::slice::from_raw_parts_mut(data.as_mut_ptr() as *mut Complex<f64>, 64),
            )
        }
    } else {
        // SAFETY: `T` is f32 (the sealed trait's type without double-double
        // twiddles), as above; the CPU runs `f32_line`'s instructions.
        unsafe {
            f32_line(
                core::slice::from_raw_parts(passes.as_ptr() as *const Pass<f32>, passes.len()),
                inverse,
                core::slice::from_raw_parts_mut(data.as_mut_ptr() as *mut Complex<f32>, 64),
            )
        }
    }
}

/// The passes over one line, each in AVX2 vectors where its shape allows
/// ([`vector_pass`]), else by the scalar loop compiled for AVX2 (a 64-point
/// line of two radix-8 passes runs in registers instead: [`run_passes`]).
///
/// # Safety
/// The CPU runs AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn passes_avx2<T: FftFloat>(
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
) {
    // SAFETY: AVX2 and FMA run (this function's contract), all that
    // `vector_pass` asks without `wide`.
    run_passes_with(passes, inverse, data, scratch, |p, s, x, y| unsafe {
        vector_pass(p, s, inverse, x, y, false)
    })
}

/// The passes over one line, each in AVX-512 or AVX2 vectors where its
/// shape allows ([`vector_pass`]), else by the scalar loop compiled for
/// AVX-512 (a 64-point line of two radix-8 passes runs in registers
/// instead: [`run_passes`]).
///
/// # Safety
/// The CPU runs AVX-512 F/VL/DQ/BW, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn passes_avx512<T: FftFloat>(
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
) {
    // SAFETY: AVX-512 F/VL/DQ/BW, AVX2 and FMA run (this function's
    // contract), all that `vector_pass` asks with `wide`.
    run_passes_with(passes, inverse, data, scratch, |p, s, x, y| unsafe {
        vector_pass(p, s, inverse, x, y, true)
    })
}

/// The passes over one line on `simd`'s instructions (same bits on each):
/// a 64-point line of two radix-8 passes in registers
/// ([`avx::line64_f32x4`] and [`avx::line64_f64x2`] on AVX2,
/// [`avx::line64_f32x8`] and [`avx::line64_f64x4`] on AVX-512), else the
/// passes through memory.
pub(crate) fn run_passes<T: FftFloat>(
    simd: Simd,
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
) {
    // A 64-point line of two radix-8 passes goes to its register line
    // straight from here (not through the passes' functions, whose set-up
    // took about 6% of such a call's samples by perf on Zen 3).
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Simd::Avx512` comes from a tier this CPU runs (checked by
        // `Exec::resolve_tier`) that executes AVX-512 F, AVX2 and FMA.
        Simd::Avx512 => unsafe {
            if !line64_in_registers(passes, inverse, data, avx::line64_f32x8, avx::line64_f64x4) {
                passes_avx512(passes, inverse, data, scratch)
            }
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Simd::Avx2` comes from an available tier that executes AVX2 and FMA.
        Simd::Avx2 => unsafe {
            if !line64_in_registers(passes, inverse, data, avx::line64_f32x4, avx::line64_f64x2) {
                passes_avx2(passes, inverse, data, scratch)
            }
        },
        _ => passes_generic(passes, inverse, data, scratch),
    }
}

/// `f()` compiled for `simd`'s instructions: the vectoriser turns its loops
/// into vector lanes, each lane the scalar operations (Rust never fuses a
/// multiply into an add), so every tier gives the same bits.
///
/// Mark `f` `#[inline(always)]` (`with_simd(simd, #[inline(always)] || …)`):
/// unmarked, LLVM kept the larger closures out of line, compiled without the
/// features (the real transforms' unpacking and the four steps' gathers ran
/// as SSE code under the AVX2 tier, by their machine code).
#[inline(always)]
pub(crate) fn with_simd<R>(simd: Simd, f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        /// `f()` with AVX2 and FMA enabled.
        ///
        /// # Safety
        /// The CPU runs AVX2 and FMA.
        #[target_feature(enable = "avx2,fma")]
        unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        /// `f()` with AVX-512 F/VL/DQ/BW, AVX2 and FMA enabled.
        ///
        /// # Safety
        /// The CPU runs AVX-512 F/VL/DQ/BW, AVX2 and FMA.
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
