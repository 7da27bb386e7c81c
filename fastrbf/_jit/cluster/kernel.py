"""Kernel k-means kernels: each point's kernel sums over each cluster, ``S[i, c] =
sum_{j in c} w_j k(x_i, x_j)``, made or changed by the points that moved.

:func:`cluster_sums` makes the kernel values of a tile of rows against the moved points
(the tiles of ``gram``: :func:`~..tiles.fill_rows`) and adds ``w_j k(x_i, x_j)`` to
the cluster each point joins and subtracts it from the one it leaves, while the tile is
in cache: the n x n matrix is never held.  The caller sorts the moved points so that
those joining and leaving the same clusters are a run of columns: each run's part of a
tile is one vectorised dot product (adding each value to its cluster one at a time
doubled the pass's time).  :func:`cluster_sums_cached` does the same
from a held kernel matrix (the same values, bit for bit: the same sums).  Each task owns
``RB`` whole rows of ``S``; within a row the moved points are added in their order, in
float64: the same bits for any thread count.
"""

import numpy as np

from .._decorators import jit, pjit
from ..tiles import JB, dot64, fill_rows

RB = 16  # rows of S per task


@jit
def _add_runs(S, i, t, wy, to, frm, runs, r0, j0, j1):
    # each run of columns runs[r]:runs[r+1] (those sharing a cluster joined and left)
    # that meets j0:j1: its part of sum_j wy[j] t[j - j0], added to S[i, to] and
    # subtracted from S[i, frm] (frm < 0: none)
    r = r0
    R = runs.shape[0] - 1
    while r < R and runs[r] < j1:
        a = max(runs[r], j0)
        b = min(runs[r + 1], j1)
        v = dot64(wy[a:b], t[a - j0 : b - j0])
        k = runs[r]
        S[i, to[k]] += v
        f = frm[k]
        if f >= 0:
            S[i, f] -= v
        r += 1


@pjit(tasks=lambda X, *_: (X.shape[0] + RB - 1) // RB,
      work=lambda X, Yt, *_: X.shape[0] * Yt.shape[1] * (Yt.shape[0] + 6))
def cluster_sums(lo, hi, X, Yt, wy, to, frm, runs, dot, phi, g, c, degree, S):
    # IN: tasks lo:hi, X (n, d); Yt (d, m) the moved points as columns, wy (m,) float64
    #     their weights, to (m,) the cluster each joins, frm (m,) the one each leaves
    #     (-1: none), the columns in runs runs[r]:runs[r+1] of equal (to, frm); dot, phi,
    #     g (m,), c, degree the kernel
    # IN/OUT: S (n, K) float64
    n = X.shape[0]
    m = Yt.shape[1]
    for b in range(lo, hi):
        i0 = b * RB
        i1 = min(n, i0 + RB)
        tile = np.empty((2, min(m, JB)), dtype=X.dtype)
        r0 = 0
        for j0 in range(0, m, JB):
            j1 = min(m, j0 + JB)
            while runs[r0 + 1] <= j0:
                r0 += 1
            t0 = tile[0, : j1 - j0]
            t1 = tile[1, : j1 - j0]
            for i in range(i0, i1, 2):
                i2 = i + 1 if i + 1 < i1 else -1
                fill_rows(X, i, i2, Yt, j0, j1, dot, phi, g, c, degree, t0, t1)
                _add_runs(S, i, t0, wy, to, frm, runs, r0, j0, j1)
                if i2 >= 0:
                    _add_runs(S, i2, t1, wy, to, frm, runs, r0, j0, j1)


@pjit(tasks=lambda G, *_: (G.shape[0] + RB - 1) // RB,
      work=lambda G, cols, *_: 4 * G.shape[0] * cols.shape[0])
def cluster_sums_cached(lo, hi, G, cols, wy, to, frm, runs, S):
    # IN: tasks lo:hi, G (n, n) the kernel matrix; cols (m,) the moved points, wy, to,
    #     frm, runs as in cluster_sums (the same chunks of JB columns: the same sums)
    # IN/OUT: S (n, K) float64
    n = G.shape[0]
    m = cols.shape[0]
    t = np.empty(min(m, JB), dtype=G.dtype)
    for i in range(lo * RB, min(n, hi * RB)):
        r0 = 0
        for j0 in range(0, m, JB):
            j1 = min(m, j0 + JB)
            while runs[r0 + 1] <= j0:
                r0 += 1
            for j in range(j0, j1):
                t[j - j0] = G[i, cols[j]]
            _add_runs(S, i, t[: j1 - j0], wy, to, frm, runs, r0, j0, j1)
