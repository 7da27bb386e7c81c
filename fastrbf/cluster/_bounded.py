"""Lloyd iterations that skip the rows whose label provably stays: Hamerly's bounds,
kept exact (the kernels are in :mod:`fastrbf._jit.cluster.bounds`).

Decisions:

- Hamerly's algorithm (one upper bound ``U`` on the distance of a row to its centre
  and one lower bound ``L`` on its distance to every other centre), not Elkan's
  (``K`` lower bounds per row) nor Yinyang's (one per group of centres): two floats
  per row whatever ``K``, an O(1) test per row, and O(K^2 d) per iteration for the
  centre gaps; Elkan's ``n x K`` bounds cost as much memory traffic per iteration as
  the ``K * d`` direct distances they save for the ``K * d`` of the workloads here.
- Exact: a row keeps its label only when the bounds prove that its computed
  brute-force distance to that centre is strictly below the computed distance to
  every other centre.  With ``gam`` and ``eta`` the relative and absolute error of a
  brute-force squared distance (``D = r^2 (1 + e) + f``, ``|e| <= gam``,
  ``|f| <= eta``, where ``r`` is the true distance), the test is
  ``U^2 (1 + gam) + eta < L'^2 (1 - gam) - eta``, ``L' = max(L, 2 s_a - U)`` with
  ``s_a`` a lower bound of half the distance of centre ``a`` to the nearest other
  (Hamerly's second test).  Every bound is kept on true distances in float64 and
  rounded outward after each operation.  A row that fails the test gets its upper
  bound tightened (its float64 distance to its centre) and, failing again, all its
  distances recomputed with the brute-force arithmetic (direct path: the data's dtype
  and the FMA chain of the distance kernel; the ranked and GEMM paths: the float64
  distances their certifications compare), argmin with ties to the lowest index.  The
  label of those paths is the argmin of those float64 distances over all centres: the
  float32 ranking (the micro-kernel's direct distances up to ``F32_DIRECT_MAX_D``
  features, else the GEMM) keeps every centre within its certified margin of the
  nearest, far above the float64 rounding of the distances.  A row the micro-kernel's
  ranking settles gets ``U`` from its smallest ranked distance plus the ranking's error
  and ``L`` from its second smallest less it (the GEMM path: ``U`` from its float64
  distance).  So the labels are
  those of the brute-force assignment, ties included (a tie is never proved, it is
  recomputed), and the centres, built from the same labels by the same fixed-chunk
  partial sums, are bitwise the same for any thread count.
- The first iteration is a brute-force one.  On the ranked path it sets both bounds of
  every row (``U`` from the distance to its centre, ``L`` from the second smallest
  ranked distance), and so does a later iteration that follows one which recomputed
  more than ``FULL_FRACTION`` of the rows; on the other paths the bounds start from its
  distances with ``L = 0`` (Hamerly's second test alone decides the next one).  The
  final labels and distances of :func:`fastrbf.kmeans` come from a brute-force pass, as
  in the brute-force loop.
- On the ranked paths (``direct32``, ``centred32``: ``K * d`` above 512 and up to
  ``F32_DIRECT_MAX_D`` features, the shapes "auto" gives the bounds) the iterations run
  in one compiled loop that the threads share (:class:`FitLoop`,
  :mod:`fastrbf._jit.cluster.bounded_fit`): no Python and no thread wake-up between two
  iterations.  One thread leads: it computes the centres' shifts and gaps and the
  ranking centres, opens the iteration's blocks of rows, takes blocks itself, and once
  all are done adds up the update slots, moves the centres and tests the stop; the
  others take blocks and wait (spinning, then yielding the core) for the next iteration.
  Each block is cut from an update chunk; the thread that ends a chunk's last block
  fills the chunk's slot, so the slots, and the result, are those of the Python loop
  whatever thread ran what.  The leader never waits for a thread to arrive (a worker
  that never starts leaves it all the blocks).  A report per iteration (``progress``)
  runs the loop one iteration per call, else calls last about
  ``fastrbf.cluster.BURST_SECONDS`` (Python, and so Ctrl-C, gets a turn between two); an
  iteration that empties a cluster returns to the rules of
  :func:`fastrbf.cluster._kmeans._lloyd` (relocation, ``empty="raise"``).  The brute-force loop
  (``algorithm="lloyd"``) on these paths runs in it too, every iteration a full pass
  that keeps no bounds.  The loop calls the kernels of its steps (the bound pass, the
  ranking, the update, the centres' gaps, the sums) through their addresses
  (:func:`block_kernels`, :mod:`fastrbf._jit.llvm.addressed`), so their code is compiled
  once, not once more inside the loop: a shorter first call, the same bits and the same
  speed per iteration.  The loop allocates nothing (its threads' scratch comes from
  :func:`fit_scratch`) and is compiled without reference counting.
- Why keep the compiled loop and its runtime (``addressed``, ``spin``, ``jit_static``,
  ``_threads.team``): against the Python loop over the same kernels it is 10-50% faster
  per fit where iterations are many and cheap (kmeans-converge, the smaller Lloyd rows)
  with AVX-512 and AVX2 alike, within noise elsewhere, for about 1 s more of cold compile
  (docs/performance.md, 'The compiled k-means loop against the Python loop').
- The direct and GEMM paths keep the Python loop (:meth:`BoundedAssigner.__call__`):
  assignment and update fused per chunk of ``UPDATE_CHUNK`` rows, a chunk's partial sums
  filled right after its rows are assigned, by the same thread.  (One kernel doing a
  chunk by steps of 2048 rows measured no faster and compiled slower.)
- Speed on the ranked path against scikit-learn, to convergence: see
  docs/performance.md, 'k-means' (``python -m fastrbf.bench --only kmeans-converge``).
- The bounds leave about a quarter of the rows to recompute on such data even after 100
  iterations (Hamerly's one lower bound moves by the largest shift of any other centre).
  Yinyang's group bounds leave somewhat fewer rows, and fewer centres per row, but the
  micro-kernel ranks all the centres of a row faster than the gathers, the set-up per tile
  and the merge of ranking the groups apart; the candidates of the annular and Exponion
  methods were all the centres for almost every row (normal data in 16 dimensions put
  every centre near every point).  Not kept either: summing anew only the update slots of
  the clusters a row left or joined (the test per row costs what the add saved).  Kept:
  the upper bound of a ranked row from its smallest ranked distance and the ranking's
  error instead of its float64 distance (no read of ``X``, see
  :func:`fastrbf._jit.cluster.certify.certify_direct`).  The prototypes and their
  timings: docs/performance.md, 'k-means'.
"""

import itertools

import numba
import numpy as np
from numba import types

from .. import _threads
from .._jit.cluster import bounded_fit as _jf
from .._jit.cluster import bounds as _jb
from .._jit.cluster import certify as _jc
from .._jit.cluster import lloyd as _jl
from .._jit.llvm import micro as _micro
from .._jit.llvm.addressed import addressed, check, table

#: On the ranked path, an iteration after one that recomputed more than this fraction of
#: the rows recomputes them all, on the contiguous ranking copy (no gather), and sets every
#: bound anew: the next iterations then settle more rows.  0.2-0.25 was the fastest of a
#: sweep from 0.1 to 0.5 (see docs/performance.md, 'k-means').
FULL_FRACTION = 0.25

#: ``algorithm="auto"`` uses the bounds from this many clusters, rows and iterations on,
#: on the ranked and GEMM paths: below them (few clusters, rows or iterations, or the
#: direct path's ``K * d <= 512``) a brute-force iteration costs about what the bounds'
#: bookkeeping and recomputations do (see docs/performance.md, 'k-means').
BOUNDED_MIN_K = 32
BOUNDED_MIN_ROWS = 16384
BOUNDED_MIN_ITER = 50


def bounds_pay(direct, n, K, max_iter):
    """Whether ``algorithm="auto"`` runs the bounded Lloyd loop for n rows, K clusters, up
    to ``max_iter`` iterations, on the direct (``direct``) or another assignment path."""
    return not direct and K >= BOUNDED_MIN_K and n >= BOUNDED_MIN_ROWS and max_iter >= BOUNDED_MIN_ITER


def for_chunks(work, nch, n_threads):
    """``work(c)`` for each chunk ``c`` in ``range(nch)``, chunks handed out one at a time
    to whichever worker thread is free (the result must not depend on which)."""
    nxt = itertools.count()  # next() is atomic under the GIL

    def worker(_lo, _hi):
        while True:
            c = next(nxt)
            if c >= nch:
                return
            work(c)

    _threads.map_ranges(worker, min(_threads.resolve(n_threads), nch), n_threads)


def sq_errors(dtype, d):
    """(relative, absolute) error bound of a squared distance of ``d`` features summed in
    ``dtype`` (a fused or unfused chain of non-negative terms; generous margins)."""
    fi = np.finfo(dtype)
    return (d + 3) * float(fi.eps), (2 * d + 2) * float(fi.smallest_subnormal)


class BoundedAssigner:
    """The assigner of the bounded Lloyd loop: wraps a brute-force assigner
    (:class:`fastrbf.cluster._assign.Assigner`) and has its interface (``__call__``,
    ``distances``) plus :meth:`forget`.  Calls with partial update slots are Lloyd
    iterations (the first one brute force, the next ones bounded); calls without are
    brute force."""

    def __init__(self, inner, direct):
        self.inner = inner
        self.X = X = np.ascontiguousarray(inner.X)  # the kernels read rows by flat offsets
        self.n_threads = inner.n_threads
        self.direct = direct
        self.acc = X.dtype if direct else np.dtype(np.float64)  # the brute-force arithmetic
        d = X.shape[1]
        self.gam, self.eta = sq_errors(self.acc, d)
        self.gam64, self.eta64 = sq_errors(np.float64, d)
        self.U = np.empty(0)
        self.L = np.empty(0)
        self.C_prev: np.ndarray | None = None
        self.n_full = 0  # rows recomputed against every centre in the last iteration

    def forget(self, rows):
        """Drop the bounds of ``rows`` (their labels were changed from outside)."""
        self.U[rows] = np.inf
        self.L[rows] = 0.0

    def _ct(self, C):
        return np.ascontiguousarray(C.T, dtype=self.acc)

    def __call__(self, C, labels, mind, want_dist=True, update=None):
        if update is None:
            return self.inner(C, labels, mind, want_dist)
        # the direct and GEMM paths (the ranked ones run in FitLoop)
        X = self.X
        n = X.shape[0]
        nt = self.n_threads
        C = np.ascontiguousarray(C)
        K = C.shape[0]
        if self.C_prev is None:
            self.inner(C, labels, mind, want_dist=True, update=update)
            self.U = np.empty(n)
            self.L = np.empty(n)
            _threads.map_ranges(lambda lo, hi: _jb.init_upper(mind, self.gam, self.eta, lo, hi, self.U, self.L), n, nt)
            self.C_prev = C.copy()
            return True
        shift = np.zeros(K)
        half_gap = np.zeros(K)
        _jb.centre_bounds(self.C_prev, C, self.gam64, self.eta64, shift, half_gap)
        far_j = int(np.argmax(shift))
        far1 = float(shift[far_j])
        far2 = float(np.partition(shift, K - 2)[K - 2]) if K > 1 else 0.0  # the second largest
        if self.direct:
            Ct = self._ct(C)
        else:
            nx = self.inner.centred()[2]
            Cc32, nc32, ncmax, err = self.inner.ranking_centres(C)
            packed = K <= _jc.PACKED_MAX_K
            nbits = max(1, (K - 1).bit_length())
        w, part, partw = update
        chunk = _jl.UPDATE_CHUNK
        nch = part.shape[0]
        n_full = np.zeros(nch, dtype=np.int64)
        U, L = self.U, self.L
        args = (self.gam, self.eta, self.gam64, self.eta64)

        def work(c):
            lo, hi = c * chunk, min(n, (c + 1) * chunk)
            fail = np.empty(hi - lo, dtype=np.int64)
            m = _jb.bound_rows(X, C, shift, far1, far_j, far2, half_gap, *args, lo, hi, labels, U, L, fail,
                               *bound_scratch())
            rows = fail[:m]
            if m and self.direct:
                _jb.full_rows(X, Ct, rows, self.gam, self.eta, labels, U, L)
            elif m:
                G = self.inner.products(Cc32, rows)
                if packed:
                    _jc.certify_packed(G, rows, True, 0, nx, nc32, ncmax, X, C, err, nbits, *args[2:], _jc.BOUNDS,
                                       labels, U, L)
                else:
                    _jc.certify_cols(G, rows, True, 0, nx, nc32, ncmax, X, C, err, *args[2:], _jc.BOUNDS, labels, U, L)
            n_full[c] = m
            _jl.update_partials(X, labels, w, chunk, c, c + 1, part, partw)

        with _threads.serial_blas():
            for_chunks(work, nch, nt)
        self.n_full = int(n_full.sum())
        self.C_prev = C.copy()
        return False

    def loop(self, C, w, labels, labels_old, tol_abs, max_iter, brute=False):
        """The compiled Lloyd loop (:class:`FitLoop`) from the centres ``C`` (moved in
        place); ``labels`` and ``labels_old`` start at -1.  ``brute``: every iteration
        assigns every row (the brute-force loop; no bounds are kept)."""
        return FitLoop(self, C, w, labels, labels_old, tol_abs, max_iter, brute)

    def distances(self, C, labels, mind):
        """``mind`` = the brute-force squared distance of each row to its labelled centre
        (the values the brute-force assignment reports)."""
        if not self.direct:
            self.inner.distances(C, labels, mind)
            return
        X = self.X
        Ct = self._ct(C)
        _threads.map_ranges(lambda lo, hi: _jb.labelled_sq(X, Ct, labels, lo, hi, mind), X.shape[0], self.n_threads)


#: the assignment paths (:meth:`fastrbf.cluster._assign.Assigner.path`) whose iterations run in
#: the compiled loop (:class:`FitLoop`); the others run :meth:`BoundedAssigner.__call__`
#: (bounded) or the assigner (brute force) from the Python loop
RANKED = ("direct32", "centred32")

#: rows per block of the compiled loop (about: an update chunk of UPDATE_CHUNK rows is cut
#: into blocks of this many rows rounded up to whole tiles of the ranking micro-kernel, the
#: last block of a chunk taking the rest; 20000 rows make about 20 blocks to share between
#: the threads).  Whole tiles: a block of 1024 rows would end in a partial tile padded
#: with copies (see docs/performance.md, 'k-means').
FIT_BLOCK = 1024


def block_kernels(X, Xr, mu, nx, C, C_prev, Cr, shift, half_gap, w, labels, labels_old, U, L, part, partw, sums, wsum,
                  blk_full, blk_changed, chunk_done, fail):
    """The table of the kernels that :func:`fastrbf._jit.cluster.bounded_fit.fit_loop` calls
    through their addresses (its last argument), compiled for the types of its other
    arguments (those of :class:`FitLoop`), in the order of ``bounded_fit.KERNELS``."""
    ty = numba.typeof
    i64, f64, b1 = types.int64, types.float64, types.boolean
    row = types.int64[::1]  # a row of ``fail``
    X_, C_, Cr_, lab_, U_, L_, K_ = ty(X), ty(C), ty(Cr), ty(labels), ty(U), ty(L), ty(shift)
    part_, partw_ = ty(part), ty(partw)
    rk, flt = types.Array(Cr_.dtype, 2, "C"), types.float64[:, ::1]
    return table(
        addressed(_jb.bound_rows, i64(X_, C_, K_, f64, i64, f64, K_, f64, f64, f64, f64, i64, i64, lab_, U_, L_, row,
                                      flt, types.boolean[::1], row)),
        addressed(_jc.certify_direct, types.void(X_, ty(Xr), Cr_, C_, row, b1, i64, i64, ty(nx), f64, f64, f64, f64,
                                                 f64, f64, i64, lab_, U_, L_, rk, row, rk, types.int32[::1], flt)),
        addressed(_jl.update_partials, types.void(X_, lab_, ty(w), i64, i64, i64, part_, partw_)),
        addressed(_jb.centre_bounds, types.void(ty(C_prev), C_, f64, f64, K_, K_)),
        addressed(_jl.reduce_partials, types.void(part_, partw_, ty(sums), ty(wsum))),
    )


def bound_scratch():
    """The scratch arrays of one call of ``bounds.bound_rows`` (``BOUND_ROWS`` rows)."""
    rows = _jb.BOUND_ROWS
    return np.empty((4, rows)), np.empty(rows, dtype=np.bool_), np.empty(rows, dtype=np.int64)


def fit_scratch(d, rank_dtype):
    """One thread's scratch arrays for the kernels of the compiled loop's blocks (the
    last argument of :func:`fastrbf._jit.cluster.bounded_fit.fit_loop`): those of
    ``bounds.bound_rows`` (:func:`bound_scratch`) and of ``certify.certify_direct``
    (:func:`direct_scratch`), in the order of :func:`block_kernels`' signatures."""
    return (*bound_scratch(), *direct_scratch(d, rank_dtype))


def direct_scratch(d, rank_dtype):
    """The scratch arrays of one call of ``certify.certify_direct`` (``NB`` columns of
    the ranking micro-kernel for ``rank_dtype``, the dtype of the ranking centres):
    tile, idx, ranked, lab, fw."""
    nb = _micro.argmin_width(numba.from_dtype(np.dtype(rank_dtype)))
    return (np.empty((d, nb), dtype=rank_dtype), np.empty(nb, dtype=np.int64), np.empty((2, nb), dtype=rank_dtype),
            np.empty(nb, dtype=np.int32), np.empty((3, nb)))


class FitLoop:
    """The Lloyd iterations on the ranked paths, bounded or (``brute``) brute force, in
    one compiled loop that the threads run together (:mod:`fastrbf._jit.cluster.bounded_fit`),
    with the rules of :func:`fastrbf.cluster._kmeans._lloyd` and the bounds of
    :class:`BoundedAssigner`: the same labels, centres and bits as the Python loop.
    :meth:`run` does up to ``budget`` iterations and returns; an
    iteration that leaves a cluster empty stops it before the centre update, which the
    caller then does (the relocation, :meth:`BoundedAssigner.forget`,
    :func:`fastrbf.cluster._rules.lloyd_centers`) with the sums in :attr:`sums` and
    :attr:`wsum`."""

    def __init__(self, assigner, C, w, labels, labels_old, tol_abs, max_iter, brute=False):
        a = assigner
        X = a.X
        n, d = X.shape
        K = C.shape[0]
        self.a = a
        if a.inner.path(K, C.dtype) == "centred32":
            mu, Xr, nx = a.inner.centred()
            unit = _jl.CENTRED_UNIT
            Cr = np.empty((K, d), dtype=np.float32)
        else:
            mu, nx, Cr, unit = np.empty(0), np.empty(0), C, 0.0
            Xr = a.inner.transposed()
        chunk = _jl.UPDATE_CHUNK
        nch = (n + chunk - 1) // chunk
        tile = _micro.argmin_width(types.float32)  # columns of a ranking tile
        bs = FIT_BLOCK if FIT_BLOCK < tile else -(-FIT_BLOCK // tile) * tile
        nsub = -(-chunk // bs)
        self.nt = max(1, min(_threads.resolve(a.n_threads), -(-n // bs) if nch == 1 else nch * nsub))
        a.U = np.empty(0 if brute else n)
        a.L = np.empty(0 if brute else n)
        self.part = np.empty((nch, K, d))
        self.partw = np.empty((nch, K))
        self.sums = np.empty((K, d))
        self.wsum = np.empty(K)
        self.sync = np.zeros(_jf.SYNC_SIZE, dtype=np.int64)
        ipar = self.ipar = np.zeros(_jf.IPAR_SIZE, dtype=np.int64)
        fpar = self.fpar = np.zeros(_jf.FPAR_SIZE)
        ipar[_jf.I_MAX_ITER] = max_iter
        ipar[_jf.I_CHUNK] = chunk
        ipar[_jf.I_NSUB] = nsub
        ipar[_jf.I_BS] = bs
        ipar[_jf.I_FIRST] = 1
        ipar[_jf.I_BRUTE] = brute
        fpar[_jf.F_GAM], fpar[_jf.F_ETA] = a.gam64, a.eta64
        fpar[_jf.F_RGAM], fpar[_jf.F_RETA] = sq_errors(np.float32, d)
        fpar[_jf.F_UNIT] = unit
        fpar[_jf.F_TOL] = tol_abs
        fpar[_jf.F_FULL_FRACTION] = FULL_FRACTION
        args = (X, Xr, mu, nx, C, np.empty_like(C), Cr, np.empty(K),
                np.empty(K), w, labels, labels_old, a.U, a.L, self.part, self.partw, self.sums, self.wsum,
                np.empty(nch * nsub, dtype=np.int64), np.empty(nch * nsub, dtype=np.int64),
                np.zeros(nch, dtype=np.int64), np.empty((self.nt, bs), dtype=np.int64))
        self.ktab = block_kernels(*args)
        self.args = (*args, self.ktab)
        self.scratch = [fit_scratch(d, Cr.dtype) for _ in range(self.nt)]

    @property
    def n_iter(self):
        return int(self.ipar[_jf.I_IT])

    @property
    def n_full(self):
        """Rows recomputed against every centre in the last iteration."""
        return int(self.ipar[_jf.I_N_FULL])

    @property
    def shift(self):
        """The summed squared shift of the last centre update."""
        return float(self.fpar[_jf.F_SHIFT])

    @property
    def changed(self):
        """Whether the last assignment changed a label."""
        return bool(self.ipar[_jf.I_CHANGED])

    @property
    def moved(self):
        """Whether the last centre update moved a centre."""
        return bool(self.ipar[_jf.I_MOVED])

    def run(self, budget):
        """Up to ``budget`` iterations; returns the status (``bounded_fit.RUNNING``:
        the budget or ``max_iter`` is spent, ``EMPTY``, ``CONVERGED``)."""
        sync, ipar, fpar = self.sync, self.ipar, self.fpar
        ipar[_jf.I_BUDGET] = budget
        sync[_jf.STOP] = 0

        def member(tid):
            try:
                _jf.fit_loop(tid, sync, ipar, fpar, *self.args, self.scratch[tid])
            except BaseException:
                sync[_jf.FAIL] = 1  # the leader stops waiting for this thread's block
                raise

        def leave():
            sync[_jf.STOP] = 1

        _threads.team(member, self.nt, leave)
        check(self.ktab, _jf.KERNELS)
        return int(ipar[_jf.I_STATUS])
