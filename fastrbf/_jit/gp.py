"""Gaussian-process kernels: the PRML covariance
``k(x, y) = t0 exp(-g ||x - y||^2) + t2 + t3 x.y`` (``g = t1 / 2``) built into a
buffer, and the gradient traces ``sum_ij W_ij dC_ij / dlog(t_k)`` computed on the fly
from the distances (never a matrix per parameter).  Rows are the tasks; per-row
partial sums are added in row order by the caller, so results do not depend on the
thread count."""

import numpy as np
from numba import prange

from ._decorators import pjit
from .distances import JB, chunk_row
from .exp import fexp


@pjit
def build_cov(X, Yt, t0, g, t2, t3, dotk, out):
    # IN: X (n, d), Yt (d, m), the parameters, dotk (include t3 x.y)
    # OUT: out (n, m) = k(X[i], Y[j])
    n = X.shape[0]
    m = Yt.shape[1]
    for i in prange(n):
        t = np.empty(JB, dtype=out.dtype)
        for j0 in range(0, m, JB):
            j1 = min(m, j0 + JB)
            L = j1 - j0
            o = out[i, j0:j1]
            chunk_row(X, i, Yt, j0, j1, False, o)
            for j in range(L):
                o[j] = t0 * fexp(-(g * o[j])) + t2
            if dotk:
                tt = t[:L]
                chunk_row(X, i, Yt, j0, j1, True, tt)
                for j in range(L):
                    o[j] += t3 * tt[j]


@pjit
def grad_traces(X, Xt, Cinv, alpha, t0, g, t2, t3, dotk, part):
    # IN: X (n, d), Xt (d, n), Cinv (n, n) the full inverse covariance, alpha = C^-1 y
    # OUT: part (n, 4): per row i, sum_j W_ij dC_ij/dlog t_k for k = 0..3, with
    #      W = alpha alpha^T - C^-1 (the noise term is the caller's)
    n = X.shape[0]
    for i in prange(n):
        r = np.empty(JB, dtype=np.float64)
        t = np.empty(JB, dtype=np.float64)
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        ai = alpha[i]
        for j0 in range(0, n, JB):
            j1 = min(n, j0 + JB)
            L = j1 - j0
            rr = r[:L]
            chunk_row(X, i, Xt, j0, j1, False, rr)
            if dotk:
                tt = t[:L]
                chunk_row(X, i, Xt, j0, j1, True, tt)
            for j in range(L):
                w = ai * alpha[j0 + j] - Cinv[i, j0 + j]
                gr = g * rr[j]
                e = t0 * fexp(-gr)
                s0 += w * e
                s1 -= w * e * gr
                s2 += w
                if dotk:
                    s3 += w * t[j]
        part[i, 0] = s0
        part[i, 1] = s1
        part[i, 2] = s2 * t2
        part[i, 3] = s3 * t3
