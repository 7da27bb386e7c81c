"""The checks and small shared pieces of the Gaussian-process regression
(:mod:`fastrbf.gp`): the kernel names and their parameter counts, the validation of
``X``, ``y`` and ``theta`` (errors name the argument), the refusal of parameters whose
covariance would overflow float64, and the unpacking of ``theta``.

Kept apart so that :mod:`fastrbf.gp` holds the numerical work (the factor, the
likelihood and its gradient, prediction, the optimiser); nothing here computes more
than a norm.
"""

import numpy as np

from .. import _validation as _v

KERNELS = {"prml": 4, "gaussian": 2}
F64 = np.dtype(np.float64)
#: the bool rule in this module's words
BOOL = "True or False"


def check_kernel(kernel):
    """The number of parameters of a kernel name."""
    return KERNELS[_v.check_choice(kernel, "kernel", sorted(KERNELS))]


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
    k = check_kernel(kernel)
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
