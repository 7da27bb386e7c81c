"""Kernel functions applied in place to a tile of squared distances or dot products.

Radial kernels (codes 0-9) act on ``s = gamma * r**2`` (so ``epsilon = sqrt(gamma)`` in
SciPy's ``RBFInterpolator`` notation, ``phi(epsilon * r)``); dot-product kernels (codes
10-11) on ``u = x . y``.  ``g`` holds one gamma per column of the tile; ``c`` holds the
constants in the tile's dtype: ``c = [1, 1/2, coef0, 0]`` (typed constants keep float32
arithmetic in float32).  The registry that names these codes is
:data:`fastrbf.kernels.KERNELS`.
"""

import math

import numpy as np

from ._decorators import jit
from .exp import fexp

GAUSSIAN = 0
LAPLACIAN = 1
MULTIQUADRIC = 2
INVERSE_MULTIQUADRIC = 3
INVERSE_QUADRATIC = 4
THIN_PLATE_SPLINE = 5
CUBIC = 6
QUINTIC = 7
LINEAR = 8
TRUNCATED = 9
POLYNOMIAL = 10
TANH = 11
N_RADIAL = 10  # codes below this act on squared distances


@jit
def apply_kernel(code, o, g, c, degree):
    """o[j] <- phi(o[j]) for one tile row ``o`` with per-column gammas ``g``."""
    one = c[0]
    half = c[1]
    coef0 = c[2]
    zero = c[3]
    n = o.shape[0]
    if code == GAUSSIAN:
        for j in range(n):
            o[j] = fexp(-(g[j] * o[j]))
    elif code == LAPLACIAN:
        for j in range(n):
            o[j] = fexp(-np.sqrt(g[j] * o[j]))
    elif code == MULTIQUADRIC:
        for j in range(n):
            o[j] = -np.sqrt(one + g[j] * o[j])
    elif code == INVERSE_MULTIQUADRIC:
        for j in range(n):
            o[j] = one / np.sqrt(one + g[j] * o[j])
    elif code == INVERSE_QUADRATIC:
        for j in range(n):
            o[j] = one / (one + g[j] * o[j])
    elif code == THIN_PLATE_SPLINE:
        for j in range(n):
            s = g[j] * o[j]
            o[j] = half * s * math.log(s) if s > zero else zero
    elif code == CUBIC:
        for j in range(n):
            s = g[j] * o[j]
            o[j] = s * np.sqrt(s)
    elif code == QUINTIC:
        for j in range(n):
            s = g[j] * o[j]
            o[j] = -(s * s * np.sqrt(s))
    elif code == LINEAR:
        for j in range(n):
            o[j] = -np.sqrt(g[j] * o[j])
    elif code == TRUNCATED:
        for j in range(n):
            r = np.sqrt(g[j] * o[j])
            t = one - r
            o[j] = t * t if r <= one else zero
    elif code == POLYNOMIAL:
        for j in range(n):
            b = coef0 + g[j] * o[j]
            p = one
            for _ in range(degree):
                p = p * b
            o[j] = p
    elif code == TANH:
        for j in range(n):
            o[j] = math.tanh(g[j] * o[j] + coef0)
