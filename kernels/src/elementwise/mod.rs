//! The elementwise engine: runs one generated kernel over operands of any
//! layout, broadcasting inputs to the destination's shape.
//!
//! The engine validates everything first (kind and dtype, arity, dtypes, shapes,
//! layouts), then merges axes that are contiguous in every operand, and hands
//! each innermost run to the best loop variant of the kernel: `contig` when every
//! operand has unit stride, `bcastK` when input K alone is a broadcast scalar,
//! `strided` otherwise. Sub-byte operands are unpacked into small tiles, computed
//! with the contiguous kernel and packed back. Every path gives the same bits:
//! an elementwise result depends on its inputs' values alone.

pub(crate) mod packed;
pub(crate) mod plan;
pub(crate) mod stream;
pub(crate) mod sub_byte;

use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::kernel_table;
use crate::tier::Exec;
use crate::{kernel_index, Class, DType, Kind, OperandRule, ResultRule, Variant};
use plan::Plan;

/// Elements below which a call stays on the calling thread.
pub(crate) const PARALLEL_MIN: usize = 1 << 18;

/// The dtype of a call's inputs (the value inputs for `select`).
pub fn call_dtype(kind: Kind, inputs: &[DType]) -> Result<DType> {
    let info = kind.info();
    if inputs.len() != info.arity {
        return Err(Error::Arity {
            kind,
            expected: info.arity,
            got: inputs.len(),
        });
    }
    let lead = match info.operands {
        OperandRule::Same | OperandRule::ComplexReal => 0,
        OperandRule::CondFirst => 1,
    };
    let dtype = inputs[lead];
    for (i, &d) in inputs.iter().enumerate() {
        let want = operand_dtype(kind, dtype, i);
        if d != want {
            return Err(Error::DTypeMismatch {
                operand: format!("input {i}"),
                expected: want,
                got: d,
            });
        }
    }
    if kernel_index(kind, dtype, Variant::Strided).is_none() {
        return Err(Error::Unsupported { kind, dtype });
    }
    Ok(dtype)
}

/// The dtype input `i` of `kind` has in a call of dtype `call` (its operand
/// rule): bool for select's condition, the component dtype for the real
/// factor of `scale` (c64: f32, c128: f64, f16c: f16, bf16c: bf16), else
/// `call` itself.
pub fn operand_dtype(kind: Kind, call: DType, i: usize) -> DType {
    match kind.info().operands {
        OperandRule::CondFirst if i == 0 => DType::Bool,
        OperandRule::ComplexReal if i == 1 => component(call),
        _ => call,
    }
}

/// The component dtype of a complex or pair dtype (f32 for c64 and df32, f64
/// for c128 and dd64, f16 for f16c, bf16 for bf16c); a real dtype is its own.
fn component(d: DType) -> DType {
    match d.info().class {
        Class::Complex => d.component().unwrap_or(d),
        Class::Pair if d.info().bits == 64 => DType::F32,
        Class::Pair => DType::F64,
        _ => d,
    }
}

/// The dtype a kind produces from inputs of `dtype`.
pub fn result_dtype(kind: Kind, dtype: DType) -> Result<DType> {
    if kernel_index(kind, dtype, Variant::Strided).is_none() {
        return Err(Error::Unsupported { kind, dtype });
    }
    Ok(match kind.info().result {
        ResultRule::Same => dtype,
        ResultRule::Bool => DType::Bool,
        ResultRule::Real => component(dtype),
        ResultRule::Pair if dtype == DType::F32 => DType::Df32,
        ResultRule::Pair => DType::Dd64,
        ResultRule::Order => DType::I8,
        ResultRule::Complex => dtype.complex().ok_or(Error::Unsupported { kind, dtype })?,
    })
}

/// The shape `shapes` broadcast to (numpy's rules), or None.
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Option<Vec<usize>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        for (i, &n) in s.iter().enumerate() {
            let o = &mut out[rank - s.len() + i];
            if *o == 1 {
                *o = n;
            } else if n != 1 && n != *o {
                return None;
            }
        }
    }
    Some(out)
}

/// Why a destination could reach one element twice, if it could: its axes of
/// more than one element, by increasing stride magnitude, must each step past
/// everything the smaller ones span. (This sufficient rule refuses every zero
/// stride and every interleaving; a write to one element from two places
/// would make the result depend on which lands last, and with threads on
/// timing.) An empty destination reaches no element, so never one twice.
pub(crate) fn self_overlap(shape: &[usize], strides: &[isize]) -> Option<String> {
    if shape.contains(&0) {
        return None;
    }
    let axes_of = || {
        shape
            .iter()
            .zip(strides)
            .enumerate()
            .filter(|(_, (&n, _))| n > 1)
            .map(|(i, (&n, &s))| (s.unsigned_abs() as u128, n, i))
    };
    // Up to 8 axes on the stack (small calls check on every call).
    let mut few = [(0u128, 0usize, 0usize); 8];
    let mut many = Vec::new();
    let axes: &mut [(u128, usize, usize)] = if shape.len() <= few.len() {
        let mut k = 0;
        for a in axes_of() {
            few[k] = a;
            k += 1;
        }
        &mut few[..k]
    } else {
        many.extend(axes_of());
        &mut many
    };
    axes.sort_unstable();
    let mut span: u128 = 0;
    for &mut (s, n, i) in axes {
        if s <= span {
            return Some(format!(
                "axis {i} (stride {}) reaches elements the other axes also reach: \
                 a destination must address each element once",
                strides[i]
            ));
        }
        span += (n as u128 - 1) * s;
    }
    None
}

/// Run `kind` on `inputs` into `out`, on `exec`'s tier and threads.
///
/// Inputs broadcast to `out`'s shape; `out` must have the kind's result dtype
/// ([`result_dtype`]) and reach no element twice. Refusals ([`Error`]: arity,
/// dtypes, shapes, layouts, an unavailable tier) happen before any write.
pub fn elementwise(
    kind: Kind,
    inputs: &[ArrayView<'_>],
    out: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let tier = exec.resolve_tier_for(crate::tier::Engine::Elementwise)?;
    let arity = kind.info().arity;
    if inputs.len() != arity {
        return Err(Error::Arity {
            kind,
            expected: arity,
            got: inputs.len(),
        });
    }
    let mut dtypes = [DType::Bool; 3];
    for (d, a) in dtypes.iter_mut().zip(inputs) {
        *d = a.dtype();
    }
    let dtype = call_dtype(kind, &dtypes[..arity])?;
    let want = result_dtype(kind, dtype)?;
    if out.dtype() != want {
        return Err(Error::DTypeMismatch {
            operand: "destination".into(),
            expected: want,
            got: out.dtype(),
        });
    }
    for (i, a) in inputs.iter().enumerate() {
        if !broadcasts_to(a.shape(), out.shape()) {
            return Err(Error::Shape {
                operand: format!("input {i}"),
                shape: a.shape().to_vec(),
                target: out.shape().to_vec(),
            });
        }
    }
    let table = kernel_table(tier).ok_or(Error::TierUnavailable(tier))?;
    if out.layout().is_empty() {
        return Ok(());
    }
    check_destination(out)?;
    let select = |v: Variant| kernel_index(kind, dtype, v).map(|i| table[i]);
    // The transcendentals' kernels are bound by their arithmetic, not by the
    // stores: they write plainly (see `stream::run_flat`).
    let may_stream = kind.info().accuracy == crate::Accuracy::Exact;
    // SAFETY: every operand was validated against its bytes (views validate on
    // construction), shapes broadcast to the destination's, and the kernels only
    // visit positions inside the destination's shape; the destination is a unique
    // borrow, so it overlaps no input.
    unsafe { run(exec, inputs, out, &select, may_stream) };
    Ok(())
}

pub(crate) use crate::checks::check_destination;

/// Whether `shape` broadcasts to exactly `target` (numpy's rules).
pub fn broadcasts_to(shape: &[usize], target: &[usize]) -> bool {
    shape.len() <= target.len()
        && shape
            .iter()
            .rev()
            .zip(target.iter().rev())
            .all(|(&n, &t)| n == t || n == 1)
}

/// Threads for a call of `n` elements: the executor's count from
/// [`PARALLEL_MIN`] elements on, else one.
pub(crate) fn call_threads(exec: &Exec, n: usize) -> usize {
    if n >= PARALLEL_MIN {
        exec.thread_count()
    } else {
        1
    }
}

/// Run validated operands: one flat run when every operand is C-contiguous
/// over the destination's shape (or a single broadcast element), the general
/// plan otherwise. `may_stream`: a large flat run may stream its results
/// ([`stream::run_flat`]); false for kernels bound by their arithmetic.
///
/// # Safety
/// The operands must have been validated as `elementwise` and `cast` do
/// (every element position they name inside their bytes, the destination
/// reaching no element twice and overlapping no input it must not), and
/// `select` must give the call's kernels for the operands' dtypes, on a tier
/// this CPU runs.
pub(crate) unsafe fn run(
    exec: &Exec,
    inputs: &[ArrayView<'_>],
    out: &mut ArrayViewMut<'_>,
    select: &dyn Fn(Variant) -> Option<crate::LoopFn>,
    may_stream: bool,
) {
    let n = out.layout().len();
    let flat_ok = out.dtype().info().values_per_byte == 1
        && crate::array::c_contiguous(out.shape(), out.strides())
        && inputs.iter().all(|a| {
            a.dtype().info().values_per_byte == 1
                && (a.layout().len() == 1
                    || (a.layout().len() == n
                        && crate::array::c_contiguous(a.shape(), a.strides())))
        });
    let threads = call_threads(exec, n);
    if !flat_ok {
        let plan = Plan::new(inputs, out);
        // SAFETY: the plan's positions are the validated views' (this
        // function's contract) and `select` gives the call's kernels, what
        // `Plan::run` asks.
        unsafe { plan.run(select, threads) };
        return;
    }
    let mut args = crate::Args {
        n,
        src: [core::ptr::null(); 3],
        src_stride: [1; 3],
        dst: core::ptr::null_mut(),
        dst_stride: 1,
    };
    let mut bcast = None;
    for (k, a) in inputs.iter().enumerate() {
        let item = a.dtype().info().item_bytes;
        // SAFETY: the offset is a validated element position of the view.
        args.src[k] = unsafe { a.data().as_ptr().add(a.layout().offset * item) };
        if a.layout().len() == 1 && n > 1 {
            args.src_stride[k] = 0;
            bcast = Some(if bcast.is_none() { k } else { usize::MAX });
        }
    }
    let variant = match bcast {
        None => Variant::Contig,
        Some(0) if inputs.len() > 1 => Variant::Bcast0,
        Some(1) => Variant::Bcast1,
        Some(2) => Variant::Bcast2,
        _ => Variant::Strided,
    };
    let f = select(variant)
        .or_else(|| select(Variant::Strided))
        .expect("every kernel has a strided variant");
    let out_item = out.dtype().info().item_bytes;
    let offset = out.layout().offset;
    // SAFETY: the offset is a validated element position of the destination.
    args.dst = unsafe { out.data_mut().as_mut_ptr().add(offset * out_item) };
    let threads = threads.min(n).max(1);
    // Bytes per element of each input (at most three: `Args` holds three),
    // on the stack: small calls pass here on every call.
    let mut item_of = [0usize; 3];
    for (slot, a) in item_of.iter_mut().zip(inputs) {
        *slot = a.dtype().info().item_bytes;
    }
    let items = &item_of[..inputs.len().min(3)];
    if threads == 1 {
        // SAFETY: every operand holds `n` elements from its pointer (or one, at
        // stride 0), as validated.
        unsafe { stream::run_flat(f, &args, items, out_item, may_stream) };
        return;
    }
    let chunk = n.div_ceil(threads);
    let base = SendArgs(args);
    use rayon::prelude::*;
    (0..threads).into_par_iter().for_each(|t| {
        let i0 = (t * chunk).min(n);
        let i1 = ((t + 1) * chunk).min(n);
        if i0 >= i1 {
            return;
        }
        let mut a = base.get();
        a.n = i1 - i0;
        for (k, item) in items.iter().enumerate() {
            // SAFETY: i0 < n lies inside every non-broadcast operand.
            a.src[k] = unsafe { a.src[k].add(i0 * item * a.src_stride[k] as usize) };
        }
        // SAFETY: i0 < n lies inside the contiguous destination; the
        // tasks' chunks i0..i1 are disjoint.
        a.dst = unsafe { a.dst.add(i0 * out_item) };
        // SAFETY: the chunk stays inside every operand.
        unsafe { stream::run_flat(f, &a, items, out_item, may_stream) };
    });
}

/// `Args` moved into rayon tasks.
#[derive(Clone, Copy)]
struct SendArgs(crate::Args);

impl SendArgs {
    fn get(&self) -> crate::Args {
        self.0
    }
}
// SAFETY: the pointers address validated operands; tasks write disjoint chunks
// of the destination and only read the inputs.
unsafe impl Send for SendArgs {}
// SAFETY: a shared `SendArgs` is only copied out (`get`); each task then
// writes its own disjoint chunk of the destination and only reads the inputs.
unsafe impl Sync for SendArgs {}
