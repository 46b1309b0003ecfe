//! `gather_ranges`: runs of rows packed one after another.

use super::{
    check_dst, check_i64, check_same, direct_c, load_c, pos_at, run_parts, store_c, threads_for,
    work_bytes, zeroed, Shared,
};
use crate::array::{count_of, extent_product, ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;

/// The refusals of `starts`', `ends`' and `x`'s shapes.
fn check_shapes(xs: &[usize], starts: &[usize], ends: &[usize]) -> Result<()> {
    let rs = starts.len();
    if rs == 0 {
        return Err(Error::Rank {
            operand: "starts".into(),
            shape: vec![],
            expected: "starts and ends need at least one axis (the runs)".into(),
        });
    }
    if ends != starts {
        return Err(Error::Shape {
            operand: "ends".into(),
            shape: ends.to_vec(),
            target: starts.to_vec(),
        });
    }
    let a = rs - 1;
    let lead = &starts[..a];
    if xs.len() < rs || xs[..a] != *lead {
        let mut t = lead.to_vec();
        t.push(xs.get(a).copied().unwrap_or(0));
        t.extend_from_slice(xs.get(rs..).unwrap_or(&[]));
        return Err(Error::Shape {
            operand: "x".into(),
            shape: xs.to_vec(),
            target: t,
        });
    }
    Ok(())
}

/// The shape of [`gather_ranges`]' destination for an `x` of shape
/// `x_shape`, `starts` and `ends` of shape `runs` and `size` rows per lead
/// index: `[lead…; size; cells…]`, decided from the shapes alone; or the
/// refusal the call would give for these shapes.
///
/// # Errors
/// `runs` of rank 0 ([`Error::Rank`]); an `x` whose leading extents are not
/// `runs`' lead ([`Error::Shape`]); a destination whose element count
/// overflows ([`Error::Overflow`]).
pub fn gather_ranges_shape(x_shape: &[usize], runs: &[usize], size: usize) -> Result<Vec<usize>> {
    check_shapes(x_shape, runs, runs)?;
    let a = runs.len() - 1;
    let mut out = runs[..a].to_vec();
    out.push(size);
    out.extend_from_slice(&x_shape[runs.len()..]);
    count_of(&out, "dst")?;
    Ok(out)
}

/// Pack runs of `x`'s rows along axis `a = rank(starts) − 1` into `dst`.
///
/// `starts` and `ends` are int64 arrays `[lead…; k]`, `x` is
/// `[lead…; n; cells…]` and `dst` `[lead…; size; cells…]`. At each lead
/// index, position p of `dst` along `a` belongs to the first run j whose
/// end `ends[j]` exceeds p, and reads `x`'s row `starts[j] + p − e`, e being
/// `ends[j − 1]` (0 for j = 0), that sum computed in int64 modulo 2^64: it
/// is the exact sum wherever that fits in int64. A position past every
/// end, or one whose row falls outside `[0, n)`, reads the element of zero
/// bits. So where `ends` are the running sums of non-negative lengths, run
/// j copies its `ends[j] − e` rows from `starts[j]`, and runs reaching past
/// `size` are cut there: the ranges never write outside `dst`, whatever
/// their values, and no value of `starts` or `ends` is refused.
///
/// It is a move (bits unchanged), of every dtype, packed sub-byte ones
/// included. The ends are walked once per lead index, in order; each run's
/// rows are one copy (a `memcpy` over C-ordered rows), and threads split
/// the destination's bytes at whole 64-byte lines, so that no two write
/// one line. The result does not depend on threads, tier or layouts.
///
/// # Errors
/// Before any write: `starts` or `ends` not int64, or `x` of another dtype
/// than `dst` ([`Error::DTypeMismatch`]); `starts` of rank 0
/// ([`Error::Rank`]); `ends` of another shape than `starts`, or `x` and
/// `dst` whose lead and cell extents are not `starts`' lead and each
/// other's cells ([`Error::Shape`]); a `dst` that reaches an element twice
/// ([`Error::Layout`]); scratch that cannot be allocated
/// ([`Error::Alloc`]); an unavailable tier.
pub fn gather_ranges(
    x: &ArrayView<'_>,
    starts: &ArrayView<'_>,
    ends: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    exec.resolve_tier()?;
    check_i64(starts.dtype(), "starts")?;
    check_i64(ends.dtype(), "ends")?;
    check_same(x.dtype(), dst.dtype(), "x")?;
    let xs = x.shape();
    let ds = dst.shape();
    check_shapes(xs, starts.shape(), ends.shape())?;
    let rs = starts.shape().len();
    let a = rs - 1;
    let lead = &starts.shape()[..a];
    let k = starts.shape()[a];
    if ds.len() != xs.len() || ds[..a] != *lead || ds[rs..] != xs[rs..] {
        let mut t = lead.to_vec();
        t.push(ds.get(a).copied().unwrap_or(0));
        t.extend_from_slice(&xs[rs..]);
        return Err(Error::Shape {
            operand: "dst".into(),
            shape: ds.to_vec(),
            target: t,
        });
    }
    check_dst(dst, "dst")?;
    let total = count_of(ds, "dst")?;
    count_of(xs, "x")?;
    count_of(starts.shape(), "starts")?;
    if total == 0 {
        return Ok(());
    }
    let nl = extent_product(lead.iter().copied());
    let n = xs[a];
    let size = ds[a];
    let cells = extent_product(xs[rs..].iter().copied());
    let sb = load_c(starts, "starts")?;
    let eb = load_c(ends, "ends")?;
    let segs = segments(&sb, &eb, nl, k, n, size)?;
    let wb = work_bytes(dst.dtype());
    let row_bytes = cells * wb;
    let xb = if n == 0 || cells == 0 {
        std::borrow::Cow::Borrowed(&[][..])
    } else {
        load_c(x, "x")?
    };
    let threads = threads_for(exec, total);
    match direct_c(dst) {
        Some(out) => copy(&segs, &xb, out, row_bytes, threads),
        None => {
            let mut tmp = zeroed(total * wb, "gather_ranges result")?;
            copy(&segs, &xb, &mut tmp, row_bytes, threads);
            store_c(&tmp, dst);
        }
    }
    Ok(())
}

/// One piece of the destination: rows `[row, row + len)` of the flat
/// `[lead · size]` rows, copied from `x`'s flat row `src` on, or zero.
#[derive(Clone, Copy, Debug)]
struct Seg {
    row: usize,
    len: usize,
    src: Option<usize>,
}

fn push(segs: &mut Vec<Seg>, s: Seg) -> Result<()> {
    if s.len == 0 {
        return Ok(());
    }
    crate::alloc::try_reserve(segs, 1, "gather_ranges runs")?;
    segs.push(s);
    Ok(())
}

/// The destination's pieces in increasing row order, covering every row.
fn segments(sb: &[u8], eb: &[u8], nl: usize, k: usize, n: usize, size: usize) -> Result<Vec<Seg>> {
    let mut segs = Vec::new();
    for l in 0..nl {
        let drow = l * size;
        let xrow = l * n;
        let mut cur: i128 = 0;
        let mut prev_end: i64 = 0;
        for j in 0..k {
            let end = pos_at(eb, l * k + j);
            let start = pos_at(sb, l * k + j);
            let e = prev_end;
            prev_end = end;
            let hi = (end as i128).min(size as i128);
            if hi <= cur {
                continue;
            }
            // Row of x for position p: start − e + p in int64 modulo 2^64.
            // With p ≥ 0, a sum that wraps lands below 0, so the positions
            // that read are exactly those with 0 ≤ base + p < n in exact
            // arithmetic.
            let base = start.wrapping_sub(e) as i128;
            let vlo = cur.max(-base).min(hi);
            let vhi = (n as i128 - base).min(hi).max(vlo);
            push(
                &mut segs,
                Seg {
                    row: drow + cur as usize,
                    len: (vlo - cur) as usize,
                    src: None,
                },
            )?;
            if vhi > vlo {
                push(
                    &mut segs,
                    Seg {
                        row: drow + vlo as usize,
                        len: (vhi - vlo) as usize,
                        src: Some(xrow + (base + vlo) as usize),
                    },
                )?;
            }
            push(
                &mut segs,
                Seg {
                    row: drow + vhi as usize,
                    len: (hi - vhi) as usize,
                    src: None,
                },
            )?;
            cur = hi;
        }
        push(
            &mut segs,
            Seg {
                row: drow + cur as usize,
                len: size - cur as usize,
                src: None,
            },
        )?;
    }
    Ok(segs)
}

/// Copy the pieces into `out`, threads splitting its bytes at 64-byte
/// lines of memory.
fn copy(segs: &[Seg], x: &[u8], out: &mut [u8], row_bytes: usize, threads: usize) {
    let len = out.len();
    let addr = out.as_ptr() as usize;
    // Cut points at addresses that are multiples of 64.
    let mut cuts = vec![0usize];
    for t in 1..threads {
        let raw = (len as u128 * t as u128 / threads as u128) as usize;
        let aligned = (addr + raw) & !63;
        let c = aligned
            .saturating_sub(addr)
            .clamp(*cuts.last().unwrap_or(&0), len);
        cuts.push(c);
    }
    cuts.push(len);
    let o = Shared(out.as_mut_ptr());
    // Large results bypass the caches where this host streams (the runs'
    // bytes are the same; plain stores would read every line first).
    let stream = crate::elementwise::stream::run_copier(len);
    run_parts(threads, |t| {
        let (lo, hi) = (cuts[t], cuts[t + 1]);
        if lo >= hi {
            return;
        }
        // The first piece that reaches byte lo.
        let first = segs.partition_point(|s| (s.row + s.len) * row_bytes <= lo);
        for s in &segs[first..] {
            let b0 = s.row * row_bytes;
            if b0 >= hi {
                break;
            }
            let b1 = (s.row + s.len) * row_bytes;
            let (c0, c1) = (b0.max(lo), b1.min(hi));
            // SAFETY: [c0, c1) lies inside [lo, hi), this task's bytes of
            // `out` (the cuts are increasing and within its length), and the
            // source bytes lie inside `x`: a piece's rows were clipped to
            // [0, n) of its lead index.
            unsafe {
                let d = o.get().add(c0);
                match s.src {
                    Some(src) => {
                        let from = x.as_ptr().add(src * row_bytes + (c0 - b0));
                        match &stream {
                            Some(c) => c.copy(from, d, c1 - c0),
                            None => crate::copy::copy_bytes(from, d, c1 - c0),
                        }
                    }
                    None => std::ptr::write_bytes(d, 0, c1 - c0),
                }
            }
        }
        if stream.is_some() {
            crate::elementwise::stream::fence();
        }
    });
}
