"""The PRML covariance of :func:`fastrbf.gaussian_process` (``kernel="prml"``): its
factor, log marginal likelihood and gradient, optimiser and predictions.

The covariance (Bishop, PRML 6.63) is ``k(x, y) = t0 exp(-t1/2 ||x - y||^2) + t2 + t3
x.y`` plus ``noise`` on the diagonal: ``theta = (t0, t1, t2, t3)``, or ``(t0, t1)``
(the Gaussian term alone: the deprecated ``gp_regression(kernel="gaussian")``).  The
public GP speaks of ``amplitude = t0``, ``length_scale = 1 / sqrt(t1)``, ``constant =
t2`` and ``linear = t3``; this module works in ``t``, the lectures' coordinates, so that
the optimiser's path is the one the lectures describe.  scikit-learn's equivalent is
``ConstantKernel(t0) * RBF(1/sqrt(t1)) + ConstantKernel(t2) + ConstantKernel(t3) *
DotProduct(sigma_0=0) + WhiteKernel(noise)``.

Decisions:

- Everything comes from one Cholesky factor of ``C`` (built in float64 straight into
  the buffer that is factored in place).  The gradient needs ``tr((a a^T - C^-1)
  dC/dlog t)``: ``C^-1`` is formed from the factor by LAPACK ``potri`` in the same
  buffer (no second n x n matrix, no ``inv``), and the traces are summed on the fly by a
  kernel that recomputes the distances (no matrix per parameter).
- Gradients are with respect to the logarithms of ``(theta..., noise)``, as
  scikit-learn's ``log_marginal_likelihood(eval_gradient=True)``.
- The optimiser is SciPy's L-BFGS-B in log space, started from ``theta0``/``noise`` and
  from ``n_restarts`` points drawn log-uniformly inside ``bounds`` (seeded); the table
  of restarts is kept on the model and a warning is given when the optimum sits on a
  bound.
- Prediction: the mean alone is ``k(x)^T a`` through the fused ``gram_matvec`` (no
  n_query x n matrix).  With the variance, the covariance rows ``k(x, X)`` of chunks of
  ``PREDICT_CHUNK`` query points give both the mean and ``k(x, x) + noise - ||L^-1
  k(x)||^2`` (triangular solves; clamped at 0, the number of clamped values recorded on
  the result): one kernel pass, and the kernel is the one the fit compiled.
  The gradient of the mean (``return_grad=True``) comes with the mean from one fused
  pass of the Gaussian term's values and derivatives (plus the linear term's constant
  gradient ``t3 X^T a``); with the variance too it is one more pass.
- Checks come first: every argument is validated (errors name it); data (training or
  query ``X``) whose float64 squared distances would overflow is refused in the name
  of ``X``, as by :func:`fastrbf.gram`, and parameters whose covariance would
  overflow float64 are refused before any n x n work; a likelihood or gradient that
  overflows is an error naming ``y`` and ``noise``, never an inf or NaN (inside the
  optimiser it ends that start).
- The model owns its arrays (``X_train`` is a copy where the caller's array could be
  changed) and keeps only the factor: the unused triangle of its buffer is zeroed, so
  identical fits pickle to identical bytes.
- Computed in float64; predictions are float32 when the training data, the targets and
  the query are all float32.
"""

import math
import warnings
from typing import NamedTuple

import numpy as np

from .. import _progress, _threads
from .. import _validation as _v
from .._jit.gp import exact as _jgp
from .._lazy import lapack, scipy
from ..kernels import gram_matvec
from ..linalg import NotPositiveDefiniteError, factor_in_place
from ..models.common import owned, values_and_grad
from . import _gradient
from ._checks import (
    BOOL,
    Overflow,
    check_scale,
    check_theta,
    check_xy,
    log_bounds,
    public_error,
    theta_terms,
)
from ._optimise import IterationReport

PREDICT_CHUNK = 1024


def _factor(X, theta, noise, n_threads):
    """C = K + noise I built as its upper triangle and factored in place."""
    n = X.shape[0]
    t0, g, t2, t3, dotk = theta_terms(theta)
    _v.check_memory(8 * n * n, f"gp: the {n} x {n} covariance matrix", "use fewer points.")
    B = np.empty((n, n))
    Xt = np.ascontiguousarray(X.T)
    _threads.map_ranges(lambda lo, hi: _jgp.cov_upper(X, Xt, lo, hi, t0, g, t2, t3, dotk, B), (n + 1) // 2, n_threads)
    F, _ = factor_in_place(B, noise, None, n_threads, name="C = K + noise I", whole=False)
    return B, F, Xt


def _factor_gp(X, theta, noise, n_threads, names):
    """:func:`_factor` with the breakdown explained in terms of the GP's own arguments."""
    try:
        return _factor(X, theta, noise, n_threads)
    except NotPositiveDefiniteError as exc:
        xn, tn, nn = names
        raise NotPositiveDefiniteError(
            f"The covariance C = K + noise I is not positive definite to working precision (the Cholesky "
            f"factorisation broke down at column {exc.column}; noise = {noise:.3g}). Remedies: a larger `{nn}`, "
            f"removing duplicate rows of `{xn}`, or other `{tn}`.",
            column=exc.column, alpha=noise,
        ) from None


_LML_NAMES = ("X", "theta", "noise")


@np.errstate(over="ignore", invalid="ignore")  # overflow is detected and reported, not warned about
def lml_grad(X, y, theta, noise, grad, n_threads, names=_LML_NAMES, y_hint="rescale `y`"):
    n = X.shape[0]
    n_threads = _threads.for_dense(n, X.shape[1], n_threads)
    B, F, Xt = _factor_gp(X, theta, noise, n_threads, names)
    with _threads.serial_blas():
        a, _ = lapack.dpotrs(F, y[:, None].copy(order="F"), lower=1)
    a = a[:, 0]
    logdet_half = float(np.sum(np.log(np.diag(F))))
    lml = -0.5 * float(np.sum(y * a)) - logdet_half - 0.5 * n * math.log(2 * math.pi)
    if not math.isfinite(lml):
        raise Overflow(f"The log marginal likelihood overflows float64 for this `y` and `{names[2]}` "
                        f"(y^T C^-1 y is not finite); {y_hint} or use a larger `{names[2]}`.")
    if not grad:
        return lml, None
    with _threads.serial_blas():
        Ci, info = lapack.dpotri(F, lower=1, overwrite_c=1)  # C^-1 (upper triangle of B)
    if info != 0:  # pragma: no cover - the factor is nonsingular here
        raise RuntimeError(f"LAPACK potri failed with info={info}.")
    t0, g, t2, t3, dotk = theta_terms(theta)
    part = np.empty((n, 4))
    _threads.map_ranges(lambda lo, hi: _jgp.grad_upper(X, Xt, B, a, lo, hi, t0, g, dotk, part), (n + 1) // 2, n_threads)
    tr = 0.5 * part.sum(axis=0) * np.array([1.0, 1.0, t2, t3])
    gnoise = 0.5 * noise * (float(np.sum(a * a)) - float(np.trace(B)))
    k = len(theta)
    out = np.r_[tr[:k], gnoise]
    if not np.all(np.isfinite(out)):
        raise Overflow(f"The gradient of the log marginal likelihood overflows float64 for this `y` and "
                        f"`{names[2]}` (||C^-1 y||^2 is not finite); {y_hint} or use a larger `{names[2]}`.")
    return lml, out


def lml(X, y, theta, *, noise, kernel="prml", grad=True, n_threads=None, names=_LML_NAMES):
    """The log marginal likelihood (and with ``grad`` its gradient in ``log(theta...,
    noise)``), every argument checked in the names ``names`` = (data, theta, noise)."""
    Xd, yd, _ = check_xy(X, y)
    t = check_theta(theta, kernel, names[1])
    nz = _v.check_real(noise, names[2], low=0, strict=True)
    want_grad = _v.check_bool(grad, "grad", text=BOOL)
    _threads.resolve(n_threads)
    check_scale(Xd, t, nz, names)
    try:
        value, g = lml_grad(Xd, yd, t, nz, want_grad, n_threads, names)
    except Overflow as exc:
        raise public_error(exc) from None
    return (value, g) if want_grad else value


class State(NamedTuple):
    """A fitted GP in this module's terms: what the predictions read."""

    X_train: np.ndarray
    alpha: np.ndarray
    factor: np.ndarray
    theta: np.ndarray
    noise: float
    y_mean: float
    y_std: float


def mean(m, Xq, nt):
    """The predictive mean (float64) of the fitted ``m`` (``X_train``, ``alpha``,
    ``theta``, ``y_mean``, ``y_std``) at ``Xq``: the fused product, no n_query x n
    memory, no pass beyond the mean's."""
    t0, g, t2, t3, dotk = theta_terms(m.theta)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected by the caller
        out = t0 * gram_matvec(Xq, m.X_train, m.alpha, gamma=g, n_threads=nt) + t2 * m.alpha.sum()
        if dotk:
            with _threads.serial_blas():
                out += t3 * (Xq @ (m.X_train.T @ m.alpha))
        return out * m.y_std + m.y_mean


def _rows(Xq, Yt, t, nt, out):
    """``out[i] = k(Xq[i], Y)`` for the covariance ``t = theta_terms(theta)``."""
    t0, g, t2, t3, dotk = t
    _threads.map_ranges(lambda lo, hi: _jgp.cov_rows(Xq, Yt, lo, hi, t0, g, t2, t3, dotk, out[lo:hi]), out.shape[0], nt)


def mean_var(m, Xq, nt):
    """(mean, variance of ``y`` (noise included), number of variances clamped at 0),
    float64.  The covariance rows ``k(x, X)`` of each chunk serve both: the mean
    ``k(x)^T a`` from them (one kernel pass instead of two, and no other kernel to
    compile), the variance by a triangular solve."""
    t = theta_terms(m.theta)
    t0, _, t2, t3, dotk = t
    n, q = m.X_train.shape[0], Xq.shape[0]
    out, var = np.empty(q), np.empty(q)
    Xt = np.ascontiguousarray(m.X_train.T)
    prior = np.full(q, t0 + t2 + m.noise)
    if dotk:
        with np.errstate(over="ignore", invalid="ignore"):
            prior += t3 * np.einsum("ij,ij->i", Xq, Xq)
    Kq = np.empty((min(PREDICT_CHUNK, q), n))
    for q0 in range(0, q, PREDICT_CHUNK):
        q1 = min(q, q0 + PREDICT_CHUNK)
        Kb = Kq[: q1 - q0]
        _rows(Xq[q0:q1], Xt, t, nt, Kb)
        with _threads.serial_blas(), np.errstate(over="ignore", invalid="ignore"):  # overflow: detected later
            np.matmul(Kb, m.alpha, out=out[q0:q1])
            V = scipy.linalg.solve_triangular(m.factor, Kb.T, lower=True, check_finite=False)
            var[q0:q1] = prior[q0:q1] - np.einsum("ij,ij->j", V, V)
    with np.errstate(over="ignore", invalid="ignore"):
        out = out * m.y_std + m.y_mean
    clamped = int(np.count_nonzero(var < 0))
    np.maximum(var, 0.0, out=var)
    with np.errstate(over="ignore"):
        var *= m.y_std  # twice: y_std**2 itself may overflow
        var *= m.y_std
    return out, var, clamped


def mean_cov(m, Xq, nt):
    """(mean, the q x q predictive covariance of ``y``, noise included), float64."""
    t = theta_terms(m.theta)
    q = Xq.shape[0]
    Kq, C = np.empty((q, m.X_train.shape[0])), np.empty((q, q))
    _rows(Xq, np.ascontiguousarray(m.X_train.T), t, nt, Kq)
    _rows(Xq, np.ascontiguousarray(Xq.T), t, nt, C)
    with _threads.serial_blas(), np.errstate(over="ignore", invalid="ignore"):  # overflow: detected later
        out = Kq @ m.alpha
        V = scipy.linalg.solve_triangular(m.factor, Kq.T, lower=True, check_finite=False)
        C -= V.T @ V
        C.flat[:: q + 1] += m.noise
        C *= m.y_std
        C *= m.y_std
        return out * m.y_std + m.y_mean, C


def mean_grad(m, Xq, nt):
    """(the predictive mean (q,), its gradient in ``x`` (q, d)) in float64, from one
    fused pass of the Gaussian term's values and derivatives (plus the linear term's
    constant gradient ``t3 X^T a``)."""
    t0, g, t2, t3, dotk = theta_terms(m.theta)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected by the caller
        kv, kg = values_and_grad(Xq, m.X_train, m.alpha[:, None], kernel="gaussian", gamma=g, n_threads=nt)
        out = t0 * kv[:, 0] + t2 * m.alpha.sum()
        grad = t0 * kg[:, 0]
        if dotk:
            with _threads.serial_blas():
                w = m.X_train.T @ m.alpha
                out += t3 * (Xq @ w)
                grad += t3 * w
        return out * m.y_std + m.y_mean, grad * m.y_std


def grad_moments(m, Xq, full, nt):
    """(gradient of the standard deviation (q, d), variance (q, d) or covariance
    (q, d, d) of the gradient), float64, in the units of ``y``
    (:mod:`fastrbf.gp._gradient`): the Gaussian term's rows and Jacobian from one
    fused pass, the linear term's (``t3 x_i``, prior ``t3 |x|^2``) added here."""
    t0, g, t2, t3, dotk = theta_terms(m.theta)
    q, d = Xq.shape
    n = m.X_train.shape[0]
    pgrad = np.full(d, 2.0 * g * t0 + t3)
    gstd = np.empty((q, d))
    gv = np.empty((q, d, d) if full else (q, d))
    Lf = np.asfortranarray(m.factor)
    step = _gradient.chunk_rows(n, d)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected by the caller
        for q0 in range(0, q, step):
            q1 = min(q, q0 + step)
            Qc = Xq[q0:q1]
            K, J = _gradient.stationary_rows(m.X_train, Qc, kernel="gaussian", gamma=g, coef0=1.0, length_scale=None,
                                             amplitude=t0, constant=t2, n_threads=nt)
            prior = np.full(q1 - q0, t0 + t2 + m.noise)
            dprior = np.zeros((q1 - q0, d))
            if dotk:
                with _threads.serial_blas():
                    K += t3 * (m.X_train @ Qc.T)
                J += t3 * m.X_train[:, None, :]
                prior += t3 * np.einsum("ij,ij->i", Qc, Qc)
                dprior = 2.0 * t3 * Qc
            with _threads.serial_blas():
                _, gstd[q0:q1], gv[q0:q1] = _gradient.moments(Lf, None, K, J, prior, dprior, pgrad, 0.0, full)
        return gstd * abs(m.y_std), gv * m.y_std * m.y_std


def result(values, dtype, Xq, what, y_std):
    """``values`` in ``dtype``; an error naming ``X`` if they overflow it."""
    with np.errstate(over="ignore"):
        out = values.astype(dtype, copy=False)
    if not np.all(np.isfinite(out)):
        with np.errstate(over="ignore"):
            xx = float(np.einsum("ij,ij->i", Xq, Xq).max())
        raise ValueError(f"The predictive {what} overflows {dtype} for this `X` (max ||x||^2 = {xx:.3g}; the "
                         f"training targets' scale y_std = {y_std:.3g}); rescale `X` or the training targets"
                         + (", or pass `X` as float64." if dtype == np.float32 else "."))
    return out


def normalise(yd, normalize_y):
    """``(y_mean, y_std, the targets to fit)``: with ``normalize_y``, ``(y - mean) / std``
    computed in units of ``max |y|``, so that neither the mean nor the variance can
    overflow for any finite ``y`` (a constant ``y`` keeps ``y_std`` 1, as scikit-learn)."""
    y_mean, y_std, yn = 0.0, 1.0, yd
    scale = float(np.abs(yd).max())
    if normalize_y and scale > 0:
        ys = yd / scale
        m_s, s_s = float(ys.mean()), float(ys.std())
        y_mean = m_s * scale
        if s_s > 0:
            y_std, yn = s_s * scale, (ys - m_s) / s_s
        else:
            yn = np.zeros_like(yd)
    return y_mean, y_std, yn


def fit(Xd, yn, t0, nz, b, *, optimize, n_restarts, rng, n_threads, rep, names, labels, hint, stacklevel):
    """The fitted ``(theta, noise, factor, alpha, lml, restarts)`` of the PRML covariance
    on float64 ``Xd`` and targets ``yn`` from the start ``(t0, nz)``, optimised (unless
    not ``optimize``) by L-BFGS-B over ``log(theta..., noise)`` within ``b`` ((k + 1, 2),
    the start inside) from the start and ``n_restarts`` log-uniform draws.  ``names``
    (data, theta, noise) name the arguments in errors, ``labels`` the parameters in the
    warning given when the optimum sits on a bound."""
    k = t0.size
    start = np.r_[t0, nz]
    restarts = []
    best = np.log(start)
    # the start must give a positive definite C: a clear NotPositiveDefiniteError here
    # (column, remedies) rather than an optimiser that silently skips it
    try:
        lml_grad(Xd, yn, t0, nz, False, n_threads, names, hint)
    except Overflow as exc:
        raise public_error(exc) from None
    if optimize:
        from scipy.optimize import minimize  # here, not at import: it costs 0.2 s to import

        lb = np.log(b)

        def objective(p):
            theta_p, noise_p = np.exp(p[:k]), float(np.exp(p[k]))
            try:
                check_scale(Xd, theta_p, noise_p, names)
            except ValueError as exc:
                raise Overflow(str(exc)) from None
            val, g = lml_grad(Xd, yn, theta_p, noise_p, True, n_threads, names, hint)
            return -val, -g

        starts = [np.log(start)] + [rng.uniform(lb[:, 0], lb[:, 1]) for _ in range(n_restarts)]
        best_val = -np.inf
        rep.runs(len(starts))
        report = IterationReport(rep)
        if rep:
            objective = report.watch(objective)

        for i, s in enumerate(starts):
            rep.run(i + 1)
            rep.start("l-bfgs-b")
            report.done = 0
            try:
                with _threads.serial_blas():  # L-BFGS-B's own tiny LAPACK solves would wake BLAS threads
                    res = minimize(objective, s, jac=True, method="L-BFGS-B", bounds=lb,
                                   callback=report if rep else None)
                val, p, conv, nit = -float(res.fun), res.x, bool(res.success), int(res.nit)
            except (np.linalg.LinAlgError, Overflow):  # C numerically singular, or overflow, on the way
                val, p, conv, nit = -np.inf, s, False, 0
            rep.finish(nit, lml=val, converged=conv)
            restarts.append(dict(start=np.exp(s), theta=np.exp(p[:k]), noise=float(np.exp(p[k])), lml=val,
                                 converged=conv, n_iter=nit))
            if val > best_val:
                best_val, best = val, p
        if not np.isfinite(best_val):
            raise np.linalg.LinAlgError("Every optimiser start failed: the covariance was not positive definite or "
                                        "the likelihood overflowed on the way; narrow `bounds` or raise `noise`.")
        on_bound = np.isclose(best, lb[:, 0], rtol=0, atol=1e-8) | np.isclose(best, lb[:, 1], rtol=0, atol=1e-8)
        if on_bound.any():
            warnings.warn(f"The optimum sits on a bound for {[labels[i] for i in np.flatnonzero(on_bound)]}: "
                          "widen `bounds` if that is not intended.", UserWarning, stacklevel=stacklevel)
    theta = np.exp(best[:k])
    noise_f = float(np.exp(best[k]))
    B, F, _ = _factor_gp(Xd, theta, noise_f, n_threads, names)
    _jgp.clear_lower(B)  # the strict upper triangle of the factor: zeros, not stale memory
    with _threads.serial_blas():
        a, _ = lapack.dpotrs(F, yn[:, None].copy(order="F"), lower=1)
    a = a[:, 0]
    value = -0.5 * float(np.sum(yn * a)) - float(np.sum(np.log(np.diag(F)))) - 0.5 * Xd.shape[0] * math.log(2 * math.pi)
    return theta, noise_f, F, a, value, restarts


#: the PRML covariance's hyperparameters in the GP's terms, in the order of its ``theta``
GP_NAMES = ("amplitude", "length_scale", "constant", "linear", "noise")
#: how ``kernel="prml"``'s parameters are named in its errors (as the covariance's ``theta``)
GP_ARGS = "amplitude`, `length_scale`, `constant` or `linear"
#: d log t / d log(amplitude, length_scale, constant, linear, noise): t1 = 1 / length_scale^2
GP_CHAIN = np.array([1.0, -2.0, 1.0, 1.0, 1.0])


def is_prml(kernel):
    return isinstance(kernel, str) and kernel == "prml"


def no_linear(linear):
    if linear is not None:
        raise ValueError(f"`linear` is a parameter of kernel='prml' only; got linear={linear!r}.")


def gp_theta(amplitude, length_scale, noise, ard, jitter, constant, linear):
    """The PRML covariance's checked ``t = (amplitude, 1 / length_scale^2, constant,
    linear)`` and ``noise``; ``constant`` and ``linear`` default to 1."""
    if _v.check_bool(ard, "ard") or not _v.is_real(length_scale):
        raise ValueError("kernel='prml' has one length scale: `length_scale` must be a number and `ard` False.")
    if noise is None:
        raise ValueError("kernel='prml' needs a noise term: `noise` must be a number > 0, not None.")
    if _v.check_real(jitter, "jitter", low=0) != 0:
        raise ValueError(f"kernel='prml' takes no `jitter` (its `noise` is learned); got jitter={jitter!r}.")
    t = [_v.check_real(amplitude, "amplitude", low=0, strict=True),
         1.0 / _v.check_real(length_scale, "length_scale", low=0, strict=True) ** 2,
         1.0 if constant is None else _v.check_real(constant, "constant", low=0, strict=True),
         1.0 if linear is None else _v.check_real(linear, "linear", low=0, strict=True)]
    nz = _v.check_real(noise, "noise", low=0, strict=True)
    if not all(math.isfinite(v) and v > 0 for v in t):
        raise ValueError(f"`length_scale` = {length_scale!r} gives 1 / length_scale^2 = {t[1]!r}, not a positive "
                         "finite number.")
    return np.array(t), nz


def to_gp(theta, noise):
    """``log(amplitude, length_scale, constant, linear, noise)`` from the PRML ``t`` and ``noise``."""
    return np.log(np.r_[theta[0], 1.0 / np.sqrt(theta[1]), theta[2:], noise])


def fit_gp(X, y, amplitude, length_scale, noise, ard, optimize, n_restarts, bounds, normalize_y, seed,
                  n_threads, constant, jitter, linear, progress):
    """:func:`gaussian_process` with ``kernel="prml"``: the checks in the GP's terms, the
    fit in the lectures' coordinates (:func:`fastrbf.gp.fit`)."""
    Xd, yd, dtype = check_xy(X, y)
    t, nz = gp_theta(amplitude, length_scale, noise, ard, jitter, constant, linear)
    optimize = _v.check_bool(optimize, "optimize")
    n_restarts = _v.check_int(n_restarts, "n_restarts", 0)
    log_bounds(bounds, 5)  # checked; the values taken as given (no round trip through log)
    b = np.array(np.broadcast_to(np.asarray(bounds, dtype=np.float64), (5, 2)))
    b[1] = 1.0 / b[1, 1] ** 2, 1.0 / b[1, 0] ** 2  # t1 = 1 / length_scale^2
    if optimize:  # the start clipped into the bounds, as for the other kernels
        start = np.clip(np.r_[t, nz], b[:, 0], b[:, 1])
        t, nz = start[:4], float(start[4])
    rng = _v.check_seed(seed, name="seed")
    _threads.resolve(n_threads)
    names = ("X", GP_ARGS, "noise")
    check_scale(Xd, t, nz, names)
    y_mean, y_std, yn = normalise(yd, _v.check_bool(normalize_y, "normalize_y"))
    Xd = owned(Xd, X)
    theta, nz, F, a, value, rows = fit(
        Xd, yn, t, nz, b, optimize=optimize, n_restarts=n_restarts, rng=rng, n_threads=n_threads,
        rep=_progress.reporter(progress, "gaussian_process", runs="start"), names=names, labels=list(GP_NAMES),
        hint="rescale `y` (or pass `normalize_y=True`)", stacklevel=4)
    restarts = tuple(dict(start=to_gp(r["start"][:4], r["start"][4]), theta=to_gp(r["theta"], r["noise"]), lml=r["lml"],
                          converged=r["converged"], n_iter=r["n_iter"]) for r in rows)
    return dict(kernel="prml", amplitude=float(theta[0]), length_scale=np.array([1.0 / math.sqrt(theta[1])]), noise=nz,
                coef0=1.0, X_train=Xd, alpha=a, factor=F, y_mean=np.array([y_mean]), y_std=np.array([y_std]),
                log_marginal_likelihood_value=value, theta=to_gp(theta, nz), dtype=dtype, single_output=True,
                constant=float(theta[2]), linear=float(theta[3]), restarts=restarts)
