"""The kd-tree kernels: a balanced tree built in place, and exact k-nearest and
radius queries on it.

Layout: the tree is implicit.  Level ``l`` has ``2**l`` nodes, node ``j`` of level
``l`` (heap number ``2**l - 1 + j``) owns the points ``floor(j n / 2**l) <= p <
floor((j + 1) n / 2**l)`` of the permuted data, so every node's range depends only on
``n`` and the build needs no allocation: each node splits its range at its middle
(a quickselect on the widest side of its box) and its children are ready.  The
leaves are the ``2**L`` nodes of the last level.  Per node: the tight bounding box of
its points and their lowest original index (filled bottom up once the leaves are
built); per inner node the coordinate and value of its split.

Distances to the points of a leaf are :func:`.tiles.chunk_row` over the leaf's
columns of the permuted data, the arithmetic of the brute force (``knn_rows``), so
the squared distances are the same bits.  A candidate enters a query's list when it
is lexicographically smaller in (distance, index) than the k-th, so the list is the k
smallest pairs whatever the order of the visit: the brute force's result.

A node is pruned only when its lower bound proves that none of its points can enter:
the bound (the distance to the box) is deflated, ``lb * shrink - slack``, by more
than the rounding of both the bound and the brute-force sum can make them differ
(relative ``(d + 2) eps`` each, and a few times the smallest subnormal), so rounding
never prunes a point that the brute force keeps (on this arithmetic the plain bound
is already below every distance in the box; the margin keeps that true whatever
contractions into FMA the compiler picks).  A deflated bound below 0 counts as 0 (a
sum of squares); with a bound equal to the k-th distance, the node is pruned only if
every index in it is higher than the k-th's (which prunes exact duplicates at
distance 0).  A node taken from the stack whose box is one point (duplicates) is
judged by the exact distance of that point, the same for all its points, so that many
copies of a point tied with the k-th are pruned too (one call site: each copy of the
brute-force arithmetic costs compile time) (2e5 copies of one point, 2 000 queries: 1.3 ->
0.3 s).  The radius query keeps the points whose squared distance (the same
arithmetic) is ``<= r2`` and skips a node whose deflated bound exceeds ``r2``; its
count pass takes a node whole when the bound to the farthest corner of its box,
inflated by the same margins, is ``<= r2`` (so the count, and the memory check of the
result after it, cost no more than the search, however many pairs are within the
radius).

The list search of the queries that share a leaf, for k >= 8 at low dimension with
many queries, is :mod:`.kdgroups`; where its lists fail, it takes the search of this
module (``tree_rows``, inlined into both kernels).
"""

import numpy as np

from .._decorators import jit, jit_inline, pjit
from ..tiles import chunk_row

QB = 16  # query rows per task


@jit
def node_range(n, level, j):
    # the points [s, e) of node j of `level`
    return (j * n) >> level, ((j + 1) * n) >> level


SAMPLE = 31  # pivot sample of a large range


@jit
def _partition(Xt, perm, key, a, b, pivot, strict):
    # move the columns a:b of Xt (and perm) whose key is < pivot (<= with strict False)
    # to the front; their number.  Branch-free: every column is swapped with the end
    # of the front part, which it joins when it compares.
    d = Xt.shape[0]
    st = a
    for i in range(a, b):
        v = key[i]
        for r in range(d):
            t = Xt[r, i]
            Xt[r, i] = Xt[r, st]
            Xt[r, st] = t
        t2 = perm[i]
        perm[i] = perm[st]
        perm[st] = t2
        st += (v < pivot) if strict else (v <= pivot)
    return st


@jit
def _select(Xt, perm, dim, s, e, mid):
    # permute the columns s:e of Xt (and perm) so that column `mid` holds the value it
    # would hold sorted along row `dim`, no larger value before it, no smaller after.
    # Quickselect with a pivot of rank about that of `mid` in an evenly spaced sample
    # (median of three in a short range), partitioned branch-free: deterministic,
    # and ties (duplicates) cost one more pass, never a quadratic time.
    key = Xt[dim]
    a = s
    b = e
    smp = np.empty(SAMPLE, dtype=Xt.dtype)
    while b - a > 1:
        if b - a > 16 * SAMPLE:
            for t in range(SAMPLE):
                smp[t] = key[a + ((b - 1 - a) * t) // (SAMPLE - 1)]
            for t in range(1, SAMPLE):  # insertion sort (np.sort would cost compile time)
                v = smp[t]
                u = t
                while u > 0 and smp[u - 1] > v:
                    smp[u] = smp[u - 1]
                    u -= 1
                smp[u] = v
            pivot = smp[((mid - a) * (SAMPLE - 1)) // (b - 1 - a)]
        else:
            x = key[a]
            y = key[a + (b - a) // 2]
            z = key[b - 1]
            if x > y:
                x, y = y, x
            if y > z:
                y = z
            pivot = y if y > x else x
        st = _partition(Xt, perm, key, a, b, pivot, np.bool_(True))  # [a, st) < pivot
        if mid < st:
            b = st
        elif st > a:
            a = st
        else:  # pivot is the least key: split off the keys equal to it (at least one)
            st = _partition(Xt, perm, key, a, b, pivot, np.bool_(False))
            if mid < st:
                return
            a = st


@pjit(tasks=lambda level, *_: 1 << level,
      work=lambda level, last, leaf_level, Xt, *_: Xt.shape[1] * (Xt.shape[0] + 2) * (last - level + 1) * 8)
def build_nodes(lo, hi, level, last, leaf_level, Xt, perm, box_lo, box_hi, min_id, split_dim, split_val):
    # IN: nodes lo:hi of `level`, with a box that holds their points; they and their
    #     descendants down to level `last` are built: an inner node is split at its
    #     middle on the widest side of its box, and its children get its box cut at
    #     the split value; a leaf gets the tight box of its points and its lowest index
    #     (the inner nodes get theirs from fit_nodes)
    # IN/OUT: Xt (d, n) points as columns and perm (n,) their original indices,
    #     permuted in place within each node's range
    # OUT: box_lo, box_hi (n_nodes, d) bounding boxes, min_id (n_nodes,) lowest index,
    #      split_dim, split_val (inner nodes,) the coordinate and value of the split
    d = Xt.shape[0]
    n = Xt.shape[1]
    for lev in range(level, last + 1):
        f = 1 << (lev - level)
        for j in range(lo * f, hi * f):
            node = (1 << lev) - 1 + j
            s, e = node_range(n, lev, j)
            if lev < leaf_level:
                dim = np.int64(0)  # not literals (here, strict above, c below): each would compile a helper again
                w = box_hi[node, 0] - box_lo[node, 0]
                for r in range(1, d):
                    w2 = box_hi[node, r] - box_lo[node, r]
                    if w2 > w:
                        dim = r
                        w = w2
                mid = ((2 * j + 1) * n) >> (lev + 1)
                _select(Xt, perm, dim, s, e, mid)
                split_dim[node] = dim
                split_val[node] = Xt[dim, mid]
                a = 2 * node + 1
                for r in range(d):
                    box_lo[a, r] = box_lo[node, r]
                    box_hi[a, r] = box_hi[node, r]
                    box_lo[a + 1, r] = box_lo[node, r]
                    box_hi[a + 1, r] = box_hi[node, r]
                box_hi[a, dim] = Xt[dim, mid]
                box_lo[a + 1, dim] = Xt[dim, mid]
                continue
            for r in range(d):
                row = Xt[r]
                a = row[s]
                b = row[s]
                for p in range(s + 1, e):
                    v = row[p]
                    a = v if v < a else a
                    b = v if v > b else b
                box_lo[node, r] = a
                box_hi[node, r] = b
            m = perm[s]
            for p in range(s + 1, e):
                m = perm[p] if perm[p] < m else m
            min_id[node] = m


@pjit(tasks=lambda level, *_: 1 << level,
      work=lambda level, last, box_lo, *_: box_lo.shape[1] * (2 << last))
def fit_nodes(lo, hi, level, last, box_lo, box_hi, min_id):
    # IN: nodes lo:hi of `level` and their descendants down to level `last` (inner
    #     nodes; the level below is built)
    # OUT: their boxes and lowest indices, those of their children merged (bottom up)
    d = box_lo.shape[1]
    for lev in range(last, level - 1, -1):
        f = 1 << (lev - level)
        for j in range(lo * f, hi * f):
            node = (1 << lev) - 1 + j
            a = 2 * node + 1
            for r in range(d):
                box_lo[node, r] = min(box_lo[a, r], box_lo[a + 1, r])
                box_hi[node, r] = max(box_hi[a, r], box_hi[a + 1, r])
            min_id[node] = min(min_id[a], min_id[a + 1])


@jit
def box_lb(q, box_lo, box_hi, node):
    # squared distance from q to the box of `node` (rounded; deflated by the caller)
    s = q[0] - q[0]
    for r in range(q.shape[0]):
        x = q[r]
        t = box_lo[node, r] - x
        u = x - box_hi[node, r]
        t = u if u > t else t
        t = t if t > 0 else t - t
        s += t * t
    return s


@jit_inline
def box_ub(q, box_lo, box_hi, node):
    # squared distance from q to the farthest corner of the box of `node` (rounded;
    # inflated by the caller)
    s = q[0] - q[0]
    for r in range(q.shape[0]):
        x = q[r]
        t = x - box_lo[node, r]
        u = box_hi[node, r] - x
        t = u if u > t else t
        s += t * t
    return s


@jit
def prunable(lb, shrink, slack, node, min_id, kd, ki):
    # True when no point of `node` can enter a list whose k-th entry is (kd, ki): every
    # distance is >= b (the deflated bound, or 0: a sum of squares)
    b = lb * shrink - slack
    b = b if b > 0 else b - b
    return b > kd or (b == kd and min_id[node] > ki)


@jit
def duplicates_out(Xq, i, Xt, box_lo, box_hi, min_id, node, n, o, kd, ki):
    # for a node whose points are all the same point (duplicates: a box of one point,
    # whose deflated bound is below its exact distance), True when that distance, by the
    # brute-force arithmetic and so the same for all of them, cannot enter the list
    for r in range(Xt.shape[0]):
        if box_lo[node, r] != box_hi[node, r]:
            return False
    level = 0
    while (2 << level) <= node + 1:
        level += 1
    s = node_range(n, level, node + 1 - (1 << level))[0]
    chunk_row(Xq, i, Xt, s, s + 1, np.bool_(False), o)
    return o[0] > kd or (o[0] == kd and min_id[node] > ki)


@jit
def insert(v, p_id, c, dist, idx):
    # insert (v, p_id) into the list of c entries sorted by (distance, index), dropping
    # the last when it holds k already (the entries past c are not read)
    p = c if c < dist.shape[0] else dist.shape[0] - 1
    while p > 0 and (dist[p - 1] > v or (dist[p - 1] == v and idx[p - 1] > p_id)):
        dist[p] = dist[p - 1]
        idx[p] = idx[p - 1]
        p -= 1
    dist[p] = v
    idx[p] = p_id


@jit_inline
def tree_rows(Xq, order, r0, r1, Xt, perm, box_lo, box_hi, min_id, leaf_level, shrink, slack, o, st_node, st_lb, di,
              ii, idx, dist):
    # rows i = order[r0:r1] of idx and dist: the k nearest of query i (k = len(di)),
    # sorted by (distance, index), by a depth-first descent, nearer child first, that
    # keeps the sorted list of the k nearest so far in di, ii (it grows from empty);
    # o, st_node, st_lb scratch (as in knn_tree).  Inlined at numba IR level into its
    # two callers, knn_tree (a task's rows) and kdgroups.knn_groups (one query at a
    # time); a range, so that knn_tree binds its arrays once per task, not per query
    n = Xt.shape[1]
    k = di.shape[0]
    first_leaf = (1 << leaf_level) - 1
    for r in range(r0, r1):
        i = order[r]
        q = Xq[i]
        di[k - 1] = np.inf  # the k-th stays this sentinel until the list is full
        ii[k - 1] = n
        kd = di[k - 1]
        ki = ii[k - 1]
        c = np.int64(0)
        sp = 1
        st_node[0] = 0
        st_lb[0] = q[0] - q[0]
        while sp > 0:
            sp -= 1
            node = st_node[sp]
            lb = st_lb[sp]
            if prunable(lb, shrink, slack, node, min_id, kd, ki) or (
                    box_lo[node, 0] == box_hi[node, 0] and duplicates_out(Xq, i, Xt, box_lo, box_hi, min_id, node,
                                                                           n, o, kd, ki)):
                continue
            while node < first_leaf:
                a = 2 * node + 1
                la = box_lb(q, box_lo, box_hi, a)
                lb_b = box_lb(q, box_lo, box_hi, a + 1)
                near = a
                far = a + 1
                if lb_b < la:
                    near = a + 1
                    far = a
                    la, lb_b = lb_b, la
                if not prunable(lb_b, shrink, slack, far, min_id, kd, ki):
                    st_node[sp] = far
                    st_lb[sp] = lb_b
                    sp += 1
                if prunable(la, shrink, slack, near, min_id, kd, ki):
                    node = -1
                    break
                node = near
            if node < 0:
                continue
            s, e = node_range(n, leaf_level, node - first_leaf)
            chunk_row(Xq, i, Xt, s, e, np.bool_(False), o)
            for p in range(e - s):
                v = o[p]
                if v <= kd:
                    pid = perm[s + p]
                    if v < kd or pid < ki:
                        insert(v, pid, c, di, ii)
                        c += 1
                        kd = di[k - 1]
                        ki = ii[k - 1]
        for t in range(k):
            dist[i, t] = di[t]
            idx[i, t] = ii[t]


@pjit(tasks=lambda Xq, *_: (Xq.shape[0] + QB - 1) // QB,
      work=lambda Xq, Xt, perm, box_lo, *_: Xq.shape[0] * (Xt.shape[0] + 2) * 64 * max(1, box_lo.shape[0].bit_length()))
def knn_tree(lo, hi, Xq, order, Xt, perm, box_lo, box_hi, min_id, leaf_level, shrink, slack, idx, dist):
    # IN: tasks lo:hi (QB query rows each, taken in `order`), Xq (m, d) queries, the
    #     tree (build_nodes) with leaves at `leaf_level`, the deflation of the bounds
    #     lb * shrink - slack
    # OUT: idx (m, k) int64, dist (m, k) squared distances, ascending, ties by index
    m = Xq.shape[0]
    n = Xt.shape[1]
    k = idx.shape[1]
    o = np.empty(((n - 1) >> leaf_level) + 2, dtype=Xt.dtype)
    st_node = np.empty(leaf_level + 2, dtype=np.int64)
    st_lb = np.empty(leaf_level + 2, dtype=Xt.dtype)
    di = np.empty(k, dtype=Xt.dtype)  # the list, in cache, copied to the query's row at the end
    ii = np.empty(k, dtype=np.int64)
    tree_rows(Xq, order, lo * QB, min(m, hi * QB), Xt, perm, box_lo, box_hi, min_id, leaf_level, shrink, slack, o,
              st_node, st_lb, di, ii, idx, dist)


@pjit(tasks=lambda Xq, *_: (Xq.shape[0] + QB - 1) // QB,
      work=lambda Xq, split_dim, *_: Xq.shape[0] * 4 * max(1, split_dim.shape[0].bit_length()))
def leaf_of(lo, hi, Xq, split_dim, split_val, leaf_level, leaf):
    # IN: tasks lo:hi (QB query rows each), Xq (m, d), the tree's splits
    # OUT: leaf (m,) the leaf reached by descending on the side of each split (the
    #      order in which queries are answered: neighbouring queries share the tree's
    #      memory)
    m = Xq.shape[0]
    first_leaf = (1 << leaf_level) - 1
    for i in range(lo * QB, min(m, hi * QB)):
        q = Xq[i]
        node = 0
        while node < first_leaf:
            a = 2 * node + 1
            node = a + 1 if q[split_dim[node]] >= split_val[node] else a
        leaf[i] = node - first_leaf


@jit
def _sort_pairs(dist, idx):
    # sort (dist, idx) by distance, ties by index
    o1 = np.argsort(idx)
    d1 = dist[o1]
    i1 = idx[o1]
    o2 = np.argsort(d1, kind="mergesort")  # stable: equal distances keep the index order
    for p in range(o2.shape[0]):
        dist[p] = d1[o2[p]]
        idx[p] = i1[o2[p]]


@pjit(tasks=lambda Xq, *_: (Xq.shape[0] + QB - 1) // QB,
      work=lambda Xq, Xt, perm, box_lo, *_: Xq.shape[0] * (Xt.shape[0] + 2) * 64
      * max(1, box_lo.shape[0].bit_length()))
def radius_tree(lo, hi, Xq, Xt, perm, box_lo, box_hi, leaf_level, shrink, slack, r2, fill, indptr, idx, dist):
    # IN: tasks lo:hi (QB query rows each), Xq (m, d) queries, the tree (build_nodes),
    #     the deflation of the bounds lb * shrink - slack, r2 the squared radius, fill
    # OUT: fill False: indptr[i + 1] = the number of points with squared distance <= r2
    #      fill True (indptr the cumulated counts): idx, dist[indptr[i]:indptr[i + 1]]
    #      those points and their squared distances, ascending, ties by index
    # The count takes a node whole when the bound to its farthest corner, inflated as
    # the lower bound is deflated (ub * (2 - shrink) + slack), is <= r2: every point of
    # it then has a computed distance <= r2, so the count is the fill's, in a time that
    # does not grow with the number of neighbours (every pair within the radius: O(1)
    # per query, and the caller's memory check comes before any long loop).
    m = Xq.shape[0]
    n = Xt.shape[1]
    first_leaf = (1 << leaf_level) - 1
    o = np.empty(((n - 1) >> leaf_level) + 2, dtype=Xt.dtype)
    st_node = np.empty(leaf_level + 2, dtype=np.int64)
    grow = 2 - shrink
    for i in range(lo * QB, min(m, hi * QB)):
        q = Xq[i]
        c = indptr[i] if fill else 0
        sp = 1
        st_node[0] = 0
        while sp > 0:
            sp -= 1
            node = st_node[sp]
            b = box_lb(q, box_lo, box_hi, node) * shrink - slack
            if b > r2:
                continue
            if not fill and box_ub(q, box_lo, box_hi, node) * grow + slack <= r2:
                level = 0
                while (1 << (level + 1)) - 1 <= node:  # the level of heap number `node`
                    level += 1
                s, e = node_range(n, level, node - ((1 << level) - 1))
                c += e - s
                continue
            if node < first_leaf:
                st_node[sp] = 2 * node + 2
                st_node[sp + 1] = 2 * node + 1
                sp += 2
                continue
            s, e = node_range(n, leaf_level, node - first_leaf)
            chunk_row(Xq, i, Xt, s, e, np.bool_(False), o)
            for p in range(e - s):
                if o[p] <= r2:
                    if fill:
                        idx[c] = perm[s + p]
                        dist[c] = o[p]
                    c += 1
        if fill:
            _sort_pairs(dist[indptr[i]:c], idx[indptr[i]:c])
        else:
            indptr[i + 1] = c
