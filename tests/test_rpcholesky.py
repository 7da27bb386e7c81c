"""Randomly pivoted Cholesky (``rpcholesky``) and the landmark choice
``"rpcholesky"`` of the Nystroem map, kernel ridge and the sparse GP."""

import pickle

import numpy as np
import pytest

import fastrbf
from fastrbf import gram, kernel_ridge, nystroem, reference, rpcholesky, sparse_gaussian_process
from fastrbf.models import falkon


def _clustered(rng, n, d=4, k=6):
    centres = 4.0 * rng.standard_normal((k, d))
    return centres[rng.integers(0, k, n)] + 0.3 * rng.standard_normal((n, d))


@pytest.mark.parametrize("block", [1, 7, 120])
@pytest.mark.parametrize("kernel, gamma, extra", [("gaussian", 0.5, {}), ("matern52", 0.8, {"length_scale": [1.0, 2.0, 0.5]}),
                                                  ("polynomial", 0.3, {"degree": 2, "coef0": 1.0}),
                                                  ("wendland_c2", 0.2, {})])
def test_matches_the_numpy_reference(rng, block, kernel, gamma, extra):
    X = rng.standard_normal((300, 3))
    pc = rpcholesky(X, 40, kernel=kernel, gamma=gamma, seed=3, block_size=block, **extra)
    Xs = X / np.asarray(extra.get("length_scale", 1.0))
    K = reference.gram(Xs, kernel=kernel, gamma=gamma, degree=extra.get("degree", 3), coef0=extra.get("coef0", 1.0))
    piv, F = reference.rpcholesky(K, 40, np.random.default_rng(3), block_size=block)
    assert pc.pivots.tolist() == piv.tolist()
    assert np.abs(pc.factor - F).max() <= 1e-11 * np.abs(F).max()
    assert np.array_equal(pc.landmarks, X[piv])
    assert pc.trace == pytest.approx(np.trace(K), rel=1e-14)
    assert pc.residual == pytest.approx(np.trace(K - F @ F.T), rel=1e-8, abs=1e-12 * pc.trace)


def test_all_points_reproduce_the_kernel_matrix(rng):
    X = rng.uniform(-1, 1, (80, 2))
    K = gram(X, kernel="laplacian", gamma=4.0)
    pc = rpcholesky(X, 80, kernel="laplacian", gamma=4.0, seed=0)
    assert pc.n_landmarks == 80 and sorted(pc.pivots.tolist()) == list(range(80))
    F = pc.factor
    assert np.abs(F @ F.T - K).max() <= 1e-12
    assert np.abs(np.triu(F[pc.pivots], 1)).max() <= 1e-12  # lower triangular at the pivots
    assert pc.residual <= 1e-12


def test_float32_input_and_no_input_modified(rng):
    X = rng.standard_normal((200, 3))
    X32 = X.astype(np.float32)
    before = X32.copy()
    pc = rpcholesky(X32, 20, gamma=0.5, seed=1)
    assert np.array_equal(X32, before)
    assert pc.factor.dtype == np.float64 and pc.landmarks.dtype == np.float64
    ref = rpcholesky(X32.astype(np.float64), 20, gamma=0.5, seed=1)
    assert np.array_equal(pc.pivots, ref.pivots) and np.array_equal(pc.factor, ref.factor)
    assert pickle.loads(pickle.dumps(pc)).pivots.tolist() == pc.pivots.tolist()


@pytest.mark.parametrize("make", ["uniform", "clustered"])
def test_trace_error_no_worse_than_uniform_landmarks(rng, make):
    X = rng.uniform(-2, 2, (600, 4)) if make == "uniform" else _clustered(rng, 600)
    K = gram(X, gamma=0.5)

    def trace_error(L):
        Z = reference.nystroem_transform(X, L, gamma=0.5)
        return np.trace(K) - np.sum(Z * Z)

    rp = [rpcholesky(X, 30, gamma=0.5, seed=s).residual for s in range(10)]
    uni = [trace_error(X[np.random.default_rng(s).choice(600, 30, replace=False)]) for s in range(10)]
    assert np.median(rp) <= np.median(uni)
    # the factor's residual is the trace error of its landmarks' Nystroem approximation
    pc = rpcholesky(X, 30, gamma=0.5, seed=0)
    assert pc.residual == pytest.approx(trace_error(pc.landmarks), rel=1e-6)


def test_thread_count_does_not_change_bits(rng):
    X = rng.standard_normal((3000, 5))  # several blocks of rows
    one = rpcholesky(X, 150, gamma=0.3, seed=2, n_threads=1)
    two = rpcholesky(X, 150, gamma=0.3, seed=2, n_threads=2)
    assert np.array_equal(one.pivots, two.pivots) and np.array_equal(one.factor, two.factor)
    assert one.residual == two.residual


def test_duplicated_points_give_the_rank(rng):
    X = np.repeat(rng.standard_normal((5, 2)), 20, axis=0)
    pc = rpcholesky(X, 20, gamma=1.0, seed=0)
    assert pc.n_landmarks == 5
    assert len({tuple(x) for x in pc.landmarks}) == 5
    assert pc.factor.shape == (100, 5) and pc.residual <= 1e-12 * pc.trace


def test_errors_name_the_argument(rng):
    X = rng.standard_normal((20, 2))
    for kernel, kw in (("multiquadric", {}), ("tanh", {}), ("polynomial", {"coef0": -1.0}), ("thin_plate_spline", {})):
        with pytest.raises(ValueError, match=r"rpcholesky needs a positive semi-definite kernel; `kernel`"):
            rpcholesky(X, 5, kernel=kernel, **kw)
    with pytest.raises(ValueError, match=r"`n_landmarks` must be an int in \[1, n_samples\] = \[1, 20\]; got 21"):
        rpcholesky(X, 21)
    with pytest.raises(ValueError, match=r"`block_size` must be"):
        rpcholesky(X, 5, block_size=0)
    with pytest.raises(ValueError, match=r"`gamma` must be"):
        rpcholesky(X, 5, gamma=-1.0)
    with pytest.raises(ValueError, match=r"the kernel matrix of `X` is zero"):
        rpcholesky(np.zeros((4, 2)), 2, kernel="polynomial", coef0=0.0)
    with pytest.raises(ValueError, match=r"nystroem\(method='rpcholesky'\) needs a positive semi-definite kernel"):
        nystroem(X, 5, gamma=1.0, kernel="multiquadric", method="rpcholesky")
    with pytest.raises(ValueError, match=r'landmarks="rpcholesky" needs a positive semi-definite kernel'):
        kernel_ridge(X, X[:, 0], gamma=1.0, alpha=1.0, kernel="polynomial", coef0=-1.0, solver="nystrom",
                     n_landmarks=5, landmarks="rpcholesky")


def test_progress_reports_the_pivots(rng):
    reports = []
    rpcholesky(rng.standard_normal((300, 2)), 50, gamma=0.5, seed=0, block_size=10, progress=reports.append)
    assert reports[-1]["stage"] == "rpcholesky" and reports[-1]["final"] and reports[-1]["iter"] == 50


@pytest.mark.parametrize("solver", ["nystrom", "nystrom-pcg"])
def test_kernel_ridge_reuses_the_factor(rng, solver):
    X = rng.standard_normal((700, 3))
    y = np.sin(X[:, 0]) + 0.05 * rng.standard_normal(700)
    kw = {"gamma": 0.4, "alpha": 1e-2, "solver": solver, "tol": 1e-12, "max_iter": 500}
    model = kernel_ridge(X, y, n_landmarks=60, landmarks="rpcholesky", seed=5, **kw)
    pc = rpcholesky(X, 60, gamma=0.4, seed=5)
    assert np.array_equal(model.centers, pc.landmarks)
    given = kernel_ridge(X, y, landmarks=pc.landmarks, **kw)
    assert np.abs(model.predict(X) - given.predict(X)).max() <= 1e-8
    ref = reference.nystroem_kernel_ridge(X, y, pc.landmarks, gamma=0.4, alpha=1e-2)
    assert np.abs(model.weights[:, 0] - ref).max() <= 1e-7 * np.abs(ref).max()


def test_kernel_ridge_on_a_subsample_of_rows(rng, monkeypatch):
    monkeypatch.setattr(falkon, "RPCHOL_POOL_ENTRIES", 4000)  # 700 x 20 entries: a pool of 400 rows
    X = rng.standard_normal((700, 3))
    y = np.sin(X[:, 0])
    model = kernel_ridge(X, y, gamma=0.4, alpha=1e-2, solver="nystrom", n_landmarks=20, landmarks="rpcholesky", seed=5)
    r = np.random.default_rng(5)
    rows = np.sort(r.choice(700, size=400, replace=False))
    pc = fastrbf.approx.factor_rows(X[rows], 20, {"kernel": "gaussian", "gamma": 0.4, "degree": 3, "coef0": 1.0,
                                                  "length_scale": None}, r, 1)
    assert np.array_equal(model.centers, pc.landmarks)


def test_sparse_gp_and_nystroem_take_the_pivots(rng):
    X = rng.uniform(0, 1, (400, 2))
    y = np.sin(6 * X[:, 0])
    gp = sparse_gaussian_process(X, y, n_landmarks=25, landmarks="rpcholesky", length_scale=[0.3, 2.0], ard=True,
                                 optimize=False, seed=4)
    pc = rpcholesky(X, 25, kernel="matern52", length_scale=[0.3, 2.0], seed=4)
    assert np.array_equal(gp.landmarks, pc.landmarks)
    ny = nystroem(X, 25, gamma=3.0, method="rpcholesky", seed=4)
    pc = rpcholesky(X, 25, gamma=3.0, seed=4)
    assert ny.indices.tolist() == pc.pivots.tolist() and np.array_equal(ny.landmarks, pc.landmarks)
    with pytest.raises(ValueError, match=r"`method='rpcholesky'` needs dense `X`"):
        import scipy.sparse as sp
        nystroem(sp.csr_matrix(X), 5, gamma=1.0, method="rpcholesky")


def test_length_scales_and_the_scikit_learn_front_end(rng):
    X = rng.standard_normal((300, 3))
    y = np.sin(X[:, 0])
    ls = np.array([1.0, 2.0, 0.5])
    for solver in ("nystrom", "nystrom-pcg"):
        kw = {"gamma": 0.5, "alpha": 1e-2, "solver": solver, "length_scale": ls, "tol": 1e-12, "max_iter": 500}
        model = kernel_ridge(X, y, n_landmarks=20, landmarks="rpcholesky", seed=0, **kw)
        pc = rpcholesky(X / ls, 20, gamma=0.5, seed=0)  # the pivots of the scaled data; the model keeps X's units
        np.testing.assert_array_equal(model.centers, X[pc.pivots])
        given = kernel_ridge(X, y, landmarks=model.centers, **kw)
        assert np.abs(model.predict(X) - given.predict(X)).max() <= 1e-10
    import fastrbf.sklearn as fsk

    ny = fsk.Nystroem(kernel="rbf", gamma=0.5, n_components=20, method="rpcholesky", random_state=0).fit(X)
    assert ny.component_indices_.tolist() == rpcholesky(X, 20, gamma=0.5, seed=0).pivots.tolist()


def test_auto_takes_the_pivots_where_their_trace_error_is_small_else_k_means(rng):
    # 2-D uniform data, a smooth kernel and many landmarks: a tiny trace error, the pivots;
    # a narrow kernel and few landmarks: a large one, k-means centres (the k-means of
    # landmarks="kmeans", drawn after the Cholesky's draws)
    X = rng.uniform(0, 1, (600, 2))
    y = np.sin(6 * X[:, 0])
    kw = {"alpha": 1e-3, "solver": "nystrom"}
    smooth = rpcholesky(X, 60, gamma=1.0, seed=3)
    assert falkon.accurate(smooth) and smooth.residual <= 1e-3 * smooth.trace
    model = kernel_ridge(X, y, gamma=1.0, n_landmarks=60, landmarks="auto", seed=3, **kw)
    np.testing.assert_array_equal(model.centers, smooth.landmarks)
    narrow = rpcholesky(X, 10, gamma=300.0, seed=3)
    assert not falkon.accurate(narrow)
    model = kernel_ridge(X, y, gamma=300.0, n_landmarks=10, landmarks="auto", seed=3, **kw)
    r = np.random.default_rng(3)
    fastrbf.approx.factor_rows(X, 10, {"kernel": "gaussian", "gamma": 300.0, "degree": 3, "coef0": 1.0,
                                       "length_scale": None}, r, 1)
    rows = np.sort(r.choice(600, size=200, replace=False))  # k-means' subsample of 20 m rows
    km = falkon.landmarks_from_rows(X[rows], 10, "kmeans", r, 1)
    np.testing.assert_array_equal(model.centers, km)
    # nystroem and the sparse GP take the same rule
    ny = nystroem(X, 60, gamma=1.0, method="auto", seed=3)
    assert ny.indices.tolist() == smooth.pivots.tolist()
    ny = nystroem(X, 10, gamma=300.0, method="auto", seed=3)
    assert ny.indices is None or not np.array_equal(ny.landmarks, X[narrow.pivots])
    gp = sparse_gaussian_process(X, y, n_landmarks=60, landmarks="auto", kernel="gaussian", length_scale=0.7,
                                 optimize=False, seed=3)
    np.testing.assert_array_equal(gp.landmarks, rpcholesky(X, 60, gamma=0.5, length_scale=0.7, seed=3).landmarks)
    with pytest.raises(ValueError, match="landmarks"):
        kernel_ridge(X, y, gamma=1.0, n_landmarks=6, landmarks="best", **kw)
