"""Kernels of the bounded Lloyd assignment (Hamerly's bounds; the rules and the proof
are in :mod:`fastrbf._bounded_lloyd`).

Every bound is on a true Euclidean distance (not squared) and is kept in float64,
rounded the safe way: an upper bound is multiplied by ``UP``, a lower bound by ``DOWN``
after each operation, which covers the rounding of that operation.  A row whose bounds
do not prove its label is recomputed with the arithmetic of the brute-force
assignment: for the direct path the distances in the data's dtype, one FMA chain over
the features per centre (that of :func:`fastrbf._jit.tiles.chunk_row`); for the GEMM
path the float64 distances of :func:`fastrbf._jit.lloyd._exact_sq`.  The argmin keeps
the lowest index on ties.
"""

import numpy as np

from ._decorators import jit
from .lloyd import _exact_sq, update_partials

EPS64 = float(np.finfo(np.float64).eps)
UP = 1.0 + 4.0 * EPS64  # covers one rounding (and a margin) of a float64 upper bound
DOWN = 1.0 - 4.0 * EPS64


@jit
def centre_bounds(C_old, C, gam, eta, shift, half_gap):
    # IN: C_old, C (K, d) the previous and the current centres, gam/eta the relative
    #     and absolute error of a float64 sum of d squares
    # OUT: shift (K,) >= ||C_j - C_old_j||, half_gap (K,) <= min_{l != j} ||C_j - C_l|| / 2
    #      (inf for K = 1)
    K = C.shape[0]
    d = C.shape[1]
    for j in range(K):
        acc = 0.0
        for k in range(d):
            t = np.float64(C[j, k]) - np.float64(C_old[j, k])
            acc += t * t
        shift[j] = np.sqrt((acc + eta) / (1.0 - gam)) * UP
        half_gap[j] = np.inf
    for j in range(K):
        for m in range(j + 1, K):
            acc = 0.0
            for k in range(d):
                t = np.float64(C[j, k]) - np.float64(C[m, k])
                acc += t * t
            g = 0.5 * np.sqrt(max(acc - eta, 0.0) / (1.0 + gam)) * DOWN
            if g < half_gap[j]:
                half_gap[j] = g
            if g < half_gap[m]:
                half_gap[m] = g


@jit
def upper_from_sq(D, gam, eta):
    # an upper bound on the true distance whose computed square is D
    return np.sqrt((D + eta) / (1.0 - gam)) * UP


@jit
def lower_from_sq(D, gam, eta):
    # a lower bound on the true distance whose computed square is D
    return np.sqrt(max(D - eta, 0.0) / (1.0 + gam)) * DOWN


@jit
def init_upper(mind, gam, eta, lo, hi, U, L):
    # OUT: U[lo:hi] upper bounds from the brute-force distances mind, L[lo:hi] = 0
    for i in range(lo, hi):
        U[i] = upper_from_sq(mind[i], gam, eta)
        L[i] = 0.0


@jit
def _full_row(X, i, Ct, o):
    # o[:] = the squared distances of row i of X to the centres (columns of Ct, in the
    # dtype of Ct), one FMA chain over the features per centre, vectorised over centres
    d = X.shape[1]
    K = Ct.shape[1]
    for j in range(K):
        o[j] = 0
    for k in range(d):
        xk = Ct.dtype.type(X[i, k])
        ck = Ct[k]
        for j in range(K):
            t = xk - ck[j]
            o[j] += t * t


@jit
def bounded_chunks(X, C, Ct, w, shift, far1, far_j, far2, half_gap, gam, eta, gam64, eta64, chunk, c_lo, c_hi,
                   labels, U, L, part, partw, n_full):
    # IN: X (n, d), C (K, d) the current centres, Ct (d, K) their transpose in the dtype
    #     of the brute-force distances, w (n,) float64 weights, shift (K,) upper bounds
    #     of the centres' moves since U and L were valid, far1 the largest shift (of
    #     centre far_j), far2 the largest of the others, half_gap (K,) lower bounds of
    #     half the distance of each centre to the nearest other, gam/eta the relative
    #     and absolute error bound of a brute-force squared distance, gam64/eta64 that
    #     of _exact_sq, chunk rows per update slot, the slots c_lo:c_hi to do (serial)
    # IN/OUT: labels (n,), U (n,) upper bound of the distance to the labelled centre,
    #     L (n,) lower bound of the distance to every other centre
    # OUT: part, partw the partial update slots of the chunks (as update_partials),
    #      n_full[c] rows of chunk c recomputed against every centre
    n = X.shape[0]
    K = C.shape[0]
    # D_a < D_j is proved when u^2 (1 + gam) + eta < l^2 (1 - gam) - eta; hi, lo and the
    # factor of eta2 also cover the three roundings of the test itself
    hi = (1.0 + gam) * (1.0 + 8.0 * EPS64)
    lo = (1.0 - gam) * (1.0 - 8.0 * EPS64)
    eta2 = 2.0 * eta * (1.0 + 8.0 * EPS64)
    o = np.empty(K, dtype=Ct.dtype)
    for c in range(c_lo, c_hi):
        nf = 0
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            a = labels[i]
            u = (U[i] + shift[a]) * UP
            l = (L[i] - (far2 if a == far_j else far1)) * DOWN
            l = max(l, 0.0)
            lb = max(l, (2.0 * half_gap[a] - u) * DOWN)
            if u * u * hi + eta2 < lb * lb * lo:
                U[i] = u
                L[i] = l
                continue
            # tighten the upper bound with the distance to the labelled centre
            u = upper_from_sq(_exact_sq(X, i, C, a), gam64, eta64)
            lb = max(l, (2.0 * half_gap[a] - u) * DOWN)
            if u * u * hi + eta2 < lb * lb * lo:
                U[i] = u
                L[i] = l
                continue
            # recompute against every centre with the brute-force arithmetic
            nf += 1
            _full_row(X, i, Ct, o)
            best = np.inf
            second = np.inf
            bi = 0
            for j in range(K):
                dj = np.float64(o[j])
                if dj < best:
                    second = best
                    best = dj
                    bi = j
                elif dj < second:
                    second = dj
            labels[i] = bi
            U[i] = upper_from_sq(best, gam, eta)
            L[i] = lower_from_sq(second, gam, eta)
        n_full[c] = nf
        update_partials(X, labels, w, chunk, c, c + 1, part, partw)


@jit
def labelled_sq(X, Ct, labels, lo, hi, mind):
    # OUT: mind[lo:hi] = the brute-force squared distance of each row to its labelled
    # centre (the arithmetic of _full_row for one centre)
    d = X.shape[1]
    for i in range(lo, hi):
        j = labels[i]
        acc = Ct[0, j] - Ct[0, j]
        for k in range(d):
            t = Ct.dtype.type(X[i, k]) - Ct[k, j]
            acc += t * t
        mind[i] = acc
