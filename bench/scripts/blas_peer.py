"""The BLAS peers of tessera-bench's `gemm` group: OpenBLAS (through numpy's
matmul) and MKL (cblas_sgemm/cblas_dgemm of the `mkl` wheel's libmkl_rt,
through ctypes), one thread each. tessera-bench starts this script once and
drives it over stdin/stdout, so that its samples alternate with tessera's own
in one run. One command per line, one answer per line:

  info                         the libraries found, and the core OpenBLAS runs
  load DTYPE M K N A_PATH B_PATH
                               read row-major A (M x K) and B (K x N) of DTYPE
                               (f32 or f64) as raw little-endian files
  run LIB REPS                 seconds for REPS products C = A B (LIB: openblas
                               or mkl), or "missing"
  save LIB C_PATH              write one product as a raw file
  quit

The caller sets OPENBLAS_NUM_THREADS=1 and MKL_NUM_THREADS=1 and removes
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE from this process's environment, so
that OpenBLAS picks the kernels of the CPU it runs on.
"""

import ctypes
import glob
import os
import sys
import time

import numpy as np

ROW_MAJOR, NO_TRANS = 101, 111


def openblas_core():
    pattern = os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "*openblas*")
    for path in glob.glob(pattern):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                     "scipy_openblas_get_corename", "openblas_get_corename"):
            if hasattr(lib, name):
                f = getattr(lib, name)
                f.restype = ctypes.c_char_p
                return f().decode()
    return "unknown"


def load_mkl():
    for path in glob.glob(os.path.join(sys.prefix, "lib", "libmkl_rt.so*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        if hasattr(lib, "MKL_Set_Num_Threads"):
            lib.MKL_Set_Num_Threads(1)
        return lib
    return None


MKL = load_mkl()
A = B = C = None


def product(lib):
    global C
    if lib == "openblas":
        np.matmul(A, B, out=C)
        return
    m, k = A.shape
    n = B.shape[1]
    f = MKL.cblas_sgemm if A.dtype == np.float32 else MKL.cblas_dgemm
    scalar = ctypes.c_float if A.dtype == np.float32 else ctypes.c_double
    f(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, scalar(1.0),
      A.ctypes.data_as(ctypes.c_void_p), k, B.ctypes.data_as(ctypes.c_void_p), n,
      scalar(0.0), C.ctypes.data_as(ctypes.c_void_p), n)


def main():
    global A, B, C
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd = words[0]
        if cmd == "quit":
            break
        if cmd == "info":
            mkl = "mkl (libmkl_rt)" if MKL is not None else "no mkl"
            print(f"numpy {np.__version__} with OpenBLAS ({openblas_core()} kernels), {mkl}")
        elif cmd == "load":
            dt = np.float32 if words[1] == "f32" else np.float64
            m, k, n = (int(w) for w in words[2:5])
            A = np.fromfile(words[5], dtype=dt).reshape(m, k)
            B = np.fromfile(words[6], dtype=dt).reshape(k, n)
            C = np.empty((m, n), dtype=dt)
            print("ok")
        elif cmd == "run":
            lib, reps = words[1], int(words[2])
            if lib == "mkl" and MKL is None:
                print("missing")
            else:
                t0 = time.perf_counter()
                for _ in range(reps):
                    product(lib)
                print(f"{time.perf_counter() - t0:.9f}")
        elif cmd == "save":
            product(words[1])
            C.tofile(words[2])
            print("ok")
        else:
            print("unknown command")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
