"""Scale-out on dask arrays: fastrbf's kernels run blockwise, the small reductions
come back to the client.  Optional extra: ``pip install "fastrbf[dask]"``; ``import
fastrbf`` never imports dask.

dask is the engine: every function builds a dask graph of fastrbf's in-memory
functions on row blocks and runs it through the current scheduler (an active
``distributed.Client``, or whatever ``dask.config`` says: threads, processes,
synchronous).  Nothing here schedules, sends or stores data by itself.

Decisions:

- **Input.**  ``X`` is a 2-D dask array chunked by rows only (one chunk along the
  features: otherwise a ``ValueError`` naming ``X`` that says how to rechunk), with
  known chunk sizes (``nan`` chunks are a ``ValueError``: call
  ``X.compute_chunk_sizes()``; computing them would run tasks).  A NumPy ``X`` is
  accepted and becomes one block.  Row-aligned inputs (``Y`` of ``rbf_network``,
  ``sample_weight``) must have the same row chunks as ``X`` (a ``ValueError`` naming
  them; no silent rechunking), or be NumPy arrays, which are cut like ``X``.
  Small inputs (centres, ``V`` of ``gram_matvec``, weights of models) are in-memory
  arrays shipped with the graph.  The dtype rules are the in-memory ones (float32 kept,
  integers become float64, complex is a ``TypeError``).  All of this, and feature counts
  of centres and models, is checked before any task runs.
- **NaN/inf** can only be seen in the data: lazy functions (``sqdist``, ``gram``,
  ``gram_matvec``, ``lloyd_assign``, ``predict``) raise the in-memory ``ValueError``
  from inside the block's task (dask re-raises it at ``compute``); ``kmeans``,
  ``rbf_network`` and ``kernel_ridge`` raise it from their first pass over the data.
  Every such message names the argument the caller passed (``X`` for both sides of
  ``sqdist(X)`` and ``gram(X)``) and gives the global row index, not the row within
  the block.
- **Seeds** (``kmeans``, ``rbf_network``, ``kernel_ridge``): None, an int >= 0 or a
  ``numpy.random.Generator`` (fastrbf's one rule), checked before any task runs.
- **Threads.**  Every task calls fastrbf with ``n_threads=1`` by default: one numba
  thread per dask thread, so a worker with ``t`` threads runs ``t`` kernels at once and
  never oversubscribes (``distributed``'s nannies also start workers with one BLAS
  thread).  Pass ``n_threads`` to give each task more.
- **kmeans.**  The run prepares each block once (converted copy and the float32
  centred copy of the in-memory assigner) and persists it for the run; persist ``X``
  yourself when it is used again (several runs, ``rbf_network`` after ``kmeans``).  A
  prepared block stays on the worker that holds the block of ``X`` (it reports its size
  to dask, so the scheduler does not ship it around to balance load): spread the
  blocks of ``X`` evenly over the workers.  Each
  Lloyd iteration is one graph: per block the labels (persisted: they are compared with
  the next iteration's) and (float64 sums, weights, changed labels), tree-reduced and
  computed on the client, where the centres are updated.  The stopping, tolerance and
  empty-cluster rules are those of :func:`fastrbf.kmeans` (relocation gathers the
  farthest candidates of each block), so from the same initial centres the centres
  agree to rounding (the sums are added in a different order), with the same labels
  and ``n_iter``.  Deterministic for a given chunking: a worker lost mid-run changes
  nothing (dask recomputes the lost blocks from their graph).
- **k-means||** (Bahmani et al. 2012): a first centre drawn with probability
  proportional to ``sample_weight``, then ``init_rounds`` rounds that keep each point
  independently with probability ``min(1, l w d^2 / phi)`` (``l = oversampling_factor *
  n_clusters``, one seeded generator per block and round), then the candidates are
  weighted by the weight of the points nearest to them and reclustered on the client by
  the in-memory weighted k-means++ and Lloyd.
- **rbf_network**: per block the R factor of ``[Phi 1 T]`` by the in-memory TSQR
  (:func:`fastrbf.models._tsqr`), the factors folded pairwise by the same LAPACK
  ``tpqrt`` in a tree, then the in-memory solve from R on the client: weights equal to
  the in-memory fit to rounding.
- **kernel_ridge** (``solver="nystrom-pcg"`` only): the float64 blocks are persisted for
  the run; ``K_nm^T Y`` and, at each conjugate-gradient iteration, ``K_nm^T K_nm V`` are
  one map-reduce of :mod:`fastrbf._nystrom`'s fused per-block passes; Falkon's
  preconditioner and the CG run on the client (:func:`fastrbf._nystrom.falkon_solve`).
  The landmarks are drawn with the in-memory random draws, so the model equals the
  in-memory one to the rounding the CG propagates.
- **Progress.**  The fits (``kmeans``, ``rbf_network``, ``kernel_ridge``) take
  ``progress`` as in memory (see :mod:`fastrbf._progress`): each iteration of their
  loop on the client (a Lloyd iteration, a k-means|| round, a CG iteration: one dask
  compute each) is reported, with an ETA from the iterations done against
  ``max_iter``.  The lazy functions (``sqdist``, ``gram``, ``gram_matvec``,
  ``lloyd_assign``, ``predict``, ``decision_function``) return dask arrays and report
  nothing: watch their ``compute`` with dask's ``dask.diagnostics.ProgressBar`` (local
  schedulers) or the dashboard of a ``distributed.Client``.
"""

import numbers
from typing import Any, cast

try:
    import dask
    import dask.array as da
    from dask import delayed
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without dask
    raise ImportError(
        'fastrbf.dask needs dask and distributed: pip install "fastrbf[dask]"'
    ) from exc

import numpy as np
from numpy.typing import ArrayLike

from . import _progress
from . import _validation as _v
from . import cluster as _cl
from . import models as _m
from ._kmeans_rules import (
    check_centers,
    check_enough_points,
    check_init,
    check_lloyd_args,
    check_n_clusters,
    lloyd_centers,
    lloyd_stop,
    lloyd_tolerance,
    relocate_candidates,
)
from ._progress import ProgressArg
from .cluster import Assigner, KMeansResult, partial_slots, raise_empty, reduce_slots
from .distances import _consts
from .distances import sqdist as _sqdist
from .kernels import _check_kernel
from .kernels import _check_params as _kernel_params
from .kernels import gram as _gram
from .kernels import gram_matvec as _gram_matvec
from .models import common as _mc
from .models import falkon as _nystrom
from .models import network as _mn
from .models import ridge as _mr

#: a dask array, or an in-memory array (one block)
Data = da.Array | ArrayLike

__all__ = ["decision_function", "gram", "gram_matvec", "kernel_ridge", "kmeans", "lloyd_assign", "predict",
           "rbf_network", "sqdist"]

#: blocks combined per node of the tree reductions
SPLIT_EVERY = 8

#: called on the client after each Lloyd iteration with the iteration number (tests)
_iteration_callback = None


# ---------------------------------------------------------------- validation
def _is_dask(x):
    return isinstance(x, da.Array)


def _check_kind(dtype, name):
    if np.dtype(dtype).kind not in "biuf":
        raise TypeError(f"`{name}` must be an array of real numbers; got dtype {dtype}.")


def _rows(X, name="X", ndim=2) -> da.Array:
    """``X`` as a dask array chunked by rows (NumPy: validated now, one block)."""
    if not _is_dask(X):
        arr = _v.as_array(X, name, ndim=ndim)
        _v.check_finite(arr, name)
        return da.from_array(arr, chunks=arr.shape)
    _check_kind(X.dtype, name)
    if X.ndim != ndim:
        shape_txt = "(n_samples, n_features)" if ndim == 2 else "(n,)"
        raise ValueError(f"`{name}` must be a {ndim}-D array of shape {shape_txt}; got shape {X.shape}.")
    if any(np.isnan(c) for cs in X.chunks for c in cs):
        raise ValueError(f"`{name}` has unknown chunk sizes (nan); call `{name}.compute_chunk_sizes()` first.")
    if X.size == 0:
        raise ValueError(f"`{name}` must not be empty; got shape {X.shape}.")
    if ndim == 2 and len(X.chunks[1]) != 1:
        raise ValueError(f"`{name}` must be chunked by rows only (one chunk along the features); got "
                         f"chunks {X.chunks[1]} along axis 1: use `{name}.rechunk({{1: -1}})`.")
    return X


def _aligned(Y, X, name, ndims=(1, 2)) -> da.Array:
    """A row-aligned companion of ``X``: same row chunks (NumPy: cut like ``X``)."""
    if not _is_dask(Y):
        arr = _asarray(Y, name)
        if arr.ndim not in ndims:
            raise ValueError(f"`{name}` must be a {' or '.join(f'{d}-D' for d in ndims)} array; got shape {arr.shape}.")
        if arr.shape[0] != X.shape[0]:
            raise ValueError(f"`{name}` must have one row per row of `X` ({X.shape[0]}); got shape {arr.shape}.")
        return da.from_array(arr, chunks=(X.chunks[0], *arr.shape[1:]))
    if Y.ndim not in ndims:
        raise ValueError(f"`{name}` must be a {' or '.join(f'{d}-D' for d in ndims)} array; got shape {Y.shape}.")
    if Y.shape[0] != X.shape[0]:
        raise ValueError(f"`{name}` must have one row per row of `X` ({X.shape[0]}); got shape {Y.shape}.")
    if Y.chunks[0] != X.chunks[0]:
        raise ValueError(f"`{name}` must have the same row chunks as `X`; got {Y.chunks[0]} and {X.chunks[0]}: "
                         f"rechunk one of them (e.g. `{name}.rechunk({{0: X.chunks[0]}})`).")
    if Y.ndim == 2 and len(Y.chunks[1]) != 1:
        Y = Y.rechunk({1: -1})  # columns of targets are few
    return Y


def _asarray(Y, name):
    """An in-memory ``Y`` as an ndarray (any dtype: class labels too)."""
    try:
        return np.asarray(Y)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"`{name}` must be array-like; could not convert it: {exc}") from None


def _dtype(*dtypes):
    return _v.result_dtype(*(np.empty(0, dtype=t) for t in dtypes))


def _check_threads(n_threads):
    if n_threads is None:
        return None
    if isinstance(n_threads, (bool, np.bool_)) or not isinstance(n_threads, numbers.Integral):
        raise TypeError(f"`n_threads` must be a nonzero int or None; got {n_threads!r}.")
    if n_threads == 0:
        raise ValueError(f"`n_threads` must be a nonzero int or None; got {n_threads!r}.")
    return int(n_threads)


def _check_params(spec, degree, coef0):
    """The in-memory kernel-parameter check, with a ``TypeError`` naming ``coef0`` for a
    value that is not a number."""
    if isinstance(coef0, (bool, np.bool_)) or not isinstance(coef0, numbers.Real):
        raise TypeError(f"`coef0` must be a finite number; got {coef0!r}.")
    return _kernel_params(spec, degree, coef0)


def _check_gamma_dtype(g, dtype):
    """float32 results compute with a float32 ``gamma``: refuse widths that round to 0 or
    inf there (inf * 0 would give NaN at zero distance)."""
    if dtype == np.float32:
        fi = np.finfo(np.float32)
        bad = g[(g > fi.max) | (g < fi.tiny)]
        if bad.size:
            raise ValueError(f"`gamma` must be within the float32 range [{fi.tiny:.3g}, {fi.max:.3g}] for float32 "
                             f"data; got {float(bad[0])!r}.")


def _row_index(X):
    """The global row numbers of ``X``, chunked like its rows: a task takes the offset
    of its block from it (the first entry)."""
    return da.arange(X.shape[0], chunks=(X.chunks[0],), dtype=np.int64)


def _raise_global(exc, *blocks):
    """Re-raise the non-finite-value error ``exc`` of a task with the global row index:
    ``blocks`` are the task's (data block, offset of its first row, argument name);
    the first block with a NaN/inf is reported.  Any other error is re-raised as is."""
    for arr, offset, name in blocks:
        a = np.asarray(arr)
        if a.dtype.kind == "f":
            found = _v.find_non_finite(a, offset)
            if found is not None:
                raise _v.non_finite_error(name, found, "in this block") from None
    raise exc


def _small(Y, name):
    """An in-memory (shipped to every task) 2-D array: centres, ``Y`` of gram_matvec."""
    if _is_dask(Y):
        raise TypeError(f"`{name}` must be an in-memory array here (it is shipped to every block); got a dask "
                        f"array: call `{name}.compute()` first.")
    return _v.check_data(Y, name)


def _offsets(X):
    return np.r_[0, np.cumsum(X.chunks[0])].astype(np.int64)


def _tree(parts, combine, first=None):
    """Tree reduction of a list of Delayed with ``combine(*group)`` (groups in order);
    ``first`` combines the leaves (and is applied to a single leaf too)."""
    parts = list(parts)
    if first is not None:
        parts = [delayed(first, pure=False)(*parts[i : i + SPLIT_EVERY]) for i in range(0, len(parts), SPLIT_EVERY)]
    while len(parts) > 1:
        parts = [delayed(combine, pure=False)(*parts[i : i + SPLIT_EVERY]) if len(parts[i : i + SPLIT_EVERY]) > 1
                 else parts[i] for i in range(0, len(parts), SPLIT_EVERY)]
    return parts[0]


def _blocks(X):
    return list(X.to_delayed().ravel())


# ---------------------------------------------------------------- blockwise functions
def _pair_blocks(X, Y, name_y="Y") -> tuple[da.Array, da.Array]:
    """(X, Y as dask arrays, Y is None?) for the n x m functions."""
    X = _rows(X)
    if Y is None:
        return X, X
    Yd = _rows(Y, name_y)
    if Yd.shape[1] != X.shape[1]:
        raise ValueError(f"`{name_y}` must have the same number of features as `X` ({X.shape[1]}); "
                         f"got {Yd.shape[1]} (shape {Yd.shape}).")
    return X, Yd


def sqdist(X: Data, Y: Data | None = None, *, n_threads: int | None = 1) -> da.Array:
    """Squared Euclidean distances of the rows of a dask array, blockwise.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
    Y : dask.array.Array or array_like of shape (m, d), optional
        Defaults to ``X``.  A dask ``Y`` gives one block per pair of row blocks; a NumPy
        ``Y`` is one block shipped to every task.
    n_threads : int, default 1
        Threads of each task (one numba thread per dask thread).

    Returns
    -------
    dask.array.Array of shape (n, m)
        Lazy; each block is :func:`fastrbf.sqdist` of two row blocks (the accuracy
        guarantees of the in-memory function hold; with ``Y=None`` the diagonal is
        exactly 0).

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from fastrbf import dask as fd
    >>> X = da.from_array(np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]), chunks=(2, 2))
    >>> fd.sqdist(X).compute(scheduler="threads")
    array([[  0.,  25., 100.],
           [ 25.,   0.,  25.],
           [100.,  25.,   0.]])
    """
    nt = _check_threads(n_threads)
    X, Yd = _pair_blocks(X, Y)
    dtype = _dtype(X.dtype, Yd.dtype)
    return da.blockwise(_sqdist_block, "ij", X, "ik", Yd, "jk", _row_index(X), "i", _row_index(Yd), "j", dtype=dtype,
                        meta=np.empty((0, 0), dtype), concatenate=True, name_y="X" if Y is None else "Y",
                        n_threads=nt)


def _sqdist_block(Xb, Yb, rx, ry, name_y, n_threads):
    try:
        return _sqdist(Xb, Yb, n_threads=n_threads)
    except ValueError as exc:
        _raise_global(exc, (Xb, rx[0], "X"), (Yb, ry[0], name_y))
        raise  # not reached


def gram(X: Data, Y: Data | None = None, *, kernel: str = "gaussian", gamma: ArrayLike = 1.0, degree: int = 3,
         coef0: float = 1.0, n_threads: int | None = 1) -> da.Array:
    """Kernel matrix ``K[i, j] = k(X[i], Y[j])`` of dask arrays, blockwise.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
    Y : dask.array.Array or array_like of shape (m, d), optional
        Defaults to ``X``.
    kernel, gamma, degree, coef0 :
        As in :func:`fastrbf.gram`; a per-column ``gamma`` (length m) is cut like the
        columns.  With float32 data ``gamma`` must lie within float32's range.
    n_threads : int, default 1

    Returns
    -------
    dask.array.Array of shape (n, m)

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from fastrbf import dask as fd
    >>> X = da.from_array(np.array([[0.0], [1.0], [3.0]]), chunks=(2, 1))
    >>> fd.gram(X, gamma=0.5).compute(scheduler="threads").round(4)
    array([[1.    , 0.6065, 0.0111],
           [0.6065, 1.    , 0.1353],
           [0.0111, 0.1353, 1.    ]])
    """
    nt = _check_threads(n_threads)
    spec = _check_kernel(kernel)
    deg, c0 = _check_params(spec, degree, coef0)
    X, Yd = _pair_blocks(X, Y)
    dtype = _dtype(X.dtype, Yd.dtype)
    g, _ = _v.check_gamma(gamma, Yd.shape[0], np.float64)
    _check_gamma_dtype(g, dtype)
    gd = da.from_array(g, chunks=(Yd.chunks[0],))
    return da.blockwise(_gram_block, "ij", X, "ik", Yd, "jk", gd, "j", _row_index(X), "i", _row_index(Yd), "j",
                        dtype=dtype, meta=np.empty((0, 0), dtype), concatenate=True, name_y="X" if Y is None else "Y",
                        kernel=kernel, degree=deg, coef0=c0, n_threads=nt)


def _gram_block(Xb, Yb, g, rx, ry, name_y, kernel, degree, coef0, n_threads):
    gam = g[0] if np.all(g == g[0]) else g
    try:
        return _gram(Xb, Yb, kernel=kernel, gamma=gam, degree=degree, coef0=coef0, n_threads=n_threads)
    except ValueError as exc:
        _raise_global(exc, (Xb, rx[0], "X"), (Yb, ry[0], name_y))
        raise  # not reached


def gram_matvec(X: Data, Y: ArrayLike, V: ArrayLike, *, kernel: str = "gaussian", gamma: ArrayLike = 1.0,
                degree: int = 3, coef0: float = 1.0, n_threads: int | None = 1) -> da.Array:
    """``K(X, Y) @ V`` for a dask ``X``, blockwise and fused (no block of K is held).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
    Y : array_like of shape (m, d)
        In memory (shipped to every task), as ``V``.
    V : array_like of shape (m,) or (m, k)
    kernel, gamma, degree, coef0 :
        As in :func:`fastrbf.gram_matvec` (float32 data: ``gamma`` within float32's range).
    n_threads : int, default 1

    Returns
    -------
    dask.array.Array of shape (n,) or (n, k), chunked like ``X``

    Examples
    --------
    >>> import numpy as np, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> rng = np.random.default_rng(0)
    >>> X, Y, v = rng.random((6, 2)), rng.random((3, 2)), rng.random(3)
    >>> out = fd.gram_matvec(da.from_array(X, chunks=(4, 2)), Y, v, gamma=2.0)
    >>> bool(np.allclose(out.compute(scheduler="threads"), fastrbf.gram_matvec(X, Y, v, gamma=2.0)))
    True
    """
    nt = _check_threads(n_threads)
    spec = _check_kernel(kernel)
    deg, c0 = _check_params(spec, degree, coef0)
    X = _rows(X)
    Ya = _small(Y, "Y")
    _v.check_features(np.empty((0, X.shape[1])), Ya)
    if _is_dask(V):
        raise TypeError("`V` must be an in-memory array here; got a dask array: call `V.compute()` first.")
    Va = _v.as_array(V, "V", ndim=np.ndim(V) if np.ndim(V) in (1, 2) else 2)
    _v.check_finite(Va, "V")
    if Va.shape[0] != Ya.shape[0]:
        raise ValueError(f"`V` must have one row per row of `Y` ({Ya.shape[0]}); got shape {Va.shape}.")
    dtype = _dtype(X.dtype, Ya.dtype, Va.dtype)
    g, scalar = _v.check_gamma(gamma, Ya.shape[0], np.float64)
    _check_gamma_dtype(g, dtype)
    gam = float(g[0]) if scalar else g
    kw = {"kernel": kernel, "gamma": gam, "degree": deg, "coef0": c0, "n_threads": nt}
    if Va.ndim == 1:
        return da.map_blocks(_matvec_block, X, Ya, Va, kw, dtype=dtype, drop_axis=1, meta=np.empty((0,), dtype))
    return da.map_blocks(_matvec_block, X, Ya, Va, kw, dtype=dtype, chunks=(X.chunks[0], (Va.shape[1],)),
                         meta=np.empty((0, 0), dtype))


def _matvec_block(Xb, Y, V, kw, block_info=None):
    try:
        return _gram_matvec(Xb, Y, V, **kw)
    except ValueError as exc:
        _raise_global(exc, (Xb, _block_offset(block_info), "X"))
        raise  # not reached


def _block_offset(block_info):
    """First global row of the block of the first array argument of a ``map_blocks`` task."""
    return block_info[0]["array-location"][0][0]


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
    nt = _check_threads(n_threads)
    X = _rows(X)
    C = check_centers(_small(centers, "centers"), X.shape[1])
    dtype = _dtype(X.dtype, C.dtype)
    return da.apply_gufunc(_assign_block, "(d),()->(),()", X, _row_index(X), C=C, n_threads=nt,
                           meta=(np.empty((0,), np.int64), np.empty((0,), dtype)))


def _assign_block(Xb, rows, C, n_threads):
    try:
        return _cl.lloyd_assign(Xb, C, n_threads=n_threads)
    except ValueError as exc:
        _raise_global(exc, (Xb, rows[0], "X"))
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
                      "wbad": None, "wneg": None, "wsum": float(self.w.sum()) if wb is not None else float(n),
                      "wnnz": int(np.count_nonzero(self.w))}
        wbad = ~np.isfinite(self.w)
        if wbad.any():
            i = int(np.argmax(wbad))
            self.stats["wbad"] = (i + self.offset, float(self.w[i]))
        elif np.any(self.w < 0):
            self.stats["wneg"] = float(self.w[self.w < 0][0])
        self._assigner = None
        if self.stats["nbad"] or self.stats["wbad"] or self.stats["wneg"] is not None:
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
        if s["wbad"] is not None:
            raise ValueError(f"`sample_weight` must contain only finite values; got {s['wbad'][1]!r} "
                             f"at index {s['wbad'][0]}.")
        if s["wneg"] is not None:
            raise ValueError(f"`sample_weight` must be >= 0; got {s['wneg']!r}.")


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
    return _add(*(o[1] for o in outs))


def _add(*parts):
    out = [np.array(p, copy=True) if isinstance(p, np.ndarray) else p for p in parts[0]]
    for p in parts[1:]:
        for i, v in enumerate(p):
            out[i] = out[i] + v
    return tuple(out)


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
    if K * X.shape[1] <= _cl.DIRECT_MAX_KD[X.dtype]:  # as in-memory: distances from the assignment
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
    """:func:`fastrbf._kmeans_rules.relocate_candidates` on the candidates gathered from
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
        *labels, total = dask.persist(*outs, _tree(outs, _add, first=_add_outs))
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
    *labels, total = dask.persist(*outs, _tree(outs, _add, first=_add_outs))
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


def _kmeans_parallel(blocks, wblock, K, rng, ell, rounds, rep=_progress.OFF):
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
        *mind, total = dask.persist(*outs, _tree(outs, _add, first=_add_outs))
        phi = float(total.compute()[0])
        allc = np.concatenate(cands)
        if r >= rounds or phi == 0:
            wc = np.sum(dask.compute(*[delayed(_cand_weights, pure=False)(blk, delayed(allc)) for blk in blocks]),
                        axis=(0, 1))
            keep = wc > 0
            if np.count_nonzero(keep) >= K:
                break
            if phi == 0 or r >= 4 * rounds + 10:
                raise ValueError(f"`X` has fewer distinct points (with weight > 0) than `n_clusters` ({K}); "
                                 f"only {int(np.count_nonzero(keep))} distinct centres could be chosen.")
        if r:  # another round follows (the last one's report is the final one)
            rep.step(r, candidates=allc.shape[0])
        seeds = rng.integers(0, 2**63 - 1, size=nb)
        new = np.concatenate(dask.compute(*[delayed(_sample, pure=False)(blocks[i], mind[i], phi, ell, int(seeds[i]))
                                            for i in range(nb)]))
        cands.append(new)
        r += 1
    rep.finish_stage(r, candidates=allc.shape[0])
    res = _cl.kmeans(allc[keep], K, sample_weight=wc[keep], seed=rng)
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
    nt = _check_threads(n_threads)
    rep = _progress.reporter(progress, "dask.kmeans", runs="init")
    X = _rows(X)
    n, d = X.shape
    K = check_n_clusters(n_clusters, n)
    tol = check_lloyd_args(n_init, max_iter, tol, empty)
    if isinstance(init_rounds, bool) or not isinstance(init_rounds, (int, np.integer)) or init_rounds < 1:
        raise ValueError(f"`init_rounds` must be an int >= 1; got {init_rounds!r}.")
    if (isinstance(oversampling_factor, bool) or not isinstance(oversampling_factor, numbers.Real)
            or not np.isfinite(float(oversampling_factor)) or float(oversampling_factor) <= 0):
        raise ValueError(f"`oversampling_factor` must be a finite number > 0; got {oversampling_factor!r}.")
    dtype = _dtype(X.dtype)
    init_arr = check_init(init if isinstance(init, str) else _small(init, "init"), K, d, dtype, n_init,
                          ("k-means||",))
    if sample_weight is None:
        wblocks = [None] * X.numblocks[0]
    else:
        if not _is_dask(sample_weight):
            w = _v.as_array(sample_weight, "sample_weight", ndim=1)
            if w.shape[0] != n:
                raise ValueError(f"`sample_weight` must have one value per row of `X` ({n}); got shape {w.shape}.")
        else:
            _check_kind(sample_weight.dtype, "sample_weight")
        wblocks = _blocks(_aligned(sample_weight, X, "sample_weight", ndims=(1,)))
    rng = _v.check_seed(seed)
    offs = _offsets(X)
    xb = _blocks(X)
    # -- first pass: prepared blocks (kept for the run) and their statistics
    blocks = dask.persist(*[delayed(_KBlock, pure=False)(xb[i], wblocks[i], offs[i], K, dtype, nt, tol > 0)
                            for i in range(len(xb))])
    stats = dask.compute(*[delayed(_get_stats, pure=False)(b) for b in blocks])
    _raise_bad(stats)
    wblock = np.array([s["wsum"] for s in stats])
    if not np.any(wblock > 0):
        raise ValueError("`sample_weight` must have at least one value > 0; got all zeros.")
    check_enough_points(K, sum(s["wnnz"] for s in stats))
    tol_abs = lloyd_tolerance(tol, _merge_stats(stats, d)) if tol > 0 else 0.0
    best = None
    rep.runs(n_init)
    for run in range(n_init):
        rep.run(run + 1)
        if init_arr is not None:
            C0 = init_arr.copy()
        else:
            C0 = _v.to_dtype(_kmeans_parallel(blocks, wblock, K, rng, float(oversampling_factor) * K,
                                              int(init_rounds), rep), dtype)
        res = _lloyd(blocks, C0, dtype, int(max_iter), tol_abs, empty, rep)
        rep.finish(res[3], converged=res[4], inertia=res[2])
        if best is None or res[2] < best[2]:
            best = res
    assert best is not None
    C, labels, inertia, n_iter, converged = best
    lab = da.concatenate([da.from_delayed(delayed(_labels_of, pure=True)(o), (int(c),), np.int64)
                          for o, c in zip(labels, X.chunks[0], strict=True)])
    return KMeansResult(C, lab, inertia, n_iter, converged)


# ---------------------------------------------------------------- RBF network
def _checked(Xb, offset, name="X"):
    """A 2-D real block whose NaN/inf raise with the global row index."""
    try:
        return _v.check_data(Xb, name)
    except ValueError as exc:
        _raise_global(exc, (Xb, offset, name))
        raise  # not reached


def _checked_targets(Yb, offset, name="Y"):
    """A block of targets whose NaN/inf raise with the global row index."""
    try:
        return _v.check_targets(Yb, np.shape(Yb)[0], name)
    except ValueError as exc:
        _raise_global(exc, (Yb, offset, name))
        raise  # not reached


def _rbf_block(Xb, offset, Yb, C, g, code, dot, consts, deg, classes, n_threads):
    """R factor (upper triangular) of ``[Phi 1 T]`` of one row block."""
    X = _checked(Xb, offset)
    if classes is None:
        T, _ = _mc.as_targets(_checked_targets(Yb, offset))
    else:
        Ya = np.asarray(Yb)
        if Ya.dtype.kind == "f" and not np.all(np.isfinite(Ya)):
            raise ValueError("`Y` must contain only finite values (class labels); got NaN or inf.")
        T = _mc.class_codes(np.searchsorted(classes, Ya), classes.shape[0])
    Xd = _v.to_dtype(X, np.float64)
    return _mn.tsqr(C, Xd, g, code, dot, consts, deg, T, n_threads)


def rbf_network(X: Data, Y: Data, *, gamma: ArrayLike, n_centers: int | None = None, centers: str | ArrayLike = "kmeans",
                alpha: float = 0.0, bias: bool = True, kernel: str = "gaussian", classify: bool = False,
                seed: int | np.random.Generator | None = None, max_iter: int = 300, n_init: int = 1,
                learn_gamma: bool = False, validation: object = None, n_threads: int | None = 1,
                progress: ProgressArg = False) -> _m.RBFNetwork:
    """An RBF network fitted on dask arrays: per-block TSQR factors reduced across workers,
    the small solve on the client.

    Parameters
    ----------
    X : dask.array.Array of shape (N, d), chunked by rows
    Y : dask.array.Array or array_like of shape (N,) or (N, k)
        The same row chunks as ``X``; class labels with ``classify=True``.
    gamma, n_centers, alpha, bias, kernel, classify :
        As in :func:`fastrbf.rbf_network`.
    centers : "kmeans" or array_like of shape (K, d)
        k-means centres of ``X`` by :func:`fastrbf.dask.kmeans` (k-means|| start, so not
        the in-memory k-means++ centres), or given (then the weights equal the in-memory
        fit to rounding).
    seed, max_iter, n_init :
        Passed to :func:`fastrbf.dask.kmeans`.
    learn_gamma, validation :
        Not supported on dask arrays (``NotImplementedError``).
    n_threads : int, default 1
        Threads of each task.
    progress : bool, logging.Logger or callable, default False
        Report the iterations of the k-means (task ``"dask.rbf_network kmeans"``, as
        :func:`kmeans`); the factorisation is one dask compute.

    Returns
    -------
    RBFNetwork
        The in-memory model (small, picklable); :func:`predict` evaluates it on dask
        arrays.

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da
    >>> from fastrbf import dask as fd
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> Xd = da.from_array(X, chunks=(2, 2))
    >>> with dask.config.set(scheduler="threads"):
    ...     net = fd.rbf_network(Xd, np.array([1.0, -1.0, -1.0, 1.0]), gamma=1.0,
    ...                          centers=np.array([[0.0, 0.2], [1.0, 0.7]]))
    >>> print(np.round(net.bias, 3), np.round(net.weights[:, 0], 3))
    [-7.848] [7.397 7.823]
    """
    if learn_gamma or validation is not None:
        raise NotImplementedError("`learn_gamma` and `validation` are not supported on dask arrays: learn the "
                                  "width on an in-memory sample with fastrbf.rbf_network, then fit here with it.")
    nt = _check_threads(n_threads)
    rep = _progress.reporter(progress, "dask.rbf_network")
    spec = _check_kernel(kernel)
    X = _rows(X)
    n, d = X.shape
    if not _is_dask(Y) and not classify:
        Y = _v.check_targets(_asarray(Y, "Y"), n)
    Yd = _aligned(Y, X, "Y", ndims=(1,) if classify else (1, 2))
    if not classify:
        _check_kind(Yd.dtype, "Y")
    if isinstance(centers, str) and centers == "all":
        raise NotImplementedError('`centers="all"` (one centre per training point) is not supported on dask '
                                  "arrays; use k-means centres or given ones.")
    Ca = None if isinstance(centers, str) else _small(centers, "centers")
    K = _mn.check_centers_arg(centers if Ca is None else Ca, n_centers, n, d, choices=("kmeans",))
    C = None if Ca is None else _v.to_dtype(Ca, np.float64)
    if C is None:
        _v.check_seed(seed)  # checked before the k-means runs (which takes `seed` as it is)
    g, _ = _v.check_gamma(gamma, K, np.float64)
    deg, coef0 = _check_params(spec, 3, 1.0)
    a = _mn.check_network_alpha(alpha)
    if C is None:
        assert n_centers is not None
        try:
            # the k-means reports through this fit's reporter (as a part of it)
            km = kmeans(X, n_centers, seed=seed, max_iter=max_iter, n_init=n_init, n_threads=nt,
                        progress=cast(Any, rep))
        except (ValueError, TypeError) as exc:  # the k-means's cluster count is our `n_centers`
            if "`n_clusters`" not in str(exc):
                raise
            raise type(exc)(str(exc).replace("`n_clusters`", "`n_centers`")) from None
        C = _v.to_dtype(km.centers, np.float64)
    classes = None
    if classify:
        classes = np.asarray(da.unique(Yd).compute())
        if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
            raise ValueError("`Y` must contain only finite values (class labels); got NaN or inf.")
        if classes.shape[0] < 2:
            raise ValueError(f"`Y` must have at least 2 classes with `classify=True`; got {classes.shape[0]}.")
        k = 1 if classes.shape[0] == 2 else classes.shape[0]
        single = classes.shape[0] == 2
    else:
        k = 1 if Yd.ndim == 1 else Yd.shape[1]
        single = Yd.ndim == 1
    consts = _consts(np.float64, coef0)
    Cd, gd = delayed(C), delayed(g)
    parts = [delayed(_rbf_block, pure=False)(xb, off, yb, Cd, gd, spec.code, not spec.radial, consts, deg, classes,
                                             nt)
             for xb, off, yb in zip(_blocks(X), _offsets(X)[:-1], _blocks(Yd), strict=True)]
    R = _tree(parts, _mn.fold_factors).compute()
    W, b = _mn.weights_from_factor(R, n, K, k, a, bias, None)
    dtype = _dtype(X.dtype) if classify else _dtype(X.dtype, Yd.dtype)
    return _m.RBFNetwork(C, g, W, b, kernel, classes, dtype, single, None)


# ---------------------------------------------------------------- kernel ridge (Nystroem, PCG)
def _f64_block(Xb, offset):
    """A row block as validated float64 (NaN/inf raise here, inside the task)."""
    return _v.to_dtype(_checked(Xb, offset), np.float64)


def _targets_block(Yb, offset, mu):
    T, _ = _mc.as_targets(_checked_targets(Yb, offset))
    if mu is not None:
        T -= mu
    return T


def _col_sums(Yb, offset):
    T, _ = _mc.as_targets(_checked_targets(Yb, offset))
    return (T.sum(axis=0),)


def _cross_block(Xb, T, L, params):
    return (_nystrom.cross_t(Xb, L, T, **params),)


def _normal_block(Xb, L, V, params):
    return (_nystrom.normal_matvec(Xb, L, V, **params),)


def kernel_ridge(X: Data, Y: Data, *, gamma: float, alpha: float, kernel: str = "gaussian", solver: str = "nystrom-pcg",
                 n_landmarks: int | None = None, landmarks: str | ArrayLike = "uniform", tol: float = 1e-7,
                 max_iter: int = 100, seed: int | np.random.Generator | None = None, fit_intercept: bool = False,
                 degree: int = 3, coef0: float = 1.0, n_threads: int | None = 1,
                 progress: ProgressArg = False) -> _m.KernelModel:
    """Nystroem kernel ridge of dask arrays by Falkon's preconditioned CG: every product
    with ``K_nm`` is one map-reduce of per-block fused passes, the CG runs on the client.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
        Its blocks are converted to float64 and persisted for the run (one read of
        ``X``; persist ``X`` yourself if it is used again).
    Y : dask.array.Array or array_like of shape (n,) or (n, k)
        The same row chunks as ``X``.
    gamma, alpha, kernel, n_landmarks, tol, max_iter, seed, fit_intercept, degree, coef0 :
        As in :func:`fastrbf.kernel_ridge` with ``solver="nystrom-pcg"`` (the only
        solver here).
    landmarks : {"uniform", "kmeans"} or array_like of shape (m, d)
        Chosen on the client with the same random draws as in memory: for a given
        ``seed`` the landmarks, hence the model, equal the in-memory ones (to rounding).
    n_threads : int, default 1
        Threads of each task.
    progress : bool, logging.Logger or callable, default False
        Report the conjugate-gradient iterations (one dask compute each) and the
        k-means of ``landmarks="kmeans"``, as :func:`fastrbf.kernel_ridge` (task
        ``"dask.kernel_ridge"``).

    Returns
    -------
    KernelModel

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((2000, 2))
    >>> y = np.sin(4 * X[:, 0])
    >>> with dask.config.set(scheduler="threads"):
    ...     m = fd.kernel_ridge(da.from_array(X, chunks=(500, 2)), y, gamma=2.0, alpha=1e-3, n_landmarks=100,
    ...                         seed=0)
    >>> ref = fastrbf.kernel_ridge(X, y, gamma=2.0, alpha=1e-3, solver="nystrom-pcg", n_landmarks=100, seed=0)
    >>> m.converged, bool(np.abs(m.predict(X) - ref.predict(X)).max() < 1e-6)  # to the CG tolerance
    (True, True)
    """
    if solver != "nystrom-pcg":
        raise ValueError(f'`solver` must be "nystrom-pcg" on dask arrays (the n x n Cholesky solve does not scale '
                         f"out); got {solver!r}.")
    nt = _check_threads(n_threads)
    rep = _progress.reporter(progress, "dask.kernel_ridge")
    spec = _check_kernel(kernel)
    X = _rows(X)
    n, d = X.shape
    if not _is_dask(Y):
        Y = _v.check_targets(_asarray(Y, "Y"), n)
    Yd = _aligned(Y, X, "Y")
    _check_kind(Yd.dtype, "Y")
    g = _mc.check_scalar_gamma(gamma)
    deg, c0 = _check_params(spec, degree, coef0)
    a, m = _mr.check_pcg_args(kernel, alpha, n, tol, max_iter, landmarks, n_landmarks)
    rng = _v.check_seed(seed)
    L = None
    if m is None:
        La = _small(landmarks, "landmarks")
        m = _mr.check_landmark_array(La, d, n_landmarks)
        L = _v.to_dtype(La, np.float64)
    k = 1 if Yd.ndim == 1 else Yd.shape[1]
    single = Yd.ndim == 1
    # -- the data: float64 blocks persisted for the run (the CG reads them max_iter times)
    xb = list(dask.persist(*[delayed(_f64_block, pure=False)(b, off)
                             for b, off in zip(_blocks(X), _offsets(X)[:-1], strict=True)]))
    yb = _blocks(Yd)
    if L is None:  # the in-memory draws, rows gathered from the blocks
        how = cast(str, landmarks)
        idx = _nystrom.landmark_rows(n, m, how, rng)
        rows = np.concatenate(dask.compute(*xb)) if idx is None else _rows_at(xb, X, idx)
        L = _nystrom.landmarks_from_rows(rows, m, how, rng, None, rep)
    mu = None
    intercept = np.zeros(k)
    if fit_intercept:
        intercept = _tree([delayed(_col_sums, pure=False)(b, off) for b, off in zip(yb, _offsets(X)[:-1], strict=True)],
                          _add).compute()[0] / n
        mu = intercept
    params = {"kernel": kernel, "gamma": g, "degree": deg, "coef0": c0, "n_threads": nt}
    Ld, pd = delayed(L), delayed(params)
    tb = [delayed(_targets_block, pure=False)(b, off, mu) for b, off in zip(yb, _offsets(X)[:-1], strict=True)]
    rhs = _tree([delayed(_cross_block, pure=False)(x, t, Ld, pd) for x, t in zip(xb, tb, strict=True)], _add).compute()[0]
    Kmm = _gram(L, kernel=kernel, gamma=g, degree=deg, coef0=c0)

    def matvec(V):
        Vd = delayed(np.ascontiguousarray(V))
        return _tree([delayed(_normal_block, pure=False)(x, Ld, Vd, pd) for x in xb], _add).compute()[0]

    res = _nystrom.falkon_solve(matvec, rhs, Kmm, a, n, tol=float(tol), max_iter=int(max_iter), progress=rep)
    return _mr.pcg_model(res, L, scale=1.0, tol=tol, kernel=kernel, gamma=g, degree=deg, coef0=c0,
                         intercept=intercept, dtype=_dtype(X.dtype, Yd.dtype), single_output=single, stacklevel=3)


def _take(block, idx):
    return block[idx]


def _rows_at(xb, X, idx):
    """Rows ``idx`` (sorted global indices) of the persisted blocks, gathered on the client."""
    offs = _offsets(X)
    b = np.searchsorted(offs, idx, side="right") - 1
    parts = [delayed(_take, pure=False)(xb[i], idx[b == i] - offs[i]) for i in np.unique(b)]
    return np.ascontiguousarray(np.concatenate(dask.compute(*parts)), dtype=np.float64)


# ---------------------------------------------------------------- prediction
def _predict_block(Xb, model, method, n_threads, block_info=None):
    try:
        return getattr(model, method)(Xb, n_threads=n_threads)
    except ValueError as exc:
        _raise_global(exc, (Xb, _block_offset(block_info), "X"))
        raise  # not reached


def predict(model: _m.RBFNetwork | _m.KernelModel, X: Data, *, n_threads: int | None = 1) -> da.Array:
    """``model.predict`` on a dask array, blockwise (the model is shipped with the graph).

    Parameters
    ----------
    model : RBFNetwork or KernelModel
    X : dask.array.Array of shape (m, d), chunked by rows
    n_threads : int, default 1
        Threads of each task.

    Returns
    -------
    dask.array.Array of shape (m,) or (m, k)
        Regression values, or class labels of a classifier.

    Examples
    --------
    >>> import numpy as np, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> m = fastrbf.kernel_ridge(X, np.sin(3 * X[:, 0]), gamma=10.0, alpha=1e-6)
    >>> out = fd.predict(m, da.from_array(X, chunks=(8, 1)))
    >>> bool(np.allclose(out.compute(scheduler="threads"), m.predict(X)))
    True
    """
    return _predict(model, X, "predict", n_threads)


def decision_function(model: _m.RBFNetwork, X: Data, *, n_threads: int | None = 1) -> da.Array:
    """``model.decision_function`` of an :class:`~fastrbf.RBFNetwork` on a dask array.

    Examples
    --------
    >>> import numpy as np, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> net = fastrbf.rbf_network(X, [1, -1, -1, 1], centers=X[:2], gamma=1.0)
    >>> s = fd.decision_function(net, da.from_array(X, chunks=(3, 2)))
    >>> bool(np.allclose(s.compute(scheduler="threads"), net.decision_function(X)))
    True
    """
    if not isinstance(model, _m.RBFNetwork):
        raise TypeError(f"`model` must be an RBFNetwork; got {type(model).__name__}.")
    return _predict(model, X, "decision_function", n_threads)


def _predict(model, X, method, n_threads):
    nt = _check_threads(n_threads)
    if not isinstance(model, (_m.RBFNetwork, _m.KernelModel)):
        raise TypeError(f"`model` must be an RBFNetwork or a KernelModel; got {type(model).__name__}.")
    X = _rows(X)
    d = model.centers.shape[1]
    if X.shape[1] != d:
        raise ValueError(f"`X` must have {d} features (as the training data); got shape {X.shape}.")
    ftype = np.dtype(np.float32) if (X.dtype == np.float32 and model.dtype == np.float32) else np.dtype(np.float64)
    k = model.weights.shape[1]
    classes = getattr(model, "classes", None)
    labels = method == "predict" and classes is not None
    dtype = np.asarray(classes).dtype if labels else ftype
    kw = {"model": model, "method": method, "n_threads": nt, "dtype": dtype}
    if labels or model.single_output:
        return X.map_blocks(_predict_block, drop_axis=1, meta=np.empty((0,), dtype), **kw)
    return X.map_blocks(_predict_block, chunks=(X.chunks[0], (k,)), meta=np.empty((0, 0), dtype), **kw)
