"""The dense k-means assignment (:class:`Assigner`): which path labels the rows of ``X``
for ``K`` centres, the copies of ``X`` each path works on (cached per assigner), and
the chunks of the certified float32 GEMM path.

The paths, by ``K * d`` and ``d`` (kernels and measurements: :mod:`fastrbf._jit.cluster.lloyd`):

- ``"direct"``: up to :data:`DIRECT_MAX_KD` products per point, exact direct differences
  in the data's dtype on the transposed copy of ``X``;
- ``"direct32"`` / ``"centred32"``: up to :data:`F32_DIRECT_MAX_D` features, the centres
  ranked by direct float32 distances (of float32 data, or of the centred float32 copy of
  float64 data) and every centre within the rigorous error bound of the best recomputed
  in float64;
- ``"gemm"``: otherwise, the ranking by a float32 GEMM of the centred copy, by chunks of
  :data:`GEMM_CHUNK_ROWS` rows (one single-threaded BLAS call each, on fastrbf's worker
  threads), certified the same way.

Every path gives the labels of the float64 argmin (ties to the lowest index) and, when
asked, the same distances, bit for bit.  The Lloyd loop (:mod:`fastrbf.cluster`), the
bounded loop (:mod:`fastrbf.cluster._bounded`) and the dask k-means (one assigner per
row block) share this class; :class:`fastrbf.cluster._sparse.SparseAssigner` has its
interface for sparse ``X``.
"""

import threading

import numpy as np

from .. import _threads
from .._jit.cluster import certify as _jc
from .._jit.cluster import lloyd as _jl
from ._bounded import direct_scratch, for_chunks, sq_errors
from ._rules import transposed

#: up to this many K * d products per point the exact direct assignment is used (the
#: crossover with the certified float32 GEMM path, measured on AVX2)
DIRECT_MAX_KD = {np.dtype(np.float64): 512, np.dtype(np.float32): 512}

#: above ``DIRECT_MAX_KD``, up to this many features: the certified direct float32
#: assignment (``certify_direct``; the GEMM path's labels and distances), not the GEMM
F32_DIRECT_MAX_D = 48

#: rows per GEMM call of the certified assignment (the float32 block stays in L2)
GEMM_CHUNK_ROWS = 1024
#: the K x GEMM_CHUNK_ROWS float32 scratch tile of the GEMM assignment is kept per thread
#: (reused by every chunk and call) up to this size; larger tiles are allocated per call
TILE_CACHE_BYTES = 1 << 24
_tiles = threading.local()


def _gemm_tile(K, cols):
    """A (K, cols) float32 scratch tile, C-contiguous, reused by this thread.

    A fresh 1 MB tile per chunk of rows costs page faults whenever the allocator hands
    large blocks back to the system at once, as dask's worker processes make glibc do
    (``MALLOC_TRIM_THRESHOLD_``): measured 1.0 s of 4.0 s in 20 Lloyd iterations of
    1e6 x 32, K = 256 on two workers."""
    size = K * cols
    if 4 * size > TILE_CACHE_BYTES:
        return np.empty((K, cols), dtype=np.float32)
    buf = getattr(_tiles, "buf", None)
    if buf is None or buf.size < size:
        buf = _tiles.buf = np.empty(max(size, min(K * GEMM_CHUNK_ROWS, TILE_CACHE_BYTES // 4)), dtype=np.float32)
    return buf[:size].reshape(K, cols)


def _run(assign, X, labels, update, n_threads, align):
    """``assign(lo, hi)`` over the rows of X on the worker threads; with ``update =
    (w, part, partw)`` the rows go by chunks of ``UPDATE_CHUNK``, each chunk's partial
    update slot filled right after its rows are assigned, chunks handed out one at a
    time to whichever thread is free (the slots do not depend on the split)."""
    n = X.shape[0]
    if update is None:
        _threads.map_ranges(assign, n, n_threads, align=align)
        return
    w, part, partw = update
    chunk = _jl.UPDATE_CHUNK

    def work(c):
        assign(c * chunk, min(n, (c + 1) * chunk))
        _jl.update_partials(X, labels, w, chunk, c, c + 1, part, partw)

    for_chunks(work, part.shape[0], n_threads)


class Assigner:
    """Assignment of the rows of X to centres; caches the copies of X it works on (the
    transposed copy of the direct paths, the centred float32 copy of the GEMM path).

    The interface other backends use (the dask k-means keeps one per row block):
    :meth:`prepare` makes the copies an assignment to K centres needs, :meth:`shared`
    gives a new assigner that starts with this one's copies (what it caches later stays
    its own), :meth:`cached` lists the copies (for their size)."""

    def __init__(self, X, n_threads):
        self.X, self.n_threads = X, n_threads
        self._centred = None
        self._Xt = None

    def path(self, K, dtype):
        """The assignment to ``K`` centres of ``dtype``: "direct", "direct32" (float32
        data), "centred32" (float64 data ranked on its centred float32 copy) or "gemm"."""
        X = self.X
        if K * X.shape[1] <= DIRECT_MAX_KD[X.dtype]:
            return "direct"
        if not (X.dtype == dtype and X.shape[1] <= F32_DIRECT_MAX_D):
            return "gemm"
        return "direct32" if X.dtype == np.float32 else "centred32"

    def prepare(self, K):
        """Make now the copies of X that the assignment to ``K`` centres uses."""
        if self.path(K, self.X.dtype) in ("gemm", "centred32"):
            self._prepare_gemm()
        else:
            self.transposed()

    def transposed(self):
        """The copy of the direct paths: the rows of X as columns (d, n), made on the first
        call."""
        self._Xt = transposed(self.X, self.n_threads) if self._Xt is None else self._Xt
        return self._Xt

    def shared(self):
        """A new assigner of the same rows that starts with this one's copies."""
        a = Assigner(self.X, self.n_threads)
        a._Xt, a._centred = self._Xt, self._centred
        return a

    def cached(self):
        """The copies of X held (arrays)."""
        return [a for a in (self._Xt, *(self._centred or ())) if a is not None]

    def centred(self):
        """The copies of the GEMM path: (mean of the rows, the centred rows in float32,
        their squared norms in float64), made on the first call.  The float32 rows are
        columns (d, n) up to :data:`F32_DIRECT_MAX_D` features, for the direct float32
        ranking; beyond, rows (n, d): BLAS takes them transposed as fast as columns, and
        the copy is written in order (see :meth:`products`)."""
        return self._prepare_gemm()

    def _prepare_gemm(self):
        if self._centred is None:
            X = self.X
            n, d = X.shape
            mu = X.mean(axis=0, dtype=np.float64)
            nx = np.empty(n, dtype=np.float64)
            columns = d <= F32_DIRECT_MAX_D
            Xc32 = np.empty((d, n) if columns else (n, d), dtype=np.float32)
            _threads.map_ranges(lambda lo, hi: _jl.centre_f32(X, mu, lo, hi, Xc32, nx, columns), n, self.n_threads)
            self._centred = (mu, Xc32, nx)
        return self._centred

    def products(self, Cc32, rows, out=None):
        """``Cc32 @ (the centred float32 rows)``, (K, len(rows)) float32: ``rows`` a slice
        or an index array of rows, into ``out`` when given."""
        Xc32 = self._prepare_gemm()[1]
        if Xc32.shape[0] != self.X.shape[0]:  # columns (d, n)
            return np.matmul(Cc32, Xc32[:, rows], out=out)
        if out is None:  # (the rows the bounds leave: a few)
            return np.matmul(Cc32, Xc32[rows].T)
        # the tiles of the full assignment: BLAS's faster orientation, then transposed
        np.copyto(out, np.matmul(Xc32[rows], Cc32.T).T)
        return out

    def __call__(self, C, labels, mind, want_dist=True, update=None):
        """Fill ``labels``; fill ``mind`` too unless ``want_dist`` is False.  Returns
        whether ``mind`` holds the distances (the direct path always computes them).

        ``update=(w, part, partw)``: also fill the partial update slots (see
        :func:`fastrbf.cluster.lloyd_update`) of each chunk of ``UPDATE_CHUNK`` rows right after its rows are
        assigned, on the same thread (one parallel step per Lloyd iteration)."""
        X = self.X
        K = C.shape[0]
        path = self.path(K, C.dtype)
        if path == "direct":
            Xt = self.transposed()
            _run(lambda lo, hi: _jl.assign_rows(Xt, C, lo, hi, labels, mind), X, labels, update, self.n_threads,
                 _jl.RB)
            return True
        if path in ("direct32", "centred32"):
            errs = (*sq_errors(np.float32, X.shape[1]), *sq_errors(np.float64, X.shape[1]))
            if path == "direct32":
                Xt, Cr, nx, ncmax, unit = self.transposed(), C, np.empty(0), 0.0, 0.0
            else:  # rounding of x - mu to float64 then float32, with a margin (see certify_direct)
                _, Xt, nx = self._prepare_gemm()
                Cr, _, ncmax, _ = self.ranking_centres(C)
                unit = _jl.CENTRED_UNIT
            mode = _jc.DIST if want_dist else _jc.DIST_RECOMPUTED
            none = np.empty(0, dtype=np.int64)

            def direct(lo, hi):
                _jc.certify_direct(X, Xt, Cr, C, none, False, lo, hi - lo, nx, ncmax, unit, *errs, mode, labels, mind,
                                   None, *direct_scratch(X.shape[1], Cr.dtype))

            _run(direct, X, labels, update, self.n_threads, _jl.RB)
            return want_dist
        nx = self._prepare_gemm()[2]
        Cc32, nc32, ncmax, err = self.ranking_centres(C)
        packed = K <= _jc.PACKED_MAX_K
        nbits = max(1, (K - 1).bit_length())
        mode = _jc.DIST if want_dist else _jc.DIST_RECOMPUTED
        none = np.empty(0, dtype=np.int64)

        def work(lo, hi):
            for r0 in range(lo, hi, GEMM_CHUNK_ROWS):
                r1 = min(hi, r0 + GEMM_CHUNK_ROWS)
                Gb = _gemm_tile(K, r1 - r0)
                self.products(Cc32, slice(r0, r1), Gb)
                if packed:
                    _jc.certify_packed(Gb, none, False, r0, nx, nc32, ncmax, X, C, err, nbits, 0.0, 0.0, mode, labels,
                                       mind, None)
                else:
                    _jc.certify_cols(Gb, none, False, r0, nx, nc32, ncmax, X, C, err, 0.0, 0.0, mode, labels, mind, None)

        with _threads.serial_blas():
            _run(work, X, labels, update, self.n_threads, GEMM_CHUNK_ROWS)
        return want_dist

    def ranking_centres(self, C):
        """What the GEMM path ranks the centres ``C`` with: (the centred centres in
        float32, their squared norms in float32, the largest in float64, the
        coefficient of the ranking's error bound)."""
        mu = self._prepare_gemm()[0]
        Cc = np.subtract(C, mu, dtype=np.float64)
        nc = np.einsum("ij,ij->i", Cc, Cc)
        # bound of the float32 ranking error, see fastrbf._jit.cluster.certify.certify_cols
        err = (self.X.shape[1] + 8) * float(np.finfo(np.float32).eps) * 1.01
        return Cc.astype(np.float32), nc.astype(np.float32), float(nc.max()), err

    def distances(self, C, labels, mind):
        """``mind`` = exact squared distance of each row to its labelled centre."""
        X = self.X
        _threads.map_ranges(lambda lo, hi: _jl.assigned_sqdist(X, C, labels, lo, hi, mind), X.shape[0], self.n_threads)
