""":class:`KMeans` (:func:`fastrbf.kmeans`) and :class:`KernelKMeans`
(:func:`fastrbf.kernel_kmeans`)."""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin

from .. import _validation as _v
from .._typing import ArrayLike
from ..cluster._kmeans import kmeans, lloyd_assign
from ..cluster._rules import check_weights
from ..distances import sqdist
from ..models.kernel_clustering import kernel_kmeans
from ._base import (
    as_dot_product,
    call_renamed,
    check_magnitude,
    default_gamma,
    random_state_of,
    resolve_kernel,
    shared_docs,
    to_n_threads,
    to_progress,
    to_seed,
    validate_fit_x,
    validate_x,
)


@shared_docs
class KMeans(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """k-means by Lloyd's algorithm (scikit-learn API over :func:`fastrbf.kmeans`).

    Parameters
    ----------
    n_clusters : int, default 8
    init : {"k-means++", "random"}, array_like of shape (n_clusters, n_features) or callable
        A callable is called as scikit-learn does, ``init(X, n_clusters,
        random_state=RandomState)``, once per restart, and returns the initial centres.
    n_init : int or "auto", default "auto"
        Restarts (the lowest inertia is kept).  ``"auto"`` is scikit-learn's rule: 1
        for k-means++ and for given centres, 10 for ``"random"`` and a callable.  Given
        centres (an array) are one start: another ``n_init`` warns, as scikit-learn.
    max_iter : int, default 300
    tol : float, default 1e-4
        Relative to the mean variance of the features (scikit-learn's scaling).
    copy_x : bool, default True
        Accepted for scikit-learn's signature: ``X`` is never modified (fastrbf does not
        centre the data in place), so there is nothing to copy.
    algorithm : {"auto", "lloyd", "elkan", "bounded"}, default "auto"
        ``"lloyd"``: every row ranked against every centre each iteration.
        ``"elkan"`` (scikit-learn's name for its bounded variant) is ``"bounded"``:
        Hamerly's bounds skip rows whose label cannot change.  ``"auto"`` lets
        :func:`fastrbf.kmeans` take the bounds where they pay.  All give the same result,
        so the default differs from scikit-learn's ``"lloyd"`` in speed only.
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
    %(features_in)s

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

    def __init__(self, n_clusters=8, *, init="k-means++", n_init="auto", max_iter=300, tol=1e-4, verbose=0,
                 random_state=None, copy_x=True, algorithm="auto", n_jobs=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.copy_x = copy_x
        self.algorithm = algorithm
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.sparse = True
        return tags

    def fit(self, X: ArrayLike, y: object = None, sample_weight: ArrayLike | None = None) -> "KMeans":
        """Cluster ``X``.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
            Sparse data is used as CSR, never densified.
        y : ignored
        sample_weight : array_like of shape (n_samples,), optional
            Weights of the rows (in the centres, the inertia and the k-means++ draws).

        Returns
        -------
        self
        """
        X = validate_fit_x(self, X, accept_sparse="csr")
        n = X.shape[0]
        K = self.n_clusters
        if _v.is_int(K) and K > n:
            raise ValueError(f"`n_clusters` ({K}) must not exceed the number of samples: n_samples={n} should be "
                             f">= n_clusters={K}.")
        _v.check_bool(self.copy_x, "copy_x")
        algorithm = _v.check_choice(self.algorithm, "algorithm", ("auto", "lloyd", "elkan", "bounded"),
                                    text="'auto', 'lloyd', 'elkan' or 'bounded'")
        if algorithm == "elkan" and _v.is_int(K) and K == 1:
            warnings.warn("algorithm='elkan' doesn't make sense for a single cluster. Using 'lloyd' instead.",
                          RuntimeWarning, stacklevel=2)
            algorithm = "lloyd"
        if not (isinstance(self.init, str) or callable(self.init)):
            _check_init_shape(np.shape(self.init), K, X.shape[1])
        common = dict(max_iter=self.max_iter, tol=self.tol, sample_weight=sample_weight,
                      algorithm="bounded" if algorithm == "elkan" else algorithm,
                      n_threads=to_n_threads(self.n_jobs), progress=to_progress(self.verbose))
        n_init = self._starts()
        if callable(self.init):
            res = self._fit_callable_init(X, K, n_init, common)
        else:
            res = call_renamed(kmeans, X, K, init=self.init, n_init=n_init, seed=to_seed(self.random_state),
                               **common)
        self._n_init = n_init  # scikit-learn's name for the number of starts made
        self.model_ = res
        self.cluster_centers_ = res.centers
        self.labels_ = res.labels
        self.inertia_ = res.inertia
        self.n_iter_ = res.n_iter
        self._n_features_out = res.centers.shape[0]
        return self

    def _starts(self):
        """The number of starts: scikit-learn's ``"auto"`` rule, and one for given centres
        (with its warning when ``n_init`` asked for more)."""
        given = not (isinstance(self.init, str) or callable(self.init))
        if isinstance(self.n_init, str) and self.n_init == "auto":
            return 1 if given or (isinstance(self.init, str) and self.init == "k-means++") else 10
        n_init = _v.check_int(self.n_init, "n_init", 1, text="an int >= 1 or 'auto'")
        if given and n_init != 1:
            warnings.warn(f"Explicit initial center position passed: performing only one init in {type(self).__name__} "
                          f"instead of n_init={n_init}.", RuntimeWarning, stacklevel=3)
            return 1
        return n_init

    def _fit_callable_init(self, X, K, n_init, common):
        # scikit-learn's rule: the callable draws from one RandomState, once per restart;
        # the fit of lowest inertia is kept (the first of equal ones)
        rs = random_state_of(self.random_state)
        best = None
        for _ in range(n_init):
            C = np.asarray(self.init(X, K, random_state=rs))
            _check_init_shape(C.shape, K, X.shape[1], "returned by the callable ")
            res = call_renamed(kmeans, X, K, init=C, n_init=1, **common)
            if best is None or res.inertia < best.inertia:
                best = res
        return best

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Index of the nearest centre of each row of ``X`` (ties: lowest index).

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,), int64
        """
        return lloyd_assign(validate_x(self, X, accept_sparse="csr"), self.cluster_centers_, n_threads=self.n_jobs)[0]

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Euclidean distances of the rows of ``X`` to the centres (as scikit-learn).

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
            Sparse rows are not densified (:func:`fastrbf.sqdist`'s sparse path, to the
            accuracy of the dense one).

        Returns
        -------
        ndarray of shape (n_samples, n_clusters)
        """
        Xv = validate_x(self, X, accept_sparse="csr")
        D = sqdist(Xv, self.cluster_centers_, n_threads=self.n_jobs)
        return np.sqrt(D, out=D)

    def score(self, X: ArrayLike, y: object = None, sample_weight: ArrayLike | None = None) -> float:
        """Opposite of the (weighted) inertia of ``X`` on the fitted centres.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
        y : ignored
        sample_weight : array_like of shape (n_samples,), optional

        Returns
        -------
        float
        """
        Xv = validate_x(self, X, accept_sparse="csr")
        d2 = lloyd_assign(Xv, self.cluster_centers_, n_threads=self.n_jobs)[1]
        if sample_weight is None:
            return -float(np.sum(d2, dtype=np.float64))
        w = check_weights(sample_weight, Xv.shape[0])
        return -float(np.dot(w, d2.astype(np.float64)))



def _check_init_shape(shape, K, d, source=""):
    """Initial centres of shape (n_clusters, n_features), refused in scikit-learn's words
    (and fastrbf's: the argument and the shape it needs)."""
    if len(shape) != 2:
        return  # not a table of centres: fastrbf.kmeans says what `init` must be
    for i, (what, want) in enumerate((("clusters", K), ("features of the data", d))):
        if shape[i] != want:
            raise ValueError(f"The shape of the initial centers {tuple(shape)} {source}does not match the number of "
                             f"{what} {want}: `init` must be an array of shape (n_clusters, n_features) = {(K, d)}.")


@shared_docs
class KernelKMeans(ClusterMixin, BaseEstimator):
    """Kernel k-means (scikit-learn API over :func:`fastrbf.kernel_kmeans`): Lloyd's
    algorithm in the kernel's feature space, for clusters that need not be convex.

    Parameters
    ----------
    n_clusters : int, default 8
    kernel : str, default "rbf"
        A name of :data:`fastrbf.KERNELS` or scikit-learn's ``"rbf"``, ``"poly"``,
        ``"sigmoid"`` and ``"linear"`` (``x . y``: plain k-means); ``"precomputed"``:
        ``X`` is the Gram matrix.
    gamma : float, optional
        Default ``1 / n_features``.
    degree, coef0 :
        The polynomial and tanh kernels' parameters.
    init : {"k-means++", "random"} or array_like of shape (n_samples,)
        k-means++ in feature space, random distinct points, or the initial labels.
    n_init : int, default 1
    max_iter : int, default 300
    tol : float, default 1e-4
        Relative to the data's total variance in feature space.
    method : {"auto", "exact", "nystroem"}, default "auto"
        As :func:`fastrbf.kernel_kmeans`; ``method_`` says which ran.
    n_landmarks, n_components : int, optional
        ``"nystroem"``: the landmarks and the features' rank.
    random_state : None, int, RandomState or Generator
        fastrbf's ``seed``.
    n_jobs : int, optional
        fastrbf's ``n_threads``.
    verbose : int, default 0
        > 0: report the seeding and the iterations on stderr.

    Attributes
    ----------
    model_ : fastrbf.KernelKMeansResult
    labels_ : ndarray of shape (n_samples,), int64
    inertia_ : float
        The weighted sum of squared feature-space distances to the means.
    n_iter_ : int
    method_ : str
    %(features_in)s

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.sklearn import KernelKMeans
    >>> t = np.linspace(0, 2 * np.pi, 60, endpoint=False)
    >>> X = np.r_[0.2 * np.c_[np.cos(t), np.sin(t)], 2.0 * np.c_[np.cos(t), np.sin(t)]]
    >>> km = KernelKMeans(2, gamma=2.0, n_init=3, random_state=0).fit(X)
    >>> bool(km.labels_[0] != km.labels_[60]), len(set(km.labels_[:60])), km.method_
    (True, 1, 'exact')
    """

    def __init__(self, n_clusters=8, *, kernel="rbf", gamma=None, degree=3, coef0=1.0, init="k-means++", n_init=1,
                 max_iter=300, tol=1e-4, method="auto", n_landmarks=None, n_components=None, random_state=None,
                 n_jobs=None, verbose=0):
        self.n_clusters = n_clusters
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.method = method
        self.n_landmarks = n_landmarks
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X: ArrayLike, y: object = None, sample_weight: ArrayLike | None = None) -> "KernelKMeans":
        """Cluster ``X``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : ignored
        sample_weight : array_like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        X = validate_fit_x(self, X)
        if not self._precomputed():  # (a Gram matrix has no distances to overflow)
            check_magnitude(X)
        n = X.shape[0]
        K = self.n_clusters
        if _v.is_int(K) and K > n:
            raise ValueError(f"`n_clusters` ({K}) must not exceed the number of samples: n_samples={n} should be "
                             f">= n_clusters={K}.")
        kernel, gamma, degree, coef0 = as_dot_product(self.kernel, self.gamma, self.degree, self.coef0)
        if not self._precomputed():
            kernel = resolve_kernel(kernel)
        gamma = default_gamma(gamma, X.shape[1])
        res = call_renamed(kernel_kmeans, X, K, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                           sample_weight=sample_weight, init=self.init, n_init=self.n_init, max_iter=self.max_iter,
                           tol=self.tol, method=self.method, n_landmarks=self.n_landmarks,
                           n_components=self.n_components, seed=to_seed(self.random_state),
                           n_threads=to_n_threads(self.n_jobs), progress=to_progress(self.verbose))
        self.model_ = res
        self.labels_ = res.labels
        self.inertia_ = res.inertia
        self.n_iter_ = res.n_iter
        self.method_ = res.method
        return self

    def _precomputed(self):
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._precomputed()  # X is the Gram matrix
        return tags

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The nearest mean in feature space of each row of ``X``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            With ``kernel="precomputed"``: the kernel values of the new points with
            the training points, (n_samples, n_samples_fit).

        Returns
        -------
        ndarray of shape (n_samples,), int64
        """
        Xv = validate_x(self, X)
        return self.model_.predict(Xv, n_threads=self.n_jobs)

