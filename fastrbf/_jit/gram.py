"""Gram-matrix kernels that are not a plain pairwise pass: kernel application after a
BLAS product, and the matrix-free product ``K(X, Y) @ V``."""

import numpy as np

from ._decorators import jit_reduce, pjit
from .distances import JB, fill_rows
from .kernels import apply_kernel


@pjit(tasks=lambda phi, g, c, degree, out: out.shape[0],
      work=lambda phi, g, c, degree, out: 8 * out.size)
def apply_rows(lo, hi, phi, g, c, degree, out):
    # IN: rows lo:hi, phi, g (m,), c (4,), degree
    # IN/OUT: out (n, m) dot products -> kernel values
    m = out.shape[1]
    for i in range(lo, hi):
        for j0 in range(0, m, JB):
            j1 = min(m, j0 + JB)
            apply_kernel(phi, out[i, j0:j1], g[j0:j1], c, degree)


@jit_reduce
def _dot(a, b):
    # sum_j a[j] b[j] with a float64 accumulator (also for float32 tiles)
    s = 0.0
    for j in range(a.shape[0]):
        s += a[j] * b[j]
    return s


RB = 16  # rows per task of gram_matvec


@pjit(tasks=lambda X, *_: (X.shape[0] + RB - 1) // RB,
      work=lambda X, Yt, Vt, *_: X.shape[0] * Yt.shape[1] * (Yt.shape[0] + 2 * Vt.shape[0] + 4))
def gram_matvec(lo, hi, X, Yt, Vt, dot, phi, g, c, degree, out):
    # IN: tasks lo:hi, X (n, d), Yt (d, m), Vt (k, m), dot, phi, g (m,), c (4,), degree
    # OUT: out (n, k) = K(X, Y) @ V.  Each task owns RB rows of out and a private
    # 2 x JB tile; K is never held.  Sums: one float64 partial per column chunk,
    # added in chunk order.
    n = X.shape[0]
    m = Yt.shape[1]
    k = Vt.shape[0]
    for b in range(lo, hi):
        i0 = b * RB
        i1 = min(n, i0 + RB)
        acc = np.zeros((i1 - i0, k), dtype=np.float64)
        tile = np.empty((2, min(m, JB)), dtype=out.dtype)
        for j0 in range(0, m, JB):
            j1 = min(m, j0 + JB)
            t0 = tile[0, : j1 - j0]
            t1 = tile[1, : j1 - j0]
            for i in range(i0, i1, 2):
                i2 = i + 1 if i + 1 < i1 else -1
                fill_rows(X, i, i2, Yt, j0, j1, dot, phi, g, c, degree, t0, t1)
                for q in range(k):
                    acc[i - i0, q] += _dot(t0, Vt[q, j0:j1])
                if i2 >= 0:
                    for q in range(k):
                        acc[i2 - i0, q] += _dot(t1, Vt[q, j0:j1])
        for i in range(i0, i1):
            for q in range(k):
                out[i, q] = acc[i - i0, q]
