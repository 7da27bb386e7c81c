"""The rules of k-means that do not depend on where the data are: the argument checks
(``labels`` of :func:`fastrbf.lloyd_update` too), the partial update slots, Lloyd's
centre update and stopping test, and the empty-cluster relocation of gathered
candidates.  :func:`fastrbf.kmeans` (in memory) and :func:`fastrbf.dask.kmeans` both
call them; only their passes over the data differ.

Decisions:

- One argument check for both backends, with the in-memory types of error: a
  ``TypeError`` for a value of the wrong type, a ``ValueError`` for a bad value
  (the scalar checkers of :mod:`fastrbf._validation`).
- One rule for ``sample_weight`` (:func:`weight_array`, :func:`weight_problem`,
  :func:`check_weight_total`): dask applies :func:`weight_problem` to each row block
  with the block's global offset, so a NaN weight is reported at the same index, in
  the same words, as in memory.
- The stopping test (:func:`lloyd_stop`) and the centre update
  (:func:`lloyd_centers`) have numba twins (``fastrbf._jit.cluster.lloyd.centre_step``, in
  ``lloyd_small``, which runs the whole loop of a small problem in one compiled call,
  and in the compiled bounded loop of :mod:`fastrbf._jit.cluster.bounded_fit`): the same formula
  (stop when no label changed; else when the summed squared float64 centre shift is
  <= ``tol_abs``), summed in index order there and by NumPy's pairwise sum here, so
  the two can differ only when the shift ties ``tol_abs`` to the last bit.
- The partial update slots (:func:`partial_slots`, :func:`reduce_slots`: one (sum,
  weight) slot per ``UPDATE_CHUNK`` rows, added in chunk order) are the layout both
  backends fill; they live here, beside the update that reads them, which keeps
  :mod:`fastrbf.cluster` within its size.
- The relocation rule of empty clusters is ``fastrbf._jit.cluster.lloyd.relocate_empty`` on
  all rows (in memory); :func:`relocate_candidates` is its twin on the farthest
  candidates gathered from row blocks with the global cluster counts (dask), which is
  all the rule can reach: the same visiting order, eligibility and sums.
"""

import numpy as np

from .. import _threads
from .. import _validation as _v
from .._jit.cluster import lloyd as _jl

#: the values of ``empty``
EMPTY_RULES = ("relocate", "raise")
#: the values of ``algorithm``
ALGORITHMS = ("auto", "lloyd", "bounded")


def check_n_clusters(n_clusters, n, name="n_clusters"):
    """An int in ``[1, n]``; the messages name ``name`` (the type and the range are
    stated apart: "an int", "in [1, n_samples] = [1, n]")."""
    if not _v.is_int(n_clusters):
        raise TypeError(f"`{name}` must be an int; got {n_clusters!r}.")
    # as a Python int: the message shows 5, never np.int64(5)
    return _v.check_int(int(n_clusters), name, 1, n, text=f"in [1, n_samples] = [1, {n}]")


def check_centers(centers, d, name="centers"):
    """Finite real 2-D centres with ``d`` features (not yet converted)."""
    C = _v.check_data(centers, name)
    if C.shape[1] != d:
        raise ValueError(f"`{name}` must have the same number of features as `X` ({d}); got {C.shape[1]} (shape {C.shape}).")
    return C


def check_lloyd_args(n_init, max_iter, tol, empty):
    """``n_init`` and ``max_iter`` ints >= 1, ``tol`` a finite number >= 0, ``empty`` one
    of :data:`EMPTY_RULES`; returns ``tol`` as a float."""
    _v.check_int(n_init, "n_init", 1)
    _v.check_int(max_iter, "max_iter", 1)
    tol = _v.check_real(tol, "tol", low=0)
    _v.check_choice(empty, "empty", EMPTY_RULES, text="'relocate' or 'raise'")
    return tol


def check_algorithm(algorithm):
    """One of :data:`ALGORITHMS`."""
    return _v.check_choice(algorithm, "algorithm", ALGORITHMS, text="'auto', 'lloyd' or 'bounded'")


def check_init(init, K, d, dtype, n_init, methods, name="n_clusters"):
    """The initial centres as an array of ``dtype`` (K, d), or None for a method named
    in ``methods``; an array needs ``n_init == 1``.  ``init`` is checked data when it is
    not a string."""
    if isinstance(init, str):
        allowed = ", ".join(repr(m) for m in methods)
        _v.check_choice(init, "init", methods, text=f"{allowed} or an array of shape ({K}, {d})")
        return None
    C = check_centers(init, d, "init")
    if C.shape[0] != K:
        raise ValueError(f"`init` must have shape ({K}, {d}) ({name}, n_features); got {C.shape}.")
    if n_init != 1:
        raise ValueError(f"`n_init` must be 1 when `init` is an array; got {n_init}.")
    return _v.to_dtype(C, dtype)


def weight_array(sample_weight, n):
    """In-memory ``sample_weight`` as a 1-D real array (not yet converted) of one value
    per row of ``X`` (``n``)."""
    w = _v.as_array(sample_weight, "sample_weight", ndim=1)
    if w.shape[0] != n:
        raise ValueError(f"`sample_weight` must have one value per row of `X` ({n}); got shape {w.shape}.")
    return w


def weight_problem(w, offset=0):
    """The message of the first rule that the sample weights ``w`` break (NaN/inf first,
    its index counted from ``offset``, the global row of a block's first row; then a
    value < 0), or None.  One rule for the whole array (in memory) and for each row
    block (dask), so the two backends refuse the same weights with the same words."""
    bad = ~np.isfinite(w)
    if bad.any():
        i = int(np.argmax(bad))
        return f"`sample_weight` must contain only finite values; got {float(w[i])!r} at index {i + int(offset)}."
    if np.any(w < 0):
        return f"`sample_weight` must be >= 0; got {float(w[w < 0][0])!r}."
    return None


def check_weight_total(n_pos):
    """At least one weight > 0 (``n_pos`` of them, counted once :func:`weight_problem`
    found none < 0)."""
    if n_pos == 0:
        raise ValueError("`sample_weight` must have at least one value > 0; got all zeros.")


def check_labels(labels, n, n_clusters):
    """``labels`` of the ``n`` rows of ``X``: integers in ``[0, n_clusters)``, as a
    C-contiguous int64 array."""
    lab = _v.as_array(labels, "labels", ndim=1)
    if lab.dtype.kind not in "iu":
        raise TypeError(f"`labels` must be an array of integers; got dtype {lab.dtype}.")
    if lab.shape[0] != n:
        raise ValueError(f"`labels` must have one value per row of `X` ({n}); got shape {lab.shape}.")
    if lab.min() < 0 or lab.max() >= n_clusters:
        bad = lab[(lab < 0) | (lab >= n_clusters)][0]
        raise ValueError(f"`labels` must be in [0, n_clusters) = [0, {n_clusters}); got {int(bad)}.")
    return np.ascontiguousarray(lab, dtype=np.int64)


def check_weights(sample_weight, n):
    """In-memory ``sample_weight`` checked by the rules above, as a C-contiguous float64
    array (ones when None)."""
    if sample_weight is None:
        return np.ones(n, dtype=np.float64)
    w = weight_array(sample_weight, n)
    problem = weight_problem(w)
    if problem is not None:
        raise ValueError(problem)
    check_weight_total(int(np.count_nonzero(w)))
    return np.ascontiguousarray(w, dtype=np.float64)


def check_enough_points(K, n_pos, name="n_clusters"):
    """At least ``K`` points of weight > 0 (``n_pos`` of them)."""
    if n_pos < K:
        raise ValueError(f"`{name}` ({K}) must not exceed the number of points with weight > 0 ({n_pos}).")


def lloyd_tolerance(tol, variances):
    """The absolute tolerance on the summed squared centre shift: ``tol`` times the mean
    of the column variances of the data (scikit-learn's scaling); 0 for ``tol = 0``."""
    return float(tol) * float(np.mean(variances)) if tol > 0 else 0.0


def transposed(X, n_threads):
    """``X.T`` as a C-contiguous copy (the rows as columns: the layout of the direct
    assignment and of the seeding passes), made on fastrbf's threads; NumPy's copy runs
    on one thread (210 ms for 1e6 x 32 float32)."""
    Xt = np.empty((X.shape[1], X.shape[0]), dtype=X.dtype)
    nt = _threads.for_work(8 * X.size, n_threads)  # a copy: a few flops' worth per entry
    _threads.map_ranges(lambda lo, hi: _jl.transpose_rows(X, lo, hi, Xt), X.shape[0], nt, _jl.TB)
    return Xt


def partial_slots(X, K):
    """Empty partial update slots (sums, weights) of X's chunks of ``UPDATE_CHUNK`` rows."""
    n, d = X.shape
    nch = (n + _jl.UPDATE_CHUNK - 1) // _jl.UPDATE_CHUNK
    return np.empty((nch, K, d), dtype=np.float64), np.empty((nch, K), dtype=np.float64)


def reduce_slots(part, partw):
    """(cluster sums, cluster weights): the partial slots added in chunk order."""
    sums = np.empty(part.shape[1:], dtype=np.float64)
    wsum = np.empty(part.shape[1], dtype=np.float64)
    _jl.reduce_partials(part, partw, sums, wsum)
    return sums, wsum


def lloyd_centers(sums, wsum, C, dtype):
    """Lloyd's update from the cluster sums and weights: (new centres in ``dtype``, the
    summed squared float64 shift from ``C``, whether any centre moved)."""
    C_new = (sums / wsum[:, None]).astype(dtype, copy=False)
    shift = float(((C_new.astype(np.float64) - C) ** 2).sum())
    return C_new, shift, not np.array_equal(C_new, C)


def lloyd_stop(labels_same, shift, tol_abs):
    """Lloyd's stopping test after an update: (stop, strict).  Strict when no label
    changed (``labels_same``); else it stops when ``shift <= tol_abs``."""
    if labels_same:
        return True, True
    return shift <= tol_abs, False


def best_of_inits(n_init, rep, start, lloyd, reported=float):
    """The ``n_init`` runs of k-means, shared by every backend: run ``r`` starts from
    ``start()`` and ends as ``lloyd(C0) -> (C, labels, inertia, n_iter, converged)``,
    reported to ``rep`` (its inertia as ``reported(inertia)`` says, in the data's
    units); the run of the lowest inertia is kept (the first among equals).

    Examples
    --------
    >>> from fastrbf import _progress
    >>> runs = iter([(None, None, 3.0, 5, True), (None, None, 2.0, 7, True), (None, None, 2.0, 9, True)])
    >>> best_of_inits(3, _progress.OFF, lambda: None, lambda C0: next(runs))[3]
    7
    """
    best = None
    rep.runs(n_init)
    for run in range(n_init):
        rep.run(run + 1)
        res = lloyd(start())
        rep.finish(res[3], converged=res[4], inertia=reported(res[2]))
        if best is None or res[2] < best[2]:
            best = res
    assert best is not None
    return best


def relocation_moves(mind, w, labels, counts, wsum):
    """The empty-cluster rule's moves: each empty cluster (``wsum == 0``, in index order)
    takes, in order of decreasing ``mind`` (ties: the lower position), a point with weight
    > 0 that is not the only point of its cluster.  Yields ``(i, its cluster, the empty
    one)``; ``counts`` and ``wsum`` are updated in place before each yield.  Shared by
    :func:`relocate_candidates` and kernel k-means (which moves no sums of rows)."""
    K = wsum.shape[0]
    e = 0
    for i in np.argsort(-mind, kind="mergesort"):
        while e < K and wsum[e] != 0:
            e += 1
        if e == K:
            return
        cur = labels[i]
        if counts[cur] <= 1 or w[i] == 0:
            continue
        wsum[cur] -= w[i]
        wsum[e] = w[i]
        counts[cur] -= 1
        counts[e] = 1
        yield int(i), int(cur), e


def relocate_candidates(mind, X, w, labels, old, counts, sums, wsum):
    """Move points to the empty clusters (``wsum == 0``), as ``relocate_empty`` does on
    all rows, among gathered candidates: ``mind`` their distances to their centres (in
    gathering order, which breaks ties), ``X`` (float64), ``w`` and ``labels`` theirs,
    ``old`` their labels of the previous iteration (-1: none), ``counts`` the global
    point counts of the clusters.  Each empty cluster (in index order) takes, in order
    of decreasing distance (ties: gathering order), a candidate with weight > 0 that is
    not the only point of its cluster (:func:`relocation_moves`); the sums move with its
    weight.  ``sums`` and ``wsum`` are updated in place.  Returns (the moved candidates,
    their new labels, the change in the number of labels that differ from ``old``)."""
    moved: list[int] = []
    new: list[int] = []
    delta = 0
    for i, cur, e in relocation_moves(mind, w, labels, counts.copy(), wsum):
        wx = w[i] * X[i]
        sums[cur] -= wx
        sums[e] = wx
        moved.append(i)
        new.append(e)
        delta += int(e != old[i]) - int(cur != old[i])
    return np.array(moved, dtype=np.int64), np.array(new, dtype=np.int64), delta
