"""The certified ranking of the k-means assignment: the labels of the exact float64
distances (:func:`direct_sq`, ties to the lowest index) from a float32 ranking that
decides the clear cases.  Three kernels, one per ranking: the direct distances of the
micro-kernels (:func:`certify_direct`) and a GEMM block, packed keys for K <=
``PACKED_MAX_K`` (:func:`certify_packed`) or plain ones (:func:`certify_cols`).  Each
serves the plain assignment (labels, and distances on request) and the bounded one
(``mode=BOUNDS``: also Hamerly's bounds ``U`` and ``L``, from the ranking where it
decides), so the certification is written once per ranking; the bounds' code is pruned
from the plain assignment's specialisations (``L=None``).  The method is described in
:mod:`fastrbf._jit.cluster.lloyd`, its measurements in docs/performance.md; the bound
helpers (``UP``, ``DOWN``, ``upper_from_sq``, ...) live here beside their users and
:mod:`fastrbf._jit.cluster.bounds` imports them.
"""

import numpy as np

from .._decorators import jit, jit_inline
from ..llvm.exp import bits_to_f32, f32_to_bits
from ..llvm.micro import argmin_cols, sq_argmin_block
from ..tiles import direct_sq

EPS64 = float(np.finfo(np.float64).eps)
UP = 1.0 + 4.0 * EPS64  # covers one rounding (and a margin) of a float64 upper bound
DOWN = 1.0 - 4.0 * EPS64

#: what a certifying kernel writes besides the labels (its ``mode``): nothing; the
#: bounds ``U`` (upper, on the distance to the label) and ``L`` (lower, on the distance to
#: every other centre) of the bounded assignment; the direct_sq distance of every row to
#: its label in ``U``; that distance only where the row was recomputed.  The modes
#: without bounds take ``L=None``: numba then prunes the bounds' code from the
#: specialisation at compile time (its branches test ``L is not None``), so the plain
#: assignment compiles no more than it runs.
LABELS, BOUNDS, DIST, DIST_RECOMPUTED = 0, 1, 2, 3


@jit_inline
def upper_from_sq(D, gam, eta):
    # an upper bound on the true distance whose computed square is D
    return np.sqrt((D + eta) / (1.0 - gam)) * UP


@jit_inline
def lower_from_sq(D, gam, eta):
    # a lower bound on the true distance whose computed square is D
    return np.sqrt(max(D - eta, 0.0) / (1.0 + gam)) * DOWN


@jit_inline
def lower_from_ranked(nxi, b, e, gam64):
    # a lower bound on the true distance of a row (||x - mu||^2 = nxi) to every centre
    # whose GEMM ranking value is >= b: d_j^2 = ||x - mu||^2 + v_j >= nxi (1 - gam64) +
    # (b - e); twice e, and the rounding of the sum, for safety
    a = nxi * (1.0 - gam64)
    c = 2.0 * e
    s = (a + b - c) - 4.0 * EPS64 * (abs(a) + abs(b) + abs(c))
    return np.sqrt(max(s, 0.0)) * DOWN




@jit_inline
def cleared(Db, Ds, nxi, ncmax, unit, d, gam, eta, gam64, eta64):
    # whether ranked squared distances Db (the smallest) and Ds (the second smallest) of
    # the micro-kernels prove the ranking's argmin the argmin of the direct_sq distances
    # (certify_direct's test; gam/eta, gam64/eta64, unit and the norms as there)
    # r_b^2 <= (D_b + eta) / (1 - gam), E_b <= r_b^2 (1 + gam64) + eta64, and
    # E_j >= r_j^2 (1 - gam64) - eta64 > E_b once r_j^2 > R = ((D_b + eta) (1 + gam64) /
    # (1 - gam) + 2 eta64) / (1 - gam64), which r_j^2 >= (D_j - eta) / (1 + gam) proves
    # for D_j > R (1 + gam) + eta; the float64 rounding of the limit (a few eps64, all
    # terms positive) is covered by the factor 1 + 1e-12
    Db = np.float64(Db)
    Ds = np.float64(Ds)
    if unit == 0.0:
        a = (1.0 + gam64) / (1.0 - gam) / (1.0 - gam64) * (1.0 + gam) * (1.0 + 1e-12)
        b = 2.0 * eta64 / (1.0 - gam64) * (1.0 + gam) * (1.0 + 1e-12) + eta * (1.0 + 1e-12)
        return Ds > (Db + eta) * a + b
    # centred copies: the ranked difference of a row and a centre is within
    # delta = unit (||x - mu|| + ||c - mu||) (+ float32 underflow) of the true one, so
    # r <= r~ + delta and r >= r~ - delta for the true distances r and ranked ones r~:
    # r_b <= sqrt((D_b + eta) / (1 - gam)) + delta, E_j > E_b once r_j^2 > R2 =
    # (r_b^2 (1 + gam64) + 2 eta64) / (1 - gam64), which D_j > (sqrt(R2) + delta)^2
    # (1 + gam) + eta proves; the float64 rounding of the limit is covered by 1 + 1e-12
    tiny = 2.0 * np.sqrt(np.float64(d)) * 2.0**-149
    # first the same limit without square roots, an upper bound of it (a row it clears
    # is cleared): (u + v)^2 <= (1 + RHO) u^2 + (1 + 1/RHO) v^2 for both squares of
    # sums, and delta^2 <= 3 (unit^2 (||x - mu||^2 + max ||c - mu||^2) + tiny^2).  It is
    # looser by a factor of about 1 + 2 RHO, so only the rows within 1.6 % of a tie
    # take the square roots (three a row cost 0.2 ms of 1.6 ms per 50000 x 16, K = 64)
    RHO = 1.0 / 128.0
    d2 = (3.0 * unit * unit * (nxi + ncmax) + 3.0 * tiny * tiny) * (1.0 + 1.0 / RHO)
    r2 = ((Db + eta) * (1.0 + RHO) / (1.0 - gam) + d2) * (1.0 + gam64) / (1.0 - gam64) + 2.0 * eta64 / (1.0 - gam64)
    if Ds > (((1.0 + RHO) * r2 + d2) * (1.0 + gam) + eta) * (1.0 + 1e-12):
        return True
    delta = unit * (np.sqrt(nxi) + np.sqrt(ncmax)) + tiny
    rb = np.sqrt((Db + eta) / (1.0 - gam)) + delta
    r2 = (rb * rb * (1.0 + gam64) + 2.0 * eta64) / (1.0 - gam64)
    t = np.sqrt(r2) + delta
    return Ds > (t * t * (1.0 + gam) + eta) * (1.0 + 1e-12)


@jit
def certify_direct(X, Xt, Cr, C, rows, listed, lo, m, nx, ncmax, unit, gam, eta, gam64, eta64, mode, labels, U, L,
                   tile, idx, ranked, lab, fw):
    # IN: X (n, d), C (K, d) the centres in X's dtype; Xt (d, n) the ranking copy of X
    #     (the transposed float32 X, or centre_f32's copy); the m rows to certify:
    #     rows[:m] (listed), or lo:lo+m; Cr (K, d) float32 the ranking centres: the
    #     centres themselves for float32 X (unit = 0), or the centred float32 copies of
    #     float64 ones (centre_f32, ranking_centres; unit > 0); gam/eta: D = r^2 (1 + e) +
    #     f with |e| <= gam, |f| <= eta for a distance D of the micro-kernels (true
    #     distance r of the ranked values), gam64/eta64 the same for direct_sq; nx (n,)
    #     ||x - mu||^2 and ncmax max ||c - mu||^2 of the centred copies, whose entries are
    #     within unit |x_k - mu_k| of x_k - mu_k; mode: LABELS, BOUNDS, DIST or
    #     DIST_RECOMPUTED (L None unless BOUNDS; LABELS with an L: the compiled loop's
    #     brute-force iterations)
    # OUT: labels[i] for each row i (the argmin of the direct_sq distances, ties to the
    #      lowest index); with BOUNDS, U[i] from the smallest ranked distance plus the
    #      ranking's error and L[i] from the second smallest (every other centre's is at
    #      least that) less it, a row near a tie taking both from its direct_sq distances;
    #      with DIST, U[i] the direct_sq distance to the label (DIST_RECOMPUTED: only for
    #      the rows recomputed near a tie)
    # scratch (NB = argmin_cols(Cr) columns): tile (d, NB) and ranked (2, NB) in Cr's
    #     dtype, idx (NB,) int64, lab (NB,) int32, fw (3, NB) float64
    # (also called by address from the compiled loop, fastrbf._jit.cluster.bounded_fit:
    # allocates nothing and cannot raise)
    # Per block of NB rows the micro-kernel gives the smallest and second smallest ranked
    # distance and the argmin, held in registers by sq_argmin_block.  A centre j with
    # D_j > lim(D_best) has direct_sq_j > direct_sq_best (the limit of cleared); when the
    # second smallest D is above lim the argmin is the label, otherwise every centre is
    # recomputed by direct_sq.  The bounds from the ranked distances need no read of X;
    # they are looser by the ranking's error, about 1e-6 of the distance.  Listed rows:
    # their columns of Xt are gathered, NB rows at a time, into a tile that the
    # micro-kernel ranks.
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
        for c in range(cols):
            nxs[c] = nx[rows[j + c] if listed else lo + j + c] if unit > 0.0 else 0.0
        if L is not None:
            if mode == BOUNDS:
                for c in range(cols):
                    # r_b <= r~_b + delta <= sqrt((D_b + eta) / (1 - gam)) + delta and
                    # r_j >= r~_j - delta >= sqrt((D_j - eta) / (1 + gam)) - delta, D_j >= second
                    delta = (unit * (np.sqrt(nxs[c]) + cmax) + tiny) * UP
                    ub[c] = (upper_from_sq(np.float64(best[c]), gam, eta) + delta) * UP
                    lw[c] = max((lower_from_sq(np.float64(second[c]), gam, eta) - delta) * DOWN, 0.0)
        for c in range(cols):
            i = rows[j + c] if listed else lo + j + c
            if cleared(best[c], second[c], nxs[c], ncmax, unit, d, gam, eta, gam64, eta64):
                lb = lab[c]
                labels[i] = lb
                if L is not None:
                    if mode == BOUNDS:
                        U[i] = ub[c]
                        L[i] = lw[c]
                elif mode == DIST:
                    U[i] = direct_sq(X, i, C, lb)
                continue
            eb, e2, ebi = exact_two(X, i, C)
            labels[i] = ebi
            if L is not None:
                if mode == BOUNDS:
                    U[i] = upper_from_sq(eb, gam64, eta64)
                    L[i] = lower_from_sq(e2, gam64, eta64)
            elif mode != LABELS:
                U[i] = eb


@jit_inline
def exact_two(X, i, C):
    # (the smallest and second smallest direct_sq distance of row i to the centres, the
    # argmin with ties to the lowest index): the recomputation of a row near a tie
    eb = np.inf
    e2 = np.inf
    ebi = 0
    for q in range(C.shape[0]):
        dq = direct_sq(X, i, C, q)
        if dq < eb:
            e2 = eb
            eb = dq
            ebi = q
        elif dq < e2:
            e2 = dq
    return eb, e2, ebi


@jit
def order_key(x):
    # float32 -> int32 with the same order (finite values)
    b = f32_to_bits(x)
    return b ^ ((b >> 31) & np.int32(0x7FFFFFFF))


@jit
def from_order_key(k):
    return bits_to_f32(k ^ ((k >> 31) & np.int32(0x7FFFFFFF)))


@jit
def order_key32(x):
    # order_key with every step in int32 (numba widens int32 expressions to int64, which
    # would halve the vector width of the loops that use it)
    b = f32_to_bits(x)
    m = np.int32(np.int32(b >> np.int32(31)) & np.int32(0x7FFFFFFF))
    return np.int32(b ^ m)


@jit
def certify_cols(G, rows, listed, row0, nx, nc32, ncmax, X, C, err_coef, gam64, eta64, mode, labels, U, L):
    # IN: G (K, b) float32 dot products of the centred centres with the centred rows
    #     (one column per row, so that the work vectorises over rows): the rows rows[:b]
    #     (listed), or row0:row0+b; nx (n,) float64 and nc32 (K,) float32 squared norms
    #     of the centred data, ncmax = max ||c||^2, X (n, d) C (K, d) the original data,
    #     err_coef = (d + 8) eps32, gam64/eta64 as in certify_direct; mode as there (L
    #     None unless BOUNDS)
    # OUT: labels, and U, L as in certify_direct's modes; BOUNDS: U from the direct_sq
    #      distance to the label, L from the ranking value of the nearest other centre
    #      less twice its error bound
    # The ranking value of centre j for a row is v_j = ||c_j||^2 - 2 x.c_j (float32).
    # |computed v_j - exact v_j| <= e = err_coef (||x||^2 + max ||c||^2): the rounding of
    # the centred data to float32 and the float32 accumulation of d products
    # ((d + 2) eps32), the two float32 operations of v (3 eps32), the rounding of the
    # limit below to float32 (1 eps32), and a margin.  Every centre with
    # v_j <= min(v) + 2 e may be the nearest; when there is only one it is, otherwise
    # the exact distances decide (ties: lowest index).
    K = G.shape[0]
    b = G.shape[1]
    two = np.float32(2.0)
    # running minimum (and with bounds the second smallest) over centres, elementwise
    # over rows, on order-preserving int32 keys of the (finite) floats: integer min/max
    # that LLVM vectorises
    best = np.empty(b, dtype=np.int32)
    second = np.empty(b, dtype=np.int32)
    g = G[0]
    c0 = nc32[0]
    for r in range(b):
        best[r] = order_key32(c0 - two * g[r])
    if L is not None:
        for r in range(b):
            second[r] = np.int32(0x7FFFFFFF)
    for j in range(1, K):
        g = G[j]
        cj = nc32[j]
        for r in range(b):
            kk = order_key32(cj - two * g[r])
            bb = best[r]
            if L is not None:  # pruned without bounds: the loop is then the minimum alone
                sr = second[r]
                hi2 = kk if kk > bb else bb
                second[r] = hi2 if hi2 < sr else sr
            best[r] = kk if kk < bb else bb
    lim = np.empty(b, dtype=np.float32)
    for r in range(b):
        i = rows[r] if listed else row0 + r
        lim[r] = np.float32(np.float64(from_order_key(best[r])) + 2.0 * err_coef * (nx[i] + ncmax))
    cnt = np.zeros(b, dtype=np.int32)
    isum = np.zeros(b, dtype=np.int32)
    for j in range(K):
        g = G[j]
        cj = nc32[j]
        jj = np.int32(j)
        for r in range(b):
            c = np.int32((cj - two * g[r]) <= lim[r])
            cnt[r] = np.int32(cnt[r] + c)
            isum[r] = np.int32(isum[r] + jj * c)
    for r in range(b):
        i = rows[r] if listed else row0 + r
        eb = 0.0
        if cnt[r] == 1:
            lb = isum[r]  # the index of the only candidate
            labels[i] = lb
            if L is not None or mode == DIST:
                eb = direct_sq(X, i, C, lb)
        else:
            eb, lb = exact_candidates(G, r, nc32, lim[r], X, i, C)
            labels[i] = lb
        if L is not None:
            U[i] = upper_from_sq(eb, gam64, eta64)
            if K == 1:
                L[i] = np.inf
                continue
            # true d_j^2 = ||x - mu||^2 + v_j >= nx (1 - gam64) + (ranking value - e); the
            # nearest other centre's ranking value is the second smallest when the label
            # has the smallest, else the smallest
            m1 = from_order_key(best[r])
            v = nc32[lb] - two * G[lb, r]
            vb = np.float64(from_order_key(second[r]) if v == m1 else m1)
            L[i] = lower_from_ranked(nx[i], vb, err_coef * (nx[i] + ncmax), gam64)
        elif mode == DIST or (mode == DIST_RECOMPUTED and cnt[r] != 1):
            U[i] = eb


#: largest K for certify_packed: the centre index takes ceil(log2 K) low bits of the
#: 32-bit order key, so the ranking keeps 23 - 12 = 11 mantissa bits at worst
PACKED_MAX_K = 4096


@jit
def certify_packed(G, rows, listed, row0, nx, nc32, ncmax, X, C, err_coef, nbits, gam64, eta64, mode, labels, U, L):
    # certify_cols in one pass over G (same arguments, plus nbits = ceil(log2 K),
    # K <= PACKED_MAX_K; the result is the same).  The ranking value of centre j
    # for a row becomes an int32 order key whose low nbits bits are replaced by j:
    # keys of different centres differ, their order is that of the values truncated to
    # the remaining bits (ties: lower index), and a running minimum and second
    # minimum of the keys are integer min/max that LLVM vectorises.  With t the
    # truncated value of the minimum and u the largest value with that truncated key
    # (so t <= min(v) <= v_best <= u), the best centre is the only candidate when the
    # truncated second smallest key is above lim = u + 2 e: every other centre then has
    # v_j > lim >= v_best + 2 e.  Otherwise every centre with v_j <= lim is a candidate
    # (a superset of those within 2 e of the minimum) and the exact distances decide,
    # as in certify_cols.  BOUNDS: every centre other than the key's best has a value
    # >= that of the truncated second key, which gives L.
    K = G.shape[0]
    b = G.shape[1]
    low = np.int32((1 << nbits) - 1)
    high = np.int32(~low)
    best = np.empty(b, dtype=np.int32)
    second = np.empty(b, dtype=np.int32)
    packed_keys(G, nc32, nbits, best, second)
    for r in range(b):
        i = rows[r] if listed else row0 + r
        eb = 0.0
        bb = best[r]
        e = err_coef * (nx[i] + ncmax)
        lim = np.float32(np.float64(from_order_key(bb | low)) + 2.0 * e)
        if (second[r] & high) > order_key(lim):
            lb = bb & low
            labels[i] = lb
            if L is not None:
                eb = direct_sq(X, i, C, lb)
            elif mode == DIST:
                U[i] = direct_sq(X, i, C, lb)
        else:
            eb, lb = exact_candidates(G, r, nc32, lim, X, i, C)
            labels[i] = lb
            if L is None and mode != LABELS:
                U[i] = eb
        if L is None:
            continue
        U[i] = upper_from_sq(eb, gam64, eta64)
        if K == 1:
            L[i] = np.inf
            continue
        # the smallest ranking value of a centre other than the label: >= the
        # truncated second key's when the label is the key's best, else >= the
        # truncated best key's (as in certify_cols, less twice e)
        vb = np.float64(from_order_key(second[r] & high) if lb == (bb & low) else from_order_key(bb & high))
        L[i] = lower_from_ranked(nx[i], vb, e, gam64)


@jit
def packed_keys(G, nc32, nbits, best, second):
    # IN: G (K, b) float32 dot products (one column per row), nc32 (K,), nbits as in
    #     certify_packed; OUT: best, second (b,) int32 the running minimum and second
    #     minimum over the centres of the packed order keys of the ranking values
    #     nc32[j] - 2 G[j, r] (low nbits bits replaced by j; see certify_packed)
    K = G.shape[0]
    b = G.shape[1]
    two = np.float32(2.0)
    low = np.int32((1 << nbits) - 1)
    high = np.int32(~low)
    g = G[0]
    c0 = nc32[0]
    for r in range(b):
        best[r] = np.int32(order_key32(c0 - two * g[r]) & high)
        second[r] = np.int32(0x7FFFFFFF)
    for j in range(1, K):
        g = G[j]
        cj = nc32[j]
        jj = np.int32(j)
        for r in range(b):
            # int32 throughout (numba would widen mixed int32 expressions to int64,
            # halving the vector width)
            kk = np.int32(np.int32(order_key32(cj - two * g[r]) & high) | jj)
            bb = best[r]
            sr = second[r]
            hi2 = kk if kk > bb else bb
            second[r] = hi2 if hi2 < sr else sr
            best[r] = kk if kk < bb else bb


@jit
def exact_candidates(G, r, nc32, lim, X, i, C):
    # (the smallest direct_sq distance of row i of X over the centres whose ranking value
    # nc32[j] - 2 G[j, r] is <= lim (float32), its index with ties to the lowest): the
    # recomputation of a row that the GEMM ranking leaves to the exact distances
    eb = np.inf
    ebi = 0
    for j in range(G.shape[0]):
        if nc32[j] - np.float32(2.0) * G[j, r] <= lim:
            dj = direct_sq(X, i, C, j)
            if dj < eb:
                eb = dj
                ebi = j
    return eb, ebi
