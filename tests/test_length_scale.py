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
