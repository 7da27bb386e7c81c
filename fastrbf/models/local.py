"""Local RBF interpolation: ``interpolate(..., neighbors=k)``, SciPy's
``RBFInterpolator(neighbors=k)``.

Decisions:

- **SciPy's semantics.**  Each query point is interpolated from its ``k`` nearest data
  points only: the same local system as the global interpolant (kernel, ``gamma =
  epsilon**2``, polynomial tail of ``(y - shift) / scale`` with the shift and scale of the
  neighbourhood, per-point smoothing).  SciPy solves it by LU with partial pivoting
  (``dgesv``); so do we where the kernel is not known to be conditionally positive
  definite of an order the tail covers (``degree < min_degree``, or a user kernel not
  declared positive definite).  Elsewhere the null-space method: the tail's pivot points
  eliminated (a basis ``[-E; I]`` of its null space), Cholesky on the null space, 8
  neighbourhoods per vector (:func:`fastrbf._jit.local.local_solve_lanes`, faster than
  the LU per neighbourhood; the same values to about 1e-14 relative on
  well-conditioned systems; a
  lane whose factorisation breaks down is solved again by the LU, whose verdict on a
  singular system stands).  The fit is lazy, as SciPy's: the model keeps the data; the work happens in
  ``predict``, where the neighbourhoods are known.
- **Each distinct neighbourhood is solved once**: the neighbour lists are sorted and the
  queries grouped by them (as SciPy's ``np.unique``, but by one stable sort of a hash of
  each list; only lists whose hash repeats are compared, so distinct lists cost no check
  and no copy), the groups in the order of their first query, then
  compiled tasks (one per
  neighbourhood for the LU, one per fixed group of 8 for the null-space method) build,
  factor and evaluate the systems (:mod:`fastrbf._jit.local`), in parallel; each task
  writes only its own queries, so the bits do not depend on the thread count.
- **Where the time goes**: the solves, then the k-nearest query; sorting and grouping the
  lists are serial and small.  The table per step, the end-to-end ratio to SciPy and how
  far each solve is from its arithmetic floor: docs/performance.md, 'Local
  interpolation' (``python -m fastrbf.bench --only interp-local``).
  The local solves are exact, one per distinct neighbourhood as in SciPy, so the
  speed-up over SciPy is bounded by how much faster each solve is than SciPy's LAPACK
  call plus its Python loop, not by an algorithm that skips solves.
- **Memory** ``O((n + m) k)``: the neighbour lists and the outputs, plus per thread one
  ``(k + q)^2`` system, or 8 ``k^2`` ones for the null-space method.
- The neighbours come from :func:`fastrbf.knn` (ties to the lowest index; SciPy's
  ``cKDTree`` may break exact ties otherwise).  A singular local system (duplicate points
  with zero smoothing, or too few distinct points for the tail) raises, naming the first
  query point whose neighbourhood is singular and the remedy.
"""

from dataclasses import dataclass

import numpy as np

from .. import _validation as _v
from .._jit import local as _jl
from .._typing import ArrayLike, KernelArg, Threads
from ..kernels import check_kernel, undeclared
from ..neighbors._knn import knn
from .common import check_query

_F64 = np.dtype(np.float64)


@dataclass(frozen=True, eq=False)
class LocalInterpolant:
    """A local RBF interpolant (``interpolate(..., neighbors=k)``); arrays only, picklable.

    Attributes
    ----------
    X : ndarray of shape (n, d), float64
    Y : ndarray of shape (n, t), float64
    kernel : str or UserKernel
    gamma : float
    degree : int
    alpha : ndarray of shape (n,)
        The smoothing of every point.
    neighbors : int
    powers : ndarray of shape (q, d)
        Exponents of the tail's monomials.
    coef0 : float
    dtype : numpy.dtype
    single_output : bool

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import interpolate
    >>> X = np.linspace(0, 1, 30)[:, None]
    >>> m = interpolate(X, np.sin(4 * X[:, 0]), neighbors=8)
    >>> bool(np.allclose(m.predict(X), np.sin(4 * X[:, 0])))
    True
    """

    X: np.ndarray
    Y: np.ndarray
    kernel: KernelArg
    gamma: float
    degree: int
    alpha: np.ndarray
    neighbors: int
    powers: np.ndarray
    coef0: float
    dtype: np.dtype
    single_output: bool

    def predict(self, X: ArrayLike, *, n_threads: Threads = None) -> np.ndarray:
        """Evaluate at the rows of ``X``, each from its ``neighbors`` nearest data points.

        Parameters
        ----------
        X : array_like of shape (m, d)
        n_threads : int, optional

        Returns
        -------
        ndarray of shape (m,) or (m, t)

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import interpolate
        >>> X = np.random.default_rng(0).random((50, 2))
        >>> m = interpolate(X, X[:, 0] + 2 * X[:, 1], neighbors=10, degree=1)
        >>> m.predict([[0.5, 0.5]]).round(10).tolist()  # the linear tail reproduces a plane
        [1.5]
        """
        Xq, dtype = check_query(self.dtype, self.X.shape[1], X)
        m = Xq.shape[0]
        k = self.neighbors
        idx, _ = knn(self.X, Xq, k, n_threads=n_threads)
        idx.sort(axis=1)
        nbr, order, starts = neighbourhoods(idx)
        entry = check_kernel(self.kernel)
        spec = entry.spec(np.full(k, self.gamma), self.coef0, 1)
        out = np.empty((m, self.Y.shape[1]))
        status = np.zeros(nbr.shape[0], dtype=np.int64)
        # the null-space method needs a kernel conditionally positive definite of an order the tail covers
        solve = _jl.local_solve if self.degree < entry.min_degree or undeclared(entry, Xq.shape[1]) \
            else _jl.local_solve_lanes
        args = (self.X, self.Y, self.alpha, Xq, self.powers, spec.phi, spec.g, spec.c, spec.degree, out)
        solve.run(n_threads, starts, order, nbr, *args, status)
        redo = np.flatnonzero(status == 2)  # lanes whose factorisation broke down: the LU decides
        if redo.size:
            counts = starts[redo + 1] - starts[redo]
            sub = np.zeros(redo.size + 1, dtype=np.int64)
            np.cumsum(counts, out=sub[1:])
            sub_order = np.concatenate([order[starts[u]:starts[u + 1]] for u in redo])
            sub_status = np.zeros(redo.size, dtype=np.int64)
            _jl.local_solve.run(n_threads, sub, sub_order, np.ascontiguousarray(nbr[redo]), *args, sub_status)
            status[redo] = sub_status
        if status.any():  # name the first query point whose neighbourhood is singular
            bad = np.flatnonzero(status)
            u = int(bad[np.argmin(order[starts[bad]])])
            i = int(order[starts[u]])
            raise ValueError(f"The local interpolation system of the neighbourhood of query point {i} (`X[{i}]`: data "
                             f"points {nbr[u].tolist()[:8]}{'...' if k > 8 else ''}) is singular: duplicate data points "
                             "with zero smoothing, or too few distinct points for the polynomial tail. Use a "
                             "smoothing `alpha` > 0, a lower `degree`, or more `neighbors`.")
        _v.check_result(out, "predict", "`X` and the interpolant's data")
        out = out.astype(dtype, copy=False)
        return out[:, 0] if self.single_output else out


#: odd 64-bit multipliers of the neighbour-list hash (fixed: the grouping is reproducible)
_HASH = np.random.default_rng(0x5EED).integers(1, 2**62, 4096, dtype=np.int64) | 1


#: rows per block of the check that the rows grouped by hash are equal (a block stays in cache)
_CHECK_ROWS = 2048


def neighbourhoods(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows ``nbr`` (U, k) of the int64 array ``idx`` (m, k) (sorted rows:
    the neighbour lists) and the rows that are copies of each: those of ``nbr[u]`` are
    ``order[starts[u]:starts[u + 1]]``, ascending.  Rows are told apart by a hash (the
    entries times fixed odd multipliers, summed modulo 2**64; a matrix-vector product),
    grouped by one stable sort of the hashes, and the grouping checked row by row; a
    collision falls back on ``np.unique(axis=0)``, about ten times slower.  The
    neighbourhoods come in the order of their first row; where every row is distinct,
    ``nbr`` is ``idx`` itself (int64, C-contiguous) and nothing is copied.

    Examples
    --------
    >>> import numpy as np
    >>> nbr, order, starts = neighbourhoods(np.array([[1, 2], [0, 3], [1, 2]]))
    >>> nbr.tolist(), order.tolist(), starts.tolist()
    ([[1, 2], [0, 3]], [0, 2, 1], [0, 2, 3])
    """
    m, k = idx.shape
    mult = _HASH[:k] if k <= _HASH.shape[0] else np.resize(_HASH, k)
    h = idx @ mult  # wraps modulo 2**64
    order = np.argsort(h, kind="stable")
    hs = h[order]
    first = np.ones(m, dtype=np.bool_)
    np.not_equal(hs[1:], hs[:-1], out=first[1:])
    starts = np.flatnonzero(np.append(first, True))
    # distinct hashes are distinct rows: only a row whose hash equals its predecessor's is checked
    dup = np.flatnonzero(~first)
    if dup.shape[0] == 0:  # every row distinct (the common case): no copy
        return np.ascontiguousarray(idx, dtype=np.int64), np.arange(m, dtype=np.int64), np.arange(m + 1, dtype=np.int64)
    # lead[i]: the first row of row i's group
    lead = np.empty(m, dtype=np.int64)
    lead[order] = order[starts[np.cumsum(first) - 1]]
    for lo in range(0, dup.shape[0], _CHECK_ROWS):
        p = dup[lo:lo + _CHECK_ROWS]
        if not np.array_equal(idx[order[p]], idx[order[p - 1]]):
            _, first_row, inv = np.unique(idx, axis=0, return_index=True, return_inverse=True)
            lead = first_row[inv.reshape(-1)].astype(np.int64, copy=False)
            break
    order = np.argsort(lead, kind="stable")
    leaders = np.flatnonzero(lead == np.arange(m))
    starts = np.zeros(leaders.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(lead, minlength=m)[leaders], out=starts[1:])
    nbr = np.ascontiguousarray(idx[leaders])
    return nbr.astype(np.int64, copy=False), order.astype(np.int64, copy=False), starts


def local_interpolant(Xd, T, single, dtype, entry, kernel, gamma, degree, alpha, neighbors, powers, coef0):
    """The :class:`LocalInterpolant` of checked data (``Xd`` float64 owned, ``T`` (n, t)
    float64) and parameters; ``neighbors`` checked here."""
    n = Xd.shape[0]
    # SciPy's rule: more neighbours than data points means all of them
    k = min(_v.check_int(neighbors, "neighbors", 1, None, type_error=ValueError), n)
    q = powers.shape[0]
    if k < q:
        raise ValueError(f"`neighbors` must be at least the number of monomials of the polynomial tail ({q}, degree "
                         f"{degree}); got {k}.")
    a = np.ascontiguousarray(np.broadcast_to(np.asarray(alpha, dtype=np.float64), (n,)))
    return LocalInterpolant(Xd, np.ascontiguousarray(T), kernel, float(gamma), int(degree), a, k,
                            np.ascontiguousarray(powers, dtype=np.int64), float(coef0), dtype, single)
