"""knn(method="tree") and radius_neighbors against the brute force (indices and squared
distances bit for bit), SciPy's cKDTree and scikit-learn's KDTree; the build's
determinism."""

import numpy as np
import pytest
from scipy.spatial import cKDTree
from sklearn.neighbors import KDTree

from fastrbf import knn, radius_neighbors
from fastrbf._jit.neighbors import kdgroups, kdtree
from fastrbf.neighbors import _kdtree


def _data(rng, kind, n, m, d, dtype):
    if kind == "random":
        X, Q = rng.standard_normal((n, d)), rng.standard_normal((m, d))
    elif kind == "clustered":  # tight clusters far apart, queries between and inside them
        C = rng.standard_normal((5, d)) * 100
        X = C[rng.integers(0, 5, n)] + rng.standard_normal((n, d)) * 1e-3
        Q = np.concatenate([C[rng.integers(0, 5, m // 2)], rng.standard_normal((m - m // 2, d)) * 100])
    elif kind == "duplicated":  # every point several times: many exact ties
        X = np.repeat(rng.standard_normal((n // 6 + 1, d)), 6, axis=0)[:n]
        rng.shuffle(X)
        Q = np.concatenate([X[: m // 2], rng.standard_normal((m - m // 2, d))])
    elif kind == "grid":  # integer coordinates, queries on and between them: ties and bounds hit exactly
        X = rng.integers(0, 4, size=(n, d)).astype(np.float64)
        Q = rng.integers(0, 8, size=(m, d)) / 2.0
    else:  # "equal": all points the same
        X = np.ones((n, d))
        Q = np.concatenate([np.ones((1, d)), rng.standard_normal((m - 1, d))])
    return X.astype(dtype), Q.astype(dtype)


def _same(a, b):
    assert a[0].dtype == b[0].dtype == np.int64 and a[1].dtype == b[1].dtype
    assert np.array_equal(a[0], b[0])
    assert np.array_equal(a[1].view(np.uint8), b[1].view(np.uint8))  # bit for bit


@pytest.fixture(params=[32, 3], ids=["leaves32", "leaves3"])
def leaf_size(request, monkeypatch):
    # small leaves make deep trees from small data: both build phases, many prunings
    monkeypatch.setattr(_kdtree, "LEAF_SIZE", request.param)
    monkeypatch.setattr(_kdtree, "TOP_LEVELS", 2)
    return request.param


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["random", "clustered", "duplicated", "grid", "equal"])
@pytest.mark.parametrize("d", [1, 2, 3, 5, 16])
def test_tree_equals_brute_force(rng, leaf_size, dtype, kind, d):
    n, m = 700, 61
    X, Q = _data(rng, kind, n, m, d, dtype)
    for k in (1, 7, n):
        for nt in (1, 2):
            _same(knn(X, Q, k, method="tree", n_threads=nt), knn(X, Q, k, method="brute", n_threads=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 2, 3, 33, 64, 65])
def test_tree_small_sizes(rng, leaf_size, dtype, n):
    X = rng.standard_normal((n, 2)).astype(dtype)
    Q = rng.standard_normal((5, 2)).astype(dtype)
    for k in sorted({1, (n + 1) // 2, n}):
        _same(knn(X, Q, k, method="tree"), knn(X, Q, k, method="brute"))


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_tree_matches_scipy_and_sklearn(rng, d):
    X = rng.standard_normal((5000, d))
    Q = rng.standard_normal((300, d))
    idx, d2 = knn(X, Q, 9, method="tree")
    for dist, ind in (cKDTree(X).query(Q, 9), KDTree(X).query(Q, 9)):
        assert np.array_equal(idx, ind)
        assert np.allclose(np.sqrt(d2), dist, rtol=1e-12, atol=0)


def test_build_is_deterministic(rng, monkeypatch):
    monkeypatch.setattr(_kdtree, "LEAF_SIZE", 4)
    X = np.round(rng.standard_normal((3001, 3)), 1)  # ties in the coordinates being split
    trees = [_kdtree.build(X, nt) for nt in (1, 2, 2, 4)]
    for t in trees[1:]:
        assert t.leaf_level == trees[0].leaf_level == 10
        for a, b in zip(t[:-1], trees[0][:-1], strict=True):
            assert np.array_equal(a, b)
    t = trees[0]
    assert np.array_equal(np.sort(t.perm), np.arange(3001))
    assert np.array_equal(t.Xt, X[t.perm].T)  # the points, permuted
    assert np.array_equal(t.box_lo[0], X.min(axis=0)) and np.array_equal(t.box_hi[0], X.max(axis=0))
    assert t.min_id[0] == 0


def test_tree_threads_and_inputs_unchanged(rng):
    for d in (1, 3):
        X = rng.standard_normal((4000, d))  # d = 1: X.T is contiguous, the build must copy it
        Q = rng.standard_normal((500, d))
        X0, Q0 = X.copy(), Q.copy()
        a = knn(X, Q, 5, method="tree", n_threads=1)
        b = knn(X, Q, 5, method="tree", n_threads=2)
        _same(a, b)
        assert np.array_equal(X, X0) and np.array_equal(Q, Q0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("frac", [-0.95, -0.6, 0.6, 0.95])
def test_tree_scaled_data(rng, dtype, frac):
    # coordinates near the ends of the range: squared distances that would overflow or
    # underflow, handled by the power-of-two scaling (on both methods)
    e = int(frac * np.finfo(dtype).maxexp)
    X = np.ldexp(rng.standard_normal((3000, 2)), e).astype(dtype)
    Q = np.ldexp(rng.standard_normal((40, 2)), e).astype(dtype)
    _same(knn(X, Q, 6, method="tree"), knn(X, Q, 6, method="brute"))


def test_tree_length_scale(rng):
    X = rng.standard_normal((3000, 3))
    Q = rng.standard_normal((50, 3))
    L = np.array([0.5, 2.0, 30.0])
    _same(knn(X, Q, 4, method="tree", length_scale=L), knn(X, Q, 4, method="brute", length_scale=L))
    _same(knn(X, Q, 4, method="tree", length_scale=L), knn(X / L, Q / L, 4, method="tree"))


def test_auto_picks_the_tree_at_low_dimension(rng):
    assert _kdtree.use_tree(1_000_000, 100_000, 3, 8)
    assert not _kdtree.use_tree(1_000_000, 100_000, 16, 8)
    assert not _kdtree.use_tree(500, 100, 3, 8)  # small: the brute force
    assert not _kdtree.use_tree(100_000, 10, 3, 8)  # few queries: the build would dominate
    assert not _kdtree.use_tree(100_000, 100_000, 3, 50_000)  # k a large part of n
    X = rng.standard_normal((3000, 2))
    Q = rng.standard_normal((100, 2))
    _same(knn(X, Q, 3), knn(X, Q, 3, method="brute"))


@pytest.mark.parametrize("bad", ["kd_tree", None, 1, ["tree"]])
def test_method_errors(bad):
    with pytest.raises(ValueError, match=r'`method` must be "auto", "tree" or "brute"; got '):
        knn([[0.0]], [[0.0]], 1, method=bad)


def _radius_brute(X, Q, radius, **kw):
    """radius_neighbors from the brute force's complete sorted lists."""
    idx, d2 = knn(X, Q, X.shape[0], method="brute", **kw)
    keep = d2.astype(np.float64) <= radius**2
    indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))])
    return indptr, idx[keep], d2[keep]


def _same_radius(a, b):
    assert a[0].dtype == a[1].dtype == np.int64 and a[2].dtype == b[2].dtype
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert np.array_equal(a[2].view(np.uint8), b[2].view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["random", "clustered", "duplicated", "grid", "equal"])
@pytest.mark.parametrize("d", [1, 3, 16])
def test_radius_equals_brute_force(rng, leaf_size, dtype, kind, d):
    X, Q = _data(rng, kind, 500, 41, d, dtype)
    d2 = knn(X, Q, 10, method="brute")[1].astype(np.float64)
    for radius in (0.0, float(np.sqrt(np.median(d2[:, 4]))), float(np.sqrt(d2[:, -1].max())) * 4):
        for nt in (1, 2):
            _same_radius(radius_neighbors(X, Q, radius, n_threads=nt), _radius_brute(X, Q, radius))


def test_radius_on_the_boundary(rng):
    # integer points at exactly the radius from the queries are neighbours
    X = rng.integers(0, 5, size=(2000, 2)).astype(np.float32)
    Q = rng.integers(0, 5, size=(30, 2)).astype(np.float32)
    got = radius_neighbors(X, Q, 2.0)
    _same_radius(got, _radius_brute(X, Q, 2.0))
    assert (got[2] == 4.0).sum() > 0


def test_radius_matches_scipy(rng):
    X = rng.standard_normal((5000, 3))
    Q = rng.standard_normal((200, 3))
    indptr, idx, d2 = radius_neighbors(X, Q, 0.3)
    for i, ref in enumerate(cKDTree(X).query_ball_point(Q, 0.3)):
        assert np.array_equal(np.sort(idx[indptr[i]:indptr[i + 1]]), np.sort(ref))
    for i in range(len(Q)):
        assert np.all(np.diff(d2[indptr[i]:indptr[i + 1]]) >= 0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_radius_scaled_data_and_length_scale(rng, dtype):
    e = int(0.9 * np.finfo(dtype).maxexp)
    X = np.ldexp(rng.standard_normal((3000, 2)), e).astype(dtype)
    Q = np.ldexp(rng.standard_normal((40, 2)), e).astype(dtype)
    got = radius_neighbors(X, Q, float(np.ldexp(0.2, e)))  # radius**2 beyond float64
    ref = _radius_brute(np.ldexp(X, -e), np.ldexp(Q, -e), 0.2)  # the same problem, exactly scaled
    with np.errstate(over="ignore"):
        _same_radius(got, (ref[0], ref[1], np.ldexp(ref[2], 2 * e).astype(dtype)))
    assert np.isinf(got[2]).any()  # squared distances beyond the largest float
    X = rng.standard_normal((3000, 3)).astype(dtype)
    Q = rng.standard_normal((40, 3)).astype(dtype)
    L = np.array([0.5, 2.0, 30.0])
    _same_radius(radius_neighbors(X, Q, 0.2, length_scale=L), _radius_brute(X, Q, 0.2, length_scale=L))
    X0 = X.copy()
    radius_neighbors(X, Q, 0.2)
    assert np.array_equal(X, X0)


def test_radius_refuses_a_result_that_does_not_fit_before_scanning_the_pairs(rng, monkeypatch):
    import time

    from fastrbf import _validation

    # every one of the 9e10 pairs is within the radius: the count takes whole nodes, so
    # the memory check fires at once instead of after a scan of every pair
    X = rng.random((300_000, 1))
    radius_neighbors(X[:100], X[:10], 2.0)  # compiled
    monkeypatch.setattr(_validation, "available_memory", lambda: 2**34)
    t0 = time.perf_counter()
    with pytest.raises(MemoryError, match=r"radius_neighbors with 90000000000 neighbours in all needs 1341\.10 GiB.*"
                                          r"use a smaller `radius`"):
        radius_neighbors(X, X, 2.0)
    assert time.perf_counter() - t0 < 20.0
    # whole nodes counted at once give the count of the fill
    Xs, Q = X[:3000].reshape(-1, 2) * 4, rng.random((40, 2)) * 4
    for radius in (0.5, 2.0, 10.0):
        got = radius_neighbors(Xs, Q, radius)
        _same_radius(got, _radius_brute(Xs, Q, radius))


@pytest.mark.parametrize("bad", [-1.0, np.inf, np.nan])
def test_radius_errors(bad):
    with pytest.raises(ValueError, match=r"`radius` must be a finite"):
        radius_neighbors([[0.0]], [[0.0]], bad)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["random", "clustered", "duplicated", "grid"])
@pytest.mark.parametrize("d", [1, 3])
def test_tree_large_k_equals_brute_force(rng, leaf_size, dtype, kind, d):
    # k much larger than a leaf: the list grows from empty over many leaves
    X, Q = _data(rng, kind, 2000, 97, d, dtype)
    for k in (20, 50, 100, 333):
        ref = knn(X, Q, k, method="brute", n_threads=1)
        for nt in (1, 2):
            _same(knn(X, Q, k, method="tree", n_threads=nt), ref)


def test_tree_results_do_not_depend_on_the_query_order(rng):
    X = rng.standard_normal((5000, 3))
    Q = np.concatenate([rng.standard_normal((400, 3)), X[:100]])
    p = rng.permutation(len(Q))
    for k in (1, 8, 50):
        idx, d2 = knn(X, Q, k, method="tree")
        idx_p, d2_p = knn(X, Q[p], k, method="tree")
        _same((idx[p], d2[p]), (idx_p, d2_p))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_index_answers_as_knn(rng, dtype):
    X = rng.standard_normal((3000, 3)).astype(dtype)
    ix = _kdtree.index(X, 2)
    for scale in (0, np.finfo(dtype).maxexp // 2 + 8):  # the second rescales the points: a tree of their own
        Q = np.ldexp(rng.standard_normal((50, 3)), scale).astype(dtype)
        idx, d2 = _kdtree.knn_index(ix, Q, 40, 2)
        _same((idx, d2), knn(X, Q, 40, method="brute"))
    assert ix.t == 0 and ix.amax == float(np.abs(X).max())


def test_auto_takes_the_tree_at_large_k_and_low_dimension():
    assert _kdtree.use_tree(10_000, 10_000, 3, 50)  # 57 ms with the tree, 185 ms brute force
    assert _kdtree.use_tree(100_000, 100_000, 3, 100)
    assert not _kdtree.use_tree(10_000, 10_000, 8, 8)  # the tree prunes too little there
    assert not _kdtree.use_tree(100_000, 10_000, 16, 10)
    assert not _kdtree.use_tree(100_000, 100_000, 4096, 10)  # (no overflow of the model at many features)


def _count_runs(monkeypatch, kernel):
    """A list that gets one entry per run of ``kernel``."""
    calls = []
    run = kernel.run
    monkeypatch.setattr(kernel, "run", lambda *a: calls.append(1) or run(*a))
    return calls


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["random", "clustered", "duplicated", "grid", "equal"])
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_list_search_equals_brute_force(rng, monkeypatch, leaf_size, dtype, kind, d):
    # more queries than points: the queries of a leaf share a list of leaves
    monkeypatch.setattr(_kdtree, "LIST_MIN_M", 1)
    X, Q = _data(rng, kind, 500, 1500, d, dtype)
    calls = _count_runs(monkeypatch, kdgroups.knn_groups)
    for k in (8, 21, 50):
        ref = knn(X, Q, k, method="brute", n_threads=1)
        for nt in (1, 2):
            _same(knn(X, Q, k, method="tree", n_threads=nt), ref)
    assert len(calls) == 6


@pytest.mark.parametrize("guess, reach", [(1.3, 1.6), (0.5, 0.8), (1.0, 1.0), (3.0, 1.2), (1e6, 1e8)])
@pytest.mark.parametrize("kind", ["random", "duplicated", "grid"])
def test_list_search_any_bounds(rng, monkeypatch, guess, reach, kind):
    # bounds that find too few points (the search within R, then the tree search),
    # far too many (more candidates than the buffer, lists longer than MAX_LIST): the
    # result is exact whatever they are
    monkeypatch.setattr(_kdtree, "GUESS", guess)
    monkeypatch.setattr(_kdtree, "REACH", reach)
    monkeypatch.setattr(_kdtree, "LIST_MIN_K", 1)
    monkeypatch.setattr(_kdtree, "LIST_MIN_M", 1)
    X, Q = _data(rng, kind, 5000, 4000, 3, np.float64)
    for k in (1, 9, 64):
        _same(knn(X, Q, k, method="tree", n_threads=2), knn(X, Q, k, method="brute", n_threads=1))


def test_list_search_only_where_it_pays(rng, monkeypatch):
    X, Q = _data(rng, "random", 2000, _kdtree.LIST_MIN_M, 3, np.float64)
    groups = _count_runs(monkeypatch, kdgroups.knn_groups)
    tree = _count_runs(monkeypatch, kdtree.knn_tree)
    knn(X, Q, _kdtree.LIST_MIN_K - 1, method="tree")
    knn(X[:, :2], Q[:, :2], _kdtree.LIST_MIN_K, method="tree")
    knn(np.hstack([X, X]), np.hstack([Q, Q]), 50, method="tree")
    knn(X, Q[1:], 50, method="tree")
    assert (len(groups), len(tree)) == (1, 3)
