"""Sparse Gaussian-process regression: the Gaussian process of :mod:`fastrbf.gp._exact`
(``c phi(g0 sum_k ((x_k - y_k) / l_k)**2) + noise [x == y]``, a registry or user
kernel, hyperparameters in log space) approximated through ``m`` landmarks (inducing
points) ``Z``, for millions of points: ``O(n m^2)`` time, ``O(n d + m^2)`` memory.

With ``K = K_mm + delta I`` (``delta`` Falkon's jitter, see
:func:`fastrbf.models.falkon.kmm_factor`), ``Q_nn = K_nm K^-1 K_mn`` and noise ``s2``:

- **Training objective: the variational bound** (VFE, Titsias 2009)
  ``log N(y | 0, Q_nn + s2 I) - tr(K_nn - Q_nn) / (2 s2)``, a lower bound of the exact
  log marginal likelihood, equal to it when the landmarks are the training points.
- **Prediction: DTC** (the mean of subset of regressors),
  ``mean = K_*m Sigma K_mn y / s2`` and ``var = k_** - q_** + K_*m Sigma K_m* + s2``,
  ``Sigma = (K + K_mn K_nm / s2)^-1``: the predictive that belongs to the VFE bound
  (its optimal variational posterior of the inducing values).  FITC was not chosen: its
  per-point variance ``diag(K_nn - Q_nn)`` changes the mean, pairs with another
  objective, and is known to underestimate the noise.  The variance includes the noise
  (as :meth:`fastrbf.GaussianProcess.predict`).

Decisions:

- **The bound and its gradient** are computed from two passes over fixed row chunks
  (:mod:`fastrbf.gp._sparse_bound`: ``A = L^-1 K_mn`` chunk by chunk, ``A A^T`` and ``A y``
  summed in a fixed order, so the same bits for any thread count); ``L`` is the
  Cholesky factor of ``K`` and ``L_B`` that of ``B = I + A A^T / s2`` (eigenvalues
  >= 1); no inverse of ``K`` is formed for the bound or the prediction.
- **Predictive variance** ``max(k_** - |v|^2, 0) + |L_B^-1 v|^2 + s2`` with
  ``v = L^-1 k_m*`` (two triangular solves per chunk of queries): the Nystroem
  residual ``k_** - |v|^2`` (>= 0 in exact arithmetic, rounding can make it negative
  by about ``m eps k_**``) is clamped at 0, so the variance is never below the noise.
- **Learning at scale.**  One evaluation costs two passes (``4 n m^2`` flops: 1.6e13 at
  n = 1e6, m = 2000, minutes on two cores), and L-BFGS-B needs tens.  So the
  hyperparameters are learned on a seeded subsample of ``learn_samples`` rows
  (default ``min(n, max(5000, 2 m))``) with the same landmarks, by L-BFGS-B
  (``max_iter`` iterations, restarts optional, as :func:`fastrbf.gaussian_process`;
  it stops when an iteration gains less than :data:`FTOL` of the bound's value: a few
  hundredths of a nat at the default subsample), then one pass over all n rows with
  the learned values gives the model and its bound.  The landmarks stay fixed
  (chosen by ``"uniform"``, ``"kmeans"`` or given): they are not optimised.
- Computed in float64; predictions are float32 when the training data, targets and
  queries are all float32.
"""

import functools
from dataclasses import dataclass

import numpy as np

from .. import _threads
from .. import _validation as _v
from .._lazy import scipy
from .._typing import ArrayLike, KernelArg, Seed, Threads
from ..kernels import check_kernel, kernel_value
from ..linalg import NotPositiveDefiniteError
from ..models.common import check_query, model_data, values_and_grad
from ..models.falkon import LANDMARK_METHODS, LANDMARKS_TEXT, landmarks
from ..models.ridge import check_landmark_array, default_landmarks
from . import _gradient
from ._checks import DEFAULT_BOUNDS, check_length_scales, log_bounds, prepare_data, unit_width
from ._optimise import maximise
from ._sparse_bound import Bound, RowPasses, memory_bytes, phi_rows, phi_zero, solve_lower

_F64 = np.dtype(np.float64)
#: query rows per task of the prediction
PREDICT_CHUNK = 1024
#: the least number of rows the hyperparameters are learned on by default
LEARN_SAMPLES = 5_000
#: L-BFGS-B stops when the bound gains less than this fraction of its value in an iteration
FTOL = 1e-5


@dataclass(frozen=True, eq=False)
class SparseGaussianProcess:
    """A fitted sparse Gaussian process (from :func:`sparse_gaussian_process`); arrays
    only, picklable.

    Attributes
    ----------
    kernel : str or UserKernel
    amplitude : float
    length_scale : ndarray of shape (p,)
        ``p = 1`` (isotropic) or ``d``.
    noise : float
    coef0 : float
    landmarks : ndarray of shape (m, d), float64
        The inducing points (fixed, not optimised).
    weights : ndarray of shape (m, k)
        ``Sigma K_mn (y - y_mean) / (y_std s2)``: the mean is ``K(x, landmarks) @ weights``
        (scaled back).
    factor : ndarray of shape (m, m)
        The lower Cholesky factor ``L`` of ``K_mm + jitter I``.
    factor_b : ndarray of shape (m, m)
        The lower Cholesky factor of ``I + L^-1 K_mn K_nm L^-T / noise``.
    jitter : float
    y_mean, y_std : ndarray of shape (k,)
    log_marginal_likelihood_value : float
        The variational bound (VFE) on all the training rows.
    theta : ndarray
        ``log`` of ``(amplitude, length_scale..., noise)``.
    n_train : int
    dtype : numpy.dtype
    single_output : bool

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import sparse_gaussian_process
    >>> X = np.linspace(0, 1, 200)[:, None]
    >>> gp = sparse_gaussian_process(X, np.sin(4 * X[:, 0]), n_landmarks=20, noise=1e-4, optimize=False, seed=0)
    >>> mean, std = gp.predict([[0.5]], return_std=True)
    >>> bool(abs(mean[0] - np.sin(2.0)) < 1e-2), bool(std[0] < 0.05)
    (True, True)
    """

    kernel: KernelArg
    amplitude: float
    length_scale: np.ndarray
    noise: float
    coef0: float
    landmarks: np.ndarray
    weights: np.ndarray
    factor: np.ndarray
    factor_b: np.ndarray
    jitter: float
    y_mean: np.ndarray
    y_std: np.ndarray
    log_marginal_likelihood_value: float
    theta: np.ndarray
    n_train: int
    dtype: np.dtype
    single_output: bool

    def predict(self, X: ArrayLike, *, return_std: bool = False, return_var: bool = False, return_grad: bool = False,
                n_threads: Threads = None) -> np.ndarray | tuple:
        """Predictive mean (DTC) at the rows of ``X``, with its standard deviation or
        variance on request (noise included, as :meth:`fastrbf.GaussianProcess.predict`),
        and its gradient.

        Parameters
        ----------
        X : array_like of shape (q, d)
        return_std : bool, default False
            The predictive standard deviation, shape (q,) (or (q, k)).
        return_var : bool, default False
            The predictive variance (not with ``return_std``).
        return_grad : bool, default False
            The gradient of the mean in ``x``, shape (q, d) (or (q, k, d)).  With
            ``return_std`` or ``return_var`` also the variance of each component of
            the latent function's gradient under the DTC posterior and the gradient of
            the predictive standard deviation, both (q, d) (or (q, k, d)).  Needs a
            kernel twice differentiable at 0 (not ``laplacian``, ``matern12``,
            ``truncated``).
        n_threads : int, optional

        Returns
        -------
        mean : ndarray of shape (q,) or (q, k)
        std or var, grad, grad_var, grad_std : ndarrays, as asked

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import sparse_gaussian_process
        >>> X = np.linspace(0, 1, 50)[:, None]
        >>> gp = sparse_gaussian_process(X, X[:, 0] ** 2, n_landmarks=10, optimize=False, seed=0)
        >>> mean, var = gp.predict(X[:3], return_var=True)
        >>> mean.shape, bool(np.all(var >= gp.noise))
        ((3,), True)
        >>> mean, std, grad, grad_var, grad_std = gp.predict(X[:3], return_std=True, return_grad=True)
        >>> grad.shape, grad_var.shape, grad_std.shape
        ((3, 1), (3, 1), (3, 1))
        """
        want_std = _v.check_bool(return_std, "return_std")
        want_var = _v.check_bool(return_var, "return_var")
        want_grad = _v.check_bool(return_grad, "return_grad")
        if want_std and want_var:
            raise ValueError("At most one of `return_std` and `return_var` may be True.")
        Xq, dtype = check_query(self.dtype, self.landmarks.shape[1], X)
        mean, var = self._predict(Xq, want_std or want_var, n_threads)
        mean = mean * self.y_std + self.y_mean
        out = [(mean[:, 0] if self.single_output else mean).astype(dtype, copy=False)]
        if want_std or want_var:
            scale = self.y_std if want_var else np.abs(self.y_std)
            extra = var if want_var else np.sqrt(var)
            extra = extra[:, None] * (scale**2 if want_var else scale)
            out.append((extra[:, 0] if self.single_output else extra).astype(dtype, copy=False))
        if want_grad:
            out += self._gradients(Xq, want_std or want_var, n_threads, dtype)
        return out[0] if len(out) == 1 else tuple(out)

    def _gradients(self, Xq, moments, n_threads, dtype):
        """[gradient of the mean] and, with ``moments``, [variance of the gradient,
        gradient of the standard deviation], in the units of ``y`` and ``dtype``."""
        entry = check_kernel(self.kernel)
        q, d = Xq.shape
        m = self.landmarks.shape[0]
        ls = np.broadcast_to(self.length_scale, (d,)).astype(np.float64)
        g0 = unit_width(entry)
        nt = _threads.resolve(n_threads)
        _, grad = values_and_grad(Xq, self.landmarks, self.weights * self.amplitude, kernel=self.kernel, gamma=g0,
                                  coef0=self.coef0, n_threads=nt, length_scale=ls)
        grad *= self.y_std[:, None]
        out = [(grad[:, 0] if self.single_output else grad).astype(dtype, copy=False)]
        if not moments:
            return out
        prior = self.amplitude * phi_zero(entry, self.coef0)
        pgrad = _gradient.prior_gradient_variance(entry, self.amplitude, ls)
        gstd, gv = np.empty((q, d)), np.empty((q, d))
        Lf, LBf = np.asfortranarray(self.factor), np.asfortranarray(self.factor_b)

        def task(q0, q1):
            K, J = _gradient.stationary_rows(self.landmarks, Xq[q0:q1], kernel=self.kernel, gamma=g0, coef0=self.coef0,
                                             length_scale=ls, amplitude=self.amplitude, constant=0.0, n_threads=1)
            _, gstd[q0:q1], gv[q0:q1] = _gradient.moments(Lf, LBf, K, J, np.full(q1 - q0, prior), 0.0, pgrad,
                                                          self.noise, False)

        step = _gradient.chunk_rows(m, d)
        with _threads.serial_blas():  # chunks of queries on the threads (one BLAS thread each: the same bits)
            _threads.run_tasks([functools.partial(task, q0, min(q, q0 + step)) for q0 in range(0, q, step)],
                               _threads.for_work(q * m * m * (d + 1), nt))
        gstd, gv = _gradient.scaled(gstd, gv, self.y_std, self.single_output)
        return [*out, gv.astype(dtype, copy=False), gstd.astype(dtype, copy=False)]

    def _predict(self, Xq, want_var, n_threads):
        entry = check_kernel(self.kernel)
        q, d = Xq.shape
        m = self.landmarks.shape[0]
        g0 = unit_width(entry)
        lsd = np.broadcast_to(self.length_scale, (d,))
        Zt = np.ascontiguousarray((self.landmarks / lsd).T)
        spec = entry.spec(np.full(m, g0), self.coef0, 1)
        c = self.amplitude
        prior = c * phi_zero(entry, self.coef0)
        mean = np.empty((q, self.weights.shape[1]))
        var = np.empty(q) if want_var else None
        solve = scipy.linalg.solve_triangular

        def task(q0, q1):
            Kq = np.empty((q1 - q0, m))
            phi_rows(np.ascontiguousarray(Xq[q0:q1] / lsd), Zt, spec, Kq)
            Kq *= c
            np.matmul(Kq, self.weights, out=mean[q0:q1])
            if var is not None:
                V = solve(self.factor, Kq.T, lower=True, check_finite=False)  # L^-1 k_m*
                U = solve(self.factor_b, V, lower=True, check_finite=False)
                resid = np.maximum(prior - np.einsum("ij,ij->j", V, V), 0.0)  # k_** - q_**, clamped
                var[q0:q1] = resid + np.einsum("ij,ij->j", U, U) + self.noise

        nt = _threads.for_work(q * m * (d + (2 * m if want_var else 2) + 8), n_threads)
        with _threads.serial_blas():
            _threads.run_tasks([functools.partial(task, q0, min(q, q0 + PREDICT_CHUNK))
                                for q0 in range(0, max(q, 1), PREDICT_CHUNK)], nt)
        return mean, var


def check_landmarks(n, d, n_landmarks, how):
    """(landmark count, the method or the checked array) for ``n`` rows of ``d`` features."""
    if not isinstance(how, str):
        arr = model_data(how, "landmarks")
        return check_landmark_array(arr, d, n_landmarks), arr
    _v.check_choice(how, "landmarks", LANDMARK_METHODS, text=LANDMARKS_TEXT)
    m = default_landmarks(n) if n_landmarks is None else n_landmarks
    return _v.check_int(m, "n_landmarks", 1, n, text=f"an int in [1, n_samples] = [1, {n}]",
                        type_error=ValueError), how


def landmark_kernel(entry, c0, ls):
    """The kernel of ``landmarks="rpcholesky"`` (:func:`fastrbf.gram`'s arguments): the
    GP's kernel at the starting length scales ``ls`` (the amplitude does not change
    the pivots' distribution)."""
    ls = np.asarray(ls, dtype=np.float64)
    return {"kernel": kernel_value(entry), "gamma": unit_width(entry), "coef0": c0,
            "length_scale": float(ls[0]) if ls.size == 1 else ls}


def _setup(X, y, kernel, coef0, normalize_y, n_landmarks, how, seed, n_threads, what, length_scale, ard):
    entry, Xa, ya, Xd, T, c0, y_mean, y_std = prepare_data(X, y, kernel, coef0, normalize_y, what)
    n, d = Xa.shape
    m, how = check_landmarks(n, d, n_landmarks, how)
    ls = check_length_scales(length_scale, d, ard)
    rng = _v.check_seed(seed, name="seed")
    _v.check_memory(memory_bytes(n, d, T.shape[1], m), f"{what} ({m} landmarks)", "use fewer `n_landmarks`.")
    nt = _threads.for_work(n * m * (d + m // 4 + 8), n_threads)
    Z = landmarks(Xd, m, how, rng, nt, kernel=landmark_kernel(entry, c0, ls))
    return entry, Xa, ya, RowPasses(Xd, T, entry, c0, nt), Z, c0, y_mean, y_std, rng, nt, ls


#: the range of ``amplitude`` and ``noise`` (variances): their products and ratios over the
#: sums of up to millions of points stay finite in float64
HYPER_RANGE = (1e-150, 1e150)


def _check_hyper(amplitude, noise):
    lo, hi = HYPER_RANGE
    for name, value in (("amplitude", amplitude), ("noise", noise)):
        v = _v.check_real(value, name, low=0, strict=True)
        if not lo <= v <= hi:
            raise ValueError(f"`{name}` must be in [{lo:g}, {hi:g}] (a variance whose products and ratios with the "
                             f"others stay finite in float64); got {value!r}. Rescale `y` (or use normalize_y) "
                             "instead of an extreme variance.")


_NOT_PD = ("The landmark covariance is not positive definite for these `amplitude`, `length_scale` and `noise`; "
           "use a larger `noise` or fewer `n_landmarks`.")


def sparse_gaussian_process_lml(X: ArrayLike, y: ArrayLike, *, n_landmarks: int | None = None,
                                landmarks: str | ArrayLike = "uniform", kernel: KernelArg = "matern52",
                                amplitude: float = 1.0, length_scale: ArrayLike = 1.0, noise: float = 1e-2,
                                coef0: float = 1.0, eval_gradient: bool = False, seed: Seed = None,
                                n_threads: Threads = None) -> float | tuple[float, np.ndarray]:
    """The variational lower bound (VFE, Titsias 2009) of the log marginal likelihood of
    a Gaussian process with covariance ``amplitude * kernel(length_scale) + noise``
    through the landmarks, and its gradient in ``theta = log(amplitude,
    length_scale..., noise)`` (see the module docstring).

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,) or (n, k)
    n_landmarks : int, optional
        Number of landmarks in [1, n] for ``"uniform"`` / ``"kmeans"`` /
        ``"rpcholesky"``; default ``min(n, max(1000, 2 sqrt(n)))``.
    landmarks : {"uniform", "kmeans", "rpcholesky", "auto"} or array_like of shape (m, d), default "uniform"
    kernel : str or UserKernel, default "matern52"
        A radial, positive definite kernel.
    amplitude, noise : float
        > 0.
    length_scale : float or array_like of shape (d,)
    coef0 : float, default 1.0
        The rational quadratic kernel's shape.
    eval_gradient : bool, default False
    seed : None, int or numpy.random.Generator
        For the landmarks.
    n_threads : int, optional

    Returns
    -------
    lml : float
    grad : ndarray of shape (2 + p,)
        With ``eval_gradient``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gaussian_process_lml, sparse_gaussian_process_lml
    >>> X = np.linspace(0, 1, 30)[:, None]
    >>> y = np.sin(3 * X[:, 0])
    >>> bound = sparse_gaussian_process_lml(X, y, n_landmarks=5, length_scale=0.5, seed=0)
    >>> bool(bound <= gaussian_process_lml(X, y, length_scale=0.5, noise=1e-2))
    True
    """
    _check_hyper(amplitude, noise)
    want = _v.check_bool(eval_gradient, "eval_gradient")
    entry, Xa, _, passes, Z, c0, _, _, _, nt, ls = _setup(X, y, kernel, coef0, False, n_landmarks, landmarks, seed,
                                                           n_threads, "sparse_gaussian_process_lml", length_scale, False)
    try:
        lml, grad, _ = Bound(passes, Z, entry, c0, nt).evaluate(np.log(np.r_[amplitude, ls, noise]), want)
    except (np.linalg.LinAlgError, NotPositiveDefiniteError):
        raise ValueError(_NOT_PD) from None
    return (lml, grad) if want else lml


def sparse_gaussian_process(X: ArrayLike, y: ArrayLike, *, n_landmarks: int | None = None,
                            landmarks: str | ArrayLike = "uniform", kernel: KernelArg = "matern52",
                            amplitude: float = 1.0, length_scale: ArrayLike = 1.0, noise: float = 1e-2,
                            ard: bool = False, coef0: float = 1.0, optimize: bool = True, n_restarts: int = 0,
                            bounds: tuple[float, float] = DEFAULT_BOUNDS, max_iter: int = 50,
                            learn_samples: int | None = None, normalize_y: bool = False, seed: Seed = None,
                            n_threads: Threads = None) -> SparseGaussianProcess:
    """Sparse Gaussian-process regression through ``m`` landmarks (inducing points):
    the hyperparameters of :func:`fastrbf.gaussian_process` learned by maximising the
    variational bound (VFE) on a subsample, then the DTC predictive on all the rows
    (see the module docstring).  ``O(n m^2)`` time, ``O(n d + m^2)`` memory.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,) or (n, k)
        Several outputs share the hyperparameters.
    n_landmarks : int, optional
        Number of landmarks in [1, n] for ``"uniform"`` / ``"kmeans"`` /
        ``"rpcholesky"``; default ``min(n, max(1000, 2 sqrt(n)))``.
    landmarks : {"uniform", "kmeans", "rpcholesky", "auto"} or array_like of shape (m, d), default "uniform"
        Rows drawn without replacement, k-means centres, the pivots of a randomly
        pivoted Cholesky (:func:`fastrbf.rpcholesky`) of the kernel at the starting
        ``length_scale``, or given; never optimised.  ``"auto"``: as
        :func:`fastrbf.kernel_ridge`'s (the pivots where their trace error is small,
        else k-means centres).
    kernel : str or UserKernel, default "matern52"
        A radial, positive definite kernel (as :func:`fastrbf.gaussian_process`).
    amplitude, length_scale, noise :
        The start (or, with ``optimize=False``, the values).  ``noise`` starts at
        ``1e-2`` (not ``gaussian_process``'s ``1e-5``): the bound divides the Nystroem
        residual ``tr(K_nn - Q_nn)`` by it, so a tiny start makes the first steps steep.
    ard : bool, default False
        One length scale per feature (a ``length_scale`` array implies it).
    coef0 : float, default 1.0
        The rational quadratic kernel's shape (fixed).
    optimize : bool, default True
    n_restarts : int, default 0
        Further starts drawn log-uniformly inside ``bounds``.
    bounds : (float, float), default (1e-5, 1e5)
    max_iter : int, default 50
        L-BFGS-B iterations per start.
    learn_samples : int, optional
        Rows (drawn without replacement, seeded) on which the hyperparameters are
        learned; default ``min(n, max(5000, 2 m))``.
    normalize_y : bool, default False
    seed : None, int or numpy.random.Generator
        For the landmarks, the subsample and the restarts.
    n_threads : int, optional

    Returns
    -------
    SparseGaussianProcess

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import sparse_gaussian_process
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (400, 2))
    >>> y = np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(400)
    >>> gp = sparse_gaussian_process(X, y, n_landmarks=40, ard=True, seed=0)
    >>> bool(gp.length_scale[1] > gp.length_scale[0]), bool(0.02 < gp.noise ** 0.5 < 0.1)
    (True, True)
    """
    opts = check_fit_args(amplitude, noise, ard, optimize, n_restarts, max_iter, bounds)
    entry, Xa, ya, passes, Z, c0, y_mean, y_std, rng, nt, ls = _setup(
        X, y, kernel, coef0, normalize_y, n_landmarks, landmarks, seed, n_threads, "sparse_gaussian_process",
        length_scale, opts["ard"])
    return fit(passes, passes.subsample, Z, entry, c0, np.log(np.r_[amplitude, ls, noise]), learn_samples, opts, rng,
               nt, y_mean, y_std, _v.result_dtype(Xa, ya), np.ndim(ya) == 1)


def check_fit_args(amplitude, noise, ard, optimize, n_restarts, max_iter, bounds):
    """The checked scalar arguments of a fit (shared with the dask backend), as a dict."""
    _check_hyper(amplitude, noise)
    out: dict = {"ard": _v.check_bool(ard, "ard"), "optimize": _v.check_bool(optimize, "optimize"),
           "n_restarts": _v.check_int(n_restarts, "n_restarts", 0), "max_iter": _v.check_int(max_iter, "max_iter", 1)}
    out["bounds"] = log_bounds(bounds)
    return out


def fit(passes, subsample, Z, entry, c0, theta, learn_samples, opts, rng, nt, y_mean, y_std, dtype, single):
    """The model from the passes over all rows (``passes``) and ``subsample(rows)``, the
    in-memory passes over the sorted ``rows`` (None: all) on which the hyperparameters
    are learned from ``theta`` (written once for every backend)."""
    n, m = passes.n, Z.shape[0]
    if learn_samples is not None:
        learn_samples = _v.check_int(learn_samples, "learn_samples", 1, n, text=f"an int in [1, n_samples] = [1, {n}]",
                                     type_error=ValueError)
    if opts["optimize"]:
        ns = min(n, max(LEARN_SAMPLES, 2 * m)) if learn_samples is None else learn_samples
        rows = None if ns == n else np.sort(rng.choice(n, size=ns, replace=False))
        lo, hi = opts["bounds"]
        theta = _maximise(Bound(subsample(rows), Z, entry, c0, nt), theta, lo, hi, opts["n_restarts"], opts["max_iter"],
                          rng)
    try:
        lml, _, st = Bound(passes, Z, entry, c0, nt).evaluate(theta, False)
    except (np.linalg.LinAlgError, NotPositiveDefiniteError):
        raise ValueError(_NOT_PD) from None
    beta = solve_lower(st["L"], st["w"], nt, trans=True) / st["s2"]
    return SparseGaussianProcess(kernel_value(entry), st["c"], np.asarray(st["ls"], dtype=_F64), st["s2"], c0, Z,
                                 np.ascontiguousarray(beta), np.ascontiguousarray(st["L"]),
                                 np.ascontiguousarray(st["LB"]), float(st["delta"]), y_mean, y_std, float(lml),
                                 theta, n, dtype, single)


def _maximise(bound, theta0, lo, hi, n_restarts, max_iter, rng):
    """L-BFGS-B on the bound from ``theta0`` and ``n_restarts`` log-uniform draws in
    ``[lo, hi]`` (log space); the best ``theta``."""
    starts = [np.clip(theta0, lo, hi)] + [rng.uniform(lo, hi, theta0.size) for _ in range(n_restarts)]
    best = maximise(lambda t: bound.evaluate(t, True)[:2], starts, [(lo, hi)] * theta0.size,
                    (np.linalg.LinAlgError, NotPositiveDefiniteError, FloatingPointError),
                    {"maxiter": max_iter, "ftol": FTOL})
    if best is None:
        raise ValueError("sparse_gaussian_process: the landmark covariance is not positive definite from any start; "
                         "use a larger `noise` or narrower `bounds`.")
    return best
