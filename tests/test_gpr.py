"""gaussian_process: registry kernels with an amplitude, per-feature length scales and
noise, equal to scikit-learn's GaussianProcessRegressor with ConstantKernel * K +
WhiteKernel (log marginal likelihood, its gradient, mean, std, covariance, the fit)."""

import numpy as np
import pytest
import user_kernel_defs as defs
from helpers import central_diff
from sklearn.gaussian_process import GaussianProcessRegressor as GPR
from sklearn.gaussian_process.kernels import RBF, Matern, RationalQuadratic, WhiteKernel
from sklearn.gaussian_process.kernels import ConstantKernel as Const

import fastrbf


def _data(rng, n=50, d=3, k=1):
    X = rng.uniform(0, 1, (n, d))
    Y = np.column_stack([np.sin(5 * X[:, 0] + j) + 0.3 * X[:, 1] for j in range(k)]) + 0.05 * rng.standard_normal((n, k))
    return X, (Y[:, 0] if k == 1 else Y)


def _sk_kernel(kernel, amp, ls, noise, coef0=1.0):
    base = {"gaussian": lambda: RBF(length_scale=ls), "matern12": lambda: Matern(length_scale=ls, nu=0.5),
            "matern32": lambda: Matern(length_scale=ls, nu=1.5), "matern52": lambda: Matern(length_scale=ls, nu=2.5),
            "rational_quadratic": lambda: RationalQuadratic(length_scale=float(np.ravel(ls)[0]), alpha=coef0)}[kernel]()
    return Const(amp) * base + WhiteKernel(noise)


CASES = [("gaussian", [0.4, 1.3, 2.0]), ("matern12", 0.7), ("matern32", [0.5, 0.9, 3.0]), ("matern52", [0.4, 1.3, 2.0]),
         ("matern52", 0.6), ("rational_quadratic", 0.8)]


@pytest.mark.parametrize("kernel, ls", CASES)
def test_lml_and_gradient_equal_sklearn(rng, kernel, ls):
    X, y = _data(rng)
    sk = GPR(_sk_kernel(kernel, 1.7, ls, 0.01, 2.5), optimizer=None, alpha=0.0).fit(X, y)
    lml, grad = sk.log_marginal_likelihood(sk.kernel_.theta, eval_gradient=True)
    if kernel == "rational_quadratic":  # scikit-learn also differentiates in its alpha (theta[1]; fixed here)
        grad = np.delete(grad, 1)
    mine, mg = fastrbf.gaussian_process_lml(X, y, kernel=kernel, amplitude=1.7, length_scale=ls, noise=0.01,
                                            coef0=2.5, eval_gradient=True)
    np.testing.assert_allclose(mine, lml, rtol=1e-8)
    np.testing.assert_allclose(mg, grad, rtol=1e-7, atol=1e-8 * np.abs(grad).max())


@pytest.mark.parametrize("kernel, ls", CASES)
def test_prediction_equals_sklearn_at_fixed_hyperparameters(rng, kernel, ls):
    X, y = _data(rng)
    Xq = rng.uniform(0, 1, (30, 3))
    sk = GPR(_sk_kernel(kernel, 1.7, ls, 0.01, 2.5), optimizer=None, alpha=0.0).fit(X, y)
    gp = fastrbf.gaussian_process(X, y, kernel=kernel, amplitude=1.7, length_scale=ls, noise=0.01, coef0=2.5,
                                  optimize=False)
    m_sk, s_sk = sk.predict(Xq, return_std=True)
    m, s = gp.predict(Xq, return_std=True)
    np.testing.assert_allclose(m, m_sk, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(s, s_sk, rtol=1e-8)
    _, c_sk = sk.predict(Xq[:7], return_cov=True)
    _, c = gp.predict(Xq[:7], return_cov=True)
    np.testing.assert_allclose(c, c_sk, rtol=1e-7, atol=1e-10)
    assert gp.log_marginal_likelihood_value == pytest.approx(sk.log_marginal_likelihood_value_, rel=1e-8)


def test_fit_reaches_sklearn_optimum(rng):
    X, y = _data(rng, n=60)
    sk = GPR(Const(1.0) * Matern(length_scale=[1.0, 1.0, 1.0], nu=2.5) + WhiteKernel(0.1), random_state=0,
             alpha=0.0).fit(X, y)
    gp = fastrbf.gaussian_process(X, y, kernel="matern52", ard=True, noise=0.1)
    assert gp.log_marginal_likelihood_value == pytest.approx(sk.log_marginal_likelihood_value_, rel=1e-6)
    Xq = rng.uniform(0, 1, (20, 3))
    np.testing.assert_allclose(gp.predict(Xq), sk.predict(Xq), rtol=1e-4, atol=1e-4)


def test_restarts_never_do_worse_and_are_seeded(rng):
    X, y = _data(rng, n=40)
    one = fastrbf.gaussian_process(X, y, kernel="gaussian", noise=1e-2)
    more = fastrbf.gaussian_process(X, y, kernel="gaussian", noise=1e-2, n_restarts=3, seed=1)
    again = fastrbf.gaussian_process(X, y, kernel="gaussian", noise=1e-2, n_restarts=3, seed=1)
    assert more.log_marginal_likelihood_value >= one.log_marginal_likelihood_value - 1e-9
    assert np.array_equal(more.theta, again.theta)


def test_multi_output_normalize_y_and_mean_gradient(rng):
    X, Y = _data(rng, n=40, k=2)
    Y = Y * 30 + 100
    gp = fastrbf.gaussian_process(X, Y, kernel="matern52", length_scale=[0.5, 1.0, 2.0], noise=1e-2, normalize_y=True,
                                  optimize=False)
    sk = GPR(_sk_kernel("matern52", 1.0, [0.5, 1.0, 2.0], 1e-2), optimizer=None, normalize_y=True, alpha=0.0).fit(X, Y)
    Xq = rng.uniform(0, 1, (9, 3))
    m, s = gp.predict(Xq, return_std=True)
    m_sk, s_sk = sk.predict(Xq, return_std=True)
    np.testing.assert_allclose(m, m_sk, rtol=1e-8)
    np.testing.assert_allclose(s, s_sk, rtol=1e-8)
    mean, grad = gp.predict(Xq, return_grad=True)
    fd = central_diff(gp.predict, Xq, 1e-5)
    for a in range(3):
        np.testing.assert_allclose(grad[:, :, a], fd[:, :, a], rtol=1e-5, atol=1e-5 * np.abs(fd[:, :, a]).max())


def test_user_kernel_gp_equals_builtin(rng):
    X, y = _data(rng)
    a = fastrbf.gaussian_process_lml(X, y, kernel=defs.matern52_user, length_scale=[0.4, 1.3, 2.0], noise=0.01,
                                     eval_gradient=True)
    b = fastrbf.gaussian_process_lml(X, y, kernel="matern52", length_scale=[0.4, 1.3, 2.0], noise=0.01,
                                     eval_gradient=True)
    assert a[0] == pytest.approx(b[0], rel=1e-12)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5)  # the user kernel's derivative is a central difference


def test_float32_predictions(rng):
    X, y = _data(rng)
    gp = fastrbf.gaussian_process(X.astype(np.float32), y.astype(np.float32), kernel="matern32", optimize=False)
    assert gp.predict(X[:3].astype(np.float32)).dtype == np.float32
    assert gp.predict(X[:3]).dtype == np.float64


def test_bad_arguments_are_named(rng):
    X, y = _data(rng, n=10)
    with pytest.raises(ValueError, match="`kernel` must be positive definite without a polynomial tail"):
        fastrbf.gaussian_process(X, y, kernel="thin_plate_spline")
    with pytest.raises(ValueError, match="`kernel` must be a radial kernel"):
        fastrbf.gaussian_process(X, y, kernel="polynomial")
    with pytest.raises(ValueError, match="needs a positive definite kernel; the user kernel 'sine_user'"):
        fastrbf.gaussian_process(X, y, kernel=defs.sine_user)
    with pytest.raises(ValueError, match=r"`length_scale` must be a number or a 1-D array with one value per feature"):
        fastrbf.gaussian_process(X, y, length_scale=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"`noise` must be a finite number > 0"):
        fastrbf.gaussian_process(X, y, noise=0.0)
    with pytest.raises(ValueError, match=r"`bounds` must satisfy 0 < low < high < inf"):
        fastrbf.gaussian_process(X, y, bounds=(1.0, 0.5))
    with pytest.raises(ValueError, match="At most one of `return_std` and `return_cov`"):
        fastrbf.gaussian_process(X, y, optimize=False).predict(X, return_std=True, return_cov=True)


def test_sample_y_has_the_posterior_mean_and_covariance(rng):
    X, y = _data(rng, n=30)
    gp = fastrbf.gaussian_process(X, y, kernel="matern32", length_scale=0.5, noise=1e-2, optimize=False)
    Xq = rng.uniform(0, 1, (4, 3))
    mean, cov = gp.predict(Xq, return_cov=True)
    S = gp.sample_y(Xq, 40000, seed=3)
    assert S.shape == (4, 40000)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(S.mean(axis=1) - mean) < 5 * sd / np.sqrt(40000))  # 5 standard errors
    np.testing.assert_allclose(np.cov(S), cov, atol=5 * np.sqrt(2.0 / 40000) * sd.max() ** 2)
    assert np.array_equal(S, gp.sample_y(Xq, 40000, seed=3))


def test_results_do_not_depend_on_the_thread_count(rng):
    X, y = _data(rng, n=120)
    kw = dict(kernel="matern52", length_scale=[0.4, 1.3, 2.0], noise=0.01, eval_gradient=True)
    with fastrbf.threads(1):
        one = fastrbf.gaussian_process_lml(X, y, **kw)
    two = fastrbf.gaussian_process_lml(X, y, n_threads=2, **kw)
    assert one[0] == two[0] and np.array_equal(one[1], two[1])
    gp1 = fastrbf.gaussian_process(X, y, kernel="gaussian", ard=True, noise=0.1, n_threads=1)
    gp2 = fastrbf.gaussian_process(X, y, kernel="gaussian", ard=True, noise=0.1, n_threads=2)
    assert np.array_equal(gp1.theta, gp2.theta)
    Xq = rng.uniform(0, 1, (10, 3))
    for a, b in zip(gp1.predict(Xq, return_std=True, n_threads=1), gp2.predict(Xq, return_std=True, n_threads=2),
                    strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("kernel, ls", [("gaussian", 0.7), ("matern52", [0.4, 1.3, 2.0])])
def test_constant_term_equals_sklearn(rng, kernel, ls):
    # C * K + C + WhiteKernel: lml, gradient (theta ordered as scikit-learn's), mean, std, cov, gradient of the mean
    X, y = _data(rng)
    y = y + 3.0  # an offset the constant term explains
    base = _sk_kernel(kernel, 1.7, ls, 0.01)
    sk = GPR(base.k1 + Const(0.8) + base.k2, optimizer=None, alpha=0.0).fit(X, y)
    lml, grad = sk.log_marginal_likelihood(sk.kernel_.theta, eval_gradient=True)
    mine, mg = fastrbf.gaussian_process_lml(X, y, kernel=kernel, amplitude=1.7, length_scale=ls, noise=0.01,
                                            constant=0.8, eval_gradient=True)
    np.testing.assert_allclose(mine, lml, rtol=1e-8)
    np.testing.assert_allclose(mg, grad, rtol=1e-7, atol=1e-8 * np.abs(grad).max())
    gp = fastrbf.gaussian_process(X, y, kernel=kernel, amplitude=1.7, length_scale=ls, noise=0.01, constant=0.8,
                                  optimize=False)
    assert gp.constant == pytest.approx(0.8, rel=1e-14)
    Xq = rng.uniform(0, 1, (25, 3))
    m_sk, s_sk = sk.predict(Xq, return_std=True)
    m, s = gp.predict(Xq, return_std=True)
    np.testing.assert_allclose(m, m_sk, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(s, s_sk, rtol=1e-8)
    np.testing.assert_allclose(gp.predict(Xq[:6], return_cov=True)[1], sk.predict(Xq[:6], return_cov=True)[1],
                               rtol=1e-7, atol=1e-10)
    _, g = gp.predict(Xq, return_grad=True)
    fd = central_diff(gp.predict, Xq, 1e-5)
    for a in range(3):
        np.testing.assert_allclose(g[:, a], fd[:, a], rtol=1e-5, atol=1e-5 * np.abs(fd[:, a]).max())


def test_constant_term_is_learned_as_sklearn(rng):
    X, y = _data(rng, n=60)
    y = y + 2.0
    sk = GPR(Const(1.0) * RBF(length_scale=1.0) + Const(1.0) + WhiteKernel(0.1), random_state=0, alpha=0.0).fit(X, y)
    gp = fastrbf.gaussian_process(X, y, kernel="gaussian", noise=0.1, constant=1.0)
    assert gp.log_marginal_likelihood_value == pytest.approx(sk.log_marginal_likelihood_value_, rel=1e-6)
    assert gp.theta.size == sk.kernel_.theta.size == 4
    with pytest.raises(ValueError, match=r"`constant` must be a finite number > 0"):
        fastrbf.gaussian_process(X, y, constant=0.0)


def test_sample_y_refuses_draws_that_cannot_fit_before_drawing():
    X = np.linspace(0, 1, 12)[:, None]
    gp = fastrbf.gaussian_process(X, np.sin(4 * X[:, 0]), kernel="matern52", noise=1e-4, optimize=False)
    with pytest.raises(MemoryError, match="sample_y: 1000000000000 draws at 2 points.*fewer `n_samples`"):
        gp.sample_y([[0.5], [0.2]], 10**12)
    assert gp.sample_y([[0.5], [0.2]], 3, seed=0).shape == (2, 3)
