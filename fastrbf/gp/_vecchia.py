"""The nearest-neighbour (Vecchia) Gaussian process: the exact GP's covariance
(``amplitude phi(g0 ||(x - y) / l||^2) + noise [x == y]``, every radial kernel of the
registry, one length scale or one per feature) whose likelihood is the product of
the conditionals of each point given at most ``n_neighbors`` nearest earlier points of
an ordering (Vecchia 1988; Katzfuss & Guinness 2021).  Time ``O(n m^3)``, memory ``O(n
m)``: no n x n matrix, no landmarks, so short length scales are kept at 10^6 points.

Decisions:

- **A function of its own**, :func:`vecchia_gaussian_process` (and
  :func:`vecchia_gaussian_process_lml`), rather than a ``method=`` of
  :func:`~fastrbf.gaussian_process`: the model holds an ordering and conditioning
  sets instead of a factor, and predicts from neighbours instead of one solve, as
  :func:`~fastrbf.sparse_gaussian_process` has its own function for its landmarks.
  One output (``y`` of shape (n,)), ``noise`` > 0 or None (no noise term).
- **The approximation is of the covariance of y** (the noise inside each
  conditional), as GPBoost's Vecchia approximation for a Gaussian likelihood.  With
  ``n_neighbors >= n - 1`` every conditional is exact: the exact GP's likelihood
  and gradient, whatever the ordering.
- **Ordering ``"maximin"`` by default** (each next point the farthest from those
  before it; Guinness 2018), computed exactly with the kd-tree: a chosen point
  updates the distances of the points within the current maximin distance only,
  ``O(n log n)`` distance updates in all.  Measured (docs/performance.md, 'Vecchia
  GP'; 3000 points, Matern 3/2, median of 5 draws): the log likelihood's error
  against the exact one with maximin was 0.33 and 0.57 times that of the random
  ordering with 30 and 10 neighbours in 2-D, and 0.85 to 1.3 times that of the
  random and coordinate orderings in 3-D.  It costs 10 s at 10^6 points (2 threads).
  ``"random"`` (seeded), ``"coordinate"`` (by the feature of widest spread),
  ``"none"`` (the rows' order) or a permutation can be given.
- **Conditioning sets**: the ``n_neighbors`` nearest earlier points in the scaled
  coordinates ``x / l`` (ties to the earlier point), exact: the first points by brute
  force, then blocks of positions ``[s, 2 s)`` by the kd-tree over positions ``< 2 s``
  (k nearest, widened until enough of them are earlier).  They are chosen at the
  starting length scales and fixed during an optimisation (a likelihood whose
  neighbours jump with the parameters is not smooth); with one length scale they do not
  depend on it.  With one per feature (``ard``), ordering and neighbours are chosen
  again at the optimum and the optimiser run again from there while they change (at
  most :data:`ARD_ROUNDS` runs); the model keeps the sets of its fitted length scales,
  so its likelihood is :func:`vecchia_gaussian_process_lml`'s there.
- **The likelihood and gradient** in ``log(amplitude, length scales, noise)``, one
  (m + 1) x (m + 1) factor per point, eight points' at once in vector lanes
  (:mod:`fastrbf._jit.gp.vecchia`: 4.1-4.6 s with the gradient at 10^6 points, 30
  neighbours, 2 threads), blocks of 256 positions on the threads, their sums added in
  block order: the same bits for any thread count.  Computed in float64.
  :func:`block_terms` sums a block of the ordering given its neighbours' rows, which
  :mod:`fastrbf.dask.vecchia` runs on the workers.
- **Prediction** of a query from its ``n_neighbors`` nearest training points (the
  conditional given them: GPBoost's ``"order_obs_first_cond_obs_only"``); ``predict``
  takes another count.  With every training point it is the exact GP's prediction.
  The standard deviation includes the noise, as :func:`~fastrbf.gaussian_process`'s.
"""

import math
from dataclasses import dataclass

import numpy as np

from .. import _progress, _threads
from .. import _validation as _v
from .._jit.gp import vecchia as _jv
from .._progress import ProgressArg
from .._typing import ArrayLike, KernelArg, Seed, Threads
from ..kernels import check_kernel, kernel_value
from ..models.common import check_query, owned
from ..neighbors import _kdtree
from ._checks import DEFAULT_BOUNDS, F64, check_length_scales, kernel_at_zero, log_bounds, prepare_data, unit_width
from ._optimise import maximise

#: orderings by name (or a permutation of the rows)
ORDERINGS = ("maximin", "random", "coordinate", "none")
#: positions before this (or 4 n_neighbors) find their neighbours by brute force
FIRST = 512
#: query rows per kd-tree call of the neighbour search (bounds its buffers)
QUERY_CHUNK = 65536
#: with per-feature length scales, at most this many optimiser runs, the neighbours
#: chosen again before each
ARD_ROUNDS = 4
#: the failed evaluations of the optimiser
_ERRORS = (np.linalg.LinAlgError, FloatingPointError)


def check_ordering(ordering, n):
    """The ordering's name, or the permutation given (an int64 array)."""
    if isinstance(ordering, str):
        return _v.check_choice(ordering, "ordering", list(ORDERINGS))
    perm = np.asarray(ordering)
    if perm.shape != (n,) or perm.dtype.kind not in "iu" or not np.array_equal(np.sort(perm), np.arange(n)):
        raise ValueError(f"`ordering` must be one of {list(ORDERINGS)} or a permutation of the {n} row indices; "
                         f"got {ordering if np.ndim(ordering) == 0 else f'an array of shape {np.shape(ordering)}'}.")
    return perm.astype(np.int64)


def ordering_of(Xs, ordering, rng, n_threads):
    """The positions' rows: ``ordering`` (a name or a permutation) on the scaled points ``Xs``."""
    n = Xs.shape[0]
    if not isinstance(ordering, str):
        return ordering
    if ordering == "none":
        return np.arange(n, dtype=np.int64)
    if ordering == "random":
        return rng.permutation(n).astype(np.int64)
    if ordering == "coordinate":
        return np.argsort(Xs[:, int(np.argmax(np.ptp(Xs, axis=0)))], kind="stable").astype(np.int64)
    Xc = np.ascontiguousarray(Xs)
    first = int(np.argmin(np.einsum("ij,ij->i", Xc - Xc.mean(axis=0), Xc - Xc.mean(axis=0))))
    tree = _kdtree.build(Xc, n_threads)
    order = np.empty(n, dtype=np.int64)
    _jv.maximin(tree.Xt, tree.perm, tree.box_lo, tree.box_hi, tree.leaf_level, Xc, first, order)
    return order


def conditioning_sets(Xo, m, n_threads, rep=_progress.OFF):
    """``(nbr (n, m) int32, count (n,) int64)``: the ``min(t, m)`` nearest earlier
    positions of each position ``t`` of the ordered scaled points ``Xo`` (ascending
    distance, ties to the earlier)."""
    n = Xo.shape[0]
    _v.check_memory(n * (4 * m + 8), f"the conditioning sets of {n} points with {m} neighbours",
                    "use a smaller `n_neighbors`.")
    nbr = np.zeros((n, max(m, 1)), dtype=np.int32)[:, :m]
    count = np.zeros(n, dtype=np.int64)
    first = min(n, max(FIRST, 4 * m))
    _jv.earlier_brute.run(n_threads, Xo, first, m, nbr, count)
    blocks = max(1, math.ceil(math.log2(n / first))) if n > first else 0
    rep.start("neighbours", blocks, unit="block")
    s, done = first, 0
    while s < n:
        e = min(n, 2 * s)
        ix = _kdtree.index(np.ascontiguousarray(Xo[:e]), n_threads)
        for c0 in range(s, e, QUERY_CHUNK):
            rows = np.arange(c0, min(e, c0 + QUERY_CHUNK), dtype=np.int64)
            k = min(e, 3 * m + 8)
            while rows.size:
                idx, _ = _kdtree.knn_index(ix, np.ascontiguousarray(Xo[rows]), k, n_threads)
                earlier = idx < rows[:, None]
                ok = earlier.sum(axis=1) >= m  # every position here has >= m earlier ones
                if np.any(ok):
                    keep = earlier[ok] & (np.cumsum(earlier[ok], axis=1) <= m)
                    nbr[rows[ok]] = idx[ok][keep].reshape(-1, m)
                    count[rows[ok]] = m
                rows = rows[~ok]
                k = min(e, 2 * k)
        s, done = e, done + 1
        rep.step(done)
    if blocks:
        rep.finish_stage(done)
    return nbr, count


def constants(spec):
    """The kernel's typed constants as a tuple: read from an array inside the loops, they
    could alias the outputs and keep the kernel's loop from vectorising (4x slower)."""
    return tuple(float(v) for v in spec.c)


class Problem:
    """The data, kernel and conditioning sets that every evaluation shares."""

    def __init__(self, X, y, entry, coef0, m, ordering, rng, n_threads, noise):
        self.X, self.y = X, y
        self.entry = entry
        self.spec = entry.spec(np.ones(1), coef0, 1)
        self.c = constants(self.spec)
        self.g0 = unit_width(entry)
        self.m = min(m, X.shape[0] - 1)
        self.ordering = ordering
        self.rng = rng
        self.nt = n_threads
        self.nn = int(noise)  # log noise last in theta (without a noise term, none)
        self.order = self.nbr = self.count = self.yo = self.Xo = np.empty(0, dtype=np.int64)  # by choose()

    def choose(self, ls, rep=_progress.OFF):
        """Ordering and conditioning sets at the length scales ``ls``."""
        Xs = self.X / np.broadcast_to(ls, (self.X.shape[1],))
        order = ordering_of(Xs, self.ordering, self.rng, self.nt)
        nbr, count = conditioning_sets(np.ascontiguousarray(Xs[order]), self.m, self.nt, rep)
        changed = self.order.size == 0 or not (np.array_equal(order, self.order) and np.array_equal(nbr, self.nbr))
        self.order, self.nbr, self.count = order, nbr, count
        self.Xo = np.ascontiguousarray(self.X[order])  # the rows in the ordering: gathered once, not per evaluation
        self.yo = np.ascontiguousarray(self.y[order])
        return changed

    def lml(self, theta, grad):
        """(lml, gradient or None) at ``theta = log(amplitude, length scales[, noise])``."""
        tot = block_terms(self.Xo, self.yo, self.nbr, self.count, self.kernel_args(), theta, self.nn, grad, self.nt)
        return finish_terms(tot, theta, self.nn, grad)

    def kernel_args(self):
        """What :func:`block_terms` needs of the kernel: ``(phi, constants, degree, g0)``."""
        return self.spec.phi, self.c, self.spec.degree, self.g0


def unpack(theta, nn, d):
    """``(amplitude, length scales (d,), noise, p)`` from ``theta`` (``p`` length scales)."""
    p = theta.size - 1 - nn
    return (math.exp(theta[0]), np.broadcast_to(np.exp(theta[1 : 1 + p]), (d,)),
            math.exp(theta[-1]) if nn else 0.0, p)


def block_terms(rows, y, nbr, count, kern, theta, nn, grad, n_threads):
    """The sums ``(lml, d/dlog amp, d/dlog l_1 .. l_d, d/dlog noise)`` over the positions
    of ``nbr`` (position t is row t of ``rows``, unscaled float64; its set the rows
    ``nbr[t, :count[t]]``): the whole ordering, or a block of it with its neighbours'
    rows after its own (:mod:`fastrbf.dask.vecchia`)."""
    d = rows.shape[1]
    amp, ls, noise, _ = unpack(theta, nn, d)
    with np.errstate(over="ignore", invalid="ignore"):
        Xs = np.ascontiguousarray(rows / ls)
    if not np.all(np.isfinite(Xs)):
        raise FloatingPointError("the rescaled data overflow")
    phi, c, degree, g0 = kern
    part = np.zeros((-(-nbr.shape[0] // _jv.VB), d + 3))
    _jv.lml_blocks.run(n_threads, Xs, y, nbr, count, phi, c, degree, g0, amp, noise, bool(grad), part)
    return part.sum(axis=0)


def finish_terms(tot, theta, nn, grad):
    """(lml, gradient or None) from the sums of :func:`block_terms`."""
    if not np.all(np.isfinite(tot)):
        raise np.linalg.LinAlgError("a conditional covariance is not positive definite")
    if not grad:
        return float(tot[0]), None
    d = tot.size - 3
    p = theta.size - 1 - nn
    g = np.empty(theta.size)
    g[0] = tot[1]
    g[1 : 1 + p] = tot[2 : 2 + d].sum() if p == 1 else tot[2 : 2 + d]
    if nn:
        g[-1] = tot[d + 2]
    return float(tot[0]), g


def check_args(X, y, kernel, coef0, normalize_y, amplitude, length_scale, noise, ard, n_neighbors, what):
    entry, Xa, ya, Xd, T, c0, y_mean, y_std = prepare_data(X, y, kernel, coef0, normalize_y, what)
    if np.ndim(ya) != 1:
        raise ValueError(f"`y` must have one value per row (shape ({Xa.shape[0]},)) for {what}; got shape "
                         f"{np.shape(ya)}.")
    n, d = Xa.shape
    if n < 2:
        raise ValueError(f"`X` must have at least 2 rows for {what}; got {n}.")
    _v.check_real(amplitude, "amplitude", low=0, strict=True)
    if noise is not None:
        _v.check_real(noise, "noise", low=0, strict=True)
    ls = check_length_scales(length_scale, d, _v.check_bool(ard, "ard"))
    m = _v.check_int(n_neighbors, "n_neighbors", 1)
    return entry, Xa, ya, Xd, np.ascontiguousarray(T[:, 0]), c0, y_mean, y_std, ls, m


def log_theta(amplitude, ls, noise):
    return np.log(np.r_[amplitude, ls, [] if noise is None else noise])


def vecchia_gaussian_process_lml(X: ArrayLike, y: ArrayLike, *, n_neighbors: int = 30, kernel: KernelArg = "matern52",
                                 amplitude: float = 1.0, length_scale: ArrayLike = 1.0, noise: float | None = 1e-5,
                                 coef0: float = 1.0, ordering: str | ArrayLike = "maximin", seed: Seed = None,
                                 eval_gradient: bool = False,
                                 n_threads: Threads = None) -> float | tuple[float, np.ndarray]:
    """The Vecchia approximation of a Gaussian process's log marginal likelihood (see
    the module docstring), and its gradient in ``theta = log(amplitude,
    length_scale..., [noise])``: each point conditioned on its ``n_neighbors`` nearest
    earlier points of ``ordering`` (chosen at ``length_scale``).  With ``n_neighbors >=
    n - 1``, :func:`~fastrbf.gaussian_process_lml`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
    n_neighbors : int, default 30
    kernel : str or UserKernel, default "matern52"
        A radial, positive definite kernel (as :func:`~fastrbf.gaussian_process`).
    amplitude, length_scale, noise :
        As :func:`~fastrbf.gaussian_process_lml` (``noise=None``: no noise term).
    coef0 : float, default 1.0
        The rational quadratic kernel's shape.
    ordering : {"maximin", "random", "coordinate", "none"} or array_like of shape (n,)
        The order of the points, or a permutation of the row indices.
    seed : None, int or numpy.random.Generator
        Of ``ordering="random"``.
    eval_gradient : bool, default False
    n_threads : int, optional

    Returns
    -------
    lml : float
    grad : ndarray
        With ``eval_gradient``: one entry per entry of ``theta``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gaussian_process_lml, vecchia_gaussian_process_lml
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (200, 2))
    >>> y = np.sin(6 * X[:, 0]) + 0.1 * rng.standard_normal(200)
    >>> approx = vecchia_gaussian_process_lml(X, y, n_neighbors=20, length_scale=0.3, noise=0.01)
    >>> exact = gaussian_process_lml(X, y, length_scale=0.3, noise=0.01)
    >>> bool(abs(approx - exact) < 0.01 * abs(exact))
    True
    """
    what = "vecchia_gaussian_process_lml"
    entry, Xa, _, Xd, yd, c0, _, _, ls, m = check_args(X, y, kernel, coef0, False, amplitude, length_scale, noise, False,
                                                   n_neighbors, what)
    want = _v.check_bool(eval_gradient, "eval_gradient")
    prob = Problem(Xd, yd, entry, c0, m, check_ordering(ordering, Xa.shape[0]), _v.check_seed(seed, name="seed"),
                    _threads.resolve(n_threads), noise is not None)
    prob.choose(np.broadcast_to(ls, (Xa.shape[1],)))
    try:
        lml, grad = prob.lml(log_theta(amplitude, ls, noise), want)
    except np.linalg.LinAlgError:
        raise ValueError("A conditional covariance is not positive definite for these `amplitude`, `length_scale` "
                         "and `noise`; use a larger `noise`.") from None
    return (lml, grad) if want else lml


@dataclass(frozen=True, eq=False)
class VecchiaGaussianProcess:
    """A fitted nearest-neighbour Gaussian process (from
    :func:`vecchia_gaussian_process`); arrays only, picklable.

    Attributes
    ----------
    kernel : str or UserKernel
    amplitude : float
    length_scale : ndarray of shape (p,)
        ``p = 1`` (isotropic) or ``d``.
    noise : float
        0 without a noise term.
    coef0 : float
    n_neighbors : int
        The conditioning sets' size (and the default of ``predict``).
    X_train : ndarray of shape (n, d), float64
    y_train : ndarray of shape (n,), float64
        The targets, normalised (``(y - y_mean) / y_std``).
    order : ndarray of shape (n,), int64
        The rows in the ordering.
    neighbors : ndarray of shape (n, n_neighbors), int32
        Row ``t``: the positions (in ``order``) of the conditioning set of position
        ``t``, its first ``min(t, n_neighbors)`` entries.
    y_mean, y_std : float
    log_marginal_likelihood_value : float
        The Vecchia log likelihood at the fitted hyperparameters.
    theta : ndarray
        ``log`` of ``(amplitude, length_scale..., [noise])``.
    dtype : numpy.dtype
    restarts : tuple of dict
        One row per optimiser run (as :class:`~fastrbf.GaussianProcess`'s; with
        ``ard`` each run after the neighbours were chosen again is a row too).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import vecchia_gaussian_process
    >>> X = np.linspace(0, 1, 50)[:, None]
    >>> gp = vecchia_gaussian_process(X, np.sin(6 * X[:, 0]), n_neighbors=8, length_scale=0.3, noise=1e-4,
    ...                               optimize=False)
    >>> mean, std = gp.predict([[0.5]], return_std=True)
    >>> bool(abs(mean[0] - np.sin(3.0)) < 1e-3), bool(std[0] < 0.02)
    (True, True)
    """

    kernel: KernelArg
    amplitude: float
    length_scale: np.ndarray
    noise: float
    coef0: float
    n_neighbors: int
    X_train: np.ndarray
    y_train: np.ndarray
    order: np.ndarray
    neighbors: np.ndarray
    y_mean: float
    y_std: float
    log_marginal_likelihood_value: float
    theta: np.ndarray
    dtype: np.dtype
    restarts: tuple = ()

    def predict(self, X: ArrayLike, *, return_std: bool = False, n_neighbors: int | None = None,
                n_threads: Threads = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """The posterior mean at the rows of ``X`` (and the standard deviation), each
        query conditioned on its ``n_neighbors`` nearest training points.

        Parameters
        ----------
        X : array_like of shape (q, d)
        return_std : bool, default False
            The predictive standard deviation (noise included), shape (q,).
        n_neighbors : int, optional
            Default: the model's; with every training point, the exact GP's prediction.
        n_threads : int, optional

        Returns
        -------
        mean : ndarray of shape (q,)
        std : ndarray of shape (q,)
            With ``return_std``.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import vecchia_gaussian_process
        >>> X = np.linspace(0, 1, 30)[:, None]
        >>> gp = vecchia_gaussian_process(X, X[:, 0] ** 2, n_neighbors=5, optimize=False)
        >>> gp.predict([[0.25], [0.75]], n_neighbors=10).shape
        (2,)
        """
        want_std = _v.check_bool(return_std, "return_std")
        n, d = self.X_train.shape
        k = min(n, self.n_neighbors if n_neighbors is None else _v.check_int(n_neighbors, "n_neighbors", 1))
        Xq, dtype = check_query(self.dtype, d, X)
        nt = _threads.resolve(n_threads)
        ls = np.broadcast_to(self.length_scale, (d,))
        Xs = np.ascontiguousarray(self.X_train / ls)
        Qs = np.ascontiguousarray(Xq / ls)
        entry = check_kernel(self.kernel)
        sp = entry.spec(np.ones(1), self.coef0, 1)
        prior = self.amplitude * kernel_at_zero(self.kernel, self.coef0) + self.noise
        q = Qs.shape[0]
        mean, var = np.empty(q), np.empty(q)
        ix = _kdtree.index(Xs, nt)
        for c0 in range(0, q, QUERY_CHUNK):
            c1 = min(q, c0 + QUERY_CHUNK)
            idx, _ = _kdtree.knn_index(ix, Qs[c0:c1], k, nt)
            _jv.predict_rows.run(nt, Qs[c0:c1], Xs, self.y_train, idx, sp.phi, constants(sp), sp.degree,
                                 unit_width(entry), self.amplitude, self.noise, prior, mean[c0:c1], var[c0:c1])
        if not np.all(np.isfinite(mean)):
            raise ValueError("A neighbours' covariance is not positive definite at these hyperparameters; fit with "
                             "a larger `noise`.")
        mean = (mean * self.y_std + self.y_mean).astype(dtype, copy=False)
        if not want_std:
            return mean
        std = np.sqrt(np.maximum(var, 0.0)) * self.y_std
        return mean, std.astype(dtype, copy=False)

    def log_marginal_likelihood(self, theta: ArrayLike | None = None, eval_gradient: bool = False,
                                n_threads: Threads = None) -> float | tuple[float, np.ndarray]:
        """The Vecchia log likelihood (of the normalised targets) on the model's ordering
        and conditioning sets, at ``theta`` (default: the fitted one), and its gradient:
        scikit-learn's ``log_marginal_likelihood``; no neighbour search.

        Parameters
        ----------
        theta : array_like, optional
            ``log`` of ``(amplitude, length_scale..., [noise])``, as :attr:`theta`.
        eval_gradient : bool, default False
        n_threads : int, optional

        Returns
        -------
        lml : float
        grad : ndarray
            With ``eval_gradient``.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import vecchia_gaussian_process
        >>> X = np.linspace(0, 1, 40)[:, None]
        >>> gp = vecchia_gaussian_process(X, np.sin(5 * X[:, 0]), n_neighbors=5, optimize=False)
        >>> bool(gp.log_marginal_likelihood() == gp.log_marginal_likelihood_value)
        True
        >>> gp.log_marginal_likelihood(gp.theta + 0.1, eval_gradient=True)[1].shape
        (3,)
        """
        want = _v.check_bool(eval_gradient, "eval_gradient")
        t = self.theta if theta is None else np.asarray(theta, dtype=np.float64)
        if t.shape != self.theta.shape or not np.all(np.isfinite(t)):
            raise ValueError(f"`theta` must hold {self.theta.size} finite values (as the model's `theta`); got "
                             f"shape {t.shape}.")
        prob = Problem(self.X_train, self.y_train, check_kernel(self.kernel), self.coef0, self.neighbors.shape[1], self.order,
                        None, _threads.resolve(n_threads), self.theta.size > 1 + self.length_scale.size)
        prob.order, prob.nbr = self.order, self.neighbors
        prob.count = np.minimum(np.arange(self.order.size), self.neighbors.shape[1])
        prob.Xo = np.ascontiguousarray(self.X_train[self.order])
        prob.yo = np.ascontiguousarray(self.y_train[self.order])
        try:
            lml, grad = prob.lml(t, want)
        except np.linalg.LinAlgError:
            raise ValueError("A conditional covariance is not positive definite at this `theta`.") from None
        return (lml, grad) if want else lml


def fit(prob, theta0, ls, optimize, n_restarts, lo, hi, rng, rep, what):
    """``(theta, (amplitude, length scales, noise or None), lml, restarts)``: the ordering and sets chosen at the starting length
    scales ``ls``, L-BFGS-B from ``theta0`` and the restarts (with several length scales,
    the sets chosen again at each optimum while they change), the likelihood at the end.
    ``prob``: a :class:`Problem` (or the dask one: the same steps, its sums on the
    blocks)."""
    p = ls.size
    prob.choose(np.broadcast_to(ls, (prob.X.shape[1],)), rep)
    rows: list = []
    theta = theta0
    if optimize:
        box = list(zip(np.broadcast_to(lo, theta0.shape), np.broadcast_to(hi, theta0.shape), strict=True))
        starts = [np.clip(theta0, lo, hi)] + [rng.uniform(lo, hi, theta0.size) for _ in range(n_restarts)]
        best = maximise(lambda t: prob.lml(t, True), starts, box, _ERRORS, rows=rows, rep=rep)
        rounds = 1
        while best is not None and p > 1 and rounds < ARD_ROUNDS and prob.choose(np.exp(best[1 : 1 + p]), rep):
            # per-feature scales moved the neighbours: again from the optimum with the new ones
            best = maximise(lambda t: prob.lml(t, True), [best], box, _ERRORS, rows=rows, rep=rep)
            rounds += 1
        if best is None:
            raise ValueError(f"{what}: a conditional covariance is not positive definite from any start; use a "
                             "larger `noise` or narrower `bounds`.")
        theta = best
    # the model reports these values; its likelihood is at their logs, as the function
    # computes it from them (exp then log may move theta by an ulp)
    values = (math.exp(theta[0]), np.exp(theta[1 : 1 + p]), math.exp(theta[-1]) if prob.nn else None)
    theta = log_theta(*values)
    if p > 1 and (optimize or not np.array_equal(values[1], ls)):  # the sets of the model's length scales
        prob.choose(values[1], rep)
    try:
        lml, _ = prob.lml(theta, False)
    except np.linalg.LinAlgError:
        raise ValueError("A conditional covariance is not positive definite for these `amplitude`, `length_scale` "
                         "and `noise`; use a larger `noise`.") from None
    return theta, values, lml, rows


def vecchia_gaussian_process(X: ArrayLike, y: ArrayLike, *, n_neighbors: int = 30, kernel: KernelArg = "matern52",
                             amplitude: float = 1.0, length_scale: ArrayLike = 1.0, noise: float | None = 1e-5,
                             ard: bool = False, coef0: float = 1.0, ordering: str | ArrayLike = "maximin",
                             optimize: bool = True, n_restarts: int = 0, bounds: ArrayLike = DEFAULT_BOUNDS,
                             normalize_y: bool = False, seed: Seed = None, n_threads: Threads = None,
                             progress: ProgressArg = False) -> VecchiaGaussianProcess:
    """Gaussian-process regression at 10^6 points by the nearest-neighbour (Vecchia)
    likelihood: each point conditioned on its ``n_neighbors`` nearest earlier points of
    an ordering, the hyperparameters learned by L-BFGS-B on that likelihood, and
    predictions from the nearest training points (see the module docstring).

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
    n_neighbors : int, default 30
        The conditioning sets' size (``n - 1`` or more: the exact GP).
    kernel : str or UserKernel, default "matern52"
        A radial, positive definite kernel (as :func:`~fastrbf.gaussian_process`).
    amplitude, length_scale, noise :
        The start (or, with ``optimize=False``, the values); ``noise=None``: no noise
        term.
    ard : bool, default False
        One length scale per feature (a ``length_scale`` array implies it).
    coef0 : float, default 1.0
        The rational quadratic kernel's shape (fixed).
    ordering : {"maximin", "random", "coordinate", "none"} or array_like of shape (n,)
        The order of the points, or a permutation of the row indices.
    optimize : bool, default True
    n_restarts : int, default 0
        Further starts drawn log-uniformly inside ``bounds``.
    bounds : (float, float) or array_like of shape (len(theta), 2), default (1e-5, 1e5)
        The range of every hyperparameter, or one range each.
    normalize_y : bool, default False
        Fit ``(y - mean) / std`` and scale back.
    seed : None, int or numpy.random.Generator
        Of the restarts and of ``ordering="random"``.
    n_threads : int, optional
    progress : bool, logging.Logger or callable, default False
        Report the neighbour search (stage ``"neighbours"``, blocks of positions) and
        the L-BFGS-B iterations (as :func:`~fastrbf.gaussian_process`).

    Returns
    -------
    VecchiaGaussianProcess

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import vecchia_gaussian_process
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (2000, 2))
    >>> y = np.sin(12 * X[:, 0]) * np.cos(9 * X[:, 1]) + 0.05 * rng.standard_normal(2000)
    >>> gp = vecchia_gaussian_process(X, y, n_neighbors=20, length_scale=0.2, noise=0.01, seed=0)
    >>> mean, std = gp.predict([[0.5, 0.5]], return_std=True)
    >>> bool(abs(mean[0] - np.sin(6) * np.cos(4.5)) < 0.05), bool(0.04 < std[0] < 0.07)
    (True, True)
    """
    what = "vecchia_gaussian_process"
    entry, Xa, ya, Xd, yd, c0, y_mean, y_std, ls, m = check_args(X, y, kernel, coef0, normalize_y, amplitude,
                                                             length_scale, noise, ard, n_neighbors, what)
    n, d = Xa.shape
    optimize = _v.check_bool(optimize, "optimize")
    n_restarts = _v.check_int(n_restarts, "n_restarts", 0)
    ordering = check_ordering(ordering, n)
    theta0 = log_theta(amplitude, ls, noise)
    lo, hi = log_bounds(bounds, theta0.size)
    rng = _v.check_seed(seed, name="seed")
    rep = _progress.reporter(progress, what, runs="start")
    prob = Problem(Xd, yd, entry, c0, m, ordering, rng, _threads.resolve(n_threads), noise is not None)
    fitted = fit(prob, theta0, ls, optimize, n_restarts, lo, hi, rng, rep, what)
    return fitted_model(fitted, prob, entry, c0, owned(Xd, X), owned(yd, y), y_mean, y_std, Xa, ya)


def fitted_model(fitted, prob, entry, c0, X_train, y_train, y_mean, y_std, Xa, ya):
    """The :class:`VecchiaGaussianProcess` of :func:`fit`'s result ``fitted`` on ``prob``
    (in memory or on dask blocks), with the values :func:`fit` reports; float32 when
    the data ``Xa`` and targets ``ya`` were."""
    theta, (amp, lsv, nv), lml, rows = fitted
    dtype = np.dtype(np.float32) if Xa.dtype == np.float32 and np.asarray(ya).dtype == np.float32 else F64
    return VecchiaGaussianProcess(kernel_value(entry), float(amp), lsv, 0.0 if nv is None else float(nv), c0, prob.m,
                                  X_train, y_train, prob.order, prob.nbr, float(y_mean[0]), float(y_std[0]), lml,
                                  np.asarray(theta, dtype=np.float64).copy(), dtype, tuple(rows))
