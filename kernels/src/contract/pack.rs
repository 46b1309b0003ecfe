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

/// Pack rows `rows` × depth `ks` of an operand (positions `base + row + k`),
/// with `fast` for whole panels of six rows of consecutive depth where given.
/// into micro-panels of `mr` rows: panel p holds, for each k in order, the
/// `mr` values of its rows (zero past the last row).
///
/// # Safety
/// Every `base + row + k` is a position the operand's validated view reaches,
/// of dtype `T`; `out` holds `ceil(rows/mr)·mr·ks.len()` elements.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn pack_a<T: Bits>(
    src: Src<'_>,
    base: isize,
    rows: &[isize],
    ks: &[isize],
    ks_unit: bool,
    mr: usize,
    fast: Option<PackRows6<T>>,
    out: &mut [T],
) {
    let kc = ks.len();
    for (p, chunk) in rows.chunks(mr).enumerate() {
        let panel = &mut out[p * mr * kc..(p + 1) * mr * kc];
        if let (true, true, Some(f)) = (ks_unit, chunk.len() == 6 && mr == 6, fast) {
            let mut ptrs = [std::ptr::null::<T>(); 6];
            for (q, &ro) in ptrs.iter_mut().zip(chunk) {
                // SAFETY: the row's first depth position, inside the view.
                *q = unsafe { src.ptr::<T>(base + ro + ks[0]) };
            }
            // SAFETY: each row holds kc consecutive elements in the view; the
            // panel holds 6·kc; `fast` is the resolved tier's.
            unsafe { f(ptrs, kc, panel.as_mut_ptr()) };
            continue;
        }
        if ks_unit && chunk.len() == mr && mr <= 8 {
            // Whole panel, consecutive depth: one pass in k, the rows side by
            // side, so the panel is written in order.
            let mut starts = [0isize; 8];
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
                        // SAFETY: caller's contract.
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
/// As [`pack_a`], with `out` of `ceil(cols/nr)·nr·ks.len()` elements.
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
                if nr == 16 {
                    // SAFETY: 16 consecutive column positions of a validated row.
                    let v = unsafe { (src.ptr::<T>(c0) as *const [T; 16]).read_unaligned() };
                    row.copy_from_slice(&v);
                } else if nr == 8 {
                    // SAFETY: 8 consecutive column positions of a validated row.
                    let v = unsafe { (src.ptr::<T>(c0) as *const [T; 8]).read_unaligned() };
                    row.copy_from_slice(&v);
                } else {
                    for (j, v) in row.iter_mut().enumerate() {
                        // SAFETY: consecutive column positions of a validated row.
                        *v = unsafe { src.get(c0 + j as isize) };
                    }
                }
            } else {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = match chunk.get(j) {
                        // SAFETY: caller's contract.
                        Some(&co) => unsafe { src.get(start + co) },
                        None => T::ZERO,
                    };
                }
            }
        }
    }
}

/// Packs six rows of `kc` consecutive elements each (starting at the six
/// pointers) into `out` as `kc` steps of six values: `out[k·6 + r] = row_r[k]`.
///
/// # Safety (of calling one)
/// Each row pointer is readable for `kc` elements, `out` writable for `6·kc`;
/// the CPU runs the function's tier.
pub(crate) type PackRows6<T> = unsafe fn([*const T; 6], usize, *mut T);

/// AVX2 [`PackRows6`] for f32: 8 × 8 transposes (two rows of zeros) of eight
/// steps at a time, stored as 4 + 2 values per step; data movement only.
///
/// # Safety
/// As [`PackRows6`]; the CPU runs AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn pack6_f32_avx2(rows: [*const f32; 6], kc: usize, out: *mut f32) {
    use core::arch::x86_64::*;
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

/// AVX2 [`PackRows6`] for f64: a 4 × 4 transpose of rows 0–3 and pairs of
/// rows 4–5, four steps at a time; data movement only.
///
/// # Safety
/// As [`PackRows6`]; the CPU runs AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn pack6_f64_avx2(rows: [*const f64; 6], kc: usize, out: *mut f64) {
    use core::arch::x86_64::*;
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
