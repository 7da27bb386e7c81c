"""The benchmark workloads, defined once for ``python -m fastrbf.bench`` and ``bench/``.

Each workload has a data set (seeded) at one or more sizes, a measure of work (for the
throughput) and its contenders: fastrbf, the plain NumPy reference
(:mod:`fastrbf.reference`), the peers that are installed (scikit-learn, SciPy, faiss,
the NumPy norm trick) and at most one *baseline*: a hardware floor (LAPACK ``dpotrf``
alone: what a Cholesky cannot beat) or another reference point named by its label (the
functional call a scikit-learn wrapper makes, in-memory k-means under dask).

**Timing.**  All contenders of a workload are first warmed up (untimed calls until
:data:`WARMUP_QUICK_S` / :data:`WARMUP_S` seconds are spent; the first call compiles
fastrbf's kernels on a cold cache), then timed in *rounds*: one call of every contender
per round, in an order shuffled each round (seeded), so a burst of load from other
processes falls on all contenders alike instead of on whichever was being timed.  Rounds
go on up to :data:`QUICK_ROUNDS` / :data:`FULL_ROUNDS`; a contender sits out the
remaining rounds once its timed calls add up to its time budget (:data:`QUICK_BUDGET_S`
/ :data:`FULL_BUDGET_S`) and :data:`MIN_ROUNDS` are done (after :data:`SLOW_ROUNDS`
when its warm-up call took over :data:`SLOW_CALL_S`), so a slow NumPy reference does
not cut the rounds of the fast contenders short.  Paired ratios use the rounds both
contenders took part in.  Each row
reports the minimum, the median and the quartiles of its per-round times (quartiles
by linear interpolation, ``numpy.percentile``); the *spread* is the interquartile range.
One warm-up call of each contender (the second for fastrbf, the first may compile) runs
under ``tracemalloc`` for its *peak traced memory* (NumPy's allocations are traced;
numba's small per-thread tiles are not).

**Ratios and verdicts.**  Ratios are *paired*: for each round, the other contender's
time over this row's time in the same round; a row's ratio is the median over the
rounds.  ``ratio_vs_best_peer`` (fastrbf rows) is against the peer with the lowest
median time, ``ratio_vs_numpy`` against the NumPy reference (or NumPy
build-then-multiply for gram-matvec), ``ratio_vs_baseline`` against the workload's
baseline.  A ratio above 1 means this row is faster.  The verdict against the best peer
(:func:`verdict`) is ``"faster"`` when the lower quartile of the paired ratios is above
``1 + VERDICT_MARGIN``, ``"slower"`` when the upper quartile is below
``1 / (1 + VERDICT_MARGIN)``, and ``"within noise"`` otherwise: at least three rounds in
four must agree, by more than the margin.  A contender too slow above the quick size
(the broadcast reference on high-d data) is listed with ``median_s=None`` and a note.

**Compile and import.**  :func:`measure_compile` times the cold first call of public
functions (:data:`fastrbf.compile.TARGETS`), each in a fresh process with an empty
numba cache, and ``import fastrbf`` after ``import numba``; see :data:`COMPILE_GOALS`.
"""

import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _threads, reference
from .approx import random_fourier
from .cluster import kmeans, lloyd_assign, lloyd_update
from .distances import sqdist
from .gp import gp_regression
from .kernels import gram, gram_matvec
from .models import interpolate, kernel_ridge, rbf_network
from .neighbors import knn, nadaraya_watson

FASTRBF, NUMPY, PEER, FLOOR, BASELINE = "fastrbf", "numpy", "peer", "floor", "baseline"
#: what each kind of contender is, in the table's legend and the figure
KIND_NAMES = {FASTRBF: "fastrbf", PEER: "peer", NUMPY: "NumPy reference", FLOOR: "hardware floor",
              BASELINE: "baseline"}


@dataclass
class Contender:
    """One implementation of a workload: ``fn(data)`` runs it once."""

    label: str
    kind: str  # FASTRBF, NUMPY, PEER, FLOOR (a real hardware/LAPACK floor) or BASELINE (another reference point)
    fn: object
    full: bool = True  # also run above the quick size (False: too slow, quick size only)


@dataclass
class Workload:
    """A benchmark workload: data, work measure and contenders."""

    name: str
    setup: object  # setup(size) -> dict of arrays, size one of `sizes`
    work: object  # work(data) -> float, in `unit`
    unit: str
    contenders: list = field(default_factory=list)
    describe: object = None  # describe(data) -> str
    accuracy: object = None  # accuracy(data) -> str, after the contenders ran (a note in the legend)
    teardown: object = None  # teardown(data): release what setup started (a dask cluster)
    sizes: tuple = ()  # ascending; the first is the quick size, --full runs them all


def _try_import(name):
    try:
        return __import__(name, fromlist=["_"])
    except Exception:
        return None


def _rng():
    return np.random.default_rng(20261122)


# ---------------------------------------------------------------- distances and Gram
def _sqdist_workload(name, sizes, d, dtype):
    def setup(size):
        rng = _rng()
        nn, mm = size
        X = rng.standard_normal((nn, d)).astype(dtype)
        Y = rng.standard_normal((mm, d)).astype(dtype)
        return {"X": X, "Y": Y, "out": np.empty((nn, mm), dtype=dtype)}

    cs = [
        Contender("fastrbf", FASTRBF, lambda a: sqdist(a["X"], a["Y"])),
        Contender("fastrbf out=", FASTRBF, lambda a: sqdist(a["X"], a["Y"], out=a["out"])),
        Contender("numpy reference", NUMPY, lambda a: reference.sqdist(a["X"], a["Y"]), full=d <= 64),
        Contender("numpy norm trick", PEER, lambda a: _norm_trick(a["X"], a["Y"])),
    ]
    skm = _try_import("sklearn.metrics.pairwise")
    if skm is not None:
        cs.append(Contender("scikit-learn", PEER, lambda a: skm.euclidean_distances(a["X"], a["Y"], squared=True)))
    ssd = _try_import("scipy.spatial.distance")
    if ssd is not None:
        # ~14 s per call at 10000x256 vs 10000 on 2 cores: slow, but under the ~30 s cut
        cs.append(Contender("scipy cdist", PEER, lambda a: ssd.cdist(a["X"], a["Y"], "sqeuclidean")))
    return Workload(name, setup, lambda a: a["X"].shape[0] * a["Y"].shape[0], "pairs/s", cs, _shape_xy, sizes=sizes)


def _norm_trick(X, Y):
    return (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2 * (X @ Y.T)


def _shape_xy(a):
    return f"{a['X'].shape[0]}x{a['X'].shape[1]} vs {a['Y'].shape[0]}, {a['X'].dtype}"


def _gram_workload():
    def setup(n):
        X = _rng().standard_normal((n, 16))
        return {"X": X, "out": np.empty((n, n))}

    cs = [
        Contender("fastrbf", FASTRBF, lambda a: gram(a["X"], gamma=0.5)),
        Contender("fastrbf out=", FASTRBF, lambda a: gram(a["X"], gamma=0.5, out=a["out"])),
        Contender("numpy reference", NUMPY, lambda a: reference.gram(a["X"], gamma=0.5)),
    ]
    skm = _try_import("sklearn.metrics.pairwise")
    if skm is not None:
        cs.append(Contender("scikit-learn rbf_kernel", PEER, lambda a: skm.rbf_kernel(a["X"], gamma=0.5)))
    return Workload("gram-gaussian", setup, lambda a: a["X"].shape[0] ** 2, "entries/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{a['X'].shape[1]} self, gamma 0.5", sizes=(2000, 4500, 10000))


def _matvec_workload():
    def setup(n):
        rng = _rng()
        return {"X": rng.standard_normal((n, 16)), "Y": rng.standard_normal((2000, 16)), "v": rng.standard_normal(2000)}

    cs = [
        Contender("fastrbf", FASTRBF, lambda a: gram_matvec(a["X"], a["Y"], a["v"], gamma=0.5)),
        Contender("numpy build-then-multiply", NUMPY, lambda a: reference.gram_matvec(a["X"], a["Y"], a["v"], gamma=0.5)),
    ]
    return Workload("gram-matvec", setup, lambda a: a["X"].shape[0] * a["Y"].shape[0], "entries/s", cs,
                    lambda a: f"K({a['X'].shape[0]}x16, {a['Y'].shape[0]}x16) @ v", sizes=(2500, 16000, 100000))


# ---------------------------------------------------------------- k-means
def _one_lloyd_iteration(X, C):
    labels, _ = lloyd_assign(X, C)
    return lloyd_update(X, labels, C.shape[0])


def _reference_lloyd_iteration(X, C):
    labels, _ = reference.lloyd_assign(X, C)
    return reference.lloyd_update(X, labels, C.shape[0])


class _PerIteration:
    """Time per Lloyd iteration: (time of 1 + ITERS iterations - time of 1) / ITERS, which
    removes the set-up (validation, copies, init) from the figure.

    The 1-iteration fit runs before and after the long one and the faster of the two is
    subtracted, so a burst of load during one of them does not make the difference
    negative; should it still not be positive, the long fit's time per iteration (an
    upper bound, set-up included) is returned."""

    ITERS = 4
    self_timed = True  # returns its own time; tracemalloc of it is not meaningful

    def __init__(self, fit):
        self.fit = fit  # fit(data, n_iter)

    def __call__(self, a):
        t0 = time.perf_counter()
        self.fit(a, 1)
        t1 = time.perf_counter()
        self.fit(a, 1 + self.ITERS)
        t2 = time.perf_counter()
        self.fit(a, 1)
        t3 = time.perf_counter()
        per_iter = ((t2 - t1) - min(t1 - t0, t3 - t2)) / self.ITERS
        return per_iter if per_iter > 0 else (t2 - t1) / (1 + self.ITERS)


def _fastrbf_lloyd(a, n_iter):
    kmeans(a["X"], a["C"].shape[0], init=a["C"], max_iter=n_iter, tol=0)


def _sk_lloyd(a, n_iter):
    import warnings

    from sklearn.cluster import KMeans

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        KMeans(a["C"].shape[0], init=a["C"], n_init=1, max_iter=n_iter, tol=0, algorithm="lloyd").fit(a["X"])


def _faiss_lloyd(a, n_iter):
    import faiss

    X = np.ascontiguousarray(a["X"], dtype=np.float32)
    C = np.ascontiguousarray(a["C"], dtype=np.float32)
    km = faiss.Kmeans(X.shape[1], C.shape[0], niter=n_iter, max_points_per_centroid=X.shape[0] + 1, seed=1, verbose=False)
    km.train(X, init_centroids=C)


def _lloyd_workload(name, sizes, d, K, dtype):
    def setup(n):
        rng = _rng()
        X = rng.standard_normal((n, d)).astype(dtype)
        C = X[rng.choice(X.shape[0], K, replace=False)].copy()
        return {"X": X, "C": C}

    cs = [
        Contender("fastrbf kmeans (per iteration)", FASTRBF, _PerIteration(_fastrbf_lloyd)),
        Contender("fastrbf lloyd_assign+lloyd_update", FASTRBF, lambda a: _one_lloyd_iteration(a["X"], a["C"])),
        Contender("numpy reference", NUMPY, lambda a: _reference_lloyd_iteration(a["X"], a["C"]), full=sizes[-1] * K <= 10**8),
    ]
    if _try_import("sklearn.cluster") is not None:
        cs.append(Contender("scikit-learn (per iteration)", PEER, _PerIteration(_sk_lloyd)))
    if _try_import("faiss") is not None:
        cs.append(Contender("faiss float32 (per iteration)", PEER, _PerIteration(_faiss_lloyd)))
    return Workload(name, setup, lambda a: a["X"].shape[0] * a["C"].shape[0], "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{a['X'].shape[1]}, K={a['C'].shape[0]}, {a['X'].dtype}", sizes=sizes)


def _kmeans_run_workload():
    def setup(n):
        rng = _rng()
        X = rng.standard_normal((n, 16))
        return {"X": X, "C": X[rng.choice(X.shape[0], 64, replace=False)].copy()}

    def ours(a):
        return kmeans(a["X"], 64, init=a["C"], max_iter=20, tol=0)

    cs = [Contender("fastrbf", FASTRBF, ours)]
    if _try_import("sklearn.cluster") is not None:
        cs.append(Contender("scikit-learn", PEER, lambda a: _sk_lloyd(a, 20)))
    return Workload("kmeans-20-iterations", setup, lambda a: 20 * a["X"].shape[0] * 64, "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x16, K=64, same init, 20 iterations", sizes=(50000, 100000, 200000))


# ---------------------------------------------------------------- solves and models
class _PotrfFloor:
    """LAPACK ``dpotrf`` alone on a copy of the regularised Gram matrix; the copy is
    made untimed, so the figure is the factorisation only."""

    self_timed = True

    def __call__(self, a):
        from scipy.linalg import lapack

        np.copyto(a["work"], a["A"])
        t0 = time.perf_counter()
        _, info = lapack.dpotrf(a["work"].T, lower=0, clean=0, overwrite_a=1)
        t = time.perf_counter() - t0
        assert info == 0
        return t


class _CholeskyInPlace:
    """``fastrbf.cholesky(..., overwrite=True)`` on a copy of the matrix made untimed: the
    blocked factorisation (fixed blocks, the same bits on any thread count) and its
    symmetry check, against LAPACK ``dpotrf`` alone on the same matrix."""

    self_timed = True

    def __call__(self, a):
        from .linalg import cholesky

        np.copyto(a["work"], a["A"])
        t0 = time.perf_counter()
        cholesky(a["work"], overwrite=True)
        return time.perf_counter() - t0


def _cholesky_workload():
    def setup(n):
        rng = _rng()
        X = rng.standard_normal((n, 16))
        A = gram(X, gamma=1.0 / 16)
        A.flat[:: n + 1] += 1e-3
        return {"X": X, "A": A, "work": np.empty_like(A)}

    cs = [
        Contender("fastrbf cholesky (in place)", FASTRBF, _CholeskyInPlace()),
        Contender("LAPACK dpotrf alone", FLOOR, _PotrfFloor()),
    ]
    return Workload("cholesky", setup, lambda a: a["A"].shape[0] ** 3 / 3, "flop/s", cs,
                    lambda a: f"n={a['A'].shape[0]}, Gaussian Gram + 1e-3 I, float64", sizes=(3000, 5500, 10000))


def _krr_workload():
    gamma, alpha = 1.0 / 16, 1e-3

    def setup(n):
        rng = _rng()
        X = rng.standard_normal((n, 16))
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        A = gram(X, gamma=gamma)
        A.flat[:: n + 1] += alpha
        return {"X": X, "y": y, "A": A, "work": np.empty_like(A)}

    def sk(a):
        from sklearn.kernel_ridge import KernelRidge

        return KernelRidge(alpha=alpha, kernel="rbf", gamma=gamma).fit(a["X"], a["y"])

    cs = [
        Contender("fastrbf kernel_ridge", FASTRBF, lambda a: kernel_ridge(a["X"], a["y"], gamma=gamma, alpha=alpha)),
        Contender("numpy reference (Gram + solve)", NUMPY,
                  lambda a: reference.kernel_ridge(a["X"], a["y"], gamma=gamma, alpha=alpha)),
        Contender("LAPACK dpotrf alone", FLOOR, _PotrfFloor()),
    ]
    if _try_import("sklearn.kernel_ridge") is not None:
        cs.append(Contender("scikit-learn KernelRidge", PEER, sk))
    return Workload("krr-fit", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=16, gaussian, alpha {alpha:g}", sizes=(2000, 4500, 10000))


def _interp_workload():
    gamma = 2500.0  # epsilon 50 on the unit square: a well-posed Gaussian system at N = 5000 (SciPy agrees to 5e-12)

    def setup(size):
        rng = _rng()
        n, m = size
        X = rng.random((n, 2))
        y = np.sin(6 * X[:, 0]) * np.cos(4 * X[:, 1])
        return {"X": X, "y": y, "Xq": rng.random((m, 2))}

    def sp(a):
        from scipy.interpolate import RBFInterpolator

        return RBFInterpolator(a["X"], a["y"], kernel="gaussian", epsilon=np.sqrt(gamma))(a["Xq"])

    def ref(a):
        return reference.interpolate(a["X"], a["y"], a["Xq"], kernel="gaussian", gamma=gamma, degree=0)

    cs = [
        Contender("fastrbf interpolate + predict", FASTRBF,
                  lambda a: interpolate(a["X"], a["y"], kernel="gaussian", gamma=gamma).predict(a["Xq"])),
        Contender("numpy reference", NUMPY, ref),
    ]
    if _try_import("scipy.interpolate") is not None:
        cs.append(Contender("SciPy RBFInterpolator", PEER, sp))
    return Workload("interp", setup, lambda a: a["Xq"].shape[0], "evaluations/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=2, gaussian, {a['Xq'].shape[0]} evaluations",
                    sizes=((1000, 2000), (2200, 4500), (5000, 10000)))


def _rbfnet_workload():
    gamma, alpha = 0.05, 1e-6

    def setup(size):
        rng = _rng()
        n, k = size
        X = rng.standard_normal((n, 16))
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        return {"X": X, "y": y, "k": k}

    def ours(a):
        return rbf_network(a["X"], a["y"], n_centers=a["k"], gamma=gamma, alpha=alpha, max_iter=100, seed=0)

    def sk(a):
        import warnings

        from sklearn.cluster import KMeans
        from sklearn.linear_model import Ridge
        from sklearn.metrics.pairwise import rbf_kernel

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            C = KMeans(a["k"], n_init=1, max_iter=100, random_state=0).fit(a["X"]).cluster_centers_
        return Ridge(alpha=alpha).fit(rbf_kernel(a["X"], C, gamma=gamma), a["y"])

    def ref(a):
        rng = np.random.default_rng(0)
        C0 = a["X"][rng.choice(a["X"].shape[0], a["k"], replace=False)]
        C = reference.kmeans(a["X"], C0, max_iter=100)[0]
        return reference.rbf_network(a["X"], a["y"], C, gamma=gamma, alpha=alpha)

    cs = [
        Contender("fastrbf rbf_network", FASTRBF, ours),
        Contender("numpy reference (plain k-means + Phi + solve)", NUMPY, ref, full=False),
    ]
    if _try_import("sklearn.cluster") is not None:
        cs.append(Contender("scikit-learn KMeans + rbf_kernel + Ridge", PEER, sk))
    return Workload("rbfnet-fit", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=16, {a['k']} k-means centres, max_iter 100",
                    sizes=((5000, 16), (70000, 64), (1000000, 256)))


# ---------------------------------------------------------------- neighbours
def _knn_workload():
    def setup(size):
        rng = _rng()
        n, m = size
        X = rng.standard_normal((n, 16))
        Q = rng.standard_normal((m, 16))
        data = {"X": X, "Q": Q}
        skn = _try_import("sklearn.neighbors")
        if skn is not None:
            data["nn"] = skn.NearestNeighbors(n_neighbors=10, algorithm="brute").fit(X)
        return data

    cs = [
        Contender("fastrbf knn", FASTRBF, lambda a: knn(a["X"], a["Q"], 10)),
        Contender("numpy reference (distance rows + argsort)", NUMPY, lambda a: reference.knn(a["X"], a["Q"], 10), full=False),
    ]
    if _try_import("sklearn.neighbors") is not None:
        cs.append(Contender("scikit-learn NearestNeighbors brute", PEER, lambda a: a["nn"].kneighbors(a["Q"])))
    return Workload("knn", setup, lambda a: a["X"].shape[0] * a["Q"].shape[0], "pairs/s", cs,
                    lambda a: f"k=10, {a['X'].shape[0]} training x {a['Q'].shape[0]} queries, d=16",
                    sizes=((5000, 1000), (22000, 3000), (100000, 10000)))


def _nw_workload():
    gamma = 0.5

    def setup(size):
        rng = _rng()
        n, m = size
        X = rng.standard_normal((n, 8))
        y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2]
        return {"X": X, "y": y, "Q": rng.standard_normal((m, 8))}

    cs = [
        Contender("fastrbf nadaraya_watson", FASTRBF, lambda a: nadaraya_watson(a["X"], a["y"], a["Q"], gamma=gamma)),
        Contender("numpy reference (kernel matrix)", NUMPY,
                  lambda a: reference.nadaraya_watson(a["X"], a["y"], a["Q"], gamma=gamma)),
    ]
    return Workload("nadaraya-watson", setup, lambda a: a["X"].shape[0] * a["Q"].shape[0], "pairs/s", cs,
                    lambda a: f"{a['X'].shape[0]} training x {a['Q'].shape[0]} queries, d=8, gaussian",
                    sizes=((5000, 2000), (10000, 4500), (20000, 10000)))


# ---------------------------------------------------------------- Gaussian processes
def _gp_workload():
    def setup(n):
        rng = _rng()
        X = rng.random((n, 8))
        y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        return {"X": X, "y": y}

    def ours(a):
        import warnings

        with warnings.catch_warnings():  # the linear term's weight goes to its bound here
            warnings.simplefilter("ignore")
            return gp_regression(a["X"], a["y"], theta0=[1.0, 1.0, 1.0, 1.0], noise=0.1, n_restarts=0)

    def sk(a):
        import warnings

        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel

        k = (ConstantKernel(1.0) * RBF(1.0) + ConstantKernel(1.0)
             + ConstantKernel(1.0) * DotProduct(sigma_0=0.0, sigma_0_bounds="fixed") + WhiteKernel(0.1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return GaussianProcessRegressor(k, alpha=0.0, n_restarts_optimizer=0).fit(a["X"], a["y"])

    cs = [Contender("fastrbf gp_regression", FASTRBF, ours)]
    if _try_import("sklearn.gaussian_process") is not None:
        cs.append(Contender("scikit-learn GaussianProcessRegressor", PEER, sk))
    return Workload("gp-fit", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=8, PRML kernel, L-BFGS-B from one start", sizes=(250, 700, 2000))


def _gp_predict_workload():
    theta, noise = [1.0, 2.0, 0.1, 0.1], 0.01

    def setup(size):
        rng = _rng()
        n, m = size
        X = rng.random((n, 8))
        y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        data = {"X": X, "Q": rng.random((m, 8))}
        data["model"] = gp_regression(X, y, theta0=theta, noise=noise, optimize=False)
        gpm = _try_import("sklearn.gaussian_process")
        if gpm is not None:
            from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel

            k = (ConstantKernel(theta[0]) * RBF(1 / np.sqrt(theta[1])) + ConstantKernel(theta[2])
                 + ConstantKernel(theta[3]) * DotProduct(sigma_0=0.0, sigma_0_bounds="fixed") + WhiteKernel(noise))
            data["sk"] = gpm.GaussianProcessRegressor(k, alpha=0.0, optimizer=None).fit(X, y)
        return data

    cs = [Contender("fastrbf GPModel.predict (mean)", FASTRBF, lambda a: a["model"].predict(a["Q"]))]
    if _try_import("sklearn.gaussian_process") is not None:
        cs.append(Contender("scikit-learn predict(return_std=False)", PEER, lambda a: a["sk"].predict(a["Q"])))
    return Workload("gp-predict", setup, lambda a: a["Q"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=8, {a['Q'].shape[0]} query points, mean only",
                    sizes=((500, 20000), (1000, 45000), (2000, 100000)))
# ---------------------------------------------------------------- kernel approximations
def _rff_workload():
    gamma, d = 1.0 / 16, 16

    def setup(size):
        n, D = size
        X = _rng().standard_normal((n, d))
        data = {"X": X, "rff": random_fourier(d, D, gamma=gamma, seed=0), "out": np.empty((n, D))}
        skk = _try_import("sklearn.kernel_approximation")
        if skk is not None:  # fitted outside the timed call: only transform is timed
            data["sk"] = skk.RBFSampler(gamma=gamma, n_components=D, random_state=0).fit(X[:1])
        return data

    cs = [
        Contender("fastrbf", FASTRBF, lambda a: a["rff"].transform(a["X"])),
        Contender("fastrbf out=", FASTRBF, lambda a: a["rff"].transform(a["X"], out=a["out"])),
        Contender("numpy reference", NUMPY,
                  lambda a: reference.random_fourier_transform(a["X"], a["rff"].weights, a["rff"].offset)),
    ]
    if _try_import("sklearn.kernel_approximation") is not None:
        cs.append(Contender("scikit-learn RBFSampler.transform", PEER, lambda a: a["sk"].transform(a["X"])))
    return Workload("rff", setup, lambda a: a["X"].shape[0] * a["rff"].n_components, "features/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{a['X'].shape[1]} -> {a['rff'].n_components}, float64",
                    sizes=((20000, 500), (45000, 1000), (100000, 2000)))


# ---------------------------------------------------------------- scikit-learn estimators
def _sklearn_overhead_workloads():
    """fastrbf.sklearn's estimators against the functional call each wraps (kind FLOOR:
    the wrapper can only add to it): the overhead of scikit-learn's validation and
    bookkeeping, at sizes where the call takes milliseconds.  One thread on both sides:
    with two, the wake-up of the thread pools moves single calls by several ms either
    way, which would drown the wrapper's cost.  None without scikit-learn."""
    fsk = _try_import("fastrbf.sklearn")  # None without scikit-learn >= 1.6
    if fsk is None:
        return []

    gamma, alpha = 0.1, 1e-3

    def setup(size):
        rng = _rng()
        n, m = size  # m: kernel ridge's training points
        X = rng.standard_normal((n, 8))
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        return {"X": X, "y": y, "Xk": X[:m].copy(), "yk": y[:m].copy(), "Q": X[-1000:].copy()}

    net = Workload("sklearn-overhead/rbfnet-fit", setup, lambda a: a["X"].shape[0], "points/s", [
        Contender("fastrbf.sklearn RBFNetworkRegressor.fit", FASTRBF,
                  lambda a: fsk.RBFNetworkRegressor(32, gamma=gamma, alpha=alpha, max_iter=20, random_state=0, n_jobs=1)
                  .fit(a["X"], a["y"])),
        Contender("fastrbf rbf_network (the call it wraps)", BASELINE,
                  lambda a: rbf_network(a["X"], a["y"], n_centers=32, gamma=gamma, alpha=alpha, max_iter=20, seed=0,
                                      n_threads=1)),
    ], lambda a: f"N={a['X'].shape[0]}, d=8, 32 k-means centres, max_iter 20", sizes=((4000, 600), (40000, 2000)))
    krr = Workload("sklearn-overhead/krr-fit-predict", setup, lambda a: a["Xk"].shape[0], "points/s", [
        Contender("fastrbf.sklearn KernelRidge fit + predict", FASTRBF,
                  lambda a: fsk.KernelRidge(alpha, gamma=gamma, n_jobs=1).fit(a["Xk"], a["yk"]).predict(a["Q"])),
        Contender("fastrbf kernel_ridge + predict (the calls it wraps)", BASELINE,
                  lambda a: kernel_ridge(a["Xk"], a["yk"], gamma=gamma, alpha=alpha, n_threads=1).predict(a["Q"], n_threads=1)),
    ], lambda a: f"N={a['Xk'].shape[0]}, d=8, gaussian, 1000 predictions", sizes=((4000, 600), (40000, 2000)))
    return [net, krr]
# ---------------------------------------------------------------- dask
def _dask_block(block_id, n, d, rows):
    """Row block ``block_id[0]`` of the dask-lloyd data (the same on the client and the workers)."""
    i = block_id[0]
    lo = i * rows
    return np.random.default_rng([20261122, i]).standard_normal((min(n, lo + rows) - lo, d))


def _dask_lloyd_workload():
    """20 Lloyd iterations from the same centres: in-memory ``kmeans`` (all cores, the
    floor) against ``fastrbf.dask.kmeans`` on a LocalCluster of 2 single-threaded worker
    processes with X persisted on the workers: the figure is the engine's overhead."""
    K, d, iters = 256, 32, 20

    def setup(size):
        import logging

        import dask
        import dask.array as da
        from distributed import Client, LocalCluster

        n, nb = size  # full: blocks of 125000 rows (32 MB)
        rows = -(-n // nb)
        nb = -(-n // rows)
        X = np.concatenate([_dask_block((i,), n, d, rows) for i in range(nb)])
        C = X[_rng().choice(n, K, replace=False)].copy()
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
        client = Client(cluster, set_as_default=False)
        client.wait_for_workers(2)
        # X made on the workers, blocks dealt out evenly (the in-memory X is the same blocks)
        workers = sorted(client.scheduler_info()["workers"])
        futures = [client.submit(_dask_block, (i,), n, d, rows, workers=[workers[i % 2]], pure=False)
                   for i in range(nb)]
        Xd = client.persist(da.concatenate([da.from_delayed(dask.delayed(f), (min(n, (i + 1) * rows) - i * rows, d),
                                                            np.float64) for i, f in enumerate(futures)]))
        return {"X": X, "Xd": Xd, "C": C, "cluster": cluster, "client": client}

    def in_memory(a):
        return kmeans(a["X"], K, init=a["C"], max_iter=iters, tol=0)

    def on_dask(a):
        import dask

        from . import dask as fd

        with a["client"].as_current(), dask.config.set(scheduler="dask.distributed"):
            return fd.kmeans(a["Xd"], K, init=a["C"], max_iter=iters, tol=0).inertia

    def teardown(a):
        a["client"].close()
        a["cluster"].close()

    cs = [
        Contender("fastrbf.dask kmeans, LocalCluster 2 x 1 thread", FASTRBF, on_dask),
        Contender("fastrbf kmeans in memory", BASELINE, in_memory),
    ]
    return Workload("dask-lloyd", setup, lambda a: iters * a["X"].shape[0] * K, "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{d}, K={K}, {iters} iterations, {a['Xd'].numblocks[0]} blocks",
                    teardown=teardown, sizes=((20000, 4), (1000000, 8)))


def _krr_large_workload():
    # Nystroem KRR by Falkon's PCG on a smooth function of 3 of 16 standard normal
    # coordinates (sd ~0.8) plus noise (sd 0.5).  alpha = lam n (fastrbf's alpha is
    # unscaled; lam is the ridge of the mean loss), the same lam for the exact KRR of the
    # subsample; lam = 1e-5 was the better of 1e-4 / 1e-5 for both at N = 250000.
    gamma, lam, noise = 1.0 / 32, 1e-5, 0.5

    def f(X):
        return np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2]

    def setup(size):
        rng = _rng()
        n, m, n_sub = size
        X = rng.standard_normal((n, 16))
        y = f(X) + noise * rng.standard_normal(n)
        Xt = rng.standard_normal((10000, 16))
        yt = f(Xt) + noise * rng.standard_normal(10000)
        return {"X": X, "y": y, "m": m, "n_sub": n_sub, "Xt": Xt, "yt": yt, "L": X[rng.choice(n, m, replace=False)]}

    def ours(a):
        a["model"] = kernel_ridge(a["X"], a["y"], gamma=gamma, alpha=lam * a["X"].shape[0], solver="nystrom-pcg",
                                  n_landmarks=a["m"], seed=0)
        return a["model"]

    def ref(a):
        return reference.nystroem_kernel_ridge(a["X"], a["y"], a["L"], gamma=gamma, alpha=lam * a["X"].shape[0])

    def sk(a):
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import Ridge

        phi = Nystroem(gamma=gamma, n_components=a["m"], random_state=0).fit(a["X"])
        return phi, Ridge(alpha=lam * a["X"].shape[0], fit_intercept=False).fit(phi.transform(a["X"]), a["y"])

    def accuracy(a):
        model = a.get("model") or ours(a)
        n_sub = a["n_sub"]
        exact = kernel_ridge(a["X"][:n_sub], a["y"][:n_sub], gamma=gamma, alpha=lam * n_sub, solver="cholesky")
        p_pcg, p_ex, ft = model.predict(a["Xt"]), exact.predict(a["Xt"]), f(a["Xt"])
        r_pcg, r_ex = (float(np.sqrt(np.mean((p - a["yt"]) ** 2))) for p in (p_pcg, p_ex))
        e_pcg, e_ex = (float(np.sqrt(np.mean((p - ft) ** 2))) for p in (p_pcg, p_ex))
        return (f"test RMSE {r_pcg:.4f} ({model.n_iter} CG iterations) vs exact KRR on {n_sub} points {r_ex:.4f}: "
                f"{r_pcg / r_ex:.3f}x (RMSE to the noiseless function {e_pcg:.4f} vs {e_ex:.4f})")

    cs = [
        Contender("fastrbf kernel_ridge nystrom-pcg", FASTRBF, ours),
        Contender("numpy reference (explicit K_nm + solve)", NUMPY, ref, full=False),  # 16 GB at full size
    ]
    if _try_import("sklearn.kernel_approximation") is not None:
        cs.append(Contender("scikit-learn Nystroem + Ridge", PEER, sk, full=False))  # 16 GB features at full size
    return Workload("krr-large", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=16, M={a['m']}, gaussian gamma {gamma:g}, alpha {lam:g} N",
                    accuracy, sizes=((20000, 500, 2000), (1_000_000, 2000, 20000)))


def workloads():
    """All workloads, in the order of the report."""
    return [
        _sqdist_workload("sqdist-lowd/float64", ((2500, 2000), (7000, 2000), (20000, 2000)), 16, np.float64),
        _sqdist_workload("sqdist-lowd/float32", ((2500, 2000), (7000, 2000), (20000, 2000)), 16, np.float32),
        _sqdist_workload("sqdist-highd/float64", ((700, 700), (2600, 2600), (10000, 10000)), 256, np.float64),
        _gram_workload(),
        _matvec_workload(),
        _lloyd_workload("lloyd-small/float64", (50000, 100000, 200000), 16, 64, np.float64),
        _lloyd_workload("lloyd-small/float32", (50000, 100000, 200000), 16, 64, np.float32),
        _lloyd_workload("lloyd-large/float64", (25000, 160000, 1000000), 32, 256, np.float64),
        _lloyd_workload("lloyd-large/float32", (25000, 160000, 1000000), 32, 256, np.float32),
        _kmeans_run_workload(),
        _cholesky_workload(),
        _krr_workload(),
        _krr_large_workload(),
        _interp_workload(),
        _rbfnet_workload(),
        _knn_workload(),
        _nw_workload(),
        _gp_workload(),
        _gp_predict_workload(),
        _rff_workload(),
        *_sklearn_overhead_workloads(),
        *([_dask_lloyd_workload()] if _try_import("distributed") is not None and _try_import("dask.array") is not None
          else []),
    ]


# ---------------------------------------------------------------- timing
#: contenders slower than this per call (warm-up) get at most SLOW_ROUNDS timed rounds
SLOW_CALL_S = 2.0
SLOW_ROUNDS = 3
#: untimed warm-up calls go on until this many seconds are spent (at least one call):
#: the first few large allocations of a process, and the first after the host took
#: freed memory back, were measured 5-10x slower than the steady state on this machine
WARMUP_S = 0.5
#: the same for the quick sizes (their buffers are small)
WARMUP_QUICK_S = 0.25
#: timed rounds per workload at most (quick, full sizes) and at least (unless slow)
QUICK_ROUNDS, FULL_ROUNDS, MIN_ROUNDS = 15, 9, 5
#: seconds of timed calls per contender: once spent (and MIN_ROUNDS done) it sits out the remaining rounds
QUICK_BUDGET_S, FULL_BUDGET_S = 0.8, 10.0
#: a verdict needs the paired ratio's quartiles beyond 1 by this relative margin
VERDICT_MARGIN = 0.05
FASTER, SLOWER, WITHIN_NOISE = "faster", "slower", "within noise"


def _call(fn, data):
    """Seconds of one call (a ``self_timed`` callable returns its own time)."""
    t0 = time.perf_counter()
    r = fn(data)
    t = time.perf_counter() - t0
    return float(r) if getattr(fn, "self_timed", False) else t


def warm_up(fn, data, warmup_s=WARMUP_S, min_calls=1, trace_call=None):
    """Call ``fn(data)`` untimed until ``warmup_s`` seconds are spent and ``min_calls`` are made.

    Parameters
    ----------
    trace_call : int, optional
        Run this call (1: the first) under :mod:`tracemalloc` for the peak traced
        memory (one call after ``min_calls`` is made if the warm-up ended before).

    Returns
    -------
    first, last : float
        Wall seconds of the first call (which compiles on a cold cache) and of the last
        (the steady state when more than one call was made).
    peak : int or None
        Peak traced bytes of the traced call (None without ``trace_call``).

    Examples
    --------
    >>> first, last, peak = warm_up(lambda a: [0] * 1000, {}, warmup_s=0.0, min_calls=2, trace_call=2)
    >>> first > 0 and last > 0 and peak >= 8000
    True
    """
    t_start = time.perf_counter()
    first = None
    calls = 0
    peak = None
    while True:
        calls += 1
        traced = calls == trace_call
        if traced:
            tracemalloc.start()
            tracemalloc.reset_peak()
        try:
            t0 = time.perf_counter()
            fn(data)
            t1 = time.perf_counter()
        finally:
            if traced:
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
        first = t1 - t0 if first is None else first
        if t1 - t_start >= warmup_s and calls >= max(min_calls, trace_call or 0):
            return first, t1 - t0, peak


def time_rounds(fns, data, *, rounds, budget_s=float("inf"), min_rounds=MIN_ROUNDS, seed=0, caps=None):
    """Time callables in interleaved rounds: one call of each per round, in an order
    shuffled every round, so load from other processes falls on all of them alike.

    Parameters
    ----------
    fns : list of callable
        ``fn(data)`` runs a contender once (already warmed up).  A callable with a true
        ``self_timed`` attribute returns its own time in seconds, used instead of the
        wall time (per-iteration peers).
    data : dict
        The workload's arrays.
    rounds : int
        Rounds at most.
    budget_s : float
        Seconds per callable: once its timed calls add up to this much, and
        ``min_rounds`` are done, a callable sits out the remaining rounds (so a slow
        NumPy reference does not cut the rounds of the fast contenders short).
    min_rounds : int
        Rounds at least (unless capped).
    seed : int
        Seed of the shuffled orders.
    caps : list of int, optional
        Rounds at most per callable (a slow one takes part in the first rounds only).

    Returns
    -------
    list of list of float
        ``times[i][r]``: seconds of ``fns[i]`` in round ``r``.

    Examples
    --------
    >>> times = time_rounds([lambda a: sum(a["x"]), lambda a: max(a["x"])], {"x": [1, 2]}, rounds=4)
    >>> [len(t) for t in times]
    [4, 4]
    """
    order = list(range(len(fns)))
    shuffle = random.Random(seed).shuffle
    times: list = [[] for _ in fns]
    for r in range(max(1, rounds)):
        shuffle(order)
        active = [i for i in order if (caps is None or r < max(1, caps[i]))
                  and (r < min_rounds or sum(times[i]) < budget_s) and len(times[i]) == r]
        if not active:
            break
        for i in active:
            times[i].append(_call(fns[i], data))
    return times


def time_call(fn, data, repeats, budget_s=20.0, warmup_s=WARMUP_S):
    """Median seconds of ``fn(data)`` over ``repeats`` calls, after warm-up (one contender alone).

    Examples
    --------
    >>> time_call(lambda a: sum(a["x"]), {"x": [1, 2]}, 3, warmup_s=0.0) > 0
    True
    """
    first, last, _ = warm_up(fn, data, warmup_s)
    if last > SLOW_CALL_S:
        repeats = min(repeats, SLOW_ROUNDS)
    return float(np.median(time_rounds([fn], data, rounds=repeats, budget_s=budget_s, min_rounds=1)[0]))


def summarize(times):
    """Minimum, median and quartiles of per-round times (linear interpolation).

    Examples
    --------
    >>> summarize([4.0, 1.0, 3.0, 2.0, 5.0])
    {'rounds': 5, 'min_s': 1.0, 'median_s': 3.0, 'q1_s': 2.0, 'q3_s': 4.0}
    """
    q1, med, q3 = (float(v) for v in np.percentile(times, [25, 50, 75]))
    return {"rounds": len(times), "min_s": float(min(times)), "median_s": med, "q1_s": q1, "q3_s": q3}


def paired_ratio(other, this):
    """Per-round ratios ``other[r] / this[r]`` summarised as (median, lower quartile, upper quartile).

    Above 1: ``this`` took less time than ``other`` in that round.

    Examples
    --------
    >>> paired_ratio([2.0, 4.0, 2.2], [1.0, 2.0, 1.0])
    (2.0, 2.0, 2.1)
    """
    n = min(len(other), len(this))  # rounds in common (a slow contender takes part in the first rounds only)
    r = np.asarray(other[:n], dtype=float) / np.asarray(this[:n], dtype=float)
    med, q1, q3 = (float(v) for v in np.percentile(r, [50, 25, 75]))
    return med, q1, q3


def verdict(q1, q3, margin=VERDICT_MARGIN):
    """Verdict of a paired ratio (other's time over this row's) from its quartiles.

    ``"faster"`` when the lower quartile is above ``1 + margin``, ``"slower"`` when the
    upper quartile is below ``1 / (1 + margin)``, otherwise ``"within noise"`` (the
    interquartile range of the ratio reaches the band around 1).

    Examples
    --------
    >>> verdict(1.2, 1.5), verdict(0.5, 0.9), verdict(0.9, 1.3), verdict(1.01, 1.5)
    ('faster', 'slower', 'within noise', 'within noise')
    """
    if q1 > 1.0 + margin:
        return FASTER
    if q3 < 1.0 / (1.0 + margin):
        return SLOWER
    return WITHIN_NOISE


def peak_memory(fn, data):
    """Peak traced memory of one call, measured with :mod:`tracemalloc`.

    Parameters
    ----------
    fn : callable
        ``fn(data)`` runs the contender once.
    data : dict
        The workload's arrays.

    Returns
    -------
    int
        Peak bytes traced during the call (NumPy allocations are traced; memory that
        numba or BLAS allocate outside Python's allocator hooks is not).
    """
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn(data)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def load_average():
    """The 1-, 5- and 15-minute load averages (None where the platform has none)."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def busy_warning(load):
    """A warning line when the 1-minute load average exceeds the core count, else None.

    Examples
    --------
    >>> busy_warning([0.5, 0.5, 0.5]) is None
    True
    >>> busy_warning([99.0, 9.0, 9.0]).startswith("warning: load average 99.00")
    True
    """
    cores = os.cpu_count() or 1
    if load and load[0] > cores:
        return (f"warning: load average {load[0]:.2f} is above the {cores} cores: other processes compete for the "
                f"CPU; verdicts may be unreliable (--threads 1 compares single-threaded speed, which a busy machine "
                f"disturbs less)")
    return None


def _kernel_cache_is_cold():
    """True when no cached fastrbf kernel is found on disk (the first calls will compile)."""
    import glob

    import numba

    here = os.path.dirname(os.path.abspath(__file__))
    places = [os.path.join(here, "_jit", "__pycache__", "*.nbi")]
    cache_dir = getattr(numba.config, "CACHE_DIR", "")
    if cache_dir:
        places.append(os.path.join(cache_dir, "**", "*.nbi"))
    return not any(glob.glob(p, recursive=True) for p in places)


def _fmt_duration(s):
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.1f} min"


# ---------------------------------------------------------------- running
def _n_of(size):
    """The leading number of a size (the N of the scaling section)."""
    return size[0] if isinstance(size, (tuple, list)) else size


def _select(only):
    return [wl for wl in workloads() if not only or only in wl.name]


@contextlib.contextmanager
def _limit_threads(n_threads):
    """Limit fastrbf (numba), BLAS and OpenMP (scikit-learn) threads for the block; None: no limit."""
    if n_threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with _threads.threads(n_threads) as n, threadpool_limits(limits=n, user_api="openmp"):
        yield


def run(quick=True, repeats=None, only=None, log=None, progress=False, n_threads=None):
    """Run the workloads; return one dict per (workload, size, contender).

    Parameters
    ----------
    quick : bool
        The quick size of each workload (about two minutes on 2 cores once kernels are
        compiled); False: every size of each workload, up to the largest.
    repeats : int, optional
        Timed rounds at most (default :data:`QUICK_ROUNDS` / :data:`FULL_ROUNDS`; a
        contender takes part in fewer when they would not fit its time budget, see
        :func:`rounds_for`).
    only : str, optional
        Run only the workloads whose name contains this string (``"compile"``: the
        compile and import times of :func:`measure_compile`, which otherwise run last).
    log : callable, optional
        Called with each progress line (one per workload with an estimate of the time
        left, one per contender with its times).
    progress : bool
        Print the progress lines to standard error (when ``log`` is not given).
    n_threads : int, optional
        Limit every contender to this many threads (fastrbf's numba threads, BLAS and
        the OpenMP threads of scikit-learn); None: each uses all cores.  On a busy
        machine parallel code on oversubscribed cores slows down by amounts that differ
        from one implementation to the next and from one minute to the next, so
        ``n_threads=1`` gives verdicts that hold better from run to run.

    Returns
    -------
    list of dict
        One row per (workload, size, contender), keys: ``workload``, ``size`` (as in
        ``Workload.sizes``), ``n`` (its leading number), ``shape`` (a description),
        ``accuracy`` (a note or ""), ``dtype``, ``contender``, ``kind`` (fastrbf, numpy,
        peer, floor or baseline), ``rounds``, ``times_s`` (seconds per round),
        ``min_s``, ``median_s``, ``q1_s``, ``q3_s`` (quartiles of the rounds),
        ``throughput`` (work per second at the median, in ``unit``), ``unit``,
        ``ratio_vs_numpy``, ``ratio_vs_best_peer`` with ``ratio_vs_best_peer_q1`` /
        ``_q3``, ``best_peer`` and ``verdict`` (:func:`verdict`; fastrbf rows with a
        peer), ``ratio_vs_baseline`` with ``baseline`` (its label) and
        ``baseline_kind`` (floor or baseline), ``peak_mem_bytes`` (peak traced memory),
        ``threads`` (numba threads), ``blas`` (BLAS library, kernel and threads),
        ``load_before`` / ``load_after`` (load averages around the workload),
        ``note``.  Skipped contenders have ``median_s=None``; the rows of
        :func:`measure_compile` follow with ``workload="compile"``.

    Examples
    --------
    >>> rows = run(quick=True, repeats=1, only="sqdist-lowd/float32")
    >>> [r["contender"] for r in rows][:3]
    ['fastrbf', 'fastrbf out=', 'numpy reference']
    >>> all(r["median_s"] > 0 for r in rows)
    True
    """
    import numba

    if log is None and progress:
        def log(s):
            print(s, file=sys.stderr, flush=True)
    say = log or (lambda s: None)
    max_rounds = repeats or (QUICK_ROUNDS if quick else FULL_ROUNDS)
    budget = QUICK_BUDGET_S if quick else FULL_BUDGET_S
    warmup_s = WARMUP_QUICK_S if quick else WARMUP_S
    todo = [(wl, size) for wl in _select(only) for size in (wl.sizes[:1] if quick else wl.sizes)]
    if todo:
        say("numba cache of fastrbf's kernels is empty: the warm-up calls compile them as they come (minutes on a "
            "first run; cached on disk afterwards)" if _kernel_cache_is_cold() else
            "fastrbf's kernels are cached on disk (a kernel missing from the cache compiles on its first call)")
    rows = []
    t_run = time.perf_counter()
    steady: list = []  # seconds per workload without the first calls (compilation) beyond the warm-up budget
    with _limit_threads(n_threads):  # fastrbf, BLAS and OpenMP peers alike
        for k, (wl, size) in enumerate(todo):
            t_wl = time.perf_counter()
            left = (f"about {_fmt_duration(float(np.median(steady)) * (len(todo) - k))} left" if steady
                    else "time left known after the first workload")
            load_before = load_average()
            data = wl.setup(size)
            work = wl.work(data)
            shape = wl.describe(data) if wl.describe else ""
            active = [c for c in wl.contenders if quick or c.full or size == wl.sizes[0]]
            say(f"[{k + 1}/{len(todo)}] {wl.name} ({shape}): warming up {len(active)} contenders, then timing them in "
                f"rounds; {_fmt_duration(time.perf_counter() - t_run)} elapsed, {left}")
            first_excess = 0.0
            caps = []
            peaks = {}
            for c in active:
                # fastrbf's first call may compile (cold cache): a second call gives the steady time
                # and the peak memory (compilation's own allocations would be traced too)
                n_first = 2 if c.kind == FASTRBF else 1
                first, last, peaks[c.label] = warm_up(c.fn, data, warmup_s, min_calls=n_first,
                                                      trace_call=None if getattr(c.fn, "self_timed", False) else n_first)
                first_excess += max(0.0, first - max(last, warmup_s))
                caps.append(min(max_rounds, SLOW_ROUNDS) if last > SLOW_CALL_S else max_rounds)
                if c.kind == FASTRBF and first > 5.0 and first > 3 * last:
                    say(f"  {c.label}: first call {first:.1f} s (compiling kernels), then {_fmt_s(last)}")
            times = time_rounds([c.fn for c in active], data, rounds=max(caps), budget_s=budget, seed=k, caps=caps)
            by_label = dict(zip([c.label for c in active], times, strict=True))
            wl_rows = []
            for c in wl.contenders:
                row = dict(workload=wl.name, size=list(size) if isinstance(size, tuple) else size, n=_n_of(size),
                           shape=shape, accuracy="", dtype=str(data["X"].dtype), contender=c.label, kind=c.kind,
                           unit=wl.unit, threads=numba.get_num_threads(), blas=_threads.blas_info(), note="")
                t = by_label.get(c.label)
                if t is None:
                    row.update(rounds=0, times_s=None, min_s=None, median_s=None, q1_s=None, q3_s=None, throughput=None,
                               peak_mem_bytes=None, note="skipped above the quick size (too slow)")
                else:
                    row.update(summarize(t), times_s=[float(v) for v in t])
                    row["throughput"] = work / row["median_s"] if row["median_s"] > 0 else None
                    row["peak_mem_bytes"] = peaks[c.label]
                wl_rows.append(row)
            if wl.accuracy is not None:
                acc = wl.accuracy(data)
                say(f"  {wl.name}: {acc}")
                for r in wl_rows:
                    r["accuracy"] = acc
            _add_ratios(wl_rows)
            if wl.teardown is not None:  # a dask cluster (left to the interpreter's exit if a contender raised)
                wl.teardown(data)
            del data
            load_after = load_average()
            for r in wl_rows:
                r.update(load_before=load_before, load_after=load_after)
                if r["median_s"] is not None:
                    say(f"  {r['contender'][:44]:44s} min {_fmt_s(r['min_s']):>9} median {_fmt_s(r['median_s']):>9} "
                        f"({r['rounds']} rounds)")
            rows.extend(wl_rows)
            steady.append(max(0.0, time.perf_counter() - t_wl - first_excess))
    if not only or only in "compile":
        rows.extend(measure_compile(quick=quick, log=say))
    return rows


def _add_ratios(wl_rows):
    """Paired ratios and verdicts of one workload's rows (in place)."""
    timed = [r for r in wl_rows if r["times_s"]]
    numpy_r = next((r for r in timed if r["kind"] == NUMPY), None)
    peers = [r for r in timed if r["kind"] == PEER]
    best = min(peers, key=lambda r: r["median_s"]) if peers else None
    base = next((r for r in timed if r["kind"] in (FLOOR, BASELINE)), None)
    for r in wl_rows:
        r.update(ratio_vs_numpy=None, ratio_vs_best_peer=None, ratio_vs_best_peer_q1=None, ratio_vs_best_peer_q3=None,
                 best_peer=None, verdict=None, ratio_vs_baseline=None, baseline=None, baseline_kind=None)
        if not r["times_s"]:
            continue
        if numpy_r is not None and r is not numpy_r:
            r["ratio_vs_numpy"] = paired_ratio(numpy_r["times_s"], r["times_s"])[0]
        if r["kind"] != FASTRBF:
            continue
        if best is not None:
            med, q1, q3 = paired_ratio(best["times_s"], r["times_s"])
            r.update(ratio_vs_best_peer=med, ratio_vs_best_peer_q1=q1, ratio_vs_best_peer_q3=q3,
                     best_peer=best["contender"], verdict=verdict(q1, q3))
        if base is not None:
            r.update(ratio_vs_baseline=paired_ratio(base["times_s"], r["times_s"])[0], baseline=base["contender"],
                     baseline_kind=base["kind"])


# ---------------------------------------------------------------- compile and import
#: the product's goals for a first call (seconds): cold first call per function (the
#: fast group: sqdist, gram, gram_matvec), the float32 call right after the float64
#: one, and a warm first call (kernels cached on disk) above the second call
COMPILE_GOALS: dict[str, Any] = {"cold_s": 4.0, "cold_fast_s": 2.0, "fast": ("sqdist", "gram", "gram_matvec"), "float32_s": 2.0,
                 "warm_extra_s": 0.05}
#: the targets measured by a quick run (all of ``fastrbf.compile.TARGETS`` otherwise)
QUICK_COMPILE_TARGETS = ("sqdist", "gram", "gram_matvec", "kernel_ridge")

_COMPILE_SCRIPT = r"""
import json, sys, time
import numpy as np
from fastrbf.compile import TARGETS
fn = TARGETS[sys.argv[1]]
startup = None
if sys.argv[2:] == ["warm"]:  # numba's own once-per-process start-up, paid before fastrbf's first call
    import numba
    one, two = numba.njit(lambda x: x + 1.0), numba.njit(lambda x: x + 2.0)
    t0 = time.perf_counter(); one(1.0); t1 = time.perf_counter(); two(1.0); t2 = time.perf_counter()
    startup = max(0.0, (t1 - t0) - (t2 - t1))
def timed(dtype):
    w, c = time.perf_counter(), time.process_time()
    fn(dtype)
    return [time.perf_counter() - w, time.process_time() - c]
first = timed(np.float64)
second = timed(np.float64)
f32 = timed(np.float32)
print(json.dumps({"first": first, "second": second, "float32": f32, "numba_startup": startup}))
"""

_IMPORT_SCRIPT = r"""
import json, time
t0 = time.perf_counter()
import numba
t1 = time.perf_counter()
import fastrbf
t2 = time.perf_counter()
print(json.dumps({"numba": t1 - t0, "fastrbf": t2 - t1}))
"""


def _child(script, args, cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(args) or 'import'}` failed in a fresh process:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compile_goal_misses(row):
    """The :data:`COMPILE_GOALS` a compile row misses, as short phrases (empty: all met).

    Examples
    --------
    >>> compile_goal_misses({"contender": "gram", "median_s": 2.5, "float32_extra_s": 0.5, "warm_extra_s": 0.01})
    ['cold > 2 s']
    """
    g = COMPILE_GOALS
    cold_goal = g["cold_fast_s"] if row["contender"] in g["fast"] else g["cold_s"]
    misses = []
    if row["median_s"] is not None and row["median_s"] > cold_goal:
        misses.append(f"cold > {cold_goal:g} s")
    if row.get("float32_extra_s") is not None and row["float32_extra_s"] > g["float32_s"]:
        misses.append(f"float32 > {g['float32_s']:g} s")
    if row.get("warm_extra_s") is not None and row["warm_extra_s"] > g["warm_extra_s"]:
        misses.append(f"warm > {g['warm_extra_s'] * 1e3:g} ms")
    return misses


def measure_compile(quick=True, targets=None, import_repeats=3, log=None):
    """Cold first-call times of public functions and the import time of fastrbf.

    Each target of :data:`fastrbf.compile.TARGETS` (a tiny float64 call) runs in a
    fresh process with an empty numba cache (a new temporary ``NUMBA_CACHE_DIR``):
    its first call (compiles), a second call, then a float32 call (compiles the float32
    kernels).  A second fresh process on the now filled cache times the *warm* first
    call: what it takes above the second call is loading the cached kernels.  That
    process first starts numba itself (two trivial functions compiled: the first one's
    extra time over the second is numba's once-per-process start-up, which any numba
    code pays on its first call, cached or not), so the warm figure is fastrbf's own.
    ``import fastrbf`` is timed right after ``import numba`` in ``import_repeats``
    fresh processes (the median; the quartiles give the spread).

    Parameters
    ----------
    quick : bool
        Only :data:`QUICK_COMPILE_TARGETS` (default) or every target.
    targets : sequence of str, optional
        Names of targets to measure instead.
    import_repeats : int
        Fresh processes for the import time (0: not measured).
    log : callable, optional
        Called with a progress line per target.

    Returns
    -------
    list of dict
        One row per target (``workload="compile"``, ``kind="compile"``, ``contender``
        the target, ``median_s`` the cold first call's wall seconds, ``cold_cpu_s``
        its CPU seconds, ``float32_extra_s``, ``warm_extra_s`` (warm first call minus
        second call, after numba's start-up), ``numba_startup_s``, ``goal_misses`` (:func:`compile_goal_misses`)), then one row
        ``contender="import fastrbf (after numba)"``, ``kind="import"``.
    """
    from .compile import TARGETS

    say = log or (lambda s: None)
    names = list(targets) if targets is not None else (list(QUICK_COMPILE_TARGETS) if quick else sorted(TARGETS))
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        raise ValueError(f"`targets` must name entries of fastrbf.compile.TARGETS; got {unknown!r}.")
    rows = []
    t0 = time.perf_counter()
    base = dict(workload="compile", size=None, n=None, dtype="float64", unit="s", accuracy="", note="",
                rounds=1, q1_s=None, q3_s=None, throughput=None, peak_mem_bytes=None, ratio_vs_numpy=None,
                ratio_vs_best_peer=None, verdict=None, ratio_vs_baseline=None)
    for k, name in enumerate(names):
        say(f"[compile {k + 1}/{len(names)}] {name}: first call in a fresh process with an empty numba cache; "
            f"{_fmt_duration(time.perf_counter() - t0)} elapsed")
        load_before = load_average()
        with tempfile.TemporaryDirectory(prefix="fastrbf-cache-") as cache:
            cold = _child(_COMPILE_SCRIPT, [name], cache)
            warm = _child(_COMPILE_SCRIPT, [name, "warm"], cache)
        row = dict(base, contender=name, kind="compile", shape="tiny float64 call, fresh process",
                   median_s=cold["first"][0], min_s=cold["first"][0], times_s=[cold["first"][0]],
                   cold_cpu_s=cold["first"][1], float32_extra_s=cold["float32"][0],
                   warm_first_s=warm["first"][0], second_s=warm["second"][0],
                   warm_extra_s=warm["first"][0] - warm["second"][0], numba_startup_s=warm["numba_startup"],
                   load_before=load_before,
                   load_after=load_average())
        row["goal_misses"] = compile_goal_misses(row)
        say(f"  {name}: cold {row['median_s']:.2f} s (CPU {row['cold_cpu_s']:.2f} s), float32 +"
            f"{row['float32_extra_s']:.2f} s, warm first call +{row['warm_extra_s'] * 1e3:.1f} ms "
            f"(after numba's own start-up, {row['numba_startup_s'] * 1e3:.0f} ms)")
        rows.append(row)
    if import_repeats:
        load_before = load_average()
        with tempfile.TemporaryDirectory(prefix="fastrbf-cache-") as cache:
            imp = [_child(_IMPORT_SCRIPT, [], cache) for _ in range(import_repeats)]
        t = [d["fastrbf"] for d in imp]
        rows.append(dict(base, contender="import fastrbf (after numba)", kind="import", shape="fresh processes",
                         **summarize(t), times_s=t, numba_import_s=float(np.median([d["numba"] for d in imp])),
                         load_before=load_before, load_after=load_average()))
        say(f"  import fastrbf after numba: median {rows[-1]['median_s'] * 1e3:.0f} ms of {import_repeats} processes")
    return rows


# ---------------------------------------------------------------- the table
#: the widest line of the table
TABLE_WIDTH = 120


def _fmt_s(t):
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.0f} us"
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def _num(v):
    return f"{v:.0f}" if v >= 100 else (f"{v:.1f}" if v >= 10 else f"{v:.2f}")


def _time_pair(lo, med):
    if med is None:
        return "-"
    scale, unit = (1e6, "us") if med < 1e-3 else ((1e3, "ms") if med < 1 else (1.0, "s"))
    return f"{_num(lo * scale)} / {_num(med * scale)} {unit}" if lo is not None else f"{_num(med * scale)} {unit}"


def _fmt_x(v):
    return "-" if v is None else f"{v:.2f}x"


def _iqr(r):
    if r.get("q1_s") is None or r.get("q3_s") is None or not r.get("median_s"):
        return "-"
    return f"{100 * (r['q3_s'] - r['q1_s']) / r['median_s']:.0f}%"


def _vs_peer(r):
    if r.get("ratio_vs_best_peer") is None:
        return "-"
    v = r.get("verdict")
    return f"{r['ratio_vs_best_peer']:.2f}x " + (v if v else "(no spread)")


def _align(head, lines, right=()):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=True)]

    def fmt(cells):
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [fmt(head), "  ".join("-" * w for w in widths)] + [fmt(ln) if ln else "" for ln in lines], widths


def _wrap(text, indent="    "):
    import textwrap

    return textwrap.fill(text, TABLE_WIDTH, subsequent_indent=indent, break_on_hyphens=False)


def _groups(rows):
    """(workload, shape) groups in order of appearance."""
    out: dict = {}
    for r in rows:
        out.setdefault((r["workload"], r.get("shape", "")), []).append(r)
    return out


def format_table(rows):
    """Format the rows of :func:`run` as a plain-text table with a numbered legend.

    One group of lines per workload (and size): its contenders with the time (minimum
    and median over the rounds), the spread (interquartile range of the rounds as a
    percentage of the median), the paired ratio against the best peer with its verdict,
    against the NumPy reference and against the workload's baseline, and the peak traced
    memory.  Sizes, accuracy notes and baselines are in the numbered legend below; the
    compile rows (and the scaling over sizes of a full run) follow in their own
    sections.  No line is wider than :data:`TABLE_WIDTH`.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run` (rows saved by an older version, without spreads,
        are shown with "-" where a field is missing).

    Returns
    -------
    str

    Examples
    --------
    >>> row = dict(workload="w", shape="10x2", contender="fastrbf", kind="fastrbf", min_s=0.4, median_s=0.5,
    ...            q1_s=0.45, q3_s=0.55, ratio_vs_numpy=4.0, ratio_vs_best_peer=2.0, verdict="faster",
    ...            peak_mem_bytes=2**20)
    >>> print(format_table([row]))  # doctest: +ELLIPSIS
    workload / contender  time min / median  IQR  vs best peer  vs NumPy  vs base  peak mem
    --------------------  -----------------  ---  ------------  --------  -------  --------
    [1] w
      fastrbf                  400 / 500 ms  20%  2.00x faster     4.00x        -     1 MiB
    <BLANKLINE>
    [1] w: 10x2
    ...
    """
    timed = [r for r in rows if r.get("workload") != "compile"]
    out = []
    legend = []
    if timed:
        head = ["workload / contender", "time min / median", "IQR", "vs best peer", "vs NumPy", "vs base", "peak mem"]
        cells: list = []
        for k, ((w, shape), g) in enumerate(_groups(timed).items(), 1):
            cells.append([f"[{k}] {w}", "", "", "", "", "", ""])
            note = "; ".join(x for x in (shape, g[0].get("accuracy", "")) if x)
            base = next((r for r in g if r.get("kind") in (FLOOR, BASELINE)), None)
            if base is not None:
                note += f"; vs base: against {base['contender']} ({KIND_NAMES[base['kind']]})"
            legend.append(_wrap(f"[{k}] {w}: {note}"))
            for r in g:
                tag = {FLOOR: " [floor]", BASELINE: " [baseline]"}.get(r.get("kind"), "")
                mem = "-" if r.get("peak_mem_bytes") is None else f"{r['peak_mem_bytes'] / 2**20:.0f} MiB"
                best = r["contender"] == next((x.get("best_peer") for x in g if x.get("best_peer")), None)
                time_cell = (_time_pair(r.get("min_s"), r["median_s"]) if r.get("median_s") is not None
                             else r.get("note") or "-")
                cells.append([("  " + r["contender"], tag), time_cell, _iqr(r),
                              "best peer" if best else _vs_peer(r), _fmt_x(r.get("ratio_vs_numpy")),
                              _fmt_x(r.get("ratio_vs_baseline", r.get("ratio_vs_floor"))), mem])
        rest = sum(max(len(str(c[i])) for c in [*cells, head]) + 2 for i in range(1, len(head)))
        room = TABLE_WIDTH - rest
        for c in cells:
            if isinstance(c[0], tuple):  # a contender: its label shortened to fit, its kind tag kept
                label, tag = c[0]
                c[0] = (label if len(label) + len(tag) <= room else label[: room - len(tag) - 3] + "...") + tag
        lines, _ = _align(head, cells, right={1, 2, 4, 5, 6})
        # group headers: the name alone, not padded
        out += [ln.rstrip() for ln in lines]
        out += ["", *legend, "", _wrap(
            f"time: minimum / median of the rounds (all contenders timed once per round, in a shuffled order); IQR: "
            f"interquartile range of the rounds, % of the median.  vs best peer: median over the rounds of the "
            f"fastest peer's time / this row's in the same round (> 1: faster); the verdict says faster or slower "
            f"only when the quartiles of these ratios are both above {1 + VERDICT_MARGIN:g} or both below "
            f"1/{1 + VERDICT_MARGIN:g}, else within noise.  "
            f"vs NumPy, vs base: the same paired ratio against the NumPy reference and the workload's baseline "
            f"([floor]: a hardware floor; [baseline]: a reference point, named in the legend).  peak mem: peak "
            f"traced memory (tracemalloc) of one call.", indent="")]
    scaling = format_scaling(timed)
    if scaling:
        out += ["", scaling]
    comp = format_compile(rows)
    if comp:
        out += ["", comp] if out else [comp]
    return "\n".join(out)


def format_scaling(rows):
    """How the median time grows with N, for the workloads run at more than one size
    (a full run); "" when there are none.

    The growth exponent ``p`` fits ``time ~ N**p`` through the smallest and largest N.

    Examples
    --------
    >>> rows = [dict(workload="w", contender="a", n=n, median_s=t) for n, t in ((100, 0.01), (1000, 1.0))]
    >>> print(format_scaling(rows))
    scaling: median time per call as N grows; p: exponent of time ~ N^p between the smallest and largest N
    workload / contender    N=100  N=1000     p
    --------------------  -------  ------  ----
    w
      a                   10.0 ms  1.00 s  2.00
    """
    import math

    by_wl: dict = {}
    for r in rows:
        if r.get("n") is not None:
            by_wl.setdefault(r["workload"], []).append(r)
    multi = {w: g for w, g in by_wl.items() if len({r["n"] for r in g}) > 1}
    if not multi:
        return ""
    width = max(len({r["n"] for r in g}) for g in multi.values())
    head = ["workload / contender", *[f"size {i + 1}" for i in range(width)], "p"]
    cells = []
    for w, g in multi.items():
        ns = sorted({r["n"] for r in g})
        cells.append([w] + [""] * (width + 1))
        for c in dict.fromkeys(r["contender"] for r in g):
            t = {r["n"]: r["median_s"] for r in g if r["contender"] == c}
            pts = [(n, t[n]) for n in ns if t.get(n)]
            p = (f"{math.log(pts[-1][1] / pts[0][1]) / math.log(pts[-1][0] / pts[0][0]):.2f}"
                 if len(pts) > 1 else "-")
            cells.append(["  " + c[:44]] + [(f"N={n}: " if len(multi) > 1 else "") + _fmt_s(t.get(n)) for n in ns]
                         + [""] * (width - len(ns)) + [p])
    if len(multi) == 1:
        head = ["workload / contender", *[f"N={n}" for n in sorted({r['n'] for r in next(iter(multi.values()))})], "p"]
    lines, _ = _align(head, cells, right=set(range(1, width + 2)))
    return "\n".join(["scaling: median time per call as N grows; p: exponent of time ~ N^p between the smallest and "
                      "largest N", *lines])


def format_compile(rows):
    """The compile and import rows of :func:`measure_compile` as a table; "" when there are none.

    Examples
    --------
    >>> row = dict(workload="compile", contender="gram", kind="compile", median_s=2.5, cold_cpu_s=2.4,
    ...            float32_extra_s=0.5, warm_extra_s=0.01)
    >>> print(format_compile([row]))
    compile: first call of a public function in a fresh process, empty numba cache, tiny float64 input
    target       cold (CPU)  float32 after  warm 1st - 2nd  goals
    ------  ---------------  -------------  --------------  ------------------
    gram    2.50 s (2.40 s)        +0.50 s        +10.0 ms  missed: cold > 2 s
    goals: cold <= 4 s (<= 2 s for sqdist, gram, gram_matvec), float32 after float64 <= +2 s, warm first call <= +50 ms
    """
    comp = [r for r in rows if r.get("workload") == "compile" and r.get("kind") == "compile"]
    imp = [r for r in rows if r.get("workload") == "compile" and r.get("kind") == "import"]
    if not comp and not imp:
        return ""
    g = COMPILE_GOALS
    out = []
    if comp:
        cells = []
        for r in comp:
            misses = r.get("goal_misses", compile_goal_misses(r))
            cpu = f" ({r['cold_cpu_s']:.2f} s)" if r.get("cold_cpu_s") is not None else ""
            f32 = "-" if r.get("float32_extra_s") is None else f"+{r['float32_extra_s']:.2f} s"
            warm = "-" if r.get("warm_extra_s") is None else f"+{r['warm_extra_s'] * 1e3:.1f} ms"
            cells.append([r["contender"], f"{r['median_s']:.2f} s{cpu}", f32, warm,
                          "met" if not misses else "missed: " + ", ".join(misses)])
        lines, _ = _align(["target", "cold (CPU)", "float32 after", "warm 1st - 2nd", "goals"], cells, right={1, 2, 3})
        out += ["compile: first call of a public function in a fresh process, empty numba cache, tiny float64 input",
                *lines,
                _wrap(f"goals: cold <= {g['cold_s']:g} s (<= {g['cold_fast_s']:g} s for {', '.join(g['fast'])}), "
                      f"float32 after float64 <= +{g['float32_s']:g} s, warm first call <= +{g['warm_extra_s'] * 1e3:g} "
                      f"ms", indent="")]
        startup = [r["numba_startup_s"] for r in comp if r.get("numba_startup_s") is not None]
        if startup:
            out.append(_wrap(f"warm 1st - 2nd is counted after numba's own once-per-process start-up "
                             f"(median {np.median(startup) * 1e3:.0f} ms here), which any numba code pays on its "
                             f"first call", indent=""))
    for r in imp:
        spread = (f"; IQR {r['q1_s'] * 1e3:.0f}-{r['q3_s'] * 1e3:.0f} ms" if r.get("q1_s") is not None else "")
        numba_s = f"; import numba itself {r['numba_import_s']:.2f} s" if r.get("numba_import_s") is not None else ""
        out.append(f"import fastrbf after import numba: {r['median_s'] * 1e3:.0f} ms (median of {r.get('rounds', '?')} "
                   f"fresh processes{spread}){numba_s}")
    return "\n".join(out)
