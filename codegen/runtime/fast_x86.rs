//! Hand-vectorised kernels that a tier declares in `spec/tiers.toml`
//! (`fast_casts`) in place of the generic loop for one cast's contiguous
//! variant. Each gives exactly the bits of the generic kernel (NaNs included:
//! they are canonicalised as the generic codec does), which the differential
//! tests check; the tails run the generic code.

use super::loops::Args;
use super::minifloat::{decode, encode, MiniFloat};
use core::arch::x86_64::*;

/// f16 → f32 with F16C (`vcvtph2ps`), NaNs made the quiet NaN of their sign;
/// the saturating mode turns infinities into ±f32::MAX, as the generic cast does.
///
/// # Safety
/// As `LoopFn` (contiguous variant), on a CPU with AVX2 and F16C.
#[target_feature(enable = "avx2,f16c")]
pub unsafe fn f16c_widen<P: MiniFloat, const SAT: bool>(x: &Args) {
    let n = x.n;
    let src = x.src[0] as *const u16;
    let dst = x.dst as *mut f32;
    let sign_bit = _mm256_castsi256_ps(_mm256_set1_epi32(i32::MIN));
    let quiet = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc0_0000));
    let max = _mm256_set1_ps(f32::MAX);
    let neg_max = _mm256_set1_ps(f32::MIN);
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: elements i..i+8 lie inside both operands (i + 8 <= n).
        unsafe {
            let h = _mm_loadu_si128(src.add(i) as *const __m128i);
            let mut f = _mm256_cvtph_ps(h);
            if SAT {
                // max/min return their second operand when either is NaN.
                f = _mm256_min_ps(max, _mm256_max_ps(neg_max, f));
            }
            let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(f, f);
            let canon = _mm256_or_ps(_mm256_and_ps(f, sign_bit), quiet);
            _mm256_storeu_ps(dst.add(i), _mm256_blendv_ps(f, canon, nan));
        }
        i += 8;
    }
    while i < n {
        // SAFETY: i < n.
        unsafe {
            let v = decode::<P>(src.add(i).read_unaligned() as u32);
            let v = if SAT && v.is_infinite() {
                f32::MAX.copysign(v)
            } else {
                v
            };
            dst.add(i).write_unaligned(v);
        }
        i += 1;
    }
}

/// f32 → f16 with F16C (`vcvtps2ph`, round to nearest even), NaNs made the
/// quiet NaN of their sign; the saturating mode clamps to ±65504 first (which
/// keeps NaN: the clamp's NaN operand is the value).
///
/// # Safety
/// As `LoopFn` (contiguous variant), on a CPU with AVX2 and F16C.
#[target_feature(enable = "avx2,f16c")]
pub unsafe fn f16c_narrow<P: MiniFloat, const SAT: bool>(x: &Args) {
    let n = x.n;
    let src = x.src[0] as *const f32;
    let dst = x.dst as *mut u16;
    let max = _mm256_set1_ps(65504.0);
    let neg_max = _mm256_set1_ps(-65504.0);
    let sign16 = _mm256_set1_epi32(0x8000);
    let quiet16 = _mm_set1_epi16(0x7e00);
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: elements i..i+8 lie inside both operands (i + 8 <= n).
        unsafe {
            let mut f = _mm256_loadu_ps(src.add(i));
            if SAT {
                // max/min return their second operand when either is NaN.
                f = _mm256_min_ps(max, _mm256_max_ps(neg_max, f));
            }
            let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f);
            let nan32 = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(f, f));
            let nan16 = _mm_packs_epi32(
                _mm256_castsi256_si128(nan32),
                _mm256_extracti128_si256::<1>(nan32),
            );
            let s32 = _mm256_and_si256(_mm256_srli_epi32::<16>(_mm256_castps_si256(f)), sign16);
            let s16 = _mm_packus_epi32(
                _mm256_castsi256_si128(s32),
                _mm256_extracti128_si256::<1>(s32),
            );
            let canon = _mm_or_si128(s16, quiet16);
            _mm_storeu_si128(dst.add(i) as *mut __m128i, _mm_blendv_epi8(h, canon, nan16));
        }
        i += 8;
    }
    while i < n {
        // SAFETY: i < n.
        unsafe {
            let v = src.add(i).read_unaligned();
            dst.add(i).write_unaligned(encode::<P, SAT>(v) as u16);
        }
        i += 1;
    }
}
