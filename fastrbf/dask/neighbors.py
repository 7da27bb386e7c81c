"""``knn`` on dask arrays: the k nearest training points of each query point when the
training points are row-chunked.

Decisions:

- Each task runs the in-memory :func:`fastrbf.knn` of one block of queries against
  one block of training points (``method`` as given: ``"auto"`` takes the kd-tree or the
  brute force by the in-memory cost model, for the sizes of the two blocks), its
  indices made global by the block's first row.  The candidate lists of the training
  blocks are then merged per block of queries, ordered by (squared distance, index),
  in a tree reduction over the training blocks.
- The result is the in-memory ``knn(X, Xq, k)`` bit for bit: a pair's squared distance
  is computed by the same arithmetic whichever block it is in (the power-of-two
  rescaling of extreme magnitudes is exact, except where a squared distance underflows
  in one block and not in the whole), and the (distance, index) order keeps the ties on
  the lowest global index.
- The kd-tree is built once and shared by every block of queries (one dask object
  that each query task takes as an argument), never once per task.  When the tree
  pays (``method="tree"``, or ``"auto"`` with the in-memory cost model for all of ``X``
  and all of ``Xq``) and all the training points and their tree take at most
  :data:`TREE_MEMORY` of the memory available, one task builds the tree of all of
  ``X`` and each query task answers its block from it: no merge, and the global
  indices directly.  Otherwise each training block gets its tree once (reused by every
  query block), and the candidate lists are merged as above.  The training points are
  scaled by a power of two as in memory (one exponent for the points and the block of
  queries; a block of queries far larger than the points gets a tree of its own).
- ``"auto"`` where the tree does not pay runs the in-memory ``knn`` per pair of blocks,
  which chooses for the sizes of the two blocks.
"""

import dask.array as da
import numpy as np
from dask import delayed

from .. import _validation as _v
from .._typing import ArrayLike
from ..neighbors import _kdtree
from ..neighbors._knn import knn as _knn_in_memory
from .common import Data, as_rows, check_threads, checked_block, offsets, raise_global, row_blocks, tree

#: the largest part of the available memory that the training points and their
#: kd-tree may take for one tree of all of ``X`` (beyond it, one tree per block of ``X``)
TREE_MEMORY = 0.5


def _block_knn(Xb, Qb, k, x0, q0, method, length_scale, n_threads):
    try:
        idx, d2 = _knn_in_memory(Xb, Qb, min(k, Xb.shape[0]), method=method, length_scale=length_scale,
                                 n_threads=n_threads)
    except ValueError as exc:
        raise_global(exc, (Xb, x0, "X"), (Qb, q0, "Xq"))
        raise  # not reached
    return idx + x0, d2


def _tree_index(blocks, starts, length_scale, dtype, n_threads):
    """The kd-tree index of the training blocks (first global rows ``starts``) taken
    together: validated and scaled as the in-memory ``knn`` does."""
    parts = [checked_block(b, int(x0), "X") for b, x0 in zip(blocks, starts, strict=True)]
    Xa = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return _kdtree.index(_v.scale_features(Xa, length_scale, dtype, "X"), n_threads)


def _tree_knn(ix, Qb, k, x0, q0, length_scale, dtype, n_threads):
    """The k nearest points of an index (its first global row ``x0``) to a block of
    queries."""
    Qc = _v.scale_features(checked_block(Qb, q0, "Xq"), length_scale, dtype, "Xq")
    idx, d2 = _kdtree.knn_index(ix, Qc, min(k, ix.Xc.shape[0]), n_threads)
    return idx + x0, d2


def _one_tree_fits(n, d, dtype):
    avail = _v.available_memory()
    need = 2 * n * d * dtype.itemsize + _kdtree.tree_bytes(n, d, dtype.itemsize)
    return avail is None or need <= TREE_MEMORY * avail


def _merge(k):
    def merge(*parts):
        idx = np.concatenate([p[0] for p in parts], axis=1)
        d2 = np.concatenate([p[1] for p in parts], axis=1)
        order = np.lexsort((idx, d2), axis=1)[:, :k]  # by distance, then index
        return np.take_along_axis(idx, order, axis=1), np.take_along_axis(d2, order, axis=1)
    return merge


def knn(X: Data, Xq: Data, k: int, *, n_threads: int | None = 1, length_scale: ArrayLike | None = None,
        method: str = "auto") -> tuple[da.Array, da.Array]:
    """:func:`fastrbf.knn` with row-chunked training points (and queries).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
        Training points.
    Xq : dask.array.Array or array_like of shape (m, d)
        Query points (an in-memory array is one block).
    k : int
        1 <= k <= n.
    n_threads : int, default 1
        Threads of each task.
    length_scale : float or array_like of shape (d,), optional
    method : {"auto", "tree", "brute"}, default "auto"
        As in memory; the kd-tree is built once (of all of ``X`` when it fits in
        memory, else of each block of ``X``) and shared by the blocks of queries.

    Returns
    -------
    indices : dask.array.Array of shape (m, k), int64
        Global row numbers of ``X``; ascending distance, ties to the lowest index.
    sqdist : dask.array.Array of shape (m, k)
        As :func:`fastrbf.knn`: the same values bit for bit.

    Examples
    --------
    >>> import numpy as np, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> X = np.random.default_rng(0).random((50, 2))
    >>> idx, d2 = fd.knn(da.from_array(X, chunks=(16, 2)), X[:5], 3)
    >>> ref_idx, ref_d2 = fastrbf.knn(X, X[:5], 3)
    >>> bool((idx.compute() == ref_idx).all() and (d2.compute() == ref_d2).all())
    True
    """
    nt = check_threads(n_threads)
    method = _v.check_choice(method, "method", ("auto", "tree", "brute"), text='"auto", "tree" or "brute"')
    X = as_rows(X)
    Q = as_rows(Xq, "Xq")
    if Q.shape[1] != X.shape[1]:
        raise ValueError(f"`Xq` must have the same number of features as `X` ({X.shape[1]}); got {Q.shape[1]} "
                         f"(shape {Q.shape}).")
    n = X.shape[0]
    k = _v.check_int(k, "k", 1, n, text=f"an int in [1, n_samples] = [1, {n}]")
    ls = _v.check_length_scale(length_scale, X.shape[1])
    dtype = _v.result_dtype(X.dtype, Q.dtype)
    xs, qs = offsets(X), offsets(Q)
    xb = row_blocks(X)
    d = X.shape[1]
    use_tree = method == "tree" or (method == "auto" and _kdtree.use_tree(n, Q.shape[0], d, k))
    ixs, starts = [], [0]
    if use_tree and _one_tree_fits(n, d, dtype):
        ixs = [delayed(_tree_index, pure=True)(xb, xs[:-1], ls, dtype, nt)]
    elif use_tree:
        ixs = [delayed(_tree_index, pure=True)([b], xs[j:j + 1], ls, dtype, nt) for j, b in enumerate(xb)]
        starts = [int(x) for x in xs[:-1]]
    merge = _merge(k)
    idx_blocks, d2_blocks = [], []
    for i, Qb in enumerate(row_blocks(Q)):
        if not use_tree:
            res = tree([delayed(_block_knn, pure=True)(Xb, Qb, k, int(xs[j]), int(qs[i]), method, ls, nt)
                        for j, Xb in enumerate(xb)], merge, first=merge)
        elif len(ixs) == 1:  # one tree of all of X: its answer is the result
            res = delayed(_tree_knn, pure=True)(ixs[0], Qb, k, 0, int(qs[i]), ls, dtype, nt)
        else:
            res = tree([delayed(_tree_knn, pure=True)(ix, Qb, k, x0, int(qs[i]), ls, dtype, nt)
                        for ix, x0 in zip(ixs, starts, strict=True)], merge, first=merge)
        mi = int(qs[i + 1] - qs[i])
        idx_blocks.append(da.from_delayed(res[0], shape=(mi, k), dtype=np.int64))
        d2_blocks.append(da.from_delayed(res[1], shape=(mi, k), dtype=dtype))
    return da.concatenate(idx_blocks, axis=0), da.concatenate(d2_blocks, axis=0)
