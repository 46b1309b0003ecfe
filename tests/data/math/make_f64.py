#!/usr/bin/env python3
"""Writes f64.txt: reference values of the transcendental kinds on f64 inputs,
computed with mpmath at 320 bits (independent of tessera's code).

Each line: KIND A [B] HI LO, hex bit patterns of f64 values; the exact result
is HI + LO to about 2^-106 relative (HI is the correctly rounded f64).
Run: python3 tests/data/math/make_f64.py > tests/data/math/f64.txt
"""
import random
import struct
import mpmath as mp

mp.mp.prec = 320
rng = random.Random(20261201)
F64_MAX = mp.mpf(2) ** 1024 * (1 - mp.mpf(2) ** -53)


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def logu(lo, hi):
    """log-uniform magnitude in [2^lo, 2^hi)"""
    return float(mp.mpf(2) ** (lo + (hi - lo) * rng.random()))


def signed(x):
    return x if rng.random() < 0.5 else -x


def unif(a, b):
    return a + (b - a) * rng.random()


def sigmoid(x):
    return 1 / (1 + mp.exp(-x))


FUNCS = {
    "exp": (mp.exp, lambda: unif(-745, 709.7) if rng.random() < 0.8 else signed(logu(-1074, 0))),
    "exp2": (lambda x: mp.power(2, x), lambda: unif(-1074, 1023.9) if rng.random() < 0.8 else signed(logu(-1074, 0))),
    "expm1": (mp.expm1, lambda: unif(-40, 709.7) if rng.random() < 0.6 else signed(logu(-1074, 0))),
    "log": (mp.log, lambda: logu(-1074, 1023) if rng.random() < 0.7 else 1 + signed(logu(-52, -1))),
    "log2": (lambda x: mp.log(x, 2), lambda: logu(-1074, 1023) if rng.random() < 0.7 else 1 + signed(logu(-52, -1))),
    "log10": (mp.log10, lambda: logu(-1074, 1023) if rng.random() < 0.7 else 1 + signed(logu(-52, -1))),
    "log1p": (mp.log1p, lambda: logu(-1074, 1023) if rng.random() < 0.5 else -logu(-1074, -0.0001)),
    "sin": (mp.sin, lambda: signed(logu(-30, 1023) if rng.random() < 0.5 else logu(-30, 30))),
    "cos": (mp.cos, lambda: signed(logu(-30, 1023) if rng.random() < 0.5 else logu(-30, 30))),
    "tan": (mp.tan, lambda: signed(logu(-30, 1023) if rng.random() < 0.5 else logu(-30, 30))),
    "asin": (mp.asin, lambda: signed(rng.random() if rng.random() < 0.7 else logu(-1074, 0) / 2)),
    "acos": (mp.acos, lambda: signed(rng.random() if rng.random() < 0.7 else 1 - logu(-53, -1))),
    "atan": (mp.atan, lambda: signed(logu(-1074, 1023))),
    "sinh": (mp.sinh, lambda: signed(unif(0, 710.4) if rng.random() < 0.7 else logu(-1074, 0))),
    "cosh": (mp.cosh, lambda: signed(unif(0, 710.4) if rng.random() < 0.7 else logu(-1074, 0))),
    "tanh": (mp.tanh, lambda: signed(unif(0, 20) if rng.random() < 0.7 else logu(-1074, 0))),
    "asinh": (mp.asinh, lambda: signed(logu(-1074, 1023))),
    "acosh": (mp.acosh, lambda: 1 + logu(-52, 1022)),
    "atanh": (mp.atanh, lambda: signed(rng.random() if rng.random() < 0.6 else (1 - logu(-53, -1) if rng.random() < 0.5 else logu(-1074, -1)))),
    "erf": (mp.erf, lambda: signed(unif(0, 6) if rng.random() < 0.7 else logu(-1074, 0))),
    "erfc": (mp.erfc, lambda: unif(-6, 27.2) if rng.random() < 0.8 else signed(logu(-1074, 0))),
    "cbrt": (lambda x: mp.sign(x) * mp.cbrt(abs(x)), lambda: signed(logu(-1074, 1023))),
    "sigmoid": (sigmoid, lambda: unif(-745, 40) if rng.random() < 0.8 else signed(logu(-1074, 0))),
    "rsqrt": (lambda x: 1 / mp.sqrt(x), lambda: logu(-1074, 1023)),
}


def pow_pair():
    r = rng.random()
    if r < 0.5:
        x, y = logu(-20, 20), unif(-60, 60)
    elif r < 0.7:
        x, y = 1 + signed(logu(-40, -1)), signed(logu(0, 40))
    else:
        x, y = signed(logu(-10, 10)), float(rng.randint(-200, 200))
    return x, y


BINARY = {
    "pow": (mp.power, pow_pair),
    "atan2": (mp.atan2, lambda: (signed(logu(-1074, 1023)), signed(logu(-1074, 1023)))),
    "hypot": (lambda a, b: mp.sqrt(a * a + b * b), lambda: (signed(logu(-1074, 1023)), signed(logu(-1074, 1023)))),
}

HARD = {
    "sin": [6381956970095103.0 * 2.0 ** 797, 1e22, 2.0 ** 1023, 3.141592653589793, 1.5707963267948966],
    "cos": [6381956970095103.0 * 2.0 ** 797, 1e22, 2.0 ** 1023, 1.5707963267948966],
    "tan": [6381956970095103.0 * 2.0 ** 797, 1e22, 1.5707963267948966],
    "exp": [709.78, -745.1, -708.4, 1e-300],
    "log": [1.0000000000000002, 0.9999999999999999, 5e-324],
    "erfc": [26.5, 27.0, 10.0],
}


def emit(kind, args, value):
    if any(a != a or abs(a) == float("inf") for a in args):
        return
    if not mp.isfinite(value) or abs(value) > F64_MAX:
        return
    hi = float(value)
    lo = float(value - mp.mpf(hi))
    print(kind, " ".join("%016x" % bits(a) for a in args), "%016x" % bits(hi), "%016x" % bits(lo))


N = 400
for kind, (f, gen) in FUNCS.items():
    xs = [gen() for _ in range(N)]
    # Inputs near multiples of pi/2 for the trigonometric kinds.
    if kind in ("sin", "cos", "tan"):
        for k in range(1, 60):
            m = rng.choice([k, rng.randint(1, 10 ** 8), rng.randint(1, 10 ** 15)])
            xs.append(float(mp.pi / 2 * m))
    xs += HARD.get(kind, [])
    for x in xs:
        try:
            emit(kind, [x], f(mp.mpf(x)))
        except (ValueError, ZeroDivisionError):
            pass
for kind, (f, gen) in BINARY.items():
    for _ in range(N):
        a, b = gen()
        try:
            v = f(mp.mpf(a), mp.mpf(b))
        except (ValueError, ZeroDivisionError):
            continue
        if isinstance(v, mp.mpc):
            continue
        emit(kind, [a, b], v)
