"""The tile building blocks of every pairwise kernel: one row (or two) of squared
distances or dot products against a chunk of columns, and the kernel function applied
while the chunk is in cache.

Direct differences: ``out[i, j] = sum_k (X[i, k] - Yt[k, j])**2`` computed row by row, the
columns in chunks of ``JB`` so that a chunk of the output row and of ``Yt`` stay in L1
while the ``d`` passes run over them; the loop over ``j`` is the vectorised one.  A sum
of non-negative terms has a relative error of at most ``(d + 2) eps`` whatever the
offset of the data, identical rows give exactly 0, and ``D[i, j]`` is bitwise
``D[j, i]``.  The kernel function ``phi`` (a :class:`~.kernels.Phi`, fixed at compile
time; ``phi(-1)`` for plain distances) is applied to the chunk while it is in cache
(fused Gram matrix); ``dot=True`` accumulates ``X[i, k] * Yt[k, j]`` instead
(dot-product kernels).

:func:`fill_block` computes a block of rows and columns with the register-blocked
micro-kernels of :mod:`.micro` (``MR`` rows by ``NB`` columns held in vector registers,
the edges as partial blocks; bitwise the values of :func:`chunk_row`); the
top-level kernels of ``sqdist``, ``gram``, the Lloyd assignment and ``knn`` use it.

The top-level kernels built from them live with their families: :mod:`.pairwise`
(``sqdist``, ``gram``, ``gram_matvec``), :mod:`.lloyd`, :mod:`.neighbors`, :mod:`.seeding`,
:mod:`.gp`, :mod:`.network`, :mod:`.falkon`.
"""


import numpy as np
from numba import types

from ._decorators import jit, jit_inline, jit_overload, jit_reduce
from .kernels import apply_kernel
from .llvm.micro import block_cols, block_rows, dot_block, sq_block

JB = 512  # columns per chunk: 4 KiB of float64 per row chunk


@jit_inline
def pair_block(q, P):
    # the blocks (or rows) of the symmetric kernels' tasks, paired so that every task
    # carries the same work of a triangle: task t = q // 2 takes block t (q even) and
    # block P - 1 - t (q odd); -1 for the odd one when the two are the same block.
    # Callers loop over q in range(2 lo, 2 hi): one call site of the block's body.
    t = q >> 1
    if (q & 1) == 0:
        return np.int64(t)
    b = np.int64(P - 1 - t)
    return np.int64(-1) if b == t else b


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


@jit_inline
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


@jit_inline
def sq4(x, y0, y1, y2, y3):
    """The squared distances of the row ``x`` to the rows ``y0`` ... ``y3``, each one FMA
    chain over the features in order (the arithmetic of :func:`chunk_row`: the same
    bits), as four independent chains (one chain alone waits on each FMA's latency)."""
    z = x[0] - x[0]
    a0 = a1 = a2 = a3 = z
    for k in range(x.shape[0]):
        xk = x[k]
        t0 = xk - y0[k]
        t1 = xk - y1[k]
        t2 = xk - y2[k]
        t3 = xk - y3[k]
        a0 += t0 * t0
        a1 += t1 * t1
        a2 += t2 * t2
        a3 += t3 * t3
    return (a0, a1, a2, a3)


@jit_reduce
def dot64(a, b):
    """sum_j a[j] b[j] with a float64 accumulator (also for float32 tiles)."""
    s = 0.0
    for j in range(a.shape[0]):
        s += a[j] * b[j]
    return s


@jit
def fill_block(X, i0, i1, Yt, j0, j1, dot, out, oi, oj):
    """out[oi + i - i0, oj + j - j0] = squared distance (or dot product) of row i of X
    and column j of Yt, for i in [i0, i1) and j in [j0, j1), in blocks of ``MR`` rows by
    ``NB`` columns by the micro-kernels of :mod:`.micro` (the edges as partial blocks);
    every entry has the bits of :func:`chunk_row`, so the result does not depend on how
    rows and columns are cut.  Row block by row block (each packed once into a small
    buffer, see :mod:`.micro`), every column block: the columns ``j0:j1`` of Yt should
    fit in cache."""
    nb = block_cols(Yt)
    mr = block_rows(X)
    d = X.shape[1]
    xp = np.empty((d, mr), dtype=X.dtype)
    for i in range(i0, i1, mr):
        rows = min(mr, i1 - i)
        # the row block packed feature by feature (the rows past the edge repeat the
        # last one): the micro-kernel reads its MR values of a feature at fixed offsets
        for k in range(d):  # (features outside: the loop over the MR rows unrolls, nothing else)
            for r in range(mr):
                xp[k, r] = X[i + min(r, rows - 1), k]
        r0 = oi + i - i0
        for j in range(j0, j1, nb):
            cols = min(nb, j1 - j)
            if dot:
                dot_block(xp, rows, Yt, j, cols, out, r0, oj + j - j0)
            else:
                sq_block(xp, rows, Yt, j, cols, out, r0, oj + j - j0)


def direct_sq(X, i, Y, j):
    """``||X[i] - Y[j]||^2`` by direct differences in float64, dense rows or CSR
    triples (compiled through the overload below)."""
    acc = 0.0
    for k in range(X.shape[1]):
        t = np.float64(X[i, k]) - np.float64(Y[j, k])
        acc += t * t
    return acc


@jit_overload(direct_sq)
def _direct_sq_impl(X, i, Y, j):
    # CSR rows (data, indices, indptr) in canonical form: the merge of their stored
    # columns; the terms of the dense sum less its exact zeros, so the same bits
    if not isinstance(X, types.BaseTuple):
        return direct_sq

    def csr(X, i, Y, j):
        xd, xi, xp = X
        yd, yi, yp = Y
        p, p1 = xp[i], xp[i + 1]
        q, q1 = yp[j], yp[j + 1]
        acc = 0.0
        while p < p1 or q < q1:
            if q == q1 or (p < p1 and xi[p] < yi[q]):
                t = np.float64(xd[p])
                p += 1
            elif p == p1 or yi[q] < xi[p]:
                t = np.float64(yd[q])
                q += 1
            else:
                t = np.float64(xd[p]) - np.float64(yd[q])
                p += 1
                q += 1
            acc += t * t
        return acc
    return csr
