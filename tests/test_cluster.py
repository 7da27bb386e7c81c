"""lloyd_assign, lloyd_update and kmeans against the reference and scikit-learn."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

import fastrbf
from fastrbf import reference
from fastrbf.cluster import _assign
from fastrbf.cluster import _kmeans as cluster

DTYPES = [np.float64, np.float32]


@pytest.fixture(params=["direct", "gemm"])
def path(request, monkeypatch):
    kd = 10**9 if request.param == "direct" else 0
    monkeypatch.setattr(_assign, "DIRECT_MAX_KD", {np.dtype(np.float64): kd, np.dtype(np.float32): kd})
    monkeypatch.setattr(_assign, "GEMM_CHUNK_ROWS", 100)  # several chunks
    return request.param


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,d,K", [(1, 1, 1), (257, 3, 7), (500, 16, 70), (64, 2, 600)])
def test_assign_matches_reference_argmin(rng, path, dtype, n, d, K):
    X = rng.standard_normal((n, d)).astype(dtype)
    C = rng.standard_normal((K, d)).astype(dtype)
    labels, d2 = fastrbf.lloyd_assign(X, C)
    ref_labels, ref_d2 = reference.lloyd_assign(X.astype(np.float64), C.astype(np.float64))
    assert labels.dtype == np.int64 and d2.dtype == dtype
    assert_array_equal(labels, ref_labels)
    np.testing.assert_allclose(d2, ref_d2, rtol=1e-12 if dtype == np.float64 else 1e-6)


def test_assign_ties_go_to_lowest_index(path):
    X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]])
    C = np.array([[1.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [3.0, 0.0]])  # duplicate and equidistant centres
    labels, d2 = fastrbf.lloyd_assign(X, C)
    assert labels.tolist() == [0, 0, 0]
    assert d2.tolist() == [1.0, 1.0, 1.0]


def test_assign_exact_where_float32_gemm_cannot_decide(path):
    """Far from the origin and with centres closer than float32 can resolve: the
    certified path must still return the exact argmin."""
    rng = np.random.default_rng(1)
    base = 1e6 + rng.standard_normal((1, 20))
    C = base + 1e-7 * rng.standard_normal((50, 20))
    X = base + 1e-7 * rng.standard_normal((300, 20))
    labels, d2 = fastrbf.lloyd_assign(X, C)
    ref_labels, ref_d2 = reference.lloyd_assign(X, C)
    assert_array_equal(labels, ref_labels)
    np.testing.assert_allclose(d2, ref_d2, rtol=1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_update_matches_reference_and_is_thread_independent(rng, dtype):
    X = rng.standard_normal((5000, 5)).astype(dtype)
    labels = rng.integers(0, 9, 5000)
    w = rng.uniform(0, 2, 5000)
    C, counts = fastrbf.lloyd_update(X, labels, 10, sample_weight=w, n_threads=1)
    C2, counts2 = fastrbf.lloyd_update(X, labels, 10, sample_weight=w, n_threads=2)
    assert_array_equal(C, C2)
    assert_array_equal(counts, counts2)
    refC, refw = reference.lloyd_update(X.astype(np.float64), labels, 10, sample_weight=w)
    assert C.dtype == dtype
    np.testing.assert_allclose(C[:9], refC[:9], rtol=1e-6 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(counts, refw, rtol=1e-12)
    assert np.all(np.isnan(C[9])) and counts[9] == 0


def _digits():
    from sklearn.datasets import load_digits

    return load_digits().data


DATASETS = {
    "digits": lambda rng: (_digits(), 10),
    "blobs": lambda rng: (np.concatenate([rng.normal(c, 0.5, (300, 3)) for c in (0, 3, 6, 9)]), 4),
    "gauss-many-centres": lambda rng: (rng.standard_normal((3000, 8)), 120),
}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_kmeans_matches_sklearn_on_same_init(rng, name):
    from sklearn.cluster import KMeans

    X, K = DATASETS[name](rng)
    # Initial centres are data points moved by a little noise: with integer data such as
    # digits, data points as centres give exactly tied distances, which we resolve to the
    # lowest index (exact arithmetic) while scikit-learn's choice depends on the rounding
    # of its internal centring of X; away from exact ties the two must agree exactly.
    C0 = X[rng.choice(X.shape[0], K, replace=False)] + rng.uniform(-0.01, 0.01, (K, X.shape[1]))
    res = fastrbf.kmeans(X, K, init=C0, tol=0, max_iter=300)
    sk = KMeans(K, init=C0, n_init=1, algorithm="lloyd", tol=0, max_iter=300).fit(X)
    assert_array_equal(res.labels, sk.labels_)
    assert res.n_iter == sk.n_iter_
    np.testing.assert_allclose(res.centers, sk.cluster_centers_, rtol=0, atol=1e-10 * max(1.0, np.abs(X).max()))
    np.testing.assert_allclose(res.inertia, sk.inertia_, rtol=1e-10)
    assert res.converged


def test_kmeans_matches_the_lectures_loop(rng):
    """reference.kmeans is the textbook loop (assign, mean, until no label changes)."""
    X = np.concatenate([rng.normal(c, 1.0, (250, 3)) for c in (0, 4, 8)])
    C0 = X[rng.choice(X.shape[0], 6, replace=False)] + 0.01
    ref_centers, ref_labels, ref_inertia = reference.kmeans(X, C0)
    res = fastrbf.kmeans(X, 6, init=C0, tol=0)
    assert_array_equal(res.labels, ref_labels)
    np.testing.assert_allclose(res.centers, ref_centers, rtol=1e-12, atol=1e-12)
    assert res.inertia == pytest.approx(ref_inertia, rel=1e-12)


def test_inertia_never_increases(rng):
    X = rng.standard_normal((2000, 4))
    C = X[:30].copy()
    inertias = []
    for _ in range(15):
        labels, d2 = fastrbf.lloyd_assign(X, C)
        inertias.append(d2.sum())
        C_new, _ = fastrbf.lloyd_update(X, labels, 30)
        C = np.where(np.isnan(C_new), C, C_new)
    assert all(b <= a * (1 + 1e-12) for a, b in itertools.pairwise(inertias))


@pytest.mark.parametrize("dtype", DTYPES)
def test_kmeans_bitwise_reproducible_across_threads_and_runs(rng, dtype):
    X = rng.standard_normal((3000, 6)).astype(dtype)
    a = fastrbf.kmeans(X, 12, seed=7, n_init=2, n_threads=1)
    b = fastrbf.kmeans(X, 12, seed=7, n_init=2, n_threads=2)
    c = fastrbf.kmeans(X, 12, seed=np.random.default_rng(7), n_init=2)
    for r in (b, c):
        assert_array_equal(a.centers, r.centers)
        assert_array_equal(a.labels, r.labels)
        assert a.inertia == r.inertia
    assert a.centers.dtype == dtype


def test_labels_consistent_with_final_centres(rng):
    X = rng.standard_normal((1000, 3))
    res = fastrbf.kmeans(X, 8, seed=0, max_iter=2)
    labels, d2 = fastrbf.lloyd_assign(X, res.centers)
    assert_array_equal(res.labels, labels)
    assert res.inertia == pytest.approx(d2.sum(), rel=1e-12)


def test_random_init_and_kmeanspp_inertia_close_to_sklearn(rng):
    from sklearn.cluster import KMeans

    X = np.concatenate([rng.normal(c, 0.3, (200, 2)) for c in ((0, 0), (5, 0), (0, 5), (5, 5))])
    sk = KMeans(4, n_init=5, random_state=0).fit(X)
    for init in ("k-means++", "random"):
        res = fastrbf.kmeans(X, 4, init=init, n_init=5, seed=0)
        assert res.inertia <= sk.inertia_ * (1 + 1e-9)


def test_empty_cluster_relocated_and_raise():
    X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1]])
    C0 = np.array([[0.1], [10.05], [100.0]])  # the third centre attracts nothing
    res = fastrbf.kmeans(X, 3, init=C0)
    assert sorted(np.bincount(res.labels, minlength=3).tolist()) == [1, 2, 2]
    assert np.all(np.isfinite(res.centers))
    with pytest.raises(fastrbf.EmptyClusterError, match=r"cluster\(s\) \[2\] became empty at iteration 1"):
        fastrbf.kmeans(X, 3, init=C0, empty="raise")


def test_relocation_never_steals_a_singleton():
    # cluster 0 = a lone far point; cluster 1 holds the rest; cluster 2 starts empty
    X = np.array([[100.0], [0.0], [1.0], [2.0]])
    C0 = np.array([[100.0], [1.0], [-1000.0]])
    res = fastrbf.kmeans(X, 3, init=C0, max_iter=1)
    assert res.labels[0] == 0
    assert np.bincount(res.labels, minlength=3).tolist()[0] == 1


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 60),
    d=st.integers(1, 4),
    k_frac=st.floats(0.0, 1.0),
    dup=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_kmeans(n, d, k_frac, dup, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, (n, d)).astype(np.float64) if dup else rng.standard_normal((n, d))
    n_distinct = np.unique(X, axis=0).shape[0]
    K = max(1, round(k_frac * n_distinct))
    res = fastrbf.kmeans(X, K, seed=seed, max_iter=50)
    labels, d2 = reference.lloyd_assign(X, res.centers)
    assert_array_equal(res.labels, labels)
    assert res.inertia == pytest.approx(d2.sum(), rel=1e-9, abs=1e-12)
    if K == n_distinct:
        assert res.inertia == pytest.approx(0.0, abs=1e-20)
    assert np.bincount(res.labels, minlength=K).min() >= 1


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(n_clusters=0), ValueError, r"`n_clusters` must be in \[1, n_samples\] = \[1, 6\]; got 0"),
        (dict(n_clusters=7), ValueError, r"`n_clusters` must be in \[1, n_samples\] = \[1, 6\]; got 7"),
        (dict(n_clusters=2.0), TypeError, r"`n_clusters` must be an int; got 2.0"),
        (dict(n_clusters=2, init=np.zeros((3, 2))), ValueError, r"`init` must have shape \(2, 2\)"),
        (dict(n_clusters=2, init=np.zeros((2, 3))), ValueError,
         r"`init` must have the same number of features as `X` \(2\); got 3"),
        (dict(n_clusters=2, init="kmeans"), ValueError, r"`init` must be 'k-means\+\+', 'random' or an array"),
        (dict(n_clusters=2, sample_weight=-np.ones(6)), ValueError, r"`sample_weight` must be >= 0; got -1.0"),
        (dict(n_clusters=2, sample_weight=np.zeros(6)), ValueError, r"`sample_weight` must have at least one value > 0"),
        (dict(n_clusters=2, sample_weight=np.ones(5)), ValueError, r"`sample_weight` must have one value per row of `X` \(6\)"),
        (dict(n_clusters=2, max_iter=0), ValueError, r"`max_iter` must be an int >= 1; got 0"),
        (dict(n_clusters=2, n_init=0), ValueError, r"`n_init` must be an int >= 1; got 0"),
        (dict(n_clusters=2, tol=-1.0), ValueError, r"`tol` must be a finite number >= 0; got -1.0"),
        (dict(n_clusters=2, empty="drop"), ValueError, r"`empty` must be 'relocate' or 'raise'; got 'drop'"),
        (dict(n_clusters=2, init=np.zeros((2, 2)), n_init=3), ValueError, r"`n_init` must be 1 when `init` is an array"),
        (dict(n_clusters=4, init="random"), ValueError, r"fewer distinct points .* than `n_clusters`: 3 < 4"),
        (dict(n_clusters=4), ValueError, r"fewer distinct points .* than `n_clusters` \(4\)"),
    ],
)
def test_kmeans_bad_input(kwargs, exc, match):
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [2.0, 2.0], [2.0, 2.0]])
    with pytest.raises(exc, match=match):
        fastrbf.kmeans(X, **kwargs)


def test_kmeans_nan_and_no_modification():
    X = np.array([[0.0, np.nan], [1.0, 1.0]])
    with pytest.raises(ValueError, match=r"`X` must contain only finite values"):
        fastrbf.kmeans(X, 1)
    X = np.random.default_rng(0).standard_normal((50, 2))
    C0 = X[:3].copy()
    Xc, Cc = X.copy(), C0.copy()
    fastrbf.kmeans(X, 3, init=C0)
    assert_array_equal(X, Xc)
    assert_array_equal(C0, Cc)


@pytest.mark.parametrize(
    "args,match",
    [
        ((np.ones((3, 2)), [0, 1], 2), r"`labels` must have one value per row of `X` \(3\)"),
        ((np.ones((3, 2)), [0, 1, 2], 2), r"`labels` must be in \[0, n_clusters\) = \[0, 2\); got 2"),
        ((np.ones((3, 2)), [0, 1, 1], 0), r"`n_clusters` must be an int >= 1; got 0"),
    ],
)
def test_update_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        fastrbf.lloyd_update(*args)


def test_assign_bad_centers():
    with pytest.raises(ValueError, match=r"`centers` must have the same number of features as `X` \(2\); got 3"):
        fastrbf.lloyd_assign(np.ones((4, 2)), np.ones((2, 3)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("empty_start", [False, True])
def test_small_problem_path_is_bitwise_the_general_path(rng, monkeypatch, dtype, empty_start):
    """Problems small enough for the one-call serial loop give the same bits as the
    general (parallel, per-iteration) path, relocation included."""
    X = rng.standard_normal((3000, 3)).astype(dtype)
    C0 = X[:20].copy()
    if empty_start:
        C0[5] = 1e3  # attracts nothing: relocated at the first iteration
    a = fastrbf.kmeans(X, 20, init=C0, max_iter=40)
    from fastrbf._jit.cluster import lloyd as jl

    monkeypatch.setattr(jl, "UPDATE_CHUNK", 1)  # disables the small path (n > chunk)
    monkeypatch.setattr(cluster, "_jl", jl)
    b = fastrbf.kmeans(X, 20, init=C0, max_iter=40)
    assert_array_equal(a.centers, b.centers)
    assert_array_equal(a.labels, b.labels)
    assert a.n_iter == b.n_iter and a.inertia == b.inertia


def test_gemm_path_relocation_and_inertia_match_direct_path(rng, monkeypatch):
    """The certified path skips distances during iterations; a relocation (which needs
    them) and the final inertia must still match the direct path exactly (float64)."""
    X = rng.standard_normal((3000, 30))
    C0 = X[:20].copy()
    C0[7] = 1e3  # empty at the first iteration: relocated
    results = []
    for kd in (0, 10**9):
        monkeypatch.setattr(_assign, "DIRECT_MAX_KD", {np.dtype(np.float64): kd, np.dtype(np.float32): kd})
        monkeypatch.setattr(_assign, "GEMM_CHUNK_ROWS", 128)
        results.append(fastrbf.kmeans(X, 20, init=C0, max_iter=60, tol=0))
    a, b = results
    assert_array_equal(a.labels, b.labels)
    assert_array_equal(a.centers, b.centers)
    assert a.n_iter == b.n_iter and a.inertia == b.inertia
    labels, d2 = reference.lloyd_assign(X, a.centers)
    assert_array_equal(a.labels, labels)
    assert a.inertia == pytest.approx(d2.sum(), rel=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K", [1, 2, 3, 64, 257])
@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_packed_certification_matches_unpacked(rng, monkeypatch, dtype, K, offset):
    """The one-pass certification (centre index packed in the low bits of the order
    key) gives exactly the labels and distances of the two-pass one."""
    from fastrbf._jit.cluster import certify as jc

    X = (offset + rng.standard_normal((700, 9))).astype(dtype)
    C = X[rng.choice(700, K, replace=False)].copy()
    C[K // 2] = C[0]  # duplicate centre: ties go to the lowest index
    monkeypatch.setattr(_assign, "DIRECT_MAX_KD", {np.dtype(np.float64): 0, np.dtype(np.float32): 0})
    monkeypatch.setattr(_assign, "GEMM_CHUNK_ROWS", 128)
    results = []
    for max_k in (0, 10**9):
        monkeypatch.setattr(jc, "PACKED_MAX_K", max_k)
        results.append(fastrbf.lloyd_assign(X, C))
    assert_array_equal(results[0][0], results[1][0])
    assert_array_equal(results[0][1], results[1][1])
    ref_labels, _ = reference.lloyd_assign(X.astype(np.float64), C.astype(np.float64))
    assert_array_equal(results[1][0], ref_labels)


def test_gemm_tile_reused_per_thread():
    import threading

    a = _assign._gemm_tile(256, 1024)
    b = _assign._gemm_tile(256, 512)
    assert b.shape == (256, 512) and b.flags.c_contiguous and np.shares_memory(a, b)
    other = []
    t = threading.Thread(target=lambda: other.append(_assign._gemm_tile(256, 1024)))
    t.start()
    t.join()
    assert not np.shares_memory(a, other[0])  # one tile per thread
    big = _assign._gemm_tile(5000, 1024)  # 20 MB: above TILE_CACHE_BYTES, not kept
    assert big.shape == (5000, 1024) and not np.shares_memory(big, _assign._gemm_tile(5000, 1024))


# --- any magnitude of finite data ------------------------------------------------


@pytest.mark.parametrize("dtype, exps", [(np.float64, (531, 1000, -531, -990)), (np.float32, (70, 100, -70, -100))])
def test_kmeans_scale_invariant_at_extreme_magnitudes(rng, path, dtype, exps):
    X = np.concatenate([rng.normal(c, 0.5, (60, 3)) for c in (0, 4, 8)]).astype(dtype)
    C0 = X[[0, 70, 130, 5]] + dtype(0.01)
    base = fastrbf.kmeans(X, 4, init=C0, tol=0)
    base_pp = fastrbf.kmeans(X, 4, seed=3, n_init=2)
    labels0, d20 = fastrbf.lloyd_assign(X, C0)
    upd0, _ = fastrbf.lloyd_update(X, labels0, 4)
    for e in exps:
        Xs, Cs = np.ldexp(X, e).astype(dtype), np.ldexp(C0, e).astype(dtype)  # exact (no subnormals)
        assert_array_equal(np.ldexp(Xs, -e), X)
        res = fastrbf.kmeans(Xs, 4, init=Cs, tol=0)
        assert_array_equal(res.labels, base.labels)
        assert_array_equal(res.centers, np.ldexp(base.centers, e).astype(dtype))
        assert res.n_iter == base.n_iter and res.converged == base.converged
        with np.errstate(over="ignore", under="ignore"):
            assert res.inertia == pytest.approx(float(np.ldexp(base.inertia, 2 * e)), rel=1e-12, abs=0)
        pp = fastrbf.kmeans(Xs, 4, seed=3, n_init=2)
        assert_array_equal(pp.labels, base_pp.labels)
        labels, d2 = fastrbf.lloyd_assign(Xs, Cs)
        assert_array_equal(labels, labels0)
        with np.errstate(over="ignore", under="ignore"):
            np.testing.assert_allclose(d2, np.ldexp(d20, 2 * e).astype(dtype), rtol=1e-6, atol=0)
        upd, _ = fastrbf.lloyd_update(Xs, labels0, 4)
        assert_array_equal(upd, np.ldexp(upd0, e).astype(dtype))


def test_kmeans_huge_data_reproducer():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 2))
    res = fastrbf.kmeans(X * 1e160, 3, seed=0)
    ref_labels, _ = reference.lloyd_assign(X, res.centers / 1e160)
    assert_array_equal(res.labels, ref_labels)
    assert np.bincount(res.labels, minlength=3).min() >= 1
    # the true inertia (~1e320) exceeds the float64 range: inf, its rounded value
    assert res.inertia == np.inf
    assert res.n_iter == fastrbf.kmeans(X, 3, seed=0).n_iter
    labels, d2 = fastrbf.lloyd_assign(X * 1e160, X[:3] * 1e160)
    assert_array_equal(labels, reference.lloyd_assign(X, X[:3])[0])


def test_huge_and_tiny_weights(rng):
    X = np.concatenate([rng.normal(c, 0.5, (60, 2)) for c in (0, 4, 8)])
    w = rng.uniform(0.5, 2.0, 180)
    C0 = X[[0, 70, 130]] + 0.01
    base = fastrbf.kmeans(X, 3, init=C0, sample_weight=w)
    for e in (900, -1000):
        res = fastrbf.kmeans(X, 3, init=C0, sample_weight=np.ldexp(w, e))
        assert_array_equal(res.labels, base.labels)
        assert_array_equal(res.centers, base.centers)
        assert res.inertia == pytest.approx(float(np.ldexp(base.inertia, e)), rel=1e-12)
        C, counts = fastrbf.lloyd_update(X, base.labels, 3, sample_weight=np.ldexp(w, e))
        C_ref, counts_ref = reference.lloyd_update(X, base.labels, 3, sample_weight=w)
        np.testing.assert_allclose(C, C_ref, rtol=1e-12)
        np.testing.assert_allclose(counts, np.ldexp(counts_ref, e), rtol=1e-12)


def test_kmeans_init_array_with_too_few_distinct_points():
    X5 = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [3.0, 3.0]])
    with pytest.raises(ValueError, match=r"`X` has fewer distinct points \(with weight > 0\) than `n_clusters` \(5\)\."):
        fastrbf.kmeans(X5, 5, init=X5)
    # the weighted-out duplicates do not count
    X6 = np.r_[X5[:4], [[9.0, 9.0]]]
    with pytest.raises(ValueError, match=r"fewer distinct points \(with weight > 0\) than `n_clusters` \(4\)"):
        fastrbf.kmeans(np.r_[X6, X6], 4, init=X6[:4], sample_weight=[1, 1, 0, 0, 0] * 2)
    # enough distinct points far down the data: found in a later prefix
    X = np.r_[np.zeros((50, 2)), np.eye(2)]
    res = fastrbf.kmeans(X, 3, init=np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    assert np.bincount(res.labels).tolist() == [50, 1, 1]


@pytest.mark.parametrize("n_threads, exc", [(0, ValueError), ("2", TypeError), (True, TypeError), (2.0, TypeError)])
@pytest.mark.parametrize("fn", ["kmeans", "lloyd_assign", "lloyd_update"])
def test_bad_n_threads_on_every_path(n_threads, exc, fn):
    X = np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0], [6.0, 6.0]])
    with pytest.raises(exc, match=r"`n_threads` must be"):
        if fn == "kmeans":
            fastrbf.kmeans(X, 2, n_threads=n_threads)  # the small-problem path
        elif fn == "lloyd_assign":
            fastrbf.lloyd_assign(X, X[:2], n_threads=n_threads)
        else:
            fastrbf.lloyd_update(X, [0, 0, 1, 1], 2, n_threads=n_threads)


@pytest.mark.parametrize("seed, exc", [(-1, ValueError), (1.5, TypeError), ("abc", TypeError), (True, TypeError)])
def test_bad_seed(seed, exc):
    X = np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0], [6.0, 6.0]])
    with pytest.raises(exc, match=r"`seed` must be None, an int >= 0 or a numpy.random.Generator; got"):
        fastrbf.kmeans(X, 2, seed=seed)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(n_init=1.0), TypeError, r"`n_init` must be an int >= 1; got 1.0"),
        (dict(max_iter="10"), TypeError, r"`max_iter` must be an int >= 1; got '10'"),
        (dict(tol="0"), TypeError, r"`tol` must be a finite number >= 0; got '0'"),
        (dict(tol=float("nan")), ValueError, r"`tol` must be a finite number >= 0; got nan"),
        (dict(empty=None), ValueError, r"`empty` must be 'relocate' or 'raise'; got None"),
        (dict(sample_weight="w"), TypeError, r"`sample_weight` must be an array of real numbers"),
    ],
)
def test_kmeans_bad_parameter_types(kwargs, exc, match):
    X = np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0], [6.0, 6.0]])
    with pytest.raises(exc, match=match):
        fastrbf.kmeans(X, 2, **kwargs)


def test_update_bad_n_clusters_type():
    with pytest.raises(TypeError, match=r"`n_clusters` must be an int >= 1; got 2.0"):
        fastrbf.lloyd_update(np.ones((3, 2)), [0, 1, 1], 2.0)


def test_lloyd_update_memory_error_before_allocating():
    X = np.ones((3, 2))
    with pytest.raises(MemoryError, match=r"lloyd_update with n_clusters=1000000000000 and 2 features needs .* GiB"
                                          r".*pass a smaller `n_clusters`"):
        fastrbf.lloyd_update(X, [0, 1, 1], 10**12)


def test_kmeans_memory_error_before_clustering(monkeypatch):
    from fastrbf import _validation

    X = np.random.default_rng(0).standard_normal((100, 3))
    monkeypatch.setattr(_validation, "available_memory", lambda: 1000)
    with pytest.raises(MemoryError, match=r"kmeans with n_clusters=5 on data of shape \(100, 3\) needs .* smaller `n_clusters`"):
        fastrbf.kmeans(X, 5)
    with pytest.raises(MemoryError, match=r"kmeans with n_centers=5 .* smaller `n_centers`"):
        cluster.kmeans_named(X, 5, name="n_centers")


# --- the private entry point with the caller's name for the cluster count --------


@pytest.mark.parametrize(
    "args,kwargs,exc,match",
    [
        ((7,), {}, ValueError, r"`n_centers` must be in \[1, n_samples\] = \[1, 6\]; got 7"),
        ((0,), {}, ValueError, r"`n_centers` must be in \[1, n_samples\] = \[1, 6\]; got 0"),
        ((2.0,), {}, TypeError, r"`n_centers` must be an int; got 2.0"),
        ((4,), {}, ValueError, r"fewer distinct points \(with weight > 0\) than `n_centers` \(4\); only 3"),
        ((4,), dict(init="random"), ValueError, r"fewer distinct points \(with weight > 0\) than `n_centers`: 3 < 4"),
        ((4,), dict(init=np.arange(8.0).reshape(4, 2)), ValueError,
         r"fewer distinct points \(with weight > 0\) than `n_centers` \(4\)\."),
        ((3,), dict(sample_weight=[1, 0, 1, 0, 0, 0]), ValueError,
         r"`n_centers` \(3\) must not exceed the number of points with weight > 0 \(2\)"),
        ((2,), dict(init=np.zeros((3, 2))), ValueError, r"`init` must have shape \(2, 2\) \(n_centers, n_features\)"),
    ],
)
def test_private_kmeans_names_the_callers_argument(args, kwargs, exc, match):
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [2.0, 2.0], [2.0, 2.0]])
    with pytest.raises(exc, match=match):
        cluster.kmeans_named(X, *args, name="n_centers", **kwargs)


def test_private_kmeans_is_kmeans(rng):
    X = rng.standard_normal((300, 3))
    a = cluster.kmeans_named(X, 5, name="n_landmarks", seed=1, n_init=2, max_iter=20, tol=0.0)
    b = fastrbf.kmeans(X, 5, seed=1, n_init=2, max_iter=20, tol=0.0)
    assert isinstance(a, fastrbf.KMeansResult)
    assert_array_equal(a.centers, b.centers)
    assert_array_equal(a.labels, b.labels)
    assert a.inertia == b.inertia and a.n_iter == b.n_iter


@pytest.mark.parametrize("small", [True, False])  # the one-call small-problem loop, the general one
def test_labels_and_inertia_of_the_final_centres_after_a_relocation(monkeypatch, small):
    """A relocation subtracts a point from its old cluster's sums: the centre can move
    by an ulp while no label changes; labels and inertia must be those of the final
    centres."""
    if not small:
        from fastrbf._jit.cluster import lloyd as jl

        monkeypatch.setattr(jl, "UPDATE_CHUNK", 1)  # disables the small path (n > chunk)
        monkeypatch.setattr(cluster, "_jl", jl)
    X = np.array([[0.1257302210933933, -0.1321048632913019], [0.6404226504432821, 0.10490011715303971]])
    C0 = np.array([[-0.6232744625373522, 0.0413259793472436], [-2.3250307746388343, -0.21879166393254573]])
    res = fastrbf.kmeans(X, 2, init=C0, max_iter=5)
    labels, d2 = reference.lloyd_assign(X, res.centers)
    assert_array_equal(res.labels, labels)
    assert res.inertia == float(d2.sum())


def _both_float32_paths(monkeypatch, call):
    """``call()`` on the certified direct float32 assignment (of float32 data, or of the
    centred float32 copy of float64 data) and on the GEMM path."""
    results = []
    for max_d in (10**9, 0):
        monkeypatch.setattr(_assign, "F32_DIRECT_MAX_D", max_d)
        results.append(call())
    return results


@pytest.mark.parametrize("n,d,K", [(257, 16, 64), (700, 5, 130), (1000, 33, 20), (50, 48, 11)])
@pytest.mark.parametrize("offset", [0.0, 1e4])
@pytest.mark.parametrize("dtype, path", [(np.float32, "direct32"), (np.float64, "centred32")])
def test_certified_direct_float32_equals_gemm_path(rng, monkeypatch, n, d, K, offset, dtype, path):
    """K * d above the direct threshold: the certified direct float32 assignment gives the
    labels and distances of the GEMM path bit for bit, for 1 and 2 threads."""
    X = (offset + rng.standard_normal((n, d))).astype(dtype)
    C = X[rng.choice(n, K, replace=False)].copy()
    C[K // 2] = C[0]  # duplicate centre: ties go to the lowest index
    assert _assign.Assigner(X, 1).path(K, np.dtype(dtype)) == path
    monkeypatch.setattr(_assign, "GEMM_CHUNK_ROWS", 100)
    a, b = _both_float32_paths(monkeypatch, lambda: fastrbf.lloyd_assign(X, C))
    monkeypatch.setattr(_assign, "F32_DIRECT_MAX_D", 10**9)
    c = fastrbf.lloyd_assign(X, C, n_threads=1)
    for labels, d2 in (b, c):
        assert_array_equal(a[0], labels)
        assert_array_equal(a[1], d2)
        assert a[1].dtype == d2.dtype == dtype
    ref_labels, _ = reference.lloyd_assign(X.astype(np.float64), C.astype(np.float64))
    assert_array_equal(a[0], ref_labels)


def test_certified_direct_float32_near_ties(rng):
    """Points nearly equidistant from two centres: their float32 distances tie (or even
    order the centres the wrong way), the float64 ones do not; the labels are the float64
    argmin (exact ties: the lowest index), as on the GEMM path."""
    d, K = 16, 64
    C = np.zeros((K, d), dtype=np.float32)
    C[1, 0] = 1.0  # centres 0 and 1; the others far away
    C[2:] = 1e4 + rng.standard_normal((K - 2, d)).astype(np.float32)
    e = np.array([-3, -2, -1, 0, 1, 2, 3], dtype=np.float32) * np.float32(2.0**-24)
    X = np.zeros((7 * 40, d), dtype=np.float32)
    X[:, 0] = np.tile(np.float32(0.5) + e, 40)  # x0 - 0.5 > 0: closer to centre 1
    X[:, 1] = np.repeat(np.linspace(300.0, 3000.0, 40, dtype=np.float32), 7)
    assert _assign.Assigner(X, 1).path(K, np.dtype(np.float32)) == "direct32"
    D32 = fastrbf.sqdist(X, C[:2])
    assert (D32[:, 0] == D32[:, 1]).mean() > 0.5  # the float32 distances cannot tell
    labels, d2 = fastrbf.lloyd_assign(X, C)
    X64, C64 = X.astype(np.float64), C.astype(np.float64)
    expect = np.where(X64[:, 0] > 0.5, 1, 0)
    assert_array_equal(labels, expect)
    ref_labels, ref_d2 = reference.lloyd_assign(X64, C64)
    assert_array_equal(labels, ref_labels)
    assert_array_equal(d2, ref_d2.astype(np.float32))


def test_certified_direct_float64_near_ties(rng):
    """float64 points nearly equidistant from two centres, closer than float32 can tell
    (their centred float32 copies tie): the labels are the float64 argmin, as on the GEMM
    path and in the reference."""
    d, K = 16, 64
    C = np.zeros((K, d))
    C[1, 0] = 1.0  # centres 0 and 1; the others far away
    C[2:] = 1e4 + rng.standard_normal((K - 2, d))
    X = np.zeros((7 * 40, d))
    X[:, 0] = np.tile(0.5 + np.arange(-3, 4) * 2.0**-20, 40)  # x0 > 0.5: closer to centre 1
    X[:, 1] = np.repeat(np.linspace(300.0, 3000.0, 40), 7)
    assert _assign.Assigner(X, 1).path(K, np.dtype(np.float64)) == "centred32"
    D32 = fastrbf.sqdist(X.astype(np.float32), C[:2].astype(np.float32))
    assert (D32[:, 0] == D32[:, 1]).mean() > 0.5  # float32 distances cannot tell
    labels, d2 = fastrbf.lloyd_assign(X, C)
    assert_array_equal(labels, np.where(X[:, 0] > 0.5, 1, 0))
    ref_labels, ref_d2 = reference.lloyd_assign(X, C)
    assert_array_equal(labels, ref_labels)
    np.testing.assert_allclose(d2, ref_d2, rtol=1e-15)  # the reference sums in another order


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_kmeans_float32_certified_direct_same_as_gemm_path(rng, monkeypatch, n_threads, dtype):
    """kmeans in float32 (two row chunks, a relocation, K * d above the direct threshold):
    the same centres, labels, inertia and n_iter on either assignment path and for 1 or 2
    threads."""
    X = rng.standard_normal((9000, 16)).astype(dtype)
    C0 = X[:40].copy()
    C0[7] = 1e3  # empty at the first iteration: relocated

    def run(threads=n_threads):
        return fastrbf.kmeans(X, 40, init=C0, max_iter=30, tol=0, algorithm="lloyd", n_threads=threads)

    a, b = _both_float32_paths(monkeypatch, run)
    monkeypatch.setattr(_assign, "F32_DIRECT_MAX_D", 10**9)
    c = run(3 - n_threads)
    for r in (b, c):
        assert_array_equal(a.centers, r.centers)
        assert_array_equal(a.labels, r.labels)
        assert a.inertia == r.inertia and a.n_iter == r.n_iter
    assert a.centers.dtype == dtype
