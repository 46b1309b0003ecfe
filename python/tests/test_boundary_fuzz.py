"""Malformed calls straight into the native module: each raises a Python
exception (the process never aborts, which would end this test run)."""

import numpy as np
import pytest

import tessera
from tessera import _native


def malformed_calls():
    f = np.zeros(4)
    o = np.zeros(4)
    u8 = np.zeros(3, np.uint8)
    huge = 2**63
    yield lambda: _native.elementwise("add", [f], o)
    yield lambda: _native.elementwise("add", [f, f, f], o)
    yield lambda: _native.elementwise("exp", [(u8, "i4", [huge])], np.zeros(1, np.uint8))
    yield lambda: _native.elementwise("exp", [(u8, "i4", [2**64 - 1])], (u8, "i4", [6]))
    yield lambda: _native.elementwise("neg", [(u8, "i4", [7, 9])], (np.zeros(64, np.uint8), "i4", [7, 9]))
    yield lambda: _native.elementwise("neg", [(u8, "nosuch", [6])], (u8.copy(), "i4", [6]))
    yield lambda: _native.elementwise("neg", [(u8, "i4")], o)
    yield lambda: _native.elementwise("neg", [(f, "i4", [6])], o)
    yield lambda: _native.elementwise("exp", [f], np.zeros(4, np.float32))
    yield lambda: _native.elementwise("exp", ["text"], o)
    yield lambda: _native.reduce(["sum"], [5], f, [np.zeros(())])
    yield lambda: _native.reduce(["sum"], [0, 0], f, [np.zeros(())])
    yield lambda: _native.reduce(["sum"], [0], f, [])
    yield lambda: _native.reduce(["argmax"], [0], f, [np.zeros(())])
    yield lambda: _native.scan("sum", 3, f, o)
    yield lambda: _native.contract(f, f, o, [(0, 0)], [(0, 0)], "f64")
    yield lambda: _native.contract(f.reshape(2, 2), f.reshape(2, 2), o.reshape(2, 2), [], [(9, 0)], "f64")
    yield lambda: _native.contract_shape([2, 3], [4, 5], [], [(1, 0)], "f64")
    yield lambda: _native.FftPlan("c2c", [3], False, None, [4], "c128")
    yield lambda: _native.FftPlan("c2c", [0], False, "sideways", [4], "c128")
    yield lambda: _native.FftPlan("dct", [0], False, None, [4], "f64")
    yield lambda: _native.FftPlan("c2c", [0], False, None, [huge], "c128")
    yield lambda: _native.FftPlan("c2c", [0], False, None, [4], "f64").run(f, o)
    yield lambda: _native.sort(f, 2, False, False, values=o)
    yield lambda: _native.sort(f, 0, False, False)
    yield lambda: _native.sort(f, 0, False, False, values=o, positions=o)
    yield lambda: _native.unique(f, o, o, o)
    yield lambda: _native.unique(np.zeros((4, 1), np.uint64), np.zeros(3, np.int64), np.zeros(4, np.int64), np.zeros(4, np.int64))
    yield lambda: _native.linalg_run("lu", [f.reshape(2, 2)], [o.reshape(2, 2)])
    yield lambda: _native.linalg_run("svd", [f.reshape(2, 2)], [np.zeros(2), np.zeros((2, 2))])
    yield lambda: _native.linalg_run("inverse", [f], [o])
    yield lambda: _native.attention(f, f, f, o, o, 1.0, "full")
    yield lambda: _native.attention(f.reshape(1, 1, 2, 2), f.reshape(1, 1, 2, 2), f.reshape(1, 1, 2, 2), o.reshape(1, 1, 2, 2), np.zeros((1, 1, 2)), 1.0, "program", text="y0 = x0")
    yield lambda: _native.attention(f.reshape(1, 1, 2, 2), f.reshape(1, 1, 2, 2), f.reshape(1, 1, 2, 2), o.reshape(1, 1, 2, 2), np.zeros((1, 1, 2)), 1.0, "sliding_window", window=0)
    yield lambda: _native.gather(0, f, f, o)
    yield lambda: _native.scatter("mul", 0, f, np.zeros(4, np.int64), f, o)
    yield lambda: _native.random(2**64, o)
    yield lambda: _native.quantize(False, f, np.zeros(4, np.int8), scale=-1.0)
    yield lambda: _native.quantize(False, f, np.zeros(4, np.int8))
    yield lambda: _native.quantize(False, f, np.zeros(4, np.int8), scale=float("nan"))
    yield lambda: _native.encode("mxfp4", np.zeros(32, np.float32), np.zeros(3, np.uint8), np.zeros(1, np.uint8))
    yield lambda: _native.encode("mxfp4", np.zeros(32, np.float32), np.zeros(32, np.uint8)[::2], np.zeros(1, np.uint8))
    yield lambda: _native.encode("nvfp4", np.zeros(16, np.float32), np.zeros(8, np.uint8), np.zeros(1, np.uint8), tensor_scale=-2.0)
    yield lambda: _native.decode("mxfp4", np.zeros(3, np.uint8), np.zeros(1, np.uint8), np.zeros(32, np.float32))
    yield lambda: _native.decode("nosuch", u8, u8, o)
    yield lambda: _native.Program("y0 = " + "(" * 100000 + "x0", ["f32"])
    yield lambda: _native.Program("y0 = x0", ["nosuch"])
    yield lambda: _native.call_dtypes("add", ["f32"])
    yield lambda: _native.elementwise("add", [f, f], o, threads=2**70)
    yield lambda: _native.elementwise("add", [f, f], o, tier="avx9000")


@pytest.mark.parametrize("i,call", list(enumerate(malformed_calls())))
def test_malformed_call_raises(i, call):
    with pytest.raises(Exception) as e:
        call()
    assert not isinstance(e.value, tessera.errors.InternalError), e.value


def test_random_views_never_abort(rng):
    """Random shapes, strides and dtypes through add/sum/sort/cast: each
    call either works (and agrees with the contiguous copy) or raises."""
    dts = [np.float32, np.float64, np.int8, np.uint16, np.int64, np.complex128]
    for _ in range(300):
        dt = dts[rng.integers(len(dts))]
        rank = int(rng.integers(1, 4))
        shape = tuple(int(v) for v in rng.integers(0, 5, rank))
        base = (rng.standard_normal(shape) * 9).astype(dt)
        steps = tuple(int(v) for v in rng.choice([-2, -1, 1, 2], rank))
        big = np.zeros(tuple(max(1, n * abs(s)) for n, s in zip(shape, steps)), dt)
        sl = tuple(slice(None, n * abs(s), abs(s)) for n, s in zip(shape, steps))
        view = big[sl]
        view[...] = base
        view = view[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in steps)]
        ref = np.ascontiguousarray(view)
        assert np.array_equal(tessera.add(view, view), tessera.add(ref, ref))
        assert np.array_equal(tessera.sum(view), tessera.sum(ref))
        if rank:
            assert np.array_equal(tessera.sort(view, axis=-1), tessera.sort(ref, axis=-1))
        assert np.array_equal(tessera.cast(view, np.float64), tessera.cast(ref, np.float64), equal_nan=True)
