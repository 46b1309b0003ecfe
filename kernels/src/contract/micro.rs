//! Register-blocked microkernels. Each one computes an `MR × NR` tile of C
//! from a packed A micro-panel (`kc` steps of `MR` values) and a packed B
//! micro-panel (`kc` steps of `NR` values): it loads the tile, adds the products
//! of step 0, 1, …, kc−1 into each element by one fused multiply-add each, in
//! that order, and stores the tile. A k-block therefore continues the chain the
//! previous k-block left in C, and every tier gives the bits of the plain
//! `mul_add` loop.

use super::acc::Acc;

/// A microkernel: `(kc, a, b, b_step, c, rs, load)` with `c` the tile's
/// first element and `rs` its row stride in elements (columns are
/// consecutive), `b_step` the distance in elements from one k step of b to
/// the next (`NR` for a packed micro-panel; a row stride where the kernel
/// reads an operand's rows in place). With `load` false the chains start
/// from +0 instead of the tile's contents (the same bits as loading a tile
/// of +0).
///
/// # Safety (of calling one)
/// `a` holds `kc·MR` readable elements; `b + t·b_step` holds `NR` readable
/// elements for each step `t < kc`; `c` addresses an `MR × NR` tile of row
/// stride `rs`, writable and not read by anyone else.
pub(crate) type Kernel<T> = unsafe fn(usize, *const T, *const T, isize, *mut T, usize, bool);

/// An edge microkernel: a [`Kernel`] for the first `rows ≤ MR` rows and
/// `cols ≤ NR` columns of a tile, `(kc, a, b, b_step, c, rs, load, rows,
/// cols)`. `a` is packed as for the whole tile (`MR` values per step); b is
/// read and C read and written only in those rows and columns (vector tiers
/// by masked loads and stores), so an edge tile is computed in place, with
/// the bits of the whole tile's kernel.
///
/// # Safety (of calling one)
/// `1 ≤ rows ≤ MR`, `cols ≤ NR`; `a` holds `kc·MR` readable elements;
/// `b + t·b_step` holds `cols` readable elements for each step `t < kc`; `c`
/// addresses a `rows × cols` tile of row stride `rs`, writable and not read
/// by anyone else.
pub(crate) type EdgeKernel<T> =
    unsafe fn(usize, *const T, *const T, isize, *mut T, usize, bool, usize, usize);

/// A tier's microkernel for one dtype: its tile, its edge kernel and, where
/// the tier has one, a faster packer of whole A panels of `mr` rows of
/// consecutive depth.
pub(crate) struct Micro<T> {
    /// The whole-tile kernel.
    pub full: Kernel<T>,
    /// The kernel of partial tiles (same bits).
    pub edge: EdgeKernel<T>,
    /// Rows of a tile.
    pub mr: usize,
    /// Columns of a tile.
    pub nr: usize,
    /// A packer of `mr` rows of consecutive depth, if the tier has one.
    pub pack: Option<super::pack::PackRows<T>>,
}

impl<T> Clone for Micro<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Micro<T> {}

/// The scalar tier's microkernel, the reference: plain `mul_add` in k order.
///
/// # Safety
/// The [`Kernel`] contract: `a` holds `kc·MR` readable elements; `b + t·bs`
/// holds `NR` readable elements for each `t < kc`; `c` addresses an
/// `MR × NR` tile of row stride `rs`, writable and not read by anyone else.
pub(crate) unsafe fn scalar<T: Acc, const MR: usize, const NR: usize>(
    kc: usize,
    a: *const T,
    b: *const T,
    bs: isize,
    c: *mut T,
    rs: usize,
    load: bool,
) {
    let mut t = [[T::ZERO; NR]; MR];
    for (r, row) in t.iter_mut().enumerate().filter(|_| load) {
        for (j, v) in row.iter_mut().enumerate() {
            // SAFETY: r < MR and j < NR: an element of the tile, readable
            // (this function's contract).
            *v = unsafe { *c.add(r * rs + j) };
        }
    }
    for k in 0..kc {
        // SAFETY: k < kc, so a's step k starts inside its kc·MR elements and
        // b's step k at b + k·bs (this function's contract).
        let (ak, bk) = unsafe { (a.add(k * MR), b.offset(k as isize * bs)) };
        for (r, row) in t.iter_mut().enumerate() {
            // SAFETY: r < MR: one of the MR values of a's step k.
            let av = unsafe { *ak.add(r) };
            for (j, v) in row.iter_mut().enumerate() {
                // SAFETY: j < NR: one of the NR values of b's step k.
                *v = v.madd(av, unsafe { *bk.add(j) });
            }
        }
    }
    for (r, row) in t.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            // SAFETY: r < MR and j < NR: an element of the tile, writable
            // (this function's contract).
            unsafe { *c.add(r * rs + j) = *v };
        }
    }
}

/// The scalar tier's edge kernel: the same chains for the first `rows` rows
/// and `cols` columns.
///
/// # Safety
/// The [`EdgeKernel`] contract: `1 ≤ rows ≤ MR`, `cols ≤ NR`; `a` holds
/// `kc·MR` readable elements; `b + t·bs` holds `cols` readable elements for
/// each `t < kc`; `c` addresses a `rows × cols` tile of row stride `rs`,
/// writable and not read by anyone else.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scalar_edge<T: Acc, const MR: usize, const NR: usize>(
    kc: usize,
    a: *const T,
    b: *const T,
    bs: isize,
    c: *mut T,
    rs: usize,
    load: bool,
    rows: usize,
    cols: usize,
) {
    let mut t = [[T::ZERO; NR]; MR];
    for (r, row) in t.iter_mut().enumerate().take(rows).filter(|_| load) {
        for (j, v) in row.iter_mut().enumerate().take(cols) {
            // SAFETY: r < rows and j < cols: an element of the edge tile,
            // readable (this function's contract).
            *v = unsafe { *c.add(r * rs + j) };
        }
    }
    for k in 0..kc {
        // SAFETY: k < kc, so a's step k starts inside its kc·MR elements and
        // b's step k at b + k·bs (this function's contract).
        let (ak, bk) = unsafe { (a.add(k * MR), b.offset(k as isize * bs)) };
        for (r, row) in t.iter_mut().enumerate().take(rows) {
            // SAFETY: r < rows ≤ MR: one of the MR values of a's step k.
            let av = unsafe { *ak.add(r) };
            for (j, v) in row.iter_mut().enumerate().take(cols) {
                // SAFETY: j < cols: one of the cols values of b's step k.
                *v = v.madd(av, unsafe { *bk.add(j) });
            }
        }
    }
    for (r, row) in t.iter().enumerate().take(rows) {
        for (j, v) in row.iter().enumerate().take(cols) {
            // SAFETY: r < rows and j < cols: an element of the edge tile,
            // writable (this function's contract).
            unsafe { *c.add(r * rs + j) = *v };
        }
    }
}

/// The vector microkernels: one body, [`tiles::tile`], over a register of
/// f32 or f64 lanes ([`crate::simd::RealReg`]: 256-bit for AVX2, 512-bit for
/// AVX-512).
#[cfg(target_arch = "x86_64")]
mod tiles {
    use crate::simd::RealReg;

    /// An `MR × (NV·LANES)` tile: `MR·NV` accumulators; each k step loads
    /// `NV` vectors of b, broadcasts a's value for each row and adds one
    /// fused multiply-add per accumulator, in k order. `a` advances by
    /// `a_step` values per step (its packed panel's rows), `b` by `b_step`.
    /// With `EDGE`, only the first `cols` columns of b and of the tile are
    /// read and written (masked loads and stores); else `cols` is unused.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract:
    /// the caller enables it). Memory: the [`super::Kernel`] contract with
    /// this MR and NR = NV·LANES, `a`'s steps `a_step` apart (or, with
    /// `EDGE`, the [`super::EdgeKernel`] contract for `MR` rows and `cols`
    /// columns).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn tile<R: RealReg, const MR: usize, const NV: usize, const EDGE: bool>(
        kc: usize,
        a: *const R::T,
        a_step: usize,
        b: *const R::T,
        b_step: isize,
        c: *mut R::T,
        rs: usize,
        load: bool,
        cols: usize,
    ) {
        let w = R::LANES;
        // SAFETY: R's instructions run (this function's contract). Every
        // load and store is of row r < MR at columns v·w .. (v + 1)·w ≤ NR of
        // the tile, or of b's step t < kc at the same columns, or one value
        // r < MR of a's step: inside what the contract makes readable and
        // writable; with EDGE the masks keep them to columns < cols.
        unsafe {
            let mut masks = [R::first(w); NV];
            if EDGE {
                for (v, m) in masks.iter_mut().enumerate() {
                    *m = R::first(cols.saturating_sub(v * w));
                }
            }
            let mut acc = [[R::zero(); NV]; MR];
            if load {
                for (r, row) in acc.iter_mut().enumerate() {
                    for (v, x) in row.iter_mut().enumerate() {
                        let p = c.add(r * rs + v * w);
                        *x = if EDGE {
                            R::load_m(p, masks[v])
                        } else {
                            R::load(p)
                        };
                    }
                }
            }
            let (mut ap, mut bp) = (a, b);
            for _ in 0..kc {
                let mut bv = [R::zero(); NV];
                for (v, x) in bv.iter_mut().enumerate() {
                    let p = bp.add(v * w);
                    *x = if EDGE {
                        R::load_m(p, masks[v])
                    } else {
                        R::load(p)
                    };
                }
                for (r, row) in acc.iter_mut().enumerate() {
                    let x = R::splat(ap.add(r));
                    for (acc, &bx) in row.iter_mut().zip(&bv) {
                        *acc = R::fmadd(x, bx, *acc);
                    }
                }
                ap = ap.add(a_step);
                bp = bp.wrapping_offset(b_step);
            }
            for (r, row) in acc.iter().enumerate() {
                for (v, x) in row.iter().enumerate() {
                    let p = c.add(r * rs + v * w);
                    if EDGE {
                        x.store_m(p, masks[v]);
                    } else {
                        x.store(p);
                    }
                }
            }
        }
    }

    /// A complex `MR × (NV·LANES)` tile held as real and imaginary planes:
    /// each k step loads the `NV` vectors of b's real parts and of its
    /// imaginary parts, broadcasts a's parts for each row and continues
    /// each output's two chains: real `+ ar·br`, then `− ai·bi`; imaginary
    /// `+ ar·bi`, then `+ ai·br` (one fused multiply-add each).
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract:
    /// the caller enables it). Memory: the [`super::PlaneKernel`] contract
    /// with this MR and NR = NV·LANES.
    #[inline(always)]
    pub(super) unsafe fn ctile<R: RealReg, const MR: usize, const NV: usize>(
        kc: usize,
        a: *const R::T,
        b: *const R::T,
        (cre, cim): (*mut R::T, *mut R::T),
        rs: usize,
    ) {
        let w = R::LANES;
        // SAFETY: R's instructions run (this function's contract). Every
        // load and store is of row r < MR at columns v·w .. (v + 1)·w ≤ NR of
        // a plane, or inside step t < kc of a micro-panel (2·MR values of a,
        // 2·NR of b): what the contract makes readable and writable.
        unsafe {
            let mut re = [[R::zero(); NV]; MR];
            let mut im = [[R::zero(); NV]; MR];
            for r in 0..MR {
                for v in 0..NV {
                    re[r][v] = R::load(cre.add(r * rs + v * w));
                    im[r][v] = R::load(cim.add(r * rs + v * w));
                }
            }
            let (mut ap, mut bp) = (a, b);
            for _ in 0..kc {
                let mut br = [R::zero(); NV];
                let mut bi = [R::zero(); NV];
                for v in 0..NV {
                    br[v] = R::load(bp.add(v * w));
                    bi[v] = R::load(bp.add((NV + v) * w));
                }
                for r in 0..MR {
                    let xr = R::splat(ap.add(2 * r));
                    let xi = R::splat(ap.add(2 * r + 1));
                    for v in 0..NV {
                        re[r][v] = R::fmadd(xr, br[v], re[r][v]);
                        re[r][v] = R::fnmadd(xi, bi[v], re[r][v]);
                        im[r][v] = R::fmadd(xr, bi[v], im[r][v]);
                        im[r][v] = R::fmadd(xi, br[v], im[r][v]);
                    }
                }
                ap = ap.add(2 * MR);
                bp = bp.add(2 * NV * w);
            }
            for r in 0..MR {
                for v in 0..NV {
                    re[r][v].store(cre.add(r * rs + v * w));
                    im[r][v].store(cim.add(r * rs + v * w));
                }
            }
        }
    }

    /// A compensated `MR × (NV·LANES)` tile held as the planes s and c:
    /// each k step loads the `NV` vectors of b, broadcasts a's value for
    /// each row and takes every output through [`super::pair_step`]'s
    /// operations in k order. Two of its additions run as fused
    /// multiply-adds by 1 (`x·1 + y` and `−y·1 + x` round as `x + y` and
    /// `x − y` do, signed zeros included), so that the step's eight
    /// operations split four and four between the multiply and the add
    /// units where a CPU has both.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract:
    /// the caller enables it). Memory: the [`super::PlaneKernel`] contract
    /// with `W` = 1, this MR and NR = NV·LANES.
    #[inline(always)]
    pub(super) unsafe fn ptile<R: RealReg, const MR: usize, const NV: usize>(
        kc: usize,
        a: *const R::T,
        b: *const R::T,
        (cs, cc): (*mut R::T, *mut R::T),
        rs: usize,
    ) where
        R::T: crate::pair::PairFloat,
    {
        let w = R::LANES;
        // SAFETY: R's instructions run (this function's contract). Every
        // load and store is of row r < MR at columns v·w .. (v + 1)·w ≤ NR of
        // a plane, or inside step t < kc of a micro-panel (MR values of a,
        // NR of b): what the contract makes readable and writable.
        unsafe {
            // Opaque to the compiler, which would otherwise fold the fused
            // multiply-adds by 1 back into additions.
            let one = core::hint::black_box(R::set1(<R::T as crate::pair::PairFloat>::ONE));
            let mut s = [[R::zero(); NV]; MR];
            let mut c = [[R::zero(); NV]; MR];
            for r in 0..MR {
                for v in 0..NV {
                    s[r][v] = R::load(cs.add(r * rs + v * w));
                    c[r][v] = R::load(cc.add(r * rs + v * w));
                }
            }
            let (mut ap, mut bp) = (a, b);
            for _ in 0..kc {
                let mut bv = [R::zero(); NV];
                for (v, x) in bv.iter_mut().enumerate() {
                    *x = R::load(bp.add(v * w));
                }
                for r in 0..MR {
                    let x = R::splat(ap.add(r));
                    for v in 0..NV {
                        let p = R::mul(x, bv[v]);
                        let s0 = s[r][v];
                        let s1 = R::add(s0, p);
                        let bb = R::sub(s1, s0);
                        let t = R::sub(s0, R::fnmadd(bb, one, s1));
                        let w = R::fmadd(t, one, R::fmsub(x, bv[v], bb));
                        c[r][v] = R::add(c[r][v], w);
                        s[r][v] = s1;
                    }
                }
                ap = ap.add(MR);
                bp = bp.add(NV * w);
            }
            for r in 0..MR {
                for v in 0..NV {
                    s[r][v].store(cs.add(r * rs + v * w));
                    c[r][v].store(cc.add(r * rs + v * w));
                }
            }
        }
    }
}

/// A real microkernel pair of one tier: `$full` (the whole `MR × NV·LANES`
/// tile) and `$edge` (its edge tiles, one instance of the body per row
/// count), over register `$reg` with the features `$feat` enabled.
macro_rules! real_kernels {
    ($(#[$doc:meta])* $full:ident, $edge:ident, $t:ty, $reg:ty, $mr:literal, $nv:literal,
     $feat:literal, [$($rows:literal),*]) => {
        $(#[$doc])*
        ///
        /// # Safety
        #[doc = concat!("The CPU runs ", $feat, "; the [`Kernel`] contract for this tile")]
        /// (`a`: `kc·MR` readable elements; `b + t·bs`: `NR` readable for
        /// each `t < kc`; `c`: the `MR × NR` tile of row stride `rs`,
        /// writable, read by no one else).
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn $full(
            kc: usize,
            a: *const $t,
            b: *const $t,
            bs: isize,
            c: *mut $t,
            rs: usize,
            load: bool,
        ) {
            // SAFETY: this function enables the register's features, which
            // run (its contract), and `tile` with a_step = MR asks the Kernel
            // contract this function was given.
            unsafe { tiles::tile::<$reg, $mr, $nv, false>(kc, a, $mr, b, bs, c, rs, load, 0) }
        }

        /// The edge tiles of the kernel beside (masked columns, any rows).
        ///
        /// # Safety
        #[doc = concat!("The CPU runs ", $feat, "; the [`EdgeKernel`] contract for this tile")]
        /// (`1 ≤ rows ≤ MR`, `cols ≤ NR`; `a`: `kc·MR` readable elements;
        /// `b + t·bs`: `cols` readable for each `t < kc`; `c`: the
        /// `rows × cols` tile of row stride `rs`, writable, read by no one
        /// else).
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $edge(
            kc: usize,
            a: *const $t,
            b: *const $t,
            bs: isize,
            c: *mut $t,
            rs: usize,
            load: bool,
            rows: usize,
            cols: usize,
        ) {
            // SAFETY: this function enables the register's features, which
            // run (its contract); `tile` with `rows` rows asks the EdgeKernel
            // contract this function was given (1 ≤ rows ≤ MR selects an arm).
            unsafe {
                match rows {
                    $($rows => tiles::tile::<$reg, $rows, $nv, true>(
                        kc, a, $mr, b, bs, c, rs, load, cols,
                    ),)*
                    _ => unreachable!("an edge tile of {rows} rows"),
                }
            }
        }
    };
}

real_kernels!(
    /// AVX2 + FMA, f32, 6 × 16: twelve 8-wide accumulators.
    avx2_f32_6x16, avx2_f32_6x16_edge, f32, core::arch::x86_64::__m256, 6, 2, "avx2,fma",
    [1, 2, 3, 4, 5, 6]
);
real_kernels!(
    /// AVX2 + FMA, f64, 6 × 8: twelve 4-wide accumulators.
    avx2_f64_6x8, avx2_f64_6x8_edge, f64, core::arch::x86_64::__m256d, 6, 2, "avx2,fma",
    [1, 2, 3, 4, 5, 6]
);
real_kernels!(
    /// AVX-512, f32, 14 × 32: twenty-eight 16-wide accumulators of the 32
    /// registers.
    avx512_f32_14x32, avx512_f32_14x32_edge, f32, core::arch::x86_64::__m512, 14, 2,
    "avx512f,avx2,fma", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
);
real_kernels!(
    /// AVX-512, f64, 14 × 16: twenty-eight 8-wide accumulators.
    avx512_f64_14x16, avx512_f64_14x16_edge, f64, core::arch::x86_64::__m512d, 14, 2,
    "avx512f,avx2,fma", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
);
real_kernels!(
    /// AVX-512, f32, 14 × 16 for narrow products: fourteen accumulators.
    avx512_f32_14x16, avx512_f32_14x16_edge, f32, core::arch::x86_64::__m512, 14, 1,
    "avx512f,avx2,fma", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
);
real_kernels!(
    /// AVX-512, f64, 14 × 8 for narrow products: fourteen accumulators.
    avx512_f64_14x8, avx512_f64_14x8_edge, f64, core::arch::x86_64::__m512d, 14, 1,
    "avx512f,avx2,fma", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
);

/// A microkernel over a tile held as two planes: `(kc, a, b, (c0, c1), rs)`
/// continues the two running values of each output of an `MR × NR` tile
/// (planes of row stride `rs`) from a packed a micro-panel (`kc` steps of
/// `MR` elements of `W` parts each, side by side) and a packed b micro-panel
/// (`kc` steps of `NR` first parts, then `NR` second parts where `W` = 2).
///
/// - Complex (`W` = 2, planes real and imaginary): per step, real `+ ar·br`
///   then `− ai·bi`, imaginary `+ ar·bi` then `+ ai·br`, each one fused
///   multiply-add.
/// - Compensated (`W` = 1, planes s and c): per step the Dot2 step of
///   [`pair_step`].
///
/// # Safety (of calling one)
/// `a` holds `W·kc·MR` and `b` `W·kc·NR` readable elements; both planes
/// address `MR × NR` tiles of row stride `rs`, writable and read by no one
/// else.
pub(crate) type PlaneKernel<T> = unsafe fn(usize, *const T, *const T, (*mut T, *mut T), usize);

/// One step of a compensated chain: `s' = s + p` with `p = a·b` rounded,
/// and the part of `s + a·b` that `s'` misses added to the compensation
/// `c`, that part formed as `t + fma(a, b, −b')`, where `b' = s' − s` and
/// `t = s − (s' − b')` are TwoSum's intermediate values (exact: `s + p =
/// s' + t + (p − b')`), so that the fused multiply-add captures both the
/// product's error and TwoSum's trailing part `p − b'` at once (8
/// operations a step, against Dot2's 10; the bound of Ogita–Rump–Oishi's
/// Dot2 with one more rounding a step).
#[inline(always)]
pub(crate) fn pair_step<F: crate::pair::PairFloat>(s: &mut F, c: &mut F, a: F, b: F) {
    let p = a * b;
    let s1 = *s + p;
    let bb = s1 - *s;
    let t = *s - (s1 - bb);
    let v = a.fma(b, -bb);
    *c = *c + (t + v);
    *s = s1;
}

/// The scalar tier's compensated microkernel, the reference: [`pair_step`]
/// for each output, in k order.
///
/// # Safety
/// The [`PlaneKernel`] contract with `W` = 1: `a` holds `kc·MR` and `b`
/// `kc·NR` readable elements; `c_s` and `c_c` address `MR × NR` tiles of
/// row stride `rs`, writable and read by no one else.
pub(crate) unsafe fn pscalar<F: crate::pair::PairFloat, const MR: usize, const NR: usize>(
    kc: usize,
    a: *const F,
    b: *const F,
    (cs, cc): (*mut F, *mut F),
    rs: usize,
) {
    let mut s = [[F::ZERO; NR]; MR];
    let mut c = [[F::ZERO; NR]; MR];
    for r in 0..MR {
        for j in 0..NR {
            // SAFETY: r < MR and j < NR: an element of each plane's tile
            // (this function's contract).
            unsafe {
                s[r][j] = *cs.add(r * rs + j);
                c[r][j] = *cc.add(r * rs + j);
            }
        }
    }
    for k in 0..kc {
        // SAFETY: k < kc, so step k's MR values of a and NR of b lie inside
        // the micro-panels (this function's contract).
        let (ak, bk) = unsafe { (a.add(k * MR), b.add(k * NR)) };
        for r in 0..MR {
            // SAFETY: r < MR: inside a's step k.
            let x = unsafe { *ak.add(r) };
            for j in 0..NR {
                // SAFETY: j < NR: inside b's step k.
                pair_step(&mut s[r][j], &mut c[r][j], x, unsafe { *bk.add(j) });
            }
        }
    }
    for r in 0..MR {
        for j in 0..NR {
            // SAFETY: r < MR and j < NR: an element of each plane's tile,
            // writable (this function's contract).
            unsafe {
                *cs.add(r * rs + j) = s[r][j];
                *cc.add(r * rs + j) = c[r][j];
            }
        }
    }
}

/// The scalar tier's complex microkernel, the reference.
///
/// # Safety
/// The [`PlaneKernel`] contract: `a` holds `2·kc·MR` and `b` `2·kc·NR`
/// readable elements; `c_re` and `c_im` address `MR × NR` tiles of row
/// stride `rs`, writable and read by no one else.
pub(crate) unsafe fn cscalar<T, const MR: usize, const NR: usize>(
    kc: usize,
    a: *const T,
    b: *const T,
    (cre, cim): (*mut T, *mut T),
    rs: usize,
) where
    T: Acc + core::ops::Neg<Output = T>,
{
    let mut re = [[T::ZERO; NR]; MR];
    let mut im = [[T::ZERO; NR]; MR];
    for r in 0..MR {
        for j in 0..NR {
            // SAFETY: r < MR and j < NR: an element of each plane's tile
            // (this function's contract).
            unsafe {
                re[r][j] = *cre.add(r * rs + j);
                im[r][j] = *cim.add(r * rs + j);
            }
        }
    }
    for k in 0..kc {
        // SAFETY: k < kc, so step k's 2·MR values of a and 2·NR of b lie
        // inside the micro-panels (this function's contract).
        let (ak, bk) = unsafe { (a.add(2 * k * MR), b.add(2 * k * NR)) };
        for r in 0..MR {
            // SAFETY: 2·r + 1 < 2·MR: inside a's step k.
            let (xr, xi) = unsafe { (*ak.add(2 * r), *ak.add(2 * r + 1)) };
            for j in 0..NR {
                // SAFETY: NR + j < 2·NR: inside b's step k.
                let (br, bi) = unsafe { (*bk.add(j), *bk.add(NR + j)) };
                re[r][j] = re[r][j].madd(xr, br).madd(-xi, bi);
                im[r][j] = im[r][j].madd(xr, bi).madd(xi, br);
            }
        }
    }
    for r in 0..MR {
        for j in 0..NR {
            // SAFETY: r < MR and j < NR: an element of each plane's tile,
            // writable (this function's contract).
            unsafe {
                *cre.add(r * rs + j) = re[r][j];
                *cim.add(r * rs + j) = im[r][j];
            }
        }
    }
}

/// A [`PlaneKernel`] of one tier: `$tile` (`tiles::ctile`, complex, or
/// `tiles::ptile`, compensated; `$w` parts per packed element) over register
/// `$reg` with the features `$feat` enabled.
macro_rules! plane_kernel {
    ($(#[$doc:meta])* $name:ident, $tile:ident, $w:literal, $t:ty, $reg:ty, $mr:literal,
     $nv:literal, $feat:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        #[doc = concat!("The CPU runs ", $feat, "; the [`PlaneKernel`] contract for this tile")]
        #[doc = concat!("with `W` = ", $w, " (`a`: `W·kc·MR` readable elements, `b`: `W·kc·NR`;")]
        /// both planes: `MR × NR` tiles of row stride `rs`, writable, read
        /// by no one else).
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn $name(
            kc: usize,
            a: *const $t,
            b: *const $t,
            c: (*mut $t, *mut $t),
            rs: usize,
        ) {
            // SAFETY: this function enables the register's features, which
            // run (its contract), and the tile body asks the PlaneKernel
            // contract this function was given.
            unsafe { tiles::$tile::<$reg, $mr, $nv>(kc, a, b, c, rs) }
        }
    };
}

plane_kernel!(
    /// AVX2 + FMA, c64 (f32 planes), 4 × 8.
    avx2_c64_4x8, ctile, 2, f32, core::arch::x86_64::__m256, 4, 1, "avx2,fma"
);
plane_kernel!(
    /// AVX2 + FMA, c128 (f64 planes), 4 × 4.
    avx2_c128_4x4, ctile, 2, f64, core::arch::x86_64::__m256d, 4, 1, "avx2,fma"
);
plane_kernel!(
    /// AVX-512, c64 (f32 planes), 6 × 32: twenty-four accumulators.
    avx512_c64_6x32, ctile, 2, f32, core::arch::x86_64::__m512, 6, 2, "avx512f,avx2,fma"
);
plane_kernel!(
    /// AVX-512, c128 (f64 planes), 6 × 16: twenty-four accumulators.
    avx512_c128_6x16, ctile, 2, f64, core::arch::x86_64::__m512d, 6, 2, "avx512f,avx2,fma"
);

plane_kernel!(
    /// AVX2 + FMA, df32 accumulators (f32 planes), 4 × 8.
    avx2_df32_4x8, ptile, 1, f32, core::arch::x86_64::__m256, 4, 1, "avx2,fma"
);
plane_kernel!(
    /// AVX2 + FMA, dd64 accumulators (f64 planes), 4 × 4.
    avx2_dd64_4x4, ptile, 1, f64, core::arch::x86_64::__m256d, 4, 1, "avx2,fma"
);
plane_kernel!(
    /// AVX-512, df32 accumulators (f32 planes), 4 × 32: sixteen pairs of
    /// accumulators.
    avx512_df32_4x32, ptile, 1, f32, core::arch::x86_64::__m512, 4, 2, "avx512f,avx2,fma"
);
plane_kernel!(
    /// AVX-512, dd64 accumulators (f64 planes), 4 × 16.
    avx512_dd64_4x16, ptile, 1, f64, core::arch::x86_64::__m512d, 4, 2, "avx512f,avx2,fma"
);
