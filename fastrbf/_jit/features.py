"""Kernels of the random Fourier feature maps: cos (or cos and sin) of a block of
projections ``X @ W``, in place, with the vectorised :mod:`.trig` functions.

Arguments beyond the accurate range of ``fcos``/``fsin`` (``|x| > LIMIT``) go through
``math.cos``/``math.sin`` (libm): each chunk of ``CB`` columns of a row is scanned
first and takes the exact scalar path only when it holds such an argument.  The
caller passes ``checked=True`` when it has proved that no argument can exceed the
limit (``max ||x|| * max ||w|| + 2 pi <= LIMIT``): then there is no scan.
"""

import math

from ._decorators import jit, pjit
from .llvm.trig import fcos, fcossin, limit

CB = 512  # columns per chunk of the range scan


@jit
def n_beyond(p, lim):
    # how many of the arguments p lie beyond the accurate range (|x| > lim): a scan
    # that vectorises, so that a chunk without any takes the vectorised path
    nbig = 0
    for j in range(p.shape[0]):
        nbig += abs(p[j]) > lim
    return nbig


@jit
def _cos_chunk(p, scale, checked):
    # IN/OUT: p (c,) arguments -> scale * cos(p); IN: scale, checked
    c = p.shape[0]
    lim = limit(scale)
    if checked or n_beyond(p, lim) == 0:
        for j in range(c):
            p[j] = scale * fcos(p[j])
    else:
        for j in range(c):
            x = p[j]
            p[j] = scale * (math.cos(x) if abs(x) > lim else fcos(x))


@jit
def _add(p, b):
    for j in range(p.shape[0]):
        p[j] += b[j]


@jit
def _cossin_chunk(p, scale, checked, oc, os):
    # IN: p (c,) projections, scale, checked; OUT: oc = scale * cos(p), os = scale * sin(p)
    c = p.shape[0]
    lim = limit(scale)
    if checked or n_beyond(p, lim) == 0:
        for j in range(c):
            cv, sv = fcossin(p[j])
            oc[j] = scale * cv
            os[j] = scale * sv
    else:
        for j in range(c):
            x = p[j]
            if abs(x) > lim:
                oc[j] = scale * math.cos(x)
                os[j] = scale * math.sin(x)
            else:
                cv, sv = fcossin(x)
                oc[j] = scale * cv
                os[j] = scale * sv


@pjit(tasks=lambda P, b, scale, checked, out: P.shape[0],
      work=lambda P, b, scale, checked, out: 16 * out.size)
def trig_rows(lo, hi, P, b, scale, checked, out):
    # IN: rows lo:hi, P (n, D) projections, scale, checked, one row per task; then
    # b (D,): IN/OUT P -> scale * cos(P + b), out is P (the "cos" map, in place);
    # b None: OUT out (n, 2 D) = [scale cos P, scale sin P] (the "cos-sin" map)
    D = P.shape[1]
    for i in range(lo, hi):
        for j0 in range(0, D, CB):
            j1 = min(D, j0 + CB)
            if b is None:
                _cossin_chunk(P[i, j0:j1], scale, checked, out[i, j0:j1], out[i, D + j0 : D + j1])
            else:
                p = P[i, j0:j1]
                _add(p, b[j0:j1])
                _cos_chunk(p, scale, checked)
