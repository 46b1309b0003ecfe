"""numpy arrays at the boundary: dtypes by name, operands, results.

tessera's dtypes are matched to numpy's and ml_dtypes' by name (``float32``,
``bfloat16``, ``float8_e4m3fn``, ``int4`` …): rust-numpy does not know the
ml_dtypes types, and they do not support the buffer protocol, so the name
and the item size are what the native side checks.

Sub-byte dtypes (``int4``, ``uint4``, ``uint1``, ``float4_e2m1fn``) are
stored by ml_dtypes one value per byte, in the low bits. tessera packs them
(two or eight per byte along the last axis, element 0 in the most
significant bits); operands of those dtypes are packed here into a
C-contiguous byte buffer (a copy) and results unpacked into ml_dtypes arrays.
The packed last axis must hold a whole number of bytes (an even extent for
4-bit dtypes, a multiple of 8 for ``uint1``) or a single value.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _native
from .errors import DTypeError

try:  # ml_dtypes registers bfloat16, the float8/6/4 types and int4/uint4 with numpy.
    import ml_dtypes as _ml
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    _ml = None

# name -> (class, bits, values per byte, item bytes, aliases, numpy descriptor)
DTYPES = {row[0]: row[1:7] for row in _native.dtypes()}
_BY_ALIAS = {}
for _name, (_cls, _bits, _vpb, _item, _aliases, _np) in DTYPES.items():
    _BY_ALIAS[_name] = _name
    for _a in _aliases:
        _BY_ALIAS[_a] = _name


_BY_NUMPY: dict = {}  # numpy dtype object -> tessera name, filled as met


def tessera_dtype(dtype) -> str:
    """The tessera dtype name of a numpy dtype, a type, or a name."""
    if isinstance(dtype, str) and dtype in _BY_ALIAS:
        return _BY_ALIAS[dtype]
    hit = _BY_NUMPY.get(dtype) if isinstance(dtype, np.dtype) else None
    if hit is not None:
        return hit
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{dtype!r} is not a dtype") from None
    name = dt.name
    if name in _BY_ALIAS:
        _BY_NUMPY[dt] = _BY_ALIAS[name]
        return _BY_ALIAS[name]
    raise DTypeError(f"numpy dtype {name} has no tessera counterpart")


_NUMPY_OF: dict = {}  # tessera name -> numpy dtype, filled as asked


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype that holds tessera's dtype ``name`` (ml_dtypes' where numpy has none)."""
    hit = _NUMPY_OF.get(name)
    if hit is not None:
        return hit
    dt = _numpy_dtype(name)
    _NUMPY_OF[name] = dt
    return dt


def _numpy_dtype(name: str) -> np.dtype:
    name = _BY_ALIAS.get(name, name)
    if name not in DTYPES:
        raise DTypeError(f"unknown dtype {name!r}")
    _cls, _bits, _vpb, _item, aliases, descr = DTYPES[name]
    if descr is not None:
        return np.dtype(descr)
    if _ml is not None:
        for a in (name, *aliases):
            t = getattr(_ml, a, None)
            if t is not None:
                return np.dtype(t)
    raise DTypeError(
        f"tessera's {name} has no numpy or ml_dtypes type to hold it in Python"
    )


def per_byte(name: str) -> int:
    """Values of ``name`` per byte in tessera's layout (1 unless sub-byte)."""
    return DTYPES[name][2]


def _pack(a: np.ndarray, name: str):
    """A sub-byte array as tessera's packed operand ``(bytes, dtype, shape)``:
    rows along the last axis padded to whole bytes, element 0 in the most
    significant bits."""
    vpb = per_byte(name)
    bits = 8 // vpb
    shape = a.shape
    if a.size == 0:
        return (np.zeros(0, np.uint8), name, list(shape))
    last = shape[-1] if shape else 1
    codes = np.ascontiguousarray(a).view(np.uint8).reshape(-1, last) & np.uint8((1 << bits) - 1)
    width = -(-last // vpb) * vpb  # the row padded to whole bytes
    if width != last:
        codes = np.concatenate([codes, np.zeros((codes.shape[0], width - last), np.uint8)], axis=1)
    groups = codes.reshape(codes.shape[0], -1, vpb)
    packed = np.zeros(groups.shape[:2], np.uint8)
    for j in range(vpb):
        packed |= groups[:, :, j] << np.uint8(8 - bits * (j + 1))
    return (packed.reshape(-1), name, list(shape))


def _unpack(buf: np.ndarray, name: str, shape) -> np.ndarray:
    """tessera's packed bytes of ``shape`` as an ml_dtypes array (one value per byte)."""
    shape = tuple(shape)
    if 0 in shape:
        return np.zeros(shape, numpy_dtype(name))
    vpb = per_byte(name)
    bits = 8 // vpb
    last = shape[-1] if shape else 1
    width = -(-last // vpb) * vpb
    rows = buf.reshape(-1, width // vpb)
    codes = np.empty((rows.shape[0], width // vpb, vpb), np.uint8)
    for j in range(vpb):
        codes[:, :, j] = (rows >> np.uint8(8 - bits * (j + 1))) & np.uint8((1 << bits) - 1)
    codes = codes.reshape(rows.shape[0], width)[:, :last]
    return np.ascontiguousarray(codes).view(numpy_dtype(name)).reshape(shape)


def is_scalar(x) -> bool:
    """A Python number (not a numpy array or numpy scalar of a dtype)."""
    return isinstance(x, (bool, numbers.Number)) and not isinstance(x, np.generic)


def as_array(x, like: np.dtype | None = None) -> np.ndarray:
    """``x`` as a numpy array: a Python number takes ``like``'s dtype where
    given (rounded into a float dtype, as numpy does with a Python float
    beside a float32 array). Into an integer dtype it must be an integer in
    the dtype's range: tessera does not promote, so a fraction or an
    out-of-range value is refused rather than truncated or wrapped."""
    if isinstance(x, np.ndarray):
        return x
    if like is not None and is_scalar(x):
        if isinstance(x, bool):
            return np.asarray(x)
        like = np.dtype(like)
        name = tessera_dtype(like)
        if DTYPES[name][0] in ("int", "uint", "bool"):
            lo, hi = _int_range(name)
            if not isinstance(x, int) or not lo <= x <= hi:
                raise DTypeError(
                    f"{x!r} is not a value of {name} (the array operand's dtype; "
                    "tessera does not promote: cast the array first)"
                )
        return np.asarray(x).astype(like)
    return np.asarray(x)


def _int_range(name: str):
    cls, bits = DTYPES[name][0], DTYPES[name][1]
    if cls == "bool":
        return 0, 1
    if cls == "uint":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def operand(a: np.ndarray):
    """``a`` as the native side reads it: in place where its layout allows."""
    name = tessera_dtype(a.dtype)
    if per_byte(name) > 1:
        return _pack(a, name)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    flags = a.flags
    if flags.c_contiguous or flags.f_contiguous:
        return a
    item = a.dtype.itemsize
    if any(s % item for s, n in zip(a.strides, a.shape) if n > 1):
        a = np.ascontiguousarray(a)
    return a


class Result:
    """A destination: the array the native side writes and the one returned.

    ``out`` (a user's array) is written in place; without it a new array is
    allocated. Sub-byte results go through a packed buffer and are unpacked
    into ``out`` only after the call succeeded, so a refusal writes nothing.
    """

    def __init__(self, shape, name: str, out: np.ndarray | None = None):
        self.shape = tuple(shape)
        self.name = _BY_ALIAS.get(name, name)
        self.out = out
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise DTypeError("out must be a numpy array")
            have = tessera_dtype(out.dtype)
            if have != self.name:
                raise DTypeError(f"out has dtype {have}, the result is {self.name}")
            if tuple(out.shape) != self.shape:
                from .errors import ShapeError

                raise ShapeError(f"out has shape {out.shape}, the result has {self.shape}")
        if per_byte(self.name) > 1:
            vpb = per_byte(self.name)
            last = self.shape[-1] if self.shape else 1
            rows = int(np.prod(self.shape[:-1], dtype=np.int64)) if len(self.shape) > 1 else 1
            nbytes = rows * (-(-last // vpb)) if 0 not in self.shape else 0
            self._buf = np.zeros(nbytes, np.uint8)
            self.native = (self._buf, self.name, list(self.shape))
        elif out is not None:
            self.native = out
        else:
            self.native = np.empty(self.shape, numpy_dtype(self.name))

    def finish(self) -> np.ndarray:
        """The result after a successful call."""
        if per_byte(self.name) > 1:
            arr = _unpack(self._buf, self.name, self.shape)
            if self.out is not None:
                self.out[...] = arr
                return self.out
            return arr
        return self.native
