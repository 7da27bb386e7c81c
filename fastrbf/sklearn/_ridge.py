"""Kernel ridge and interpolation estimators: :class:`KernelRidge`, :class:`KernelRidgeCV`, :class:`RBFInterpolatorRegressor`."""

import dataclasses
import functools
from typing import Any

import numpy as np

from .. import _validation as _v
from .._sparse import is_sparse
from .._typing import ArrayLike
from ..kernels import KERNELS, check_kernel, gram, is_user
from ..linalg import check_alpha, solve_regularized
from ..models import interpolate, kernel_ridge, kernel_ridge_cv
from ._base import (
    XY_OVERFLOW,
    MultiOutputRegressor,
    as_dot_product,
    call_renamed,
    check_no_kernel_params,
    check_range,
    default_gamma,
    is_sklearn_kernel,
    length_scaled,
    resolve_kernel,
    scalar_gamma,
    shared_docs,
    single_column,
    sklearn_gram,
    sklearn_kernel_params,
    to_n_threads,
    to_seed,
    validate_x,
    validate_xy,
)


@dataclasses.dataclass(frozen=True, eq=False)
class GramModel:
    """Kernel ridge's dual weights on an explicit Gram matrix: ``predict(X)`` is
    ``K @ weights + intercept``, ``K`` the kernel values (m, n) of the queries with the
    training points: ``X`` itself for a precomputed kernel (``X_fit`` None), else
    :func:`fastrbf.gram` of ``X`` with the (sparse) training points ``X_fit``, a block of
    rows at a time."""

    weights: np.ndarray
    intercept: np.ndarray
    single_output: bool
    X_fit: Any = None
    kernel: dict = dataclasses.field(default_factory=dict)
    #: ``pairwise(X, X_fit)``, the kernel values of a kernel that scikit-learn computes
    #: (None: :func:`fastrbf.gram` with ``kernel``)
    pairwise: Any = None

    def predict(self, X, n_threads=None):
        if self.X_fit is None:
            K = np.asarray(X)
            out = K @ self.weights.astype(np.result_type(K.dtype, np.float32), copy=False)
        else:
            m, n = X.shape[0], self.weights.shape[0]
            dtype = _v.result_dtype(X, self.weights)
            out = np.empty((m, self.weights.shape[1]), dtype=dtype)
            rows = max(1, PREDICT_BLOCK_ELEMENTS // n)
            for r0 in range(0, m, rows):
                K = self.pairwise(X[r0:r0 + rows], self.X_fit) if self.pairwise is not None else \
                    gram(X[r0:r0 + rows], self.X_fit, n_threads=n_threads, **self.kernel)
                out[r0:r0 + rows] = K @ self.weights.astype(dtype, copy=False)
        out += self.intercept.astype(out.dtype, copy=False)
        return out[:, 0] if self.single_output else out


#: kernel values per block of queries in the prediction of a model on sparse data
PREDICT_BLOCK_ELEMENTS = 1 << 22


@shared_docs
class KernelRidge(MultiOutputRegressor):
    """Kernel ridge regression (scikit-learn API over :func:`fastrbf.kernel_ridge`).

    Dual weights ``(K + alpha I)^-1 y``, the Gram matrix built and factored in place; for
    large ``n_samples``, Nystroem kernel ridge, solved directly (``solver="nystrom"``) or
    by Falkon's preconditioned conjugate gradients (``solver="nystrom-pcg"``), no n x n
    matrix (see :func:`fastrbf.kernel_ridge`).

    Parameters
    ----------
    alpha : float or array_like of shape (n_samples,), default 1.0
        Ridge added to the diagonal: one value, or one per training point (fastrbf's
        rule; scikit-learn's array ``alpha`` is one per target).
    kernel : str or callable, default "gaussian"
        A name of :data:`fastrbf.KERNELS` (or ``"rbf"``, ``"poly"``, ``"sigmoid"``);
        positive definite.  ``"linear"`` is scikit-learn's ``x . y`` (the polynomial of
        degree 1, ``gamma`` 1, ``coef0`` 0).  ``"precomputed"``: ``X`` is the Gram matrix, (n_samples,
        n_samples) in ``fit`` and (n_queries, n_samples) in ``predict`` (as
        scikit-learn); the solve factors a copy of it (never the caller's array).
        scikit-learn's ``"laplacian"`` (the L1 distance; fastrbf's Euclidean one is
        ``"matern12"``), ``"chi2"``, ``"additive_chi2"``, ``"cosine"`` and a callable
        ``kernel(x, y, **kernel_params)`` are computed by scikit-learn's
        ``pairwise_kernels`` (as scikit-learn's ``KernelRidge``; NumPy speed), then solved
        as a precomputed kernel (exact solver).
    gamma : float, optional
        Default ``1 / n_features`` for fastrbf's kernels; scikit-learn's default for its own.
    degree : float, default 3
        Of the polynomial kernel.  One that is not an integer is scikit-learn's
        polynomial kernel (``pairwise_kernels``).
    coef0 : float, default 1.0
    kernel_params : dict, optional
        Further arguments of a callable or a scikit-learn kernel (scikit-learn's
        parameter); not with fastrbf's kernels.
    fit_intercept : bool, default False
        Fit ``y - mean(y)`` (scikit-learn's ``KernelRidge`` has no intercept).
    solver : {"auto", "cholesky", "nystrom", "nystrom-pcg"}, default "auto"
        As :func:`fastrbf.kernel_ridge`: "auto" factors the n x n matrix while it fits
        comfortably in free memory.
    n_landmarks : int, optional
        Landmarks of "nystrom" and "nystrom-pcg" (default ``min(n, max(1000, 2
        sqrt(n)))``); giving it selects a Nystroem solver under "auto".
    landmarks : {"uniform", "kmeans", "rpcholesky", "auto"}, default "uniform"
        As in :func:`fastrbf.kernel_ridge`.
    tol : float, default 1e-7
        Relative residual at which the conjugate gradients stop.
    max_iter : int, default 100
    random_state : None, int, numpy.random.Generator or RandomState
        Draws the landmarks.
    n_jobs : int, optional
        fastrbf's ``n_threads``.
    length_scale : float or array_like of shape (n_features,), optional
        Per-feature widths (scikit-learn's anisotropic ``length_scale``): each feature is
        divided by its scale before the kernel.

    Attributes
    ----------
    model_ : fastrbf.KernelModel
        (a model of the dual weights with ``kernel="precomputed"``).
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        (n_landmarks rows with "nystrom" and "nystrom-pcg").
    X_fit_ : ndarray of shape (n_samples, n_features), float64, or None
        The training points (the landmarks with a Nystroem solver; a copy of the sparse
        matrix when fitted on ``scipy.sparse`` input; None with ``kernel="precomputed"``:
        the Gram matrix is not kept).
    n_iter_ : int
        Conjugate-gradient iterations; 1 for the direct (Cholesky) solve, as scikit-learn
        asks of every estimator with a ``max_iter`` (``model_.n_iter`` is 0 there).
    %(features_in)s

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import KernelRidge
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> KernelRidge(alpha=0.1, gamma=1.0).fit(X, [0.0, 1.0, 0.0]).predict(X).round(3)
    array([0.038, 0.883, 0.038])
    """

    def __init__(self, alpha=1.0, *, kernel="gaussian", gamma=None, degree=3, coef0=1.0, kernel_params=None,
                 fit_intercept=False, solver="auto", n_landmarks=None, landmarks="uniform", tol=1e-7, max_iter=100,
                 random_state=None, n_jobs=None, length_scale=None):
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.length_scale = length_scale

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> "KernelRidge":
        """Solve for the dual weights.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            (the Gram matrix, (n_samples, n_samples), with ``kernel="precomputed"``)
        y : array_like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : float or array_like of shape (n_samples,), optional
            Weights >= 0, scikit-learn's rule: the same dual weights as the ridge
            ``alpha / sample_weight`` per point (so the exact solver; not with
            ``fit_intercept``).  Points of weight 0 are left out of the fit (their
            dual weights are 0 in scikit-learn), so ``dual_coef_`` and ``X_fit_`` hold the
            others (with ``kernel="precomputed"``, ``dual_coef_`` has their zeros).

        Returns
        -------
        self
        """
        Xv: Any
        Xv, yv = validate_xy(self, X, y, accept_sparse="csr")
        keep, alpha = self._weighted_alpha(Xv, sample_weight)
        if isinstance(self.kernel, str) and self.kernel == "precomputed":
            if is_sparse(Xv):
                return self._fit_precomputed(Xv.toarray(), yv, alpha, keep, owned=True)
            return self._fit_precomputed(Xv, yv, alpha, keep)
        if is_sklearn_kernel(self.kernel, self.degree):
            return self._fit_sklearn_kernel(Xv, yv, alpha, keep)
        check_no_kernel_params(self)
        if is_sparse(Xv):
            return self._fit_sparse(Xv, yv, alpha, keep)
        if keep is not None:
            Xv, yv = Xv[keep], yv[keep]
        kernel, gamma, degree, coef0 = as_dot_product(resolve_kernel(self.kernel), self.gamma, self.degree, self.coef0)
        check_alpha(alpha, Xv.shape[0])
        fit_intercept = _v.check_bool(self.fit_intercept, "fit_intercept")
        coef0 = _v.check_real(coef0, "coef0")
        seed = to_seed(self.random_state)
        gamma = scalar_gamma(default_gamma(gamma, Xv.shape[1]))
        ls, Xk = length_scaled(Xv, self.length_scale)
        check_range(Xk, kernel, gamma, degree, coef0, "gamma")
        # the remedies of a failed factorisation that this estimator offers
        replace = ((', `jitter="auto"`', ""),
                   ("use `rbf_network` with fewer centres for large n", 'use solver="nystrom" for large n'))
        m = call_renamed(kernel_ridge, Xv, yv, gamma=gamma, alpha=alpha, kernel=kernel,
                         fit_intercept=fit_intercept, degree=degree, coef0=coef0, solver=self.solver,
                         n_landmarks=self.n_landmarks, landmarks=self.landmarks, tol=self.tol, max_iter=self.max_iter,
                         seed=seed, n_threads=to_n_threads(self.n_jobs), replace=replace, length_scale=ls,
                         remedy=XY_OVERFLOW + "rescale them, or use a larger `alpha`.")
        self.model_ = m
        self.dual_coef_ = single_column(m, m.weights)
        self.X_fit_ = m.centers
        self.n_iter_ = max(1, m.n_iter)
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The fitted model at the rows of ``X`` (float32 for float32 ``X``).

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
            (the kernel values with the training points, (n_samples, n_train), with
            ``kernel="precomputed"``).  Sparse rows against a model fitted on dense data
            are densified a block of rows at a time.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        Xv: Any = validate_x(self, X, accept_sparse="csr")
        m = self.model_
        if not is_sparse(Xv) or (isinstance(m, GramModel) and m.X_fit is not None):
            return m.predict(Xv, n_threads=self.n_jobs)
        if isinstance(m, GramModel):  # a precomputed kernel given sparse
            return m.predict(Xv.toarray())
        rows = max(1, PREDICT_BLOCK_ELEMENTS // Xv.shape[1])
        return np.concatenate([m.predict(Xv[r0:r0 + rows].toarray(), n_threads=self.n_jobs)
                               for r0 in range(0, Xv.shape[0], rows)])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a precomputed Gram matrix: scikit-learn's cross-validation then takes the
        # training columns of its rows
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        tags.input_tags.sparse = not self._nystrom()
        return tags

    def _nystrom(self):
        """Whether the fit solves on landmarks (a Nystroem solver asked for, or
        ``n_landmarks`` given)."""
        return self.solver in ("nystrom", "nystrom-pcg") or self.n_landmarks is not None

    def _weighted_alpha(self, X, sample_weight):
        """(the rows to keep or None, the ridge per point) for ``sample_weight``."""
        if sample_weight is None:
            return None, self.alpha
        from sklearn.utils.validation import _check_sample_weight

        n = X.shape[0]
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if _v.check_bool(self.fit_intercept, "fit_intercept"):
            raise ValueError("`sample_weight` is not supported with fit_intercept=True; subtract the weighted mean "
                             "of `y` yourself and fit without an intercept.")
        if self._nystrom():
            raise ValueError('`sample_weight` needs the exact solver (solver="auto" or "cholesky"): it makes the '
                             f'ridge one value per point, which solver="{self.solver}" does not take.')
        alpha = np.broadcast_to(np.asarray(check_alpha(self.alpha, n), dtype=np.float64), (n,))
        keep = sw > 0
        if not keep.any():  # (newer scikit-learn's check refuses it already)
            raise ValueError("`sample_weight` must contain at least one non-zero weight.")
        with np.errstate(over="ignore"):
            a = alpha[keep] / sw[keep]
        if not np.all(np.isfinite(a)):
            raise ValueError(f"`alpha` / `sample_weight` overflows float64 (smallest weight > 0: "
                             f"{float(sw[keep].min()):.3g}); use weights of a narrower range, or 0 to leave a point out.")
        return (None if keep.all() else keep), a

    def _fit_sparse(self, X, y, alpha, keep):
        # scipy.sparse X: the Gram matrix by fastrbf.gram's sparse path (X never densified),
        # then the solve of a precomputed kernel; the model keeps the rows for predict
        if self._nystrom():
            raise ValueError('Sparse `X` needs the exact solver (solver="auto" or "cholesky").')
        if keep is not None:
            X, y, keep = X[keep], y[keep], None
        kernel, gamma, degree, coef0 = as_dot_product(resolve_kernel(self.kernel), self.gamma, self.degree, self.coef0)
        gamma = scalar_gamma(default_gamma(gamma, X.shape[1]))
        spec = dict(kernel=kernel, gamma=gamma, degree=degree, coef0=_v.check_real(coef0, "coef0"),
                    length_scale=self.length_scale)
        K = call_renamed(gram, X, **spec, n_threads=to_n_threads(self.n_jobs))
        X_fit = X.copy()  # the model owns its rows
        return self._fit_precomputed(K, y, alpha, keep, X_fit, spec, owned=True)

    def _fit_sklearn_kernel(self, X, y, alpha, keep):
        # a kernel that scikit-learn computes (its rules for the parameters: a callable
        # takes kernel_params only), then the solve of a precomputed kernel
        if self._nystrom():
            raise ValueError(f'kernel={self.kernel!r} (computed by scikit-learn) needs the exact solver '
                             f'(solver="auto" or "cholesky").')
        if self.length_scale is not None:
            raise ValueError(f"`length_scale` is for fastrbf's kernels; got length_scale={self.length_scale!r} with "
                             f"kernel={self.kernel!r}.")
        if keep is not None:
            X, y, keep = X[keep], y[keep], None
        params = sklearn_kernel_params(self, () if callable(self.kernel) else ("gamma", "degree", "coef0"))
        pairwise = functools.partial(sklearn_gram, kernel=self.kernel, kernel_params=params)
        K = pairwise(X, X)
        return self._fit_precomputed(K, y, alpha, keep, X.copy(), pairwise=pairwise, owned=True)

    def _fit_precomputed(self, K, y, alpha, keep, X_fit=None, kernel=None, pairwise=None, owned=False):
        # owned: K is this fit's own array (not the caller's), factored in place
        n = K.shape[0]
        if K.shape[1] != n:
            raise ValueError(f"`X` must be the square Gram matrix of the training points with kernel='precomputed' "
                             f"(n_samples x n_samples); got shape {K.shape}.")
        n_all = n
        if keep is not None:  # the Gram matrix of the points of weight > 0
            K, y = K[np.ix_(keep, keep)], y[keep]
            n = K.shape[0]
            owned = True
        check_alpha(alpha, n)
        fit_intercept = _v.check_bool(self.fit_intercept, "fit_intercept")
        Y = y.reshape(n, -1)
        mean = Y.mean(axis=0, dtype=np.float64) if fit_intercept else np.zeros(Y.shape[1])
        W = call_renamed(solve_regularized, K, Y - mean.astype(Y.dtype), alpha=alpha, overwrite=owned,
                         n_threads=to_n_threads(self.n_jobs), renames={"K": "X"}, replace=((', `jitter="auto"`', ""),),
                         remedy=XY_OVERFLOW + "rescale them, or use a larger `alpha`.")
        if keep is not None:  # the columns of the points left out get weight 0
            full = np.zeros((n_all, W.shape[1]), dtype=W.dtype)
            full[keep] = W
            W = full
        self.model_ = GramModel(np.ascontiguousarray(W), mean, y.ndim == 1, X_fit, kernel or {}, pairwise)
        self.dual_coef_ = W[:, 0] if y.ndim == 1 else W
        self.X_fit_ = X_fit
        self.n_iter_ = 1
        return self


@shared_docs
class KernelRidgeCV(MultiOutputRegressor):
    """Kernel ridge regression with ``gamma`` and ``alpha`` chosen over a grid by
    closed-form leave-one-out (scikit-learn API over :func:`fastrbf.kernel_ridge_cv`):
    one eigendecomposition per ``gamma``, no refit per ``alpha`` or fold.

    Parameters
    ----------
    alphas : sequence of float, default (1e-3, 1e-2, 1e-1, 1.0)
        Candidate ridges, >= 0.
    gammas : sequence of float, optional
        Candidate widths, > 0; default ``1 / n_features`` times (0.1, 1, 10).
    kernel : str, default "gaussian"
        A positive definite kernel of :data:`fastrbf.KERNELS` (or ``"rbf"``).
    criterion : {"loo", "gcv"}, default "loo"
    length_scale : float or array_like of shape (n_features,), optional
        Per-feature widths, as :class:`KernelRidge`.
    n_jobs : int, optional
        fastrbf's ``n_threads``.

    Attributes
    ----------
    model_ : fastrbf.KernelModel
        Fitted with the best pair.
    selection_ : fastrbf.SelectionResult
        Both tables (``loo_mse``, ``gcv``) and the leave-one-out residuals.
    best_gamma_, best_alpha_ : float
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
    %(features_in)s

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import KernelRidgeCV
    >>> X = np.linspace(0, 1, 40)[:, None]
    >>> est = KernelRidgeCV(gammas=[1.0, 10.0, 100.0]).fit(X, np.sin(6 * X[:, 0]))
    >>> est.best_gamma_ in (1.0, 10.0, 100.0), est.selection_.loo_mse.shape
    (True, (3, 4))
    """

    def __init__(self, alphas=(1e-3, 1e-2, 1e-1, 1.0), *, gammas=None, kernel="gaussian", criterion="loo",
                 length_scale=None, n_jobs=None):
        self.alphas = alphas
        self.gammas = gammas
        self.kernel = kernel
        self.criterion = criterion
        self.length_scale = length_scale
        self.n_jobs = n_jobs

    def fit(self, X: ArrayLike, y: ArrayLike) -> "KernelRidgeCV":
        """Compute the tables and fit the best pair.

        %(fit_xy)s
        """
        X, y = validate_xy(self, X, y)
        kernel = resolve_kernel(self.kernel)
        gammas = np.array([0.1, 1.0, 10.0]) / X.shape[1] if self.gammas is None else self.gammas
        ls, Xk = length_scaled(X, self.length_scale)
        try:
            grid = np.atleast_1d(np.asarray(gammas, dtype=float))
        except (TypeError, ValueError):
            grid = np.zeros(0)
        for g in grid if grid.ndim == 1 else ():  # else not a 1-D grid of numbers: kernel_ridge_cv names `gammas`
            if np.isfinite(g) and g > 0:
                check_range(Xk, kernel, float(g), 3, 1.0, "gammas")
        res = call_renamed(kernel_ridge_cv, Xk, y, gamma=gammas, alpha=self.alphas, kernel=kernel, criterion=self.criterion,
                           n_threads=to_n_threads(self.n_jobs), renames={"gamma": "gammas", "alpha": "alphas"},
                           remedy=XY_OVERFLOW + "rescale them, or use larger `alphas`.")
        model = res.model if ls is None else dataclasses.replace(res.model, centers=np.asarray(X, dtype=np.float64),
                                                                 length_scale=ls)
        self.model_ = model
        self.selection_ = res
        self.best_gamma_ = res.best_gamma
        self.best_alpha_ = res.best_alpha
        self.dual_coef_ = single_column(model, model.weights)
        return self


# ---------------------------------------------------------------- interpolation
@shared_docs
class RBFInterpolatorRegressor(MultiOutputRegressor):
    """RBF interpolation as a regressor: SciPy ``RBFInterpolator``'s interpolant
    (scikit-learn API over :func:`fastrbf.interpolate`).

    With ``smoothing=0`` the fit reproduces the training targets exactly.

    Parameters
    ----------
    kernel : str, default "thin_plate_spline"
        A radial kernel of :data:`fastrbf.KERNELS` (SciPy's names).
    epsilon : float, optional
        SciPy's shape parameter: fastrbf's ``gamma = epsilon ** 2``.  Required unless
        the kernel is scale invariant (then 1.0), as in SciPy.
    smoothing : float or array_like of shape (n_samples,), default 0.0
        Added to the diagonal (fastrbf's ``alpha``).
    degree : int, optional
        Degree of the polynomial tail (-1: none); default the kernel's minimum, or 0.
    n_jobs : int, optional
        fastrbf's ``n_threads``.
    length_scale : float or array_like of shape (n_features,), optional
        Per-feature widths, as :class:`KernelRidge` (not with ``neighbors``).
    neighbors : int, optional
        Interpolate each query from its ``neighbors`` nearest training points only
        (SciPy's ``RBFInterpolator(neighbors=...)``, :func:`fastrbf.interpolate`).

    Attributes
    ----------
    model_ : fastrbf.KernelModel or fastrbf.LocalInterpolant
    %(features_in)s

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import RBFInterpolatorRegressor
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])
    >>> y = [0.0, 1.0, 1.0, 2.0, 1.5]
    >>> bool(np.allclose(RBFInterpolatorRegressor().fit(X, y).predict(X), y))
    True
    """

    def __init__(self, kernel="thin_plate_spline", *, epsilon=None, smoothing=0.0, degree=None, n_jobs=None,
                 length_scale=None, neighbors=None):
        self.neighbors = neighbors
        self.kernel = kernel
        self.epsilon = epsilon
        self.smoothing = smoothing
        self.degree = degree
        self.n_jobs = n_jobs
        self.length_scale = length_scale

    def fit(self, X: ArrayLike, y: ArrayLike) -> "RBFInterpolatorRegressor":
        """Solve the interpolation system.

        %(fit_xy)s
        """
        X, y = validate_xy(self, X, y)
        spec = check_kernel(resolve_kernel(self.kernel))
        if not spec.radial:
            radial = sorted(k for k, v in KERNELS.items() if v.radial)
            raise ValueError(f"`kernel` must be a radial kernel for interpolation (one of {radial}); "
                             f"got {self.kernel!r}.")
        eps = self.epsilon
        if eps is None:
            if not spec.scale_invariant:
                raise ValueError(f"`epsilon` must be given for the {spec.name!r} kernel (it is not scale invariant).")
            eps = 1.0
        eps = _v.check_real(eps, "epsilon", low=0, strict=True)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            gamma = float(np.float64(eps) ** 2)
        if not (np.isfinite(gamma) and gamma > 0):
            raise ValueError(f"`epsilon` must be a number whose square is a finite number > 0 (fastrbf's "
                             f"gamma = epsilon ** 2); got {self.epsilon!r}.")
        n, d = X.shape
        ls, Xk = length_scaled(X, self.length_scale)
        check_range(Xk, spec, gamma, 3, 1.0, "epsilon")
        degree = max(spec.min_degree, 0) if self.degree is None else self.degree
        if _v.is_int(degree) and int(degree) >= 0:
            from math import comb

            q = comb(d + int(degree), int(degree))
            if n < q:
                raise ValueError(f"`X` must have at least {q} samples for a polynomial tail of degree {degree} "
                                 f"in {d} dimensions; got n_samples = {n}.")
        neighbors = self.neighbors
        if neighbors is not None:  # SciPy's rule: at most every training point
            neighbors = min(_v.check_int(neighbors, "neighbors", 1), n)
        replace = (("a smoothing `smoothing`", "a `smoothing`"),
                   ("use `rbf_network` with fewer centres for large n", "use an `RBFNetworkRegressor` for large n"))
        self.model_ = call_renamed(interpolate, X, y, kernel=spec if is_user(spec) else spec.name, gamma=gamma,
                                   degree=self.degree, alpha=self.smoothing, n_threads=to_n_threads(self.n_jobs),
                                   length_scale=ls, neighbors=neighbors,
                                   renames={"alpha": "smoothing", "gamma": "epsilon"}, replace=replace,
                                   remedy=XY_OVERFLOW + "rescale them (the kernel grows with the distance), or use another "
                                                        "`epsilon` or a larger `smoothing`.")
        return self

