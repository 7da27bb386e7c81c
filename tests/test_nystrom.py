"""Nystroem-preconditioned CG kernel ridge (``solver="nystrom-pcg"``) and its fused
passes, against the explicit-matrix references."""

import pickle

import numpy as np
import pytest
from helpers import assert_rel

from fastrbf import (
    ConvergenceWarning,
    _validation,
    kernel_ridge,
    reference,
)
from fastrbf.models import falkon as _nystrom
from fastrbf.models import ridge as models


def _rel(a, b):
    a = np.asarray(a, dtype=np.float64)
    return np.abs(a - b).max() / np.abs(b).max()


def _data(rng, n, d=3):
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, -1] + 0.05 * rng.standard_normal(n)
    return X, y


PARAMS = {"degree": 3, "coef0": 1.0}


# ---------------------------------------------------------------- fused passes
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel, gamma, degree", [("gaussian", 0.4, 3), ("laplacian", 0.3, 3), ("polynomial", 0.2, 2),
                                                    ("matern52", 0.3, 3), ("wendland_c4", 0.2, 3)])
@pytest.mark.parametrize("n, m, k", [(1, 1, 1), (257, 13, 1), (300, 40, 3)])
def test_passes_match_reference(rng, monkeypatch, dtype, kernel, gamma, degree, n, m, k):
    monkeypatch.setattr(_nystrom, "NM_CHUNK", 16)  # several chunks, one odd tail
    X = rng.standard_normal((n, 4)).astype(dtype)
    L = rng.standard_normal((m, 4)).astype(dtype)
    V = rng.standard_normal((m, k))
    Y = rng.standard_normal((n, k))
    kw = {"kernel": kernel, "gamma": gamma, "degree": degree, "coef0": 1.0}
    K = reference.gram(X.astype(np.float64), L.astype(np.float64), kernel=kernel, gamma=gamma, degree=degree)
    P = _nystrom.normal_matvec(X, L, V, **kw)
    R = _nystrom.cross_t(X, L, Y, **kw)
    assert P.dtype == np.float64 and P.shape == (m, k) and R.shape == (m, k)
    tol = 1e-10 if dtype == np.float64 else 1e-5
    assert_rel(P, K.T @ (K @ V), tol, atol=tol * np.abs(K.T @ (K @ V)).max())
    assert_rel(R, K.T @ Y, tol, atol=tol * np.abs(K.T @ Y).max())


def test_normal_matvec_bitwise_thread_independent(rng, monkeypatch):
    monkeypatch.setattr(_nystrom, "NM_CHUNK", 8)
    X = rng.standard_normal((1001, 5))
    L = X[:37]
    V = rng.standard_normal((37, 2))
    kw = dict(kernel="gaussian", gamma=0.3, **PARAMS)
    one = _nystrom.normal_matvec(X, L, V, n_threads=1, **kw)
    all_ = _nystrom.normal_matvec(X, L, V, n_threads=-1, **kw)
    assert np.array_equal(one, all_)
    Y = X[:, :2] ** 2
    assert np.array_equal(_nystrom.cross_t(X, L, Y, n_threads=1, **kw), _nystrom.cross_t(X, L, Y, n_threads=-1, **kw))


# ---------------------------------------------------------------- the solve
def test_pcg_with_all_points_as_landmarks_is_exact_krr(rng):
    # K well conditioned (smallest eigenvalue ~1e-3): the weights are determined; the
    # normal equations square the condition number, so an ill-conditioned K (next test)
    # gives the same predictions but not the same weights
    X, y = _data(rng, 250, d=5)
    Y = np.c_[y, np.cos(X[:, 1])]
    for fit_intercept in (False, True):
        exact = kernel_ridge(X, Y + 3.0, gamma=0.5, alpha=0.05, fit_intercept=fit_intercept, solver="cholesky")
        pcg = kernel_ridge(X, Y + 3.0, gamma=0.5, alpha=0.05, fit_intercept=fit_intercept, solver="nystrom-pcg",
                           landmarks=X, tol=1e-12, max_iter=200)
        assert pcg.solver == "nystrom-pcg" and pcg.converged and pcg.residual <= 1e-12 and pcg.n_iter >= 1
        assert exact.solver == "cholesky" and exact.n_iter == 0 and exact.converged
        assert _rel(pcg.weights, exact.weights) < 1e-6
        Xq = rng.standard_normal((100, 5))
        assert _rel(pcg.predict(Xq), exact.predict(Xq)) < 1e-6


def test_pcg_with_all_points_ill_conditioned_predicts_as_krr(rng):
    X, y = _data(rng, 250)  # d = 3, gamma 0.5: smallest eigenvalue of K ~1e-9
    exact = kernel_ridge(X, y, gamma=0.5, alpha=0.05, solver="cholesky")
    pcg = kernel_ridge(X, y, gamma=0.5, alpha=0.05, solver="nystrom-pcg", landmarks=X, tol=1e-12, max_iter=200)
    Xq = rng.standard_normal((100, 3))
    assert pcg.converged and _rel(pcg.predict(Xq), exact.predict(Xq)) < 1e-6
    assert _rel(pcg.predict(X), exact.predict(X)) < 1e-6


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pcg_matches_explicit_nystroem_krr(rng, dtype):
    X, y = _data(rng, 1500)
    X = X.astype(dtype)
    Xc = X.copy()
    m = kernel_ridge(X, y.astype(dtype), gamma=0.4, alpha=1e-2, solver="nystrom-pcg", n_landmarks=60, seed=1,
                     tol=1e-11, max_iter=500)
    assert np.array_equal(X, Xc)
    assert m.centers.shape == (60, 3) and m.converged
    # uniform landmarks are rows of X
    assert all((np.abs(X.astype(np.float64) - c).sum(1) == 0).any() for c in m.centers)
    beta = reference.nystroem_kernel_ridge(X, y.astype(dtype), m.centers, gamma=0.4, alpha=1e-2)
    tol = 1e-7 if dtype == np.float64 else 1e-5
    assert _rel(m.weights[:, 0], beta) < tol
    Xq = rng.standard_normal((50, 3)).astype(dtype)
    p = m.predict(Xq)
    assert p.dtype == dtype and p.shape == (50,)
    assert _rel(p, reference.gram(Xq.astype(np.float64), m.centers, gamma=0.4) @ beta) < 10 * tol
    m2 = pickle.loads(pickle.dumps(m))
    assert np.array_equal(m2.predict(Xq), p)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel, gamma", [("gaussian", 0.4), ("laplacian", 0.3), ("matern52", 0.3)])
def test_direct_nystrom_matches_explicit_nystroem_krr_and_the_cg(rng, dtype, kernel, gamma):
    X, y = _data(rng, 1500)
    X = X.astype(dtype)
    Y = np.stack([y, np.cos(X[:, 1])], axis=1).astype(dtype)
    Xc, Yc = X.copy(), Y.copy()
    m = kernel_ridge(X, Y, kernel=kernel, gamma=gamma, alpha=1e-2, solver="nystrom", n_landmarks=60, seed=1)
    assert np.array_equal(X, Xc) and np.array_equal(Y, Yc)
    assert m.solver == "nystrom" and m.converged and m.n_iter == 0 and m.centers.shape == (60, 3)
    beta = reference.nystroem_kernel_ridge(X, Y, m.centers, kernel=kernel, gamma=gamma, alpha=1e-2)
    assert _rel(m.weights, beta) < (1e-7 if dtype == np.float64 else 1e-5)
    Xq = rng.standard_normal((50, 3)).astype(dtype)
    p = m.predict(Xq)
    assert p.dtype == dtype and p.shape == (50, 2)
    cg = kernel_ridge(X, Y, kernel=kernel, gamma=gamma, alpha=1e-2, solver="nystrom-pcg", n_landmarks=60, seed=1,
                      tol=1e-12, max_iter=1000)
    assert np.array_equal(cg.centers, m.centers) and cg.converged
    assert _rel(p, cg.predict(Xq)) < (1e-8 if dtype == np.float64 else 1e-5)


def test_direct_nystrom_blocks_threads_intercept_and_scale(rng, monkeypatch):
    # several chunks of rows, row blocks and column blocks; the bits do not follow the
    # thread count; an intercept; targets of any magnitude; per-feature length scales
    monkeypatch.setattr(_nystrom, "NM_CHUNK", 200)
    monkeypatch.setattr(_nystrom, "DIRECT_ROWS", 37)
    monkeypatch.setattr(_nystrom, "DIRECT_COLS", 29)
    X, y = _data(rng, 1100)
    args = {"gamma": 0.5, "alpha": 1e-2, "solver": "nystrom", "n_landmarks": 70, "seed": 4}
    a = kernel_ridge(X, y, n_threads=1, **args)
    b = kernel_ridge(X, y, n_threads=2, **args)
    assert np.array_equal(a.weights, b.weights)
    assert _rel(a.weights[:, 0], reference.nystroem_kernel_ridge(X, y, a.centers, gamma=0.5, alpha=1e-2)) < 1e-7
    c = kernel_ridge(X, 1e200 * (y + 3.0), fit_intercept=True, **args)
    ref = reference.nystroem_kernel_ridge(X, y + 3.0 - (y + 3.0).mean(), c.centers, gamma=0.5, alpha=1e-2)
    assert _rel(c.weights[:, 0] / 1e200, ref) < 1e-7 and abs(c.intercept[0] / 1e200 - (y + 3.0).mean()) < 1e-12
    ls = np.array([0.5, 2.0, 1.0])
    s = kernel_ridge(X, y, length_scale=ls, **args)
    ref = reference.nystroem_kernel_ridge(X / ls, y, s.centers / ls, gamma=0.5, alpha=1e-2)
    assert _rel(s.weights[:, 0], ref) < 1e-7


def test_direct_nystrom_progress_and_duplicate_landmarks(rng):
    X, y = _data(rng, 3000)
    reports = []
    kernel_ridge(X, y, gamma=0.5, alpha=1e-2, solver="nystrom", n_landmarks=40, seed=0, progress=reports.append)
    assert reports[-1]["task"] == "kernel_ridge" and reports[-1]["stage"] == "nystrom" and reports[-1]["final"]
    assert [r["iter"] for r in reports if r["stage"] == "nystrom"][-1] == _nystrom.chunking(3000)[1]
    # repeated landmarks: K_mm singular, Falkon's jitter makes it factor; the CG agrees
    L = np.repeat(X[:20], 2, axis=0)
    d = kernel_ridge(X, y, gamma=0.5, alpha=1e-2, solver="nystrom", landmarks=L)
    cg = kernel_ridge(X, y, gamma=0.5, alpha=1e-2, solver="nystrom-pcg", landmarks=L, tol=1e-12, max_iter=1000)
    assert np.all(np.isfinite(d.weights)) and _rel(d.predict(X[:100]), cg.predict(X[:100])) < 1e-6


def test_pcg_kmeans_landmarks_and_seed(rng):
    X, y = _data(rng, 800)
    a = kernel_ridge(X, y, gamma=0.4, alpha=1e-2, solver="nystrom-pcg", n_landmarks=30, landmarks="kmeans", seed=3,
                     tol=1e-11)
    b = kernel_ridge(X, y, gamma=0.4, alpha=1e-2, solver="nystrom-pcg", n_landmarks=30, landmarks="kmeans", seed=3,
                     tol=1e-11)
    assert np.array_equal(a.centers, b.centers) and np.array_equal(a.weights, b.weights)
    beta = reference.nystroem_kernel_ridge(X, y, a.centers, gamma=0.4, alpha=1e-2)
    assert _rel(a.weights[:, 0], beta) < 1e-7


def test_pcg_default_landmarks_and_auto(rng, monkeypatch):
    assert models.default_landmarks(10**6) == 2000 and models.default_landmarks(10) == 10
    assert models.default_landmarks(400_000) == 1265
    X, y = _data(rng, 300)
    monkeypatch.setattr(_validation, "available_memory", lambda: 10**12)
    assert kernel_ridge(X, y, gamma=0.5, alpha=0.1).solver == "cholesky"
    assert kernel_ridge(X, y, gamma=0.5, alpha=0.1, n_landmarks=20, seed=0).solver == "nystrom"
    assert kernel_ridge(X, y, gamma=0.5, alpha=0.1, landmarks=X[:10]).solver == "nystrom"
    # 8 n^2 = 720 kB must be below half of what is free
    monkeypatch.setattr(_validation, "available_memory", lambda: 1_440_001)
    assert models._choose_solver(300, 0.1, None, "uniform") == "cholesky"
    monkeypatch.setattr(_validation, "available_memory", lambda: 1_440_000)
    assert models._choose_solver(300, 0.1, None, "uniform") == "nystrom"
    # the direct solve up to DIRECT_MAX_LANDMARKS landmarks, the CG beyond
    assert models._choose_solver(10**6, 0.1, models.DIRECT_MAX_LANDMARKS, "uniform") == "nystrom"
    assert models._choose_solver(10**6, 0.1, models.DIRECT_MAX_LANDMARKS + 1, "uniform") == "nystrom-pcg"
    assert models._choose_solver(10**8, 0.1, None, "uniform") == "nystrom-pcg"  # 20000 landmarks by default
    monkeypatch.setattr(_validation, "available_memory", lambda: 10**12)
    monkeypatch.setattr(models, "AUTO_MEMORY_SHARE", 1e-7)  # 720 kB > 1e-7 x 1 TB
    m = kernel_ridge(X, y, gamma=0.5, alpha=0.1, seed=0)
    assert m.solver == "nystrom" and m.centers.shape[0] == 300  # default: min(n, 1000)
    monkeypatch.setattr(models, "DIRECT_MAX_LANDMARKS", 299)
    assert kernel_ridge(X, y, gamma=0.5, alpha=0.1, seed=0).solver == "nystrom-pcg"
    assert kernel_ridge(X, y, gamma=0.5, alpha=np.full(300, 0.1)).solver == "cholesky"  # array alpha


def test_pcg_convergence_report(rng):
    X, y = _data(rng, 400)
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
        m = kernel_ridge(X, y, gamma=0.5, alpha=1e-4, solver="nystrom-pcg", n_landmarks=50, seed=0, tol=1e-14,
                         max_iter=2)
    assert not m.converged and m.n_iter == 2 and m.residual > 1e-14
    full = kernel_ridge(X, y, gamma=0.5, alpha=1e-4, solver="nystrom-pcg", n_landmarks=50, seed=0, tol=1e-9,
                        max_iter=500)
    assert full.converged and full.residual <= 1e-9 and 2 < full.n_iter < 500


def test_falkon_solve_zero_rhs_and_columns(rng):
    X, y = _data(rng, 200)
    L = X[:20]
    Knm, Kmm = reference.gram(X, L, gamma=0.5), reference.gram(L, gamma=0.5)
    rhs = np.c_[np.zeros(20), Knm.T @ y]
    res = _nystrom.falkon_solve(lambda V: Knm.T @ (Knm @ V), rhs, Kmm, 0.1, 200, tol=1e-11, max_iter=300)
    assert res.converged and res.beta.shape == (20, 2)
    assert np.array_equal(res.beta[:, 0], np.zeros(20))
    assert _rel(res.beta[:, 1], np.linalg.solve(Knm.T @ Knm + 0.1 * Kmm, Knm.T @ y)) < 1e-8
    zero = _nystrom.falkon_solve(lambda V: Knm.T @ (Knm @ V), np.zeros(20), Kmm, 0.1, 200, tol=1e-7, max_iter=10)
    assert zero.n_iter == 0 and zero.converged and zero.residual == 0.0


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"solver": "lu"}, ValueError, "`solver` must be one of"),
    ({"solver": "nystrom-pcg", "n_landmarks": 0}, ValueError, r"`n_landmarks` must be an int in \[1, n_samples\]"),
    ({"solver": "nystrom-pcg", "n_landmarks": 51}, ValueError, r"`n_landmarks` must be an int in \[1, n_samples\] = \[1, 50\]"),
    ({"solver": "nystrom-pcg", "n_landmarks": 2.5}, ValueError, "`n_landmarks` must be an int"),
    ({"solver": "nystrom-pcg", "alpha": np.full(50, 0.1)}, TypeError, "`alpha` must be a number > 0 for solver"),
    ({"solver": "nystrom-pcg", "alpha": 0.0}, ValueError, r"`alpha` must be > 0 for solver"),
    ({"solver": "nystrom-pcg", "alpha": -1.0}, ValueError, r"`alpha` must be finite and >= 0"),
    ({"solver": "nystrom-pcg", "kernel": "tanh"}, ValueError, "`kernel` must be one of .* for solver=\"nystrom-pcg\""),
    ({"solver": "nystrom-pcg", "kernel": "thin_plate_spline"}, ValueError, "positive definite kernel"),
    ({"solver": "nystrom-pcg", "tol": 0.0}, ValueError, "`tol` must be a finite number > 0"),
    ({"solver": "nystrom-pcg", "max_iter": 0}, ValueError, "`max_iter` must be an int >= 1"),
    ({"solver": "nystrom-pcg", "landmarks": "random"}, ValueError,
     '`landmarks` must be "uniform", "kmeans", "rpcholesky", "auto" or an array'),
    ({"solver": "nystrom-pcg", "landmarks": np.zeros((5, 2))}, ValueError, "landmarks"),
    ({"solver": "nystrom-pcg", "landmarks": np.zeros((5, 3)), "n_landmarks": 4}, ValueError, r"`n_landmarks` \(4\) must equal"),
    ({"solver": "nystrom-pcg", "jitter": "auto"}, ValueError, "`jitter` is used by solver=\"cholesky\" only"),
    ({"solver": "nystrom", "kernel": "tanh"}, ValueError, "`kernel` must be one of .* for solver=\"nystrom\" "),
    ({"solver": "nystrom", "alpha": 0.0}, ValueError, "`alpha` must be > 0 for solver=\"nystrom\""),
    ({"solver": "cholesky", "n_landmarks": 5}, ValueError, "`n_landmarks` and `landmarks` are used by solver"),
])
def test_pcg_errors(rng, kwargs, exc, match):
    X, y = _data(rng, 50)
    args = {"gamma": 0.5, "alpha": 0.1}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        kernel_ridge(X, y, **args)


def test_reference_nystroem_with_all_points_is_krr(rng):
    X, y = _data(rng, 60)
    assert _rel(reference.nystroem_kernel_ridge(X, y, X, gamma=0.5, alpha=0.1),
                reference.kernel_ridge(X, y, gamma=0.5, alpha=0.1)) < 1e-8


def test_given_landmarks_are_copied_and_seeds_checked(rng):
    X, _ = _data(rng, 30)
    L = X[:5].copy()
    got = _nystrom.landmarks(X, 5, L, None, None)
    assert got is not L and not np.shares_memory(got, L) and np.array_equal(got, L)
    a = _nystrom.landmarks(X, 5, "uniform", 7, None)
    assert np.array_equal(a, _nystrom.landmarks(X, 5, "uniform", np.random.default_rng(7), None))
    with pytest.raises(ValueError, match=r"`seed` must be None, an int >= 0"):
        _nystrom.landmarks(X, 5, "uniform", -3, None)
    with pytest.raises(ValueError, match="`n_landmarks`") as exc:
        _nystrom.landmarks(np.zeros((30, 3)), 5, "kmeans", 0, None)
    assert "n_clusters" not in str(exc.value)


def test_huge_tol_is_named(rng):
    X, y = _data(rng, 30)
    with pytest.raises(ValueError, match=r"`tol` must be a finite number > 0; got 1000"):
        kernel_ridge(X, y, gamma=0.5, alpha=0.1, solver="nystrom-pcg", tol=10**400)


@pytest.mark.parametrize("kernel", ["matern32", "matern52", "wendland_c2"])
def test_pcg_takes_the_registry_positive_definite_kernels(rng, kernel):
    assert kernel in models.PCG_KERNELS
    X, y = _data(rng, 200, d=3)
    exact = kernel_ridge(X, y, kernel=kernel, gamma=0.5, alpha=0.05, solver="cholesky")
    pcg = kernel_ridge(X, y, kernel=kernel, gamma=0.5, alpha=0.05, solver="nystrom-pcg", landmarks=X, tol=1e-12,
                       max_iter=300)
    assert pcg.converged
    assert _rel(pcg.predict(X[:50]), exact.predict(X[:50])) < 1e-6
