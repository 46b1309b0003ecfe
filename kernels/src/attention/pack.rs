//! The key block's panel: `nk ≤ 64` keys of `dk` accumulator values,
//! transposed into `dk` rows of 64 (`kt[d·64 + j]`), the layout the score
//! microkernel reads. Tiles of 8 × 8 go through registers (eight loads of
//! eight consecutive dimensions, eight stores of eight consecutive keys), so
//! each cache line of the panel is written whole; a copy moves bits, so the
//! tiers agree trivially.

use super::softmax::{AccFloat, BLOCK};
use crate::Tier;

/// Transpose `nk` rows of `dk` values (row `j` at `src + j·rs`, unit
/// stride along the row) into `kt`.
///
/// # Safety
/// `src + j·rs + d` is readable for `j < nk`, `d < dk`; `kt` holds `dk·64`
/// values; `nk ≤ 64`.
#[inline(always)]
unsafe fn body<T: AccFloat>(src: *const T, rs: isize, nk: usize, dk: usize, kt: &mut [T]) {
    let (jf, df) = (nk / 8 * 8, dk / 8 * 8);
    let mut d0 = 0;
    while d0 < df {
        let mut j0 = 0;
        while j0 < jf {
            let mut t = [[T::PLUS_ZERO; 8]; 8];
            for (j, row) in t.iter_mut().enumerate() {
                // SAFETY: key j0 + j < nk, dimensions d0..d0 + 8 ≤ dk.
                let p = unsafe { src.offset((j0 + j) as isize * rs + d0 as isize) };
                for (d, x) in row.iter_mut().enumerate() {
                    // SAFETY: as above.
                    *x = unsafe { *p.add(d) };
                }
            }
            for d in 0..8 {
                let out = &mut kt[(d0 + d) * BLOCK + j0..(d0 + d) * BLOCK + j0 + 8];
                for (j, x) in out.iter_mut().enumerate() {
                    *x = t[j][d];
                }
            }
            j0 += 8;
        }
        for j in jf..nk {
            for d in d0..d0 + 8 {
                // SAFETY: j < nk, d < dk.
                kt[d * BLOCK + j] = unsafe { *src.offset(j as isize * rs + d as isize) };
            }
        }
        d0 += 8;
    }
    for d in df..dk {
        for j in 0..nk {
            // SAFETY: j < nk, d < dk.
            kt[d * BLOCK + j] = unsafe { *src.offset(j as isize * rs + d as isize) };
        }
    }
}

/// [`body`] with whole tiles moved by the 256-bit transposes (8 × 8 of
/// f32, 4 × 4 of f64), the edges as [`body`] moves them.
///
/// # Safety
/// The CPU runs AVX2; [`body`]'s contract.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn body_vec<T: AccFloat>(src: *const T, rs: isize, nk: usize, dk: usize, kt: &mut [T]) {
    use crate::simd::avx2::{transpose4_f64, transpose8_f32};
    let w = 32 / size_of::<T>();
    let (jf, df) = (nk / w * w, dk / w * w);
    let dst = kt.as_mut_ptr();
    // Keys outer: w rows are read along their length (sequential memory
    // where the block's rows lie one after the other).
    let mut j0 = 0;
    while j0 < jf {
        let mut d0 = 0;
        while d0 < df {
            // SAFETY: keys j0.. j0 + w ≤ nk and dimensions d0.. d0 + w ≤ dk
            // of the source; rows d0.. of 64 values of kt (dk·64 values).
            unsafe {
                let s = src.offset(j0 as isize * rs + d0 as isize);
                let d = dst.add(d0 * BLOCK + j0);
                if w == 8 {
                    transpose8_f32(s as *const f32, rs, d as *mut f32, BLOCK as isize);
                } else {
                    transpose4_f64(s as *const f64, rs, d as *mut f64, BLOCK as isize);
                }
            }
            d0 += w;
        }
        j0 += w;
    }
    for j in jf..nk {
        for d in 0..df {
            // SAFETY: j < nk, d < dk.
            kt[d * BLOCK + j] = unsafe { *src.offset(j as isize * rs + d as isize) };
        }
    }
    for d in df..dk {
        for j in 0..nk {
            // SAFETY: j < nk, d < dk.
            kt[d * BLOCK + j] = unsafe { *src.offset(j as isize * rs + d as isize) };
        }
    }
}

/// # Safety
/// The CPU runs AVX-512 F and AVX2; [`body`]'s contract.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn body_avx512<T: AccFloat>(src: *const T, rs: isize, nk: usize, dk: usize, kt: &mut [T]) {
    // SAFETY: the caller's contract.
    unsafe { body_vec(src, rs, nk, dk, kt) }
}

/// # Safety
/// The CPU runs AVX2; [`body`]'s contract.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn body_avx2<T: AccFloat>(src: *const T, rs: isize, nk: usize, dk: usize, kt: &mut [T]) {
    // SAFETY: the caller's contract.
    unsafe { body_vec(src, rs, nk, dk, kt) }
}

/// Transpose a key block into its panel, on `tier`'s instructions.
///
/// # Safety
/// `src + j·rs + d` is readable for `j < nk`, `d < dk`; `nk ≤ 64`.
pub(super) unsafe fn keys<T: AccFloat>(
    tier: Tier,
    src: *const T,
    rs: isize,
    nk: usize,
    dk: usize,
    kt: &mut [T],
) {
    assert!(
        nk <= BLOCK && kt.len() >= dk * BLOCK,
        "a key panel of 64 keys"
    );
    #[cfg(target_arch = "x86_64")]
    if crate::tier::runs_avx512(tier) && tier.available() {
        // SAFETY: the tier executes AVX-512 F (`runs_avx512`) on this CPU
        // (`available`); the rest is the caller's contract.
        return unsafe { body_avx512(src, rs, nk, dk, kt) };
    }
    #[cfg(target_arch = "x86_64")]
    if crate::tier::runs_avx2(tier) && tier.available() {
        // SAFETY: as above for AVX2.
        return unsafe { body_avx2(src, rs, nk, dk, kt) };
    }
    let _ = tier;
    // SAFETY: the caller's contract.
    unsafe { body(src, rs, nk, dk, kt) }
}
