"""fastrbf: fast, trustworthy radial-basis-function and kernel methods.

The public functional API.  Nothing is compiled at import: each numba kernel compiles
on its first call, once per dtype, and is cached on disk (``FASTRBF_CACHE=0`` turns the
on-disk cache off).
"""

from ._threads import threads
from .approx import NystroemMap, RandomFourierMap, nystroem, random_fourier
from .cluster import EmptyClusterError, KMeansResult, kmeans, kmeans_plusplus, lloyd_assign, lloyd_update
from .distances import sqdist
from .gp import (
    GaussianProcess,
    SparseGaussianProcess,
    gaussian_process,
    gaussian_process_lml,
    gp_log_marginal_likelihood,
    gp_regression,
    sparse_gaussian_process,
    sparse_gaussian_process_lml,
)
from .gp._deprecated import class_attribute as _deprecated_class
from .kernels import KERNELS, gram, gram_matvec
from .linalg import CholeskyFactor, NotPositiveDefiniteError, cholesky, solve_regularized
from .models import (
    ConvergenceWarning,
    KernelModel,
    LocalInterpolant,
    PartitionOfUnityInterpolant,
    RBFNetwork,
    SelectionResult,
    interpolate,
    interpolate_cv,
    kernel_ridge,
    kernel_ridge_cv,
    partition_of_unity,
    rbf_network,
)
from .neighbors import knn, knn_predict, nadaraya_watson, radius_neighbors, rbf_vote
from .user_kernels import UserKernel, define_kernel

__version__ = "0.1.0"

__all__ = [
    "KERNELS",
    "CholeskyFactor",
    "ConvergenceWarning",
    "EmptyClusterError",
    "GaussianProcess",
    "KMeansResult",
    "KernelModel",
    "LocalInterpolant",
    "NotPositiveDefiniteError",
    "NystroemMap",
    "PartitionOfUnityInterpolant",
    "RBFNetwork",
    "RandomFourierMap",
    "SelectionResult",
    "SparseGaussianProcess",
    "UserKernel",
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
    "solve_regularized",
    "sparse_gaussian_process",
    "sparse_gaussian_process_lml",
    "sqdist",
    "threads",
]


def __getattr__(name):
    cls = _deprecated_class(name)  # GPModel and GPPrediction, deprecated: a FutureWarning
    if cls is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return cls
