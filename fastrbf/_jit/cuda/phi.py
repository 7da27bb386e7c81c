"""Kernel functions as scalar device functions ``phi(t, coef0, degree)``.

``t`` is the scaled argument: ``gamma * r**2`` for radial kernels, ``gamma * x.y`` for
dot-product ones, as in :mod:`fastrbf._jit.kernels`, whose formulas these repeat
operation for operation (so the two differ only by the maths library: CUDA's
``exp``/``log``/``sqrt`` against the CPU's vectorised ``exp`` and libm).  Constants are
made in the kernel's dtype and closed over, so float32 arithmetic stays float32.

A user kernel (:func:`fastrbf.define_kernel`) is its Python function compiled again
for the device, with ``fastrbf.user_kernels.exp`` read as ``math.exp``; the function must
use what numba-cuda compiles (``math`` functions, arithmetic; not NumPy calls or other
CPU-compiled functions).
"""

import math
import types

import numpy as np

from .. import kernels as _k
from ..llvm.exp import fexp
from .target import device, made


def _radial(code, f):
    ONE, HALF, ZERO, THREE, FOUR, FIVE, SIX = f(1), f(0.5), f(0), f(3), f(4), f(5), f(6)
    C35_3 = f(35) / THREE

    if code == _k.NONE:
        def phi(t, coef0, degree):
            return t
    elif code == _k.GAUSSIAN:
        def phi(t, coef0, degree):
            return math.exp(-t)
    elif code == _k.LAPLACIAN:
        def phi(t, coef0, degree):
            return math.exp(-math.sqrt(t))
    elif code == _k.MULTIQUADRIC:
        def phi(t, coef0, degree):
            return -math.sqrt(ONE + t)
    elif code == _k.INVERSE_MULTIQUADRIC:
        def phi(t, coef0, degree):
            return ONE if t == ZERO else ONE / math.sqrt(ONE + t)
    elif code == _k.INVERSE_QUADRATIC:
        def phi(t, coef0, degree):
            return ONE / (ONE + t)
    elif code == _k.THIN_PLATE_SPLINE:
        def phi(t, coef0, degree):
            return HALF * t * math.log(t) if t > ZERO else ZERO
    elif code == _k.CUBIC:
        def phi(t, coef0, degree):
            return t * math.sqrt(t)
    elif code == _k.QUINTIC:
        def phi(t, coef0, degree):
            return -(t * t * math.sqrt(t))
    elif code == _k.LINEAR:
        def phi(t, coef0, degree):
            return -math.sqrt(t)
    elif code == _k.TRUNCATED:
        def phi(t, coef0, degree):
            r = math.sqrt(t)
            u = ONE - r
            return u * u if r <= ONE else ZERO
    elif code == _k.POLYNOMIAL:
        def phi(t, coef0, degree):
            b = coef0 + t
            p = ONE
            for _ in range(degree):
                p = p * b
            return p
    elif code == _k.TANH:
        def phi(t, coef0, degree):
            return math.tanh(t + coef0)
    elif code == _k.MATERN32:
        def phi(t, coef0, degree):
            r = math.sqrt(THREE * t)
            e = math.exp(-r)
            return (ONE + r) * e if e > ZERO else ZERO
    elif code == _k.MATERN52:
        def phi(t, coef0, degree):
            t2 = FIVE * t
            r = math.sqrt(t2)
            e = math.exp(-r)
            return (ONE + r + t2 / THREE) * e if e > ZERO else ZERO
    elif code == _k.WENDLAND_C2:
        def phi(t, coef0, degree):
            r = math.sqrt(t)
            u = ONE - r
            u2 = u * u
            return u2 * u2 * (FOUR * r + ONE) if r < ONE else ZERO
    elif code == _k.WENDLAND_C4:
        def phi(t, coef0, degree):
            r = math.sqrt(t)
            u = ONE - r
            u3 = u * u * u
            return u3 * u3 * (C35_3 * (r * r) + SIX * r + ONE) if r < ONE else ZERO
    elif code == _k.RATIONAL_QUADRATIC:
        def phi(t, coef0, degree):
            return (ONE + t * (ONE / (coef0 + coef0))) ** (-coef0)
    else:
        raise ValueError(f"no device form of kernel code {code!r}")
    return phi


def _for_device(function):
    # the user's Python function with fastrbf's vectorised exp (the CPU's, which has no
    # device form) replaced by math.exp among its globals
    py = getattr(function, "py_func", function)
    names = dict(py.__globals__)
    for k, v in names.items():
        if v is fexp:
            names[k] = math.exp
    return types.FunctionType(py.__code__, names, py.__name__, py.__defaults__, py.__closure__)


def _make(code, dtype, function):
    f = np.dtype(dtype).type
    if function is None:
        return device(_radial(code, f))
    user = device(_for_device(function))
    cast = f

    def phi(t, coef0, degree):
        return cast(user(t))

    return device(phi)


def device_phi(code, dtype, function=None):
    """The device function of kernel ``code`` (an int of :mod:`fastrbf._jit.kernels`, or
    a user kernel's string code with its Python ``function``) in ``dtype``."""
    return made("phi", (code, np.dtype(dtype).str, function), _make)
