//! Distributed reductions: along the distributed axis by partial states
//! merged over the ranks, along the others locally; the single-process
//! bits either way.

use crate::agree::{agree, share, signature, Local};
use crate::error::Result;
use crate::tree::merge_to_root;
use mpi::collective::SystemOperation;
use mpi::traits::*;
use tessera::reduce::{
    partial_stages, reduce_centres, reduce_finish, reduce_partial, reduced_shape, Centres, Partial,
    TermRange,
};
use tessera::{ArrayView, ArrayViewMut, DType, Exec, ReduceOp, Terms};

/// Rows before this rank's and rows of all ranks (exact integer sums).
pub(crate) fn row_offsets<C: Communicator>(comm: &C, rows: u64) -> (u64, u64) {
    let mut before = 0u64;
    comm.exclusive_scan_into(&rows, &mut before, SystemOperation::sum());
    if comm.rank() == 0 {
        // MPI leaves rank 0's exclusive scan undefined.
        before = 0;
    }
    let mut total = 0u64;
    comm.all_reduce_into(&rows, &mut total, SystemOperation::sum());
    (before, total)
}

/// How a distributed reduction's terms are formed from this rank's rows of
/// `x` (and of a second operand `y`, distributed as `x` is: the same rows
/// on every rank, the same shape and dtype), as `tessera::Terms` forms
/// them: the values, or a fixed map of them (floats).
#[derive(Clone, Copy, Debug)]
pub enum Form<'v, 'a> {
    /// The values of `x`.
    Values,
    /// `x · x`.
    Squares,
    /// `|x|`.
    Magnitudes,
    /// `x · y` (a dot product).
    Products(&'v ArrayView<'a>),
    /// `(x − y)²` (a squared distance).
    SquaredDifferences(&'v ArrayView<'a>),
    /// `|x − y|` (an L1 distance).
    AbsDifferences(&'v ArrayView<'a>),
}

impl<'v, 'a> Form<'v, 'a> {
    fn terms(self, x: &'v ArrayView<'a>) -> Terms<'v, 'a> {
        match self {
            Form::Values => Terms::of(x),
            Form::Squares => Terms::square(x),
            Form::Magnitudes => Terms::abs(x),
            Form::Products(y) => Terms::product(x, y),
            Form::SquaredDifferences(y) => Terms::squared_difference(x, y),
            Form::AbsDifferences(y) => Terms::abs_difference(x, y),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Form::Values => "values",
            Form::Squares => "squares",
            Form::Magnitudes => "magnitudes",
            Form::Products(_) => "products",
            Form::SquaredDifferences(_) => "squared differences",
            Form::AbsDifferences(_) => "absolute differences",
        }
    }
    fn second(self) -> Option<&'v ArrayView<'a>> {
        match self {
            Form::Products(y) | Form::SquaredDifferences(y) | Form::AbsDifferences(y) => Some(y),
            _ => None,
        }
    }
}

/// The dot product `Σ x·y` over every axis of the block-distributed `x`
/// and `y` (this rank's rows of each) into `dst` (a scalar, on every rank):
/// the products rounded, then summed in lane order, as `tessera::dot`.
///
/// # Errors
/// As [`reduce_terms`].
pub fn dot<C: Communicator>(
    comm: &C,
    x: &ArrayView<'_>,
    y: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let axes: Vec<usize> = (0..x.shape().len()).collect();
    reduce_terms(
        comm,
        &axes,
        x,
        Form::Products(y),
        &mut [(ReduceOp::Sum, dst)],
        exec,
    )
}

/// Bytes of a result buffer of `shape` and `dtype`.
fn result_bytes(shape: &[usize], dtype: DType) -> usize {
    let n: usize = shape.iter().product();
    let info = dtype.info();
    n.div_ceil(info.values_per_byte as usize) * info.item_bytes
}

/// [`reduce_many`] with one reduction.
///
/// # Errors
/// As [`reduce_many`].
pub fn reduce<C: Communicator>(
    comm: &C,
    op: ReduceOp,
    axes: &[usize],
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    reduce_many(comm, axes, x, &mut [(op, dst)], exec)
}

/// Reduce the block-distributed `x` (this rank's rows of the leading axis)
/// along `axes` by each of `outs`' reductions, with the bits of
/// `tessera::reduce_many` over the whole array on one process, at any
/// number of ranks and on any mix of tiers and thread counts.
///
/// Where `axes` include axis 0 every rank's destination is the whole
/// result (the reduced shape of the whole array, or with extent 1 kept) and
/// every rank receives it: the ranks' partial states
/// ([`tessera::reduce::Partial`]) of their ranges of term numbers merge in
/// rank order by a binomial tree to rank 0 (⌈log₂ P⌉ steps, P − 1 messages
/// of at most one state each), which finishes and broadcasts the result; a
/// two-stage reduction (Logsumexp, Variance, L2Norm) does this twice, the
/// first stage's centres broadcast between. Where they do not, each rank
/// reduces its own rows into its destination (the reduced shape of its
/// block): outputs are independent of each other.
///
/// Collective: every rank calls it with the same reductions, axes, dtype,
/// trailing shape and (along axis 0) destination shapes and dtypes.
///
/// # Errors
/// On every rank alike, before any destination is written on any rank:
/// [`crate::DistError::Refused`] with the lowest refusing rank's error
/// where a rank's operand or destination is refused (as
/// `tessera::reduce_many` refuses them, judged against the whole array's
/// shape: a Max of no term anywhere) or a rank fails during the call (an
/// allocation); Sum2 along axis 0 (its compensated pairs are kept as no
/// partial state); [`crate::DistError::Mismatch`] where the ranks' calls
/// differ.
pub fn reduce_many<C: Communicator>(
    comm: &C,
    axes: &[usize],
    x: &ArrayView<'_>,
    outs: &mut [(ReduceOp, &mut ArrayViewMut<'_>)],
    exec: &Exec,
) -> Result<()> {
    reduce_terms(comm, axes, x, Form::Values, outs, exec)
}

/// [`reduce_many`] over terms formed from `x` (and a second operand) as
/// `form` says: squares and magnitudes for norms, products for dot
/// products, differences for distances (`tessera::reduce_terms`' fixed
/// maps), with the single-process bits.
///
/// # Errors
/// As [`reduce_many`], and a second operand whose shape or dtype differs
/// from `x`'s on any rank, or a map of terms that are not floats.
pub fn reduce_terms<C: Communicator>(
    comm: &C,
    axes: &[usize],
    x: &ArrayView<'_>,
    form: Form<'_, '_>,
    outs: &mut [(ReduceOp, &mut ArrayViewMut<'_>)],
    exec: &Exec,
) -> Result<()> {
    let rows = x.shape().first().copied().unwrap_or(0);
    let (before, total_rows) = row_offsets(comm, rows as u64);
    let distributed = axes.contains(&0);
    // This rank's refusals, judged against the whole array.
    let mut shape = x.shape().to_vec();
    let mut sig: Vec<Vec<u8>> = vec![
        x.dtype().name().as_bytes().to_vec(),
        format!("{:?} {:?} {}", axes, x.shape().get(1..), form.name()).into_bytes(),
    ];
    let local: Local<()> = (|| {
        if x.shape().is_empty() {
            return Err("x: a distributed array has a leading axis (rank 0 given)".to_string());
        }
        if let Some(y) = form.second() {
            if y.shape() != x.shape() || y.dtype() != x.dtype() {
                return Err(format!(
                    "y: {} {:?}, expected x's {} {:?}",
                    y.dtype(),
                    y.shape(),
                    x.dtype(),
                    x.shape()
                ));
            }
        }
        if !matches!(form, Form::Values) && x.dtype().info().class != tessera::Class::Float {
            return Err(format!(
                "x: {} terms need a float dtype, not {}",
                form.name(),
                x.dtype()
            ));
        }
        shape[0] = usize::try_from(total_rows).map_err(|e| e.to_string())?;
        if outs.is_empty() {
            return Err("outs: a reduction needs at least one destination".into());
        }
        for (op, dst) in outs.iter() {
            if distributed {
                if *op == ReduceOp::Sum2 {
                    return Err(
                        "Sum2 along the distributed axis: its compensated pairs are \
                                kept as no partial state"
                            .into(),
                    );
                }
                tessera::reduce::reduce_query(
                    *op,
                    axes,
                    &shape,
                    x.dtype(),
                    Some((dst.shape(), dst.dtype())),
                )
                .map_err(|e| e.to_string())?;
            } else {
                tessera::reduce::reduce_query(
                    *op,
                    axes,
                    x.shape(),
                    x.dtype(),
                    Some((dst.shape(), dst.dtype())),
                )
                .map_err(|e| e.to_string())?;
            }
            tessera::check_destination(dst).map_err(|e| e.to_string())?;
        }
        exec.resolve_tier().map_err(|e| e.to_string())?;
        Ok(())
    })();
    for (op, dst) in outs.iter() {
        sig.push(op.name().as_bytes().to_vec());
        sig.push(dst.dtype().name().as_bytes().to_vec());
        if distributed {
            sig.push(format!("{:?}", dst.shape()).into_bytes());
        }
    }
    let parts: Vec<&[u8]> = sig.iter().map(|v| v.as_slice()).collect();
    agree(
        comm,
        &local,
        signature(&parts),
        "the dtype, trailing shape, axes, reductions or destinations",
    )?;
    // Every result into a buffer first: nothing is written until every rank
    // has every result.
    let mut results = Vec::with_capacity(outs.len());
    for (op, dst) in outs.iter() {
        let out_shape: Vec<usize> = if distributed {
            reduced_shape(&shape, axes)
        } else {
            reduced_shape(x.shape(), axes)
        };
        let out_dtype = dst.dtype();
        let r = if distributed {
            let per = axes
                .iter()
                .filter(|&&a| a != 0)
                .map(|&a| shape[a])
                .product::<usize>();
            let range = TermRange {
                start: before as usize * per,
                total: shape[0] * per,
            };
            along_rows(
                comm,
                *op,
                axes,
                form.terms(x),
                range,
                (&out_shape, out_dtype),
                exec,
            )?
        } else {
            let mut buf = vec![0u8; result_bytes(&out_shape, out_dtype)];
            let local: Local<()> = (|| {
                let mut view = ArrayViewMut::contiguous(out_dtype, &out_shape, &mut buf)
                    .map_err(|e| e.to_string())?;
                tessera::reduce_terms(axes, form.terms(x), &mut [(*op, &mut view)], exec)
                    .map_err(|e| e.to_string())
            })();
            agree(comm, &local, 0, "")?;
            buf
        };
        results.push(r);
    }
    for ((_, dst), r) in outs.iter_mut().zip(&results) {
        // The destination's shape is the reduced shape, or it with extent 1
        // kept at the reduced axes: the same C order either way.
        let written = crate::bytes::store(dst, r);
        // The destinations were checked before any work, and a copy between
        // valid views of one dtype is not refused.
        written.map_err(|e| crate::DistError::Refused {
            rank: comm.rank(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// One reduction along the distributed axis: the ranks' states merged to
/// rank 0, which broadcasts the centres (a two-stage reduction) and the
/// result, as bytes of `out` (shape and dtype) in C order.
fn along_rows<C: Communicator>(
    comm: &C,
    op: ReduceOp,
    axes: &[usize],
    terms: Terms<'_, '_>,
    range: TermRange,
    out: (&[usize], DType),
    exec: &Exec,
) -> Result<Vec<u8>> {
    let rank = comm.rank();
    let mut centres: Option<Centres> = None;
    let stages = partial_stages(op);
    let mut result = Vec::new();
    for stage in 0..stages {
        let mine = if crate::fault::hit("state") {
            Err("cannot allocate the partial state (injected)".to_string())
        } else {
            reduce_partial(op, axes, terms, range, centres.as_ref(), exec)
                .map(|p| p.to_bytes())
                .map_err(|e| e.to_string())
        };
        let merge = |a: &[u8], b: &[u8]| -> std::result::Result<Vec<u8>, String> {
            let a = Partial::from_bytes(a).map_err(|e| e.to_string())?;
            let b = Partial::from_bytes(b).map_err(|e| e.to_string())?;
            Ok(a.merge(&b).map_err(|e| e.to_string())?.to_bytes())
        };
        let whole = merge_to_root(comm, mine.map_err(|m| (rank, m)), merge);
        // Rank 0 turns the whole state into the centres or the result.
        let finished = whole.map(|w| {
            let rank0 = |e: tessera::Error| (0, e.to_string());
            let w = w?;
            let p = Partial::from_bytes(&w).map_err(rank0)?;
            if stage + 1 < stages {
                return Ok(reduce_centres(&p).map_err(rank0)?.to_bytes());
            }
            let mut buf = vec![0u8; result_bytes(out.0, out.1)];
            let mut view = ArrayViewMut::contiguous(out.1, out.0, &mut buf).map_err(rank0)?;
            reduce_finish(&p, centres.as_ref(), &mut view, exec).map_err(rank0)?;
            Ok(buf)
        });
        let shared = share(comm, finished)?;
        if stage + 1 < stages {
            centres =
                Some(
                    Centres::from_bytes(&shared).map_err(|e| crate::DistError::Refused {
                        rank: 0,
                        message: e.to_string(),
                    })?,
                );
        } else {
            result = shared;
        }
    }
    Ok(result)
}
