"""The benchmark workloads, defined once for ``python -m fastrbf.bench`` and ``bench/``.

Each workload has a data set (seeded), a measure of work (for the throughput column)
and its contenders: fastrbf, the plain NumPy reference (:mod:`fastrbf.reference`) and
the peers that are installed (scikit-learn, SciPy, faiss, the NumPy norm trick).  All
rows of one run are measured side by side in one process: each contender is warmed up
right before it is timed (memory freed to the host is slow to touch again), timed over
repeated calls (median; at most 3 calls for a contender slower than 2 s per call, and
timing stops once a time budget is spent), then run once more under ``tracemalloc``
for its *peak traced memory* (NumPy's allocations are traced; numba's small per-thread
tiles are not).

Ratios: ``ratio_vs_numpy`` is the NumPy baseline's median (the reference, or NumPy
build-then-multiply for gram-matvec) over the row's median; ``ratio_vs_best_peer``
(fastrbf rows only) is the fastest peer's median over the row's median.  Peers are
scikit-learn, SciPy, faiss and the NumPy norm trick, never the NumPy reference.  A
contender that is too slow at full size (the broadcast reference on high-d data, over
~30 s per call) is listed with ``median_s=None`` and a note.
"""

import time
import tracemalloc
from dataclasses import dataclass, field

import numpy as np

from . import _threads, reference
from .approx import random_fourier
from .cluster import kmeans, lloyd_assign, lloyd_update
from .distances import sqdist
from .gp import gp_regression
from .kernels import gram, gram_matvec
from .models import interpolate, kernel_ridge, rbf_network
from .neighbors import knn, nadaraya_watson

FASTRBF, NUMPY, PEER, FLOOR = "fastrbf", "numpy", "peer", "floor"


@dataclass
class Contender:
    """One implementation of a workload: ``fn(data)`` runs it once."""

    label: str
    kind: str  # FASTRBF, NUMPY, PEER or FLOOR (a hardware/LAPACK floor, not a peer)
    fn: object
    full: bool = True  # also run at full size (False: too slow, quick size only)


@dataclass
class Workload:
    """A benchmark workload: data, work measure and contenders."""

    name: str
    setup: object  # setup(quick) -> dict of arrays
    work: object  # work(data) -> float, in `unit`
    unit: str
    contenders: list = field(default_factory=list)
    describe: object = None  # describe(data) -> str
    accuracy: object = None  # accuracy(data) -> str, after the contenders ran; appended to the size column
    teardown: object = None  # teardown(data): release what setup started (a dask cluster)


def _try_import(name):
    try:
        return __import__(name, fromlist=["_"])
    except Exception:
        return None


def _rng():
    return np.random.default_rng(20261122)


# ---------------------------------------------------------------- distances and Gram
def _sqdist_workload(name, n, m, d, dtype, qn, qm):
    def setup(quick):
        rng = _rng()
        nn, mm = (qn, qm) if quick else (n, m)
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
    return Workload(name, setup, lambda a: a["X"].shape[0] * a["Y"].shape[0], "pairs/s", cs, _shape_xy)


def _norm_trick(X, Y):
    return (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2 * (X @ Y.T)


def _shape_xy(a):
    return f"{a['X'].shape[0]}x{a['X'].shape[1]} vs {a['Y'].shape[0]}, {a['X'].dtype}"


def _gram_workload():
    def setup(quick):
        n = 2000 if quick else 10000
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
                    lambda a: f"{a['X'].shape[0]}x{a['X'].shape[1]} self, gamma 0.5")


def _matvec_workload():
    def setup(quick):
        rng = _rng()
        n = 2500 if quick else 100000
        return {"X": rng.standard_normal((n, 16)), "Y": rng.standard_normal((2000, 16)), "v": rng.standard_normal(2000)}

    cs = [
        Contender("fastrbf", FASTRBF, lambda a: gram_matvec(a["X"], a["Y"], a["v"], gamma=0.5)),
        Contender("numpy build-then-multiply", NUMPY, lambda a: reference.gram_matvec(a["X"], a["Y"], a["v"], gamma=0.5)),
    ]
    return Workload("gram-matvec", setup, lambda a: a["X"].shape[0] * a["Y"].shape[0], "entries/s", cs,
                    lambda a: f"K({a['X'].shape[0]}x16, {a['Y'].shape[0]}x16) @ v")


# ---------------------------------------------------------------- k-means
def _one_lloyd_iteration(X, C):
    labels, _ = lloyd_assign(X, C)
    return lloyd_update(X, labels, C.shape[0])


def _reference_lloyd_iteration(X, C):
    labels, _ = reference.lloyd_assign(X, C)
    return reference.lloyd_update(X, labels, C.shape[0])


class _PerIteration:
    """Time per Lloyd iteration of a peer: (time of 1 + ITERS iterations - time of 1) / ITERS,
    which removes the peer's set-up (validation, copies, init) from the figure."""

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
        return ((t2 - t1) - (t1 - t0)) / self.ITERS


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


def _lloyd_workload(name, n, d, K, dtype, qn):
    def setup(quick):
        rng = _rng()
        X = rng.standard_normal((qn if quick else n, d)).astype(dtype)
        C = X[rng.choice(X.shape[0], K, replace=False)].copy()
        return {"X": X, "C": C}

    cs = [
        Contender("fastrbf kmeans (per iteration)", FASTRBF, _PerIteration(_fastrbf_lloyd)),
        Contender("fastrbf lloyd_assign+lloyd_update", FASTRBF, lambda a: _one_lloyd_iteration(a["X"], a["C"])),
        Contender("numpy reference", NUMPY, lambda a: _reference_lloyd_iteration(a["X"], a["C"]), full=n * K <= 10**8),
    ]
    if _try_import("sklearn.cluster") is not None:
        cs.append(Contender("scikit-learn (per iteration)", PEER, _PerIteration(_sk_lloyd)))
    if _try_import("faiss") is not None:
        cs.append(Contender("faiss float32 (per iteration)", PEER, _PerIteration(_faiss_lloyd)))
    return Workload(name, setup, lambda a: a["X"].shape[0] * a["C"].shape[0], "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{a['X'].shape[1]}, K={a['C'].shape[0]}, {a['X'].dtype}")


def _kmeans_run_workload():
    def setup(quick):
        rng = _rng()
        X = rng.standard_normal((50000 if quick else 200000, 16))
        return {"X": X, "C": X[rng.choice(X.shape[0], 64, replace=False)].copy()}

    def ours(a):
        return kmeans(a["X"], 64, init=a["C"], max_iter=20, tol=0)

    cs = [Contender("fastrbf", FASTRBF, ours)]
    if _try_import("sklearn.cluster") is not None:
        cs.append(Contender("scikit-learn", PEER, lambda a: _sk_lloyd(a, 20)))
    return Workload("kmeans-20-iterations", setup, lambda a: 20 * a["X"].shape[0] * 64, "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x16, K=64, same init, 20 iterations")


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
    def setup(quick):
        rng = _rng()
        n = 3000 if quick else 10000
        X = rng.standard_normal((n, 16))
        A = gram(X, gamma=1.0 / 16)
        A.flat[:: n + 1] += 1e-3
        return {"X": X, "A": A, "work": np.empty_like(A)}

    cs = [
        Contender("fastrbf cholesky (in place)", FASTRBF, _CholeskyInPlace()),
        Contender("LAPACK dpotrf alone", FLOOR, _PotrfFloor()),
    ]
    return Workload("cholesky", setup, lambda a: a["A"].shape[0] ** 3 / 3, "flop/s", cs,
                    lambda a: f"n={a['A'].shape[0]}, Gaussian Gram + 1e-3 I, float64")


def _krr_workload():
    gamma, alpha = 1.0 / 16, 1e-3

    def setup(quick):
        rng = _rng()
        n = 2000 if quick else 10000
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
                    lambda a: f"N={a['X'].shape[0]}, d=16, gaussian, alpha {alpha:g}")


def _interp_workload():
    gamma = 2500.0  # epsilon 50 on the unit square: a well-posed Gaussian system at N = 5000 (SciPy agrees to 5e-12)

    def setup(quick):
        rng = _rng()
        n, m = (1000, 2000) if quick else (5000, 10000)
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
                    lambda a: f"N={a['X'].shape[0]}, d=2, gaussian, {a['Xq'].shape[0]} evaluations")


def _rbfnet_workload():
    gamma, alpha = 0.05, 1e-6

    def setup(quick):
        rng = _rng()
        n, k = (5000, 16) if quick else (1000000, 256)
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
                    lambda a: f"N={a['X'].shape[0]}, d=16, {a['k']} k-means centres, max_iter 100")


# ---------------------------------------------------------------- neighbours
def _knn_workload():
    def setup(quick):
        rng = _rng()
        n, m = (5000, 1000) if quick else (100000, 10000)
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
                    lambda a: f"k=10, {a['X'].shape[0]} training x {a['Q'].shape[0]} queries, d=16")


def _nw_workload():
    gamma = 0.5

    def setup(quick):
        rng = _rng()
        n, m = (5000, 2000) if quick else (20000, 10000)
        X = rng.standard_normal((n, 8))
        y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2]
        return {"X": X, "y": y, "Q": rng.standard_normal((m, 8))}

    cs = [
        Contender("fastrbf nadaraya_watson", FASTRBF, lambda a: nadaraya_watson(a["X"], a["y"], a["Q"], gamma=gamma)),
        Contender("numpy reference (kernel matrix)", NUMPY,
                  lambda a: reference.nadaraya_watson(a["X"], a["y"], a["Q"], gamma=gamma)),
    ]
    return Workload("nadaraya-watson", setup, lambda a: a["X"].shape[0] * a["Q"].shape[0], "pairs/s", cs,
                    lambda a: f"{a['X'].shape[0]} training x {a['Q'].shape[0]} queries, d=8, gaussian")


# ---------------------------------------------------------------- Gaussian processes
def _gp_workload():
    def setup(quick):
        rng = _rng()
        n = 250 if quick else 2000
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
                    lambda a: f"N={a['X'].shape[0]}, d=8, PRML kernel, L-BFGS-B from one start")


def _gp_predict_workload():
    theta, noise = [1.0, 2.0, 0.1, 0.1], 0.01

    def setup(quick):
        rng = _rng()
        n, m = (500, 20000) if quick else (2000, 100000)
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
                    lambda a: f"N={a['X'].shape[0]}, d=8, {a['Q'].shape[0]} query points, mean only")
# ---------------------------------------------------------------- kernel approximations
def _rff_workload():
    gamma, d = 1.0 / 16, 16

    def setup(quick):
        n, D = (20000, 500) if quick else (100000, 2000)
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
                    lambda a: f"{a['X'].shape[0]}x{a['X'].shape[1]} -> {a['rff'].n_components}, float64")


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

    def setup(quick):
        rng = _rng()
        n = 4000 if quick else 40000
        X = rng.standard_normal((n, 8))
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        m = 600 if quick else 2000  # kernel ridge: training points
        return {"X": X, "y": y, "Xk": X[:m].copy(), "yk": y[:m].copy(), "Q": X[-1000:].copy()}

    net = Workload("sklearn-overhead/rbfnet-fit", setup, lambda a: a["X"].shape[0], "points/s", [
        Contender("fastrbf.sklearn RBFNetworkRegressor.fit", FASTRBF,
                  lambda a: fsk.RBFNetworkRegressor(32, gamma=gamma, alpha=alpha, max_iter=20, random_state=0, n_jobs=1)
                  .fit(a["X"], a["y"])),
        Contender("fastrbf rbf_network (the call it wraps)", FLOOR,
                  lambda a: rbf_network(a["X"], a["y"], n_centers=32, gamma=gamma, alpha=alpha, max_iter=20, seed=0,
                                      n_threads=1)),
    ], lambda a: f"N={a['X'].shape[0]}, d=8, 32 k-means centres, max_iter 20")
    krr = Workload("sklearn-overhead/krr-fit-predict", setup, lambda a: a["Xk"].shape[0], "points/s", [
        Contender("fastrbf.sklearn KernelRidge fit + predict", FASTRBF,
                  lambda a: fsk.KernelRidge(alpha, gamma=gamma, n_jobs=1).fit(a["Xk"], a["yk"]).predict(a["Q"])),
        Contender("fastrbf kernel_ridge + predict (the calls it wraps)", FLOOR,
                  lambda a: kernel_ridge(a["Xk"], a["yk"], gamma=gamma, alpha=alpha, n_threads=1).predict(a["Q"], n_threads=1)),
    ], lambda a: f"N={a['Xk'].shape[0]}, d=8, gaussian, 1000 predictions")
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

    def setup(quick):
        import logging

        import dask
        import dask.array as da
        from distributed import Client, LocalCluster

        n, nb = (20000, 4) if quick else (1000000, 8)  # full: blocks of 125000 rows (32 MB)
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
        Contender("fastrbf kmeans in memory (floor)", FLOOR, in_memory),
    ]
    return Workload("dask-lloyd", setup, lambda a: iters * a["X"].shape[0] * K, "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{d}, K={K}, {iters} iterations, {a['Xd'].numblocks[0]} blocks",
                    teardown=teardown)


def _krr_large_workload():
    # Nystroem KRR by Falkon's PCG on a smooth function of 3 of 16 standard normal
    # coordinates (sd ~0.8) plus noise (sd 0.5).  alpha = lam n (fastrbf's alpha is
    # unscaled; lam is the ridge of the mean loss), the same lam for the exact KRR of the
    # subsample; lam = 1e-5 was the better of 1e-4 / 1e-5 for both at N = 250000.
    gamma, lam, noise = 1.0 / 32, 1e-5, 0.5

    def f(X):
        return np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2]

    def setup(quick):
        rng = _rng()
        n, m, n_sub = (20000, 500, 2000) if quick else (1_000_000, 2000, 20000)
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
                    accuracy)


def workloads():
    """All workloads, in the order of the report."""
    return [
        _sqdist_workload("sqdist-lowd/float64", 20000, 2000, 16, np.float64, 2500, 2000),
        _sqdist_workload("sqdist-lowd/float32", 20000, 2000, 16, np.float32, 2500, 2000),
        _sqdist_workload("sqdist-highd/float64", 10000, 10000, 256, np.float64, 700, 700),
        _gram_workload(),
        _matvec_workload(),
        _lloyd_workload("lloyd-small/float64", 200000, 16, 64, np.float64, 50000),
        _lloyd_workload("lloyd-small/float32", 200000, 16, 64, np.float32, 50000),
        _lloyd_workload("lloyd-large/float64", 1000000, 32, 256, np.float64, 25000),
        _lloyd_workload("lloyd-large/float32", 1000000, 32, 256, np.float32, 25000),
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


# ---------------------------------------------------------------- running
#: contenders slower than this per call (warm-up) get at most SLOW_REPEATS timed calls
SLOW_CALL_S = 2.0
SLOW_REPEATS = 3
#: untimed warm-up calls go on until this many seconds are spent (at least one call):
#: the first few large allocations of a process, and the first after the host took
#: freed memory back, were measured 5-10x slower than the steady state on this machine
WARMUP_S = 0.5
#: the same for the quick sizes (their buffers are small)
WARMUP_QUICK_S = 0.25


def time_call(fn, data, repeats, budget_s=20.0, warmup_s=WARMUP_S):
    """Median wall time of repeated calls, after untimed warm-up calls.

    Parameters
    ----------
    fn : callable
        ``fn(data)`` runs the contender once; it is first called untimed until
        ``warmup_s`` seconds (default :data:`WARMUP_S`) are spent.  A callable with a true ``self_timed``
        attribute returns its own time in seconds, which is used instead of the wall
        time (per-iteration peers).
    data : dict
        The workload's arrays.
    repeats : int
        Timed calls; at most :data:`SLOW_REPEATS` when the warm-up took longer than
        :data:`SLOW_CALL_S`.
    budget_s : float
        Stop timing once this many seconds of timed calls are spent (at least one
        call is timed).

    Returns
    -------
    float
        Median seconds per call.
    """
    self_timed = getattr(fn, "self_timed", False)
    t_warm = time.perf_counter()
    while True:  # warm-up, right before timing: JIT, first touch of memory
        t0 = time.perf_counter()
        fn(data)
        t1 = time.perf_counter()
        if t1 - t_warm >= warmup_s:
            break
    if t1 - t0 > SLOW_CALL_S:
        repeats = min(repeats, SLOW_REPEATS)
    times = []
    t_start = time.perf_counter()
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        r = fn(data)
        t = time.perf_counter() - t0
        times.append(float(r) if self_timed else t)
        if time.perf_counter() - t_start > budget_s:
            break
    return float(np.median(times))


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


def run(quick=True, repeats=None, only=None, log=None):
    """Run the workloads; return one dict per (workload, contender).

    Parameters
    ----------
    quick : bool
        Small sizes (the README default, under two minutes); False: design.md sizes.
    repeats : int, optional
        Timed calls per contender (default 5 quick, 7 full; fewer for slow ones).
    only : str, optional
        Run only the workloads whose name contains this string.
    log : callable, optional
        Called with a progress line per contender.

    Returns
    -------
    list of dict
        One row per (workload, contender), keys: ``workload``, ``shape`` (a
        description), ``dtype``, ``contender``, ``kind`` (fastrbf, numpy or peer),
        ``median_s``, ``throughput`` (work per second, in ``unit``), ``unit``,
        ``ratio_vs_numpy``, ``ratio_vs_best_peer``, ``ratio_vs_floor`` (the floor's
        median over the row's: 1/1.2 = 0.83 means 1.2x the floor), ``peak_mem_bytes`` (peak traced
        memory), ``threads`` (numba threads), ``blas`` (BLAS library, kernel and
        threads), ``note``.  Skipped contenders have ``median_s=None``.

    Examples
    --------
    >>> rows = run(quick=True, repeats=1, only="sqdist-lowd/float32")
    >>> [r["contender"] for r in rows][:3]
    ['fastrbf', 'fastrbf out=', 'numpy reference']
    >>> all(r["median_s"] > 0 for r in rows)
    True
    """
    import numba

    repeats = repeats or (5 if quick else 7)
    budget = 1.0 if quick else 20.0
    rows = []
    for wl in workloads():
        if only and only not in wl.name:
            continue
        data = wl.setup(quick)
        work = wl.work(data)
        shape = wl.describe(data) if wl.describe else ""
        wl_rows = []
        for c in wl.contenders:
            row = dict(workload=wl.name, shape=shape, dtype=str(data["X"].dtype), contender=c.label,
                       kind=c.kind, unit=wl.unit, threads=numba.get_num_threads(), blas=_threads.blas_info())
            if not quick and not c.full:
                row.update(median_s=None, throughput=None, peak_mem_bytes=None, note="skipped at full size (too slow)")
            else:
                t = time_call(c.fn, data, repeats, budget, WARMUP_QUICK_S if quick else WARMUP_S)
                mem = None if getattr(c.fn, "self_timed", False) else peak_memory(c.fn, data)
                row.update(median_s=t, throughput=work / t if t > 0 else None, peak_mem_bytes=mem, note="")
            if log:
                log(f"  {wl.name:24s} {c.label:32s} {_fmt_s(row['median_s'])}")
            wl_rows.append(row)
        if wl.accuracy is not None:
            acc = wl.accuracy(data)
            if log:
                log(f"  {wl.name:24s} {acc}")
            for r in wl_rows:
                r["shape"] = f"{shape}; {acc}"
        numpy_t = [r["median_s"] for r in wl_rows if r["kind"] == NUMPY and r["median_s"]]
        peer_t = [r["median_s"] for r in wl_rows if r["kind"] == PEER and r["median_s"]]
        floor_t = [r["median_s"] for r in wl_rows if r["kind"] == FLOOR and r["median_s"]]
        for r in wl_rows:
            t = r["median_s"]
            r["ratio_vs_numpy"] = numpy_t[0] / t if (t and numpy_t) else None
            r["ratio_vs_best_peer"] = min(peer_t) / t if (t and peer_t and r["kind"] == FASTRBF) else None
            r["ratio_vs_floor"] = floor_t[0] / t if (t and floor_t and r["kind"] == FASTRBF) else None
        if wl.teardown is not None:  # a dask cluster (left to the interpreter's exit if a contender raised)
            wl.teardown(data)
        rows.extend(wl_rows)
        del data
    return rows


def _fmt_s(t):
    if t is None:
        return "-"
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def _fmt_x(v):
    return "-" if v is None else f"{v:.2f}x"


def _fmt_rate(v):
    if v is None:
        return "-"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:.2f}{suffix}"
    return f"{v:.0f}"


def format_table(rows):
    """Format the rows of :func:`run` as one aligned plain-text (Markdown) table.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run`.

    Returns
    -------
    str
        The table; "peak mem" is the peak traced memory, "-" where not measured.

    Examples
    --------
    >>> row = dict(workload="w", shape="10x2", contender="fastrbf", median_s=0.5, throughput=200.0,
    ...            unit="pairs/s", ratio_vs_numpy=4.0, ratio_vs_best_peer=None, peak_mem_bytes=2**20)
    >>> print(format_table([row]))
    | workload | size | contender | median   | throughput  | vs NumPy | vs best peer | vs floor | peak mem |
    |----------|------|-----------|----------|-------------|----------|--------------|----------|----------|
    | w        | 10x2 | fastrbf   | 500.0 ms | 200 pairs/s | 4.00x    | -            | -        | 1 MiB    |
    """
    head = ["workload", "size", "contender", "median", "throughput", "vs NumPy", "vs best peer", "vs floor", "peak mem"]
    lines = []
    for r in rows:
        mem = "-" if r.get("peak_mem_bytes") is None else f"{r['peak_mem_bytes'] / 2**20:.0f} MiB"
        thr = "-" if r["throughput"] is None else f"{_fmt_rate(r['throughput'])} {r['unit']}"
        time = _fmt_s(r["median_s"]) if r["median_s"] is not None else r.get("note", "-")
        lines.append([r["workload"], r["shape"], r["contender"], time,
                      thr, _fmt_x(r["ratio_vs_numpy"]), _fmt_x(r["ratio_vs_best_peer"]), _fmt_x(r.get("ratio_vs_floor")), mem])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=True)]
    fmt = "| " + " | ".join(f"{{:{w}}}" for w in widths) + " |"
    out = [fmt.format(*head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [fmt.format(*map(str, ln)) for ln in lines]
    return "\n".join(out)
