"""k-means++ seeding kernels: one pass over the data per step, never a t x n matrix.

The data are read as columns (``Xt``, d x n) so that the distance loop runs over points
(vectorised); distances are those of :func:`fastrbf._jit.tiles.chunk_row` (the
arithmetic of ``sqdist``).  Sums are per fixed chunk of ``SEED_CHUNK`` points, so the
result does not depend on the thread count.  Serial ``nogil`` kernels over ranges of
chunks: the caller runs them on Python worker threads (``_threads.map_ranges``), which
costs nothing for small data (one range, called directly).
"""

import numpy as np

from .._decorators import jit_inline, jit_reduce, jit_static
from ..tiles import JB, chunk_row

SEED_CHUNK = 8192  # points per partial sum


@jit_reduce
def _wmin_sum(w, closest, o):
    # sum_j w[j] * min(closest[j], o[j]), float64 accumulator
    s = 0.0
    for j in range(o.shape[0]):
        c = closest[j]
        v = o[j]
        m = v if v < c else c
        s += w[j] * m
    return s


#: the distance loop, inlined at numba-IR level into :func:`seed_pass` (its one call site),
#: so that it is compiled there and nowhere else
_row = jit_inline(chunk_row.py_func)


@jit_static
def seed_pass(Xt, cand, pick, closest, w, c0, c1, part, wc, o):
    # One pass of the seeding over the chunks c0:c1 (serial: the caller spreads chunk
    # ranges over worker threads).  IN: Xt (d, n), cand (t, d) candidate centres,
    #     closest (n,) float64 squared distance of each point to the nearest chosen
    #     centre, w (n,) float64 weights
    # pick < 0, the candidates' potentials: OUT part (nchunks, t), per chunk
    #     sum_j w_j min(closest_j, ||x_j - cand_c||^2)
    # pick >= 0, candidate `pick` chosen: IN/OUT closest (n,); OUT wc (n,) = w * closest
    #     (for the next sampling)
    # scratch: o (JB,) in Xt's dtype (the kernel allocates nothing: jit_static)
    # One kernel for both (not two): the distance loop is compiled once, 0.6 s less of
    # cold compile for a first k-means call.
    n = Xt.shape[1]
    t = cand.shape[0] if pick < 0 else 1
    for b in range(c0, c1):
        lo = b * SEED_CHUNK
        hi = min(n, lo + SEED_CHUNK)
        if pick < 0:
            for c in range(t):
                part[b, c] = 0.0
        for j0 in range(lo, hi, JB):
            j1 = min(hi, j0 + JB)
            L = j1 - j0
            for c in range(t):
                _row(cand, c if pick < 0 else pick, Xt, j0, j1, False, o)  # (inlined: the dot branch pruned)
                if pick < 0:
                    part[b, c] += _wmin_sum(w[j0:j1], closest[j0:j1], o[:L])
                    continue
                for j in range(L):
                    v = np.float64(o[j])
                    m = v if v < closest[j0 + j] else closest[j0 + j]
                    closest[j0 + j] = m
                    wc[j0 + j] = w[j0 + j] * m
