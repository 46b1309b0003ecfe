"""One-dimensional series kernels on float32 or float64: differences,
rolling means and extremes over a window, the exponential moving average
and the sum of squared deviations. Each states its order (tessera's
``reduce/series.rs``); none depends on threads or tier. Inputs of other
layouts are copied to a contiguous line first.
"""

from __future__ import annotations

import numpy as np

from . import _native
from .errors import DTypeError

__all__ = ["diff", "rolling_mean", "rolling_min", "rolling_max", "ema", "sum_squared_deviations"]


def _line(x) -> np.ndarray:
    x = np.ascontiguousarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise DTypeError(f"series kernels take float32 or float64, not {x.dtype}")
    return x


def _run(which, x, n_out, window=1, alpha=0.0, threads=None, tier=None):
    x = _line(x)
    out = np.empty(max(n_out(x.size), 0), x.dtype)
    _native.series_run(which, x, out, window=window, alpha=alpha, threads=threads, tier=tier)
    return out


def diff(x, threads=None, tier=None) -> np.ndarray:
    """``x[i + 1] − x[i]`` (numpy's ``diff``), n − 1 values."""
    return _run("diff", x, lambda n: n - 1, threads=threads, tier=tier)


def rolling_mean(x, window: int, threads=None, tier=None) -> np.ndarray:
    """The mean of each window of ``window`` values (n − window + 1 of them),
    each window summed afresh in lane order, then divided once."""
    return _run("rolling_mean", x, lambda n: n - window + 1, window, threads=threads, tier=tier)


def rolling_min(x, window: int, threads=None, tier=None) -> np.ndarray:
    """The minimum of each window of ``window`` values."""
    return _run("rolling_min", x, lambda n: n - window + 1, window, threads=threads, tier=tier)


def rolling_max(x, window: int, threads=None, tier=None) -> np.ndarray:
    """The maximum of each window of ``window`` values."""
    return _run("rolling_max", x, lambda n: n - window + 1, window, threads=threads, tier=tier)


def ema(x, alpha: float, threads=None, tier=None) -> np.ndarray:
    """The exponential moving average: ``y[0] = x[0]``, then ``y[i] =
    alpha·x[i] + (1 − alpha)·y[i − 1]``, strictly in sequence."""
    return _run("ema", x, lambda n: n, alpha=alpha, threads=threads, tier=tier)


def sum_squared_deviations(x, c: float, threads=None, tier=None) -> float:
    """Σ (x − c)², each term rounded once after the rounded difference,
    summed in lane order."""
    x = _line(x)
    return _native.series_run(
        "sum_squared_deviations", x, np.empty(0, x.dtype), alpha=float(c), threads=threads, tier=tier
    )
