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
        strides: Strides,
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
pub(super) fn full_strides(rank: usize, sh: &[usize], st: &[isize]) -> Strides {
    let lead = rank - sh.len();
    let mut full = Strides::filled(0, rank);
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
    pub(super) is_uni: std::sync::Arc<[bool]>,
    /// The constants' values (the other uniform nodes are computed when the
    /// plan is bound to its operands).
    pub(super) consts: Vec<[u8; 16]>,
    kernels: Vec<Option<KernelRef>>,
    /// Per node: its arguments' strides in a tile (0 for a uniform argument).
    strides: Vec<[isize; 3]>,
    item: std::sync::Arc<[usize]>,
    slot: std::sync::Arc<[Option<usize>]>,
    slots: usize,
    /// Bytes from one slot to the next ([`super::slot_bytes`] of the widest
    /// node).
    slot_bytes: usize,
    /// Per node: the NaN fix-up of a cast into a dtype without a NaN code.
    nan_fix: Vec<Option<NanFix>>,
    /// Per input: whether it is one element at every index (with `shape`
    /// and `axes`, what a resolution depends on besides the program).
    uniform_input: Vec<bool>,
    /// Per tier (`Tier as usize`): the register program and its machine
    /// code, made at the first bind on that tier and kept for every later
    /// run of the same resolution.
    regs: [std::sync::OnceLock<Option<std::sync::Arc<super::registers::RegProgram>>>;
        crate::Tier::ALL.len()],
    /// Per tier: each node's kernel from that tier's tables, looked up at
    /// the first bind there.
    fns: [std::sync::OnceLock<Vec<Option<LoopFn>>>; crate::Tier::ALL.len()],
}

/// The last resolution of a program's calls through [`super::resolve_for`]
/// (`map`, `map_in_place`), kept by the program so that a call of the same
/// loop shape and the same uniform inputs skips resolving (its kernels,
/// slots, register program and machine code) again. Not part of the
/// program's value: a clone starts empty, and it never takes part in `==`
/// or in hashing. Threads that meet at the lock do not wait: the one that
/// finds it taken resolves for itself.
#[derive(Default)]
pub(crate) struct ResolvedCache(std::sync::Mutex<Option<std::sync::Arc<Resolved>>>);

impl ResolvedCache {
    /// The kept resolution, when it is for `shape` and `uniform_input`
    /// (every kept one is over identity axes: [`resolve_cached`] makes them).
    fn get(
        &self,
        shape: &[usize],
        uniform_input: impl ExactSizeIterator<Item = bool>,
    ) -> Option<std::sync::Arc<Resolved>> {
        let kept = self.0.try_lock().ok()?;
        let r = kept.as_ref()?;
        let same = r.shape == shape
            && r.uniform_input.len() == uniform_input.len()
            && r.uniform_input
                .iter()
                .zip(uniform_input)
                .all(|(&a, b)| a == b);
        same.then(|| r.clone())
    }

    /// Keep `r` for the next call (unless another thread holds the lock).
    fn put(&self, r: std::sync::Arc<Resolved>) {
        if let Ok(mut kept) = self.0.try_lock() {
            *kept = Some(r);
        }
    }
}

impl Clone for ResolvedCache {
    fn clone(&self) -> Self {
        ResolvedCache::default()
    }
}

impl PartialEq for ResolvedCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for ResolvedCache {}

impl std::hash::Hash for ResolvedCache {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl std::fmt::Debug for ResolvedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResolvedCache")
    }
}

/// [`resolve`] over identity axes for inputs of `shapes`, through
/// `program`'s [`ResolvedCache`].
pub(crate) fn resolve_cached<'s>(
    program: &Program,
    shape: &[usize],
    shapes: impl ExactSizeIterator<Item = &'s [usize]> + Clone,
) -> Result<std::sync::Arc<Resolved>> {
    let n = extent_product(shape.iter().copied());
    let uniform = shapes.map(|sh| super::is_uniform(n, sh));
    if let Some(r) = program.last_resolved.get(shape, uniform.clone()) {
        return Ok(r);
    }
    let uniform_input: Vec<bool> = uniform.collect();
    let axes: Vec<usize> = (0..shape.len()).collect();
    let r = std::sync::Arc::new(resolve(program, shape, &axes, &uniform_input)?);
    program.last_resolved.put(r.clone());
    Ok(r)
}

impl Resolved {
    /// Bytes of one thread's tile scratch for a run with `outputs` outputs.
    pub(crate) fn scratch_bytes(&self, outputs: usize) -> usize {
        super::tile::tile_scratch_bytes(self.slots, outputs, self.slot_bytes)
    }

    /// Each node's kernel on `tier` (looked up at the first call there);
    /// refuses a tier this CPU does not run.
    pub(super) fn fns_on(&self, tier: crate::Tier) -> Result<&[Option<LoopFn>]> {
        let table = kernel_table(tier).ok_or(Error::TierUnavailable(tier))?;
        let casts = cast_table(tier).ok_or(Error::TierUnavailable(tier))?;
        Ok(self.fns[tier as usize].get_or_init(|| {
            self.kernels
                .iter()
                .map(|k| {
                    k.map(|k| match k {
                        KernelRef::Kind(i) => table[i],
                        KernelRef::Cast(i) => casts[i],
                    })
                })
                .collect()
        }))
    }

    /// The register program of `program` (the program resolved) on `tier`,
    /// where it has one (made at the first call there).
    pub(super) fn regs_on(
        &self,
        tier: crate::Tier,
        program: &Program,
    ) -> Option<std::sync::Arc<super::registers::RegProgram>> {
        self.regs[tier as usize]
            .get_or_init(|| {
                super::registers::RegProgram::of(tier, program, &self.is_uni)
                    .map(std::sync::Arc::new)
            })
            .clone()
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
        is_uni: is_uni.into(),
        consts,
        kernels,
        strides,
        item: item.into(),
        slot: slot.into(),
        slots,
        slot_bytes,
        nan_fix,
        uniform_input: uniform_input.to_vec(),
        regs: Default::default(),
        fns: Default::default(),
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
    out_geoms: Vec<(Addr, Strides)>,
) -> Result<Plan> {
    let fns = r.fns_on(tier)?;
    let nodes = program.nodes();
    let count = nodes.len();
    let np = program.inputs().len();
    // A cell per node where any node is uniform (only those are read).
    let mut uni = if r.is_uni.iter().any(|&u| u) {
        r.consts.clone()
    } else {
        Vec::new()
    };
    // Geometries: the loads that are not uniform, then the outputs.
    let mut geoms_full: Vec<(Addr, Strides)> = Vec::with_capacity(np + out_geoms.len());
    let mut load_geom: InlineVec<Option<usize>, INLINE> = InlineVec::filled(None, np);
    let mut aliased: InlineVec<bool, INLINE> = InlineVec::filled(false, np);
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
    compute_uniform(program, r, fns, &mut uni);

    // Merge axes contiguous in every operand, dropping extent-1 axes: in
    // place, each operand's merged axis j < ax written after its full
    // axes ≤ j are read.
    let shape = &r.shape;
    let mut geoms: Vec<Geom> = geoms_full
        .into_iter()
        .map(|(addr, strides)| Geom { addr, strides })
        .collect();
    let mut dims: InlineVec<usize, INLINE> = InlineVec::new();
    for (ax, &e) in shape.iter().enumerate() {
        if e == 1 {
            continue;
        }
        let w = dims.len();
        if w > 0 {
            let joins = geoms
                .iter()
                .all(|g| g.strides[ax].checked_mul(e as isize) == Some(g.strides[w - 1]));
            if joins {
                dims[w - 1] = extent_product([dims[w - 1], e]);
                for g in geoms.iter_mut() {
                    g.strides[w - 1] = g.strides[ax];
                }
                continue;
            }
        }
        dims.push(e);
        for g in geoms.iter_mut() {
            g.strides[w] = g.strides[ax];
        }
    }
    if dims.is_empty() {
        dims.push(1);
        for g in geoms.iter_mut() {
            g.strides.truncate(0);
            g.strides.push(0);
        }
    } else {
        for g in geoms.iter_mut() {
            g.strides.truncate(dims.len());
        }
    }

    // The steps of a tile, in node order.
    let mut steps = Vec::with_capacity(count);
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
    // One output per node at most is written by its kernel (the first).
    let mut store_direct: Vec<bool> = Vec::with_capacity(stores.len());
    for (k, &(node, geom)) in stores.iter().enumerate() {
        let g = &geoms[geom];
        let claimed = (0..k).any(|j| store_direct[j] && stores[j].0 == node);
        store_direct.push(
            !any_aliased
                && !claimed
                && !r.is_uni[node]
                && matches!(nodes[node].op, Op::Kind(..) | Op::Cast(..))
                && g.addr.vpb == 1
                && *g.strides.last().unwrap() == 1,
        );
    }
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
        regs: r.regs_on(tier, program),
    })
}

/// The values of `r`'s uniform computed nodes, in node order, from the
/// uniform loads' and constants' values already in their cells of `uni`
/// (16 bytes per node, every node's cell present where any node is
/// uniform), each by its kernel of the bound tier (`fns`) over one element.
pub(super) fn compute_uniform(
    program: &Program,
    r: &Resolved,
    fns: &[Option<LoopFn>],
    uni: &mut [[u8; 16]],
) {
    let nodes = program.nodes();
    for i in 0..nodes.len() {
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
