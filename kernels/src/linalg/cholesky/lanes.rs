//! Eight Cholesky factorisations at once, one per lane
//! ([`crate::linalg::lanes`]): the right-looking unblocked algorithm of
//! `factor.rs`, step for step.

use crate::linalg::field::{Field, Real};
use crate::linalg::lanes::LANES;
use crate::linalg::update::tiered;

tiered!(
    /// Factor eight `n × n` matrices held lane by lane in `x` (element
    /// (i, j) at `x[i + j·n]`), in place; `bad[l]` set where lane l met a
    /// pivot that is not positive, or NaN (its lane then holds what means
    /// nothing). Compiled whole per instruction set.
    factor, factor_body, (n: usize, x: &mut [[T; LANES]], bad: &mut [bool; LANES])
);

#[inline(always)]
fn factor_body<T: Field>(n: usize, x: &mut [[T; LANES]], bad: &mut [bool; LANES]) {
    let x = &mut x[..n * n];
    for c in 0..n {
        let d = x[c + c * n];
        let mut s = [T::Real::ZERO; LANES];
        for l in 0..LANES {
            let v = d[l].re();
            // NaN or not positive: the one-matrix algorithm stops there.
            bad[l] |= v.is_nan() || v <= T::Real::ZERO;
            s[l] = v.sqrt();
        }
        x[c + c * n] = s.map(T::from_real);
        for e in &mut x[c + 1 + c * n..(c + 1) * n] {
            for l in 0..LANES {
                e[l] = e[l].div_real(s[l]);
            }
        }
        let (left, right) = x.split_at_mut((c + 1) * n);
        let col = &left[c * n..];
        for c2 in c + 1..n {
            let sc = col[c2].map(|v| v.conj());
            let o = (c2 - c - 1) * n;
            for (y, xi) in right[o + c2..o + n].iter_mut().zip(&col[c2..n]) {
                for l in 0..LANES {
                    y[l] = T::fms(y[l], xi[l], sc[l]);
                }
            }
        }
    }
}
