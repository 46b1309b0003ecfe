"""Sort, argsort and unique against numpy and a dictionary model; linear
algebra by its residuals; every result independent of the layout."""

import numpy as np
import pytest

import tessera
from conftest import every_execution, same_bits


def test_sort_and_argsort_equal_numpy_stable(rng):
    for dt in (np.float32, np.float64, np.int16, np.uint64):
        x = (rng.standard_normal((7, 3001)) * 50).astype(dt)
        assert same_bits(tessera.sort(x, axis=1), np.sort(x, axis=1, kind="stable"))
        assert np.array_equal(tessera.argsort(x, axis=0), np.argsort(x, axis=0, kind="stable"))
        assert same_bits(tessera.sort(x, axis=None), np.sort(x, axis=None))
        assert np.array_equal(
            tessera.sort(x, axis=1, descending=True), np.sort(x, axis=1)[:, ::-1]
        )


def test_nan_order_and_total_order():
    x = np.array([3.0, np.nan, -0.0, 0.0, -np.inf, -np.nan, 1.0])
    s = tessera.sort(x)
    assert np.array_equal(s[:5], [-np.inf, -0.0, 0.0, 1.0, 3.0]) and np.isnan(s[5:]).all()
    t = tessera.sort(x, total_order=True)
    assert np.signbit(t[0]) and np.isnan(t[0])  # -NaN first
    assert t[1] == -np.inf and np.signbit(t[2]) and t[2] == 0 and not np.signbit(t[3])
    assert np.isnan(t[-1]) and not np.signbit(t[-1])


def test_unique_in_order_of_first_appearance(rng):
    x = rng.integers(0, 50, 10000).astype(np.int32)
    values, first, inverse, counts = tessera.unique(
        x, return_index=True, return_inverse=True, return_counts=True
    )
    model = {}
    for i, v in enumerate(x.tolist()):
        model.setdefault(v, [i, 0])[1] += 1
    assert values.tolist() == list(model)
    assert first.tolist() == [f for f, _ in model.values()]
    assert counts.tolist() == [c for _, c in model.values()]
    assert np.array_equal(values[inverse], x)
    f = np.array([0.0, -0.0, 1.5, 0.0])
    assert tessera.unique(f).tolist() == [0.0, -0.0, 1.5]  # by bits


def test_order_same_bits_everywhere(rng):
    x = rng.standard_normal(100_000).astype(np.float32)
    runs = every_execution(lambda **kw: tessera.argsort(x, **kw))
    assert all(same_bits(r, runs[0]) for r in runs)


U64 = 2.0**-53


def spd(rng, n, batch=()):
    a = rng.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_cholesky_lu_qr_residuals(rng):
    n = 40
    s = spd(rng, n, (3,))
    l = tessera.linalg.cholesky(s)
    assert np.allclose(np.triu(l[0], 1), 0)
    assert np.abs(l @ np.swapaxes(l, -1, -2) - s).max() <= 10 * n * U64 * np.abs(s).max()
    u = tessera.linalg.cholesky(s, upper=True)
    assert np.abs(np.swapaxes(u, -1, -2) @ u - s).max() <= 10 * n * U64 * np.abs(s).max()
    a = rng.standard_normal((n, n + 5))
    lu, piv, perm = tessera.linalg.lu(a)
    m = a.shape[0]
    lo = np.tril(lu[:, :m], -1) + np.eye(m)
    up = np.triu(lu)
    assert np.abs(lo @ up - a[perm]).max() <= 10 * n * U64 * np.abs(a).max() * n
    q, r = tessera.linalg.qr(a.T)
    assert q.shape == (n + 5, n) and r.shape == (n, n)
    assert np.abs(q @ r - a.T).max() <= 100 * n * U64 * np.abs(a).max()
    assert np.abs(q.T @ q - np.eye(n)).max() <= 100 * n * U64
    qc, rc = tessera.linalg.qr(a.T, mode="complete")
    assert qc.shape == (n + 5, n + 5)


def test_solve_and_spectral(rng):
    n = 30
    s = spd(rng, n)
    t = np.tril(s)
    b = rng.standard_normal((n, 4))
    x = tessera.linalg.solve_triangular(t, b, lower=True)
    assert np.abs(t @ x - b).max() <= 1e-10
    xv = tessera.linalg.solve_triangular(t, b[:, 0], lower=True, trans="C")
    assert np.abs(t.T @ xv - b[:, 0]).max() <= 1e-10
    w, v = tessera.linalg.eigh(s)
    assert np.abs(s @ v - v * w).max() <= 1e-10 * np.abs(w).max()
    assert np.allclose(np.sort(tessera.linalg.eigvalsh(s)), np.linalg.eigvalsh(s))
    a = rng.standard_normal((n, n - 7))
    u, sv, vh = tessera.linalg.svd(a, full_matrices=False)
    assert np.abs((u * sv) @ vh - a).max() <= 1e-12
    assert np.allclose(tessera.linalg.svdvals(a), np.linalg.svd(a, compute_uv=False))
    g = rng.standard_normal((n, n))
    w, v = tessera.linalg.eig(g)
    assert np.abs(g @ v - v * w).max() <= 1e-10 * np.abs(w).max()
    assert np.allclose(np.sort_complex(tessera.linalg.eigvals(g)), np.sort_complex(np.linalg.eigvals(g)))


def test_linalg_bits_do_not_depend_on_the_batch(rng):
    s = spd(rng, 24, (4,))
    whole = tessera.linalg.cholesky(s)
    assert same_bits(tessera.linalg.cholesky(s[2]), whole[2])
    assert same_bits(tessera.linalg.cholesky(np.asfortranarray(s[1])), whole[1])
    runs = every_execution(lambda **kw: tessera.linalg.eigh(s, **kw)[1])
    assert all(same_bits(r, runs[0]) for r in runs)


def test_linalg_refusals():
    with pytest.raises(tessera.errors.ShapeError):
        tessera.linalg.cholesky(np.zeros((3, 4)))
    with pytest.raises(tessera.errors.ShapeError):
        tessera.linalg.eigh(np.zeros(3))
