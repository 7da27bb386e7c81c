"""Local RBF interpolation (SciPy's ``RBFInterpolator(neighbors=k)``): for each distinct
neighbourhood of k data points, the local system ``[[K + diag(alpha), P], [P^T, 0]]`` built
and solved by LU with partial pivoting (as SciPy's ``dgesv``), then evaluated at the query
points whose neighbourhood it is.

Squared distances are those of :func:`fastrbf.sqdist` (:func:`~.tiles.chunk_row`).
One task per distinct neighbourhood: each task owns the output rows of its queries, so
results do not depend on the thread count.  Everything is float64 inside.
"""

import numpy as np

from ._decorators import jit_inline, pjit
from .kernels import apply_kernel
from .tiles import chunk_row


@jit_inline
def _monomials(x, shift, scale, powers, out):
    # out[p] = prod_j ((x_j - shift_j) / scale_j) ** powers[p, j]
    d = x.shape[0]
    for p in range(powers.shape[0]):
        v = 1.0
        for j in range(d):
            t = (x[j] - shift[j]) / scale[j]
            for _ in range(powers[p, j]):
                v *= t
        out[p] = v


def _work(starts, order, nbr, X, *_):
    k = nbr.shape[1]
    return (starts.shape[0] - 1) * (k * k * (X.shape[1] + 8) + k * k * k // 3) + order.shape[0] * k * X.shape[1]


@pjit(tasks=lambda starts, *_: starts.shape[0] - 1, work=_work)
def local_solve(lo, hi, starts, order, nbr, X, Y, alpha, Xq, powers, phi, g, c, degree, out, status):
    # IN: tasks lo:hi (distinct neighbourhoods); starts (U + 1,), order (m,): the queries of
    #     neighbourhood u are order[starts[u]:starts[u + 1]]; nbr (U, k) data indices;
    #     X (n, d), Y (n, t), alpha (n,) smoothing, Xq (m, d), powers (q, d) of the tail;
    #     phi, g (k,) the gamma of every column, c, degree: the kernel
    # OUT: out (m, t) the values at the queries; status[u] = 1 where the local system is
    #      singular (a zero pivot), else 0
    k = nbr.shape[1]
    q = powers.shape[0]
    d = X.shape[1]
    t = Y.shape[1]
    N = k + q
    A = np.empty((N, N))
    B = np.empty((N, t))
    yl = np.empty((k, d))
    ylt = np.empty((d, k))  # the neighbourhood as columns, for chunk_row
    nodot = np.bool_(False)
    shift = np.empty(d)
    scale = np.empty(d)
    kv = np.empty(k)
    pv = np.empty(q)
    for u in range(lo, hi):
        for a in range(k):
            for j in range(d):
                yl[a, j] = X[nbr[u, a], j]
                ylt[j, a] = yl[a, j]
        for j in range(d):
            mn = yl[0, j]
            mx = yl[0, j]
            for a in range(1, k):
                mn = min(mn, yl[a, j])
                mx = max(mx, yl[a, j])
            shift[j] = (mx + mn) / 2
            sc = (mx - mn) / 2
            scale[j] = sc if sc != 0.0 else 1.0
        for a in range(k):  # the upper triangle, mirrored: sqdist is symmetric bit for bit
            row = A[a, a:k]
            chunk_row(yl, a, ylt, a, k, nodot, row)
            apply_kernel(phi, row, g[a:], c, degree)
            for b in range(a + 1, k):
                A[b, a] = A[a, b]
            A[a, a] += alpha[nbr[u, a]]
            _monomials(yl[a], shift, scale, powers, pv)
            for p in range(q):
                A[a, k + p] = pv[p]
                A[k + p, a] = pv[p]
            for r in range(t):
                B[a, r] = Y[nbr[u, a], r]
        for p in range(q):
            for p2 in range(q):
                A[k + p, k + p2] = 0.0
            for r in range(t):
                B[k + p, r] = 0.0
        # LU with partial pivoting, applied to B as it goes (dgesv's elimination)
        singular = False
        for col in range(N):
            piv = col
            big = abs(A[col, col])
            for r in range(col + 1, N):
                if abs(A[r, col]) > big:
                    big = abs(A[r, col])
                    piv = r
            if big == 0.0:
                singular = True
                break
            if piv != col:
                for j in range(N):
                    tmp = A[col, j]
                    A[col, j] = A[piv, j]
                    A[piv, j] = tmp
                for r in range(t):
                    tmp = B[col, r]
                    B[col, r] = B[piv, r]
                    B[piv, r] = tmp
            inv = 1.0 / A[col, col]
            for r in range(col + 1, N):
                f = A[r, col] * inv
                if f != 0.0:
                    for j in range(col + 1, N):
                        A[r, j] -= f * A[col, j]
                    for s in range(t):
                        B[r, s] -= f * B[col, s]
        status[u] = 1 if singular else 0
        if singular:
            continue
        for col in range(N - 1, -1, -1):
            for s in range(t):
                acc = B[col, s]
                for j in range(col + 1, N):
                    acc -= A[col, j] * B[j, s]
                B[col, s] = acc / A[col, col]
        for i0 in range(starts[u], starts[u + 1]):
            i = order[i0]
            chunk_row(Xq, i, ylt, 0, k, nodot, kv)
            apply_kernel(phi, kv, g, c, degree)
            _monomials(Xq[i], shift, scale, powers, pv)
            for r in range(t):
                acc = 0.0
                for a in range(k):
                    acc += kv[a] * B[a, r]
                for p in range(q):
                    acc += pv[p] * B[k + p, r]
                out[i, r] = acc
