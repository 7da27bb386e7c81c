"""Sparse input: ``scipy.sparse`` matrices and arrays checked into canonical CSR rows.

:func:`check_csr` is the one check of sparse input (k-means, the pairwise engine, the
random features); :class:`CSRRows` is what it returns.  ``scipy.sparse`` is recognised
by the type's module (:func:`is_sparse`), so ``import fastrbf`` imports no SciPy.  Any
format is accepted and converted to CSR (as scikit-learn does); the caller's matrix is
never modified: one with unsorted indices or duplicate entries is copied and the copy
made canonical (duplicates summed in ``X``'s dtype, as ``toarray`` does).  The data
keep their dtype (integers and bools become float64) and their index dtype.
"""

import numpy as np

from . import _validation as _v


def is_sparse(X) -> bool:
    """Whether ``X`` is a ``scipy.sparse`` matrix or array (without importing SciPy)."""
    return type(X).__module__.startswith("scipy.sparse") and hasattr(X, "tocsr")


class CSRRows:
    """Checked CSR rows: ``data``, ``indices``, ``indptr`` (C-contiguous, writeable,
    canonical: sorted indices, no duplicates) and ``shape``; never the caller's arrays
    when they had to change."""

    def __init__(self, data, indices, indptr, shape):
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.shape = (int(shape[0]), int(shape[1]))

    ndim = 2

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def nnz(self):
        return int(self.data.shape[0])

    def row_sqnorms(self):
        """The squared Euclidean norm of each row, in float64 (may overflow to inf)."""
        x = self.data.astype(np.float64)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        with np.errstate(over="ignore"):
            return np.bincount(rows, weights=x * x, minlength=self.shape[0])

    def max(self):
        """The largest entry, implicit zeros included."""
        top = float(self.data.max()) if self.nnz else 0.0
        return max(top, 0.0) if self.nnz < self.shape[0] * self.shape[1] else top

    def min(self):
        """The smallest entry, implicit zeros included."""
        low = float(self.data.min()) if self.nnz else 0.0
        return min(low, 0.0) if self.nnz < self.shape[0] * self.shape[1] else low

    def astype(self, dtype):
        """The rows with data of ``dtype`` (this object when nothing changes)."""
        if self.data.dtype == dtype:
            return self
        return CSRRows(_v.to_dtype(self.data, dtype), self.indices, self.indptr, self.shape)

    def scaled(self, t):
        """The rows multiplied by ``2**t`` (exact; this object for ``t = 0``)."""
        if t == 0:
            return self
        with np.errstate(over="ignore", under="ignore"):
            return CSRRows(np.ldexp(self.data, t).astype(self.dtype, copy=False), self.indices, self.indptr, self.shape)

    def rows(self, ids):
        """The rows ``ids`` as a dense (len(ids), d) array of the data's dtype."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        out = np.zeros((ids.shape[0], self.shape[1]), dtype=self.dtype)
        for r, i in enumerate(ids):
            p0, p1 = self.indptr[i], self.indptr[i + 1]
            out[r, self.indices[p0:p1]] = self.data[p0:p1]
        return out

    def column_variances(self):
        """The variance of each column (float64), implicit zeros included."""
        n, d = self.shape
        x = self.data.astype(np.float64)
        mean = np.bincount(self.indices, weights=x, minlength=d) / n
        dev = np.bincount(self.indices, weights=(x - mean[self.indices]) ** 2, minlength=d)
        zeros = n - np.bincount(self.indices, minlength=d)
        return (dev + zeros * mean**2) / n

    def row_keys(self, mask=None):
        """(a key per row that equal rows share, the row index) for the rows where
        ``mask`` is true (all rows by default), explicit zeros and signs of zero
        ignored."""
        for i in range(self.shape[0]) if mask is None else np.flatnonzero(mask):
            p0, p1 = self.indptr[i], self.indptr[i + 1]
            vals = self.data[p0:p1] + self.dtype.type(0)  # -0.0 -> 0.0
            nz = vals != 0
            yield (self.indices[p0:p1][nz].astype(np.int64).tobytes(), vals[nz].tobytes()), int(i)


def check_csr(X, name):
    """``X`` (a ``scipy.sparse`` matrix or array) as :class:`CSRRows`: 2-D, not empty, of
    a real dtype, finite, well formed; errors name ``name`` as for dense data."""
    shape = tuple(X.shape)
    if len(shape) != 2:
        raise ValueError(f"`{name}` must be a 2-D array of shape (n_samples, n_features); got shape {shape}.")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must be an array of real numbers; got dtype {X.dtype}.")
    if shape[0] == 0 or shape[1] == 0:
        raise ValueError(f"`{name}` must not be empty; got shape {shape}.")
    fmt = getattr(X, "format", None)
    Xr = X if fmt == "csr" else X.tocsr()  # another format: a new matrix
    n, d = shape
    data, indices, indptr = np.asarray(Xr.data), np.asarray(Xr.indices), np.asarray(Xr.indptr)
    itype = indices.dtype if indices.dtype in (np.int32, np.int64) else np.dtype(np.int64)
    nnz = int(indptr[-1]) if indptr.shape[0] == n + 1 else -1
    if (indptr.shape[0] != n + 1 or indptr[0] != 0 or nnz > min(data.shape[0], indices.shape[0])
            or np.any(np.diff(indptr) < 0)
            or (nnz > 0 and (int(indices[:nnz].min()) < 0 or int(indices[:nnz].max()) >= d))):
        raise ValueError(f"`{name}` must be a well-formed sparse matrix (indptr of length n_samples + 1, "
                         f"non-decreasing, column indices in [0, {d})); got a malformed {type(X).__name__}.")
    data, indices = data[:nnz], indices[:nnz]
    found = _v.find_non_finite(data)
    if found is not None:
        p = found[0][0]
        row = int(np.searchsorted(indptr, p, side="right")) - 1
        raise _v.non_finite_error(name, ((row, int(indices[p])), found[1], found[2]))
    rows = CSRRows(_v.to_dtype(data, data.dtype if data.dtype.kind == "f" else np.float64),
                   _v.to_dtype(indices, itype), _v.to_dtype(indptr, itype), shape)
    if not _canonical(rows):
        rows = _canonical_copy(rows)
    return rows


def _canonical(X):
    """Whether every row's column indices are strictly increasing."""
    if X.nnz < 2:
        return True
    step = np.diff(X.indices) > 0
    starts = X.indptr[1:-1]
    starts = starts[(starts > 0) & (starts < X.nnz)]
    step[starts - 1] = True  # a new row may start lower
    return bool(step.all())


def _canonical_copy(X):
    """A copy with sorted indices and duplicates summed (SciPy's ``sum_duplicates``)."""
    import scipy.sparse as sp

    M = sp.csr_matrix((X.data.copy(), X.indices.copy(), X.indptr.copy()), shape=X.shape)
    M.sum_duplicates()
    itype = X.indices.dtype
    return CSRRows(_v.to_dtype(M.data, X.dtype), _v.to_dtype(M.indices, itype), _v.to_dtype(M.indptr, itype), X.shape)


def to_scipy(X, dtype=None):
    """``X`` (:class:`CSRRows`) as a ``scipy.sparse.csr_matrix`` sharing its arrays (its
    data converted to ``dtype`` when given)."""
    import scipy.sparse as sp

    data = X.data if dtype is None else _v.to_dtype(X.data, dtype)
    return sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape, copy=False)


def compress_columns(X, Y):
    """``X`` and ``Y`` (:class:`CSRRows`; ``Y`` may be ``X``) with their columns renumbered,
    in order, over the columns that either stores, when the number of features is far
    above that count; else the two as they are.  Distances and dot products are those of
    the stored values, summed in the same order, so every result keeps its bits; what
    changes is the memory of SciPy's sparse product, whose transposed operand has one
    pointer per column (a matrix with 10^11 mostly empty columns needs 745 GiB)."""
    stored = X.nnz + (0 if Y is X else Y.nnz)
    if X.shape[1] <= 4 * stored + 1024:
        return X, Y
    used = np.unique(X.indices if Y is X else np.concatenate([X.indices, Y.indices]))

    def renumbered(A):
        return CSRRows(A.data, np.searchsorted(used, A.indices).astype(A.indices.dtype), A.indptr,
                       (A.shape[0], used.size))

    Xc = renumbered(X)
    return Xc, (Xc if Y is X else renumbered(Y))
