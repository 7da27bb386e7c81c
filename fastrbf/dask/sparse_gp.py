"""The sparse Gaussian process of dask arrays (:func:`fastrbf.sparse_gaussian_process`
on row-chunked data).  The argument checks, the landmark and subsample draws, the
learning and the finish are the in-memory ones (:mod:`fastrbf.gp._sparse`); only the
passes over the blocks are here.

Decisions:

- **The passes** of the bound (``A A^T`` and ``A y`` with ``A = L^-1 K_mn``, and the
  gradient sums) are map-reduces of the in-memory passes
  (:class:`fastrbf.gp._sparse_bound.RowPasses` on each block, its fixed chunks inside),
  tree-added in block order: deterministic for a given chunking, equal to the
  in-memory fit to rounding.  ``X`` is converted to float64 blocks and persisted for
  the run (one read of ``X``).
- **The hyperparameters** are learned in memory on the ``learn_samples`` rows gathered
  on the client: for a given ``seed`` the same rows, landmarks and L-BFGS-B steps as
  in memory (so the same hyperparameters); then one pass over all the blocks gives the
  model and its bound.
- **The targets** ``y`` (n x k) come to the client (a dask ``y`` is computed): they are
  small beside ``X``, the normalisation needs their mean and deviation, and their
  blocks travel with the tasks.
"""

from typing import cast

import dask
import dask.array as da
import numpy as np
from dask import delayed
from numpy.typing import ArrayLike

from .. import _validation as _v
from .._typing import KernelArg
from ..gp._checks import DEFAULT_BOUNDS, check_gp_kernel, check_length_scales, gp_targets, radial_kernel
from ..gp._sparse import SparseGaussianProcess, check_fit_args, check_landmarks, fit, landmark_kernel
from ..gp._sparse_bound import RowPasses
from ..models import falkon
from .common import (
    Data,
    add_parts,
    as_in_memory,
    as_rows,
    check_threads,
    f64_block,
    is_dask,
    offsets,
    row_blocks,
    rows_at,
    tree,
)


def _stats_block(xb, tb, lsd, Zs, L, c, entry, c0, nt):
    return RowPasses(xb, tb, entry, c0, nt).stats(lsd, Zs, L, c)


def _grad_block(xb, tb, lsd, Zs, R, FT, entry, c0, nt):
    return (RowPasses(xb, tb, entry, c0, nt).grad(lsd, Zs, R, FT),)


class BlockPasses:
    """The passes of :class:`fastrbf.gp._sparse_bound.RowPasses` over persisted float64 row
    blocks ``xb`` (with the global row ``offs``) and target blocks ``T`` (on the client)."""

    def __init__(self, xb, offs, T, d, entry, c0, nt):
        self.xb, self.offs, self.T = xb, offs, T
        self.n, self.d, self.k = T.shape[0], d, T.shape[1]
        self.yy = float(np.sum(T * T))
        self.tb = [delayed(T[offs[i] : offs[i + 1]]) for i in range(len(xb))]
        self.entry, self.c0, self.nt = entry, c0, nt

    def stats(self, lsd, Zs, L, c):
        args = [delayed(a) for a in (lsd, Zs, L)]
        return tree([delayed(_stats_block, pure=False)(x, t, *args, c, self.entry, self.c0, self.nt)
                     for x, t in zip(self.xb, self.tb, strict=True)], add_parts).compute()

    def grad(self, lsd, Zs, R, FT):
        args = [delayed(a) for a in (lsd, Zs, R, FT)]
        return tree([delayed(_grad_block, pure=False)(x, t, *args, self.entry, self.c0, self.nt)
                     for x, t in zip(self.xb, self.tb, strict=True)], add_parts).compute()[0]

    def rows(self, idx):
        """Rows ``idx`` (sorted global indices) of the blocks, gathered on the client."""
        return rows_at(self.xb, self.offs, idx)

    def subsample(self, idx):
        """The in-memory passes over rows ``idx`` (None: all)."""
        idx = np.arange(self.n) if idx is None else idx
        return RowPasses(self.rows(idx), np.ascontiguousarray(self.T[idx]), self.entry, self.c0, self.nt)


def sparse_gaussian_process(X: Data, y: Data, *, n_landmarks: int | None = None, landmarks: str | ArrayLike = "uniform",
                            kernel: KernelArg = "matern52", amplitude: float = 1.0, length_scale: ArrayLike = 1.0,
                            noise: float = 1e-2, ard: bool = False, coef0: float = 1.0, optimize: bool = True,
                            n_restarts: int = 0, bounds: tuple[float, float] = DEFAULT_BOUNDS, max_iter: int = 50,
                            learn_samples: int | None = None, normalize_y: bool = False,
                            seed: int | np.random.Generator | None = None,
                            n_threads: int | None = 1) -> SparseGaussianProcess:
    """Sparse Gaussian-process regression of dask arrays: the passes over the data are
    map-reduces over the row blocks, the hyperparameters are learned on a subsample
    gathered on the client, as :func:`fastrbf.sparse_gaussian_process` does in memory.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
        Its blocks are converted to float64 and persisted for the run.
    y : dask.array.Array or array_like of shape (n,) or (n, k)
        Brought to the client (small beside ``X``).
    n_landmarks, landmarks, kernel, amplitude, length_scale, noise, ard, coef0, optimize, n_restarts, bounds, \
max_iter, learn_samples, normalize_y, seed :
        As in :func:`fastrbf.sparse_gaussian_process`; for a given ``seed`` the
        landmarks, the subsample and the learned hyperparameters are the in-memory
        ones.
    n_threads : int, default 1
        Threads of each task.

    Returns
    -------
    SparseGaussianProcess

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((600, 2))
    >>> y = np.sin(4 * X[:, 0]) + 0.05 * rng.standard_normal(600)
    >>> with dask.config.set(scheduler="threads"):
    ...     gp = fd.sparse_gaussian_process(da.from_array(X, chunks=(200, 2)), y, n_landmarks=30, seed=0)
    >>> ref = fastrbf.sparse_gaussian_process(X, y, n_landmarks=30, seed=0)
    >>> bool(np.allclose(gp.predict(X[:5]), ref.predict(X[:5]), atol=1e-8))
    True
    """
    opts = check_fit_args(amplitude, noise, ard, optimize, n_restarts, max_iter, bounds)
    nt = check_threads(n_threads)
    entry = radial_kernel(kernel)
    X = as_rows(X)
    n, d = X.shape
    c0 = check_gp_kernel(entry, d, coef0, "sparse_gaussian_process")
    ya = _v.check_targets(np.asarray(cast(da.Array, y).compute()) if is_dask(y) else as_in_memory(y, "y"), n, "y")
    T, y_mean, y_std = gp_targets(ya, normalize_y)
    m, how = check_landmarks(n, d, n_landmarks, landmarks)
    rng = _v.check_seed(seed, name="seed")
    ls = check_length_scales(length_scale, d, opts["ard"])
    offs = offsets(X)
    xb = list(dask.persist(*[delayed(f64_block, pure=False)(b, off)
                             for b, off in zip(row_blocks(X), offs[:-1], strict=True)]))
    passes = BlockPasses(xb, offs, T, d, entry, c0, nt)
    if isinstance(how, str):  # the in-memory draws, rows gathered from the blocks
        idx = falkon.landmark_rows(n, m, how, rng)
        rows = np.concatenate(dask.compute(*xb)) if idx is None else passes.rows(idx)
        Z = falkon.landmarks_from_rows(rows, m, how, rng, nt, kernel=landmark_kernel(entry, c0, ls))
    else:
        Z = np.array(how, dtype=np.float64, order="C", copy=True)
    return fit(passes, passes.subsample, Z, entry, c0, np.log(np.r_[amplitude, ls, noise]), learn_samples, opts, rng,
               nt, y_mean, y_std, _v.result_dtype(X.dtype, ya), np.ndim(ya) == 1)
