"""Contractions against exact integer products and their f32 bound; FFTs
against numpy.fft within the transform's bound; the same bits everywhere."""

import numpy as np
import pytest

import tessera
from conftest import every_execution, same_bits


def test_integer_valued_matmul_is_exact(rng):
    a = rng.integers(-50, 50, (2, 37, 64)).astype(np.float64)
    b = rng.integers(-50, 50, (2, 64, 29)).astype(np.float64)
    assert same_bits(tessera.matmul(a, b), a @ b)
    ai = rng.integers(-100, 100, (40, 50), dtype=np.int32)
    bi = rng.integers(-100, 100, (50, 30), dtype=np.int32)
    got = tessera.matmul(ai, bi)
    assert got.dtype == np.int32 and np.array_equal(got, ai @ bi)


def test_f32_matmul_within_its_bound(rng):
    a = rng.standard_normal((33, 200)).astype(np.float32)
    b = rng.standard_normal((200, 45)).astype(np.float32)
    got = tessera.matmul(a, b).astype(np.float64)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    u = 2.0**-24
    bound = 200 * u / (1 - 200 * u) * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    assert np.all(np.abs(got - exact) <= bound)


def test_matmul_broadcasts_and_promotes_vectors(rng):
    a = rng.integers(-9, 9, (3, 1, 4, 5)).astype(np.float64)
    b = rng.integers(-9, 9, (2, 5, 6)).astype(np.float64)
    assert np.array_equal(tessera.matmul(a, b), a @ b)
    v = rng.integers(-9, 9, 5).astype(np.float64)
    assert np.array_equal(tessera.matmul(a, v), a @ v)
    assert np.array_equal(tessera.matmul(v, b), v @ b)


@pytest.mark.parametrize("spec", ["ij,jk->ik", "ik,jk->ij", "bij,bjk->bik", "ij,jk->ki", "bij,bkj->bki"])
def test_contract_specs_equal_einsum(rng, spec):
    ins, _ = spec.split("->")
    la, lb = ins.split(",")
    size = dict(b=3, i=4, j=5, k=6)
    a = rng.integers(-9, 9, [size[c] for c in la]).astype(np.float64)
    b = rng.integers(-9, 9, [size[c] for c in lb]).astype(np.float64)
    assert np.array_equal(tessera.contract(spec, a, b), np.einsum(spec, a, b))


def test_contract_same_bits_everywhere(rng):
    a = rng.standard_normal((150, 300)).astype(np.float32)
    b = rng.standard_normal((300, 170)).astype(np.float32)
    runs = every_execution(lambda **kw: tessera.matmul(a, b, **kw))
    assert all(same_bits(r, runs[0]) for r in runs)
    assert same_bits(tessera.matmul(np.asfortranarray(a), b[::-1][::-1]), runs[0])


def test_contract_refusals():
    with pytest.raises(tessera.errors.ShapeError):
        tessera.matmul(np.zeros((2, 3)), np.zeros((4, 2)))
    with pytest.raises(tessera.errors.ArgumentError):
        tessera.contract("ij,jk->iz", np.zeros((2, 3)), np.zeros((3, 2)))


def fft_err(got, want):
    return np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300)


@pytest.mark.parametrize("n", [1, 2, 16, 60, 1024, 5183, 4096 * 3])
def test_fft_against_numpy(rng, n):
    x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    tol = 50 * 2.0**-53 * max(np.log2(max(n, 2)), 1)
    assert fft_err(tessera.fft.fft(x), np.fft.fft(x)) <= tol
    assert fft_err(tessera.fft.ifft(x), np.fft.ifft(x)) <= tol
    for norm in ("ortho", "forward", "backward"):
        assert fft_err(tessera.fft.fft(x, norm=norm), np.fft.fft(x, norm=norm)) <= tol
    x32 = x.astype(np.complex64)
    got = tessera.fft.fft(x32)
    assert got.dtype == np.complex64
    assert fft_err(got, np.fft.fft(x32.astype(np.complex128))) <= 50 * 2.0**-24 * max(np.log2(max(n, 2)), 1)


def test_real_and_nd_transforms(rng):
    x = rng.standard_normal((6, 10, 16))
    tol = 1e-13
    assert fft_err(tessera.fft.rfft(x), np.fft.rfft(x)) <= tol
    assert fft_err(tessera.fft.irfft(np.fft.rfft(x)), x) <= tol
    assert fft_err(tessera.fft.irfft(np.fft.rfft(x), n=15), np.fft.irfft(np.fft.rfft(x), n=15)) <= tol
    assert fft_err(tessera.fft.fftn(x), np.fft.fftn(x)) <= tol
    assert fft_err(tessera.fft.fft2(x), np.fft.fft2(x)) <= tol
    assert fft_err(tessera.fft.rfftn(x, axes=(0, 2)), np.fft.rfftn(x, axes=(0, 2))) <= tol
    assert fft_err(tessera.fft.irfftn(np.fft.rfftn(x)), x) <= tol
    assert fft_err(tessera.fft.fft(x, n=20, axis=1), np.fft.fft(x, n=20, axis=1)) <= tol
    assert fft_err(tessera.fft.fft(x, n=7, axis=0), np.fft.fft(x, n=7, axis=0)) <= tol


def test_fft_bits_depend_on_the_line_alone(rng):
    x = rng.standard_normal((8, 4096)) + 1j * rng.standard_normal((8, 4096))
    whole = tessera.fft.fft(x)
    runs = every_execution(lambda **kw: tessera.fft.fft(x, **kw))
    assert all(same_bits(r, whole) for r in runs)
    # One line alone, or in a transposed batch, gives its bits in the batch.
    assert same_bits(tessera.fft.fft(x[3]), whole[3])
    xt = np.ascontiguousarray(x.T)
    assert same_bits(tessera.fft.fft(xt, axis=0).T, whole)
