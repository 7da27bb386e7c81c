"""Gaussian-process regression with the PRML covariance, hyperparameters learned by
maximising the log marginal likelihood.

The kernel (Bishop, PRML 6.63) is ``k(x, y) = t0 exp(-t1/2 ||x - y||^2) + t2 + t3 x.y``
(``kernel="prml"``, ``theta = (t0, t1, t2, t3)``) or its first term alone
(``kernel="gaussian"``, ``theta = (t0, t1)``); ``C = K + noise I``.  scikit-learn's
equivalent is ``ConstantKernel(t0) * RBF(1/sqrt(t1)) + ConstantKernel(t2) +
ConstantKernel(t3) * DotProduct(sigma_0=0) + WhiteKernel(noise)``.

Decisions:

- Everything comes from one Cholesky factor of ``C`` (built in float64 straight into
  the buffer that is factored in place).  The gradient needs ``tr((a a^T - C^-1)
  dC/dlog t)``: ``C^-1`` is formed from the factor by LAPACK ``potri`` in the same
  buffer (no second n x n matrix, no ``inv``), and the traces are summed on the fly by a
  kernel that recomputes the distances (no matrix per parameter).
- Gradients are with respect to the logarithms of ``(theta..., noise)``, as
  scikit-learn's ``log_marginal_likelihood(eval_gradient=True)``.
- The optimiser is SciPy's L-BFGS-B in log space, started from ``theta0``/``noise`` and
  from ``n_restarts`` points drawn log-uniformly inside ``bounds`` (seeded); the table
  of restarts is kept on the model and a warning is given when the optimum sits on a
  bound.
- Prediction: the mean is ``k(x)^T a`` through the fused ``gram_matvec`` (no
  n_query x n matrix); the variance ``k(x, x) + noise - ||L^-1 k(x)||^2`` is computed by
  triangular solves over chunks of ``PREDICT_CHUNK`` query points and clamped at 0 (the
  number of clamped values is recorded on the result).
"""

import math
import warnings
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np
import scipy.linalg
import scipy.optimize
from scipy.linalg import lapack

from . import _threads
from . import _validation as _v
from ._jit import gp as _jgp
from ._typing import ArrayLike, FloatArray, Seed, Threads
from .kernels import gram_matvec
from .linalg import _factor_in_place

_KERNELS = {"prml": 4, "gaussian": 2}
PREDICT_CHUNK = 1024


def _check_kernel(kernel):
    if kernel not in _KERNELS:
        raise ValueError(f"`kernel` must be one of {sorted(_KERNELS)}; got {kernel!r}.")
    return _KERNELS[kernel]


def _check_theta(theta, kernel, name="theta"):
    k = _check_kernel(kernel)
    try:
        t = np.asarray(theta, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be {k} numbers; got {theta!r}.") from None
    if t.shape != (k,):
        raise ValueError(f"`{name}` must have {k} values for the {kernel!r} kernel; got shape {t.shape}.")
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError(f"`{name}` must contain only finite values > 0; got {t.tolist()}.")
    return t


def _check_noise(noise):
    if isinstance(noise, bool) or not isinstance(noise, (int, float, np.integer, np.floating)) or not (
        np.isfinite(noise) and noise > 0
    ):
        raise ValueError(f"`noise` must be a finite number > 0; got {noise!r}.")
    return float(noise)


def _params(theta):
    """(t0, g = t1 / 2, t2, t3, whether the constant and linear terms are in)."""
    dotk = len(theta) == 4
    t2 = float(theta[2]) if dotk else 0.0
    t3 = float(theta[3]) if dotk else 0.0
    return float(theta[0]), float(theta[1]) / 2.0, t2, t3, dotk


def _check_xy(X, y):
    Xa = _v.check_data(X, "X")
    ya = _v.check_targets(y, Xa.shape[0], "y", ndims=(1,))
    return _v.to_dtype(Xa, np.float64), np.ascontiguousarray(ya, dtype=np.float64)


def _factor(X, theta, noise, n_threads):
    """C = K + noise I built as its upper triangle and factored in place."""
    n = X.shape[0]
    t0, g, t2, t3, dotk = _params(theta)
    _v.check_memory(8 * n * n, f"gp: the {n} x {n} covariance matrix", "use fewer points.")
    B = np.empty((n, n))
    Xt = np.ascontiguousarray(X.T)
    _threads.map_ranges(lambda lo, hi: _jgp.cov_upper(X, Xt, lo, hi, t0, g, t2, t3, dotk, B), (n + 1) // 2, n_threads)
    F, _ = _factor_in_place(B, noise, None, n_threads, name="C = K + noise I", whole=False)
    return B, F, Xt


def _lml_grad(X, y, theta, noise, grad, n_threads):
    n = X.shape[0]
    n_threads = _threads.for_dense(n, X.shape[1], n_threads)
    B, F, Xt = _factor(X, theta, noise, n_threads)
    with _threads.blas_threads(n_threads):
        a, _ = lapack.dpotrs(F, y[:, None].copy(order="F"), lower=1)
    a = a[:, 0]
    logdet_half = float(np.sum(np.log(np.diag(F))))
    lml = -0.5 * float(np.sum(y * a)) - logdet_half - 0.5 * n * math.log(2 * math.pi)
    if not grad:
        return lml, None
    with _threads.blas_threads(n_threads):
        Ci, info = lapack.dpotri(F, lower=1, overwrite_c=1)  # C^-1 (upper triangle of B)
    if info != 0:  # pragma: no cover - the factor is nonsingular here
        raise RuntimeError(f"LAPACK potri failed with info={info}.")
    t0, g, t2, t3, dotk = _params(theta)
    part = np.empty((n, 4))
    _threads.map_ranges(lambda lo, hi: _jgp.grad_upper(X, Xt, B, a, lo, hi, t0, g, dotk, part), (n + 1) // 2, n_threads)
    tr = 0.5 * part.sum(axis=0) * np.array([1.0, 1.0, t2, t3])
    gnoise = 0.5 * noise * (float(np.sum(a * a)) - float(np.trace(B)))
    k = len(theta)
    return lml, np.r_[tr[:k], gnoise]


def gp_log_marginal_likelihood(X: ArrayLike, y: ArrayLike, theta: ArrayLike, *, noise: float, kernel: str = "prml",
                               grad: bool = True, n_threads: Threads = None) -> float | tuple[float, FloatArray]:
    """Log marginal likelihood of a GP with the PRML kernel, and its gradient.

    ``log p(y) = -y^T C^-1 y / 2 - log det C / 2 - n log(2 pi) / 2`` with
    ``C = K + noise I``.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
    theta : array_like of shape (4,) or (2,)
        ``(t0, t1, t2, t3)`` of ``t0 exp(-t1/2 r^2) + t2 + t3 x.y`` (``kernel="prml"``),
        or ``(t0, t1)`` (``kernel="gaussian"``); all > 0.
    noise : float
        > 0, added to the diagonal (``1 / beta`` in PRML).
    kernel : {"prml", "gaussian"}
    grad : bool, default True
        Also return the gradient with respect to ``log(theta)`` then ``log(noise)``.
    n_threads : int, optional

    Returns
    -------
    lml : float
    grad : ndarray of shape (len(theta) + 1,), only with ``grad=True``

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gp_log_marginal_likelihood
    >>> X = np.linspace(0, 1, 5)[:, None]
    >>> lml, g = gp_log_marginal_likelihood(X, np.sin(3 * X[:, 0]), [1.0, 4.0, 0.1, 0.1], noise=0.01)
    >>> round(lml, 4), g.shape
    (-2.0677, (5,))
    """
    Xd, yd = _check_xy(X, y)
    t = _check_theta(theta, kernel)
    nz = _check_noise(noise)
    lml, g = _lml_grad(Xd, yd, t, nz, grad, n_threads)
    return (lml, g) if grad else lml


@dataclass(frozen=True, eq=False)
class GPModel:
    """A fitted GP regression model (from :func:`gp_regression`).

    Attributes
    ----------
    X_train : ndarray of shape (n, d)
    alpha : ndarray of shape (n,)
        ``C^-1 (y - y_mean) / y_std``.
    factor : ndarray of shape (n, n)
        The Cholesky factor of ``C`` (lower triangle, Fortran-ordered), for variances.
    kernel : str
    theta : ndarray
    noise : float
    y_mean, y_std : float
        The normalisation of ``y`` (0 and 1 without ``normalize_y``).
    log_marginal_likelihood : float
    restarts : list of dict
        One row per optimiser start: ``start``, ``theta``, ``noise``, ``lml``,
        ``converged``, ``n_iter``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gp_regression
    >>> X = np.linspace(0, 1, 15)[:, None]
    >>> gp = gp_regression(X, np.sin(6 * X[:, 0]), kernel="gaussian", theta0=[1.0, 20.0], noise=1e-4,
    ...                    optimize=False)
    >>> bool(abs(gp.predict([[0.5]])[0] - np.sin(3.0)) < 1e-2)
    True
    """

    X_train: np.ndarray
    alpha: np.ndarray
    factor: np.ndarray
    kernel: str
    theta: np.ndarray
    noise: float
    y_mean: float
    y_std: float
    log_marginal_likelihood: float
    restarts: list

    @overload
    def predict(self, X: ArrayLike, *, return_var: Literal[False] = False, n_threads: Threads = None) -> FloatArray: ...

    @overload
    def predict(self, X: ArrayLike, *, return_var: Literal[True], n_threads: Threads = None) -> "GPPrediction": ...

    def predict(self, X: ArrayLike, *, return_var: bool = False, n_threads: Threads = None) -> "FloatArray | GPPrediction":
        """Predictive mean, and with ``return_var=True`` the predictive variance of
        ``y`` (noise included) as a :class:`GPPrediction`.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import gp_regression
        >>> X = np.linspace(0, 1, 20)[:, None]
        >>> m = gp_regression(X, np.sin(3 * X[:, 0]), theta0=[1.0, 10.0, 0.1, 0.1], noise=1e-4, optimize=False)
        >>> p = m.predict([[0.5]], return_var=True)
        >>> bool(abs(p.mean[0] - np.sin(1.5)) < 1e-3), bool(0 < p.var[0] < 1e-3)
        (True, True)
        """
        Xa = _v.check_data(X, "X")
        if Xa.shape[1] != self.X_train.shape[1]:
            raise ValueError(f"`X` must have {self.X_train.shape[1]} features (as the training data); got shape {Xa.shape}.")
        Xq = _v.to_dtype(Xa, np.float64)
        t0, g, t2, t3, dotk = _params(self.theta)
        mean = t0 * gram_matvec(Xq, self.X_train, self.alpha, gamma=g, n_threads=n_threads) + t2 * self.alpha.sum()
        if dotk:
            with _threads.serial_blas():
                mean += t3 * (Xq @ (self.X_train.T @ self.alpha))
        mean = mean * self.y_std + self.y_mean
        if not return_var:
            return mean
        n = self.X_train.shape[0]
        m = Xq.shape[0]
        var = np.empty(m)
        Xt = np.ascontiguousarray(self.X_train.T)
        prior = np.full(m, t0 + t2 + self.noise)
        if dotk:
            prior += t3 * np.einsum("ij,ij->i", Xq, Xq)
        Kq = np.empty((min(PREDICT_CHUNK, m), n))
        nt = _threads.resolve(n_threads)
        for q0 in range(0, m, PREDICT_CHUNK):
            q1 = min(m, q0 + PREDICT_CHUNK)
            Kb = Kq[: q1 - q0]

            def rows(lo, hi, q0=q0, Kb=Kb):
                _jgp.cov_rows(Xq, Xt, q0 + lo, q0 + hi, t0, g, t2, t3, dotk, Kb[lo:hi])

            _threads.map_ranges(rows, q1 - q0, nt)
            with _threads.blas_threads(nt):
                V = scipy.linalg.solve_triangular(self.factor, Kb.T, lower=True, check_finite=False)
            var[q0:q1] = prior[q0:q1] - np.einsum("ij,ij->j", V, V)
        clamped = int(np.count_nonzero(var < 0))
        np.maximum(var, 0.0, out=var)
        return GPPrediction(mean, var * self.y_std**2, clamped)


@dataclass(frozen=True)
class GPPrediction:
    """Predictive mean and variance; ``n_clamped`` variances were negative by rounding
    and set to 0.

    Attributes
    ----------
    mean : ndarray of shape (m,)
    var : ndarray of shape (m,) or None
        None unless ``return_var=True``.
    n_clamped : int

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gp_regression
    >>> X = np.linspace(0, 1, 10)[:, None]
    >>> gp = gp_regression(X, X[:, 0], kernel="gaussian", theta0=[1.0, 5.0], noise=1e-2, optimize=False)
    >>> p = gp.predict(X[:3], return_var=True)
    >>> p.mean.shape, bool((p.var > 0).all()), p.n_clamped
    ((3,), True, 0)
    """

    mean: np.ndarray
    var: np.ndarray
    n_clamped: int


def _check_bounds(bounds, k):
    if bounds is None:
        return np.array([[1e-5, 1e5]] * k)
    b = np.asarray(bounds, dtype=np.float64)
    if b.shape != (k, 2) or not np.all(np.isfinite(b)) or np.any(b[:, 0] <= 0) or np.any(b[:, 0] >= b[:, 1]):
        raise ValueError(f"`bounds` must be {k} pairs (low, high) with 0 < low < high (theta..., noise); got {bounds!r}.")
    return b


def gp_regression(X: ArrayLike, y: ArrayLike, *, kernel: str = "prml", theta0: ArrayLike | None = None,
                  noise: float = 1e-2, optimize: bool = True, n_restarts: int = 3, bounds: ArrayLike | None = None,
                  seed: Seed = None, normalize_y: bool = False, n_threads: Threads = None) -> "GPModel":
    """Gaussian-process regression; hyperparameters by maximum marginal likelihood.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
    kernel : {"prml", "gaussian"}
        See the module notes.
    theta0 : array_like, optional
        Starting (or, with ``optimize=False``, fixed) kernel parameters; default all 1.
    noise : float, default 1e-2
        Starting (or fixed) noise variance, > 0.
    optimize : bool, default True
        Maximise the log marginal likelihood over ``log(theta), log(noise)`` (L-BFGS-B).
    n_restarts : int, default 3
        Further starts, drawn log-uniformly inside ``bounds``.
    bounds : array_like of shape (len(theta) + 1, 2), optional
        Bounds of ``(theta..., noise)``; default ``(1e-5, 1e5)`` each.  The start must lie
        inside.
    seed : None, int or numpy.random.Generator
        For the restarts.
    normalize_y : bool, default False
        Fit ``(y - mean) / std``.
    n_threads : int, optional

    Returns
    -------
    GPModel

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gp_regression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((40, 1))
    >>> y = np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(40)
    >>> m = gp_regression(X, y, kernel="gaussian", theta0=[1.0, 10.0], noise=0.01, seed=0)
    >>> bool(m.log_marginal_likelihood > 0), len(m.restarts)
    (True, 4)
    """
    Xd, yd = _check_xy(X, y)
    k = _check_kernel(kernel)
    t0 = _check_theta(np.ones(k) if theta0 is None else theta0, kernel, "theta0")
    nz = _check_noise(noise)
    b = _check_bounds(bounds, k + 1)
    start = np.r_[t0, nz]
    if optimize and (np.any(start < b[:, 0]) or np.any(start > b[:, 1])):
        raise ValueError(f"The start (theta0..., noise) = {start.tolist()} must lie inside `bounds` {b.tolist()}.")
    if isinstance(n_restarts, bool) or not isinstance(n_restarts, (int, np.integer)) or n_restarts < 0:
        raise ValueError(f"`n_restarts` must be an int >= 0; got {n_restarts!r}.")
    y_mean, y_std = (float(yd.mean()), float(yd.std())) if normalize_y else (0.0, 1.0)
    if y_std == 0.0:
        y_std = 1.0
    yn = (yd - y_mean) / y_std
    restarts = []
    best = np.log(start)
    # the start must give a positive definite C: a clear NotPositiveDefiniteError here
    # (column, remedies) rather than an optimiser that silently skips it
    _lml_grad(Xd, yn, t0, nz, False, n_threads)
    if optimize:
        rng = np.random.default_rng(seed)
        lb = np.log(b)

        def objective(p):
            val, g = _lml_grad(Xd, yn, np.exp(p[:k]), float(np.exp(p[k])), True, n_threads)
            return -val, -g

        starts = [np.log(start)] + [rng.uniform(lb[:, 0], lb[:, 1]) for _ in range(n_restarts)]
        best_val = -np.inf
        for s in starts:
            try:
                res = scipy.optimize.minimize(objective, s, jac=True, method="L-BFGS-B", bounds=lb)
                val, p, conv, nit = -float(res.fun), res.x, bool(res.success), int(res.nit)
            except np.linalg.LinAlgError:  # a start where C is numerically singular
                val, p, conv, nit = -np.inf, s, False, 0
            restarts.append(dict(start=np.exp(s), theta=np.exp(p[:k]), noise=float(np.exp(p[k])), lml=val,
                                 converged=conv, n_iter=nit))
            if val > best_val:
                best_val, best = val, p
        if not np.isfinite(best_val):
            raise np.linalg.LinAlgError("Every optimiser start failed: the covariance was not positive definite.")
        on_bound = np.isclose(best, lb[:, 0], rtol=0, atol=1e-8) | np.isclose(best, lb[:, 1], rtol=0, atol=1e-8)
        if on_bound.any():
            names = [f"theta[{i}]" for i in range(k)] + ["noise"]
            warnings.warn(f"The optimum sits on a bound for {[names[i] for i in np.flatnonzero(on_bound)]}: "
                          "widen `bounds` if that is not intended.", UserWarning, stacklevel=2)
    theta = np.exp(best[:k])
    noise_f = float(np.exp(best[k]))
    B, F, _ = _factor(Xd, theta, noise_f, n_threads)
    with _threads.blas_threads(_threads.resolve(n_threads)):
        a, _ = lapack.dpotrs(F, yn[:, None].copy(order="F"), lower=1)
    a = a[:, 0]
    lml = -0.5 * float(np.sum(yn * a)) - float(np.sum(np.log(np.diag(F)))) - 0.5 * Xd.shape[0] * math.log(2 * math.pi)
    return GPModel(Xd, a, F, kernel, theta, noise_f, y_mean, y_std, lml, restarts)
