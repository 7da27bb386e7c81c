"""Choosing ``gamma`` and ``alpha`` without refits: closed-form leave-one-out (Rippa's
formula) and generalised cross-validation over a grid, for exact kernel ridge and for
RBF interpolation with a polynomial tail.

Decisions:

- **One symmetric eigendecomposition per gamma, then O(N^2) per alpha.**  For a system
  ``[[K + alpha I, P], [P^T, 0]]`` (``P`` the tail's monomials; none for kernel ridge) let
  the columns of ``Z`` be an orthonormal basis of the null space of ``P^T`` (the trailing
  columns of the Householder ``Q`` of ``P``) and ``Z^T K Z = V diag(mu) V^T``.  With
  ``U = Z V`` the top-left block of the inverse of the system is
  ``G(alpha) = U diag(1 / (mu + alpha)) U^T``, the weights are ``c = G y`` and
  - the leave-one-out residual of point i (Rippa 1999, which holds for the augmented
    system: leaving a point out of the system is a rank-one change of it) is
    ``e_i = c_i / G_ii``, with ``diag G = (U * U) @ (1 / (mu + alpha))``;
  - the residual of the fit is ``alpha c`` and ``trace(I - H) = alpha sum 1 / (mu +
    alpha)``, so GCV ``= N ||r||^2 / trace(I - H)^2 = N ||c||^2 / (sum 1 / (mu + alpha))^2``,
    which is also the limit at ``alpha = 0`` (exact interpolation).
  Each alpha costs two products with ``U``: no refit, no refactorisation.
- **Ill-posed pairs are infinite, not errors.**  A pair whose ``mu + alpha`` is not
  clearly positive (below ``N eps max |mu|``: the system is singular to working
  precision, or the kernel is not positive definite on the null space) gets ``inf``
  in both tables, so it is never chosen; every pair ill-posed raises, naming the
  remedies (and the kernel, when its matrix has a clearly negative eigenvalue: an
  indefinite kernel, not a singular system).  A huge ``alpha`` (up to the largest
  float) is well posed: ``1 / (mu + alpha)`` is then scaled by a power of two (the
  residuals and GCV are ratios in which it cancels), so the tables hold the limit of
  no fit (kernel ridge: the mean square of ``Y``), not NaN from underflow.
- **Multi-output targets** add their squared residuals: the tables are means over the
  points and the outputs.
- The best pair is refitted with :func:`~fastrbf.kernel_ridge` or
  :func:`~fastrbf.interpolate` (the model is exactly what a direct fit gives).
- Kernel ridge has no intercept here (scikit-learn's ``KernelRidge`` has none either);
  a constant term is ``interpolate_cv(..., degree=0)`` with a smoothing ``alpha``.
- Memory: about five ``N x N`` float64 arrays at peak (the kernel matrix, its projected
  copy, the eigenvectors, ``U`` and ``U * U``; one more, the null-space basis, with a
  polynomial tail), whatever the grid: a gamma's arrays are freed before the next one
  and only the LOO residuals of the best pair so far are kept; plus the two tables.
  Time ``O(N^3)`` per gamma (LAPACK ``dsyevd``) plus ``O(N^2 k)`` per alpha, linear in
  the grid.
- No limit on the grid: its cost is what the grid asks for, and the checks refuse
  only tables that do not fit in memory.  ``progress`` reports each gamma with the
  best pair so far and an ETA, so a long grid can be followed (and stopped by raising
  from a callable).
"""

from dataclasses import dataclass

import numpy as np

from .. import _progress, _threads
from .. import _validation as _v
from .._jit.kernels import RATIONAL_QUADRATIC
from .._lazy import scipy
from .._typing import ArrayLike, KernelArg, Threads
from ..kernels import check_kernel, check_params, check_positive_definite, gram
from .common import KernelModel, as_targets, check_xy, monomial_powers, polynomial_matrix
from .interpolation import interpolate
from .ridge import kernel_ridge

_F64 = np.dtype(np.float64)
CRITERIA = ("loo", "gcv")
#: 1 / (mu + alpha) is rescaled by a power of two when the exponent of its largest
#: value is beyond +-this (the package's bound for weighted sums, as ``weight_shift``)
_W_EXP = 200


@dataclass(frozen=True)
class SelectionResult:
    """The (gamma, alpha) tables of a closed-form selection and the model it chose.

    Attributes
    ----------
    gammas : ndarray of shape (g,)
    alphas : ndarray of shape (a,)
    loo_mse : ndarray of shape (g, a)
        Mean squared leave-one-out residual (over points and outputs); ``inf`` where the
        system is singular to working precision.
    gcv : ndarray of shape (g, a)
        Generalised cross-validation score (likewise).
    criterion : str
        ``"loo"`` or ``"gcv"``: the table the best pair minimises.
    best_gamma, best_alpha : float
    best_index : tuple of int
        ``(i, j)``: ``gammas[i]``, ``alphas[j]``.
    loo_residuals : ndarray of shape (n,) or (n, k)
        ``y_i - f_{-i}(x_i)`` at the best pair.
    model : KernelModel
        Fitted with the best pair.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import kernel_ridge_cv
    >>> X = np.linspace(0, 1, 30)[:, None]
    >>> res = kernel_ridge_cv(X, np.sin(6 * X[:, 0]), gamma=[1.0, 10.0, 100.0], alpha=[1e-6, 1e-3])
    >>> res.loo_mse.shape, res.best_gamma in (1.0, 10.0, 100.0)
    ((3, 2), True)
    """

    gammas: np.ndarray
    alphas: np.ndarray
    loo_mse: np.ndarray
    gcv: np.ndarray
    criterion: str
    best_gamma: float
    best_alpha: float
    best_index: tuple
    loo_residuals: np.ndarray
    model: KernelModel


def _grid(values, name, low_open):
    arr = np.atleast_1d(np.asarray(values, dtype=object))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"`{name}` must be a number or a non-empty 1-D sequence of numbers; got {values!r}.")
    out = np.empty(arr.size)
    for i, v in enumerate(arr):
        out[i] = _v.check_real(v, name, low=0, strict=low_open,
                               text="a finite number > 0 (or a sequence of them)" if low_open else
                               "a finite number >= 0 (or a sequence of them)")
    return out


def _null_basis(P):
    """Orthonormal basis (n, n - q) of the null space of ``P^T`` (identity when q = 0)."""
    n, q = P.shape
    if q == 0:
        return None
    with _threads.serial_blas():
        Q, _ = scipy.linalg.qr(P, mode="full")
    return np.ascontiguousarray(Q[:, q:])


def _tables(K, Z, T, alphas):
    """LOO-MSE and GCV for every alpha, the LOO residuals per alpha (lazily: the
    callable returns them for one index), the smallest eigenvalue ``mu`` (inf: none)
    and the threshold below which ``mu + alpha`` is ill-posed."""
    n = K.shape[0]
    with _threads.serial_blas():
        B = K if Z is None else Z.T @ K @ Z
        B = 0.5 * (B + B.T)
        if B.shape[0]:
            # (SciPy 1.10's evd driver asks LAPACK for too little workspace at n = 1)
            driver = "evd" if B.shape[0] > 1 else "ev"
            mu, V = scipy.linalg.eigh(B, overwrite_a=True, check_finite=False, driver=driver)
        else:
            mu, V = np.zeros(0), np.zeros((0, 0))
        U = V if Z is None else Z @ V
        Uty = U.T @ T
        U2 = U * U
    tiny = n * np.finfo(np.float64).eps * max(float(np.abs(mu).max()) if mu.size else 0.0, np.finfo(np.float64).tiny)
    loo = np.full(alphas.size, np.inf)
    gcv = np.full(alphas.size, np.inf)

    def solve(j):
        a = alphas[j]
        if mu.size and float(mu.min()) + a <= tiny:
            return None
        den = mu + a
        e = int(np.frexp(float(den.min()))[1]) if den.size else 0
        # 1 / (mu + alpha) times 2**e (exact) when it is so small (a huge alpha) or large
        # that the sums of squares below would underflow or overflow: the LOO residuals
        # and GCV are ratios in which the factor cancels
        w = 1.0 / den if -_W_EXP <= e <= _W_EXP else 1.0 / np.ldexp(den, -e)
        with _threads.serial_blas():
            c = U @ (w[:, None] * Uty)
            dg = U2 @ w
        return c, dg, w

    for j in range(alphas.size):
        got = solve(j)
        if got is None:
            continue
        c, dg, w = got
        if not np.all(dg > 0):
            continue
        E = c / dg[:, None]
        with np.errstate(over="ignore", invalid="ignore"):
            lo = float(np.mean(E * E))
            gc = float(n * np.mean(np.sum(c * c, axis=0)) / np.sum(w) ** 2) if w.size else np.inf
        loo[j] = np.inf if np.isnan(lo) else lo  # NaN (inf - inf, 0 / 0): an ill-posed pair
        gcv[j] = np.inf if np.isnan(gc) else gc

    def residuals(j):
        c, dg, _ = solve(j)
        return c / dg[:, None]

    return loo, gcv, residuals, (float(mu.min()) if mu.size else np.inf), tiny


def _select(X, Y, gammas, alphas, entry, kernel, deg, coef0, degree, criterion, n_threads, progress, what, refit):
    Xa, Ya = check_xy(X, Y)
    criterion = _v.check_choice(criterion, "criterion", CRITERIA, text='"loo" or "gcv"')
    rep = _progress.reporter(progress, what)
    rep.start("gamma", gammas.size, unit="gamma")
    n, d = Xa.shape
    # the kernel matrix, its projected copy, the eigenvectors, U and U * U (whatever the
    # grid: one gamma at a time), and the two tables
    _v.check_memory(5 * 8 * n * n + 2 * 8 * gammas.size * alphas.size,
                    f"{what}: the {n} x {n} kernel matrix, its eigenvectors and the {gammas.size} x {alphas.size} "
                    "tables", "select on a subsample of the points, or use fewer `gamma` or `alpha` values.")
    Xd = _v.to_dtype(Xa, _F64, "X")
    T, single = as_targets(Ya)
    if degree >= 0:
        powers = monomial_powers(d, degree)
        lo, hi = Xd.min(axis=0), Xd.max(axis=0)
        scale = (hi - lo) / 2
        scale[scale == 0.0] = 1.0
        P = polynomial_matrix(Xd, (hi + lo) / 2, scale, powers)
        if np.linalg.matrix_rank(P) < P.shape[1]:
            raise ValueError(f"The polynomial matrix of degree {degree} of `X` is singular: the points do not "
                             "determine a polynomial of that degree (too few distinct points, or collinear "
                             "ones). Use a lower `degree`.")
        Z = _null_basis(P)
    else:
        Z = None
    loo = np.full((gammas.size, alphas.size), np.inf)
    gcv = np.full((gammas.size, alphas.size), np.inf)
    table = loo if criterion == "loo" else gcv
    # the best pair so far (the first minimum in row-major order, as np.argmin of the
    # table) and its LOO residuals: nothing else of a gamma outlives its turn
    i = j = -1
    E = None
    best = best_loo = np.inf
    # the smallest eigenvalue, whether one is clearly negative (an indefinite kernel, not
    # a singular one), and the smallest alpha above which some gamma is well posed
    lowest, indefinite, need = np.inf, False, np.inf
    for ig, g in enumerate(gammas):
        K = gram(Xd, kernel=kernel, gamma=float(g), degree=deg, coef0=coef0, n_threads=n_threads)
        loo[ig], gcv[ig], r, mu_min, tiny = _tables(K, Z, T, alphas)
        del K
        jg = int(np.argmin(table[ig]))
        if table[ig, jg] < best:
            i, j, best, E = ig, jg, float(table[ig, jg]), r(jg)
        del r
        best_loo = min(best_loo, float(loo[ig].min()))
        lowest, indefinite, need = min(lowest, mu_min), indefinite or mu_min < -tiny, min(need, tiny - mu_min)
        if ig + 1 < gammas.size:
            rep.step(ig + 1, best_loo=best_loo, best_gamma=float(gammas[i]) if i >= 0 else np.nan,
                     best_alpha=float(alphas[j]) if j >= 0 else np.nan)
    if E is None:
        if indefinite:
            on = "" if degree < 0 else f" on the null space of the polynomial tail of degree {degree}"
            fix = ("a positive definite `kernel` (gaussian, laplacian, a Matern, ...)" if degree < 0 else
                   "a higher `degree` or another `kernel`")
            raise ValueError(f"{what}: the {entry.name!r} kernel is not positive definite{on} for these points "
                             f"(the smallest eigenvalue of its matrix over the `gamma` values is {lowest:.3g}), so "
                             f"none of the `alpha` values makes the system positive definite; use {fix}, or `alpha` "
                             f"values above {need:.3g} (the least that makes one of the `gamma` values well posed).")
        raise ValueError(f"{what}: every (gamma, alpha) pair gives a system singular to working precision; use "
                         "larger `alpha` values, larger `gamma` values (kernels that are not scale invariant), or "
                         "remove duplicate points from `X`.")
    model = refit(float(gammas[i]), float(alphas[j]))
    rep.finish(gammas.size, best_loo=float(loo[i, j]), best_gamma=float(gammas[i]), best_alpha=float(alphas[j]))
    return SelectionResult(gammas, alphas, loo, gcv, criterion, float(gammas[i]), float(alphas[j]), (i, j),
                           E[:, 0] if single else E, model)


def kernel_ridge_cv(X: ArrayLike, Y: ArrayLike, *, gamma: ArrayLike, alpha: ArrayLike, kernel: KernelArg = "gaussian",
                    degree: int = 3, coef0: float = 1.0, criterion: str = "loo", n_threads: Threads = None,
                    progress: _progress.ProgressArg = False) -> SelectionResult:
    """Kernel ridge regression with ``gamma`` and ``alpha`` chosen by closed-form
    leave-one-out (or GCV) over a grid: one eigendecomposition per ``gamma``, every
    ``alpha`` in ``O(N^2)``, no refit (see the module docstring).

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, k)
    gamma : float or sequence of float
        Candidate widths, > 0.
    alpha : float or sequence of float
        Candidate ridges, >= 0 (as :func:`fastrbf.kernel_ridge`).
    kernel, degree, coef0 :
        A positive definite kernel and its parameters, as :func:`fastrbf.kernel_ridge`.
    criterion : {"loo", "gcv"}, default "loo"
        Which table chooses the pair.
    n_threads : int, optional
    progress : bool, logging.Logger or callable, default False
        One report per ``gamma``, with the best pair so far (metrics ``best_loo``,
        ``best_gamma``, ``best_alpha``) and an ETA: time is linear in the grid (one
        eigendecomposition per ``gamma``), with no limit on its size, so follow a long
        grid with it.

    Returns
    -------
    SelectionResult
        Both tables, the best pair, the leave-one-out residuals there, and the model
        :func:`fastrbf.kernel_ridge` fits with it.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import kernel_ridge_cv
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (80, 1))
    >>> y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(80)
    >>> res = kernel_ridge_cv(X, y, gamma=[0.1, 1.0, 10.0], alpha=[1e-4, 1e-2, 1.0])
    >>> res.best_gamma, res.best_alpha
    (1.0, 0.01)
    >>> bool(res.loo_mse[res.best_index] == res.loo_mse.min())
    True
    """
    entry = check_kernel(kernel)
    deg, c0 = check_params(entry, degree, coef0)
    gammas = _grid(gamma, "gamma", True)
    alphas = _grid(alpha, "alpha", False)
    check_positive_definite(entry, None, "kernel_ridge_cv")

    def refit(g, a):
        return kernel_ridge(X, Y, gamma=g, alpha=a, kernel=kernel, degree=deg, coef0=c0, solver="cholesky",
                            n_threads=n_threads)

    return _select(X, Y, gammas, alphas, entry, kernel, deg, c0, -1, criterion, n_threads, progress,
                   "kernel_ridge_cv", refit)


def interpolate_cv(X: ArrayLike, Y: ArrayLike, *, gamma: ArrayLike = 1.0, alpha: ArrayLike = 0.0,
                   kernel: KernelArg = "thin_plate_spline", degree: int | None = None, criterion: str = "loo",
                   n_threads: Threads = None, progress: _progress.ProgressArg = False) -> SelectionResult:
    """RBF interpolation (with a polynomial tail and smoothing ``alpha``, as
    :func:`fastrbf.interpolate`) with ``gamma`` and ``alpha`` chosen by closed-form
    leave-one-out (Rippa's formula on the polynomial null space) or GCV over a grid.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, k)
    gamma : float or sequence of float, default 1.0
        Candidate widths (``epsilon**2`` in SciPy's terms), > 0.
    alpha : float or sequence of float, default 0.0
        Candidate smoothings, >= 0 (0: exact interpolation; its leave-one-out residuals
        are still defined).
    kernel : str or UserKernel, default "thin_plate_spline"
        A radial kernel.
    degree : int, optional
        Degree of the polynomial tail (-1: none); default the kernel's minimum, as
        :func:`fastrbf.interpolate`.
    criterion : {"loo", "gcv"}, default "loo"
    n_threads : int, optional
    progress : bool, logging.Logger or callable, default False
        One report per ``gamma`` with the best pair so far and an ETA, as
        :func:`kernel_ridge_cv` (no limit on the grid: time is linear in it).

    Returns
    -------
    SelectionResult

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import interpolate_cv
    >>> rng = np.random.default_rng(1)
    >>> X = rng.uniform(0, 1, (60, 2))
    >>> y = np.exp(-((X - 0.5) ** 2).sum(axis=1) * 4)
    >>> res = interpolate_cv(X, y, kernel="gaussian", gamma=[1.0, 4.0, 16.0], alpha=[0.0, 1e-8], degree=0)
    >>> res.best_gamma in (1.0, 4.0, 16.0), res.model.poly_powers.shape
    (True, (1, 2))
    """
    entry = check_kernel(kernel)
    if not entry.radial:
        raise ValueError(f"`kernel` must be a radial kernel for interpolation; got {kernel!r}.")
    gammas = _grid(gamma, "gamma", True)
    alphas = _grid(alpha, "alpha", False)
    if degree is None:
        degree = max(entry.min_degree, 0)
    degree = _v.check_int(degree, "degree", -1, type_error=ValueError)
    if degree < entry.min_degree:
        raise ValueError(f"`degree` must be at least {entry.min_degree} for the {kernel!r} kernel here (the "
                         "closed form needs a system that is positive definite on the polynomial null space).")
    coef0 = 1.0 if entry.code == RATIONAL_QUADRATIC else 0.0

    def refit(g, a):
        return interpolate(X, Y, kernel=kernel, gamma=g, degree=degree, alpha=a, n_threads=n_threads, method="dense")

    return _select(X, Y, gammas, alphas, entry, kernel, 1, coef0, degree, criterion, n_threads, progress,
                   "interpolate_cv", refit)


__all__ = ["CRITERIA", "SelectionResult", "interpolate_cv", "kernel_ridge_cv"]
