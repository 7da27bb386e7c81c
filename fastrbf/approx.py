"""Explicit feature maps that approximate kernels: random Fourier features and Nystroem,
and the randomly pivoted Cholesky that chooses Nystroem landmarks.

Both return a small frozen map (arrays only, picklable) whose ``.transform(X)`` gives
features ``Z`` with ``Z(X) Z(Y)^T ~ K(X, Y)``; a linear model on ``Z`` then stands in
for a kernel model at O(n D) cost.

Decisions:

- **random_fourier** draws scikit-learn ``RBFSampler``'s distribution and scaling
  (``W ~ N(0, 2 gamma I)``, ``b ~ U[0, 2 pi]``, ``z = sqrt(2/D) cos(W^T x + b)``) from
  a ``numpy.random.Generator`` (the numbers differ from scikit-learn's ``RandomState``
  stream; the distribution is the same).  ``kind="cos_sin"`` is the pair form
  ``sqrt(1/D') [cos(W^T x), sin(W^T x)]`` with ``D' = n_components / 2`` frequencies:
  the same output width, lower variance per feature.
- ``transform`` is one BLAS GEMM (``X @ W`` in fixed row blocks, one BLAS thread each), then one
  parallel numba pass applying a vectorised cos (and sin) in place
  (:mod:`fastrbf._jit.llvm.trig`: Cody-Waite reduction, <= 2 ulp for ``|arg| <= 1e6`` in
  float64, ``1e5`` in float32; larger arguments go through libm, so results are never
  wrong).  Measured on 2 cores against two alternatives (row blocks on worker threads,
  each a single-threaded GEMM then the serial pass, and a numba kernel making the
  projections in L1), both no faster: the plain GEMM-then-pass is kept (see
  docs/performance.md, 'Models and approximations').  The pair form
  runs the GEMM on blocks of rows into a scratch buffer (cos and sin go to the two
  halves of each output row).  The result does not depend on ``n_threads``.
- **nystroem** follows scikit-learn ``Nystroem``: ``Z = K(X, L) N`` with ``N = K(L, L)^
  {-1/2}`` the symmetric pseudo-inverse square root from the eigendecomposition of
  ``K(L, L) + alpha I``; eigenvalues below ``m * eps * max eigenvalue`` (and negative
  ones, for kernels that are not positive definite) are cut off rather than clamped to
  1e-12 as scikit-learn does, so ``Z Z^T = K_nm K_mm^+ K_mn`` exactly in exact
  arithmetic, and all points as landmarks reproduce the Gram matrix.  Landmarks are an
  array, or an int ``m`` with ``method="kmeans"`` (the centres of
  :func:`fastrbf.kmeans`, default) or ``"random"`` (``m`` distinct rows of ``X``).
  Computed in float64; float32 is returned when ``X`` and the fitting data were float32.
- **rpcholesky** (Chen, Epperly, Tropp and Webber 2023) draws each landmark with
  probability proportional to the diagonal of the residual ``K - F F^T``: near-optimal
  trace error from ``n m`` kernel values.  Built as the blocked, rejection-sampled variant
  (Epperly, Tropp and Webber 2024): ``block_size`` candidates per round, each accepted
  with the ratio of its residual after the candidates accepted before it (decided on the
  small candidate block) to its residual at the draw, then one kernel block and one GEMM
  for all accepted columns: the work of BLAS, the pivots of the one-at-a-time algorithm.
  The factor is float64 and kept (n x m): it is the Nystroem feature matrix, which the
  kernel-ridge solvers reuse rather than recompute.  The draws are
  ``searchsorted(cumsum(d), U sum(d))`` in NumPy and every block of rows has fixed
  bounds, so the pivots and the factor are the same bits for any thread count.  It stops
  early when the residual trace reaches the rounding level ``n eps max k(x, x)``.
  Measured against uniform and k-means landmarks in docs/performance.md.
- Checks first: every argument, then the memory the result needs, before any draw,
  k-means or kernel work.  Data of the Nystroem map (``X``, ``landmarks``, the ``X`` of
  ``transform``) whose float64 squared distances would overflow is refused in its own
  name, as by :func:`fastrbf.gram`.  k-means of large or tiny data runs on the data
  scaled by a power of two (exact).  Overflow (huge ``gamma``, data or kernel values)
  is an error naming the arguments, never inf or NaN features.  Maps own their arrays.
"""

import contextlib
import math
from dataclasses import dataclass

import numpy as np

from . import _dense, _progress, _threads
from . import _validation as _v
from ._jit import features as _jf
from ._jit.llvm import trig as _jt
from ._lazy import blas, lapack
from ._sparse import CSRRows, check_csr, is_sparse, to_scipy
from ._typing import ArrayLike, DTypeLike, FloatArray, KernelArg, Seed, Threads
from .cluster._kmeans import kmeans_named
from .kernels import KERNELS, check_kernel, check_params, gram, kernel_value

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_KINDS = ("cos", "cos_sin")

#: rows per GEMM block of the pair form (scratch of PAIR_BLOCK_BYTES at most)
PAIR_BLOCK_BYTES = 32 * 2**20


# ---------------------------------------------------------------- validation
def _max_gamma(dt):
    """The largest ``gamma`` whose frequencies ``sqrt(2 gamma) N(0, 1)`` stay finite in
    ``dt`` (|N(0, 1)| < 40 but with probability 1e-349)."""
    top = float(np.finfo(dt).max) / 40.0
    with np.errstate(over="ignore"):
        return min(0.5 * top * top, float(np.finfo(np.float64).max))


def _max_norm(A, axis):
    """The largest Euclidean norm along ``axis`` (rows: 1, columns: 0), without overflow;
    ``A`` dense, or SciPy CSR rows (``axis=1``)."""
    if not isinstance(A, np.ndarray):
        top = float(np.abs(A.data).max()) if A.nnz else 0.0
        if top == 0 or not math.isfinite(top):
            return top
        S = A.astype(np.float64) / top
        return top * math.sqrt(float(S.multiply(S).sum(axis=1).max()))
    top = float(np.abs(A).max())
    if top == 0 or not math.isfinite(top):
        return top
    S = A.astype(np.float64) / top
    return top * math.sqrt(float(np.einsum("ij,ij->" + ("i" if axis == 1 else "j"), S, S).max()))


def _max_abs(A):
    """The largest absolute value of dense data or CSR rows."""
    if isinstance(A, CSRRows):
        return max(abs(A.max()), abs(A.min()))
    return float(np.abs(A).max())


def _project(Xc, W, out, nt):
    """``out = Xc @ W``: BLAS for dense ``Xc``, SciPy's sparse product for CSR rows (by
    row blocks, so that no second result-sized array is made)."""
    if isinstance(Xc, np.ndarray):
        return _dense.gemm(Xc, W, out, nt)
    rows = max(1, PAIR_BLOCK_BYTES // (W.shape[1] * out.dtype.itemsize))
    for r0 in range(0, Xc.shape[0], rows):
        r1 = min(Xc.shape[0], r0 + rows)
        np.copyto(out[r0:r1], Xc[r0:r1] @ W)
    return out


def _bounded(K, alpha):
    """Whether ``K`` is finite with room for ``K + K.T + alpha`` and a product with a
    normalisation in float64."""
    top = float(np.abs(K).max()) if K.size else 0.0
    return math.isfinite(top) and top + alpha < 0.25 * float(np.finfo(np.float64).max)


def _data(X, name):
    """:func:`_validation.check_data`, with ragged sequences refused in words of the
    argument (never NumPy's own message)."""
    if not isinstance(X, np.ndarray):
        try:
            X = np.asarray(X)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"`{name}` must be a rectangular array of real numbers; got a ragged or "
                             f"unconvertible {type(X).__name__}.") from None
    return _v.check_data(X, name)


def _query(X, n_features, map_dtype):
    Xa = check_csr(X, "X") if is_sparse(X) else _data(X, "X")
    if Xa.shape[1] != n_features:
        raise ValueError(f"`X` must have {n_features} features (as the map); got shape {Xa.shape}.")
    return Xa, _v.result_dtype(Xa, map_dtype)


# ---------------------------------------------------------------- random Fourier features
@dataclass(frozen=True, eq=False)
class RandomFourierMap:
    """Random Fourier features of the Gaussian kernel ``exp(-gamma ||x - y||^2)``,
    from :func:`random_fourier`.  Arrays only; picklable.

    Attributes
    ----------
    weights : ndarray of shape (n_features, D')
        The frequencies ``W ~ N(0, 2 gamma I)``; ``D' = n_components`` for
        ``kind="cos"``, ``n_components / 2`` for ``kind="cos_sin"``.
    offset : ndarray of shape (n_components,) or (0,)
        The phases ``b ~ U[0, 2 pi]`` (``kind="cos"``; empty for ``"cos_sin"``).
    gamma : float
    kind : str
        ``"cos"`` or ``"cos_sin"``.

    Examples
    --------
    >>> from fastrbf import random_fourier
    >>> rff = random_fourier(3, 10, gamma=1.0, seed=0, kind="cos_sin")
    >>> rff.n_features, rff.n_components, rff.weights.shape, rff.dtype
    (3, 10, (3, 5), dtype('float64'))
    """

    weights: np.ndarray
    offset: np.ndarray
    gamma: float
    kind: str

    @property
    def n_features(self) -> int:
        """Number of input features ``d``."""
        return self.weights.shape[0]

    @property
    def n_components(self) -> int:
        """Number of output features ``D``."""
        return self.weights.shape[1] * (2 if self.kind == "cos_sin" else 1)

    @property
    def dtype(self) -> np.dtype:
        """The map's dtype (float32 keeps float32 input float32)."""
        return self.weights.dtype

    def transform(self, X: ArrayLike, *, out: FloatArray | None = None, n_threads: Threads = None) -> FloatArray:
        """The features ``Z`` of the rows of ``X``: ``Z @ Z.T ~ exp(-gamma D2)``.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n, n_features)
            Sparse rows are projected by SciPy's sparse product (never densified).
        out : ndarray of shape (n, n_components), optional
            C-contiguous buffer of the result dtype; it is returned.
        n_threads : int, optional
            ``None`` = ambient default (all cores), ``-1`` = all cores.

        Returns
        -------
        Z : ndarray of shape (n, n_components)
            float32 when ``X`` and the map are float32, else float64.

        Raises
        ------
        ValueError
            Invalid ``X`` (NaN/inf, wrong number of features), or ``X`` so large that
            its projections ``X @ weights`` overflow the dtype.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import gram, random_fourier
        >>> X = np.random.default_rng(0).standard_normal((4, 3))
        >>> rff = random_fourier(3, 20000, gamma=0.2, seed=0)
        >>> Z = rff.transform(X)
        >>> Z.shape
        (4, 20000)
        >>> bool(np.abs(Z @ Z.T - gram(X, gamma=0.2)).max() < 0.05)
        True
        """
        Xa, dtype = _query(X, self.n_features, self.dtype)
        sparse = not isinstance(Xa, np.ndarray)
        Xc = to_scipy(Xa.astype(dtype)) if sparse else _v.to_dtype(Xa, dtype)
        W = self.weights if self.weights.dtype == dtype else self.weights.astype(dtype)
        n = Xc.shape[0]
        D = self.n_components
        out = _v.check_out(out, (n, D), dtype, (Xa.data,) if sparse else (Xa,))
        if out is None:
            _v.check_memory(n * D * dtype.itemsize, f"transform: the {n} x {D} {dtype} result",
                            "transform `X` in row chunks, or pass a preallocated `out=`.")
            out = np.empty((n, D), dtype=dtype)
        # no argument can leave the accurate range of the vectorised cos/sin: skip the scan
        with np.errstate(over="ignore"):
            if sparse:
                xmax = math.sqrt(float(Xa.row_sqnorms().max()))
            else:
                xmax = math.sqrt(float(np.einsum("ij,ij->i", Xc, Xc, dtype=np.float64).max()))
        wmax = math.sqrt(float(np.einsum("ij,ij->j", W, W, dtype=np.float64).max()))
        lim = _jt.LIMIT_F32 if dtype == _F32 else _jt.LIMIT_F64
        bound = 1.01 * xmax * wmax + 2 * math.pi
        checked = bool(bound <= 0.5 * lim)
        nt = _threads.resolve(n_threads)
        may_overflow = not bound < 0.5 * float(np.finfo(dtype).max)
        with np.errstate(over="ignore", invalid="ignore") if may_overflow else contextlib.nullcontext():
            if self.kind == "cos":
                scale = dtype.type(math.sqrt(2.0 / D))
                b = self.offset if self.offset.dtype == dtype else self.offset.astype(dtype)
                _project(Xc, W, out, nt)
                _jf.trig_rows.run(nt, out, b, scale, checked, out)
            else:
                self._pair(Xc, W, checked, out, nt)
        if may_overflow and not np.isfinite(out).all():
            raise ValueError(f"`X` is too large for this map: its projections `X @ weights` overflow {dtype} "
                             f"(max row norm of `X` {_max_norm(Xc, 1):.3g}, max column norm of the weights "
                             f"{_max_norm(W, 0):.3g}, "
                             f"drawn with `gamma` = {self.gamma!r}); rescale `X` or use a smaller `gamma`.")
        return out

    def _pair(self, Xc, W, checked, out, nt):
        n, Dp = Xc.shape[0], W.shape[1]
        dtype = out.dtype
        scale = dtype.type(math.sqrt(1.0 / Dp))
        rows = max(1, min(n, PAIR_BLOCK_BYTES // (Dp * dtype.itemsize)))
        P = np.empty((rows, Dp), dtype=dtype)
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            Pb = P[: r1 - r0]
            _project(Xc[r0:r1], W, Pb, nt)
            _jf.trig_rows.run(nt, Pb, None, scale, checked, out[r0:r1])


def random_fourier(n_features: int, n_components: int, *, gamma: float, seed: Seed | np.random.RandomState = None,
                   kind: str = "cos", dtype: DTypeLike = np.float64) -> RandomFourierMap:
    """Random Fourier features for the Gaussian kernel ``exp(-gamma ||x - y||^2)``.

    ``kind="cos"``: ``z(x) = sqrt(2/D) cos(W^T x + b)`` with ``W ~ N(0, 2 gamma I)`` of
    shape (n_features, D) and ``b ~ U[0, 2 pi]``: scikit-learn ``RBFSampler``'s
    distribution and scaling.  ``kind="cos_sin"``: ``z(x) = sqrt(1/D') [cos(W^T x),
    sin(W^T x)]`` with ``D' = D / 2`` frequencies (``D`` must be even).  In both,
    ``E[z(x) . z(y)] = exp(-gamma ||x - y||^2)`` and the error shrinks like
    ``1 / sqrt(D)``.

    Parameters
    ----------
    n_features : int
        Number of input features ``d`` (>= 1).
    n_components : int
        Number of output features ``D`` (>= 1; even for ``kind="cos_sin"``).
    gamma : float
        Width of the Gaussian kernel, > 0 (for a float32 map at most about 3.6e73, so
        that the frequencies are finite).
    seed : None, int, numpy.random.Generator or numpy.random.RandomState
        A RandomState draws as scikit-learn's ``RBFSampler`` does (the normal draws,
        then the phases), so the same state gives scikit-learn's map (to rounding).
    kind : {"cos", "cos_sin"}
    dtype : float32 or float64
        Dtype of the map: float32 input to a float32 map gives float32 features.
        ``None`` is the default, float64.

    Returns
    -------
    RandomFourierMap
        Frozen map with ``.transform(X)``.

    Raises
    ------
    ValueError, TypeError
        An invalid argument (the message names it).
    MemoryError
        The frequencies would not fit in memory (raised before drawing them).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import random_fourier
    >>> rff = random_fourier(2, 6, gamma=0.5, seed=0)
    >>> rff.weights.shape, rff.offset.shape
    ((2, 6), (6,))
    >>> Z = rff.transform(np.zeros((3, 2), dtype=np.float32))
    >>> Z.shape, Z.dtype
    ((3, 6), dtype('float64'))
    >>> pair = random_fourier(2, 6, gamma=0.5, seed=0, kind="cos_sin", dtype=np.float32)
    >>> pair.transform(np.zeros((1, 2), dtype=np.float32)).round(3)
    array([[0.577, 0.577, 0.577, 0.   , 0.   , 0.   ]], dtype=float32)
    """
    d = _v.check_int(n_features, "n_features", 1)
    # a count or a width of the wrong type is a ValueError here, as it always was
    D = _v.check_int(n_components, "n_components", 1, type_error=ValueError)
    g = _v.check_real(gamma, "gamma", low=0, strict=True, type_error=ValueError)
    kind = _v.check_choice(kind, "kind", _KINDS)
    if kind == "cos_sin" and D % 2:
        raise ValueError(f"`n_components` must be even for kind='cos_sin' (cos and sin of n_components / 2 "
                         f"frequencies); got {D}.")
    dt = _v.check_float_dtype(dtype)
    if g > _max_gamma(dt):
        raise ValueError(f"`gamma` must be a finite number > 0 and at most {_max_gamma(dt):.3g} for a {dt} map "
                         f"(its frequencies sqrt(2 gamma) N(0, 1) would overflow {dt}); got {gamma!r}.")
    rng = seed if isinstance(seed, np.random.RandomState) else _v.check_seed(seed)
    Dp = D if kind == "cos" else D // 2
    # the draws in float64, the scaled weights and the phases (and their dtype copies)
    _v.check_memory(8 * (2 * d * Dp + D) + dt.itemsize * (d * Dp + D),
                    f"random_fourier: the {d} x {Dp} {dt} frequencies",
                    "use fewer `n_components`.")
    W = (math.sqrt(2.0) * math.sqrt(g)) * rng.standard_normal((d, Dp))  # 2 gamma itself may overflow
    b = rng.uniform(0.0, 2.0 * math.pi, size=D) if kind == "cos" else np.zeros(0)
    return RandomFourierMap(np.ascontiguousarray(W, dtype=dt), np.ascontiguousarray(b, dtype=dt), g, kind)


# ---------------------------------------------------------------- Nystroem
@dataclass(frozen=True, eq=False)
class NystroemMap:
    """Nystroem features ``Z = K(X, L) N``, from :func:`nystroem`.  Arrays only; picklable.

    Attributes
    ----------
    landmarks : ndarray of shape (m, d), float64
        The map's own copy.
    normalization : ndarray of shape (m, m), float64
        ``N = K(L, L)^{-1/2}``, the symmetric pseudo-inverse square root.
    kernel, gamma, degree, coef0 :
        The kernel: name and parameters.
    rank : int
        Number of eigenvalues of ``K(L, L) + alpha I`` kept.
    dtype : numpy.dtype
        float32 when the fitting data were float32.
    indices : ndarray of int64 or None
        The rows of ``X`` taken as landmarks (``method="random"``, or ``"rpcholesky"``
        in the order of the pivots); None for k-means centres and given landmarks.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import nystroem
    >>> X = np.random.default_rng(0).standard_normal((50, 2)).astype(np.float32)
    >>> ny = nystroem(X, 8, gamma=1.0, method="random", seed=0)
    >>> ny.n_components, ny.landmarks.shape, ny.rank, ny.dtype
    (8, (8, 2), 8, dtype('float32'))
    """

    landmarks: np.ndarray
    normalization: np.ndarray
    kernel: KernelArg
    gamma: float
    degree: int
    coef0: float
    rank: int
    dtype: np.dtype
    indices: np.ndarray | None = None

    @property
    def n_components(self) -> int:
        """Number of output features (the number of landmarks)."""
        return self.landmarks.shape[0]

    @np.errstate(over="ignore", invalid="ignore")  # an overflow is detected and reported, not warned about
    def transform(self, X: ArrayLike, *, n_threads: Threads = None) -> FloatArray:
        """The features ``Z = K(X, L) N`` of the rows of ``X``.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n, d)
        n_threads : int, optional

        Returns
        -------
        Z : ndarray of shape (n, m)
            float32 when ``X`` and the fitting data were float32, else float64.

        Raises
        ------
        ValueError, TypeError
            Invalid ``X`` (``X`` whose float64 squared distances would overflow
            included), or ``X`` so large that its kernel values or features overflow.
        MemoryError
            The kernel block and the result would not fit in memory.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import gram, nystroem
        >>> X = np.random.default_rng(0).standard_normal((30, 2))
        >>> ny = nystroem(X, X, gamma=0.5)
        >>> Z = ny.transform(X)
        >>> bool(np.abs(Z @ Z.T - gram(X, gamma=0.5)).max() < 1e-8)
        True
        """
        Xa, dtype = _query(X, self.landmarks.shape[1], self.dtype)
        _v.check_magnitude(Xa, "X", _F64)  # in the name of `X`, before any kernel work
        nt = _threads.resolve(n_threads)
        n, m = Xa.shape[0], self.landmarks.shape[0]
        _v.check_memory(8 * n * m * (2 if dtype == _F64 else 2.5), f"transform: the {n} x {m} kernel block and result",
                        "transform `X` in row chunks.")
        Xd = to_scipy(Xa, _F64) if isinstance(Xa, CSRRows) else _v.to_dtype(Xa, _F64)
        try:
            K = gram(Xd, self.landmarks, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
                     coef0=self.coef0, n_threads=nt)
        except ValueError:  # gram refuses kernel values that overflow (its message names its own arguments)
            K = None
        if K is None or not _bounded(K, 0.0):
            raise ValueError(f"`X` is too large for this map: its {self.kernel} kernel values with the landmarks "
                             f"overflow float64 (max |x| = {_max_abs(Xa):.3g}); rescale `X`.")
        Z = _dense.gemm(K, self.normalization, np.empty((K.shape[0], self.normalization.shape[1])), nt)
        Z = Z.astype(dtype, copy=False)
        if not np.isfinite(Z).all():
            raise ValueError(f"`X` is too large for this map: its features overflow {dtype} "
                             f"(max |x| = {_max_abs(Xa):.3g}); rescale `X`"
                             + (", or pass it as float64." if dtype == _F32 else "."))
        return Z


def nystroem(X: ArrayLike, landmarks: int | ArrayLike, *, kernel: KernelArg = "gaussian", gamma: float, alpha: float = 0.0,
             method: str | None = None, seed: Seed = None, n_threads: Threads = None, degree: int = 3,
             coef0: float = 1.0, max_iter: int = 300) -> NystroemMap:
    """Nystroem feature map: ``Z(X) = K(X, L) K(L, L)^{-1/2}``, so that
    ``Z(X) Z(Y)^T = K(X, L) K(L, L)^+ K(L, Y) ~ K(X, Y)`` (scikit-learn ``Nystroem``).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
        The data the landmarks are chosen from (when ``landmarks`` is an int).  Sparse
        data stay sparse (the landmarks are dense: k-means centres or chosen rows).
    landmarks : int or array_like of shape (m, d)
        The landmarks ``L`` themselves, or their number ``m`` (1 <= m <= n), chosen
        by ``method``.
    kernel : str
        A name in :data:`fastrbf.KERNELS`.  Meaningful for positive (semi-)definite
        kernels; negative eigenvalues of ``K(L, L)`` are cut off.
    gamma : float
        Kernel width, > 0.
    alpha : float
        Added to the diagonal of ``K(L, L)`` before the eigendecomposition, >= 0.
    method : {"kmeans", "random", "rpcholesky", "auto"}, optional
        With an int ``landmarks``: ``"kmeans"`` (default) takes the centres of
        :func:`fastrbf.kmeans` (``seed``, ``max_iter``), ``"random"`` takes ``m``
        distinct rows of ``X`` drawn with ``seed``, ``"rpcholesky"`` the pivots of
        :func:`rpcholesky` (dense ``X``, a positive semi-definite kernel; fewer than
        ``m`` when the kernel matrix is numerically of lower rank), ``"auto"`` those
        pivots when their relative trace error is at most :data:`AUTO_RESIDUAL`, else
        the k-means centres.  Must be None with an array.
    seed : None, int or numpy.random.Generator
    n_threads : int, optional
    degree, coef0 : int, float
        Parameters of the polynomial and tanh kernels.
    max_iter : int
        Lloyd iterations of ``method="kmeans"``.

    Returns
    -------
    NystroemMap
        Frozen map with ``.transform(X)``; ``n_components`` = m.

    Raises
    ------
    ValueError, TypeError
        An invalid argument (the message names it), ``X`` or ``landmarks`` whose float64
        squared distances would overflow included; fewer distinct points in ``X`` than
        ``landmarks``; a landmark kernel matrix that overflows float64.
    MemoryError
        The m x m work would not fit in memory (raised before any k-means or kernel
        work).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram, nystroem
    >>> X = np.random.default_rng(0).standard_normal((500, 2))
    >>> ny = nystroem(X, 100, gamma=0.5, seed=0)
    >>> Z = ny.transform(X)
    >>> Z.shape
    (500, 100)
    >>> bool(np.abs(Z @ Z.T - gram(X, gamma=0.5)).max() < 0.01)
    True
    """
    spec = check_kernel(kernel)
    deg, c0 = check_params(spec, degree, coef0)
    Xa = check_csr(X, "X") if is_sparse(X) else _data(X, "X")
    _v.check_magnitude(Xa, "X", _F64)  # data whose float64 squared distances overflow: refused by name, up front
    n, d = Xa.shape
    g = _v.check_real(gamma, "gamma", low=0, strict=True)
    a = _v.check_real(alpha, "alpha", low=0)
    nt = _threads.resolve(n_threads)
    rng = _v.check_seed(seed)
    iters = _v.check_int(max_iter, "max_iter", 1)
    La = ids = None
    if _v.is_int(landmarks):
        m = _v.check_int(int(landmarks), "landmarks", 1, n, text=f"an int in [1, n_samples = {n}] or an array")
        method = _v.check_choice("kmeans" if method is None else method, "method",
                                 ("kmeans", "random", "rpcholesky", "auto"),
                                 text="'kmeans', 'random', 'rpcholesky' or 'auto'")
        if method in ("rpcholesky", "auto"):
            if is_sparse(X):
                raise ValueError(f"`method='{method}'` needs dense `X`; use 'kmeans' or 'random' for sparse data.")
            check_positive_definite_kernel(spec, d, c0, f"nystroem(method='{method}')")
    else:
        if method is not None:
            raise ValueError(f"`method` must be None when `landmarks` is an array; got {method!r}.")
        La = _data(landmarks, "landmarks")
        _v.check_features(Xa, La, "X", "landmarks")
        _v.check_magnitude(La, "landmarks", _F64)
        m = La.shape[0]
    # K(L, L), its symmetrised copy, the eigenvectors, the scaled ones and N: before any
    # k-means or kernel work
    _v.check_memory(5 * 8 * m * m, f"nystroem: the {m} x {m} landmark kernel matrix and its eigendecomposition",
                    "use fewer `landmarks`.")
    sparse = isinstance(Xa, CSRRows)
    Xd = Xa.astype(_F64) if sparse else _v.to_dtype(Xa, _F64)
    if La is None and method == "auto":  # the pivots where their trace error is small, else k-means
        pc = factor_rows(Xd, m, {"kernel": kernel_value(spec), "gamma": g, "degree": deg, "coef0": c0,
                                 "length_scale": None}, rng, nt)
        ids, method = (pc.pivots, "rpcholesky") if accurate(pc) else (None, "kmeans")
    if La is not None:
        L = np.array(La, dtype=np.float64, order="C", copy=True)  # the map owns its landmarks
    elif ids is not None:
        L = Xd[ids]
    elif method == "kmeans":
        # k-means on data scaled by a power of two (exact, so the centres are those of the
        # data itself) whose squared distances can neither overflow nor underflow
        top = _max_abs(Xd)
        t = round(math.log2(top)) if top > 0 and not 2.0**-256 <= top <= 2.0**256 else 0
        Xs = to_scipy(Xd.scaled(-t)) if sparse else (Xd / 2.0**t if t else Xd)
        L = kmeans_named(Xs, m, name="landmarks", seed=rng, max_iter=iters, n_threads=nt).centers
        L = L * 2.0**t if t else L
    elif method == "rpcholesky":
        ids = factor_rows(Xd, m, {"kernel": kernel_value(spec), "gamma": g, "degree": deg, "coef0": c0,
                                  "length_scale": None}, rng, nt).pivots
        L = Xd[ids]
    else:
        ids = np.sort(rng.choice(n, size=m, replace=False))
        L = Xd.rows(ids) if sparse else Xd[ids]
    L = np.ascontiguousarray(L, dtype=np.float64)
    m = L.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is detected and reported just below
        try:
            Kmm = gram(L, kernel=kernel, gamma=g, degree=deg, coef0=c0, n_threads=nt)
        except ValueError:  # gram refuses kernel values that overflow (its message names its own arguments)
            Kmm = None
    if Kmm is None or not _bounded(Kmm, a):
        src = "`landmarks`" if La is not None else "`X` (the landmarks are chosen from it)"
        raise ValueError(f"The {kernel} kernel matrix of the landmarks overflows float64 with this `gamma`"
                         f"{'' if spec.radial else ' and `coef0`'} and `alpha` (max |landmark| = "
                         f"{float(np.abs(L).max()):.3g}); rescale {src} or use a smaller `gamma`.")
    N, rank = inverse_sqrt(Kmm, a)
    return NystroemMap(L, N, kernel_value(spec), g, deg, c0, rank, _v.result_dtype(Xa),
                       None if ids is None else ids.astype(np.int64))


def inverse_sqrt(Kmm, alpha=0.0):
    """``(N, rank)``: the symmetric pseudo-inverse square root ``N`` of ``Kmm + alpha I``
    (its symmetric part; eigenvalues below ``m eps max|lambda|`` dropped, their number
    subtracted from ``rank``); ``Kmm`` is not modified."""
    m = Kmm.shape[0]
    Kmm = 0.5 * (Kmm + Kmm.T)
    Kmm.flat[:: m + 1] += alpha
    with _threads.serial_blas():
        lam, V = np.linalg.eigh(Kmm)
        cut = m * np.finfo(np.float64).eps * max(float(np.abs(lam).max()), np.finfo(np.float64).tiny)
        keep = lam > cut
        Vk = V[:, keep] / np.sqrt(lam[keep])
        N = np.ascontiguousarray(Vk @ V[:, keep].T)
    return N, int(keep.sum())


# ---------------------------------------------------------------- randomly pivoted Cholesky
#: candidates drawn per round of :func:`rpcholesky` (each round: one kernel block of n x
#: accepted columns and one GEMM against the factor so far)
RPCHOL_BLOCK = 120
#: rows per BLAS call of a round (fixed: the same bits for any thread count)
RPCHOL_ROWS = 2048
#: rounds in a row that accept no candidate before the residual counts as rounding
RPCHOL_MAX_IDLE = 8


@dataclass(frozen=True, eq=False)
class PartialCholesky:
    """A partial Cholesky factor ``K ~ F F^T`` of a kernel matrix, from :func:`rpcholesky`.
    Arrays only; picklable.

    Attributes
    ----------
    pivots : ndarray of shape (m,), int64
        The rows of ``X`` chosen, in the order they were chosen.
    factor : ndarray of shape (n, m), float64
        ``F``, with ``F[pivots]`` lower triangular (up to rounding) and
        ``F F^T = K(X, L) K(L, L)^{-1} K(L, X)`` for the landmarks ``L = X[pivots]``:
        its rows are the Nystroem features of ``X``.
    landmarks : ndarray of shape (m, d), float64
        ``X[pivots]`` (a copy).
    trace : float
        ``tr K``.
    residual : float
        ``tr(K - F F^T)``, the trace error (>= 0; rounding aside).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import rpcholesky
    >>> X = np.random.default_rng(0).standard_normal((200, 2))
    >>> pc = rpcholesky(X, 20, gamma=0.5, seed=0)
    >>> pc.factor.shape, pc.landmarks.shape, bool(pc.residual < 0.1 * pc.trace)
    ((200, 20), (20, 2), True)
    """

    pivots: np.ndarray
    factor: np.ndarray
    landmarks: np.ndarray
    trace: float
    residual: float

    @property
    def n_landmarks(self) -> int:
        """The number of pivots ``m`` (fewer than asked for when the kernel matrix is
        numerically of lower rank)."""
        return int(self.pivots.shape[0])


#: landmarks="auto" (and ``nystroem(method="auto")``): the pivots of randomly pivoted
#: Cholesky when its relative trace error ``tr(K - F F^T) / tr K`` is at most this, else
#: k-means centres.  On the 16 cases of docs/performance.md ('Landmarks') RPCholesky was
#: the better choice wherever its error was at most 6.1e-4 but for one (1.2e-5, k-means
#: 1.18x better), and k-means wherever it was 4.7e-3 or more
AUTO_RESIDUAL = 1e-3


def accurate(pc: "PartialCholesky") -> bool:
    """The ``"auto"`` landmarks' rule: keep randomly pivoted Cholesky's pivots when its
    relative trace error is at most :data:`AUTO_RESIDUAL` (where its residual sampling
    beats k-means' centres), else take k-means centres.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((300, 2))
    >>> accurate(rpcholesky(X, 60, gamma=1.0, seed=0)), accurate(rpcholesky(X, 5, gamma=50.0, seed=0))
    (True, False)
    """
    return bool(pc.residual <= AUTO_RESIDUAL * pc.trace)


def check_positive_definite_kernel(spec, d, coef0, what):
    """Refuse (ValueError naming ``kernel``) a kernel that is not positive semi-definite
    for data of ``d`` features: conditionally positive definite ones (multiquadric, the
    polyharmonic splines, linear), ``tanh``, a polynomial with ``coef0 < 0``, compactly
    supported ones beyond their dimension, user kernels not declared positive definite."""
    from .kernels import is_user, undeclared

    bad = undeclared(spec, d) if is_user(spec) else (
        spec.min_degree >= 0 or spec.max_dim == 0 or (spec.max_dim is not None and d > spec.max_dim)
        or (spec.code == KERNELS["polynomial"].code and coef0 < 0))
    if bad:
        raise ValueError(f"{what} needs a positive semi-definite kernel; `kernel` {kernel_value(spec)!r} is not one "
                         f"for data of {d} features{' with coef0 < 0' if spec.name == 'polynomial' else ''}.")


def kernel_diagonal(X, kernel, gamma, degree, coef0, length_scale):
    """``k(x_i, x_i)`` for the rows of the float64 array ``X``: ``k(0)`` for a radial
    kernel; for a dot-product kernel its value at ``|x_i|^2`` (scaled by the length
    scales), through :func:`fastrbf.gram` of a one-feature column against 1.

    Examples
    --------
    >>> import numpy as np
    >>> kernel_diagonal(np.array([[1.0, 2.0]]), "polynomial", 1.0, 2, 1.0, None).tolist()
    [36.0]
    """
    kw = {"kernel": kernel, "gamma": gamma, "degree": degree, "coef0": coef0}
    n = X.shape[0]
    if check_kernel(kernel).radial:
        k0 = gram(X[:1], X[:1], length_scale=length_scale, n_threads=1, **kw)[0, 0]
        return np.full(n, k0)
    Xs = X if length_scale is None else X / length_scale
    u = np.einsum("ij,ij->i", Xs, Xs)[:, None]
    return np.ascontiguousarray(gram(u, np.ones((1, 1)), n_threads=1, **kw)[:, 0])


def rpcholesky(X: ArrayLike, n_landmarks: int, *, kernel: KernelArg = "gaussian", gamma: float = 1.0, degree: int = 3,
               coef0: float = 1.0, length_scale: ArrayLike | None = None, block_size: int = RPCHOL_BLOCK,
               seed: Seed = None, n_threads: Threads = None, progress: object = False) -> PartialCholesky:
    """Randomly pivoted Cholesky: ``m`` landmarks drawn from the rows of ``X`` with
    probability proportional to the diagonal of the residual ``K - F F^T``, and the
    partial Cholesky factor ``F`` (n x m) that goes with them.

    Each draw favours the points the landmarks so far explain worst, so the trace error
    ``tr(K - F F^T)`` is within a small factor of the best rank-m approximation's in
    expectation (Chen, Epperly, Tropp and Webber, 2023), from ``n m`` kernel values and
    ``n m^2`` flops, never the whole of ``K``.  Built as the blocked, rejection-sampled
    variant (Epperly, Tropp and Webber, 2024): each round draws ``block_size``
    candidates from the residual diagonal, accepts each with the ratio of its residual
    after the candidates accepted before it to its residual at the draw (the small
    candidate block decides this alone), and then adds all accepted columns at once, so
    that the work is a kernel block and a GEMM per round, while the pivots have the
    distribution of the one-at-a-time algorithm.

    Parameters
    ----------
    X : array_like of shape (n, d)
    n_landmarks : int
        ``m`` in [1, n].  Fewer come back when the kernel matrix is numerically of
        lower rank (the residual trace at the rounding level ``n eps max k(x, x)``, or
        no candidate accepted in several rounds in a row).
    kernel, gamma, degree, coef0, length_scale :
        As in :func:`fastrbf.gram`; the kernel must be positive semi-definite.
    block_size : int, default 120
        Candidates drawn per round (>= 1; 1 is the plain one-at-a-time algorithm).
    seed : None, int or numpy.random.Generator
    n_threads : int, optional
    progress : bool, logging.Logger or callable
        Report the pivots chosen so far (stage ``"rpcholesky"``).

    Returns
    -------
    PartialCholesky
        The pivots, the factor (float64), the landmarks and the trace error.  The same
        bits for any ``n_threads``.

    Raises
    ------
    ValueError
        An invalid argument (the message names it), a kernel that is not positive
        semi-definite.
    MemoryError
        The n x m factor would not fit in memory.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram, rpcholesky
    >>> X = np.random.default_rng(0).standard_normal((300, 2))
    >>> pc = rpcholesky(X, 60, gamma=0.5, seed=0)
    >>> K = gram(X, gamma=0.5)
    >>> F = pc.factor
    >>> bool(np.isclose(np.trace(K - F @ F.T), pc.residual)), bool(pc.residual < 1e-3 * pc.trace)
    (True, True)
    """
    spec = check_kernel(kernel)
    deg, c0 = check_params(spec, degree, coef0)
    Xa = _data(X, "X")
    _v.check_magnitude(Xa, "X", _F64)
    n, d = Xa.shape
    check_positive_definite_kernel(spec, d, c0, "rpcholesky")
    m = _v.check_int(n_landmarks, "n_landmarks", 1, n, text=f"an int in [1, n_samples] = [1, {n}]")
    b = _v.check_int(block_size, "block_size", 1)
    g = _v.check_real(gamma, "gamma", low=0, strict=True)
    ls = _v.check_length_scale(length_scale, d)
    rng = _v.check_seed(seed)
    _progress.check(progress)
    rep = _progress.reporter(progress, "rpcholesky")
    kw = {"kernel": kernel_value(spec), "gamma": g, "degree": deg, "coef0": c0, "length_scale": ls}
    return factor_rows(_v.to_dtype(Xa, _F64), m, kw, rng, n_threads, b, rep)


def factor_rows(X, m, kw, rng, n_threads, block=RPCHOL_BLOCK, rep=None, last=True):
    """:func:`rpcholesky` of validated float64 rows ``X`` (the kernel's checked
    arguments in ``kw``, ``rng`` a Generator): the :class:`PartialCholesky`, after the
    check that its n x m factor fits in memory (a MemoryError before any kernel work).
    ``rep`` reports the stage ``"rpcholesky"``, the last of its run when ``last``."""
    n, d = X.shape
    _v.check_memory(8 * n * (m + 4), f"rpcholesky: the {n} x {m} factor", "use fewer landmarks.")
    nt = _threads.for_work(n * m * (d + m // 4 + 8), n_threads)
    F = np.zeros((n, m))
    res = kernel_diagonal(X, kw["kernel"], kw["gamma"], kw["degree"], kw["coef0"], kw["length_scale"])
    trace = float(np.sum(res))
    floor = n * float(np.finfo(np.float64).eps) * float(res.max())
    piv = np.empty(m, dtype=np.int64)
    k = idle = 0
    if rep is not None:
        rep.start("rpcholesky", m, unit="pivot")
    while k < m and idle < RPCHOL_MAX_IDLE:
        cum = np.cumsum(res)
        if not cum[-1] > floor:
            break
        nb = min(block, m - k)
        cand = np.minimum(np.searchsorted(cum, rng.random(nb) * cum[-1], side="right"), n - 1)
        H = gram(X[cand], **kw, n_threads=1)
        Fc = F[cand, :k]
        with _threads.serial_blas():
            H -= Fc @ Fc.T
            acc, Lb = _accept(H, rng.random(nb) * res[cand])
        if acc.size == 0:
            idle += 1
            continue
        idle = 0
        S = cand[acc]
        _add_columns(X, F, res, k, S, Lb, kw, nt)
        piv[k:k + S.size] = S
        k += S.size
        if rep is not None and k < m:
            rep.step(k)
    if rep is not None:
        (rep.finish if last else rep.finish_stage)(k)
    if k == 0:
        raise ValueError("rpcholesky: the kernel matrix of `X` is zero to working precision; there is no pivot to take.")
    F = np.ascontiguousarray(F[:, :k]) if k < m else F
    return PartialCholesky(piv[:k].copy(), F, np.ascontiguousarray(X[piv[:k]]), trace, float(np.sum(res)))


def _accept(H, bar):
    """The candidates accepted by rejection (positions into the candidate block) and the
    lower Cholesky factor of their block of ``H``: candidate ``j`` is accepted when its
    residual after the accepted ones before it exceeds ``bar[j]`` (a uniform draw times
    its residual at the draw); duplicates of an accepted point have none left."""
    H = H.copy()
    nb = H.shape[0]
    cols = np.zeros((nb, nb))
    acc: list[int] = []
    for j in range(nb):
        h = H[j, j]
        if h > 0 and h > bar[j]:
            c = H[:, j] / math.sqrt(h)
            cols[:, len(acc)] = c
            acc.append(j)
            H -= np.outer(c, c)
    a = np.array(acc, dtype=np.int64)
    return a, np.ascontiguousarray(np.tril(cols[a][:, : a.size]))


def _add_columns(X, F, res, k, S, Lb, kw, nt):
    """Columns ``k : k + |S|`` of ``F``: ``(K(X, X_S) - F_k F_k[S]^T) Lb^-T``, and the
    residual diagonal ``res`` lowered by their squares; by fixed blocks of rows."""
    a = S.size
    Linv, info = lapack.dtrtri(Lb, lower=1)
    if info != 0:  # pragma: no cover - Lb is a Cholesky factor with a positive diagonal
        raise np.linalg.LinAlgError("rpcholesky: a pivot block could not be inverted.")
    Linv = np.asfortranarray(np.tril(Linv))
    XS = np.ascontiguousarray(X[S])
    FSt = np.ascontiguousarray(F[S, :k].T)
    trmm = blas.dtrmm

    def rows(lo, hi):
        buf = np.empty((min(RPCHOL_ROWS, hi - lo), a))
        for r in range(lo, hi, RPCHOL_ROWS):
            r1 = min(hi, r + RPCHOL_ROWS)
            G = buf[: r1 - r]
            gram(X[r:r1], XS, **kw, out=G, n_threads=1)
            if k:
                G -= F[r:r1, :k] @ FSt
            # G Linv^T by the triangle only (G^T is F-ordered: Linv G^T in place)
            P = trmm(1.0, Linv, G.T, lower=1, overwrite_b=1).T
            F[r:r1, k:k + a] = P
            res[r:r1] -= np.einsum("ij,ij->i", P, P)

    with _threads.serial_blas():
        _threads.map_ranges(rows, X.shape[0], nt, align=RPCHOL_ROWS)
    res[S] = 0.0
    np.maximum(res, 0.0, out=res)
