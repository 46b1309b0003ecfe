//! The public `solve_triangular` call (the substitution is `solve.rs`).

mod lanes;
mod solve;

pub(crate) use solve::{half, lower_left, BASE};

use super::batch::{
    broadcast_batch, check_destinations, check_dtype, check_shape, count_of, matrix_of, square_of,
    Mats, MatsMut,
};
use super::field::Field;
use super::lanes::{use_lanes, LANES};
use super::update::Isa;
use super::work::{blocks_of, for_each_matrix, Areas, Carve, Planned};
use super::{by_dtype, Triangle};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{DType, Scratch};

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
    run_in(
        (triangle, adjoint, unit_diagonal),
        a,
        b,
        x,
        Areas::Fresh,
        exec,
    )
}

/// The attributes: triangle, adjoint, unit diagonal.
type Attrs = (Triangle, bool, bool);

fn run_in(
    attrs: Attrs,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    x: &mut ArrayViewMut<'_>,
    areas: Areas<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => run::<T>(attrs, a, b, x, areas, isa, exec))
}

/// The order and the right-hand sides of a and b's shapes, and the
/// broadcast batch.
fn shapes(a: &[usize], b: &[usize]) -> Result<(usize, usize, Vec<usize>)> {
    let n = square_of("a", a)?;
    let (bn, r) = matrix_of("b", b)?;
    if bn != n {
        let mut target = b.to_vec();
        let len = target.len();
        target[len - 2] = n;
        return Err(Error::Shape {
            operand: "b".into(),
            shape: b.to_vec(),
            target,
        });
    }
    let batch = broadcast_batch(&[("a", a, 2), ("b", b, 2)])?;
    count_of(&batch)?;
    let overflow = || Error::Overflow {
        operand: "a".into(),
    };
    n.checked_mul(n).ok_or_else(overflow)?;
    n.checked_mul(r).ok_or_else(overflow)?;
    Ok((n, r, batch))
}

/// Whether a batch of `count` solves of order n with r right-hand sides
/// runs eight matrices at once, one per lane.
fn lanes_for(n: usize, r: usize, count: usize) -> bool {
    use_lanes(n, count) && r <= super::lanes::MAX_ORDER
}

/// A task's regions for order n and r right-hand sides: M, x, the copy of
/// upper rows and of a block of rows (padded by eight elements) and the
/// negated blocks of M, or (`lanes`) the interleaved M and x of a group of
/// [`LANES`].
#[allow(clippy::type_complexity)]
fn regions<'a, T: Field>(
    c: &mut Carve<'a>,
    n: usize,
    r: usize,
    lanes: bool,
) -> ([&'a mut [T]; 4], [&'a mut [[T; LANES]]; 2]) {
    if lanes {
        return (
            [&mut [], &mut [], &mut [], &mut []],
            [c.take(n.saturating_mul(n)), c.take(n.saturating_mul(r))],
        );
    }
    let m = c.take(n.saturating_mul(n));
    let xs = c.take(n.saturating_mul(r));
    let tmp_len = half(n).max(BASE.min(n)).saturating_mul(r.saturating_add(8));
    (
        [m, xs, c.take(tmp_len), c.take(n * n / 4 + 1)],
        [&mut [], &mut []],
    )
}

/// [`solve_triangular`] planned once for operands of one shape and dtype
/// (no `exec`): the checks of the shapes and the size of a run's work area,
/// made before any run (ARCHITECTURE.md §4, the plan convention). Runs give
/// [`solve_triangular`]'s bits and refusals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SolveTriangularPlan {
    attrs: Attrs,
    planned: Planned,
}

impl SolveTriangularPlan {
    /// Plan solving with `a` (`[batch…, n, n]`) and `b` (`[batch…, n, r]`)
    /// of one dtype `dtype` under the attributes [`solve_triangular`]
    /// takes. Refuses what it refuses of the shapes and the dtype.
    pub fn new(
        triangle: Triangle,
        adjoint: bool,
        unit_diagonal: bool,
        a: &[usize],
        b: &[usize],
        dtype: DType,
    ) -> Result<Self> {
        let (n, r, batch) = shapes(a, b)?;
        let lanes = lanes_for(n, r, count_of(&batch)?);
        let blocks = by_dtype!(dtype, "a", T => Ok(blocks_of(|c| {
            regions::<T>(c, n, r, lanes);
        })))?;
        let x = batch.iter().chain(&[n, r]).copied().collect();
        Ok(SolveTriangularPlan {
            attrs: (triangle, adjoint, unit_diagonal),
            planned: Planned::new(
                vec![
                    ("a", Some((dtype, a.to_vec()))),
                    ("b", Some((dtype, b.to_vec()))),
                    ("x", Some((dtype, x))),
                ],
                blocks,
            ),
        })
    }

    /// x's shape.
    pub fn output_shape(&self) -> &[usize] {
        self.planned.shape("x")
    }

    /// Bytes of scratch one thread of a run needs; a scratch of `t` times
    /// this lets a run of a batch use up to `t` threads (the bits are the
    /// same at any count). The contraction engine's packing buffers, kept
    /// per thread between calls, are not part of it.
    pub fn scratch_bytes(&self) -> usize {
        self.planned.scratch_bytes()
    }

    fn check(&self, a: &ArrayView<'_>, b: &ArrayView<'_>, x: &ArrayViewMut<'_>) -> Result<()> {
        self.planned.check(&[
            Some((a.dtype(), a.shape())),
            Some((b.dtype(), b.shape())),
            Some((x.dtype(), x.shape())),
        ])
    }

    /// Solve into `x` (the planned shapes and dtype, any layout):
    /// [`solve_triangular`]'s bits and refusals, the work area allocated for
    /// the call.
    pub fn run(
        &self,
        a: &ArrayView<'_>,
        b: &ArrayView<'_>,
        x: &mut ArrayViewMut<'_>,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, b, x)?;
        run_in(self.attrs, a, b, x, Areas::Fresh, exec)
    }

    /// [`SolveTriangularPlan::run`] with the work areas in the caller's
    /// `scratch`, grown (fallibly) to [`SolveTriangularPlan::scratch_bytes`]
    /// where it is smaller; a batch runs on as many of `exec`'s threads as
    /// `scratch` holds areas for.
    pub fn run_with_scratch(
        &self,
        a: &ArrayView<'_>,
        b: &ArrayView<'_>,
        x: &mut ArrayViewMut<'_>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, b, x)?;
        run_in(self.attrs, a, b, x, Areas::Lent(scratch), exec)
    }
}

fn run<T: Field>(
    (triangle, adjoint, unit): Attrs,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    x: &mut ArrayViewMut<'_>,
    areas: Areas<'_>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    check_dtype::<T>("b", b.dtype())?;
    check_dtype::<T>("x", x.dtype())?;
    let (n, r, batch) = shapes(a.shape(), b.shape())?;
    check_shape("x", x.shape(), &batch, &[n, r])?;
    check_destinations(&[("x", x)], &[a, b])?;
    let count = count_of(&batch)?;
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
    let lanes = lanes_for(n, r, count);
    let blocks = blocks_of(|c| {
        regions::<T>(c, n, r, lanes);
    });
    if lanes {
        return for_each_matrix(count.div_ceil(LANES), blocks, areas, exec, |g, area, _| {
            let (_, [ml, xl]) = regions::<T>(&mut Carve::new(area), n, r, true);
            let first = g * LANES;
            let group = first..(first + LANES).min(count);
            src_a.read_lanes(first, group.len(), ml);
            src_b.read_lanes(first, group.len(), xl);
            // M as `load` makes it, eight matrices at a time.
            let mut singular = [false; LANES];
            for j in 0..n {
                let col = &mut ml[j * n..(j + 1) * n];
                col[..j].fill([T::ZERO; LANES]);
                if adjoint {
                    for v in &mut col[j..] {
                        *v = v.map(|e| e.conj());
                    }
                }
                if unit {
                    col[j] = [T::ONE; LANES];
                }
                for (s, &d) in singular.iter_mut().zip(&col[j]) {
                    *s |= d == T::ZERO;
                }
            }
            lanes::solve(isa, n, r, unit, ml, xl);
            let xl = &*xl;
            for (l, bi) in group.enumerate() {
                // SAFETY: as for `emit`.
                unsafe {
                    if singular[l] {
                        out.write_with(bi, |_, _| T::nan());
                    } else {
                        out.write_with(bi, |i, q| xl[i + q * n][l]);
                    }
                }
            }
        });
    }
    for_each_matrix(count, blocks, areas, exec, |bi, area, inner| {
        let ([m, xs, tmp, neg], _) = regions::<T>(&mut Carve::new(area), n, r, false);
        let singular = load(bi, m);
        if !singular {
            src_b.read(bi, xs);
            lower_left((n, r), m, n, unit, xs, n, tmp, neg, isa, inner);
        }
        emit(bi, xs, singular);
    })
}
