#!/usr/bin/env python3
"""numpy's and PyTorch's attention on the `attention` group's cases.

numpy: softmax(q·kᵀ·scale)·v with OpenBLAS GEMMs (the query heads of a
key head as one matrix, as the group's naive pipeline), the max, exp, sum
and division in numpy, causal by a mask; f32. PyTorch (where the CPU wheel
is installed): `torch.nn.functional.scaled_dot_product_attention` with
`enable_gqa`, f32 and bf16. One thread each; best of `--rounds`; GFLOP/s
count 4·tq·tk·d per query head, halved for causal, as the group does.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 \\
        python3 bench/scripts/attention_peers.py [--quick] [--rounds 3]
"""

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def best(f, rounds):
    t = float("inf")
    for _ in range(rounds):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t


def numpy_attention(q, k, v, causal):
    hq, tq, d = q.shape
    hk, tk, _ = k.shape
    g = hq // hk
    scale = np.float32(1.0 / np.sqrt(d))
    out = np.empty((hq, tq, v.shape[2]), np.float32)
    if causal:
        mask = np.arange(tk)[None, :] > (np.arange(tq)[:, None] + (tk - tq))
    for h in range(hk):
        qs = q[h * g:(h + 1) * g].reshape(g * tq, d)
        s = qs @ k[h].T
        s *= scale
        if causal:
            s = s.reshape(g, tq, tk)
            s[:, mask] = -np.inf
            s = s.reshape(g * tq, tk)
        s -= s.max(axis=1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=1, keepdims=True)
        out[h * g:(h + 1) * g] = (s @ v[h]).reshape(g, tq, -1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if a.quick:
        pre = (8, 2, 512, 512, 128)
        dec = (8, 2, 1, 8192, 128)
    else:
        pre = (32, 8, 2048, 2048, 128)
        dec = (32, 8, 1, 32768, 128)
    rng = np.random.default_rng(1)
    try:
        import torch
        import torch.nn.functional as F
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    print(f"attention peers: one thread, best of {a.rounds}; GFLOP/s")
    print(f"{'case':<30} {'numpy':>10} {'torch':>10}")
    for name, shp, causals in (("prefill", pre, (True, False)), ("decode", dec, (False,))):
        hq, hk, tq, tk, d = shp
        q = rng.uniform(-1, 1, (hq, tq, d)).astype(np.float32)
        k = rng.uniform(-1, 1, (hk, tk, d)).astype(np.float32)
        v = rng.uniform(-1, 1, (hk, tk, d)).astype(np.float32)
        for causal in causals:
            flops = 4.0 * hq * tq * tk * d / (2.0 if causal else 1.0)
            tn = best(lambda: numpy_attention(q, k, v, causal), a.rounds)
            line = f"{name} f32 {'causal' if causal else 'full':<8}"
            tt = {}
            if torch is not None:
                for dt, tdt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
                    tq_ = torch.from_numpy(q).to(tdt)[None]
                    tk_ = torch.from_numpy(k).to(tdt)[None]
                    tv_ = torch.from_numpy(v).to(tdt)[None]

                    def run():
                        F.scaled_dot_product_attention(
                            tq_, tk_, tv_, is_causal=causal and tq == tk, enable_gqa=True
                        )

                    tt[dt] = best(run, a.rounds)
            torch_txt = " ".join(f"{dt} {flops / t / 1e9:.1f}" for dt, t in tt.items()) or "-"
            print(f"{line:<30} {flops / tn / 1e9:>10.1f} {torch_txt:>10}")


if __name__ == "__main__":
    main()
