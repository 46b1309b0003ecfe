//! The inner operations of every routine, on column-major working buffers:
//! the column update `y ← y − x·s` and the block update `C ← C − A·op(B)`.
//!
//! **Order.** Each element of C is a chain from its own value, in
//! increasing k, of [`Field::fms`] steps (`c − a·b`, fused). A blocked
//! algorithm that applies the k-ranges of its panels in increasing order
//! therefore gives each element the same chain as the unblocked one, and the
//! choice between the contraction engine's microkernels (real dtypes, large
//! blocks, through `contract::update::gemm_update` on a negated copy of A:
//! `fma(−a, b, c)` is `c − a·b` rounded once) and the loops here changes no
//! bit. The loops are compiled once per tier with the tier's fused
//! multiply-add (a fused multiply-add is exactly rounded on every tier).

use crate::contract::update::{gemm_update, MatMut, MatRef};
use crate::linalg::field::Field;
use crate::tier::{runs_avx2, runs_avx512, Exec};
use crate::Tier;

/// The instruction set the loops here are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// Baseline x86-64 (the scalar tier).
    Plain,
    /// AVX2 with FMA.
    Avx2,
    /// AVX-512 F.
    Avx512,
}

impl Isa {
    /// The loops' instruction set on `tier`.
    pub(crate) fn of(tier: Tier) -> Isa {
        if runs_avx512(tier) {
            Isa::Avx512
        } else if runs_avx2(tier) {
            Isa::Avx2
        } else {
            Isa::Plain
        }
    }
}

#[inline(always)]
fn axpy_body<T: Field, const REV: bool>(y: &mut [T], x: &[T], s: T) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y = if REV {
            T::fms(*y, s, x)
        } else {
            T::fms(*y, x, s)
        };
    }
}

#[inline(always)]
fn dot_body<T: Field>(x: &[T], y: &[T]) -> T {
    let n = x.len().min(y.len());
    let mut acc = [T::ZERO; 8];
    let (xc, yc) = (x[..n].chunks_exact(8), y[..n].chunks_exact(8));
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (xs, ys) in xc.zip(yc) {
        for l in 0..8 {
            acc[l] = T::fma_add(acc[l], xs[l].conj(), ys[l]);
        }
    }
    for l in 0..xr.len() {
        acc[l] = T::fma_add(acc[l], xr[l].conj(), yr[l]);
    }
    for h in [4, 2, 1] {
        for l in 0..h {
            acc[l] = acc[l] + acc[l + h];
        }
    }
    acc[0]
}

/// `pub(crate) fn $name<T: Field>(isa, args…)`: `$body` (an
/// `#[inline(always)]` generic function) compiled once per instruction set
/// (baseline, AVX2 with FMA, AVX-512 F) and chosen by `isa`. The bodies use
/// plain operations and `mul_add`, exactly rounded on every set, so the
/// choice changes speed, never a bit.
macro_rules! tiered {
    ($(#[$m:meta])* $name:ident, $body:ident $(::<$c:ident>)?, ($($a:ident: $t:ty),*) $(-> $r:ty)?) => {
        $(#[$m])*
        #[inline]
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn $name<T: $crate::linalg::field::Field $(, const $c: bool)?>(
            isa: $crate::linalg::update::Isa,
            $($a: $t),*
        ) $(-> $r)? {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            #[allow(clippy::too_many_arguments)]
            unsafe fn avx2<T: $crate::linalg::field::Field $(, const $c: bool)?>($($a: $t),*) $(-> $r)? {
                $body::<T $(, $c)?>($($a),*)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma,avx512f")]
            #[allow(clippy::too_many_arguments)]
            unsafe fn avx512<T: $crate::linalg::field::Field $(, const $c: bool)?>($($a: $t),*) $(-> $r)? {
                $body::<T $(, $c)?>($($a),*)
            }
            match isa {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `Isa::Avx2` comes from a tier this CPU runs, which
                // has AVX2 and FMA (`Isa::of`).
                $crate::linalg::update::Isa::Avx2 => unsafe { avx2::<T $(, $c)?>($($a),*) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `Isa::Avx512` comes from a tier this CPU runs,
                // which has AVX-512 F, AVX2 and FMA (`Isa::of`).
                $crate::linalg::update::Isa::Avx512 => unsafe { avx512::<T $(, $c)?>($($a),*) },
                _ => $body::<T $(, $c)?>($($a),*),
            }
        }
    };
}
pub(crate) use tiered;

/// [`axpy_sub`]'s loop (`REV`: [`axpy_sub_rev`]'s), for bodies that
/// [`tiered`] compiles whole.
#[inline(always)]
pub(crate) fn axpy_inline<T: Field, const REV: bool>(y: &mut [T], x: &[T], s: T) {
    let n = y.len().min(x.len());
    axpy_body::<T, REV>(&mut y[..n], &x[..n], s)
}

tiered!(
    /// `y[i] ← y[i] − x[i]·s` (`REV`: `y[i] − s·x[i]`), one [`Field::fms`]
    /// each, the operands in that order.
    axpy_any, axpy_body::<REV>, (y: &mut [T], x: &[T], s: T)
);

tiered!(
    /// `Σ conj(x_i)·y_i`: term i into lane `i mod 8` by fused steps, then
    /// lanes `l` and `l + 4`, `l + 2`, `l + 1` added: a function of the
    /// length alone.
    dot, dot_body, (x: &[T], y: &[T]) -> T
);

/// `y[i] ← y[i] − x[i]·s` for each i (one [`Field::fms`] each, x first).
#[inline]
pub(crate) fn axpy_sub<T: Field>(isa: Isa, y: &mut [T], x: &[T], s: T) {
    let n = y.len().min(x.len());
    axpy_any::<T, false>(isa, &mut y[..n], &x[..n], s)
}

/// A column-major operand: element (i, j) of op(X) is `data[i + j·ld]`, or
/// under `adjoint` `conj(data[j + i·ld])`.
#[derive(Clone, Copy)]
pub(crate) struct Op<'a, T> {
    /// The elements from (0, 0).
    pub data: &'a [T],
    /// The column stride.
    pub ld: usize,
    /// Whether op(X) is the conjugate transpose of what is stored.
    pub adjoint: bool,
}

impl<'a, T: Field> Op<'a, T> {
    /// op(X) = X.
    pub(crate) fn plain(data: &'a [T], ld: usize) -> Self {
        Op {
            data,
            ld,
            adjoint: false,
        }
    }
    /// op(X) = Xᴴ.
    pub(crate) fn adjoint(data: &'a [T], ld: usize) -> Self {
        Op {
            data,
            ld,
            adjoint: true,
        }
    }
    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> T {
        if self.adjoint {
            self.data[j + i * self.ld].conj()
        } else {
            self.data[i + j * self.ld]
        }
    }
}

/// `C ← C − op(A)·op(B)`, op(A) `m × k`, op(B) `k × n`, C `m × n`
/// column-major with leading dimension `ldc`. `neg` is room for `m·k`
/// elements (where −op(A) is copied for [`gemm_neg`]). Each element's
/// chain is as the module states, `a·b` with op(A)'s element first.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_sub<T: Field>(
    isa: Isa,
    (m, n, k): (usize, usize, usize),
    a: Op<'_, T>,
    b: Op<'_, T>,
    c: &mut [T],
    ldc: usize,
    neg: &mut [T],
    exec: &Exec,
) {
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    let neg = &mut neg[..m * k];
    for kk in 0..k {
        for (i, x) in neg[kk * m..(kk + 1) * m].iter_mut().enumerate() {
            *x = -a.at(i, kk);
        }
    }
    gemm_neg(isa, (m, n, k), neg, m, b, c, ldc, exec);
}

/// [`gemm_sub`] from `na` = −op(A) (`m × k`, column-major, leading
/// dimension `lda`), which a caller that updates several blocks from one A
/// negates once. The same chains: `c − a·s` is `fms(c, −a, −s)` exactly
/// (negations are exact), and the microkernels' `fma(−a, s, c)` is that
/// step too.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_neg<T: Field>(
    isa: Isa,
    (m, n, k): (usize, usize, usize),
    na: &[T],
    lda: usize,
    b: Op<'_, T>,
    c: &mut [T],
    ldc: usize,
    exec: &Exec,
) {
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    if !T::COMPLEX && m * n * k >= 24 * 24 * 24 {
        let ar = MatRef {
            data: na,
            offset: 0,
            rows: m,
            cols: k,
            row_stride: 1,
            col_stride: lda as isize,
        };
        let (brs, bcs) = if b.adjoint {
            (b.ld as isize, 1)
        } else {
            (1, b.ld as isize)
        };
        let br = MatRef {
            data: b.data,
            offset: 0,
            rows: k,
            cols: n,
            row_stride: brs,
            col_stride: bcs,
        };
        if T::chain_update(ar, br, c, (m, n, ldc), exec) {
            return;
        }
        // Refused (tables that cannot be allocated): the loops below give
        // the same bits.
    }
    for j in 0..n {
        let col = &mut c[j * ldc..j * ldc + m];
        for kk in 0..k {
            axpy_sub(isa, col, &na[kk * lda..kk * lda + m], -b.at(kk, j));
        }
    }
}

/// The contraction engine's chain-order update for the real dtypes.
pub(crate) trait ChainUpdate: Sized {
    /// `C ← C + A·B` through `gemm_update` (C column-major `rows × cols`
    /// with leading dimension `ld`); false where the dtype has no such
    /// path or the call was refused.
    fn chain_update(
        a: MatRef<'_, Self>,
        b: MatRef<'_, Self>,
        c: &mut [Self],
        shape: (usize, usize, usize),
        exec: &Exec,
    ) -> bool;
}

macro_rules! chained {
    ($($t:ty),*) => {$(
        impl ChainUpdate for $t {
            fn chain_update(
                a: MatRef<'_, $t>,
                b: MatRef<'_, $t>,
                c: &mut [$t],
                (rows, cols, ld): (usize, usize, usize),
                exec: &Exec,
            ) -> bool {
                gemm_update(
                    a,
                    b,
                    MatMut {
                        data: c,
                        offset: 0,
                        rows,
                        cols,
                        row_stride: 1,
                        col_stride: ld as isize,
                    },
                    true,
                    exec,
                )
                .is_ok()
            }
        }
    )*};
}
chained!(f32, f64);

macro_rules! unchained {
    ($($t:ty),*) => {$(
        impl ChainUpdate for $t {
            fn chain_update(
                _: MatRef<'_, $t>,
                _: MatRef<'_, $t>,
                _: &mut [$t],
                _: (usize, usize, usize),
                _: &Exec,
            ) -> bool {
                false
            }
        }
    )*};
}
unchained!(num_complex::Complex<f32>, num_complex::Complex<f64>);
