"""The initial centres of the in-memory k-means: greedy k-means++ and the random
draw of distinct points, and the check that the data hold enough distinct points.

Decisions: k-means++ is scikit-learn's greedy variant (``2 + log K`` candidates per
step, the one that lowers the potential most is kept), with one fused pass over the
data per step for the candidates' potentials and one to update the distances (no
candidates x n matrix).  Too few distinct points (of weight > 0) for the clusters is a
``ValueError`` naming the cluster count as the caller knows it (:func:`too_few_distinct`).
"""

import numpy as np

from . import _progress, _threads
from ._jit import seeding as _jseed


def has_distinct(X, K):
    """Whether the rows of X hold at least K distinct points: np.unique over growing
    prefixes (2K, 4K, ... rows), so that the usual case costs O(K log K d)."""
    n = X.shape[0]
    m = min(n, 2 * K)
    while True:
        if np.unique(X[:m], axis=0).shape[0] >= K:
            return True
        if m == n:
            return False
        m = min(n, 4 * m)


def too_few_distinct(K, name, found=None):
    """The ``ValueError`` of data with fewer distinct points (of weight > 0) than the
    ``K`` clusters (named ``name``), ``found`` of them chosen (if known)."""
    tail = f"; only {found} distinct centres could be chosen." if found is not None else "."
    return ValueError(f"`X` has fewer distinct points (with weight > 0) than `{name}` ({K}){tail}")


def kmeans_plusplus(X, K, w, rng, n_threads, name="n_clusters", rep=_progress.OFF):
    """K initial centres (rows of ``X``) by greedy k-means++ with weights ``w``."""
    # greedy k-means++ (scikit-learn's): 2 + log K candidates per step, the one that
    # lowers the potential most is kept.  One fused pass over the data per step for
    # the candidates' potentials and one to update the distances (no t x n matrix).
    n = X.shape[0]
    n_trials = 2 + int(np.log(K))
    Xt = np.ascontiguousarray(X.T)
    w64 = np.ascontiguousarray(w, dtype=np.float64)
    centers = np.empty((K, X.shape[1]), dtype=X.dtype)
    first = rng.choice(n, p=w / w.sum())
    centers[0] = X[first]
    closest = np.full(n, np.inf)
    wc = np.empty(n)
    nch = (n + _jseed.SEED_CHUNK - 1) // _jseed.SEED_CHUNK

    def update(cand, c):
        _threads.map_ranges(lambda c0, c1: _jseed.update_closest(Xt, cand, c, closest, w64, c0, c1, wc), nch, n_threads)

    update(X[first : first + 1], 0)
    pot = wc.sum()
    part = np.empty((nch, n_trials))
    rep.start("k-means++", K, unit="k-means++")
    for c in range(1, K):
        rep.step(c)
        if pot <= 0:
            raise too_few_distinct(K, name, c)
        cum = np.cumsum(wc)
        ids = np.searchsorted(cum, rng.uniform(size=n_trials) * cum[-1])
        np.clip(ids, None, n - 1, out=ids)
        cand = np.ascontiguousarray(X[ids])
        _threads.map_ranges(lambda c0, c1, cand=cand: _jseed.candidate_potentials(Xt, cand, closest, w64, c0, c1, part),
                            nch, n_threads)
        pots = part.sum(axis=0)
        best = int(np.argmin(pots))
        centers[c] = cand[best]
        update(cand, best)
        pot = pots[best]
    rep.finish_stage(K)
    return centers


def random_init(X, K, w, rng, name="n_clusters"):
    """K distinct rows of ``X`` of weight > 0, drawn uniformly."""
    uniq = np.unique(X[w > 0], axis=0)
    if uniq.shape[0] < K:
        raise ValueError(
            f"`X` has fewer distinct points (with weight > 0) than `{name}`: "
            f"{uniq.shape[0]} < {K}."
        )
    pick = rng.choice(uniq.shape[0], size=K, replace=False)
    return np.ascontiguousarray(uniq[pick], dtype=X.dtype)
