"""The RBF-network estimators: :class:`RBFNetworkRegressor` and :class:`RBFNetworkClassifier`
(:func:`fastrbf.rbf_network`)."""


import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from .. import _validation as _v
from .._typing import ArrayLike
from ..cluster._kmeans import kmeans
from ..linalg import check_alpha
from ..models import rbf_network
from ._base import (
    XY_OVERFLOW,
    MultiOutputRegressor,
    call_renamed,
    check_magnitude,
    check_range,
    default_gamma,
    length_scaled,
    resolve_kernel,
    shared_docs,
    single_column,
    to_n_threads,
    to_seed,
    validate_fit_xy,
    validate_x,
    validate_xy,
)


def _fit_network(est, X, Y, classify):
    """(model, k-means iterations) of a fit on validated ``X`` (its magnitude checked by
    the caller): the k-means of ``rbf_network(centers="kmeans")`` is run here, with the
    same arguments on the same float64 data, to report ``n_iter_``.
    Every parameter is checked before the k-means runs."""
    n, d = X.shape
    ls, Xr = length_scaled(X, est.length_scale)  # Xr: what the kernel sees
    centers = est.centers
    K = est.n_centers
    kernel = resolve_kernel(est.kernel)
    bias = _v.check_bool(est.fit_intercept, "fit_intercept")
    learn_gamma = _v.check_bool(est.learn_gamma, "learn_gamma")
    if learn_gamma and kernel != "gaussian":
        raise ValueError(f"`learn_gamma` needs the 'gaussian' `kernel`; got kernel={est.kernel!r}.")
    nt = to_n_threads(est.n_jobs)
    seed = to_seed(est.random_state)
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
        check_magnitude(Ca, "centers")
        n_c = Ca.shape[0]
    gamma = default_gamma(est.gamma, d)
    if not forward:  # forward selection: one width, or one per candidate (checked by rbf_network)
        _v.check_gamma(gamma, n_c, np.float64)
    check_range(Xr if kmeans_centers or isinstance(centers, str) else
                np.vstack([Xr, Ca if ls is None else _v.scale_features(Ca, ls, np.float64, "centers")]), kernel,
                gamma, 3, 1.0, "gamma")
    n_iter = 0
    if kmeans_centers:
        km = call_renamed(kmeans, np.asarray(Xr, dtype=np.float64), n_c, seed=seed, max_iter=est.max_iter,
                          n_init=est.n_init, n_threads=nt, renames={"n_clusters": "n_centers"},
                          replace=((" (with weight > 0)", ""),))
        centers, n_iter = (km.centers if ls is None else km.centers * ls), km.n_iter
    fwd = {"n_centers": n_c, "candidates": est.candidates, "tol": est.tol, "seed": seed} if forward else {}
    model = call_renamed(rbf_network, X, Y, gamma=gamma, centers=centers, alpha=est.alpha, bias=bias, kernel=kernel,
                         classify=classify, learn_gamma=learn_gamma, n_threads=nt, length_scale=ls, **fwd,
                         renames={"bias": "fit_intercept"}, replace=((" with `classify=True`", ""),),
                         remedy=XY_OVERFLOW + "rescale them, or use a larger `alpha`.")
    return model, n_iter


def _network_attributes(est, fitted):
    model, est.n_iter_ = fitted
    est.model_ = model
    est.centers_ = model.centers
    est.gamma_ = model.gamma
    est.coef_ = single_column(model, model.weights)
    est.intercept_ = single_column(model, model.bias)
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


@shared_docs
class RBFNetworkRegressor(_NetworkParams, MultiOutputRegressor):
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
    %(features_in)s

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

        %(fit_xy)s
        """
        X, y = validate_xy(self, X, y)
        _network_attributes(self, _fit_network(self, X, y, classify=False))
        return self


@shared_docs
class RBFNetworkClassifier(_NetworkParams, ClassifierMixin, BaseEstimator):
    """RBF network classification (scikit-learn API over ``rbf_network(classify=True)``).

    Two classes: least squares on -1/+1 targets and the sign (the second class of
    ``classes_`` is positive); more: one-vs-rest and the largest score.

    Parameters
    ----------
    n_centers, gamma, alpha, kernel, centers, fit_intercept, learn_gamma, max_iter, n_init :
        As :class:`RBFNetworkRegressor`.
    random_state, n_jobs, length_scale, candidates, tol :
        As :class:`RBFNetworkRegressor`.

    Attributes
    ----------
    model_ : fastrbf.RBFNetwork
    classes_ : ndarray of shape (n_classes,)
    centers_, gamma_, coef_, intercept_, n_iter_, selection_, selection_error_ :
        As :class:`RBFNetworkRegressor` (one output column per one-vs-rest score).
    %(features_in)s

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
        X, y = validate_fit_xy(self, X, y)
        check_classification_targets(y)
        check_magnitude(X)
        _network_attributes(self, _fit_network(self, X, y, classify=True))
        self.classes_ = self.model_.classes
        return self

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Class scores: shape (n_samples,) for two classes (> 0: ``classes_[1]``),
        else (n_samples, n_classes).

        %(x_to)s
        ndarray
        """
        X = validate_x(self, X)
        return self.model_.decision_function(X, n_threads=self.n_jobs)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Class labels of the rows of ``X``.

        %(x_to)s
        ndarray of shape (n_samples,)
        """
        X = validate_x(self, X)
        return self.model_.predict(X, n_threads=self.n_jobs)

