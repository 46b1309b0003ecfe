//! Eight triangular solves at once, one per lane
//! ([`crate::linalg::lanes`]): the base block of `solve.rs`, step for step
//! (row c divided by its diagonal, then subtracted from each later row
//! times its multiplier, `acc − l_ic·x_c` by [`Field::fms`]).

use crate::linalg::field::Field;
use crate::linalg::lanes::{lane_loop, LANES};
use crate::linalg::update::tiered;

tiered!(
    /// Solve `M X = B` for eight `n × n` lower triangular M held lane by
    /// lane in `m` (element (i, j) at `m[i + j·n]`) and eight `n × r` X in
    /// `x` (element (i, q) at `x[i + q·n]`, B on entry), no division where
    /// `unit`. Compiled whole per instruction set.
    solve, solve_body, (n: usize, r: usize, unit: bool, m: &[[T; LANES]], x: &mut [[T; LANES]])
);

#[inline(always)]
fn solve_body<T: Field>(n: usize, r: usize, unit: bool, m: &[[T; LANES]], x: &mut [[T; LANES]]) {
    let m = &m[..n * n];
    let x = &mut x[..n * r];
    for c in 0..n {
        if !unit {
            let d = m[c + c * n];
            for q in 0..r {
                lane_loop();
                let v = &mut x[c + q * n];
                for l in 0..LANES {
                    v[l] = v[l].div(d[l]);
                }
            }
        }
        for q in 0..r {
            let col = &mut x[q * n..(q + 1) * n];
            let (done, later) = col.split_at_mut(c + 1);
            let xc = done[c];
            for (y, s) in later.iter_mut().zip(&m[c + 1 + c * n..(c + 1) * n]) {
                lane_loop();
                for l in 0..LANES {
                    y[l] = T::fms(y[l], s[l], xc[l]);
                }
            }
        }
    }
}
