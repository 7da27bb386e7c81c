"""``sqdist``, ``gram`` and ``gram_matvec`` for device arrays (called by
:func:`fastrbf.sqdist`, :func:`fastrbf.gram` and :func:`fastrbf.gram_matvec` when their
data are on a CUDA device; parameters already checked there).

Accuracy: distances are direct differences (see :mod:`fastrbf._jit.cuda.pairwise`),
within ``(16 + d / 16) eps`` relative of the exact value; ``sqdist(X)`` exactly
symmetric with a zero diagonal.  Kernel values differ from the CPU's by the maths
library (CUDA's ``exp`` and ``log`` against the CPU's), a few ulp.  ``gram_matvec``
sums tiles of 128 columns in the dtype and the tiles in float64.  None of these are
the CPU's bits.
"""

import numpy as np

from .._jit.cuda import pairwise as _jp
from .._jit.cuda.phi import device_phi
from .._jit.cuda.target import ROWS, SIMULATOR, TILE, blocks
from . import data
from .arrays import Device


def _prepare(dev, X, Y, length_scale, extra=()):
    if Y is None:
        Xc, _, dtype = data.pair(dev, X, None, "X", "Y", length_scale, extra)
        return Xc, None, dtype
    return data.pair(dev, X, Y, "X", "Y", length_scale, extra)


def kernel_function(entry, dtype):
    """(the device function, whether radial) of registry entry or user kernel ``entry``
    (None: plain distances) in ``dtype``."""
    if entry is None:
        return device_phi(-1, dtype), True
    user = isinstance(entry.code, str)
    return device_phi(entry.code, dtype, entry.function if user else None), entry.radial


def _pairwise(X, Y, entry, gamma, degree, coef0_in, out, length_scale, what, check):
    dev = Device(X)
    with dev.context():
        Xc, Yc, dtype = _prepare(dev, X, Y, length_scale)
        Yc = Xc if Yc is None else Yc
        n, m = Xc.shape[0], Yc.shape[0]
        if entry is None:
            g = data.full(dev, m, 1.0, dtype)
        else:
            g, _ = data.check_gamma(dev, gamma, m, dtype)
        if out is None:
            res, ov = dev.empty((n, m), dtype)
        else:
            res, ov = out, dev.view(out, "out")
            data.check_out(ov, (n, m), dtype)
        phi, radial = kernel_function(entry, dtype)
        k = _jp.tile_kernel(phi, radial, dtype)
        c0 = data.kernel_coef0(coef0_in, dtype)
        k[(blocks(m, TILE), blocks(n, TILE)), (TILE, TILE)](Xc, Yc, g, c0, int(degree), ov)
        if check:
            names = "`X`, `Y` and `gamma`" if radial else "`X`, `Y`, `gamma`, `degree` and `coef0`"
            data.check_finite_result(dev, ov, what, names)
        return dev.result(res)


def _unused(dtype):
    return 0.0


def sqdist(X, Y=None, *, out=None, length_scale=None):
    """Squared distances of device arrays (see the module docstring)."""
    return _pairwise(X, Y, None, 1.0, 1, _unused, out, length_scale, "sqdist", False)


def gram(X, Y, entry, gamma, degree, coef0_in, out, length_scale, check):
    """The kernel matrix of device arrays; ``entry`` is the registry entry (or user
    kernel), ``coef0_in(dtype)`` its checked ``coef0`` (:func:`data.kernel_coef0`),
    ``check`` whether its values can overflow (then refused, as on the CPU)."""
    return _pairwise(X, Y, entry, gamma, degree, coef0_in, out, length_scale, "gram", check)


#: threads a matrix-free product should keep busy: below, the columns are split
WANT_THREADS = 64 if SIMULATOR else 2**16


def splits(n, m):
    """How many column splits a product of ``n`` rows over ``m`` columns runs (a function
    of the shapes only: the same sums on every run)."""
    per = blocks(n, ROWS) * ROWS
    return max(1, min(blocks(WANT_THREADS, per), blocks(m, ROWS)))


def matvec(dev, Xc, Yc, Vc, g, phi, radial, coef0, degree, out):
    """``out <- K(Xc, Yc) @ Vc`` on the device (``Vc`` 2-D, in the dtype of the per-tile
    sums; ``out`` 2-D, float64 or the dtype)."""
    n, m, r = Xc.shape[0], Yc.shape[0], Vc.shape[1]
    S = splits(n, m)
    cols = blocks(m, S)
    k = _jp.matvec_kernel(phi, radial, Xc.dtype, Xc.shape[1], Vc.dtype)
    grid = (blocks(n, ROWS), blocks(r, _jp.RHS), S)
    if S == 1:
        k[grid, ROWS](Xc, Yc, Vc.T, g, coef0, degree, cols, out.reshape(1, n, r))
        return
    part = dev.scratch((S, n, r), np.float64)
    k[grid, ROWS](Xc, Yc, Vc.T, g, coef0, degree, cols, part)
    _jp.splits_kernel()[(blocks(n, TILE), blocks(r, TILE)), (TILE, TILE)](part, out)


def gram_matvec(X, Y, V, entry, gamma, degree, coef0_in, length_scale, check):
    """``K(X, Y) @ V`` of device arrays, without holding ``K``."""
    dev = Device(X)
    with dev.context():
        Vv = data.array(dev, V, "V", ndim=1 if len(V.shape) == 1 else 2)
        Xc, Yc, dtype = _prepare(dev, X, Y, length_scale, extra=(Vv,))
        if Vv.shape[0] != Yc.shape[0]:
            raise ValueError(f"`V` must have one row per row of `Y` ({Yc.shape[0]}); got shape {tuple(Vv.shape)}.")
        data.check_values(dev, Vv, "V", magnitude=False)
        vec = Vv.ndim == 1
        Vc = data.as_dtype(dev, Vv.reshape(Vv.shape[0], 1) if vec else Vv, dtype)
        n, m, r = Xc.shape[0], Yc.shape[0], Vc.shape[1]
        g, _ = data.check_gamma(dev, gamma, m, dtype)
        res, ov = dev.empty((n,) if vec else (n, r), dtype)
        phi, radial = kernel_function(entry, dtype)
        c0 = data.kernel_coef0(coef0_in, dtype)
        matvec(dev, Xc, Yc, Vc, g, phi, radial, c0, int(degree), ov.reshape(n, 1) if vec else ov)
        if check:
            data.check_finite_result(dev, ov, "gram_matvec", "`X`, `Y`, `V` and `gamma`")
        return dev.result(res)
