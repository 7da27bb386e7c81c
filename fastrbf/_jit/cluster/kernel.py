"""Kernel k-means kernels: each point's kernel sums over each cluster, ``S[i, c] =
sum_{j in c} w_j k(x_i, x_j)``, made or changed by the points that moved.

:func:`cluster_sums` makes the kernel values of a tile of rows against the moved points
(the tiles of ``gram``: :func:`~..tiles.fill_rows`) and adds ``w_j k(x_i, x_j)`` to
the cluster each point joins and subtracts it from the one it leaves, while the tile is
in cache: the n x n matrix is never held.  :func:`cluster_sums_cached` does the same
from a held kernel matrix (the same values, bit for bit: the same sums).  Each task owns
``RB`` whole rows of ``S``; within a row the moved points are added in their order, in
float64: the same bits for any thread count.
"""

import numpy as np

from .._decorators import jit, pjit
from ..tiles import JB, fill_rows

RB = 16  # rows of S per task


@jit
def _scatter(S, i, t, wy, to, frm, j0):
    # S[i, to[j]] += wy[j] t[j - j0]; S[i, frm[j]] -= the same (frm[j] < 0: none)
    for q in range(t.shape[0]):
        j = j0 + q
        v = wy[j] * t[q]
        S[i, to[j]] += v
        f = frm[j]
        if f >= 0:
            S[i, f] -= v


@pjit(tasks=lambda X, *_: (X.shape[0] + RB - 1) // RB,
      work=lambda X, Yt, *_: X.shape[0] * Yt.shape[1] * (Yt.shape[0] + 8))
def cluster_sums(lo, hi, X, Yt, wy, to, frm, dot, phi, g, c, degree, S):
    # IN: tasks lo:hi, X (n, d); Yt (d, m) the moved points as columns, wy (m,) float64
    #     their weights, to (m,) the cluster each joins, frm (m,) the one each leaves
    #     (-1: none); dot, phi, g (m,), c, degree the kernel
    # IN/OUT: S (n, K) float64
    n = X.shape[0]
    m = Yt.shape[1]
    for b in range(lo, hi):
        i0 = b * RB
        i1 = min(n, i0 + RB)
        tile = np.empty((2, min(m, JB)), dtype=X.dtype)
        for j0 in range(0, m, JB):
            j1 = min(m, j0 + JB)
            t0 = tile[0, : j1 - j0]
            t1 = tile[1, : j1 - j0]
            for i in range(i0, i1, 2):
                i2 = i + 1 if i + 1 < i1 else -1
                fill_rows(X, i, i2, Yt, j0, j1, dot, phi, g, c, degree, t0, t1)
                _scatter(S, i, t0, wy, to, frm, j0)
                if i2 >= 0:
                    _scatter(S, i2, t1, wy, to, frm, j0)


@pjit(tasks=lambda G, *_: (G.shape[0] + RB - 1) // RB,
      work=lambda G, cols, *_: 4 * G.shape[0] * cols.shape[0])
def cluster_sums_cached(lo, hi, G, cols, wy, to, frm, S):
    # IN: tasks lo:hi, G (n, n) the kernel matrix; cols (m,) the moved points, wy, to,
    #     frm as in cluster_sums
    # IN/OUT: S (n, K) float64
    n = G.shape[0]
    m = cols.shape[0]
    for i in range(lo * RB, min(n, hi * RB)):
        for j in range(m):
            v = wy[j] * G[i, cols[j]]
            S[i, to[j]] += v
            f = frm[j]
            if f >= 0:
                S[i, f] -= v
