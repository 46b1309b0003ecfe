"""Elementwise kinds, casts and map programs against numpy (IEEE-exact
operations bit for bit), f64 references (the 1-ulp transcendentals) and the
same bits on every tier and thread count."""

import numpy as np
import pytest

import tessera
from conftest import every_execution, same_bits


def test_every_kind_is_a_function():
    for k in tessera.kinds():
        name = {"min": "minimum", "max": "maximum"}.get(k, k)
        f = getattr(tessera, name)
        assert callable(f) and k in f.__doc__ or name in f.__doc__


EXACT_BINARY = [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind,ref", EXACT_BINARY)
def test_correctly_rounded_kinds_equal_numpy(rng, dtype, kind, ref):
    x = (rng.standard_normal(5000) * 10 ** rng.uniform(-30, 30, 5000)).astype(dtype)
    y = (rng.standard_normal(5000) * 10 ** rng.uniform(-30, 30, 5000)).astype(dtype)
    with np.errstate(all="ignore"):
        want = ref(x, y)
    assert same_bits(getattr(tessera, kind)(x, y), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_exact_kinds_equal_numpy(rng, dtype):
    x = (rng.standard_normal(5000) * 1e3).astype(dtype)
    x[:4] = [0.5, -0.5, 2.5, -3.5]
    for kind, ref in [
        ("sqrt", np.sqrt), ("neg", np.negative), ("abs", np.abs), ("floor", np.floor),
        ("ceil", np.ceil), ("trunc", np.trunc), ("rint", np.rint),
    ]:
        with np.errstate(all="ignore"):
            want = ref(x)
        got = getattr(tessera, kind)(x)
        both_nan = np.isnan(got) & np.isnan(want)
        assert np.array_equal(got[~both_nan], want[~both_nan]), kind
        assert np.array_equal(np.signbit(got[~both_nan]), np.signbit(want[~both_nan])), kind


def test_integer_kinds_wrap_as_numpy(rng):
    for dt in (np.int8, np.uint16, np.int32, np.uint64):
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, 3000, dtype=dt, endpoint=True)
        y = rng.integers(info.min, info.max, 3000, dtype=dt, endpoint=True)
        assert same_bits(tessera.add(x, y), x + y)
        assert same_bits(tessera.sub(x, y), x - y)
        assert same_bits(tessera.mul(x, y), x * y)
        assert same_bits(tessera.bitwise_xor(x, y), x ^ y)
        assert same_bits(tessera.lt(x, y), x < y)
        assert same_bits(tessera.minimum(x, y), np.minimum(x, y))


@pytest.mark.parametrize("kind,ref", [
    ("exp", np.exp), ("log", np.log), ("sin", np.sin), ("tanh", np.tanh),
    ("cbrt", np.cbrt), ("atan", np.arctan),
])
def test_transcendentals_within_one_ulp_of_f64(rng, kind, ref):
    x = rng.uniform(0.01, 20, 20000).astype(np.float32)
    got = getattr(tessera, kind)(x).astype(np.float64)
    exact = ref(x.astype(np.float64))
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert np.all(np.abs(got - exact) <= ulp * 1.0 + 1e-300), kind


def test_same_bits_on_every_tier_and_thread_count(rng):
    x = rng.standard_normal(200_003).astype(np.float32)
    for kind in ("exp", "sigmoid", "log1p", "erf"):
        runs = every_execution(lambda **kw: getattr(tessera, kind)(np.abs(x), **kw))
        assert all(same_bits(r, runs[0]) for r in runs), kind


def test_cast_modes():
    import ml_dtypes

    x = np.array([1000.0, -1000.0, 1.0], np.float32)
    sat = tessera.cast(x, ml_dtypes.float8_e4m3fn, mode="saturating").astype(np.float32)
    assert np.array_equal(sat, [448.0, -448.0, 1.0])
    default = tessera.cast(x, ml_dtypes.float8_e4m3fn).astype(np.float32)
    assert np.isnan(default[0]) and np.isnan(default[1])  # ml_dtypes' rule
    with pytest.raises(tessera.errors.ArgumentError):
        tessera.cast(x, np.float16, mode="wrap")


def test_map_equals_numpy_composition_of_exact_operations(rng):
    x0 = rng.uniform(0, 4, 10_000).astype(np.float32)
    x1 = rng.uniform(0, 4, 10_000).astype(np.float32)
    want = np.sqrt(x0 * x1 + x1) - x0  # each step correctly rounded in f32
    got = tessera.map("y0 = sqrt(x0 * x1 + x1) - x0", x0, x1)
    assert same_bits(got, want)
    plan = tessera.MapPlan("y0 = x0 * x1; y1 = x0 + x1", ["f32", "f32"])
    a, b = plan(x0, x1)
    assert same_bits(a, x0 * x1) and same_bits(b, x0 + x1)
    runs = every_execution(lambda **kw: plan(x0, x1, **kw)[0])
    assert all(same_bits(r, runs[0]) for r in runs)
    assert plan.output_dtypes == ["f32", "f32"]


def test_map_refuses_bad_text():
    with pytest.raises(tessera.errors.ArgumentError):
        tessera.map("y0 = nosuchkind(x0)", np.zeros(3, np.float32))
    with pytest.raises(tessera.errors.ArgumentError):
        tessera.map("y0 = (x0", np.zeros(3, np.float32))
