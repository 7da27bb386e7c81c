"""Partition-of-unity (PU) RBF interpolation for large ``n``:
``interpolate(..., method="pu")`` and :func:`fastrbf.partition_of_unity`.

The interpolant is ``f(x) = sum_j w_j(x) s_j(x) / sum_j w_j(x)``: ``s_j`` solves
:func:`~fastrbf.interpolate`'s system (kernel, gamma, degree, per-point alpha) on the
data points of patch ``j`` (a ball), ``w_j(x) = psi(|x - c_j| / rho_j)`` with Wendland's
C2 function ``psi(u) = (1 - u)^4 (4 u + 1)`` (0 for ``u >= 1``).  Every ``s_j``
interpolates its points, so ``f`` reproduces the data (``alpha = 0``); ``f`` is as smooth
as the weights and the kernel together (``C^min(2, k)``).  Memory is ``O(n)``: the
patches hold each point a few times, with one weight per point and patch.

Decisions:

- **Covering: a regular grid of patch centres** over the data's bounding box (one
  patch per cell, at its centre), rather than the leaves of a kd-tree: the cells tile
  the box, so a ball of radius ``OVERLAP`` (1.25) times the half diagonal of a cell
  covers every point of its cell with a weight >= psi(0.8) = 0.0109 > 0, and the whole
  box is covered (data and evaluation points alike); a query finds its patches in its
  cell's list in O(1), and the covering is a function of the box and ``patch_points``
  alone (the same for any thread count).  The cell size is chosen so that a patch's
  ball of points (``MARGIN`` times its weight's radius, below) holds ``patch_points``
  points on average for data spread evenly over the box, and a patch holding fewer
  (at the box's faces and corners, in sparse regions, or by chance) is enlarged to
  hold ``patch_points`` (its radius then reaches its ``patch_points``-th nearest data
  point).  The grid does not adapt to clustered data: a dense cluster
  makes large patches (``patch_sizes`` shows them; their systems are checked against
  the memory).
- **A patch's points reach past its weight**: patch ``j`` solves on the points within
  ``MARGIN`` (1.3) times ``rho_j``, so that each local interpolant is accurate over
  all of its weight's support (an interpolant is least accurate near the rim of its
  points, where a weight equal to its points' ball would still count it).
- **The patches at the box's faces and corners hold more points**
  (:func:`neighbour_searches`): those of the cells at a corner ``CORNER_POINTS`` (4)
  times ``patch_points``, those of the other cells on a face (or edge)
  ``FACE_POINTS_2D`` (2) times in 2-D and ``FACE_POINTS`` (1.25) times in 3-D and
  more; their points reach that many nearest points, while their weights keep the
  radius of the ``patch_points`` nearest over ``MARGIN`` (a larger margin: the
  covering, the blend and the evaluation cost are unchanged).  The dense interpolant
  errs most at the faces and corners of the box (worst at the corner near the
  Franke function's steepest bump, and in gaps in the data at a face), and there a
  local thin-plate spline of ``patch_points`` points errs about 2x more than the dense
  one (in such a gap 100x, converging to it only at about 800 points); with the same
  points at the faces as inside, the RMSE over the whole box reached 2.2x the dense
  one (2-D, 5 000 points).  Measured (the Franke functions, thin-plate spline and
  cubic with a linear tail, 500 to 5 000 uniform points, 5-6 seeds, on 2e4 uniform
  points over the box; PU over dense, the worst case, before -> now): RMSE 2.06 ->
  1.56 (2-D, thin-plate spline, 5 000 points; 2.2 -> 1.64 on another draw of the
  evaluation points), 1.43 -> 1.49 (2-D, cubic), 1.47 -> 1.36 (3-D, thin-plate
  spline), 1.73 -> 1.66 (3-D, cubic); the max error 3.4 -> 2.0 (2-D, a point in a gap
  at a face), 1.0-1.9 elsewhere.  The faces' factor is 2 in 2-D, where the face
  cells are few (6% of the patches at 1e5 points), and 1.25 in 3-D, where they are
  many (22% at 1e5 points; 2x would double the fit time for a ratio already below
  1.7x).  The corners' is 4 in any dimension (2^d patches): 8 in 3-D doubled the fit
  at 5 000 points for no gain.  Cost (3-D, fit + evaluation): 1.45x at 5 000 points,
  1.16-1.2x at 1e5, 1.04x at 3e5 (the faces' share falls as ``n^(-1/3)``); the same
  memory.
- **Sizes, measured** (Franke functions, thin-plate spline with a linear tail, uniform
  points, RMSE on 2e4 random points): enlarging patches to ``patch_points`` rather
  than half of it lowers the error by 1.2-1.4x at the same cost (these with as many
  points at the faces as inside); ``patch_points`` 100
  against 64 lowers it a further 1.2-1.4x for about twice the fit time; against the
  dense interpolant the error is 1.5x (3-D, 4 000 points) and 1.6-2.0x (2-D, 2 000 to
  5 000 points).  The overlap 1.5 against 1.25 changes the error by less than 10% for
  about 1.5-2x the time; 1.1 leaves weights near 0 at cell corners, where the blend's
  gradient grows.  The margin 1.3 against 1 (same ``patch_points``) lowers the error
  inside the data's hull by 1.3-1.9x (2-D and 3-D) for about 2x the fit time, which
  buys more than 1.5x larger patches do.
- **Outside the box**: a query is evaluated by the patches whose balls reach it (they
  extend past the box by at least the overlap); a query that no ball reaches takes the
  local interpolant of the patch of its nearest cell with the least ``|x - c_j| /
  rho_j``: extrapolation, continuous inside the covering only.
- **The local solves** are those of :func:`~fastrbf.interpolate` (the null-space method
  and Cholesky, the monomials of the points shifted and scaled into the patch's box, as
  SciPy's local mode), one compiled task per patch on fastrbf's worker threads
  (:mod:`fastrbf._jit.pou`); each task writes only its patch's arrays, and a query's
  sums run over its patches in ascending order, so results are bitwise the same for
  any thread count.  float64 inside; predictions (and gradients) in the dtype of the
  data, as :class:`~fastrbf.models.common.KernelModel` (the model keeps float64 weights:
  a float32 copy would not reproduce the data).
- **Ill-posed patches raise**, naming the patch's centre and the remedy: fewer points
  than monomials or points that do not determine the tail (``ValueError``), duplicate
  points with zero smoothing or a local system that is not positive definite
  (:class:`~fastrbf.NotPositiveDefiniteError`).  A patch whose solve misses its own
  data by more than 1e-6 of max |Y| warns (``scipy.linalg.LinAlgWarning``), as
  :func:`~fastrbf.interpolate`.
- ``length_scale``: the covering and the local systems are built on the data divided by
  the scales (the tail spans the same polynomials either way).
- **One algorithm, two backends**: the fit is :func:`covering`, :func:`patch_radii`
  (from the nearest distances of :func:`neighbour_searches`), :func:`solve_patches` (a range of
  patches from the points that can fall in them) and :func:`finish`; in memory one
  range holds every patch, :mod:`fastrbf.dask.pou` routes the blocks' points to
  several.
- Fit and evaluation time at 1e6 points in 3-D: docs/performance.md, 'Models and
  approximations'.
"""

import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, overload

import numpy as np

from .. import _validation as _v
from .._jit import pou as _jp
from .._lazy import scipy
from .._typing import ArrayLike, KernelArg, Threads
from ..kernels import check_kernel
from ..linalg import NotPositiveDefiniteError
from ..neighbors._knn import knn
from .common import check_query

_F64 = np.dtype(np.float64)

#: patch radius over the half diagonal of a grid cell
OVERLAP = 1.25
#: a patch's points lie within this factor times the radius of its weight
MARGIN = 1.3
#: the points a patch holds on average (data spread evenly over the bounding box)
PATCH_POINTS = 100
#: a patch of a cell on the box's faces (or edges) holds this many times ``patch_points``
#: in 2-D, and ``FACE_POINTS`` times in 3-D and more dimensions
FACE_POINTS_2D = 2.0
FACE_POINTS = 1.25
#: a patch of a cell at a corner of the box holds this many times ``patch_points``
CORNER_POINTS = 4.0


@dataclass(frozen=True, eq=False)
class PartitionOfUnityInterpolant:
    """A partition-of-unity RBF interpolant (``interpolate(..., method="pu")``,
    :func:`fastrbf.partition_of_unity`); arrays only, picklable.

    The covering and the patches are in the units the kernel sees (the data divided
    by ``length_scale`` when it is given).

    Attributes
    ----------
    centers : ndarray of shape (P, d)
        The centre of each patch (the centres of the grid's cells).
    radii : ndarray of shape (P,)
        The radius of each patch's weight (its points lie within ``MARGIN`` times it,
        or further for the patches at the box's faces and corners).
    patch_sizes : ndarray of shape (P,), int64
        The number of data points of each patch.
    patch_x : ndarray of shape (d, S)
        The points of patch ``j`` as columns ``ptr[j]:ptr[j + 1]`` (``ptr`` the running
        sum of ``patch_sizes``).
    patch_w : ndarray of shape (k, S)
        Their kernel weights.
    poly_coef : ndarray of shape (P, q, k)
        The tail of each patch.
    poly_shift, poly_scale : ndarray of shape (P, d)
        Each patch's monomials are of ``(x - shift) / scale``.
    poly_powers : ndarray of shape (q, d)
    grid_lo, grid_cell : ndarray of shape (d,)
        The grid: cell ``i`` of dimension ``a`` starts at ``lo[a] + i cell[a]``.
    grid_counts : ndarray of shape (d,), int64
    cell_ptr, cell_patches : ndarray, int64
        The patches that meet cell ``c``: ``cell_patches[cell_ptr[c]:cell_ptr[c + 1]]``.
    kernel, gamma, degree, coef0 :
        The kernel and the tail's degree.
    alpha : ndarray of shape (n,)
        The smoothing of every data point.
    length_scale : ndarray of shape (d,) or None
    dtype : numpy.dtype
    single_output : bool
    solver : str
        ``"pu"``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import partition_of_unity
    >>> X = np.random.default_rng(0).random((500, 2))
    >>> m = partition_of_unity(X, np.sin(3 * X[:, 0]) + X[:, 1], patch_points=40)
    >>> m.solver, m.centers.shape[1], bool(m.patch_sizes.min() >= 40)
    ('pu', 2, True)
    """

    centers: np.ndarray
    radii: np.ndarray
    patch_sizes: np.ndarray
    patch_x: np.ndarray
    patch_w: np.ndarray
    poly_coef: np.ndarray
    poly_shift: np.ndarray
    poly_scale: np.ndarray
    poly_powers: np.ndarray
    grid_lo: np.ndarray
    grid_cell: np.ndarray
    grid_counts: np.ndarray
    cell_ptr: np.ndarray
    cell_patches: np.ndarray
    kernel: KernelArg
    gamma: float
    degree: int
    coef0: float
    alpha: np.ndarray
    length_scale: np.ndarray | None
    dtype: np.dtype
    single_output: bool
    solver: str = "pu"

    @overload
    def predict(self, X: ArrayLike, *, return_grad: Literal[False] = False,
                n_threads: Threads = None) -> np.ndarray: ...

    @overload
    def predict(self, X: ArrayLike, *, return_grad: Literal[True],
                n_threads: Threads = None) -> tuple[np.ndarray, np.ndarray]: ...

    def predict(self, X: ArrayLike, *, return_grad: bool = False,
                n_threads: Threads = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Evaluate the blend of the patches at the rows of ``X``.

        Parameters
        ----------
        X : array_like of shape (m, d)
        return_grad : bool, default False
            Also return the gradient in ``x``, through the blend (``sum_j grad(w_j)
            s_j + w_j grad(s_j)`` over the sum of the weights, by the quotient rule).
        n_threads : int, optional

        Returns
        -------
        ndarray of shape (m,) or (m, k)
        grad : ndarray of shape (m, d) or (m, k, d)
            With ``return_grad=True``.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import partition_of_unity
        >>> X = np.random.default_rng(1).random((400, 2))
        >>> m = partition_of_unity(X, X[:, 0] - 2 * X[:, 1], patch_points=30)
        >>> f, grad = m.predict([[0.5, 0.5]], return_grad=True)
        >>> f.round(8).tolist(), grad.round(6).tolist()  # the linear tail reproduces a plane
        ([-0.5], [[1.0, -2.0]])
        """
        want_grad = _v.check_bool(return_grad, "return_grad")
        d = self.centers.shape[1]
        Xq, dtype = check_query(self.dtype, d, X)
        Xk = Xq if self.length_scale is None else _v.scale_features(Xq, self.length_scale, _F64, "X")
        m = Xk.shape[0]
        k = self.patch_w.shape[0]
        lo, inv, counts, strides = _grid_arrays(self.grid_lo, self.grid_cell, self.grid_counts)
        cells = np.empty(m, dtype=np.int64)
        _jp.cells_of.run(n_threads, Xk, lo, inv, counts, strides, cells)
        order = np.argsort(cells, kind="stable")
        ptr = _ptr(self.patch_sizes)
        spec = check_kernel(self.kernel).spec(np.full(max(1, int(self.patch_sizes.max())), self.gamma), self.coef0, 1)
        out = np.empty((m, k))
        if want_grad:
            _v.check_memory(8 * m * k * (d + 1), f"predict with the gradient: the {m} x {k} x {d} float64 Jacobian",
                            "predict in batches of fewer query points (`X`).")
        gout = np.empty((m, k, d)) if want_grad else None
        _jp.blend.run(n_threads, Xk, order, self.patch_x, self.patch_w, ptr, self.poly_coef, self.poly_shift,
                      self.poly_scale, self.centers, self.radii, cells, self.cell_ptr, self.cell_patches,
                      self.poly_powers, spec.phi, spec.g, spec.c, spec.degree, out, gout)
        _v.check_result(out, "predict", "`X` and the interpolant's data")
        out = out.astype(dtype, copy=False)
        if gout is None:
            return out[:, 0] if self.single_output else out
        _v.check_result(gout, "The gradient", "`X` and the interpolant's data")
        if self.length_scale is not None:
            gout /= self.length_scale
        gout = gout.astype(dtype, copy=False)
        return (out[:, 0], gout[:, 0]) if self.single_output else (out, gout)


def _ptr(sizes):
    ptr = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    return ptr


def _grid_arrays(lo, cell, counts):
    """(lo, inverse cell sizes (0 for a flat dimension), counts, row-major strides)."""
    inv = np.zeros_like(cell)
    np.divide(1.0, cell, out=inv, where=cell > 0)
    strides = np.ones_like(counts)
    for a in range(counts.shape[0] - 2, -1, -1):
        strides[a] = strides[a + 1] * counts[a + 1]
    return lo, inv, counts, strides


def grid_for(lo, hi, n, patch_points):
    """(cell sizes, cell counts, base radius) of the covering of the box ``lo:hi`` for
    ``n`` points: cells about cubic, sized so that a ball of radius ``OVERLAP`` times
    a cell's half diagonal holds ``patch_points`` points of data spread evenly."""
    ext = hi - lo
    live = ext > 0
    de = int(live.sum())
    counts = np.ones(lo.shape[0], dtype=np.int64)
    if de:
        ball = math.pi ** (de / 2) / math.gamma(de / 2 + 1) * (OVERLAP * MARGIN * math.sqrt(de) / 2) ** de
        vol = float(np.prod(ext[live]))
        h = (patch_points * vol / (n * ball)) ** (1.0 / de)
        counts[live] = np.maximum(1, np.ceil(ext[live] / h)).astype(np.int64)
    cell = ext / counts
    rho = OVERLAP * MARGIN * 0.5 * float(np.sqrt(np.sum(cell * cell)))
    return cell, counts, (rho if rho > 0 else 1.0)


def _fmt(c):
    return "(" + ", ".join(f"{v:.6g}" for v in c) + ")"


class Covering(NamedTuple):
    """The grid of a covering (``lo``, cell sizes, counts, inverse sizes, row-major
    strides), its patch centres (the cells' centres, row-major) and the least radius of
    a patch's points."""

    lo: np.ndarray
    cell: np.ndarray
    counts: np.ndarray
    inv: np.ndarray
    strides: np.ndarray
    centers: np.ndarray
    rho0: float


class LocalSystem(NamedTuple):
    """What every patch solves: the kernel entry and value, gamma, the tail's degree and
    monomials, coef0."""

    entry: Any
    kernel: KernelArg
    gamma: float
    degree: int
    powers: np.ndarray
    coef0: float


class Patches(NamedTuple):
    """The solved patches of a range of patch ids (the arrays of
    :class:`PartitionOfUnityInterpolant` for them, and per patch its status, the two
    global rows of a duplicate or the column of a breakdown, and its residual)."""

    sizes: np.ndarray
    Pt: np.ndarray
    Wt: np.ndarray
    coef: np.ndarray
    shift: np.ndarray
    scale: np.ndarray
    status: np.ndarray
    info: np.ndarray
    resid: np.ndarray


def covering(lo: np.ndarray, hi: np.ndarray, n: int, patch_points: int) -> Covering:
    """The covering of the box ``lo:hi`` of ``n`` points (see :func:`grid_for`)."""
    d = lo.shape[0]
    cell, counts, rho0 = grid_for(lo, hi, n, patch_points)
    n_cells = int(np.prod(counts))
    _v.check_memory(8 * n_cells * (3 * d + 8), f"partition_of_unity: the {n_cells} patches", "use a larger "
                    "`patch_points`.")
    glo, inv, counts, strides = _grid_arrays(lo, cell, counts)
    axes = [lo[a] + (np.arange(counts[a]) + 0.5) * cell[a] for a in range(d)]
    centers = np.stack([g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")], axis=1)
    return Covering(glo, cell, counts, inv, strides, np.ascontiguousarray(centers), rho0)


def neighbour_searches(cov: Covering, n: int, patch_points: int) -> list[tuple[np.ndarray, int]]:
    """The nearest-point searches that size the patches, as (patch ids, k): every patch
    with ``k = patch_points`` (its weight's radius), then the patches of the cells on
    the box's faces and edges with ``FACE_POINTS_2D`` (1-D and 2-D) or ``FACE_POINTS``
    times as many and those of its corner cells with ``CORNER_POINTS`` times as many
    (their points).  A cell is on a face where it is the first or last of the grid
    along a dimension of nonzero extent, at a corner where it is so along all of them;
    ``k`` is at most ``n``, and a group is left out where its ``k`` is that of the
    first."""
    P = cov.centers.shape[0]
    live = np.flatnonzero(cov.cell > 0)
    cell = np.unravel_index(np.arange(P, dtype=np.int64), tuple(int(c) for c in cov.counts))
    touched = np.zeros(P, dtype=np.int64)  # the dimensions in which the cell is at an end of the grid
    for a in live:
        touched += (cell[a] == 0) | (cell[a] == cov.counts[a] - 1)
    k0 = min(n, patch_points)
    corner = touched == live.shape[0] if live.shape[0] else np.zeros(P, dtype=bool)
    out = [(np.arange(P, dtype=np.int64), k0)]
    face = FACE_POINTS_2D if live.shape[0] <= 2 else FACE_POINTS
    for sel, factor in (((touched > 0) & ~corner, face), (corner, CORNER_POINTS)):
        k = min(n, math.ceil(factor * patch_points))
        if k > k0 and sel.any():
            out.append((np.flatnonzero(sel), k))
    return out


def patch_radii(cov: Covering, searches: list[tuple[np.ndarray, int]],
                kth_sqdist: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(the radius of each patch's points, the radius of its weight) from the squared
    distances to the k-th nearest point of each of :func:`neighbour_searches`: the
    weight's is the covering's, or enlarged to reach the ``patch_points``-th nearest
    point, over ``MARGIN``; the points' is ``MARGIN`` times it, or enlarged to reach
    the k-th nearest point of the patch's later search."""
    rho = np.maximum(cov.rho0, np.sqrt(kth_sqdist[0]) * (1 + 1e-6))
    radii = rho / MARGIN
    for (ids, _), d2 in zip(searches[1:], kth_sqdist[1:], strict=True):
        rho[ids] = np.maximum(rho[ids], np.sqrt(d2) * (1 + 1e-6))
    return rho, radii


def solve_patches(cov: Covering, centers: np.ndarray, rho: np.ndarray, X: np.ndarray, T: np.ndarray,
                  alpha: np.ndarray, index: np.ndarray, local: LocalSystem, n_threads) -> Patches:
    """Solve the patches ``centers``, ``rho`` (a range of the covering's) from the points
    ``X`` (float64, every point within their radii among them, any order; ``T``,
    ``alpha`` alike, ``index`` their global rows): the points are put in the order of
    (cell, global row), so a patch's system does not depend on which other points came."""
    n, d = X.shape
    k = T.shape[1]
    q = local.powers.shape[0]
    P = centers.shape[0]
    cells = np.empty(n, dtype=np.int64)
    _jp.cells_of.run(n_threads, X, cov.lo, cov.inv, cov.counts, cov.strides, cells)
    order = np.lexsort((index, cells))
    Xs = np.ascontiguousarray(X[order])
    Ts = np.ascontiguousarray(T[order])
    As = np.ascontiguousarray(alpha[order])
    rows = index[order]
    cell_start = _ptr(np.bincount(cells, minlength=int(np.prod(cov.counts))).astype(np.int64))
    del cells
    ptr = np.zeros(P + 1, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    _jp.patch_members.run(n_threads, centers, rho, Xs, cell_start, cov.lo, cov.inv, cov.counts, cov.strides, False,
                          ptr, none)
    np.cumsum(ptr, out=ptr)
    S = int(ptr[-1])
    sizes = np.diff(ptr)
    pmax = int(sizes.max()) if P else 0
    _v.check_memory(S * (8 * (d + k) + 8) + 8 * 4 * pmax * pmax,
                    f"partition_of_unity: {S} patch points (largest patch {pmax})",
                    "use a smaller `patch_points` (clustered data make large patches: spread them, or fit the "
                    "clusters separately).")
    members = np.empty(S, dtype=np.int64)
    _jp.patch_members.run(n_threads, centers, rho, Xs, cell_start, cov.lo, cov.inv, cov.counts, cov.strides, True,
                          ptr, members)
    spec = local.entry.spec(np.full(max(1, pmax), local.gamma), local.coef0, 1)
    out = Patches(sizes, np.empty((d, S)), np.empty((k, S)), np.zeros((P, q, k)), np.zeros((P, d)), np.ones((P, d)),
                  np.zeros(P, dtype=np.int64), np.zeros((P, 2), dtype=np.int64), np.zeros(P))
    _jp.patch_fit.run(n_threads, ptr, members, Xs, Ts, As, local.powers, spec.phi, spec.g, spec.c, spec.degree,
                      out.Pt, out.Wt, out.coef, out.shift, out.scale, out.status, out.info, out.resid)
    dup = out.status == _jp.DUPLICATE
    out.info[dup] = rows[out.info[dup]]  # the duplicates' global rows
    return out


def finish(cov: Covering, radii: np.ndarray, parts: list[Patches], local: LocalSystem, alpha: np.ndarray,
           ls: np.ndarray | None, dtype: np.dtype, single: bool, y_max: float) -> "PartitionOfUnityInterpolant":
    """The model from the solved patches (in the order of the patch ids) and the radii
    of their weights, or the error or warning of the first ill-posed or
    ill-conditioned patch."""
    p = Patches(*(np.concatenate(arrs, axis=1 if name in ("Pt", "Wt") else 0)
                  for name, arrs in zip(Patches._fields, zip(*parts, strict=True), strict=True)))
    centers = cov.centers
    unit = 1.0 if ls is None else ls
    if p.status.any():
        _raise_for(p.status, p.info, p.sizes, centers * unit, local.powers.shape[0], local.degree)
    _v.check_result(p.Wt, "The model's weight matrix", "`Y`, `alpha` and `gamma`",
                    "rescale `Y`, or use a larger `alpha` (or `gamma`).")
    worst = int(np.argmax(p.resid))
    if p.resid[worst] > 1e-6 * y_max:
        warnings.warn(f"The local system of the patch centred at {_fmt(centers[worst] * unit)} reproduces `Y` only "
                      f"to {p.resid[worst] / max(y_max, 1e-300):.1e} relative (ill-conditioned). Use a smoothing "
                      "`alpha` > 0, a larger `gamma` (kernels that are not scale invariant), or remove near-duplicate "
                      "points.", scipy.linalg.LinAlgWarning, stacklevel=4)
    n_cells = centers.shape[0]
    cell_ptr = np.zeros(n_cells + 1, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    _jp.cell_patches(centers, radii, cov.lo, cov.cell, cov.inv, cov.counts, cov.strides, False, cell_ptr, none)
    np.cumsum(cell_ptr, out=cell_ptr)
    patches = np.empty(int(cell_ptr[-1]), dtype=np.int64)
    _jp.cell_patches(centers, radii, cov.lo, cov.cell, cov.inv, cov.counts, cov.strides, True, cell_ptr, patches)
    return PartitionOfUnityInterpolant(
        centers, radii, p.sizes, p.Pt, p.Wt, p.coef, p.shift, p.scale,
        np.ascontiguousarray(local.powers, dtype=np.int64), cov.lo, cov.cell, cov.counts, cell_ptr, patches,
        local.kernel, float(local.gamma), int(local.degree), float(local.coef0), alpha, ls, dtype, single)


def fit_partition_of_unity(Xk, T, single, dtype, local, alpha, ls, patch_points, n_threads):
    """The :class:`PartitionOfUnityInterpolant` of checked data (``Xk`` float64, divided
    by ``ls`` if given; ``T`` (n, k) float64; ``alpha`` (n,)) and parameters: the
    in-memory passes (one group of all the patches and all the points)."""
    n = Xk.shape[0]
    cov = covering(Xk.min(axis=0), Xk.max(axis=0), n, patch_points)
    searches = neighbour_searches(cov, n, patch_points)
    rho, radii = patch_radii(cov, searches, [knn(Xk, cov.centers[ids], k, n_threads=n_threads)[1][:, -1].copy()
                                             for ids, k in searches])
    part = solve_patches(cov, cov.centers, rho, Xk, T, alpha, np.arange(n, dtype=np.int64), local, n_threads)
    return finish(cov, radii, [part], local, alpha, ls, dtype, single, float(np.abs(T).max()) if T.size else 0.0)


def _raise_for(status, info, sizes, centers, q, degree):
    j = int(np.flatnonzero(status)[0])
    where = f"the patch centred at {_fmt(centers[j])} ({int(sizes[j])} data points)"
    code = int(status[j])
    if code == _jp.TOO_FEW:
        raise ValueError(f"The local system of {where} has fewer points than the {q} monomials of the degree-{degree} "
                         "polynomial tail. Use a larger `patch_points` or a lower `degree`.")
    if code == _jp.TAIL_RANK:
        raise ValueError(f"The points of {where} do not determine a polynomial of degree {degree} (they lie on a "
                         "line or a plane, or too few are distinct). Use a larger `patch_points` or a lower `degree`.")
    if code == _jp.DUPLICATE:
        a, b = sorted(int(i) for i in info[j])
        raise NotPositiveDefiniteError(f"The local system of {where} is singular: `X[{a}]` and `X[{b}]` are the same "
                                       "point with zero smoothing. Remove the duplicates or use a smoothing `alpha` "
                                       "> 0.")
    raise NotPositiveDefiniteError(
        f"The local system of {where} is not positive definite (numerically singular) on the polynomial null space: "
        f"the factorisation broke down at column {int(info[j, 0])}. Causes: near-duplicate points with `alpha` = 0, "
        "or a `gamma` so small against the spacing of the points that the kernel matrix is numerically singular. "
        "Remedies: a smoothing `alpha` > 0, a larger `gamma`, a lower `degree`, or removing near-duplicate points.",
        column=int(info[j, 0]))
