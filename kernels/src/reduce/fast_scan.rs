//! FastCumSum and FastCumProd: prefix sums and products by log-shift blocks.
//!
//! **The order.** Along each line (the axis, any layout), the elements fall
//! in blocks of L = 16 (f32) or 8 (f64) from the line's start, the same on
//! every tier whatever its register width. Within a block of values v, for
//! d = 1, 2, 4, … < L in turn, every v[j] with j ≥ d becomes v[j] ⊕ v[j − d]
//! from the previous step's values (Hillis–Steele); then every output is
//! c ⊕ v[j], c the previous block's last output (the identity, −0 or 1, for
//! the first block: c ⊕ v[j] = v[j] exactly). A partial last block computes
//! as a whole one whose missing elements are the identity. ⊕ is one IEEE
//! addition or multiplication, rounded once.
//!
//! **The bound.** Output i is a sum of i + 1 terms in which every term passes
//! through at most ⌈log2 L⌉ additions inside its block and one per later
//! block: |y_i − exact| ≤ γ(⌈log2 L⌉ + ⌊i/L⌋ + 1)·Σ_{k≤i} |x_k| (γ(m) =
//! m·u/(1 − m·u)); a product's relative error is within the same γ. Against a
//! serial loop (the ScanOp::Sum contract) it gives up bit agreement, not
//! accuracy: within a block the error grows with log L, not L.
//!
//! The vector tiers hold a block in one 512-bit register or two 256-bit ones
//! and run the steps as lane shifts (`RealReg::shift_up_from`), the carry as
//! a splat of the last lane; the scalar tier runs the same steps on an array.
//! Lines are independent and may be split among threads: the bits depend on
//! the values alone.

use crate::array::{ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::error::{Error, Result};
use crate::tier::{Engine, Exec};
use crate::{DType, Tier};

/// Which log-shift scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastScanOp {
    /// FastCumSum: running sums (identity −0).
    Sum,
    /// FastCumProd: running products (identity 1).
    Prod,
}

/// The log-shift scan `op` of `x` along `axis` into `dst` (the same shape
/// and dtype, f32 or f64; any layouts), in the module's order and bound.
/// Refuses (before any write) another dtype ([`Error::DTypeUnsupported`]),
/// a destination of another dtype or shape, an axis out of range and a
/// destination that reaches an element twice.
pub fn fast_scan(
    op: FastScanOp,
    axis: usize,
    x: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let dtype = x.dtype();
    if !matches!(dtype, DType::F32 | DType::F64) {
        return Err(Error::DTypeUnsupported {
            operand: "fast_scan: x".into(),
            dtype,
            reason: "the log-shift scans take f32 (blocks of 16) and f64 (blocks of 8)".into(),
        });
    }
    if dst.dtype() != dtype {
        return Err(Error::DTypeMismatch {
            operand: "fast_scan: dst".into(),
            expected: dtype,
            got: dst.dtype(),
        });
    }
    if dst.shape() != x.shape() {
        return Err(Error::Shape {
            operand: "fast_scan: dst".into(),
            shape: dst.shape().to_vec(),
            target: x.shape().to_vec(),
        });
    }
    crate::checks::check_axis(axis, x.shape().len(), "fast_scan: x")?;
    crate::checks::check_destination(dst)?;
    let tier = exec.resolve_tier_for(Engine::Scan)?;
    let total = x.layout().len();
    if total == 0 {
        return Ok(());
    }
    let threads = if total >= 1 << 16 {
        exec.thread_count()
    } else {
        1
    };
    // A C-contiguous destination scanned along its last axis: x copied into
    // it (a cast of the same dtype), then every line scanned in place.
    let rank = x.shape().len();
    if axis == rank - 1 && crate::array::c_contiguous(dst.shape(), dst.strides()) {
        let n = x.shape()[axis];
        let item = dtype.info().item_bytes;
        let off = dst.layout().offset * item;
        let bytes = total * item;
        // x C-contiguous too: its lines read in place, scanned into dst's.
        if crate::array::c_contiguous(x.shape(), x.strides()) {
            let xo = x.layout().offset * item;
            let xb = &x.data()[xo..xo + bytes];
            let data = &mut dst.data_mut()[off..off + bytes];
            let done = match dtype {
                DType::F32 => {
                    // SAFETY: both hold `total` f32 and every bit pattern is
                    // a valid f32; used only where both are aligned.
                    let ((p1, xs, _), (p2, ds, _)) =
                        unsafe { (xb.align_to::<f32>(), data.align_to_mut::<f32>()) };
                    let ok = p1.is_empty() && p2.is_empty();
                    if ok {
                        lines2(xs, ds, n, threads, |a, b| f32_line(tier, op, Some(a), b));
                    }
                    ok
                }
                _ => {
                    // SAFETY: as above, for f64.
                    let ((p1, xs, _), (p2, ds, _)) =
                        unsafe { (xb.align_to::<f64>(), data.align_to_mut::<f64>()) };
                    let ok = p1.is_empty() && p2.is_empty();
                    if ok {
                        lines2(xs, ds, n, threads, |a, b| f64_line(tier, op, Some(a), b));
                    }
                    ok
                }
            };
            if done {
                return Ok(());
            }
        }
        cast(CastMode::Default, x, dst, exec)?;
        let data = &mut dst.data_mut()[off..off + bytes];
        match dtype {
            DType::F32 => {
                // SAFETY: the bytes hold `total` f32 (dst's dtype) and every
                // bit pattern is a valid f32; the middle part is aligned.
                let (pre, vals, _) = unsafe { data.align_to_mut::<f32>() };
                if pre.is_empty() {
                    lines(vals, n, threads, |l| f32_line(tier, op, None, l));
                    return Ok(());
                }
            }
            _ => {
                // SAFETY: as above, for f64.
                let (pre, vals, _) = unsafe { data.align_to_mut::<f64>() };
                if pre.is_empty() {
                    lines(vals, n, threads, |l| f64_line(tier, op, None, l));
                    return Ok(());
                }
            }
        }
        // A misaligned destination: through the copy below (x is read
        // again, dst was only written with x's values).
    }
    // The axis last: lines contiguous in a C-ordered copy.
    let moved = |shape: &[usize], strides: &[isize]| {
        let (mut sh, mut st): (Vec<usize>, Vec<isize>) = (Vec::new(), Vec::new());
        for i in (0..shape.len()).filter(|&i| i != axis) {
            sh.push(shape[i]);
            st.push(strides[i]);
        }
        sh.push(shape[axis]);
        st.push(strides[axis]);
        (sh, st)
    };
    let (shape, xs) = moved(x.shape(), x.strides());
    let n = shape[shape.len() - 1];
    let xv = ArrayView::new(dtype, &shape, &xs, x.layout().offset, x.data())?;
    let threads = if total >= 1 << 16 {
        exec.thread_count()
    } else {
        1
    };
    match dtype {
        DType::F32 => {
            let mut buf = crate::alloc::try_filled(total, 0f32, "fast_scan: the lines")?;
            cast(
                CastMode::Default,
                &xv,
                &mut ArrayViewMut::from_slice(&mut buf, &shape)?,
                exec,
            )?;
            lines(&mut buf, n, threads, |l| f32_line(tier, op, None, l));
            store(&buf, dst, axis, &shape, exec)
        }
        _ => {
            let mut buf = crate::alloc::try_filled(total, 0f64, "fast_scan: the lines")?;
            cast(
                CastMode::Default,
                &xv,
                &mut ArrayViewMut::from_slice(&mut buf, &shape)?,
                exec,
            )?;
            lines(&mut buf, n, threads, |l| f64_line(tier, op, None, l));
            store(&buf, dst, axis, &shape, exec)
        }
    }
}

/// Every line of `n` of `buf` through `f`, on up to `threads` threads.
fn lines<T: Send>(buf: &mut [T], n: usize, threads: usize, f: impl Fn(&mut [T]) + Sync) {
    if threads <= 1 || buf.len() <= n {
        buf.chunks_mut(n).for_each(f);
    } else {
        use rayon::prelude::*;
        let per = buf.len().div_ceil(n).div_ceil(threads) * n;
        buf.par_chunks_mut(per)
            .for_each(|part| part.chunks_mut(n).for_each(&f));
    }
}

/// Every line of `n` of `src` through `f` into the same line of `dst`, on
/// up to `threads` threads.
fn lines2<T: Send + Sync>(
    src: &[T],
    dst: &mut [T],
    n: usize,
    threads: usize,
    f: impl Fn(&[T], &mut [T]) + Sync,
) {
    if threads <= 1 || dst.len() <= n {
        for (a, b) in src.chunks(n).zip(dst.chunks_mut(n)) {
            f(a, b);
        }
    } else {
        use rayon::prelude::*;
        let per = dst.len().div_ceil(n).div_ceil(threads) * n;
        dst.par_chunks_mut(per)
            .zip(src.par_chunks(per))
            .for_each(|(d, s)| {
                for (a, b) in s.chunks(n).zip(d.chunks_mut(n)) {
                    f(a, b);
                }
            });
    }
}

/// The C-ordered results (axis last) into `dst`'s layout.
fn store<T: crate::Element>(
    buf: &[T],
    dst: &mut ArrayViewMut<'_>,
    axis: usize,
    moved: &[usize],
    exec: &Exec,
) -> Result<()> {
    let rank = dst.shape().len();
    let mut st: Vec<isize> = (0..rank)
        .filter(|&i| i != axis)
        .map(|i| dst.strides()[i])
        .collect();
    st.push(dst.strides()[axis]);
    let offset = dst.layout().offset;
    let dtype = dst.dtype();
    let src = ArrayView::from_slice(buf, moved)?;
    let mut out = ArrayViewMut::new(dtype, moved, &st, offset, dst.data_mut())?;
    cast(CastMode::Default, &src, &mut out, exec)
}

/// The scalar tier's block: the module's steps on an array of `L` values,
/// then the carry `c`; returns the block's last output.
#[inline(always)]
fn block_scalar<T: Copy, const L: usize>(v: &mut [T; L], c: T, op: impl Fn(T, T) -> T) -> T {
    let mut d = 1;
    while d < L {
        for j in (d..L).rev() {
            v[j] = op(v[j], v[j - d]);
        }
        d *= 2;
    }
    for x in v.iter_mut() {
        *x = op(c, *x);
    }
    v[L - 1]
}

/// One line on the scalar tier.
fn line_scalar<T: Copy, const L: usize>(
    line: &mut [T],
    identity: T,
    op: impl Fn(T, T) -> T + Copy,
) {
    let mut c = identity;
    for chunk in line.chunks_mut(L) {
        let mut v = [identity; L];
        v[..chunk.len()].copy_from_slice(chunk);
        c = block_scalar(&mut v, c, op);
        let r = chunk.len();
        chunk.copy_from_slice(&v[..r]);
    }
}

/// `$name(tier, op, src, dst)`: one `$t` line, `src` scanned into `dst` (of
/// its length), or `dst` in place where `src` is None, on the tier's
/// registers or the scalar blocks of `$l`.
macro_rules! line_dispatch {
    ($name:ident, $t:ty, $l:literal) => {
        fn $name(tier: Tier, op: FastScanOp, src: Option<&[$t]>, dst: &mut [$t]) {
            let n = dst.len();
            #[cfg(target_arch = "x86_64")]
            {
                let from = src.map_or(dst.as_ptr(), |s| s.as_ptr());
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the tier runs AVX-512 F with AVX2 and FMA on
                    // this CPU; n elements from `from` are readable (src
                    // holds dst's length) and from dst writable.
                    unsafe { zmm::$name(op, from, dst.as_mut_ptr(), n) };
                    return;
                }
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: the tier runs AVX2 and FMA on this CPU; as
                    // above.
                    unsafe { ymm::$name(op, from, dst.as_mut_ptr(), n) };
                    return;
                }
            }
            let _ = tier;
            if let Some(s) = src {
                dst.copy_from_slice(s);
            }
            match op {
                FastScanOp::Sum => line_scalar::<$t, $l>(dst, -0.0, |a, b| a + b),
                FastScanOp::Prod => line_scalar::<$t, $l>(dst, 1.0, |a, b| a * b),
            }
        }
    };
}

line_dispatch!(f32_line, f32, 16);
line_dispatch!(f64_line, f64, 8);

/// The vector body over registers `R`, `K` of them a block (L = K · LANES).
/// (Plain generic functions, no closures: a closure is a function of its own
/// and would not inherit the caller's target features.)
#[cfg(target_arch = "x86_64")]
mod vector {
    use crate::simd::RealReg;

    /// `a ⊕ b`.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set, which the caller enables.
    #[inline(always)]
    unsafe fn op<R: RealReg, const PROD: bool>(a: R, b: R) -> R {
        // SAFETY: the caller runs R's instruction set.
        unsafe {
            if PROD {
                R::mul(a, b)
            } else {
                R::add(a, b)
            }
        }
    }

    /// One block of `K · LANES` elements from `src` into `p` (the same
    /// address, or apart), joined to the carry `c`; returns the new carry
    /// (its last output in every lane).
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set, which the caller enables; the
    /// `K · LANES` elements from `src` are readable and those from `p`
    /// writable (every load comes before any store).
    #[inline(always)]
    unsafe fn block<R: RealReg, const K: usize, const PROD: bool>(
        src: *const R::T,
        p: *mut R::T,
        c: R,
        fill: R,
    ) -> R {
        let w = R::LANES;
        let l = K * w;
        // SAFETY: the caller runs R's instruction set; every load and store
        // addresses one of the `l` elements from `p` (this function's
        // contract).
        unsafe {
            let mut r = [fill; K];
            for (k, reg) in r.iter_mut().enumerate() {
                *reg = R::load(src.add(k * w));
            }
            let mut d = 1;
            while d < l {
                let mut s = [fill; K];
                for k in 0..K {
                    let below = if k == 0 { fill } else { r[k - 1] };
                    s[k] = r[k].shift_up_from(below, d);
                }
                for k in 0..K {
                    r[k] = op::<R, PROD>(r[k], s[k]);
                }
                d *= 2;
            }
            for (k, reg) in r.iter_mut().enumerate() {
                *reg = op::<R, PROD>(c, *reg);
                reg.store(p.add(k * w));
            }
            r[K - 1].splat_last()
        }
    }

    /// One line of `n` elements from `src` into `dst` (the same address, or
    /// apart), blocks of `K` registers; `identity` −0 (sums) or 1
    /// (products).
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set, which the caller enables; `n`
    /// elements from `src` are readable and from `dst` writable.
    #[inline(always)]
    pub(super) unsafe fn line<R: RealReg, const K: usize, const PROD: bool>(
        src: *const R::T,
        dst: *mut R::T,
        n: usize,
        identity: R::T,
    ) {
        let l = K * R::LANES;
        // SAFETY: the caller runs R's instruction set.
        let fill = unsafe { R::set1(identity) };
        let mut c = fill;
        let whole = n / l * l;
        let mut i = 0;
        while i < whole {
            // SAFETY: the `l` elements from i lie in both lines; the caller
            // runs R's instruction set.
            c = unsafe { block::<R, K, PROD>(src.add(i), dst.add(i), c, fill) };
            i += l;
        }
        if whole < n {
            // The last, partial block through a padded copy.
            let mut tmp = [identity; 16];
            let r = n - whole;
            // SAFETY: the r elements from whole lie in both lines; `tmp`
            // holds 16 ≥ l elements; the caller runs R's instruction set.
            unsafe {
                core::ptr::copy(src.add(whole), tmp.as_mut_ptr(), r);
                block::<R, K, PROD>(tmp.as_ptr(), tmp.as_mut_ptr(), c, fill);
                core::ptr::copy(tmp.as_ptr(), dst.add(whole), r);
            }
        }
    }
}

macro_rules! scan_kernels {
    ($(#[$doc:meta])* $name:ident, $f32reg:ty, $k32:literal, $f64reg:ty, $k64:literal, $feat:literal) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use super::{vector, FastScanOp};

            /// One f32 line of n elements from src into dst, blocks of 16.
            ///
            /// # Safety
            #[doc = concat!("The CPU runs ", $feat, "; n elements from src are readable and from dst writable.")]
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn f32_line(op: FastScanOp, src: *const f32, dst: *mut f32, n: usize) {
                // SAFETY: this function enables the register's features,
                // which the CPU runs, and its caller passes n elements from
                // src readable and from dst writable (its contract).
                unsafe {
                    match op {
                        FastScanOp::Sum => vector::line::<$f32reg, $k32, false>(src, dst, n, -0.0),
                        FastScanOp::Prod => vector::line::<$f32reg, $k32, true>(src, dst, n, 1.0),
                    }
                }
            }

            /// One f64 line of n elements from src into dst, blocks of 8.
            ///
            /// # Safety
            #[doc = concat!("The CPU runs ", $feat, "; n elements from src are readable and from dst writable.")]
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn f64_line(op: FastScanOp, src: *const f64, dst: *mut f64, n: usize) {
                // SAFETY: this function enables the register's features,
                // which the CPU runs, and its caller passes n elements from
                // src readable and from dst writable (its contract).
                unsafe {
                    match op {
                        FastScanOp::Sum => vector::line::<$f64reg, $k64, false>(src, dst, n, -0.0),
                        FastScanOp::Prod => vector::line::<$f64reg, $k64, true>(src, dst, n, 1.0),
                    }
                }
            }
        }
    };
}

scan_kernels!(
    /// AVX2: a block in two 256-bit registers.
    ymm,
    core::arch::x86_64::__m256,
    2,
    core::arch::x86_64::__m256d,
    2,
    "avx2,fma"
);
scan_kernels!(
    /// AVX-512: a block in one 512-bit register.
    zmm,
    core::arch::x86_64::__m512,
    1,
    core::arch::x86_64::__m512d,
    1,
    "avx512f,avx2,fma"
);
