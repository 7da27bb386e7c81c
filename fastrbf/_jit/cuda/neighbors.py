"""Brute-force k nearest neighbours on the device.

One thread per query keeps its ``k`` best (squared distance, index) pairs sorted in
registers (a list of KMAX >= k slots, KMAX a compile-time power of two up to
:data:`MAX_K`; with k = 1 this is Lloyd's assignment); the training points pass through shared memory ROWS at a time, in index
order.  A point enters the list only when strictly closer than its last entry and is
placed after the entries it ties with, so ties go to the lowest index, as on the CPU.
Distances are direct differences summed in the dtype, feature by feature.
"""

import numpy as np
from numba import cuda

from .target import ROWS, kernel, made, nbtype, width

#: the largest ``k`` of the device's k-NN
MAX_K = 128


def _knn(dtype, D, KMAX):
    R = ROWS
    f = np.dtype(dtype).type
    ZERO = f(0)
    INF = f(np.inf)
    nb = nbtype(dtype)
    DS = max(D, 1)
    SHAPE = (R, DS)

    def knn(X, Q, k, idx, dist):
        ys = cuda.shared.array(SHAPE, nb)
        q = cuda.local.array(DS, nb)
        bd = cuda.local.array(KMAX, nb)
        bi = cuda.local.array(KMAX, np.int64)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * R + t
        n = X.shape[0]
        d = X.shape[1]
        row = i < Q.shape[0]
        if D > 0:
            for c in range(d):
                q[c] = Q[i, c] if row else ZERO
        for s in range(k):
            bd[s] = INF
            bi[s] = -1
        for j0 in range(0, n, R):
            j = j0 + t
            if D > 0:
                for c in range(d):
                    ys[t, c] = X[j, c] if j < n else ZERO
            cuda.syncthreads()
            if row:
                for jj in range(min(R, n - j0)):
                    s2 = ZERO
                    for c in range(d):
                        if D > 0:
                            e = q[c] - ys[jj, c]
                        else:
                            e = Q[i, c] - X[j0 + jj, c]
                        s2 += e * e
                    # a NaN never enters; bi == -1 marks a free slot (inf distances enter)
                    if s2 < bd[k - 1] or (bi[k - 1] < 0 and s2 == s2):
                        p = k - 1
                        while p > 0 and (bi[p - 1] < 0 or s2 < bd[p - 1]):
                            bd[p] = bd[p - 1]
                            bi[p] = bi[p - 1]
                            p -= 1
                        bd[p] = s2
                        bi[p] = j0 + jj
            cuda.syncthreads()
        if row:
            for s in range(k):
                idx[i, s] = bi[s]
                dist[i, s] = bd[s]

    return kernel(knn)


def knn_kernel(dtype, d, k):
    """The k-NN kernel for ``d`` features and ``k <= MAX_K`` neighbours (k = 1: Lloyd's
    assignment)."""
    kmax = 1
    while kmax < k:
        kmax *= 2
    return made("knn", (np.dtype(dtype).str, width(d), kmax), _knn)
