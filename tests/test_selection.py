"""Closed-form leave-one-out and GCV (kernel_ridge_cv, interpolate_cv) against
brute-force refits with each point left out, and the model they choose."""

import numpy as np
import pytest

import fastrbf
from fastrbf import reference
from fastrbf.models.common import monomial_powers, polynomial_matrix


def _K(X, kernel, gamma):
    return reference.gram(X, kernel=kernel, gamma=gamma)


def _tail(X, degree):
    if degree < 0:
        return np.zeros((X.shape[0], 0))
    lo, hi = X.min(axis=0), X.max(axis=0)
    scale = (hi - lo) / 2
    scale[scale == 0] = 1.0
    return polynomial_matrix(X, (hi + lo) / 2, scale, monomial_powers(X.shape[1], degree))


def _brute(X, Y, kernel, gamma, alpha, degree):
    """LOO residuals by refitting without each point, and GCV from the explicit hat
    matrix (alpha > 0)."""
    n = X.shape[0]
    K = _K(X, kernel, gamma)
    P = _tail(X, degree)
    q = P.shape[1]

    def solve(idx, rhs):
        m = idx.size
        M = np.zeros((m + q, m + q))
        M[:m, :m] = K[np.ix_(idx, idx)] + alpha * np.eye(m)
        M[:m, m:] = P[idx]
        M[m:, :m] = P[idx].T
        sol = np.linalg.solve(M, np.vstack([rhs, np.zeros((q, rhs.shape[1]))]))
        return sol[:m], sol[m:]

    E = np.empty_like(Y)
    for i in range(n):
        idx = np.delete(np.arange(n), i)
        w, d = solve(idx, Y[idx])
        E[i] = Y[i] - (K[i, idx] @ w + P[i] @ d)
    gcv = None
    if alpha > 0:
        H = np.empty((n, n))
        for j in range(n):  # column j of the hat matrix: the fit of the j-th unit vector
            e = np.zeros((n, 1))
            e[j] = 1.0
            w, d = solve(np.arange(n), e)
            H[:, j] = (K @ w + P @ d)[:, 0]
        R = Y - H @ Y
        gcv = n * np.mean(np.sum(R * R, axis=0)) / np.trace(np.eye(n) - H) ** 2
    return E, gcv


def _data(rng, n, d, k=1):
    X = rng.uniform(-1, 1, (n, d))
    Y = np.column_stack([np.sin(2 * X[:, 0] + j) + 0.3 * X[:, -1] ** 2 for j in range(k)])
    return X, Y


@pytest.mark.parametrize("k", [1, 3])
def test_kernel_ridge_loo_and_gcv_equal_refits(rng, k):
    X, Y = _data(rng, 60, 2, k)
    gammas, alphas = [0.5, 2.0], [1e-3, 0.1]
    res = fastrbf.kernel_ridge_cv(X, Y if k > 1 else Y[:, 0], gamma=gammas, alpha=alphas)
    for i, g in enumerate(gammas):
        for j, a in enumerate(alphas):
            E, gcv = _brute(X, Y, "gaussian", g, a, -1)
            np.testing.assert_allclose(res.loo_mse[i, j], np.mean(E * E), rtol=1e-8)
            np.testing.assert_allclose(res.gcv[i, j], gcv, rtol=1e-8)
    i, j = res.best_index
    assert res.loo_mse[i, j] == res.loo_mse.min()
    E, _ = _brute(X, Y, "gaussian", gammas[i], alphas[j], -1)
    np.testing.assert_allclose(res.loo_residuals, E if k > 1 else E[:, 0], rtol=1e-8, atol=1e-12)
    direct = fastrbf.kernel_ridge(X, Y if k > 1 else Y[:, 0], gamma=res.best_gamma, alpha=res.best_alpha)
    assert np.array_equal(res.model.predict(X), direct.predict(X))


@pytest.mark.parametrize("kernel, degree, gamma", [("gaussian", -1, 3.0), ("gaussian", 0, 3.0), ("gaussian", 1, 3.0),
                                                   ("thin_plate_spline", 1, 1.0), ("cubic", 1, 1.0),
                                                   ("multiquadric", 0, 2.0), ("matern52", 1, 4.0)])
@pytest.mark.parametrize("alpha", [0.0, 1e-2])
def test_interpolation_loo_equals_refits(rng, kernel, degree, gamma, alpha):
    X, Y = _data(rng, 45, 2, 2)
    res = fastrbf.interpolate_cv(X, Y, kernel=kernel, gamma=gamma, alpha=alpha, degree=degree)
    E, gcv = _brute(X, Y, kernel, gamma, alpha, degree)
    np.testing.assert_allclose(res.loo_residuals, E, rtol=1e-7, atol=1e-9 * np.abs(Y).max())
    np.testing.assert_allclose(res.loo_mse[0, 0], np.mean(E * E), rtol=1e-7)
    if gcv is not None:
        np.testing.assert_allclose(res.gcv[0, 0], gcv, rtol=1e-7)
    direct = fastrbf.interpolate(X, Y, kernel=kernel, gamma=gamma, alpha=alpha, degree=degree)
    assert np.array_equal(res.model.predict(X), direct.predict(X))


def test_gcv_at_zero_alpha_is_the_limit(rng):
    X, Y = _data(rng, 15, 1)
    res = fastrbf.interpolate_cv(X, Y[:, 0], kernel="gaussian", gamma=30.0, alpha=[0.0, 1e-10], degree=0)
    assert np.all(np.isfinite(res.gcv))
    np.testing.assert_allclose(res.gcv[0, 0], res.gcv[0, 1], rtol=1e-4)


def test_criterion_picks_its_table_and_ill_posed_pairs_are_infinite(rng):
    X, Y = _data(rng, 40, 1)
    X[1] = X[0]  # a duplicate point: alpha = 0 is singular
    res = fastrbf.kernel_ridge_cv(X, Y[:, 0], gamma=[1.0, 8.0], alpha=[0.0, 1e-2, 1.0], criterion="gcv")
    assert np.all(np.isinf(res.loo_mse[:, 0])) and np.all(np.isinf(res.gcv[:, 0]))
    assert res.gcv[res.best_index] == res.gcv.min() and res.best_alpha > 0
    with pytest.raises(ValueError, match="every \\(gamma, alpha\\) pair gives a system singular to working precision"):
        fastrbf.kernel_ridge_cv(X, Y[:, 0], gamma=1.0, alpha=0.0)


def test_selection_beats_a_bad_guess_out_of_sample(rng):
    X, Y = _data(rng, 200, 2)
    y = Y[:, 0] + 0.05 * rng.standard_normal(200)
    Xt, Yt = _data(rng, 400, 2)
    res = fastrbf.kernel_ridge_cv(X, y, gamma=np.logspace(-2, 2, 9), alpha=np.logspace(-8, 0, 9))
    err = np.mean((res.model.predict(Xt) - Yt[:, 0]) ** 2)
    bad = fastrbf.kernel_ridge(X, y, gamma=100.0, alpha=1e-8)
    assert err < 0.2 * np.mean((bad.predict(Xt) - Yt[:, 0]) ** 2)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(gamma=[1.0, -1.0], alpha=0.1), ValueError, r"`gamma` must be a finite number > 0 \(or a sequence of them\)"),
    (dict(gamma=1.0, alpha=[-1.0]), ValueError, r"`alpha` must be a finite number >= 0 \(or a sequence of them\)"),
    (dict(gamma=[], alpha=0.1), ValueError, r"`gamma` must be a number or a non-empty 1-D sequence"),
    (dict(gamma=1.0, alpha=0.1, criterion="aic"), ValueError, r'`criterion` must be "loo" or "gcv"; got \'aic\'\.'),
    (dict(gamma=1.0, alpha=0.1, kernel="tanh"), ValueError, r"`kernel` must be"),
])
def test_bad_arguments_are_named(rng, kwargs, err, match):
    X, Y = _data(rng, 20, 2)
    call = fastrbf.interpolate_cv if kwargs.get("kernel") == "tanh" else fastrbf.kernel_ridge_cv
    with pytest.raises(err, match=match):
        call(X, Y[:, 0], **kwargs)


def test_progress_reports_each_gamma(rng):
    X, Y = _data(rng, 30, 2)
    seen = []
    fastrbf.kernel_ridge_cv(X, Y[:, 0], gamma=[0.5, 1.0, 2.0], alpha=0.1, progress=seen.append)
    assert [r["iter"] for r in seen] == [1, 2, 3] and seen[-1]["final"]
    assert seen[-1]["task"] == "kernel_ridge_cv"


def test_sklearn_kernel_ridge_cv_equals_the_function(rng):
    from fastrbf.sklearn import KernelRidgeCV

    X, Y = _data(rng, 50, 2, 2)
    est = KernelRidgeCV(alphas=[1e-3, 1e-1], gammas=[0.5, 2.0]).fit(X, Y)
    res = fastrbf.kernel_ridge_cv(X, Y, gamma=[0.5, 2.0], alpha=[1e-3, 1e-1])
    assert (est.best_gamma_, est.best_alpha_) == (res.best_gamma, res.best_alpha)
    assert np.array_equal(est.selection_.loo_mse, res.loo_mse)
    assert np.array_equal(est.predict(X), res.model.predict(X))
    with pytest.raises(ValueError, match=r"`gammas` must be a finite number > 0"):
        KernelRidgeCV(gammas=[-1.0]).fit(X, Y)


def test_selection_does_not_depend_on_the_thread_count(rng):
    X, Y = _data(rng, 150, 3, 2)
    a = fastrbf.kernel_ridge_cv(X, Y, gamma=[0.5, 2.0], alpha=[1e-3, 1e-1], n_threads=1)
    b = fastrbf.kernel_ridge_cv(X, Y, gamma=[0.5, 2.0], alpha=[1e-3, 1e-1], n_threads=2)
    assert np.array_equal(a.loo_mse, b.loo_mse) and np.array_equal(a.gcv, b.gcv)
    assert np.array_equal(a.loo_residuals, b.loo_residuals)


# --- bad inputs: huge alpha, long grids, indefinite kernels ----------------------------


def test_huge_alpha_gives_the_limit_of_no_fit_not_nan(rng):
    X, Y = _data(rng, 30, 2)
    y = Y[:, 0]
    res = fastrbf.kernel_ridge_cv(X, y, gamma=[1.0, 4.0], alpha=[1e-3, 1e200, 1e308, 1.7e308], criterion="gcv")
    # alpha -> inf: no fit at all, residuals y; trace(I - H) -> n: both tables -> mean(y^2)
    np.testing.assert_allclose(res.gcv[:, 1:], np.mean(y**2), rtol=1e-12)
    np.testing.assert_allclose(res.loo_mse[:, 1:], np.mean(y**2), rtol=1e-12)
    assert res.best_alpha == 1e-3
    # with a constant tail the limit is the fit of the constant: LOO and GCV of the mean
    res = fastrbf.interpolate_cv(X, y, kernel="gaussian", gamma=1.0, alpha=[0.0, 1e200, 1e308], degree=0)
    n = y.size
    limit = n**2 / (n - 1) ** 2 * np.mean((y - y.mean()) ** 2)
    np.testing.assert_allclose(res.gcv[0, 1:], limit, rtol=1e-12)
    np.testing.assert_allclose(res.loo_mse[0, 1:], limit, rtol=1e-12)


@pytest.mark.parametrize("call", ["kernel_ridge_cv", "interpolate_cv"])
def test_peak_memory_does_not_grow_with_the_number_of_gammas(rng, call):
    import tracemalloc

    n = 120
    X, Y = _data(rng, n, 2)
    kw = dict(kernel="gaussian", degree=0) if call == "interpolate_cv" else {}
    func = getattr(fastrbf, call)
    func(X, Y[:, 0], gamma=1.0, alpha=1e-3, **kw)  # compiled, imported
    tracemalloc.start()
    try:
        res = func(X, Y[:, 0], gamma=np.logspace(-1, 1, 60), alpha=[1e-6, 1e-3], **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.loo_mse.shape == (60, 2)
    # about five n x n arrays (six with a tail), not two more per gamma
    assert peak < 8 * (8 * n * n), peak / (8 * n * n)


def test_long_grids_report_the_best_pair_so_far(rng):
    X, Y = _data(rng, 12, 1)
    gammas = np.logspace(-1, 2, 300)
    alphas = np.logspace(-6, 0, 7)
    seen = []
    res = fastrbf.interpolate_cv(X, Y[:, 0], kernel="gaussian", gamma=gammas, alpha=alphas, degree=0,
                                 progress=seen.append)
    assert [r["iter"] for r in seen] == list(range(1, 301)) and seen[-1]["final"] and seen[0]["max_iter"] == 300
    for r in seen:
        i = r["iter"]
        sub = res.loo_mse[:i]
        bi, bj = np.unravel_index(np.argmin(sub), sub.shape)
        assert (r["metrics"]["best_gamma"], r["metrics"]["best_alpha"]) == (gammas[bi], alphas[bj])
        assert r["metrics"]["best_loo"] == sub.min()
    assert (seen[-1]["metrics"]["best_gamma"], seen[-1]["metrics"]["best_alpha"]) == (res.best_gamma, res.best_alpha)


def test_tables_that_do_not_fit_are_refused_before_any_work(rng, monkeypatch):
    from fastrbf import _validation

    X, Y = _data(rng, 10, 1)
    monkeypatch.setattr(_validation, "available_memory", lambda: 10**6)
    calls = []
    monkeypatch.setattr(fastrbf.models.selection, "gram", lambda *a, **k: calls.append(1))
    with pytest.raises(MemoryError, match=r"the 1000 x 1000 tables.*fewer `gamma` or `alpha` values"):
        fastrbf.kernel_ridge_cv(X, Y[:, 0], gamma=np.linspace(1, 2, 1000), alpha=np.linspace(0.1, 1, 1000))
    assert not calls


@pytest.mark.parametrize("kernel", ["multiquadric", "thin_plate_spline", "tanh"])
def test_an_indefinite_kernel_is_named_not_reported_as_singular(rng, kernel):
    from fastrbf.sklearn import KernelRidgeCV

    X, Y = _data(rng, 30, 2)
    with pytest.raises(ValueError, match=rf"kernel_ridge_cv: the '{kernel}' kernel is not positive definite .*"
                                         r"use a positive definite `kernel` .* or `alpha` values above"):
        fastrbf.kernel_ridge_cv(X, Y[:, 0], gamma=[0.5, 1.0], alpha=[0.0, 1e-6], kernel=kernel)
    with pytest.raises(ValueError, match=rf"the '{kernel}' kernel is not positive definite .*`alphas` values above"):
        KernelRidgeCV(kernel=kernel, alphas=[1e-6]).fit(X, Y[:, 0])
    # a singular system of a positive definite kernel keeps its own message
    X[1] = X[0]
    with pytest.raises(ValueError, match="every \\(gamma, alpha\\) pair gives a system singular"):
        fastrbf.kernel_ridge_cv(X, Y[:, 0], gamma=1.0, alpha=0.0)


@pytest.mark.parametrize("gammas", ["x", [1.0, "x"], [[1.0]]])
def test_sklearn_kernel_ridge_cv_names_bad_gammas(rng, gammas):
    from fastrbf.sklearn import KernelRidgeCV

    X, Y = _data(rng, 20, 2)
    with pytest.raises((TypeError, ValueError), match=r"`gammas` must be a (finite number > 0|number or a non-empty)"):
        KernelRidgeCV(gammas=gammas).fit(X, Y[:, 0])
