"""The nearest-neighbour (Vecchia) Gaussian process against the exact GP (every earlier
point as neighbours), the plain NumPy oracle of ``fastrbf.reference``, finite
differences and its own rules (thread bits, dtypes, errors)."""

import numpy as np
import pytest

from fastrbf import (
    KERNELS,
    gaussian_process,
    gaussian_process_lml,
    reference,
    vecchia_gaussian_process,
    vecchia_gaussian_process_lml,
)
from fastrbf.gp import _vecchia


def _data(rng, n, d=2):
    X = rng.uniform(0, 1, (n, d))
    return X, np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.standard_normal(n)


def _gp_kernels():
    # the registry kernels a GP takes (radial, positive definite, no polynomial tail)
    X = np.random.default_rng(0).uniform(0, 1, (6, 2))
    out = []
    for name in KERNELS:
        try:
            gaussian_process_lml(X, X[:, 0], kernel=name, length_scale=0.5, noise=0.1)
        except ValueError:
            continue
        out.append(name)
    return out


GP_KERNELS = _gp_kernels()


def test_the_gp_kernels_are_the_expected_ones():
    assert {"gaussian", "matern12", "matern32", "matern52", "rational_quadratic"} <= set(GP_KERNELS)


@pytest.mark.parametrize("kernel, ls", [("gaussian", 0.3), ("matern52", [0.3, 0.8])])
def test_the_vecchia_oracle_with_every_earlier_point_is_the_exact_likelihood(rng, kernel, ls):
    # the plain NumPy Vecchia likelihood (the oracle of the nearest-neighbour GP) against
    # the exact GP's: with n - 1 neighbours each factor is an exact conditional
    X, y = _data(rng, n=30)
    exact = gaussian_process_lml(X, y, kernel=kernel, amplitude=1.3, length_scale=ls, noise=1e-2)
    for order in (np.arange(30), np.argsort(X[:, 0]), rng.permutation(30)):
        got = reference.vecchia_log_likelihood(X, y, order, 29, kernel=kernel, amplitude=1.3, length_scale=ls, noise=1e-2)
        assert got == pytest.approx(exact, rel=1e-10)
    few = reference.vecchia_log_likelihood(X, y, np.arange(30), 3, kernel=kernel, amplitude=1.3, length_scale=ls,
                                           noise=1e-2)
    assert abs(few - exact) > 1e-6 * abs(exact)  # fewer neighbours: an approximation, not the same number


@pytest.mark.parametrize("kernel", GP_KERNELS)
def test_every_earlier_point_gives_the_exact_likelihood_and_gradient(rng, kernel):
    X, y = _data(rng, n=40)
    ls = [0.4, 0.9]
    exact, g_exact = gaussian_process_lml(X, y, kernel=kernel, amplitude=1.3, length_scale=ls, noise=1e-2,
                                          eval_gradient=True)
    for ordering in ("maximin", "random", "coordinate", "none", rng.permutation(40)):
        got, g = vecchia_gaussian_process_lml(X, y, n_neighbors=39, kernel=kernel, amplitude=1.3, length_scale=ls,
                                              noise=1e-2, ordering=ordering, seed=1, eval_gradient=True)
        assert got == pytest.approx(exact, rel=1e-8, abs=1e-8)
        np.testing.assert_allclose(g, g_exact, rtol=1e-8, atol=1e-8 * np.abs(g_exact).max())


def test_every_earlier_point_without_noise_and_isotropic(rng):
    X, y = _data(rng, n=25)
    exact, g_exact = gaussian_process_lml(X, y, kernel="matern12", amplitude=0.7, length_scale=0.5, noise=None,
                                          eval_gradient=True)
    got, g = vecchia_gaussian_process_lml(X, y, n_neighbors=100, kernel="matern12", amplitude=0.7, length_scale=0.5,
                                          noise=None, eval_gradient=True)
    assert g.shape == (2,)
    assert got == pytest.approx(exact, rel=1e-8)
    np.testing.assert_allclose(g, g_exact, rtol=1e-8)


@pytest.mark.parametrize("kernel, ls", [("matern32", [0.2, 0.5]), ("gaussian", 0.15), ("rational_quadratic", 0.3)])
@pytest.mark.parametrize("m", [3, 8])
def test_the_likelihood_equals_the_numpy_oracle(rng, kernel, ls, m):
    # 1200 points: the first positions by brute force, the others by the kd-tree blocks
    X, y = _data(rng, n=1200)
    for ordering in ("maximin", "coordinate", rng.permutation(1200)):
        order = _vecchia.ordering_of(X / np.broadcast_to(ls, (2,)), _vecchia.check_ordering(ordering, 1200), None, 1)
        got = vecchia_gaussian_process_lml(X, y, n_neighbors=m, kernel=kernel, amplitude=0.8, length_scale=ls,
                                           noise=1e-2, ordering=ordering)
        want = reference.vecchia_log_likelihood(X, y, order, m, kernel=kernel, amplitude=0.8, length_scale=ls,
                                                noise=1e-2)
        assert got == pytest.approx(want, rel=1e-10)


def test_conditioning_sets_are_the_nearest_earlier_points_with_ties_to_the_earlier(rng):
    # an integer grid with repeated points: many equal distances, all exact
    g = np.arange(30.0)
    X = np.array(np.meshgrid(g, g[:25])).reshape(2, -1).T
    X = np.concatenate([X, X[:200]])[rng.permutation(950)]
    m = 6
    nbr, count = _vecchia.conditioning_sets(np.ascontiguousarray(X), m, 2)
    for t in range(950):
        dist = np.sum((X[:t] - X[t]) ** 2, axis=1)
        want = np.lexsort((np.arange(t), dist))[:m]
        assert count[t] == min(t, m)
        np.testing.assert_array_equal(nbr[t, : count[t]], want)


@pytest.mark.parametrize("d", [1, 3])
def test_the_maximin_ordering_equals_the_numpy_one(rng, d):
    X = rng.standard_normal((700, d))
    X[100:120] = X[:20]  # duplicates: ties
    first = int(np.argmin(np.sum((X - X.mean(axis=0)) ** 2, axis=1)))
    got = _vecchia.ordering_of(X, "maximin", None, 2)
    np.testing.assert_array_equal(got, reference.maximin_order(X, first))


def test_the_gradient_against_finite_differences(rng):
    X, y = _data(rng, n=300, d=3)
    theta = np.log([1.3, 0.3, 0.5, 0.7, 1e-2])
    order = rng.permutation(300)

    def f(t, grad=False):
        return vecchia_gaussian_process_lml(X, y, n_neighbors=10, kernel="matern52", amplitude=np.exp(t[0]),
                                            length_scale=np.exp(t[1:4]), noise=np.exp(t[4]), ordering=order,
                                            eval_gradient=grad)

    _, g = f(theta, True)
    h = 1e-5
    fd = np.array([(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in np.eye(5)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6 * np.abs(g).max())


def test_prediction_from_every_point_is_the_exact_gps(rng):
    X, y = _data(rng, n=150, d=3)
    kw = dict(kernel="matern52", amplitude=1.3, length_scale=[0.3, 0.5, 0.7], noise=1e-2, optimize=False)
    exact = gaussian_process(X, y, **kw)
    gp = vecchia_gaussian_process(X, y, n_neighbors=149, **kw)
    assert gp.log_marginal_likelihood_value == pytest.approx(exact.log_marginal_likelihood_value, rel=1e-8)
    Q = rng.uniform(0, 1, (40, 3))
    m1, s1 = exact.predict(Q, return_std=True)
    m2, s2 = gp.predict(Q, return_std=True, n_neighbors=150)
    np.testing.assert_allclose(m2, m1, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(s2, s1, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("kernel", ["matern32", "gaussian"])
def test_prediction_equals_the_numpy_oracle(rng, kernel):
    X, y = _data(rng, n=900)
    gp = vecchia_gaussian_process(X, y, n_neighbors=7, kernel=kernel, amplitude=0.9, length_scale=[0.2, 0.4],
                                  noise=1e-2, optimize=False, normalize_y=True)
    Q = np.concatenate([rng.uniform(-0.1, 1.1, (50, 2)), X[:5]])
    mean, std = gp.predict(Q, return_std=True)
    mu, var = reference.vecchia_predict(X, gp.y_train, Q, 7, kernel=kernel, amplitude=0.9, length_scale=[0.2, 0.4],
                                        noise=1e-2)
    np.testing.assert_allclose(mean, mu * gp.y_std + gp.y_mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(std, np.sqrt(var) * gp.y_std, rtol=1e-8)
    m12 = gp.predict(Q, n_neighbors=12)
    mu12, _ = reference.vecchia_predict(X, gp.y_train, Q, 12, kernel=kernel, amplitude=0.9, length_scale=[0.2, 0.4],
                                        noise=1e-2)
    np.testing.assert_allclose(m12, mu12 * gp.y_std + gp.y_mean, rtol=1e-10, atol=1e-12)


def test_the_fit_reaches_the_exact_gps_optimum(rng):
    X, y = _data(rng, n=60)
    exact = gaussian_process(X, y, kernel="matern52", ard=True, length_scale=0.5, noise=0.1)
    gp = vecchia_gaussian_process(X, y, n_neighbors=59, kernel="matern52", ard=True, length_scale=0.5, noise=0.1)
    np.testing.assert_allclose(gp.theta, exact.theta, atol=1e-4)
    assert gp.log_marginal_likelihood_value == pytest.approx(exact.log_marginal_likelihood_value, rel=1e-8)
    assert gp.length_scale.shape == (2,) and gp.restarts[0]["converged"]


def test_ard_chooses_the_neighbours_again_at_the_optimum(rng):
    X = rng.uniform(0, 1, (800, 2))
    y = np.sin(12 * X[:, 0]) + 0.05 * rng.standard_normal(800)  # the second feature does not matter
    gp = vecchia_gaussian_process(X, y, n_neighbors=10, kernel="matern32", ard=True, length_scale=0.3, noise=0.01,
                                  ordering="random", seed=0)
    assert len(gp.restarts) >= 2  # the neighbours at the first optimum differ from those at the start
    assert gp.length_scale[1] > 3 * gp.length_scale[0]
    Xo = np.ascontiguousarray((X / gp.length_scale)[gp.order])
    nbr, _ = _vecchia.conditioning_sets(Xo, 10, 1)
    np.testing.assert_array_equal(gp.neighbors, nbr)  # the sets of the fitted length scales
    got = vecchia_gaussian_process_lml(X, y, n_neighbors=10, kernel="matern32", amplitude=gp.amplitude,
                                       length_scale=gp.length_scale, noise=gp.noise, ordering=gp.order)
    assert got == gp.log_marginal_likelihood_value


def test_the_models_likelihood_on_its_own_sets(rng):
    X, y = _data(rng, n=700)
    gp = vecchia_gaussian_process(X, y, n_neighbors=8, kernel="matern32", ard=True, length_scale=[0.3, 0.6],
                                  noise=0.01, normalize_y=True, optimize=False)
    assert gp.log_marginal_likelihood() == gp.log_marginal_likelihood_value
    theta = gp.theta + np.array([0.1, -0.2, 0.1, 0.3])
    lml, grad = gp.log_marginal_likelihood(theta, eval_gradient=True)
    # on the model's sets, whatever theta: its gradient is that of a smooth function
    h = 1e-5
    fd = [(gp.log_marginal_likelihood(theta + h * e) - gp.log_marginal_likelihood(theta - h * e)) / (2 * h)
          for e in np.eye(4)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6 * np.abs(grad).max())
    assert lml == gp.log_marginal_likelihood(theta)
    want = reference.vecchia_log_likelihood(X, gp.y_train, gp.order, 8, kernel="matern32", amplitude=gp.amplitude,
                                            length_scale=gp.length_scale, noise=gp.noise)
    assert gp.log_marginal_likelihood() == pytest.approx(want, rel=1e-10)
    with pytest.raises(ValueError, match="theta"):
        gp.log_marginal_likelihood([0.0, 1.0])


def test_same_bits_for_any_thread_count_and_progress(rng):
    X, y = _data(rng, n=3000, d=3)
    one = vecchia_gaussian_process_lml(X, y, n_neighbors=12, length_scale=0.3, noise=1e-2, eval_gradient=True,
                                       n_threads=1)
    two = vecchia_gaussian_process_lml(X, y, n_neighbors=12, length_scale=0.3, noise=1e-2, eval_gradient=True,
                                       n_threads=2)
    assert one[0] == two[0]
    np.testing.assert_array_equal(one[1], two[1])
    infos = []
    gp = vecchia_gaussian_process(X, y, n_neighbors=12, length_scale=0.3, noise=1e-2, progress=infos.append,
                                  n_threads=2)
    assert {i["stage"] for i in infos} == {"neighbours", "l-bfgs-b"}
    assert infos[-1]["final"] and infos[-1]["metrics"]["lml"] == pytest.approx(gp.log_marginal_likelihood_value)
    Q = rng.uniform(0, 1, (700, 3))
    a = gp.predict(Q, return_std=True, n_threads=1)
    b = gp.predict(Q, return_std=True, n_threads=2)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_float32_in_float32_out_and_inputs_untouched(rng):
    X, y = _data(rng, n=400)
    X32, y32 = X.astype(np.float32), y.astype(np.float32)
    X0, y0 = X32.copy(), y32.copy()
    gp = vecchia_gaussian_process(X32, y32, n_neighbors=10, length_scale=0.3, noise=1e-2, optimize=False)
    assert gp.dtype == np.float32 and gp.X_train.dtype == np.float64
    np.testing.assert_array_equal(X32, X0)
    np.testing.assert_array_equal(y32, y0)
    mean, std = gp.predict(X32[:20], return_std=True)
    assert mean.dtype == np.float32 and std.dtype == np.float32
    gp64 = vecchia_gaussian_process(X, y, n_neighbors=10, length_scale=0.3, noise=1e-2, optimize=False)
    m64, s64 = gp64.predict(X[:20], return_std=True)
    assert m64.dtype == np.float64
    np.testing.assert_allclose(mean, m64, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(std, s64, rtol=1e-5, atol=1e-5)
    Xc = X.copy()
    gp = vecchia_gaussian_process(Xc, y, n_neighbors=5, optimize=False)
    Xc[:] = 0
    assert not np.shares_memory(gp.X_train, Xc) and gp.X_train[0, 0] == X[0, 0]


def test_pickles(rng):
    import pickle

    X, y = _data(rng, n=100)
    gp = vecchia_gaussian_process(X, y, n_neighbors=5, optimize=False)
    back = pickle.loads(pickle.dumps(gp))
    np.testing.assert_array_equal(back.predict(X[:7]), gp.predict(X[:7]))


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_neighbors=0), "n_neighbors"),
    (dict(ordering="hilbert"), "ordering"),
    (dict(ordering=np.arange(9)), "ordering"),
    (dict(ordering=np.zeros(10, dtype=int)), "ordering"),
    (dict(noise=-1.0), "noise"),
    (dict(amplitude=0.0), "amplitude"),
    (dict(length_scale=[1.0, 2.0, 3.0]), "length_scale"),
    (dict(kernel="thin_plate_spline"), "kernel"),
])
def test_errors_name_the_argument(rng, kwargs, match):
    X, y = _data(rng, n=10)
    with pytest.raises(ValueError, match=match):
        vecchia_gaussian_process(X, y, **kwargs)


def test_errors_of_the_data(rng):
    X, y = _data(rng, n=10)
    with pytest.raises(ValueError, match="`y`"):
        vecchia_gaussian_process(X, np.c_[y, y])
    with pytest.raises(ValueError, match="`X`"):
        vecchia_gaussian_process(X[:1], y[:1])
    gp = vecchia_gaussian_process(X, y, n_neighbors=3, optimize=False)
    with pytest.raises(ValueError, match="`X`"):
        gp.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="n_neighbors"):
        gp.predict(X, n_neighbors=0)


def test_the_scikit_learn_estimator_is_the_function(rng):
    from fastrbf.sklearn import VecchiaGaussianProcessRegressor

    X, y = _data(rng, n=300)
    est = VecchiaGaussianProcessRegressor(n_neighbors=6, kernel="matern32", ard=True, length_scale=0.3, noise=0.01,
                                          normalize_y=True, random_state=0).fit(X, y)
    gp = vecchia_gaussian_process(X, y, n_neighbors=6, kernel="matern32", ard=True, length_scale=0.3, noise=0.01,
                                  normalize_y=True, seed=0)
    np.testing.assert_array_equal(est.theta_, gp.theta)
    Q = rng.uniform(0, 1, (20, 2))
    for a, b in zip(est.predict(Q, return_std=True), gp.predict(Q, return_std=True), strict=True):
        np.testing.assert_array_equal(a, b)
    assert est.log_marginal_likelihood() == gp.log_marginal_likelihood_value
    with pytest.raises(ValueError, match="n_restarts_optimizer"):
        VecchiaGaussianProcessRegressor(n_restarts_optimizer=-1).fit(X, y)


@pytest.mark.parametrize("ard", [False, True])
def test_dask_blocks_of_the_ordering_give_the_in_memory_model(rng, ard):
    import dask
    import dask.array as da

    from fastrbf import dask as fd
    from fastrbf.dask.vecchia import blocks_of

    X, y = _data(rng, n=1500)
    kw = dict(n_neighbors=8, kernel="matern32", ard=ard, length_scale=0.3, noise=0.01, normalize_y=True,
              ordering="random", seed=2)
    ref = vecchia_gaussian_process(X, y, **kw)
    with dask.config.set(scheduler="threads"):
        gp = fd.vecchia_gaussian_process(da.from_array(X, chunks=(400, 2)), da.from_array(y, chunks=400),
                                         block_size=300, n_threads=1, **kw)  # blocks of 512 positions
    np.testing.assert_array_equal(gp.order, ref.order)
    np.testing.assert_array_equal(gp.neighbors, ref.neighbors)
    np.testing.assert_allclose(gp.theta, ref.theta, rtol=1e-6, atol=1e-6)
    assert gp.log_marginal_likelihood_value == pytest.approx(ref.log_marginal_likelihood_value, rel=1e-9)
    # a block's rows hold its own points, then its neighbours': the same terms as the whole ordering's
    Xo, yo = X[ref.order], ref.y_train[ref.order]
    count = np.minimum(np.arange(1500), 8)
    parts = blocks_of(ref.order, ref.neighbors, count, X, yo, 512)
    assert len(parts) == 3 and all(np.array_equal(p[0][: p[2].shape[0]], Xo[i * 512 : (i + 1) * 512])
                                   for i, p in enumerate(parts))
    for i, (rows, yy, nbr, cnt) in enumerate(parts):
        for t in (0, 100, nbr.shape[0] - 1):
            s = i * 512 + t
            np.testing.assert_array_equal(rows[nbr[t, : cnt[t]]], Xo[ref.neighbors[s, : cnt[t]]])
            np.testing.assert_array_equal(yy[nbr[t, : cnt[t]]], yo[ref.neighbors[s, : cnt[t]]])
    with pytest.raises(ValueError, match="block_size"):
        fd.vecchia_gaussian_process(X, y, block_size=0)
