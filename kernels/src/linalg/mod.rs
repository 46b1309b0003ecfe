//! LAPACK-style linear algebra: cholesky, lu, qr, solve_triangular, eigh,
//! svd and eig, batched over leading axes, any layout, f32, f64,
//! complex64 and complex128 (ARCHITECTURE.md §5.11).

#![allow(dead_code)] // the routines land next

pub(crate) mod batch;
pub(crate) mod eig;
pub(crate) mod field;
pub(crate) mod update;
