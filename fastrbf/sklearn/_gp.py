""":class:`GaussianProcessRegressor` over :func:`fastrbf.gaussian_process` (a kernel object) or the PRML
covariance of :mod:`fastrbf.gp._prml` (a kernel name, with its ``theta``);
:class:`VecchiaGaussianProcessRegressor` over :func:`fastrbf.vecchia_gaussian_process`."""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import kernels as _skk
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _validation as _v
from .._typing import ArrayLike
from ..gp._deprecated import regression
from ..gp._exact import gaussian_process, gaussian_process_lml
from ..gp._optimise import maximise
from ..gp._sklearn_kernels import gp_form
from ..gp._vecchia import vecchia_gaussian_process
from . import _gp_generic as _generic
from ._base import (
    XY_OVERFLOW,
    call_renamed,
    check_magnitude,
    random_state_of,
    to_n_threads,
    to_progress,
    to_seed,
    validate_fit_xy,
    validate_x,
)


class GaussianProcessRegressor(RegressorMixin, BaseEstimator):
    """Gaussian-process regression: scikit-learn's ``GaussianProcessRegressor`` given a
    kernel object (over :func:`fastrbf.gaussian_process`), or PRML's GP given a name
    (the covariance of ``gaussian_process(kernel="prml")``, parameterised by ``theta``).

    Parameters
    ----------
    kernel : scikit-learn kernel, None, "gaussian" or "prml"; default None
        A kernel object (``sklearn.gaussian_process.kernels``) of the form
        ``ConstantKernel * K [+ ConstantKernel] [+ WhiteKernel]``, ``K`` one of ``RBF``
        (one length scale or one per feature), ``Matern(nu=0.5 | 1.5 | 2.5 | inf)`` and
        ``RationalQuadratic`` with a fixed ``alpha``: then the parameters, fitted
        attributes and methods are scikit-learn's (``alpha``, ``kernel_``, ``L_``,
        ``alpha_``, ``X_train_``, ``y_train_``, ``log_marginal_likelihood``,
        ``predict(return_std | return_cov)``, ``sample_y``), the hyperparameters, their
        bounds and what is fixed are the kernel's, and ``theta``, ``noise`` and ``bounds``
        are not used.  None (the default) is scikit-learn's default, ``ConstantKernel() *
        RBF()``.  Any other kernel object (sums and products, ``DotProduct``,
        ``ExpSineSquared``, kernels on structured data) is computed by the kernel object
        itself and SciPy's Cholesky, with the same attributes and methods (scikit-learn's
        speed: nothing of fastrbf's compiled GP).
        A name: ``t0 exp(-t1/2 r^2)`` (``"gaussian"``) or PRML's
        ``t0 exp(-t1/2 r^2) + t2 + t3 x.y`` (``"prml"``); plus the noise variance.
    theta : array_like, optional
        With a name: starting (with ``optimizer=None``: fixed) kernel parameters;
        default all 1.
    noise : float, default 1e-2
        With a name: starting (or fixed) noise variance (scikit-learn's ``WhiteKernel``).
    alpha : float or array_like of shape (n_samples,), default 1e-10
        With a kernel object: added to the diagonal of the training covariance (one
        value, or one per sample: scikit-learn's ``alpha``).
    optimizer : "fmin_l_bfgs_b", None or callable, default "fmin_l_bfgs_b"
        Maximise the log marginal likelihood (L-BFGS-B in log space), or keep
        the hyperparameters.  With a kernel object, a callable as scikit-learn's:
        ``optimizer(obj_func, initial_theta, bounds) -> (theta_opt, func_min)``.
    n_restarts_optimizer : int, default 0
        Further starts drawn log-uniformly inside the bounds.
    bounds : array_like of shape (len(theta) + 1, 2), optional
        With a name: of ``(theta..., noise)``; default ``(1e-5, 1e5)`` each.
    normalize_y : bool, default False
    random_state : None, int, RandomState or Generator
        For the restarts.
    n_targets : int, optional
        With a kernel object: the number of target columns of the prior (before
        ``fit``), and the number ``fit`` must be given (scikit-learn's parameter).
    n_jobs : int, optional
        fastrbf's ``n_threads``.

    Attributes
    ----------
    model_ : fastrbf.GaussianProcess (kernel object), or the fitted PRML covariance (name)
    kernel_ : scikit-learn kernel, with a kernel object
        The kernel with the fitted hyperparameters.
    L_ : ndarray of shape (n_samples, n_samples), with a kernel object
        Lower Cholesky factor of the training covariance.
    X_train_, y_train_ : ndarrays, with a kernel object
        The training data (``y`` normalised with ``normalize_y``).
    theta_ : ndarray, with a name
    noise_ : float, with a name
    alpha_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Dual weights ``C^-1 y`` (of the normalised ``y``).
    log_marginal_likelihood_value_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had column names

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import GaussianProcessRegressor
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> gp = GaussianProcessRegressor("gaussian", theta=[1.0, 10.0], noise=1e-4, optimizer=None)
    >>> gp = gp.fit(X, np.sin(3 * X[:, 0]))
    >>> mean, std = gp.predict([[0.5]], return_std=True)
    >>> bool(abs(mean[0] - np.sin(1.5)) < 1e-3), bool(0 < std[0] < 0.03)
    (True, True)

    With scikit-learn's kernel objects:

    >>> from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
    >>> k = ConstantKernel() * Matern(length_scale=[1.0], nu=2.5) + WhiteKernel(1e-3)
    >>> y = np.sin(3 * X[:, 0]) + 0.05 * np.random.default_rng(0).standard_normal(20)  # noisy: no bound reached
    >>> gp = GaussianProcessRegressor(k, random_state=0).fit(X, y)
    >>> mean, cov = gp.predict(X[:3], return_cov=True)
    >>> cov.shape, gp.sample_y(X[:3], 4).shape
    ((3, 3), (3, 4))
    """

    def __init__(self, kernel=None, *, theta=None, noise=1e-2, alpha=1e-10, optimizer="fmin_l_bfgs_b",
                 n_restarts_optimizer=0, bounds=None, normalize_y=False, random_state=None, n_targets=None,
                 n_jobs=None):
        self.kernel = kernel
        self.theta = theta
        self.noise = noise
        self.alpha = alpha
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.bounds = bounds
        self.normalize_y = normalize_y
        self.random_state = random_state
        self.n_targets = n_targets
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = self.kernel is None or isinstance(self.kernel, _skk.Kernel)
        return tags

    def fit(self, X: ArrayLike, y: ArrayLike) -> "GaussianProcessRegressor":
        """Fit the hyperparameters (unless ``optimizer=None``) and the posterior.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)

        Returns
        -------
        self
        """
        if self.kernel is None or isinstance(self.kernel, _skk.Kernel):
            return self._fit_kernel(X, y)
        X, y = validate_fit_xy(self, X, y, y_numeric=True)
        check_magnitude(X)
        _v.check_choice(self.optimizer, "optimizer", ("fmin_l_bfgs_b", None), text="'fmin_l_bfgs_b' or None")
        _v.check_choice(self.kernel, "kernel", ("gaussian", "prml"),
                        text="'gaussian', 'prml', None or a scikit-learn kernel object")
        normalize_y = _v.check_bool(self.normalize_y, "normalize_y")
        for name in ("theta", "bounds"):
            value = getattr(self, name)
            try:
                arr = None if value is None else np.asarray(value, dtype=np.float64)
            except (TypeError, ValueError):
                arr = None
            if value is not None and arr is None:
                raise TypeError(f"`{name}` must be None or an array of numbers; got {value!r}.")
        seed = to_seed(self.random_state)
        renames = {"theta0": "theta", "n_restarts": "n_restarts_optimizer", "alpha": "noise"}
        replace = (("(theta0..., noise)", "(theta..., noise)"), (', `jitter="auto"`', ""),
                   ("Every optimiser start failed: the covariance was not positive definite.",
                    "Every optimiser start failed: the covariance was not positive definite, or the likelihood "
                    "overflowed. Remedies: `normalize_y`=True for targets of extreme magnitude, a larger `noise` "
                    "or narrower `bounds`."))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            m = call_renamed(regression, X, y, kernel=self.kernel, theta0=self.theta, noise=self.noise,
                             optimize=self.optimizer is not None, n_restarts=self.n_restarts_optimizer, bounds=self.bounds,
                             seed=seed, normalize_y=normalize_y, n_threads=to_n_threads(self.n_jobs), renames=renames,
                             replace=replace, remedy=XY_OVERFLOW + "rescale them, use `normalize_y`=True or a larger `noise`.")
        for w in caught:  # fastrbf's "optimum on a bound" is scikit-learn's ConvergenceWarning
            if issubclass(w.category, UserWarning) and "sits on a bound" in str(w.message):
                warnings.warn(str(w.message), ConvergenceWarning, stacklevel=2)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        self.model_ = m
        self.theta_ = m.theta
        self.noise_ = m.noise
        self.alpha_ = m.alpha
        self.log_marginal_likelihood_value_ = m.log_marginal_likelihood
        self._dtype = X.dtype
        return self

    def _fit_kernel(self, X, y):
        """``fit`` with a scikit-learn kernel object (or None)."""
        kernel = _skk.ConstantKernel() * _skk.RBF() if self.kernel is None else self.kernel
        if kernel.requires_vector_input:
            X, y = validate_fit_xy(self, X, y, y_numeric=True, multi_output=True)
            check_magnitude(X)
        else:  # structured data (strings, graphs...): the kernel object reads X itself
            X, y = validate_data(self, X, y, dtype=None, ensure_2d=False, multi_output=True, y_numeric=True)
        if not callable(self.optimizer):
            _v.check_choice(self.optimizer, "optimizer", ("fmin_l_bfgs_b", None),
                            text="'fmin_l_bfgs_b', None or a callable")
        for name in ("theta", "bounds"):
            if getattr(self, name) is not None:
                raise ValueError(f"`{name}` is for kernel='gaussian' or 'prml'; a kernel object carries its own "
                                 f"hyperparameters and bounds; got {name}={getattr(self, name)!r}.")
        n_targets = 1 if y.ndim == 1 else y.shape[1]
        if self.n_targets is not None and _v.check_int(self.n_targets, "n_targets", 1) != n_targets:
            raise ValueError(f"The number of targets seen in `y` is different from the parameter `n_targets`: "
                             f"{n_targets} != {self.n_targets}.")
        jitter = self.alpha
        if np.ndim(jitter) == 1 and not isinstance(jitter, str):  # one value per sample, scikit-learn's rule
            if np.shape(jitter)[0] != y.shape[0]:
                raise ValueError(f"alpha must be a scalar or an array with same number of entries as y: `alpha` has "
                                 f"{np.shape(jitter)[0]} values and `y` {y.shape[0]}.")
            jitter = np.array(jitter, dtype=np.float64)
            if not (np.isfinite(jitter).all() and (jitter >= 0).all()):
                raise ValueError("`alpha` must contain only finite values >= 0.")
        else:
            jitter = _v.check_real(jitter, "alpha", low=0)
        normalize_y = _v.check_bool(self.normalize_y, "normalize_y")
        n_restarts = _v.check_int(self.n_restarts_optimizer, "n_restarts_optimizer", 0)
        rng = random_state_of(self.random_state)
        nt = to_n_threads(self.n_jobs)
        if kernel.requires_vector_input:
            _check_length_scales(kernel, X.shape[1])
        form = covered(kernel)  # None: the kernel object computes the covariance (_gp_generic)
        Y = np.asarray(y, dtype=np.float64)
        mean, std = (Y.mean(axis=0), Y.std(axis=0)) if normalize_y else (np.zeros(Y.shape[1:]), np.ones(Y.shape[1:]))
        std = np.where(std == 0, 1.0, std)
        Yn = (Y - mean) / std
        kernel_ = kernel.clone_with_theta(kernel.theta)
        if self.optimizer is not None and kernel.n_dims > 0:
            bounds = kernel.bounds
            starts = [kernel.theta]
            if n_restarts:
                if not np.isfinite(bounds).all():
                    raise ValueError("Multiple optimizer restarts (n_restarts_optimizer>0) requires that all bounds "
                                     "are finite: give every hyperparameter of `kernel` finite bounds, or "
                                     "`n_restarts_optimizer`=0.")
                starts += [rng.uniform(bounds[:, 0], bounds[:, 1]) for _ in range(n_restarts)]
            # not positive definite at theta (a ValueError): scikit-learn's -inf
            if callable(self.optimizer):
                best = self._run_optimizer(X, Yn, form, kernel, jitter, nt, starts, bounds)
            else:
                best = maximise(lambda t: self._lml(X, Yn, form, kernel.clone_with_theta(t), jitter, nt), starts,
                                bounds, ValueError)
            if best is None:
                # (scikit-learn's words and exception, a ValueError too)
                raise np.linalg.LinAlgError(
                    f"The kernel, {kernel}, is not returning a positive definite matrix. Try gradually increasing the "
                    f"'alpha' parameter of your GaussianProcessRegressor estimator. Every optimiser start failed: the "
                    f"covariance was not positive definite. Remedies: a larger `alpha`, a WhiteKernel in `kernel`, or "
                    f"`normalize_y`=True.")
            kernel_ = kernel.clone_with_theta(best)
            # an optimum on a bound: scikit-learn's ConvergenceWarning, by its own rule and words
            if hasattr(kernel_, "_check_bounds_params"):
                kernel_._check_bounds_params()
        if form is None:
            m = _generic.fit(kernel_, X, Yn.reshape(Yn.shape[0], -1), mean, std, jitter)
        else:
            m = call_renamed(gaussian_process, X, y, **form.values(kernel_), jitter=jitter, optimize=False,
                             normalize_y=normalize_y, n_threads=nt, renames={"noise": "kernel", "jitter": "alpha"},
                             replace=(("use a larger `kernel`", "use a larger `alpha` or a WhiteKernel in `kernel`"),))
        self.model_ = m
        self.kernel_ = kernel_
        self._form = form
        self.X_train_ = m.X_train
        self.y_train_ = Yn
        self._y_train_mean, self._y_train_std = mean, std  # scikit-learn's names
        self.L_ = m.factor
        self.alpha_ = m.alpha[:, 0] if form is None and Yn.ndim == 1 else m.alpha
        # NumPy floats, as scikit-learn's (arithmetic with NumPy scalars keeps float64)
        self.log_marginal_likelihood_value_ = np.float64(m.log_marginal_likelihood_value)
        self._dtype = X.dtype if kernel.requires_vector_input else np.dtype(np.float64)
        return self

    def _run_optimizer(self, X, Yn, form, kernel, jitter, n_threads, starts, bounds):
        """scikit-learn's protocol for a callable ``optimizer``: ``optimizer(obj_func,
        initial_theta, bounds) -> (theta_opt, func_min)``, ``obj_func(theta,
        eval_gradient=True)`` the negative log marginal likelihood (and its gradient),
        once per start; the lowest minimum is kept (None when every start failed)."""
        def obj_func(theta, eval_gradient=True):
            try:
                value, grad = self._lml(X, Yn, form, kernel.clone_with_theta(theta), jitter, n_threads)
            except ValueError:
                value, grad = -np.inf, np.zeros(len(theta))
            return (-value, -grad) if eval_gradient else -value

        runs = [self.optimizer(obj_func, np.asarray(t, dtype=np.float64), bounds) for t in starts]
        finite = [(float(f), np.asarray(t, dtype=np.float64)) for t, f in runs if np.isfinite(f)]
        return min(finite, key=lambda r: r[0])[1] if finite else None

    def _lml(self, X, Yn, form, kernel, jitter, n_threads):
        """(log marginal likelihood, its gradient in ``kernel.theta``) of normalised targets."""
        if form is None:
            return _generic.lml(kernel, X, Yn.reshape(Yn.shape[0], -1), jitter, True)
        res = gaussian_process_lml(X, Yn, **form.values(kernel), jitter=jitter, eval_gradient=True, n_threads=n_threads)
        assert isinstance(res, tuple)
        return res[0], form.free_gradient(kernel, res[1])

    def log_marginal_likelihood(self, theta: ArrayLike | None = None, eval_gradient: bool = False,
                                clone_kernel: bool = True) -> float | tuple[float, np.ndarray]:
        """The log marginal likelihood of the training data at ``theta`` (the fitted
        ``kernel_.theta`` when None), and its gradient, as scikit-learn's; only for a
        model fitted with a kernel object.

        Parameters
        ----------
        theta : array_like, optional
            The logs of the free hyperparameters, in ``kernel_.theta``'s order.
        eval_gradient : bool, default False
        clone_kernel : bool, default True
            False: ``kernel_`` takes the hyperparameters ``theta`` (scikit-learn's rule).

        Returns
        -------
        lml : float
        grad : ndarray of shape (len(theta),), with ``eval_gradient``
        """
        check_is_fitted(self)
        if not hasattr(self, "kernel_"):
            raise AttributeError("`log_marginal_likelihood` needs a model fitted with a scikit-learn kernel object.")
        want = _v.check_bool(eval_gradient, "eval_gradient")
        if theta is None:
            if want:
                raise ValueError("Gradient can only be evaluated for theta!=None: `eval_gradient` needs a `theta`.")
            return self.log_marginal_likelihood_value_
        theta = np.asarray(theta, dtype=np.float64)
        if clone_kernel:
            k = self.kernel_.clone_with_theta(theta)
        else:
            k = self.kernel_
            k.theta = theta
        try:
            value, grad = self._lml(self.X_train_, self.y_train_, self._form, k, self.model_.jitter, self.n_jobs)
        except ValueError:  # not positive definite: scikit-learn's -inf
            return (-np.inf, np.zeros(k.n_dims)) if want else -np.inf
        return (np.float64(value), grad) if want else np.float64(value)

    def sample_y(self, X: ArrayLike, n_samples: int = 1,
                 random_state: "int | np.random.RandomState | np.random.Generator | None" = 0) -> np.ndarray:
        """Draws of the posterior at the rows of ``X``, as scikit-learn's ``sample_y``;
        only for a model fitted with a kernel object.

        Parameters
        ----------
        X : array_like of shape (n_samples_X, n_features)
        n_samples : int, default 1
        random_state : None, int, RandomState or Generator, default 0

        Returns
        -------
        ndarray of shape (n_samples_X, n_samples) or (n_samples_X, n_targets, n_samples)
        """
        if self._prior():
            mean, cov = self.predict(X, return_cov=True)
            return _generic.draws(random_state_of(random_state), mean, cov, n_samples)
        Xv = self._queries(X)
        if not hasattr(self, "kernel_"):
            raise AttributeError("`sample_y` needs a model fitted with a scikit-learn kernel object.")
        S = call_renamed(self.model_.sample_y, Xv, n_samples, seed=to_seed(random_state), n_threads=self.n_jobs)
        return S[:, 0, :] if S.ndim == 3 and S.shape[1] == 1 else S  # one target column: scikit-learn's shape

    def _vector_input(self):
        """Whether the fitted kernel reads rows of numbers (not structured data)."""
        return not hasattr(self, "kernel_") or self.kernel_.requires_vector_input

    def _queries(self, X):
        """``X`` of ``predict`` and ``sample_y``, validated as the fitted kernel reads it."""
        if self._vector_input():
            return validate_x(self, X)
        to_n_threads(self.n_jobs)
        return validate_data(self, X, dtype=None, ensure_2d=False, reset=False)

    def _prior(self):
        """Whether predictions come from the prior: not fitted, with a kernel object or
        None (scikit-learn's rule; a kernel name has no prior before a fit)."""
        return not hasattr(self, "model_") and (self.kernel is None or isinstance(self.kernel, _skk.Kernel))

    def _predict_prior(self, X, return_std, return_cov):
        # scikit-learn's prior: mean 0, the kernel's covariance (float64), repeated over
        # `n_targets` columns when there are several
        kernel = _prior_kernel(self.kernel)
        Xv = np.asarray(X, dtype=np.float64) if kernel.requires_vector_input else X
        if kernel.requires_vector_input:
            Xv = _v.check_data(Xv, "X")
        m = Xv.shape[0] if hasattr(Xv, "shape") else len(Xv)
        n_targets = 1 if self.n_targets is None else _v.check_int(self.n_targets, "n_targets", 1)

        def columns(a):
            return a if n_targets == 1 else np.repeat(a[..., None], n_targets, axis=-1)

        mean = columns(np.zeros(m))
        if return_cov:
            return mean, columns(kernel(Xv))
        if return_std:
            return mean, columns(np.sqrt(np.maximum(kernel.diag(Xv), 0.0)))
        return mean

    def predict(self, X: ArrayLike, return_std: bool = False,
                return_cov: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Predictive mean, and with ``return_std`` the standard deviation of ``y``
        (noise included, as scikit-learn with a ``WhiteKernel``) or with ``return_cov``
        (a model fitted with a kernel object) the covariance.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        return_std : bool, default False
        return_cov : bool, default False

        Before ``fit`` (with a kernel object, or None: scikit-learn's default prior kernel)
        the predictions of the prior: mean 0, the kernel's covariance, as scikit-learn's.

        Returns
        -------
        mean : ndarray of shape (n_samples,) or (n_samples, n_targets)
            float32 when ``X`` and the training data were float32.
        std : ndarray of shape (n_samples,) (or (n_samples, n_targets)), only with ``return_std``
        cov : ndarray of shape (n_samples, n_samples) (or (n_samples, n_samples, n_targets)),
            only with ``return_cov``
        """
        return_std = _v.check_bool(return_std, "return_std")
        return_cov = _v.check_bool(return_cov, "return_cov")
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested: `return_std` and "
                               "`return_cov` were both True.")
        if self._prior():
            return self._predict_prior(X, return_std, return_cov)
        Xv = self._queries(X)
        dtype = _v.result_dtype(Xv, self._dtype) if self._vector_input() else np.dtype(np.float64)
        if hasattr(self, "kernel_"):
            out = call_renamed(self.model_.predict, Xv, return_std=return_std, return_cov=return_cov, n_threads=self.n_jobs)
            if not isinstance(out, tuple):
                return _one_column(out).astype(dtype, copy=False)
            second = out[1][:, :, 0] if return_cov and out[1].ndim == 3 and out[1].shape[2] == 1 else \
                _one_column(out[1]) if return_std else out[1]
            return _one_column(out[0]).astype(dtype, copy=False), second.astype(dtype, copy=False)
        if return_cov:
            raise ValueError("`return_cov` needs a model fitted with a scikit-learn kernel object.")
        if not return_std:
            return _one_column(self.model_.predict(Xv, n_threads=self.n_jobs)).astype(dtype, copy=False)
        p = self.model_.predict(Xv, return_var=True, n_threads=self.n_jobs)
        return _one_column(p.mean).astype(dtype, copy=False), _one_column(np.sqrt(p.var)).astype(dtype, copy=False)


def _prior_kernel(kernel):
    """The kernel of the prior of an unfitted estimator, as scikit-learn's: ``None`` is
    ``ConstantKernel(1.0, "fixed") * RBF(1.0, "fixed")``."""
    if kernel is None:
        return _skk.ConstantKernel(1.0, constant_value_bounds="fixed") * _skk.RBF(1.0, length_scale_bounds="fixed")
    return kernel


def _check_length_scales(kernel, d):
    """Refuse, before any fit, a length-scale vector of a kernel object whose length is
    not the number of features (in scikit-learn's words)."""
    for name, value in kernel.get_params().items():
        # (one entry is isotropic, as in scikit-learn)
        if name.split("__")[-1] == "length_scale" and np.ndim(value) == 1 and np.size(value) not in (1, d):
            raise ValueError(f"Anisotropic kernel must have the same number of dimensions as data ({np.size(value)}!={d}): "
                             f"the `kernel`'s {name} has {np.size(value)} entries and `X` has {d} features; give one "
                             "per feature, or a scalar.")


def _one_column(a):
    """scikit-learn's shape for one target column (``y`` of shape (n, 1)): means and
    standard deviations (m, 1) -> (m,) (its covariance (m, m, 1) -> (m, m) is done by
    the caller)."""
    return a[:, 0] if a.ndim == 2 and a.shape[1] == 1 else a



def covered(kernel):
    """fastrbf's form of the kernel object (:func:`fastrbf.gp._sklearn_kernels.gp_form`),
    or None for a kernel that fastrbf's GP does not compute."""
    try:
        return gp_form(kernel)
    except ValueError:
        return None


class VecchiaGaussianProcessRegressor(RegressorMixin, BaseEstimator):
    """The nearest-neighbour (Vecchia) Gaussian process (over
    :func:`fastrbf.vecchia_gaussian_process`) for millions of points: each point
    conditioned on its ``n_neighbors`` nearest earlier points of an ordering, the
    hyperparameters by L-BFGS-B on that likelihood, predictions from the nearest
    training points.

    Parameters
    ----------
    n_neighbors : int, default 30
    kernel : str, default "matern52"
        A radial, positive definite kernel of :data:`fastrbf.KERNELS` (``"gaussian"``
        is scikit-learn's ``RBF``, ``"matern12" | "matern32" | "matern52"`` its
        ``Matern(nu=0.5 | 1.5 | 2.5)``).
    amplitude, length_scale, noise :
        The starts (or, with ``optimizer=None``, the values) of ``ConstantKernel *
        K(length_scale) + WhiteKernel(noise)``; ``length_scale`` a number or one per
        feature.
    ard : bool, default False
        One length scale per feature.
    ordering : {"maximin", "random", "coordinate", "none"}, default "maximin"
    optimizer : "fmin_l_bfgs_b" or None, default "fmin_l_bfgs_b"
    n_restarts_optimizer : int, default 0
    normalize_y : bool, default False
    random_state : None, int, RandomState or Generator
    n_jobs : int, optional
        fastrbf's ``n_threads``.
    verbose : int or bool, default 0
        ``> 0``: progress on stderr.

    Attributes
    ----------
    model_ : fastrbf.VecchiaGaussianProcess
    theta_ : ndarray
        ``log`` of ``(amplitude, length_scale..., noise)``.
    log_marginal_likelihood_value_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had column names

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import VecchiaGaussianProcessRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (500, 2))
    >>> y = np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(500)
    >>> gp = VecchiaGaussianProcessRegressor(n_neighbors=15, noise=0.01, random_state=0).fit(X, y)
    >>> mean, std = gp.predict([[0.5, 0.5]], return_std=True)
    >>> bool(abs(mean[0] - np.sin(3.0)) < 0.05), bool(0 < std[0] < 0.1)
    (True, True)
    """

    def __init__(self, n_neighbors=30, *, kernel="matern52", amplitude=1.0, length_scale=1.0, noise=1e-2, ard=False,
                 ordering="maximin", optimizer="fmin_l_bfgs_b", n_restarts_optimizer=0, normalize_y=False,
                 random_state=None, n_jobs=None, verbose=0):
        self.n_neighbors = n_neighbors
        self.kernel = kernel
        self.amplitude = amplitude
        self.length_scale = length_scale
        self.noise = noise
        self.ard = ard
        self.ordering = ordering
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.normalize_y = normalize_y
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X: ArrayLike, y: ArrayLike) -> "VecchiaGaussianProcessRegressor":
        """Choose the ordering and neighbours, fit the hyperparameters (unless
        ``optimizer=None``).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_fit_xy(self, X, y, y_numeric=True)
        y = np.asarray(y).astype(X.dtype, copy=False)  # float32 X: float32 predictions (fitted in float64)
        check_magnitude(X)
        if X.shape[0] < 2:
            raise ValueError(f"VecchiaGaussianProcessRegressor needs at least 2 samples; got {X.shape[0]} sample.")
        _v.check_choice(self.optimizer, "optimizer", ("fmin_l_bfgs_b", None), text="'fmin_l_bfgs_b' or None")
        m = call_renamed(vecchia_gaussian_process, X, y, n_neighbors=self.n_neighbors, kernel=self.kernel,
                         amplitude=self.amplitude, length_scale=self.length_scale, noise=self.noise, ard=self.ard,
                         ordering=self.ordering, optimize=self.optimizer is not None,
                         n_restarts=self.n_restarts_optimizer, normalize_y=self.normalize_y,
                         seed=to_seed(self.random_state), n_threads=to_n_threads(self.n_jobs),
                         progress=to_progress(self.verbose), renames={"n_restarts": "n_restarts_optimizer"},
                         remedy=XY_OVERFLOW + "rescale them, use `normalize_y`=True or a larger `noise`.")
        self.model_ = m
        self.theta_ = m.theta
        self.log_marginal_likelihood_value_ = m.log_marginal_likelihood_value
        return self

    def predict(self, X: ArrayLike, return_std: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """The posterior mean (and standard deviation, noise included) at ``X``, each
        query from its ``n_neighbors`` nearest training points.

        Parameters
        ----------
        X : array_like of shape (n_queries, n_features)
        return_std : bool, default False

        Returns
        -------
        mean : ndarray of shape (n_queries,)
        std : ndarray of shape (n_queries,)
            With ``return_std``.
        """
        Xv = validate_x(self, X)
        return self.model_.predict(Xv, return_std=return_std, n_threads=to_n_threads(self.n_jobs))

    def log_marginal_likelihood(self, theta: ArrayLike | None = None,
                                eval_gradient: bool = False) -> float | tuple[float, np.ndarray]:
        """The Vecchia log likelihood on the fitted ordering and neighbours (at ``theta``,
        default the fitted one) and its gradient; see
        :meth:`fastrbf.VecchiaGaussianProcess.log_marginal_likelihood`."""
        check_is_fitted(self)
        return self.model_.log_marginal_likelihood(theta, eval_gradient, n_threads=to_n_threads(self.n_jobs))
