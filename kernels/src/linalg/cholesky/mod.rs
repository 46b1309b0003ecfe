//! The public `cholesky` call (the factorisation is `factor.rs`).

mod factor;
mod lanes;

use super::batch::{
    broadcast_batch, check_destinations, check_dtype, check_shape, count_of, square_of, Mats,
    MatsMut,
};
use super::field::Field;
use super::lanes::{use_lanes, LANES};
use super::update::Isa;
use super::work::{blocks_of, for_each_matrix, Areas, Carve, Planned};
use super::{by_dtype, Triangle};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::Result;
use crate::tier::Exec;
use crate::{DType, Scratch};

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
    run_in(triangle, a, dst, Areas::Fresh, exec)
}

fn run_in(
    triangle: Triangle,
    a: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    areas: Areas<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => run::<T>(triangle, a, dst, areas, isa, exec))
}

/// A task's regions for matrices of order `n`: the column-major matrix and
/// the blocked factorisation's two work arrays, or (`lanes`) the
/// interleaved matrices of a group of [`LANES`].
#[allow(clippy::type_complexity)]
fn regions<'a, T: Field>(
    c: &mut Carve<'a>,
    n: usize,
    lanes: bool,
) -> (&'a mut [T], &'a mut [T], &'a mut [T], &'a mut [[T; LANES]]) {
    let nn = n.saturating_mul(n);
    let w = c.take(nn);
    if lanes {
        (w, &mut [], &mut [], c.take(nn))
    } else {
        (
            w,
            c.take(factor::tmp_len(n)),
            c.take(factor::neg_len(n)),
            &mut [],
        )
    }
}

/// The order, the batch and its count of a's shape.
fn shapes(a: &[usize]) -> Result<(usize, Vec<usize>, usize)> {
    let n = square_of("a", a)?;
    let batch = broadcast_batch(&[("a", a, 2)])?;
    let count = count_of(&batch)?;
    Ok((n, batch, count))
}

/// [`cholesky`] planned once for operands of one shape and dtype (no
/// `exec`): the checks of the shape and the size of a run's work area, made
/// before any run (ARCHITECTURE.md §4, the plan convention). Runs give
/// [`cholesky`]'s bits and refusals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CholeskyPlan {
    triangle: Triangle,
    planned: Planned,
}

impl CholeskyPlan {
    /// Plan factoring `a` (`[batch…, n, n]`) of dtype `a.1` into the
    /// `triangle` factor. Refuses what [`cholesky`] refuses of the shape and
    /// the dtype.
    pub fn new(triangle: Triangle, a: (&[usize], DType)) -> Result<Self> {
        let (n, _, count) = shapes(a.0)?;
        let blocks = by_dtype!(a.1, "a", T => Ok(blocks_of(|c| {
            regions::<T>(c, n, use_lanes(n, count));
        })))?;
        let op = Some((a.1, a.0.to_vec()));
        Ok(CholeskyPlan {
            triangle,
            planned: Planned::new(vec![("a", op.clone()), ("dst", op)], blocks),
        })
    }

    /// The destination's shape (a's).
    pub fn output_shape(&self) -> &[usize] {
        self.planned.shape("dst")
    }

    /// Bytes of scratch one thread of a run needs; a scratch of `t` times
    /// this lets a run of a batch use up to `t` threads (the bits are the
    /// same at any count). The contraction engine's packing buffers, kept
    /// per thread between calls, are not part of it.
    pub fn scratch_bytes(&self) -> usize {
        self.planned.scratch_bytes()
    }

    fn check(&self, a: &ArrayView<'_>, dst: &ArrayViewMut<'_>) -> Result<()> {
        self.planned.check(&[
            Some((a.dtype(), a.shape())),
            Some((dst.dtype(), dst.shape())),
        ])
    }

    /// Factor `a` into `dst` (the planned shapes and dtype, any layout):
    /// [`cholesky`]'s bits and refusals, the work area allocated for the
    /// call.
    pub fn run(&self, a: &ArrayView<'_>, dst: &mut ArrayViewMut<'_>, exec: &Exec) -> Result<()> {
        self.check(a, dst)?;
        run_in(self.triangle, a, dst, Areas::Fresh, exec)
    }

    /// [`CholeskyPlan::run`] with the work areas in the caller's `scratch`,
    /// grown (fallibly) to [`CholeskyPlan::scratch_bytes`] where it is
    /// smaller; a batch runs on as many of `exec`'s threads as `scratch`
    /// holds areas for.
    pub fn run_with_scratch(
        &self,
        a: &ArrayView<'_>,
        dst: &mut ArrayViewMut<'_>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, dst)?;
        run_in(self.triangle, a, dst, Areas::Lent(scratch), exec)
    }
}

fn run<T: Field>(
    triangle: Triangle,
    a: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    areas: Areas<'_>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    check_dtype::<T>("dst", dst.dtype())?;
    let (n, batch, count) = shapes(a.shape())?;
    check_shape("dst", dst.shape(), &batch, &[n, n])?;
    check_destinations(&[("dst", dst)], &[a])?;
    n.checked_mul(n).ok_or(crate::Error::Overflow {
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
    let lanes = use_lanes(n, count);
    let blocks = blocks_of(|c| {
        regions::<T>(c, n, lanes);
    });
    if lanes {
        return for_each_matrix(count.div_ceil(LANES), blocks, areas, exec, |g, area, _| {
            let (_, _, _, x) = regions::<T>(&mut Carve::new(area), n, true);
            let first = g * LANES;
            let group = first..(first + LANES).min(count);
            src.read_lanes(first, group.len(), x);
            // The imaginary parts of the diagonal dropped.
            for j in 0..n {
                x[j + j * n] = x[j + j * n].map(|v| T::from_real(v.re()));
            }
            let mut bad = [false; LANES];
            lanes::factor(isa, n, x, &mut bad);
            let x = &*x;
            for (l, b) in group.enumerate() {
                // SAFETY: as for `emit`.
                unsafe {
                    if bad[l] {
                        out.write_with(b, |_, _| T::nan());
                    } else if triangle == Triangle::Lower {
                        out.write_with(b, |i, j| if i >= j { x[i + j * n][l] } else { T::ZERO });
                    } else {
                        out.write_with(b, |i, j| {
                            if i <= j {
                                x[j + i * n][l].conj()
                            } else {
                                T::ZERO
                            }
                        });
                    }
                }
            }
        });
    }
    for_each_matrix(count, blocks, areas, exec, |b, area, inner| {
        let (w, tmp, neg, _) = regions::<T>(&mut Carve::new(area), n, false);
        load(b, w);
        let ok = factor::factor(n, w, n, tmp, neg, isa, inner);
        emit(b, w, ok);
    })
}
