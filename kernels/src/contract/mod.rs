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
//!   `c128` or an integer of 4 to 64 bits (signed or unsigned). Each element
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
//! Chain order runs a BLIS-style GEMM ([`block`] for the cache blocking):
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
//! two real ones over 2K terms.

mod acc;
pub mod block;
mod blocked;
mod complex;
mod gemm;
mod int_acc;
mod integer;
mod lane;
mod micro;
pub mod order;
mod pack;
pub mod quant;
pub mod scaled;
pub mod segments;
mod small;

use self::acc::{Acc, Src};
use self::gemm::{Blocking, Chain, Operand, PanelNeed, Panels, SendPtr};
use self::micro::Micro;
pub use self::order::{choose as choose_order, Order};
use crate::array::{as_bytes, c_strides, count_of, extent_product, ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::elementwise::{broadcasts_to, check_destination};
use crate::error::{Error, Result};
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
    /// The accumulator dtype: `f32`, `f64`, `c64`, `c128` or an integer of 4
    /// to 64 bits (`i4`, `u4`, `i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `i64`,
    /// `u64`).
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
/// and 64 bits and every integer of 4 to 64 bits.
pub const ACCUMULATORS: [DType; 14] = [
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
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

/// The validated geometry of a call.
struct Geometry {
    /// The destination's batch extents.
    batch: Vec<usize>,
    a_batch_strides: Vec<isize>,
    b_batch_strides: Vec<isize>,
    rows: Vec<usize>,
    a_row_strides: Vec<isize>,
    cols: Vec<usize>,
    b_col_strides: Vec<isize>,
    depth: Vec<usize>,
    a_k_strides: Vec<isize>,
    b_k_strides: Vec<isize>,
    out_shape: Vec<usize>,
}

/// Refuses an accumulator [`contract`] does not take.
pub(crate) fn check_accumulator(acc: DType) -> Result<()> {
    if ACCUMULATORS.contains(&acc) {
        Ok(())
    } else {
        Err(Error::DTypeUnsupported {
            operand: "contract: the accumulator".into(),
            dtype: acc,
            reason: "the accumulator is one of f32, f64, c64, c128 or an integer of 4 to 64 bits \
                     (i4, u4, i8, u8, i16, u16, i32, u32, i64, u64)"
                .into(),
        })
    }
}

/// An empty vector with room for `n` elements, or a refusal (not an abort)
/// where memory is short: broadcast operands can name far more elements
/// than they store.
pub(crate) fn try_vec<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::Alloc {
        what: format!("contract scratch ({what})"),
        elements: n,
    })?;
    Ok(v)
}

/// The `n` items of `it` in a vector reserved as [`try_vec`] does.
pub(crate) fn try_collect<T>(n: usize, it: impl Iterator<Item = T>, what: &str) -> Result<Vec<T>> {
    let mut v = try_vec(n, what)?;
    v.extend(it.take(n));
    Ok(v)
}

/// [`try_vec`] filled with `x`.
pub(crate) fn try_filled<T: Clone>(n: usize, x: T, what: &str) -> Result<Vec<T>> {
    let mut v = try_vec(n, what)?;
    v.resize(n, x);
    Ok(v)
}

/// Check the axis pairs against the operands' shapes and return the geometry.
fn geometry(
    a: &[usize],
    sa: &[isize],
    b: &[usize],
    sb: &[isize],
    spec: &ContractSpec,
) -> Result<Geometry> {
    let mut used_a = vec![false; a.len()];
    let mut used_b = vec![false; b.len()];
    let pairs = spec
        .batch
        .iter()
        .map(|p| ("batch", p))
        .chain(spec.contracting.iter().map(|p| ("contracting", p)));
    for (what, &(x, y)) in pairs {
        let axis = |name: &str, axis: usize, reason: String| Error::Axis {
            operand: format!("contract: {name}"),
            axis,
            reason,
        };
        if x >= a.len() {
            let reason = format!("({what}) is out of range: a has {} axes", a.len());
            return Err(axis("a", x, reason));
        }
        if y >= b.len() {
            let reason = format!("({what}) is out of range: b has {} axes", b.len());
            return Err(axis("b", y, reason));
        }
        if std::mem::replace(&mut used_a[x], true) {
            return Err(axis("a", x, "is named twice".into()));
        }
        if std::mem::replace(&mut used_b[y], true) {
            return Err(axis("b", y, "is named twice".into()));
        }
    }
    let mut g = Geometry {
        batch: vec![],
        a_batch_strides: vec![],
        b_batch_strides: vec![],
        rows: vec![],
        a_row_strides: vec![],
        cols: vec![],
        b_col_strides: vec![],
        depth: vec![],
        a_k_strides: vec![],
        b_k_strides: vec![],
        out_shape: vec![],
    };
    for &(x, y) in &spec.batch {
        let (n, m) = (a[x], b[y]);
        if n != m && n != 1 && m != 1 {
            return Err(Error::Axis {
                operand: "contract: a".into(),
                axis: x,
                reason: format!(
                    "(batch, extent {n}) and axis {y} of b (extent {m}) differ and neither is 1"
                ),
            });
        }
        let e = if n == 1 { m } else { n };
        g.batch.push(e);
        g.a_batch_strides.push(if n == 1 { 0 } else { sa[x] });
        g.b_batch_strides.push(if m == 1 { 0 } else { sb[y] });
    }
    for &(x, y) in &spec.contracting {
        if a[x] != b[y] {
            return Err(Error::Axis {
                operand: "contract: a".into(),
                axis: x,
                reason: format!(
                    "(contracted, extent {}) and axis {y} of b (extent {}) differ",
                    a[x], b[y]
                ),
            });
        }
        g.depth.push(a[x]);
        g.a_k_strides.push(sa[x]);
        g.b_k_strides.push(sb[y]);
    }
    for (i, &n) in a.iter().enumerate() {
        if !used_a[i] {
            g.rows.push(n);
            g.a_row_strides.push(sa[i]);
        }
    }
    for (i, &n) in b.iter().enumerate() {
        if !used_b[i] {
            g.cols.push(n);
            g.b_col_strides.push(sb[i]);
        }
    }
    g.out_shape = g
        .batch
        .iter()
        .chain(&g.rows)
        .chain(&g.cols)
        .copied()
        .collect();
    // Shapes given as such (the queries) are checked as views' are; the
    // destination's may overflow where the operands are empty.
    count_of(a, "contract: a")?;
    count_of(b, "contract: b")?;
    count_of(&g.out_shape, "contract: the destination's shape")?;
    Ok(g)
}

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

/// Scratch memory for the packed GEMM of [`contract_with_scratch`], owned
/// by the caller: the panels of A and B (and the raw codes they are cast
/// from) for every task the call may run. [`contract`] uses buffers kept
/// per thread instead (up to 16 MiB each, kept between calls); this form
/// lets a caller size, own and reuse them. Size one with
/// [`contract_scratch_size`] ([`ContractScratch::with_size`]) and a call of
/// that geometry allocates nothing for its panels; a smaller one grows
/// (fallibly: [`Error::Alloc`]) to what the call needs.
#[derive(Clone, Debug, Default)]
pub struct ContractScratch {
    /// 64-byte blocks, so every region is aligned for any element.
    buf: Vec<[u64; 8]>,
}

impl ContractScratch {
    /// An empty scratch (it grows to what the first call needs).
    pub fn new() -> Self {
        ContractScratch::default()
    }
    /// A scratch of at least `bytes` bytes; refuses ([`Error::Alloc`]) what
    /// cannot be allocated.
    pub fn with_size(bytes: usize) -> Result<Self> {
        let mut s = ContractScratch::new();
        s.reserve(bytes)?;
        Ok(s)
    }
    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.buf.len() * 64
    }
    fn reserve(&mut self, bytes: usize) -> Result<()> {
        let blocks = bytes.div_ceil(64);
        if blocks > self.buf.len() {
            let more = blocks - self.buf.len();
            self.buf.try_reserve_exact(more).map_err(|_| Error::Alloc {
                what: "contract scratch".into(),
                elements: bytes,
            })?;
            self.buf.resize(blocks, [0; 8]);
        }
        Ok(())
    }
}

/// The bytes of scratch [`contract_with_scratch`] needs to contract
/// operands of these shapes and dtypes by `spec` on `exec`'s tier and
/// threads (0 where the call runs no packed float GEMM: lane order, the
/// small products of at most 64 in each extent, the packed integer products
/// of `i8`/`u8`/`i16` into `i32` — which hold panels of their own, about the
/// size of `a` plus 384 KiB — complex accumulators, whose microkernels pack
/// a few hundred KiB of their own, other integer accumulators, empty
/// products).
/// Refuses what [`contract`] refuses of the
/// shapes, the accumulator and the tier.
pub fn contract_scratch_size(
    spec: &ContractSpec,
    a: (&[usize], DType),
    b: (&[usize], DType),
    exec: &Exec,
) -> Result<usize> {
    let tier = exec.resolve_tier()?;
    match panel_need(tier, spec, a, b)? {
        None => Ok(0),
        Some(need) => need
            .task_bytes()
            .checked_mul(exec.thread_count())
            .ok_or(Error::Overflow {
                operand: "contract scratch".into(),
            }),
    }
}

/// [`contract`] with the GEMM's packing buffers in `scratch` (grown first,
/// fallibly, if it is smaller than [`contract_scratch_size`] says): the same
/// bits, refusals and order.
pub fn contract_with_scratch(
    spec: &ContractSpec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    scratch: &mut ContractScratch,
    exec: &Exec,
) -> Result<()> {
    let tier = exec.resolve_tier()?;
    let panels = match panel_need(tier, spec, (a.shape(), a.dtype()), (b.shape(), b.dtype()))? {
        None => Panels::Cache,
        Some(need) => {
            let tasks = exec.thread_count();
            let bytes = need
                .task_bytes()
                .checked_mul(tasks)
                .ok_or(Error::Overflow {
                    operand: "contract scratch".into(),
                })?;
            scratch.reserve(bytes)?;
            Panels::Caller {
                base: SendPtr(scratch.buf.as_mut_ptr() as *mut u8),
                need,
                first: 0,
                tasks,
            }
        }
    };
    contract_in(a, b, init, dst, spec, *exec, None, panels)
}

/// The packing buffers one task of the call's packed GEMM needs (None where
/// it runs none), by the same choices [`contract_in`] makes.
fn panel_need(
    tier: Tier,
    spec: &ContractSpec,
    a: (&[usize], DType),
    b: (&[usize], DType),
) -> Result<Option<PanelNeed>> {
    check_accumulator(spec.acc)?;
    let g = geometry(a.0, &c_strides(a.0), b.0, &c_strides(b.0), spec)?;
    // Exact where none is 0 (the operands' counts are checked).
    let (r, c, k) = (
        extent_product(g.rows.iter().copied()),
        extent_product(g.cols.iter().copied()),
        extent_product(g.depth.iter().copied()),
    );
    if r == 0 || c == 0 || k == 0 || extent_product(g.batch.iter().copied()) == 0 {
        return Ok(None);
    }
    fn need<T: Chained>(
        tier: Tier,
        (r, c, k): (usize, usize, usize),
        raw: [Option<DType>; 2],
    ) -> Option<PanelNeed> {
        let Micro { mr, nr, .. } = T::micro(tier)?;
        let blk: Blocking = block::blocking(mr, nr, size_of::<T>(), block::cache_sizes());
        let bytes = |d: Option<DType>| d.map_or(0, |d| d.info().item_bytes);
        Some(PanelNeed::of(
            blk,
            r,
            c,
            k,
            size_of::<T>(),
            bytes(raw[0]),
            bytes(raw[1]),
        ))
    }
    // As `run`: in chain order an operand of another whole-byte dtype is
    // packed as raw codes.
    let raw = |d: DType, acc: DType| (d != acc && d.info().values_per_byte == 1).then_some(d);
    let chain = choose_order(r, c, k) == Order::Chain;
    Ok(match spec.acc {
        DType::F32 if chain => need::<f32>(
            tier,
            (r, c, k),
            [raw(a.1, DType::F32), raw(b.1, DType::F32)],
        ),
        DType::F64 if chain => need::<f64>(
            tier,
            (r, c, k),
            [raw(a.1, DType::F64), raw(b.1, DType::F64)],
        ),
        // The packed integer products keep their panels themselves.
        DType::I32 if integer::plan(tier, a.1, b.1, spec.acc).is_some() => None,
        DType::I32 | DType::I64 if int_via_f64(a.0, a.1, b.0, b.1, spec) => need::<f64>(
            tier,
            (r, c, k),
            [raw(a.1, DType::F64), raw(b.1, DType::F64)],
        ),
        _ => None,
    })
}

/// [`contract`] in a given order (segments choose it for the whole call).
#[allow(clippy::too_many_arguments)]
pub(crate) fn contract_in(
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
    exec: Exec,
    forced: Option<Order>,
    panels: Panels,
) -> Result<()> {
    let tier = exec.resolve_tier()?;
    check_accumulator(spec.acc)?;
    // Small plain products skip the general set-up (the same bits).
    if forced.is_none()
        && spec.batch.is_empty()
        && spec.contracting.len() == 1
        && matches!(spec.acc, DType::F32 | DType::F64)
        && dst.dtype() == spec.acc
    {
        if let Some(done) = small::try_run(tier, a, b, init, dst, spec.contracting[0]) {
            return done;
        }
    }
    let g = geometry(a.shape(), a.strides(), b.shape(), b.strides(), spec)?;
    if dst.shape() != g.out_shape.as_slice() {
        return Err(Error::Shape {
            operand: "destination".into(),
            shape: dst.shape().to_vec(),
            target: g.out_shape.clone(),
        });
    }
    check_destination(dst)?;
    if let Some(i) = init {
        if !broadcasts_to(i.shape(), dst.shape()) {
            return Err(Error::Shape {
                operand: "init".into(),
                shape: i.shape().to_vec(),
                target: dst.shape().to_vec(),
            });
        }
    }
    if dst.layout().is_empty() {
        return Ok(());
    }
    if let Some(plan) = integer::plan(tier, a.dtype(), b.dtype(), spec.acc) {
        return run_integer(plan, exec, a, b, init, dst, spec);
    }
    match spec.acc {
        DType::F32 => run::<f32>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::F64 => run::<f64>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::I32 | DType::I64
            if int_via_f64(a.shape(), a.dtype(), b.shape(), b.dtype(), spec) =>
        {
            run_int_via_f64(tier, exec, a, b, init, dst, spec, panels)
        }
        DType::I32 => run::<i32>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::I64 => run::<i64>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::C64 => run_complex::<f32>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::C128 => run_complex::<f64>(tier, exec, a, b, init, dst, spec, forced, panels),
        acc if int_acc::takes(acc) => int_acc::run(exec, a, b, init, dst, spec),
        // `check_accumulator` above refused every other accumulator.
        other => unreachable!("accumulator {other} passed check_accumulator"),
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
/// [`dot`] of row i of `a` with `x`.
pub fn gemv(
    a: &ArrayView<'_>,
    x: &ArrayView<'_>,
    y: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let spec = ContractSpec::new(default_acc(a.dtype(), x.dtype())).contracting(1, 0);
    contract(&spec, a, x, None, y, exec)
}

/// Dot product `out[] = Σ_k x[k]·y[k]` of two vectors into a rank-0 `out`, in
/// [`default_acc`], lane order.
pub fn dot(
    x: &ArrayView<'_>,
    y: &ArrayView<'_>,
    out: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let spec = ContractSpec::new(default_acc(x.dtype(), y.dtype())).contracting(0, 0);
    contract(&spec, x, y, None, out, exec)
}

/// An operand as the accumulator's dtype: its own bytes if it already has it,
/// else a C-order copy cast into it.
struct AccOperand<'a> {
    bytes: std::borrow::Cow<'a, [u8]>,
    strides: Vec<isize>,
    offset: usize,
}

fn to_acc<'a, T: crate::Element + Default>(
    exec: Exec,
    v: &ArrayView<'a>,
    acc: DType,
) -> Result<AccOperand<'a>> {
    if v.dtype() == acc {
        return Ok(AccOperand {
            bytes: std::borrow::Cow::Borrowed(v.data()),
            strides: v.strides().to_vec(),
            offset: v.layout().offset,
        });
    }
    // A C-order copy of the operand's (logical) elements in acc, cast into
    // its bytes directly.
    let bytes = v
        .layout()
        .len()
        .checked_mul(size_of::<T>())
        .ok_or(Error::Overflow {
            operand: "contract: a converted operand".into(),
        })?;
    let mut buf = try_filled(bytes, 0u8, "a converted operand")?;
    cast(
        CastMode::Default,
        v,
        &mut ArrayViewMut::contiguous(acc, v.shape(), &mut buf)?,
        &exec,
    )?;
    Ok(AccOperand {
        bytes: std::borrow::Cow::Owned(buf),
        strides: c_strides(v.shape()),
        offset: 0,
    })
}

/// Which chain-order microkernel a tier uses for `T`, with its shape.
trait Chained: Acc + crate::Element + Default {
    /// The tier's microkernel (None: this dtype takes the lane path).
    fn micro(tier: Tier) -> Option<Micro<Self>>;
    /// A kernel of fewer columns for narrow products (the same bits).
    fn narrow(_tier: Tier) -> Option<Micro<Self>> {
        None
    }
}

impl Chained for f32 {
    fn narrow(tier: Tier) -> Option<Micro<Self>> {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return Some(Micro {
                full: micro::avx512_f32_14x16,
                edge: micro::avx512_f32_14x16_edge,
                mr: 14,
                nr: 16,
                pack: Some(pack::pack_rows_f32_avx512),
            });
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return Self::micro(tier);
        }
        let _ = tier;
        None
    }
    fn micro(tier: Tier) -> Option<Micro<Self>> {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return Some(Micro {
                full: micro::avx512_f32_14x32,
                edge: micro::avx512_f32_14x32_edge,
                mr: 14,
                nr: 32,
                pack: Some(pack::pack_rows_f32_avx512),
            });
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return Some(Micro {
                full: micro::avx2_f32_6x16,
                edge: micro::avx2_f32_6x16_edge,
                mr: 6,
                nr: 16,
                pack: Some(pack::pack6_f32_avx2),
            });
        }
        let _ = tier;
        Some(Micro {
            full: micro::scalar::<f32, 6, 16>,
            edge: micro::scalar_edge::<f32, 6, 16>,
            mr: 6,
            nr: 16,
            pack: None,
        })
    }
}
impl Chained for f64 {
    fn narrow(tier: Tier) -> Option<Micro<Self>> {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return Some(Micro {
                full: micro::avx512_f64_14x8,
                edge: micro::avx512_f64_14x8_edge,
                mr: 14,
                nr: 8,
                pack: Some(pack::pack_rows_f64_avx512),
            });
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return Self::micro(tier);
        }
        let _ = tier;
        None
    }
    fn micro(tier: Tier) -> Option<Micro<Self>> {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return Some(Micro {
                full: micro::avx512_f64_14x16,
                edge: micro::avx512_f64_14x16_edge,
                mr: 14,
                nr: 16,
                pack: Some(pack::pack_rows_f64_avx512),
            });
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return Some(Micro {
                full: micro::avx2_f64_6x8,
                edge: micro::avx2_f64_6x8_edge,
                mr: 6,
                nr: 8,
                pack: Some(pack::pack6_f64_avx2),
            });
        }
        let _ = tier;
        Some(Micro {
            full: micro::scalar::<f64, 6, 8>,
            edge: micro::scalar_edge::<f64, 6, 8>,
            mr: 6,
            nr: 8,
            pack: None,
        })
    }
}
// Integer sums are exact in any order: they take the lane path.
impl Chained for i32 {
    fn micro(_: Tier) -> Option<Micro<Self>> {
        None
    }
}
impl Chained for i64 {
    fn micro(_: Tier) -> Option<Micro<Self>> {
        None
    }
}

/// Positions of one operand's elements: per batch element, per row (or
/// column) and per depth index (each table reserved fallibly: the depth,
/// which the destination does not bound, may be a broadcast operand's, far
/// longer than what it stores).
struct Tables {
    a_batch: Vec<isize>,
    a_rows: Vec<isize>,
    a_ks: Vec<isize>,
    b_batch: Vec<isize>,
    b_ks: Vec<isize>,
    b_cols: Vec<isize>,
    /// Lane order reads each output's row and column block by block
    /// instead of gathering whole rows and columns first.
    streamed: bool,
}

impl Tables {
    /// The tables of `g`; `streamed` as the field.
    fn of(g: &Geometry, a_offset: usize, b_offset: usize, streamed: bool) -> Result<Tables> {
        let mut t = Tables {
            a_batch: pack::offsets(&g.batch, &g.a_batch_strides)?,
            a_rows: pack::offsets(&g.rows, &g.a_row_strides)?,
            a_ks: pack::offsets(&g.depth, &g.a_k_strides)?,
            b_batch: pack::offsets(&g.batch, &g.b_batch_strides)?,
            b_ks: pack::offsets(&g.depth, &g.b_k_strides)?,
            b_cols: pack::offsets(&g.cols, &g.b_col_strides)?,
            streamed,
        };
        t.a_batch.iter_mut().for_each(|x| *x += a_offset as isize);
        t.b_batch.iter_mut().for_each(|x| *x += b_offset as isize);
        Ok(t)
    }
}

/// Values `(R + C)·K` up to which lane order gathers whole rows and columns
/// before it sums (each gathered once, whatever the other side's count);
/// beyond, it reads each output's row and column block by block, so that
/// its scratch is a few blocks per thread (rows broadcast along R, say,
/// would otherwise be copied R times).
const LANE_COPY_MAX: usize = 1 << 22;

/// Compute every batch element's `R × C` outputs, row-major, into `out` in
/// `order`. `out` holds the inits (in acc) where `holds_init`, else anything.
///
/// # Safety
/// Every position the tables reach is inside `sa` (resp. `sb`) as elements
/// of `T`; `out` holds `batch · R · C` elements.
#[allow(clippy::too_many_arguments)]
unsafe fn core<T: Chained>(
    tier: Tier,
    threads: usize,
    order: Order,
    sa: (Src<'_>, Option<DType>),
    sb: (Src<'_>, Option<DType>),
    t: &Tables,
    out: &mut [T],
    holds_init: bool,
    panels: Panels,
) -> Result<()> {
    let ((sa, raw_a), (sb, raw_b)) = (sa, sb);
    let (r, c, k) = (t.a_rows.len(), t.b_cols.len(), t.a_ks.len());
    if r * c == 0 {
        return Ok(());
    }
    let chain = if order == Order::Chain {
        T::micro(tier)
    } else {
        None
    };
    let one = |bi: usize, tile: &mut [T], threads: usize, panels: Panels| -> Result<()> {
        let (a_base, b_base) = (t.a_batch[bi], t.b_batch[bi]);
        if let Some(micro) = chain {
            let blk = block::blocking(micro.mr, micro.nr, size_of::<T>(), block::cache_sizes());
            let job = Chain {
                micro,
                blk,
                a: Operand {
                    src: sa,
                    base: a_base,
                    raw: raw_a,
                },
                a_rows: &t.a_rows,
                a_ks: &t.a_ks,
                a_ks_unit: pack::unit(&t.a_ks),
                b: Operand {
                    src: sb,
                    base: b_base,
                    raw: raw_b,
                },
                b_ks: &t.b_ks,
                b_cols: &t.b_cols,
                b_cols_unit: pack::unit(&t.b_cols),
                c_holds_init: holds_init,
                panels,
            };
            // SAFETY: the caller's contract; the kernel is the resolved tier's.
            unsafe { job.run(tile, threads, tier)? };
        } else {
            // Lane order; and integers in either order, whose sums are exact
            // whatever the association.
            if !holds_init {
                tile.fill(T::ZERO);
            }
            if k > 0 {
                if t.streamed {
                    // SAFETY: the caller's contract.
                    unsafe {
                        lane_tile_streamed(
                            tier,
                            (sa, a_base, &t.a_rows, &t.a_ks),
                            (sb, b_base, &t.b_cols, &t.b_ks),
                            tile,
                            threads,
                        )
                    }
                } else {
                    // SAFETY: the caller's contract.
                    unsafe {
                        lane_tile(
                            tier, sa, a_base, &t.a_rows, &t.a_ks, sb, b_base, &t.b_ks, &t.b_cols,
                            tile, threads,
                        )
                    }
                }
            }
        }
        Ok(())
    };
    let nb = t.a_batch.len();
    let work = r as u128 * c as u128 * k as u128;
    if threads > 1 && nb > 1 && work < 1 << 20 {
        // Many small batch elements: threads take whole ones.
        use rayon::prelude::*;
        let per = nb.div_ceil(threads);
        return out
            .par_chunks_mut(r * c * per)
            .enumerate()
            .map(|(ch, part)| {
                for (q, tile) in part.chunks_mut(r * c).enumerate() {
                    one(ch * per + q, tile, 1, panels.skip_tasks(ch))?;
                }
                Ok(())
            })
            .collect();
    }
    for (bi, tile) in out.chunks_mut(r * c).enumerate() {
        one(bi, tile, threads, panels)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run<'a, T: Chained>(
    tier: Tier,
    exec: Exec,
    a: &ArrayView<'a>,
    b: &ArrayView<'a>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
    forced: Option<Order>,
    panels: Panels,
) -> Result<()> {
    let threads = exec.thread_count();
    let g0 = geometry(a.shape(), a.strides(), b.shape(), b.strides(), spec)?;
    // The destination is not empty: R and C are exact, and K is (0 where a
    // depth extent is 0, whatever the others).
    let (r, c, k) = (
        extent_product(g0.rows.iter().copied()),
        extent_product(g0.cols.iter().copied()),
        extent_product(g0.depth.iter().copied()),
    );
    let order = forced.unwrap_or_else(|| choose_order(r, c, k));
    // In chain order an operand of another (whole-byte) dtype is packed as
    // raw codes and cast into the accumulator panel by panel; otherwise it is
    // cast whole into a C-order copy first. Either way each element enters
    // acc as a cast does.
    let chained = order == Order::Chain && T::micro(tier).is_some();
    let raw = |v: &ArrayView<'_>| {
        (chained && v.dtype() != spec.acc && v.dtype().info().values_per_byte == 1)
            .then(|| v.dtype())
    };
    let (raw_a, raw_b) = (raw(a), raw(b));
    for dt in [raw_a, raw_b].into_iter().flatten() {
        // The pair is checked once here, so no panel cast refuses later.
        let zero = vec![0u8; dt.info().item_bytes];
        let mut one = [T::ZERO];
        cast(
            CastMode::Default,
            &ArrayView::contiguous(dt, &[1], &zero)?,
            &mut ArrayViewMut::from_slice(&mut one, &[1])?,
            &Exec::on(tier).threads(1),
        )?;
    }
    let keep = |v: &ArrayView<'a>| AccOperand {
        bytes: std::borrow::Cow::Borrowed(v.data()),
        strides: v.strides().to_vec(),
        offset: v.layout().offset,
    };
    let ea = if raw_a.is_some() {
        keep(a)
    } else {
        to_acc::<T>(exec, a, spec.acc)?
    };
    let eb = if raw_b.is_some() {
        keep(b)
    } else {
        to_acc::<T>(exec, b, spec.acc)?
    };
    let g = geometry(a.shape(), &ea.strides, b.shape(), &eb.strides, spec)?;
    // Lane order of many long rows and columns reads them block by block.
    let streamed = !chained && r.saturating_add(c).saturating_mul(k) > LANE_COPY_MAX;
    let t = Tables::of(&g, ea.offset, eb.offset, streamed)?;
    let (sa, sb) = ((Src::new(&ea.bytes), raw_a), (Src::new(&eb.bytes), raw_b));
    // Chain order straight into a C-contiguous, aligned destination of the
    // accumulator's dtype: no scratch and no final pass.
    let len = dst.layout().len();
    let off = dst.layout().offset * size_of::<T>();
    if order == Order::Chain
        && T::micro(tier).is_some()
        && dst.dtype() == spec.acc
        && crate::array::c_contiguous(dst.shape(), dst.strides())
        && (dst.data_mut()[off..].as_ptr() as usize).is_multiple_of(align_of::<T>())
    {
        if let Some(i) = init {
            cast(CastMode::Default, i, dst, &exec)?;
        }
        let bytes = &mut dst.data_mut()[off..off + len * size_of::<T>()];
        // SAFETY: the bytes start aligned for T (checked), hold `len` elements
        // of dst's dtype, which is T's, and every bit pattern is a valid T.
        let (pre, out, _) = unsafe { bytes.align_to_mut::<T>() };
        debug_assert!(pre.is_empty() && out.len() == len);
        // SAFETY: the tables come from the validated views' shapes and
        // strides (or the C-order copies cast into acc).
        return unsafe {
            core(
                tier,
                threads,
                order,
                sa,
                sb,
                &t,
                out,
                init.is_some(),
                panels,
            )
        };
    }
    let mut out = try_filled(len, T::ZERO, "the destination in acc")?;
    if let Some(i) = init {
        cast(
            CastMode::Default,
            i,
            &mut ArrayViewMut::from_slice(&mut out, dst.shape())?,
            &exec,
        )?;
    }
    // SAFETY: as above.
    unsafe { core(tier, threads, order, sa, sb, &t, &mut out, true, panels)? };
    crate::cast::cast_results(&out, dst, &exec)
}

/// Whether an integer contraction can run as an exact f64 GEMM: both inputs
/// integers (or bool) of at most 16 bits, so that every partial sum of
/// products, at most K·max|a|·max|b| in magnitude, is below 2^53 and every
/// f64 operation on them is exact; and enough rows and columns for the GEMM
/// to pay.
fn int_via_f64(
    a_shape: &[usize],
    a_dtype: DType,
    b_shape: &[usize],
    b_dtype: DType,
    spec: &ContractSpec,
) -> bool {
    use crate::Class;
    let small = |d: DType| {
        let i = d.info();
        matches!(i.class, Class::Int | Class::Uint | Class::Bool) && i.bits <= 16
    };
    if !small(a_dtype) || !small(b_dtype) {
        return false;
    }
    let Ok(g) = geometry(
        a_shape,
        &c_strides(a_shape),
        b_shape,
        &c_strides(b_shape),
        spec,
    ) else {
        return false;
    };
    let (r, c) = (
        extent_product(g.rows.iter().copied()),
        extent_product(g.cols.iter().copied()),
    );
    let k = extent_product(g.depth.iter().copied()) as u128;
    let mag = |d: DType| {
        d.info()
            .int_range
            .map_or(1, |(lo, hi)| lo.unsigned_abs().max(hi.unsigned_abs()))
    };
    r >= 8 && c >= 8 && k.saturating_mul(mag(a_dtype) * mag(b_dtype)) < 1u128 << 53
}

/// An integer contraction of narrow integers as an f64 chain-order GEMM
/// (exact: see [`int_via_f64`]), then reduced modulo 2^w and plus init in the
/// integer accumulator, wrapping: the exact result modulo 2^w, as every
/// integer path gives.
#[allow(clippy::too_many_arguments)]
fn run_int_via_f64(
    tier: Tier,
    exec: Exec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
    panels: Panels,
) -> Result<()> {
    let len = dst.layout().len();
    let mut sums = try_filled(len, 0f64, "the destination in f64")?;
    let spec64 = ContractSpec {
        acc: DType::F64,
        ..spec.clone()
    };
    run::<f64>(
        tier,
        exec,
        a,
        b,
        None,
        &mut ArrayViewMut::from_slice(&mut sums, dst.shape())?,
        &spec64,
        Some(Order::Chain),
        panels,
    )?;
    if spec.acc == DType::I32 {
        let out = try_collect(sums.len(), sums.iter().map(|&v| v as i64 as i32), "acc")?;
        finish_int::<i32>(exec, out, init, dst)
    } else {
        let out = try_collect(sums.len(), sums.iter().map(|&v| v as i64), "acc")?;
        finish_int::<i64>(exec, out, init, dst)
    }
}

/// The integer sums `out` (C order of the destination's shape) plus init,
/// wrapping in the accumulator, cast into `dst`.
fn finish_int<T: Acc + crate::Element>(
    exec: Exec,
    mut out: Vec<T>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
) -> Result<()> {
    if let Some(i) = init {
        let mut iv = try_filled(out.len(), T::ZERO, "the init in acc")?;
        cast(
            CastMode::Default,
            i,
            &mut ArrayViewMut::from_slice(&mut iv, dst.shape())?,
            &exec,
        )?;
        for (o, x) in out.iter_mut().zip(iv) {
            *o = o.plus(x);
        }
    }
    cast(
        CastMode::Default,
        &ArrayView::from_slice(&out, dst.shape())?,
        dst,
        &exec,
    )
}

/// A contraction of `i8`, `u8` and `i16` inputs into `i32` by the packed
/// integer kernels ([`integer`]): exact modulo 2^32, as every integer path.
fn run_integer(
    plan: integer::Plan,
    exec: Exec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
) -> Result<()> {
    let g = geometry(a.shape(), a.strides(), b.shape(), b.strides(), spec)?;
    let t = Tables::of(&g, a.layout().offset, b.layout().offset, false)?;
    let (r, c) = (t.a_rows.len(), t.b_cols.len());
    // An i32 destination of C order and no init takes the sums in place
    // (each batch element's product checks everything it needs before its
    // first write, and the elements are independent).
    let len = dst.layout().len();
    let in_place = init.is_none()
        && dst.dtype() == DType::I32
        && crate::array::c_contiguous(dst.shape(), dst.strides());
    let off = dst.layout().offset * 4;
    let direct = in_place && len > 0 && {
        let bytes = &dst.data_mut()[off..];
        bytes.as_ptr().align_offset(4) == 0 && bytes.len() >= 4 * len
    };
    let mut out = Vec::new();
    let sums: &mut [i32] = if direct {
        // SAFETY: any bit pattern is an i32; the bytes from the offset are
        // 4-aligned and hold `len` of them (checked above).
        let (_, mid, _) = unsafe { dst.data_mut()[off..].align_to_mut::<i32>() };
        &mut mid[..len]
    } else {
        out = try_filled(len, 0i32, "the destination in acc")?;
        &mut out
    };
    let side_a = integer::Side {
        src: Src::new(a.data()),
        dtype: a.dtype(),
        free: &t.a_rows,
        ks: &t.a_ks,
    };
    let side_b = integer::Side {
        src: Src::new(b.data()),
        dtype: b.dtype(),
        free: &t.b_cols,
        ks: &t.b_ks,
    };
    if r * c > 0 {
        for (bi, tile) in sums.chunks_mut(r * c).enumerate() {
            // SAFETY: the tables come from the validated views' shapes,
            // strides and offsets, over their own bytes.
            unsafe {
                integer::product(
                    plan,
                    exec.thread_count(),
                    (&side_a, t.a_batch[bi]),
                    (&side_b, t.b_batch[bi]),
                    tile,
                )?
            };
        }
    }
    if direct {
        return Ok(());
    }
    finish_int::<i32>(exec, out, init, dst)
}

/// A complex contraction as two real ones over 2K terms: the real part sums
/// `ar·br, −ai·bi` for each k in turn, the imaginary part `ar·bi, ai·br`, in
/// the order that the complex rows, columns and depth choose (chain: 2K fused
/// multiply-adds from init's part; lane: the 2K terms in lanes, then init's
/// part).
#[allow(clippy::too_many_arguments)]
fn run_complex<T: Chained + complex::Part>(
    tier: Tier,
    exec: Exec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
    forced: Option<Order>,
    panels: Panels,
) -> Result<()>
where
    num_complex::Complex<T>: crate::Element + Default,
{
    type C<T> = num_complex::Complex<T>;
    let threads = exec.thread_count();
    let ea = to_acc::<C<T>>(exec, a, spec.acc)?;
    let eb = to_acc::<C<T>>(exec, b, spec.acc)?;
    let g = geometry(a.shape(), &ea.strides, b.shape(), &eb.strides, spec)?;
    let t = Tables::of(&g, ea.offset, eb.offset, false)?;
    let (r, c, k) = (t.a_rows.len(), t.b_cols.len(), t.a_ks.len());
    let nb = t.a_batch.len();
    let order = forced.unwrap_or_else(|| choose_order(r, c, k));
    let (sa, sb) = (Src::new(&ea.bytes), Src::new(&eb.bytes));
    let len = dst.layout().len();
    let mut init_c = try_filled(len, C::<T>::default(), "the init in acc")?;
    if let Some(i) = init {
        cast(
            CastMode::Default,
            i,
            &mut ArrayViewMut::from_slice(&mut init_c, dst.shape())?,
            &exec,
        )?;
    }
    let mut re = try_collect(len, init_c.iter().map(|x| x.re), "the destination in acc")?;
    let mut im = try_collect(len, init_c.iter().map(|x| x.im), "the destination in acc")?;
    drop(init_c);
    if order == Order::Chain {
        // The complex microkernels continue both chains of each output.
        // SAFETY: the tables come from the validated (or copied) operands.
        unsafe { complex::chain::<T>(tier, threads, sa, sb, &t, &mut re, &mut im)? };
        return finish_complex(exec, re, im, dst);
    }
    // Real operands, batch-major: a' [nb, R, 2K] and b' [nb, 2K, C] per part.
    let (mut a_re, mut a_im) = (
        try_vec(nb.saturating_mul(r).saturating_mul(2 * k), "complex parts")?,
        try_vec(nb.saturating_mul(r).saturating_mul(2 * k), "complex parts")?,
    );
    let (mut b_re, mut b_im) = (
        try_vec(nb.saturating_mul(2 * k).saturating_mul(c), "complex parts")?,
        try_vec(nb.saturating_mul(2 * k).saturating_mul(c), "complex parts")?,
    );
    for bi in 0..nb {
        for &ro in &t.a_rows {
            for &ko in &t.a_ks {
                // SAFETY: positions of the validated (or copied) operand.
                let x: C<T> = unsafe { sa.get_any(t.a_batch[bi] + ro + ko) };
                a_re.extend([x.re, -x.im]);
                a_im.extend([x.re, x.im]);
            }
        }
        for &ko in &t.b_ks {
            let row: Vec<C<T>> = t
                .b_cols
                .iter()
                // SAFETY: as above.
                .map(|&co| unsafe { sb.get_any(t.b_batch[bi] + ko + co) })
                .collect();
            b_re.extend(row.iter().map(|x| x.re));
            b_re.extend(row.iter().map(|x| x.im));
            b_im.extend(row.iter().map(|x| x.im));
            b_im.extend(row.iter().map(|x| x.re));
        }
    }
    // Index tables of the real buffers (their positions fit: the buffers
    // were allocated).
    let table = |n: usize, step: usize| {
        try_collect(
            n,
            (0..n).map(move |i| (i * step) as isize),
            "an index table",
        )
    };
    let rt = Tables {
        a_batch: table(nb, r * 2 * k)?,
        a_rows: table(r, 2 * k)?,
        a_ks: table(2 * k, 1)?,
        b_batch: table(nb, 2 * k * c)?,
        b_ks: table(2 * k, c)?,
        b_cols: table(c, 1)?,
        streamed: false,
    };
    // SAFETY: the tables address exactly the real buffers built above.
    unsafe {
        core(
            tier,
            threads,
            order,
            (Src::new(as_bytes(&a_re)), None),
            (Src::new(as_bytes(&b_re)), None),
            &rt,
            &mut re,
            true,
            panels,
        )?;
        core(
            tier,
            threads,
            order,
            (Src::new(as_bytes(&a_im)), None),
            (Src::new(as_bytes(&b_im)), None),
            &rt,
            &mut im,
            true,
            panels,
        )?;
    }
    finish_complex(exec, re, im, dst)
}

/// The planes of a complex product joined and cast into `dst`.
fn finish_complex<T: Copy>(
    exec: Exec,
    re: Vec<T>,
    im: Vec<T>,
    dst: &mut ArrayViewMut<'_>,
) -> Result<()>
where
    num_complex::Complex<T>: crate::Element,
{
    let out = try_collect(
        re.len(),
        re.into_iter()
            .zip(im)
            .map(|(re, im)| num_complex::Complex { re, im }),
        "the destination in acc",
    )?;
    crate::cast::cast_results(&out, dst, &exec)
}

/// The elements at `base + ks[q]` for each q: the operand's own memory where
/// they are consecutive and aligned, else a gathered copy.
///
/// # Safety
/// Every position is inside the operand's validated view of dtype `T`.
unsafe fn sequence<'a, T: Acc>(
    src: Src<'a>,
    base: isize,
    ks: &[isize],
    unit: bool,
) -> std::borrow::Cow<'a, [T]> {
    if let (true, Some(&k0)) = (unit, ks.first()) {
        // SAFETY: the first position is inside the view (caller's contract).
        let p = unsafe { src.ptr::<T>(base + k0) };
        if (p as usize).is_multiple_of(align_of::<T>()) {
            // SAFETY: `ks.len()` consecutive elements of the view, aligned,
            // borrowed for as long as the operand's bytes; every bit pattern
            // is a valid T.
            return std::borrow::Cow::Borrowed(unsafe { std::slice::from_raw_parts(p, ks.len()) });
        }
    }
    // SAFETY: the caller's contract.
    std::borrow::Cow::Owned(
        ks.iter()
            .map(|&ko| unsafe { src.get::<T>(base + ko) })
            .collect(),
    )
}

/// Lane order for one batch element: each output is the lane-order dot of its
/// row of a and column of b (the operands' own memory where consecutive, else
/// gathered copies), then plus its init (already in `tile`).
///
/// # Safety
/// Every position the tables reach from the bases is inside the operands.
#[allow(clippy::too_many_arguments)]
unsafe fn lane_tile<T: Acc>(
    tier: Tier,
    sa: Src<'_>,
    a_base: isize,
    a_rows: &[isize],
    a_ks: &[isize],
    sb: Src<'_>,
    b_base: isize,
    b_ks: &[isize],
    b_cols: &[isize],
    tile: &mut [T],
    threads: usize,
) {
    let k = a_ks.len();
    let c = b_cols.len();
    let (a_unit, b_unit) = (pack::unit(a_ks), pack::unit(b_ks));
    // SAFETY: the caller's contract.
    let rows: Vec<std::borrow::Cow<'_, [T]>> = a_rows
        .iter()
        .map(|&ro| unsafe { sequence(sa, a_base + ro, a_ks, a_unit) })
        .collect();
    let cols: Vec<std::borrow::Cow<'_, [T]>> = b_cols
        .iter()
        // SAFETY: the caller's contract.
        .map(|&co| unsafe { sequence(sb, b_base + co, b_ks, b_unit) })
        .collect();
    let outputs = tile.len();
    let work = outputs as u128 * k as u128;
    let one = |o: usize, threads: usize| -> T {
        let (i, j) = (o / c, o % c);
        lane::dot(tier, &rows[i], &cols[j], threads)
    };
    if threads <= 1 || work < 1 << 18 {
        for (o, v) in tile.iter_mut().enumerate() {
            *v = one(o, 1).plus(*v);
        }
    } else if outputs >= threads * 4 {
        // Many outputs: threads take whole outputs.
        use rayon::prelude::*;
        let per = outputs.div_ceil(threads);
        tile.par_chunks_mut(per).enumerate().for_each(|(ch, vs)| {
            for (i, v) in vs.iter_mut().enumerate() {
                *v = one(ch * per + i, 1).plus(*v);
            }
        });
    } else {
        // Few outputs, long depth: threads share each output's blocks.
        for (o, v) in tile.iter_mut().enumerate() {
            *v = one(o, threads).plus(*v);
        }
    }
}

/// One block of the depth of one row (or column): the values at `base +
/// ks[q]`, read in place where they are consecutive and aligned, else
/// gathered into `buf`.
///
/// # Safety
/// Every position `base + ks[q]` is inside the operand's validated view of
/// dtype `T`.
#[inline]
unsafe fn depth_block<'s, T: Acc>(
    src: Src<'s>,
    base: isize,
    ks: &[isize],
    unit: bool,
    buf: &'s mut [T; lane::BLOCK],
) -> &'s [T] {
    let len = ks.len();
    if let (true, Some(&k0)) = (unit, ks.first()) {
        // SAFETY: the first position is inside the view (caller's contract).
        let p = unsafe { src.ptr::<T>(base + k0) };
        if (p as usize).is_multiple_of(align_of::<T>()) {
            // SAFETY: `len` consecutive elements of the view, aligned; every
            // bit pattern is a valid T.
            return unsafe { std::slice::from_raw_parts(p, len) };
        }
    }
    for (v, &ko) in buf[..len].iter_mut().zip(ks) {
        // SAFETY: positions of the view (caller's contract).
        *v = unsafe { src.get(base + ko) };
    }
    &buf[..len]
}

/// [`lane_tile`] for many long rows and columns: each output's row and
/// column are read block by block (in place where consecutive, else
/// gathered into a block's buffer) and the block sums combine by the block
/// tree as they come, so the scratch is a few blocks per thread. The same
/// blocks, so the same bits.
///
/// # Safety
/// Every position the tables reach from the bases is inside the operands.
unsafe fn lane_tile_streamed<T: Acc>(
    tier: Tier,
    (sa, a_base, a_rows, a_ks): (Src<'_>, isize, &[isize], &[isize]),
    (sb, b_base, b_cols, b_ks): (Src<'_>, isize, &[isize], &[isize]),
    tile: &mut [T],
    threads: usize,
) {
    use crate::reduce::lanes::{tree_of, tree_parallel};
    let k = a_ks.len();
    let c = b_cols.len();
    let (a_unit, b_unit) = (pack::unit(a_ks), pack::unit(b_ks));
    let blocks = k.div_ceil(lane::BLOCK);
    let op = |p: T, q: T| p.plus(q);
    let bufs = || ([T::ZERO; lane::BLOCK], [T::ZERO; lane::BLOCK]);
    type Bufs<T> = ([T; lane::BLOCK], [T; lane::BLOCK]);
    // Blocks q0 .. q0 + m of output o, by the tree of their own count.
    let node = |o: usize, q0: usize, m: usize, (ba, bb): &mut Bufs<T>| -> T {
        let (pa, pb) = (a_base + a_rows[o / c], b_base + b_cols[o % c]);
        let block = |i: usize| {
            let r = (q0 + i) * lane::BLOCK..((q0 + i + 1) * lane::BLOCK).min(k);
            // SAFETY: the caller's contract.
            let (x, y) = unsafe {
                (
                    depth_block(sa, pa, &a_ks[r.clone()], a_unit, ba),
                    depth_block(sb, pb, &b_ks[r], b_unit, bb),
                )
            };
            lane::block_sum(tier, x, y)
        };
        tree_of(m, T::ZERO, block, &op).unwrap_or(T::ZERO)
    };
    let outputs = tile.len();
    let work = outputs as u128 * k as u128;
    if threads <= 1 || work < 1 << 18 {
        let mut w = bufs();
        for (o, v) in tile.iter_mut().enumerate() {
            *v = node(o, 0, blocks, &mut w).plus(*v);
        }
    } else if outputs >= threads * 4 {
        // Many outputs: threads take whole outputs.
        use rayon::prelude::*;
        let per = outputs.div_ceil(threads);
        tile.par_chunks_mut(per).enumerate().for_each(|(ch, vs)| {
            let mut w = bufs();
            for (i, v) in vs.iter_mut().enumerate() {
                *v = node(ch * per + i, 0, blocks, &mut w).plus(*v);
            }
        });
    } else {
        // Few outputs, long depth: threads share each output's blocks (nodes
        // of its block tree).
        for (o, v) in tile.iter_mut().enumerate() {
            let nodes = |list: &[(usize, usize)], vals: &mut [T]| {
                let mut w = bufs();
                for (val, &(q0, m)) in vals.iter_mut().zip(list) {
                    *val = node(o, q0, m, &mut w);
                }
            };
            *v = tree_parallel(blocks, threads, T::ZERO, &nodes, &op)
                .unwrap_or(T::ZERO)
                .plus(*v);
        }
    }
}
