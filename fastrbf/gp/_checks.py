"""The checks and small shared pieces of the Gaussian processes (:mod:`fastrbf.gp`):
the kernel (a radial, positive definite kernel of the registry, or ``"prml"``), the
data and targets (normalised without overflow), length scales and bounds, the PRML
covariance's parameter vector ``theta = (t0, t1[, t2, t3])`` and the refusal of
parameters whose covariance would overflow float64.  Errors name the argument.

Kept apart so that the other modules hold the numerical work (the factor, the
likelihood and its gradient, prediction, the optimiser); nothing here computes more
than a norm or a mean.
"""

import math

import numpy as np

from .. import _validation as _v
from ..kernels import check_kernel, check_params, check_positive_definite

#: the PRML covariance's forms (:mod:`fastrbf.gp._prml`) and their number of parameters
PRML_FORMS = {"prml": 4, "gaussian": 2}
F64 = np.dtype(np.float64)
#: scikit-learn's default bounds of every hyperparameter
DEFAULT_BOUNDS = (1e-5, 1e5)
#: the bool rule in this module's words
BOOL = "True or False"


def check_form(kernel):
    """The number of parameters ``t`` of a form of the PRML covariance, by name."""
    return PRML_FORMS[_v.check_choice(kernel, "kernel", sorted(PRML_FORMS))]


def asarray_real(value, name):
    """``np.asarray(value)`` of a real dtype; ragged sequences and non-numbers are refused
    with a message naming ``name`` (never NumPy's own)."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"`{name}` must be a rectangular array of real numbers; got a ragged or "
                         f"unconvertible {type(value).__name__}.") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must be an array of real numbers; got dtype {arr.dtype}.")
    return arr


def check_theta(theta, kernel, name="theta"):
    k = check_form(kernel)
    a = asarray_real(theta, name)
    if a.dtype.kind == "b":
        raise TypeError(f"`{name}` must be {k} real numbers; got booleans {a.tolist()}.")
    if a.shape != (k,):
        raise ValueError(f"`{name}` must have {k} values for the {kernel!r} kernel; got shape {a.shape}.")
    t = a.astype(np.float64)
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError(f"`{name}` must contain only finite values > 0; got {t.tolist()}.")
    return t


class Overflow(ValueError):
    """The log marginal likelihood or its gradient is not finite (inside the optimiser: a
    failed start; at the public functions: a plain ValueError)."""


def public_error(exc):
    return ValueError(str(exc))


def check_scale(X, theta, noise, names):
    """Refuse, before any n x n work, data and parameters whose covariance overflows:
    every entry of ``C`` is bounded by ``t0 + t2 + t3 max ||x||^2 + noise``."""
    t0, _, t2, t3, dotk = theta_terms(theta)
    with np.errstate(over="ignore", invalid="ignore"):
        xx = float(np.einsum("ij,ij->i", X, X).max()) if dotk else 0.0
        bound = t0 + t2 + t3 * xx + noise
    if not bound < 0.5 * float(np.finfo(np.float64).max):
        xn, tn, nn = names
        raise ValueError(f"`{xn}`, `{tn}` and `{nn}` make the covariance overflow float64 (its entries are bounded "
                         f"by t0 + t2 + t3 max ||x||^2 + noise = {bound:.3g}, max ||x||^2 = {xx:.3g}); rescale "
                         f"`{xn}` or use smaller `{tn}`/`{nn}`.")


def theta_terms(theta):
    """(t0, g = t1 / 2, t2, t3, whether the constant and linear terms are in)."""
    dotk = len(theta) == 4
    t2 = float(theta[2]) if dotk else 0.0
    t3 = float(theta[3]) if dotk else 0.0
    return float(theta[0]), float(theta[1]) / 2.0, t2, t3, dotk


def check_xy(X, y):
    """float64 copies (or conversions) of ``X`` and ``y``, and the dtype of the results
    (float32 when both are float32)."""
    Xa = _v.check_data(asarray_real(X, "X"), "X")
    _v.check_magnitude(Xa, "X", F64)  # computed in float64: its squared distances must not overflow
    ya = _v.check_targets(asarray_real(y, "y"), Xa.shape[0], "y", ndims=(1,))
    return _v.to_dtype(Xa, np.float64), np.ascontiguousarray(ya, dtype=np.float64), _v.result_dtype(Xa, ya)


def unit_width(entry):
    """The kernel's gamma in length-scale units (1/2 for the Gaussian, as ``RBF``).

    Examples
    --------
    >>> from fastrbf import KERNELS
    >>> unit_width(KERNELS["gaussian"]), unit_width(KERNELS["matern52"])
    (0.5, 1.0)
    """
    return 0.5 if entry.name == "gaussian" else 1.0


def kernel_at_zero(kernel, coef0):
    """``phi(0)`` of the radial kernel ``kernel`` (a name or user kernel) at its GP width:
    the prior variance of a point is ``amplitude`` times this (plus the noise).

    Examples
    --------
    >>> kernel_at_zero("matern52", 1.0), kernel_at_zero("gaussian", 1.0)
    (1.0, 1.0)
    """
    from ..kernels import gram

    return float(gram(np.zeros((1, 1)), kernel=kernel, gamma=unit_width(check_kernel(kernel)), coef0=coef0)[0, 0])


def check_length_scales(length_scale, d, ard):
    """The length scales: one (isotropic) unless ``ard`` or an array is given."""
    if length_scale is None:  # (elsewhere None means "no per-feature scales"; a GP needs one)
        raise ValueError(f"`length_scale` must be a number > 0 or one per feature ({d}); got None.")
    ls = _v.check_length_scale(length_scale, d)
    return ls if (ard or not _v.is_real(length_scale)) else ls[:1]


def log_bounds(bounds, n=None):
    """``(log low, log high)`` of the range ``bounds`` of every hyperparameter, checked;
    with ``n``, ``bounds`` may also be ``n`` pairs, one per hyperparameter (then arrays)."""
    if n is not None and np.ndim(bounds) == 2:
        b = asarray_real(bounds, "bounds").astype(np.float64)
        if b.shape != (n, 2) or not np.all((0 < b[:, 0]) & (b[:, 0] < b[:, 1]) & (b[:, 1] < math.inf)):
            raise ValueError(f"`bounds` must be a pair (low, high) or {n} pairs, one per hyperparameter, with "
                             f"0 < low < high < inf; got {bounds!r}.")
        return np.log(b[:, 0]), np.log(b[:, 1])
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"`bounds` must be a pair (low, high) of numbers; got {bounds!r}.") from None
    if not (0 < lo < hi < math.inf):
        raise ValueError(f"`bounds` must satisfy 0 < low < high < inf; got {bounds!r}.")
    return math.log(lo), math.log(hi)


def check_positive(amplitude, noise, constant, jitter, n):
    """The positive parameters checked; returns ``jitter``: a float, or a float64 array
    of one value per training point (``n``)."""
    _v.check_real(amplitude, "amplitude", low=0, strict=True)
    for name, value in (("noise", noise), ("constant", constant)):
        if value is not None:
            _v.check_real(value, name, low=0, strict=True)
    if np.ndim(jitter) == 1 and not isinstance(jitter, str):
        jit = _v.as_array(jitter, "jitter", ndim=1)
        if jit.shape[0] != n:
            raise ValueError(f"`jitter` must be a number or one value per training point ({n}); got {jit.shape[0]} "
                             "values.")
        jit = np.asarray(jit, dtype=np.float64)
        if not (np.all(np.isfinite(jit)) and np.all(jit >= 0)):
            raise ValueError("`jitter` must contain only finite values >= 0.")
        return jit.copy()  # the model owns it
    return _v.check_real(jitter, "jitter", low=0)


def radial_kernel(kernel):
    """The registry entry (or user kernel) of ``kernel``, which must be radial."""
    entry = check_kernel(kernel)
    if not entry.radial:
        raise ValueError(f"`kernel` must be a radial kernel of fastrbf.KERNELS for a Gaussian process; got {kernel!r}.")
    return entry


def check_gp_kernel(entry, d, coef0, what):
    """The checked ``coef0`` of the radial kernel ``entry`` on data of ``d`` features,
    refused unless positive definite (``what`` names the function in the refusal)."""
    check_positive_definite(entry, d, what)
    if entry.min_degree >= 0:
        raise ValueError(f"`kernel` must be positive definite without a polynomial tail for a Gaussian process; "
                         f"{entry.name!r} is only conditionally positive definite.")
    return check_params(entry, 1, coef0)[1]


def gp_targets(ya, normalize_y):
    """``(T (n, k) float64, y_mean, y_std)``: the checked targets, normalised when
    ``normalize_y`` (scikit-learn's rule: a constant column keeps ``std`` 1)."""
    T = np.array(ya.reshape(ya.shape[0], -1), dtype=np.float64)
    normalize_y = _v.check_bool(normalize_y, "normalize_y")
    if normalize_y:
        y_mean, y_std = T.mean(axis=0), T.std(axis=0)
        y_std[y_std == 0] = 1.0
    else:
        y_mean, y_std = np.zeros(T.shape[1]), np.ones(T.shape[1])
    return (T - y_mean) / y_std, y_mean, y_std


def prepare_data(X, y, kernel, coef0, normalize_y, what="gaussian_process"):
    """The checked kernel entry, data and targets of a Gaussian process (``what`` names
    the function in the refusal of a user kernel not declared positive definite):
    ``(entry, X, y, X as float64, targets (n, k) float64 normalised, coef0, y_mean, y_std)``."""
    entry = radial_kernel(kernel)
    Xa = _v.check_data(X, "X")
    c0 = check_gp_kernel(entry, Xa.shape[1], coef0, what)
    ya = _v.check_targets(y, Xa.shape[0], "y")
    _v.check_magnitude(Xa, "X", F64)
    T, y_mean, y_std = gp_targets(ya, normalize_y)
    return entry, Xa, ya, _v.to_dtype(Xa, F64, "X"), T, c0, y_mean, y_std
