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
- Prediction: the mean alone is ``k(x)^T a`` through the fused ``gram_matvec`` (no
  n_query x n matrix).  With the variance, the covariance rows ``k(x, X)`` of chunks of
  ``PREDICT_CHUNK`` query points give both the mean and ``k(x, x) + noise - ||L^-1
  k(x)||^2`` (triangular solves; clamped at 0, the number of clamped values recorded on
  the result): one kernel pass, and the kernel is the one the fit compiled.
  The gradient of the mean (``return_grad=True``) comes with the mean from one fused
  pass of the Gaussian term's values and derivatives (plus the linear term's constant
  gradient ``t3 X^T a``); with the variance too it is one more pass.
- Checks come first: every argument is validated (errors name it); data (training or
  query ``X``) whose float64 squared distances would overflow is refused in the name
  of ``X``, as by :func:`fastrbf.gram`, and parameters whose covariance would
  overflow float64 are refused before any n x n work; a likelihood or gradient that
  overflows is an error naming ``y`` and ``noise``, never an inf or NaN (inside the
  optimiser it ends that start).
- The model owns its arrays (``X_train`` is a copy where the caller's array could be
  changed) and keeps only the factor: the unused triangle of its buffer is zeroed, so
  identical fits pickle to identical bytes.
- Computed in float64; predictions are float32 when the training data, the targets and
  the query are all float32.
"""

import math
import warnings
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np

from .. import _progress, _threads
from .. import _validation as _v
from .._jit.gp import exact as _jgp
from .._lazy import lapack, scipy
from .._progress import ProgressArg
from .._typing import ArrayLike, FloatArray, Seed, Threads
from ..kernels import gram_matvec
from ..linalg import NotPositiveDefiniteError, factor_in_place
from ..models.common import values_and_grad
from ._checks import (
    BOOL,
    F64,
    Overflow,
    asarray_real,
    check_kernel,
    check_scale,
    check_theta,
    check_xy,
    public_error,
    theta_terms,
)

PREDICT_CHUNK = 1024


def _factor(X, theta, noise, n_threads):
    """C = K + noise I built as its upper triangle and factored in place."""
    n = X.shape[0]
    t0, g, t2, t3, dotk = theta_terms(theta)
    _v.check_memory(8 * n * n, f"gp: the {n} x {n} covariance matrix", "use fewer points.")
    B = np.empty((n, n))
    Xt = np.ascontiguousarray(X.T)
    _threads.map_ranges(lambda lo, hi: _jgp.cov_upper(X, Xt, lo, hi, t0, g, t2, t3, dotk, B), (n + 1) // 2, n_threads)
    F, _ = factor_in_place(B, noise, None, n_threads, name="C = K + noise I", whole=False)
    return B, F, Xt


def _factor_gp(X, theta, noise, n_threads, names):
    """:func:`_factor` with the breakdown explained in terms of the GP's own arguments."""
    try:
        return _factor(X, theta, noise, n_threads)
    except NotPositiveDefiniteError as exc:
        xn, tn, nn = names
        raise NotPositiveDefiniteError(
            f"The covariance C = K + noise I is not positive definite to working precision (the Cholesky "
            f"factorisation broke down at column {exc.column}; noise = {noise:.3g}). Remedies: a larger `{nn}`, "
            f"removing duplicate rows of `{xn}`, or other `{tn}`.",
            column=exc.column, alpha=noise,
        ) from None


_LML_NAMES = ("X", "theta", "noise")


@np.errstate(over="ignore", invalid="ignore")  # overflow is detected and reported, not warned about
def _lml_grad(X, y, theta, noise, grad, n_threads, names=_LML_NAMES, y_hint="rescale `y`"):
    n = X.shape[0]
    n_threads = _threads.for_dense(n, X.shape[1], n_threads)
    B, F, Xt = _factor_gp(X, theta, noise, n_threads, names)
    with _threads.serial_blas():
        a, _ = lapack.dpotrs(F, y[:, None].copy(order="F"), lower=1)
    a = a[:, 0]
    logdet_half = float(np.sum(np.log(np.diag(F))))
    lml = -0.5 * float(np.sum(y * a)) - logdet_half - 0.5 * n * math.log(2 * math.pi)
    if not math.isfinite(lml):
        raise Overflow(f"The log marginal likelihood overflows float64 for this `y` and `{names[2]}` "
                        f"(y^T C^-1 y is not finite); {y_hint} or use a larger `{names[2]}`.")
    if not grad:
        return lml, None
    with _threads.serial_blas():
        Ci, info = lapack.dpotri(F, lower=1, overwrite_c=1)  # C^-1 (upper triangle of B)
    if info != 0:  # pragma: no cover - the factor is nonsingular here
        raise RuntimeError(f"LAPACK potri failed with info={info}.")
    t0, g, t2, t3, dotk = theta_terms(theta)
    part = np.empty((n, 4))
    _threads.map_ranges(lambda lo, hi: _jgp.grad_upper(X, Xt, B, a, lo, hi, t0, g, dotk, part), (n + 1) // 2, n_threads)
    tr = 0.5 * part.sum(axis=0) * np.array([1.0, 1.0, t2, t3])
    gnoise = 0.5 * noise * (float(np.sum(a * a)) - float(np.trace(B)))
    k = len(theta)
    out = np.r_[tr[:k], gnoise]
    if not np.all(np.isfinite(out)):
        raise Overflow(f"The gradient of the log marginal likelihood overflows float64 for this `y` and "
                        f"`{names[2]}` (||C^-1 y||^2 is not finite); {y_hint} or use a larger `{names[2]}`.")
    return lml, out


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

    Raises
    ------
    ValueError, TypeError
        An invalid argument (the message names it), ``X`` whose float64 squared
        distances would overflow included; a covariance, likelihood or gradient that
        overflows float64.
    NotPositiveDefiniteError
        ``C`` is singular to working precision (duplicate points with a tiny ``noise``).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gp_log_marginal_likelihood
    >>> X = np.linspace(0, 1, 5)[:, None]
    >>> lml, g = gp_log_marginal_likelihood(X, np.sin(3 * X[:, 0]), [1.0, 4.0, 0.1, 0.1], noise=0.01)
    >>> round(lml, 4), g.shape
    (-2.0677, (5,))
    """
    Xd, yd, _ = check_xy(X, y)
    t = check_theta(theta, kernel)
    nz = _v.check_real(noise, "noise", low=0, strict=True)
    want_grad = _v.check_bool(grad, "grad", text=BOOL)
    _threads.resolve(n_threads)
    check_scale(Xd, t, nz, _LML_NAMES)
    try:
        lml, g = _lml_grad(Xd, yd, t, nz, want_grad, n_threads)
    except Overflow as exc:
        raise public_error(exc) from None
    return (lml, g) if want_grad else lml


@dataclass(frozen=True, eq=False)
class GPModel:
    """A fitted GP regression model (from :func:`gp_regression`).

    Attributes
    ----------
    X_train : ndarray of shape (n, d)
        float64; the model's own copy.
    alpha : ndarray of shape (n,)
        ``C^-1 (y - y_mean) / y_std``.
    factor : ndarray of shape (n, n)
        The Cholesky factor of ``C`` (lower triangle, Fortran-ordered; zeros above the
        diagonal), for variances.
    kernel : str
    theta : ndarray
    noise : float
    y_mean, y_std : float
        The normalisation of ``y`` (0 and 1 without ``normalize_y``).
    log_marginal_likelihood : float
    restarts : list of dict
        One row per optimiser start: ``start``, ``theta``, ``noise``, ``lml``,
        ``converged``, ``n_iter``.
    dtype : numpy.dtype
        float32 when ``X`` and ``y`` were float32: float32 queries then get float32
        predictions (computed in float64).

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
    dtype: np.dtype = F64

    @overload
    def predict(self, X: ArrayLike, *, return_var: Literal[False] = False, return_grad: Literal[False] = False,
                n_threads: Threads = None) -> FloatArray: ...

    @overload
    def predict(self, X: ArrayLike, *, return_var: Literal[False] = False, return_grad: Literal[True],
                n_threads: Threads = None) -> tuple[FloatArray, FloatArray]: ...

    @overload
    def predict(self, X: ArrayLike, *, return_var: Literal[True], return_grad: bool = False,
                n_threads: Threads = None) -> "GPPrediction": ...

    def predict(self, X: ArrayLike, *, return_var: bool = False, return_grad: bool = False,
                n_threads: Threads = None) -> "FloatArray | tuple[FloatArray, FloatArray] | GPPrediction":
        """Predictive mean, and with ``return_var=True`` the predictive variance of
        ``y`` (noise included) as a :class:`GPPrediction`.

        Parameters
        ----------
        X : array_like of shape (m, d)
        return_var : bool, default False
        return_grad : bool, default False
            Also the gradient of the predictive mean in ``x``, shape (m, d), from one
            fused pass that gives the mean too (it agrees with the mean-only call to
            rounding).  Alone: returned as ``(mean, grad)``; with ``return_var=True``:
            the ``grad`` attribute of the :class:`GPPrediction` (one more pass over the
            training points).
        n_threads : int, optional

        Returns
        -------
        ndarray of shape (m,), (mean, grad) or GPPrediction
            The mean, or the mean and the variance; float32 when ``X`` and the training
            data and targets were float32, else float64.  With ``return_var=True`` the
            mean is taken from the covariance rows computed for the variance; it agrees
            with the mean-only call to rounding (about 1e-12 of the largest mean, more
            when the training covariance is ill-conditioned).

        Raises
        ------
        ValueError, TypeError
            An invalid argument, ``X`` whose float64 squared distances would overflow
            included; predictions that overflow the result dtype.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import gp_regression
        >>> X = np.linspace(0, 1, 20)[:, None]
        >>> m = gp_regression(X, np.sin(3 * X[:, 0]), theta0=[1.0, 10.0, 0.1, 0.1], noise=1e-4, optimize=False)
        >>> p = m.predict([[0.5]], return_var=True)
        >>> bool(abs(p.mean[0] - np.sin(1.5)) < 1e-3), bool(0 < p.var[0] < 1e-3)
        (True, True)
        >>> mean, grad = m.predict([[0.5]], return_grad=True)
        >>> grad.shape, bool(abs(grad[0, 0] - 3 * np.cos(1.5)) < 1e-2)
        ((1, 1), True)
        """
        Xa = _v.check_data(asarray_real(X, "X"), "X")
        if Xa.shape[1] != self.X_train.shape[1]:
            raise ValueError(f"`X` must have {self.X_train.shape[1]} features (as the training data); got shape {Xa.shape}.")
        _v.check_magnitude(Xa, "X", F64)  # refused here in its own name, not in gram_matvec's
        want_var = _v.check_bool(return_var, "return_var", text=BOOL)
        want_grad = _v.check_bool(return_grad, "return_grad", text=BOOL)
        nt = _threads.resolve(n_threads)
        dtype = _v.result_dtype(self.dtype, Xa)
        Xq = _v.to_dtype(Xa, np.float64)
        t0, g, t2, t3, dotk = theta_terms(self.theta)
        if want_grad:
            mean, grad = self._mean_and_grad(Xq, nt)
            if not want_var:
                return self._result(mean, dtype, Xq, "mean"), self._result(grad, dtype, Xq, "mean's gradient")
            p = self.predict(X, return_var=True, n_threads=n_threads)
            return GPPrediction(p.mean, p.var, p.n_clamped, self._result(grad, dtype, Xq, "mean's gradient"))
        if not want_var:  # the fused product: no n_query x n memory, no pass beyond the mean's
            with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected below
                mean = t0 * gram_matvec(Xq, self.X_train, self.alpha, gamma=g, n_threads=nt) + t2 * self.alpha.sum()
                if dotk:
                    with _threads.serial_blas():
                        mean += t3 * (Xq @ (self.X_train.T @ self.alpha))
                mean = mean * self.y_std + self.y_mean
            return self._result(mean, dtype, Xq, "mean")
        # with the variance, the covariance rows k(x, X) of each chunk serve both: the mean
        # k(x)^T a from them (one kernel pass instead of two, and no other kernel to compile)
        mean = np.empty(Xq.shape[0])
        n = self.X_train.shape[0]
        m = Xq.shape[0]
        var = np.empty(m)
        Xt = np.ascontiguousarray(self.X_train.T)
        prior = np.full(m, t0 + t2 + self.noise)
        if dotk:
            with np.errstate(over="ignore", invalid="ignore"):
                prior += t3 * np.einsum("ij,ij->i", Xq, Xq)
        Kq = np.empty((min(PREDICT_CHUNK, m), n))
        for q0 in range(0, m, PREDICT_CHUNK):
            q1 = min(m, q0 + PREDICT_CHUNK)
            Kb = Kq[: q1 - q0]

            def rows(lo, hi, q0=q0, Kb=Kb):
                _jgp.cov_rows(Xq, Xt, q0 + lo, q0 + hi, t0, g, t2, t3, dotk, Kb[lo:hi])

            _threads.map_ranges(rows, q1 - q0, nt)
            with _threads.serial_blas(), np.errstate(over="ignore", invalid="ignore"):  # overflow: detected below
                np.matmul(Kb, self.alpha, out=mean[q0:q1])
                V = scipy.linalg.solve_triangular(self.factor, Kb.T, lower=True, check_finite=False)
                var[q0:q1] = prior[q0:q1] - np.einsum("ij,ij->j", V, V)
        with np.errstate(over="ignore", invalid="ignore"):
            mean = mean * self.y_std + self.y_mean
        clamped = int(np.count_nonzero(var < 0))
        np.maximum(var, 0.0, out=var)
        with np.errstate(over="ignore"):
            var *= self.y_std  # twice: y_std**2 itself may overflow
            var *= self.y_std
        return GPPrediction(self._result(mean, dtype, Xq, "mean"), self._result(var, dtype, Xq, "variance"), clamped)

    def _mean_and_grad(self, Xq, nt):
        """(the predictive mean (m,), its gradient (m, d)) in float64, one fused pass."""
        t0, g, t2, t3, dotk = theta_terms(self.theta)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected by the caller
            kv, kg = values_and_grad(Xq, self.X_train, self.alpha[:, None], kernel="gaussian", gamma=g, n_threads=nt)
            mean = t0 * kv[:, 0] + t2 * self.alpha.sum()
            grad = t0 * kg[:, 0]
            if dotk:
                with _threads.serial_blas():
                    w = self.X_train.T @ self.alpha
                    mean += t3 * (Xq @ w)
                    grad += t3 * w
            return mean * self.y_std + self.y_mean, grad * self.y_std

    def _result(self, values, dtype, Xq, what):
        """``values`` in ``dtype``; an error naming ``X`` if they overflow it."""
        with np.errstate(over="ignore"):
            out = values.astype(dtype, copy=False)
        if not np.all(np.isfinite(out)):
            with np.errstate(over="ignore"):
                xx = float(np.einsum("ij,ij->i", Xq, Xq).max())
            raise ValueError(f"The predictive {what} overflows {dtype} for this `X` (max ||x||^2 = {xx:.3g}; the "
                             f"training targets' scale y_std = {self.y_std:.3g}); rescale `X` or the training targets"
                             + (", or pass `X` as float64." if dtype == np.float32 else "."))
        return out


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
    grad : ndarray of shape (m, d) or None
        The gradient of the mean in ``x`` with ``return_grad=True``, else None.

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
    grad: np.ndarray | None = None


def _check_bounds(bounds, k):
    if bounds is None:
        return np.array([[1e-5, 1e5]] * k)
    a = asarray_real(bounds, "bounds")
    if a.dtype.kind == "b":
        raise TypeError(f"`bounds` must be {k} pairs (low, high) of real numbers; got booleans.")
    b = a.astype(np.float64)
    if b.shape != (k, 2) or not np.all(np.isfinite(b)) or np.any(b[:, 0] <= 0) or np.any(b[:, 0] >= b[:, 1]):
        raise ValueError(f"`bounds` must be {k} pairs (low, high) with 0 < low < high (theta..., noise); got {bounds!r}.")
    return b


def gp_regression(X: ArrayLike, y: ArrayLike, *, kernel: str = "prml", theta0: ArrayLike | None = None,
                  noise: float = 1e-2, optimize: bool = True, n_restarts: int = 3, bounds: ArrayLike | None = None,
                  seed: Seed = None, normalize_y: bool = False, n_threads: Threads = None,
                  progress: ProgressArg = False) -> "GPModel":
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
        Fit ``(y - mean) / std`` (computed without overflow for any finite ``y``).
    n_threads : int, optional
    progress : bool, logging.Logger or callable, default False
        Report the L-BFGS-B iterations of each optimiser start
        (``gp_regression start 2/4: iter 15, lml 12.3, 3.1 s, ETA 9.2 s``; the ETA is
        the mean time of the finished starts times the starts left): True on stderr,
        a logger's ``info``, or a callable given a dict per iteration (stage
        ``"l-bfgs-b"``, metric ``lml``; see :func:`fastrbf.kmeans` for the keys).  The
        final report of each start has the ``n_iter`` of its row in ``restarts``.
        Nothing is reported with ``optimize=False``.

    Returns
    -------
    GPModel

    Raises
    ------
    ValueError, TypeError
        An invalid argument (the message names it; ``optimize`` and ``normalize_y`` must
        be bools), ``X`` whose float64 squared distances would overflow included; a
        start outside ``bounds``; a covariance or likelihood that overflows float64 at
        the start.
    NotPositiveDefiniteError
        ``C`` is singular to working precision at the start.
    numpy.linalg.LinAlgError
        Every optimiser start failed.

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
    >>> reports = []
    >>> m = gp_regression(X, y, kernel="gaussian", theta0=[1.0, 10.0], noise=0.01, seed=0, progress=reports.append)
    >>> ends = [r for r in reports if r["final"]]
    >>> [r["iter"] for r in ends] == [row["n_iter"] for row in m.restarts], ends[-1]["message"].split(":")[0]
    (True, 'gp_regression start 4/4')
    """
    Xd, yd, dtype = check_xy(X, y)
    k = check_kernel(kernel)
    t0 = check_theta(np.ones(k) if theta0 is None else theta0, kernel, "theta0")
    nz = _v.check_real(noise, "noise", low=0, strict=True)
    b = _check_bounds(bounds, k + 1)
    do_opt = _v.check_bool(optimize, "optimize", text=BOOL)
    norm_y = _v.check_bool(normalize_y, "normalize_y", text=BOOL)
    n_restarts = _v.check_int(n_restarts, "n_restarts", 0)
    rng = _v.check_seed(seed, name="seed")
    _threads.resolve(n_threads)
    rep = _progress.reporter(progress, "gp_regression", runs="start")
    start = np.r_[t0, nz]
    if do_opt and (np.any(start < b[:, 0]) or np.any(start > b[:, 1])):
        raise ValueError(f"The start (theta0..., noise) = {start.tolist()} must lie inside `bounds` {b.tolist()}.")
    names = ("X", "theta0", "noise")
    check_scale(Xd, t0, nz, names)
    if not isinstance(X, (list, tuple)) and np.may_share_memory(Xd, X):
        Xd = Xd.copy()  # the model owns its training data
    y_mean, y_std, yn = 0.0, 1.0, yd
    scale = float(np.abs(yd).max())
    if norm_y and scale > 0:  # in units of max |y|: neither the mean nor the variance can overflow
        ys = yd / scale
        m_s, s_s = float(ys.mean()), float(ys.std())
        y_mean = m_s * scale
        if s_s > 0:
            y_std, yn = s_s * scale, (ys - m_s) / s_s
        else:  # constant y: y_std = 1 (as scikit-learn)
            yn = np.zeros_like(yd)
    hint = "rescale `y` (or pass `normalize_y=True`)"
    restarts = []
    best = np.log(start)
    # the start must give a positive definite C: a clear NotPositiveDefiniteError here
    # (column, remedies) rather than an optimiser that silently skips it
    try:
        _lml_grad(Xd, yn, t0, nz, False, n_threads, names, hint)
    except Overflow as exc:
        raise public_error(exc) from None
    if do_opt:
        from scipy.optimize import minimize  # here, not at import: it costs 0.2 s to import

        lb = np.log(b)

        def objective(p):
            theta_p, noise_p = np.exp(p[:k]), float(np.exp(p[k]))
            try:
                check_scale(Xd, theta_p, noise_p, names)
            except ValueError as exc:
                raise Overflow(str(exc)) from None
            val, g = _lml_grad(Xd, yn, theta_p, noise_p, True, n_threads, names, hint)
            return -val, -g

        starts = [np.log(start)] + [rng.uniform(lb[:, 0], lb[:, 1]) for _ in range(n_restarts)]
        best_val = -np.inf
        rep.runs(len(starts))
        done = [0]

        def report(intermediate_result):  # scipy calls it once per iteration (res.nit calls)
            done[0] += 1
            rep.step(done[0], lml=-float(intermediate_result.fun))

        for i, s in enumerate(starts):
            rep.run(i + 1)
            rep.start("l-bfgs-b")
            done[0] = 0
            try:
                with _threads.serial_blas():  # L-BFGS-B's own tiny LAPACK solves would wake BLAS threads
                    res = minimize(objective, s, jac=True, method="L-BFGS-B", bounds=lb,
                                   callback=report if rep else None)
                val, p, conv, nit = -float(res.fun), res.x, bool(res.success), int(res.nit)
            except (np.linalg.LinAlgError, Overflow):  # C numerically singular, or overflow, on the way
                val, p, conv, nit = -np.inf, s, False, 0
            rep.finish(nit, lml=val, converged=conv)
            restarts.append(dict(start=np.exp(s), theta=np.exp(p[:k]), noise=float(np.exp(p[k])), lml=val,
                                 converged=conv, n_iter=nit))
            if val > best_val:
                best_val, best = val, p
        if not np.isfinite(best_val):
            raise np.linalg.LinAlgError("Every optimiser start failed: the covariance was not positive definite or "
                                        "the likelihood overflowed on the way; narrow `bounds` or raise `noise`.")
        on_bound = np.isclose(best, lb[:, 0], rtol=0, atol=1e-8) | np.isclose(best, lb[:, 1], rtol=0, atol=1e-8)
        if on_bound.any():
            labels = [f"theta[{i}]" for i in range(k)] + ["noise"]
            warnings.warn(f"The optimum sits on a bound for {[labels[i] for i in np.flatnonzero(on_bound)]}: "
                          "widen `bounds` if that is not intended.", UserWarning, stacklevel=2)
    theta = np.exp(best[:k])
    noise_f = float(np.exp(best[k]))
    B, F, _ = _factor_gp(Xd, theta, noise_f, n_threads, names)
    _jgp.clear_lower(B)  # the strict upper triangle of the factor: zeros, not stale memory
    with _threads.serial_blas():
        a, _ = lapack.dpotrs(F, yn[:, None].copy(order="F"), lower=1)
    a = a[:, 0]
    lml = -0.5 * float(np.sum(yn * a)) - float(np.sum(np.log(np.diag(F)))) - 0.5 * Xd.shape[0] * math.log(2 * math.pi)
    return GPModel(Xd, a, F, kernel, theta, noise_f, y_mean, y_std, lml, restarts, dtype)
