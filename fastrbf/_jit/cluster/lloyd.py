"""Lloyd (k-means) kernels: assignment and update.

Assignment has three paths (chosen by the public wrapper): the direct one, the GEMM one
(two certifications) and the certified direct one of float32 data:

- ``assign_rows``: exact squared distances to every centre by direct differences
  (the distance kernel's arithmetic and bits, by the register-blocked micro-kernels,
  centres as rows and a block of points as columns), argmin with ties to the lowest
  index.
- ``certify_cols``: after a float32 GEMM has given ``G = x . c`` for a chunk of
  (centred) rows, ``v_j = ||c_j||^2 - 2 G_j`` ranks the centres; every centre within
  the rigorous error bound of the best is recomputed exactly by direct differences,
  and the exact argmin among them (lowest index on ties) is the label.  So the label
  is always the exact one, and the GEMM only decides the clear cases.
- ``certify_packed`` (K <= 4096, the one used): the same certification in one pass
  over the GEMM block: the centre index replaces the low bits of an int32 order key
  of ``v_j``, and a running minimum and second minimum of the keys (int32 min/max,
  8 lanes on AVX2) tell whether the best centre is the only candidate; the other
  rows go through the candidate scan of ``certify_cols``.  Same labels and distances.
  The int32 arithmetic is written with explicit casts: numba widens int32
  expressions to int64, which halved the vector width of these loops.
- ``certify_direct`` (float32 data, ``DIRECT_MAX_KD < K d`` and ``d <= F32_DIRECT_MAX_D``
  in :mod:`fastrbf.cluster`): the labels and distances of ``certify_cols`` from the
  direct float32 distances of the micro-kernels (``sq_argmin_block``: per block of
  ``NB`` rows the smallest and second smallest distance and the argmin, held in
  registers; no distance matrix is stored).  Their error is relative (a sum of
  non-negative terms: ``D = r^2 (1 + e) + f``, ``|e| <= (d + 3) eps32``, ``f`` below
  the subnormals), far tighter than the GEMM ranking's ``(d + 8) eps32 (|x|^2 +
  max |c|^2)``, so no GEMM, no centred copy, no pass over a ``K x n`` block.  A row
  whose second smallest distance is within the bound of the smallest is recomputed
  against every centre by ``_exact_sq`` (rows of near ties only).  float64 data (the
  same sizes) are ranked the same way on the centred float32 copies of the GEMM path
  (``centre_f32``; the centres centred in float64, then rounded): each entry is within
  ``unit |x_k - mu_k|`` (``unit`` = 1.01 (2^-24 + 2^-53)) of the float64 value, so a
  ranked distance is within ``delta = unit (||x - mu|| + max ||c - mu||)`` of the true
  one, and the bound widens by ``delta`` on either side (``cleared``: a limit without
  square roots first, the exact one with three only for rows within 1.6 % of a tie).

The reported distance to the chosen centre is always the direct-difference value.

Why ``certify_direct`` for float32: on the GEMM path both dtypes ran the same assignment
(the float32 GEMM of the centred copy and its certification), and a GEMM with an inner
dimension of 16 or 32 runs well below its peak while its ``K x n`` output is written and
read back by the certification.  The direct distances of the micro-kernel are faster than
that path up to d = 48 (hence ``F32_DIRECT_MAX_D = 48``: beyond it the block of points no
longer stays in L1 beside the centres).  The update stays a separate ``update_partials``
pass: fused into ``certify_direct`` block by block it was slower (see docs/performance.md,
'k-means').
"""

import numpy as np
from numba import types
from numba.extending import overload

from .._decorators import FASTMATH, jit, jit_inline
from ..llvm.exp import _bits_to_f32, _f32_to_bits
from ..llvm.micro import argmin_cols, axpy_row, block_rows, sq_argmin_block
from ..tiles import fill_block


@jit
def assigned_sqdist(X, C, labels, lo, hi, mind):
    # OUT: mind[lo:hi] = exact squared distance of each row to its labelled centre
    for i in range(lo, hi):
        mind[i] = _exact_sq(X, i, C, labels[i])


#: each entry of the centred float32 copies (centre_f32) is within this times
#: ``|x_k - mu_k|`` of the float64 value (a float64 then a float32 rounding, and a margin)
CENTRED_UNIT = (2.0**-24 + 2.0**-53) * 1.01

RB = 240  # rows per task of assign_rows (a whole number of micro-kernel blocks)


@jit_inline
def _running_min(dist, j, best, lab):
    for r in range(dist.shape[0]):
        dr = dist[r]
        closer = dr < best[r]
        best[r] = dr if closer else best[r]
        lab[r] = j if closer else lab[r]


@jit
def assign_rows(Xt, C, lo, hi, labels, mind):
    # IN: Xt (d, n) the rows of X as columns, C (K, d), rows lo:hi to do
    # OUT: labels[lo:hi], mind[lo:hi]
    # Exact direct assignment vectorised over rows (for few centres, where a row of K
    # distances is too short to vectorise well): for each group of MR centres (a block's rows), the
    # distances of a block of RB rows by the micro-kernels, then a running minimum over
    # the centres in index order; ties keep the lower index.  Serial: the caller runs
    # row ranges on its worker threads.
    K = C.shape[0]
    mr = block_rows(C)
    dist = np.empty((mr, RB), dtype=Xt.dtype)
    best = np.empty(RB, dtype=Xt.dtype)
    lab = np.empty(RB, dtype=np.int64)
    zero = np.int64(0)
    for r0 in range(lo, hi, RB):
        r1 = min(hi, r0 + RB)
        L = r1 - r0
        bl = best[:L]
        lb = lab[:L]
        lb[:] = 0
        bl[:] = np.inf
        # the distance kernel with the roles swapped: centres as rows, X as columns
        # ((c - x)^2 == (x - c)^2 exactly, so the values are those of sqdist)
        for j in range(0, K, mr):
            je = min(K, j + mr)
            fill_block(C, j, je, Xt, r0, r1, np.bool_(False), dist, zero, zero)
            for q in range(je - j):
                _running_min(dist[q, :L], j + q, bl, lb)
        for r in range(L):
            labels[r0 + r] = lb[r]
            mind[r0 + r] = bl[r]


@jit_inline
def cleared(Db, Ds, nxi, ncmax, unit, d, gam, eta, gam64, eta64):
    # whether ranked squared distances Db (the smallest) and Ds (the second smallest) of
    # the micro-kernels prove the ranking's argmin the argmin of the _exact_sq distances
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
    # take the square roots
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
def certify_direct(Xt, Cr, C, X, lo, hi, gam, eta, gam64, eta64, nx, ncmax, unit, want_dist, labels, mind):
    # IN: Xt (d, n) and Cr (K, d): the rows of X as columns and the centres, ranked by
    #     the micro-kernels: float32 data and centres themselves (unit = 0), or the
    #     centred float32 copies of float64 ones (centre_f32, ranking_centres; unit > 0);
    #     C (K, d) the centres and X (n, d) the rows in their own dtype; the rows lo:hi
    #     to do; gam/eta: D = r^2 (1 + e) + f with |e| <= gam, |f| <= eta for a distance
    #     D of the micro-kernels (true distance r of the ranked values), gam64/eta64 the
    #     same for _exact_sq; nx (n,) ||x - mu||^2 and ncmax max ||c - mu||^2 of the
    #     centred copies, whose entries are within unit |x_k - mu_k| of x_k - mu_k;
    #     want_dist as in certify_cols
    # OUT: labels[lo:hi], mind[lo:hi]
    # The labels and distances of certify_cols (the argmin of the float64 _exact_sq
    # distances, ties to the lowest index), from the direct distances in X's dtype: per
    # block of NB rows the smallest and second smallest distance and the argmin, held in
    # registers by sq_argmin_block.  A centre j with D_j > lim(D_best) has
    # _exact_sq_j > _exact_sq_best (the limit of cleared); when the second smallest D is above
    # lim the argmin is the label, otherwise every centre is recomputed by _exact_sq.
    NB = argmin_cols(Xt)
    d = Xt.shape[0]
    best = np.empty(NB, dtype=Xt.dtype)
    second = np.empty(NB, dtype=Xt.dtype)
    lab = np.empty(NB, dtype=np.int32)
    tail = np.empty((d, NB), dtype=Xt.dtype)
    for j in range(lo, hi, NB):
        cols = min(NB, hi - j)
        src, off = Xt, j
        if cols < NB:  # the last columns, padded with copies of the last one
            for k in range(d):
                for c in range(NB):
                    tail[k, c] = Xt[k, j + min(c, cols - 1)]
            src, off = tail, 0
        sq_argmin_block(Cr, src, off, best, second, lab)  # one call site: one copy of the kernel
        for c in range(cols):
            i = j + c
            if cleared(best[c], second[c], nx[i] if unit > 0.0 else 0.0, ncmax, unit, d, gam, eta, gam64, eta64):
                lb = lab[c]
                labels[i] = lb
                if want_dist:
                    mind[i] = _exact_sq(X, i, C, lb)
            else:
                eb, _, ebi = exact_two(X, i, C)
                labels[i] = ebi
                mind[i] = eb


@jit_inline
def exact_two(X, i, C):
    # (the smallest and second smallest _exact_sq distance of row i to the centres, the
    # argmin with ties to the lowest index): the recomputation of a row near a tie
    eb = np.inf
    e2 = np.inf
    ebi = 0
    for q in range(C.shape[0]):
        dq = _exact_sq(X, i, C, q)
        if dq < eb:
            e2 = eb
            eb = dq
            ebi = q
        elif dq < e2:
            e2 = dq
    return eb, e2, ebi


@jit
def _exact_sq(X, i, C, j):
    d = X.shape[1]
    acc = 0.0
    for k in range(d):
        t = np.float64(X[i, k]) - np.float64(C[j, k])
        acc += t * t
    return acc


TB = 256  # rows per block of transpose_rows (a block of X and its columns stay in cache)


@jit
def transpose_rows(X, lo, hi, Xt):
    # IN: X (n, d), the rows lo:hi to do; OUT: Xt[:, lo:hi] = X[lo:hi].T.  The copies of
    # the direct paths, on fastrbf's threads: NumPy's transposing copy of 1e6 x 32
    # float32 rows took 210 ms on one thread
    d = X.shape[1]
    for i0 in range(lo, hi, TB):
        i1 = min(hi, i0 + TB)
        for k in range(d):
            for i in range(i0, i1):
                Xt[k, i] = X[i, k]


@jit
def centre_f32(X, mu, lo, hi, Xct32, nx):
    # IN: X (n, d), mu (d,) float64, the rows lo:hi to do
    # OUT: Xct32[:, lo:hi] = float32(X - mu).T, nx[lo:hi] = ||X - mu||^2 in float64
    d = X.shape[1]
    for i in range(lo, hi):
        acc = 0.0
        for k in range(d):
            t = np.float64(X[i, k]) - mu[k]
            Xct32[k, i] = np.float32(t)
            acc += t * t
        nx[i] = acc


@jit
def _key(x):
    # float32 -> int32 with the same order (finite values)
    b = _f32_to_bits(x)
    return b ^ ((b >> 31) & np.int32(0x7FFFFFFF))


@jit
def _unkey(k):
    return _bits_to_f32(k ^ ((k >> 31) & np.int32(0x7FFFFFFF)))


@jit
def _key32(x):
    # _key with every step in int32 (numba widens int32 expressions to int64, which
    # would halve the vector width of the loops that use it)
    b = _f32_to_bits(x)
    m = np.int32(np.int32(b >> np.int32(31)) & np.int32(0x7FFFFFFF))
    return np.int32(b ^ m)


@jit
def certify_cols(GT, row0, nx, nc32, ncmax, X, C, err_coef, want_dist, labels, mind):
    # IN: GT (K, b) float32 dot products of the centred centres with the centred rows
    #     row0:row0+b (one column per row, so that the work vectorises over rows),
    #     nx (n,) float64 and nc32 (K,) float32 squared norms of the centred data,
    #     ncmax = max ||c||^2, X (n, d) C (K, d) the original data,
    #     err_coef = (d + 8) eps32, want_dist: also compute mind (else mind is only
    #     written for rows that needed exact distances)
    # OUT: labels[row0:row0+b], mind[row0:row0+b]
    # The ranking value of centre j for a row is v_j = ||c_j||^2 - 2 x.c_j (float32).
    # |computed v_j - exact v_j| <= e = err_coef (||x||^2 + max ||c||^2): the rounding of
    # the centred data to float32 and the float32 accumulation of d products
    # ((d + 2) eps32), the two float32 operations of v (3 eps32), the rounding of the
    # limit below to float32 (1 eps32), and a margin.  Every centre with
    # v_j <= min(v) + 2 e may be the nearest; when there is only one it is, otherwise
    # the exact distances decide (ties: lowest index).
    K = GT.shape[0]
    b = GT.shape[1]
    two = np.float32(2.0)
    # running minimum over centres, elementwise over rows, on order-preserving int32
    # keys of the (finite) floats: an integer min that LLVM vectorises
    best = np.empty(b, dtype=np.int32)
    g = GT[0]
    c0 = nc32[0]
    for r in range(b):
        best[r] = _key32(c0 - two * g[r])
    for j in range(1, K):
        g = GT[j]
        cj = nc32[j]
        for r in range(b):
            kk = _key32(cj - two * g[r])
            bb = best[r]
            best[r] = kk if kk < bb else bb
    lim = np.empty(b, dtype=np.float32)
    for r in range(b):
        lim[r] = np.float32(np.float64(_unkey(best[r])) + 2.0 * err_coef * (nx[row0 + r] + ncmax))
    cnt = np.zeros(b, dtype=np.int32)
    isum = np.zeros(b, dtype=np.int32)
    for j in range(K):
        g = GT[j]
        cj = nc32[j]
        jj = np.int32(j)
        for r in range(b):
            c = np.int32((cj - two * g[r]) <= lim[r])
            cnt[r] = np.int32(cnt[r] + c)
            isum[r] = np.int32(isum[r] + jj * c)
    for r in range(b):
        i = row0 + r
        if cnt[r] == 1:
            labels[i] = isum[r]  # the index of the only candidate
            if want_dist:
                mind[i] = _exact_sq(X, i, C, isum[r])
        else:
            eb = np.inf
            ebi = 0
            for j in range(K):
                if nc32[j] - two * GT[j, r] <= lim[r]:
                    dj = _exact_sq(X, i, C, j)
                    if dj < eb:
                        eb = dj
                        ebi = j
            labels[i] = ebi
            mind[i] = eb


#: largest K for certify_packed: the centre index takes ceil(log2 K) low bits of the
#: 32-bit order key, so the ranking keeps 23 - 12 = 11 mantissa bits at worst
PACKED_MAX_K = 4096


@jit
def certify_packed(GT, row0, nx, nc32, ncmax, X, C, err_coef, nbits, want_dist, labels, mind):
    # certify_cols in one pass over GT (same arguments, plus nbits = ceil(log2 K),
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
    # as in certify_cols.
    K = GT.shape[0]
    b = GT.shape[1]
    two = np.float32(2.0)
    low = np.int32((1 << nbits) - 1)
    high = np.int32(~low)
    best = np.empty(b, dtype=np.int32)
    second = np.empty(b, dtype=np.int32)
    g = GT[0]
    c0 = nc32[0]
    for r in range(b):
        best[r] = np.int32(_key32(c0 - two * g[r]) & high)
        second[r] = np.int32(0x7FFFFFFF)
    for j in range(1, K):
        g = GT[j]
        cj = nc32[j]
        jj = np.int32(j)
        for r in range(b):
            # int32 throughout (numba would widen mixed int32 expressions to int64,
            # halving the vector width)
            kk = np.int32(np.int32(_key32(cj - two * g[r]) & high) | jj)
            bb = best[r]
            sr = second[r]
            hi2 = kk if kk > bb else bb
            second[r] = hi2 if hi2 < sr else sr
            best[r] = kk if kk < bb else bb
    for r in range(b):
        i = row0 + r
        bb = best[r]
        u = _unkey(bb | low)
        lim = np.float32(np.float64(u) + 2.0 * err_coef * (nx[i] + ncmax))
        if (second[r] & high) > _key(lim):
            lab = bb & low
            labels[i] = lab
            if want_dist:
                mind[i] = _exact_sq(X, i, C, lab)
        else:
            eb = np.inf
            ebi = 0
            for j in range(K):
                if nc32[j] - two * GT[j, r] <= lim:
                    dj = _exact_sq(X, i, C, j)
                    if dj < eb:
                        eb = dj
                        ebi = j
            labels[i] = ebi
            mind[i] = eb


UPDATE_CHUNK = 8192  # rows per partial-sum slot (fixed: results do not depend on threads)


@jit
def update_partials(X, labels, w, chunk, c_lo, c_hi, sums, wsum):
    # IN: X (n, d), labels (n,), w (n,) float64 weights, chunk rows per slot, the slots
    #     c_lo:c_hi to fill (serial: the caller runs slot ranges on its worker threads)
    # OUT: sums (nchunks, K, d) float64, wsum (nchunks, K) float64 partial slots
    n = X.shape[0]
    d = X.shape[1]
    for c in range(c_lo, c_hi):
        s = sums[c]
        ws = wsum[c]
        s[:] = 0.0
        ws[:] = 0.0
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            lab = labels[i]
            wi = w[i]
            ws[lab] += wi
            _add_row(s, lab, X, i, wi, d)


def _add_row(s, lab, X, i, wi, d):
    """``s[lab, :d] += wi * X[i, :d]`` (compiled through the overload below)."""
    for k in range(d):
        s[lab, k] += wi * X[i, k]


@overload(_add_row, jit_options=dict(fastmath=set(FASTMATH), error_model="numpy", nogil=True), inline="always")
def _add_row_impl(s, lab, X, i, wi, d):
    # C-contiguous rows: by whole vectors (axpy_row, the same bits; numba's own loop ran a
    # row of 16 float64 as its scalar tail); any other layout: the loop
    if isinstance(X, types.Array) and X.layout == "C" and s.layout == "C":
        def vec(s, lab, X, i, wi, d):
            axpy_row(s, lab * s.shape[1], X, i * X.shape[1], wi, d)
        return vec
    return _add_row


@jit
def reduce_partials(sums, wsum, out_sums, out_w):
    # IN: sums (nchunks, K, d), wsum (nchunks, K); OUT: out_sums (K, d), out_w (K,)
    # summed over chunks in chunk order.
    nch = sums.shape[0]
    K = sums.shape[1]
    d = sums.shape[2]
    for j in range(K):
        acc_w = 0.0
        for k in range(d):
            out_sums[j, k] = 0.0
        for c in range(nch):
            acc_w += wsum[c, j]
            for k in range(d):
                out_sums[j, k] += sums[c, j, k]
        out_w[j] = acc_w


@jit
def _assign_serial(X, C, labels, mind):
    # the same arithmetic per entry as the direct kernel (one FMA chain over features)
    n = X.shape[0]
    K = C.shape[0]
    d = X.shape[1]
    for i in range(n):
        best = np.inf
        bi = 0
        for j in range(K):
            acc = X[i, 0] - X[i, 0]
            for k in range(d):
                t = X[i, k] - C[j, k]
                acc += t * t
            if acc < best:
                best = acc
                bi = j
        labels[i] = bi
        mind[i] = best


@jit_inline
def centre_step(sums, wsum, C):
    # Lloyd's update: C[j] = sums[j] / wsum[j] rounded to C's dtype (in place); returns
    # (the summed squared float64 shift, summed in index order, whether any centre
    # moved): the compiled twin of fastrbf.cluster._rules.lloyd_centers
    K = C.shape[0]
    d = C.shape[1]
    shift = 0.0
    moved = False
    for j in range(K):
        for k in range(d):
            c_new = C.dtype.type(sums[j, k] / wsum[j])
            t = np.float64(c_new) - np.float64(C[j, k])
            shift += t * t
            moved = moved or c_new != C[j, k]
            C[j, k] = c_new
    return shift, moved


@jit
def lloyd_small(X, C, w, max_iter, tol_abs, raise_empty, labels, mind, wsum):
    # The whole Lloyd loop of fastrbf.cluster._kmeans._lloyd in one serial call, for problems
    # with n <= UPDATE_CHUNK rows and a direct assignment (so the arithmetic, and the
    # result, are bitwise those of the general path).  C (K, d) is updated in place.
    # Twin of the Python rules fastrbf.cluster._rules.lloyd_centers and lloyd_stop: keep
    # the same formulas.
    # Returns (n_iter, converged, empty_iteration): empty_iteration > 0 means a cluster
    # became empty at that iteration and raise_empty asked to stop there (wsum then
    # holds the cluster weights of that iteration).
    n = X.shape[0]
    K = C.shape[0]
    d = X.shape[1]
    labels_old = np.full(n, -1, dtype=np.int64)
    sums = np.empty((K, d), dtype=np.float64)
    strict = False
    converged = False
    moved = True
    n_iter = 0
    for it in range(max_iter):
        _assign_serial(X, C, labels, mind)
        sums[:] = 0.0
        wsum[:] = 0.0
        for i in range(n):
            lab = labels[i]
            wi = w[i]
            wsum[lab] += wi
            for k in range(d):
                sums[lab, k] += wi * X[i, k]
        n_empty = 0
        for j in range(K):
            n_empty += wsum[j] == 0
        if n_empty > 0:
            if raise_empty:
                return it + 1, False, it + 1
            relocate_empty(X, w, labels, mind, sums, wsum)
        shift, moved = centre_step(sums, wsum, C)
        n_iter = it + 1
        same = True
        for i in range(n):
            if labels[i] != labels_old[i]:
                same = False
                break
        if same:
            strict = True
            converged = True
            break
        if shift <= tol_abs:
            converged = True
            break
        for i in range(n):  # a loop: a slice assignment compiles numba's shape-error message (2 s)
            labels_old[i] = labels[i]
    if not strict or moved:
        # the final labels and distances are those of the final centres (the centres
        # can move while the labels stay: the sums of a relocation are rounded)
        _assign_serial(X, C, labels, mind)
    return n_iter, converged, 0


@jit
def relocate_empty(X, w, labels, mind, sums, wsum):
    # (twin of fastrbf.cluster._rules.relocate_candidates, which applies this rule to the
    # candidates gathered from dask blocks: keep the same rule)
    # IN: X (n, d), w (n,), mind (n,) distance of each point to its centre
    # IN/OUT: labels (n,), sums (K, d), wsum (K,) float64 cluster sums and weights.
    # Each empty cluster (in index order) takes, in order of decreasing distance to its
    # centre (ties: lowest index), a point with weight > 0 that is not the only point of
    # its cluster; the sums move with the point's weight.
    K = wsum.shape[0]
    n = X.shape[0]
    d = X.shape[1]
    counts = np.zeros(K, dtype=np.int64)
    for i in range(n):
        counts[labels[i]] += 1
    # the points are visited in the order of a stable argsort of -mind, found by scans
    # (a sort would compile numba's mergesort, a second on the first call); between two
    # takes nothing changes, so the next eligible point after the last one taken is the
    # one the sorted walk would reach
    e = 0
    last_d = np.inf
    last_i = -1
    while True:
        while e < K and wsum[e] != 0:
            e += 1
        if e == K:
            break
        idx = -1
        best = -np.inf
        for i in range(n):
            di = mind[i]
            after = di < last_d or (di == last_d and i > last_i)
            if after and di > best and counts[labels[i]] > 1 and w[i] != 0:
                best = di
                idx = i
        if idx < 0:
            break
        last_d = best
        last_i = idx
        old = labels[idx]
        for k in range(d):
            sums[old, k] -= w[idx] * X[idx, k]
            sums[e, k] = w[idx] * X[idx, k]
        wsum[old] -= w[idx]
        wsum[e] = w[idx]
        counts[old] -= 1
        counts[e] = 1
        labels[idx] = e
