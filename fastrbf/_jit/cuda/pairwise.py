"""Pairwise kernels on the device: ``sqdist``/``gram`` tiles and ``gram_matvec``.

``tile``: a block of TILE x TILE threads makes a TILE x TILE tile of the result; the
block's rows of ``X`` and ``Y`` pass through shared memory TILE features at a time
(padded by one column against bank conflicts).  Distances are direct differences,
``sum_k (x_k - y_k)**2``, summed per chunk of TILE features in the dtype and the chunks
added in order: relative error at most ``(TILE + d / TILE) eps``, whatever the offset of
the data, and ``D[i, j]`` and ``D[j, i]`` are the same operations on the same numbers,
so ``sqdist(X)`` is exactly symmetric with an exact zero diagonal.

``matvec``: one thread per row of ``X``; the columns of ``Y`` and the rows of ``V``
pass through shared memory ROWS at a time, the row of ``X`` is held in registers (up to
32 features; beyond, read from memory).  Each thread sums its tile of ROWS columns in
``V``'s dtype and adds the tile's sum to float64 totals (the CPU sums float64 chunks of
512 columns): nothing of size n x m is ever held.  ``V`` is taken RHS columns at a time
(grid axis y); when ``X`` has few rows the columns are split (grid axis z) into
partial sums added in order afterwards, so that the GPU has enough threads.
"""

import math

import numpy as np
from numba import cuda

from .target import ROWS, TILE, kernel, made, nbtype, width

#: columns of ``V`` per thread (the grid's second axis takes groups of them)
RHS = 4


def _tile(phi, radial, dtype):
    T = TILE
    f = np.dtype(dtype).type
    ZERO = f(0)
    nb = nbtype(dtype)
    SHAPE = (T, T + 1)

    def tile(X, Y, g, coef0, degree, out):
        xs = cuda.shared.array(SHAPE, nb)
        ys = cuda.shared.array(SHAPE, nb)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        i0 = cuda.blockIdx.y * T
        j0 = cuda.blockIdx.x * T
        n = X.shape[0]
        m = Y.shape[0]
        d = X.shape[1]
        acc = ZERO
        for k0 in range(0, d, T):
            # thread (ty, tx) brings X[i0 + ty, k0 + tx] and Y[j0 + ty, k0 + tx]
            k = k0 + tx
            xs[ty, tx] = X[i0 + ty, k] if (i0 + ty < n and k < d) else ZERO
            ys[ty, tx] = Y[j0 + ty, k] if (j0 + ty < m and k < d) else ZERO
            cuda.syncthreads()
            part = ZERO
            for b in range(min(T, d - k0)):
                if radial:
                    e = xs[ty, b] - ys[tx, b]
                    part += e * e
                else:
                    part += xs[ty, b] * ys[tx, b]
            acc += part
            cuda.syncthreads()
        i = i0 + ty
        j = j0 + tx
        if i < n and j < m:
            out[i, j] = phi(g[j] * acc, coef0, degree)

    return kernel(tile)


def tile_kernel(phi, radial, dtype):
    """The tile kernel of device function ``phi`` (``phi`` of the NONE code: distances)."""
    return made("tile", (phi, bool(radial), np.dtype(dtype).str), _tile)


def _matvec(phi, radial, dtype, D, vdtype):
    R = ROWS
    f = np.dtype(dtype).type
    ZERO = f(0)
    VZERO = np.dtype(vdtype).type(0)
    nb = nbtype(dtype)
    nv = nbtype(vdtype)
    DS = max(D, 1)
    YSHAPE = (R, DS)
    VSHAPE = (RHS, R)

    def matvec(X, Y, Vt, g, coef0, degree, cols, out):
        # out[z, i, r]: the sum over the columns [z cols, (z + 1) cols) (grid axis z)
        ys = cuda.shared.array(YSHAPE, nb)
        vs = cuda.shared.array(VSHAPE, nv)
        gs = cuda.shared.array(R, nb)
        xr = cuda.local.array(DS, nb)
        acc = cuda.local.array(RHS, nv)
        tot = cuda.local.array(RHS, np.float64)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * R + t
        r0 = cuda.blockIdx.y * RHS
        z = cuda.blockIdx.z
        n = X.shape[0]
        c0 = z * cols
        m = min(Y.shape[0], c0 + cols)
        d = X.shape[1]
        nr = min(RHS, Vt.shape[0] - r0)
        row = i < n
        if D > 0:
            for k in range(d):
                xr[k] = X[i, k] if row else ZERO
        for r in range(RHS):
            tot[r] = 0.0
        for j0 in range(c0, m, R):
            j = j0 + t
            if D > 0:
                for k in range(d):
                    ys[t, k] = Y[j, k] if j < m else ZERO
            for r in range(nr):
                vs[r, t] = Vt[r0 + r, j] if j < m else VZERO
            gs[t] = g[j] if j < m else ZERO
            cuda.syncthreads()
            for r in range(RHS):
                acc[r] = VZERO
            if row:
                for jj in range(min(R, m - j0)):
                    s = ZERO
                    for k in range(d):
                        if D > 0:
                            a = xr[k]
                            b = ys[jj, k]
                        else:
                            a = X[i, k]
                            b = Y[j0 + jj, k]
                        if radial:
                            e = a - b
                            s += e * e
                        else:
                            s += a * b
                    kv = phi(gs[jj] * s, coef0, degree)
                    for r in range(nr):
                        acc[r] += kv * vs[r, jj]
                for r in range(nr):
                    tot[r] += acc[r]
            cuda.syncthreads()
        if row:
            for r in range(nr):
                out[z, i, r0 + r] = tot[r]

    return kernel(matvec)


def matvec_kernel(phi, radial, dtype, d, vdtype=None):
    """The matrix-free ``K(X, Y) @ V`` kernel for ``d`` features, ``V`` and the per-tile
    sums in ``vdtype`` (default: ``dtype``).  Grid: rows of ``X`` by ROWS, groups of RHS
    columns of ``V``, splits of the columns of ``K`` (``cols`` each; ``out[z]`` is split
    ``z``'s sum, added in order by :func:`splits_kernel`)."""
    vdtype = dtype if vdtype is None else vdtype
    return made("matvec", (phi, bool(radial), np.dtype(dtype).str, width(d), np.dtype(vdtype).str), _matvec)


def _splits():
    def splits(part, out):
        i, r = cuda.grid(2)
        if i < out.shape[0] and r < out.shape[1]:
            acc = 0.0
            for z in range(part.shape[0]):
                acc += part[z, i, r]
            out[i, r] = acc

    return kernel(splits)


def splits_kernel():
    """``out[i, r] = sum_z part[z, i, r]``, the splits in order (2-D grid)."""
    return made("splits", (), _splits)


def _floor(dtype, d):
    f = np.dtype(dtype).type
    STEP = f(1e-6)
    ZERO = f(0)

    def floor(m, g, out):
        # the arithmetic of one gaussian matrix-free row (d differences and squares, the
        # scaled exp, a multiply-add) over m columns made in registers: no memory traffic
        i = cuda.grid(1)
        if i < out.shape[0]:
            xi = f(i) * STEP
            yj = ZERO
            acc = ZERO
            for _ in range(m):
                s = ZERO
                for k in range(d):
                    e = xi - yj + f(k) * STEP
                    s += e * e
                acc += math.exp(-(g * s)) * yj
                yj += STEP
            out[i] = acc

    return kernel(floor)


def floor_kernel(dtype, d):
    """The device's arithmetic floor of ``gram_matvec`` with the gaussian kernel (one
    thread per row, ``m`` columns, ``d`` features): the benchmark's floor row."""
    return made("floor", (np.dtype(dtype).str, int(d)), _floor)
