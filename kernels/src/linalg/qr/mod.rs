//! The public `qr` call (reflectors in `householder.rs`, the factorisation
//! and q's forming in `factor.rs`).

pub(crate) mod factor;
pub(crate) mod householder;

use super::batch::{
    broadcast_batch, check_destinations, check_dtype, count_of, matrix_of, Mats, MatsMut,
};
use super::by_dtype;
use super::field::Field;
use super::update::Isa;
use super::work::{blocks_of, for_each_matrix, Areas, Carve, Planned};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{DType, Scratch};

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
    run_in(a, q, r, Areas::Fresh, exec)
}

fn run_in(
    a: &ArrayView<'_>,
    q: &mut ArrayViewMut<'_>,
    r: &mut ArrayViewMut<'_>,
    areas: Areas<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => run::<T>(a, q, r, areas, isa, exec))
}

/// A task's regions for m×n matrices and q of `qc` columns: the
/// column-major matrix, the reflectors' factors, q, and the blocked
/// factorisation's work.
fn regions<'a, T: Field>(c: &mut Carve<'a>, (m, n, qc): (usize, usize, usize)) -> [&'a mut [T]; 4] {
    [
        c.take(m.saturating_mul(n)),
        c.take(m.min(n)),
        c.take(m.saturating_mul(qc)),
        c.take(factor::work_len(m, n, qc)),
    ]
}

/// [`qr`] planned once for operands of one shape and dtype (no `exec`):
/// the checks of the shape and the size of a run's work area, made before
/// any run (ARCHITECTURE.md §4, the plan convention). Runs give [`qr`]'s
/// bits and refusals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QrPlan {
    planned: Planned,
}

impl QrPlan {
    /// Plan factoring `a` (`[batch…, m, n]`) of dtype `a.1`, complete (q
    /// `[batch…, m, m]`, r `[batch…, m, n]`) or reduced (q `[batch…, m, k]`,
    /// r `[batch…, k, n]`). Refuses what [`qr`] refuses of the shape and the
    /// dtype.
    pub fn new(a: (&[usize], DType), complete: bool) -> Result<Self> {
        let (m, n) = matrix_of("a", a.0)?;
        let batch = broadcast_batch(&[("a", a.0, 2)])?;
        count_of(&batch)?;
        let qc = if complete { m } else { m.min(n) };
        let blocks = by_dtype!(a.1, "a", T => Ok(blocks_of(|c| {
            regions::<T>(c, (m, n, qc));
        })))?;
        let with = |tail: &[usize]| Some((a.1, batch.iter().chain(tail).copied().collect()));
        Ok(QrPlan {
            planned: Planned::new(
                vec![
                    ("a", Some((a.1, a.0.to_vec()))),
                    ("q", with(&[m, qc])),
                    ("r", with(&[qc, n])),
                ],
                blocks,
            ),
        })
    }

    /// The shapes of `q` and `r`.
    pub fn output_shapes(&self) -> [&[usize]; 2] {
        ["q", "r"].map(|o| self.planned.shape(o))
    }

    /// Bytes of scratch one thread of a run needs; a scratch of `t` times
    /// this lets a run of a batch use up to `t` threads (the bits are the
    /// same at any count). The contraction engine's packing buffers, kept
    /// per thread between calls, are not part of it.
    pub fn scratch_bytes(&self) -> usize {
        self.planned.scratch_bytes()
    }

    fn check(&self, a: &ArrayView<'_>, q: &ArrayViewMut<'_>, r: &ArrayViewMut<'_>) -> Result<()> {
        self.planned.check(&[
            Some((a.dtype(), a.shape())),
            Some((q.dtype(), q.shape())),
            Some((r.dtype(), r.shape())),
        ])
    }

    /// Factor `a` into `q` and `r` (the planned shapes and dtype, any
    /// layout): [`qr`]'s bits and refusals, the work area allocated for the
    /// call.
    pub fn run(
        &self,
        a: &ArrayView<'_>,
        q: &mut ArrayViewMut<'_>,
        r: &mut ArrayViewMut<'_>,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, q, r)?;
        run_in(a, q, r, Areas::Fresh, exec)
    }

    /// [`QrPlan::run`] with the work areas in the caller's `scratch`, grown
    /// (fallibly) to [`QrPlan::scratch_bytes`] where it is smaller; a batch
    /// runs on as many of `exec`'s threads as `scratch` holds areas for.
    pub fn run_with_scratch(
        &self,
        a: &ArrayView<'_>,
        q: &mut ArrayViewMut<'_>,
        r: &mut ArrayViewMut<'_>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, q, r)?;
        run_in(a, q, r, Areas::Lent(scratch), exec)
    }
}

fn run<T: Field>(
    a: &ArrayView<'_>,
    q: &mut ArrayViewMut<'_>,
    r: &mut ArrayViewMut<'_>,
    areas: Areas<'_>,
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
    m.checked_mul(n).ok_or_else(overflow)?;
    m.checked_mul(qc).ok_or_else(overflow)?;
    let src = Mats::new(a, 2, &batch)?;
    let q_out = MatsMut::new(q, 2, &batch)?;
    let r_out = MatsMut::new(r, 2, &batch)?;
    let blocks = blocks_of(|c| {
        regions::<T>(c, (m, n, qc));
    });
    for_each_matrix(count, blocks, areas, exec, |b, area, inner| {
        let [w, tau, qs, work] = regions::<T>(&mut Carve::new(area), (m, n, qc));
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
