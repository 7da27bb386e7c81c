"""k-means on sparse data: the checked CSR rows (:class:`fastrbf._sparse.CSRRows`), their Lloyd
assignment (:class:`SparseAssigner`, the interface of :class:`fastrbf.cluster._assign.Assigner`),
update, empty-cluster relocation, k-means++ passes, column variances and distinct rows.
:mod:`fastrbf.cluster` and :mod:`fastrbf.cluster._seeding` dispatch here when ``X`` is a
``scipy.sparse`` matrix or array; the Lloyd loop and its rules are theirs.

Decisions:

- Any ``scipy.sparse`` format is accepted and converted to CSR (as scikit-learn does);
  ``X`` is never densified: memory is O(nnz + K d) besides the update's partial slots
  (one K x d float64 slot per 8192 rows, as for dense data).  ``scipy.sparse`` is
  recognised by the type's module, so ``import fastrbf`` imports no SciPy, and it is
  imported only to convert another format or to make a canonical copy.
- The caller's matrix is never modified: a matrix with unsorted indices or duplicate
  entries is copied and the copy made canonical (duplicates summed in ``X``'s dtype,
  as ``toarray`` does); explicit zeros are kept (they add nothing).
- The data keep their dtype (float32 stays float32; integers and bools become
  float64) and their index dtype (int32 or int64); the centres are in the data's
  dtype.  Distances and sums are float64.
- Labels are the argmin of the exact (float64 direct-difference) distances, ties to
  the lowest index, as for dense data on the GEMM path: the float64 expanded form
  ranks the centres and the exact distances decide among the centres within its
  rigorous error bound (see :mod:`fastrbf._jit.cluster.sparse`).  The update's sums are
  bitwise those of the densified data, so the centres are too whenever the labels are.
- Every ``algorithm`` runs Lloyd's brute-force iterations on sparse data (the result
  is the one the bounded iterations give on dense data, bit for bit).
- ``init="random"`` draws ``K`` distinct rows uniformly among the distinct rows in order
  of first occurrence (dense data: in sorted order), so it may pick other rows than
  on the densified data for the same seed; k-means++ picks the same rows.
"""

import numpy as np

from .. import _threads
from .. import _validation as _v
from .._jit.cluster import lloyd as _jl
from .._jit.cluster import seeding as _jseed
from .._jit.cluster import sparse as _js
from .._scaling import ldexp, max_abs, shift_for
from ._bounded import for_chunks


def _ranges(func, n, work, n_threads):
    """``func(lo, hi)`` over ``range(n)`` on the worker threads (one for small work)."""
    _threads.map_ranges(func, n, _threads.for_work(work, n_threads))


class SparseAssigner:
    """Assignment of CSR rows to dense centres, with the interface of
    :class:`fastrbf.cluster._assign.Assigner` that the Lloyd loop uses (``__call__``,
    ``distances``); the squared norms of the rows are computed once."""

    def __init__(self, X, n_threads):
        self.X = X
        self.n_threads = n_threads
        self._nx = None

    def norms(self):
        """The squared norms of the rows (float64), made on the first call."""
        if self._nx is None:
            X = self.X
            nx = np.empty(X.shape[0], dtype=np.float64)
            _ranges(lambda lo, hi: _js.row_sqnorms(X.data, X.indptr, lo, hi, nx), X.shape[0], X.nnz, self.n_threads)
            self._nx = nx
        return self._nx

    def __call__(self, C, labels, mind, want_dist=True, update=None):
        """Fill ``labels`` (and ``mind`` unless ``want_dist`` is False); returns
        ``want_dist``.  ``update=(w, part, partw)``: also fill the partial update slots
        of each chunk of ``UPDATE_CHUNK`` rows right after its rows are assigned."""
        X = self.X
        n, d = X.shape
        K = C.shape[0]
        nx = self.norms()
        C64 = np.asarray(C, dtype=np.float64)
        Ct = np.ascontiguousarray(C64.T)
        nc = np.einsum("ij,ij->i", C64, C64)
        err = (2 * d + 8) * float(np.finfo(np.float64).eps) * 1.01
        ncmax = float(nc.max())
        args = (X.data, X.indices, X.indptr, nx, C, Ct, nc, ncmax, err, want_dist)

        def assign(lo, hi):
            _js.assign_csr(*args, lo, hi, labels, mind)

        work = 2 * K * (X.nnz + n)
        if update is None:
            _ranges(assign, n, work, self.n_threads)
            return want_dist
        w, part, partw = update
        chunk = _jl.UPDATE_CHUNK

        def step(c):
            assign(c * chunk, min(n, (c + 1) * chunk))
            _jl.update_partials((X.data, X.indices, X.indptr), labels, w, chunk, c, c + 1, part, partw)

        for_chunks(step, part.shape[0], _threads.for_work(work, self.n_threads))
        return want_dist

    def distances(self, C, labels, mind):
        """``mind`` = squared distance of each row to its labelled centre."""
        X = self.X
        C64 = np.asarray(C, dtype=np.float64)
        nc = np.einsum("ij,ij->i", C64, C64)
        _ranges(lambda lo, hi: _js.assigned_sqdist_csr(X.data, X.indices, X.indptr, C, nc, labels, lo, hi, mind),
                X.shape[0], 2 * X.nnz, self.n_threads)


def assign_csr(X, C, dtype, n_threads):
    """:func:`fastrbf.lloyd_assign` on checked CSR rows ``X`` and checked centres ``C``
    in the result ``dtype``: (labels, squared distances in ``dtype``), the data scaled
    by a power of two as for dense data."""
    Xs, Cc = X.astype(dtype), _v.to_dtype(C, dtype)
    t = shift_for(max_abs(Xs), dtype, Xs.shape[1], M_other=max_abs(Cc))
    labels = np.empty(Xs.shape[0], dtype=np.int64)
    mind = np.empty(Xs.shape[0], dtype=np.float64)
    SparseAssigner(Xs.scaled(-t), n_threads)(ldexp(Cc, -t), labels, mind)
    return labels, ldexp(mind, 2 * t, dtype)


def sparse_sums(X, labels, K, w, n_threads):
    """(cluster sums (K, d), cluster weights (K,)) of the rows of ``X``, float64: one
    partial slot per chunk of ``UPDATE_CHUNK`` rows, added in chunk order."""
    n, d = X.shape
    nch = (n + _jl.UPDATE_CHUNK - 1) // _jl.UPDATE_CHUNK
    part = np.empty((nch, K, d), dtype=np.float64)
    partw = np.empty((nch, K), dtype=np.float64)
    _ranges(lambda lo, hi: _jl.update_partials((X.data, X.indices, X.indptr), labels, w, _jl.UPDATE_CHUNK, lo, hi,
                                                part, partw), nch, 2 * X.nnz, n_threads)
    sums = np.empty((K, d), dtype=np.float64)
    wsum = np.empty(K, dtype=np.float64)
    _jl.reduce_partials(part, partw, sums, wsum)
    return sums, wsum


def relocate_empty_csr(X, w, labels, mind, sums, wsum):
    """``fastrbf._jit.cluster.lloyd.relocate_empty`` on CSR rows: the rule picks the points (run
    on the rows with no columns, so that it moves only labels and weights), then their
    sums move in the order they were taken."""
    before = labels.copy()
    _jl.relocate_empty(np.empty((X.shape[0], 0), dtype=X.dtype), w, labels, mind, sums, wsum)
    moved = np.flatnonzero(labels != before)
    if moved.size:
        order = moved[np.argsort(-mind[moved], kind="stable")]  # decreasing distance, ties by index
        _js.move_rows_csr(X.data, X.indices, X.indptr, w, order, before[order], labels[order], sums)


class SparseSeeding:
    """The passes of greedy k-means++ over CSR rows (those of
    :func:`fastrbf.cluster._seeding.greedy_kmeans_plusplus` for dense data)."""

    def __init__(self, X, w64, n_threads):
        self.X = X
        self.w64 = w64
        self.n_threads = n_threads
        self.nch = (X.shape[0] + _jseed.SEED_CHUNK - 1) // _jseed.SEED_CHUNK

    def _norms(self, cand):
        c64 = np.asarray(cand, dtype=np.float64)
        return np.einsum("ij,ij->i", c64, c64)

    def update(self, cand, c, closest, wc):
        """``closest`` = min(closest, distance to ``cand[c]``); ``wc`` = w * closest."""
        X, nc = self.X, self._norms(cand)
        _ranges(lambda c0, c1: _js.seed_update_csr(X.data, X.indices, X.indptr, cand, nc, c, closest, self.w64,
                                                   _jseed.SEED_CHUNK, c0, c1, wc), self.nch, 2 * X.nnz, self.n_threads)

    def potentials(self, cand, closest, part):
        """``part`` (nchunks, t): per chunk, the potential if ``cand[c]`` were added."""
        X, nc = self.X, self._norms(cand)
        _ranges(lambda c0, c1: _js.seed_potentials_csr(X.data, X.indices, X.indptr, cand, nc, closest, self.w64,
                                                       _jseed.SEED_CHUNK, c0, c1, part),
                self.nch, 2 * X.nnz * cand.shape[0], self.n_threads)


def has_distinct_rows(X, mask, K):
    """Whether the rows of ``X`` where ``mask`` is true hold at least ``K`` distinct
    points (stops as soon as they do)."""
    seen = set()
    for key, _ in X.row_keys(mask):
        seen.add(key)
        if len(seen) >= K:
            return True
    return False


def distinct_rows(X, mask):
    """The index of the first occurrence of each distinct row where ``mask`` is true."""
    first: dict = {}
    for key, i in X.row_keys(mask):
        first.setdefault(key, i)
    return np.fromiter(first.values(), dtype=np.int64, count=len(first))
