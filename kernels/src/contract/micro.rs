//! Register-blocked microkernels. Each one computes an `MR × NR` tile of C
//! from a packed A micro-panel (`kc` steps of `MR` values) and a packed B
//! micro-panel (`kc` steps of `NR` values): it loads the tile, adds the products
//! of step 0, 1, …, kc−1 into each element by one fused multiply-add each, in
//! that order, and stores the tile. A k-block therefore continues the chain the
//! previous k-block left in C, and every tier gives the bits of the plain
//! `mul_add` loop.

use super::acc::Acc;

/// A microkernel: `(kc, a, b, c, rs, load)` with `c` the tile's first element
/// and `rs` its row stride in elements (columns are consecutive). With `load`
/// false the chains start from +0 instead of the tile's contents (the same
/// bits as loading a tile of +0).
///
/// # Safety (of calling one)
/// `a` holds `kc·MR` and `b` `kc·NR` readable elements; `c` addresses an
/// `MR × NR` tile of row stride `rs`, writable and not read by anyone else.
pub(crate) type Kernel<T> = unsafe fn(usize, *const T, *const T, *mut T, usize, bool);

/// The scalar tier's microkernel, the reference: plain `mul_add` in k order.
///
/// # Safety
/// As [`Kernel`].
pub(crate) unsafe fn scalar<T: Acc, const MR: usize, const NR: usize>(
    kc: usize,
    a: *const T,
    b: *const T,
    c: *mut T,
    rs: usize,
    load: bool,
) {
    let mut t = [[T::ZERO; NR]; MR];
    for (r, row) in t.iter_mut().enumerate().filter(|_| load) {
        for (j, v) in row.iter_mut().enumerate() {
            // SAFETY: inside the tile (caller's contract).
            *v = unsafe { *c.add(r * rs + j) };
        }
    }
    for k in 0..kc {
        // SAFETY: k < kc, so both micro-panels hold these elements.
        let (ak, bk) = unsafe { (a.add(k * MR), b.add(k * NR)) };
        for (r, row) in t.iter_mut().enumerate() {
            // SAFETY: as above.
            let av = unsafe { *ak.add(r) };
            for (j, v) in row.iter_mut().enumerate() {
                // SAFETY: as above.
                *v = v.madd(av, unsafe { *bk.add(j) });
            }
        }
    }
    for (r, row) in t.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            // SAFETY: inside the tile.
            unsafe { *c.add(r * rs + j) = *v };
        }
    }
}

/// AVX2 + FMA, f32, 6 × 16: twelve 8-wide accumulators.
///
/// # Safety
/// As [`Kernel`], and the CPU runs AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn avx2_f32_6x16(
    kc: usize,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    rs: usize,
    load: bool,
) {
    use core::arch::x86_64::*;
    // SAFETY: all pointers stay inside the tile and the micro-panels
    // (caller's contract); unaligned loads and stores are used throughout.
    unsafe {
        macro_rules! row {
            ($r:expr) => {
                if load {
                    (
                        _mm256_loadu_ps(c.add($r * rs)),
                        _mm256_loadu_ps(c.add($r * rs + 8)),
                    )
                } else {
                    (_mm256_setzero_ps(), _mm256_setzero_ps())
                }
            };
        }
        let (mut c00, mut c01) = row!(0);
        let (mut c10, mut c11) = row!(1);
        let (mut c20, mut c21) = row!(2);
        let (mut c30, mut c31) = row!(3);
        let (mut c40, mut c41) = row!(4);
        let (mut c50, mut c51) = row!(5);
        let mut ap = a;
        let mut bp = b;
        for _ in 0..kc {
            let b0 = _mm256_loadu_ps(bp);
            let b1 = _mm256_loadu_ps(bp.add(8));
            let x = _mm256_broadcast_ss(&*ap);
            c00 = _mm256_fmadd_ps(x, b0, c00);
            c01 = _mm256_fmadd_ps(x, b1, c01);
            let x = _mm256_broadcast_ss(&*ap.add(1));
            c10 = _mm256_fmadd_ps(x, b0, c10);
            c11 = _mm256_fmadd_ps(x, b1, c11);
            let x = _mm256_broadcast_ss(&*ap.add(2));
            c20 = _mm256_fmadd_ps(x, b0, c20);
            c21 = _mm256_fmadd_ps(x, b1, c21);
            let x = _mm256_broadcast_ss(&*ap.add(3));
            c30 = _mm256_fmadd_ps(x, b0, c30);
            c31 = _mm256_fmadd_ps(x, b1, c31);
            let x = _mm256_broadcast_ss(&*ap.add(4));
            c40 = _mm256_fmadd_ps(x, b0, c40);
            c41 = _mm256_fmadd_ps(x, b1, c41);
            let x = _mm256_broadcast_ss(&*ap.add(5));
            c50 = _mm256_fmadd_ps(x, b0, c50);
            c51 = _mm256_fmadd_ps(x, b1, c51);
            ap = ap.add(6);
            bp = bp.add(16);
        }
        macro_rules! store {
            ($r:expr, $x:expr, $y:expr) => {
                _mm256_storeu_ps(c.add($r * rs), $x);
                _mm256_storeu_ps(c.add($r * rs + 8), $y);
            };
        }
        store!(0, c00, c01);
        store!(1, c10, c11);
        store!(2, c20, c21);
        store!(3, c30, c31);
        store!(4, c40, c41);
        store!(5, c50, c51);
    }
}

/// AVX2 + FMA, f64, 6 × 8: twelve 4-wide accumulators.
///
/// # Safety
/// As [`Kernel`], and the CPU runs AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn avx2_f64_6x8(
    kc: usize,
    a: *const f64,
    b: *const f64,
    c: *mut f64,
    rs: usize,
    load: bool,
) {
    use core::arch::x86_64::*;
    // SAFETY: as in `avx2_f32_6x16`.
    unsafe {
        macro_rules! row {
            ($r:expr) => {
                if load {
                    (
                        _mm256_loadu_pd(c.add($r * rs)),
                        _mm256_loadu_pd(c.add($r * rs + 4)),
                    )
                } else {
                    (_mm256_setzero_pd(), _mm256_setzero_pd())
                }
            };
        }
        let (mut c00, mut c01) = row!(0);
        let (mut c10, mut c11) = row!(1);
        let (mut c20, mut c21) = row!(2);
        let (mut c30, mut c31) = row!(3);
        let (mut c40, mut c41) = row!(4);
        let (mut c50, mut c51) = row!(5);
        let mut ap = a;
        let mut bp = b;
        for _ in 0..kc {
            let b0 = _mm256_loadu_pd(bp);
            let b1 = _mm256_loadu_pd(bp.add(4));
            let x = _mm256_broadcast_sd(&*ap);
            c00 = _mm256_fmadd_pd(x, b0, c00);
            c01 = _mm256_fmadd_pd(x, b1, c01);
            let x = _mm256_broadcast_sd(&*ap.add(1));
            c10 = _mm256_fmadd_pd(x, b0, c10);
            c11 = _mm256_fmadd_pd(x, b1, c11);
            let x = _mm256_broadcast_sd(&*ap.add(2));
            c20 = _mm256_fmadd_pd(x, b0, c20);
            c21 = _mm256_fmadd_pd(x, b1, c21);
            let x = _mm256_broadcast_sd(&*ap.add(3));
            c30 = _mm256_fmadd_pd(x, b0, c30);
            c31 = _mm256_fmadd_pd(x, b1, c31);
            let x = _mm256_broadcast_sd(&*ap.add(4));
            c40 = _mm256_fmadd_pd(x, b0, c40);
            c41 = _mm256_fmadd_pd(x, b1, c41);
            let x = _mm256_broadcast_sd(&*ap.add(5));
            c50 = _mm256_fmadd_pd(x, b0, c50);
            c51 = _mm256_fmadd_pd(x, b1, c51);
            ap = ap.add(6);
            bp = bp.add(8);
        }
        macro_rules! store {
            ($r:expr, $x:expr, $y:expr) => {
                _mm256_storeu_pd(c.add($r * rs), $x);
                _mm256_storeu_pd(c.add($r * rs + 4), $y);
            };
        }
        store!(0, c00, c01);
        store!(1, c10, c11);
        store!(2, c20, c21);
        store!(3, c30, c31);
        store!(4, c40, c41);
        store!(5, c50, c51);
    }
}
