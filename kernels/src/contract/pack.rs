//! Packing operands into the panels the microkernels read. Positions come from
//! offset tables (one per index set: rows, columns, depth), so packing takes
//! any strides, negative and zero included, and any number of axes.

use super::acc::{Acc, Src};

/// Element offsets, in C order over `extents`, of a multi-index with element
/// `strides`.
pub(crate) fn offsets(extents: &[usize], strides: &[isize]) -> Vec<isize> {
    let mut out = vec![0isize];
    for (&n, &s) in extents.iter().zip(strides) {
        let mut next = Vec::with_capacity(out.len() * n);
        for &o in &out {
            for i in 0..n {
                next.push(o + i as isize * s);
            }
        }
        out = next;
    }
    out
}

/// Whether a table is `t[i] = t[0] + i` (consecutive elements).
pub(crate) fn unit(table: &[isize]) -> bool {
    table.windows(2).all(|w| w[1] == w[0] + 1)
}

/// Pack rows `rows` × depth `ks` of an operand (positions `base + row + k`)
/// into micro-panels of `mr` rows: panel p holds, for each k in order, the
/// `mr` values of its rows (zero past the last row).
///
/// # Safety
/// Every `base + row + k` is a position the operand's validated view reaches,
/// of dtype `T`; `out` holds `ceil(rows/mr)·mr·ks.len()` elements.
pub(crate) unsafe fn pack_a<T: Acc>(
    src: Src<'_>,
    base: isize,
    rows: &[isize],
    ks: &[isize],
    ks_unit: bool,
    mr: usize,
    out: &mut [T],
) {
    let kc = ks.len();
    for (p, chunk) in rows.chunks(mr).enumerate() {
        let panel = &mut out[p * mr * kc..(p + 1) * mr * kc];
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
pub(crate) unsafe fn pack_b<T: Acc>(
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
                for (j, v) in row.iter_mut().enumerate() {
                    // SAFETY: consecutive column positions of a validated row.
                    *v = unsafe { src.get(c0 + j as isize) };
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
