"""Kernels of the RBF network (:mod:`fastrbf.models.network`): the transposed design
block (one row per centre, then the bias and the targets) for the TSQR pass, and the
pass that gives the training error and its gradient in the widths (learned gamma)."""

import numpy as np

from ._decorators import jit
from .kernels import apply_kernel
from .llvm.exp import fexp
from .tiles import JB, chunk_row


@jit
def design_chunk(C, Xt, lo, hi, dot, phi, g, c, degree, Y, gbuf, Bt):
    # IN: C (K, d) centres, Xt (d, n) the data as columns, rows lo:hi, kernel spec,
    #     g (K,) one gamma per centre, Y (n, k) targets; gbuf (JB,) scratch
    # OUT: Bt (K + 1 + k, hi - lo): Bt[j, r] = phi_j(x_{lo+r}) for the centres, then a
    #      row of ones (the bias), then the targets.  Transposed, so that Bt.T is the
    #      Fortran-ordered design block [Phi 1 Y] that LAPACK's QR reads.
    K = C.shape[0]
    k = Y.shape[1]
    for j0 in range(lo, hi, JB):
        j1 = min(hi, j0 + JB)
        L = j1 - j0
        for j in range(K):
            o = Bt[j, j0 - lo : j1 - lo]
            chunk_row(C, j, Xt, j0, j1, dot, o)
            gb = gbuf[:L]
            gb[:] = g[j]
            apply_kernel(phi, o, gb, c, degree)
    L = hi - lo
    for r in range(L):
        Bt[K, r] = 1.0
    for q in range(k):
        for r in range(L):
            Bt[K + 1 + q, r] = Y[lo + r, q]


@jit
def gamma_pass(C, Xt, lo, hi, g, W, b, T, want_grad, D, P, R, err, grad):
    # The squared error of a Gaussian RBF network on rows lo:hi and its gradient with
    # respect to log(gamma_j), without the N x K design matrix.
    # IN: C (K, d), Xt (d, n), g (K,), W (K, k), b (k,), T (n, k) targets;
    #     scratch D, P (K, JB), R (k, JB)
    # OUT: err[0] += sum of squared residuals; grad[j] += d err / d log(gamma_j)
    K = C.shape[0]
    k = W.shape[1]
    for j0 in range(lo, hi, JB):
        j1 = min(hi, j0 + JB)
        L = j1 - j0
        for q in range(k):
            rq = R[q, :L]
            bq = b[q]
            for r in range(L):
                rq[r] = bq - T[j0 + r, q]
        for j in range(K):
            dj = D[j, :L]
            pj = P[j, :L]
            chunk_row(C, j, Xt, j0, j1, np.bool_(False), dj)
            gj = g[j]
            for r in range(L):
                pj[r] = fexp(-(gj * dj[r]))
            for q in range(k):
                wq = W[j, q]
                rq = R[q, :L]
                for r in range(L):
                    rq[r] += wq * pj[r]
        e = 0.0
        for q in range(k):
            rq = R[q, :L]
            for r in range(L):
                e += rq[r] * rq[r]
        err[0] += e
        if want_grad:
            for j in range(K):
                dj = D[j, :L]
                pj = P[j, :L]
                s = 0.0
                for q in range(k):
                    wq = W[j, q]
                    rq = R[q, :L]
                    for r in range(L):
                        s += wq * rq[r] * pj[r] * dj[r]
                grad[j] += -2.0 * g[j] * s
