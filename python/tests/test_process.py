"""What a long-running process needs: no leaks over 10^5 calls, the same
bits as the Rust library's own command line, every exception class
reachable."""

import gc
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tessera
from conftest import same_bits


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_a_loop_of_calls_holds_its_memory_flat():
    x = np.arange(16, dtype=np.float32)
    y = np.empty(16, np.float32)
    ref_x, ref_y = sys.getrefcount(x), sys.getrefcount(y)

    def burst(n):
        for _ in range(n):
            tessera.exp(x, out=y)
            tessera.sum(x)
            try:
                tessera.add(x, np.zeros(3, np.float32))
            except tessera.errors.ShapeError:
                pass

    # Two equal bursts after a warm-up: a leak grows with the calls, so the
    # second burst would add as much as the first (33 000 iterations of three
    # calls: even 8 bytes a call would be 800 KB).
    tracemalloc.start()
    burst(2000)
    gc.collect()
    rss0, py0 = rss_bytes(), tracemalloc.get_traced_memory()[0]
    burst(50_000 // 3)
    gc.collect()
    rss1, py1 = rss_bytes(), tracemalloc.get_traced_memory()[0]
    burst(50_000 // 3)
    gc.collect()
    rss2, py2 = rss_bytes(), tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert py2 - py1 < 32 * 1024, (py0, py1, py2)
    assert rss2 - rss1 < 4 * 1024 * 1024, (rss0, rss1, rss2)
    assert sys.getrefcount(x) == ref_x and sys.getrefcount(y) == ref_y


def cli_binary():
    here = Path(__file__).resolve().parents[2]
    for p in (os.environ.get("TESSERA_CLI"), here / "target" / "release" / "tessera"):
        if p and Path(p).is_file():
            return Path(p)
    return None


@pytest.mark.skipif(cli_binary() is None, reason="the tessera command is not built (cargo build --release -p tessera-cli)")
@pytest.mark.parametrize("kind,dtype", [
    ("exp", np.float32), ("log1p", np.float64), ("sin", np.float32), ("erf", np.float64),
    ("tanh", ml_dtypes.bfloat16), ("atan2", np.float32), ("mul", ml_dtypes.float8_e4m3fn),
])
def test_elementwise_bits_equal_the_command_line(tmp_path, rng, kind, dtype):
    arity = {"atan2": 2, "mul": 2}.get(kind, 1)
    xs = [(rng.standard_normal(999) * 3).astype(dtype) for _ in range(arity)]
    name = tessera.tessera_dtype(dtype)
    call = {"kernel": kind, "attrs": {}, "operands": {}, "results": {"y": {"npy": "y.npy", "dtype": tessera.tessera_dtype(tessera.apply(kind, *xs).dtype)}}}
    for i, x in enumerate(xs):
        # Narrow floats travel as their raw codes (uint8/uint16) in .npy files.
        raw = x.view(np.uint8 if x.dtype.itemsize == 1 else np.uint16) if x.dtype.kind == "V" else x
        np.save(tmp_path / f"x{i}.npy", raw)
        call["operands"][f"x{i}"] = {"npy": f"x{i}.npy", "dtype": name}
    (tmp_path / "call.json").write_text(json.dumps(call))
    subprocess.run([str(cli_binary()), "run", str(tmp_path / "call.json")], check=True, capture_output=True)
    cli = np.load(tmp_path / "y.npy")
    got = tessera.apply(kind, *xs)
    assert np.array_equal(cli.view(np.uint8), np.ascontiguousarray(got).view(np.uint8))


def test_every_exception_class_is_raised():
    seen = set()

    def catch(f):
        try:
            f()
        except tessera.TesseraError as e:
            seen.add(type(e).__name__)

    catch(lambda: tessera.add(np.zeros(2), np.zeros(3)))
    catch(lambda: tessera.add(np.zeros(2), np.zeros(2, np.float32)))
    catch(lambda: tessera.apply("nosuch", np.zeros(2)))
    catch(lambda: tessera.fft.plan("c2c", (0,), False, None, (2**50,), "c128"))
    catch(lambda: tessera._native._panic_for_test())
    assert seen == {"ShapeError", "DTypeError", "ArgumentError", "AllocationError",
                    "InternalError"}, seen


def test_a_tier_this_cpu_lacks_raises_tier_error():
    missing = [t for t in tessera.tiers()["all"] if t not in tessera.tiers()["available"]]
    if not missing:
        pytest.skip("every tier runs on this CPU: TierError cannot be raised here")
    with pytest.raises(tessera.errors.TierError):
        tessera.exp(np.zeros(2), tier=missing[0])
