//! The small kernels the eigenvalue and singular value routines share: the
//! conjugated dot product, plane rotations on columns, a 2-norm with no
//! overflow or underflow, Householder reflectors, exact power-of-two
//! scalings. Each is a function of its operands' values alone: fixed chains
//! of fused multiply-adds (exactly rounded on every tier), compiled once per
//! [`Isa`].

use crate::linalg::field::{Field, Real};
use crate::linalg::update::{axpy_sub, Isa};
use crate::linalg::work::Carve;

#[inline(always)]
fn dotc_body<T: Field>(x: &[T], y: &[T]) -> T {
    // Four chains by index modulo 4, joined in a fixed order: the order is a
    // function of the length alone.
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let mut acc = [T::ZERO; 4];
    let mut xc = x.chunks_exact(4);
    let mut yc = y.chunks_exact(4);
    for (xs, ys) in (&mut xc).zip(&mut yc) {
        for l in 0..4 {
            acc[l] = T::fms(acc[l], -xs[l].conj(), ys[l]);
        }
    }
    for (&a, &b) in xc.remainder().iter().zip(yc.remainder()) {
        acc[0] = T::fms(acc[0], -a.conj(), b);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dotc_avx2<T: Field>(x: &[T], y: &[T]) -> T {
    dotc_body(x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f")]
unsafe fn dotc_avx512<T: Field>(x: &[T], y: &[T]) -> T {
    dotc_body(x, y)
}

/// `xᴴy` over the common length (four fixed chains of [`Field::fms`]).
#[inline]
pub(crate) fn dotc<T: Field>(isa: Isa, x: &[T], y: &[T]) -> T {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` comes from a tier this CPU runs, which has
        // AVX2 and FMA (`Isa::of`).
        Isa::Avx2 => unsafe { dotc_avx2(x, y) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` comes from a tier this CPU runs, which has
        // AVX-512 F, AVX2 and FMA (`Isa::of`).
        Isa::Avx512 => unsafe { dotc_avx512(x, y) },
        _ => dotc_body(x, y),
    }
}

#[inline(always)]
fn rot_body<R: Real>(x: &mut [R], y: &mut [R], c: R, s: R) {
    for (x, y) in x.iter_mut().zip(y.iter_mut()) {
        let (a, b) = (*x, *y);
        *x = c.mul_add(a, -(s * b));
        *y = s.mul_add(a, c * b);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn rot_avx2<R: Real>(x: &mut [R], y: &mut [R], c: R, s: R) {
    rot_body(x, y, c, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f")]
unsafe fn rot_avx512<R: Real>(x: &mut [R], y: &mut [R], c: R, s: R) {
    rot_body(x, y, c, s)
}

/// The parts of a slice of scalars as reals (re, im interleaved on a
/// complex type).
#[inline]
pub(crate) fn as_real_mut<T: Field>(x: &mut [T]) -> &mut [T::Real] {
    let parts = std::mem::size_of::<T>() / std::mem::size_of::<T::Real>();
    debug_assert!(parts == 1 || parts == 2);
    debug_assert_eq!(std::mem::align_of::<T>(), std::mem::align_of::<T::Real>());
    // SAFETY: T is f32, f64 (T::Real = T) or `Complex<f32>`,
    // `Complex<f64>` (`#[repr(C)]` pairs of T::Real with T::Real's
    // alignment), so `parts · len` reals cover exactly the slice's bytes,
    // every bit pattern is a valid real, and the borrow is carried over.
    unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr() as *mut T::Real, x.len() * parts) }
}

/// Columns `i` and `j` (`i < j`) of the column-major `rows`-row matrix
/// `v` rotated: `(x, y) ← (c·x − s·y, s·x + c·y)`, each part by one fused
/// multiply-add after a product.
#[inline]
pub(crate) fn rot_cols<T: Field>(
    isa: Isa,
    v: &mut [T],
    rows: usize,
    i: usize,
    j: usize,
    c: T::Real,
    s: T::Real,
) {
    debug_assert!(i < j);
    let (lo, hi) = v.split_at_mut(j * rows);
    let x = as_real_mut(&mut lo[i * rows..(i + 1) * rows]);
    let y = as_real_mut(&mut hi[..rows]);
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` comes from a tier this CPU runs, which has
        // AVX2 and FMA (`Isa::of`).
        Isa::Avx2 => unsafe { rot_avx2(x, y, c, s) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` comes from a tier this CPU runs, which has
        // AVX-512 F, AVX2 and FMA (`Isa::of`).
        Isa::Avx512 => unsafe { rot_avx512(x, y, c, s) },
        _ => rot_body(x, y, c, s),
    }
}

/// Columns `i` and `j` of the column-major `rows`-row matrix `v` swapped.
pub(crate) fn swap_cols<T: Field>(v: &mut [T], rows: usize, i: usize, j: usize) {
    if i == j {
        return;
    }
    let (i, j) = (i.min(j), i.max(j));
    let (lo, hi) = v.split_at_mut(j * rows);
    lo[i * rows..(i + 1) * rows].swap_with_slice(&mut hi[..rows]);
}

/// `2^e` for `e` in `[-1022, 1023]`, as a real of type `R` (exact where `R`
/// holds it).
fn pow2_raw<R: Real>(e: i32) -> R {
    R::of(f64::from_bits(((e + 1023) as u64) << 52))
}

/// `x · 2^e`, by at most a few exact power-of-two products (rounded only
/// where the result is subnormal).
pub(crate) fn scale_pow2<R: Real>(mut x: R, mut e: i32) -> R {
    // Steps that every dtype holds: 2^±100 in f32, 2^±1000 in f64.
    let step = if R::UNIT.to_f64() > 1e-10 { 100 } else { 1000 };
    while e != 0 {
        let k = e.clamp(-step, step);
        x = x * pow2_raw::<R>(k);
        e -= k;
    }
    x
}

/// The binary exponent `t` with `2^t <= x < 2^(t+1)` of a positive finite
/// `x` (subnormals included).
pub(crate) fn exponent<R: Real>(x: R) -> i32 {
    let mut b = x.to_f64();
    let mut bias = 0;
    if b < f64::MIN_POSITIVE {
        b *= 2f64.powi(64);
        bias = 64;
    }
    ((b.to_bits() >> 52) & 0x7ff) as i32 - 1023 - bias
}

/// The exponent `e` that brings `amax` (the largest magnitude of a part)
/// into `[1, 2)` by `· 2^e`, 0 where `amax` is 0.
pub(crate) fn normalising_exponent<R: Real>(amax: R) -> i32 {
    if amax == R::ZERO {
        0
    } else {
        -exponent(amax)
    }
}

/// Every element times `2^e` (exact but where a result is subnormal).
pub(crate) fn scale_slice<T: Field>(x: &mut [T], e: i32) {
    if e == 0 {
        return;
    }
    for r in as_real_mut(x) {
        *r = scale_pow2(*r, e);
    }
}

/// `‖x‖₂` with no overflow or underflow: the sum of squares of `x` scaled
/// by the power of two that brings its largest part near 1.
pub(crate) fn norm2<T: Field>(x: &[T]) -> T::Real {
    let mut amax = T::Real::ZERO;
    for &v in x {
        let (r, i) = (v.re().fabs(), v.im().fabs());
        if r > amax {
            amax = r;
        }
        if i > amax {
            amax = i;
        }
    }
    if amax == T::Real::ZERO {
        return amax;
    }
    let e = -exponent(amax);
    let mut acc = [T::Real::ZERO; 2];
    for &v in x {
        let r = scale_pow2(v.re(), e);
        acc[0] = r.mul_add(r, acc[0]);
        if T::COMPLEX {
            let i = scale_pow2(v.im(), e);
            acc[1] = i.mul_add(i, acc[1]);
        }
    }
    scale_pow2((acc[0] + acc[1]).sqrt(), -e)
}

/// A Householder reflector `H = I − τ v vᴴ` (`v₀ = 1`) with
/// `Hᴴ (α, x) = (β, 0)`, `β` real (LAPACK's `larfg`): `x` is overwritten
/// with `v₁..`, and `(β, τ)` returned; `τ = 0` (H = I) where `x = 0` and
/// `α` is real.
pub(crate) fn larfg<T: Field>(alpha: T, x: &mut [T]) -> (T::Real, T) {
    let mut xnorm = norm2(x);
    let (mut ar, mut ai) = (alpha.re(), alpha.im());
    if xnorm == T::Real::ZERO && ai == T::Real::ZERO {
        return (ar, T::ZERO);
    }
    let mut beta = -(ar.hypot(ai).hypot(xnorm)).copysign(ar);
    let safmin = T::Real::MIN_NORMAL / T::Real::UNIT;
    let rsafmn = T::Real::ONE / safmin;
    let mut knt = 0;
    if beta.fabs() < safmin {
        // Tiny: scale up (exactly, by a power of two) until β is normal.
        while beta.fabs() < safmin && knt < 20 {
            knt += 1;
            for v in x.iter_mut() {
                *v = v.scale(rsafmn);
            }
            beta = beta * rsafmn;
            ar = ar * rsafmn;
            ai = ai * rsafmn;
        }
        xnorm = norm2(x);
        beta = -(ar.hypot(ai).hypot(xnorm)).copysign(ar);
    }
    let tau = T::from_parts((beta - ar) / beta, -ai / beta);
    let scal = T::ONE.div(T::from_parts(ar - beta, ai));
    for v in x.iter_mut() {
        *v = *v * scal;
    }
    for _ in 0..knt {
        beta = beta * safmin;
    }
    (beta, tau)
}

/// The most columns [`sub_projection`] takes.
pub(crate) const PROJECTED: usize = 32;

/// `y ← y − Σ_{l<c} b_l·(a_lᴴ v)`, `(a_l, b_l) = cols(l)`, c ≤
/// [`PROJECTED`]: the c dots [`dotc`] first, then the c column updates
/// [`axpy_sub`], each in increasing l (the blocked reductions' panel step).
pub(crate) fn sub_projection<'a, T: Field + 'a>(
    isa: Isa,
    y: &mut [T],
    c: usize,
    v: &[T],
    cols: impl Fn(usize) -> (&'a [T], &'a [T]),
) {
    debug_assert!(c <= PROJECTED);
    let mut s = [T::ZERO; PROJECTED];
    for (l, x) in s.iter_mut().enumerate().take(c) {
        *x = dotc(isa, cols(l).0, v);
    }
    for (l, &x) in s.iter().enumerate().take(c) {
        axpy_sub(isa, y, cols(l).1, x);
    }
}

#[inline(always)]
fn apply_body<R: Real>(z: &mut [R], ld: usize, block: usize, idx: &[[u32; 2]], c: &[R], s: &[R]) {
    let mut r0 = 0;
    while r0 < ld {
        let r1 = (r0 + block).min(ld);
        for ((&[i, j], &c), &s) in idx.iter().zip(c).zip(s) {
            let (i, j) = (i as usize, j as usize);
            let (lo, hi) = z.split_at_mut(j * ld);
            rot_body(&mut lo[i * ld + r0..i * ld + r1], &mut hi[r0..r1], c, s);
        }
        r0 = r1;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn apply_avx2<R: Real>(
    z: &mut [R],
    ld: usize,
    block: usize,
    idx: &[[u32; 2]],
    c: &[R],
    s: &[R],
) {
    apply_body(z, ld, block, idx, c, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f")]
unsafe fn apply_avx512<R: Real>(
    z: &mut [R],
    ld: usize,
    block: usize,
    idx: &[[u32; 2]],
    c: &[R],
    s: &[R],
) {
    apply_body(z, ld, block, idx, c, s)
}

/// A queue of plane rotations of pairs of columns, applied to a matrix's
/// rows block by block (each row's chain of roundings is the one
/// [`rot_cols`] gives, rotation after rotation, whatever the blocks and
/// whenever the queue is flushed: rows are rotated independently).
pub(crate) struct Rotations<'a, R> {
    idx: &'a mut [[u32; 2]],
    c: &'a mut [R],
    s: &'a mut [R],
    /// Rotations queued.
    len: usize,
}

impl<'a, R: Real> Rotations<'a, R> {
    /// Room for `cap` rotations (none: a queue that applies at once),
    /// carved from `area`.
    pub(crate) fn new(area: &mut Carve<'a>, cap: usize) -> Self {
        Rotations {
            idx: area.take(cap),
            c: area.take(cap),
            s: area.take(cap),
            len: 0,
        }
    }

    /// Queues `(x, y) ← (c·x − s·y, s·x + c·y)` on columns `i` and `j`
    /// (`i < j`) of `z` (`rows` rows), flushing first when the queue is
    /// full.
    #[inline]
    pub(crate) fn push<T: Field<Real = R>>(
        &mut self,
        isa: Isa,
        z: &mut [T],
        rows: usize,
        (i, j): (usize, usize),
        c: R,
        s: R,
    ) {
        debug_assert!(i < j);
        if self.idx.is_empty() {
            rot_cols(isa, z, rows, i, j, c, s);
            return;
        }
        if self.len == self.idx.len() {
            self.flush(isa, z, rows);
        }
        let at = self.len;
        self.idx[at] = [i as u32, j as u32];
        self.c[at] = c;
        self.s[at] = s;
        self.len = at + 1;
    }

    /// Applies the queued rotations to `z` (`rows` rows) and empties the
    /// queue.
    pub(crate) fn flush<T: Field<Real = R>>(&mut self, isa: Isa, z: &mut [T], rows: usize) {
        if self.len == 0 {
            return;
        }
        let parts = if T::COMPLEX { 2 } else { 1 };
        let ld = rows * parts;
        let cols = z.len() / rows.max(1);
        // Row blocks of about 256 KiB of the matrix.
        let block = ((262_144 / std::mem::size_of::<R>()) / cols.max(1)).max(16) & !7;
        let zr = as_real_mut(z);
        let q = self.len;
        let (idx, c, s) = (&self.idx[..q], &self.c[..q], &self.s[..q]);
        match isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Isa::Avx2` comes from a tier this CPU runs, which
            // has AVX2 and FMA (`Isa::of`).
            Isa::Avx2 => unsafe { apply_avx2(zr, ld, block, idx, c, s) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Isa::Avx512` comes from a tier this CPU runs, which
            // has AVX-512 F, AVX2 and FMA (`Isa::of`).
            Isa::Avx512 => unsafe { apply_avx512(zr, ld, block, idx, c, s) },
            _ => apply_body(zr, ld, block, idx, c, s),
        }
        self.len = 0;
    }
}
