"""Nearest neighbours and kernel sums: brute force, the kd-tree, Nadaraya-Watson.

``_knn`` holds the public functions (brute force on the micro-kernels, or the tree);
``_kdtree`` builds the tree and answers its queries.  The numba kernels are in
``fastrbf._jit.neighbors``.
"""

from ._knn import knn, knn_predict, nadaraya_watson, radius_neighbors, rbf_vote

__all__ = ["knn", "knn_predict", "nadaraya_watson", "radius_neighbors", "rbf_vote"]
