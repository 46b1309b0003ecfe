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

use super::association::{choose as choose_order, Order};
use super::select::Chained;
use super::try_filled;
use crate::array::{ArrayView, ArrayViewMut};
use crate::checks::check_destination;
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
    /// (i, j) is inside the view this was made from, whose dtype is `T`.
    #[inline(always)]
    unsafe fn at(&self, i: usize, j: usize) -> T {
        // SAFETY: (i, j) is an element of the view, of type T (this
        // function's contract); the read is unaligned.
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
    // Any kernel gives the chain's bits: narrow products take a narrower one.
    let micro = match (T::micro(tier), T::narrow(tier)) {
        (_, Some(narrow)) if n <= narrow.nr => Some(narrow),
        (wide, _) => wide,
    };
    let order = choose_order(m, n, k);
    if order == Order::Chain && micro.is_none() {
        return None;
    }
    let aligned = |p: *const T| (p as usize).is_multiple_of(align_of::<T>());
    // The outputs go straight into dst where its rows are consecutive,
    // disjoint and aligned; else into a buffer in C order, copied at the end.
    let (s0, s1, off) = (dst.strides()[0], dst.strides()[1], dst.layout().offset);
    // SAFETY: the validated destination holds an element at its offset.
    let dst_base = unsafe { (dst.data_mut().as_mut_ptr() as *mut T).add(off) };
    let direct = s1 == 1 && s0 >= n as isize && aligned(dst_base);
    let mut buf = Vec::new();
    let (cp, ldc) = if direct {
        (dst_base, s0 as usize)
    } else {
        buf = match try_filled(m * n, T::ZERO, "the destination in acc") {
            Ok(v) => v,
            Err(e) => return Some(Err(e)),
        };
        (buf.as_mut_ptr(), n)
    };
    if let Some(iv) = &iv {
        for i in 0..m {
            for j in 0..n {
                // SAFETY: (i, j) is inside init's [m, n] and C's m × n rows
                // of stride ldc.
                unsafe { *cp.add(i * ldc + j) = iv.at(i, j) };
            }
        }
    } else if order == Order::Lane {
        for i in 0..m {
            for j in 0..n {
                // SAFETY: inside C.
                unsafe { *cp.add(i * ldc + j) = T::ZERO };
            }
        }
    }
    match (order, micro) {
        (Order::Chain, Some(mi)) => {
            let (mr, nr) = (mi.mr, mi.nr);
            let panels = n.div_ceil(nr);
            // b read in place where its columns are consecutive (and
            // aligned), else packed in panels of nr columns (k-major).
            let b_direct = bv.rows == 1 && aligned(bv.base);
            let bp = if b_direct {
                Vec::new()
            } else {
                let mut bp = match try_filled(panels * k * nr, T::ZERO, "a packed operand") {
                    Ok(v) => v,
                    Err(e) => return Some(Err(e)),
                };
                for p in 0..panels {
                    for t in 0..k {
                        for q in 0..nr.min(n - p * nr) {
                            // SAFETY: p·nr + q < n, t < k.
                            bp[(p * k + t) * nr + q] = unsafe { bv.at(p * nr + q, t) };
                        }
                    }
                }
                bp
            };
            let b_step = if b_direct { bv.cols } else { nr as isize };
            // The a panel: written in full (k·mr values) before each use.
            let mut ap_store = core::mem::MaybeUninit::<[T; MAX * 16]>::uninit();
            let ap = ap_store.as_mut_ptr() as *mut T;
            for i0 in (0..m).step_by(mr) {
                let rows = mr.min(m - i0);
                match mi.pack {
                    Some(pack) if av.cols == 1 => {
                        let mut ptrs = [av.base; 16];
                        for (r, q) in ptrs.iter_mut().enumerate().take(rows) {
                            // SAFETY: row i0 + r < m of a.
                            *q = unsafe { av.base.offset((i0 + r) as isize * av.rows) };
                        }
                        // SAFETY: each row holds k consecutive elements; `ap`
                        // holds mr·k ≤ 64·16; the packer is the tier's.
                        unsafe { pack(&ptrs[..rows], k, ap, mr) };
                    }
                    _ => {
                        for t in 0..k {
                            for r in 0..mr {
                                let v = if r < rows {
                                    // SAFETY: i0 + r < m, t < k.
                                    unsafe { av.at(i0 + r, t) }
                                } else {
                                    T::ZERO
                                };
                                // SAFETY: t·mr + r < k·mr ≤ 64·16.
                                unsafe { ap.add(t * mr + r).write(v) };
                            }
                        }
                    }
                }
                for p in 0..panels {
                    let cols = nr.min(n - p * nr);
                    let b = if b_direct {
                        // SAFETY: column p·nr < n of b's step 0.
                        unsafe { bv.base.add(p * nr) }
                    } else {
                        // SAFETY: panel p of the packed b.
                        unsafe { bp.as_ptr().add(p * k * nr) }
                    };
                    // SAFETY: rows i0.., columns p·nr.. of C.
                    let ct = unsafe { cp.add(i0 * ldc + p * nr) };
                    if rows == mr && cols == nr {
                        // SAFETY: `ap` holds k·mr values; b holds nr
                        // readable values per step (k steps of b_step); the
                        // tile is inside C.
                        unsafe { (mi.full)(k, ap, b, b_step, ct, ldc, iv.is_some()) };
                    } else {
                        // SAFETY: `ap` holds k·mr values; b holds `cols`
                        // readable values per step; the edge tile's `rows`
                        // rows and `cols` columns are inside C.
                        unsafe { (mi.edge)(k, ap, b, b_step, ct, ldc, iv.is_some(), rows, cols) };
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
                    // SAFETY: (i, j) is inside C.
                    let o = unsafe { &mut *cp.add(i * ldc + j) };
                    *o = super::lane::block_sum(tier, &row[..k], &col[..k]).plus(*o);
                }
            }
        }
    }
    // Into the destination, through its strides.
    if !direct {
        let base = dst.data_mut().as_mut_ptr() as *mut T;
        for i in 0..m {
            for j in 0..n {
                // SAFETY: (i, j) is inside the validated destination view.
                unsafe {
                    base.add(off)
                        .offset(i as isize * s0 + j as isize * s1)
                        .write_unaligned(buf[i * n + j])
                };
            }
        }
    }
    Some(Ok(()))
}
