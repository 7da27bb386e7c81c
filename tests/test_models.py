import pickle
import warnings

import numpy as np
import pytest
from scipy.interpolate import RBFInterpolator
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.metrics.pairwise import rbf_kernel

from fastrbf import NotPositiveDefiniteError, interpolate, kernel_ridge, rbf_network, reference
from fastrbf.models import network as models


def _rel(a, b):
    a = np.asarray(a, dtype=np.float64)
    return np.abs(a - b).max() / np.abs(b).max()


# ---------------------------------------------------------------- kernel ridge
@pytest.mark.parametrize("kernel, sk_kernel, params", [
    ("gaussian", "rbf", {}),
    ("polynomial", "polynomial", {"degree": 2, "coef0": 1.0}),
])
@pytest.mark.parametrize("ycols", [None, 2])
def test_kernel_ridge_matches_sklearn(rng, kernel, sk_kernel, params, ycols):
    X = rng.random((300, 4))
    Y = np.sin(3 * X[:, 0]) if ycols is None else np.c_[np.sin(3 * X[:, 0]), X[:, 1] * X[:, 2]]
    Xq = rng.random((200, 4))
    m = kernel_ridge(X, Y, kernel=kernel, gamma=0.7, alpha=1e-3, **params)
    sk = KernelRidge(alpha=1e-3, kernel=sk_kernel, gamma=0.7, **params).fit(X, Y)
    assert m.predict(Xq).shape == sk.predict(Xq).shape
    assert _rel(m.predict(Xq), sk.predict(Xq)) < 1e-8
    assert _rel(m.weights.reshape(sk.dual_coef_.shape), sk.dual_coef_) < 1e-8
    if kernel == "gaussian":
        ref = reference.kernel_ridge(X, Y, gamma=0.7, alpha=1e-3)
        assert _rel(m.weights.reshape(ref.shape), ref) < 1e-8


def test_kernel_ridge_model_is_small_and_inputs_kept(rng):
    X = rng.random((200, 3))
    y = rng.standard_normal(200)
    X0, y0 = X.copy(), y.copy()
    m = kernel_ridge(X, y, gamma=2.0, alpha=1e-2)
    assert np.array_equal(X, X0) and np.array_equal(y, y0)
    big = [k for k, v in vars(m).items() if isinstance(v, np.ndarray) and v.size >= 200 * 200]
    assert big == []
    m2 = pickle.loads(pickle.dumps(m))
    Xq = rng.random((50, 3))
    assert np.array_equal(m2.predict(Xq), m.predict(Xq))


def test_kernel_ridge_intercept_alpha_vector_float32(rng):
    X = rng.random((150, 2))
    y = 5.0 + np.cos(4 * X[:, 0])
    m = kernel_ridge(X, y, gamma=3.0, alpha=1e-3, fit_intercept=True)
    assert np.isclose(m.intercept[0], y.mean())
    ref = reference.kernel_ridge(X, y - y.mean(), gamma=3.0, alpha=1e-3)
    assert _rel(m.weights[:, 0], ref) < 1e-8
    a = rng.uniform(1e-3, 1e-2, 150)
    mv = kernel_ridge(X, y, gamma=3.0, alpha=a)
    assert _rel(mv.weights[:, 0], reference.kernel_ridge(X, y, gamma=3.0, alpha=a)) < 1e-8
    m32 = kernel_ridge(X.astype(np.float32), y.astype(np.float32), gamma=3.0, alpha=1e-3)
    p32 = m32.predict(X.astype(np.float32))
    assert p32.dtype == np.float32
    assert m32.predict(X).dtype == np.float64
    assert _rel(p32, kernel_ridge(X, y, gamma=3.0, alpha=1e-3).predict(X)) < 1e-4


def test_kernel_ridge_bad_input(rng):
    X = rng.random((20, 2))
    y = rng.random(20)
    Xd = X.copy()
    Xd[5] = Xd[2]
    with pytest.raises(NotPositiveDefiniteError, match="larger `alpha`.*duplicate points"):
        kernel_ridge(Xd, y, gamma=1.0, alpha=0.0)
    with pytest.raises(ValueError, match=r"`Y` must have one row per row of `X` \(20\); got shape \(19,\)"):
        kernel_ridge(X, y[:19], gamma=1.0, alpha=1.0)
    with pytest.raises(ValueError, match="`Y` must contain only finite values"):
        kernel_ridge(X, np.r_[y[:19], np.nan], gamma=1.0, alpha=1.0)
    with pytest.raises(ValueError, match=r"`gamma` must be a finite number > 0; got -1"):
        kernel_ridge(X, y, gamma=-1, alpha=1.0)
    with pytest.raises(TypeError, match="`gamma` must be a number here"):
        kernel_ridge(X, y, gamma=np.ones(20), alpha=1.0)
    with pytest.raises(ValueError, match="`alpha` must be finite and >= 0"):
        kernel_ridge(X, y, gamma=1.0, alpha=-1.0)
    with pytest.raises(ValueError, match=r"`X` must have 2 features \(as the training data\)"):
        kernel_ridge(X, y, gamma=1.0, alpha=1.0).predict(np.ones((3, 3)))


# ---------------------------------------------------------------- interpolation
_CASES = [
    ("thin_plate_spline", 1.0, None),
    ("thin_plate_spline", 1.0, 2),
    ("cubic", 1.0, None),
    ("quintic", 1.0, None),
    ("linear", 1.0, None),
    ("multiquadric", 400.0, None),
    ("gaussian", 400.0, None),
    ("gaussian", 400.0, -1),
    ("gaussian", 400.0, 1),
    ("inverse_multiquadric", 400.0, None),
    ("inverse_quadratic", 400.0, 0),
]


@pytest.mark.parametrize("kernel, gamma, degree", _CASES)
@pytest.mark.parametrize("smoothing", [0.0, 1e-3])
def test_interpolate_matches_scipy(rng, kernel, gamma, degree, smoothing):
    X = rng.random((250, 2))
    Y = np.c_[np.sin(6 * X[:, 0]) * np.cos(4 * X[:, 1]), X[:, 0] ** 2]
    Xq = rng.random((300, 2))
    sp = RBFInterpolator(X, Y, kernel=kernel, epsilon=np.sqrt(gamma), degree=degree, smoothing=smoothing)
    m = interpolate(X, Y, kernel=kernel, gamma=gamma, degree=degree, alpha=smoothing)
    assert _rel(m.predict(Xq), sp(Xq)) < 1e-8
    if smoothing == 0.0:  # E_in = 0: the data are reproduced
        assert _rel(m.predict(X), Y) < 1e-10


def test_interpolate_reference_per_point_smoothing_single_output(rng):
    X = rng.random((120, 3))
    y = np.exp(X[:, 0]) - X[:, 2]
    Xq = rng.random((40, 3))
    a = rng.uniform(0, 1e-2, 120)
    m = interpolate(X, y, kernel="gaussian", gamma=9.0, degree=1, alpha=a)
    ref = reference.interpolate(X, y, Xq, kernel="gaussian", gamma=9.0, degree=1, alpha=a)
    assert m.predict(Xq).shape == (40,)
    assert _rel(m.predict(Xq), ref) < 1e-8
    sp = RBFInterpolator(X, y, kernel="gaussian", epsilon=3.0, degree=1, smoothing=a)
    assert _rel(m.predict(Xq), sp(Xq)) < 1e-8
    m2 = pickle.loads(pickle.dumps(m))
    assert np.array_equal(m2.predict(Xq), m.predict(Xq))
    m32 = interpolate(X.astype(np.float32), y.astype(np.float32), kernel="gaussian", gamma=9.0, degree=1)
    assert m32.predict(Xq.astype(np.float32)).dtype == np.float32


def test_interpolate_below_min_degree_warns_and_matches_scipy(rng):
    X = rng.random((60, 2))
    y = np.sin(3 * X[:, 0])
    Xq = rng.random((20, 2))
    with pytest.warns(UserWarning, match="`degree` should not be below 1"):
        m = interpolate(X, y, kernel="thin_plate_spline", degree=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sp = RBFInterpolator(X, y, kernel="thin_plate_spline", degree=0)
    assert _rel(m.predict(Xq), sp(Xq)) < 1e-8


def test_interpolate_bad_input(rng):
    X = rng.random((30, 2))
    y = rng.random(30)
    Xd = X.copy()
    Xd[9] = Xd[4]
    with pytest.raises(NotPositiveDefiniteError, match="duplicate points with `alpha` = 0.*`alpha` > 0"):
        interpolate(Xd, y, kernel="gaussian", gamma=50.0)
    interpolate(Xd, y, kernel="gaussian", gamma=50.0, alpha=1e-6)  # smoothing cures it
    with pytest.raises(ValueError, match="`gamma` must be given for the 'gaussian' kernel"):
        interpolate(X, y, kernel="gaussian")
    with pytest.raises(ValueError, match="`kernel` must be a radial kernel"):
        interpolate(X, y, kernel="polynomial", gamma=1.0)
    with pytest.raises(ValueError, match="At least 6 data points are required when `degree` is 2"):
        interpolate(X[:5], y[:5], degree=2)
    line = np.c_[np.linspace(0, 1, 10), np.linspace(0, 1, 10)]
    with pytest.raises(np.linalg.LinAlgError, match="polynomial matrix of degree 1 of `X` is singular"):
        interpolate(line, np.arange(10.0))
    # the local path refuses the same points (each neighbourhood is collinear too), before any query
    with pytest.raises(np.linalg.LinAlgError, match="does not have full column rank"):
        interpolate(line, np.arange(10.0), neighbors=4)
    with pytest.raises(ValueError, match="`degree` must be an int >= -1"):
        interpolate(X, y, degree=-2)
    with pytest.raises(ValueError, match="`Y` must contain only finite values"):
        interpolate(X, np.r_[y[:29], np.inf])


# ---------------------------------------------------------------- RBF networks
def test_caltech_forum_example():
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    net = rbf_network(X, [1.0, -1.0, -1.0, 1.0], centers=np.array([[0.0, 0.2], [1.0, 0.7]]), gamma=1.0)
    assert np.allclose(net.bias, [-7.848], atol=5e-4)
    assert np.allclose(net.weights[:, 0], [7.397, 7.823], atol=5e-4)


@pytest.mark.parametrize("alpha", [0.0, 1e-3])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("per_center", [False, True])
def test_rbf_network_matches_reference(rng, monkeypatch, alpha, bias, per_center):
    # small chunks and groups: many chunks per group and many groups
    monkeypatch.setattr(models, "TSQR_CHUNK", 97)
    monkeypatch.setattr(models, "TSQR_GROUP_CHUNKS", 3)
    X = rng.random((2000, 3))
    Y = np.c_[np.sin(5 * X[:, 0]), X[:, 1] ** 2 - X[:, 2]]
    C = X[rng.choice(2000, 25, replace=False)]
    g = rng.uniform(2, 8, 25) if per_center else 4.0
    net = rbf_network(X, Y, centers=C, gamma=g, alpha=alpha, bias=bias)
    W, b = reference.rbf_network(X, Y, C, gamma=g, alpha=alpha, bias=bias)
    assert _rel(net.weights, W) < 1e-8
    assert np.abs(net.bias - b).max() <= 1e-8 * np.abs(W).max()
    Xq = rng.random((100, 3))
    Phi = reference.rbf_design(Xq, C, gamma=g)
    assert _rel(net.predict(Xq), Phi @ W + b) < 1e-8


def test_rbf_network_matches_lstsq_and_sklearn_ridge(rng):
    X = rng.random((3000, 4))
    y = np.sin(4 * X[:, 0]) + X[:, 3]
    C = X[:40]
    Phi = rbf_kernel(X, C, gamma=3.0)
    net = rbf_network(X, y, centers=C, gamma=3.0)
    sol = np.linalg.lstsq(np.c_[Phi, np.ones(3000)], y, rcond=None)[0]
    assert _rel(np.r_[net.weights[:, 0], net.bias], sol) < 1e-8
    ridge = Ridge(alpha=0.5).fit(Phi, y)
    net2 = rbf_network(X, y, centers=C, gamma=3.0, alpha=0.5)
    assert _rel(net2.weights[:, 0], ridge.coef_) < 1e-8
    assert np.isclose(net2.bias[0], ridge.intercept_, rtol=1e-8, atol=1e-10)


def test_rbf_network_ill_conditioned_does_not_blow_up(rng):
    X = rng.random((2000, 2))
    y = np.sin(3 * X[:, 0])
    C = X[:60]
    net = rbf_network(X, y, centers=C, gamma=1e-3)  # nearly collinear columns
    Phi = np.c_[reference.rbf_design(X, C, gamma=1e-3), np.ones(2000)]
    sol = np.linalg.lstsq(Phi, y, rcond=None)[0]
    r_ours = np.linalg.norm(net.predict(X) - y)
    r_lstsq = np.linalg.norm(Phi @ sol - y)
    assert np.all(np.isfinite(net.weights))
    assert r_ours <= r_lstsq * (1 + 1e-4) + 1e-12  # rank cut-offs differ slightly
    assert np.linalg.norm(net.weights) <= 10 * np.linalg.norm(sol[:-1])


def test_rbf_network_threads_bitwise_and_kmeans_centres(rng):
    X = rng.random((5000, 3))
    y = np.cos(3 * X[:, 1])
    a = rbf_network(X, y, n_centers=20, gamma=5.0, seed=3, n_threads=1)
    b = rbf_network(X, y, n_centers=20, gamma=5.0, seed=3, n_threads=2)
    assert np.array_equal(a.centers, b.centers)
    assert np.array_equal(a.weights, b.weights) and np.array_equal(a.bias, b.bias)
    assert a.centers.shape == (20, 3) and a.gamma.shape == (20,)
    full = rbf_network(X[:300], y[:300], centers="all", gamma=5.0, alpha=1e-8)
    assert full.centers.shape == (300, 3)
    assert _rel(full.predict(X[:300]), y[:300]) < 1e-3
    net = pickle.loads(pickle.dumps(a))
    assert np.array_equal(net.predict(X[:50]), a.predict(X[:50]))


def test_rbf_network_classification_digits_vs_sklearn_pipeline():
    digits = load_digits()
    X, y = digits.data, digits.target
    X = X / 16.0
    tr, te = slice(0, 1300), slice(1300, None)
    C = KMeans(n_clusters=100, n_init=1, random_state=0).fit(X[tr]).cluster_centers_
    gamma = 0.05
    sk = RidgeClassifier(alpha=1e-2).fit(rbf_kernel(X[tr], C, gamma=gamma), y[tr])
    sk_acc = (sk.predict(rbf_kernel(X[te], C, gamma=gamma)) == y[te]).mean()
    net = rbf_network(X[tr], y[tr], centers=C, gamma=gamma, alpha=1e-2, classify=True)
    acc = (net.predict(X[te]) == y[te]).mean()
    assert net.decision_function(X[te]).shape == (X[te].shape[0], 10)
    assert acc >= sk_acc - 0.01 and acc > 0.9


def test_rbf_network_binary_labels(rng):
    X = rng.random((400, 2))
    lab = np.where(X[:, 0] + X[:, 1] > 1, "up", "down")
    net = rbf_network(X, lab, n_centers=10, gamma=4.0, classify=True, seed=0)
    assert net.decision_function(X).shape == (400,)
    assert set(net.predict(X)) <= {"up", "down"}
    assert (net.predict(X) == lab).mean() > 0.95
    # the sign rule: positive scores are the second class
    s = net.decision_function(X)
    assert np.array_equal(net.predict(X) == "up", s > 0)


def test_rbf_network_float32(rng):
    X = rng.random((500, 2)).astype(np.float32)
    y = np.sin(X[:, 0]).astype(np.float32)
    net = rbf_network(X, y, n_centers=8, gamma=2.0, seed=0)
    assert net.predict(X).dtype == np.float32
    assert net.predict(X.astype(np.float64)).dtype == np.float64


def test_rbf_network_bad_input(rng):
    X = rng.random((30, 2))
    y = rng.random(30)
    with pytest.raises(ValueError, match=r"`n_centers` must be an int in \[1, n_samples\] = \[1, 30\]; got 31"):
        rbf_network(X, y, n_centers=31, gamma=1.0)
    with pytest.raises(ValueError, match=r"`gamma` must be a scalar or a 1-D array with one value per column of the result \(5\)"):  # noqa: E501
        rbf_network(X, y, centers=X[:5], gamma=np.ones(4))
    with pytest.raises(ValueError, match="`Y` must contain only finite values"):
        rbf_network(X, np.r_[y[:29], np.nan], n_centers=3, gamma=1.0)
    with pytest.raises(ValueError, match=r"`Y` must have one row per row of `X` \(30\)"):
        rbf_network(X, y[:10], n_centers=3, gamma=1.0)
    with pytest.raises(ValueError, match="`centers` must have the same number of features as `X`"):
        rbf_network(X, y, centers=np.ones((3, 3)), gamma=1.0)
    with pytest.raises(ValueError, match='`n_centers` must be given with centers="kmeans"'):
        rbf_network(X, y, gamma=1.0)
    with pytest.raises(ValueError, match="at least 2 classes"):
        rbf_network(X, np.zeros(30), n_centers=3, gamma=1.0, classify=True)
    with pytest.raises(ValueError, match='`centers` must be "kmeans", "all" or an array'):
        rbf_network(X, y, centers="grid", gamma=1.0)
    with pytest.raises(ValueError, match="`alpha` must be finite and >= 0"):
        rbf_network(X, y, n_centers=3, gamma=1.0, alpha=-1.0)


def test_kernel_ridge_jitter_auto_on_duplicates(rng):
    # the Gram matrix is built as one triangle; the retries need the mirrored copy
    X = rng.random((40, 2))
    X[13] = X[4]
    y = rng.random(40)
    m = kernel_ridge(X, y, gamma=2.0, alpha=0.0, jitter="auto")
    assert m.jitter > 0
    ref = kernel_ridge(X, y, gamma=2.0, alpha=m.jitter)
    assert np.array_equal(m.weights, ref.weights)


# ---------------------------------------------------------------- learning gamma
def _multiscale(rng, n):
    # the target varies fast on [0, 0.3) and slowly on [0.3, 1]: one width cannot fit both
    X = rng.random((n, 1))
    f = np.where(X[:, 0] < 0.3, np.sin(60 * X[:, 0]), np.sin(4 * X[:, 0]))
    return X, f


def test_gamma_gradient_matches_finite_differences(rng):
    X, y = _multiscale(rng, 1500)
    C = np.linspace(0, 1, 15)[:, None]
    Xt = np.ascontiguousarray(X.T)
    g = rng.uniform(50, 500, 15)
    W, b = models._solve_weights(C, X, Xt, g, models.KERNELS["gaussian"], 1.0, 3, y[:, None].copy(), 1e-6, True, None)
    E, grad = models._gamma_objective(C, Xt, y[:, None], g, W, b, True, None)
    h = 1e-6
    for j in (0, 7, 14):
        gp, gm = g.copy(), g.copy()
        gp[j] *= np.exp(h)
        gm[j] *= np.exp(-h)
        fd = (models._gamma_objective(C, Xt, y[:, None], gp, W, b, False, None)[0]
              - models._gamma_objective(C, Xt, y[:, None], gm, W, b, False, None)[0]) / (2 * h)
        assert grad[j] == pytest.approx(fd, rel=1e-5, abs=1e-8)
    Phi = reference.rbf_design(X, C, gamma=g)
    assert E == pytest.approx(np.sum((Phi @ W[:, 0] + b[0] - y) ** 2), rel=1e-12)


def test_learn_gamma_from_a_poor_start_reaches_the_grid_best(rng):
    X, y = _multiscale(rng, 3000)
    y = y + 0.05 * rng.standard_normal(3000)
    Xv, yv = _multiscale(rng, 2000)
    C = np.linspace(0, 1, 40)[:, None]

    def heldout(net):
        return np.mean((net.predict(Xv) - yv) ** 2)

    grid = [10.0**e for e in np.arange(0.0, 5.01, 0.25)]
    best = min(heldout(rbf_network(X, y, centers=C, gamma=g)) for g in grid)
    start = rbf_network(X, y, centers=C, gamma=1.0)
    net = rbf_network(X, y, centers=C, gamma=1.0, learn_gamma=True)
    assert np.all(np.diff(net.error_history) <= 0)
    train = lambda m: np.mean((m.predict(X) - y) ** 2)  # noqa: E731
    assert train(net) <= train(start)
    assert heldout(net) <= 1.05 * best
    # one width per centre beats the best single width on this target
    per = rbf_network(X, y, centers=C, gamma=1.0, learn_gamma=True, per_center=True)
    assert per.gamma.shape == (40,) and np.ptp(np.log(per.gamma)) > 0.1
    assert heldout(per) < best


def test_learn_gamma_with_validation_and_ridge(rng):
    X, y = _multiscale(rng, 1500)
    Xv, yv = _multiscale(rng, 500)
    C = np.linspace(0, 1, 20)[:, None]
    net = rbf_network(X, y, centers=C, gamma=10.0, alpha=1e-6, learn_gamma=True, validation=(Xv, yv))
    assert net.error_history[-1] <= net.error_history[0]
    assert np.all(np.diff(net.error_history) <= 0)
    a = rbf_network(X, y, centers=C, gamma=10.0, alpha=1e-6, learn_gamma=True, per_center=True, n_threads=1)
    b = rbf_network(X, y, centers=C, gamma=10.0, alpha=1e-6, learn_gamma=True, per_center=True, n_threads=2)
    assert np.array_equal(a.gamma, b.gamma) and np.array_equal(a.weights, b.weights)
    with pytest.raises(ValueError, match="`learn_gamma` needs the 'gaussian' kernel"):
        rbf_network(X, y, centers=C, gamma=1.0, kernel="inverse_quadratic", learn_gamma=True)
    with pytest.raises(ValueError, match=r"`validation Y` must have one row per row of `validation X` \(500\)"):
        rbf_network(X, y, centers=C, gamma=1.0, learn_gamma=True, validation=(Xv, yv[:10]))
    with pytest.raises(ValueError, match=r"`validation` targets must have shape \(500, 1\); got \(500, 2\)"):
        rbf_network(X, y, centers=C, gamma=1.0, learn_gamma=True, validation=(Xv, np.c_[yv, yv]))
    lab = np.where(X[:, 0] > 0.5, "hi", "lo")
    vlab = np.where(Xv[:, 0] > 0.5, "hi", "lo")
    with pytest.raises(ValueError, match="`validation` labels must be classes seen in `Y`"):
        rbf_network(X, lab, centers=C, gamma=10.0, classify=True, learn_gamma=True,
                    validation=(Xv, np.concatenate([vlab[:-1], ["mid"]])))
    # validation labels of one class only are coded with the training classes
    net = rbf_network(X, lab, centers=C, gamma=10.0, classify=True, learn_gamma=True,
                      validation=(Xv[Xv[:, 0] > 0.5], vlab[Xv[:, 0] > 0.5]))
    assert (net.predict(Xv) == vlab).mean() > 0.9


# ---------------------------------------------------------------- bad input, ownership, conditioning
def test_interpolate_high_degree_is_refused_before_listing_monomials(rng):
    # C(10 + 40, 10) ~ 1e10 monomials: counted (not listed) and refused at once
    with pytest.raises(ValueError, match=r"At least 10272278170 data points are required when `degree` is 40 "
                                         r"and the number of dimensions is 10; got 20"):
        interpolate(rng.random((20, 10)), np.ones(20), degree=40)


def _mutate_and_compare(fit, arrays, Xq):
    model = fit()
    before = model.predict(Xq)
    for a in arrays:
        a += 1.0
    assert np.array_equal(model.predict(Xq), before)


def test_models_own_their_arrays(rng):
    X, y, Xq = rng.random((60, 2)), rng.random(60), rng.random((10, 2))
    X1 = X.copy()
    _mutate_and_compare(lambda: kernel_ridge(X1, y, gamma=2.0, alpha=1e-2), [X1], Xq)
    X2 = X.copy()
    _mutate_and_compare(lambda: kernel_ridge(X2, y, gamma=2.0, alpha=1e-2, solver="cholesky"), [X2], Xq)
    X3 = X.copy()
    _mutate_and_compare(lambda: interpolate(X3, y), [X3], Xq)
    X4 = X.copy()
    _mutate_and_compare(lambda: interpolate(X4, y, kernel="gaussian", gamma=30.0, degree=-1), [X4], Xq)
    L = X[:15].copy()
    _mutate_and_compare(lambda: kernel_ridge(X, y, gamma=2.0, alpha=1e-2, solver="nystrom-pcg", landmarks=L),
                        [L], Xq)
    C, g = X[:8].copy(), np.full(8, 3.0)
    _mutate_and_compare(lambda: rbf_network(X, y, centers=C, gamma=g), [C, g], Xq)
    # what fastrbf made itself is not copied again
    m = kernel_ridge(X.astype(np.float32), y, gamma=2.0, alpha=1e-2)
    assert m.centers.dtype == np.float64 and m.centers.base is None


def _near_duplicates(rng):
    # two of the points 3e-7 apart: condition number ~4e13, weights ~1e13
    return np.array([[0.0], [3e-7], [1.0], [2.0]]), np.array([0.0, 1.0, 2.0, 3.0])


def test_ill_conditioned_exact_solves_warn(rng):
    from scipy.linalg import LinAlgWarning

    X, y = _near_duplicates(rng)
    with pytest.warns(LinAlgWarning, match=r"K\(X, X\) \+ alpha I is ill-conditioned .* reproduces its right-hand "
                                           r"side only to .* Remedies: a larger `alpha`"):
        kernel_ridge(X, y, gamma=1.0, alpha=0.0)
    with pytest.warns(LinAlgWarning, match=r"interpolation system \(on the polynomial null space\) is ill-conditioned"
                                           r".*smoothing `alpha` > 0"):
        interpolate(X, y, kernel="gaussian", gamma=1.0)
    with pytest.warns(LinAlgWarning, match=r"interpolation matrix K\(X, X\) \+ diag\(alpha\) is ill-conditioned"):
        interpolate(X, y, kernel="gaussian", gamma=1.0, degree=-1)
    # the warning tells the truth: the fit misses its own targets by more than 1e-6 relative
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinAlgWarning)
        miss = np.abs(kernel_ridge(X, y, gamma=1.0, alpha=0.0).predict(X) - y).max() / np.abs(y).max()
    assert miss > 1e-6
    # a little ridge cures it, silently
    m = kernel_ridge(X, y, gamma=1.0, alpha=1e-6)
    assert _rel(m.weights[:, 0], reference.kernel_ridge(X, y, gamma=1.0, alpha=1e-6)) < 1e-6


def _grid():
    g = np.arange(-2, 2.01, 0.5)
    G = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    return G, np.sin(G[:, 0]) + G[:, 1] ** 2


@pytest.mark.parametrize("gamma", [0.01, 0.2])
def test_gamma_too_small_for_the_spacing_raises(gamma):
    G, y = _grid()
    with pytest.raises(NotPositiveDefiniteError, match="larger `gamma`"):
        interpolate(G, y, kernel="gaussian", gamma=gamma)
    with pytest.raises(NotPositiveDefiniteError, match="larger `gamma`"):
        interpolate(G, y, kernel="gaussian", gamma=gamma, degree=-1)
    with pytest.raises(NotPositiveDefiniteError, match="larger `alpha`"):
        kernel_ridge(G, y, gamma=gamma, alpha=0.0)


def test_condition_estimate_refuses_a_completed_factorisation():
    # gamma = 0.2 on the grid: every pivot is above the rounding level, the condition
    # number (> 1/eps) is not
    G, y = _grid()
    with pytest.raises(NotPositiveDefiniteError, match=r"K\(X, X\) \+ alpha I is numerically singular: its "
                                                       r"estimated condition number .* exceeds 1/eps"):
        kernel_ridge(G, y, gamma=0.2, alpha=0.0)
    with pytest.raises(NotPositiveDefiniteError, match=r"on the polynomial null space\) is numerically singular"):
        interpolate(G, y, kernel="gaussian", gamma=0.2)
    assert np.linalg.cond(reference.gram(G, gamma=0.2)) > 1 / np.finfo(float).eps
    # well-posed at a gamma that suits the spacing: exact interpolation, no warning
    m = interpolate(G, y, kernel="gaussian", gamma=1.0)
    assert _rel(m.predict(G), y) < 1e-10


def test_rbf_network_bad_options(rng):
    X, y = rng.random((30, 2)), rng.random(30)
    base = {"n_centers": 3, "gamma": 1.0}
    for kwargs, exc, match in [
        ({"max_gamma_iter": -1}, ValueError, r"`max_gamma_iter` must be an int >= 0; got -1"),
        ({"max_gamma_iter": 1.5}, TypeError, r"`max_gamma_iter` must be an int >= 0; got 1.5"),
        ({"gamma_tol": -1.0}, ValueError, r"`gamma_tol` must be a finite number >= 0; got -1.0"),
        ({"gamma_tol": np.nan}, ValueError, r"`gamma_tol` must be a finite number >= 0; got nan"),
        ({"gamma_tol": "x"}, TypeError, r"`gamma_tol` must be a finite number >= 0; got 'x'"),
        ({"validation": "x"}, TypeError, r"`validation` must be None or a pair \(X_val, Y_val\); got str"),
        ({"validation": (X,)}, TypeError, r"`validation` must be None or a pair"),
        ({"learn_gamma": "yes"}, TypeError, r"`learn_gamma` must be a bool; got 'yes'"),
        ({"seed": -1}, ValueError, r"`seed` must be None, an int >= 0 or a numpy.random.Generator; got -1"),
        ({"seed": "x"}, TypeError, r"`seed` must be None, an int >= 0 or a numpy.random.Generator; got 'x'"),
    ]:
        with pytest.raises(exc, match=match):
            rbf_network(X, y, **{**base, **kwargs})


def test_coef0_and_degree_types_are_named(rng):
    X, y = rng.random((10, 2)), rng.random(10)
    with pytest.raises(TypeError, match=r"`coef0` must be a finite number; got 'x'"):
        kernel_ridge(X, y, kernel="polynomial", gamma=1.0, alpha=1.0, coef0="x")
    with pytest.raises(TypeError, match=r"`degree` must be an int in \[1, 1000\]; got 1.5"):
        kernel_ridge(X, y, kernel="polynomial", gamma=1.0, alpha=1.0, degree=1.5)


def test_ragged_input_is_named(rng):
    X, y = rng.random((3, 2)), rng.random(3)
    ragged = [[1.0, 2.0], [3.0]]
    with pytest.raises(ValueError, match=r"`Y` must be a rectangular array of real numbers; got a ragged") as exc:
        kernel_ridge(X, [[1.0], [2.0, 3.0], [4.0]], gamma=1.0, alpha=1.0)
    assert "sequence" not in str(exc.value)
    with pytest.raises(ValueError, match=r"`alpha` must be a rectangular array of real numbers; got a ragged"):
        kernel_ridge(X, y, gamma=1.0, alpha=ragged)
    with pytest.raises(ValueError, match=r"`alpha` must be a rectangular array"):
        rbf_network(X, y, n_centers=2, gamma=1.0, alpha=ragged)
    with pytest.raises(ValueError, match=r"`Y` must be a rectangular array"):
        rbf_network(X, [[1.0], [2.0, 3.0], [4.0]], n_centers=2, gamma=1.0)
    with pytest.raises(ValueError, match=r"`gamma` must be a rectangular array"):
        kernel_ridge(X, y, gamma=ragged, alpha=1.0)


def test_rbf_network_all_centres_memory_error():
    # 3e5 centres: factors of order 3e5 (hundreds of GiB per row group) are refused first
    X = np.linspace(0, 1, 300_000)[:, None]
    with pytest.raises(MemoryError, match=r"rbf_network: 300000 centres on 300000 points .* needs .* GiB .*"
                                          r'use centers="kmeans" with a smaller `n_centers`'):
        rbf_network(X, X[:, 0], centers="all", gamma=1.0)


def test_kmeans_messages_name_the_callers_argument():
    X = np.ones((20, 2))
    with pytest.raises(ValueError, match="`n_centers`") as exc:
        rbf_network(X, np.ones(20), n_centers=2, gamma=1.0)
    assert "n_clusters" not in str(exc.value)
    with pytest.raises(ValueError, match="`n_landmarks`") as exc:
        kernel_ridge(X, np.ones(20), gamma=1.0, alpha=1.0, solver="nystrom-pcg", n_landmarks=2, landmarks="kmeans")
    assert "n_clusters" not in str(exc.value)


def test_seeds(rng):
    X, y = rng.random((200, 2)), rng.random(200)
    for seed in (0, np.int64(3)):
        a = rbf_network(X, y, n_centers=5, gamma=1.0, seed=seed)
        b = rbf_network(X, y, n_centers=5, gamma=1.0, seed=np.random.default_rng(int(seed)))
        assert np.array_equal(a.centers, b.centers)
        p = kernel_ridge(X, y, gamma=1.0, alpha=0.1, solver="nystrom-pcg", n_landmarks=20, seed=seed)
        q = kernel_ridge(X, y, gamma=1.0, alpha=0.1, solver="nystrom-pcg", n_landmarks=20,
                         seed=np.random.default_rng(int(seed)))
        assert np.array_equal(p.centers, q.centers)
    for bad, exc in [(-1, ValueError), (1.5, TypeError), (True, TypeError)]:
        with pytest.raises(exc, match=r"`seed` must be None, an int >= 0 or a numpy.random.Generator"):
            kernel_ridge(X, y, gamma=1.0, alpha=0.1, solver="nystrom-pcg", n_landmarks=20, seed=bad)
        with pytest.raises(exc, match=r"`seed` must be None, an int >= 0"):
            kernel_ridge(X, y, gamma=1.0, alpha=0.1, seed=bad)


def test_ragged_class_labels_are_named(rng):
    X = rng.random((2, 1))
    with pytest.raises(ValueError, match=r"`Y` must be a rectangular array of real numbers; got a ragged"):
        rbf_network(X, [[0.1], [0.2, 1.0]], n_centers=1, gamma=1.0, classify=True)


@pytest.mark.parametrize("kernel", ["cubic", "thin_plate_spline"])
def test_interpolate_singular_lu_system_is_named(kernel):
    # points 1e-161 apart: every kernel value underflows to 0, the LU system is singular
    X = np.array([[1.25e-161], [-1.32e-161]])
    with pytest.raises(NotPositiveDefiniteError, match=r"solved by LU: `degree` 0 is below the .* minimum 1\) is "
                                                       r"singular\. Remedies: `degree` >= 1, a smoothing `alpha` > 0"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `degree` below the minimum, ill-conditioned LU
            interpolate(X, [0.1, -0.1], kernel=kernel, degree=0)


def test_huge_targets(rng):
    # the solves are linear in Y: targets of 1e160 give 1e160 times the predictions
    X, y = rng.random((40, 2)), rng.random(40)
    for kw in ({"solver": "cholesky"}, {"solver": "nystrom-pcg", "n_landmarks": 10, "seed": 0}):
        small = kernel_ridge(X, y, gamma=1.0, alpha=0.1, **kw).predict(X)
        big = kernel_ridge(X, 1e160 * y, gamma=1.0, alpha=0.1, **kw).predict(X)
        assert np.all(np.isfinite(big))
        np.testing.assert_allclose(big / 1e160, small, rtol=1e-9)
    with pytest.raises(ValueError, match=r"The model's weight matrix overflows float64 for these `Y`, `alpha` and `gamma`"):
        kernel_ridge(X, 1e307 * y, gamma=1.0, alpha=1e-6)


def test_unsortable_class_labels_are_named(rng):
    with pytest.raises(TypeError, match=r"`Y` must be class labels of one sortable kind \(numbers or strings\); got "
                                        r"labels of types \['NoneType', 'float'\]"):
        rbf_network(rng.random((2, 1)), np.array([None, 0.5], dtype=object), n_centers=1, gamma=1.0, classify=True)


def test_rbf_network_all_centres_owned(rng):
    X, y, Xq = rng.random((30, 2)), rng.random(30), rng.random((5, 2))
    _mutate_and_compare(lambda: rbf_network(X, y, centers="all", gamma=2.0, alpha=1e-3), [X], Xq)
