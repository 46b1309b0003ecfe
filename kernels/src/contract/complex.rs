//! Chain-order complex products by complex microkernels
//! ([`super::micro::ComplexKernel`]): each output keeps its real and
//! imaginary chains (ARCHITECTURE.md §5.5: per k, real `+ ar·br` then
//! `− ai·bi`, imaginary `+ ar·bi` then `+ ai·br`), so the bits are those of
//! the two real products over 2K terms the lane path and the scalar tier
//! compute, at any blocking, tier or split of rows over threads.

use super::acc::{Acc, Src};
use super::geometry::Tables;
use super::micro::{self, ComplexKernel};
use crate::error::Result;
use crate::Tier;
use num_complex::Complex;

/// Depth steps per packed block.
const KC: usize = 256;
/// Columns per packed block of b (c64: 512 KiB of b, inside L2).
const NC: usize = 256;
/// Complex multiply-adds at or below which a product stays on one thread
/// (2^18, four real multiply-adds each: the real products' threshold; a
/// 64³ product is done before a second thread would have started).
const PARALLEL_MIN: usize = 1 << 18;

/// A real part type with a complex kernel on a tier.
pub(super) trait Part:
    Acc + crate::Element + core::ops::Neg<Output = Self> + Default
where
    Complex<Self>: crate::Element,
{
    /// The kernel of `tier` and its `(MR, NR)`.
    fn kernel(tier: Tier) -> (ComplexKernel<Self>, usize, usize);
}

impl Part for f32 {
    fn kernel(tier: Tier) -> (ComplexKernel<Self>, usize, usize) {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return (micro::avx512_c64_6x32, 6, 32);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return (micro::avx2_c64_4x8, 4, 8);
        }
        let _ = tier;
        (micro::cscalar::<f32, 4, 8>, 4, 8)
    }
}

impl Part for f64 {
    fn kernel(tier: Tier) -> (ComplexKernel<Self>, usize, usize) {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return (micro::avx512_c128_6x16, 6, 16);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return (micro::avx2_c128_4x4, 4, 4);
        }
        let _ = tier;
        (micro::cscalar::<f64, 4, 4>, 4, 4)
    }
}

/// Continue the chains of every batch element's `R × C` outputs, held as
/// the planes `re` and `im` (row-major, each output's init or +0 on entry).
///
/// # Safety
/// Every position the tables reach is an element (`Complex<T>`) of `sa`
/// (resp. `sb`); `tier` is one this CPU runs (its microkernel is called);
/// the planes hold `batch · R · C` values each.
pub(super) unsafe fn chain<T: Part>(
    tier: Tier,
    threads: usize,
    sa: Src<'_>,
    sb: Src<'_>,
    t: &Tables,
    re: &mut [T],
    im: &mut [T],
) -> Result<()>
where
    Complex<T>: crate::Element,
{
    let (r, c, k) = (t.a_rows.len(), t.b_cols.len(), t.a_ks.len());
    if r == 0 || c == 0 || k == 0 {
        return Ok(());
    }
    let (kernel, mr, nr) = T::kernel(tier);
    let threads = if r.saturating_mul(c).saturating_mul(k) <= PARALLEL_MIN {
        1
    } else {
        threads.max(1)
    };
    let row_panels = r.div_ceil(mr);
    let parts = threads.min(row_panels).max(1);
    let per_part = row_panels.div_ceil(parts);
    let mut bpack: Vec<T> = super::try_vec(2 * KC * NC.div_ceil(nr) * nr, "packed b")?;
    let (a_unit, b_unit) = (super::pack::unit(&t.a_ks), super::pack::unit(&t.b_cols));
    for ((re, im), bi) in re
        .chunks_mut(r * c)
        .zip(im.chunks_mut(r * c))
        .zip(0..t.a_batch.len())
    {
        let (a_base, b_base) = (t.a_batch[bi], t.b_batch[bi]);
        for j0 in (0..c).step_by(NC) {
            let nc = NC.min(c - j0);
            let panels = nc.div_ceil(nr);
            for k0 in (0..k).step_by(KC) {
                let kc = KC.min(k - k0);
                // b: panel p, step s, the real parts of its nr columns then
                // their imaginary parts (zero past c).
                bpack.clear();
                bpack.resize(panels * kc * 2 * nr, T::ZERO);
                for p in 0..panels {
                    let cols = nr.min(c - j0 - p * nr);
                    let first = j0 + p * nr;
                    for s in k0..k0 + kc {
                        let row = b_base + t.b_ks[s];
                        let at = (p * kc + s - k0) * 2 * nr;
                        let (res, ims) = bpack[at..at + 2 * nr].split_at_mut(nr);
                        for q in 0..cols {
                            let pos = if b_unit {
                                row + t.b_cols[first] + q as isize
                            } else {
                                row + t.b_cols[first + q]
                            };
                            // SAFETY: `b_base + k + col` for a k and a column
                            // of b's tables: an element of b (this function's
                            // contract).
                            let x: Complex<T> = unsafe { sb.get_any(pos) };
                            res[q] = x.re;
                            ims[q] = x.im;
                        }
                    }
                }
                let bpack = &bpack[..];
                let task = |part: usize, (re, im): (&mut [T], &mut [T])| -> Result<()> {
                    let mut apack: Vec<T> = super::try_filled(2 * kc * mr, T::ZERO, "packed a")?;
                    let (mut ere, mut eim) = ([T::ZERO; 6 * 32], [T::ZERO; 6 * 32]);
                    for (q, (tre, tim)) in
                        re.chunks_mut(mr * c).zip(im.chunks_mut(mr * c)).enumerate()
                    {
                        let i0 = (part * per_part + q) * mr;
                        let rows = tre.len() / c;
                        // a: step s, the (re, im) pairs of the panel's
                        // rows (zero past the last row), row by row.
                        for x in 0..mr {
                            if x >= rows {
                                for s in 0..kc {
                                    apack[s * 2 * mr + 2 * x] = T::ZERO;
                                    apack[s * 2 * mr + 2 * x + 1] = T::ZERO;
                                }
                                continue;
                            }
                            let row = a_base + t.a_rows[i0 + x];
                            let steps = apack[..2 * kc * mr].chunks_exact_mut(2 * mr);
                            if a_unit {
                                let first = row + t.a_ks[k0];
                                for (s, step) in steps.enumerate() {
                                    // SAFETY: a position of a (consecutive depth).
                                    let v: Complex<T> = unsafe { sa.get_any(first + s as isize) };
                                    step[2 * x] = v.re;
                                    step[2 * x + 1] = v.im;
                                }
                            } else {
                                for (step, &ko) in steps.zip(&t.a_ks[k0..k0 + kc]) {
                                    // SAFETY: a position of a.
                                    let v: Complex<T> = unsafe { sa.get_any(row + ko) };
                                    step[2 * x] = v.re;
                                    step[2 * x + 1] = v.im;
                                }
                            }
                        }
                        for p in 0..panels {
                            let cols = nr.min(nc - p * nr);
                            let at = j0 + p * nr;
                            let bp = bpack[p * 2 * kc * nr..].as_ptr();
                            if rows == mr && cols == nr {
                                // SAFETY: full tiles inside the planes (row
                                // stride c); the panels hold kc steps.
                                unsafe {
                                    kernel(
                                        kc,
                                        apack.as_ptr(),
                                        bp,
                                        (tre.as_mut_ptr().add(at), tim.as_mut_ptr().add(at)),
                                        c,
                                    )
                                };
                                continue;
                            }
                            // Edge tiles through full tiles of scratch.
                            let (ere, eim) = (&mut ere[..mr * nr], &mut eim[..mr * nr]);
                            for x in 0..rows {
                                ere[x * nr..x * nr + cols]
                                    .copy_from_slice(&tre[x * c + at..][..cols]);
                                eim[x * nr..x * nr + cols]
                                    .copy_from_slice(&tim[x * c + at..][..cols]);
                            }
                            // SAFETY: full mr × nr tiles of row stride nr.
                            unsafe {
                                kernel(
                                    kc,
                                    apack.as_ptr(),
                                    bp,
                                    (ere.as_mut_ptr(), eim.as_mut_ptr()),
                                    nr,
                                )
                            };
                            for x in 0..rows {
                                tre[x * c + at..][..cols]
                                    .copy_from_slice(&ere[x * nr..x * nr + cols]);
                                tim[x * c + at..][..cols]
                                    .copy_from_slice(&eim[x * nr..x * nr + cols]);
                            }
                        }
                    }
                    Ok(())
                };
                if parts == 1 {
                    task(0, (&mut *re, &mut *im))?;
                } else {
                    use rayon::prelude::*;
                    re.par_chunks_mut(per_part * mr * c)
                        .zip(im.par_chunks_mut(per_part * mr * c))
                        .enumerate()
                        .map(|(part, planes)| task(part, planes))
                        .collect::<Result<()>>()?;
                }
            }
        }
    }
    Ok(())
}
