//! LAPACK-style linear algebra: [`cholesky`], [`lu`], [`qr`],
//! [`solve_triangular`], [`eigh`], [`svd`] and [`eig`], for f32, f64,
//! complex64 and complex128, batched over leading axes, any layout
//! (ARCHITECTURE.md §5.12).
//!
//! **Batches.** A routine's operands end in their matrix axes; the axes
//! before them are the batch, which broadcast against one another (numpy's
//! rule: extents equal or 1, aligned at the right) and which every
//! destination has exactly. Each matrix is computed on its own, from a
//! column-major copy of its values, so its results are a function of its
//! values alone: never of its layout, its place in the batch or the
//! threads. A matrix that fails (as each routine states) is NaN in its own
//! results alone.
//!
//! **Threads.** Matrices run on `exec`'s threads where there are two or
//! more; a lone matrix uses them inside its block updates, whose chains do
//! not depend on them.
//!
//! **Bounds.** With γ(k) = k·u / (1 − k·u), u the dtype's unit roundoff,
//! η its least positive subnormal (2⁻¹⁴⁹ or 2⁻¹⁰⁷⁴), ε(k) = k·η, k doubled on
//! complex dtypes, and |·| elementwise, each routine's documentation states
//! its bound; the tests check them on matrices of condition 2, √(0.1/u) and
//! 0.1/u, graded, rank-deficient and scaled near underflow and overflow.
//!
//! **Refusals** (before any write): a dtype other than the four
//! ([`Error::DTypeUnsupported`]), destinations of another dtype
//! ([`Error::DTypeMismatch`]), a rank below the matrix's
//! ([`Error::Rank`]), a non-square matrix where the routine needs a square
//! one, extents that do not match or batches that do not broadcast
//! ([`Error::Shape`]), a destination that reaches an element twice or
//! overlaps an operand or another destination ([`Error::Layout`]), work
//! memory that cannot be had ([`Error::Alloc`]), an unavailable tier.

pub(crate) mod batch;
mod cholesky;
pub(crate) mod eig;
pub(crate) mod eigh;
pub(crate) mod field;
mod lanes;
mod lu;
mod qr;
mod spectral;
pub(crate) mod svd;
mod triangular;
pub(crate) mod update;
pub(crate) mod work;

pub use cholesky::{cholesky, CholeskyPlan};
pub use lu::{lu, LuPlan};
pub use qr::{qr, QrPlan};
pub use spectral::{eig, eigh, svd, EigPlan, EighPlan, SvdPlan, SvdVectors};
pub use triangular::{solve_triangular, SolveTriangularPlan};

use crate::error::{Error, Result};
use crate::DType;

/// Which triangle a routine writes or reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Triangle {
    /// On and below the diagonal.
    Lower,
    /// On and above the diagonal.
    Upper,
}

impl Triangle {
    /// `lower` or `upper` (the CLI's attribute values).
    pub fn parse(name: &str) -> Result<Triangle> {
        match name {
            "lower" => Ok(Triangle::Lower),
            "upper" => Ok(Triangle::Upper),
            _ => Err(Error::Attribute {
                name: "triangle".into(),
                reason: format!("{name:?} is neither \"lower\" nor \"upper\""),
            }),
        }
    }
}

/// Refuse a dtype the routines do not take.
fn unsupported(operand: &str, dtype: DType) -> Error {
    Error::DTypeUnsupported {
        operand: operand.into(),
        dtype,
        reason: "linear algebra takes f32, f64, complex64 and complex128".into(),
    }
}

/// Run `$body` with `$t` the scalar type of dtype `$d` (one of the four),
/// or refuse it naming `$name`.
macro_rules! by_dtype {
    ($d:expr, $name:expr, $t:ident => $body:expr) => {
        match $d {
            $crate::DType::F32 => {
                type $t = f32;
                $body
            }
            $crate::DType::F64 => {
                type $t = f64;
                $body
            }
            $crate::DType::C64 => {
                type $t = num_complex::Complex<f32>;
                $body
            }
            $crate::DType::C128 => {
                type $t = num_complex::Complex<f64>;
                $body
            }
            other => Err($crate::linalg::unsupported($name, other)),
        }
    };
}
pub(crate) use by_dtype;
