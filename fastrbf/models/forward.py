"""Forward selection of RBF-network centres by orthogonal least squares
(``rbf_network(..., centers="forward")``; Chen, Cowan & Grant 1991).

From a set of C candidate centres the centres are added one at a time, each time the
candidate whose basis function lowers the training error most (the error-reduction
ratio, summed over the outputs), the candidates orthogonalised incrementally against
the chosen basis.  The weights of the chosen centres are then solved by the network's
own least-squares path (TSQR and SVD), so nothing downstream changes.

Decisions:

- One pass over the data, not one per step.  A step of the classical algorithm needs
  ``Phi^T q`` for the new basis vector ``q``: N x C kernel values per step (1e11 for
  N = 1e5, C = 5000 and 200 steps).  Instead one pass accumulates the (C + 1 + k)^2
  Gram matrix ``M^T M`` of ``M = [Phi 1 Y]`` (:func:`gram_pass`): per chunk of rows a
  numba kernel makes the candidates' kernel values (one task per candidate), then
  single-threaded BLAS adds ``A_i^T A_{i:}`` to row block ``i`` of the upper triangle,
  one task per row block.  Each block of the Gram is owned by one task and the chunks
  are added in order, so the result is bitwise the same for any thread count, and
  memory is the Gram plus one chunk (no partial Gram per thread).  The selection then
  runs in the C-dimensional space (:func:`select`): Gram-Schmidt in the Gram's inner
  product (a pivoted, partial Cholesky factorisation whose pivot is the best
  candidate), O(C s) per step at step s.  The pass costs N C^2 flops at the DGEMM
  rate (see docs/performance.md, 'Models and approximations').
- The Gram squares the condition number.  A candidate whose squared norm left after
  projecting out the chosen basis is at most :data:`DEPENDENT` (1e-10) times its own
  squared norm is numerically dependent on the chosen ones and is skipped (its
  reduction would be rounding noise); a chosen candidate is never offered again.  The
  selection stops early when every remaining candidate is dependent.  Exact repeats of
  a candidate (its row and width) are dropped before the pass (the first one kept).
- When the Gram does not fit in memory a ``MemoryError`` suggests a smaller
  ``candidates=<int>``: a matrix-free pass per step would cost N x C kernel values per
  step, far slower than the one pass on a subsample of candidates.
- The default candidates are every training point up to :data:`DEFAULT_CANDIDATES`
  (2000) points, else a seeded subsample of that many rows: the Gram is then at most
  32 MiB and its pass N x 2000^2 flops, while forward selection picks K << C centres,
  so more candidates rarely help as much as they cost.
- The bias is the first column, always chosen first (unpenalised); the targets are
  centred beforehand (the selection is the same in exact arithmetic, the error
  reductions lose fewer digits).  With a ridge ``alpha`` the selection is that of the
  augmented design ``[Phi 1; sqrt(alpha) I 0]`` (the bias column not penalised): each
  candidate is judged by the exact ridge objective ``||y - Phi_S w - b||^2 + alpha
  ||w||^2`` of the chosen set with it, the objective the network's final weights
  minimise (Chen, Chng & Alkadhimi's regularised OLS penalises the weights of the
  orthogonal basis instead, which depends on the order of selection).  In the Gram this
  is ``alpha`` added to the candidates' diagonal.
"""

import functools

import numpy as np

from .. import _threads
from .. import _validation as _v
from .._jit import forward as _jfwd

#: default size of the candidate set: every point up to this many, else a seeded subsample
DEFAULT_CANDIDATES = 2000
#: a candidate whose residual squared norm is at most this times its squared norm is
#: numerically dependent on the chosen ones and skipped
DEPENDENT = 1e-10
#: rows of the Gram per BLAS task of the Gram pass
GRAM_BLOCK = 128
#: elements of the design chunk of the Gram pass (64 MiB of float64)
CHUNK_ELEMENTS = 1 << 23


def candidate_rows(candidates, n, rng):
    """The rows of ``X`` (n rows) that are the candidates, sorted: all of them
    (``"all"``, or the default up to :data:`DEFAULT_CANDIDATES` rows), a seeded
    subsample (an int, or the default above that), or None when ``candidates`` is an
    array (the caller checks it)."""
    rule = f'None, "all", an int in [1, n_samples] = [1, {n}] or an array'
    if candidates is None:
        return np.arange(n) if n <= DEFAULT_CANDIDATES else _subsample(n, DEFAULT_CANDIDATES, rng)
    if isinstance(candidates, str):
        _v.check_choice(candidates, "candidates", ("all",), text=rule)
        return np.arange(n)
    if _v.is_int(candidates):
        m = _v.check_int(candidates, "candidates", 1, n, text=rule)
        return np.arange(n) if m == n else _subsample(n, m, rng)
    try:
        ndim = np.ndim(candidates)
    except ValueError:  # a ragged sequence: NumPy cannot make an array of it
        raise ValueError(f"`candidates` must be {rule}; got a ragged {type(candidates).__name__} (rows of different "
                         "lengths).") from None
    if ndim == 0:  # a float, a bool, an object: not an array of points
        raise TypeError(f"`candidates` must be {rule}; got {candidates!r}.")
    return None


def _subsample(n, m, rng):
    return np.sort(rng.choice(n, m, replace=False))


def check_tol(tol):
    """The stopping threshold of the relative training error: None, or a number in (0, 1)."""
    if tol is None:
        return None
    v = _v.check_real(tol, "tol", low=0, strict=True, text="in (0, 1)")
    if v >= 1:
        raise ValueError(f"`tol` must be in (0, 1); got {tol!r}.")
    return v


def distinct_candidates(Cc, g):
    """The indices (sorted) of the first occurrence of each distinct candidate (a row of
    ``Cc`` and its width ``g``): only those enter the Gram, so a repeated candidate
    costs nothing and is never chosen twice."""
    return np.sort(np.unique(np.c_[Cc, g], axis=0, return_index=True)[1])


def check_n_select(n_centers, distinct):
    """The largest number of centres to select from ``distinct`` distinct candidates:
    ``n_centers``, at most ``distinct``; None: ``distinct``."""
    if n_centers is None:
        return distinct
    return _v.check_int(n_centers, "n_centers", 1, distinct,
                        text=f"None or an int in [1, {distinct}] (the number of distinct candidates)",
                        type_error=ValueError)


def check_forward_unused(candidates, tol):
    """``candidates`` and ``tol`` are options of ``centers="forward"`` only."""
    for name, val in (("candidates", candidates), ("tol", tol)):
        if val is not None:
            raise ValueError(f'`{name}` is used only with centers="forward"; got {name}={val!r}.')


def check_gram_memory(n, d, n_candidates, k, n_select, n_threads):
    """Refuse (fastrbf's MemoryError) a selection whose Gram would not fit."""
    p = n_candidates + 1 + k
    workers = _threads.resolve(n_threads)
    # the Gram, one design chunk, per worker a block of the update, the selection's
    # factor rows; the float64 copy of X and its transpose
    need = 8 * (p * p + chunk_rows(p) * p + workers * GRAM_BLOCK * p + (n_select + 1) * n_candidates
                + 4 * n_candidates * (k + 2) + 2 * n * d)
    _v.check_memory(need, f"rbf_network: forward selection from {n_candidates} candidates (a Gram matrix of "
                    f"order {p})", "pass a smaller `candidates` (an int: a seeded subsample of the rows of `X`).")


def chunk_rows(p):
    """Rows per design chunk of the Gram pass for ``p`` columns (a multiple of 256)."""
    return int(min(4096, max(256, CHUNK_ELEMENTS // p // 256 * 256)))


def selection_targets(T, bias):
    """The targets the selection sees: centred when there is a bias (same selection,
    fewer digits lost in the error reductions)."""
    return T - T.mean(axis=0) if bias else T


def gram_pass(Cc, X, spec, T, n_threads, Xt=None):
    """Upper triangle (p x p, p = C + 1 + k; the lower part is not meaningful) of
    ``M^T M``, ``M = [Phi 1 T]`` the N x p design of the C candidates ``Cc`` with kernel
    ``spec`` (a :class:`~fastrbf._pairwise.KernelSpec`, one gamma per candidate), a
    column of ones and the targets ``T`` (n, k): see the module notes."""
    n = X.shape[0]
    C = Cc.shape[0]
    k = T.shape[1]
    p = C + 1 + k
    Xt = np.ascontiguousarray(X.T) if Xt is None else Xt
    Tc = np.ascontiguousarray(T)
    G = np.zeros((p, p))
    R = chunk_rows(p)
    buf = np.empty((p, R))
    nt = _threads.for_work(float(R) * p * p, n_threads)

    def update(At, i0):
        i1 = min(p, i0 + GRAM_BLOCK)
        G[i0:i1, i0:] += At[i0:i1] @ At[i0:].T

    with _threads.serial_blas():
        for r0 in range(0, n, R):
            r1 = min(n, r0 + R)
            At = buf if r1 - r0 == R else np.empty((p, r1 - r0))
            _jfwd.candidate_rows.run(n_threads, Cc, Xt, r0, r1, *spec.args, At)
            At[C] = 1.0
            At[C + 1 :] = Tc[r0:r1].T
            _threads.run_tasks([functools.partial(update, At, i0) for i0 in range(0, p, GRAM_BLOCK)], nt)
    return G


def select(G, k, n_select, alpha, bias, tol):
    """(selection, relative errors): forward selection by orthogonal least squares in
    the Gram ``G`` of :func:`gram_pass` (upper triangle; C candidates, the ones, ``k``
    targets), with ridge ``alpha`` on the candidates' weights.

    Step s picks the eligible candidate j of largest error reduction ``sum_q z_jq^2 /
    d_j``, with ``d_j`` its squared norm and ``z_jq`` its inner products with target q,
    both after projecting out the chosen basis (the bias first, when ``bias``); ``d_j``
    and ``z_j`` are downdated with the new basis vector's inner products with every
    candidate (one row of the Gram less the chosen rows' products: O(C s)).  A candidate
    with ``d_j <= DEPENDENT * (G_jj + alpha)`` is skipped.  The error after each chosen
    centre is the ridge objective over ``sum_q ||y_q - mean(y_q)||^2`` (over 1 for
    constant targets); the selection stops after ``n_select`` centres, when that error
    is below ``tol``, or when no candidate is eligible.  Ties: the lowest index."""
    p = G.shape[0]
    C = p - 1 - k
    n = G[C, C]
    gy = G[C + 1 :, C + 1 :]
    g1y = G[C, C + 1 :]
    den = float(np.trace(gy) - g1y @ g1y / n)
    den = den if den > 0 else 1.0
    dg = np.diag(G)[:C] + alpha
    d = dg.copy()
    z = G[:C, C + 1 :].copy()
    E = float(np.trace(gy))
    A = np.zeros((n_select + 1, C))
    s = 0
    if bias:  # the column of ones, unpenalised, first
        r = np.sqrt(n)
        A[0] = G[:C, C] / r
        u = g1y / r
        d -= A[0] * A[0]
        z -= np.outer(A[0], u)
        E -= float(u @ u)
        s = 1
    eligible = np.ones(C, dtype=bool)
    chosen: list[int] = []
    errors: list[float] = []
    score = np.empty(C)
    with _threads.serial_blas():
        while len(chosen) < n_select:
            ok = eligible & (d > DEPENDENT * dg)
            if not ok.any():
                break
            score.fill(-np.inf)
            np.divide(np.einsum("jq,jq->j", z, z), d, out=score, where=ok)
            c = int(np.argmax(score))
            r = np.sqrt(d[c])
            u = z[c] / r
            col = np.concatenate((G[:c, c], G[c, c:C]))
            col[c] += alpha
            a = (col - A[:s, c] @ A[:s]) / r
            d -= a * a
            z -= np.outer(a, u)
            E -= float(u @ u)
            A[s] = a
            s += 1
            eligible[c] = False
            chosen.append(c)
            errors.append(max(E, 0.0) / den)
            if tol is not None and errors[-1] < tol:
                break
    return np.array(chosen, dtype=np.int64), np.array(errors)


def forward_select(Cc, X, Xt, spec, T, alpha, bias, n_select, tol, n_threads):
    """(selection, relative errors) of :func:`select` on the in-memory data ``X`` (float64,
    and its transpose ``Xt``) with targets ``T`` (n, k)."""
    G = gram_pass(Cc, X, spec, selection_targets(T, bias), n_threads, Xt)
    return select(G, T.shape[1], n_select, alpha, bias, tol)
