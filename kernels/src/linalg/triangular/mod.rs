//! The public `solve_triangular` call (the substitution is `solve.rs`).

mod solve;

pub(crate) use solve::{half, lower_left, BASE};

use super::batch::{
    broadcast_batch, check_destinations, check_dtype, check_shape, count_of, for_each_matrix,
    matrix_of, square_of, zeros, Mats, MatsMut,
};
use super::field::Field;
use super::update::Isa;
use super::{by_dtype, Triangle};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;

/// x with `a x = b` (or `aᴴ x = b` under `adjoint`) for each triangular
/// matrix of `a` (`[batch…, n, n]`) and right-hand sides `b`
/// (`[batch…, n, r]`), into `x` (`[batch…, n, r]`, the broadcast batch),
/// all of one dtype.
///
/// Reads a's triangle `triangle` alone, without its diagonal under
/// `unit_diagonal` (whose ones it takes instead). A zero on a diagonal it
/// reads makes that matrix's x NaN. Each matrix's a and b are read into
/// copies the call holds before its x is written.
///
/// **Order and bound.** With op a the triangle read (conjugate-transposed
/// under `adjoint`), `x_i = (b_i − Σ_k (op a)_ik·x_k) / (op a)_ii` over the
/// k already solved, in the order of solving (increasing i for a lower op
/// a, decreasing for an upper one), the sum a chain of fused steps,
/// whatever the blocking or the threads; `(op a + Δ) x = b + δ` with
/// `|Δ| ≤ γ(2n)·|op a|` and `|δ_i| ≤ ε(2n)·(1 + |(op a)_ii|)` for each column
/// of b. Refusals: the module's.
pub fn solve_triangular(
    triangle: Triangle,
    adjoint: bool,
    unit_diagonal: bool,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    x: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => run::<T>((triangle, adjoint, unit_diagonal), a, b, x, isa, exec))
}

fn run<T: Field>(
    (triangle, adjoint, unit): (Triangle, bool, bool),
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    x: &mut ArrayViewMut<'_>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    check_dtype::<T>("b", b.dtype())?;
    check_dtype::<T>("x", x.dtype())?;
    let n = square_of("a", a.shape())?;
    let (bn, r) = matrix_of("b", b.shape())?;
    if bn != n {
        let mut target = b.shape().to_vec();
        let len = target.len();
        target[len - 2] = n;
        return Err(Error::Shape {
            operand: "b".into(),
            shape: b.shape().to_vec(),
            target,
        });
    }
    let batch = broadcast_batch(&[("a", a.shape(), 2), ("b", b.shape(), 2)])?;
    check_shape("x", x.shape(), &batch, &[n, r])?;
    check_destinations(&[("x", x)], &[a, b])?;
    let count = count_of(&batch)?;
    let overflow = || Error::Overflow {
        operand: "a".into(),
    };
    let nn = n.checked_mul(n).ok_or_else(overflow)?;
    let nr = n.checked_mul(r).ok_or_else(overflow)?;
    // Room for the copy of the upper rows at the first split, and for a
    // block of rows solved at once (rows padded by eight elements).
    let tmp_len = half(n)
        .max(BASE.min(n))
        .checked_mul(r.checked_add(8).ok_or_else(overflow)?)
        .ok_or_else(overflow)?;
    // The solve runs forward on M = op a, rows and columns reversed where
    // op a is upper triangular: a read transposed under adjoint (and
    // conjugated), reversed where upper.
    let upper = (triangle == Triangle::Upper) != adjoint;
    let mut src_a = Mats::new(a, 2, &batch)?;
    if adjoint {
        src_a = src_a.transposed();
    }
    let mut src_b = Mats::new(b, 2, &batch)?;
    let mut out = MatsMut::new(x, 2, &batch)?;
    if upper {
        src_a = src_a.reversed(true);
        src_b = src_b.reversed(false);
        out = out.rows_reversed();
    }
    // op a's matrix bi into `m` as M's lower triangle (conjugated under
    // adjoint, ones on the diagonal under unit_diagonal); true where M has a
    // zero on its diagonal.
    let load = |bi: usize, m: &mut [T]| -> bool {
        src_a.read(bi, m);
        let mut singular = false;
        for j in 0..n {
            let col = &mut m[j * n..(j + 1) * n];
            col[..j].fill(T::ZERO);
            if adjoint {
                for v in &mut col[j..] {
                    *v = v.conj();
                }
            }
            if unit {
                col[j] = T::ONE;
            }
            singular |= col[j] == T::ZERO;
        }
        singular
    };
    let emit = |bi: usize, xs: &[T], singular: bool| {
        // SAFETY: x was validated, is of T's dtype (checked), reaches no
        // element twice and overlaps neither a nor b (checked), and is
        // borrowed mutably for this call; batch index bi is this task's
        // alone.
        unsafe {
            if singular {
                out.write_with(bi, |_, _| T::nan());
            } else {
                out.write(bi, xs, n);
            }
        }
    };
    type Work<T> = (Vec<T>, Vec<T>, Vec<T>, Vec<T>);
    let make = || -> Result<Work<T>> {
        Ok((
            zeros(nn, "solve_triangular work")?,
            zeros(nr, "solve_triangular work")?,
            zeros(tmp_len, "solve_triangular work")?,
            zeros(n * n / 4 + 1, "solve_triangular work")?,
        ))
    };
    for_each_matrix(count, make, exec, |bi, (m, xs, tmp, neg), inner| {
        let singular = load(bi, m);
        if !singular {
            src_b.read(bi, xs);
            lower_left((n, r), m, n, unit, xs, n, tmp, neg, isa, inner);
        }
        emit(bi, xs, singular);
    })
}
