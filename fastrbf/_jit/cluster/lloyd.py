"""Lloyd (k-means) kernels: assignment and update.

(The certifying kernels named below, and their helpers, are in
:mod:`fastrbf._jit.cluster.certify`.)

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
  against every centre by ``direct_sq`` (rows of near ties only).  float64 data (the
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

from .._decorators import jit, jit_inline, jit_overload
from ..llvm.micro import axpy_row, block_rows
from ..tiles import direct_sq, fill_block, sq4


@jit
def assigned_sqdist(X, C, labels, lo, hi, mind):
    # OUT: mind[lo:hi] = exact squared distance of each row to its labelled centre
    for i in range(lo, hi):
        mind[i] = direct_sq(X, i, C, labels[i])


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
def centre_f32(X, mu, lo, hi, Xc32, nx, columns):
    # IN: X (n, d), mu (d,) float64, the rows lo:hi to do, columns
    # OUT: Xc32 = float32(X - mu), its rows as columns (d, n) with columns, else as rows
    #      (n, d), for rows lo:hi; nx[lo:hi] = ||X - mu||^2 in float64
    d = X.shape[1]
    for i in range(lo, hi):
        acc = 0.0
        for k in range(d):
            t = np.float64(X[i, k]) - mu[k]
            if columns:
                Xc32[k, i] = np.float32(t)
            else:
                Xc32[i, k] = np.float32(t)
            acc += t * t
        nx[i] = acc


UPDATE_CHUNK = 8192  # rows per partial-sum slot (fixed: results do not depend on threads)


@jit
def update_partials(X, labels, w, chunk, c_lo, c_hi, sums, wsum):
    # IN: X (n, d) dense rows, or the CSR triple (data, indices, indptr); labels (n,),
    #     w (n,) float64 weights, chunk rows per slot, the slots c_lo:c_hi to fill
    #     (serial: the caller runs slot ranges on its worker threads)
    # OUT: sums (nchunks, K, d) float64, wsum (nchunks, K) float64 partial slots
    n = _n_rows(X)
    for c in range(c_lo, c_hi):
        s = sums[c]
        ws = wsum[c]
        s[:] = 0.0
        ws[:] = 0.0
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            lab = labels[i]
            wi = w[i]
            ws[lab] += wi
            _add_row(s, lab, X, i, wi)


def _n_rows(X):
    """The number of rows of dense ``X`` or of a CSR triple (compiled through the overload below)."""
    return X.shape[0]


@jit_overload(_n_rows, inline="always")
def _n_rows_impl(X):
    if isinstance(X, types.BaseTuple):  # (data, indices, indptr)
        return lambda X: X[2].shape[0] - 1
    return _n_rows


def _add_row(s, lab, X, i, wi):
    """``s[lab] += wi * X[i]`` (compiled through the overload below)."""
    for k in range(X.shape[1]):
        s[lab, k] += wi * X[i, k]


@jit_overload(_add_row, inline="always")
def _add_row_impl(s, lab, X, i, wi):
    # C-contiguous rows: by whole vectors (axpy_row, the same bits; numba's own loop ran a
    # row of 16 float64 as its scalar tail); a CSR row: its stored values; any other
    # layout: the loop
    if isinstance(X, types.BaseTuple):
        def csr(s, lab, X, i, wi):
            data, indices, indptr = X
            row = s[lab]
            for p in range(indptr[i], indptr[i + 1]):
                row[indices[p]] += wi * data[p]
        return csr
    if isinstance(X, types.Array) and X.layout == "C" and s.layout == "C":
        def vec(s, lab, X, i, wi):
            axpy_row(s, lab * s.shape[1], X, i * X.shape[1], wi, X.shape[1])
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
def _assign_chains(X, C, labels, mind):
    # _assign_serial for few centres: four centres at a time (tiles.sq4: four
    # independent chains with the arithmetic of the direct kernel)
    n = X.shape[0]
    K = C.shape[0]
    e = K - 1
    for i in range(n):
        best = np.inf
        bi = 0
        x = X[i]
        for j0 in range(0, K, 4):
            a0, a1, a2, a3 = sq4(x, C[j0], C[min(j0 + 1, e)], C[min(j0 + 2, e)], C[min(j0 + 3, e)])
            if a0 < best:
                best, bi = a0, j0
            if j0 + 1 < K and a1 < best:
                best, bi = a1, j0 + 1
            if j0 + 2 < K and a2 < best:
                best, bi = a2, j0 + 2
            if j0 + 3 < K and a3 < best:
                best, bi = a3, j0 + 3
        labels[i] = bi
        mind[i] = best


@jit
def _assign_serial(X, C, labels, mind, Ct, acc):
    # the same arithmetic per entry as the direct kernel (one FMA chain over features),
    # the centres in vector lanes: Ct (d, K) the centres as columns (filled here), acc
    # (K,) scratch; the centres compared in index order, ties to the lowest.  Fewer
    # than 8 centres fill no vector: four centres' chains side by side instead.
    n = X.shape[0]
    K = C.shape[0]
    d = X.shape[1]
    if K < 8:
        _assign_chains(X, C, labels, mind)
        return
    for k in range(d):
        for j in range(K):
            Ct[k, j] = C[j, k]
    for i in range(n):
        for j in range(K):
            acc[j] = 0
        for k in range(d):
            xk = X[i, k]
            ck = Ct[k]
            for j in range(K):
                t = xk - ck[j]
                acc[j] += t * t
        best = acc[0]
        bi = 0
        for j in range(1, K):
            if acc[j] < best:
                best = acc[j]
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
    Ct = np.empty((d, K), dtype=C.dtype)
    acc = np.empty(K, dtype=C.dtype)
    strict = False
    converged = False
    moved = True
    n_iter = 0
    for it in range(max_iter):
        _assign_serial(X, C, labels, mind, Ct, acc)
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
        _assign_serial(X, C, labels, mind, Ct, acc)
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
