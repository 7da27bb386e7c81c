"""The device kernels against the CPU: the same functions on device arrays (numba's,
the simulator's under ``NUMBA_ENABLE_CUDASIM=1``) give the CPU's results within the
accuracy each function promises, results of the input's kind and dtype, and the CPU's
errors naming the argument.  Inputs are small and cross the block and tile boundaries
(the simulator's blocks are 4 x 4 and 8 threads)."""

import math

import numpy as np
import pytest
from cuda_helpers import KINDS, to_device, to_host

import fastrbf
from fastrbf import KERNELS, EmptyClusterError, define_kernel
from fastrbf._jit.cuda.target import ROWS, TILE

TOL = {np.float64: 1e-12, np.float32: 2e-5}


def _close(got, want, dtype):
    tol = TOL[dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sqdist_matches_the_cpu_and_is_exactly_symmetric(rng, dtype):
    X = (rng.standard_normal((2 * TILE + 1, 6)) + 100.0).astype(dtype)  # offset: no norm expansion
    Y = (rng.standard_normal((TILE + 3, 6)) + 100.0).astype(dtype)
    D = fastrbf.sqdist(to_device(X), to_device(Y))
    assert type(D) is type(to_device(X)) and D.dtype == dtype
    _close(to_host(D), fastrbf.sqdist(X.astype(float), Y.astype(float)), dtype)
    S = to_host(fastrbf.sqdist(to_device(X)))
    assert np.array_equal(S, S.T) and np.all(np.diag(S) == 0)
    ls = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.5])
    _close(to_host(fastrbf.sqdist(to_device(X), to_device(Y), length_scale=ls)),
           fastrbf.sqdist(X, Y, length_scale=ls), dtype)


def test_sqdist_writes_into_out_and_keeps_float64_when_mixed(rng):
    X = rng.standard_normal((5, 3))
    Y = rng.standard_normal((4, 3)).astype(np.float32)
    out = to_device(np.zeros((5, 4)))
    got = fastrbf.sqdist(to_device(X), to_device(Y), out=out)
    assert got is out
    _close(to_host(out), fastrbf.sqdist(X, Y), np.float64)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_gram_every_kernel_float64(rng, kernel):
    X = rng.standard_normal((TILE + 2, 3))
    Y = rng.standard_normal((TILE + 1, 3))
    kw = dict(kernel=kernel, gamma=0.7, degree=3, coef0=1.5)
    _close(to_host(fastrbf.gram(to_device(X), to_device(Y), **kw)), fastrbf.gram(X, Y, **kw), np.float64)


@pytest.mark.parametrize("kernel", ["gaussian", "thin_plate_spline", "polynomial", "matern32", "rational_quadratic"])
def test_gram_float32_and_per_column_gamma(rng, kernel):
    X = rng.standard_normal((TILE + 2, 5)).astype(np.float32)
    g = rng.uniform(0.2, 1.0, TILE + 2).astype(np.float32)
    G = fastrbf.gram(to_device(X), kernel=kernel, gamma=to_device(g), degree=2, coef0=1.0)
    assert G.dtype == np.float32
    _close(to_host(G), fastrbf.gram(X, kernel=kernel, gamma=g, degree=2, coef0=1.0), np.float32)


@define_kernel
def device_cauchy(s):
    """A user kernel written with math and fastrbf's exp."""
    return math.exp(-s) / (1.0 + s)


def test_user_kernel_is_compiled_for_the_device(rng):
    X = rng.standard_normal((7, 2))
    _close(to_host(fastrbf.gram(to_device(X), kernel=device_cauchy, gamma=0.5)),
           fastrbf.gram(X, kernel=device_cauchy, gamma=0.5), np.float64)


@pytest.mark.parametrize("d", [3, 6, 40])  # registers of 4 and 8 features; beyond 32, read from memory
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gram_matvec_matches_the_cpu(rng, d, dtype):
    X = rng.standard_normal((ROWS + 3, d)).astype(dtype)
    Y = rng.standard_normal((2 * ROWS + 5, d)).astype(dtype)
    V = rng.standard_normal((2 * ROWS + 5, 5)).astype(dtype)  # two groups of columns
    got = fastrbf.gram_matvec(to_device(X), to_device(Y), to_device(V), gamma=1.0 / d)
    assert got.dtype == dtype and got.shape == (ROWS + 3, 5)
    _close(to_host(got), fastrbf.gram_matvec(X, Y, V, gamma=1.0 / d), dtype)
    v = to_host(fastrbf.gram_matvec(to_device(X), to_device(Y), to_device(V[:, 0].copy()), kernel="laplacian"))
    _close(v, fastrbf.gram_matvec(X, Y, V[:, 0], kernel="laplacian"), dtype)


@pytest.mark.parametrize("k", [1, 5, 2 * ROWS + 1])
def test_knn_matches_the_cpu_with_ties_to_the_lowest_index(rng, k):
    # small integers: every distance exact, so ties are ties on both sides
    X = rng.integers(-4, 5, (3 * ROWS, 2)).astype(np.float64)
    X[5] = X[2 * ROWS + 3]  # duplicates: the lower index first
    Q = rng.integers(-4, 5, (ROWS + 2, 2)).astype(np.float64)
    idx, d2 = fastrbf.knn(to_device(X), to_device(Q), k)
    ic, dc = fastrbf.knn(X, Q, k, method="brute")
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(to_host(idx), ic)
    _close(to_host(d2), dc, np.float64)


def test_knn_float32(rng):
    X = rng.standard_normal((40, 3)).astype(np.float32)
    Q = rng.standard_normal((9, 3)).astype(np.float32)
    idx, d2 = fastrbf.knn(to_device(X), to_device(Q), 4)
    ic, dc = fastrbf.knn(X, Q, 4)
    assert d2.dtype == np.float32
    np.testing.assert_array_equal(to_host(idx), ic)
    _close(to_host(d2), dc, np.float32)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lloyd_steps_match_the_cpu(rng, dtype):
    X = rng.standard_normal((3 * ROWS + 1, 3)).astype(dtype)
    C = X[:ROWS + 2].copy()
    lab, md = fastrbf.lloyd_assign(to_device(X), to_device(C))
    lc, mc = fastrbf.lloyd_assign(X, C)
    np.testing.assert_array_equal(to_host(lab), lc)
    _close(to_host(md), mc, dtype)
    w = rng.uniform(0.5, 2.0, X.shape[0])
    K = ROWS + 3  # the last cluster is empty: NaN centre, weight 0
    cen, cnt = fastrbf.lloyd_update(to_device(X), to_device(lc), K, sample_weight=to_device(w))
    cc, nc = fastrbf.lloyd_update(X, lc, K, sample_weight=w)
    assert cen.dtype == dtype and np.isnan(to_host(cen)[-1]).all() and to_host(cnt)[-1] == 0
    _close(to_host(cen)[:-1], cc[:-1], dtype)
    _close(to_host(cnt), nc, np.float64)


def _blobs(rng, n, K, d=2, spread=0.3):
    centres = rng.uniform(-10, 10, (K, d))
    return centres[rng.integers(0, K, n)] + spread * rng.standard_normal((n, d))


@pytest.mark.parametrize("tol", [0.0, 1e-4])
def test_kmeans_from_the_same_centres_is_the_cpus(rng, tol):
    X = rng.standard_normal((5 * ROWS, 2))
    w = rng.uniform(0.5, 2.0, X.shape[0])
    C = X[:6].copy()
    r = fastrbf.kmeans(to_device(X), 6, init=to_device(C), tol=tol, sample_weight=to_device(w))
    rc = fastrbf.kmeans(X, 6, init=C, tol=tol, sample_weight=w)
    np.testing.assert_array_equal(to_host(r.labels), rc.labels)
    assert (r.n_iter, r.converged) == (rc.n_iter, rc.converged)
    _close(to_host(r.centers), rc.centers, np.float64)
    assert r.inertia == pytest.approx(rc.inertia, rel=1e-12)


def test_kmeans_relocates_an_empty_cluster_as_the_cpu(rng):
    X = rng.standard_normal((3 * ROWS, 2))
    C = np.vstack([X[:3], [[50.0, 50.0]]])  # the far centre gets no point
    r = fastrbf.kmeans(to_device(X), 4, init=to_device(C))
    rc = fastrbf.kmeans(X, 4, init=C)
    np.testing.assert_array_equal(to_host(r.labels), rc.labels)
    assert r.n_iter == rc.n_iter and r.inertia == pytest.approx(rc.inertia, rel=1e-12)
    with pytest.raises(EmptyClusterError, match=r"cluster\(s\) \[3\] became empty at iteration 1"):
        fastrbf.kmeans(to_device(X), 4, init=to_device(C), empty="raise")


@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_kmeans_seeding_finds_separated_clusters(rng, init):
    X = _blobs(rng, 4 * ROWS, 5)
    r = fastrbf.kmeans(to_device(X), 5, init=init, n_init=3, seed=0)
    rc = fastrbf.kmeans(X, 5, n_init=3, seed=0)
    assert r.inertia == pytest.approx(rc.inertia, rel=1e-9)  # the same (global) minimum
    again = fastrbf.kmeans(to_device(X), 5, init=init, n_init=3, seed=0)
    assert np.array_equal(to_host(again.centers), to_host(r.centers))  # the same bits for the same seed


def test_float32_kmeans_keeps_float32(rng):
    X = _blobs(rng, 3 * ROWS, 3).astype(np.float32)
    r = fastrbf.kmeans(to_device(X), 3, seed=1)
    assert r.centers.dtype == np.float32 and r.labels.dtype == np.int64
    rc = fastrbf.kmeans(X, 3, seed=1)
    assert r.inertia == pytest.approx(rc.inertia, rel=1e-5)


def test_host_arguments_beside_device_data_are_refused():
    X = to_device(np.ones((4, 2)))
    with pytest.raises(TypeError, match=r"`Y` is on the host \(ndarray\) while the data are on a CUDA device"):
        fastrbf.sqdist(X, np.ones((3, 2)))
    with pytest.raises(TypeError, match=r"`V` is on the host"):
        fastrbf.gram_matvec(X, X, np.ones(4))
    with pytest.raises(TypeError, match=r"`gamma` with one value per column must be on the CUDA device"):
        fastrbf.gram(X, gamma=np.ones(4))
    with pytest.raises(TypeError, match=r"`init` must be on the CUDA device"):
        fastrbf.kmeans(X, 2, init=np.ones((2, 2)), sample_weight=to_device(np.ones(4)))


def test_bad_device_data_name_the_argument():
    X = np.ones((4, 2))
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"`X` must contain only finite values"):
        fastrbf.gram(to_device(X))
    with pytest.raises(ValueError, match=r"`Y` must have the same number of features as `X` \(2\)"):
        fastrbf.sqdist(to_device(np.ones((4, 2))), to_device(np.ones((3, 3))))
    with pytest.raises(ValueError, match=r"`X` must have values of magnitude at most"):
        fastrbf.sqdist(to_device(np.full((3, 2), 1e30, dtype=np.float32)))
    with pytest.raises(ValueError, match=r"`k` must be at most 128 for data on a CUDA device"):
        fastrbf.knn(to_device(np.ones((200, 2))), to_device(np.ones((1, 2))), 129)
    with pytest.raises(ValueError, match=r"`labels` must be integers in \[0, 2\)"):
        fastrbf.lloyd_update(to_device(np.ones((3, 2))), to_device(np.array([0, 1, 2])), 2)


# the simulator computes with NumPy scalars, which warn where the device overflows silently
@pytest.mark.filterwarnings("ignore:.*encountered in scalar:RuntimeWarning")
def test_overflowing_kernel_values_are_refused():
    with pytest.raises(ValueError, match=r"gram overflows float64"):
        fastrbf.gram(to_device(np.array([[0.0], [30.0]])), kernel="polynomial", gamma=1e10, degree=40)


@pytest.mark.parametrize(("landmarks", "dtype"), [("uniform", np.float64), ("rpcholesky", np.float32)])
def test_kernel_ridge_pcg_is_the_cpus_fit(rng, landmarks, dtype):
    X = rng.uniform(-2, 2, (6 * ROWS, 2)).astype(dtype)
    Y = (np.column_stack([np.sin(2 * X[:, 0]), np.cos(X[:, 1])]) + 0.01 * rng.standard_normal((6 * ROWS, 2)))
    Y = Y.astype(dtype)
    kw = dict(gamma=1.5, alpha=1e-3, solver="nystrom-pcg", n_landmarks=ROWS + 3, landmarks=landmarks, seed=3,
              fit_intercept=True, tol=1e-10, max_iter=200)
    model = fastrbf.kernel_ridge(to_device(X), to_device(Y), **kw)
    cpu = fastrbf.kernel_ridge(X, Y, **kw)
    np.testing.assert_array_equal(model.centers, cpu.centers)  # the same landmarks for the same seed
    assert model.dtype == cpu.dtype == dtype
    # float64: the same solve to CG's tolerance; float32: kernel values in float32 on the device
    rtol = 1e-8 if dtype == np.float64 else 1e-4
    Q = rng.uniform(-2, 2, (ROWS + 1, 2)).astype(dtype)
    got = model.predict(to_device(Q))
    assert got.dtype == dtype and got.shape == (ROWS + 1, 2)
    want = cpu.predict(Q)
    np.testing.assert_allclose(to_host(got), want, rtol=rtol, atol=rtol * np.abs(want).max())
    np.testing.assert_allclose(model.predict(Q), want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_kernel_ridge_on_the_device_refuses_what_it_does_not_do(rng):
    X = to_device(rng.standard_normal((20, 2)))
    y = to_device(rng.standard_normal(20))
    with pytest.raises(ValueError, match=r'fitted by solver="nystrom-pcg" \(or "auto"\); got \'cholesky\''):
        fastrbf.kernel_ridge(X, y, gamma=1.0, alpha=1e-3, solver="cholesky")
    with pytest.raises(TypeError, match=r"`Y` is on the host"):
        fastrbf.kernel_ridge(X, np.ones(20), gamma=1.0, alpha=1e-3)
    fit = fastrbf.interpolate(rng.standard_normal((10, 2)), rng.standard_normal(10))
    with pytest.raises(ValueError, match=r"predict on a CUDA device gives values of models without a polynomial tail"):
        fit.predict(to_device(np.zeros((2, 2))))


def test_rbf_network_scores_on_the_device(rng):
    X = rng.uniform(-2, 2, (40, 2))
    net = fastrbf.rbf_network(X, np.sin(X[:, 0]), gamma=1.0, n_centers=6, per_center=True, learn_gamma=True, seed=0)
    Q = rng.uniform(-2, 2, (ROWS + 1, 2))
    got = net.predict(to_device(Q))
    _close(to_host(got), net.predict(Q), np.float64)


@pytest.mark.parametrize("kind", KINDS)
def test_results_are_of_the_callers_kind(rng, kind):
    X = rng.standard_normal((ROWS + 5, 3)).astype(np.float32)
    Xd = to_device(X, kind)
    same = type(Xd)
    D = fastrbf.sqdist(Xd)
    KV = fastrbf.gram_matvec(Xd, Xd, to_device(X[:, 0].copy(), kind))
    idx, d2 = fastrbf.knn(Xd, Xd, 2)
    km = fastrbf.kmeans(Xd, 3, seed=0)
    model = fastrbf.kernel_ridge(Xd, to_device(X[:, 0].copy(), kind), gamma=0.5, alpha=1e-2, solver="nystrom-pcg",
                                 n_landmarks=6, seed=0)
    pred = model.predict(Xd)
    for got in (D, KV, idx, d2, km.centers, km.labels, pred):
        assert type(got) is same
    _close(to_host(D), fastrbf.sqdist(X), np.float32)
    _close(to_host(KV), fastrbf.gram_matvec(X, X, X[:, 0]), np.float32)
    np.testing.assert_array_equal(to_host(idx)[:, 0], np.arange(ROWS + 5))  # each point its own nearest
    assert str(pred.dtype).endswith("float32") and str(idx.dtype).endswith("int64")


def test_kmeans_reports_progress_as_on_the_cpu(rng):
    X = _blobs(rng, 3 * ROWS, 3)
    reports, cpu = [], []
    r = fastrbf.kmeans(to_device(X), 3, init=to_device(X[:3].copy()), progress=reports.append)
    fastrbf.kmeans(X, 3, init=X[:3].copy(), progress=cpu.append)
    # each iteration reported, the last as done (the CPU's small compiled loop reports only that)
    assert [x["iter"] for x in reports if "iter" in x] == list(range(1, r.n_iter + 1))
    assert reports[-1]["message"].startswith(f"kmeans init 1/1: iter {r.n_iter}/300 done")
    assert cpu[-1]["iter"] == r.n_iter
