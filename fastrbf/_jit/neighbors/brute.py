"""Fused neighbour kernels: k nearest neighbours, and kernel sums relative to the
nearest training point (Nadaraya-Watson, the RBF vote), never an n_query x n matrix.

Distances are those of :func:`fastrbf._jit.tiles.chunk_row` (the arithmetic of
``sqdist``), computed in tiles of about ``JB`` training points per query row and consumed
while in cache (``knn`` by the register-blocked micro-kernels, ``QB`` query rows at a
time, with the same bits).  Each task (``lo:hi`` of the top-level kernels) owns whole query rows:
results do not depend on the thread count.
"""

import numpy as np

from .._decorators import jit, jit_inline, jit_reduce, pjit
from ..llvm.exp import fexp
from ..llvm.micro import block_cols
from ..tiles import JB, chunk_row, dot64, fill_block, sq4

QB = 12  # query rows per task (a multiple of the micro-kernels' block rows, 4 or 12)


@jit
def _push(o, j0, idx, dist):
    # insert the entries of o (training indices j0, j0+1, ...) that beat the current
    # k-th distance into the sorted (dist, idx); equal distances keep the lower index
    k = dist.shape[0]
    thr = dist[k - 1]
    # most chunks bring no new neighbour once the list has filled: a vectorised count
    # of the entries below the k-th distance first, and the insertion scan only if any
    hits = 0
    for j in range(o.shape[0]):
        hits += o[j] < thr
    if hits == 0:
        return
    for j in range(o.shape[0]):
        if o[j] < thr:
            thr = _insert(o[j], j0 + j, idx, dist)


@jit_inline
def _insert(v, index, idx, dist):
    # v (of training point index) into the sorted (dist, idx) in place of the last,
    # after every equal distance; returns the new k-th distance
    p = dist.shape[0] - 1
    while p > 0 and dist[p - 1] > v:
        dist[p] = dist[p - 1]
        idx[p] = idx[p - 1]
        p -= 1
    dist[p] = v
    idx[p] = index
    return dist[dist.shape[0] - 1]


@pjit(tasks=lambda Xq, *_: (Xq.shape[0] + QB - 1) // QB,
      work=lambda Xq, Xt, k, *_: Xq.shape[0] * Xt.shape[1] * (Xt.shape[0] + 2))
def knn_rows(lo, hi, Xq, Xt, k, idx, dist):
    # IN: tasks lo:hi, Xq (m, d) queries, Xt (d, n) training points as columns, k
    # OUT: idx (m, k) int64, dist (m, k) squared distances, ascending, ties by index
    # Per chunk of training points, the QB x chunk block of distances by the micro-kernels
    # (fill_block), then each row pushed in index order: the result does not depend on
    # the chunk width.
    m = Xq.shape[0]
    n = Xt.shape[1]
    nb = block_cols(Xt)
    cw = max(nb, JB // nb * nb)
    o = np.empty((QB, cw), dtype=Xt.dtype)
    zero = np.int64(0)
    for b in range(lo, hi):
        i0 = b * QB
        i1 = min(m, i0 + QB)
        for i in range(i0, i1):
            for t in range(k):
                dist[i, t] = np.inf
                idx[i, t] = -1
        for j0 in range(0, n, cw):
            j1 = min(n, j0 + cw)
            fill_block(Xq, i0, i1, Xt, j0, j1, np.bool_(False), o, zero, zero)
            for i in range(i0, i1):
                _push(o[i - i0, : j1 - j0], j0, idx[i], dist[i])


#: candidates measured per batch by :func:`knn_measure`
CW = 64
#: columns per vectorised pre-count of :func:`knn_screen`
SW = 64


@jit
def _push_at(o, cols, idx, dist):
    # _push for entries o[c] of training indices cols[c] (increasing)
    thr = dist[dist.shape[0] - 1]
    for c in range(o.shape[0]):
        if o[c] < thr:
            thr = _insert(o[c], cols[c], idx, dist)


@jit_inline
def _heap_replace_top(h, v):
    # h a binary max-heap: its largest value (h[0]) replaced by v
    k = h.shape[0]
    p = 0
    while True:
        c = 2 * p + 1
        if c >= k:
            break
        if c + 1 < k and h[c + 1] > h[c]:
            c += 1
        if h[c] <= v:
            break
        h[p] = h[c]
        p = c
    h[p] = v


@jit
def knn_screen(G, nq, nx, c0, eta, up, dn, heap, cand, lows, nc):
    # Candidates for the k nearest neighbours from a tile of dot products.
    # IN: G (b, t) float64 dot products of b centred queries with the centred training
    #     points c0:c0+t, nq (b,), nx (t,) their float64 squared norms; the expansion
    #     D = nq + nx - 2 G is within eta (nq + nx) of the true squared distance, and
    #     up = 1 + gam, dn = 1 - gam cover the relative error gam of a direct distance:
    #     each point's direct distance lies in [L, U] = [(D - e) dn, (D + e) up].
    # IN/OUT, per query row r: heap[r] (k,) a max-heap of the k smallest U so far (inf
    #     at first): heap[r, 0] bounds its k-th nearest distance; cand[r, :nc[r]] the
    #     training indices (increasing) whose L did not exceed the bound when they came,
    #     lows[r] their L.  When cand[r] is full, the entries the bound now excludes are
    #     dropped; if half of it stays, nc[r] = -1: the row is measured in full.
    cap = cand.shape[1]
    t = G.shape[1]
    for r in range(G.shape[0]):
        if nc[r] < 0:
            continue
        a = nq[r]
        g = G[r]
        h = heap[r]
        thr = h[0]
        n_r = nc[r]
        for j0 in range(0, t, SW):
            gs = g[j0 : j0 + SW]
            xs = nx[j0 : j0 + SW]
            hits = 0
            for j in range(gs.shape[0]):
                s = a + xs[j]
                hits += (max(s - 2.0 * gs[j], 0.0) - eta * s) * dn <= thr
            if hits == 0:
                continue
            for j in range(gs.shape[0]):
                s = a + xs[j]
                v = max(s - 2.0 * gs[j], 0.0)
                low = (v - eta * s) * dn
                if low <= thr:
                    if n_r == cap:
                        q = 0
                        for p in range(cap):
                            if lows[r, p] <= thr:
                                cand[r, q] = cand[r, p]
                                lows[r, q] = lows[r, p]
                                q += 1
                        n_r = q
                        if 2 * n_r > cap:
                            n_r = -1
                            break
                    cand[r, n_r] = c0 + j0 + j
                    lows[r, n_r] = low
                    n_r += 1
                    hi = (v + eta * s) * up
                    if hi < thr:
                        _heap_replace_top(h, hi)
                        thr = h[0]
            if n_r < 0:
                break
        nc[r] = n_r


@jit
def _sq_listed(x, X, cols, L, o):
    # o[c] = squared distance of x to row cols[c] of X, c < L, four rows at a time
    # (sq4: the arithmetic of chunk_row, the same bits; the last row repeated at the edge)
    for c0 in range(0, L, 4):
        e = L - 1
        a0, a1, a2, a3 = sq4(x, X[cols[c0]], X[cols[min(c0 + 1, e)]], X[cols[min(c0 + 2, e)]], X[cols[min(c0 + 3, e)]])
        o[c0] = a0
        if c0 + 1 < L:
            o[c0 + 1] = a1
        if c0 + 2 < L:
            o[c0 + 2] = a2
        if c0 + 3 < L:
            o[c0 + 3] = a3


@jit
def knn_measure(Xq, row0, X, heap, cand, lows, nc, idx, dist, cols, o):
    # The k nearest neighbours of the query rows row0:row0+b from the candidates of
    # knn_screen: those whose L does not exceed the final bound heap[r, 0] (every
    # other point is farther than k others), every point for a row with nc[r] < 0,
    # measured by direct differences (the arithmetic of knn_rows) and pushed in index
    # order as knn_rows pushes them: its result, bit for bit.
    # Scratch: cols (CW,) int64, o (CW,) of the dtype.
    # OUT: idx, dist (m, k) rows row0:row0+b.
    n = X.shape[0]
    cw = cols.shape[0]
    k = dist.shape[1]
    for r in range(nc.shape[0]):
        i = row0 + r
        for t in range(k):
            dist[i, t] = np.inf
            idx[i, t] = -1
        thr = heap[r, 0]
        full = nc[r] < 0
        total = n if full else nc[r]
        p = 0
        while p < total:
            L = 0
            while p < total and L < cw:
                if full:
                    cols[L] = p
                    L += 1
                elif lows[r, p] <= thr:
                    cols[L] = cand[r, p]
                    L += 1
                p += 1
            if L > 0:
                _sq_listed(Xq[i], X, cols, L, o)
                _push_at(o[:L], cols[:L], idx[i], dist[i])


@jit_reduce
def sum_all(e):
    s = 0.0
    for j in range(e.shape[0]):
        s += e[j]
    return s


@jit
def min_all(o):
    m = o[0]
    for j in range(1, o.shape[0]):
        v = o[j]
        m = v if v < m else m
    return m


@jit
def kernel_weights(o, m, rm, g, s1, s2, laplacian, e):
    # e[j] = k(d_j) / k(d_min): exp(-gamma (d_j - d_min)) (gaussian) or
    # exp(-sqrt(gamma) (r_j - r_min)) (laplacian), with r = sqrt(d) rounded in the dtype
    # of d (rm = that of the minimum m), so that the nearest weighs exactly 1.
    # gamma (sqrt(gamma) for laplacian) and the scaling of the distances are
    # g * s1 * s2, s1 and s2 powers of two of the same sign of exponent applied one
    # after the other, so that no factor overflows the dtype and an intermediate
    # overflow (underflow) means that the exponent truly is huge (negligible).
    if laplacian:
        for j in range(o.shape[0]):
            e[j] = fexp(-(((g * (np.float64(np.sqrt(o[j])) - rm)) * s1) * s2))
    else:
        for j in range(o.shape[0]):
            e[j] = fexp(-(((g * (o[j] - m)) * s1) * s2))


@jit
def rescale(m_old, m_new, r_old, r_new, g, s1, s2, laplacian):
    # k(d_old) / k(d_new) in float64, from the same rounded values as kernel_weights
    if laplacian:
        return np.exp(-(((g * (r_old - r_new)) * s1) * s2))
    return np.exp(-(((g * (m_old - m_new)) * s1) * s2))


@jit_inline
def nearer(cm, cur, cur_r, W, g, s1, s2, laplacian):
    # the online step of the sums relative to the nearest point, for a chunk whose
    # smallest squared distance is cm: the nearest distance so far and its root (cur,
    # cur_r: moved to cm when it is nearer), the total weight W rescaled to it, and the
    # factor sc that rescaled it (1.0: none), for the caller's other sums
    sc = 1.0
    if cm < cur:
        cm_r = np.float64(np.sqrt(cm))  # rounded in the dtype of the distances
        if W > 0.0:
            sc = rescale(np.float64(cur), np.float64(cm), cur_r, cm_r, np.float64(g), np.float64(s1), np.float64(s2),
                         laplacian)
            W *= sc
        cur = cm
        cur_r = cm_r
    return cur, cur_r, W, sc


@pjit(tasks=lambda Xq, *_: Xq.shape[0],
      work=lambda Xq, Xt, Tt, *_: Xq.shape[0] * Xt.shape[1] * (Xt.shape[0] + 2 * Tt.shape[0] + 16))
def shifted_sums(lo, hi, Xq, Xt, Tt, g, s1, s2, laplacian, num, den, dmin):
    # IN: rows lo:hi, Xq (m, d), Xt (d, n), Tt (k, n) targets as rows, g * s1 * s2 = gamma (sqrt
    #     of gamma with laplacian) in the units of the distances (see kernel_weights), laplacian
    # OUT: num (m, k) = sum_j w_j T[j], den (m,) = sum_j w_j, dmin (m,) the smallest
    #      squared distance, with w_j = k(x, x_j) / k(x, x_nearest): the common factor
    #      k(x, x_nearest) of numerator and denominator is left out (no underflow).
    #      float64 sums, one partial per chunk, added in order (an online rescaling
    #      when a chunk brings a nearer point).
    n = Xt.shape[1]
    k = Tt.shape[0]
    for i in range(lo, hi):
        o = np.empty(JB, dtype=Xt.dtype)
        e = np.empty(JB, dtype=Xt.dtype)
        cur = np.inf
        cur_r = np.inf
        W = 0.0
        S = np.zeros(k, dtype=np.float64)
        for j0 in range(0, n, JB):
            j1 = min(n, j0 + JB)
            L = j1 - j0
            oo = o[:L]
            ee = e[:L]
            chunk_row(Xq, i, Xt, j0, j1, np.bool_(False), oo)
            cur, cur_r, W, sc = nearer(min_all(oo), cur, cur_r, W, g, s1, s2, laplacian)
            if sc != 1.0:
                for q in range(k):
                    S[q] *= sc
            kernel_weights(oo, cur, cur_r, g, s1, s2, laplacian, ee)
            W += sum_all(ee)
            for q in range(k):
                S[q] += dot64(ee, Tt[q, j0:j1])
        den[i] = W
        dmin[i] = cur
        for q in range(k):
            num[i, q] = S[q]


@pjit(tasks=lambda rows, *_: rows.shape[0],
      work=lambda rows, Xq, X, Tt, Ut, *_: rows.shape[0] * X.shape[0] * ((X.shape[1] + 2) * (Ut.shape[0] + 4)
                                                                          + 2 * Tt.shape[0] + 16))
def far_sums(lo, hi, rows, Xq, X, Tt, Ut, g, f1, f2, laplacian, grad, num, den, gnum, gden):
    # The sums of shifted_sums (and of shifted_sums_grad with grad) redone for the query
    # rows `rows` that lie so far from the data, for the width, that the rounding of
    # their squared distances decides the weights (the caller picks them).  There the
    # differences of squared distances to the nearest point x_m are computed directly,
    #     d_j^2 - d_m^2 = sum_a (x_m - x_j)_a ((x - x_j)_a + (x - x_m)_a),
    # accurate relative to |x_m - x_j| |x - x_m| instead of to d_m^2 (far away,
    # x - x_j rounds to the same value for every j and the plain distances all tie).
    # IN: tasks lo:hi of rows (int64 query rows), Xq (m, d), X (n, d) training points as
    #     rows, Tt (k, n), Ut (k2, n) (read with grad only), g, f1, f2 float64: the
    #     width in the units of the scaled squared distances (laplacian: distances) is
    #     ((g * .) * f1) * f2, f1 and f2 powers of two; laplacian; grad
    # OUT: num[i], den[i] for i in rows as shifted_sums (float64 arithmetic); with grad
    #      gnum[i], gden[i] as shifted_sums_grad but with (x - x_j) replaced by
    #      (x_m - x_j) (gaussian) or by (x - x_j) / r_j - (x - x_m) / r_m (laplacian):
    #      the part dropped is a vector times sum_j w_j (U_j - f) = 0, so the gradient of
    #      the quotient rule is the same without the cancellation of the far offset.
    n, d = X.shape
    k, k2 = Tt.shape[0], Ut.shape[0]
    D = np.empty(n, dtype=np.float64)  # differences of squared distances to the nearest point
    R = np.empty(n, dtype=np.float64)
    for b in range(lo, hi):
        i = rows[b]
        # the nearest point, by differences relative to point 0 (ties: lowest index)
        m = 0
        best = 0.0
        for j in range(1, n):
            s = 0.0
            for a in range(d):
                x = np.float64(Xq[i, a])
                p = np.float64(X[0, a])
                y = np.float64(X[j, a])
                s += (p - y) * ((x - y) + (x - p))
            if s < best:
                best = s
                m = j
        # the differences relative to it (and the distances for laplacian)
        lowest = np.inf
        for j in range(n):
            s = 0.0
            r2 = 0.0
            for a in range(d):
                x = np.float64(Xq[i, a])
                p = np.float64(X[m, a])
                y = np.float64(X[j, a])
                s += (p - y) * ((x - y) + (x - p))
                r2 += (x - y) * (x - y)
            D[j] = s
            R[j] = np.sqrt(r2)
        if laplacian:
            for j in range(n):
                t = R[j] + R[m]
                D[j] = D[j] / t if t > 0.0 else 0.0  # r_j - r_m
        for j in range(n):
            lowest = min(lowest, D[j])  # 0, or a rounding below it
        W = 0.0
        for q in range(k):
            num[i, q] = 0.0
        if grad:
            for a in range(d):
                gden[i, a] = 0.0
            for q in range(k2):
                for a in range(d):
                    gnum[i, q, a] = 0.0
        for j in range(n):
            w = np.exp(-(((g * (D[j] - lowest)) * f1) * f2))
            if w == 0.0:
                continue
            W += w
            for q in range(k):
                num[i, q] += w * Tt[q, j]
            if grad:
                for a in range(d):
                    x = np.float64(Xq[i, a])
                    y = np.float64(X[j, a])
                    p = np.float64(X[m, a])
                    if laplacian:
                        v = w * ((x - y) / R[j] - (x - p) / R[m]) if R[j] > 0.0 else 0.0
                    else:
                        v = w * (p - y)
                    gden[i, a] += v
                    for q in range(k2):
                        gnum[i, q, a] += v * Ut[q, j]
        den[i] = W
