//! Forward substitution `L X = B` in column-major buffers: the one lower
//! triangular solve every routine uses (`solve_triangular` reduces its
//! other cases to it; lu solves its rows of U with it).
//!
//! **Order.** `x_i = (b_i − Σ_{k<i} l_ik·x_k) / l_ii` (no division on a unit
//! diagonal), the sum a chain of [`Field::fms`] steps `acc − l_ik·x_k` in
//! increasing k from b_i. Recursive: the rows split in halves (at a size
//! that depends on the order alone), the lower half updated through
//! [`gemm_sub`] with the same chains; blocks of at most [`BASE`] rows run
//! row by row across the right-hand sides. Neither the split nor the
//! threads change a bit.

use crate::linalg::field::Field;
use crate::linalg::update::{axpy_inline, gemm_sub, tiered, Isa, Op};
use crate::tier::Exec;

/// The largest block solved without splitting.
pub(crate) const BASE: usize = 32;

/// The split of `p` rows (a multiple of 8 near the middle).
pub(crate) fn half(p: usize) -> usize {
    (p / 2).div_ceil(8) * 8
}

/// Solve `L X = B` in place of `x` (`p × r`, column-major, leading
/// dimension `ldx`), L `p × p` lower triangular (column-major, leading
/// dimension `ldl`, ones on its diagonal taken where `unit`). `tmp` holds
/// at least `max(half(p), min(p, BASE))·r` elements (the copy of the upper
/// rows at a split, a block of rows at the base; `r + 8` in place of r
/// keeps the base's rows off one cache set), `neg` `p²/4 + 1`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn lower_left<T: Field>(
    (p, r): (usize, usize),
    l: &[T],
    ldl: usize,
    unit: bool,
    x: &mut [T],
    ldx: usize,
    tmp: &mut [T],
    neg: &mut [T],
    isa: Isa,
    exec: &Exec,
) {
    if p == 0 || r == 0 {
        return;
    }
    if p <= BASE {
        base(isa, p, r, l, ldl, unit, x, ldx, tmp);
        return;
    }
    let p1 = half(p);
    let p2 = p - p1;
    lower_left((p1, r), l, ldl, unit, x, ldx, tmp, neg, isa, exec);
    // X₂ ← X₂ − L₂₁·X₁, from a copy of X₁ (it shares columns with X₂).
    let t = &mut tmp[..p1 * r];
    for q in 0..r {
        t[q * p1..(q + 1) * p1].copy_from_slice(&x[q * ldx..q * ldx + p1]);
    }
    gemm_sub(
        isa,
        (p2, r, p1),
        Op::plain(&l[p1..], ldl),
        Op::plain(t, p1),
        &mut x[p1..],
        ldx,
        neg,
        exec,
    );
    lower_left(
        (p2, r),
        &l[p1 + p1 * ldl..],
        ldl,
        unit,
        &mut x[p1..],
        ldx,
        tmp,
        neg,
        isa,
        exec,
    );
}

tiered!(
    /// A block of at most [`BASE`] rows: its rows copied out (each
    /// contiguous across the right-hand sides), solved row by row, copied
    /// back; compiled whole per instruction set.
    base, base_body,
    (p: usize, r: usize, l: &[T], ldl: usize, unit: bool, x: &mut [T], ldx: usize, tmp: &mut [T])
);

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn base_body<T: Field>(
    p: usize,
    r: usize,
    l: &[T],
    ldl: usize,
    unit: bool,
    x: &mut [T],
    ldx: usize,
    tmp: &mut [T],
) {
    // Rows `rr` apart: eight elements more than r where tmp has room, so
    // that a power-of-two r does not put every row in one cache set.
    let rr = if tmp.len() >= p * (r + 8) { r + 8 } else { r };
    let rows = &mut tmp[..p * rr];
    for q in 0..r {
        for c in 0..p {
            rows[c * rr + q] = x[c + q * ldx];
        }
    }
    for c in 0..p {
        let (done, later) = rows.split_at_mut((c + 1) * rr);
        let row = &mut done[c * rr..c * rr + r];
        if !unit {
            let d = l[c + c * ldl];
            for v in row.iter_mut() {
                *v = v.div(d);
            }
        }
        for i in c + 1..p {
            let o = (i - c - 1) * rr;
            axpy_inline::<T, true>(&mut later[o..o + r], row, l[i + c * ldl]);
        }
    }
    for q in 0..r {
        for c in 0..p {
            x[c + q * ldx] = rows[c * rr + q];
        }
    }
}
