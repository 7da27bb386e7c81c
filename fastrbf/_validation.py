"""Input checking and the dtype policy, shared by every public function.

- float32 is kept only when every floating input is float32; float64 otherwise;
  integers and bools become float64; complex, object, strings: ``TypeError``.
- Non-contiguous, Fortran-ordered, non-native-byte-order and read-only input is
  copied into a C-contiguous writeable array (so each kernel compiles once per dtype),
  never modified.
- NaN/inf, wrong ndim, empty arrays, mismatched features: ``ValueError`` naming the
  argument, the rule and the value received.
"""

import numbers

import numpy as np


def _kind_error(name, arr):
    return TypeError(f"`{name}` must be an array of real numbers; got dtype {arr.dtype}.")


def _convert(x, name):
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
    """float32 if every array is float32 (of either byte order), else float64."""
    if all(a.dtype.kind == "f" and a.dtype.itemsize == 4 for a in arrays if a is not None):
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
    bound = float(np.sqrt(float(np.finfo(dtype).max) / (16.0 * d)))
    big = max(float(arr.max()), -float(arr.min()))
    if big > bound:
        raise ValueError(
            f"`{name}` must have values of magnitude at most {bound:.3g} ({np.dtype(dtype)} squared distances "
            f"over {d} feature(s) would overflow); got {big:.3g}. Rescale the data (e.g. standardise it)."
        )


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
    try:
        arr = np.asarray(gamma)
    except Exception:
        raise TypeError(f"`{name}` must be a number or a 1-D array of numbers; got a ragged or unconvertible "
                        f"{type(gamma).__name__}.") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must be a number or a 1-D array of numbers; got {gamma!r}.")
    if arr.ndim != 1 or arr.shape[0] != m:
        raise ValueError(
            f"`{name}` must be a scalar or a 1-D array with one value per column of the "
            f"result ({m}); got shape {arr.shape}."
        )
    if not (np.all(np.isfinite(arr)) and np.all(arr > 0)):
        bad = arr[~(np.isfinite(arr) & (arr > 0))][0]
        raise ValueError(f"`{name}` must contain only finite values > 0; got {float(bad)!r}.")
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
    raise ValueError(
        f"{what} overflows {out.dtype} for these {names} (the values exceed {float(np.finfo(out.dtype).max):.3g}); "
        f"{hint}"
    )


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
