"""The fused normal-equations product of Nystroem kernel ridge (Falkon's one pass).

``nm_pass`` computes ``K(X, L)^T (K(X, L) @ V)`` (or ``K(X, L)^T Y``) in one pass over the rows of
``X``: two rows of ``K`` at a time are made in a private tile (distances, then the
kernel function, while in cache: :func:`fill_rows`), used for ``u = K_i V`` and at once
for ``P += K_i^T u``; ``K`` (n x m) is never held.  The rows are split into fixed
chunks (the size depends on ``n`` only), each chunk owns one float64 partial
``P_c`` (k, m), and the caller adds the partials in chunk order: the result is bitwise
the same for any thread count.
"""

import numpy as np

from ._decorators import jit_inline, pjit
from .tiles import dot64, fill_rows


@jit_inline
def _rows(X, r0, r1, Lt, Wt, cross, dot, phi, g, c, degree, t0, t1, Pt):
    # rows r0:r1 of X, two at a time: Pt (k, m) += K(X[r0:r1], L)^T A with the row
    # coefficients A = K(X[r0:r1], L) @ V (Wt = V^T, (k, m)) or, with cross, A = Y[r0:r1]
    # (Wt = Y^T, (k, n))
    m = Lt.shape[1]
    k = Wt.shape[0]
    j_start = np.int64(0)
    for i in range(r0, r1, 2):
        i2 = i + 1 if i + 1 < r1 else -1
        fill_rows(X, i, i2, Lt, j_start, m, dot, phi, g, c, degree, t0, t1)
        for q in range(k):
            row = Pt[q]
            a = Wt[q, i] if cross else dot64(t0, Wt[q])
            if i2 >= 0:
                b = Wt[q, i2] if cross else dot64(t1, Wt[q])
                for j in range(m):
                    row[j] += a * t0[j] + b * t1[j]
            else:
                for j in range(m):
                    row[j] += a * t0[j]


@pjit(tasks=lambda *args: args[-1].shape[0],
      work=lambda X, Lt, Wt, *_: X.shape[0] * Lt.shape[1] * (Lt.shape[0] + 4 * Wt.shape[0] + 4))
def nm_pass(lo, hi, X, Lt, Wt, cross, chunk, dot, phi, g, c, degree, partial):
    # IN: chunks lo:hi, X (n, d), Lt (d, m), Wt float64: V^T (k, m) for K_nm^T (K_nm V), or with cross
    #     Y^T (k, n) for K_nm^T Y; chunk (rows per partial, even), dot, phi, g (m,),
    #     c (4,), degree
    # OUT: partial (nch, k, m) float64, zeroed by the caller; partial[c] gets the rows
    #      c*chunk:(c+1)*chunk.  One task per chunk: no races.
    n = X.shape[0]
    m = Lt.shape[1]
    for ch in range(lo, hi):
        r0 = ch * chunk
        r1 = min(n, r0 + chunk)
        tile = np.empty((2, m), dtype=X.dtype)
        _rows(X, r0, r1, Lt, Wt, cross, dot, phi, g, c, degree, tile[0], tile[1], partial[ch])
