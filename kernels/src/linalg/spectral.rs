//! The public calls of the spectral routines, `eigh`, `svd` and `eig` (their
//! kernels are `eigh/`, `svd/` and `eig/`), and their plans.

use super::batch::{
    broadcast_batch, check_destinations, check_dtype, check_shape, count_of, matrix_of, square_of,
    Mats, MatsMut,
};
use super::by_dtype;
use super::eig::{eig_one, Cx, EigWork};
use super::eigh::{eigh_one, EighWork};
use super::field::Field;
use super::svd::{svd_one, SvdWork};
use super::update::Isa;
use super::work::{blocks_of, for_each_matrix, Areas, Carve, Planned};
use crate::array::{ArrayView, ArrayViewMut, Element};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{DType, Scratch};

fn overflow() -> Error {
    Error::Overflow {
        operand: "a".into(),
    }
}

/// The eigenvalues of each Hermitian (real symmetric) matrix of `a`
/// (`[batch…, n, n]`), ascending, into `w` (`[batch…, n]`, the real dtype
/// of a's precision), and where `v` is given (`[batch…, n, n]`, a's dtype)
/// orthonormal eigenvectors as its columns, `a v = v diag w`.
///
/// Reads a's lower triangle and the real parts of its diagonal alone. A
/// matrix whose read part holds NaN or an infinity, or on which the
/// iteration does not converge, is NaN in every result.
///
/// **Bound.** With g = γ(16n) and h = ε(16n): `‖a − v diag w vᴴ‖_F ≤ g‖a‖_F + h`,
/// `‖vᴴv − I‖_F ≤ g`, each eigenvalue within `g‖a‖₂ + h` of the exact one,
/// with v or without (values alone may differ from the vectors' call's in
/// their last bits). Refusals: the module's.
pub fn eigh(
    a: &ArrayView<'_>,
    w: &mut ArrayViewMut<'_>,
    v: Option<&mut ArrayViewMut<'_>>,
    exec: &Exec,
) -> Result<()> {
    eigh_in(a, w, v, Areas::Fresh, exec)
}

fn eigh_in(
    a: &ArrayView<'_>,
    w: &mut ArrayViewMut<'_>,
    v: Option<&mut ArrayViewMut<'_>>,
    areas: Areas<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => square_run::<T, Eigh>(a, w, v, areas, isa, exec))
}

/// eigh and eig: a square routine giving values and, on request, vectors.
trait Square<T: Field> {
    /// The values' scalar.
    type V: Field;
    /// The vectors' scalar.
    type X: Field;
    /// The routine's work for one matrix.
    type Work<'a>;
    /// The routine's work for matrices of order n, carved from `c`.
    fn work<'a>(c: &mut Carve<'a>, n: usize, vectors: bool) -> Self::Work<'a>;
    /// One matrix (false: NaN for it).
    #[allow(clippy::too_many_arguments)]
    fn one(
        n: usize,
        a: &mut [T],
        w: &mut [Self::V],
        v: Option<&mut [Self::X]>,
        work: &mut Self::Work<'_>,
        isa: Isa,
        exec: &Exec,
    ) -> bool;
}

/// [`eigh`].
struct Eigh;

impl<T: Field> Square<T> for Eigh {
    type V = T::Real;
    type X = T;
    type Work<'a> = EighWork<'a, T>;
    fn work<'a>(c: &mut Carve<'a>, n: usize, vectors: bool) -> EighWork<'a, T> {
        EighWork::new(c, n, vectors)
    }
    fn one(
        n: usize,
        a: &mut [T],
        w: &mut [T::Real],
        v: Option<&mut [T]>,
        work: &mut EighWork<'_, T>,
        isa: Isa,
        exec: &Exec,
    ) -> bool {
        eigh_one(n, a, w, v, work, isa, exec)
    }
}

/// [`eig`].
struct Eig;

impl<T: Field> Square<T> for Eig {
    type V = Cx<T>;
    type X = Cx<T>;
    type Work<'a> = EigWork<'a, T>;
    fn work<'a>(c: &mut Carve<'a>, n: usize, vectors: bool) -> EigWork<'a, T> {
        EigWork::new(c, n, vectors)
    }
    fn one(
        n: usize,
        a: &mut [T],
        w: &mut [Cx<T>],
        v: Option<&mut [Cx<T>]>,
        work: &mut EigWork<'_, T>,
        isa: Isa,
        exec: &Exec,
    ) -> bool {
        eig_one(n, a, w, v, work, isa, exec)
    }
}

/// A task's regions for a square routine: the column-major matrix, the
/// values, the vectors (empty without), then the routine's own work.
#[allow(clippy::type_complexity)]
fn square_regions<'a, T: Field, S: Square<T>>(
    c: &mut Carve<'a>,
    n: usize,
    vectors: bool,
) -> (&'a mut [T], &'a mut [S::V], &'a mut [S::X], S::Work<'a>) {
    let nn = n.saturating_mul(n);
    let aw = c.take(nn);
    let ws = c.take(n);
    let vs = c.take(if vectors { nn } else { 0 });
    (aw, ws, vs, S::work(c, n, vectors))
}

/// eigh's and eig's run: a square a, values w of `[batch…, n]`, vectors v
/// of `[batch…, n, n]` where given.
fn square_run<T: Field, S: Square<T>>(
    a: &ArrayView<'_>,
    w: &mut ArrayViewMut<'_>,
    v: Option<&mut ArrayViewMut<'_>>,
    areas: Areas<'_>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    check_dtype::<S::V>("w", w.dtype())?;
    let n = square_of("a", a.shape())?;
    let batch = broadcast_batch(&[("a", a.shape(), 2)])?;
    check_shape("w", w.shape(), &batch, &[n])?;
    if let Some(v) = v.as_deref() {
        check_dtype::<S::X>("v", v.dtype())?;
        check_shape("v", v.shape(), &batch, &[n, n])?;
    }
    match v.as_deref() {
        Some(vv) => check_destinations(&[("w", w), ("v", vv)], &[a])?,
        None => check_destinations(&[("w", w)], &[a])?,
    }
    let count = count_of(&batch)?;
    n.checked_mul(n).ok_or_else(overflow)?;
    let vectors = v.is_some();
    let src = Mats::new(a, 2, &batch)?;
    let w_out = MatsMut::new(w, 1, &batch)?;
    let v_out = match v {
        Some(v) => Some(MatsMut::new(v, 2, &batch)?),
        None => None,
    };
    let blocks = blocks_of(|c| {
        square_regions::<T, S>(c, n, vectors);
    });
    for_each_matrix(count, blocks, areas, exec, |b, area, inner| {
        let (aw, ws, vs, mut wk) = square_regions::<T, S>(&mut Carve::new(area), n, vectors);
        src.read(b, aw);
        let vs_opt = if vectors { Some(&mut vs[..]) } else { None };
        let ok = S::one(n, aw, ws, vs_opt, &mut wk, isa, inner);
        // SAFETY: w and v were validated, are of the dtypes checked, reach
        // no element twice and do not overlap (checked), and are borrowed
        // mutably for this call; batch index b is this task's alone.
        unsafe {
            write_or_nan(&w_out, b, ok, ws, n);
            if let Some(vo) = &v_out {
                write_or_nan(vo, b, ok, vs, n);
            }
        }
    })
}

/// Write `src` (leading dimension `ld`) as matrix `b`, or NaN where `!ok`.
///
/// # Safety
/// As for [`MatsMut::write`].
unsafe fn write_or_nan<T: Field>(out: &MatsMut, b: usize, ok: bool, src: &[T], ld: usize) {
    // SAFETY: the caller's contract is `write`'s and `write_with`'s.
    unsafe {
        if ok {
            out.write(b, src, ld.max(1));
        } else {
            out.write_with(b, |_, _| T::nan());
        }
    }
}

/// The singular values of each matrix of `a` (`[batch…, m, n]`, k =
/// min(m, n)), descending and not negative (a zero one +0), into `s`
/// (`[batch…, k]`, the real dtype of a's precision), and where `vectors`
/// `(u, vh)` are given (a's dtype) `a = u diag s vh`: reduced where u is
/// `[batch…, m, k]` and vh `[batch…, k, n]`, complete where u is
/// `[batch…, m, m]` and vh `[batch…, n, n]`.
///
/// A matrix that holds NaN or an infinity, or on which the iteration does
/// not converge, is NaN in every result.
///
/// **Bound.** With g = γ(16·max(m, n) + 100) and h = ε(16·max(m, n) + 100):
/// `‖a − u diag s vh‖_F ≤ g‖a‖_F + h` over u's first k columns and vh's
/// first k rows, `‖uᴴu − I‖_F ≤ g`, `‖vh vhᴴ − I‖_F ≤ g`, each singular
/// value within `g‖a‖₂ + h` of the exact one, with vectors or without
/// (values alone may differ from the vectors' call's in their last bits).
/// The iteration drops a superdiagonal element of the bidiagonal below
/// `max(10, min(100, u^(−1/8)))·u` times its neighbours. Refusals: the
/// module's, and u and vh that are neither both reduced nor both complete
/// ([`Error::Shape`]).
pub fn svd(
    a: &ArrayView<'_>,
    s: &mut ArrayViewMut<'_>,
    vectors: Option<(&mut ArrayViewMut<'_>, &mut ArrayViewMut<'_>)>,
    exec: &Exec,
) -> Result<()> {
    svd_in(a, s, vectors, Areas::Fresh, exec)
}

fn svd_in(
    a: &ArrayView<'_>,
    s: &mut ArrayViewMut<'_>,
    vectors: Option<(&mut ArrayViewMut<'_>, &mut ArrayViewMut<'_>)>,
    areas: Areas<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => svd_run::<T>(a, s, vectors, areas, isa, exec))
}

/// A task's regions for svd of m×n matrices (u of `uc` columns and vh of
/// `vr` rows where `want`): the column-major matrix, the values, u, vh and
/// the routine's work.
#[allow(clippy::type_complexity)]
fn svd_regions<'a, T: Field>(
    c: &mut Carve<'a>,
    (m, n): (usize, usize),
    (uc, vr): (usize, usize),
    want: bool,
) -> (
    &'a mut [T],
    &'a mut [T::Real],
    &'a mut [T],
    &'a mut [T],
    SvdWork<'a, T>,
) {
    let aw = c.take(m.saturating_mul(n));
    let ss = c.take(m.min(n));
    let us = c.take(if want { m.saturating_mul(uc) } else { 0 });
    let vhs = c.take(if want { vr.saturating_mul(n) } else { 0 });
    (aw, ss, us, vhs, SvdWork::new(c, m, n, want))
}

fn svd_run<T: Field>(
    a: &ArrayView<'_>,
    s: &mut ArrayViewMut<'_>,
    mut vectors: Option<(&mut ArrayViewMut<'_>, &mut ArrayViewMut<'_>)>,
    areas: Areas<'_>,
    isa: Isa,
    exec: &Exec,
) -> Result<()> {
    check_dtype::<T::Real>("s", s.dtype())?;
    let (m, n) = matrix_of("a", a.shape())?;
    let k = m.min(n);
    let batch = broadcast_batch(&[("a", a.shape(), 2)])?;
    check_shape("s", s.shape(), &batch, &[k])?;
    let (mut uc, mut vr) = (k, k);
    if let Some((u, vh)) = vectors.as_ref() {
        check_dtype::<T>("u", u.dtype())?;
        check_dtype::<T>("vh", vh.dtype())?;
        let (_, c) = matrix_of("u", u.shape())?;
        let (r, _) = matrix_of("vh", vh.shape())?;
        if (c, r) == (m, n) {
            (uc, vr) = (m, n);
        }
        check_shape("u", u.shape(), &batch, &[m, uc])?;
        check_shape("vh", vh.shape(), &batch, &[vr, n])?;
        check_destinations(&[("s", s), ("u", u), ("vh", vh)], &[a])?;
    } else {
        check_destinations(&[("s", s)], &[a])?;
    }
    let count = count_of(&batch)?;
    m.checked_mul(n).ok_or_else(overflow)?;
    m.checked_mul(uc).ok_or_else(overflow)?;
    vr.checked_mul(n).ok_or_else(overflow)?;
    let want = vectors.is_some();
    let src = Mats::new(a, 2, &batch)?;
    let s_out = MatsMut::new(s, 1, &batch)?;
    let outs = match vectors.as_mut() {
        Some((u, vh)) => Some((MatsMut::new(u, 2, &batch)?, MatsMut::new(vh, 2, &batch)?)),
        None => None,
    };
    let blocks = blocks_of(|c| {
        svd_regions::<T>(c, (m, n), (uc, vr), want);
    });
    for_each_matrix(count, blocks, areas, exec, |b, area, inner| {
        let (aw, ss, us, vhs, mut work) =
            svd_regions::<T>(&mut Carve::new(area), (m, n), (uc, vr), want);
        src.read(b, aw);
        if k == 0 && want {
            // No singular value: the complete factors are identities.
            for (p, x) in us.iter_mut().enumerate() {
                *x = if p % (m + 1) == 0 { T::ONE } else { T::ZERO };
            }
            for (p, x) in vhs.iter_mut().enumerate() {
                *x = if p % (vr + 1) == 0 { T::ONE } else { T::ZERO };
            }
        }
        let ok = if want {
            svd_one(
                m,
                n,
                aw,
                ss,
                Some((&mut us[..], uc)),
                Some((&mut vhs[..], vr)),
                &mut work,
                isa,
                inner,
            )
        } else {
            svd_one(m, n, aw, ss, None, None, &mut work, isa, inner)
        };
        // SAFETY: s, u and vh were validated, are of the dtypes checked,
        // reach no element twice and do not overlap (checked), and are
        // borrowed mutably for this call; batch index b is this task's
        // alone.
        unsafe {
            write_or_nan(&s_out, b, ok, ss, k);
            if let Some((uo, vo)) = &outs {
                write_or_nan(uo, b, ok, us, m);
                write_or_nan(vo, b, ok, vhs, vr);
            }
        }
    })
}

/// The eigenvalues of each square matrix of `a` (`[batch…, n, n]`) into `w`
/// (`[batch…, n]`, the complex dtype of a's precision), and where `v` is
/// given (`[batch…, n, n]`, that complex dtype) columns of unit norm with
/// `a v = v diag w`.
///
/// a is first balanced (`b = D⁻¹ Pᵀ a P D`, P a permutation and D diagonal
/// of powers of 2; D = I where rows' and columns' norms are equal already),
/// reduced to Hessenberg form and iterated to Schur form by shifted QR
/// (the double shift on real a). w is in the order the Schur form's
/// diagonal leaves it; on real a, values that are not real come in
/// adjacent conjugate pairs, positive imaginary part first, with conjugate
/// columns of v, and a real value has a +0 imaginary part and a column of
/// +0 imaginary parts. Each column of v has an element of largest magnitude
/// real (positive on complex a). A matrix that holds NaN or an infinity, or
/// on which the iteration does not converge, is NaN in every result.
///
/// **Bound.** With g = γ(16n) and h = ε(16n), w is the spectrum of a + E
/// with `‖D⁻¹PᵀEPD‖_F ≤ g‖b‖_F + h`, with v or without; each column has
/// `|‖v_j‖₂ − 1| ≤ g` and `‖D⁻¹Pᵀ(a v_j − w_j v_j)‖₂ ≤ (g‖b‖_F + h)·‖D⁻¹Pᵀv_j‖₂`.
/// Values alone may differ from the vectors' call's. Refusals: the
/// module's.
pub fn eig(
    a: &ArrayView<'_>,
    w: &mut ArrayViewMut<'_>,
    v: Option<&mut ArrayViewMut<'_>>,
    exec: &Exec,
) -> Result<()> {
    eig_in(a, w, v, Areas::Fresh, exec)
}

fn eig_in(
    a: &ArrayView<'_>,
    w: &mut ArrayViewMut<'_>,
    v: Option<&mut ArrayViewMut<'_>>,
    areas: Areas<'_>,
    exec: &Exec,
) -> Result<()> {
    let isa = Isa::of(exec.resolve_tier()?);
    by_dtype!(a.dtype(), "a", T => square_run::<T, Eig>(a, w, v, areas, isa, exec))
}

/// The planned operands and work of a square routine (`eigh` or `eig`).
fn square_plan<S: SquarePlanned>(a: (&[usize], DType), vectors: bool) -> Result<Planned> {
    let n = square_of("a", a.0)?;
    let batch = broadcast_batch(&[("a", a.0, 2)])?;
    count_of(&batch)?;
    n.checked_mul(n).ok_or_else(overflow)?;
    let (blocks, vd, xd) = S::blocks(a.1, n, vectors)?;
    let with = |d: DType, tail: &[usize]| Some((d, batch.iter().chain(tail).copied().collect()));
    Ok(Planned::new(
        vec![
            ("a", Some((a.1, a.0.to_vec()))),
            ("w", with(vd, &[n])),
            ("v", if vectors { with(xd, &[n, n]) } else { None }),
        ],
        blocks,
    ))
}

/// A square routine's work size and values' and vectors' dtypes, by a's
/// dtype.
trait SquarePlanned {
    fn blocks(dtype: DType, n: usize, vectors: bool) -> Result<(usize, DType, DType)>;
}

impl<S> SquarePlanned for S
where
    S: Square<f32>
        + Square<f64>
        + Square<num_complex::Complex<f32>>
        + Square<num_complex::Complex<f64>>,
{
    fn blocks(dtype: DType, n: usize, vectors: bool) -> Result<(usize, DType, DType)> {
        by_dtype!(dtype, "a", T => Ok((
            blocks_of(|c| {
                square_regions::<T, S>(c, n, vectors);
            }),
            <<S as Square<T>>::V as Element>::DTYPE,
            <<S as Square<T>>::X as Element>::DTYPE,
        )))
    }
}

/// The operands of a square routine's run, as a plan checks them.
fn square_operands<'v>(
    a: &'v ArrayView<'_>,
    w: &'v ArrayViewMut<'_>,
    v: Option<&'v ArrayViewMut<'_>>,
) -> [Option<(DType, &'v [usize])>; 3] {
    [
        Some((a.dtype(), a.shape())),
        Some((w.dtype(), w.shape())),
        v.map(|v| (v.dtype(), v.shape())),
    ]
}

/// [`eigh`] planned once for operands of one shape and dtype, with or
/// without vectors (no `exec`): the checks of the shape and the size of a
/// run's work area, made before any run (ARCHITECTURE.md §4, the plan
/// convention). Runs give [`eigh`]'s bits and refusals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EighPlan {
    planned: Planned,
}

impl EighPlan {
    /// Plan `eigh` of `a` (`[batch…, n, n]`) of dtype `a.1`, with
    /// eigenvectors where `vectors`. Refuses what [`eigh`] refuses of the
    /// shape and the dtype.
    pub fn new(a: (&[usize], DType), vectors: bool) -> Result<Self> {
        Ok(EighPlan {
            planned: square_plan::<Eigh>(a, vectors)?,
        })
    }

    /// The shapes of `w` and of `v` (empty without vectors).
    pub fn output_shapes(&self) -> [&[usize]; 2] {
        ["w", "v"].map(|o| self.planned.shape(o))
    }

    /// Bytes of scratch one thread of a run needs; a scratch of `t` times
    /// this lets a run of a batch use up to `t` threads (the bits are the
    /// same at any count). The contraction engine's packing buffers, kept
    /// per thread between calls, are not part of it.
    pub fn scratch_bytes(&self) -> usize {
        self.planned.scratch_bytes()
    }

    /// [`eigh`] of `a` into `w` and `v` (the planned shapes and dtypes, any
    /// layout; `v` given exactly where the plan has vectors): its bits and
    /// refusals, the work area allocated for the call.
    pub fn run(
        &self,
        a: &ArrayView<'_>,
        w: &mut ArrayViewMut<'_>,
        v: Option<&mut ArrayViewMut<'_>>,
        exec: &Exec,
    ) -> Result<()> {
        self.planned.check(&square_operands(a, w, v.as_deref()))?;
        eigh_in(a, w, v, Areas::Fresh, exec)
    }

    /// [`EighPlan::run`] with the work areas in the caller's `scratch`,
    /// grown (fallibly) to [`EighPlan::scratch_bytes`] where it is smaller;
    /// a batch runs on as many of `exec`'s threads as `scratch` holds areas
    /// for.
    pub fn run_with_scratch(
        &self,
        a: &ArrayView<'_>,
        w: &mut ArrayViewMut<'_>,
        v: Option<&mut ArrayViewMut<'_>>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        self.planned.check(&square_operands(a, w, v.as_deref()))?;
        eigh_in(a, w, v, Areas::Lent(scratch), exec)
    }
}

/// [`eig`] planned once for operands of one shape and dtype, with or
/// without vectors (no `exec`): the checks of the shape and the size of a
/// run's work area, made before any run (ARCHITECTURE.md §4, the plan
/// convention). Runs give [`eig`]'s bits and refusals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EigPlan {
    planned: Planned,
}

impl EigPlan {
    /// Plan `eig` of `a` (`[batch…, n, n]`) of dtype `a.1`, with
    /// eigenvectors where `vectors`. Refuses what [`eig`] refuses of the
    /// shape and the dtype.
    pub fn new(a: (&[usize], DType), vectors: bool) -> Result<Self> {
        Ok(EigPlan {
            planned: square_plan::<Eig>(a, vectors)?,
        })
    }

    /// The shapes of `w` and of `v` (empty without vectors).
    pub fn output_shapes(&self) -> [&[usize]; 2] {
        ["w", "v"].map(|o| self.planned.shape(o))
    }

    /// Bytes of scratch one thread of a run needs; a scratch of `t` times
    /// this lets a run of a batch use up to `t` threads (the bits are the
    /// same at any count).
    pub fn scratch_bytes(&self) -> usize {
        self.planned.scratch_bytes()
    }

    /// [`eig`] of `a` into `w` and `v` (the planned shapes and dtypes, any
    /// layout; `v` given exactly where the plan has vectors): its bits and
    /// refusals, the work area allocated for the call.
    pub fn run(
        &self,
        a: &ArrayView<'_>,
        w: &mut ArrayViewMut<'_>,
        v: Option<&mut ArrayViewMut<'_>>,
        exec: &Exec,
    ) -> Result<()> {
        self.planned.check(&square_operands(a, w, v.as_deref()))?;
        eig_in(a, w, v, Areas::Fresh, exec)
    }

    /// [`EigPlan::run`] with the work areas in the caller's `scratch`,
    /// grown (fallibly) to [`EigPlan::scratch_bytes`] where it is smaller; a
    /// batch runs on as many of `exec`'s threads as `scratch` holds areas
    /// for.
    pub fn run_with_scratch(
        &self,
        a: &ArrayView<'_>,
        w: &mut ArrayViewMut<'_>,
        v: Option<&mut ArrayViewMut<'_>>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        self.planned.check(&square_operands(a, w, v.as_deref()))?;
        eig_in(a, w, v, Areas::Lent(scratch), exec)
    }
}

/// Which singular vectors an [`SvdPlan`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SvdVectors {
    /// The values alone.
    None,
    /// u `[batch…, m, k]` and vh `[batch…, k, n]`.
    Reduced,
    /// u `[batch…, m, m]` and vh `[batch…, n, n]`.
    Complete,
}

/// [`svd`] planned once for operands of one shape and dtype (no `exec`):
/// the checks of the shape and the size of a run's work area, made before
/// any run (ARCHITECTURE.md §4, the plan convention). Runs give [`svd`]'s
/// bits and refusals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SvdPlan {
    planned: Planned,
}

impl SvdPlan {
    /// Plan `svd` of `a` (`[batch…, m, n]`) of dtype `a.1` with the
    /// `vectors` asked for. Refuses what [`svd`] refuses of the shape and
    /// the dtype.
    pub fn new(a: (&[usize], DType), vectors: SvdVectors) -> Result<Self> {
        let (m, n) = matrix_of("a", a.0)?;
        let k = m.min(n);
        let batch = broadcast_batch(&[("a", a.0, 2)])?;
        count_of(&batch)?;
        m.checked_mul(n).ok_or_else(overflow)?;
        m.checked_mul(m).ok_or_else(overflow)?;
        n.checked_mul(n).ok_or_else(overflow)?;
        let want = vectors != SvdVectors::None;
        let (uc, vr) = if vectors == SvdVectors::Complete {
            (m, n)
        } else {
            (k, k)
        };
        let (blocks, real) = by_dtype!(a.1, "a", T => Ok((
            blocks_of(|c| {
                svd_regions::<T>(c, (m, n), (uc, vr), want);
            }),
            <<T as Field>::Real as Element>::DTYPE,
        )))?;
        let with =
            |d: DType, tail: &[usize]| Some((d, batch.iter().chain(tail).copied().collect()));
        let pick = |tail: &[usize]| if want { with(a.1, tail) } else { None };
        Ok(SvdPlan {
            planned: Planned::new(
                vec![
                    ("a", Some((a.1, a.0.to_vec()))),
                    ("s", with(real, &[k])),
                    ("u", pick(&[m, uc])),
                    ("vh", pick(&[vr, n])),
                ],
                blocks,
            ),
        })
    }

    /// The shapes of `s`, `u` and `vh` (empty without vectors).
    pub fn output_shapes(&self) -> [&[usize]; 3] {
        ["s", "u", "vh"].map(|o| self.planned.shape(o))
    }

    /// Bytes of scratch one thread of a run needs; a scratch of `t` times
    /// this lets a run of a batch use up to `t` threads (the bits are the
    /// same at any count). The contraction engine's packing buffers, kept
    /// per thread between calls, are not part of it.
    pub fn scratch_bytes(&self) -> usize {
        self.planned.scratch_bytes()
    }

    fn check(
        &self,
        a: &ArrayView<'_>,
        s: &ArrayViewMut<'_>,
        vectors: Option<(&ArrayViewMut<'_>, &ArrayViewMut<'_>)>,
    ) -> Result<()> {
        self.planned.check(&[
            Some((a.dtype(), a.shape())),
            Some((s.dtype(), s.shape())),
            vectors.map(|(u, _)| (u.dtype(), u.shape())),
            vectors.map(|(_, vh)| (vh.dtype(), vh.shape())),
        ])
    }

    /// [`svd`] of `a` into `s` and the planned `vectors` (the planned
    /// shapes and dtypes, any layout): its bits and refusals, the work area
    /// allocated for the call.
    pub fn run(
        &self,
        a: &ArrayView<'_>,
        s: &mut ArrayViewMut<'_>,
        vectors: Option<(&mut ArrayViewMut<'_>, &mut ArrayViewMut<'_>)>,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, s, vectors.as_ref().map(|(u, vh)| (&**u, &**vh)))?;
        svd_in(a, s, vectors, Areas::Fresh, exec)
    }

    /// [`SvdPlan::run`] with the work areas in the caller's `scratch`,
    /// grown (fallibly) to [`SvdPlan::scratch_bytes`] where it is smaller;
    /// a batch runs on as many of `exec`'s threads as `scratch` holds areas
    /// for.
    pub fn run_with_scratch(
        &self,
        a: &ArrayView<'_>,
        s: &mut ArrayViewMut<'_>,
        vectors: Option<(&mut ArrayViewMut<'_>, &mut ArrayViewMut<'_>)>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, s, vectors.as_ref().map(|(u, vh)| (&**u, &**vh)))?;
        svd_in(a, s, vectors, Areas::Lent(scratch), exec)
    }
}
