"""Casts between every pair of dtypes that numpy or ml_dtypes hold, bit for
bit against numpy's/ml_dtypes' own ``astype`` (tessera's default cast mode
follows ml_dtypes' rules), on values where numpy defines the conversion; a
complex source into a real dtype takes its real part, as numpy does (with a
warning)."""

import warnings

import ml_dtypes
import numpy as np
import pytest

import tessera

NAMES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "bfloat16",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float8_e3m4", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e8m0fnu", "float6_e2m3fn",
    "float6_e3m2fn", "float4_e2m1fn", "int4", "uint4",
]


def np_type(name):
    return np.dtype(getattr(ml_dtypes, name, None) or name)


def source_values(name, rng):
    """Values held exactly by ``name``: numpy's own conversion of a spread of
    numbers (the specials, integers, random magnitudes) into it."""
    dt = np_type(name)
    raw = np.concatenate([
        np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.0, -8.0, 15.0, 100.0, 255.0,
                  300.0, -129.0, 65504.0, 1e6, -1e9, 3e9, 2.0**40, 2.0**63, -2.0**63,
                  np.inf, -np.inf, np.nan, 1e-8, 6e-8, 2.0**-126, 1e-300]),
        rng.standard_normal(300) * 10.0 ** rng.integers(-6, 7, 300),
        rng.integers(-300, 300, 100).astype(np.float64),
    ])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if dt.kind in "iub" or name in ("int4", "uint4"):
            if name in ("int4", "uint4"):
                lo, hi = (-8, 7) if name == "int4" else (0, 15)
            elif dt.kind == "b":
                lo, hi = 0, 1
            else:
                lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
            finite = raw[np.isfinite(raw)]
            ints = np.trunc(finite)
            vals = np.array([int(v) for v in ints if lo <= int(v) <= hi] + [lo, hi], dtype=object)
            if dt.kind == "b":
                return vals.astype(bool)
            if name in ("int4", "uint4"):
                return np.array([int(v) for v in vals], np.int64).astype(dt)
            return np.array([int(v) for v in vals], dtype=dt)
        out = raw.astype(dt)
        if dt.kind == "c":
            out = out + 1j * raw[::-1].astype(dt)
        return out


def keep(src, dst_name):
    """The elements whose conversion numpy defines: into an integer, a
    finite real value inside the integer's range once truncated; from a
    complex, only its real part counts for numpy (it warns and drops the
    imaginary part)."""
    dt = np_type(dst_name)
    x = src
    if x.dtype.kind == "c":
        x = x.real
    if dt.kind in "iu" or dst_name in ("int4", "uint4"):
        with np.errstate(all="ignore"):
            f = x.astype(np.float64)
        if dst_name in ("int4", "uint4"):
            lo, hi = (-8, 7) if dst_name == "int4" else (0, 15)
        else:
            lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        t = np.trunc(f)
        return np.isfinite(f) & (t >= lo) & (t <= hi) & (np.abs(f) < 2.0**63)
    return np.ones(x.shape, bool)


def same(a, b):
    """Equal values (NaN equal to NaN, -0 distinct from +0)."""
    if a.dtype.kind == "c":
        return same(a.real, b.real) & same(a.imag, b.imag)
    if a.dtype.kind in "fV" and a.dtype.kind != "b":
        fa, fb = a.astype(np.float64), b.astype(np.float64)
        return ((fa == fb) & (np.signbit(fa) == np.signbit(fb))) | (np.isnan(fa) & np.isnan(fb))
    return a == b


@pytest.mark.parametrize("src", NAMES)
def test_casts_from_every_dtype_equal_astype(rng, src):
    x = source_values(src, rng)
    failures = []
    for dst in NAMES:
        k = keep(x, dst)
        xs = x[k]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            want = xs.astype(np_type(dst))
        got = tessera.cast(xs, np_type(dst))
        assert got.dtype == want.dtype
        bad = ~same(got, want)
        if bad.any():
            i = np.flatnonzero(bad)[0]
            failures.append(f"{src}->{dst}: {xs[i]!r} gives {got[i]!r}, astype {want[i]!r} ({bad.sum()} of {bad.size})")
    assert not failures, "\n".join(failures)
