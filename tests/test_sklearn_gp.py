"""fastrbf.sklearn.GaussianProcessRegressor given scikit-learn kernel objects: the fit,
the log marginal likelihood and its gradient, the predictions and the draws equal
scikit-learn's GaussianProcessRegressor on the same kernel."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor as SkGPR
from sklearn.gaussian_process.kernels import RBF, DotProduct, Matern, RationalQuadratic, WhiteKernel
from sklearn.gaussian_process.kernels import ConstantKernel as C

from fastrbf.gp._sklearn_kernels import gp_form
from fastrbf.sklearn import GaussianProcessRegressor as GPR
from fastrbf.sklearn._gp_generic import KernelObjectGP

# scikit-learn's own fits warn when an optimum sits on a bound; the comparisons stand
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _data(rng, n=50, d=3, k=1):
    X = rng.uniform(0, 1, (n, d))
    Y = np.column_stack([np.sin(5 * X[:, 0] + j) + 0.3 * X[:, 1] + 0.5 * np.cos(3 * X[:, 2]) + 2 for j in range(k)])
    Y = Y + 0.05 * rng.standard_normal((n, k))
    return X, (Y[:, 0] if k == 1 else Y)


KERNELS = {
    "C*RBF+C": lambda: C(1.5) * RBF(0.7) + C(0.8),
    "C*Matern52(ard)+White": lambda: C(1.0) * Matern([0.5, 1.0, 2.0], nu=2.5) + WhiteKernel(0.1),
    "C*Matern12+White": lambda: C(1.0) * Matern(0.6, nu=0.5) + WhiteKernel(0.05),
    "C*Matern32+C+White": lambda: C(2.0) * Matern([0.5, 1.0, 2.0], nu=1.5) + C(1.0) + WhiteKernel(0.1),
    "RQ(fixed alpha)*C+White": lambda: RationalQuadratic(0.8, alpha=2.5, alpha_bounds="fixed") * C(1.3)
    + WhiteKernel(0.02),
    "RBF alone": lambda: RBF([0.5, 0.8, 1.5]),
    "fixed amplitude": lambda: C(2.0, "fixed") * RBF(0.5) + WhiteKernel(0.1, "fixed"),
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_lml_gradient_and_predictions_at_fixed_hyperparameters(rng, name):
    X, y = _data(rng)
    sk = SkGPR(KERNELS[name](), optimizer=None).fit(X, y)
    me = GPR(KERNELS[name](), optimizer=None).fit(X, y)
    assert me.log_marginal_likelihood_value_ == pytest.approx(sk.log_marginal_likelihood_value_, rel=1e-8)
    theta = sk.kernel_.theta + 0.1  # another point of the same parameter space
    l_sk, g_sk = sk.log_marginal_likelihood(theta, eval_gradient=True)
    l_me, g_me = me.log_marginal_likelihood(theta, eval_gradient=True)
    assert l_me == pytest.approx(l_sk, rel=1e-8)
    np.testing.assert_allclose(g_me, g_sk, rtol=1e-7, atol=1e-8 * np.abs(g_sk).max())
    assert me.log_marginal_likelihood(theta) == pytest.approx(l_sk, rel=1e-8)
    Xq = rng.uniform(0, 1, (20, 3))
    np.testing.assert_allclose(me.predict(Xq), sk.predict(Xq), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(me.predict(Xq, return_std=True)[1], sk.predict(Xq, return_std=True)[1], rtol=1e-7,
                               atol=1e-10)
    np.testing.assert_allclose(me.predict(Xq[:6], return_cov=True)[1], sk.predict(Xq[:6], return_cov=True)[1],
                               rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(me.L_, sk.L_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(me.alpha_, sk.alpha_, rtol=1e-7, atol=1e-9 * np.abs(sk.alpha_).max())


@pytest.mark.parametrize("name", ["C*RBF+C", "C*Matern52(ard)+White", "C*Matern32+C+White", "RBF alone"])
def test_fit_reaches_sklearn_optimum_from_the_same_starts(rng, name):
    X, y = _data(rng, n=60)
    sk = SkGPR(KERNELS[name](), n_restarts_optimizer=2, random_state=0).fit(X, y)
    me = GPR(KERNELS[name](), n_restarts_optimizer=2, random_state=0).fit(X, y)
    assert me.log_marginal_likelihood_value_ == pytest.approx(sk.log_marginal_likelihood_value_, rel=1e-7)
    np.testing.assert_allclose(me.kernel_.theta, sk.kernel_.theta, rtol=1e-4, atol=1e-4)
    assert type(me.kernel_) is type(sk.kernel_)
    assert me.kernel.theta.tolist() == KERNELS[name]().theta.tolist()  # the given kernel is left as it was


def test_default_kernel_and_normalize_y_multi_output(rng):
    X, Y = _data(rng, n=40, k=2)
    Y = Y * 30 + 100
    sk = SkGPR(normalize_y=True, random_state=0).fit(X, Y)
    me = GPR(None, normalize_y=True, random_state=0).fit(X, Y)
    assert me.log_marginal_likelihood_value_ == pytest.approx(sk.log_marginal_likelihood_value_, rel=1e-7)
    Xq = rng.uniform(0, 1, (9, 3))
    m_sk, s_sk = sk.predict(Xq, return_std=True)
    m_me, s_me = me.predict(Xq, return_std=True)
    assert m_me.shape == m_sk.shape == (9, 2) and s_me.shape == s_sk.shape
    np.testing.assert_allclose(m_me, m_sk, rtol=1e-6)
    np.testing.assert_allclose(s_me, s_sk, rtol=1e-5)
    assert me.sample_y(Xq, 3).shape == sk.sample_y(Xq, 3).shape == (9, 2, 3)


def test_sample_y_has_the_posterior_mean_and_covariance(rng):
    X, y = _data(rng, n=30)
    me = GPR(C(1.0) * Matern(0.5, nu=1.5) + WhiteKernel(1e-2), optimizer=None).fit(X, y)
    Xq = rng.uniform(0, 1, (4, 3))
    mean, cov = me.predict(Xq, return_cov=True)
    S = me.sample_y(Xq, 40000, random_state=3)
    assert S.shape == (4, 40000)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(S.mean(axis=1) - mean) < 5 * sd / np.sqrt(40000))  # 5 standard errors
    np.testing.assert_allclose(np.cov(S), cov, atol=5 * np.sqrt(2.0 / 40000) * sd.max() ** 2)
    assert np.array_equal(S, me.sample_y(Xq, 40000, random_state=3))


def test_float32_in_float32_out(rng):
    X, y = _data(rng)
    me = GPR(C(1.0) * RBF(0.5) + WhiteKernel(0.1), optimizer=None).fit(X.astype(np.float32), y.astype(np.float32))
    mean, std = me.predict(X[:5].astype(np.float32), return_std=True)
    assert mean.dtype == std.dtype == np.float32


@pytest.mark.parametrize("kernel, match", [
    (DotProduct(), "is not covered"),
    (C() * Matern(nu=3.0), r"Matern\(nu=3.0\) is not covered"),
    (C() * RationalQuadratic(), "RationalQuadratic's alpha must be fixed"),
    (RBF() * RBF(), "the product .* is not covered"),
    (RBF() + WhiteKernel() + WhiteKernel(), "more than one noise term"),
    (C() + WhiteKernel(), "has no stationary term"),
])
def test_kernels_not_covered_are_named_and_fitted_by_the_kernel_object(rng, kernel, match):
    # outside the compiled GP's form (named by gp_form), the estimator computes the GP
    # from the kernel object: scikit-learn's fit
    with pytest.raises(ValueError, match=r"`kernel`.*" + match):
        gp_form(kernel)
    X, y = _data(rng, n=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        me, sk = GPR(kernel, alpha=1e-2).fit(X, y), SkGPR(kernel, alpha=1e-2).fit(X, y)
    assert isinstance(me.model_, KernelObjectGP)
    np.testing.assert_allclose(me.log_marginal_likelihood_value_, sk.log_marginal_likelihood_value_, rtol=1e-7)
    np.testing.assert_allclose(me.predict(X[:3]), sk.predict(X[:3]), rtol=1e-5, atol=1e-7)


def test_bad_arguments_name_themselves(rng):
    X, y = _data(rng, n=10)
    with pytest.raises(ValueError, match="`theta` is for kernel='gaussian' or 'prml'"):
        GPR(RBF(), theta=[1.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match=r"`alpha` must be a finite number >= 0"):
        GPR(RBF(), alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="`optimizer` must be"):
        GPR(RBF(), optimizer="adam").fit(X, y)
    prml = GPR("gaussian", optimizer=None, theta=[1.0, 10.0]).fit(X, y)
    with pytest.raises(ValueError, match="`return_cov` needs a model fitted with a scikit-learn kernel object"):
        prml.predict(X, return_cov=True)


def test_one_target_column_gives_scikit_learns_shapes(rng):
    # y of shape (n, 1): scikit-learn squeezes the single output of every result
    X, y = _data(rng, n=25)
    Y = y[:, None]
    Xq = rng.uniform(0, 1, (6, 3))
    kernel = C(1.0) * RBF(1.0) + WhiteKernel(1e-2)
    for k in (kernel, None):
        me = GPR(k, random_state=0).fit(X, Y)
        sk = SkGPR(k, random_state=0).fit(X, Y)
        assert me.predict(Xq).shape == sk.predict(Xq).shape == (6,)
        for kw in ({"return_std": True}, {"return_cov": True}):
            ours, theirs = me.predict(Xq, **kw), sk.predict(Xq, **kw)
            assert [a.shape for a in ours] == [b.shape for b in theirs]
        assert me.sample_y(Xq, 4).shape == sk.sample_y(Xq, 4).shape == (6, 4)
        # one query point: the mean stays 1-D, the covariance 2-D
        assert [a.shape for a in me.predict(Xq[:1], return_cov=True)] == [(1,), (1, 1)]


def test_kernel_object_optimum_on_a_bound_warns_as_scikit_learn(rng):
    from sklearn.exceptions import ConvergenceWarning

    X, y = _data(rng, n=25)
    kernel = C(1.0) * RBF(1.0, length_scale_bounds=(1e-2, 1e-1))
    with pytest.warns(ConvergenceWarning, match="k2__length_scale is close to the specified upper bound"):
        GPR(kernel, random_state=0).fit(X, y)


def test_a_length_scale_vector_of_the_wrong_length_is_named(rng):
    X, y = _data(rng, n=12)
    with pytest.raises(ValueError, match=r"Anisotropic kernel must have the same number of dimensions as data \(2!=3\)"
                                         r".*k2__length_scale has 2 entries and `X` has 3 features"):
        GPR(C(1.0) * RBF([1.0, 1.0])).fit(X, y)
    with pytest.raises(ValueError, match=r"Anisotropic kernel must have the same number of dimensions as data"):
        SkGPR(C(1.0) * RBF([1.0, 1.0])).fit(X, y)  # scikit-learn's words
    # one entry is one length scale for all features, in both
    ours, theirs = GPR(C(1.0) * RBF([0.7]), optimizer=None).fit(X, y), SkGPR(C(1.0) * RBF([0.7]), optimizer=None).fit(X, y)
    np.testing.assert_allclose(ours.predict(X[:4]), theirs.predict(X[:4]), rtol=1e-8)


@pytest.mark.parametrize("kernel", [None, C(2.0) * RBF(0.5) + WhiteKernel(0.1), C(1.0) * Matern(0.7, nu=2.5)])
def test_prior_before_fit_equals_scikit_learn(rng, kernel):
    Xq = rng.uniform(0, 1, (7, 3))
    me, sk = GPR(kernel), SkGPR(kernel)
    np.testing.assert_array_equal(me.predict(Xq), sk.predict(Xq))
    for kw in ({"return_std": True}, {"return_cov": True}):
        for a, b in zip(me.predict(Xq, **kw), sk.predict(Xq, **kw), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(me.sample_y(Xq, 5, random_state=3), sk.sample_y(Xq, 5, random_state=3),
                               rtol=1e-12, atol=1e-15)
    assert not hasattr(me, "model_")  # still unfitted


def test_callable_optimizer_as_scikit_learn(rng):
    import scipy.optimize

    def lbfgs(obj_func, initial_theta, bounds):
        r = scipy.optimize.minimize(obj_func, initial_theta, method="L-BFGS-B", jac=True, bounds=bounds)
        return r.x, r.fun

    X, y = _data(rng, n=25)
    kernel = C(1.0) * RBF(1.0) + WhiteKernel(1e-2)
    me = GPR(kernel, optimizer=lbfgs, n_restarts_optimizer=2, random_state=0).fit(X, y)
    sk = SkGPR(kernel, optimizer=lbfgs, n_restarts_optimizer=2, random_state=0).fit(X, y)
    np.testing.assert_allclose(me.kernel_.theta, sk.kernel_.theta, rtol=1e-6)
    assert me.log_marginal_likelihood_value_ == pytest.approx(sk.log_marginal_likelihood_value_, rel=1e-9)


@pytest.mark.parametrize("bad", [-1, 2**32])
def test_random_state_outside_a_randomstate_seed_is_refused_by_name(bad):
    # the path of scikit-learn kernel objects draws from a RandomState, as scikit-learn does
    X, y = np.array([[0.1], [0.5], [0.9]]), np.array([0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"`random_state` must be"):
        GPR(random_state=bad).fit(X, y)
    fitted = GPR(random_state=np.random.default_rng(0)).fit(X, y)  # a Generator seeds one
    assert fitted.predict(X).shape == (3,)
