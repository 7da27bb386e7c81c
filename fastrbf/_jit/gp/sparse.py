"""The per-feature gradient sums of the sparse Gaussian process (:mod:`fastrbf.gp._sparse`).

The variational bound depends on the length scales through ``K_nm`` and ``K_mm``; its
gradient needs ``sum_nm G_nm dK_nm / dlog l_k`` for a weight matrix ``G`` (n x m) that
the caller forms chunk by chunk with BLAS, and the same sum over the landmark pairs
(``X = Z``, ``G = F_K``: one kernel for both, one compile).  :func:`cross_grad_rows` computes these sums
for one chunk of rows in ``O(rows m d)``, the per-pair differences computed once and
used for the kernel's derivative and for every feature: never a matrix per length
scale.  It is a serial ``nogil`` kernel: the caller runs it inside its own row-chunk
tasks (between BLAS calls on one thread), one float64 partial per chunk, added in chunk
order, so the result does not depend on the thread count.
"""

import numpy as np

from .._decorators import jit
from ..grad import value_and_deriv


@jit
def cross_grad_rows(Xs, Zs, G, phi, c, degree, g0, part):
    # IN: Xs (r, d) rows of the data divided by the length scales, Zs (m, d) the
    #     landmarks divided by them, G (r, m) the weights of the rows, the kernel phi of
    #     t = g0 * s with s = ||xs_i - zs_j||^2 (c, degree: its constants)
    # OUT: part (d,) float64 += sum_ij G_ij dphi/dt(t_ij) g0 (xs_ik - zs_jk)^2
    r, d = Xs.shape
    m = Zs.shape[0]
    sq = np.empty(d)  # the squared differences of one pair, per feature
    acc = np.zeros(d)
    for i in range(r):
        for j in range(m):
            s = 0.0
            for k in range(d):
                t = Xs[i, k] - Zs[j, k]
                sq[k] = t * t
                s += sq[k]
            _, dv = value_and_deriv(phi, g0 * s, c, degree)
            w = G[i, j] * dv * g0
            for k in range(d):
                acc[k] += w * sq[k]
    for k in range(d):
        part[k] += acc[k]
