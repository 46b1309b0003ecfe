"""Writes the reference vectors of tests/ml_dtypes_reference.rs.

The default float casts of tessera are meant to match ml_dtypes (and numpy for
float16) bit for bit, NaN payloads aside. This script records, from those
independent implementations, what they give for a fixed set of f32 inputs, so
the test can compare without Python. Regenerate with:

    pip install ml_dtypes==0.6.0 numpy
    python3 tests/data/ml_dtypes/make.py
"""
import os
import numpy as np
import ml_dtypes as m

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float8_e3m4", "float8_e4m3fnuz",
         "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e8m0fnu", "float6_e2m3fn",
         "float6_e3m2fn", "float4_e2m1fn", "bfloat16", "float16"]

def inputs():
    special = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 1, 0x80000001,
               0x00400000, 0x00400001, 0x00600000, 0x005FFFFF, 0x007FFFFF]
    sweep = []
    for e in range(-126, 128):
        for mant in [0, 1, 0x8000, 0x10000, 0x18000, 0x20000, 0x40000, 0x60000, 0x80000, 0xC0000,
                     0x100000, 0x180000, 0x200000, 0x300000, 0x3FFFFF, 0x400000, 0x400001,
                     0x600000, 0x7FFFFF]:
            sweep.append(((e + 127) << 23) | mant)
    rng = np.random.default_rng(20261129)
    rand = rng.integers(0, 2**32, size=20000, dtype=np.uint64).astype(np.uint32)
    small = (rng.integers(0x30000000, 0x48000000, size=20000, dtype=np.uint64).astype(np.uint32)
             | (rng.integers(0, 2, size=20000, dtype=np.uint64).astype(np.uint32) << 31))
    sweep = np.array(sweep, dtype=np.uint32)
    return np.concatenate([np.array(special, dtype=np.uint32), sweep, sweep | 0x80000000, rand, small])

def main():
    xs = inputs()
    xs.astype("<u4").tofile(os.path.join(HERE, "inputs.u32"))
    f = xs.view(np.float32)
    for name in TYPES:
        t = np.float16 if name == "float16" else getattr(m, name)
        with np.errstate(all="ignore"):
            codes = f.astype(t)
        width = "<u2" if codes.dtype.itemsize == 2 else "u1"
        codes.view(np.uint16 if codes.dtype.itemsize == 2 else np.uint8).astype(width).tofile(
            os.path.join(HERE, name + ".codes"))
        if codes.dtype.itemsize == 1:
            every = np.arange(256, dtype=np.uint8).view(t).astype(np.float32)
            every.view(np.uint32).astype("<u4").tofile(os.path.join(HERE, name + ".values"))

if __name__ == "__main__":
    main()
