"""A vectorisable ``exp`` and ``log`` for numba kernels.

numba's ``math.exp`` is a scalar libm call (numba's SVML path is not available from
PyPI), about a tenth of what the hardware can do.  ``fexp`` is branch-free: Cody-Waite
range reduction ``x = n ln2 + r`` with ``|r| <= ln2/2``, a Taylor polynomial (degree 13
for float64, 7 for float32; both below one ulp of error on [-ln2/2, ln2/2]), and the
scaling ``2**n`` built by writing the exponent bits through an ``@intrinsic`` bitcast.
``2**n`` is applied as two factors ``2**(n//2) * 2**(n - n//2)`` so that results in the
subnormal range underflow gradually and results past the largest double overflow to
``inf``, exactly as ``np.exp``.  All operations have AVX2/AVX-512 forms, so LLVM
vectorises loops that call it.

Accuracy (measured over the whole finite range): float64 within 1.0 ulp of ``np.exp``,
float32 within 0.7 ulp of the correctly rounded value.  ``fexp(0.0) == 1.0`` exactly.
Inputs must not be NaN (prior validation is assumed).

``flog`` is the natural logarithm in the same style (the thin-plate kernel of local
interpolation needs one that vectorises): ``x = 2**k m`` with ``m`` in ``[sqrt(1/2),
sqrt(2))`` from one integer subtraction of the bits of ``sqrt(1/2)`` (a mantissa of at
least ``sqrt(2)``'s carries into the exponent field), subnormals first read as integers
(their bits are the normal number ``x 2**1074``, ``x 2**149`` in float32); then
``log(m) = f - f^2/2 + s (f^2/2 + R(s^2))``, ``f = m - 1``, ``s = f / (2 + f)``, with
fdlibm's minimax polynomial ``R`` (degree 14 in ``s`` for float64, 8 for float32), and
``k ln2`` added in two parts.  The bit operations are one ``@intrinsic`` (``_split``)
because numba widens int32 arithmetic to int64, which halves the float32 vectors.
Special values are selected at the end, after one unsigned comparison of the bits
(``0 < x < inf``): ``flog(0) = -inf``, ``flog(inf) = inf``, ``flog(x < 0) = nan``,
``flog(nan) = nan``.  ``flog_pos`` is the same without that selection, for ``0 < x <
inf`` (0 and inf give finite numbers).  Accuracy: within 1 ulp of ``np.log`` in float64
and float32 over the whole range (subnormals included; see the tests).

Why this form: the old loop was already vectorised with no scalar path, and its speed was
the count of its vector instructions (the multiplies and fused multiply-adds above all),
not the division; the reduction and the special-value chains were a third of them.  The
new form computes the same bits as before for every input, with fewer instructions (see
docs/performance.md, 'Elementary functions').  Not taken: a polynomial in ``m - 1``
without the division needs degree ~20 for float64 on this interval (more multiply-adds
than the division and ``R`` together); ``log(m) = f - s (f - R)`` saves two multiplies
but reaches 0.96 ulp; a table-driven reduction needs a gather per table value; an
AVX-512-only log (exponent and mantissa instructions, a permuted 16-entry table) would
need a second implementation for other machines.
"""

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._decorators import jit_overload


@intrinsic
def bits_to_f64(typingctx, x):
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


@intrinsic
def f64_to_bits(typingctx, x):
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


@intrinsic
def bits_to_f32(typingctx, x):
    sig = types.float32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return sig, codegen


@intrinsic
def f32_to_bits(typingctx, x):
    sig = types.int32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return sig, codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
# adding 1.5 * 2**52 to an integral double puts the integer in the low mantissa bits;
# the extra 1023 is the exponent bias, so (bits << 52) is the double 2**n.
_MAGIC = 6755399441055744.0 + 1023.0

_LOG2E_F = np.float32(_LOG2E)
_LN2_HI_F = np.float32(0.693359375)
_LN2_LO_F = np.float32(-2.12194440e-4)
_MAGIC_F = np.float32(12582912.0 + 127.0)
_LO_F = np.float32(-104.0)
_HI_F = np.float32(89.0)
_HALF_F = np.float32(0.5)
_ONE_F = np.float32(1.0)
_C2_F = np.float32(1.0 / 6.0)
_C3_F = np.float32(1.0 / 24.0)
_C4_F = np.float32(1.0 / 120.0)
_C5_F = np.float32(1.0 / 720.0)
_C6_F = np.float32(1.0 / 5040.0)


def _exp64(x):
    x = min(max(x, -746.0), 710.0)
    n = np.floor(x * _LOG2E + 0.5)
    r = x - n * _LN2_HI
    r = r - n * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    n1 = np.floor(n * 0.5)
    n2 = n - n1
    s1 = bits_to_f64(f64_to_bits(n1 + _MAGIC) << 52)
    s2 = bits_to_f64(f64_to_bits(n2 + _MAGIC) << 52)
    return p * s1 * s2


def _exp32(x):
    x = min(max(x, _LO_F), _HI_F)
    n = np.floor(x * _LOG2E_F + _HALF_F)
    r = x - n * _LN2_HI_F
    r = r - n * _LN2_LO_F
    p = _C6_F
    p = p * r + _C5_F
    p = p * r + _C4_F
    p = p * r + _C3_F
    p = p * r + _C2_F
    p = p * r + _HALF_F
    p = p * r + _ONE_F
    p = p * r + _ONE_F
    n1 = np.floor(n * _HALF_F)
    n2 = n - n1
    s1 = bits_to_f32(f32_to_bits(n1 + _MAGIC_F) << 23)
    s2 = bits_to_f32(f32_to_bits(n2 + _MAGIC_F) << 23)
    return p * s1 * s2


_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_MIN_BITS = 0x0010000000000000  # the smallest normal double
_INF_BITS = 0x7FF0000000000000

_LG1_F = np.float32(0.66666662693)
_LG2_F = np.float32(0.40000972152)
_LG3_F = np.float32(0.28498786688)
_LG4_F = np.float32(0.24279078841)
_LN2_HI_LF = np.float32(6.9313812256e-01)
_LN2_LO_LF = np.float32(9.0580006145e-06)
_TWO_F = np.float32(2.0)
_ZERO_F = np.float32(0.0)
_MIN_BITS_F = 0x00800000
_INF_BITS_F = 0x7F800000
_SUB_SHIFT_F = np.float32(149.0)


@intrinsic
def _split(typingctx, y):
    # (k, m) with y = 2**k m, m in [sqrt(1/2), sqrt(2)), for a positive normal float32 or
    # float64 y: subtracting the bits of sqrt(1/2) carries into the exponent field exactly
    # when the mantissa is at least sqrt(2)'s.  In IR because numba widens int32 arithmetic
    # to int64, which halves the float32 vectors.
    if y not in (types.float32, types.float64):
        return None
    wide = y == types.float64
    sig = types.UniTuple(y, 2)(y)

    def codegen(context, builder, signature, args):
        ity = ir.IntType(64 if wide else 32)
        fty = ir.DoubleType() if wide else ir.FloatType()
        nm = 52 if wide else 23
        bits = builder.bitcast(args[0], ity)
        tmp = builder.sub(bits, ir.Constant(ity, 0x3FE6A09E667F3BCD if wide else 0x3F3504F3))
        k = builder.sitofp(builder.ashr(tmp, ir.Constant(ity, nm)), fty)
        m = builder.bitcast(builder.sub(bits, builder.and_(tmp, ir.Constant(ity, -1 << nm))), fty)
        return context.make_tuple(builder, signature.return_type, (k, m))

    return sig, codegen


def _log64_pos(x):
    b = f64_to_bits(x)
    # a subnormal's bits read as an integer are the normal number x 2**1074
    sub = np.uint64(b) < np.uint64(_MIN_BITS)
    k, m = _split(np.float64(b) if sub else x)
    k = k - 1074.0 if sub else k
    f = m - 1.0
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    return k * _LN2_HI - ((hfsq - (s * (hfsq + t1 + t2) + k * _LN2_LO)) - f)


def _log64(x):
    r = flog_pos(x)
    # 0 < x < inf in one unsigned comparison of the bits (false for nan)
    ok = np.uint64(f64_to_bits(x) - 1) < np.uint64(_INF_BITS - 1)
    return r if ok else (-np.inf if x == 0.0 else (np.nan if x < 0.0 else x))


def _log32_pos(x):
    b = f32_to_bits(x)
    sub = np.uint32(b) < np.uint32(_MIN_BITS_F)
    k, m = _split(np.float32(b) if sub else x)
    k = k - _SUB_SHIFT_F if sub else k
    f = m - _ONE_F
    hfsq = _HALF_F * f * f
    s = f / (_TWO_F + f)
    z = s * s
    w = z * z
    t1 = w * (_LG2_F + w * _LG4_F)
    t2 = z * (_LG1_F + w * _LG3_F)
    return k * _LN2_HI_LF - ((hfsq - (s * (hfsq + t1 + t2) + k * _LN2_LO_LF)) - f)


def _log32(x):
    r = flog_pos(x)
    ok = np.uint32(f32_to_bits(x) - 1) < np.uint32(_INF_BITS_F - 1)
    return r if ok else (np.float32(-np.inf) if x == _ZERO_F else (np.float32(np.nan) if x < _ZERO_F else x))


def flog_pos(x):
    """log(x) for a float32 or float64 scalar ``0 < x < inf``, subnormals included (0 and
    inf give finite numbers, and negatives and nan unspecified ones); pure-Python
    fallback: ``math.log``."""
    return type(x)(math.log(x))


@jit_overload(flog_pos, inline="always")
def _flog_pos_overload(x):
    if x == types.float64:
        return _log64_pos
    if x == types.float32:
        return _log32_pos
    return None


def flog(x):
    """log(x) for a float32 or float64 scalar (pure-Python fallback: ``math.log``)."""
    if x > 0:
        return type(x)(math.log(x))
    return type(x)(-math.inf if x == 0 else math.nan)


@jit_overload(flog, inline="always")
def _flog_overload(x):
    if x == types.float64:
        return _log64
    if x == types.float32:
        return _log32
    return None


def fexp(x):
    """exp(x) for a float32 or float64 scalar (pure-Python fallback: ``math.exp``)."""
    try:
        return type(x)(math.exp(x))
    except OverflowError:
        return type(x)(math.inf)


@jit_overload(fexp, inline="always")
def _fexp_overload(x):
    if x == types.float64:
        return _exp64
    if x == types.float32:
        return _exp32
    return None
