"""Lloyd's steps and the k-means++ potentials on the device.

The assignment is the k-NN kernel with k = 1 (:mod:`fastrbf._jit.cuda.neighbors`): the
nearest centre by direct differences, ties to the lowest index, NaN never chosen.

``update_partials`` / ``update_reduce``: the cluster sums without atomics, so the same
input gives the same bits on every run and device.  Each block sums a chunk of rows in
order into its own float64 slots (a thread per feature, the first also the weights),
then one thread per (cluster, feature) adds the chunks in order; the centres are the
float64 quotients rounded to the dtype (NaN for a cluster of weight 0).

``potential``: for k-means++, each point's ``w * min(mind, ||x - c||^2)`` for a few
candidate centres, summed per block by a fixed tree in shared memory; the host adds
the blocks (a few thousand numbers) and draws the next centre from them.
"""

import numpy as np
from numba import cuda

from .reduce import tree_sum
from .target import ROWS, kernel, made

#: threads of an update block (one per feature, looping over features beyond)
UPDATE_THREADS = 32
#: the largest number of k-means++ candidates per potential pass
MAX_CANDIDATES = 16


def _partials():
    T = UPDATE_THREADS

    def partials(X, labels, w, mu, square, chunk, part, partw):
        # part[b, k, c] = sum over the chunk's rows i of label k of w_i (x_ic - mu_c)
        # (squared when ``square``), in row order
        b = cuda.blockIdx.x
        t = cuda.threadIdx.x
        n = X.shape[0]
        d = X.shape[1]
        K = part.shape[1]
        for k in range(K):
            for c in range(t, d, T):
                part[b, k, c] = 0.0
            if t == 0:
                partw[b, k] = 0.0
        cuda.syncthreads()
        lo = b * chunk
        hi = min(n, lo + chunk)
        for i in range(lo, hi):
            k = labels[i]
            wi = w[i]
            for c in range(t, d, T):
                v = np.float64(X[i, c]) - mu[c]
                part[b, k, c] += wi * (v * v if square else v)
            if t == 0:
                partw[b, k] += wi

    return kernel(partials)


def partials_kernel():
    """Per-chunk float64 sums (grid: one block of UPDATE_THREADS per chunk)."""
    return made("partials", (), _partials)


def _reduce():
    def reduce(part, partw, sums, wsum, centers):
        K = part.shape[1]
        d = part.shape[2]
        q = cuda.grid(1)
        if q >= K * (d + 1):
            return
        k = q // (d + 1)
        c = q - k * (d + 1)
        ws = 0.0
        for b in range(partw.shape[0]):
            ws += partw[b, k]
        if c == d:
            wsum[k] = ws
        else:
            acc = 0.0
            for b in range(part.shape[0]):
                acc += part[b, k, c]
            sums[k, c] = acc
            centers[k, c] = acc / ws if ws != 0.0 else np.nan

    return kernel(reduce)


def reduce_kernel():
    """Adds the chunks in order (grid: one thread per (cluster, feature or weight))."""
    return made("reduce", (), _reduce)


def _potential(dtype):
    R = ROWS
    f = np.dtype(dtype).type
    ZERO = f(0)

    SHAPE = (MAX_CANDIDATES, R)

    def potential(X, cand, mind, w, part):
        red = cuda.shared.array(SHAPE, np.float64)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * R + t
        L = cand.shape[0]
        d = X.shape[1]
        for l in range(L):
            v = 0.0
            if i < X.shape[0]:
                s = ZERO
                for c in range(d):
                    e = X[i, c] - cand[l, c]
                    s += e * e
                m = np.float64(mind[i])
                v = w[i] * min(m, np.float64(s))
            red[l, t] = v
        cuda.syncthreads()
        for l in range(L):
            tree_sum(red[l], t)
        if t == 0:
            for l in range(L):
                part[cuda.blockIdx.x, l] = red[l, 0]

    return kernel(potential)


def potential_kernel(dtype):
    """Per-block sums of ``w * min(mind, ||x - cand_l||^2)`` (grid: rows by ROWS)."""
    return made("potential", (np.dtype(dtype).str,), _potential)


def _lower(dtype):
    f = np.dtype(dtype).type
    ZERO = f(0)

    def lower(X, cand, l, mind):
        i = cuda.grid(1)
        if i < X.shape[0]:
            s = ZERO
            for k in range(X.shape[1]):
                e = X[i, k] - cand[l, k]
                s += e * e
            mind[i] = min(mind[i], np.float64(s))

    return kernel(lower)


def lower_kernel(dtype):
    """``mind <- min(mind, ||x - cand[l]||^2)`` (float64)."""
    return made("lower", (np.dtype(dtype).str,), _lower)
