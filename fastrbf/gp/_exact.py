"""The exact Gaussian process: the registry's stationary kernels with an amplitude, one
length scale per feature (or one for all) and a noise term, learned by maximising the
log marginal likelihood - scikit-learn's ``GaussianProcessRegressor`` with
``ConstantKernel(c) * K(length_scale=l) + WhiteKernel(noise)`` - or the lectures' PRML
covariance (``kernel="prml"``, below).

The covariance is ``C(x, y) = c phi(g0 sum_k ((x_k - y_k) / l_k)**2) + b + noise [x == y]``
(the constant ``b`` only when asked for: scikit-learn's ``+ ConstantKernel(b)``) with
``phi`` a radial kernel of :data:`fastrbf.KERNELS` (or a user kernel) and ``g0``
its width in length-scale units: ``1/2`` for ``"gaussian"`` (scikit-learn's ``RBF``),
``1`` otherwise (``Matern(nu=0.5 | 1.5 | 2.5)`` are ``matern12``/``matern32``/``matern52``,
``RationalQuadratic(alpha=a)`` is ``rational_quadratic`` with ``coef0=a``, its shape
fixed).

Decisions:

- **Hyperparameters in log space**, ``(log c, log l_1 .. log l_p[, log b][, log noise])``
  with ``p`` 1 (isotropic) or ``d`` (``ard=True``, or a ``length_scale`` array), as
  scikit-learn's ``theta`` of ``C * K [+ C] + WhiteKernel``; the gradient is of the log marginal likelihood in those coordinates.
- **One Cholesky factor** of ``C`` (the Gram matrix from the fused pairwise engine,
  float64); the gradient needs ``tr((a a^T - C^-1) dC/dtheta)``: ``C^-1`` comes from the
  factor (LAPACK ``potri``), and the traces for every length scale are summed in one
  pass over the pairs of the upper triangle (:func:`fastrbf._jit.gp.exact.stationary_grad_rows`:
  ``O(n^2 d)``, never a matrix per parameter), per-row partials added in row order (the
  same bits for any thread count).
- **The optimiser** is SciPy's L-BFGS-B from the given start and from ``n_restarts``
  log-uniform draws inside ``bounds`` (seeded), as scikit-learn's.
- **Prediction**: the mean (and its gradient) by :class:`~fastrbf.KernelModel` (the fused
  ``gram_matvec``; no n_query x n matrix), the standard deviation from the covariance
  rows of chunks of queries through triangular solves, clamped at 0, noise included
  (as scikit-learn's with a ``WhiteKernel``); ``return_cov`` forms the m x m posterior
  covariance.
- **Every start is a row** of the model's ``restarts`` (start, end, likelihood,
  convergence, iterations), and ``progress`` reports the iterations of each start.
- **``kernel="prml"``** (Bishop, PRML 6.63) is ``c exp(-||x - y||^2 / (2 l^2)) + b +
  s x.y + noise [x == y]`` (``amplitude``, ``length_scale``, ``constant``, ``linear``,
  ``noise``; scikit-learn's ``C * RBF + C + C * DotProduct(sigma_0=0) + WhiteKernel``).
  Its numerical work is :mod:`fastrbf.gp._prml`: the covariance is built straight into
  the buffer that is factored, and the optimiser works in the lectures' coordinates
  ``log(c, 1/l^2, b, s, noise)`` (the same path, restarts and likelihood as before the
  single GP, to rounding); ``theta`` and ``restarts`` are reported in this module's
  coordinates, and the optimum on a bound is a warning.  One length scale, one output,
  no ``jitter``.
- Computed in float64; the prediction is float32 when the training data, targets and
  queries are all float32.
"""

import functools
import math
from dataclasses import dataclass

import numpy as np

from .. import _progress, _threads
from .. import _validation as _v
from .._jit.gp import exact as _jgp
from .._lazy import lapack, scipy
from .._progress import ProgressArg
from .._typing import ArrayLike, KernelArg, Seed, Threads
from ..kernels import check_kernel, gram, kernel_value
from ..models.common import KernelModel, check_query, owned
from . import _gradient, _prml
from ._checks import (
    DEFAULT_BOUNDS,
    F64,
    Overflow,
    check_length_scales,
    check_positive,
    check_scale,
    check_xy,
    kernel_at_zero,
    log_bounds,
    prepare_data,
    unit_width,
)
from ._optimise import maximise

PREDICT_CHUNK = 1024


@dataclass(frozen=True, eq=False)
class GaussianProcess:
    """A fitted Gaussian process (from :func:`gaussian_process`); arrays only, picklable.

    Attributes
    ----------
    kernel : str or UserKernel
    amplitude : float
        ``c``.
    length_scale : ndarray of shape (p,)
        ``p = 1`` (isotropic) or ``d``.
    noise : float
        0 without a noise term.
    coef0 : float
        The rational quadratic kernel's shape (unused by the others).
    X_train : ndarray of shape (n, d), float64
    alpha : ndarray of shape (n,) or (n, k)
        ``C^-1 (y - y_mean) / y_std``.
    factor : ndarray of shape (n, n)
        The lower Cholesky factor of ``C``.
    y_mean, y_std : ndarray of shape (k,)
    log_marginal_likelihood_value : float
    theta : ndarray
        ``log`` of ``(amplitude, length_scale..., [constant,] [linear,] noise)``.
    dtype : numpy.dtype
    single_output : bool
    constant : float
        ``b``, the constant term of the covariance (0: none).
    jitter : float or ndarray of shape (n_samples,)
        What the training covariance had on its diagonal beyond ``noise``.
    linear : float
        ``s``, the linear term ``s x.y`` of ``kernel="prml"`` (0 for the other kernels).
    restarts : tuple of dict
        One row per optimiser start (empty without optimisation): ``start`` and
        ``theta`` (the logs of the hyperparameters, as ``theta``, where the start began
        and ended), ``lml``, ``converged``, ``n_iter``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gaussian_process
    >>> X = np.linspace(0, 1, 12)[:, None]
    >>> gp = gaussian_process(X, np.sin(4 * X[:, 0]), kernel="matern52", noise=1e-4, optimize=False)
    >>> mean, std = gp.predict([[0.5]], return_std=True)
    >>> bool(abs(mean[0] - np.sin(2.0)) < 1e-2), bool(std[0] < 0.05)
    (True, True)
    """

    kernel: KernelArg
    amplitude: float
    length_scale: np.ndarray
    noise: float
    coef0: float
    X_train: np.ndarray
    alpha: np.ndarray
    factor: np.ndarray
    y_mean: np.ndarray
    y_std: np.ndarray
    log_marginal_likelihood_value: float
    theta: np.ndarray
    dtype: np.dtype
    single_output: bool
    constant: float = 0.0
    jitter: float | np.ndarray = 0.0
    linear: float = 0.0
    restarts: tuple = ()

    def _prml(self):
        """The fitted state in the terms of :mod:`fastrbf.gp._prml` (``theta = t``)."""
        t1 = 1.0 / float(self.length_scale[0]) ** 2
        theta = np.array([self.amplitude, t1, self.constant, self.linear] if self.linear or self.constant
                         else [self.amplitude, t1])
        return _prml.State(self.X_train, self.alpha, self.factor, theta, self.noise, float(self.y_mean[0]),
                           float(self.y_std[0]))

    def _model(self):
        entry = check_kernel(self.kernel)
        A = self.alpha.reshape(self.alpha.shape[0], -1)
        W = A * (self.amplitude * self.y_std)
        ls = np.broadcast_to(self.length_scale, (self.X_train.shape[1],)).copy()
        intercept = self.y_mean + self.constant * self.y_std * A.sum(axis=0)  # the constant term's share of the mean
        return KernelModel.without_tail(self.X_train, np.ascontiguousarray(W), kernel=self.kernel,
                                        gamma=unit_width(entry), degree=1, coef0=self.coef0,
                                        intercept=intercept, dtype=F64, single_output=False,
                                        length_scale=ls)

    def predict(self, X: ArrayLike, *, return_std: bool = False, return_cov: bool = False, return_grad: bool = False,
                n_threads: Threads = None) -> np.ndarray | tuple:
        """Posterior mean at the rows of ``X``, with its standard deviation, covariance or
        gradient on request (in that order after the mean).

        Parameters
        ----------
        X : array_like of shape (m, d)
        return_std : bool, default False
            The predictive standard deviation (noise included, as scikit-learn's with a
            ``WhiteKernel``), shape (m,).
        return_cov : bool, default False
            The m x m predictive covariance (not with ``return_std``).
        return_grad : bool, default False
            The gradient of the mean in ``x``, shape (m, d) (or (m, k, d)).  With
            ``return_std`` (or ``return_cov``) also the uncertainty of the gradient:
            the variance of each component of the latent function's gradient, shape
            (m, d) (with ``return_cov``: its d x d covariance per point, (m, d, d)),
            and the gradient of the predictive standard deviation, (m, d) (each with
            an axis of k after m for several outputs); the standard deviation then
            comes from the same triangular solves as its gradient (equal to the one
            of ``return_std`` alone to rounding).  Needs a kernel twice
            differentiable at 0 (not ``laplacian``, ``matern12``, ``truncated``).
        n_threads : int, optional

        Returns
        -------
        mean : ndarray of shape (m,) or (m, k)
        std or cov, grad : ndarrays, as asked
        grad_var or grad_cov, grad_std : ndarrays
            With ``return_grad`` and ``return_std`` or ``return_cov``, after ``grad``.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import gaussian_process
        >>> X = np.linspace(0, 1, 8)[:, None]
        >>> gp = gaussian_process(X, X[:, 0] ** 2, kernel="gaussian", optimize=False)
        >>> mean, cov = gp.predict(X[:2], return_cov=True)
        >>> cov.shape
        (2, 2)
        >>> mean, std, grad, grad_var, grad_std = gp.predict([[0.5]], return_std=True, return_grad=True)
        >>> grad.shape, grad_var.shape, grad_std.shape, bool(grad_var[0, 0] < 1e-3)
        ((1, 1), (1, 1), (1, 1), True)
        """
        want_std = _v.check_bool(return_std, "return_std")
        want_cov = _v.check_bool(return_cov, "return_cov")
        want_grad = _v.check_bool(return_grad, "return_grad")
        if want_std and want_cov:
            raise ValueError("At most one of `return_std` and `return_cov` may be True.")
        Xa, qdtype = check_query(self.dtype, self.X_train.shape[1], X)
        dtype = qdtype
        if isinstance(self.kernel, str) and self.kernel == "prml":
            return self._predict_prml(_v.to_dtype(Xa, F64), dtype, want_std, want_cov, want_grad, n_threads)
        model = self._model()
        if want_grad:
            mean, grad = model.predict(Xa, return_grad=True, n_threads=n_threads)
        else:
            mean = model.predict(Xa, n_threads=n_threads)
        out = [mean.astype(dtype, copy=False)[:, 0] if self.single_output else mean.astype(dtype, copy=False)]
        moments = None
        if want_grad and (want_std or want_cov):  # with the standard deviation from the same solves
            moments = self._gradient_moments(_v.to_dtype(Xa, F64), want_cov, n_threads)
        if want_std or want_cov:
            extra = moments[0] if moments is not None and want_std else \
                self._covariance(_v.to_dtype(Xa, F64), want_cov, n_threads)
            out.append(extra.astype(dtype, copy=False))
        if want_grad:
            g = grad.astype(dtype, copy=False)
            out.append(g[:, 0] if self.single_output else g)
        if moments is not None:
            out += [moments[2].astype(dtype, copy=False), moments[1].astype(dtype, copy=False)]
        return out[0] if len(out) == 1 else tuple(out)

    def _gradient_moments(self, Xq, full, n_threads):
        """(standard deviation, its gradient, variance or covariance of the gradient)
        in the units of ``y`` (:mod:`fastrbf.gp._gradient`): the covariance rows as
        :meth:`_covariance` makes them and their Jacobian, solved together, by chunks of
        queries on the threads."""
        entry = check_kernel(self.kernel)
        q, d = Xq.shape
        n = self.X_train.shape[0]
        ls = np.broadcast_to(self.length_scale, (d,)).astype(np.float64)
        g0 = unit_width(entry)
        pgrad = _gradient.prior_gradient_variance(entry, self.amplitude, ls)
        prior = self._prior_variance(entry)
        var, gstd = np.empty(q), np.empty((q, d))
        gv = np.empty((q, d, d) if full else (q, d))
        Lf = np.asfortranarray(self.factor)

        def task(q0, q1):
            _, J = _gradient.stationary_rows(self.X_train, Xq[q0:q1], kernel=self.kernel, gamma=g0, coef0=self.coef0,
                                             length_scale=ls, amplitude=self.amplitude, constant=self.constant,
                                             n_threads=1)
            var[q0:q1], gstd[q0:q1], gv[q0:q1] = _gradient.moments(
                Lf, None, self._rows(Xq[q0:q1], entry, ls).T, J, np.full(q1 - q0, prior), 0.0, pgrad, 0.0, full)

        step = _gradient.chunk_rows(n, d)
        nt = _threads.for_work(q * n * n * (d + 1), n_threads)
        with _threads.serial_blas():
            _threads.run_tasks([functools.partial(task, q0, min(q, q0 + step)) for q0 in range(0, q, step)], nt)
        return (self._std(var), *_gradient.scaled(gstd, gv, self.y_std, self.single_output))

    def _predict_prml(self, Xq, dtype, want_std, want_cov, want_grad, n_threads):
        m, nt = self._prml(), _threads.resolve(n_threads)
        ys = m.y_std
        if want_grad:
            mean, grad = _prml.mean_grad(m, Xq, nt)
        elif not (want_std or want_cov):
            mean = _prml.mean(m, Xq, nt)
        out = []
        if want_std:
            mu, var, _ = _prml.mean_var(m, Xq, nt)
            extra = _prml.result(np.sqrt(var), dtype, Xq, "standard deviation", ys)
        elif want_cov:
            mu, cov = _prml.mean_cov(m, Xq, nt)
            extra = _prml.result(cov, dtype, Xq, "covariance", ys)
        if want_std or want_cov:
            out = [_prml.result(mean if want_grad else mu, dtype, Xq, "mean", ys), extra]
        else:
            out = [_prml.result(mean, dtype, Xq, "mean", ys)]
        if want_grad:
            out.append(_prml.result(grad, dtype, Xq, "mean's gradient", ys))
        if want_grad and (want_std or want_cov):
            gstd, gv = _prml.grad_moments(m, Xq, want_cov, nt)
            out += [_prml.result(gv, dtype, Xq, "gradient's variance", ys),
                    _prml.result(gstd, dtype, Xq, "standard deviation's gradient", ys)]
        return out[0] if len(out) == 1 else tuple(out)

    def sample_y(self, X: ArrayLike, n_samples: int = 1, *, seed: Seed = None,
                 n_threads: Threads = None) -> np.ndarray:
        """Draws of the posterior at the rows of ``X`` (noise included, as the
        covariance of :meth:`predict`).

        Parameters
        ----------
        X : array_like of shape (m, d)
        n_samples : int, default 1
        seed : None, int or numpy.random.Generator
        n_threads : int, optional

        Returns
        -------
        ndarray of shape (m, n_samples) (or (m, k, n_samples) for several outputs),
        as scikit-learn's ``sample_y``.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import gaussian_process
        >>> X = np.linspace(0, 1, 8)[:, None]
        >>> gp = gaussian_process(X, np.sin(3 * X[:, 0]), optimize=False, noise=1e-4)
        >>> gp.predict(X[:3]).shape, gp.sample_y(X[:3], 5, seed=0).shape
        ((3,), (3, 5))
        """
        n_samples = _v.check_int(n_samples, "n_samples", 1)
        rng = _v.check_seed(seed, name="seed")
        m, k = np.shape(X)[0] if np.ndim(X) == 2 else 1, self.alpha.shape[1] if self.alpha.ndim == 2 else 1
        # the normal draws, their product with the covariance's square root, and the result
        _v.check_memory(8 * m * n_samples * (2 + k), f"sample_y: {n_samples} draws at {m} points",
                        "draw fewer `n_samples` per call.")
        mean, cov = self.predict(X, return_cov=True, n_threads=n_threads)
        dtype = mean.dtype
        mean = np.asarray(mean, dtype=np.float64)
        cov = np.asarray(cov, dtype=np.float64)
        Z = rng.standard_normal((mean.shape[0], n_samples))
        if self.single_output:
            with _threads.serial_blas():
                return (mean[:, None] + _sqrt_psd(cov) @ Z).astype(dtype)
        S = _sqrt_psd(cov[:, :, 0])  # the outputs share the kernel: covariances differ by y_std**2
        out = np.empty((mean.shape[0], mean.shape[1], n_samples))
        with _threads.serial_blas():
            SZ = S @ Z
        for q in range(mean.shape[1]):
            out[:, q] = mean[:, q, None] + (self.y_std[q] / self.y_std[0]) * SZ
        return out.astype(dtype, copy=False)

    def _covariance(self, Xq, full, n_threads):
        entry = check_kernel(self.kernel)
        ls = np.broadcast_to(self.length_scale, (Xq.shape[1],))
        prior = self._prior_variance(entry)
        scale2 = self.y_std**2 if self.single_output else None
        if full:
            Kq = self.amplitude * gram(Xq, self.X_train, kernel=self.kernel, gamma=unit_width(entry), coef0=self.coef0,
                                       length_scale=ls, n_threads=n_threads) + self.constant
            with _threads.serial_blas():
                V = scipy.linalg.solve_triangular(self.factor, Kq.T, lower=True, check_finite=False)
                cov = self.amplitude * gram(Xq, kernel=self.kernel, gamma=unit_width(entry), coef0=self.coef0,
                                            length_scale=ls, n_threads=n_threads) + self.constant - V.T @ V
            cov.flat[:: Xq.shape[0] + 1] += self.noise
            return cov * (scale2[0] if scale2 is not None else 1.0) if self.single_output else \
                cov[:, :, None] * self.y_std**2
        var = np.empty(Xq.shape[0])
        Lf = np.asfortranarray(self.factor)

        def task(q0, q1):
            V = _gradient.solve_lower(Lf, self._rows(Xq[q0:q1], entry, ls).T)
            var[q0:q1] = prior - np.einsum("ij,ij->j", V, V)

        # chunks of queries on the threads, each with one BLAS thread: the same bits for any count
        nt = _threads.for_work(Xq.shape[0] * self.X_train.shape[0] ** 2, n_threads)
        with _threads.serial_blas():
            _threads.run_tasks([functools.partial(task, q0, min(Xq.shape[0], q0 + PREDICT_CHUNK))
                                for q0 in range(0, Xq.shape[0], PREDICT_CHUNK)], nt)
        return self._std(var)

    def _prior_variance(self, entry):
        """The prior variance of ``y`` at a point: ``amplitude phi(0) + constant + noise``."""
        return self.amplitude * kernel_at_zero(self.kernel, self.coef0) + self.constant + self.noise

    def _rows(self, Q, entry, ls):
        """The covariance rows ``k(Q, X_train)`` (q, n) of the standard deviation."""
        return self.amplitude * gram(Q, self.X_train, kernel=self.kernel, gamma=unit_width(entry), coef0=self.coef0,
                                     length_scale=ls, n_threads=1) + self.constant

    def _std(self, var):
        """The standard deviation in the units of ``y`` from the variances (clamped at 0)."""
        np.maximum(var, 0.0, out=var)
        std = np.sqrt(var)
        return std * self.y_std[0] if self.single_output else std[:, None] * self.y_std


def _sqrt_psd(cov):
    """A square root ``S`` with ``S S^T = cov`` of a symmetric positive semi-definite
    matrix (eigenvalues clamped at 0: rounding can make tiny ones negative)."""
    with _threads.serial_blas():
        w, V = np.linalg.eigh(0.5 * (cov + cov.T))
    return V * np.sqrt(np.maximum(w, 0.0))


class _Setup:
    """What every evaluation of the likelihood shares."""

    def __init__(self, X, T, entry, coef0, n_threads, constant=False, noise=True, jitter=0.0):
        self.nb = int(constant)  # theta holds log b after the length scales,
        self.nn = int(noise)  # and log noise last (without a noise term, none)
        self.jitter = jitter  # on the diagonal, not a hyperparameter
        self.X = X
        self.T = T
        self.entry = entry
        self.kernel = kernel_value(entry)
        self.coef0 = coef0
        self.g0 = unit_width(entry)
        self.n_threads = n_threads
        self.spec = entry.spec(np.ones(1), coef0, 1)

    def lml(self, theta, eval_gradient):
        """(lml, gradient or None, factor, alpha) at log-parameters ``theta``."""
        n, d = self.X.shape
        c = math.exp(theta[0])
        nb, nn = self.nb, self.nn
        p = theta.size - 1 - nb - nn
        ls = np.exp(theta[1 : 1 + p])
        b = math.exp(theta[1 + p]) if nb else 0.0
        noise = math.exp(theta[-1]) if nn else 0.0
        lsd = np.broadcast_to(ls, (d,))
        with np.errstate(over="ignore", invalid="ignore"):
            Xs = self.X / lsd
        if not np.all(np.isfinite(Xs)):
            raise FloatingPointError("the rescaled data overflow")
        _v.check_scaled_magnitude(Xs, "X", ls)
        K = gram(Xs, kernel=self.kernel, gamma=self.g0, coef0=self.coef0, n_threads=self.n_threads)
        K *= c
        if nb:
            K += b
        K.flat[:: n + 1] += noise + self.jitter
        with _threads.serial_blas():
            L, info = lapack.dpotrf(K, lower=1, clean=1, overwrite_a=1)
            if info != 0:
                raise np.linalg.LinAlgError("the covariance is not positive definite")
            A, _ = lapack.dpotrs(L, self.T, lower=1)
        k = self.T.shape[1]
        lml = float(-0.5 * np.sum(self.T * A) - k * np.log(np.diag(L)).sum() - 0.5 * n * k * math.log(2 * math.pi))
        if not eval_gradient:
            return lml, None, L, A
        with _threads.serial_blas():
            Ci, info = lapack.dpotri(L.copy(), lower=1)
        Ci = np.tril(Ci)
        Ci += np.tril(Ci, -1).T  # the full symmetric inverse from its lower triangle
        with _threads.serial_blas():
            W = A @ A.T - k * Ci  # summed over the outputs
        part = np.zeros((n, d + 1))
        Xs_c = np.ascontiguousarray(Xs)
        sp = self.spec
        _threads.map_ranges(lambda lo, hi: _jgp.stationary_grad_rows(Xs_c, W, lo, hi, sp.phi, sp.c, sp.degree,
                                                                     self.g0, part), (n + 1) // 2, self.n_threads)
        tot = part.sum(axis=0)
        grad = np.empty(theta.size)
        grad[0] = 0.5 * c * tot[0]
        dls = -c * tot[1:]  # d lml / d log l_k = 0.5 sum W c phi' (-2 g0 (dx_k / l_k)^2)
        grad[1 : 1 + p] = dls.sum() if p == 1 else dls
        if nb:
            grad[1 + p] = 0.5 * b * float(W.sum())  # dC/dlog b = b 1 1^T
        if nn:
            grad[-1] = 0.5 * noise * float(np.trace(W))
        return lml, grad, L, A


def _theta(amplitude, ls, noise, constant=None):
    return np.log(np.r_[amplitude, ls, [] if constant is None else constant, [] if noise is None else noise])


def gaussian_process_lml(X: ArrayLike, y: ArrayLike, *, kernel: KernelArg = "matern52", amplitude: float = 1.0,
                         length_scale: ArrayLike = 1.0, noise: float | None = 1e-5, coef0: float = 1.0,
                         eval_gradient: bool = False, n_threads: Threads = None,
                         constant: float | None = None, jitter: float = 0.0,
                         linear: float | None = None) -> float | tuple[float, np.ndarray]:
    """The log marginal likelihood of a Gaussian process with covariance ``amplitude *
    kernel(length_scale) + noise`` (see the module docstring), and its gradient in
    ``theta = log(amplitude, length_scale..., [constant,] [linear,] [noise])``:
    scikit-learn's ``log_marginal_likelihood(theta, eval_gradient=True)`` of
    ``ConstantKernel * K [+ ConstantKernel] + WhiteKernel``.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,) or (n, k)
    kernel : str or UserKernel, default "matern52"
        A radial, positive definite kernel, or ``"prml"`` (see :func:`gaussian_process`).
    amplitude : float
        > 0.
    noise : float or None
        > 0, or None: no noise term (the covariance then needs ``jitter``).
    length_scale : float or array_like of shape (d,)
        One scale for every feature, or one per feature.
    coef0 : float, default 1.0
        The rational quadratic kernel's shape.
    eval_gradient : bool, default False
    n_threads : int, optional
    constant : float, optional
        ``b`` > 0: a constant term added to the covariance.
    jitter : float or array_like of shape (n_samples,), default 0
        Added to the diagonal of the training covariance (one value, or one per
        training point), not a hyperparameter (scikit-learn's ``alpha``).
    linear : float, optional
        ``s`` > 0 of ``kernel="prml"``'s linear term (default 1 there).

    Returns
    -------
    lml : float
    grad : ndarray
        With ``eval_gradient``: one entry per entry of ``theta``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gaussian_process_lml
    >>> X = np.linspace(0, 1, 10)[:, None]
    >>> lml, grad = gaussian_process_lml(X, np.sin(3 * X[:, 0]), length_scale=0.5, noise=1e-3, eval_gradient=True)
    >>> grad.shape
    (3,)
    >>> lml, grad = gaussian_process_lml(X, np.sin(3 * X[:, 0]), kernel="prml", noise=1e-3, eval_gradient=True)
    >>> grad.shape  # amplitude, length_scale, constant, linear, noise
    (5,)
    """
    if _prml.is_prml(kernel):
        Xd, yd, _ = check_xy(X, y)
        want = _v.check_bool(eval_gradient, "eval_gradient")
        t, nz = _prml.gp_theta(amplitude, length_scale, noise, False, jitter, constant, linear)
        _threads.resolve(n_threads)
        names = ("X", _prml.GP_ARGS, "noise")
        check_scale(Xd, t, nz, names)
        try:
            lml, g = _prml.lml_grad(Xd, yd, t, nz, want, n_threads, names)
        except Overflow as exc:
            raise ValueError(str(exc)) from None
        return (lml, g * _prml.GP_CHAIN) if want else lml
    _prml.no_linear(linear)
    want = _v.check_bool(eval_gradient, "eval_gradient")
    entry, Xa, _, Xd, T, c0, _, _ = prepare_data(X, y, kernel, coef0, False)
    jit = check_positive(amplitude, noise, constant, jitter, Xa.shape[0])
    ls = check_length_scales(length_scale, Xa.shape[1], False)
    setup = _Setup(Xd, T, entry, c0, _threads.for_dense(Xd.shape[0], Xd.shape[1], n_threads), constant is not None,
                   noise is not None, jit)
    try:
        lml, grad, _, _ = setup.lml(_theta(amplitude, ls, noise, constant), want)
    except np.linalg.LinAlgError:
        raise ValueError("The covariance matrix is not positive definite for these `amplitude`, `length_scale` and "
                         "`noise`; use a larger `noise`.") from None
    return (lml, grad) if want else lml


def gaussian_process(X: ArrayLike, y: ArrayLike, *, kernel: KernelArg = "matern52", amplitude: float = 1.0,
                     length_scale: ArrayLike = 1.0, noise: float | None = 1e-5, ard: bool = False, coef0: float = 1.0,
                     optimize: bool = True, n_restarts: int = 0, bounds: ArrayLike = DEFAULT_BOUNDS,
                     normalize_y: bool = False, seed: Seed = None, n_threads: Threads = None,
                     constant: float | None = None, jitter: float = 0.0, linear: float | None = None,
                     progress: ProgressArg = False) -> GaussianProcess:
    """Gaussian-process regression with a registry kernel, an amplitude, per-feature
    length scales and a noise term, learned by maximising the log marginal likelihood
    (scikit-learn's ``GaussianProcessRegressor(ConstantKernel(amplitude) *
    K(length_scale) + WhiteKernel(noise))``; see the module docstring), or with the
    lectures' PRML covariance (``kernel="prml"``).

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,) or (n, k)
    kernel : str or UserKernel, default "matern52"
        A radial, positive definite kernel: ``"gaussian"`` is scikit-learn's ``RBF``,
        ``"matern12" | "matern32" | "matern52"`` its ``Matern(nu=0.5 | 1.5 | 2.5)``,
        ``"rational_quadratic"`` its ``RationalQuadratic(alpha=coef0)``.
        ``"prml"``: ``amplitude exp(-||x - y||^2 / (2 length_scale^2)) + constant +
        linear x.y`` (Bishop, PRML 6.63 with ``theta = (amplitude, 1 / length_scale^2,
        constant, linear)``), one length scale, one output, ``noise`` > 0, no ``jitter``.
    amplitude, length_scale, noise :
        The start (or, with ``optimize=False``, the values); ``length_scale`` a number
        or one per feature; ``noise=None``: no noise term.
    ard : bool, default False
        One length scale per feature (a ``length_scale`` array implies it).
    coef0 : float, default 1.0
        The rational quadratic kernel's shape (fixed).
    optimize : bool, default True
    n_restarts : int, default 0
        Further starts drawn log-uniformly inside ``bounds``.
    bounds : (float, float) or array_like of shape (len(theta), 2), default (1e-5, 1e5)
        The range of every hyperparameter, or one range each, in the order of
        ``theta`` (amplitude, length scales, constant, linear, noise).
    normalize_y : bool, default False
        Fit ``(y - mean) / std`` and scale back (scikit-learn's ``normalize_y``).
    seed : None, int or numpy.random.Generator
    n_threads : int, optional
    constant : float, optional
        ``b`` > 0: the start (or value) of a constant term added to the covariance
        (scikit-learn's ``+ ConstantKernel(b)``), learned with the others.
    jitter : float or array_like of shape (n_samples,), default 0
        Added to the diagonal of the training covariance (one value, or one per
        training point: per-point noise variances), not learned and not part of the
        predictive variance (scikit-learn's ``alpha``).
    linear : float, optional
        ``s`` > 0: the start (or value) of ``kernel="prml"``'s linear term ``s x.y``;
        default 1 (``constant`` too defaults to 1 with ``"prml"``).
    progress : bool, logging.Logger or callable, default False
        Report the L-BFGS-B iterations of each optimiser start
        (``gaussian_process start 2/4: iter 15, lml 12.3, 3.1 s, ETA 9.2 s``): True on
        stderr, a logger's ``info``, or a callable given a dict per iteration (stage
        ``"l-bfgs-b"``, metric ``lml``; see :func:`fastrbf.kmeans` for the keys).

    Returns
    -------
    GaussianProcess

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gaussian_process
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (40, 2))
    >>> y = np.sin(6 * X[:, 0]) + 0.01 * rng.standard_normal(40)
    >>> gp = gaussian_process(X, y, kernel="matern52", ard=True, noise=1e-2)
    >>> bool(gp.length_scale[1] > gp.length_scale[0])  # the second feature does not matter
    True
    >>> trend = 3 + 2 * X[:, 0] + X[:, 1] + np.sin(6 * X[:, 0]) + 0.01 * rng.standard_normal(40)
    >>> prml = gaussian_process(X, trend, kernel="prml", noise=1e-2, n_restarts=2, seed=0)
    >>> len(prml.restarts), prml.theta.shape  # amplitude, length_scale, constant, linear, noise
    (3, (5,))
    """
    if _prml.is_prml(kernel):
        return GaussianProcess(**_prml.fit_gp(X, y, amplitude, length_scale, noise, ard, optimize, n_restarts, bounds,
                                              normalize_y, seed, n_threads, constant, jitter, linear, progress))
    _prml.no_linear(linear)
    entry, Xa, ya, Xd, T, c0, y_mean, y_std = prepare_data(X, y, kernel, coef0, normalize_y)
    n, d = Xa.shape
    jit = check_positive(amplitude, noise, constant, jitter, n)
    ard = _v.check_bool(ard, "ard")
    ls = check_length_scales(length_scale, d, ard)
    optimize = _v.check_bool(optimize, "optimize")
    n_restarts = _v.check_int(n_restarts, "n_restarts", 0)
    n_theta = 1 + ls.size + (constant is not None) + (noise is not None)
    lo, hi = log_bounds(bounds, n_theta)
    rng = _v.check_seed(seed, name="seed")
    nt = _threads.for_dense(n, d, n_threads)
    setup = _Setup(Xd, T, entry, c0, nt, constant is not None, noise is not None, jit)
    theta0 = _theta(amplitude, ls, noise, constant)
    rows: list = []
    if optimize:
        starts = [np.clip(theta0, lo, hi)] + [rng.uniform(lo, hi, theta0.size) for _ in range(n_restarts)]
        best = maximise(lambda t: setup.lml(t, True)[:2], starts,
                        list(zip(np.broadcast_to(lo, theta0.shape), np.broadcast_to(hi, theta0.shape), strict=True)),
                        (np.linalg.LinAlgError, FloatingPointError), rows=rows,
                        rep=_progress.reporter(progress, "gaussian_process", runs="start"))
        if best is None:
            raise ValueError("gaussian_process: the covariance is not positive definite from any start; use a "
                             "larger `noise` or narrower `bounds`.")
        theta = best
    else:
        theta = theta0
    try:
        lml, _, L, A = setup.lml(theta, False)
    except np.linalg.LinAlgError:
        raise ValueError("The covariance matrix is not positive definite for these `amplitude`, `length_scale` and "
                         "`noise`; use a larger `noise`.") from None
    dtype = np.dtype(np.float32) if Xa.dtype == np.float32 and np.asarray(ya).dtype == np.float32 else F64
    single = np.ndim(ya) == 1
    return GaussianProcess(kernel_value(entry),
                           float(math.exp(theta[0])), np.exp(theta[1 : 1 + ls.size]),
                           0.0 if noise is None else float(math.exp(theta[-1])), c0,
                           owned(Xd, X), A[:, 0].copy() if single else A, np.tril(L), y_mean, y_std, lml, theta, dtype,
                           single, 0.0 if constant is None else float(math.exp(theta[1 + ls.size])), jit,
                           restarts=tuple(rows))
