"""The kd-tree behind ``knn(method="tree")``: build, exact queries, and the rule that
picks it over the brute force.

Decisions:

- **A balanced kd-tree with an implicit layout** (median splits on the coordinate of
  widest spread, every node's range of points a function of ``n`` alone; see
  :mod:`fastrbf._jit.kdtree`), rather than a sliding-midpoint tree or a grid: the
  node array needs no allocation during the build, so each level (and below a few
  levels, each subtree) is an independent task of fastrbf's worker threads writing
  only its own nodes and its own range of points.  The same tree is built for any
  thread count, and the depth is at most ``log2(n)``, whatever the data (clusters,
  duplicates), which a grid cannot promise.
- **Exact, the brute force's answer bit for bit**: leaf distances are computed by the
  brute force's own tile function, candidates are ordered by (distance, index), and a
  node is skipped only when its deflated lower bound proves that none of its points
  can enter the list (:mod:`fastrbf._jit.kdtree`).
- **When the tree pays** (:func:`use_tree`): pruning works when few leaves are near a
  query, i.e. at low dimension.  Measured on 2 cores (Gaussian data, float64, the
  build included): the tree wins from d = 1 to 8 once the training set has a few
  thousand points, loses at d >= 12; large ``k`` (a sizeable fraction of ``n``) makes
  every query visit most leaves.
"""

from typing import NamedTuple

import numpy as np

from ._jit import kdtree as _jk

#: at most this many points per leaf
LEAF_SIZE = 32
#: top levels built one level at a time (one task per node); the subtrees below are one task each
TOP_LEVELS = 4


class Tree(NamedTuple):
    """A built tree: the points as columns in tree order, their original indices, and
    per node its bounding box and lowest index; leaves at level ``leaf_level``."""

    Xt: np.ndarray
    perm: np.ndarray
    box_lo: np.ndarray
    box_hi: np.ndarray
    min_id: np.ndarray
    leaf_level: int


def leaf_level_for(n: int, leaf_size: int) -> int:
    """The depth of the leaves: the least ``L`` with ``ceil(n / 2**L) <= leaf_size``."""
    L = 0
    while -(-n // (1 << L)) > leaf_size:
        L += 1
    return L


def tree_bytes(n: int, d: int, itemsize: int) -> int:
    """Memory of a tree over n points of d features (the permuted copy of the points,
    their indices and the nodes)."""
    nodes = 2 << leaf_level_for(n, LEAF_SIZE)
    return n * (d * itemsize + 8) + nodes * (2 * d * itemsize + 8)


def build(Xc: np.ndarray, n_threads) -> Tree:
    """The kd-tree of the rows of ``Xc`` (C-contiguous, not modified), with at most
    :data:`LEAF_SIZE` points per leaf."""
    n, d = Xc.shape
    L = leaf_level_for(n, LEAF_SIZE)
    Xt = np.array(Xc.T, order="C", copy=True)
    perm = np.arange(n, dtype=np.int64)
    nodes = (2 << L) - 1
    box_lo = np.empty((nodes, d), dtype=Xc.dtype)
    box_hi = np.empty((nodes, d), dtype=Xc.dtype)
    min_id = np.empty(nodes, dtype=np.int64)
    box_lo[0] = Xc.min(axis=0)
    box_hi[0] = Xc.max(axis=0)
    top = min(L, TOP_LEVELS)
    for level in range(top):
        _jk.build_nodes.run(n_threads, level, level, L, Xt, perm, box_lo, box_hi, min_id)
    _jk.build_nodes.run(n_threads, top, L, L, Xt, perm, box_lo, box_hi, min_id)
    if L > top:
        _jk.fit_nodes.run(n_threads, top, L - 1, box_lo, box_hi, min_id)
    for level in range(min(top, L) - 1, -1, -1):
        _jk.fit_nodes.run(n_threads, level, level, box_lo, box_hi, min_id)
    return Tree(Xt, perm, box_lo, box_hi, min_id, L)


def _deflation(dtype, d):
    """(shrink, slack): ``lb * shrink - slack`` is below every squared distance that the
    brute force computes for a point in a box of lower bound ``lb`` (see
    :mod:`fastrbf._jit.kdtree`): margins of ``4 (d + 2) eps`` relative and
    ``4 (d + 2)`` smallest subnormals, twice what rounding can account for."""
    fi = np.finfo(dtype)
    c = 4 * (d + 2)
    return dtype.type(1 - c * fi.eps), dtype.type(c * fi.smallest_subnormal)


def knn(tree: Tree, Qc: np.ndarray, k: int, n_threads) -> tuple[np.ndarray, np.ndarray]:
    """(indices, squared distances) of the k nearest points of each row of ``Qc``:
    those of the brute force, bit for bit."""
    m, d = Qc.shape
    idx = np.empty((m, k), dtype=np.int64)
    dist = np.empty((m, k), dtype=Qc.dtype)
    shrink, slack = _deflation(Qc.dtype, d)
    leaf = np.empty(m, dtype=np.int64)
    _jk.leaf_of.run(n_threads, Qc, tree.box_lo, tree.box_hi, tree.leaf_level, leaf)
    order = np.argsort(leaf, kind="stable")
    _jk.knn_tree.run(n_threads, Qc, order, tree.Xt, tree.perm, tree.box_lo, tree.box_hi, tree.min_id, tree.leaf_level,
                     shrink, slack, idx, dist)
    return idx, dist


def use_tree(n: int, m: int, d: int, k: int) -> bool:
    """``method="auto"``: whether the tree is expected to beat the brute force (see the
    module docstring)."""
    return d <= 8 and n >= 2000 and m >= 16 and k <= n // 8
