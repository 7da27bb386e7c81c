"""Falkon's solver: Nystroem kernel ridge by preconditioned conjugate gradients,
matrix-free (``kernel_ridge(solver="nystrom-pcg")`` in memory and on dask), and the
choice of its landmarks.  Named after the method, to tell it apart from the Nystroem
feature map :func:`fastrbf.nystroem`.

The Nystroem KRR problem with landmarks ``L`` (m of them) and fastrbf's unscaled ridge
``alpha`` (as scikit-learn's ``KernelRidge``):

    (K_nm^T K_nm + alpha K_mm) beta = K_nm^T Y,     f(x) = K(x, L) beta

``K_nm = K(X, L)`` is never held: :func:`normal_matvec` makes ``K_nm^T K_nm V`` in one
fused pass over row tiles of ``X`` and :func:`cross_t` makes ``K_nm^T Y`` the same way.
With ``L = X`` (m = n) the solution is ``(K + alpha I)^-1 Y`` whenever ``K`` is
non-singular.

Preconditioner (Falkon, Rudi, Carratino & Rosasco 2017, in this scaling): with
``K_nm^T K_nm ~ (n / m) K_mm^2``,

    H = K_nm^T K_nm + alpha K_mm ~ T^T ((n / m) T T^T + alpha I) T = T^T A^T A T,

``T`` the upper Cholesky factor of ``K_mm + delta I`` (``delta = m eps mean(diag)``,
Falkon's jitter, raised tenfold up to ``1e-3 mean(diag)`` if ``K_mm`` is not positive
definite to working precision) and ``A`` that of ``(n / m) T T^T + alpha I``.  With
``B = T^-1 A^-1``, conjugate gradients run on ``B^T H B gamma = B^T K_nm^T Y`` and
``beta = B gamma``.  As in Falkon, the regulariser is applied as ``alpha I`` in the
preconditioned basis (``alpha T^-T K_mm T^-1`` computed as such would amplify rounding
by ``cond(T)^2``), so the system solved has ``K_mm + delta I`` in the regulariser:
a relative change of ``m eps``.

Decisions:

- Several right-hand sides (``Y`` of shape (n, k)) are solved by k independent CG
  recurrences that share each fused pass (one pass costs nearly the same for k = 1 and
  k = 10: building the kernel tile dominates); a column that has converged leaves the
  active set.  Block CG would share Krylov information but can break down on nearly
  dependent columns.
- Stopping: the relative residual ``||r|| / ||b||`` of the preconditioned system (the
  CG recurrence residual) ``<= tol`` for every column, or ``max_iter`` passes.  The
  reported ``residual`` is the largest over the columns.
- Threads: the fused passes are numba parallel kernels; the m x m LAPACK/BLAS work runs
  between passes, with BLAS on one thread for the per-iteration triangular solves when
  they are small (multi-threaded BLAS spinning beside the OpenMP pool slows both).
  ``falkon_solve`` never holds the BLAS limit while ``matvec`` runs (the dask
  backend's matvec may run fastrbf calls on other threads).
- Written once for both backends: :func:`falkon_solve` takes the data pass
  ``matvec`` as a callable, and the landmarks are drawn by :func:`landmark_rows` and
  made by :func:`landmarks_from_rows` whoever holds the rows.
- Reductions over rows use fixed chunks of ``max(NM_CHUNK, n / MAX_CHUNKS)`` rows (a
  function of ``n`` only), one float64 partial each, added in chunk order: bitwise
  independent of the thread count.  Memory: ``O(n d + m^2 + n k)`` plus at most
  ``MAX_CHUNKS`` partials of m x k.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import _dense, _progress, _threads
from .. import _validation as _v
from .._jit import falkon as _jf
from .._lazy import blas, lapack
from .._typing import KernelArg
from ..approx import PartialCholesky, accurate, check_positive_definite_kernel, factor_rows
from ..cluster._kmeans import kmeans_named
from ..kernels import check_kernel
from ..linalg import NotPositiveDefiniteError

#: smallest row chunk of the fused passes, and the most chunks (bounds the partials)
NM_CHUNK = 1024
MAX_CHUNKS = 256
#: the landmark methods by name (an array of landmarks is the other choice)
LANDMARK_METHODS = ("uniform", "kmeans", "rpcholesky", "auto")
LANDMARKS_TEXT = '"uniform", "kmeans", "rpcholesky", "auto" or an array'
#: the rows ``"rpcholesky"`` draws its pivots from: all ``n`` while the n x m factor has
#: at most this many entries (256 MiB; the solvers then reuse it), else a uniform
#: subsample of ``20 m`` rows, as ``"kmeans"`` (its ``20 m^3`` flops then cost about what
#: k-means' iterations do)
RPCHOL_POOL_ENTRIES = 2**25

_F64 = np.dtype(np.float64)


def chunking(n):
    """(rows per chunk, number of chunks) of the fused passes over ``n`` rows."""
    chunk = max(NM_CHUNK, -(-n // MAX_CHUNKS))
    chunk += chunk % 2  # row pairs never straddle two chunks
    return chunk, max(1, -(-n // chunk))


def _pass(cross, X, L, Wt, kernel, gamma, degree, coef0, n_threads):
    X = np.ascontiguousarray(X)
    dt = X.dtype
    Lt = np.ascontiguousarray(np.asarray(L, dtype=dt).T)
    m = Lt.shape[1]
    chunk, nch = chunking(X.shape[0])
    partial = np.zeros((nch, Wt.shape[0], m))
    spec = check_kernel(kernel).spec(np.full(m, gamma, dtype=dt), coef0, degree)
    _jf.nm_pass.run(n_threads, X, Lt, Wt, cross, chunk, *spec.args, partial)
    out = partial[0].copy()
    for p in partial[1:]:  # chunk order: bitwise the same for any thread count
        out += p
    return np.ascontiguousarray(out.T)


def _as_2d_f64(V):
    V = np.asarray(V, dtype=_F64)
    return V.reshape(V.shape[0], -1)


def normal_matvec(X: np.ndarray, L: np.ndarray, V: np.ndarray, *, kernel: KernelArg, gamma: float, degree: int,
                  coef0: float, n_threads: int | None = None) -> np.ndarray:
    """``K(X, L)^T (K(X, L) @ V)`` in one fused pass; never holds n x m.

    Inputs are validated arrays: ``X`` (n, d) float32/float64, ``L`` (m, d), ``V`` (m,)
    or (m, k).  Kernel tiles are in ``X``'s dtype, sums in float64.

    Returns
    -------
    ndarray of shape (m, k), float64

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram
    >>> rng = np.random.default_rng(0)
    >>> X, L, V = rng.random((50, 3)), rng.random((7, 3)), rng.random((7, 2))
    >>> K = gram(X, L, gamma=2.0)
    >>> P = normal_matvec(X, L, V, kernel="gaussian", gamma=2.0, degree=3, coef0=1.0)
    >>> bool(np.allclose(P, K.T @ (K @ V)))
    True
    """
    Vt = np.ascontiguousarray(_as_2d_f64(V).T)
    return _pass(False, X, L, Vt, kernel, gamma, degree, coef0, n_threads)


def cross_t(X: np.ndarray, L: np.ndarray, Y: np.ndarray, *, kernel: KernelArg, gamma: float, degree: int, coef0: float,
            n_threads: int | None = None) -> np.ndarray:
    """``K(X, L)^T @ Y`` in one fused pass (``Y`` (n,) or (n, k)); float64 (m, k).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram
    >>> rng = np.random.default_rng(0)
    >>> X, L, Y = rng.random((50, 3)), rng.random((7, 3)), rng.random(50)
    >>> R = cross_t(X, L, Y, kernel="gaussian", gamma=2.0, degree=3, coef0=1.0)
    >>> bool(np.allclose(R[:, 0], gram(X, L, gamma=2.0).T @ Y))
    True
    """
    Yt = np.ascontiguousarray(_as_2d_f64(Y).T)
    return _pass(True, X, L, Yt, kernel, gamma, degree, coef0, n_threads)


@dataclass(frozen=True, eq=False)
class FalkonResult:
    """Result of :func:`falkon_solve`.

    Attributes
    ----------
    beta : ndarray of shape (m, k), float64
    n_iter : int
        CG iterations (fused passes) done.
    residual : float
        Largest relative residual ``||r|| / ||b||`` of the preconditioned system over
        the columns (0.0 for a zero right-hand side).
    converged : bool
        ``residual <= tol``.
    """

    beta: np.ndarray
    n_iter: int
    residual: float
    converged: bool


def _upper_cholesky(S, what):
    """Upper Cholesky factor of the symmetric S (copied), or None if it fails."""
    U, info = lapack.dpotrf(S, lower=0, clean=1, overwrite_a=0)
    return U if info == 0 else None


def kmm_factor(Kmm):
    """``(U, delta)``: the upper Cholesky factor of ``Kmm + delta I`` with Falkon's
    jitter ``delta = m eps mean(diag)``, raised tenfold while the factorisation fails
    (NotPositiveDefiniteError beyond ``1e-3 mean(diag)``).

    Examples
    --------
    >>> import numpy as np
    >>> U, delta = kmm_factor(np.ones((2, 2)))  # singular: the jitter grows until it factors
    >>> bool(np.allclose(U.T @ U, np.ones((2, 2)) + delta * np.eye(2))), bool(delta > 0)
    (True, True)
    """
    m = Kmm.shape[0]
    mean_diag = float(np.mean(np.diag(Kmm)))
    if not np.isfinite(mean_diag) or mean_diag <= 0:
        mean_diag = 1.0
    delta = m * np.finfo(np.float64).eps * mean_diag
    while True:
        S = Kmm + delta * np.eye(m)
        U = _upper_cholesky(S, "K_mm")
        if U is not None:
            return U, delta
        if delta >= 1e-3 * mean_diag:
            raise NotPositiveDefiniteError(
                f"The landmark kernel matrix K_mm is not positive definite even with jitter "
                f"{delta:.3g} added: the kernel is not positive definite.", alpha=delta)
        delta *= 10.0


def falkon_solve(matvec: Callable[[np.ndarray], np.ndarray], rhs: np.ndarray, Kmm: np.ndarray, alpha: float, n: int,
                 *, tol: float = 1e-7, max_iter: int = 100, n_threads: int | None = None,
                 progress: object = False, factor: "PartialCholesky | None" = None) -> "FalkonResult":
    """Solve ``(K_nm^T K_nm + alpha K_mm) beta = rhs`` by Falkon's preconditioned CG.

    Parameters
    ----------
    matvec : callable
        ``matvec(V)`` returns ``K_nm^T K_nm V`` (m, k') float64 for V (m, k') float64.
    rhs : ndarray of shape (m,) or (m, k)
        ``K_nm^T Y``.
    Kmm : ndarray of shape (m, m)
        ``K(L, L)``.
    alpha : float
        The ridge, > 0 (unscaled, as in :func:`fastrbf.kernel_ridge`).
    n : int
        Number of training points (the preconditioner's ``n / m`` scale).
    tol : float
        Relative residual of the preconditioned system at which a column stops.
    max_iter : int
        Most CG iterations (calls of ``matvec``).
    n_threads : int, optional
        BLAS threads for the m x m factorisations.
    progress : bool, logging.Logger, callable or a reporter of :mod:`fastrbf._progress`
        Report the CG iterations (stage ``"cg"``, metric ``residual``: the largest
        relative residual so far; the ETA assumes ``max_iter`` iterations).
    factor : PartialCholesky, optional
        The randomly pivoted Cholesky that chose the landmarks: its triangle
        ``factor.factor[pivots]`` is the Cholesky factor of ``K_mm`` (no jitter), reused
        as ``T``.

    Returns
    -------
    FalkonResult

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((200, 2)), rng.random(200)
    >>> L = X[:20]
    >>> Knm, Kmm = gram(X, L, gamma=3.0), gram(L, gamma=3.0)
    >>> res = falkon_solve(lambda V: Knm.T @ (Knm @ V), Knm.T @ y, Kmm, 0.1, 200, tol=1e-10)
    >>> direct = np.linalg.solve(Knm.T @ Knm + 0.1 * Kmm, Knm.T @ y)
    >>> bool(res.converged and np.allclose(res.beta[:, 0], direct))
    True
    >>> reports = []
    >>> res = falkon_solve(lambda V: Knm.T @ (Knm @ V), Knm.T @ y, Kmm, 0.1, 200, progress=reports.append)
    >>> reports[-1]["stage"], reports[-1]["iter"] == res.n_iter, reports[-1]["final"]
    ('cg', True, True)
    """
    rep = _progress.own(progress, "falkon_solve")
    B = _as_2d_f64(rhs)
    Kmm = np.asarray(Kmm, dtype=_F64)
    m, k = B.shape
    alpha = float(alpha)
    nt = _threads.resolve(n_threads)
    with _threads.serial_blas():
        T = kmm_factor(Kmm)[0] if factor is None else pivot_triangle(factor)
        S = _dense.gemm(T, T.T, np.empty((m, m)), nt)
        S *= n / m
        S.flat[:: m + 1] += alpha
        A = _upper_cholesky(S, "preconditioner")
        if A is None:  # pragma: no cover - S is positive definite for alpha > 0
            raise np.linalg.LinAlgError("The Falkon preconditioner is not positive definite.")
        del S
    trsm = blas.dtrsm
    # prec: B G = T^-1 A^-1 G; prec_t: B^T R = A^-T T^-T R (upper factors)

    def prec(G):
        return trsm(1.0, T, trsm(1.0, A, G))

    def prec_t(R):
        return trsm(1.0, A, trsm(1.0, T, R, trans_a=1), trans_a=1)


    def op(G):
        # B^T H B G with the regulariser in the T basis: alpha T^-T (T^T T) T^-1 = alpha I
        with _threads.serial_blas():
            Ag = trsm(1.0, A, G)
            V = trsm(1.0, T, Ag)
        HV = np.asarray(matvec(V), dtype=_F64)
        with _threads.serial_blas():
            Z = trsm(1.0, T, HV, trans_a=1)
            Z += alpha * Ag
            return trsm(1.0, A, Z, trans_a=1)

    with _threads.serial_blas():
        b = prec_t(B)
    bnorm = np.sqrt(np.sum(b * b, axis=0))
    x = np.zeros((m, k))
    r = b.copy()
    p = r.copy()
    rr = bnorm * bnorm
    rel = np.where(bnorm > 0, 1.0, 0.0)
    done = rel <= tol
    n_iter = 0
    rep.start("cg", max_iter, unit="CG iter")
    while n_iter < max_iter and not done.all():
        act = np.flatnonzero(~done)
        P = np.ascontiguousarray(p[:, act])
        AP = op(P)
        n_iter += 1
        pap = np.sum(P * AP, axis=0)
        ok = pap > 0
        a = np.where(ok, rr[act] / np.where(ok, pap, 1.0), 0.0)
        x[:, act] += a * P
        r[:, act] -= a * AP
        rr_new = np.sum(r[:, act] ** 2, axis=0)
        p[:, act] = r[:, act] + np.where(rr[act] > 0, rr_new / np.where(rr[act] > 0, rr[act], 1.0), 0.0) * P
        rr[act] = rr_new
        rel[act] = np.sqrt(rr_new) / bnorm[act]
        done[act] = (rel[act] <= tol) | ~ok  # a breakdown (p^T A p <= 0) stops the column
        if n_iter < max_iter and not done.all():  # the last iteration's report is the final one
            rep.step(n_iter, residual=float(rel.max()))
    with _threads.serial_blas():
        beta = prec(x)
    residual = float(rel.max()) if k else 0.0
    rep.finish(n_iter, residual=residual, converged=residual <= tol)
    return FalkonResult(np.ascontiguousarray(beta), n_iter, residual, bool(residual <= tol))


#: rows per BLAS call of :func:`nystrom_solve`'s features, and columns per
#: block of its ``Phi^T Phi`` (both fixed: the same bits for any thread count)
DIRECT_ROWS = 256
DIRECT_COLS = 128


def nystrom_solve(X: np.ndarray, L: np.ndarray, Y: np.ndarray, Kmm: np.ndarray, alpha: float, *, kernel: KernelArg,
                  gamma: float, degree: int, coef0: float, n_threads: int | None = None,
                  progress: object = False, factor: "PartialCholesky | None" = None) -> np.ndarray:
    """Solve the system of :func:`falkon_solve` directly: one pass over the data, then
    an m x m factorisation.

    With ``T`` the upper Cholesky factor of ``K_mm + delta I`` (:func:`kmm_factor`),
    the Nystroem features ``Phi = K_nm T^-1`` are made chunk by chunk of rows (the
    kernel block by :func:`fastrbf.gram`, then a product with ``T^-1``) and folded into
    ``W = Phi^T Phi`` and ``Phi^T Y``; then ``(W + alpha I) u = Phi^T Y`` by Cholesky
    and ``beta = T^-1 u``: the solution Falkon's CG converges to (the same
    regulariser), without iterations.  Why: it costs about ``2 n m^2`` flops of BLAS
    and ``n m`` kernel values, against ``2 n m`` kernel values per CG iteration; for
    the few thousand landmarks of typical use that is several times less, most on
    machines whose ``exp`` is slow.  ``Phi`` keeps the conditioning of the problem:
    forming ``K_nm^T K_nm`` first and then ``T^-T (.) T^-1`` would amplify its
    rounding by ``cond(K_mm)`` (measured: predictions off by 1e195 where ``Phi``
    agrees with the CG to 1e-7).

    Inputs are validated float64 arrays: ``X`` (n, d), ``L`` (m, d), ``Y`` (n,) or (n, k),
    ``Kmm = K(L, L)``; ``alpha > 0``.  Memory: ``O(m^2 + m * rows per chunk)``.  Sums
    by fixed chunks and blocks: bitwise the same for any thread count.

    ``factor``: the randomly pivoted Cholesky of all the rows of ``X`` that chose ``L``.
    Its factor already is ``Phi`` (with ``T`` its triangle at the pivots), so no kernel
    value is computed again: the pass only folds its chunks.

    Returns
    -------
    ndarray of shape (m, k), float64

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((200, 2)), rng.random(200)
    >>> L = X[:20]
    >>> Knm, Kmm = gram(X, L, gamma=3.0), gram(L, gamma=3.0)
    >>> beta = nystrom_solve(X, L, y, Kmm, 0.1, kernel="gaussian", gamma=3.0, degree=3, coef0=1.0)
    >>> direct = np.linalg.solve(Knm.T @ Knm + 0.1 * Kmm, Knm.T @ y)
    >>> bool(np.allclose(beta[:, 0], direct))
    True
    """
    from ..kernels import gram

    rep = _progress.own(progress, "nystrom_solve")
    n = X.shape[0]
    m = L.shape[0]
    Yk = _as_2d_f64(Y)
    nt = _threads.resolve(n_threads)
    with _threads.serial_blas():
        T = kmm_factor(np.asarray(Kmm, dtype=_F64))[0] if factor is None else pivot_triangle(factor)
        Tinv, info = lapack.dtrtri(T, lower=0)
    if info != 0:  # pragma: no cover - T is a Cholesky factor, its diagonal > 0
        raise np.linalg.LinAlgError("The Cholesky factor of K_mm could not be inverted.")
    Tinv = np.ascontiguousarray(np.triu(Tinv))
    W = np.zeros((m, m))
    z = np.zeros((m, Yk.shape[1]))
    chunk, nch = chunking(n)
    rows = min(chunk, n) if factor is None else 0  # (the factor's rows are the features)
    kbuf = np.empty((rows, m))
    pbuf = np.empty((rows, m))
    trsm = blas.dtrsm

    def features(K, P, lo, hi):
        # rows of Phi = K T^-1, by GEMM with the inverse: as accurate here as the
        # triangular solve, and faster (OpenBLAS's dtrsm ran at 24 GF/s, GEMM at 67); by
        # blocks of columns, each with the rows of T^-1 above its diagonal only (the
        # zeros below skipped: about n m^2 flops, not 2 n m^2)
        for r in range(lo, hi, DIRECT_ROWS):
            r1 = min(hi, r + DIRECT_ROWS)
            for j0 in range(0, m, DIRECT_COLS):
                j1 = min(m, j0 + DIRECT_COLS)
                np.matmul(K[r:r1, :j1], Tinv[:j1, j0:j1], out=P[r:r1, j0:j1])

    def fold(P, j0, j1):
        # the upper part of the columns j0:j1 of W (rows 0:j1)
        W[:j1, j0:j1] += P[:, :j1].T @ P[:, j0:j1]

    rep.start("nystrom", nch, unit="chunk")
    for c in range(nch):
        r0, r1 = c * chunk, min(n, (c + 1) * chunk)
        if factor is None:
            K, P = kbuf[: r1 - r0], pbuf[: r1 - r0]
            gram(X[r0:r1], L, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, out=K, n_threads=nt)
        else:
            P = factor.factor[r0:r1]
        with _threads.serial_blas():
            if factor is None:
                _threads.map_ranges(lambda lo, hi, K=K, P=P: features(K, P, lo, hi), r1 - r0, nt, align=DIRECT_ROWS)
            # the widest blocks first (a block's work grows with its last column)
            _threads.run_tasks([lambda j0=j0, P=P: fold(P, j0, min(m, j0 + DIRECT_COLS))
                                for j0 in reversed(range(0, m, DIRECT_COLS))], nt)
            z += P.T @ Yk[r0:r1]
        if c + 1 < nch:
            rep.step(c + 1)
    with _threads.serial_blas():
        A = np.triu(W) + np.triu(W, 1).T
        A.flat[:: m + 1] += float(alpha)
        F, info = lapack.dpotrf(A, lower=0, clean=1, overwrite_a=1)
        if info != 0:  # pragma: no cover - W is positive semi-definite and alpha > 0
            raise np.linalg.LinAlgError("The Nystroem system Phi^T Phi + alpha I is not positive definite.")
        u = trsm(1.0, F, trsm(1.0, F, z, trans_a=1))
        beta = trsm(1.0, T, u)
    rep.finish(nch)
    return np.ascontiguousarray(beta)


def pivot_triangle(factor: PartialCholesky) -> np.ndarray:
    """The upper Cholesky factor of ``K_mm`` that a randomly pivoted Cholesky holds: the
    transpose of its factor's rows at the pivots (lower triangular up to rounding,
    which is dropped).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram, rpcholesky
    >>> X = np.random.default_rng(0).random((30, 2))
    >>> pc = rpcholesky(X, 5, gamma=2.0, seed=0)
    >>> T = pivot_triangle(pc)
    >>> bool(np.allclose(T.T @ T, gram(pc.landmarks, gamma=2.0)))
    True
    """
    return np.ascontiguousarray(np.triu(factor.factor[factor.pivots].T))


def landmarks(X: np.ndarray, M: int, how: "str | np.ndarray", seed: "int | np.random.Generator | None",
              n_threads: int | None, progress: object = False, kernel: "dict | None" = None) -> np.ndarray:
    """The m landmarks: ``"uniform"`` (M rows of ``X`` without replacement), ``"kmeans"``
    (k-means centres), ``"rpcholesky"`` (pivots of a randomly pivoted Cholesky of the
    kernel ``kernel``, a dict of :func:`fastrbf.gram`'s checked keyword arguments) or an
    explicit (M, d) array (returned as a float64 copy).  ``seed``: None, an int >= 0 or
    a ``numpy.random.Generator``.  See :func:`choose_landmarks`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> landmarks(X, 3, "uniform", 0, None).shape
    (3, 2)
    """
    return choose_landmarks(X, M, how, seed, n_threads, progress, kernel)[0]


def choose_landmarks(X: np.ndarray, M: int, how: "str | np.ndarray", seed: "int | np.random.Generator | None",
                     n_threads: int | None, progress: object = False,
                     kernel: "dict | None" = None) -> "tuple[np.ndarray, PartialCholesky | None]":
    """``(landmarks, factor)``: the landmarks of :func:`landmarks`, and the randomly
    pivoted Cholesky that chose them when it ran on all the rows of ``X`` (None
    otherwise), for the solvers to reuse.

    ``"kmeans"``: k-means++ and 10 Lloyd iterations on a uniform subsample of
    ``min(n, 20 M)`` rows (the seeding of M centres on all n rows would cost more than
    the solve); ``progress`` is passed to it.  ``"rpcholesky"``: on all rows while the
    n x M factor has at most :data:`RPCHOL_POOL_ENTRIES` entries, else on a uniform
    subsample of ``20 M`` rows (:func:`landmark_rows`); fewer than M landmarks when the
    kernel matrix is numerically of lower rank.  ``"auto"``: ``"rpcholesky"``'s pivots
    when its relative trace error is at most :data:`fastrbf.approx.AUTO_RESIDUAL` (:func:`~fastrbf.approx.accurate`),
    else k-means centres on k-means' subsample (the Cholesky's time then spent for
    nothing: at most about k-means' own).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((50, 2))
    >>> L, pc = choose_landmarks(X, 6, "rpcholesky", 0, None, kernel={"kernel": "gaussian", "gamma": 3.0})
    >>> L.shape, pc.factor.shape
    ((6, 2), (50, 6))
    """
    if not isinstance(how, str):
        return np.array(how, dtype=_F64, order="C", copy=True), None  # the model owns its landmarks
    rng = _v.check_seed(seed, name="seed")
    idx = landmark_rows(X.shape[0], M, how, rng)
    if how in ("rpcholesky", "auto") and idx is None:
        pc = _rpcholesky(X, M, rng, n_threads, progress, kernel)
        if how == "rpcholesky" or accurate(pc):
            return np.ascontiguousarray(pc.landmarks), pc
        how, idx = "kmeans", landmark_rows(X.shape[0], M, "kmeans", rng)
    return landmarks_from_rows(X if idx is None else X[idx], M, how, rng, n_threads, progress, kernel), None


def landmark_rows(n: int, M: int, how: str, rng: np.random.Generator) -> "np.ndarray | None":
    """The sorted rows (of n) that :func:`landmarks` draws for ``how`` from ``rng``: M
    for ``"uniform"``, ``min(n, 20 M)`` for ``"kmeans"``, and for ``"rpcholesky"`` all
    while its factor is small (:data:`RPCHOL_POOL_ENTRIES`), else ``20 M`` (None: all
    rows).  The rows themselves go to :func:`landmarks_from_rows`; a backend gathers
    them as it can.

    Examples
    --------
    >>> import numpy as np
    >>> landmark_rows(10, 3, "uniform", np.random.default_rng(0)).shape, landmark_rows(10, 3, "kmeans", None)
    ((3,), None)
    """
    if _v.check_choice(how, "landmarks", LANDMARK_METHODS, text=LANDMARKS_TEXT) == "uniform":
        return np.sort(rng.choice(n, size=M, replace=False))
    pool = n if how in ("rpcholesky", "auto") and n * M <= RPCHOL_POOL_ENTRIES else 20 * M
    return None if n <= pool else np.sort(rng.choice(n, size=pool, replace=False))


def landmarks_from_rows(rows: np.ndarray, M: int, how: str, rng: np.random.Generator, n_threads: int | None,
                        progress: object = False, kernel: "dict | None" = None) -> np.ndarray:
    """The M landmarks (float64, C-ordered, a new array) from the rows that
    :func:`landmark_rows` chose: those rows (``"uniform"``), their k-means centres
    (``"kmeans"``: k-means++ and 10 Lloyd iterations, seeded from ``rng``) or the pivots
    of their randomly pivoted Cholesky (``"rpcholesky"``, with the kernel ``kernel``).

    Examples
    --------
    >>> import numpy as np
    >>> landmarks_from_rows(np.arange(6.0).reshape(3, 2), 3, "uniform", None, None).tolist()
    [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    """
    if how == "uniform":
        return np.ascontiguousarray(rows, dtype=_F64)
    if how in ("rpcholesky", "auto"):
        pc = _rpcholesky(rows, M, rng, n_threads, progress, kernel)
        if how == "rpcholesky" or accurate(pc):
            return np.ascontiguousarray(pc.landmarks)
        if rows.shape[0] > 20 * M:  # k-means' rows, as landmark_rows draws them
            rows = rows[np.sort(rng.choice(rows.shape[0], size=20 * M, replace=False))]
    res = kmeans_named(rows, M, name="n_landmarks", max_iter=10, seed=rng, n_threads=n_threads, progress=progress)
    return np.ascontiguousarray(res.centers, dtype=_F64)


def _rpcholesky(rows, M, rng, n_threads, progress, kernel):
    if kernel is None:  # pragma: no cover - every caller passes its kernel
        raise TypeError("landmarks='rpcholesky' needs the kernel")
    kw = {"degree": 3, "coef0": 1.0, "length_scale": None, **kernel}
    rows = np.ascontiguousarray(rows, dtype=_F64)
    check_positive_definite_kernel(check_kernel(kw["kernel"]), rows.shape[1], kw["coef0"], 'landmarks="rpcholesky"')
    rep = _progress.own(progress, "rpcholesky")
    return factor_rows(rows, M, kw, rng, n_threads, rep=rep, last=rep is not progress)  # a fit's own stage is not its last
