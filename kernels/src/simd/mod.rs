//! The one home of the engines' hand-written vector code: a register trait
//! per kind of lane, implemented once per instruction set, and nothing else.
//!
//! - [`RealReg`]: a register of float lanes (f32 or f64), the operations of
//!   the GEMM microkernels (`contract/micro.rs`) and of the lane order of
//!   sums and products (`reduce/lanes.rs`);
//! - [`ComplexReg`]: a register of complex points, real and imaginary parts
//!   side by side, the operations of the FFT's butterflies (`fft/simd.rs`);
//! - [`ByteReg`]: a register of byte lanes, the operations of the byte and
//!   text kernels (`bytes/`);
//! - [`KeyReg`]: a register of unsigned sort keys (u32 or u64), the
//!   operations of the vector quicksort (`order/quicksort.rs`).
//!
//! `avx2.rs` implements the first three for the 256-bit registers (AVX2 and
//! FMA), `avx512.rs` all four for the 512-bit ones (AVX-512 F, with the AVX2
//! features besides; BW for the byte lanes; AVX2 has no compress, so
//! [`KeyReg`] is AVX-512 only); the test-only `scalar.rs` is an array of
//! lanes that states each method's meaning in plain Rust and checks the
//! vector impls lane by lane.
//!
//! Nothing here asks the CPU what it runs: detection lives in
//! [`crate::tier`] alone. A kernel written over these traits is a generic
//! `#[inline(always)]` body; the engine instantiates it inside a
//! `#[target_feature(enable = …)]` function per instruction set and calls that
//! function only for a tier that runs those features on this CPU
//! ([`crate::tier::runs_avx2`], [`crate::tier::runs_avx512`] and
//! [`Tier::available`](crate::Tier::available)). Every method is
//! `#[inline(always)]`, so it is compiled with the features of the kernel it
//! is inlined into.
//!
//! Each method is one fixed sequence of instructions: a lane computes exactly
//! the IEEE operation the method names (a fused multiply-add only where the
//! name says so), so a kernel's bits are fixed by the order in which it calls
//! them.

#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(test)]
mod scalar;

#[cfg(target_arch = "x86_64")]
pub(crate) use avx2::{Cf32x4, Cf64x2};
#[cfg(target_arch = "x86_64")]
pub(crate) use avx512::{Cf32x8, Cf64x4, Keys32x16, Keys64x8};

use num_complex::Complex;

/// A hint that the line holding `p` will soon be read (SSE's prefetch to
/// every cache level, part of every x86-64 CPU; nothing elsewhere). It reads
/// no memory and faults on no address, so any pointer value may be given.
#[inline(always)]
pub(crate) fn prefetch_read(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE runs on every x86-64 CPU, and a prefetch accesses no
        // memory (no fault at any address).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A vector register of [`LANES`](RealReg::LANES) lanes of a float `T`
/// (`f32` or `f64`), lane 0 at the lowest address when loaded or stored.
///
/// # Safety
/// This contract covers every method of the trait (all are `unsafe fn`), in
/// every impl:
/// - **CPU features.** The register's instruction set must be running: AVX2
///   and FMA for the 256-bit registers (`__m256`, `__m256d`), AVX-512 F with
///   AVX2 and FMA for the 512-bit ones (`__m512`, `__m512d`). The caller
///   guarantees it by calling the method from a function compiled with
///   `#[target_feature(enable = …)]` of those features, which the tier model
///   calls only on a CPU that has them ([`crate::tier`]).
/// - **Memory.** [`load`](RealReg::load) reads and [`store`](RealReg::store)
///   writes the `LANES` consecutive elements from `p`; [`splat`](RealReg::splat)
///   reads the one element at `p`; [`load_m`](RealReg::load_m) reads and
///   [`store_m`](RealReg::store_m) writes only the elements `p + i` of the
///   lanes `i` set in the mask, and those must be readable (writable). No
///   alignment is required beyond the element's. The other methods touch no
///   memory.
pub(crate) trait RealReg: Copy {
    /// The lane type.
    type T: Copy;
    /// Lanes per register.
    const LANES: usize;
    /// A set of lanes.
    type Mask: Copy;
    /// Whether a [`Mask`](RealReg::Mask) is a mask register, so that masked
    /// loads and arithmetic cost what the plain ones do (AVX-512), rather
    /// than a vector of lane masks (AVX2).
    const MASK_REGISTERS: bool;

    /// Every lane +0.
    unsafe fn zero() -> Self;
    /// `v` in every lane.
    unsafe fn set1(v: Self::T) -> Self;
    /// The element at `p` in every lane (a broadcast from memory).
    unsafe fn splat(p: *const Self::T) -> Self;
    /// The `LANES` elements from `p`.
    unsafe fn load(p: *const Self::T) -> Self;
    /// The lanes to the `LANES` elements from `p`.
    unsafe fn store(self, p: *mut Self::T);
    /// `a + b` in each lane, one rounding.
    unsafe fn add(a: Self, b: Self) -> Self;
    /// `a − b` in each lane, one rounding.
    unsafe fn sub(a: Self, b: Self) -> Self;
    /// `a · b` in each lane, one rounding.
    unsafe fn mul(a: Self, b: Self) -> Self;
    /// `a·b + c` in each lane, one rounding.
    unsafe fn fmadd(a: Self, b: Self, c: Self) -> Self;
    /// `−a·b + c` in each lane, one rounding (the bits of `fmadd(−a, b, c)`).
    unsafe fn fnmadd(a: Self, b: Self, c: Self) -> Self;
    /// `a·b − c` in each lane, one rounding (the bits of `fmadd(a, b, −c)`).
    unsafe fn fmsub(a: Self, b: Self, c: Self) -> Self;
    /// `a / b` in each lane, one rounding.
    unsafe fn div(a: Self, b: Self) -> Self;
    /// `√a` in each lane, one rounding.
    unsafe fn sqrt(a: Self) -> Self;
    /// `−a` in each lane: the sign bit flipped (NaNs included).
    unsafe fn neg(a: Self) -> Self;
    /// `|a|` in each lane: the sign bit cleared (NaNs included).
    unsafe fn abs(a: Self) -> Self;
    /// IEEE 754-2019 minimum in each lane, as the `min` kernels compute it:
    /// the smaller value; for equal values their bits or-ed (−0 for zeros
    /// of either sign); `a + b` where either is NaN.
    unsafe fn min(a: Self, b: Self) -> Self;
    /// IEEE 754-2019 maximum, as [`min`](RealReg::min): equal values' bits
    /// and-ed (+0 for zeros of either sign); `a + b` where either is NaN.
    unsafe fn max(a: Self, b: Self) -> Self;
    /// The mask of the first `n` lanes (all of them where `n ≥ LANES`).
    unsafe fn first(n: usize) -> Self::Mask;
    /// The mask of the lanes from `n` on: those [`first`](RealReg::first)
    /// leaves out (none where `n ≥ LANES`).
    unsafe fn from_lane(n: usize) -> Self::Mask;
    /// The masked lanes' elements from `p`, +0 in the other lanes (whose
    /// addresses are not read).
    unsafe fn load_m(p: *const Self::T, m: Self::Mask) -> Self;
    /// The masked lanes to their elements from `p`; no other address is
    /// written.
    unsafe fn store_m(self, p: *mut Self::T, m: Self::Mask);
    /// `a · b` in the masked lanes (one rounding), `a` unchanged in the
    /// others.
    unsafe fn mul_m(a: Self, b: Self, m: Self::Mask) -> Self;
    /// The lanes added by halving: lane `i` takes lane `i + LANES/2` for
    /// `i < LANES/2`, then `i + LANES/4`, …, then lane 0 takes lane 1 (each
    /// step `lane i + lane j`, the lower lane on the left); lane 0's value.
    unsafe fn reduce_add(self) -> Self::T;
    /// The lanes multiplied in [`reduce_add`](RealReg::reduce_add)'s order.
    unsafe fn reduce_mul(self) -> Self::T;
    /// The upper register of the pair (`below`, `self`) with every lane of
    /// the pair moved up by `d` (1 ≤ `d` ≤ `LANES`): lane `i` takes `self`'s
    /// lane `i − d` where `i ≥ d`, else `below`'s lane `LANES + i − d`. Data
    /// movement only.
    unsafe fn shift_up_from(self, below: Self, d: usize) -> Self;
    /// The last lane's value in every lane.
    unsafe fn splat_last(self) -> Self;
}

/// A vector register of [`L`](ComplexReg::L) complex points of `T`, in their
/// memory order, each point's real and imaginary parts side by side (as
/// `Complex<T>` lies in memory).
///
/// # Safety
/// This contract covers every method of the trait (all are `unsafe fn`), in
/// every impl:
/// - **CPU features.** As [`RealReg`]'s: AVX2 and FMA for the 256-bit
///   registers ([`Cf32x4`], [`Cf64x2`]); AVX-512 F and DQ with AVX2 and FMA
///   for the 512-bit ones ([`Cf32x8`], [`Cf64x4`]), running because the
///   caller is a function compiled with those features, which the tier model
///   calls only on a CPU that has them.
/// - **Memory.** [`load`](ComplexReg::load) reads and
///   [`store`](ComplexReg::store) writes the `L` consecutive points from `p`;
///   [`store4`](ComplexReg::store4) writes the four points from
///   `p + row·i` for each `i < L`. The other methods touch no memory.
pub(crate) trait ComplexReg: Copy {
    /// The type of a point's parts.
    type T: crate::fft::FftFloat;
    /// Points per register.
    const L: usize;
    /// The `L` points from `p`.
    unsafe fn load(p: *const Complex<Self::T>) -> Self;
    /// The points to the `L` points from `p`.
    unsafe fn store(self, p: *mut Complex<Self::T>);
    /// `self + o`, part by part.
    unsafe fn add(self, o: Self) -> Self;
    /// `self − o`, part by part.
    unsafe fn sub(self, o: Self) -> Self;
    /// `−i·z` (forward) or `+i·z` (inverse): the parts swapped and one of
    /// them negated, exactly.
    unsafe fn rot(self, inverse: bool) -> Self;
    /// `w.re` and `w.im` in every part of every point.
    unsafe fn splat(w: Complex<Self::T>) -> (Self, Self);
    /// The real parts and the imaginary parts of the `L` points of `w`, each
    /// in both parts of its point.
    unsafe fn dup(w: Self) -> (Self, Self);
    /// `self·w` from `w`'s parts as [`splat`](ComplexReg::splat) or
    /// [`dup`](ComplexReg::dup) give them: `re·w.re − im·w.im` and
    /// `im·w.re + re·w.im`, each the two products rounded, then their sum
    /// (the scalar complex product's roundings).
    unsafe fn cmul(self, wr: Self, wi: Self) -> Self;
    /// Both parts of every point times the real `c`.
    unsafe fn mulr(self, c: Self::T) -> Self;
    /// `p[row·i + k] = b[k][i]` for `i < L`, `k < 4`: point `i` of the four
    /// registers, as a row of four points, the rows `row` points apart
    /// (`row ≥ 4`, a multiple of 4).
    unsafe fn store4(b: [Self; 4], p: *mut Complex<Self::T>, row: usize);
    /// The `L × L` transpose of points: afterwards `b[i]` holds point `i`
    /// of each register `b` held before, in order. `b` holds exactly `L`
    /// registers (a move of bits: no arithmetic).
    unsafe fn transpose(b: &mut [Self]);
}

/// A vector register of [`LANES`](ByteReg::LANES) byte lanes (32 or 64),
/// lane 0 at the lowest address when loaded or stored. A set of lanes is a
/// `u64` with bit `i` for lane `i`.
///
/// # Safety
/// This contract covers every method of the trait (all are `unsafe fn`), in
/// every impl:
/// - **CPU features.** AVX2 for `__m256i`; AVX-512 F and BW with AVX2 for
///   `__m512i`, running because the caller is a function compiled with those
///   features, which the tier model calls only on a CPU that has them.
/// - **Memory.** [`load`](ByteReg::load) reads and [`store`](ByteReg::store)
///   writes the `LANES` bytes from `p` (no alignment needed); the other
///   methods touch no memory.
pub(crate) trait ByteReg: Copy {
    /// Lanes per register.
    const LANES: usize;
    /// `v` in every lane.
    unsafe fn set1(v: u8) -> Self;
    /// The 16 bytes of `t` in every 128-bit block (the table of
    /// [`lookup16`](ByteReg::lookup16)).
    unsafe fn table16(t: &[u8; 16]) -> Self;
    /// The `LANES` bytes from `p`.
    unsafe fn load(p: *const u8) -> Self;
    /// The lanes to the `LANES` bytes from `p`.
    unsafe fn store(self, p: *mut u8);
    /// `a & b`.
    unsafe fn and(a: Self, b: Self) -> Self;
    /// `a | b`.
    unsafe fn or(a: Self, b: Self) -> Self;
    /// `a ^ b`.
    unsafe fn xor(a: Self, b: Self) -> Self;
    /// `a + b` per lane, wrapping.
    unsafe fn add(a: Self, b: Self) -> Self;
    /// `a − b` per lane, saturating at 0 (unsigned).
    unsafe fn subs(a: Self, b: Self) -> Self;
    /// 0xff in the lanes where `a == b`, 0 in the others.
    unsafe fn eq(a: Self, b: Self) -> Self;
    /// The unsigned minimum per lane.
    unsafe fn min(a: Self, b: Self) -> Self;
    /// The lanes where `a == b`.
    unsafe fn eq_bits(a: Self, b: Self) -> u64;
    /// The lanes whose top bit is set.
    unsafe fn high_bits(a: Self) -> u64;
    /// The lanes that are not zero.
    unsafe fn nonzero_bits(a: Self) -> u64;
    /// Whether any lane is not zero.
    unsafe fn any(a: Self) -> bool;
    /// `a >> 4` per lane (the high nibbles, 0..=15).
    unsafe fn high_nibbles(a: Self) -> Self;
    /// `a & 15` per lane.
    unsafe fn low_nibbles(a: Self) -> Self;
    /// Lane `i` is byte `idx[i]` (in 0..=15) of lane `i`'s own 128-bit
    /// block of `t`: a table lookup where `t` is a
    /// [`table16`](ByteReg::table16), a shuffle within blocks otherwise.
    unsafe fn lookup16(t: Self, idx: Self) -> Self;
    /// The lanes shifted up by one: lane `i` is `cur[i − 1]`, lane 0 is
    /// `prev`'s last lane (the byte before `cur` in a stream).
    unsafe fn prev1(cur: Self, prev: Self) -> Self;
    /// As [`prev1`](ByteReg::prev1), shifted by two.
    unsafe fn prev2(cur: Self, prev: Self) -> Self;
    /// As [`prev1`](ByteReg::prev1), shifted by three.
    unsafe fn prev3(cur: Self, prev: Self) -> Self;
    /// The sum of the lanes as integers.
    unsafe fn sum(a: Self) -> u64;
    /// The lanes of `a` and `b` interleaved, `a[0], b[0], a[1], b[1], …`:
    /// the first `LANES` of them and the last `LANES`.
    unsafe fn zip(a: Self, b: Self) -> (Self, Self);
    /// For `2·LANES` nibbles `x` (the lanes of `a`, then of `b`, each in
    /// 0..=15), the bytes `x[2j] << 4 | x[2j + 1]`.
    unsafe fn pack_nibble_pairs(a: Self, b: Self) -> Self;
    /// `v` in every group of four lanes (little-endian: lane `4j` is its
    /// low byte).
    unsafe fn set1_u32(v: u32) -> Self;
    /// In 16-bit lanes (lane pairs, little-endian): the high half of the
    /// unsigned product `a·b`.
    unsafe fn mulhi_u16(a: Self, b: Self) -> Self;
    /// In 16-bit lanes: the low half of the product `a·b`.
    unsafe fn mullo_u16(a: Self, b: Self) -> Self;
    /// In 16-bit lanes: `a[2j]·b[2j] + a[2j+1]·b[2j+1]`, `a`'s bytes
    /// unsigned and `b`'s signed (callers keep the sum within i16).
    unsafe fn maddubs(a: Self, b: Self) -> Self;
    /// In 32-bit lanes: the sum of the products of the two signed 16-bit
    /// lanes of `a` and `b` in it.
    unsafe fn madd16(a: Self, b: Self) -> Self;
    /// The `12·LANES/16` bytes from `p`, twelve to each 128-bit block (in
    /// its first twelve lanes; the last four of each block are zero). Reads
    /// exactly those bytes.
    unsafe fn load12(p: *const u8) -> Self;
    /// The first twelve lanes of each block, in order, to the `12·LANES/16`
    /// bytes from `p`; writes exactly those bytes.
    unsafe fn store12(self, p: *mut u8);
    /// In 32-bit lanes: lane `i` is lane `idx[i]` of `a`, across the whole
    /// register (each index below `LANES / 4`).
    unsafe fn permute_u32(a: Self, idx: Self) -> Self;
    /// In 32-bit lanes: the even lanes of `a`, then the even lanes of `b`,
    /// in order (the low halves of their 64-bit lanes).
    unsafe fn even_u32(a: Self, b: Self) -> Self;
    /// In 64-bit lanes: `a[i] >> n[i]` (logical), 0 where `n[i]` is above 63.
    unsafe fn shr_u64_by(a: Self, n: Self) -> Self;
    /// A hint to bring the cache line holding `p` into the cache; reads
    /// nothing (any address, even one outside every allocation, is allowed).
    unsafe fn prefetch(p: *const u8);
}

/// A vector register of [`LANES`](KeyReg::LANES) unsigned integer keys
/// (`u32` or `u64`), lane 0 at the lowest address when loaded or stored.
/// Sets of lanes are the low `LANES` bits of a `u32` (bit `i`: lane `i`).
///
/// # Safety
/// This contract covers every method of the trait (all are `unsafe fn`), in
/// every impl:
/// - **CPU features.** AVX-512 F with AVX2 runs: the caller is a function
///   compiled with those features, which the tier model calls only on a CPU
///   that has them ([`crate::tier::runs_avx512`]).
/// - **Memory.** [`load`](KeyReg::load) reads the `LANES` consecutive keys
///   from `p`;
///   [`load_first`](KeyReg::load_first) reads and
///   [`store_first`](KeyReg::store_first) writes only the first `n` of them
///   (`n ≤ LANES`), and [`split_store`](KeyReg::split_store) writes exactly
///   the keys it says; those must be readable (writable). No alignment is
///   required beyond the key's. The other methods touch no memory.
pub(crate) trait KeyReg: Copy {
    /// The key type.
    type K: Copy + Ord;
    /// Lanes per register (a power of two).
    const LANES: usize;
    /// The largest key.
    const MAX: Self::K;
    /// `k` in every lane.
    unsafe fn set1(k: Self::K) -> Self;
    /// The `LANES` keys from `p`.
    unsafe fn load(p: *const Self::K) -> Self;
    /// The first `n` keys from `p` in the first `n` lanes, [`MAX`](KeyReg::MAX)
    /// in the others (whose addresses are not read).
    unsafe fn load_first(p: *const Self::K, n: usize) -> Self;
    /// The first `n` lanes to the `n` keys from `p`; no other address is
    /// written.
    unsafe fn store_first(self, p: *mut Self::K, n: usize);
    /// The smaller key per lane.
    unsafe fn min(a: Self, b: Self) -> Self;
    /// The larger key per lane.
    unsafe fn max(a: Self, b: Self) -> Self;
    /// Lane `i` takes lane `i ^ j` (`j` a power of two below `LANES`).
    unsafe fn swap_xor(self, j: usize) -> Self;
    /// The lanes in reverse order.
    unsafe fn reverse(self) -> Self;
    /// Lane `i` from `hi` where bit `i` of `lanes` is set, from `lo`
    /// elsewhere.
    unsafe fn blend(lanes: u32, lo: Self, hi: Self) -> Self;
    /// Split the first `n` lanes (`n ≤ LANES`; the others are dropped) by
    /// `pivot`: those below it, in lane order, to the keys from `lo`; those
    /// at or above it, in lane order, to the keys ending just before
    /// `hi_end`. Returns how many are at or above it (`c`): it writes the
    /// `n − c` keys from `lo` and the `c` keys before `hi_end`, and no other
    /// address.
    unsafe fn split_store(
        self,
        pivot: Self,
        n: usize,
        lo: *mut Self::K,
        hi_end: *mut Self::K,
    ) -> usize;
    /// Lane `i`'s key.
    unsafe fn lane(self, i: usize) -> Self::K;
}
