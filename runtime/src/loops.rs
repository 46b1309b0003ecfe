//! The loop shells every generated kernel instantiates: one run of `n` elements
//! along the innermost axis, in one of the variants of `spec/loops.toml`. The
//! generator instantiates the shells in the contiguous and broadcast variants
//! only; the strided variant of every kernel and cast is [`tiled`] over the
//! kernel's contiguous one (the shells' strided paths serve no generated
//! kernel).

use super::codec::Codec;
use super::ops::{Op1, Op2, Op3};

/// One run of an elementwise kernel. Pointers address element 0 of each operand;
/// strides are in elements (unused by the contiguous and broadcast variants,
/// which assume unit stride, and stride 0 for the broadcast input).
#[derive(Clone, Copy, Debug)]
pub struct Args {
    /// Elements in the run.
    pub n: usize,
    /// Input element 0 pointers (unused slots are null).
    pub src: [*const u8; 3],
    /// Input strides in elements.
    pub src_stride: [isize; 3],
    /// Destination element 0 pointer.
    pub dst: *mut u8,
    /// Destination stride in elements.
    pub dst_stride: isize,
}

/// A generated kernel.
///
/// # Safety
/// Every element the variant touches (`n` elements from each pointer at its
/// stride) must be valid for reads of the input's storage type and, for `dst`,
/// writes of the result's storage type; `dst` may equal an input exactly (same
/// pointer and stride) but must not otherwise overlap one.
pub type LoopFn = unsafe fn(&Args);

/// Variant code: every operand contiguous.
pub const CONTIG: u8 = 0;
/// Variant code: input 0 broadcast.
pub const BCAST0: u8 = 1;
/// Variant code: input 1 broadcast.
pub const BCAST1: u8 = 2;
/// Variant code: input 2 broadcast.
pub const BCAST2: u8 = 3;
/// Variant code: any strides.
pub const STRIDED: u8 = 4;

#[inline(always)]
unsafe fn ld<T: Copy>(p: *const T, i: usize, stride: isize, unit: bool) -> T {
    // SAFETY: the caller (a kernel's contract) guarantees the element is readable.
    unsafe {
        if unit {
            p.add(i).read_unaligned()
        } else {
            p.offset(i as isize * stride).read_unaligned()
        }
    }
}

#[inline(always)]
unsafe fn st<T: Copy>(p: *mut T, i: usize, stride: isize, unit: bool, v: T) {
    // SAFETY: the caller guarantees the element is writable.
    unsafe {
        if unit {
            p.add(i).write_unaligned(v)
        } else {
            p.offset(i as isize * stride).write_unaligned(v)
        }
    }
}

/// The storage bytes of one value of codec `C` (the sizes a [`tiled`] entry
/// passes).
pub const fn store_bytes<C: Codec>() -> usize {
    core::mem::size_of::<C::Store>()
}

/// Bytes of each operand's tile in [`tiled`]: with four operands 16 KiB,
/// inside L1 with the kernel's own data.
const TILE_BYTES: usize = 4096;

/// One operand's tile of [`tiled`], aligned to a cache line.
#[repr(C, align(64))]
struct Tile([core::mem::MaybeUninit<u8>; TILE_BYTES]);

/// Copy `m` elements of `size` bytes from `src` at a stride of `stride`
/// elements to `dst` contiguously (`gather`), or from `src` contiguously to
/// `dst` at the stride (`!gather`).
///
/// # Safety
/// The `m` strided elements must be valid (readable for a gather, writable
/// for a scatter) and the contiguous side must hold `m` elements; the two
/// sides do not overlap.
#[inline(always)]
unsafe fn copy_strided(
    src: *const u8,
    dst: *mut u8,
    m: usize,
    size: usize,
    stride: isize,
    gather: bool,
) {
    #[inline(always)]
    unsafe fn each<T: Copy>(src: *const u8, dst: *mut u8, m: usize, stride: isize, gather: bool) {
        let (s, d) = (src as *const T, dst as *mut T);
        if gather && stride == 0 {
            // One value copied m times (a broadcast input's tile): a loop
            // of plain stores the compiler widens.
            // SAFETY: the one source element is readable and the m
            // destination elements writable (the caller's contract).
            unsafe {
                let v = s.read_unaligned();
                for j in 0..m {
                    d.add(j).write_unaligned(v);
                }
            }
            return;
        }
        for j in 0..m {
            let far = j as isize * stride;
            // SAFETY: element j of both sides is valid (the caller's contract).
            unsafe {
                if gather {
                    d.add(j).write_unaligned(s.offset(far).read_unaligned());
                } else {
                    d.offset(far).write_unaligned(s.add(j).read_unaligned());
                }
            }
        }
    }
    // SAFETY: forwarded from this function's contract, element by element.
    unsafe {
        match size {
            1 => each::<u8>(src, dst, m, stride, gather),
            2 => each::<u16>(src, dst, m, stride, gather),
            4 => each::<u32>(src, dst, m, stride, gather),
            8 => each::<u64>(src, dst, m, stride, gather),
            16 => each::<u128>(src, dst, m, stride, gather),
            _ => {
                for j in 0..m {
                    let far = j as isize * stride * size as isize;
                    let (from, to) = if gather {
                        (src.offset(far), dst.add(j * size))
                    } else {
                        (src.add(j * size), dst.offset(far))
                    };
                    core::ptr::copy_nonoverlapping(from, to, size);
                }
            }
        }
    }
}

/// The strided variant ([`STRIDED`]) of every kernel and cast: the kernel's
/// contiguous variant `contig` over tiles of the run. An input at unit
/// stride is read in place; an input at stride 0 is copied into a tile once
/// (as many copies as a tile holds); any other input is gathered into a
/// tile, and a destination at a stride other than 1 receives its results
/// from a tile. Each result is the contiguous kernel's for the same values,
/// which is the scalar tier's: the bits of an element-by-element loop. One
/// function serves every kernel of every tier (each generated entry passes
/// its sizes and its contiguous kernel), so that no strided loop is
/// compiled per kernel (a third of each tier crate's build before), and a
/// strided call of a vectorised kernel runs vectorised.
///
/// `sizes` are the inputs' storage bytes (one per input) and `out_size` the
/// destination's.
///
/// # Safety
/// See [`LoopFn`] for `x` in any variant; `contig` must be the contiguous
/// kernel of the same kind and dtypes, with inputs of `sizes` bytes and
/// results of `out_size` (at most [`TILE_BYTES`] each, and at most three inputs).
#[inline(never)]
pub unsafe fn tiled(x: &Args, sizes: &[usize], out_size: usize, contig: LoopFn) {
    let widest = sizes.iter().copied().fold(out_size, usize::max).max(1);
    let chunk = TILE_BYTES / widest;
    // Every byte of a tile that a kernel reads is written first: a gathered
    // tile by its gather, a broadcast tile once below, the output tile by
    // `contig`.
    let mut tiles = core::mem::MaybeUninit::<[Tile; 4]>::uninit();
    let base = tiles.as_mut_ptr() as *mut Tile;
    let tile = |k: usize| base.wrapping_add(k) as *mut u8;
    for (k, &size) in sizes.iter().enumerate() {
        if x.src_stride[k] == 0 {
            let copies = chunk.min(x.n);
            // SAFETY: an input at stride 0 holds one readable element (the
            // contract of `LoopFn`); the tile has room for `copies` elements
            // of `size` bytes (chunk · size ≤ TILE_BYTES).
            unsafe { copy_strided(x.src[k], tile(k), copies, size, 0, true) };
        }
    }
    let mut i0 = 0;
    while i0 < x.n {
        let m = chunk.min(x.n - i0);
        let mut a = Args {
            n: m,
            src: [core::ptr::null(); 3],
            src_stride: [1; 3],
            dst: tile(3),
            dst_stride: 1,
        };
        for (k, &size) in sizes.iter().enumerate() {
            let stride = x.src_stride[k];
            let at = x.src[k].wrapping_offset(i0 as isize * stride * size as isize);
            a.src[k] = match stride {
                1 => at,
                0 => tile(k) as *const u8,
                _ => {
                    // SAFETY: elements i0..i0 + m of input k at its stride are
                    // readable (the contract of `LoopFn`); the tile holds m.
                    unsafe { copy_strided(at, tile(k), m, size, stride, true) };
                    tile(k) as *const u8
                }
            };
        }
        let out_at = x
            .dst
            .wrapping_offset(i0 as isize * x.dst_stride * out_size as isize);
        if x.dst_stride == 1 {
            a.dst = out_at;
        }
        // SAFETY: every input pointer addresses m readable elements (in place
        // at unit stride, or a tile), the destination m writable ones (in
        // place at unit stride, or the output tile), and `contig` is the
        // contiguous kernel for these sizes (this function's contract). A
        // destination in place equals an input exactly or overlaps none.
        unsafe { contig(&a) };
        if x.dst_stride != 1 {
            // SAFETY: elements i0..i0 + m of the destination at its stride are
            // writable (the contract of `LoopFn`); the output tile holds m
            // results, written by `contig`.
            unsafe { copy_strided(tile(3), out_at, m, out_size, x.dst_stride, false) };
        }
        i0 += m;
    }
}

/// Line size the contiguous loops align their stores to.
const LINE: usize = 64;

/// The two spans `i0..n` of a run is walked in: the elements before the
/// destination's next 64-byte boundary, then the rest (the first span empty
/// where the run is strided or the destination's element does not tile a
/// line). The loops run one body over both spans, so the compiler
/// vectorises it once, and the wide stores of the second span never
/// straddle two lines (a `Vec`'s large buffers commonly start 16 bytes past
/// one, where every 64-byte store would). Only speed depends on it: each
/// result is a function of its own arguments.
#[inline(always)]
fn spans<T>(po: *mut T, i0: usize, n: usize, unit: bool) -> [(usize, usize); 2] {
    let size = core::mem::size_of::<T>();
    let mut h = i0;
    if unit && size != 0 && LINE.is_multiple_of(size) && i0 < n {
        let at = po.wrapping_add(i0) as usize;
        h = i0 + ((LINE - at % LINE) % LINE / size).min(n - i0);
    }
    [(i0, h), (h, n)]
}

/// A one-input kernel.
///
/// # Safety
/// See [`LoopFn`].
#[inline(always)]
pub unsafe fn run1<A: Codec, O: Codec, K: Op1<A, O>, const V: u8>(x: &Args) {
    let pa = x.src[0] as *const A::Store;
    let po = x.dst as *mut O::Store;
    let unit = V == CONTIG;
    if K::SPLIT && unit {
        // SAFETY: forwarded from this function's contract.
        unsafe { run1_split::<A, O, K>(x) };
        return;
    }
    let mut i0 = 0;
    if unit && core::mem::size_of::<O::Store>() == 1 && core::mem::size_of::<A::Store>() >= 4 {
        // SAFETY: forwarded from this function's contract (contiguous run).
        i0 = unsafe {
            if from_memory::<A::Store>(x.n) {
                narrow_blocks::<A, O, K, true>(x)
            } else {
                narrow_blocks::<A, O, K, false>(x)
            }
        };
    }
    // A long operation over a run from memory asks for its source ahead, a
    // block at a time (see `Op1::PREFETCH_FAR`); any other run is one block.
    let far = K::PREFETCH_FAR && unit && from_memory::<A::Store>(x.n);
    for (j0, j1) in spans(po, i0, x.n, unit) {
        let step = if far { FAR_BLOCK } else { (j1 - j0).max(1) };
        let mut b = j0;
        while b < j1 {
            let e = (b + step).min(j1);
            if far {
                ask_ahead(pa.wrapping_add(b), e - b);
            }
            for i in b..e {
                // SAFETY: forwarded from this function's contract.
                unsafe {
                    let a = A::decode(ld(pa, i, x.src_stride[0], unit));
                    st(po, i, x.dst_stride, unit, O::encode(K::f(a)));
                }
            }
            b = e;
        }
    }
}

/// Elements per block of a far run of a long operation ([`run1`]): each block
/// asks for its source's lines [`AHEAD_BYTES`] ahead.
const FAR_BLOCK: usize = 256;

/// The contiguous narrowing loop of [`run1`] (results of one byte from
/// sources of at least four): results go through a small block on the stack,
/// which lets the compiler vectorise the whole block and narrow it with pack
/// instructions instead of element by element. (For wider results the plain
/// loop is as fast, and a block there led the compiler to vectorise across
/// blocks with gathers on AVX-512.) `FAR`: the run is long enough that the
/// source comes from memory, and each block asks for the source
/// [`AHEAD_BYTES`] ahead. Returns the elements done (whole blocks).
///
/// # Safety
/// As [`run1`], for a contiguous run.
#[inline(always)]
unsafe fn narrow_blocks<A: Codec, O: Codec, K: Op1<A, O>, const FAR: bool>(x: &Args) -> usize {
    const BLOCK: usize = 32;
    let pa = x.src[0] as *const A::Store;
    let po = x.dst as *mut O::Store;
    let mut block = core::mem::MaybeUninit::<[O::Store; BLOCK]>::uninit();
    let t = block.as_mut_ptr() as *mut O::Store;
    let mut i0 = 0;
    while i0 + BLOCK <= x.n {
        if FAR {
            ask_ahead(pa.wrapping_add(i0), BLOCK);
        }
        // SAFETY: elements i0..i0 + BLOCK of both operands lie inside the run
        // (forwarded from this function's contract); the block holds BLOCK
        // results, all written before the copy.
        unsafe {
            for j in 0..BLOCK {
                let a = A::decode(pa.add(i0 + j).read_unaligned());
                t.add(j).write(O::encode(K::f(a)));
            }
            core::ptr::copy_nonoverlapping(
                t as *const u8,
                po.add(i0) as *mut u8,
                BLOCK * core::mem::size_of::<O::Store>(),
            );
        }
        i0 += BLOCK;
    }
    i0
}

/// Source bytes from which a run counts as coming from memory rather than
/// from cache (twice a 512 KiB L2): shorter runs skip the prefetch requests,
/// which cost issue slots there and gain nothing.
pub const FAR_BYTES: usize = 1 << 20;

/// Bytes past the block being read whose cache lines the narrowing loop asks
/// for. On 64 MiB casts from f32 (Zen 3, one core, `tessera-bench
/// cast-sweep`) the 8-bit float encoders went from 0.72–0.90 of a memcpy to
/// 0.87–1.02 with requests this far ahead: the hardware prefetcher alone
/// falls behind a loop with this much arithmetic per byte. The fused packed
/// encoders and the MX encoder of the `tessera` crate use the same requests
/// (f32 → i4, u4, u1 from 0.76–0.87 to 0.92–1.13; f32 → e2m1fn from
/// 0.67–0.79 to 0.77–0.99; MXFP8 encode from 6.2–7.0 to 7.8–9.3 GB/s).
pub const AHEAD_BYTES: usize = 2048;

/// Whether a run of `n` elements of `T` counts as coming from memory: at
/// least [`FAR_BYTES`] of them.
#[inline(always)]
fn from_memory<T>(n: usize) -> bool {
    n.saturating_mul(core::mem::size_of::<T>()) >= FAR_BYTES
}

/// [`prefetch_ahead`] for the `count` elements of `T` at `p` (any pointer
/// value: nothing is read).
#[inline(always)]
fn ask_ahead<T>(p: *const T, count: usize) {
    prefetch_ahead(p as *const u8, count * core::mem::size_of::<T>());
}

/// Ask for the cache lines of the `len` bytes `AHEAD_BYTES` past `p`: a hint,
/// with no effect on any result (none where the target has no such hint).
#[inline(always)]
pub fn prefetch_ahead(p: *const u8, len: usize) {
    prefetch_lines(p.wrapping_add(AHEAD_BYTES), len);
}

/// Ask for the cache lines of the `len` bytes at `p`: a hint, with no effect
/// on any result (none where the target has no such hint).
#[inline(always)]
pub fn prefetch_lines(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    for off in (0..len).step_by(64) {
        // SAFETY: a prefetch never faults, whatever the address.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                p.wrapping_add(off) as *const i8,
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// A two-input kernel.
///
/// # Safety
/// See [`LoopFn`].
#[inline(always)]
pub unsafe fn run2<A: Codec, B: Codec, O: Codec, K: Op2<A, B, O>, const V: u8>(x: &Args) {
    let pa = x.src[0] as *const A::Store;
    let pb = x.src[1] as *const B::Store;
    let po = x.dst as *mut O::Store;
    match V {
        BCAST0 => {
            // SAFETY: the broadcast input holds one readable element (this
            // function's contract).
            let a = A::decode(unsafe { pa.read_unaligned() });
            for (j0, j1) in spans(po, 0, x.n, true) {
                for i in j0..j1 {
                    // SAFETY: element i < n of every operand, at its stride, is
                    // valid (this function's contract).
                    unsafe {
                        let b = B::decode(ld(pb, i, 1, true));
                        st(po, i, 1, true, O::encode(K::f(a, b)));
                    }
                }
            }
        }
        BCAST1 => {
            // SAFETY: the broadcast input holds one readable element (this
            // function's contract).
            let b = B::decode(unsafe { pb.read_unaligned() });
            for (j0, j1) in spans(po, 0, x.n, true) {
                for i in j0..j1 {
                    // SAFETY: element i < n of every operand, at its stride, is
                    // valid (this function's contract).
                    unsafe {
                        let a = A::decode(ld(pa, i, 1, true));
                        st(po, i, 1, true, O::encode(K::f(a, b)));
                    }
                }
            }
        }
        _ => {
            let unit = V == CONTIG;
            for (j0, j1) in spans(po, 0, x.n, unit) {
                for i in j0..j1 {
                    // SAFETY: element i < n of every operand, at its stride, is
                    // valid (this function's contract).
                    unsafe {
                        let a = A::decode(ld(pa, i, x.src_stride[0], unit));
                        let b = B::decode(ld(pb, i, x.src_stride[1], unit));
                        st(po, i, x.dst_stride, unit, O::encode(K::f(a, b)));
                    }
                }
            }
        }
    }
}

/// A three-input kernel.
///
/// # Safety
/// See [`LoopFn`].
#[inline(always)]
pub unsafe fn run3<A: Codec, B: Codec, C: Codec, O: Codec, K: Op3<A, B, C, O>, const V: u8>(
    x: &Args,
) {
    let pa = x.src[0] as *const A::Store;
    let pb = x.src[1] as *const B::Store;
    let pc = x.src[2] as *const C::Store;
    let po = x.dst as *mut O::Store;
    let unit = V != STRIDED;
    let (sa, sb, sc, so) = if unit {
        (
            (V != BCAST0) as isize,
            (V != BCAST1) as isize,
            (V != BCAST2) as isize,
            1,
        )
    } else {
        (
            x.src_stride[0],
            x.src_stride[1],
            x.src_stride[2],
            x.dst_stride,
        )
    };
    match V {
        BCAST0 => {
            // SAFETY: the broadcast input holds one readable element (this
            // function's contract).
            let a = A::decode(unsafe { pa.read_unaligned() });
            for i in 0..x.n {
                // SAFETY: element i < n of every operand, at its stride, is valid
                // (this function's contract).
                unsafe {
                    let b = B::decode(ld(pb, i, 1, true));
                    let c = C::decode(ld(pc, i, 1, true));
                    st(po, i, 1, true, O::encode(K::f(a, b, c)));
                }
            }
        }
        BCAST1 => {
            // SAFETY: the broadcast input holds one readable element (this
            // function's contract).
            let b = B::decode(unsafe { pb.read_unaligned() });
            for i in 0..x.n {
                // SAFETY: element i < n of every operand, at its stride, is valid
                // (this function's contract).
                unsafe {
                    let a = A::decode(ld(pa, i, 1, true));
                    let c = C::decode(ld(pc, i, 1, true));
                    st(po, i, 1, true, O::encode(K::f(a, b, c)));
                }
            }
        }
        BCAST2 => {
            // SAFETY: the broadcast input holds one readable element (this
            // function's contract).
            let c = C::decode(unsafe { pc.read_unaligned() });
            for i in 0..x.n {
                // SAFETY: element i < n of every operand, at its stride, is valid
                // (this function's contract).
                unsafe {
                    let a = A::decode(ld(pa, i, 1, true));
                    let b = B::decode(ld(pb, i, 1, true));
                    st(po, i, 1, true, O::encode(K::f(a, b, c)));
                }
            }
        }
        _ => {
            for (j0, j1) in spans(po, 0, x.n, unit) {
                for i in j0..j1 {
                    // SAFETY: element i < n of every operand, at its stride, is
                    // valid (this function's contract).
                    unsafe {
                        let a = A::decode(ld(pa, i, sa, unit));
                        let b = B::decode(ld(pb, i, sb, unit));
                        let c = C::decode(ld(pc, i, sc, unit));
                        st(po, i, so, unit, O::encode(K::f(a, b, c)));
                    }
                }
            }
        }
    }
}

/// Arguments per chunk of [`run1_split`].
const SPLIT_CHUNK: usize = 64;

/// The contiguous loop of an operation with a small form ([`Op1::SPLIT`]):
/// each chunk of [`SPLIT_CHUNK`] arguments that all fit runs the small form
/// (which vectorises), a chunk whose arguments all fit the middle form
/// ([`Op1::fits_mid`], also vectorised) that form, any other chunk the full
/// one. Every form gives the full one's bits for an argument that fits it,
/// so each result is a function of its value alone, whatever its
/// neighbours.
///
/// # Safety
/// See [`LoopFn`] (unit strides).
#[inline(always)]
unsafe fn run1_split<A: Codec, O: Codec, K: Op1<A, O>>(x: &Args) {
    let pa = x.src[0] as *const A::Store;
    let po = x.dst as *mut O::Store;
    let far = K::PREFETCH_FAR && from_memory::<A::Store>(x.n);
    let mut i0 = 0;
    while i0 < x.n {
        let m = SPLIT_CHUNK.min(x.n - i0);
        if far {
            ask_ahead(pa.wrapping_add(i0), m);
        }
        // The middle form's test runs only where the small one failed, so a
        // chunk of small arguments pays for one scan.
        // SAFETY: both scans and the three runs touch elements i0..i0 + m of
        // the source and the destination, which hold n (this function's
        // contract).
        unsafe {
            if all_fit::<A>(pa.add(i0), m, K::fits) {
                run_chunk::<A, O>(pa.add(i0), po.add(i0), m, K::f_small);
            } else if all_fit::<A>(pa.add(i0), m, K::fits_mid) {
                run_chunk::<A, O>(pa.add(i0), po.add(i0), m, K::f_mid);
            } else {
                run_chunk::<A, O>(pa.add(i0), po.add(i0), m, K::f);
            }
        }
        i0 += m;
    }
}

/// Whether `fit` holds for each of the `m` values from `pa` (all are read:
/// the scan vectorises).
///
/// # Safety
/// `pa` points to `m` readable values of `A`.
#[inline(always)]
unsafe fn all_fit<A: Codec>(
    pa: *const A::Store,
    m: usize,
    fit: impl Fn(A::Carrier) -> bool,
) -> bool {
    let mut all = true;
    for j in 0..m {
        // SAFETY: j < m, forwarded from this function's contract.
        all &= fit(A::decode(unsafe { pa.add(j).read_unaligned() }));
    }
    all
}

/// `f` on each of the `m` values from `pa`, written to `po`.
///
/// # Safety
/// `pa` points to `m` readable values of `A`, `po` to `m` writable ones of
/// `O`.
#[inline(always)]
unsafe fn run_chunk<A: Codec, O: Codec>(
    pa: *const A::Store,
    po: *mut O::Store,
    m: usize,
    f: impl Fn(A::Carrier) -> O::Carrier,
) {
    for j in 0..m {
        // SAFETY: j < m, forwarded from this function's contract.
        unsafe {
            let a = A::decode(pa.add(j).read_unaligned());
            po.add(j).write_unaligned(O::encode(f(a)));
        }
    }
}

/// Values per block of the carrier-kernel shells ([`run1_via`], [`run2_via`]).
const VIA_BLOCK: usize = 256;

/// A one-input kernel that runs the tier's contiguous kernel `f` of the same
/// kind on the carrier `T` over blocks of decoded values, then encodes each
/// result once: the bits of decoding, applying the carrier's operation and
/// encoding element by element. (Narrow floats reach their f32 kernel so:
/// one copy of a long function per tier and carrier.)
///
/// # Safety
/// See [`LoopFn`]; `f` must be a contiguous `T` → `T` kernel.
#[inline(always)]
pub unsafe fn run1_via<
    T: Copy + Default,
    A: Codec<Carrier = T>,
    O: Codec<Carrier = T>,
    const V: u8,
>(
    x: &Args,
    f: LoopFn,
) {
    let pa = x.src[0] as *const A::Store;
    let po = x.dst as *mut O::Store;
    let unit = V == CONTIG;
    // The pointer is opaque so the f32 kernel stays one function per tier.
    let f = core::hint::black_box(f);
    // Results go to a buffer of their own: a kernel whose destination is
    // exactly its source is correct, but the compiler's overlap check then
    // runs its scalar loop.
    let mut buf = [T::default(); VIA_BLOCK];
    let mut out = [T::default(); VIA_BLOCK];
    let mut i0 = 0;
    while i0 < x.n {
        let m = VIA_BLOCK.min(x.n - i0);
        for (j, v) in buf[..m].iter_mut().enumerate() {
            // SAFETY: i0 + j < n, forwarded from this function's contract.
            *v = A::decode(unsafe { ld(pa, i0 + j, x.src_stride[0], unit) });
        }
        let args = Args {
            n: m,
            src: [
                buf.as_ptr() as *const u8,
                core::ptr::null(),
                core::ptr::null(),
            ],
            src_stride: [1, 0, 0],
            dst: out.as_mut_ptr() as *mut u8,
            dst_stride: 1,
        };
        // SAFETY: `buf` holds m carrier values and `out` room for m.
        unsafe { f(&args) };
        for (j, &v) in out[..m].iter().enumerate() {
            // SAFETY: i0 + j < n, forwarded from this function's contract.
            unsafe { st(po, i0 + j, x.dst_stride, unit, O::encode(v)) };
        }
        i0 += m;
    }
}

/// The two-input form of [`run1_via`] (every variant: a broadcast input is
/// read at stride 0).
///
/// # Safety
/// See [`LoopFn`]; `f` must be a contiguous (`T`, `T`) → `T` kernel.
#[inline(always)]
pub unsafe fn run2_via<
    T: Copy + Default,
    A: Codec<Carrier = T>,
    B: Codec<Carrier = T>,
    O: Codec<Carrier = T>,
    const V: u8,
>(
    x: &Args,
    f: LoopFn,
) {
    let pa = x.src[0] as *const A::Store;
    let pb = x.src[1] as *const B::Store;
    let po = x.dst as *mut O::Store;
    let (sa, sb, so) = match V {
        CONTIG => (1, 1, 1),
        BCAST0 => (0, 1, 1),
        BCAST1 => (1, 0, 1),
        _ => (x.src_stride[0], x.src_stride[1], x.dst_stride),
    };
    let f = core::hint::black_box(f);
    let mut ba = [T::default(); VIA_BLOCK];
    let mut bb = [T::default(); VIA_BLOCK];
    let mut out = [T::default(); VIA_BLOCK];
    let mut i0 = 0;
    while i0 < x.n {
        let m = VIA_BLOCK.min(x.n - i0);
        for j in 0..m {
            // SAFETY: i0 + j < n, forwarded from this function's contract.
            unsafe {
                ba[j] = A::decode(ld(pa, i0 + j, sa, false));
                bb[j] = B::decode(ld(pb, i0 + j, sb, false));
            }
        }
        let args = Args {
            n: m,
            src: [
                ba.as_ptr() as *const u8,
                bb.as_ptr() as *const u8,
                core::ptr::null(),
            ],
            src_stride: [1, 1, 0],
            dst: out.as_mut_ptr() as *mut u8,
            dst_stride: 1,
        };
        // SAFETY: both buffers hold m carrier values and `out` room for m (a
        // buffer of its own, as in `run1_via`).
        unsafe { f(&args) };
        for (j, &v) in out[..m].iter().enumerate() {
            // SAFETY: i0 + j < n, forwarded from this function's contract.
            unsafe { st(po, i0 + j, so, false, O::encode(v)) };
        }
        i0 += m;
    }
}

/// A kernel computed through its carrier's kernels, `N` inputs (how the
/// narrow floats compute: through f32). Over blocks of up to [`VIA_BLOCK`]
/// elements, every input is converted into the carrier `T` by its `load`
/// kernel (a cast into the carrier: exact), the carrier's kernel `op` of the
/// same kind runs over the block, and `store` (a cast from `op`'s result type
/// `R` into the destination: one rounding) writes the results. The bits are
/// those of decoding, computing and encoding element by element, since every
/// step is the same operation on the same value; the code of a kernel is
/// three calls, with each conversion and each carrier kernel compiled once
/// per tier.
///
/// `sizes` are the storage bytes of the inputs and `out_size` the
/// destination's. In variant `BCASTk` input k is loaded once (one element)
/// and `op` is the carrier kernel's same broadcast variant; otherwise
/// everything is contiguous (the strided variant is [`tiled`] over this
/// one).
///
/// # Safety
/// See [`LoopFn`] (contiguous or `BCASTk`). `loads[i]` must be a contiguous
/// kernel converting input i's dtype into `T`, `op` an `N`-input kernel over
/// `T` with results `R` in the variant described above, and `store` a
/// contiguous kernel converting `R` into the destination's dtype.
#[inline(always)]
pub unsafe fn run_through<T: Copy, R: Copy, const N: usize, const V: u8>(
    x: &Args,
    sizes: [usize; N],
    out_size: usize,
    loads: [LoopFn; N],
    op: LoopFn,
    store: LoopFn,
) {
    // Opaque pointers: each kernel called stays one function per tier.
    let (loads, op, store) = core::hint::black_box((loads, op, store));
    let bcast = match V {
        BCAST0 => Some(0),
        BCAST1 => Some(1),
        BCAST2 => Some(2),
        _ => None,
    };
    // Every element of the buffers is written (by a load, or by `op`)
    // before it is read; they start uninitialised, as setting them would
    // cost a short run more than its work.
    let mut bufs = core::mem::MaybeUninit::<[[T; VIA_BLOCK]; N]>::uninit();
    // The results go to a buffer of their own (see `run1_via`).
    let mut out = core::mem::MaybeUninit::<[R; VIA_BLOCK]>::uninit();
    // Every access to the buffers goes through these pointers.
    let bufs = bufs.as_mut_ptr() as *mut [T; VIA_BLOCK];
    let buf = |i: usize| bufs.wrapping_add(i) as *mut u8;
    let out = out.as_mut_ptr() as *mut u8;
    if let Some(b) = bcast {
        let args = Args {
            n: 1,
            src: [x.src[b], core::ptr::null(), core::ptr::null()],
            src_stride: [1, 0, 0],
            dst: buf(b),
            dst_stride: 1,
        };
        // SAFETY: the broadcast input holds one element (this function's
        // contract), and the buffer has room for it.
        unsafe { (loads[b])(&args) };
    }
    let mut src = [core::ptr::null::<u8>(); 3];
    let mut src_stride = [0isize; 3];
    for i in 0..N {
        src[i] = buf(i) as *const u8;
        src_stride[i] = (Some(i) != bcast) as isize;
    }
    let mut i0 = 0;
    while i0 < x.n {
        let m = VIA_BLOCK.min(x.n - i0);
        for i in 0..N {
            if Some(i) == bcast {
                continue;
            }
            let args = Args {
                n: m,
                src: [
                    x.src[i].wrapping_add(i0 * sizes[i]),
                    core::ptr::null(),
                    core::ptr::null(),
                ],
                src_stride: [1, 0, 0],
                dst: buf(i),
                dst_stride: 1,
            };
            // SAFETY: elements i0..i0 + m of input i, at its stride, are
            // readable (this function's contract); the buffer holds m.
            unsafe { (loads[i])(&args) };
        }
        let args = Args {
            n: m,
            src,
            src_stride,
            dst: out,
            dst_stride: 1,
        };
        // SAFETY: every buffer holds m carrier values (the broadcast one
        // its one value) and `out` has room for m results.
        unsafe { op(&args) };
        let args = Args {
            n: m,
            src: [out as *const u8, core::ptr::null(), core::ptr::null()],
            src_stride: [1, 0, 0],
            dst: x.dst.wrapping_add(i0 * out_size),
            dst_stride: 1,
        };
        // SAFETY: elements i0..i0 + m of the destination are
        // writable (this function's contract); `out` holds m results.
        unsafe { store(&args) };
        i0 += m;
    }
}

/// A cast computed as two casts through the carrier `T` (see
/// `tessera-codegen`'s `Spec::cast_through` for when): over blocks of up to
/// [`VIA_BLOCK`] elements, `load` converts the source into the carrier
/// (exactly) and `store` rounds the block into the destination once; the bits
/// of the direct cast, as both round the same value by the same rule.
/// `in_size` and `out_size` are the storage bytes of source and destination.
/// Contiguous (the strided variant is [`tiled`] over this one).
///
/// # Safety
/// See [`LoopFn`] (contiguous); `load` must be a contiguous cast of the
/// source's dtype into `T` and `store` one of `T` into the destination's.
#[inline(always)]
pub unsafe fn run_cast_through<T: Copy>(
    x: &Args,
    in_size: usize,
    out_size: usize,
    load: LoopFn,
    store: LoopFn,
) {
    // Opaque pointers: each cast called stays one function per tier.
    let (load, store) = core::hint::black_box((load, store));
    // Written by `load` before `store` reads it (see `run_through`).
    let mut buf = core::mem::MaybeUninit::<[T; VIA_BLOCK]>::uninit();
    let buf = buf.as_mut_ptr() as *mut u8;
    let mut i0 = 0;
    while i0 < x.n {
        let m = VIA_BLOCK.min(x.n - i0);
        let args = Args {
            n: m,
            src: [
                x.src[0].wrapping_add(i0 * in_size),
                core::ptr::null(),
                core::ptr::null(),
            ],
            src_stride: [1, 0, 0],
            dst: buf,
            dst_stride: 1,
        };
        // SAFETY: elements i0..i0 + m of the source are readable (this
        // function's contract); the buffer holds m.
        unsafe { load(&args) };
        let args = Args {
            n: m,
            src: [buf as *const u8, core::ptr::null(), core::ptr::null()],
            src_stride: [1, 0, 0],
            dst: x.dst.wrapping_add(i0 * out_size),
            dst_stride: 1,
        };
        // SAFETY: elements i0..i0 + m of the destination are writable (this
        // function's contract); the buffer holds m values.
        unsafe { store(&args) };
        i0 += m;
    }
}
