//! Machine code for the register path (cargo feature `jit`, on by default;
//! x86-64 Linux): a program whose every computed node is an `add`, `sub`,
//! `mul`, `div`, `sqrt`, `fma`, `neg`, `abs`, `min` or `max` of f32 or f64
//! (a [`RegProgram`]'s shape) is
//! assembled once into a loop that keeps every intermediate value in a
//! vector register — the loop a compiler makes of the program written out
//! by hand — instead of running node by node through blocks in memory.
//!
//! **The same bits.** Each computed node is one instruction of the basic
//! operation it names (`vaddps`, `vsubps`, `vmulps`, `vdivps`, `vsqrtps`,
//! `vfmadd231ps` and their `pd` forms; a fused multiply-add is one rounding
//! of a·b + c whichever operand the instruction overwrites; `neg` and `abs`
//! an exclusive or and an and-not with the sign bits, `vpxor`/`vpandn`;
//! `min` and `max` the kernels' selections — `vminps`/`vmaxps`, then the
//! equal lanes' bits or-ed/and-ed and the unordered lanes' `a + b` blended
//! in: `vcmpps`, `vorps`/`vandps`, `vaddps`, `vblendvps` in 256-bit code;
//! in 512-bit code the compares write mask register k1, the bits are
//! `vpord`/`vpandd` and the blends `vblendmps` under k1), in round to
//! nearest as every tier runs, so each element gets the bits the kernels
//! give it (a NaN's sign and payload aside, as on the register path,
//! ARCHITECTURE.md §5.1). The loads, stores and broadcasts move values
//! unchanged.
//!
//! **The code.** 256-bit registers (VEX encoding) on the AVX2 tier and
//! where the CPU splits 512-bit operations, 512-bit registers (EVEX
//! encoding, registers 0–15 only) on the other AVX-512 hosts, as the
//! register path chooses. Uniform values are broadcast into registers before
//! the loop; each stream (a load's source, an output's destination) is a base
//! register and every access `[base + rsi + disp32]`, `rsi` running from
//! −bytes up to 0. A step is [`UNROLL`] vectors, each one computed node
//! after the other with registers allocated by liveness (a register is
//! reused once its node's last reader has run). Where a program needs more
//! than 16 vector registers or 13 streams, or the memory cannot be made
//! executable, there is no code and the register path's interpreter runs.
//! The indices past the last whole step run on the interpreter.
//!
//! **The memory.** Each code lives in its own mapping, written while
//! readable and writable and then made readable and executable (never both
//! writable and executable); a process keeps at most [`CACHE_CAP`] codes by
//! shape (the oldest dropped first, its mapping released once no plan holds
//! it). `TESSERA_MAP_JIT=0` in the environment turns the code off (read
//! once per process).

use super::registers::{ROp, RegProgram};
use std::sync::{Arc, Mutex, OnceLock};

/// Vectors per step of the loop.
const UNROLL: usize = 4;
/// The most codes the process keeps.
const CACHE_CAP: usize = 64;

/// General registers a stream may take (x86-64 numbers: rax, rcx, rdx,
/// r8–r11, then the callee-saved rbx, rbp, r12–r15, which the code saves);
/// rsi is the offset and rdi the argument array.
const STREAM_GPRS: [u8; 13] = [0, 1, 2, 8, 9, 10, 11, 3, 5, 12, 13, 14, 15];
const RSI: u8 = 6;
const RDI: u8 = 7;
/// The mask register the 512-bit `min` and `max` compare into (mask
/// registers are not preserved across calls).
const K1: u8 = 1;

/// The sign bit of an f32 (the first four bytes) and of an f64 (the next
/// eight), which the code broadcasts for `neg` and `abs`.
static SIGNS: [u32; 4] = [0x8000_0000, 0, 0, 0x8000_0000];

/// A program's loop in executable memory.
pub(crate) struct Code {
    ptr: *mut u8,
    len: usize,
    /// Elements per step: the code runs over a multiple of this.
    pub(super) step: usize,
    /// The bytes of one element.
    item: usize,
}

impl core::fmt::Debug for Code {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Code({} bytes, {} elements a step)", self.len, self.step)
    }
}

// SAFETY: after `Code::new` the mapping is never written again and is only
// executed (by `run`, whose callers meet its contract) and released once,
// by `drop`; nothing in it depends on the thread.
unsafe impl Send for Code {}
// SAFETY: as for `Send`: shared use only executes immutable code.
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are the mapping `Code::new` made, released
        // once, here; no plan runs it any more (this is its last owner).
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

impl Code {
    /// Executable memory holding `bytes`, or `None` where the system
    /// refuses it.
    fn new(bytes: &[u8], step: usize, item: usize) -> Option<Code> {
        let len = bytes.len().max(1);
        // SAFETY: a fresh anonymous private mapping (no address given, no
        // file); the result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        let code = Code {
            ptr: ptr.cast(),
            len,
            step,
            item,
        };
        // SAFETY: the mapping is `len ≥ bytes.len()` writable bytes, and
        // `bytes` lies elsewhere; then the mapping, whole, becomes
        // read-and-execute (a failure drops `code`, which unmaps it).
        unsafe {
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), code.ptr, bytes.len());
            if libc::mprotect(ptr, len, libc::PROT_READ | libc::PROT_EXEC) != 0 {
                return None;
            }
        }
        Some(code)
    }

    /// The loop over `n` elements (a positive multiple of
    /// [`step`](Code::step)): `args[k]` is node k's pointer as the loop
    /// reads it (see [`RegProgram::run`]), and the last argument [`SIGNS`].
    ///
    /// # Safety
    /// The code was compiled for `rp` (its shape, width and dtype); the
    /// pointers are as [`RegProgram::run`] states for `n` elements; the CPU
    /// runs the code's instructions (AVX2 and FMA, and AVX-512 F for the
    /// 512-bit form).
    pub(super) unsafe fn run(&self, rp: &RegProgram, src: &[*const u8], dst: &[*mut u8], n: usize) {
        let bytes = n * self.item;
        let mut args = [core::ptr::null::<u8>(); super::registers::MAX_NODES + 1];
        args[super::registers::MAX_NODES] = SIGNS.as_ptr() as *const u8;
        for (k, op) in rp.ops().iter().enumerate() {
            args[k] = if matches!(op, ROp::Value) {
                if rp.is_direct(k) {
                    src[k].wrapping_add(bytes)
                } else {
                    src[k]
                }
            } else if rp.is_stored(k) {
                dst[k].wrapping_add(bytes) as *const u8
            } else {
                core::ptr::null()
            };
        }
        // SAFETY: the mapping holds a function of this signature that
        // `assemble` wrote for `rp`; it reads `args[k]` for the nodes it
        // uses (and the last for SIGNS' sign bits), and the elements in [base − bytes, base) of each stream,
        // which the caller's pointers cover (`n` elements each).
        unsafe {
            let f: unsafe extern "sysv64" fn(*const *const u8, isize) =
                core::mem::transmute(self.ptr);
            f(args.as_ptr(), -(bytes as isize));
        }
    }
}

/// Whether the environment leaves the code on (`TESSERA_MAP_JIT` is not
/// `0`), read once.
fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("TESSERA_MAP_JIT").map_or(true, |v| v.trim() != "0"))
}

/// The code of `rp` (`zmm`: 512-bit registers), from the process's cache
/// or assembled now; `None` where it has none (see the module's doc).
pub(super) fn code_for(rp: &RegProgram, uniform: &[bool], zmm: bool) -> Option<Arc<Code>> {
    if !enabled() {
        return None;
    }
    let key = key_of(rp, uniform, zmm);
    static CACHE: Mutex<Vec<(Vec<u32>, Arc<Code>)>> = Mutex::new(Vec::new());
    if let Ok(cache) = CACHE.lock() {
        if let Some((_, c)) = cache.iter().find(|(k, _)| *k == key) {
            return Some(c.clone());
        }
    }
    let (bytes, step, item) = assemble(rp, uniform, zmm)?;
    let code = Arc::new(Code::new(&bytes, step, item)?);
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= CACHE_CAP {
            cache.remove(0);
        }
        cache.push((key, code.clone()));
    }
    Some(code)
}

/// What fixes a code: the width, the dtype, and per node its operation,
/// arguments and roles.
fn key_of(rp: &RegProgram, uniform: &[bool], zmm: bool) -> Vec<u32> {
    let mut key = vec![zmm as u32, rp.is_wide() as u32];
    for (k, &op) in rp.ops().iter().enumerate() {
        let (args, arity) = op.args();
        let tag = match op {
            ROp::Value => 0,
            ROp::Add(..) => 1,
            ROp::Sub(..) => 2,
            ROp::Mul(..) => 3,
            ROp::Div(..) => 4,
            ROp::Sqrt(..) => 5,
            ROp::Fma(..) => 6,
            ROp::Neg(..) => 7,
            ROp::Abs(..) => 8,
            ROp::Min(..) => 9,
            ROp::Max(..) => 10,
        };
        let roles = rp.is_stored(k) as u32 | (rp.is_direct(k) as u32) << 1;
        key.push(tag | roles << 4 | (uniform[k] as u32) << 6 | (arity as u32) << 8);
        key.extend(args[..arity].iter().map(|&a| a as u32));
    }
    key
}

/// A vector instruction's opcode: its map (1: 0F, 2: 0F38), its `pp` (0:
/// none, 1: 66), its W bit in the VEX and the EVEX forms, the opcode byte.
#[derive(Clone, Copy)]
struct VOp {
    map: u8,
    pp: u8,
    w_vex: bool,
    w_evex: bool,
    op: u8,
}

/// The operand in ModRM's r/m field: a vector register, or memory at
/// `[base + index + disp]` (general registers; no index where `None`).
#[derive(Clone, Copy)]
enum Rm {
    Reg(u8),
    Mem {
        base: u8,
        index: Option<u8>,
        disp: i32,
    },
}

/// An x86-64 byte sink with the few encodings the loop needs.
struct Asm {
    b: Vec<u8>,
    zmm: bool,
}

impl Asm {
    /// `op reg, vvvv, rm` in the VEX (256-bit) or EVEX (512-bit) form;
    /// registers 0–15.
    fn vec(&mut self, o: VOp, reg: u8, vvvv: u8, rm: Rm) {
        let (x, bb) = match rm {
            Rm::Reg(r) => (0, r >> 3),
            Rm::Mem { base, index, .. } => (index.map_or(0, |i| i >> 3), base >> 3),
        };
        let r = reg >> 3;
        let inv = |bit: u8| !bit & 1;
        if self.zmm {
            self.b.push(0x62);
            self.b
                .push(inv(r) << 7 | inv(x) << 6 | inv(bb) << 5 | 1 << 4 | o.map);
            self.b
                .push((o.w_evex as u8) << 7 | (!vvvv & 15) << 3 | 1 << 2 | o.pp);
            // z = 0, L'L = 10 (512 bits), b = 0, V' = 1 (inverted 0), no mask.
            self.b.push(0x48);
        } else {
            self.b.push(0xC4);
            self.b
                .push(inv(r) << 7 | inv(x) << 6 | inv(bb) << 5 | o.map);
            self.b
                .push((o.w_vex as u8) << 7 | (!vvvv & 15) << 3 | 1 << 2 | o.pp);
        }
        self.b.push(o.op);
        self.modrm(reg, rm);
    }

    /// [`Asm::vec`] in the EVEX form under mask register `k` (1–7, merging:
    /// the lanes whose mask bit is clear keep `reg`'s value).
    fn vec_masked(&mut self, o: VOp, reg: u8, vvvv: u8, rm: Rm, k: u8) {
        debug_assert!(self.zmm && (1..8).contains(&k));
        let start = self.b.len();
        self.vec(o, reg, vvvv, rm);
        // The fourth byte of the EVEX prefix: its low three bits (aaa) name
        // the mask.
        self.b[start + 3] |= k;
    }

    /// ModRM (and SIB and a 32-bit displacement for memory).
    fn modrm(&mut self, reg: u8, rm: Rm) {
        match rm {
            Rm::Reg(x) => self.b.push(0xC0 | (reg & 7) << 3 | (x & 7)),
            Rm::Mem { base, index, disp } => {
                self.b.push(0x80 | (reg & 7) << 3 | 4);
                self.b.push((index.map_or(4, |i| i & 7)) << 3 | (base & 7));
                self.b.extend_from_slice(&disp.to_le_bytes());
            }
        }
    }

    /// `mov r64, [rdi + disp]`.
    fn load_arg(&mut self, r: u8, disp: i32) {
        self.b.push(0x48 | (r >> 3) << 2);
        self.b.push(0x8B);
        self.modrm(
            r,
            Rm::Mem {
                base: RDI,
                index: None,
                disp,
            },
        );
    }

    fn push(&mut self, r: u8) {
        if r >= 8 {
            self.b.push(0x41);
        }
        self.b.push(0x50 | (r & 7));
    }

    fn pop(&mut self, r: u8) {
        if r >= 8 {
            self.b.push(0x41);
        }
        self.b.push(0x58 | (r & 7));
    }
}

/// The opcodes of the loop, for f32 (`wide` false) or f64.
struct Ops {
    add: VOp,
    sub: VOp,
    mul: VOp,
    div: VOp,
    sqrt: VOp,
    fma231: VOp,
    loadu: VOp,
    storeu: VOp,
    mova: VOp,
    bcast: VOp,
    /// vpxor (VEX), vpxord/q (EVEX): `neg` with the sign bits.
    xor: VOp,
    /// vpandn (VEX), vpandnd/q (EVEX): `abs`, the sign bits' complement and
    /// the value.
    andn: VOp,
    /// The operations of `min` and `max` in 256-bit code: vminps/pd, vmaxps/pd,
    /// vorps/pd, vandps/pd, vcmpps/pd (with an immediate), vblendvps/pd
    /// (with a fourth register in the immediate).
    vmin: VOp,
    vmax: VOp,
    or: VOp,
    and: VOp,
    cmp: VOp,
    blendv: VOp,
    /// Their 512-bit forms: vpord/q and vpandd/q (AVX-512 F; the compare is
    /// `cmp` with a mask register as its destination), vblendmps/pd under a
    /// mask.
    or_evex: VOp,
    and_evex: VOp,
    blendm: VOp,
}

impl Ops {
    fn new(wide: bool) -> Ops {
        let pp = wide as u8;
        let basic = |op: u8| VOp {
            map: 1,
            pp,
            w_vex: false,
            w_evex: wide,
            op,
        };
        Ops {
            add: basic(0x58),
            sub: basic(0x5C),
            mul: basic(0x59),
            div: basic(0x5E),
            sqrt: basic(0x51),
            fma231: VOp {
                map: 2,
                pp: 1,
                w_vex: wide,
                w_evex: wide,
                op: 0xB8,
            },
            loadu: basic(0x10),
            storeu: basic(0x11),
            mova: basic(0x28),
            // vbroadcastss (18, W0), vbroadcastsd (19: VEX W0, EVEX W1).
            bcast: VOp {
                map: 2,
                pp: 1,
                w_vex: false,
                w_evex: wide,
                op: if wide { 0x19 } else { 0x18 },
            },
            xor: VOp {
                map: 1,
                pp: 1,
                w_vex: false,
                w_evex: wide,
                op: 0xEF,
            },
            andn: VOp {
                map: 1,
                pp: 1,
                w_vex: false,
                w_evex: wide,
                op: 0xDF,
            },
            vmin: basic(0x5D),
            vmax: basic(0x5F),
            or: basic(0x56),
            and: basic(0x54),
            cmp: basic(0xC2),
            blendv: VOp {
                map: 3,
                pp: 1,
                w_vex: false,
                w_evex: false,
                op: if wide { 0x4B } else { 0x4A },
            },
            or_evex: VOp {
                map: 1,
                pp: 1,
                w_vex: false,
                w_evex: wide,
                op: 0xEB,
            },
            and_evex: VOp {
                map: 1,
                pp: 1,
                w_vex: false,
                w_evex: wide,
                op: 0xDB,
            },
            blendm: VOp {
                map: 2,
                pp: 1,
                w_vex: false,
                w_evex: wide,
                op: 0x65,
            },
        }
    }
}

/// The free vector registers 0–15.
struct Pool(u16);

impl Pool {
    fn take(&mut self) -> Option<u8> {
        (self.0 != 0).then(|| {
            let r = self.0.trailing_zeros() as u8;
            self.0 &= !(1 << r);
            r
        })
    }
    fn give(&mut self, r: u8) {
        self.0 |= 1 << r;
    }
}

/// The code of `rp` (see the module's doc): its bytes, the elements per
/// step and the bytes per element; `None` where registers run out.
fn assemble(rp: &RegProgram, uniform: &[bool], zmm: bool) -> Option<(Vec<u8>, usize, usize)> {
    let ops = rp.ops();
    let n = ops.len();
    let item = if rp.is_wide() { 8 } else { 4 };
    let vb = if zmm { 64 } else { 32 };
    let op = Ops::new(rp.is_wide());
    // How many times each node is read (an argument counted per slot).
    let mut uses = vec![0usize; n];
    for o in ops {
        let (args, arity) = o.args();
        for &a in &args[..arity] {
            uses[a] += 1;
        }
    }
    let mut a = Asm {
        b: Vec::with_capacity(1024),
        zmm,
    };
    // Streams: each read load and each stored node, a general register.
    let mut gpr = vec![None::<u8>; n];
    let mut streams = 0;
    for (k, o) in ops.iter().enumerate() {
        let stream = match o {
            ROp::Value => !uniform[k] && uses[k] > 0,
            _ => rp.is_stored(k),
        };
        if stream {
            gpr[k] = Some(*STREAM_GPRS.get(streams)?);
            streams += 1;
        }
    }
    let saved: Vec<u8> = STREAM_GPRS[..streams]
        .iter()
        .copied()
        .filter(|r| [3, 5, 12, 13, 14, 15].contains(r))
        .collect();
    for &r in &saved {
        a.push(r);
    }
    // Uniform values read by the loop: broadcast once into registers that
    // stay for the whole loop (rax as the pointer, before it is a stream).
    let mut pool = Pool(0xFFFF);
    let mut fixed = vec![None::<u8>; n];
    for (k, o) in ops.iter().enumerate() {
        if matches!(o, ROp::Value) && uniform[k] && uses[k] > 0 {
            let v = pool.take()?;
            a.load_arg(0, 8 * k as i32);
            a.vec(
                op.bcast,
                v,
                0,
                Rm::Mem {
                    base: 0,
                    index: None,
                    disp: 0,
                },
            );
            fixed[k] = Some(v);
        }
    }
    // The sign bits in every lane, for `neg` and `abs`: broadcast from the
    // argument after the nodes' ([`SIGNS`]).
    let signs = ops.iter().any(|o| matches!(o, ROp::Neg(..) | ROp::Abs(..)));
    let sign = if signs {
        let v = pool.take()?;
        a.load_arg(0, 8 * super::registers::MAX_NODES as i32);
        a.vec(
            op.bcast,
            v,
            0,
            Rm::Mem {
                base: 0,
                index: None,
                disp: if rp.is_wide() { 8 } else { 0 },
            },
        );
        v
    } else {
        0
    };
    for (k, g) in gpr.iter().enumerate() {
        if let Some(g) = *g {
            a.load_arg(g, 8 * k as i32);
        }
    }
    let top = a.b.len();
    for j in 0..UNROLL {
        let mem = |k: usize| Rm::Mem {
            base: gpr[k].expect("a stream"),
            index: Some(RSI),
            disp: (j * vb) as i32,
        };
        let mut reg = fixed.clone();
        let mut left = uses.clone();
        for (k, &o) in ops.iter().enumerate() {
            if matches!(o, ROp::Value) {
                if gpr[k].is_some() {
                    let v = pool.take()?;
                    a.vec(op.loadu, v, 0, mem(k));
                    reg[k] = Some(v);
                }
                continue;
            }
            let (args, arity) = o.args();
            let r: Vec<u8> = args[..arity]
                .iter()
                .map(|&x| reg[x])
                .collect::<Option<_>>()?;
            // The arguments whose last reader this node is free their
            // registers (uniform ones stay).
            let mut dying = Vec::new();
            for &x in &args[..arity] {
                left[x] -= 1;
                if left[x] == 0 && fixed[x].is_none() {
                    if let Some(v) = reg[x] {
                        if !dying.contains(&v) {
                            dying.push(v);
                        }
                    }
                }
            }
            let d = match o {
                ROp::Fma(..) if dying.contains(&r[2]) => {
                    // The addend's register takes the result.
                    for &v in &dying {
                        if v != r[2] {
                            pool.give(v);
                        }
                    }
                    a.vec(op.fma231, r[2], r[0], Rm::Reg(r[1]));
                    r[2]
                }
                ROp::Fma(..) => {
                    // A register no argument holds, the addend copied in.
                    let d = pool.take()?;
                    for &v in &dying {
                        pool.give(v);
                    }
                    a.vec(op.mova, d, 0, Rm::Reg(r[2]));
                    a.vec(op.fma231, d, r[0], Rm::Reg(r[1]));
                    d
                }
                ROp::Min(..) | ROp::Max(..) if zmm => {
                    // As below, the compares into mask register k1 and the
                    // blends under it: two registers no argument holds.
                    let (t, x) = (pool.take()?, pool.take()?);
                    let min = matches!(o, ROp::Min(..));
                    let (sel, bits) = if min {
                        (op.vmin, op.or_evex)
                    } else {
                        (op.vmax, op.and_evex)
                    };
                    a.vec(sel, t, r[0], Rm::Reg(r[1]));
                    a.vec(op.cmp, K1, r[0], Rm::Reg(r[1]));
                    a.b.push(0); // EQ_OQ
                    a.vec(bits, x, r[0], Rm::Reg(r[1]));
                    a.vec_masked(op.blendm, t, t, Rm::Reg(x), K1);
                    a.vec(op.cmp, K1, r[0], Rm::Reg(r[1]));
                    a.b.push(3); // UNORD_Q
                    a.vec(op.add, x, r[0], Rm::Reg(r[1]));
                    a.vec_masked(op.blendm, t, t, Rm::Reg(x), K1);
                    pool.give(x);
                    for &v in &dying {
                        pool.give(v);
                    }
                    t
                }
                ROp::Min(..) | ROp::Max(..) => {
                    // t = min(a, b); where a = b, a | b (max: a & b); where
                    // either is NaN, a + b: the kernels' selections. Three
                    // registers no argument holds, taken before the dying
                    // arguments are given back (they are read to the end).
                    let (t, m, x) = (pool.take()?, pool.take()?, pool.take()?);
                    let min = matches!(o, ROp::Min(..));
                    let (sel, bits) = if min {
                        (op.vmin, op.or)
                    } else {
                        (op.vmax, op.and)
                    };
                    a.vec(sel, t, r[0], Rm::Reg(r[1]));
                    a.vec(op.cmp, m, r[0], Rm::Reg(r[1]));
                    a.b.push(0); // EQ_OQ
                    a.vec(bits, x, r[0], Rm::Reg(r[1]));
                    a.vec(op.blendv, t, t, Rm::Reg(x));
                    a.b.push(m << 4);
                    a.vec(op.cmp, m, r[0], Rm::Reg(r[1]));
                    a.b.push(3); // UNORD_Q
                    a.vec(op.add, x, r[0], Rm::Reg(r[1]));
                    a.vec(op.blendv, t, t, Rm::Reg(x));
                    a.b.push(m << 4);
                    pool.give(m);
                    pool.give(x);
                    for &v in &dying {
                        pool.give(v);
                    }
                    t
                }
                _ => {
                    // Three-operand forms read before they write: the
                    // result may take a dying argument's register.
                    for &v in &dying {
                        pool.give(v);
                    }
                    let d = pool.take()?;
                    match o {
                        ROp::Add(..) => a.vec(op.add, d, r[0], Rm::Reg(r[1])),
                        ROp::Sub(..) => a.vec(op.sub, d, r[0], Rm::Reg(r[1])),
                        ROp::Mul(..) => a.vec(op.mul, d, r[0], Rm::Reg(r[1])),
                        ROp::Div(..) => a.vec(op.div, d, r[0], Rm::Reg(r[1])),
                        ROp::Neg(..) => a.vec(op.xor, d, sign, Rm::Reg(r[0])),
                        ROp::Abs(..) => a.vec(op.andn, d, sign, Rm::Reg(r[0])),
                        _ => a.vec(op.sqrt, d, 0, Rm::Reg(r[0])),
                    }
                    d
                }
            };
            reg[k] = Some(d);
            if rp.is_stored(k) {
                a.vec(op.storeu, d, 0, mem(k));
            }
            if uses[k] == 0 {
                pool.give(d);
            }
        }
        // Every register of this vector was given back at its node's last
        // reader (or at once, where nothing reads it); the uniform values'
        // and the sign bits' stay.
        debug_assert_eq!(
            pool.0.count_ones() as usize,
            16 - fixed.iter().flatten().count() - signs as usize
        );
    }
    // add rsi, UNROLL·vb; jnz top
    a.b.extend_from_slice(&[0x48, 0x81, 0xC6]);
    a.b.extend_from_slice(&((UNROLL * vb) as i32).to_le_bytes());
    let rel = top as i64 - (a.b.len() as i64 + 6);
    a.b.extend_from_slice(&[0x0F, 0x85]);
    a.b.extend_from_slice(&(rel as i32).to_le_bytes());
    // vzeroupper, restore, ret.
    a.b.extend_from_slice(&[0xC5, 0xF8, 0x77]);
    for &r in saved.iter().rev() {
        a.pop(r);
    }
    a.b.push(0xC3);
    Some((a.b, UNROLL * vb / item, item))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::map::program::{Op, Program, Scalar};
    use crate::DType;

    fn vex() -> Asm {
        Asm {
            b: Vec::new(),
            zmm: false,
        }
    }

    /// Encodings worked out by hand from the instruction set reference
    /// (VEX and EVEX prefix fields, ModRM, SIB).
    #[test]
    fn encodes_as_the_reference_says() {
        let ps = Ops::new(false);
        let pd = Ops::new(true);
        type Emit<'a> = Box<dyn Fn(&mut Asm) + 'a>;
        let cases: Vec<(Emit, bool, Vec<u8>)> = vec![
            // vaddps ymm2, ymm1, ymm3
            (
                Box::new(|a| a.vec(ps.add, 2, 1, Rm::Reg(3))),
                false,
                vec![0xC4, 0xE1, 0x74, 0x58, 0xD3],
            ),
            // vaddps zmm2, zmm1, zmm3
            (
                Box::new(|a| a.vec(ps.add, 2, 1, Rm::Reg(3))),
                true,
                vec![0x62, 0xF1, 0x74, 0x48, 0x58, 0xD3],
            ),
            // vaddpd zmm2, zmm1, zmm3 (EVEX.W1)
            (
                Box::new(|a| a.vec(pd.add, 2, 1, Rm::Reg(3))),
                true,
                vec![0x62, 0xF1, 0xF5, 0x48, 0x58, 0xD3],
            ),
            // vfmadd231ps ymm0, ymm1, ymm2
            (
                Box::new(|a| a.vec(ps.fma231, 0, 1, Rm::Reg(2))),
                false,
                vec![0xC4, 0xE2, 0x75, 0xB8, 0xC2],
            ),
            // vfmadd231pd ymm12, ymm9, ymm15
            (
                Box::new(|a| a.vec(pd.fma231, 12, 9, Rm::Reg(15))),
                false,
                vec![0xC4, 0x42, 0xB5, 0xB8, 0xE7],
            ),
            // vsqrtps ymm1, ymm9
            (
                Box::new(|a| a.vec(ps.sqrt, 1, 0, Rm::Reg(9))),
                false,
                vec![0xC4, 0xC1, 0x7C, 0x51, 0xC9],
            ),
            // vmovups ymm0, [rax + rsi + 0x20]
            (
                Box::new(|a| {
                    a.vec(
                        ps.loadu,
                        0,
                        0,
                        Rm::Mem {
                            base: 0,
                            index: Some(RSI),
                            disp: 0x20,
                        },
                    )
                }),
                false,
                vec![0xC4, 0xE1, 0x7C, 0x10, 0x84, 0x30, 0x20, 0, 0, 0],
            ),
            // vmovupd [r13 + rsi + 0x40], zmm3
            (
                Box::new(|a| {
                    a.vec(
                        pd.storeu,
                        3,
                        0,
                        Rm::Mem {
                            base: 13,
                            index: Some(RSI),
                            disp: 0x40,
                        },
                    )
                }),
                true,
                vec![0x62, 0xD1, 0xFD, 0x48, 0x11, 0x9C, 0x35, 0x40, 0, 0, 0],
            ),
            // vbroadcastsd ymm4, [rax] (VEX.W0 19)
            (
                Box::new(|a| {
                    a.vec(
                        pd.bcast,
                        4,
                        0,
                        Rm::Mem {
                            base: 0,
                            index: None,
                            disp: 0,
                        },
                    )
                }),
                false,
                vec![0xC4, 0xE2, 0x7D, 0x19, 0xA4, 0x20, 0, 0, 0, 0],
            ),
            // vpxord zmm5, zmm3, zmm7
            (
                Box::new(|a| a.vec(ps.xor, 5, 3, Rm::Reg(7))),
                true,
                vec![0x62, 0xF1, 0x65, 0x48, 0xEF, 0xEF],
            ),
            // vpandn ymm5, ymm3, ymm7
            (
                Box::new(|a| a.vec(pd.andn, 5, 3, Rm::Reg(7))),
                false,
                vec![0xC4, 0xE1, 0x65, 0xDF, 0xEF],
            ),
            // vcmpps ymm2, ymm1, ymm3, 0
            (
                Box::new(|a| {
                    a.vec(ps.cmp, 2, 1, Rm::Reg(3));
                    a.b.push(0);
                }),
                false,
                vec![0xC4, 0xE1, 0x74, 0xC2, 0xD3, 0x00],
            ),
            // vcmpps k1, zmm2, zmm3, 0
            (
                Box::new(|a| {
                    a.vec(ps.cmp, K1, 2, Rm::Reg(3));
                    a.b.push(0);
                }),
                true,
                vec![0x62, 0xF1, 0x6C, 0x48, 0xC2, 0xCB, 0x00],
            ),
            // vcmppd k1, zmm10, zmm3, 3
            (
                Box::new(|a| {
                    a.vec(pd.cmp, K1, 10, Rm::Reg(3));
                    a.b.push(3);
                }),
                true,
                vec![0x62, 0xF1, 0xAD, 0x48, 0xC2, 0xCB, 0x03],
            ),
            // vblendmps zmm1 {k1}, zmm1, zmm4
            (
                Box::new(|a| a.vec_masked(ps.blendm, 1, 1, Rm::Reg(4), K1)),
                true,
                vec![0x62, 0xF2, 0x75, 0x49, 0x65, 0xCC],
            ),
            // vblendmpd zmm9 {k1}, zmm9, zmm12
            (
                Box::new(|a| a.vec_masked(pd.blendm, 9, 9, Rm::Reg(12), K1)),
                true,
                vec![0x62, 0x52, 0xB5, 0x49, 0x65, 0xCC],
            ),
            // vpord zmm5, zmm2, zmm3; vpandq zmm5, zmm2, zmm3
            (
                Box::new(|a| a.vec(ps.or_evex, 5, 2, Rm::Reg(3))),
                true,
                vec![0x62, 0xF1, 0x6D, 0x48, 0xEB, 0xEB],
            ),
            (
                Box::new(|a| a.vec(pd.and_evex, 5, 2, Rm::Reg(3))),
                true,
                vec![0x62, 0xF1, 0xED, 0x48, 0xDB, 0xEB],
            ),
            // vblendvps ymm1, ymm1, ymm4, ymm2
            (
                Box::new(|a| {
                    a.vec(ps.blendv, 1, 1, Rm::Reg(4));
                    a.b.push(2 << 4);
                }),
                false,
                vec![0xC4, 0xE3, 0x75, 0x4A, 0xCC, 0x20],
            ),
            // mov r11, [rdi + 16]
            (
                Box::new(|a| a.load_arg(11, 16)),
                false,
                vec![0x4C, 0x8B, 0x9C, 0x27, 0x10, 0, 0, 0],
            ),
        ];
        for (k, (emit, zmm, want)) in cases.iter().enumerate() {
            let mut a = vex();
            a.zmm = *zmm;
            emit(&mut a);
            assert_eq!(&a.b, want, "case {k}");
        }
    }

    /// Inputs' values: mostly ordinary numbers, some signed zeros,
    /// infinities, subnormals and huge values.
    fn value(i: usize, input: usize) -> f64 {
        let h = (i as u64 + 1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add((input as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
        match h % 29 {
            0 => 0.0,
            1 => -0.0,
            2 => f64::INFINITY,
            3 => 1e-310,
            4 => -3e38,
            5 => f64::NAN,
            6 => 1.5,
            _ => ((h >> 11) as f64 / (1u64 << 53) as f64 - 0.3) * 7.0,
        }
    }

    /// The machine code of programs of every shape the assembler meets (a
    /// factor or addend dying at a fused multiply-add or not, an argument
    /// read twice, uniform values, many values live at once, two outputs)
    /// gives the interpreter's bits, f32 and f64, both widths, lengths
    /// around the step; and each of these programs has code.
    #[test]
    fn code_gives_the_interpreters_bits() {
        let Some(tier) = crate::available_tiers()
            .into_iter()
            .find(|&t| crate::tier::runs_avx2(t))
        else {
            eprintln!("skipped on this CPU: no AVX2 tier");
            return;
        };
        let wides: &[bool] = if crate::available_tiers()
            .into_iter()
            .any(crate::tier::runs_avx512)
        {
            &[false, true]
        } else {
            eprintln!("512-bit code skipped on this CPU: no AVX-512 tier");
            &[false]
        };
        let texts = [
            "y0 = sqrt(x0 * x1 + x1) - x0",
            "y0 = fma(x0, x1, x0)",
            "y0 = fma(x0, x1, x2) + x2",
            "y0 = fma(x0 * x1, x1, 2.5)",
            "y0 = fma(x0, x0, x0 / x1)",
            "t = x0 * x1 + x1; y0 = sqrt(t) - x0 / x1; y1 = fma(x0, x1, t)",
            "a = x0 + x1; b = x0 - x1; c = x0 * x1; d = x1 / x0; e = x2 + 0.5; \
             f = a * b; g = c - d; h = e * a; i = b + c; \
             y0 = ((f + g) + (h + i)) * (a - e); y1 = fma(b, d, g)",
            "y0 = x0 * -0.0 + 3.0",
            "y0 = -x0 + abs(x1 - x0)",
            "t = abs(x0); y0 = fma(-t, x1, t); y1 = -(-x2)",
            "y0 = min(x0, x1); y1 = max(x1, x2)",
            "t = min(x0, 0.0); y0 = max(t * x1, -x0) + min(x2, x2)",
        ];
        for text in texts {
            for dt in [DType::F32, DType::F64] {
                let program = Program::parse(text, &[dt, dt, dt]).unwrap();
                let nodes = program.nodes();
                let m = nodes.len();
                let uniform: Vec<bool> =
                    nodes.iter().map(|n| matches!(n.op, Op::Const(_))).collect();
                let item = dt.info().item_bytes;
                for &zmm in wides {
                    let mut rp =
                        RegProgram::of(tier, &program, &uniform).expect("a register program");
                    rp.avx512 = zmm;
                    let code = code_for(&rp, &uniform, zmm);
                    assert!(code.is_some() || !enabled(), "{text}: no code");
                    if code.is_none() {
                        // Interpreter against interpreter: nothing to compare.
                        eprintln!("skipped: {text} {dt} zmm {zmm}: TESSERA_MAP_JIT=0");
                        continue;
                    }
                    for len in [1usize, 7, 31, 32, 33, 64, 65, 100, 1000, 1029] {
                        let bytes = |v: f64| -> Vec<u8> {
                            if dt == DType::F32 {
                                (v as f32).to_le_bytes().to_vec()
                            } else {
                                v.to_le_bytes().to_vec()
                            }
                        };
                        let srcs: Vec<Vec<u8>> = nodes
                            .iter()
                            .map(|n| match n.op {
                                Op::Load(i) => (0..len).flat_map(|j| bytes(value(j, i))).collect(),
                                Op::Const(Scalar::Float(v)) => bytes(v),
                                _ => Vec::new(),
                            })
                            .collect();
                        let src: Vec<*const u8> = srcs.iter().map(|s| s.as_ptr()).collect();
                        let mut outs = [vec![0u8; m * len * item], vec![0u8; m * len * item]];
                        for (o, with_code) in outs.iter_mut().zip([false, true]) {
                            rp.jit = if with_code { code.clone() } else { None };
                            let dst: Vec<*mut u8> =
                                (0..m).map(|k| o[k * len * item..].as_mut_ptr()).collect();
                            // SAFETY: each load's source holds `len` values,
                            // each constant's one, each node's destination
                            // `len` values of its own; the tier runs here.
                            unsafe { rp.run(&src, &uniform, &dst, len) };
                        }
                        for (k, (a, b)) in
                            outs[0].chunks(item).zip(outs[1].chunks(item)).enumerate()
                        {
                            let nan = |c: &[u8]| {
                                if item == 4 {
                                    f32::from_le_bytes(c.try_into().unwrap()).is_nan()
                                } else {
                                    f64::from_le_bytes(c.try_into().unwrap()).is_nan()
                                }
                            };
                            assert!(
                                a == b || (nan(a) && nan(b)),
                                "{text} {dt} zmm {zmm} len {len}: node {}, index {}",
                                k / len,
                                k % len
                            );
                        }
                    }
                }
            }
        }
    }
}
