"""sparse_gaussian_process: the VFE bound, its gradient and the DTC predictive against a
plain NumPy implementation of the formulas (K_nm formed explicitly), against the exact
Gaussian process when the landmarks are the training points, and its properties (a
lower bound that grows with nested landmarks, variance never negative, the same bits
for any thread count, dtypes kept, inputs untouched, every error message)."""

import pickle

import numpy as np
import pytest

import fastrbf
from fastrbf import _threads
from fastrbf import reference as ref
from fastrbf.gp import _sparse as sparse_gp
from fastrbf.gp import _sparse_bound as sparse_bound


def _data(rng, n=80, d=3, k=1):
    X = rng.uniform(0, 1, (n, d))
    Y = np.column_stack([np.sin(4 * X[:, 0] + j) + 0.5 * X[:, 1] for j in range(k)]) + 0.05 * rng.standard_normal((n, k))
    return X, (Y[:, 0] if k == 1 else Y)


def _k(A, B, kernel, amp, ls):
    g0 = 0.5 if kernel == "gaussian" else 1.0
    return amp * ref.gram(A / ls, B / ls, kernel=kernel, gamma=g0)


def _naive(X, Y, Z, Xq, kernel, amp, ls, noise, jitter):
    """The DTC/VFE formulas as written, with explicit n x n and m x m matrices."""
    Y = Y.reshape(len(Y), -1)
    n, m = X.shape[0], Z.shape[0]
    Knm, Kmm = _k(X, Z, kernel, amp, ls), _k(Z, Z, kernel, amp, ls) + jitter * np.eye(m)
    Q = Knm @ np.linalg.solve(Kmm, Knm.T)
    C = Q + noise * np.eye(n)
    _, logdet = np.linalg.slogdet(C)
    kdiag = amp * ref.kernel_function(kernel, 0.0)
    lml = sum(-0.5 * Y[:, j] @ np.linalg.solve(C, Y[:, j]) - 0.5 * logdet - 0.5 * n * np.log(2 * np.pi)
              - (n * kdiag - np.trace(Q)) / (2 * noise) for j in range(Y.shape[1]))
    Ksm = _k(Xq, Z, kernel, amp, ls)
    Sigma = np.linalg.inv(Kmm + Knm.T @ Knm / noise)
    mean = Ksm @ Sigma @ Knm.T @ Y / noise
    var = kdiag - np.sum(Ksm * np.linalg.solve(Kmm, Ksm.T).T, axis=1) + np.sum(Ksm * (Sigma @ Ksm.T).T, axis=1) + noise
    return lml, mean, var


def _jitter(m, amp, kernel):
    return m * np.finfo(float).eps * amp * float(ref.kernel_function(kernel, 0.0))  # Falkon's first jitter


@pytest.mark.parametrize("kernel, ls", [("matern52", 0.7), ("gaussian", [0.3, 0.5, 0.4]), ("matern32", [0.4, 1.0, 2.0])])
def test_equals_the_naive_formulas(rng, kernel, ls, monkeypatch):
    monkeypatch.setattr(sparse_bound, "CHUNK", 64)  # several chunks, several per group
    monkeypatch.setattr(sparse_bound, "GROUPS", 2)
    X, Y = _data(rng, n=300, k=2)
    Z, Xq = X[::10], rng.uniform(0, 1, (40, 3))
    model = fastrbf.sparse_gaussian_process(X, Y, landmarks=Z, kernel=kernel, amplitude=1.3, length_scale=ls,
                                            noise=0.02, optimize=False)
    lml, mean, var = _naive(X, Y, Z, Xq, kernel, 1.3, np.asarray(ls), 0.02, model.jitter)
    m, v = model.predict(Xq, return_var=True)
    assert model.log_marginal_likelihood_value == pytest.approx(lml, rel=1e-8)
    np.testing.assert_allclose(m, mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(v, var[:, None] * np.ones(2), rtol=1e-8)
    bound = fastrbf.sparse_gaussian_process_lml(X, Y, landmarks=Z, kernel=kernel, amplitude=1.3, length_scale=ls,
                                                noise=0.02)
    assert bound == pytest.approx(lml, rel=1e-8)


def test_normalize_y_scales_back(rng):
    X, y = _data(rng, n=120)
    y = 5 + 3 * y
    Z, Xq = X[::4], rng.uniform(0, 1, (20, 3))
    model = fastrbf.sparse_gaussian_process(X, y, landmarks=Z, length_scale=0.6, noise=0.01, optimize=False,
                                            normalize_y=True)
    mu, sd = y.mean(), y.std()
    _, mean, var = _naive(X, (y - mu) / sd, Z, Xq, "matern52", 1.0, np.array(0.6), 0.01, model.jitter)
    m, s = model.predict(Xq, return_std=True)
    np.testing.assert_allclose(m, mean[:, 0] * sd + mu, rtol=1e-8)
    np.testing.assert_allclose(s, np.sqrt(var) * sd, rtol=1e-8)


@pytest.mark.parametrize("kernel, ls", [("matern52", 0.6), ("gaussian", [0.4, 1.1, 2.0])])
def test_all_points_as_landmarks_is_the_exact_gp(rng, kernel, ls):
    X, y = _data(rng, n=60)
    Xq = rng.uniform(0, 1, (25, 3))
    exact = fastrbf.gaussian_process(X, y, kernel=kernel, amplitude=1.5, length_scale=ls, noise=0.01, optimize=False)
    sparse = fastrbf.sparse_gaussian_process(X, y, landmarks=X, kernel=kernel, amplitude=1.5, length_scale=ls,
                                             noise=0.01, optimize=False)
    m0, s0 = exact.predict(Xq, return_std=True)
    m1, s1 = sparse.predict(Xq, return_std=True)
    np.testing.assert_allclose(m1, m0, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(s1, s0, rtol=1e-6)
    assert sparse.log_marginal_likelihood_value == pytest.approx(exact.log_marginal_likelihood_value, rel=1e-6)


def test_learned_hyperparameters_with_all_points_match_the_exact_gp(rng):
    X, y = _data(rng, n=50, d=2)
    exact = fastrbf.gaussian_process(X, y, length_scale=0.5, noise=0.05)
    sparse = fastrbf.sparse_gaussian_process(X, y, landmarks=X, length_scale=0.5, noise=0.05, max_iter=200)
    # the same maximum (L-BFGS-B stops at a relative gain of sparse_gp.FTOL: the maximum is flat along theta)
    assert sparse.log_marginal_likelihood_value == pytest.approx(exact.log_marginal_likelihood_value, abs=1e-3)
    np.testing.assert_allclose(sparse.theta, exact.theta, atol=1e-2)


def test_bound_is_below_the_exact_lml_and_grows_with_nested_landmarks(rng):
    X, y = _data(rng, n=100)
    exact = fastrbf.gaussian_process_lml(X, y, length_scale=0.5, noise=0.01, amplitude=2.0)
    order = rng.permutation(100)
    bounds = [fastrbf.sparse_gaussian_process_lml(X, y, landmarks=X[order[:m]], length_scale=0.5, noise=0.01,
                                                  amplitude=2.0) for m in (3, 10, 25, 50, 100)]
    assert np.all(np.diff(bounds) > 0)
    assert bounds[-2] < exact
    assert bounds[-1] == pytest.approx(exact, rel=1e-8)


@pytest.mark.parametrize("kernel, ls", [("matern52", 0.7), ("matern52", [0.5, 0.8, 1.5]), ("gaussian", [0.3, 0.5, 0.4])])
def test_gradient_equals_finite_differences(rng, kernel, ls, monkeypatch):
    monkeypatch.setattr(sparse_bound, "CHUNK", 32)
    X, Y = _data(rng, n=100, k=2)
    Z = X[:25]

    def f(t):
        ls_t = float(np.exp(t[1])) if np.ndim(ls) == 0 else np.exp(t[1:-1])
        return fastrbf.sparse_gaussian_process_lml(X, Y, landmarks=Z, kernel=kernel, amplitude=float(np.exp(t[0])),
                                                   length_scale=ls_t, noise=float(np.exp(t[-1])))

    theta = np.log(np.r_[1.4, ls, 0.03])
    _, grad = fastrbf.sparse_gaussian_process_lml(X, Y, landmarks=Z, kernel=kernel, amplitude=1.4, length_scale=ls,
                                                  noise=0.03, eval_gradient=True)
    h = 1e-5
    fd = np.array([(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in np.eye(theta.size)])
    np.testing.assert_allclose(grad, fd, rtol=1e-5)


def test_variance_is_never_negative(rng):
    X, y = _data(rng, n=60)
    Z = np.vstack([X[:10], X[:10] + 1e-13])  # near-duplicate landmarks: K_mm singular to working precision
    for noise in (1e-10, 1e-6):
        model = fastrbf.sparse_gaussian_process(X, y, landmarks=Z, length_scale=2.0, noise=noise, optimize=False)
        _, var = model.predict(np.vstack([X, Z, rng.uniform(-1, 2, (50, 3))]), return_var=True)
        assert np.all(np.isfinite(var)) and np.all(var >= noise)
        assert model.jitter > 0


def test_same_bits_for_any_thread_count(rng, monkeypatch):
    monkeypatch.setattr(sparse_bound, "CHUNK", 32)
    monkeypatch.setattr(sparse_bound, "GROUPS", 3)
    monkeypatch.setattr(sparse_gp, "PREDICT_CHUNK", 16)
    monkeypatch.setattr(_threads, "SERIAL_WORK", 0)  # small work on two threads all the same
    X, y = _data(rng, n=250)
    Xq = rng.uniform(0, 1, (70, 3))
    out = []
    for nt in (1, 2):
        lml, grad = fastrbf.sparse_gaussian_process_lml(X, y, n_landmarks=30, length_scale=[0.5, 0.7, 1.0], seed=3,
                                                        eval_gradient=True, n_threads=nt)
        model = fastrbf.sparse_gaussian_process(X, y, n_landmarks=30, ard=True, seed=3, max_iter=5,
                                                learn_samples=120, n_threads=nt)
        out.append((lml, grad, model.theta, *model.predict(Xq, return_std=True, n_threads=nt)))
    for a, b in zip(*out, strict=True):
        assert np.array_equal(a, b)


def test_learning_on_a_subsample_then_the_bound_on_all_rows(rng):
    X, y = _data(rng, n=300)
    Z = X[:30]
    model = fastrbf.sparse_gaussian_process(X, y, landmarks=Z, learn_samples=100, seed=0)
    bound = fastrbf.sparse_gaussian_process_lml(X, y, landmarks=Z, amplitude=model.amplitude,
                                                length_scale=model.length_scale[0], noise=model.noise)
    assert model.log_marginal_likelihood_value == pytest.approx(bound, rel=1e-10)
    assert model.n_train == 300 and model.landmarks.shape == (30, 3)
    start = fastrbf.sparse_gaussian_process_lml(X, y, landmarks=Z)
    assert model.log_marginal_likelihood_value > start


def test_dtypes_inputs_untouched_and_pickle(rng):
    X, y = _data(rng, n=90)
    X32, y32 = X.astype(np.float32), y.astype(np.float32)
    copies = (X32.copy(), y32.copy())
    model = fastrbf.sparse_gaussian_process(X32, y32, n_landmarks=20, landmarks="kmeans", seed=1, max_iter=5)
    m, s = model.predict(X32[:5], return_std=True)
    assert m.dtype == np.float32 and s.dtype == np.float32
    assert model.predict(X[:5]).dtype == np.float64
    assert np.array_equal(X32, copies[0]) and np.array_equal(y32, copies[1])
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(again.predict(X32[:5]), m)
    Z = X[:10].copy()
    model = fastrbf.sparse_gaussian_process(X, y, landmarks=Z, optimize=False)
    assert not np.shares_memory(model.landmarks, Z)
    assert np.array_equal(Z, X[:10])


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"n_landmarks": 0}, ValueError, r"`n_landmarks` must be an int in \[1, n_samples\] = \[1, 40\]; got 0"),
    ({"n_landmarks": 41}, ValueError, r"`n_landmarks` must be an int in \[1, n_samples\]"),
    ({"landmarks": "grid"}, ValueError, r"`landmarks` must be"),
    ({"landmarks": np.zeros((5, 2))}, ValueError, r"`landmarks`"),
    ({"landmarks": np.zeros((5, 3)), "n_landmarks": 4}, ValueError, r"`n_landmarks` \(4\) must equal"),
    ({"learn_samples": 0}, ValueError, r"`learn_samples` must be an int in \[1, n_samples\] = \[1, 40\]; got 0"),
    ({"max_iter": 0}, ValueError, r"`max_iter` must be"),
    ({"amplitude": -1.0}, ValueError, r"`amplitude` must be a finite number > 0; got -1.0"),
    ({"noise": 0.0}, ValueError, r"`noise` must be a finite number > 0; got 0.0"),
    ({"length_scale": [1.0, 2.0]}, ValueError, r"`length_scale`"),
    ({"kernel": "polynomial"}, ValueError, r"`kernel` must be a radial kernel"),
    ({"kernel": "thin_plate_spline"}, ValueError, r"`kernel` must be positive definite"),
    ({"bounds": (1.0, 0.5)}, ValueError, r"`bounds` must satisfy"),
    ({"ard": "yes"}, TypeError, r"`ard`"),
    ({"seed": -1}, ValueError, r"`seed`"),
])
def test_bad_arguments_name_the_argument(rng, kwargs, exc, match):
    X, y = _data(rng, n=40)
    with pytest.raises(exc, match=match):
        fastrbf.sparse_gaussian_process(X, y, **kwargs)


def test_bad_arguments_of_the_bound_and_predict(rng):
    X, y = _data(rng, n=40)
    with pytest.raises(TypeError, match="`eval_gradient`"):
        fastrbf.sparse_gaussian_process_lml(X, y, eval_gradient=1)
    with pytest.raises(ValueError, match="`y` must have one row per row of `X`"):
        fastrbf.sparse_gaussian_process_lml(X, y[:-1])
    model = fastrbf.sparse_gaussian_process(X, y, n_landmarks=10, optimize=False, seed=0)
    with pytest.raises(ValueError, match="At most one of `return_std` and `return_var`"):
        model.predict(X, return_std=True, return_var=True)
    with pytest.raises(ValueError, match="`X` must have 3 features"):
        model.predict(X[:, :2])


def test_dask_equals_in_memory(rng, monkeypatch):
    import dask
    import dask.array as da

    from fastrbf import dask as fd

    monkeypatch.setattr(sparse_bound, "CHUNK", 64)
    X, y = _data(rng, n=300, k=2)
    kw = {"n_landmarks": 25, "ard": True, "normalize_y": True, "learn_samples": 150, "max_iter": 10, "seed": 5}
    ref = fastrbf.sparse_gaussian_process(X, y, **kw)
    with dask.config.set(scheduler="sync"):
        model = fd.sparse_gaussian_process(da.from_array(X, chunks=(70, 3)), da.from_array(y, chunks=(70, 2)), **kw)
        assert np.array_equal(model.landmarks, ref.landmarks) and np.array_equal(model.theta, ref.theta)
        assert model.log_marginal_likelihood_value == pytest.approx(ref.log_marginal_likelihood_value, rel=1e-12)
        Xq = rng.uniform(0, 1, (30, 3))
        for a, b in zip(model.predict(Xq, return_std=True), ref.predict(Xq, return_std=True), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        Xbad = X.copy()
        Xbad[123, 1] = np.nan
        with pytest.raises(ValueError, match="`X`"):
            fd.sparse_gaussian_process(da.from_array(Xbad, chunks=(70, 3)), y[:, 0], n_landmarks=10, optimize=False)


def test_extreme_variances_and_a_kernel_nan_away_from_the_probe_are_refused_by_name():
    import math

    from fastrbf.user_kernels import define_kernel

    X = np.random.default_rng(0).random((200, 2))
    y = np.sin(4 * X[:, 0])
    for kw, name in (({"noise": 1e308}, "noise"), ({"noise": 1e-300}, "noise"), ({"amplitude": 1e308}, "amplitude")):
        with pytest.raises(ValueError, match=rf"`{name}` must be in \[1e-150, 1e\+150\]"):
            fastrbf.sparse_gaussian_process(X, y, n_landmarks=20, optimize=False, seed=0, **kw)
    with pytest.raises(ValueError, match=r"`amplitude` must be in"):
        fastrbf.sparse_gaussian_process_lml(X, y, n_landmarks=20, seed=0, amplitude=1e308)
    k = define_kernel(lambda s: math.exp(-s) if s < 1e5 else math.nan, name="nan_far_sgp", positive_definite=True)
    with pytest.raises(ValueError, match=r"The user kernel 'nan_far_sgp' returns nan at s = "):
        fastrbf.sparse_gaussian_process(X * 1000, y, n_landmarks=20, optimize=False, seed=0, kernel=k, length_scale=1.0)
