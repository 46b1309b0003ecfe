//! Packing operands into the panels the microkernels read. Positions come from
//! offset tables (one per index set: rows, columns, depth), so packing takes
//! any strides, negative and zero included, and any number of axes.

use super::acc::{Bits, Src};

/// Element offsets, in C order over `extents`, of a multi-index with element
/// `strides`.
pub(crate) fn offsets(extents: &[usize], strides: &[isize]) -> crate::Result<Vec<isize>> {
    if extents.contains(&0) {
        // No index: an empty table, whatever the other extents.
        return Ok(Vec::new());
    }
    let mut out = vec![0isize];
    for (&n, &s) in extents.iter().zip(strides) {
        let mut next = super::try_vec(out.len().saturating_mul(n), "an index table")?;
        for &o in &out {
            for i in 0..n {
                next.push(o + i as isize * s);
            }
        }
        out = next;
    }
    Ok(out)
}

/// Whether a table is `t[i] = t[0] + i` (consecutive elements).
pub(crate) fn unit(table: &[isize]) -> bool {
    table.windows(2).all(|w| w[1] == w[0] + 1)
}

/// Pack rows `rows` × depth `ks` of an operand (positions `base + row + k`)
/// into micro-panels of `mr` rows: panel p holds, for each k in order, the
/// `mr` values of its rows (zero past the last row). `fast`, where given,
/// packs whole panels of consecutive depth.
///
/// # Safety
/// Every `base + row + k` is a position the operand's validated view reaches,
/// of dtype `T`; `out` holds `ceil(rows/mr)·mr·ks.len()` elements; `fast` is
/// a packer of `mr` rows the CPU runs.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn pack_a<T: Bits>(
    src: Src<'_>,
    base: isize,
    rows: &[isize],
    ks: &[isize],
    ks_unit: bool,
    mr: usize,
    fast: Option<PackRows<T>>,
    out: &mut [T],
) {
    let kc = ks.len();
    for (p, chunk) in rows.chunks(mr).enumerate() {
        let panel = &mut out[p * mr * kc..(p + 1) * mr * kc];
        if let (true, true, Some(f)) = (ks_unit, mr <= 16, fast) {
            let mut ptrs = [std::ptr::null::<T>(); 16];
            for (q, &ro) in ptrs.iter_mut().zip(chunk) {
                // SAFETY: the row's first depth position, inside the view.
                *q = unsafe { src.ptr::<T>(base + ro + ks[0]) };
            }
            // SAFETY: each row holds kc consecutive elements in the view; the
            // panel holds mr·kc; `fast` packs panels of mr rows on this CPU.
            unsafe { f(&ptrs[..chunk.len()], kc, panel.as_mut_ptr(), mr) };
            continue;
        }
        if !ks_unit && chunk.len() == mr && unit(chunk) {
            // Whole panel of consecutive rows (a column-major block): each
            // depth step is `mr` consecutive elements, copied as they lie.
            let r0 = base + chunk[0];
            for (step, &ko) in panel.chunks_exact_mut(mr).zip(ks) {
                // SAFETY: `r0 + ko + r` for r < mr is `base + row + k` for
                // the panel's consecutive rows and a k of `ks`: positions
                // the validated view reaches, of dtype T (this function's
                // contract); copied as bytes (the view may be unaligned)
                // into the step's `mr` elements.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src.ptr::<T>(r0 + ko) as *const u8,
                        step.as_mut_ptr() as *mut u8,
                        mr * size_of::<T>(),
                    )
                };
            }
            continue;
        }
        if ks_unit && chunk.len() == mr && mr <= 16 {
            // Whole panel, consecutive depth: one pass in k, the rows side by
            // side, so the panel is written in order.
            let mut starts = [0isize; 16];
            for (s, &ro) in starts.iter_mut().zip(chunk) {
                *s = base + ro + ks[0];
            }
            for (k, step) in panel.chunks_exact_mut(mr).enumerate() {
                for (v, &s) in step.iter_mut().zip(&starts) {
                    // SAFETY: consecutive depth positions of validated rows.
                    *v = unsafe { src.get(s + k as isize) };
                }
            }
            continue;
        }
        for r in 0..mr {
            if let Some(&ro) = chunk.get(r) {
                let start = base + ro;
                if ks_unit {
                    let k0 = start + ks[0];
                    for k in 0..kc {
                        // SAFETY: consecutive depth positions of a validated row.
                        panel[k * mr + r] = unsafe { src.get(k0 + k as isize) };
                    }
                } else {
                    for (k, &ko) in ks.iter().enumerate() {
                        // SAFETY: `start + ko` is `base + row + k` for a row
                        // of `rows` and a k of `ks`: a position the validated
                        // view reaches, of dtype T (this function's contract).
                        panel[k * mr + r] = unsafe { src.get(start + ko) };
                    }
                }
            } else {
                for k in 0..kc {
                    panel[k * mr + r] = T::ZERO;
                }
            }
        }
    }
}

/// Pack depth `ks` × columns `cols` of an operand (positions `base + k + col`)
/// into micro-panels of `nr` columns: panel q holds, for each k in order, the
/// `nr` values of its columns (zero past the last column).
///
/// # Safety
/// Every `base + k + col` is a position the operand's validated view
/// reaches, of dtype `T`. (`out` is a slice, indexed with checks; it must
/// hold `ceil(cols/nr)·nr·ks.len()` elements or the call panics.)
pub(crate) unsafe fn pack_b<T: Bits>(
    src: Src<'_>,
    base: isize,
    ks: &[isize],
    cols: &[isize],
    cols_unit: bool,
    nr: usize,
    out: &mut [T],
) {
    let kc = ks.len();
    for (q, chunk) in cols.chunks(nr).enumerate() {
        let panel = &mut out[q * nr * kc..(q + 1) * nr * kc];
        let full = chunk.len() == nr;
        for (k, &ko) in ks.iter().enumerate() {
            let row = &mut panel[k * nr..(k + 1) * nr];
            let start = base + ko;
            if full && cols_unit {
                let c0 = start + chunk[0];
                /// Copy `$n` consecutive elements at once (one fixed-size
                /// read the compiler turns into vector moves).
                macro_rules! fixed {
                    ($n:literal) => {{
                        // SAFETY: `$n` = nr consecutive column positions of a
                        // validated row.
                        let v = unsafe { (src.ptr::<T>(c0) as *const [T; $n]).read_unaligned() };
                        row.copy_from_slice(&v);
                    }};
                }
                match nr {
                    32 => fixed!(32),
                    16 => fixed!(16),
                    8 => fixed!(8),
                    _ => {
                        for (j, v) in row.iter_mut().enumerate() {
                            // SAFETY: consecutive column positions of a validated row.
                            *v = unsafe { src.get(c0 + j as isize) };
                        }
                    }
                }
            } else {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = match chunk.get(j) {
                        // SAFETY: `start + co` is `base + k + col` for a k
                        // of `ks` and a column of `cols`: a position the
                        // validated view reaches, of dtype T (this function's
                        // contract).
                        Some(&co) => unsafe { src.get(start + co) },
                        None => T::ZERO,
                    };
                }
            }
        }
    }
}

/// Packs `rows.len() ≤ mr` rows of `kc` consecutive elements each into
/// `out` as `kc` steps of `mr` values: `out[k·mr + r] = rows[r][k]`, and +0
/// for the rows past `rows.len()`: `(rows, kc, out, mr)`. Data movement only.
///
/// # Safety (of calling one)
/// Each row pointer is readable for `kc` elements, `out` writable for
/// `mr·kc`; the CPU runs the function's tier; `1 ≤ rows.len() ≤ mr` and `mr`
/// is a count the packer takes (six for the AVX2 ones, at most 16 for the
/// AVX-512 ones).
pub(crate) type PackRows<T> = unsafe fn(&[*const T], usize, *mut T, usize);

/// [`PackRows`] one element at a time, for the counts a vector packer does
/// not take.
///
/// # Safety
/// The [`PackRows`] contract without the CPU: each of the `rows.len() ≤ mr`
/// row pointers is readable for `kc` elements, `out` writable for `mr·kc`.
unsafe fn pack_rows_plain<T: Bits>(rows: &[*const T], kc: usize, out: *mut T, mr: usize) {
    for k in 0..kc {
        for r in 0..mr {
            // SAFETY: k < kc: inside row r's kc readable elements; k·mr + r <
            // mr·kc: inside `out` (this function's contract).
            unsafe {
                *out.add(k * mr + r) = match rows.get(r) {
                    Some(p) => p.add(k).read_unaligned(),
                    None => T::ZERO,
                }
            };
        }
    }
}

/// f32 elements ahead that the AVX-512 packers fetch in each row (512
/// bytes; the f64 packer the same bytes).
const PREFETCH_F32: usize = 128;

/// AVX-512 [`PackRows`] for f32, any `mr` up to 16: 16 × 16 transposes of
/// sixteen steps at a time (rows past the given ones zero, the last steps masked),
/// each step stored as `mr` lanes.
///
/// # Safety
/// The [`PackRows`] contract: each of the `1 ≤ rows.len() ≤ mr ≤ 16` row
/// pointers is readable for `kc` elements, `out` writable for `mr·kc`, and
/// the CPU runs AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn pack_rows_f32_avx512(
    rows: &[*const f32],
    kc: usize,
    out: *mut f32,
    mr: usize,
) {
    use core::arch::x86_64::*;
    let n = rows.len();
    debug_assert!(n >= 1 && n <= mr && mr <= 16);
    let store: __mmask16 = ((1u32 << mr) - 1) as __mmask16;
    let mut ptr = [rows[0]; 16];
    ptr[..n].copy_from_slice(rows);
    let mut k = 0;
    // SAFETY: loads are masked to each row's kc elements (rows past mr load
    // nothing), stores to the panel's mr·kc.
    unsafe {
        while k < kc {
            let w = (kc - k).min(16);
            let load: __mmask16 = ((1u32 << w) - 1) as __mmask16;
            let mut r = [_mm512_setzero_ps(); 16];
            for (i, x) in r.iter_mut().enumerate() {
                let m = if i < n { load } else { 0 };
                *x = _mm512_maskz_loadu_ps(m, ptr[i].add(k));
                // Rows far apart are as many streams: fetch each one's line
                // a few ahead (a hint; never dereferenced).
                _mm_prefetch::<_MM_HINT_T0>(ptr[i].wrapping_add(k + PREFETCH_F32) as *const i8);
            }
            // Rows pairwise interleaved, then in fours, then 128-bit blocks
            // exchanged: column c of the block ends in register c.
            let mut t = [_mm512_setzero_ps(); 16];
            for i in 0..8 {
                t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
                t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
            }
            let mut u = [_mm512_setzero_ps(); 16];
            for i in 0..4 {
                u[4 * i] = _mm512_shuffle_ps::<0x44>(t[4 * i], t[4 * i + 2]);
                u[4 * i + 1] = _mm512_shuffle_ps::<0xEE>(t[4 * i], t[4 * i + 2]);
                u[4 * i + 2] = _mm512_shuffle_ps::<0x44>(t[4 * i + 1], t[4 * i + 3]);
                u[4 * i + 3] = _mm512_shuffle_ps::<0xEE>(t[4 * i + 1], t[4 * i + 3]);
            }
            for j in 0..4 {
                let v0 = _mm512_shuffle_f32x4::<0x88>(u[j], u[4 + j]);
                let v1 = _mm512_shuffle_f32x4::<0xDD>(u[j], u[4 + j]);
                let v2 = _mm512_shuffle_f32x4::<0x88>(u[8 + j], u[12 + j]);
                let v3 = _mm512_shuffle_f32x4::<0xDD>(u[8 + j], u[12 + j]);
                r[j] = _mm512_shuffle_f32x4::<0x88>(v0, v2);
                r[4 + j] = _mm512_shuffle_f32x4::<0x88>(v1, v3);
                r[8 + j] = _mm512_shuffle_f32x4::<0xDD>(v0, v2);
                r[12 + j] = _mm512_shuffle_f32x4::<0xDD>(v1, v3);
            }
            for (c, x) in r.iter().enumerate().take(w) {
                _mm512_mask_storeu_ps(out.add((k + c) * mr), store, *x);
            }
            k += 16;
        }
    }
}

/// AVX-512 [`PackRows`] for f64, any `mr` up to 16: 8 × 8 transposes of
/// eight steps of rows 0–7 and of rows 8–15 (rows past the given ones zero, the last steps
/// masked), each step stored as `mr` lanes.
///
/// # Safety
/// The [`PackRows`] contract: each of the `1 ≤ rows.len() ≤ mr ≤ 16` row
/// pointers is readable for `kc` elements, `out` writable for `mr·kc`, and
/// the CPU runs AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn pack_rows_f64_avx512(
    rows: &[*const f64],
    kc: usize,
    out: *mut f64,
    mr: usize,
) {
    use core::arch::x86_64::*;
    let n = rows.len();
    debug_assert!(n >= 1 && n <= mr && mr <= 16);
    let mut ptr = [rows[0]; 16];
    ptr[..n].copy_from_slice(rows);
    let mut k = 0;
    // SAFETY: loads are masked to each row's kc elements (rows past mr load
    // nothing), stores to the panel's mr·kc.
    unsafe {
        while k < kc {
            let w = (kc - k).min(8);
            let load: __mmask8 = ((1u32 << w) - 1) as __mmask8;
            for g in 0..mr.div_ceil(8) {
                let lanes = (mr - 8 * g).min(8);
                let store: __mmask8 = ((1u32 << lanes) - 1) as __mmask8;
                let mut r = [_mm512_setzero_pd(); 8];
                for (i, x) in r.iter_mut().enumerate() {
                    let m = if 8 * g + i < n { load } else { 0 };
                    *x = _mm512_maskz_loadu_pd(m, ptr[8 * g + i].add(k));
                    // As the f32 packer: each row's line a few ahead.
                    _mm_prefetch::<_MM_HINT_T0>(
                        ptr[8 * g + i].wrapping_add(k + PREFETCH_F32 / 2) as *const i8
                    );
                }
                let mut t = [_mm512_setzero_pd(); 8];
                for i in 0..4 {
                    t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
                    t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
                }
                for j in 0..2 {
                    let v0 = _mm512_shuffle_f64x2::<0x88>(t[j], t[2 + j]);
                    let v1 = _mm512_shuffle_f64x2::<0xDD>(t[j], t[2 + j]);
                    let v2 = _mm512_shuffle_f64x2::<0x88>(t[4 + j], t[6 + j]);
                    let v3 = _mm512_shuffle_f64x2::<0xDD>(t[4 + j], t[6 + j]);
                    r[j] = _mm512_shuffle_f64x2::<0x88>(v0, v2);
                    r[2 + j] = _mm512_shuffle_f64x2::<0x88>(v1, v3);
                    r[4 + j] = _mm512_shuffle_f64x2::<0xDD>(v0, v2);
                    r[6 + j] = _mm512_shuffle_f64x2::<0xDD>(v1, v3);
                }
                for (c, x) in r.iter().enumerate().take(w) {
                    _mm512_mask_storeu_pd(out.add((k + c) * mr + 8 * g), store, *x);
                }
            }
            k += 8;
        }
    }
}

/// AVX2 [`PackRows`] for f32, six rows: 8 × 8 transposes (two rows of zeros) of eight
/// steps at a time, stored as 4 + 2 values per step; data movement only.
///
/// # Safety
/// The [`PackRows`] contract: each of the `rows.len() ≤ mr` row pointers is
/// readable for `kc` elements, `out` writable for `mr·kc`, and the CPU runs
/// AVX2. (Six rows of a panel of six take the transposes, other counts a
/// plain loop.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn pack6_f32_avx2(rows: &[*const f32], kc: usize, out: *mut f32, mr: usize) {
    use core::arch::x86_64::*;
    if rows.len() != 6 || mr != 6 {
        // SAFETY: the rows and `out` are this function's, with the same
        // contract `pack_rows_plain` asks (less the CPU).
        return unsafe { pack_rows_plain(rows, kc, out, mr) };
    }
    let mut k = 0;
    // SAFETY: loads stay within each row's kc elements, stores within 6·kc.
    unsafe {
        while k + 8 <= kc {
            let r0 = _mm256_loadu_ps(rows[0].add(k));
            let r1 = _mm256_loadu_ps(rows[1].add(k));
            let r2 = _mm256_loadu_ps(rows[2].add(k));
            let r3 = _mm256_loadu_ps(rows[3].add(k));
            let r4 = _mm256_loadu_ps(rows[4].add(k));
            let r5 = _mm256_loadu_ps(rows[5].add(k));
            let z = _mm256_setzero_ps();
            let t0 = _mm256_unpacklo_ps(r0, r1);
            let t1 = _mm256_unpackhi_ps(r0, r1);
            let t2 = _mm256_unpacklo_ps(r2, r3);
            let t3 = _mm256_unpackhi_ps(r2, r3);
            let t4 = _mm256_unpacklo_ps(r4, r5);
            let t5 = _mm256_unpackhi_ps(r4, r5);
            let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let s1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let s3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
            let s4 = _mm256_shuffle_ps::<0x44>(t4, z);
            let s5 = _mm256_shuffle_ps::<0xEE>(t4, z);
            let s6 = _mm256_shuffle_ps::<0x44>(t5, z);
            let s7 = _mm256_shuffle_ps::<0xEE>(t5, z);
            let cols = [
                _mm256_permute2f128_ps::<0x20>(s0, s4),
                _mm256_permute2f128_ps::<0x20>(s1, s5),
                _mm256_permute2f128_ps::<0x20>(s2, s6),
                _mm256_permute2f128_ps::<0x20>(s3, s7),
                _mm256_permute2f128_ps::<0x31>(s0, s4),
                _mm256_permute2f128_ps::<0x31>(s1, s5),
                _mm256_permute2f128_ps::<0x31>(s2, s6),
                _mm256_permute2f128_ps::<0x31>(s3, s7),
            ];
            for (j, c) in cols.into_iter().enumerate() {
                let p = out.add((k + j) * 6);
                _mm_storeu_ps(p, _mm256_castps256_ps128(c));
                _mm_storel_pd(
                    p.add(4) as *mut f64,
                    _mm_castps_pd(_mm256_extractf128_ps::<1>(c)),
                );
            }
            k += 8;
        }
        while k < kc {
            for (r, row) in rows.iter().enumerate() {
                *out.add(k * 6 + r) = row.add(k).read_unaligned();
            }
            k += 1;
        }
    }
}

/// AVX2 [`PackRows`] for f64, six rows: a 4 × 4 transpose of rows 0–3 and pairs of
/// rows 4–5, four steps at a time; data movement only.
///
/// # Safety
/// The [`PackRows`] contract: each of the `rows.len() ≤ mr` row pointers is
/// readable for `kc` elements, `out` writable for `mr·kc`, and the CPU runs
/// AVX2. (Six rows of a panel of six take the transposes, other counts a
/// plain loop.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn pack6_f64_avx2(rows: &[*const f64], kc: usize, out: *mut f64, mr: usize) {
    use core::arch::x86_64::*;
    if rows.len() != 6 || mr != 6 {
        // SAFETY: the rows and `out` are this function's, with the same
        // contract `pack_rows_plain` asks (less the CPU).
        return unsafe { pack_rows_plain(rows, kc, out, mr) };
    }
    let mut k = 0;
    // SAFETY: loads stay within each row's kc elements, stores within 6·kc.
    unsafe {
        while k + 4 <= kc {
            let r0 = _mm256_loadu_pd(rows[0].add(k));
            let r1 = _mm256_loadu_pd(rows[1].add(k));
            let r2 = _mm256_loadu_pd(rows[2].add(k));
            let r3 = _mm256_loadu_pd(rows[3].add(k));
            let r4 = _mm256_loadu_pd(rows[4].add(k));
            let r5 = _mm256_loadu_pd(rows[5].add(k));
            let t0 = _mm256_unpacklo_pd(r0, r1);
            let t1 = _mm256_unpackhi_pd(r0, r1);
            let t2 = _mm256_unpacklo_pd(r2, r3);
            let t3 = _mm256_unpackhi_pd(r2, r3);
            let u0 = _mm256_unpacklo_pd(r4, r5);
            let u1 = _mm256_unpackhi_pd(r4, r5);
            let cols = [
                (
                    _mm256_permute2f128_pd::<0x20>(t0, t2),
                    _mm256_castpd256_pd128(u0),
                ),
                (
                    _mm256_permute2f128_pd::<0x20>(t1, t3),
                    _mm256_castpd256_pd128(u1),
                ),
                (
                    _mm256_permute2f128_pd::<0x31>(t0, t2),
                    _mm256_extractf128_pd::<1>(u0),
                ),
                (
                    _mm256_permute2f128_pd::<0x31>(t1, t3),
                    _mm256_extractf128_pd::<1>(u1),
                ),
            ];
            for (j, (lo, hi)) in cols.into_iter().enumerate() {
                let p = out.add((k + j) * 6);
                _mm256_storeu_pd(p, lo);
                _mm_storeu_pd(p.add(4), hi);
            }
            k += 4;
        }
        while k < kc {
            for (r, row) in rows.iter().enumerate() {
                *out.add(k * 6 + r) = row.add(k).read_unaligned();
            }
            k += 1;
        }
    }
}
