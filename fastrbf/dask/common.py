"""The plumbing of the dask backend: the checks of dask (and in-memory) inputs
chunked by rows, the dtype and thread rules of the tasks, the global row index of a
block's NaN/inf, and the tree reductions of per-block results computed on the client.
"""


import dask
import dask.array as da
import numpy as np
from dask import delayed
from numpy.typing import ArrayLike

from .. import _validation as _v

#: a dask array, or an in-memory array (one block)
Data = da.Array | ArrayLike

#: blocks combined per node of the tree reductions
SPLIT_EVERY = 8


# ---------------------------------------------------------------- validation
def is_dask(x):
    return isinstance(x, da.Array)


def check_kind(dtype, name):
    if np.dtype(dtype).kind not in "biuf":
        raise TypeError(f"`{name}` must be an array of real numbers; got dtype {dtype}.")


def as_rows(X, name="X", ndim=2) -> da.Array:
    """``X`` as a dask array chunked by rows (NumPy: validated now, one block)."""
    if not is_dask(X):
        arr = _v.as_array(X, name, ndim=ndim)
        _v.check_finite(arr, name)
        return da.from_array(arr, chunks=arr.shape)
    check_kind(X.dtype, name)
    if X.ndim != ndim:
        shape_txt = "(n_samples, n_features)" if ndim == 2 else "(n,)"
        raise ValueError(f"`{name}` must be a {ndim}-D array of shape {shape_txt}; got shape {X.shape}.")
    if any(np.isnan(c) for cs in X.chunks for c in cs):
        raise ValueError(f"`{name}` has unknown chunk sizes (nan); call `{name}.compute_chunk_sizes()` first.")
    if X.size == 0:
        raise ValueError(f"`{name}` must not be empty; got shape {X.shape}.")
    if ndim == 2 and len(X.chunks[1]) != 1:
        raise ValueError(f"`{name}` must be chunked by rows only (one chunk along the features); got "
                         f"chunks {X.chunks[1]} along axis 1: use `{name}.rechunk({{1: -1}})`.")
    return X


def aligned(Y, X, name, ndims=(1, 2)) -> da.Array:
    """A row-aligned companion of ``X``: same row chunks (NumPy: cut like ``X``)."""
    if not is_dask(Y):
        arr = as_in_memory(Y, name)
        if arr.ndim not in ndims:
            raise ValueError(f"`{name}` must be a {' or '.join(f'{d}-D' for d in ndims)} array; got shape {arr.shape}.")
        if arr.shape[0] != X.shape[0]:
            raise ValueError(f"`{name}` must have one row per row of `X` ({X.shape[0]}); got shape {arr.shape}.")
        return da.from_array(arr, chunks=(X.chunks[0], *arr.shape[1:]))
    if Y.ndim not in ndims:
        raise ValueError(f"`{name}` must be a {' or '.join(f'{d}-D' for d in ndims)} array; got shape {Y.shape}.")
    if Y.shape[0] != X.shape[0]:
        raise ValueError(f"`{name}` must have one row per row of `X` ({X.shape[0]}); got shape {Y.shape}.")
    if Y.chunks[0] != X.chunks[0]:
        raise ValueError(f"`{name}` must have the same row chunks as `X`; got {Y.chunks[0]} and {X.chunks[0]}: "
                         f"rechunk one of them (e.g. `{name}.rechunk({{0: X.chunks[0]}})`).")
    if Y.ndim == 2 and len(Y.chunks[1]) != 1:
        Y = Y.rechunk({1: -1})  # columns of targets are few
    return Y


def as_in_memory(Y, name):
    """An in-memory ``Y`` as an ndarray (any dtype: class labels too)."""
    try:
        return np.asarray(Y)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"`{name}` must be array-like; could not convert it: {exc}") from None


def check_threads(n_threads):
    if n_threads is None:
        return None
    nt = _v.check_int(n_threads, "n_threads", text="a nonzero int or None")
    if nt == 0:
        raise ValueError(f"`n_threads` must be a nonzero int or None; got {n_threads!r}.")
    return nt


def check_gamma_dtype(g, dtype):
    """float32 results compute with a float32 ``gamma``: refuse widths that round to 0 or
    inf there (inf * 0 would give NaN at zero distance)."""
    if dtype == np.float32:
        fi = np.finfo(np.float32)
        bad = g[(g > fi.max) | (g < fi.tiny)]
        if bad.size:
            raise ValueError(f"`gamma` must be within the float32 range [{fi.tiny:.3g}, {fi.max:.3g}] for float32 "
                             f"data; got {float(bad[0])!r}.")


def row_index(X):
    """The global row numbers of ``X``, chunked like its rows: a task takes the offset
    of its block from it (the first entry)."""
    return da.arange(X.shape[0], chunks=(X.chunks[0],), dtype=np.int64)


def raise_global(exc, *blocks):
    """Re-raise the non-finite-value error ``exc`` of a task with the global row index:
    ``blocks`` are the task's (data block, offset of its first row, argument name);
    the first block with a NaN/inf is reported.  Any other error is re-raised as is."""
    for arr, offset, name in blocks:
        a = np.asarray(arr)
        if a.dtype.kind == "f":
            found = _v.find_non_finite(a, offset)
            if found is not None:
                raise _v.non_finite_error(name, found, "in this block") from None
    raise exc


def in_memory(Y, name):
    """An in-memory (shipped to every task) 2-D array: centres, ``Y`` of gram_matvec."""
    if is_dask(Y):
        raise TypeError(f"`{name}` must be an in-memory array here (it is shipped to every block); got a dask "
                        f"array: call `{name}.compute()` first.")
    return _v.check_data(Y, name)


def offsets(X):
    return np.r_[0, np.cumsum(X.chunks[0])].astype(np.int64)


def tree(parts, combine, first=None):
    """Tree reduction of a list of Delayed with ``combine(*group)`` (groups in order);
    ``first`` combines the leaves (and is applied to a single leaf too)."""
    parts = list(parts)
    if first is not None:
        parts = [delayed(first, pure=False)(*parts[i : i + SPLIT_EVERY]) for i in range(0, len(parts), SPLIT_EVERY)]
    while len(parts) > 1:
        parts = [delayed(combine, pure=False)(*parts[i : i + SPLIT_EVERY]) if len(parts[i : i + SPLIT_EVERY]) > 1
                 else parts[i] for i in range(0, len(parts), SPLIT_EVERY)]
    return parts[0]


def row_blocks(X):
    return list(X.to_delayed().ravel())


def block_offset(block_info):
    """First global row of the block of the first array argument of a ``map_blocks`` task."""
    return block_info[0]["array-location"][0][0]


def add_parts(*parts):
    out = [np.array(p, copy=True) if isinstance(p, np.ndarray) else p for p in parts[0]]
    for p in parts[1:]:
        for i, v in enumerate(p):
            out[i] = out[i] + v
    return tuple(out)


# ---------------------------------------------------------------- RBF network
def checked_block(Xb, offset, name="X"):
    """A 2-D real block whose NaN/inf raise with the global row index."""
    try:
        return _v.check_data(Xb, name)
    except ValueError as exc:
        raise_global(exc, (Xb, offset, name))
        raise  # not reached


def f64_block(Xb, offset):
    """A row block as validated float64 (NaN/inf raise here, inside the task)."""
    return _v.to_dtype(checked_block(Xb, offset), np.float64)


def _take(block, idx):
    return block[idx]


def rows_at(xb, offs, idx):
    """Rows ``idx`` (sorted global indices) of the persisted blocks ``xb`` (first global
    rows ``offs``), gathered on the client as float64."""
    b = np.searchsorted(offs, idx, side="right") - 1
    parts = [delayed(_take, pure=False)(xb[i], idx[b == i] - offs[i]) for i in np.unique(b)]
    return np.ascontiguousarray(np.concatenate(dask.compute(*parts)), dtype=np.float64)


def checked_targets(Yb, offset, name="Y"):
    """A block of targets whose NaN/inf raise with the global row index."""
    try:
        return _v.check_targets(Yb, np.shape(Yb)[0], name)
    except ValueError as exc:
        raise_global(exc, (Yb, offset, name))
        raise  # not reached


