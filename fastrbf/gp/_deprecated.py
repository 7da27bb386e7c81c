"""The deprecated names of the lectures' Gaussian process: :func:`gp_regression`,
:func:`gp_log_marginal_likelihood`, :class:`GPModel` and :class:`GPPrediction`.

:func:`fastrbf.gaussian_process` with ``kernel="prml"`` is the one exact GP: the same
covariance in the public GP's terms (``amplitude``, ``length_scale``, ``constant``,
``linear``, ``noise``), the same optimiser and likelihood, and ``return_std``,
``return_cov``, ``return_grad``, ``sample_y`` and the table of restarts.  These names
stay for one release as thin wrappers over :mod:`fastrbf.gp._prml` (the same bits as
before) and emit a ``FutureWarning`` naming the replacement.
"""

import warnings
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np

from .. import _progress, _threads
from .. import _validation as _v
from .._progress import ProgressArg
from .._typing import ArrayLike, FloatArray, Seed, Threads
from ._checks import BOOL, F64, asarray_real, check_form, check_scale, check_theta, check_xy
from ._prml import fit, lml, mean, mean_grad, mean_var, normalise, result


def warn(name, instead, stacklevel=3):
    """The ``FutureWarning`` of a deprecated name, naming its replacement."""
    warnings.warn(f"fastrbf.{name} is deprecated and will be removed in the next release; use {instead}.",
                  FutureWarning, stacklevel=stacklevel)


def class_attribute(name):
    """A deprecated class by name (a module's ``__getattr__``), with its warning; None for other names."""
    if name not in CLASSES:
        return None
    warn(name, 'fastrbf.GaussianProcess (from fastrbf.gaussian_process(kernel="prml"))', stacklevel=4)
    return CLASSES[name]


def gp_log_marginal_likelihood(X: ArrayLike, y: ArrayLike, theta: ArrayLike, *, noise: float, kernel: str = "prml",
                               grad: bool = True, n_threads: Threads = None) -> float | tuple[float, FloatArray]:
    """Log marginal likelihood of a GP with the PRML kernel, and its gradient.

    Deprecated (a ``FutureWarning``): use :func:`fastrbf.gaussian_process_lml` with
    ``kernel="prml"``, whose gradient is in the logs of ``amplitude``, ``length_scale``,
    ``constant``, ``linear`` and ``noise``.

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
    >>> import warnings
    >>> from fastrbf import gp_log_marginal_likelihood
    >>> warnings.simplefilter("ignore", FutureWarning)
    >>> X = np.linspace(0, 1, 5)[:, None]
    >>> lml, g = gp_log_marginal_likelihood(X, np.sin(3 * X[:, 0]), [1.0, 4.0, 0.1, 0.1], noise=0.01)
    >>> round(lml, 4), g.shape
    (-2.0677, (5,))
    """
    warn("gp_log_marginal_likelihood", 'fastrbf.gaussian_process_lml(kernel="prml")')
    return lml(X, y, theta, noise=noise, kernel=kernel, grad=grad, n_threads=n_threads)


def gp_regression(X: ArrayLike, y: ArrayLike, *, kernel: str = "prml", theta0: ArrayLike | None = None,
                  noise: float = 1e-2, optimize: bool = True, n_restarts: int = 3, bounds: ArrayLike | None = None,
                  seed: Seed = None, normalize_y: bool = False, n_threads: Threads = None,
                  progress: ProgressArg = False) -> "GPModel":
    """Gaussian-process regression with the PRML covariance; hyperparameters by maximum
    marginal likelihood.

    Deprecated (a ``FutureWarning``): use :func:`fastrbf.gaussian_process` with
    ``kernel="prml"`` (``amplitude = t0``, ``length_scale = 1 / sqrt(t1)``,
    ``constant = t2``, ``linear = t3``), which returns a :class:`fastrbf.GaussianProcess`
    with the same likelihood and a table of restarts.

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
    >>> import warnings
    >>> from fastrbf import gp_regression
    >>> warnings.simplefilter("ignore", FutureWarning)
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
    warn("gp_regression", 'fastrbf.gaussian_process(kernel="prml")')
    return regression(X, y, kernel=kernel, theta0=theta0, noise=noise, optimize=optimize, n_restarts=n_restarts,
                            bounds=bounds, seed=seed, normalize_y=normalize_y, n_threads=n_threads, progress=progress)


@dataclass(frozen=True, eq=False)
class GPModel:
    """A fitted GP with the PRML covariance (from the deprecated :func:`fastrbf.gp_regression`).

    Deprecated: :func:`fastrbf.gaussian_process` with ``kernel="prml"`` returns a
    :class:`fastrbf.GaussianProcess` with the same covariance, likelihood and table of
    restarts.

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
    >>> import warnings
    >>> import numpy as np
    >>> from fastrbf import gp_regression
    >>> X = np.linspace(0, 1, 15)[:, None]
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     gp = gp_regression(X, np.sin(6 * X[:, 0]), kernel="gaussian", theta0=[1.0, 20.0], noise=1e-4,
    ...                        optimize=False)
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
        >>> import warnings
        >>> import numpy as np
        >>> from fastrbf import gp_regression
        >>> X = np.linspace(0, 1, 20)[:, None]
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", FutureWarning)
        ...     m = gp_regression(X, np.sin(3 * X[:, 0]), theta0=[1.0, 10.0, 0.1, 0.1], noise=1e-4, optimize=False)
        >>> p = m.predict([[0.5]], return_var=True)
        >>> bool(abs(p.mean[0] - np.sin(1.5)) < 1e-3), bool(0 < p.var[0] < 1e-3)
        (True, True)
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
        grad = None
        if want_grad:
            mu, grad = mean_grad(self, Xq, nt)
            if not want_var:
                return (result(mu, dtype, Xq, "mean", self.y_std),
                        result(grad, dtype, Xq, "mean's gradient", self.y_std))
        if not want_var:
            return result(mean(self, Xq, nt), dtype, Xq, "mean", self.y_std)
        mu, var, clamped = mean_var(self, Xq, nt)
        p = GPPrediction(result(mu, dtype, Xq, "mean", self.y_std), result(var, dtype, Xq, "variance", self.y_std),
                         clamped)
        return p if grad is None else GPPrediction(p.mean, p.var, clamped,
                                                   result(grad, dtype, Xq, "mean's gradient", self.y_std))


@dataclass(frozen=True)
class GPPrediction:
    """Predictive mean and variance of a :class:`GPModel`; ``n_clamped`` variances were
    negative by rounding and set to 0.

    Deprecated with :class:`GPModel`: :meth:`fastrbf.GaussianProcess.predict` gives the
    standard deviation (``return_std=True``).

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
    >>> from fastrbf.gp._deprecated import GPPrediction
    >>> p = GPPrediction(np.zeros(3), np.ones(3), 0)
    >>> p.mean.shape, p.n_clamped
    ((3,), 0)
    """

    mean: np.ndarray
    var: np.ndarray
    n_clamped: int
    grad: np.ndarray | None = None


def check_bounds(bounds, k):
    """``bounds`` of ``(theta..., noise)`` as a (k, 2) float64 array; ``(1e-5, 1e5)`` each by default."""
    if bounds is None:
        return np.array([[1e-5, 1e5]] * k)
    a = asarray_real(bounds, "bounds")
    if a.dtype.kind == "b":
        raise TypeError(f"`bounds` must be {k} pairs (low, high) of real numbers; got booleans.")
    b = a.astype(np.float64)
    if b.shape != (k, 2) or not np.all(np.isfinite(b)) or np.any(b[:, 0] <= 0) or np.any(b[:, 0] >= b[:, 1]):
        raise ValueError(f"`bounds` must be {k} pairs (low, high) with 0 < low < high (theta..., noise); got {bounds!r}.")
    return b


def regression(X, y, *, kernel="prml", theta0=None, noise=1e-2, optimize=True, n_restarts=3, bounds=None, seed=None,
               normalize_y=False, n_threads=None, progress=False, what="gp_regression", stacklevel=3):
    """The fitted :class:`GPModel` (the body of the deprecated :func:`fastrbf.gp_regression`,
    also the scikit-learn estimator's given a kernel name); ``what`` names the caller in
    progress reports, ``stacklevel`` places the bound warning at the user's call (3: the
    caller of the function that called this one)."""
    Xd, yd, dtype = check_xy(X, y)
    k = check_form(kernel)
    t0 = check_theta(np.ones(k) if theta0 is None else theta0, kernel, "theta0")
    nz = _v.check_real(noise, "noise", low=0, strict=True)
    b = check_bounds(bounds, k + 1)
    do_opt = _v.check_bool(optimize, "optimize", text=BOOL)
    norm_y = _v.check_bool(normalize_y, "normalize_y", text=BOOL)
    n_restarts = _v.check_int(n_restarts, "n_restarts", 0)
    rng = _v.check_seed(seed, name="seed")
    _threads.resolve(n_threads)
    rep = _progress.reporter(progress, what, runs="start")
    start = np.r_[t0, nz]
    if do_opt and (np.any(start < b[:, 0]) or np.any(start > b[:, 1])):
        raise ValueError(f"The start (theta0..., noise) = {start.tolist()} must lie inside `bounds` {b.tolist()}.")
    names = ("X", "theta0", "noise")
    check_scale(Xd, t0, nz, names)
    if not isinstance(X, (list, tuple)) and np.may_share_memory(Xd, X):
        Xd = Xd.copy()  # the model owns its training data
    y_mean, y_std, yn = normalise(yd, norm_y)
    theta, noise_f, F, a, value, restarts = fit(
        Xd, yn, t0, nz, b, optimize=do_opt, n_restarts=n_restarts, rng=rng, n_threads=n_threads, rep=rep, names=names,
        labels=[f"theta[{i}]" for i in range(k)] + ["noise"], hint="rescale `y` (or pass `normalize_y=True`)",
        stacklevel=stacklevel + 1)
    return GPModel(Xd, a, F, kernel, theta, noise_f, y_mean, y_std, value, restarts, dtype)


#: the deprecated classes, by the name a user imports (given with a warning on access)
CLASSES = {"GPModel": GPModel, "GPPrediction": GPPrediction}
