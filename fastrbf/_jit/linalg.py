"""Kernels of the solves: the symmetry check of a matrix and the mirror of a triangle."""

import numpy as np

from ._decorators import pjit

SB = 64  # tile size of the symmetry check


@pjit(tasks=lambda B, part: part.shape[0],
      work=lambda B, part: B.size)
def asymmetry(lo, hi, B, part):
    # IN: block rows lo:hi, B (n, n); OUT: part (nb,) = max |B[i, j] - B[j, i]| over the tiles of block row b
    n = B.shape[0]
    for b in range(lo, hi):
        i0 = b * SB
        i1 = min(n, i0 + SB)
        worst = 0.0
        for j0 in range(0, i1, SB):
            j1 = min(n, j0 + SB)
            for i in range(i0, i1):
                for j in range(j0, min(j1, i)):
                    v = abs(np.float64(B[i, j]) - np.float64(B[j, i]))
                    worst = v if v > worst else worst
        part[b] = worst


@pjit(tasks=lambda B: (B.shape[0] + SB - 1) // SB,
      work=lambda B: B.size)
def mirror_lower(lo, hi, B):
    # IN: block rows lo:hi; IN/OUT: B (n, n); copies the strict lower triangle onto
    # the upper one, in tiles
    n = B.shape[0]
    for b in range(lo, hi):
        i0 = b * SB
        i1 = min(n, i0 + SB)
        for j0 in range(i0, n, SB):  # tiles right of the diagonal block
            j1 = min(n, j0 + SB)
            for i in range(i0, i1):
                for j in range(max(j0, i + 1), j1):
                    B[i, j] = B[j, i]
