"""The kernel-approximation transformers: :class:`RandomFourierFeatures` and :class:`Nystroem`."""

from .. import _validation as _v
from .._typing import ArrayLike
from ..approx import nystroem, random_fourier
from ._base import (
    DtypeTransformer,
    as_dot_product,
    call_renamed,
    check_magnitude,
    check_range,
    default_gamma,
    resolve_kernel,
    scalar_gamma,
    shared_docs,
    to_n_threads,
    to_seed,
    validate_fit_x,
)


@shared_docs
class RandomFourierFeatures(DtypeTransformer):
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
    %(features_in)s

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

        %(fit_x)s
        """
        X = validate_fit_x(self, X, accept_sparse="csr")
        to_n_threads(self.n_jobs)
        seed = to_seed(self.random_state)
        D = self.n_components
        if _v.is_int(D) and int(D) > 0:
            d = X.shape[1]
            _v.check_memory(X.dtype.itemsize * int(D) * (d + 1), f"RandomFourierFeatures: the {d} x {D} random weights",
                            "use fewer `n_components`.")
        m = call_renamed(random_fourier, X.shape[1], self.n_components, gamma=self.gamma, seed=seed, kind=self.kind,
                         dtype=X.dtype)
        self.model_ = m
        self.random_weights_ = m.weights
        self.random_offset_ = m.offset
        self._n_features_out = m.n_components
        return self

@shared_docs
class Nystroem(DtypeTransformer):
    """Nystroem kernel feature map ``K(X, L) K(L, L)^{-1/2}`` of landmarks ``L``
    (scikit-learn API over :func:`fastrbf.nystroem`).

    Parameters
    ----------
    kernel : str, default "gaussian"
        A name of :data:`fastrbf.KERNELS` (or ``"rbf"``, ``"poly"``, ``"sigmoid"``);
        ``"linear"`` is scikit-learn's ``x . y``.
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
    %(features_in)s

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

        %(fit_x)s
        """
        X = validate_fit_x(self, X, accept_sparse="csr")
        check_magnitude(X)
        m = min(_v.check_int(self.n_components, "n_components", 1), X.shape[0])
        kernel, gamma, degree, coef0 = as_dot_product(resolve_kernel(self.kernel), self.gamma, self.degree, self.coef0)
        coef0 = _v.check_real(coef0, "coef0")
        gamma = scalar_gamma(default_gamma(gamma, X.shape[1]))
        check_range(X, kernel, gamma, degree, coef0, "gamma")
        ny = call_renamed(nystroem, X, m, kernel=kernel, gamma=gamma, alpha=self.alpha, method=self.method,
                          seed=to_seed(self.random_state), n_threads=to_n_threads(self.n_jobs), degree=degree, coef0=coef0,
                          renames={"landmarks": "n_components", "n_clusters": "n_components"},
                          replace=((" (with weight > 0)", ""),),
                          remedy="`X` overflowed (the eigendecomposition met non-finite values): its magnitudes are too "
                                 "extreme for float64; rescale it, or use a smaller `gamma`.")
        self.model_ = ny
        self.components_ = ny.landmarks
        self.normalization_ = ny.normalization
        self.n_components_ = self._n_features_out = ny.n_components
        return self
