//! The GEMM entry of the engines built on the contraction (linear algebra,
//! attention): `C ← C + A·B`, or `C ← A·B`, on strided sub-matrices of f32
//! or f64, in chain order, with none of the public call's validation of
//! specs, shapes and dtypes and no plan: the caller's blocked algorithm
//! calls it in its inner loops on views it has checked once.
//!
//! **Order.** Every output adds its products in increasing k by fused
//! multiply-adds, from C's value (or +0): chain order (ARCHITECTURE.md
//! §5.5) whatever the shape (the public call would choose lane order for
//! few rows or columns or a long depth), the blocking, the tier or the
//! thread split. A C whose columns are not contiguous but whose rows are
//! runs as the transposed product `Cᵀ ← Cᵀ + Bᵀ·Aᵀ`, which forms the same
//! products (`a·b = b·a` exactly) in the same order: the same bits.
//!
//! **Refusals.** Only what would reach outside the operands' slices: a
//! matrix whose extents and strides address an element outside its slice
//! ([`Error::OutOfBounds`]), a C with neither unit column nor unit row
//! stride, or one that reaches an element twice ([`Error::Layout`]), depths
//! that differ ([`Error::Shape`]); an unavailable tier; tables that cannot
//! be allocated ([`Error::Alloc`]).

use super::acc::Src;
use super::gemm::{Chain, Operand, Panels};
use super::select::Chained;
use crate::alloc::try_collect;
use crate::array::as_bytes;
use crate::error::{Error, Result};
use crate::tier::Exec;

/// A strided matrix read by [`gemm_update`]: element `(i, j)` is
/// `data[offset + i·row_stride + j·col_stride]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MatRef<'a, T> {
    pub data: &'a [T],
    pub offset: usize,
    pub rows: usize,
    pub cols: usize,
    pub row_stride: isize,
    pub col_stride: isize,
}

/// A strided matrix written by [`gemm_update`] (one stride must be 1).
#[derive(Debug)]
pub(crate) struct MatMut<'a, T> {
    pub data: &'a mut [T],
    pub offset: usize,
    pub rows: usize,
    pub cols: usize,
    pub row_stride: isize,
    pub col_stride: isize,
}

/// The least and greatest positions a `rows × cols` matrix addresses from
/// `offset` (None for an empty one or on overflow).
fn span(offset: usize, rows: usize, cols: usize, rs: isize, cs: isize) -> Option<(isize, isize)> {
    if rows == 0 || cols == 0 {
        return None;
    }
    let o = isize::try_from(offset).ok()?;
    let r = rs.checked_mul(rows as isize - 1)?;
    let c = cs.checked_mul(cols as isize - 1)?;
    let lo = o.checked_add(r.min(0))?.checked_add(c.min(0))?;
    let hi = o.checked_add(r.max(0))?.checked_add(c.max(0))?;
    Some((lo, hi))
}

/// Refuse a matrix of `at` = (offset, rows, cols, row stride, column
/// stride) that reaches outside a slice of `len` elements of `item` bytes.
fn in_bounds(
    name: &str,
    len: usize,
    item: usize,
    at: (usize, usize, usize, isize, isize),
) -> Result<()> {
    let (offset, rows, cols, rs, cs) = at;
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    match span(offset, rows, cols, rs, cs) {
        Some((lo, hi)) if lo >= 0 && (hi as usize) < len => Ok(()),
        Some((lo, hi)) if lo >= 0 => Err(Error::OutOfBounds {
            operand: name.into(),
            needed: (hi as u128 + 1) * item as u128,
            len: len * item,
        }),
        _ => Err(Error::Layout {
            operand: name.into(),
            reason: format!(
                "{rows} × {cols} elements from {offset} by strides ({rs}, {cs}) reach before its slice"
            ),
        }),
    }
}

/// The transpose of a strided matrix (a view: the strides swapped).
fn transposed<T>(x: MatRef<'_, T>) -> MatRef<'_, T> {
    MatRef {
        rows: x.cols,
        cols: x.rows,
        row_stride: x.col_stride,
        col_stride: x.row_stride,
        ..x
    }
}

/// `C ← C + A·B` (`accumulate`) or `C ← A·B`, A `m × k`, B `k × n`, C
/// `m × n`, in chain order on `exec`'s tier and threads (see the module
/// documentation for the order and the refusals).
pub(crate) fn gemm_update<T: Chained>(
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    c: MatMut<'_, T>,
    accumulate: bool,
    exec: &Exec,
) -> Result<()> {
    let tier = exec.resolve_tier()?;
    if a.cols != b.rows || c.rows != a.rows || c.cols != b.cols {
        return Err(Error::Shape {
            operand: "gemm update".into(),
            shape: vec![a.rows, a.cols, b.rows, b.cols],
            target: vec![c.rows, a.cols, a.cols, c.cols],
        });
    }
    in_bounds(
        "a",
        a.data.len(),
        size_of::<T>(),
        (a.offset, a.rows, a.cols, a.row_stride, a.col_stride),
    )?;
    in_bounds(
        "b",
        b.data.len(),
        size_of::<T>(),
        (b.offset, b.rows, b.cols, b.row_stride, b.col_stride),
    )?;
    in_bounds(
        "c",
        c.data.len(),
        size_of::<T>(),
        (c.offset, c.rows, c.cols, c.row_stride, c.col_stride),
    )?;
    let (m, n, k) = (c.rows, c.cols, a.cols);
    if m == 0 || n == 0 {
        return Ok(());
    }
    // C's rows contiguous: as given. C's columns contiguous: the transposed
    // product, whose C rows are C's columns.
    let (a, b, rows, cols, ld) = if c.col_stride == 1 && (c.row_stride >= n as isize || m == 1) {
        (a, b, m, n, c.row_stride.max(n as isize) as usize)
    } else if c.row_stride == 1 && (c.col_stride >= m as isize || n == 1) {
        (
            transposed(b),
            transposed(a),
            n,
            m,
            c.col_stride.max(m as isize) as usize,
        )
    } else {
        return Err(Error::Layout {
            operand: "c".into(),
            reason: format!(
                "strides ({}, {}) of a {m} × {n} C: one must be 1 and the other at least the contiguous extent",
                c.row_stride, c.col_stride
            ),
        });
    };
    let out = &mut c.data[c.offset..];
    let Some(micro) = T::micro(tier) else {
        return Err(Error::DTypeUnsupported {
            operand: "gemm update".into(),
            dtype: T::DTYPE,
            reason: "chain order runs f32 and f64".into(),
        });
    };
    let positions = |n: usize, stride: isize, base: usize, what: &str| {
        try_collect(
            n,
            (0..n).map(|i| base as isize + i as isize * stride),
            format_args!("gemm update tables ({what})"),
        )
    };
    let a_rows = positions(rows, a.row_stride, a.offset, "rows")?;
    let a_ks = positions(k, a.col_stride, 0, "depth of a")?;
    let b_ks = positions(k, b.row_stride, b.offset, "depth of b")?;
    let b_cols = positions(cols, b.col_stride, 0, "columns")?;
    let job = Chain::new(
        micro,
        Operand {
            src: Src::new(as_bytes(a.data)),
            base: 0,
            raw: None,
        },
        &a_rows,
        &a_ks,
        Operand {
            src: Src::new(as_bytes(b.data)),
            base: 0,
            raw: None,
        },
        &b_ks,
        &b_cols,
        accumulate,
        Panels::Cache,
    );
    // SAFETY: every position the tables reach is inside a's and b's slices
    // (their spans were checked above), which hold elements of T, the
    // accumulator; the tier's kernel runs on this CPU (resolved above); C's
    // rows × cols tile with row stride `ld` lies inside `out` (its span was
    // checked) and reaches no element twice (one stride is 1, the other at
    // least the contiguous extent).
    unsafe { job.run_strided(out.as_mut_ptr(), ld, exec.thread_count(), tier) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{available_tiers, Exec};

    /// A splitmix64 stream of floats with small integer and fractional
    /// parts (products exact enough to tell orders apart by rounding).
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                ((z >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2f64.powi((z % 13) as i32 - 6)
            })
            .collect()
    }

    /// The chain order, written here: each output from C (or +0) by
    /// fused multiply-adds in increasing k.
    fn model<T: Copy + Into<f64> + Default>(
        a: &MatRef<'_, T>,
        b: &MatRef<'_, T>,
        c0: &[T],
        accumulate: bool,
        fma: impl Fn(T, T, T) -> T,
    ) -> Vec<T> {
        let (m, n, k) = (a.rows, b.cols, a.cols);
        let at = |x: &MatRef<'_, T>, i: usize, j: usize| {
            x.data[(x.offset as isize + i as isize * x.row_stride + j as isize * x.col_stride)
                as usize]
        };
        let mut out = vec![T::default(); m * n];
        for i in 0..m {
            for j in 0..n {
                let mut acc = if accumulate {
                    c0[i * n + j]
                } else {
                    T::default()
                };
                for kk in 0..k {
                    acc = fma(at(a, i, kk), at(b, kk, j), acc);
                }
                out[i * n + j] = acc;
            }
        }
        out
    }

    fn check<T: Chained + Copy + Into<f64> + Default + PartialEq + std::fmt::Debug>(
        conv: impl Fn(f64) -> T,
        fma: impl Fn(T, T, T) -> T + Copy,
        bits: impl Fn(T) -> u64,
    ) {
        for &(m, n, k) in &[
            (1, 1, 1),
            (3, 70, 5),
            (33, 17, 300),
            (130, 9, 64),
            (64, 64, 0),
        ] {
            // A: a transposed view inside a wider buffer (row stride 1);
            // B: row-major with a gap; C: a sub-block of a wider buffer,
            // row-major or column-major.
            let lda = m + 3;
            let abuf: Vec<T> = values(lda * k + 5, 1).into_iter().map(&conv).collect();
            let a = MatRef {
                data: &abuf,
                offset: 2,
                rows: m,
                cols: k,
                row_stride: 1,
                col_stride: lda as isize,
            };
            let ldb = n + 2;
            let bbuf: Vec<T> = values(ldb * k.max(1) + 3, 2)
                .into_iter()
                .map(&conv)
                .collect();
            let b = MatRef {
                data: &bbuf,
                offset: 1,
                rows: k,
                cols: n,
                row_stride: ldb as isize,
                col_stride: 1,
            };
            let c0: Vec<T> = values(m * n, 3).into_iter().map(&conv).collect();
            for accumulate in [true, false] {
                let want = model(&a, &b, &c0, accumulate, fma);
                for column_major in [false, true] {
                    for tier in available_tiers() {
                        for threads in [1, 2, 7] {
                            let exec = Exec::on(tier).threads(threads);
                            let ld = if column_major { m + 4 } else { n + 4 };
                            let mut cbuf =
                                vec![conv(7.0); ld * if column_major { n } else { m } + 9];
                            let (rs, cs) = if column_major {
                                (1, ld as isize)
                            } else {
                                (ld as isize, 1)
                            };
                            let at = |i: usize, j: usize| {
                                (5 + i as isize * rs + j as isize * cs) as usize
                            };
                            for i in 0..m {
                                for j in 0..n {
                                    cbuf[at(i, j)] = c0[i * n + j];
                                }
                            }
                            gemm_update(
                                a,
                                b,
                                MatMut {
                                    data: &mut cbuf,
                                    offset: 5,
                                    rows: m,
                                    cols: n,
                                    row_stride: rs,
                                    col_stride: cs,
                                },
                                accumulate,
                                &exec,
                            )
                            .unwrap();
                            for i in 0..m {
                                for j in 0..n {
                                    assert_eq!(
                                        bits(cbuf[at(i, j)]),
                                        bits(want[i * n + j]),
                                        "{m}×{n}×{k} ({i}, {j}) acc {accumulate} col-major {column_major} {tier:?} {threads}"
                                    );
                                }
                            }
                            // Nothing outside C's elements changed.
                            let inside: std::collections::HashSet<usize> = (0..m)
                                .flat_map(|i| (0..n).map(move |j| (i, j)))
                                .map(|(i, j)| at(i, j))
                                .collect();
                            for (p, v) in cbuf.iter().enumerate() {
                                if !inside.contains(&p) {
                                    assert_eq!(*v, conv(7.0), "position {p} outside C written");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn gemm_update_is_chain_order_on_strided_blocks() {
        check::<f32>(
            |v| v as f32,
            |a, b, c| a.mul_add(b, c),
            |v| v.to_bits() as u64,
        );
        check::<f64>(|v| v, |a, b, c| a.mul_add(b, c), |v| v.to_bits());
    }

    #[test]
    fn gemm_update_refuses_what_leaves_its_slices() {
        let x = vec![0f32; 12];
        let a = MatRef {
            data: &x,
            offset: 0,
            rows: 3,
            cols: 4,
            row_stride: 4,
            col_stride: 1,
        };
        let b = MatRef {
            data: &x,
            offset: 0,
            rows: 4,
            cols: 3,
            row_stride: 3,
            col_stride: 1,
        };
        let run = |a: MatRef<'_, f32>, rs: isize, cs: isize| {
            let mut y = vec![0f32; 12];
            gemm_update(
                a,
                b,
                MatMut {
                    data: &mut y,
                    offset: 0,
                    rows: 3,
                    cols: 3,
                    row_stride: rs,
                    col_stride: cs,
                },
                true,
                &Exec::default(),
            )
        };
        assert!(run(a, 3, 1).is_ok());
        // A reaching past its slice; C with no unit stride; C reaching an
        // element twice.
        let long = MatRef { offset: 1, ..a };
        assert!(matches!(run(long, 3, 1), Err(Error::OutOfBounds { .. })));
        assert!(matches!(
            run(a, 4, 2),
            Err(Error::Layout { .. }) | Err(Error::OutOfBounds { .. })
        ));
        assert!(matches!(run(a, 1, 1), Err(Error::Layout { .. })));
    }
}
