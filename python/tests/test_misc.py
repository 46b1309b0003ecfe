"""Attention, gather/scatter, random numbers, quantisation and the
block-scaled formats against independent models."""

import ml_dtypes
import numpy as np
import pytest

import tessera
from conftest import every_execution, same_bits


def naive_attention(q, k, v, scale, visible):
    groups = q.shape[-3] // k.shape[-3]
    k = np.repeat(k.astype(np.float64), groups, axis=-3)
    v = np.repeat(v.astype(np.float64), groups, axis=-3)
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2) * scale
    s = np.where(visible, s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    l = p.sum(-1, keepdims=True)
    return p @ v / l, (m + np.log(l))[..., 0]


def test_attention_against_the_softmax_model(rng):
    q = rng.standard_normal((2, 4, 70, 32)).astype(np.float32)
    k = rng.standard_normal((2, 2, 90, 32)).astype(np.float32)
    v = rng.standard_normal((2, 2, 90, 16)).astype(np.float32)
    scale = 1 / np.sqrt(32)
    rows, keys = np.arange(70)[:, None], np.arange(90)[None, :]
    for kw, vis in [
        ({}, np.ones((70, 90), bool)),
        ({"causal": True, "offset": 20}, keys <= rows + 20),
        ({"window": 8, "offset": 20}, (keys <= rows + 20) & (keys > rows + 12)),
    ]:
        o, lse = tessera.attention(q, k, v, return_lse=True, **kw)
        want_o, want_lse = naive_attention(q, k, v, scale, vis)
        assert o.shape == (2, 4, 70, 16) and o.dtype == np.float32
        assert np.abs(o - want_o).max() <= 1e-5
        assert np.abs(lse - want_lse).max() <= 1e-5
    prog = "y0 = coord(3) <= coord(2); y1 = x0 * 0.5f32"
    o = tessera.attention(q, k, v, program=prog)
    want_o, _ = naive_attention(q, k, v, scale * 0.5, keys <= rows)
    assert np.abs(o - want_o).max() <= 1e-5
    runs = every_execution(lambda **kw: tessera.attention(q, k, v, causal=True, **kw))
    assert all(same_bits(r, runs[0]) for r in runs)


def test_gather_and_scatter(rng):
    x = rng.standard_normal((5, 9))
    p = rng.integers(0, 9, (5, 4))
    assert same_bits(tessera.gather(x, p, axis=1), np.take_along_axis(x, p, axis=1))
    out_of_range = tessera.gather(x, np.full((5, 1), 99), axis=1)
    assert np.array_equal(out_of_range, np.zeros((5, 1)))
    updates = rng.standard_normal((5, 4))
    got = tessera.scatter(x, p, updates, axis=1, combine="add")
    want = x.copy()
    for i in range(5):
        for j in range(4):  # C order of the updates
            want[i, p[i, j]] += updates[i, j]
    assert same_bits(got, want)
    got = tessera.scatter(x, p, updates, axis=1)
    want = x.copy()
    np.put_along_axis(want, p, updates, axis=1)  # numpy keeps the last one too
    assert same_bits(got, want)


def splitmix(seed, i):
    m = (1 << 64) - 1
    z = (seed + (i + 1) * 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def test_random_follows_its_stated_stream():
    seed = 1234567
    f = tessera.random((3, 5), np.float64, seed=seed)
    want = [(splitmix(seed, i) >> 11) * 2.0**-53 for i in range(15)]
    assert f.ravel().tolist() == want
    u = tessera.random(7, np.uint32, seed=seed)
    assert u.tolist() == [splitmix(seed, i) & 0xFFFFFFFF for i in range(7)]
    runs = every_execution(lambda **kw: tessera.random(100_001, np.float32, seed=9, **kw))
    assert all(same_bits(r, runs[0]) for r in runs)


def test_quantize_matches_its_formula(rng):
    x = (rng.standard_normal(5000) * 4).astype(np.float32)
    q = tessera.quantize(x, 0.05, 3, dtype=np.int8)
    want = np.clip(np.rint(x / np.float32(0.05)) + 3, -128, 127).astype(np.int8)
    assert same_bits(q, want)
    back = tessera.dequantize(q, 0.05, 3)
    assert same_bits(back, ((q.astype(np.float32) - 3) * np.float32(0.05)).astype(np.float32))
    xs = (rng.standard_normal((4, 6)) * 4).astype(np.float32)
    scales = np.array([0.1, 0.2, 0.05, 1.0], np.float32)
    qc = tessera.quantize(xs, scales, 0, dtype=np.int8, axis=0)
    assert same_bits(qc, np.clip(np.rint(xs / scales[:, None]), -128, 127).astype(np.int8))


def mxfp8_model(x):
    """OCP MX: per block of 32, scale 2^(floor(log2 amax) - 8); elements
    clamped to ±448 and rounded to E4M3 (ml_dtypes)."""
    out = np.empty_like(x)
    for b in range(0, x.size, 32):
        blk = x[b : b + 32]
        e = int(np.floor(np.log2(np.abs(blk).max()))) - 8
        codes = np.clip(blk.astype(np.float64) / 2.0**e, -448, 448).astype(ml_dtypes.float8_e4m3fn)
        out[b : b + 32] = codes.astype(np.float64) * 2.0**e
    return out


def test_mxfp8_against_the_ocp_model(rng):
    x = (rng.standard_normal(32 * 40) * 10.0 ** rng.integers(-3, 3, 32 * 40)).astype(np.float32)
    enc = tessera.formats.encode(x, "mxfp8_e4m3")
    assert enc.codes.size == x.size and enc.scales.size == 40 and enc.tensor_scale is None
    assert same_bits(tessera.formats.decode(enc), mxfp8_model(x))
    nv = tessera.formats.encode(x.reshape(-1, 16), "nvfp4")
    assert nv.tensor_scale is not None
    back = tessera.formats.decode(nv, np.float64)
    assert back.shape == (x.size // 16, 16)
    assert "mxfp4" in tessera.formats.formats()
