"""RBF interpolation with a polynomial tail, as SciPy's ``RBFInterpolator``.

Decisions:

- :func:`interpolate` solves SciPy ``RBFInterpolator``'s system
  ``[[K + diag(alpha), P], [P^T, 0]] [w; c] = [y; 0]`` (``P`` the monomials up to
  ``degree`` of the shifted and scaled data, as SciPy) by the null-space method: with
  ``P = Q R`` (Householder), ``w = Q_2 z`` where ``(Q_2^T A Q_2) z = Q_2^T y`` is
  positive definite for a kernel that is conditionally positive definite of an order
  the polynomial covers, so it is solved by Cholesky (half the flops of SciPy's LU)
  in the same n x n buffer; then ``R c = Q_1^T (y - A w)``.  A ``degree`` below the
  kernel's minimum (SciPy warns) falls back to SciPy's LU on the full system.
- The solve is checked after the factorisation
  (:func:`fastrbf.linalg.check_conditioning`): a system singular to working precision
  raises :class:`~fastrbf.NotPositiveDefiniteError`, one whose solve misses its own
  targets by more than 1e-6 of max |Y| gives a ``scipy.linalg.LinAlgWarning``.
"""

import math
import warnings

import numpy as np

from .. import _dense, _threads
from .. import _validation as _v
from .._jit.kernels import RATIONAL_QUADRATIC
from .._lazy import lapack, scipy
from .._typing import ArrayLike, KernelArg, Threads
from ..kernels import check_kernel, kernel_value, undeclared
from ..linalg import NotPositiveDefiniteError, check_alpha, check_conditioning, diag_view, factor_in_place
from .common import (
    KernelModel,
    as_targets,
    check_model_weights,
    check_scalar_gamma,
    check_xy,
    gram_buffer,
    monomial_powers,
    owned,
    polynomial_matrix,
)
from .local import LocalInterpolant, local_interpolant

_F64 = np.dtype(np.float64)


_INTERP_REMEDIES = ("a smoothing `alpha` > 0, a larger `gamma` (kernels that are not scale invariant), or removing "
                    "(near-)duplicate points from `X`.")


def _compact_trailing(A, q):
    """Move the trailing (n-q) x (n-q) block of the Fortran-ordered ``A`` to the start
    of its buffer, Fortran-ordered, and return it (no second n x n buffer)."""
    n = A.shape[0]
    m = n - q
    flat = A.ravel(order="F")
    assert np.shares_memory(flat, A)
    for j in range(m):  # targets never overlap sources not yet moved
        src = (q + j) * n + q
        flat[j * m : (j + 1) * m] = flat[src : src + m]
    return flat[: m * m].reshape((m, m), order="F")


def _lu_singular_text(degree, kernel, min_degree):
    if degree >= min_degree:  # a user kernel not declared positive definite
        return (f"The interpolation system (solved by LU: the {kernel!r} kernel is not declared positive definite) "
                f"is singular. Remedies: {_INTERP_REMEDIES}")
    return (f"The interpolation system (solved by LU: `degree` {degree} is below the {kernel!r} kernel's minimum "
            f"{min_degree}) is singular. Remedies: `degree` >= {min_degree}, {_INTERP_REMEDIES}")


def interpolate(X: ArrayLike, Y: ArrayLike, *, kernel: KernelArg = "thin_plate_spline", gamma: float | None = None,
                degree: int | None = None, alpha: ArrayLike = 0.0, n_threads: Threads = None,
                length_scale: ArrayLike | None = None, neighbors: int | None = None) -> KernelModel | LocalInterpolant:
    """RBF interpolation with a polynomial tail, as SciPy's ``RBFInterpolator``.

    Solves ``[[K + diag(alpha), P], [P^T, 0]] [w; c] = [y; 0]``; with ``alpha = 0`` the
    model reproduces the data.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, k)
    kernel : str, default "thin_plate_spline"
        A radial kernel of :data:`fastrbf.KERNELS`.
    gamma : float, optional
        ``epsilon**2`` in SciPy's terms.  Required unless the kernel is scale invariant
        (then 1.0).
    degree : int, optional
        Degree of the polynomial tail; -1 for none.  Default: the kernel's minimum
        degree, or 0 when it has none (SciPy's default).
    alpha : float or array_like of shape (n,), default 0
        Smoothing (SciPy's ``smoothing``), added to the diagonal.
    n_threads : int, optional

    length_scale : float or array_like of shape (d,), optional
        Per-feature widths: each feature divided by its scale before the kernel (as
        :func:`fastrbf.gram`); the polynomial tail is of the points themselves.

    neighbors : int, optional
        Interpolate each query point from its ``neighbors`` nearest data points only
        (SciPy's ``RBFInterpolator(neighbors=...)``): returns a
        :class:`~fastrbf.models.local.LocalInterpolant`, whose ``predict`` solves one
        small system per distinct neighbourhood.  Memory ``O((n + m) k)``.

    Returns
    -------
    KernelModel

    Raises
    ------
    NotPositiveDefiniteError
        The system is singular (to working precision): duplicate points with
        ``alpha = 0``, or a ``gamma`` too small for the spacing of the points.

    Warns
    -----
    scipy.linalg.LinAlgWarning
        The solve reproduces ``Y`` only to more than 1e-6 relative (ill-conditioned).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import interpolate
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])
    >>> m = interpolate(X, [0.0, 1.0, 1.0, 2.0, 1.5])
    >>> bool(np.allclose(m.predict(X), [0.0, 1.0, 1.0, 2.0, 1.5]))
    True
    """
    entry = check_kernel(kernel)
    if not entry.radial:
        raise ValueError(f"`kernel` must be a radial kernel for interpolation; got {kernel!r}.")
    Xa, Ya = check_xy(X, Y)
    n, d = Xa.shape
    if gamma is None:
        if not entry.scale_invariant:
            raise ValueError(f"`gamma` must be given for the {kernel!r} kernel (it is not scale invariant).")
        gamma = 1.0
    g = check_scalar_gamma(gamma)
    min_degree = entry.min_degree
    if degree is None:
        degree = max(min_degree, 0)
    degree = _v.check_int(degree, "degree", -1, type_error=ValueError)
    if degree < min_degree:
        warnings.warn(f"`degree` should be at least {min_degree} for the {kernel!r} kernel; the "
                      "interpolant may not be well-posed (solving the full system by LU).", UserWarning, stacklevel=2)
    a = check_alpha(alpha, n)
    ls = _v.check_length_scale(length_scale, d)
    # count the monomials before listing them: C(d + degree, d) grows without bound
    q = math.comb(d + degree, d) if degree >= 0 else 0
    if n < q:
        raise ValueError(f"At least {q} data points are required when `degree` is {degree} and the "
                         f"number of dimensions is {d}; got {n}.")
    n_threads = _threads.for_dense(n, d, n_threads)
    Xd = owned(_v.to_dtype(Xa, _F64, "X"), X)
    T, single = as_targets(Ya)
    k = T.shape[1]
    powers = monomial_powers(d, degree) if degree >= 0 else np.zeros((0, d), dtype=np.int64)
    coef0 = 1.0 if entry.code == RATIONAL_QUADRATIC else 0.0  # the one kernel parameter interpolate leaves at its default
    if neighbors is not None:
        if ls is not None:
            raise ValueError("`length_scale` is not supported with `neighbors`; divide the features of `X` by it "
                             "instead.")
        return local_interpolant(Xd, T, single, _v.result_dtype(Xa, Ya), entry, kernel_value(entry), g, degree, a,
                                 neighbors, powers, coef0)
    lo, hi = Xd.min(axis=0), Xd.max(axis=0)
    shift = (hi + lo) / 2
    scale = (hi - lo) / 2
    scale[scale == 0.0] = 1.0
    P = polynomial_matrix(Xd, shift, scale, powers)
    if q and np.linalg.matrix_rank(P) < q:
        raise ValueError(f"The polynomial matrix of degree {degree} of `X` is singular: the points do not "
                         "determine a polynomial of that degree (too few distinct points, or collinear "
                         "ones). Use a lower `degree`.")
    # the kernel sees the rescaled points; the tail, affine in x, spans the same space either way
    Xk = Xd if ls is None else _v.scale_features(Xd, ls, _F64, "X")
    B, _ = gram_buffer(Xk, entry, g, 1, coef0, n_threads, "interpolate")
    del Xk
    used = 0.0
    # a user kernel not declared (conditionally) positive definite for this d: LU, as SciPy
    if degree < min_degree or undeclared(entry, d):  # ill-posed, or not known to be definite: SciPy's LU on the full system
        _v.check_memory(8 * (n + q) ** 2, f"interpolate: the {n + q} x {n + q} system", "")
        Afull = np.zeros((n + q, n + q))
        Afull[:n, :n] = B
        del B
        Afull[np.arange(n), np.arange(n)] += a
        Afull[:n, n:] = P
        Afull[n:, :n] = P.T
        rhs = np.zeros((n + q, k))
        rhs[:n] = T
        try:
            with _threads.serial_blas():
                sol = scipy.linalg.solve(Afull, rhs, overwrite_a=True, overwrite_b=True)
        except np.linalg.LinAlgError:  # exactly singular
            sol = None
        if sol is None or not np.all(np.isfinite(sol)):
            raise NotPositiveDefiniteError(_lu_singular_text(degree, kernel, min_degree), alpha=a)
        W, C = sol[:n], sol[n:]
    elif q == 0:
        d0 = diag_view(B).copy()
        F, used = _interp_factor(B, a, n_threads)
        T0 = T.copy()
        _dense.potrs(F, T, n_threads)
        W = T
        check_conditioning(F, d0 + a + used, W, T0, what="The interpolation matrix K(X, X) + diag(alpha)",
                            remedies=_INTERP_REMEDIES, alpha=a, n_threads=n_threads)
        C = np.zeros((0, k))
    else:
        with _threads.serial_blas():
            _diag_add(B, a)
            A = B.T  # Fortran view, A = K + diag(alpha) (symmetric)
            qr, tau, _, info = lapack.dgeqrf(np.asfortranarray(P))
            lw = max(1, n * 64)
            # A <- Q^T A Q in place (two applications of q reflectors)
            A, _, info1 = lapack.dormqr("L", "T", qr, tau, A, lw, overwrite_c=1)
            A, _, info2 = lapack.dormqr("R", "N", qr, tau, A, lw, overwrite_c=1)
            T12 = np.array(A[:q, q:])  # (Q^T A Q)[:q, q:], needed for the tail
            b, _, _ = lapack.dormqr("L", "T", qr, tau, T, max(1, k * 64), overwrite_c=1)  # Q^T y
            b1 = np.array(b[:q])
            b2 = np.array(b[q:], order="F")
            if q < n:
                M = _compact_trailing(A, q)
                del A
                Bm = M.T  # C-ordered view for the in-place factorisation
                dm = diag_view(Bm).copy()
                F, used = _interp_factor(Bm, 0.0, n_threads)
                b20 = b2.copy()
                _dense.potrs(F, b2, n_threads)
                z = b2
                check_conditioning(F, dm + used, z, b20, what="The interpolation system (on the polynomial null "
                                    "space)", remedies=_INTERP_REMEDIES, alpha=a, n_threads=n_threads)
                del M, F
            else:  # as many points as monomials: the polynomial alone interpolates, w = 0
                z = np.zeros((0, k))
            C = scipy.linalg.solve_triangular(np.triu(qr[:q, :q]), b1 - T12 @ z)
            wz = np.zeros((n, k), order="F")
            wz[q:] = z
            W, _, _ = lapack.dormqr("L", "N", qr, tau, wz, max(1, k * 64), overwrite_c=1)
            del B
    check_model_weights(W)
    check_model_weights(C)
    return KernelModel(centers=Xd, weights=np.ascontiguousarray(W), kernel=kernel_value(entry), gamma=g, degree=1, coef0=coef0,
                       intercept=np.zeros(k), poly_powers=powers, poly_shift=shift, poly_scale=scale,
                       poly_coef=np.ascontiguousarray(C), dtype=_v.result_dtype(Xa, Ya), single_output=single,
                       jitter=used, length_scale=ls)


def _interp_factor(B, a, n_threads):
    try:
        return factor_in_place(B, a, None, n_threads)
    except NotPositiveDefiniteError as exc:
        raise NotPositiveDefiniteError(
            f"The interpolation system is not positive definite (numerically singular) on the "
            f"polynomial null space: the factorisation broke down at column {exc.column}. Causes: "
            f"duplicate points with `alpha` = 0, or a `gamma` so small against the spacing of the "
            f"points that the kernel matrix is numerically singular. Remedies: a smoothing `alpha` "
            f"> 0, a larger `gamma`, or removing duplicate points.", column=exc.column, alpha=a) from None


def _diag_add(B, a):
    n = B.shape[0]
    B.reshape(-1)[:: n + 1] += a

