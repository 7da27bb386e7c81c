"""k-means of dask arrays (:func:`kmeans`, with k-means|| seeding) and the blockwise
:func:`lloyd_assign`.

Only the passes over the blocks are here: the argument checks, Lloyd's update and
stopping test and the relocation rule of empty clusters are those of the in-memory
k-means (:mod:`fastrbf.cluster._rules`), and each block is assigned by the in-memory
:class:`fastrbf.cluster._assign.Assigner`, prepared once per run.
"""

import dask
import dask.array as da
import numpy as np
from dask import delayed
from numpy.typing import ArrayLike

from .. import _progress
from .. import _validation as _v
from .._progress import ProgressArg
from ..cluster import _assign
from ..cluster import _kmeans as _cl
from ..cluster._assign import Assigner
from ..cluster._kmeans import KMeansResult, partial_slots, raise_empty, reduce_slots, too_few_distinct
from ..cluster._rules import (
    best_of_inits,
    check_centers,
    check_enough_points,
    check_init,
    check_lloyd_args,
    check_n_clusters,
    check_weight_total,
    lloyd_centers,
    lloyd_stop,
    lloyd_tolerance,
    relocate_candidates,
    weight_array,
    weight_problem,
)
from .common import (
    Data,
    add_parts,
    aligned,
    as_rows,
    check_kind,
    check_threads,
    in_memory,
    is_dask,
    offsets,
    raise_global,
    row_blocks,
    row_index,
    tree,
)

#: called on the client after each Lloyd iteration with the iteration number (tests)
_iteration_callback = None


def lloyd_assign(X: Data, centers: ArrayLike, *, n_threads: int | None = 1) -> tuple[da.Array, da.Array]:
    """Nearest centre of each row of a dask array, blockwise.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
    centers : array_like of shape (K, d)
        In memory (shipped to every task).
    n_threads : int, default 1

    Returns
    -------
    labels : dask.array.Array of shape (n,), int64
    min_sqdist : dask.array.Array of shape (n,)
        As :func:`fastrbf.lloyd_assign` on each block (one task per block computes both).

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da
    >>> from fastrbf import dask as fd
    >>> X = da.from_array(np.array([[0.0, 0.0], [0.9, 0.0], [5.0, 5.0]]), chunks=(2, 2))
    >>> labels, d2 = fd.lloyd_assign(X, np.array([[0.0, 0.0], [5.0, 4.0]]))
    >>> [a.tolist() for a in dask.compute(labels, d2, scheduler="threads")]
    [[0, 0, 1], [0.0, 0.81, 1.0]]
    """
    nt = check_threads(n_threads)
    X = as_rows(X)
    C = check_centers(in_memory(centers, "centers"), X.shape[1])
    dtype = _v.result_dtype(X.dtype, C.dtype)
    return da.apply_gufunc(_assign_block, "(d),()->(),()", X, row_index(X), C=C, n_threads=nt,
                           meta=(np.empty((0,), np.int64), np.empty((0,), dtype)))


def _assign_block(Xb, rows, C, n_threads):
    try:
        return _cl.lloyd_assign(Xb, C, n_threads=n_threads)
    except ValueError as exc:
        raise_global(exc, (Xb, rows[0], "X"))
        raise  # not reached


# ---------------------------------------------------------------- k-means
class _KBlock:
    """One row block of ``X`` prepared for a k-means run (kept on a worker for the run):
    the converted rows, the weights, and the assigner's cached copies."""

    def __init__(self, Xb, wb, offset, K, dtype, n_threads, need_var=True):
        X = _v.to_dtype(np.asarray(Xb), dtype)
        n, d = X.shape
        self.X = X
        self.offset = int(offset)
        self.n_threads = n_threads
        self.w = np.ones(n) if wb is None else np.ascontiguousarray(wb, dtype=np.float64)
        bad = _v.find_non_finite(X, self.offset)
        self.stats = {"n": n, "nbad": 0 if bad is None else bad[2], "bad": bad, "mean": None, "m2": None,
                      "wproblem": weight_problem(self.w, self.offset),
                      "wsum": float(self.w.sum()) if wb is not None else float(n),
                      "wnnz": int(np.count_nonzero(self.w))}
        self._assigner = None
        if self.stats["nbad"] or self.stats["wproblem"] is not None:
            return
        if need_var:  # for the scaling of `tol`
            mean = X.mean(axis=0, dtype=np.float64)
            dev = X - mean
            self.stats["mean"] = mean
            self.stats["m2"] = np.einsum("ij,ij->j", dev, dev, dtype=np.float64)
        self._assigner = Assigner(X, n_threads)
        self._assigner.prepare(K)

    def __sizeof__(self):
        # dask's scheduler weighs transfers by sizeof: without this a prepared block
        # would look free to move and be shipped between workers to balance load
        arrays = [self.X, self.w, *(self._assigner.cached() if self._assigner is not None else ())]
        return object.__sizeof__(self) + sum(a.nbytes for a in arrays)

    def step_scratch(self, K):
        """(mind, part, partw) for :func:`_step`, kept for the run: scratch that never
        leaves the task (the steps of one block run one after the other), so the worker
        does not page-fault fresh buffers in every iteration."""
        sc = getattr(self, "_scratch", None)
        if sc is None or sc[1].shape[1] != K:
            sc = self._scratch = (np.empty(self.X.shape[0], dtype=np.float64), *partial_slots(self.X, K))
        return sc

    def assigner(self):
        """A fresh assigner sharing the cached copies (what it caches later stays its own)."""
        assert self._assigner is not None  # a block with NaN/inf never gets here
        return self._assigner.shared()


def _get_stats(blk):
    return blk.stats


def _merge_stats(stats, d):
    """Column variances (Chan's pairwise merge, block order) and weight totals."""
    n = 0
    mean = np.zeros(d)
    m2 = np.zeros(d)
    for s in stats:
        nb = s["n"]
        delta = s["mean"] - mean
        tot = n + nb
        mean = mean + delta * (nb / tot)
        m2 = m2 + s["m2"] + delta * delta * (n * nb / tot)
        n = tot
    return m2 / n


def _raise_bad(stats):
    for s in stats:
        if s["nbad"]:
            index, value, _ = s["bad"]
            raise _v.non_finite_error("X", (index, value, sum(t["nbad"] for t in stats)), "in all")
    for s in stats:
        if s["wproblem"] is not None:
            raise ValueError(s["wproblem"])


def _step(blk, prev, C):
    """One Lloyd assignment of a block: (labels, (sums, weights, changed labels)).
    ``prev``: the previous step's output of the block (None at the first)."""
    lab_old = _labels_of(prev)
    X = blk.X
    n = X.shape[0]
    K = C.shape[0]
    labels = np.empty(n, dtype=np.int64)  # the step's output: fresh
    mind, part, partw = blk.step_scratch(K)
    blk.assigner()(C, labels, mind, want_dist=False, update=(blk.w, part, partw))
    sums, wsum = reduce_slots(part, partw)
    changed = n if lab_old is None else int(np.count_nonzero(labels != lab_old))
    return labels, (sums, wsum, changed)


def _labels_of(out):
    """Labels from a step's output (the tuple is kept whole: no extra task per block)."""
    return None if out is None else out[0]


def _add_outs(*outs):
    return add_parts(*(o[1] for o in outs))


def _final(blk, prev, C, strict):
    """Final labels and the block's inertia."""
    labels = _labels_of(prev)
    X = blk.X
    n = X.shape[0]
    mind = np.empty(n, dtype=np.float64)
    a = blk.assigner()
    if strict:
        a.distances(C, labels, mind)
        lab = labels
    else:
        lab = np.empty(n, dtype=np.int64)
        a(C, lab, mind)
    return lab, (float(np.sum(mind * blk.w)),)


def _reloc_candidates(blk, out, prev, C, m):
    """Counts of the block's clusters and its ``m`` farthest points of weight > 0
    (decreasing distance to their centre, ties to the lowest index)."""
    labels, lab_old = _labels_of(out), _labels_of(prev)
    X = blk.X
    n = X.shape[0]
    K = C.shape[0]
    mind = np.empty(n, dtype=np.float64)
    a = blk.assigner()
    if K * X.shape[1] <= _assign.DIRECT_MAX_KD[X.dtype]:  # as in-memory: distances from the assignment
        a(C, np.empty(n, dtype=np.int64), mind)
    else:
        a.distances(C, labels, mind)
    counts = np.bincount(labels, minlength=K)
    idx = np.flatnonzero(blk.w > 0)
    top = idx[np.argsort(-mind[idx], kind="mergesort")][:m]
    old = np.full(top.shape[0], -1, dtype=np.int64) if lab_old is None else lab_old[top]
    return counts, (mind[top], top, labels[top], X[top].astype(np.float64), blk.w[top], old)


def _patch(out, idx, vals):
    labels = out[0].copy()
    labels[idx] = vals
    return (labels, *out[1:])


def _relocate(cands, counts, sums, wsum):
    """:func:`fastrbf.cluster._rules.relocate_candidates` on the candidates gathered from
    the blocks (in block order), with the global counts.  Returns {block: (local rows,
    new labels)} and the change of the number of changed labels."""
    parts = [c[1] for c in cands]
    block = np.concatenate([np.full(p[0].shape[0], b, dtype=np.int64) for b, p in enumerate(parts)])
    mind, top, lab, Xr, wr, old = (np.concatenate([p[i] for p in parts]) for i in range(6))
    moved, new, delta = relocate_candidates(mind, Xr, wr, lab, old, counts, sums, wsum)
    patches: dict = {}
    for i, e in zip(moved, new, strict=True):
        rows, vals = patches.setdefault(int(block[i]), ([], []))
        rows.append(int(top[i]))
        vals.append(int(e))
    return patches, delta


def _lloyd(blocks, C, dtype, max_iter, tol_abs, empty, rep=_progress.OFF):
    K = C.shape[0]
    nb = len(blocks)
    labels = [None] * nb
    converged = strict = False
    n_iter = 0
    rep.start("lloyd", max_iter)
    for it in range(max_iter):
        Cd = delayed(C)
        # per block one task: (labels, stats), kept whole on the worker for the next step
        outs = [delayed(_step, pure=False)(blocks[b], labels[b], Cd) for b in range(nb)]
        labels_old = labels
        *labels, total = dask.persist(*outs, tree(outs, add_parts, first=_add_outs))
        sums, wsum, changed = total.compute()
        if np.any(wsum == 0):
            if empty == "raise":
                raise_empty(wsum, it + 1)
            m = int(np.count_nonzero(wsum == 0)) + K
            res = dask.compute(*[delayed(_reloc_candidates, pure=False)(blocks[b], labels[b], labels_old[b], Cd, m)
                                 for b in range(nb)])
            counts = np.sum([r[0] for r in res], axis=0)
            patches, delta = _relocate(res, counts, sums, wsum)
            changed += delta
            for b, (idx, vals) in patches.items():
                labels[b] = delayed(_patch, pure=False)(labels[b], np.array(idx), np.array(vals, dtype=np.int64))
            labels = list(dask.persist(*labels))
        C, shift, _ = lloyd_centers(sums, wsum, C, dtype)
        n_iter = it + 1
        if _iteration_callback is not None:
            _iteration_callback(n_iter)
        stop, strict = lloyd_stop(changed == 0, shift, tol_abs)
        if stop:
            converged = True
            break
        if n_iter < max_iter:  # the last iteration's report is the final one
            rep.step(n_iter, shift=shift)
    Cd = delayed(C)
    outs = [delayed(_final, pure=False)(blocks[b], labels[b], Cd, strict) for b in range(nb)]
    *labels, total = dask.persist(*outs, tree(outs, add_parts, first=_add_outs))
    inertia = float(total.compute()[0])
    return C, labels, inertia, n_iter, converged


def _pick(blk, u):
    """The row at cumulative weight ``u`` of the block."""
    cum = np.cumsum(blk.w)
    i = min(int(np.searchsorted(cum, u, side="right")), blk.X.shape[0] - 1)
    while blk.w[i] == 0 and i > 0:
        i -= 1
    return blk.X[i : i + 1].copy()


def _closest(blk, prev, C):
    """Distance of each row to its nearest centre among ``C`` and the previous ones, and
    the block's weighted potential."""
    mind = _labels_of(prev)
    n = blk.X.shape[0]
    d2 = np.empty(n, dtype=np.float64)
    blk.assigner()(C, np.empty(n, dtype=np.int64), d2)
    out = d2 if mind is None else np.minimum(mind, d2)
    return out, (float(np.sum(out * blk.w)),)


def _sample(blk, out, phi, ell, seed):
    mind = out[0]
    p = ell * blk.w * mind / phi
    u = _v.check_seed(seed).random(p.shape[0])
    return blk.X[u < p]


def _cand_weights(blk, C):
    n = blk.X.shape[0]
    lab = np.empty(n, dtype=np.int64)
    blk.assigner()(C, lab, np.empty(n, dtype=np.float64), want_dist=False)
    return (np.bincount(lab, weights=blk.w, minlength=C.shape[0]),)


def _kmeans_parallel(blocks, wblock, K, rng, ell, rounds, rep=_progress.OFF, name="n_clusters"):
    """k-means|| (Bahmani et al. 2012) with the weighted reclustering on the client."""
    nb = len(blocks)
    cum = np.cumsum(wblock)
    u = rng.uniform() * cum[-1]
    b = min(int(np.searchsorted(cum, u, side="right")), nb - 1)
    while wblock[b] == 0:
        b -= 1
    cands = [delayed(_pick, pure=False)(blocks[b], u - (cum[b - 1] if b else 0.0)).compute()]
    new = cands[0]
    mind = [None] * nb
    r = 0
    rep.start("k-means||", rounds, unit="k-means|| round")
    while True:
        Cd = delayed(new)
        outs = [delayed(_closest, pure=False)(blocks[i], mind[i], Cd) for i in range(nb)]
        *mind, total = dask.persist(*outs, tree(outs, add_parts, first=_add_outs))
        phi = float(total.compute()[0])
        allc = np.concatenate(cands)
        if r >= rounds or phi == 0:
            wc = np.sum(dask.compute(*[delayed(_cand_weights, pure=False)(blk, delayed(allc)) for blk in blocks]),
                        axis=(0, 1))
            keep = wc > 0
            if np.count_nonzero(keep) >= K:
                break
            if phi == 0 or r >= 4 * rounds + 10:
                raise too_few_distinct(K, name, int(np.count_nonzero(keep)))
        if r:  # another round follows (the last one's report is the final one)
            rep.step(r, candidates=allc.shape[0])
        seeds = rng.integers(0, 2**63 - 1, size=nb)
        new = np.concatenate(dask.compute(*[delayed(_sample, pure=False)(blocks[i], mind[i], phi, ell, int(seeds[i]))
                                            for i in range(nb)]))
        cands.append(new)
        r += 1
    rep.finish_stage(r, candidates=allc.shape[0])
    res = _cl.kmeans_named(allc[keep], K, name=name, sample_weight=wc[keep], seed=rng)
    return res.centers


def kmeans(X: Data, n_clusters: int, *, init: str | ArrayLike = "k-means||", n_init: int = 1, max_iter: int = 300,
           tol: float = 1e-4, seed: int | np.random.Generator | None = None, sample_weight: Data | None = None,
           empty: str = "relocate", oversampling_factor: float = 2.0, init_rounds: int = 5,
           n_threads: int | None = 1, progress: ProgressArg = False) -> KMeansResult:
    """k-means of a dask array by Lloyd's algorithm: one map-reduce per iteration.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
        Persist it first if it is used again: the run reads it once (it keeps its own
        prepared blocks on the workers while it runs).
    n_clusters : int
    init : "k-means||" or array_like of shape (n_clusters, d)
        k-means|| (Bahmani et al. 2012, see the module notes), or the initial centres
        (then the result equals :func:`fastrbf.kmeans` from the same centres, to
        rounding).
    n_init : int
        Restarts; the run with the lowest inertia is kept.
    max_iter, tol, empty :
        As in :func:`fastrbf.kmeans` (same stopping and empty-cluster rules).
    seed : None, int >= 0 or numpy.random.Generator
    sample_weight : dask.array.Array or array_like of shape (n,), optional
        Row chunks as ``X``.
    oversampling_factor : float
        ``l = oversampling_factor * n_clusters`` points are expected per k-means|| round.
    init_rounds : int
        Rounds of k-means|| (more are run if fewer than ``n_clusters`` candidates came).
    n_threads : int, default 1
        Threads of each task.
    progress : bool, logging.Logger or callable, default False
        Report the k-means|| rounds and the Lloyd iterations (one dask compute each)
        of each init, as :func:`fastrbf.kmeans` (task ``"dask.kmeans"``).

    Returns
    -------
    KMeansResult
        ``centers`` (NumPy), ``labels`` (a dask array, persisted), ``inertia``,
        ``n_iter``, ``converged``.

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da
    >>> from fastrbf import dask as fd
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    >>> with dask.config.set(scheduler="threads"):
    ...     res = fd.kmeans(da.from_array(X, chunks=(2, 2)), 2, seed=0)
    >>> sorted(res.centers.tolist()), res.inertia, res.converged
    ([[0.0, 0.5], [10.0, 0.5]], 1.0, True)
    >>> reports = []
    >>> with dask.config.set(scheduler="threads"):
    ...     res = fd.kmeans(da.from_array(X, chunks=(2, 2)), 2, seed=0, progress=reports.append)
    >>> reports[-1]["task"], reports[-1]["stage"], reports[-1]["iter"] == res.n_iter
    ('dask.kmeans', 'lloyd', True)
    """
    return kmeans_named(X, n_clusters, name="n_clusters", init=init, n_init=n_init, max_iter=max_iter, tol=tol,
                        seed=seed, sample_weight=sample_weight, empty=empty,
                        oversampling_factor=oversampling_factor, init_rounds=init_rounds, n_threads=n_threads,
                        progress=progress)


def kmeans_named(X, n_clusters, *, name, init="k-means||", n_init=1, max_iter=300, tol=1e-4, seed=None,
                 sample_weight=None, empty="relocate", oversampling_factor=2.0, init_rounds=5, n_threads=1,
                 progress=False):
    """:func:`kmeans` for callers whose users know the cluster count by another name
    (``n_centers``): every message about the cluster count names ``name``, as the
    in-memory ``fastrbf.cluster.kmeans_named`` does."""
    nt = check_threads(n_threads)
    rep = _progress.reporter(progress, "dask.kmeans", runs="init")
    X = as_rows(X)
    n, d = X.shape
    K = check_n_clusters(n_clusters, n, name)
    tol = check_lloyd_args(n_init, max_iter, tol, empty)
    init_rounds = _v.check_int(init_rounds, "init_rounds", 1)
    oversampling_factor = _v.check_real(oversampling_factor, "oversampling_factor", low=0, strict=True)
    dtype = _v.result_dtype(X.dtype)
    init_arr = check_init(init if isinstance(init, str) else in_memory(init, "init"), K, d, dtype, n_init,
                          ("k-means||",), name)
    if sample_weight is None:
        wblocks = [None] * X.numblocks[0]
    else:
        if not is_dask(sample_weight):
            weight_array(sample_weight, n)
        else:
            check_kind(sample_weight.dtype, "sample_weight")
        wblocks = row_blocks(aligned(sample_weight, X, "sample_weight", ndims=(1,)))
    rng = _v.check_seed(seed)
    offs = offsets(X)
    xb = row_blocks(X)
    # -- first pass: prepared blocks (kept for the run) and their statistics
    blocks = dask.persist(*[delayed(_KBlock, pure=False)(xb[i], wblocks[i], offs[i], K, dtype, nt, tol > 0)
                            for i in range(len(xb))])
    stats = dask.compute(*[delayed(_get_stats, pure=False)(b) for b in blocks])
    _raise_bad(stats)
    n_pos = sum(s["wnnz"] for s in stats)  # NaN and weights < 0 were refused above
    check_weight_total(n_pos)
    check_enough_points(K, n_pos, name)
    wblock = np.array([s["wsum"] for s in stats])
    tol_abs = lloyd_tolerance(tol, _merge_stats(stats, d)) if tol > 0 else 0.0

    def start():
        if init_arr is not None:
            return init_arr.copy()
        return _v.to_dtype(_kmeans_parallel(blocks, wblock, K, rng, float(oversampling_factor) * K, int(init_rounds),
                                            rep, name), dtype)

    C, labels, inertia, n_iter, converged = best_of_inits(
        n_init, rep, start, lambda C0: _lloyd(blocks, C0, dtype, int(max_iter), tol_abs, empty, rep))
    lab = da.concatenate([da.from_delayed(delayed(_labels_of, pure=True)(o), (int(c),), np.int64)
                          for o, c in zip(labels, X.chunks[0], strict=True)])
    return KMeansResult(C, lab, inertia, n_iter, converged)


