"""Block-scaled formats: MXFP8 (E4M3, E5M2), MXFP6 (E2M3, E3M2), MXFP4,
MXINT8 and NVFP4.

:func:`encode` splits the last axis into the format's blocks and returns an
:class:`Encoded` (element codes and one scale byte per block, as the
library lays them out, plus NVFP4's tensor scale); :func:`decode` turns one
back into values of any dtype. Each block's scale and codes are functions of
the block's values alone (NVFP4's tensor scale, of the whole tensor's
amax, unless the caller gives it).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from . import _native
from ._arrays import Result, as_array, operand, tessera_dtype

__all__ = ["Encoded", "encode", "decode", "formats"]


class Encoded(NamedTuple):
    """An encoded tensor."""

    format: str
    shape: tuple
    codes: np.ndarray
    """uint8: the element codes, packed as the format states."""
    scales: np.ndarray
    """uint8: one scale code per block."""
    tensor_scale: Optional[float]
    """NVFP4's tensor scale (None for the MX formats)."""


def formats() -> list[str]:
    """Every format's name."""
    return list(_native.formats())


def encode(x, format: str, rule=None, tensor_scale=None, threads=None, tier=None) -> Encoded:
    """Encode ``x`` (any dtype; blocks along its last axis). ``rule``
    (``"floor"``, OCP MX's, or ``"ceil"``, no element clamped) overrides an
    MX format's scale rule; ``tensor_scale`` gives NVFP4's instead of
    deriving it from the data."""
    x = as_array(x)
    code_bytes, blocks = _native.encoded_sizes(format, list(x.shape))
    codes = np.zeros(code_bytes, np.uint8)
    scales = np.zeros(blocks, np.uint8)
    t = _native.encode(
        format, operand(x), codes, scales, rule=rule, tensor_scale=tensor_scale,
        threads=threads, tier=tier,
    )
    return Encoded(format, tuple(x.shape), codes, scales, t)


def decode(encoded: Encoded, dtype=np.float32, out=None, threads=None, tier=None) -> np.ndarray:
    """The values of ``encoded`` in ``dtype`` (each rounded once)."""
    res = Result(encoded.shape, tessera_dtype(dtype), out)
    _native.decode(
        encoded.format,
        np.ascontiguousarray(encoded.codes, np.uint8),
        np.ascontiguousarray(encoded.scales, np.uint8),
        res.native,
        tensor_scale=encoded.tensor_scale,
        threads=threads,
        tier=tier,
    )
    return res.finish()
