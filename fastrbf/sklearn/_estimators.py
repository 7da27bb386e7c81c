"""The scikit-learn estimators (re-exported by :mod:`fastrbf.sklearn`, whose docstring gives the conventions)."""

import dataclasses
import numbers
import re
import warnings

import numpy as np

try:
    from sklearn.base import (
        BaseEstimator,
        ClassifierMixin,
        ClassNamePrefixFeaturesOutMixin,
        ClusterMixin,
        RegressorMixin,
        TransformerMixin,
    )
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import kernels as _skk
    from sklearn.utils import check_random_state
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "fastrbf.sklearn needs scikit-learn >= 1.6: install the extra with "
        "`pip install 'fastrbf[sklearn]'`."
    ) from exc

from .. import _threads
from .. import _validation as _v
from .._typing import ArrayLike
from ..approx import nystroem, random_fourier
from ..cluster._kmeans import kmeans, lloyd_assign
from ..distances import sqdist
from ..gp._exact import gaussian_process, gaussian_process_lml, maximise
from ..gp._prml import gp_regression
from ..gp._sklearn_kernels import gp_form
from ..kernels import KERNELS, check_kernel, check_params, gram, is_user
from ..linalg import check_alpha
from ..models import interpolate, kernel_ridge, kernel_ridge_cv, rbf_network
from ..user_kernels import user_kernel

__all__ = [
    "GaussianProcessRegressor",
    "KMeans",
    "KernelRidge",
    "KernelRidgeCV",
    "Nystroem",
    "RBFInterpolatorRegressor",
    "RBFNetworkClassifier",
    "RBFNetworkRegressor",
    "RandomFourierFeatures",
]

_FLOATS = [np.float64, np.float32]
_ALIASES = {"rbf": "gaussian", "poly": "polynomial", "sigmoid": "tanh"}


# ---------------------------------------------------------------- helpers
def _seed(random_state):
    """fastrbf's ``seed`` from scikit-learn's ``random_state``, checked by fastrbf's seed
    rule (:func:`fastrbf._validation.check_seed`) under the name ``random_state``."""
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    try:
        _v.check_seed(random_state, name="random_state")
    except (TypeError, ValueError) as exc:
        raise type(exc)("`random_state` must be None, an int >= 0, a numpy.random.RandomState or a "
                        f"numpy.random.Generator; got {random_state!r}.") from None
    return int(random_state) if isinstance(random_state, numbers.Integral) else random_state


def _n_threads(n_jobs):
    """``n_jobs`` checked by fastrbf's rule (messages naming `n_jobs`), passed as is."""
    try:
        _threads.resolve(n_jobs)
    except (TypeError, ValueError) as exc:
        raise type(exc)(str(exc).replace("`n_threads`", "`n_jobs`")) from None
    return n_jobs


def _verbose(value):
    """scikit-learn's ``verbose`` (an int >= 0, or a bool) as fastrbf's ``progress``:
    ``verbose > 0`` reports on stderr."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return _v.check_int(value, "verbose", 0) > 0


#: fastrbf's names of the parameters that every estimator calls otherwise
_RENAMES = {"seed": "random_state", "n_threads": "n_jobs", "Y": "y"}
_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


def _call(func, *args, renames=None, replace=(), remedy=None, **kwargs):
    """``func(*args, **kwargs)`` whose error messages name the estimator's parameters:
    a backticked fastrbf name in ``_RENAMES`` or ``renames`` becomes the estimator's
    name, and each ``(old, new)`` text of ``replace`` is substituted (remedies that the
    estimator does not offer, for example).  With ``remedy``, a ``ValueError`` that names
    no argument (a solve that met the inf/NaN of an overflow) and non-finite results
    (:func:`_check_overflow`) are reported as an overflow with that remedy."""
    names = {**_RENAMES, **(renames or {})}
    try:
        out = func(*args, **kwargs)
    except (ValueError, TypeError, MemoryError) as exc:  # np.linalg.LinAlgError is a ValueError
        if exc.args and isinstance(exc.args[0], str):
            msg = _NAME.sub(lambda m: f"`{names.get(m.group(1), m.group(1))}`", exc.args[0])
            for old, new in replace:
                msg = msg.replace(old, new)
            if remedy is not None and isinstance(exc, ValueError) and not _NAME.search(msg):
                raise ValueError(_overflow(remedy)) from exc
            exc.args = (msg, *exc.args[1:])
        raise
    if remedy is not None:
        _check_overflow(out, remedy)
    return out


def _check_range(X, kernel, gamma, degree, coef0, scale_name):
    """Refuse data whose kernel values overflow: a growing radial kernel at the diagonal
    of the bounding box of ``X`` (its largest value over pairs of rows, or above), a
    dot-product kernel at +-(the largest squared norm).  Cheap: a 2 x 2 kernel matrix."""
    spec = check_kernel(kernel)
    check_params(spec, degree, coef0)  # `degree`, `coef0` named here: a ValueError of gram below is an overflow
    X = np.asarray(X, dtype=np.float64)
    if spec.radial:
        P = np.stack([X.min(axis=0), X.max(axis=0)])
    else:
        with np.errstate(over="ignore"):
            row = X[int(np.argmax(np.einsum("ij,ij->i", X, X)))]
        P = np.stack([row, -row])
    g = float(np.max(gamma))  # the largest width gives the largest values of a growing kernel
    with np.errstate(all="ignore"):
        try:
            K = gram(P[:1], P, kernel=kernel, gamma=g, degree=degree, coef0=coef0, n_threads=1)
        except ValueError:  # gram refuses kernel values that overflow (its message names its own arguments)
            K = None
    if K is None or not np.all(np.isfinite(K)):
        raise ValueError(f"`X` spans too wide a range for the {spec.name!r} kernel: its values between far-apart "
                         f"points of `X` overflow float64; rescale `X` or use a smaller `{scale_name}`.")


def _overflow(remedy):
    return f"The fit of {remedy}"


_XY = ("`X` and `y` overflowed (the solve met non-finite values): their magnitudes are too extreme for "
       "float64; ")


def _check_overflow(model, remedy):
    """Refuse a fitted model with non-finite weights (so that it never predicts NaN)."""
    for attr in ("weights", "bias", "poly_coef", "intercept", "alpha", "y_mean", "y_std", "normalization"):
        value = getattr(model, attr, None)
        if isinstance(value, (np.ndarray, float)) and not np.all(np.isfinite(value)):
            raise ValueError(_overflow(remedy))


def _scalar_gamma(gamma):
    """One kernel width: a finite number > 0 (None is resolved before this)."""
    if not _v.is_real(gamma):
        raise TypeError(f"`gamma` must be a finite number > 0 (or None); got {gamma!r}.")
    return _v.check_real(gamma, "gamma", low=0, strict=True)


def _kernel(kernel):
    """A built-in kernel's name (aliases resolved), or a user kernel (given by object
    or by name)."""
    if is_user(kernel):
        return kernel
    if isinstance(kernel, str) and kernel not in KERNELS and kernel not in _ALIASES and user_kernel(kernel):
        return user_kernel(kernel)
    name = _v.check_choice(kernel, "kernel", (*KERNELS, *_ALIASES),
                           text=f"one of {sorted(KERNELS)} or an alias {sorted(_ALIASES)}")
    return _ALIASES.get(name, name)


def _gamma(gamma, n_features):
    return 1.0 / n_features if gamma is None else gamma


def _xy(est, X, y, multi_output) -> tuple[np.ndarray, np.ndarray]:
    """Validated (X, y): float32 or float64 ``X``; numeric ``y``, cast to ``X``'s dtype."""
    X, y = validate_data(est, X, y, dtype=_FLOATS, multi_output=multi_output, y_numeric=True)
    return X, np.asarray(y, dtype=X.dtype)


def _fit_x(est, X, **kw) -> np.ndarray:
    """``X`` validated for ``fit`` (records ``n_features_in_``)."""
    return validate_data(est, X, dtype=_FLOATS, **kw)


def _magnitude(X, name="X"):
    """Refuse, before any work, data whose float64 squared distances would overflow
    (the fits compute in float64), in the estimator's name for it."""
    _v.check_magnitude(X, name, np.float64)


def _fit_xy(est, X, y, **kw) -> tuple[np.ndarray, np.ndarray]:
    """``X``, ``y`` validated for ``fit`` (records ``n_features_in_``)."""
    return validate_data(est, X, y, dtype=_FLOATS, **kw)


def _x(est, X, **kw) -> np.ndarray:
    check_is_fitted(est)
    _n_threads(est.n_jobs)
    return validate_data(est, X, dtype=_FLOATS, reset=False, **kw)


class _MultiOutputRegressor(RegressorMixin, BaseEstimator):
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The fitted model (``model_``) at the rows of ``X`` (float32 for float32 ``X``).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        X = _x(self, X)
        return self.model_.predict(X, n_threads=self.n_jobs)


class _DtypeTransformer(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


# ---------------------------------------------------------------- RBF networks
def _fit_network(est, X, Y, classify):
    """(model, k-means iterations): the k-means of ``rbf_network(centers="kmeans")`` is
    run here, with the same arguments on the same float64 data, to report ``n_iter_``.
    Every parameter is checked before the k-means runs."""
    _magnitude(X)
    n, d = X.shape
    ls = _v.check_length_scale(est.length_scale, d)
    Xr = X if ls is None else _v.scale_features(X, ls, np.float64, "X")  # what the kernel sees
    centers = est.centers
    K = est.n_centers
    kernel = _kernel(est.kernel)
    bias = _v.check_bool(est.fit_intercept, "fit_intercept")
    learn_gamma = _v.check_bool(est.learn_gamma, "learn_gamma")
    if learn_gamma and kernel != "gaussian":
        raise ValueError(f"`learn_gamma` needs the 'gaussian' `kernel`; got kernel={est.kernel!r}.")
    nt = _n_threads(est.n_jobs)
    seed = _seed(est.random_state)
    alpha = est.alpha
    if not _v.is_real(alpha):
        raise TypeError(f"`alpha` must be a number; got {alpha!r}.")
    check_alpha(alpha, 1)
    kmeans_centers = isinstance(centers, str) and centers == "kmeans"
    forward = isinstance(centers, str) and centers == "forward"
    if not forward and (est.candidates is not None or est.tol is not None):
        raise ValueError(f'`candidates` and `tol` are used only with centers="forward"; got centers={centers!r}.')
    if kmeans_centers or forward:
        n_c = _v.check_int(K, "n_centers", 1)
        if n_c > n:
            raise ValueError(f"`n_centers` ({K}) must not exceed the number of samples (n_samples = {n}).")
    elif isinstance(centers, str):
        if centers != "all":
            raise ValueError(f'`centers` must be "kmeans", "all", "forward" or an array; got {centers!r}.')
        n_c = n
    else:
        Ca = _v.check_data(centers, "centers")
        _v.check_features(X, Ca, "X", "centers")
        _magnitude(Ca, "centers")
        n_c = Ca.shape[0]
    gamma = _gamma(est.gamma, d)
    if not forward:  # forward selection: one width, or one per candidate (checked by rbf_network)
        _v.check_gamma(gamma, n_c, np.float64)
    _check_range(Xr if kmeans_centers or isinstance(centers, str) else
                 np.vstack([Xr, Ca if ls is None else _v.scale_features(Ca, ls, np.float64, "centers")]), kernel,
                 gamma, 3, 1.0, "gamma")
    n_iter = 0
    if kmeans_centers:
        km = _call(kmeans, np.asarray(Xr, dtype=np.float64), n_c, seed=seed, max_iter=est.max_iter,
                   n_init=est.n_init, n_threads=nt, renames={"n_clusters": "n_centers"},
                   replace=((" (with weight > 0)", ""),))
        centers, n_iter = (km.centers if ls is None else km.centers * ls), km.n_iter
    fwd = {"n_centers": n_c, "candidates": est.candidates, "tol": est.tol, "seed": seed} if forward else {}
    model = _call(rbf_network, X, Y, gamma=gamma, centers=centers, alpha=est.alpha, bias=bias, kernel=kernel,
                  classify=classify, learn_gamma=learn_gamma, n_threads=nt, length_scale=ls, **fwd,
                  renames={"bias": "fit_intercept"}, replace=((" with `classify=True`", ""),),
                  remedy=_XY + "rescale them, or use a larger `alpha`.")
    return model, n_iter


def _network_attributes(est, fitted):
    model, est.n_iter_ = fitted
    est.model_ = model
    est.centers_ = model.centers
    est.gamma_ = model.gamma
    est.coef_ = model.weights[:, 0] if model.single_output else model.weights
    est.intercept_ = model.bias[0] if model.single_output else model.bias
    if model.selection is not None:
        est.selection_ = model.selection
        est.selection_error_ = model.selection_error
        est.n_iter_ = int(model.selection.size)  # the selection's steps


class _NetworkParams:
    """The parameters of both RBF-network estimators (scikit-learn reads them from this
    ``__init__``'s signature)."""

    def __init__(self, n_centers=10, *, gamma=None, alpha=0.0, kernel="gaussian", centers="kmeans",
                 fit_intercept=True, learn_gamma=False, max_iter=300, n_init=1, random_state=None, n_jobs=None,
                 length_scale=None, candidates=None, tol=None):
        self.n_centers = n_centers
        self.gamma = gamma
        self.alpha = alpha
        self.kernel = kernel
        self.centers = centers
        self.fit_intercept = fit_intercept
        self.learn_gamma = learn_gamma
        self.max_iter = max_iter
        self.n_init = n_init
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.length_scale = length_scale
        self.candidates = candidates
        self.tol = tol


class RBFNetworkRegressor(_NetworkParams, _MultiOutputRegressor):
    """RBF network regression (scikit-learn API over :func:`fastrbf.rbf_network`).

    ``f(x) = sum_j w_j phi(||x - c_j||^2; gamma_j) + b`` with ``n_centers`` k-means
    centres and least-squares (``alpha = 0``) or ridge output weights.

    Parameters
    ----------
    n_centers : int, default 10
        Number of k-means centres (``<= n_samples``), or the most centres forward
        selection picks; ignored for ``centers="all"`` or an array.
    gamma : float or array_like of shape (n_centers,), optional
        Width(s); default ``1 / n_features``.
    alpha : float, default 0.0
        Ridge on the output weights (not the bias).
    kernel : str, default "gaussian"
        A name of :data:`fastrbf.KERNELS` (or ``"rbf"``, ``"poly"``, ``"sigmoid"``).
    centers : "kmeans", "all", "forward" or array_like of shape (K, n_features), default "kmeans"
        ``"forward"``: orthogonal-least-squares forward selection among ``candidates``
        (see :func:`fastrbf.rbf_network`).
    fit_intercept : bool, default True
        Fit a bias (fastrbf's ``bias``).
    learn_gamma : bool, default False
        Learn the width from ``gamma`` on (see :func:`fastrbf.rbf_network`).
    max_iter, n_init : int
        Of the k-means that places the centres.
    random_state : None, int, RandomState or Generator
        fastrbf's ``seed`` (see the module notes).
    n_jobs : int, optional
        fastrbf's ``n_threads`` (None: all cores or the :func:`fastrbf.threads` block).

    length_scale : float or array_like of shape (n_features,), optional
        Per-feature widths (scikit-learn's anisotropic ``length_scale``): each feature is
        divided by its scale before the kernel.
    candidates : None, "all", int or array_like, optional
        With ``centers="forward"``: the candidate centres (see :func:`fastrbf.rbf_network`).
    tol : float, optional
        With ``centers="forward"``: stop once the relative training error is below it.

    Attributes
    ----------
    model_ : fastrbf.RBFNetwork
    centers_ : ndarray of shape (K, n_features)
    gamma_ : ndarray of shape (K,)
    coef_ : ndarray of shape (K,) or (K, n_outputs)
    intercept_ : float or ndarray of shape (n_outputs,)
    n_iter_ : int
        Iterations of the k-means that placed the centres, or the steps of forward
        selection (one per centre); 0 for given or all centres.
    selection_, selection_error_ : ndarrays, with ``centers="forward"``
        The chosen candidates in order, and the relative training error after each.
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had column names

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import RBFNetworkRegressor
    >>> X = np.linspace(0, 1, 50)[:, None]
    >>> reg = RBFNetworkRegressor(n_centers=8, gamma=20.0, random_state=0).fit(X, np.sin(4 * X[:, 0]))
    >>> bool(reg.score(X, np.sin(4 * X[:, 0])) > 0.99), reg.coef_.shape
    (True, (8,))
    """

    def fit(self, X: ArrayLike, y: ArrayLike) -> "RBFNetworkRegressor":
        """Place the centres and solve for the output weights.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        X, y = _xy(self, X, y, multi_output=True)
        _network_attributes(self, _fit_network(self, X, y, classify=False))
        return self


class RBFNetworkClassifier(_NetworkParams, ClassifierMixin, BaseEstimator):
    """RBF network classification (scikit-learn API over ``rbf_network(classify=True)``).

    Two classes: least squares on -1/+1 targets and the sign (the second class of
    ``classes_`` is positive); more: one-vs-rest and the largest score.

    Parameters
    ----------
    n_centers, gamma, alpha, kernel, centers, fit_intercept, learn_gamma, max_iter, n_init, random_state, n_jobs :
        As :class:`RBFNetworkRegressor`.

    length_scale : float or array_like of shape (n_features,), optional
        Per-feature widths (scikit-learn's anisotropic ``length_scale``): each feature is
        divided by its scale before the kernel.
    candidates : None, "all", int or array_like, optional
        With ``centers="forward"``: the candidate centres (see :func:`fastrbf.rbf_network`).
    tol : float, optional
        With ``centers="forward"``: stop once the relative training error is below it.

    Attributes
    ----------
    model_ : fastrbf.RBFNetwork
    classes_ : ndarray of shape (n_classes,)
    centers_, gamma_, coef_, intercept_, n_iter_, selection_, selection_error_ :
        As :class:`RBFNetworkRegressor` (one output column per one-vs-rest score).
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had column names

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import RBFNetworkClassifier
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> clf = RBFNetworkClassifier(centers="all", gamma=1.0).fit(X, ["a", "b", "b", "a"])
    >>> clf.predict(X).tolist(), clf.classes_.tolist()
    (['a', 'b', 'b', 'a'], ['a', 'b'])
    """

    def fit(self, X: ArrayLike, y: ArrayLike) -> "RBFNetworkClassifier":
        """Place the centres and solve for the weights of the class scores.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
        """
        X, y = _fit_xy(self, X, y)
        check_classification_targets(y)
        _network_attributes(self, _fit_network(self, X, y, classify=True))
        self.classes_ = self.model_.classes
        return self

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Class scores: shape (n_samples,) for two classes (> 0: ``classes_[1]``),
        else (n_samples, n_classes).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        X = _x(self, X)
        return self.model_.decision_function(X, n_threads=self.n_jobs)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Class labels of the rows of ``X``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = _x(self, X)
        return self.model_.predict(X, n_threads=self.n_jobs)


# ---------------------------------------------------------------- kernel ridge
class KernelRidge(_MultiOutputRegressor):
    """Kernel ridge regression (scikit-learn API over :func:`fastrbf.kernel_ridge`).

    Dual weights ``(K + alpha I)^-1 y``, the Gram matrix built and factored in place; for
    large ``n_samples``, Nystroem kernel ridge by Falkon's preconditioned conjugate
    gradients (``solver="nystrom-pcg"``, no n x n matrix; see :func:`fastrbf.kernel_ridge`).

    Parameters
    ----------
    alpha : float or array_like of shape (n_samples,), default 1.0
        Ridge added to the diagonal: one value, or one per training point (fastrbf's
        rule; scikit-learn's array ``alpha`` is one per target).
    kernel : str, default "gaussian"
        A name of :data:`fastrbf.KERNELS` (or ``"rbf"``, ``"poly"``, ``"sigmoid"``);
        positive definite.
    gamma : float, optional
        Default ``1 / n_features``.
    degree : int, default 3
    coef0 : float, default 1.0
    fit_intercept : bool, default False
        Fit ``y - mean(y)`` (scikit-learn's ``KernelRidge`` has no intercept).
    solver : {"auto", "cholesky", "nystrom-pcg"}, default "auto"
        As :func:`fastrbf.kernel_ridge`: "auto" factors the n x n matrix while it fits
        comfortably in free memory.
    n_landmarks : int, optional
        Landmarks of "nystrom-pcg" (default ``min(n, max(1000, 2 sqrt(n)))``); giving it
        selects "nystrom-pcg" under "auto".
    landmarks : {"uniform", "kmeans"}, default "uniform"
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
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        (n_landmarks rows with "nystrom-pcg").
    X_fit_ : ndarray of shape (n_samples, n_features), float64
        The training points (the landmarks with "nystrom-pcg").
    n_iter_ : int
        Conjugate-gradient iterations; 1 for the direct (Cholesky) solve, as scikit-learn
        asks of every estimator with a ``max_iter`` (``model_.n_iter`` is 0 there).
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had column names

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import KernelRidge
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> KernelRidge(alpha=0.1, gamma=1.0).fit(X, [0.0, 1.0, 0.0]).predict(X).round(3)
    array([0.038, 0.883, 0.038])
    """

    def __init__(self, alpha=1.0, *, kernel="gaussian", gamma=None, degree=3, coef0=1.0, fit_intercept=False,
                 solver="auto", n_landmarks=None, landmarks="uniform", tol=1e-7, max_iter=100, random_state=None,
                 n_jobs=None, length_scale=None):
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.length_scale = length_scale

    def fit(self, X: ArrayLike, y: ArrayLike) -> "KernelRidge":
        """Solve for the dual weights.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        X, y = _xy(self, X, y, multi_output=True)
        _magnitude(X)
        kernel = _kernel(self.kernel)
        check_alpha(self.alpha, X.shape[0])
        fit_intercept = _v.check_bool(self.fit_intercept, "fit_intercept")
        coef0 = _v.check_real(self.coef0, "coef0")
        seed = _seed(self.random_state)
        gamma = _scalar_gamma(_gamma(self.gamma, X.shape[1]))
        ls = _v.check_length_scale(self.length_scale, X.shape[1])
        _check_range(X if ls is None else _v.scale_features(X, ls, np.float64, "X"), kernel, gamma, self.degree, coef0,
                     "gamma")
        # the remedies of a failed factorisation that this estimator offers
        replace = ((', `jitter="auto"`', ""),
                   ("use `rbf_network` with fewer centres for large n", 'use solver="nystrom-pcg" for large n'))
        m = _call(kernel_ridge, X, y, gamma=gamma, alpha=self.alpha, kernel=kernel,
                  fit_intercept=fit_intercept, degree=self.degree, coef0=coef0, solver=self.solver,
                  n_landmarks=self.n_landmarks, landmarks=self.landmarks, tol=self.tol, max_iter=self.max_iter,
                  seed=seed, n_threads=_n_threads(self.n_jobs), replace=replace, length_scale=ls,
                  remedy=_XY + "rescale them, or use a larger `alpha`.")
        self.model_ = m
        self.dual_coef_ = m.weights[:, 0] if m.single_output else m.weights
        self.X_fit_ = m.centers
        self.n_iter_ = max(1, m.n_iter)
        return self


class KernelRidgeCV(_MultiOutputRegressor):
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
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had column names

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

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        X, y = _xy(self, X, y, multi_output=True)
        _magnitude(X)
        kernel = _kernel(self.kernel)
        gammas = np.array([0.1, 1.0, 10.0]) / X.shape[1] if self.gammas is None else self.gammas
        ls = _v.check_length_scale(self.length_scale, X.shape[1])
        Xk = X if ls is None else _v.scale_features(X, ls, np.float64, "X")
        for g in np.atleast_1d(np.asarray(gammas, dtype=float)):
            if np.isfinite(g) and g > 0:
                _check_range(Xk, kernel, float(g), 3, 1.0, "gammas")
        res = _call(kernel_ridge_cv, Xk, y, gamma=gammas, alpha=self.alphas, kernel=kernel, criterion=self.criterion,
                    n_threads=_n_threads(self.n_jobs), renames={"gamma": "gammas", "alpha": "alphas"},
                    remedy=_XY + "rescale them, or use larger `alphas`.")
        model = res.model if ls is None else dataclasses.replace(res.model, centers=np.asarray(X, dtype=np.float64),
                                                                 length_scale=ls)
        self.model_ = model
        self.selection_ = res
        self.best_gamma_ = res.best_gamma
        self.best_alpha_ = res.best_alpha
        self.dual_coef_ = model.weights[:, 0] if model.single_output else model.weights
        return self


# ---------------------------------------------------------------- interpolation
class RBFInterpolatorRegressor(_MultiOutputRegressor):
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
        Per-feature widths (scikit-learn's anisotropic ``length_scale``): each feature is
        divided by its scale before the kernel.
    Attributes
    ----------
    model_ : fastrbf.KernelModel
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had column names

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
                 length_scale=None):
        self.kernel = kernel
        self.epsilon = epsilon
        self.smoothing = smoothing
        self.degree = degree
        self.n_jobs = n_jobs
        self.length_scale = length_scale

    def fit(self, X: ArrayLike, y: ArrayLike) -> "RBFInterpolatorRegressor":
        """Solve the interpolation system.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        X, y = _xy(self, X, y, multi_output=True)
        _magnitude(X)
        spec = check_kernel(_kernel(self.kernel))
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
        ls = _v.check_length_scale(self.length_scale, d)
        _check_range(X if ls is None else _v.scale_features(X, ls, np.float64, "X"), spec, gamma, 3, 1.0, "epsilon")
        degree = max(spec.min_degree, 0) if self.degree is None else self.degree
        if _v.is_int(degree) and int(degree) >= 0:
            from math import comb

            q = comb(d + int(degree), int(degree))
            if n < q:
                raise ValueError(f"`X` must have at least {q} samples for a polynomial tail of degree {degree} "
                                 f"in {d} dimensions; got n_samples = {n}.")
        replace = (("a smoothing `smoothing`", "a `smoothing`"),
                   ("use `rbf_network` with fewer centres for large n", "use an `RBFNetworkRegressor` for large n"))
        self.model_ = _call(interpolate, X, y, kernel=spec if is_user(spec) else spec.name, gamma=gamma, degree=self.degree,
                            alpha=self.smoothing, n_threads=_n_threads(self.n_jobs), length_scale=ls,
                            renames={"alpha": "smoothing", "gamma": "epsilon"}, replace=replace,
                            remedy=_XY + "rescale them (the kernel grows with the distance), or use another "
                                         "`epsilon` or a larger `smoothing`.")
        return self


# ---------------------------------------------------------------- k-means
class KMeans(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """k-means by Lloyd's algorithm (scikit-learn API over :func:`fastrbf.kmeans`).

    Parameters
    ----------
    n_clusters : int, default 8
    init : {"k-means++", "random"} or array_like of shape (n_clusters, n_features)
    n_init : int, default 1
        Restarts (the lowest inertia is kept); scikit-learn's ``"auto"`` is 1 for
        k-means++.
    max_iter : int, default 300
    tol : float, default 1e-4
        Relative to the mean variance of the features (scikit-learn's scaling).
    random_state : None, int, RandomState or Generator
        fastrbf's ``seed``.
    n_jobs : int, optional
        fastrbf's ``n_threads``.
    verbose : int, default 0
        > 0: report the seeding and the Lloyd iterations of each init on stderr
        (``progress=True`` of :func:`fastrbf.kmeans`: one line updated in place on a
        terminal, else a line a second).

    Attributes
    ----------
    model_ : fastrbf.KMeansResult
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        float32 when ``X`` was float32.
    labels_ : ndarray of shape (n_samples,), int64
    inertia_ : float
    n_iter_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had column names

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import KMeans
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    >>> km = KMeans(2, random_state=0).fit(X)
    >>> sorted(km.cluster_centers_.tolist()), km.inertia_
    ([[0.0, 0.5], [10.0, 0.5]], 1.0)
    >>> bool(km.predict([[9.0, 0.0]])[0] == km.labels_[2])
    True
    """

    def __init__(self, n_clusters=8, *, init="k-means++", n_init=1, max_iter=300, tol=1e-4, random_state=None,
                 n_jobs=None, verbose=0):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.sparse = True
        return tags

    def fit(self, X: ArrayLike, y: object = None) -> "KMeans":
        """Cluster ``X``.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
            Sparse data is used as CSR, never densified.
        y : ignored

        Returns
        -------
        self
        """
        X = _fit_x(self, X, accept_sparse="csr")
        n = X.shape[0]
        K = self.n_clusters
        if _v.is_int(K) and K > n:
            raise ValueError(f"`n_clusters` ({K}) must not exceed the number of samples (n_samples = {n}).")
        res = _call(kmeans, X, K, init=self.init, n_init=self.n_init, max_iter=self.max_iter, tol=self.tol,
                    seed=_seed(self.random_state), n_threads=_n_threads(self.n_jobs), progress=_verbose(self.verbose))
        self.model_ = res
        self.cluster_centers_ = res.centers
        self.labels_ = res.labels
        self.inertia_ = res.inertia
        self.n_iter_ = res.n_iter
        self._n_features_out = res.centers.shape[0]
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Index of the nearest centre of each row of ``X`` (ties: lowest index).

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,), int64
        """
        return lloyd_assign(_x(self, X, accept_sparse="csr"), self.cluster_centers_, n_threads=self.n_jobs)[0]

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Euclidean distances of the rows of ``X`` to the centres (as scikit-learn).

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
            Sparse rows: by the expanded form ``||x||^2 - 2 x.c + ||c||^2`` in float64
            (as scikit-learn), clamped at 0.

        Returns
        -------
        ndarray of shape (n_samples, n_clusters)
        """
        Xv = _x(self, X, accept_sparse="csr")
        if not isinstance(Xv, np.ndarray):  # CSR
            C = np.asarray(self.cluster_centers_, dtype=np.float64)
            X64 = Xv.astype(np.float64)
            D = np.asarray(X64.multiply(X64).sum(axis=1)) - 2.0 * np.asarray(X64 @ C.T) + np.einsum("ij,ij->i", C, C)
            np.maximum(D, 0.0, out=D)
            return np.sqrt(D, out=D).astype(_v.result_dtype(Xv, self.cluster_centers_), copy=False)
        D = sqdist(Xv, self.cluster_centers_, n_threads=self.n_jobs)
        return np.sqrt(D, out=D)

    def score(self, X: ArrayLike, y: object = None) -> float:
        """Opposite of the inertia of ``X`` on the fitted centres.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        float
        """
        d2 = lloyd_assign(_x(self, X, accept_sparse="csr"), self.cluster_centers_, n_threads=self.n_jobs)[1]
        return -float(np.sum(d2, dtype=np.float64))


# ---------------------------------------------------------------- feature maps
class RandomFourierFeatures(_DtypeTransformer):
    """Random Fourier features of the Gaussian kernel (scikit-learn API over
    :func:`fastrbf.random_fourier`; scikit-learn's ``RBFSampler``).

    Parameters
    ----------
    gamma : float, default 1.0
    n_components : int, default 100
    kind : {"cos", "cos_sin"}, default "cos"
    random_state : None, int, RandomState or Generator
        fastrbf's ``seed``.
    n_jobs : int, optional
        fastrbf's ``n_threads``.

    Attributes
    ----------
    model_ : fastrbf.RandomFourierMap
        float32 when fitted on float32 ``X``.
    random_weights_ : ndarray of shape (n_features, n_frequencies)
    random_offset_ : ndarray of shape (n_components,) or (0,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had column names

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import RandomFourierFeatures
    >>> X = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    >>> Z = RandomFourierFeatures(gamma=0.5, n_components=20, random_state=0).fit_transform(X)
    >>> Z.shape, Z.dtype
    ((5, 20), dtype('float32'))
    """

    def __init__(self, *, gamma=1.0, n_components=100, kind="cos", random_state=None, n_jobs=None):
        self.gamma = gamma
        self.n_components = n_components
        self.kind = kind
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X: ArrayLike, y: object = None) -> "RandomFourierFeatures":
        """Draw the map for ``X``'s number of features (the values of ``X`` are not used).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = _fit_x(self, X)
        _n_threads(self.n_jobs)
        seed = _seed(self.random_state)
        D = self.n_components
        if _v.is_int(D) and int(D) > 0:
            d = X.shape[1]
            _v.check_memory(X.dtype.itemsize * int(D) * (d + 1), f"RandomFourierFeatures: the {d} x {D} random weights",
                            "use fewer `n_components`.")
        m = _call(random_fourier, X.shape[1], self.n_components, gamma=self.gamma, seed=seed, kind=self.kind,
                  dtype=X.dtype)
        self.model_ = m
        self.random_weights_ = m.weights
        self.random_offset_ = m.offset
        self._n_features_out = m.n_components
        return self

    def transform(self, X: ArrayLike) -> np.ndarray:
        """The features of the rows of ``X`` (float32 for float32 ``X`` and map).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        X = _x(self, X)
        return self.model_.transform(X, n_threads=self.n_jobs)


class Nystroem(_DtypeTransformer):
    """Nystroem kernel feature map (scikit-learn API over :func:`fastrbf.nystroem`).

    Parameters
    ----------
    kernel : str, default "gaussian"
        A name of :data:`fastrbf.KERNELS` (or ``"rbf"``, ``"poly"``, ``"sigmoid"``).
    gamma : float, optional
        Default ``1 / n_features``.
    n_components : int, default 100
        Number of landmarks; at most ``n_samples`` are used (``n_components_``).
    method : {"random", "kmeans"}, default "random"
        Landmarks: distinct random rows of ``X`` (scikit-learn's choice) or k-means
        centres.
    alpha : float, default 0.0
        Added to the diagonal of ``K(L, L)``.
    degree : int, default 3
    coef0 : float, default 1.0
    random_state : None, int, RandomState or Generator
        fastrbf's ``seed``.
    n_jobs : int, optional
        fastrbf's ``n_threads``.

    Attributes
    ----------
    model_ : fastrbf.NystroemMap
    components_ : ndarray of shape (n_components_, n_features)
        The landmarks.
    normalization_ : ndarray of shape (n_components_, n_components_)
    n_components_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had column names

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram
    >>> from fastrbf.sklearn import Nystroem
    >>> X = np.random.default_rng(0).standard_normal((30, 2))
    >>> Z = Nystroem(gamma=0.5, n_components=30).fit_transform(X)
    >>> bool(np.abs(Z @ Z.T - gram(X, gamma=0.5)).max() < 1e-8)
    True
    """

    def __init__(self, kernel="gaussian", *, gamma=None, n_components=100, method="random", alpha=0.0, degree=3,
                 coef0=1.0, random_state=None, n_jobs=None):
        self.kernel = kernel
        self.gamma = gamma
        self.n_components = n_components
        self.method = method
        self.alpha = alpha
        self.degree = degree
        self.coef0 = coef0
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X: ArrayLike, y: object = None) -> "Nystroem":
        """Choose the landmarks and compute the normalisation.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = _fit_x(self, X)
        _magnitude(X)
        m = min(_v.check_int(self.n_components, "n_components", 1), X.shape[0])
        kernel = _kernel(self.kernel)
        coef0 = _v.check_real(self.coef0, "coef0")
        gamma = _scalar_gamma(_gamma(self.gamma, X.shape[1]))
        _check_range(X, kernel, gamma, self.degree, coef0, "gamma")
        ny = _call(nystroem, X, m, kernel=kernel, gamma=gamma, alpha=self.alpha, method=self.method,
                   seed=_seed(self.random_state), n_threads=_n_threads(self.n_jobs), degree=self.degree, coef0=coef0,
                   renames={"landmarks": "n_components", "n_clusters": "n_components"},
                   replace=((" (with weight > 0)", ""),),
                   remedy="`X` overflowed (the eigendecomposition met non-finite values): its magnitudes are too "
                          "extreme for float64; rescale it, or use a smaller `gamma`.")
        self.model_ = ny
        self.components_ = ny.landmarks
        self.normalization_ = ny.normalization
        self.n_components_ = self._n_features_out = ny.n_components
        return self

    def transform(self, X: ArrayLike) -> np.ndarray:
        """The features ``K(X, L) K(L, L)^{-1/2}`` (float32 for float32 ``X``).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components_)
        """
        X = _x(self, X)
        return self.model_.transform(X, n_threads=self.n_jobs)


# ---------------------------------------------------------------- Gaussian process
class GaussianProcessRegressor(RegressorMixin, BaseEstimator):
    """Gaussian-process regression: scikit-learn's ``GaussianProcessRegressor`` given a
    kernel object (over :func:`fastrbf.gaussian_process`), or PRML's GP given a name
    (over :func:`fastrbf.gp_regression`).

    Parameters
    ----------
    kernel : scikit-learn kernel, None, "gaussian" or "prml"; default "gaussian"
        A kernel object (``sklearn.gaussian_process.kernels``) of the form
        ``ConstantKernel * K [+ ConstantKernel] [+ WhiteKernel]``, ``K`` one of ``RBF``
        (one length scale or one per feature), ``Matern(nu=0.5 | 1.5 | 2.5 | inf)`` and
        ``RationalQuadratic`` with a fixed ``alpha``: then the parameters, fitted
        attributes and methods are scikit-learn's (``alpha``, ``kernel_``, ``L_``,
        ``alpha_``, ``X_train_``, ``y_train_``, ``log_marginal_likelihood``,
        ``predict(return_std | return_cov)``, ``sample_y``), the hyperparameters, their
        bounds and what is fixed are the kernel's, and ``theta``, ``noise`` and ``bounds``
        are not used.  None is scikit-learn's default, ``ConstantKernel() * RBF()``.
        Any other kernel object is a ``ValueError``.
        A name: ``t0 exp(-t1/2 r^2)`` (``"gaussian"``) or PRML's
        ``t0 exp(-t1/2 r^2) + t2 + t3 x.y`` (``"prml"``); plus the noise variance.
    theta : array_like, optional
        With a name: starting (with ``optimizer=None``: fixed) kernel parameters;
        default all 1.
    noise : float, default 1e-2
        With a name: starting (or fixed) noise variance (scikit-learn's ``WhiteKernel``).
    alpha : float, default 1e-10
        With a kernel object: added to the diagonal of the training covariance
        (scikit-learn's ``alpha``; a number, not one per sample).
    optimizer : "fmin_l_bfgs_b" or None, default "fmin_l_bfgs_b"
        Maximise the log marginal likelihood (L-BFGS-B in log space), or keep
        the hyperparameters.
    n_restarts_optimizer : int, default 0
        Further starts drawn log-uniformly inside the bounds.
    bounds : array_like of shape (len(theta) + 1, 2), optional
        With a name: of ``(theta..., noise)``; default ``(1e-5, 1e5)`` each.
    normalize_y : bool, default False
    random_state : None, int, RandomState or Generator
        For the restarts.
    n_jobs : int, optional
        fastrbf's ``n_threads``.

    Attributes
    ----------
    model_ : fastrbf.GaussianProcess (kernel object) or fastrbf.GPModel (name)
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
    >>> gp = GaussianProcessRegressor(theta=[1.0, 10.0], noise=1e-4, optimizer=None).fit(X, np.sin(3 * X[:, 0]))
    >>> mean, std = gp.predict([[0.5]], return_std=True)
    >>> bool(abs(mean[0] - np.sin(1.5)) < 1e-3), bool(0 < std[0] < 0.03)
    (True, True)

    With scikit-learn's kernel objects:

    >>> from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
    >>> k = ConstantKernel() * Matern(length_scale=[1.0], nu=2.5) + WhiteKernel(1e-3)
    >>> gp = GaussianProcessRegressor(k, random_state=0).fit(X, np.sin(3 * X[:, 0]))
    >>> mean, cov = gp.predict(X[:3], return_cov=True)
    >>> cov.shape, gp.sample_y(X[:3], 4).shape
    ((3, 3), (3, 4))
    """

    def __init__(self, kernel="gaussian", *, theta=None, noise=1e-2, alpha=1e-10, optimizer="fmin_l_bfgs_b",
                 n_restarts_optimizer=0, bounds=None, normalize_y=False, random_state=None, n_jobs=None):
        self.kernel = kernel
        self.theta = theta
        self.noise = noise
        self.alpha = alpha
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.bounds = bounds
        self.normalize_y = normalize_y
        self.random_state = random_state
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
        X, y = _fit_xy(self, X, y, y_numeric=True)
        _magnitude(X)
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
        seed = _seed(self.random_state)
        renames = {"theta0": "theta", "n_restarts": "n_restarts_optimizer", "alpha": "noise"}
        replace = (("(theta0..., noise)", "(theta..., noise)"), (', `jitter="auto"`', ""),
                   ("Every optimiser start failed: the covariance was not positive definite.",
                    "Every optimiser start failed: the covariance was not positive definite, or the likelihood "
                    "overflowed. Remedies: `normalize_y`=True for targets of extreme magnitude, a larger `noise` "
                    "or narrower `bounds`."))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            m = _call(gp_regression, X, y, kernel=self.kernel, theta0=self.theta, noise=self.noise,
                      optimize=self.optimizer is not None, n_restarts=self.n_restarts_optimizer, bounds=self.bounds,
                      seed=seed, normalize_y=normalize_y, n_threads=_n_threads(self.n_jobs), renames=renames,
                      replace=replace, remedy=_XY + "rescale them, use `normalize_y`=True or a larger `noise`.")
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
        X, y = _fit_xy(self, X, y, y_numeric=True, multi_output=True)
        _magnitude(X)
        _v.check_choice(self.optimizer, "optimizer", ("fmin_l_bfgs_b", None), text="'fmin_l_bfgs_b' or None")
        for name in ("theta", "bounds"):
            if getattr(self, name) is not None:
                raise ValueError(f"`{name}` is for kernel='gaussian' or 'prml'; a kernel object carries its own "
                                 f"hyperparameters and bounds; got {name}={getattr(self, name)!r}.")
        jitter = _v.check_real(self.alpha, "alpha", low=0)
        normalize_y = _v.check_bool(self.normalize_y, "normalize_y")
        n_restarts = _v.check_int(self.n_restarts_optimizer, "n_restarts_optimizer", 0)
        rng = check_random_state(self.random_state)
        nt = _n_threads(self.n_jobs)
        kernel = _skk.ConstantKernel() * _skk.RBF() if self.kernel is None else self.kernel
        form = gp_form(kernel)
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
                    raise ValueError("`n_restarts_optimizer` > 0 needs finite bounds of every hyperparameter.")
                starts += [rng.uniform(bounds[:, 0], bounds[:, 1]) for _ in range(n_restarts)]
            # not positive definite at theta (a ValueError): scikit-learn's -inf
            best = maximise(lambda t: self._lml(X, Yn, form, kernel.clone_with_theta(t), jitter, nt), starts, bounds,
                            ValueError)
            if best is None:
                raise ValueError("Every optimiser start failed: the covariance was not positive definite. Remedies: a "
                                 "larger `alpha`, a WhiteKernel in `kernel`, or `normalize_y`=True.")
            kernel_ = kernel.clone_with_theta(best)
        m = _call(gaussian_process, X, y, **form.values(kernel_), jitter=jitter, optimize=False,
                  normalize_y=normalize_y, n_threads=nt, renames={"noise": "kernel", "jitter": "alpha"},
                  replace=(("use a larger `kernel`", "use a larger `alpha` or a WhiteKernel in `kernel`"),))
        self.model_ = m
        self.kernel_ = kernel_
        self._form = form
        self.X_train_ = m.X_train
        self.y_train_ = Yn
        self.L_ = m.factor
        self.alpha_ = m.alpha
        self.log_marginal_likelihood_value_ = m.log_marginal_likelihood_value
        self._dtype = X.dtype
        return self

    def _lml(self, X, Yn, form, kernel, jitter, n_threads):
        """(log marginal likelihood, its gradient in ``kernel.theta``) of normalised targets."""
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
            Accepted for scikit-learn's signature: ``kernel_`` is never modified.

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
                raise ValueError("`eval_gradient` needs a `theta`.")
            return self.log_marginal_likelihood_value_
        k = self.kernel_.clone_with_theta(np.asarray(theta, dtype=np.float64))
        try:
            value, grad = self._lml(self.X_train_, self.y_train_, self._form, k, self.model_.jitter, self.n_jobs)
        except ValueError:  # not positive definite: scikit-learn's -inf
            return (-np.inf, np.zeros(k.n_dims)) if want else -np.inf
        return (value, grad) if want else value

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
        Xv = _x(self, X)
        if not hasattr(self, "kernel_"):
            raise AttributeError("`sample_y` needs a model fitted with a scikit-learn kernel object.")
        return _call(self.model_.sample_y, Xv, n_samples, seed=_seed(random_state), n_threads=self.n_jobs)

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
        Xv = _x(self, X)
        dtype = _v.result_dtype(Xv, self._dtype)
        if hasattr(self, "kernel_"):
            out = _call(self.model_.predict, Xv, return_std=return_std, return_cov=return_cov, n_threads=self.n_jobs)
            return tuple(o.astype(dtype, copy=False) for o in out) if isinstance(out, tuple) else \
                out.astype(dtype, copy=False)
        if return_cov:
            raise ValueError("`return_cov` needs a model fitted with a scikit-learn kernel object.")
        if not return_std:
            return self.model_.predict(Xv, n_threads=self.n_jobs).astype(dtype, copy=False)
        p = self.model_.predict(Xv, return_var=True, n_threads=self.n_jobs)
        return p.mean.astype(dtype, copy=False), np.sqrt(p.var).astype(dtype, copy=False)
