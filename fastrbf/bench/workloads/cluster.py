"""k-means workloads: one Lloyd iteration (small and large K, float64 and float32)
against the NumPy reference, scikit-learn, scikit-learn-intelex and faiss, and a
20-iteration ``kmeans`` run and a run to convergence (brute force and Hamerly's bounds,
against scikit-learn's Lloyd and Elkan, on the same initial centres), and one Lloyd iteration on a sparse
text-like CSR matrix (against scikit-learn and scikit-learn-intelex; the NumPy
reference would densify it).  The essential cost of an iteration is the GEMM form of the
point-centre distances (2 N K d flops) and one read of the points.

The peers' k-means estimators include their set-up in every fit, so they are timed
per iteration by :class:`PerIteration`, which subtracts a 1-iteration fit from a
longer one."""

import time

import numpy as np

from fastrbf import reference
from fastrbf.cluster._kmeans import kmeans, lloyd_assign, lloyd_update

from ..harness import FASTRBF, NUMPY, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng
from .peers import optional_peer, sklearnex_code_path, sklearnex_lloyd


def workloads() -> list[Workload]:
    """The k-means workloads, in the order of the report."""
    return [
        _lloyd_workload("lloyd-small/float64", (50000, 100000, 200000), 16, 64, np.float64),
        _lloyd_workload("lloyd-small/float32", (50000, 100000, 200000), 16, 64, np.float32),
        _lloyd_workload("lloyd-large/float64", (25000, 160000, 1000000), 32, 256, np.float64),
        _lloyd_workload("lloyd-large/float32", (25000, 160000, 1000000), 32, 256, np.float32),
        _lloyd_sparse_workload(),
        _kmeans_run_workload(),
        _kmeans_converge_workload(),
    ]


def _one_lloyd_iteration(X, C):
    labels, _ = lloyd_assign(X, C)
    return lloyd_update(X, labels, C.shape[0])


def _reference_lloyd_iteration(X, C):
    labels, _ = reference.lloyd_assign(X, C)
    return reference.lloyd_update(X, labels, C.shape[0])


class PerIteration:
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
        rng = seeded_rng()
        X = rng.standard_normal((n, d)).astype(dtype)
        C = X[rng.choice(X.shape[0], K, replace=False)].copy()
        return {"X": X, "C": C}

    cs = [
        Contender("fastrbf kmeans (per iteration)", FASTRBF, PerIteration(_fastrbf_lloyd)),
        Contender("fastrbf lloyd_assign+lloyd_update", FASTRBF, lambda a: _one_lloyd_iteration(a["X"], a["C"])),
        Contender("numpy reference", NUMPY, lambda a: _reference_lloyd_iteration(a["X"], a["C"]), full=sizes[-1] * K <= 10**8),
    ]
    cs.append(optional_peer("scikit-learn (per iteration)", "sklearn.cluster", PerIteration(_sk_lloyd), package="sklearn"))
    cs.append(optional_peer("sklearnex KMeans (per iteration)", "sklearnex", PerIteration(sklearnex_lloyd),
                            package="sklearnex", note=sklearnex_code_path("KMeans.fit")))
    cs.append(optional_peer("faiss float32 (per iteration)", "faiss", PerIteration(_faiss_lloyd), package="faiss"))
    return Workload(name, setup, lambda a: a["X"].shape[0] * a["C"].shape[0], "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{a['X'].shape[1]}, K={a['C'].shape[0]}, {a['X'].dtype}", sizes=sizes,
                    cost=lambda a: lloyd_cost(a["X"], a["C"].shape[0], 1))


def lloyd_cost(X: np.ndarray, K: int, iters: int) -> Cost:
    """``iters`` Lloyd iterations: the distances' GEMM flops and the update's adds, one
    read of the points per iteration, the labels written."""
    n, d = X.shape
    return Cost(flops=iters * (2.0 * n * K * d + n * d), bytes_read=iters * X.nbytes, bytes_written=iters * n * 8.0)


def _lloyd_sparse_workload():
    d, K, density = 1000, 64, 0.01

    def setup(n):
        import scipy.sparse as sp

        rng = seeded_rng()
        X = sp.random(n, d, density=density, format="csr", random_state=rng, dtype=np.float64)
        return {"X": X, "C": X[rng.choice(n, K, replace=False)].toarray()}

    cs = [
        Contender("fastrbf kmeans (per iteration)", FASTRBF, PerIteration(_fastrbf_lloyd)),
        Contender("fastrbf lloyd_assign+lloyd_update", FASTRBF, lambda a: _one_lloyd_iteration(a["X"], a["C"])),
    ]
    cs.append(optional_peer("scikit-learn (per iteration)", "sklearn.cluster", PerIteration(_sk_lloyd), package="sklearn"))
    cs.append(optional_peer("sklearnex KMeans (per iteration)", "sklearnex", PerIteration(sklearnex_lloyd),
                            package="sklearnex", note=sklearnex_code_path("KMeans.fit")))

    def cost(a):
        X = a["X"]
        nbytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
        return Cost(flops=2.0 * X.nnz * K + X.nnz, bytes_read=nbytes, bytes_written=X.shape[0] * 8.0)

    return Workload("lloyd-sparse", setup, lambda a: a["X"].shape[0] * K, "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{d} CSR, density {density}, K={K}, float64", sizes=(10000, 100000),
                    cost=cost)


def _sk_kmeans(a, algorithm):
    import warnings

    from sklearn.cluster import KMeans

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        KMeans(64, init=a["C"], n_init=1, max_iter=20, tol=0, algorithm=algorithm).fit(a["X"])


def _kmeans_run_workload():
    def setup(n):
        rng = seeded_rng()
        X = rng.standard_normal((n, 16))
        return {"X": X, "C": X[rng.choice(X.shape[0], 64, replace=False)].copy()}

    def ours(a, algorithm="auto"):
        return kmeans(a["X"], 64, init=a["C"], max_iter=20, tol=0, algorithm=algorithm)

    cs = [Contender("fastrbf", FASTRBF, ours),
          Contender("fastrbf algorithm='lloyd'", FASTRBF, lambda a: ours(a, "lloyd")),
          Contender("fastrbf algorithm='bounded' (Hamerly)", FASTRBF, lambda a: ours(a, "bounded"))]
    cs.append(optional_peer("scikit-learn", "sklearn.cluster", lambda a: _sk_lloyd(a, 20), package="sklearn"))
    cs.append(optional_peer("scikit-learn algorithm='elkan'", "sklearn.cluster",
                            lambda a: _sk_kmeans(a, "elkan"), package="sklearn"))
    return Workload("kmeans-20-iterations", setup, lambda a: 20 * a["X"].shape[0] * 64, "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x16, K=64, same init, 20 iterations", sizes=(50000, 100000, 200000),
                    cost=lambda a: lloyd_cost(a["X"], 64, 20))


def _kmeans_converge_workload():
    """``kmeans`` to convergence (``tol=0``: until no label changes) from the same initial
    centres as scikit-learn: both run the same iterations (the count is in the row's
    description), so the ratio is that of whole fits, the bounds' savings in the late
    iterations included.  Normal data: clusters that are not separated, where the
    bounds settle the fewest rows."""
    K, d = 64, 16

    def setup(n):
        rng = seeded_rng()
        X = rng.standard_normal((n, d))
        C = X[rng.choice(n, K, replace=False)].copy()
        it = kmeans(X, K, init=C, max_iter=MAX_ITER, tol=0).n_iter
        return {"X": X, "C": C, "iters": it}

    def ours(a, algorithm="auto"):
        return kmeans(a["X"], K, init=a["C"], max_iter=MAX_ITER, tol=0, algorithm=algorithm)

    def sk(a, algorithm):
        import warnings

        from sklearn.cluster import KMeans

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            KMeans(K, init=a["C"], n_init=1, max_iter=MAX_ITER, tol=0, algorithm=algorithm).fit(a["X"])

    cs = [Contender("fastrbf", FASTRBF, ours),
          Contender("fastrbf algorithm='lloyd'", FASTRBF, lambda a: ours(a, "lloyd")),
          Contender("fastrbf algorithm='bounded' (Hamerly)", FASTRBF, lambda a: ours(a, "bounded"))]
    cs.append(optional_peer("scikit-learn", "sklearn.cluster", lambda a: sk(a, "lloyd"), package="sklearn"))
    cs.append(optional_peer("scikit-learn algorithm='elkan'", "sklearn.cluster", lambda a: sk(a, "elkan"), package="sklearn"))
    return Workload("kmeans-converge", setup, lambda a: a["iters"] * a["X"].shape[0] * K, "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{d}, K={K}, same init, to convergence: {a['iters']} iterations",
                    sizes=(20000, 50000, 100000), cost=lambda a: lloyd_cost(a["X"], K, a["iters"]))


#: the iteration cap of the run to convergence (normal data of these sizes converge in
#: a few hundred)
MAX_ITER = 3000
