"""Gaussian processes: exact (``gaussian_process``) and sparse (``sparse_gaussian_process``).

``_exact`` holds the exact GP; ``_sparse`` and ``_sparse_bound`` the sparse one (the VFE
bound, its gradient and chunked passes); ``_prml`` the lectures' GP with its own kernel;
``_checks`` the argument checks they share; ``_sklearn_kernels`` the translation of
scikit-learn kernel objects (imported by ``fastrbf.sklearn`` only).  The numba kernels
are in ``fastrbf._jit.gp``.
"""

from ._exact import GaussianProcess, gaussian_process, gaussian_process_lml
from ._prml import GPModel, GPPrediction, gp_log_marginal_likelihood, gp_regression
from ._sparse import SparseGaussianProcess, sparse_gaussian_process, sparse_gaussian_process_lml

__all__ = ["GPModel", "GPPrediction", "GaussianProcess", "SparseGaussianProcess", "gaussian_process",
           "gaussian_process_lml", "gp_log_marginal_likelihood", "gp_regression", "sparse_gaussian_process",
           "sparse_gaussian_process_lml"]
