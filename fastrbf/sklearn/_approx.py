"""The kernel-approximation transformers: :class:`RandomFourierFeatures` and :class:`Nystroem`."""

import dataclasses
from typing import Any

import numpy as np

from .. import _validation as _v
from .._sparse import is_sparse
from .._typing import ArrayLike
from ..approx import inverse_sqrt, nystroem, random_fourier
from ._base import (
    DtypeTransformer,
    as_dot_product,
    call_renamed,
    check_magnitude,
    check_no_kernel_params,
    check_range,
    default_gamma,
    is_sklearn_kernel,
    random_state_of,
    resolve_kernel,
    scalar_gamma,
    shared_docs,
    sklearn_gram,
    sklearn_kernel_params,
    to_n_threads,
    to_seed,
    validate_fit_x,
    validate_x,
)


@shared_docs
class RandomFourierFeatures(DtypeTransformer):
    """Random Fourier features of the Gaussian kernel (scikit-learn API over
    :func:`fastrbf.random_fourier`; scikit-learn's ``RBFSampler``).

    Parameters
    ----------
    gamma : float or "scale", default 1.0
        ``"scale"`` is scikit-learn's ``1 / (n_features * X.var())`` (the variance over
        every entry of ``X``; 1 for constant ``X``), fixed at ``fit`` (``_gamma``).
    n_components : int, default 100
    kind : {"cos", "cos_sin"}, default "cos"
    random_state : None, int, RandomState or Generator
        None, an int or a RandomState draws as scikit-learn's ``RBFSampler`` (the same
        map for the same ``random_state``); a Generator is fastrbf's ``seed``.
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
        seed = to_seed(self.random_state)  # (checked by fastrbf's rule)
        if not isinstance(seed, np.random.Generator):
            # scikit-learn's draws: the same map as its RBFSampler for the same random_state
            seed = random_state_of(self.random_state)
        D = self.n_components
        if _v.is_int(D) and int(D) > 0:
            d = X.shape[1]
            _v.check_memory(X.dtype.itemsize * int(D) * (d + 1), f"RandomFourierFeatures: the {d} x {D} random weights",
                            "use fewer `n_components`.")
        gamma = self.gamma
        if isinstance(gamma, str) and gamma == "scale":
            gamma = _scale_gamma(X)
        m = call_renamed(random_fourier, X.shape[1], self.n_components, gamma=gamma, seed=seed, kind=self.kind,
                         dtype=X.dtype)
        self._gamma = m.gamma
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
    kernel : str or callable, default "gaussian"
        A name of :data:`fastrbf.KERNELS` (or ``"rbf"``, ``"poly"``, ``"sigmoid"``);
        ``"linear"`` is scikit-learn's ``x . y``.  scikit-learn's ``"laplacian"`` (the
        L1 distance; fastrbf's Euclidean one is ``"matern12"``), ``"chi2"``,
        ``"additive_chi2"``, ``"cosine"`` and a callable ``kernel(x, y,
        **kernel_params)`` are computed by scikit-learn's ``pairwise_kernels``, as
        scikit-learn's ``Nystroem`` does (NumPy speed, dense ``X``).
        ``"precomputed"``: ``X`` is the kernel matrix, (n_samples, n_samples) in ``fit``
        and (n_queries, n_samples) in ``transform``.
    gamma : float, optional
        Default ``1 / n_features`` for fastrbf's kernels; scikit-learn's default for its own.
    n_components : int, default 100
        Number of landmarks; at most ``n_samples`` are used (``n_components_``).
    method : {"random", "kmeans", "rpcholesky", "auto"}, default "random"
        Landmarks: distinct random rows of ``X`` (scikit-learn's choice), k-means
        centres, the pivots of :func:`fastrbf.rpcholesky`, or those pivots where their
        trace error is small and k-means centres elsewhere (``"auto"``, as
        :func:`fastrbf.nystroem`'s) (fastrbf's kernels only; dense ``X`` and a
        positive semi-definite kernel for ``"rpcholesky"`` and ``"auto"``).
    alpha : float, default 0.0
        Added to the diagonal of ``K(L, L)``.
    degree : float, optional
        Of the polynomial kernel; default 3.  One that is not an integer is
        scikit-learn's polynomial kernel (``pairwise_kernels``).
    coef0 : float, optional
        Of the polynomial and tanh kernels; default 1.
    kernel_params : dict, optional
        Further arguments of a callable or a scikit-learn kernel (scikit-learn's
        parameter); not with fastrbf's kernels.
    random_state : None, int, RandomState or Generator
        fastrbf's ``seed``.  With scikit-learn's kernels the landmarks are drawn as
        scikit-learn draws them (the same rows for the same int or RandomState).
    n_jobs : int, optional
        fastrbf's ``n_threads``.

    Attributes
    ----------
    model_ : fastrbf.NystroemMap, or the map of a scikit-learn kernel
    components_ : ndarray of shape (n_components_, n_features)
        The landmarks (rows of the kernel matrix with ``"precomputed"``).
    component_indices_ : ndarray of shape (n_components_,) or None
        The rows of ``X`` taken as landmarks; None for k-means centres.
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

    def __init__(self, kernel="gaussian", *, gamma=None, n_components=100, method="random", alpha=0.0, degree=None,
                 coef0=None, kernel_params=None, random_state=None, n_jobs=None):
        self.kernel = kernel
        self.gamma = gamma
        self.n_components = n_components
        self.method = method
        self.alpha = alpha
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        return tags

    def fit(self, X: ArrayLike, y: object = None) -> "Nystroem":
        """Choose the landmarks and compute the normalisation.

        %(fit_x)s
        """
        if _own_kernel(self.kernel, self.degree):
            return self._fit_fastrbf(X)
        X = validate_fit_x(self, X)  # dense: scikit-learn computes the kernel
        precomputed = isinstance(self.kernel, str) and self.kernel == "precomputed"
        if precomputed:
            if X.shape[0] != X.shape[1]:
                raise ValueError(f"`X` must be the square kernel matrix of the training points with "
                                 f"kernel='precomputed' (n_samples x n_samples); got shape {X.shape}.")
            params = sklearn_kernel_params(self)
            if params:
                raise ValueError(f"Don't pass gamma, coef0 or degree to Nystroem if using a precomputed kernel: "
                                 f"`X` is the kernel already; got {params}.")
        else:
            params = sklearn_kernel_params(self)
        _v.check_choice(self.method, "method", ("random",),
                        text="'random' with a callable, precomputed or scikit-learn kernel (k-means centres and "
                             "rpcholesky pivots need one of fastrbf's kernels)")
        alpha = _v.check_real(self.alpha, "alpha", low=0)
        n = X.shape[0]
        m = min(_v.check_int(self.n_components, "n_components", 1), n)
        # scikit-learn's draw: the same landmarks as its Nystroem for the same random_state
        inds = random_state_of(self.random_state).permutation(n)[:m]
        basis = X[inds]
        Kmm = basis[:, inds].astype(np.float64) if precomputed else sklearn_gram(basis, basis, self.kernel, params)
        N, rank = inverse_sqrt(Kmm, alpha)
        self.model_ = _KernelFunctionMap(basis.copy(), N, None if precomputed else self.kernel, params,
                                         inds.astype(np.int64), rank, X.dtype)
        self._set_fitted(self.model_, inds)
        return self

    def _fit_fastrbf(self, X):
        X = validate_fit_x(self, X, accept_sparse="csr")
        check_magnitude(X)
        check_no_kernel_params(self)
        m = min(_v.check_int(self.n_components, "n_components", 1), X.shape[0])
        degree = 3 if self.degree is None else self.degree
        coef0 = 1.0 if self.coef0 is None else self.coef0
        kernel, gamma, degree, coef0 = as_dot_product(resolve_kernel(self.kernel), self.gamma, degree, coef0)
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
        self._set_fitted(ny, ny.indices)
        return self

    def _set_fitted(self, model, indices):
        self.components_ = model.landmarks
        self.component_indices_ = indices
        self.normalization_ = model.normalization
        self.n_components_ = self._n_features_out = model.landmarks.shape[0]

    def transform(self, X: ArrayLike) -> np.ndarray:
        """The fitted feature map (``model_``) at the rows of ``X`` (float32 for float32
        ``X`` and a map fitted on float32).

        %(x_to)s
        ndarray of shape (n_samples, n_components_)
            One column per landmark (``get_feature_names_out()``).
        """
        if isinstance(self.model_, _KernelFunctionMap):
            return self.model_.transform(validate_x(self, X))
        return super().transform(X)


def _own_kernel(kernel, degree):
    """Whether ``kernel`` is one of fastrbf's (computed by :func:`fastrbf.gram`)."""
    return not (is_sklearn_kernel(kernel, degree) or (isinstance(kernel, str) and kernel == "precomputed"))


@dataclasses.dataclass(frozen=True, eq=False)
class _KernelFunctionMap:
    """The Nystroem map of a kernel that scikit-learn computes (or of a precomputed one:
    ``kernel`` None, the queries' kernel values with the training points given):
    ``K(X, L) N``."""

    landmarks: np.ndarray
    normalization: np.ndarray
    kernel: Any
    kernel_params: dict
    indices: np.ndarray
    rank: int
    dtype: np.dtype

    def transform(self, X):
        if self.kernel is None:  # (the estimator checked X's columns: one per training point)
            K = np.asarray(X[:, self.indices], dtype=np.float64)
        else:
            K = sklearn_gram(X, self.landmarks, self.kernel, self.kernel_params)
        return (K @ self.normalization).astype(_v.result_dtype(X, self.dtype), copy=False)

def _scale_gamma(X):
    """scikit-learn's ``gamma="scale"``: ``1 / (n_features * var)``, the variance over every
    entry of ``X`` (the implicit zeros of sparse ``X`` counted); 1 when it is 0."""
    if is_sparse(X):
        var = float(X.multiply(X).mean()) - float(X.mean()) ** 2
    else:
        var = float(np.var(X, dtype=np.float64))
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
