//! `gather`: one position per destination element.

use super::{
    check_axis, check_dst, check_i64, check_same, check_shape_but, direct_c, load_c, pos_at,
    run_parts, split_range, store_c, threads_for, work_bytes, zeroed, Shared,
};
use crate::array::{count_of, extent_product, ArrayView, ArrayViewMut};
use crate::error::Result;
use crate::tier::Exec;
use crate::DType;

/// Whether [`gather`] of `x` (shape, dtype) at `positions` into `dst` fits,
/// decided from shapes and dtypes alone (no data, no work): `Ok` exactly
/// where `gather` would run, but for the destination's layout (one that
/// reaches an element twice) and the tier, which need the view and the
/// `Exec`. Errors as [`gather`]'s.
pub fn gather_query(
    axis: usize,
    x: (&[usize], DType),
    positions: (&[usize], DType),
    dst: (&[usize], DType),
) -> Result<()> {
    check_i64(positions.1, "positions")?;
    check_same(x.1, dst.1, "x")?;
    check_axis(axis, dst.0.len(), "dst")?;
    check_shape_but(positions.0, dst.0, None, "positions")?;
    check_shape_but(x.0, dst.0, Some(axis), "x")?;
    count_of(dst.0, "dst")?;
    count_of(x.0, "x")?;
    Ok(())
}

/// Gather `x` along `axis` at `positions` into `dst`.
///
/// `dst`'s element at index j is `x`'s element at j with its index along
/// `axis` replaced by `positions`' element at j; a position outside
/// `[0, d)`, d `x`'s extent along `axis`, reads the element of zero bits
/// (+0, false, 0 + 0i, code 0). Bits are copied unchanged, NaN payloads
/// included. Every dtype is taken, the packed sub-byte ones too.
///
/// Shapes: `positions` has `dst`'s shape; `x` has `dst`'s rank and extents
/// but along `axis`, where its extent d is any (0 included: every element
/// then reads zero bits).
///
/// Threads split the destination's rows; the result does not depend on
/// them, on the tier or on the layouts.
///
/// # Errors
/// Before any write: `positions` not int64 or `x` of another dtype than
/// `dst` ([`crate::Error::DTypeMismatch`]); `axis` not below `dst`'s rank
/// ([`crate::Error::Axis`]); shapes that do not fit as above
/// ([`crate::Error::Shape`]); a `dst` that reaches an element twice
/// ([`crate::Error::Layout`]); scratch that cannot be allocated
/// ([`crate::Error::Alloc`]); an unavailable tier.
pub fn gather(
    axis: usize,
    x: &ArrayView<'_>,
    positions: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    exec.resolve_tier()?;
    gather_query(
        axis,
        (x.shape(), x.dtype()),
        (positions.shape(), positions.dtype()),
        (dst.shape(), dst.dtype()),
    )?;
    check_dst(dst, "dst")?;
    let n = count_of(dst.shape(), "dst")?;
    if n == 0 {
        return Ok(());
    }
    let shape = dst.shape().to_vec();
    let geom = Geom {
        m: shape[axis],
        inner: extent_product(shape[axis + 1..].iter().copied()),
        d: x.shape()[axis],
    };
    let wb = work_bytes(dst.dtype());
    let xb = load_c(x, "x")?;
    let pb = load_c(positions, "positions")?;
    let threads = threads_for(exec, n);
    match direct_c(dst) {
        Some(out) => run(&geom, &xb, &pb, out, wb, threads),
        None => {
            let mut tmp = zeroed(n * wb, "gather result")?;
            run(&geom, &xb, &pb, &mut tmp, wb, threads);
            store_c(&tmp, dst);
        }
    }
    Ok(())
}

/// The C-ordered geometry: `x` is `[outer; d; inner]`, positions and the
/// destination `[outer; m; inner]`.
struct Geom {
    m: usize,
    inner: usize,
    d: usize,
}

fn run(g: &Geom, x: &[u8], pos: &[u8], out: &mut [u8], wb: usize, threads: usize) {
    match wb {
        1 => run_t::<1>(g, x, pos, out, threads),
        2 => run_t::<2>(g, x, pos, out, threads),
        4 => run_t::<4>(g, x, pos, out, threads),
        8 => run_t::<8>(g, x, pos, out, threads),
        _ => run_t::<16>(g, x, pos, out, threads),
    }
}

fn run_t<const B: usize>(g: &Geom, x: &[u8], pos: &[u8], out: &mut [u8], threads: usize) {
    let n = out.len() / B;
    let parts = split_range(n, threads, 64);
    let o = Shared(out.as_mut_ptr());
    run_parts(parts.len(), |t| {
        let (lo, hi) = parts[t];
        // SAFETY: the parts are disjoint ranges of the n elements of `out`,
        // so each task writes its own bytes; `out` outlives the tasks.
        unsafe { part::<B>(g, x, pos, o.get(), lo, hi) }
    });
}

/// Elements `[lo, hi)` of the destination.
///
/// # Safety
/// `out` holds at least `hi` elements of B bytes, and no other task writes
/// elements `[lo, hi)`.
#[inline(never)]
unsafe fn part<const B: usize>(g: &Geom, x: &[u8], pos: &[u8], out: *mut u8, lo: usize, hi: usize) {
    let (m, inner, d) = (g.m, g.inner, g.d);
    let xp = x.as_ptr();
    if inner == 1 {
        // Gather along the last axis: rows of m positions over rows of d.
        let mut j = lo;
        while j < hi {
            let row = j / m;
            let end = ((row + 1) * m).min(hi);
            let xrow = row * d;
            while j < end {
                let p = pos_at(pos, j);
                let v = if (p as u64) < d as u64 {
                    // SAFETY: the source element (row, p) lies inside the
                    // [outer; d] buffer `x`, p being below d.
                    unsafe { (xp.add((xrow + p as usize) * B) as *const [u8; B]).read_unaligned() }
                } else {
                    [0u8; B]
                };
                // SAFETY: j < hi, inside `out`, a part this task owns.
                unsafe { (out.add(j * B) as *mut [u8; B]).write_unaligned(v) };
                j += 1;
            }
        }
        return;
    }
    for j in lo..hi {
        let i = j % inner;
        let row = j / inner / m;
        let p = pos_at(pos, j);
        let v = if (p as u64) < d as u64 {
            // SAFETY: (row, p, i) indexes the [outer; d; inner] buffer `x`.
            unsafe {
                (xp.add(((row * d + p as usize) * inner + i) * B) as *const [u8; B])
                    .read_unaligned()
            }
        } else {
            [0u8; B]
        };
        // SAFETY: j < hi, inside `out`, a part this task owns.
        unsafe { (out.add(j * B) as *mut [u8; B]).write_unaligned(v) };
    }
}
