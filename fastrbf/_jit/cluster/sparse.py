"""Lloyd (k-means) and k-means++ kernels on CSR rows: ``data`` (nnz,), ``indices``
(nnz,) and ``indptr`` (n + 1,), in canonical form (sorted column indices, no
duplicates; the public wrapper makes a canonical copy when the caller's matrix is not).
Centres are dense.  Serial ``nogil`` kernels over row (or chunk) ranges: the caller runs
the ranges on fastrbf's worker threads.

Assignment (``assign_csr``): the ranking value ``v_j = ||c_j||^2 - 2 x.c_j`` in float64,
``x.c`` over the row's nonzeros (the centres transposed, ``Ct`` (d, K), so that the inner
loop runs over the centres, contiguous); every centre within the rigorous error bound of
the smallest ``v`` is a candidate, and when there are several the exact float64
direct-difference distances (those of the dense path) decide, ties to the lowest index.
So the label is the argmin of the exact distances, as for dense data.

Distances to a chosen centre (``mind``, the seeding) take the mixed form of
scikit-learn's sparse k-means, ``||c||^2 + sum over nonzeros ((x - c)^2 - c^2)``, in
float64: O(nnz) per row and no cancellation of ``||x||^2``.

Update: one partial (sum, weight) slot per fixed chunk of rows, the row's nonzeros
added to its cluster's sum; the slots are added in chunk order by
``fastrbf._jit.cluster.lloyd.reduce_partials``.  The adds are those of the dense update minus
the exact zeros, so the sums are bitwise those of the densified data.
"""

import numpy as np

from .._decorators import jit


@jit
def row_sqnorms(data, indptr, lo, hi, nx):
    # IN: CSR data and indptr, rows lo:hi; OUT: nx[lo:hi] = ||x_i||^2 in float64
    for i in range(lo, hi):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[p])
            acc += v * v
        nx[i] = acc


@jit
def _sq_to(data, indices, p0, p1, C, j, ncj):
    # squared distance of the row data[p0:p1] to C[j] (squared norm ncj), mixed form
    acc = 0.0
    for p in range(p0, p1):
        c = np.float64(C[j, indices[p]])
        t = np.float64(data[p]) - c
        acc += t * t - c * c
    acc += ncj
    return acc if acc > 0.0 else 0.0


@jit
def assigned_sqdist_csr(data, indices, indptr, C, nc, labels, lo, hi, mind):
    # OUT: mind[lo:hi] = squared distance of each row to its labelled centre
    for i in range(lo, hi):
        j = labels[i]
        mind[i] = _sq_to(data, indices, indptr[i], indptr[i + 1], C, j, nc[j])


@jit
def assign_csr(data, indices, indptr, nx, C, Ct, nc, ncmax, err_coef, want_dist, lo, hi, labels, mind):
    # IN: CSR rows, nx (n,) their float64 squared norms, C (K, d) the centres, Ct (d, K)
    #     the centres in float64 transposed, nc (K,) their float64 squared norms, ncmax
    #     = max nc, err_coef the coefficient of the ranking's error bound, want_dist:
    #     also fill mind (else only rows that needed exact distances get it), rows lo:hi
    # OUT: labels[lo:hi], mind[lo:hi]
    # |computed v_j - exact v_j| <= e = err_coef (||x||^2 + max ||c||^2): the float64
    # dot product over at most d nonzeros, the norm over d features, the last two
    # operations, with a margin (err_coef = (2 d + 8) eps64).  Every centre with
    # v_j <= min(v) + 2 e may be the nearest; the exact distances decide among them.
    d = Ct.shape[0]
    K = Ct.shape[1]
    v = np.empty(K, dtype=np.float64)
    xd = np.zeros(d, dtype=np.float64)
    for i in range(lo, hi):
        p0 = indptr[i]
        p1 = indptr[i + 1]
        for j in range(K):
            v[j] = 0.0
        for p in range(p0, p1):
            x = np.float64(data[p])
            row = Ct[indices[p]]
            for j in range(K):
                v[j] += x * row[j]
        best = np.inf
        bj = 0
        for j in range(K):
            vj = nc[j] - 2.0 * v[j]
            v[j] = vj
            if vj < best:
                best = vj
                bj = j
        lim = best + 2.0 * err_coef * (nx[i] + ncmax)
        cnt = 0
        for j in range(K):
            cnt += v[j] <= lim
        if cnt == 1:
            labels[i] = bj
            if want_dist:
                mind[i] = _sq_to(data, indices, p0, p1, C, bj, nc[bj])
            continue
        for p in range(p0, p1):
            xd[indices[p]] = np.float64(data[p])
        eb = np.inf
        ebi = 0
        for j in range(K):
            if v[j] <= lim:
                acc = 0.0
                for k in range(d):
                    t = xd[k] - np.float64(C[j, k])
                    acc += t * t
                if acc < eb:
                    eb = acc
                    ebi = j
        for p in range(p0, p1):
            xd[indices[p]] = 0.0
        labels[i] = ebi
        mind[i] = eb


@jit
def move_rows_csr(data, indices, indptr, w, rows, old, new, sums):
    # IN: CSR rows, w (n,), rows (m,) the rows moved to empty clusters in the order they
    #     were taken, old (m,) and new (m,) their clusters before and after
    # IN/OUT: sums (K, d) float64: each row's weighted values leave its old cluster's
    # sum and become the new cluster's sum (as fastrbf._jit.cluster.lloyd.relocate_empty does)
    for m in range(rows.shape[0]):
        i = rows[m]
        a = old[m]
        b = new[m]
        wi = w[i]
        for k in range(sums.shape[1]):
            sums[b, k] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            sums[a, indices[p]] -= wi * data[p]
            sums[b, indices[p]] = wi * data[p]


@jit
def seed_potentials_csr(data, indices, indptr, cand, ncand, closest, w, chunk, c0, c1, part):
    # IN: CSR rows, cand (t, d) candidate centres and ncand (t,) their float64 squared
    #     norms, closest (n,) float64 squared distance to the nearest chosen centre,
    #     w (n,) float64 weights, chunks c0:c1 of `chunk` rows (serial)
    # OUT: part (nchunks, t): per chunk, sum_i w_i min(closest_i, ||x_i - cand_c||^2)
    n = indptr.shape[0] - 1
    t = cand.shape[0]
    for b in range(c0, c1):
        for c in range(t):
            part[b, c] = 0.0
        for i in range(b * chunk, min(n, (b + 1) * chunk)):
            for c in range(t):
                dist = _sq_to(data, indices, indptr[i], indptr[i + 1], cand, c, ncand[c])
                m = dist if dist < closest[i] else closest[i]
                part[b, c] += w[i] * m


@jit
def seed_update_csr(data, indices, indptr, cand, ncand, c, closest, w, chunk, c0, c1, wc):
    # IN: CSR rows, cand (t, d), ncand (t,), c the chosen candidate, chunks c0:c1 (serial)
    # IN/OUT: closest (n,); OUT: wc (n,) = w * closest (for the next sampling)
    n = indptr.shape[0] - 1
    for b in range(c0, c1):
        for i in range(b * chunk, min(n, (b + 1) * chunk)):
            dist = _sq_to(data, indices, indptr[i], indptr[i + 1], cand, c, ncand[c])
            m = dist if dist < closest[i] else closest[i]
            closest[i] = m
            wc[i] = w[i] * m
