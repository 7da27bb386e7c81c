"""interpolate(..., neighbors=k): SciPy's RBFInterpolator(neighbors=k), the same values."""

import pickle

import numpy as np
import pytest
from scipy.interpolate import RBFInterpolator

import fastrbf

# (kernel, epsilon, degrees): epsilons that keep every local system well conditioned
CASES = [("thin_plate_spline", 1.0, (1, 2)), ("cubic", 1.0, (1, 2)), ("quintic", 1.0, (2,)), ("linear", 1.0, (0, 1)),
         ("multiquadric", 4.0, (0, 1)), ("inverse_multiquadric", 4.0, (-1, 0)),
         ("inverse_quadratic", 4.0, (-1, 1)), ("gaussian", 5.0, (-1, 0, 1))]


def _data(rng, n, d, t=2):
    X = rng.random((n, d))
    Y = np.column_stack([np.sin(3 * X.sum(axis=1) + j) for j in range(t)])
    return X, Y


@pytest.mark.parametrize("kernel, eps, degrees", CASES)
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_equals_scipy(rng, kernel, eps, degrees, d):
    n = 60 if d == 1 else 200
    X, Y = _data(rng, n, d)
    Xq = rng.random((60, d))
    if kernel not in ("thin_plate_spline", "cubic", "quintic", "linear"):
        eps *= {1: 12.0, 2: 2.0}.get(d, 1.0)  # the neighbourhoods are narrower in fewer dimensions
    for degree in degrees:
        for smoothing in (0.0, rng.uniform(0, 1e-3, n)):
            ref = RBFInterpolator(X, Y, kernel=kernel, epsilon=eps, degree=degree, smoothing=smoothing,
                                  neighbors=15)(Xq)
            got = fastrbf.interpolate(X, Y, kernel=kernel, gamma=eps**2, degree=degree, alpha=smoothing,
                                      neighbors=15).predict(Xq)
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


def test_all_points_as_neighbours_is_the_global_interpolant(rng):
    X, Y = _data(rng, 60, 2)
    Xq = rng.random((20, 2))
    local = fastrbf.interpolate(X, Y, neighbors=60).predict(Xq)
    glob = fastrbf.interpolate(X, Y).predict(Xq)
    np.testing.assert_allclose(local, glob, rtol=1e-9, atol=1e-9)


def test_reproduces_the_data_and_keeps_float32(rng):
    X, Y = _data(rng, 100, 2, 1)
    m = fastrbf.interpolate(X, Y[:, 0], neighbors=15)
    np.testing.assert_allclose(m.predict(X), Y[:, 0], atol=1e-9)
    m32 = fastrbf.interpolate(X.astype(np.float32), Y[:, 0].astype(np.float32), neighbors=15)
    got = m32.predict(X[:5].astype(np.float32))
    assert got.dtype == np.float32 and got.shape == (5,)


def test_thread_count_and_pickle(rng):
    X, Y = _data(rng, 300, 3)
    Xq = rng.random((500, 3))
    m = fastrbf.interpolate(X, Y, kernel="gaussian", gamma=16.0, neighbors=20)
    with fastrbf.threads(1):
        one = m.predict(Xq)
    assert np.array_equal(one, m.predict(Xq, n_threads=2))
    assert np.array_equal(pickle.loads(pickle.dumps(m)).predict(Xq), one)


def test_refusals_name_the_argument_or_the_point(rng):
    X, Y = _data(rng, 30, 2, 1)
    with pytest.raises(ValueError, match=r"`neighbors` must be an int >= 1; got 0"):
        fastrbf.interpolate(X, Y, neighbors=0)
    # SciPy's rule: more neighbours than points means all of them
    Xq = X[:5] + 0.01
    assert np.array_equal(fastrbf.interpolate(X, Y, neighbors=31).predict(Xq),
                          fastrbf.interpolate(X, Y, neighbors=30).predict(Xq))
    with pytest.raises(ValueError, match=r"`neighbors` must be at least the number of monomials of the polynomial "
                                         r"tail \(6, degree 2\); got 4"):
        fastrbf.interpolate(X, Y, kernel="quintic", neighbors=4)
    Xd = np.vstack([X, X[:1]])  # a duplicate point, no smoothing
    m = fastrbf.interpolate(Xd, np.r_[Y[:, 0], 5.0], neighbors=5)
    with pytest.raises(ValueError, match=r"The local interpolation system of the neighbourhood of query point 0 "
                                         r"\(`X\[0\]`: data points .*\) is singular"):
        m.predict(X[:1])
