"""Kernel k-means against the plain NumPy oracle of ``fastrbf.reference`` (the full kernel
matrix), against ``fastrbf.kmeans`` (the kernel ``x . y``), against repeated points
(weights), and on the shapes plain k-means cannot separate; its own rules (thread bits,
the held matrix, dtypes, errors, the Nystroem method)."""

import pickle
import re

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.metrics import adjusted_rand_score

from fastrbf import (
    EmptyClusterError,
    kernel_kmeans,
    kernel_kmeans_objective,
    kmeans,
    lloyd_update,
    reference,
)
from fastrbf.models import kernel_clustering as _kc


def _blobs(rng, n=300, d=3, K=4, spread=2.5):
    centres = spread * rng.standard_normal((K, d))
    return centres[rng.integers(0, K, n)] + rng.standard_normal((n, d))


def _rings(n=400, noise=0.03, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 2 * np.pi, n)
    r = np.where(np.arange(n) < n // 2, 0.3, 1.5)
    X = np.c_[r * np.cos(t), r * np.sin(t)] + noise * rng.standard_normal((n, 2))
    return X, (np.arange(n) >= n // 2).astype(int)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("tol", [0.0, 1e-3])
@pytest.mark.parametrize("weighted", [False, True])
def test_equals_the_numpy_oracle(rng, dtype, tol, weighted):
    X = _blobs(rng)
    w = rng.uniform(0.5, 2.0, X.shape[0]) if weighted else None
    lab0 = rng.integers(0, 5, X.shape[0])
    res = kernel_kmeans(X.astype(dtype), 5, gamma=0.3, init=lab0, tol=tol, sample_weight=w, method="exact")
    labels, inertia, n_iter = reference.kernel_kmeans(X, lab0, 5, gamma=0.3, tol=tol, sample_weight=w)
    np.testing.assert_array_equal(res.labels, labels)
    assert res.n_iter == n_iter and res.converged
    assert res.inertia == pytest.approx(inertia, rel=1e-12 if dtype == np.float64 else 1e-6)
    assert res.method == "exact" and res.labels.dtype == np.int64 and res.dtype == dtype


@pytest.mark.parametrize("kernel,gamma,kw", [("laplacian", 0.5, {}), ("matern32", 0.4, {}),
                                             ("polynomial", 0.2, {"degree": 2, "coef0": 1.0}),
                                             ("user", 0.3, {})])
def test_other_kernels_equal_the_oracle(rng, kernel, gamma, kw):
    X = _blobs(rng, n=200)
    lab0 = rng.integers(0, 3, 200)
    theirs = "gaussian" if kernel == "user" else kernel
    if kernel == "user":  # a user kernel runs in the same fused passes
        from user_kernel_defs import gauss_user as kernel
    res = kernel_kmeans(X, 3, kernel=kernel, gamma=gamma, init=lab0, tol=0.0, method="exact", **kw)
    labels, inertia, n_iter = reference.kernel_kmeans(X, lab0, 3, kernel=theirs, gamma=gamma, **kw)
    np.testing.assert_array_equal(res.labels, labels)
    assert res.n_iter == n_iter
    assert res.inertia == pytest.approx(inertia, rel=1e-10)


def test_an_empty_cluster_takes_the_farthest_points_as_the_oracle(rng):
    X = _blobs(rng, n=200)
    lab0 = rng.integers(0, 3, 200)  # clusters 3 and 4 start empty
    res = kernel_kmeans(X, 5, gamma=0.3, init=lab0, tol=0.0, method="exact")
    labels, inertia, n_iter = reference.kernel_kmeans(X, lab0, 5, gamma=0.3)
    np.testing.assert_array_equal(res.labels, labels)
    assert set(res.labels.tolist()) == set(range(5))
    assert res.n_iter == n_iter and res.inertia == pytest.approx(inertia, rel=1e-12)
    with pytest.raises(EmptyClusterError, match=r"cluster\(s\) \[3, 4\] became empty at iteration 1"):
        kernel_kmeans(X, 5, gamma=0.3, init=lab0, empty="raise", method="exact")


def test_the_inner_product_kernel_is_kmeans(rng):
    X = _blobs(rng, n=500, d=4, K=5)
    lab0 = rng.integers(0, 5, 500)
    km = kmeans(X, 5, init=lloyd_update(X, lab0, 5)[0], tol=0.0)
    kk = kernel_kmeans(X, 5, kernel="polynomial", degree=1, coef0=0.0, gamma=1.0, init=lab0, tol=0.0, method="exact")
    np.testing.assert_array_equal(kk.labels, km.labels)
    assert kk.n_iter == km.n_iter
    assert kk.inertia == pytest.approx(km.inertia, rel=1e-9)


def test_weights_are_repeated_points(rng):
    X = _blobs(rng, n=150)
    reps = rng.integers(1, 4, 150)
    lab0 = rng.integers(0, 4, 150)
    a = kernel_kmeans(X, 4, gamma=0.3, init=lab0, sample_weight=reps.astype(float), tol=0.0, method="exact")
    b = kernel_kmeans(np.repeat(X, reps, axis=0), 4, gamma=0.3, init=np.repeat(lab0, reps), tol=0.0, method="exact")
    np.testing.assert_array_equal(np.repeat(a.labels, reps), b.labels)
    assert a.n_iter == b.n_iter
    assert a.inertia == pytest.approx(b.inertia, rel=1e-12)
    # a weight of 0: the point is labelled and predicted, but moves no mean
    w0 = reps.astype(float)
    w0[:10] = 0
    c = kernel_kmeans(X, 4, gamma=0.3, init=lab0, sample_weight=w0, tol=0.0, method="exact")
    d = kernel_kmeans(X[10:], 4, gamma=0.3, init=lab0[10:], sample_weight=w0[10:], tol=0.0, method="exact")
    np.testing.assert_array_equal(c.labels[10:], d.labels)
    np.testing.assert_array_equal(c.labels[:10], d.predict(X[:10]))


def test_same_bits_for_thread_counts_and_with_the_held_matrix(rng, monkeypatch):
    X = _blobs(rng, n=2500, d=5, K=6).astype(np.float32)
    runs = [kernel_kmeans(X, 6, gamma=0.2, seed=3, n_threads=nt, method="exact") for nt in (1, 2)]
    monkeypatch.setattr(_kc, "CACHE_BYTES", 0)  # the same, from kernel tiles
    runs.append(kernel_kmeans(X, 6, gamma=0.2, seed=3, n_threads=2, method="exact"))
    for r in runs[1:]:
        np.testing.assert_array_equal(r.labels, runs[0].labels)
        assert r.inertia == runs[0].inertia and r.n_iter == runs[0].n_iter
    assert runs[0].n_iter > 2  # points moved after the first iteration: the sums were updated, not made again


def test_rings_are_separated_where_kmeans_fails():
    X, truth = _rings()
    kk = kernel_kmeans(X, 2, gamma=2.0, n_init=5, seed=0)
    km = kmeans(X, 2, n_init=5, seed=0)
    assert adjusted_rand_score(truth, kk.labels) == 1.0
    assert adjusted_rand_score(truth, km.labels) < 0.5
    assert kk.inertia == pytest.approx(kernel_kmeans_objective(X, kk.labels, gamma=2.0), rel=1e-12)


def test_more_starts_keep_the_lowest_objective_on_moons():
    X, truth = make_moons(400, noise=0.05, random_state=0)
    one = kernel_kmeans(X, 2, gamma=10.0, seed=0)
    many = kernel_kmeans(X, 2, gamma=10.0, seed=0, n_init=8)
    assert many.inertia <= one.inertia  # the first of the starts is `one`
    assert many.inertia == pytest.approx(kernel_kmeans_objective(X, many.labels, gamma=10.0), rel=1e-12)
    # Lloyd's minima are local: started from the moons it stays there, lower than any start found
    moons = kernel_kmeans(X, 2, gamma=10.0, init=truth, tol=0.0)
    assert adjusted_rand_score(truth, moons.labels) == 1.0
    assert moons.inertia < many.inertia


def test_kmeans_plusplus_and_random_starts(rng):
    X = _blobs(rng, n=400, K=4, spread=6.0)
    for init in ("k-means++", "random"):
        a = kernel_kmeans(X, 4, gamma=0.1, init=init, seed=5)
        b = kernel_kmeans(X, 4, gamma=0.1, init=init, seed=5)
        np.testing.assert_array_equal(a.labels, b.labels)
        assert len(set(a.labels.tolist())) == 4 and a.converged
    with pytest.raises(ValueError, match="fewer distinct points"):
        kernel_kmeans(np.zeros((20, 2)) + np.arange(2)[None, :], 2, gamma=1.0)


def test_predict_and_the_model_own_their_arrays(rng):
    X = _blobs(rng, n=300)
    res = kernel_kmeans(X, 4, gamma=0.3, seed=1, method="exact")
    np.testing.assert_array_equal(res.predict(X), res.labels)
    D = res.distances(X)
    np.testing.assert_allclose(np.min(D, axis=1).astype(float) @ np.ones(300), res.inertia, rtol=1e-10)
    Q = rng.standard_normal((7, 3))
    before = res.predict(Q)
    X[:] = 0.0
    np.testing.assert_array_equal(res.predict(Q), before)
    again = pickle.loads(pickle.dumps(res))
    np.testing.assert_array_equal(again.predict(Q), before)
    with pytest.raises(ValueError, match="`X` must have 3 features"):
        res.predict(np.zeros((2, 4)))


def test_nystroem_with_every_point_and_full_rank_is_the_exact_method(rng):
    X = _blobs(rng, n=250)
    lab0 = rng.integers(0, 4, 250)
    ex = kernel_kmeans(X, 4, gamma=0.3, init=lab0, tol=0.0, method="exact")
    ny = kernel_kmeans(X, 4, gamma=0.3, init=lab0, tol=0.0, method="nystroem", n_landmarks=250, n_components=250,
                       landmark_method="random", seed=0)
    assert ny.method == "nystroem"
    np.testing.assert_array_equal(ny.labels, ex.labels)
    assert ny.n_iter == ex.n_iter
    assert ny.inertia == pytest.approx(ex.inertia, rel=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nystroem_on_rings(dtype):
    X, truth = _rings(n=3000)
    res = kernel_kmeans(X.astype(dtype), 2, gamma=2.0, method="nystroem", n_landmarks=200, n_init=3, seed=0)
    assert adjusted_rand_score(truth, res.labels) == 1.0
    assert res.centers.dtype == dtype and res.projection.shape == (200, 8)
    np.testing.assert_array_equal(res.predict(X.astype(dtype)), res.labels)
    # its features drop the smaller eigen-directions: their inertia is below the exact objective of its labels
    assert res.inertia <= kernel_kmeans_objective(X, res.labels, gamma=2.0) * (1 + 1e-6)


def test_auto_says_which_method_ran(rng, monkeypatch):
    X = _blobs(rng, n=120)
    assert kernel_kmeans(X, 3, gamma=0.3, seed=0).method == "exact"
    monkeypatch.setattr(_kc, "AUTO_EXACT_MAX", 100)
    assert kernel_kmeans(X, 3, gamma=0.3, seed=0, n_landmarks=50).method == "nystroem"


def test_objective_equals_the_oracle(rng):
    X = _blobs(rng, n=200)
    lab = rng.integers(0, 4, 200)
    w = rng.uniform(0.1, 1.0, 200)
    G = reference.gram(X, gamma=0.3)
    want = 0.0
    for c in range(4):
        m = lab == c
        want += w[m] @ np.diag(G)[m] - w[m] @ G[np.ix_(m, m)] @ w[m] / w[m].sum()
    assert kernel_kmeans_objective(X, lab, gamma=0.3, sample_weight=w) == pytest.approx(want, rel=1e-12)


def test_errors_name_the_argument(rng):
    X = _blobs(rng, n=50)
    with pytest.raises(ValueError, match="`method` must be 'auto', 'exact' or 'nystroem'"):
        kernel_kmeans(X, 2, method="full")
    with pytest.raises(ValueError, match="`landmark_method` must be 'rpcholesky', 'kmeans' or 'random'"):
        kernel_kmeans(X, 2, landmark_method="uniform")
    with pytest.raises(ValueError, match=re.escape("`init` must be 'k-means++', 'random' or an array of 50 integer labels")):
        kernel_kmeans(X, 2, init=np.zeros(49, dtype=int))
    with pytest.raises(ValueError, match=r"`init` labels must be in \[0, n_clusters\) = \[0, 2\); got 2"):
        kernel_kmeans(X, 2, init=np.full(50, 2))
    with pytest.raises(ValueError, match="`n_init` must be 1 when `init` is an array"):
        kernel_kmeans(X, 2, init=np.zeros(50, dtype=int), n_init=2)
    with pytest.raises(ValueError, match="`n_landmarks` and `n_components` are for method='nystroem'"):
        kernel_kmeans(X, 2, method="exact", n_landmarks=10)
    with pytest.raises(ValueError, match=r"`n_clusters` must be in \[1, n_samples\]"):
        kernel_kmeans(X, 51)
    with pytest.raises(ValueError, match="`gamma`"):
        kernel_kmeans(X, 2, gamma=-1.0)
    with pytest.raises(ValueError, match="`n_landmarks`"):
        kernel_kmeans(X, 2, method="nystroem", n_landmarks=51)
    with pytest.raises(ValueError, match="The polynomial kernel values of `X` overflow float64 with this `gamma`"):
        kernel_kmeans(100 * X, 2, kernel="polynomial", degree=50, gamma=10.0, seed=0)
    with pytest.raises(ValueError, match="The polynomial kernel values of `X` overflow float32 with this `gamma`"):
        kernel_kmeans((30 * X).astype(np.float32), 2, kernel="polynomial", degree=9, gamma=10.0, coef0=0.0,
                      init=np.arange(50) % 2)
    with pytest.raises(ValueError, match="`labels` must hold 50 integers"):
        kernel_kmeans_objective(X, np.zeros(50))


@pytest.mark.parametrize("landmark_method", ["rpcholesky", "random"])
def test_dask_has_the_in_memory_landmarks_and_features(landmark_method):
    import dask
    import dask.array as da

    from fastrbf import dask as fd

    X, truth = _rings(n=3000)
    w = np.random.default_rng(1).uniform(0.5, 1.5, 3000)
    mem = kernel_kmeans(X, 2, gamma=2.0, method="nystroem", n_landmarks=100, landmark_method=landmark_method,
                        sample_weight=w, seed=0)
    with dask.config.set(scheduler="threads"):
        res = fd.kernel_kmeans(da.from_array(X, chunks=(700, 2)), 2, gamma=2.0, n_landmarks=100, n_init=2,
                               landmark_method=landmark_method, sample_weight=w, seed=0)
        labels = res.labels.compute()
    np.testing.assert_array_equal(res.landmarks, mem.landmarks)  # 2000 rows drawn, then the same pivots
    np.testing.assert_allclose(res.projection, mem.projection, rtol=1e-12, atol=1e-12)
    assert res.method == "nystroem" and res.converged
    assert adjusted_rand_score(truth, labels) == 1.0 and adjusted_rand_score(truth, mem.labels) == 1.0
    np.testing.assert_array_equal(res.predict(X), labels)
    assert res.inertia == pytest.approx(mem.inertia, rel=1e-9)


def test_nystroem_features_keep_the_largest_eigenvalues_of_singular_landmarks():
    X, truth = _rings(n=600)
    Xr, tr = np.tile(X, (5, 1)), np.tile(truth, 5)  # every point five times: the landmarks repeat
    res = kernel_kmeans(Xr, 2, gamma=2.0, method="nystroem", n_landmarks=400, landmark_method="random",
                        n_components=8, seed=0)
    L = res.landmarks
    lam, U = np.linalg.eigh(reference.gram(L, gamma=2.0))
    assert lam[0] < 1e-10 * lam[-1]  # singular: repeated landmarks
    # the features are those of the 8 largest eigenvalues (up to signs)
    want = U[:, ::-1][:, :8] / np.sqrt(lam[::-1][:8])
    np.testing.assert_allclose(np.abs(res.projection), np.abs(want), rtol=1e-6, atol=1e-8 * np.abs(want).max())
    assert adjusted_rand_score(tr, res.labels) == 1.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_precomputed_kernel_is_the_same_clustering(rng, dtype):
    X = _blobs(rng, n=300)
    Q = rng.standard_normal((20, 3))
    lab0 = rng.integers(0, 4, 300)
    w = rng.uniform(0.5, 2.0, 300)
    G = reference.gram(X.astype(dtype), gamma=0.3)
    a = kernel_kmeans(X.astype(dtype), 4, gamma=0.3, init=lab0, sample_weight=w, tol=0.0, method="exact")
    b = kernel_kmeans(G, 4, kernel="precomputed", init=lab0, sample_weight=w, tol=0.0)
    np.testing.assert_array_equal(b.labels, a.labels)
    assert b.n_iter == a.n_iter and b.method == "exact" and b.X_fit is None
    assert b.inertia == pytest.approx(a.inertia, rel=1e-12 if dtype == np.float64 else 1e-5)
    np.testing.assert_array_equal(b.predict(reference.gram(Q.astype(dtype), X.astype(dtype), gamma=0.3)),
                                  a.predict(Q.astype(dtype)))
    assert kernel_kmeans_objective(G, b.labels, kernel="precomputed", sample_weight=w) == pytest.approx(
        b.inertia, rel=1e-12 if dtype == np.float64 else 1e-5)
    c = kernel_kmeans(G, 4, kernel="precomputed", seed=0, n_init=2)  # k-means++ on the matrix's rows
    assert len(set(c.labels.tolist())) == 4
    with pytest.raises(ValueError, match="`X` must be the square kernel matrix"):
        kernel_kmeans(G[:, :-1], 4, kernel="precomputed")
    with pytest.raises(ValueError, match="`method='nystroem'` needs the points"):
        kernel_kmeans(G, 4, kernel="precomputed", method="nystroem")
    with pytest.raises(ValueError, match=r"`X` must have 300 columns \(one per training point\)"):
        b.predict(Q)
    with pytest.raises(ValueError, match="distances need k"):
        b.distances(G[:2])
