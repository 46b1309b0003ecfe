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

/// Indices per tile: 8 KiB of f32 per node, so a program of a few nodes
/// keeps its tile in L1 and L2 (2048 measured faster than 1024 and 4096 on
/// the fused 4-kind program of the bench).
pub(crate) const TILE: usize = 2048;
/// Bytes of one scratch slot (a tile of the widest element, c128).
const SLOT: usize = TILE * 16;

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
    strides: Vec<isize>,
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
    },
}

pub(crate) struct Plan {
    n: usize,
    /// Merged axes, outer to inner (at least one).
    dims: Vec<usize>,
    geoms: Vec<Geom>,
    steps: Vec<Step>,
    /// (node, geometry) of each output.
    stores: Vec<(usize, usize)>,
    /// Per store: whether its node's kernel may write the tile straight into
    /// the output (a unit-stride output of whole elements, a node computed by
    /// a kernel, and no input read in place that a direct write could reach
    /// before it is loaded).
    store_direct: Vec<bool>,
    item: Vec<usize>,
    /// Scratch slot of each node that is not uniform.
    slot: Vec<Option<usize>>,
    slots: usize,
    /// The value of each uniform node (the same at every index).
    uni: Vec<[u8; 16]>,
    is_uni: Vec<bool>,
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
    let tier = exec.resolve_tier()?;
    let shape = check_call(program, inputs, outputs)?;
    let r = resolve_for(program, &shape, inputs)?;
    execute(tier, exec, program, &r, inputs, outputs)
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
pub(crate) fn resolve_for(
    program: &Program,
    shape: &[usize],
    inputs: &[In<'_, '_>],
) -> Result<Resolved> {
    let shapes: Vec<&[usize]> = inputs
        .iter()
        .map(|src| match src {
            In::View(v) => v.shape(),
            // An input read in place has the outputs' shape.
            In::Output(_) => shape,
        })
        .collect();
    resolve_shapes(program, shape, &shapes)
}

/// Resolve a checked program over `shape` for inputs of `shapes` (an input
/// of one element is uniform over a loop of more).
pub(crate) fn resolve_shapes(
    program: &Program,
    shape: &[usize],
    shapes: &[&[usize]],
) -> Result<Resolved> {
    let n = extent_product(shape.iter().copied());
    let uniform: Vec<bool> = shapes
        .iter()
        .map(|sh| extent_product(sh.iter().copied()) == 1 && n > 1)
        .collect();
    let axes: Vec<usize> = (0..shape.len()).collect();
    resolve(program, shape, &axes, &uniform)
}

/// Bind a resolved call to its checked operands and run it on `exec`'s threads.
pub(crate) fn execute(
    tier: crate::Tier,
    exec: &Exec,
    program: &Program,
    r: &Resolved,
    inputs: &[In<'_, '_>],
    outputs: &mut [ArrayViewMut<'_>],
) -> Result<()> {
    let n = r.n;
    if n == 0 {
        return Ok(());
    }
    let rank = r.shape.len();
    let out_geoms: Vec<(Addr, Vec<isize>)> = outputs
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
    let threads = if n >= PARALLEL_MIN {
        exec.thread_count().min(tiles).max(1)
    } else {
        1
    };
    // SAFETY: every operand was validated against its bytes and
    // broadcasts to the outputs' shape; tiles are disjoint ranges of indices,
    // and the ranges of different tasks are disjoint.
    if threads == 1 {
        // SAFETY: every operand was validated and the one task runs every tile.
        unsafe { plan.run_tiles(0, tiles) };
    } else {
        use rayon::prelude::*;
        let per = tiles.div_ceil(threads);
        (0..threads).into_par_iter().for_each(|t| {
            let (t0, t1) = ((t * per).min(tiles), ((t + 1) * per).min(tiles));
            // SAFETY: this task's tiles t0..t1 are disjoint from every other task's.
            unsafe { plan.run_tiles(t0, t1) };
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
    let plan = bind(tier, program, &resolved, &loads, Vec::new())?;
    Ok(TermPlan {
        plan,
        node: id.0,
        dtype: program.nodes[id.0].dtype,
    })
}

/// Where a load's values come from, once validated.
pub(crate) enum Load {
    /// One element, the same at every index.
    Uniform(Addr),
    /// Element strides over every axis of the loop's shape (0 where it
    /// broadcasts); `aliased` when it is an output read in place.
    Strided {
        addr: Addr,
        strides: Vec<isize>,
        aliased: bool,
    },
}

impl Load {
    /// A validated view that broadcasts to a loop of `rank` axes and `n`
    /// indices.
    pub(crate) fn of(v: &ArrayView<'_>, rank: usize, n: usize) -> Load {
        let a = addr_of(v.data().as_ptr() as *mut u8, v.dtype(), v.layout().offset);
        if v.layout().len() == 1 && n > 1 {
            Load::Uniform(a)
        } else {
            Load::Strided {
                addr: a,
                strides: full_strides(rank, v.shape(), v.strides()),
                aliased: false,
            }
        }
    }

    /// The load over the loop's axes taken in the order `perm`.
    pub(crate) fn permuted(self, perm: &[usize]) -> Load {
        match self {
            Load::Strided {
                addr,
                strides,
                aliased,
            } => Load::Strided {
                addr,
                strides: perm.iter().map(|&a| strides[a]).collect(),
                aliased,
            },
            u => u,
        }
    }
}

fn addr_of(base: *mut u8, dtype: DType, offset: usize) -> Addr {
    let info = dtype.info();
    Addr {
        base,
        offset: offset as isize,
        item: info.item_bytes,
        vpb: info.values_per_byte as usize,
        bits: info.bits,
    }
}

/// An operand's strides over a loop of `rank` axes (broadcast from the right;
/// 0 on an axis of extent 1).
fn full_strides(rank: usize, sh: &[usize], st: &[isize]) -> Vec<isize> {
    let lead = rank - sh.len();
    let mut full = vec![0isize; rank];
    for (j, (&e, &s)) in sh.iter().zip(st).enumerate() {
        full[lead + j] = if e == 1 { 0 } else { s };
    }
    full
}

/// A kernel a node runs, by its index in every tier's tables.
#[derive(Clone, Copy, Debug)]
enum KernelRef {
    /// An elementwise kernel (`kernel_index`).
    Kind(usize),
    /// A cast (`cast_index`).
    Cast(usize),
}

/// What planning a validated program over a loop of a given shape decides
/// before any operand's address is known (so once for a [`super::MapPlan`]):
/// which nodes hold one value at every index, the kernel and variant of
/// every node, the constants, and the scratch slots by liveness.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    n: usize,
    shape: Vec<usize>,
    /// `axes[a]`: the loop axis of the program's coordinate axis `a`.
    axes: Vec<usize>,
    is_uni: Vec<bool>,
    /// The constants' values (the other uniform nodes are computed when the
    /// plan is bound to its operands).
    consts: Vec<[u8; 16]>,
    kernels: Vec<Option<KernelRef>>,
    /// Per node: its arguments' strides in a tile (0 for a uniform argument).
    strides: Vec<[isize; 3]>,
    item: Vec<usize>,
    slot: Vec<Option<usize>>,
    slots: usize,
}

/// Resolve a validated program over a loop of `shape` (see [`Resolved`]):
/// `uniform_input[k]` whether input k is one element at every index.
pub(crate) fn resolve(
    program: &Program,
    shape: &[usize],
    axes: &[usize],
    uniform_input: &[bool],
) -> Result<Resolved> {
    // Exact for every loop with indices (its size is checked by the caller:
    // the outputs' views, or the loop shape of terms); 0 for an empty one.
    let n = extent_product(shape.iter().copied());
    let nodes = program.nodes();
    let count = nodes.len();
    let mut is_uni = vec![false; count];
    let mut consts = vec![[0u8; 16]; count];
    let item: Vec<usize> = nodes.iter().map(|n| scratch_item(n.dtype)).collect();
    for (i, node) in nodes.iter().enumerate() {
        let args = node_args(&node.op);
        match &node.op {
            Op::Load(k) => is_uni[i] = uniform_input[*k],
            Op::Const(v) => {
                is_uni[i] = true;
                consts[i] = const_bytes(*v, node.dtype)?;
            }
            Op::Coord(_) => {}
            Op::Kind(..) | Op::Cast(..) => {
                if args.iter().all(|a| is_uni[a.0]) {
                    is_uni[i] = true;
                }
            }
        }
    }
    // Resolve every kernel once.
    let mut kernels: Vec<Option<KernelRef>> = vec![None; count];
    let mut strides: Vec<[isize; 3]> = vec![[1; 3]; count];
    for (i, node) in nodes.iter().enumerate() {
        let args = node_args(&node.op);
        let mut st = [1isize; 3];
        for (j, a) in args.iter().enumerate().take(3) {
            if is_uni[a.0] {
                st[j] = 0;
            }
        }
        strides[i] = st;
        let uniform_args: Vec<usize> = (0..args.len()).filter(|&j| is_uni[args[j].0]).collect();
        match &node.op {
            Op::Kind(kind, _) => {
                let dtypes: Vec<DType> = args.iter().map(|a| nodes[a.0].dtype).collect();
                let dt = call_dtype(*kind, &dtypes)?;
                let v = if is_uni[i] || uniform_args.is_empty() {
                    Variant::Contig
                } else if args.len() >= 2 && uniform_args.len() == 1 {
                    [Variant::Bcast0, Variant::Bcast1, Variant::Bcast2][uniform_args[0]]
                } else {
                    Variant::Strided
                };
                let f = kernel_index(*kind, dt, v)
                    .or_else(|| kernel_index(*kind, dt, Variant::Strided))
                    .ok_or(Error::Unsupported {
                        kind: *kind,
                        dtype: dt,
                    })?;
                kernels[i] = Some(KernelRef::Kind(f));
            }
            Op::Cast(a, mode) => {
                let v = if is_uni[i] || !is_uni[a.0] {
                    Variant::Contig
                } else {
                    Variant::Strided
                };
                let sat = *mode == CastMode::Saturating;
                let f = cast_index(nodes[a.0].dtype, node.dtype, sat, v)
                    .expect("casts exist between every pair of dtypes");
                kernels[i] = Some(KernelRef::Cast(f));
            }
            _ => {}
        }
    }
    // Scratch slots by liveness (a slot is free again after the last node
    // that reads it).
    let mut last_use = vec![0usize; count];
    for (i, node) in nodes.iter().enumerate() {
        for a in node_args(&node.op) {
            last_use[a.0] = i;
        }
    }
    for o in program.outputs() {
        last_use[o.0] = usize::MAX;
    }
    let mut slot: Vec<Option<usize>> = vec![None; count];
    let mut free: Vec<usize> = Vec::new();
    let mut slots = 0usize;
    for (i, node) in nodes.iter().enumerate() {
        if is_uni[i] {
            continue;
        }
        let mut dying: Vec<usize> = node_args(&node.op)
            .iter()
            .map(|a| a.0)
            .filter(|&a| !is_uni[a] && last_use[a] == i)
            .collect();
        dying.sort_unstable();
        dying.dedup();
        // Never an argument's own slot: a kernel whose destination is exactly
        // its source is correct, but the compiler's overlap check then sends
        // it down its scalar loop.
        let s = free.pop().unwrap_or_else(|| {
            slots += 1;
            slots - 1
        });
        slot[i] = Some(s);
        for a in dying {
            free.push(slot[a].expect("a live node has a slot"));
        }
    }
    Ok(Resolved {
        n,
        shape: shape.to_vec(),
        axes: axes.to_vec(),
        is_uni,
        consts,
        kernels,
        strides,
        item,
        slot,
        slots,
    })
}

/// Bind a resolved program to its operands on `tier`: `loads` one per
/// program input (uniform exactly where [`Resolved`] says), `out_geoms` one
/// per stored output (none when the caller takes the values from
/// [`Plan::eval`]). Reads the uniform inputs' values and computes the
/// uniform nodes once; merges the axes contiguous in every operand.
pub(crate) fn bind(
    tier: crate::Tier,
    program: &Program,
    r: &Resolved,
    loads: &[Load],
    out_geoms: Vec<(Addr, Vec<isize>)>,
) -> Result<Plan> {
    let table = kernel_table(tier).ok_or(Error::TierUnavailable(tier))?;
    let casts = cast_table(tier).ok_or(Error::TierUnavailable(tier))?;
    let nodes = program.nodes();
    let count = nodes.len();
    let np = program.inputs().len();
    let fns: Vec<Option<LoopFn>> = r
        .kernels
        .iter()
        .map(|k| {
            k.map(|k| match k {
                KernelRef::Kind(i) => table[i],
                KernelRef::Cast(i) => casts[i],
            })
        })
        .collect();
    let mut uni = r.consts.clone();
    // Geometries: the loads that are not uniform, then the outputs.
    let mut geoms_full: Vec<(Addr, Vec<isize>)> = Vec::new();
    let mut load_geom: Vec<Option<usize>> = vec![None; np];
    let mut aliased = vec![false; np];
    for (i, node) in nodes.iter().enumerate() {
        if let Op::Load(k) = &node.op {
            match &loads[*k] {
                Load::Uniform(a) => {
                    debug_assert!(r.is_uni[i]);
                    // SAFETY: the operand's one element lies at its offset (validated).
                    unsafe { sub_byte::gather(a, a.offset, &mut uni[i][..r.item[i]]) };
                }
                Load::Strided {
                    addr,
                    strides,
                    aliased: al,
                } => {
                    debug_assert!(!r.is_uni[i]);
                    aliased[*k] = *al;
                    load_geom[*k] = Some(geoms_full.len());
                    geoms_full.push((*addr, strides.clone()));
                }
            }
        }
    }
    let first_out = geoms_full.len();
    geoms_full.extend(out_geoms);

    // Uniform nodes computed once, in order.
    for i in 0..count {
        if !r.is_uni[i] {
            continue;
        }
        if let Some(f) = fns[i] {
            let args = node_args(&nodes[i].op);
            let base = uni.as_mut_ptr() as *mut u8;
            let mut a = Args {
                n: 1,
                src: [core::ptr::null(); 3],
                src_stride: [1; 3],
                // SAFETY: i is an index of `uni`.
                dst: unsafe { base.add(16 * i) },
                dst_stride: 1,
            };
            for (j, arg) in args.iter().enumerate() {
                // SAFETY: arg is an index of `uni`, holding its value.
                a.src[j] = unsafe { base.add(16 * arg.0) };
            }
            // SAFETY: one element of each operand's dtype, in 16-byte cells
            // (the widest element); the result's cell is not an argument's
            // (arguments come before the node).
            unsafe { f(&a) };
        }
    }

    // Merge axes contiguous in every operand, dropping extent-1 axes.
    let shape = &r.shape;
    let mut dims: Vec<usize> = Vec::new();
    let mut merged: Vec<Vec<isize>> = vec![Vec::new(); geoms_full.len()];
    for (ax, &e) in shape.iter().enumerate() {
        if e == 1 {
            continue;
        }
        if let Some(last) = dims.last_mut() {
            let joins = geoms_full
                .iter()
                .zip(&merged)
                .all(|((_, full), m)| full[ax].checked_mul(e as isize) == m.last().copied());
            if joins {
                *last = extent_product([*last, e]);
                for ((_, full), m) in geoms_full.iter().zip(merged.iter_mut()) {
                    *m.last_mut().unwrap() = full[ax];
                }
                continue;
            }
        }
        dims.push(e);
        for ((_, full), m) in geoms_full.iter().zip(merged.iter_mut()) {
            m.push(full[ax]);
        }
    }
    if dims.is_empty() {
        dims.push(1);
        for m in merged.iter_mut() {
            m.push(0);
        }
    }
    let geoms: Vec<Geom> = geoms_full
        .into_iter()
        .zip(merged)
        .map(|((addr, _), strides)| Geom { addr, strides })
        .collect();

    // The steps of a tile, in node order.
    let mut steps = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        if r.is_uni[i] {
            continue;
        }
        let args = node_args(&node.op);
        match &node.op {
            Op::Load(k) => {
                let geom = load_geom[*k].expect("a load that is not uniform has a geometry");
                let g = &geoms[geom];
                let direct = !aliased[*k] && g.addr.vpb == 1 && *g.strides.last().unwrap() == 1;
                steps.push(Step::Load {
                    node: i,
                    geom,
                    direct,
                });
            }
            Op::Coord(a) => {
                let a = r.axes[*a];
                steps.push(Step::Coord {
                    node: i,
                    inner: extent_product(shape[a + 1..].iter().copied()),
                    extent: shape[a],
                })
            }
            Op::Const(_) => unreachable!("constants are uniform"),
            Op::Kind(..) | Op::Cast(..) => {
                let mut ids = [0usize; 3];
                for (j, a) in args.iter().enumerate() {
                    ids[j] = a.0;
                }
                steps.push(Step::Call {
                    node: i,
                    f: fns[i].expect("resolved"),
                    args: ids,
                    arity: args.len(),
                    stride: r.strides[i],
                });
            }
        }
    }
    let stores: Vec<(usize, usize)> = program
        .outputs()
        .iter()
        .enumerate()
        .take(geoms.len() - first_out)
        .map(|(k, o): (usize, &NodeId)| (o.0, first_out + k))
        .collect();
    let any_aliased = aliased.iter().any(|&a| a);
    let mut claimed = vec![false; count];
    let store_direct: Vec<bool> = stores
        .iter()
        .map(|&(node, geom)| {
            let g = &geoms[geom];
            let ok = !any_aliased
                && !claimed[node]
                && !r.is_uni[node]
                && matches!(nodes[node].op, Op::Kind(..) | Op::Cast(..))
                && g.addr.vpb == 1
                && *g.strides.last().unwrap() == 1;
            claimed[node] |= ok;
            ok
        })
        .collect();
    Ok(Plan {
        n: r.n,
        dims,
        geoms,
        steps,
        store_direct,
        stores,
        item: r.item.clone(),
        slot: r.slot.clone(),
        slots: r.slots,
        uni,
        is_uni: r.is_uni.clone(),
    })
}

/// The storage of `value` rounded into `dtype` (one code per byte when
/// packed), as a default-mode cast from its natural dtype rounds it (on the
/// scalar tier: every tier gives its bits).
fn const_bytes(value: Scalar, dtype: DType) -> Result<[u8; 16]> {
    let casts =
        cast_table(crate::Tier::ALL[0]).ok_or(Error::TierUnavailable(crate::Tier::ALL[0]))?;
    let (from, src): (DType, [u8; 8]) = match value {
        Scalar::Bool(b) => (DType::Bool, [b as u8, 0, 0, 0, 0, 0, 0, 0]),
        Scalar::Int(v) => (DType::I64, v.to_le_bytes()),
        Scalar::UInt(v) => (DType::U64, v.to_le_bytes()),
        Scalar::Float(v) => (DType::F64, v.to_le_bytes()),
    };
    let mut out = [0u8; 16];
    let f = casts[cast_index(from, dtype, false, Variant::Contig).expect("every cast exists")];
    let args = Args {
        n: 1,
        src: [src.as_ptr(), core::ptr::null(), core::ptr::null()],
        src_stride: [1; 3],
        dst: out.as_mut_ptr(),
        dst_stride: 1,
    };
    // SAFETY: one element of `from` in, one of `dtype` (at most 16 bytes) out.
    unsafe { f(&args) };
    Ok(out)
}

/// Copy `m` elements of `item` bytes from `src` at a byte stride into `dst`.
///
/// # Safety
/// Every element read and the `m * item` bytes of `dst` must be valid.
unsafe fn copy_strided(src: *const u8, step: isize, dst: *mut u8, m: usize, item: usize) {
    macro_rules! typed {
        ($t:ty) => {{
            let d = dst as *mut $t;
            for i in 0..m {
                // SAFETY: i < m: element i read at `src + i·step` and written
                // in dst's m·item bytes, both valid (this function's
                // contract).
                unsafe {
                    d.add(i).write_unaligned(
                        (src.offset(i as isize * step) as *const $t).read_unaligned(),
                    )
                };
            }
        }};
    }
    match item {
        1 => typed!(u8),
        2 => typed!(u16),
        4 => typed!(u32),
        8 => typed!(u64),
        16 => typed!(u128),
        _ => {
            for i in 0..m {
                // SAFETY: i < m: element i read at `src + i·step` and written
                // in dst's m·item bytes, both valid (this function's
                // contract).
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        src.offset(i as isize * step),
                        dst.add(i * item),
                        item,
                    )
                };
            }
        }
    }
}

/// Copy `m` contiguous elements of `item` bytes from `src` to `dst` at a byte stride.
///
/// # Safety
/// The `m · item` bytes of `src` must be readable and every element written
/// (`dst + i·step`, `i < m`) writable, by this thread alone.
unsafe fn scatter_strided(src: *const u8, dst: *mut u8, step: isize, m: usize, item: usize) {
    macro_rules! typed {
        ($t:ty) => {{
            let s = src as *const $t;
            for i in 0..m {
                // SAFETY: i < m: element i of src's m and the element at
                // `dst + i·step`, both valid (this function's contract).
                unsafe {
                    (dst.offset(i as isize * step) as *mut $t)
                        .write_unaligned(s.add(i).read_unaligned())
                };
            }
        }};
    }
    match item {
        1 => typed!(u8),
        2 => typed!(u16),
        4 => typed!(u32),
        8 => typed!(u64),
        16 => typed!(u128),
        _ => {
            for i in 0..m {
                // SAFETY: i < m: element i of src's m and the element at
                // `dst + i·step`, both valid (this function's contract).
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        src.add(i * item),
                        dst.offset(i as isize * step),
                        item,
                    )
                };
            }
        }
    }
}

/// One thread's scratch for [`Plan::eval`]: the slots, and where each
/// node's values are after a tile.
pub(crate) struct TileScratch {
    _buf: Vec<u8>,
    ptrs: Vec<*const u8>,
    slot_ptr: Vec<*mut u8>,
    /// Each node's own slot (null for uniform nodes).
    home: Vec<*mut u8>,
    store_src: Vec<*const u8>,
}

impl Plan {
    /// Element position of row `r`, inner index `i`, of geometry `g`.
    fn pos(&self, g: &Geom, mut r: usize, i: usize) -> isize {
        let last = self.dims.len() - 1;
        let mut p = g.addr.offset + i as isize * g.strides[last];
        for d in (0..last).rev() {
            let e = self.dims[d];
            p += (r % e) as isize * g.strides[d];
            r /= e;
        }
        p
    }

    /// Call `f(row, inner index, length, offset in the tile)` for each run of
    /// one row in the tile of `len` indices from `f0`.
    fn segments(&self, f0: usize, len: usize, mut f: impl FnMut(usize, usize, usize, usize)) {
        let inner = *self.dims.last().expect("a plan has an axis");
        let end = f0 + len;
        let mut at = f0;
        while at < end {
            let (r, i) = (at / inner, at % inner);
            let m = (inner - i).min(end - at);
            f(r, i, m, at - f0);
            at += m;
        }
    }

    /// Scratch for one thread: a slot per live node and a cell per uniform
    /// output, sized once.
    pub(crate) fn scratch(&self) -> TileScratch {
        let outs = self.stores.len();
        let mut buf = vec![0u8; (self.slots + outs) * SLOT + 64];
        let pad = buf.as_ptr().align_offset(64);
        // SAFETY: pad < 64, inside the buffer.
        let base = unsafe { buf.as_mut_ptr().add(pad) };
        let uni = self.uni.as_ptr() as *const u8;
        let ptrs: Vec<*const u8> = (0..self.item.len())
            .map(|i| match self.slot[i] {
                // SAFETY: slot s < slots lies inside the buffer.
                Some(s) => unsafe { base.add(s * SLOT) as *const u8 },
                // SAFETY: i indexes `uni`.
                None => unsafe { uni.add(16 * i) },
            })
            .collect();
        let slot_ptr: Vec<*mut u8> = (0..self.item.len())
            .map(|i| match self.slot[i] {
                // SAFETY: slot s < slots lies inside the buffer.
                Some(s) => unsafe { base.add(s * SLOT) },
                None => core::ptr::null_mut(),
            })
            .collect();
        // Uniform outputs are stored from a tile of copies of their value.
        let mut store_src: Vec<*const u8> = Vec::with_capacity(outs);
        for (k, &(node, _)) in self.stores.iter().enumerate() {
            if self.is_uni[node] {
                let it = self.item[node];
                // SAFETY: output k's cell lies past the slots, inside the buffer.
                let cell = unsafe { base.add((self.slots + k) * SLOT) };
                for j in 0..TILE {
                    // SAFETY: TILE cells of `it` <= 16 bytes fit a slot.
                    unsafe {
                        core::ptr::copy_nonoverlapping(uni.add(16 * node), cell.add(j * it), it)
                    };
                }
                store_src.push(cell);
            } else {
                store_src.push(core::ptr::null());
            }
        }
        TileScratch {
            _buf: buf,
            ptrs,
            home: slot_ptr.clone(),
            slot_ptr,
            store_src,
        }
    }

    /// The values of `node` after [`Plan::eval`]: a pointer to the tile's
    /// values (one code per byte when packed), and whether it is one value
    /// that holds at every index.
    pub(crate) fn values(&self, s: &TileScratch, node: usize) -> (*const u8, bool) {
        (s.ptrs[node], self.is_uni[node])
    }

    /// Run the program's steps for indices `f0 .. f0 + len` (C order of the
    /// loop's shape; `len` at most [`TILE`]) into `s`.
    ///
    /// # Safety
    /// The plan's operands must be valid for the call (the validation of
    /// `run` or of the caller that built it), the range inside the loop.
    pub(crate) unsafe fn eval(&self, f0: usize, len: usize, s: &mut TileScratch) {
        debug_assert!(len <= TILE && f0 + len <= self.n);
        let inner = *self.dims.last().expect("a plan has an axis");
        let one_row = f0 % inner + len <= inner;
        let TileScratch { ptrs, slot_ptr, .. } = s;
        for step in &self.steps {
            match *step {
                Step::Load { node, geom, direct } => {
                    let g = &self.geoms[geom];
                    if direct && one_row {
                        let p = self.pos(g, f0 / inner, f0 % inner);
                        // SAFETY: a validated element position of the operand;
                        // the tile's `len` elements follow it at unit stride.
                        ptrs[node] = unsafe { g.addr.base.offset(p * g.addr.item as isize) };
                        continue;
                    }
                    let dst = slot_ptr[node];
                    ptrs[node] = dst;
                    let it = self.item[node];
                    let s = *g.strides.last().unwrap();
                    self.segments(f0, len, |r, i, m, off| {
                        let p0 = self.pos(g, r, i);
                        // SAFETY: the run's positions are validated positions
                        // of the operand; the slot holds TILE elements.
                        unsafe { gather_seg(&g.addr, p0, s, m, dst.add(off * it)) };
                    });
                }
                Step::Coord {
                    node,
                    inner: step_len,
                    extent,
                } => {
                    let d = slot_ptr[node] as *mut i64;
                    let mut c = f0 % step_len;
                    let mut v = ((f0 / step_len) % extent) as i64;
                    for j in 0..len {
                        // SAFETY: the slot holds TILE i64 values.
                        unsafe { d.add(j).write(v) };
                        c += 1;
                        if c == step_len {
                            c = 0;
                            v += 1;
                            if v == extent as i64 {
                                v = 0;
                            }
                        }
                    }
                }
                Step::Call {
                    node,
                    f,
                    args,
                    arity,
                    stride,
                } => {
                    let mut a = Args {
                        n: len,
                        src: [core::ptr::null(); 3],
                        src_stride: stride,
                        dst: slot_ptr[node],
                        dst_stride: 1,
                    };
                    for j in 0..arity {
                        a.src[j] = ptrs[args[j]];
                    }
                    // SAFETY: each source holds `len` elements of its dtype
                    // (a slot, a unit-stride run of an input, or one uniform
                    // value at stride 0); the destination is a slot that is
                    // either no source's or exactly one of the same size.
                    unsafe { f(&a) };
                }
            }
        }
    }

    /// Run tiles `t0..t1` on this thread, with scratch of its own, storing
    /// every output.
    ///
    /// # Safety
    /// The plan's operands must be valid (the validation of `run`), and no
    /// other thread may run these tiles.
    unsafe fn run_tiles(&self, t0: usize, t1: usize) {
        if t0 >= t1 {
            return;
        }
        let mut sc = self.scratch();
        let inner = *self.dims.last().expect("a plan has an axis");
        // Outputs written in place by their node's kernel in the current tile.
        let mut direct = vec![false; self.stores.len()];
        for t in t0..t1 {
            let f0 = t * TILE;
            let len = TILE.min(self.n - f0);
            let one_row = f0 % inner + len <= inner;
            for (k, &(node, geom)) in self.stores.iter().enumerate() {
                direct[k] = one_row && self.store_direct[k];
                if direct[k] {
                    let g = &self.geoms[geom];
                    let p = self.pos(g, f0 / inner, f0 % inner);
                    // SAFETY: a validated element position of the output; the
                    // tile's `len` elements follow it at unit stride, and this
                    // task alone writes them.
                    let at = unsafe { g.addr.base.offset(p * g.addr.item as isize) };
                    sc.slot_ptr[node] = at;
                    sc.ptrs[node] = at;
                }
            }
            // SAFETY: the plan's operands are valid for the call (this
            // function's contract), and tile t < t1 is inside the loop.
            unsafe { self.eval(f0, len, &mut sc) };
            let (ptrs, store_src) = (&sc.ptrs, &sc.store_src);
            for (k, &(node, geom)) in self.stores.iter().enumerate() {
                if direct[k] {
                    continue;
                }
                let g = &self.geoms[geom];
                let src = if self.is_uni[node] {
                    store_src[k]
                } else {
                    ptrs[node]
                };
                let it = self.item[node];
                let s = *g.strides.last().unwrap();
                self.segments(f0, len, |r, i, m, off| {
                    let p0 = self.pos(g, r, i);
                    // SAFETY: validated positions of the output, which this
                    // task alone writes; the source holds the tile's values.
                    unsafe { scatter_seg(&g.addr, p0, s, m, src.add(off * it)) };
                });
            }
            // Back to the slots for a tile that is not one row.
            for (k, &(node, _)) in self.stores.iter().enumerate() {
                if direct[k] {
                    sc.slot_ptr[node] = sc.home[node];
                    sc.ptrs[node] = sc.home[node];
                }
            }
        }
    }
}

/// Read `m` values from position `p0` at element stride `s` into `dst` (one
/// code per byte when packed).
///
/// # Safety
/// The positions must be validated positions of the operand; `dst` must hold
/// `m` scratch elements.
unsafe fn gather_seg(a: &Addr, p0: isize, s: isize, m: usize, dst: *mut u8) {
    if a.vpb > 1 {
        // SAFETY: dst holds m codes.
        let out = unsafe { core::slice::from_raw_parts_mut(dst, m) };
        // SAFETY: the m positions from p0 are validated positions of the
        // operand and `out` holds m codes (this function's contract).
        if !unsafe { sub_byte::gather_run(a, p0, s, m, out) } {
            for (j, o) in out.iter_mut().enumerate() {
                // SAFETY: each position is a validated position of the operand.
                unsafe { sub_byte::gather(a, p0 + j as isize * s, core::slice::from_mut(o)) };
            }
        }
        return;
    }
    let item = a.item;
    // SAFETY: p0 is a validated position.
    let src = unsafe { a.base.offset(p0 * item as isize) };
    if s == 1 {
        // SAFETY: the run is inside the operand; dst holds m elements.
        unsafe { core::ptr::copy_nonoverlapping(src, dst, m * item) };
    } else {
        // SAFETY: the m positions from p0 at stride s are the operand's and
        // dst holds m elements (this function's contract).
        unsafe { copy_strided(src, s * item as isize, dst, m, item) };
    }
}

/// Write `m` scratch values from `src` to positions from `p0` at stride `s`.
///
/// # Safety
/// The positions must be validated positions of the output, written by
/// this thread alone; `src` must hold `m` scratch elements.
unsafe fn scatter_seg(a: &Addr, p0: isize, s: isize, m: usize, src: *const u8) {
    if a.vpb > 1 {
        // SAFETY: src holds m codes.
        let vals = unsafe { core::slice::from_raw_parts(src, m) };
        // SAFETY: the m positions from p0 are validated positions of the
        // output, this thread's alone, and `vals` holds m codes (this
        // function's contract).
        if !unsafe { sub_byte::scatter_run(a, p0, s, m, vals) } {
            for (j, v) in vals.iter().enumerate() {
                // SAFETY: each position is a validated position of the output, written by this thread alone.
                unsafe { sub_byte::scatter(a, p0 + j as isize * s, core::slice::from_ref(v)) };
            }
        }
        return;
    }
    let item = a.item;
    // SAFETY: p0 is a validated position.
    let dst = unsafe { a.base.offset(p0 * item as isize) };
    if s == 1 {
        // SAFETY: the run is inside the output; src holds m elements and
        // overlaps it at most exactly (an aliased input read into a slot
        // never is; a direct read is never of an aliased input).
        unsafe { core::ptr::copy(src, dst, m * item) };
    } else {
        // SAFETY: the m positions from p0 at stride s are the output's, this
        // thread's alone, and src holds m elements (this function's
        // contract).
        unsafe { scatter_strided(src, dst, s * item as isize, m, item) };
    }
}
