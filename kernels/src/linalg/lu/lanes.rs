//! Eight LU factorisations at once, one per lane
//! ([`crate::linalg::lanes`]): the panel of `factor.rs` over the whole
//! matrix, step for step (each lane's pivot searched, its rows swapped,
//! its column divided and the later columns updated with the same chains).

use crate::linalg::field::Field;
use crate::linalg::lanes::{lane_loop, LANES};
use crate::linalg::update::tiered;

tiered!(
    /// Factor eight `n × n` matrices held lane by lane in `x` (element
    /// (i, j) at `x[i + j·n]`) in place, writing each lane's pivots
    /// (`pivots[c][l]`) and permutation (`perm[i][l]`, started here).
    /// Compiled whole per instruction set.
    factor, factor_body,
    (n: usize, x: &mut [[T; LANES]], pivots: &mut [[usize; LANES]], perm: &mut [[usize; LANES]])
);

#[inline(always)]
fn factor_body<T: Field>(
    n: usize,
    x: &mut [[T; LANES]],
    pivots: &mut [[usize; LANES]],
    perm: &mut [[usize; LANES]],
) {
    let x = &mut x[..n * n];
    for (i, p) in perm[..n].iter_mut().enumerate() {
        *p = [i; LANES];
    }
    for c in 0..n {
        // The pivot: strictly greater magnitudes only, NaN never greater
        // and nothing greater than NaN (`factor.rs`'s `greater`).
        let mut p = [c; LANES];
        let mut best = x[c + c * n].map(|v| v.abs1());
        for r in c + 1..n {
            lane_loop();
            let v = x[r + c * n].map(|v| v.abs1());
            for l in 0..LANES {
                if !best[l].is_nan() && v[l] > best[l] {
                    best[l] = v[l];
                    p[l] = r;
                }
            }
        }
        pivots[c] = p;
        for l in 0..LANES {
            let r = p[l];
            if r != c {
                for q in 0..n {
                    let t = x[c + q * n][l];
                    x[c + q * n][l] = x[r + q * n][l];
                    x[r + q * n][l] = t;
                }
                let t = perm[c][l];
                perm[c][l] = perm[r][l];
                perm[r][l] = t;
            }
        }
        let piv = x[c + c * n];
        for e in &mut x[c + 1 + c * n..(c + 1) * n] {
            lane_loop();
            for l in 0..LANES {
                // A zero pivot leaves its column undivided.
                if piv[l] != T::ZERO {
                    e[l] = e[l].div(piv[l]);
                }
            }
        }
        let (left, right) = x.split_at_mut((c + 1) * n);
        let lcol = &left[c * n..];
        for c2 in c + 1..n {
            let o = (c2 - c - 1) * n;
            let s = right[o + c];
            for (y, li) in right[o + c + 1..o + n].iter_mut().zip(&lcol[c + 1..n]) {
                lane_loop();
                for l in 0..LANES {
                    y[l] = T::fms(y[l], li[l], s[l]);
                }
            }
        }
    }
}
