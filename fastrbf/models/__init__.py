"""RBF models: kernel ridge regression, exact (or smoothed) RBF interpolation, and RBF
networks with K << N centres.  Each fit returns a small frozen model (arrays only,
picklable, no N x N or N x M matrix kept) whose ``.predict`` runs through the fused
:func:`~fastrbf.gram_matvec`.

One module per family, and what they share:

- :mod:`~fastrbf.models.common`: :class:`KernelModel`, :class:`RBFNetwork`,
  :class:`ConvergenceWarning`, the checks of data, queries and targets, the polynomial
  tail and the n x n Gram buffer of the exact solves.
- :mod:`~fastrbf.models.ridge`: :func:`kernel_ridge` (Cholesky, or Falkon's solver).
- :mod:`~fastrbf.models.falkon`: Falkon's Nystroem-preconditioned conjugate gradients
  and its landmarks (the Nystroem feature map is :func:`fastrbf.nystroem`).
- :mod:`~fastrbf.models.interpolation`: :func:`interpolate`;
  :mod:`~fastrbf.models.local`: its local form (``neighbors=k``, SciPy's);
  :mod:`~fastrbf.models.pou`: its partition-of-unity form for large n
  (:func:`partition_of_unity`, ``method="pu"``).
- :mod:`~fastrbf.models.network`: :func:`rbf_network`.
- :mod:`~fastrbf.models.kernel_clustering`: :func:`kernel_kmeans` (exact, or on
  Nystroem features), :func:`kernel_kmeans_objective`.
- :mod:`~fastrbf.models.selection`: :func:`kernel_ridge_cv`, :func:`interpolate_cv`
  (closed-form leave-one-out and GCV over a (gamma, alpha) grid).

The modules are not named after the functions they hold (``kernel_ridge``,
``interpolate``, ``rbf_network``): ``fastrbf.models.rbf_network`` is the function, and a
submodule of the same name would be reachable only through ``sys.modules``.
"""

from .common import ConvergenceWarning, KernelModel, RBFNetwork
from .interpolation import AUTO_DENSE_MAX, interpolate, partition_of_unity
from .kernel_clustering import KernelKMeansResult, kernel_kmeans, kernel_kmeans_objective
from .local import LocalInterpolant
from .network import GAMMA_CHUNK, TSQR_CHUNK, TSQR_GROUP_CHUNKS, rbf_network
from .pou import PartitionOfUnityInterpolant
from .ridge import AUTO_MEMORY_SHARE, PCG_KERNELS, SOLVERS, default_landmarks, kernel_ridge
from .selection import SelectionResult, interpolate_cv, kernel_ridge_cv

__all__ = [
    "AUTO_DENSE_MAX",
    "AUTO_MEMORY_SHARE",
    "GAMMA_CHUNK",
    "PCG_KERNELS",
    "SOLVERS",
    "TSQR_CHUNK",
    "TSQR_GROUP_CHUNKS",
    "ConvergenceWarning",
    "KernelKMeansResult",
    "KernelModel",
    "LocalInterpolant",
    "PartitionOfUnityInterpolant",
    "RBFNetwork",
    "SelectionResult",
    "default_landmarks",
    "interpolate",
    "interpolate_cv",
    "kernel_kmeans",
    "kernel_kmeans_objective",
    "kernel_ridge",
    "kernel_ridge_cv",
    "partition_of_unity",
    "rbf_network",
]
