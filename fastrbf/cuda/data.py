"""Checks and conversions of device arguments: the CPU's rules (real 2-D non-empty
finite data, the result dtype, magnitudes whose squared distances cannot overflow),
read on the device in one pass (:mod:`fastrbf._jit.cuda.reduce`), with the CPU's
messages naming the argument."""

import numpy as np

from .. import _validation as _v
from .._jit.cuda import reduce as _jr
from .._jit.cuda.target import ROWS, TILE, blocks
from .arrays import is_device_array


def _dtype_of(view, name):
    dt = np.dtype(view.dtype)
    if dt.kind not in "biuf":
        raise TypeError(f"`{name}` must be an array of real numbers; got dtype {dt}.")
    return dt


def array(dev, x, name, ndim=2):
    """The numba view of device argument ``x``: ``ndim``-D, real, non-empty."""
    v = dev.view(x, name)
    _dtype_of(v, name)
    if v.ndim != ndim:
        raise ValueError(f"`{name}` must be a {ndim}-D array; got shape {tuple(v.shape)}.")
    if v.size == 0:
        raise ValueError(f"`{name}` must be non-empty; got shape {tuple(v.shape)}.")
    return v


def result_dtype(*views):
    """float32 when every array is float32, else float64 (the CPU's rule)."""
    kinds = [np.dtype(v.dtype) for v in views if v is not None]
    return np.dtype(np.float32) if kinds and all(k == np.float32 for k in kinds) else np.dtype(np.float64)


def stats(dev, v):
    """(all finite, largest magnitude) of a device array (1-D or 2-D)."""
    a = v.reshape(v.shape[0], 1) if v.ndim == 1 else v
    nb = blocks(a.shape[0], ROWS)
    ok = dev.scratch(nb, np.int32)
    big = dev.scratch(nb, np.float64)
    _jr.stats_kernel()[nb, ROWS](a, ok, big)
    return bool(ok.copy_to_host().all()), float(big.copy_to_host().max())


def check_values(dev, v, name, dtype=None, magnitude=True):
    """NaN/inf refused, naming ``name``; with ``magnitude``, data whose squared distances
    over its features would overflow ``dtype`` refused as on the CPU."""
    finite, big = stats(dev, v)
    if not finite:
        raise ValueError(f"`{name}` must contain only finite values; got NaN or inf.")
    if magnitude:
        dtype = np.dtype(dtype if dtype is not None else result_dtype(v))
        _v.check_largest(big, v.shape[1] if v.ndim == 2 else 1, dtype, name)


def check_finite_result(dev, v, what, names, hint="rescale the data or use a smaller `gamma`."):
    """A result that overflowed is refused, naming the arguments that control its size."""
    if not stats(dev, v)[0]:
        raise _v.overflow_error(what, v.dtype, names, hint)


def as_dtype(dev, v, dtype):
    """``v`` itself when of ``dtype``, else a device copy converted to it."""
    dtype = np.dtype(dtype)
    if np.dtype(v.dtype) == dtype:
        return v
    a = v.reshape(v.shape[0], 1) if v.ndim == 1 else v
    out = dev.scratch(a.shape, dtype)
    _jr.cast_kernel()[(blocks(a.shape[0], TILE), blocks(a.shape[1], TILE)), (TILE, TILE)](a, out)
    return out.reshape(v.shape) if v.ndim == 1 else out


def scaled(dev, v, ls, dtype, name):
    """``v / length_scale`` per column in ``dtype`` (float64 quotients rounded, the CPU's
    operations), refused naming ``name`` when it overflows."""
    out = dev.scratch(v.shape, dtype)
    lsd = dev.to_device(np.asarray(ls, dtype=np.float64))
    _jr.scale_kernel()[(blocks(v.shape[0], TILE), blocks(v.shape[1], TILE)), (TILE, TILE)](v, lsd, out)
    finite, _ = stats(dev, out)
    if not finite:
        raise ValueError(f"`{name}` divided by `length_scale` overflows {np.dtype(dtype)}; use larger length scales "
                         "or rescale the data.")
    check_values(dev, out, name, dtype)
    return out


def check_out(out_view, shape, dtype, name="out"):
    """A caller's device ``out`` buffer: the right shape and dtype."""
    if tuple(out_view.shape) != tuple(shape):
        raise ValueError(f"`{name}` must have shape {tuple(shape)}; got {tuple(out_view.shape)}.")
    if np.dtype(out_view.dtype) != dtype:
        raise ValueError(f"`{name}` must have dtype {np.dtype(dtype)} (the result dtype); got {np.dtype(out_view.dtype)}.")


def check_gamma(dev, gamma, m, dtype, name="gamma"):
    """One gamma per column on the device (from a number, or a device array of ``m``
    values > 0) and whether it was a number."""
    if not is_device_array(gamma):
        g, scalar = _v.check_gamma(gamma, m, dtype, name)
        if not scalar:
            raise TypeError(f"`{name}` with one value per column must be on the CUDA device with the data; "
                            f"got {type(gamma).__name__}.")
        return dev.to_device(g), True
    v = array(dev, gamma, name, ndim=1)
    if v.shape[0] != m:
        raise ValueError(f"`{name}` must be a scalar or a 1-D array with one value per column of the result ({m}); "
                         f"got shape {tuple(v.shape)}.")
    gd = as_dtype(dev, v, dtype)
    finite, _ = stats(dev, gd)
    low = dev.scratch(1, np.float64)
    _jr.min_kernel()[1, ROWS](gd, low)
    if not finite or not float(low.copy_to_host()[0]) > 0:
        raise ValueError(f"`{name}` must contain only finite values > 0 in {np.dtype(dtype)} (the result dtype).")
    return gd, False



def full(dev, n, value, dtype):
    """A new device vector of ``n`` values ``value`` of ``dtype``, filled on the device
    (the data-sized constants of the algorithms: weights, bounds, per-row gammas)."""
    a = dev.scratch(n, dtype)
    _jr.fill_kernel()[blocks(n, ROWS), ROWS](a, np.dtype(dtype).type(value))
    return a


def kernel_coef0(coef0_in, dtype):
    """The kernel's ``coef0`` as a number of ``dtype``: ``coef0_in(dtype)`` is the
    caller's rule (:func:`fastrbf.kernels.coef0_in` bound to the kernel and its value:
    0 where unused, refused where not finite in the result dtype)."""
    return np.dtype(dtype).type(coef0_in(dtype))


def pair(dev, A, B, name_a, name_b, length_scale=None, extra=()):
    """Two device data arguments (``B`` may be None) checked as the CPU checks them:
    2-D, the same features, finite, magnitudes that cannot overflow their squared
    distances (after ``length_scale``, when given); (A, B, result dtype) converted to the
    dtype (float32 when all of them and the ``extra`` views are)."""
    Av = array(dev, A, name_a)
    Bv = None if B is None else array(dev, B, name_b)
    if Bv is not None and Bv.shape[1] != Av.shape[1]:
        raise ValueError(f"`{name_b}` must have the same number of features as `{name_a}` ({Av.shape[1]}); "
                         f"got {Bv.shape[1]} (shape {tuple(Bv.shape)}).")
    dtype = result_dtype(Av, Bv, *extra)
    views = [(Av, name_a)] + ([] if Bv is None else [(Bv, name_b)])
    if length_scale is None:
        for v, name in views:
            check_values(dev, v, name, dtype)
        out = [as_dtype(dev, v, dtype) for v, _ in views]
    else:
        ls = _v.check_length_scale(length_scale, Av.shape[1])
        for v, name in views:
            check_values(dev, v, name, magnitude=False)
        out = [scaled(dev, v, ls, dtype, name) for v, name in views]
    return out[0], (None if Bv is None else out[1]), dtype
