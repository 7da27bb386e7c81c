"""Per-feature widths (``length_scale``): each feature divided by its scale before the
kernel, equal to scikit-learn's anisotropic kernels, everywhere it is accepted."""

import numpy as np
import pytest

import fastrbf
from fastrbf import reference


def _xy(rng, dtype=np.float64):
    return rng.standard_normal((70, 3)).astype(dtype), rng.standard_normal((45, 3)).astype(dtype)


L = np.array([0.3, 1.0, 2.5])


@pytest.mark.parametrize("nu, kernel", [(0.5, "matern12"), (1.5, "matern32"), (2.5, "matern52")])
def test_anisotropic_matern_equals_sklearn(rng, nu, kernel):
    from sklearn.gaussian_process.kernels import Matern

    X, Y = _xy(rng)
    np.testing.assert_allclose(fastrbf.gram(X, Y, kernel=kernel, length_scale=L),
                               Matern(length_scale=L, nu=nu)(X, Y), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(fastrbf.gram(X, kernel=kernel, length_scale=L), Matern(length_scale=L, nu=nu)(X),
                               rtol=1e-12, atol=1e-300)


def test_anisotropic_rbf_and_rational_quadratic_equal_sklearn(rng):
    from sklearn.gaussian_process.kernels import RBF, RationalQuadratic

    X, Y = _xy(rng)
    np.testing.assert_allclose(fastrbf.gram(X, Y, gamma=0.5, length_scale=L), RBF(length_scale=L)(X, Y), rtol=1e-12)
    # scikit-learn's RationalQuadratic is isotropic: compare on the rescaled data
    np.testing.assert_allclose(fastrbf.gram(X, Y, kernel="rational_quadratic", coef0=1.7, length_scale=L),
                               RationalQuadratic(length_scale=1.0, alpha=1.7)(X / L, Y / L), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sqdist_gram_matvec_knn_equal_the_prescaled_data(rng, dtype):
    X, Y = _xy(rng, dtype)
    Xs, Ys = (X / L).astype(dtype), (Y / L).astype(dtype)
    D = fastrbf.sqdist(X, Y, length_scale=L)
    assert D.dtype == dtype
    assert np.array_equal(D, fastrbf.sqdist(Xs, Ys))
    assert np.array_equal(fastrbf.sqdist(X, length_scale=L), fastrbf.sqdist(Xs))
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(D, reference.sqdist((X / L).astype(np.float64), (Y / L).astype(np.float64)), rtol=tol)
    for kernel in ("gaussian", "polynomial", "wendland_c2"):
        G = fastrbf.gram(X, Y, kernel=kernel, gamma=0.7, length_scale=L)
        assert G.dtype == dtype
        assert np.array_equal(G, fastrbf.gram(Xs, Ys, kernel=kernel, gamma=0.7))
    V = rng.standard_normal((45, 2)).astype(dtype)
    assert np.array_equal(fastrbf.gram_matvec(X, Y, V, gamma=0.7, length_scale=L),
                          fastrbf.gram_matvec(Xs, Ys, V, gamma=0.7))
    idx, d2 = fastrbf.knn(Y, X, 4, length_scale=L)
    idx0, d20 = fastrbf.knn(Ys, Xs, 4)
    assert np.array_equal(idx, idx0) and np.array_equal(d2, d20)


def test_a_scalar_length_scale_is_a_width(rng):
    X, Y = _xy(rng)
    np.testing.assert_allclose(fastrbf.gram(X, Y, length_scale=2.0), fastrbf.gram(X, Y, gamma=0.25), rtol=1e-14)


def test_inputs_untouched_and_out_honoured(rng):
    X, Y = _xy(rng)
    X0, Y0, L0 = X.copy(), Y.copy(), L.copy()
    out = np.empty((70, 45))
    got = fastrbf.gram(X, Y, length_scale=L, out=out)
    assert got is out
    assert np.array_equal(X, X0) and np.array_equal(Y, Y0) and np.array_equal(L, L0)


def test_dask_functions_take_length_scale(rng):
    import dask.array as da

    import fastrbf.dask as fd

    X, Y = _xy(rng)
    Xd = da.from_array(X, chunks=(25, 3))
    run = dict(scheduler="synchronous")
    assert np.array_equal(fd.sqdist(Xd, length_scale=L).compute(**run), fastrbf.sqdist(X, length_scale=L))
    assert np.array_equal(fd.gram(Xd, Y, kernel="matern32", length_scale=L).compute(**run),
                          fastrbf.gram(X, Y, kernel="matern32", length_scale=L))
    v = rng.standard_normal(45)
    assert np.array_equal(fd.gram_matvec(Xd, Y, v, length_scale=L).compute(**run),
                          fastrbf.gram_matvec(X, Y, v, length_scale=L))


@pytest.mark.parametrize("bad, err, match", [
    ([1.0, 2.0], ValueError, r"`length_scale` must be a number or a 1-D array with one value per feature \(3\); got "
                             r"shape \(2,\)\."),
    ([1.0, -2.0, 1.0], ValueError, r"`length_scale` must contain only finite values > 0; got -2.0\."),
    ([1.0, np.nan, 1.0], ValueError, r"`length_scale` must contain only finite values > 0; got nan\."),
    (0.0, ValueError, r"`length_scale` must contain only finite values > 0; got 0.0\."),
    ("wide", TypeError, r"`length_scale` must be a number or a 1-D array of numbers; got 'wide'\."),
    ([[1.0, 1.0, 1.0]], ValueError, r"one value per feature \(3\); got shape \(1, 3\)"),
])
def test_bad_length_scale_is_refused_by_name(rng, bad, err, match):
    X, Y = _xy(rng)
    for call in (lambda: fastrbf.gram(X, Y, length_scale=bad), lambda: fastrbf.sqdist(X, length_scale=bad),
                 lambda: fastrbf.gram_matvec(X, Y, np.ones(45), length_scale=bad),
                 lambda: fastrbf.knn(X, Y, 2, length_scale=bad)):
        with pytest.raises(err, match=match):
            call()


def test_rescaled_data_that_overflows_is_refused():
    X = np.full((3, 2), 1e300)
    with pytest.raises(ValueError, match=r"`X` divided by `length_scale` overflows float64"):
        fastrbf.gram(X, length_scale=1e-10)


# ---------------------------------------------------------------- models
def _fit_data(rng):
    X = rng.uniform(-1, 1, (80, 3)) * np.array([1.0, 5.0, 0.2])
    Y = np.c_[np.sin(2 * X[:, 0]) + 0.1 * X[:, 1], np.cos(10 * X[:, 2])]
    Xq = rng.uniform(-1, 1, (25, 3)) * np.array([1.0, 5.0, 0.2])
    return X, Y, Xq


L3 = np.array([0.5, 3.0, 0.1])


@pytest.mark.parametrize("fit", [
    lambda X, Y, **kw: fastrbf.kernel_ridge(X, Y, gamma=1.0, alpha=1e-3, kernel="matern52", **kw),
    lambda X, Y, **kw: fastrbf.kernel_ridge(X, Y, gamma=1.0, alpha=1e-3, solver="nystrom-pcg", n_landmarks=30, seed=0,
                                            tol=1e-12, max_iter=300, **kw),
    lambda X, Y, **kw: fastrbf.interpolate(X, Y, kernel="gaussian", gamma=0.5, degree=1, **kw),
    lambda X, Y, **kw: fastrbf.rbf_network(X, Y, gamma=1.0, n_centers=12, seed=0, **kw),
    lambda X, Y, **kw: fastrbf.rbf_network(X, Y, gamma=1.0, centers="all", alpha=1e-6, **kw),
])
def test_models_equal_a_fit_on_the_prescaled_data(rng, fit):
    X, Y, Xq = _fit_data(rng)
    m = fit(X, Y, length_scale=L3)
    m0 = fit(X / L3, Y)
    assert np.array_equal(m.length_scale, L3)
    np.testing.assert_allclose(m.centers, m0.centers * L3, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(m.predict(Xq), m0.predict(Xq / L3), rtol=1e-10, atol=1e-12)
    v, g = m.predict(Xq, return_grad=True)
    v0, g0 = m0.predict(Xq / L3, return_grad=True)
    np.testing.assert_allclose(g, g0 / L3, rtol=1e-9, atol=1e-10 * np.abs(g0 / L3).max())


def test_nadaraya_watson_takes_length_scale(rng):
    X, Y, Xq = _fit_data(rng)
    got = fastrbf.nadaraya_watson(X, Y, Xq, gamma=0.7, length_scale=L3)
    assert np.array_equal(got, fastrbf.nadaraya_watson(X / L3, Y, Xq / L3, gamma=0.7))
    f, g = fastrbf.nadaraya_watson(X, Y, Xq, gamma=0.7, length_scale=L3, return_grad=True)
    f0, g0 = fastrbf.nadaraya_watson(X / L3, Y, Xq / L3, gamma=0.7, return_grad=True)
    np.testing.assert_allclose(g, g0 / L3, rtol=1e-12)


def test_a_model_with_length_scale_pickles(rng):
    import pickle

    X, Y, Xq = _fit_data(rng)
    m = fastrbf.kernel_ridge(X, Y, gamma=1.0, alpha=1e-2, length_scale=L3)
    assert np.array_equal(pickle.loads(pickle.dumps(m)).predict(Xq), m.predict(Xq))


def test_sklearn_estimators_take_length_scale(rng):
    from fastrbf.sklearn import KernelRidge, RBFInterpolatorRegressor, RBFNetworkRegressor

    X, Y, Xq = _fit_data(rng)
    y = Y[:, 0]
    est = KernelRidge(alpha=1e-2, gamma=0.5, kernel="matern32", length_scale=L3).fit(X, y)
    np.testing.assert_allclose(est.predict(Xq), fastrbf.kernel_ridge(X, y, gamma=0.5, alpha=1e-2, kernel="matern32",
                                                                      length_scale=L3).predict(Xq), rtol=1e-12)
    est = RBFInterpolatorRegressor(kernel="gaussian", epsilon=0.8, degree=1, length_scale=L3).fit(X, y)
    np.testing.assert_allclose(est.predict(Xq), fastrbf.interpolate(X, y, kernel="gaussian", gamma=0.64, degree=1,
                                                                     length_scale=L3).predict(Xq), rtol=1e-10)
    est = RBFNetworkRegressor(12, gamma=1.0, random_state=0, length_scale=L3).fit(X, y)
    ref = fastrbf.rbf_network(X / L3, y, gamma=1.0, n_centers=12, seed=0)
    np.testing.assert_allclose(est.model_.centers, ref.centers * L3, rtol=1e-12)
    np.testing.assert_allclose(est.predict(Xq), ref.predict(Xq / L3), rtol=1e-10, atol=1e-12)
    assert est.get_params()["length_scale"] is L3


def test_dask_models_take_length_scale(rng):
    import dask
    import dask.array as da

    import fastrbf.dask as fd

    X, Y, Xq = _fit_data(rng)
    Xd = da.from_array(X, chunks=(30, 3))
    with dask.config.set(scheduler="synchronous"):
        m = fd.kernel_ridge(Xd, Y[:, 0], gamma=1.0, alpha=1e-3, n_landmarks=30, seed=0, tol=1e-12, max_iter=300,
                            length_scale=L3)
        m0 = fd.kernel_ridge(da.from_array(X / L3, chunks=(30, 3)), Y[:, 0], gamma=1.0, alpha=1e-3, n_landmarks=30,
                             seed=0, tol=1e-12, max_iter=300)
        C = X[::8]
        net = fd.rbf_network(Xd, Y, gamma=1.0, centers=C, length_scale=L3)
    assert np.array_equal(m.length_scale, L3)
    np.testing.assert_allclose(m.predict(Xq), m0.predict(Xq / L3), rtol=1e-9, atol=1e-12)
    assert np.array_equal(net.centers, C)
    ref = fastrbf.rbf_network(X, Y, gamma=1.0, centers=C, length_scale=L3)
    np.testing.assert_allclose(net.predict(Xq), ref.predict(Xq), rtol=1e-8, atol=1e-10)


def test_tiny_length_scales_are_blamed_not_the_data(rng):
    X = rng.random((30, 2))
    y = np.sin(4 * X[:, 0])
    match = r"`X` divided by `length_scale` reaches .* use larger length scales \(the smallest is 1e-300\)"
    with pytest.raises(ValueError, match=match):
        fastrbf.gram(X, gamma=1.0, length_scale=1e-300)
    with pytest.raises(ValueError, match=match):
        fastrbf.kernel_ridge(X, y, gamma=1.0, alpha=0.1, length_scale=1e-300)
    with pytest.raises(ValueError, match=match):
        fastrbf.gaussian_process(X, y, kernel="matern52", length_scale=1e-300, optimize=False)
    with pytest.raises(ValueError, match=r"`length_scale` must be a number > 0 or one per feature \(2\); got None"):
        fastrbf.gaussian_process(X, y, kernel="matern52", length_scale=None)
