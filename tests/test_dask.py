"""fastrbf.dask against the in-memory functions, on a real LocalCluster of worker
processes and on dask's threaded scheduler."""

import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster
from helpers import TOL, assert_rel
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

import fastrbf
from fastrbf import dask as fd


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.CRITICAL)
    c = Client(cluster, set_as_default=False)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


@pytest.fixture(params=["cluster", "threads"])
def scheduler(request):
    """Run the test on the LocalCluster (as the current client) or the threaded scheduler."""
    if request.param == "threads":
        with dask.config.set(scheduler="threads"):
            yield request.param
    else:
        c = request.getfixturevalue("client")
        with c.as_current(), dask.config.set(scheduler="dask.distributed"):
            yield request.param


def _no_tasks(*args, **kwargs):
    raise AssertionError("a task graph was submitted")


@pytest.fixture
def no_tasks():
    """A scheduler that fails the test if anything is computed."""
    with dask.config.set(scheduler=_no_tasks):
        yield


def _data(rng, n=3000, d=3, chunks=700, dtype=np.float64):
    X = rng.standard_normal((n, d)).astype(dtype)
    return X, da.from_array(X, chunks=(chunks, d))


# ---------------------------------------------------------------- import
def test_import_fastrbf_does_not_import_dask():
    code = "import sys, fastrbf; fastrbf.kmeans; assert 'dask' not in sys.modules, 'dask imported'"
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))


def test_import_without_dask_names_the_extra():
    code = ("import sys; sys.modules['dask'] = None\n"
            "try:\n    import fastrbf.dask\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))).stdout
    assert 'pip install "fastrbf[dask]"' in out


# ---------------------------------------------------------------- blockwise
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_blockwise_functions_equal_in_memory(rng, scheduler, dtype):
    X, Xd = _data(rng, n=900, d=5, chunks=257, dtype=dtype)
    Y = rng.standard_normal((300, 5)).astype(dtype)
    Yd = da.from_array(Y, chunks=(128, 5))
    V = rng.standard_normal((300, 2))
    g = rng.random(300) + 0.1
    C = X[:7].copy()
    D, D_self, G, G_self, GV, GV1 = dask.compute(
        fd.sqdist(Xd, Yd), fd.sqdist(Xd), fd.gram(Xd, Yd, gamma=g, kernel="inverse_quadratic"),
        fd.gram(Xd, gamma=0.3), fd.gram_matvec(Xd, Y, V, gamma=0.2), fd.gram_matvec(Xd, Y, V[:, 0], gamma=0.2))
    assert D.dtype == dtype and G.dtype == dtype
    assert_rel(D, fastrbf.sqdist(X, Y), TOL[dtype])
    assert_rel(D_self, fastrbf.sqdist(X), TOL[dtype], atol=TOL[dtype])
    assert np.all(np.diag(D_self) == 0)
    np.testing.assert_array_equal(D_self, D_self.T)  # direct differences (d < 64): exactly symmetric
    assert_rel(G, fastrbf.gram(X, Y, gamma=g, kernel="inverse_quadratic"), TOL[dtype])
    assert_rel(G_self, fastrbf.gram(X, gamma=0.3), TOL[dtype])
    assert_rel(GV, fastrbf.gram_matvec(X, Y, V, gamma=0.2), TOL[dtype], atol=TOL[dtype])
    assert GV1.shape == (900,)
    assert_rel(GV1, fastrbf.gram_matvec(X, Y, V[:, 0], gamma=0.2), TOL[dtype], atol=TOL[dtype])
    labels, d2 = dask.compute(*fd.lloyd_assign(Xd, C))
    l_ref, d_ref = fastrbf.lloyd_assign(X, C)
    np.testing.assert_array_equal(labels, l_ref)
    assert d2.dtype == dtype
    np.testing.assert_array_equal(d2, d_ref)


def test_tasks_use_one_thread_unless_told(rng, monkeypatch):
    seen = []
    real = fastrbf.dask.pairwise._sqdist

    def spy(*args, n_threads=None):
        seen.append(n_threads)
        return real(*args, n_threads=n_threads)

    monkeypatch.setattr(fastrbf.dask.pairwise, "_sqdist", spy)
    X, Xd = _data(rng, n=200, chunks=50)
    with dask.config.set(scheduler="threads"):
        fd.sqdist(Xd, X[:3]).compute()
        assert seen == [1] * 4
        fd.sqdist(Xd, X[:3], n_threads=2).compute()
        assert seen[4:] == [2] * 4
        res = fd.kmeans(Xd, 3, seed=0, max_iter=2)
    assert res.n_iter <= 2


def test_numpy_input_is_one_block(rng):
    X = rng.standard_normal((50, 2))
    out = fd.sqdist(X, X[:5])
    assert out.numblocks == (1, 1)
    np.testing.assert_array_equal(out.compute(scheduler="sync"), fastrbf.sqdist(X, X[:5]))


def test_nan_is_raised_by_the_task(rng):
    X, _Xd = _data(rng, n=100, chunks=30)
    X[50, 1] = np.nan
    with pytest.raises(ValueError, match=r"`X` must contain only finite values; got nan at index \(50, 1\)"):
        fd.sqdist(da.from_array(X, chunks=(30, 3)), X[:4]).compute(scheduler="sync")


@pytest.mark.parametrize("func", ["sqdist", "gram"])
def test_x_alone_names_x(rng, func):
    # with Y=None both sides of every block pair are blocks of X: the message names `X`
    X, _ = _data(rng, n=100, chunks=30)
    X[70, 1] = np.nan
    Xd = da.from_array(X, chunks=(30, 3))
    with pytest.raises(ValueError, match=r"^`X` must contain only finite values; got nan at index \(70, 1\)"):
        getattr(fd, func)(Xd).compute(scheduler="sync")
    # the pairs whose X side is clean and whose Y side holds the NaN name it too
    with pytest.raises(ValueError, match=r"^`X` must contain only finite values; got nan at index \(70, 1\)"):
        getattr(fd, func)(Xd)[:30].compute(scheduler="sync")


def test_nan_reports_the_global_row(rng):
    X, _ = _data(rng, n=100, chunks=30)
    bad = X.copy()
    bad[70, 2] = np.inf
    Xbad = da.from_array(bad, chunks=(30, 3))
    Xd = da.from_array(X, chunks=(30, 3))
    net = fastrbf.rbf_network(X, X[:, 0], centers=X[:3], gamma=1.0)
    at = r"must contain only finite values; got inf at index \(70, 2\) \(1 non-finite value\(s\) in this block\)"
    lazy = [
        lambda: fd.sqdist(Xbad, X[:4]),
        lambda: fd.sqdist(X[:4], Xbad),
        lambda: fd.gram(Xbad, Xd, gamma=0.5),
        lambda: fd.gram(Xd, Xbad, kernel="polynomial"),
        lambda: fd.gram_matvec(Xbad, X[:4], np.ones(4)),
        lambda: fd.lloyd_assign(Xbad, X[:4])[0],
        lambda: fd.predict(net, Xbad),
        lambda: fd.decision_function(net, Xbad),
    ]
    for i, fn in enumerate(lazy):
        name = "Y" if i in (1, 3) else "X"
        with pytest.raises(ValueError, match=f"^`{name}` {at}"):
            fn().compute(scheduler="sync")
    y = X[:, 0].copy()
    y[70] = np.nan
    yd = da.from_array(y, chunks=30)
    Y2 = np.c_[X[:, 0], X[:, 1]]
    Y2[70, 1] = np.nan
    Y2d = da.from_array(Y2, chunks=(30, 2))
    with dask.config.set(scheduler="sync"):
        with pytest.raises(ValueError, match=r"^`Y` must contain only finite values; got nan at index \(70,\)"):
            fd.rbf_network(Xd, yd, centers=X[:3], gamma=1.0)
        with pytest.raises(ValueError, match=r"^`Y` must contain only finite values; got nan at index \(70, 1\)"):
            fd.rbf_network(Xd, Y2d, centers=X[:3], gamma=1.0)
        for fit_intercept in (False, True):
            with pytest.raises(ValueError, match=r"^`Y` must contain only finite values; got nan at index \(70,\)"):
                fd.kernel_ridge(Xd, yd, gamma=1.0, alpha=1.0, landmarks=X[:3], fit_intercept=fit_intercept)
        with pytest.raises(ValueError, match=r"^`X` " + at):
            fd.kernel_ridge(Xbad, X[:, 0], gamma=1.0, alpha=1.0, landmarks=X[:3])
        with pytest.raises(ValueError, match=r"^`X` " + at):
            fd.rbf_network(Xbad, X[:, 0], centers=X[:3], gamma=1.0)


@pytest.mark.parametrize("seed,exc", [(-1, ValueError), ("a", TypeError), (True, TypeError), (1.5, TypeError),
                                      (np.random.RandomState(0), TypeError)])
def test_seeds_checked_before_any_task(rng, no_tasks, seed, exc):
    X, Xd = _data(rng, n=100, chunks=30)
    match = "`seed` must be None, an int >= 0 or a numpy.random.Generator"
    with pytest.raises(exc, match=match):
        fd.kmeans(Xd, 3, seed=seed)
    with pytest.raises(exc, match=match):
        fd.rbf_network(Xd, X[:, 0], n_centers=3, gamma=1.0, seed=seed)
    with pytest.raises(exc, match=match):
        fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=1.0, n_landmarks=5, seed=seed)


def test_int_seed_is_the_generator_of_that_seed(rng):
    X, Xd = _data(rng, n=300, chunks=70)
    with dask.config.set(scheduler="sync"):
        a = fd.kmeans(Xd, 4, seed=7)
        b = fd.kmeans(Xd, 4, seed=np.random.default_rng(7))
        ka = fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=1.0, n_landmarks=9, seed=np.uint8(5))
        kb = fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=1.0, n_landmarks=9, seed=np.random.default_rng(5))
    assert np.array_equal(a.centers, b.centers)
    assert np.array_equal(ka.centers, kb.centers)


# ---------------------------------------------------------------- kmeans
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("K", [6, 200])  # direct and float32-GEMM assignment
@pytest.mark.parametrize("weighted", [False, True])
def test_kmeans_equals_in_memory_from_the_same_centres(rng, scheduler, dtype, K, weighted):
    X, Xd = _data(rng, dtype=dtype)
    w = rng.random(X.shape[0]) if weighted else None
    if weighted:
        w[::5] = 0
    C0 = X[rng.choice(X.shape[0], K, replace=False)].copy()
    C0[:2] = 50 + np.arange(2)[:, None]  # far away: empty clusters at the first step (relocation)
    ref = fastrbf.kmeans(X, K, init=C0, sample_weight=w)
    wd = None if w is None else da.from_array(w, chunks=700)
    res = fd.kmeans(Xd, K, init=C0, sample_weight=wd)
    assert res.centers.dtype == dtype
    assert (res.n_iter, res.converged) == (ref.n_iter, ref.converged)
    assert_rel(res.centers, ref.centers, 1e-12 if dtype == np.float64 else 0.0, atol=1e-12)
    np.testing.assert_array_equal(res.labels.compute(), ref.labels)
    assert_rel(res.inertia, ref.inertia, TOL[dtype])


def test_kmeans_tol_and_max_iter_as_in_memory(rng, scheduler):
    X, Xd = _data(rng, n=2000, d=2, chunks=600)
    C0 = X[:20].copy()
    for kw in ({"tol": 1e-2}, {"max_iter": 3, "tol": 0.0}):
        ref = fastrbf.kmeans(X, 20, init=C0, **kw)
        res = fd.kmeans(Xd, 20, init=C0, **kw)
        assert (res.n_iter, res.converged) == (ref.n_iter, ref.converged)
        assert_rel(res.centers, ref.centers, 1e-12, atol=1e-12)


def test_kmeans_empty_raise(rng):
    X, Xd = _data(rng, n=500, chunks=200)
    C0 = np.vstack([X[:3], [[100.0, 100.0, 100.0]]])
    with pytest.raises(fastrbf.EmptyClusterError, match=r"cluster\(s\) \[3\] became empty at iteration 1"):
        fastrbf.kmeans(X, 4, init=C0, empty="raise")
    with dask.config.set(scheduler="threads"), pytest.raises(
            fastrbf.EmptyClusterError, match=r"cluster\(s\) \[3\] became empty at iteration 1"):
        fd.kmeans(Xd, 4, init=C0, empty="raise")


def test_kmeans_parallel_init_finds_the_blobs(scheduler):
    X, _ = make_blobs(4000, n_features=4, centers=6, cluster_std=0.5, random_state=3)
    Xd = da.from_array(X, chunks=(900, 4))
    w = np.random.default_rng(0).random(4000) + 0.5
    res = fd.kmeans(Xd, 6, seed=0, n_init=2, sample_weight=w)
    sk = KMeans(6, n_init=10, random_state=0).fit(X, sample_weight=w)

    def order(C):
        return C[np.lexsort(C.T[::-1])]

    assert_rel(order(res.centers), order(sk.cluster_centers_), 1e-8, atol=1e-8)
    assert_rel(res.inertia, sk.inertia_, 1e-8)
    again = fd.kmeans(Xd, 6, seed=0, n_init=2, sample_weight=w)  # deterministic for a chunking
    np.testing.assert_array_equal(again.centers, res.centers)


def test_kmeans_parallel_init_same_on_every_scheduler(rng, client):
    _X, Xd = _data(rng, n=2500, d=2, chunks=500)
    with dask.config.set(scheduler="threads"):
        a = fd.kmeans(Xd, 12, seed=5, max_iter=5)
    with client.as_current(), dask.config.set(scheduler="dask.distributed"):
        b = fd.kmeans(Xd, 12, seed=5, max_iter=5)
    np.testing.assert_array_equal(a.centers, b.centers)
    assert a.inertia == b.inertia


def test_kmeans_parallel_init_too_few_distinct_points():
    X = np.repeat(np.eye(3), 20, axis=0)
    with dask.config.set(scheduler="threads"), pytest.raises(ValueError, match="fewer distinct points"):
        fd.kmeans(da.from_array(X, chunks=(25, 3)), 4, seed=0)


def test_bad_values_found_in_the_first_pass(rng):
    X, _ = _data(rng, n=100, chunks=30)
    X[70, 2] = np.inf
    with dask.config.set(scheduler="threads"):
        Xbad = da.from_array(X, chunks=(30, 3))
        with pytest.raises(ValueError, match=r"`X` must contain only finite values; got inf at index \(70, 2\)"):
            fd.kmeans(Xbad, 2, seed=0)
        with pytest.raises(ValueError, match=r"`X` must contain only finite values; got inf at index \(70, 2\)"):
            fd.rbf_network(Xbad, X[:, 0], centers=X[:2], gamma=1.0)
        with pytest.raises(ValueError, match=r"`X` must contain only finite values; got inf at index \(70, 2\)"):
            fd.kernel_ridge(Xbad, X[:, 0], gamma=1.0, alpha=1.0, landmarks=X[:2])
        Xd = da.from_array(X[:60], chunks=(30, 3))
        for Y in (np.r_[np.ones(40), np.nan, np.ones(19)], da.from_array(np.r_[np.ones(40), np.nan, np.ones(19)], chunks=30)):
            with pytest.raises(ValueError, match="`Y` must contain only finite values"):
                fd.rbf_network(Xd, Y, centers=X[:2], gamma=1.0)
        for w, msg in ((-np.ones(60), "`sample_weight` must be >= 0"), (np.zeros(60), "at least one value > 0"),
                       (np.r_[np.nan, np.ones(59)], "`sample_weight` must contain only finite values")):
            with pytest.raises(ValueError, match=msg):
                fd.kmeans(Xd, 2, seed=0, sample_weight=da.from_array(w, chunks=30))
        with pytest.raises(ValueError, match=r"`n_clusters` \(3\) must not exceed the number of points with weight"):
            fd.kmeans(Xd, 3, seed=0, sample_weight=np.r_[1.0, 1.0, np.zeros(58)])


# ---------------------------------------------------------------- RBF network
@pytest.mark.parametrize("kw", [{}, {"alpha": 1e-3}, {"bias": False}, {"kernel": "inverse_multiquadric"},
                                {"kernel": "polynomial"}])
def test_rbf_network_equals_in_memory(rng, scheduler, kw):
    X, Xd = _data(rng, n=2000, d=3, chunks=450)
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] * X[:, 2]]
    C = X[rng.choice(2000, 15, replace=False)]
    g = rng.random(15) + 0.2
    ref = fastrbf.rbf_network(X, Y, centers=C, gamma=g, **kw)
    net = fd.rbf_network(Xd, da.from_array(Y, chunks=(450, 2)), centers=C, gamma=g, **kw)
    assert_rel(net.weights, ref.weights, 1e-10, atol=1e-10 * np.abs(ref.weights).max())
    assert_rel(net.bias, ref.bias, 1e-10, atol=1e-10)
    Q, Qd = _data(rng, n=700, d=3, chunks=300)
    pred = fd.predict(net, Qd).compute()
    assert pred.shape == (700, 2)
    assert_rel(pred, ref.predict(Q), 1e-9, atol=1e-9)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_rbf_network_classifier_equals_in_memory(rng, scheduler, n_classes):
    X, Xd = _data(rng, n=1500, d=2, chunks=400, dtype=np.float32)
    lab = np.array(["a", "b", "c"])[(X[:, 0] > 0) + (X[:, 1] > 0.5) * (n_classes - 2)]
    C = X[:10].astype(np.float64)
    ref = fastrbf.rbf_network(X, lab, centers=C, gamma=0.5, classify=True, alpha=1e-6)
    net = fd.rbf_network(Xd, da.from_array(lab, chunks=400), centers=C, gamma=0.5, classify=True, alpha=1e-6)
    np.testing.assert_array_equal(net.classes, ref.classes)
    assert net.single_output == ref.single_output and net.dtype == ref.dtype
    assert_rel(net.weights, ref.weights, 1e-10, atol=1e-10 * np.abs(ref.weights).max())
    np.testing.assert_array_equal(fd.predict(net, Xd).compute(), ref.predict(X))
    scores = fd.decision_function(net, Xd).compute()
    assert scores.dtype == np.float32
    assert_rel(scores, ref.decision_function(X), 1e-5, atol=1e-5)


def test_rbf_network_kmeans_centres(rng, scheduler):
    X, Xd = _data(rng, n=1200, d=2, chunks=400)
    y = np.sin(2 * X[:, 0])
    net = fd.rbf_network(Xd, y, n_centers=8, gamma=0.5, seed=1, max_iter=50)
    km = fd.kmeans(Xd, 8, seed=1, max_iter=50)
    np.testing.assert_array_equal(net.centers, km.centers)
    ref = fastrbf.rbf_network(X, y, centers=net.centers, gamma=0.5)
    assert_rel(net.weights, ref.weights, 1e-10, atol=1e-10 * np.abs(ref.weights).max())


def test_predict_kernel_model(rng, scheduler):
    X, Xd = _data(rng, n=400, d=2, chunks=150)
    m = fastrbf.kernel_ridge(X[:100], np.c_[X[:100, 0], X[:100, 1] ** 2], gamma=1.0, alpha=1e-3)
    assert_rel(fd.predict(m, Xd).compute(), m.predict(X), 1e-12, atol=1e-12)
    m1 = fastrbf.interpolate(X[:50], X[:50, 0] ** 2)
    assert_rel(fd.predict(m1, Xd).compute(), m1.predict(X), 1e-12, atol=1e-12)


# ---------------------------------------------------------------- kernel ridge (Nystroem PCG)
@pytest.mark.parametrize("kw", [{"n_landmarks": 40}, {"n_landmarks": 30, "landmarks": "kmeans"},
                                {"n_landmarks": 30, "landmarks": "rpcholesky"},
                                {"n_landmarks": 30, "landmarks": "auto"},
                                {"n_landmarks": 40, "fit_intercept": True}, {"kernel": "laplacian"}])
def test_kernel_ridge_equals_in_memory(rng, scheduler, kw):
    X, Xd = _data(rng, n=3000, d=3, chunks=800)
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] * X[:, 2]] + 3.0
    if "n_landmarks" not in kw:
        kw = dict(kw, landmarks=X[rng.choice(3000, 40, replace=False)])
    ref = fastrbf.kernel_ridge(X, Y, gamma=0.3, alpha=1.0, solver="nystrom-pcg", seed=3, tol=1e-10, **kw)
    m = fd.kernel_ridge(Xd, da.from_array(Y, chunks=(800, 2)), gamma=0.3, alpha=1.0, seed=3, tol=1e-10, **kw)
    np.testing.assert_array_equal(m.centers, ref.centers)  # the same landmarks
    assert (m.solver, m.converged) == (ref.solver, True)
    assert abs(m.n_iter - ref.n_iter) <= 1  # rounding can move the tol crossing by one iteration
    assert_rel(m.intercept, ref.intercept, 1e-12)
    assert_rel(m.weights, ref.weights, 1e-8, atol=1e-8 * np.abs(ref.weights).max())
    P = ref.predict(X)
    assert_rel(fd.predict(m, Xd).compute(), P, 1e-9, atol=1e-9 * np.abs(P).max())


def test_kernel_ridge_convergence_warning(rng):
    X, Xd = _data(rng, n=500, chunks=200)
    with dask.config.set(scheduler="threads"), pytest.warns(fastrbf.ConvergenceWarning, match="did not converge"):
        m = fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=1e-6, n_landmarks=100, max_iter=1, seed=0)
    assert not m.converged and m.n_iter == 1


# ---------------------------------------------------------------- errors before any task runs
def test_errors_before_any_task(rng, no_tasks):
    X, Xd = _data(rng, n=100, d=4, chunks=30)
    by_features = da.from_array(X, chunks=(30, 2))
    net = fastrbf.rbf_network(X, X[:, 0], centers=X[:3], gamma=1.0)
    C = X[:3]
    cases = [
        (lambda: fd.kmeans(by_features, 3), ValueError, "`X` must be chunked by rows only"),
        (lambda: fd.sqdist(by_features), ValueError, r"`X` must be chunked by rows only.*rechunk"),
        (lambda: fd.gram(Xd, by_features), ValueError, "`Y` must be chunked by rows only"),
        (lambda: fd.rbf_network(Xd, da.from_array(X[:, 0], chunks=40), centers=C, gamma=1.0), ValueError,
         "`Y` must have the same row chunks as `X`"),
        (lambda: fd.kmeans(Xd, 3, sample_weight=da.ones(100, chunks=50)), ValueError,
         "`sample_weight` must have the same row chunks as `X`"),
        (lambda: fd.rbf_network(Xd, X[:50, 0], centers=C, gamma=1.0), ValueError, "`Y` must have one row per row"),
        (lambda: fd.predict(net, Xd[:, :3]), ValueError, r"`X` must have 4 features \(as the training data\)"),
        (lambda: fd.kmeans(Xd, 3, init=X[:3, :2]), ValueError, "`init` must have the same number of features"),
        (lambda: fd.rbf_network(Xd, X[:, 0], centers=C[:, :2], gamma=1.0), ValueError,
         "`centers` must have the same number of features"),
        (lambda: fd.lloyd_assign(Xd, C[:, :3]), ValueError, "`centers` must have the same number of features"),
        (lambda: fd.gram_matvec(Xd, C, np.ones(2)), ValueError, r"`V` must have one row per row of `Y` \(3\)"),
        (lambda: fd.gram_matvec(Xd, da.from_array(C), np.ones(3)), TypeError, "`Y` must be an in-memory array"),
        (lambda: fd.sqdist(Xd.astype(np.complex128)), TypeError, "`X` must be an array of real numbers"),
        (lambda: fd.kmeans(Xd[:, 0], 2), ValueError, r"`X` must be a 2-D array"),
        (lambda: fd.kmeans(Xd[Xd[:, 0] > 0], 2), ValueError, r"`X` has unknown chunk sizes \(nan\)"),
        (lambda: fd.kmeans(Xd, 101), ValueError, r"`n_clusters` must be in \[1, n_samples\]"),
        (lambda: fd.kmeans(Xd, 3, init="k-means++"), ValueError, "`init` must be 'k-means||'"),
        (lambda: fd.kmeans(Xd, 3, oversampling_factor=0), ValueError, "`oversampling_factor` must be"),
        (lambda: fd.kmeans(Xd, 3, n_threads=0), ValueError, "`n_threads` must be a nonzero int"),
        (lambda: fd.sqdist(Xd, n_threads="2"), TypeError, "`n_threads` must be a nonzero int or None; got '2'"),
        (lambda: fd.gram(Xd, n_threads=True), TypeError, "`n_threads` must be a nonzero int or None; got True"),
        (lambda: fd.gram(Xd, coef0="a"), TypeError, "`coef0` must be a finite number; got 'a'"),
        (lambda: fd.gram_matvec(Xd, C, np.ones(3), coef0=None), TypeError, "`coef0` must be a finite number"),
        (lambda: fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=1.0, coef0=[1.0]), TypeError,
         "`coef0` must be a finite number"),
        (lambda: fd.rbf_network(Xd, [[1.0], [1.0, 2.0]], centers=C, gamma=1.0), ValueError,
         "`Y` must be array-like; could not convert it"),
        (lambda: fd.rbf_network(Xd, X[:, 0], centers=C, gamma=-1.0), ValueError, "`gamma` must be a finite number > 0"),
        (lambda: fd.rbf_network(Xd, X[:, 0], centers=C, gamma=1.0, learn_gamma=True), NotImplementedError,
         "`learn_gamma`"),
        (lambda: fd.rbf_network(Xd, X[:, 0], centers="all", gamma=1.0), NotImplementedError, 'centers="all"'),
        (lambda: fd.rbf_network(Xd, X[:, 0], gamma=1.0), ValueError, "`n_centers` must be given"),
        (lambda: fd.predict("model", Xd), TypeError, "`model` must be an RBFNetwork or a KernelModel"),
        (lambda: fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=1.0, solver="cholesky"), ValueError,
         '`solver` must be "nystrom-pcg" on dask arrays'),
        (lambda: fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=np.ones(100)), TypeError, "`alpha` must be a number"),
        (lambda: fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=0.0), ValueError, "`alpha` must be > 0"),
        (lambda: fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=1.0, kernel="multiquadric"), ValueError,
         "`kernel` must be one of"),
        (lambda: fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=1.0, landmarks=X[:5, :2]), ValueError,
         "`landmarks` must have the same number of features"),
        (lambda: fd.kernel_ridge(Xd, X[:, 0], gamma=1.0, alpha=1.0, n_landmarks=101), ValueError,
         r"`n_landmarks` must be an int in \[1, n_samples\]"),
        (lambda: fd.kernel_ridge(Xd, da.from_array(X[:, :2], chunks=(50, 2)), gamma=1.0, alpha=1.0), ValueError,
         "`Y` must have the same row chunks as `X`"),
        (lambda: fd.rbf_network(Xd, X[:, 0] + 1j, centers=C, gamma=1.0), TypeError, "`Y` must be an array of real"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()


def test_float32_gamma_range(rng):
    X = da.from_array(np.ones((4, 2), dtype=np.float32), chunks=(2, 2))
    for g in (1e160, 1e-160):
        with pytest.raises(ValueError, match=r"`gamma` must be within the float32 range \[1.18e-38, 3.4e\+38\] for "
                                             + re.escape(f"float32 data; got {g!r}")):
            fd.gram(X, gamma=g)
        with pytest.raises(ValueError, match="`gamma` must be within the float32 range"):
            fd.gram_matvec(X, np.ones((3, 2), dtype=np.float32), np.ones(3, dtype=np.float32), gamma=g)
    # float64 data takes them: exp(-1e160 * 0) = 1 on the diagonal
    K = fd.gram(X.astype(np.float64), gamma=1e160).compute(scheduler="sync")
    np.testing.assert_array_equal(K, np.ones((4, 4)))


def test_rbf_network_kmeans_names_n_centers():
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0]]), 10, axis=0)
    with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match=r"`n_centers` \(3\)"):
        fd.rbf_network(da.from_array(X, chunks=(7, 2)), np.arange(20.0), n_centers=3, gamma=1.0, seed=0)


def test_integer_input_becomes_float64(scheduler):
    X = np.arange(40).reshape(20, 2)
    out = fd.sqdist(da.from_array(X, chunks=(7, 2)))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.compute(), fastrbf.sqdist(X))


# ---------------------------------------------------------------- fault tolerance (last: restarts a worker)
def test_kmeans_survives_a_killed_worker(rng, client, monkeypatch):
    X, Xd = _data(rng, n=20000, d=4, chunks=2500)
    C0 = X[:12].copy()
    with client.as_current(), dask.config.set(scheduler="dask.distributed"):
        ref = fd.kmeans(Xd, 12, init=C0, max_iter=8, tol=0.0)
        ref_labels = ref.labels.compute()
        pids = client.run(os.getpid)
        victim = min(pids.values())
        killed = []

        def kill():
            os.kill(victim, signal.SIGKILL)
            killed.append(time.perf_counter())

        timer = threading.Timer(0.01, kill)  # lands while the third iteration's tasks run

        def after(it):
            if it == 2:
                timer.start()

        monkeypatch.setattr(fd.cluster, "_iteration_callback", after)
        res = fd.kmeans(Xd, 12, init=C0, max_iter=8, tol=0.0)
        end = time.perf_counter()
        timer.join()
        labels = res.labels.compute()
    assert killed and killed[0] < end and res.n_iter > 2
    np.testing.assert_array_equal(res.centers, ref.centers)
    np.testing.assert_array_equal(labels, ref_labels)
    assert (res.n_iter, res.converged, res.inertia) == (ref.n_iter, ref.converged, ref.inertia)
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()  # the nanny started a new process


@pytest.mark.parametrize("name", ["bias", "classify"])
def test_rbf_network_bools_checked_as_in_memory(name):
    X = da.from_array(np.random.default_rng(0).random((40, 2)), chunks=20)
    y = np.arange(40.0) % 2
    with pytest.raises(TypeError, match=f"^`{name}` must be a bool; got 'yes'"):
        fd.rbf_network(X, y, gamma=1.0, n_centers=3, **{name: "yes"})
    with pytest.raises(TypeError, match=f"^`{name}` must be a bool; got 'yes'"):
        fastrbf.rbf_network(X.compute(), y, gamma=1.0, n_centers=3, **{name: "yes"})
