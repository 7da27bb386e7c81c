"""Kernel derivatives, and the fused pass that gives a kernel expansion's values and
gradient together (``predict(X, return_grad=True)`` of the models).

Element functions.  Every kernel with a derivative has an element function
``f(phi, t, c, degree) -> (phi(t), dphi/dt)`` of the same argument ``t`` that
:func:`fastrbf._jit.kernels.apply_kernel` uses: ``t = gamma r**2`` for radial kernels,
``t = gamma x.y`` for dot-product ones.  The gradient in ``x`` is then
``dphi/dt * 2 gamma (x - y)`` (radial) or ``dphi/dt * gamma y`` (dot product).  The value
is computed with the arithmetic of ``apply_kernel`` (so it agrees with the plain
prediction to the last bits in practice; the tests allow a few ulp per term).

Where ``dphi/dt`` is infinite at ``t = 0`` (laplacian/matern12, linear, truncated: a
cone at the centre; thin_plate_spline: ``log t``), the element function returns 0
there.  The gradient at a query that coincides with a centre then gets no term from
that centre: the symmetric subgradient of a cone, and the true limit (0) for
thin_plate_spline, whose ``r log r`` gradient vanishes.  Elsewhere the derivatives are
finite and continuous (cubic, quintic, the Materns and Wendland's functions: ``dphi/dt``
is 0 at the support edge of truncated and Wendland's functions and beyond it).

Dispatch.  :func:`deriv_impl` is the one place that maps a kernel function's numba type
(a :class:`~fastrbf._jit.kernels.PhiType`) to its element function (None: no
derivative); :func:`value_and_deriv` is resolved through it at compile time, so a
compiled kernel holds the one derivative it uses and a call compiles only that one.
Kernel functions defined elsewhere than the built-in table are to be hooked in
:func:`deriv_impl`.

The fused pass :func:`matvec_grad` has the structure of
:func:`fastrbf._jit.pairwise.gram_matvec`: a task owns ``RB`` query rows, the columns
are taken in chunks of ``JB`` that stay in cache, and every sum is a float64 partial
per chunk added in chunk order, so results are bitwise the same for any thread count.
The gradient sums ``sum_j b_j (x_a - y_ja)`` use the differences directly (not
``x_a sum_j b_j - sum_j b_j y_ja``, which cancels for data far from the origin).

:func:`shifted_sums_grad` is :func:`fastrbf._jit.neighbors.brute.shifted_sums` (the
Nadaraya-Watson sums relative to the nearest training point, same helpers, same
arithmetic for the values) with the sums that the quotient rule needs besides.
"""

import math

import numpy as np

from ._decorators import jit_overload, jit_reduce, pjit
from .kernels import (
    CUBIC,
    GAUSSIAN,
    INVERSE_MULTIQUADRIC,
    INVERSE_QUADRATIC,
    LAPLACIAN,
    LINEAR,
    MATERN32,
    MATERN52,
    MULTIQUADRIC,
    POLYNOMIAL,
    QUINTIC,
    RATIONAL_QUADRATIC,
    TANH,
    THIN_PLATE_SPLINE,
    TRUNCATED,
    WENDLAND_C2,
    WENDLAND_C4,
    PhiType,
    user_deriv,
)
from .llvm.exp import fexp
from .neighbors.brute import kernel_weights, min_all, nearer, sum_all
from .tiles import JB, chunk_row, dot64

# Element functions: (phi, t, c, degree) -> (phi(t), dphi/dt); c = [1, 1/2, coef0, 0] in
# the dtype of the tile (typed constants keep float32 arithmetic in float32).


def _d_gaussian(phi, t, c, degree):
    v = fexp(-t)
    return v, -v


def _d_laplacian(phi, t, c, degree):
    # exp(-r), r = sqrt(t): dphi/dt = -exp(-r) / (2 r); 0 at r = 0 (subgradient)
    zero = c[3]
    r = np.sqrt(t)
    v = fexp(-r)
    return v, (-(c[1] * v) / r if r > zero else zero)


def _d_multiquadric(phi, t, c, degree):
    w = np.sqrt(c[0] + t)
    return -w, -c[1] / w


def _d_inverse_multiquadric(phi, t, c, degree):
    one = c[0]
    u = one + t
    v = one / np.sqrt(u)
    return v, -(c[1] * v) / u


def _d_inverse_quadratic(phi, t, c, degree):
    one = c[0]
    v = one / (one + t)
    return v, -(v * v)


def _d_thin_plate_spline(phi, t, c, degree):
    # t log(t) / 2: dphi/dt = (log t + 1) / 2 -> -inf at 0, where the gradient's limit is 0
    half = c[1]
    zero = c[3]
    if t > zero:
        lg = math.log(t)
        return half * t * lg, half * (lg + c[0])
    return zero, zero


def _d_cubic(phi, t, c, degree):
    r = np.sqrt(t)
    return t * r, (c[0] + c[1]) * r


def _d_quintic(phi, t, c, degree):
    r = np.sqrt(t)
    one = c[0]
    return -(t * t * r), -((one + one + c[1]) * t * r)


def _d_linear(phi, t, c, degree):
    zero = c[3]
    r = np.sqrt(t)
    return -r, (-c[1] / r if r > zero else zero)


def _d_truncated(phi, t, c, degree):
    # (1 - r)^2 for r <= 1: dphi/dt = -(1 - r) / r; 0 at r = 0 and beyond the support
    one = c[0]
    zero = c[3]
    r = np.sqrt(t)
    u = one - r
    if r <= one:
        return u * u, (-u / r if r > zero else zero)
    return zero, zero


def _d_polynomial(phi, t, c, degree):
    # (coef0 + t)^degree, the power by repeated multiplication as apply_kernel does
    b = c[2] + t
    p = c[0]
    for _ in range(degree - 1):
        p = p * b
    return p * b, p * (c[0] * degree)


def _d_tanh(phi, t, c, degree):
    v = math.tanh(t + c[2])
    return v, c[0] - v * v


def _d_matern32(phi, t, c, degree):
    # (1 + u) exp(-u), u = sqrt(3 t): dphi/dt = -3/2 exp(-u)
    one = c[0]
    zero = c[3]
    three = one + one + one
    u = np.sqrt(three * t)
    e = fexp(-u)
    return ((one + u) * e if e > zero else zero), -((one + c[1]) * e)


def _d_matern52(phi, t, c, degree):
    # (1 + u + u^2 / 3) exp(-u), u = sqrt(5 t): dphi/dt = -5/6 (1 + u) exp(-u)
    one = c[0]
    zero = c[3]
    three = one + one + one
    five = three + one + one
    u2 = five * t
    u = np.sqrt(u2)
    e = fexp(-u)
    return ((one + u + u2 / three) * e if e > zero else zero), -((five / (three + three)) * (one + u) * e)


def _d_wendland_c2(phi, t, c, degree):
    # (1 - u)^4 (4 u + 1), u = sqrt(t) < 1: dphi/dt = -10 (1 - u)^3
    one = c[0]
    zero = c[3]
    four = one + one + one + one
    u = np.sqrt(t)
    w = one - u
    w2 = w * w
    if u < one:
        return w2 * w2 * (four * u + one), -((four + four + one + one) * w2 * w)
    return zero, zero


def _d_wendland_c4(phi, t, c, degree):
    # (1 - u)^6 (35 u^2 + 18 u + 3) / 3, u = sqrt(t) < 1: dphi/dt = -28/3 (1 - u)^5 (5 u + 1)
    one = c[0]
    zero = c[3]
    three = one + one + one
    six = three + three
    c35 = six * six - one
    u = np.sqrt(t)
    w = one - u
    w3 = w * w * w
    if u < one:
        return (w3 * w3 * ((c35 / three) * (u * u) + six * u + one),
                -(((c35 - six - one) / three) * (w3 * w * w) * ((six - one) * u + one)))
    return zero, zero


def _d_rational_quadratic(phi, t, c, degree):
    # (1 + t / (2 a))^-a: dphi/dt = -(1/2) (1 + t / (2 a))^(-a - 1), a = coef0
    one = c[0]
    a = c[2]
    u = one + t * (one / (a + a))
    v = u ** (-a)
    return v, -(c[1] * v) / u


_DERIVS = {
    GAUSSIAN: _d_gaussian,
    LAPLACIAN: _d_laplacian,
    MULTIQUADRIC: _d_multiquadric,
    INVERSE_MULTIQUADRIC: _d_inverse_multiquadric,
    INVERSE_QUADRATIC: _d_inverse_quadratic,
    THIN_PLATE_SPLINE: _d_thin_plate_spline,
    CUBIC: _d_cubic,
    QUINTIC: _d_quintic,
    LINEAR: _d_linear,
    TRUNCATED: _d_truncated,
    POLYNOMIAL: _d_polynomial,
    TANH: _d_tanh,
    MATERN32: _d_matern32,
    MATERN52: _d_matern52,
    WENDLAND_C2: _d_wendland_c2,
    WENDLAND_C4: _d_wendland_c4,
    RATIONAL_QUADRATIC: _d_rational_quadratic,
}


def deriv_impl(phi_type):
    """The element function ``(phi, t, c, degree) -> (phi(t), dphi/dt)`` of the kernel
    function of numba type ``phi_type``, or None if it has none (plain distances, or a
    type that is not a kernel function)."""
    if isinstance(phi_type, PhiType):
        if isinstance(phi_type.code, str):  # a user-defined kernel
            return user_deriv(phi_type.code)
        return _DERIVS.get(phi_type.code)
    return None


def has_deriv(phi):
    """Whether the kernel function ``phi`` (a :class:`~fastrbf._jit.kernels.Phi`) has an
    element function (see :func:`deriv_impl`)."""
    return deriv_impl(PhiType(phi.code)) is not None


def value_and_deriv(phi, t, c, degree):
    """``(phi(t), dphi/dt)`` for one element, through :func:`deriv_impl` (resolved at
    compile time inside numba kernels; this body runs only with the JIT disabled)."""
    return deriv_impl(PhiType(phi.code))(phi, t, c, degree)


@jit_overload(value_and_deriv, inline="always")
def _value_and_deriv_overload(phi, t, c, degree):
    return deriv_impl(phi)


@jit_reduce
def diff_dot64(b, x, y):
    """sum_j b[j] (x - y[j]) with a float64 accumulator."""
    s = 0.0
    for j in range(b.shape[0]):
        s += b[j] * (x - y[j])
    return s


RB = 16  # query rows per task, as gram_matvec


@pjit(tasks=lambda X, *_: (X.shape[0] + RB - 1) // RB,
      work=lambda X, Yt, Vt, *_: X.shape[0] * Yt.shape[1] * ((Yt.shape[0] + 2) * (Vt.shape[0] + 1) + 8))
def matvec_grad(lo, hi, X, Yt, Vt, dot, phi, g, c, degree, out, gout):
    # IN: tasks lo:hi, X (n, d), Yt (d, m), Vt (k, m), dot, phi, g (m,), c (4,), degree
    # OUT: out (n, k) = K(X, Y) @ V, gout (n, k, d): gout[i, q] = grad_x of out[i, q] at
    # X[i].  Each task owns RB rows and private tiles; sums: one float64 partial per
    # column chunk, added in chunk order.
    n = X.shape[0]
    d = X.shape[1]
    m = Yt.shape[1]
    k = Vt.shape[0]
    L0 = min(m, JB)
    s = np.empty(L0, dtype=out.dtype)
    e = np.empty(L0, dtype=out.dtype)
    b = np.empty(L0, dtype=out.dtype)
    for blk in range(lo, hi):
        i0 = blk * RB
        i1 = min(n, i0 + RB)
        acc = np.zeros((i1 - i0, k), dtype=np.float64)
        gacc = np.zeros((i1 - i0, k, d), dtype=np.float64)
        for j0 in range(0, m, JB):
            j1 = min(m, j0 + JB)
            L = j1 - j0
            ss = s[:L]
            ee = e[:L]
            bb = b[:L]
            gg = g[j0:j1]
            for i in range(i0, i1):
                chunk_row(X, i, Yt, j0, j1, dot, ss)
                for j in range(L):
                    v, dv = value_and_deriv(phi, gg[j] * ss[j], c, degree)
                    ss[j] = v
                    ee[j] = dv * gg[j]
                for q in range(k):
                    vq = Vt[q, j0:j1]
                    acc[i - i0, q] += dot64(ss, vq)
                    for j in range(L):
                        bb[j] = ee[j] * vq[j]
                    for a in range(d):
                        if dot:
                            gacc[i - i0, q, a] += dot64(bb, Yt[a, j0:j1])
                        else:
                            gacc[i - i0, q, a] += diff_dot64(bb, X[i, a], Yt[a, j0:j1])
        two = 1.0 if dot else 2.0
        for i in range(i0, i1):
            for q in range(k):
                out[i, q] = acc[i - i0, q]
                for a in range(d):
                    gout[i, q, a] = two * gacc[i - i0, q, a]


@pjit(tasks=lambda Xq, *_: Xq.shape[0],
      work=lambda Xq, Xt, Tt, Ut, *_: Xq.shape[0] * Xt.shape[1] * ((Xt.shape[0] + 1) * (Ut.shape[0] + 2)
                                                                  + 2 * Tt.shape[0] + 16))
def shifted_sums_grad(lo, hi, Xq, Xt, Tt, Ut, g, s1, s2, laplacian, num, den, dmin, gnum, gden):
    # IN: rows lo:hi, Xq (m, d), Xt (d, n), Tt (k, n) targets as rows, Ut (k, n) the
    #     targets for the gradient sums (centred by the caller), g, s1, s2, laplacian as
    #     in shifted_sums
    # OUT: num, den, dmin exactly as shifted_sums; with w_j the same relative weights and
    #      h_j = w_j (gaussian) or w_j / r_j (laplacian; 0 where r_j = 0):
    #      gnum (m, k, d) = sum_j h_j U[j, q] (x - x_j)_a, gden (m, d) = sum_j h_j (x - x_j)_a
    n = Xt.shape[1]
    d = Xt.shape[0]
    k = Tt.shape[0]
    for i in range(lo, hi):
        o = np.empty(JB, dtype=Xt.dtype)
        e = np.empty(JB, dtype=Xt.dtype)
        h = np.empty(JB, dtype=Xt.dtype)
        bq = np.empty(JB, dtype=np.float64)
        cur = np.inf
        cur_r = np.inf
        W = 0.0
        S = np.zeros(k, dtype=np.float64)
        GS = np.zeros((k, d), dtype=np.float64)
        G0 = np.zeros(d, dtype=np.float64)
        for j0 in range(0, n, JB):
            j1 = min(n, j0 + JB)
            L = j1 - j0
            oo = o[:L]
            ee = e[:L]
            hh = h[:L]
            bb = bq[:L]
            chunk_row(Xq, i, Xt, j0, j1, np.bool_(False), oo)
            cur, cur_r, W, sc = nearer(min_all(oo), cur, cur_r, W, g, s1, s2, laplacian)
            if sc != 1.0:
                for q in range(k):
                    S[q] *= sc
                    for a in range(d):
                        GS[q, a] *= sc
                for a in range(d):
                    G0[a] *= sc
            kernel_weights(oo, cur, cur_r, g, s1, s2, laplacian, ee)
            W += sum_all(ee)
            for q in range(k):
                S[q] += dot64(ee, Tt[q, j0:j1])
            if laplacian:
                for j in range(L):
                    r = np.sqrt(oo[j])
                    if r > 0:
                        hh[j] = ee[j] / r
                    else:
                        hh[j] = 0
            else:
                for j in range(L):
                    hh[j] = ee[j]
            for a in range(d):
                G0[a] += diff_dot64(hh, Xq[i, a], Xt[a, j0:j1])
            for q in range(k):
                uq = Ut[q, j0:j1]
                for j in range(L):
                    bb[j] = hh[j] * uq[j]
                for a in range(d):
                    GS[q, a] += diff_dot64(bb, Xq[i, a], Xt[a, j0:j1])
        den[i] = W
        dmin[i] = cur
        for q in range(k):
            num[i, q] = S[q]
            for a in range(d):
                gnum[i, q, a] = GS[q, a]
        for a in range(d):
            gden[i, a] = G0[a]
