//! [`RealReg`] as an array of lanes in plain Rust: what each method means,
//! lane by lane, and the unit test that holds every vector impl to it, bit
//! for bit (a NaN counts as any NaN: which operand's payload a NaN result
//! carries is the hardware's rule, and Rust's arithmetic does not fix it).

use super::RealReg;

/// `N` lanes of `T` in an array; a mask is a bit per lane.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lanes<T, const N: usize>(pub [T; N]);

macro_rules! model {
    ($t:ty) => {
        impl<const N: usize> RealReg for Lanes<$t, N> {
            type T = $t;
            const LANES: usize = N;
            type Mask = u32;
            const MASK_REGISTERS: bool = false;
            unsafe fn zero() -> Self {
                Lanes([0.0; N])
            }
            unsafe fn set1(v: $t) -> Self {
                Lanes([v; N])
            }
            unsafe fn splat(p: *const $t) -> Self {
                // SAFETY: `*p` is readable (the trait's memory contract).
                Lanes([unsafe { *p }; N])
            }
            unsafe fn load(p: *const $t) -> Self {
                // SAFETY: the N elements from `p` are readable (the trait's
                // memory contract).
                Lanes(core::array::from_fn(|i| unsafe {
                    p.add(i).read_unaligned()
                }))
            }
            unsafe fn store(self, p: *mut $t) {
                for (i, v) in self.0.iter().enumerate() {
                    // SAFETY: the N elements from `p` are writable (the
                    // trait's memory contract).
                    unsafe { p.add(i).write_unaligned(*v) };
                }
            }
            unsafe fn add(a: Self, b: Self) -> Self {
                Lanes(core::array::from_fn(|i| a.0[i] + b.0[i]))
            }
            unsafe fn sub(a: Self, b: Self) -> Self {
                Lanes(core::array::from_fn(|i| a.0[i] - b.0[i]))
            }
            unsafe fn mul(a: Self, b: Self) -> Self {
                Lanes(core::array::from_fn(|i| a.0[i] * b.0[i]))
            }
            unsafe fn fmadd(a: Self, b: Self, c: Self) -> Self {
                Lanes(core::array::from_fn(|i| a.0[i].mul_add(b.0[i], c.0[i])))
            }
            unsafe fn fnmadd(a: Self, b: Self, c: Self) -> Self {
                Lanes(core::array::from_fn(|i| (-a.0[i]).mul_add(b.0[i], c.0[i])))
            }
            unsafe fn fmsub(a: Self, b: Self, c: Self) -> Self {
                Lanes(core::array::from_fn(|i| a.0[i].mul_add(b.0[i], -c.0[i])))
            }
            unsafe fn div(a: Self, b: Self) -> Self {
                Lanes(core::array::from_fn(|i| a.0[i] / b.0[i]))
            }
            unsafe fn sqrt(a: Self) -> Self {
                Lanes(core::array::from_fn(|i| a.0[i].sqrt()))
            }
            unsafe fn neg(a: Self) -> Self {
                Lanes(core::array::from_fn(|i| -a.0[i]))
            }
            unsafe fn abs(a: Self) -> Self {
                Lanes(core::array::from_fn(|i| a.0[i].abs()))
            }
            unsafe fn min(a: Self, b: Self) -> Self {
                Lanes(core::array::from_fn(|i| {
                    let (x, y) = (a.0[i], b.0[i]);
                    if x < y {
                        x
                    } else if y < x {
                        y
                    } else if x == y {
                        <$t>::from_bits(x.to_bits() | y.to_bits())
                    } else {
                        x + y
                    }
                }))
            }
            unsafe fn max(a: Self, b: Self) -> Self {
                Lanes(core::array::from_fn(|i| {
                    let (x, y) = (a.0[i], b.0[i]);
                    if x > y {
                        x
                    } else if y > x {
                        y
                    } else if x == y {
                        <$t>::from_bits(x.to_bits() & y.to_bits())
                    } else {
                        x + y
                    }
                }))
            }
            unsafe fn first(n: usize) -> u32 {
                ((1u64 << n.min(N)) - 1) as u32
            }
            unsafe fn from_lane(n: usize) -> u32 {
                (((1u64 << N) - 1) & !((1u64 << n.min(N)) - 1)) as u32
            }
            unsafe fn load_m(p: *const $t, m: u32) -> Self {
                Lanes(core::array::from_fn(|i| {
                    if m >> i & 1 == 1 {
                        // SAFETY: a masked lane's element is readable (the
                        // trait's memory contract).
                        unsafe { p.add(i).read_unaligned() }
                    } else {
                        0.0
                    }
                }))
            }
            unsafe fn store_m(self, p: *mut $t, m: u32) {
                for (i, v) in self.0.iter().enumerate() {
                    if m >> i & 1 == 1 {
                        // SAFETY: a masked lane's element is writable (the
                        // trait's memory contract).
                        unsafe { p.add(i).write_unaligned(*v) };
                    }
                }
            }
            unsafe fn mul_m(a: Self, b: Self, m: u32) -> Self {
                Lanes(core::array::from_fn(|i| {
                    if m >> i & 1 == 1 {
                        a.0[i] * b.0[i]
                    } else {
                        a.0[i]
                    }
                }))
            }
            unsafe fn reduce_add(self) -> $t {
                let mut l = self.0;
                let mut h = N / 2;
                while h > 0 {
                    for i in 0..h {
                        l[i] += l[i + h];
                    }
                    h /= 2;
                }
                l[0]
            }
            unsafe fn reduce_mul(self) -> $t {
                let mut l = self.0;
                let mut h = N / 2;
                while h > 0 {
                    for i in 0..h {
                        l[i] *= l[i + h];
                    }
                    h /= 2;
                }
                l[0]
            }
            unsafe fn shift_up_from(self, below: Self, d: usize) -> Self {
                Lanes(core::array::from_fn(|i| {
                    if i >= d {
                        self.0[i - d]
                    } else {
                        below.0[N + i - d]
                    }
                }))
            }
            unsafe fn splat_last(self) -> Self {
                Lanes([self.0[N - 1]; N])
            }
        }
    };
}

model!(f32);
model!(f64);

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::{Lanes, RealReg};
    use crate::tier::{runs_avx2, runs_avx512};
    use crate::Tier;
    use core::arch::x86_64::{__m256, __m256d, __m512, __m512d};

    /// A float's bits (every NaN the same) and a float from an LCG's bits.
    trait Bits: Copy + core::fmt::Debug {
        fn bits(self) -> u64;
        fn from_draw(z: u64) -> Self;
    }
    impl Bits for f32 {
        fn bits(self) -> u64 {
            if self.is_nan() {
                u64::MAX
            } else {
                self.to_bits() as u64
            }
        }
        fn from_draw(z: u64) -> f32 {
            match z % 16 {
                0 => f32::NAN,
                1 => -0.0,
                2 => f32::INFINITY,
                3 => f32::from_bits(0x7fa0_0001 | ((z >> 8) as u32 & 0x8000_0000)),
                4 => 0.0,
                _ => {
                    ((z >> 11) as f32 / (1u64 << 53) as f32 - 0.5) * 2f32.powi((z % 40) as i32 - 20)
                }
            }
        }
    }
    impl Bits for f64 {
        fn bits(self) -> u64 {
            if self.is_nan() {
                u64::MAX
            } else {
                self.to_bits()
            }
        }
        fn from_draw(z: u64) -> f64 {
            match z % 16 {
                0 => f64::NAN,
                1 => -0.0,
                2 => f64::INFINITY,
                3 => f64::from_bits(0x7ff4_0000_0000_0001 | (z & 1 << 63)),
                4 => 0.0,
                _ => {
                    ((z >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2f64.powi((z % 80) as i32 - 40)
                }
            }
        }
    }

    /// `R` against the model of as many lanes, method by method, on drawn
    /// operands: every lane's bits equal.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set and the caller enables it.
    #[inline(always)]
    unsafe fn check<R, const N: usize>(seed: u64)
    where
        R: RealReg,
        R::T: Bits,
        Lanes<R::T, N>: RealReg<T = R::T>,
    {
        assert_eq!(R::LANES, N);
        let mut z = seed;
        let mut draw = || {
            z = z
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            R::T::from_draw(z >> 1)
        };
        let x: [R::T; 3 * 16] = core::array::from_fn(|_| draw());
        let (a, b, c) = (x.as_ptr(), x[N..].as_ptr(), x[2 * N..].as_ptr());
        let bits = |v: &[R::T]| v.iter().map(|f| f.bits()).collect::<Vec<_>>();
        // SAFETY: `x` holds 3·16 ≥ 3·N elements, so a, b, c each address N
        // readable ones and `out` N writable ones; the caller runs R's
        // instructions.
        unsafe {
            let out_of = |r: R| {
                let mut o = [x[0]; 16];
                r.store(o.as_mut_ptr());
                bits(&o[..N])
            };
            let model_of = |r: Lanes<R::T, N>| bits(&r.0);
            type M<T, const N: usize> = Lanes<T, N>;
            let (ra, rb, rc) = (R::load(a), R::load(b), R::load(c));
            let (ma, mb, mc) = (M::<R::T, N>::load(a), M::load(b), M::load(c));
            assert_eq!(out_of(R::zero()), model_of(M::zero()), "zero");
            assert_eq!(out_of(R::set1(x[5])), model_of(M::set1(x[5])), "set1");
            assert_eq!(out_of(R::splat(c)), model_of(M::splat(c)), "splat");
            assert_eq!(out_of(ra), model_of(ma), "load");
            assert_eq!(out_of(R::add(ra, rb)), model_of(M::add(ma, mb)), "add");
            assert_eq!(out_of(R::sub(ra, rb)), model_of(M::sub(ma, mb)), "sub");
            assert_eq!(out_of(R::mul(ra, rb)), model_of(M::mul(ma, mb)), "mul");
            assert_eq!(out_of(R::div(ra, rb)), model_of(M::div(ma, mb)), "div");
            assert_eq!(out_of(R::sqrt(ra)), model_of(M::sqrt(ma)), "sqrt");
            assert_eq!(out_of(R::neg(ra)), model_of(M::neg(ma)), "neg");
            assert_eq!(out_of(R::abs(ra)), model_of(M::abs(ma)), "abs");
            assert_eq!(out_of(R::min(ra, rb)), model_of(M::min(ma, mb)), "min");
            assert_eq!(out_of(R::max(ra, rb)), model_of(M::max(ma, mb)), "max");
            assert_eq!(
                out_of(R::min(ra, ra)),
                model_of(M::min(ma, ma)),
                "min equal"
            );
            // Every pair of +0, −0, NaN and ∞ (16 lanes hold them all).
            let p = [
                R::T::from_draw(4),
                R::T::from_draw(1),
                R::T::from_draw(0),
                R::T::from_draw(2),
            ];
            let za: [R::T; 32] = core::array::from_fn(|i| p[i % 4]);
            let zb: [R::T; 32] = core::array::from_fn(|i| p[i / 4 % 4]);
            for (ka, kb) in [(0, 0), (0, 4), (4, 8), (8, 12), (12, 0)] {
                let (pa, pb) = (za[ka..].as_ptr(), zb[kb..].as_ptr());
                let (ra, rb) = (R::load(pa), R::load(pb));
                let (ma, mb) = (M::<R::T, N>::load(pa), M::load(pb));
                assert_eq!(out_of(R::min(ra, rb)), model_of(M::min(ma, mb)), "min ±0");
                assert_eq!(out_of(R::max(ra, rb)), model_of(M::max(ma, mb)), "max ±0");
            }
            let (rf, mf) = (R::fmadd(ra, rb, rc), M::fmadd(ma, mb, mc));
            assert_eq!(out_of(rf), model_of(mf), "fmadd");
            let (rf, mf) = (R::fnmadd(ra, rb, rc), M::fnmadd(ma, mb, mc));
            assert_eq!(out_of(rf), model_of(mf), "fnmadd");
            assert_eq!(ra.reduce_add().bits(), ma.reduce_add().bits(), "reduce_add");
            assert_eq!(ra.reduce_mul().bits(), ma.reduce_mul().bits(), "reduce_mul");
            assert_eq!(
                out_of(ra.splat_last()),
                model_of(ma.splat_last()),
                "splat_last"
            );
            for d in 1..=N {
                assert_eq!(
                    out_of(ra.shift_up_from(rb, d)),
                    model_of(ma.shift_up_from(mb, d)),
                    "shift_up_from {d}"
                );
            }
            for n in 0..=N + 1 {
                let (rm, mm) = (R::first(n), M::<R::T, N>::first(n));
                assert_eq!(
                    out_of(R::load_m(a, rm)),
                    model_of(M::load_m(a, mm)),
                    "load_m {n}"
                );
                let (rp, mp) = (R::mul_m(ra, rb, rm), M::mul_m(ma, mb, mm));
                assert_eq!(out_of(rp), model_of(mp), "mul_m {n}");
                let (mut ro, mut mo) = ([x[1]; 16], [x[1]; 16]);
                rb.store_m(ro.as_mut_ptr(), rm);
                mb.store_m(mo.as_mut_ptr(), mm);
                assert_eq!(bits(&ro), bits(&mo), "store_m {n}");
                let (rm, mm) = (R::from_lane(n), M::<R::T, N>::from_lane(n));
                assert_eq!(
                    out_of(R::load_m(a, rm)),
                    model_of(M::load_m(a, mm)),
                    "load_m from_lane {n}"
                );
                let (rp, mp) = (R::mul_m(ra, rb, rm), M::mul_m(ma, mb, mm));
                assert_eq!(out_of(rp), model_of(mp), "mul_m from_lane {n}");
            }
        }
    }

    /// # Safety
    /// The CPU runs AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn check_avx2(seed: u64) {
        // SAFETY: this function enables AVX2 and FMA, which its caller runs.
        unsafe {
            check::<__m256, 8>(seed);
            check::<__m256d, 4>(seed);
        }
    }

    /// # Safety
    /// The CPU runs AVX-512 F, AVX2 and FMA.
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn check_avx512(seed: u64) {
        // SAFETY: this function enables AVX-512 F, AVX2 and FMA, which its
        // caller runs.
        unsafe {
            check::<__m512, 16>(seed);
            check::<__m512d, 8>(seed);
        }
    }

    #[test]
    fn every_vector_register_computes_the_models_bits() {
        let runs = |f: fn(Tier) -> bool| Tier::ALL.iter().any(|&t| f(t) && t.available());
        for seed in 0..200 {
            if runs(runs_avx2) {
                // SAFETY: an available tier runs AVX2 and FMA.
                unsafe { check_avx2(seed) };
            }
            if runs(runs_avx512) {
                // SAFETY: an available tier runs AVX-512 F, AVX2 and FMA.
                unsafe { check_avx512(seed) };
            }
        }
    }
}

/// [`ByteReg`](super::ByteReg)'s methods stated on arrays of bytes, and the
/// test that holds the vector impls to them lane by lane.
#[cfg(target_arch = "x86_64")]
mod byte_lanes {
    use crate::simd::ByteReg;
    use crate::tier::{runs_avx2, runs_avx512bw};
    use crate::Tier;
    use core::arch::x86_64::*;
    use tessera_testkit::rng::Rng;

    /// Bit `i` where `f(lane i)`.
    fn bits(v: &[u8], f: impl Fn(usize, u8) -> bool) -> u64 {
        v.iter()
            .enumerate()
            .fold(0, |m, (i, &x)| m | (f(i, x) as u64) << i)
    }

    /// # Safety
    /// The CPU runs `R`'s instructions.
    #[inline(always)]
    unsafe fn check<R: ByteReg>(seed: u64) {
        let n = R::LANES;
        let mut rng = Rng::new(seed);
        // Small values often, so that lanes compare equal and nibbles repeat.
        let mut draw = || {
            if rng.chance(1, 2) {
                rng.below(4) as u8
            } else {
                rng.next_u64() as u8
            }
        };
        let x: Vec<u8> = (0..4 * n).map(|_| draw()).collect();
        let (a, b, c) = (&x[..n], &x[n..2 * n], &x[2 * n..3 * n]);
        let nib: Vec<u8> = x[3 * n..].iter().map(|v| v & 15).collect();
        let table: [u8; 16] = core::array::from_fn(|i| x[i].wrapping_mul(7) ^ i as u8);
        // SAFETY: every pointer addresses n readable (or writable) bytes;
        // the caller runs R's instructions.
        unsafe {
            let out = |r: R| {
                let mut o = vec![0u8; n];
                r.store(o.as_mut_ptr());
                o
            };
            let each = |f: &dyn Fn(usize) -> u8| (0..n).map(f).collect::<Vec<u8>>();
            let (ra, rb, rc) = (
                R::load(a.as_ptr()),
                R::load(b.as_ptr()),
                R::load(c.as_ptr()),
            );
            let rn = R::load(nib.as_ptr());
            assert_eq!(out(ra), a, "load/store");
            assert_eq!(out(R::set1(x[3])), vec![x[3]; n], "set1");
            assert_eq!(out(R::and(ra, rb)), each(&|i| a[i] & b[i]), "and");
            assert_eq!(out(R::or(ra, rb)), each(&|i| a[i] | b[i]), "or");
            assert_eq!(out(R::xor(ra, rb)), each(&|i| a[i] ^ b[i]), "xor");
            assert_eq!(
                out(R::add(ra, rb)),
                each(&|i| a[i].wrapping_add(b[i])),
                "add"
            );
            assert_eq!(
                out(R::subs(ra, rb)),
                each(&|i| a[i].saturating_sub(b[i])),
                "subs"
            );
            let eq = each(&|i| if a[i] == b[i] { 0xff } else { 0 });
            assert_eq!(out(R::eq(ra, rb)), eq, "eq");
            assert_eq!(out(R::min(ra, rb)), each(&|i| a[i].min(b[i])), "min");
            assert_eq!(R::eq_bits(ra, rb), bits(a, |i, v| v == b[i]), "eq_bits");
            assert_eq!(R::high_bits(ra), bits(a, |_, v| v >= 128), "high_bits");
            assert_eq!(R::nonzero_bits(ra), bits(a, |_, v| v != 0), "nonzero_bits");
            let z = R::set1(0);
            assert!(!R::any(z) && R::any(ra) == a.iter().any(|&v| v != 0), "any");
            assert_eq!(
                out(R::high_nibbles(ra)),
                each(&|i| a[i] >> 4),
                "high_nibbles"
            );
            assert_eq!(out(R::low_nibbles(ra)), each(&|i| a[i] & 15), "low_nibbles");
            let t = R::table16(&table);
            let looked = each(&|i| table[nib[i] as usize]);
            assert_eq!(out(R::lookup16(t, rn)), looked, "lookup16");
            // `a` before `b` in a stream: lane i of prevK(b, a) is the byte
            // K places before b[i].
            let stream = &x[..2 * n];
            for (k, got) in [
                (1, out(R::prev1(rb, ra))),
                (2, out(R::prev2(rb, ra))),
                (3, out(R::prev3(rb, ra))),
            ] {
                assert_eq!(got, each(&|i| stream[n + i - k]), "prev{k}");
            }
            let total: u64 = c.iter().map(|&v| v as u64).sum();
            assert_eq!(R::sum(rc), total, "sum");
            let (z0, z1) = R::zip(ra, rb);
            let zipped: Vec<u8> = (0..2 * n)
                .map(|j| if j % 2 == 0 { a[j / 2] } else { b[j / 2] })
                .collect();
            assert_eq!([out(z0), out(z1)].concat(), zipped, "zip");
            let nb: Vec<u8> = b.iter().map(|v| v & 15).collect();
            let rnb = R::load(nb.as_ptr());
            let all: Vec<u8> = [nib.clone(), nb.clone()].concat();
            let packed = each(&|j| all[2 * j] << 4 | all[2 * j + 1]);
            assert_eq!(
                out(R::pack_nibble_pairs(rn, rnb)),
                packed,
                "pack_nibble_pairs"
            );
            let words = |v: &[u8]| -> Vec<u16> {
                v.chunks(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect()
            };
            let bytes16 =
                |w: Vec<u16>| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
            let v32 = 0x0fc0_fc00u32 ^ x[7] as u32;
            let want32: Vec<u8> = (0..n / 4).flat_map(|_| v32.to_le_bytes()).collect();
            assert_eq!(out(R::set1_u32(v32)), want32, "set1_u32");
            let (wa, wb) = (words(a), words(b));
            let hi: Vec<u16> = wa
                .iter()
                .zip(&wb)
                .map(|(p, q)| ((*p as u32 * *q as u32) >> 16) as u16)
                .collect();
            assert_eq!(out(R::mulhi_u16(ra, rb)), bytes16(hi), "mulhi_u16");
            let lo: Vec<u16> = wa
                .iter()
                .zip(&wb)
                .map(|(p, q)| p.wrapping_mul(*q))
                .collect();
            assert_eq!(out(R::mullo_u16(ra, rb)), bytes16(lo), "mullo_u16");
            // maddubs with b's bytes in 0..=64, as its callers use it: no
            // saturation.
            let sb: Vec<u8> = b.iter().map(|v| v % 65).collect();
            let rsb = R::load(sb.as_ptr());
            let md: Vec<u16> = (0..n / 2)
                .map(|j| {
                    let p = a[2 * j] as i32 * sb[2 * j] as i32;
                    (p + a[2 * j + 1] as i32 * sb[2 * j + 1] as i32) as i16 as u16
                })
                .collect();
            assert_eq!(out(R::maddubs(ra, rsb)), bytes16(md), "maddubs");
            let dw: Vec<u8> = (0..n / 4)
                .flat_map(|j| {
                    let s = (0..2)
                        .map(|k| wa[2 * j + k] as i16 as i32 * wb[2 * j + k] as i16 as i32)
                        .fold(0i32, |x, y| x.wrapping_add(y));
                    s.to_le_bytes()
                })
                .collect();
            assert_eq!(out(R::madd16(ra, rb)), dw, "madd16");
            let m = 12 * n / 16;
            let l12 = out(R::load12(x.as_ptr()));
            let want12 = each(&|i| {
                if i % 16 < 12 {
                    x[12 * (i / 16) + i % 16]
                } else {
                    0
                }
            });
            assert_eq!(l12, want12, "load12");
            let mut st = vec![0x5au8; n];
            ra.store12(st.as_mut_ptr());
            let mut want_st: Vec<u8> = (0..m).map(|k| a[16 * (k / 12) + k % 12]).collect();
            want_st.resize(n, 0x5a);
            assert_eq!(st, want_st, "store12");
        }
    }

    /// # Safety
    /// The CPU runs AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn check_avx2(seed: u64) {
        // SAFETY: this function enables AVX2, which its caller runs.
        unsafe { check::<__m256i>(seed) }
    }

    /// # Safety
    /// The CPU runs AVX-512 F and BW with AVX2.
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    unsafe fn check_avx512(seed: u64) {
        // SAFETY: this function enables AVX-512 F and BW and AVX2, which its
        // caller runs.
        unsafe { check::<__m512i>(seed) }
    }

    #[test]
    fn every_byte_register_computes_the_models_lanes() {
        let runs = |f: fn(Tier) -> bool| Tier::ALL.iter().any(|&t| f(t) && t.available());
        let (avx2, avx512) = (runs(runs_avx2), runs(runs_avx512bw));
        if !avx2 {
            eprintln!("skipped: no available tier runs AVX2");
        }
        if !avx512 {
            eprintln!("skipped: no available tier runs AVX-512");
        }
        for seed in 0..300 {
            if avx2 {
                // SAFETY: an available tier runs AVX2.
                unsafe { check_avx2(seed) };
            }
            if avx512 {
                // SAFETY: an available tier runs AVX-512 F and BW.
                unsafe { check_avx512(seed) };
            }
        }
    }
}

/// [`KeyReg`](super::KeyReg)'s methods stated on arrays of keys, and the
/// test that holds the AVX-512 impls to them lane by lane.
#[cfg(target_arch = "x86_64")]
mod key_lanes {
    use crate::simd::{KeyReg, Keys32x16, Keys64x8};
    use crate::tier::runs_avx512;
    use crate::Tier;
    use tessera_testkit::rng::Rng;

    /// The register's lanes as u64.
    ///
    /// # Safety
    /// The CPU runs `R`'s instructions.
    #[inline(always)]
    unsafe fn lanes<R: KeyReg>(v: R) -> Vec<u64>
    where
        R::K: Into<u64>,
    {
        // SAFETY: the caller's feature contract.
        (0..R::LANES).map(|i| unsafe { v.lane(i) }.into()).collect()
    }

    /// # Safety
    /// The CPU runs `R`'s instructions.
    #[inline(always)]
    unsafe fn check<R: KeyReg>(seed: u64, from: impl Fn(u64) -> R::K)
    where
        R::K: Into<u64>,
    {
        let l = R::LANES;
        let mut rng = Rng::new(seed);
        // Few distinct values often (equal lanes), the largest key too.
        let mut draw = || match rng.below(4) {
            0 => rng.below(4),
            1 => u64::MAX,
            _ => rng.next_u64(),
        };
        let a: Vec<R::K> = (0..l).map(|_| from(draw())).collect();
        let b: Vec<R::K> = (0..l).map(|_| from(draw())).collect();
        let pivot = from(draw());
        let av: Vec<u64> = a.iter().map(|&x| x.into()).collect();
        let bv: Vec<u64> = b.iter().map(|&x| x.into()).collect();
        let pv: u64 = pivot.into();
        let max: u64 = R::MAX.into();
        // SAFETY: the caller's feature contract; every load
        // and store addresses the vectors here, within their lengths.
        unsafe {
            let (x, y) = (R::load(a.as_ptr()), R::load(b.as_ptr()));
            assert_eq!(lanes(x), av);
            assert_eq!(lanes(R::set1(pivot)), vec![pv; l]);
            let mins: Vec<u64> = av.iter().zip(&bv).map(|(p, q)| *p.min(q)).collect();
            let maxs: Vec<u64> = av.iter().zip(&bv).map(|(p, q)| *p.max(q)).collect();
            assert_eq!(lanes(R::min(x, y)), mins);
            assert_eq!(lanes(R::max(x, y)), maxs);
            let mut j = 1;
            while j < l {
                let want: Vec<u64> = (0..l).map(|i| av[i ^ j]).collect();
                assert_eq!(lanes(x.swap_xor(j)), want, "swap_xor {j}");
                j *= 2;
            }
            let rev: Vec<u64> = av.iter().rev().copied().collect();
            assert_eq!(lanes(x.reverse()), rev);
            let m = (draw() as u32) & ((1u64 << l) - 1) as u32;
            let want: Vec<u64> = (0..l)
                .map(|i| if m >> i & 1 == 1 { bv[i] } else { av[i] })
                .collect();
            assert_eq!(lanes(R::blend(m, x, y)), want);
            for n in 0..=l {
                let want: Vec<u64> = (0..l).map(|i| if i < n { av[i] } else { max }).collect();
                assert_eq!(lanes(R::load_first(a.as_ptr(), n)), want, "load_first {n}");
                // Stores touch the first n keys alone.
                let mut out = b.clone();
                x.store_first(out.as_mut_ptr(), n);
                let want: Vec<u64> = (0..l).map(|i| if i < n { av[i] } else { bv[i] }).collect();
                assert_eq!(out.iter().map(|&k| k.into()).collect::<Vec<u64>>(), want);
                // The split: below the pivot in lane order from the front,
                // the rest in lane order ending at the back; nothing else
                // written (a buffer of 3·LANES filled with a marker).
                let below: Vec<u64> = av[..n].iter().copied().filter(|&k| k < pv).collect();
                let above: Vec<u64> = av[..n].iter().copied().filter(|&k| k >= pv).collect();
                let mark = from(7);
                let mut buf = vec![mark; 3 * l];
                let c = x.split_store(
                    R::set1(pivot),
                    n,
                    buf.as_mut_ptr().add(l),
                    buf.as_mut_ptr().add(2 * l),
                );
                assert_eq!(c, above.len(), "split count {n}");
                let got: Vec<u64> = buf.iter().map(|&k| k.into()).collect();
                let mut want = vec![7u64; 3 * l];
                want[l..l + below.len()].copy_from_slice(&below);
                want[2 * l - above.len()..2 * l].copy_from_slice(&above);
                assert_eq!(got, want, "split {n}");
            }
        }
    }

    /// # Safety
    /// The CPU runs AVX-512 F with AVX2 and POPCNT.
    #[target_feature(enable = "avx512f,avx2,popcnt")]
    unsafe fn check_avx512(seed: u64) {
        // SAFETY: this function enables the features, which its caller runs.
        unsafe {
            check::<Keys32x16>(seed, |z| z as u32);
            check::<Keys64x8>(seed, |z| z);
        }
    }

    #[test]
    fn every_key_register_computes_the_models_lanes() {
        if !Tier::ALL.iter().any(|&t| runs_avx512(t) && t.available()) {
            eprintln!("skipped: no available tier runs AVX-512");
            return;
        }
        for seed in 0..300 {
            // SAFETY: an available tier runs AVX-512 F, AVX2 and POPCNT.
            unsafe { check_avx512(seed) };
        }
    }
}
