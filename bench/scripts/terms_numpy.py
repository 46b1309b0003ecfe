#!/usr/bin/env python3
"""numpy's binary64 evaluation of the `protected` group's terms cases.

The combination x = Σ_t w_t·T_t of T complex128 terms of N points (one
matrix-vector product), and its exponential exp(x) (numpy's complex exp in
binary64), then rounded to complex64 as tessera's `TermsPlan::combine` and
`exponential` round; the same shapes as the bench rows `terms combine` and
`terms exp` (T = 8, N = 2^20). One thread; best of `--rounds`; millions of
points per second.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 \\
        python3 bench/scripts/terms_numpy.py [--rounds 5]
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
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--terms", type=int, default=8)
    ap.add_argument("--points", type=int, default=1 << 20)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    t, n = a.terms, a.points
    terms = rng.uniform(-2, 2, (t, n)) + 1j * rng.uniform(-50, 50, (t, n))
    w = rng.uniform(-1, 1, t) / t
    comb = best(lambda: (w @ terms).astype(np.complex64), a.rounds)
    expo = best(lambda: np.exp(w @ terms).astype(np.complex64), a.rounds)
    print(f"numpy binary64, T = {t}, N = {n}, one thread, best of {a.rounds}")
    print(f"terms combine  {n / comb / 1e6:8.1f} Mpoints/s")
    print(f"terms exp      {n / expo / 1e6:8.1f} Mpoints/s")


if __name__ == "__main__":
    main()
