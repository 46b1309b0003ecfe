"""numpy's figures for tessera-bench's `unique` group: np.unique with
return_index, return_inverse and return_counts over 16M int64 keys of the
group's four kinds (1000 distinct, 1M distinct, all distinct, 1M distinct
of small span), best of 3 calls each, one thread (numpy's unique sorts).

    python3 bench/scripts/unique_numpy.py [--quick]

Prints one line per case: the case, seconds per call, and the number of
distinct keys. The keys are drawn as the Rust group draws them (uniform
picks from a pool of random 64-bit words, or uniform small integers), not
the same values: the figures compare kinds of input.
"""

import sys
import time

import numpy as np


def best(f, reps):
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    quick = "--quick" in sys.argv
    n = 1 << 18 if quick else 1 << 24
    rng = np.random.default_rng(1)
    words = lambda k: rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=k, dtype=np.int64)
    few = words(1000)
    many = words(n // 16)
    cases = [
        ("few", few[rng.integers(0, few.size, size=n)]),
        ("many", many[rng.integers(0, many.size, size=n)]),
        ("all distinct", words(n)),
        ("small span", rng.integers(0, n // 16, size=n, dtype=np.int64) - 5000),
    ]
    print(f"numpy {np.__version__}: np.unique(return_index, return_inverse, return_counts), seconds per call")
    for name, keys in cases:
        out = {}

        def call():
            out["r"] = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)

        t = best(call, 1 if quick else 3)
        print(f"unique i64 {n >> 20}M, {name:<14} {t:8.3f} s  ({out['r'][0].size} keys)")


if __name__ == "__main__":
    main()
