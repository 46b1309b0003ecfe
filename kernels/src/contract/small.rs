//! Small matrix products without the general engine's set-up: `a` [M, K]
//! times `b` [K, N] (one contracted pair, no batch), every extent at most
//! [`MAX`], real floats whose dtype is the accumulator's, written into a
//! destination of that dtype (any strides), with an optional init of the
//! destination's shape and dtype.
//!
//! The order is the one [`super::choose_order`] picks for (M, N, K), so the
//! bits are the general engine's: chain order runs the same microkernel over
//! operands packed on the stack (no table, no heap), lane order sums each
//! output's row and column as one block of the lane order (K ≤ 1024 is one
//! block), then adds init (or +0), exactly as the lane path does.

use super::order::{choose as choose_order, Order};
use super::try_filled;
use super::Chained;
use crate::array::{ArrayView, ArrayViewMut};
use crate::elementwise::check_destination;
use crate::error::Result;
use crate::{DType, Element, Tier};

/// The largest extent (M, N or K) the small path takes.
pub(super) const MAX: usize = 64;

/// The operands' elements of a small product, as strides in elements.
struct Strided<T> {
    base: *const T,
    rows: isize,
    cols: isize,
}

impl<T: Copy> Strided<T> {
    /// Element (i, j).
    ///
    /// # Safety
    /// (i, j) is inside the view this was made from.
    #[inline(always)]
    unsafe fn at(&self, i: usize, j: usize) -> T {
        // SAFETY: the caller's contract.
        unsafe {
            self.base
                .offset(i as isize * self.rows + j as isize * self.cols)
                .read_unaligned()
        }
    }
}

/// The product when it is small and plain (see the module's docs), else
/// None: the caller runs the general engine, which also gives every refusal.
/// `pair` is the contracted `(axis of a, axis of b)`.
pub(super) fn try_run(
    tier: Tier,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    pair: (usize, usize),
) -> Option<Result<()>> {
    match dst.dtype() {
        DType::F32 => try_typed::<f32>(tier, a, b, init, dst, pair),
        DType::F64 => try_typed::<f64>(tier, a, b, init, dst, pair),
        _ => None,
    }
}

fn try_typed<T: Chained + Element>(
    tier: Tier,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    (x, y): (usize, usize),
) -> Option<Result<()>> {
    let dt = T::DTYPE;
    if a.dtype() != dt || b.dtype() != dt || a.shape().len() != 2 || b.shape().len() != 2 {
        return None;
    }
    if x > 1 || y > 1 || a.shape()[x] != b.shape()[y] {
        return None;
    }
    let (m, k, n) = (a.shape()[1 - x], a.shape()[x], b.shape()[1 - y]);
    if m == 0 || n == 0 || k == 0 || m > MAX || n > MAX || k > MAX {
        return None;
    }
    if dst.shape() != [m, n] {
        return None;
    }
    if let Some(i) = init {
        if i.dtype() != dt || i.shape() != [m, n] {
            return None;
        }
    }
    if let Err(e) = check_destination(dst) {
        return Some(Err(e));
    }
    let view = |v: &ArrayView<'_>, free: usize| Strided::<T> {
        // SAFETY: the view is validated and holds an element (no extent is
        // 0), at its offset.
        base: unsafe { (v.data().as_ptr() as *const T).add(v.layout().offset) },
        rows: v.strides()[free],
        cols: v.strides()[1 - free],
    };
    // a as (row, k), b as (col, k).
    let (av, bv) = (view(a, 1 - x), view(b, 1 - y));
    let iv = init.map(|i| view(i, 0));
    // The results, in C order, written to dst at the end.
    // (Buffers of the exact sizes: zeroing the largest sizes on the stack
    // would cost more than a small product.)
    let mut out = match try_filled(m * n, T::ZERO, "the destination in acc") {
        Ok(v) => v,
        Err(e) => return Some(Err(e)),
    };
    if let Some(iv) = &iv {
        for (o, v) in out.iter_mut().enumerate() {
            // SAFETY: (o / n, o % n) is inside init's [m, n].
            *v = unsafe { iv.at(o / n, o % n) };
        }
    }
    // Any kernel gives the chain's bits: narrow products take a narrower one.
    let kernel = match (T::kernel(tier), T::narrow_kernel(tier)) {
        (_, Some(narrow)) if n <= narrow.2 => Some(narrow),
        (wide, _) => wide,
    };
    match (choose_order(m, n, k), kernel) {
        (Order::Chain, Some((kernel, mr, nr))) => {
            // b packed in panels of nr columns (k-major), zero past n.
            let panels = n.div_ceil(nr);
            let mut bp = vec![T::ZERO; panels * k * nr];
            for p in 0..panels {
                let cols = nr.min(n - p * nr);
                for t in 0..k {
                    let dst = &mut bp[(p * k + t) * nr..][..cols];
                    if bv.rows == 1 {
                        // SAFETY: columns p·nr .. p·nr + cols < n of step t
                        // are consecutive elements of b.
                        let src = unsafe {
                            std::slice::from_raw_parts(
                                bv.base.offset((p * nr) as isize + t as isize * bv.cols),
                                cols,
                            )
                        };
                        dst.copy_from_slice(src);
                    } else {
                        for (q, v) in dst.iter_mut().enumerate() {
                            // SAFETY: p·nr + q < n, t < k.
                            *v = unsafe { bv.at(p * nr + q, t) };
                        }
                    }
                }
            }
            let mut ap = vec![T::ZERO; k * mr];
            let mut tile = [T::ZERO; 16 * 32];
            for i0 in (0..m).step_by(mr) {
                let rows = mr.min(m - i0);
                for t in 0..k {
                    for r in 0..mr {
                        ap[t * mr + r] = if r < rows {
                            // SAFETY: i0 + r < m, t < k.
                            unsafe { av.at(i0 + r, t) }
                        } else {
                            T::ZERO
                        };
                    }
                }
                for p in 0..panels {
                    let cols = nr.min(n - p * nr);
                    if rows == mr && cols == nr {
                        // SAFETY: `ap` holds k·mr and the panel k·nr
                        // elements; the tile is inside `out` (row stride n).
                        unsafe {
                            kernel(
                                k,
                                ap.as_ptr(),
                                bp[p * k * nr..].as_ptr(),
                                out.as_mut_ptr().add(i0 * n + p * nr),
                                n,
                                iv.is_some(),
                            )
                        };
                        continue;
                    }
                    let tile = &mut tile[..mr * nr];
                    for r in 0..rows {
                        tile[r * nr..r * nr + cols]
                            .copy_from_slice(&out[(i0 + r) * n + p * nr..][..cols]);
                    }
                    // SAFETY: `ap` holds k·mr and the panel k·nr elements;
                    // the tile is a full mr × nr tile of row stride nr.
                    unsafe {
                        kernel(
                            k,
                            ap.as_ptr(),
                            bp[p * k * nr..].as_ptr(),
                            tile.as_mut_ptr(),
                            nr,
                            iv.is_some(),
                        )
                    };
                    for r in 0..rows {
                        out[(i0 + r) * n + p * nr..][..cols]
                            .copy_from_slice(&tile[r * nr..r * nr + cols]);
                    }
                }
            }
        }
        (Order::Chain, None) => return None,
        (Order::Lane, _) => {
            // Each output's row and column in place as one lane-order block.
            let mut row = [T::ZERO; MAX];
            let mut col = [T::ZERO; MAX];
            let mut cols = vec![T::ZERO; n * k];
            for j in 0..n {
                for t in 0..k {
                    // SAFETY: j < n, t < k.
                    cols[j * k + t] = unsafe { bv.at(j, t) };
                }
            }
            for i in 0..m {
                for (t, v) in row[..k].iter_mut().enumerate() {
                    // SAFETY: i < m, t < k.
                    *v = unsafe { av.at(i, t) };
                }
                for j in 0..n {
                    col[..k].copy_from_slice(&cols[j * k..(j + 1) * k]);
                    let o = &mut out[i * n + j];
                    *o = super::lane::block_sum(tier, &row[..k], &col[..k]).plus(*o);
                }
            }
        }
    }
    // Into the destination, through its strides.
    let (s0, s1, off) = (dst.strides()[0], dst.strides()[1], dst.layout().offset);
    if s1 == 1 && s0 == n as isize {
        let bytes = &mut dst.data_mut()[off * size_of::<T>()..][..m * n * size_of::<T>()];
        bytes.copy_from_slice(crate::array::as_bytes(&out));
        return Some(Ok(()));
    }
    let base = dst.data_mut().as_mut_ptr() as *mut T;
    for i in 0..m {
        for j in 0..n {
            // SAFETY: (i, j) is inside the validated destination view.
            unsafe {
                base.add(off)
                    .offset(i as isize * s0 + j as isize * s1)
                    .write_unaligned(out[i * n + j])
            };
        }
    }
    Some(Ok(()))
}
