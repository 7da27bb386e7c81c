"""Nearest neighbours and kernel smoothing: k-NN, the uniform-influence RBF vote and the
Nadaraya-Watson kernel regression, all fused (tiles of distances are consumed in
cache; memory O((n + m) d + m k), never an m x n matrix).

Decisions:

- ``knn`` keeps, per query, a sorted list of the k best while it scans the training
  points in index order; a later point replaces a kept one only when strictly nearer,
  so ties go to the lowest index (``np.argsort(kind="stable")`` on the exact distances).
  Distances are direct differences (the ``sqdist`` arithmetic: exact to a few ulp).
  ``method="tree"`` answers from a kd-tree (:mod:`fastrbf.neighbors._kdtree`) with the same
  result bit for bit: the same distance arithmetic, candidates ordered by (distance,
  index), and only nodes proven unable to enter the list skipped.  ``"auto"`` (the
  default) takes the tree where a cost model of d, n, m and k, fitted to timings,
  expects it (the build included) to take under 0.8 times the brute force: at low
  dimension with many queries (d = 3, 1e6 points and 1e5 queries: the tree); the
  brute force for few queries, k > n / 4 or d >= 12 (:func:`fastrbf.neighbors._kdtree.use_tree`).
  From :data:`GEMM_MIN_FEATURES` features on, the brute force screens the points by
  GEMM first (:func:`_knn_gemm`): the norm expansion with its rigorous error bound rules
  out every point farther than k others, and only the rest (about k (1 + log(n / k))
  per query) are measured directly, so the result keeps those bits while the time is
  the GEMM's (d = 1024: 7x faster than measuring every pair directly).
- ``nadaraya_watson`` and the classifying ``rbf_vote`` compute the kernel weights
  relative to the nearest training point, ``w_j = k(x, x_j) / k(x, x_nearest)``
  (``exp(-gamma (d_j^2 - d_min^2))``): the ratio (Nadaraya-Watson) and the sign or
  argmax (the vote) are unchanged, and the weights can never all underflow.  When the
  plain weights would all be 0 (a query far from every training point, or a huge
  ``gamma``), the result is therefore the proper limit: the nearest neighbour's value
  (the mean over exactly tied nearest points) - the nearest-neighbour limit of a
  narrow Gaussian.  Far from the data (for the width: where ``gamma u d_min``
  exceeds ``2**-10``, ``u`` the unit roundoff and ``d_min`` the nearest squared
  distance; ``sqrt(gamma) u r_min`` for the laplacian) the rounded distances no longer
  tell the points apart (every ``x - x_j`` rounds alike): those queries are redone
  with the differences of squared distances to the nearest point computed directly,
  ``sum_a (x_m - x_j)_a ((x - x_j)_a + (x - x_m)_a)`` in float64 (accurate relative
  to ``|x_m - x_j| |x - x_m|``, not to ``d_min``): the nearest point is the true one and
  near-tied points keep their weights.  Nearer queries are untouched (the same bits).
- ``rbf_vote`` for regression is the unnormalised sum ``sum_m y_m exp(-gamma ||x -
  x_m||^2)``, computed as the relative sum above times the kernel value of the
  nearest point (through logarithms where that factor alone would underflow); it may
  underflow to 0 (or overflow to inf) legitimately.
- Any magnitude of finite input gives the correct result (never a refusal): when
  squared distances could overflow (coordinates beyond about 1e154 in float64, 1e19
  in float32) or would lose precision to underflow (tiny coordinates), the points and
  queries are multiplied by a power of two (exact: the same neighbours, ties included,
  and the same weights) scaled no more than needed, and the scale is folded into
  ``gamma``.  ``knn`` then reports the squared distances scaled back: ``inf`` where the
  true value exceeds the largest float of the dtype (its correctly rounded value).
  With ``M`` the largest magnitude of the input, only squared distances below about
  ``M**2 * 2**-2090`` (float32: ``M**2 * 2**-265``) can be lost to underflow - data
  spanning hundreds of orders of magnitude.  For ``knn``, ``knn_predict`` and
  ``radius_neighbors`` distances equal once rounded are ties (far from the data, points
  whose distances differ by less than the rounding of the distances themselves are
  equally near); the kernel sums redo such queries (above).  Likewise targets so large that their
  weighted sums could overflow are scaled by a power of two.
- Every message names the argument as the caller passed it (``X``, ``Y``, ``Xq``).
"""

from typing import Literal, overload

import numpy as np

from .. import _pairwise as _pw
from .. import _threads
from .. import _validation as _v
from .._jit import grad as _jgrad
from .._jit.neighbors import brute as _jn
from .._scaling import ldexp as _ldexp
from .._scaling import ldexp_float as _ldexp_float
from .._scaling import max_abs as _max_abs
from .._scaling import shift_for as _shift_for
from .._typing import ArrayLike, FloatArray, IntArray, Threads
from ..cuda.arrays import on_device
from . import _kdtree

_F64 = np.dtype(np.float64)


def _check_k(k, n):
    return _v.check_int(k, "k", 1, n, text=f"an int in [1, n_samples] = [1, {n}]")


def _check_classify(classify):
    return _v.check_bool(classify, "classify", text="True or False")


def _check_data(X, Xq, length_scale=None):
    """Validated (X, Xq) under the caller's names (each feature divided by its
    ``length_scale``, if given), and the result dtype."""
    Xa = _v.check_data(X, "X")
    Qa = _v.check_data(Xq, "Xq")
    _v.check_features(Xa, Qa, "X", "Xq")
    dtype = _v.result_dtype(Xa, Qa)
    ls = _v.check_length_scale(length_scale, Xa.shape[1])
    if ls is not None:
        Xa, Qa = _v.scale_features(Xa, ls, dtype, "X"), _v.scale_features(Qa, ls, dtype, "Xq")
    return Xa, Qa, dtype


def _scaled(Xa, Qa, dtype):
    """(X, Xq) as C-contiguous arrays of ``dtype``, multiplied by ``2**-t`` when their
    squared distances could overflow or underflow (see the module docstring), and t."""
    Xc, Qc = _v.to_dtype(Xa, dtype), _v.to_dtype(Qa, dtype)
    t = _shift_for(_max_abs(Xc, Qc), dtype, Xc.shape[1])
    return _ldexp(Xc, -t), _ldexp(Qc, -t), t


def _split_pow2(E, dtype):
    """Two powers of two of ``dtype`` with exponents of the same sign adding up to E
    (clamped to what two normal factors can hold: beyond, the product only decides
    whether a kernel weight is 0 or 1 anyway)."""
    emax = int(np.finfo(dtype).maxexp) - 1  # 127, 1023
    emin = int(np.finfo(dtype).minexp)  # -126, -1022
    E = min(max(E, 2 * emin), 2 * emax)
    E1 = E // 2 if E >= 0 else -((-E) // 2)
    return np.ldexp(dtype.type(1), E1), np.ldexp(dtype.type(1), E - E1)


def _knn(Xa, Qa, k, dtype, n_threads, method="brute"):
    """(idx, squared distances in the scaled units, t): true distances are
    ``d2 * 2**(2 t)``."""
    k = _check_k(k, Xa.shape[0])
    _threads.resolve(n_threads)
    m, d = Qa.shape
    n = Xa.shape[0]
    tree = method == "tree" or (method == "auto" and _kdtree.use_tree(n, m, d, k))
    if tree:
        extra = _kdtree.tree_bytes(n, d, dtype.itemsize) + 16 * m
    elif d >= GEMM_MIN_FEATURES:  # float64 centred copies; per thread a tile, the heaps, the candidates
        extra = 8 * (n + m) * d + _threads.resolve(n_threads) * (8 * TILE_ROWS * (TILE_COLS + k) + (4 << 20))
    else:
        extra = 0
    _v.check_memory(m * k * (8 + dtype.itemsize) + 2 * (n + m) * d * dtype.itemsize + extra,
                    f"knn with k={k} for {m} query points", "query in batches of fewer points (`Xq`) or use a smaller `k`.")
    Xc, Qc, t = _scaled(Xa, Qa, dtype)
    if tree:
        idx, dist = _kdtree.knn(_kdtree.build(Xc, n_threads), Qc, k, n_threads)
        return idx, dist, t
    idx = np.empty((m, k), dtype=np.int64)
    dist = np.empty((m, k), dtype=dtype)
    if d >= GEMM_MIN_FEATURES:
        _knn_gemm(Xc, Qc, k, idx, dist, n_threads)
        return idx, dist, t
    Xt = np.ascontiguousarray(Xc.T)
    _jn.knn_rows.run(n_threads, Qc, Xt, k, idx, dist)
    return idx, dist, t


#: from this many features on, the brute force screens candidates by GEMM
#: (:func:`_knn_gemm`); below, every distance is computed directly
GEMM_MIN_FEATURES = 48

#: the GEMM screen's tiles: query rows (at most) and training points per product
TILE_ROWS, TILE_COLS = 256, 1024


def _knn_gemm(Xc, Qc, k, idx, dist, n_threads):
    """The brute force at many features, with the bits of the direct one.

    The expansion ``||q||^2 + ||x||^2 - 2 q.x`` of rows centred as the certified path
    centres them (:func:`fastrbf._pairwise.centred`), one GEMM per tile, bounds every
    distance within its rigorous error bound.  Per query, a heap keeps the k smallest upper bounds so
    far; a point whose lower bound exceeds the heap's largest cannot be among the k
    nearest (k others are nearer), and only the others are measured by direct
    differences (the arithmetic of the direct brute force) and ranked as it ranks them:
    the same neighbours, ties and distances bit for bit, whatever the tiles and the
    thread count, at the cost of the GEMM."""
    m, d = Qc.shape
    n = Xc.shape[0]
    eps = np.finfo(np.float64).eps
    # twice the certified path's bound (2 d + 8) eps (||q||^2 + ||x||^2) for one GEMM
    # over all d features in any order (a looser bound than the chunked GEMMs' only
    # measures a few more points: no chunks needed here), and twice the (d + 2) eps
    # relative error of a direct distance in the result dtype (with the roundings of
    # the bounds themselves)
    eta = 2 * (2 * d + 8) * eps
    gam = 2 * (d + 2) * float(np.finfo(Xc.dtype).eps) + 16 * eps
    Qg, Xg, nq, nx = _pw.centred(Qc, Xc)
    nt = _threads.for_work(m * n * (d + 8), n_threads)
    cap = max(4 * k, 256)
    rows = max(8, min(TILE_ROWS, -(-m // nt), (4 << 20) // (16 * cap)))
    cols = min(n, TILE_COLS)

    def work(lo, hi):
        b = min(rows, hi - lo)
        G = np.empty(b * cols, dtype=np.float64)  # (tiles of any width as C-contiguous views)
        heap = np.empty((b, k), dtype=np.float64)
        cand = np.empty((b, cap), dtype=np.int64)
        lows = np.empty((b, cap), dtype=np.float64)
        nc = np.empty(b, dtype=np.int64)
        scratch = (np.empty(_jn.CW, dtype=np.int64), np.empty(_jn.CW, dtype=Xc.dtype))
        for r0 in range(lo, hi, rows):
            r1 = min(hi, r0 + rows)
            br = r1 - r0
            heap[:br] = np.inf
            nc[:br] = 0
            for c0 in range(0, n, cols):
                c1 = min(n, c0 + cols)
                Gt = G[: br * (c1 - c0)].reshape(br, c1 - c0)
                np.matmul(Qg[r0:r1], Xg[c0:c1].T, out=Gt)
                _jn.knn_screen(Gt, nq[r0:r1], nx[c0:c1], c0, eta, 1.0 + gam, 1.0 - gam, heap[:br], cand[:br],
                               lows[:br], nc[:br])
            _jn.knn_measure(Qc, r0, Xc, heap[:br], cand[:br], lows[:br], nc[:br], idx, dist, *scratch)

    with _threads.serial_blas():
        _threads.map_ranges(work, m, nt, align=rows)


def knn(X: ArrayLike, Xq: ArrayLike, k: int, *, n_threads: Threads = None,
        length_scale: ArrayLike | None = None, method: str = "auto") -> tuple[IntArray, FloatArray]:
    """The ``k`` nearest training points of each query point.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Training points.
    Xq : array_like of shape (m, d)
        Query points.
    k : int
        1 <= k <= n.
    n_threads : int, optional
    length_scale : float or array_like of shape (d,), optional
        Per-feature scales: distances of the features divided by them (as
        :func:`fastrbf.sqdist`); the returned squared distances are in those units.
    method : {"auto", "tree", "brute"}, default "auto"
        ``"brute"`` scans every training point; ``"tree"`` builds a kd-tree of ``X``
        and prunes (fast at low dimension); both give the same result bit for bit.
        ``"auto"`` takes the tree where it is expected to be faster: low dimension
        and many queries (see the module docstring).

    Returns
    -------
    indices : ndarray of shape (m, k), int64
        Ascending distance; ties to the lowest index.
    sqdist : ndarray of shape (m, k)
        The squared distances (dtype of the inputs); ``inf`` where the true value
        exceeds the largest float of that dtype (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import knn
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> idx, d2 = knn(X, [[1.4], [2.5]], 2)
    >>> idx
    array([[1, 2],
           [2, 3]])
    >>> d2.round(2)
    array([[0.16, 0.36],
           [0.25, 0.25]])
    >>> idx_tree, d2_tree = knn(X, [[1.4], [2.5]], 2, method="tree")
    >>> bool((idx_tree == idx).all() and (d2_tree == d2).all())
    True
    """
    method = _v.check_choice(method, "method", ("auto", "tree", "brute"), text='"auto", "tree" or "brute"')
    if on_device(X, Xq):
        from ..cuda import neighbors as _cuda

        return _cuda.knn(X, Xq, k, length_scale)
    Xa, Qa, dtype = _check_data(X, Xq, length_scale)
    idx, dist, t = _knn(Xa, Qa, k, dtype, n_threads, method)
    return idx, _ldexp(dist, 2 * t)


def _radius2(radius, t, dtype):
    """radius**2 in the units of data scaled by ``2**-t`` (float64, exact for the power
    of two), rounded down to ``dtype``: a distance of ``dtype`` is <= it exactly when it
    is <= the float64 value."""
    rs = float(np.ldexp(radius, -t))
    with np.errstate(over="ignore"):
        r2 = rs * rs
    r2d = dtype.type(r2)
    if float(r2d) > r2:
        r2d = np.nextafter(r2d, dtype.type(-np.inf))
    return r2d


def radius_neighbors(X: ArrayLike, Xq: ArrayLike, radius: float, *, n_threads: Threads = None,
                     length_scale: ArrayLike | None = None) -> tuple[IntArray, IntArray, FloatArray]:
    """The training points within ``radius`` of each query point, from a kd-tree.

    A point is a neighbour when its squared distance (computed as by :func:`knn`: the
    same bits) is ``<= radius**2`` (``radius**2`` in float64; float32 distances are
    compared with it exactly).  The search is exact: a part of the tree is skipped only
    when it is proven to hold no neighbour.  Fast at low dimension; at high dimension it
    costs about what a brute-force scan does.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Training points.
    Xq : array_like of shape (m, d)
        Query points.
    radius : float
        >= 0.
    n_threads : int, optional
    length_scale : float or array_like of shape (d,), optional
        Per-feature scales, as in :func:`knn`: ``radius`` and the returned squared
        distances are in those units.

    Returns
    -------
    indptr : ndarray of shape (m + 1,), int64
        Query ``i``'s neighbours are ``indices[indptr[i]:indptr[i + 1]]``.
    indices : ndarray of shape (indptr[-1],), int64
        Per query, ascending distance; ties to the lowest index.
    sqdist : ndarray of shape (indptr[-1],)
        Their squared distances (dtype of the inputs).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import radius_neighbors
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> indptr, idx, d2 = radius_neighbors(X, [[1.4], [9.0]], 1.0)
    >>> indptr
    array([0, 2, 2])
    >>> idx, d2.round(2)
    (array([1, 2]), array([0.16, 0.36]))
    """
    Xa, Qa, dtype = _check_data(X, Xq, length_scale)
    r = _v.check_real(radius, "radius", low=0)
    _threads.resolve(n_threads)
    n, d = Xa.shape
    m = Qa.shape[0]
    _v.check_memory(_kdtree.tree_bytes(n, d, dtype.itemsize) + 2 * (n + m) * d * dtype.itemsize + 8 * m,
                    f"radius_neighbors for {m} query points", "query in batches of fewer points (`Xq`).")
    Xc, Qc, t = _scaled(Xa, Qa, dtype)
    indptr, idx, dist = _kdtree.radius(_kdtree.build(Xc, n_threads), Qc, _radius2(r, t, dtype), n_threads)
    return indptr, idx, _ldexp(dist, 2 * t)


def _targets(Y, n, classify):
    """(float64 targets (n, t), None, single output?) for regression, or (class codes,
    classes, True)."""
    if classify:
        classes, codes = _v.check_class_labels(Y, n)
        return codes, classes, True
    Ya = _v.check_targets(Y, n)
    single = Ya.ndim == 1
    return np.ascontiguousarray(Ya.reshape(n, -1), dtype=np.float64), None, single


def knn_predict(X: ArrayLike, Y: ArrayLike, Xq: ArrayLike, k: int, *, weights: str = "uniform", classify: bool = False,
                n_threads: Threads = None) -> np.ndarray:
    """k-nearest-neighbour regression (mean) or classification (majority vote).

    As scikit-learn's ``KNeighborsRegressor``/``KNeighborsClassifier`` with the brute
    force algorithm: ``weights="distance"`` weighs by 1 / Euclidean distance (a query
    that coincides with training points takes their values only); votes tie to the
    smallest label.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, t)
        Targets, or class labels (any values) with ``classify=True``.
    Xq : array_like of shape (m, d)
    k : int
    weights : {"uniform", "distance"}
    classify : bool, default False
    n_threads : int, optional

    Returns
    -------
    ndarray of shape (m,) or (m, t)
        Predictions (float64, or float32 when every input is float32), or labels.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import knn_predict
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> knn_predict(X, [0.0, 10.0, 20.0, 30.0], [[1.4]], 2)
    array([15.])
    >>> knn_predict(X, ["a", "a", "b", "b"], [[0.2], [2.9]], 3, classify=True)
    array(['a', 'b'], dtype='<U1')
    """
    weights = _v.check_choice(weights, "weights", ("uniform", "distance"), text='"uniform" or "distance"')
    classify = _check_classify(classify)
    Xa, Qa, dtype = _check_data(X, Xq)
    T, classes, single = _targets(Y, Xa.shape[0], classify)
    m, kk = Qa.shape[0], _check_k(k, Xa.shape[0])
    width = classes.shape[0] if classify else T.shape[1] * kk
    _v.check_memory(8 * m * (2 * kk + width), f"knn_predict with k={kk} for {m} query points",
                    "predict in batches of fewer query points (`Xq`) or use a smaller `k`.")
    idx, d2, _ = _knn(Xa, Qa, kk, dtype, n_threads, "auto")  # the same neighbours either way
    if weights == "uniform":
        w = np.ones(idx.shape)
    else:
        # 1 / r_j relative to the nearest, r_min / r_j (in the scaled units: the same
        # ratios), never overflowing; a query on training points takes their values
        r = np.sqrt(d2.astype(np.float64))
        hit = r[:, 0] == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            w = r[:, :1] / r
        w[hit] = (r[hit] == 0).astype(np.float64)
    if classify:
        votes = np.zeros((m, classes.shape[0]))
        np.add.at(votes, (np.repeat(np.arange(m), idx.shape[1]), T[idx].ravel()), w.ravel())
        return classes[np.argmax(votes, axis=1)]
    w /= w.sum(axis=1, keepdims=True)  # a weighted mean of the targets cannot overflow
    out = np.einsum("mk,mkt->mt", w, T[idx])
    out = out.astype(_v.result_dtype(d2, np.asarray(Y)), copy=False)
    return out[:, 0] if single else out


_NW_KERNELS = ("gaussian", "laplacian")


def _target_shift(T):
    """The exponent t such that ``T * 2**-t`` (max |.| in [0.5, 1)) cannot overflow in a
    sum of ``n`` weighted terms, or lose precision to underflow; 0 if not needed."""
    e = int(np.frexp(_max_abs(T))[1])
    L = max(0, int(T.shape[0] - 1).bit_length())
    return e if (e > 1020 - L or e < -960) else 0


def _nw_units(Xa, Qa, dtype, g, laplacian):
    """(X, Xq scaled as by :func:`_scaled`, their exponent t, and gm, s1, s2: the width
    in the units of the scaled squared distances (distances with laplacian) is
    ``gm * s1 * s2``, gm in [0.5, 1), s1 and s2 powers of two (see ``kernel_weights``), E the
    exponent of s1 s2)."""
    Xc, Qc, t = _scaled(Xa, Qa, dtype)
    gm, ge = np.frexp(np.sqrt(g) if laplacian else g)  # gamma = gm * 2**ge, gm in [0.5, 1)
    E = int(ge) + (1 if laplacian else 2) * t
    s1, s2 = _split_pow2(E, dtype)
    return Xc, Qc, t, gm, s1, s2, E


#: a query is redone by the far pass when the rounding of its squared distances (about
#: the unit roundoff times the nearest one) may move the exponent of its kernel weights
#: by more than this
FAR_EXPONENT_ERROR = 2.0**-10


def _far_rows(dmin, gm, E, laplacian, dtype):
    """The query rows (int64) whose weights the rounding of the distances would decide:
    ``gamma u d_min > FAR_EXPONENT_ERROR`` (laplacian: ``sqrt(gamma) u r_min``), ``u``
    the unit roundoff of ``dtype``, in the scaled units (``gm * 2**E``)."""
    d = dmin.astype(np.float64)
    if laplacian:
        d = np.sqrt(d)
    with np.errstate(divide="ignore"):
        lg = np.log2(d) + (float(np.log2(gm)) + E + float(np.log2(np.finfo(dtype).eps / 2)))
    return np.flatnonzero(lg > np.log2(FAR_EXPONENT_ERROR)).astype(np.int64)


def _far(Xc, Qc, Tt, Ut, gm, E, laplacian, dmin, dtype, n_threads, num, den, gnum=None, gden=None):
    """Redo, by :func:`fastrbf._jit.neighbors.brute.far_sums`, the sums of the query rows
    far from the data for the width (see :func:`_far_rows`): far away every ``x - x_j``
    rounds alike and the plain distances tie, where the differences of squared
    distances computed directly still find the nearest point and weigh the others."""
    rows = _far_rows(dmin, gm, E, laplacian, dtype)
    if rows.size == 0:
        return
    f1, f2 = _split_pow2(E, _F64)
    grad = gnum is not None
    if not grad:
        Ut, gnum, gden = np.empty((0, Tt.shape[1])), np.empty((0, 0, 0)), np.empty((0, 0))
    _jn.far_sums.run(n_threads, rows, Qc, Xc, Tt, Ut, float(gm), float(f1), float(f2), laplacian, grad, num, den,
                     gnum, gden)


def _shifted(Xa, Qa, dtype, T, g, laplacian, n_threads):
    """Kernel sums relative to the nearest training point (see the module docstring):
    (num (m, t) float64 in units of ``2**tT`` (see :func:`_target_shift`), den (m,)
    float64, tT, and lognear (m,) float64 = -log k(x, x_nearest), so that the plain
    kernel sums are ``num * 2**tT * exp(-lognear)``)."""
    Xc, Qc, t, gm, s1, s2, E = _nw_units(Xa, Qa, dtype, g, laplacian)
    tT = _target_shift(T)
    m = Qc.shape[0]
    num = np.empty((m, T.shape[1]))
    den = np.empty(m)
    dmin = np.empty(m, dtype=dtype)
    Xt = np.ascontiguousarray(Xc.T)
    Tt = np.ascontiguousarray(_ldexp(T, -tT).T, dtype=np.float64)
    _jn.shifted_sums.run(n_threads, Qc, Xt, Tt, dtype.type(gm), s1, s2, laplacian, num, den, dmin)
    _far(Xc, Qc, Tt, None, gm, E, laplacian, dmin, dtype, n_threads, num, den)
    d64 = np.sqrt(dmin.astype(np.float64)) if laplacian else dmin.astype(np.float64)
    f1, f2 = _split_pow2(E, np.dtype(np.float64))
    with np.errstate(over="ignore", under="ignore"):
        lognear = ((gm * d64) * f1) * f2
    return num, den, tT, lognear


def _nw_grad(Xa, Qa, dtype, T, g, laplacian, n_threads):
    """(Nadaraya-Watson values (m, t) float64, their gradient (m, t, d) float64): the
    values from the sums of :func:`_shifted`, the gradient by the quotient rule,
    ``grad f = sum_j grad k_j (y_j - f) / sum_j k_j``, from sums of the same relative
    weights.  The targets of the gradient sums are centred on their mid-range (the
    gradient does not change), so that an offset of the targets does not cancel."""
    Xc, Qc, t, gm, s1, s2, E = _nw_units(Xa, Qa, dtype, g, laplacian)
    m, d = Qc.shape
    k = T.shape[1]
    _v.check_memory(8 * m * (k + 1) * (d + 1), f"nadaraya_watson with the gradient for {m} query points",
                    "predict in batches of fewer query points (`Xq`).")
    tT = _target_shift(T)
    mid = T.max(axis=0) / 2 + T.min(axis=0) / 2
    U = T - mid
    tU = _target_shift(U)
    num = np.empty((m, k))
    den = np.empty(m)
    dmin = np.empty(m, dtype=dtype)
    gnum = np.empty((m, k, d))
    gden = np.empty((m, d))
    Xt = np.ascontiguousarray(Xc.T)
    Tt = np.ascontiguousarray(_ldexp(T, -tT).T, dtype=np.float64)
    Ut = np.ascontiguousarray(_ldexp(U, -tU).T, dtype=np.float64)
    _jgrad.shifted_sums_grad.run(n_threads, Qc, Xt, Tt, Ut, dtype.type(gm), s1, s2, laplacian, num, den, dmin,
                                 gnum, gden)
    _far(Xc, Qc, Tt, Ut, gm, E, laplacian, dmin, dtype, n_threads, num, den, gnum, gden)
    values = _ldexp(num / den[:, None], tT)
    # d/dx k_j = -c k_j (x - x_j) (gaussian: c = 2 gamma; laplacian: c = sqrt(gamma) / r_j, the
    # 1 / r_j inside the sums), in the units of the scaled data (x = 2**t x_scaled)
    c = _ldexp_float(np.sqrt(g), tU) if laplacian else _ldexp_float(2.0 * g, t + tU)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        fU = _ldexp(values - mid, -tU)
        grad = -c * (gnum - fU[:, :, None] * gden[:, None, :]) / den[:, None, None]
        grad += 0.0  # no -0.0 where the gradient is 0
    return values, grad


@overload
def nadaraya_watson(X: ArrayLike, Y: ArrayLike, Xq: ArrayLike, *, gamma: float, kernel: str = "gaussian",
                    return_grad: Literal[False] = False, n_threads: Threads = None,
                    length_scale: ArrayLike | None = None) -> FloatArray: ...


@overload
def nadaraya_watson(X: ArrayLike, Y: ArrayLike, Xq: ArrayLike, *, gamma: float, kernel: str = "gaussian",
                    return_grad: Literal[True], n_threads: Threads = None,
                    length_scale: ArrayLike | None = None) -> tuple[FloatArray, FloatArray]: ...


def nadaraya_watson(X: ArrayLike, Y: ArrayLike, Xq: ArrayLike, *, gamma: float, kernel: str = "gaussian",
                    return_grad: bool = False, n_threads: Threads = None,
                    length_scale: ArrayLike | None = None) -> FloatArray | tuple[FloatArray, FloatArray]:
    """Nadaraya-Watson kernel regression ``sum_n k(x, x_n) y_n / sum_n k(x, x_n)``.

    Fused, and safe when every kernel weight underflows: the weights are taken relative
    to the nearest training point, so far from the data (or for a huge ``gamma``) the
    prediction is the nearest neighbour's value (the mean over exact ties), the limit of
    the formula.  Queries so far away that their rounded distances tie (``x - x_j``
    rounds alike for every ``j``) are redone from direct differences of the squared
    distances (see the module docstring), so the nearest point is the true one.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, t)
    Xq : array_like of shape (m, d)
    gamma : float
        > 0; the kernel is ``exp(-gamma r^2)`` (gaussian) or ``exp(-sqrt(gamma) r)``
        (laplacian).
    kernel : {"gaussian", "laplacian"}
    return_grad : bool, default False
        Also return the gradient in ``Xq`` by the quotient rule, ``sum_n grad k(x, x_n)
        (y_n - f(x)) / sum_n k(x, x_n)``, from the same pass as the values (which are
        those of the plain call).  The laplacian's cone at a training point contributes
        0 there (the symmetric subgradient); where every weight but the nearest
        underflows the gradient is 0 (the nearest-neighbour limit is piecewise
        constant).  The targets are centred on their mid-range for it, so its error is
        relative to the spread of the targets, not to their offset.
    n_threads : int, optional
    length_scale : float or array_like of shape (d,), optional
        Per-feature widths: each feature divided by its scale before the kernel (the
        gradient is in the original units).

    Returns
    -------
    ndarray of shape (m,) or (m, t)
    grad : ndarray of shape (m, d) or (m, t, d)
        With ``return_grad=True`` (the Jacobian for several targets).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import nadaraya_watson
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> nadaraya_watson(X, [0.0, 1.0, 4.0], [[1.0], [50.0]], gamma=2.0).round(3)  # far away: the nearest value
    array([1.213, 4.   ])
    >>> f, grad = nadaraya_watson(X, [0.0, 1.0, 4.0], [[1.0], [50.0]], gamma=2.0, return_grad=True)
    >>> grad.round(3)
    array([[1.704],
           [0.   ]])
    """
    kernel = _v.check_choice(kernel, "kernel", _NW_KERNELS)
    want_grad = _v.check_bool(return_grad, "return_grad")
    Xa, Qa, dtype = _check_data(X, Xq, length_scale)
    T, _, single = _targets(Y, Xa.shape[0], False)
    g = _v.check_real(gamma, "gamma", low=0, strict=True)
    _threads.resolve(n_threads)
    out_dtype = _v.result_dtype(dtype, np.asarray(Y))
    if want_grad:
        values, grad = _nw_grad(Xa, Qa, dtype, T, g, kernel == "laplacian", n_threads)
        values, grad = values.astype(out_dtype, copy=False), _ldexp(grad, 0, out_dtype)
        if length_scale is not None:  # the chain rule back to the original units
            grad = (grad / _v.check_length_scale(length_scale, Xa.shape[1])).astype(out_dtype, copy=False)
        return (values[:, 0], grad[:, 0]) if single else (values, grad)
    num, den, tT, _ = _shifted(Xa, Qa, dtype, T, g, kernel == "laplacian", n_threads)
    out = _ldexp(num / den[:, None], tT)  # den >= 1 (the nearest point weighs 1)
    out = out.astype(out_dtype, copy=False)
    return out[:, 0] if single else out


def rbf_vote(X: ArrayLike, Y: ArrayLike, Xq: ArrayLike, *, gamma: float, classify: bool = False,
             n_threads: Threads = None) -> np.ndarray:
    """The full RBF network with uniform influence: every training point votes
    with ``exp(-gamma ||x - x_m||^2)``.

    Regression: the unnormalised sum ``sum_m y_m exp(-gamma ||x - x_m||^2)``.
    Classification: two classes -> the sign of the sum of +-1 votes (positive: the
    second class, as ``np.unique`` orders them); more -> the class with the largest
    one-vs-rest sum.  The vote is computed relative to the nearest training point (a
    positive common factor), so it never underflows: for a huge ``gamma`` it is the
    1-nearest-neighbour prediction.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, t)
        Targets, or class labels with ``classify=True``.
    Xq : array_like of shape (m, d)
    gamma : float
    classify : bool, default False
    n_threads : int, optional

    Returns
    -------
    ndarray of shape (m,) or (m, t), or labels of shape (m,)

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import rbf_vote
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> rbf_vote(X, [1, 1, -1], [[0.5], [2.9]], gamma=1.0, classify=True)
    array([ 1, -1])
    >>> rbf_vote(X, [1.0, 1.0, -1.0], [[0.5]], gamma=1.0).round(4)
    array([1.5557])
    """
    classify = _check_classify(classify)
    Xa, Qa, dtype = _check_data(X, Xq)
    T, classes, single = _targets(Y, Xa.shape[0], classify)
    g = _v.check_real(gamma, "gamma", low=0, strict=True)
    _threads.resolve(n_threads)
    if not classify:
        num, _, tT, lognear = _shifted(Xa, Qa, dtype, T, g, False, n_threads)
        # sum_m y_m k(x, x_m) = num * 2**tT * k(x, x_nearest); through logarithms where
        # the factor k(x, x_nearest) alone would underflow (or the targets were scaled)
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            f = np.exp(-lognear)[:, None]
            direct = num * f
            safe = (f > 1e-290) & (tT == 0)
            out = np.where(safe, direct, np.sign(num) * np.exp(np.log(np.abs(num)) + tT * np.log(2.0) - lognear[:, None]))
            out += 0.0  # no -0.0 where the sum underflows
        out = _ldexp(out, 0, _v.result_dtype(dtype, np.asarray(Y)))  # inf beyond the float32 range
        return out[:, 0] if single else out
    C = classes.shape[0]
    if C < 2:
        raise ValueError(f"`Y` must have at least 2 classes with `classify=True`; got {C}.")
    n, m = Xa.shape[0], Qa.shape[0]
    if C > 2:
        _v.check_memory(8 * C * (2 * n + m), f"rbf_vote with {C} classes", "use fewer classes in `Y`.")
    if C == 2:
        V = np.where(T == 1, 1.0, -1.0)[:, None]
    else:
        V = -np.ones((n, C))
        V[np.arange(n), T] = 1.0
    num = _shifted(Xa, Qa, dtype, V, g, False, n_threads)[0]  # V = +-1: never rescaled
    if C == 2:
        return classes[(num[:, 0] > 0).astype(np.int64)]
    return classes[np.argmax(num, axis=1)]
