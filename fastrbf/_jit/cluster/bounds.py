"""Kernels of the bounded Lloyd assignment (Hamerly's bounds; the rules and the proof
are in :mod:`fastrbf.cluster._bounded`).

Every bound is on a true Euclidean distance (not squared) and is kept in float64,
rounded the safe way: an upper bound is multiplied by ``UP``, a lower bound by ``DOWN``
after each operation, which covers the rounding of that operation.  A row whose bounds
do not prove its label is recomputed with the arithmetic of the brute-force
assignment: for the direct path the distances in the data's dtype, one FMA chain over
the features per centre (that of :func:`fastrbf._jit.tiles.chunk_row`); for the other
paths the float64 distances of :func:`fastrbf._jit.tiles.direct_sq`, ranked in float32
by the micro-kernel or by a GEMM (the certifying kernels of :mod:`fastrbf._jit.cluster.certify`
with ``mode=BOUNDS``, which also give the bounds).  The argmin keeps the lowest index
on ties.  A distance used only for a bound (never to choose a label)
is summed in any order (:func:`sq_any_order`, by whole vectors): the error bound of a
sum of non-negative terms does not depend on the order.  ``UP`` and ``DOWN`` (in
``certify``, beside the other bound helpers) also cover
a division that LLVM turns into a multiplication by the reciprocal (``arcp``): two
roundings instead of one.
"""

import numpy as np

from .._decorators import jit, jit_inline
from ..llvm.micro import sq_row
from .certify import DOWN, EPS64, UP, lower_from_sq, upper_from_sq


@jit
def centre_bounds(C_old, C, gam, eta, shift, half_gap):
    # IN: C_old, C (K, d) the previous and the current centres, gam/eta the relative
    #     and absolute error of a float64 sum of d squares
    # OUT: shift (K,) >= ||C_j - C_old_j||, half_gap (K,) <= min_{l != j} ||C_j - C_l|| / 2
    # The squared distances are summed in any order (sq_row, whole vectors): the error
    # bound of a sum of non-negative terms does not depend on it.
    # The smallest squared gap of each centre first, then one square root per centre:
    # the bound is a non-decreasing function of the squared distance (every rounded
    # step is), so this is the minimum of the bounds, bit for bit, for a square root
    # per centre instead of per pair (see docs/performance.md, 'k-means').
    K = C.shape[0]
    d = C.shape[1]
    for j in range(K):
        shift[j] = np.sqrt((sq_row(C, j * d, C_old, j * d, d) + eta) / (1.0 - gam)) * UP
        half_gap[j] = np.inf
    for j in range(K):
        for m in range(j + 1, K):
            g = sq_row(C, j * d, C, m * d, d)
            if g < half_gap[j]:
                half_gap[j] = g
            if g < half_gap[m]:
                half_gap[m] = g
    for j in range(K):
        if K > 1:
            half_gap[j] = 0.5 * np.sqrt(max(half_gap[j] - eta, 0.0) / (1.0 + gam)) * DOWN


@jit_inline
def sq_any_order(X, i, C, j):
    # the float64 squared distance of row i of X to centre j summed in any order (by
    # whole vectors): within the same error bound as direct_sq, for bounds only
    d = X.shape[1]
    return sq_row(X, i * d, C, j * d, d)


@jit
def init_upper(mind, gam, eta, lo, hi, U, L):
    # OUT: U[lo:hi] upper bounds from the brute-force distances mind, L[lo:hi] = 0
    for i in range(lo, hi):
        U[i] = upper_from_sq(mind[i], gam, eta)
        L[i] = 0.0


@jit_inline
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


BOUND_ROWS = 256  # rows per block of bound_rows


@jit
def bound_rows(X, C, shift, far1, far_j, far2, half_gap, gam, eta, gam64, eta64, lo, hi, labels, U, L, fail, fs, ok,
               loose):
    # IN: X (n, d), C (K, d) the current centres, shift (K,) upper bounds of the
    #     centres' moves since U and L were valid, far1 the largest shift (of centre
    #     far_j), far2 the largest of the others, half_gap (K,) lower bounds of half the
    #     distance of each centre to the nearest other, gam/eta the relative and absolute
    #     error bound of a brute-force squared distance, gam64/eta64 that of direct_sq,
    #     the rows lo:hi to do (serial)
    # IN/OUT: U (n,) upper bound of the distance to the labelled centre, L (n,) lower
    #     bound of the distance to every other centre (both moved by the shifts)
    # OUT: fail[:m] the rows whose label the bounds do not prove; returns m
    # scratch: fs (4, BOUND_ROWS) float64, ok (BOUND_ROWS,) bool, loose (BOUND_ROWS,) int64
    # D_a < D_j is proved when u^2 (1 + gam) + eta < l^2 (1 - gam) - eta; hi_f, lo_f and
    # the factor of eta2 also cover the three roundings of the test itself
    hi_f = (1.0 + gam) * (1.0 + 8.0 * EPS64)
    lo_f = (1.0 - gam) * (1.0 - 8.0 * EPS64)
    eta2 = 2.0 * eta * (1.0 + 8.0 * EPS64)
    # By blocks of BOUND_ROWS rows.  First the test with the moved bounds alone (no read
    # of X; the centres' shifts and gaps gathered, then the bounds without a branch:
    # vectorised, square roots included); then, for the rows it fails, the upper bound
    # tightened with the distance to the labelled centre and the test again; the rows
    # that fail it too are listed.  Why: one loop per row held a chain of about 100 cycles
    # that the reorder buffer could not overlap (see docs/performance.md, 'k-means').
    sa = fs[0]
    gap2 = fs[1]
    far = fs[2]
    D = fs[3]
    m = 0
    for b0 in range(lo, hi, BOUND_ROWS):
        nb = min(BOUND_ROWS, hi - b0)
        for r in range(nb):
            a = labels[b0 + r]
            sa[r] = shift[a]
            gap2[r] = 2.0 * half_gap[a]
            far[r] = far2 if a == far_j else far1
        Ub = U[b0:b0 + nb]
        Lb = L[b0:b0 + nb]
        for r in range(nb):
            l = max((Lb[r] - far[r]) * DOWN, 0.0)
            u = (Ub[r] + sa[r]) * UP
            lb = max(l, (gap2[r] - u) * DOWN)
            Lb[r] = l
            Ub[r] = u
            ok[r] = u * u * hi_f + eta2 < lb * lb * lo_f
        nl = 0
        for r in range(nb):
            loose[nl] = r
            nl += not ok[r]
        for q in range(nl):
            r = loose[q]
            D[q] = sq_any_order(X, b0 + r, C, labels[b0 + r])
        for q in range(nl):
            r = loose[q]
            u = min(Ub[r], upper_from_sq(D[q], gam64, eta64))
            lb = max(Lb[r], (gap2[r] - u) * DOWN)
            Ub[r] = u
            ok[q] = u * u * hi_f + eta2 < lb * lb * lo_f
        for q in range(nl):
            fail[m] = b0 + loose[q]
            m += not ok[q]
    return m


@jit
def full_rows(X, Ct, rows, gam, eta, labels, U, L):
    # IN: X (n, d), Ct (d, K) the centres' transpose in X's dtype, rows (m,)
    # OUT: for each row i in rows: labels[i] by the direct path's arithmetic (its
    #      argmin, ties to the lowest index), U[i] and L[i] from its smallest and
    #      second smallest distance
    K = Ct.shape[1]
    o = np.empty(K, dtype=Ct.dtype)
    for r in range(rows.shape[0]):
        i = rows[r]
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
