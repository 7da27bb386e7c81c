"""The nearest-neighbour (Vecchia) Gaussian process of dask arrays
(:func:`fastrbf.vecchia_gaussian_process` with its likelihood evaluated on blocks of
the ordering).  The argument checks, the ordering, the conditioning sets, the optimiser
and the finish are the in-memory ones (:mod:`fastrbf.gp._vecchia`); only the sums of
the likelihood and its gradient run on the blocks.

Decisions:

- **The data come to the client** (``X`` and ``y`` computed): the ordering (maximin:
  each choice depends on all before it) and the conditioning sets need every earlier
  point, and the model keeps them (``O(n (d + m))``: 140 MB at 10^6 points, 3
  features, 30 neighbours).  What is repeated, the likelihood with its gradient at
  every L-BFGS-B step (``O(n m^3)``), is what is distributed.
- **Blocks of the ordering**: consecutive positions (``block_size``, rounded up to a
  multiple of the kernel's tasks), each shipped once with the rows of its own points
  and of their neighbours (the neighbours' rows after its own; their positions mapped
  to these rows) and persisted for the run; each evaluation is one graph of per-block
  sums (:func:`fastrbf.gp._vecchia.block_terms`) tree-added in block order, computed on
  the client.  With per-feature length scales the blocks are built again when the
  sets are chosen again.
- **The same model as in memory** to rounding: the same ordering and sets (chosen on
  the client with the same draws), each position's terms the same bits (a block starts
  on a task boundary of the kernel), the sums added in another order.
"""

from typing import cast

import dask
import dask.array as da
import numpy as np
from dask import delayed
from numpy.typing import ArrayLike

from .. import _progress
from .. import _validation as _v
from .._jit.gp import vecchia as _jv
from .._typing import KernelArg
from ..gp._checks import DEFAULT_BOUNDS, log_bounds
from ..gp._vecchia import (
    Problem,
    VecchiaGaussianProcess,
    block_terms,
    check_args,
    check_ordering,
    finish_terms,
    fit,
    fitted_model,
    log_theta,
)
from .common import Data, add_parts, as_rows, check_threads, is_dask, tree

#: positions per block by default: about 0.1 s of one thread's likelihood with
#: gradient at 30 neighbours
BLOCK_SIZE = 1 << 16


def _block(rows, y, nbr, count):
    return rows, y, nbr, count


def _terms(block, kern, theta, nn, grad, nt):
    rows, y, nbr, count = block
    return (block_terms(rows, y, nbr, count, kern, theta, nn, grad, nt),)


def blocks_of(order, nbr, count, X, yo, size):
    """The blocks of positions ``[s, s + size)``: ``(rows, y, nbr, count)`` with the
    block's own points first (unscaled, float64) and then its neighbours' rows, the
    sets mapped to those rows."""
    out = []
    n = nbr.shape[0]
    for s in range(0, n, size):
        e = min(n, s + size)
        nb = nbr[s:e].astype(np.int64)
        valid = np.arange(nb.shape[1])[None, :] < count[s:e, None]
        extra = np.unique(nb[valid & (nb < s)])
        local = np.where(nb >= s, nb - s, (e - s) + np.searchsorted(extra, nb))
        local = np.where(valid, local, 0).astype(np.int32)
        pos = np.concatenate([np.arange(s, e), extra])
        out.append((np.ascontiguousarray(X[order[pos]]), np.ascontiguousarray(yo[pos]), local,
                    np.ascontiguousarray(count[s:e])))
    return out


class _BlockProblem(Problem):
    """:class:`fastrbf.gp._vecchia.Problem` whose likelihood is summed on the blocks."""

    def __init__(self, *args, block_size, task_threads):
        super().__init__(*args)
        self.block_size = block_size
        self.task_threads = task_threads
        self.blocks: list = []

    def choose(self, ls, rep=_progress.OFF):
        changed = super().choose(ls, rep)
        if changed or not self.blocks:
            parts = blocks_of(self.order, self.nbr, self.count, self.X, self.yo, self.block_size)
            self.blocks = list(dask.persist(*[delayed(_block, pure=False)(*p) for p in parts]))
        return changed

    def lml(self, theta, grad):
        parts = [delayed(_terms, pure=False)(b, self.kernel_args(), theta, self.nn, bool(grad), self.task_threads)
                 for b in self.blocks]
        (tot,) = dask.compute(tree(parts, add_parts))[0]
        return finish_terms(tot, theta, self.nn, grad)


def vecchia_gaussian_process(X: Data, y: Data, *, n_neighbors: int = 30, kernel: KernelArg = "matern52",
                             amplitude: float = 1.0, length_scale: ArrayLike = 1.0, noise: float | None = 1e-5,
                             ard: bool = False, coef0: float = 1.0, ordering: str | ArrayLike = "maximin",
                             optimize: bool = True, n_restarts: int = 0, bounds: ArrayLike = DEFAULT_BOUNDS,
                             normalize_y: bool = False, seed: int | np.random.Generator | None = None,
                             block_size: int = BLOCK_SIZE, n_threads: int | None = 1,
                             progress: object = False) -> VecchiaGaussianProcess:
    """The nearest-neighbour (Vecchia) Gaussian process of dask arrays: the ordering and
    conditioning sets on the client, the likelihood and its gradient at every optimiser
    step summed over blocks of the ordering on the workers (see the module docstring).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows (or array_like)
    y : dask.array.Array or array_like of shape (n,)
    n_neighbors, kernel, amplitude, length_scale, noise, ard, coef0, ordering, optimize, n_restarts, bounds, \
normalize_y, seed, progress :
        As in :func:`fastrbf.vecchia_gaussian_process`; for a given ``seed`` the same
        ordering and sets, the same model to rounding.
    block_size : int, default 65536
        Positions per block (rounded up to a multiple of 256).
    n_threads : int, default 1
        Threads of each task (the client's neighbour search takes all cores).

    Returns
    -------
    VecchiaGaussianProcess

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((1500, 2))
    >>> y = np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(1500)
    >>> with dask.config.set(scheduler="threads"):
    ...     gp = fd.vecchia_gaussian_process(da.from_array(X, chunks=(500, 2)), y, n_neighbors=10, noise=0.01,
    ...                                      block_size=512)
    >>> ref = fastrbf.vecchia_gaussian_process(X, y, n_neighbors=10, noise=0.01)
    >>> bool(np.allclose(gp.theta, ref.theta, atol=1e-5))
    True
    """
    what = "vecchia_gaussian_process"
    nt = check_threads(n_threads)
    Xd = as_rows(X)
    Xm = np.asarray(Xd.compute())
    ym = np.asarray(cast(da.Array, y).compute()) if is_dask(y) else y
    entry, Xa, ya, Xf, yf, c0, y_mean, y_std, ls, m = check_args(Xm, ym, kernel, coef0, normalize_y, amplitude,
                                                             length_scale, noise, ard, n_neighbors, what)
    n = Xa.shape[0]
    size = _v.check_int(block_size, "block_size", 1)
    size = -(-size // _jv.VB) * _jv.VB
    optimize = _v.check_bool(optimize, "optimize")
    n_restarts = _v.check_int(n_restarts, "n_restarts", 0)
    order = check_ordering(ordering, n)
    theta0 = log_theta(amplitude, ls, noise)
    lo, hi = log_bounds(bounds, theta0.size)
    rng = _v.check_seed(seed, name="seed")
    rep = _progress.reporter(progress, f"dask.{what}", runs="start")
    prob = _BlockProblem(Xf, yf, entry, c0, m, order, rng, None, noise is not None, block_size=size, task_threads=nt)
    fitted = fit(prob, theta0, ls, optimize, n_restarts, lo, hi, rng, rep, what)
    return fitted_model(fitted, prob, entry, c0, Xf, np.array(yf, copy=True), y_mean, y_std, Xa, ya)
