"""tessera from Python beside numpy, in one run, alternating the peers.

    python python/bench.py            # the full run (16M f32, about a minute)
    python python/bench.py --quick    # small sizes, for CI's smoke run

Prints, per row, the best of several alternated runs of each side and the
ratio (numpy's time over tessera's: above 1, tessera is faster), then:

* the per-call overhead on a 1-element f32 array (tessera's time over
  numpy's ufunc time: the target is at most 1.5);
* the Python call on 16M f32 beside the same kernel timed inside Rust (no
  Python between runs): the target is within 5%.

numpy runs its own threads for none of these rows; tessera runs with
``threads=1`` so that the two compare core for core (set TESSERA_THREADS
to change it).
"""

import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

# Python puts this script's folder first on the path, and that folder holds
# the package's sources without their compiled module: import the installed
# package instead.
_here = Path(__file__).resolve().parent
sys.path = [p for p in sys.path if Path(p or ".").resolve() != _here]

import tessera  # noqa: E402

THREADS = int(os.environ.get("TESSERA_THREADS", "1"))


def best(f, reps):
    t = float("inf")
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t


def alternate(a, b, reps, rounds=3):
    ta = tb = float("inf")
    for _ in range(rounds):
        ta = min(ta, best(a, reps))
        tb = min(tb, best(b, reps))
    return ta, tb


def per_call(f, n=20000):
    for _ in range(1000):
        f()
    s = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - s) / n


def host():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.machine()} {model}; tiers {tessera.tiers()['available']}, default {tessera.tiers()['default']}"


def main(quick):
    n = 1 << 16 if quick else 1 << 24
    reps = 2 if quick else 5
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 10, n).astype(np.float32)
    y = np.empty_like(x)
    print(f"host: {host()}; numpy {np.__version__}; python {sys.version.split()[0]}; tessera threads={THREADS}")
    print()
    print(f"{'row':34} {'numpy':>11} {'tessera':>11} {'numpy/tessera':>14}")

    def row(name, np_f, ts_f, r=reps):
        tn, tt = alternate(np_f, ts_f, r)
        print(f"{name:34} {tn * 1e3:9.3f}ms {tt * 1e3:9.3f}ms {tn / tt:14.2f}")

    th = dict(threads=THREADS)
    row(f"exp f32 [{n}]", lambda: np.exp(x, out=y), lambda: tessera.exp(x, out=y, **th))
    row(f"sum f32 [{n}]", lambda: np.sum(x), lambda: tessera.sum(x, **th))
    row(f"sort f32 [{n}]", lambda: np.sort(x), lambda: tessera.sort(x, **th), max(1, reps // 2))
    c = (rng.standard_normal(n // 4) + 1j * rng.standard_normal(n // 4)).astype(np.complex64)
    row(f"fft c64 [{n // 4}]", lambda: np.fft.fft(c), lambda: tessera.fft.fft(c, **th), max(1, reps // 2))
    m = 256 if quick else 2048
    a = rng.standard_normal((m, m)).astype(np.float32)
    b = rng.standard_normal((m, m)).astype(np.float32)
    row(f"matmul f32 [{m}x{m}]", lambda: a @ b, lambda: tessera.matmul(a, b, **th), max(1, reps // 2))

    print()
    one = np.ones(1, np.float32)
    o1 = np.empty(1, np.float32)
    for name, nf, tf in [
        ("exp, new result", lambda: np.exp(one), lambda: tessera.exp(one)),
        ("exp, out=", lambda: np.exp(one, out=o1), lambda: tessera.exp(one, out=o1)),
        ("add, new result", lambda: np.add(one, one), lambda: tessera.add(one, one)),
    ]:
        tn = tt = float("inf")
        for _ in range(3):
            tn = min(tn, per_call(nf))
            tt = min(tt, per_call(tf))
        print(f"per-call overhead, 1-element f32 {name:16}: numpy {tn * 1e9:6.0f} ns, tessera {tt * 1e9:6.0f} ns, ratio {tt / tn:.2f} (target <= 1.5)")

    print()
    rust = tessera._native._time_elementwise("exp", [x], y, reps * 3, threads=THREADS)
    py = min(best(lambda: tessera.exp(x, out=y, **th), reps) for _ in range(3))
    print(f"exp f32 [{n}]: from Python {py * 1e3:.3f} ms, inside Rust {rust * 1e3:.3f} ms, Python/Rust {py / rust:.3f} (target <= 1.05)")
    s = np.empty((), np.float32)
    rust = tessera._native._time_reduce("sum", [0], x, s, reps * 3, threads=THREADS)
    py = min(best(lambda: tessera.sum(x, **th), reps) for _ in range(3))
    print(f"sum f32 [{n}]: from Python {py * 1e3:.3f} ms, inside Rust {rust * 1e3:.3f} ms, Python/Rust {py / rust:.3f} (target <= 1.05)")


if __name__ == "__main__":
    main("--quick" in sys.argv)
