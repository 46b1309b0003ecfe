"""Reductions and scans: integers against numpy exactly, floats within
their stated bounds of exact sums, the same bits in every layout, tier and
thread count."""

import math
from fractions import Fraction

import numpy as np
import pytest

import tessera
from conftest import every_execution, same_bits


def gamma(n, u):
    return n * u / (1 - n * u)


@pytest.mark.parametrize("dtype,u", [(np.float32, 2.0**-24), (np.float64, 2.0**-53)])
def test_float_sum_within_its_bound(rng, dtype, u):
    x = (rng.standard_normal((7, 30001)) * 1e3).astype(dtype)
    got = tessera.sum(x, axis=1)
    for i in range(7):
        row = [float(v) for v in x[i]]
        exact = math.fsum(row)
        bound = gamma(len(row), u) * math.fsum(abs(v) for v in row)
        assert abs(float(got[i]) - exact) <= bound


def test_integer_reductions_equal_numpy(rng):
    x = rng.integers(-(2**31), 2**31, (13, 1000), dtype=np.int32)
    assert same_bits(tessera.sum(x, axis=1), x.sum(axis=1, dtype=np.int32))  # wrapping
    assert same_bits(tessera.max(x, axis=0), x.max(axis=0))
    assert same_bits(tessera.min(x), np.int32(x.min()))
    assert np.array_equal(tessera.argmax(x, axis=1), x.argmax(axis=1))
    assert np.array_equal(tessera.argmin(x, axis=0), x.argmin(axis=0))
    assert tessera.argmax(x) == x.argmax()  # C-order position over all axes


def test_keepdims_tuple_axes_and_dtype(rng):
    x = rng.standard_normal((3, 4, 5))
    r = tessera.sum(x, axis=(0, 2), keepdims=True)
    assert r.shape == (1, 4, 1)
    assert np.allclose(r, x.sum(axis=(0, 2), keepdims=True))
    assert tessera.sum(x, axis=-1).shape == (3, 4)
    assert tessera.sum(x.astype(np.float32), dtype=np.float64).dtype == np.float64


def test_mean_var_std_logsumexp(rng):
    x = rng.standard_normal(1000) * 3 + 1
    fx = [Fraction(float(v)) for v in x]
    mean = sum(fx) / len(fx)
    var = sum((v - mean) ** 2 for v in fx) / len(fx)
    assert abs(tessera.mean(x) - float(mean)) <= 1e-14 * abs(float(mean)) + 1e-15
    assert abs(tessera.var(x) - float(var)) <= 1e-13 * float(var)
    assert abs(tessera.std(x) - math.sqrt(float(var))) <= 1e-13 * math.sqrt(float(var))
    m = max(x)
    lse = m + math.log(math.fsum(math.exp(v - m) for v in x))
    assert abs(tessera.logsumexp(x) - lse) <= 1e-13 * abs(lse)


def test_nan_propagates_in_max():
    x = np.array([1.0, np.nan, 3.0])
    assert np.isnan(tessera.max(x))
    assert tessera.argmax(x) == 1


def test_scans(rng):
    x = rng.integers(-1000, 1000, (5, 3000), dtype=np.int64)
    assert same_bits(tessera.cumsum(x, axis=1), np.cumsum(x, axis=1))
    assert same_bits(tessera.cummax(x, axis=0), np.maximum.accumulate(x, axis=0))
    assert same_bits(tessera.cummin(x, axis=1), np.minimum.accumulate(x, axis=1))
    assert same_bits(tessera.cumsum(x), np.cumsum(x))  # axis=None flattens
    f = rng.standard_normal(20000)
    got = tessera.cumsum(f)
    for i in (0, 1, 4095, 4096, 4097, 19999):
        exact = math.fsum(f[: i + 1])
        bound = gamma(i + 1, 2.0**-53) * math.fsum(abs(f[: i + 1]))
        assert abs(got[i] - exact) <= bound
    pos = tessera.scan("argmax", x, axis=1)
    assert pos.dtype == np.int64 and pos[0, -1] == np.argmax(x[0])


def test_reductions_and_scans_same_bits_everywhere(rng):
    x = rng.standard_normal((3, 70001)).astype(np.float32)
    for f in (
        lambda **kw: tessera.sum(x, axis=1, **kw),
        lambda **kw: tessera.logsumexp(x, axis=1, **kw),
        lambda **kw: tessera.var(x, axis=1, **kw),
        lambda **kw: tessera.cumsum(x, axis=1, **kw),
    ):
        runs = every_execution(f)
        assert all(same_bits(r, runs[0]) for r in runs)


def test_reduction_refusals():
    with pytest.raises(tessera.errors.ShapeError):
        tessera.sum(np.zeros((2, 3)), axis=2)
    with pytest.raises(tessera.errors.DTypeError):
        tessera.mean(np.zeros(3, np.int32))
    with pytest.raises(tessera.errors.ArgumentError):
        tessera.reduce("median", np.zeros(3))
    with pytest.raises(ValueError):
        tessera.max(np.zeros((0,)))


def test_native_reductions_equal_the_python_path(rng):
    for dt in (np.float32, np.float64, np.int32, np.uint8):
        x = (rng.standard_normal((3, 4, 5)) * 50).astype(dt)
        for axis in (None, 0, 1, -1, (0, 2), (2, 0), (0, 1, 2)):
            for keepdims in (False, True):
                for name, op in (("sum", "sum"), ("max", "max"), ("min", "min"), ("prod", "prod")):
                    fast = getattr(tessera, name)(x, axis=axis, keepdims=keepdims)
                    slow = tessera.reduce(op, x, axis, keepdims)
                    assert type(fast) is type(slow) and same_bits(np.asarray(fast), np.asarray(slow)), (dt, axis, name)
    f = rng.standard_normal((6, 7))
    for name, op in (("mean", "mean"), ("var", "variance"), ("logsumexp", "logsumexp")):
        assert same_bits(getattr(tessera, name)(f, axis=1), tessera.reduce(op, f, 1))
    assert isinstance(tessera.sum(f.astype(np.float32)), np.float32)  # numpy's scalar, as numpy gives
    with pytest.raises(tessera.errors.ShapeError):
        tessera.sum(f, axis=2)
    with pytest.raises(tessera.errors.ShapeError):
        tessera.sum(f, axis=(0, 0))
    with pytest.raises(tessera.errors.DTypeError):
        tessera.mean(np.arange(3))
    assert tessera.sum([1.0, 2.0]) == 3.0  # a list takes the Python path
