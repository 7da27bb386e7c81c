"""The kd-tree's list search: the k nearest of the queries that share a leaf, from
one list of nearby leaves per leaf (the tree, its layout and its exactness rules are
:mod:`.kdtree`'s).

The list search (``knn_groups``, for k >= 8 at low dimension with many queries; see
:mod:`fastrbf.neighbors._kdtree` for the measurements) answers the queries that share a leaf (a
group: they are consecutive in leaf order) from one list of leaves: those whose deflated
lower bound from the bounding box of the group is ``<= R`` (a bound from the previous
query's k-th distance). Each query scans the leaves of the list whose deflated bound
from it is ``<= g`` (``g <= R``), and gathers, unsorted, every point with distance ``<=
g`` (no point of another leaf can be that near: its bound from the group's box exceeds
``R``). With k or more of them, its k nearest are among them (any other point is farther
than g), so the result is the brute force's; they are ordered by buckets of ``[0, g]``
and an insertion that moves entries within their bucket only. With fewer, the search is
done again within R, then by the tree. The bound is a guess: a wrong one costs time,
never exactness. Separate kernel, so that the queries with small k compile and run
the tree search alone (``kdtree.knn_tree``); both kernels inline the same search,
``kdtree.tree_rows``.
"""

import numpy as np

from .._decorators import jit_inline, pjit
from ..tiles import chunk_row
from .kdtree import QB, insert, node_range, tree_rows

#: most leaves in the list of a group of queries (a longer list: the tree search)
MAX_LIST = 128
#: most consecutive leaves whose distances are computed by one call
RUN = 8


@jit_inline
def _group_leaves(Xq, order, r0, r1, box_lo, box_hi, leaf_level, shrink, slack, R, glo, ghi, st_node, leaves, lbox):
    # the leaves (ascending) whose deflated lower bound from the bounding box of the
    # queries order[r0:r1] is <= R: every point of another leaf is farther than R from
    # each of these queries; their number, or -1 when they do not fit in `leaves`;
    # lbox (2 d, len(leaves)) their boxes, lower corners then upper, a column each
    d = Xq.shape[1]
    for t in range(d):
        glo[t] = Xq[order[r0], t]
        ghi[t] = glo[t]
    for r in range(r0 + 1, r1):
        for t in range(d):
            x = Xq[order[r], t]
            glo[t] = x if x < glo[t] else glo[t]
            ghi[t] = x if x > ghi[t] else ghi[t]
    first_leaf = (1 << leaf_level) - 1
    nl = 0
    sp = 1
    st_node[0] = 0
    while sp > 0:
        sp -= 1
        node = st_node[sp]
        s = R - R
        for t in range(d):  # as box_lb, from the nearest point of the box of queries
            a = box_lo[node, t] - ghi[t]
            u = glo[t] - box_hi[node, t]
            a = u if u > a else a
            a = a if a > 0 else a - a
            s += a * a
        if s * shrink - slack > R:
            continue
        if node < first_leaf:
            st_node[sp] = 2 * node + 2
            st_node[sp + 1] = 2 * node + 1
            sp += 2
        elif nl == leaves.shape[0]:
            return -1
        else:
            leaves[nl] = node
            for t in range(d):
                lbox[t, nl] = box_lo[node, t]
                lbox[d + t, nl] = box_hi[node, t]
            nl += 1
    return nl


@jit_inline
def _sort_into(bd, bi, c, g, bk, cb, td, ti, drow, irow):
    # drow, irow (k,) = the k first of the c >= k candidates (bd, bi) by (distance,
    # index); every bd <= g.  Distributed into c buckets of [0, g] (a monotone map, so
    # a bucket's entries are below the next one's), those up to the bucket of the k-th
    # only, then inserted in that order (each moves within its bucket only).
    k = drow.shape[0]
    scale = c / g
    if not scale < np.inf:  # g subnormal: one bucket
        scale = 0.0
    for b in range(c + 1):
        cb[b] = 0
    for j in range(c):
        b = np.int64(bd[j] * scale)
        b = b if b < c - 1 else c - 1
        bk[j] = b
        cb[b + 1] += 1
    last = c - 1
    for b in range(c):
        cb[b + 1] += cb[b]
        if cb[b + 1] >= k:
            last = b
            break
    for j in range(c):
        b = bk[j]
        if b <= last:
            p = cb[b]
            cb[b] = p + 1
            td[p] = bd[j]
            ti[p] = bi[j]
    for j in range(cb[last]):
        v = td[j]
        if j < k or v < drow[k - 1] or (v == drow[k - 1] and ti[j] < irow[k - 1]):
            insert(v, ti[j], j, drow, irow)


@jit_inline
def _list_search(Xq, i, Xt, perm, leaf_level, shrink, slack, leaves, lbv, nl, g, o, bd, bi, bk, cb, td, ti, dist,
                 idx):
    # the list search of query i: the points of the leaves leaves[:nl] (lbv: the
    # lower bounds of their distances) with squared distance <= g, gathered unsorted;
    # when there are k or more they hold the k nearest (every point within g is
    # there): their number, rows i of dist and idx written; otherwise fewer than k
    # (-1: more than bd holds)
    n = Xt.shape[1]
    first_leaf = (1 << leaf_level) - 1
    c = np.int64(0)
    t = 0
    while t < nl:
        node = leaves[t]
        t += 1
        if lbv[t - 1] * shrink - slack > g:
            continue
        s, e = node_range(n, leaf_level, node - first_leaf)
        first = node
        while t < nl and leaves[t] == node + 1 and node + 1 - first < RUN:  # consecutive leaves: one call
            if lbv[t] * shrink - slack > g:
                break
            node = leaves[t]
            e = node_range(n, leaf_level, node - first_leaf)[1]
            t += 1
        if c + (e - s) > bd.shape[0]:
            return np.int64(-1)
        chunk_row(Xq, i, Xt, s, e, np.bool_(False), o)
        for p in range(e - s):
            v = o[p]
            bd[c] = v
            bi[c] = perm[s + p]
            c += v <= g
    if c >= idx.shape[1]:
        _sort_into(bd, bi, c, g, bk, cb, td, ti, dist[i], idx[i])
    return c


@pjit(tasks=lambda Xq, *_: (Xq.shape[0] + QB - 1) // QB,
      work=lambda Xq, order, leaf, Xt, perm, box_lo, *_: Xq.shape[0] * (Xt.shape[0] + 2) * 64
      * max(1, box_lo.shape[0].bit_length()))
def knn_groups(lo, hi, Xq, order, leaf, Xt, perm, box_lo, box_hi, min_id, leaf_level, shrink, slack, guess, reach,
               idx, dist):
    # As kdtree.knn_tree, with leaf (m,) the leaf of each query (`order` sorts it) and the
    # factors guess and reach of the list search.
    #
    # The queries of a leaf (a group) share a list: the leaves within R = reach * (the
    # previous query's k-th distance) of their bounding box.  A query of the group
    # takes the list search within g = min(R, guess * the previous k-th), then within
    # R; the tree search when that finds fewer than k, and for a query alone in its
    # leaf.
    m = Xq.shape[0]
    n = Xt.shape[1]
    k = idx.shape[1]
    lmax = ((n - 1) >> leaf_level) + 2
    o = np.empty(RUN * lmax, dtype=Xt.dtype)
    st_node = np.empty(leaf_level + 2, dtype=np.int64)
    st_lb = np.empty(leaf_level + 2, dtype=Xt.dtype)
    di = np.empty(k, dtype=Xt.dtype)
    ii = np.empty(k, dtype=np.int64)
    cap = 4 * k + RUN * lmax  # candidates of the list search (more: the tree search)
    bd = np.empty(cap, dtype=Xt.dtype)
    bi = np.empty(cap, dtype=np.int64)
    td = np.empty(cap, dtype=Xt.dtype)
    ti = np.empty(cap, dtype=np.int64)
    bk = np.empty(cap, dtype=np.int64)
    cb = np.empty(cap + 1, dtype=np.int64)
    leaves = np.empty(MAX_LIST, dtype=np.int64)
    lbox = np.empty((2 * Xq.shape[1], MAX_LIST), dtype=Xt.dtype)
    lbv = np.empty(MAX_LIST, dtype=Xt.dtype)
    glo = np.empty(Xq.shape[1], dtype=Xt.dtype)
    ghi = np.empty(Xq.shape[1], dtype=Xt.dtype)
    gp = shrink - shrink  # the previous query's k-th squared distance (0: none)
    R = gp
    g_end = lo * QB
    nl = -1
    built = 0
    for r in range(lo * QB, min(m, hi * QB)):
        i = order[r]
        if r == g_end:  # a new group
            g_end = r + 1
            while g_end < m and g_end < hi * QB and leaf[order[g_end]] == leaf[i]:
                g_end += 1
            nl = -1
            built = 0
        if nl < 0 and built < 2 and g_end - r >= 2 and gp > 0 and reach * gp < np.inf:
            R = reach * gp
            nl = _group_leaves(Xq, order, r, g_end, box_lo, box_hi, leaf_level, shrink, slack, R, glo, ghi, st_node,
                               leaves, lbox)
            built += 1
        if nl >= 0:
            q = Xq[i]
            d = Xq.shape[1]
            for t in range(nl):  # the lower bounds of the list, as box_lb (vectorised)
                lbv[t] = R - R
            for u in range(d):
                x = q[u]
                for t in range(nl):
                    a = lbox[u, t] - x
                    b = x - lbox[d + u, t]
                    a = b if b > a else a
                    a = a if a > 0 else a - a
                    lbv[t] += a * a
            g = guess * gp
            g = g if g < R else R
            while True:  # within g, then within R
                c = _list_search(Xq, i, Xt, perm, leaf_level, shrink, slack, leaves, lbv, nl, g, o, bd, bi, bk, cb, td,
                                 ti, dist, idx)
                if c >= k or c < 0 or g == R:
                    break
                g = R
            if c >= k:
                gp = dist[i, k - 1]
                continue
            nl = -1  # the list failed this query: a new one from its k-th distance
        tree_rows(Xq, order, r, r + 1, Xt, perm, box_lo, box_hi, min_id, leaf_level, shrink, slack, o, st_node, st_lb,
                  di, ii, idx, dist)
        gp = dist[i, k - 1]
