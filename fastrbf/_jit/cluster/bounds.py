"""Kernels of the bounded Lloyd assignment (Hamerly's bounds; the rules and the proof
are in :mod:`fastrbf.cluster._bounded`).

Every bound is on a true Euclidean distance (not squared) and is kept in float64,
rounded the safe way: an upper bound is multiplied by ``UP``, a lower bound by ``DOWN``
after each operation, which covers the rounding of that operation.  A row whose bounds
do not prove its label is recomputed with the arithmetic of the brute-force
assignment: for the direct path the distances in the data's dtype, one FMA chain over
the features per centre (that of :func:`fastrbf._jit.tiles.chunk_row`); for the other
paths the float64 distances of :func:`fastrbf._jit.cluster.certify.exact_sq`, ranked in float32
by the micro-kernel (:func:`certify_rows_direct`) or by a GEMM
(:func:`certify_rows_packed`, :func:`certify_rows`).  The argmin keeps the lowest index
on ties.  A distance used only for a bound (never to choose a label)
is summed in any order (:func:`sq_any_order`, by whole vectors): the error bound of a
sum of non-negative terms does not depend on the order.  ``UP`` and ``DOWN`` also cover
a division that LLVM turns into a multiplication by the reciprocal (``arcp``): two
roundings instead of one.
"""

import numpy as np

from .._decorators import jit, jit_inline
from ..llvm.micro import argmin_cols, sq_argmin_block, sq_row
from .certify import cleared, exact_candidates, exact_two, from_order_key, order_key, packed_keys

EPS64 = float(np.finfo(np.float64).eps)
UP = 1.0 + 4.0 * EPS64  # covers one rounding (and a margin) of a float64 upper bound
DOWN = 1.0 - 4.0 * EPS64


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
    # whole vectors): within the same error bound as exact_sq, for bounds only
    d = X.shape[1]
    return sq_row(X, i * d, C, j * d, d)


@jit_inline
def upper_from_sq(D, gam, eta):
    # an upper bound on the true distance whose computed square is D
    return np.sqrt((D + eta) / (1.0 - gam)) * UP


@jit_inline
def lower_from_sq(D, gam, eta):
    # a lower bound on the true distance whose computed square is D
    return np.sqrt(max(D - eta, 0.0) / (1.0 + gam)) * DOWN


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
    #     error bound of a brute-force squared distance, gam64/eta64 that of exact_sq,
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


@jit_inline
def lower_from_ranked(nxi, b, e, gam64):
    # a lower bound on the true distance of a row (||x - mu||^2 = nxi) to every centre
    # whose GEMM ranking value is >= b: d_j^2 = ||x - mu||^2 + v_j >= nxi (1 - gam64) +
    # (b - e); twice e, and the rounding of the sum, for safety
    a = nxi * (1.0 - gam64)
    c = 2.0 * e
    s = (a + b - c) - 4.0 * EPS64 * (abs(a) + abs(b) + abs(c))
    return np.sqrt(max(s, 0.0)) * DOWN


@jit
def certify_rows(GT, rows, nx, nc32, ncmax, X, C, err_coef, gam64, eta64, labels, U, L):
    # IN: GT (m, K) float32 dot products of the centred rows `rows` with the centred
    #     centres, nx, nc32, ncmax, err_coef as in fastrbf._jit.cluster.certify.certify_cols
    # OUT: for each row i in rows: labels[i] the argmin of the float64 distances
    #      (exact_sq) over the centres the ranking cannot exclude, ties to the lowest
    #      index (the rule of certify_cols), U[i] from that distance, L[i] from the
    #      ranking value of the nearest other centre less twice its error bound
    K = GT.shape[1]
    two = np.float32(2.0)
    for r in range(rows.shape[0]):
        i = rows[r]
        g = GT[r]
        m1 = np.float32(np.inf)
        m2 = np.float32(np.inf)
        j1 = 0
        for j in range(K):
            v = nc32[j] - two * g[j]
            if v < m1:
                m2 = m1
                m1 = v
                j1 = j
            elif v < m2:
                m2 = v
        e = err_coef * (nx[i] + ncmax)
        lim = np.float32(np.float64(m1) + 2.0 * e)
        eb, ebi = exact_candidates(GT.T, r, nc32, lim, X, i, C)
        labels[i] = ebi
        U[i] = upper_from_sq(eb, gam64, eta64)
        # true d_j^2 = ||x - mu||^2 + v_j >= nx (1 - gam64) + (ranking value - e); the
        # nearest other centre's ranking value is m2 when the label is the ranking's
        # best, else m1.  Twice e, and the rounding of the sum, for safety.
        L[i] = lower_from_ranked(nx[i], np.float64(m2 if ebi == j1 else m1), e, gam64) if K > 1 else np.inf


@jit
def certify_rows_packed(G, rows, nx, nc32, ncmax, X, C, err_coef, nbits, gam64, eta64, labels, U, L):
    # certify_rows (same result) for K <= PACKED_MAX_K, vectorised over the rows as
    # fastrbf._jit.cluster.certify.certify_packed: G (K, m) is the transpose of GT, nbits =
    # ceil(log2 K).  The running minimum and second minimum of the packed keys give the
    # label where the best centre is the only candidate, and the bound of L: every
    # centre other than the key's best has a value >= that of the truncated second key.
    K = G.shape[0]
    m = G.shape[1]
    low = np.int32((1 << nbits) - 1)
    high = np.int32(~low)
    best = np.empty(m, dtype=np.int32)
    second = np.empty(m, dtype=np.int32)
    packed_keys(G, nc32, nbits, best, second)
    for r in range(m):
        i = rows[r]
        bb = best[r]
        e = err_coef * (nx[i] + ncmax)
        lim = np.float32(np.float64(from_order_key(bb | low)) + 2.0 * e)
        if (second[r] & high) > order_key(lim):
            ebi = bb & low
            eb = sq_any_order(X, i, C, ebi)  # only the bound needs it
        else:
            eb, ebi = exact_candidates(G, r, nc32, lim, X, i, C)
        labels[i] = ebi
        U[i] = upper_from_sq(eb, gam64, eta64)
        if K == 1:
            L[i] = np.inf
            continue
        # the smallest ranking value of a centre other than the label: >= the
        # truncated second key's when the label is the key's best, else >= the
        # truncated best key's (as in certify_rows, less twice e)
        b = np.float64(from_order_key(second[r] & high) if ebi == (bb & low) else from_order_key(bb & high))
        L[i] = lower_from_ranked(nx[i], b, e, gam64)


@jit
def certify_rows_direct(X, Xt, Cr, C, rows, listed, lo, m, nx, ncmax, unit, gam, eta, gam64, eta64, bounds, labels, U,
                        L, tile, idx, ranked, lab, fw):
    # IN: X (n, d), C (K, d) the centres in X's dtype; Xt (d, n) the ranking copy of X
    #     (the transposed float32 X, or centre_f32's copy); the m rows to recompute:
    #     rows[:m] (listed), or lo:lo+m; Cr (K, d) float32 the ranking centres of
    #     fastrbf._jit.cluster.certify.certify_direct: the centres themselves for float32 X
    #     (unit = 0), else centred and rounded (unit > 0, with nx, ncmax and the error
    #     bounds as there)
    # OUT: for each row i: labels[i] those of certify_direct (the argmin of the
    #      exact_sq distances, ties to the lowest index); if bounds, U[i] from the
    #      smallest ranked distance plus the ranking's error and L[i] from the second
    #      smallest (every other centre's is at least that) less it; a row near a tie,
    #      recomputed, takes both from its exact_sq distances
    # scratch (NB = argmin_cols(Cr) columns): tile (d, NB) and ranked (2, NB) in Cr's
    #     dtype, idx (NB,) int64, lab (NB,) int32, fw (3, NB) float64
    # (called by address from the compiled loop, fastrbf._jit.cluster.bounded_fit: allocates
    # nothing and cannot raise)
    # The bounds from the ranked distances need no read of X (see docs/performance.md,
    # 'k-means').  The upper bound is looser by the ranking's error, about 1e-6 of the
    # distance: the same rows were recomputed in every iteration of a run to convergence.
    # Listed rows: their columns of Xt are gathered, NB rows at a time, into a tile that
    # the micro-kernel ranks, one row of the tile at a time from the tile's column
    # indices.
    NB = argmin_cols(Cr)
    d = X.shape[1]
    best = ranked[0]
    second = ranked[1]
    nxs = fw[0]
    ub = fw[1]
    lw = fw[2]
    tiny = 2.0 * np.sqrt(np.float64(d)) * 2.0**-149 if unit > 0.0 else 0.0  # no rounding of the ranked values
    cmax = np.sqrt(ncmax)
    for j in range(0, m, NB):
        cols = min(NB, m - j)
        src, off = tile, 0
        if not listed and cols == NB:
            src, off = Xt, lo + j
        elif not listed:  # the last columns, padded with copies of the last one
            for k in range(d):
                for c in range(NB):
                    tile[k, c] = Xt[k, lo + j + min(c, cols - 1)]
        else:
            for c in range(NB):  # the last columns: copies of the last row
                idx[c] = rows[j + min(c, cols - 1)]
            for k in range(d):
                xk = Xt[k]
                tk = tile[k]
                for c in range(NB):
                    tk[c] = xk[idx[c]]
        sq_argmin_block(Cr, src, off, best, second, lab)  # one call site: one copy of the kernel
        # the bounds of every column first, in loops without branches (the second one
        # vectorised), then the labels
        if bounds:
            for c in range(cols):
                nxs[c] = nx[rows[j + c] if listed else lo + j + c] if unit > 0.0 else 0.0
            for c in range(cols):
                # r_b <= r~_b + delta <= sqrt((D_b + eta) / (1 - gam)) + delta and
                # r_j >= r~_j - delta >= sqrt((D_j - eta) / (1 + gam)) - delta, D_j >= second
                delta = (unit * (np.sqrt(nxs[c]) + cmax) + tiny) * UP
                ub[c] = (upper_from_sq(np.float64(best[c]), gam, eta) + delta) * UP
                lw[c] = max((lower_from_sq(np.float64(second[c]), gam, eta) - delta) * DOWN, 0.0)
        else:
            for c in range(cols):
                nxs[c] = nx[rows[j + c] if listed else lo + j + c] if unit > 0.0 else 0.0
        for c in range(cols):
            i = rows[j + c] if listed else lo + j + c
            if cleared(best[c], second[c], nxs[c], ncmax, unit, d, gam, eta, gam64, eta64):
                labels[i] = lab[c]
                if bounds:
                    U[i] = ub[c]
                    L[i] = lw[c]
                continue
            eb, e2, ebi = exact_two(X, i, C)
            labels[i] = ebi
            if bounds:
                U[i] = upper_from_sq(eb, gam64, eta64)
                L[i] = lower_from_sq(e2, gam64, eta64)


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
