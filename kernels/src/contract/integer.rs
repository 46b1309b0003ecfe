//! Products of narrow integers (`i8`, `u8`, `i16`) into an `i32` accumulator
//! by packed dot-product instructions.
//!
//! The depth is cut into groups of steps that one 32-bit lane multiplies and
//! sums at once, and both operands are packed as 32-bit words of one group:
//!
//! * **Quads** (both operands 8-bit, AVX-512 VNNI): four steps per word, a's
//!   values as `u8` and b's as `i8`, summed by `vpdpbusd` (the wrapping form;
//!   never the saturating `vpdpbusds`). A signed a is offset by +128 and an
//!   unsigned b by −128 into those ranges, and the offsets are taken back by
//!   an exact correction: with `a = a' − oa` and `b = b' + sb`,
//!   `Σ a·b = Σ a'·b' + sb·Σ a' − oa·Σ b' − K·oa·sb`.
//! * **Pairs** (every other mix of `i8`, `u8`, `i16`): two steps per word, both
//!   values as `i16`, summed by `vpmaddwd` and a wrapping add (or VNNI's
//!   `vpdpwssd`). A pair's two products sum to at most 2^31 in magnitude, and
//!   only `(−2^15)·(−2^15)` twice reaches it: the instruction gives −2^31 for
//!   +2^31, the same value modulo 2^32.
//!
//! Every product and every sum is exact modulo 2^32, so the result is the
//! exact sum modulo 2^32 whatever the grouping, blocking, tier or threads: the
//! bits of the lane path and of the scalar tier.

use super::acc::Src;
use crate::error::Result;
use crate::{DType, Tier};

/// A packed product kernel: `(kg, a, b, c, rs)` adds, to the `MR × NR` tile
/// at `c` (row stride `rs` elements), the products of `kg` groups: `a` holds
/// `kg·MR` words (group-major, then row), `b` `kg·NR` words (group-major,
/// then column).
///
/// # Safety (of calling one)
/// `a` holds `kg·MR` readable words and `b` `kg·NR`; `c` addresses an
/// `MR × NR` tile of row stride `rs`, readable and writable and touched by no
/// one else; the CPU runs the kernel's instructions.
type Kernel = unsafe fn(usize, *const u32, *const u32, *mut i32, usize);

/// How the depth is grouped into 32-bit words.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Grouping {
    /// Four 8-bit steps per word (`u8` × `i8`).
    Quads,
    /// Two 16-bit steps per word (`i16` × `i16`).
    Pairs,
}

/// The kernel a tier runs for a pair of input dtypes.
#[derive(Clone, Copy)]
pub(super) struct Plan {
    tier: Tier,
    grouping: Grouping,
    kernel: Kernel,
    mr: usize,
    nr: usize,
}

/// Whether `d` is an input this path reads.
fn narrow(d: DType) -> bool {
    matches!(d, DType::I8 | DType::U8 | DType::I16)
}

/// The packed path for inputs `a` and `b` into `acc` on `tier`, or None where
/// it does not apply (another accumulator or input, or a tier without
/// AVX2): those products take the other integer paths, with the same bits.
pub(super) fn plan(tier: Tier, a: DType, b: DType, acc: DType) -> Option<Plan> {
    if acc != DType::I32 || !narrow(a) || !narrow(b) {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let bytes = a != DType::I16 && b != DType::I16;
        if crate::tier::runs_avx512(tier) {
            let vnni = crate::tier::cpu_runs(crate::tier::CpuFeature::Avx512Vnni);
            return Some(match (bytes && vnni, vnni) {
                (true, _) => Plan {
                    tier,
                    grouping: Grouping::Quads,
                    kernel: kernels::avx512_quads_14x32,
                    mr: 14,
                    nr: 32,
                },
                (false, true) => Plan {
                    tier,
                    grouping: Grouping::Pairs,
                    kernel: kernels::avx512_vnni_pairs_14x32,
                    mr: 14,
                    nr: 32,
                },
                (false, false) => Plan {
                    tier,
                    grouping: Grouping::Pairs,
                    kernel: kernels::avx512_pairs_14x32,
                    mr: 14,
                    nr: 32,
                },
            });
        }
        if crate::tier::runs_avx2(tier) {
            return Some(Plan {
                tier,
                grouping: Grouping::Pairs,
                kernel: kernels::avx2_pairs_6x16,
                mr: 6,
                nr: 16,
            });
        }
    }
    let _ = tier;
    None
}

/// Groups of the depth per packed block (the b block of `NC` columns is
/// `NC · KG_BLOCK` words: 384 KiB, inside L2).
const KG_BLOCK: usize = 256;
/// Columns per packed block of b.
const NC: usize = 384;
/// Multiply-adds below which a product stays on the calling thread.
const PARALLEL_MIN: usize = 1 << 18;

/// A narrow integer input type.
trait Narrow: Copy {
    /// The value.
    fn value(self) -> i32;
}

/// The word of `G` consecutive elements from `p`, each value plus `offset`,
/// low step first (`G` = 4: bytes; 2: 16-bit halves).
///
/// # Safety
/// `p` addresses `G` readable elements.
#[inline(always)]
unsafe fn word_at<T: Narrow, const G: usize>(p: *const T, offset: i32) -> u32 {
    let (bits, mask) = (32 / G, if G == 4 { 0xff } else { 0xffff });
    let mut w = 0u32;
    for u in 0..G {
        // SAFETY: u < G, and `p` addresses G readable elements (this
        // function's contract).
        let v = unsafe { p.add(u).read_unaligned() }.value() + offset;
        w |= (v as u32 & mask) << (bits * u);
    }
    w
}
impl Narrow for i8 {
    #[inline(always)]
    fn value(self) -> i32 {
        self as i32
    }
}
impl Narrow for u8 {
    #[inline(always)]
    fn value(self) -> i32 {
        self as i32
    }
}
impl Narrow for i16 {
    #[inline(always)]
    fn value(self) -> i32 {
        self as i32
    }
}

/// One operand as the packing reads it: its bytes, the position of each
/// batch element, of each row (or column) and of each depth step.
pub(super) struct Side<'a> {
    pub src: Src<'a>,
    pub dtype: DType,
    pub free: &'a [isize],
    pub ks: &'a [isize],
}

/// `out[i·C + j] = Σ_k a[i, k]·b[k, j]` modulo 2^32 for one batch element,
/// `out` of `R·C` elements (overwritten), `a` at `a_base`, `b` at `b_base`.
///
/// # Safety
/// Every position `base + free[i] + ks[k]` of each side is an element of its
/// bytes (as the validated view's dtype); the plan's kernel and packer run
/// on this CPU (its tier is one this CPU runs).
pub(super) unsafe fn product(
    plan: Plan,
    threads: usize,
    (a, a_base): (&Side<'_>, isize),
    (b, b_base): (&Side<'_>, isize),
    out: &mut [i32],
) -> Result<()> {
    macro_rules! typed {
        ($($ad:ident => $at:ty),*; $($bd:ident => $bt:ty),*) => {
            typed!(@a [$($ad => $at),*] [$($bd => $bt),*])
        };
        (@a [$($ad:ident => $at:ty),*] $bs:tt) => {
            match a.dtype {
                $(DType::$ad => typed!(@b $at, $bs),)*
                other => unreachable!("{other} is not a narrow input"),
            }
        };
        (@b $at:ty, [$($bd:ident => $bt:ty),*]) => {
            match b.dtype {
                // SAFETY: each side's positions are elements of its dtype
                // (this function's contract), read as that dtype's type.
                $(DType::$bd => unsafe {
                    product_typed::<$at, $bt>(plan, threads, (a, a_base), (b, b_base), out)
                },)*
                other => unreachable!("{other} is not a narrow input"),
            }
        };
    }
    typed!(I8 => i8, U8 => u8, I16 => i16; I8 => i8, U8 => u8, I16 => i16)
}

/// [`product`] for inputs of types `A` and `B`.
///
/// # Safety
/// `A` and `B` are the types of the sides' dtypes, every position
/// `base + free[i] + ks[k]` of each side is an element of its bytes, and the
/// plan's kernel and packer run on this CPU.
unsafe fn product_typed<A: Narrow, B: Narrow>(
    plan: Plan,
    threads: usize,
    a: (&Side<'_>, isize),
    b: (&Side<'_>, isize),
    out: &mut [i32],
) -> Result<()> {
    // SAFETY: `grouped` asks exactly this function's contract.
    unsafe {
        match plan.grouping {
            Grouping::Quads => grouped::<A, B, 4>(plan, threads, a, b, out),
            Grouping::Pairs => grouped::<A, B, 2>(plan, threads, a, b, out),
        }
    }
}

/// One operand's elements through a pointer at its batch element's base.
struct Reader<'a, T> {
    base: *const T,
    free: &'a [isize],
    ks: &'a [isize],
}

impl<T: Narrow> Reader<'_, T> {
    /// The value at free index `f`, depth `s`.
    ///
    /// # Safety
    /// `f < free.len()` and `s < ks.len()`, and the position they name from
    /// `base` is an element of the operand ([`product`]'s contract).
    #[inline(always)]
    unsafe fn at(&self, f: usize, s: usize) -> i32 {
        // SAFETY: f and s index the tables, and the position is an element
        // of the operand, of type T (this function's contract).
        unsafe {
            let off = *self.free.get_unchecked(f) + *self.ks.get_unchecked(s);
            self.base.offset(off).read_unaligned().value()
        }
    }

    /// A pointer to the element at free index `f`, depth `s`.
    ///
    /// # Safety
    /// `f < free.len()` and `s < ks.len()`, and the position they name from
    /// `base` is an element of the operand ([`product`]'s contract).
    #[inline(always)]
    unsafe fn ptr(&self, f: usize, s: usize) -> *const T {
        // SAFETY: f and s index the tables, and the offset names an element
        // of the operand (this function's contract).
        unsafe {
            let off = *self.free.get_unchecked(f) + *self.ks.get_unchecked(s);
            self.base.offset(off)
        }
    }
}

// SAFETY: a reader only reads, through a pointer into bytes borrowed for
// its lifetime (shared between the tasks of one call).
unsafe impl<T> Sync for Reader<'_, T> {}

/// [`product`] with `G` steps per word (4: quads, 2: pairs).
///
/// # Safety
/// As for [`product_typed`]: `A` and `B` are the types of the sides'
/// dtypes, every position `base + free[i] + ks[k]` of each side is an
/// element of its bytes, and the plan's kernel and packer run on this CPU.
unsafe fn grouped<A: Narrow, B: Narrow, const G: usize>(
    plan: Plan,
    threads: usize,
    (a, a_base): (&Side<'_>, isize),
    (b, b_base): (&Side<'_>, isize),
    out: &mut [i32],
) -> Result<()> {
    let (r, c, k) = (a.free.len(), b.free.len(), a.ks.len());
    let tier = plan.tier;
    if r == 0 || c == 0 || k == 0 {
        out.fill(0);
        return Ok(());
    }
    let bits = 32 / G;
    let mask = if G == 4 { 0xff } else { 0xffff };
    // The offsets of the quads (see the module's docs); pairs need none.
    let (oa, sb) = match plan.grouping {
        Grouping::Quads => (
            if a.dtype == DType::I8 { 128 } else { 0 },
            if b.dtype == DType::U8 { 128 } else { 0 },
        ),
        Grouping::Pairs => (0, 0),
    };
    let ra = Reader::<A> {
        // SAFETY: the base is a position of the operand (r, c and k are not
        // 0, so its first element exists, at the base).
        base: unsafe { a.src.ptr::<A>(a_base) },
        free: a.free,
        ks: a.ks,
    };
    // a's depth steps consecutive (a row-major a): words read whole.
    let a_ks_unit = super::pack::unit(a.ks);
    let rb = Reader::<B> {
        // SAFETY: the base is a position of b (r, c and k are not 0, so its
        // first element exists, at the base).
        base: unsafe { b.src.ptr::<B>(b_base) },
        free: b.free,
        ks: b.ks,
    };
    // b's columns consecutive (a row-major b): rows read in place.
    let b_free_unit = super::pack::unit(b.free);
    let (mr, nr) = (plan.mr, plan.nr);
    let groups = k.div_ceil(G);
    let threads = if r.saturating_mul(c).saturating_mul(k) < PARALLEL_MIN {
        1
    } else {
        threads.max(1)
    };
    let row_panels = r.div_ceil(mr);
    let parts = threads.min(row_panels).max(1);
    let panels_per_part = row_panels.div_ceil(parts);
    let mut bpack: Vec<u32> = super::try_vec(NC.div_ceil(nr) * nr * KG_BLOCK, "packed b")?;
    let mut col_sums = super::try_filled(if oa != 0 { c } else { 0 }, 0i32, "column sums")?;
    // a packed whole for each depth block (row panel, group, row), once;
    // b block by block of NC columns (panel, group, column), once.
    let mut apack: Vec<u32> =
        super::try_filled(row_panels * mr * KG_BLOCK.min(groups), 0, "packed a")?;
    // Every fallible step is above: `out` (possibly the caller's
    // destination) is written from here on only.
    out.fill(0);
    for g0 in (0..groups).step_by(KG_BLOCK) {
        let kgb = KG_BLOCK.min(groups - g0);
        let panel_words = kgb * mr;
        // Whole words of consecutive depth (an 8-bit a in quads, an i16 a
        // in pairs) are 32-bit elements moved as they are (an i8 a's offset
        // of +128 flips each byte's top bit): the f32 panel packers' in-
        // register transposes do the interleaving.
        let whole_words = a_ks_unit && (g0 + kgb) * G <= k && size_of::<A>() * G == 4;
        let word_packer = if whole_words {
            a_word_packer(tier)
        } else {
            None
        };
        let flip = if oa != 0 { 0x8080_8080u32 } else { 0 };
        let pack_a = |part: usize, chunk: &mut [u32]| {
            for (q, panel) in chunk.chunks_mut(panel_words).enumerate() {
                let i0 = (part * panels_per_part + q) * mr;
                if let Some(pack) = word_packer {
                    let rows = mr.min(r.saturating_sub(i0));
                    if rows > 0 && mr <= 16 {
                        let mut ptrs = [core::ptr::null::<f32>(); 16];
                        for (t, pt) in ptrs.iter_mut().enumerate().take(rows) {
                            // SAFETY: row i0 + t < r, its depth steps g0·G..
                            // (g0 + kgb)·G ≤ k consecutive.
                            *pt = unsafe { ra.ptr(i0 + t, g0 * G) } as *const f32;
                        }
                        // SAFETY: each row holds kgb words; the panel mr·kgb;
                        // the packer runs on this CPU (the plan's tier).
                        unsafe { pack(&ptrs[..rows], kgb, panel.as_mut_ptr() as *mut f32, mr) };
                        if flip != 0 {
                            for w in panel.iter_mut() {
                                *w ^= flip;
                            }
                            // Rows past r hold +0 words, not offset zeros.
                            for qq in 0..kgb {
                                for t in rows..mr {
                                    panel[qq * mr + t] = 0;
                                }
                            }
                        }
                        continue;
                    }
                }
                for t in 0..mr {
                    let i = i0 + t;
                    for qq in 0..kgb {
                        let s0 = (g0 + qq) * G;
                        let mut w = 0u32;
                        if i >= r {
                        } else if a_ks_unit && s0 + G <= k {
                            // SAFETY: i < r and s0 + G <= k, the depth steps
                            // consecutive.
                            w = unsafe { word_at::<A, G>(ra.ptr(i, s0), oa) };
                        } else {
                            for u in 0..G.min(k - s0) {
                                // SAFETY: i < r, s0 + u < k.
                                let v = unsafe { ra.at(i, s0 + u) } + oa;
                                w |= (v as u32 & mask) << (bits * u);
                            }
                        }
                        panel[qq * mr + t] = w;
                    }
                }
            }
        };
        let apack = &mut apack[..row_panels * panel_words];
        if parts == 1 {
            pack_a(0, apack);
        } else {
            use rayon::prelude::*;
            apack
                .par_chunks_mut(panels_per_part * panel_words)
                .enumerate()
                .for_each(|(part, chunk)| pack_a(part, chunk));
        }
        let apack = &apack[..];
        for j0 in (0..c).step_by(NC) {
            let nc = NC.min(c - j0);
            let npanels = nc.div_ceil(nr);
            // b's column sums (of the offset values) on the way.
            bpack.clear();
            for p in 0..npanels {
                let jp = j0 + p * nr;
                let cn = nr.min(c - jp);
                #[cfg(target_arch = "x86_64")]
                if G == 4
                    && nr == 32
                    && cn == 32
                    && b_free_unit
                    && size_of::<B>() == 1
                    && (g0 + kgb) * G <= k
                    && crate::tier::runs_avx2(tier)
                {
                    let flip = if sb != 0 { 0x80u8 } else { 0 };
                    let at = bpack.len();
                    bpack.resize(at + kgb * 32, 0);
                    for q in 0..kgb {
                        let s = (g0 + q) * 4;
                        // SAFETY: columns jp..jp + 32 ≤ c of steps s..s + 4
                        // ≤ k, consecutive; the destination holds 32 words;
                        // the tier runs AVX2.
                        unsafe {
                            let rows = [
                                rb.ptr(jp, s) as *const u8,
                                rb.ptr(jp, s + 1) as *const u8,
                                rb.ptr(jp, s + 2) as *const u8,
                                rb.ptr(jp, s + 3) as *const u8,
                            ];
                            interleave_bytes_32(rows, flip, bpack[at + q * 32..].as_mut_ptr())
                        };
                    }
                    if oa != 0 {
                        for s in (g0 * G)..((g0 + kgb) * G) {
                            for (x, cs) in col_sums[jp..jp + cn].iter_mut().enumerate() {
                                // SAFETY: jp + x < c, s < k.
                                *cs = cs.wrapping_add(unsafe { rb.at(jp + x, s) } - sb);
                            }
                        }
                    }
                    continue;
                }
                for q in 0..kgb {
                    let mut w = [0u32; 32];
                    for t in 0..G.min(k - (g0 + q) * G) {
                        let s = (g0 + q) * G + t;
                        if b_free_unit {
                            // SAFETY: jp + x < c and s < k for every x < cn,
                            // and the columns are consecutive.
                            let row = unsafe { rb.ptr(jp, s) };
                            for (x, wx) in w[..cn].iter_mut().enumerate() {
                                // SAFETY: x < cn: column jp + x < c of step
                                // s, consecutive from `row`.
                                let v = unsafe { row.add(x).read_unaligned() }.value() - sb;
                                *wx |= (v as u32 & mask) << (bits * t);
                            }
                        } else {
                            for (x, wx) in w[..cn].iter_mut().enumerate() {
                                // SAFETY: jp + x < c and s < k.
                                let v = unsafe { rb.at(jp + x, s) } - sb;
                                *wx |= (v as u32 & mask) << (bits * t);
                            }
                        }
                        if oa != 0 {
                            for (x, cs) in col_sums[jp..jp + cn].iter_mut().enumerate() {
                                // SAFETY: jp + x < c and s < k: inside b's
                                // tables, an element of b.
                                *cs = cs.wrapping_add(unsafe { rb.at(jp + x, s) } - sb);
                            }
                        }
                    }
                    bpack.extend_from_slice(&w[..nr]);
                }
            }
            let bpack = &bpack[..];
            // Threads take disjoint rows of panels.
            let task = |part: usize, rows: &mut [i32]| {
                let mut edge = [0i32; 14 * 32];
                let first = part * panels_per_part;
                for (q, tile_rows) in rows.chunks_mut(mr * c).enumerate() {
                    let rows_here = tile_rows.len() / c;
                    let ap = apack[(first + q) * panel_words..].as_ptr();
                    for p in 0..npanels {
                        let cols_here = nr.min(nc - p * nr);
                        let bp = bpack[p * kgb * nr..].as_ptr();
                        let at = j0 + p * nr;
                        if rows_here == mr && cols_here == nr {
                            // SAFETY: a full tile inside `tile_rows` (row
                            // stride c); the panels hold kgb groups.
                            unsafe {
                                (plan.kernel)(kgb, ap, bp, tile_rows.as_mut_ptr().add(at), c)
                            };
                        } else {
                            // An edge tile: through a full tile of scratch.
                            let e = &mut edge[..mr * nr];
                            for x in 0..rows_here {
                                e[x * nr..x * nr + cols_here]
                                    .copy_from_slice(&tile_rows[x * c + at..][..cols_here]);
                            }
                            // SAFETY: `e` is a full MR × NR tile of row
                            // stride nr; the panels hold kgb groups.
                            unsafe { (plan.kernel)(kgb, ap, bp, e.as_mut_ptr(), nr) };
                            for x in 0..rows_here {
                                tile_rows[x * c + at..][..cols_here]
                                    .copy_from_slice(&e[x * nr..x * nr + cols_here]);
                            }
                        }
                    }
                }
            };
            if parts == 1 {
                task(0, out);
            } else {
                use rayon::prelude::*;
                out.par_chunks_mut(panels_per_part * mr * c)
                    .enumerate()
                    .for_each(|(part, rows)| task(part, rows));
            }
        }
    }
    // The offsets taken back, exactly modulo 2^32.
    if oa != 0 || sb != 0 {
        let constant = (k as i32).wrapping_mul(oa).wrapping_mul(sb);
        for (i, row) in out.chunks_mut(c).enumerate() {
            let mut s = 0i32;
            if sb != 0 {
                for kk in 0..k {
                    // SAFETY: i < r, kk < k.
                    s = s.wrapping_add(unsafe { ra.at(i, kk) } + oa);
                }
            }
            let row_fix = s.wrapping_mul(sb).wrapping_sub(constant);
            if oa != 0 {
                for (o, f) in row.iter_mut().zip(&col_sums) {
                    *o = o.wrapping_add(row_fix).wrapping_sub(f.wrapping_mul(oa));
                }
            } else {
                for o in row.iter_mut() {
                    *o = o.wrapping_add(row_fix);
                }
            }
        }
    }
    Ok(())
}

/// The packer of a panels of whole 32-bit words on `tier` (the f32 panel
/// packers move bits only), if it has one.
fn a_word_packer(tier: Tier) -> Option<super::pack::PackRows<f32>> {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::tier::runs_avx512(tier) {
            return Some(super::pack::pack_rows_f32_avx512);
        }
        if crate::tier::runs_avx2(tier) {
            return Some(super::pack::pack6_f32_avx2);
        }
    }
    let _ = tier;
    None
}

/// Interleave four rows of 32 bytes (four depth steps of 32 columns) into
/// 32 words, column x's word holding its four steps low step first, each
/// byte xored with `flip` (0x80 offsets a u8 by −128 as an i8's bits).
///
/// # Safety
/// Each row is readable for 32 bytes, `out` writable for 32 words; the CPU
/// runs AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn interleave_bytes_32(rows: [*const u8; 4], flip: u8, out: *mut u32) {
    use core::arch::x86_64::*;
    // SAFETY: AVX2 runs; each row's 32 loaded bytes are readable and the 4
    // stores cover `out`'s 32 writable words (this function's contract).
    unsafe {
        let f = _mm256_set1_epi8(flip as i8);
        let r: [__m256i; 4] = core::array::from_fn(|i| {
            _mm256_xor_si256(_mm256_loadu_si256(rows[i] as *const __m256i), f)
        });
        // Bytes of steps 0 and 1, 2 and 3 side by side, then their pairs.
        let t01l = _mm256_unpacklo_epi8(r[0], r[1]);
        let t01h = _mm256_unpackhi_epi8(r[0], r[1]);
        let t23l = _mm256_unpacklo_epi8(r[2], r[3]);
        let t23h = _mm256_unpackhi_epi8(r[2], r[3]);
        let w0 = _mm256_unpacklo_epi16(t01l, t23l); // columns 0-3, 16-19
        let w1 = _mm256_unpackhi_epi16(t01l, t23l); // 4-7, 20-23
        let w2 = _mm256_unpacklo_epi16(t01h, t23h); // 8-11, 24-27
        let w3 = _mm256_unpackhi_epi16(t01h, t23h); // 12-15, 28-31
        let o = out as *mut __m256i;
        _mm256_storeu_si256(o, _mm256_permute2x128_si256::<0x20>(w0, w1));
        _mm256_storeu_si256(o.add(1), _mm256_permute2x128_si256::<0x20>(w2, w3));
        _mm256_storeu_si256(o.add(2), _mm256_permute2x128_si256::<0x31>(w0, w1));
        _mm256_storeu_si256(o.add(3), _mm256_permute2x128_si256::<0x31>(w2, w3));
    }
}

/// The packed kernels: one body, `tile`, over a register of 32-bit lanes
/// and its dot-product step. (Integer registers with VNNI and `vpmaddwd`
/// steps are this engine's alone, so they live here rather than in
/// [`crate::simd`].)
#[cfg(target_arch = "x86_64")]
mod kernels {
    use core::arch::x86_64::*;

    /// A register of `LANES` 32-bit lanes and the step that adds one group's
    /// products to each lane.
    ///
    /// # Safety
    /// This contract covers every method (all are `unsafe fn`) in every
    /// impl: the CPU runs the register's instructions (AVX2 for
    /// [`YPairs`]; AVX-512 F and BW for [`ZPairs`], with VNNI for
    /// [`ZQuads`] and [`ZPairsVnni`]), the caller being compiled with them;
    /// `load`, `load_words` read and `store` writes the `LANES` elements
    /// from `p` (unaligned), `splat` reads the word at `p`.
    trait Dot: Copy {
        /// Lanes per register.
        const LANES: usize;
        /// Every lane 0.
        unsafe fn zero() -> Self;
        /// `LANES` values from `p` (unaligned).
        unsafe fn load(p: *const i32) -> Self;
        /// `LANES` words from `p` (unaligned).
        unsafe fn load_words(p: *const u32) -> Self;
        /// Store to `p` (unaligned).
        unsafe fn store(self, p: *mut i32);
        /// The word `*p` in every lane.
        unsafe fn splat(p: *const u32) -> Self;
        /// `acc + Σ_t a_t·b_t` in each lane, wrapping.
        unsafe fn dot(acc: Self, a: Self, b: Self) -> Self;
    }

    /// 512-bit quads by `vpdpbusd`.
    #[derive(Clone, Copy)]
    struct ZQuads(__m512i);
    /// 512-bit pairs by `vpdpwssd`.
    #[derive(Clone, Copy)]
    struct ZPairsVnni(__m512i);
    /// 512-bit pairs by `vpmaddwd` and `vpaddd`.
    #[derive(Clone, Copy)]
    struct ZPairs(__m512i);
    /// 256-bit pairs by `vpmaddwd` and `vpaddd`.
    #[derive(Clone, Copy)]
    struct YPairs(__m256i);

    macro_rules! zmm_common {
        () => {
            const LANES: usize = 16;
            #[inline(always)]
            unsafe fn zero() -> Self {
                Self(_mm512_setzero_si512())
            }
            #[inline(always)]
            unsafe fn load(p: *const i32) -> Self {
                // SAFETY: the 16 values from `p` are readable (Dot's
                // memory contract); the CPU runs the instructions.
                Self(unsafe { _mm512_loadu_si512(p as *const _) })
            }
            #[inline(always)]
            unsafe fn load_words(p: *const u32) -> Self {
                // SAFETY: the 16 words from `p` are readable (Dot's memory
                // contract); the CPU runs the instructions.
                Self(unsafe { _mm512_loadu_si512(p as *const _) })
            }
            #[inline(always)]
            unsafe fn store(self, p: *mut i32) {
                // SAFETY: the 16 values from `p` are writable (Dot's
                // memory contract); the CPU runs the instructions.
                unsafe { _mm512_storeu_si512(p as *mut _, self.0) }
            }
            #[inline(always)]
            unsafe fn splat(p: *const u32) -> Self {
                // SAFETY: the word at `p` is readable (Dot's memory
                // contract).
                Self(_mm512_set1_epi32(unsafe { p.read_unaligned() } as i32))
            }
        };
    }

    impl Dot for ZQuads {
        zmm_common!();
        #[inline(always)]
        unsafe fn dot(acc: Self, a: Self, b: Self) -> Self {
            // a's bytes unsigned, b's signed: the wrapping (not saturating) form.
            Self(_mm512_dpbusd_epi32(acc.0, a.0, b.0))
        }
    }
    impl Dot for ZPairsVnni {
        zmm_common!();
        #[inline(always)]
        unsafe fn dot(acc: Self, a: Self, b: Self) -> Self {
            Self(_mm512_dpwssd_epi32(acc.0, a.0, b.0))
        }
    }
    impl Dot for ZPairs {
        zmm_common!();
        #[inline(always)]
        unsafe fn dot(acc: Self, a: Self, b: Self) -> Self {
            Self(_mm512_add_epi32(acc.0, _mm512_madd_epi16(a.0, b.0)))
        }
    }
    impl Dot for YPairs {
        const LANES: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> Self {
            Self(_mm256_setzero_si256())
        }
        #[inline(always)]
        unsafe fn load(p: *const i32) -> Self {
            // SAFETY: the 8 values from `p` are readable (Dot's memory
            // contract); the CPU runs AVX2.
            Self(unsafe { _mm256_loadu_si256(p as *const _) })
        }
        #[inline(always)]
        unsafe fn load_words(p: *const u32) -> Self {
            // SAFETY: the 8 words from `p` are readable (Dot's memory
            // contract); the CPU runs AVX2.
            Self(unsafe { _mm256_loadu_si256(p as *const _) })
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut i32) {
            // SAFETY: the 8 values from `p` are writable (Dot's memory
            // contract); the CPU runs AVX2.
            unsafe { _mm256_storeu_si256(p as *mut _, self.0) }
        }
        #[inline(always)]
        unsafe fn splat(p: *const u32) -> Self {
            // SAFETY: the word at `p` is readable (Dot's memory contract).
            Self(_mm256_set1_epi32(unsafe { p.read_unaligned() } as i32))
        }
        #[inline(always)]
        unsafe fn dot(acc: Self, a: Self, b: Self) -> Self {
            Self(_mm256_add_epi32(acc.0, _mm256_madd_epi16(a.0, b.0)))
        }
    }

    /// An `MR × (NV·LANES)` tile: loads it, adds `kg` groups of products
    /// into each lane, stores it.
    ///
    /// # Safety
    /// The CPU runs `R`'s instructions ([`Dot`]'s contract: the caller
    /// enables them); `a` holds `kg·MR` readable words and `b` `kg·NR`
    /// (NR = NV·LANES); `c` addresses an `MR × NR` tile of row stride `rs`,
    /// readable and writable and touched by no one else.
    #[inline(always)]
    unsafe fn tile<R: Dot, const MR: usize, const NV: usize>(
        kg: usize,
        a: *const u32,
        b: *const u32,
        c: *mut i32,
        rs: usize,
    ) {
        let w = R::LANES;
        // SAFETY: R's instructions run (this function's contract); the tile
        // is touched at row r < MR, columns v·w .. (v + 1)·w ≤ NR, and group
        // g < kg reads a's MR words at g·MR and b's NR at g·NR: all inside
        // what the contract makes readable and writable.
        unsafe {
            let mut acc = [[R::zero(); NV]; MR];
            for (r, row) in acc.iter_mut().enumerate() {
                for (v, x) in row.iter_mut().enumerate() {
                    *x = R::load(c.add(r * rs + v * w));
                }
            }
            let (mut ap, mut bp) = (a, b);
            for _ in 0..kg {
                let mut bv = [R::zero(); NV];
                for (v, x) in bv.iter_mut().enumerate() {
                    *x = R::load_words(bp.add(v * w));
                }
                for (r, row) in acc.iter_mut().enumerate() {
                    let x = R::splat(ap.add(r));
                    for (acc, &bx) in row.iter_mut().zip(&bv) {
                        *acc = R::dot(*acc, x, bx);
                    }
                }
                ap = ap.add(MR);
                bp = bp.add(NV * w);
            }
            for (r, row) in acc.iter().enumerate() {
                for (v, x) in row.iter().enumerate() {
                    x.store(c.add(r * rs + v * w));
                }
            }
        }
    }

    /// AVX-512 VNNI quads, 14 × 32.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F, BW and VNNI; `a` holds `kg·MR` readable words and `b`
    /// `kg·NR`; `c` addresses the `MR × NR` tile of row stride `rs`,
    /// readable and writable and touched by no one else ([`super::Kernel`]).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn avx512_quads_14x32(
        kg: usize,
        a: *const u32,
        b: *const u32,
        c: *mut i32,
        rs: usize,
    ) {
        // SAFETY: this function enables the register's instructions, which
        // run (its contract), and `tile` asks the Kernel contract it was
        // given for this tile.
        unsafe { tile::<ZQuads, 14, 2>(kg, a, b, c, rs) }
    }

    /// AVX-512 VNNI pairs, 14 × 32.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F, BW and VNNI; `a` holds `kg·MR` readable words and `b`
    /// `kg·NR`; `c` addresses the `MR × NR` tile of row stride `rs`,
    /// readable and writable and touched by no one else ([`super::Kernel`]).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn avx512_vnni_pairs_14x32(
        kg: usize,
        a: *const u32,
        b: *const u32,
        c: *mut i32,
        rs: usize,
    ) {
        // SAFETY: this function enables the register's instructions, which
        // run (its contract), and `tile` asks the Kernel contract it was
        // given for this tile.
        unsafe { tile::<ZPairsVnni, 14, 2>(kg, a, b, c, rs) }
    }

    /// AVX-512 BW pairs, 14 × 32.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F and BW; `a` holds `kg·MR` readable words and `b`
    /// `kg·NR`; `c` addresses the `MR × NR` tile of row stride `rs`,
    /// readable and writable and touched by no one else ([`super::Kernel`]).
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn avx512_pairs_14x32(
        kg: usize,
        a: *const u32,
        b: *const u32,
        c: *mut i32,
        rs: usize,
    ) {
        // SAFETY: this function enables the register's instructions, which
        // run (its contract), and `tile` asks the Kernel contract it was
        // given for this tile.
        unsafe { tile::<ZPairs, 14, 2>(kg, a, b, c, rs) }
    }

    /// AVX2 pairs, 6 × 16.
    ///
    /// # Safety
    /// The CPU runs AVX2; `a` holds `kg·MR` readable words and `b`
    /// `kg·NR`; `c` addresses the `MR × NR` tile of row stride `rs`,
    /// readable and writable and touched by no one else ([`super::Kernel`]).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn avx2_pairs_6x16(
        kg: usize,
        a: *const u32,
        b: *const u32,
        c: *mut i32,
        rs: usize,
    ) {
        // SAFETY: this function enables the register's instructions, which
        // run (its contract), and `tile` asks the Kernel contract it was
        // given for this tile.
        unsafe { tile::<YPairs, 6, 2>(kg, a, b, c, rs) }
    }
}
