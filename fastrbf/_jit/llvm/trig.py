"""A vectorisable ``cos`` and ``sin`` for numba kernels (written like :mod:`.exp`).

numba's ``math.cos`` and ``math.sin`` are scalar libm calls and ``np.cos`` has no SIMD
path for float64 either: random Fourier features would be bound by them.  ``fcos``,
``fsin`` and ``fcossin`` are branch-free:

- Range reduction ``x = n pi/2 + r`` with ``|r| <= pi/4`` (Cody-Waite, three parts):
  ``n = round(x * 2/pi)``, then ``r = x - n P1 - n P2 - n P3`` with ``P1 + P2 + P3 =
  pi/2`` (each part the rounded remainder of the one before) and every step one fused
  multiply-add (an ``@intrinsic`` for ``llvm.fma``, one instruction on FMA hardware).
  With ``|x| <= LIMIT`` the first step is exact (``x`` and ``n P1`` are multiples of
  ``ulp(P1)`` whose difference is below 1), so ``r`` carries about one rounding error
  of its own size: the reduction stays accurate next to the zeros of cos and sin.
- Polynomials on ``[-pi/4, pi/4]``: fdlibm's ``__kernel_sin``/``__kernel_cos``
  coefficients for float64 (degrees 13 and 14), Cephes' ``sinf``/``cosf`` for float32
  (degrees 7 and 8).
- Quadrant selection without branches: ``n mod 4`` is read from the bits of
  ``n + 1.5 * 2**52`` (``2**23`` for float32); it picks the sin or cos polynomial
  (a select) and the sign (an XOR of the sign bit).

All operations have AVX2 forms, so LLVM vectorises loops that call them.

Range and accuracy (tests/test_trig.py): for ``|x| <= LIMIT_F64 = 1e6`` (float64) and
``|x| <= LIMIT_F32 = 1e5`` (float32) within 2 ulp of the correctly rounded value.
Measured: float64 1.47 ulp (cos) and 1.45 ulp (sin) on 2e6 random arguments and the
doubles nearest to multiples of pi/2; float32 1.53 ulp for both, exhaustively over every
float32 with ``1e-30 <= |x| <= 1e5``.

Beyond the limit the error is not bounded (the reduction degrades): callers compare ``|x|`` with
:func:`limit` and use ``math.cos``/``math.sin`` (libm, within 1 ulp with a full
Payne-Hanek reduction) for such arguments.  Inputs must
not be NaN (prior validation is assumed).
"""

import math

import numpy as np
from numba import types
from numba.extending import intrinsic

from .._decorators import jit_inline, jit_overload
from .exp import bits_to_f32, bits_to_f64, f32_to_bits, f64_to_bits

#: the vectorised functions are accurate (<= 2 ulp) for |x| up to these limits
LIMIT_F64 = 1e6
LIMIT_F32 = 1e5


@intrinsic
def _fma(typingctx, a, b, c):
    """``a * b + c`` with one rounding (``llvm.fma``)."""
    if not (a == b == c and isinstance(a, types.Float)):
        return None
    sig = a(a, a, a)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


# ---------------------------------------------------------------- float64
_TWO_OVER_PI = 0.63661977236758134308
# pi/2 = P1 + P2 + P3 (+ ~1e-49): each the rounded remainder of the ones before
_P1 = 1.5707963267948966
_P2 = 6.123233995736766e-17
_P3 = -1.4973849048591698e-33
_MAGIC = 6755399441055744.0  # 1.5 * 2**52: n + MAGIC holds n in its low mantissa bits
_SIGN = np.int64(-(2**63))

_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11


@jit_inline
def _reduce64(x):
    n = np.floor(x * _TWO_OVER_PI + 0.5)
    r = _fma(-n, _P1, x)
    r = _fma(-n, _P2, r)
    r = _fma(-n, _P3, r)
    q = f64_to_bits(n + _MAGIC)  # low two bits: n mod 4 (two's complement)
    return r, q


@jit_inline
def _poly64(r):
    z = r * r
    s = _S6
    s = s * z + _S5
    s = s * z + _S4
    s = s * z + _S3
    s = s * z + _S2
    s = s * z + _S1
    sin_r = r + r * z * s
    c = _C6
    c = c * z + _C5
    c = c * z + _C4
    c = c * z + _C3
    c = c * z + _C2
    c = c * z + _C1
    cos_r = 1.0 - (0.5 * z - z * z * c)
    return sin_r, cos_r


@jit_inline
def _flip64(v, q):
    # v * (-1)**(bit 1 of q), as a sign-bit XOR
    return bits_to_f64(f64_to_bits(v) ^ ((q & 2) << 62))


@jit_inline
def _select64(q, a, b):
    # a if q is odd else b, by bit masks (no branch, no phi node)
    mask = -(q & 1)
    return bits_to_f64((f64_to_bits(a) & mask) | (f64_to_bits(b) & ~mask))


def _cos64(x):
    r, q = _reduce64(x)
    sin_r, cos_r = _poly64(r)
    v = _select64(q, sin_r, cos_r)
    # cos: quadrants 0..3 -> cos r, -sin r, -cos r, sin r
    return _flip64(v, q + 1)


def _sin64(x):
    r, q = _reduce64(x)
    sin_r, cos_r = _poly64(r)
    v = _select64(q, cos_r, sin_r)
    # sin: quadrants 0..3 -> sin r, cos r, -sin r, -cos r
    return _flip64(v, q)


def _cossin64(x):
    r, q = _reduce64(x)
    sin_r, cos_r = _poly64(r)
    c = _select64(q, sin_r, cos_r)
    s = _select64(q, cos_r, sin_r)
    return _flip64(c, q + 1), _flip64(s, q)


# ---------------------------------------------------------------- float32
_TWO_OVER_PI_F = np.float32(_TWO_OVER_PI)
_P1_F = np.float32(1.5707963705062866)
_P2_F = np.float32(-4.371138828673793e-08)
_P3_F = np.float32(-1.7151245100058819e-15)
_MAGIC_F = np.float32(12582912.0)  # 1.5 * 2**23
_HALF_F = np.float32(0.5)
_ONE_F = np.float32(1.0)
_S1_F = np.float32(-1.6666654611e-1)
_S2_F = np.float32(8.3321608736e-3)
_S3_F = np.float32(-1.9515295891e-4)
_C1_F = np.float32(4.166664568298827e-2)
_C2_F = np.float32(-1.388731625493765e-3)
_C3_F = np.float32(2.443315711809948e-5)


@jit_inline
def _reduce32(x):
    n = np.floor(x * _TWO_OVER_PI_F + _HALF_F)
    r = _fma(-n, _P1_F, x)
    r = _fma(-n, _P2_F, r)
    r = _fma(-n, _P3_F, r)
    q = f32_to_bits(n + _MAGIC_F)
    return r, q


@jit_inline
def _poly32(r):
    z = r * r
    s = _S3_F
    s = s * z + _S2_F
    s = s * z + _S1_F
    sin_r = r + r * z * s
    c = _C3_F
    c = c * z + _C2_F
    c = c * z + _C1_F
    cos_r = _ONE_F - (_HALF_F * z - z * z * c)
    return sin_r, cos_r


@jit_inline
def _flip32(v, q):
    return bits_to_f32(f32_to_bits(v) ^ ((q & 2) << 30))


@jit_inline
def _select32(q, a, b):
    mask = -(q & 1)
    return bits_to_f32((f32_to_bits(a) & mask) | (f32_to_bits(b) & ~mask))


def _cos32(x):
    r, q = _reduce32(x)
    sin_r, cos_r = _poly32(r)
    v = _select32(q, sin_r, cos_r)
    return _flip32(v, q + 1)


def _sin32(x):
    r, q = _reduce32(x)
    sin_r, cos_r = _poly32(r)
    v = _select32(q, cos_r, sin_r)
    return _flip32(v, q)


def _cossin32(x):
    r, q = _reduce32(x)
    sin_r, cos_r = _poly32(r)
    c = _select32(q, sin_r, cos_r)
    s = _select32(q, cos_r, sin_r)
    return _flip32(c, q + 1), _flip32(s, q)


# ---------------------------------------------------------------- public helpers
def fcos(x):
    """cos(x) for a float32 or float64 scalar, ``|x| <= LIMIT`` (pure Python: ``math.cos``)."""
    return type(x)(math.cos(x))


def fsin(x):
    """sin(x) for a float32 or float64 scalar, ``|x| <= LIMIT`` (pure Python: ``math.sin``)."""
    return type(x)(math.sin(x))


def fcossin(x):
    """(cos(x), sin(x)) for a float32 or float64 scalar, ``|x| <= LIMIT``."""
    return type(x)(math.cos(x)), type(x)(math.sin(x))


def limit(x):
    """The largest ``|x|`` for which the vectorised functions are accurate, in x's type."""
    return type(x)(LIMIT_F32 if isinstance(x, np.float32) else LIMIT_F64)


def _pick(x, f64, f32):
    if x == types.float64:
        return f64
    if x == types.float32:
        return f32
    return None


@jit_overload(fcos, inline="always")
def _fcos_overload(x):
    return _pick(x, _cos64, _cos32)


@jit_overload(fsin, inline="always")
def _fsin_overload(x):
    return _pick(x, _sin64, _sin32)


@jit_overload(fcossin, inline="always")
def _fcossin_overload(x):
    return _pick(x, _cossin64, _cossin32)


def _limit64(x):
    return LIMIT_F64


_LIMIT_F32 = np.float32(LIMIT_F32)


def _limit32(x):
    return _LIMIT_F32


@jit_overload(limit, inline="always")
def _limit_overload(x):
    return _pick(x, _limit64, _limit32)
