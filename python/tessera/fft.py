"""Discrete Fourier transforms with numpy.fft's names and keywords.

``fft``, ``ifft``, ``rfft``, ``irfft`` along one axis; ``fft2``, ``ifft2``,
``fftn``, ``ifftn``, ``rfftn``, ``irfftn`` along several. ``norm`` is numpy's
(``"backward"``, the default: the inverse scaled by 1/n; ``"ortho"``;
``"forward"``) or ``"none"`` (no scale either way). Complex input of
complex64 or complex128 (a real input is cast to complex128, float32 and
narrower floats to complex64); ``rfft`` takes float32 or float64. ``n``/``s``
crop or zero-pad the input along the axes first, as numpy does.

Each transform's bits are a function of its line's values alone (not of the
batch, the layout, the threads or the tier). Plans are built once per
(transform, axes, norm, shape, dtype) and kept in a cache of the last
:data:`PLAN_CACHE_SIZE` (see :func:`plan`, :func:`clear_plan_cache`).
"""

from __future__ import annotations

import functools

import numpy as np

from . import _native
from ._arrays import Result, as_array, operand, tessera_dtype
from .errors import ShapeError

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "plan",
    "clear_plan_cache",
]

PLAN_CACHE_SIZE = 64


@functools.lru_cache(maxsize=PLAN_CACHE_SIZE)
def plan(transform: str, axes: tuple, inverse: bool, norm, shape: tuple, dtype: str):
    """The plan of one transform (``"c2c"``, ``"r2c"`` or ``"c2r"``) for an
    input of ``shape`` and ``dtype`` (for c2r: the real output's shape and
    the complex input's dtype), cached."""
    return _native.FftPlan(transform, list(axes), inverse, norm, list(shape), dtype)


def clear_plan_cache() -> None:
    """Drop every cached plan."""
    plan.cache_clear()


def _norm(norm):
    return "backward" if norm is None else norm


def _complex(a: np.ndarray) -> np.ndarray:
    if a.dtype in (np.complex64, np.complex128):
        return a
    from . import cast

    narrow = a.dtype.kind == "V" or a.dtype in (np.float16, np.float32)
    return cast(a, np.complex64 if narrow else np.complex128)


def _real(a: np.ndarray) -> np.ndarray:
    if a.dtype in (np.float32, np.float64):
        return a
    from . import cast

    narrow = a.dtype.kind == "V" or a.dtype == np.float16
    return cast(a, np.float32 if narrow else np.float64)


def _fit(a: np.ndarray, axes, sizes) -> np.ndarray:
    """``a`` cropped or zero-padded to ``sizes`` along ``axes``."""
    if sizes is None:
        return a
    for ax, n in zip(axes, sizes):
        n = int(n)
        if n < 0:
            raise ShapeError(f"invalid number of points {n}")
        have = a.shape[ax]
        if n < have:
            a = np.take(a, np.arange(n), axis=ax)
        elif n > have:
            pad = [(0, 0)] * a.ndim
            pad[ax] = (0, n - have)
            a = np.pad(a, pad)
    return a


def _norm_axes(a: np.ndarray, axes, s):
    if axes is None:
        axes = list(range(a.ndim)) if s is None else list(range(a.ndim - len(s), a.ndim))
    axes = [int(x) for x in axes]
    for x in axes:
        if not -a.ndim <= x < a.ndim:
            raise ShapeError(f"axis {x} is out of range for an array of rank {a.ndim}")
    axes = [x % a.ndim for x in axes]
    if len(set(axes)) != len(axes):
        raise ShapeError(f"axes {axes} repeat an axis")
    if s is not None and len(s) != len(axes):
        raise ShapeError("s and axes have different lengths")
    return axes


def _run(transform, a, axes, inverse, norm, shape, out, threads, tier):
    p = plan(transform, tuple(axes), inverse, _norm(norm), tuple(shape), tessera_dtype(a.dtype))
    oshape, odt = p.output()
    res = Result(oshape, odt, out)
    p.run(operand(a), res.native, threads=threads, tier=tier)
    return res.finish()


def _c2c(a, s, axes, norm, inverse, out, threads, tier):
    a = _complex(as_array(a))
    axes = _norm_axes(a, axes, s)
    a = _fit(a, axes, s)
    return _run("c2c", a, axes, inverse, norm, a.shape, out, threads, tier)


def fftn(a, s=None, axes=None, norm=None, out=None, threads=None, tier=None):
    """The forward transform along ``axes`` (default: all, or the last len(s))."""
    return _c2c(a, s, axes, norm, False, out, threads, tier)


def ifftn(a, s=None, axes=None, norm=None, out=None, threads=None, tier=None):
    """The inverse transform along ``axes``."""
    return _c2c(a, s, axes, norm, True, out, threads, tier)


def fft(a, n=None, axis=-1, norm=None, out=None, threads=None, tier=None):
    """The forward transform along ``axis``, ``n`` points (crop or zero-pad)."""
    return _c2c(a, None if n is None else [n], [axis], norm, False, out, threads, tier)


def ifft(a, n=None, axis=-1, norm=None, out=None, threads=None, tier=None):
    """The inverse transform along ``axis``."""
    return _c2c(a, None if n is None else [n], [axis], norm, True, out, threads, tier)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None, threads=None, tier=None):
    """The forward transform along the last two axes."""
    return _c2c(a, s, axes, norm, False, out, threads, tier)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None, threads=None, tier=None):
    """The inverse transform along the last two axes."""
    return _c2c(a, s, axes, norm, True, out, threads, tier)


def rfftn(a, s=None, axes=None, norm=None, out=None, threads=None, tier=None):
    """The forward transform of a real array: bins ``0..n//2`` along the last of ``axes``."""
    a = _real(as_array(a))
    axes = _norm_axes(a, axes, s)
    a = _fit(a, axes, s)
    return _run("r2c", a, axes, False, norm, a.shape, out, threads, tier)


def rfft(a, n=None, axis=-1, norm=None, out=None, threads=None, tier=None):
    """The forward transform of a real line: ``n//2 + 1`` bins."""
    return rfftn(a, None if n is None else [n], [axis], norm, out, threads, tier)


def irfftn(a, s=None, axes=None, norm=None, out=None, threads=None, tier=None):
    """The inverse of :func:`rfftn`: a real array with ``s`` points along
    ``axes`` (default: the input's, the last ``2*(m-1)`` for m bins)."""
    a = _complex(as_array(a))
    axes = _norm_axes(a, axes, s)
    if s is None:
        s = [a.shape[x] for x in axes[:-1]] + [2 * (a.shape[axes[-1]] - 1)]
    s = [int(v) for v in s]
    # The complex input holds s[-1]//2 + 1 bins along the last axis.
    a = _fit(a, axes, s[:-1] + [s[-1] // 2 + 1])
    shape = list(a.shape)
    shape[axes[-1]] = s[-1]
    return _run("c2r", a, axes, True, norm, shape, out, threads, tier)


def irfft(a, n=None, axis=-1, norm=None, out=None, threads=None, tier=None):
    """The inverse of :func:`rfft`: ``n`` real points (default ``2*(m-1)``)."""
    return irfftn(a, None if n is None else [n], [axis], norm, out, threads, tier)
