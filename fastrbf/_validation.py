"""Input checking and the dtype policy, shared by every public function.

- float32 is kept only when every floating input is float32; float64 otherwise;
  integers and bools become float64; complex, object, strings: ``TypeError``.
- Non-contiguous, Fortran-ordered, non-native-byte-order and read-only input is
  copied into a C-contiguous writeable array (so each kernel compiles once per dtype),
  never modified.
- NaN/inf, wrong ndim, empty arrays, mismatched features: ``ValueError`` naming the
  argument, the rule and the value received.
"""

import math
import numbers
from typing import TypeGuard

import numpy as np


def _kind_error(name, arr):
    return TypeError(f"`{name}` must be an array of real numbers; got dtype {arr.dtype}.")


#: the functions and estimators that take scipy.sparse rows (named where another refuses them)
SPARSE_TAKERS = ("sqdist, gram, nystroem, random_fourier(...).transform, kmeans, kmeans_plusplus, "
                 "lloyd_assign and lloyd_update, and the estimators KernelRidge, Nystroem, RandomFourierFeatures "
                 "and KMeans of fastrbf.sklearn")


def _convert(x, name):
    if hasattr(x, "tocsr") and hasattr(x, "nnz"):  # scipy.sparse, where only dense arrays are taken
        raise TypeError(f"`{name}` is a scipy.sparse matrix, and this function takes dense arrays: pass "
                        f"`{name}`.toarray() if it fits in memory. Sparse rows are taken by {SPARSE_TAKERS}.")
    try:
        return np.asarray(x)
    except Exception:  # ragged lists and the like
        raise ValueError(
            f"`{name}` must be a rectangular array of real numbers; got a ragged or unconvertible "
            f"{type(x).__name__} (rows of different lengths?)."
        ) from None


def ndim(x, name):
    """``np.ndim(x)``, with a ``ValueError`` naming ``name`` for ragged input."""
    if isinstance(x, np.ndarray):
        return x.ndim
    return _convert(x, name).ndim


def as_array(x, name, ndim=2):
    """Return ``x`` as an ndarray of a real dtype (not yet converted to the float dtype).

    ``ndim`` is the required number of dimensions, or a tuple of the allowed ones."""
    arr = _convert(x, name)
    if arr.dtype.kind not in "biuf":
        raise _kind_error(name, arr)
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if arr.ndim not in allowed:
        want = allowed[-1]
        shape_txt = "(n_samples, n_features)" if want == 2 else "(n,)"
        raise ValueError(f"`{name}` must be a {want}-D array of shape {shape_txt}; got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` must not be empty; got shape {arr.shape}.")
    return arr


def result_dtype(*arrays):
    """float32 if every array (or ``numpy.dtype``: a fitted map's) is float32 (of either
    byte order), else float64."""
    dtypes = (np.dtype(getattr(a, "dtype", a)) for a in arrays if a is not None)
    if all(dt.kind == "f" and dt.itemsize == 4 for dt in dtypes):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def check_finite(arr, name):
    check_finite_rows(arr, name)


def find_non_finite(arr, offset=0):
    """(index of the first NaN/inf of ``arr``, its value, how many there are), the first
    axis counted from ``offset`` (the global row of a block's first row); None when all
    values are finite."""
    # a cheap sum first; an overflow to inf falls through to the exact check
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add.reduce(arr, axis=None)
    if np.isfinite(total):
        return None
    bad = ~np.isfinite(arr)
    if not bad.any():
        return None
    where = tuple(int(v) for v in np.argwhere(bad)[0])
    return (where[0] + int(offset), *where[1:]), float(arr[where]), int(bad.sum())


def non_finite_error(name, found, scope="in all"):
    """The ``ValueError`` of a NaN/inf ``found`` by :func:`find_non_finite` (its count
    taken ``scope``: "in all", "in this block")."""
    index, value, count = found
    return ValueError(f"`{name}` must contain only finite values; got {value!r} at index {index} "
                      f"({count} non-finite value(s) {scope}).")


def check_finite_rows(arr, name, offset=0, scope="in all"):
    """NaN/inf in ``arr`` raise a ``ValueError`` naming ``name`` and the index of the
    first one, its rows counted from ``offset`` (a block of a larger array)."""
    found = find_non_finite(arr, offset)
    if found is not None:
        raise non_finite_error(name, found, scope)


def to_dtype(arr, dtype, name=None):
    """C-contiguous, native, writeable array of ``dtype``; copies only when needed (and
    checks first that the copy fits in memory: a broadcast view may be far larger than
    the memory it occupies)."""
    dtype = np.dtype(dtype)
    if name is not None and not (arr.dtype == dtype and arr.flags.c_contiguous and arr.flags.writeable):
        check_memory(arr.size * dtype.itemsize, f"a C-contiguous {dtype} copy of `{name}` {arr.shape}",
                     f"pass `{name}` as a C-contiguous {dtype} array, or fewer rows at a time.")
    out = np.ascontiguousarray(arr, dtype=dtype)
    if not out.flags.writeable:
        out = out.copy()
    return out


def check_data(X, name):
    """A 2-D, non-empty, finite array of a real dtype (not yet converted)."""
    arr = as_array(X, name)
    check_finite(arr, name)
    return arr


def check_magnitude(arr, name, dtype=None):
    """Data whose squared distances (and norms, and their sums) cannot overflow in
    ``dtype`` (default: the array's own float dtype, float64 for integers):
    ``|x| <= sqrt(finfo.max / (16 d))``, ``d`` the number of columns."""
    if arr.dtype.kind != "f" and dtype is None:
        return  # integers and bools: |x| < 2**64, far below the float64 bound
    if dtype is None:
        dtype = np.float32 if arr.dtype.itemsize <= 4 else np.float64
    d = arr.shape[1] if arr.ndim == 2 else 1
    check_largest(max(float(arr.max()), -float(arr.min())), d, dtype, name)


def check_largest(big, d, dtype, name):
    """:func:`check_magnitude`'s rule on the largest magnitude ``big`` of data with ``d``
    columns (read wherever the data are: the CUDA backend reads it on the device)."""
    bound = float(np.sqrt(float(np.finfo(dtype).max) / (16.0 * d)))
    if big > bound:
        raise ValueError(
            f"`{name}` must have values of magnitude at most {bound:.3g} ({np.dtype(dtype)} squared distances "
            f"over {d} feature(s) would overflow); got {big:.3g}. Rescale the data (e.g. standardise it)."
        )


def check_length_scale(length_scale, d, name="length_scale"):
    """Per-feature length scales: None, or a finite number > 0 or one per feature (``d``),
    returned as a float64 array of shape (d,) (None stays None)."""
    if length_scale is None:
        return None
    if is_real(length_scale):
        ls = np.full(d, as_float(length_scale))
        if not (np.isfinite(ls[0]) and ls[0] > 0):
            raise ValueError(f"`{name}` must contain only finite values > 0; got {float(ls[0])!r}.")
        return ls
    rule = f"a number or a 1-D array with one value per feature ({d})"
    return _positive_vector(length_scale, name, d, rule).astype(np.float64)


def _positive_vector(value, name, size, rule):
    """``value`` as a 1-D array of ``size`` finite numbers > 0 (TypeError for what is not
    numbers, ValueError naming ``rule`` for a wrong shape, the first bad value else)."""
    try:
        arr = np.asarray(value)
    except Exception:
        raise TypeError(f"`{name}` must be a number or a 1-D array of numbers; got a ragged or unconvertible "
                        f"{type(value).__name__}.") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must be a number or a 1-D array of numbers; got {value!r}.")
    if arr.ndim != 1 or arr.shape[0] != size:
        raise ValueError(f"`{name}` must be {rule}; got shape {arr.shape}.")
    if not (np.all(np.isfinite(arr)) and np.all(arr > 0)):
        bad = arr[~(np.isfinite(arr) & (arr > 0))][0]
        raise ValueError(f"`{name}` must contain only finite values > 0; got {float(bad)!r}.")
    return arr


def scale_features(arr, length_scale, dtype, name):
    """``arr / length_scale`` (per column) as a new C-contiguous array of ``dtype``
    (``arr`` itself, converted, when ``length_scale`` is None); ValueError naming
    ``name`` if the quotient overflows ``dtype``."""
    if length_scale is None:
        return to_dtype(arr, dtype)
    check_memory(arr.size * np.dtype(dtype).itemsize, f"the rescaled copy of `{name}` {arr.shape}", "")
    with np.errstate(over="ignore"):
        out = np.ascontiguousarray(np.asarray(arr, dtype=np.float64) / length_scale, dtype=dtype)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"`{name}` divided by `length_scale` overflows {np.dtype(dtype)}; use larger length scales "
                         "or rescale the data.")
    check_scaled_magnitude(out, name, length_scale)
    return out


def check_scaled_magnitude(scaled, name, length_scale):
    """:func:`check_magnitude` of ``name`` divided by ``length_scale`` (``scaled``), blamed
    on the length scales: tiny ones, not the data, make its squared distances overflow."""
    if not scaled.size or scaled.dtype.kind != "f":
        return
    d = scaled.shape[1] if scaled.ndim == 2 else 1
    bound = float(np.sqrt(float(np.finfo(scaled.dtype).max) / (16.0 * d)))
    big = max(float(scaled.max()), -float(scaled.min()))
    if big > bound:
        raise ValueError(f"`{name}` divided by `length_scale` reaches {big:.3g}, beyond {bound:.3g}: its "
                         f"{scaled.dtype} squared distances would overflow; use larger length scales "
                         f"(the smallest is {float(np.min(length_scale)):.3g}) or rescale the data.")


def check_targets(Y, n, name="Y", ndims=(1, 2), name_x="X"):
    """Targets: a finite real array of ``ndims`` dimensions with ``n`` rows."""
    arr = as_array(Y, name, ndim=ndims)
    if arr.shape[0] != n:
        raise ValueError(f"`{name}` must have one row per row of `{name_x}` ({n}); got shape {arr.shape}.")
    check_finite(arr, name)
    return arr


def check_class_labels(Y, n, name="Y", name_x="X"):
    """Class labels of any dtype: 1-D, ``n`` of them, no NaN/inf.  Returns the sorted
    classes and the code (index into the classes) of each label."""
    arr = _convert(Y, name)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D class labels with `classify=True`; got shape {arr.shape}.")
    if arr.shape[0] != n:
        raise ValueError(f"`{name}` must have one row per row of `{name_x}` ({n}); got shape {arr.shape}.")
    check_finite_labels(arr, name)
    try:
        classes, codes = np.unique(arr, return_inverse=True)
    except TypeError:  # an object array of labels that do not compare (None and numbers, ...)
        raise TypeError(f"`{name}` must be class labels of one sortable kind (numbers or strings); got labels of "
                        f"types {sorted({type(v).__name__ for v in arr.tolist()})}.") from None
    return classes, codes.reshape(-1)


def check_finite_labels(arr, name="Y"):
    """Class labels (an array of any dtype): no NaN or inf among float labels."""
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must contain only finite values (class labels); got NaN or inf.")


def check_features(X, Y, name_x="X", name_y="Y"):
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"`{name_y}` must have the same number of features as `{name_x}` "
            f"({X.shape[1]}); got {Y.shape[1]} (shape {Y.shape})."
        )


def as_float(x):
    """``float(x)`` of a real number, ``inf`` (of its sign) when it is too large for a
    float (a Python int of 400 digits)."""
    try:
        return float(x)
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


# ---------------------------------------------------------------- scalar checkers
# One checker per scalar rule (an int in a range, a finite real number in a range, a
# bool, one of a set of choices, a float dtype), so that every public function states
# a rule in the same words and raises the same exception for it:
# ``TypeError`` for a value of the wrong type, ``ValueError`` for a value of the right
# type out of range, the message `` `name` must be <rule>; got <value!r>. `` with the
# rule derived from the bounds unless a call site gives its own words (``text=``).
# bools are never numbers here (``True`` is no count and no width), NumPy scalars are.


def _bound(x):
    """A bound as the rule text writes it: ``1``, ``0``, ``0.5`` (never ``1.0``)."""
    if isinstance(x, numbers.Integral):
        return str(int(x))
    f = float(x)
    return str(int(f)) if f.is_integer() and abs(f) < 2**53 else repr(f)


def is_real(value) -> bool:
    """Whether ``value`` is a real scalar: a Python or NumPy real number or a 0-d array
    of a real dtype; never a bool (``np.bool_`` included) and never a string.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf._validation import is_real
    >>> is_real(1), is_real(np.float32(0.5)), is_real(np.array(2.0)), is_real(True), is_real("1")
    (True, True, True, False, False)
    """
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, numbers.Real):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"


def is_int(value) -> TypeGuard[numbers.Integral]:
    """Whether ``value`` is an int: a Python or NumPy integer, never a bool (``np.bool_``
    included).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf._validation import is_int
    >>> is_int(3), is_int(np.int64(3)), is_int(True), is_int(3.0)
    (True, True, False, False)
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _range_rule(noun, low, high, strict, show):
    """The rule of :func:`check_int` / :func:`check_real` in words, from the bounds:
    ``"an int >= 1"``, ``"a finite number in (0, 1]"`` (``strict``: the low bound is
    excluded; ``show`` writes a bound)."""
    if low is not None and high is not None:
        return f"{noun} in {'(' if strict else '['}{show(low)}, {show(high)}]"
    if low is not None:
        return f"{noun} {'>' if strict else '>='} {show(low)}"
    if high is not None:
        return f"{noun} <= {show(high)}"
    return noun


def check_int(value, name: str, low: int | None = None, high: int | None = None, *, text: str | None = None,
              type_error: type[Exception] = TypeError) -> int:
    """``value`` as a Python int, checked to be an int (NumPy's too; not a bool) in
    ``[low, high]`` (a bound that is None is not checked).

    Parameters
    ----------
    value : object
        What the caller passed.
    name : str
        The argument's name, as the caller wrote it.
    low, high : int, optional
        Inclusive bounds.
    text : str, optional
        The rule in words, for a site that says more than its bounds
        (``"an int in [1, n_samples] = [1, 40]"``); default from the bounds
        (``"an int >= 1"``, ``"an int in [1, 1000]"``).
    type_error : type, default TypeError
        The exception for a value that is not an int (``ValueError`` only where a
        released function raised it).

    Returns
    -------
    int

    Raises
    ------
    TypeError
        ``value`` is not an int (a float, a bool, a string, an array...).
    ValueError
        ``value`` is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf._validation import check_int
    >>> check_int(np.int64(3), "k", 1)
    3
    >>> check_int(0, "max_iter", 1)
    Traceback (most recent call last):
    ...
    ValueError: `max_iter` must be an int >= 1; got 0.
    >>> check_int(True, "degree", 1, 1000)
    Traceback (most recent call last):
    ...
    TypeError: `degree` must be an int in [1, 1000]; got True.
    """
    if text is None:
        text = _range_rule("an int", low, high, False, str)
    if not is_int(value):
        raise type_error(f"`{name}` must be {text}; got {value!r}.")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"`{name}` must be {text}; got {value!r}.")
    return v


def check_real(value, name: str, *, low: float | None = None, strict: bool = False, high: float | None = None,
               text: str | None = None, type_error: type[Exception] = TypeError) -> float:
    """``value`` as a Python float, checked to be a finite real number (see
    :func:`is_real`: NumPy scalars and 0-d arrays too; not a bool) ``>= low`` (``> low``
    with ``strict=True``) and ``<= high``.

    Parameters
    ----------
    value : object
        What the caller passed.
    name : str
        The argument's name, as the caller wrote it.
    low : float, optional
        The lower bound; inclusive unless ``strict``.
    strict : bool, default False
        Whether ``low`` itself is refused (``> 0`` rather than ``>= 0``).
    high : float, optional
        The inclusive upper bound.
    text : str, optional
        The rule in words, for a site that says more than its bounds; default from the
        bounds (``"a finite number > 0"``, ``"a finite number in [0, 1]"``).
    type_error : type, default TypeError
        The exception for a value that is not a real number (``ValueError`` only where
        a released function raised it).

    Returns
    -------
    float
        A Python int too large for a float is refused as not finite.

    Raises
    ------
    TypeError
        ``value`` is not a real number (a bool, a string, a 1-D array...).
    ValueError
        ``value`` is NaN, infinite or out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf._validation import check_real
    >>> check_real(np.float32(0.5), "gamma", low=0, strict=True)
    0.5
    >>> check_real(np.array(2), "alpha", low=0)
    2.0
    >>> check_real(-1.0, "gamma", low=0, strict=True)
    Traceback (most recent call last):
    ...
    ValueError: `gamma` must be a finite number > 0; got -1.0.
    >>> check_real(float("nan"), "coef0")
    Traceback (most recent call last):
    ...
    ValueError: `coef0` must be a finite number; got nan.
    >>> check_real("1", "tol", low=0)
    Traceback (most recent call last):
    ...
    TypeError: `tol` must be a finite number >= 0; got '1'.
    """
    if text is None:
        text = _range_rule("a finite number", low, high, strict, _bound)
    if not is_real(value):
        raise type_error(f"`{name}` must be {text}; got {value!r}.")
    v = as_float(value)
    if not math.isfinite(v) or (low is not None and (v <= low if strict else v < low)) or (
            high is not None and v > high):
        raise ValueError(f"`{name}` must be {text}; got {value!r}.")
    return v


def check_bool(value, name: str, *, text: str = "a bool (True or False)") -> bool:
    """``value`` as a Python bool, checked to be ``True`` or ``False`` (``np.bool_``
    too); nothing truthy (``1``, ``"yes"``, ``None``, arrays) passes.

    ``text`` is the rule in words (a site's own: ``"True or False"``).

    Raises
    ------
    TypeError
        ``value`` is not a bool.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf._validation import check_bool
    >>> check_bool(np.True_, "classify")
    True
    >>> check_bool(1, "fit_intercept")
    Traceback (most recent call last):
    ...
    TypeError: `fit_intercept` must be a bool (True or False); got 1.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be {text}; got {value!r}.")
    return bool(value)


def check_choice(value, name: str, choices, *, text: str | None = None):
    """The one of ``choices`` (strings, or None) that ``value`` equals (a NumPy string
    too), returned as given in ``choices``.

    Anything else is a ``ValueError``, a value of another type included: the rule is the
    set of values, so ``["cos"]`` is refused as not one of them, as ``"sin"`` is.
    ``text`` is the rule in words; default ``"one of ['cos', 'cos_sin']"``.

    Examples
    --------
    >>> from fastrbf._validation import check_choice
    >>> check_choice("cos", "kind", ("cos", "cos_sin"))
    'cos'
    >>> check_choice("sin", "kind", ("cos", "cos_sin"))
    Traceback (most recent call last):
    ...
    ValueError: `kind` must be one of ['cos', 'cos_sin']; got 'sin'.
    >>> check_choice(["kmeans"], "method", ("kmeans", "random"), text="'kmeans' or 'random'")
    Traceback (most recent call last):
    ...
    ValueError: `method` must be 'kmeans' or 'random'; got ['kmeans'].
    """
    for c in choices:
        if value is c or (isinstance(value, str) and isinstance(c, str) and value == c):
            return c
    raise ValueError(f"`{name}` must be {text or f'one of {list(choices)}'}; got {value!r}.")


def check_float_dtype(dtype, name: str = "dtype", *, text: str = "float32 or float64") -> np.dtype:
    """A result dtype the caller chose: float32 or float64 (``None``: float64).  Not a
    dtype at all: ``TypeError``; another dtype: ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf._validation import check_float_dtype
    >>> check_float_dtype("float32"), check_float_dtype(None)
    (dtype('float32'), dtype('float64'))
    >>> check_float_dtype(np.int64)
    Traceback (most recent call last):
    ...
    ValueError: `dtype` must be float32 or float64; got <class 'numpy.int64'>.
    """
    if dtype is None:
        return np.dtype(np.float64)
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be {text}; got {dtype!r}, which is not a dtype.") from None
    if dt != np.float32 and dt != np.float64:
        raise ValueError(f"`{name}` must be {text}; got {dtype!r}.")
    return dt


def check_gamma(gamma, m, dtype, name="gamma"):
    """Return one gamma per column (length ``m`` array of ``dtype``) and whether scalar."""
    if (isinstance(gamma, numbers.Real) and not isinstance(gamma, bool)) or (
        isinstance(gamma, np.ndarray) and gamma.ndim == 0 and gamma.dtype.kind in "iuf"
    ):
        g = as_float(gamma)
        if not (np.isfinite(g) and g > 0):
            raise ValueError(f"`{name}` must be a finite number > 0; got {gamma!r}.")
        with np.errstate(over="ignore", under="ignore"):
            gd = np.asarray(g, dtype=dtype)
        if not (np.isfinite(gd) and gd > 0):
            raise ValueError(f"`{name}` must be a finite number > 0 in {np.dtype(dtype)} (the result dtype: "
                             f"{_range_text(dtype)}); got {gamma!r}.")
        return np.full(m, gd, dtype=dtype), True
    arr = _positive_vector(gamma, name, m, f"a scalar or a 1-D array with one value per column of the result ({m})")
    with np.errstate(over="ignore", under="ignore"):
        gd = np.ascontiguousarray(arr, dtype=dtype)
    if not (np.all(np.isfinite(gd)) and np.all(gd > 0)):
        bad = arr[~(np.isfinite(gd) & (gd > 0))][0]
        raise ValueError(f"`{name}` must contain only finite values > 0 in {np.dtype(dtype)} (the result dtype: "
                         f"{_range_text(dtype)}); got {float(bad)!r}.")
    return gd, False


def _range_text(dtype):
    fi = np.finfo(dtype)
    return f"from {float(fi.smallest_subnormal):.3g} to {float(fi.max):.3g}"


def check_out(out, shape, dtype, inputs, name="out"):
    """Validate a caller's ``out`` buffer, or return None to allocate."""
    if out is None:
        return None
    if not isinstance(out, np.ndarray):
        raise TypeError(f"`{name}` must be a numpy.ndarray; got {type(out).__name__}.")
    if out.shape != tuple(shape):
        raise ValueError(f"`{name}` must have shape {tuple(shape)}; got {out.shape}.")
    if out.dtype != dtype:
        raise ValueError(f"`{name}` must have dtype {np.dtype(dtype)} (the result dtype); got {out.dtype}.")
    if not out.flags.c_contiguous or not out.flags.writeable or not out.dtype.isnative:
        raise ValueError(f"`{name}` must be a C-contiguous, writeable, native-byte-order array.")
    for arr in inputs:
        if arr is not None and np.may_share_memory(out, arr):
            raise ValueError(f"`{name}` must not share memory with an input array.")
    return out


def check_result(out, what, names, hint="rescale the data or use a smaller `gamma`."):
    """After a computation from finite input: a result that overflowed (inf, or NaN from
    inf - inf) is refused, naming the arguments that control its size."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add.reduce(out, axis=None)
    if np.isfinite(total) or np.all(np.isfinite(out)):
        return
    raise overflow_error(what, out.dtype, names, hint)


def overflow_error(what, dtype, names, hint="rescale the data or use a smaller `gamma`."):
    """:func:`check_result`'s error for a result of ``dtype`` that overflowed."""
    return ValueError(f"{what} overflows {np.dtype(dtype)} for these {names} (the values exceed "
                      f"{float(np.finfo(dtype).max):.3g}); {hint}")


def available_memory():
    """Bytes of memory available to new allocations (Linux ``MemAvailable``), or None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _gib(n):
    return f"{n / 2**30:.2f} GiB"


def check_memory(nbytes, what, hint):
    """Raise ``MemoryError`` before allocating ``nbytes`` that would not fit."""
    avail = available_memory()
    if avail is not None and nbytes > avail:
        raise MemoryError(
            f"{what} needs {_gib(nbytes)} but only {_gib(avail)} of memory is available; {hint}"
        )


def check_seed(seed, name="seed"):
    """The one seed rule of fastrbf: ``None``, an int >= 0 (NumPy ints too; not a bool)
    or a ``numpy.random.Generator`` (used as it is).  Returns a Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)):
        if int(seed) >= 0:
            return np.random.default_rng(int(seed))
        raise ValueError(f"`{name}` must be None, an int >= 0 or a numpy.random.Generator; got {seed!r}.")
    raise TypeError(f"`{name}` must be None, an int >= 0 or a numpy.random.Generator; got {seed!r}.")
