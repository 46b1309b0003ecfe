//! Term sources: where a reduction's or a scan's terms come from.
//!
//! A source numbers the terms of each output `0..n` in C order of the reduced
//! axes and hands them out a block at a time, converted into the carrier. Today
//! a source is one operand (any dtype, any layout, converted as a cast does) or
//! a pair of operands of one shape combined term by term in the carrier
//! ([`TermMap`]: products for a dot, squared or absolute differences for
//! distances), or a `map` program's output, each block of terms one tile of
//! the program run over the loop with its kept axes first and its reduced
//! axes last, so that one result's terms are consecutive indices.

use crate::array::{extent_product, ArrayView};
use crate::map::{TermPlan, TileScratch, TILE};
use crate::tier::cast_table;
use crate::{cast_index, DType, Element, LoopFn, Tier, Variant};

use super::lanes::BLOCK;

/// How the terms are formed from the operands, in the carrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermMap {
    /// The operand's value.
    Value,
    /// `x · x`, rounded once.
    Square,
    /// `|x|` (exact).
    Abs,
    /// `x · y`, rounded once.
    Product,
    /// `(x - y) · (x - y)`, each operation rounded.
    SquaredDifference,
    /// `|x - y|`, the difference rounded.
    AbsDifference,
    /// An output of a `map` program, as `map` computes it.
    Program,
}

impl TermMap {
    /// Operands the map reads (0 for a program, which reads its own
    /// inputs).
    pub fn arity(self) -> usize {
        match self {
            TermMap::Program => 0,
            TermMap::Value | TermMap::Square | TermMap::Abs => 1,
            _ => 2,
        }
    }
}

/// One operand's addressing.
#[derive(Clone, Copy)]
struct Addr {
    base: *const u8,
    offset: isize,
    item: usize,
    vpb: usize,
    bits: u32,
    /// The cast from the operand's dtype into the carrier (None: the same dtype).
    conv: Option<LoopFn>,
}

/// The scratch one thread needs to fetch blocks: sized once, reused per block.
pub(crate) struct Scratch<C> {
    raw: Vec<u8>,
    buf: [Vec<C>; 3],
    idx: Vec<usize>,
    /// A program source's tile scratch.
    tile: Option<TileScratch>,
}

/// `v` with room for a block of carrier values (grown, set to the default,
/// at its first use).
fn sized<C: Default + Clone>(v: &mut Vec<C>) -> &mut Vec<C> {
    if v.len() < BLOCK {
        v.resize(BLOCK, C::default());
    }
    v
}

/// A program's output as terms, and the cast of its dtype into the carrier.
struct ProgramTerms {
    terms: TermPlan,
    conv: Option<LoopFn>,
}

/// Operands, reduced axes and the carrier conversion of one call.
pub(crate) struct Source {
    addr: [Addr; 2],
    arity: usize,
    map: TermMap,
    /// Kept axes (C order) and their strides per operand.
    outer_shape: Vec<usize>,
    outer_strides: Vec<[isize; 2]>,
    /// Reduced axes, merged where every operand allows, and their strides.
    red_shape: Vec<usize>,
    red_strides: Vec<[isize; 2]>,
    /// Terms per output (of the window, where one is set).
    pub n: usize,
    /// The window's first term ([`Source::set_window`]; 0 for all terms).
    skip: usize,
    /// Terms per output of the operands.
    full: usize,
    /// Outputs.
    pub outputs: usize,
    carrier: DType,
    /// The tier the maps run on.
    tier: Tier,
    /// Set when the terms are a program's output.
    program: Option<ProgramTerms>,
}

// SAFETY: a source only reads the validated operands it borrows for the call.
unsafe impl Sync for Source {}
// SAFETY: moving a source to another thread moves only pointers into the
// validated operands it borrows for the call, which it only reads.
unsafe impl Send for Source {}

impl Source {
    /// A source over `ops` (one per the map's arity, of one shape, validated
    /// views), reducing `axes` (sorted, distinct, in range), into `carrier`
    /// on `tier`. None when the cast table lacks a conversion.
    pub(crate) fn new(
        ops: &[&ArrayView<'_>],
        axes: &[usize],
        map: TermMap,
        carrier: DType,
        tier: Tier,
    ) -> Option<Source> {
        let table = cast_table(tier)?;
        let shape = ops[0].shape();
        let mut addr = [Addr {
            base: core::ptr::null(),
            offset: 0,
            item: 1,
            vpb: 1,
            bits: 8,
            conv: None,
        }; 2];
        for (k, a) in ops.iter().enumerate() {
            let info = a.dtype().info();
            let conv = if a.dtype() == carrier {
                None
            } else {
                Some(table[cast_index(a.dtype(), carrier, false, Variant::Contig)?])
            };
            addr[k] = Addr {
                base: a.data().as_ptr(),
                offset: a.layout().offset as isize,
                item: info.item_bytes,
                vpb: info.values_per_byte as usize,
                bits: info.bits,
                conv,
            };
        }
        let stride = |ax: usize| {
            let mut s = [0isize; 2];
            for (k, a) in ops.iter().enumerate() {
                s[k] = a.strides()[ax];
            }
            s
        };
        let mut outer_shape = Vec::new();
        let mut outer_strides = Vec::new();
        let mut red_shape: Vec<usize> = Vec::new();
        let mut red_strides: Vec<[isize; 2]> = Vec::new();
        for (ax, &len) in shape.iter().enumerate() {
            if axes.contains(&ax) {
                if len == 1 {
                    continue;
                }
                let s = stride(ax);
                if let (Some(last_n), Some(last_s)) = (red_shape.last_mut(), red_strides.last_mut())
                {
                    let merges =
                        (0..ops.len()).all(|k| s[k].checked_mul(len as isize) == Some(last_s[k]));
                    if merges {
                        // Exact where the operand has elements (its count is
                        // checked); a saturated extent only in an empty one.
                        *last_n = extent_product([*last_n, len]);
                        *last_s = s;
                        continue;
                    }
                }
                red_shape.push(len);
                red_strides.push(s);
            } else {
                outer_shape.push(len);
                outer_strides.push(stride(ax));
            }
        }
        let n = extent_product(red_shape.iter().copied());
        let outputs = extent_product(outer_shape.iter().copied());
        Some(Source {
            addr,
            arity: ops.len(),
            map,
            outer_shape,
            outer_strides,
            red_shape,
            red_strides,
            n,
            skip: 0,
            full: n,
            outputs,
            carrier,
            tier,
            program: None,
        })
    }

    /// A source over a program's output planned as terms (`terms`, over a
    /// loop of `shape` permuted to its kept axes then `axes`), into `carrier`
    /// on `tier`. None when the cast table lacks a conversion.
    pub(crate) fn program(
        terms: TermPlan,
        shape: &[usize],
        axes: &[usize],
        carrier: DType,
        tier: Tier,
    ) -> Option<Source> {
        let table = cast_table(tier)?;
        let conv = if terms.dtype == carrier {
            None
        } else {
            Some(table[cast_index(terms.dtype, carrier, false, Variant::Contig)?])
        };
        let n = extent_product(axes.iter().map(|&a| shape[a]));
        let outer_shape: Vec<usize> = (0..shape.len())
            .filter(|a| !axes.contains(a))
            .map(|a| shape[a])
            .collect();
        let outputs = extent_product(outer_shape.iter().copied());
        let none = Addr {
            base: core::ptr::null(),
            offset: 0,
            item: 1,
            vpb: 1,
            bits: 8,
            conv: None,
        };
        Some(Source {
            addr: [none; 2],
            arity: 0,
            map: TermMap::Program,
            outer_strides: vec![[0; 2]; outer_shape.len()],
            outer_shape,
            red_shape: vec![n],
            red_strides: vec![[0; 2]],
            n,
            skip: 0,
            full: n,
            outputs,
            carrier,
            tier,
            program: Some(ProgramTerms { terms, conv }),
        })
    }

    /// Restrict every output's terms to `skip .. skip + len` of the
    /// operands' numbering, renumbered from 0 (so a pass over the source
    /// sees `len` terms per output); `(0, all)` restores the whole. A
    /// window past the terms is refused by the caller (debug-checked here).
    pub(crate) fn set_window(&mut self, skip: usize, len: usize) {
        debug_assert!(skip.checked_add(len).is_some_and(|e| e <= self.full));
        self.skip = skip;
        self.n = len;
    }

    /// Fresh scratch for one thread: the buffers are sized at their first
    /// use (a contiguous operand already in the carrier never needs them,
    /// and a small call should not pay for setting ~30 KB it never reads).
    pub(crate) fn scratch<C: Default + Clone>(&self) -> Scratch<C> {
        Scratch {
            raw: Vec::new(),
            buf: [Vec::new(), Vec::new(), Vec::new()],
            idx: vec![0; self.red_shape.len()],
            tile: self.program.as_ref().map(|p| p.terms.plan.scratch()),
        }
    }

    /// Element position of output `o`'s term 0 in operand `k`.
    fn outer_pos(&self, o: usize, k: usize) -> isize {
        let mut rest = o;
        let mut pos = self.addr[k].offset;
        for (ax, &len) in self.outer_shape.iter().enumerate().rev() {
            pos += (rest % len) as isize * self.outer_strides[ax][k];
            rest /= len;
        }
        pos
    }

    /// Terms `t0 .. t0 + len` of output `o` in place, when they are one
    /// contiguous run of carrier values that need no conversion or map.
    pub(crate) fn direct<C: Element>(&self, o: usize, t0: usize, len: usize) -> Option<&[C]> {
        let a = self.addr[0];
        let ok = self.arity == 1
            && self.map == TermMap::Value
            && a.conv.is_none()
            && a.vpb == 1
            && self.red_shape.len() <= 1
            && self.red_strides.first().is_none_or(|s| s[0] == 1)
            && C::DTYPE == self.carrier
            && t0 + len <= self.n;
        if !ok {
            return None;
        }
        let t0 = t0 + self.skip;
        let base = self.outer_pos(o, 0);
        // SAFETY: the position is inside the validated view (computed, not read).
        let p = unsafe { a.base.offset((base + t0 as isize) * a.item as isize) };
        if !(p as usize).is_multiple_of(core::mem::align_of::<C>()) {
            return None;
        }
        // SAFETY: terms t0..t0+len of this output are consecutive elements of
        // the carrier's type inside the validated view the source borrows.
        // The pointer is aligned for C.
        Some(unsafe { core::slice::from_raw_parts(p as *const C, len) })
    }

    /// Terms `t0 .. t0 + len` of output `o` (len ≤ [`BLOCK`], inside `0..n`),
    /// in the carrier `C` (whose dtype is the source's carrier).
    pub(crate) fn fetch<'s, C: Element + Default + Clone + MapTerms>(
        &self,
        o: usize,
        t0: usize,
        len: usize,
        s: &'s mut Scratch<C>,
    ) -> &'s [C] {
        debug_assert_eq!(C::DTYPE, self.carrier);
        debug_assert!(len <= BLOCK && t0 + len <= self.n);
        let t0 = t0 + self.skip;
        if let Some(p) = &self.program {
            return Self::fetch_program(p, o * self.full + t0, len, s);
        }
        if self.arity == 1 {
            let (first, _) = s.buf.split_at_mut(1);
            let direct = self.fetch_one(0, o, t0, len, &mut s.raw, &mut first[0], &mut s.idx);
            if self.map == TermMap::Value {
                return match direct {
                    // SAFETY: `fetch_one` returns a pointer to `len` carrier
                    // elements of the borrowed operand.
                    Some(p) => unsafe { core::slice::from_raw_parts(p as *const C, len) },
                    None => &s.buf[0][..len],
                };
            }
            let [b0, _, out] = &mut s.buf;
            let x: &[C] = match direct {
                // SAFETY: `fetch_one` returns a pointer to `len` carrier
                // elements of the borrowed operand.
                Some(p) => unsafe { core::slice::from_raw_parts(p as *const C, len) },
                None => &b0[..len],
            };
            C::map1(self.map, x, &mut sized(out)[..len], self.tier);
            return &s.buf[2][..len];
        }
        let [b0, b1, out] = &mut s.buf;
        let dx = self.fetch_one(0, o, t0, len, &mut s.raw, b0, &mut s.idx);
        let dy = self.fetch_one(1, o, t0, len, &mut s.raw, b1, &mut s.idx);
        let x: &[C] = match dx {
            Some(p) => {
                // SAFETY: the fetch pointed at `len` contiguous values of C.
                unsafe { core::slice::from_raw_parts(p as *const C, len) }
            }
            None => &b0[..len],
        };
        let y: &[C] = match dy {
            Some(p) => {
                // SAFETY: the fetch pointed at `len` contiguous values of C.
                unsafe { core::slice::from_raw_parts(p as *const C, len) }
            }
            None => &b1[..len],
        };
        C::map2(self.map, x, y, &mut sized(out)[..len], self.tier);
        &s.buf[2][..len]
    }

    /// The two operands' values at terms `t0 .. t0 + len` of output `o`, in
    /// the carrier, unmapped (a two-operand source).
    pub(crate) fn fetch_two<'s, C: Element + Default + Clone>(
        &self,
        o: usize,
        t0: usize,
        len: usize,
        s: &'s mut Scratch<C>,
    ) -> (&'s [C], &'s [C]) {
        debug_assert_eq!(self.arity, 2);
        debug_assert!(len <= BLOCK && t0 + len <= self.n);
        let t0 = t0 + self.skip;
        let [b0, b1, _] = &mut s.buf;
        let dx = self.fetch_one(0, o, t0, len, &mut s.raw, b0, &mut s.idx);
        let dy = self.fetch_one(1, o, t0, len, &mut s.raw, b1, &mut s.idx);
        let x: &[C] = match dx {
            // SAFETY: the fetch pointed at `len` contiguous values of C.
            Some(p) => unsafe { core::slice::from_raw_parts(p as *const C, len) },
            None => &b0[..len],
        };
        let y: &[C] = match dy {
            // SAFETY: the fetch pointed at `len` contiguous values of C.
            Some(p) => unsafe { core::slice::from_raw_parts(p as *const C, len) },
            None => &b1[..len],
        };
        (x, y)
    }

    /// A program's values at indices `f0 .. f0 + len` of its loop, in the
    /// carrier: one tile evaluated, then cast (a value that holds at every
    /// index is cast once and repeated).
    fn fetch_program<'s, C: Element + Default + Clone>(
        p: &ProgramTerms,
        f0: usize,
        len: usize,
        s: &'s mut Scratch<C>,
    ) -> &'s [C] {
        const { assert!(BLOCK <= TILE) };
        let Scratch { buf, tile, .. } = s;
        let ts = tile
            .as_mut()
            .expect("a program source's scratch has a tile");
        let plan = &p.terms.plan;
        // SAFETY: the plan was built from validated views borrowed for the
        // call, and f0 .. f0 + len lies inside its loop (o < outputs, t0 +
        // len ≤ n).
        unsafe { plan.eval(f0, len, ts) };
        let (ptr, uniform) = plan.values(ts, p.terms.node);
        let out = sized(&mut buf[0]);
        let m = if uniform { 1 } else { len };
        match p.conv {
            None if !uniform && (ptr as usize).is_multiple_of(core::mem::align_of::<C>()) => {
                // SAFETY: the tile holds `len` values of the carrier's dtype.
                return unsafe { core::slice::from_raw_parts(ptr as *const C, len) };
            }
            None => {
                // SAFETY: `m` carrier values are readable from ptr; `out`
                // holds BLOCK of them.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        ptr,
                        out.as_mut_ptr() as *mut u8,
                        m * core::mem::size_of::<C>(),
                    )
                };
            }
            Some(f) => {
                // SAFETY: `m` values of the program output's dtype (one code
                // per byte when packed, as the contiguous casts take them)
                // are readable from ptr; `out` holds BLOCK carrier values.
                unsafe { convert(f, ptr, m, out.as_mut_ptr() as *mut u8) };
            }
        }
        if uniform {
            let v = out[0];
            out[1..len].fill(v);
        }
        &out[..len]
    }

    /// Operand `k`'s terms into `buf` (as carrier elements), or a pointer to
    /// them in place when they are contiguous and already in the carrier.
    #[allow(clippy::too_many_arguments)]
    fn fetch_one<C: Element + Default + Clone>(
        &self,
        k: usize,
        o: usize,
        t0: usize,
        len: usize,
        raw: &mut Vec<u8>,
        buf: &mut Vec<C>,
        idx: &mut [usize],
    ) -> Option<*const u8> {
        let a = self.addr[k];
        let base = self.outer_pos(o, k);
        let contiguous = a.vpb == 1
            && (self.red_shape.len() <= 1)
            && self.red_strides.first().is_none_or(|s| s[k] == 1);
        if contiguous {
            // SAFETY: terms t0..t0+len of this output lie at consecutive
            // element positions inside the validated view.
            let p = unsafe { a.base.offset((base + t0 as isize) * a.item as isize) };
            match a.conv {
                None if (p as usize).is_multiple_of(core::mem::align_of::<C>()) => return Some(p),
                None => {
                    let buf = sized(buf);
                    // SAFETY: `len` carrier elements are readable from p and
                    // `buf` has room for them; an unaligned run is copied.
                    unsafe {
                        core::ptr::copy_nonoverlapping(p, buf.as_mut_ptr() as *mut u8, len * a.item)
                    };
                    return None;
                }
                Some(f) => {
                    let buf = sized(buf);
                    // SAFETY: `len` source elements are readable from p and
                    // `buf` holds at least `len` carrier elements.
                    unsafe { convert(f, p, len, buf.as_mut_ptr() as *mut u8) };
                    return None;
                }
            }
        }
        // Gather: into the carrier buffer directly when no conversion is needed,
        // else into the raw scratch (one code per byte for packed dtypes).
        let buf = sized(buf);
        if raw.len() < BLOCK * 16 {
            raw.resize(BLOCK * 16, 0);
        }
        let out: *mut u8 = match a.conv {
            None => buf.as_mut_ptr() as *mut u8,
            Some(_) => raw.as_mut_ptr(),
        };
        let width = if a.vpb > 1 { 1 } else { a.item };
        let rank = self.red_shape.len();
        let mut rest = t0;
        for ax in (0..rank).rev() {
            idx[ax] = rest % self.red_shape[ax];
            rest /= self.red_shape[ax];
        }
        let mut pos = base;
        for (&i, s) in idx.iter().zip(&self.red_strides) {
            pos += i as isize * s[k];
        }
        let mut done = 0;
        while done < len {
            let (inner_n, inner_s) = if rank == 0 {
                (1, 0)
            } else {
                (self.red_shape[rank - 1], self.red_strides[rank - 1][k])
            };
            let start = if rank == 0 { 0 } else { idx[rank - 1] };
            let run = (inner_n - start).min(len - done);
            let dst0 = out.wrapping_add(done * width);
            // SAFETY: positions pos + j·inner_s for j < run are
            // element positions of the validated view; the destination has room
            // for `len` values of `width` bytes from `out`.
            unsafe {
                match (a.vpb, a.item) {
                    (1, 4) => gather_run::<u32>(a.base, pos, inner_s, run, dst0),
                    (1, 8) => gather_run::<u64>(a.base, pos, inner_s, run, dst0),
                    (1, 2) => gather_run::<u16>(a.base, pos, inner_s, run, dst0),
                    (1, 1) => gather_run::<u8>(a.base, pos, inner_s, run, dst0),
                    (1, 16) => gather_run::<u128>(a.base, pos, inner_s, run, dst0),
                    _ => {
                        for j in 0..run {
                            let p = pos + j as isize * inner_s;
                            let dst = dst0.add(j * width);
                            if a.vpb > 1 {
                                let byte = a.base.add(p as usize / a.vpb).read();
                                let slot = p as usize % a.vpb;
                                let shift = (a.vpb - 1 - slot) as u32 * a.bits;
                                dst.write((byte >> shift) & ((1u16 << a.bits) - 1) as u8);
                            } else {
                                core::ptr::copy_nonoverlapping(
                                    a.base.offset(p * a.item as isize),
                                    dst,
                                    a.item,
                                );
                            }
                        }
                    }
                }
            }
            done += run;
            if done >= len || rank == 0 {
                break;
            }
            // Advance the multi-index past the run.
            pos += run as isize * inner_s;
            idx[rank - 1] += run;
            let mut ax = rank - 1;
            while idx[ax] == self.red_shape[ax] && ax > 0 {
                pos -= self.red_shape[ax] as isize * self.red_strides[ax][k];
                idx[ax] = 0;
                ax -= 1;
                idx[ax] += 1;
                pos += self.red_strides[ax][k];
            }
        }
        if let Some(f) = a.conv {
            // SAFETY: `raw` holds `len` gathered source elements (one code per
            // byte for packed dtypes, as the contiguous cast kernels take them)
            // and `buf` room for `len` carrier elements.
            unsafe { convert(f, raw.as_ptr(), len, buf.as_mut_ptr() as *mut u8) };
        }
        None
    }
}

/// Run the contiguous cast `f` over `n` elements from `src` into `dst`.
///
/// # Safety
/// `n` source elements (one code per byte when packed) must be readable from
/// `src` and `n` destination elements writable at `dst`.
unsafe fn convert(f: LoopFn, src: *const u8, n: usize, dst: *mut u8) {
    let args = crate::Args {
        n,
        src: [src, core::ptr::null(), core::ptr::null()],
        src_stride: [1; 3],
        dst,
        dst_stride: 1,
    };
    // SAFETY: `src` holds n readable source elements and `dst` n writable
    // destination elements, contiguous (this function's contract), which is
    // what a contiguous cast reads and writes.
    unsafe { f(&args) };
}

/// Copy `run` elements of `size_of::<T>()` bytes from element positions
/// `pos + j·stride` of `base` to consecutive slots at `dst`.
///
/// # Safety
/// Every position must be inside the operand's bytes and `dst` must have room
/// for `run` elements; neither need be aligned.
#[inline]
unsafe fn gather_run<T: Copy>(
    base: *const u8,
    pos: isize,
    stride: isize,
    run: usize,
    dst: *mut u8,
) {
    let item = core::mem::size_of::<T>() as isize;
    let d = dst as *mut T;
    for j in 0..run {
        // SAFETY: j < run: position pos + j·stride is inside the operand's
        // bytes and slot j inside dst's room (this function's contract).
        unsafe {
            let v = (base.offset((pos + j as isize * stride) * item) as *const T).read_unaligned();
            d.add(j).write_unaligned(v);
        }
    }
}

/// Forming terms from operand values in a carrier.
pub(crate) trait MapTerms: Copy {
    /// One-operand maps.
    fn map1(map: TermMap, x: &[Self], out: &mut [Self], tier: Tier);
    /// Two-operand maps.
    fn map2(map: TermMap, x: &[Self], y: &[Self], out: &mut [Self], tier: Tier);
}

macro_rules! map_float {
    ($t:ty) => {
        impl MapTerms for $t {
            fn map1(map: TermMap, x: &[Self], out: &mut [Self], _: Tier) {
                for (o, &v) in out.iter_mut().zip(x) {
                    *o = match map {
                        TermMap::Square => v * v,
                        TermMap::Abs => v.abs(),
                        _ => v,
                    };
                }
            }
            fn map2(map: TermMap, x: &[Self], y: &[Self], out: &mut [Self], _: Tier) {
                for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
                    *o = match map {
                        TermMap::Product => a * b,
                        TermMap::SquaredDifference => (a - b) * (a - b),
                        TermMap::AbsDifference => (a - b).abs(),
                        _ => a,
                    };
                }
            }
        }
    };
}
map_float!(f32);
map_float!(f64);

/// Terms of a compensated sum: the maps in pair arithmetic (a product of
/// two operands cast into pairs (x, 0), (y, 0) is TwoProd's exact pair). One
/// body, compiled under each tier's features (the same operations, so the
/// same bits).
macro_rules! map_pair {
    ($t:ty) => {
        impl MapTerms for crate::Pair<$t> {
            fn map1(map: TermMap, x: &[Self], out: &mut [Self], tier: Tier) {
                pair_maps::run1(map, x, out, tier)
            }
            fn map2(map: TermMap, x: &[Self], y: &[Self], out: &mut [Self], tier: Tier) {
                pair_maps::run2(map, x, y, out, tier)
            }
        }
    };
}
map_pair!(f32);
map_pair!(f64);

mod pair_maps {
    use super::TermMap;
    use crate::{Pair, Tier};
    use tessera_generated::runtime::pair::PairFloat;

    /// |v| of a pair: both parts negated where the leading part is negative
    /// (or a negative zero with a negative trailing part).
    #[inline(always)]
    fn abs<T: PairFloat>(v: Pair<T>) -> Pair<T> {
        let neg = v.hi < T::ZERO || (v.hi == T::ZERO && v.lo < T::ZERO);
        if neg {
            v.neg()
        } else {
            v
        }
    }

    #[inline(always)]
    fn body1<T: PairFloat>(map: TermMap, x: &[Pair<T>], out: &mut [Pair<T>]) {
        match map {
            TermMap::Square => out.iter_mut().zip(x).for_each(|(o, &v)| *o = v.mul(v)),
            TermMap::Abs => out.iter_mut().zip(x).for_each(|(o, &v)| *o = abs(v)),
            _ => crate::copy::copy_slice(out, x),
        }
    }

    #[inline(always)]
    fn body2<T: PairFloat>(map: TermMap, x: &[Pair<T>], y: &[Pair<T>], out: &mut [Pair<T>]) {
        let each = |f: &dyn Fn(Pair<T>, Pair<T>) -> Pair<T>, out: &mut [Pair<T>]| {
            for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
                *o = f(a, b);
            }
        };
        match map {
            TermMap::Product => {
                for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
                    *o = a.mul(b);
                }
            }
            TermMap::SquaredDifference => each(
                &|a, b| {
                    let d = a.sub(b);
                    d.mul(d)
                },
                out,
            ),
            TermMap::AbsDifference => each(&|a, b| abs(a.sub(b)), out),
            _ => out.copy_from_slice(x),
        }
    }

    #[cfg(target_arch = "x86_64")]
    mod x86 {
        use super::*;

        /// # Safety
        /// The CPU must run AVX2 and FMA (the caller's tier does).
        #[target_feature(enable = "avx2,fma")]
        pub(super) unsafe fn run2_avx2<T: PairFloat>(
            map: TermMap,
            x: &[Pair<T>],
            y: &[Pair<T>],
            out: &mut [Pair<T>],
        ) {
            body2(map, x, y, out)
        }

        /// # Safety
        /// The CPU must run AVX-512 F/BW/VL/DQ (the caller's tier does).
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")]
        pub(super) unsafe fn run2_avx512<T: PairFloat>(
            map: TermMap,
            x: &[Pair<T>],
            y: &[Pair<T>],
            out: &mut [Pair<T>],
        ) {
            body2(map, x, y, out)
        }
    }

    pub(super) fn run1<T: PairFloat>(map: TermMap, x: &[Pair<T>], out: &mut [Pair<T>], _: Tier) {
        body1(map, x, out)
    }

    pub(super) fn run2<T: PairFloat>(
        map: TermMap,
        x: &[Pair<T>],
        y: &[Pair<T>],
        out: &mut [Pair<T>],
        tier: Tier,
    ) {
        #[cfg(target_arch = "x86_64")]
        {
            if crate::tier::runs_avx512(tier) {
                // SAFETY: the tier was resolved against this CPU and runs AVX-512.
                return unsafe { x86::run2_avx512(map, x, y, out) };
            }
            if crate::tier::runs_avx2(tier) {
                // SAFETY: the tier was resolved against this CPU and runs AVX2.
                return unsafe { x86::run2_avx2(map, x, y, out) };
            }
        }
        let _ = tier;
        body2(map, x, y, out)
    }
}

macro_rules! map_plain {
    ($($t:ty),*) => {$(
        impl MapTerms for $t {
            fn map1(_: TermMap, x: &[Self], out: &mut [Self], _: Tier) {
                out.copy_from_slice(x);
            }
            fn map2(_: TermMap, x: &[Self], _: &[Self], out: &mut [Self], _: Tier) {
                out.copy_from_slice(x);
            }
        }
    )*};
}
map_plain!(
    i64,
    u64,
    num_complex::Complex<f32>,
    num_complex::Complex<f64>
);
