"""Gaussian processes: exact (``gaussian_process``) and sparse (``sparse_gaussian_process``).

``_exact`` holds the exact GP with the registry's kernels and routes ``kernel="prml"``
(the lectures' covariance) to ``_prml``; ``_sparse`` and ``_sparse_bound`` hold the
sparse one (the VFE bound, its gradient and chunked passes); ``_vecchia`` the
nearest-neighbour (Vecchia) one; ``_checks`` the argument
checks they share; ``_deprecated`` the names kept for one release (``gp_regression``,
``gp_log_marginal_likelihood``, ``GPModel``, ``GPPrediction``); ``_sklearn_kernels``
the translation of scikit-learn kernel objects (imported by ``fastrbf.sklearn`` only).
The numba kernels are in ``fastrbf._jit.gp``.
"""

from ._deprecated import class_attribute as _deprecated_class
from ._deprecated import gp_log_marginal_likelihood, gp_regression
from ._exact import GaussianProcess, gaussian_process, gaussian_process_lml
from ._sparse import SparseGaussianProcess, sparse_gaussian_process, sparse_gaussian_process_lml
from ._vecchia import VecchiaGaussianProcess, vecchia_gaussian_process, vecchia_gaussian_process_lml

__all__ = ["GaussianProcess", "SparseGaussianProcess", "VecchiaGaussianProcess", "gaussian_process",
           "gaussian_process_lml", "gp_log_marginal_likelihood", "gp_regression", "sparse_gaussian_process",
           "sparse_gaussian_process_lml", "vecchia_gaussian_process", "vecchia_gaussian_process_lml"]


def __getattr__(name):
    cls = _deprecated_class(name)  # GPModel and GPPrediction, deprecated: a FutureWarning
    if cls is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return cls
