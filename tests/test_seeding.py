"""k-means++ seeding: the fused one-pass kernels against a plain NumPy version of the
same greedy algorithm (scikit-learn's), with the same random draws."""

import numpy as np
import pytest

from fastrbf import reference
from fastrbf._jit.cluster import seeding
from fastrbf.cluster import _kmeans as cluster


def _numpy_plusplus(X, K, w, rng):
    n = X.shape[0]
    n_trials = 2 + int(np.log(K))
    centers = np.empty((K, X.shape[1]), dtype=X.dtype)
    first = rng.choice(n, p=w / w.sum())
    centers[0] = X[first]
    closest = reference.sqdist(X[first : first + 1], X)[0].astype(np.float64)
    for c in range(1, K):
        cum = np.cumsum(w * closest)
        ids = np.searchsorted(cum, rng.uniform(size=n_trials) * cum[-1])
        np.clip(ids, None, n - 1, out=ids)
        dc = np.minimum(closest, reference.sqdist(X[ids], X).astype(np.float64))
        best = int(np.argmin(dc @ w))
        centers[c] = X[ids[best]]
        closest = dc[best]
    return centers


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, d, K", [(1000, 2, 5), (seeding.SEED_CHUNK + 513, 7, 12), (300, 70, 40)])
def test_plusplus_matches_numpy(rng, dtype, n, d, K):
    X = rng.standard_normal((n, d)).astype(dtype)
    w = rng.uniform(0.5, 2.0, n)
    ours = cluster._kmeans_plusplus(X, K, w, np.random.default_rng(5), None)
    ref = _numpy_plusplus(X, K, w, np.random.default_rng(5))
    assert ours.dtype == dtype
    assert np.array_equal(ours, ref)


@pytest.mark.parametrize("d", [5, 300])  # the direct passes; the certified GEMM blocks (and their chunks)
def test_plusplus_thread_count_invariant(rng, d):
    X = rng.standard_normal((3 * seeding.SEED_CHUNK + 17, d))
    w = np.ones(X.shape[0])
    a = cluster._kmeans_plusplus(X, 30, w, np.random.default_rng(1), 1)
    b = cluster._kmeans_plusplus(X, 30, w, np.random.default_rng(1), 2)
    assert np.array_equal(a, b)


def test_plusplus_too_few_distinct_points(rng):
    X = np.repeat(rng.standard_normal((3, 2)), 10, axis=0)
    with pytest.raises(ValueError, match="fewer distinct points .* than `n_clusters` \\(4\\); only 3"):
        cluster._kmeans_plusplus(X, 4, np.ones(30), np.random.default_rng(0), None)
