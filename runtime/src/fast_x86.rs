//! Hand-vectorised kernels that a tier declares in `spec/tiers.toml`
//! (`fast_casts`) in place of the generic loop for one cast's contiguous
//! variant. Each gives exactly the bits of the generic kernel (NaNs included:
//! they are canonicalised as the generic codec does), which the differential
//! tests check; the tails run the generic code.

use super::cast::CastDst;
use super::codec::Native;
use super::loops::{prefetch_ahead, Args, FAR_BYTES};
use super::minifloat::{decode, encode, MiniFloat};
use core::arch::x86_64::*;

/// Eight binary16 codes widened to f32 with F16C (`vcvtph2ps`), NaNs made
/// the quiet NaN of their sign; the saturating mode turns infinities into
/// ±f32::MAX, as the generic cast does.
#[inline]
#[target_feature(enable = "avx2,f16c")]
fn widen8<const SAT: bool>(h: __m128i) -> __m256 {
    let mut f = _mm256_cvtph_ps(h);
    if SAT {
        // max/min return their second operand when either is NaN.
        f = _mm256_min_ps(
            _mm256_set1_ps(f32::MAX),
            _mm256_max_ps(_mm256_set1_ps(f32::MIN), f),
        );
    }
    let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(f, f);
    let sign_bit = _mm256_castsi256_ps(_mm256_set1_epi32(i32::MIN));
    let quiet = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc0_0000));
    let canon = _mm256_or_ps(_mm256_and_ps(f, sign_bit), quiet);
    _mm256_blendv_ps(f, canon, nan)
}

/// Eight f32 values narrowed to binary16 codes with F16C (`vcvtps2ph`, round
/// to nearest even), NaNs made the quiet NaN of their sign; the saturating
/// mode clamps to ±65504 first (which keeps NaN: the clamp's NaN operand is
/// the value).
#[inline]
#[target_feature(enable = "avx2,f16c")]
fn narrow8<const SAT: bool>(mut f: __m256) -> __m128i {
    if SAT {
        // max/min return their second operand when either is NaN.
        f = _mm256_min_ps(
            _mm256_set1_ps(65504.0),
            _mm256_max_ps(_mm256_set1_ps(-65504.0), f),
        );
    }
    let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f);
    let nan32 = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(f, f));
    let nan16 = _mm_packs_epi32(
        _mm256_castsi256_si128(nan32),
        _mm256_extracti128_si256::<1>(nan32),
    );
    let s32 = _mm256_and_si256(
        _mm256_srli_epi32::<16>(_mm256_castps_si256(f)),
        _mm256_set1_epi32(0x8000),
    );
    let s16 = _mm_packus_epi32(
        _mm256_castsi256_si128(s32),
        _mm256_extracti128_si256::<1>(s32),
    );
    let canon = _mm_or_si128(s16, _mm_set1_epi16(0x7e00));
    _mm_blendv_epi8(h, canon, nan16)
}

/// One binary16 code widened as [`widen8`] does, by the generic codec.
fn widen1<P: MiniFloat, const SAT: bool>(code: u16) -> f32 {
    let v = decode::<P>(code as u32);
    if SAT && v.is_infinite() {
        f32::MAX.copysign(v)
    } else {
        v
    }
}

/// f16 → f32 ([`widen8`] over runs of eight, the generic codec for the
/// rest). Runs of 1 MiB of source and more ask for it ahead
/// (`loops::prefetch_ahead`).
///
/// # Safety
/// The `LoopFn` contract for the contiguous variant: `x.src[0]` holds `x.n`
/// readable 16-bit codes and `x.dst` room for `x.n` f32 values, contiguous, not
/// overlapping the source; the CPU runs AVX2 and F16C.
#[target_feature(enable = "avx2,f16c")]
pub unsafe fn f16c_widen<P: MiniFloat, const SAT: bool>(x: &Args) {
    let n = x.n;
    let src = x.src[0] as *const u16;
    let dst = x.dst as *mut f32;
    let far = 2 * n >= FAR_BYTES;
    let mut i = 0;
    while i + 8 <= n {
        if far && i % 32 == 0 {
            prefetch_ahead(src.wrapping_add(i) as *const u8, 64);
        }
        // SAFETY: elements i..i+8 lie inside both operands (i + 8 <= n).
        unsafe {
            let h = _mm_loadu_si128(src.add(i) as *const __m128i);
            _mm256_storeu_ps(dst.add(i), widen8::<SAT>(h));
        }
        i += 8;
    }
    while i < n {
        // SAFETY: i < n: element i of the source and of the destination,
        // which hold n each (this function's contract).
        unsafe {
            dst.add(i)
                .write_unaligned(widen1::<P, SAT>(src.add(i).read_unaligned()))
        };
        i += 1;
    }
}

/// Complex binary16 (f16c) → f32: the real part of each element widened as
/// [`f16c_widen`] widens an f16 (the generic cast's path, through c64, gives
/// that real part's bits; the imaginary part is dropped). Eight elements a
/// step: their real parts (the low halves of 32-bit pairs) packed into one
/// register of eight codes.
///
/// # Safety
/// The `LoopFn` contract for the contiguous variant: `x.src[0]` holds `x.n`
/// readable pairs of 16-bit codes and `x.dst` room for `x.n` f32 values,
/// contiguous, not overlapping the source; the CPU runs AVX2 and F16C.
#[target_feature(enable = "avx2,f16c")]
pub unsafe fn f16c_widen_real<P: MiniFloat, const SAT: bool>(x: &Args) {
    let n = x.n;
    let src = x.src[0] as *const u16;
    let dst = x.dst as *mut f32;
    let low = _mm256_set1_epi32(0xffff);
    let far = 4 * n >= FAR_BYTES;
    let mut i = 0;
    while i + 8 <= n {
        if far && i % 16 == 0 {
            prefetch_ahead(src.wrapping_add(2 * i) as *const u8, 64);
        }
        // SAFETY: elements i..i+8 (pairs of codes) lie inside both operands
        // (i + 8 <= n).
        unsafe {
            let v = _mm256_loadu_si256(src.add(2 * i) as *const __m256i);
            let re = _mm256_and_si256(v, low);
            // Per 128-bit half: its four real parts twice; the two halves'
            // first copies then make the low 128 bits, in order.
            let packed = _mm256_packus_epi32(re, re);
            let h = _mm256_castsi256_si128(_mm256_permute4x64_epi64::<0b1000>(packed));
            _mm256_storeu_ps(dst.add(i), widen8::<SAT>(h));
        }
        i += 8;
    }
    while i < n {
        // SAFETY: i < n: element i of the source (its real part first) and
        // of the destination, which hold n each (this function's contract).
        unsafe {
            dst.add(i)
                .write_unaligned(widen1::<P, SAT>(src.add(2 * i).read_unaligned()))
        };
        i += 1;
    }
}

/// f32 → f16 ([`narrow8`] over runs of eight, the generic codec for the
/// rest). Runs of 1 MiB of source and more ask for it ahead
/// (`loops::prefetch_ahead`).
///
/// # Safety
/// The `LoopFn` contract for the contiguous variant: `x.src[0]` holds `x.n`
/// readable f32 values and `x.dst` room for `x.n` 16-bit codes, contiguous, not
/// overlapping the source; the CPU runs AVX2 and F16C.
#[target_feature(enable = "avx2,f16c")]
pub unsafe fn f16c_narrow<P: MiniFloat, const SAT: bool>(x: &Args) {
    let n = x.n;
    let src = x.src[0] as *const f32;
    let dst = x.dst as *mut u16;
    let far = 4 * n >= FAR_BYTES;
    let mut i = 0;
    while i + 8 <= n {
        if far && i % 16 == 0 {
            prefetch_ahead(src.wrapping_add(i) as *const u8, 64);
        }
        // SAFETY: elements i..i+8 lie inside both operands (i + 8 <= n).
        unsafe {
            let h = narrow8::<SAT>(_mm256_loadu_ps(src.add(i)));
            _mm_storeu_si128(dst.add(i) as *mut __m128i, h);
        }
        i += 8;
    }
    while i < n {
        // SAFETY: i < n: element i of the source and of the destination,
        // which hold n each (this function's contract).
        unsafe {
            let v = src.add(i).read_unaligned();
            dst.add(i).write_unaligned(encode::<P, SAT>(v) as u16);
        }
        i += 1;
    }
}

/// f32 → complex binary16 (f16c): each value narrowed as [`f16c_narrow`]
/// narrows it, as the real part, with a +0 imaginary part (the generic
/// cast's path, through c64: x + 0i, each part rounded; +0 is exact). Eight
/// codes a step, each widened to the low half of a 32-bit pair whose high
/// half (the imaginary part) is zero.
///
/// # Safety
/// The `LoopFn` contract for the contiguous variant: `x.src[0]` holds `x.n`
/// readable f32 values and `x.dst` room for `x.n` pairs of 16-bit codes,
/// contiguous, not overlapping the source; the CPU runs AVX2 and F16C.
#[target_feature(enable = "avx2,f16c")]
pub unsafe fn f16c_narrow_complex<P: MiniFloat, const SAT: bool>(x: &Args) {
    let n = x.n;
    let src = x.src[0] as *const f32;
    let dst = x.dst as *mut u16;
    let far = 4 * n >= FAR_BYTES;
    let mut i = 0;
    while i + 8 <= n {
        if far && i % 16 == 0 {
            prefetch_ahead(src.wrapping_add(i) as *const u8, 64);
        }
        // SAFETY: elements i..i+8 lie inside both operands (i + 8 <= n;
        // the destination's are pairs of codes).
        unsafe {
            let h = narrow8::<SAT>(_mm256_loadu_ps(src.add(i)));
            _mm256_storeu_si256(dst.add(2 * i) as *mut __m256i, _mm256_cvtepu16_epi32(h));
        }
        i += 8;
    }
    while i < n {
        // SAFETY: i < n: element i of the source and of the destination
        // (two codes), which hold n each (this function's contract).
        unsafe {
            let v = src.add(i).read_unaligned();
            dst.add(2 * i).write_unaligned(encode::<P, SAT>(v) as u16);
            dst.add(2 * i + 1).write_unaligned(0);
        }
        i += 1;
    }
}

/// f32 → i64 or u64 (truncate toward zero, saturate, NaN → 0, both modes) with
/// AVX2, which has no such conversion: each f32 widens exactly to f64, is
/// truncated, and a value of magnitude below 2^51 becomes its integer by adding
/// 1.5·2^52 (the sum's low significand bits are the integer, two's complement)
/// and subtracting the adder's bits (for u64, after negative values and NaN
/// become 0). Eight values whose every magnitude is below 2^51 take that path; any other group of eight takes the
/// generic conversion, element by element, so every bit is the generic kernel's.
///
/// # Safety
/// The `LoopFn` contract for the contiguous variant: `x.src[0]` holds `x.n`
/// readable f32 values and `x.dst` room for `x.n` 8-byte integers, contiguous, not
/// overlapping the source; the CPU runs AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn f32_to_int64<T, const SAT: bool>(x: &Args)
where
    Native<T>: CastDst<Store = T>,
    T: Copy,
{
    const { assert!(core::mem::size_of::<T>() == 8) };
    let n = x.n;
    let src = x.src[0] as *const f32;
    let dst = x.dst as *mut T;
    let adder = _mm256_set1_pd(6755399441055744.0); // 1.5 · 2^52
    let limit = _mm256_set1_pd(2251799813685248.0); // 2^51
    let abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
    // u64: negative values and NaN become 0 (`max` returns its second operand
    // when either is NaN), so they take the fast path too.
    let unsigned = as_bits(<Native<T> as CastDst>::from_f32::<SAT>(-1.0)) == 0;
    let zero = _mm256_setzero_pd();
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: elements i..i+8 lie inside both operands (i + 8 <= n).
        unsafe {
            let v = _mm256_loadu_ps(src.add(i));
            let halves = [
                _mm256_cvtps_pd(_mm256_castps256_ps128(v)),
                _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)),
            ];
            let mut ok = 0xff;
            let mut out = [_mm256_setzero_si256(); 2];
            for (h, o) in halves.iter().zip(out.iter_mut()) {
                let mut t = _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(*h);
                if unsigned {
                    t = _mm256_max_pd(t, zero);
                }
                let small = _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_and_pd(t, abs_mask), limit);
                ok &= _mm256_movemask_pd(small) | 0xf0;
                *o = _mm256_sub_epi64(
                    _mm256_castpd_si256(_mm256_add_pd(t, adder)),
                    _mm256_castpd_si256(adder),
                );
            }
            if ok == 0xff {
                _mm256_storeu_si256(dst.add(i) as *mut __m256i, out[0]);
                _mm256_storeu_si256(dst.add(i + 4) as *mut __m256i, out[1]);
            } else {
                for j in i..i + 8 {
                    let v = src.add(j).read_unaligned();
                    dst.add(j)
                        .write_unaligned(<Native<T> as CastDst>::from_f32::<SAT>(v));
                }
            }
        }
        i += 8;
    }
    while i < n {
        // SAFETY: i < n: element i of the source and of the destination,
        // which hold n each (this function's contract).
        unsafe {
            let v = src.add(i).read_unaligned();
            dst.add(i)
                .write_unaligned(<Native<T> as CastDst>::from_f32::<SAT>(v));
        }
        i += 1;
    }
}

/// The bits of an 8-byte integer.
#[inline(always)]
fn as_bits<T: Copy>(v: T) -> u64 {
    // SAFETY: `f32_to_int64` asserts that T is 8 bytes; every bit pattern of a
    // u64 is valid.
    unsafe { core::mem::transmute_copy::<T, u64>(&v) }
}
