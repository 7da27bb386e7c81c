""":class:`KMeans` (:func:`fastrbf.kmeans`)."""


import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin

from .. import _validation as _v
from .._typing import ArrayLike
from ..cluster._kmeans import kmeans, lloyd_assign
from ..distances import sqdist
from ._base import call_renamed, shared_docs, to_n_threads, to_progress, to_seed, validate_fit_x, validate_x


@shared_docs
class KMeans(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """k-means by Lloyd's algorithm (scikit-learn API over :func:`fastrbf.kmeans`).

    Parameters
    ----------
    n_clusters : int, default 8
    init : {"k-means++", "random"}, array_like of shape (n_clusters, n_features) or callable
        A callable is called as scikit-learn does, ``init(X, n_clusters,
        random_state=RandomState)``, once per restart, and returns the initial centres.
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
        X = validate_fit_x(self, X, accept_sparse="csr")
        n = X.shape[0]
        K = self.n_clusters
        if _v.is_int(K) and K > n:
            raise ValueError(f"`n_clusters` ({K}) must not exceed the number of samples (n_samples = {n}).")
        common = dict(max_iter=self.max_iter, tol=self.tol, n_threads=to_n_threads(self.n_jobs),
                      progress=to_progress(self.verbose))
        if callable(self.init):
            res = self._fit_callable_init(X, K, common)
        else:
            res = call_renamed(kmeans, X, K, init=self.init, n_init=self.n_init, seed=to_seed(self.random_state),
                               **common)
        self.model_ = res
        self.cluster_centers_ = res.centers
        self.labels_ = res.labels
        self.inertia_ = res.inertia
        self.n_iter_ = res.n_iter
        self._n_features_out = res.centers.shape[0]
        return self

    def _fit_callable_init(self, X, K, common):
        # scikit-learn's rule: the callable draws from one RandomState, once per restart;
        # the fit of lowest inertia is kept (the first of equal ones)
        from sklearn.utils import check_random_state

        rs = check_random_state(self.random_state)
        best = None
        for _ in range(_v.check_int(self.n_init, "n_init", 1)):
            C = np.asarray(self.init(X, K, random_state=rs))
            if C.shape != (K, X.shape[1]):
                raise ValueError(f"`init` must return the initial centres, an array of shape (n_clusters, n_features) = "
                                 f"{(K, X.shape[1])}; it returned shape {C.shape}.")
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
        d2 = lloyd_assign(validate_x(self, X, accept_sparse="csr"), self.cluster_centers_, n_threads=self.n_jobs)[1]
        return -float(np.sum(d2, dtype=np.float64))

