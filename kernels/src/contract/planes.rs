//! Chain order over outputs held as two planes: a microkernel of the
//! [`PlaneKernel`] shape continues each output's two running values (a
//! complex output's real and imaginary chains, a compensated output's sum
//! and its compensation) over packed operands whose elements have one or
//! two parts. The blocking, the packing and the split of rows over threads
//! are the same for both; they change no bit (each output's chain runs in
//! increasing k whatever the blocks).

use super::acc::{Bits, Src};
use super::geometry::Tables;
use super::micro::PlaneKernel;
use crate::error::Result;

/// Depth steps per packed block.
const KC: usize = 256;
/// Columns per packed block of b (c64: 512 KiB of b, inside L2).
const NC: usize = 256;
/// Multiply-adds at or below which a product stays on one thread (2^18: a
/// 64³ product is done before a second thread would have started).
const PARALLEL_MIN: usize = 1 << 18;
/// The largest tile (`mr·nr` values) a plane kernel may have: edge tiles
/// run through full tiles of this scratch.
const EDGE_MAX: usize = 6 * 32;

/// An operand element as packed for a plane kernel: `PARTS` values of `T`
/// (a complex number's real and imaginary parts; a real number itself).
pub(super) trait Planar: crate::Element {
    /// The type of a part.
    type T: Bits + crate::Element;
    /// Parts per element (1 or 2).
    const PARTS: usize;
    /// The parts (the first `PARTS` count).
    fn parts(self) -> [Self::T; 2];
}

impl<T: Bits + crate::Element> Planar for num_complex::Complex<T>
where
    num_complex::Complex<T>: crate::Element,
{
    type T = T;
    const PARTS: usize = 2;
    #[inline(always)]
    fn parts(self) -> [T; 2] {
        [self.re, self.im]
    }
}

macro_rules! real_planar {
    ($($t:ty),*) => {$(
        impl Planar for $t {
            type T = $t;
            const PARTS: usize = 1;
            #[inline(always)]
            fn parts(self) -> [$t; 2] {
                [self, 0.0]
            }
        }
    )*};
}
real_planar!(f32, f64);

/// Continue the chains of every batch element's `R × C` outputs, held as
/// the planes `re` and `im` (row-major, each output's starting state on
/// entry), by `kernel`, a [`PlaneKernel`] of `mr × nr` tiles (`mr·nr` at
/// most 192) over operands of element type `E`.
///
/// # Safety
/// Every position the tables reach is an element (`E`) of `sa` (resp.
/// `sb`); `kernel` runs on this CPU; the planes hold `batch · R · C` values
/// each.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn chain<E: Planar>(
    (kernel, mr, nr): (PlaneKernel<E::T>, usize, usize),
    threads: usize,
    sa: Src<'_>,
    sb: Src<'_>,
    t: &Tables,
    re: &mut [E::T],
    im: &mut [E::T],
) -> Result<()> {
    type T<E> = <E as Planar>::T;
    let w = E::PARTS;
    let (r, c, k) = (t.a_rows.len(), t.b_cols.len(), t.a_ks.len());
    if r == 0 || c == 0 || k == 0 {
        return Ok(());
    }
    assert!(mr * nr <= EDGE_MAX, "a {mr} × {nr} tile");
    let threads = if r.saturating_mul(c).saturating_mul(k) <= PARALLEL_MIN {
        1
    } else {
        threads.max(1)
    };
    let row_panels = r.div_ceil(mr);
    let parts = threads.min(row_panels).max(1);
    let per_part = row_panels.div_ceil(parts);
    let mut bpack: Vec<T<E>> = super::try_vec(w * KC * NC.div_ceil(nr) * nr, "packed b")?;
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
                // b: panel p, step s, part 0 of its nr columns, then part 1
                // (zero past c).
                bpack.clear();
                bpack.resize(panels * kc * w * nr, T::<E>::ZERO);
                for p in 0..panels {
                    let cols = nr.min(c - j0 - p * nr);
                    let first = j0 + p * nr;
                    for s in k0..k0 + kc {
                        let row = b_base + t.b_ks[s];
                        let at = (p * kc + s - k0) * w * nr;
                        let step = &mut bpack[at..at + w * nr];
                        for q in 0..cols {
                            let pos = if b_unit {
                                row + t.b_cols[first] + q as isize
                            } else {
                                row + t.b_cols[first + q]
                            };
                            // SAFETY: `b_base + k + col` for a k and a column
                            // of b's tables: an element of b (this function's
                            // contract).
                            let x: E = unsafe { sb.get_any(pos) };
                            for (h, v) in x.parts().into_iter().take(w).enumerate() {
                                step[h * nr + q] = v;
                            }
                        }
                    }
                }
                let bpack = &bpack[..];
                let task = |part: usize, (re, im): (&mut [T<E>], &mut [T<E>])| -> Result<()> {
                    let mut apack: Vec<T<E>> =
                        super::try_filled(w * kc * mr, T::<E>::ZERO, "packed a")?;
                    let (mut ere, mut eim) = ([T::<E>::ZERO; EDGE_MAX], [T::<E>::ZERO; EDGE_MAX]);
                    for (q, (tre, tim)) in
                        re.chunks_mut(mr * c).zip(im.chunks_mut(mr * c)).enumerate()
                    {
                        let i0 = (part * per_part + q) * mr;
                        let rows = tre.len() / c;
                        // a: step s, the parts of each of the panel's rows
                        // side by side (zero past the last row), row by row.
                        for x in 0..mr {
                            let steps = apack[..w * kc * mr].chunks_exact_mut(w * mr);
                            if x >= rows {
                                for step in steps {
                                    step[w * x..w * x + w].fill(T::<E>::ZERO);
                                }
                                continue;
                            }
                            let row = a_base + t.a_rows[i0 + x];
                            let put = |step: &mut [T<E>], v: E| {
                                for (h, p) in v.parts().into_iter().take(w).enumerate() {
                                    step[w * x + h] = p;
                                }
                            };
                            if a_unit {
                                let first = row + t.a_ks[k0];
                                for (s, step) in steps.enumerate() {
                                    // SAFETY: a position of a (consecutive depth).
                                    put(step, unsafe { sa.get_any(first + s as isize) });
                                }
                            } else {
                                for (step, &ko) in steps.zip(&t.a_ks[k0..k0 + kc]) {
                                    // SAFETY: a position of a.
                                    put(step, unsafe { sa.get_any(row + ko) });
                                }
                            }
                        }
                        for p in 0..panels {
                            let cols = nr.min(nc - p * nr);
                            let at = j0 + p * nr;
                            let bp = bpack[p * w * kc * nr..].as_ptr();
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
