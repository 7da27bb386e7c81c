"""Gaussian-process kernels: the PRML covariance
``k(x, y) = t0 exp(-g ||x - y||^2) + t2 + t3 x.y`` (``g = t1 / 2``) built into a
buffer, and the gradient traces ``sum_ij W_ij dC_ij / dlog(t_k)`` computed on the fly
from the distances (never a matrix per parameter).

Serial ``nogil`` kernels over row ranges: the caller runs them on Python worker threads
(``_threads.map_ranges``), because a GP fit alternates them with multi-threaded LAPACK
calls, and numba's OpenMP threads spinning after a region slow the BLAS threads that
follow (measured 10x on this 2-core machine under load).  Symmetric matrices are done
as their upper triangle, rows paired ``(p, n - 1 - p)`` so that ranges of pairs carry
equal work.  Per-row partial sums are added in row order by the caller, so results do
not depend on the thread count.

:func:`stationary_grad_rows` is the same trace for the stationary kernels of the
registry (:mod:`fastrbf.gp._exact`): amplitude and one length scale per feature.
"""

import numpy as np

from .._decorators import jit, jit_inline
from ..grad import value_and_deriv
from ..llvm.exp import fexp
from ..tiles import JB, chunk_row, pair_block


@jit_inline
def _cov_row(X, i, Yt, j_start, t0, g, t2, t3, dotk, t, out_row):
    m = Yt.shape[1]
    for j0 in range(j_start, m, JB):
        j1 = min(m, j0 + JB)
        L = j1 - j0
        o = out_row[j0:j1]
        chunk_row(X, i, Yt, j0, j1, np.bool_(False), o)
        for j in range(L):
            o[j] = t0 * fexp(-(g * o[j])) + t2
        if dotk:
            tt = t[:L]
            chunk_row(X, i, Yt, j0, j1, np.bool_(True), tt)
            for j in range(L):
                o[j] += t3 * tt[j]


@jit
def cov_rows(X, Yt, lo, hi, t0, g, t2, t3, dotk, out):
    # IN: X (n, d), Yt (d, m), rows lo:hi; OUT: out[r - lo] = k(X[r], Y[:]) (a block)
    t = np.empty(JB, dtype=out.dtype)
    for i in range(lo, hi):
        _cov_row(X, i, Yt, 0, t0, g, t2, t3, dotk, t, out[i - lo])


@jit
def cov_upper(X, Xt, lo, hi, t0, g, t2, t3, dotk, out):
    # IN: X (n, d), Xt (d, n), row pairs lo:hi; OUT: the upper triangle (j >= i) of
    # rows p and n - 1 - p of out (n, n) = k(X, X)
    n = X.shape[0]
    t = np.empty(JB, dtype=out.dtype)
    for q in range(2 * lo, 2 * hi):  # rows p and n - 1 - p: one call site (the helper is inlined)
        r = pair_block(q, n)
        if r >= 0:
            _cov_row(X, r, Xt, r, t0, g, t2, t3, dotk, t, out[r])


@jit_inline
def _grad_row(X, i, Xt, Cinv, alpha, t0, g, dotk, r, t, part):
    # part[i, :] = sum_{j >= i} c_j W_ij dC_ij (c_j = 1 on the diagonal, 2 off it)
    n = X.shape[0]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    ai = alpha[i]
    for j0 in range(i, n, JB):
        j1 = min(n, j0 + JB)
        L = j1 - j0
        rr = r[:L]
        chunk_row(X, i, Xt, j0, j1, np.bool_(False), rr)
        if dotk:
            chunk_row(X, i, Xt, j0, j1, np.bool_(True), t[:L])
        for j in range(L):
            w = ai * alpha[j0 + j] - Cinv[i, j0 + j]
            if j0 + j != i:
                w = 2.0 * w
            gr = g * rr[j]
            e = t0 * fexp(-gr)
            s0 += w * e
            s1 -= w * e * gr
            s2 += w
            if dotk:
                s3 += w * t[j]
    part[i, 0] = s0
    part[i, 1] = s1
    part[i, 2] = s2
    part[i, 3] = s3


@jit
def grad_upper(X, Xt, Cinv, alpha, lo, hi, t0, g, dotk, part):
    # IN: X (n, d), Xt (d, n), Cinv (n, n) with the upper triangle of C^-1 (j >= i),
    #     alpha = C^-1 y, row pairs lo:hi
    # OUT: part (n, 4): per row, its share of sum_ij W_ij dC_ij/dlog t_k, k = 0..3
    #      without the factors t2, t3 (the caller's), W = alpha alpha^T - C^-1
    n = X.shape[0]
    r = np.empty(JB, dtype=np.float64)
    t = np.empty(JB, dtype=np.float64)
    for q in range(2 * lo, 2 * hi):  # rows p and n - 1 - p: one call site (the helper is inlined)
        i = pair_block(q, n)
        if i >= 0:
            _grad_row(X, i, Xt, Cinv, alpha, t0, g, dotk, r, t, part)


@jit
def clear_lower(out):
    # OUT: out (n, n) with its strict lower triangle (j < i) set to 0
    for i in range(1, out.shape[0]):
        for j in range(i):
            out[i, j] = 0.0


@jit
def stationary_grad_rows(Xs, W, lo, hi, phi, c, degree, g0, part):
    # IN: Xs (n, d) the data divided by the length scales, W (n, n) symmetric (the upper
    #     triangle is read), row pairs lo:hi (rows p and n - 1 - p), the kernel phi of
    #     t = g0 * s with s = ||xs_i - xs_j||^2 (c, degree: its constants)
    # OUT: part (n, d + 1) float64: for each row r, over j >= r (off-diagonal pairs twice),
    #      part[r, 0] = sum_j W_rj phi(t_rj) and
    #      part[r, 1 + k] = sum_j W_rj dphi/dt(t_rj) g0 (xs_rk - xs_jk)^2
    n, d = Xs.shape
    sq = np.empty(d)  # the squared differences of one pair, per feature
    for q in range(2 * lo, 2 * hi):
        r = pair_block(q, n)
        if r < 0:
            continue
        for j in range(r, n):
            s = 0.0
            for k in range(d):
                t = np.float64(Xs[r, k]) - np.float64(Xs[j, k])
                sq[k] = t * t
                s += sq[k]
            v, dv = value_and_deriv(phi, g0 * s, c, degree)
            w = W[r, j] if j == r else 2.0 * W[r, j]
            part[r, 0] += w * v
            wd = w * dv * g0
            for k in range(d):
                part[r, 1 + k] += wd * sq[k]
