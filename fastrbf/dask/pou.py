"""The partition-of-unity interpolant of dask arrays (:func:`fastrbf.partition_of_unity`
with the data in row blocks): the covering, the patches and the model are the in-memory
ones (:mod:`fastrbf.models.pou`); only the passes over the blocks are here.

Decisions:

- **Three passes over the blocks** (persisted once, as float64): the bounding box and
  max |Y|; the ``patch_points`` nearest points of every patch centre, and more for
  the patches of the cells at the box's faces and corners
  (:func:`~fastrbf.models.pou.neighbour_searches`; per block by :func:`fastrbf.knn`,
  merged in a tree keeping the smallest squared distances: the same values as one
  search over all the data), which give the patches' radii; then
  the routing, where each block sends every group of patches (a run of consecutive
  patch ids, one group per block) the points that lie in the box around the group's
  balls, and one task per group solves its patches from them.
- **Equal to the in-memory model, bit for bit**: the covering depends only on the box,
  ``n`` and ``patch_points``; the radii on the k-th smallest squared distance; and a
  patch's system on its points in the order (cell, global row), which
  :func:`~fastrbf.models.pou.solve_patches` restores whatever blocks they came from.
- Memory: the client holds the model (``O(n)``, as in memory) and the per-centre
  neighbour distances of the merge (``patch_points`` floats per patch, about
  ``1.3 n`` floats in 3-D, and the more of the face and corner patches); a group's
  task holds its patches' points.
- ``alpha`` is a number or an in-memory array of one value per row (shipped with the
  graph, cut like ``X``); ``Y`` a dask array with the row chunks of ``X``, or in memory.
"""

import functools
import itertools

import dask
import numpy as np
from dask import delayed
from numpy.typing import ArrayLike

from .. import _validation as _v
from .._typing import KernelArg
from ..models import common as _mc
from ..models.interpolation import check_interp_params, check_radial, per_point
from ..models.pou import (
    PATCH_POINTS,
    PartitionOfUnityInterpolant,
    covering,
    finish,
    neighbour_searches,
    patch_radii,
    solve_patches,
)
from ..neighbors._knn import knn
from .common import Data, aligned, as_rows, check_threads, checked_block, checked_targets, offsets, row_blocks, tree


def _prep(Xb, Yb, offset, alpha, ls):
    X = _v.to_dtype(checked_block(Xb, offset), np.float64)
    if ls is not None:
        X = _v.scale_features(X, ls, np.float64, "X")
    T, _ = _mc.as_targets(checked_targets(Yb, offset))
    return np.ascontiguousarray(X), np.ascontiguousarray(T), alpha, np.arange(offset, offset + X.shape[0])


def _box(part):
    X, T = part[0], part[1]
    return X.min(axis=0), X.max(axis=0), float(np.abs(T).max()) if T.size else 0.0


def _knn(part, centers, k, n_threads):
    X = part[0]
    return knn(X, centers, min(k, X.shape[0]), n_threads=n_threads)[1]


def _merge(k, *parts):
    return np.sort(np.concatenate(parts, axis=1), axis=1)[:, :k]


def _route(part, lo, hi):
    # per group, the rows of the block inside the group's box
    X, T, a, idx = part
    out = []
    for g in range(lo.shape[0]):
        keep = np.all((X >= lo[g]) & (X <= hi[g]), axis=1)
        out.append((X[keep], T[keep], a[keep], idx[keep]))
    return out


def _solve(cov, a, b, rho, local, n_threads, *routed):
    X, T, al, idx = (np.concatenate([r[i] for r in routed]) for i in range(4))
    return solve_patches(cov, cov.centers[a:b], rho[a:b], X, T, al, idx, local, n_threads)


def partition_of_unity(X: Data, Y: Data, *, kernel: KernelArg = "thin_plate_spline", gamma: float | None = None,
                       degree: int | None = None, alpha: ArrayLike = 0.0, length_scale: ArrayLike | None = None,
                       patch_points: int | None = None, n_threads: int | None = 1) -> PartitionOfUnityInterpolant:
    """:func:`fastrbf.partition_of_unity` of dask arrays: the same model, bit for bit,
    fitted from row blocks (the points routed to the patches by their coordinates).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
    Y : dask.array.Array of shape (n,) or (n, k), with the row chunks of ``X`` (or in memory)
    kernel, gamma, degree, alpha, length_scale, patch_points :
        As :func:`fastrbf.partition_of_unity` (``alpha``: a number, or an in-memory
        array of one value per row).
    n_threads : int, default 1
        Threads of each task.

    Returns
    -------
    PartitionOfUnityInterpolant
        In memory; evaluate it on dask arrays with :func:`fastrbf.dask.predict`.

    Examples
    --------
    >>> import numpy as np, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> X = np.random.default_rng(0).random((600, 2))
    >>> y = np.sin(3 * X[:, 0]) + X[:, 1]
    >>> m = fd.partition_of_unity(da.from_array(X, chunks=(200, 2)), y, patch_points=40)
    >>> bool(np.array_equal(m.patch_w, fastrbf.partition_of_unity(X, y, patch_points=40).patch_w))
    True
    >>> out = fd.predict(m, da.from_array(X, chunks=(250, 2)))
    >>> bool(np.abs(out.compute(scheduler="threads") - y).max() < 1e-10)
    True
    """
    nt = check_threads(n_threads)
    entry = check_radial(kernel)
    Xd = as_rows(X)
    Yd = aligned(Y, Xd, "Y")
    n, d = Xd.shape
    _, local, a, ls = check_interp_params(entry, kernel, gamma, degree, alpha, length_scale, n, d, "pu", None,
                                          patch_points)
    pp = PATCH_POINTS if patch_points is None else patch_points
    al = per_point(a, n)
    off = offsets(Xd)
    blocks = zip(row_blocks(Xd), row_blocks(Yd), strict=True)
    parts = dask.persist(*[delayed(_prep, pure=True)(xb, yb, int(off[i]), al[off[i]:off[i + 1]], ls)
                           for i, (xb, yb) in enumerate(blocks)])
    boxes = dask.compute(*[delayed(_box)(p) for p in parts])
    lo = np.min([b[0] for b in boxes], axis=0)
    hi = np.max([b[1] for b in boxes], axis=0)
    y_max = max(b[2] for b in boxes)
    cov = covering(lo, hi, n, pp)
    searches = neighbour_searches(cov, n, pp)
    d2 = dask.compute(*[tree([delayed(_knn)(p, cov.centers[ids], k, nt) for p in parts], functools.partial(_merge, k))
                        for ids, k in searches])
    rho, radii = patch_radii(cov, searches, [r[:, k - 1] for r, (_, k) in zip(d2, searches, strict=True)])
    del d2
    P = cov.centers.shape[0]
    bounds = np.linspace(0, P, min(P, len(parts)) + 1).astype(np.int64)
    groups = list(itertools.pairwise(bounds.tolist()))
    glo = np.array([(cov.centers[s:e] - rho[s:e, None]).min(axis=0) for s, e in groups])
    ghi = np.array([(cov.centers[s:e] + rho[s:e, None]).max(axis=0) for s, e in groups])
    routed = [delayed(_route, nout=len(glo))(p, glo, ghi) for p in parts]
    solved = dask.compute(*[delayed(_solve)(cov, s, e, rho, local, nt, *[r[g] for r in routed])
                            for g, (s, e) in enumerate(groups)])
    return finish(cov, radii, list(solved), local, al, ls, _v.result_dtype(Xd.dtype, Yd.dtype), Yd.ndim == 1, y_max)
