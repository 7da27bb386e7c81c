"""The fixed-block BLAS/LAPACK helpers against LAPACK and NumPy, on sizes that cross the
block boundaries (blocks shrunk so that small matrices have many)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.linalg import lapack

from fastrbf import _dense


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(_dense, "NB", 32)
    monkeypatch.setattr(_dense, "TRSM_ROWS", 50)
    monkeypatch.setattr(_dense, "SOLVE_COLS", 3)
    monkeypatch.setattr(_dense, "GEMM_BLOCK", 500)
    monkeypatch.setattr(_dense, "DIRECT_N", 40)


def _spd(rng, n, dtype=np.float64):
    X = rng.standard_normal((n, 6))
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)) + 1e-2 * np.eye(n)
    return K.astype(dtype)


@pytest.mark.parametrize("n", [1, 31, 32, 33, 40, 41, 97, 200])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_potrf_matches_lapack_and_keeps_the_other_triangle(rng, small_blocks, n, dtype):
    K = _spd(rng, n, dtype)
    results = []
    for nt in (1, 2, 3):
        A = np.array(K, order="F")
        assert _dense.potrf(A, nt) == 0
        results.append(A.copy())
        assert_array_equal(np.triu(A, 1), np.triu(K, 1))  # never touched
    assert_array_equal(results[0], results[1])
    assert_array_equal(results[0], results[2])
    L = np.linalg.cholesky(K.astype(np.float64))
    tol = 1e-12 if dtype == np.float64 else 2e-5
    assert_allclose(np.tril(results[0]), L, atol=tol * np.abs(L).max())


@pytest.mark.parametrize("bad", [0, 5, 33, 64, 150])
def test_potrf_reports_the_column_as_lapack(rng, small_blocks, bad):
    K = _spd(rng, 160)
    K[bad, bad] = -1.0
    A = np.array(K, order="F")
    _, info = lapack.dpotrf(K, lower=1)
    assert _dense.potrf(A, 2) == info == bad + 1
    assert_array_equal(np.triu(A, 1), np.triu(K, 1))


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_potrs_and_trsm(rng, small_blocks, k):
    n = 90
    K = _spd(rng, n)
    L = np.array(np.linalg.cholesky(K), order="F")
    B = np.asfortranarray(rng.standard_normal((n, k)))
    out = []
    for nt in (1, 2, 3):
        W = B.copy(order="F")
        _dense.potrs(L, W, nt)
        out.append(W)
    assert_array_equal(out[0], out[1])
    assert_array_equal(out[0], out[2])
    assert_allclose(K @ out[0], B, atol=1e-10 * np.abs(B).max())
    V = B.copy(order="F")
    _dense.trsm(L, V, 2, trans=True)
    assert_allclose(L.T @ V, B, atol=1e-10 * np.abs(B).max())


@pytest.mark.parametrize("shape", [(1, 3, 1), (37, 5, 29), (300, 7, 41)])
def test_gemm_rows(rng, small_blocks, shape):
    n, k, m = shape
    A = rng.standard_normal((n, k))
    B = rng.standard_normal((k, m))
    got = [_dense.gemm(A, B, np.empty((n, m)), nt) for nt in (1, 2, 3)]
    assert_array_equal(got[0], got[1])
    assert_array_equal(got[0], got[2])
    assert_allclose(got[0], A @ B, rtol=1e-13, atol=1e-13)
