//! The public `cholesky` call (the factorisation is `factor.rs`).

mod factor;
mod lanes;

use super::batch::{
    broadcast_batch, check_destinations, check_dtype, check_shape, count_of, for_each_matrix,
    square_of, zeros, Mats, MatsMut,
};
use super::field::Field;
use super::lanes::{put, take, use_lanes, LANES};
use super::update::Isa;
use super::{by_dtype, Triangle};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::Result;
use crate::tier::Exec;

/// The Cholesky factor of each Hermitian positive definite matrix of `a`
/// (`[batch…, n, n]`) into `dst` (`[batch…, n, n]`, a's dtype): L with
/// `a = L Lᴴ` under [`Triangle::Lower`], `U = Lᴴ` under
/// [`Triangle::Upper`] (the lower factor's conjugate transpose, bit for
/// bit), +0 in the other triangle, the diagonal real and positive.
///
/// Reads a's lower triangle and the real parts of its diagonal alone,
/// whatever `triangle`. A matrix whose factorisation meets a pivot that is
/// not positive, or NaN, is NaN.
///
/// **Order and bound.** `l_ij = (a_ij − Σ_{k<j} l_ik·conj(l_jk)) / l_jj` and
/// `l_jj = √re(a_jj − Σ_{k<j} |l_jk|²)`, each sum a chain of fused steps in
/// increasing k ([`Field`]'s `fms`), whatever the blocking or the threads;
/// `L Lᴴ = a + Δ` with `|Δ_ij| ≤ γ(n + 1)·(|L||Lᴴ|)_ij + ε(n + 1)·(1 + L_jj)`.
/// Refusals: the module's.
pub fn cholesky(
    triangle: Triangle,
    a: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => run::<T>(triangle, a, dst, isa, exec))
}

fn run<T: Field>(
    triangle: Triangle,
    a: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    check_dtype::<T>("dst", dst.dtype())?;
    let n = square_of("a", a.shape())?;
    let batch = broadcast_batch(&[("a", a.shape(), 2)])?;
    check_shape("dst", dst.shape(), &batch, &[n, n])?;
    check_destinations(&[("dst", dst)], &[a])?;
    let count = count_of(&batch)?;
    let nn = n.checked_mul(n).ok_or(crate::Error::Overflow {
        operand: "a".into(),
    })?;
    let src = Mats::new(a, 2, &batch)?;
    let out = MatsMut::new(dst, 2, &batch)?;
    // Matrix b from the column-major factor `w` (`ok`: its pivots were
    // positive).
    let emit = |b: usize, w: &mut [T], ok: bool| {
        // +0 above the diagonal.
        for j in 1..n {
            w[j * n..j * n + j].fill(T::ZERO);
        }
        let w = &*w;
        // SAFETY: `dst` was validated, is of T's dtype (checked), reaches no
        // element twice (checked) and is borrowed mutably for this call;
        // batch index b is this task's alone.
        unsafe {
            if !ok {
                out.write_with(b, |_, _| T::nan());
            } else if triangle == Triangle::Lower {
                out.write(b, w, n);
            } else {
                // Uᵢⱼ = conj(Lⱼᵢ), and +0 below the diagonal.
                out.write_with(b, |i, j| if i <= j { w[j + i * n].conj() } else { T::ZERO });
            }
        }
    };
    // a's matrix b into `w`, the imaginary parts of its diagonal dropped.
    let load = |b: usize, w: &mut [T]| {
        src.read(b, w);
        for j in 0..n {
            w[j + j * n] = T::from_real(w[j + j * n].re());
        }
    };
    if use_lanes(n, count) {
        let make = || -> Result<(Vec<T>, Vec<[T; LANES]>)> {
            Ok((
                zeros(nn, "cholesky work")?,
                crate::alloc::try_filled(nn, [T::ZERO; LANES], "cholesky work")?,
            ))
        };
        return for_each_matrix(count.div_ceil(LANES), make, exec, |g, (w, x), _| {
            let lanes = g * LANES..(g * LANES + LANES).min(count);
            for (l, b) in lanes.clone().enumerate() {
                load(b, w);
                put(x, l, w);
            }
            let mut bad = [false; LANES];
            lanes::factor(isa, n, x, &mut bad);
            for (l, b) in lanes.enumerate() {
                take(x, l, w);
                emit(b, w, !bad[l]);
            }
        });
    }
    let make = || -> Result<(Vec<T>, Vec<T>, Vec<T>)> {
        Ok((
            zeros(nn, "cholesky work")?,
            zeros(factor::tmp_len(n), "cholesky work")?,
            zeros(factor::neg_len(n), "cholesky work")?,
        ))
    };
    for_each_matrix(count, make, exec, |b, (w, tmp, neg), inner| {
        load(b, w);
        let ok = factor::factor(n, w, n, tmp, neg, isa, inner);
        emit(b, w, ok);
    })
}
