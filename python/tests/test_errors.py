"""The boundary: typed exceptions, nothing written on a refusal, no panic
reaching Python, the GIL released while a kernel runs, a KeyboardInterrupt
kept."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import tessera
from tessera import errors


def test_hierarchy():
    assert issubclass(errors.ShapeError, ValueError)
    assert issubclass(errors.DTypeError, TypeError)
    assert issubclass(errors.AllocationError, MemoryError)
    assert issubclass(errors.ArgumentError, ValueError)
    for c in (errors.ShapeError, errors.DTypeError, errors.ArgumentError, errors.AllocationError,
              errors.TierError, errors.InternalError):
        assert issubclass(c, errors.TesseraError)


def test_refusals_write_nothing():
    out = np.full(4, 7.0)
    with pytest.raises(errors.DTypeError) as e:
        tessera.add(np.zeros(4), np.zeros(4, np.float32), out=out)
    assert "f32" in str(e.value)
    with pytest.raises(errors.ShapeError):
        tessera.add(np.zeros(4), np.zeros(5), out=out)
    with pytest.raises(errors.DTypeError):
        tessera.add(np.zeros(4), np.zeros(4), out=np.zeros(4, np.float32))
    with pytest.raises(errors.ShapeError):
        tessera.add(np.zeros(4), np.zeros(4), out=np.zeros(5))
    assert (out == 7.0).all()
    ro = np.zeros(4)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        tessera.add(np.ones(4), np.ones(4), out=ro)
    assert not ro.any()


def test_overlapping_destinations_are_refused():
    x = np.arange(8.0)
    o = np.zeros(())
    with pytest.raises(errors.ShapeError, match="share memory"):
        tessera._native.reduce(["sum", "max"], [0], x, [o, o])


def test_bad_names_and_keywords():
    with pytest.raises(errors.ArgumentError):
        tessera.apply("nosuchkind", np.zeros(2))
    with pytest.raises(errors.ArgumentError):
        tessera.exp(np.zeros(2), tier="nosuchtier")
    with pytest.raises(errors.ArgumentError):
        tessera.exp(np.zeros(2), threads=0)
    with pytest.raises(errors.DTypeError):
        tessera.exp(np.array(["a", "b"]))
    with pytest.raises(errors.DTypeError):
        tessera._native.elementwise("exp", [[1.0, 2.0]], np.zeros(2))
    with pytest.raises(errors.ArgumentError):
        tessera.exp(np.zeros(2), np.zeros(2))


def test_a_panic_becomes_an_internal_error():
    with pytest.raises(errors.InternalError, match="on purpose"):
        tessera._native._panic_for_test()
    assert tessera.add(np.ones(2), np.ones(2)).tolist() == [2.0, 2.0]  # still alive


def test_the_gil_is_released_while_a_kernel_runs():
    a = np.random.default_rng(0).standard_normal((2000, 2000))
    span = {}

    def work():
        span["start"] = time.perf_counter()
        tessera.matmul(a, a, threads=1)
        span["end"] = time.perf_counter()

    ticks = []
    t = threading.Thread(target=work)
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
    t.join()
    start, end = span["start"], span["end"]
    inside = [x for x in ticks if start + 0.01 < x < end - 0.01]
    assert end - start > 0.05, "the product was too short to observe"
    # The main thread ran Python code while the product ran.
    assert len(inside) > 100, (len(ticks), end - start)


def test_a_keyboard_interrupt_during_a_call_is_raised():
    a = np.random.default_rng(0).standard_normal((1200, 1200))
    timer = threading.Timer(0.02, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        for _ in range(50):
            tessera.matmul(a, a, threads=1)
    timer.join()


def test_calls_from_many_python_threads_give_the_same_bits():
    rng = np.random.default_rng(5)
    x = rng.standard_normal(300_000).astype(np.float32)
    want_exp, want_sum = tessera.exp(x), tessera.sum(x)
    want_fft = tessera.fft.fft(x[:65536].astype(np.complex64))
    results = []

    def work():
        for _ in range(5):
            results.append((
                np.array_equal(tessera.exp(x).view(np.uint32), want_exp.view(np.uint32)),
                tessera.sum(x) == want_sum,
                np.array_equal(tessera.fft.fft(x[:65536].astype(np.complex64)), want_fft),
            ))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 30 and all(all(r) for r in results)
