"""LAPACK beside tessera-bench's `linalg` group: scipy.linalg (numpy's and
scipy's OpenBLAS) and MKL's LAPACKE/CBLAS from the `mkl` wheel's libmkl_rt
(through ctypes), one thread each, on the group's cases: cholesky (potrf),
lu (getrf), qr (geqrf + orgqr), solve_triangular (trsm, n right-hand
sides), eigh (syevd, vectors), svd (gesdd, reduced) and eig (geev, right
vectors), f64 and f32, n = 64, 256, 1024. Prints ms per call, the best of
five. Run it with the environment the numbers are for:

  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 \\
      MKL_NUM_THREADS=1 python3 bench/scripts/linalg_lapack.py

(`pip install numpy scipy mkl` first; not part of the tests or CI.)
"""

import ctypes
import glob
import os
import sys
import time

import numpy as np
import scipy.linalg as sl

ROW, LOWER = 101, ord("L")


def mkl():
    for path in glob.glob(os.path.join(sys.prefix, "lib", "libmkl_rt.so*")):
        try:
            return ctypes.CDLL(path)
        except OSError:
            pass
    return None


def best(f, reps=5):
    t = float("inf")
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t * 1e3


def cases(n, dt, rng):
    b = rng.standard_normal((n, n)).astype(dt)
    spd = (b @ b.T / n + np.eye(n)).astype(dt)
    return b, spd


def scipy_row(name, n, a, spd):
    f = {
        "cholesky": lambda: sl.cholesky(spd, lower=True, check_finite=False),
        "lu": lambda: sl.lu_factor(a, check_finite=False),
        "qr": lambda: sl.qr(a, check_finite=False),
        "solve_triangular": lambda: sl.solve_triangular(spd, a, lower=True, check_finite=False),
        "eigh": lambda: sl.eigh(spd, check_finite=False),
        "svd": lambda: sl.svd(a, full_matrices=False, check_finite=False),
        "eig": lambda: sl.eig(a, check_finite=False),
    }[name]
    return best(f)


def mkl_row(lib, name, n, a, spd):
    if lib is None:
        return float("nan")
    f32 = a.dtype == np.float32
    p = "s" if f32 else "d"
    c = np.ctypeslib.as_ctypes_type(a.dtype)
    ptr = lambda x: x.ctypes.data_as(ctypes.POINTER(c))
    ip = lambda x: x.ctypes.data_as(ctypes.POINTER(ctypes.c_int))
    L = lambda f: getattr(lib, f"LAPACKE_{p}{f}")
    if name == "cholesky":
        def run():
            x = spd.copy()
            L("potrf")(ROW, LOWER, n, ptr(x), n)
    elif name == "lu":
        piv = np.zeros(n, dtype=np.int32)
        def run():
            x = a.copy()
            L("getrf")(ROW, n, n, ptr(x), n, ip(piv))
    elif name == "qr":
        tau = np.zeros(n, dtype=a.dtype)
        def run():
            x = a.copy()
            L("geqrf")(ROW, n, n, ptr(x), n, ptr(tau))
            L("orgqr")(ROW, n, n, n, ptr(x), n, ptr(tau))
    elif name == "solve_triangular":
        trsm = getattr(lib, f"cblas_{p}trsm")
        trsm.argtypes = [ctypes.c_int] * 5 + [ctypes.c_int, ctypes.c_int, c,
                         ctypes.POINTER(c), ctypes.c_int, ctypes.POINTER(c), ctypes.c_int]
        def run():
            x = a.copy()
            trsm(ROW, 141, 121, 111, 131, n, n, 1.0, ptr(spd), n, ptr(x), n)
    elif name == "eigh":
        w = np.zeros(n, dtype=a.dtype)
        def run():
            x = spd.copy()
            L("syevd")(ROW, ord("V"), LOWER, n, ptr(x), n, ptr(w))
    elif name == "svd":
        s = np.zeros(n, dtype=a.dtype)
        u = np.zeros((n, n), dtype=a.dtype)
        vt = np.zeros((n, n), dtype=a.dtype)
        def run():
            x = a.copy()
            L("gesdd")(ROW, ord("S"), n, n, ptr(x), n, ptr(s), ptr(u), n, ptr(vt), n)
    else:
        wr = np.zeros(n, dtype=a.dtype)
        wi = np.zeros(n, dtype=a.dtype)
        vr = np.zeros((n, n), dtype=a.dtype)
        def run():
            x = a.copy()
            L("geev")(ROW, ord("N"), ord("V"), n, ptr(x), n, ptr(wr), ptr(wi), ptr(vr), n, ptr(vr), n)
    return best(run)


def main():
    lib = mkl()
    rng = np.random.default_rng(1)
    print("linalg LAPACK peers: ms per call, best of 5, one thread")
    print(f"{'case':<34} {'scipy/OpenBLAS':>15} {'MKL':>10}")
    for n in (64, 256, 1024):
        for dt in (np.float64, np.float32):
            a, spd = cases(n, dt, rng)
            for name in ("cholesky", "lu", "qr", "solve_triangular", "eigh", "svd", "eig"):
                tag = "f64" if dt == np.float64 else "f32"
                print(f"{name + ' ' + tag + ' n=' + str(n):<34} {scipy_row(name, n, a, spd):>15.3f} "
                      f"{mkl_row(lib, name, n, a, spd):>10.3f}", flush=True)


if __name__ == "__main__":
    main()
