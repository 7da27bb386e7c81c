"""gaussian_process(kernel="prml"): the lectures' covariance on the one GP, equal to the
deprecated gp_regression (likelihood, restarts, predictions) and to the plain-NumPy
reference; the table of restarts and progress on every kernel; the deprecation warnings."""

import re
import warnings

import numpy as np
import pytest
from helpers import central_diff

import fastrbf
from fastrbf import reference

#: gp_regression's default bounds, (1e-5, 1e5) on every t, in the GP's terms (length_scale = 1 / sqrt(t1))
T_BOUNDS = [(1e-5, 1e5), (1 / np.sqrt(1e5), 1 / np.sqrt(1e-5)), (1e-5, 1e5), (1e-5, 1e5), (1e-5, 1e5)]


def _data(seed=0, n=60, d=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    return X, np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.standard_normal(n)


def _theta_t(gp):
    """The PRML ``t`` of a fitted GaussianProcess."""
    return np.array([gp.amplitude, 1 / gp.length_scale[0] ** 2, gp.constant, gp.linear])


def _old(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)  # an optimum on a bound
        return fastrbf.gp_regression(X, y, **kw)


def _new(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fastrbf.gaussian_process(X, y, kernel="prml", **kw)


@pytest.mark.parametrize("normalize_y", [False, True])
def test_prml_equals_gp_regression(normalize_y):
    X, y = _data()
    t0, noise = [1.0, 4.0, 0.5, 0.5], 0.1
    old = _old(X, y, theta0=t0, noise=noise, n_restarts=3, seed=1, normalize_y=normalize_y)
    new = _new(X, y, amplitude=t0[0], length_scale=1 / np.sqrt(t0[1]), constant=t0[2], linear=t0[3], noise=noise,
               n_restarts=3, seed=1, normalize_y=normalize_y, bounds=T_BOUNDS)
    assert abs(new.log_marginal_likelihood_value - old.log_marginal_likelihood) <= 1e-10 * abs(old.log_marginal_likelihood)
    assert len(new.restarts) == len(old.restarts) == 4
    for rn, ro in zip(new.restarts, old.restarts, strict=True):
        assert abs(rn["lml"] - ro["lml"]) <= 1e-10 * max(1.0, abs(ro["lml"]))
        assert rn["n_iter"] == ro["n_iter"] and rn["converged"] == ro["converged"]
        np.testing.assert_allclose(np.exp(rn["theta"]), np.r_[ro["theta"][0], 1 / np.sqrt(ro["theta"][1]),
                                                              ro["theta"][2:], ro["noise"]], rtol=1e-10)
    np.testing.assert_allclose(_theta_t(new), old.theta, rtol=1e-10)
    assert new.noise == pytest.approx(old.noise, rel=1e-10)
    np.testing.assert_allclose(new.theta, np.log(np.r_[new.amplitude, new.length_scale, new.constant, new.linear,
                                                       new.noise]), rtol=0, atol=1e-14)
    Q = np.random.default_rng(5).random((9, 3))
    p = old.predict(Q, return_var=True, return_grad=True)
    mean, std, grad, _, _ = new.predict(Q, return_std=True, return_grad=True)
    scale = np.abs(p.mean).max()
    np.testing.assert_allclose(mean, p.mean, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(std, np.sqrt(p.var), rtol=1e-8)
    np.testing.assert_allclose(grad, p.grad, rtol=0, atol=1e-9 * np.abs(p.grad).max())
    np.testing.assert_allclose(new.predict(Q), old.predict(Q), rtol=0, atol=1e-10 * scale)


def test_prml_against_reference():
    X, y = _data(2, n=40)
    t, noise = np.array([1.3, 3.0, 0.4, 0.2]), 0.03
    gp = _new(X, y, amplitude=t[0], length_scale=1 / np.sqrt(t[1]), constant=t[2], linear=t[3], noise=noise,
              optimize=False)
    Q = np.random.default_rng(3).random((7, 3))
    m_ref, v_ref = reference.gp_predict(X, y, Q, t, noise=noise)
    mean, cov = gp.predict(Q, return_cov=True)
    np.testing.assert_allclose(mean, m_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.diag(cov), v_ref, rtol=1e-8, atol=1e-12)
    full = reference.prml_kernel(Q, Q, t) + noise * np.eye(7) - reference.prml_kernel(X, Q, t).T @ np.linalg.solve(
        reference.prml_kernel(X, X, t) + noise * np.eye(40), reference.prml_kernel(X, Q, t))
    np.testing.assert_allclose(cov, full, rtol=1e-8, atol=1e-12)
    _, std = gp.predict(Q, return_std=True)
    np.testing.assert_allclose(std, np.sqrt(v_ref), rtol=1e-8)
    _, grad = gp.predict(Q, return_grad=True)
    np.testing.assert_allclose(grad, central_diff(lambda Z: gp.predict(Z), Q, 1e-5), rtol=1e-5, atol=1e-7)
    draws = gp.sample_y(Q, 4000, seed=0)
    assert draws.shape == (7, 4000)
    np.testing.assert_allclose(draws.mean(axis=1), mean, atol=5 * np.sqrt(v_ref.max() / 4000))


def test_prml_lml_and_gradient_in_gp_terms():
    X, y = _data(4, n=30)
    t, noise = np.array([1.1, 2.5, 0.3, 0.2]), 0.05
    ls = 1 / np.sqrt(t[1])
    lml, grad = fastrbf.gaussian_process_lml(X, y, kernel="prml", amplitude=t[0], length_scale=ls, constant=t[2],
                                             linear=t[3], noise=noise, eval_gradient=True)
    ref_lml, ref_grad = reference.gp_log_marginal_likelihood(X, y, t, noise=noise)
    assert lml == pytest.approx(ref_lml, rel=1e-10)
    # d/dlog length_scale = -2 d/dlog t1
    np.testing.assert_allclose(grad, ref_grad * [1, -2, 1, 1, 1], rtol=1e-8, atol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = fastrbf.gp_log_marginal_likelihood(X, y, t, noise=noise, grad=False)
    assert lml == pytest.approx(old, rel=1e-12)


def test_prml_float32_kept():
    X, y = _data(6, n=30)
    gp = _new(X.astype(np.float32), y.astype(np.float32), noise=0.05, optimize=False)
    Q = X[:4].astype(np.float32)
    assert gp.predict(Q).dtype == np.float32
    assert all(a.dtype == np.float32 for a in gp.predict(Q, return_std=True, return_grad=True))
    assert gp.predict(Q.astype(np.float64)).dtype == np.float64


def test_prml_owns_its_data():
    X, y = _data(7, n=25)
    gp = _new(X, y, noise=0.05, optimize=False)
    before = gp.predict(X[:3])
    X[:] = 0.0
    np.testing.assert_array_equal(gp.predict(_data(7, n=25)[0][:3]), before)


@pytest.mark.parametrize("kw, match", [
    (dict(ard=True), "one length scale"),
    (dict(length_scale=[1.0, 1.0, 1.0]), "one length scale"),
    (dict(noise=None), "noise"),
    (dict(jitter=1e-6), "jitter"),
    (dict(linear=-1.0), "linear"),
    (dict(constant=0.0), "constant"),
    (dict(bounds=[(1e-3, 1e3)] * 4), "bounds"),
])
def test_prml_bad_arguments_named(kw, match):
    X, y = _data(8, n=20)
    with pytest.raises(ValueError, match=match):
        fastrbf.gaussian_process(X, y, kernel="prml", **{"noise": 0.1, **kw})


def test_prml_one_output_and_linear_only_with_prml():
    X, y = _data(9, n=20)
    with pytest.raises(ValueError, match="`y`"):
        fastrbf.gaussian_process(X, np.c_[y, y], kernel="prml", noise=0.1)
    with pytest.raises(ValueError, match="`linear`"):
        fastrbf.gaussian_process(X, y, kernel="gaussian", linear=1.0)
    with pytest.raises(ValueError, match="`linear`"):
        fastrbf.gaussian_process_lml(X, y, kernel="matern52", linear=1.0)


def test_prml_bound_warning_names_the_parameter():
    X, y = _data(10, n=30)
    with pytest.warns(UserWarning, match=re.escape("sits on a bound for ['length_scale'")):
        fastrbf.gaussian_process(X, y, kernel="prml", noise=0.1, length_scale=5.0,
                                 bounds=[(1e-3, 1e3), (4.0, 6.0), (1e-3, 1e3), (1e-3, 1e3), (1e-3, 1e3)])


@pytest.mark.parametrize("kernel", ["matern52", "prml"])
def test_restarts_table_and_progress(kernel):
    X, y = _data(11, n=40)
    reports = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        gp = fastrbf.gaussian_process(X, y, kernel=kernel, noise=0.05, n_restarts=2, seed=0, progress=reports.append)
    assert len(gp.restarts) == 3
    best = max(r["lml"] for r in gp.restarts)
    assert best == pytest.approx(gp.log_marginal_likelihood_value, rel=1e-9)
    assert all(r["theta"].shape == gp.theta.shape and r["start"].shape == gp.theta.shape for r in gp.restarts)
    ends = [r for r in reports if r["final"]]
    assert [r["iter"] for r in ends] == [r["n_iter"] for r in gp.restarts]
    assert ends[-1]["message"].startswith("gaussian_process start 3/3")
    no_opt = fastrbf.gaussian_process(X, y, kernel=kernel, noise=0.05, optimize=False)
    assert no_opt.restarts == ()


def test_bounds_one_pair_per_hyperparameter():
    X, y = _data(12, n=30)
    b = [(1e-2, 1e2), (0.2, 0.3), (1e-4, 1.0)]
    gp = fastrbf.gaussian_process(X, y, kernel="matern52", noise=0.05, bounds=b)
    assert 0.2 - 1e-12 <= gp.length_scale[0] <= 0.3 + 1e-12
    with pytest.raises(ValueError, match="`bounds`"):
        fastrbf.gaussian_process(X, y, kernel="matern52", noise=0.05, bounds=b[:2])


@pytest.mark.parametrize("call, name", [
    (lambda X, y: fastrbf.gp_regression(X, y, optimize=False), "gp_regression"),
    (lambda X, y: fastrbf.gp_log_marginal_likelihood(X, y, [1.0, 1.0, 1.0, 1.0], noise=0.1), "gp_log_marginal_likelihood"),
    (lambda X, y: fastrbf.GPModel, "GPModel"),
    (lambda X, y: fastrbf.gp.GPPrediction, "GPPrediction"),
])
def test_deprecated_names_warn_naming_the_replacement(call, name):
    X, y = _data(13, n=20)
    with pytest.warns(FutureWarning, match=rf"fastrbf\.{name} is deprecated .*gaussian_process"):
        call(X, y)


def test_deprecated_classes_not_in_all():
    assert "GPModel" not in fastrbf.__all__ and "GPPrediction" not in fastrbf.__all__
    with pytest.raises(AttributeError, match="no attribute 'GPModelX'"):
        fastrbf.GPModelX  # noqa: B018
