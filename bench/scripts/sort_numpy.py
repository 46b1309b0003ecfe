#!/usr/bin/env python3
"""numpy's sorts on the `sort` group's cases, for its ratios.

Times `np.sort` with the default kind (x86-simd-sort on AVX-512 hosts,
unstable) and `kind='stable'` (radix sort for 16-bit and smaller, timsort
or radix otherwise), and `np.argsort` likewise, on 16M f32, u32 and i64
(`--n` to change), one thread, best of `--rounds` calls, printing
ns/element. Each call sorts a fresh copy of the input (the copy is timed,
as the `sort` group's peers copy too). numpy asks for transparent huge
pages for its large arrays (`madvise`), which on a system whose setting is
`madvise` makes its fresh output far cheaper to fault in; `--no-hugepage`
turns that off, to see how much of its time is the pages.

    OMP_NUM_THREADS=1 python3 bench/scripts/sort_numpy.py [--n 16777216] [--rounds 3] [--no-hugepage]
"""

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def best(f, rounds):
    t = float("inf")
    for _ in range(rounds):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-hugepage", action="store_true")
    a = ap.parse_args()
    if a.no_hugepage:
        try:
            from numpy._core.multiarray import _set_madvise_hugepage
        except ImportError:
            from numpy.core.multiarray import _set_madvise_hugepage
        _set_madvise_hugepage(False)
    n = a.n
    rng = np.random.default_rng(1)
    cases = {
        "f32": ((rng.random(n, dtype=np.float32) - 0.5)
                * np.exp2(rng.integers(-20, 20, n)).astype(np.float32)),
        "u32": rng.integers(0, 2**32, n, dtype=np.uint32),
        "i64": rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64),
    }
    pages = "4 KiB pages" if a.no_hugepage else "huge pages asked for"
    print(f"numpy {np.__version__}: ns/element, one thread, best of {a.rounds}, {pages}")
    print(f"{'case':<28} {'np.sort':>9} {'stable':>9} {'argsort':>9} {'arg stable':>11}")
    for name, x in cases.items():
        r = [
            best(lambda: np.sort(x), a.rounds),
            best(lambda: np.sort(x, kind="stable"), a.rounds),
            best(lambda: np.argsort(x), a.rounds),
            best(lambda: np.argsort(x, kind="stable"), a.rounds),
        ]
        ns = [t * 1e9 / n for t in r]
        print(f"{name + ' ' + str(n):<28} {ns[0]:>9.2f} {ns[1]:>9.2f} {ns[2]:>9.2f} {ns[3]:>11.2f}")


if __name__ == "__main__":
    main()
