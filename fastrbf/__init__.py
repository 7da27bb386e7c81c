"""fastrbf: fast, trustworthy radial-basis-function and kernel methods.

The public functional API.  Nothing is compiled at import: each numba kernel compiles
on its first call, once per dtype, and is cached on disk (``FASTRBF_CACHE=0`` turns the
on-disk cache off).  Nothing is imported that is not used either: the family modules
load on the first use of one of their names (``fastrbf.sqdist``, ``from fastrbf import
kmeans``), once, thread-safely (Python's import lock).
"""

import importlib
import importlib.util
from typing import TYPE_CHECKING

from ._threads import threads

if TYPE_CHECKING:  # the names below, for type checkers and readers; at run time each
    # family module is imported on the first use of one of its names (see __getattr__)
    from .approx import NystroemMap, PartialCholesky, RandomFourierMap, nystroem, random_fourier, rpcholesky
    from .cluster import EmptyClusterError, KMeansResult, kmeans, kmeans_plusplus, lloyd_assign, lloyd_update
    from .distances import sqdist
    from .gp import (
        GaussianProcess,
        SparseGaussianProcess,
        VecchiaGaussianProcess,
        gaussian_process,
        gaussian_process_lml,
        gp_log_marginal_likelihood,
        gp_regression,
        sparse_gaussian_process,
        sparse_gaussian_process_lml,
        vecchia_gaussian_process,
        vecchia_gaussian_process_lml,
    )
    from .kernels import KERNELS, gram, gram_matvec
    from .linalg import CholeskyFactor, NotPositiveDefiniteError, cholesky, solve_regularized
    from .models import (
        ConvergenceWarning,
        KernelKMeansResult,
        KernelModel,
        LocalInterpolant,
        PartitionOfUnityInterpolant,
        RBFNetwork,
        SelectionResult,
        interpolate,
        interpolate_cv,
        kernel_kmeans,
        kernel_kmeans_objective,
        kernel_ridge,
        kernel_ridge_cv,
        partition_of_unity,
        rbf_network,
    )
    from .neighbors import knn, knn_predict, nadaraya_watson, radius_neighbors, rbf_vote
    from .user_kernels import UserKernel, define_kernel

#: public name -> the module that defines it, imported on the first use of the name:
#: ``import fastrbf`` then costs a few milliseconds beyond numba, not the ~0.3 s of
#: importing every family (their numba dispatchers, intrinsics and kernel registry)
_SOURCES = {
    **dict.fromkeys(("NystroemMap", "PartialCholesky", "RandomFourierMap", "nystroem", "random_fourier", "rpcholesky"),
                   "approx"),
    **dict.fromkeys(("EmptyClusterError", "KMeansResult", "kmeans", "kmeans_plusplus", "lloyd_assign",
                     "lloyd_update"), "cluster"),
    "sqdist": "distances",
    **dict.fromkeys(("GaussianProcess", "SparseGaussianProcess", "gaussian_process", "gaussian_process_lml",
                     "gp_log_marginal_likelihood", "gp_regression", "sparse_gaussian_process",
                     "sparse_gaussian_process_lml", "VecchiaGaussianProcess", "vecchia_gaussian_process",
                     "vecchia_gaussian_process_lml"), "gp"),
    **dict.fromkeys(("KERNELS", "gram", "gram_matvec"), "kernels"),
    **dict.fromkeys(("CholeskyFactor", "NotPositiveDefiniteError", "cholesky", "solve_regularized"), "linalg"),
    **dict.fromkeys(("ConvergenceWarning", "KernelKMeansResult", "KernelModel", "LocalInterpolant",
                     "PartitionOfUnityInterpolant", "RBFNetwork", "SelectionResult", "interpolate", "interpolate_cv",
                     "kernel_kmeans", "kernel_kmeans_objective", "kernel_ridge", "kernel_ridge_cv",
                     "partition_of_unity", "rbf_network"), "models"),
    **dict.fromkeys(("knn", "knn_predict", "nadaraya_watson", "radius_neighbors", "rbf_vote"), "neighbors"),
    **dict.fromkeys(("UserKernel", "define_kernel"), "user_kernels"),
}

__version__ = "0.1.0"

__all__ = [
    "KERNELS",
    "CholeskyFactor",
    "ConvergenceWarning",
    "EmptyClusterError",
    "GaussianProcess",
    "KMeansResult",
    "KernelKMeansResult",
    "KernelModel",
    "LocalInterpolant",
    "NotPositiveDefiniteError",
    "NystroemMap",
    "PartialCholesky",
    "PartitionOfUnityInterpolant",
    "RBFNetwork",
    "RandomFourierMap",
    "SelectionResult",
    "SparseGaussianProcess",
    "UserKernel",
    "VecchiaGaussianProcess",
    "__version__",
    "cholesky",
    "define_kernel",
    "gaussian_process",
    "gaussian_process_lml",
    "gp_log_marginal_likelihood",
    "gp_regression",
    "gram",
    "gram_matvec",
    "interpolate",
    "interpolate_cv",
    "kernel_kmeans",
    "kernel_kmeans_objective",
    "kernel_ridge",
    "kernel_ridge_cv",
    "kmeans",
    "kmeans_plusplus",
    "knn",
    "knn_predict",
    "lloyd_assign",
    "lloyd_update",
    "nadaraya_watson",
    "nystroem",
    "partition_of_unity",
    "radius_neighbors",
    "random_fourier",
    "rbf_network",
    "rbf_vote",
    "rpcholesky",
    "solve_regularized",
    "sparse_gaussian_process",
    "sparse_gaussian_process_lml",
    "sqdist",
    "threads",
    "vecchia_gaussian_process",
    "vecchia_gaussian_process_lml",
]


def __getattr__(name):
    source = _SOURCES.get(name)
    if source is not None:
        value = getattr(importlib.import_module(f"{__name__}.{source}"), name)
        globals()[name] = value  # the next use is a plain attribute
        return value
    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # a submodule (``fastrbf.approx``), as before
    from .gp._deprecated import class_attribute

    cls = class_attribute(name)  # GPModel and GPPrediction, deprecated: a FutureWarning
    if cls is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return cls


def __dir__():
    return sorted(set(globals()) | set(__all__))
