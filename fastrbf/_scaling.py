"""Exact power-of-two scaling of data of any magnitude, for the Lloyd steps of
:mod:`fastrbf.cluster` and the neighbour searches of :mod:`fastrbf.neighbors`.

Decision: data (and weights) whose squared distances or sums could overflow, or would
lose precision to underflow, are multiplied by a power of two before the kernels run
and the results scaled back: exact (the same labels, neighbours and, scaled back, the
same values bit for bit) unless a result itself overflows or underflows.  See the
module docstring of :mod:`fastrbf.cluster` for the bounds.
"""

import numpy as np


def shift_for(M, dtype, d, f32_ranking=False, M_other=0.0):
    """The exponent ``t`` such that data within ``M`` of the origin, multiplied by
    ``2**-t``, have squared distances between them (over ``d`` features; and float32
    GEMM ranking values with ``f32_ranking``) far from overflow and underflow; 0 when
    the data need no scaling.  Large data are scaled no more than needed (so that small
    values keep their precision), tiny data are scaled to a maximum in [0.5, 1).  Other
    points within ``M_other`` (initial centres) are kept from overflowing too."""
    M = float(M)
    if not (M > 0 and np.isfinite(M)):
        return 0
    L = max(0, int(d - 1).bit_length())  # ceil(log2(d))
    emax = 128 if (np.dtype(dtype) == np.float32 or f32_ranking) else 1024
    hi = (emax - 6 - L) // 2
    lo = -(hi // 4)
    e = int(np.frexp(M)[1])  # M < 2**e
    t = e - hi if e > hi else (e if e < lo else 0)
    e_all = int(np.frexp(max(M, float(M_other)))[1])
    return max(t, e_all - hi)


def max_abs(*arrays):
    """max |a| over the arrays, without a temporary copy."""
    return max(max(float(a.max()), -float(a.min())) for a in arrays)


def ldexp(x, t, dtype=None):
    """Array ``x * 2**t`` in ``dtype`` (default: that of ``x``), exact unless it
    overflows to inf or underflows, both silently; ``x`` itself when nothing changes."""
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    with np.errstate(over="ignore", under="ignore"):
        return (x if t == 0 else np.ldexp(x, t)).astype(dtype, copy=False)


def ldexp_float(x, t):
    """Python float ``x * 2**t`` (inf on overflow)."""
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(np.float64(x), t))


def weight_shift(w):
    """The exponent ``t`` such that ``w * 2**-t`` has its maximum in [0.5, 1), when the
    weights are so large that the weighted sums could overflow or so small that they
    would lose precision; else 0."""
    e = int(np.frexp(float(w.max()))[1])
    return e if not -200 <= e <= 200 else 0
