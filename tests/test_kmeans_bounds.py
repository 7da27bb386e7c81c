"""kmeans with Hamerly's bounds (algorithm="bounded") gives exactly the brute-force
result; the public kmeans_plusplus picks the centres kmeans starts from."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import fastrbf
from fastrbf import reference
from fastrbf._jit.cluster import certify as jc
from fastrbf._jit.cluster import lloyd as jl
from fastrbf.cluster import _assign
from fastrbf.cluster import _bounded as _bounded_lloyd
from fastrbf.cluster import _kmeans as cluster
from fastrbf.cluster._seeding import greedy_kmeans_plusplus

DTYPES = [np.float64, np.float32]


@pytest.fixture(params=["direct", "ranked", "gemm"])
def path(request, monkeypatch):
    """The assignment path of the brute-force passes and of the rows the bounds do not
    settle: direct differences, the float32 ranking of the micro-kernel (direct32 /
    centred32), the certified float32 GEMM."""
    kd = 10**9 if request.param == "direct" else 0
    monkeypatch.setattr(_assign, "DIRECT_MAX_KD", {np.dtype(np.float64): kd, np.dtype(np.float32): kd})
    if request.param == "gemm":
        monkeypatch.setattr(_assign, "F32_DIRECT_MAX_D", 0)
    monkeypatch.setattr(_assign, "GEMM_CHUNK_ROWS", 100)
    monkeypatch.setattr(jl, "UPDATE_CHUNK", 64)  # several update chunks
    return request.param


def _tied_data(rng, n, d, K, dtype):
    """Integer data (exact ties, duplicate points) and initial centres with a duplicate
    centre (a cluster that empties and is relocated)."""
    X = rng.integers(0, 200 if d == 1 else 6, (n, d)).astype(dtype)
    uniq = np.unique(X, axis=0)
    C = uniq[rng.choice(uniq.shape[0], K, replace=False)]
    if K > 2:
        C[K - 1] = C[0]
    return X, C


def _blob_data(rng, n, d, K, dtype):
    centres = rng.uniform(-10, 10, (K, d))
    X = (centres[rng.integers(0, K, n)] + rng.standard_normal((n, d))).astype(dtype)
    C = X[rng.choice(n, K, replace=False)] + np.asarray(0.01, dtype=dtype)
    return X, C.astype(dtype)


def _same(a, b):
    assert_array_equal(a.labels, b.labels)
    assert_array_equal(a.centers, b.centers)
    assert a.centers.dtype == b.centers.dtype
    assert a.n_iter == b.n_iter and a.converged == b.converged
    assert a.inertia == b.inertia


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K", [1, 2, 7, 64])
@pytest.mark.parametrize("d", [1, 3, 17])
@pytest.mark.parametrize("data", [_tied_data, _blob_data])
def test_bounded_equals_brute_force(rng, path, dtype, K, d, data):
    n = 700
    X, C = data(rng, n, d, K, dtype)
    w = rng.uniform(0.5, 2.0, n)
    w[::7] = 0.0
    for sample_weight in (None, w):
        kw = dict(init=C, max_iter=40, tol=0, sample_weight=sample_weight)
        ref = fastrbf.kmeans(X, K, algorithm="lloyd", n_threads=1, **kw)
        for nt in (1, 2):
            _same(fastrbf.kmeans(X, K, algorithm="bounded", n_threads=nt, **kw), ref)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bounded_equals_brute_force_with_tol_and_unpacked_certification(rng, monkeypatch, path, dtype):
    X, C = _blob_data(rng, 900, 9, 70, dtype)
    ref = fastrbf.kmeans(X, 70, init=C, algorithm="lloyd")
    monkeypatch.setattr(jc, "PACKED_MAX_K", 0)  # the row-wise certification of the recomputed rows
    _same(fastrbf.kmeans(X, 70, init=C, algorithm="bounded", n_threads=2), ref)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bounded_equals_brute_force_at_the_default_chunks(rng, dtype):
    """The ranked path (the rows the bounds leave ranked by the micro-kernel, full passes
    included) with chunks of the default size: the bits of the brute-force loop."""
    assert _assign.Assigner(np.zeros((10, 16), dtype=dtype), 1).path(64, np.dtype(dtype)) in ("direct32", "centred32")
    X, C = _blob_data(rng, 3 * jl.UPDATE_CHUNK // 2, 16, 64, dtype)
    X[::7] = X[1::7][: X[::7].shape[0]]  # duplicate rows: exact ties between points
    brute = fastrbf.kmeans(X, 64, init=C, algorithm="lloyd", max_iter=40, tol=0)
    bounded = fastrbf.kmeans(X, 64, init=C, algorithm="bounded", max_iter=40, tol=0)
    _same(bounded, brute)


def test_bounded_relocates_empty_clusters_as_brute_force(rng, path):
    X = rng.standard_normal((1500, 5))
    C = X[:40].copy()
    C[7] = 1e3  # empty at the first iteration
    C[9] = C[3]  # a duplicate: empty at the first iteration too
    a = fastrbf.kmeans(X, 40, init=C, algorithm="lloyd", max_iter=60, tol=0)
    b = fastrbf.kmeans(X, 40, init=C, algorithm="bounded", max_iter=60, tol=0, n_threads=2)
    _same(a, b)
    with pytest.raises(cluster.EmptyClusterError, match=r"cluster\(s\) \[7, 9\] became empty at iteration 1"):
        fastrbf.kmeans(X, 40, init=C, algorithm="bounded", empty="raise")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("data", [_tied_data, _blob_data, "normal", "offset"])
def test_compiled_loop_bounds_hold_after_every_iteration(rng, monkeypatch, dtype, data):
    """After each iteration of the ranked path's compiled loop, the upper bound of every
    row is at least its true distance to the centre it was assigned to, and the lower
    bound at most its true distance to every other centre (80-bit sums of exact
    squares): full passes, bounded ones, ties, relocated clusters, and data far from
    the origin."""
    monkeypatch.setattr(_assign, "DIRECT_MAX_KD", {np.dtype(np.float64): 0, np.dtype(np.float32): 0})
    monkeypatch.setattr(jl, "UPDATE_CHUNK", 96)
    K, d = 24, 6
    if callable(data):
        X, C = data(rng, 1500, d, K, dtype)
    else:
        X = (rng.standard_normal((1500, d)) + (1e4 if data == "offset" else 0.0)).astype(dtype)
        C = X[rng.choice(X.shape[0], K, replace=False)].copy()
    assert _assign.Assigner(X, 1).path(K, np.dtype(dtype)) in ("direct32", "centred32")
    n = X.shape[0]
    Xl = X.astype(np.longdouble)
    run = _bounded_lloyd.FitLoop.run
    seen = []

    def checked_run(self, budget):
        status = run(self, budget)
        C_prev, labels = self.args[5], self.args[10]  # the centres of the last assignment, its labels
        D = np.sqrt(((Xl[:, None, :] - C_prev.astype(np.longdouble)[None]) ** 2).sum(-1))
        own = D[np.arange(n), labels]
        D[np.arange(n), labels] = np.inf
        assert np.all(self.a.U >= own)
        assert np.all(self.a.L <= D.min(1))
        seen.append(self.n_full)
        return status

    monkeypatch.setattr(_bounded_lloyd.FitLoop, "run", checked_run)
    res = fastrbf.kmeans(X, K, init=C, algorithm="bounded", max_iter=60, tol=0, progress=lambda info: None)
    assert len(seen) == res.n_iter >= 5
    assert min(seen) < n  # bounded iterations were checked, not only full passes


def test_bounds_skip_rows_once_centres_settle(rng, monkeypatch, path):
    """On separated clusters the bounds settle most rows after a few iterations (else
    the bounded loop would only be a slower brute force)."""
    seen = []
    call = _bounded_lloyd.BoundedAssigner.__call__
    run = _bounded_lloyd.FitLoop.run

    def spy(self, C, labels, mind, want_dist=True, update=None):
        out = call(self, C, labels, mind, want_dist, update)
        if update is not None:
            seen.append(self.n_full)
        return out

    def spy_run(self, budget):
        out = run(self, budget)
        seen.append(self.n_full)
        return out

    monkeypatch.setattr(_bounded_lloyd.BoundedAssigner, "__call__", spy)
    monkeypatch.setattr(_bounded_lloyd.FitLoop, "run", spy_run)
    X, C = _blob_data(rng, 4000, 4, 20, np.float64)
    # with a report per iteration, the compiled loop of the ranked path runs one at a time
    fastrbf.kmeans(X, 20, init=C, algorithm="bounded", max_iter=30, tol=0, progress=lambda info: None)
    assert len(seen) >= 4
    assert min(seen[2:]) < X.shape[0] // 4


@pytest.mark.parametrize("dtype", DTYPES)
def test_compiled_loop_bits_for_any_threads_blocks_and_budget(rng, monkeypatch, dtype):
    """The ranked path's compiled loop, bounded and brute force: the same labels,
    centres, iterations and inertia for every thread count, whether the rows go by
    several blocks per update chunk or one, and whether it runs all iterations in one
    call or one per call (a report per iteration); and those of the brute-force Python
    loop of the GEMM path."""
    monkeypatch.setattr(_assign, "DIRECT_MAX_KD", {np.dtype(np.float64): 0, np.dtype(np.float32): 0})
    monkeypatch.setattr(jl, "UPDATE_CHUNK", 96)
    X, C = _blob_data(rng, 2000, 6, 24, dtype)
    X[::5] = X[1::5][: X[::5].shape[0]]  # duplicate rows: exact ties between points
    with monkeypatch.context() as m:
        m.setattr(_assign, "F32_DIRECT_MAX_D", 0)
        brute = fastrbf.kmeans(X, 24, init=C, algorithm="lloyd", max_iter=80, tol=0)
    runs = []
    for block in (1024, 20):  # one block per chunk; 5 blocks (20, 20, 20, 20, 16 rows)
        monkeypatch.setattr(_bounded_lloyd, "FIT_BLOCK", block)
        for nt in (1, 2, 3):
            for progress in (False, lambda info: None):
                for algorithm in ("bounded", "lloyd"):
                    runs.append(fastrbf.kmeans(X, 24, init=C, algorithm=algorithm, max_iter=80, tol=0, n_threads=nt,
                                               progress=progress))
    for r in runs:
        _same(r, brute)


class _NeverStarts:
    """An executor whose tasks never start (every worker busy elsewhere)."""

    def submit(self, fn, *args):
        from concurrent.futures import Future

        return Future()


def test_compiled_loop_finishes_when_no_worker_starts(rng, monkeypatch):
    """The leading thread never waits for a thread to arrive: with every worker busy it
    runs all the blocks itself, with the same result."""
    from fastrbf import _threads

    X, C = _blob_data(rng, 3 * jl.UPDATE_CHUNK // 2, 16, 64, np.float64)
    a = fastrbf.kmeans(X, 64, init=C, algorithm="bounded", max_iter=30, tol=0, n_threads=2)
    monkeypatch.setattr(_threads, "_pool", lambda: _NeverStarts())
    b = fastrbf.kmeans(X, 64, init=C, algorithm="bounded", max_iter=30, tol=0, n_threads=2)
    _same(a, b)


def test_team_tells_the_others_to_leave_and_raises_their_errors():
    import threading

    from fastrbf import _threads

    left = []
    started = threading.Event()

    def member(tid):
        if tid == 1:
            started.set()
            raise RuntimeError("worker failed")
        assert started.wait(60)  # a worker that has not started by the end is cancelled

    with pytest.raises(RuntimeError, match="worker failed"):
        _threads.team(member, 2, lambda: left.append(True))
    assert left == [True]
    with pytest.raises(ZeroDivisionError):
        _threads.team(lambda tid: 1 / 0 if tid == 0 else None, 2, lambda: left.append(True))
    assert left == [True, True]


@pytest.mark.parametrize("name", ["blobs", "gauss-many-centres"])
def test_bounded_matches_sklearn_elkan(rng, name):
    from sklearn.cluster import KMeans

    if name == "blobs":
        X, K = np.concatenate([rng.normal(c, 0.5, (300, 3)) for c in (0, 3, 6, 9)]), 4
    else:
        X, K = rng.standard_normal((3000, 8)), 120
    C0 = X[rng.choice(X.shape[0], K, replace=False)] + rng.uniform(-0.01, 0.01, (K, X.shape[1]))
    res = fastrbf.kmeans(X, K, init=C0, tol=0, max_iter=300, algorithm="bounded")
    sk = KMeans(K, init=C0, n_init=1, algorithm="elkan", tol=0, max_iter=300).fit(X)
    assert_array_equal(res.labels, sk.labels_)
    np.testing.assert_allclose(res.centers, sk.cluster_centers_, rtol=1e-12, atol=1e-12 * np.abs(X).max())
    np.testing.assert_allclose(res.inertia, sk.inertia_, rtol=1e-10)


def test_bounded_matches_the_reference_loop(rng):
    X = np.concatenate([rng.normal(c, 1.0, (250, 3)) for c in (0, 4, 8)])
    C0 = X[rng.choice(X.shape[0], 6, replace=False)] + 0.01
    ref_centers, ref_labels, ref_inertia = reference.kmeans(X, C0)
    res = fastrbf.kmeans(X, 6, init=C0, tol=0, algorithm="bounded")
    assert_array_equal(res.labels, ref_labels)
    np.testing.assert_allclose(res.centers, ref_centers, rtol=1e-12)
    assert res.inertia == pytest.approx(ref_inertia, rel=1e-12)


def test_auto_picks_by_size():
    assert _bounded_lloyd.bounds_pay(False, 50000, 64, 300)
    assert not _bounded_lloyd.bounds_pay(True, 50000, 64, 300)  # the direct path
    assert not _bounded_lloyd.bounds_pay(False, 50000, 8, 300)
    assert not _bounded_lloyd.bounds_pay(False, 1000, 64, 300)
    assert not _bounded_lloyd.bounds_pay(False, 50000, 64, 10)


def test_algorithm_is_checked():
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match=r"`algorithm` must be 'auto', 'lloyd' or 'bounded'; got 'elkan'\."):
        fastrbf.kmeans(X, 2, algorithm="elkan")


# ------------------------------------------------------------------ kmeans_plusplus
@pytest.mark.parametrize("dtype", DTYPES)
def test_kmeans_plusplus_is_the_seeding_of_kmeans(rng, dtype):
    X = rng.standard_normal((2000, 5)).astype(dtype)
    w = rng.uniform(0.0, 2.0, 2000)
    for sample_weight in (None, w):
        centers, indices = fastrbf.kmeans_plusplus(X, 9, seed=3, sample_weight=sample_weight)
        assert centers.dtype == dtype and centers.shape == (9, 5)
        assert indices.dtype == np.int64 and len(set(indices.tolist())) == 9
        assert_array_equal(centers, X[indices])
        ww = np.ones(2000) if sample_weight is None else w
        private, private_idx = greedy_kmeans_plusplus(X, 9, ww, np.random.default_rng(3), None)
        assert_array_equal(centers, private)
        assert_array_equal(indices, private_idx)
        a = fastrbf.kmeans(X, 9, seed=3, sample_weight=sample_weight, max_iter=5)
        b = fastrbf.kmeans(X, 9, init=centers, sample_weight=sample_weight, max_iter=5)
        _same(a, b)
    if w is not None:
        assert np.all(w[fastrbf.kmeans_plusplus(X, 9, seed=3, sample_weight=w)[1]] > 0)


def test_kmeans_plusplus_options(rng):
    X = rng.standard_normal((500, 3))
    c1, i1 = fastrbf.kmeans_plusplus(X, 6, seed=np.random.default_rng(5), n_local_trials=1, n_threads=1)
    c2, i2 = fastrbf.kmeans_plusplus(X, 6, seed=5, n_local_trials=1, n_threads=2)
    assert_array_equal(i1, i2)
    assert_array_equal(c1, c2)
    _, i3 = greedy_kmeans_plusplus(X, 6, np.ones(500), np.random.default_rng(5), 1, n_trials=1)
    assert_array_equal(i1, i3)
    # scaled data: the same rows (the power-of-two scaling is exact)
    assert_array_equal(fastrbf.kmeans_plusplus(X * 2.0**600, 6, seed=5)[1], fastrbf.kmeans_plusplus(X, 6, seed=5)[1])


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(n_clusters=0), ValueError, r"`n_clusters` must be in \[1, n_samples\] = \[1, 4\]; got 0\."),
    (dict(n_clusters=5), ValueError, r"`n_clusters` must be in \[1, n_samples\] = \[1, 4\]; got 5\."),
    (dict(n_clusters=2.0), TypeError, r"`n_clusters` must be an int; got 2\.0\."),
    (dict(n_clusters=2, n_local_trials=0), ValueError, r"`n_local_trials` must be an int >= 1; got 0\."),
    (dict(n_clusters=2, sample_weight=[1.0, -1.0, 1.0, 1.0]), ValueError, r"`sample_weight` must be >= 0; got -1\.0\."),
    (dict(n_clusters=2, sample_weight=[0.0, 0.0, 0.0, 0.0]), ValueError, r"at least one value > 0; got all zeros\."),
    (dict(n_clusters=2, sample_weight=[1.0, 0.0, 0.0, 0.0]), ValueError,
     r"`n_clusters` \(2\) must not exceed the number of points with weight > 0 \(1\)\."),
    (dict(n_clusters=2, n_threads=0), ValueError, r"`n_threads` must be a positive int"),
])
def test_kmeans_plusplus_checks_its_arguments(kwargs, exc, match):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(exc, match=match):
        fastrbf.kmeans_plusplus(X, **kwargs)


def test_kmeans_plusplus_too_few_distinct_points():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 2.0], [2.0, 2.0]])
    with pytest.raises(ValueError, match=r"fewer distinct points \(with weight > 0\) than `n_clusters` \(3\)"):
        fastrbf.kmeans_plusplus(X, 3, seed=0)
    X0 = X.copy()
    fastrbf.kmeans_plusplus(X, 2, seed=0)
    assert_array_equal(X, X0)  # input not modified


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("offset,scale", [(1e4, 1.0), (0.0, 1e-30), (0.0, 1e30), (3.0, None)])
def test_bounded_equals_brute_force_far_from_unit_scale(rng, path, dtype, offset, scale):
    """Data far from the origin (cancellation in the ranking), a few hundred units in the
    last place wide (rounding and ties everywhere), or rescaled by a power of two: the
    rounding margins of the bounds keep the labels exact."""
    if scale is None:
        scale = 2.0**-40 if dtype == np.float64 else 2.0**-16
    X, C = _blob_data(rng, 600, 6, 24, np.float64)
    X = (offset + scale * X).astype(dtype)
    C = (offset + scale * C).astype(dtype)
    a = fastrbf.kmeans(X, 24, init=C, algorithm="lloyd", max_iter=30, tol=0)
    b = fastrbf.kmeans(X, 24, init=C, algorithm="bounded", max_iter=30, tol=0, n_threads=2)
    _same(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bounded_with_seeding_and_restarts(rng, dtype):
    X, _ = _blob_data(rng, 3000, 5, 12, dtype)
    a = fastrbf.kmeans(X, 12, seed=4, n_init=3, algorithm="lloyd")
    b = fastrbf.kmeans(X, 12, seed=4, n_init=3, algorithm="bounded")
    _same(a, b)
    assert a.converged


@pytest.mark.parametrize("K,d", [(1, 3), (2, 5), (64, 16), (33, 7)])
def test_centre_bounds_hold_and_are_tight(rng, K, d):
    """The centres' shifts are upper bounds of the true moves, and the half gaps lower
    bounds of half the true distance to the nearest other centre (a duplicate centre:
    0), each within a few roundings of the true value (80-bit sums of exact squares)."""
    from fastrbf._jit.cluster import bounds as jb
    from fastrbf.cluster._bounded import sq_errors

    C = rng.standard_normal((K, d)) * 3.0
    C_old = C + 1e-3 * rng.standard_normal((K, d))
    if K > 2:
        C[K // 2] = C[0]  # a duplicate centre
    shift, half_gap = np.empty(K), np.empty(K)
    gam, eta = sq_errors(np.float64, d)
    jb.centre_bounds(C_old, C, gam, eta, shift, half_gap)
    L = np.longdouble
    true_shift = np.sqrt(((C.astype(L) - C_old.astype(L)) ** 2).sum(1))
    assert np.all(shift >= true_shift) and np.all(shift <= true_shift * (1 + 1e-13))
    if K == 1:
        assert half_gap[0] == np.inf
        return
    D = np.sqrt(((C.astype(L)[:, None] - C.astype(L)[None]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    true_half = D.min(1) / 2
    assert np.all(half_gap <= true_half) and np.all(half_gap >= true_half * (1 - 1e-13))
