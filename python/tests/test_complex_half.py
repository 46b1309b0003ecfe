"""f16c and bf16c as ml_dtypes' complex32 and bcomplex32 (ml_dtypes 0.7 and
later): casts round each part once as ml_dtypes does, kinds compute in c64
and round each part, reductions and products read the values exactly, and
every tier and thread count gives the same bits."""

import ml_dtypes
import numpy as np
import pytest

import tessera
from conftest import every_execution, same_bits

pytestmark = pytest.mark.skipif(
    not hasattr(ml_dtypes, "complex32"),
    reason=f"ml_dtypes {ml_dtypes.__version__} has no complex32/bcomplex32",
)

TYPES = ["complex32", "bcomplex32"]


def small(rng, n, t):
    """Parts that are small integers and halves: sums and products of a few
    are exact in every format here."""
    re = rng.integers(-16, 16, n) / 2
    im = rng.integers(-16, 16, n) / 2
    return (re + 1j * im).astype(np.complex64).astype(getattr(ml_dtypes, t))


@pytest.mark.parametrize("t", TYPES)
def test_casts_round_each_part_as_ml_dtypes(rng, t):
    dt = getattr(ml_dtypes, t)
    z = (rng.standard_normal(4000) * 10 ** rng.uniform(-6, 6, 4000)).astype(np.float32)
    w = (rng.standard_normal(4000) * 10 ** rng.uniform(-6, 6, 4000)).astype(np.float32)
    c = (z + 1j * w).astype(np.complex64)
    got = tessera.cast(c, dt)
    assert got.dtype == np.dtype(dt)
    with np.errstate(all="ignore"):
        want = c.astype(dt)
    assert same_bits(got, want)
    # Back into complex64: exact.
    assert same_bits(tessera.cast(got, np.complex64), got.astype(np.complex64))


@pytest.mark.parametrize("t", TYPES)
def test_kinds_reductions_and_products(rng, t):
    dt = getattr(ml_dtypes, t)
    x, y = small(rng, 3000, t), small(rng, 3000, t)
    wide = lambda a: a.astype(np.complex64)  # noqa: E731
    for kind, ref in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply)]:
        got = getattr(tessera, kind)(x, y)
        assert got.dtype == np.dtype(dt)
        assert same_bits(got, ref(wide(x), wide(y)).astype(dt)), kind
    results = every_execution(lambda **kw: tessera.mul(x, y, **kw))
    assert all(same_bits(r, results[0]) for r in results)
    # The sum in c64 of the same values (exact here).
    s = tessera.reduce("sum", x, dtype=np.complex64)
    assert s == wide(x).sum()
    a, b = small(rng, 12 * 7, t).reshape(12, 7), small(rng, 7 * 5, t).reshape(7, 5)
    p = tessera.matmul(a, b, dtype=np.complex64)
    assert same_bits(p, wide(a) @ wide(b))
