"""k-means: seeding, Lloyd's assignment and update steps, and the fitting loop.

``_kmeans`` holds the public functions and the loop; ``_seeding`` k-means++;
``_assign`` the dense assignment (its path chosen by ``K * d`` and ``d``); ``_bounded``
the Hamerly-bounded iterations; ``_sparse`` scipy.sparse data (CSR, never densified);
``_rules`` the rules every backend (here and ``fastrbf.dask``) shares.  The numba
kernels are in ``fastrbf._jit.cluster``.
"""

from ._kmeans import EmptyClusterError, KMeansResult, kmeans, kmeans_plusplus, lloyd_assign, lloyd_update

__all__ = ["EmptyClusterError", "KMeansResult", "kmeans", "kmeans_plusplus", "lloyd_assign", "lloyd_update"]
