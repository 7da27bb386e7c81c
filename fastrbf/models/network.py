"""RBF networks with K << N centres: :func:`rbf_network` and the learning of its widths.

Decisions:

- The N x K design matrix is never formed: chunks of rows of ``[Phi 1 Y]`` are made
  by a numba kernel and folded into an upper-triangular factor by LAPACK's
  triangular-pentagonal QR (``tpqrt``: TSQR, :func:`tsqr`), group by group on worker
  threads, the group factors then folded in group order, so the result is bitwise the
  same for any thread count.
- The least-squares problem is then solved from the small factor by SciPy ``lstsq``
  (SVD, :func:`weights_from_factor`): the condition number is not squared as with the
  normal equations ``Phi^T Phi``, ``alpha = 0`` gives the minimum-norm least-squares
  solution of ``numpy.linalg.lstsq`` on ``Phi`` (same ``rcond``), and ``alpha > 0``
  penalises the weights but not the bias (as scikit-learn's ``Ridge``).
- The backend-free steps are plain functions that :func:`fastrbf.dask.rbf_network`
  calls too: :func:`check_centers_arg` (the centre arguments), :func:`tsqr` and
  :class:`TSQRWork` (the factor of a block of rows and the fold of two factors),
  :func:`weights_from_factor` (the small solve).  Only the passes over the data differ.
"""


import numpy as np

from .. import _progress, _threads
from .. import _validation as _v
from .._jit import network as _jnet
from .._lazy import scipy
from .._progress import ProgressArg
from .._typing import ArrayLike, KernelArg, Seed, Threads
from ..cluster._kmeans import kmeans_named
from ..kernels import KERNELS, check_kernel, check_params, kernel_value
from ..linalg import check_alpha
from . import forward as _fwd
from .common import RBFNetwork, as_targets, class_codes, model_data, network_targets, owned

_F64 = np.dtype(np.float64)


#: rows per design chunk and chunks per group of the TSQR pass
TSQR_CHUNK = 4096
TSQR_GROUP_CHUNKS = 16


class TSQRWork:
    """Per-thread scratch of the TSQR pass."""

    def __init__(self, p, chunk):
        self.nb = min(32, p)
        self.T = np.empty((p, self.nb))
        self.work = np.empty(self.nb * p)
        self.iw = np.zeros(8, dtype=np.int32)
        self.gbuf = np.empty(_jnet.JB)
        self.Bt = np.empty((p, chunk))

    def fold(self, Rt, Bt):
        from .._jit.llvm import lapack as _jlapack  # looks LAPACK up in SciPy: not at import

        info = _jlapack.tpqrt(Rt, Bt, self.T, self.work, self.iw)
        if info != 0:  # pragma: no cover - only for invalid arguments
            raise RuntimeError(f"LAPACK dtpqrt failed with info={info}.")


def tsqr(C, X, spec, T, n_threads, Xt=None):
    """Upper-triangular R (p x p, p = K + 1 + k) with R^T R = M^T M, M = [Phi 1 T], the
    design matrix of kernel ``spec`` (a :class:`~fastrbf._pairwise.KernelSpec`, one gamma
    per centre)."""
    n = X.shape[0]
    p = C.shape[0] + 1 + T.shape[1]
    Xt = np.ascontiguousarray(X.T) if Xt is None else Xt
    Tc = np.ascontiguousarray(T)
    rows = TSQR_CHUNK * TSQR_GROUP_CHUNKS
    ng = -(-n // rows)
    Rts = np.zeros((ng, p, p))  # Rts[i] = R_i^T, C-ordered (R_i Fortran-ordered)

    def work(g0, g1):
        w = TSQRWork(p, TSQR_CHUNK)
        for i in range(g0, g1):
            for r0 in range(i * rows, min(n, (i + 1) * rows), TSQR_CHUNK):
                r1 = min(n, r0 + TSQR_CHUNK)
                Bt = w.Bt if r1 - r0 == TSQR_CHUNK else np.empty((p, r1 - r0))
                _jnet.design_chunk(C, Xt, r0, r1, *spec.args, Tc, w.gbuf, Bt)
                w.fold(Rts[i], Bt)

    with _threads.serial_blas():
        _threads.map_ranges(work, ng, n_threads)
        w = TSQRWork(p, 1)
        Rt = np.zeros((p, p))
        for i in range(ng):  # fold the group factors in group order
            w.fold(Rt, Rts[i])
    return np.triu(Rt.T)




def rbf_network(X: ArrayLike, Y: ArrayLike, *, gamma: ArrayLike, n_centers: int | None = None,
                centers: str | ArrayLike = "kmeans", alpha: float = 0.0, bias: bool = True, kernel: KernelArg = "gaussian",
                classify: bool = False, seed: Seed = None, max_iter: int = 300, n_init: int = 1,
                candidates: int | str | ArrayLike | None = None, tol: float | None = None,
                learn_gamma: bool = False, per_center: bool = False,
                validation: tuple[ArrayLike, ArrayLike] | None = None, gamma_tol: float = 1e-4,
                max_gamma_iter: int = 100, n_threads: Threads = None, progress: ProgressArg = False,
                length_scale: ArrayLike | None = None) -> RBFNetwork:
    """An RBF network: K centres, output weights by least squares (or ridge) and a bias.

    ``f(x) = sum_j w_j exp(-gamma_j ||x - c_j||^2) + b`` (for the Gaussian kernel).  The
    N x K design matrix is never formed (see the module notes: TSQR in chunks).

    Parameters
    ----------
    X : array_like of shape (N, d)
    Y : array_like of shape (N,) or (N, k)
        Targets; class labels (any values) with ``classify=True``.
    gamma : float or array_like of shape (K,)
        Width, or one width per centre; > 0.  With ``centers="forward"`` one per
        candidate (shape (C,)); the network keeps those of the chosen centres.
    n_centers : int, optional
        Number of k-means centres (with ``centers="kmeans"``); with ``centers="forward"``
        the most centres to select (default: as many as there are distinct candidates),
        at most the number of distinct candidates.
    centers : "kmeans", "all", "forward" or array_like of shape (K, d)
        k-means centres of ``X``, every training point (the full network), centres chosen
        from ``candidates`` by forward selection, or given.  Forward selection
        (orthogonal least squares, Chen, Cowan & Grant 1991) adds one centre at a time,
        the candidate that lowers the training error most (summed over the outputs),
        after the bias, which is always the first column (unpenalised).  With
        ``alpha > 0`` a candidate is judged by the ridge objective ``||y - Phi_S w - b||^2
        + alpha ||w||^2`` of the chosen set with it (least squares on the design
        augmented with ``sqrt(alpha) I``).  The candidates' Gram matrix is made in one
        pass over the data (C^2 floats of memory); a candidate numerically dependent on
        the chosen ones (squared norm left after projecting them out at most 1e-10 of its
        own) is skipped.  The weights of the chosen centres are then solved as for given
        centres (so ``learn_gamma`` applies to them).
    alpha : float, default 0
        Ridge on the weights (not the bias).  0: the minimum-norm least-squares
        (pseudo-inverse) solution.
    bias : bool, default True
    kernel : str, default "gaussian"
        A kernel of :data:`fastrbf.KERNELS`.
    classify : bool, default False
        Two classes: regression on -1/+1 and the sign; more: one-vs-rest on -1/+1
        targets and the largest score.
    seed, max_iter, n_init :
        Passed to :func:`fastrbf.kmeans`; ``seed`` also draws the subsample of
        ``candidates``.
    candidates : None, "all", int or array_like of shape (C, d)
        With ``centers="forward"``: the candidate centres: every training point
        (``"all"``), a seeded subsample of that many rows of ``X`` (an int, sorted by
        row), or given.  None: every training point up to 2000 of them, else a
        subsample of 2000 rows (the Gram is at most 32 MiB; K << C centres are chosen).
    tol : float, optional
        With ``centers="forward"``: stop as soon as the relative training error
        ``E_K = sum_q ||r_q||^2 / sum_q ||y_q - mean(y_q)||^2`` (``r`` the residual of
        the least-squares fit of the chosen centres and the bias, plus ``alpha ||W||^2``
        with a ridge) falls below ``tol``, a number in (0, 1).  None: only
        ``n_centers`` (or running out of independent candidates) stops.
    learn_gamma : bool, default False
        Learn the width(s) from ``gamma`` on (Gaussian kernel): first a coarse scan of
        ``gamma`` times ``10**k``, ``k`` from -3 to 3 in half decades (the objective at
        each, weights re-solved), from the best of which the classical alternation runs:
        a least-squares solve for the weights at fixed widths and a gradient step on
        ``log gamma`` at fixed weights (analytic gradient of the squared error, fused;
        backtracking so the error never increases), until the relative improvement is
        below ``gamma_tol`` or ``max_gamma_iter`` steps.  The scan makes the result
        independent of a start up to three decades off; gradient steps alone stop in
        the first flat stretch of the error.
    per_center : bool, default False
        With ``learn_gamma``: one width per centre instead of one for all (learned after a
        common width has been).
    validation : (X_val, Y_val), optional
        With ``learn_gamma``: take the gradient steps on the validation squared error
        (weights still solved on the training data) and stop when it goes up.
    gamma_tol, max_gamma_iter :
        Stopping rule of ``learn_gamma``: a finite number >= 0 and an int >= 0.
    n_threads : int, optional
    progress : bool, logging.Logger or callable, default False
        Report the k-means (as :func:`fastrbf.kmeans`, task ``"rbf_network kmeans"``)
        and the width steps of ``learn_gamma`` (stage ``"gamma"``, metric ``error``:
        the objective of the steps; the ETA assumes ``max_gamma_iter`` steps, an upper
        bound): True on stderr, a logger's ``info``, or a callable given a dict per
        iteration.

    length_scale : float or array_like of shape (d,), optional
        Per-feature widths: the fit (k-means included) runs on the data with each feature
        divided by its scale; the network keeps the scales and its centres in the data's
        units.

    Returns
    -------
    RBFNetwork
        With ``error_history`` when ``learn_gamma``: per accepted step, the objective of
        the steps divided by N (the training squared error plus ``alpha ||w||^2``; with
        ``alpha = 0`` a ridge of ``1e-12 N`` is used for the steps, the final weights are
        solved with ``alpha = 0``), or the validation mean squared error.  With
        ``centers="forward"``: ``selection`` (the chosen candidates' indices into the
        candidate set, in the order chosen) and ``selection_error`` (``E_K`` after each
        added centre, non-increasing).

    Examples
    --------
    XOR with two given centres (bias, then the two weights):

    >>> import numpy as np
    >>> from fastrbf import rbf_network
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> net = rbf_network(X, [1.0, -1.0, -1.0, 1.0], centers=np.array([[0.0, 0.2], [1.0, 0.7]]), gamma=1.0)
    >>> print(np.round(net.bias, 3), np.round(net.weights[:, 0], 3))
    [-7.848] [7.397 7.823]

    Six centres chosen by forward selection among 40 points:

    >>> X = np.linspace(0, 1, 40)[:, None]
    >>> net = rbf_network(X, np.sin(6 * X[:, 0]), centers="forward", n_centers=6, gamma=10.0)
    >>> net.selection.shape, bool(net.selection_error[-1] < 1e-3)
    ((6,), True)
    """
    entry = check_kernel(kernel)
    Xa = model_data(X, "X")
    T, single, classes = network_targets(Y, Xa.shape[0], classify)
    n, d = Xa.shape
    a = check_network_alpha(alpha)
    _check_network_options(validation, gamma_tol, max_gamma_iter, learn_gamma, per_center, bias, classify)
    rng = _v.check_seed(seed, name="seed")
    rep = _progress.reporter(progress, "rbf_network")
    Ca = None if isinstance(centers, str) else model_data(centers, "centers")
    forward = isinstance(centers, str) and centers == "forward"
    if forward:  # K: the candidates (their widths), K_sel: the most centres to select
        tol = _fwd.check_tol(tol)
        rows = _fwd.candidate_rows(candidates, n, rng)
        Cand = _v.to_dtype(Xa[rows] if rows is not None else model_data(candidates, "candidates"), _F64,
                           "candidates")
        _v.check_features(Xa, Cand, "X", "candidates")
        K = Cand.shape[0]
    else:
        _fwd.check_forward_unused(candidates, tol)
        K = check_centers_arg(centers if Ca is None else Ca, n_centers, n, d)
    g, _ = _v.check_gamma(gamma, K, _F64)
    g = owned(g, gamma)
    if forward:
        keep = _fwd.distinct_candidates(Cand, g)
        K_sel = _fwd.check_n_select(n_centers, keep.shape[0])
    else:
        K_sel = K
    deg, coef0 = check_params(entry, 3, 1.0)
    ls = _v.check_length_scale(length_scale, d)
    _check_network_memory(n, d, K_sel, T.shape[1], centers, n_threads)
    if forward:
        _fwd.check_gram_memory(n, d, keep.shape[0], T.shape[1], K_sel, n_threads)
    Xd = _v.to_dtype(Xa, _F64, "X")
    C_data = None  # the centres in the data's units, when the fit runs on rescaled data
    if ls is not None:  # the whole fit on the rescaled data (k-means too); the centres kept in the data's units
        C_data = owned(_v.to_dtype(Ca, _F64, "centers"), centers) if Ca is not None else \
            (owned(Xd, X) if centers == "all" else None)
        Xd = _v.scale_features(Xd, ls, _F64, "X")
        Ca = None if Ca is None else _v.scale_features(Ca, ls, _F64, "centers")
    selection = selection_error = None
    if Ca is not None:
        C = owned(_v.to_dtype(Ca, _F64, "centers"), centers)
    elif centers == "all":
        C = owned(Xd, X)  # copied only when it is the caller's own array
    elif forward:
        Cc = np.ascontiguousarray(Cand[keep] if ls is None else _v.scale_features(Cand[keep], ls, _F64, "candidates"))
        sel, selection_error = _fwd.forward_select(Cc, Xd, np.ascontiguousarray(Xd.T), entry.spec(g[keep], coef0, deg),
                                                   T, a, bias, K_sel, tol, n_threads)
        selection = keep[sel]
        C, g = Cc[sel], g[selection]
        C_data = None if ls is None else Cand[selection]
    else:
        if _v.is_int(max_iter) and int(max_iter) > 2**31:
            max_iter = 2**31  # Lloyd stops long before; the compiled loop counts in int64
        C = kmeans_named(Xd, K, name="n_centers", seed=rng, max_iter=max_iter, n_init=n_init, n_threads=n_threads,
                    progress=rep).centers
    Xt = np.ascontiguousarray(Xd.T)
    solve = lambda gam: _solve_weights(C, Xd, Xt, gam, entry, coef0, deg, T, a, bias, n_threads)  # noqa: E731
    W, b = solve(g)
    history = None
    if learn_gamma:
        if entry.code != KERNELS["gaussian"].code:
            raise ValueError(f"`learn_gamma` needs the 'gaussian' kernel; got {kernel!r}.")
        if validation is not None:
            Xv, Yv = validation
            Xva = model_data(Xv, "validation X")
            _v.check_features(Xa, Xva, "X", "validation X")
            nv = Xva.shape[0]
            if classify:  # coded with the training classes
                _v.check_class_labels(Yv, nv, "validation Y", "validation X")
                Yva = np.asarray(Yv)
                vidx = np.minimum(np.searchsorted(classes, Yva), classes.shape[0] - 1)
                if not np.array_equal(classes[vidx], Yva):
                    raise ValueError("`validation` labels must be classes seen in `Y`.")
                Tv = class_codes(vidx, classes.shape[0])
            else:
                Tv, _ = as_targets(_v.check_targets(Yv, nv, "validation Y", name_x="validation X"))
            if Tv.shape[1] != T.shape[1]:
                raise ValueError(f"`validation` targets must have shape ({nv}, {T.shape[1]}); got {Tv.shape}.")
            Xva = Xva if ls is None else _v.scale_features(Xva, ls, _F64, "validation X")
            Xvt = np.ascontiguousarray(_v.to_dtype(Xva, _F64).T)
        else:
            Xvt, Tv = Xt, T
        # with alpha = 0 the steps use a tiny ridge: the truncated least-squares solution of
        # an ill-conditioned design jumps as singular values cross the rank cut-off, which
        # stalls gradient steps; the final weights are solved with the caller's alpha
        a_learn = a if a > 0 else 1e-12 * n
        solve_learn = lambda gam: _solve_weights(C, Xd, Xt, gam, entry, coef0, deg, T, a_learn, bias, n_threads)  # noqa: E731
        # one common width first, then (per_center) one per centre from there: per-centre
        # steps from a poor common start crawl (a few centres dominate the gradient)
        g, W0, b0 = _scan_gamma(C, Xvt, Tv, g, solve_learn, a_learn, validation is not None, n_threads)
        g, W, b, history = _learn_gamma(C, Xvt, Tv, g, W0, b0, solve_learn, False, gamma_tol,
                                        max_gamma_iter, validation is not None, a_learn, n_threads, rep, not per_center)
        if per_center:
            g, W, b, more = _learn_gamma(C, Xvt, Tv, g, W, b, solve_learn, True, gamma_tol,
                                         max_gamma_iter, validation is not None, a_learn, n_threads, rep)
            history = np.r_[history, more[1:]]
        if a_learn != a:
            W, b = solve(g)
    dtype = _v.result_dtype(Xa) if classify else _v.result_dtype(Xa, np.asarray(Y))
    if ls is not None:
        C = C * ls if C_data is None else C_data
    return RBFNetwork(C, g, W, b, kernel_value(entry), classes, dtype, single, history, ls, selection, selection_error)


def check_centers_arg(centers, n_centers, n, d, choices=("kmeans", "all")):
    """The number of centres K of a network on n points of d features: ``centers`` is
    one of ``choices`` ("kmeans": ``n_centers`` of them; "all": n) or the checked array of
    the given centres (d features; ``n_centers``, if given, equal to its row count)."""
    if isinstance(centers, str):
        allowed = ", ".join(f'"{c}"' for c in choices)
        if _v.check_choice(centers, "centers", choices, text=f"{allowed} or an array") == "all":
            return n
        if n_centers is None:
            raise ValueError('`n_centers` must be given with centers="kmeans".')
        return _v.check_int(n_centers, "n_centers", 1, n, text=f"an int in [1, n_samples] = [1, {n}]",
                            type_error=ValueError)
    _v.check_features(np.empty((0, d)), centers, "X", "centers")
    K = centers.shape[0]
    if n_centers is not None and not _v.is_int(n_centers):
        raise TypeError(f"`n_centers` must be None or an int; got {n_centers!r}.")
    if n_centers is not None and n_centers != K:
        raise ValueError(f"`n_centers` ({n_centers}) must equal the number of given `centers` ({K}).")
    return K


def check_network_alpha(alpha):
    """The ridge of a network: one number >= 0, as a float."""
    if _v.ndim(alpha, "alpha") != 0:
        raise TypeError(f"`alpha` must be a number here; got {alpha!r}.")
    return float(check_alpha(alpha, 1))


def fold_factors(*Rs):
    """The upper-triangular factor of the stacked factors ``Rs`` (of row blocks, in
    order), folded by LAPACK ``tpqrt`` as :func:`tsqr` folds its groups."""
    p = Rs[0].shape[0]
    w = TSQRWork(p, 1)
    Rt = np.ascontiguousarray(Rs[0].T)
    for R in Rs[1:]:
        w.fold(Rt, np.ascontiguousarray(R.T))
    return np.triu(Rt.T)


def _check_network_options(validation, gamma_tol, max_gamma_iter, learn_gamma, per_center, bias, classify):
    """The scalar options of :func:`rbf_network` (checked whether or not they are used)."""
    for name, val in (("learn_gamma", learn_gamma), ("per_center", per_center), ("bias", bias),
                      ("classify", classify)):
        _v.check_bool(val, name, text="a bool")
    _v.check_real(gamma_tol, "gamma_tol", low=0)
    _v.check_int(max_gamma_iter, "max_gamma_iter", 0)
    if validation is not None and (not isinstance(validation, (tuple, list)) or len(validation) != 2):
        raise TypeError(f"`validation` must be None or a pair (X_val, Y_val); got {type(validation).__name__} "
                        f"{validation!r:.60}.")


def _check_network_memory(n, d, K, k, centers, n_threads):
    """Refuse (fastrbf's MemoryError) a network whose TSQR factors would not fit."""
    p = K + 1 + k
    groups = -(-n // (TSQR_CHUNK * TSQR_GROUP_CHUNKS))
    workers = min(groups, _threads.resolve(n_threads))
    # one p x p factor per row group, the final factor and the weight solve (2p x p),
    # per worker a p x TSQR_CHUNK design block; the float64 copy of X and its transpose
    need = 8 * (p * p * (groups + 4) + workers * p * (TSQR_CHUNK + 64) + 2 * n * d)
    hint = ('use centers="kmeans" with a smaller `n_centers`.' if isinstance(centers, str) and centers == "all"
            else "use fewer centres (`n_centers` or `centers`).")
    _v.check_memory(need, f"rbf_network: {K} centres on {n} points (factors of order {p})", hint)


def _solve_weights(C, X, Xt, g, entry, coef0, deg, T, a, bias, n_threads):
    """(W, b): least squares (a = 0) or ridge on the weights, from the TSQR factor of the
    design of kernel ``entry`` (of :data:`~fastrbf.KERNELS`) with widths ``g``."""
    R = tsqr(C, X, entry.spec(g, coef0, deg), T, n_threads, Xt)
    return weights_from_factor(R, X.shape[0], C.shape[0], T.shape[1], a, bias, n_threads)


def weights_from_factor(R, n, K, k, a, bias, n_threads):
    """(W, b) from the upper-triangular factor R of ``[Phi 1 T]`` (n rows, K centres, k
    targets); the dask backend reduces R across row blocks and calls this too."""
    Kp = K + 1
    R11 = R[:Kp, :Kp]
    z = R[:Kp, Kp:]
    with _threads.serial_blas():
        if not bias:  # drop the bias column: refold the remaining triangle
            keep = np.r_[0:K, Kp : Kp + k]
            R = scipy.linalg.qr(R[:, keep], mode="r")[0]
            R11, z = R[:K, :K], R[:K, K:]
        nw = R11.shape[0]
        if a > 0:
            D = np.sqrt(a) * np.eye(nw)
            if bias:
                D[K, K] = 0.0  # the bias is not penalised
            sol = scipy.linalg.lstsq(np.vstack([R11, D]), np.vstack([z, np.zeros((nw, k))]), lapack_driver="gelsd")[0]
        else:
            sol = scipy.linalg.lstsq(R11, z, cond=np.finfo(np.float64).eps * max(n, nw), lapack_driver="gelsd")[0]
    W = np.ascontiguousarray(sol[:K])
    b = sol[K].copy() if bias else np.zeros(k)
    return W, b


#: rows per partial sum of the gamma pass
GAMMA_CHUNK = 8192


def _gamma_objective(C, Xt, T, g, W, b, want_grad, n_threads):
    """(sum of squared residuals, its gradient in log gamma (K,)) of a Gaussian RBF
    network: fused chunks, partial sums per fixed chunk added in order."""
    n = Xt.shape[1]
    K = C.shape[0]
    k = W.shape[1]
    nch = -(-n // GAMMA_CHUNK)
    errs = np.zeros(nch)
    grads = np.zeros((nch, K))
    Tc = np.ascontiguousarray(T)

    def work(c0, c1):
        D = np.empty((K, _jnet.JB))
        P = np.empty((K, _jnet.JB))
        Rs = np.empty((k, _jnet.JB))
        for c in range(c0, c1):
            lo = c * GAMMA_CHUNK
            _jnet.gamma_pass(C, Xt, lo, min(n, lo + GAMMA_CHUNK), g, W, b, Tc, want_grad, D, P, Rs,
                            errs[c : c + 1], grads[c])

    _threads.map_ranges(work, nch, n_threads)
    return float(errs.sum()), grads.sum(axis=0)


#: the coarse scan of learn_gamma: gamma times 10**k for these k
SCAN_DECADES = np.arange(-3.0, 3.01, 0.5)


def _scan_gamma(C, Xt, T, g, solve, a, early_stop, n_threads):
    """(gamma, W, b): the best of ``g * 10**k`` over :data:`SCAN_DECADES` by the
    objective the gradient steps minimise (ties: the first, the smallest width)."""
    best = None
    for f in 10.0**SCAN_DECADES:
        gs = g * f
        W, b = solve(gs)
        E, _ = _gamma_objective(C, Xt, T, gs, W, b, False, n_threads)
        J = E + (a * float(np.sum(W * W)) if (a > 0 and not early_stop) else 0.0)
        if np.isfinite(J) and (best is None or J < best[0]):
            best = (J, gs, W, b)
    if best is None:  # every width overflowed: keep the start
        W, b = solve(g)
        return g, W, b
    return best[1], best[2], best[3]


def _learn_gamma(C, Xt, T, g, W, b, solve, per_center, tol, max_iter, early_stop, a, n_threads, rep=_progress.OFF,
                 last=True):
    """The classical alternation: at fixed widths the weights are solved, then a
    gradient step on log gamma.  The gradient at fixed weights is the gradient of the
    error with the weights re-solved (the weights minimise it: envelope theorem), and
    each trial step is judged with its weights re-solved (backtracking, Armijo), so the
    recorded error never increases.  Stops when the relative improvement is below
    ``tol``.  Returns (gamma, W, b, mean squared error per step; the ridge objective / n
    when ``a > 0``)."""
    n = Xt.shape[1]
    pen = (lambda W_: a * float(np.sum(W_ * W_))) if (a > 0 and not early_stop) else (lambda W_: 0.0)
    E, grad = _gamma_objective(C, Xt, T, g, W, b, True, n_threads)
    J = E + pen(W)
    history = [J / n]
    step = 1.0
    rep.start("gamma", max_iter, unit="width step" if not per_center else "per-centre width step")
    for _ in range(max_iter):
        gr = grad if per_center else np.full_like(grad, grad.sum() / np.sqrt(grad.shape[0]))
        norm = float(np.linalg.norm(gr))
        if norm == 0.0:
            break
        d = -gr / norm
        while True:
            g_new = g * np.exp(step * d)
            W_new, b_new = solve(g_new)
            E_new, grad_new = _gamma_objective(C, Xt, T, g_new, W_new, b_new, True, n_threads)
            J_new = E_new + pen(W_new)
            if J_new <= J - 1e-4 * step * norm or step < 1e-8:
                break
            step *= 0.5
        if not J_new < J:  # no decrease along the gradient: a stationary point
            break
        improvement = (J - J_new) / J
        g, W, b, E, grad, J = g_new, W_new, b_new, E_new, grad_new, J_new
        history.append(J / n)
        if improvement < tol:
            break
        if len(history) <= max_iter:  # the last step's report is the final one
            rep.step(len(history) - 1, error=J / n)
        step = min(4.0, 2.0 * step)
    (rep.finish if last else rep.finish_stage)(len(history) - 1, error=history[-1])
    return g, W, b, np.array(history)

