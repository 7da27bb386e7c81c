"""The kd-tree behind ``knn(method="tree")`` and ``radius_neighbors``: build, exact
queries, and the rule that picks the tree over the brute force.

Decisions:

- **A balanced kd-tree with an implicit layout** (median splits on the widest side of
  the node's box, every node's range of points a function of ``n`` alone; see
  :mod:`fastrbf._jit.neighbors.kdtree`), rather than a sliding-midpoint tree or a grid: the
  node array needs no allocation during the build, so each of the top levels, and
  below them each subtree, is an independent task of fastrbf's worker threads
  writing only its own nodes and its own range of points.  The same tree is built
  for any thread count, and the depth is ``ceil(log2(n / 32))`` whatever the data
  (clusters, duplicates, coordinates spanning many orders of magnitude), which a
  uniform grid cannot promise (its cells fill unevenly with clustered data).
  Build and queries are on a par with pykdtree and faster than SciPy's and
  scikit-learn's trees (see docs/performance.md, 'Neighbours and the kd-tree').
- **Queries in the order of their leaves** (the leaf each reaches by following the
  splits, then a stable sort): neighbouring queries share the tree's memory.
- **The list of the k nearest** grows from empty in a buffer of the task (an insertion
  moves only the entries it has, the row of the result is written once).  The insertions
  of the k neighbours themselves bound what the list can gain: seeded bounds, bucketed or
  merged candidates, binary-search insertion, other leaf sizes, a max-heap and a
  branch-free insertion were measured and not taken (see docs/performance.md,
  'Neighbours and the kd-tree').
- **The queries of a leaf share a list of leaves** (k >= :data:`LIST_MIN_K`, d <=
  :data:`LIST_MAX_D`, m >= :data:`LIST_MIN_M`; ``knn_groups`` in
  :mod:`fastrbf._jit.neighbors.kdgroups`): the leaves within ``REACH`` times the previous query's
  k-th squared distance of the group's bounding box, found by one descent per group.
  Each query then gathers, unsorted, the points within ``GUESS`` times that k-th
  distance from the leaves of the list its own bound does not exclude, and orders them
  once (buckets, then insertions within a bucket); with fewer than k it searches again
  within the list's bound, then by the tree. A bound is only a guess: a wrong one costs
  time, never exactness. This skips the descent per query (about 35 inner nodes at k =
  50) and the k-nearest list's insertions of points that are later pushed out (108
  insertions per query for 50 neighbours).  Not for k < 8 (the plain descent is cheap
  there) nor d >= 5 (the lists outgrow ``MAX_LIST``). The bounds ``GUESS`` and ``REACH``
  are within the noise over the swept range. A separate kernel, so that queries with
  k < 8 compile and run the tree search alone (the first call that takes it compiles it
  instead of ``knn_tree``; unchanged for k < 8, d > 4 or fewer than ``LIST_MIN_M``
  queries, where it saves too little to pay for that).  Timings, and the variants
  measured and not taken: docs/performance.md, 'Neighbours and the kd-tree'.
- **Exact, the brute force's answer bit for bit**: leaf distances are computed by the
  brute force's own tile function, candidates are ordered by (distance, index), and a
  node is skipped only when its deflated lower bound proves that none of its points
  can enter the list (:mod:`fastrbf._jit.neighbors.kdtree`).
- **When the tree pays** (:func:`use_tree`, ``method="auto"``): a cost model fitted
  to 224 timings (one thread, process time, Gaussian data, float64; n = 1e3 to 1e5,
  m = 1e3 to 3e4, d = 1 to 8 and 16, k = 1, 8, 50, 100; in ns):

  - the brute force ``0.092 n m (d + 4) + m (21 k + 0.46 k**2) ln(1 + n / k)``: a
    pass over the points, and its sorted list (about ``k ln(n / k)`` insertions of
    up to k moves each), which makes a large k costly;
  - the build ``2.4 n log2(n / 32) (d + 3)``;
  - a query ``166 * 1.445**d * s**(0.101 (d - 2)) + 63 k * 1.125**d * s**(0.086 (d -
    2))`` with ``s = max(n, 2000) / 2000``: pruning weakens as d grows, the more so
    the larger n, and far less for the part that grows with k.

  The tree is taken when it is expected to take less than 0.9 times the brute force,
  and never for k > n / 4.  At every measured point ``"auto"`` is then within 1.13
  times the faster method.  Few queries against many points stay brute force (the
  build would dominate), d = 3 with 1e4 points and queries or more takes the tree at
  any k up to 100, d = 8 takes it only from about 1e5 points, and d = 16 never does
  at these sizes (the tree costs 2 to 5 times the brute force there).  Not refit for
  the list search: where it applies (d <= 4, k >= 8, many queries) the tree is already
  taken from 1e3 points, so the crossover did not move.
"""

import math
from typing import NamedTuple

import numpy as np

from .. import _validation as _v
from .._jit.neighbors import kdgroups as _jg
from .._jit.neighbors import kdtree as _jk
from .._scaling import ldexp, max_abs, shift_for

#: at most this many points per leaf
LEAF_SIZE = 32
#: the list search of a query first gathers the points within this times the previous
#: query's k-th squared distance
GUESS = 1.3
#: the list of a group of queries holds the leaves within this times the previous
#: query's k-th squared distance of their bounding box
REACH = 1.6
#: the list search for k at least this (below, the tree search is as fast)...
LIST_MIN_K = 8
#: ... and at most this many features (beyond, the lists outgrow MAX_LIST)...
LIST_MAX_D = 4
#: ... and at least this many queries (fewer: it would save less than its first
#: compilation costs)
LIST_MIN_M = 4096
#: top levels built one level at a time (one task per node); the subtrees below are one task each
TOP_LEVELS = 4


class Tree(NamedTuple):
    """A built tree: the points as columns in tree order, their original indices, per
    node its bounding box and lowest index, per inner node the coordinate and value of
    its split; leaves at level ``leaf_level``."""

    Xt: np.ndarray
    perm: np.ndarray
    box_lo: np.ndarray
    box_hi: np.ndarray
    min_id: np.ndarray
    split_dim: np.ndarray
    split_val: np.ndarray
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
    return n * (d * itemsize + 8) + nodes * (2 * d * itemsize + 16 + itemsize)


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
    split_dim = np.zeros(nodes // 2, dtype=np.int64)
    split_val = np.zeros(nodes // 2, dtype=Xc.dtype)
    box_lo[0] = Xt.min(axis=1)  # along the rows of Xt: contiguous, fast
    box_hi[0] = Xt.max(axis=1)
    top = min(L, TOP_LEVELS)
    for level in range(top):
        _jk.build_nodes.run(n_threads, level, level, L, Xt, perm, box_lo, box_hi, min_id, split_dim, split_val)
    _jk.build_nodes.run(n_threads, top, L, L, Xt, perm, box_lo, box_hi, min_id, split_dim, split_val)
    if L > top:
        _jk.fit_nodes.run(n_threads, top, L - 1, box_lo, box_hi, min_id)
    for level in range(min(top, L) - 1, -1, -1):
        _jk.fit_nodes.run(n_threads, level, level, box_lo, box_hi, min_id)
    return Tree(Xt, perm, box_lo, box_hi, min_id, split_dim, split_val, L)


def _deflation(dtype, d):
    """(shrink, slack): ``lb * shrink - slack`` is below every squared distance that the
    brute force computes for a point in a box of lower bound ``lb`` (see
    :mod:`fastrbf._jit.neighbors.kdtree`): margins of ``4 (d + 2) eps`` relative and
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
    _jk.leaf_of.run(n_threads, Qc, tree.split_dim, tree.split_val, tree.leaf_level, leaf)
    order = np.argsort(leaf, kind="stable")
    args = (tree.Xt, tree.perm, tree.box_lo, tree.box_hi, tree.min_id, tree.leaf_level, shrink, slack)
    if k >= LIST_MIN_K and d <= LIST_MAX_D and m >= LIST_MIN_M:
        f = Qc.dtype.type
        _jg.knn_groups.run(n_threads, Qc, order, leaf, *args, f(GUESS), f(REACH), idx, dist)
    else:
        _jk.knn_tree.run(n_threads, Qc, order, *args, idx, dist)
    return idx, dist


class Index(NamedTuple):
    """A tree over training points kept for queries that come in blocks (the dask
    ``knn``): the points (C-contiguous, of the result dtype), their largest magnitude,
    the power-of-two exponent ``t`` the tree was built at (points times ``2**-t``) and
    the tree."""

    Xc: np.ndarray
    amax: float
    t: int
    tree: Tree


def index(Xc: np.ndarray, n_threads) -> Index:
    """The :class:`Index` of the rows of ``Xc``, scaled as ``knn`` scales points
    alone (:func:`fastrbf._scaling.shift_for`)."""
    amax = max_abs(Xc)
    t = shift_for(amax, Xc.dtype, Xc.shape[1])
    return Index(Xc, amax, t, build(ldexp(Xc, -t), n_threads))


def knn_index(ix: Index, Qc: np.ndarray, k: int, n_threads) -> tuple[np.ndarray, np.ndarray]:
    """(indices, squared distances) of the k nearest points of ``ix`` to each row of
    ``Qc`` (of the same dtype): ``knn(X, Qc, k, method="tree")`` bit for bit.  Points
    and queries are scaled by the one exponent that ``knn`` takes for both; the tree is
    built again only when the queries change it (queries far larger than the points)."""
    t = shift_for(max(ix.amax, max_abs(Qc)), Qc.dtype, Qc.shape[1])
    tree = ix.tree if t == ix.t else build(ldexp(ix.Xc, -t), n_threads)
    idx, dist = knn(tree, ldexp(Qc, -t), k, n_threads)
    return idx, ldexp(dist, 2 * t)


def radius(tree: Tree, Qc: np.ndarray, r2, n_threads) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr, indices, squared distances): the points within squared distance ``r2``
    (of the dtype of ``Qc``) of each row of ``Qc``, query i's in ``indptr[i]:indptr[i +
    1]``, ascending distance, ties by index.  Two passes (count, then fill), so the
    result takes no more memory than it needs."""
    m, d = Qc.shape
    shrink, slack = _deflation(Qc.dtype, d)
    indptr = np.zeros(m + 1, dtype=np.int64)
    none_i, none_d = np.empty(0, dtype=np.int64), np.empty(0, dtype=Qc.dtype)
    args = (Qc, tree.Xt, tree.perm, tree.box_lo, tree.box_hi, tree.leaf_level, shrink, slack, r2)
    _jk.radius_tree.run(n_threads, *args, False, indptr, none_i, none_d)
    np.cumsum(indptr, out=indptr)
    total = int(indptr[-1])
    _v.check_memory(total * (8 + Qc.dtype.itemsize), f"radius_neighbors with {total} neighbours in all",
                    "query in batches of fewer points (`Xq`) or use a smaller `radius`.")
    idx = np.empty(total, dtype=np.int64)
    dist = np.empty(total, dtype=Qc.dtype)
    _jk.radius_tree.run(n_threads, *args, True, indptr, idx, dist)
    return indptr, idx, dist


def use_tree(n: int, m: int, d: int, k: int) -> bool:
    """``method="auto"``: whether the tree (build and queries) is expected to take less
    than 0.9 times the brute force, by the cost model of the module docstring."""
    if k > n // 4 or d > 64:  # (beyond 64 features the tree's query term alone exceeds the brute force)
        return False
    brute = 0.092 * n * m * (d + 4) + m * (21.0 * k + 0.46 * k * k) * math.log1p(n / k)
    build = 2.4 * n * max(1.0, math.log2(n / LEAF_SIZE)) * (d + 3)
    s = max(n, 2000) / 2000
    e = max(0, d - 2)
    query = 166.0 * 1.445 ** d * s ** (0.101 * e) + 63.0 * k * 1.125 ** d * s ** (0.086 * e)
    return build + m * query < 0.9 * brute
