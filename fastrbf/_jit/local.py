"""Local RBF interpolation (SciPy's ``RBFInterpolator(neighbors=k)``): for each distinct
neighbourhood of k data points, the local system ``[[K + diag(alpha), P], [P^T, 0]]``
built, solved and evaluated at the query points whose neighbourhood it is.

Two solvers, chosen by the caller:

- :func:`local_solve`: LU with partial pivoting, as SciPy's ``dgesv``, one task per
  neighbourhood.  For every kernel, and the only one where the kernel is not known to be
  conditionally positive definite of an order the tail covers.
- :func:`local_solve_lanes`: the null-space method on ``LANES`` neighbourhoods at once.
  The tail ``P`` (k x q) is factored by LU with partial pivoting (as ``dgetf2``, the
  constant monomial last: its pivot would be an arbitrary point), and the q pivot points
  are put first: ``P1 = L1 U``, ``E^T = P2 P1^-1 = L2 L1^-1``.  ``Z = [-E; I]`` spans the
  null space of ``P^T``, and ``Z^T A Z = A22 - V E - E^T V^T`` with ``V = A21 - E^T A11 / 2``:
  a symmetric rank-2q correction of a block of ``A``, no two-sided transformation (about
  a third of the multiply-adds of the q Householder reflectors, and the partial pivoting
  keeps ``|L2| <= 1``).  Then the Cholesky factor of ``Z^T A Z`` (left-looking, two
  columns and four rows at a time: :func:`~.lanes.lane_dot4x2_sub`), ``z``, ``w = Z z`` and
  ``P1 c = y1 - (A11 / 2) w1 - V^T z``.
  The arrays are struct-of-arrays, ``A[i, j, lane]``: every loop's innermost index is the
  lane, so each scalar operation of the factorisation is one vector instruction over
  8 neighbourhoods, reductions included (a dot product accumulates lane-wise, which
  LLVM vectorises without re-association).  A lane whose tail has a pivot below
  ``TAIL_TOL`` or whose Cholesky pivot falls below ``PIVOT_TOL`` times its diagonal entry
  is marked, and the caller solves it again by :func:`local_solve`: the
  singular-neighbourhood verdict is the LU's, as before (and the LU kernel compiles only
  when a call needs it).  A task owns a fixed group of ``LANES`` consecutive
  neighbourhoods (the last group padded with copies of its first, whose results are
  discarded), and each lane's arithmetic does not depend on the other lanes, so the bits
  do not depend on the thread count.

Why lanes, and why intrinsics: the factorisation of one 54 x 54 system is too small to
vectorise well along a row, and numba compiles a ``for lane in range(8)`` loop to
scalar code (it runs LLVM without the SLP vectoriser, and the loop vectoriser never
sees a loop of 8 that was fully unrolled first); a runtime lane count vectorises but
pays alias checks per loop.  The lane operations (:mod:`~.lanes`) therefore emit ``<8 x double>`` loads, fused
multiply-adds and stores themselves.  The Cholesky factorisation is left-looking (each
entry a lane-wise dot product, accumulated in registers); one accumulator chain per
entry is bound by the multiply-add latency and two loads per multiply-add, so entries
are computed in tiles of four rows by two columns (eight independent chains, six loads
per eight multiply-adds).

Evaluation is lane-wise too, in rounds: round r evaluates the r-th query of every lane
(``k(x) . w + p(x) . c`` from the factor's weights, lanes without an r-th query masked),
so most neighbourhoods (one query each) cost one round per 8 and no copy of a lane's
data.  A neighbourhood with far more queries than the others of its group is evaluated
a round at a time (about 8 lanes' work per query: queries clustered far more densely
than the data are slower to evaluate than one at a time).  One call site and no copy
loop, for compile time (see docs/performance.md, 'Local interpolation').  The small loops
over the lanes in it are bounded by ``tgt.shape[0]``, a number LLVM does not know,
rather than the constant.

The kernel is applied to each row of the matrix on a multiple of four vectors (the
entries past the diagonal are zeros, never read): a row's remainder otherwise runs the
scalar epilogue of the vectorised loop.

The values agree with those of two-sided Householder to about 3e-15 relative.  Ordering
the neighbourhoods along a Z-order curve (consecutive ones sharing their data) is left to
the caller: it saves less than the sort costs on the calling thread.  Where the time of a
solve goes, how far it is from the arithmetic floor, and the variants tried and not kept
(the correction folded into the factor's dot products, the tail's LU in place in the
lane arrays): docs/performance.md, 'Local interpolation'.

The log-kernel (thin-plate spline) is applied with :func:`~.exp.flog_pos`, which
vectorises (0.8 ns against 5 ns per entry for ``math.log`` in
:func:`~.kernels.apply_kernel`; ``s = 0`` is selected, and ``s = inf`` still gives
``phi = inf``: the same bits as :func:`~.exp.flog`); the other kernels use
:func:`~.kernels.apply_kernel`.  The global ``gram`` keeps ``math.log``, so its
thin-plate bits are unchanged.  Squared distances sum the features in order.
Everything is float64 inside.
"""

import math

import numpy as np

from ._decorators import jit_inline, jit_overload, pjit
from .kernels import THIN_PLATE_SPLINE, PhiType, apply_kernel
from .llvm.exp import flog_pos
from .llvm.lanes import LANES, lane_dot4_sub, lane_dot4x2_sub, lane_dot_sub, lane_fnma, lane_mul, lane_sqdist

#: a tail whose LU (partial pivoting) has a pivot below this (its columns are monomials of
#: points scaled to [-1, 1]) goes to the LU path
TAIL_TOL = 1e-8
#: a Cholesky pivot below this times its diagonal entry sends the lane to the LU path
PIVOT_TOL = 1e-10


def local_kernel(phi, o, g, c, degree):
    """o[j] <- phi(o[j]), with the vectorised log for the thin-plate spline."""
    apply_kernel(phi, o, g, c, degree)


def _thin_plate(phi, o, g, c, degree):
    for j in range(o.shape[0]):  # the log computed everywhere, then selected: no branch, so it vectorises
        s = g[j] * o[j]  # >= 0, or +inf, whose log is finite here: phi(inf) = inf all the same
        v = 0.5 * s * flog_pos(s)
        o[j] = v if s > 0.0 else 0.0


def _other(phi, o, g, c, degree):
    apply_kernel(phi, o, g, c, degree)


@jit_overload(local_kernel)
def _local_kernel_overload(phi, o, g, c, degree):
    if isinstance(phi, PhiType):
        return _thin_plate if phi.code == THIN_PLATE_SPLINE else _other
    return None


@jit_inline
def monomials(x, shift, scale, powers, out):
    # out[p] = prod_j ((x_j - shift_j) / scale_j) ** powers[p, j]
    d = x.shape[0]
    for p in range(powers.shape[0]):
        out[p] = 1.0
    for j in range(d):
        t = (x[j] - shift[j]) / scale[j]
        for p in range(powers.shape[0]):
            v = out[p]
            for _ in range(powers[p, j]):
                v *= t
            out[p] = v


@jit_inline
def _shift_scale(yl, shift, scale):
    # the centre and half-width of the neighbourhood's bounding box, per feature (SciPy's)
    k, d = yl.shape
    for j in range(d):
        mn = yl[0, j]
        mx = yl[0, j]
        for a in range(1, k):
            mn = min(mn, yl[a, j])
            mx = max(mx, yl[a, j])
        shift[j] = (mx + mn) / 2
        sc = (mx - mn) / 2
        scale[j] = sc if sc != 0.0 else 1.0


@jit_inline
def _evaluate(u, starts, order, Xq, yl, shift, scale, powers, phi, g, c, degree, W, kv, pv, out):
    # the interpolant of neighbourhood u (data yl (k, d), weights W (k + q, t)) at its queries
    k, d = yl.shape
    q = powers.shape[0]
    t = W.shape[1]
    for i0 in range(starts[u], starts[u + 1]):
        i = order[i0]
        for a in range(k):
            s = 0.0
            for j in range(d):
                e = Xq[i, j] - yl[a, j]
                s += e * e
            kv[a] = s
        local_kernel(phi, kv, g, c, degree)
        monomials(Xq[i], shift, scale, powers, pv)
        for r in range(t):
            acc = 0.0
            for a in range(k):
                acc += kv[a] * W[a, r]
            for p in range(q):
                acc += pv[p] * W[k + p, r]
            out[i, r] = acc


@jit_inline
def pivot_row(A, col, n):
    # partial pivoting's choice in column col: the row of col:n with the largest
    # magnitude there (the first of equal ones) and that magnitude
    piv = col
    big = abs(A[col, col])
    for r in range(col + 1, n):
        if abs(A[r, col]) > big:
            big = abs(A[r, col])
            piv = r
    return piv, big


@jit_inline
def lu_one(u, starts, order, nbr, X, Y, alpha, Xq, powers, phi, g, c, degree, A, B, yl, shift, scale, kv, pv, out):
    """Build, solve by LU with partial pivoting (as ``dgesv``) and evaluate the local system
    of neighbourhood ``u`` with the work arrays ``A (k + q, k + q)``, ``B (k + q, t)``,
    ``yl (k, d)``, ``shift, scale (d,)``, ``kv (k,)``, ``pv (q,)``; False where it is
    singular (a zero pivot; ``out`` untouched)."""
    k = nbr.shape[1]
    q = powers.shape[0]
    d = X.shape[1]
    t = Y.shape[1]
    N = k + q
    for a in range(k):
        for j in range(d):
            yl[a, j] = X[nbr[u, a], j]
    _shift_scale(yl, shift, scale)
    for a in range(k):  # the upper triangle, mirrored
        for b in range(a, k):
            s = 0.0
            for j in range(d):
                e = yl[a, j] - yl[b, j]
                s += e * e
            kv[b - a] = s
        local_kernel(phi, kv[:k - a], g[a:], c, degree)
        for b in range(a, k):
            A[a, b] = kv[b - a]
            A[b, a] = kv[b - a]
        A[a, a] += alpha[nbr[u, a]]
        monomials(yl[a], shift, scale, powers, pv)
        for p in range(q):
            A[a, k + p] = pv[p]
            A[k + p, a] = pv[p]
        for r in range(t):
            B[a, r] = Y[nbr[u, a], r]
    for p in range(q):
        for p2 in range(q):
            A[k + p, k + p2] = 0.0
        for r in range(t):
            B[k + p, r] = 0.0
    # LU with partial pivoting, applied to B as it goes (dgesv's elimination)
    for col in range(N):
        piv, big = pivot_row(A, col, N)
        if big == 0.0:
            return False
        if piv != col:
            for j in range(N):
                tmp = A[col, j]
                A[col, j] = A[piv, j]
                A[piv, j] = tmp
            for r in range(t):
                tmp = B[col, r]
                B[col, r] = B[piv, r]
                B[piv, r] = tmp
        inv = 1.0 / A[col, col]
        for r in range(col + 1, N):
            f = A[r, col] * inv
            if f != 0.0:
                for j in range(col + 1, N):
                    A[r, j] -= f * A[col, j]
                for s in range(t):
                    B[r, s] -= f * B[col, s]
    for col in range(N - 1, -1, -1):
        for s in range(t):
            acc = B[col, s]
            for j in range(col + 1, N):
                acc -= A[col, j] * B[j, s]
            B[col, s] = acc / A[col, col]
    _evaluate(u, starts, order, Xq, yl, shift, scale, powers, phi, g, c, degree, B, kv, pv, out)
    return True


def _work(starts, order, nbr, X, *_):
    k = nbr.shape[1]
    return (starts.shape[0] - 1) * (k * k * (X.shape[1] + 8) + k * k * k // 3) + order.shape[0] * k * X.shape[1]


@pjit(tasks=lambda starts, *_: starts.shape[0] - 1, work=_work)
def local_solve(lo, hi, starts, order, nbr, X, Y, alpha, Xq, powers, phi, g, c, degree, out, status):
    # IN: tasks lo:hi (distinct neighbourhoods); starts (U + 1,), order (m,): the queries of
    #     neighbourhood u are order[starts[u]:starts[u + 1]]; nbr (U, k) data indices;
    #     X (n, d), Y (n, t), alpha (n,) smoothing, Xq (m, d), powers (q, d) of the tail;
    #     phi, g (k,) the gamma of every column, c, degree: the kernel
    # OUT: out (m, t) the values at the queries; status[u] = 1 where the local system is
    #      singular (a zero pivot), else 0
    k = nbr.shape[1]
    q = powers.shape[0]
    d = X.shape[1]
    A = np.empty((k + q, k + q))
    B = np.empty((k + q, Y.shape[1]))
    yl = np.empty((k, d))
    shift = np.empty(d)
    scale = np.empty(d)
    kv = np.empty(k)
    pv = np.empty(q)
    for u in range(lo, hi):
        ok = lu_one(u, starts, order, nbr, X, Y, alpha, Xq, powers, phi, g, c, degree, A, B, yl, shift, scale, kv, pv,
                    out)
        status[u] = 0 if ok else 1



@jit_inline
def _chol_pivot(A, Af, inv, bad, j, q, k):
    # the diagonal entry j of the Cholesky factor of Z^T A Z (A's trailing block)
    L = LANES
    jj = q + j
    od = (jj * k + jj) * L
    for lane in range(L):
        inv[jj, lane] = A[jj, jj, lane]  # the entry of Z^T A Z, for the pivot test
    lane_dot_sub(Af, od, Af, od - j * L, L, Af, od - j * L, L, j)
    for lane in range(L):
        dj = A[jj, jj, lane]
        if not dj > PIVOT_TOL * abs(inv[jj, lane]):
            bad[lane] = True
            dj = 1.0
        lj = math.sqrt(dj)
        A[jj, jj, lane] = lj
        inv[jj, lane] = 1.0 / lj


@jit_inline
def _chol_entry(Af, inv, i, j, q, k):
    # the entry (i, j), i > j, of the Cholesky factor of Z^T A Z
    L = LANES
    ii = q + i
    jj = q + j
    od = (ii * k + jj) * L
    lane_dot_sub(Af, od, Af, (ii * k + q) * L, L, Af, (jj * k + q) * L, L, j)
    lane_mul(Af, od, inv, jj * L)


def _work_lanes(starts, order, nbr, X, Y, alpha, Xq, powers, *_):
    k = nbr.shape[1]
    m = k - powers.shape[0]
    return (starts.shape[0] - 1) * (k * k * (X.shape[1] + 30) // 2 + m * m * powers.shape[0] + m * m * m // 6) \
        + order.shape[0] * k * (X.shape[1] + 30)


@pjit(tasks=lambda starts, *_: -(-(starts.shape[0] - 1) // LANES), work=_work_lanes)
def local_solve_lanes(lo, hi, starts, order, nbr, X, Y, alpha, Xq, powers, phi, g, c, degree, out, status):
    # IN: tasks lo:hi: groups of LANES consecutive neighbourhoods; the rest as local_solve,
    #     for a kernel conditionally positive definite of an order the tail covers
    # OUT: out (m, t) at the queries of the solved neighbourhoods; status[u] = 0 where solved,
    #      2 where the factorisation broke down (the caller solves those by local_solve)
    # Layout: lane innermost, A[i, a, lane] at flat (i k + a) L; only lower triangles are kept.
    # Each lane's points are ordered with the q pivot points of its tail first.
    L = LANES
    U = starts.shape[0] - 1
    k = nbr.shape[1]
    q = powers.shape[0]
    d = X.shape[1]
    t = Y.shape[1]
    m = k - q
    A = np.zeros((k, k, L))  # K + diag(alpha); V in its (2, 1) block; L of Z^T A Z in its (2, 2) block
    Af = A.reshape(k * k * L)
    Et = np.empty((m, q, L))  # E^T = P2 P1^-1
    H = np.empty((q, q, L))  # K11 / 2, both triangles
    F = np.empty((q, q, L))  # P1 = L1 U: L1 (unit diagonal) below the diagonal, U on and above
    B = np.empty((k, t, L))  # y, then the weights w
    C = np.empty((q, t, L))  # the tail's coefficients, in the order cp
    Fi = np.empty((q, L))  # 1 / the diagonal of U
    yl = np.empty((k, d, L))
    al = np.empty((k, L))
    inv = np.empty((k, L))  # 1 / the Cholesky diagonal
    gl = np.full(k * L, g[0])
    bad = np.empty(L, dtype=np.bool_)
    sh = np.empty((d, L))
    sc = np.empty((d, L))
    # one neighbourhood's arrays (a lane taken out)
    Pw = np.empty((k, q))  # the tail, its columns in the order cp
    # the tail's columns in the order cp, the constant last (its pivot would be an arbitrary
    # point); column p is feature cf[p] (>= 0), the constant (-1) or a product (-2)
    cp = np.empty(q, dtype=np.int64)
    cf = np.empty(q, dtype=np.int64)
    nc = 0
    for last in range(2):
        for p in range(q):
            deg = 0
            f = -1
            for j in range(d):
                deg += powers[p, j]
                if powers[p, j] != 0:
                    f = j
            if (deg == 0) == (last == 1):
                cp[nc] = p
                cf[nc] = f if deg == 1 else (-1 if deg == 0 else -2)
                nc += 1
    perm = np.empty(k, dtype=np.int64)
    y1 = np.empty((k, d))
    sh1 = np.empty(d)
    sc1 = np.empty(d)
    pv = np.empty(max(q, d))
    xq = np.empty((d, L))  # the queries of a round of evaluation
    kl = np.empty(k * L)  # their kernel values
    pl = np.empty((q, L))  # their monomials, in the order cp
    res = np.empty((t, L))  # minus their values
    tgt = np.empty(L, dtype=np.int64)  # their rows of `out`, -1 for none
    for grp in range(lo, hi):
        u0 = grp * L
        for lane in range(L):
            u = u0 + lane if u0 + lane < U else u0
            bad[lane] = False
            for a in range(k):
                ia = nbr[u, a]
                for j in range(d):
                    y1[a, j] = X[ia, j]
            _shift_scale(y1, sh1, sc1)
            for j in range(d):
                sh[j, lane] = sh1[j]
                sc[j, lane] = sc1[j]
            for a in range(k):
                for j in range(d):
                    pv[j] = (y1[a, j] - sh1[j]) / sc1[j]
                for p in range(q):  # the monomials of (y - shift) / scale; most are 1 or one feature
                    f = cf[p]
                    if f >= 0:
                        Pw[a, p] = pv[f]
                    elif f == -1:
                        Pw[a, p] = 1.0
                    else:
                        v = 1.0
                        for j in range(d):
                            for _ in range(powers[cp[p], j]):
                                v *= pv[j]
                        Pw[a, p] = v
                perm[a] = a
            # the tail's LU with partial pivoting (as dgetf2): its q pivot rows P1 = L1 U come first
            for p in range(q):
                piv, big = pivot_row(Pw, p, k)
                if not big > TAIL_TOL:
                    bad[lane] = True
                    big = 0.0
                if piv != p:
                    for p2 in range(q):
                        tmp = Pw[p, p2]
                        Pw[p, p2] = Pw[piv, p2]
                        Pw[piv, p2] = tmp
                    ti = perm[p]
                    perm[p] = perm[piv]
                    perm[piv] = ti
                ip = 1.0 / Pw[p, p] if big > 0.0 else 0.0
                for a in range(p + 1, k):
                    f = Pw[a, p] * ip
                    Pw[a, p] = f
                    for p2 in range(p + 1, q):
                        Pw[a, p2] -= f * Pw[p, p2]
            for p in range(q):
                for p2 in range(q):
                    F[p, p2, lane] = Pw[p, p2]
                Fi[p, lane] = 1.0 / Pw[p, p]
            for i in range(m):
                for p in range(q):
                    Et[i, p, lane] = Pw[q + i, p]
            for a in range(k):  # the points in pivot order
                ia = nbr[u, perm[a]]
                for j in range(d):
                    yl[a, j, lane] = y1[perm[a], j]
                for r in range(t):
                    B[a, r, lane] = Y[ia, r]
                al[a, lane] = alpha[ia]
        for i in range(m):  # E^T = L2 L1^-1, row by row
            for p in range(q - 2, -1, -1):
                for p2 in range(p + 1, q):
                    lane_fnma(Et, (i * q + p) * L, Et, (i * q + p2) * L, F, (p2 * q + p) * L)
        # K + diag(alpha), lower triangle
        for a in range(k):
            for b in range(a + 1):
                lane_sqdist(Af, (a * k + b) * L, yl, a * d * L, yl, b * d * L, d)
            # the kernel on a multiple of four vectors (zeros past the diagonal, phi(0) = 0): a
            # remainder would run the vectorised loop's scalar epilogue
            nv = min((a + 4) // 4 * 4, k)
            local_kernel(phi, Af[a * k * L:(a * k + nv) * L], gl[:nv * L], c, degree)
            for lane in range(L):
                A[a, a, lane] += al[a, lane]
        # the null space Z = [-E; I] of P^T: Z^T A Z = A22 - V E - E^T V^T with V = A21 - E^T A11 / 2
        for p in range(q):
            for p2 in range(p + 1):
                for lane in range(L):
                    h = 0.5 * A[p, p2, lane]
                    H[p, p2, lane] = h
                    H[p2, p, lane] = h
        for i in range(m):
            for p in range(q):
                lane_dot_sub(Af, ((q + i) * k + p) * L, Et, i * q * L, L, H, p * L, q * L, q)
        # Z^T A Z = A22 - V E - E^T V^T in A's trailing block (lower triangle), four rows at a time
        kL = k * L
        for j in range(m):
            jj = q + j
            i = j
            while i < m:
                od = ((q + i) * k + jj) * L
                if i + 4 <= m:
                    lane_dot4_sub(Af, od, kL, Af, (q + i) * kL, kL, L, Et, j * q * L, L, q)
                    lane_dot4_sub(Af, od, kL, Et, i * q * L, q * L, L, Af, jj * kL, L, q)
                    i += 4
                else:
                    lane_dot_sub(Af, od, Af, (q + i) * kL, L, Et, j * q * L, L, q)
                    lane_dot_sub(Af, od, Et, i * q * L, L, Af, jj * kL, L, q)
                    i += 1
        # its Cholesky factor, left-looking, two columns at a time, four rows at a time
        # (register tiles of 4 x 2: six loads per eight multiply-adds)
        for j in range(0, m, 2):
            jj = q + j
            j2 = min(j + 2, m)
            for jc in range(j, j2):  # the diagonal block: (j, j), then (j + 1, j) and (j + 1, j + 1)
                for jr in range(j, jc):
                    _chol_entry(Af, inv, jc, jr, q, k)
                _chol_pivot(A, Af, inv, bad, jc, q, k)
            i = j2
            while i + 4 <= m and j2 == j + 2:
                od = ((q + i) * k + jj) * L
                lane_dot4x2_sub(Af, od, od + L, kL, Af, ((q + i) * k + q) * L, kL, L, Af, (jj * k + q) * L,
                                ((jj + 1) * k + q) * L, L, j)
                for r in range(4):
                    lane_mul(Af, od + r * kL, inv, jj * L)
                    lane_fnma(Af, od + r * kL + L, Af, od + r * kL, Af, ((jj + 1) * k + jj) * L)
                    lane_mul(Af, od + r * kL + L, inv, (jj + 1) * L)
                i += 4
            nc = j2 - j
            for e in range((m - i) * nc):  # the rows left, one entry at a time, row by row
                _chol_entry(Af, inv, i + e // nc, j + e % nc, q, k)
        for r in range(t):
            for i in range(m):  # Z^T y = y2 - E^T y1
                lane_dot_sub(B, ((q + i) * t + r) * L, Et, i * q * L, L, B, r * L, t * L, q)
            for j in range(q, k):  # L z = Z^T y
                lane_dot_sub(B, (j * t + r) * L, Af, (j * k + q) * L, L, B, (q * t + r) * L, t * L, j - q)
                lane_mul(B, (j * t + r) * L, inv, j * L)
            for j in range(k - 1, q - 1, -1):  # L^T z = ...
                lane_dot_sub(B, (j * t + r) * L, Af, ((j + 1) * k + j) * L, k * L, B, ((j + 1) * t + r) * L, t * L,
                             k - 1 - j)
                lane_mul(B, (j * t + r) * L, inv, j * L)
            # w = Z z: w2 = z, w1 = -E z (in B, after y1 is taken into C)
            for p in range(q):
                for lane in range(L):
                    C[p, r, lane] = B[p, r, lane]
                    B[p, r, lane] = 0.0
                lane_dot_sub(B, (p * t + r) * L, Et, p * L, q * L, B, (q * t + r) * L, t * L, m)
            # P1 c = y1 - A11 w1 - A12 z = y1 - (A11 / 2) w1 - V^T z, then c (in the order cp) by L1 and U
            for p in range(q):
                lane_dot_sub(C, (p * t + r) * L, H, p * q * L, L, B, r * L, t * L, q)
                lane_dot_sub(C, (p * t + r) * L, Af, (q * k + p) * L, k * L, B, (q * t + r) * L, t * L, m)
            for p in range(q):
                for p2 in range(p):
                    lane_fnma(C, (p * t + r) * L, F, (p * q + p2) * L, C, (p2 * t + r) * L)
            for p in range(q - 1, -1, -1):
                for p2 in range(p + 1, q):
                    lane_fnma(C, (p * t + r) * L, F, (p * q + p2) * L, C, (p2 * t + r) * L)
                lane_mul(C, (p * t + r) * L, Fi, p * L)
        for lane in range(min(L, U - u0)):
            status[u0 + lane] = 2 if bad[lane] else 0  # 2: left to the LU path
        # evaluation, lane-wise (k(x) . w + p(x) . c), in rounds: round r takes the r-th
        # query of every lane (one call site, no copy of a lane's data: compile time); nl is
        # LANES unknown to LLVM, so that these loops are not unrolled (compile time too)
        nl = tgt.shape[0]
        nq = 0
        for lane in range(min(L, U - u0)):
            if not bad[lane]:
                nq = max(nq, starts[u0 + lane + 1] - starts[u0 + lane])
        for rnd in range(nq):
            for e in range(nl):
                u = u0 + e if u0 + e < U else u0
                cnt = starts[u + 1] - starts[u]
                i = order[starts[u] + min(rnd, cnt - 1)]
                tgt[e] = i if u0 + e < U and not bad[e] and rnd < cnt else -1
                for j in range(d):
                    xq[j, e] = Xq[i, j]
                    sh1[j] = sh[j, e]
                    sc1[j] = sc[j, e]
                monomials(Xq[i], sh1, sc1, powers, pv)
                for p in range(q):
                    pl[p, e] = pv[cp[p]]
            for a in range(k):
                lane_sqdist(kl, a * L, xq, 0, yl, a * d * L, d)
            local_kernel(phi, kl, gl, c, degree)
            for r in range(t):
                for e in range(nl):
                    res[r, e] = 0.0
                lane_dot_sub(res, r * L, kl, 0, L, B, r * L, t * L, k)
                lane_dot_sub(res, r * L, pl, 0, L, C, r * L, t * L, q)
                for e in range(nl):
                    if tgt[e] >= 0:
                        out[tgt[e], r] = -res[r, e]
