"""Pairwise squared-distance kernels (direct differences, and the certified GEMM path).

Direct kernel: ``out[i, j] = sum_k (X[i, k] - Yt[k, j])**2`` computed row by row, the
columns in chunks of ``JB`` so that a chunk of the output row and of ``Yt`` stay in L1
while the ``d`` passes run over them; the loop over ``j`` is the vectorised one.  A sum
of non-negative terms has a relative error of at most ``(d + 2) eps`` whatever the
offset of the data, identical rows give exactly 0, and ``D[i, j]`` is bitwise
``D[j, i]``.  With ``code >= 0`` the kernel function is applied to the chunk while it
is in cache (fused Gram matrix); ``dot=True`` accumulates ``X[i, k] * Yt[k, j]``
instead (dot-product kernels).

Each ``prange`` task owns whole output rows: no races, no reductions across threads,
so results do not depend on the thread count.
"""

import numpy as np
from numba import prange

from ._decorators import jit, pjit
from .kernels import apply_kernel

JB = 512  # columns per chunk: 4 KiB of float64 per row chunk


@jit
def fill_row(X, i, Yt, j_start, j_end, dot, code, g, c, degree, o_row):
    """o_row[j - j_start] for j in [j_start, j_end): squared distances from row i of X
    to column j of Yt (or dot products), then the kernel function."""
    d = X.shape[1]
    for j0 in range(j_start, j_end, JB):
        j1 = min(j_end, j0 + JB)
        o = o_row[j0 - j_start : j1 - j_start]
        x0 = X[i, 0]
        y = Yt[0, j0:j1]
        if dot:
            for j in range(j1 - j0):
                o[j] = x0 * y[j]
            for k in range(1, d):
                xk = X[i, k]
                y = Yt[k, j0:j1]
                for j in range(j1 - j0):
                    o[j] += xk * y[j]
        else:
            for j in range(j1 - j0):
                t = x0 - y[j]
                o[j] = t * t
            for k in range(1, d):
                xk = X[i, k]
                y = Yt[k, j0:j1]
                for j in range(j1 - j0):
                    t = xk - y[j]
                    o[j] += t * t
        if code >= 0:
            apply_kernel(code, o, g[j0:j1], c, degree)


@pjit
def pairwise_rows(X, Yt, dot, code, g, c, degree, out):
    # IN: X (n, d), Yt (d, m), dot, code, g (m,), c (4,), degree
    # OUT: out (n, m)
    n = X.shape[0]
    m = Yt.shape[1]
    for i in prange(n):
        fill_row(X, i, Yt, 0, m, dot, code, g, c, degree, out[i])


@pjit
def pairwise_upper(X, Xt, dot, code, g, c, degree, out):
    # IN: X (n, d), Xt (d, n), ...; OUT: out (n, n), upper triangle and diagonal.
    # Rows p and n-1-p share a task so every task has the same amount of work.
    n = X.shape[0]
    for p in prange((n + 1) // 2):
        fill_row(X, p, Xt, p, n, dot, code, g, c, degree, out[p, p:])
        q = n - 1 - p
        if q != p:
            fill_row(X, q, Xt, q, n, dot, code, g, c, degree, out[q, q:])


MB = 64  # block edge of the mirror copy


@pjit
def mirror_upper(out):
    # IN/OUT: out (n, n); copies the upper triangle onto the lower one, in blocks.
    n = out.shape[0]
    nb = (n + MB - 1) // MB
    for p in prange((nb + 1) // 2):
        for rep in range(2):
            b = p if rep == 0 else nb - 1 - p
            if rep == 1 and b == p:
                break
            i0 = b * MB
            i1 = min(n, i0 + MB)
            for j0 in range(0, i1, MB):
                j1 = min(i1, j0 + MB)
                for i in range(i0, i1):
                    row = out[i]
                    for j in range(j0, min(j1, i)):
                        row[j] = out[j, i]


@pjit
def finalize_gemm(G, nx, ny, X, Y, row0, tau, code, g, c, degree, upper, out):
    # IN: G (b, m) float64 dot products of the centred rows row0:row0+b against Y,
    #     nx (n,) ny (m,) float64 squared norms of the centred rows,
    #     X (n, d), Y (m, d) the original (uncentred) data, tau the certification ratio.
    # OUT: out (b, m); may be G itself.  With upper, only j >= i is written.
    b = G.shape[0]
    m = G.shape[1]
    d = X.shape[1]
    for r in prange(b):
        i = row0 + r
        j_start = i if upper else 0
        gr = G[r, j_start:m]
        o = out[r, j_start:m]
        nyr = ny[j_start:m]
        nxi = nx[i]
        L = m - j_start
        bad = 0
        for j in range(L):
            s = nxi + nyr[j]
            v = max(s - 2.0 * gr[j], 0.0)
            gr[j] = v
            if v <= tau * s:
                bad += 1
        if bad > 0:
            # entries whose cancellation could exceed the error bound: recompute by
            # direct differences from the original data (float64 accumulation)
            for j in range(L):
                if gr[j] <= tau * (nxi + nyr[j]):
                    acc = 0.0
                    for k in range(d):
                        t = np.float64(X[i, k]) - np.float64(Y[j_start + j, k])
                        acc += t * t
                    gr[j] = acc
        for j in range(L):
            o[j] = gr[j]
        if code >= 0:
            apply_kernel(code, o, g[j_start:m], c, degree)
