//! Planning a validated program: resolving each node's kernel and scratch
//! slot once for a loop shape ([`Resolved`], what a `MapPlan` keeps), then
//! binding it to a call's operands ([`bind`]) into the executor's [`Plan`].

use super::*;

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

pub(super) fn addr_of(base: *mut u8, dtype: DType, offset: usize) -> Addr {
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
pub(super) fn full_strides(rank: usize, sh: &[usize], st: &[isize]) -> Vec<isize> {
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
    pub(super) n: usize,
    pub(super) shape: Vec<usize>,
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
    /// Bytes from one slot to the next ([`super::slot_bytes`] of the widest
    /// node).
    slot_bytes: usize,
    /// Per node: the NaN fix-up of a cast into a dtype without a NaN code.
    nan_fix: Vec<Option<NanFix>>,
    /// The register program (and its machine code) of the first tier a
    /// plan was bound on: made once for every run of a `MapPlan` there.
    regs: std::sync::OnceLock<(
        crate::Tier,
        Option<std::sync::Arc<super::registers::RegProgram>>,
    )>,
}

impl Resolved {
    /// Bytes of one thread's tile scratch for a run with `outputs` outputs.
    pub(crate) fn scratch_bytes(&self, outputs: usize) -> usize {
        super::tile::tile_scratch_bytes(self.slots, outputs, self.slot_bytes)
    }
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
    let mut nan_fix: Vec<Option<NanFix>> = vec![None; count];
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
                nan_fix[i] = NanFix::of(nodes[a.0].dtype, node.dtype, sat);
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
    let mut free: Vec<(usize, usize)> = Vec::new();
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
        // it down its scalar loop. Loads and coordinates fill their slots for
        // the whole tile before any kind runs (the kinds run chunk by chunk),
        // so they take a fresh slot, never one a kind frees.
        // And a kind takes only a slot freed by a node of its own element
        // size: over one chunk it writes exactly the bytes the earlier
        // node's same chunk held, never a later chunk still to be read.
        let fresh = matches!(node.op, Op::Load(_) | Op::Coord(_));
        let reuse = free
            .iter()
            .rposition(|&(_, it)| it == item[i])
            .filter(|_| !fresh);
        let s = match reuse {
            Some(at) => free.remove(at).0,
            None => {
                slots += 1;
                slots - 1
            }
        };
        slot[i] = Some(s);
        for a in dying {
            free.push((slot[a].expect("a live node has a slot"), item[a]));
        }
    }
    let slot_bytes = super::program_slot_bytes(program);
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
        slot_bytes,
        nan_fix,
        regs: std::sync::OnceLock::new(),
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
            if let Some(fix) = r.nan_fix[i] {
                // SAFETY: the source's cell holds one element of its dtype;
                // the result's cell one code.
                unsafe { fix.apply(a.src[0], 0, a.dst, 1) };
            }
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
                    nan_fix: r.nan_fix[i],
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
        slot_bytes: r.slot_bytes,
        uni,
        is_uni: r.is_uni.clone(),
        regs: match r.regs.get() {
            Some((t, rp)) if *t == tier => rp.clone(),
            _ => {
                let rp = super::registers::RegProgram::of(tier, program, &r.is_uni)
                    .map(std::sync::Arc::new);
                let _ = r.regs.set((tier, rp.clone()));
                rp
            }
        },
    })
}

/// The storage of `value` rounded into `dtype` (one code per byte when
/// packed), as a default-mode cast from its natural dtype rounds it (on the
/// scalar tier: every tier gives its bits).
fn const_bytes(value: Scalar, dtype: DType) -> Result<[u8; 16]> {
    let (from, src): (DType, [u8; 8]) = match value {
        Scalar::Bool(b) => (DType::Bool, [b as u8, 0, 0, 0, 0, 0, 0, 0]),
        Scalar::Int(v) => (DType::I64, v.to_le_bytes()),
        Scalar::UInt(v) => (DType::U64, v.to_le_bytes()),
        Scalar::Float(v) => (DType::F64, v.to_le_bytes()),
    };
    cast_one(from, src, dtype, false)
}

/// One element of `from` (its bytes, at most 8) cast into `to` (one code
/// per byte when packed) by the scalar tier's cast of that mode.
pub(super) fn cast_one(from: DType, src: [u8; 8], to: DType, sat: bool) -> Result<[u8; 16]> {
    let casts =
        cast_table(crate::Tier::ALL[0]).ok_or(Error::TierUnavailable(crate::Tier::ALL[0]))?;
    let mut out = [0u8; 16];
    let f = casts[cast_index(from, to, sat, Variant::Contig).expect("every cast exists")];
    let args = Args {
        n: 1,
        src: [src.as_ptr(), core::ptr::null(), core::ptr::null()],
        src_stride: [1; 3],
        dst: out.as_mut_ptr(),
        dst_stride: 1,
    };
    // SAFETY: one element of `from` (at most 8 bytes) in, one of `to` (at
    // most 16 bytes) out.
    unsafe { f(&args) };
    Ok(out)
}
