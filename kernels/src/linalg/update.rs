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
fn axpy_body<T: Field>(y: &mut [T], x: &[T], s: T) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y = T::fms(*y, x, s);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn axpy_avx2<T: Field>(y: &mut [T], x: &[T], s: T) {
    axpy_body(y, x, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f")]
unsafe fn axpy_avx512<T: Field>(y: &mut [T], x: &[T], s: T) {
    axpy_body(y, x, s)
}

/// `y[i] ← y[i] − x[i]·s` for each i (one [`Field::fms`] each).
#[inline]
pub(crate) fn axpy_sub<T: Field>(isa: Isa, y: &mut [T], x: &[T], s: T) {
    let n = y.len().min(x.len());
    let (y, x) = (&mut y[..n], &x[..n]);
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` comes from a tier this CPU runs, which has
        // AVX2 and FMA (`Isa::of`).
        Isa::Avx2 => unsafe { axpy_avx2(y, x, s) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` comes from a tier this CPU runs, which has
        // AVX-512 F, AVX2 and FMA (`Isa::of`).
        Isa::Avx512 => unsafe { axpy_avx512(y, x, s) },
        _ => axpy_body(y, x, s),
    }
}

/// A column-major block: element (i, j) at `data[i + j·ld]`.
#[derive(Clone, Copy)]
pub(crate) struct Block<'a, T> {
    /// The elements from (0, 0).
    pub data: &'a [T],
    /// The column stride.
    pub ld: usize,
}

/// `C ← C − A·op(B)`, A `m × k`, op(B) `k × n`, C `m × n`, all
/// column-major; op(B) is B (`k × n`) or, under `adjoint`, Bᴴ with B
/// `n × k`. `neg` is room for `m·k` elements (the negated copy of A the
/// microkernels read). Each element's chain is as the module states.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_sub<T: Field>(
    isa: Isa,
    (m, n, k): (usize, usize, usize),
    a: Block<'_, T>,
    b: Block<'_, T>,
    adjoint: bool,
    c: &mut [T],
    ldc: usize,
    neg: &mut [T],
    exec: &Exec,
) {
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    if !T::COMPLEX && m * n * k >= 24 * 24 * 24 && neg.len() >= m * k {
        // Real: the microkernels on −A (conjugation is nothing on a real B).
        for kk in 0..k {
            for i in 0..m {
                neg[i + kk * m] = -a.data[i + kk * a.ld];
            }
        }
        let ar = MatRef {
            data: &neg[..m * k],
            offset: 0,
            rows: m,
            cols: k,
            row_stride: 1,
            col_stride: m as isize,
        };
        let (brs, bcs) = if adjoint {
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
            let s = if adjoint {
                b.data[j + kk * b.ld].conj()
            } else {
                b.data[kk + j * b.ld]
            };
            axpy_sub(isa, col, &a.data[kk * a.ld..kk * a.ld + m], s);
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
