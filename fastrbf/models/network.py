"""RBF models: kernel ridge regression, exact (or smoothed) RBF interpolation, and RBF
networks with K << N centres.  Each fit returns a small frozen model (arrays only,
picklable, no N x N or N x M matrix kept) whose ``.predict`` runs through the fused
:func:`~fastrbf.gram_matvec`.

Decisions:

- **kernel_ridge** builds the Gram matrix in float64 straight into the one n x n
  buffer that LAPACK then factors in place (peak memory about one n x n float64
  matrix).  ``fit_intercept=True`` fits on ``Y - mean(Y)`` and adds the mean back.
- **kernel_ridge(solver="nystrom-pcg")** (large n; "auto" picks it when one n x n
  float64 matrix would take more than half the free memory) solves the Nystroem
  system ``(K_nm^T K_nm + alpha K_mm) beta = K_nm^T Y`` by Falkon's preconditioned
  conjugate gradients without any n x n or n x m matrix (see :mod:`fastrbf._nystrom`);
  the model's centres are the landmarks.
- **interpolate** solves SciPy ``RBFInterpolator``'s system
  ``[[K + diag(alpha), P], [P^T, 0]] [w; c] = [y; 0]`` (``P`` the monomials up to
  ``degree`` of the shifted and scaled data, as SciPy) by the null-space method: with
  ``P = Q R`` (Householder), ``w = Q_2 z`` where ``(Q_2^T A Q_2) z = Q_2^T y`` is
  positive definite for a kernel that is conditionally positive definite of an order
  the polynomial covers, so it is solved by Cholesky (half the flops of SciPy's LU)
  in the same n x n buffer; then ``R c = Q_1^T (y - A w)``.  A ``degree`` below the
  kernel's minimum (SciPy warns) falls back to SciPy's LU on the full system.
- **rbf_network** never forms the N x K design matrix: chunks of rows of
  ``[Phi 1 Y]`` are made by a numba kernel and folded into an upper-triangular factor
  by LAPACK's triangular-pentagonal QR (``tpqrt``: TSQR), group by group on worker
  threads, the group factors then folded in group order, so the result is bitwise the
  same for any thread count.  The least-squares problem is then solved from the small
  factor by SciPy ``lstsq`` (SVD): the condition number is not squared as with the
  normal equations ``Phi^T Phi``, ``alpha = 0`` gives the minimum-norm least-squares
  solution of ``numpy.linalg.lstsq`` on ``Phi`` (same ``rcond``), and ``alpha > 0``
  penalises the weights but not the bias (as scikit-learn's ``Ridge``).
- float32 input is computed in float64 inside (factorisations and weights); the
  predictions are returned as float32 when the query and the training data were.
- The exact solves (kernel_ridge "cholesky", interpolate) are checked after the
  factorisation (:func:`fastrbf.linalg._check_conditioning`): a system singular to
  working precision (estimated condition number > 1/eps) raises
  :class:`~fastrbf.NotPositiveDefiniteError`, one whose solve misses its own targets by
  more than 1e-6 of max |Y| gives a ``scipy.linalg.LinAlgWarning``.
- A model owns its arrays: the caller's ``X``, ``centers``, ``landmarks`` and per-centre
  ``gamma`` are copied when the model would otherwise share their memory.
- Data whose squared distances would overflow float64 (``|x| > sqrt(max / (16 d))``)
  and weights that overflow are refused with a ``ValueError``.
"""

import itertools
import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from . import _dense, _progress, _threads
from . import _validation as _v
from ._jit import kernels as _jk
from ._jit import linalg as _jla
from ._lazy import lapack, scipy
from ._progress import ProgressArg
from ._typing import ArrayLike, FloatArray, Seed, Threads
from .cluster import _kmeans
from .distances import _consts, pairwise
from .kernels import KERNELS, _check_kernel, _check_params, gram, gram_matvec
from .linalg import NotPositiveDefiniteError, _check_alpha, _check_conditioning, _diag, _factor_in_place

_F64 = np.dtype(np.float64)


# ---------------------------------------------------------------- validation
def _data(X, name):
    """Data of a model: 2-D, finite, and with squared distances that cannot overflow."""
    Xa = _v.check_data(X, name)
    _v.check_magnitude(Xa, name, _F64)
    return Xa


def _check_xy(X, Y):
    Xa = _data(X, "X")
    return Xa, _v.check_targets(Y, Xa.shape[0])


def _check_scalar_gamma(gamma):
    if gamma is None:
        raise ValueError("`gamma` must be a finite number > 0; got None.")
    if _v.ndim(gamma, "gamma") != 0:
        raise TypeError(f"`gamma` must be a number here (one width for all points); got {gamma!r}.")
    g, _ = _v.check_gamma(gamma, 1, _F64)
    return float(g[0])


def _out_dtype(*arrays):
    return _v.result_dtype(*arrays)


def _owned(arr, *sources):
    """``arr``, copied if it shares memory with an array the caller passed (and could
    still change): a model owns its arrays."""
    for src in sources:
        if src is not None and np.may_share_memory(arr, src):
            return arr.copy()
    return arr


def _query(model_dtype, n_features, X):
    Xa = _data(X, "X")
    if Xa.shape[1] != n_features:
        raise ValueError(f"`X` must have {n_features} features (as the training data); got shape {Xa.shape}.")
    dtype = np.dtype(np.float32) if (Xa.dtype == np.float32 and model_dtype == np.float32) else _F64
    return _v.to_dtype(Xa, _F64), dtype


# ---------------------------------------------------------------- polynomial tail
def _monomial_powers(d, degree):
    """Exponents of the monomials of total degree <= ``degree`` in ``d`` variables
    (SciPy's order)."""
    out = []
    for deg in range(degree + 1):
        for combo in itertools.combinations_with_replacement(range(d), deg):
            p = [0] * d
            for i in combo:
                p[i] += 1
            out.append(p)
    return np.array(out, dtype=np.int64).reshape(len(out), d)


def _polynomial_matrix(X, shift, scale, powers):
    Xs = (X - shift) / scale
    P = np.ones((X.shape[0], powers.shape[0]), dtype=np.float64)
    for j, p in enumerate(powers):
        for i, e in enumerate(p):
            if e:
                P[:, j] *= Xs[:, i] ** e
    return P


# ---------------------------------------------------------------- models
@dataclass(frozen=True, eq=False)
class KernelModel:
    """A fitted kernel expansion ``f(x) = sum_i w_i k(x, x_i) + p(x) + b``.

    From :func:`kernel_ridge` and :func:`interpolate`.  Arrays only; picklable.

    Attributes
    ----------
    centers : ndarray of shape (n, d), float64
        The training points (the m landmarks for ``solver="nystrom-pcg"``).
    weights : ndarray of shape (n, k), float64
    kernel, gamma, degree, coef0 :
        The kernel: name and parameters.
    intercept : ndarray of shape (k,)
    poly_powers : ndarray of shape (q, d)
        Exponents of the polynomial tail's monomials (q = 0: none).
    poly_shift, poly_scale : ndarray of shape (d,)
        The monomials are of ``(x - shift) / scale``.
    poly_coef : ndarray of shape (q, k)
    dtype : numpy.dtype
        float32 when the training data were float32.
    single_output : bool
        ``Y`` was 1-D: predictions are 1-D.
    jitter : float
        Jitter added to the diagonal by ``jitter="auto"`` (0 if none).
    solver : str
        ``"cholesky"`` or ``"nystrom-pcg"`` (then ``centers`` are the landmarks and
        ``weights`` the Nystroem coefficients ``beta``); "cholesky" for
        :func:`interpolate` too.
    n_iter : int
        Conjugate-gradient iterations (fused passes over the data) of "nystrom-pcg"; 0
        for a direct solve.
    residual : float
        Final relative residual of the preconditioned system ("nystrom-pcg"; the largest
        over the outputs); 0.0 for a direct solve.
    converged : bool
        Whether "nystrom-pcg" reached ``tol`` (always True for a direct solve).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import interpolate
    >>> m = interpolate(np.array([[0.0], [1.0], [2.0]]), [1.0, 3.0, 2.0], kernel="cubic")
    >>> m.centers.shape, m.poly_powers.shape, m.predict([[1.0]]).round(12).tolist()
    ((3, 1), (2, 1), [3.0])
    """

    centers: np.ndarray
    weights: np.ndarray
    kernel: str
    gamma: float
    degree: int
    coef0: float
    intercept: np.ndarray
    poly_powers: np.ndarray
    poly_shift: np.ndarray
    poly_scale: np.ndarray
    poly_coef: np.ndarray
    dtype: np.dtype
    single_output: bool
    jitter: float = 0.0
    solver: str = "cholesky"
    n_iter: int = 0
    residual: float = 0.0
    converged: bool = True

    def predict(self, X: ArrayLike, *, n_threads: Threads = None) -> np.ndarray:
        """Evaluate the model at the rows of ``X`` (fused: no n_query x n matrix).

        Parameters
        ----------
        X : array_like of shape (m, d)
        n_threads : int, optional

        Returns
        -------
        ndarray of shape (m,) or (m, k)

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import kernel_ridge
        >>> X = np.linspace(0, 1, 20)[:, None]
        >>> m = kernel_ridge(X, np.sin(3 * X[:, 0]), gamma=10.0, alpha=1e-6)
        >>> bool(abs(m.predict([[0.5]])[0] - np.sin(1.5)) < 1e-3)
        True
        """
        Xq, dtype = _query(self.dtype, self.centers.shape[1], X)
        out = gram_matvec(Xq, self.centers, self.weights, kernel=self.kernel, gamma=self.gamma,
                          degree=self.degree, coef0=self.coef0, n_threads=n_threads)
        if self.poly_powers.shape[0]:
            with _threads.serial_blas():
                out += _polynomial_matrix(Xq, self.poly_shift, self.poly_scale, self.poly_powers) @ self.poly_coef
        out += self.intercept
        out = out.astype(dtype, copy=False)
        return out[:, 0] if self.single_output else out


def _as_targets(Ya):
    single = Ya.ndim == 1
    return np.array(Ya.reshape(Ya.shape[0], -1), dtype=np.float64, order="F", copy=True), single


def _gram_buffer(Xd, kernel, gamma, degree, coef0, n_threads, what, whole=True):
    """The n x n float64 Gram matrix; ``whole=False``: radial kernels fill only the
    upper triangle (all that the in-place Cholesky reads)."""
    n = Xd.shape[0]
    _v.check_memory(8 * n * n, f"{what}: the {n} x {n} float64 kernel matrix",
                    "use `rbf_network` with fewer centres for large n.")
    B = np.empty((n, n), dtype=np.float64)
    spec = KERNELS[kernel]
    if spec.radial and not whole:
        pairwise(Xd, Xd, spec.code, np.full(n, gamma), _consts(_F64, coef0), degree, True, B, n_threads, mirror=False)
        return B, False
    try:
        gram(Xd, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, out=B, n_threads=n_threads)
    except ValueError:  # the only refusal left for validated input: an overflow
        names = "`X` and `gamma`" if spec.radial else "`X`, `gamma`, `degree` and `coef0`"
        raise ValueError(f"{what}: the kernel matrix overflows float64 for these {names}; rescale the data or use "
                         "a smaller `gamma`.") from None
    return B, True


_KRR_REMEDIES = ("a larger `alpha` (or `jitter=\"auto\"`), a larger `gamma`, or removing (near-)duplicate points "
                 "from `X`.")
_INTERP_REMEDIES = ("a smoothing `alpha` > 0, a larger `gamma` (kernels that are not scale invariant), or removing "
                    "(near-)duplicate points from `X`.")


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at ``max_iter`` before reaching ``tol`` (the result
    is returned, with ``converged=False``).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from fastrbf import ConvergenceWarning, kernel_ridge
    >>> X = np.linspace(0, 1, 200)[:, None]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     m = kernel_ridge(X, np.sin(6 * X[:, 0]), gamma=30.0, alpha=1e-8, solver="nystrom-pcg",
    ...                      n_landmarks=50, max_iter=2)
    >>> m.converged, caught[0].category is ConvergenceWarning
    (False, True)
    """


#: solver="auto" factors the n x n matrix while 8 n^2 bytes are below this share of
#: the available memory
AUTO_MEMORY_SHARE = 0.5
#: kernels accepted by solver="nystrom-pcg" (positive (semi-)definite: K_mm is factored)
PCG_KERNELS = ("gaussian", "laplacian", "inverse_multiquadric", "inverse_quadratic", "truncated", "polynomial")
SOLVERS = ("auto", "cholesky", "nystrom-pcg")


def default_landmarks(n: int) -> int:
    """Default number of landmarks of solver="nystrom-pcg": ``min(n, max(1000,
    2 sqrt(n)))`` (Falkon's O(sqrt(n)) rule; 2000 at n = 10^6).

    Examples
    --------
    >>> default_landmarks(10**6), default_landmarks(500)
    (2000, 500)
    """
    return int(min(n, max(1000, int(np.ceil(2.0 * np.sqrt(n))))))


def _choose_solver(n, alpha, n_landmarks, landmarks):
    if n_landmarks is not None or not isinstance(landmarks, str):
        return "nystrom-pcg"
    if _v.ndim(alpha, "alpha") != 0:
        return "cholesky"
    avail = _v.available_memory()
    if avail is None or 8.0 * n * n < AUTO_MEMORY_SHARE * avail:
        return "cholesky"
    return "nystrom-pcg"


def kernel_ridge(X: ArrayLike, Y: ArrayLike, *, gamma: float, alpha: ArrayLike, kernel: str = "gaussian",
                 fit_intercept: bool = False, degree: int = 3, coef0: float = 1.0, jitter: float | str | None = None,
                 solver: str = "auto", n_landmarks: int | None = None, landmarks: str | ArrayLike = "uniform",
                 tol: float = 1e-7, max_iter: int = 100, seed: Seed = None, n_threads: Threads = None,
                 progress: ProgressArg = False) -> KernelModel:
    """Kernel ridge regression: weights ``W = (K + alpha I)^-1 Y``, or its Nystroem
    approximation for large n.

    ``solver="cholesky"``: the Gram matrix is built into one n x n float64 buffer that
    is factored in place (peak memory about one n x n matrix).

    ``solver="nystrom-pcg"`` (large n, no n x n or n x m matrix): Nystroem kernel ridge
    with m landmarks ``L``, ``(K_nm^T K_nm + alpha K_mm) beta = K_nm^T Y`` and
    ``f(x) = K(x, L) beta`` (the same unscaled ``alpha``; with ``L = X`` it is exact
    KRR), solved by Falkon's preconditioned conjugate gradients (Rudi et al. 2017):
    every product with ``K_nm`` is one fused pass over the data, the m x m
    preconditioner is two Cholesky factors.  Memory O(n d + m^2 + n k).

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, k)
    gamma : float
        Kernel width (> 0), as in :func:`fastrbf.gram`.
    alpha : float or array_like of shape (n,)
        Ridge, added to the diagonal; >= 0.  A number > 0 for "nystrom-pcg".
    kernel : str, default "gaussian"
        A positive definite kernel of :data:`fastrbf.KERNELS` ("nystrom-pcg": one of
        gaussian, laplacian, inverse_multiquadric, inverse_quadratic, truncated,
        polynomial).
    fit_intercept : bool, default False
        Fit ``Y - mean(Y)`` and add the mean back (scikit-learn's ``KernelRidge`` has
        no intercept: the default matches it).
    degree, coef0 :
        Parameters of the polynomial and tanh kernels.
    jitter : None, "auto" or float
        As in :func:`fastrbf.cholesky` ("cholesky" only).
    solver : {"auto", "cholesky", "nystrom-pcg"}, default "auto"
        "auto": "cholesky" while one n x n float64 matrix (8 n^2 bytes) takes less than
        half the available memory and neither ``n_landmarks`` nor an array of
        ``landmarks`` is given, else "nystrom-pcg" (array ``alpha``: always "cholesky").
    n_landmarks : int, optional
        Number of landmarks m in [1, n] ("nystrom-pcg"); default
        ``min(n, max(1000, 2 sqrt(n)))``.
    landmarks : {"uniform", "kmeans"} or array_like of shape (m, d), default "uniform"
        Uniform sample of the rows without replacement, k-means centres (k-means++ and
        10 Lloyd iterations on a subsample of ``min(n, 20 m)`` rows), or given.
    tol : float, default 1e-7
        "nystrom-pcg" stops when the relative residual of the preconditioned system is
        below ``tol`` for every output...
    max_iter : int, default 100
        ... or after ``max_iter`` iterations (then a :class:`ConvergenceWarning` and
        ``converged=False``).
    seed : None, int or numpy.random.Generator
        For the landmarks.
    n_threads : int, optional
    progress : bool, logging.Logger or callable, default False
        "nystrom-pcg": report the conjugate-gradient iterations
        (``kernel_ridge: CG iter 12/100, residual 3.1e-05, 1.1 s, ETA 8.2 s``; the
        ETA assumes ``max_iter`` iterations, an upper bound) and the k-means of
        ``landmarks="kmeans"``: True on stderr, a logger's ``info``, or a callable
        given a dict per iteration (see :func:`fastrbf.kmeans`; the metric is
        ``residual``).  "cholesky" (one factorisation) reports nothing.

    Returns
    -------
    KernelModel
        ``solver``, ``n_iter``, ``residual`` and ``converged`` report the solve.

    Raises
    ------
    NotPositiveDefiniteError
        "cholesky": ``K + alpha I`` is not positive definite, or singular to working
        precision (estimated condition number > 1/eps).

    Warns
    -----
    scipy.linalg.LinAlgWarning
        "cholesky": the solve reproduces ``Y`` only to more than 1e-6 relative
        (ill-conditioned; e.g. near-duplicate points with ``alpha = 0``).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import kernel_ridge
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> m = kernel_ridge(X, [0.0, 1.0, 0.0], gamma=1.0, alpha=0.1)
    >>> m.predict(X).round(3)
    array([0.038, 0.883, 0.038])
    >>> rng = np.random.default_rng(0)
    >>> Xl = rng.random((2000, 2))
    >>> big = kernel_ridge(Xl, np.sin(4 * Xl[:, 0]), gamma=2.0, alpha=1e-3, solver="nystrom-pcg",
    ...                    n_landmarks=100, seed=0)
    >>> big.centers.shape, big.converged, bool(abs(big.predict([[0.3, 0.5]])[0] - np.sin(1.2)) < 1e-3)
    ((100, 2), True, True)
    >>> reports = []
    >>> big = kernel_ridge(Xl, np.sin(4 * Xl[:, 0]), gamma=2.0, alpha=1e-3, solver="nystrom-pcg",
    ...                    n_landmarks=100, seed=0, progress=reports.append)
    >>> reports[-1]["task"], reports[-1]["stage"], reports[-1]["iter"] == big.n_iter
    ('kernel_ridge', 'cg', True)
    """
    spec = _check_kernel(kernel)
    Xa, Ya = _check_xy(X, Y)
    g = _check_scalar_gamma(gamma)
    deg, coef0 = _check_params(spec, degree, coef0)
    rng = _v.check_seed(seed, name="seed")
    _progress.check(progress)
    n = Xa.shape[0]
    if not isinstance(solver, str) or solver not in SOLVERS:
        raise ValueError(f"`solver` must be one of {SOLVERS}; got {solver!r}.")
    if solver == "auto":
        solver = _choose_solver(n, alpha, n_landmarks, landmarks)
    if solver == "nystrom-pcg":
        return _kernel_ridge_pcg(X, Xa, Ya, spec, g, deg, coef0, alpha, fit_intercept, jitter, n_landmarks,
                                 landmarks, tol, max_iter, rng, n_threads, progress)
    if n_landmarks is not None or not isinstance(landmarks, str):
        raise ValueError('`n_landmarks` and `landmarks` are used by solver="nystrom-pcg" only.')
    a = _check_alpha(alpha, n)
    n_threads = _threads.for_dense(n, Xa.shape[1], n_threads)
    Xd = _owned(_v.to_dtype(Xa, _F64, "X"), X)
    T, single = _as_targets(Ya)
    intercept = T.mean(axis=0) if fit_intercept else np.zeros(T.shape[1])
    T -= intercept
    # the whole matrix: the triangle the factorisation leaves untouched serves the check
    B, whole = _gram_buffer(Xd, kernel, g, deg, coef0, n_threads, "kernel_ridge", whole=True)
    d0 = _diag(B).copy()
    F, used = _factor_in_place(B, a, jitter, n_threads, name="K(X, X)", whole=whole)
    T0 = T.copy()
    _dense.potrs(F, T, n_threads)
    W = T
    _check_weights(W)
    _check_conditioning(F, d0 + a + used, W, T0, what="The kernel matrix K(X, X) + alpha I",
                        remedies=_KRR_REMEDIES, alpha=a, n_threads=n_threads)
    del B, F
    return KernelModel(Xd, np.ascontiguousarray(W), kernel, g, deg, coef0, intercept,
                       np.zeros((0, Xd.shape[1]), dtype=np.int64), np.zeros(Xd.shape[1]), np.ones(Xd.shape[1]),
                       np.zeros((0, W.shape[1])), _out_dtype(Xa, Ya), single, used)


def _check_pcg_args(kernel, alpha, n, tol, max_iter, landmarks, n_landmarks):
    """The checks of solver="nystrom-pcg" shared with :func:`fastrbf.dask.kernel_ridge`:
    (alpha as a float, the landmark count for ``landmarks="uniform"`` or ``"kmeans"``;
    None when ``landmarks`` is an array, which the caller checks)."""
    if kernel not in PCG_KERNELS:
        raise ValueError(f'`kernel` must be one of {PCG_KERNELS} for solver="nystrom-pcg" (a positive definite '
                         f"kernel); got {kernel!r}.")
    if _v.ndim(alpha, "alpha") != 0:
        raise TypeError(f'`alpha` must be a number > 0 for solver="nystrom-pcg" (not one value per point); '
                        f"got an array of shape {np.shape(alpha)}.")
    a = float(_check_alpha(alpha, n))
    if not a > 0:
        raise ValueError(f'`alpha` must be > 0 for solver="nystrom-pcg"; got {alpha!r}.')
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)) or not (
            np.isfinite(_v.as_float(tol)) and tol > 0):
        raise ValueError(f"`tol` must be a finite number > 0; got {tol!r}.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"`max_iter` must be an int >= 1; got {max_iter!r}.")
    if not isinstance(landmarks, str):
        return a, None
    if landmarks not in ("uniform", "kmeans"):
        raise ValueError(f'`landmarks` must be "uniform", "kmeans" or an array; got {landmarks!r}.')
    m = default_landmarks(n) if n_landmarks is None else n_landmarks
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m <= n:
        raise ValueError(f"`n_landmarks` must be an int in [1, n_samples] = [1, {n}]; got {m!r}.")
    return a, int(m)


def _kernel_ridge_pcg(X, Xa, Ya, spec, g, deg, coef0, alpha, fit_intercept, jitter, n_landmarks, landmarks, tol,
                      max_iter, rng, n_threads, progress=False):
    from . import _nystrom

    n, d = Xa.shape
    kernel = spec.name
    if jitter is not None:
        raise ValueError('`jitter` is used by solver="cholesky" only (nystrom-pcg adds its own to K_mm).')
    a, m = _check_pcg_args(kernel, alpha, n, tol, max_iter, landmarks, n_landmarks)
    if m is None:
        La = _data(landmarks, "landmarks")
        _v.check_features(Xa, La, "X", "landmarks")
        m = La.shape[0]
        if n_landmarks is not None and n_landmarks != m:
            raise ValueError(f"`n_landmarks` ({n_landmarks}) must equal the number of given `landmarks` ({m}).")
        landmarks = La
    T, single = _as_targets(Ya)
    k = T.shape[1]
    _, nch = _nystrom._chunking(n)
    _v.check_memory(8 * (n * d + 4 * m * m + 2 * n * k + 2 * nch * m * k),
                    f"kernel_ridge (nystrom-pcg, {m} landmarks)", "use fewer `n_landmarks`.")
    nt = _threads.for_work(n * m * (d + 8), n_threads)
    Xd = _v.to_dtype(Xa, _F64)
    intercept = T.mean(axis=0) if fit_intercept else np.zeros(k)
    T -= intercept
    rep = _progress.reporter(progress, "kernel_ridge")
    L = _nystrom.landmarks(Xd, m, landmarks, rng, nt, rep)  # a new array: the model owns it
    params = {"kernel": kernel, "gamma": g, "degree": deg, "coef0": coef0, "n_threads": nt}
    Kmm = gram(L, kernel=kernel, gamma=g, degree=deg, coef0=coef0, n_threads=nt)
    # the solve is linear in Y: it runs on Y / max|Y| (CG's squared norms of targets of
    # 1e160 would overflow) and the coefficients are scaled back
    ymax = float(np.abs(T).max())
    ys = ymax if ymax > 0 else 1.0
    T /= ys
    rhs = _nystrom.cross_t(Xd, L, T, **params)
    del T
    res = _nystrom.falkon_solve(lambda V: _nystrom.normal_matvec(Xd, L, V, **params), rhs, Kmm, a, n,
                                tol=float(tol), max_iter=int(max_iter), n_threads=nt, progress=rep)
    with np.errstate(over="ignore"):
        beta = res.beta * ys
    _check_weights(beta)
    if not res.converged:
        warnings.warn(f'kernel_ridge (solver="nystrom-pcg") did not converge in {res.n_iter} iterations: relative '
                      f"residual {res.residual:.3g} > tol = {tol:g}; raise `max_iter` or `alpha`.",
                      ConvergenceWarning, stacklevel=3)
    return KernelModel(L, beta, kernel, g, deg, coef0, intercept, np.zeros((0, d), dtype=np.int64),
                       np.zeros(d), np.ones(d), np.zeros((0, k)), _out_dtype(Xa, Ya), single, 0.0,
                       "nystrom-pcg", res.n_iter, res.residual, res.converged)


def _check_weights(W):
    _v.check_result(W, "The model's weight matrix", "`Y`, `alpha` and `gamma`",
                    "rescale `Y`, or use a larger `alpha` (or `gamma`).")


def _compact_trailing(A, q):
    """Move the trailing (n-q) x (n-q) block of the Fortran-ordered ``A`` to the start
    of its buffer, Fortran-ordered, and return it (no second n x n buffer)."""
    n = A.shape[0]
    m = n - q
    flat = A.ravel(order="F")
    assert np.shares_memory(flat, A)
    for j in range(m):  # targets never overlap sources not yet moved
        src = (q + j) * n + q
        flat[j * m : (j + 1) * m] = flat[src : src + m]
    return flat[: m * m].reshape((m, m), order="F")


def _lu_singular_text(degree, kernel, min_degree):
    return (f"The interpolation system (solved by LU: `degree` {degree} is below the {kernel!r} kernel's minimum "
            f"{min_degree}) is singular. Remedies: `degree` >= {min_degree}, {_INTERP_REMEDIES}")


def interpolate(X: ArrayLike, Y: ArrayLike, *, kernel: str = "thin_plate_spline", gamma: float | None = None,
                degree: int | None = None, alpha: ArrayLike = 0.0, n_threads: Threads = None) -> KernelModel:
    """RBF interpolation with a polynomial tail, as SciPy's ``RBFInterpolator``.

    Solves ``[[K + diag(alpha), P], [P^T, 0]] [w; c] = [y; 0]``; with ``alpha = 0`` the
    model reproduces the data.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, k)
    kernel : str, default "thin_plate_spline"
        A radial kernel of :data:`fastrbf.KERNELS`.
    gamma : float, optional
        ``epsilon**2`` in SciPy's terms.  Required unless the kernel is scale invariant
        (then 1.0).
    degree : int, optional
        Degree of the polynomial tail; -1 for none.  Default: the kernel's minimum
        degree, or 0 when it has none (SciPy's default).
    alpha : float or array_like of shape (n,), default 0
        Smoothing (SciPy's ``smoothing``), added to the diagonal.
    n_threads : int, optional

    Returns
    -------
    KernelModel

    Raises
    ------
    NotPositiveDefiniteError
        The system is singular (to working precision): duplicate points with
        ``alpha = 0``, or a ``gamma`` too small for the spacing of the points.

    Warns
    -----
    scipy.linalg.LinAlgWarning
        The solve reproduces ``Y`` only to more than 1e-6 relative (ill-conditioned).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import interpolate
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])
    >>> m = interpolate(X, [0.0, 1.0, 1.0, 2.0, 1.5])
    >>> bool(np.allclose(m.predict(X), [0.0, 1.0, 1.0, 2.0, 1.5]))
    True
    """
    spec = _check_kernel(kernel)
    if not spec.radial:
        raise ValueError(f"`kernel` must be a radial kernel for interpolation; got {kernel!r}.")
    Xa, Ya = _check_xy(X, Y)
    n, d = Xa.shape
    if gamma is None:
        if not spec.scale_invariant:
            raise ValueError(f"`gamma` must be given for the {kernel!r} kernel (it is not scale invariant).")
        gamma = 1.0
    g = _check_scalar_gamma(gamma)
    min_degree = spec.min_degree
    if degree is None:
        degree = max(min_degree, 0)
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < -1:
        raise ValueError(f"`degree` must be an int >= -1; got {degree!r}.")
    degree = int(degree)
    if degree < min_degree:
        warnings.warn(f"`degree` should be at least {min_degree} for the {kernel!r} kernel; the "
                      "interpolant may not be well-posed (solving the full system by LU).", UserWarning, stacklevel=2)
    a = _check_alpha(alpha, n)
    # count the monomials before listing them: C(d + degree, d) grows without bound
    q = math.comb(d + degree, d) if degree >= 0 else 0
    if n < q:
        raise ValueError(f"At least {q} data points are required when `degree` is {degree} and the "
                         f"number of dimensions is {d}; got {n}.")
    n_threads = _threads.for_dense(n, d, n_threads)
    Xd = _owned(_v.to_dtype(Xa, _F64, "X"), X)
    T, single = _as_targets(Ya)
    k = T.shape[1]
    powers = _monomial_powers(d, degree) if degree >= 0 else np.zeros((0, d), dtype=np.int64)
    lo, hi = Xd.min(axis=0), Xd.max(axis=0)
    shift = (hi + lo) / 2
    scale = (hi - lo) / 2
    scale[scale == 0.0] = 1.0
    P = _polynomial_matrix(Xd, shift, scale, powers)
    if q and np.linalg.matrix_rank(P) < q:
        raise ValueError(f"The polynomial matrix of degree {degree} of `X` is singular: the points do not "
                         "determine a polynomial of that degree (too few distinct points, or collinear "
                         "ones). Use a lower `degree`.")
    B, _ = _gram_buffer(Xd, kernel, g, 1, 0.0, n_threads, "interpolate")
    used = 0.0
    if degree < min_degree:  # ill-posed: SciPy's LU on the full system
        _v.check_memory(8 * (n + q) ** 2, f"interpolate: the {n + q} x {n + q} system", "")
        Afull = np.zeros((n + q, n + q))
        Afull[:n, :n] = B
        del B
        Afull[np.arange(n), np.arange(n)] += a
        Afull[:n, n:] = P
        Afull[n:, :n] = P.T
        rhs = np.zeros((n + q, k))
        rhs[:n] = T
        try:
            with _threads.serial_blas():
                sol = scipy.linalg.solve(Afull, rhs, overwrite_a=True, overwrite_b=True)
        except np.linalg.LinAlgError:  # exactly singular
            sol = None
        if sol is None or not np.all(np.isfinite(sol)):
            raise NotPositiveDefiniteError(_lu_singular_text(degree, kernel, min_degree), alpha=a)
        W, C = sol[:n], sol[n:]
    elif q == 0:
        d0 = _diag(B).copy()
        F, used = _interp_factor(B, a, n_threads)
        T0 = T.copy()
        _dense.potrs(F, T, n_threads)
        W = T
        _check_conditioning(F, d0 + a + used, W, T0, what="The interpolation matrix K(X, X) + diag(alpha)",
                            remedies=_INTERP_REMEDIES, alpha=a, n_threads=n_threads)
        C = np.zeros((0, k))
    else:
        with _threads.serial_blas():
            _diag_add(B, a)
            A = B.T  # Fortran view, A = K + diag(alpha) (symmetric)
            qr, tau, _, info = lapack.dgeqrf(np.asfortranarray(P))
            lw = max(1, n * 64)
            # A <- Q^T A Q in place (two applications of q reflectors)
            A, _, info1 = lapack.dormqr("L", "T", qr, tau, A, lw, overwrite_c=1)
            A, _, info2 = lapack.dormqr("R", "N", qr, tau, A, lw, overwrite_c=1)
            T12 = np.array(A[:q, q:])  # (Q^T A Q)[:q, q:], needed for the tail
            b, _, _ = lapack.dormqr("L", "T", qr, tau, T, max(1, k * 64), overwrite_c=1)  # Q^T y
            b1 = np.array(b[:q])
            b2 = np.array(b[q:], order="F")
            if q < n:
                M = _compact_trailing(A, q)
                del A
                Bm = M.T  # C-ordered view for the in-place factorisation
                dm = _diag(Bm).copy()
                F, used = _interp_factor(Bm, 0.0, n_threads)
                b20 = b2.copy()
                _dense.potrs(F, b2, n_threads)
                z = b2
                _check_conditioning(F, dm + used, z, b20, what="The interpolation system (on the polynomial null "
                                    "space)", remedies=_INTERP_REMEDIES, alpha=a, n_threads=n_threads)
                del M, F
            else:  # as many points as monomials: the polynomial alone interpolates, w = 0
                z = np.zeros((0, k))
            C = scipy.linalg.solve_triangular(np.triu(qr[:q, :q]), b1 - T12 @ z)
            wz = np.zeros((n, k), order="F")
            wz[q:] = z
            W, _, _ = lapack.dormqr("L", "N", qr, tau, wz, max(1, k * 64), overwrite_c=1)
            del B
    _check_weights(W)
    _check_weights(C)
    return KernelModel(Xd, np.ascontiguousarray(W), kernel, g, 1, 0.0, np.zeros(k), powers, shift, scale,
                       np.ascontiguousarray(C), _out_dtype(Xa, Ya), single, used)


def _interp_factor(B, a, n_threads):
    try:
        return _factor_in_place(B, a, None, n_threads)
    except NotPositiveDefiniteError as exc:
        raise NotPositiveDefiniteError(
            f"The interpolation system is not positive definite (numerically singular) on the "
            f"polynomial null space: the factorisation broke down at column {exc.column}. Causes: "
            f"duplicate points with `alpha` = 0, or a `gamma` so small against the spacing of the "
            f"points that the kernel matrix is numerically singular. Remedies: a smoothing `alpha` "
            f"> 0, a larger `gamma`, or removing duplicate points.", column=exc.column, alpha=a) from None


def _diag_add(B, a):
    n = B.shape[0]
    B.reshape(-1)[:: n + 1] += a


# ---------------------------------------------------------------- RBF network
@dataclass(frozen=True, eq=False)
class RBFNetwork:
    """A fitted RBF network ``f(x) = sum_j w_j phi(||x - c_j||^2; gamma_j) + b``.

    From :func:`rbf_network`.  Arrays only; picklable.

    Attributes
    ----------
    centers : ndarray of shape (K, d), float64
    gamma : ndarray of shape (K,)
        One width per centre.
    weights : ndarray of shape (K, k)
    bias : ndarray of shape (k,)
        Zeros when fitted with ``bias=False``.
    kernel : str
    classes : ndarray or None
        The class labels for a classifier (``.predict`` returns them), else None.
    dtype : numpy.dtype
    single_output : bool
    error_history : ndarray or None
        With ``learn_gamma``: the objective of the gamma steps / N after each accepted
        step, the starting value first (non-increasing).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import rbf_network
    >>> X = np.linspace(0, 1, 50)[:, None]
    >>> net = rbf_network(X, np.sin(4 * X[:, 0]), centers=X[::5], gamma=20.0)
    >>> net.centers.shape, net.weights.shape, net.bias.shape
    ((10, 1), (10, 1), (1,))
    """

    centers: np.ndarray
    gamma: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    kernel: str
    classes: np.ndarray | None
    dtype: np.dtype
    single_output: bool
    error_history: np.ndarray | None = None

    def decision_function(self, X: ArrayLike, *, n_threads: Threads = None) -> FloatArray:
        """The network's output: regression values, or the scores of a classifier
        (1-D for two classes, one column per class otherwise).

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import rbf_network
        >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
        >>> net = rbf_network(X, [1, -1, -1, 1], centers=np.array([[0.0, 0.2], [1.0, 0.7]]), gamma=1.0)
        >>> net.decision_function(X).round(3)
        array([ 1.022, -1.317, -0.441,  0.737])
        """
        Xq, dtype = _query(self.dtype, self.centers.shape[1], X)
        out = gram_matvec(Xq, self.centers, self.weights, kernel=self.kernel, gamma=self.gamma, n_threads=n_threads)
        out += self.bias
        out = out.astype(dtype, copy=False)
        return out[:, 0] if self.single_output else out

    def predict(self, X: ArrayLike, *, n_threads: Threads = None) -> np.ndarray:
        """Regression values, or class labels for a classifier (sign for two classes,
        the largest one-vs-rest score otherwise).

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import rbf_network
        >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
        >>> net = rbf_network(X, ["a", "b", "b", "a"], centers=X, gamma=1.0, classify=True)
        >>> net.predict(X).tolist()
        ['a', 'b', 'b', 'a']
        """
        s = self.decision_function(X, n_threads=n_threads)
        if self.classes is None:
            return s
        if s.ndim == 1:
            return self.classes[(s > 0).astype(np.int64)]
        return self.classes[np.argmax(s, axis=1)]


#: rows per design chunk and chunks per group of the TSQR pass
TSQR_CHUNK = 4096
TSQR_GROUP_CHUNKS = 16


class _TSQRWork:
    """Per-thread scratch of the TSQR pass."""

    def __init__(self, p, chunk):
        self.nb = min(32, p)
        self.T = np.empty((p, self.nb))
        self.work = np.empty(self.nb * p)
        self.iw = np.zeros(8, dtype=np.int32)
        self.gbuf = np.empty(_jla.JB)
        self.Bt = np.empty((p, chunk))

    def fold(self, Rt, Bt):
        from ._jit import lapack as _jlapack  # looks LAPACK up in SciPy: not at import

        info = _jlapack.tpqrt(Rt, Bt, self.T, self.work, self.iw)
        if info != 0:  # pragma: no cover - only for invalid arguments
            raise RuntimeError(f"LAPACK dtpqrt failed with info={info}.")


def _tsqr(C, X, g, code, dot, c, degree, T, n_threads, Xt=None):
    """Upper-triangular R (p x p, p = K + 1 + k) with R^T R = M^T M, M = [Phi 1 T]."""
    n = X.shape[0]
    p = C.shape[0] + 1 + T.shape[1]
    Xt = np.ascontiguousarray(X.T) if Xt is None else Xt
    Tc = np.ascontiguousarray(T)
    rows = TSQR_CHUNK * TSQR_GROUP_CHUNKS
    ng = -(-n // rows)
    phi = _jk.phi(code)
    Rts = np.zeros((ng, p, p))  # Rts[i] = R_i^T, C-ordered (R_i Fortran-ordered)

    def work(g0, g1):
        w = _TSQRWork(p, TSQR_CHUNK)
        for i in range(g0, g1):
            for r0 in range(i * rows, min(n, (i + 1) * rows), TSQR_CHUNK):
                r1 = min(n, r0 + TSQR_CHUNK)
                Bt = w.Bt if r1 - r0 == TSQR_CHUNK else np.empty((p, r1 - r0))
                _jla.design_chunk(C, Xt, r0, r1, dot, phi, g, c, degree, Tc, w.gbuf, Bt)
                w.fold(Rts[i], Bt)

    with _threads.serial_blas():
        _threads.map_ranges(work, ng, n_threads)
        w = _TSQRWork(p, 1)
        Rt = np.zeros((p, p))
        for i in range(ng):  # fold the group factors in group order
            w.fold(Rt, Rts[i])
    return np.triu(Rt.T)


def _check_targets(Y, n, classify, name="Y"):
    """(float64 targets (n, k) Fortran-ordered, single output?, classes or None): the
    values for regression, -1/+1 codes (two classes) or one-vs-rest codes."""
    if not classify:
        Ya = _v.check_targets(Y, n, name)
        T, single = _as_targets(Ya)
        return T, single, None
    classes, idx = _v.check_class_labels(Y, n, name)
    if classes.shape[0] < 2:
        raise ValueError(f"`Y` must have at least 2 classes with `classify=True`; got {classes.shape[0]}.")
    return _class_codes(idx, classes.shape[0]), classes.shape[0] == 2, classes


def _class_codes(idx, n_classes):
    """-1/+1 targets: one column (the second class positive) for two classes, one per
    class (one-vs-rest) otherwise; Fortran-ordered float64."""
    if n_classes == 2:
        return np.asfortranarray(np.where(idx == 1, 1.0, -1.0)[:, None])
    T = np.full((idx.shape[0], n_classes), -1.0, order="F")
    T[np.arange(idx.shape[0]), idx] = 1.0
    return T


def rbf_network(X: ArrayLike, Y: ArrayLike, *, gamma: ArrayLike, n_centers: int | None = None,
                centers: str | ArrayLike = "kmeans", alpha: float = 0.0, bias: bool = True, kernel: str = "gaussian",
                classify: bool = False, seed: Seed = None, max_iter: int = 300, n_init: int = 1,
                learn_gamma: bool = False, per_center: bool = False,
                validation: tuple[ArrayLike, ArrayLike] | None = None, gamma_tol: float = 1e-4,
                max_gamma_iter: int = 100, n_threads: Threads = None, progress: ProgressArg = False) -> RBFNetwork:
    """An RBF network: K centres, output weights by least squares (or ridge) and a bias.

    ``f(x) = sum_j w_j exp(-gamma_j ||x - c_j||^2) + b`` (for the Gaussian kernel).  The
    N x K design matrix is never formed (see the module notes: TSQR in chunks).

    Parameters
    ----------
    X : array_like of shape (N, d)
    Y : array_like of shape (N,) or (N, k)
        Targets; class labels (any values) with ``classify=True``.
    gamma : float or array_like of shape (K,)
        Width, or one width per centre; > 0.
    n_centers : int, optional
        Number of k-means centres (with ``centers="kmeans"``).
    centers : "kmeans", "all" or array_like of shape (K, d)
        k-means centres of ``X``, every training point (the full network), or given.
    alpha : float, default 0
        Ridge on the weights (not the bias).  0: the minimum-norm least-squares
        (pseudo-inverse) solution.
    bias : bool, default True
    kernel : str, default "gaussian"
        A kernel of :data:`fastrbf.KERNELS`.
    classify : bool, default False
        Two classes: regression on -1/+1 and the sign; more: one-vs-rest on -1/+1
        targets and the largest score.
    seed, max_iter, n_init :
        Passed to :func:`fastrbf.kmeans`.
    learn_gamma : bool, default False
        Learn the width(s) from ``gamma`` on (Gaussian kernel): the classical
        alternation of a least-squares solve for the weights at fixed widths and a
        gradient step on ``log gamma`` at fixed weights (analytic gradient of the squared
        error, fused; backtracking so the error never increases), until the relative
        improvement is below ``gamma_tol`` or ``max_gamma_iter`` steps.
    per_center : bool, default False
        With ``learn_gamma``: one width per centre instead of one for all (learned after a
        common width has been).
    validation : (X_val, Y_val), optional
        With ``learn_gamma``: take the gradient steps on the validation squared error
        (weights still solved on the training data) and stop when it goes up.
    gamma_tol, max_gamma_iter :
        Stopping rule of ``learn_gamma``: a finite number >= 0 and an int >= 0.
    n_threads : int, optional
    progress : bool, logging.Logger or callable, default False
        Report the k-means (as :func:`fastrbf.kmeans`, task ``"rbf_network kmeans"``)
        and the width steps of ``learn_gamma`` (stage ``"gamma"``, metric ``error``:
        the objective of the steps; the ETA assumes ``max_gamma_iter`` steps, an upper
        bound): True on stderr, a logger's ``info``, or a callable given a dict per
        iteration.

    Returns
    -------
    RBFNetwork
        With ``error_history`` when ``learn_gamma``: per accepted step, the objective of
        the steps divided by N (the training squared error plus ``alpha ||w||^2``; with
        ``alpha = 0`` a ridge of ``1e-12 N`` is used for the steps, the final weights are
        solved with ``alpha = 0``), or the validation mean squared error.

    Examples
    --------
    XOR with two given centres (bias, then the two weights):

    >>> import numpy as np
    >>> from fastrbf import rbf_network
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> net = rbf_network(X, [1.0, -1.0, -1.0, 1.0], centers=np.array([[0.0, 0.2], [1.0, 0.7]]), gamma=1.0)
    >>> print(np.round(net.bias, 3), np.round(net.weights[:, 0], 3))
    [-7.848] [7.397 7.823]
    """
    spec = _check_kernel(kernel)
    Xa = _data(X, "X")
    T, single, classes = _check_targets(Y, Xa.shape[0], classify)
    n, d = Xa.shape
    a = float(_check_alpha(alpha, 1)) if _v.ndim(alpha, "alpha") == 0 else None
    if a is None:
        raise TypeError(f"`alpha` must be a number here; got {alpha!r}.")
    _check_network_options(validation, gamma_tol, max_gamma_iter, learn_gamma, per_center, bias, classify)
    rng = _v.check_seed(seed, name="seed")
    rep = _progress.reporter(progress, "rbf_network")
    Ca = None
    if isinstance(centers, str):
        if centers == "kmeans":
            if n_centers is None:
                raise ValueError('`n_centers` must be given with centers="kmeans".')
            if isinstance(n_centers, bool) or not isinstance(n_centers, (int, np.integer)) or not 1 <= n_centers <= n:
                raise ValueError(f"`n_centers` must be an int in [1, n_samples] = [1, {n}]; got {n_centers!r}.")
            K = int(n_centers)
        elif centers == "all":
            K = n
        else:
            raise ValueError(f'`centers` must be "kmeans", "all" or an array; got {centers!r}.')
    else:
        Ca = _data(centers, "centers")
        _v.check_features(Xa, Ca, "X", "centers")
        K = Ca.shape[0]
        if n_centers is not None and (isinstance(n_centers, bool) or not isinstance(n_centers, numbers.Integral)):
            raise TypeError(f"`n_centers` must be None or an int; got {n_centers!r}.")
        if n_centers is not None and n_centers != K:
            raise ValueError(f"`n_centers` ({n_centers}) must equal the number of given `centers` ({K}).")
    g, _ = _v.check_gamma(gamma, K, _F64)
    g = _owned(g, gamma)
    deg, coef0 = _check_params(spec, 3, 1.0)
    _check_network_memory(n, d, K, T.shape[1], centers, n_threads)
    Xd = _v.to_dtype(Xa, _F64, "X")
    if Ca is not None:
        C = _owned(_v.to_dtype(Ca, _F64, "centers"), centers)
    elif centers == "all":
        C = _owned(Xd, X)  # copied only when it is the caller's own array
    else:
        if isinstance(max_iter, numbers.Integral) and not isinstance(max_iter, bool) and max_iter > 2**31:
            max_iter = 2**31  # Lloyd stops long before; the compiled loop counts in int64
        C = _kmeans(Xd, K, name="n_centers", seed=rng, max_iter=max_iter, n_init=n_init, n_threads=n_threads,
                    progress=rep).centers
    Xt = np.ascontiguousarray(Xd.T)
    solve = lambda gam: _solve_weights(C, Xd, Xt, gam, spec, coef0, deg, T, a, bias, n_threads)  # noqa: E731
    W, b = solve(g)
    history = None
    if learn_gamma:
        if spec.code != KERNELS["gaussian"].code:
            raise ValueError(f"`learn_gamma` needs the 'gaussian' kernel; got {kernel!r}.")
        if validation is not None:
            Xv, Yv = validation
            Xva = _data(Xv, "validation X")
            _v.check_features(Xa, Xva, "X", "validation X")
            nv = Xva.shape[0]
            if classify:  # coded with the training classes
                _v.check_class_labels(Yv, nv, "validation Y", "validation X")
                Yva = np.asarray(Yv)
                vidx = np.minimum(np.searchsorted(classes, Yva), classes.shape[0] - 1)
                if not np.array_equal(classes[vidx], Yva):
                    raise ValueError("`validation` labels must be classes seen in `Y`.")
                Tv = _class_codes(vidx, classes.shape[0])
            else:
                Tv, _ = _as_targets(_v.check_targets(Yv, nv, "validation Y", name_x="validation X"))
            if Tv.shape[1] != T.shape[1]:
                raise ValueError(f"`validation` targets must have shape ({nv}, {T.shape[1]}); got {Tv.shape}.")
            Xvt = np.ascontiguousarray(_v.to_dtype(Xva, _F64).T)
        else:
            Xvt, Tv = Xt, T
        # with alpha = 0 the steps use a tiny ridge: the truncated least-squares solution of
        # an ill-conditioned design jumps as singular values cross the rank cut-off, which
        # stalls gradient steps; the final weights are solved with the caller's alpha
        a_learn = a if a > 0 else 1e-12 * n
        solve_learn = lambda gam: _solve_weights(C, Xd, Xt, gam, spec, coef0, deg, T, a_learn, bias, n_threads)  # noqa: E731
        # one common width first, then (per_center) one per centre from there: per-centre
        # steps from a poor common start crawl (a few centres dominate the gradient)
        W0, b0 = solve_learn(g)
        g, W, b, history = _learn_gamma(C, Xvt, Tv, g, W0, b0, solve_learn, False, gamma_tol,
                                        max_gamma_iter, validation is not None, a_learn, n_threads, rep, not per_center)
        if per_center:
            g, W, b, more = _learn_gamma(C, Xvt, Tv, g, W, b, solve_learn, True, gamma_tol,
                                         max_gamma_iter, validation is not None, a_learn, n_threads, rep)
            history = np.r_[history, more[1:]]
        if a_learn != a:
            W, b = solve(g)
    dtype = _out_dtype(Xa) if classify else _out_dtype(Xa, np.asarray(Y))
    return RBFNetwork(C, g, W, b, kernel, classes, dtype, single, history)


def _check_network_options(validation, gamma_tol, max_gamma_iter, learn_gamma, per_center, bias, classify):
    """The scalar options of :func:`rbf_network` (checked whether or not they are used)."""
    for name, val in (("learn_gamma", learn_gamma), ("per_center", per_center), ("bias", bias),
                      ("classify", classify)):
        if not isinstance(val, (bool, np.bool_)):
            raise TypeError(f"`{name}` must be a bool; got {val!r}.")
    if isinstance(gamma_tol, (bool, np.bool_)) or not isinstance(gamma_tol, numbers.Real):
        raise TypeError(f"`gamma_tol` must be a finite number >= 0; got {gamma_tol!r}.")
    if not (np.isfinite(_v.as_float(gamma_tol)) and _v.as_float(gamma_tol) >= 0):
        raise ValueError(f"`gamma_tol` must be a finite number >= 0; got {gamma_tol!r}.")
    if isinstance(max_gamma_iter, (bool, np.bool_)) or not isinstance(max_gamma_iter, numbers.Integral):
        raise TypeError(f"`max_gamma_iter` must be an int >= 0; got {max_gamma_iter!r}.")
    if max_gamma_iter < 0:
        raise ValueError(f"`max_gamma_iter` must be an int >= 0; got {max_gamma_iter!r}.")
    if validation is not None and (not isinstance(validation, (tuple, list)) or len(validation) != 2):
        raise TypeError(f"`validation` must be None or a pair (X_val, Y_val); got {type(validation).__name__} "
                        f"{validation!r:.60}.")


def _check_network_memory(n, d, K, k, centers, n_threads):
    """Refuse (fastrbf's MemoryError) a network whose TSQR factors would not fit."""
    p = K + 1 + k
    groups = -(-n // (TSQR_CHUNK * TSQR_GROUP_CHUNKS))
    workers = min(groups, _threads.resolve(n_threads))
    # one p x p factor per row group, the final factor and the weight solve (2p x p),
    # per worker a p x TSQR_CHUNK design block; the float64 copy of X and its transpose
    need = 8 * (p * p * (groups + 4) + workers * p * (TSQR_CHUNK + 64) + 2 * n * d)
    hint = ('use centers="kmeans" with a smaller `n_centers`.' if isinstance(centers, str) and centers == "all"
            else "use fewer centres (`n_centers` or `centers`).")
    _v.check_memory(need, f"rbf_network: {K} centres on {n} points (factors of order {p})", hint)


def _solve_weights(C, X, Xt, g, spec, coef0, deg, T, a, bias, n_threads):
    """(W, b): least squares (a = 0) or ridge on the weights, from the TSQR factor."""
    R = _tsqr(C, X, g, spec.code, not spec.radial, _consts(_F64, coef0), deg, T, n_threads, Xt)
    return _weights_from_factor(R, X.shape[0], C.shape[0], T.shape[1], a, bias, n_threads)


def _weights_from_factor(R, n, K, k, a, bias, n_threads):
    """(W, b) from the upper-triangular factor R of ``[Phi 1 T]`` (n rows, K centres, k
    targets); shared with :mod:`fastrbf.dask`, which reduces R across row blocks."""
    Kp = K + 1
    R11 = R[:Kp, :Kp]
    z = R[:Kp, Kp:]
    with _threads.serial_blas():
        if not bias:  # drop the bias column: refold the remaining triangle
            keep = np.r_[0:K, Kp : Kp + k]
            R = scipy.linalg.qr(R[:, keep], mode="r")[0]
            R11, z = R[:K, :K], R[:K, K:]
        nw = R11.shape[0]
        if a > 0:
            D = np.sqrt(a) * np.eye(nw)
            if bias:
                D[K, K] = 0.0  # the bias is not penalised
            sol = scipy.linalg.lstsq(np.vstack([R11, D]), np.vstack([z, np.zeros((nw, k))]), lapack_driver="gelsd")[0]
        else:
            sol = scipy.linalg.lstsq(R11, z, cond=np.finfo(np.float64).eps * max(n, nw), lapack_driver="gelsd")[0]
    W = np.ascontiguousarray(sol[:K])
    b = sol[K].copy() if bias else np.zeros(k)
    return W, b


#: rows per partial sum of the gamma pass
GAMMA_CHUNK = 8192


def _gamma_objective(C, Xt, T, g, W, b, want_grad, n_threads):
    """(sum of squared residuals, its gradient in log gamma (K,)) of a Gaussian RBF
    network: fused chunks, partial sums per fixed chunk added in order."""
    n = Xt.shape[1]
    K = C.shape[0]
    k = W.shape[1]
    nch = -(-n // GAMMA_CHUNK)
    errs = np.zeros(nch)
    grads = np.zeros((nch, K))
    Tc = np.ascontiguousarray(T)

    def work(c0, c1):
        D = np.empty((K, _jla.JB))
        P = np.empty((K, _jla.JB))
        Rs = np.empty((k, _jla.JB))
        for c in range(c0, c1):
            lo = c * GAMMA_CHUNK
            _jla.gamma_pass(C, Xt, lo, min(n, lo + GAMMA_CHUNK), g, W, b, Tc, want_grad, D, P, Rs,
                            errs[c : c + 1], grads[c])

    _threads.map_ranges(work, nch, n_threads)
    return float(errs.sum()), grads.sum(axis=0)


def _learn_gamma(C, Xt, T, g, W, b, solve, per_center, tol, max_iter, early_stop, a, n_threads, rep=_progress.OFF,
                 last=True):
    """The classical alternation: at fixed widths the weights are solved, then a
    gradient step on log gamma.  The gradient at fixed weights is the gradient of the
    error with the weights re-solved (the weights minimise it: envelope theorem), and
    each trial step is judged with its weights re-solved (backtracking, Armijo), so the
    recorded error never increases.  Stops when the relative improvement is below
    ``tol``.  Returns (gamma, W, b, mean squared error per step; the ridge objective / n
    when ``a > 0``)."""
    n = Xt.shape[1]
    pen = (lambda W_: a * float(np.sum(W_ * W_))) if (a > 0 and not early_stop) else (lambda W_: 0.0)
    E, grad = _gamma_objective(C, Xt, T, g, W, b, True, n_threads)
    J = E + pen(W)
    history = [J / n]
    step = 1.0
    rep.start("gamma", max_iter, unit="width step" if not per_center else "per-centre width step")
    for _ in range(max_iter):
        gr = grad if per_center else np.full_like(grad, grad.sum() / np.sqrt(grad.shape[0]))
        norm = float(np.linalg.norm(gr))
        if norm == 0.0:
            break
        d = -gr / norm
        while True:
            g_new = g * np.exp(step * d)
            W_new, b_new = solve(g_new)
            E_new, grad_new = _gamma_objective(C, Xt, T, g_new, W_new, b_new, True, n_threads)
            J_new = E_new + pen(W_new)
            if J_new <= J - 1e-4 * step * norm or step < 1e-8:
                break
            step *= 0.5
        if not J_new < J:  # no decrease along the gradient: a stationary point
            break
        improvement = (J - J_new) / J
        g, W, b, E, grad, J = g_new, W_new, b_new, E_new, grad_new, J_new
        history.append(J / n)
        if improvement < tol:
            break
        if len(history) <= max_iter:  # the last step's report is the final one
            rep.step(len(history) - 1, error=J / n)
        step = min(4.0, 2.0 * step)
    (rep.finish if last else rep.finish_stage)(len(history) - 1, error=history[-1])
    return g, W, b, np.array(history)
