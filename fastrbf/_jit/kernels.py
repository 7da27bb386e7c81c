"""Kernel functions applied in place to a tile of squared distances or dot products.

Radial kernels (every code but 10 and 11) act on ``s = gamma * r**2`` (so ``epsilon = sqrt(gamma)`` in
SciPy's ``RBFInterpolator`` notation, ``phi(epsilon * r)``); dot-product kernels (codes
10-11) on ``u = x . y``.  ``g`` holds one gamma per column of the tile; ``c`` holds the
constants in the tile's dtype: ``c = [1, 1/2, coef0, 0]`` (``coef0`` is the shape ``a`` of
the rational quadratic kernel) (typed constants keep float32
arithmetic in float32).  The registry that names these codes is
:data:`fastrbf.kernels.KERNELS`.

The kernel function is a compile-time constant: kernels receive a :class:`Phi` (made by
:func:`phi` from a code; ``phi(-1)`` applies nothing, for plain distances), whose numba
type is one type per kernel.  :func:`apply_kernel` is resolved from that type, so a
compiled kernel holds the one function it applies and a call compiles only that one
(a kernel code passed as a number would compile all twelve branches into every
caller).  The type is an ordinary, picklable numba type: kernels specialised on it are
cached on disk like any other signature.

User-defined kernels (:mod:`fastrbf.user_kernels`) get a :class:`Phi` whose code is a
string, ``"user:<module>.<name>:<token>"`` (the token hashes the function's code, so a
changed function is a new type and never meets a stale cache entry); :func:`user_phi`
registers the numba implementation that applies it.  The type holds only that string,
so cache indexes that name it load in any process.
"""

import math

import numpy as np
from numba import types

from ._decorators import jit_overload
from .llvm.exp import fexp
from .llvm.internals import register_opaque

NONE = -1
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
MATERN32 = 12
MATERN52 = 13
WENDLAND_C2 = 14
WENDLAND_C4 = 15
RATIONAL_QUADRATIC = 16
LAST = RATIONAL_QUADRATIC


class Phi:
    """A kernel function as an argument of a numba kernel (its code, fixed at compile time)."""

    __slots__ = ("code",)

    def __init__(self, code):
        self.code = code

    def __repr__(self):
        return f"Phi({self.code})"


class PhiType(types.Type):
    """numba type of a :class:`Phi`: one type per kernel code (an int for the built-in
    kernels, a string for user-defined ones), no runtime data."""

    def __init__(self, code):
        self.code = code
        super().__init__(name=f"Phi({code})")


register_opaque(Phi, PhiType, lambda val: PhiType(val.code))


_PHIS = {code: Phi(code) for code in range(NONE, LAST + 1)}


def phi(code):
    """The :class:`Phi` that kernels take for kernel ``code`` (``-1``: none)."""
    return _PHIS[int(code)]


#: user kernel code -> the implementation applying it (see :func:`user_phi`)
_USER_IMPLS = {}
#: user kernel name -> kernel (:mod:`fastrbf.user_kernels`); kept here, with the
#: implementations, so that there is one registry per process
USER_KERNELS = {}


#: user kernel code -> its element function ``(phi, t, c, degree) -> (phi(t), dphi/dt)``
_USER_DERIVS = {}


def user_phi(code, function, derivative):
    """The :class:`Phi` of a user-defined kernel with string ``code`` whose element
    function ``function`` (a numba dispatcher of one scalar) is applied to ``gamma * s``
    (radial: ``s`` the squared distance) or ``gamma * u`` (``u`` the dot product), with
    ``derivative`` its derivative (a dispatcher too)."""
    if code not in _USER_IMPLS:
        _USER_IMPLS[code] = _user_impl(function)
        _USER_DERIVS[code] = _user_deriv(function, derivative)
        _PHIS[code] = Phi(code)
    return _PHIS[code]


def user_deriv(code):
    """The element function ``(phi, t, c, degree) -> (phi(t), dphi/dt)`` of user kernel
    ``code`` (see :func:`fastrbf._jit.grad.deriv_impl`), or None."""
    return _USER_DERIVS.get(code)


def _user_deriv(f, df):
    # a derivative that is infinite at t = 0 (a cusp) counts as 0 there, as for the
    # built-in kernels: the symmetric subgradient at a coincident centre
    def impl(phi, t, c, degree):
        d = df(t)
        if t == 0 and not math.isfinite(d):
            d = 0.0 * t
        return f(t), d

    return impl


def _user_impl(f):
    # radial and dot-product kernels apply f alike: to the scaled tile value
    def impl(phi, o, g, c, degree):
        for j in range(o.shape[0]):
            o[j] = f(g[j] * o[j])

    return impl


def _none(phi, o, g, c, degree):
    return None


def _gaussian(phi, o, g, c, degree):
    for j in range(o.shape[0]):
        o[j] = fexp(-(g[j] * o[j]))


def _laplacian(phi, o, g, c, degree):
    for j in range(o.shape[0]):
        o[j] = fexp(-np.sqrt(g[j] * o[j]))


def _multiquadric(phi, o, g, c, degree):
    one = c[0]
    for j in range(o.shape[0]):
        o[j] = -np.sqrt(one + g[j] * o[j])


def _inverse_multiquadric(phi, o, g, c, degree):
    one = c[0]
    for j in range(o.shape[0]):
        # exactly 1 at distance 0: with `arcp`, LLVM may lower float32 1/sqrt to the
        # reciprocal-square-root estimate and a Newton step, which gives 1 - 2**-24 there
        o[j] = one if o[j] == 0 else one / np.sqrt(one + g[j] * o[j])


def _inverse_quadratic(phi, o, g, c, degree):
    one = c[0]
    for j in range(o.shape[0]):
        o[j] = one / (one + g[j] * o[j])


def _thin_plate_spline(phi, o, g, c, degree):
    half = c[1]
    zero = c[3]
    for j in range(o.shape[0]):
        s = g[j] * o[j]
        o[j] = half * s * math.log(s) if s > zero else zero


def _cubic(phi, o, g, c, degree):
    for j in range(o.shape[0]):
        s = g[j] * o[j]
        o[j] = s * np.sqrt(s)


def _quintic(phi, o, g, c, degree):
    for j in range(o.shape[0]):
        s = g[j] * o[j]
        o[j] = -(s * s * np.sqrt(s))


def _linear(phi, o, g, c, degree):
    for j in range(o.shape[0]):
        o[j] = -np.sqrt(g[j] * o[j])


def _truncated(phi, o, g, c, degree):
    one = c[0]
    zero = c[3]
    for j in range(o.shape[0]):
        r = np.sqrt(g[j] * o[j])
        t = one - r
        o[j] = t * t if r <= one else zero


def _polynomial(phi, o, g, c, degree):
    one = c[0]
    coef0 = c[2]
    for j in range(o.shape[0]):
        b = coef0 + g[j] * o[j]
        p = one
        for _ in range(degree):
            p = p * b
        o[j] = p


def _tanh(phi, o, g, c, degree):
    coef0 = c[2]
    for j in range(o.shape[0]):
        o[j] = math.tanh(g[j] * o[j] + coef0)


def _matern32(phi, o, g, c, degree):
    # (1 + t) exp(-t), t = sqrt(3 s); 0 where exp(-t) underflows (t, s may be inf there)
    one = c[0]
    zero = c[3]
    three = one + one + one
    for j in range(o.shape[0]):
        t = np.sqrt(three * (g[j] * o[j]))
        e = fexp(-t)
        o[j] = (one + t) * e if e > zero else zero


def _matern52(phi, o, g, c, degree):
    # (1 + t + t^2 / 3) exp(-t), t = sqrt(5 s)
    one = c[0]
    zero = c[3]
    three = one + one + one
    five = three + one + one
    for j in range(o.shape[0]):
        t2 = five * (g[j] * o[j])
        t = np.sqrt(t2)
        e = fexp(-t)
        o[j] = (one + t + t2 / three) * e if e > zero else zero


def _wendland_c2(phi, o, g, c, degree):
    # (1 - t)^4 (4 t + 1) for t = sqrt(s) < 1, else 0
    one = c[0]
    zero = c[3]
    four = one + one + one + one
    for j in range(o.shape[0]):
        t = np.sqrt(g[j] * o[j])
        u = one - t
        u2 = u * u
        o[j] = u2 * u2 * (four * t + one) if t < one else zero


def _wendland_c4(phi, o, g, c, degree):
    # (1 - t)^6 (35 t^2 + 18 t + 3) / 3 for t = sqrt(s) < 1, else 0
    one = c[0]
    zero = c[3]
    three = one + one + one
    six = three + three
    c35 = six * six - one
    for j in range(o.shape[0]):
        t = np.sqrt(g[j] * o[j])
        u = one - t
        u3 = u * u * u
        o[j] = u3 * u3 * ((c35 / three) * (t * t) + six * t + one) if t < one else zero


def _rational_quadratic(phi, o, g, c, degree):
    # (1 + s / (2 a))^-a with the shape a = coef0 > 0
    one = c[0]
    a = c[2]
    inv = one / (a + a)
    for j in range(o.shape[0]):
        o[j] = (one + (g[j] * o[j]) * inv) ** (-a)


_IMPLS = {
    NONE: _none,
    GAUSSIAN: _gaussian,
    LAPLACIAN: _laplacian,
    MULTIQUADRIC: _multiquadric,
    INVERSE_MULTIQUADRIC: _inverse_multiquadric,
    INVERSE_QUADRATIC: _inverse_quadratic,
    THIN_PLATE_SPLINE: _thin_plate_spline,
    CUBIC: _cubic,
    QUINTIC: _quintic,
    LINEAR: _linear,
    TRUNCATED: _truncated,
    POLYNOMIAL: _polynomial,
    TANH: _tanh,
    MATERN32: _matern32,
    MATERN52: _matern52,
    WENDLAND_C2: _wendland_c2,
    WENDLAND_C4: _wendland_c4,
    RATIONAL_QUADRATIC: _rational_quadratic,
}


def apply_kernel(phi, o, g, c, degree):
    """o[j] <- phi(o[j]) for one tile row ``o`` with per-column gammas ``g``."""
    _IMPLS[phi.code](phi, o, g, c, degree)


@jit_overload(apply_kernel)
def _apply_kernel_overload(phi, o, g, c, degree):
    if isinstance(phi, PhiType):
        return _USER_IMPLS[phi.code] if isinstance(phi.code, str) else _IMPLS[phi.code]
    return None
