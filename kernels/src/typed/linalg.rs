//! The linear-algebra routines on typed slices holding one C-order matrix
//! each (`tessera::linalg`'s calls, bit for bit): f32, f64, complex64 and
//! complex128. Every slice's length must be its matrix's
//! ([`Error::Length`](crate::Error::Length)); the rest of the refusals are the view-based
//! calls'.
//!
//! ```
//! use tessera::linalg::Triangle;
//! use tessera::{typed, Exec};
//!
//! let a = [4.0f64, 2.0, 2.0, 5.0];
//! let mut l = [0.0f64; 4];
//! typed::linalg::cholesky(Triangle::Lower, &a, 2, &mut l, &Exec::default())?;
//! assert_eq!(l, [2.0, 0.0, 1.0, 2.0]);
//! # Ok::<(), tessera::Error>(())
//! ```

use crate::array::{ArrayView, ArrayViewMut, Element};
use crate::error::Result;
use crate::linalg::{self, Triangle};
use crate::tier::Exec;

fn sized<'a, T: Element>(what: &str, s: &'a [T], r: usize, c: usize) -> Result<ArrayView<'a>> {
    check(what, s.len(), r, c)?;
    ArrayView::from_slice(s, &[r, c])
}

fn sized_mut<'a, T: Element>(
    what: &str,
    s: &'a mut [T],
    shape: &[usize],
) -> Result<ArrayViewMut<'a>> {
    let (r, c) = match *shape {
        [r, c] => (r, c),
        [r] => (r, 1),
        _ => (1, 1),
    };
    check(what, s.len(), r, c)?;
    ArrayViewMut::from_slice(s, shape)
}

fn check(what: &str, got: usize, r: usize, c: usize) -> Result<()> {
    super::check_len(what, format!("{what} ({r} × {c})"), got, &[r, c])
}

/// [`linalg::cholesky`] of the `n × n` matrix `a` into `out` (`n × n`).
pub fn cholesky<T: Element>(
    triangle: Triangle,
    a: &[T],
    n: usize,
    out: &mut [T],
    exec: &Exec,
) -> Result<()> {
    let av = sized("a", a, n, n)?;
    linalg::cholesky(triangle, &av, &mut sized_mut("out", out, &[n, n])?, exec)
}

/// [`linalg::lu`] of the `m × n` matrix `a` (`dims = (m, n)`) into `lu`
/// (`m × n`), `pivots` (min(m, n)) and `permutation` (m).
pub fn lu<T: Element>(
    a: &[T],
    dims: (usize, usize),
    lu: &mut [T],
    pivots: &mut [i64],
    permutation: &mut [i64],
    exec: &Exec,
) -> Result<()> {
    let (m, n) = dims;
    let av = sized("a", a, m, n)?;
    linalg::lu(
        &av,
        &mut sized_mut("lu", lu, &[m, n])?,
        &mut sized_mut("pivots", pivots, &[m.min(n)])?,
        &mut sized_mut("permutation", permutation, &[m])?,
        exec,
    )
}

/// [`linalg::qr`] of the `m × n` matrix `a`: reduced where `q` holds
/// `m × min(m, n)` values (and `r` `min(m, n) × n`), complete where `q`
/// holds `m × m` (and `r` `m × n`).
pub fn qr<T: Element>(
    a: &[T],
    dims: (usize, usize),
    q: &mut [T],
    r: &mut [T],
    exec: &Exec,
) -> Result<()> {
    let (m, n) = dims;
    let av = sized("a", a, m, n)?;
    let qc = if q.len() == m * m && m > 0 {
        m
    } else {
        m.min(n)
    };
    linalg::qr(
        &av,
        &mut sized_mut("q", q, &[m, qc])?,
        &mut sized_mut("r", r, &[qc, n])?,
        exec,
    )
}

/// [`linalg::solve_triangular`] of the `n × n` matrix `a` and the `n × r`
/// right-hand sides `b` into `x` (`n × r`).
#[allow(clippy::too_many_arguments)]
pub fn solve_triangular<T: Element>(
    triangle: Triangle,
    adjoint: bool,
    unit_diagonal: bool,
    a: &[T],
    b: &[T],
    (n, r): (usize, usize),
    x: &mut [T],
    exec: &Exec,
) -> Result<()> {
    let av = sized("a", a, n, n)?;
    let bv = sized("b", b, n, r)?;
    linalg::solve_triangular(
        triangle,
        adjoint,
        unit_diagonal,
        &av,
        &bv,
        &mut sized_mut("x", x, &[n, r])?,
        exec,
    )
}

/// [`linalg::eigh`] of the `n × n` matrix `a` into `w` (n, the real type
/// of a's precision) and, where given, `v` (`n × n`).
pub fn eigh<T: Element, R: Element>(
    a: &[T],
    n: usize,
    w: &mut [R],
    v: Option<&mut [T]>,
    exec: &Exec,
) -> Result<()> {
    let av = sized("a", a, n, n)?;
    let mut wv = sized_mut("w", w, &[n])?;
    match v {
        Some(v) => linalg::eigh(&av, &mut wv, Some(&mut sized_mut("v", v, &[n, n])?), exec),
        None => linalg::eigh(&av, &mut wv, None, exec),
    }
}

/// [`linalg::svd`] of the `m × n` matrix `a` into `s` (min(m, n), the real
/// type of a's precision) and, where given, `(u, vh)`: reduced where `u`
/// holds `m × min(m, n)` values, complete where it holds `m × m` (vh `n × n`).
pub fn svd<T: Element, R: Element>(
    a: &[T],
    dims: (usize, usize),
    s: &mut [R],
    vectors: Option<(&mut [T], &mut [T])>,
    exec: &Exec,
) -> Result<()> {
    let (m, n) = dims;
    let k = m.min(n);
    let av = sized("a", a, m, n)?;
    let mut sv = sized_mut("s", s, &[k])?;
    match vectors {
        Some((u, vh)) => {
            let complete = u.len() == m * m && vh.len() == n * n && (m != k || n != k);
            let (uc, vr) = if complete { (m, n) } else { (k, k) };
            linalg::svd(
                &av,
                &mut sv,
                Some((
                    &mut sized_mut("u", u, &[m, uc])?,
                    &mut sized_mut("vh", vh, &[vr, n])?,
                )),
                exec,
            )
        }
        None => linalg::svd(&av, &mut sv, None, exec),
    }
}

/// [`linalg::eig`] of the `n × n` matrix `a` into `w` (n, the complex type
/// of a's precision) and, where given, `v` (`n × n`, that complex type).
pub fn eig<T: Element, C: Element>(
    a: &[T],
    n: usize,
    w: &mut [C],
    v: Option<&mut [C]>,
    exec: &Exec,
) -> Result<()> {
    let av = sized("a", a, n, n)?;
    let mut wv = sized_mut("w", w, &[n])?;
    match v {
        Some(v) => linalg::eig(&av, &mut wv, Some(&mut sized_mut("v", v, &[n, n])?), exec),
        None => linalg::eig(&av, &mut wv, None, exec),
    }
}
