"""fastrbf.sklearn: scikit-learn's estimator checks, equality with the functional API
it wraps, GridSearchCV against a hand-written search, pickling, dtypes and errors."""

import os
import pathlib
import pickle
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from helpers import DEPRECATED_GP
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, ExpSineSquared, WhiteKernel
from sklearn.kernel_approximation import RBFSampler
from sklearn.model_selection import GridSearchCV, KFold, ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import estimator_checks_generator

import fastrbf
import fastrbf.sklearn as fsk
from fastrbf import reference
from fastrbf.sklearn import _network

pytestmark = pytest.mark.filterwarnings(DEPRECATED_GP)  # the deprecated GP names' tests

ROOT = pathlib.Path(__file__).resolve().parent.parent

ESTIMATORS = [
    fsk.RBFNetworkRegressor(),
    fsk.RBFNetworkRegressor(centers="forward"),  # centres by forward selection
    fsk.RBFNetworkClassifier(),
    fsk.KernelRidge(),
    fsk.KernelRidge(solver="nystrom-pcg"),  # all points as landmarks on the checks' small data
    fsk.KernelRidge(solver="nystrom"),
    fsk.KernelRidgeCV(),
    fsk.RBFInterpolatorRegressor(),
    fsk.RBFInterpolatorRegressor(neighbors=20),  # SciPy's local interpolation
    fsk.KMeans(2),  # two clusters, as scikit-learn's own checks of its KMeans (their data has four distinct points)
    fsk.KernelKMeans(2),
    fsk.RandomFourierFeatures(),
    fsk.Nystroem(),
    fsk.GaussianProcessRegressor(),  # scikit-learn's default kernel
    fsk.GaussianProcessRegressor(ConstantKernel(1.0) * RBF(1.0) + WhiteKernel(1e-2)),  # scikit-learn's kernels
    fsk.GaussianProcessRegressor(RBF() + DotProduct() + WhiteKernel(1e-2)),  # computed by the kernel object
    fsk.GaussianProcessRegressor("gaussian"),  # PRML's GP by name
    fsk.VecchiaGaussianProcessRegressor(n_neighbors=5),
]


# scikit-learn's checks only: they pass Gram matrices to a pairwise-tagged estimator
CHECKED_ONLY = [fsk.KernelRidge(kernel="precomputed"), fsk.KernelKMeans(2, kernel="precomputed")]

_NOT_POSITIVE_DEFINITE = (
    "a matrix that is not positive definite even with alpha added (the check's raw data, or its Gram matrix "
    "truncated to integers) is refused with NotPositiveDefiniteError; scikit-learn's KernelRidge switches to a "
    "least-squares solution with a warning"
)


_PCG_WEIGHTS = ('the Nystroem solvers refuse `sample_weight` (a ridge per point), naming the exact solver that '
                'takes it')


def _expected_failed_checks(est):
    if isinstance(est, (fsk.KMeans, fsk.KernelKMeans)):
        # (scikit-learn marks the same two checks of its own KMeans; KernelKMeans's weights
        # are repeated points from the same initial labels: tests/test_kernel_kmeans.py)
        out = {name: "k-means++ seeding draws points with probabilities scaled by the weights: a weight is not "
                     "the same random draws as repeated points" for name in (
            "check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data")}
        if isinstance(est, fsk.KernelKMeans) and est.kernel == "precomputed":
            out["check_clustering"] = ("scikit-learn's clustering check fits the points themselves, never a Gram "
                                       "matrix, even for a pairwise-tagged clusterer (the precomputed kernel is "
                                       "tested in test_kernel_kmeans.py)")
        return out
    if isinstance(est, fsk.GaussianProcessRegressor) and not isinstance(est.kernel, str):
        return {"check_estimators_unfitted": "predict before fit gives the prior, as scikit-learn's "
                                             "GaussianProcessRegressor does"}
    if isinstance(est, fsk.KernelRidge) and est.solver in ("nystrom", "nystrom-pcg"):
        return {name: _PCG_WEIGHTS for name in (
            "check_sample_weights_pandas_series", "check_sample_weights_not_an_array", "check_sample_weights_list",
            "check_sample_weights_shape", "check_sample_weights_not_overwritten",
            "check_sample_weight_equivalence_on_dense_data")}
    if isinstance(est, fsk.KernelRidge) and est.kernel == "precomputed":
        return {"check_positive_only_tag_during_fit": _NOT_POSITIVE_DEFINITE,
                "check_estimators_dtypes": _NOT_POSITIVE_DEFINITE}
    if isinstance(est, fsk.RBFInterpolatorRegressor) and est.neighbors is None:
        return {
            "check_positive_only_tag_during_fit": (
                "exact interpolation (smoothing=0, SciPy's default) of the iris data, which has duplicate "
                "points: the interpolation system is singular (SciPy's RBFInterpolator fails on it too)"
            ),
        }
    return {}


# Not collected (so neither run nor skipped): scikit-learn's array-API input checks.  The
# estimators take NumPy arrays only (fastrbf's kernels are numba code on NumPy buffers), do
# not declare `array_api_support`, and scikit-learn runs these checks only with
# SCIPY_ARRAY_API=1 set before SciPy is imported.  The pandas checks run: pandas is in the
# `test` extra for them (DataFrame input and `feature_names_in_`).
_NOT_APPLICABLE = ("check_array_api_input",)


def _checks():
    for est in ESTIMATORS + CHECKED_ONLY:
        for item in estimator_checks_generator(est, legacy=True,
                                               expected_failed_checks=_expected_failed_checks(est), mark="xfail"):
            # a plain (estimator, check) pair, or a pytest.param carrying the xfail mark
            (e, check), marks = (item.values, item.marks) if hasattr(item, "marks") else (item, ())
            name = getattr(check, "func", check).__name__
            if not name.startswith(_NOT_APPLICABLE):
                yield pytest.param(e, check, marks=marks, id=f"{type(e).__name__}-{name}")


# The GP checks fit tiny noiseless or pure-noise data, where the marginal-likelihood optimum
# sits on a bound of the noise or the amplitude: the estimator then warns (ConvergenceWarning,
# as scikit-learn's GaussianProcessRegressor does, in its words with a kernel object, whose
# own common tests ignore it).  The
# checks still run; only that warning is not turned into an error here.
@pytest.mark.filterwarnings("ignore:The optimum sits on a bound:sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:The optimal value found:sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("estimator,check", list(_checks()))
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ---------------------------------------------------------------- imports
def _run_python(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, cwd=ROOT)


def test_import_fastrbf_does_not_import_sklearn():
    r = _run_python("import sys, fastrbf; print('sklearn' in sys.modules)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_import_without_sklearn_names_the_extra():
    r = _run_python(
        "import sys; sys.modules['sklearn'] = None\n"
        "try:\n    import fastrbf.sklearn\nexcept ImportError as e:\n    print('ImportError:', e)\n"
    )
    assert r.returncode == 0, r.stderr
    assert "ImportError:" in r.stdout and "fastrbf[sklearn]" in r.stdout


# ---------------------------------------------------------------- data
@pytest.fixture
def data(rng):
    X = rng.standard_normal((80, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.05 * rng.standard_normal(80)
    labels = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, "yes", "no").astype("<U5")
    labels[X[:, 2] > 1.0] = "maybe"
    return X, y, labels


# ---------------------------------------------------------------- thin: same as the functional API
def test_rbf_network_regressor_equals_functional(data):
    X, y, _ = data
    est = fsk.RBFNetworkRegressor(12, gamma=0.7, alpha=1e-3, random_state=3, max_iter=50).fit(X, y)
    net = fastrbf.rbf_network(X, y, n_centers=12, gamma=0.7, alpha=1e-3, seed=3, max_iter=50)
    assert np.array_equal(est.predict(X), net.predict(X))
    assert np.array_equal(est.centers_, net.centers)
    assert est.coef_.shape == (12,) and est.n_iter_ >= 1 and est.n_features_in_ == 3
    # gamma=None is 1 / n_features; learn_gamma is passed on
    est = fsk.RBFNetworkRegressor(5, learn_gamma=True, random_state=0).fit(X, y)
    net = fastrbf.rbf_network(X, y, n_centers=5, gamma=1 / 3, seed=0, learn_gamma=True)
    assert np.array_equal(est.predict(X), net.predict(X))
    assert np.array_equal(est.gamma_, net.gamma)


def test_rbf_network_classifier_equals_functional(data):
    X, _, labels = data
    est = fsk.RBFNetworkClassifier(10, gamma=0.5, random_state=1).fit(X, labels)
    net = fastrbf.rbf_network(X, labels, n_centers=10, gamma=0.5, seed=1, classify=True)
    assert est.classes_.tolist() == ["maybe", "no", "yes"]
    assert np.array_equal(est.predict(X), net.predict(X))
    assert np.array_equal(est.decision_function(X), net.decision_function(X))
    assert est.score(X, labels) > 0.8
    two = fsk.RBFNetworkClassifier(centers="all", gamma=0.5, alpha=1e-6).fit(X, labels == "yes")
    assert two.decision_function(X).shape == (80,) and two.n_iter_ == 0


def test_kernel_ridge_equals_functional_and_sklearn(data):
    from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

    X, y, _ = data
    est = fsk.KernelRidge(alpha=0.1, gamma=0.3).fit(X, y)
    m = fastrbf.kernel_ridge(X, y, gamma=0.3, alpha=0.1)
    assert np.array_equal(est.predict(X), m.predict(X))
    sk = SkKernelRidge(alpha=0.1, kernel="rbf", gamma=0.3).fit(X, y)
    np.testing.assert_allclose(est.predict(X), sk.predict(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.dual_coef_, sk.dual_coef_, rtol=1e-9, atol=1e-12)
    # aliases and gamma=None (1 / n_features), multi-output targets
    Y = np.c_[y, -y]
    a = fsk.KernelRidge(kernel="rbf").fit(X, Y).predict(X)
    b = fastrbf.kernel_ridge(X, Y, kernel="gaussian", gamma=1 / 3, alpha=1.0).predict(X)
    assert a.shape == (80, 2) and np.array_equal(a, b)
    p = fsk.KernelRidge(kernel="poly", degree=2, gamma=0.5, coef0=1.0).fit(X, y).predict(X)
    assert np.array_equal(p, fastrbf.kernel_ridge(X, y, kernel="polynomial", degree=2, gamma=0.5, alpha=1.0).predict(X))


def test_kernel_ridge_nystrom_pcg_equals_functional(data):
    X, y, _ = data
    est = fsk.KernelRidge(alpha=0.1, gamma=0.3, solver="nystrom-pcg", n_landmarks=20, random_state=3).fit(X, y)
    m = fastrbf.kernel_ridge(X, y, gamma=0.3, alpha=0.1, solver="nystrom-pcg", n_landmarks=20, seed=3)
    assert m.solver == "nystrom-pcg" and m.converged and est.n_iter_ == m.n_iter > 0
    assert np.array_equal(est.X_fit_, m.centers) and est.X_fit_.shape == (20, X.shape[1])
    assert np.array_equal(est.predict(X), m.predict(X))


def test_kernel_ridge_direct_nystrom_equals_functional(data):
    X, y, _ = data
    est = fsk.KernelRidge(alpha=0.1, gamma=0.3, solver="nystrom", n_landmarks=20, random_state=3).fit(X, y)
    m = fastrbf.kernel_ridge(X, y, gamma=0.3, alpha=0.1, solver="nystrom", n_landmarks=20, seed=3)
    assert m.solver == "nystrom" and est.model_.solver == "nystrom" and est.n_iter_ == 1
    assert np.array_equal(est.X_fit_, m.centers) and np.array_equal(est.predict(X), m.predict(X))
    assert fsk.KernelRidge(alpha=0.1, gamma=0.3, n_landmarks=20).fit(X, y).model_.solver == "nystrom"  # "auto"
    with pytest.raises(ValueError, match='which solver="nystrom" does not take'):
        fsk.KernelRidge(alpha=0.1, gamma=0.3, solver="nystrom", n_landmarks=20).fit(X, y, sample_weight=np.ones(len(y)))


def test_interpolator_equals_functional_and_scipy(data):
    from scipy.interpolate import RBFInterpolator

    X, y, _ = data
    Xq = X[:10] + 0.1
    est = fsk.RBFInterpolatorRegressor().fit(X, y)
    assert np.array_equal(est.predict(Xq), fastrbf.interpolate(X, y).predict(Xq))
    np.testing.assert_allclose(est.predict(X), y, rtol=0, atol=1e-10)
    # epsilon is SciPy's: fastrbf's gamma = epsilon ** 2
    est = fsk.RBFInterpolatorRegressor("gaussian", epsilon=0.8, smoothing=1e-3, degree=1).fit(X, y)
    sp = RBFInterpolator(X, y, kernel="gaussian", epsilon=0.8, smoothing=1e-3, degree=1)
    np.testing.assert_allclose(est.predict(Xq), sp(Xq), rtol=1e-8, atol=1e-10)
    # neighbors: SciPy's local mode, at most every training point
    for k in (7, 10 ** 6):
        est = fsk.RBFInterpolatorRegressor(neighbors=k).fit(X, y)
        assert np.array_equal(est.predict(Xq), fastrbf.interpolate(X, y, neighbors=min(k, len(X))).predict(Xq))
        np.testing.assert_allclose(est.predict(Xq), RBFInterpolator(X, y, neighbors=k)(Xq), rtol=1e-10, atol=1e-12)


def test_interpolate_with_as_many_points_as_monomials(rng):
    """n == number of polynomial terms: the polynomial alone interpolates (as SciPy)."""
    from scipy.interpolate import RBFInterpolator

    X, Y = rng.random((11, 10)), rng.random((11, 2))
    Xq = rng.random((4, 10))
    m = fastrbf.interpolate(X, Y)
    np.testing.assert_allclose(m.predict(X), Y, atol=1e-12)
    np.testing.assert_allclose(m.predict(Xq), RBFInterpolator(X, Y)(Xq), rtol=1e-9, atol=1e-12)
    assert np.abs(m.weights).max() < 1e-12


def test_kmeans_equals_functional(data):
    X = data[0]
    est = fsk.KMeans(4, random_state=5, n_init=2).fit(X)
    res = fastrbf.kmeans(X, 4, seed=5, n_init=2)
    assert np.array_equal(est.cluster_centers_, res.centers)
    assert np.array_equal(est.labels_, res.labels)
    assert est.inertia_ == res.inertia and est.n_iter_ == res.n_iter
    assert np.array_equal(est.predict(X), est.labels_)
    assert np.array_equal(est.fit_predict(X), res.labels)
    D = est.transform(X)
    np.testing.assert_allclose(D**2, reference.sqdist(X, res.centers), rtol=1e-12, atol=1e-12)
    assert est.score(X) == pytest.approx(-res.inertia, rel=1e-12)
    assert est.get_feature_names_out().tolist() == ["kmeans0", "kmeans1", "kmeans2", "kmeans3"]


def test_kmeans_callable_init_as_scikit_learn(data):
    from sklearn.cluster import KMeans as SkKMeans

    X = data[0]

    def rows(X, k, random_state):
        return X[random_state.choice(X.shape[0], k, replace=False)]

    ours = fsk.KMeans(4, init=rows, n_init=3, random_state=1).fit(X)
    sk = SkKMeans(4, init=rows, n_init=3, random_state=1, algorithm="lloyd").fit(X)
    assert ours.inertia_ == pytest.approx(sk.inertia_, rel=1e-12)
    np.testing.assert_allclose(ours.cluster_centers_, sk.cluster_centers_, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"The shape of the initial centers \(3, 3\) returned by the callable does not "
                                         r"match the number of clusters 4: `init` must be an array of shape"):
        fsk.KMeans(4, init=lambda X, k, random_state: X[:3]).fit(X)


def test_feature_maps_equal_functional(data):
    X = data[0]
    # a Generator is fastrbf's seed; an int draws as scikit-learn's RBFSampler (the same map)
    rff = fsk.RandomFourierFeatures(gamma=0.2, n_components=50, kind="cos_sin",
                                    random_state=np.random.default_rng(2)).fit(X)
    assert np.array_equal(rff.transform(X),
                          fastrbf.random_fourier(3, 50, gamma=0.2, seed=2, kind="cos_sin").transform(X))
    rff = fsk.RandomFourierFeatures(gamma=0.2, n_components=50, random_state=2).fit(X)
    sk = RBFSampler(gamma=0.2, n_components=50, random_state=2).fit(X)
    np.testing.assert_allclose(rff.random_weights_, sk.random_weights_, rtol=1e-15)
    np.testing.assert_array_equal(rff.random_offset_, sk.random_offset_)
    np.testing.assert_allclose(rff.transform(X), sk.transform(X), rtol=1e-12, atol=1e-14)
    ny = fsk.Nystroem(gamma=0.4, n_components=20, method="kmeans", random_state=4).fit(X)
    assert np.array_equal(ny.transform(X), fastrbf.nystroem(X, 20, gamma=0.4, seed=4).transform(X))
    # at most n_samples landmarks (scikit-learn's rule), all points then reproduce the Gram matrix
    ny = fsk.Nystroem(gamma=0.4, n_components=500).fit(X)
    Z = ny.transform(X)
    assert ny.n_components_ == 80 and Z.shape == (80, 80)
    np.testing.assert_allclose(Z @ Z.T, reference.gram(X, gamma=0.4), atol=1e-8)


@pytest.mark.parametrize("kernel,params", [
    ("laplacian", {"gamma": 0.3}), ("laplacian", {}), ("chi2", {"gamma": 0.7}), ("cosine", {}),
    ("polynomial", {"degree": 2.5, "coef0": 0.5}), (lambda x, y, p: np.minimum(x, y).sum() ** p, {"kernel_params": {"p": 2}})])
def test_sklearn_kernels_equal_scikit_learn(kernel, params):
    # kernels that scikit-learn computes (its names, a non-integer degree, a callable): the
    # estimators equal scikit-learn's, on their landmarks / training points (the positive
    # definite ones: of an indefinite kernel such as additive_chi2, fastrbf's map keeps the
    # positive eigenvalues, scikit-learn's SVD their absolute values)
    from sklearn.kernel_approximation import Nystroem as SkNystroem
    from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

    rng = np.random.default_rng(5)
    X, Xq, y = rng.random((30, 3)), rng.random((7, 3)), rng.standard_normal(30)
    ours = fsk.Nystroem(kernel, n_components=12, random_state=3, **params).fit(X)
    sk = SkNystroem(kernel, n_components=12, random_state=3, **params).fit(X)
    np.testing.assert_array_equal(ours.component_indices_, sk.component_indices_)
    np.testing.assert_allclose(ours.transform(Xq) @ ours.transform(X).T, sk.transform(Xq) @ sk.transform(X).T,
                               rtol=1e-9, atol=1e-9)
    kr = fsk.KernelRidge(1e-2, kernel=kernel, **params).fit(X, y)
    np.testing.assert_allclose(kr.predict(Xq), SkKernelRidge(1e-2, kernel=kernel, **params).fit(X, y).predict(Xq),
                               rtol=1e-9, atol=1e-12)
    if callable(kernel):
        with pytest.raises(ValueError, match="Don't pass gamma, coef0 or degree to Nystroem if using a callable kernel"):
            fsk.Nystroem(kernel, gamma=1.0).fit(X)
    else:
        with pytest.raises(ValueError, match="`kernel_params` is for a callable `kernel`"):
            fsk.KernelRidge(kernel="gaussian", kernel_params={"gamma": 1.0}).fit(X, y)


def test_precomputed_nystroem_and_gp_alpha_per_sample():
    from sklearn.gaussian_process import GaussianProcessRegressor as SkGP
    from sklearn.metrics.pairwise import polynomial_kernel

    rng = np.random.default_rng(6)
    X, y = rng.random((20, 3)), rng.standard_normal(20)
    K = polynomial_kernel(X, degree=2, coef0=0.1)
    ny = fsk.Nystroem("precomputed", n_components=20).fit(K)
    np.testing.assert_allclose(ny.transform(K) @ ny.transform(K).T, K, rtol=1e-8, atol=1e-10)
    # one alpha per sample (per-point noise variances), equal to scikit-learn's GP
    alpha = rng.uniform(0.01, 0.1, 20)
    kern = ConstantKernel(1.0) * RBF(0.5)
    ours = fsk.GaussianProcessRegressor(kern, alpha=alpha, optimizer=None).fit(X, y)
    sk = SkGP(kern, alpha=alpha, optimizer=None).fit(X, y)
    for a, b in zip(ours.predict(X[:5], return_std=True), sk.predict(X[:5], return_std=True), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="alpha must be a scalar or an array with same number of entries as y"):
        fsk.GaussianProcessRegressor(kern, alpha=alpha[:5]).fit(X, y)


def test_gp_any_kernel_object_equals_scikit_learn():
    # a kernel that fastrbf's GP does not compute: the kernel object's covariance, scikit-learn's results
    from sklearn.gaussian_process import GaussianProcessRegressor as SkGP

    rng = np.random.default_rng(7)
    X, Xq = 2 * rng.random((25, 1)), 2 * rng.random((6, 1))  # (ExpSineSquared is positive definite in one dimension)
    Y = np.column_stack([np.sin(4 * np.pi * X[:, 0]), np.cos(4 * np.pi * X[:, 0]) + X[:, 0]])
    kern = ConstantKernel(1.0) * ExpSineSquared(1.0, 0.5) + DotProduct(0.5) + WhiteKernel(1e-2)
    ours = fsk.GaussianProcessRegressor(kern, normalize_y=True, optimizer=None).fit(X, Y)
    sk = SkGP(kern, normalize_y=True, optimizer=None).fit(X, Y)
    np.testing.assert_allclose(ours.log_marginal_likelihood_value_, sk.log_marginal_likelihood_value_, rtol=1e-10)
    t = kern.theta + 0.1
    for a, b in zip(ours.log_marginal_likelihood(t, eval_gradient=True), sk.log_marginal_likelihood(t, eval_gradient=True),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
    for a, b in zip(ours.predict(Xq, return_cov=True) + ours.predict(Xq, return_std=True),
                    sk.predict(Xq, return_cov=True) + sk.predict(Xq, return_std=True), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    assert ours.sample_y(Xq, 4).shape == sk.sample_y(Xq, 4).shape == (6, 2, 4)
    # the hyperparameters learned: scikit-learn's optimum (from the same start, by the same L-BFGS-B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = fsk.GaussianProcessRegressor(kern, normalize_y=True).fit(X, Y)
        sk = SkGP(kern, normalize_y=True).fit(X, Y)
    np.testing.assert_allclose(ours.log_marginal_likelihood_value_, sk.log_marginal_likelihood_value_, rtol=1e-7)


def test_gp_equals_functional_and_warning(data):
    X, y, _ = data
    est = fsk.GaussianProcessRegressor("gaussian", theta=[1.0, 2.0], noise=0.01, n_restarts_optimizer=1, random_state=0)
    est.fit(X[:40], y[:40])
    m = fastrbf.gp_regression(X[:40], y[:40], kernel="gaussian", theta0=[1.0, 2.0], noise=0.01, n_restarts=1, seed=0)
    assert np.array_equal(est.predict(X), m.predict(X))
    mean, std = est.predict(X, return_std=True)
    p = m.predict(X, return_var=True)
    assert np.array_equal(mean, p.mean) and np.array_equal(std, np.sqrt(p.var))
    assert np.array_equal(est.theta_, m.theta) and est.noise_ == m.noise
    # the optimum on a bound: scikit-learn's category
    Xn = np.linspace(0, 1, 15)[:, None]
    with pytest.warns(ConvergenceWarning, match="sits on a bound"):
        fsk.GaussianProcessRegressor("gaussian").fit(Xn, np.sin(3 * Xn[:, 0]))


# ---------------------------------------------------------------- GridSearchCV
def _r2(y, p):
    return 1.0 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2)


def _hand_search(X, y, cv, grid, fit):
    scores = {}
    for params in ParameterGrid(grid):
        fold = []
        for tr, te in cv.split(X):
            mu = X[tr].mean(axis=0)
            sd = X[tr].std(axis=0)
            sd[sd == 0] = 1.0
            model = fit((X[tr] - mu) / sd, y[tr], params["est__gamma"], params["est__alpha"])
            fold.append(_r2(y[te], model.predict((X[te] - mu) / sd)))
        scores[(params["est__gamma"], params["est__alpha"])] = float(np.mean(fold))
    return scores


@pytest.mark.parametrize("which", ["kernel_ridge", "rbf_network"])
def test_grid_search_matches_functional_by_hand(rng, which):
    X = rng.standard_normal((90, 3)) * np.array([1.0, 10.0, 0.1]) + np.array([0.0, 5.0, -2.0])
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1] + 5 * X[:, 2] ** 2 + 0.1 * rng.standard_normal(90)
    grid = {"est__gamma": [0.05, 0.3, 2.0], "est__alpha": [1e-4, 1e-2, 1.0]}
    cv = KFold(4, shuffle=True, random_state=0)
    if which == "kernel_ridge":
        est = fsk.KernelRidge()
        def fit(Xs, ys, g, a):
            return fastrbf.kernel_ridge(Xs, ys, gamma=g, alpha=a)
    else:
        est = fsk.RBFNetworkRegressor(15, random_state=0)
        def fit(Xs, ys, g, a):
            return fastrbf.rbf_network(Xs, ys, n_centers=15, gamma=g, alpha=a, seed=0)
    gs = GridSearchCV(Pipeline([("scale", StandardScaler()), ("est", est)]), grid, cv=cv).fit(X, y)
    hand = _hand_search(X, y, cv, grid, fit)
    for params, score in zip(gs.cv_results_["params"], gs.cv_results_["mean_test_score"], strict=True):
        assert abs(score - hand[(params["est__gamma"], params["est__alpha"])]) < 1e-12
    best = max(hand, key=hand.get)
    assert (gs.best_params_["est__gamma"], gs.best_params_["est__alpha"]) == best
    assert abs(gs.best_score_ - hand[best]) < 1e-12


# ---------------------------------------------------------------- pickling
def _outputs(est, X):
    out = []
    for name in ("predict", "decision_function", "transform"):
        if hasattr(est, name):
            out.append(getattr(est, name)(X))
    if isinstance(est, fsk.GaussianProcessRegressor):
        out.extend(est.predict(X, return_std=True))
    return out


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_pickle_fitted_estimator(est, data):
    X, y, labels = data
    est = clone(est).set_params(**{k: 0 for k in est.get_params() if k == "random_state"})
    if isinstance(est, fsk.GaussianProcessRegressor):
        est.set_params(noise=0.05)
    est.fit(X, labels if isinstance(est, fsk.RBFNetworkClassifier) else y)
    again = pickle.loads(pickle.dumps(est))
    Xq = X[::3] + 0.01
    for a, b in zip(_outputs(est, Xq), _outputs(again, Xq), strict=True):
        assert np.array_equal(a, b)


def test_pickle_functional_models(data):
    X, y, labels = data
    Xq = X[::3] + 0.01

    def same(model, fn):
        again = pickle.loads(pickle.dumps(model))
        a, b = fn(model), fn(again)
        assert type(again) is type(model) and np.array_equal(a, b)

    same(fastrbf.rbf_network(X, y, n_centers=8, gamma=0.5, seed=0), lambda m: m.predict(Xq))
    same(fastrbf.rbf_network(X, labels, n_centers=8, gamma=0.5, seed=0, classify=True), lambda m: m.predict(Xq))
    same(fastrbf.kernel_ridge(X, y, gamma=0.5, alpha=0.1), lambda m: m.predict(Xq))
    same(fastrbf.interpolate(X, y), lambda m: m.predict(Xq))
    km = fastrbf.kmeans(X, 5, seed=0)
    same(km, lambda m: np.r_[m.centers.ravel(), m.labels, m.inertia, fastrbf.lloyd_assign(Xq, m.centers)[0]])
    same(fastrbf.random_fourier(3, 40, gamma=0.5, seed=0), lambda m: m.transform(Xq))
    same(fastrbf.nystroem(X, 10, gamma=0.5, seed=0), lambda m: m.transform(Xq))
    gp = fastrbf.gp_regression(X[:30], y[:30], kernel="gaussian", noise=0.05, seed=0)
    same(gp, lambda m: np.r_[m.predict(Xq), m.predict(Xq, return_var=True).var])


# ---------------------------------------------------------------- dtypes and threads
@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_float32_in_float32_out(est, data):
    X, y, labels = data
    X32 = X.astype(np.float32)
    est = clone(est).set_params(**{k: 0 for k in est.get_params() if k == "random_state"})
    if isinstance(est, fsk.GaussianProcessRegressor):
        est.set_params(noise=0.05)
    est.fit(X32, labels if isinstance(est, fsk.RBFNetworkClassifier) else y)
    X32q = X32[:7].copy()
    X32q.flags.writeable = False  # read-only input works and is not modified
    for out in _outputs(est, X32q):
        if out.dtype.kind == "f":
            assert out.dtype == np.float32
    assert np.array_equal(X32q, X32[:7])


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_n_jobs_does_not_change_results(est, data):
    X, y, labels = data
    target = labels if isinstance(est, fsk.RBFNetworkClassifier) else y
    outs = []
    for n_jobs in (1, -1, None):
        e = clone(est).set_params(n_jobs=n_jobs, **{k: 0 for k in est.get_params() if k == "random_state"})
        if isinstance(e, fsk.GaussianProcessRegressor):
            e.set_params(noise=0.05)
        outs.append(_outputs(e.fit(X, target), X[:9]))
    for other in outs[1:]:
        for i, (a, b) in enumerate(zip(outs[0], other, strict=True)):
            if isinstance(est, fsk.GaussianProcessRegressor) and i == 2:
                # fastrbf's GP factors C with multi-threaded LAPACK and solves for the
                # variance with multi-threaded BLAS: the std is only close (the mean is exact)
                np.testing.assert_allclose(a, b, rtol=1e-12)
            else:
                assert np.array_equal(a, b)


def test_random_state_mapping(data):
    X = data[0]
    a = fsk.KMeans(5, random_state=np.random.RandomState(7)).fit(X).cluster_centers_
    b = fsk.KMeans(5, random_state=np.random.RandomState(7)).fit(X).cluster_centers_
    seed = int(np.random.RandomState(7).randint(np.iinfo(np.int32).max))
    assert np.array_equal(a, b) and np.array_equal(a, fastrbf.kmeans(X, 5, seed=seed).centers)
    g = fsk.KMeans(5, random_state=np.random.default_rng(3)).fit(X).cluster_centers_
    assert np.array_equal(g, fastrbf.kmeans(X, 5, seed=np.random.default_rng(3)).centers)


# ---------------------------------------------------------------- errors
def test_errors(data):
    X, y, _ = data
    with pytest.raises(TypeError, match="`random_state` must be None, an int >= 0, a numpy.random.RandomState"):
        fsk.KMeans(3, random_state="seed").fit(X)
    with pytest.raises(ValueError, match="`n_jobs` must be a positive int, a negative int"):
        fsk.KernelRidge(n_jobs=0).fit(X, y)
    with pytest.raises(TypeError, match="`n_jobs` must be an int or None"):
        fsk.KernelRidge(n_jobs=1.5).fit(X, y)
    with pytest.raises(ValueError, match=r"`kernel` must be one of .* or an alias"):
        fsk.Nystroem(kernel="chi3").fit(X)
    with pytest.raises(ValueError, match=r"`n_centers` \(81\) must not exceed the number of samples \(n_samples = 80\)"):
        fsk.RBFNetworkRegressor(81).fit(X, y)
    with pytest.raises(ValueError, match="`n_centers` must be an int >= 1; got 0"):
        fsk.RBFNetworkClassifier(0).fit(X, y > 0)
    with pytest.raises(ValueError, match=r"`n_clusters` \(81\) must not exceed the number of samples"):
        fsk.KMeans(81).fit(X)
    with pytest.raises(ValueError, match="`epsilon` must be given for the 'gaussian' kernel"):
        fsk.RBFInterpolatorRegressor("gaussian").fit(X, y)
    with pytest.raises(ValueError, match="`epsilon` must be a finite number > 0; got -1.0"):
        fsk.RBFInterpolatorRegressor("gaussian", epsilon=-1.0).fit(X, y)
    with pytest.raises(ValueError, match=r"`X` must have at least 4 samples .* degree 1 in 3 dimensions; got n_samples = 3"):
        fsk.RBFInterpolatorRegressor().fit(X[:3], y[:3])
    with pytest.raises(ValueError, match="`optimizer` must be 'fmin_l_bfgs_b' or None"):
        fsk.GaussianProcessRegressor("gaussian", optimizer="adam").fit(X, y)
    # the functional API's own messages come through
    with pytest.raises(ValueError, match="`gamma` must be a finite number > 0"):
        fsk.KernelRidge(gamma=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="`kind` must be one of"):
        fsk.RandomFourierFeatures(kind="sin").fit(X)
    with pytest.raises(ValueError, match="`n_components` must be an int >= 1; got 0"):
        fsk.Nystroem(n_components=0).fit(X)
    with pytest.raises(ValueError, match="`method` must be 'kmeans', 'random', 'rpcholesky' or 'auto'"):
        fsk.Nystroem(method="grid").fit(X)


def _fit(est, X, y, labels):
    if isinstance(est, fsk.RBFNetworkClassifier):
        return est.fit(X, labels)
    if isinstance(est, (fsk.KMeans, fsk.RandomFourierFeatures, fsk.Nystroem)):
        return est.fit(X)
    return est.fit(X, y)


# (estimator, the parameter set to a bad value, the value, exception, the estimator's name in the message)
_RENAMED = [
    (fsk.RBFInterpolatorRegressor(), "smoothing", -1.0, ValueError, r"`smoothing` must be finite and >= 0; got -1.0"),
    (fsk.RBFInterpolatorRegressor(), "smoothing", np.ones(3), ValueError,
     r"`smoothing` must be a scalar or have one value per row \(80\)"),
    (fsk.RBFInterpolatorRegressor(), "n_jobs", 0, ValueError, "`n_jobs` must be a positive int"),
    (fsk.GaussianProcessRegressor(), "n_restarts_optimizer", -1, ValueError,
     "`n_restarts_optimizer` must be an int >= 0; got -1"),
    (fsk.GaussianProcessRegressor("gaussian"), "theta", [1.0], ValueError,
     r"`theta` must have 2 values for the 'gaussian' kernel; got shape \(1,\)"),
    (fsk.GaussianProcessRegressor("gaussian"), "theta", [1.0, -1.0], ValueError, "`theta` must contain only finite values > 0"),
    (fsk.GaussianProcessRegressor("gaussian"), "theta", [1.0, 1e9], ValueError,
     r"The start \(theta\.\.\., noise\) = .* must lie inside `bounds`"),
    (fsk.GaussianProcessRegressor("gaussian"), "theta", "ab", TypeError, "`theta` must be None or an array of numbers; got 'ab'"),
    (fsk.GaussianProcessRegressor("gaussian"), "bounds", [[1.0, 2.0], [3.0]], TypeError, "`bounds` must be None or an array"),
    (fsk.GaussianProcessRegressor("gaussian", n_restarts_optimizer=1), "random_state", -1, ValueError,
     "`random_state` must be None, an int >= 0, a numpy.random.RandomState or a numpy.random.Generator; got -1"),
    (fsk.KMeans(3), "random_state", -1, ValueError, "`random_state` must be None, an int >= 0.*; got -1"),
    (fsk.KMeans(3), "random_state", True, TypeError, "`random_state` must be None, an int >= 0.*; got True"),
    (fsk.RBFNetworkRegressor(3), "random_state", -1, ValueError, "`random_state` must be None, an int >= 0"),
    (fsk.RandomFourierFeatures(), "random_state", -1, ValueError, "`random_state` must be None, an int >= 0"),
    (fsk.Nystroem(), "random_state", -2, ValueError, "`random_state` must be None, an int >= 0"),
    (fsk.KernelRidge(solver="nystrom-pcg", n_landmarks=5), "random_state", -1, ValueError,
     "`random_state` must be None, an int >= 0"),
    (fsk.KernelRidge(), "n_jobs", "a", TypeError, "`n_jobs` must be an int or None; got 'a'"),
    (fsk.KMeans(3), "n_jobs", 0, ValueError, "`n_jobs` must be a positive int"),
    (fsk.KernelRidge(kernel="poly"), "coef0", "a", TypeError, "`coef0` must be a finite number; got 'a'"),
    (fsk.Nystroem(), "coef0", np.nan, ValueError, "`coef0` must be a finite number; got nan"),
    (fsk.RBFNetworkRegressor(3), "alpha", -1.0, ValueError, "`alpha` must be finite and >= 0; got -1.0"),
    (fsk.RBFNetworkRegressor(3), "alpha", [1.0, 2.0], TypeError, "`alpha` must be a number"),
    (fsk.RBFNetworkRegressor(3), "gamma", "a", TypeError, "`gamma` must be a number or a 1-D array"),
    (fsk.RBFNetworkRegressor(3), "gamma", np.ones(4), ValueError, r"`gamma` must be a scalar or a 1-D array .* \(3\)"),
    (fsk.RBFNetworkRegressor(3), "centers", "grid", ValueError, '`centers` must be "kmeans", "all", "forward" or an array'),
    (fsk.RBFNetworkRegressor(3), "n_centers", 2.5, TypeError, "`n_centers` must be an int >= 1; got 2.5"),
    (fsk.RBFNetworkRegressor(3, kernel="cubic"), "learn_gamma", True, ValueError,
     "`learn_gamma` needs the 'gaussian' `kernel`; got kernel='cubic'"),
    (fsk.RBFNetworkClassifier(3), "max_iter", 0, ValueError, "`max_iter` must be an int >= 1; got 0"),
    (fsk.RandomFourierFeatures(), "n_components", 2**62, MemoryError,
     r"RandomFourierFeatures: the 3 x \d+ random weights needs .* use fewer `n_components`"),
]


@pytest.mark.parametrize("est,param,value,exc,match", _RENAMED,
                         ids=[f"{type(c[0]).__name__}-{c[1]}-{i}" for i, c in enumerate(_RENAMED)])
def test_errors_name_the_estimator_parameter(data, est, param, value, exc, match):
    X, y, labels = data
    with pytest.raises(exc, match=match) as info:
        _fit(clone(est).set_params(**{param: value}), X, y, labels)
    # no fastrbf name of a renamed parameter is left in the message
    for name in ("alpha", "seed", "n_threads", "theta0", "n_restarts", "gamma", "bias", "Y"):
        if name not in est.get_params():
            assert f"`{name}`" not in str(info.value)


def test_interpolator_singular_system_names_smoothing_and_epsilon():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 1.0]])  # a duplicate point
    with pytest.raises(fastrbf.NotPositiveDefiniteError, match="duplicate points with `smoothing` = 0") as info:
        fsk.RBFInterpolatorRegressor("gaussian", epsilon=1.0).fit(X, [0.0, 1.0, 1.0, 2.0, 2.0])
    msg = str(info.value)
    assert "a larger `epsilon`" in msg and "a `smoothing` > 0" in msg
    assert "`alpha`" not in msg and "`gamma`" not in msg


def test_kernel_ridge_singular_system_offers_the_estimator_remedies():
    X = np.array([[0.0], [1.0], [1.0]])
    with pytest.raises(fastrbf.NotPositiveDefiniteError, match="Remedies: a larger `alpha`") as info:
        fsk.KernelRidge(alpha=0.0, kernel="linear", gamma=1.0).fit(X, [0.0, 1.0, 1.0])
    assert "jitter" not in str(info.value)


def test_interpolator_needs_a_radial_kernel(data):
    X, y, _ = data
    for kernel in ("polynomial", "poly", "tanh", "sigmoid"):
        with pytest.raises(ValueError, match=rf"`kernel` must be a radial kernel for interpolation .*; got '{kernel}'"):
            fsk.RBFInterpolatorRegressor(kernel).fit(X, y)
        with pytest.raises(ValueError, match="`kernel` must be a radial kernel"):
            fsk.RBFInterpolatorRegressor(kernel, epsilon=1.0).fit(X, y)


@pytest.mark.parametrize("eps,exc,match", [
    (1e160, ValueError, r"`epsilon` must be a number whose square is a finite number > 0 .*; got 1e\+160"),
    (1e-170, ValueError, r"`epsilon` must be a number whose square is a finite number > 0 .*; got 1e-170"),
    (np.inf, ValueError, "`epsilon` must be a finite number > 0; got inf"),
    (0.0, ValueError, "`epsilon` must be a finite number > 0; got 0.0"),
    ("1", TypeError, "`epsilon` must be a finite number > 0; got '1'"),
    (True, TypeError, "`epsilon` must be a finite number > 0; got True"),
])
def test_interpolator_epsilon(data, eps, exc, match):
    X, y, _ = data
    with pytest.raises(exc, match=match):
        fsk.RBFInterpolatorRegressor("gaussian", epsilon=eps).fit(X, y)


_BOOLS = [(fsk.RBFNetworkRegressor(3), "fit_intercept"), (fsk.RBFNetworkRegressor(3), "learn_gamma"),
          (fsk.RBFNetworkClassifier(3), "fit_intercept"), (fsk.RBFNetworkClassifier(3), "learn_gamma"),
          (fsk.KernelRidge(), "fit_intercept"), (fsk.GaussianProcessRegressor(), "normalize_y")]


@pytest.mark.parametrize("est,param", _BOOLS, ids=[f"{type(e).__name__}-{p}" for e, p in _BOOLS])
@pytest.mark.parametrize("value", ["yes", 1, None, np.array([True])])
def test_bool_parameters_are_checked(data, est, param, value):
    X, y, labels = data
    with pytest.raises(TypeError, match=rf"`{param}` must be a bool \(True or False\); got "):
        _fit(clone(est).set_params(**{param: value}), X, y, labels)
    # NumPy's bools are bools
    _fit(clone(est).set_params(**{param: np.False_}), X, y, labels)


def test_predict_checks_return_std_and_n_jobs(data):
    X, y, _ = data
    gp = fsk.GaussianProcessRegressor(optimizer=None).fit(X[:20], y[:20])
    with pytest.raises(TypeError, match="`return_std` must be a bool"):
        gp.predict(X, return_std="yes")
    km = fsk.KMeans(3, random_state=0).fit(X)
    km.set_params(n_jobs=0)
    with pytest.raises(ValueError, match="`n_jobs` must be a positive int"):
        km.predict(X)


def test_network_parameters_checked_before_the_kmeans(data, monkeypatch):
    X, y, _ = data

    def no_kmeans(*args, **kwargs):
        raise AssertionError("k-means ran before the parameters were checked")

    monkeypatch.setattr(_network, "kmeans", no_kmeans)
    for bad in ({"alpha": -1.0}, {"gamma": -2.0}, {"kernel": "chi2"}, {"fit_intercept": "yes"},
                {"random_state": -1}, {"n_jobs": 0}, {"learn_gamma": True, "kernel": "cubic"}):
        with pytest.raises((ValueError, TypeError), match=f"`{next(iter(bad))}`"):
            fsk.RBFNetworkRegressor(3, **bad).fit(X, y)


def test_fit_that_would_overflow_is_refused():
    # squared distances overflow float64: refused in the name of `X` (or `centers`) before anything else
    huge = np.array([[1.25e159], [-1.32e159], [0.3e159]])
    too_big = (r"must have values of magnitude at most 3\.35e\+153 \(float64 squared distances over 1 feature\(s\) "
               r"would overflow\); got 1\.32e\+159\. Rescale the data \(e\.g\. standardise it\)\.")
    for est in (fsk.RBFInterpolatorRegressor(), fsk.KernelRidge(alpha=1.0), fsk.RBFNetworkRegressor(2, random_state=0),
                fsk.RBFNetworkRegressor(centers="all", kernel="poly", gamma=1.0), fsk.GaussianProcessRegressor()):
        with pytest.raises(ValueError, match="^`X` " + too_big):
            est.fit(huge, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="^`X` " + too_big):
        fsk.Nystroem(kernel="poly", n_components=3).fit(huge)
    with pytest.raises(ValueError, match="^`centers` " + too_big):
        fsk.RBFNetworkRegressor(centers=huge[:2], gamma=1.0).fit(huge * 1e-6, [1.0, 2.0, 3.0])
    # within that limit, the kernel values of a growing kernel overflow: refused as such
    X = huge * 1e-6
    with pytest.raises(ValueError, match=r"`X` spans too wide a range for the 'thin_plate_spline' kernel: .* "
                                         "rescale `X` or use a smaller `epsilon`"):
        fsk.RBFInterpolatorRegressor().fit(X, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="`X` spans too wide a range for the 'cubic' kernel.* smaller `gamma`"):
        fsk.KernelRidge(kernel="cubic", alpha=1.0).fit(X, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="`X` spans too wide a range for the 'polynomial' kernel"):
        fsk.RBFNetworkRegressor(centers="all", kernel="poly", gamma=1.0).fit(X, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="`X` spans too wide a range for the 'polynomial' kernel"):
        fsk.Nystroem(kernel="poly", n_components=3).fit(X)
    # decaying kernels are fine at any spread within that limit
    pred = fsk.KernelRidge(alpha=1.0).fit(X, [1.0, 2.0, 3.0]).predict(X)
    np.testing.assert_allclose(pred, [0.5, 1.0, 1.5])  # K = I: y / (1 + alpha)
    # targets whose standard deviation overflows: normalize_y fits them in units of max |y|
    # (fastrbf.gp_regression), so the model is exactly the scaled model of the scaled targets
    y = np.array([1.25e159, -1.32e159, 0.3e159]) * 1e149
    Xs = X * 1e-153
    gp = fsk.GaussianProcessRegressor("gaussian", optimizer=None, normalize_y=True).fit(Xs, y)
    small = fsk.GaussianProcessRegressor("gaussian", optimizer=None, normalize_y=True).fit(Xs, y / 2.0**1000)
    mean = gp.predict(Xs)
    assert np.isfinite(mean).all() and np.isfinite(gp.model_.y_std)
    np.testing.assert_array_equal(mean, small.predict(Xs) * 2.0**1000)


def test_gp_kernel_and_network_kmeans_names(data):
    X, y, _ = data
    with pytest.raises(ValueError,
                       match=r"`kernel` must be 'gaussian', 'prml', None or a scikit-learn kernel object; got \[1.0\]"):
        fsk.GaussianProcessRegressor(kernel=[1.0]).fit(X, y)
    with pytest.raises(TypeError, match="`alpha` must be a number or a 1-D array of numbers"):
        fsk.KernelRidge(alpha=[[1.0, 2.0]]).fit(X, y)
    # ragged: a ValueError naming it, as every ragged input (fastrbf.linalg's rule)
    with pytest.raises(ValueError, match=r"^`alpha` must be a rectangular array of real numbers; got a ragged"):
        fsk.KernelRidge(alpha=[[1.0], [1.0, 2.0]]).fit(X, y)
    with pytest.raises(TypeError, match="`alpha` must be a number; got"):
        fsk.RBFNetworkRegressor(3, alpha=[[1.0], [1.0, 2.0]]).fit(X, y)
    two = np.repeat(X[:2], 5, axis=0)  # 2 distinct points
    with pytest.raises(ValueError, match=r"^`X` has fewer distinct points than `n_centers` \(3\)"):
        fsk.RBFNetworkRegressor(3, random_state=0).fit(two, np.arange(10.0))
    with pytest.raises(ValueError, match=r"^`X` has fewer distinct points than `n_components` \(3\)"):
        fsk.Nystroem(n_components=3, method="kmeans", random_state=0).fit(two)
    for est in (fsk.KernelRidge(gamma=np.ones(3)), fsk.Nystroem(gamma=[[1.0], [1.0, 2.0]])):
        with pytest.raises(TypeError, match=r"`gamma` must be a finite number > 0 \(or None\)"):
            _fit(est, X, y, None)


def test_no_warnings_on_good_data(data):
    X, y, labels = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for est in ESTIMATORS:
            est = clone(est)
            if isinstance(est, fsk.GaussianProcessRegressor):
                est.set_params(noise=0.05, random_state=0)
            est.fit(X, labels if isinstance(est, fsk.RBFNetworkClassifier) else y)


def test_guide_sklearn_example_runs():
    text = (ROOT / "docs" / "guide.md").read_text()
    code = re.search(r"## scikit-learn estimators\n.*?```python\n(.*?)```", text, re.DOTALL).group(1)
    namespace = {}
    exec(compile(code, "docs/guide.md", "exec"), namespace)
    assert isinstance(namespace["net"], fastrbf.RBFNetwork)
    assert namespace["search"].best_score_ > 0.9
