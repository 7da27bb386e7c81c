"""Kernel ridge regression: the exact solve (Cholesky of the n x n Gram matrix) and
the Nystroem solves for large n (direct, or Falkon's conjugate gradients).

Decisions:

- **solver="cholesky"** builds the Gram matrix in float64 straight into the one n x n
  buffer that LAPACK then factors in place (peak memory about one n x n float64
  matrix).  ``fit_intercept=True`` fits on ``Y - mean(Y)`` and adds the mean back.
  The solve is checked after the factorisation
  (:func:`fastrbf.linalg.check_conditioning`): a system singular to working precision
  (estimated condition number > 1/eps) raises :class:`~fastrbf.NotPositiveDefiniteError`,
  one whose solve misses its own targets by more than 1e-6 of max |Y| gives a
  ``scipy.linalg.LinAlgWarning``.
- **solver="nystrom"** and **solver="nystrom-pcg"** (large n; "auto" takes one when
  one n x n float64 matrix would take more than half the free memory, or landmarks are
  asked for) solve the Nystroem system ``(K_nm^T K_nm + alpha K_mm) beta = K_nm^T Y``
  without any n x n or n x m matrix (see :mod:`fastrbf.models.falkon`); the model's
  centres are the landmarks.  "nystrom" folds the Nystroem features chunk by chunk into
  an m x m system and factors it (about ``2 n m^2`` flops of BLAS, one kernel pass);
  "nystrom-pcg" runs Falkon's preconditioned conjugate gradients (two kernel passes per
  iteration, ``O(n m)`` flops each).  Both reach the same solution (to the CG
  tolerance).  "auto" solves directly up to :data:`DIRECT_MAX_LANDMARKS` landmarks:
  its cost is known in advance (no iteration count), BLAS runs near its peak where the
  kernels' ``exp`` does not (AVX2), and with 2000 landmarks (the default at n = 10^6)
  it took 23.5 s against 39.8 s for the CG at n = 200000 on a 2-core AVX-512 Xeon.
  The CG is kept for very many landmarks (the direct cost grows as m^2) and for dask.
- The backend-free steps of "nystrom-pcg" are plain functions that
  :func:`fastrbf.dask.kernel_ridge` calls too: :func:`check_pcg_args` and
  :func:`check_landmark_array` (the arguments), :func:`fastrbf.models.falkon.landmark_rows`
  and :func:`~fastrbf.models.falkon.landmarks_from_rows` (the landmarks), and
  :func:`pcg_model` (the finish: coefficients, the convergence warning, the model).
  Only the passes over the data differ between the backends.
"""

import dataclasses
import warnings
from functools import partial

import numpy as np

from .. import _dense, _progress, _threads
from .. import _validation as _v
from .._progress import ProgressArg
from .._typing import ArrayLike, KernelArg, Seed, Threads
from ..cuda.arrays import on_device
from ..kernels import (
    KERNELS,
    check_kernel,
    check_params,
    check_positive_definite,
    coef0_in,
    gram,
    is_user,
    kernel_value,
)
from ..linalg import check_alpha, check_conditioning, diag_view, factor_in_place
from . import falkon
from .common import (
    ConvergenceWarning,
    KernelModel,
    as_targets,
    check_model_weights,
    check_scalar_gamma,
    check_xy,
    gram_buffer,
    model_data,
    owned,
)

_F64 = np.dtype(np.float64)


_KRR_REMEDIES = ("a larger `alpha` (or `jitter=\"auto\"`), a larger `gamma`, or removing (near-)duplicate points "
                 "from `X`.")

#: solver="auto" factors the n x n matrix while 8 n^2 bytes are below this share of
#: the available memory
AUTO_MEMORY_SHARE = 0.5
#: kernels accepted by solver="nystrom-pcg": the positive definite ones of the registry (no
#: polynomial tail needed, not declared indefinite): K_mm is factored
PCG_KERNELS = tuple(name for name, k in KERNELS.items() if k.min_degree < 0 and k.max_dim != 0)
SOLVERS = ("auto", "cholesky", "nystrom", "nystrom-pcg")
#: the solvers on landmarks
NYSTROM_SOLVERS = ("nystrom", "nystrom-pcg")
#: solver="auto" on landmarks solves directly ("nystrom") up to this many of them, by
#: Falkon's CG ("nystrom-pcg") beyond: the direct solve's 2 n m^2 flops against the CG's
#: 2 n m kernel values per iteration, tens of iterations: the crossover follows the
#: machine's exp rate against its DGEMM rate (m = 2000 direct took 0.6x the CG's time on
#: a 2-core AVX-512 Xeon); 2048 keeps the default m up to n of about 10^6 direct
DIRECT_MAX_LANDMARKS = 2048


def default_landmarks(n: int) -> int:
    """Default number of landmarks of solver="nystrom-pcg": ``min(n, max(1000,
    2 sqrt(n)))`` (Falkon's O(sqrt(n)) rule; 2000 at n = 10^6).

    Examples
    --------
    >>> default_landmarks(10**6), default_landmarks(500)
    (2000, 500)
    """
    return int(min(n, max(1000, int(np.ceil(2.0 * np.sqrt(n))))))


def _choose_solver(n, alpha, n_landmarks, landmarks):
    if n_landmarks is None and isinstance(landmarks, str):
        if _v.ndim(alpha, "alpha") != 0:
            return "cholesky"
        avail = _v.available_memory()
        if avail is None or 8.0 * n * n < AUTO_MEMORY_SHARE * avail:
            return "cholesky"
    if isinstance(landmarks, str):
        m = default_landmarks(n) if n_landmarks is None else n_landmarks
    else:
        m = np.shape(landmarks)[0] if np.ndim(landmarks) == 2 else 0
    return "nystrom" if isinstance(m, (int, np.integer)) and m <= DIRECT_MAX_LANDMARKS else "nystrom-pcg"


def kernel_ridge(X: ArrayLike, Y: ArrayLike, *, gamma: float, alpha: ArrayLike, kernel: KernelArg = "gaussian",
                 fit_intercept: bool = False, degree: int = 3, coef0: float = 1.0, jitter: float | str | None = None,
                 solver: str = "auto", n_landmarks: int | None = None, landmarks: str | ArrayLike = "uniform",
                 tol: float = 1e-7, max_iter: int = 100, seed: Seed = None, n_threads: Threads = None,
                 progress: ProgressArg = False, length_scale: ArrayLike | None = None) -> KernelModel:
    """Kernel ridge regression: weights ``W = (K + alpha I)^-1 Y``, or its Nystroem
    approximation for large n.

    ``solver="cholesky"``: the Gram matrix is built into one n x n float64 buffer that
    is factored in place (peak memory about one n x n matrix).

    ``solver="nystrom"`` and ``"nystrom-pcg"`` (large n, no n x n or n x m matrix):
    Nystroem kernel ridge with m landmarks ``L``, ``(K_nm^T K_nm + alpha K_mm) beta =
    K_nm^T Y`` and ``f(x) = K(x, L) beta`` (the same unscaled ``alpha``; with ``L = X``
    it is exact KRR).  "nystrom" solves it directly: the Nystroem features of a chunk of
    rows at a time folded into an m x m system, then one Cholesky factorisation (about
    ``2 n m^2`` flops).  "nystrom-pcg" runs Falkon's preconditioned conjugate gradients
    (Rudi et al. 2017): every product with ``K_nm`` is one fused pass over the data, the
    m x m preconditioner is two Cholesky factors.  Memory O(n d + m^2 + n k).

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, k)
    gamma : float
        Kernel width (> 0), as in :func:`fastrbf.gram`.
    alpha : float or array_like of shape (n,)
        Ridge, added to the diagonal; >= 0.  A number > 0 for "nystrom" and "nystrom-pcg".
    kernel : str, default "gaussian"
        A positive definite kernel of :data:`fastrbf.KERNELS` ("nystrom", "nystrom-pcg": one of
        gaussian, laplacian, inverse_multiquadric, inverse_quadratic, truncated,
        polynomial).
    fit_intercept : bool, default False
        Fit ``Y - mean(Y)`` and add the mean back (scikit-learn's ``KernelRidge`` has
        no intercept: the default matches it).
    degree, coef0 :
        Parameters of the polynomial and tanh kernels.
    jitter : None, "auto" or float
        As in :func:`fastrbf.cholesky` ("cholesky" only).
    solver : {"auto", "cholesky", "nystrom", "nystrom-pcg"}, default "auto"
        "auto": "cholesky" while one n x n float64 matrix (8 n^2 bytes) takes less than
        half the available memory and neither ``n_landmarks`` nor an array of
        ``landmarks`` is given (array ``alpha``: always "cholesky"), else "nystrom" up to
        2048 landmarks and "nystrom-pcg" beyond.
    n_landmarks : int, optional
        Number of landmarks m in [1, n] ("nystrom", "nystrom-pcg"); default
        ``min(n, max(1000, 2 sqrt(n)))``.
    landmarks : {"uniform", "kmeans", "rpcholesky", "auto"} or array_like of shape (m, d), default "uniform"
        Uniform sample of the rows without replacement, k-means centres (k-means++ and
        10 Lloyd iterations on a subsample of ``min(n, 20 m)`` rows), the pivots of a
        randomly pivoted Cholesky (:func:`fastrbf.rpcholesky` of this kernel, on all
        rows while its n x m factor has at most 2^25 entries, which the solvers then
        reuse; else on a subsample of ``20 m`` rows), or given.  ``"auto"``: the
        Cholesky's pivots when its relative trace error is at most 1e-3 (where they beat
        k-means' centres), else k-means centres.
    tol : float, default 1e-7
        "nystrom-pcg" stops when the relative residual of the preconditioned system is
        below ``tol`` for every output...
    max_iter : int, default 100
        ... or after ``max_iter`` iterations (then a :class:`ConvergenceWarning` and
        ``converged=False``).
    seed : None, int or numpy.random.Generator
        For the landmarks.
    n_threads : int, optional
    progress : bool, logging.Logger or callable, default False
        "nystrom-pcg": report the conjugate-gradient iterations
        (``kernel_ridge: CG iter 12/100, residual 3.1e-05, 1.1 s, ETA 8.2 s``; the
        ETA assumes ``max_iter`` iterations, an upper bound) and the k-means of
        ``landmarks="kmeans"``: True on stderr, a logger's ``info``, or a callable
        given a dict per iteration (see :func:`fastrbf.kmeans`; the metric is
        ``residual``).  "nystrom": the chunks of rows (stage ``"nystrom"``).
        "cholesky" (one factorisation) reports nothing.

    length_scale : float or array_like of shape (d,), optional
        Per-feature widths: each feature divided by its scale before the kernel (as
        :func:`fastrbf.gram`); the model keeps them and applies them to its queries.

    Returns
    -------
    KernelModel
        ``solver``, ``n_iter``, ``residual`` and ``converged`` report the solve
        ("nystrom": 0 iterations, residual 0.0, converged).

    Raises
    ------
    NotPositiveDefiniteError
        "cholesky": ``K + alpha I`` is not positive definite, or singular to working
        precision (estimated condition number > 1/eps).

    Warns
    -----
    scipy.linalg.LinAlgWarning
        "cholesky": the solve reproduces ``Y`` only to more than 1e-6 relative
        (ill-conditioned; e.g. near-duplicate points with ``alpha = 0``).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import kernel_ridge
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> m = kernel_ridge(X, [0.0, 1.0, 0.0], gamma=1.0, alpha=0.1)
    >>> m.predict(X).round(3)
    array([0.038, 0.883, 0.038])
    >>> rng = np.random.default_rng(0)
    >>> Xl = rng.random((2000, 2))
    >>> big = kernel_ridge(Xl, np.sin(4 * Xl[:, 0]), gamma=2.0, alpha=1e-3, solver="nystrom-pcg",
    ...                    n_landmarks=100, seed=0)
    >>> big.centers.shape, big.converged, bool(abs(big.predict([[0.3, 0.5]])[0] - np.sin(1.2)) < 1e-3)
    ((100, 2), True, True)
    >>> reports = []
    >>> big = kernel_ridge(Xl, np.sin(4 * Xl[:, 0]), gamma=2.0, alpha=1e-3, solver="nystrom-pcg",
    ...                    n_landmarks=100, seed=0, progress=reports.append)
    >>> reports[-1]["task"], reports[-1]["stage"], reports[-1]["iter"] == big.n_iter
    ('kernel_ridge', 'cg', True)
    >>> direct = kernel_ridge(Xl, np.sin(4 * Xl[:, 0]), gamma=2.0, alpha=1e-3, n_landmarks=100, seed=0)
    >>> direct.solver, bool(np.allclose(direct.predict(Xl[:5]), big.predict(Xl[:5]), rtol=1e-5))
    ('nystrom', True)
    """
    entry = check_kernel(kernel)
    if on_device(X, Y):
        deg, c0 = check_params(entry, degree, coef0)
        return _kernel_ridge_device(X, Y, entry, check_scalar_gamma(gamma), deg, c0, alpha, fit_intercept, jitter,
                                    n_landmarks, landmarks, tol, max_iter, _v.check_seed(seed, name="seed"), n_threads,
                                    progress, solver, length_scale)
    Xa, Ya = check_xy(X, Y)
    g = check_scalar_gamma(gamma)
    deg, coef0 = check_params(entry, degree, coef0)
    ls = _v.check_length_scale(length_scale, Xa.shape[1])
    rng = _v.check_seed(seed, name="seed")
    _progress.check(progress)
    n = Xa.shape[0]
    solver = _v.check_choice(solver, "solver", SOLVERS, text=f"one of {SOLVERS}")
    if solver == "auto":
        solver = _choose_solver(n, alpha, n_landmarks, landmarks)
    if solver in NYSTROM_SOLVERS:
        if ls is None:
            return _kernel_ridge_nystrom(X, Xa, Ya, entry, g, deg, coef0, alpha, fit_intercept, jitter, n_landmarks,
                                     landmarks, tol, max_iter, rng, n_threads, progress, solver)
        # on the rescaled data (landmarks too); the model's landmarks back in the data's units
        Xs = _v.scale_features(Xa, ls, _F64, "X")
        Ls = landmarks if isinstance(landmarks, str) else _v.scale_features(model_data(landmarks, "landmarks"), ls,
                                                                             _F64, "landmarks")
        model = _kernel_ridge_nystrom(Xs, Xs, Ya, entry, g, deg, coef0, alpha, fit_intercept, jitter, n_landmarks, Ls,
                                  tol, max_iter, rng, n_threads, progress, solver)
        return dataclasses.replace(model, centers=model.centers * ls, length_scale=ls)
    if n_landmarks is not None or not isinstance(landmarks, str):
        raise ValueError('`n_landmarks` and `landmarks` are used by solver="nystrom" and "nystrom-pcg" only.')
    check_positive_definite(entry, Xa.shape[1], "kernel_ridge")
    a = check_alpha(alpha, n)
    n_threads = _threads.for_dense(n, Xa.shape[1], n_threads)
    Xd = owned(_v.to_dtype(Xa, _F64, "X"), X)
    T, single = as_targets(Ya)
    intercept = T.mean(axis=0) if fit_intercept else np.zeros(T.shape[1])
    T -= intercept
    # the whole matrix: the triangle the factorisation leaves untouched serves the check
    kernel = kernel_value(entry)
    Xk = Xd if ls is None else _v.scale_features(Xd, ls, _F64, "X")
    B, whole = gram_buffer(Xk, kernel, g, deg, coef0, n_threads, "kernel_ridge", whole=True)
    del Xk
    d0 = diag_view(B).copy()
    F, used = factor_in_place(B, a, jitter, n_threads, name="K(X, X)", whole=whole)
    T0 = T.copy()
    _dense.potrs(F, T, n_threads)
    W = T
    check_model_weights(W)
    check_conditioning(F, d0 + a + used, W, T0, what="The kernel matrix K(X, X) + alpha I",
                        remedies=_KRR_REMEDIES, alpha=a, n_threads=n_threads)
    del B, F
    return KernelModel.without_tail(Xd, np.ascontiguousarray(W), kernel=kernel, gamma=g, degree=deg, coef0=coef0,
                                    intercept=intercept, dtype=_v.result_dtype(Xa, Ya), single_output=single,
                                    jitter=used, length_scale=ls)


def check_pcg_args(kernel, alpha, n, tol, max_iter, landmarks, n_landmarks, solver="nystrom-pcg"):
    """The checks of the Nystroem solvers (``solver`` "nystrom-pcg" or "nystrom", named
    in the messages) shared with :func:`fastrbf.dask.kernel_ridge`: (alpha as a float,
    the landmark count for ``landmarks="uniform"`` or ``"kmeans"``; None when
    ``landmarks`` is an array, which the caller checks)."""
    entry = check_kernel(kernel)
    if is_user(entry):
        check_positive_definite(entry, None, f'kernel_ridge (solver="{solver}")')
        if entry.min_degree >= 0:
            raise ValueError(f'solver="{solver}" needs a positive definite kernel without a polynomial tail; the '
                             f"user kernel {entry.name!r} needs `min_degree` {entry.min_degree}.")
    elif entry.name not in PCG_KERNELS:
        raise ValueError(f'`kernel` must be one of {PCG_KERNELS} for solver="{solver}" (a positive definite '
                         f"kernel); got {kernel!r}.")
    if _v.ndim(alpha, "alpha") != 0:
        raise TypeError(f'`alpha` must be a number > 0 for solver="{solver}" (not one value per point); '
                        f"got an array of shape {np.shape(alpha)}.")
    a = float(check_alpha(alpha, n))
    if not a > 0:
        raise ValueError(f'`alpha` must be > 0 for solver="{solver}"; got {alpha!r}.')
    _v.check_real(tol, "tol", low=0, strict=True, type_error=ValueError)
    _v.check_int(max_iter, "max_iter", 1, type_error=ValueError)
    if not isinstance(landmarks, str):
        return a, None
    _v.check_choice(landmarks, "landmarks", falkon.LANDMARK_METHODS, text=falkon.LANDMARKS_TEXT)
    m = default_landmarks(n) if n_landmarks is None else n_landmarks
    return a, _v.check_int(m, "n_landmarks", 1, n, text=f"an int in [1, n_samples] = [1, {n}]",
                           type_error=ValueError)


def _kernel_ridge_nystrom(X, Xa, Ya, entry, g, deg, coef0, alpha, fit_intercept, jitter, n_landmarks, landmarks, tol,
                      max_iter, rng, n_threads, progress=False, solver="nystrom-pcg"):
    n, d = Xa.shape
    kernel = kernel_value(entry)
    check_positive_definite(entry, d, f'kernel_ridge (solver="{solver}")')
    if jitter is not None:
        raise ValueError(f'`jitter` is used by solver="cholesky" only ({solver} adds its own to K_mm).')
    a, m = check_pcg_args(kernel, alpha, n, tol, max_iter, landmarks, n_landmarks, solver)
    if m is None:
        landmarks = model_data(landmarks, "landmarks")
        m = check_landmark_array(landmarks, d, n_landmarks)
    T, single = as_targets(Ya)
    k = T.shape[1]
    chunk, nch = falkon.chunking(n)
    # (the direct solve: W, two chunks of kernel values and features, the right-hand sides)
    extra = 2 * nch * m * k if solver == "nystrom-pcg" else m * (m + 2 * min(n, chunk) + 2 * k)
    _v.check_memory(8 * (n * d + 4 * m * m + 2 * n * k + extra),
                    f"kernel_ridge ({solver}, {m} landmarks)", "use fewer `n_landmarks`.")
    nt = _threads.for_work(n * m * (d + 8), n_threads)
    Xd = _v.to_dtype(Xa, _F64)
    intercept = T.mean(axis=0) if fit_intercept else np.zeros(k)
    T -= intercept
    rep = _progress.reporter(progress, "kernel_ridge")
    params = {"kernel": kernel, "gamma": g, "degree": deg, "coef0": coef0, "n_threads": nt}
    # a new array (the model owns it), and the randomly pivoted Cholesky that chose it,
    # when it holds the features of every row
    L, pc = falkon.choose_landmarks(Xd, m, landmarks, rng, nt, rep,
                                    {"kernel": kernel, "gamma": g, "degree": deg, "coef0": coef0})
    Kmm = gram(L, kernel=kernel, gamma=g, degree=deg, coef0=coef0, n_threads=nt)
    # the solve is linear in Y: it runs on Y / max|Y| (CG's squared norms of targets of
    # 1e160 would overflow) and the coefficients are scaled back
    ymax = float(np.abs(T).max())
    ys = ymax if ymax > 0 else 1.0
    T /= ys
    if solver == "nystrom":
        beta = falkon.nystrom_solve(Xd, L, T, Kmm, a, progress=rep, factor=pc, **params)
        res = falkon.FalkonResult(beta, 0, 0.0, True)
    else:
        rhs = falkon.cross_t(Xd, L, T, **params)
        del T
        res = falkon.falkon_solve(lambda V: falkon.normal_matvec(Xd, L, V, **params), rhs, Kmm, a, n,
                                  tol=float(tol), max_iter=int(max_iter), n_threads=nt, progress=rep, factor=pc)
    return pcg_model(res, L, scale=ys, tol=tol, kernel=kernel, gamma=g, degree=deg, coef0=coef0,
                     intercept=intercept, dtype=_v.result_dtype(Xa, Ya), single_output=single, stacklevel=4,
                     solver=solver)


def _kernel_ridge_device(X, Y, entry, g, deg, coef0, alpha, fit_intercept, jitter, n_landmarks, landmarks, tol,
                         max_iter, rng, n_threads, progress, solver, length_scale):
    # data on a CUDA device: Falkon's CG on the host, the passes over the rows on the
    # device (fastrbf.cuda.ridge); the same landmarks as on the CPU for the same seed
    from ..cuda import ridge as _cr

    solver = _v.check_choice(solver, "solver", SOLVERS, text=f"one of {SOLVERS}")
    if solver not in ("auto", "nystrom-pcg"):
        raise ValueError(f'data on a CUDA device are fitted by solver="nystrom-pcg" (or "auto"); got {solver!r}.')
    if length_scale is not None:
        raise ValueError("`length_scale` is not supported for data on a CUDA device; divide the features by it first.")
    if jitter is not None:
        raise ValueError('`jitter` is used by solver="cholesky" only (nystrom-pcg adds its own to K_mm).')
    _progress.check(progress)
    passes = _cr.Passes(X, Y, entry, g, deg, partial(coef0_in, entry, coef0))
    n, d = passes.shape
    kernel = kernel_value(entry)
    check_positive_definite(entry, d, 'kernel_ridge (solver="nystrom-pcg")')
    a, m = check_pcg_args(kernel, alpha, n, tol, max_iter, landmarks, n_landmarks)
    rep = _progress.reporter(progress, "kernel_ridge")
    params = {"kernel": kernel, "gamma": g, "degree": deg, "coef0": coef0}
    nt = _threads.for_work(10**9, n_threads)
    pc = None
    if m is None:
        L = np.array(model_data(landmarks, "landmarks"), dtype=_F64, order="C", copy=True)
        m = check_landmark_array(L, d, n_landmarks)
    else:
        # the rows the CPU's choose_landmarks reads, gathered from the device (None: every
        # row, a small problem, and nothing drawn: the CPU's choice on all of them)
        idx = falkon.landmark_rows(n, m, landmarks, rng)
        if idx is None:
            L, pc = falkon.choose_landmarks(passes.rows(None), m, landmarks, rng, nt, rep, params)
        else:
            L = falkon.landmarks_from_rows(passes.rows(idx), m, landmarks, rng, nt, rep, params)
    intercept, ys = passes.targets(fit_intercept)
    Kmm = gram(L, kernel=kernel, gamma=g, degree=deg, coef0=coef0, n_threads=nt)
    passes.set_landmarks(L)
    res = falkon.falkon_solve(passes.normal, passes.cross_t(), Kmm, a, n, tol=float(tol), max_iter=int(max_iter),
                              n_threads=nt, progress=rep, factor=pc)
    return pcg_model(res, L, scale=ys, tol=tol, kernel=kernel, gamma=g, degree=deg, coef0=coef0,
                     intercept=intercept, dtype=passes.dtype, single_output=passes.single, stacklevel=4)


def check_landmark_array(L, d, n_landmarks):
    """The number of landmarks given as the (checked) array ``L``: ``d`` features, and
    ``n_landmarks`` (if given) equal to its row count."""
    _v.check_features(np.empty((0, d)), L, "X", "landmarks")
    m = L.shape[0]
    if n_landmarks is not None and n_landmarks != m:
        raise ValueError(f"`n_landmarks` ({n_landmarks}) must equal the number of given `landmarks` ({m}).")
    return m


def pcg_model(res, L, *, scale, tol, kernel, gamma, degree, coef0, intercept, dtype, single_output, stacklevel,
              solver="nystrom-pcg"):
    """The model of a "nystrom-pcg" solve (:class:`~fastrbf.models.falkon.FalkonResult`
    ``res`` on the landmarks ``L``, targets divided by ``scale``): the coefficients scaled
    back and checked, a :class:`ConvergenceWarning` (at ``stacklevel`` from here) when
    the CG stopped at ``max_iter``."""
    with np.errstate(over="ignore"):
        beta = res.beta * scale
    check_model_weights(beta)
    if not res.converged:
        warnings.warn(f'kernel_ridge (solver="nystrom-pcg") did not converge in {res.n_iter} iterations: relative '
                      f"residual {res.residual:.3g} > tol = {tol:g}; raise `max_iter` or `alpha`.",
                      ConvergenceWarning, stacklevel=stacklevel)
    return KernelModel.without_tail(L, beta, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                                    intercept=intercept, dtype=dtype, single_output=single_output,
                                    solver=solver, n_iter=res.n_iter, residual=res.residual,
                                    converged=res.converged)


