import warnings

import numpy as np
import pytest
from helpers import DEPRECATED_GP
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, DotProduct, WhiteKernel
from sklearn.gaussian_process.kernels import ConstantKernel as Cst

from fastrbf import gp_log_marginal_likelihood, gp_regression, reference
from fastrbf.gp import _prml as gp

pytestmark = pytest.mark.filterwarnings(DEPRECATED_GP)  # the deprecated GP names' tests


def _sk_kernel(theta, noise, bounds=(1e-5, 1e5)):
    k = Cst(theta[0], bounds) * RBF(1 / np.sqrt(theta[1]), (1 / np.sqrt(bounds[1]), 1 / np.sqrt(bounds[0])))
    if len(theta) == 4:
        k = k + Cst(theta[2], bounds) + Cst(theta[3], bounds) * DotProduct(sigma_0=0.0, sigma_0_bounds="fixed")
    return k + WhiteKernel(noise, bounds)


def _to_sklearn_grad(g):
    # sklearn differentiates by log(length_scale) = -log(t1) / 2
    out = g.copy()
    out[1] *= -2.0
    return out


def _data(rng, n=150, d=3):
    X = rng.random((n, d))
    y = np.sin(4 * X[:, 0]) + X[:, -1] + 0.05 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("theta", [[1.3, 5.0, 0.2, 0.4], [0.7, 12.0]])
def test_lml_and_gradient_match_sklearn(rng, theta):
    X, y = _data(rng)
    noise = 0.02
    sk = GaussianProcessRegressor(_sk_kernel(theta, noise), alpha=0.0, optimizer=None).fit(X, y)
    v, g = sk.log_marginal_likelihood(sk.kernel_.theta, eval_gradient=True)
    kernel = "prml" if len(theta) == 4 else "gaussian"
    ours, og = gp_log_marginal_likelihood(X, y, theta, noise=noise, kernel=kernel)
    assert abs(ours - v) <= 1e-8 * abs(v)
    assert np.allclose(_to_sklearn_grad(og), g, rtol=1e-8, atol=1e-8)
    assert gp_log_marginal_likelihood(X, y, theta, noise=noise, kernel=kernel, grad=False) == ours


def test_gradient_matches_finite_differences(rng):
    X, y = _data(rng, n=80)
    p = np.log([1.3, 5.0, 0.2, 0.4, 0.02])

    def f(q):
        return gp_log_marginal_likelihood(X, y, np.exp(q[:4]), noise=float(np.exp(q[4])), grad=False)

    _, g = gp_log_marginal_likelihood(X, y, np.exp(p[:4]), noise=float(np.exp(p[4])))
    h = 1e-5
    fd = np.array([(f(p + h * e) - f(p - h * e)) / (2 * h) for e in np.eye(5)])
    assert np.allclose(g, fd, rtol=1e-5, atol=1e-6)


def test_predictive_mean_and_variance_match_sklearn(rng, monkeypatch):
    monkeypatch.setattr(gp, "PREDICT_CHUNK", 7)  # several chunks
    X, y = _data(rng)
    theta, noise = [1.3, 5.0, 0.2, 0.4], 0.02
    sk = GaussianProcessRegressor(_sk_kernel(theta, noise), alpha=0.0, optimizer=None).fit(X, y)
    Xq = rng.random((40, 3))
    mu, sd = sk.predict(Xq, return_std=True)
    m = gp_regression(X, y, theta0=theta, noise=noise, optimize=False)
    assert np.allclose(m.predict(Xq), mu, rtol=1e-8, atol=1e-10)
    p = m.predict(Xq, return_var=True)
    assert np.allclose(p.mean, mu, rtol=1e-8, atol=1e-10)
    assert np.allclose(p.var, sd**2, rtol=1e-8, atol=1e-10)
    assert p.n_clamped == 0
    # normalised targets
    skn = GaussianProcessRegressor(_sk_kernel(theta, noise), alpha=0.0, optimizer=None, normalize_y=True).fit(X, 3 * y + 5)
    mn = gp_regression(X, 3 * y + 5, theta0=theta, noise=noise, optimize=False, normalize_y=True)
    mu2, sd2 = skn.predict(Xq, return_std=True)
    p2 = mn.predict(Xq, return_var=True)
    assert np.allclose(p2.mean, mu2, rtol=1e-8) and np.allclose(p2.var, sd2**2, rtol=1e-8)


def test_optimised_lml_at_least_sklearn(rng):
    X, y = _data(rng, n=120, d=2)
    theta0, noise0 = [1.0, 1.0, 1.0, 1.0], 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = GaussianProcessRegressor(_sk_kernel(theta0, noise0), alpha=0.0, n_restarts_optimizer=3,
                                      random_state=0).fit(X, y)
        m = gp_regression(X, y, theta0=theta0, noise=noise0, n_restarts=3, seed=0)
    assert m.log_marginal_likelihood >= sk.log_marginal_likelihood_value_ - 1e-6
    assert len(m.restarts) == 4 and max(r["lml"] for r in m.restarts) == pytest.approx(m.log_marginal_likelihood)
    lml_here = gp_log_marginal_likelihood(X, y, m.theta, noise=m.noise, grad=False)
    assert lml_here == pytest.approx(m.log_marginal_likelihood, abs=1e-9)


def test_optimum_on_a_bound_warns(rng):
    X, y = _data(rng, n=60, d=1)
    b = [[1e-3, 1e3], [1e-3, 1e3], [1e-3, 1e3], [1e-3, 1e3], [0.5, 1e3]]  # noise forced high
    with pytest.warns(UserWarning, match=r"optimum sits on a bound for .*'noise'"):
        gp_regression(X, y, noise=1.0, bounds=b, n_restarts=0)


def test_threads_agree(rng):
    X, y = _data(rng, n=300)
    a = gp_log_marginal_likelihood(X, y, [1.3, 5.0, 0.2, 0.4], noise=0.02, n_threads=1)
    b = gp_log_marginal_likelihood(X, y, [1.3, 5.0, 0.2, 0.4], noise=0.02, n_threads=2)
    assert a[0] == pytest.approx(b[0], rel=1e-12) and np.allclose(a[1], b[1], rtol=1e-10)


def test_not_positive_definite_at_the_start(rng):
    from fastrbf import NotPositiveDefiniteError

    X, y = _data(rng, n=30)
    X[7] = X[3]  # a duplicate point and a noise far below rounding: C is singular
    msg = r"not positive definite.*column 7.*Remedies: a larger `noise`, removing duplicate rows of `X`, or other `{}`\."
    with pytest.raises(NotPositiveDefiniteError, match=msg.format("theta0")):
        gp_regression(X, y, kernel="gaussian", theta0=[1.0, 1.0], noise=1e-300,
                      bounds=[[1e-5, 1e5], [1e-5, 1e5], [1e-305, 1.0]])
    with pytest.raises(NotPositiveDefiniteError, match=msg.format("theta")):
        gp_log_marginal_likelihood(X, y, [1.0, 1.0], noise=1e-300, kernel="gaussian")


def test_bad_input(rng):
    X, y = _data(rng, n=20)
    th = [1.0, 1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="`noise` must be a finite number > 0; got 0"):
        gp_log_marginal_likelihood(X, y, th, noise=0)
    with pytest.raises(ValueError, match=r"`theta` must contain only finite values > 0; got \[1.0, -1.0, 1.0, 1.0\]"):
        gp_log_marginal_likelihood(X, y, [1.0, -1.0, 1.0, 1.0], noise=0.1)
    with pytest.raises(ValueError, match="`theta` must have 4 values for the 'prml' kernel"):
        gp_log_marginal_likelihood(X, y, [1.0, 1.0], noise=0.1)
    with pytest.raises(ValueError, match="`y` must contain only finite values"):
        gp_regression(X, np.r_[y[:19], np.nan])
    with pytest.raises(ValueError, match=r"`y` must have one row per row of `X` \(20\)"):
        gp_regression(X, y[:10])
    with pytest.raises(ValueError, match=r"must lie inside `bounds`"):
        gp_regression(X, y, noise=10.0, bounds=[[1e-3, 1e3]] * 4 + [[1e-3, 1.0]])
    with pytest.raises(ValueError, match="`bounds` must be 5 pairs"):
        gp_regression(X, y, bounds=[[1.0, 0.5]] * 5)
    with pytest.raises(ValueError, match="`kernel` must be one of"):
        gp_regression(X, y, kernel="cubic")
    with pytest.raises(ValueError, match="`n_restarts` must be an int >= 0"):
        gp_regression(X, y, n_restarts=-1)
    with pytest.raises(ValueError, match=r"`X` must have 3 features"):
        gp_regression(X, y, optimize=False).predict(np.ones((2, 2)))


@pytest.mark.parametrize("theta", [[1.3, 5.0, 0.2, 0.4], [0.7, 12.0]])
def test_matches_reference(rng, theta):
    from fastrbf import reference

    X, y = _data(rng, n=90)
    kernel = "prml" if len(theta) == 4 else "gaussian"
    lml, g = gp_log_marginal_likelihood(X, y, theta, noise=0.03, kernel=kernel)
    rl, rg = reference.gp_log_marginal_likelihood(X, y, theta, noise=0.03)
    assert lml == pytest.approx(rl, rel=1e-9)
    assert np.allclose(g, rg, rtol=1e-7, atol=1e-9)
    Xq = rng.random((25, 3))
    p = gp_regression(X, y, kernel=kernel, theta0=theta, noise=0.03, optimize=False).predict(Xq, return_var=True)
    rm, rv = reference.gp_predict(X, y, Xq, theta, noise=0.03)
    assert np.allclose(p.mean, rm, rtol=1e-8, atol=1e-10) and np.allclose(p.var, rv, rtol=1e-7, atol=1e-10)


def test_model_owns_its_training_data(rng):
    X, y = _data(rng, n=40)
    Xq = rng.random((5, 3))
    m = gp_regression(X, y, theta0=[1.3, 5.0, 0.2, 0.4], noise=0.02, optimize=False)
    before = m.predict(Xq, return_var=True)
    assert not np.shares_memory(m.X_train, X)
    X[:] = 0.0
    y[:] = 0.0
    after = m.predict(Xq, return_var=True)
    np.testing.assert_array_equal(after.mean, before.mean)
    np.testing.assert_array_equal(after.var, before.var)


@pytest.mark.parametrize("optimize", [False, True])
def test_identical_fits_pickle_to_identical_bytes(rng, optimize):
    import pickle

    X, y = _data(rng, n=12, d=2)
    models = []
    for junk in (np.nan, 7.0):  # leave different garbage where the covariance buffer may land
        filler = np.full((12, 12), junk)
        del filler
        models.append(gp_regression(X, y, kernel="gaussian", theta0=[1.0, 5.0], noise=0.1, optimize=optimize,
                                    n_restarts=1, seed=0))
    F = models[0].factor
    assert np.all(np.triu(F, 1) == 0.0)  # the factor is lower triangular, nothing stale above
    np.testing.assert_allclose(F @ F.T, reference.prml_kernel(X, X, models[0].theta) + models[0].noise * np.eye(12),
                               rtol=1e-12, atol=1e-12)
    assert pickle.dumps(models[0]) == pickle.dumps(models[1])


def test_float32_is_kept(rng):
    X, y = _data(rng, n=50)
    Xq = rng.random((7, 3))
    theta = [1.3, 5.0, 0.2, 0.4]
    m32 = gp_regression(X.astype(np.float32), y.astype(np.float32), theta0=theta, noise=0.02, optimize=False)
    assert m32.dtype == np.float32 and m32.X_train.dtype == np.float64
    p = m32.predict(Xq.astype(np.float32), return_var=True)
    assert p.mean.dtype == np.float32 and p.var.dtype == np.float32
    assert m32.predict(Xq.astype(np.float32)).dtype == np.float32
    rm, rv = reference.gp_predict(X.astype(np.float32), y.astype(np.float32), Xq.astype(np.float32), theta, noise=0.02)
    np.testing.assert_allclose(p.mean, rm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(p.var, rv, rtol=1e-5, atol=1e-6)
    # a float64 query, or float64 targets, give float64
    assert m32.predict(Xq).dtype == np.float64
    m_mixed = gp_regression(X.astype(np.float32), y, theta0=theta, noise=0.02, optimize=False)
    assert m_mixed.dtype == np.float64 and m_mixed.predict(Xq.astype(np.float32)).dtype == np.float64


_X5 = np.linspace(0, 1, 5)[:, None]
_Y5 = np.sin(3 * _X5[:, 0])


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(theta0=[1 + 1j, 1.0, 1.0, 1.0]), TypeError, r"`theta0` must be an array of real numbers; got dtype complex128\."),
        (dict(theta0=np.ones(4, dtype=object)), TypeError, r"`theta0` must be an array of real numbers; got dtype object\."),
        (dict(theta0=["1", "1", "1", "1"]), TypeError, r"`theta0` must be an array of real numbers; got dtype <U1\."),
        (dict(theta0=[True, True, True, True]), TypeError, r"`theta0` must be 4 real numbers; got booleans"),
        (dict(theta0=[[1.0, 2.0], [3.0]]), ValueError, r"`theta0` must be a rectangular array of real numbers; got a ragged"),
        (dict(bounds=[[1e-3, 1e3], [1e-3]] + [[1e-3, 1e3]] * 3), ValueError,
         r"`bounds` must be a rectangular array of real numbers; got a ragged or unconvertible list\."),
        (dict(bounds=[["1e-3", "1e3"]] * 5), TypeError, r"`bounds` must be an array of real numbers; got dtype <U4\."),
        (dict(bounds=np.full((5, 2), 1 + 0j)), TypeError, r"`bounds` must be an array of real numbers; got dtype complex128\."),
        (dict(bounds=np.ones((5, 2), dtype=bool)), TypeError,
         r"`bounds` must be 5 pairs \(low, high\) of real numbers; got booleans\."),
        (dict(y=[1.0, [2.0], 3.0, 4.0, 5.0]), ValueError, r"`y` must be a rectangular array of real numbers; got a ragged"),
        (dict(y=_Y5.astype(complex)), TypeError, r"`y` must be an array of real numbers; got dtype complex128\."),
        (dict(X=[[0.0], [1.0, 2.0]]), ValueError, r"`X` must be a rectangular array of real numbers; got a ragged"),
        (dict(noise="0.1"), TypeError, r"`noise` must be a finite number > 0; got '0\.1'\."),
        (dict(noise=True), TypeError, r"`noise` must be a finite number > 0; got True\."),
        (dict(noise=np.nan), ValueError, r"`noise` must be a finite number > 0; got nan\."),
        (dict(optimize="no"), TypeError, r"`optimize` must be True or False; got 'no'\."),
        (dict(normalize_y=1), TypeError, r"`normalize_y` must be True or False; got 1\."),
        (dict(n_restarts=1.5), TypeError, r"`n_restarts` must be an int >= 0; got 1\.5\."),
        (dict(n_restarts=True), TypeError, r"`n_restarts` must be an int >= 0; got True\."),
        (dict(n_restarts=-1), ValueError, r"`n_restarts` must be an int >= 0; got -1\."),
        (dict(kernel=["prml"]), ValueError, r"`kernel` must be one of \['gaussian', 'prml'\]; got \['prml'\]\."),
        (dict(seed=-1), ValueError, r"`seed` must be None, an int >= 0 or a numpy.random.Generator; got -1\."),
        (dict(seed=1.5), TypeError, r"`seed` must be None, an int >= 0 or a numpy.random.Generator; got 1\.5\."),
        (dict(seed="abc"), TypeError, r"`seed` must be None, an int >= 0 or a numpy.random.Generator; got 'abc'\."),
        (dict(n_threads=0), ValueError, r"`n_threads` must be a positive int"),
    ],
)
def test_gp_regression_argument_errors(kwargs, exc, match):
    args = dict(X=_X5, y=_Y5) | kwargs
    X, y = args.pop("X"), args.pop("y")
    with pytest.raises(exc, match=match):
        gp_regression(X, y, **args)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(theta=[1 + 1j, 1.0, 1.0, 1.0]), TypeError, r"`theta` must be an array of real numbers; got dtype complex128\."),
        (dict(theta=["1", "1", "1", "1"]), TypeError, r"`theta` must be an array of real numbers; got dtype <U1\."),
        (dict(theta=[[1.0], [1.0, 1.0]]), ValueError, r"`theta` must be a rectangular array of real numbers"),
        (dict(grad="yes"), TypeError, r"`grad` must be True or False; got 'yes'\."),
        (dict(kernel=None), ValueError, r"`kernel` must be one of"),
    ],
)
def test_lml_argument_errors(kwargs, exc, match):
    args = dict(theta=[1.0, 1.0, 1.0, 1.0], noise=0.1) | kwargs
    theta = args.pop("theta")
    with pytest.raises(exc, match=match):
        gp_log_marginal_likelihood(_X5, _Y5, theta, **args)


def test_predict_argument_errors():
    m = gp_regression(_X5, _Y5, optimize=False)
    with pytest.raises(TypeError, match=r"`return_var` must be True or False; got 'yes'\."):
        m.predict(_X5, return_var="yes")
    with pytest.raises(ValueError, match=r"`X` must be a rectangular array of real numbers; got a ragged"):
        m.predict([[0.0], [1.0, 2.0]])
    with pytest.raises(TypeError, match=r"`X` must be an array of real numbers; got dtype complex128\."):
        m.predict(_X5.astype(complex))


def test_overflow_names_the_arguments(rng):
    X, y = _data(rng, n=20)
    # data whose float64 squared distances overflow: refused in the name of `X`, first
    too_big = r"`X` must have values of magnitude at most 1\.94e\+153 \(float64 squared distances over 3 feature\(s\) " \
              r"would overflow\); got \d\.\d+e\+159\. Rescale the data \(e\.g\. standardise it\)\."
    with pytest.raises(ValueError, match=too_big):
        gp_regression(X * 1e160, y, theta0=[1e10, 1.0, 1.0, 1.0])  # theta0 outside `bounds`: X comes first
    with pytest.raises(ValueError, match=too_big):
        gp_log_marginal_likelihood(X * 1e160, y, [1.0, 1.0, 1.0, 1.0], noise=0.1)
    # data within that limit, parameters that make the covariance overflow
    with pytest.raises(ValueError, match=r"`X`, `theta0` and `noise` make the covariance overflow float64 \(its entries "
                                         r"are bounded by t0 \+ t2 \+ t3 max \|\|x\|\|\^2 \+ noise = inf, max "
                                         r"\|\|x\|\|\^2 = \d\.\d+e\+300\); rescale `X` or use smaller `theta0`/`noise`\."):
        gp_regression(X * 1e150, y, theta0=[1.0, 1.0, 1.0, 1e10], optimize=False)
    with pytest.raises(ValueError, match=r"`X`, `theta` and `noise` make the covariance overflow float64"):
        gp_log_marginal_likelihood(X, y, [1e308, 1.0, 1e308, 1.0], noise=0.1)
    with pytest.raises(ValueError, match=r"The log marginal likelihood overflows float64 for this `y` and `noise`.*"
                                         r"rescale `y` \(or pass `normalize_y=True`\)"):
        gp_regression(X, y * 1e160, noise=0.1)
    with pytest.raises(ValueError, match=r"The log marginal likelihood overflows float64 for this `y` and `noise` "
                                         r"\(y\^T C\^-1 y is not finite\); rescale `y` or use a larger `noise`\."):
        gp_log_marginal_likelihood(X, y * 1e160, [1.0, 1.0, 1.0, 1.0], noise=0.1)
    # normalised, huge targets are fine: the model is the scaled model of the scaled targets
    Xq = rng.random((6, 3))
    big = gp_regression(X, y * 1e150, theta0=[1.0, 5.0, 0.2, 0.4], normalize_y=True, optimize=False)
    small = gp_regression(X, y, theta0=[1.0, 5.0, 0.2, 0.4], normalize_y=True, optimize=False)
    pb, ps = big.predict(Xq, return_var=True), small.predict(Xq, return_var=True)
    np.testing.assert_allclose(pb.mean, 1e150 * ps.mean, rtol=1e-10)
    np.testing.assert_allclose(pb.var / 1e150, 1e150 * ps.var, rtol=1e-10)
    # a query whose squared distances overflow: refused in the name of `X` (predict's own)
    m = gp_regression(X, y, theta0=[1.0, 5.0, 0.2, 0.4], noise=0.1, optimize=False)
    for return_var in (False, True):
        with pytest.raises(ValueError, match=r"`X` must have values of magnitude at most 1\.94e\+153 \(float64 squared "
                                             r"distances over 3 feature\(s\) would overflow\); got 1e\+160\."):
            m.predict(np.full((1, 3), 1e160), return_var=return_var)
    assert np.isfinite(m.predict(np.full((1, 3), 1.5e153), return_var=True).var).all()  # within the limit
    # a query far enough out that the variance, in units of the huge targets, overflows
    with pytest.raises(ValueError, match=r"The predictive variance overflows float64 for this `X` \(max \|\|x\|\|\^2 = "
                                         r"3e\+12; the training targets' scale y_std = \d\.\d+e\+1\d\d\); rescale `X` or "
                                         r"the training targets\."):
        big.predict(np.full((1, 3), 1e6), return_var=True)


def test_float32_prediction_overflow_is_an_error():
    X = np.linspace(0, 1, 10, dtype=np.float32)[:, None]
    y = (3e38 * X[:, 0]).astype(np.float32)
    m = gp_regression(X, y, theta0=[1.0, 1.0, 1.0, 1.0], noise=1e-3, optimize=False)
    assert np.isfinite(m.predict(X[:3])).all()
    with pytest.raises(ValueError, match=r"The predictive mean overflows float32 for this `X` .*; rescale `X` or the "
                                         r"training targets, or pass `X` as float64\."):
        m.predict(np.array([[100.0]], dtype=np.float32))
    assert np.isfinite(m.predict(np.array([[100.0]]))).all()  # float64 holds it


def test_every_start_failing_names_bounds(rng, monkeypatch):
    X, y = _data(rng, n=20)

    def fail(*args, **kwargs):
        raise np.linalg.LinAlgError("singular")

    import scipy.optimize

    monkeypatch.setattr(scipy.optimize, "minimize", fail)
    with pytest.raises(np.linalg.LinAlgError, match=r"Every optimiser start failed.*narrow `bounds` or raise `noise`"):
        gp_regression(X, y, n_restarts=1, seed=0)


def test_mean_with_variance_agrees_with_mean_alone(rng):
    X = rng.random((300, 4))
    y = np.sin(X.sum(1)) + 0.1 * rng.standard_normal(300)
    Xq = rng.random((2500, 4))  # more than one chunk of query points
    for kernel in ("gaussian", "prml"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # an optimum on a bound is not what this tests
            m = gp_regression(X, y, kernel=kernel, n_restarts=0, seed=0)
        alone = m.predict(Xq)
        both = m.predict(Xq, return_var=True)
        np.testing.assert_allclose(both.mean, alone, rtol=0, atol=1e-11 * np.abs(alone).max())
