//! The tile executor: validates a call, resolves every kernel once, then runs
//! the program over tiles of `TILE` consecutive indices (C order of the
//! outputs' shape), each node's values in a scratch buffer of its own dtype.

use super::program::{node_args, NodeId, Op, Program, Scalar};
use crate::array::{extent_product, ArrayView, ArrayViewMut};
use crate::elementwise::plan::Addr;
use crate::elementwise::{broadcasts_to, call_dtype, self_overlap, sub_byte, PARALLEL_MIN};
use crate::error::{Error, Result};
use crate::tier::cast_table;
use crate::tier::kernel_table;
use crate::tier::Exec;
use crate::{cast_index, kernel_index, Args, CastMode, DType, LoopFn, Variant};

mod bind;
mod dense;
mod inline_vec;
mod tile;

use inline_vec::InlineVec;

/// Axes (and operands) up to which a call binds its per-axis tables without
/// an allocation.
const INLINE: usize = 8;
/// An operand's element strides per axis.
pub(crate) type Strides = InlineVec<isize, INLINE>;

use bind::{addr_of, full_strides};
pub(crate) use bind::{bind, resolve, Load, Resolved, ResolvedCache};
pub(crate) use tile::{tile_scratch_bytes, TileScratch};
#[cfg(all(feature = "jit", target_arch = "x86_64", target_os = "linux"))]
mod jit;
mod registers;

/// Indices per tile: 4 KiB of f32 per node's slot, so a program of a few
/// nodes keeps its tile in L1 and L2 (the kernels run over chunks of it,
/// `CHUNK`).
pub(crate) const TILE: usize = 1024;
/// Tiles the register path runs as one when it reads every load and
/// writes every output where they lie (see `Plan::run_tiles`): its
/// per-tile set-up (about 60 of a tile's 410 ns in cache, on the bench's
/// four-kind program on Zen 4) then comes once per 16K indices.
pub(crate) const SPAN: usize = 16;
/// Indices per chunk of a tile that every kind and cast of the program runs
/// over before the next chunk (1 KiB of f32 per node: a chain's
/// intermediates stay in L1).
const CHUNK: usize = 512;
/// Bytes from one scratch slot to the next, for a program whose widest
/// element has `widest` bytes: a tile of it and three cache lines more, so
/// that the same element of two slots never lies at the same offset modulo
/// 4 KiB (which would make a kernel's loads from one slot wait on its
/// stores to another: the CPU matches loads against earlier stores by the
/// low 12 address bits first).
const fn slot_bytes(widest: usize) -> usize {
    TILE * widest + 192
}

/// [`slot_bytes`] of `program`'s widest node.
pub(crate) fn program_slot_bytes(program: &Program) -> usize {
    slot_bytes(
        program
            .nodes()
            .iter()
            .map(|n| scratch_item(n.dtype))
            .max()
            .unwrap_or(1),
    )
}

/// Where an input of a call comes from.
pub(crate) enum In<'r, 'a> {
    /// A read-only view.
    View(&'r ArrayView<'a>),
    /// The current contents of output `k` (in place).
    Output(usize),
}

/// Bytes of one scratch element of `dtype` (one code per byte when packed).
fn scratch_item(dtype: DType) -> usize {
    let info = dtype.info();
    if info.values_per_byte > 1 {
        1
    } else {
        info.item_bytes
    }
}

/// An operand's addressing over the merged axes.
struct Geom {
    addr: Addr,
    /// Element strides per merged axis.
    strides: Strides,
}

enum Step {
    Load {
        node: usize,
        geom: usize,
        /// Whether a tile inside one row may be read where it lies.
        direct: bool,
    },
    Coord {
        node: usize,
        /// Indices per step of the axis.
        inner: usize,
        /// The axis's extent.
        extent: usize,
    },
    Call {
        node: usize,
        f: LoopFn,
        args: [usize; 3],
        arity: usize,
        stride: [isize; 3],
        /// A cast of NaN-carrying floats into a dtype without a NaN code.
        nan_fix: Option<NanFix>,
    },
}

/// The fix-up after a cast from a float (or complex) dtype into a float
/// dtype without a NaN code: where the source is a NaN, the destination
/// gets the code of the positive quiet NaN. A NaN's sign depends on the
/// order in which the hardware met the NaN operands of the operation that
/// made it, which differs between tiers, and such a destination would turn
/// the sign into a visible difference (ARCHITECTURE.md §5.1).
#[derive(Clone, Copy, Debug)]
pub(crate) struct NanFix {
    /// The source's part: 2 (f16), 3 (bf16), 4 (f32) or 8 (f64) bytes (bf16
    /// named apart from f16 by 3); a complex source's real part is tested.
    part: u8,
    /// Bytes from one source element to the next (a complex number's two
    /// parts).
    item: usize,
    /// The destination's code for the positive NaN (one byte: the dtypes
    /// without a NaN code are all one byte or packed, one code a byte in
    /// scratch).
    code: u8,
}

impl NanFix {
    /// The fix of a cast from `from` into `to` in `mode`, if it needs one.
    fn of(from: DType, to: DType, sat: bool) -> Option<NanFix> {
        let dest = to.info().float?;
        if dest.nan != crate::NanStyle::None {
            return None;
        }
        let part = match from {
            DType::F16 | DType::F16c => 2,
            DType::Bf16 | DType::Bf16c => 3,
            DType::F32 | DType::C64 => 4,
            DType::F64 | DType::C128 => 8,
            _ => return None,
        };
        let code = positive_nan_code(to, sat);
        Some(NanFix {
            part,
            item: from.info().item_bytes,
            code,
        })
    }

    /// Whether the source element at `p` is a NaN.
    ///
    /// # Safety
    /// `p` must point at a readable element of the source dtype.
    #[inline]
    unsafe fn is_nan(&self, p: *const u8) -> bool {
        // SAFETY: the element's first part is readable (the contract).
        unsafe {
            match self.part {
                2 => (p.cast::<u16>().read_unaligned() & 0x7fff) > 0x7c00,
                3 => (p.cast::<u16>().read_unaligned() & 0x7fff) > 0x7f80,
                4 => (p.cast::<u32>().read_unaligned() & 0x7fff_ffff) > 0x7f80_0000,
                _ => (p.cast::<u64>().read_unaligned() & (u64::MAX >> 1)) > 0x7ff0_0000_0000_0000,
            }
        }
    }

    /// Give each of `n` results at `dst` (one byte each) whose source
    /// element (at `src`, `stride` elements apart) is a NaN the positive
    /// NaN's code.
    ///
    /// # Safety
    /// `src` must hold `n` elements at `stride` (0: one element), `dst` `n`
    /// writable bytes.
    #[inline]
    unsafe fn apply(&self, src: *const u8, stride: isize, dst: *mut u8, n: usize) {
        for j in 0..n {
            // SAFETY: element j of the source and byte j of the
            // destination are inside their runs (the contract).
            unsafe {
                if self.is_nan(src.offset(j as isize * stride * self.item as isize)) {
                    *dst.add(j) = self.code;
                }
            }
        }
    }
}

/// The code of the positive quiet NaN cast into `to` (a dtype whose codes
/// fit a byte) in the given mode, on the scalar tier (every tier gives its
/// bits: no NaN operand order is involved).
fn positive_nan_code(to: DType, sat: bool) -> u8 {
    bind::cast_one(DType::F64, f64::NAN.to_le_bytes(), to, sat)
        .expect("the scalar tier always runs")[0]
}

pub(crate) struct Plan {
    n: usize,
    /// Merged axes, outer to inner (at least one).
    dims: InlineVec<usize, INLINE>,
    geoms: Vec<Geom>,
    steps: Vec<Step>,
    /// (node, geometry) of each output.
    stores: Vec<(usize, usize)>,
    /// Per store: whether its node's kernel may write the tile straight into
    /// the output (a unit-stride output of whole elements, a node computed by
    /// a kernel, and no input read in place that a direct write could reach
    /// before it is loaded).
    store_direct: Vec<bool>,
    item: std::sync::Arc<[usize]>,
    /// Scratch slot of each node that is not uniform.
    slot: std::sync::Arc<[Option<usize>]>,
    slots: usize,
    /// Bytes from one slot to the next ([`slot_bytes`]).
    slot_bytes: usize,
    /// The value of each uniform node (the same at every index).
    uni: Vec<[u8; 16]>,
    is_uni: std::sync::Arc<[bool]>,
    /// The register path, where the program and the tier have one.
    regs: Option<std::sync::Arc<registers::RegProgram>>,
}

// SAFETY: the plan's pointers address the validated operands of one call,
// alive for the call; tasks on other threads read inputs and uniform values
// and write disjoint tiles of the outputs (which no input overlaps but in the
// in-place rule's exact form, where each tile reads before it writes).
unsafe impl Sync for Plan {}

fn refuse(node: impl Into<String>, reason: impl Into<String>) -> Error {
    Error::Program {
        node: node.into(),
        reason: reason.into(),
    }
}

/// The program takes `given` inputs.
pub(crate) fn check_input_count(program: &Program, given: usize) -> Result<()> {
    let np = program.inputs().len();
    if given != np {
        return Err(refuse(
            "program",
            format!("the program takes {np} inputs, {given} are given"),
        ));
    }
    Ok(())
}

/// Input `i`, of `dtype` and shape `sh`, fits the program and a loop of `shape`.
pub(crate) fn check_input(
    program: &Program,
    i: usize,
    dtype: DType,
    sh: &[usize],
    shape: &[usize],
) -> Result<()> {
    let want = program.inputs()[i];
    if dtype != want {
        return Err(Error::DTypeMismatch {
            operand: format!("input {i} (x{i})"),
            expected: want,
            got: dtype,
        });
    }
    if !broadcasts_to(sh, shape) {
        return Err(Error::Shape {
            operand: format!("input {i} (x{i})"),
            shape: sh.to_vec(),
            target: shape.to_vec(),
        });
    }
    Ok(())
}

/// Every coordinate axis lies below `rank` (the rank of `what`).
pub(crate) fn check_coords(program: &Program, rank: usize, what: &str) -> Result<()> {
    for node in program.nodes() {
        if let Op::Coord(a) = node.op {
            if a >= rank {
                return Err(refuse(
                    format!("coord({a})"),
                    format!("axis {a} is not below the rank {rank} of {what}"),
                ));
            }
        }
    }
    Ok(())
}

/// Run one call (see `map::map_in_place`).
pub(crate) fn run(
    exec: &Exec,
    program: &Program,
    inputs: &[In<'_, '_>],
    outputs: &mut [ArrayViewMut<'_>],
) -> Result<()> {
    let tier = exec.resolve_tier_for(crate::tier::Engine::Map)?;
    let shape = check_call(program, inputs, outputs)?;
    let r = resolve_for(program, &shape, inputs)?;
    execute(tier, exec, program, &r, inputs, outputs, None)
}

/// The loop's shape (the outputs'), after checking everything a call
/// refuses of its operands: counts, dtypes, shapes, output layouts,
/// coordinate axes.
pub(crate) fn check_call(
    program: &Program,
    inputs: &[In<'_, '_>],
    outputs: &[ArrayViewMut<'_>],
) -> Result<Vec<usize>> {
    check_input_count(program, inputs.len())?;
    let no = program.outputs().len();
    if outputs.len() != no {
        return Err(refuse(
            "program",
            format!(
                "the program has {no} outputs, {} destinations are given",
                outputs.len()
            ),
        ));
    }
    for (k, (o, id)) in outputs.iter().zip(program.outputs()).enumerate() {
        // An output's id is a node of its own program (checked when built).
        let want = program.nodes[id.0].dtype;
        if o.dtype() != want {
            return Err(Error::DTypeMismatch {
                operand: format!("output {k} (y{k} = {})", program.describe(*id)),
                expected: want,
                got: o.dtype(),
            });
        }
    }
    let shape = outputs[0].shape().to_vec();
    for (k, o) in outputs.iter().enumerate() {
        if o.shape() != shape.as_slice() {
            return Err(Error::Shape {
                operand: format!("output {k}"),
                shape: o.shape().to_vec(),
                target: shape.clone(),
            });
        }
        if let Some(reason) = self_overlap(o.shape(), o.strides()) {
            return Err(Error::Layout {
                operand: format!("output {k}"),
                reason,
            });
        }
    }
    for (i, src) in inputs.iter().enumerate() {
        let (dtype, sh) = match src {
            In::View(v) => (v.dtype(), v.shape()),
            In::Output(k) => match outputs.get(*k) {
                Some(o) => (o.dtype(), o.shape()),
                None => {
                    return Err(refuse(
                        format!("x{i}"),
                        format!("input {i} reads output {k}, and there are {no} outputs"),
                    ))
                }
            },
        };
        check_input(program, i, dtype, sh, &shape)?;
    }
    check_coords(program, shape.len(), "the outputs")?;
    Ok(shape)
}

/// Resolve a checked program over the outputs' `shape` for these inputs.
/// The program keeps the last resolution of these calls
/// ([`bind::ResolvedCache`]): a repeated call of one shape resolves once.
pub(crate) fn resolve_for(
    program: &Program,
    shape: &[usize],
    inputs: &[In<'_, '_>],
) -> Result<std::sync::Arc<Resolved>> {
    let shapes = inputs.iter().map(|src| match src {
        In::View(v) => v.shape(),
        // An input read in place has the outputs' shape.
        In::Output(_) => shape,
    });
    bind::resolve_cached(program, shape, shapes)
}

/// Resolve a checked program over `shape` for inputs of `shapes` (an input
/// of one element is uniform over a loop of more).
pub(crate) fn resolve_shapes(
    program: &Program,
    shape: &[usize],
    shapes: &[&[usize]],
) -> Result<Resolved> {
    let n = extent_product(shape.iter().copied());
    let uniform: Vec<bool> = shapes.iter().map(|sh| is_uniform(n, sh)).collect();
    let axes: Vec<usize> = (0..shape.len()).collect();
    resolve(program, shape, &axes, &uniform)
}

/// Whether an input of shape `sh` is one element over a loop of `n > 1`
/// indices (uniform).
fn is_uniform(n: usize, sh: &[usize]) -> bool {
    extent_product(sh.iter().copied()) == 1 && n > 1
}

/// Tasks for a call of `n` indices on `exec`: its threads from
/// [`PARALLEL_MIN`] indices on (no more than the call has tiles), else one.
fn task_count(exec: &Exec, n: usize) -> usize {
    if n >= PARALLEL_MIN {
        exec.thread_count().min(n.div_ceil(TILE)).max(1)
    } else {
        1
    }
}

/// Bind a resolved call to its checked operands and run it on `exec`'s
/// threads, each with its tile scratch in `lent` where blocks are lent (as
/// many threads as they hold [`Resolved::scratch_bytes`] for, at least one:
/// the caller has lent at least one thread's need), else allocated.
pub(crate) fn execute(
    tier: crate::Tier,
    exec: &Exec,
    program: &Program,
    r: &Resolved,
    inputs: &[In<'_, '_>],
    outputs: &mut [ArrayViewMut<'_>],
    lent: Option<&mut [crate::scratch::Block]>,
) -> Result<()> {
    let n = r.n;
    if n == 0 {
        return Ok(());
    }
    if dense::run_dense(tier, exec, program, r, inputs, outputs)? {
        return Ok(());
    }
    let rank = r.shape.len();
    let out_geoms: Vec<(Addr, Strides)> = outputs
        .iter_mut()
        .map(|o| {
            let (dtype, offset) = (o.dtype(), o.layout().offset);
            let full = full_strides(rank, o.shape(), o.strides());
            (addr_of(o.data_mut().as_mut_ptr(), dtype, offset), full)
        })
        .collect();
    let loads: Vec<Load> = inputs
        .iter()
        .map(|src| match src {
            In::View(v) => Load::of(v, rank, n),
            In::Output(o) => Load::Strided {
                addr: out_geoms[*o].0,
                strides: out_geoms[*o].1.clone(),
                aliased: true,
            },
        })
        .collect();
    let plan = bind(tier, program, r, &loads, out_geoms)?;
    let tiles = n.div_ceil(TILE);
    let mut threads = task_count(exec, n);
    // Each task's region of a lent scratch (64-byte aligned: the scratch's
    // blocks are, and a region is a whole number of them); null: allocate.
    let region = r.scratch_bytes(outputs.len()).div_ceil(64) * 64;
    let mem = match lent {
        Some(b) => {
            threads = threads.min(b.len() * 64 / region.max(1)).max(1);
            crate::scratch::SendPtr(b.as_mut_ptr() as *mut u8)
        }
        None => crate::scratch::SendPtr(core::ptr::null_mut()),
    };
    let at = |t: usize| -> *mut u8 {
        let m = mem.get();
        if m.is_null() {
            m
        } else {
            // SAFETY: task t < threads ≤ lent bytes / region: its region
            // lies inside the lent blocks.
            unsafe { m.add(t * region) }
        }
    };
    if threads == 1 {
        // SAFETY: every operand was validated against its bytes and
        // broadcasts to the outputs' shape, and the one task runs every
        // tile; its scratch region (if lent) is its own.
        unsafe { plan.run_tiles(0, tiles, at(0)) };
    } else {
        use rayon::prelude::*;
        let per = tiles.div_ceil(threads);
        (0..threads).into_par_iter().for_each(|t| {
            let (t0, t1) = ((t * per).min(tiles), ((t + 1) * per).min(tiles));
            // SAFETY: every operand was validated; this task's tiles t0..t1
            // and its scratch region are disjoint from every other task's.
            unsafe { plan.run_tiles(t0, t1, at(t)) };
        });
    }
    Ok(())
}

/// A program's output `k` as the terms of a reduction or a scan: the
/// program over a loop of `shape` whose axes are taken in the order `perm`
/// (the kept axes, then the reduced ones), so that the terms of one result
/// are consecutive indices of the plan.
pub(crate) struct TermPlan {
    /// The plan over the permuted loop.
    pub plan: Plan,
    /// The node whose values are the terms.
    pub node: usize,
    /// Their dtype.
    pub dtype: DType,
}

/// Validate `program` with `inputs` over a loop of `shape` and plan output
/// `k` as terms (see [`TermPlan`]). Refuses what [`run`] refuses of inputs,
/// and an output index beyond the program's outputs.
pub(crate) fn plan_terms(
    tier: crate::Tier,
    program: &Program,
    k: usize,
    inputs: &[ArrayView<'_>],
    shape: &[usize],
    perm: &[usize],
) -> Result<TermPlan> {
    check_input_count(program, inputs.len())?;
    let no = program.outputs().len();
    let Some(&id) = program.outputs().get(k) else {
        return Err(refuse(
            format!("y{k}"),
            format!("the terms are output {k}, and the program has {no} outputs"),
        ));
    };
    for (i, v) in inputs.iter().enumerate() {
        check_input(program, i, v.dtype(), v.shape(), shape)?;
    }
    let rank = shape.len();
    check_coords(program, rank, "the loop")?;
    let n = extent_product(shape.iter().copied());
    let loads: Vec<Load> = inputs
        .iter()
        .map(|v| Load::of(v, rank, n).permuted(perm))
        .collect();
    let pshape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
    let mut axes = vec![0usize; rank];
    for (j, &a) in perm.iter().enumerate() {
        axes[a] = j;
    }
    let uniform: Vec<bool> = loads
        .iter()
        .map(|l| matches!(l, Load::Uniform(_)))
        .collect();
    let resolved = resolve(program, &pshape, &axes, &uniform)?;
    let mut plan = bind(tier, program, &resolved, &loads, Vec::new())?;
    // The terms are a node's values in its slot: the kernels keep them.
    plan.regs = None;
    Ok(TermPlan {
        plan,
        node: id.0,
        dtype: program.nodes[id.0].dtype,
    })
}
