"""The variational bound of the sparse Gaussian process (:mod:`fastrbf.gp._sparse`) and
its gradient, computed from passes over the rows; the in-memory passes.

With ``K = K_mm + delta I`` (``delta`` Falkon's jitter, see
:func:`fastrbf.models.falkon.kmm_factor`), ``L`` its lower Cholesky factor, noise
``s2`` and ``A = L^-1 K_mn`` (m x n), the VFE bound (Titsias 2009) per output is

    -n/2 log(2 pi s2) - 1/2 log|B| - (y^T y - b^T B^-1 b / s2) / (2 s2)
    - (n c phi(0) - tr(A A^T)) / (2 s2),    B = I + A A^T / s2,  b = A y

so everything comes from the m x m statistic ``A A^T`` and the m x k ``A y``.

Decisions:

- **A per chunk, not K_nm^T K_nm.**  The statistics are made in one pass over fixed
  chunks of :data:`CHUNK` rows: per chunk a numba pass builds the chunk x m kernel block
  (:func:`phi_rows`), BLAS ``trsm`` turns it into ``A_c = L^-1 K_mc`` and ``syrk`` adds
  ``A_c A_c^T`` to its group's partial (on one BLAS thread inside fastrbf's worker
  tasks).  Summing ``K_nm^T K_nm`` first and solving after would cost half the flops,
  but its rounding (``eps ||K_nm||^2``) comes back amplified by ``1 / delta``: with
  long length scales and a large amplitude (a smooth target) ``B`` then stops being
  positive definite and a jitter large enough to save it shifts the bound by hundreds
  of nats, in jumps that stall the optimiser (measured).  ``A A^T`` is a Gram matrix:
  ``B >= I`` always factors.  The chunks form at most :data:`GROUPS` groups (a function
  of ``n`` only), each summed in chunk order, the groups added in order: the same bits
  for any thread count; memory ``O(n d + GROUPS (m^2 + CHUNK m))``.
- **Gradient** in ``theta = log(amplitude, length_scale..., noise)`` by the chain rule
  through ``S = K_mn K_nm``, ``P = K_mn y`` and ``K``: ``dF/dS = L^-T H_S L^-1``,
  ``dF/dK = L^-T H_K L^-1`` with ``H`` made of ``I - B^-1`` (LAPACK ``potri`` of the
  well-conditioned ``B``), ``A A^T`` and ``w = B^-1 b``.  Amplitude and noise need only
  m x m traces.  The length scales need ``sum_nm G_nm dK_nm / dlog l_k`` with
  ``G = 2 K_nm dF/dS + y (dF/dP)^T``, formed per chunk by one ``gemm`` and contracted by
  :func:`fastrbf._jit.gp.sparse.cross_grad_rows` in ``O(chunk m d)`` (the kernel's
  derivative once per pair, every feature from it), plus the same sum over the landmark
  pairs with ``dF/dK`` by the same kernel: a second pass, never a matrix per parameter.
  The two terms carry ``K^-1``'s scale and cancel: the gradient is as accurate as the
  conditioning of ``K`` allows (as every sparse GP's).
- One evaluation costs ``4 n m^2`` flops (two passes) plus about ``6 m^3``.
- Every kernel block (and ``phi(0)``) comes from one numba kernel, so a cold fit
  compiles two kernels (this one and the gradient's).
"""

import functools
import math

import numpy as np

from .. import _dense, _threads
from .._jit import pairwise as _jpw
from .._jit.gp import sparse as _jsg
from .._lazy import blas, lapack
from ..kernels import UserKernelValueError, check_user_values, is_user
from ..models.falkon import kmm_factor
from ._checks import unit_width

_F64 = np.dtype(np.float64)
#: rows per chunk of the passes over the data (a function of nothing: fixed chunks)
CHUNK = 1024
#: most groups of chunks; each group holds one m x m partial
GROUPS = 8


def row_groups(n):
    """The fixed row chunks ``(r0, r1)`` of the passes over ``n`` rows, as at most
    :data:`GROUPS` groups of consecutive chunks (a function of ``n`` only).

    Examples
    --------
    >>> [len(g) for g in row_groups(10 * CHUNK)], row_groups(5)
    ([2, 2, 2, 2, 2], [[(0, 5)]])
    """
    nch = max(1, -(-n // CHUNK))
    per = -(-nch // min(nch, GROUPS))
    return [[(c * CHUNK, min(n, (c + 1) * CHUNK)) for c in range(g, min(nch, g + per))] for g in range(0, nch, per)]


def memory_bytes(n, d, k, m):
    """About the bytes a fit holds at peak: the float64 data and targets, the partials
    of the groups, their chunk buffers, a dozen m x m matrices."""
    return 8 * (n * d + 2 * n * k + (GROUPS + 12) * m * m + 2 * GROUPS * CHUNK * m)


def phi_rows(A, Bt, spec, out, n_threads=1):
    """``out[i, j] = phi(g0 ||A[i] - B[j]||^2)`` for ``A`` (r, d) and ``Bt`` (d, m), both
    float64 and already divided by the length scales.  Every block of the sparse GP
    (data x landmarks, landmarks x landmarks, the prior ``phi(0)``) is made by this one
    kernel, so a fit compiles one kernel function once (``K_mm`` comes out exactly
    symmetric: the differences are those of :func:`fastrbf.sqdist`)."""
    if n_threads == 1:
        _jpw.pairwise_rows(0, _jpw.pairwise_rows.tasks(A, Bt, *spec.args, out), A, Bt, *spec.args, out)
    else:
        _jpw.pairwise_rows.run(n_threads, A, Bt, *spec.args, out)
    return out


def phi_zero(entry, coef0):
    """``phi(0)``: the prior variance over the amplitude."""
    return float(phi_rows(np.zeros((1, 1)), np.zeros((1, 1)), entry.spec(np.full(1, unit_width(entry)), coef0, 1),
                          np.empty((1, 1)))[0, 0])


class RowPasses:
    """The passes over in-memory rows: ``X`` (n, d) float64, targets ``T`` (n, k)
    float64, the kernel ``entry`` with ``coef0``.  The statistics are of the kernel
    function without the amplitude (``Phi = K / c``)."""

    def __init__(self, X, T, entry, coef0, n_threads):
        self.X, self.T = X, T
        self.n, self.d = X.shape
        self.k = T.shape[1]
        self.g0 = unit_width(entry)
        self.entry, self.coef0 = entry, coef0
        self.n_threads = n_threads
        self.yy = float(np.sum(T * T))

    def _spec(self, m):
        return self.entry.spec(np.full(m, self.g0), self.coef0, 1)

    def _block(self, r0, r1, lsd, Zt, spec, out):
        Xc = np.ascontiguousarray(self.X[r0:r1] / lsd)
        phi_rows(Xc, Zt, spec, out)
        return Xc

    def stats(self, lsd, Zs, L, c):
        """``(A A^T, A T)`` with ``A = c L^-1 Phi_mn``, at length scales ``lsd`` (d,),
        landmarks divided by them ``Zs`` (m, d), ``L`` (m, m) lower, Fortran."""
        m, k = Zs.shape[0], self.T.shape[1]
        Zt = np.ascontiguousarray(Zs.T)
        spec = self._spec(m)
        groups = row_groups(self.n)
        parts: list = [None] * len(groups)

        def task(gi):
            S = np.zeros((m, m), order="F")
            P = np.zeros((m, k))
            buf = np.empty((min(CHUNK, self.n), m))
            for r0, r1 in groups[gi]:
                Kc = buf[: r1 - r0]
                self._block(r0, r1, lsd, Zt, spec, Kc)
                A = blas.dtrsm(c, L, Kc.T, lower=1, overwrite_b=1)  # in place: Kc.T is Fortran
                S = blas.dsyrk(1.0, A, beta=1.0, c=S, trans=0, lower=0, overwrite_c=1)
                P += A @ self.T[r0:r1]
            parts[gi] = (S, P)

        with _threads.serial_blas():
            _threads.run_tasks([functools.partial(task, gi) for gi in range(len(groups))], self.n_threads)
        S, P = parts[0]
        for S1, P1 in parts[1:]:  # group order: the same bits for any thread count
            S += S1
            P += P1
        S += S.T  # syrk wrote the upper triangle, the lower one is 0
        S.flat[:: m + 1] *= 0.5
        return S, P

    def grad(self, lsd, Zs, R, FT):
        """``sum_nm G_nm dphi/dt g0 (xs_nk - zs_mk)^2`` (d,) with ``G = Phi_nm R + T FT``."""
        m = Zs.shape[0]
        Zt = np.ascontiguousarray(Zs.T)
        Zc = np.ascontiguousarray(Zs)
        spec = self._spec(m)
        groups = row_groups(self.n)
        starts = np.cumsum([0] + [len(g) for g in groups])
        part = np.zeros((int(starts[-1]), self.d))

        def task(gi):
            buf = np.empty((min(CHUNK, self.n), m))
            G = np.empty_like(buf)
            for ci, (r0, r1) in enumerate(groups[gi]):
                Kc, Gc = buf[: r1 - r0], G[: r1 - r0]
                Xc = self._block(r0, r1, lsd, Zt, spec, Kc)
                np.matmul(Kc, R, out=Gc)
                Gc += self.T[r0:r1] @ FT
                _jsg.cross_grad_rows(Xc, Zc, Gc, spec.phi, spec.c, spec.degree, self.g0, part[starts[gi] + ci])

        with _threads.serial_blas():
            _threads.run_tasks([functools.partial(task, gi) for gi in range(len(groups))], self.n_threads)
        out = part[0].copy()
        for p in part[1:]:  # chunk order
            out += p
        return out

    def subsample(self, rows):
        """The same passes over ``rows`` only (None: these)."""
        if rows is None:
            return self
        return RowPasses(self.X[rows], self.T[rows], self.entry, self.coef0, self.n_threads)


def solve_lower(L, B, nt, trans=False):
    """``L^-1 B`` (``trans``: ``L^-T B``) as a new Fortran array, ``L`` lower, Fortran."""
    out = np.array(B, dtype=_F64, order="F", copy=True)
    _dense.trsm(L, out, nt, trans=trans)
    return out


def _sym(A):
    return 0.5 * (A + A.T)


def lower_factor(A, nt):
    """The lower Cholesky factor (Fortran) of the symmetric ``A``, or LinAlgError."""
    F = np.array(A, dtype=_F64, order="F", copy=True)
    if _dense.potrf(F, nt) != 0:
        raise np.linalg.LinAlgError("not positive definite")
    return np.asfortranarray(np.tril(F))


class Bound:
    """The variational bound and its pieces at log-parameters ``theta`` from the
    statistics of the passes (see the module docstring)."""

    def __init__(self, passes, Z, entry, coef0, n_threads):
        self.passes, self.Z, self.entry, self.coef0 = passes, Z, entry, coef0
        self.nt = n_threads
        self.g0 = unit_width(entry)
        self.spec = entry.spec(np.ones(1), coef0, 1)
        self.phi0 = phi_zero(entry, coef0)

    def evaluate(self, theta, eval_gradient):
        """``(lml, gradient or None, state)``; the state holds what a model needs."""
        p = self.passes
        n, d, k = p.n, p.d, p.k
        nt = self.nt
        c, s2 = math.exp(theta[0]), math.exp(theta[-1])
        ls = np.exp(theta[1:-1])
        lsd = np.broadcast_to(ls, (d,)).copy()
        with np.errstate(over="ignore", invalid="ignore"):
            Zs = np.ascontiguousarray(self.Z / lsd)
        if not np.all(np.isfinite(Zs)):
            raise FloatingPointError("the rescaled landmarks overflow")
        m = Zs.shape[0]
        Kmm = phi_rows(Zs, np.ascontiguousarray(Zs.T), self.entry.spec(np.full(m, self.g0), self.coef0, 1),
                       np.empty((m, m)), nt)
        check_user_values(self.entry, Kmm, Zs, Zs, np.full(m, self.g0))  # a user kernel NaN among the landmarks
        Kmm *= c
        with _threads.serial_blas():
            U, delta = kmm_factor(Kmm)
        L = np.asfortranarray(U.T)
        Ah, b = p.stats(lsd, Zs, L, c)  # L^-1 K_mn K_nm L^-T, L^-1 K_mn T
        B = Ah / s2
        B.flat[:: m + 1] += 1.0
        LB = lower_factor(B, nt)
        w = solve_lower(LB, solve_lower(LB, b, nt), nt, trans=True)  # B^-1 b
        bw = float(np.sum(b * w))
        tr_a = float(np.trace(Ah))
        prior = n * c * self.phi0
        lml = (-0.5 * n * k * math.log(2 * math.pi * s2) - k * float(np.log(np.diag(LB)).sum())
               - 0.5 * p.yy / s2 + 0.5 * bw / s2**2 - 0.5 * k * (prior - tr_a) / s2)
        if is_user(self.entry) and not (math.isfinite(lml) and np.isfinite(Ah).all() and np.isfinite(b).all()):
            raise UserKernelValueError(
                f"The user kernel {self.entry.name!r} is not finite somewhere between the data and the landmarks "
                "(the sparse GP's sums are not finite); a kernel must be finite wherever it is evaluated: fix the "
                "function, or rescale the data or the length scales.")
        state = {"L": L, "LB": LB, "w": w, "delta": delta, "c": c, "s2": s2, "ls": ls}
        if not eval_gradient:
            return lml, None, state
        with _threads.serial_blas():
            Bi, _ = lapack.dpotri(LB, lower=1)  # B^-1 (lower triangle) from its factor
        Bi = np.tril(Bi)
        ImB = -(Bi + np.tril(Bi, -1).T)
        ImB.flat[:: m + 1] += 1.0  # I - B^-1
        ww = w @ w.T
        Hs = (0.5 * k / s2) * ImB - ww / (2 * s2**3)
        Hk = (0.5 * k) * ImB - ww / (2 * s2**2) - (0.5 * k / s2) * Ah
        FS = _sym(solve_lower(L, solve_lower(L, Hs, nt, trans=True).T, nt, trans=True))
        FK = _sym(solve_lower(L, solve_lower(L, Hk, nt, trans=True).T, nt, trans=True))
        FP = solve_lower(L, w, nt, trans=True) / s2**2
        grad = np.empty(theta.size)
        grad[0] = 2 * float(np.sum(Hs * Ah)) + bw / s2**2 + float(np.trace(Hk)) - 0.5 * k * prior / s2
        wAw = float(np.sum(w * (Ah @ w)))
        grad[-1] = s2 * (-0.5 * k * n / s2 + 0.5 * k * float(np.trace(ImB)) / s2 + 0.5 * p.yy / s2**2 - bw / s2**3
                         + 0.5 * wAw / s2**4 + 0.5 * k * prior / s2**2 - 0.5 * k * tr_a / s2**2)
        # length scales: G = 2 K_nm F_S + T F_P^T = Phi_nm (2 c F_S) + T F_P^T over the rows,
        # and F_K over the pairs of landmarks
        cross = p.grad(lsd, Zs, np.ascontiguousarray(2 * c * FS), np.ascontiguousarray(FP.T))
        # the same sum over the pairs of landmarks, with F_K, by the same kernel (rows in fixed blocks)
        blocks = [(r0, min(m, r0 + CHUNK)) for r0 in range(0, m, CHUNK)]
        part = np.zeros((len(blocks), d))
        sp = self.spec
        FKc = np.ascontiguousarray(FK)

        def block(i):
            r0, r1 = blocks[i]
            _jsg.cross_grad_rows(Zs[r0:r1], Zs, FKc[r0:r1], sp.phi, sp.c, sp.degree, self.g0, part[i])

        _threads.run_tasks([functools.partial(block, i) for i in range(len(blocks))], nt)
        kmm = part[0].copy()
        for p_i in part[1:]:  # block order
            kmm += p_i
        dls = -2 * c * (cross + kmm)
        grad[1:-1] = dls.sum() if ls.size == 1 else dls
        return lml, grad, state
