//! Contraction: `dst[B, I, J] = init[B, I, J] + Σ_K a[B, I, K]·b[B, K, J]`.
//!
//! The caller names the batch axes and the contracted axes of `a` and `b` as
//! pairs (einsum-like); every other axis of `a` is a row axis (I) and every
//! other axis of `b` a column axis (J). The destination's shape is the batch
//! extents (in pair order; an extent of 1 on one side broadcasts), then a's
//! free axes in order, then b's.
//!
//! # Contract
//!
//! * **Accumulator.** Everything is computed in `acc`: `f32`, `f64`, `c64`,
//!   `c128`, the compensated pairs `df32` and `dd64` (see [`pair`]) or an
//!   integer of 4 to 64 bits (signed or unsigned). Each element
//!   of `a`, `b` and `init` enters the accumulator as
//!   [`cast`](fn@crate::cast) casts it (default mode: exact where `acc` holds the
//!   value, else rounded to nearest; a float into an integer `acc` truncates
//!   toward zero and saturates); the result enters `dst`, of any dtype, as a
//!   cast rounds it, once.
//! * **Order** (floats; ARCHITECTURE.md §5.5), from the rows R (a's free extents
//!   multiplied), columns C (b's) and depth K (the contracted extents, numbered
//!   in C order of the pairs as given):
//!   - *chain order* where R > 4, C > 4, R·C ≥ 64 and K < 128·R·C: each output
//!     starts from init (or +0) and adds its products in increasing k, one
//!     fused multiply-add each;
//!   - *lane order* otherwise (the reduction order of ARCHITECTURE.md §5.3: blocks of
//!     1024, lane `k mod 16`,
//!     fixed fold, block tree, each lane fused multiply-adds from +0), then init
//!     is added to the total. An output with no products (K = 0) is its init,
//!     or +0.
//!
//!   A complex accumulator sums each part over 2K real terms, numbered
//!   `2k`, `2k+1`: `ar·br`, `−ai·bi` for the real part and `ar·bi`, `ai·br`
//!   for the imaginary part, in the order R, C and K choose (chain: 2K fused
//!   multiply-adds from init's part; lane: the 2K terms in lanes, then init's
//!   part).
//!
//!   The bits depend on the operands' values, the dtypes and R, C, K alone: not
//!   on layouts, batch position, blocking, tier or threads.
//! * **Bound.** For a real float `acc` with unit roundoff u, each output is
//!   within γ(K+1)·(|init| + Σ|a||b|) of the exact sum of the terms as they
//!   entered `acc`, γ(n) = n·u/(1 − n·u), before the final rounding into `dst`;
//!   for a complex `acc` the error's modulus is within γ(2K+2)·(|init| +
//!   Σ|a||b|), u its parts' unit roundoff.
//! * **Pairs** (`df32`, `dd64`): operands enter the pair's part (f32,
//!   f64); each output keeps a sum and a compensation, in the same chain and
//!   lane orders, and is rounded once into `dst`: within `u·|x| +
//!   γ(K+2)²·(|init| + Σ|a||b|)` with γ of the part's unit roundoff (the
//!   steps and the bound: [`pair`]).
//! * **Integers** (w bits, 4 ≤ w ≤ 64): products and sums wrap, so the result
//!   is the exact sum of the casts, modulo 2^w, in any order (an unsigned
//!   `acc` as the residue in `[0, 2^w)`, a signed one in `[−2^(w−1),
//!   2^(w−1))`). No saturating or pairing instruction is used. Accumulators
//!   other than `i32` and `i64` run into `i32` (w ≤ 32) or `i64`, whose sums
//!   are exact modulo a multiple of 2^w, and are then reduced (`int_acc`).
//! * **Refusals**, all before any write, as a typed [`Error`]: an unsupported
//!   `acc`; an axis out of range or named twice; contracted extents that
//!   differ; batch extents that differ and are not 1; shapes (of the
//!   operands or of the destination they give, even where they are empty)
//!   of more elements than `isize::MAX` ([`Error::Overflow`]); a destination
//!   whose shape is not the contraction's or that reaches an element twice;
//!   an init that does not broadcast to it; scratch that cannot be allocated
//!   ([`Error::Alloc`]: operands converted into `acc`, index tables, which
//!   grow with the extents an operand names, broadcast or not); an
//!   unavailable tier. Operands with no element give each output its init
//!   (or +0).
//!
//! # Speed
//!
//! Chain order runs a BLIS-style GEMM ([`cache_blocking`] for the blocking):
//! B and A are packed into panels (operands of other dtypes as raw codes, then
//! cast into the accumulator block by block), an `MR × NR` microkernel (6 × 16
//! for f32 and 6 × 8 for f64 on the avx2 tier, the same loops with `mul_add`
//! on the scalar tier) continues each C tile's chains over a k-block, and
//! threads take disjoint row or column blocks. A plain product of two
//! matrices of the accumulator's float dtype with every extent at most 64
//! skips the general set-up ([`small`]: the same kernels over operands packed
//! in place, the same lane sums). A dense destination of the
//! accumulator's dtype is written in place. Lane order gathers each output's
//! row and column and sums them in lanes (or, for many long rows and
//! columns, reads them block by block); few outputs with a long depth share
//! the nodes of the depth's block tree among threads. Integer sums are exact
//! in any order: `i8`, `u8` and `i16` inputs into `i32` run the packed
//! integer kernels of [`integer`] on the vector tiers (AVX-512 VNNI
//! `vpdpbusd` on four 8-bit steps at a time, `vpmaddwd`/`vpdpwssd` on two
//! 16-bit steps; wrapping, never saturating); other inputs of at most 16 bits
//! run as an f64 chain GEMM when every partial sum stays below 2^53 (so every
//! step is exact), then wrap into the accumulator; others take the lane
//! path. A complex contraction in chain order runs the complex microkernels
//! of [`complex`] (each output's real and imaginary chains side by side,
//! from operands packed as re/im pairs and planes); in lane order it runs as
//! two real ones over 2K terms. A pair contraction in chain order runs the
//! compensated microkernels (each output's sum and compensation side by
//! side as two planes, [`planes`]); in lane order the compensated dot
//! product's blocks of the reduction engine.

pub(crate) mod acc;
pub mod association;
mod block_scaled;
pub mod cache_blocking;
mod complex;
mod drive_complex;
mod drive_integer;
mod drive_real;
mod gemm;
mod geometry;
pub mod grouped;
mod int_acc;
mod integer;
pub(crate) mod lane;
mod micro;
mod pack;
pub mod packed;
pub mod pair;
mod planes;
pub mod qmatmul;
pub mod scaled;
mod select;
mod small;
// The entry linear algebra and attention will call (not built yet); its
// tests call it meanwhile.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) mod update;

pub use self::association::{choose as choose_order, Order};
use self::gemm::{Panels, SendPtr};
pub(crate) use self::geometry::check_accumulator;
use self::geometry::geometry;
pub(crate) use self::micro::Micro;
pub use self::packed::{matmul_packed, PackedB};
pub(crate) use self::select::contract_in;
use self::select::panel_need;
pub(crate) use self::select::Chained;
use crate::array::{c_strides, ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
pub use crate::reduce::partial::{contract_finish, contract_partial};
use crate::scratch::Scratch;
use crate::tier::Exec;
use crate::{DType, Tier};

/// What to contract: the batch and contracted axis pairs and the accumulator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractSpec {
    /// `(axis of a, axis of b)` pairs that are batch axes, in the order they take
    /// in the destination. Extents must match, or one of them be 1 (broadcast).
    pub batch: Vec<(usize, usize)>,
    /// `(axis of a, axis of b)` pairs that are summed over, numbered in C order
    /// of this list. Extents must match.
    pub contracting: Vec<(usize, usize)>,
    /// The accumulator dtype: `f32`, `f64`, `c64`, `c128`, `df32`, `dd64` or
    /// an integer of 4 to 64 bits (`i4`, `u4`, `i8`, `u8`, `i16`, `u16`,
    /// `i32`, `u32`, `i64`, `u64`).
    pub acc: DType,
}

impl ContractSpec {
    /// A spec with no batch and no contracted axes (an outer product).
    pub fn new(acc: DType) -> Self {
        ContractSpec {
            batch: Vec::new(),
            contracting: Vec::new(),
            acc,
        }
    }
    /// Add a batch pair.
    pub fn batch(mut self, a_axis: usize, b_axis: usize) -> Self {
        self.batch.push((a_axis, b_axis));
        self
    }
    /// Add a contracted pair.
    pub fn contracting(mut self, a_axis: usize, b_axis: usize) -> Self {
        self.contracting.push((a_axis, b_axis));
        self
    }
    /// The matrix product of `[.., M, K]` and `[.., K, N]` of rank `rank` (≥ 2),
    /// the leading axes paired as batch axes.
    pub fn matmul(rank: usize, acc: DType) -> Self {
        let mut s = ContractSpec::new(acc);
        for i in 0..rank.saturating_sub(2) {
            s = s.batch(i, i);
        }
        s.contracting(rank.saturating_sub(1), rank.saturating_sub(2))
    }
}

/// The accumulators [`contract`] takes: the real and complex floats of 32
/// and 64 bits, the compensated pairs `df32` and `dd64`, and every integer
/// of 4 to 64 bits.
pub const ACCUMULATORS: [DType; 16] = [
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
    DType::Df32,
    DType::Dd64,
    DType::I32,
    DType::I64,
    DType::I4,
    DType::U4,
    DType::I8,
    DType::U8,
    DType::I16,
    DType::U16,
    DType::U32,
    DType::U64,
];

/// The default accumulator for inputs of these dtypes: `i64` if both are
/// integers (or bool) and one has more than 32 bits, `i32` if both are
/// integers; otherwise `f64` if either is `f64`, `c128` or an integer of more
/// than 16 bits, else `f32` — made complex (`c128` or `c64`) if either input
/// is complex.
pub fn default_acc(a: DType, b: DType) -> DType {
    use crate::Class;
    let (ia, ib) = (a.info(), b.info());
    let int = |c: Class| matches!(c, Class::Int | Class::Uint | Class::Bool);
    if ia.class == Class::Complex || ib.class == Class::Complex {
        let wide = |d: DType| {
            let i = d.info();
            d == DType::F64 || d == DType::C128 || (int(i.class) && i.bits > 16)
        };
        return if wide(a) || wide(b) {
            DType::C128
        } else {
            DType::C64
        };
    }
    if int(ia.class) && int(ib.class) {
        if ia.bits > 32 || ib.bits > 32 {
            DType::I64
        } else {
            DType::I32
        }
    } else if a == DType::F64
        || b == DType::F64
        || (int(ia.class) && ia.bits > 16)
        || (int(ib.class) && ib.bits > 16)
    {
        DType::F64
    } else {
        DType::F32
    }
}

pub(crate) use crate::alloc::{try_collect, try_filled, try_vec};

/// The destination shape of contracting operands of these shapes by `spec`,
/// or why they do not contract.
pub fn output_shape(a: &[usize], b: &[usize], spec: &ContractSpec) -> Result<Vec<usize>> {
    let g = geometry(a, &c_strides(a), b, &c_strides(b), spec)?;
    Ok(g.out_shape)
}

/// Contract `a` with `b` into `dst`, plus `init` (see the [module](self) for
/// the order, the bound and the refusals).
///
/// `init`, if given, broadcasts to `dst`'s shape. `exec` chooses the tier and
/// the threads; neither changes a bit.
pub fn contract(
    spec: &ContractSpec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let exec = *exec;
    contract_in(a, b, init, dst, spec, exec, None, Panels::Cache)
}

/// [`contract`] in a given association instead of the one [`choose_order`]
/// picks from the call's own rows, columns and depth: a block of the rows
/// (or columns) of a larger contraction, run in that contraction's order,
/// gives exactly those outputs of it (each output's products are associated
/// by its own k alone in either order), which a caller splitting a
/// contraction over processes needs. Integer accumulators are exact in any
/// order and ignore it.
///
/// # Errors
/// As [`contract`].
pub fn contract_in_order(
    spec: &ContractSpec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    order: Order,
    exec: &Exec,
) -> Result<()> {
    contract_in(a, b, init, dst, spec, *exec, Some(order), Panels::Cache)
}

/// A contraction planned once from its spec and its operands' shapes and
/// dtypes (no `exec`): the checks of the spec against the shapes, the
/// destination's shape, and the scratch a run needs, made before any run
/// (ARCHITECTURE.md §4, the plan convention). [`ContractPlan::run`] and
/// [`ContractPlan::run_with_scratch`] take views of those shapes and dtypes
/// in any layout and give [`contract`]'s bits; [`contract`] is the one-shot
/// form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractPlan {
    spec: ContractSpec,
    a: (Vec<usize>, DType),
    b: (Vec<usize>, DType),
    out_shape: Vec<usize>,
    /// Scratch bytes one thread of a run needs, on whichever tier it runs.
    task_bytes: usize,
}

impl ContractPlan {
    /// Plan contracting operands of shapes and dtypes `a` and `b` by `spec`.
    /// Refuses what [`contract`] refuses of the spec and the shapes (an
    /// unsupported accumulator, axes out of range or named twice, extents
    /// that differ, sizes that overflow).
    pub fn new(spec: &ContractSpec, a: (&[usize], DType), b: (&[usize], DType)) -> Result<Self> {
        let mut task_bytes = 0;
        // The packing buffers of every tier the library has: a plan's
        // scratch serves a run on any of them.
        for tier in Tier::ALL {
            if let Some(need) = panel_need(tier, spec, a, b)? {
                task_bytes = task_bytes.max(need.task_bytes());
            }
        }
        Ok(ContractPlan {
            spec: spec.clone(),
            a: (a.0.to_vec(), a.1),
            b: (b.0.to_vec(), b.1),
            out_shape: output_shape(a.0, b.0, spec)?,
            task_bytes,
        })
    }

    /// The destination's shape.
    pub fn output_shape(&self) -> &[usize] {
        &self.out_shape
    }

    /// The spec the plan contracts by.
    pub fn spec(&self) -> &ContractSpec {
        &self.spec
    }

    /// Bytes of scratch one thread of a run needs (0 where a run packs no
    /// float GEMM panels: lane order, the small products of at most 64 in
    /// each extent, the packed integer products of `i8`/`u8`/`i16` into
    /// `i32`, the complex and the pair microkernels, which hold panels of
    /// their own,
    /// other integer accumulators, empty products). A scratch of `t` times
    /// this lets a run use up to `t` threads.
    pub fn scratch_bytes(&self) -> usize {
        self.task_bytes
    }

    fn check(&self, a: &ArrayView<'_>, b: &ArrayView<'_>) -> Result<()> {
        for (name, v, (shape, dtype)) in [("a", a, &self.a), ("b", b, &self.b)] {
            if v.dtype() != *dtype {
                return Err(Error::DTypeMismatch {
                    operand: format!("contract plan: {name}"),
                    expected: *dtype,
                    got: v.dtype(),
                });
            }
            if v.shape() != shape.as_slice() {
                return Err(Error::Shape {
                    operand: format!("contract plan: {name}"),
                    shape: v.shape().to_vec(),
                    target: shape.clone(),
                });
            }
        }
        Ok(())
    }

    /// Contract `a` with `b` (of the planned shapes and dtypes, any layout)
    /// into `dst`, plus `init`: [`contract`]'s bits and refusals, the
    /// packing buffers kept per thread between calls.
    pub fn run(
        &self,
        a: &ArrayView<'_>,
        b: &ArrayView<'_>,
        init: Option<&ArrayView<'_>>,
        dst: &mut ArrayViewMut<'_>,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, b)?;
        contract_in(a, b, init, dst, &self.spec, *exec, None, Panels::Cache)
    }

    /// [`ContractPlan::run`] with the packing buffers in the caller's
    /// `scratch`, grown (fallibly) to [`ContractPlan::scratch_bytes`] where
    /// it is smaller; a run uses as many of `exec`'s threads as `scratch`
    /// holds regions for (the bits are the same at any count).
    pub fn run_with_scratch(
        &self,
        a: &ArrayView<'_>,
        b: &ArrayView<'_>,
        init: Option<&ArrayView<'_>>,
        dst: &mut ArrayViewMut<'_>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        self.check(a, b)?;
        let tier = exec.resolve_tier_for(crate::tier::Engine::Contract)?;
        let need = panel_need(
            tier,
            &self.spec,
            (a.shape(), a.dtype()),
            (b.shape(), b.dtype()),
        )?;
        scratch.reserve(self.task_bytes)?;
        let Some(need) = need else {
            return contract_in(a, b, init, dst, &self.spec, *exec, None, Panels::Cache);
        };
        let per = need.task_bytes().max(1);
        let tasks = (scratch.size() / per).clamp(1, exec.thread_count());
        let panels = Panels::Caller {
            base: SendPtr(scratch.as_mut_ptr()),
            need,
            first: 0,
            tasks,
        };
        contract_in(
            a,
            b,
            init,
            dst,
            &self.spec,
            exec.threads(tasks),
            None,
            panels,
        )
    }
}

/// The matrix product `dst = a · b` of `[.., M, K]` and `[.., K, N]` (equal
/// ranks ≥ 2, leading axes batch axes that broadcast), accumulated in
/// [`default_acc`] of the input dtypes, as [`contract`] computes it.
pub fn matmul(
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let rank = a.shape().len();
    if rank < 2 || b.shape().len() != rank {
        let (name, v) = if rank < 2 { ("a", a) } else { ("b", b) };
        return Err(Error::Rank {
            operand: format!("matmul: {name}"),
            shape: v.shape().to_vec(),
            expected: format!(
                "operands of equal ranks of at least 2 are needed (a has rank {rank})"
            ),
        });
    }
    let spec = ContractSpec::matmul(rank, default_acc(a.dtype(), b.dtype()));
    contract(&spec, a, b, None, dst, exec)
}

/// Matrix-vector product `y[i] = Σ_k a[i, k]·x[k]` (a of shape `[M, K]`), in
/// [`default_acc`]: lane order (one column), so row i of `y` has the bits of
/// [`inner_product`] of row i of `a` with `x`.
pub fn gemv(
    a: &ArrayView<'_>,
    x: &ArrayView<'_>,
    y: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let spec = ContractSpec::new(default_acc(a.dtype(), x.dtype())).contracting(1, 0);
    contract(&spec, a, x, None, y, exec)
}

/// The inner product `out[] = Σ_k x[k]·y[k]` of two vectors into a rank-0
/// `out`, as a contraction: in [`default_acc`], lane order (§5.5). (The
/// reduction [`crate::reduce::dot`] sums products along any axes by the
/// reduction engine's rules instead.)
pub fn inner_product(
    x: &ArrayView<'_>,
    y: &ArrayView<'_>,
    out: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let spec = ContractSpec::new(default_acc(x.dtype(), y.dtype())).contracting(0, 0);
    contract(&spec, x, y, None, out, exec)
}
