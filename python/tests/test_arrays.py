"""Arrays at the boundary: layouts read in place, dtypes by name, out=,
overlap, sub-byte packing; every layout gives the contiguous array's bits."""

import ml_dtypes
import numpy as np
import pytest

import tessera
from conftest import same_bits


def layouts(base: np.ndarray):
    """The values of ``base`` (2-D) in many layouts: each is (name, array
    equal to base)."""
    yield "c", np.ascontiguousarray(base)
    yield "fortran", np.asfortranarray(base)
    big = np.zeros((base.shape[0] * 2, base.shape[1] * 3), base.dtype)
    big[::2, ::3] = base
    yield "strided", big[::2, ::3]
    rev = np.ascontiguousarray(base[::-1, ::-1])
    yield "negative", rev[::-1, ::-1]
    raw = np.zeros(base.nbytes + 1, np.uint8)
    un = raw[1:].view(base.dtype).reshape(base.shape)
    un[...] = base
    yield "unaligned", un
    ro = np.array(base)
    ro.flags.writeable = False
    yield "read-only", ro
    yield "transposed", np.ascontiguousarray(base.T).T


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex64])
def test_every_layout_gives_the_contiguous_bits(rng, dtype):
    base = rng.standard_normal((37, 23)) * 8
    if np.dtype(dtype).kind == "c":
        base = base + 1j * rng.standard_normal(base.shape)
    base = base.astype(dtype)
    want_add = tessera.add(base, base)
    want_sum = tessera.sum(base, axis=1)
    want_cum = tessera.cumsum(base, axis=0)
    for name, x in layouts(base):
        assert same_bits(tessera.add(x, x), want_add), name
        assert same_bits(tessera.sum(x, axis=1), want_sum), name
        assert same_bits(tessera.cumsum(x, axis=0), want_cum), name


def test_exact_kinds_match_numpy_in_every_layout(rng):
    base = rng.standard_normal((64, 33)).astype(np.float32)
    other = rng.standard_normal((64, 33)).astype(np.float32)
    for name, x in layouts(base):
        for name2, y in layouts(other):
            assert same_bits(tessera.mul(x, y), base * other), (name, name2)
            assert same_bits(tessera.div(x, y), base / other), (name, name2)


def test_out_receives_the_result_in_place():
    x = np.arange(10, dtype=np.float64)
    out = np.empty(10)
    r = tessera.add(x, 1.0, out=out)
    assert r is out and np.array_equal(out, x + 1)
    # out= an input: the input is read as it was before the call.
    y = np.arange(10, dtype=np.float64)
    tessera.mul(y, y[::-1], out=y)
    assert np.array_equal(y, np.arange(10.0) * np.arange(10.0)[::-1])
    # A strided out.
    big = np.zeros(20)
    tessera.add(x, x, out=big[::2])
    assert np.array_equal(big[::2], 2 * x) and not big[1::2].any()


def test_broadcasting_and_python_numbers():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([10, 20, 30], np.float32)
    assert np.array_equal(tessera.add(a, b), a + b)
    r = tessera.mul(a, 2)
    assert r.dtype == np.float32 and np.array_equal(r, a * 2)
    i = np.arange(4, dtype=np.int8)
    assert np.array_equal(tessera.add(i, 100), i + 100)
    with pytest.raises(tessera.errors.DTypeError):
        tessera.add(i, 1.5)  # no silent truncation
    with pytest.raises(tessera.errors.DTypeError):
        tessera.add(i, 300)  # nor wrapping
    c = np.array([1 + 2j, 3 - 1j], np.complex64)
    s = tessera.scale(c, 2.0)
    assert s.dtype == np.complex64 and np.array_equal(s, c * 2)


def test_big_endian_input_is_converted():
    x = np.arange(5, dtype=">f8")
    assert np.array_equal(tessera.add(x, 1.0), np.arange(5.0) + 1)


NARROW = [
    "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float8_e3m4",
    "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e8m0fnu",
    "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
]


@pytest.mark.parametrize("name", NARROW)
def test_casts_to_ml_dtypes_match_ml_dtypes(rng, name):
    t = getattr(ml_dtypes, name)
    x = np.concatenate([
        rng.standard_normal(4000).astype(np.float32) * np.float32(4.0) ** rng.integers(-6, 6, 4000),
        np.array([0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, 3e38, -3e38], np.float32),
    ])
    if name == "float8_e8m0fnu":
        x = np.abs(x[x != 0])
    got = tessera.cast(x, t)
    assert got.dtype == np.dtype(t) and got.shape == x.shape
    want = x.astype(t)
    g, w = got.astype(np.float32), want.astype(np.float32)
    both_nan = np.isnan(g) & np.isnan(w)
    assert np.array_equal(g[~both_nan], w[~both_nan]), name
    # And back: each code decodes exactly.
    assert np.array_equal(tessera.cast(want, np.float32)[~np.isnan(w)], w[~np.isnan(w)])


def test_every_numpy_dtype_maps_to_tessera():
    for np_name, t_name in [
        ("bool", "bool"), ("int8", "i8"), ("uint64", "u64"), ("float16", "f16"),
        ("float32", "f32"), ("float64", "f64"), ("complex64", "c64"), ("complex128", "c128"),
        ("bfloat16", "bf16"), ("float8_e4m3fn", "e4m3fn"), ("int4", "i4"), ("uint4", "u4"),
        ("float4_e2m1fn", "e2m1fn"), ("float6_e3m2fn", "e3m2fn"),
    ]:
        dt = getattr(ml_dtypes, np_name, None) or np.dtype(np_name)
        assert tessera.tessera_dtype(dt) == t_name
        assert tessera.numpy_dtype(t_name) == np.dtype(dt)


def test_int4_and_uint4_are_packed_at_the_boundary(rng):
    a = rng.integers(-8, 8, (5, 6)).astype(ml_dtypes.int4)
    b = rng.integers(-8, 8, (5, 6)).astype(ml_dtypes.int4)
    got = tessera.add(a, b)
    assert got.dtype == np.dtype(ml_dtypes.int4)
    s = a.astype(np.int64) + b.astype(np.int64)
    assert np.array_equal(got.astype(np.int64), (s + 8) % 16 - 8)  # wrapping
    u = rng.integers(0, 16, (3, 8)).astype(ml_dtypes.uint4)
    assert np.array_equal(tessera.mul(u, u).astype(np.int64), (u.astype(np.int64) ** 2) % 16)
    # A single value in the last axis, and strided and reversed views.
    col = rng.integers(-8, 8, (7, 1)).astype(ml_dtypes.int4)
    assert np.array_equal(tessera.neg(col).astype(np.int64), (-col.astype(np.int64) + 8) % 16 - 8)
    big = rng.integers(-8, 8, (6, 12)).astype(ml_dtypes.int4)
    view = big[::-2, ::3]
    assert np.array_equal(tessera.cast(view, np.int8), view.astype(np.int8))


def test_sub_byte_casts_and_out(rng):
    x = rng.standard_normal((4, 10)).astype(np.float32) * 3
    got = tessera.cast(x, ml_dtypes.float4_e2m1fn)
    assert np.array_equal(got.astype(np.float32), x.astype(ml_dtypes.float4_e2m1fn).astype(np.float32))
    out = np.zeros((4, 10), ml_dtypes.float4_e2m1fn)
    r = tessera.cast(x, ml_dtypes.float4_e2m1fn, out=out)
    assert r is out and np.array_equal(out.view(np.uint8), got.view(np.uint8))
    bits_ = rng.integers(0, 2, (3, 16)).astype(ml_dtypes.uint1)
    assert np.array_equal(
        tessera.cast(bits_, np.uint8), bits_.astype(np.uint8)
    )


def test_odd_packed_last_axis_is_padded_for_elementwise_calls(rng):
    a = rng.integers(-8, 8, (2, 3)).astype(ml_dtypes.int4)
    b = rng.integers(-8, 8, (3,)).astype(ml_dtypes.int4)
    got = tessera.add(a, b)
    assert got.shape == (2, 3)
    assert np.array_equal(got.astype(np.int64), (a.astype(np.int64) + b.astype(np.int64) + 8) % 16 - 8)
    out = np.zeros((2, 3), ml_dtypes.int4)
    assert tessera.add(a, b, out=out) is out and np.array_equal(out.view(np.uint8), got.view(np.uint8))
    x = rng.standard_normal(5).astype(np.float32)
    assert np.array_equal(
        tessera.cast(x, ml_dtypes.float4_e2m1fn).view(np.uint8),
        x.astype(ml_dtypes.float4_e2m1fn).view(np.uint8),
    )
    with pytest.raises(tessera.errors.ShapeError):
        tessera.sum(a, axis=0)  # not elementwise: the packed layout's rule holds
