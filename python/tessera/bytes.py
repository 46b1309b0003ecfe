"""The byte engine on Python bytes: search, UTF-8 validation, hex and base64.

Every function takes ``bytes``, ``bytearray``, ``memoryview`` or a 1-D
uint8 numpy array (read in place), and the coders return ``bytes``. Decoders
are strict and all-or-nothing: a malformed text raises
:class:`tessera.errors.ArgumentError` naming the offset of the first bad
byte, and nothing is returned.
"""

from __future__ import annotations

import numpy as np

from . import _native

__all__ = ["find", "rfind", "count", "utf8_valid_up_to", "is_utf8",
           "hex_encode", "hex_decode", "b64encode", "b64decode"]


def _u8(b) -> np.ndarray:
    if isinstance(b, np.ndarray):
        if b.dtype != np.uint8:
            b = b.view(np.uint8)
        return np.ascontiguousarray(b).reshape(-1)
    return np.frombuffer(memoryview(b).cast("B"), np.uint8)


def find(hay, needle, threads=None, tier=None):
    """The first position of ``needle`` in ``hay``, or -1 (``bytes.find``)."""
    r = _native.bytes_find(_u8(hay), _u8(needle), False, threads=threads, tier=tier)
    return -1 if r is None else r


def rfind(hay, needle, threads=None, tier=None):
    """The last position of ``needle`` in ``hay``, or -1 (``bytes.rfind``)."""
    r = _native.bytes_find(_u8(hay), _u8(needle), True, threads=threads, tier=tier)
    return -1 if r is None else r


def count(hay, needle, threads=None, tier=None) -> int:
    """Non-overlapping occurrences of ``needle`` in ``hay`` (``bytes.count``)."""
    return _native.bytes_count(_u8(hay), _u8(needle), threads=threads, tier=tier)


def utf8_valid_up_to(b, threads=None, tier=None) -> int:
    """The length of the longest valid UTF-8 prefix: ``len(b)`` where all is
    valid, else the position of the first byte of the first error."""
    return _native.utf8_valid_up_to(_u8(b), threads=threads, tier=tier)


def is_utf8(b, threads=None, tier=None) -> bool:
    """Whether ``b`` is valid UTF-8 throughout."""
    a = _u8(b)
    return _native.utf8_valid_up_to(a, threads=threads, tier=tier) == a.size


def _run(codec, src, url=False, pad=True, threads=None, tier=None) -> bytes:
    s = _u8(src)
    if codec == "base64_decode":
        n = _native.coded_len(codec, s.size, s, url=url, pad=pad)
    else:
        n = _native.coded_len(codec, s.size, url=url, pad=pad)
    dst = np.empty(n, np.uint8)
    w = _native.code(codec, s, dst, url=url, pad=pad, threads=threads, tier=tier)
    return dst[:w].tobytes()


def hex_encode(b, threads=None, tier=None) -> bytes:
    """Lower-case hex digits of ``b`` (``bytes.hex()``, as bytes)."""
    return _run("hex_encode", b, threads=threads, tier=tier)


def hex_decode(text, threads=None, tier=None) -> bytes:
    """The bytes of hex digits (either case; no separators)."""
    return _run("hex_decode", text, threads=threads, tier=tier)


def b64encode(b, url=False, pad=True, threads=None, tier=None) -> bytes:
    """Base64 (RFC 4648): the standard alphabet or, with ``url``, the URL-safe
    one; ``=`` padding unless ``pad`` is false."""
    return _run("base64_encode", b, url, pad, threads, tier)


def b64decode(text, url=False, pad=True, threads=None, tier=None) -> bytes:
    """The bytes of a base64 text, strictly: no whitespace, padding exactly
    as ``pad`` says, zero bits after the last byte."""
    return _run("base64_decode", text, url, pad, threads, tier)
