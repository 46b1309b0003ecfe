//! The public `qr` call (reflectors in `householder.rs`, the factorisation
//! and q's forming in `factor.rs`).

pub(crate) mod factor;
pub(crate) mod householder;

use super::batch::{
    broadcast_batch, check_destinations, check_dtype, count_of, for_each_matrix, matrix_of, zeros,
    Mats, MatsMut,
};
use super::by_dtype;
use super::field::Field;
use super::update::Isa;
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;

/// The Householder QR factorisation of each matrix of `a`
/// (`[batch…, m, n]`, k = min(m, n)): `a = q r` with q's columns
/// orthonormal and r upper triangular (+0 below its diagonal, its diagonal
/// real, of either sign). Reduced where q is `[batch…, m, k]` and r
/// `[batch…, k, n]`; complete where q is `[batch…, m, m]` and r
/// `[batch…, m, n]`. q is the product of k reflectors `I − τ v vᴴ`, its
/// first k columns when reduced, whole when complete.
///
/// **Bound.** With g = γ(k(2m + 10)) and h = ε(k(2m + 10)), each column has
/// `‖a_j − q r_j‖₂ ≤ g‖a_j‖₂ + √m·h` and each element of `qᴴq − I` is at
/// most g in magnitude. The reflectors' sums are in a fixed lane order of
/// their length alone, whatever the tier or the threads. Refusals: the
/// module's, and q and r whose extents are neither the reduced nor the
/// complete ones ([`Error::Shape`]).
pub fn qr(
    a: &ArrayView<'_>,
    q: &mut ArrayViewMut<'_>,
    r: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => run::<T>(a, q, r, isa, exec))
}

fn run<T: Field>(
    a: &ArrayView<'_>,
    q: &mut ArrayViewMut<'_>,
    r: &mut ArrayViewMut<'_>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    check_dtype::<T>("q", q.dtype())?;
    check_dtype::<T>("r", r.dtype())?;
    let (m, n) = matrix_of("a", a.shape())?;
    let k = m.min(n);
    let batch = broadcast_batch(&[("a", a.shape(), 2)])?;
    let (_, qc) = matrix_of("q", q.shape())?;
    let qc = if qc == m { m } else { k };
    let want_q: Vec<usize> = batch.iter().copied().chain([m, qc]).collect();
    let want_r: Vec<usize> = batch.iter().copied().chain([qc, n]).collect();
    if q.shape() != want_q.as_slice() {
        return Err(Error::Shape {
            operand: "q".into(),
            shape: q.shape().to_vec(),
            target: want_q,
        });
    }
    if r.shape() != want_r.as_slice() {
        return Err(Error::Shape {
            operand: "r".into(),
            shape: r.shape().to_vec(),
            target: want_r,
        });
    }
    check_destinations(&[("q", q), ("r", r)], &[a])?;
    let count = count_of(&batch)?;
    let overflow = || Error::Overflow {
        operand: "a".into(),
    };
    let mn = m.checked_mul(n).ok_or_else(overflow)?;
    let mq = m.checked_mul(qc).ok_or_else(overflow)?;
    let src = Mats::new(a, 2, &batch)?;
    let q_out = MatsMut::new(q, 2, &batch)?;
    let r_out = MatsMut::new(r, 2, &batch)?;
    type Work<T> = (Vec<T>, Vec<T>, Vec<T>, Vec<T>);
    let make = || -> Result<Work<T>> {
        Ok((
            zeros(mn, "qr work")?,
            zeros(k, "qr work")?,
            zeros(mq, "qr work")?,
            zeros(factor::work_len(m, n, qc), "qr work")?,
        ))
    };
    for_each_matrix(count, make, exec, |b, (w, tau, qs, work), inner| {
        src.read(b, w);
        factor::factor(m, n, w, tau, work, isa, inner);
        factor::form_q(m, k, w, tau, qs, qc, work, isa, inner);
        let (w, qs) = (&*w, &*qs);
        // SAFETY: q and r were validated, are of T's dtype (checked), reach
        // no element twice and do not overlap (checked), and are borrowed
        // mutably for this call; batch index b is this task's alone.
        unsafe {
            q_out.write(b, qs, m);
            r_out.write_with(b, |i, j| {
                if i <= j && i < k {
                    w[i + j * m]
                } else {
                    T::ZERO
                }
            });
        }
    })
}
