"""Convolution, order statistics, sorted sets and the byte engine against
numpy and Python's own bytes, base64 and codecs."""

import base64
import binascii

import numpy as np
import pytest

import tessera
from conftest import every_execution, same_bits


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_equal_numpy_on_integers(rng, mode):
    x = rng.integers(-20, 20, 300).astype(np.float64)
    k = rng.integers(-5, 5, 7).astype(np.float64)
    assert same_bits(tessera.convolve(x, k, mode), np.convolve(x, k, mode))
    assert same_bits(tessera.correlate(x, k, mode), np.correlate(x, k, mode))
    batch = rng.integers(-20, 20, (4, 50)).astype(np.float64)
    want = np.stack([np.convolve(r, k, mode) for r in batch])
    assert same_bits(tessera.convolve(batch, k, mode), want)


def test_convolve_float_bound_and_bits_everywhere(rng):
    x = rng.standard_normal(5000).astype(np.float32)
    k = rng.standard_normal(33).astype(np.float32)
    got = tessera.convolve(x, k).astype(np.float64)
    exact = np.convolve(x.astype(np.float64), k.astype(np.float64))
    u = 2.0**-24
    bound = 33 * u / (1 - 33 * u) * np.convolve(np.abs(x).astype(np.float64), np.abs(k).astype(np.float64))
    assert np.all(np.abs(got - exact) <= bound + 1e-30)
    runs = every_execution(lambda **kw: tessera.convolve(x, k, **kw))
    assert all(same_bits(r, runs[0]) for r in runs)


def test_median_and_quantile_equal_numpy(rng):
    x = rng.standard_normal((6, 101))
    assert same_bits(tessera.median(x, axis=1), np.median(x, axis=1))
    assert same_bits(tessera.median(x[:, :100], axis=1), np.median(x[:, :100], axis=1))
    for q in (0.0, 0.1, 0.5, 0.77, 1.0):
        assert same_bits(tessera.quantile(x, q, axis=0), np.quantile(x, q, axis=0))
    assert tessera.median(np.array([3, 1, 2], np.int32)) == 2.0
    assert np.isnan(tessera.median(np.array([1.0, np.nan, 2.0])))
    with pytest.raises(tessera.errors.ArgumentError):
        tessera.quantile(x, 1.5)


def test_searchsorted_and_sets_equal_numpy(rng):
    a = np.sort(rng.integers(-1000, 1000, 5000)).astype(np.int64)
    v = rng.integers(-1100, 1100, 300).astype(np.int64)
    assert np.array_equal(tessera.searchsorted(a, v), np.searchsorted(a, v))
    f = np.sort(rng.standard_normal(1000))
    q = rng.standard_normal(50)
    assert np.array_equal(tessera.searchsorted(f, q), np.searchsorted(f, q))
    x = rng.integers(0, 500, 2000).astype(np.int32)
    y = rng.integers(250, 750, 2000).astype(np.int32)
    assert np.array_equal(tessera.intersect1d(x, y), np.intersect1d(x, y))
    assert np.array_equal(tessera.setdiff1d(x, y), np.setdiff1d(x, y))
    ux, uy = np.unique(x), np.unique(y)
    assert np.array_equal(tessera.intersect1d(ux, uy, assume_unique=True), np.intersect1d(ux, uy))


def test_byte_search_equals_python(rng):
    hay = bytes(rng.integers(97, 101, 20000, dtype=np.uint8))
    for needle in (b"a", b"ab", b"abcd", b"dddd", b"abcabcab", b"z", b""):
        assert tessera.bytes.find(hay, needle) == hay.find(needle)
        assert tessera.bytes.rfind(hay, needle) == hay.rfind(needle)
        if needle:
            assert tessera.bytes.count(hay, needle) == hay.count(needle)
    arr = np.frombuffer(hay, np.uint8)
    assert tessera.bytes.find(arr[5:], b"ab") == hay[5:].find(b"ab")


def test_utf8_validation_equals_codecs(rng):
    good = "tessera: ∑ é 𝔸 — ok".encode()
    assert tessera.bytes.is_utf8(good) and tessera.bytes.utf8_valid_up_to(good) == len(good)
    for _ in range(300):
        b = bytes(rng.integers(0, 256, int(rng.integers(0, 40)), dtype=np.uint8))
        b = good[: int(rng.integers(0, len(good)))] + b
        try:
            b.decode("utf-8")
            want = len(b)
        except UnicodeDecodeError as e:
            want = e.start
        assert tessera.bytes.utf8_valid_up_to(b) == want, b


def test_hex_and_base64_equal_python(rng):
    for n in (0, 1, 2, 3, 4, 5, 31, 32, 33, 1000, 4099):
        b = bytes(rng.integers(0, 256, n, dtype=np.uint8))
        assert tessera.bytes.hex_encode(b) == b.hex().encode()
        assert tessera.bytes.hex_decode(b.hex().upper().encode()) == b
        assert tessera.bytes.b64encode(b) == base64.b64encode(b)
        assert tessera.bytes.b64encode(b, url=True) == base64.urlsafe_b64encode(b)
        assert tessera.bytes.b64encode(b, pad=False) == base64.b64encode(b).rstrip(b"=")
        assert tessera.bytes.b64decode(base64.b64encode(b)) == b
        assert tessera.bytes.b64decode(base64.urlsafe_b64encode(b), url=True) == b
    # RFC 4648 §10 vectors.
    for plain, coded in [(b"", b""), (b"f", b"Zg=="), (b"fo", b"Zm8="), (b"foo", b"Zm9v"),
                         (b"foob", b"Zm9vYg=="), (b"fooba", b"Zm9vYmE="), (b"foobar", b"Zm9vYmFy")]:
        assert tessera.bytes.b64encode(plain) == coded
        assert tessera.bytes.b64decode(coded) == plain
    # Malformed texts Python refuses too (validate=True) ...
    for bad in (b"Zm9", b"Zm9v\n", b"Zg=a"):
        with pytest.raises(binascii.Error):
            base64.b64decode(bad, validate=True)
        with pytest.raises(tessera.errors.ArgumentError):
            tessera.bytes.b64decode(bad)
    # ... and non-zero bits after the last byte, which Python accepts and
    # tessera's strict decoder refuses (RFC 4648 §3.5 lets a decoder reject them).
    with pytest.raises(tessera.errors.ArgumentError):
        tessera.bytes.b64decode(b"Zh==")
    with pytest.raises(tessera.errors.ArgumentError, match="at byte 3"):
        tessera.bytes.hex_decode(b"00a?")


def test_products_and_norms_within_their_bounds(rng):
    import math
    from fractions import Fraction

    x = rng.standard_normal((4, 3000))
    y = rng.standard_normal((4, 3000))
    u = 2.0**-53
    g = 3000 * u / (1 - 3000 * u)
    for i, got in enumerate(tessera.vecdot(x, y, axis=1)):
        exact = float(sum(Fraction(a) * Fraction(b) for a, b in zip(x[i], y[i])))
        assert abs(got - exact) <= g * float(np.abs(x[i] * y[i]).sum()) * 1.01
    # Dot2: about twice the precision: within u|S| + a tiny multiple of u²Σ|xy|.
    for i, got in enumerate(tessera.dot2(x, y, axis=1)):
        exact = float(sum(Fraction(a) * Fraction(b) for a, b in zip(x[i], y[i])))
        assert abs(got - exact) <= u * abs(exact) + 1e-6 * u * float(np.abs(x[i] * y[i]).sum())
    z = x + 1j * y
    assert np.allclose(tessera.vecdot(z, z[::-1], axis=1), np.vecdot(z, z[::-1], axis=1), rtol=1e-12)
    row = [float(v) for v in x[0]]
    assert abs(tessera.sum_squares(x[0]) - math.fsum(v * v for v in row)) <= g * math.fsum(v * v for v in row)
    assert abs(tessera.linalg.vector_norm(x[0]) - math.sqrt(math.fsum(v * v for v in row))) <= 4 * g
    assert abs(tessera.linalg.vector_norm(x[0], ord=1) - math.fsum(abs(v) for v in row)) <= g * 3000
    assert abs(tessera.squared_distance(x[0], y[0]) - math.fsum((a - b) ** 2 for a, b in zip(x[0], y[0]))) <= 1e-9
    assert abs(tessera.l1_distance(x[0], y[0]) - math.fsum(abs(a - b) for a, b in zip(x[0], y[0]))) <= 1e-9
    huge = np.full(10, 1e300)
    assert tessera.linalg.vector_norm(huge) == pytest.approx(1e300 * math.sqrt(10))  # no overflow
    runs = every_execution(lambda **kw: tessera.vecdot(x, y, **kw))
    assert all(same_bits(r, runs[0]) for r in runs)


def test_series_kernels(rng):
    import math

    x = rng.standard_normal(1000)
    assert same_bits(tessera.series.diff(x), np.diff(x))
    rm = tessera.series.rolling_mean(x, 50)
    for i in (0, 1, 500, 950):
        exact = math.fsum(x[i : i + 50]) / 50
        assert abs(rm[i] - exact) <= 1e-14
    assert same_bits(tessera.series.rolling_min(x, 7), np.lib.stride_tricks.sliding_window_view(x, 7).min(axis=1))
    assert same_bits(tessera.series.rolling_max(x, 7), np.lib.stride_tricks.sliding_window_view(x, 7).max(axis=1))
    y = np.empty_like(x)
    y[0] = x[0]
    a, b = 0.3, 1 - 0.3
    for i in range(1, x.size):
        y[i] = a * x[i] + b * y[i - 1]
    assert same_bits(tessera.series.ema(x, 0.3), y)
    c = 0.25
    assert abs(tessera.series.sum_squared_deviations(x, c) - math.fsum((v - c) ** 2 for v in x)) <= 1e-11
    with pytest.raises(tessera.errors.ArgumentError):
        tessera.series.rolling_mean(x, 0)
    with pytest.raises(tessera.errors.DTypeError):
        tessera.series.diff(np.arange(4))
