//! Running a bound plan: the per-thread tile scratch and the evaluation of
//! the program over tiles, with the strided gathers and scatters between the
//! operands and the scratch slots.

use super::*;

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

/// Bytes of one thread's tile scratch: a slot of [`TILE`] elements of the
/// program's widest dtype (`slot_bytes` apart) per live node and per output
/// (a uniform output's cells), and 64 bytes to align it.
pub(crate) fn tile_scratch_bytes(slots: usize, outputs: usize, slot_bytes: usize) -> usize {
    (slots + outputs) * slot_bytes + 64
}

/// One thread's scratch for [`Plan::eval`]: the slots, and where each
/// node's values are after a tile.
pub(crate) struct TileScratch {
    _buf: Vec<u8>,
    /// Four tables of one pointer per node, in one allocation: where each
    /// node's values are (`ptrs`), where its kernel writes them
    /// (`slot_ptr`), its own slot (`home`, null for uniform nodes), and per
    /// output the cells a uniform output is stored from (`store_src`, null
    /// for the others; the first `outputs` entries of the fourth table).
    table: Vec<*mut u8>,
    nodes: usize,
}

impl TileScratch {
    /// `ptrs`, `slot_ptr`, `home` and `store_src`, apart.
    #[allow(clippy::type_complexity)]
    fn tables(&mut self) -> (&mut [*mut u8], &mut [*mut u8], &[*mut u8], &[*mut u8]) {
        let n = self.nodes;
        let (ptrs, rest) = self.table.split_at_mut(n);
        let (slot_ptr, rest) = rest.split_at_mut(n);
        let (home, store_src) = rest.split_at(n);
        (ptrs, slot_ptr, home, store_src)
    }
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

    /// Whether a run of this plan uses no slot at all: the register path
    /// with every load read where it lies and every output written where it
    /// lies (no coordinate, no uniform output), and every tile inside one
    /// row (one row, or rows of whole tiles), so that up to [`SPAN`] tiles
    /// in one row run as one. (At most 64 outputs: a run marks the outputs
    /// written where they lie in a 64-bit mask; the register path's
    /// distinct outputs are fewer than its nodes anyway.)
    fn slotless(&self) -> bool {
        let inner = *self.dims.last().expect("a plan has an axis");
        self.regs.is_some()
            && self.stores.len() <= 64
            && (self.dims.len() == 1 || inner.is_multiple_of(TILE))
            && self.store_direct.iter().all(|&d| d)
            && self
                .steps
                .iter()
                .all(|s| matches!(s, Step::Load { direct: true, .. } | Step::Call { .. }))
    }

    /// Scratch for one thread: a slot per live node and a cell per uniform
    /// output, sized once (no slots for a [`Plan::slotless`] plan).
    pub(crate) fn scratch(&self) -> TileScratch {
        if self.slotless() {
            // SAFETY: a null base: no slot is made (see `scratch_at`).
            return unsafe { self.scratch_at(core::ptr::null_mut(), Vec::new()) };
        }
        // Left unset: every slot is written for a tile before it is read
        // (setting the bytes would cost a pass over them on every call).
        let mut buf: Vec<u8> = Vec::with_capacity(tile_scratch_bytes(
            self.slots,
            self.stores.len(),
            self.slot_bytes,
        ));
        let pad = buf.as_ptr().align_offset(64);
        // SAFETY: pad < 64, inside the buffer's allocation.
        let base = unsafe { buf.as_mut_ptr().add(pad) };
        // SAFETY: from `base` on lie at least the slots and cells (the 64
        // bytes of padding cover `pad`), owned by `buf`, which the scratch
        // keeps.
        unsafe { self.scratch_at(base, buf) }
    }

    /// [`Plan::scratch`] in memory the caller lends: `base`, 64-byte
    /// aligned, with [`tile_scratch_bytes`] of this plan's slots and outputs
    /// writable from it (less the 64 bytes of alignment padding), kept by
    /// `buf` or by the caller while the scratch is used. A null `base` for
    /// a [`Plan::slotless`] plan: every slot pointer is then null, and no
    /// run reads or writes one.
    ///
    /// # Safety
    /// `base` must be as stated, and no other thread may use those bytes
    /// while the returned scratch lives.
    pub(crate) unsafe fn scratch_at(&self, base: *mut u8, buf: Vec<u8>) -> TileScratch {
        let n = self.item.len();
        let outs = self.stores.len();
        let uni = self.uni.as_ptr() as *mut u8;
        let mut table = vec![core::ptr::null_mut::<u8>(); 3 * n + outs];
        for i in 0..n {
            // (where its values are, its slot)
            let (at, slot) = match self.slot[i] {
                Some(_) if base.is_null() => (core::ptr::null_mut(), core::ptr::null_mut()),
                Some(s) => {
                    // SAFETY: slot s < slots lies inside the buffer.
                    let p = unsafe { base.add(s * self.slot_bytes) };
                    (p, p)
                }
                // SAFETY: i indexes `uni` (a uniform node has its cell).
                None => (unsafe { uni.add(16 * i) }, core::ptr::null_mut()),
            };
            table[i] = at;
            table[n + i] = slot;
            table[2 * n + i] = slot;
        }
        // Uniform outputs are stored from a tile of copies of their value
        // (a slotless plan has none).
        for (k, &(node, _)) in self.stores.iter().enumerate() {
            if self.is_uni[node] {
                let it = self.item[node];
                // SAFETY: output k's cell lies past the slots, inside the buffer.
                let cell = unsafe { base.add((self.slots + k) * self.slot_bytes) };
                for j in 0..TILE {
                    // SAFETY: TILE cells of `it` bytes, at most the widest
                    // node's, fit a slot.
                    unsafe {
                        core::ptr::copy_nonoverlapping(uni.add(16 * node), cell.add(j * it), it)
                    };
                }
                table[3 * n + k] = cell;
            }
        }
        TileScratch {
            _buf: buf,
            table,
            nodes: n,
        }
    }

    /// The values of `node` after [`Plan::eval`]: a pointer to the tile's
    /// values (one code per byte when packed), and whether it is one value
    /// that holds at every index.
    pub(crate) fn values(&self, s: &TileScratch, node: usize) -> (*const u8, bool) {
        (s.table[node], self.is_uni[node])
    }

    /// Run the program's steps for indices `f0 .. f0 + len` (C order of the
    /// loop's shape; `len` at most [`TILE`], or up to [`SPAN`] tiles in one
    /// row on the register path when no load or output needs a slot) into
    /// `s`.
    ///
    /// # Safety
    /// The plan's operands must be valid for the call (the validation of
    /// `run` or of the caller that built it), the range inside the loop.
    pub(crate) unsafe fn eval(&self, f0: usize, len: usize, s: &mut TileScratch) {
        debug_assert!((len <= TILE || self.regs.is_some()) && f0 + len <= self.n);
        let inner = *self.dims.last().expect("a plan has an axis");
        let one_row = f0 % inner + len <= inner;
        let (ptrs, slot_ptr, ..) = s.tables();
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
                Step::Call { .. } => {}
            }
        }
        if let Some(rp) = &self.regs {
            let n = self.item.len();
            let mut src = [core::ptr::null::<u8>(); registers::MAX_NODES];
            let mut dst = [core::ptr::null_mut::<u8>(); registers::MAX_NODES];
            for (s, &p) in src.iter_mut().zip(&ptrs[..n]) {
                *s = p;
            }
            dst[..n].copy_from_slice(&slot_ptr[..n]);
            // SAFETY: each load's values lie at its pointer (`len` of them,
            // a slot or a unit-stride run of the input, or one uniform
            // value), each output node's slot or unit-stride output run
            // holds `len` values, and the plan's tier runs here (the
            // register program was made for it).
            unsafe { rp.run(&src[..n], &self.is_uni, &dst[..n], len) };
            return;
        }
        // The kinds and casts, chunk by chunk: every call over one chunk
        // before the next chunk, so that a chain's intermediate values are
        // still in the first-level cache when the next node reads them. Each
        // element's values are the same whatever the chunks (the kernels are
        // elementwise), and a slot a later node reuses is read by the earlier
        // ones for a chunk before the later one writes that chunk.
        let mut c0 = 0;
        while c0 < len {
            let m = CHUNK.min(len - c0);
            for step in &self.steps {
                let Step::Call {
                    node,
                    f,
                    args,
                    arity,
                    stride,
                    nan_fix,
                } = *step
                else {
                    continue;
                };
                let mut a = Args {
                    n: m,
                    src: [core::ptr::null(); 3],
                    src_stride: stride,
                    // SAFETY: element c0 of the node's tile (a slot or a
                    // unit-stride output run of `len` ≥ c0 + m elements).
                    dst: unsafe { slot_ptr[node].add(c0 * self.item[node]) },
                    dst_stride: 1,
                };
                for j in 0..arity {
                    let skip = c0 as isize * stride[j] * self.item[args[j]] as isize;
                    // SAFETY: element c0 of the argument's values at its
                    // stride (a slot or a unit-stride run of `len`
                    // elements; a uniform value at stride 0 stays put).
                    a.src[j] = unsafe { ptrs[args[j]].offset(skip) as *const u8 };
                }
                // SAFETY: each source holds `m` elements of its dtype from
                // there (a slot, a unit-stride run of an input, or one
                // uniform value at stride 0); the destination is a slot that
                // is either no source's or exactly one of the same size.
                unsafe { f(&a) };
                if let Some(fix) = nan_fix {
                    // SAFETY: the cast's one source holds `m` elements at its
                    // stride (a slot, a unit-stride run of an input or one
                    // uniform value), and its destination `m` one-byte codes
                    // (a slot or a unit-stride output run).
                    unsafe { fix.apply(a.src[0], stride[0], a.dst, m) };
                }
            }
            c0 += m;
        }
    }

    /// Run tiles `t0..t1` on this thread, with scratch of its own (at
    /// `mem`, lent by the caller, or allocated where `mem` is null),
    /// storing every output.
    ///
    /// # Safety
    /// The plan's operands must be valid (the validation of `run`), and no
    /// other thread may run these tiles; a `mem` that is not null must be as
    /// [`Plan::scratch_at`] asks, used by no other thread.
    pub(super) unsafe fn run_tiles(&self, t0: usize, t1: usize, mem: *mut u8) {
        if t0 >= t1 {
            return;
        }
        let mut sc = if mem.is_null() {
            self.scratch()
        } else {
            // SAFETY: a lent `mem` is 64-byte aligned with this plan's tile
            // scratch bytes, this task's alone (this function's contract);
            // the caller keeps it while the scratch lives.
            unsafe { self.scratch_at(mem, Vec::new()) }
        };
        let inner = *self.dims.last().expect("a plan has an axis");
        // With no slot in use, up to SPAN tiles that lie in one row run as
        // one (the per-tile set-up once for all of them).
        let spans = self.slotless();
        let is_direct = |d: u64, k: usize| k < 64 && d >> k & 1 == 1;
        let mut t = t0;
        while t < t1 {
            let f0 = t * TILE;
            let mut count = 1;
            if spans {
                count = SPAN.min(t1 - t);
                while count > 1 && f0 % inner + (count * TILE).min(self.n - f0) > inner {
                    count -= 1;
                }
            }
            t += count;
            let len = (count * TILE).min(self.n - f0);
            let one_row = f0 % inner + len <= inner;
            let (ptrs, slot_ptr, ..) = sc.tables();
            // Outputs written in place by their node's kernel in this tile
            // (a bit per output; past 64 outputs, never).
            let mut direct = 0u64;
            for (k, &(node, geom)) in self.stores.iter().enumerate() {
                if k < 64 && one_row && self.store_direct[k] {
                    direct |= 1 << k;
                    let g = &self.geoms[geom];
                    let p = self.pos(g, f0 / inner, f0 % inner);
                    // SAFETY: a validated element position of the output; the
                    // tile's `len` elements follow it at unit stride, and this
                    // task alone writes them.
                    let at = unsafe { g.addr.base.offset(p * g.addr.item as isize) };
                    slot_ptr[node] = at;
                    ptrs[node] = at;
                }
            }
            // SAFETY: the plan's operands are valid for the call (this
            // function's contract), and tile t < t1 is inside the loop.
            unsafe { self.eval(f0, len, &mut sc) };
            let (ptrs, slot_ptr, home, store_src) = sc.tables();
            for (k, &(node, geom)) in self.stores.iter().enumerate() {
                if is_direct(direct, k) {
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
                if is_direct(direct, k) {
                    slot_ptr[node] = home[node];
                    ptrs[node] = home[node];
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
