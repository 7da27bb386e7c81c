"""``lloyd_assign``, ``lloyd_update`` and ``kmeans`` for device arrays (called by
:func:`fastrbf.lloyd_assign`, :func:`fastrbf.lloyd_update` and :func:`fastrbf.kmeans`
when their data are on a CUDA device).

The k-means loop is the CPU's (:mod:`fastrbf.cluster._rules`: the first iteration
never stops, unchanged labels stop, ``tol`` on the summed squared centre shift scaled
by the mean column variance, empty clusters relocated to the farthest points or
refused): the data, labels and distances stay on the device; per iteration the host
reads the K x (d + 1) cluster sums and one count.  Only when a cluster empties does it
read the n distances, labels and weights, to apply the relocation rule.

k-means++ is the CPU's greedy rule (``2 + int(log K)`` candidates per step, the one that
lowers the potential most kept), drawn from per-block sums: the host reads a few
thousand block sums and one block of 128 values per candidate.  Its draws are not the
CPU's (the sums are added in another order), so the same seed gives other centres.

Data are not rescaled as on the CPU: data whose squared distances could overflow the
dtype are refused (the CPU scales them by a power of two).
"""

import math

import numpy as np

from .. import _validation as _v
from .._jit.cuda import cluster as _jc
from .._jit.cuda import neighbors as _jn
from .._jit.cuda import reduce as _jr
from .._jit.cuda.target import ROWS, TILE, blocks
from ..cluster._rules import (
    best_of_inits,
    check_enough_points,
    check_lloyd_args,
    check_n_clusters,
    lloyd_centers,
    lloyd_stop,
    lloyd_tolerance,
    relocation_moves,
)
from . import data
from .arrays import Device, is_device_array

#: rows per chunk of the update's partial sums (grown for large K d so that the
#: partial sums stay under PARTIAL_BYTES)
CHUNK = 1024
PARTIAL_BYTES = 2**28


def _chunk(n, K, d):
    c = CHUNK
    while blocks(n, c) * K * (d + 1) * 8 > PARTIAL_BYTES and c < n:
        c *= 2
    return c


def _data(dev, X, name="X"):
    Xv = data.array(dev, X, name)
    dtype = data.result_dtype(Xv)
    data.check_values(dev, Xv, name, dtype)
    return data.as_dtype(dev, Xv, dtype), dtype


def _weights(dev, sample_weight, n):
    if sample_weight is None:
        return data.full(dev, n, 1.0, np.float64), n
    wv = data.array(dev, sample_weight, "sample_weight", ndim=1)
    if wv.shape[0] != n:
        raise ValueError(f"`sample_weight` must have one value per row of `X` ({n}); got shape {tuple(wv.shape)}.")
    w = data.as_dtype(dev, wv, np.float64)
    finite, _ = data.stats(dev, w)
    if not finite:
        raise ValueError("`sample_weight` must contain only finite values; got NaN or inf.")
    low = dev.scratch(1, np.float64)
    _jr.min_kernel()[1, ROWS](w, low)
    if float(low.copy_to_host()[0]) < 0:
        raise ValueError(f"`sample_weight` must be >= 0; got {float(low.copy_to_host()[0])!r}.")
    count = dev.to_device(np.zeros(1, dtype=np.int64))
    _jr.positive_kernel()[blocks(n, ROWS), ROWS](w, count)
    n_pos = int(count.copy_to_host()[0])
    if n_pos == 0:
        raise ValueError("`sample_weight` must have at least one value > 0.")
    return w, n_pos


def _centers(dev, C, d, dtype, name):
    Cv = data.array(dev, C, name)
    if Cv.shape[1] != d:
        raise ValueError(f"`{name}` must have {d} columns (the features of `X`); got shape {tuple(Cv.shape)}.")
    data.check_values(dev, Cv, name, dtype)
    return data.as_dtype(dev, Cv, dtype)


def _assign(dev, Xc, Cd, labels, mind):
    # the k-NN kernel with k = 1: the centres are the training points
    n = Xc.shape[0]
    _jn.knn_kernel(Xc.dtype, Xc.shape[1], 1)[blocks(n, ROWS), ROWS](Cd, Xc, 1, labels.reshape(n, 1), mind.reshape(n, 1))


class ClusterSums:
    """The cluster sums of one data set (scratch kept across iterations)."""

    def __init__(self, dev, Xc, w, K):
        n, d = Xc.shape
        self.dev, self.Xc, self.w = dev, Xc, w
        self.chunk = _chunk(n, K, d)
        nch = blocks(n, self.chunk)
        self.part = dev.scratch((nch, K, d), np.float64)
        self.partw = dev.scratch((nch, K), np.float64)
        self.sums = dev.scratch((K, d), np.float64)
        self.wsum = dev.scratch(K, np.float64)
        self.zero = dev.to_device(np.zeros(d))

    def __call__(self, labels, centers, mu=None, square=False):
        K, d = self.sums.shape
        _jc.partials_kernel()[self.part.shape[0], _jc.UPDATE_THREADS](
            self.Xc, labels, self.w, self.zero if mu is None else mu, square, self.chunk, self.part, self.partw)
        _jc.reduce_kernel()[blocks(K * (d + 1), ROWS), ROWS](self.part, self.partw, self.sums, self.wsum, centers)


def lloyd_assign(X, centers):
    """(labels int64, squared distances in the dtype) of device data, of the caller's kind."""
    dev = Device(X)
    with dev.context():
        Xc, Cc, dtype = data.pair(dev, X, centers, "X", "centers")
        labels, lv = dev.empty(Xc.shape[0], np.int64)
        mind, mv = dev.empty(Xc.shape[0], dtype)
        _assign(dev, Xc, Cc, lv, mv)
        return dev.result(labels), dev.result(mind)


def lloyd_update(X, labels, n_clusters, sample_weight=None):
    """(centres in the dtype, NaN rows for empty clusters; float64 cluster weights) of
    device data, of the caller's kind."""
    dev = Device(X)
    with dev.context():
        Xc, dtype = _data(dev, X)
        n, d = Xc.shape
        K = _v.check_int(n_clusters, "n_clusters", 1)
        lv = data.array(dev, labels, "labels", ndim=1)
        if lv.shape[0] != n:
            raise ValueError(f"`labels` must have one value per row of `X` ({n}); got shape {tuple(lv.shape)}.")
        if np.dtype(lv.dtype).kind not in "iu":
            raise TypeError(f"`labels` must be integers; got dtype {np.dtype(lv.dtype)}.")
        lab = data.as_dtype(dev, lv, np.int64)
        low = dev.scratch(1, np.float64)
        _jr.min_kernel()[1, ROWS](lab, low)
        big = data.stats(dev, lab)[1]
        if float(low.copy_to_host()[0]) < 0 or big >= K:
            raise ValueError(f"`labels` must be integers in [0, {K}) (`n_clusters`).")
        w, _ = _weights(dev, sample_weight, n)
        centers, cv = dev.empty((K, d), dtype)
        counts, wv = dev.empty(K, np.float64)
        up = ClusterSums(dev, Xc, w, K)
        up(lab, cv)
        wv.copy_to_device(up.wsum)
        return dev.result(centers), dev.result(counts)


def _draw(dev, mind, w, rng, count):
    """``count`` row indices drawn with probability proportional to ``w * mind``, or None
    when that is 0 everywhere."""
    n = mind.shape[0]
    nb = blocks(n, ROWS)
    part = dev.scratch(nb, np.float64)
    _jr.sums_kernel()[nb, ROWS](mind, w, part)
    cum = np.cumsum(part.copy_to_host())
    total = float(cum[-1])
    if not total > 0:
        return None
    out = []
    for r in rng.random(count) * total:
        b = min(int(np.searchsorted(cum, r, side="right")), nb - 1)
        while b > 0 and cum[b] == (cum[b - 1] if b else 0.0):  # an empty block: the last one with weight
            b -= 1
        lo, hi = b * ROWS, min(n, (b + 1) * ROWS)
        c = w[lo:hi].copy_to_host() * mind[lo:hi].copy_to_host()
        cc = np.cumsum(c)
        j = min(int(np.searchsorted(cc, r - (cum[b - 1] if b else 0.0), side="right")), hi - lo - 1)
        pos = np.flatnonzero(c > 0)
        if c[j] <= 0:
            j = int(pos[np.searchsorted(pos, j)]) if np.any(pos > j) else int(pos[-1])
        out.append(lo + j)
    return out


def _plusplus(dev, Xc, K, w, rng, name):
    n, d = Xc.shape
    L = min(2 + int(math.log(K)), _jc.MAX_CANDIDATES)
    nb = blocks(n, ROWS)
    mind = data.full(dev, n, 1.0, np.float64)
    first = _draw(dev, mind, w, rng, 1)
    mind = data.full(dev, n, np.inf, np.float64)
    C = np.empty((K, d), dtype=Xc.dtype)
    cand = dev.scratch((L, d), Xc.dtype)
    part = dev.scratch((nb, L), np.float64)
    gather = _jr.gather_kernel()
    lower = _jc.lower_kernel(Xc.dtype)
    potential = _jc.potential_kernel(Xc.dtype)
    idx = first
    for k in range(K):
        if k > 0:
            idx = _draw(dev, mind, w, rng, L)
            if idx is None:
                raise ValueError(f"`X` has fewer distinct points (with weight > 0) than `{name}` ({K}).")
        rows = dev.to_device(np.asarray(idx, dtype=np.int64))
        gather[(blocks(len(idx), TILE), blocks(d, TILE)), (TILE, TILE)](Xc, rows, cand)
        best = 0
        if k > 0 and len(idx) > 1:
            potential[nb, ROWS](Xc, cand[:len(idx)], mind, w, part)
            best = int(np.argmin(part.copy_to_host()[:, :len(idx)].sum(axis=0)))
        lower[blocks(n, ROWS), ROWS](Xc, cand, best, mind)
        C[k] = cand[best:best + 1].copy_to_host()[0]
    return C


def _random(dev, Xc, K, w, n_pos, rng, name):
    # K distinct rows of weight > 0, drawn uniformly among the rows (not the distinct
    # points, as on the CPU: that would need the rows on the host); duplicates redrawn
    n, d = Xc.shape
    pos = np.arange(n) if n_pos == n else np.flatnonzero(w.copy_to_host() > 0)  # (weights of 0: read once)
    for _ in range(8):
        idx = rng.choice(pos, size=K, replace=False)
        rows = dev.to_device(np.sort(idx))
        cand = dev.scratch((K, d), Xc.dtype)
        _jr.gather_kernel()[(blocks(K, TILE), blocks(d, TILE)), (TILE, TILE)](Xc, rows, cand)
        C = cand.copy_to_host()
        if np.unique(C, axis=0).shape[0] == K:
            return C
    raise ValueError(f"`X` has fewer distinct points (with weight > 0) than `{name}` ({K}), "
                     f"or too few to draw them at random; use init='k-means++'.")


def _relocate(dev, Xc, w, labels, mind, sums, wsum):
    # the CPU's rule (fastrbf.cluster._rules.relocation_moves) on the host's copy of the
    # distances, labels and weights (read only here, when a cluster has emptied)
    lab = labels.copy_to_host()
    md = mind.copy_to_host().astype(np.float64)
    wh = w.copy_to_host()
    counts = np.bincount(lab, minlength=wsum.shape[0]).astype(np.int64)
    moves = list(relocation_moves(md, wh, lab, counts, wsum.copy()))
    if not moves:
        return
    rows = dev.to_device(np.array([i for i, _, _ in moves], dtype=np.int64))
    got = dev.scratch((len(moves), Xc.shape[1]), Xc.dtype)
    _jr.gather_kernel()[(blocks(len(moves), TILE), blocks(Xc.shape[1], TILE)), (TILE, TILE)](Xc, rows, got)
    xs = got.copy_to_host().astype(np.float64)
    for (i, cur, e), x in zip(moves, xs, strict=True):
        sums[cur] -= wh[i] * x
        sums[e] = wh[i] * x
        wsum[cur] -= wh[i]
        wsum[e] = wh[i]
        lab[i] = e
    labels.copy_to_device(lab)


def _inertia(dev, mind, w):
    nb = blocks(mind.shape[0], ROWS)
    part = dev.scratch(nb, np.float64)
    _jr.sums_kernel()[nb, ROWS](mind, w, part)
    return float(np.sum(part.copy_to_host()))


def _lloyd(dev, Xc, C, w, up, max_iter, tol_abs, empty, raise_empty, rep):
    n = Xc.shape[0]
    K = C.shape[0]
    labels = dev.scratch(n, np.int64)
    old = data.full(dev, n, -1, np.int64)
    mind = dev.scratch(n, Xc.dtype)
    cd = dev.scratch((K, Xc.shape[1]), Xc.dtype)
    count = dev.scratch(1, np.int64)
    changed = _jr.changed_kernel()
    converged = False
    moved = True
    n_iter = 0
    rep.start("lloyd", max_iter)
    for it in range(max_iter):
        Cd = dev.to_device(C)
        _assign(dev, Xc, Cd, labels, mind)
        up(labels, cd)
        sums, wsum = up.sums.copy_to_host(), up.wsum.copy_to_host()
        if np.any(wsum == 0):
            if empty == "raise":
                raise_empty(wsum, it + 1)
            _relocate(dev, Xc, w, labels, mind, sums, wsum)
        C, shift, moved = lloyd_centers(sums, wsum, C, Xc.dtype)
        count.copy_to_device(np.zeros(1, dtype=np.int64))
        changed[blocks(n, ROWS), ROWS](labels, old, count)
        n_iter = it + 1
        stop, _ = lloyd_stop(int(count.copy_to_host()[0]) == 0, shift, tol_abs)
        if stop:
            converged = True
            break
        if n_iter < max_iter:  # the last iteration's report is the final one
            rep.step(n_iter, shift=shift)
    # the final labels and distances are those of the final centres (when nothing moved
    # this is the last assignment again)
    _assign(dev, Xc, dev.to_device(C), labels, mind)
    return C, labels, _inertia(dev, mind, w), n_iter, converged


def kmeans(X, n_clusters, *, name, init, n_init, max_iter, tol, seed, sample_weight, empty, raise_empty, result,
           progress):
    """k-means of device data; ``result`` is the result class, ``raise_empty`` the CPU's
    empty-cluster error, ``progress`` the reporter of :mod:`fastrbf._progress` (the CPU's
    reports: each init's Lloyd iterations and their shift)."""
    dev = Device(X)
    with dev.context():
        Xc, dtype = _data(dev, X)
        n, d = Xc.shape
        K = check_n_clusters(n_clusters, n, name)
        tol = check_lloyd_args(n_init, max_iter, tol, empty)
        rng = _v.check_seed(seed, "seed")
        w, n_pos = _weights(dev, sample_weight, n)
        check_enough_points(K, n_pos, name)
        C0 = None
        if isinstance(init, str):
            _v.check_choice(init, "init", ("k-means++", "random"),
                            text=f"'k-means++', 'random' or an array of shape ({K}, {d})")
        else:
            if not is_device_array(init):
                raise TypeError("`init` must be on the CUDA device with the data (or 'k-means++' or 'random'); "
                                f"got {type(init).__name__}.")
            Cv = _centers(dev, init, d, dtype, "init")
            if Cv.shape[0] != K:
                raise ValueError(f"`init` must have shape ({K}, {d}) ({name}, n_features); got {tuple(Cv.shape)}.")
            if n_init != 1:
                raise ValueError(f"`n_init` must be 1 when `init` is an array; got {n_init}.")
            C0 = Cv.copy_to_host()
        up = ClusterSums(dev, Xc, w, K)
        tol_abs = 0.0
        if tol > 0:
            zeros = data.full(dev, n, 0, np.int64)
            scratch = dev.scratch((1, d), dtype)
            cnt = ClusterSums(dev, Xc, data.full(dev, n, 1.0, np.float64), 1)
            cnt(zeros, scratch)
            mu = dev.to_device(cnt.sums.copy_to_host()[0] / n)
            cnt(zeros, scratch, mu, True)
            tol_abs = lloyd_tolerance(tol, cnt.sums.copy_to_host()[0] / n)

        def start():
            if C0 is not None:
                return C0.copy()
            if init == "k-means++":
                return _plusplus(dev, Xc, K, w, rng, name)
            return _random(dev, Xc, K, w, n_pos, rng, name)

        C, labels, inertia, n_iter, converged = best_of_inits(
            n_init, progress, start,
            lambda C: _lloyd(dev, Xc, C, w, up, int(max_iter), tol_abs, empty, raise_empty, progress))
        centers, cv = dev.empty((K, d), dtype)
        cv.copy_to_device(np.ascontiguousarray(C, dtype=dtype))
        lab, lv = dev.empty(n, np.int64)
        lv.copy_to_device(labels)
        return result(dev.result(centers), dev.result(lab), inertia, n_iter, converged)
