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
- ``method``: ``"dense"`` is the solve above; ``"local"`` is SciPy's local mode
  (``neighbors=k``, :mod:`~fastrbf.models.local`); ``"pu"`` the partition-of-unity
  interpolant (:mod:`~fastrbf.models.pou`), ``O(n)`` memory.  ``"auto"`` (the default)
  takes "local" when ``neighbors`` is given, else "dense" up to ``AUTO_DENSE_MAX``
  points and "pu" above.  ``AUTO_DENSE_MAX`` = 10 000 is set by memory and time: the
  dense system needs ``8 n^2`` bytes (0.8 GB at 10 000 points, 3.2 GB at 20 000), and
  its Cholesky grows as ``n^3`` (measured on 2 busy cores, thin-plate spline in 3-D:
  2.3 s at 5 000 points, 9.4 s at 10 000), while the partition of unity grows as ``n``
  (0.2 s at 10 000 points, with about 2x the dense error).  A degree
  below the kernel's minimum, or a user kernel not declared positive definite, stays
  dense (the partition of unity solves by Cholesky only).
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
from ..linalg import NotPositiveDefiniteError, SingularMatrixError, check_alpha, check_conditioning, diag_view, factor_in_place
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
from .pou import CORNER_POINTS, PATCH_POINTS, LocalSystem, PartitionOfUnityInterpolant, fit_partition_of_unity

_F64 = np.dtype(np.float64)

#: ``method="auto"``: the dense solve up to this many points, the partition of unity above
AUTO_DENSE_MAX = 10_000
METHODS = ("auto", "dense", "local", "pu")


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
                length_scale: ArrayLike | None = None, neighbors: int | None = None, method: str = "auto",
                patch_points: int | None = None) -> KernelModel | LocalInterpolant | PartitionOfUnityInterpolant:
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
        small system per distinct neighbourhood.  Memory ``O((n + m) k)``.  More than
        ``n`` means all ``n`` (as SciPy).
    method : {"auto", "dense", "local", "pu"}, default "auto"
        "dense": the system above, ``O(n^2)`` memory; "local": SciPy's local mode
        (needs ``neighbors``); "pu": a partition-of-unity interpolant (see
        :func:`fastrbf.partition_of_unity`), ``O(n)`` memory, for up to millions of
        points.  "auto": "local" when ``neighbors`` is given, else "dense" up to
        :data:`AUTO_DENSE_MAX` points and "pu" above.
    patch_points : int, optional
        For "pu": the points each patch holds at least (default 100); patches at the
        faces and corners of the data's bounding box hold more.

    Returns
    -------
    KernelModel, LocalInterpolant or PartitionOfUnityInterpolant
        By the method: ``KernelModel`` (``solver="cholesky"``) for "dense",
        ``LocalInterpolant`` for "local", ``PartitionOfUnityInterpolant``
        (``solver="pu"``) for "pu".

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
    method = _v.check_choice(method, "method", METHODS)
    entry = check_radial(kernel)
    Xa, Ya = check_xy(X, Y)
    n, d = Xa.shape
    method, local, a, ls = check_interp_params(entry, kernel, gamma, degree, alpha, length_scale, n, d, method,
                                               neighbors, patch_points)
    g, degree, powers, coef0 = local.gamma, local.degree, local.powers, local.coef0
    min_degree = entry.min_degree
    q = powers.shape[0]
    n_threads = _threads.for_dense(n, d, n_threads)
    Xd = owned(_v.to_dtype(Xa, _F64, "X"), X)
    T, single = as_targets(Ya)
    k = T.shape[1]
    if neighbors is not None:
        if ls is not None:
            raise ValueError("`length_scale` is not supported with `neighbors`; divide the features of `X` by it "
                             "instead.")
        tail_matrix(Xd, powers, degree)  # points that determine no tail: every neighbourhood is singular too
        return local_interpolant(Xd, T, single, _v.result_dtype(Xa, Ya), entry, kernel_value(entry), g, degree, a,
                                 neighbors, powers, coef0)
    if method == "pu":
        Xk = Xd if ls is None else _v.scale_features(Xd, ls, _F64, "X")
        return fit_partition_of_unity(Xk, T, single, _v.result_dtype(Xa, Ya), local, per_point(a, n), ls,
                                      PATCH_POINTS if patch_points is None else patch_points, n_threads)
    shift, scale, P = tail_matrix(Xd, powers, degree)
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


def check_radial(kernel):
    """The registry entry of ``kernel``, a radial kernel (interpolation needs one)."""
    entry = check_kernel(kernel)
    if not entry.radial:
        raise ValueError(f"`kernel` must be a radial kernel for interpolation; got {kernel!r}.")
    return entry


def tail_matrix(Xd, powers, degree):
    """(shift, scale, P): the monomials ``powers`` at the rows of ``Xd`` rescaled to [-1, 1];
    :class:`~fastrbf.linalg.SingularMatrixError` (NumPy's ``LinAlgError``, as SciPy raises,
    and a ``ValueError``) when ``P`` does not have
    full column rank: then no tail of that degree is determined."""
    lo, hi = Xd.min(axis=0), Xd.max(axis=0)
    shift = (hi + lo) / 2
    scale = (hi - lo) / 2
    scale[scale == 0.0] = 1.0
    P = polynomial_matrix(Xd, shift, scale, powers)
    if powers.shape[0] and np.linalg.matrix_rank(P) < powers.shape[0]:
        raise SingularMatrixError(
            f"The polynomial matrix of degree {degree} of `X` is singular (it does not have full column rank): the "
            "points do not determine a polynomial of that degree (too few distinct points, or collinear ones). Use a "
            "lower `degree`.")
    return shift, scale, P


def check_interp_params(entry, kernel, gamma, degree, alpha, length_scale, n, d, method, neighbors, patch_points):
    """The checked parameters of an interpolation of ``n`` points in ``d`` dimensions
    with the kernel ``entry``: (the method, the :class:`LocalSystem`, alpha (a float
    or (n,)), length_scale or None); warns when ``degree`` is below the kernel's minimum."""
    if gamma is None:
        if not entry.scale_invariant:
            raise ValueError(f"`gamma` must be given for the {kernel!r} kernel (it is not scale invariant).")
        gamma = 1.0
    g = check_scalar_gamma(gamma)
    min_degree = entry.min_degree
    if degree is None:
        degree = max(min_degree, 0)
    degree = _v.check_int(degree, "degree", -1, type_error=ValueError)
    method = _resolve_method(method, n, neighbors, patch_points, degree < min_degree or undeclared(entry, d))
    if method == "pu" and (degree < min_degree or undeclared(entry, d)):
        raise ValueError(f"`method` 'pu' needs `degree` >= {min_degree} and a kernel declared (conditionally) positive "
                         f"definite for the {kernel!r} kernel; got `degree` {degree}. Use method='dense'.")
    if method == "pu" and patch_points is not None:
        p = _v.check_int(patch_points, "patch_points", 1)
        if 2 * p > n:  # a patch would hold (nearly) all the data: one dense system, O(n^3), and many of them
            raise ValueError(f"`patch_points` must be at most half the number of points (n = {n}) for a partition of "
                             f"unity; got {p}. Use method='dense' (the whole system at once), or fewer `patch_points`.")
        # the largest local system (a corner patch) of every thread, before the covering is built
        side = min(n, int(CORNER_POINTS * p))
        _v.check_memory(8 * side * side * _threads.resolve(None), f"partition_of_unity: local systems of up to {side} "
                        "points", "use fewer `patch_points`.")
    if -1 < degree < min_degree:  # SciPy's rule: -1 (no polynomial) is a deliberate choice, without a warning
        warnings.warn(f"`degree` should not be below {min_degree} (except -1, no polynomial) for the {kernel!r} "
                      "kernel; the interpolant may not be well-posed (solving the full system by LU).", UserWarning,
                      stacklevel=3)
    a = check_alpha(alpha, n)
    ls = _v.check_length_scale(length_scale, d)
    # count the monomials before listing them: C(d + degree, d) grows without bound
    q = math.comb(d + degree, d) if degree >= 0 else 0
    if n < q:
        raise ValueError(f"At least {q} data points are required when `degree` is {degree} and the "
                         f"number of dimensions is {d}; got {n}.")
    powers = monomial_powers(d, degree) if degree >= 0 else np.zeros((0, d), dtype=np.int64)
    coef0 = 1.0 if entry.code == RATIONAL_QUADRATIC else 0.0  # the one kernel parameter interpolate leaves at its default
    return method, LocalSystem(entry, kernel_value(entry), g, degree, powers, coef0), a, ls


def per_point(a, n):
    """``alpha`` (a float or (n,)) as an owned float64 (n,) array."""
    return np.ascontiguousarray(np.broadcast_to(np.asarray(a, dtype=np.float64), (n,)))


def _resolve_method(method, n, neighbors, patch_points, dense_only):
    """The method that ``method`` names for ``n`` points; refuses arguments of another method."""
    if neighbors is not None and method not in ("auto", "local"):
        raise ValueError(f"`neighbors` is only used by method='local'; got method={method!r}.")
    if method == "local" and neighbors is None:
        raise ValueError("`neighbors` must be given with method='local'; got None.")
    if patch_points is not None and method in ("dense", "local"):
        raise ValueError(f"`patch_points` is only used by method='pu'; got method={method!r}.")
    if method == "auto":
        return "local" if neighbors is not None else ("pu" if n > AUTO_DENSE_MAX and not dense_only else "dense")
    return method


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



def partition_of_unity(X: ArrayLike, Y: ArrayLike, *, kernel: KernelArg = "thin_plate_spline",
                       gamma: float | None = None, degree: int | None = None, alpha: ArrayLike = 0.0,
                       length_scale: ArrayLike | None = None, patch_points: int | None = None,
                       n_threads: Threads = None) -> PartitionOfUnityInterpolant:
    """Partition-of-unity RBF interpolation, for up to millions of points in ``O(n)`` memory.

    Overlapping balls (patches) centred on a regular grid over the data's bounding box
    each solve :func:`interpolate`'s system on their own points; the local interpolants
    ``s_j`` are blended with Wendland's C2 weights ``w_j(x) = psi(|x - c_j| / rho_j)``:
    ``f(x) = sum_j w_j(x) s_j(x) / sum_j w_j(x)``.  With ``alpha = 0``, ``f`` reproduces
    the data.  ``f`` is ``C^min(2, k)``: the weights are ``C^2`` and ``k`` is the
    kernel's smoothness (0 for linear, laplacian/matern12; 1 for thin_plate_spline,
    whose second derivative is infinite at the data points; at least 2 for cubic and
    the smoother kernels).  The fit runs one task per patch in parallel; results do not depend on
    the thread count.  The same as ``interpolate(..., method="pu")``.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, k)
    kernel, gamma, degree, alpha, length_scale :
        As :func:`interpolate` (``degree`` at least the kernel's minimum).
    patch_points : int, optional
        The points each patch holds at least (default 100; all of them if fewer): the
        grid is sized for this many per patch on evenly spread data, and patches at the
        faces of the box or in sparse regions are enlarged to hold them.  Larger
        patches: smaller errors, ``O(patch_points^2)`` work per point.
    n_threads : int, optional

    Returns
    -------
    PartitionOfUnityInterpolant
        Its ``predict`` evaluates the blend (and its gradient); a query outside every
        patch (far outside the bounding box) takes the local interpolant of the patch
        nearest to it relative to its radius (extrapolation).

    Raises
    ------
    ValueError
        A patch with fewer points than the tail's monomials, or whose points do not
        determine the tail (collinear points for ``degree=1`` in 2-D): the message
        names the patch's centre; use a larger ``patch_points`` or a lower ``degree``.
    NotPositiveDefiniteError
        A patch whose system is singular (duplicate points with ``alpha = 0``, or a
        ``gamma`` too small for the spacing): use a smoothing ``alpha`` > 0, a larger
        ``gamma``, or remove the duplicates.

    Warns
    -----
    scipy.linalg.LinAlgWarning
        A patch's solve reproduces its ``Y`` only to more than 1e-6 relative.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import partition_of_unity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((2000, 2))
    >>> y = np.sin(4 * X[:, 0]) * np.cos(3 * X[:, 1])
    >>> m = partition_of_unity(X, y)
    >>> bool(np.abs(m.predict(X) - y).max() < 1e-10)
    True
    >>> bool(abs(m.predict([[0.3, 0.6]])[0] - np.sin(1.2) * np.cos(1.8)) < 1e-4)
    True
    """
    model = interpolate(X, Y, kernel=kernel, gamma=gamma, degree=degree, alpha=alpha, n_threads=n_threads,
                        length_scale=length_scale, method="pu", patch_points=patch_points)
    assert isinstance(model, PartitionOfUnityInterpolant)
    return model
