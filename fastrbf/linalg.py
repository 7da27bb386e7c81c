"""Cholesky factorisation of regularised symmetric positive definite matrices, and solves.

``cholesky(K, alpha=a)`` factors ``K + a I`` (``a`` a scalar or one value per row: ridge,
smoothing, noise) by a blocked factorisation on fixed blocks (:mod:`fastrbf._dense`:
LAPACK ``potrf`` on 256 x 256 diagonal blocks, ``trsm``/``syrk``/``gemm`` for the rest,
each block on one BLAS thread, blocks in parallel) and solves by blocked triangular
solves: bitwise the same for any thread count, at ``dpotrf``'s speed, at any n.

Decisions:

- The factorisation runs in float64, also for float32 input (a float32 Cholesky of an
  RBF Gram matrix loses most digits); ``dtype=np.float32`` asks for a float32 one.
  Solutions come back in the input's dtype (float32 when ``K`` and ``Y`` are float32).
- ``overwrite=True`` factors in the caller's buffer when it is float64 (C- or
  Fortran-contiguous): the diagonal gets ``alpha`` added and the factor is written
  over one triangle; no copy of ``K`` is made.  Otherwise one n x n copy is made.
- The other triangle is left untouched (as LAPACK's ``potrf``), so a failed factorisation
  can be undone without a copy: that is how ``jitter="auto"`` retries in place with
  ``alpha + j * mean(diag)``, ``j`` in ``1e-10, 1e-9, ..., 1e-3``.
- ``K`` must be symmetric to ``max |K - K^T| <= 1000 eps max |K|`` (a check of O(n^2)
  reads, small beside the O(n^3) factorisation).
- A factorisation that completes with a pivot ``L_jj^2 <= 4 sqrt(n) eps (K_jj + alpha_j)``
  (the rounding noise left where an exactly singular matrix has a zero pivot: measured
  ~eps for duplicated points) is treated as a breakdown: such a matrix is singular to
  working precision (duplicate points with ``alpha = 0``), and the weights it would give
  are noise.  Merely ill-conditioned matrices (pivots of 1e-12, say) are factored.
- The exact solves of the models (:func:`fastrbf.kernel_ridge` with the Cholesky
  solver, :func:`fastrbf.interpolate`) then check the factored system
  (:func:`check_conditioning`), because a factorisation can complete on a matrix whose
  solution is rounding noise:

  - The residual ``Y - A W`` of the solve is computed with the stored triangle (one
    O(n^2 k) pass).  When it exceeds :data:`RESIDUAL_WARN` of ``max |Y|``, or when the
    free lower bound ``(max L_jj / min L_jj)^2`` on the condition number exceeds
    :data:`COND_SUSPECT` (``1 / sqrt(eps)``), LAPACK ``pocon`` estimates the reciprocal
    condition number ``rcond`` from the factor (the 1-norm of the matrix comes from the
    triangle the factorisation leaves untouched and the saved diagonal); ``pocon``'s
    dozen triangular passes would otherwise add a third to a fit at n = 2000.
    ``rcond < eps`` (condition number above ``1 / eps = 4.5e15``): the matrix is singular to working precision (the line SciPy
    draws for its ``LinAlgWarning``) and :class:`NotPositiveDefiniteError` is raised
    with the remedies (a larger ``alpha``, a larger ``gamma``, removing near-duplicate
    points).
  - Otherwise, when the residual exceeds :data:`RESIDUAL_WARN` (``1e-6``) of
    ``max |Y|``, the weights are large enough that their rounding shows in the fit (two
    points 3e-7 apart with ``alpha = 0`` give weights of 1e13 and miss their own
    targets by 1e-3): a
    ``scipy.linalg.LinAlgWarning`` says by how much, with the same remedies, and the
    model is returned.
"""

import warnings
from dataclasses import dataclass

import numpy as np

from . import _dense, _threads
from . import _validation as _v
from ._jit import linalg as _jl
from ._jit import pairwise as _jp
from ._lazy import blas, lapack, scipy
from ._typing import ArrayLike, DTypeLike, FloatArray, Threads

#: the ``jitter="auto"`` ladder, in units of the mean diagonal
JITTER_LADDER = tuple(10.0**e for e in range(-10, -2))

_SYM_RTOL = 1000.0

_OVERFLOW_HINT = "rescale `Y` (or `K`), or use a larger `alpha`."

#: the exact solves warn when the residual exceeds this share of max |Y|
RESIDUAL_WARN = 1e-6
#: a lower bound on the condition number above which it is estimated (``1 / sqrt(eps)``)
COND_SUSPECT = 1.0 / np.sqrt(np.finfo(np.float64).eps)


class SingularMatrixError(np.linalg.LinAlgError, ValueError):
    """A matrix the computation needs is singular: NumPy's ``LinAlgError`` and a
    ``ValueError`` with every NumPy (``LinAlgError`` is a ``ValueError`` only from NumPy 2
    on), so that either ``except`` catches it.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.linalg import SingularMatrixError
    >>> issubclass(SingularMatrixError, np.linalg.LinAlgError), issubclass(SingularMatrixError, ValueError)
    (True, True)
    """


class NotPositiveDefiniteError(SingularMatrixError):
    """The (regularised) matrix is not positive definite (a :class:`SingularMatrixError`:
    NumPy's ``LinAlgError`` and a ``ValueError``).

    Attributes
    ----------
    column : int
        The 0-based column at which the factorisation broke down.
    alpha : float or ndarray
        The regularisation that was in use (plus any jitter tried).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import NotPositiveDefiniteError, cholesky
    >>> try:
    ...     cholesky(np.ones((3, 3)))
    ... except NotPositiveDefiniteError as err:
    ...     print(err.column)
    1
    """

    def __init__(self, message, column=None, alpha=None):
        super().__init__(message)
        self.column = column
        self.alpha = alpha


def diag_view(A):
    """A writeable view of the diagonal of a square contiguous array."""
    n = A.shape[0]
    flat = A.ravel(order="A")  # a view for C- and Fortran-contiguous arrays
    assert np.shares_memory(flat, A)
    return flat[:: n + 1]


def _alpha_text(alpha):
    a = np.asarray(alpha)
    return f"{float(a):g}" if a.ndim == 0 else f"per-row, in [{a.min():g}, {a.max():g}]"


def check_alpha(alpha, n, name="alpha"):
    """A float >= 0, or a length-n float64 array of values >= 0."""
    a = _v._convert(alpha, name)  # ragged: a ValueError naming `name`
    if a.dtype.kind not in "iuf" or a.ndim > 1:
        raise TypeError(f"`{name}` must be a number or a 1-D array of numbers; got {alpha!r}.")
    a = a.astype(np.float64)
    if a.ndim == 1 and a.shape[0] != n:
        raise ValueError(f"`{name}` must be a scalar or have one value per row ({n}); got shape {a.shape}.")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"`{name}` must be finite and >= 0; got {alpha!r}.")
    return float(a) if a.ndim == 0 else np.ascontiguousarray(a)


@dataclass(frozen=True, eq=False)
class CholeskyFactor:
    """The Cholesky factor of ``K + (alpha + jitter) I``, from :func:`cholesky`.

    Attributes
    ----------
    factor : ndarray of shape (n, n), Fortran-ordered
        Its lower triangle (LAPACK's view) holds ``L`` with ``K + alpha I = L L^T``;
        the strict upper triangle is left as it was (``K``, when ``K`` was given whole).
    alpha : float or ndarray of shape (n,)
        The regularisation that was asked for.
    jitter : float
        What ``jitter`` added on top of ``alpha`` (0.0 when nothing was added).
    dtype : numpy.dtype
        The dtype of the input; solutions are returned in it (float32 only when the
        right-hand side is float32 too).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import cholesky
    >>> F = cholesky(np.array([[4.0, 2.0], [2.0, 3.0]]), alpha=1.0)
    >>> F.n, round(F.logdet(), 6), F.solve([5.0, 4.0]).round(6).tolist()
    (2, 2.772589, [0.75, 0.625])
    """

    factor: np.ndarray
    alpha: object
    jitter: float
    dtype: np.dtype

    @property
    def n(self) -> int:
        """Order of the matrix."""
        return self.factor.shape[0]

    def solve(self, Y: ArrayLike, *, n_threads: Threads = None) -> FloatArray:
        """Solve ``(K + alpha I) W = Y``.

        Parameters
        ----------
        Y : array_like of shape (n,) or (n, k)
        n_threads : int, optional
            BLAS threads (``None`` = all cores).

        Returns
        -------
        W : ndarray of the shape of ``Y``

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import cholesky
        >>> f = cholesky(np.array([[4.0, 2.0], [2.0, 3.0]]))
        >>> f.solve([2.0, 1.0])
        array([0.5, 0. ])
        """
        Ya = _v.as_array(Y, "Y", ndim=(1, 2))
        _v.check_finite(Ya, "Y")
        if Ya.shape[0] != self.n:
            raise ValueError(f"`Y` must have one row per row of the matrix ({self.n}); got shape {Ya.shape}.")
        out_dtype = _v.result_dtype(self.dtype, Ya)
        _check_range(Ya, "Y", self.factor.dtype)
        B = np.array(Ya, dtype=self.factor.dtype, order="F", copy=True)
        W = B.reshape(B.shape[0], -1, order="F")  # a view: (n,) -> (n, 1)
        _dense.potrs(self.factor, W, n_threads)
        W = B
        _v.check_result(W, "The solution of (K + alpha I) W = Y", "`K`, `alpha` and `Y`", _OVERFLOW_HINT)
        with np.errstate(over="ignore"):
            W = W.astype(out_dtype, copy=False)
        _v.check_result(W, "The solution of (K + alpha I) W = Y", "`K`, `alpha` and `Y`", _OVERFLOW_HINT)
        return W

    def logdet(self) -> float:
        """``log det(K + alpha I)`` from the diagonal of the factor.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import cholesky
        >>> round(cholesky(np.array([[4.0, 2.0], [2.0, 3.0]])).logdet(), 6)  # log(8)
        2.079442
        """
        return 2.0 * float(np.sum(np.log(diag_view(self.factor))))


def _check_square(K, name="K"):
    Ka = _v.as_array(K, name)
    if Ka.shape[0] != Ka.shape[1]:
        raise ValueError(f"`{name}` must be a square matrix; got shape {Ka.shape}.")
    _v.check_finite(Ka, name)
    return Ka


def _check_range(arr, name, dtype, extra=0.0):
    """Values (plus ``extra``) representable in ``dtype`` (a float32 factorisation)."""
    if np.dtype(dtype) != np.float32:
        return
    big = max(float(np.max(arr)), -float(np.min(arr))) + extra
    limit = float(np.finfo(np.float32).max) / 4
    if big > limit:
        what = f"`{name}` (with `alpha` added)" if extra else f"`{name}`"
        raise ValueError(f"{what} must have values of magnitude at most {limit:.3g} for a float32 factorisation; "
                         f"got {big:.3g}. Use the default float64 `dtype`.")


def _native_float(Ka, fdtype, name="K"):
    """``Ka`` as a native float32/float64 array (integers, bools and float16 become
    ``fdtype``, byte-swapped floats native), and whether that is a new array."""
    dt = Ka.dtype
    if dt.kind == "f" and dt.itemsize in (4, 8):
        if dt.isnative:
            return Ka, False
        target = dt.newbyteorder("=")
    else:
        target = fdtype
    _v.check_memory(Ka.size * target.itemsize, f"cholesky: a {Ka.shape[0]} x {Ka.shape[1]} {target} copy of `{name}`",
                    f"pass `{name}` as a native float64 array.")
    return np.array(Ka, dtype=target, order="C"), True


def _check_symmetric(A, name, n_threads):
    n = A.shape[0]
    part = np.empty((n + _jl.SB - 1) // _jl.SB, dtype=np.float64)
    _jl.asymmetry.run(n_threads, A, part)
    worst = float(part.max())
    scale = float(np.abs(A).max()) if worst > 0 else 0.0
    tol = _SYM_RTOL * np.finfo(A.dtype).eps * scale
    if worst > tol:
        raise ValueError(
            f"`{name}` must be symmetric; got max |{name} - {name}.T| = {worst:.3g} "
            f"(allowed {tol:.3g} = {_SYM_RTOL:g} eps max |{name}|)."
        )


def factor_in_place(B, alpha, jitter, n_threads, name="K", whole=True):
    """Factor ``B + alpha I`` in the C-contiguous symmetric buffer ``B``: LAPACK reads
    the upper triangle of ``B`` (the lower one of the Fortran view ``B.T``) and writes
    the factor over it; the strict lower triangle of ``B`` is kept.  ``whole=False``
    says only the upper triangle was filled (it is mirrored first if a retry may be
    needed).  Returns the Fortran-ordered view that holds the factor, and the jitter."""
    A = B.T  # Fortran-ordered view of the same (symmetric) matrix
    d = diag_view(A)
    d0 = d.copy()  # the diagonal of K, to undo a failed try
    mean_diag = float(np.mean(d0 + alpha))
    if not np.isfinite(mean_diag) or mean_diag <= 0:
        mean_diag = 1.0
    if jitter is None:
        ladder: tuple[float, ...] = (0.0,)
    elif isinstance(jitter, str):
        if jitter != "auto":
            raise ValueError(f'`jitter` must be None, "auto" or a number >= 0; got {jitter!r}.')
        ladder = (0.0, *(j * mean_diag for j in JITTER_LADDER))
    else:
        j = check_alpha(jitter, B.shape[0], "jitter")
        if isinstance(j, np.ndarray):
            raise TypeError('`jitter` must be None, "auto" or a number >= 0; got an array.')
        ladder = (j,)
    nt = _threads.resolve(n_threads)
    if len(ladder) > 1 and not whole:
        _jp.mirror_upper.run(nt, B)  # keep a copy of K for the retries
    eps = np.finfo(A.dtype).eps
    n = B.shape[0]
    singular = False
    for t, jit_value in enumerate(ladder):
        if t > 0:  # undo the failed try: upper triangle := lower, diagonal := K's
            _jl.mirror_lower.run(nt, B)
        full = d0 + alpha + jit_value
        d[:] = full
        info = _dense.potrf(A, nt)  # in place: the factor is A's lower triangle
        F = A
        singular = False
        if info == 0:
            # a pivot at the level of the rounding noise of an exactly singular matrix
            # (measured ~eps for duplicated rows; bound 4 sqrt(n) eps of the diagonal) is
            # numerically zero: the matrix is singular to working precision
            piv = diag_view(F)
            bad = np.flatnonzero(piv * piv <= 4 * np.sqrt(n) * eps * np.abs(full))
            if bad.size == 0:
                return F, float(jit_value)
            info = int(bad[0]) + 1
            singular = True
    col = int(info) - 1
    tried = f"; jitter up to {ladder[-1]:.3g} was tried" if len(ladder) > 1 else ""
    why = (" The pivot there is below the rounding level (4 sqrt(n) eps of the diagonal): the matrix "
           "is singular to working precision." if singular else "")
    raise NotPositiveDefiniteError(
        f"`{name}` + alpha I is not positive definite: the factorisation broke down at column "
        f"{col} (alpha = {_alpha_text(alpha)}{tried}).{why} Remedies: a larger `alpha` "
        f"(e.g. 1e-8 x the mean diagonal = {1e-8 * mean_diag:.3g}), `jitter=\"auto\"`, removing "
        f"duplicate points, or a positive definite kernel.",
        column=col,
        alpha=alpha,
    )


def _sym_norm1_upper(A, block=256):
    """1-norm (largest column sum of absolute values) of the symmetric matrix whose
    upper triangle (diagonal included) is stored in the Fortran-ordered ``A``."""
    n = A.shape[0]
    col = np.zeros(n)
    row = np.zeros(n)
    for j0 in range(0, n, block):
        j1 = min(n, j0 + block)
        blk = np.abs(A[:j1, j0:j1])
        sq = blk[j0:j1]
        sq[np.tril_indices(j1 - j0, -1)] = 0.0
        col[j0:j1] += blk.sum(axis=0)
        sq[np.diag_indices(j1 - j0)] = 0.0
        row[:j1] += blk.sum(axis=1)
    return float((col + row).max())


def check_conditioning(F, diag, W, Y, *, what, remedies, alpha=None, n_threads=None):
    """Check an exact solve ``A W = Y`` done with the Cholesky factor ``F`` of ``A``.

    ``F`` is Fortran-ordered with the factor in its lower triangle and ``A``'s strict
    upper triangle untouched (as :func:`factor_in_place` leaves it); ``diag`` is the
    diagonal of ``A`` (regularisation included).  ``W`` and ``Y`` are (n, k).  Raises
    :class:`NotPositiveDefiniteError` when ``A`` is singular to working precision
    (``rcond < eps``), warns (``scipy.linalg.LinAlgWarning``) when the residual exceeds
    ``RESIDUAL_WARN max |Y|``; see the module docstring."""
    d = diag_view(F)
    fd = d.copy()
    Wf = np.asfortranarray(W, dtype=np.float64)
    Yf = np.asarray(Y)
    # the condition number is at least (max L_jj / min L_jj)^2 (the pivots are Schur
    # complements, between the extreme eigenvalues): a free lower bound
    lo = float(np.abs(fd).min())
    bound = float(np.abs(fd).max()) ** 2 / lo**2 if lo > 0 else np.inf
    eps = float(np.finfo(np.float64).eps)
    anorm = None
    try:
        d[:] = diag  # F's upper triangle is now A
        with _threads.serial_blas():
            if Wf.shape[1] == 1:
                AW = blas.dsymv(1.0, F, Wf[:, 0], lower=0)[:, None]
            else:
                AW = blas.dsymm(1.0, F, Wf, side=0, lower=0)
        scale = float(np.abs(Yf).max()) if Yf.size else 0.0
        miss = float(np.abs(Yf - AW).max()) if Yf.size else 0.0
        bad_fit = scale > 0 and miss > RESIDUAL_WARN * scale
        if bad_fit or bound > COND_SUSPECT:  # only then the O(n^2)-passes estimate
            anorm = _sym_norm1_upper(F)
    finally:
        d[:] = fd
    if anorm is None:
        return
    with _threads.serial_blas():
        rcond, info = lapack.dpocon(F, anorm, uplo="L")
    if info == 0 and rcond < eps:
        cond = f"{1.0 / rcond:.3g}" if rcond > 0 else "inf"
        raise NotPositiveDefiniteError(
            f"{what} is numerically singular: its estimated condition number {cond} exceeds 1/eps = "
            f"{1.0 / eps:.3g}, so its solution would be rounding noise. Remedies: {remedies}",
            column=None, alpha=alpha)
    if bad_fit:
        warnings.warn(
            f"{what} is ill-conditioned (estimated condition number {1.0 / rcond:.3g}): the solve reproduces its "
            f"right-hand side only to {miss / scale:.3g} relative (largest weight {float(np.abs(W).max()):.3g}). "
            f"Remedies: {remedies}", scipy.linalg.LinAlgWarning, stacklevel=3)


def cholesky(K: ArrayLike, *, alpha: ArrayLike = 0.0, overwrite: bool = False, jitter: float | str | None = None,
             dtype: DTypeLike | None = None, n_threads: Threads = None) -> "CholeskyFactor":
    """Cholesky factor of ``K + alpha I`` for solves and log-determinants.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric (to ``1000 eps max|K|``) and, with ``alpha``, positive definite.
    alpha : float or array_like of shape (n,), default 0
        Added to the diagonal (ridge, smoothing, noise); >= 0.
    overwrite : bool, default False
        Factor in ``K``'s own memory when it is a contiguous float64 (or, with
        ``dtype=np.float32``, float32) array: ``K`` is destroyed, no copy is made.
    jitter : None, "auto" or float
        ``None``: fail if not positive definite.  ``"auto"``: retry with
        ``alpha + j mean(diag)``, ``j = 1e-10, 1e-9, ..., 1e-3``; the value used is in
        ``.jitter``.  A number: added to the diagonal as well.
    dtype : numpy dtype, optional
        The factorisation dtype: float64 (default, also for float32 input) or float32.
    n_threads : int, optional
        Threads for LAPACK/BLAS and the checks (``None`` = all cores).

    Returns
    -------
    CholeskyFactor
        With ``.solve(Y)``, ``.logdet()`` and ``.jitter``.

    Raises
    ------
    NotPositiveDefiniteError
        Naming the column, the ``alpha`` in use and the remedies.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import cholesky, gram
    >>> X = np.array([[0.0], [0.5], [2.0]])
    >>> f = cholesky(gram(X, gamma=1.0), alpha=1e-3)
    >>> bool(np.allclose((gram(X, gamma=1.0) + 1e-3 * np.eye(3)) @ f.solve([1.0, 2.0, 3.0]), [1, 2, 3]))
    True
    >>> cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))
    Traceback (most recent call last):
    ...
    fastrbf.linalg.NotPositiveDefiniteError: `K` + alpha I is not positive definite: the factorisation broke down at column 1 ...
    """
    Ka = _check_square(K)
    n = Ka.shape[0]
    a = check_alpha(alpha, n)
    fdtype = _v.check_float_dtype(dtype, text="float64 or float32")
    _check_range(Ka, "K", fdtype, float(np.max(a)))
    Ka, fresh = _native_float(Ka, fdtype)
    in_dtype = _v.result_dtype(Ka)
    if overwrite and isinstance(K, np.ndarray) and K.dtype == fdtype and K.flags.writeable and K.dtype.isnative:
        if K.flags.c_contiguous:
            B = K
        elif K.flags.f_contiguous:
            B = K.T  # symmetric: its transpose is the same matrix, C-ordered
        else:
            B = None
    else:
        B = None
    _check_symmetric(Ka if B is None else B, "K", n_threads)
    if B is None and fresh and Ka.dtype == fdtype and Ka.flags.c_contiguous:
        B = Ka  # the converted copy is ours: factor it in place
    if B is None:
        _v.check_memory(n * n * fdtype.itemsize, f"cholesky: a {n} x {n} {fdtype} copy of `K`",
                        "pass a float64 `K` with `overwrite=True` to factor it in place.")
        B = np.array(Ka, dtype=fdtype, order="C", copy=True)
    A, used = factor_in_place(B, a, jitter, n_threads)
    return CholeskyFactor(A, a, used, in_dtype)


def solve_regularized(K: ArrayLike, Y: ArrayLike, *, alpha: ArrayLike, overwrite: bool = False,
                      jitter: float | str | None = None, n_threads: Threads = None) -> FloatArray:
    """Solve ``(K + alpha I) W = Y`` by a Cholesky factorisation.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric; ``K + alpha I`` positive definite.
    Y : array_like of shape (n,) or (n, k)
    alpha : float or array_like of shape (n,)
        Added to the diagonal, >= 0.
    overwrite, jitter, n_threads :
        As in :func:`cholesky`.

    Returns
    -------
    W : ndarray of the shape of ``Y``

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import solve_regularized
    >>> solve_regularized(np.eye(2), [2.0, 4.0], alpha=1.0)
    array([1., 2.])
    """
    return cholesky(K, alpha=alpha, overwrite=overwrite, jitter=jitter, n_threads=n_threads).solve(Y, n_threads=n_threads)
