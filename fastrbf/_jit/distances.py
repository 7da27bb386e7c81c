"""Pairwise squared-distance kernels (direct differences, and the certified GEMM path).

Direct kernel: ``out[i, j] = sum_k (X[i, k] - Yt[k, j])**2`` computed row by row, the
columns in chunks of ``JB`` so that a chunk of the output row and of ``Yt`` stay in L1
while the ``d`` passes run over them; the loop over ``j`` is the vectorised one.  A sum
of non-negative terms has a relative error of at most ``(d + 2) eps`` whatever the
offset of the data, identical rows give exactly 0, and ``D[i, j]`` is bitwise
``D[j, i]``.  The kernel function ``phi`` (a :class:`~.kernels.Phi`, fixed at compile
time; ``phi(-1)`` for plain distances) is applied to the chunk while it is in cache
(fused Gram matrix); ``dot=True`` accumulates ``X[i, k] * Yt[k, j]`` instead
(dot-product kernels).

Each task (``lo:hi`` of the top-level kernels, see :func:`~._decorators.pjit`) owns
whole output rows: no races, no reductions across threads, so results do not depend on
the thread count or on how tasks are grouped into blocks.
"""

import numpy as np

from ._decorators import jit, pjit
from .kernels import apply_kernel

JB = 512  # columns per chunk: 4 KiB of float64 per row chunk


@jit
def chunk_row(X, i, Yt, j0, j1, dot, o):
    """o[:j1-j0] = squared distances (or dot products) of row i of X to columns
    j0:j1 of Yt.  Features are taken four at a time with one FMA chain per column:
    a sum of non-negative terms in a fixed order."""
    d = X.shape[1]
    L = j1 - j0
    for j in range(L):
        o[j] = 0
    k = 0
    while k + 4 <= d:
        x0 = X[i, k]
        x1 = X[i, k + 1]
        x2 = X[i, k + 2]
        x3 = X[i, k + 3]
        y0 = Yt[k, j0:j1]
        y1 = Yt[k + 1, j0:j1]
        y2 = Yt[k + 2, j0:j1]
        y3 = Yt[k + 3, j0:j1]
        if dot:
            for j in range(L):
                s = o[j]
                s += x0 * y0[j]
                s += x1 * y1[j]
                s += x2 * y2[j]
                s += x3 * y3[j]
                o[j] = s
        else:
            for j in range(L):
                t0 = x0 - y0[j]
                t1 = x1 - y1[j]
                t2 = x2 - y2[j]
                t3 = x3 - y3[j]
                s = o[j]
                s += t0 * t0
                s += t1 * t1
                s += t2 * t2
                s += t3 * t3
                o[j] = s
        k += 4
    while k < d:
        xk = X[i, k]
        y = Yt[k, j0:j1]
        if dot:
            for j in range(L):
                o[j] += xk * y[j]
        else:
            for j in range(L):
                t = xk - y[j]
                o[j] += t * t
        k += 1


@jit
def chunk_row2(X, i, i2, Yt, j0, j1, o, p):
    """Like :func:`chunk_row` (squared distances) for rows i and i2 at once: each
    load of Yt serves two rows.  Per entry the arithmetic is exactly that of
    :func:`chunk_row`, so the result does not depend on how rows are paired."""
    d = X.shape[1]
    L = j1 - j0
    for j in range(L):
        o[j] = 0
    for j in range(L):
        p[j] = 0
    k = 0
    while k + 4 <= d:
        x0 = X[i, k]
        x1 = X[i, k + 1]
        x2 = X[i, k + 2]
        x3 = X[i, k + 3]
        z0 = X[i2, k]
        z1 = X[i2, k + 1]
        z2 = X[i2, k + 2]
        z3 = X[i2, k + 3]
        y0 = Yt[k, j0:j1]
        y1 = Yt[k + 1, j0:j1]
        y2 = Yt[k + 2, j0:j1]
        y3 = Yt[k + 3, j0:j1]
        for j in range(L):
            a0 = y0[j]
            a1 = y1[j]
            a2 = y2[j]
            a3 = y3[j]
            t0 = x0 - a0
            t1 = x1 - a1
            t2 = x2 - a2
            t3 = x3 - a3
            s = o[j]
            s += t0 * t0
            s += t1 * t1
            s += t2 * t2
            s += t3 * t3
            o[j] = s
            t0 = z0 - a0
            t1 = z1 - a1
            t2 = z2 - a2
            t3 = z3 - a3
            s = p[j]
            s += t0 * t0
            s += t1 * t1
            s += t2 * t2
            s += t3 * t3
            p[j] = s
        k += 4
    while k < d:
        xk = X[i, k]
        zk = X[i2, k]
        y = Yt[k, j0:j1]
        for j in range(L):
            t = xk - y[j]
            o[j] += t * t
        for j in range(L):
            t = zk - y[j]
            p[j] += t * t
        k += 1


@jit
def fill_rows(X, i, i2, Yt, j_start, j_end, dot, phi, g, c, degree, o_row, p_row):
    """Rows i and i2 (i2 < 0: row i only) of the result for columns
    [j_start, j_end), written to o_row / p_row at offset ``j - j_start``, then the
    kernel function while each chunk is in cache.  Callers pass variables, never
    literal numbers, for the int arguments: a literal would compile another copy."""
    for j0 in range(j_start, j_end, JB):
        j1 = min(j_end, j0 + JB)
        o = o_row[j0 - j_start : j1 - j_start]
        if i2 >= 0 and not dot:
            p = p_row[j0 - j_start : j1 - j_start]
            chunk_row2(X, i, i2, Yt, j0, j1, o, p)
            apply_kernel(phi, o, g[j0:j1], c, degree)
            apply_kernel(phi, p, g[j0:j1], c, degree)
        else:
            chunk_row(X, i, Yt, j0, j1, dot, o)
            apply_kernel(phi, o, g[j0:j1], c, degree)
            if i2 >= 0:
                p = p_row[j0 - j_start : j1 - j_start]
                chunk_row(X, i2, Yt, j0, j1, dot, p)
                apply_kernel(phi, p, g[j0:j1], c, degree)


@pjit(tasks=lambda X, *_: (X.shape[0] + 1) // 2,
      work=lambda X, Yt, *_: X.shape[0] * Yt.shape[1] * (Yt.shape[0] + 4))
def pairwise_rows(lo, hi, X, Yt, dot, phi, g, c, degree, out):
    # IN: tasks lo:hi, X (n, d), Yt (d, m), dot, phi, g (m,), c (4,), degree
    # OUT: out (n, m).  Task t owns the row pair (2t, 2t + 1).
    n = X.shape[0]
    m = Yt.shape[1]
    j_start = np.int64(0)
    for t in range(lo, hi):
        i = 2 * t
        i2 = i + 1 if i + 1 < n else np.int64(-1)
        fill_rows(X, i, i2, Yt, j_start, m, dot, phi, g, c, degree, out[i], out[max(i, i2)])


@pjit(tasks=lambda X, *_: ((X.shape[0] + 1) // 2 + 1) // 2,
      work=lambda X, Xt, *_: X.shape[0] * Xt.shape[1] * (Xt.shape[0] + 4) // 2)
def pairwise_upper(lo, hi, X, Xt, dot, phi, g, c, degree, out):
    # IN: tasks lo:hi, X (n, d), Xt (d, n), ...; OUT: out (n, n), at least the upper triangle and
    # the diagonal.  Row pair r = (2r, 2r + 1) computes columns 2r..n-1 (so the entry
    # (2r + 1, 2r) below the diagonal too, the same value the mirror will write).
    # Task t takes pairs t and P - 1 - t so that every task has the same work.
    n = X.shape[0]
    P = (n + 1) // 2
    for t in range(lo, hi):
        for rep in range(2):
            r = np.int64(t) if rep == 0 else np.int64(P - 1 - t)
            if rep == 1 and r == t:
                break
            i = 2 * r
            i2 = i + 1 if i + 1 < n else np.int64(-1)
            fill_rows(X, i, i2, Xt, i, n, dot, phi, g, c, degree, out[i, i:], out[max(i, i2), i:])


MB = 64  # block edge of the mirror copy


@pjit(tasks=lambda out: ((out.shape[0] + MB - 1) // MB + 1) // 2,
      work=lambda out: out.size)
def mirror_upper(lo, hi, out):
    # IN: tasks lo:hi; IN/OUT: out (n, n); copies the upper triangle onto the lower
    # one, in blocks; task p takes block rows p and nb - 1 - p.
    n = out.shape[0]
    nb = (n + MB - 1) // MB
    for p in range(lo, hi):
        for rep in range(2):
            b = np.int64(p) if rep == 0 else np.int64(nb - 1 - p)
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


@jit
def finalize_row(G, r, nx, ny, X, Y, row0, tau, phi, g, c, degree, upper, out):
    # Row r of a block: see finalize_block.
    m = G.shape[1]
    d = X.shape[1]
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
    apply_kernel(phi, o, g[j_start:m], c, degree)


@jit
def finalize_block(G, nx, ny, X, Y, row0, tau, phi, g, c, degree, upper, out):
    # IN: G (b, m) float64 dot products of the centred rows row0:row0+b against Y,
    #     nx (n,) ny (m,) float64 squared norms of the centred rows,
    #     X (n, d), Y (m, d) the original (uncentred) data, tau the certification ratio.
    # OUT: out (b, m); may be G itself.  With upper, only j >= i is written.
    # Serial: called from several Python threads at once, one block each.
    for r in range(G.shape[0]):
        finalize_row(G, r, nx, ny, X, Y, row0, tau, phi, g, c, degree, upper, out)
