"""Linear algebra with numpy.linalg's and scipy.linalg's names.

``cholesky``, ``lu``, ``qr``, ``solve_triangular``, ``eigh``/``eigvalsh``,
``svd``/``svdvals`` and ``eig``/``eigvals`` for float32, float64, complex64
and complex128 (integers and bool are taken as float64, float16 and
bfloat16 as float32), batched over leading axes (numpy's broadcasting),
any layout. Each matrix is computed from its own values alone: its results
never depend on its layout, its place in the batch, the threads or the
tier. A matrix the routine cannot factor (as each states) is NaN in its own
results alone; the library's documentation (ARCHITECTURE.md §5.12) states
every routine's order and bound.
"""

from __future__ import annotations

import numpy as np

from . import _native
from ._arrays import Result, as_array, operand, tessera_dtype
from .errors import ArgumentError, ShapeError

__all__ = [
    "cholesky",
    "lu",
    "qr",
    "solve_triangular",
    "eigh",
    "eigvalsh",
    "svd",
    "svdvals",
    "eig",
    "eigvals",
    "vector_norm",
]

_REAL = {"f32": "f32", "f64": "f64", "c64": "f32", "c128": "f64"}
_CPLX = {"f32": "c64", "f64": "c128", "c64": "c64", "c128": "c128"}


def _matrix(a) -> tuple[np.ndarray, str]:
    a = as_array(a)
    name = tessera_dtype(a.dtype)
    if name not in _REAL:
        from . import cast

        wide = a.dtype.kind in "biu" or name in ("f64",)
        a = cast(a, np.float64 if wide else np.float32)
        name = tessera_dtype(a.dtype)
    if a.ndim < 2:
        raise ShapeError(f"a matrix needs rank 2 or more, not {a.ndim}")
    return a, name


def _run(routine, ins, outs, threads, tier, **attrs):
    _native.linalg_run(
        routine,
        [operand(x) for x in ins],
        [r.native for r in outs],
        threads=threads,
        tier=tier,
        **attrs,
    )
    return [r.finish() for r in outs]


def cholesky(a, upper=False, threads=None, tier=None):
    """The Cholesky factor of each Hermitian positive definite matrix: L with
    ``a = L Lᴴ`` (``upper=True``: U with ``a = Uᴴ U``), reading that triangle of ``a``."""
    a, name = _matrix(a)
    (l,) = _run("cholesky", [a], [Result(a.shape, name)], threads, tier, upper=upper)
    return l


def lu(a, threads=None, tier=None):
    """The LU factorisation with partial pivoting: ``(lu, pivots,
    permutation)``: L (unit, below the diagonal) and U (on and above it) in
    one array, the row swapped with row j at step j, and the row of ``a``
    that each row of L·U is (int64 both)."""
    a, name = _matrix(a)
    *batch, m, n = a.shape
    outs = [
        Result(a.shape, name),
        Result((*batch, min(m, n)), "i64"),
        Result((*batch, m), "i64"),
    ]
    return tuple(_run("lu", [a], outs, threads, tier))


def qr(a, mode="reduced", threads=None, tier=None):
    """``(q, r)`` with ``a = q r``: ``mode="reduced"`` (q ``[m, k]``, r ``[k, n]``,
    k = min(m, n)) or ``"complete"`` (q ``[m, m]``, r ``[m, n]``)."""
    if mode not in ("reduced", "complete"):
        raise ArgumentError(f"qr mode {mode!r}: expected 'reduced' or 'complete'")
    a, name = _matrix(a)
    *batch, m, n = a.shape
    qc = m if mode == "complete" else min(m, n)
    outs = [Result((*batch, m, qc), name), Result((*batch, qc, n), name)]
    return tuple(_run("qr", [a], outs, threads, tier))


def solve_triangular(a, b, lower=False, trans="N", unit_diagonal=False, threads=None, tier=None):
    """``x`` with ``op(a) x = b``, ``a`` triangular (scipy's keywords: ``lower``
    picks the triangle read, ``trans`` ``"N"`` or ``"C"`` (the conjugate
    transpose; ``"T"`` on real dtypes), ``unit_diagonal`` takes ones on the
    diagonal). ``b`` is ``[..., m, r]`` or a vector ``[m]``."""
    a, name = _matrix(a)
    b = as_array(b)
    if tessera_dtype(b.dtype) != name:
        from . import cast

        b = cast(b, name)
    if trans in ("N", 0):
        adjoint = False
    elif trans in ("C", 2) or (trans in ("T", 1) and name in ("f32", "f64")):
        adjoint = True
    else:
        raise ArgumentError(f"trans {trans!r}: 'N', 'C' (or 'T' on real dtypes)")
    vector = b.ndim == 1
    if vector:
        b = b.reshape(-1, 1)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    shape = (*batch, a.shape[-2], b.shape[-1])
    (x,) = _run(
        "solve_triangular",
        [a, b],
        [Result(shape, name)],
        threads,
        tier,
        upper=not lower,
        adjoint=adjoint,
        unit_diagonal=unit_diagonal,
    )
    return x[..., 0] if vector else x


def eigh(a, threads=None, tier=None):
    """``(w, v)`` of each Hermitian matrix (its lower triangle read): real
    eigenvalues ``w`` and orthonormal eigenvectors in the columns of ``v``."""
    a, name = _matrix(a)
    *batch, m, _ = a.shape
    return tuple(
        _run("eigh", [a], [Result((*batch, m), _REAL[name]), Result(a.shape, name)], threads, tier)
    )


def eigvalsh(a, threads=None, tier=None):
    """The eigenvalues of each Hermitian matrix (:func:`eigh` without vectors)."""
    a, name = _matrix(a)
    *batch, m, _ = a.shape
    (w,) = _run("eigh", [a], [Result((*batch, m), _REAL[name])], threads, tier)
    return w


def svd(a, full_matrices=True, compute_uv=True, threads=None, tier=None):
    """numpy's ``svd``: ``(u, s, vh)`` with ``a = u diag(s) vh`` (``s``
    descending), or ``s`` alone where ``compute_uv`` is false."""
    a, name = _matrix(a)
    *batch, m, n = a.shape
    k = min(m, n)
    s = Result((*batch, k), _REAL[name])
    if not compute_uv:
        (sv,) = _run("svd", [a], [s], threads, tier)
        return sv
    uc, vr = (m, n) if full_matrices else (k, k)
    outs = [s, Result((*batch, m, uc), name), Result((*batch, vr, n), name)]
    sv, u, vh = _run("svd", [a], outs, threads, tier)
    return u, sv, vh


def svdvals(a, threads=None, tier=None):
    """The singular values of each matrix, descending."""
    return svd(a, compute_uv=False, threads=threads, tier=tier)


def eig(a, threads=None, tier=None):
    """``(w, v)`` of each square matrix: complex eigenvalues and the
    eigenvectors in the columns of ``v`` (complex)."""
    a, name = _matrix(a)
    *batch, m, _ = a.shape
    c = _CPLX[name]
    return tuple(_run("eig", [a], [Result((*batch, m), c), Result(a.shape, c)], threads, tier))


def eigvals(a, threads=None, tier=None):
    """The complex eigenvalues of each square matrix."""
    a, name = _matrix(a)
    *batch, m, _ = a.shape
    (w,) = _run("eig", [a], [Result((*batch, m), _CPLX[name])], threads, tier)
    return w


def vector_norm(x, ord=2, axis=None, keepdims=False, threads=None, tier=None):
    """numpy's ``linalg.vector_norm`` for ``ord`` 2 (scaled by the largest
    magnitude first, so no square overflows or underflows where the norm is
    representable) and 1 (Σ |x|), along ``axis`` (None: all), in lane order."""
    from . import _terms, reduce

    if ord == 2:
        return reduce("l2norm", x, axis, keepdims, None, None, threads, tier)
    if ord == 1:
        return _terms("l1_norm", x, None, axis, keepdims, None, None, threads, tier)
    raise ArgumentError(f"vector_norm ord={ord!r}: 1 or 2")
