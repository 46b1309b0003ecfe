//! The public `lu` call (the factorisation is `factor.rs`).

mod factor;
mod lanes;

use super::batch::{
    broadcast_batch, check_destinations, check_dtype, check_shape, count_of, matrix_of, Mats,
    MatsMut,
};
use super::by_dtype;
use super::field::Field;
use super::lanes::{use_lanes, LANES};
use super::update::Isa;
use super::work::{blocks_of, for_each_matrix, Areas, Carve, Planned};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{DType, Scratch};

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
    run_in(a, lu, pivots, permutation, Areas::Fresh, exec)
}

fn run_in(
    a: &ArrayView<'_>,
    lu: &mut ArrayViewMut<'_>,
    pivots: &mut ArrayViewMut<'_>,
    permutation: &mut ArrayViewMut<'_>,
    areas: Areas<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => run::<T>(a, lu, pivots, permutation, areas, isa, exec))
}

/// Whether a batch of `count` m×n matrices runs eight at a time, one per
/// lane.
fn lanes_for(m: usize, n: usize, count: usize) -> bool {
    m == n && use_lanes(n, count)
}

/// A task's regions.
struct Regions<'a, T> {
    /// The column-major matrix.
    w: &'a mut [T],
    /// The factorisation's two work arrays.
    tmp: &'a mut [T],
    neg: &'a mut [T],
    /// The pivots and the permutation.
    piv: &'a mut [usize],
    perm: &'a mut [usize],
    /// The i64 copy of either.
    idx: &'a mut [i64],
    /// Eight matrices, their pivots and permutations, lane by lane.
    x: &'a mut [[T; LANES]],
    piv_l: &'a mut [[usize; LANES]],
    perm_l: &'a mut [[usize; LANES]],
}

/// A task's regions for m×n matrices, one at a time or (`lanes`) eight.
fn regions<'a, T: Field>(c: &mut Carve<'a>, m: usize, n: usize, lanes: bool) -> Regions<'a, T> {
    let one = !lanes;
    let nn = m.saturating_mul(n);
    Regions {
        w: c.take(if one { nn } else { 0 }),
        tmp: c.take(if one { factor::tmp_len(m, n) } else { 0 }),
        neg: c.take(if one { factor::neg_len(m, n) } else { 0 }),
        piv: c.take(if one { m.min(n) } else { 0 }),
        perm: c.take(if one { m } else { 0 }),
        idx: c.take(m),
        x: c.take(if lanes { nn } else { 0 }),
        piv_l: c.take(if lanes { n } else { 0 }),
        perm_l: c.take(if lanes { n } else { 0 }),
    }
}

/// [`lu`] planned once for operands of one shape and dtype (no `exec`):
/// the checks of the shape and the size of a run's work area, made before
/// any run (ARCHITECTURE.md §4, the plan convention). Runs give [`lu`]'s
/// bits and refusals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LuPlan {
    planned: Planned,
}

impl LuPlan {
    /// Plan factoring `a` (`[batch…, m, n]`) of dtype `a.1`. Refuses what
    /// [`lu`] refuses of the shape and the dtype.
    pub fn new(a: (&[usize], DType)) -> Result<Self> {
        let (m, n) = matrix_of("a", a.0)?;
        let batch = broadcast_batch(&[("a", a.0, 2)])?;
        let lanes = lanes_for(m, n, count_of(&batch)?);
        let blocks = by_dtype!(a.1, "a", T => Ok(blocks_of(|c| {
            regions::<T>(c, m, n, lanes);
        })))?;
        let with = |tail: &[usize]| batch.iter().chain(tail).copied().collect::<Vec<_>>();
        let op = Some((a.1, a.0.to_vec()));
        Ok(LuPlan {
            planned: Planned::new(
                vec![
                    ("a", op.clone()),
                    ("lu", op),
                    ("pivots", Some((DType::I64, with(&[m.min(n)])))),
                    ("permutation", Some((DType::I64, with(&[m])))),
                ],
                blocks,
            ),
        })
    }

    /// The shapes of `lu`, `pivots` and `permutation`.
    pub fn output_shapes(&self) -> [&[usize]; 3] {
        ["lu", "pivots", "permutation"].map(|o| self.planned.shape(o))
    }

    /// Bytes of scratch one thread of a run needs; a scratch of `t` times
    /// this lets a run of a batch use up to `t` threads (the bits are the
    /// same at any count). The contraction engine's packing buffers, kept
    /// per thread between calls, are not part of it.
    pub fn scratch_bytes(&self) -> usize {
        self.planned.scratch_bytes()
    }

    fn check(&self, a: &ArrayView<'_>, outs: [&ArrayViewMut<'_>; 3]) -> Result<()> {
        let [lu, p, q] = outs;
        self.planned.check(&[
            Some((a.dtype(), a.shape())),
            Some((lu.dtype(), lu.shape())),
            Some((p.dtype(), p.shape())),
            Some((q.dtype(), q.shape())),
        ])
    }

    /// Factor `a` (the planned shapes and dtypes, any layout): [`lu`]'s
    /// bits and refusals, the work area allocated for the call.
    pub fn run(
        &self,
        a: &ArrayView<'_>,
        lu: &mut ArrayViewMut<'_>,
        pivots: &mut ArrayViewMut<'_>,
        permutation: &mut ArrayViewMut<'_>,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, [lu, pivots, permutation])?;
        run_in(a, lu, pivots, permutation, Areas::Fresh, exec)
    }

    /// [`LuPlan::run`] with the work areas in the caller's `scratch`,
    /// grown (fallibly) to [`LuPlan::scratch_bytes`] where it is smaller; a
    /// batch runs on as many of `exec`'s threads as `scratch` holds areas
    /// for.
    pub fn run_with_scratch(
        &self,
        a: &ArrayView<'_>,
        lu: &mut ArrayViewMut<'_>,
        pivots: &mut ArrayViewMut<'_>,
        permutation: &mut ArrayViewMut<'_>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, [lu, pivots, permutation])?;
        run_in(a, lu, pivots, permutation, Areas::Lent(scratch), exec)
    }
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
    areas: Areas<'_>,
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
    m.checked_mul(n).ok_or(Error::Overflow {
        operand: "a".into(),
    })?;
    let src = Mats::new(a, 2, &batch)?;
    let out = MatsMut::new(lu, 2, &batch)?;
    let piv_out = MatsMut::new(pivots, 1, &batch)?;
    let perm_out = MatsMut::new(permutation, 1, &batch)?;
    let lanes = lanes_for(m, n, count);
    let blocks = blocks_of(|c| {
        regions::<T>(c, m, n, lanes);
    });
    if lanes {
        return for_each_matrix(count.div_ceil(LANES), blocks, areas, exec, |g, area, _| {
            let r = regions::<T>(&mut Carve::new(area), m, n, true);
            let first = g * LANES;
            let group = first..(first + LANES).min(count);
            src.read_lanes(first, group.len(), r.x);
            lanes::factor(isa, n, r.x, r.piv_l, r.perm_l);
            let x = &*r.x;
            for (l, b) in group.enumerate() {
                // SAFETY: as below.
                unsafe {
                    out.write_with(b, |i, j| x[i + j * m][l]);
                    for (d, p) in r.idx.iter_mut().zip(r.piv_l.iter()) {
                        *d = p[l] as i64;
                    }
                    piv_out.write(b, &r.idx[..k], k);
                    for (d, p) in r.idx.iter_mut().zip(r.perm_l.iter()) {
                        *d = p[l] as i64;
                    }
                    perm_out.write(b, &r.idx[..m], m);
                }
            }
        });
    }
    for_each_matrix(count, blocks, areas, exec, |b, area, inner| {
        let Regions {
            w,
            tmp,
            neg,
            piv,
            perm,
            idx,
            ..
        } = regions::<T>(&mut Carve::new(area), m, n, false);
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
    })
}
