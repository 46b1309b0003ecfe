//! The register path of a program: where every node the program computes
//! is an `add`, `sub`, `mul`, `div`, `sqrt`, `fma`, `neg`, `abs`, `min` or
//! `max` of one float dtype (f32 or f64) on loads and constants of that
//! dtype, a tile runs all of them vector by vector with the intermediate
//! values in registers, instead of kernel by kernel through scratch slots.
//! These kinds round once (IEEE 754's basic operations and the fused
//! multiply-add) or are exact (`neg` flips the sign bit, `abs` clears it,
//! NaNs included, as the kernels do; `min` and `max` are the kernels'
//! IEEE 754-2019 minimum and maximum, the same selections and, for NaNs, the
//! same `a + b`), so the vector instructions give every element the bits
//! the kernels give (a NaN's sign and payload aside where an arithmetic
//! operation makes it, ARCHITECTURE.md §5.1). Only the program's outputs
//! are stored.
//!
//! Only the vector tiers take it (AVX2, AVX-512: [`crate::simd::RealReg`]);
//! the scalar tier runs the kernels.

use super::*;
use crate::simd::RealReg;
use crate::Kind;

/// Vectors per block: each node runs over this many before the next.
const BLOCK: usize = 8;
/// The most nodes a program on the register path may have (its registers
/// live in an array of this many vectors).
pub(super) const MAX_NODES: usize = 24;

/// One node's operation on registers (arguments as node numbers).
#[derive(Clone, Copy, Debug)]
pub(super) enum ROp {
    /// A load or a constant: its tile's values, or one value (uniform).
    Value,
    Add(usize, usize),
    Sub(usize, usize),
    Mul(usize, usize),
    Div(usize, usize),
    Sqrt(usize),
    Fma(usize, usize, usize),
    Neg(usize),
    Abs(usize),
    Min(usize, usize),
    Max(usize, usize),
}

impl ROp {
    /// The nodes this operation reads (the first `arity` of the array).
    pub(super) fn args(self) -> ([usize; 3], usize) {
        match self {
            ROp::Value => ([0; 3], 0),
            ROp::Sqrt(a) | ROp::Neg(a) | ROp::Abs(a) => ([a, 0, 0], 1),
            ROp::Add(a, b)
            | ROp::Sub(a, b)
            | ROp::Mul(a, b)
            | ROp::Div(a, b)
            | ROp::Min(a, b)
            | ROp::Max(a, b) => ([a, b, 0], 2),
            ROp::Fma(a, b, c) => ([a, b, c], 3),
        }
    }
}

/// A program on the register path.
#[derive(Clone, Debug)]
pub(crate) struct RegProgram {
    wide: bool,
    /// 512-bit registers (else 256-bit).
    pub(super) avx512: bool,
    ops: Vec<ROp>,
    /// Per node: whether its values are stored (an output computed here).
    stored: Vec<bool>,
    /// Per node: whether a later node reads it (its block is then kept).
    read: Vec<bool>,
    /// Per node: whether its values are read from its source (a load
    /// that is not uniform).
    direct: Vec<bool>,
    /// The program's machine code (`jit.rs`), where it has one.
    #[cfg(all(feature = "jit", target_arch = "x86_64", target_os = "linux"))]
    pub(super) jit: Option<std::sync::Arc<super::jit::Code>>,
}

impl RegProgram {
    /// The register form of `program` on `tier`, where it has one.
    /// `uniform[k]`: whether node k holds one value at every index (its
    /// value is then taken as it is, never computed or stored here).
    pub(super) fn of(tier: crate::Tier, program: &Program, uniform: &[bool]) -> Option<RegProgram> {
        #[cfg(target_arch = "x86_64")]
        // 256-bit registers where the CPU splits 512-bit operations (the
        // node-to-node values pass through memory; the same bits).
        let (avx2, avx512) = (
            crate::tier::runs_avx2(tier),
            crate::tier::runs_avx512(tier) && !crate::tier::splits_512(),
        );
        #[cfg(not(target_arch = "x86_64"))]
        let (avx2, avx512) = {
            let _ = tier;
            (false, false)
        };
        let nodes = program.nodes();
        if !(avx2 || avx512) || nodes.len() > MAX_NODES {
            return None;
        }
        let dt = nodes.first()?.dtype;
        if !matches!(dt, DType::F32 | DType::F64) {
            return None;
        }
        let mut ops = Vec::with_capacity(nodes.len());
        let mut computes = false;
        for (k, node) in nodes.iter().enumerate() {
            if node.dtype != dt {
                return None;
            }
            let op = match &node.op {
                Op::Load(_) | Op::Const(_) => ROp::Value,
                _ if uniform[k] => ROp::Value,
                Op::Kind(kind, args) => {
                    let a: Vec<usize> = args.iter().map(|a| a.0).collect();
                    if a.iter().any(|&i| nodes[i].dtype != dt) {
                        return None;
                    }
                    computes = true;
                    match (kind, a.as_slice()) {
                        (Kind::Add, &[x, y]) => ROp::Add(x, y),
                        (Kind::Sub, &[x, y]) => ROp::Sub(x, y),
                        (Kind::Mul, &[x, y]) => ROp::Mul(x, y),
                        (Kind::Div, &[x, y]) => ROp::Div(x, y),
                        (Kind::Sqrt, &[x]) => ROp::Sqrt(x),
                        (Kind::Fma, &[x, y, z]) => ROp::Fma(x, y, z),
                        (Kind::Neg, &[x]) => ROp::Neg(x),
                        (Kind::Abs, &[x]) => ROp::Abs(x),
                        (Kind::Min, &[x, y]) => ROp::Min(x, y),
                        (Kind::Max, &[x, y]) => ROp::Max(x, y),
                        _ => return None,
                    }
                }
                Op::Coord(_) | Op::Cast(..) => return None,
            };
            ops.push(op);
        }
        if !computes {
            return None;
        }
        let mut stored = vec![false; nodes.len()];
        for o in program.outputs() {
            stored[o.0] = !matches!(ops[o.0], ROp::Value);
        }
        let mut read = vec![false; nodes.len()];
        for op in &ops {
            let (args, arity) = op.args();
            for &a in &args[..arity] {
                read[a] = true;
            }
        }
        let direct = ops
            .iter()
            .zip(uniform)
            .map(|(op, &u)| matches!(op, ROp::Value) && !u)
            .collect();
        #[allow(unused_mut)]
        let mut rp = RegProgram {
            wide: dt == DType::F64,
            avx512,
            ops,
            stored,
            read,
            direct,
            #[cfg(all(feature = "jit", target_arch = "x86_64", target_os = "linux"))]
            jit: None,
        };
        #[cfg(all(feature = "jit", target_arch = "x86_64", target_os = "linux"))]
        {
            rp.jit = super::jit::code_for(&rp, uniform, avx512);
        }
        Some(rp)
    }

    /// Each node's operation.
    pub(super) fn ops(&self) -> &[ROp] {
        &self.ops
    }

    /// Whether node k's values are read from its source (see `direct`).
    pub(super) fn is_direct(&self, k: usize) -> bool {
        self.direct[k]
    }

    /// Whether node k's values are stored.
    pub(super) fn is_stored(&self, k: usize) -> bool {
        self.stored[k]
    }

    /// Whether the dtype is f64 (else f32).
    pub(super) fn is_wide(&self) -> bool {
        self.wide
    }

    /// Every node over `len` indices: the loads' and constants' values at
    /// `src[node]` (`len` consecutive values, or one where `uniform[node]`),
    /// each stored node's values to `dst[node]` (`len` consecutive values).
    ///
    /// # Safety
    /// The pointers must be as stated, valid for those reads and writes, the
    /// destinations overlapping no source (but exactly, as a node's own
    /// slot), and the tier this program was made for must run on this CPU.
    pub(super) unsafe fn run(
        &self,
        src: &[*const u8],
        uniform: &[bool],
        dst: &[*mut u8],
        len: usize,
    ) {
        // The whole steps of the machine code first, where there is one,
        // then the rest on the interpreter.
        #[cfg(all(feature = "jit", target_arch = "x86_64", target_os = "linux"))]
        if let Some(code) = &self.jit {
            let done = len - len % code.step;
            if done > 0 {
                // SAFETY: the code was made for this program, width and
                // dtype on this tier, which runs here; the pointers are as
                // this function's contract states, for `done ≤ len` values.
                unsafe { code.run(self, src, dst, done) };
            }
            if done == len {
                return;
            }
            let item = if self.wide { 8 } else { 4 };
            let n = self.ops.len();
            let mut s = [core::ptr::null::<u8>(); MAX_NODES];
            let mut d = [core::ptr::null_mut::<u8>(); MAX_NODES];
            for k in 0..n {
                s[k] = if self.direct[k] {
                    src[k].wrapping_add(done * item)
                } else {
                    src[k]
                };
                d[k] = if self.stored[k] {
                    dst[k].wrapping_add(done * item)
                } else {
                    dst[k]
                };
            }
            // SAFETY: the same sources and destinations from value `done`
            // on, `len − done` of them (this function's contract).
            unsafe { self.interpret(&s[..n], uniform, &d[..n], len - done) };
            return;
        }
        // SAFETY: this function's contract.
        unsafe { self.interpret(src, uniform, dst, len) }
    }

    /// [`RegProgram::run`] on the interpreter (no machine code).
    ///
    /// # Safety
    /// As [`RegProgram::run`].
    unsafe fn interpret(&self, src: &[*const u8], uniform: &[bool], dst: &[*mut u8], len: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::{__m256, __m256d, __m512, __m512d};
            /// # Safety
            /// As [`RegProgram::run`], on a CPU with AVX-512 F.
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe fn zmm<R: RealReg>(
                p: &RegProgram,
                s: &[*const u8],
                u: &[bool],
                d: &[*mut u8],
                n: usize,
            ) {
                // SAFETY: this function enables AVX-512 F, which the CPU
                // runs; the pointers are as `run` asks (its contract).
                unsafe { p.lanes::<R>(s, u, d, n) }
            }
            /// # Safety
            /// As [`RegProgram::run`], on a CPU with AVX2 and FMA.
            #[target_feature(enable = "avx2,fma")]
            unsafe fn ymm<R: RealReg>(
                p: &RegProgram,
                s: &[*const u8],
                u: &[bool],
                d: &[*mut u8],
                n: usize,
            ) {
                // SAFETY: this function enables AVX2 and FMA, which the CPU
                // runs; the pointers are as `run` asks (its contract).
                unsafe { p.lanes::<R>(s, u, d, n) }
            }
            // SAFETY: the program's tier runs on this CPU and the pointers
            // are as `run` asks (this function's contract); the register
            // types are those of the enabled features.
            unsafe {
                match (self.avx512, self.wide) {
                    (true, false) => zmm::<__m512>(self, src, uniform, dst, len),
                    (true, true) => zmm::<__m512d>(self, src, uniform, dst, len),
                    (false, false) => ymm::<__m256>(self, src, uniform, dst, len),
                    (false, true) => ymm::<__m256d>(self, src, uniform, dst, len),
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (src, uniform, dst, len);
    }

    /// [`RegProgram::run`] on registers `R` (whose lane type is the
    /// program's dtype): each node over a block of [`BLOCK`] vectors before
    /// the next node (independent operations side by side, one dispatch per
    /// block), the last block masked to the indices left.
    ///
    /// Operands are read where they lie: a load's values from its source
    /// (copied into the block's registers only in the masked last block), a
    /// uniform value from a block filled with it once, a computed node's
    /// from the block where it was written. A stored node is written to its
    /// destination, and to its block only where a later node reads it.
    ///
    /// The whole blocks run from a [`Step`] per computed node, resolved
    /// once per call (each operand as a base and whether it moves with the
    /// block): a block then costs one dispatch per node and no lookups
    /// (12% faster in cache than resolving every node in every block, on
    /// the bench's four-kind program on Zen 4). The last, partial block
    /// resolves as it goes.
    ///
    /// # Safety
    /// As [`RegProgram::run`]; the CPU runs `R`'s instruction set.
    #[inline(always)]
    unsafe fn lanes<R: RealReg>(
        &self,
        src: &[*const u8],
        uniform: &[bool],
        dst: &[*mut u8],
        len: usize,
    ) {
        let w = R::LANES;
        let count = self.ops.len();
        let (read, direct) = (&self.read, &self.direct);
        // SAFETY: R's instructions run (this function's contract). Every
        // load reads lanes i + j·w .. of a source holding `len` values (in
        // a whole block, all of them below `len`; in the last block masked
        // to those below `len`), or the one value of a uniform source, or
        // lanes of a node's block written earlier in this block (arguments
        // are earlier nodes; a uniform node's block is filled before the
        // loop); every store writes the same lanes of a stored node's
        // destination or lanes of the node's own block.
        unsafe {
            // Node k's values of the current block.
            let mut r = [[core::mem::MaybeUninit::<R>::uninit(); BLOCK]; MAX_NODES];
            for (k, op) in self.ops.iter().enumerate() {
                if matches!(op, ROp::Value) && uniform[k] {
                    let v = R::splat(src[k] as *const R::T);
                    for slot in r[k].iter_mut() {
                        slot.write(v);
                    }
                }
            }
            let base = r.as_mut_ptr() as *mut R;
            // The whole blocks: each computed node's operands and
            // destinations resolved once, as a base and whether it moves
            // with the block (a load read where it lies), so that a block
            // costs one dispatch per node and no lookups.
            let mut plan = [Step::<R> {
                op: ROp::Value,
                arg: [core::ptr::null(); 3],
                moves: [0; 3],
                mine: core::ptr::null_mut(),
                out: core::ptr::null_mut(),
            }; MAX_NODES];
            let mut steps = 0;
            for (k, &op) in self.ops.iter().enumerate() {
                if matches!(op, ROp::Value) {
                    continue;
                }
                let (args, arity) = op.args();
                let st = &mut plan[steps];
                st.op = op;
                for (m, &a) in args[..arity].iter().enumerate() {
                    if direct[a] {
                        st.arg[m] = src[a] as *const R::T;
                        st.moves[m] = usize::MAX;
                    } else {
                        st.arg[m] = base.add(a * BLOCK) as *const R::T;
                    }
                }
                if read[k] {
                    st.mine = base.add(k * BLOCK);
                }
                if self.stored[k] {
                    st.out = dst[k] as *mut R::T;
                }
                steps += 1;
            }
            let whole = len - len % (BLOCK * w);
            let mut i = 0;
            while i < whole {
                for st in &plan[..steps] {
                    st.run(i);
                }
                i += BLOCK * w;
            }
            while i < len {
                let tail = len - i < BLOCK * w;
                let mut masks = [R::first(w); BLOCK];
                if tail {
                    for (j, m) in masks.iter_mut().enumerate() {
                        *m = R::first((len - i).saturating_sub(j * w));
                    }
                }
                // Where node a's values of this block start, vector j at
                // `+ j·w` lanes.
                let at = |a: usize| -> *const R::T {
                    if direct[a] && !tail {
                        (src[a] as *const R::T).add(i)
                    } else {
                        base.add(a * BLOCK) as *const R::T
                    }
                };
                for k in 0..count {
                    let mine = base.add(k * BLOCK);
                    let out = if self.stored[k] {
                        (dst[k] as *mut R::T).add(i)
                    } else {
                        core::ptr::null_mut()
                    };
                    let sink = Sink {
                        mine,
                        keep: read[k],
                        out,
                        tail,
                        masks: &masks,
                    };
                    let ld = |p: *const R::T, j: usize| R::load(p.add(j * w));
                    match self.ops[k] {
                        ROp::Value => {
                            if tail && direct[k] {
                                let p = (src[k] as *const R::T).add(i);
                                for (j, &m) in masks.iter().enumerate() {
                                    mine.add(j).write(R::load_m(p.add(j * w), m));
                                }
                            }
                        }
                        ROp::Add(a, b) => {
                            let (pa, pb) = (at(a), at(b));
                            sink.fill(|j| R::add(ld(pa, j), ld(pb, j)));
                        }
                        ROp::Sub(a, b) => {
                            let (pa, pb) = (at(a), at(b));
                            sink.fill(|j| R::sub(ld(pa, j), ld(pb, j)));
                        }
                        ROp::Mul(a, b) => {
                            let (pa, pb) = (at(a), at(b));
                            sink.fill(|j| R::mul(ld(pa, j), ld(pb, j)));
                        }
                        ROp::Div(a, b) => {
                            let (pa, pb) = (at(a), at(b));
                            sink.fill(|j| R::div(ld(pa, j), ld(pb, j)));
                        }
                        ROp::Sqrt(a) => {
                            let pa = at(a);
                            sink.fill(|j| R::sqrt(ld(pa, j)));
                        }
                        ROp::Neg(a) => {
                            let pa = at(a);
                            sink.fill(|j| R::neg(ld(pa, j)));
                        }
                        ROp::Abs(a) => {
                            let pa = at(a);
                            sink.fill(|j| R::abs(ld(pa, j)));
                        }
                        ROp::Min(a, b) => {
                            let (pa, pb) = (at(a), at(b));
                            sink.fill(|j| R::min(ld(pa, j), ld(pb, j)));
                        }
                        ROp::Max(a, b) => {
                            let (pa, pb) = (at(a), at(b));
                            sink.fill(|j| R::max(ld(pa, j), ld(pb, j)));
                        }
                        ROp::Fma(a, b, c) => {
                            let (pa, pb, pc) = (at(a), at(b), at(c));
                            sink.fill(|j| R::fmadd(ld(pa, j), ld(pb, j), ld(pc, j)));
                        }
                    }
                }
                i += BLOCK * w;
            }
        }
    }
}

/// A computed node of a whole block, resolved (see [`RegProgram::lanes`]).
#[derive(Clone, Copy)]
struct Step<R: RealReg> {
    /// The operation (its node numbers are resolved into `arg`).
    op: ROp,
    /// Where each operand's vectors of the block at index 0 lie.
    arg: [*const R::T; 3],
    /// Per operand: `usize::MAX` where it moves with the block's index (a
    /// load read where it lies), 0 where it stays (a node's block).
    moves: [usize; 3],
    /// The node's block where a later node reads it, else null.
    mine: *mut R,
    /// Its destination (index 0) where it is stored, else null.
    out: *mut R::T,
}

impl<R: RealReg> Step<R> {
    /// The node over the whole block at index `i`.
    ///
    /// # Safety
    /// As the block loop of [`RegProgram::lanes`]: the block at `i` is
    /// whole, the operands' vectors lie where `arg` and `moves` say, the
    /// CPU runs `R`'s instructions.
    #[inline(always)]
    unsafe fn run(&self, i: usize) {
        let w = R::LANES;
        // SAFETY: the reads and writes this function's contract allows.
        unsafe {
            let p = [
                self.arg[0].add(i & self.moves[0]),
                self.arg[1].add(i & self.moves[1]),
                self.arg[2].add(i & self.moves[2]),
            ];
            let ld = |m: usize, j: usize| R::load(p[m].add(j * w));
            let mut v = [R::zero(); BLOCK];
            match self.op {
                ROp::Add(..) => v
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, o)| *o = R::add(ld(0, j), ld(1, j))),
                ROp::Sub(..) => v
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, o)| *o = R::sub(ld(0, j), ld(1, j))),
                ROp::Mul(..) => v
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, o)| *o = R::mul(ld(0, j), ld(1, j))),
                ROp::Div(..) => v
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, o)| *o = R::div(ld(0, j), ld(1, j))),
                ROp::Sqrt(..) => v
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, o)| *o = R::sqrt(ld(0, j))),
                ROp::Neg(..) => v
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, o)| *o = R::neg(ld(0, j))),
                ROp::Abs(..) => v
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, o)| *o = R::abs(ld(0, j))),
                ROp::Min(..) => v
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, o)| *o = R::min(ld(0, j), ld(1, j))),
                ROp::Max(..) => v
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, o)| *o = R::max(ld(0, j), ld(1, j))),
                ROp::Fma(..) => v
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, o)| *o = R::fmadd(ld(0, j), ld(1, j), ld(2, j))),
                // Loads and constants have no step.
                ROp::Value => {}
            }
            if !self.mine.is_null() {
                for (j, &x) in v.iter().enumerate() {
                    self.mine.add(j).write(x);
                }
            }
            if !self.out.is_null() {
                let out = self.out.add(i);
                for (j, &x) in v.iter().enumerate() {
                    x.store(out.add(j * w));
                }
            }
        }
    }
}

/// Where one node's vectors of a block go: its block (`keep`: a later
/// node reads it) and its destination (`out`, not null: stored), all
/// [`BLOCK`] of them, or in the last block (`tail`) each masked.
struct Sink<'m, R: RealReg> {
    mine: *mut R,
    keep: bool,
    out: *mut R::T,
    tail: bool,
    masks: &'m [R::Mask; BLOCK],
}

impl<R: RealReg> Sink<'_, R> {
    /// Vector j of the block is `f(j)`, for every j: one loop per case, so
    /// that the whole blocks' loops carry no test per vector.
    ///
    /// # Safety
    /// `mine` holds [`BLOCK`] vectors, `out` (where not null) [`BLOCK`]
    /// vectors' lanes (the masked lanes of them in the last block); `f`'s
    /// own reads are valid; the CPU runs `R`'s instructions.
    #[inline(always)]
    unsafe fn fill(&self, f: impl Fn(usize) -> R) {
        let w = R::LANES;
        // SAFETY: the writes this function's contract allows.
        unsafe {
            match (self.keep, self.out.is_null(), self.tail) {
                (true, true, _) => {
                    for j in 0..BLOCK {
                        self.mine.add(j).write(f(j));
                    }
                }
                (false, false, false) => {
                    for j in 0..BLOCK {
                        f(j).store(self.out.add(j * w));
                    }
                }
                (true, false, false) => {
                    for j in 0..BLOCK {
                        let v = f(j);
                        self.mine.add(j).write(v);
                        v.store(self.out.add(j * w));
                    }
                }
                (keep, unstored, _) => {
                    for j in 0..BLOCK {
                        let v = f(j);
                        if keep {
                            self.mine.add(j).write(v);
                        }
                        if !unstored {
                            v.store_m(self.out.add(j * w), self.masks[j]);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 512-bit form (which this CPU may not choose on its own) gives the
    /// 256-bit form's bits, on every length around the block.
    #[test]
    fn both_widths_agree() {
        let Some(tier) = crate::available_tiers()
            .into_iter()
            .find(|&t| crate::tier::runs_avx512(t))
        else {
            eprintln!("skipped on this CPU: no AVX-512 tier");
            return;
        };
        for (text, dt) in [
            (
                "t = x0 * x1 + x1; y0 = sqrt(t) - x0 / x1; y1 = fma(x0, x1, t)",
                DType::F32,
            ),
            (
                "t = x0 * x1 + x1; y0 = sqrt(t) - x0 / x1; y1 = fma(x0, x1, t)",
                DType::F64,
            ),
        ] {
            let program = Program::parse(text, &[dt, dt]).unwrap();
            let mut rp = RegProgram::of(tier, &program, &vec![false; program.nodes().len()])
                .expect("a register program");
            let item = dt.info().item_bytes;
            for n in [1usize, 15, 16, 17, 127, 128, 129, 300] {
                let a: Vec<u8> = (0..n * item).map(|i| (i * 37 % 251) as u8 | 0x30).collect();
                let b: Vec<u8> = (0..n * item).map(|i| (i * 91 % 241) as u8 | 0x31).collect();
                let nodes = program.nodes().len();
                let mut outs = [vec![0u8; nodes * n * item], vec![0u8; nodes * n * item]];
                for (o, wide) in outs.iter_mut().zip([false, true]) {
                    rp.avx512 = wide;
                    #[cfg(all(feature = "jit", target_arch = "x86_64", target_os = "linux"))]
                    {
                        rp.jit = super::super::jit::code_for(&rp, &vec![false; nodes], wide);
                    }
                    let mut src = vec![core::ptr::null::<u8>(); nodes];
                    src[0] = a.as_ptr();
                    src[1] = b.as_ptr();
                    let dst: Vec<*mut u8> =
                        (0..nodes).map(|k| o[k * n * item..].as_mut_ptr()).collect();
                    // SAFETY: the loads' pointers hold n values, each
                    // node's destination n values of its own; the tier runs.
                    unsafe { rp.run(&src, &vec![false; nodes], &dst, n) };
                }
                assert_eq!(outs[0], outs[1], "{text} {dt} n {n}");
            }
        }
    }
}
