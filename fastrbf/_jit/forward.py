"""Kernels of the forward selection of RBF-network centres (:mod:`fastrbf.models.forward`):
the candidate rows of the transposed design block of a chunk of data rows, one task per
candidate, for the pass that accumulates the candidates' Gram matrix."""

import numpy as np

from ._decorators import pjit
from .kernels import apply_kernel
from .tiles import JB, chunk_row


@pjit(tasks=lambda Cc, *_: Cc.shape[0],
      work=lambda Cc, Xt, lo, hi, *_: Cc.shape[0] * (hi - lo) * (Xt.shape[0] + 16))
def candidate_rows(j_lo, j_hi, Cc, Xt, lo, hi, dot, phi, g, c, degree, At):
    # IN: candidates j_lo:j_hi, Cc (C, d) the candidates, Xt (d, n) the data as columns,
    #     rows lo:hi, kernel spec with g (C,) one gamma per candidate
    # OUT: At[j, r] = phi_j(x_{lo+r}) for the candidates j_lo:j_hi (rows C: of At are the
    #      caller's)
    gbuf = np.empty(JB, dtype=g.dtype)
    for j in range(j_lo, j_hi):
        gbuf[:] = g[j]
        for j0 in range(lo, hi, JB):
            j1 = min(hi, j0 + JB)
            o = At[j, j0 - lo : j1 - lo]
            chunk_row(Cc, j, Xt, j0, j1, dot, o)
            apply_kernel(phi, o, gbuf[: j1 - j0], c, degree)
