"""Lloyd (k-means) kernels: assignment and update.

Assignment has two paths (chosen by the public wrapper):

- ``assign_direct``: exact squared distances to every centre by direct differences
  (the distance kernel's ``chunk_row2``), argmin with ties to the lowest index.
- ``certify_chunk``: after a float32 GEMM has given ``G = x . c`` for a chunk of
  (centred) rows, ``v_j = ||c_j||^2 - 2 G_j`` ranks the centres; every centre within
  the rigorous error bound of the best is recomputed exactly by direct differences,
  and the exact argmin among them (lowest index on ties) is the label.  So the label
  is always the exact one, and the GEMM only decides the clear cases.

The reported distance to the chosen centre is always the direct-difference value.

Update: per fixed-size chunk of rows a partial (sum, weight) slot; the slots are added
in chunk order, so the result is bitwise the same for any thread count.
"""

import numpy as np
from numba import prange

from ._decorators import jit, pjit
from .distances import JB, chunk_row, chunk_row2


@jit
def _argmin_row(t, j0, best, bi):
    for j in range(t.shape[0]):
        if t[j] < best:
            best = t[j]
            bi = j0 + j
    return best, bi


@pjit
def assign_direct(X, Ct, labels, mind):
    # IN: X (n, d), Ct (d, K); OUT: labels (n,) int64, mind (n,) min squared distance
    n = X.shape[0]
    K = Ct.shape[1]
    L = min(K, JB)
    for t in prange((n + 1) // 2):
        i = 2 * t
        tile = np.empty((2, L), dtype=X.dtype)
        b0 = np.inf
        b1 = np.inf
        l0 = 0
        l1 = 0
        for j0 in range(0, K, JB):
            j1 = min(K, j0 + JB)
            o = tile[0, : j1 - j0]
            p = tile[1, : j1 - j0]
            if i + 1 < n:
                chunk_row2(X, i, i + 1, Ct, j0, j1, o, p)
                b1, l1 = _argmin_row(p, j0, b1, l1)
            else:
                chunk_row(X, i, Ct, j0, j1, False, o)
            b0, l0 = _argmin_row(o, j0, b0, l0)
        labels[i] = l0
        mind[i] = b0
        if i + 1 < n:
            labels[i + 1] = l1
            mind[i + 1] = b1


@jit
def _exact_sq(X, i, C, j):
    d = X.shape[1]
    acc = 0.0
    for k in range(d):
        t = np.float64(X[i, k]) - np.float64(C[j, k])
        acc += t * t
    return acc


@pjit
def certify_chunk(G, nx, nc, X, C, row0, err_coef, labels, mind):
    # IN: G (b, K) float32 dot products of centred rows row0:row0+b with the centred
    #     centres, nx (n,) nc (K,) float64 squared norms of the centred data,
    #     X (n, d), C (K, d) original data, err_coef: the bound factor (d + 4) eps32
    # OUT: labels[row0:row0+b], mind[row0:row0+b]
    b = G.shape[0]
    K = G.shape[1]
    ncmax = 0.0
    for j in range(K):
        ncmax = max(ncmax, nc[j])
    for r in prange(b):
        i = row0 + r
        g = G[r]
        best = np.inf
        bi = 0
        for j in range(K):
            v = nc[j] - 2.0 * np.float64(g[j])
            if v < best:
                best = v
                bi = j
        # |error of v_j| <= e for every j: e = (d + 4) eps32 (||x||^2 + max ||c||^2)
        e = err_coef * (nx[i] + ncmax)
        lim = best + 2.0 * e
        ncand = 0
        for j in range(K):
            if nc[j] - 2.0 * np.float64(g[j]) <= lim:
                ncand += 1
        if ncand == 1:
            labels[i] = bi
            mind[i] = _exact_sq(X, i, C, bi)
        else:
            eb = np.inf
            ebi = 0
            for j in range(K):
                if nc[j] - 2.0 * np.float64(g[j]) <= lim:
                    dj = _exact_sq(X, i, C, j)
                    if dj < eb:
                        eb = dj
                        ebi = j
            labels[i] = ebi
            mind[i] = eb


UPDATE_CHUNK = 2048  # rows per partial-sum slot (fixed: results do not depend on threads)


@pjit
def update_partials(X, labels, w, sums, wsum):
    # IN: X (n, d), labels (n,), w (n,) float64 weights
    # OUT: sums (nchunks, K, d) float64, wsum (nchunks, K) float64 partial slots
    n = X.shape[0]
    d = X.shape[1]
    nch = sums.shape[0]
    for c in prange(nch):
        s = sums[c]
        ws = wsum[c]
        s[:] = 0.0
        ws[:] = 0.0
        for i in range(c * UPDATE_CHUNK, min(n, (c + 1) * UPDATE_CHUNK)):
            lab = labels[i]
            wi = w[i]
            ws[lab] += wi
            row = s[lab]
            for k in range(d):
                row[k] += wi * X[i, k]


@pjit
def reduce_partials(sums, wsum, out_sums, out_w):
    # IN: sums (nchunks, K, d), wsum (nchunks, K); OUT: out_sums (K, d), out_w (K,)
    # summed over chunks in chunk order; parallel over clusters.
    nch = sums.shape[0]
    K = sums.shape[1]
    d = sums.shape[2]
    for j in prange(K):
        acc_w = 0.0
        for k in range(d):
            out_sums[j, k] = 0.0
        for c in range(nch):
            acc_w += wsum[c, j]
            for k in range(d):
                out_sums[j, k] += sums[c, j, k]
        out_w[j] = acc_w
