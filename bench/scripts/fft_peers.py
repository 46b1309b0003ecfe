"""The out-of-process peers of tessera-bench's `fft` group: FFTW (through
pyfftw, FFTW_MEASURE plans, one thread), numpy's pocketfft (numpy.fft) and
scipy's pocketfft (scipy.fft, workers=1), on the group's sizes, in GFLOP/s
(5 N log2 N per complex transform, halved for real ones; best of 5 samples
of at least 0.05 s each, the peers alternating within each round).

  OMP_NUM_THREADS=1 python3 bench/scripts/fft_peers.py [--quick]

Compare its figures with `tessera-bench fft` run just before or after on the
same host (the ratios in the closing notes are made so). Missing modules are
reported and skipped.
"""

import math
import sys
import time

import numpy as np

try:
    import scipy.fft as sfft
except ImportError:  # pragma: no cover
    sfft = None
try:
    import pyfftw
except ImportError:  # pragma: no cover
    pyfftw = None

QUICK = "--quick" in sys.argv
SAMPLE_S = 0.01 if QUICK else 0.05
ROUNDS = 1 if QUICK else 5


def flops(n, count=1, real=False):
    f = 5.0 * n * math.log2(n) * count if n > 1 else 0.0
    return f / 2 if real else f


def timed(f):
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        dt = time.perf_counter() - t0
        if dt >= SAMPLE_S:
            return dt / reps
        reps *= 2


def race(fs):
    best = [math.inf] * len(fs)
    for _ in range(ROUNDS):
        for i, f in enumerate(fs):
            if f is not None:
                best[i] = min(best[i], timed(f))
    return best


def peers_c2c(x):
    fs = [lambda: np.fft.fft(x)]
    fs.append((lambda: sfft.fft(x, workers=1)) if sfft else None)
    if pyfftw:
        a = pyfftw.empty_aligned(x.shape, dtype=x.dtype)
        b = pyfftw.empty_aligned(x.shape, dtype=x.dtype)
        plan = pyfftw.FFTW(a, b, axes=(-1,), flags=("FFTW_MEASURE",), threads=1)
        a[:] = x
        fs.append(lambda: plan())
    else:
        fs.append(None)
    return fs


def peers_r2c(x):
    fs = [lambda: np.fft.rfft(x)]
    fs.append((lambda: sfft.rfft(x, workers=1)) if sfft else None)
    if pyfftw:
        cdt = np.complex64 if x.dtype == np.float32 else np.complex128
        a = pyfftw.empty_aligned(x.shape, dtype=x.dtype)
        shape = x.shape[:-1] + (x.shape[-1] // 2 + 1,)
        b = pyfftw.empty_aligned(shape, dtype=cdt)
        plan = pyfftw.FFTW(a, b, axes=(-1,), flags=("FFTW_MEASURE",), threads=1)
        a[:] = x
        fs.append(lambda: plan())
    else:
        fs.append(None)
    return fs


def peers_2d(x, real):
    if real:
        fs = [lambda: np.fft.rfft2(x), (lambda: sfft.rfft2(x, workers=1)) if sfft else None]
    else:
        fs = [lambda: np.fft.fft2(x), (lambda: sfft.fft2(x, workers=1)) if sfft else None]
    if pyfftw:
        if real:
            cdt = np.complex64 if x.dtype == np.float32 else np.complex128
            a = pyfftw.empty_aligned(x.shape, dtype=x.dtype)
            b = pyfftw.empty_aligned((x.shape[0], x.shape[1] // 2 + 1), dtype=cdt)
        else:
            a = pyfftw.empty_aligned(x.shape, dtype=x.dtype)
            b = pyfftw.empty_aligned(x.shape, dtype=x.dtype)
        plan = pyfftw.FFTW(a, b, axes=(0, 1), flags=("FFTW_MEASURE",), threads=1)
        a[:] = x
        fs.append(lambda: plan())
    else:
        fs.append(None)
    return fs


def show(label, f, times):
    cells = []
    for t in times:
        cells.append("   missing" if t == math.inf else f"{f / t / 1e9:10.2f}")
    print(f"{label:<34}" + "".join(cells), flush=True)


def main():
    rng = np.random.default_rng(7)
    print("GFLOP/s, one thread:            numpy.fft  scipy.fft  fftw(measure)")
    sizes = [64, 1024, 4096] if QUICK else [64, 1024, 4096, 65536, 1 << 20, 1000, 4093, 5183, 3 << 14]
    for prec, cdt, rdt in (("f32", np.complex64, np.float32), ("f64", np.complex128, np.float64)):
        for n in sizes:
            x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(cdt)
            show(f"c2c {prec} n={n}", flops(n), race(peers_c2c(x)))
        for n in ([4096] if QUICK else [4096, 1 << 20]):
            x = rng.standard_normal(n).astype(rdt)
            show(f"r2c {prec} n={n}", flops(n, real=True), race(peers_r2c(x)))
    if not QUICK:
        n = 1024
        for real in (False, True):
            if real:
                x = rng.standard_normal((n, n)).astype(np.float32)
            else:
                x = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64)
            f = 2 * n * flops(n, real=real)
            show(f"2-D {'r2c' if real else 'c2c'} f32 {n}x{n}", f, race(peers_2d(x, real)))
        lines = (32 << 20) // (1024 * 8)
        x = (rng.standard_normal((lines, 1024)) + 1j * rng.standard_normal((lines, 1024))).astype(np.complex64)
        show(f"batch c2c f32 {lines}x1024", flops(1024, lines), race(peers_c2c(x)))


if __name__ == "__main__":
    main()
