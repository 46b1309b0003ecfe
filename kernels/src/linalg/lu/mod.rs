//! The public `lu` call (the factorisation is `factor.rs`).

mod factor;

use super::batch::{
    broadcast_batch, check_destinations, check_dtype, check_shape, count_of, for_each_matrix,
    matrix_of, zeros, Mats, MatsMut,
};
use super::by_dtype;
use super::field::Field;
use super::update::Isa;
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::DType;

/// The LU factorisation with partial pivoting of each matrix of `a`
/// (`[batch…, m, n]`): into `lu` (`[batch…, m, n]`, a's dtype) the unit
/// lower triangular L below the diagonal (its ones unstored) and the upper
/// triangular U on and above it; into `pivots` (`[batch…, min(m, n)]`,
/// i64) the row swapped with row j at step j; into `permutation`
/// (`[batch…, m]`, i64) the row of a that each row of L·U is.
///
/// **Pivots.** Column j's search starts at row j and moves to a later row
/// only where that row's magnitude (`|re| + |im|` on complex dtypes) is
/// strictly greater than the current one's; a NaN is never greater, and
/// nothing is greater than a NaN. A zero pivot stays in U and its column of
/// L is not divided (the matrix is singular; nothing is NaN for it).
///
/// **Order and bound.** Each element is `a_ij − Σ_{k<min(i,j)} l_ik·u_kj`, a
/// chain of fused steps in increasing k, divided by the pivot below the
/// diagonal, whatever the blocking or the threads; `L U = P a + Δ` with
/// `|Δ_ij| ≤ γ(2k)·(|L||U|)_ij + ε(2k)·(1 + |U_pp|)`, p = min(i, j), k =
/// min(m, n). Refusals: the module's, and pivots or permutation not i64
/// ([`Error::DTypeMismatch`]) or of another shape ([`Error::Shape`]).
pub fn lu(
    a: &ArrayView<'_>,
    lu: &mut ArrayViewMut<'_>,
    pivots: &mut ArrayViewMut<'_>,
    permutation: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => run::<T>(a, lu, pivots, permutation, isa, exec))
}

fn index_dtype(name: &str, got: DType) -> Result<()> {
    if got != DType::I64 {
        return Err(Error::DTypeMismatch {
            operand: name.into(),
            expected: DType::I64,
            got,
        });
    }
    Ok(())
}

fn run<T: Field>(
    a: &ArrayView<'_>,
    lu: &mut ArrayViewMut<'_>,
    pivots: &mut ArrayViewMut<'_>,
    permutation: &mut ArrayViewMut<'_>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    check_dtype::<T>("lu", lu.dtype())?;
    index_dtype("pivots", pivots.dtype())?;
    index_dtype("permutation", permutation.dtype())?;
    let (m, n) = matrix_of("a", a.shape())?;
    let k = m.min(n);
    let batch = broadcast_batch(&[("a", a.shape(), 2)])?;
    check_shape("lu", lu.shape(), &batch, &[m, n])?;
    check_shape("pivots", pivots.shape(), &batch, &[k])?;
    check_shape("permutation", permutation.shape(), &batch, &[m])?;
    check_destinations(
        &[("lu", lu), ("pivots", pivots), ("permutation", permutation)],
        &[a],
    )?;
    let count = count_of(&batch)?;
    let mn = m.checked_mul(n).ok_or(Error::Overflow {
        operand: "a".into(),
    })?;
    let src = Mats::new(a, 2, &batch)?;
    let out = MatsMut::new(lu, 2, &batch)?;
    let piv_out = MatsMut::new(pivots, 1, &batch)?;
    let perm_out = MatsMut::new(permutation, 1, &batch)?;
    type Work<T> = (Vec<T>, Vec<T>, Vec<T>, Vec<usize>, Vec<usize>, Vec<i64>);
    let make = || -> Result<Work<T>> {
        Ok((
            zeros(mn, "lu work")?,
            zeros(factor::tmp_len(m, n), "lu work")?,
            zeros(factor::neg_len(m, n), "lu work")?,
            crate::alloc::try_zeroed(k, "lu pivots")?,
            crate::alloc::try_zeroed(m, "lu permutation")?,
            zeros(m, "lu indices")?,
        ))
    };
    for_each_matrix(
        count,
        make,
        exec,
        |b, (w, tmp, neg, piv, perm, idx), inner| {
            src.read(b, w);
            factor::factor(m, n, w, piv, perm, tmp, neg, isa, inner);
            // SAFETY: the destinations were validated, are of T's and i64's
            // dtypes (checked), reach no element twice and do not overlap
            // (checked) and are borrowed mutably for this call; batch index b
            // is this task's alone.
            unsafe {
                out.write(b, w, m);
                for (x, &p) in idx.iter_mut().zip(piv.iter()) {
                    *x = p as i64;
                }
                piv_out.write(b, &idx[..k], k);
                for (x, &p) in idx.iter_mut().zip(perm.iter()) {
                    *x = p as i64;
                }
                perm_out.write(b, &idx[..m], m);
            }
        },
    )
}
